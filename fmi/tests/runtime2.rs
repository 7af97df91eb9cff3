//! The runtime through its FMI 2.0 entry points, as an importer calls them: a
//! co-simulation of `mech_clutch_lock.json` in 0.1 s steps reproduces the native run and
//! the closed-form lock-up, `fmi2SetupExperiment`'s start time, tolerance and stop time
//! take effect, a block that stops the run ends the step with `fmi2Discard` and the
//! status functions tell when, errors come back as `fmi2Error` with the reason in the
//! (variadic) logger, and a Model Exchange instance integrated by forward Euler with its
//! event indicators watched locks the clutch at the closed-form instant.
//!
//! The logger here receives its one `%s` argument as a sixth fixed argument: on x86-64
//! System V that is where a variadic caller puts it, so the test runs there only.
#![cfg(all(target_arch = "x86_64", unix))]

use std::ffi::{c_char, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use drivelink_fmi::ffi::{Status, ERROR, OK};
use drivelink_fmi::ffi2::*;

static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// `fmi2CallbackLogger` for the format `"%s"` with its one argument.
unsafe extern "C" fn logger(
    _env: *mut c_void,
    name: *const c_char,
    status: Status,
    category: *const c_char,
    format: *const c_char,
    arg: *const c_char,
) {
    let s = |p: *const c_char| CStr::from_ptr(p).to_string_lossy().into_owned();
    assert_eq!(s(format), "%s");
    LOG.lock().unwrap().push(format!(
        "{status} [{}] {}: {}",
        s(category),
        s(name),
        s(arg)
    ));
}

fn logged() -> String {
    LOG.lock().unwrap().join("\n")
}

fn callbacks() -> CallbackFunctions {
    type Fixed = unsafe extern "C" fn(
        *mut c_void,
        *const c_char,
        Status,
        *const c_char,
        *const c_char,
        *const c_char,
    );
    // SAFETY: on x86-64 System V a variadic call passes its first variadic pointer
    // argument where `Fixed` reads its sixth argument.
    let logger = unsafe { std::mem::transmute::<Fixed, Logger>(logger as Fixed) };
    CallbackFunctions {
        logger,
        allocate_memory: None,
        free_memory: None,
        step_finished: None,
        component_environment: std::ptr::null_mut(),
    }
}

/// A resources directory (its path with a space, as a percent-escaped URI) holding
/// `netlist` (`tag` keeps the tests' directories apart), and the token.
fn resources(tag: &str, netlist: &[u8]) -> (PathBuf, String) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = root
        .join("target/fmi2-runtime-test")
        .join(format!("{tag} dir"))
        .join("resources");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("model.json"), netlist).unwrap();
    (dir, drivelink_fmi::instantiation_token(netlist))
}

fn clutch_lock() -> Vec<u8> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read(root.join("models/netlists/mech_clutch_lock.json")).unwrap()
}

fn instantiate(dir: &Path, token: &str, kind: i32) -> *mut c_void {
    let name = CString::new("inst2").unwrap();
    let token = CString::new(token).unwrap();
    let uri = format!("file://{}", dir.display()).replace(' ', "%20");
    let uri = CString::new(uri).unwrap();
    let cb = callbacks();
    unsafe { fmi2Instantiate(name.as_ptr(), kind, token.as_ptr(), uri.as_ptr(), &cb, 0, 1) }
}

fn get(c: *mut c_void, vrs: &[u32]) -> Vec<f64> {
    let mut v = vec![f64::NAN; vrs.len()];
    let st = unsafe { fmi2GetReal(c, vrs.as_ptr(), vrs.len(), v.as_mut_ptr()) };
    assert_eq!(st, OK, "{}", logged());
    v
}

fn set(c: *mut c_void, vr: u32, value: f64) -> Status {
    unsafe { fmi2SetReal(c, [vr].as_ptr(), 1, [value].as_ptr()) }
}

