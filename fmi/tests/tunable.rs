//! Tunable parameters and the FMU state of exported FMUs (FMI 3.0).
//!
//! A constant 1 through a gain `K` into a lag `1/(0.2 s + 1)`: `K` set from 2 to 5 at
//! `t1 = 0.4 s` (Co-Simulation: between steps; Model Exchange: in Event Mode) gives the
//! closed form `y = K1 (1 - e^(-t/τ))` before `t1` and `y = K2 + (y(t1) - K2)
//! e^(-(t - t1)/τ)` after it: the lag's state carries over, only the gain changes. The full
//! car runs on with its throttle raised mid-run, its states unchanged by the change. The
//! FMU state taken at `t1` and set back gives the same steps to `t2` bit for bit.

use std::ffi::c_void;
use std::path::Path;

use drivelink_fmi::ffi::*;

mod common;
use common::{logged, ok, settle, vr, Kind};

const LAG: &str = r#"{
  "drivelink": 1, "name": "gain_lag",
  "parameters": { "K": 2 },
  "solver": { "method": "dopri5", "stop_time": 1, "rtol": 1e-10, "atol": 1e-12 },
  "blocks": [
    { "name": "one", "type": "Constant", "params": { "value": 1 } },
    { "name": "gain", "type": "Gain", "params": { "k": "K" } },
    { "name": "lag", "type": "TransferFcn", "params": { "num": [1], "den": [0.2, 1] } }
  ],
  "connections": [["one.y", "gain.u"], ["gain.y", "lag.u"]],
  "log": ["lag.y"]
}"#;

const TAU: f64 = 0.2;
const T1: f64 = 0.4;
const K1: f64 = 2.0;
const K2: f64 = 5.0;

/// The closed form of the lag's output with the gain changed at `T1`.
fn exact(t: f64) -> f64 {
    let y = |k: f64, y0: f64, dt: f64| k + (y0 - k) * (-dt / TAU).exp();
    if t <= T1 {
        y(K1, 0.0, t)
    } else {
        y(K2, y(K1, 0.0, T1), t - T1)
    }
}

fn variables(net: &str) -> Vec<drivelink_fmi::Variable> {
    common::variables_of(net, "tunable")
}

fn instantiate(net: &str, tag: &str, kind: Kind) -> *mut c_void {
    let (dir, token) = common::resources("fmi-tunable-test", tag, net.as_bytes());
    common::instantiate(kind, "tunable", &dir, &token)
}

fn set(inst: *mut c_void, vr: u32, v: f64) -> Status {
    unsafe { fmi3SetFloat64(inst, &vr, 1, &v, 1) }
}

fn get(inst: *mut c_void, vr: u32) -> f64 {
    let mut v = f64::NAN;
    ok(unsafe { fmi3GetFloat64(inst, &vr, 1, &mut v, 1) });
    v
}

fn step(inst: *mut c_void, t: f64, h: f64) {
    let (mut ev, mut term, mut early, mut last) = (false, false, false, f64::NAN);
    ok(unsafe { fmi3DoStep(inst, t, h, true, &mut ev, &mut term, &mut early, &mut last) });
    assert!(!term);
}

fn start_cs(inst: *mut c_void, stop: f64) {
    ok(unsafe { fmi3EnterInitializationMode(inst, false, 0.0, 0.0, true, stop) });
    ok(unsafe { fmi3ExitInitializationMode(inst) });
}

#[test]
fn gain_tuned_between_cosimulation_steps_follows_the_closed_form() {
    let vars = variables(LAG);
    let (k, y) = (vr(&vars, "K"), vr(&vars, "lag.y"));
    let inst = instantiate(LAG, "cs", Kind::CoSimulation);
    start_cs(inst, 1.0);
    let h = 0.01;
    for i in 0..100 {
        let t = i as f64 * h;
        if i == 40 {
            ok(set(inst, k, K2));
            assert_eq!(get(inst, k), K2);
        }
        step(inst, t, h);
        let (got, want) = (get(inst, y), exact(t + h));
        assert!(
            (got - want).abs() < 1e-8,
            "lag.y at {}: {got}, exact {want}",
            t + h
        );
    }
    unsafe { fmi3FreeInstance(inst) };
}

