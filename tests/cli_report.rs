//! The block diagram (geometry read back from the SVG), `drivelink diagram`, report.html
//! from `drivelink run`, and `drivelink plot --xlim/--ylim`.

use std::path::{Path, PathBuf};
use std::process::Command;

use drivelink_core::Diagram;
use drivelink_netlist as netlist;
use drivelink_report::diagram::{render, DiagramOptions, Drawing, Links, PortTable};

mod common;
use common::temp_dir;

fn drivelink() -> Command {
    Command::new(env!("CARGO_BIN_EXE_drivelink"))
}

fn netlist_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("models/netlists")
        .join(name)
}

/// An attribute value of an SVG element's text.
fn attr(el: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = el.find(&key)? + key.len();
    let end = start + el[start..].find('"')?;
    Some(el[start..end].to_string())
}

/// Every `<rect class="block" ...>` as (name, x, y, w, h).
fn block_boxes(svg: &str) -> Vec<(String, f64, f64, f64, f64)> {
    svg.split("<rect")
        .skip(1)
        .map(|r| &r[..r.find('>').unwrap()])
        .filter(|r| r.contains("class=\"block\""))
        .map(|r| {
            let num = |k: &str| attr(r, k).unwrap().parse::<f64>().unwrap();
            (
                attr(r, "data-block").unwrap(),
                num("x"),
                num("y"),
                num("width"),
                num("height"),
            )
        })
        .collect()
}

/// The diagram of `d` with the library's ports.
fn draw(d: &Diagram, expand: bool, links: Links) -> Drawing {
    let ports = PortTable::from_registry(d, &drivelink_blocks::registry());
    render(d, &ports, &DiagramOptions { expand, links }).unwrap()
}

fn assert_no_overlap(level: &str, boxes: &[(String, f64, f64, f64, f64)]) {
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            let apart =
                a.1 + a.3 <= b.1 || b.1 + b.3 <= a.1 || a.2 + a.4 <= b.2 || b.2 + b.4 <= a.2;
            assert!(
                apart,
                "{level}: boxes {} and {} overlap: {a:?} {b:?}",
                a.0, b.0
            );
        }
    }
}

#[test]
fn full_car_diagram_shows_every_block_without_overlapping_boxes() {
    let d = netlist::load_file(&netlist_path("full_car.json")).unwrap();
    let drawing = draw(&d, true, Links::Anchors);
    assert_eq!(drawing.warnings, Vec::<String>::new());
    let top = &drawing.levels[0];
    let boxes = block_boxes(&top.svg);
    let mut drawn: Vec<&str> = boxes.iter().map(|b| b.0.as_str()).collect();
    let mut names: Vec<&str> = d.blocks.iter().map(|b| b.name.as_str()).collect();
    drawn.sort_unstable();
    names.sort_unstable();
    assert_eq!(drawn, names, "every block once");
    for level in &drawing.levels {
        assert_no_overlap(&level.title, &block_boxes(&level.svg));
    }
    // One line per connection end beyond the first: every connection is drawn.
    let wires: usize = d.connections.iter().map(|c| c.len() - 1).sum();
    assert_eq!(top.svg.matches("<path class=\"line ").count(), wires);
    // Mechanical lines by kind: the wheel body, vehicle and road share one translational
    // line (2 wires); every other mechanical line is rotational.
    assert_eq!(top.svg.matches("class=\"line translational\"").count(), 2);
    assert!(top.svg.matches("class=\"line rotational\"").count() >= 10);
    // The gearbox (a composite block) opens into its inner diagram.
    assert!(top.svg.contains("href=\"#diagram-gearbox\""));
    let gearbox = drawing.levels.iter().find(|l| l.path == "gearbox").unwrap();
    assert!(
        block_boxes(&gearbox.svg).len() >= 5,
        "clutches, brakes and gearsets inside"
    );
    assert!(
        gearbox.svg.contains("class=\"terminal\""),
        "exported ports as terminals"
    );
}

