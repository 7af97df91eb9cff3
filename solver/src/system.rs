//! The `HybridSystem` trait: the only thing the integrator knows about a model.
//!
//! A hybrid system has continuous states `x` integrated in time, and discrete *modes* that it
//! keeps itself (clutch locked, saturation active, ...). Modes change only inside
//! [`HybridSystem::handle_event`]. Between events the right-hand side is smooth.
//!
//! ## Guards (state events)
//! Every zero-crossing function is written as a *guard*: the current modes are valid while
//! `g_i(t, x) >= 0`, and a state event fires at the first time any guard becomes negative.
//! The integrator locates that time on the step's dense output and calls the handler at the
//! point just past the crossing (the right end of a bracket of relative width ~1e-12), so the
//! violated guard is strictly negative there and the handler sees an unambiguous situation.
//! A guard that is exactly zero at the start of a step and moves into the valid side never
//! fires; one that moves into the negative side fires at the step start.
//! A guard that is already negative at the start of a step (the handler could not make it
//! valid) is ignored until it is non-negative again.
//!
//! ## Time events
//! [`HybridSystem::next_time_event`] gives the next instant the integrator must hit exactly
//! (steps, breakpoints, sample hits). The integrator never steps across it.

/// Why [`HybridSystem::handle_event`] is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The integrator reached a time returned by `next_time_event`.
    Time,
    /// One or more guards became negative (their indices are in `EventCause::guards`).
    State,
    /// Called again at the same instant because guards were still negative after the last
    /// handler call (event iteration: a set of modes settling before the restart).
    Iteration,
    /// Called once at the start time before integration so the system can set consistent
    /// initial modes.
    Initial,
    /// The system was changed from outside the solver at this instant (an input set between
    /// two steps of a co-simulation, see [`crate::Integration::interrupt`]): its modes
    /// settle for the change, as at a time event that changed them.
    External,
}

/// What triggered an event call.
#[derive(Debug, Clone, Copy)]
pub struct EventCause<'a> {
    pub kind: EventKind,
    /// Indices of the guards that are negative at the event instant (empty for pure time events).
    pub guards: &'a [usize],
}

/// What the handler wants the integrator to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventAction {
    /// Restart integration from the (possibly modified) state.
    Continue,
    /// End the run at this instant with status "stopped".
    Stop,
}

/// Which kind of output point `output` is called for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// The initial point.
    Initial,
    /// The end of an accepted step.
    Step,
    /// A point interpolated on the dense output (fixed output interval): only the states
    /// of [`HybridSystem::output_states`] are guaranteed interpolated when it names some.
    Interpolated,
    /// The left-hand value at an event instant (before the handler ran).
    EventLeft,
    /// The right-hand value at an event instant (after the handler ran).
    EventRight,
    /// The final point of the run.
    Final,
}

/// An error raised by the system itself (for example a singular mechanical network after a
/// mode change). The integrator wraps it in `SolverError::System`.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemError {
    pub message: String,
}

impl std::fmt::Display for SystemError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A hybrid dynamical system the integrator can drive.
///
/// `derivatives` and `guards` are called many times per step and must not allocate.
/// The implicit method also calls `derivatives` at perturbed states to form Jacobians by
/// finite differences, so `derivatives` must not assume its `x` lies on the trajectory.
pub trait HybridSystem {
    /// Number of continuous states (constant over a run).
    fn n_states(&self) -> usize;
    /// Number of guard functions (constant over a run).
    fn n_guards(&self) -> usize;
    /// `dx = f(t, x)` under the current modes.
    fn derivatives(&mut self, t: f64, x: &[f64], dx: &mut [f64]);
    /// `derivatives` at the end of a step (the FSAL stage of DOPRI5, `f(t1, y1)` of the
    /// other explicit methods): the guards and the output of the same `(t, x)` usually follow,
    /// so a system may keep this evaluation to serve them. Defaults to `derivatives`.
    fn derivatives_step_end(&mut self, t: f64, x: &[f64], dx: &mut [f64]) {
        self.derivatives(t, x, dx);
    }
    /// Guard values under the current modes; see the module docs.
    fn guards(&mut self, t: f64, x: &[f64], g: &mut [f64]);
    /// The next time event strictly after `t`, or `f64::INFINITY` if there is none.
    fn next_time_event(&self, t: f64) -> f64;
    /// Apply the events at `t`. The handler may change modes, reset or project `x`, or ask
    /// to stop.
    fn handle_event(
        &mut self,
        t: f64,
        x: &mut [f64],
        cause: EventCause<'_>,
    ) -> Result<EventAction, SystemError>;
    /// A human-readable name for guard `i` ("clutch1.lock", "sat.upper"), used in error
    /// messages such as chattering reports.
    fn guard_name(&self, i: usize) -> String;
    /// Record an output point. `x` is the state at `t` (interpolated for `Interpolated`;
    /// there, when [`HybridSystem::output_states`] names some states, only those are
    /// guaranteed to be interpolated and the others may hold anything).
    fn output(&mut self, t: f64, x: &[f64], kind: OutputKind);
    /// `output` at the point of the call just made to the system: the integrator calls it
    /// instead of `output` only when `(t, x)` is, bit for bit, the point of its last call
    /// (`guards` at a grid point inside a step, or `derivatives_step_end` when nothing
    /// came after it), so a system that kept that call's evaluation may serve the output
    /// from it without comparing the point. Defaults to `output`.
    fn output_at_last_call(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        self.output(t, x, kind);
    }
    /// The states an output point reads (ascending, each below `n_states`), if not all:
    /// the integrator then interpolates only these for the output grid points no guard
    /// sample serves, and the system must read nothing else of an `Interpolated` point's
    /// `x`. Asked once per run; `None` (the default) means every state.
    fn output_states(&self) -> Option<Vec<usize>> {
        None
    }
    /// Called after the outputs of every accepted step and event instant: an error ends the
    /// run as a failure at that time (a non-finite signal found while recording, ...).
    fn check(&mut self) -> Result<(), SystemError> {
        Ok(())
    }
    /// The structure of `∂(dx)/∂x`: a superset of the non-zero entries, valid in every mode
    /// the run can reach. The implicit method asks once per run and forms its
    /// finite-difference Jacobians with one `derivatives` call per colour of the pattern's
    /// column colouring instead of one per state. `None` (the default) means dense.
    fn jacobian_pattern(&self) -> Option<crate::SparsityPattern> {
        None
    }
}
