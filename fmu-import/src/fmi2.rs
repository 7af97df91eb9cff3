//! The FMI 2.0 Co-Simulation and Model Exchange functions drivelink calls, declared by
//! hand from the standard's `fmi2FunctionTypes.h` (`fmi2Boolean` is a C `int`, `fmi2Real`
//! a `double`), and an [`Instance`] with the same behaviour as the FMI 3.0 one ([`CoSim`],
//! [`ModelExchange`]).
//!
//! The logger of FMI 2.0 is variadic (`printf`-style), which stable Rust cannot define.
//! On x86-64 Unix it is received through a function with the fixed arguments followed by
//! the places where the System V calling convention puts variadic arguments (the sixth
//! integer register, the eight vector registers, four stack slots), and the message is
//! formatted by [`crate::printf`] from them (up to 5 integer or pointer arguments and 8
//! floating-point ones); elsewhere the message is kept as its format string.
//! `allocateMemory` and `freeMemory` are the C library's `calloc` and `free`.

#![allow(non_snake_case)]

use std::ffi::{c_char, c_void, CStr, CString};
use std::path::Path;
use std::sync::Arc;

use crate::cosim::{check, CallError, CoSim, LogBuf, Phase};
use crate::me::{EventInfo, Kind, ModelExchange};

type Status = i32;
type Boolean = i32;
type Comp = *mut c_void;

/// `fmi2CallbackFunctions`.
#[repr(C)]
struct Callbacks {
    logger: *const c_void,
    allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
    step_finished: Option<unsafe extern "C" fn(*mut c_void, Status)>,
    component_environment: *mut c_void,
}

extern "C" {
    fn calloc(n: usize, size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
}

type InstantiateT = unsafe extern "C" fn(
    instance_name: *const c_char,
    fmu_type: i32,
    guid: *const c_char,
    resource_location: *const c_char,
    functions: *const Callbacks,
    visible: Boolean,
    logging_on: Boolean,
) -> Comp;
type FreeInstance = unsafe extern "C" fn(Comp);
type SetupExperiment = unsafe extern "C" fn(Comp, Boolean, f64, f64, Boolean, f64) -> Status;
type Simple = unsafe extern "C" fn(Comp) -> Status;
type GetReal = unsafe extern "C" fn(Comp, *const u32, usize, *mut f64) -> Status;
type SetReal = unsafe extern "C" fn(Comp, *const u32, usize, *const f64) -> Status;
type DoStep = unsafe extern "C" fn(Comp, f64, f64, Boolean) -> Status;
type SetTime = unsafe extern "C" fn(Comp, f64) -> Status;
type SetStates = unsafe extern "C" fn(Comp, *const f64, usize) -> Status;
type GetArray = unsafe extern "C" fn(Comp, *mut f64, usize) -> Status;
type NewDiscreteStates = unsafe extern "C" fn(Comp, *mut EventInfo2) -> Status;

/// `fmi2EventInfo`.
#[repr(C)]
#[derive(Default)]
struct EventInfo2 {
    new_discrete_states_needed: Boolean,
    terminate_simulation: Boolean,
    nominals_of_continuous_states_changed: Boolean,
    values_of_continuous_states_changed: Boolean,
    next_event_time_defined: Boolean,
    next_event_time: f64,
}

/// `fmi2ModelExchange` and `fmi2CoSimulation` of `fmi2Type`.
const MODEL_EXCHANGE: i32 = 0;
const CO_SIMULATION: i32 = 1;

/// The Model Exchange functions.
#[derive(Clone, Copy)]
struct MeFns {
    enter_event_mode: Simple,
    new_discrete_states: NewDiscreteStates,
    enter_continuous_time_mode: Simple,
    set_time: SetTime,
    set_continuous_states: SetStates,
    get_continuous_states: GetArray,
    get_derivatives: GetArray,
    get_event_indicators: GetArray,
}

/// The FMU's library and the functions drivelink calls (valid while this value lives).
pub struct Api {
    instantiate: InstantiateT,
    free_instance: FreeInstance,
    setup_experiment: SetupExperiment,
    enter_initialization_mode: Simple,
    exit_initialization_mode: Simple,
    terminate: Simple,
    reset: Simple,
    get_real: GetReal,
    set_real: SetReal,
    /// Loaded for Co-Simulation.
    do_step: Option<DoStep>,
    /// Loaded for Model Exchange.
    me: Option<MeFns>,
    kind: Kind,
    _lib: libloading::Library,
}

impl Api {
    /// Load the shared library at `path` and look up the functions of interface `kind`.
    pub fn load(path: &Path, kind: Kind) -> Result<Api, String> {
        // SAFETY: loading an FMU's library runs its initialisers (importing an FMU is
        // running its code).
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())?;
        use crate::cosim::symbol as sym;
        let (mut do_step, mut me) = (None, None);
        match kind {
            Kind::CoSimulation => do_step = Some(sym(&lib, "fmi2DoStep")?),
            Kind::ModelExchange => {
                me = Some(MeFns {
                    enter_event_mode: sym(&lib, "fmi2EnterEventMode")?,
                    new_discrete_states: sym(&lib, "fmi2NewDiscreteStates")?,
                    enter_continuous_time_mode: sym(&lib, "fmi2EnterContinuousTimeMode")?,
                    set_time: sym(&lib, "fmi2SetTime")?,
                    set_continuous_states: sym(&lib, "fmi2SetContinuousStates")?,
                    get_continuous_states: sym(&lib, "fmi2GetContinuousStates")?,
                    get_derivatives: sym(&lib, "fmi2GetDerivatives")?,
                    get_event_indicators: sym(&lib, "fmi2GetEventIndicators")?,
                })
            }
        }
        Ok(Api {
            do_step,
            me,
            kind,
            instantiate: sym(&lib, "fmi2Instantiate")?,
            free_instance: sym(&lib, "fmi2FreeInstance")?,
            setup_experiment: sym(&lib, "fmi2SetupExperiment")?,
            enter_initialization_mode: sym(&lib, "fmi2EnterInitializationMode")?,
            exit_initialization_mode: sym(&lib, "fmi2ExitInitializationMode")?,
            terminate: sym(&lib, "fmi2Terminate")?,
            reset: sym(&lib, "fmi2Reset")?,
            get_real: sym(&lib, "fmi2GetReal")?,
            set_real: sym(&lib, "fmi2SetReal")?,
            _lib: lib,
        })
    }
}

