//! Inputs of exported FMUs: a top-level `Inport` is an input variable. A torque input,
//! saturated to ±2 N·m, drives an inertia of 2 kg·m² (`w' = sat(u) / J`): set through
//! `fmi3SetFloat64` it holds over the Co-Simulation steps (the speed follows the exact
//! piecewise-linear law, and a value beyond the limit saturates from the step it is set
//! at), and in Model Exchange the next derivative and event indicator evaluation sees
//! it (an indicator goes negative and the event switches the saturation). The native run
//! outputs the block's `value`.

use std::ffi::c_void;
use std::path::Path;

use drivelink_fmi::ffi::*;
use drivelink_fmi::vars::Causality;

mod common;
use common::{ok, settle, vr, Kind};

const NET: &str = r#"{
  "drivelink": 1, "name": "inport_inertia",
  "solver": { "method": "dopri5", "stop_time": 3, "rtol": 1e-10, "atol": 1e-12 },
  "blocks": [
    { "name": "torque", "type": "Inport", "params": { "value": 0, "unit": "N*m" } },
    { "name": "sat", "type": "Saturation", "params": { "lower": -2, "upper": 2 } },
    { "name": "src", "type": "TorqueSource" },
    { "name": "J", "type": "Inertia", "params": { "J": 2 } }
  ],
  "connections": [["torque.y", "sat.u"], ["sat.y", "src.tau"], ["src.flange", "J.flange"]],
  "log": ["sat.y", "J.w"]
}"#;

/// The FMU's variables of `NET` (as the exporter lists them with Model Exchange).
fn variables() -> Vec<drivelink_fmi::Variable> {
    common::variables_of(NET, "inport_inertia")
}

fn instantiate(tag: &str, me: bool) -> *mut c_void {
    let (dir, token) = common::resources("fmi-inputs-test", tag, NET.as_bytes());
    let kind = if me {
        Kind::ModelExchange
    } else {
        Kind::CoSimulation
    };
    common::instantiate(kind, "inputs", &dir, &token)
}

fn set(inst: *mut c_void, vr: u32, v: f64) {
    ok(unsafe { fmi3SetFloat64(inst, &vr, 1, &v, 1) });
}

/// Equal to rounding (the network solve divides by the inertia).
fn near(got: f64, want: f64) {
    assert!((got - want).abs() < 1e-14, "{got}, exact {want}");
}

fn get(inst: *mut c_void, vr: u32) -> f64 {
    let mut v = f64::NAN;
    ok(unsafe { fmi3GetFloat64(inst, &vr, 1, &mut v, 1) });
    v
}

#[test]
fn inport_is_an_input_variable_with_its_start_and_unit() {
    let vars = variables();
    let u = &vars[vr(&vars, "torque") as usize];
    assert_eq!(u.causality, Causality::Input);
    assert_eq!((u.start, u.unit.as_deref()), (Some(0.0), Some("N*m")));
    // Right after time (no parameters), before the outputs.
    assert_eq!(u.value_reference, 1);
    assert_eq!(vars[2].causality, Causality::Output);
}

#[test]
fn cosimulation_input_holds_over_the_steps() {
    let vars = variables();
    let (u, y, w) = (vr(&vars, "torque"), vr(&vars, "sat.y"), vr(&vars, "J.w"));
    let inst = instantiate("cs", false);
    ok(unsafe { fmi3EnterInitializationMode(inst, false, 0.0, 0.0, false, 0.0) });
    ok(unsafe { fmi3ExitInitializationMode(inst) });
    let step = |t: f64, h: f64| {
        let (mut ev, mut term, mut early, mut last) = (false, false, false, f64::NAN);
        ok(unsafe { fmi3DoStep(inst, t, h, true, &mut ev, &mut term, &mut early, &mut last) });
        assert!(!term);
    };
    // (input set at the start of the steps, steps, the held saturated torque, w at the end)
    // w' = sat(u) / 2: 0 until 1 s; 0.5 rad/s² to 1.5 s; 1 (u = 5 saturated) to 2 s;
    // -0.5 to 3 s.
    let plan = [
        (0.0, 0.0, 4, 0.0, 0.0),
        (1.0, 1.0, 2, 1.0, 0.25),
        (1.5, 5.0, 1, 2.0, 0.75),
        (2.0, -1.0, 4, -1.0, 0.25),
    ];
    for (t0, value, n, torque, w_end) in plan {
        set(inst, u, value);
        assert_eq!(get(inst, u), value);
        let h = if t0 < 2.0 && t0 > 0.0 {
            0.5 / n as f64
        } else {
            1.0 / n as f64
        };
        for k in 0..n {
            step(t0 + k as f64 * h, h);
            assert_eq!(get(inst, y), torque, "sat.y after the step from {t0}");
        }
        let got = get(inst, w);
        assert!(
            (got - w_end).abs() < 1e-9,
            "J.w at {}: {got}, exact {w_end}",
            t0 + n as f64 * h
        );
    }
    unsafe { fmi3FreeInstance(inst) };
}

