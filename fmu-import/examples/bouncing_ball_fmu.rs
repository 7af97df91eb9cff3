//! A small Model Exchange FMU that drivelink did not write, for the `Fmu` block's tests,
//! exporting both the FMI 3.0 and the FMI 2.0 functions (the tests pack the same library
//! with an FMI 3.0 and with an FMI 2.0 description): a bouncing ball, `h' = v`,
//! `v' = −g`, with the event indicator `h`; at a contact (`h <= 0` while `v < 0`) the
//! ball bounces, `h := 0`, `v := −e·v` (`valuesOfContinuousStatesChanged`).
//!
//! Two more parameters exercise the rest of the event interface: at `t_catch` (if not
//! negative; announced as `nextEventTime`) the ball is caught (it stays where it is), and
//! after `max_bounces` bounces the FMU asks to terminate the simulation. From `t_fail` on
//! (if not negative) asking for the derivatives is an error (`fmi3Error`, logged).
//!
//! Value references: 0 `time`, 1 `h` (output, state), 2 `der(h)`, 3 `v` (output, state),
//! 4 `der(v)`, 5 `g`, 6 `e`, 7 `h0`, 8 `t_catch`, 9 `max_bounces`, 10 `t_fail`
//! (parameters). `g <= 0`
//! or `e` outside [0, 1] is refused when initialization ends (`fmi3Error`, logged).
//! Built as a cdylib by `cargo test -p drivelink-fmu-import` (`tests/model_exchange.rs`).

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_char, c_void, CString};

type Status = i32;
const OK: Status = 0;
const ERROR: Status = 3;

type LogMessage = Option<unsafe extern "C" fn(*mut c_void, Status, *const c_char, *const c_char)>;

/// FMI 2.0's `fmi2CallbackFunctions` (the logger is variadic).
#[repr(C)]
pub struct Callbacks2 {
    logger: Option<
        unsafe extern "C" fn(*mut c_void, *const c_char, Status, *const c_char, *const c_char, ...),
    >,
    allocate_memory: *const c_void,
    free_memory: *const c_void,
    step_finished: *const c_void,
    env: *mut c_void,
}

/// Where messages go.
enum Log {
    V3(LogMessage, *mut c_void),
    V2(*const Callbacks2),
}

struct Ball {
    log: Log,
    time: f64,
    h: f64,
    v: f64,
    g: f64,
    e: f64,
    h0: f64,
    t_catch: f64,
    max_bounces: f64,
    t_fail: f64,
    bounces: f64,
    caught: bool,
}

impl Ball {
    fn new(log: Log) -> Box<Ball> {
        let mut b = Box::new(Ball {
            log,
            time: 0.0,
            h: 0.0,
            v: 0.0,
            g: 0.0,
            e: 0.0,
            h0: 0.0,
            t_catch: 0.0,
            max_bounces: 0.0,
            t_fail: 0.0,
            bounces: 0.0,
            caught: false,
        });
        b.start_values();
        b
    }
    fn start_values(&mut self) {
        self.time = 0.0;
        self.g = 9.81;
        self.e = 0.8;
        self.h0 = 1.0;
        self.t_catch = -1.0;
        self.max_bounces = 1000.0;
        self.t_fail = -1.0;
        self.h = self.h0;
        self.v = 0.0;
        self.bounces = 0.0;
        self.caught = false;
    }
    fn error(&self, msg: &str) -> Status {
        let (Ok(c), Ok(m)) = (CString::new("logStatusError"), CString::new(msg)) else {
            return ERROR;
        };
        match self.log {
            // SAFETY: the importer's callback with valid C strings.
            Log::V3(Some(f), env) => unsafe { f(env, ERROR, c.as_ptr(), m.as_ptr()) },
            Log::V2(cb) if !cb.is_null() => {
                // SAFETY: the importer's callbacks, alive while the instance is.
                let cb = unsafe { &*cb };
                if let Some(f) = cb.logger {
                    let name = c"ball".as_ptr();
                    // SAFETY: as above; the message as one "%s" argument.
                    unsafe { f(cb.env, name, ERROR, c.as_ptr(), c"%s".as_ptr(), m.as_ptr()) };
                }
            }
            _ => {}
        }
        ERROR
    }
    fn exit_initialization(&mut self) -> Status {
        if self.g.is_nan() || self.g <= 0.0 || !(0.0..=1.0).contains(&self.e) {
            return self.error(&format!(
                "g = {} must be > 0 and e = {} in [0, 1]",
                self.g, self.e
            ));
        }
        self.h = self.h0;
        self.v = 0.0;
        OK
    }
    fn get(&self, vr: u32) -> Result<f64, Status> {
        let (dh, dv) = self.derivatives();
        Ok(match vr {
            0 => self.time,
            1 => self.h,
            2 => dh,
            3 => self.v,
            4 => dv,
            5 => self.g,
            6 => self.e,
            7 => self.h0,
            8 => self.t_catch,
            9 => self.max_bounces,
            10 => self.t_fail,
            vr => return Err(self.error(&format!("no variable with value reference {vr}"))),
        })
    }
    fn set(&mut self, vr: u32, v: f64) -> Result<(), Status> {
        match vr {
            5 => self.g = v,
            6 => self.e = v,
            7 => self.h0 = v,
            8 => self.t_catch = v,
            9 => self.max_bounces = v,
            10 => self.t_fail = v,
            vr => return Err(self.error(&format!("value reference {vr} cannot be set"))),
        }
        Ok(())
    }
    fn derivatives(&self) -> (f64, f64) {
        if self.caught {
            (0.0, 0.0)
        } else {
            (self.v, -self.g)
        }
    }
    fn indicator(&self) -> f64 {
        if self.caught {
            1.0
        } else {
            self.h
        }
    }
    /// One event iteration: (states changed, terminate, next event time).
    fn update(&mut self) -> (bool, bool, Option<f64>) {
        let mut changed = false;
        if !self.caught && self.t_catch >= 0.0 && self.time >= self.t_catch {
            self.caught = true;
            self.v = 0.0;
            changed = true;
        }
        if !self.caught && self.h <= 0.0 && self.v < 0.0 {
            self.h = 0.0;
            self.v *= -self.e;
            self.bounces += 1.0;
            changed = true;
        }
        let terminate = self.bounces >= self.max_bounces;
        let next = (!self.caught && self.t_catch >= 0.0 && self.time < self.t_catch)
            .then_some(self.t_catch);
        (changed, terminate, next)
    }
}

