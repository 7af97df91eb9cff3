//! One FMU instance: the compiled netlist, the parameter values, the model's run stepped
//! to the communication points (one solver run across them, see `Model::step_to`) and the
//! output values, with the Co-Simulation state machine shared by FMI 3.0
//! and FMI 2.0 (the two differ only in how the start time and tolerance arrive: FMI 2.0's
//! `fmi2SetupExperiment` is [`Instance::setup_experiment`]), and the FMI 3.0 Model
//! Exchange state machine (Event Mode and Continuous-Time Mode around a [`MeRun`]).
//! Nothing here knows about C; `ffi.rs` and `ffi2.rs` turn its `Result`s into status codes
//! and logger calls.

use std::path::Path;
use std::sync::Arc;

use drivelink_blocks::signal::inport::InputHandle;
use drivelink_core::{Compiled, Model, Registry, RunStatus, Settings, SimResult};
use drivelink_solver::HybridSystem;
use serde_json::Value;

use crate::me::{DiscreteUpdate, MeRun};

mod state;
use crate::vars::{instantiation_token, model_variables, Causality, Variable};
pub use state::FmuState;

/// Where the instance is in the FMI state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Instantiated,
    Initialization,
    Step,
    /// Model Exchange: Event Mode.
    Event,
    /// Model Exchange: Continuous-Time Mode.
    Continuous,
    Terminated,
    /// A step failed: only `Terminate`, `Reset` and `FreeInstance` are allowed.
    Failed,
}

/// The FMI version an instance serves: it names the functions in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    Fmi3,
    Fmi2,
}

impl Version {
    /// The C name of the FMI function `name` (`DoStep` -> `fmi3DoStep`); the FMI 3.0
    /// names of the Model Exchange functions FMI 2.0 calls otherwise are translated
    /// (`GetContinuousStateDerivatives` -> `fmi2GetDerivatives`, `UpdateDiscreteStates`
    /// -> `fmi2NewDiscreteStates`).
    pub fn function(self, name: &str) -> String {
        match self {
            Version::Fmi3 => format!("fmi3{name}"),
            Version::Fmi2 => match name {
                "GetContinuousStateDerivatives" => "fmi2GetDerivatives".into(),
                "UpdateDiscreteStates" => "fmi2NewDiscreteStates".into(),
                "GetFMUState" => "fmi2GetFMUstate".into(),
                "SetFMUState" => "fmi2SetFMUstate".into(),
                _ => format!("fmi2{name}"),
            },
        }
    }
}

/// The interface an instance was made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    CoSimulation,
    ModelExchange,
}

/// What a successful `doStep` reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepOutcome {
    /// A block asked to stop the run (at `last_time`).
    pub terminate: bool,
    /// The time reached.
    pub last_time: f64,
}

/// An FMU instance (see the module docs).
pub struct Instance {
    registry: Registry,
    compiled: Compiled,
    vars: Vec<Variable>,
    /// Current values of every variable by value reference (time, parameters, outputs).
    values: Vec<f64>,
    model: Option<Model>,
    /// The input handles of `model`'s `Inport` blocks, by value reference.
    inputs: Vec<(usize, Arc<InputHandle>)>,
    /// The output values are those at the current point with the current inputs (an
    /// input set between two steps leaves them to be evaluated again).
    outputs_current: bool,
    settings: Settings,
    time: f64,
    /// The end of the experiment given by the importer: no step may go beyond it.
    stop: Option<f64>,
    version: Version,
    interface: Interface,
    /// The Model Exchange run (after initialization).
    me: Option<MeRun>,
    /// Value references of the first output and the first state (the outputs come right
    /// before the states, the derivatives and the event indicators after them).
    first_output: usize,
    first_state: usize,
    n_states: usize,
    n_indicators: usize,
    pub phase: Phase,
}

impl Instance {
    /// Load `resources/model.json` from `resource_dir`, check the token and compile (an
    /// FMI 3.0 instance).
    pub fn new(resource_dir: &Path, token: &str) -> Result<Instance, String> {
        Instance::new_for(resource_dir, token, Version::Fmi3)
    }

