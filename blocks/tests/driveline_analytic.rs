//! Analytic references for the driveline library: rigid backlash free flight and
//! restitution, elasto-backlash contact half-periods, lossy gear efficiency in both
//! power-flow directions and its friction-locked band, synchronizer and dog clutch
//! engagement times, heat capacitor temperature from the clutch loss, energy audit with
//! heat storage and mesh losses, the one-way clutch's inconsistent start, and support
//! flange reactions, a heat capacitor cooling through convection. Every model also closes
//! its energy audit.

use drivelink_core::{Diagram, EventTag, SimResult};
use serde_json::json;

mod common;
use common::{assert_energy_closes, close, run_ok as run};

fn events(r: &SimResult, block: &str, kind: EventTag) -> Vec<f64> {
    r.events_of(block, kind).map(|e| e.time).collect()
}

// ---------------------------------------------------------------------------------------
// Backlash

/// Two inertias through a rigid backlash, J1 spinning at w0, J2 at rest, both in the
/// middle of the gap.
fn rigid_backlash(e: f64, w0: f64, b: f64, stop: f64) -> Diagram {
    let mut d = Diagram::new("rigid_backlash");
    d.add("J1", "Inertia", json!({"J": 1.0, "w0": w0}));
    d.add("J2", "Inertia", json!({"J": 3.0}));
    d.add("bl", "Backlash", json!({"b": b, "restitution": e}));
    d.connect(&["J1.flange", "bl.flange_a"]);
    d.connect(&["bl.flange_b", "J2.flange"]);
    d.log(&["J1.w", "J2.w", "bl.phi_rel", "bl.w_rel"]);
    d.settings.stop_time = stop;
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-12;
    d
}

#[test]
fn rigid_backlash_free_flight_between_contacts_is_gap_over_relative_speed() {
    // w_rel = w2 − w1 = −w0: the −b/2 stop after (b/2)/w0; each rebound reverses and
    // scales the relative speed by e, so the next flight across the gap b takes
    // b/(e^k·w0).
    let (e, w0, b) = (0.5, 2.0, 0.2);
    let (mut m, r) = run(&rigid_backlash(e, w0, b, 1.6));
    let impacts = events(&r, "bl", EventTag::Impact);
    let mut expected = vec![b / 2.0 / w0];
    for k in 1..4 {
        let last = expected[k - 1];
        expected.push(last + b / (e.powi(k as i32) * w0));
    }
    assert_eq!(
        impacts.len(),
        4,
        "impacts {impacts:?}, events {:?}",
        r.events
    );
    for (t, x) in impacts.iter().zip(&expected) {
        close(*t, *x, 1e-8, "impact instant");
    }
    // Momentum J1·w1 + J2·w2 = J1·w0 at every sample.
    let (w1, w2) = (r.get("J1.w").unwrap(), r.get("J2.w").unwrap());
    for (a, c) in w1.iter().zip(w2) {
        close(a + 3.0 * c, w0, 1e-9, "angular momentum");
    }
    // Impact loss ½·μ·(1 − e²)·Σ w_rel², μ = J1·J2/(J1 + J2).
    let mu = 3.0 / 4.0;
    let sum_w2: f64 = (0..4).map(|k| (w0 * e.powi(k)).powi(2)).sum();
    let a = m.energy_audit();
    close(
        a.impact_loss,
        0.5 * mu * (1.0 - e * e) * sum_w2,
        1e-9,
        "impact loss",
    );
    assert!(a.relative_residual.abs() < 1e-9, "{a:#?}");
}

#[test]
fn plastic_backlash_contact_persists_and_carries_the_shaft() {
    // e = 0: one plastic impact, then the flanges move together at the common speed.
    let (w0, b) = (2.0, 0.2);
    let (mut m, r) = run(&rigid_backlash(0.0, w0, b, 1.0));
    assert_eq!(
        events(&r, "bl", EventTag::Impact).len(),
        1,
        "{:?}",
        r.events
    );
    close(r.last("J1.w").unwrap(), w0 / 4.0, 1e-12, "common speed");
    close(r.last("J2.w").unwrap(), w0 / 4.0, 1e-12, "common speed");
    close(
        r.last("bl.phi_rel").unwrap(),
        -b / 2.0,
        1e-9,
        "resting at the stop",
    );
    assert_energy_closes(&mut m, 1e-9);
}

#[test]
fn elasto_backlash_contact_lasts_half_a_spring_period_and_returns_the_speed() {
    // An inertia on an undamped elasto-backlash to ground, starting in the middle of the
    // gap at w0: contact at (b/2)/w0, a half period π·√(J/c) on the spring, out at −w0,
    // across the gap b/w0 to the other stop.
    let (j, c, b, w0): (f64, f64, f64, f64) = (2.0, 800.0, 0.1, 1.5);
    let mut d = Diagram::new("elasto");
    d.add("ground", "Fixed", json!({}));
    d.add("eb", "ElastoBacklash", json!({"c": c, "b": b}));
    d.add("J", "Inertia", json!({"J": j, "w0": w0}));
    d.connect(&["ground.flange", "eb.flange_a"]);
    d.connect(&["eb.flange_b", "J.flange"]);
    d.log(&["J.w", "eb.phi_rel", "eb.contact", "eb.tau"]);
    d.settings.stop_time = 0.45;
    // Dense output: the penetration is read between samples.
    d.settings.output_interval = Some(1e-5);
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-12;
    let (mut m, r) = run(&d);
    let half = std::f64::consts::PI * (j / c).sqrt();
    let t1 = b / 2.0 / w0;
    let expected = [t1, t1 + half, t1 + half + b / w0, t1 + 2.0 * half + b / w0];
    // Instants where `contact` changes (rows at the located events).
    let contact = r.get("eb.contact").unwrap();
    let changes: Vec<f64> = (1..r.time.len())
        .filter(|&k| contact[k] != contact[k - 1])
        .map(|k| r.time[k])
        .collect();
    assert_eq!(changes.len(), expected.len(), "{changes:?}");
    for (t, x) in changes.iter().zip(&expected) {
        close(*t, *x, 1e-7, "contact change");
    }
    // Each contact change is in the event log too (it was not: "0 events logged").
    let logged = events(&r, "eb", EventTag::ZeroCrossing);
    assert_eq!(logged, changes, "{:?}", r.events);
    // Undamped: the speed after each contact is the speed before, reversed.
    close(
        r.value_at("J.w", t1 + half + 0.5 * b / w0).unwrap(),
        -w0,
        1e-7,
        "rebound speed",
    );
    // Penetration w0·√(J/c) at mid-contact.
    close(
        r.value_at("eb.phi_rel", t1 + 0.5 * half).unwrap(),
        b / 2.0 + w0 * (j / c).sqrt(),
        1e-7,
        "penetration",
    );
    assert_energy_closes(&mut m, 1e-7);
}

