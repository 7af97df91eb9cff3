//! A model's run state at one instant ([`ModelState`]): taken from a model with
//! [`Model::save_state`] and put into a model of the same plan with
//! [`Model::restore_state`] (the same model later, a fresh instance, or one rebuilt by
//! [`crate::Compiled::with_params`] with other parameter values whose structure is
//! unchanged). An FMU's `GetFMUState`/`SetFMUState` and its tunable parameters are built on
//! it.
//!
//! What it holds: the time and the whole continuous state vector (so a changed initial
//! value has no effect mid-run), every block's run state ([`crate::Block::save_run_state`]:
//! modes, held samples, phases), the friction joints' modes and release instants, the
//! pending time events, the energy audit's bookkeeping, and for a run stepped from outside
//! (`cosim.rs`) its settings and a copy of its integration (step size, controller history,
//! the pending step).
//!
//! Two ways back. [`Model::resume_state`], into a model with the parameter values the
//! state was taken with, goes on with the saved integration: the run continues bit for bit
//! as the one it was taken from did (taking a state changes nothing). [`Model::restore_state`],
//! into any model of the plan (one rebuilt with other parameter values), restarts the
//! integration at the state's time, as after an input change (an event call of kind
//! `External` settles the modes, the kernels start anew): that run is a function of the
//! state alone and differs from one that was never interrupted by the solver's tolerance,
//! as a restart at a time event does.

use drivelink_solver::{Integration, Settings};

use super::Model;
use crate::block::{FrictionMode, RunState};
use crate::plan::Plan;

/// A model's run state at one instant (see the module docs).
#[derive(Debug, Clone)]
pub struct ModelState {
    /// The plan's structure ([`structure_key`]): the state fits models of that structure
    /// only.
    structure: u64,
    n_states: usize,
    /// Time, s.
    t: f64,
    /// The continuous state at `t`.
    x: Vec<f64>,
    blocks: Vec<Option<RunState>>,
    modes: Vec<FrictionMode>,
    released_at: Vec<f64>,
    next_te: Vec<f64>,
    impact_loss: f64,
    stopped_by: Option<String>,
    first_x: Vec<f64>,
    stored_start: Vec<f64>,
    stored_jumps: Vec<f64>,
    /// The settings of the stepped run (`None`: not a stepped run).
    stepping: Option<Settings>,
    /// The stepped run's integration as it was (its step size, controller history and
    /// pending step), to go on exactly from there ([`Model::resume_state`]).
    integration: Option<Box<Integration>>,
}

impl ModelState {
    /// The time of the state, s.
    pub fn time(&self) -> f64 {
        self.t
    }
    /// The continuous state vector.
    pub fn state(&self) -> &[f64] {
        &self.x
    }
}

/// Why a state cannot be taken or put back.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StateError {
    /// The model's structure is not that of the plan the state was taken from.
    #[error("the saved state is of another model structure: the block list, states, guards or friction joints differ")]
    OtherStructure,
    /// A block's run state cannot be saved or is not of the block's type.
    #[error("block '{block}' ({type_name}): {message}")]
    Block {
        /// Flat block name.
        block: String,
        /// Block type.
        type_name: &'static str,
        /// What went wrong.
        message: String,
    },
    /// The stepped run cannot restart at the state's time.
    #[error("cannot restart the run at t = {t} s: {message}")]
    Restart {
        /// The state's time.
        t: f64,
        /// The solver's message.
        message: String,
    },
}