    /// The same for FMI `version`.
    pub fn new_for(resource_dir: &Path, token: &str, version: Version) -> Result<Instance, String> {
        Instance::make(resource_dir, token, version, Interface::CoSimulation)
    }

    /// An FMI 3.0 Model Exchange instance.
    pub fn new_model_exchange(resource_dir: &Path, token: &str) -> Result<Instance, String> {
        Instance::new_model_exchange_for(resource_dir, token, Version::Fmi3)
    }

    /// A Model Exchange instance for FMI `version`.
    pub fn new_model_exchange_for(
        resource_dir: &Path,
        token: &str,
        version: Version,
    ) -> Result<Instance, String> {
        Instance::make(resource_dir, token, version, Interface::ModelExchange)
    }

    fn make(
        resource_dir: &Path,
        token: &str,
        version: Version,
        interface: Interface,
    ) -> Result<Instance, String> {
        let path = resource_dir.join("model.json");
        let text = std::fs::read(&path)
            .map_err(|e| format!("cannot read the FMU's netlist {}: {e}", path.display()))?;
        let expected = instantiation_token(&text);
        if token != expected {
            return Err(format!(
                "instantiation token {token} does not match the FMU's netlist ({expected}): \
                 the modelDescription.xml and resources/model.json come from different exports"
            ));
        }
        let d = drivelink_netlist::load_file(&path).map_err(|e| e.to_string())?;
        let registry = drivelink_blocks::registry();
        let origin = path.display().to_string();
        let compiled = Compiled::new(&d, &registry)
            .map_err(|e| drivelink_netlist::locate_error(&d, &registry, &origin, e).to_string())?;
        let model = compiled
            .with_params(&registry, &[])
            .map_err(|e| e.to_string())?;
        let vars = model_variables(&d, compiled.plan(), &model).map_err(|e| e.to_string())?;
        let (n_states, n_indicators) = (model.n_states(), model.n_guards());
        let first_state = vars.len() - 2 * n_states - n_indicators;
        let first_output = vars
            .iter()
            .position(|v| v.causality == Causality::Output)
            .unwrap_or(first_state);
        let settings = compiled.plan().settings().clone();
        let mut inst = Instance {
            registry,
            compiled,
            values: vec![0.0; vars.len()],
            vars,
            model: None,
            inputs: Vec::new(),
            outputs_current: false,
            time: settings.start_time,
            settings,
            stop: None,
            version,
            interface,
            me: None,
            first_output,
            first_state,
            n_states,
            n_indicators,
            phase: Phase::Instantiated,
        };
        inst.reset();
        Ok(inst)
    }

    /// Back to the instantiated state with the default parameter values.
    pub fn reset(&mut self) {
        for (v, val) in self.vars.iter().zip(self.values.iter_mut()) {
            *val = v.start.unwrap_or(0.0);
        }
        self.settings = self.compiled.plan().settings().clone();
        self.time = self.settings.start_time;
        self.values[0] = self.time;
        self.stop = None;
        self.model = None;
        self.inputs.clear();
        self.me = None;
        self.outputs_current = false;
        self.phase = Phase::Instantiated;
    }

    /// The FMI version this instance serves.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The current time (the last communication point reached).
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Whether `function` (without its `fmi3`/`fmi2` prefix) may be called now.
    fn expect(&self, function: &str, allowed: &[Phase]) -> Result<(), String> {
        if allowed.contains(&self.phase) {
            Ok(())
        } else {
            Err(format!(
                "{} is not allowed in phase {:?}",
                self.version.function(function),
                self.phase
            ))
        }
    }