// Value references: 0 time, 1 J1, 2 J2, 3 fn, 4 mu, 5 w0, 6 clutch.mode, 7 clutch.tau,
// 8 clutch.w_rel, 9 J1.w, 10 J2.w.

#[test]
fn fmi2_cosimulation_in_steps_reproduces_the_native_run() {
    assert_eq!(
        unsafe { CStr::from_ptr(fmi2GetVersion()) }.to_str(),
        Ok("2.0")
    );
    assert_eq!(
        unsafe { CStr::from_ptr(fmi2GetTypesPlatform()) }.to_str(),
        Ok("default")
    );
    let (dir, token) = resources("steps", &clutch_lock());
    let c = instantiate(&dir, &token, CO_SIMULATION);
    assert!(!c.is_null(), "{}", logged());
    unsafe {
        assert_eq!(fmi2SetupExperiment(c, 1, 1e-10, 0.0, 1, 3.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK, "{}", logged());
    }
    assert_eq!(get(c, &[0, 9, 10]), [0.0, 10.0, 0.0]);
    let d = drivelink_netlist::load_file(&dir.join("model.json")).unwrap();
    let mut m = drivelink_core::compile(&d, &drivelink_blocks::registry()).unwrap();
    let mut s = m.settings().clone();
    s.output_interval = Some(0.1);
    s.output_points = None;
    s.rtol = 1e-10;
    let native = m.run_with(&s);
    let h = 0.1;
    for k in 0..30 {
        let st = unsafe { fmi2DoStep(c, k as f64 * h, h, 1) };
        assert_eq!(st, OK, "{}", logged());
        let t = (k + 1) as f64 * h;
        for (name, got) in ["J1.w", "J2.w"].iter().zip(get(c, &[9, 10])) {
            let want = native.value_at(name, t).unwrap();
            assert!(
                (got - want).abs() < 1e-9,
                "{name} at {t}: FMU {got}, run {want}"
            );
        }
    }
    // Locked since t = 4/3 s at the momentum-weighted speed (J1 w0)/(J1 + J2).
    let w = get(c, &[0, 9, 10]);
    assert!((w[0] - 3.0).abs() < 1e-12, "time {}", w[0]);
    assert!((w[1] - 10.0 / 3.0).abs() < 1e-9 && (w[2] - 10.0 / 3.0).abs() < 1e-9);
    let mut last = f64::NAN;
    assert_eq!(
        unsafe { fmi2GetRealStatus(c, LAST_SUCCESSFUL_TIME, &mut last) },
        OK
    );
    assert!((last - 3.0).abs() < 1e-12);
    // The stop time of the experiment bounds the steps.
    assert_eq!(unsafe { fmi2DoStep(c, 3.0, 0.1, 1) }, ERROR);
    assert!(
        logged().contains("goes beyond the experiment's stop time 3 s"),
        "{}",
        logged()
    );
    unsafe {
        assert_eq!(fmi2Terminate(c), OK);
        fmi2FreeInstance(c);
    }
}

#[test]
fn fmi2_setup_experiment_start_time_and_reset() {
    let (dir, token) = resources("start", &clutch_lock());
    let c = instantiate(&dir, &token, CO_SIMULATION);
    assert!(!c.is_null(), "{}", logged());
    // J2 = 1: the lock at dw J1 J2 / ((J1 + J2) T) = 1 s after the start, at 5 rad/s.
    assert_eq!(set(c, 2, 1.0), OK);
    unsafe {
        assert_eq!(fmi2SetupExperiment(c, 0, 0.0, 10.0, 0, 0.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK, "{}", logged());
        assert_eq!(get(c, &[0]), [10.0]);
        assert_eq!(fmi2DoStep(c, 10.0, 0.9, 1), OK, "{}", logged());
        assert!(get(c, &[8])[0].abs() > 0.1, "still slipping at 0.9 s");
        assert_eq!(fmi2DoStep(c, 10.9, 0.2, 1), OK, "{}", logged());
        let w = get(c, &[9, 10]);
        assert!(
            (w[0] - 5.0).abs() < 1e-9 && (w[1] - 5.0).abs() < 1e-9,
            "{w:?}"
        );
        // A tunable parameter set between steps; refused after the end, naming the FMI 2.0
        // function.
        assert_eq!(set(c, 2, 3.0), OK, "{}", logged());
        assert_eq!(get(c, &[2]), [3.0]);
        assert_eq!(fmi2DoStep(c, 11.1, 0.1, 1), OK, "{}", logged());
        assert_eq!(fmi2Terminate(c), OK);
        assert_eq!(set(c, 2, 4.0), ERROR);
        assert!(logged().contains("a tunable parameter is set before fmi2ExitInitializationMode"));
        // Reset: back to the start values and the netlist's start time.
        assert_eq!(fmi2Reset(c), OK);
        assert_eq!(get(c, &[0, 2]), [0.0, 2.0]);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK);
        assert_eq!(fmi2DoStep(c, 0.0, 1.0, 1), OK);
        assert!(get(c, &[8])[0].abs() > 0.1, "J2 = 2 locks at 4/3 s");
        fmi2FreeInstance(c);
    }
}

#[test]
fn fmi2_a_block_stopping_the_run_discards_the_step_and_says_when() {
    // A step at 1 s stops the run; J spins down at 2 rad/s^2 from 3 rad/s: w(1 s) = 1.
    let net = br#"{
      "drivelink": 1, "name": "spin_down",
      "solver": { "stop_time": 5 },
      "blocks": [
        { "name": "J", "type": "Inertia", "params": { "J": 1, "w0": 3 } },
        { "name": "src", "type": "TorqueSource" },
        { "name": "tau", "type": "Constant", "params": { "value": -2 } },
        { "name": "at1", "type": "Step", "params": { "time": 1, "after": 1 } },
        { "name": "stop", "type": "StopSimulation" }
      ],
      "connections": [["tau.y", "src.tau"], ["src.flange", "J.flange"], ["at1.y", "stop.u"]],
      "log": ["J.w"]
    }"#;
    let (dir, token) = resources("stop", net);
    let c = instantiate(&dir, &token, CO_SIMULATION);
    assert!(!c.is_null(), "{}", logged());
    unsafe {
        assert_eq!(fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK, "{}", logged());
        let mut term = -1;
        assert_eq!(fmi2GetBooleanStatus(c, TERMINATED, &mut term), OK);
        assert_eq!(term, 0);
        assert_eq!(fmi2DoStep(c, 0.0, 0.75, 1), OK, "{}", logged());
        assert_eq!(fmi2DoStep(c, 0.75, 0.75, 1), DISCARD, "{}", logged());
        assert_eq!(fmi2GetBooleanStatus(c, TERMINATED, &mut term), OK);
        assert_eq!(term, 1);
        let mut last = f64::NAN;
        assert_eq!(fmi2GetRealStatus(c, LAST_SUCCESSFUL_TIME, &mut last), OK);
        assert!((last - 1.0).abs() < 1e-12, "stopped at {last}");
        assert!((get(c, &[1])[0] - 1.0).abs() < 1e-9, "{}", get(c, &[1])[0]);
        assert!(logged().contains("a block stopped the simulation at t = "));
        // What this FMU cannot tell: fmi2Discard.
        let mut st = -1;
        assert_eq!(fmi2GetStatus(c, DO_STEP_STATUS, &mut st), DISCARD);
        assert_eq!(fmi2GetRealStatus(c, TERMINATED, &mut last), DISCARD);
        assert_eq!(fmi2Terminate(c), OK);
        fmi2FreeInstance(c);
    }
}

