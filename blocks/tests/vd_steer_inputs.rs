//! `SineWithDwell` and `SteerRamp` against their closed forms: the FMVSS 126 sine with
//! dwell at its peaks, dwell, zero crossings and end of steer; the ramp's slope and limit;
//! every kink a time event at its exact instant in a run; bad parameters as typed errors.

use std::f64::consts::PI;

use drivelink_blocks::registry;
use drivelink_core::compile::{resolve_params, Scope};
use drivelink_core::probe::Probe;
use drivelink_core::{Block, BlockBuild, Diagram, EventTag, ParamError};
use serde_json::{json, Value};

mod common;
use common::run_completed;

const DEG: f64 = PI / 180.0;

fn try_build(type_name: &str, params: Value) -> Result<Box<dyn Block>, ParamError> {
    let reg = registry();
    let t = reg.get(type_name).expect("registered");
    let Value::Object(raw) = params else {
        panic!("params must be an object")
    };
    let p = resolve_params("b", type_name, &t.params, &raw, &Scope::new()).expect("params");
    match &t.build {
        BlockBuild::Primitive(f) => f(&p),
        _ => panic!("not primitive"),
    }
}

/// Outputs `(steer, steering_wheel)` at `t`, modes updated at `t` first (as at an event).
fn at(b: &mut Box<dyn Block>, t: f64) -> (f64, f64) {
    let mut p = Probe::new(b.as_mut());
    p.time(t);
    p.update_modes();
    let y = p.outputs();
    (y[0], y[1])
}

#[test]
fn sine_with_dwell_has_its_closed_form_values_at_the_documented_instants() {
    let a = 90.0 * DEG;
    let mut b = try_build(
        "SineWithDwell",
        json!({"amplitude": "90 deg", "frequency": 0.7, "dwell": 0.5, "start": 1.0, "ratio": 16}),
    )
    .unwrap();
    let period = 1.0 / 0.7;
    let t0 = 1.0;
    let t_end = t0 + period + 0.5;
    // Before the start and at the start: 0.
    assert_eq!(at(&mut b, 0.5), (0.0, 0.0));
    assert_eq!(at(&mut b, t0).1, 0.0);
    // Positive (left) peak at a quarter period.
    let (steer, sw) = at(&mut b, t0 + period / 4.0);
    assert!((sw - a).abs() < 1e-12 * a, "first peak {sw}");
    assert!((steer - a / 16.0).abs() < 1e-12, "road wheel = δ_sw/ratio");
    // Zero crossing at half a period.
    assert!(at(&mut b, t0 + period / 2.0).1.abs() < 1e-12);
    // The dwell: exactly −A from 3/4 period for 0.5 s.
    let t1 = t0 + 0.75 * period;
    assert_eq!(at(&mut b, t1).1, -a);
    assert_eq!(at(&mut b, t1 + 0.25).1, -a);
    assert_eq!(at(&mut b, t1 + 0.4999).1, -a);
    // The last quarter period returns from −A to 0, continuously: at the end of the dwell
    // the sine piece starts at its negative peak, and the midpoint is −A·sin(45°).
    let t2 = t1 + 0.5;
    assert!((at(&mut b, t2).1 + a).abs() < 1e-12 * a);
    let mid = at(&mut b, t2 + period / 8.0).1;
    assert!(
        (mid + a * (PI / 4.0).sin()).abs() < 1e-12,
        "mid-return {mid}"
    );
    // End of steer and after: exactly 0.
    assert_eq!(at(&mut b, t_end), (0.0, 0.0));
    assert_eq!(at(&mut b, t_end + 3.0), (0.0, 0.0));
    // The variables: the phase code and the end of steer.
    let mut p = Probe::new(b.as_mut());
    p.time(t1 + 0.1);
    p.update_modes();
    assert_eq!(p.var(0), 2.0, "phase 2 = dwell");
    assert!((p.var(1) - t_end).abs() < 1e-12, "t_end {}", p.var(1));
}

