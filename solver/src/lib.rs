//! drivelink-solver: a hybrid ODE integrator with exact event location.
//!
//! It integrates any [`HybridSystem`]: continuous states between events, guard functions
//! located on the dense output of each accepted step, time events hit exactly, an event
//! handler that may change modes, reset states or stop the run. It knows nothing about
//! blocks, shafts or JSON.
//!
//! Entry points: [`integrate`] (a run from start to stop) and [`Integration`] (a run
//! advanced to points its caller chooses, as a co-simulation steps).

mod system;
pub use system::{EventAction, EventCause, EventKind, HybridSystem, OutputKind, SystemError};

mod controller;
mod engine;
mod integrator;
mod iteration;
pub mod jacobian;
mod kernel;
mod locate;
mod lu;
mod radau;
pub mod simd;
mod stepper;
mod stepping;
mod tableau;
pub use integrator::integrate;
pub use jacobian::{jacobian, Colouring, Differencing, FiniteDifferences, SparsityPattern};
pub use stepping::Integration;

/// The time-stepping method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// Dormand–Prince 5(4), adaptive, 4th-order dense output (default). On a model it finds
    /// stiff where the rest of the run would take more than a tenth of `max_steps`, it
    /// stops with [`SolverError::Stiff`] (see `engine.rs`).
    Dopri5,
    /// Dormand–Prince 8(5,3), adaptive, 7th-order dense output.
    Dop853,
    /// Classic Runge–Kutta 4 with a fixed step (`step`, seconds); events are still located.
    Rk4 { step: f64 },
    /// Radau IIA of order 5 (Hairer & Wanner's RADAU5 design): implicit, L-stable, for stiff
    /// models; simplified Newton with a finite-difference Jacobian, 3rd-order dense output
    /// from the collocation polynomial. Netlist names `radau5` and `stiff`.
    Radau5,
    /// Starts with [`Method::Dopri5`], switches to [`Method::Radau5`] when Dopri5's
    /// stiffness test fires and back when the step size no longer is stability-limited
    /// (like LSODA). Every switch is logged in [`Outcome::switches`] / [`Failure::switches`].
    Auto,
}

/// The most states the implicit kernel takes ([`Method::Radau5`], and [`Method::Auto`],
/// which may switch to it): it keeps about five dense `n x n` matrices (the Jacobian and
/// the real and complex iteration matrices, 40·n² bytes: 1 GB here) and factorizes them
/// in O(n³) (4,000 states: a minute for 0.01 s of a lag chain).
pub const MAX_IMPLICIT_STATES: usize = 5_000;

impl Method {
    /// Why this method cannot integrate `n` states, if it cannot: the implicit kernel's
    /// dense matrices above [`MAX_IMPLICIT_STATES`] (checked before anything is
    /// allocated).
    pub fn state_limit_error(&self, n: usize) -> Option<String> {
        let why = match self {
            Method::Radau5 => "radau5 keeps",
            Method::Auto => "auto may switch to radau5, which keeps",
            _ => return None,
        };
        (n > MAX_IMPLICIT_STATES).then(|| {
            format!(
                "method {why} dense {n} x {n} matrices: {n} states would need about {:.1} GB; \
                 it takes at most {MAX_IMPLICIT_STATES} states (use dopri5 or dop853)",
                40.0 * (n as f64).powi(2) / 1e9
            )
        })
    }

