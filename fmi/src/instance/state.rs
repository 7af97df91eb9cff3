//! Tunable parameters and the FMU state (`fmi3GetFMUState`/`fmi3SetFMUState`, FMI 2.0's
//! `fmi2GetFMUstate`/`fmi2SetFMUstate`), both built on the model's run state
//! ([`drivelink_core::ModelState`]).
//!
//! A parameter set after initialization (Co-Simulation: between steps; Model Exchange: in
//! Event Mode) rebuilds the model with the new values ([`Compiled::with_params_same_structure`])
//! and puts the old model's run state into it: the time, every continuous state (a changed
//! initial value has no effect mid-run), the blocks' modes and held values. In
//! Co-Simulation the integration then restarts at the current communication point, as
//! after an input change; in Model Exchange the next `UpdateDiscreteStates` settles the
//! modes for the new values. A value that changes the model's structure is refused,
//! naming the parameter, and the old value stays.
//!
//! A state holds the Co-Simulation integration as it was (step size, controller history,
//! the pending step): getting one changes nothing, and setting it back with the same
//! parameter values goes on exactly as the run did after the get, bit for bit. A state set
//! with other parameter values rebuilds the model and restarts the integration at the
//! state's time.
//!
//! [`Compiled::with_params_same_structure`]: drivelink_core::Compiled::with_params_same_structure

use drivelink_core::{Model, ModelState};
use serde_json::Value;

use super::{Causality, Instance, Phase};

/// The input handles of a model, by value reference.
type InputHandles = Vec<(
    usize,
    std::sync::Arc<drivelink_blocks::signal::inport::InputHandle>,
)>;
use crate::me::MeRun;

/// The phases an FMU state may be set in; it may be taken in all of them but the last
/// (`Failed`).
const STATE_PHASES: [Phase; 7] = [
    Phase::Instantiated,
    Phase::Initialization,
    Phase::Step,
    Phase::Event,
    Phase::Continuous,
    Phase::Terminated,
    Phase::Failed,
];

/// A saved FMU state: the variables' values, the phase, and the model's run state.
#[derive(Debug, Clone)]
pub struct FmuState {
    values: Vec<f64>,
    time: f64,
    phase: Phase,
    model: Option<ModelState>,
    me: Option<MeRun>,
}

impl Instance {
    /// `fmi3GetFMUState`, `fmi2GetFMUstate`.
    pub fn get_fmu_state(&mut self) -> Result<FmuState, String> {
        self.expect("GetFMUState", &STATE_PHASES[..STATE_PHASES.len() - 1])?;
        let model = match (self.model.as_mut(), self.me.as_ref()) {
            (Some(m), Some(me)) => Some(m.save_state(me.t, &me.x).map_err(|e| e.to_string())?),
            (Some(m), None) => Some(m.save_stepped_state().map_err(|e| e.to_string())?),
            _ => None,
        };
        Ok(FmuState {
            values: self.values.clone(),
            time: self.time,
            phase: self.phase,
            model,
            me: self.me.clone(),
        })
    }

    /// `fmi3SetFMUState`, `fmi2SetFMUstate`: back to `s` (a state of this instance's FMU).
    pub fn set_fmu_state(&mut self, s: &FmuState) -> Result<(), String> {
        // A failed instance may be set back to a state taken before it failed.
        self.expect("SetFMUState", &STATE_PHASES)?;
        if s.values.len() != self.values.len() {
            return Err("the FMU state is of another FMU".into());
        }
        let Some(ms) = &s.model else {
            self.values.clone_from(&s.values);
            self.model = None;
            self.inputs.clear();
            self.me = None;
            self.time = s.time;
            self.phase = s.phase;
            self.outputs_current = false;
            return Ok(());
        };
        let same_params = self.model.is_some()
            && self
                .vars
                .iter()
                .enumerate()
                .filter(|(_, v)| v.causality == Causality::Parameter)
                .all(|(k, _)| self.values[k].to_bits() == s.values[k].to_bits());
        let old_values = std::mem::replace(&mut self.values, s.values.clone());
        let model = match self.model.take().filter(|_| same_params) {
            Some(m) => Ok(m),
            None => self.build_model(),
        };
        let model = model.and_then(|mut m| {
            let inputs = self.input_handles(&m)?;
            for (k, h) in &inputs {
                h.set(self.values[*k]);
            }
            if same_params {
                m.resume_state(ms)
            } else {
                m.restore_state(ms)
            }
            .map_err(|e| e.to_string())?;
            Ok((m, inputs))
        });
        match model {
            Ok((m, inputs)) => {
                self.model = Some(m);
                self.inputs = inputs;
                self.me = s.me.clone();
                self.time = s.time;
                self.phase = s.phase;
                self.outputs_current = false;
                Ok(())
            }
            Err(e) => {
                self.values = old_values;
                self.phase = Phase::Failed;
                Err(e)
            }
        }
    }

    /// A parameter `k` (a value reference) set to `value` after initialization: the model
    /// rebuilt with it, the run state carried over (see the module docs).
    pub(super) fn tune(&mut self, k: usize, value: f64) -> Result<(), String> {
        let name = self.vars[k].name.clone();
        let allowed = matches!(
            (self.me.is_some(), self.phase),
            (true, Phase::Event) | (false, Phase::Step)
        );
        if !allowed {
            let when = if self.me.is_some() {
                "in Event Mode"
            } else {
                "between steps"
            };
            return Err(format!(
                "parameter '{name}' cannot be set in phase {:?}: a tunable parameter is set \
                 before {}, or {when}",
                self.phase,
                self.version.function("ExitInitializationMode")
            ));
        }
        if value.to_bits() == self.values[k].to_bits() {
            return Ok(());
        }
        let old = std::mem::replace(&mut self.values[k], value);
        self.rebuild_keeping_state().map_err(|e| {
            self.values[k] = old;
            format!("parameter '{name}' = {value} is refused: {e}")
        })
    }

    /// Rebuild the model with the current parameter values and put the old model's run
    /// state into it.
    fn rebuild_keeping_state(&mut self) -> Result<(), String> {
        let Some(old) = self.model.as_ref() else {
            return Err("the model is not initialized".into());
        };
        let state = match self.me.as_ref() {
            Some(me) => old.save_state(me.t, &me.x),
            None => old.save_stepped_state(),
        }
        .map_err(|e| e.to_string())?;
        let (mut model, inputs) = self.model_same_structure()?;
        model.restore_state(&state).map_err(|e| e.to_string())?;
        self.model = Some(model);
        self.inputs = inputs;
        self.outputs_current = false;
        if let Some(me) = self.me.as_mut() {
            me.changed_from_outside();
        }
        Ok(())
    }

    /// A run instance with the current parameter and input values, of the compiled
    /// structure, and the handles of its inputs.
    fn model_same_structure(&self) -> Result<(Model, InputHandles), String> {
        let overrides: Vec<(String, Value)> = self.parameter_overrides();
        let model = self
            .compiled
            .with_params_same_structure(&self.registry, &overrides)
            .map_err(|e| e.to_string())?;
        let inputs = self.input_handles(&model)?;
        for (k, h) in &inputs {
            h.set(self.values[*k]);
        }
        Ok((model, inputs))
    }
}
