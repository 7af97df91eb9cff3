//! Model Exchange: the importer integrates the model's continuous states itself and the
//! FMU serves derivatives, event indicators and event handling at the `(t, x)` it is given.
//!
//! How drivelink's hybrid model maps onto FMI 3.0 Model Exchange (FMI 2.0's functions of
//! the same names, `fmi2NewDiscreteStates` for `fmi3UpdateDiscreteStates`, the same way):
//! - continuous states: every state of the model ([`HybridSystem::n_states`]);
//! - event indicators: every guard ([`HybridSystem::guards`]), a fixed number; the modes
//!   are valid while every guard is `>= 0`, a state event is one going negative;
//! - `fmi3UpdateDiscreteStates` makes one call of [`HybridSystem::handle_event`] (the
//!   solver's event iteration, one handler call per superdense instant): first the state
//!   event (the guards negative when the importer entered Event Mode), then a time event
//!   due at the same instant; `discreteStatesNeedUpdate` while guards stay negative
//!   (at most `max_event_iterations` calls, as the solver allows), `valuesOfContinuousStatesChanged`
//!   when a handler changed `x`, `nextEventTime` from [`HybridSystem::next_time_event`],
//!   `terminateSimulation` when a block stopped the run;
//! - entering Event Mode with no guard negative and no time event due (an indicator that
//!   came back to the valid side) handles nothing, as the solver does when it re-arms a guard.

use drivelink_core::Model;
use drivelink_solver::{EventAction, EventCause, EventKind, HybridSystem, SolverError};

/// What one `fmi3UpdateDiscreteStates` reports.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DiscreteUpdate {
    pub discrete_states_need_update: bool,
    pub terminate_simulation: bool,
    pub values_of_continuous_states_changed: bool,
    /// The next time event, if any.
    pub next_event_time: Option<f64>,
}

/// The run of a Model Exchange instance: the time and states the importer gave, and the
/// event handling in progress.
#[derive(Debug, Clone)]
pub struct MeRun {
    pub t: f64,
    pub x: Vec<f64>,
    g: Vec<f64>,
    /// The guards negative at the current instant (the handler's cause).
    neg: Vec<usize>,
    /// The next handler call at this instant, if one is due.
    pending: Option<EventKind>,
    /// A time event due at this instant, handled after the state event settles.
    time_after: bool,
    /// Handler calls at this instant.
    calls: usize,
    max_calls: usize,
    /// Whether the importer's outputs are those of `(t, x)`.
    pub outputs_current: bool,
}

impl MeRun {
    /// Start at `t0`: the initial state, the initial event (one handler call, as the
    /// solver makes first), and the iteration it leaves pending.
    pub fn start(model: &mut Model, t0: f64, max_calls: usize) -> Result<MeRun, String> {
        let x = model.begin_external(t0);
        let mut run = MeRun {
            t: t0,
            g: vec![0.0; model.n_guards()],
            x,
            neg: Vec::new(),
            pending: Some(EventKind::Initial),
            time_after: false,
            calls: 0,
            max_calls: max_calls.max(1),
            outputs_current: false,
        };
        run.collect_negatives(model);
        run.update(model)?;
        Ok(run)
    }

    /// Fill `neg` with the guards negative at `(t, x)`.
    fn collect_negatives(&mut self, model: &mut Model) {
        if self.g.is_empty() {
            self.neg.clear();
            return;
        }
        model.guards(self.t, &self.x, &mut self.g);
        self.neg.clear();
        self.neg
            .extend((0..self.g.len()).filter(|&i| self.g[i] < 0.0));
    }

    /// `fmi3EnterEventMode` at the current `(t, x)`: which handler calls this instant needs
    /// (a state event for the negative guards, a time event due now, or nothing).
    pub fn enter_event_mode(&mut self, model: &mut Model) {
        self.calls = 0;
        self.collect_negatives(model);
        let due = model.next_time_event(self.t - time_tol(self.t)) <= self.t + time_tol(self.t);
        (self.pending, self.time_after) = match (self.neg.is_empty(), due) {
            (false, due) => (Some(EventKind::State), due),
            (true, true) => (Some(EventKind::Time), false),
            (true, false) => (None, false),
        };
    }

    /// The model was changed from outside at this instant (a tunable parameter set in
    /// Event Mode): the next `fmi3UpdateDiscreteStates` makes an event call of kind
    /// `External` that settles the modes for it.
    pub fn changed_from_outside(&mut self) {
        if self.pending.is_none() {
            self.pending = Some(EventKind::External);
            self.calls = 0;
        }
        self.outputs_current = false;
    }

    /// Whether event handling at this instant is still in progress.
    pub fn pending(&self) -> bool {
        self.pending.is_some()
    }

    /// `fmi3UpdateDiscreteStates`: the next handler call due at this instant, if any.
    pub fn update(&mut self, model: &mut Model) -> Result<DiscreteUpdate, String> {
        let mut out = DiscreteUpdate::default();
        if let Some(kind) = self.pending.take() {
            let before = self.x.clone();
            let cause = EventCause {
                kind,
                guards: &self.neg,
            };
            let action = model
                .handle_event(self.t, &mut self.x, cause)
                .map_err(|e| format!("at t = {} s: {}", self.t, e.message))?;
            self.calls += 1;
            self.outputs_current = false;
            if let Some(i) = self.x.iter().position(|v| !v.is_finite()) {
                return Err(format!(
                    "non-finite state at t = {} s ({}); the model diverged",
                    self.t,
                    model.state_owner(i)
                ));
            }
            out.values_of_continuous_states_changed = self.x != before;
            if action == EventAction::Stop {
                out.terminate_simulation = true;
                self.time_after = false;
                return Ok(out);
            }
            self.collect_negatives(model);
            if !self.neg.is_empty() {
                if self.calls >= self.max_calls {
                    let guards = self.neg.iter().map(|&i| model.guard_name(i)).collect();
                    return Err(SolverError::EventIteration {
                        t: self.t,
                        iterations: self.calls,
                        guards,
                    }
                    .to_string());
                }
                self.pending = Some(EventKind::Iteration);
            } else if self.time_after {
                self.time_after = false;
                self.pending = Some(EventKind::Time);
            }
        }
        out.discrete_states_need_update = self.pending.is_some();
        let next = model.next_time_event(self.t);
        out.next_event_time = next.is_finite().then_some(next);
        Ok(out)
    }

    /// The derivatives at `(t, x)` into `dx`.
    pub fn derivatives(&self, model: &mut Model, dx: &mut [f64]) {
        model.derivatives(self.t, &self.x, dx);
    }

    /// The event indicators (guards) at `(t, x)` into `z`.
    pub fn indicators(&self, model: &mut Model, z: &mut [f64]) {
        if !z.is_empty() {
            model.guards(self.t, &self.x, z);
        }
    }
}

/// Time events within this distance of the current time are due now (the core's own
/// time-event tolerance, `1e-13` relative to `max(1, |t|)`).
fn time_tol(t: f64) -> f64 {
    1e-13 * t.abs().max(1.0)
}