#[test]
fn elasto_backlash_damper_never_pulls() {
    // Heavy damping: the damper torque alone would pull the flanges together as they
    // separate; the contact torque must keep its pushing sign (tau >= 0 beyond +b/2,
    // where tau decelerates flange_b), and it is zero in the gap.
    let mut d = Diagram::new("elasto_damped");
    d.add("ground", "Fixed", json!({}));
    d.add(
        "eb",
        "ElastoBacklash",
        json!({"c": 1000.0, "d": 40.0, "b": 0.1}),
    );
    d.add("J", "Inertia", json!({"J": 1.0, "w0": 2.0}));
    d.connect(&["ground.flange", "eb.flange_a"]);
    d.connect(&["eb.flange_b", "J.flange"]);
    d.log(&["J.w", "eb.phi_rel", "eb.tau"]);
    d.settings.stop_time = 0.5;
    d.settings.rtol = 1e-9;
    d.settings.atol = 1e-11;
    let (mut m, r) = run(&d);
    let (phi, tau) = (r.get("eb.phi_rel").unwrap(), r.get("eb.tau").unwrap());
    for (p, t) in phi.iter().zip(tau) {
        if *p > 0.05 {
            assert!(*t >= -1e-9, "pulling torque {t} at phi_rel {p}");
        } else if *p < -0.05 {
            assert!(*t <= 1e-9, "pulling torque {t} at phi_rel {p}");
        } else {
            assert!(t.abs() <= 1e-9, "torque {t} in the gap at phi_rel {p}");
        }
    }
    assert_energy_closes(&mut m, 1e-6);
}

// ---------------------------------------------------------------------------------------
// Lossy gear

/// J_a = 1 at flange_a with torque `ta`, J_b = 2 at flange_b with torque `tb`, ratio 2,
/// mesh efficiency `eta` both ways, no bearing friction; from rest.
fn lossy_pair(ta: f64, tb: f64, eta: f64) -> Diagram {
    let mut d = Diagram::new("lossy_pair");
    d.add("ta", "Constant", json!({"value": ta}));
    d.add("tb", "Constant", json!({"value": tb}));
    d.add("srcA", "TorqueSource", json!({}));
    d.add("srcB", "TorqueSource", json!({}));
    d.add("Ja", "Inertia", json!({"J": 1.0}));
    d.add("Jb", "Inertia", json!({"J": 2.0}));
    d.add(
        "gear",
        "LossyGear",
        json!({"ratio": 2.0, "lossTable": [[0.0, eta, eta, 0.0, 0.0]]}),
    );
    d.connect(&["ta.y", "srcA.tau"]);
    d.connect(&["tb.y", "srcB.tau"]);
    d.connect(&["srcA.flange", "Ja.flange", "gear.flange_a"]);
    d.connect(&["gear.flange_b", "Jb.flange", "srcB.flange"]);
    d.log(&[
        "Ja.w",
        "Jb.w",
        "gear.mode",
        "gear.tau_loss",
        "gear.power_loss",
        "gear.tau_a",
    ]);
    d.settings.stop_time = 1.0;
    d
}

#[test]
fn lossy_gear_flange_a_driving_delivers_eta_of_the_power() {
    // a drives: torque at b = i·η·T, T = ta − J_a·a_a, a_a = i·a_b
    // ⇒ a_b = (i·η·ta + tb)/(J_b + η·i²·J_a).
    let (i, eta, ja, jb, ta, tb) = (2.0, 0.8, 1.0, 2.0, 10.0, -3.0);
    let (mut m, r) = run(&lossy_pair(ta, tb, eta));
    let ab = (i * eta * ta + tb) / (jb + eta * i * i * ja);
    close(r.last("Jb.w").unwrap(), ab, 1e-9, "w_b(1 s)");
    close(r.last("Ja.w").unwrap(), i * ab, 1e-9, "w_a(1 s)");
    assert_eq!(r.last("gear.mode"), Some(1.0));
    // Loss power = (1 − η)·T·w_a, T = ta − J_a·a_a.
    let t_in = ta - ja * i * ab;
    close(
        r.last("gear.power_loss").unwrap(),
        (1.0 - eta) * t_in * i * ab,
        1e-8,
        "loss power",
    );
    assert_energy_closes(&mut m, 1e-9);
}

#[test]
fn lossy_gear_flange_b_driving_needs_one_over_eta_of_the_power() {
    // b drives forward against a load at a: torque delivered to a = η·S/i with S the
    // torque b puts in: J_a·a_a = ta + η·(tb − J_b·a_b)/i ⇒
    // a_b = (ta + η·tb/i)/(J_a·i + η·J_b/i).
    let (i, eta, ja, jb, ta, tb) = (2.0, 0.5, 1.0, 2.0, -2.0, 20.0);
    let (mut m, r) = run(&lossy_pair(ta, tb, eta));
    let ab = (ta + eta * tb / i) / (ja * i + eta * jb / i);
    assert!(ab > 0.0);
    close(r.last("Jb.w").unwrap(), ab, 1e-9, "w_b(1 s)");
    close(r.last("Ja.w").unwrap(), i * ab, 1e-9, "w_a(1 s)");
    // Output power at a is η times the mesh input power from b.
    let s = tb - jb * ab;
    let p_in = s * ab;
    close(
        r.last("gear.power_loss").unwrap(),
        (1.0 - eta) * p_in,
        1e-8,
        "loss power",
    );
    assert_energy_closes(&mut m, 1e-9);
}

