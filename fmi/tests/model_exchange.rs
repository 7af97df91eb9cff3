//! The runtime through its FMI 3.0 Model Exchange entry points, driven as an importer
//! drives them: a fixed-step RK4 integrator of its own that watches the event
//! indicators for a sign change, locates it by bisection to 1e-10 s, and then makes the
//! event iteration (`fmi3EnterEventMode`, `fmi3UpdateDiscreteStates` until no update is
//! needed); time events are stepped to exactly, as announced by `nextEventTime`.
//! The clutch of `mech_clutch_lock.json` locks when the native run's event says (and at
//! the closed-form 4/3 s), and where a parameter set before initialization moves it; a
//! step torque announced as a time event follows its closed-form speed.

use std::ffi::c_void;
use std::path::{Path, PathBuf};

use drivelink_core::EventTag;
use drivelink_fmi::ffi::*;

mod common;
use common::{logged, Kind};

fn ok(st: Status) {
    assert_eq!(st, OK, "{}", logged());
}

/// A resources directory holding the netlist `text` (`tag` keeps the tests apart).
fn resources(tag: &str, text: &[u8]) -> (PathBuf, String) {
    common::resources("fmi-me-test", tag, text)
}

fn instantiate(dir: &Path, token: &str) -> *mut c_void {
    common::instantiate(Kind::ModelExchange, "me", dir, token)
}

/// What the importer saw of a run.
struct Run {
    /// The instants of the state events it located.
    state_events: Vec<f64>,
    /// The instants of the time events it stepped to.
    time_events: Vec<f64>,
    /// Whether an event changed the continuous states.
    states_changed: bool,
    t: f64,
    x: Vec<f64>,
}

/// The importer's side of one Model Exchange instance.
struct Importer {
    inst: *mut c_void,
    nx: usize,
    nz: usize,
}

impl Importer {
    fn set(&self, t: f64, x: &[f64]) {
        ok(unsafe { fmi3SetTime(self.inst, t) });
        ok(unsafe { fmi3SetContinuousStates(self.inst, x.as_ptr(), x.len()) });
    }

    fn derivatives(&self, t: f64, x: &[f64]) -> Vec<f64> {
        self.set(t, x);
        let mut dx = vec![f64::NAN; self.nx];
        ok(unsafe { fmi3GetContinuousStateDerivatives(self.inst, dx.as_mut_ptr(), self.nx) });
        dx
    }

    fn indicators(&self, t: f64, x: &[f64]) -> Vec<f64> {
        self.set(t, x);
        let mut z = vec![f64::NAN; self.nz];
        ok(unsafe { fmi3GetEventIndicators(self.inst, z.as_mut_ptr(), self.nz) });
        z
    }

    fn states(&self) -> Vec<f64> {
        let mut x = vec![f64::NAN; self.nx];
        ok(unsafe { fmi3GetContinuousStates(self.inst, x.as_mut_ptr(), self.nx) });
        x
    }

