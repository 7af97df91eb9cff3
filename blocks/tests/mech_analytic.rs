//! Analytic references for the mechanical network: clutch lock time, brake stop time,
//! break-away under a ramped torque, one-way clutch, gear and planetary kinematics, and a
//! coast-down against road load. Every model also checks its energy audit.

use drivelink_core::{Diagram, EventTag, SimResult};
use serde_json::json;

mod common;
use common::{assert_energy_closes, run_ok as run};

fn event_times(r: &SimResult, block: &str, kind: EventTag) -> Vec<f64> {
    r.events_of(block, kind).map(|e| e.time).collect()
}

fn two_inertias(w1: f64, w2: f64, torque: f64) -> Diagram {
    let mut d = Diagram::new("two_inertias");
    d.add("J1", "Inertia", json!({"J": 1.0, "w0": w1}));
    d.add("J2", "Inertia", json!({"J": 2.0, "w0": w2}));
    d.add(
        "c",
        "Clutch",
        json!({"mu": 0.5, "peak": 1.1, "cgeo": 1.0, "fn_max": torque / 0.5}),
    );
    d.add("one", "Constant", json!({"value": 1.0}));
    d.connect(&["J1.flange", "c.flange_a"]);
    d.connect(&["J2.flange", "c.flange_b"]);
    d.connect(&["one.y", "c.f"]);
    d.log(&["J1.w", "J2.w", "c.mode", "c.tau", "c.w_rel"]);
    d.settings.stop_time = 3.0;
    d
}

#[test]
fn engaging_clutch_locks_at_analytic_time_and_shares_momentum() {
    let (j1, j2, t, dw) = (1.0, 2.0, 5.0, 10.0);
    let d = two_inertias(dw, 0.0, t);
    let (mut m, r) = run(&d);
    let locks = event_times(&r, "c", EventTag::Lock);
    assert_eq!(locks.len(), 1, "events: {:?}", r.events);
    let expected = dw * j1 * j2 / ((j1 + j2) * t);
    assert!(
        (locks[0] - expected).abs() < 1e-7,
        "lock at {} expected {expected}",
        locks[0]
    );
    let wf = j1 * dw / (j1 + j2);
    assert!((r.last("J1.w").unwrap() - wf).abs() < 1e-7);
    assert!((r.last("J2.w").unwrap() - wf).abs() < 1e-7);
    assert_eq!(r.last("c.mode"), Some(0.0));
    // No unlock afterwards: a locked clutch with no load stays locked.
    assert!(event_times(&r, "c", EventTag::Unlock).is_empty());
    // Dissipated energy = ΔKE.
    let a = m.energy_audit();
    let loss: f64 = a.losses.iter().map(|l| l.1).sum();
    let expected_loss = 0.5 * j1 * dw * dw - 0.5 * (j1 + j2) * wf * wf;
    assert!(
        (loss - expected_loss).abs() < 1e-6 * expected_loss,
        "{a:#?}"
    );
    assert_energy_closes(&mut m, 1e-6);
}

#[test]
fn brake_stops_flywheel_at_j_w0_over_t_and_holds() {
    let (j, w0, t) = (2.0, 30.0, 12.0);
    let mut d = Diagram::new("brake");
    d.add("J", "Inertia", json!({"J": j, "w0": w0}));
    d.add("b", "Brake", json!({"max_torque": t}));
    d.add("one", "Constant", json!({"value": 1.0}));
    d.connect(&["J.flange", "b.flange"]);
    d.connect(&["one.y", "b.f"]);
    d.log(&["J.w", "b.mode", "b.tau"]);
    d.settings.stop_time = 8.0;
    let (mut m, r) = run(&d);
    let locks = event_times(&r, "b", EventTag::Lock);
    assert_eq!(locks.len(), 1);
    assert!(
        (locks[0] - j * w0 / t).abs() < 1e-7,
        "stopped at {}",
        locks[0]
    );
    assert_eq!(r.last("J.w"), Some(0.0));
    assert!(r.events_of("b", EventTag::Unlock).next().is_none());
    assert_energy_closes(&mut m, 1e-6);
}

