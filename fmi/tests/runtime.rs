//! The runtime through its FMI 3.0 entry points, as an importer calls them: a
//! co-simulation of `mech_clutch_lock.json` in 0.1 s steps reproduces the native run
//! (and the closed-form lock-up), parameters set before initialization take effect, and
//! errors come back as `fmi3Error` with the reason in the logger.

use std::ffi::c_void;
use std::path::PathBuf;

use drivelink_fmi::ffi::*;

mod common;
use common::{logged, Kind};

/// A resources directory holding the clutch-lock netlist (`tag` keeps the tests'
/// directories apart).
fn resources(tag: &str) -> (PathBuf, String) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read(root.join("models/netlists/mech_clutch_lock.json")).unwrap();
    common::resources("fmi-runtime-test", tag, &text)
}

fn instantiate(dir: &std::path::Path, token: &str) -> *mut c_void {
    common::instantiate_or_null(Kind::CoSimulation, "inst", dir, token)
}

fn get(inst: *mut c_void, vrs: &[u32]) -> Vec<f64> {
    let mut v = vec![f64::NAN; vrs.len()];
    let st = unsafe { fmi3GetFloat64(inst, vrs.as_ptr(), vrs.len(), v.as_mut_ptr(), v.len()) };
    assert_eq!(st, OK, "{}", logged());
    v
}

fn step(inst: *mut c_void, t: f64, h: f64) -> Status {
    let (mut ev, mut term, mut early, mut last) = (true, true, true, f64::NAN);
    unsafe { fmi3DoStep(inst, t, h, true, &mut ev, &mut term, &mut early, &mut last) }
}

/// An instance of the FMU in `dir` through initialization, stopping at 3 s.
fn initialized(dir: &std::path::Path, token: &str) -> *mut c_void {
    let inst = instantiate(dir, token);
    assert!(!inst.is_null(), "{}", logged());
    assert_eq!(
        unsafe { fmi3EnterInitializationMode(inst, false, 0.0, 0.0, true, 3.0) },
        OK
    );
    assert_eq!(
        unsafe { fmi3ExitInitializationMode(inst) },
        OK,
        "{}",
        logged()
    );
    inst
}

// Value references: 0 time, 1 J1, 2 J2, 3 fn, 4 mu, 5 w0, 6 clutch.mode, 7 clutch.tau,
// 8 clutch.w_rel, 9 J1.w, 10 J2.w.

#[test]
fn cosimulation_in_steps_reproduces_the_native_run() {
    let (dir, token) = resources("steps");
    let inst = initialized(&dir, &token);
    assert_eq!(get(inst, &[0, 9, 10]), [0.0, 10.0, 0.0]);
    let d = drivelink_netlist::load_file(&dir.join("model.json")).unwrap();
    let mut m = drivelink_core::compile(&d, &drivelink_blocks::registry()).unwrap();
    let mut s = m.settings().clone();
    s.output_interval = Some(0.1);
    s.output_points = None;
    let native = m.run_with(&s);
    let h = 0.1;
    for k in 0..30 {
        assert_eq!(step(inst, k as f64 * h, h), OK, "{}", logged());
        let t = (k + 1) as f64 * h;
        let v = get(inst, &[9, 10]);
        for (name, got) in ["J1.w", "J2.w"].iter().zip(v) {
            let want = native.value_at(name, t).unwrap();
            assert!(
                (got - want).abs() < 1e-9,
                "{name} at {t}: FMU {got}, run {want}"
            );
        }
    }
    // Locked since t = 4/3 s at the momentum-weighted speed (J1 w0)/(J1 + J2).
    let w = get(inst, &[9, 10, 6]);
    assert!((w[0] - 10.0 / 3.0).abs() < 1e-9 && (w[1] - 10.0 / 3.0).abs() < 1e-9);
    assert_eq!(unsafe { fmi3Terminate(inst) }, OK);
    unsafe { fmi3FreeInstance(inst) };
}

#[test]
fn last_step_past_the_stop_time_by_rounding_ends_at_it() {
    let (dir, token) = resources("stop");
    let inst = initialized(&dir, &token);
    assert_eq!(step(inst, 0.0, 1.5), OK, "{}", logged());
    // 1e-10 s past the stop time: an importer's rounding, accepted, ending at 3 s.
    assert_eq!(step(inst, 1.5, 1.5 + 1e-10), OK, "{}", logged());
    let w = get(inst, &[9, 10]);
    assert!((w[0] - 10.0 / 3.0).abs() < 1e-9 && (w[1] - 10.0 / 3.0).abs() < 1e-9);
    // Nothing goes on beyond it.
    assert_eq!(step(inst, 3.0 + 1e-10, 0.1), ERROR);
    unsafe { fmi3FreeInstance(inst) };
}

