//! `Esc` against its definition: the single-track yaw-rate reference and its μ·g/u limit,
//! which wheel it brakes in oversteer and understeer (left and right turns), the exact
//! correction torque and its cap, the pass-through cases (dead band, `enabled` 0, below
//! `v_min`), continuity at the threshold, the axle hysteresis, typed parameter errors, and
//! a compiled run whose switches are located, logged events.

use drivelink_blocks::registry;
use drivelink_core::compile::{resolve_params, Scope};
use drivelink_core::probe::Probe;
use drivelink_core::{compile, Block, BlockBuild, Diagram, EventTag, ParamError, RunStatus};
use serde_json::{json, Value};

const G: f64 = 9.80665;
const L: f64 = 2.7;
const K: f64 = 0.0025;
const GAIN: f64 = 5000.0;
const THR: f64 = 0.05;

fn try_build(params: Value) -> Result<Box<dyn Block>, ParamError> {
    let reg = registry();
    let t = reg.get("Esc").expect("Esc registered");
    let Value::Object(raw) = params else {
        panic!("params must be an object")
    };
    let p = resolve_params("esc", "Esc", &t.params, &raw, &Scope::new()).expect("params");
    match &t.build {
        BlockBuild::Primitive(f) => f(&p),
        _ => panic!("Esc is primitive"),
    }
}

/// An ESC with L = 2.7 m, K = 0.0025 rad/(m/s²), μ = 1, threshold 0.05 rad/s, gain
/// 5000 N·m·s/rad and `extra` parameters on top.
fn esc(extra: Value) -> Box<dyn Block> {
    let mut p = json!({"wheelbase": L, "understeer_gradient": K, "mu": 1.0,
                       "threshold": THR, "gain": GAIN, "max_torque": 2000.0, "v_min": 3.0});
    if let (Value::Object(m), Value::Object(e)) = (&mut p, extra) {
        m.extend(e);
    }
    try_build(p).expect("Esc builds")
}

/// Inputs: steer, speed, r, ay, then the four demands.
fn inputs(steer: f64, u: f64, r: f64, d: [f64; 4]) -> Vec<f64> {
    vec![steer, u, r, 0.0, d[0], d[1], d[2], d[3]]
}

/// Outputs after the start event (modes chosen for these inputs).
fn settle(b: &mut Box<dyn Block>, u: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let mut p = Probe::new(b.as_mut());
    p.reset(0.0).inputs(u);
    p.update_modes();
    let vars = (0..8).map(|i| p.var(i)).collect();
    (p.outputs(), vars)
}

const R_REF: usize = 0;
const ERROR: usize = 1;
const ACTIVE: usize = 2;

/// The single-track reference, written out (no limit).
fn single_track(steer: f64, u: f64) -> f64 {
    u * steer / (L + K * u * u)
}

#[test]
fn yaw_rate_reference_is_the_single_track_model_saturated_at_mu_g_over_u() {
    let mut b = esc(json!({}));
    // Below the limit: 10 m/s, 0.02 rad -> 0.2/2.95; 20 m/s, 0.05 rad -> 1/3.7.
    for (steer, u, expect) in [
        (0.02, 10.0, 0.2 / 2.95),
        (0.05, 20.0, 1.0 / 3.7),
        (-0.05, 20.0, -1.0 / 3.7),
        (0.01, 5.0, 0.05 / 2.7625),
    ] {
        assert!((single_track(steer, u) - expect).abs() < 1e-15);
        let (_, v) = settle(&mut b, &inputs(steer, u, 0.0, [0.0; 4]));
        assert!(
            (v[R_REF] - expect).abs() < 1e-14,
            "r_ref at δ {steer}, u {u}: {} vs {expect}",
            v[R_REF]
        );
    }
    // Above the limit: 30 m/s, 0.1 rad gives 3/4.95 = 0.606 rad/s, more than
    // μ·g/u = 0.327 rad/s; the reference is the limit, with the steer's sign.
    for (steer, sign) in [(0.1, 1.0), (-0.1, -1.0)] {
        let (_, v) = settle(&mut b, &inputs(steer, 30.0, 0.0, [0.0; 4]));
        assert!(single_track(steer, 30.0).abs() > G / 30.0);
        assert!((v[R_REF] - sign * G / 30.0).abs() < 1e-15, "{}", v[R_REF]);
    }
    // A lower μ lowers the limit: μ = 0.3 at 20 m/s caps 0.27 rad/s at 0.147 rad/s.
    let mut ice = esc(json!({"mu": 0.3}));
    let (_, v) = settle(&mut ice, &inputs(0.05, 20.0, 0.0, [0.0; 4]));
    assert!((v[R_REF] - 0.3 * G / 20.0).abs() < 1e-15);
    // K = 0 is a neutral car: r_ref = u·δ/L.
    let mut neutral = esc(json!({"understeer_gradient": 0.0}));
    let (_, v) = settle(&mut neutral, &inputs(0.03, 15.0, 0.0, [0.0; 4]));
    assert!((v[R_REF] - 15.0 * 0.03 / L).abs() < 1e-15);
}