    /// Every name [`Method::from_name`] accepts (`stiff` is an alias of `radau5`).
    pub const NAMES: &'static [&'static str] =
        &["dopri5", "dop853", "rk4", "radau5", "stiff", "auto"];

    /// The netlist spelling (`dopri5`, `dop853`, `rk4`, `radau5`, `auto`).
    pub fn name(&self) -> &'static str {
        match self {
            Method::Dopri5 => "dopri5",
            Method::Dop853 => "dop853",
            Method::Rk4 { .. } => "rk4",
            Method::Radau5 => "radau5",
            Method::Auto => "auto",
        }
    }

    /// The method called `name` (one of [`Method::NAMES`]). `step` is the fixed step of
    /// `rk4` (required there) and must be `None` for the adaptive methods.
    ///
    /// ```
    /// use drivelink_solver::Method;
    /// assert_eq!(Method::from_name("stiff", None), Ok(Method::Radau5));
    /// assert_eq!(Method::from_name("rk4", Some(1e-3)), Ok(Method::Rk4 { step: 1e-3 }));
    /// assert!(Method::from_name("rk4", None).is_err());
    /// assert!(Method::from_name("ode45", None).unwrap_err().contains("dopri5"));
    /// ```
    pub fn from_name(name: &str, step: Option<f64>) -> Result<Method, String> {
        let method = match name {
            "dopri5" => Method::Dopri5,
            "dop853" => Method::Dop853,
            "radau5" | "stiff" => Method::Radau5,
            "auto" => Method::Auto,
            "rk4" => {
                return match step {
                    Some(h) if h > 0.0 && h.is_finite() => Ok(Method::Rk4 { step: h }),
                    Some(h) => Err(format!(
                        "method \"rk4\" needs a positive finite \"step\" (s), got {h}"
                    )),
                    None => Err(
                        "method \"rk4\" is fixed-step: give \"step\" (the step size, s)"
                            .to_string(),
                    ),
                };
            }
            other => {
                return Err(format!(
                    "unknown method '{other}'; expected one of: {}",
                    Self::NAMES.join(", ")
                ))
            }
        };
        if step.is_some() {
            return Err(format!(
                "\"step\" is the fixed step of method \"rk4\"; method \"{name}\" is adaptive (use max_step / initial_step)"
            ));
        }
        Ok(method)
    }
}

/// One switch of [`Method::Auto`] between its explicit and its implicit method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MethodSwitch {
    /// The instant of the switch (a step boundary), s.
    pub t: f64,
    /// The method used before `t`.
    pub from: Method,
    /// The method used from `t` on.
    pub to: Method,
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
    /// `None`: see `output_points`.
    pub output_interval: Option<f64>,
    /// Without `output_interval`: `Some(n)` outputs on a grid of about `n` points chosen
    /// from the span (`(stop − start)/n` rounded down to 1, 2 or 5 × 10^k, so between `n`
    /// and `2.5·n` points) plus every event instant; `None` outputs at every accepted step
    /// and event instant. Netlists default to `Some(2000)`.
    pub output_points: Option<u32>,
    /// Refuse settings whose output grid would exceed this many points (a grid that fine
    /// is a typo, and would exhaust memory).
    pub max_output_points: u64,
    /// Refuse settings whose output grid times the logged variables would exceed this
    /// many values (the results are held in memory before they are written: 8 bytes a
    /// value). Checked by the model, which knows its logged variables.
    pub max_output_values: u64,
    /// Time events (sample hits, breakpoints) allowed in one run: a model whose blocks
    /// declare more is refused before running, and a run that reaches this many fails.
    pub max_time_events: u64,
    /// Handler calls allowed at one instant before the run fails (event iteration).
    pub max_event_iterations: usize,
    /// Chattering guard: more than `chatter_max_events` state events within a window of
    /// `chatter_window` seconds is an error naming the guard that fired most.
    pub chatter_window: f64,
    pub chatter_max_events: usize,
    /// Interior points of every accepted step's dense output at which the guards are
    /// sampled (equally spaced), besides the step end. A guard that dips below zero and
    /// back within one step is caught when the dip spans a sample; `0` samples only the
    /// step ends. At most [`Settings::MAX_GUARD_SAMPLES`].
    pub guard_samples: usize,
    /// Wall-clock limit in seconds from the start of [`integrate`] (`None` = none). The
    /// clock is read once per attempted step; exceeding the limit ends the run with
    /// [`SolverError::Timeout`] (the outputs up to then were delivered, as with every
    /// failure).
    pub timeout: Option<f64>,
}

impl Settings {
    /// The largest accepted `guard_samples`.
    pub const MAX_GUARD_SAMPLES: usize = 1000;
    /// The default `guard_samples`, chosen by measurement (see `docs/solver.md`).
    pub const DEFAULT_GUARD_SAMPLES: usize = 4;