    /// `fmi2SetupExperiment` (and the first half of `fmi3EnterInitializationMode`): a
    /// given tolerance becomes the solver's `rtol`, the start time the importer's, and a
    /// given stop time bounds the steps.
    pub fn setup_experiment(
        &mut self,
        tolerance: Option<f64>,
        start: f64,
        stop: Option<f64>,
    ) -> Result<(), String> {
        self.expect("SetupExperiment", &[Phase::Instantiated])?;
        if !start.is_finite() {
            return Err(format!("start time {start} is not finite"));
        }
        if let Some(tol) = tolerance {
            if !(tol > 0.0 && tol < 1.0) {
                return Err(format!("tolerance {tol} must be in (0, 1)"));
            }
        }
        if let Some(end) = stop {
            if !(end.is_finite() && end >= start) {
                return Err(format!(
                    "stop time {end} must be finite and not before the start time {start}"
                ));
            }
        }
        if let Some(tol) = tolerance {
            self.settings.rtol = tol;
        }
        self.settings.start_time = start;
        self.time = start;
        self.values[0] = start;
        self.stop = stop;
        Ok(())
    }

    /// `fmi3EnterInitializationMode`: the experiment's tolerance, start time and stop time
    /// (if defined), then initialization mode.
    pub fn enter_initialization(
        &mut self,
        tolerance: Option<f64>,
        start: f64,
        stop: Option<f64>,
    ) -> Result<(), String> {
        self.expect("EnterInitializationMode", &[Phase::Instantiated])?;
        self.setup_experiment(tolerance, start, stop)?;
        self.begin_initialization()
    }

    /// `fmi2EnterInitializationMode`: initialization mode with the experiment set up by
    /// [`Instance::setup_experiment`] (or the netlist's start time and tolerance).
    pub fn begin_initialization(&mut self) -> Result<(), String> {
        self.expect("EnterInitializationMode", &[Phase::Instantiated])?;
        self.phase = Phase::Initialization;
        Ok(())
    }

    /// A run instance with the current parameter and input values.
    fn build_model(&self) -> Result<Model, String> {
        let overrides = self.parameter_overrides();
        let model = self
            .compiled
            .with_params(&self.registry, &overrides)
            .map_err(|e| e.to_string())?;
        for (k, h) in self.input_handles(&model)? {
            h.set(self.values[k]);
        }
        Ok(model)
    }

    /// The parameters whose values differ from their start values, as netlist overrides.
    fn parameter_overrides(&self) -> Vec<(String, Value)> {
        self.vars
            .iter()
            .zip(&self.values)
            .filter(|(v, val)| v.causality == Causality::Parameter && v.start != Some(**val))
            .map(|(v, val)| (v.name.clone(), Value::from(*val)))
            .collect()
    }

    /// The handles of the `Inport` blocks of `model` behind the input variables, by value
    /// reference.
    fn input_handles(&self, model: &Model) -> Result<Vec<(usize, Arc<InputHandle>)>, String> {
        let inputs = self.vars.iter().filter(|v| v.causality == Causality::Input);
        inputs
            .map(|v| {
                let h = model
                    .block_shared(&v.name, 0)
                    .and_then(|d| d.downcast::<InputHandle>().ok())
                    .ok_or_else(|| {
                        format!("input '{}': the model has no Inport of that name", v.name)
                    })?;
                Ok((v.value_reference as usize, h))
            })
            .collect()
    }

    /// Settings of the stepped run from the current time: to the experiment's stop time,
    /// or open-ended when the importer gave none (outputs are read at the communication
    /// points only).
    fn stepping_settings(&self) -> Settings {
        let mut s = self.settings.clone();
        s.start_time = self.time;
        s.stop_time = self.stop.unwrap_or(f64::INFINITY);
        s.output_interval = None;
        s.output_points = None;
        s
    }

    /// Settings of a run from the current time to `stop` (outputs at the solver's steps).
    fn span(&self, stop: f64) -> Settings {
        let mut s = self.settings.clone();
        s.start_time = self.time;
        s.stop_time = stop;
        s.output_interval = None;
        s.output_points = None;
        s
    }

