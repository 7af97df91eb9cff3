//! The FMI 3.0 C interface, declared by hand from the standard's headers
//! (`fmi3FunctionTypes.h`): every function of the standard is exported (importers look
//! them all up), the ones this library does not implement log why and return
//! `fmi3Error`. A panic never crosses the boundary: each entry point runs inside
//! `catch_unwind` and turns a panic into `fmi3Error` (or a null instance).

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use crate::instance::{FmuState, Instance, Phase};

/// `fmi3Status`.
pub type Status = i32;
pub const OK: Status = 0;
pub const ERROR: Status = 3;

type Boolean = bool;
type ValueReference = u32;
type InstanceEnv = *mut c_void;
/// `fmi3LogMessageCallback`.
pub type LogMessage = Option<
    unsafe extern "C" fn(
        env: InstanceEnv,
        status: Status,
        category: *const c_char,
        message: *const c_char,
    ),
>;

/// What the C side holds: the logger with the instance.
struct Handle {
    name: String,
    env: InstanceEnv,
    logger: LogMessage,
    inst: Instance,
}

impl Handle {
    fn log(&self, status: Status, message: &str) {
        log_to(self.logger, self.env, &self.name, status, message);
    }
}

/// The log category of a message of `status` (declared in the model description).
pub(crate) fn category(status: Status) -> &'static str {
    if status >= ERROR {
        "logStatusError"
    } else {
        "logEvents"
    }
}

fn log_to(logger: LogMessage, env: InstanceEnv, name: &str, status: Status, message: &str) {
    let Some(f) = logger else { return };
    let text = format!("{name}: {message}").replace('\0', " ");
    let (Ok(c), Ok(m)) = (CString::new(category(status)), CString::new(text)) else {
        return;
    };
    // SAFETY: the importer's callback, called with valid NUL-terminated strings.
    unsafe { f(env, status, c.as_ptr(), m.as_ptr()) };
}

/// What the C side holds of an instance, for [`with_host`]: the instance and a way to
/// log (FMI 3.0's [`Handle`], FMI 2.0's `ffi2::Handle`).
pub(crate) trait Host {
    fn instance(&mut self) -> &mut Instance;
    fn log(&self, status: Status, message: &str);
}

impl Host for Handle {
    fn instance(&mut self) -> &mut Instance {
        &mut self.inst
    }
    fn log(&self, status: Status, message: &str) {
        Handle::log(self, status, message);
    }
}

/// Run `f` on the instance behind `ptr`: errors are logged and return `fmi3Error`, a
/// panic too.
///
/// # Safety
/// `ptr` is null or an instance made by [`fmi3InstantiateCoSimulation`], not freed.
unsafe fn with(ptr: *mut c_void, f: impl FnOnce(&mut Instance) -> Result<(), String>) -> Status {
    with_host::<Handle>(ptr, f)
}

/// [`with`] for any kind of handle `H` (the status codes OK = 0 and Error = 3 are the
/// same in FMI 3.0 and 2.0).
///
/// # Safety
/// `ptr` is null or a live `H` made by `Box::into_raw`.
pub(crate) unsafe fn with_host<H: Host>(
    ptr: *mut c_void,
    f: impl FnOnce(&mut Instance) -> Result<(), String>,
) -> Status {
    if ptr.is_null() {
        return ERROR;
    }
    // SAFETY: a non-null instance is an `H` made by its instantiate function.
    let h = &mut *(ptr as *mut H);
    match catch_unwind(AssertUnwindSafe(|| f(h.instance()))) {
        Ok(Ok(())) => OK,
        Ok(Err(msg)) => {
            h.log(ERROR, &msg);
            ERROR
        }
        Err(_) => {
            h.instance().phase = Phase::Failed;
            h.log(
                ERROR,
                "internal error (a panic in drivelink); please report it",
            );
            ERROR
        }
    }
}

/// A C string argument (`None` for null or non-UTF-8).
pub(crate) unsafe fn text(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    CStr::from_ptr(p).to_str().ok().map(str::to_string)
}

/// A slice from a C array (empty for a null pointer or `n == 0`).
pub(crate) unsafe fn slice<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, n)
    }
}

