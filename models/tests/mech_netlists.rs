//! Mechanical analytic cases through netlists (the same cases run through the Rust API in
//! drivelink-blocks' tests).

use drivelink_core::{compile, EventTag, RunStatus, SimResult};
use drivelink_models::netlist_dir;
use drivelink_netlist as netlist;

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

#[test]
fn coast_down_netlist_matches_the_closed_form() {
    let r = run("mech_coast_down.json");
    let (m, a, c, v0): (f64, f64, f64, f64) = (1500.0, 150.0, 0.4, 30.0);
    let exact =
        |t: f64| (a / c).sqrt() * ((v0 * (c / a).sqrt()).atan() - (a * c).sqrt() * t / m).tan();
    let v = r.get("car.v").unwrap();
    for (k, &t) in r.time.iter().enumerate() {
        assert!(
            (v[k] - exact(t)).abs() < 1e-6,
            "t = {t}: {} vs {}",
            v[k],
            exact(t)
        );
    }
}

#[test]
fn breakaway_netlist_breaks_away_at_the_static_capacity() {
    let r = run("mech_breakaway.json");
    let unlock: Vec<f64> = r
        .events_of("clutch", EventTag::Unlock)
        .map(|e| e.time)
        .collect();
    assert_eq!(unlock.len(), 1, "{:?}", r.events);
    let cap = 1.25 * 0.4 * 10.0;
    assert!(
        (unlock[0] - cap * 3.0 / (3.0 * 2.0)).abs() < 1e-7,
        "at {}",
        unlock[0]
    );
    assert_eq!(r.last("clutch.mode"), Some(-1.0));
}