impl Model {
    /// The run state at `(t, x)` (a stepped run: at the point it reached, `t` and `x`
    /// ignored; see [`Model::save_stepped_state`]).
    pub fn save_state(&self, t: f64, x: &[f64]) -> Result<ModelState, StateError> {
        let plan = &self.plan;
        let blocks = self
            .blocks
            .iter()
            .enumerate()
            .map(|(b, blk)| {
                blk.save_run_state().map_err(|message| StateError::Block {
                    block: plan.blocks[b].name.clone(),
                    type_name: plan.blocks[b].type_name,
                    message,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let (t, x, stepping, integration) = match (&self.stepping, &self.snap.stepping) {
            (Some(it), Some(s)) => (
                it.time(),
                it.state().to_vec(),
                Some(s.clone()),
                Some(it.clone()),
            ),
            _ => (t, x.to_vec(), None, None),
        };
        Ok(ModelState {
            structure: structure_key(plan),
            n_states: plan.n_states,
            t,
            x,
            blocks,
            modes: self.net.modes.clone(),
            released_at: self.ev.released_at.clone(),
            next_te: self.run.next_te.clone(),
            impact_loss: self.run.impact_loss,
            stopped_by: self.run.stopped_by.clone(),
            first_x: self.run.first_x.clone(),
            stored_start: self.run.stored_start.clone(),
            stored_jumps: self.run.stored_jumps.clone(),
            stepping,
            integration,
        })
    }

    /// The run state at the point a stepped run reached ([`Model::step_to`]), with what
    /// its integration needs to restart there.
    pub fn save_stepped_state(&self) -> Result<ModelState, StateError> {
        self.save_state(f64::NAN, &[])
    }

    /// Put `s` into this model (of the same plan, see the module docs): its blocks' run
    /// states, the joints' modes, the time events and the audit's bookkeeping. A state of
    /// a stepped run restarts the integration at its time (see the module docs); otherwise
    /// the caller goes on from [`ModelState::time`] and [`ModelState::state`] (a Model
    /// Exchange importer). A block whose run state does not fit leaves the model
    /// unusable for stepping until a state that fits is restored; nothing panics.
    pub fn restore_state(&mut self, s: &ModelState) -> Result<(), StateError> {
        self.put_state(s, false)
    }

    /// [`Model::restore_state`] into a model with the parameter values the state was taken
    /// with (the same model, or one built alike): a stepped run goes on with the
    /// integration as it was when the state was taken (its step size, controller history
    /// and pending step), so it continues bit for bit as the run it was taken from did.
    /// Into a model with other parameter values use [`Model::restore_state`] (the
    /// integration restarts).
    pub fn resume_state(&mut self, s: &ModelState) -> Result<(), StateError> {
        self.put_state(s, true)
    }

    /// Put `s` into this model; `resume`: go on with the saved integration rather than
    /// restart it.
    fn put_state(&mut self, s: &ModelState, resume: bool) -> Result<(), StateError> {
        let plan = self.plan.clone();
        if s.structure != structure_key(&plan)
            || s.n_states != plan.n_states
            || s.blocks.len() != self.blocks.len()
        {
            return Err(StateError::OtherStructure);
        }
        self.stepping = None;
        for (b, (blk, saved)) in self.blocks.iter_mut().zip(&s.blocks).enumerate() {
            let named = |message: String| StateError::Block {
                block: plan.blocks[b].name.clone(),
                type_name: plan.blocks[b].type_name,
                message,
            };
            match saved {
                Some(rs) => blk
                    .restore_run_state(rs)
                    .map_err(|e| named(e.to_string()))?,
                None => {
                    if blk.save_run_state().map_err(named)?.is_some() {
                        return Err(named("the saved state has no run state for it".into()));
                    }
                }
            }
        }
        self.net.set_modes(&s.modes);
        self.ev.released_at.copy_from_slice(&s.released_at);
        self.run.next_te.copy_from_slice(&s.next_te);
        self.run.update_next_te_min();
        self.run.impact_loss = s.impact_loss;
        self.run.stopped_by = s.stopped_by.clone();
        self.run.first_x.copy_from_slice(&s.first_x);
        self.run.stored_start = s.stored_start.clone();
        self.run.stored_jumps.copy_from_slice(&s.stored_jumps);
        self.run.last_x.copy_from_slice(&s.x);
        self.run.failure = None;
        self.ev.failure = None;
        // Everything evaluated or factorized before belongs to another state.
        self.ev.sig_unchecked = true;
        self.ev.held_g_valid = false;
        self.cache.valid = false;
        self.cache.current = false;
        self.dirty_factor = true;
        self.inputs_set = false;
        self.snap.stepping = None;
        self.refresh_constants(s.t, &s.x);
        match (&s.stepping, &s.integration) {
            (Some(settings), Some(it)) if resume => {
                // The network's factorization of the restored modes, as the run had it (a
                // restart's event call makes it; going on, nothing else would).
                if !plan.nodes.is_empty() {
                    self.refactor(s.t).map_err(|e| StateError::Restart {
                        t: s.t,
                        message: e.message,
                    })?;
                }
                self.stepping = Some(it.clone());
                self.snap.stepping = Some(settings.clone());
                Ok(())
            }
            (Some(settings), _) => self.resume_stepping(s.t, &s.x, settings),
            (None, _) => Ok(()),
        }
    }

    /// Restart the stepped run at `t` from `x` with the run settings `settings` (their
    /// start time replaced by `t`): the solver's initial event call becomes an `External`
    /// one (no initial projection, no initial modes).
    fn resume_stepping(
        &mut self,
        t: f64,
        x: &[f64],
        settings: &Settings,
    ) -> Result<(), StateError> {
        let mut set = settings.clone();
        set.start_time = t;
        if set.stop_time <= t {
            // A state taken at the stop time: the run restarts there with a stop time a
            // hair later (the solver needs a span), so its state and outputs are there to
            // read; the caller steps no further.
            set.stop_time = t + 1e-9 * t.abs().max(1.0);
        }
        self.snap.resuming = true;
        let started = Integration::start(self, x, &set);
        self.snap.resuming = false;
        let it = started.map_err(|f| StateError::Restart {
            t,
            message: self.explain(&f.error),
        })?;
        self.run.last_x.copy_from_slice(it.state());
        self.stepping = Some(Box::new(it));
        self.snap.stepping = Some(settings.clone());
        Ok(())
    }
}

/// What a model keeps for its states (a field of [`Model`]).
#[derive(Debug, Default)]
pub(super) struct SnapHooks {
    /// The stepped run is being restarted from a restored state: the solver's `Initial`
    /// event call is handled as an `External` one.
    pub(super) resuming: bool,
    /// The settings the stepped run was started with.
    pub(super) stepping: Option<Settings>,
}

/// A hash of what a run state's layout depends on: every block's name, type, states and
/// guards, the friction joints, the signal slots and the state vector's size. Two
/// compilations of one netlist (or a model rebuilt with parameter values that keep its
/// structure) have the same key.
fn structure_key(plan: &Plan) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    plan.n_states.hash(&mut h);
    plan.n_signals.hash(&mut h);
    plan.n_block_guards.hash(&mut h);
    for b in &plan.blocks {
        (&b.name, b.type_name, &b.x, &b.guards, &b.joints).hash(&mut h);
    }
    for j in &plan.joints {
        j.name.hash(&mut h);
    }
    h.finish()
}
