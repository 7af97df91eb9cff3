//! A small FMI 3.0 Co-Simulation FMU that drivelink did not write, for the `Fmu` block's
//! tests: Dahlquist's test equation with an input, `dx/dt = −k·x + u`, stepped exactly
//! (`u` is constant over a communication step:
//! `x(t+h) = x·e^(−k·h) + u·(1 − e^(−k·h))/k`), with a direct-feedthrough output `y = 2·u`.
//!
//! Built as a cdylib by `cargo test -p drivelink-fmu-import` (examples are built with the
//! tests); the tests pack it into an FMU with its model description
//! (`tests/dahlquist.rs`). Value references: 0 `time`, 1 `x` (output), 2 `k`, 3 `x0`,
//! 6 `limit` (parameters), 4 `u` (input), 5 `y` (output). The FMU checks what a real one
//! would: `k >= 0` when leaving initialization, `|u| <= limit` at every step (else
//! `fmi3Error` with a logged message), the communication point, and the unknown value
//! references. `x0` starts at the number in `resources/x0.txt` (so the resource path
//! the importer passes is used).

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_char, c_void, CStr, CString};

type Status = i32;
const OK: Status = 0;
const ERROR: Status = 3;

type LogMessage = Option<unsafe extern "C" fn(*mut c_void, Status, *const c_char, *const c_char)>;

#[derive(PartialEq)]
enum Phase {
    Instantiated,
    Init,
    Step,
}

struct Dq {
    env: *mut c_void,
    log: LogMessage,
    phase: Phase,
    time: f64,
    x: f64,
    k: f64,
    x0: f64,
    x0_start: f64,
    u: f64,
    limit: f64,
}

impl Dq {
    fn error(&self, msg: &str) -> Status {
        if let (Some(f), Ok(c), Ok(m)) =
            (self.log, CString::new("logStatusError"), CString::new(msg))
        {
            // SAFETY: the importer's callback with valid C strings.
            unsafe { f(self.env, ERROR, c.as_ptr(), m.as_ptr()) };
        }
        ERROR
    }
    fn start_values(&mut self) {
        self.time = 0.0;
        self.k = 1.0;
        self.x0 = self.x0_start;
        self.x = self.x0;
        self.u = 0.0;
        self.limit = 1000.0;
        self.phase = Phase::Instantiated;
    }
}

unsafe fn dq<'a>(p: *mut c_void) -> &'a mut Dq {
    &mut *(p as *mut Dq)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3InstantiateCoSimulation(
    _name: *const c_char,
    _token: *const c_char,
    resource_path: *const c_char,
    _visible: bool,
    _logging_on: bool,
    _event_mode_used: bool,
    _early_return_allowed: bool,
    _required: *const u32,
    _n_required: usize,
    env: *mut c_void,
    log: LogMessage,
    _intermediate: *const c_void,
) -> *mut c_void {
    let mut s = Box::new(Dq {
        env,
        log,
        phase: Phase::Instantiated,
        time: 0.0,
        x: 1.0,
        k: 1.0,
        x0: 1.0,
        x0_start: 1.0,
        u: 0.0,
        limit: 1000.0,
    });
    if resource_path.is_null() {
        s.error("no resource path: resources/x0.txt is needed");
        return std::ptr::null_mut();
    }
    let dir = CStr::from_ptr(resource_path).to_string_lossy().into_owned();
    match std::fs::read_to_string(format!("{dir}x0.txt")).map(|t| t.trim().parse::<f64>()) {
        Ok(Ok(v)) => s.x0_start = v,
        _ => {
            s.error(&format!("cannot read a number from {dir}x0.txt"));
            return std::ptr::null_mut();
        }
    }
    s.start_values();
    Box::into_raw(s) as *mut c_void
}

#[no_mangle]
pub unsafe extern "C" fn fmi3FreeInstance(inst: *mut c_void) {
    if !inst.is_null() {
        drop(Box::from_raw(inst as *mut Dq));
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
    let s = dq(inst);
    s.time = start;
    s.phase = Phase::Init;
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3ExitInitializationMode(inst: *mut c_void) -> Status {
    let s = dq(inst);
    if s.k.is_nan() || s.k < 0.0 {
        return s.error(&format!("k = {} must be >= 0", s.k));
    }
    s.x = s.x0;
    s.phase = Phase::Step;
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3Terminate(_inst: *mut c_void) -> Status {
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3Reset(inst: *mut c_void) -> Status {
    dq(inst).start_values();
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
    let s = dq(inst);
    for i in 0..n {
        *values.add(i) = match *vrs.add(i) {
            0 => s.time,
            1 => s.x,
            2 => s.k,
            3 => s.x0,
            4 => s.u,
            5 => 2.0 * s.u,
            6 => s.limit,
            vr => return s.error(&format!("no variable with value reference {vr}")),
        };
    }
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetFloat64(
    inst: *mut c_void,
    vrs: *const u32,
    n: usize,
    values: *const f64,
    _nv: usize,
) -> Status {
    let s = dq(inst);
    for i in 0..n {
        let (vr, v) = (*vrs.add(i), *values.add(i));
        if matches!(vr, 2 | 3 | 6) && s.phase == Phase::Step {
            return s.error(&format!("parameter {vr} is fixed after initialization"));
        }
        match vr {
            2 => s.k = v,
            3 => s.x0 = v,
            4 => s.u = v,
            6 => s.limit = v,
            vr => return s.error(&format!("value reference {vr} cannot be set")),
        }
    }
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3DoStep(
    inst: *mut c_void,
    t: f64,
    h: f64,
    _no_prior: bool,
    event: *mut bool,
    terminate: *mut bool,
    early: *mut bool,
    last: *mut f64,
) -> Status {
    let s = dq(inst);
    if s.phase != Phase::Step {
        return s.error("fmi3DoStep before the end of initialization");
    }
    if (t - s.time).abs() > 1e-9 * t.abs().max(1.0) {
        return s.error(&format!("step from t = {t} but the FMU is at {}", s.time));
    }
    if s.u.abs() > s.limit {
        return s.error(&format!("input u = {} exceeds the limit {}", s.u, s.limit));
    }
    let e = (-s.k * h).exp();
    s.x = if s.k == 0.0 {
        s.x + s.u * h
    } else {
        s.x * e + s.u * (1.0 - e) / s.k
    };
    s.time = t + h;
    *event = false;
    *terminate = false;
    *early = false;
    *last = s.time;
    OK
}
