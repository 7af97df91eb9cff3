//! A run ended from outside (Ctrl-C in Python): `Model::set_cancel`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use drivelink_core::model::INTERRUPTED;
use drivelink_core::RunStatus;
use drivelink_models::netlist_dir;

fn full_car() -> drivelink_core::Model {
    let reg = drivelink_blocks::registry();
    drivelink_netlist::compile_file(&netlist_dir().join("full_car.json"), &reg).expect("compiles")
}

/// A flag set before the run ends it at its first check: failed, with the message and the
/// initial row kept.
#[test]
fn a_run_cancelled_before_it_starts_fails_at_once_and_keeps_its_first_row() {
    let mut m = full_car();
    let flag = Arc::new(AtomicBool::new(true));
    m.set_cancel(flag);
    let r = m.run();
    assert_eq!(r.status, RunStatus::Failed);
    assert!(r.message.contains(INTERRUPTED), "{}", r.message);
    assert!(r.end_time < 1.0, "ended at {}", r.end_time);
    assert!(!r.time.is_empty() && r.time[0] == 0.0, "{:?}", r.time);
    let v = r.get("vehicle.v").expect("logged");
    assert!(v.iter().all(|v| v.is_finite()));
}

/// A flag set by another thread while a long run goes on ends it within a step.
#[test]
fn a_flag_set_by_another_thread_ends_a_long_run() {
    // A sine through a lag, 1,000,000 s at rtol 1e-8: minutes of wall time uncancelled.
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/long_run.json");
    let reg = drivelink_blocks::registry();
    let mut m = drivelink_netlist::compile_file(&path, &reg).expect("compiles");
    let flag = Arc::new(AtomicBool::new(false));
    m.set_cancel(flag.clone());
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        flag.store(true, Ordering::Relaxed);
        Instant::now()
    });
    let r = m.run();
    let done = Instant::now();
    let set_at = setter.join().expect("setter");
    assert_eq!(r.status, RunStatus::Failed);
    assert!(r.message.contains(INTERRUPTED), "{}", r.message);
    assert!(
        r.end_time > 0.0 && r.end_time < 1e6,
        "ended at {}",
        r.end_time
    );
    assert!(
        done.duration_since(set_at) < Duration::from_secs(2),
        "the run went on for {:?} after the flag",
        done.duration_since(set_at)
    );
}