/// A speed that is not a number (a tire law gone non-finite upstream) used to panic in the
/// reference's `clamp` (NaN bounds); the reference is NaN instead, and the run reports the
/// non-finite value with the block that produced it.
#[test]
fn a_speed_that_is_not_a_number_gives_a_nan_reference_instead_of_a_panic() {
    let mut b = esc(json!({}));
    for u in [f64::NAN, -f64::NAN] {
        let (_, v) = settle(&mut b, &inputs(0.05, u, 0.0, [0.0; 4]));
        assert!(v[R_REF].is_nan(), "r_ref at u = NaN: {}", v[R_REF]);
    }
}

#[test]
fn inside_the_dead_band_the_outputs_are_the_demands_exactly() {
    let mut b = esc(json!({}));
    let d = [110.0, 220.0, 330.0, 440.0];
    let rr = single_track(0.05, 20.0);
    for r in [rr, rr + 0.049, rr - 0.049] {
        let (y, v) = settle(&mut b, &inputs(0.05, 20.0, r, d));
        assert_eq!(y, d.to_vec(), "r {r}");
        assert_eq!(v[ACTIVE], 0.0);
    }
}

/// The braked wheel (index among fl, fr, rl, rr) and its correction for these inputs.
fn braked(b: &mut Box<dyn Block>, steer: f64, u: f64, r: f64) -> (usize, f64, f64) {
    let (y, v) = settle(b, &inputs(steer, u, r, [0.0; 4]));
    let on: Vec<usize> = (0..4).filter(|&i| y[i] != 0.0).collect();
    assert_eq!(on.len(), 1, "exactly one wheel braked: {y:?}");
    assert_eq!(v[ACTIVE], 1.0);
    (on[0], y[on[0]], v[ERROR])
}

#[test]
fn oversteer_brakes_the_outer_front_wheel_and_understeer_the_inner_rear() {
    let (fl, fr, rl, rr) = (0, 1, 2, 3);
    let mut b = esc(json!({}));
    let r_ref = single_track(0.05, 20.0); // 0.270 rad/s
    let cases = [
        // Left turn, yawing more than asked: oversteer, outer front = fr.
        (0.05, 0.5, fr, "left oversteer"),
        // Left turn, yawing less: understeer, inner rear = rl.
        (0.05, 0.1, rl, "left understeer"),
        // Not yawing at all while steering left: understeer.
        (0.05, 0.0, rl, "left, no yaw"),
        // Right turn mirrors.
        (-0.05, -0.5, fl, "right oversteer"),
        (-0.05, -0.1, rr, "right understeer"),
        // Yawing left against a right steer (spinning out): oversteer, outer front of
        // the yaw = fr; mirrored, fl.
        (-0.05, 0.1, fr, "yaw against the steer, left"),
        (0.05, -0.1, fl, "yaw against the steer, right"),
    ];
    for (steer, r, wheel, what) in cases {
        let (w, torque, e) = braked(&mut b, steer, 20.0, r);
        assert_eq!(w, wheel, "{what}");
        // e = r − r_ref with r_ref from the steer's sign.
        let expect_e = r - steer.signum() * r_ref;
        assert!((e - expect_e).abs() < 1e-15, "{what}: error {e}");
        let expect = GAIN * (expect_e.abs() - THR);
        assert!(
            (torque - expect).abs() < 1e-9,
            "{what}: {torque} vs {expect}"
        );
    }
}

#[test]
fn correction_is_gain_times_excess_error_added_to_the_demand_and_capped() {
    let mut b = esc(json!({}));
    let r_ref = single_track(0.05, 20.0);
    let d = [100.0, 150.0, 200.0, 250.0];
    // Oversteer by 0.15 rad/s: fr gets 5000·(0.15 − 0.05) = 500 N·m more.
    let (y, v) = settle(&mut b, &inputs(0.05, 20.0, r_ref + 0.15, d));
    assert!((y[1] - (150.0 + 500.0)).abs() < 1e-9, "{y:?}");
    assert_eq!([y[0], y[2], y[3]], [100.0, 200.0, 250.0]);
    assert!((v[3] - 500.0).abs() < 1e-9, "correction variable {}", v[3]);
    // Oversteer by 0.6 rad/s asks 2750 N·m: the total is capped at max_torque.
    let (y, _) = settle(&mut b, &inputs(0.05, 20.0, r_ref + 0.6, d));
    assert_eq!(y[1], 2000.0);
    // A demand already above max_torque is never reduced.
    let big = [100.0, 2500.0, 200.0, 250.0];
    let (y, _) = settle(&mut b, &inputs(0.05, 20.0, r_ref + 0.6, big));
    assert_eq!(y, big.to_vec());
}

