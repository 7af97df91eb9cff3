//! `LongitudinalDriver` in a closed loop with a first-order "car" made of signal blocks,
//! `v' = a·accel − b·brake − c·v` (an Integrator of a Sum of Gains), with `b·brake_gain = a`
//! so that the car's acceleration is `a·u − c·v` for every unsaturated command `u`:
//!
//! - a speed step far above the car's reach saturates the accelerator; the integral is
//!   frozen meanwhile (anti-windup), the command leaves saturation when `kp·e = 1`, at the
//!   instant the car's exponential approach gives, and from there the loop is the linear
//!   second-order system `e'' + (a·kp + c)·e' + a·ki·e = 0` from known initial values:
//!   its closed-form solution has no overshoot for these gains, and the run follows it;
//! - zero steady error (integral action): the integral settles at `c·V/a`;
//! - a drive cycle: never both pedals at once, one brake application per deceleration.

use drivelink_blocks::registry;
use drivelink_core::compile::{resolve_params, Scope};
use drivelink_core::probe::Probe;
use drivelink_core::{Block, BlockBuild, Diagram, EventTag, ParamError};
use serde_json::{json, Value};

mod common;
use common::run_completed;

/// Full-throttle acceleration per unit pedal, m/s².
const A: f64 = 3.0;
/// Drag coefficient, 1/s.
const C: f64 = 0.05;
const KP: f64 = 0.5;
const KI: f64 = 0.1;

fn try_build(params: Value) -> Result<Box<dyn Block>, ParamError> {
    let reg = registry();
    let t = reg.get("LongitudinalDriver").expect("registered");
    let Value::Object(raw) = params else {
        panic!("params must be an object")
    };
    let p = resolve_params("drv", t.name, &t.params, &raw, &Scope::new()).expect("params");
    match &t.build {
        BlockBuild::Primitive(f) => f(&p),
        _ => panic!("not primitive"),
    }
}

/// The closed loop: `ref` (given block type and parameters) -> driver -> car.
fn closed_loop(ref_type: &str, ref_params: Value, kff: f64, stop: f64) -> Diagram {
    let mut d = Diagram::new("cruise");
    d.add("ref", ref_type, ref_params);
    d.add(
        "drv",
        "LongitudinalDriver",
        json!({"kp": KP, "ki": KI, "kff": kff, "tau_ref": 0.2, "brake_gain": 1.0}),
    );
    d.add("ga", "Gain", json!({"k": A}));
    d.add("gb", "Gain", json!({"k": A}));
    d.add("drag", "Gain", json!({"k": C}));
    d.add("sum", "Sum", json!({"signs": "+--"}));
    d.add("car", "Integrator", json!({}));
    d.connect(&["ref.y", "drv.v_ref"]);
    d.connect(&["car.y", "drv.v", "drag.u"]);
    d.connect(&["drv.accel", "ga.u"]);
    d.connect(&["drv.brake", "gb.u"]);
    d.connect(&["ga.y", "sum.u1"]);
    d.connect(&["gb.y", "sum.u2"]);
    d.connect(&["drag.y", "sum.u3"]);
    d.connect(&["sum.y", "car.u"]);
    d.log(&[
        "car.y",
        "drv.accel",
        "drv.brake",
        "drv.error",
        "drv.integral",
        "drv.mode",
    ]);
    d.settings.stop_time = stop;
    d.settings.rtol = 1e-9;
    d.settings.atol = 1e-10;
    d
}