/// A Model Exchange instance through initialization and its first event iteration, in
/// Continuous-Time Mode; its number of states.
fn start_me(inst: *mut c_void) -> usize {
    ok(unsafe { fmi3EnterInitializationMode(inst, false, 0.0, 0.0, false, 0.0) });
    ok(unsafe { fmi3ExitInitializationMode(inst) });
    settle(inst);
    ok(unsafe { fmi3EnterContinuousTimeMode(inst) });
    let mut nx = 0usize;
    ok(unsafe { fmi3GetNumberOfContinuousStates(inst, &mut nx) });
    nx
}

/// One classical Runge-Kutta step of the instance's states from `t` over `h`.
fn rk4(inst: *mut c_void, t: f64, h: f64, x: &mut [f64]) {
    let n = x.len();
    let f = |t: f64, x: &[f64]| {
        let mut dx = vec![0.0; n];
        ok(unsafe { fmi3SetTime(inst, t) });
        ok(unsafe { fmi3SetContinuousStates(inst, x.as_ptr(), n) });
        ok(unsafe { fmi3GetContinuousStateDerivatives(inst, dx.as_mut_ptr(), n) });
        dx
    };
    let at = |x: &[f64], k: &[f64], c: f64| -> Vec<f64> {
        x.iter().zip(k).map(|(a, b)| a + c * b).collect()
    };
    let k1 = f(t, x);
    let k2 = f(t + h / 2.0, &at(x, &k1, h / 2.0));
    let k3 = f(t + h / 2.0, &at(x, &k2, h / 2.0));
    let k4 = f(t + h, &at(x, &k3, h));
    for i in 0..n {
        x[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    }
    ok(unsafe { fmi3SetTime(inst, t + h) });
    ok(unsafe { fmi3SetContinuousStates(inst, x.as_ptr(), n) });
}

#[test]
fn gain_tuned_in_event_mode_follows_the_closed_form() {
    let vars = variables(LAG);
    let (k, y) = (vr(&vars, "K"), vr(&vars, "lag.y"));
    let inst = instantiate(LAG, "me", Kind::ModelExchange);
    let nx = start_me(inst);
    let mut x = vec![0.0; nx];
    ok(unsafe { fmi3GetContinuousStates(inst, x.as_mut_ptr(), nx) });
    // Refused outside Event Mode, naming the parameter.
    assert_eq!(set(inst, k, K2), ERROR);
    assert!(
        logged().contains("parameter 'K' cannot be set in phase Continuous"),
        "{}",
        logged()
    );
    let h = 1e-3;
    for i in 0..1000 {
        let t = i as f64 * h;
        if i == 400 {
            ok(unsafe { fmi3EnterEventMode(inst) });
            ok(set(inst, k, K2));
            settle(inst);
            ok(unsafe { fmi3EnterContinuousTimeMode(inst) });
            let mut after = vec![0.0; nx];
            ok(unsafe { fmi3GetContinuousStates(inst, after.as_mut_ptr(), nx) });
            assert_eq!(after, x, "the states carry over the change");
        }
        rk4(inst, t, h, &mut x);
        let (got, want) = (get(inst, y), exact(t + h));
        assert!(
            (got - want).abs() < 1e-9,
            "lag.y at {}: {got}, exact {want}",
            t + h
        );
    }
    unsafe { fmi3FreeInstance(inst) };
}

#[test]
fn parameter_changing_the_structure_is_refused_naming_it() {
    // A numerator `a·s + 1` over `0.2 s + 1` feeds its input through (`D = a/0.2`); with
    // `a = 0` it does not: the model's structure changes. An invalid value is refused too.
    let net = r#"{
      "drivelink": 1, "name": "order",
      "parameters": { "a": 0.1 },
      "solver": { "stop_time": 1 },
      "blocks": [
        { "name": "one", "type": "Constant", "params": { "value": 1 } },
        { "name": "lag", "type": "TransferFcn", "params": { "num": ["a", 1], "den": [0.2, 1] } }
      ],
      "connections": [["one.y", "lag.u"]],
      "log": ["lag.y"]
    }"#;
    let vars = variables(net);
    let a = vr(&vars, "a");
    let inst = instantiate(net, "order", Kind::CoSimulation);
    start_cs(inst, 1.0);
    step(inst, 0.0, 0.1);
    assert_eq!(set(inst, a, 0.0), ERROR);
    let log = logged();
    assert!(log.contains("parameter 'a' = 0 is refused"), "{log}");
    assert!(log.contains("structure"), "{log}");
    // The old value stays and the run goes on.
    assert_eq!(get(inst, a), 0.1);
    assert_eq!(set(inst, a, f64::NAN), ERROR);
    assert_eq!(get(inst, a), 0.1);
    step(inst, 0.1, 0.1);
    unsafe { fmi3FreeInstance(inst) };
}

