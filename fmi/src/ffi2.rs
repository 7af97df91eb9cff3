//! The FMI 2.0 C interface (Co-Simulation and Model Exchange), declared by hand from the
//! standard's headers (`fmi2FunctionTypes.h`: `fmi2Boolean` is a C `int`, `fmi2Component`
//! a pointer), over the same [`Instance`] as FMI 3.0: `fmi2SetupExperiment` is
//! [`Instance::setup_experiment`], `fmi2EnterInitializationMode`
//! [`Instance::begin_initialization`], `fmi2NewDiscreteStates`
//! [`Instance::update_discrete_states`], the rest maps one to one.
//!
//! Every function of the standard is exported. A
//! block that stops the run ends `fmi2DoStep` with `fmi2Discard`, after which
//! `fmi2GetBooleanStatus(fmi2Terminated)` is true and
//! `fmi2GetRealStatus(fmi2LastSuccessfulTime)` the stop time, as the standard asks. What
//! is not implemented (FMU state, directional derivatives, input and output derivatives,
//! asynchronous steps, Integer/Boolean/String variables, which this FMU has none of) logs
//! why and returns `fmi2Error`. As for FMI 3.0, a panic never crosses the boundary.
//!
//! The logger is variadic (`printf`-style); it is called with the format `"%s"` and the
//! message as its one argument, so no `%` in a message is ever interpreted.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_char, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use crate::ffi::{
    category, out_array, put, scalars, slice, text, with_host, Host, Status, ERROR, OK,
};
use crate::instance::{Instance, Version};

/// `fmi2Discard`.
pub const DISCARD: Status = 2;

/// `fmi2Boolean`.
pub type Boolean2 = i32;
type ValueReference = u32;
/// `fmi2Component`.
type Component = *mut c_void;
/// `fmi2ComponentEnvironment`.
type Env = *mut c_void;

/// `fmi2CallbackLogger`: `(env, instanceName, status, category, message, ...)`.
pub type Logger =
    Option<unsafe extern "C" fn(Env, *const c_char, Status, *const c_char, *const c_char, ...)>;

/// `fmi2CallbackFunctions`.
#[repr(C)]
pub struct CallbackFunctions {
    pub logger: Logger,
    pub allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    pub free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
    pub step_finished: Option<unsafe extern "C" fn(Env, Status)>,
    pub component_environment: Env,
}

/// `fmi2Type`: `fmi2ModelExchange` = 0, `fmi2CoSimulation` = 1.
pub const MODEL_EXCHANGE: i32 = 0;
pub const CO_SIMULATION: i32 = 1;

/// `fmi2EventInfo`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct EventInfo {
    pub new_discrete_states_needed: Boolean2,
    pub terminate_simulation: Boolean2,
    pub nominals_of_continuous_states_changed: Boolean2,
    pub values_of_continuous_states_changed: Boolean2,
    pub next_event_time_defined: Boolean2,
    pub next_event_time: f64,
}

/// `fmi2StatusKind`.
pub const DO_STEP_STATUS: i32 = 0;
pub const PENDING_STATUS: i32 = 1;
pub const LAST_SUCCESSFUL_TIME: i32 = 2;
pub const TERMINATED: i32 = 3;

/// What an FMI 2.0 component is on the C side: the instance, the logger, and what the
/// status functions report of the last step.
struct Handle {
    name: CString,
    env: Env,
    logger: Logger,
    inst: Instance,
    /// A block stopped the run in the last step (`fmi2Terminated`).
    terminated: bool,
}

impl Host for Handle {
    fn instance(&mut self) -> &mut Instance {
        &mut self.inst
    }
    fn log(&self, status: Status, message: &str) {
        log_to(self.logger, self.env, &self.name, status, message);
    }
}

/// Call the variadic logger with `"%s"` and `message` (the instance name is an argument
/// of its own, not repeated in the message).
fn log_to(logger: Logger, env: Env, name: &CString, status: Status, message: &str) {
    let Some(f) = logger else { return };
    let text = message.replace('\0', " ");
    let (Ok(c), Ok(m)) = (CString::new(category(status)), CString::new(text)) else {
        return;
    };
    // SAFETY: the importer's callback, called with valid NUL-terminated strings and a
    // format whose one conversion is the one `char *` argument passed.
    unsafe {
        f(
            env,
            name.as_ptr(),
            status,
            c.as_ptr(),
            c"%s".as_ptr(),
            m.as_ptr(),
        )
    };
}

/// The handle behind a component (`None` for null).
///
/// # Safety
/// `c` is null or a component made by [`fmi2Instantiate`], not freed.
unsafe fn handle<'a>(c: Component) -> Option<&'a mut Handle> {
    (c as *mut Handle).as_mut()
}