#[test]
fn sine_with_dwell_kinks_are_time_events_at_their_exact_instants_in_a_run() {
    let mut d = Diagram::new("swd");
    d.add(
        "swd",
        "SineWithDwell",
        json!({"amplitude": "120 deg", "frequency": "0.7 Hz", "dwell": "500 ms", "start": 1.0}),
    );
    d.log(&["swd.steer", "swd.steering_wheel", "swd.phase"]);
    d.settings.stop_time = 4.0;
    let (_, r) = run_completed(&d);
    let period = 1.0 / 0.7;
    let want = [
        1.0,
        1.0 + 0.75 * period,
        1.0 + 0.75 * period + 0.5,
        1.0 + period + 0.5,
    ];
    let got: Vec<f64> = r
        .events_of("swd", EventTag::TimeEvent)
        .map(|e| e.time)
        .collect();
    assert_eq!(got.len(), 4, "events {:?}", r.events);
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-12, "kink at {g}, expected {w}");
    }
    // The steering wheel never exceeds the amplitude; the logged trace reaches both peaks.
    let sw = r.get("swd.steering_wheel").unwrap();
    let a = 120.0 * DEG;
    let max = sw.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let min = sw.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(max <= a * (1.0 + 1e-12) && min >= -a * (1.0 + 1e-12));
    assert_eq!(min, -a, "the dwell holds −A exactly");
    assert_eq!(r.last("swd.steering_wheel"), Some(0.0));
    assert_eq!(r.last("swd.phase"), Some(4.0));
}

#[test]
fn negative_amplitude_mirrors_the_sine_with_dwell() {
    let mut pos = try_build("SineWithDwell", json!({"amplitude": 1.0})).unwrap();
    let mut neg = try_build("SineWithDwell", json!({"amplitude": -1.0})).unwrap();
    for k in 0..60 {
        let t = 0.05 * f64::from(k);
        assert_eq!(at(&mut pos, t).1, -at(&mut neg, t).1, "t = {t}");
    }
}

#[test]
fn steer_ramp_rises_at_its_rate_from_the_start_and_holds_at_max() {
    // Default rate: 13.5 deg/s of steering wheel.
    let mut b = try_build(
        "SteerRamp",
        json!({"start": 2.0, "ratio": 15, "max": "270 deg"}),
    )
    .unwrap();
    let rate = 13.5 * DEG;
    assert_eq!(at(&mut b, 1.0), (0.0, 0.0));
    assert_eq!(at(&mut b, 2.0), (0.0, 0.0));
    for t in [2.5, 5.0, 10.0, 21.9] {
        let (steer, sw) = at(&mut b, t);
        assert!((sw - rate * (t - 2.0)).abs() < 1e-12, "t {t}: {sw}");
        assert!((steer - sw / 15.0).abs() < 1e-15);
    }
    // 270 deg reached after 270/13.5 = 20 s, then held.
    let t_max = 2.0 + 20.0;
    assert!((at(&mut b, t_max - 1e-9).1 - 270.0 * DEG).abs() < 1e-9);
    assert_eq!(at(&mut b, t_max + 1e-9).1, 270.0 * DEG);
    assert_eq!(at(&mut b, 100.0).1, 270.0 * DEG);
    // The slope of a run's logged trace is the rate; the corners are time events.
    let mut d = Diagram::new("ramp");
    d.add(
        "ramp",
        "SteerRamp",
        json!({"rate": "-20 deg/s", "start": 1.0, "max": "30 deg"}),
    );
    d.log(&["ramp.steering_wheel", "ramp.steer"]);
    d.settings.stop_time = 4.0;
    let (_, r) = run_completed(&d);
    let times: Vec<f64> = r
        .events_of("ramp", EventTag::TimeEvent)
        .map(|e| e.time)
        .collect();
    assert_eq!(times.len(), 2, "{:?}", r.events);
    assert_eq!(times[0], 1.0);
    assert!(
        (times[1] - 2.5).abs() < 1e-12,
        "limit reached at {}",
        times[1]
    );
    let sw = r.value_at("ramp.steering_wheel", 2.0).unwrap();
    assert!((sw + 20.0 * DEG).abs() < 1e-9, "δ_sw(2 s) = {sw}");
    assert_eq!(r.last("ramp.steering_wheel"), Some(-30.0 * DEG));
    assert!((r.last("ramp.steer").unwrap() + 30.0 * DEG / 16.0).abs() < 1e-15);
}

#[test]
fn bad_steering_input_parameters_are_typed_errors_naming_the_parameter() {
    let cases = [
        (
            "SineWithDwell",
            json!({"amplitude": 1.0, "frequency": 0.0}),
            "frequency",
        ),
        (
            "SineWithDwell",
            json!({"amplitude": 1.0, "dwell": -0.1}),
            "dwell",
        ),
        (
            "SineWithDwell",
            json!({"amplitude": 1.0, "ratio": 0.0}),
            "ratio",
        ),
        ("SteerRamp", json!({"rate": 0.0}), "rate"),
        ("SteerRamp", json!({"max": -1.0}), "max"),
        ("SteerRamp", json!({"ratio": -16.0}), "ratio"),
    ];
    for (ty, params, name) in cases {
        let e = try_build(ty, params.clone())
            .err()
            .unwrap_or_else(|| panic!("{ty} {params} built"));
        assert_eq!(e.param, name, "{ty} {params}: {e}");
    }
}
