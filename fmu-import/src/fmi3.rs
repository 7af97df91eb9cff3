//! The FMI 3.0 Co-Simulation and Model Exchange functions drivelink calls, declared by
//! hand from the standard's `fmi3FunctionTypes.h`, loaded from the FMU's shared library
//! with `libloading` (the functions of the interface imported; an FMU offering only one
//! need not export the other's), and an [`Instance`] that owns one FMU instance of either
//! interface: every call's status is checked, and a failed call's error carries the last
//! messages the FMU logged through the `logMessage` callback.

#![allow(non_snake_case)]

use std::ffi::{c_char, c_void, CString};
use std::path::Path;
use std::sync::Arc;

use crate::cosim::{check, CallError, CoSim, LogBuf, Phase};
use crate::me::{EventInfo, Kind, ModelExchange};

type Status = i32;
type ValueReference = u32;
type InstanceEnv = *mut c_void;
type Inst = *mut c_void;

/// `fmi3LogMessageCallback`.
type LogMessage = unsafe extern "C" fn(
    env: InstanceEnv,
    status: Status,
    category: *const c_char,
    message: *const c_char,
);

type InstantiateCoSimulation = unsafe extern "C" fn(
    instance_name: *const c_char,
    instantiation_token: *const c_char,
    resource_path: *const c_char,
    visible: bool,
    logging_on: bool,
    event_mode_used: bool,
    early_return_allowed: bool,
    required_intermediate_variables: *const ValueReference,
    n_required_intermediate_variables: usize,
    instance_environment: InstanceEnv,
    log_message: Option<LogMessage>,
    intermediate_update: *const c_void,
) -> Inst;
type FreeInstance = unsafe extern "C" fn(Inst);
type EnterInitializationMode = unsafe extern "C" fn(Inst, bool, f64, f64, bool, f64) -> Status;
type Simple = unsafe extern "C" fn(Inst) -> Status;
type GetFloat64 =
    unsafe extern "C" fn(Inst, *const ValueReference, usize, *mut f64, usize) -> Status;
type SetFloat64 =
    unsafe extern "C" fn(Inst, *const ValueReference, usize, *const f64, usize) -> Status;
type DoStep =
    unsafe extern "C" fn(Inst, f64, f64, bool, *mut bool, *mut bool, *mut bool, *mut f64) -> Status;
type InstantiateModelExchange = unsafe extern "C" fn(
    instance_name: *const c_char,
    instantiation_token: *const c_char,
    resource_path: *const c_char,
    visible: bool,
    logging_on: bool,
    instance_environment: InstanceEnv,
    log_message: Option<LogMessage>,
) -> Inst;
type SetTime = unsafe extern "C" fn(Inst, f64) -> Status;
type GetCount = unsafe extern "C" fn(Inst, *mut usize) -> Status;
type SetStates = unsafe extern "C" fn(Inst, *const f64, usize) -> Status;
type GetArray = unsafe extern "C" fn(Inst, *mut f64, usize) -> Status;
type UpdateDiscreteStates = unsafe extern "C" fn(
    Inst,
    *mut bool,
    *mut bool,
    *mut bool,
    *mut bool,
    *mut bool,
    *mut f64,
) -> Status;

/// The Model Exchange functions.
#[derive(Clone, Copy)]
struct MeFns {
    instantiate: InstantiateModelExchange,
    enter_event_mode: Simple,
    update_discrete_states: UpdateDiscreteStates,
    enter_continuous_time_mode: Simple,
    set_time: SetTime,
    set_continuous_states: SetStates,
    get_continuous_states: GetArray,
    get_derivatives: GetArray,
    get_event_indicators: GetArray,
    number_of_states: GetCount,
    number_of_indicators: GetCount,
}

/// The Co-Simulation functions.
#[derive(Clone, Copy)]
struct CsFns {
    instantiate: InstantiateCoSimulation,
    do_step: DoStep,
}

/// The FMU's library and the functions drivelink calls. The function pointers are valid
/// while the library is loaded, that is while this value lives.
pub struct Api {
    cs: Option<CsFns>,
    me: Option<MeFns>,
    free_instance: FreeInstance,
    enter_initialization_mode: EnterInitializationMode,
    exit_initialization_mode: Simple,
    terminate: Simple,
    reset: Simple,
    get_float64: GetFloat64,
    set_float64: SetFloat64,
    _lib: libloading::Library,
}