    /// The outputs at the start time (after the initial event), from a throwaway run over
    /// a tiny span whose first row they are.
    fn initial_outputs(&mut self) -> Result<(), String> {
        let mut m = self.build_model()?;
        let s = self.span(self.time + 1e-9 * self.time.abs().max(1.0));
        let res = m.run_with(&s);
        if res.status == RunStatus::Failed && res.time.is_empty() {
            return Err(res.message);
        }
        self.store_outputs(&res, 0);
        Ok(())
    }

    /// Copy row `row` of `res` into the output values.
    fn store_outputs(&mut self, res: &SimResult, row: usize) {
        let first = self.first_output;
        for (k, col) in res.columns.iter().enumerate() {
            if let Some(&v) = col.get(row) {
                self.values[first + k] = v;
            }
        }
    }

    /// `fmi3ExitInitializationMode`, `fmi2ExitInitializationMode`.
    pub fn exit_initialization(&mut self) -> Result<(), String> {
        self.expect("ExitInitializationMode", &[Phase::Initialization])?;
        if self.interface == Interface::ModelExchange {
            let mut model = self.build_model()?;
            self.inputs = self.input_handles(&model)?;
            let max_calls = self.settings.max_event_iterations;
            let run = MeRun::start(&mut model, self.time, max_calls);
            model.take_events();
            self.model = Some(model);
            self.me = Some(run.inspect_err(|_| self.phase = Phase::Failed)?);
            self.phase = Phase::Event;
            return Ok(());
        }
        let mut model = self.build_model()?;
        self.inputs = self.input_handles(&model)?;
        model.start_stepping(&self.stepping_settings())?;
        model.take_events();
        self.model = Some(model);
        self.refresh_outputs()?;
        self.phase = Phase::Step;
        Ok(())
    }

    /// The outputs at the point the stepped run reached, with the current inputs.
    fn refresh_outputs(&mut self) -> Result<(), String> {
        let Some(model) = self.model.as_mut() else {
            return Err("the model is not initialized".into());
        };
        model.stepped_outputs(&mut self.values[self.first_output..self.first_state])?;
        self.outputs_current = true;
        Ok(())
    }

    /// `fmi3DoStep`, `fmi2DoStep` from `t` over `h`.
    pub fn do_step(&mut self, t: f64, h: f64) -> Result<StepOutcome, String> {
        self.expect("DoStep", &[Phase::Step])?;
        let tol = 1e-12 * self.time.abs().max(1.0) + 1e-12 * h.abs();
        if (t - self.time).abs() > tol {
            return Err(format!(
                "{} from t = {t} s, but the FMU is at t = {} s",
                self.version.function("DoStep"),
                self.time
            ));
        }
        if !(h > 0.0 && h.is_finite()) {
            return Err(format!("communication step size {h} must be positive"));
        }
        if let Some(end) = self.stop {
            if t + h > end + 1e-9 * end.abs().max(1.0) {
                return Err(format!(
                    "a step to t = {} s goes beyond the experiment's stop time {end} s",
                    t + h
                ));
            }
        }
        let Some(model) = self.model.as_mut() else {
            return Err("the model is not initialized".into());
        };
        // A last step that ends past the stop time by rounding (within the tolerance
        // above) ends at it.
        let reached = model.step_to(self.stop.map_or(t + h, |end| (t + h).min(end)));
        model.take_events();
        let (status, time) = reached.inspect_err(|_| self.phase = Phase::Failed)?;
        // The communication point exactly as the importer computed it (the run reached it
        // to within 1e-12 relative), or the instant a block stopped the run.
        self.time = if status == RunStatus::Completed {
            t + h
        } else {
            time
        };
        self.values[0] = self.time;
        if let Err(message) = self.refresh_outputs() {
            self.phase = Phase::Failed;
            return Err(format!("at t = {} s: {message}", self.time));
        }
        Ok(StepOutcome {
            terminate: status == RunStatus::Stopped,
            last_time: self.time,
        })
    }

    /// `fmi3Terminate`, `fmi2Terminate`.
    pub fn terminate(&mut self) -> Result<(), String> {
        self.expect(
            "Terminate",
            &[Phase::Step, Phase::Event, Phase::Continuous, Phase::Failed],
        )?;
        self.phase = Phase::Terminated;
        Ok(())
    }