#[test]
fn fmi2_errors_reach_the_logger_as_fmi2_error() {
    let (dir, token) = resources("errors", &clutch_lock());
    assert!(instantiate(&dir, &token, 2).is_null());
    assert!(logged().contains("unknown fmi2Type 2 (0: Model Exchange, 1: Co-Simulation)"));
    assert!(instantiate(&dir, "{drivelink-0}", CO_SIMULATION).is_null());
    assert!(logged().contains("instantiation token {drivelink-0} does not match"));
    let c = instantiate(&dir, &token, CO_SIMULATION);
    assert!(!c.is_null(), "{}", logged());
    let mut v = [0.0];
    unsafe {
        assert_eq!(fmi2GetReal(c, [99u32].as_ptr(), 1, v.as_mut_ptr()), ERROR);
        assert!(logged().contains("unknown variable: value reference 99"));
        assert_eq!(set(c, 7, 1.0), ERROR);
        assert!(logged().contains("'clutch.tau' cannot be set"));
        assert_eq!(set(c, 1, f64::NAN), ERROR);
        assert!(logged().contains("'J1' = NaN: not a finite number"));
        // Integer variables: none (nothing asked is fine).
        let mut i = [0i32];
        assert_eq!(fmi2GetInteger(c, [1u32].as_ptr(), 0, i.as_mut_ptr()), OK);
        assert_eq!(fmi2GetInteger(c, [1u32].as_ptr(), 1, i.as_mut_ptr()), ERROR);
        assert!(logged().contains("fmi2GetInteger: unknown variable: value reference 1"));
        assert_eq!(fmi2SetupExperiment(c, 1, 2.0, 0.0, 0, 0.0), ERROR);
        assert!(logged().contains("tolerance 2 must be in (0, 1)"));
        assert_eq!(fmi2DoStep(c, 0.0, 0.1, 1), ERROR);
        assert!(logged().contains("fmi2DoStep is not allowed in phase Instantiated"));
        // A negative inertia is the compiler's error, at the end of initialization.
        assert_eq!(set(c, 1, -1.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), ERROR);
        assert!(
            logged().contains("3 [logStatusError] inst2: block 'J1': parameter 'J' must be >= 0"),
            "{}",
            logged()
        );
        assert_eq!(fmi2CancelStep(c), ERROR);
        assert!(logged().contains("fmi2CancelStep: there is no step to cancel"));
        // The state of an instance whose initialization failed: its values only.
        let mut state = std::ptr::null_mut::<c_void>();
        assert_eq!(fmi2GetFMUstate(c, &mut state), OK, "{}", logged());
        assert!(!state.is_null());
        assert_eq!(fmi2SetFMUstate(c, state), OK, "{}", logged());
        assert_eq!(fmi2FreeFMUstate(c, &mut state), OK);
        assert!(state.is_null());
        assert_eq!(fmi2SetFMUstate(c, state), ERROR);
        assert!(logged().contains("SetFMUState: the state is null"));
        fmi2FreeInstance(c);
    }
    // A null component is an error, never a crash.
    assert_eq!(
        unsafe { fmi2DoStep(std::ptr::null_mut(), 0.0, 0.1, 1) },
        ERROR
    );
}