#[no_mangle]
pub extern "C" fn fmi3GetVersion() -> *const c_char {
    c"3.0".as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetDebugLogging(
    instance: *mut c_void,
    _logging_on: Boolean,
    _n_categories: usize,
    _categories: *const *const c_char,
) -> Status {
    with(instance, |_| Ok(()))
}

/// The resource directory from the `resourcePath` argument (a native path, possibly a
/// `file://` URI as some importers pass).
fn resource_dir(p: &str) -> PathBuf {
    let p = p.strip_prefix("file://").unwrap_or(p);
    PathBuf::from(p)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3InstantiateCoSimulation(
    instance_name: *const c_char,
    instantiation_token: *const c_char,
    resource_path: *const c_char,
    _visible: Boolean,
    _logging_on: Boolean,
    _event_mode_used: Boolean,
    _early_return_allowed: Boolean,
    _required_intermediate_variables: *const ValueReference,
    _n_required_intermediate_variables: usize,
    instance_environment: InstanceEnv,
    log_message: LogMessage,
    _intermediate_update: *const c_void,
) -> *mut c_void {
    instantiate(
        instance_name,
        instantiation_token,
        resource_path,
        instance_environment,
        log_message,
        Instance::new,
    )
}

/// The instance made by `make` from the resource directory and token, as a handle for
/// the C side (null after logging why when it cannot be made).
unsafe fn instantiate(
    instance_name: *const c_char,
    instantiation_token: *const c_char,
    resource_path: *const c_char,
    instance_environment: InstanceEnv,
    log_message: LogMessage,
    make: fn(&std::path::Path, &str) -> Result<Instance, String>,
) -> *mut c_void {
    let name = text(instance_name).unwrap_or_else(|| "drivelink".into());
    let token = text(instantiation_token).unwrap_or_default();
    let Some(res) = text(resource_path) else {
        log_to(
            log_message,
            instance_environment,
            &name,
            ERROR,
            "no resource path given: the FMU's netlist is in its resources/",
        );
        return std::ptr::null_mut();
    };
    let made = catch_unwind(|| make(&resource_dir(&res), &token));
    match made {
        Ok(Ok(inst)) => Box::into_raw(Box::new(Handle {
            name,
            env: instance_environment,
            logger: log_message,
            inst,
        })) as *mut c_void,
        Ok(Err(msg)) => {
            log_to(log_message, instance_environment, &name, ERROR, &msg);
            std::ptr::null_mut()
        }
        Err(_) => {
            log_to(
                log_message,
                instance_environment,
                &name,
                ERROR,
                "internal error (a panic in drivelink) while instantiating",
            );
            std::ptr::null_mut()
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3FreeInstance(instance: *mut c_void) {
    if !instance.is_null() {
        let h = Box::from_raw(instance as *mut Handle);
        let _ = catch_unwind(AssertUnwindSafe(move || drop(h)));
    }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterInitializationMode(
    instance: *mut c_void,
    tolerance_defined: Boolean,
    tolerance: f64,
    start_time: f64,
    stop_time_defined: Boolean,
    stop_time: f64,
) -> Status {
    with(instance, |i| {
        i.enter_initialization(
            tolerance_defined.then_some(tolerance),
            start_time,
            stop_time_defined.then_some(stop_time),
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3ExitInitializationMode(instance: *mut c_void) -> Status {
    with(instance, Instance::exit_initialization)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3Terminate(instance: *mut c_void) -> Status {
    with(instance, Instance::terminate)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3Reset(instance: *mut c_void) -> Status {
    with(instance, |i| {
        i.reset();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterStepMode(instance: *mut c_void) -> Status {
    with(instance, |i| match i.phase {
        Phase::Step => Ok(()),
        p => Err(format!("fmi3EnterStepMode is not allowed in phase {p:?}")),
    })
}

/// Every variable is a scalar: as many values as value references.
pub(crate) fn scalars(function: &str, n_vr: usize, n_values: usize) -> Result<(), String> {
    if n_values == n_vr {
        Ok(())
    } else {
        Err(format!(
            "{function}: {n_values} values for {n_vr} variables (all are scalars)"
        ))
    }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetFloat64(
    instance: *mut c_void,
    vrs: *const ValueReference,
    n_vr: usize,
    values: *mut f64,
    n_values: usize,
) -> Status {
    with(instance, |i| {
        scalars("fmi3GetFloat64", n_vr, n_values)?;
        let vrs = slice(vrs, n_vr);
        if values.is_null() && n_vr > 0 {
            return Err("fmi3GetFloat64: null values array".into());
        }
        for (k, &vr) in vrs.iter().enumerate() {
            *values.add(k) = i.get(vr)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetFloat64(
    instance: *mut c_void,
    vrs: *const ValueReference,
    n_vr: usize,
    values: *const f64,
    n_values: usize,
) -> Status {
    with(instance, |i| {
        scalars("fmi3SetFloat64", n_vr, n_values)?;
        let vals = slice(values, n_values);
        for (&vr, &v) in slice(vrs, n_vr).iter().zip(vals) {
            i.set(vr, v)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3DoStep(
    instance: *mut c_void,
    current_communication_point: f64,
    communication_step_size: f64,
    _no_set_fmu_state_prior: Boolean,
    event_handling_needed: *mut Boolean,
    terminate_simulation: *mut Boolean,
    early_return: *mut Boolean,
    last_successful_time: *mut f64,
) -> Status {
    let mut out = None;
    let status = with(instance, |i| {
        out = Some(i.do_step(current_communication_point, communication_step_size)?);
        Ok(())
    });
    let (terminate, last) = match out {
        Some(o) => (o.terminate, o.last_time),
        None => (false, current_communication_point),
    };
    put(event_handling_needed, false);
    put(terminate_simulation, terminate);
    put(early_return, false);
    put(last_successful_time, last);
    status
}

/// Write `value` through `p` unless it is null.
pub(crate) unsafe fn put<T>(p: *mut T, value: T) {
    if !p.is_null() {
        *p = value;
    }
}

/// A mutable slice from a C array (empty for a null pointer or `n == 0`).
unsafe fn slice_mut<'a, T>(p: *mut T, n: usize) -> &'a mut [T] {
    if p.is_null() || n == 0 {
        &mut []
    } else {
        std::slice::from_raw_parts_mut(p, n)
    }
}

/// An output array of `n` values: null only when `n` is 0.
pub(crate) unsafe fn out_array<'a>(
    function: &str,
    p: *mut f64,
    n: usize,
) -> Result<&'a mut [f64], String> {
    if p.is_null() && n > 0 {
        return Err(format!("{function}: null array for {n} values"));
    }
    Ok(slice_mut(p, n))
}

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterEventMode(instance: *mut c_void) -> Status {
    with(instance, Instance::enter_event_mode)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterContinuousTimeMode(instance: *mut c_void) -> Status {
    with(instance, Instance::enter_continuous_time_mode)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3UpdateDiscreteStates(
    instance: *mut c_void,
    discrete_states_need_update: *mut Boolean,
    terminate_simulation: *mut Boolean,
    nominals_of_continuous_states_changed: *mut Boolean,
    values_of_continuous_states_changed: *mut Boolean,
    next_event_time_defined: *mut Boolean,
    next_event_time: *mut f64,
) -> Status {
    let mut out = None;
    let status = with(instance, |i| {
        out = Some(i.update_discrete_states()?);
        Ok(())
    });
    let o = out.unwrap_or_default();
    put(discrete_states_need_update, o.discrete_states_need_update);
    put(terminate_simulation, o.terminate_simulation);
    put(nominals_of_continuous_states_changed, false);
    put(
        values_of_continuous_states_changed,
        o.values_of_continuous_states_changed,
    );
    put(next_event_time_defined, o.next_event_time.is_some());
    put(next_event_time, o.next_event_time.unwrap_or(0.0));
    status
}

#[no_mangle]
pub unsafe extern "C" fn fmi3CompletedIntegratorStep(
    instance: *mut c_void,
    _no_set_fmu_state_prior_to_current_point: Boolean,
    enter_event_mode: *mut Boolean,
    terminate_simulation: *mut Boolean,
) -> Status {
    put(enter_event_mode, false);
    put(terminate_simulation, false);
    with(instance, Instance::completed_integrator_step)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetTime(instance: *mut c_void, time: f64) -> Status {
    with(instance, |i| i.set_time(time))
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetContinuousStates(
    instance: *mut c_void,
    continuous_states: *const f64,
    n_continuous_states: usize,
) -> Status {
    with(instance, |i| {
        if continuous_states.is_null() && n_continuous_states > 0 {
            return Err("fmi3SetContinuousStates: null states array".into());
        }
        i.set_states(slice(continuous_states, n_continuous_states))
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetContinuousStates(
    instance: *mut c_void,
    continuous_states: *mut f64,
    n_continuous_states: usize,
) -> Status {
    with(instance, |i| {
        let f = "fmi3GetContinuousStates";
        i.get_states(out_array(f, continuous_states, n_continuous_states)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetContinuousStateDerivatives(
    instance: *mut c_void,
    derivatives: *mut f64,
    n_continuous_states: usize,
) -> Status {
    with(instance, |i| {
        let f = "fmi3GetContinuousStateDerivatives";
        i.get_derivatives(out_array(f, derivatives, n_continuous_states)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetEventIndicators(
    instance: *mut c_void,
    event_indicators: *mut f64,
    n_event_indicators: usize,
) -> Status {
    with(instance, |i| {
        let f = "fmi3GetEventIndicators";
        i.get_indicators(out_array(f, event_indicators, n_event_indicators)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetNominalsOfContinuousStates(
    instance: *mut c_void,
    nominals: *mut f64,
    n_continuous_states: usize,
) -> Status {
    with(instance, |i| {
        let f = "fmi3GetNominalsOfContinuousStates";
        i.get_nominals(out_array(f, nominals, n_continuous_states)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetNumberOfContinuousStates(
    instance: *mut c_void,
    n: *mut usize,
) -> Status {
    with(instance, |i| {
        put(n, i.n_states());
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetNumberOfEventIndicators(
    instance: *mut c_void,
    n: *mut usize,
) -> Status {
    with(instance, |i| {
        put(n, i.n_indicators());
        Ok(())
    })
}

/// Log that `what` is not supported and return `fmi3Error`.
unsafe fn unsupported(instance: *mut c_void, what: &str) -> Status {
    let what = what.to_string();
    let st = with(instance, move |_| {
        Err(format!(
            "{what} is not supported by this FMU (drivelink exports Float64 Model Exchange and Co-Simulation FMUs)"
        ))
    });
    if st == OK {
        ERROR
    } else {
        st
    }
}

/// Exported functions that only report "not supported": `name(instance, other args)`.
macro_rules! unsupported {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(instance: *mut c_void, $($arg: $ty),*) -> Status {
            $(let _ = $arg;)*
            unsupported(instance, stringify!($name))
        }
    )*};
}

type P = *const c_void;
type M = *mut c_void;

unsupported! {
    fmi3EnterConfigurationMode();
    fmi3ExitConfigurationMode();
    fmi3EvaluateDiscreteStates();
    fmi3GetFloat32(vr: P, nvr: usize, values: M, nv: usize);
    fmi3GetInt8(vr: P, nvr: usize, values: M, nv: usize);
    fmi3GetUInt8(vr: P, nvr: usize, values: M, nv: usize);
    fmi3GetInt16(vr: P, nvr: usize, values: M, nv: usize);
    fmi3GetUInt16(vr: P, nvr: usize, values: M, nv: usize);
    fmi3GetInt32(vr: P, nvr: usize, values: M, nv: usize);
    fmi3GetUInt32(vr: P, nvr: usize, values: M, nv: usize);
    fmi3GetInt64(vr: P, nvr: usize, values: M, nv: usize);
    fmi3GetUInt64(vr: P, nvr: usize, values: M, nv: usize);
    fmi3GetBoolean(vr: P, nvr: usize, values: M, nv: usize);
    fmi3GetString(vr: P, nvr: usize, values: M, nv: usize);
    fmi3GetBinary(vr: P, nvr: usize, sizes: M, values: M, nv: usize);
    fmi3GetClock(vr: P, nvr: usize, values: M);
    fmi3SetFloat32(vr: P, nvr: usize, values: P, nv: usize);
    fmi3SetInt8(vr: P, nvr: usize, values: P, nv: usize);
    fmi3SetUInt8(vr: P, nvr: usize, values: P, nv: usize);
    fmi3SetInt16(vr: P, nvr: usize, values: P, nv: usize);
    fmi3SetUInt16(vr: P, nvr: usize, values: P, nv: usize);
    fmi3SetInt32(vr: P, nvr: usize, values: P, nv: usize);
    fmi3SetUInt32(vr: P, nvr: usize, values: P, nv: usize);
    fmi3SetInt64(vr: P, nvr: usize, values: P, nv: usize);
    fmi3SetUInt64(vr: P, nvr: usize, values: P, nv: usize);
    fmi3SetBoolean(vr: P, nvr: usize, values: P, nv: usize);
    fmi3SetString(vr: P, nvr: usize, values: P, nv: usize);
    fmi3SetBinary(vr: P, nvr: usize, sizes: P, values: P, nv: usize);
    fmi3SetClock(vr: P, nvr: usize, values: P);
    fmi3GetNumberOfVariableDependencies(vr: u32, n: M);
    fmi3GetVariableDependencies(dependent: u32, elem_dep: M, independents: M, elem_ind: M, kinds: M, n: usize);
    fmi3SerializedFMUStateSize(state: M, size: M);
    fmi3SerializeFMUState(state: M, bytes: M, size: usize);
    fmi3DeserializeFMUState(bytes: P, size: usize, state: M);
    fmi3GetDirectionalDerivative(unknowns: P, nu: usize, knowns: P, nk: usize, seed: P, ns: usize, sens: M, nsens: usize);
    fmi3GetAdjointDerivative(unknowns: P, nu: usize, knowns: P, nk: usize, seed: P, ns: usize, sens: M, nsens: usize);
    fmi3GetIntervalDecimal(vr: P, nvr: usize, intervals: M, qualifiers: M);
    fmi3GetIntervalFraction(vr: P, nvr: usize, counters: M, resolutions: M, qualifiers: M);
    fmi3GetShiftDecimal(vr: P, nvr: usize, shifts: M);
    fmi3GetShiftFraction(vr: P, nvr: usize, counters: M, resolutions: M);
    fmi3SetIntervalDecimal(vr: P, nvr: usize, intervals: P);
    fmi3SetIntervalFraction(vr: P, nvr: usize, counters: P, resolutions: P);
    fmi3SetShiftDecimal(vr: P, nvr: usize, shifts: P);
    fmi3SetShiftFraction(vr: P, nvr: usize, counters: P, resolutions: P);
    fmi3GetOutputDerivatives(vr: P, nvr: usize, orders: P, values: M, nv: usize);
    fmi3ActivateModelPartition(clock: u32, activation_time: f64);
}

#[no_mangle]
pub unsafe extern "C" fn fmi3InstantiateModelExchange(
    instance_name: *const c_char,
    instantiation_token: *const c_char,
    resource_path: *const c_char,
    _visible: Boolean,
    _logging_on: Boolean,
    instance_environment: InstanceEnv,
    log_message: LogMessage,
) -> *mut c_void {
    instantiate(
        instance_name,
        instantiation_token,
        resource_path,
        instance_environment,
        log_message,
        Instance::new_model_exchange,
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi3InstantiateScheduledExecution(
    instance_name: *const c_char,
    _token: *const c_char,
    _resource_path: *const c_char,
    _visible: Boolean,
    _logging_on: Boolean,
    instance_environment: InstanceEnv,
    log_message: LogMessage,
    _clock_update: *const c_void,
    _lock_preemption: *const c_void,
    _unlock_preemption: *const c_void,
) -> *mut c_void {
    let name = text(instance_name).unwrap_or_else(|| "drivelink".into());
    log_to(
        log_message,
        instance_environment,
        &name,
        ERROR,
        "Scheduled Execution is not supported by drivelink FMUs (use Co-Simulation)",
    );
    std::ptr::null_mut()
}

/// `GetFMUState` of FMI 3.0 and 2.0: a new state into `*out` when it is null, else the
/// state `*out` points to overwritten.
///
/// # Safety
/// `ptr` as for [`with_host`]; `out` null or valid, `*out` null or a state made here.
pub(crate) unsafe fn get_state<H: Host>(ptr: *mut c_void, out: *mut *mut c_void) -> Status {
    with_host::<H>(ptr, |inst| {
        if out.is_null() {
            return Err("GetFMUState: the pointer to the state is null".into());
        }
        let s = inst.get_fmu_state()?;
        if (*out).is_null() {
            *out = Box::into_raw(Box::new(s)) as *mut c_void;
        } else {
            // SAFETY: a non-null state is one this function made.
            *(*out as *mut FmuState) = s;
        }
        Ok(())
    })
}

/// `SetFMUState` of FMI 3.0 and 2.0.
///
/// # Safety
/// `ptr` as for [`with_host`]; `state` null or a state made by [`get_state`], not freed.
pub(crate) unsafe fn set_state<H: Host>(ptr: *mut c_void, state: *mut c_void) -> Status {
    with_host::<H>(ptr, |inst| {
        if state.is_null() {
            return Err("SetFMUState: the state is null".into());
        }
        inst.set_fmu_state(&*(state as *const FmuState))
    })
}

/// `FreeFMUState` of FMI 3.0 and 2.0: the state freed and `*state` set to null.
///
/// # Safety
/// `ptr` as for [`with_host`]; `state` null or valid, `*state` null or a state made by
/// [`get_state`], not freed.
pub(crate) unsafe fn free_state<H: Host>(ptr: *mut c_void, state: *mut *mut c_void) -> Status {
    with_host::<H>(ptr, |_| {
        if !state.is_null() && !(*state).is_null() {
            drop(Box::from_raw(*state as *mut FmuState));
            *state = std::ptr::null_mut();
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetFMUState(instance: *mut c_void, state: *mut *mut c_void) -> Status {
    get_state::<Handle>(instance, state)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetFMUState(instance: *mut c_void, state: *mut c_void) -> Status {
    set_state::<Handle>(instance, state)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3FreeFMUState(
    instance: *mut c_void,
    state: *mut *mut c_void,
) -> Status {
    free_state::<Handle>(instance, state)
}