#[test]
fn lossy_gear_locks_when_driven_from_b_within_the_friction_band() {
    // Load ta = 10 at a, drive tb at b: at rest the gear holds while
    // η·ta <= −tb/i <= ta/η (MSL: tauLossMin_m <= sa <= tauLossMax_p). With η = 0.5,
    // i = 2: stuck for tb in [−40, −10]; beyond, a drives forward or b drives backward.
    let (i, eta, ja, jb, ta) = (2.0, 0.5, 1.0, 2.0, 10.0);
    for tb in [-10.5, -25.0, -39.5] {
        let (mut m, r) = run(&lossy_pair(ta, tb, eta));
        assert_eq!(r.last("gear.mode"), Some(0.0), "tb = {tb}");
        assert!(
            r.get("gear.mode").unwrap().iter().all(|&x| x == 0.0),
            "tb = {tb}"
        );
        assert_eq!(r.last("Ja.w"), Some(0.0), "tb = {tb}");
        assert_eq!(r.last("Jb.w"), Some(0.0), "tb = {tb}");
        assert_energy_closes(&mut m, 1e-9);
    }
    // Just below the band, a drives forward: a_b = (i·η·ta + tb)/(J_b + η·i²·J_a).
    let tb = -8.0;
    let (_, r) = run(&lossy_pair(ta, tb, eta));
    close(
        r.last("Jb.w").unwrap(),
        (i * eta * ta + tb) / (jb + eta * i * i * ja),
        1e-9,
        "a drives",
    );
    assert_eq!(r.last("gear.mode"), Some(1.0));
    // Beyond it, b drives backward: a_b = (ta + η·tb/i)/(J_a·i + η·J_b/i).
    let tb = -50.0;
    let (_, r) = run(&lossy_pair(ta, tb, eta));
    close(
        r.last("Jb.w").unwrap(),
        (ta + eta * tb / i) / (ja * i + eta * jb / i),
        1e-9,
        "b drives",
    );
    assert_eq!(r.last("gear.mode"), Some(-1.0));
}

#[test]
fn ideal_gear_efficiency_equals_the_lossy_gear_with_a_constant_table() {
    let (ta, tb, eta) = (10.0, -3.0, 0.8);
    let (_, lossy) = run(&lossy_pair(ta, tb, eta));
    let mut d = lossy_pair(ta, tb, eta);
    d.blocks.retain(|b| b.name != "gear");
    d.add(
        "gear",
        "IdealGear",
        json!({"ratio": 2.0, "efficiency": eta}),
    );
    d.log.retain(|n| !n.starts_with("gear."));
    let (mut m, ideal) = run(&d);
    close(
        ideal.last("Jb.w").unwrap(),
        lossy.last("Jb.w").unwrap(),
        1e-10,
        "same speed",
    );
    let a = m.energy_audit();
    let mesh: f64 = a
        .losses
        .iter()
        .filter(|(n, _)| n.starts_with("gear"))
        .map(|l| l.1)
        .sum();
    assert!(mesh > 0.0, "mesh loss in the audit: {a:#?}");
    assert!(a.relative_residual.abs() < 1e-9, "{a:#?}");
}

// ---------------------------------------------------------------------------------------
// Synchronizer and dog clutch

#[test]
fn synchronizer_synchronises_in_delta_w_times_j_over_cone_torque() {
    let (j1, j2, w0, cone, t_on) = (1.0, 2.0, 100.0, 50.0, 0.1);
    let mut d = Diagram::new("sync");
    d.add("J1", "Inertia", json!({"J": j1, "w0": w0}));
    d.add("J2", "Inertia", json!({"J": j2}));
    d.add("sync", "Synchronizer", json!({"cone_torque": cone}));
    d.add("sleeve", "Step", json!({"time": t_on}));
    d.connect(&["J1.flange", "sync.flange_a"]);
    d.connect(&["sync.flange_b", "J2.flange"]);
    d.connect(&["sleeve.y", "sync.engage"]);
    d.log(&["J1.w", "J2.w", "sync.engaged"]);
    d.settings.stop_time = 2.0;
    let (mut m, r) = run(&d);
    let jr = j1 * j2 / (j1 + j2);
    let shifts: Vec<_> = r.events_of("sync", EventTag::Shift).collect();
    assert_eq!(shifts.len(), 2, "{:?}", r.events);
    close(
        shifts[0].time,
        t_on,
        1e-12,
        "blocked shift logged at the demand",
    );
    assert!(shifts[0].detail.contains("blocked"), "{}", shifts[0].detail);
    close(shifts[1].time, t_on + w0 * jr / cone, 1e-8, "dog engaged");
    assert!(shifts[1].detail.contains("engaged"), "{}", shifts[1].detail);
    let wf = j1 * w0 / (j1 + j2);
    close(r.last("J1.w").unwrap(), wf, 1e-9, "common speed");
    close(r.last("J2.w").unwrap(), wf, 1e-9, "common speed");
    // The cone dissipated ½·μ·Δω².
    let a = m.energy_audit();
    let loss: f64 = a.losses.iter().map(|l| l.1).sum::<f64>() + a.impact_loss;
    close(
        loss,
        0.5 * jr * w0 * w0,
        1e-6 * 0.5 * jr * w0 * w0,
        "cone loss",
    );
    assert!(a.relative_residual.abs() < 1e-8, "{a:#?}");
}