impl Api {
    /// Load the shared library at `path` and look up the functions of interface `kind`.
    /// `Err` names what is missing.
    pub fn load(path: &Path, kind: Kind) -> Result<Api, String> {
        // SAFETY: loading an FMU's library runs its initialisers; running foreign code is
        // what importing an FMU means.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())?;
        use crate::cosim::symbol as sym;
        let (mut cs, mut me) = (None, None);
        match kind {
            Kind::CoSimulation => {
                cs = Some(CsFns {
                    instantiate: sym(&lib, "fmi3InstantiateCoSimulation")?,
                    do_step: sym(&lib, "fmi3DoStep")?,
                })
            }
            Kind::ModelExchange => {
                me = Some(MeFns {
                    instantiate: sym(&lib, "fmi3InstantiateModelExchange")?,
                    enter_event_mode: sym(&lib, "fmi3EnterEventMode")?,
                    update_discrete_states: sym(&lib, "fmi3UpdateDiscreteStates")?,
                    enter_continuous_time_mode: sym(&lib, "fmi3EnterContinuousTimeMode")?,
                    set_time: sym(&lib, "fmi3SetTime")?,
                    set_continuous_states: sym(&lib, "fmi3SetContinuousStates")?,
                    get_continuous_states: sym(&lib, "fmi3GetContinuousStates")?,
                    get_derivatives: sym(&lib, "fmi3GetContinuousStateDerivatives")?,
                    get_event_indicators: sym(&lib, "fmi3GetEventIndicators")?,
                    number_of_states: sym(&lib, "fmi3GetNumberOfContinuousStates")?,
                    number_of_indicators: sym(&lib, "fmi3GetNumberOfEventIndicators")?,
                })
            }
        }
        Ok(Api {
            cs,
            me,
            free_instance: sym(&lib, "fmi3FreeInstance")?,
            enter_initialization_mode: sym(&lib, "fmi3EnterInitializationMode")?,
            exit_initialization_mode: sym(&lib, "fmi3ExitInitializationMode")?,
            terminate: sym(&lib, "fmi3Terminate")?,
            reset: sym(&lib, "fmi3Reset")?,
            get_float64: sym(&lib, "fmi3GetFloat64")?,
            set_float64: sym(&lib, "fmi3SetFloat64")?,
            _lib: lib,
        })
    }
}

unsafe extern "C" fn log_message(
    env: InstanceEnv,
    status: Status,
    _category: *const c_char,
    message: *const c_char,
) {
    if !env.is_null() {
        // SAFETY: `env` is the `LogBuf` the instance was created with; it outlives the
        // instance. The message is the FMU's NUL-terminated argument.
        (*(env as *const LogBuf)).push(status, message);
    }
}

/// One FMU instance. Freed (after `fmi3Terminate` if it was stepping) when dropped.
pub struct Instance {
    api: Arc<Api>,
    ptr: Inst,
    log: Box<LogBuf>,
    phase: Phase,
}

// SAFETY: the instance is used by one thread at a time (`&mut self` for every call); the
// FMI standard allows an instance to be called from different threads one after another.
unsafe impl Send for Instance {}
// SAFETY: `&Instance` gives no access to the FMU (every call takes `&mut self`).
unsafe impl Sync for Instance {}

impl Instance {
    /// `fmi3InstantiateCoSimulation` (no event mode, no early return).
    pub fn new(
        api: Arc<Api>,
        name: &str,
        token: &str,
        resources: Option<&Path>,
    ) -> Result<Instance, CallError> {
        let f = "fmi3InstantiateCoSimulation";
        let cs = api.cs.ok_or_else(|| not_loaded(f))?;
        Self::instantiate(api, f, name, token, resources, |name, token, res, env| {
            // SAFETY: valid C strings and callback; the environment outlives the instance.
            unsafe {
                (cs.instantiate)(
                    name,
                    token,
                    res,
                    false,
                    false,
                    false,
                    false,
                    std::ptr::null(),
                    0,
                    env,
                    Some(log_message),
                    std::ptr::null(),
                )
            }
        })
    }

    /// `fmi3InstantiateModelExchange`.
    pub fn new_me(
        api: Arc<Api>,
        name: &str,
        token: &str,
        resources: Option<&Path>,
    ) -> Result<Instance, CallError> {
        let f = "fmi3InstantiateModelExchange";
        let me = api.me.ok_or_else(|| not_loaded(f))?;
        Self::instantiate(api, f, name, token, resources, |name, token, res, env| {
            // SAFETY: as above.
            unsafe { (me.instantiate)(name, token, res, false, false, env, Some(log_message)) }
        })
    }

