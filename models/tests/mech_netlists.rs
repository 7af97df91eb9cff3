//! Mechanical analytic cases through netlists (the same cases run through the Rust API in
//! drivelink-blocks' tests).

use drivelink_core::{compile, netlist, EventTag, RunStatus, SimResult};
use drivelink_models::netlist_dir;

fn run(name: &str) -> SimResult {
    let d = netlist::load_file(&netlist_dir().join(name)).unwrap_or_else(|e| panic!("{e}"));
    let mut m = compile(&d, &drivelink_blocks::registry()).unwrap_or_else(|e| panic!("{e}"));
    let r = m.run();
    assert_ne!(r.status, RunStatus::Failed, "{}", r.message);
    let a = m.energy_audit();
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
    r
}

#[test]
fn clutch_lock_netlist_locks_at_the_analytic_time() {
    let r = run("mech_clutch_lock.json");
    let lock: Vec<f64> = r
        .events_of("clutch", EventTag::Lock)
        .map(|e| e.time)
        .collect();
    assert_eq!(lock.len(), 1);
    let (j1, j2, t, dw) = (1.0, 2.0, 5.0, 10.0);
    assert!((lock[0] - dw * j1 * j2 / ((j1 + j2) * t)).abs() < 1e-7);
    assert!((r.last("J2.w").unwrap() - dw * j1 / (j1 + j2)).abs() < 1e-7);
}

#[test]
fn brake_netlist_stops_the_flywheel_at_j_w0_over_t() {
    let r = run("mech_brake_stop.json");
    let lock: Vec<f64> = r
        .events_of("brake", EventTag::Lock)
        .map(|e| e.time)
        .collect();
    assert_eq!(lock.len(), 1);
    assert!((lock[0] - 2.0 * 30.0 / 12.0).abs() < 1e-7);
    assert_eq!(r.last("flywheel.w"), Some(0.0));
}
