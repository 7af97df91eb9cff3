//! The FMI 3.0 Co-Simulation functions drivelink calls, declared by hand from the
//! standard's `fmi3FunctionTypes.h`, loaded from the FMU's shared library with
//! `libloading`, and an [`Instance`] that owns one FMU instance: every call's status is
//! checked, and a failed call's error carries the last messages the FMU logged through
//! the `logMessage` callback.

#![allow(non_snake_case)]

use std::ffi::{c_char, c_void, CString};
use std::path::Path;
use std::sync::Arc;

use crate::cosim::{check, CallError, CoSim, LogBuf, Phase};

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

/// The FMU's library and the functions drivelink calls. The function pointers are valid
/// while the library is loaded, that is while this value lives.
pub struct Api {
    instantiate: InstantiateCoSimulation,
    free_instance: FreeInstance,
    enter_initialization_mode: EnterInitializationMode,
    exit_initialization_mode: Simple,
    terminate: Simple,
    reset: Simple,
    get_float64: GetFloat64,
    set_float64: SetFloat64,
    do_step: DoStep,
    _lib: libloading::Library,
}

impl Api {
    /// Load the shared library at `path` and look up the functions. `Err` names what is
    /// missing.
    pub fn load(path: &Path) -> Result<Api, String> {
        // SAFETY: loading an FMU's library runs its initialisers; running foreign code is
        // what importing an FMU means.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())?;
        use crate::cosim::symbol as sym;
        Ok(Api {
            instantiate: sym(&lib, "fmi3InstantiateCoSimulation")?,
            free_instance: sym(&lib, "fmi3FreeInstance")?,
            enter_initialization_mode: sym(&lib, "fmi3EnterInitializationMode")?,
            exit_initialization_mode: sym(&lib, "fmi3ExitInitializationMode")?,
            terminate: sym(&lib, "fmi3Terminate")?,
            reset: sym(&lib, "fmi3Reset")?,
            get_float64: sym(&lib, "fmi3GetFloat64")?,
            set_float64: sym(&lib, "fmi3SetFloat64")?,
            do_step: sym(&lib, "fmi3DoStep")?,
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
        let log = Box::<LogBuf>::default();
        let c = |s: &str| CString::new(s.replace('\0', " ")).unwrap_or_default();
        let (cname, ctoken) = (c(name), c(token));
        // FMI 3.0: an absolute path with a trailing separator.
        let res = resources.map(|p| c(&format!("{}/", p.display())));
        let env = &*log as *const LogBuf as *mut c_void;
        // SAFETY: valid C strings and callback; `log` outlives the instance.
        let ptr = unsafe {
            (api.instantiate)(
                cname.as_ptr(),
                ctoken.as_ptr(),
                res.as_ref().map_or(std::ptr::null(), |r| r.as_ptr()),
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
        };
        if ptr.is_null() {
            return Err(CallError {
                function: "fmi3InstantiateCoSimulation",
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
        // SAFETY: as above; the out-pointers point at locals.
        let s = unsafe {
            (self.api.do_step)(
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
