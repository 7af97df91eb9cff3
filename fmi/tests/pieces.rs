//! `Model::step_to`, the stepping the FMU runtime relies on: a run stepped to
//! communication points follows the native run, and a time event that falls exactly on a
//! point is handled there (the outputs at the point are the values right after it), not
//! lost.

use drivelink_core::RunStatus;

const NET: &str = r#"{
  "drivelink": 1, "name": "step_torque",
  "solver": { "stop_time": 2 },
  "blocks": [
    { "name": "J", "type": "Inertia", "params": { "J": 2 } },
    { "name": "src", "type": "TorqueSource" },
    { "name": "step", "type": "Step", "params": { "time": 1, "after": 4 } }
  ],
  "connections": [["step.y", "src.tau"], ["src.flange", "J.flange"]],
  "log": ["J.w", "J.a", "step.y"]
}"#;

#[test]
fn time_event_at_a_communication_point_is_handled_there() {
    let d = drivelink_netlist::load_str(NET, "step_torque", std::path::Path::new(".")).unwrap();
    let mut m = drivelink_core::compile(&d, &drivelink_blocks::registry()).unwrap();
    let s = m.settings().clone();
    let names = m.run_with(&s).names;
    m.start_stepping(&s).unwrap();
    let col = |n: &str| names.iter().position(|v| v == n).unwrap();
    let mut out = vec![0.0; names.len()];
    let h = 0.25;
    for k in 0..8 {
        let b = (k + 1) as f64 * h;
        let (status, t) = m.step_to(b).unwrap();
        assert_eq!((status, t), (RunStatus::Completed, b));
        m.stepped_outputs(&mut out).unwrap();
        // Torque 4 N*m on 2 kg*m^2 from t = 1 s: a = 2 rad/s^2, w = 2 (t - 1).
        let (y, acc, w) = if b < 1.0 {
            (0.0, 0.0, 0.0)
        } else {
            (4.0, 2.0, 2.0 * (b - 1.0))
        };
        assert_eq!(out[col("step.y")], y, "step.y at {b}");
        let a = out[col("J.a")];
        assert!((a - acc).abs() < 1e-12, "J.a at {b}: {a}");
        let wb = out[col("J.w")];
        assert!((wb - w).abs() < 1e-12, "J.w at {b}: {wb}");
    }
}

/// `models/netlists/mech_clutch_lock.json`, compiled.
fn clutch_lock() -> drivelink_core::Model {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../models/netlists/mech_clutch_lock.json");
    let d = drivelink_netlist::load_file(&path).unwrap();
    drivelink_core::compile(&d, &drivelink_blocks::registry()).unwrap()
}

#[test]
fn clutch_lock_inside_a_communication_step_is_the_native_runs() {
    let mut m = clutch_lock();
    let mut s = m.settings().clone();
    s.output_interval = None;
    s.output_points = None;
    let native = m.run_with(&s);
    assert_eq!(native.status, RunStatus::Completed, "{}", native.message);
    let lock: Vec<f64> = native.events.iter().map(|e| e.time).collect();
    // The lock at dw·J1·J2/((J1+J2)·T) = 10·2/(3·5) s, inside a 1 ms step.
    assert!(
        lock.iter().any(|&t| (t - 4.0 / 3.0).abs() < 1e-9),
        "{lock:?}"
    );

    m.start_stepping(&s).unwrap();
    let mut events = m.take_events();
    let h = 1e-3;
    let n = (s.stop_time / h).round() as usize;
    for k in 1..=n {
        let t = if k == n { s.stop_time } else { k as f64 * h };
        assert_eq!(m.step_to(t).unwrap(), (RunStatus::Completed, t));
        events.extend(m.take_events());
    }
    // The same events at the same instants, bit for bit, and the same solver steps: the
    // communication points neither cut the steps nor move the lock.
    assert_eq!(events, native.events);
    let stats = m.stepped_stats().unwrap();
    assert_eq!(stats.steps, native.stats.steps);
    assert_eq!(stats.events, native.stats.events);
}