/// Run `f` on the component's instance (errors logged, `fmi2Error`).
unsafe fn with(c: Component, f: impl FnOnce(&mut Instance) -> Result<(), String>) -> Status {
    with_host::<Handle>(c, f)
}

/// The directory of a `resourceLocation` URI: `file:///dir`, `file://localhost/dir` or
/// `file:/dir`, percent-escapes decoded (a plain path is taken as is).
pub fn resource_dir(uri: &str) -> PathBuf {
    let path = if let Some(rest) = uri.strip_prefix("file://") {
        rest.strip_prefix("localhost").unwrap_or(rest)
    } else {
        uri.strip_prefix("file:").unwrap_or(uri)
    };
    let b = path.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |k: usize| b.get(k).and_then(|&x| (x as char).to_digit(16));
        match (b[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (x, _, _) => {
                out.push(x);
                i += 1;
            }
        }
    }
    PathBuf::from(String::from_utf8_lossy(&out).into_owned())
}

#[no_mangle]
pub extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
    c"default".as_ptr()
}

#[no_mangle]
pub extern "C" fn fmi2GetVersion() -> *const c_char {
    c"2.0".as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetDebugLogging(
    c: Component,
    _logging_on: Boolean2,
    _n_categories: usize,
    _categories: *const *const c_char,
) -> Status {
    with(c, |_| Ok(()))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2Instantiate(
    instance_name: *const c_char,
    fmu_type: i32,
    guid: *const c_char,
    resource_location: *const c_char,
    functions: *const CallbackFunctions,
    _visible: Boolean2,
    _logging_on: Boolean2,
) -> Component {
    let name = text(instance_name).unwrap_or_else(|| "drivelink".into());
    let name = CString::new(name.replace('\0', " ")).unwrap_or_default();
    // SAFETY: the importer's callback struct (null is tolerated: nothing is logged).
    let (logger, env) = match functions.as_ref() {
        Some(f) => (f.logger, f.component_environment),
        None => (None, std::ptr::null_mut()),
    };
    let fail = |msg: &str| {
        log_to(logger, env, &name, ERROR, msg);
        std::ptr::null_mut()
    };
    let make = match fmu_type {
        CO_SIMULATION => Instance::new_for,
        MODEL_EXCHANGE => Instance::new_model_exchange_for,
        t => {
            return fail(&format!(
                "unknown fmi2Type {t} (0: Model Exchange, 1: Co-Simulation)"
            ))
        }
    };
    let token = text(guid).unwrap_or_default();
    let Some(res) = text(resource_location) else {
        return fail("no resource location given: the FMU's netlist is in its resources/");
    };
    let made = catch_unwind(|| make(&resource_dir(&res), &token, Version::Fmi2));
    match made {
        Ok(Ok(inst)) => Box::into_raw(Box::new(Handle {
            name,
            env,
            logger,
            inst,
            terminated: false,
        })) as Component,
        Ok(Err(msg)) => fail(&msg),
        Err(_) => fail("internal error (a panic in drivelink) while instantiating"),
    }
}

#[no_mangle]
pub unsafe extern "C" fn fmi2FreeInstance(c: Component) {
    if !c.is_null() {
        let h = Box::from_raw(c as *mut Handle);
        let _ = catch_unwind(AssertUnwindSafe(move || drop(h)));
    }
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetupExperiment(
    c: Component,
    tolerance_defined: Boolean2,
    tolerance: f64,
    start_time: f64,
    stop_time_defined: Boolean2,
    stop_time: f64,
) -> Status {
    with(c, |i| {
        i.setup_experiment(
            (tolerance_defined != 0).then_some(tolerance),
            start_time,
            (stop_time_defined != 0).then_some(stop_time),
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2EnterInitializationMode(c: Component) -> Status {
    with(c, Instance::begin_initialization)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2ExitInitializationMode(c: Component) -> Status {
    with(c, Instance::exit_initialization)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2Terminate(c: Component) -> Status {
    with(c, Instance::terminate)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2Reset(c: Component) -> Status {
    if let Some(h) = handle(c) {
        h.terminated = false;
    }
    with(c, |i| {
        i.reset();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetReal(
    c: Component,
    vrs: *const ValueReference,
    n_vr: usize,
    values: *mut f64,
) -> Status {
    with(c, |i| {
        if (values.is_null() || vrs.is_null()) && n_vr > 0 {
            return Err("fmi2GetReal: null value reference or values array".into());
        }
        for (k, &vr) in slice(vrs, n_vr).iter().enumerate() {
            *values.add(k) = i.get(vr)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetReal(
    c: Component,
    vrs: *const ValueReference,
    n_vr: usize,
    values: *const f64,
) -> Status {
    with(c, |i| {
        let (vrs, vals) = (slice(vrs, n_vr), slice(values, n_vr));
        scalars("fmi2SetReal", vrs.len(), vals.len())?;
        for (&vr, &v) in vrs.iter().zip(vals) {
            i.set(vr, v)?;
        }
        Ok(())
    })
}

/// A getter or setter of a type this FMU has no variables of: nothing to do for no value
/// references, else an error naming the first.
unsafe fn no_variables_of(
    c: Component,
    function: &str,
    vrs: *const ValueReference,
    n: usize,
) -> Status {
    with(c, |_| match slice(vrs, n).first() {
        None => Ok(()),
        Some(vr) => Err(format!(
            "{function}: unknown variable: value reference {vr} (this FMU has only Real \
             variables)"
        )),
    })
}

/// Getters and setters of the types this FMU has no variables of.
macro_rules! no_variables {
    ($($name:ident($values:ty);)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            c: Component,
            vrs: *const ValueReference,
            n_vr: usize,
            _values: $values,
        ) -> Status {
            no_variables_of(c, stringify!($name), vrs, n_vr)
        }
    )*};
}

no_variables! {
    fmi2GetInteger(*mut i32);
    fmi2GetBoolean(*mut Boolean2);
    fmi2GetString(*mut *const c_char);
    fmi2SetInteger(*const i32);
    fmi2SetBoolean(*const Boolean2);
    fmi2SetString(*const *const c_char);
}

#[no_mangle]
pub unsafe extern "C" fn fmi2DoStep(
    c: Component,
    current_communication_point: f64,
    communication_step_size: f64,
    _no_set_fmu_state_prior: Boolean2,
) -> Status {
    let mut stopped = None;
    let status = with(c, |i| {
        let o = i.do_step(current_communication_point, communication_step_size)?;
        stopped = o.terminate.then_some(o.last_time);
        Ok(())
    });
    let Some(h) = handle(c) else { return status };
    h.terminated = stopped.is_some();
    match stopped {
        Some(t) if status == OK => {
            h.log(
                DISCARD,
                &format!(
                    "a block stopped the simulation at t = {t} s (fmi2Terminated is true, \
                     fmi2LastSuccessfulTime is {t} s)"
                ),
            );
            DISCARD
        }
        _ => status,
    }
}

#[no_mangle]
pub unsafe extern "C" fn fmi2CancelStep(c: Component) -> Status {
    with(c, |_| {
        Err(
            "fmi2CancelStep: there is no step to cancel (fmi2DoStep never returns \
             fmi2Pending: it runs to completion)"
                .into(),
        )
    })
}

/// Write `value` to `out` and return OK, or log that the status `kind` is not available
/// from this FMU and return `fmi2Discard`.
unsafe fn status_answer<T>(
    c: Component,
    function: &str,
    kind: i32,
    value: Option<T>,
    out: *mut T,
) -> Status {
    let Some(h) = handle(c) else { return ERROR };
    match value {
        Some(v) if !out.is_null() => {
            *out = v;
            OK
        }
        Some(_) => {
            h.log(ERROR, &format!("{function}: null value pointer"));
            ERROR
        }
        None => {
            h.log(
                DISCARD,
                &format!(
                    "{function}: status kind {kind} is not available (steps run to completion, \
                     never pending)"
                ),
            );
            DISCARD
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetStatus(c: Component, kind: i32, value: *mut Status) -> Status {
    status_answer(c, "fmi2GetStatus", kind, None, value)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetRealStatus(c: Component, kind: i32, value: *mut f64) -> Status {
    let answer = match (handle(c), kind) {
        (Some(h), LAST_SUCCESSFUL_TIME) => Some(h.inst.time()),
        _ => None,
    };
    status_answer(c, "fmi2GetRealStatus", kind, answer, value)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetIntegerStatus(c: Component, kind: i32, value: *mut i32) -> Status {
    status_answer(c, "fmi2GetIntegerStatus", kind, None, value)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetBooleanStatus(
    c: Component,
    kind: i32,
    value: *mut Boolean2,
) -> Status {
    let answer = match (handle(c), kind) {
        (Some(h), TERMINATED) => Some(Boolean2::from(h.terminated)),
        _ => None,
    };
    status_answer(c, "fmi2GetBooleanStatus", kind, answer, value)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetStringStatus(
    c: Component,
    kind: i32,
    value: *mut *const c_char,
) -> Status {
    status_answer(c, "fmi2GetStringStatus", kind, None, value)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2EnterEventMode(c: Component) -> Status {
    with(c, Instance::enter_event_mode)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2NewDiscreteStates(c: Component, info: *mut EventInfo) -> Status {
    let mut out = None;
    let status = with(c, |i| {
        out = Some(i.update_discrete_states()?);
        Ok(())
    });
    let o = out.unwrap_or_default();
    put(
        info,
        EventInfo {
            new_discrete_states_needed: o.discrete_states_need_update.into(),
            terminate_simulation: o.terminate_simulation.into(),
            nominals_of_continuous_states_changed: 0,
            values_of_continuous_states_changed: o.values_of_continuous_states_changed.into(),
            next_event_time_defined: o.next_event_time.is_some().into(),
            next_event_time: o.next_event_time.unwrap_or(0.0),
        },
    );
    status
}

#[no_mangle]
pub unsafe extern "C" fn fmi2EnterContinuousTimeMode(c: Component) -> Status {
    with(c, Instance::enter_continuous_time_mode)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2CompletedIntegratorStep(
    c: Component,
    _no_set_fmu_state_prior_to_current_point: Boolean2,
    enter_event_mode: *mut Boolean2,
    terminate_simulation: *mut Boolean2,
) -> Status {
    put(enter_event_mode, 0);
    put(terminate_simulation, 0);
    with(c, Instance::completed_integrator_step)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetTime(c: Component, time: f64) -> Status {
    with(c, |i| i.set_time(time))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetContinuousStates(c: Component, x: *const f64, nx: usize) -> Status {
    with(c, |i| {
        if x.is_null() && nx > 0 {
            return Err("fmi2SetContinuousStates: null states array".into());
        }
        i.set_states(slice(x, nx))
    })
}

/// An FMI 2.0 Model Exchange getter `name` of `n` values into `p` through `get`.
unsafe fn get_array(
    c: Component,
    name: &str,
    p: *mut f64,
    n: usize,
    get: fn(&mut Instance, &mut [f64]) -> Result<(), String>,
) -> Status {
    with(c, |i| get(i, out_array(name, p, n)?))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetDerivatives(c: Component, dx: *mut f64, nx: usize) -> Status {
    get_array(c, "fmi2GetDerivatives", dx, nx, Instance::get_derivatives)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetEventIndicators(c: Component, z: *mut f64, nz: usize) -> Status {
    get_array(c, "fmi2GetEventIndicators", z, nz, Instance::get_indicators)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetContinuousStates(c: Component, x: *mut f64, nx: usize) -> Status {
    get_array(c, "fmi2GetContinuousStates", x, nx, Instance::get_states)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetNominalsOfContinuousStates(
    c: Component,
    nominals: *mut f64,
    nx: usize,
) -> Status {
    let f = "fmi2GetNominalsOfContinuousStates";
    get_array(c, f, nominals, nx, Instance::get_nominals)
}

/// Log that `what` is not supported and return `fmi2Error`.
unsafe fn unsupported(c: Component, what: &str) -> Status {
    with(c, |_| {
        Err(format!(
            "{what} is not supported by this FMU (drivelink exports Real FMUs without \
             serialized FMU states, directional derivatives or interpolation)"
        ))
    })
}

/// Exported functions that only report "not supported": `name(component, other args)`.
macro_rules! unsupported {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(c: Component, $($arg: $ty),*) -> Status {
            $(let _ = $arg;)*
            unsupported(c, stringify!($name))
        }
    )*};
}

type P = *const c_void;
type M = *mut c_void;

unsupported! {
    fmi2SerializedFMUstateSize(state: M, size: M);
    fmi2SerializeFMUstate(state: M, bytes: M, size: usize);
    fmi2DeSerializeFMUstate(bytes: P, size: usize, state: M);
    fmi2GetDirectionalDerivative(unknowns: P, nu: usize, knowns: P, nk: usize, seed: P, sens: M);
    fmi2SetRealInputDerivatives(vr: P, nvr: usize, orders: P, values: P);
    fmi2GetRealOutputDerivatives(vr: P, nvr: usize, orders: P, values: M);
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetFMUstate(c: Component, state: *mut *mut c_void) -> Status {
    crate::ffi::get_state::<Handle>(c, state)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetFMUstate(c: Component, state: *mut c_void) -> Status {
    crate::ffi::set_state::<Handle>(c, state)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2FreeFMUstate(c: Component, state: *mut *mut c_void) -> Status {
    crate::ffi::free_state::<Handle>(c, state)
}
