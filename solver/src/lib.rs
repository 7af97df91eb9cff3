//! drivelink-solver: a hybrid ODE integrator with exact event location.
//!
//! It integrates any [`HybridSystem`]: continuous states between events, guard functions
//! located on the dense output of each accepted step, time events hit exactly, an event
//! handler that may change modes, reset states or stop the run. It knows nothing about
//! blocks, shafts or JSON.
//!
//! Entry point: [`integrate`].

mod system;
pub use system::{EventAction, EventCause, EventKind, HybridSystem, OutputKind, SystemError};

mod integrator;
mod locate;
mod stepper;
mod tableau;
pub use integrator::{integrate, GUARD_SAMPLES};

/// The time-stepping method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// Dormand–Prince 5(4), adaptive, 4th-order dense output (default).
    Dopri5,
    /// Dormand–Prince 8(5,3), adaptive, 7th-order dense output.
    Dop853,
    /// Classic Runge–Kutta 4 with a fixed step (`step`, seconds); events are still located.
    Rk4 { step: f64 },
}

impl Method {
    /// The netlist spelling (`dopri5`, `dop853`, `rk4`).
    pub fn name(&self) -> &'static str {
        match self {
            Method::Dopri5 => "dopri5",
            Method::Dop853 => "dop853",
            Method::Rk4 { .. } => "rk4",
        }
    }
}

/// Integrator settings. `Settings::default()` gives the netlist defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub method: Method,
    pub start_time: f64,
    pub stop_time: f64,
    /// Relative tolerance of the adaptive methods.
    pub rtol: f64,
    /// Absolute tolerance of the adaptive methods.
    pub atol: f64,
    /// Largest step allowed (`f64::INFINITY` = none).
    pub max_step: f64,
    /// First step to try (`None` = automatic).
    pub initial_step: Option<f64>,
    /// Steps smaller than this (relative to `max(1, |t|)`) are a step-size underflow error.
    pub min_step_rel: f64,
    /// Accepted + rejected steps allowed before a max-steps error.
    pub max_steps: u64,
    /// `Some(dt)`: output on the grid `start + k*dt` (interpolated) plus event instants;
    /// `None`: output at every accepted step and event instant.
    pub output_interval: Option<f64>,
    /// Handler calls allowed at one instant before the run fails (event iteration).
    pub max_event_iterations: usize,
    /// Chattering guard: more than `chatter_max_events` state events within a window of
    /// `chatter_window` seconds is an error naming the guard that fired most.
    pub chatter_window: f64,
    pub chatter_max_events: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            method: Method::Dopri5,
            start_time: 0.0,
            stop_time: 10.0,
            rtol: 1e-6,
            atol: 1e-8,
            max_step: f64::INFINITY,
            initial_step: None,
            min_step_rel: 1e-14,
            max_steps: 10_000_000,
            output_interval: None,
            max_event_iterations: 50,
            chatter_window: 1e-6,
            chatter_max_events: 100,
        }
    }
}

/// Counters of one run. Snapshotted in tests so performance regressions show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Accepted steps.
    pub steps: u64,
    /// Rejected steps.
    pub rejected_steps: u64,
    /// Calls of `derivatives`.
    pub rhs_evals: u64,
    /// Calls of `guards`.
    pub guard_evals: u64,
    /// Event instants handled (time and state events; iterations at one instant count once).
    pub events: u64,
}

/// How a run ended without error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Reached `stop_time`.
    Completed,
    /// The event handler returned [`EventAction::Stop`].
    Stopped,
}

/// The result of a successful run. The trajectory itself went to `HybridSystem::output`.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub status: Status,
    pub end_time: f64,
    pub stats: Stats,
}

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SolverError {
    #[error("invalid solver settings: {message}")]
    InvalidSettings { message: String },
    #[error("maximum number of steps ({max_steps}) reached at t = {t} s; raise solver.max_steps or check the model for stiffness or chattering")]
    MaxSteps { t: f64, max_steps: u64 },
    #[error("step size underflow at t = {t} s (h = {h:e} s); the model is probably stiff or discontinuous here; loosen rtol/atol, or check for a discontinuity that is not declared as an event")]
    StepSizeUnderflow { t: f64, h: f64 },
    #[error("chattering at t = {t} s: {count} events within {window} s, most from guard '{guard}'; the model switches mode endlessly there")]
    Chattering {
        t: f64,
        guard: String,
        count: usize,
        window: f64,
    },
    #[error("event iteration did not settle at t = {t} s after {iterations} handler calls; guards still violated: {}", guards.join(", "))]
    EventIteration {
        t: f64,
        iterations: usize,
        guards: Vec<String>,
    },
    #[error("at t = {t} s: {message}")]
    System { t: f64, message: String },
    #[error("non-finite state at t = {t} s (state index {index}); the model diverged")]
    NonFinite { t: f64, index: usize },
}

/// A failed run: the error plus where and how far it got (outputs up to `end_time` were
/// already delivered to the system).
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub error: SolverError,
    pub end_time: f64,
    pub stats: Stats,
}