/// The FMI 2.0 logger, its variadic arguments read where x86-64 System V passes them
/// (see the module docs).
#[cfg(all(target_arch = "x86_64", unix))]
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn logger(
    env: *mut c_void,
    _instance_name: *const c_char,
    status: Status,
    _category: *const c_char,
    message: *const c_char,
    i0: u64,
    f0: f64,
    f1: f64,
    f2: f64,
    f3: f64,
    f4: f64,
    f5: f64,
    f6: f64,
    f7: f64,
    s0: u64,
    s1: u64,
    s2: u64,
    s3: u64,
) {
    if env.is_null() || message.is_null() {
        return;
    }
    let fmt = CStr::from_ptr(message).to_string_lossy();
    let mut ints = [i0, s0, s1, s2, s3].into_iter();
    let mut floats = [f0, f1, f2, f3, f4, f5, f6, f7].into_iter();
    // SAFETY: a `%s` argument is the C string the format asks for.
    let text = |p: u64| {
        if p == 0 {
            "(null)".to_string()
        } else {
            unsafe { CStr::from_ptr(p as *const c_char) }
                .to_string_lossy()
                .into_owned()
        }
    };
    let line = crate::printf::format(&fmt, &mut ints, &mut floats, &text);
    let c = CString::new(line.replace('\0', " ")).unwrap_or_default();
    // SAFETY: `env` is the instance's `LogBuf`, alive as long as the instance.
    (*(env as *const LogBuf)).push(status, c.as_ptr());
}

/// The FMI 2.0 logger on other platforms: the message as its format string.
#[cfg(not(all(target_arch = "x86_64", unix)))]
unsafe extern "C" fn logger(
    env: *mut c_void,
    _instance_name: *const c_char,
    status: Status,
    _category: *const c_char,
    message: *const c_char,
) {
    if !env.is_null() {
        // SAFETY: `env` is the instance's `LogBuf`, alive as long as the instance.
        (*(env as *const LogBuf)).push(status, message);
    }
}