#[test]
fn locked_clutch_breaks_away_when_ramped_torque_reaches_static_capacity() {
    // Both start at 5 rad/s: the clutch locks at t = 0. Torque k·t on J1; J2 is driven
    // through the clutch with tau = k·t·J2/(J1+J2), which reaches the static capacity
    // peak·mu·fn at t* = cap·(J1+J2)/(k·J2).
    let (j1, j2, k) = (1.0, 2.0, 3.0);
    let mut d = Diagram::new("breakaway");
    d.add("J1", "Inertia", json!({"J": j1, "w0": 5.0}));
    d.add("J2", "Inertia", json!({"J": j2, "w0": 5.0}));
    d.add(
        "c",
        "Clutch",
        json!({"mu": 0.4, "peak": 1.25, "fn_max": 10.0}),
    );
    d.add("one", "Constant", json!({"value": 1.0}));
    d.add(
        "ramp",
        "Ramp",
        json!({"start_time": 0.0, "duration": 100.0, "height": 100.0 * k}),
    );
    d.add("src", "TorqueSource", json!({}));
    d.connect(&["ramp.y", "src.tau"]);
    d.connect(&["src.flange", "J1.flange", "c.flange_a"]);
    d.connect(&["J2.flange", "c.flange_b"]);
    d.connect(&["one.y", "c.f"]);
    d.log(&["J1.w", "J2.w", "c.mode", "c.tau"]);
    d.settings.stop_time = 6.0;
    let (mut m, r) = run(&d);
    let cap = 1.25 * 0.4 * 10.0;
    let expected = cap * (j1 + j2) / (k * j2);
    let unlocks = event_times(&r, "c", EventTag::Unlock);
    assert_eq!(unlocks.len(), 1, "events {:?}", r.events);
    assert!(
        (unlocks[0] - expected).abs() < 1e-7,
        "break-away at {} expected {expected}",
        unlocks[0]
    );
    // It slides with J1 ahead (w_rel = w2 - w1 < 0), never relocks.
    assert_eq!(r.last("c.mode"), Some(-1.0));
    assert!(r.last("J1.w").unwrap() > r.last("J2.w").unwrap());
    assert_eq!(
        event_times(&r, "c", EventTag::Lock)
            .iter()
            .filter(|&&t| t > 0.0)
            .count(),
        0
    );
    assert_energy_closes(&mut m, 1e-6);
}

#[test]
fn one_way_clutch_overruns_then_locks_and_drives() {
    // Driver J1 accelerated by a constant torque from rest; output J2 starts spinning at
    // 4 rad/s (overrunning). J1 catches up at t = 4·J1/T, then both accelerate together.
    let (j1, j2, t) = (0.5, 1.5, 2.0);
    let mut d = Diagram::new("freewheel");
    d.add("J1", "Inertia", json!({"J": j1}));
    d.add("J2", "Inertia", json!({"J": j2, "w0": 4.0}));
    d.add("owc", "OneWayClutch", json!({}));
    d.add("tq", "Constant", json!({"value": t}));
    d.add("src", "TorqueSource", json!({}));
    d.connect(&["tq.y", "src.tau"]);
    d.connect(&["src.flange", "J1.flange", "owc.flange_a"]);
    d.connect(&["J2.flange", "owc.flange_b"]);
    d.log(&["J1.w", "J2.w", "owc.mode", "owc.tau"]);
    d.settings.stop_time = 2.0;
    let (mut m, r) = run(&d);
    assert_eq!(r.get("owc.mode").unwrap()[0], 1.0, "starts overrunning");
    let locks = event_times(&r, "owc", EventTag::Lock);
    assert_eq!(locks.len(), 1);
    assert!((locks[0] - 4.0 * j1 / t).abs() < 1e-7);
    let tf = 2.0;
    let w_end = 4.0 + t * (tf - locks[0]) / (j1 + j2);
    assert!((r.last("J2.w").unwrap() - w_end).abs() < 1e-7);
    assert!((r.last("owc.tau").unwrap() - t * j2 / (j1 + j2)).abs() < 1e-9);
    assert_energy_closes(&mut m, 1e-6);
}