#[test]
fn dog_clutch_demanded_with_slip_is_blocked_until_the_slip_crosses_zero() {
    // J1 decelerated by a constant torque from 10 rad/s towards J2 at rest: the slip
    // w2 − w1 reaches zero at t = J1·10/5 = 2 s; the dog engages there, not before.
    let mut d = Diagram::new("dog");
    d.add("J1", "Inertia", json!({"J": 1.0, "w0": 10.0}));
    d.add("J2", "Inertia", json!({"J": 2.0}));
    d.add("brake", "Constant", json!({"value": -5.0}));
    d.add("src", "TorqueSource", json!({}));
    d.add("dog", "DogClutch", json!({}));
    d.add("demand", "Step", json!({"time": 0.5}));
    d.connect(&["brake.y", "src.tau"]);
    d.connect(&["src.flange", "J1.flange", "dog.flange_a"]);
    d.connect(&["dog.flange_b", "J2.flange"]);
    d.connect(&["demand.y", "dog.engage"]);
    d.log(&["J1.w", "J2.w", "dog.engaged"]);
    d.settings.stop_time = 3.0;
    let (mut m, r) = run(&d);
    let shifts: Vec<_> = r.events_of("dog", EventTag::Shift).collect();
    assert_eq!(shifts.len(), 2, "{:?}", r.events);
    close(shifts[0].time, 0.5, 1e-12, "blocked");
    assert!(shifts[0].detail.contains("blocked"));
    close(shifts[1].time, 2.0, 1e-8, "engaged at zero slip");
    // Engaged, both decelerate together: w(3) = −5·1/(1 + 2).
    close(r.last("J1.w").unwrap(), -5.0 / 3.0, 1e-8, "engaged speed");
    close(r.last("J2.w").unwrap(), -5.0 / 3.0, 1e-8, "engaged speed");
    assert_energy_closes(&mut m, 1e-8);
}

// ---------------------------------------------------------------------------------------
// Heat

/// A clutch engaging two inertias, its heat port on a capacitor.
fn clutch_heat(c: f64) -> Diagram {
    let mut d = Diagram::new("clutch_heat");
    d.add("J1", "Inertia", json!({"J": 1.0, "w0": 50.0}));
    d.add("J2", "Inertia", json!({"J": 2.0}));
    d.add("clutch", "Clutch", json!({"mu": 0.4, "fn_max": 100.0}));
    d.add(
        "pedal",
        "Ramp",
        json!({"height": 1.0, "duration": 0.5, "start_time": 0.1}),
    );
    d.add("disc", "HeatCapacitor", json!({"C": c, "T0": 300.0}));
    d.connect(&["J1.flange", "clutch.flange_a"]);
    d.connect(&["clutch.flange_b", "J2.flange"]);
    d.connect(&["pedal.y", "clutch.f"]);
    d.connect(&["clutch.heat", "disc.port"]);
    d.log(&["J1.w", "J2.w", "disc.T", "clutch.mode"]);
    d.settings.stop_time = 3.0;
    d
}

#[test]
fn heat_capacitor_temperature_rise_is_the_integrated_clutch_loss_over_c() {
    let c = 450.0;
    let (mut m, r) = run(&clutch_heat(c));
    assert_eq!(r.last("clutch.mode"), Some(0.0), "clutch locked");
    let a = m.energy_audit();
    let clutch_loss = a
        .losses
        .iter()
        .find(|(n, _)| n == "clutch")
        .map(|l| l.1)
        .expect("clutch loss");
    let dt = r.last("disc.T").unwrap() - 300.0;
    // The same integral (of the loss power the clutch delivers), to round-off.
    close(dt, clutch_loss / c, 1e-9, "temperature rise");
    // And the physics: the slip loss is ½·μ·Δω² (μ = 2/3, Δω = 50).
    let expected = 0.5 * (2.0 / 3.0) * 50.0 * 50.0;
    close(clutch_loss, expected, 1e-6 * expected, "slip loss");
    assert!(a.heat.relative_residual.abs() < 1e-9, "{:#?}", a.heat);
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
}

#[test]
fn energy_audit_closes_with_heat_storage_conduction_and_mesh_losses() {
    // Engine-like source through a clutch and a lossy gear to a damped load; the clutch
    // and gear heat a housing that conducts to a fixed ambient temperature.
    let mut d = Diagram::new("heat_audit");
    d.add("tq", "Constant", json!({"value": 40.0}));
    d.add("src", "TorqueSource", json!({}));
    d.add("Jin", "Inertia", json!({"J": 0.2}));
    d.add("clutch", "Clutch", json!({"mu": 0.3, "fn_max": 200.0}));
    d.add(
        "pedal",
        "Ramp",
        json!({"height": 1.0, "duration": 1.0, "start_time": 0.2}),
    );
    d.add("Jmid", "Inertia", json!({"J": 0.1}));
    d.add(
        "gear",
        "LossyGear",
        json!({"ratio": 3.0, "lossTable": [[0.0, 0.9, 0.85, 0.5, 0.4], [100.0, 0.85, 0.8, 1.0, 0.8]]}),
    );
    d.add("Jout", "Inertia", json!({"J": 2.0}));
    d.add("load", "Damper", json!({"d": 1.5}));
    d.add("ground", "Fixed", json!({}));
    d.add("housing", "HeatCapacitor", json!({"C": 800.0, "T0": 300.0}));
    d.add("cond", "ThermalConductor", json!({"G": 2.0}));
    d.add("ambient", "FixedTemperature", json!({"T": 290.0}));
    d.connect(&["tq.y", "src.tau"]);
    d.connect(&["src.flange", "Jin.flange", "clutch.flange_a"]);
    d.connect(&["pedal.y", "clutch.f"]);
    d.connect(&["clutch.flange_b", "Jmid.flange", "gear.flange_a"]);
    d.connect(&["gear.flange_b", "Jout.flange", "load.flange_a"]);
    d.connect(&["load.flange_b", "ground.flange"]);
    d.connect(&["clutch.heat", "gear.heat", "housing.port", "cond.port_a"]);
    d.connect(&["cond.port_b", "ambient.port"]);
    d.log(&["Jin.w", "Jout.w", "housing.T", "gear.mode", "clutch.mode"]);
    d.settings.stop_time = 4.0;
    let (mut m, _r) = run(&d);
    let a = m.energy_audit();
    let loss = |n: &str| a.losses.iter().find(|(x, _)| x == n).map(|l| l.1).unwrap();
    let (clutch, gear) = (loss("clutch"), loss("gear"));
    assert!(clutch > 0.0 && gear > 0.0, "{a:#?}");
    // The heat delivered is exactly the clutch's and the gear's mechanical losses.
    close(
        a.heat.delivered,
        clutch + gear,
        1e-9 * (clutch + gear),
        "heat delivered",
    );
    let stored: f64 = a.heat.stored.iter().map(|s| s.1).sum();
    let to_fixed: f64 = a.heat.to_fixed.iter().map(|s| s.1).sum();
    assert!(stored > 0.0 && to_fixed > 0.0, "{:#?}", a.heat);
    assert!(a.heat.relative_residual.abs() < 1e-9, "{:#?}", a.heat);
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
}