    /// One classical Runge-Kutta step of size `h` from `(t, x)`.
    fn rk4(&self, t: f64, x: &[f64], h: f64) -> Vec<f64> {
        let at = |c: f64, k: &[f64]| -> Vec<f64> {
            x.iter().zip(k).map(|(xi, ki)| xi + c * h * ki).collect()
        };
        let k1 = self.derivatives(t, x);
        let k2 = self.derivatives(t + h / 2.0, &at(0.5, &k1));
        let k3 = self.derivatives(t + h / 2.0, &at(0.5, &k2));
        let k4 = self.derivatives(t + h, &at(1.0, &k3));
        (0..x.len())
            .map(|i| x[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]))
            .collect()
    }

    /// The event iteration: `fmi3UpdateDiscreteStates` until no update is needed. Returns
    /// the next time event and whether the states changed.
    fn event_iteration(&self) -> (Option<f64>, bool) {
        let mut changed_any = false;
        for _ in 0..100 {
            let (mut need, mut term, mut nominals, mut changed, mut defined, mut next) =
                (true, true, true, false, false, f64::NAN);
            ok(unsafe {
                fmi3UpdateDiscreteStates(
                    self.inst,
                    &mut need,
                    &mut term,
                    &mut nominals,
                    &mut changed,
                    &mut defined,
                    &mut next,
                )
            });
            assert!(!term && !nominals);
            changed_any |= changed;
            if !need {
                return (defined.then_some(next), changed_any);
            }
        }
        panic!("the event iteration did not settle");
    }

    /// Simulate to `stop` in RK4 steps of `h`; see the module docs.
    fn simulate(&self, stop: f64, h: f64) -> Run {
        let inst = self.inst;
        ok(unsafe { fmi3EnterInitializationMode(inst, false, 0.0, 0.0, true, stop) });
        ok(unsafe { fmi3ExitInitializationMode(inst) });
        let (mut next_te, mut states_changed) = self.event_iteration();
        ok(unsafe { fmi3EnterContinuousTimeMode(inst) });
        let mut run = Run {
            state_events: vec![],
            time_events: vec![],
            states_changed: false,
            t: 0.0,
            x: self.states(),
        };
        let crossed =
            |a: &[f64], b: &[f64]| a.iter().zip(b).any(|(p, q)| (*p >= 0.0) != (*q >= 0.0));
        let mut z = self.indicators(run.t, &run.x);
        while run.t < stop {
            let t1 = (run.t + h).min(stop).min(next_te.unwrap_or(f64::INFINITY));
            let x1 = self.rk4(run.t, &run.x, t1 - run.t);
            let z1 = self.indicators(t1, &x1);
            let (t, x) = if crossed(&z, &z1) {
                let (mut lo, mut hi) = (run.t, t1);
                while hi - lo > 1e-10 {
                    let mid = 0.5 * (lo + hi);
                    let xm = self.rk4(run.t, &run.x, mid - run.t);
                    if crossed(&z, &self.indicators(mid, &xm)) {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                run.state_events.push(hi);
                (hi, self.rk4(run.t, &run.x, hi - run.t))
            } else {
                (t1, x1)
            };
            self.set(t, &x);
            let time_event = next_te == Some(t);
            if time_event {
                run.time_events.push(t);
            }
            if time_event || run.state_events.last() == Some(&t) {
                ok(unsafe { fmi3EnterEventMode(inst) });
                let (next, changed) = self.event_iteration();
                next_te = next;
                states_changed |= changed;
                ok(unsafe { fmi3EnterContinuousTimeMode(inst) });
                run.x = self.states();
            } else {
                let (mut enter, mut term) = (true, true);
                ok(unsafe { fmi3CompletedIntegratorStep(inst, true, &mut enter, &mut term) });
                assert!(!enter && !term);
                run.x = x;
            }
            run.t = t;
            z = self.indicators(run.t, &run.x);
        }
        run.states_changed = states_changed;
        run
    }

    fn get(&self, vrs: &[u32]) -> Vec<f64> {
        let mut v = vec![f64::NAN; vrs.len()];
        ok(unsafe { fmi3GetFloat64(self.inst, vrs.as_ptr(), vrs.len(), v.as_mut_ptr(), v.len()) });
        v
    }
}

impl Drop for Importer {
    fn drop(&mut self) {
        unsafe {
            fmi3Terminate(self.inst);
            fmi3FreeInstance(self.inst);
        }
    }
}

fn importer(dir: &Path, token: &str) -> Importer {
    let inst = instantiate(dir, token);
    let (mut nx, mut nz) = (usize::MAX, usize::MAX);
    ok(unsafe { fmi3GetNumberOfContinuousStates(inst, &mut nx) });
    ok(unsafe { fmi3GetNumberOfEventIndicators(inst, &mut nz) });
    Importer { inst, nx, nz }
}

// mech_clutch_lock's value references: 0 time, 1..=5 parameters, 6 clutch.mode,
// 7 clutch.tau, 8 clutch.w_rel, 9 J1.w, 10 J2.w, then the states.

#[test]
fn clutch_locks_at_the_native_runs_event_time() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read(root.join("models/netlists/mech_clutch_lock.json")).unwrap();
    let (dir, token) = resources("clutch", &text);
    let me = importer(&dir, &token);
    // Two inertias (positions, speeds), the clutch's friction work; three guards.
    assert_eq!((me.nx, me.nz), (5, 3));
    let run = me.simulate(3.0, 1e-3);

    let d = drivelink_netlist::load_file(&dir.join("model.json")).unwrap();
    let mut m = drivelink_core::compile(&d, &drivelink_blocks::registry()).unwrap();
    let native = m.run();
    let lock: Vec<f64> = native
        .events_of("clutch", EventTag::Lock)
        .map(|e| e.time)
        .collect();
    assert_eq!(lock.len(), 1, "{:?}", native.events);
    assert_eq!(run.state_events.len(), 1, "{:?}", run.state_events);
    let t_lock = run.state_events[0];
    assert!(
        (t_lock - lock[0]).abs() < 1e-6,
        "ME lock at {t_lock} s, native run at {} s",
        lock[0]
    );
    // Closed form: dw J1 J2 / ((J1 + J2) T) with T = mu fn cgeo = 5 N*m.
    assert!((t_lock - 4.0 / 3.0).abs() < 1e-6, "lock at {t_lock} s");
    assert!(run.time_events.is_empty());
    // Locked: both at the momentum-weighted speed J1 w0 / (J1 + J2), the clutch in mode 0.
    let v = me.get(&[0, 6, 9, 10]);
    assert_eq!(v[0], 3.0);
    assert_eq!(v[1], 0.0, "clutch.mode");
    for w in &v[2..] {
        assert!((w - 10.0 / 3.0).abs() < 1e-9, "locked speed {w}");
    }
    // The speeds are the states 2 and 3.
    assert!((run.x[2] - run.x[3]).abs() < 1e-12, "{:?}", run.x);
}