#[test]
fn disabled_esc_passes_the_demands_through() {
    let mut b = esc(json!({"enabled": 0}));
    assert_eq!(b.declare().n_guards(), 0);
    let d = [1.0, 2.0, 3.0, 4.0];
    let (y, v) = settle(&mut b, &inputs(0.05, 20.0, 1.5, d));
    assert_eq!(y, d.to_vec());
    assert_eq!(v[ACTIVE], 0.0);
    assert_eq!(v[6], 0.0, "not armed");
}

#[test]
fn below_v_min_esc_is_passive_and_arms_above_it() {
    let mut b = esc(json!({}));
    let d = [5.0, 6.0, 7.0, 8.0];
    let mut p = Probe::new(b.as_mut());
    p.reset(0.0).inputs(&inputs(0.3, 2.5, 2.0, d));
    let (changed, log) = p.update_modes();
    assert!(!changed && log.is_empty());
    assert_eq!(p.outputs(), d.to_vec());
    assert_eq!(p.var(6), 0.0);
    // The speed guard is v_min − u while passive: 0.5 m/s to go.
    assert!((p.guards()[0] - 0.5).abs() < 1e-15);
    // Crossing v_min arms it; the same error is now corrected.
    p.inputs(&inputs(0.3, 3.01, 2.0, d));
    assert!(p.guards()[0] < 0.0);
    let (changed, log) = p.update_modes();
    assert!(changed);
    assert_eq!(log.len(), 2, "armed, then braking: {log:?}");
    assert!(log.iter().all(|(t, _)| *t == EventTag::ZeroCrossing));
    assert!(p.outputs()[1] > 6.0, "fr braked: {:?}", p.outputs());
}

#[test]
fn outputs_are_continuous_at_the_threshold() {
    let mut b = esc(json!({}));
    let r_ref = single_track(0.05, 20.0);
    let d = [10.0, 20.0, 30.0, 40.0];
    let mut p = Probe::new(b.as_mut());
    p.reset(0.0).inputs(&inputs(0.05, 20.0, r_ref, d));
    p.update_modes();
    // Walk the error across the threshold in small steps, with the located event (the
    // guard changing sign) handled as the model does.
    let mut prev = p.outputs();
    let step = 1e-6;
    let mut switched = 0;
    for k in 0..200 {
        let e = THR - 100.0 * step + k as f64 * step;
        p.inputs(&inputs(0.05, 20.0, r_ref + e, d));
        if p.guards().iter().any(|&g| g < 0.0) {
            let (changed, _) = p.update_modes();
            switched += usize::from(changed);
        }
        let y = p.outputs();
        for i in 0..4 {
            assert!(
                (y[i] - prev[i]).abs() <= GAIN * step * (1.0 + 1e-6),
                "jump of {} at e {e}",
                y[i] - prev[i]
            );
        }
        prev = y;
    }
    assert_eq!(switched, 1, "one activation");
    assert!((prev[1] - (20.0 + GAIN * 99.0 * step)).abs() < 1e-6);
}

#[test]
fn axle_choice_keeps_its_wheel_inside_the_hysteresis_band() {
    let mut b = esc(json!({"axle_hysteresis": 0.02}));
    let steer = -0.05; // steering right: r_ref = −0.27 rad/s
    let mut p = Probe::new(b.as_mut());
    // Yawing left against the steer: oversteer, fr.
    p.reset(0.0).inputs(&inputs(steer, 20.0, 0.2, [0.0; 4]));
    let (_, log) = p.update_modes();
    assert!(
        log.iter().any(|(_, s)| s == "oversteer: braking fr"),
        "{log:?}"
    );
    // The yaw rate passes through zero: within the band the front wheel stays braked
    // (e > 0 throughout, so still a right wheel).
    for r in [0.05, 0.0, -0.019] {
        p.inputs(&inputs(steer, 20.0, r, [0.0; 4]));
        assert!(
            p.guards().iter().all(|&g| g >= 0.0),
            "r {r}: {:?}",
            p.guards()
        );
        let y = p.outputs();
        assert!(y[1] > 0.0 && y[3] == 0.0, "r {r}: {y:?}");
    }
    // Beyond the band: a located switch to the inner rear wheel of the right turn.
    p.inputs(&inputs(steer, 20.0, -0.021, [0.0; 4]));
    assert!(p.guards()[2] < 0.0);
    let (changed, log) = p.update_modes();
    assert!(changed);
    assert_eq!(
        log,
        vec![(EventTag::ZeroCrossing, "understeer: braking rr".to_string())]
    );
    let y = p.outputs();
    assert!(y[3] > 0.0 && y[1] == 0.0, "{y:?}");
}