// ---------------------------------------------------------------------------------------
// One-way clutch, support flanges

#[test]
fn one_way_clutch_started_backwards_is_a_logged_plastic_impact() {
    // w_rel = w_b − w_a = −6 < 0 at t0: a freewheel cannot run backwards; both flanges
    // take the common speed (J_a·w_a + J_b·w_b)/(J_a + J_b), losing ½·μ·w_rel².
    let (ja, jb, wa, wb) = (1.0, 2.0, 4.0, -2.0);
    let mut d = Diagram::new("owc");
    d.add("Ja", "Inertia", json!({"J": ja, "w0": wa}));
    d.add("Jb", "Inertia", json!({"J": jb, "w0": wb}));
    d.add("owc", "OneWayClutch", json!({"mu": 0.5, "fn_max": 10.0}));
    d.connect(&["Ja.flange", "owc.flange_a"]);
    d.connect(&["owc.flange_b", "Jb.flange"]);
    d.log(&["Ja.w", "Jb.w"]);
    d.settings.stop_time = 1.0;
    let (mut m, r) = run(&d);
    let logged: Vec<_> = r.events_of("owc", EventTag::Impact).collect();
    assert!(!logged.is_empty(), "{:?}", r.events);
    assert_eq!(logged[0].time, 0.0);
    assert!(
        logged[0].detail.contains("inconsistent start"),
        "{}",
        logged[0].detail
    );
    let wc = (ja * wa + jb * wb) / (ja + jb);
    close(r.get("Ja.w").unwrap()[0], wc, 1e-12, "w_a after t0");
    close(r.get("Jb.w").unwrap()[0], wc, 1e-12, "w_b after t0");
    close(r.last("Ja.w").unwrap(), wc, 1e-12, "no torque afterwards");
    let a = m.energy_audit();
    let mu = ja * jb / (ja + jb);
    close(
        a.impact_loss,
        0.5 * mu * (wb - wa).powi(2),
        1e-9,
        "impact loss",
    );
    assert!(a.relative_residual.abs() < 1e-9, "{a:#?}");
}

#[test]
fn gear_support_flange_takes_the_reaction_torque_and_momentum_is_conserved() {
    // A free housing: a torque source between housing and input shaft, a gear (ratio 3)
    // whose support is the housing. No ground: the total angular momentum stays 0, the
    // housing is driven by the reactions only, and the gear's three torques balance.
    for gear in ["IdealGear", "LossyGear"] {
        let mut d = Diagram::new("housing");
        d.add("tq", "Constant", json!({"value": 5.0}));
        d.add("src", "TorqueSource", json!({}));
        d.add("Jin", "Inertia", json!({"J": 0.5}));
        d.add("Jout", "Inertia", json!({"J": 4.0}));
        d.add("Jh", "Inertia", json!({"J": 10.0}));
        let p = if gear == "LossyGear" {
            json!({"ratio": 3.0, "lossTable": [[0.0, 0.9, 0.9, 0.0, 0.0]]})
        } else {
            json!({"ratio": 3.0})
        };
        d.add("g", gear, p);
        d.connect(&["tq.y", "src.tau"]);
        d.connect(&["src.flange", "Jin.flange", "g.flange_a"]);
        d.connect(&["g.flange_b", "Jout.flange"]);
        d.connect(&["src.support", "g.support", "Jh.flange"]);
        d.log(&[
            "Jin.w",
            "Jout.w",
            "Jh.w",
            "g.tau_a",
            "g.tau_b",
            "g.tau_support",
        ]);
        d.settings.stop_time = 1.0;
        let (mut m, r) = run(&d);
        let (wi, wo, wh) = (
            r.get("Jin.w").unwrap(),
            r.get("Jout.w").unwrap(),
            r.get("Jh.w").unwrap(),
        );
        for k in 0..r.time.len() {
            close(
                0.5 * wi[k] + 4.0 * wo[k] + 10.0 * wh[k],
                0.0,
                1e-9,
                "momentum",
            );
            close(wi[k] - wh[k], 3.0 * (wo[k] - wh[k]), 1e-9, "kinematics");
        }
        assert!(
            r.last("Jh.w").unwrap() < 0.0,
            "{gear}: housing turns against the input"
        );
        let (ta, tb, ts) = (
            r.get("g.tau_a").unwrap(),
            r.get("g.tau_b").unwrap(),
            r.get("g.tau_support").unwrap(),
        );
        for k in 0..r.time.len() {
            close(ta[k] + tb[k] + ts[k], 0.0, 1e-9, "torque balance");
        }
        // The housing's acceleration is its reactions: gear support torque − source torque.
        let k = r.time.len() / 2;
        let ah = (wh[k + 1] - wh[k - 1]) / (r.time[k + 1] - r.time[k - 1]);
        close(10.0 * ah, ts[k] - 5.0, 1e-6, "housing reaction");
        assert_energy_closes(&mut m, 1e-8);
    }
}