#[test]
fn gear_and_planetary_kinematics_and_torque_ratios() {
    // Torque T on the sun; carrier through IdealGear (ratio 2) to an inertia; ring fixed.
    // Carrier speed = sun/(1+g); gear output = carrier/2.
    let g = 3.0;
    let mut d = Diagram::new("planet");
    d.add("src", "TorqueSource", json!({}));
    d.add("tq", "Constant", json!({"value": 10.0}));
    d.add("ps", "PlanetaryGear", json!({"ratio": g}));
    d.add("ground", "Fixed", json!({}));
    d.add("Js", "Inertia", json!({"J": 0.01}));
    d.add("gear", "IdealGear", json!({"ratio": 2.0}));
    d.add("Jout", "Inertia", json!({"J": 4.0}));
    d.add("ts", "TorqueSensor", json!({}));
    d.connect(&["tq.y", "src.tau"]);
    d.connect(&["src.flange", "Js.flange", "ps.sun"]);
    d.connect(&["ps.ring", "ground.flange"]);
    d.connect(&["ps.carrier", "ts.flange_a"]);
    d.connect(&["ts.flange_b", "gear.flange_a"]);
    d.connect(&["gear.flange_b", "Jout.flange"]);
    d.log(&[
        "Js.w",
        "Jout.w",
        "ts.tau",
        "ps.tau_ring",
        "ps.tau_sun",
        "ps.tau_carrier",
    ]);
    d.settings.stop_time = 1.0;
    let (mut m, r) = run(&d);
    let ws = r.last("Js.w").unwrap();
    let wo = r.last("Jout.w").unwrap();
    assert!(
        (ws / wo - 2.0 * (1.0 + g)).abs() < 1e-9,
        "ratio {}",
        ws / wo
    );
    // Reflected inertia at the sun: Js + Jout/(2(1+g))^2; acceleration = T / that.
    let i = 2.0 * (1.0 + g);
    let jeq = 0.01 + 4.0 / (i * i);
    assert!((ws - 10.0 / jeq).abs() < 1e-6 * ws);
    // Torque through the sensor (carrier -> gear input): Jout·a_out / ratio (power balance).
    let a_out = 10.0 / jeq / i;
    let tau_c = 4.0 * a_out / 2.0;
    assert!((r.last("ts.tau").unwrap() - tau_c).abs() < 1e-6 * tau_c);
    // Sun : ring : carrier torques on the gear set = 1 : g : -(1+g).
    let (s, rg, c) = (
        r.last("ps.tau_sun").unwrap(),
        r.last("ps.tau_ring").unwrap(),
        r.last("ps.tau_carrier").unwrap(),
    );
    assert!(
        (rg / s - g).abs() < 1e-9 && (c / s + (1.0 + g)).abs() < 1e-9,
        "{s} {rg} {c}"
    );
    assert_energy_closes(&mut m, 1e-6);
}

#[test]
fn coast_down_against_road_load_matches_closed_form() {
    // m dv/dt = -(A + C v²)  =>  v(t) = sqrt(A/C)·tan(atan(v0·sqrt(C/A)) − sqrt(A·C)·t/m).
    let (mass, a, c, v0): (f64, f64, f64, f64) = (1500.0, 150.0, 0.4, 30.0);
    let mut d = Diagram::new("coast");
    d.add("car", "Mass", json!({"m": mass, "v0": v0}));
    d.add("road", "RoadLoad", json!({"A": a, "C": c, "v_reg": 1e-6}));
    d.connect(&["car.flange", "road.flange"]);
    d.log(&["car.v"]);
    d.settings.stop_time = 60.0;
    d.settings.rtol = 1e-9;
    d.settings.atol = 1e-10;
    let (mut m, r) = run(&d);
    let exact =
        |t: f64| (a / c).sqrt() * ((v0 * (c / a).sqrt()).atan() - (a * c).sqrt() * t / mass).tan();
    for (k, &t) in r.time.iter().enumerate() {
        let v = r.get("car.v").unwrap()[k];
        assert!((v - exact(t)).abs() < 1e-6, "t = {t}: {v} vs {}", exact(t));
    }
    assert_energy_closes(&mut m, 1e-6);
}

#[test]
fn speed_source_tracks_its_input_with_first_order_lag() {
    // w(t) = 10·(1 − exp(−t/tc)) whatever the inertia; torque = J·dw/dt.
    let (tc, j) = (0.01, 3.0);
    let mut d = Diagram::new("speed");
    d.add("w", "Constant", json!({"value": 10.0}));
    d.add("src", "SpeedSource", json!({"tc": tc}));
    d.add("J", "Inertia", json!({"J": j}));
    d.connect(&["w.y", "src.w"]);
    d.connect(&["src.flange", "J.flange"]);
    d.log(&["J.w", "src.tau"]);
    d.settings.stop_time = 0.1;
    d.settings.rtol = 1e-9;
    d.settings.atol = 1e-10;
    let (mut m, r) = run(&d);
    for (k, &t) in r.time.iter().enumerate() {
        let w = r.get("J.w").unwrap()[k];
        assert!(
            (w - 10.0 * (1.0 - (-t / tc).exp())).abs() < 1e-6,
            "t = {t}: {w}"
        );
        let tau = r.get("src.tau").unwrap()[k];
        assert!(
            (tau - j * 10.0 / tc * (-t / tc).exp()).abs() < 1e-4 * j * 10.0 / tc,
            "t = {t}: {tau}"
        );
    }
    assert_energy_closes(&mut m, 1e-6);
}