    fn var(&self, vr: u32) -> Result<&Variable, String> {
        self.vars
            .get(vr as usize)
            .ok_or_else(|| format!("unknown variable: value reference {vr}"))
    }

    /// `fmi3GetFloat64` (`fmi2GetReal`) of one variable.
    pub fn get(&mut self, vr: u32) -> Result<f64, String> {
        let c = self.var(vr)?.causality;
        if c == Causality::Output && self.phase == Phase::Initialization {
            self.initial_outputs()?;
        }
        if self.me.is_some() {
            return self.get_me(vr as usize, c);
        }
        let k = vr as usize;
        if c == Causality::Output && self.phase == Phase::Step && !self.outputs_current {
            self.refresh_outputs()?;
        }
        match c {
            Causality::State => {
                let x = match self.model.as_ref() {
                    Some(m) => m.last_state(),
                    None => return Err(self.not_yet(vr)),
                };
                Ok(x[k - self.first_state])
            }
            Causality::Derivative(_) | Causality::Indicator => Err(format!(
                "'{}' is served by Model Exchange instances only",
                self.vars[k].name
            )),
            _ => Ok(self.values[k]),
        }
    }

    /// The message for a variable that has no value yet.
    fn not_yet(&self, vr: u32) -> String {
        format!(
            "'{}' has no value before the first step",
            self.vars[vr as usize].name
        )
    }

    /// A variable of a Model Exchange instance, at the current `(t, x)`.
    fn get_me(&mut self, k: usize, c: Causality) -> Result<f64, String> {
        let (Some(me), Some(model)) = (self.me.as_mut(), self.model.as_mut()) else {
            return Err("the model is not initialized".into());
        };
        let (first, nx) = (self.first_state, self.n_states);
        Ok(match c {
            Causality::Independent => me.t,
            Causality::Parameter | Causality::Input => self.values[k],
            Causality::Output => {
                if !me.outputs_current {
                    let outputs = &mut self.values[self.first_output..first];
                    model.sample(me.t, &me.x, outputs)?;
                    me.outputs_current = true;
                }
                self.values[k]
            }
            Causality::State => me.x[k - first],
            Causality::Derivative(_) => {
                let mut dx = vec![0.0; nx];
                me.derivatives(model, &mut dx);
                dx[k - first - nx]
            }
            Causality::Indicator => {
                let mut z = vec![0.0; self.n_indicators];
                me.indicators(model, &mut z);
                z[k - first - 2 * nx]
            }
        })
    }

    /// `fmi3SetFloat64` (`fmi2SetReal`) of one variable.
    pub fn set(&mut self, vr: u32, value: f64) -> Result<(), String> {
        let v = self.var(vr)?;
        if !matches!(v.causality, Causality::Parameter | Causality::Input) {
            return Err(format!(
                "'{}' cannot be set (only parameters and inputs can)",
                v.name
            ));
        }
        if !value.is_finite() {
            return Err(format!("'{}' = {value}: not a finite number", v.name));
        }
        if v.causality == Causality::Input {
            return self.set_input(vr as usize, value);
        }
        if !matches!(self.phase, Phase::Instantiated | Phase::Initialization) {
            // A tunable parameter set while the model runs (`state.rs`).
            return self.tune(vr as usize, value);
        }
        self.values[vr as usize] = value;
        Ok(())
    }
}