    /// Instantiate with `call(name, token, resource path, environment)`.
    fn instantiate(
        api: Arc<Api>,
        function: &'static str,
        name: &str,
        token: &str,
        resources: Option<&Path>,
        call: impl FnOnce(*const c_char, *const c_char, *const c_char, InstanceEnv) -> Inst,
    ) -> Result<Instance, CallError> {
        let log = Box::<LogBuf>::default();
        let c = |s: &str| CString::new(s.replace('\0', " ")).unwrap_or_default();
        let (cname, ctoken) = (c(name), c(token));
        // FMI 3.0: an absolute path with a trailing separator.
        let res = resources.map(|p| c(&format!("{}/", p.display())));
        let env = &*log as *const LogBuf as *mut c_void;
        let ptr = call(
            cname.as_ptr(),
            ctoken.as_ptr(),
            res.as_ref().map_or(std::ptr::null(), |r| r.as_ptr()),
            env,
        );
        if ptr.is_null() {
            return Err(CallError {
                function,
                status: "null (no instance)",
                messages: log.take(),
            });
        }
        Ok(Instance {
            api,
            ptr,
            log,
            phase: Phase::Instantiated,
        })
    }

    /// The Model Exchange functions (an instance of a library loaded for them).
    fn me(&self, function: &'static str) -> Result<MeFns, CallError> {
        self.api.me.ok_or_else(|| not_loaded(function))
    }

    fn check(&mut self, function: &'static str, s: Status) -> Result<(), CallError> {
        check(&mut self.phase, &self.log, function, s)
    }
}

impl CoSim for Instance {
    fn phase(&self) -> Phase {
        self.phase
    }

    /// `fmi3EnterInitializationMode` at `start` (no tolerance, no stop time).
    fn enter_initialization(&mut self, start: f64) -> Result<(), CallError> {
        // SAFETY: a live instance (not freed, not fatal: callers check the phase).
        let s = unsafe {
            (self.api.enter_initialization_mode)(self.ptr, false, 0.0, start, false, 0.0)
        };
        self.check("fmi3EnterInitializationMode", s)?;
        self.phase = Phase::Initialization;
        Ok(())
    }

    /// `fmi3ExitInitializationMode`: the instance then steps.
    fn exit_initialization(&mut self) -> Result<(), CallError> {
        // SAFETY: as above.
        let s = unsafe { (self.api.exit_initialization_mode)(self.ptr) };
        self.check("fmi3ExitInitializationMode", s)?;
        self.phase = Phase::Step;
        Ok(())
    }

    /// `fmi3Reset`: back to the instantiated state, every variable at its start value.
    fn reset(&mut self) -> Result<(), CallError> {
        if self.phase == Phase::Step {
            // SAFETY: as above.
            let s = unsafe { (self.api.terminate)(self.ptr) };
            self.check("fmi3Terminate", s)?;
        }
        // SAFETY: as above.
        let s = unsafe { (self.api.reset)(self.ptr) };
        self.check("fmi3Reset", s)?;
        self.phase = Phase::Instantiated;
        Ok(())
    }

    /// `fmi3SetFloat64` of scalars.
    fn set(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), CallError> {
        if vrs.is_empty() {
            return Ok(());
        }
        // SAFETY: as above; the arrays hold `vrs.len()` elements.
        let s = unsafe {
            (self.api.set_float64)(
                self.ptr,
                vrs.as_ptr(),
                vrs.len(),
                values.as_ptr(),
                values.len(),
            )
        };
        self.check("fmi3SetFloat64", s)
    }

    /// `fmi3GetFloat64` of scalars into `values`.
    fn get(&mut self, vrs: &[u32], values: &mut [f64]) -> Result<(), CallError> {
        if vrs.is_empty() {
            return Ok(());
        }
        // SAFETY: as above.
        let s = unsafe {
            (self.api.get_float64)(
                self.ptr,
                vrs.as_ptr(),
                vrs.len(),
                values.as_mut_ptr(),
                values.len(),
            )
        };
        self.check("fmi3GetFloat64", s)
    }

    /// `fmi3DoStep(t, h)`; `Ok(true)` when the FMU asks to terminate the simulation.
    fn do_step(&mut self, t: f64, h: f64) -> Result<bool, CallError> {
        let (mut event, mut terminate, mut early) = (false, false, false);
        let mut last = t;
        let cs = self.api.cs.ok_or_else(|| not_loaded("fmi3DoStep"))?;
        // SAFETY: as above; the out-pointers point at locals.
        let s = unsafe {
            (cs.do_step)(
                self.ptr,
                t,
                h,
                true,
                &mut event,
                &mut terminate,
                &mut early,
                &mut last,
            )
        };
        self.check("fmi3DoStep", s)?;
        Ok(terminate)
    }
}