#[test]
fn gear_selector_shift_time_scheduled_at_a_lever_event_fires_and_the_gearbox_synchronises() {
    // Regression: the next-time-event cache was refreshed before `update_modes`, so the
    // shift-time event a selector schedules when the lever moves never fired and the
    // gear was never commanded. Lever to 1st at 0.2 s, shift time 0.3 s: commanded at
    // 0.5 s; the synchronizer then brings the idler (w_in/ratio, reflected inertia
    // (J_in + J_shaft)·ratio² + J_idler) and the output side (J_out + J_shaft)
    // together in Δω·J/T.
    // The input is spun up in neutral by 10 N·m until 0.5 s (the gearbox's own shafts
    // start at rest, so the input gets its speed from a torque; the idler turns with it):
    // w0 = 10·0.5/(J_in + J_shaft + J_idler/ratio²).
    let (j_in, j_out, ratio, cone) = (0.5, 1.0, 2.0, 20.0);
    let w0 = 10.0 * 0.5 / (j_in + 0.01 + 1e-3 / (ratio * ratio));
    let mut d = Diagram::new("gearbox_shift");
    d.add("Jin", "Inertia", json!({"J": j_in}));
    d.add(
        "spin",
        "SignalBuilder",
        json!({"points": [[0.0, 10.0], [0.5, 10.0], [0.5, 0.0]]}),
    );
    d.add("src", "TorqueSource", json!({}));
    d.connect(&["spin.y", "src.tau"]);
    d.connect(&["src.flange", "Jin.flange"]);
    d.add("Jout", "Inertia", json!({"J": j_out}));
    d.add(
        "gb",
        "ManualGearbox",
        json!({"ratios": [ratio], "inertias": [0.01, 0.02], "gear_inertia": 1e-3,
               "synchronizer_torque": cone, "shift_time": 0.3}),
    );
    d.add("lever", "Step", json!({"time": 0.2}));
    d.connect(&["Jin.flange", "gb.input"]);
    d.connect(&["gb.output", "Jout.flange"]);
    d.connect(&["lever.y", "gb.gear"]);
    d.log(&["gb.selected", "gb.engaged", "Jin.w", "Jout.w"]);
    d.settings.stop_time = 1.5;
    let (mut m, r) = run(&d);
    let commanded: Vec<f64> = r
        .events_of("gb.selector", EventTag::Shift)
        .filter(|e| e.detail.contains("commanded"))
        .map(|e| e.time)
        .collect();
    assert_eq!(commanded.len(), 1, "{:?}", r.events);
    close(
        commanded[0],
        0.5,
        1e-12,
        "gear commanded after the shift time",
    );
    let j1 = (j_in + 0.01) * ratio * ratio + 1e-3;
    let j2 = j_out + 0.02;
    let jr = j1 * j2 / (j1 + j2);
    let engaged: Vec<f64> = r
        .events_of("gb.sync_1", EventTag::Shift)
        .filter(|e| e.detail.contains("dog engaged"))
        .map(|e| e.time)
        .collect();
    assert_eq!(engaged.len(), 1, "{:?}", r.events);
    close(
        engaged[0],
        0.5 + (w0 / ratio) * jr / cone,
        1e-8,
        "synchronised",
    );
    assert_eq!(r.last("gb.engaged"), Some(1.0));
    close(
        r.last("Jin.w").unwrap(),
        ratio * r.last("Jout.w").unwrap(),
        1e-9,
        "in gear",
    );
    assert_energy_closes(&mut m, 1e-8);
}

/// Regression: a lever value that is no gear of the box (7 on a 2-speed, −1 without
/// reverse, 5 from the start) selected neutral as documented, but the selector's guards
/// watched the selected gear (neutral, 0) instead of the lever, so they stayed violated
/// and every such run failed ("event iteration did not settle"). Now the box shifts to
/// neutral and the run goes on; moving the lever back to a gear selects it.
#[test]
fn gear_selector_lever_on_no_gear_selects_neutral_and_the_run_goes_on() {
    for (points, expect_mid) in [
        (
            json!([[0.0, 1.0], [1.0, 1.0], [1.0, 7.0], [2.0, 7.0], [2.0, 2.0]]),
            0.0,
        ),
        (
            json!([[0.0, 1.0], [1.0, 1.0], [1.0, -1.0], [2.0, -1.0], [2.0, 2.0]]),
            0.0,
        ),
        (json!([[0.0, 5.0], [2.0, 5.0], [2.0, 2.0]]), 0.0),
    ] {
        let mut d = Diagram::new("lever");
        d.add(
            "sel",
            "GearSelector",
            json!({"gears": 2, "shift_time": 0.1}),
        );
        d.add("lever", "SignalBuilder", json!({"points": points}));
        d.connect(&["lever.y", "sel.gear"]);
        d.log(&["sel.selected", "sel.engaged"]);
        d.settings.stop_time = 3.0;
        let (_, r) = run(&d);
        assert_eq!(r.end_time, 3.0, "{points}: {}", r.message);
        let sel = |t: f64| {
            let i = r.time.iter().rposition(|&x| x <= t).unwrap();
            r.get("sel.selected").unwrap()[i]
        };
        assert_eq!(sel(1.5), expect_mid, "{points}: neutral while on no gear");
        assert_eq!(sel(2.95), 2.0, "{points}: back on gear 2");
        assert_eq!(r.last("sel.engaged"), Some(2.0), "{points}");
        assert!(
            r.events_of("sel", EventTag::Shift)
                .any(|e| e.detail.contains("is not a gear of this box")),
            "{points}: {:?}",
            r.events
        );
    }
}