#[test]
fn model_exchange_derivatives_and_indicators_see_the_input() {
    let vars = variables();
    let u = vr(&vars, "torque");
    let first_state = vars
        .iter()
        .position(|v| v.causality == Causality::State)
        .unwrap();
    let speed = vr(&vars, "speed of the shaft at 'src.flange'") as usize - first_state;
    let nx = vars
        .iter()
        .filter(|v| v.causality == Causality::State)
        .count();
    let nz = vars
        .iter()
        .filter(|v| v.causality == Causality::Indicator)
        .count();
    let inst = instantiate("me", true);
    set(inst, u, 1.0);
    ok(unsafe { fmi3EnterInitializationMode(inst, false, 0.0, 0.0, false, 0.0) });
    ok(unsafe { fmi3ExitInitializationMode(inst) });
    settle(inst);
    ok(unsafe { fmi3EnterContinuousTimeMode(inst) });
    let der = || {
        let mut dx = vec![f64::NAN; nx];
        ok(unsafe { fmi3GetContinuousStateDerivatives(inst, dx.as_mut_ptr(), nx) });
        dx[speed]
    };
    let indicators = || {
        let mut z = vec![f64::NAN; nz];
        ok(unsafe { fmi3GetEventIndicators(inst, z.as_mut_ptr(), nz) });
        z
    };
    // The start value set before initialization: 1 N·m on 2 kg·m².
    near(der(), 0.5);
    assert!(indicators().iter().all(|&z| z >= 0.0));
    set(inst, u, -3.0);
    // Seen at once, under the current (linear) mode; its guard is now violated.
    near(der(), -1.5);
    assert!(indicators().iter().any(|&z| z < 0.0), "{:?}", indicators());
    assert_eq!(get(inst, vr(&vars, "sat.y")), -3.0);
    // The event switches the saturation to its lower limit.
    ok(unsafe { fmi3EnterEventMode(inst) });
    settle(inst);
    ok(unsafe { fmi3EnterContinuousTimeMode(inst) });
    near(der(), -1.0);
    assert!(indicators().iter().all(|&z| z >= 0.0));
    assert_eq!(get(inst, vr(&vars, "sat.y")), -2.0);
    unsafe { fmi3FreeInstance(inst) };
}

#[test]
fn native_run_outputs_the_inport_value() {
    let net = NET.replace(r#""value": 0,"#, r#""value": "1.5 N*m","#);
    let d = drivelink_netlist::load_str(&net, "inport_inertia", Path::new(".")).unwrap();
    let mut m = drivelink_core::compile(&d, &drivelink_blocks::registry()).unwrap();
    let r = m.run();
    assert_eq!(
        r.status,
        drivelink_core::RunStatus::Completed,
        "{}",
        r.message
    );
    assert_eq!(r.last("sat.y"), Some(1.5));
    // w = 1.5 / 2 · 3 s.
    assert!((r.last("J.w").unwrap() - 2.25).abs() < 1e-9);
}

/// `y = u/(0.2 s + 1)`: a first-order lag of the input.
const LAG: &str = r#"{
  "drivelink": 1, "name": "inport_lag",
  "solver": { "method": "dopri5", "stop_time": 1, "rtol": 1e-10, "atol": 1e-12 },
  "blocks": [
    { "name": "u", "type": "Inport", "params": { "value": 0 } },
    { "name": "lag", "type": "TransferFcn", "params": { "num": [1], "den": [0.2, 1] } }
  ],
  "connections": [["u.y", "lag.u"]],
  "log": ["lag.y"]
}"#;

#[test]
fn input_step_at_a_communication_point_restarts_the_lag_there() {
    let (dir, token) = common::resources("fmi-inputs-test", "lag", LAG.as_bytes());
    let inst = common::instantiate(Kind::CoSimulation, "inputs", &dir, &token);
    let (u, y) = (1u32, 2u32);
    ok(unsafe { fmi3EnterInitializationMode(inst, false, 0.0, 0.0, true, 1.0) });
    ok(unsafe { fmi3ExitInitializationMode(inst) });
    let h = 1e-3;
    for k in 0..1000 {
        let t = k as f64 * h;
        // The importer sets the input before every step; it steps from 0 to 1 at 0.3 s.
        set(inst, u, if k < 300 { 0.0 } else { 1.0 });
        let (mut ev, mut term, mut early, mut last) = (false, false, false, f64::NAN);
        ok(unsafe { fmi3DoStep(inst, t, h, true, &mut ev, &mut term, &mut early, &mut last) });
        let te = t + h;
        let exact = if te <= 0.3 {
            0.0
        } else {
            1.0 - (-(te - 0.3) / 0.2).exp()
        };
        let got = get(inst, y);
        assert!(
            (got - exact).abs() < 1e-8,
            "lag.y at {te}: {got}, exact {exact}"
        );
    }
    unsafe { fmi3FreeInstance(inst) };
}
