//! A chain of four inertias joined by three clutches engaged at different times under a
//! sinusoidal torque (after Modelica's CoupledClutches): lock, break-away, relock and
//! release sequences without chattering, each event checked against the friction law.

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, EventTag, RunStatus};
use serde_json::json;

fn coupled_clutches() -> Diagram {
    let mut d = Diagram::new("coupled_clutches");
    d.add("J1", "Inertia", json!({"J": 1.0, "w0": 10.0}));
    for j in ["J2", "J3", "J4"] {
        d.add(j, "Inertia", json!({"J": 1.0}));
    }
    d.add("sine", "Sine", json!({"amplitude": 20.0, "frequency": 5.0}));
    d.add("src", "TorqueSource", json!({}));
    // Static capacity = peak·mu·fn_max = 1.1·0.5·20 = 11 N·m at f = 1.
    for c in ["c1", "c2", "c3"] {
        d.add(c, "Clutch", json!({"mu": 0.5, "peak": 1.1, "fn_max": 20.0}));
    }
    d.add("f1", "Step", json!({"time": 0.1}));
    d.add("f2", "Step", json!({"time": 0.2}));
    // c3 engages at 0.3 s and is released at 0.8 s.
    d.add("f3_on", "Step", json!({"time": 0.3}));
    d.add("f3_off", "Step", json!({"time": 0.8}));
    d.add("f3", "Sum", json!({"signs": "+-"}));
    d.connect(&["sine.y", "src.tau"]);
    d.connect(&["src.flange", "J1.flange", "c1.flange_a"]);
    d.connect(&["c1.flange_b", "J2.flange", "c2.flange_a"]);
    d.connect(&["c2.flange_b", "J3.flange", "c3.flange_a"]);
    d.connect(&["c3.flange_b", "J4.flange"]);
    d.connect(&["f1.y", "c1.f"]);
    d.connect(&["f2.y", "c2.f"]);
    d.connect(&["f3_on.y", "f3.u1"]);
    d.connect(&["f3_off.y", "f3.u2"]);
    d.connect(&["f3.y", "c3.f"]);
    d.log(&[
        "J1.w", "J2.w", "J3.w", "J4.w", "c1.mode", "c2.mode", "c3.mode", "c1.tau", "c2.tau",
        "c3.tau", "c1.w_rel", "c2.w_rel", "c3.w_rel",
    ]);
    d.settings.stop_time = 2.0;
    d
}

#[test]
fn coupled_clutches_lock_break_away_relock_and_release_consistently() {
    let d = coupled_clutches();
    let mut m = compile(&d, &registry()).expect("compiles");
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    let friction_events: Vec<_> = r
        .events
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventTag::Lock | EventTag::Unlock | EventTag::Engage | EventTag::Free
            )
        })
        .collect();
    // Bounded: no chattering.
    assert!(
        friction_events.len() < 60,
        "{} friction events",
        friction_events.len()
    );
    let cap = 1.1 * 0.5 * 20.0;
    let mut kinds = std::collections::BTreeSet::new();
    for e in &friction_events {
        kinds.insert((e.block.clone(), e.kind.as_str()));
        let k = r
            .time
            .iter()
            .rposition(|&t| t == e.time)
            .expect("event instant in the results");
        let w_rel = r.get(&format!("{}.w_rel", e.block)).unwrap()[k];
        let tau = r.get(&format!("{}.tau", e.block)).unwrap()[k];
        match e.kind {
            // Hand check 1: a joint locks only at zero slip, holding a torque it can carry.
            EventTag::Lock => {
                assert!(
                    w_rel.abs() < 1e-9,
                    "{} locked at t = {} with slip {w_rel}",
                    e.block,
                    e.time
                );
                assert!(
                    tau.abs() <= cap * (1.0 + 1e-9),
                    "{} holds {tau} > {cap}",
                    e.block
                );
            }
            // Hand check 2: a joint breaks away when the torque it must carry reaches the
            // static capacity (the left value at the instant is at the limit).
            EventTag::Unlock => {
                let tau_left = r.get(&format!("{}.tau", e.block)).unwrap()[k - 1];
                assert!(
                    (tau_left.abs() - cap).abs() < 1e-6 * cap,
                    "{} broke away at |tau| = {tau_left}",
                    e.block
                );
                assert!(w_rel.abs() < 1e-9);
            }
            _ => {}
        }
    }
    // The sequence includes engagement, locking, break-away and relocking of c1, and the
    // release (free) of c3 at 0.8 s.
    assert!(kinds.contains(&("c1".to_string(), "engage")));
    assert!(kinds.contains(&("c1".to_string(), "lock")));
    assert!(kinds.contains(&("c1".to_string(), "unlock")));
    let c1_locks: Vec<f64> = r.events_of("c1", EventTag::Lock).map(|e| e.time).collect();
    assert!(
        c1_locks.len() >= 5,
        "c1 relocks after breaking away ({} locks)",
        c1_locks.len()
    );
    // Hand check 3: once c3 is released, the symmetric sinusoidal forcing drives a stick-slip
    // limit cycle: c1 relocks every half period of the 5 Hz torque (0.1 s).
    let late: Vec<f64> = c1_locks.iter().copied().filter(|&t| t > 1.0).collect();
    for w in late.windows(2) {
        assert!(
            (w[1] - w[0] - 0.1).abs() < 1e-6,
            "lock spacing {}",
            w[1] - w[0]
        );
    }
    let free3: Vec<f64> = r.events_of("c3", EventTag::Free).map(|e| e.time).collect();
    assert_eq!(free3.len(), 1);
    assert!((free3[0] - 0.8).abs() < 1e-12);
    // Energy audit closes to solver tolerance: the residual shrinks with the tolerance.
    let a = m.energy_audit();
    assert!(a.relative_residual.abs() < 1e-5, "{a:#?}");
    let mut tight = d.settings.clone();
    tight.rtol = 1e-10;
    tight.atol = 1e-10;
    let r2 = m.run_with(&tight);
    assert_eq!(r2.status, RunStatus::Completed);
    let a2 = m.energy_audit();
    eprintln!(
        "residual rtol 1e-6: {:e}, rtol 1e-10: {:e}",
        a.relative_residual, a2.relative_residual
    );
    assert!(a2.relative_residual.abs() < 1e-8, "{a2:#?}");
}