#[test]
fn speed_step_saturates_without_windup_and_settles_with_zero_error() {
    let v_set = 20.0;
    let d = closed_loop("Constant", json!({"value": v_set}), 0.0, 80.0);
    let (_, r) = run_completed(&d);
    // Full throttle from the start: v = (A/C)·(1 − e^{−C·t}) until kp·e = 1, i.e. until
    // v = V − 1/kp, with the integral frozen at 0.
    let v_desat = v_set - 1.0 / KP;
    let t_desat = -(1.0 - v_desat * C / A).ln() / C;
    let leaves: Vec<_> = r
        .events_of("drv", EventTag::ZeroCrossing)
        .filter(|e| e.detail.starts_with("accel saturated -> accelerating"))
        .collect();
    assert_eq!(leaves.len(), 1, "events {:?}", r.events);
    assert!(
        (leaves[0].time - t_desat).abs() < 1e-6,
        "leaves saturation at {} s, expected {t_desat} s",
        leaves[0].time
    );
    let integral = r.get("drv.integral").unwrap();
    for (t, i) in r.time.iter().zip(integral) {
        if *t < t_desat - 1e-6 {
            assert_eq!(*i, 0.0, "integral wound up to {i} at {t} s while saturated");
        }
    }
    // From there: e' = −(a·kp + c)·e − a·J, J' = ki·e with J = i − c·V/a, so
    // e(τ) = P·e^{s1·τ} + Q·e^{s2·τ} from e(0) = 1/kp, e'(0) = −(a·kp + c)/kp + c·V.
    let damping = A * KP + C;
    let stiffness = A * KI;
    let disc = (damping * damping - 4.0 * stiffness).sqrt();
    let (s1, s2) = ((-damping + disc) / 2.0, (-damping - disc) / 2.0);
    let e0 = 1.0 / KP;
    let de0 = -damping * e0 + C * v_set;
    let p = (de0 - s2 * e0) / (s1 - s2);
    let q = e0 - p;
    // Both modes positive and decaying: the error never changes sign, the speed never
    // exceeds the set speed (the overshoot bound is 0).
    assert!(p > 0.0 && q > 0.0 && s1 < 0.0, "P {p}, Q {q}, s1 {s1}");
    let v = r.get("car.y").unwrap();
    let mode = r.get("drv.mode").unwrap();
    for ((t, v), m) in r.time.iter().zip(v).zip(mode) {
        assert!(*v <= v_set * (1.0 + 1e-9), "overshoot: v = {v} at {t} s");
        if *t > t_desat + 1e-6 {
            let tau = t - t_desat;
            let e = p * (s1 * tau).exp() + q * (s2 * tau).exp();
            assert!(
                ((v_set - v) - e).abs() < 1e-5,
                "t {t}: error {} vs closed form {e}",
                v_set - v
            );
            assert_eq!(*m, 1.0, "left the linear region at {t} s");
        }
    }
    // Zero steady error, and the integral holds the drag: i = c·V/a.
    let e_end = r.last("drv.error").unwrap();
    assert!(e_end.abs() < 1e-5, "steady error {e_end}");
    let i_end = r.last("drv.integral").unwrap();
    assert!((i_end - C * v_set / A).abs() < 1e-5, "integral {i_end}");
}

#[test]
fn drive_cycle_never_presses_both_pedals_and_brakes_once_per_deceleration() {
    // Accelerate to 20 m/s at 2 m/s², hold, decelerate to 5 m/s at −2 m/s², hold.
    let d = closed_loop(
        "SignalBuilder",
        json!({"points": [[0, 0], [2, 0], [12, 20], [30, 20], [37.5, 5], [100, 5]]}),
        1.0 / A,
        100.0,
    );
    let (_, r) = run_completed(&d);
    let accel = r.get("drv.accel").unwrap();
    let brake = r.get("drv.brake").unwrap();
    let mut onsets = 0;
    for k in 0..accel.len() {
        assert!(
            !(accel[k] > 0.0 && brake[k] > 0.0),
            "both pedals at {} s: {} / {}",
            r.time[k],
            accel[k],
            brake[k]
        );
        assert!((0.0..=1.0).contains(&brake[k]) && accel[k] <= 1.0);
        if k > 0 && brake[k] > 0.0 && brake[k - 1] == 0.0 {
            onsets += 1;
        }
    }
    // Holding a speed against drag needs a positive command, and the feed-forward makes
    // the deceleration phase the only one whose command is negative (−2 m/s² needs
    // u = (−2 + c·v)/a < 0); the loop is overdamped (real roots of s² + (a·kp + c)·s +
    // a·ki), so the error does not oscillate around the hand-over: exactly one brake
    // application, entered and left once each as located mode changes.
    assert_eq!(onsets, 1, "brake applications");
    let into_braking = r
        .events_of("drv", EventTag::ZeroCrossing)
        .filter(|e| e.detail.starts_with("accelerating -> braking"))
        .count();
    assert_eq!(into_braking, 1, "{:?}", r.events);
    let first_brake = r.time[brake.iter().position(|&b| b > 0.0).unwrap()];
    assert!(
        (30.0..37.5).contains(&first_brake),
        "brakes at {first_brake} s"
    );
    // Zero steady error at the end of the final hold: 62.5 s after the deceleration the
    // slowest mode (s1 = −0.227 1/s) has decayed by e^{−14} ≈ 8e-7 from an error of at most
    // the reference's 15 m/s change.
    let e_end = r.last("drv.error").unwrap();
    assert!(e_end.abs() < 15.0 * 1e-6, "final error {e_end}");
}