fn netlist(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../models/netlists")
        .join(file);
    std::fs::read_to_string(path).unwrap()
}

/// The values of every state variable of a Co-Simulation instance.
fn states(inst: *mut c_void, vars: &[drivelink_fmi::Variable]) -> Vec<f64> {
    vars.iter()
        .filter(|v| v.causality == drivelink_fmi::vars::Causality::State)
        .map(|v| get(inst, v.value_reference))
        .collect()
}

#[test]
fn full_car_throttle_tuned_mid_run_keeps_its_states_and_runs_on() {
    let net = netlist("full_car.json");
    let vars = variables(&net);
    let throttle = vr(&vars, "throttle");
    let inst = instantiate(&net, "full_car", Kind::CoSimulation);
    start_cs(inst, 20.0);
    let h = 0.1;
    for i in 0..200 {
        let t = i as f64 * h;
        if i == 100 {
            let before = states(inst, &vars);
            ok(set(inst, throttle, 0.6));
            let after = states(inst, &vars);
            // The restart's event call projects the locked joints' speeds onto their
            // constraints again (round-off drift), as after an input change.
            for (i, (b, a)) in before.iter().zip(&after).enumerate() {
                assert!(
                    (b - a).abs() <= 1e-12 * b.abs().max(1.0),
                    "state {i} jumps at the change: {b} -> {a}"
                );
            }
            assert!(before.iter().all(|v| v.is_finite()));
        }
        step(inst, t, h);
    }
    assert!(states(inst, &vars).iter().all(|v| v.is_finite()));
    unsafe { fmi3FreeInstance(inst) };
}

/// The outputs and states of a Co-Simulation instance stepped from `t` to `t + n·h`.
fn stepped(
    inst: *mut c_void,
    vars: &[drivelink_fmi::Variable],
    t: f64,
    h: f64,
    n: usize,
) -> Vec<u64> {
    let mut seen = Vec::new();
    for i in 0..n {
        step(inst, t + i as f64 * h, h);
        for v in vars.iter().filter(|v| {
            use drivelink_fmi::vars::Causality::*;
            matches!(v.causality, Output | State)
        }) {
            seen.push(get(inst, v.value_reference).to_bits());
        }
    }
    seen
}