#[test]
fn bad_parameters_are_typed_errors_naming_the_parameter() {
    let base = json!({"wheelbase": L});
    for (name, value) in [
        ("gain", json!(-1.0)),
        ("threshold", json!(-0.01)),
        ("max_torque", json!(-5.0)),
        ("wheelbase", json!(0.0)),
        ("wheelbase", json!(-2.7)),
        ("understeer_gradient", json!(-0.001)),
        ("mu", json!(0.0)),
        ("v_min", json!(0.0)),
        ("axle_hysteresis", json!(-0.1)),
        ("enabled", json!(2.0)),
    ] {
        let mut p = base.clone();
        p[name] = value;
        match try_build(p) {
            Err(e) => {
                assert_eq!(e.param, name, "{e:?}");
                assert_eq!(e.block, "esc");
            }
            Ok(_) => panic!("{name} accepted"),
        }
    }
}

/// A compiled run: straight ahead (r_ref = 0) at 20 m/s with a yaw rate of
/// 0.3·sin(πt). ESC brakes fr while r > 0.05 and fl while r < −0.05, with exactly
/// gain·(|r| − 0.05); every switch is a located event in the log.
#[test]
fn a_run_brakes_by_the_located_modes_and_logs_each_switch() {
    let mut d = Diagram::new("esc_run");
    d.add("steer", "Constant", json!({"value": 0.0}));
    d.add("speed", "Constant", json!({"value": 20.0}));
    d.add("yaw", "Sine", json!({"amplitude": 0.3, "frequency": 0.5}));
    d.add(
        "esc",
        "Esc",
        json!({"wheelbase": L, "threshold": THR, "gain": GAIN}),
    );
    d.connect(&["steer.y", "esc.steer"]);
    d.connect(&["speed.y", "esc.speed"]);
    d.connect(&["yaw.y", "esc.r"]);
    // Stand-ins for the four wheels' brake inputs (an Esc's outputs must drive them).
    for w in ["fl", "fr", "rl", "rr"] {
        d.add(&format!("brake_{w}"), "Gain", json!({"k": 1.0}));
        d.connect(&[&format!("esc.{w}"), &format!("brake_{w}.u")]);
    }
    d.log(&["esc.fl", "esc.fr", "esc.rl", "esc.rr", "esc.active"]);
    d.settings.stop_time = 2.0;
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-12;
    let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("{e}"));
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    let ev: Vec<(f64, String)> = r
        .events
        .iter()
        .filter(|e| e.block == "esc")
        .map(|e| (e.time, e.detail.clone()))
        .collect();
    let details: Vec<&str> = ev.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(
        details,
        vec![
            "armed at u = 20 m/s",
            "oversteer: braking fr",
            "released",
            "oversteer: braking fl",
            "released"
        ]
    );
    // 0.3·sin(πt) = ±0.05 at t = asin(1/6)/π, 1 − that, 1 + that, 2 − that.
    let t0 = (1.0f64 / 6.0).asin() / std::f64::consts::PI;
    for ((t, _), expect) in ev[1..].iter().zip([t0, 1.0 - t0, 1.0 + t0, 2.0 - t0]) {
        assert!((t - expect).abs() < 1e-6, "event at {t}, expected {expect}");
    }
    let time = r.time.clone();
    let (fl, fr) = (r.get("esc.fl").unwrap(), r.get("esc.fr").unwrap());
    let (rl, rr) = (r.get("esc.rl").unwrap(), r.get("esc.rr").unwrap());
    for (i, &t) in time.iter().enumerate() {
        let yaw = 0.3 * (std::f64::consts::PI * t).sin();
        let want = GAIN * (yaw.abs() - THR).max(0.0);
        let (right, left) = if yaw > 0.0 { (want, 0.0) } else { (0.0, want) };
        assert!(
            (fr[i] - right).abs() < 1e-4,
            "fr at {t}: {} vs {right}",
            fr[i]
        );
        assert!(
            (fl[i] - left).abs() < 1e-4,
            "fl at {t}: {} vs {left}",
            fl[i]
        );
        assert_eq!((rl[i], rr[i]), (0.0, 0.0));
    }
}