/// One FMI 2.0 instance, Co-Simulation or Model Exchange (freed when dropped).
pub struct Instance {
    api: Arc<Api>,
    ptr: Comp,
    log: Box<LogBuf>,
    /// The FMU may keep the pointer to the callbacks: they live as long as the instance.
    _callbacks: Box<Callbacks>,
    phase: Phase,
}

// SAFETY: as for the FMI 3.0 instance: one thread at a time (`&mut self`), and `&self`
// gives no access to the FMU.
unsafe impl Send for Instance {}
// SAFETY: see above.
unsafe impl Sync for Instance {}

impl Instance {
    /// `fmi2Instantiate` as Co-Simulation or Model Exchange (the interface the library
    /// was loaded for); `resources` becomes the `file://` URI of the resource location.
    pub fn new(
        api: Arc<Api>,
        name: &str,
        guid: &str,
        resources: Option<&Path>,
    ) -> Result<Instance, CallError> {
        let log = Box::<LogBuf>::default();
        let callbacks = Box::new(Callbacks {
            logger: logger as *const c_void,
            allocate_memory: Some(calloc),
            free_memory: Some(free),
            step_finished: None,
            component_environment: &*log as *const LogBuf as *mut c_void,
        });
        let c = |s: &str| CString::new(s.replace('\0', " ")).unwrap_or_default();
        let (cname, cguid) = (c(name), c(guid));
        let uri = resources.map(|p| c(&format!("file://{}", p.display())));
        // SAFETY: valid C strings and callbacks, kept alive with the instance.
        let ptr = unsafe {
            (api.instantiate)(
                cname.as_ptr(),
                match api.kind {
                    Kind::CoSimulation => CO_SIMULATION,
                    Kind::ModelExchange => MODEL_EXCHANGE,
                },
                cguid.as_ptr(),
                uri.as_ref().map_or(std::ptr::null(), |u| u.as_ptr()),
                &*callbacks,
                0,
                0,
            )
        };
        if ptr.is_null() {
            return Err(CallError {
                function: "fmi2Instantiate",
                status: "null (no instance)",
                messages: log.take(),
            });
        }
        Ok(Instance {
            api,
            ptr,
            log,
            _callbacks: callbacks,
            phase: Phase::Instantiated,
        })
    }

    fn check(&mut self, function: &'static str, s: Status) -> Result<(), CallError> {
        check(&mut self.phase, &self.log, function, s)
    }

    /// The Model Exchange functions (an instance of a library loaded for them).
    fn me(&self, function: &'static str) -> Result<MeFns, CallError> {
        self.api.me.ok_or_else(|| not_loaded(function))
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
        Ok(None)
    }

    fn set_time(&mut self, t: f64) -> Result<(), CallError> {
        let f = "fmi2SetTime";
        let me = self.me(f)?;
        // SAFETY: a live instance (the block never calls a fatal one).
        let s = unsafe { (me.set_time)(self.ptr, t) };
        self.check(f, s)
    }

    fn set_states(&mut self, x: &[f64]) -> Result<(), CallError> {
        let f = "fmi2SetContinuousStates";
        let me = self.me(f)?;
        // SAFETY: as above; `x` holds `x.len()` values.
        let s = unsafe { (me.set_continuous_states)(self.ptr, x.as_ptr(), x.len()) };
        self.check(f, s)
    }

    fn get_states(&mut self, x: &mut [f64]) -> Result<(), CallError> {
        let f = "fmi2GetContinuousStates";
        let me = self.me(f)?;
        // SAFETY: as above.
        let s = unsafe { (me.get_continuous_states)(self.ptr, x.as_mut_ptr(), x.len()) };
        self.check(f, s)
    }

    fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), CallError> {
        let f = "fmi2GetDerivatives";
        let me = self.me(f)?;
        // SAFETY: as above.
        let s = unsafe { (me.get_derivatives)(self.ptr, dx.as_mut_ptr(), dx.len()) };
        self.check(f, s)
    }

    fn get_indicators(&mut self, z: &mut [f64]) -> Result<(), CallError> {
        let f = "fmi2GetEventIndicators";
        let me = self.me(f)?;
        // SAFETY: as above.
        let s = unsafe { (me.get_event_indicators)(self.ptr, z.as_mut_ptr(), z.len()) };
        self.check(f, s)
    }

    fn enter_event_mode(&mut self) -> Result<(), CallError> {
        let f = "fmi2EnterEventMode";
        let me = self.me(f)?;
        // SAFETY: as above.
        let s = unsafe { (me.enter_event_mode)(self.ptr) };
        self.check(f, s)
    }

    fn update_discrete_states(&mut self) -> Result<EventInfo, CallError> {
        let f = "fmi2NewDiscreteStates";
        let me = self.me(f)?;
        let mut info = EventInfo2::default();
        // SAFETY: as above; `info` is a local `fmi2EventInfo`.
        let s = unsafe { (me.new_discrete_states)(self.ptr, &mut info) };
        self.check(f, s)?;
        Ok(EventInfo {
            needs_update: info.new_discrete_states_needed != 0,
            terminate: info.terminate_simulation != 0,
            states_changed: info.values_of_continuous_states_changed != 0,
            next_time: (info.next_event_time_defined != 0).then_some(info.next_event_time),
        })
    }

    fn enter_continuous_time_mode(&mut self) -> Result<(), CallError> {
        let f = "fmi2EnterContinuousTimeMode";
        let me = self.me(f)?;
        // SAFETY: as above.
        let s = unsafe { (me.enter_continuous_time_mode)(self.ptr) };
        self.check(f, s)
    }
}

impl CoSim for Instance {
    fn phase(&self) -> Phase {
        self.phase
    }

    /// `fmi2SetupExperiment` at `start`, then `fmi2EnterInitializationMode`.
    fn enter_initialization(&mut self, start: f64) -> Result<(), CallError> {
        // SAFETY: a live instance (the block never calls a fatal one).
        let s = unsafe { (self.api.setup_experiment)(self.ptr, 0, 0.0, start, 0, 0.0) };
        self.check("fmi2SetupExperiment", s)?;
        // SAFETY: as above.
        let s = unsafe { (self.api.enter_initialization_mode)(self.ptr) };
        self.check("fmi2EnterInitializationMode", s)?;
        self.phase = Phase::Initialization;
        Ok(())
    }

    fn exit_initialization(&mut self) -> Result<(), CallError> {
        // SAFETY: as above.
        let s = unsafe { (self.api.exit_initialization_mode)(self.ptr) };
        self.check("fmi2ExitInitializationMode", s)?;
        self.phase = Phase::Step;
        Ok(())
    }

    fn reset(&mut self) -> Result<(), CallError> {
        if self.phase == Phase::Step {
            // SAFETY: as above.
            let s = unsafe { (self.api.terminate)(self.ptr) };
            self.check("fmi2Terminate", s)?;
        }
        // SAFETY: as above.
        let s = unsafe { (self.api.reset)(self.ptr) };
        self.check("fmi2Reset", s)?;
        self.phase = Phase::Instantiated;
        Ok(())
    }

    fn set(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), CallError> {
        if vrs.is_empty() {
            return Ok(());
        }
        let n = vrs.len().min(values.len());
        // SAFETY: as above; both arrays hold at least `n` elements.
        let s = unsafe { (self.api.set_real)(self.ptr, vrs.as_ptr(), n, values.as_ptr()) };
        self.check("fmi2SetReal", s)
    }

    fn get(&mut self, vrs: &[u32], values: &mut [f64]) -> Result<(), CallError> {
        if vrs.is_empty() {
            return Ok(());
        }
        let n = vrs.len().min(values.len());
        // SAFETY: as above.
        let s = unsafe { (self.api.get_real)(self.ptr, vrs.as_ptr(), n, values.as_mut_ptr()) };
        self.check("fmi2GetReal", s)
    }

    /// `fmi2DoStep`; FMI 2.0 has no terminate flag, so this never asks to stop.
    fn do_step(&mut self, t: f64, h: f64) -> Result<bool, CallError> {
        let do_step = self.api.do_step.ok_or_else(|| not_loaded("fmi2DoStep"))?;
        // SAFETY: as above.
        let s = unsafe { do_step(self.ptr, t, h, 1) };
        self.check("fmi2DoStep", s)?;
        Ok(false)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if self.phase == Phase::Fatal {
            return;
        }
        // SAFETY: a live instance, freed once.
        unsafe {
            if self.phase == Phase::Step {
                (self.api.terminate)(self.ptr);
            }
            (self.api.free_instance)(self.ptr);
        }
    }
}