#[test]
fn cosimulation_fmu_state_set_back_repeats_the_steps_bit_for_bit() {
    let net = netlist("mech_clutch_lock.json");
    let vars = variables(&net);
    let inst = instantiate(&net, "state_cs", Kind::CoSimulation);
    start_cs(inst, 3.0);
    let h = 0.05;
    for i in 0..10 {
        step(inst, i as f64 * h, h);
    }
    let mut state: *mut c_void = std::ptr::null_mut();
    ok(unsafe { fmi3GetFMUState(inst, &mut state) });
    assert!(!state.is_null());
    // Over the clutch's lock (events inside the steps).
    let a = stepped(inst, &vars, 0.5, h, 30);
    ok(unsafe { fmi3SetFMUState(inst, state) });
    let b = stepped(inst, &vars, 0.5, h, 30);
    assert!(a == b, "the steps after setting the state back differ");
    // Again, into an instance that ran elsewhere in the meantime.
    ok(unsafe { fmi3SetFMUState(inst, state) });
    let c = stepped(inst, &vars, 0.5, h, 30);
    assert!(a == c);
    // Taking a state changes nothing: an instance never asked for one steps the same.
    let plain = instantiate(&net, "state_cs_plain", Kind::CoSimulation);
    start_cs(plain, 3.0);
    for i in 0..10 {
        step(plain, i as f64 * h, h);
    }
    let untouched = stepped(plain, &vars, 0.5, h, 30);
    assert!(a == untouched, "taking the state changed the run");
    unsafe { fmi3FreeInstance(plain) };
    ok(unsafe { fmi3FreeFMUState(inst, &mut state) });
    assert!(state.is_null());
    unsafe { fmi3FreeInstance(inst) };
}

#[test]
fn fmu_state_at_the_stop_time_is_taken_and_set_back() {
    let vars = variables(LAG);
    let y = vr(&vars, "lag.y");
    let inst = instantiate(LAG, "state_end", Kind::CoSimulation);
    start_cs(inst, 1.0);
    for i in 0..10 {
        step(inst, i as f64 * 0.1, 0.1);
    }
    let end = get(inst, y);
    let mut state: *mut c_void = std::ptr::null_mut();
    ok(unsafe { fmi3GetFMUState(inst, &mut state) });
    assert_eq!(get(inst, y), end);
    ok(unsafe { fmi3SetFMUState(inst, state) });
    assert_eq!(get(inst, y), end);
    assert!((end - exact_k1(1.0)).abs() < 1e-8);
    ok(unsafe { fmi3FreeFMUState(inst, &mut state) });
    unsafe { fmi3FreeInstance(inst) };
}

/// The lag's output with the gain left at `K1`.
fn exact_k1(t: f64) -> f64 {
    K1 * (1.0 - (-t / TAU).exp())
}

#[test]
fn model_exchange_fmu_state_set_back_repeats_the_integration_bit_for_bit() {
    let vars = variables(LAG);
    let (k, y) = (vr(&vars, "K"), vr(&vars, "lag.y"));
    let inst = instantiate(LAG, "state_me", Kind::ModelExchange);
    let nx = start_me(inst);
    let mut x = vec![0.0; nx];
    ok(unsafe { fmi3GetContinuousStates(inst, x.as_mut_ptr(), nx) });
    let h = 1e-3;
    for i in 0..300 {
        rk4(inst, i as f64 * h, h, &mut x);
    }
    let mut state: *mut c_void = std::ptr::null_mut();
    ok(unsafe { fmi3GetFMUState(inst, &mut state) });
    let x1 = x.clone();
    // On with a parameter change in between: the state set back holds the old value.
    let run = |x: &mut Vec<f64>| {
        let mut ys = Vec::new();
        for i in 300..600 {
            if i == 450 {
                ok(unsafe { fmi3EnterEventMode(inst) });
                ok(set(inst, k, K2));
                settle(inst);
                ok(unsafe { fmi3EnterContinuousTimeMode(inst) });
            }
            rk4(inst, i as f64 * h, h, x);
            ys.push(get(inst, y).to_bits());
        }
        ys
    };
    let a = run(&mut x);
    ok(unsafe { fmi3SetFMUState(inst, state) });
    assert_eq!(get(inst, k), K1);
    let mut x = vec![0.0; nx];
    ok(unsafe { fmi3GetContinuousStates(inst, x.as_mut_ptr(), nx) });
    assert_eq!(x, x1);
    let b = run(&mut x);
    assert!(
        a == b,
        "the integration after setting the state back differs"
    );
    ok(unsafe { fmi3FreeFMUState(inst, &mut state) });
    unsafe { fmi3FreeInstance(inst) };
}