#[test]
fn parameter_set_before_initialization_moves_the_lock() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read(root.join("models/netlists/mech_clutch_lock.json")).unwrap();
    let (dir, token) = resources("param", &text);
    let me = importer(&dir, &token);
    // J1 = 2 kg*m^2: the lock at dw J1 J2 / ((J1 + J2) T) = 10*2*2/(4*5) = 2 s, at the speed
    // J1 w0 / (J1 + J2) = 5 rad/s.
    ok(unsafe { fmi3SetFloat64(me.inst, [1u32].as_ptr(), 1, [2.0].as_ptr(), 1) });
    let run = me.simulate(3.0, 1e-3);
    assert_eq!(run.state_events.len(), 1, "{:?}", run.state_events);
    assert!(
        (run.state_events[0] - 2.0).abs() < 1e-6,
        "{:?}",
        run.state_events
    );
    for w in me.get(&[9, 10]) {
        assert!((w - 5.0).abs() < 1e-9, "locked speed {w}");
    }
}

const STEP_TORQUE: &str = r#"{
  "drivelink": 1, "name": "step_torque",
  "solver": { "stop_time": 2 },
  "blocks": [
    { "name": "J", "type": "Inertia", "params": { "J": 2 } },
    { "name": "src", "type": "TorqueSource" },
    { "name": "step", "type": "Step", "params": { "time": 1, "after": 4 } }
  ],
  "connections": [["step.y", "src.tau"], ["src.flange", "J.flange"]],
  "log": ["J.w", "step.y"]
}"#;

#[test]
fn step_time_is_announced_as_the_next_event_time() {
    let (dir, token) = resources("step", STEP_TORQUE.as_bytes());
    let me = importer(&dir, &token);
    // Steps of 0.3 s: the time event at 1 s is not on the grid, the importer must stop there.
    let run = me.simulate(2.0, 0.3);
    assert_eq!(run.time_events, [1.0]);
    assert!(run.state_events.is_empty());
    assert!(!run.states_changed);
    // 4 N*m on 2 kg*m^2 from t = 1 s: w = 2 (t - 1) = 2 rad/s at 2 s (RK4 is exact here).
    let v = me.get(&[0, 1, 2]);
    assert_eq!(v[0], 2.0);
    assert!((v[1] - 2.0).abs() < 1e-12, "J.w = {}", v[1]);
    assert_eq!(v[2], 4.0, "step.y");
}

#[test]
fn model_exchange_calls_out_of_order_are_errors() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read(root.join("models/netlists/mech_clutch_lock.json")).unwrap();
    let (dir, token) = resources("order", &text);
    let me = importer(&dir, &token);
    let mut x = [0.0; 5];
    // No states before initialization, and a wrong count is refused.
    assert_eq!(
        unsafe { fmi3GetContinuousStates(me.inst, x.as_mut_ptr(), 5) },
        ERROR
    );
    assert!(logged().contains("fmi3GetContinuousStates is not allowed in phase Instantiated"));
    ok(unsafe { fmi3EnterInitializationMode(me.inst, false, 0.0, 0.0, false, 0.0) });
    ok(unsafe { fmi3ExitInitializationMode(me.inst) });
    assert_eq!(
        unsafe { fmi3GetContinuousStates(me.inst, x.as_mut_ptr(), 4) },
        ERROR
    );
    assert!(logged().contains("fmi3GetContinuousStates: 4 values for 5 continuous states"));
    // Co-Simulation's step is not served by a Model Exchange instance.
    let (mut a, mut b, mut c, mut last) = (false, false, false, 0.0);
    assert_eq!(
        unsafe { fmi3DoStep(me.inst, 0.0, 0.1, true, &mut a, &mut b, &mut c, &mut last) },
        ERROR
    );
    let nan = [f64::NAN, 0.0, 0.0, 0.0, 0.0];
    ok(unsafe { fmi3EnterContinuousTimeMode(me.inst) });
    assert_eq!(
        unsafe { fmi3SetContinuousStates(me.inst, nan.as_ptr(), 5) },
        ERROR
    );
    assert!(logged().contains("state 0 = NaN is not finite"));
}