    /// The default `max_output_points`.
    pub const DEFAULT_MAX_OUTPUT_POINTS: u64 = 10_000_000;
    /// The default `max_output_values` (2 GB of results).
    pub const DEFAULT_MAX_OUTPUT_VALUES: u64 = 250_000_000;
    /// The default `max_time_events`.
    pub const DEFAULT_MAX_TIME_EVENTS: u64 = 10_000_000;
    /// The output grid netlists use by default: about this many points.
    pub const NETLIST_OUTPUT_POINTS: u32 = 2000;

    /// The interval of the output grid: `output_interval`, or the span divided by
    /// `output_points` rounded down to 1, 2 or 5 × 10^k; `None`: output at the steps.
    pub fn output_grid(&self) -> Option<f64> {
        if let Some(dt) = self.output_interval {
            return Some(dt);
        }
        let n = self.output_points? as f64;
        let raw = (self.stop_time - self.start_time) / n.max(1.0);
        if !(raw > 0.0 && raw.is_finite()) {
            return None;
        }
        let e = 10f64.powf(raw.log10().floor());
        let m = raw / e;
        let nice = if m >= 5.0 {
            5.0
        } else if m >= 2.0 {
            2.0
        } else {
            1.0
        };
        Some(nice * e)
    }

    /// Output points the fixed output grid will produce (`None` without an output grid,
    /// when the number follows the accepted steps): the initial point, the grid points
    /// `start + k·dt` before `stop_time` and the final point, without the two points of
    /// each event instant. It is `inf` for an absurd interval (say 5e-324), so a caller
    /// can refuse such settings before running.
    pub fn estimated_output_points(&self) -> Option<f64> {
        let dt = self.output_grid()?;
        // Grid points closer to stop_time than the snapping tolerance give way to Final.
        let span = self.stop_time - self.start_time - 1e-12 * self.stop_time.abs().max(1.0);
        Some(((span / dt).ceil() - 1.0).max(0.0) + 2.0)
    }

    /// The least number of steps the settings force: `(stop − start) / step` for RK4, or
    /// `(stop − start) / max_step` when `max_step` is finite (`None` otherwise). Like
    /// [`Settings::estimated_output_points`], a guard against absurd settings before a run.
    pub fn estimated_min_steps(&self) -> Option<f64> {
        let span = self.stop_time - self.start_time;
        let h = match self.method {
            Method::Rk4 { step } => step.min(self.max_step),
            _ if self.max_step.is_finite() => self.max_step,
            _ => return None,
        };
        Some((span / h).ceil())
    }
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
            output_points: None,
            max_output_points: Self::DEFAULT_MAX_OUTPUT_POINTS,
            max_output_values: Self::DEFAULT_MAX_OUTPUT_VALUES,
            max_time_events: Self::DEFAULT_MAX_TIME_EVENTS,
            max_event_iterations: 50,
            chatter_window: 1e-6,
            chatter_max_events: 100,
            guard_samples: Settings::DEFAULT_GUARD_SAMPLES,
            timeout: None,
        }
    }
}

/// Counters of one run. Snapshotted in tests so performance regressions show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Accepted steps.
    pub steps: u64,
    /// Rejected steps (error too large, Newton not converging, singular iteration matrix).
    pub rejected_steps: u64,
    /// Calls of `derivatives`: every one, including those made to form Jacobians.
    pub rhs_evals: u64,
    /// The part of `rhs_evals` spent on finite-difference Jacobians.
    pub jacobian_rhs_evals: u64,
    /// Calls of `guards`.
    pub guard_evals: u64,
    /// Calls of `output`.
    pub output_points: u64,
    /// Event instants handled (time and state events; iterations at one instant count once).
    pub events: u64,
    /// Jacobians formed (implicit method only).
    pub jacobian_evals: u64,
    /// Factorisations of the iteration matrices (one real plus one complex LU each).
    pub lu_decompositions: u64,
    /// Simplified-Newton iterations (each costs three `derivatives` calls).
    pub newton_iterations: u64,
}