#[test]
fn spring_damper_two_mass_oscillator_frequency_and_decay() {
    // Two inertias on a spring: relative angle oscillates at sqrt(c·(J1+J2)/(J1·J2)).
    // Undamped, the energy stays constant; the audit's spring energy closes the balance.
    let (j1, j2, c): (f64, f64, f64) = (1.0, 3.0, 400.0);
    let mut d = Diagram::new("osc");
    d.add("J1", "Inertia", json!({"J": j1, "w0": 3.0}));
    d.add("J2", "Inertia", json!({"J": j2}));
    d.add("k", "SpringDamper", json!({"c": c, "d": 0.0}));
    d.connect(&["J1.flange", "k.flange_a"]);
    d.connect(&["k.flange_b", "J2.flange"]);
    d.log(&["k.phi_rel", "J1.w", "J2.w"]);
    d.settings.stop_time = 2.0;
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-12;
    let (mut m, r) = run(&d);
    let wn = (c * (j1 + j2) / (j1 * j2)).sqrt();
    // phi_rel(t) = −(w0/wn)·sin(wn t) (b starts at rest, a at w0).
    for (k, &t) in r.time.iter().enumerate() {
        let phi = r.get("k.phi_rel").unwrap()[k];
        assert!(
            (phi + 3.0 / wn * (wn * t).sin()).abs() < 1e-7,
            "t = {t}: {phi}"
        );
    }
    // Momentum conserved: J1 w1 + J2 w2 = 3.
    let p = j1 * r.last("J1.w").unwrap() + j2 * r.last("J2.w").unwrap();
    assert!((p - 3.0).abs() < 1e-9);
    assert_energy_closes(&mut m, 1e-8);
}

#[test]
fn two_parallel_clutches_lock_together_with_redundant_constraints() {
    // Two identical clutches between the same shafts: when the slip reaches zero both lock,
    // which gives two identical (redundant, consistent) constraint rows. The lock time uses
    // the sum of both kinetic torques; the held torque is shared (minimum-norm split).
    let mut d = Diagram::new("parallel");
    d.add("J1", "Inertia", json!({"J": 1.0, "w0": 10.0}));
    d.add("J2", "Inertia", json!({"J": 2.0}));
    d.add("c1", "Clutch", json!({"mu": 0.5, "fn_max": 5.0}));
    d.add("c2", "Clutch", json!({"mu": 0.5, "fn_max": 5.0}));
    d.add("one", "Constant", json!({"value": 1.0}));
    d.add("tq", "Constant", json!({"value": 1.5}));
    d.add("src", "TorqueSource", json!({}));
    d.connect(&["tq.y", "src.tau"]);
    d.connect(&["src.flange", "J1.flange", "c1.flange_a", "c2.flange_a"]);
    d.connect(&["J2.flange", "c1.flange_b", "c2.flange_b"]);
    d.connect(&["one.y", "c1.f", "c2.f"]);
    d.log(&["J1.w", "J2.w", "c1.tau", "c2.tau"]);
    d.settings.stop_time = 3.0;
    let (mut m, r) = run(&d);
    let (l1, l2) = (
        event_times(&r, "c1", EventTag::Lock),
        event_times(&r, "c2", EventTag::Lock),
    );
    assert_eq!((l1.len(), l2.len()), (1, 1), "{:?}", r.events);
    assert_eq!(l1[0], l2[0]);
    // Relative deceleration: J1 gets 1.5 − 5, J2 gets +5: slip rate = 3.5/1 + 5/2 = 6.
    assert!((l1[0] - 10.0 / 6.0).abs() < 1e-7, "lock at {}", l1[0]);
    // Locked: the source torque is shared, J2 needs 1.5·2/3 = 1 N·m, half through each.
    let (t1, t2) = (r.last("c1.tau").unwrap(), r.last("c2.tau").unwrap());
    assert!(
        (t1 - 0.5).abs() < 1e-9 && (t2 - 0.5).abs() < 1e-9,
        "{t1} {t2}"
    );
    assert!((r.last("J1.w").unwrap() - r.last("J2.w").unwrap()).abs() < 1e-9);
    assert_energy_closes(&mut m, 1e-6);
}