impl Instance {
    /// Set input `k` (a value reference): before the end of initialization it is the value
    /// the run starts with; in Co-Simulation it holds over the next steps (a new value
    /// restarts the integration at the current communication point, a discontinuity as at
    /// a time event; the same value again changes nothing); in Model Exchange the next
    /// evaluation at the current `(t, x)` sees it.
    fn set_input(&mut self, k: usize, value: f64) -> Result<(), String> {
        if matches!(self.phase, Phase::Terminated | Phase::Failed) {
            return Err(format!(
                "input '{}' cannot be set in phase {:?}",
                self.vars[k].name, self.phase
            ));
        }
        if self.model.is_some() && value.to_bits() == self.values[k].to_bits() {
            // The same value again (an importer setting every input before every step):
            // nothing changes, the integration goes on untouched.
            return Ok(());
        }
        self.values[k] = value;
        if let Some((_, h)) = self.inputs.iter().find(|(vr, _)| *vr == k) {
            h.set(value);
        }
        if let (Some(me), Some(model)) = (self.me.as_mut(), self.model.as_mut()) {
            model.inputs_changed(me.t, &me.x);
            me.outputs_current = false;
        } else if let Some(model) = self.model.as_mut() {
            // The next step restarts here with the event call that settles the modes for
            // the new value; the outputs are evaluated again with it when read.
            let x = model.last_state().to_vec();
            model.inputs_changed(self.time, &x);
            self.outputs_current = false;
        }
        Ok(())
    }
}

/// Model Exchange (FMI 3.0 and 2.0: the functions of the same names): see [`crate::me`].
impl Instance {
    /// The Model Exchange run and the model, in one of the `allowed` phases.
    fn me_run(
        &mut self,
        function: &str,
        allowed: &[Phase],
    ) -> Result<(&mut MeRun, &mut Model), String> {
        if self.interface == Interface::CoSimulation {
            return Err(format!(
                "{} is not supported by Co-Simulation instances of drivelink FMUs \
                 (instantiate for Model Exchange)",
                self.version.function(function)
            ));
        }
        self.expect(function, allowed)?;
        match (self.me.as_mut(), self.model.as_mut()) {
            (Some(me), Some(model)) => Ok((me, model)),
            _ => Err(format!(
                "{} needs a Model Exchange instance after initialization",
                self.version.function(function)
            )),
        }
    }

    /// The number of continuous states.
    pub fn n_states(&self) -> usize {
        self.n_states
    }

    /// The number of event indicators (the model's guards).
    pub fn n_indicators(&self) -> usize {
        self.n_indicators
    }

    /// `fmi3EnterEventMode`.
    pub fn enter_event_mode(&mut self) -> Result<(), String> {
        let (me, model) = self.me_run("EnterEventMode", &[Phase::Continuous, Phase::Event])?;
        me.enter_event_mode(model);
        self.phase = Phase::Event;
        Ok(())
    }

    /// `fmi3UpdateDiscreteStates`, `fmi2NewDiscreteStates`.
    pub fn update_discrete_states(&mut self) -> Result<DiscreteUpdate, String> {
        let (me, model) = self.me_run("UpdateDiscreteStates", &[Phase::Event])?;
        let out = me.update(model);
        model.take_events();
        if out.is_err() {
            self.phase = Phase::Failed;
        }
        out
    }

    /// `fmi3EnterContinuousTimeMode`.
    pub fn enter_continuous_time_mode(&mut self) -> Result<(), String> {
        let (me, _) = self.me_run("EnterContinuousTimeMode", &[Phase::Event])?;
        if me.pending() {
            let t = me.t;
            let v = self.version;
            return Err(format!(
                "{} at t = {t} s while discrete states still need an update (call {} until \
                 it needs no more)",
                v.function("EnterContinuousTimeMode"),
                v.function("UpdateDiscreteStates")
            ));
        }
        self.phase = Phase::Continuous;
        Ok(())
    }

    /// `fmi3SetTime`.
    pub fn set_time(&mut self, t: f64) -> Result<(), String> {
        let f = self.version.function("SetTime");
        let (me, _) = self.me_run("SetTime", &[Phase::Continuous, Phase::Event])?;
        if !t.is_finite() {
            return Err(format!("{f}: time {t} is not finite"));
        }
        if t != me.t {
            me.t = t;
            me.outputs_current = false;
        }
        self.values[0] = t;
        self.time = t;
        Ok(())
    }