impl Stats {
    /// All model evaluations the run asked for: `derivatives` + `guards` + `output` calls.
    pub fn model_evals(&self) -> u64 {
        self.rhs_evals + self.guard_evals + self.output_points
    }
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
    /// The switches [`Method::Auto`] made, in time order (empty for the other methods).
    pub switches: Vec<MethodSwitch>,
}

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SolverError {
    #[error("invalid solver settings: {message}")]
    InvalidSettings { message: String },
    /// `index`: the state component that dominated the error of the last attempted step.
    #[error("maximum number of steps ({max_steps}, accepted and rejected) reached at t = {t} s{}; the model may be stiff there (try method \"auto\" or \"radau5\"), or raise solver.max_steps, or check it for chattering", culprit(index))]
    MaxSteps {
        t: f64,
        max_steps: u64,
        index: Option<usize>,
    },
    /// `index`: the state component that dominated the error of the last rejected step.
    #[error("step size underflow at t = {t} s (h = {h:e} s){}; the model is probably stiff or discontinuous here; loosen rtol/atol, try method \"radau5\", or check for a discontinuity that is not declared as an event", culprit(index))]
    StepSizeUnderflow {
        t: f64,
        h: f64,
        index: Option<usize>,
    },
    /// Method `dopri5` found the model stiff (Hairer's test: 50,000 stability-limited
    /// steps without 6 others in between) where the rest of the run at the step size
    /// stability allows would take more than a tenth of `max_steps` (or more than the
    /// steps left):
    /// the run stops there instead of grinding on. `h`: that step size; `steps`: the
    /// steps it would take to `stop_time`; `index`: the state whose error limits the step.
    #[error("{}", stiff_message(*t, *h, *steps, &culprit_state(index)))]
    Stiff {
        t: f64,
        h: f64,
        steps: f64,
        index: Option<usize>,
    },
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
    /// The wall-clock limit [`Settings::timeout`] was exceeded; `t` is the last time reached.
    /// A Jacobian sparsity pattern entry outside the matrix.
    #[error(
        "Jacobian sparsity pattern entry (row {row}, column {col}) is outside the {n}x{n} matrix"
    )]
    PatternEntry { row: usize, col: usize, n: usize },
    /// A vector or matrix handed to the solver's API with the wrong size.
    #[error("{what} has {got} entries, expected {expected}")]
    Dimension {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("timeout: the run exceeded its wall-clock limit of {seconds} s at t = {t} s; results up to t were kept")]
    Timeout { t: f64, seconds: f64 },
    #[error("more than max_time_events = {limit} time events by t = {t} s; a sample time or breakpoint spacing this fine is probably a mistake (raise solver.max_time_events to allow it)")]
    TooManyTimeEvents { t: f64, limit: u64 },
}

impl SolverError {
    /// The state component an error points at, if any (the dominant error component of a
    /// step-size underflow or max-steps failure, the offending entry of a non-finite state).
    pub fn state_index(&self) -> Option<usize> {
        match self {
            SolverError::MaxSteps { index, .. }
            | SolverError::StepSizeUnderflow { index, .. }
            | SolverError::Stiff { index, .. } => *index,
            SolverError::NonFinite { index, .. } => Some(*index),
            _ => None,
        }
    }

    /// The message, with the state the error points at ([`SolverError::state_index`])
    /// called `state` (a model names it after its block: "state 1 of block 'tf'").
    pub fn message_naming(&self, state: &str) -> String {
        match self {
            SolverError::Stiff { t, h, steps, .. } => stiff_message(*t, *h, *steps, state),
            e => format!("{e} ({state})"),
        }
    }
}

/// The message of [`SolverError::Stiff`], with the limiting state called `state`.
fn stiff_message(t: f64, h: f64, steps: f64, state: &str) -> String {
    format!(
        "the model is stiff at t = {t} s ({state} limits the step to {h:.3e} s; the rest of the run would take about {steps:.1e} steps); use \"method\": \"stiff\" or \"auto\""
    )
}

/// "state i", or "one of its states" without an index.
fn culprit_state(index: &Option<usize>) -> String {
    match index {
        Some(i) => format!("state {i}"),
        None => "one of its states".to_string(),
    }
}

fn culprit(index: &Option<usize>) -> String {
    match index {
        Some(i) => format!(", largest error in state {i}"),
        None => String::new(),
    }
}

/// A failed run: the error plus where and how far it got (outputs up to `end_time` were
/// already delivered to the system).
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub error: SolverError,
    pub end_time: f64,
    pub stats: Stats,
    /// The switches [`Method::Auto`] made before the failure.
    pub switches: Vec<MethodSwitch>,
}