/// Regression: a speed source spinning a lossy gear up from rest released the locked mesh
/// backward (the locked mesh's torque, split with the source's tracking row on the same
/// shaft, had the wrong sign), so it relocked and released every 5e-13 s and the run
/// failed on chattering. A released load-dependent joint now slides the way its slip
/// accelerates when free: forward, and the source's torque is exactly the input inertia's
/// plus the output's reflected through the lossy mesh, `(J_in + J_out/(r²·η))·a`.
#[test]
fn speed_source_spins_a_lossy_gear_up_from_rest_sliding_forward() {
    let (j_in, j_out, r, eta, tc) = (0.02, 2.0, 3.0, 0.9, 0.01);
    let mut d = Diagram::new("lossy_speed");
    d.add("w", "Constant", json!({"value": 100.0}));
    d.add("ss", "SpeedSource", json!({"tc": tc}));
    d.add("jin", "Inertia", json!({"J": j_in}));
    d.add("g", "IdealGear", json!({"ratio": r, "efficiency": eta}));
    d.add("out", "Inertia", json!({"J": j_out}));
    d.connect(&["w.y", "ss.w"]);
    d.connect(&["ss.flange", "jin.flange", "g.flange_a"]);
    d.connect(&["g.flange_b", "out.flange"]);
    d.log(&["jin.w", "ss.tau", "g.power_loss"]);
    d.settings.stop_time = 1.0;
    // Tight, so the audit's integration error is far below its bound.
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-10;
    let (mut m, r_) = run(&d);
    assert_eq!(r_.end_time, 1.0, "{}", r_.message);
    let starts: Vec<&str> = r_
        .events
        .iter()
        .filter(|e| e.block == "g")
        .map(|e| e.detail.as_str())
        .collect();
    assert_eq!(starts.len(), 1, "{starts:?}");
    assert!(starts[0].contains("sliding forward"), "{starts:?}");
    let (w, tau, loss) = (
        r_.get("jin.w").unwrap(),
        r_.get("ss.tau").unwrap(),
        r_.get("g.power_loss").unwrap(),
    );
    let j_eff = j_in + j_out / (r * r * eta);
    for i in 0..r_.time.len() {
        if r_.time[i] > 0.1 {
            break;
        }
        let a = (100.0 - w[i]) / tc;
        close(
            tau[i],
            j_eff * a,
            1e-9 * j_eff * a.abs().max(1.0),
            "source torque",
        );
        assert!(loss[i] >= -1e-9, "loss {} at {}", loss[i], r_.time[i]);
    }
    assert_energy_closes(&mut m, 1e-8);
}

// ---------------------------------------------------------------------------------------
// Eddy current brake

/// Time for a flywheel J braked by `EddyCurrentBrake` (tau = 2·Tn·x/(1 + x²), x = w/wn)
/// to slow from x0 to x: J·wn·dx/dt = −2·Tn·x/(1 + x²) ⇒
/// t = J·wn/(2·Tn)·(ln(x0/x) + (x0² − x²)/2).
fn eddy_time(j: f64, wn: f64, tn: f64, x0: f64, x: f64) -> f64 {
    j * wn / (2.0 * tn) * ((x0 / x).ln() + 0.5 * (x0 * x0 - x * x))
}

#[test]
fn eddy_current_brake_slows_a_flywheel_on_its_speed_torque_curve() {
    let (j, wn, tn) = (0.5, 20.0, 4.0);
    for (t_dev, alpha20) in [(293.15, 0.0), (353.15, 3.92e-3)] {
        // A hotter device has a higher resistance: its characteristic speed scales with
        // 1 + alpha·(T − TRef) (TRef = 293.15 K, so alpha = alpha20).
        let wn_t = wn * (1.0 + alpha20 * (t_dev - 293.15));
        let mut d = Diagram::new("eddy");
        d.add("J", "Inertia", json!({"J": j, "w0": 3.0 * wn_t}));
        d.add(
            "brake",
            "EddyCurrentBrake",
            json!({"tau_nominal": tn, "w_nominal": wn, "alpha20": alpha20}),
        );
        d.add("ambient", "FixedTemperature", json!({"T": t_dev}));
        d.connect(&["J.flange", "brake.flange"]);
        d.connect(&["brake.heat", "ambient.port"]);
        d.log(&["J.w", "brake.tau", "brake.T"]);
        let t1 = eddy_time(j, wn_t, tn, 3.0, 1.0);
        d.settings.stop_time = 1.2 * t1;
        d.settings.rtol = 1e-10;
        d.settings.atol = 1e-10;
        d.settings.output_interval = Some(1e-3);
        let (mut m, r) = run(&d);
        close(
            r.value_at("J.w", t1).unwrap(),
            wn_t,
            1e-6 * wn_t,
            "w(t1) = w_nominal(T)",
        );
        close(
            r.value_at("brake.tau", t1).unwrap(),
            tn,
            1e-6 * tn,
            "peak torque at wn",
        );
        // The heat that left through the fixed temperature is the kinetic energy lost.
        let a = m.energy_audit();
        let ke_lost = a.kinetic_initial - a.kinetic_final;
        close(a.heat.delivered, ke_lost, 1e-6 * ke_lost, "loss heat");
        assert!(a.heat.relative_residual.abs() < 1e-9, "{:#?}", a.heat);
        assert!(a.relative_residual.abs() < 1e-8, "{a:#?}");
    }
}

// ---------------------------------------------------------------------------------------
// Convection

