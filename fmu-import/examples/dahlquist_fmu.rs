//! A small FMU that drivelink did not write, for the `Fmu` block's tests,
//! exporting both the FMI 3.0 and the FMI 2.0 functions (the tests pack the same library
//! under `binaries/x86_64-linux/` with an FMI 3.0 description and under
//! `binaries/linux64/` with an FMI 2.0 one): Dahlquist's test equation with an input, `dx/dt = −k·x + u`, stepped exactly
//! (`u` is constant over a communication step:
//! `x(t+h) = x·e^(−k·h) + u·(1 − e^(−k·h))/k`), with a direct-feedthrough output `y = 2·u`.
//! The same model is also served as Model Exchange (`fmi3InstantiateModelExchange`, FMI
//! 2.0 `fmi2Instantiate` as `fmi2ModelExchange`): one continuous state `x` with the
//! derivative `−k·x + u`, no event indicators, no events.
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
use std::path::Path;

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

#[derive(PartialEq)]
enum Phase {
    Instantiated,
    Init,
    Step,
}

struct Dq {
    log: Log,
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
                    let name = c"dahlquist".as_ptr();
                    // SAFETY: as above; the message as one "%s" argument.
                    unsafe { f(cb.env, name, ERROR, c.as_ptr(), c"%s".as_ptr(), m.as_ptr()) };
                }
            }
            _ => {}
        }
        ERROR
    }
    fn new(log: Log, resource_dir: Option<String>) -> Option<Box<Dq>> {
        let mut s = Box::new(Dq {
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
        let Some(dir) = resource_dir else {
            s.error("no resource path: resources/x0.txt is needed");
            return None;
        };
        let file = Path::new(&dir).join("x0.txt");
        match std::fs::read_to_string(&file).map(|t| t.trim().parse::<f64>()) {
            Ok(Ok(v)) => s.x0_start = v,
            _ => {
                s.error(&format!("cannot read a number from {}", file.display()));
                return None;
            }
        }
        s.start_values();
        Some(s)
    }
    fn exit_initialization(&mut self) -> Status {
        if self.k.is_nan() || self.k < 0.0 {
            return self.error(&format!("k = {} must be >= 0", self.k));
        }
        self.x = self.x0;
        self.phase = Phase::Step;
        OK
    }
    fn get(&self, vr: u32) -> Result<f64, Status> {
        Ok(match vr {
            0 => self.time,
            1 => self.x,
            2 => self.k,
            3 => self.x0,
            4 => self.u,
            5 => 2.0 * self.u,
            6 => self.limit,
            vr => return Err(self.error(&format!("no variable with value reference {vr}"))),
        })
    }
    fn set(&mut self, vr: u32, v: f64) -> Result<(), Status> {
        if matches!(vr, 2 | 3 | 6) && self.phase == Phase::Step {
            return Err(self.error(&format!("parameter {vr} is fixed after initialization")));
        }
        match vr {
            2 => self.k = v,
            3 => self.x0 = v,
            4 => self.u = v,
            6 => self.limit = v,
            vr => return Err(self.error(&format!("value reference {vr} cannot be set"))),
        }
        Ok(())
    }
    fn step(&mut self, t: f64, h: f64) -> Status {
        if self.phase != Phase::Step {
            return self.error("a step before the end of initialization");
        }
        if (t - self.time).abs() > 1e-9 * t.abs().max(1.0) {
            return self.error(&format!(
                "step from t = {t} but the FMU is at {}",
                self.time
            ));
        }
        if self.u.abs() > self.limit {
            return self.error(&format!(
                "input u = {} exceeds the limit {}",
                self.u, self.limit
            ));
        }
        let e = (-self.k * h).exp();
        self.x = if self.k == 0.0 {
            self.x + self.u * h
        } else {
            self.x * e + self.u * (1.0 - e) / self.k
        };
        self.time = t + h;
        OK
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
    let dir = (!resource_path.is_null())
        .then(|| CStr::from_ptr(resource_path).to_string_lossy().into_owned());
    match Dq::new(Log::V3(log, env), dir) {
        Some(s) => Box::into_raw(s) as *mut c_void,
        None => std::ptr::null_mut(),
    }
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
    dq(inst).exit_initialization()
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
    let st = s.step(t, h);
    if st != OK {
        return st;
    }
    *event = false;
    *terminate = false;
    *early = false;
    *last = s.time;
    OK
}

// ---- FMI 2.0 ----

#[no_mangle]
pub unsafe extern "C" fn fmi2Instantiate(
    _name: *const c_char,
    fmu_type: i32,
    _guid: *const c_char,
    resource_location: *const c_char,
    functions: *const Callbacks2,
    _visible: i32,
    _logging_on: i32,
) -> *mut c_void {
    let log = Log::V2(functions);
    let uri = (!resource_location.is_null()).then(|| {
        CStr::from_ptr(resource_location)
            .to_string_lossy()
            .into_owned()
    });
    if fmu_type != 0 && fmu_type != 1 {
        // fmi2ModelExchange = 0, fmi2CoSimulation = 1.
        return std::ptr::null_mut();
    }
    let dir = uri.map(|u| u.strip_prefix("file://").unwrap_or(&u).to_string());
    match Dq::new(log, dir) {
        Some(s) => Box::into_raw(s) as *mut c_void,
        None => std::ptr::null_mut(),
    }
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
    dq(inst).time = start;
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi2EnterInitializationMode(inst: *mut c_void) -> Status {
    dq(inst).phase = Phase::Init;
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi2ExitInitializationMode(inst: *mut c_void) -> Status {
    dq(inst).exit_initialization()
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
    let s = dq(inst);
    for i in 0..n {
        match s.get(*vrs.add(i)) {
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
    let s = dq(inst);
    for i in 0..n {
        if let Err(st) = s.set(*vrs.add(i), *values.add(i)) {
            return st;
        }
    }
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi2DoStep(inst: *mut c_void, t: f64, h: f64, _no_prior: i32) -> Status {
    dq(inst).step(t, h)
}

// ---- Model Exchange (FMI 3.0, and FMI 2.0 through the same functions) ----

#[no_mangle]
pub unsafe extern "C" fn fmi3InstantiateModelExchange(
    _name: *const c_char,
    _token: *const c_char,
    resource_path: *const c_char,
    _visible: bool,
    _logging_on: bool,
    env: *mut c_void,
    log: LogMessage,
) -> *mut c_void {
    let dir = (!resource_path.is_null())
        .then(|| CStr::from_ptr(resource_path).to_string_lossy().into_owned());
    match Dq::new(Log::V3(log, env), dir) {
        Some(s) => Box::into_raw(s) as *mut c_void,
        None => std::ptr::null_mut(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterEventMode(_inst: *mut c_void) -> Status {
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3UpdateDiscreteStates(
    _inst: *mut c_void,
    needs_update: *mut bool,
    terminate: *mut bool,
    nominals_changed: *mut bool,
    values_changed: *mut bool,
    next_defined: *mut bool,
    _next_time: *mut f64,
) -> Status {
    *needs_update = false;
    *terminate = false;
    *nominals_changed = false;
    *values_changed = false;
    *next_defined = false;
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterContinuousTimeMode(_inst: *mut c_void) -> Status {
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetTime(inst: *mut c_void, t: f64) -> Status {
    dq(inst).time = t;
    OK
}

/// Check the state count `n` (one state).
fn one_state(s: &Dq, n: usize) -> Status {
    if n == 1 {
        OK
    } else {
        s.error(&format!("{n} states, the model has 1"))
    }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetContinuousStates(
    inst: *mut c_void,
    x: *const f64,
    n: usize,
) -> Status {
    let s = dq(inst);
    let st = one_state(s, n);
    if st == OK {
        s.x = *x;
    }
    st
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetContinuousStates(
    inst: *mut c_void,
    x: *mut f64,
    n: usize,
) -> Status {
    let s = dq(inst);
    let st = one_state(s, n);
    if st == OK {
        *x = s.x;
    }
    st
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetContinuousStateDerivatives(
    inst: *mut c_void,
    dx: *mut f64,
    n: usize,
) -> Status {
    let s = dq(inst);
    let st = one_state(s, n);
    if st == OK {
        *dx = -s.k * s.x + s.u;
    }
    st
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetEventIndicators(
    inst: *mut c_void,
    _z: *mut f64,
    n: usize,
) -> Status {
    if n == 0 {
        OK
    } else {
        dq(inst).error(&format!(
            "{n} event indicators asked for, the model has none"
        ))
    }
}

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
pub unsafe extern "C" fn fmi2EnterEventMode(_inst: *mut c_void) -> Status {
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi2NewDiscreteStates(
    _inst: *mut c_void,
    info: *mut EventInfo2,
) -> Status {
    *info = EventInfo2 {
        new_discrete_states_needed: 0,
        terminate_simulation: 0,
        nominals_changed: 0,
        values_changed: 0,
        next_event_time_defined: 0,
        next_event_time: 0.0,
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
    *n = 1;
    OK
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetNumberOfEventIndicators(
    _inst: *mut c_void,
    n: *mut usize,
) -> Status {
    *n = 0;
    OK
}