#[test]
fn pedals_split_one_command_continuously() {
    let mut b = try_build(json!({"kp": 0.5, "ki": 0.0, "kff": 0.0, "brake_gain": 0.5})).unwrap();
    let mut p = Probe::new(b.as_mut());
    // e = v_ref − v; u = kp·e.
    for (e, accel, brake) in [
        (1.0, 0.5, 0.0),
        (4.0, 1.0, 0.0),
        (0.0, 0.0, 0.0),
        (-1.0, 0.0, 0.25),
        (-4.0, 0.0, 1.0),
        (-10.0, 0.0, 1.0),
    ] {
        p.inputs(&[10.0 + e, 10.0]).states(&[0.0, 10.0 + e]);
        p.update_modes();
        let y = p.outputs();
        assert_eq!((y[0], y[1]), (accel, brake), "e = {e}");
        // The guards of the chosen mode are valid.
        assert!(p.guards().iter().all(|&g| g >= 0.0), "e = {e}");
    }
}

#[test]
fn bad_driver_gains_are_typed_errors_naming_the_parameter() {
    for (params, name) in [
        (json!({"kp": -1.0}), "kp"),
        (json!({"ki": -0.1}), "ki"),
        (json!({"kff": -0.1}), "kff"),
        (json!({"tau_ref": 0.0}), "tau_ref"),
        (json!({"brake_gain": 0.0}), "brake_gain"),
    ] {
        let e = try_build(params.clone())
            .err()
            .unwrap_or_else(|| panic!("{params} built"));
        assert_eq!(e.param, name, "{params}: {e}");
    }
    // SI gains with units.
    assert!(try_build(json!({"kp": "0.5 s/m", "ki": "0.1 m^-1", "kff": "0.3 s^2/m"})).is_ok());
}

/// A frictionless car `v' = A·(accel − brake)` following a 1 m/s² ramp from rest (10 s),
/// the driver's feed-forward gain `1/A`, the ramp's slope given on `a_ref` or not.
fn ramp_follow(with_slope: bool) -> f64 {
    let mut d = Diagram::new("ramp");
    d.add(
        "ref",
        "Ramp",
        json!({"start_time": 0.0, "duration": 10.0, "height": 10.0}),
    );
    d.add(
        "drv",
        "LongitudinalDriver",
        json!({"kp": KP, "ki": KI, "kff": 1.0 / A, "tau_ref": 0.2}),
    );
    d.add("ga", "Gain", json!({"k": A}));
    d.add("gb", "Gain", json!({"k": A}));
    d.add("sum", "Sum", json!({"signs": "+-"}));
    d.add("car", "Integrator", json!({}));
    d.connect(&["ref.y", "drv.v_ref"]);
    d.connect(&["car.y", "drv.v"]);
    d.connect(&["drv.accel", "ga.u"]);
    d.connect(&["drv.brake", "gb.u"]);
    d.connect(&["ga.y", "sum.u1"]);
    d.connect(&["gb.y", "sum.u2"]);
    d.connect(&["sum.y", "car.u"]);
    if with_slope {
        d.add("slope", "Constant", json!({"value": 1.0}));
        d.connect(&["slope.y", "drv.a_ref"]);
    }
    d.log(&["drv.error"]);
    d.settings.stop_time = 8.0;
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-12;
    let (_, r) = run_completed(&d);
    r.get("drv.error")
        .unwrap()
        .iter()
        .fold(0.0f64, |m, e| m.max(e.abs()))
}

#[test]
fn exact_reference_slope_on_a_ref_removes_the_tracking_error() {
    // With a_ref = the ramp's slope, u = a/A + kp·e + i keeps e ≡ 0: the error equation
    // e' = −A·kp·e − A·i, i' = ki·e starts at rest. Differentiating the reference through
    // the filter lags it by about tau_ref and leaves an error on the way.
    let exact = ramp_follow(true);
    let filtered = ramp_follow(false);
    assert!(exact < 1e-9, "error with the slope given: {exact} m/s");
    assert!(filtered > 1e-2, "error through the filter: {filtered} m/s");
}