/// A heat capacitor (C, from T0) cooling through a `Convection` (Gc from the input
/// `gc`) to a fixed temperature T_f.
fn convection_cooling(c: f64, t0: f64, t_f: f64, gc: serde_json::Value) -> Diagram {
    let mut d = Diagram::new("convection_cooling");
    d.add("body", "HeatCapacitor", json!({"C": c, "T0": t0}));
    d.add("conv", "Convection", json!({}));
    d.add("gc", "Ramp", gc);
    d.add("fluid", "FixedTemperature", json!({"T": t_f}));
    d.connect(&["body.port", "conv.solid"]);
    d.connect(&["conv.fluid", "fluid.port"]);
    d.connect(&["gc.y", "conv.Gc"]);
    d.log(&["body.T", "body.energy"]);
    d.settings.stop_time = 10.0;
    d.settings.rtol = 1e-12;
    d.settings.atol = 1e-12;
    d.settings.output_interval = Some(0.05);
    d
}

#[test]
fn convection_cools_a_heat_capacitor_exponentially_to_the_fluid_temperature() {
    // T(t) = T_f + (T0 − T_f)·exp(−Gc·t/C); Gc = 20 W/K from a constant input.
    let (c, t0, t_f, gc) = (400.0, 380.0, 298.15, 20.0);
    let d = convection_cooling(
        c,
        t0,
        t_f,
        json!({"start_time": 0.0, "duration": 0.0, "height": 0.0, "offset": gc}),
    );
    let (mut m, r) = run(&d);
    let temps = r.get("body.T").expect("logged");
    assert!(r.time.len() > 100);
    let mut worst: f64 = 0.0;
    for (&t, &temp) in r.time.iter().zip(temps) {
        // Relative to the decaying difference T − T_f (stricter than relative to T).
        let diff = (t0 - t_f) * (-gc * t / c).exp();
        let exact = t_f + diff;
        worst = worst.max(((temp - exact) / diff).abs());
    }
    println!("convection: largest error relative to T − T_f {worst:.2e}");
    assert!(worst <= 1e-9, "largest relative error {worst:e}");
    // Heat balance: what the capacitor lost left through the fixed temperature.
    let a = m.energy_audit();
    let stored: f64 = a.heat.stored.iter().map(|s| s.1).sum();
    let to_fixed: f64 = a.heat.to_fixed.iter().map(|s| s.1).sum();
    let lost = c * (t0 - r.last("body.T").expect("logged"));
    assert!(lost > 0.0);
    close(stored, -lost, 1e-9 * lost, "stored = C·(T_end − T0)");
    close(to_fixed, lost, 1e-9 * lost, "heat to the fluid");
    assert_eq!(a.heat.delivered, 0.0);
    assert!(a.heat.residual.abs() <= 1e-9 * lost, "{:#?}", a.heat);
}

#[test]
fn convection_reads_gc_from_its_input_each_instant_and_clips_negative_values() {
    // Gc = −5 (counts as 0: no transfer) until 2 s, then 15 W/K: the capacitor holds T0,
    // then T = T_f + (T0 − T_f)·exp(−Gc·(t − 2)/C).
    let (c, t0, t_f, gc) = (100.0, 350.0, 300.0, 15.0);
    let d = convection_cooling(
        c,
        t0,
        t_f,
        json!({"start_time": 2.0, "duration": 0.0, "height": gc + 5.0, "offset": -5.0}),
    );
    let (mut m, r) = run(&d);
    let temps = r.get("body.T").expect("logged");
    let mut worst: f64 = 0.0;
    for (&t, &temp) in r.time.iter().zip(temps) {
        let exact = if t <= 2.0 {
            t0
        } else {
            t_f + (t0 - t_f) * (-gc * (t - 2.0) / c).exp()
        };
        worst = worst.max(((temp - exact) / exact).abs());
    }
    assert!(worst <= 1e-9, "largest relative error {worst:e}");
    assert_eq!(r.value_at("body.T", 1.9), Some(t0));
    let a = m.energy_audit();
    assert!(a.heat.relative_residual.abs() <= 1e-9, "{:#?}", a.heat);
}

#[test]
fn elasto_backlash_initial_spring_energy_is_from_the_start_angle_not_the_final_contact_region() {
    // Released 0.2 rad beyond the b/2 = 0.1 stop, undamped: the spring returns its energy
    // ½·c·0.2² = 200 J as kinetic energy and the inertia is in the gap at 0.02 s
    // (quarter period π/2·√(J/c) = 15.7 ms, then 0.2 rad at 20 rad/s). The audit must see
    // 200 J of initial potential energy (the final region is the gap) and no loss.
    let (c, j, b, phi0): (f64, f64, f64, f64) = (1e4, 1.0, 0.2, 0.3);
    let mut d = Diagram::new("elasto_release");
    d.add("ground", "Fixed", json!({}));
    d.add("eb", "ElastoBacklash", json!({"c": c, "d": 0.0, "b": b}));
    d.add("J", "Inertia", json!({"J": j, "phi0": phi0}));
    d.connect(&["ground.flange", "eb.flange_a"]);
    d.connect(&["eb.flange_b", "J.flange"]);
    d.log(&["J.w", "eb.contact"]);
    d.settings.stop_time = 0.02;
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-12;
    let (mut m, r) = run(&d);
    assert_eq!(r.last("eb.contact"), Some(0.0), "in the gap at the end");
    let w_gap = -(phi0 - b / 2.0) * (c / j).sqrt();
    close(r.last("J.w").unwrap(), w_gap, 1e-6, "speed in the gap");
    let a = m.energy_audit();
    let pe0 = 0.5 * c * (phi0 - b / 2.0) * (phi0 - b / 2.0);
    close(a.potential_initial, pe0, 1e-9, "initial spring energy");
    assert_eq!(a.potential_final, 0.0);
    let loss = a
        .losses
        .iter()
        .find(|(n, _)| n == "eb")
        .map_or(0.0, |l| l.1);
    assert!(loss.abs() < 1e-6 * pe0, "undamped backlash lost {loss} J");
    assert_energy_closes(&mut m, 1e-9);
}
