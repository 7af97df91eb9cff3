//! `Model::run_piece`, the stepping the FMU runtime relies on: a run cut into pieces
//! follows the uncut run, and a time event that falls exactly on a piece's end is handled
//! there (the piece's last row is the value right after it), not lost.

use drivelink_core::{RunStatus, Settings};

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

fn piece(s: &Settings, a: f64, b: f64) -> Settings {
    let mut p = s.clone();
    p.start_time = a;
    p.stop_time = b;
    p.output_interval = None;
    p.output_points = None;
    p
}

#[test]
fn time_event_at_a_piece_end_is_handled_there() {
    let d = drivelink_netlist::load_str(NET, "step_torque", std::path::Path::new(".")).unwrap();
    let mut m = drivelink_core::compile(&d, &drivelink_blocks::registry()).unwrap();
    let s = m.settings().clone();
    let h = 0.25;
    for k in 0..8 {
        let (a, b) = (k as f64 * h, (k + 1) as f64 * h);
        let r = m.run_piece(&piece(&s, a, b), k > 0);
        assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
        assert_eq!(r.time.last().copied(), Some(b));
        let last = |n: &str| r.last(n).unwrap();
        // Torque 4 N*m on 2 kg*m^2 from t = 1 s: a = 2 rad/s^2, w = 2 (t - 1).
        let (y, acc, w) = if b < 1.0 {
            (0.0, 0.0, 0.0)
        } else {
            (4.0, 2.0, 2.0 * (b - 1.0))
        };
        assert_eq!(last("step.y"), y, "step.y at {b}");
        assert!(
            (last("J.a") - acc).abs() < 1e-12,
            "J.a at {b}: {}",
            last("J.a")
        );
        assert!(
            (last("J.w") - w).abs() < 1e-12,
            "J.w at {b}: {}",
            last("J.w")
        );
    }
}