/// The error of a function of the interface the library was not loaded for.
fn not_loaded(function: &'static str) -> CallError {
    CallError {
        function,
        status: "Error",
        messages: vec!["the FMU's library was loaded for the other interface".into()],
    }
}

impl ModelExchange for Instance {
    fn sizes(&mut self) -> Result<Option<(usize, usize)>, CallError> {
        let f = "fmi3GetNumberOfContinuousStates";
        let me = self.me(f)?;
        let (mut nx, mut nz) = (0usize, 0usize);
        // SAFETY: a live instance; the out-pointers point at locals.
        let s = unsafe { (me.number_of_states)(self.ptr, &mut nx) };
        self.check(f, s)?;
        // SAFETY: as above.
        let s = unsafe { (me.number_of_indicators)(self.ptr, &mut nz) };
        self.check("fmi3GetNumberOfEventIndicators", s)?;
        Ok(Some((nx, nz)))
    }

    fn set_time(&mut self, t: f64) -> Result<(), CallError> {
        let f = "fmi3SetTime";
        let me = self.me(f)?;
        // SAFETY: a live instance (not freed, not fatal: callers check the phase).
        let s = unsafe { (me.set_time)(self.ptr, t) };
        self.check(f, s)
    }

    fn set_states(&mut self, x: &[f64]) -> Result<(), CallError> {
        let f = "fmi3SetContinuousStates";
        let me = self.me(f)?;
        // SAFETY: as above; `x` holds `x.len()` values.
        let s = unsafe { (me.set_continuous_states)(self.ptr, x.as_ptr(), x.len()) };
        self.check(f, s)
    }

    fn get_states(&mut self, x: &mut [f64]) -> Result<(), CallError> {
        let f = "fmi3GetContinuousStates";
        let me = self.me(f)?;
        // SAFETY: as above.
        let s = unsafe { (me.get_continuous_states)(self.ptr, x.as_mut_ptr(), x.len()) };
        self.check(f, s)
    }

    fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), CallError> {
        let f = "fmi3GetContinuousStateDerivatives";
        let me = self.me(f)?;
        // SAFETY: as above.
        let s = unsafe { (me.get_derivatives)(self.ptr, dx.as_mut_ptr(), dx.len()) };
        self.check(f, s)
    }

    fn get_indicators(&mut self, z: &mut [f64]) -> Result<(), CallError> {
        let f = "fmi3GetEventIndicators";
        let me = self.me(f)?;
        // SAFETY: as above.
        let s = unsafe { (me.get_event_indicators)(self.ptr, z.as_mut_ptr(), z.len()) };
        self.check(f, s)
    }

    fn enter_event_mode(&mut self) -> Result<(), CallError> {
        let f = "fmi3EnterEventMode";
        let me = self.me(f)?;
        // SAFETY: as above.
        let s = unsafe { (me.enter_event_mode)(self.ptr) };
        self.check(f, s)
    }

    fn update_discrete_states(&mut self) -> Result<EventInfo, CallError> {
        let f = "fmi3UpdateDiscreteStates";
        let me = self.me(f)?;
        let (mut update, mut terminate, mut nominals, mut values, mut defined) =
            (false, false, false, false, false);
        let mut next = 0.0;
        // SAFETY: as above; the out-pointers point at locals.
        let s = unsafe {
            (me.update_discrete_states)(
                self.ptr,
                &mut update,
                &mut terminate,
                &mut nominals,
                &mut values,
                &mut defined,
                &mut next,
            )
        };
        self.check(f, s)?;
        Ok(EventInfo {
            needs_update: update,
            terminate,
            states_changed: values,
            next_time: defined.then_some(next),
        })
    }

    fn enter_continuous_time_mode(&mut self) -> Result<(), CallError> {
        let f = "fmi3EnterContinuousTimeMode";
        let me = self.me(f)?;
        // SAFETY: as above.
        let s = unsafe { (me.enter_continuous_time_mode)(self.ptr) };
        self.check(f, s)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        match self.phase {
            // The standard forbids every call after fmi3Fatal, free included.
            Phase::Fatal => {}
            phase => {
                // SAFETY: a live instance, freed once.
                unsafe {
                    if phase == Phase::Step {
                        (self.api.terminate)(self.ptr);
                    }
                    (self.api.free_instance)(self.ptr);
                }
            }
        }
    }
}