#[test]
fn fmi2_resource_uris_become_directories() {
    for (uri, dir) in [
        ("file:///models/a%20b/resources", "/models/a b/resources"),
        ("file://localhost/models/x/", "/models/x/"),
        ("file:/models/y", "/models/y"),
        ("/models/plain", "/models/plain"),
        ("file:///models/100%", "/models/100%"),
    ] {
        assert_eq!(resource_dir(uri), PathBuf::from(dir), "{uri}");
    }
}

/// The event iteration of FMI 2.0: `fmi2NewDiscreteStates` until no update is needed.
fn fmi2_event_iteration(c: *mut c_void) -> EventInfo {
    for _ in 0..100 {
        let mut info = EventInfo::default();
        assert_eq!(
            unsafe { fmi2NewDiscreteStates(c, &mut info) },
            OK,
            "{}",
            logged()
        );
        if info.new_discrete_states_needed == 0 {
            return info;
        }
    }
    panic!("the event iteration did not settle");
}

#[test]
fn fmi2_model_exchange_locks_the_clutch_at_the_closed_form_instant() {
    let (dir, token) = resources("me", &clutch_lock());
    let c = instantiate(&dir, &token, MODEL_EXCHANGE);
    assert!(!c.is_null(), "{}", logged());
    let (nx, nz) = (5, 3);
    let derivatives = |t: f64, x: &[f64]| {
        let mut dx = vec![f64::NAN; nx];
        unsafe {
            assert_eq!(fmi2SetTime(c, t), OK);
            assert_eq!(fmi2SetContinuousStates(c, x.as_ptr(), nx), OK);
            assert_eq!(fmi2GetDerivatives(c, dx.as_mut_ptr(), nx), OK);
        }
        dx
    };
    let indicators = |t: f64, x: &[f64]| {
        let mut z = vec![f64::NAN; nz];
        unsafe {
            assert_eq!(fmi2SetTime(c, t), OK);
            assert_eq!(fmi2SetContinuousStates(c, x.as_ptr(), nx), OK);
            assert_eq!(fmi2GetEventIndicators(c, z.as_mut_ptr(), nz), OK);
        }
        z
    };
    // Forward Euler: exact for the speeds, whose slopes are constant while the clutch slips.
    let euler = |t: f64, x: &[f64], h: f64| -> Vec<f64> {
        let dx = derivatives(t, x);
        x.iter().zip(&dx).map(|(a, b)| a + h * b).collect()
    };
    let crossed = |a: &[f64], b: &[f64]| a.iter().zip(b).any(|(p, q)| (*p >= 0.0) != (*q >= 0.0));
    let mut x = vec![f64::NAN; nx];
    unsafe {
        assert_eq!(fmi2SetupExperiment(c, 0, 0.0, 0.0, 1, 2.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK, "{}", logged());
        assert_eq!(fmi2_event_iteration(c).next_event_time_defined, 0);
        assert_eq!(fmi2EnterContinuousTimeMode(c), OK);
        assert_eq!(fmi2GetContinuousStates(c, x.as_mut_ptr(), nx), OK);
    }
    let (mut t, h) = (0.0, 1e-3);
    let mut lock = None;
    while t < 2.0 - 1e-12 && lock.is_none() {
        let x1 = euler(t, &x, h);
        if crossed(&indicators(t, &x), &indicators(t + h, &x1)) {
            let (mut lo, mut hi) = (t, t + h);
            while hi - lo > 1e-10 {
                let mid = 0.5 * (lo + hi);
                if crossed(&indicators(t, &x), &indicators(mid, &euler(t, &x, mid - t))) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            let xe = euler(t, &x, hi - t);
            unsafe {
                assert_eq!(fmi2SetTime(c, hi), OK);
                assert_eq!(fmi2SetContinuousStates(c, xe.as_ptr(), nx), OK);
                assert_eq!(fmi2EnterEventMode(c), OK);
                assert_eq!(
                    fmi2_event_iteration(c).values_of_continuous_states_changed,
                    1
                );
                assert_eq!(fmi2EnterContinuousTimeMode(c), OK);
            }
            lock = Some(hi);
        } else {
            let (mut enter, mut term) = (1, 1);
            let st = unsafe { fmi2CompletedIntegratorStep(c, 1, &mut enter, &mut term) };
            assert_eq!((st, enter, term), (OK, 0, 0));
            (t, x) = (t + h, x1);
        }
    }
    let t_lock = lock.expect("the clutch locks");
    assert!((t_lock - 4.0 / 3.0).abs() < 1e-6, "lock at {t_lock} s");
    // Locked at J1 w0 / (J1 + J2), clutch.mode 0.
    let v = get(c, &[6, 9, 10]);
    assert_eq!(v[0], 0.0);
    assert!(
        (v[1] - 10.0 / 3.0).abs() < 1e-9 && (v[2] - 10.0 / 3.0).abs() < 1e-9,
        "{v:?}"
    );
    unsafe {
        assert_eq!(fmi2Terminate(c), OK);
        fmi2FreeInstance(c);
    }
}