#[test]
fn parameter_set_before_initialization_changes_the_lock_speed() {
    let (dir, token) = resources("param");
    let inst = instantiate(&dir, &token);
    assert!(!inst.is_null(), "{}", logged());
    let (vr, val) = ([2u32], [1.0f64]);
    assert_eq!(
        unsafe { fmi3SetFloat64(inst, vr.as_ptr(), 1, val.as_ptr(), 1) },
        OK
    );
    assert_eq!(
        unsafe { fmi3EnterInitializationMode(inst, false, 0.0, 0.0, false, 0.0) },
        OK
    );
    assert_eq!(
        unsafe { fmi3ExitInitializationMode(inst) },
        OK,
        "{}",
        logged()
    );
    // J2 = 1: lock at dw J1 J2 / ((J1 + J2) T) = 1 s, at 5 rad/s.
    assert_eq!(step(inst, 0.0, 2.0), OK, "{}", logged());
    let w = get(inst, &[2, 9, 10]);
    assert_eq!(w[0], 1.0);
    assert!(
        (w[1] - 5.0).abs() < 1e-9 && (w[2] - 5.0).abs() < 1e-9,
        "{w:?}"
    );
    // A tunable parameter set between steps: the locked pair keeps its speed (the states
    // carry over, nothing drives them).
    let st = unsafe { fmi3SetFloat64(inst, vr.as_ptr(), 1, val.as_ptr(), 1) };
    assert_eq!(st, OK, "{}", logged());
    assert_eq!(step(inst, 2.0, 0.5), OK, "{}", logged());
    let w = get(inst, &[9, 10]);
    assert!(
        (w[0] - 5.0).abs() < 1e-9 && (w[1] - 5.0).abs() < 1e-9,
        "{w:?}"
    );
    unsafe { fmi3FreeInstance(inst) };
}

#[test]
fn errors_reach_the_logger_as_fmi3_error() {
    let (dir, token) = resources("errors");
    assert!(instantiate(&dir, "{drivelink-0}").is_null());
    assert!(logged().contains("instantiation token {drivelink-0} does not match"));
    let inst = instantiate(&dir, &token);
    let bad = [99u32];
    let mut v = [0.0];
    assert_eq!(
        unsafe { fmi3GetFloat64(inst, bad.as_ptr(), 1, v.as_mut_ptr(), 1) },
        ERROR
    );
    assert!(logged().contains("unknown variable: value reference 99"));
    let out = [7u32];
    assert_eq!(
        unsafe { fmi3SetFloat64(inst, out.as_ptr(), 1, v.as_ptr(), 1) },
        ERROR
    );
    assert!(logged().contains("'clutch.tau' cannot be set"));
    // A negative inertia is the compiler's error, at the end of initialization.
    let (j1, neg) = ([1u32], [-1.0f64]);
    assert_eq!(
        unsafe { fmi3SetFloat64(inst, j1.as_ptr(), 1, neg.as_ptr(), 1) },
        OK
    );
    assert_eq!(
        unsafe { fmi3EnterInitializationMode(inst, false, 0.0, 0.0, false, 0.0) },
        OK
    );
    assert_eq!(unsafe { fmi3ExitInitializationMode(inst) }, ERROR);
    assert!(logged().contains("inst: "), "{}", logged());
    assert_eq!(step(inst, 0.0, 0.1), ERROR);
    assert!(logged().contains("fmi3DoStep is not allowed in phase Initialization"));
    assert_eq!(unsafe { fmi3EnterEventMode(inst) }, ERROR);
    assert!(logged().contains("fmi3EnterEventMode is not supported"));
    unsafe { fmi3FreeInstance(inst) };
}

/// `1/d` with `d` stepping from 1 to 0 at t = 0.5 s, exactly a communication point of
/// 0.25 s steps: the output is infinite right after the step's time event.
const DIVIDE_AT_POINT: &str = r#"{
  "drivelink": 1, "name": "divide_at_point",
  "solver": { "stop_time": 1 },
  "blocks": [
    { "name": "one", "type": "Constant", "params": { "value": 1 } },
    { "name": "d", "type": "Step", "params": { "time": 0.5, "before": 1, "after": 0 } },
    { "name": "div", "type": "Product", "params": { "ops": "*/" } }
  ],
  "connections": [["one.y", "div.u1"], ["d.y", "div.u2"]],
  "log": ["div.y"]
}"#;

#[test]
fn non_finite_output_at_a_communication_point_fails_the_step() {
    let (dir, token) = common::resources(
        "fmi-runtime-test",
        "divide_at_point",
        DIVIDE_AT_POINT.as_bytes(),
    );
    let inst = instantiate(&dir, &token);
    assert!(!inst.is_null(), "{}", logged());
    assert_eq!(
        unsafe { fmi3EnterInitializationMode(inst, false, 0.0, 0.0, false, 0.0) },
        OK
    );
    assert_eq!(unsafe { fmi3ExitInitializationMode(inst) }, OK);
    assert_eq!(step(inst, 0.0, 0.25), OK, "{}", logged());
    assert_eq!(get(inst, &[1]), [1.0]);
    // The step ending at the step time fails there instead of returning y = inf.
    assert_eq!(
        step(inst, 0.25, 0.25),
        ERROR,
        "div.y = {:?}",
        get(inst, &[1])
    );
    assert!(
        logged().contains("at t = 0.5 s: non-finite value inf on output 'div.y' (Product)"),
        "{}",
        logged()
    );
    // Failed: only terminate, reset or free.
    assert_eq!(step(inst, 0.5, 0.25), ERROR);
    assert_eq!(unsafe { fmi3Terminate(inst) }, OK);
    unsafe { fmi3FreeInstance(inst) };
}