    /// `fmi3SetContinuousStates`.
    pub fn set_states(&mut self, x: &[f64]) -> Result<(), String> {
        let nx = self.n_states;
        let f = self.version.function("SetContinuousStates");
        let (me, _) = self.me_run("SetContinuousStates", &[Phase::Continuous, Phase::Event])?;
        count(&f, x.len(), nx, "continuous states")?;
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(format!("{f}: state {i} = {} is not finite", x[i]));
        }
        me.x.copy_from_slice(x);
        me.outputs_current = false;
        Ok(())
    }

    /// The phases in which the states, derivatives and indicators can be read.
    const READABLE: [Phase; 3] = [Phase::Continuous, Phase::Event, Phase::Terminated];

    /// `fmi3GetContinuousStates`.
    pub fn get_states(&mut self, x: &mut [f64]) -> Result<(), String> {
        let nx = self.n_states;
        let f = self.version.function("GetContinuousStates");
        let (me, _) = self.me_run("GetContinuousStates", &Self::READABLE)?;
        count(&f, x.len(), nx, "continuous states")?;
        x.copy_from_slice(&me.x);
        Ok(())
    }

    /// `fmi3GetNominalsOfContinuousStates`: [`NOMINAL`] for every state (allowed from
    /// instantiation on).
    pub fn get_nominals(&mut self, nominals: &mut [f64]) -> Result<(), String> {
        let f = self.version.function("GetNominalsOfContinuousStates");
        count(&f, nominals.len(), self.n_states, "continuous states")?;
        nominals.fill(NOMINAL);
        Ok(())
    }

    /// `fmi3GetContinuousStateDerivatives`, `fmi2GetDerivatives`.
    pub fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), String> {
        let nx = self.n_states;
        let f = self.version.function("GetContinuousStateDerivatives");
        let (me, model) = self.me_run("GetContinuousStateDerivatives", &Self::READABLE)?;
        count(&f, dx.len(), nx, "continuous states")?;
        me.derivatives(model, dx);
        Ok(())
    }

    /// `fmi3GetEventIndicators`.
    pub fn get_indicators(&mut self, z: &mut [f64]) -> Result<(), String> {
        let nz = self.n_indicators;
        let f = self.version.function("GetEventIndicators");
        let (me, model) = self.me_run("GetEventIndicators", &Self::READABLE)?;
        count(&f, z.len(), nz, "event indicators")?;
        me.indicators(model, z);
        Ok(())
    }

    /// `fmi3CompletedIntegratorStep`: the outputs at the step's end are checked (a
    /// non-finite signal fails the run, as in a native run); never asks for an event.
    pub fn completed_integrator_step(&mut self) -> Result<(), String> {
        self.me_run("CompletedIntegratorStep", &[Phase::Continuous])?;
        let first = self.first_output as u32;
        if (first as usize) < self.first_state {
            if let Err(e) = self.get(first) {
                self.phase = Phase::Failed;
                return Err(e);
            }
        }
        Ok(())
    }
}

/// The nominal value of every continuous state. Importers take their absolute tolerances
/// from the nominals (CVODE in fmpy: `atol = rtol * nominal`), and drivelink's mode
/// changes include thresholds that states draining towards zero reach slowly (a clutch's
/// engagement falling to its free threshold `5e-7`, a locked clutch's capacity falling to
/// the torque it carries): their instants need the small states to an absolute accuracy
/// a nominal of 1 does not give. With `1e-4` fmpy's CVODE at rtol `1e-9` puts every lock,
/// unlock, engage and free of `full_car.json` within 4.4e-7 s of the native run's (with 1:
/// an unlock 7.4e-5 s late, frees 1.5e-3 s early); states far from zero are held to the
/// relative tolerance either way.
pub const NOMINAL: f64 = 1e-4;

/// An array argument of `n` values where `expected` are needed.
fn count(function: &str, n: usize, expected: usize, what: &str) -> Result<(), String> {
    if n == expected {
        Ok(())
    } else {
        Err(format!("{function}: {n} values for {expected} {what}"))
    }
}