unsafe fn ball<'a>(p: *mut c_void) -> &'a mut Ball {
    &mut *(p as *mut Ball)
}

// ---- FMI 3.0 ----

#[no_mangle]
pub unsafe extern "C" fn fmi3InstantiateModelExchange(
    _name: *const c_char,
    _token: *const c_char,
    _resource_path: *const c_char,
    _visible: bool,
    _logging_on: bool,
    env: *mut c_void,
    log: LogMessage,
) -> *mut c_void {
    Box::into_raw(Ball::new(Log::V3(log, env))) as *mut c_void
}

#[no_mangle]
pub unsafe extern "C" fn fmi3FreeInstance(inst: *mut c_void) {
    if !inst.is_null() {
        drop(Box::from_raw(inst as *mut Ball));
    }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterInitializationMode(
    inst: *mut c_void,
    _tolerance_defined: bool,
    _tolerance: f64,
    start: f64,
    _stop_defined: bool,
    _stop: f64,
) -> Status {
    ball(inst).time = start;
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3ExitInitializationMode(inst: *mut c_void) -> Status {
    ball(inst).exit_initialization()
}

#[no_mangle]
pub unsafe extern "C" fn fmi3Terminate(_inst: *mut c_void) -> Status {
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3Reset(inst: *mut c_void) -> Status {
    ball(inst).start_values();
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetFloat64(
    inst: *mut c_void,
    vrs: *const u32,
    n: usize,
    values: *mut f64,
    _nv: usize,
) -> Status {
    fmi2GetReal(inst, vrs, n, values)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetFloat64(
    inst: *mut c_void,
    vrs: *const u32,
    n: usize,
    values: *const f64,
    _nv: usize,
) -> Status {
    fmi2SetReal(inst, vrs, n, values)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterEventMode(_inst: *mut c_void) -> Status {
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3UpdateDiscreteStates(
    inst: *mut c_void,
    needs_update: *mut bool,
    terminate: *mut bool,
    nominals_changed: *mut bool,
    values_changed: *mut bool,
    next_defined: *mut bool,
    next_time: *mut f64,
) -> Status {
    let (changed, term, next) = ball(inst).update();
    *needs_update = false;
    *terminate = term;
    *nominals_changed = false;
    *values_changed = changed;
    *next_defined = next.is_some();
    *next_time = next.unwrap_or(0.0);
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterContinuousTimeMode(_inst: *mut c_void) -> Status {
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetTime(inst: *mut c_void, t: f64) -> Status {
    ball(inst).time = t;
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetContinuousStates(
    inst: *mut c_void,
    x: *const f64,
    n: usize,
) -> Status {
    let b = ball(inst);
    if n != 2 {
        return b.error(&format!("{n} states given, the ball has 2"));
    }
    b.h = *x;
    b.v = *x.add(1);
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetContinuousStates(
    inst: *mut c_void,
    x: *mut f64,
    n: usize,
) -> Status {
    let b = ball(inst);
    if n != 2 {
        return b.error(&format!("{n} states asked for, the ball has 2"));
    }
    *x = b.h;
    *x.add(1) = b.v;
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetContinuousStateDerivatives(
    inst: *mut c_void,
    dx: *mut f64,
    n: usize,
) -> Status {
    let b = ball(inst);
    if n != 2 {
        return b.error(&format!("{n} derivatives asked for, the ball has 2"));
    }
    if b.t_fail >= 0.0 && b.time >= b.t_fail {
        return b.error(&format!(
            "derivatives asked for at t = {} s, after t_fail = {} s",
            b.time, b.t_fail
        ));
    }
    let (dh, dv) = b.derivatives();
    *dx = dh;
    *dx.add(1) = dv;
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetEventIndicators(
    inst: *mut c_void,
    z: *mut f64,
    n: usize,
) -> Status {
    let b = ball(inst);
    if n != 1 {
        return b.error(&format!("{n} event indicators asked for, the ball has 1"));
    }
    *z = b.indicator();
    OK
}

// ---- FMI 2.0 ----

/// `fmi2EventInfo`.
#[repr(C)]
pub struct EventInfo2 {
    new_discrete_states_needed: i32,
    terminate_simulation: i32,
    nominals_changed: i32,
    values_changed: i32,
    next_event_time_defined: i32,
    next_event_time: f64,
}

#[no_mangle]
pub unsafe extern "C" fn fmi2Instantiate(
    _name: *const c_char,
    fmu_type: i32,
    _guid: *const c_char,
    _resource_location: *const c_char,
    functions: *const Callbacks2,
    _visible: i32,
    _logging_on: i32,
) -> *mut c_void {
    if fmu_type != 0 {
        // Only Model Exchange (fmi2ModelExchange = 0) is offered.
        return std::ptr::null_mut();
    }
    Box::into_raw(Ball::new(Log::V2(functions))) as *mut c_void
}

#[no_mangle]
pub unsafe extern "C" fn fmi2FreeInstance(inst: *mut c_void) {
    fmi3FreeInstance(inst)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetupExperiment(
    inst: *mut c_void,
    _tolerance_defined: i32,
    _tolerance: f64,
    start: f64,
    _stop_defined: i32,
    _stop: f64,
) -> Status {
    ball(inst).time = start;
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi2EnterInitializationMode(_inst: *mut c_void) -> Status {
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi2ExitInitializationMode(inst: *mut c_void) -> Status {
    fmi3ExitInitializationMode(inst)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2Terminate(_inst: *mut c_void) -> Status {
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi2Reset(inst: *mut c_void) -> Status {
    fmi3Reset(inst)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetReal(
    inst: *mut c_void,
    vrs: *const u32,
    n: usize,
    values: *mut f64,
) -> Status {
    let b = ball(inst);
    for i in 0..n {
        match b.get(*vrs.add(i)) {
            Ok(v) => *values.add(i) = v,
            Err(st) => return st,
        }
    }
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetReal(
    inst: *mut c_void,
    vrs: *const u32,
    n: usize,
    values: *const f64,
) -> Status {
    let b = ball(inst);
    for i in 0..n {
        if let Err(st) = b.set(*vrs.add(i), *values.add(i)) {
            return st;
        }
    }
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi2EnterEventMode(_inst: *mut c_void) -> Status {
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi2NewDiscreteStates(inst: *mut c_void, info: *mut EventInfo2) -> Status {
    let (changed, term, next) = ball(inst).update();
    *info = EventInfo2 {
        new_discrete_states_needed: 0,
        terminate_simulation: term as i32,
        nominals_changed: 0,
        values_changed: changed as i32,
        next_event_time_defined: next.is_some() as i32,
        next_event_time: next.unwrap_or(0.0),
    };
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi2EnterContinuousTimeMode(_inst: *mut c_void) -> Status {
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetTime(inst: *mut c_void, t: f64) -> Status {
    fmi3SetTime(inst, t)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetContinuousStates(
    inst: *mut c_void,
    x: *const f64,
    n: usize,
) -> Status {
    fmi3SetContinuousStates(inst, x, n)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetContinuousStates(
    inst: *mut c_void,
    x: *mut f64,
    n: usize,
) -> Status {
    fmi3GetContinuousStates(inst, x, n)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetDerivatives(inst: *mut c_void, dx: *mut f64, n: usize) -> Status {
    fmi3GetContinuousStateDerivatives(inst, dx, n)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetEventIndicators(
    inst: *mut c_void,
    z: *mut f64,
    n: usize,
) -> Status {
    fmi3GetEventIndicators(inst, z, n)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetNumberOfContinuousStates(
    _inst: *mut c_void,
    n: *mut usize,
) -> Status {
    *n = 2;
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetNumberOfEventIndicators(
    _inst: *mut c_void,
    n: *mut usize,
) -> Status {
    *n = 1;
    OK
}
