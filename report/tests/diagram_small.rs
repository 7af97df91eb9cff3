//! Diagrams with no block or a single block lay out without the layout library: no panic
//! (not even a caught one), a drawing with the title and the box.

use drivelink_core::diagram::{BlockSpec, Diagram};
use drivelink_report::diagram::{self, BlockInfo};
use drivelink_report::{DiagramOptions, Links, PortTable};

fn opts() -> DiagramOptions {
    DiagramOptions {
        expand: true,
        links: Links::Anchors,
    }
}

/// Runs `f` with a panic hook that counts panics (caught or not); one test at a time.
fn panics_during(f: impl FnOnce()) -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    static PANICS: AtomicUsize = AtomicUsize::new(0);
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let before = PANICS.load(Ordering::SeqCst);
    let old = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {
        PANICS.fetch_add(1, Ordering::SeqCst);
    }));
    f();
    std::panic::set_hook(old);
    PANICS.load(Ordering::SeqCst) - before
}

fn block(name: &str) -> BlockSpec {
    BlockSpec {
        name: name.into(),
        type_name: "Inertia".into(),
        params: Default::default(),
        inner: None,
        file: None,
    }
}

#[test]
fn empty_diagram_lays_out_without_any_panic() {
    let d = Diagram::new("empty");
    let mut drawing = None;
    let n = panics_during(|| {
        drawing = Some(diagram::render(&d, &PortTable::new(), &opts()));
    });
    assert_eq!(n, 0, "the layout panicked");
    let drawing = drawing.unwrap().expect("an empty diagram draws");
    assert_eq!(drawing.levels.len(), 1);
    let svg = &drawing.levels[0].svg;
    assert!(svg.starts_with("<svg") && svg.contains(">empty</text>"));
    assert!(!svg.contains("class=\"block\""));
}

#[test]
fn one_block_diagram_lays_out_without_any_panic() {
    let mut d = Diagram::new("one");
    d.blocks.push(block("J"));
    let mut ports = PortTable::new();
    ports.insert(
        "J",
        BlockInfo {
            ports: Vec::new(),
            category: "mechanical".into(),
            inner: None,
        },
    );
    let mut drawing = None;
    let n = panics_during(|| {
        drawing = Some(diagram::render(&d, &ports, &opts()));
    });
    assert_eq!(n, 0, "the layout panicked");
    let svg = &drawing.unwrap().expect("one block draws").levels[0].svg;
    assert_eq!(svg.matches("class=\"block\" data-block=\"J\"").count(), 1);
}