/// Regression: the layout library's cycle test visited every path leaving each line's
/// head, so forks in series listed downstream first made the diagram (and report.html)
/// exponential: this test took 48 s with that test unbounded, 0.13 s now. Thirty forks
/// and a feedback line through all of them are drawn, every block once, none overlapping.
#[test]
fn diagram_of_thirty_forks_in_series_listed_backwards_is_drawn() {
    let k = 30;
    let mut blocks =
        vec![serde_json::json!({"name": "u", "type": "Constant", "params": {"value": 1}})];
    let mut lines = Vec::new();
    let mut prev = "u.y".to_string();
    for i in 0..k {
        for g in ["a", "b"] {
            blocks.push(serde_json::json!({"name": format!("{g}{i}"), "type": "Gain", "params": {"k": 0.5}}));
            lines.push(serde_json::json!([prev.clone(), format!("{g}{i}.u")]));
        }
        blocks.push(
            serde_json::json!({"name": format!("s{i}"), "type": "Sum", "params": {"signs": "+++"}}),
        );
        lines.push(serde_json::json!([format!("a{i}.y"), format!("s{i}.u1")]));
        lines.push(serde_json::json!([format!("b{i}.y"), format!("s{i}.u2")]));
        prev = format!("s{i}.y");
    }
    blocks.push(
        serde_json::json!({"name": "fb", "type": "UnitDelay", "params": {"sample_time": 0.1}}),
    );
    lines.push(serde_json::json!([prev, "fb.u"]));
    lines.push(serde_json::json!(["fb.y", "s0.u3"]));
    for i in 1..k {
        blocks.push(serde_json::json!({"name": format!("z{i}"), "type": "Constant", "params": {"value": 0}}));
        lines.push(serde_json::json!([format!("z{i}.y"), format!("s{i}.u3")]));
    }
    lines.reverse();
    blocks.reverse();
    let text = serde_json::json!({
        "drivelink": 1, "name": "fork_ladder",
        "solver": {"stop_time": 1},
        "blocks": blocks, "connections": lines
    })
    .to_string();
    let d = netlist::load_str(&text, "fork_ladder.json", Path::new(".")).unwrap();
    let drawing = draw(&d, false, Links::None);
    assert_eq!(drawing.warnings, Vec::<String>::new());
    let boxes = block_boxes(&drawing.levels[0].svg);
    assert_eq!(boxes.len(), d.blocks.len(), "every block once");
    assert_no_overlap("fork_ladder", &boxes);
    let wires: usize = d.connections.iter().map(|c| c.len() - 1).sum();
    assert_eq!(
        drawing.levels[0].svg.matches("<path class=\"line ").count(),
        wires
    );
}

#[test]
fn subsystems_are_boxes_with_their_inner_diagrams_and_terminals() {
    let d = netlist::load_file(&netlist_path("signal_subsystem.json")).unwrap();
    let drawing = draw(&d, true, Links::Files("m".into()));
    let paths: Vec<&str> = drawing.levels.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(paths, ["", "fast", "slow"]);
    assert!(drawing.levels[0].svg.contains("href=\"m.fast.svg\""));
    for inner in &drawing.levels[1..] {
        let names: Vec<String> = block_boxes(&inner.svg).into_iter().map(|b| b.0).collect();
        assert_eq!(names, ["gain", "lag"]);
        assert_eq!(
            inner.svg.matches("class=\"terminal\"").count(),
            2,
            "u and y"
        );
        // gain -> lag, u -> gain, lag -> y
        assert_eq!(inner.svg.matches("class=\"line signal\"").count(), 3);
    }
}

#[test]
fn diagram_command_writes_the_svg_and_each_inner_level() {
    let dir = temp_dir("diagram");
    let out = dir.join("car.svg");
    let o = drivelink()
        .args([
            "diagram",
            netlist_path("full_car.json").to_str().unwrap(),
            "--expand",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.contains("href=\"car.gearbox.svg\""));
    assert!(dir.join("car.gearbox.svg").exists());
    // A model that does not load: exit 2, the file named.
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{ not json").unwrap();
    let o = drivelink().args(["diagram"]).arg(&bad).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.json"));
}

fn run(model: &str, dir: &Path, extra: &[&str]) {
    let o = drivelink()
        .args([
            "run",
            netlist_path(model).to_str().unwrap(),
            "--no-plots",
            "--out",
        ])
        .arg(dir)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn run_writes_report_html_unless_no_report() {
    let dir = temp_dir("run");
    run("signal_pid.json", &dir, &[]);
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let own = html.replace(drivelink_report::embedded_plotly_js().unwrap(), "");
    assert!(!own.contains("http://") && !own.contains("https://"));
    assert!(own.contains("id=\"diagram-top\""));
    assert!(own.contains("<section id=\"events\">"));
    let none = temp_dir("run_none");
    run("signal_pid.json", &none, &["--no-report"]);
    assert!(!none.join("report.html").exists());
    assert!(none.join("results.csv").exists());
}

#[test]
fn plot_takes_xlim_and_ylim_and_rejects_reversed_ranges() {
    let dir = temp_dir("plot");
    run("signal_first_order.json", &dir, &["--no-report"]);
    let csv = dir.join("results.csv");
    let header = std::fs::read_to_string(&csv).unwrap();
    let signal = header
        .lines()
        .next()
        .unwrap()
        .split(',')
        .nth(1)
        .unwrap()
        .to_string();
    let png = dir.join("zoom.png");
    let o = drivelink()
        .arg("plot")
        .arg(&csv)
        .args([
            "--signals",
            &signal,
            "--xlim",
            "0.1,0.5",
            "--ylim",
            "-0.5,1.5",
            "--out",
        ])
        .arg(&png)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    let o = drivelink()
        .arg("plot")
        .arg(&csv)
        .args(["--signals", &signal, "--xlim", "2,1", "--out"])
        .arg(&png)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--xlim 2,1: expected two numbers low,high")
    );
}
