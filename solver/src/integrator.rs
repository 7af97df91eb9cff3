//! The hybrid step loop: adaptive (or fixed) Runge–Kutta steps between events, guard
//! sampling and location on each accepted step's dense output, time events hit exactly,
//! event handling with event iteration, chattering detection and output.
//!
//! ## Why not `ode_solvers::integrate` directly
//! `ode_solvers`' own `integrate()` runs its loop to the end by itself: it gives no access to
//! each step's dense output (needed to locate guard crossings inside a step), it cannot reset
//! the state or restart after an event (the FSAL stage and the step-size history must be
//! discarded), its `System::system(&self)` is immutable (our systems keep modes and caches
//! and take `&mut self`), and it allocates nalgebra vectors on every step. So the step loop
//! is written here, on flat `&[f64]` buffers allocated once, with its own PI step-size
//! controller (`controller.rs`, a plain value, so a run's whole state can be cloned);
//! `ode_solvers`' `Dopri5`/`Dop853`/`Rk4` serve as independent cross-checks in the tests.
//!
//! ## Conventions (beyond the contract in `system.rs`)
//! * Guards are sampled after each accepted step at `Settings::guard_samples` equally
//!   spaced interior points of the dense output plus the step end, so a guard that dips
//!   below zero and back inside one step is still caught when the dip spans a sample.
//!   The output grid points inside the step are samples too (their outputs need the
//!   evaluation anyway): an equally spaced point within half a spacing of one is left
//!   out, and a grid point's output is emitted as soon as its guards show no crossing.
//! * The step kernels (explicit Runge–Kutta or Radau IIA) sit behind one protocol, the
//!   `Kernel` trait of `kernel.rs`, driven through the engine of `engine.rs` (which also
//!   switches kernels for `Method::Auto`); everything in this file is the same for every
//!   method.
//! * The wall clock is read once per attempted step when `Settings::timeout` is set.
//! * The event instant is the right end of a bracket of width
//!   `<= 1e-12 * max(1, |t|)` around the earliest crossing.
//! * A step that ends at a time event emits `EventLeft` (not `Step`), a step that ends at
//!   `stop_time` emits `Final` (not `Step`); the output grid point that coincides with
//!   `stop_time` (within 1e-12 relative) is replaced by `Final`. Grid points at or before an
//!   event instant are emitted (as `Interpolated`) before its `EventLeft`; a grid point
//!   that coincides with an event instant is not emitted (the instant's pair stands for it).
//! * Time events at or after `stop_time` are not handled.
//! * After a state event the step size is re-initialised (`initial_step` if given, else
//!   Hairer's automatic initial step) and the PI controller history is reset.
//! * After a time event that changed neither the state nor the derivatives (bit for bit: a
//!   sample hit whose held value stayed the same, an ABS cycle that kept its valve) the
//!   integration goes on as if there had been no event, with the step size and controller
//!   history it had.
//! * After any other time event (a drive cycle's breakpoint, a step input) the controller
//!   history is reset, and the first step is [`TIME_EVENT_STEP_FACTOR`] times the step the
//!   controller proposed at the event, at most the last step that ended where the
//!   controller put it (not cut short to land on an event or the stop time, nor cut by a
//!   state event); when there is none since the start or the last state event, the step
//!   is initialised as after a state event. This is safe because the first step is
//!   error-controlled like any other: a time event that made the dynamics faster (a reset
//!   of the state, a jump into a stiff mode) has its first step rejected and shortened
//!   until the error test passes. It pays because a time event usually changes an input's
//!   slope, not the time scale of the dynamics: Hairer's estimate starts a cycle's 1 s
//!   segments at about 0.04 s where 0.3 s passes, and the controller then needs two or
//!   three steps to grow back. The factor keeps rejections rare (measured on the Zoe's
//!   and the Fusion's UDDS runs: 1 rejected 2–3 % of the steps, 0.7 about 1 %;
//!   `BENCHMARKS.md`).
//! * If the `Initial` handler call returns `Stop`, the `Initial` point is still emitted and
//!   the run returns `Stopped` at `start_time` (no `Final`).
//! * When a state event is located exactly at a pending time event, both are handled at that
//!   instant (state call first, then the time call) between one `EventLeft`/`EventRight` pair.

use std::collections::VecDeque;
use std::time::Instant;

use crate::engine::Engine;
use crate::kernel::Verdict;
use crate::locate::{crossed, locate, Bracket};
use crate::{
    EventAction, EventCause, EventKind, Failure, HybridSystem, Method, Outcome, OutputKind,
    Settings, SolverError, Stats, Status,
};

/// A step whose end falls within this relative distance of a time event or the stop time
/// is stretched to end exactly there.
const SNAP_REL: f64 = 1e-12;

/// Relative width of the final event bracket.
const LOCATE_REL: f64 = 1e-12;

/// The first step after a time event that restarted the kernels, relative to the step
/// size the integration had (see the module docs).
const TIME_EVENT_STEP_FACTOR: f64 = 0.7;

/// Largest preallocated chattering history (it grows beyond this only if
/// `chatter_max_events` is larger, and then at most to `chatter_max_events + 1`).
const CHATTER_PREALLOC: usize = 4096;

/// An error and the last good time.
type Fail = (SolverError, f64);

/// How a time event at a step end left the integration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimeEventEnd {
    /// A handler asked to stop.
    Stop,
    /// State and derivatives unchanged: the kernels keep their step-size history.
    Kept,
    /// The kernels restarted: the next step size is initialised anew.
    Restarted,
}

/// An accepted step not yet committed ([`Run::take_step`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Step {
    /// Its end.
    pub(crate) t_end: f64,
    /// Where it had to end at the latest (a time event or the stop time).
    target: f64,
    /// It ends exactly on `target`.
    lands: bool,
    /// `target` is a time event.
    is_time_event: bool,
    /// `lands && is_time_event`.
    lands_on_time_event: bool,
    /// The instant of the earliest state event located inside it.
    pub(crate) event: Option<f64>,
}

impl Step {
    /// Where the step's stretch of constant modes ends: its state event or its end.
    pub(crate) fn segment_end(&self) -> f64 {
        self.event.unwrap_or(self.t_end)
    }
}

/// Integrate `sys` from `settings.start_time` to `settings.stop_time`.
///
/// `x` holds the initial state on entry and the final state (at `end_time`) on return, also
/// on failure (then the last good state). The trajectory goes to [`HybridSystem::output`].
// A `Failure` is built once, at the end of a failed run; boxing it would buy nothing.
#[allow(clippy::result_large_err)]
pub fn integrate<S: HybridSystem>(
    sys: &mut S,
    x: &mut [f64],
    settings: &Settings,
) -> Result<Outcome, Failure> {
    let mut run = Run::prepare(sys, x.len(), settings, Instant::now(), false)?;
    let result = run.execute(sys, x);
    // A failed run ends with its last good state as an output point (a timeout with a
    // coarse output grid would otherwise keep only the points before it).
    if let Err((_, t)) = &result {
        if *t > run.last_out && crate::simd::all_finite(x) {
            run.stats.output_points += 1;
            sys.output(*t, x, OutputKind::Final);
        }
    }
    run.engine.fill_stats(&mut run.stats);
    let switches = run.engine.take_switches();
    match result {
        Ok((status, end_time)) => Ok(Outcome {
            status,
            end_time,
            stats: run.stats,
            switches,
        }),
        Err((error, end_time)) => Err(Failure {
            error,
            end_time,
            stats: run.stats,
            switches,
        }),
    }
}

fn validate(s: &Settings, n: usize, len: usize, open_end: bool) -> Result<(), String> {
    let pos = |v: f64| v > 0.0 && v.is_finite();
    let open = open_end && s.stop_time == f64::INFINITY;
    if !s.start_time.is_finite() || !(s.stop_time.is_finite() || open) {
        return Err(format!(
            "start_time ({}) and stop_time ({}) must be finite",
            s.start_time, s.stop_time
        ));
    }
    if s.stop_time <= s.start_time {
        return Err(format!(
            "stop_time ({}) must be greater than start_time ({})",
            s.stop_time, s.start_time
        ));
    }
    if !pos(s.rtol) || !pos(s.atol) {
        return Err(format!(
            "rtol ({}) and atol ({}) must be positive",
            s.rtol, s.atol
        ));
    }
    if let Some(message) = s.method.state_limit_error(n) {
        return Err(message);
    }
    if let Method::Rk4 { step } = s.method {
        if !pos(step) {
            return Err(format!("rk4 step ({step}) must be positive"));
        }
    }
    if s.max_step.is_nan() || s.max_step <= 0.0 {
        return Err(format!("max_step ({}) must be positive", s.max_step));
    }
    if let Some(h) = s.initial_step {
        if !pos(h) {
            return Err(format!("initial_step ({h}) must be positive"));
        }
    }
    if !(s.min_step_rel >= 0.0 && s.min_step_rel.is_finite()) {
        return Err(format!("min_step_rel ({}) must be >= 0", s.min_step_rel));
    }
    if let Some(dt) = s.output_interval {
        if !pos(dt) {
            return Err(format!("output_interval ({dt}) must be positive"));
        }
    }
    if s.output_points == Some(0) {
        return Err("output_points must be at least 1".to_string());
    }
    if let Some(p) = s.estimated_output_points() {
        if p.is_nan() || p > s.max_output_points as f64 {
            return Err(format!(
                "the output grid (interval {} s over {} s) would produce {p:e} points, more than max_output_points = {}; choose a coarser output_interval or raise max_output_points",
                s.output_grid().unwrap_or(f64::NAN),
                s.stop_time - s.start_time,
                s.max_output_points
            ));
        }
    }
    if s.max_event_iterations == 0 {
        return Err("max_event_iterations must be at least 1".to_string());
    }
    if !(s.chatter_window >= 0.0 && s.chatter_window.is_finite()) {
        return Err(format!(
            "chatter_window ({}) must be >= 0",
            s.chatter_window
        ));
    }
    if s.chatter_max_events == 0 {
        return Err("chatter_max_events must be at least 1".to_string());
    }
    if s.guard_samples > Settings::MAX_GUARD_SAMPLES {
        return Err(format!(
            "guard_samples ({}) must be at most {}",
            s.guard_samples,
            Settings::MAX_GUARD_SAMPLES
        ));
    }
    if let Some(limit) = s.timeout {
        if limit.is_nan() || limit <= 0.0 {
            return Err(format!("timeout ({limit}) must be positive"));
        }
    }
    if len != n {
        return Err(format!(
            "the state vector has {len} entries but the system has {n} states"
        ));
    }
    Ok(())
}

/// Tolerance scale `max(1, |t|)`.
fn scale(t: f64) -> f64 {
    t.abs().max(1.0)
}

fn first_non_finite(x: &[f64]) -> Option<usize> {
    if crate::simd::all_finite(x) {
        return None;
    }
    x.iter().position(|v| !v.is_finite())
}

/// All state of one run, allocated once: the kernels, the guard bookkeeping and the loop's
/// position (`t`, the proposed step), so the loop can stop and go on between calls (see
/// `stepping.rs`).
#[derive(Clone)]
pub(crate) struct Run {
    pub(crate) set: Settings,
    m: usize,
    pub(crate) engine: Engine,
    /// When `integrate` was called (for `Settings::timeout`).
    pub(crate) clock: Instant,
    /// The time reached: the end of the last committed step or event instant.
    pub(crate) t: f64,
    /// Step size for the next attempt; `None` = (re)initialise.
    h_next: Option<f64>,
    /// No output at all (`HybridSystem::output` is never called).
    quiet: bool,
    /// Guard values at the current step start / event instant.
    g: Vec<f64>,
    /// Guard values at the end of the step being checked.
    g_end: Vec<f64>,
    bracket: Bracket,
    /// Per guard: non-negative at the step start, so a negative value later is a crossing.
    armed: Vec<bool>,
    /// Guard index list handed to the event handler.
    neg: Vec<usize>,
    /// Interpolated-state scratch.
    xs: Vec<f64>,
    /// The state before a time event's handler (to tell whether it changed it).
    x_left: Vec<f64>,
    /// Recent state events: (time, guard that triggered it).
    chatter: VecDeque<(f64, usize)>,
    pub(crate) stats: Stats,
    /// Index `k` of the next output grid point `start + k*dt`.
    next_grid: u64,
    /// Time of the last output point (the last good state is emitted after a failure past
    /// it).
    last_out: f64,
    /// The output grid interval (`Settings::output_grid`), `None`: output at the steps.
    grid: Option<f64>,
    /// Time events handled so far.
    time_events: u64,
    /// The last accepted step that ended where the controller put it (not cut short to
    /// land on a time event or the stop time), since the start or the last state event.
    h_free: Option<f64>,
}

impl Run {
    pub(crate) fn new(
        set: &Settings,
        n: usize,
        m: usize,
        pattern: Option<crate::SparsityPattern>,
        clock: Instant,
    ) -> Self {
        let cap = set
            .chatter_max_events
            .saturating_add(1)
            .min(CHATTER_PREALLOC);
        Run {
            set: set.clone(),
            m,
            engine: Engine::new(set, n, pattern),
            t: set.start_time,
            h_next: None,
            quiet: false,
            grid: set.output_grid(),
            time_events: 0,
            h_free: None,
            clock,
            g: vec![0.0; m],
            g_end: vec![0.0; m],
            bracket: Bracket::new(m),
            armed: vec![true; m],
            neg: Vec::with_capacity(m),
            xs: vec![0.0; n],
            x_left: vec![0.0; n],
            chatter: VecDeque::with_capacity(cap),
            stats: Stats::default(),
            next_grid: 1,
            last_out: f64::NEG_INFINITY,
        }
    }

    /// A run of `sys` with `settings` for a state of `len` entries, the settings checked
    /// (`open_end`: `stop_time` may be `+∞`, see `stepping.rs`).
    // A `Failure` is built once, when a run cannot start; boxing it would buy nothing.
    #[allow(clippy::result_large_err)]
    pub(crate) fn prepare<S: HybridSystem>(
        sys: &mut S,
        len: usize,
        settings: &Settings,
        clock: Instant,
        open_end: bool,
    ) -> Result<Run, Failure> {
        let n = sys.n_states();
        let invalid = |message: String| Failure {
            error: SolverError::InvalidSettings { message },
            end_time: settings.start_time,
            stats: Stats::default(),
            switches: Vec::new(),
        };
        if let Err(message) = validate(settings, n, len, open_end) {
            return Err(invalid(message));
        }
        let implicit = matches!(settings.method, Method::Radau5 | Method::Auto);
        let pattern = if implicit {
            sys.jacobian_pattern()
        } else {
            None
        };
        if let Some(p) = &pattern {
            if p.n() != n {
                return Err(invalid(format!(
                    "the system's Jacobian pattern is {0}x{0} but it has {n} states",
                    p.n()
                )));
            }
        }
        let mut run = Run::new(settings, n, sys.n_guards(), pattern, clock);
        if let Some(idx) = sys.output_states() {
            if idx.iter().all(|&i| i < n) {
                run.engine.set_output_states(idx);
            }
        }
        Ok(run)
    }

    /// Hand an output point to the system (and count it).
    fn emit<S: HybridSystem>(&mut self, sys: &mut S, t: f64, x: &[f64], kind: OutputKind) {
        if self.quiet {
            return;
        }
        self.stats.output_points += 1;
        sys.output(t, x, kind);
        self.last_out = t;
    }

    /// No output from here on: `HybridSystem::output` is never called (also no output
    /// grid).
    pub(crate) fn set_quiet(&mut self) {
        self.quiet = true;
        self.grid = None;
    }

    /// The system's own health check after outputs (a non-finite signal, ...).
    fn check_system<S: HybridSystem>(&self, sys: &mut S, t: f64) -> Result<(), Fail> {
        sys.check().map_err(|e| {
            (
                SolverError::System {
                    t,
                    message: e.message,
                },
                t,
            )
        })
    }

    /// `Err(Timeout)` once the wall-clock limit is exceeded (`t`: the last time reached).
    fn check_clock(&self, t: f64) -> Result<(), Fail> {
        match self.set.timeout {
            Some(limit) if self.clock.elapsed().as_secs_f64() > limit => {
                Err((SolverError::Timeout { t, seconds: limit }, t))
            }
            _ => Ok(()),
        }
    }

    /// Fill `neg` with the guards negative in `g`.
    fn collect_negatives(&mut self) {
        self.neg.clear();
        for (i, &gi) in self.g.iter().enumerate() {
            if gi < 0.0 {
                self.neg.push(i);
            }
        }
    }

    /// Call the handler with `kind` and the guards in `neg`, then iterate while guards are
    /// negative. `calls` counts handler calls at this instant. On return `g` holds the
    /// guards at `(t, x)` (unless stopped).
    fn settle<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        x: &mut [f64],
        mut kind: EventKind,
        calls: &mut usize,
    ) -> Result<EventAction, Fail> {
        loop {
            let action = sys
                .handle_event(
                    t,
                    x,
                    EventCause {
                        kind,
                        guards: &self.neg,
                    },
                )
                .map_err(|e| {
                    (
                        SolverError::System {
                            t,
                            message: e.message,
                        },
                        t,
                    )
                })?;
            *calls += 1;
            if let Some(index) = first_non_finite(x) {
                return Err((SolverError::NonFinite { t, index }, t));
            }
            if action == EventAction::Stop {
                return Ok(EventAction::Stop);
            }
            if self.m > 0 {
                sys.guards(t, x, &mut self.g);
                self.stats.guard_evals += 1;
            }
            self.collect_negatives();
            if self.neg.is_empty() {
                return Ok(EventAction::Continue);
            }
            if *calls >= self.set.max_event_iterations {
                let guards = self.neg.iter().map(|&i| sys.guard_name(i)).collect();
                return Err((
                    SolverError::EventIteration {
                        t,
                        iterations: *calls,
                        guards,
                    },
                    t,
                ));
            }
            kind = EventKind::Iteration;
        }
    }

    /// Restart the integration at `(t, x)`: new `f0`, re-armed guards (from `g`), fresh
    /// controller history.
    fn restart<S: HybridSystem>(&mut self, sys: &mut S, t: f64, x: &[f64]) {
        self.engine.start(sys, t, x);
        self.h_free = None;
        self.rearm();
    }

    /// The first step after a time event that restarted the kernels, from the step
    /// `proposed` at the event (see the module docs); `None`: initialise it.
    fn step_after_time_event(&self, proposed: Option<f64>) -> Option<f64> {
        let h = proposed?.min(self.h_free?) * TIME_EVENT_STEP_FACTOR;
        (h > 0.0 && h.is_finite()).then_some(h)
    }

    /// Arm the guards that are non-negative at the current point (from `g`).
    fn rearm(&mut self) {
        for (a, &gi) in self.armed.iter_mut().zip(&self.g) {
            *a = gi >= 0.0;
        }
    }

    /// Record a state event at `t` triggered by `guard`; fail if it makes the recent history
    /// chatter.
    fn chatter_check<S: HybridSystem>(
        &mut self,
        sys: &S,
        t: f64,
        guard: usize,
    ) -> Result<(), Fail> {
        let limit = self.set.chatter_max_events;
        if self.chatter.len() > limit {
            self.chatter.pop_front();
        }
        self.chatter.push_back((t, guard));
        if self.chatter.len() > limit {
            if let Some(&(t_old, _)) = self.chatter.front() {
                if t - t_old <= self.set.chatter_window {
                    let mut counts = vec![0usize; self.m];
                    for &(_, gi) in &self.chatter {
                        counts[gi] += 1;
                    }
                    let mut most = 0;
                    for (i, &c) in counts.iter().enumerate() {
                        if c > counts[most] {
                            most = i;
                        }
                    }
                    return Err((
                        SolverError::Chattering {
                            t,
                            guard: sys.guard_name(most),
                            count: self.chatter.len(),
                            window: self.set.chatter_window,
                        },
                        t,
                    ));
                }
            }
        }
        Ok(())
    }

    /// Emit the output grid points in `(step start, upto]` of the last accepted step
    /// (`y0` = state at its start), except the one at `stop_time`. When `upto` is an event
    /// instant, a grid point falling on it is skipped: the instant's EventLeft/EventRight
    /// pair is its output (so every instant appears at most twice).
    fn emit_grid<S: HybridSystem>(&mut self, sys: &mut S, y0: &[f64], upto: f64, event: bool) {
        let Some(dt) = self.grid else {
            return;
        };
        let stop = self.set.stop_time;
        let stop_cut = stop - SNAP_REL * scale(stop);
        loop {
            let tg = self.set.start_time + self.next_grid as f64 * dt;
            if tg > upto || tg >= stop_cut {
                return;
            }
            if event && tg >= upto - SNAP_REL * scale(upto) {
                self.next_grid += 1;
                return;
            }
            self.engine.ensure_dense_out(sys, y0);
            self.engine.dense_out(tg, &mut self.xs);
            self.stats.output_points += 1;
            sys.output(tg, &self.xs, OutputKind::Interpolated);
            self.last_out = tg;
            self.next_grid += 1;
        }
    }

    /// Output grid point `k` if it lies inside the step `(t0, t1)`, short of the step end
    /// and of the stop time by more than the snapping distance (those [`Run::emit_grid`]
    /// handles, with the step end).
    fn interior_grid_point(&self, k: u64, t0: f64, t1: f64) -> Option<f64> {
        let dt = self.grid?;
        let tg = self.set.start_time + k as f64 * dt;
        let stop = self.set.stop_time;
        let inside =
            tg > t0 && tg < t1 - SNAP_REL * scale(t1) && tg < stop - SNAP_REL * scale(stop);
        inside.then_some(tg)
    }

    /// The main loop. Returns the status and end time, or the error and last good time.
    fn execute<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        x: &mut [f64],
    ) -> Result<(Status, f64), Fail> {
        if self.begin(sys, x)? == EventAction::Stop {
            return Ok((Status::Stopped, self.t));
        }
        while self.t < self.set.stop_time {
            let step = self.take_step(sys, x)?;
            if let Some(status) = self.commit(sys, x, step)? {
                return Ok((status, self.t));
            }
        }
        self.finish(sys, x)?;
        Ok((Status::Completed, self.t))
    }

    /// The start at `set.start_time` with the initial state `x`: the initial event call
    /// and iteration, the initial point, the kernels' start. Returns the handler's last
    /// action (`Stop`: the run ends here).
    pub(crate) fn begin<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        x: &mut [f64],
    ) -> Result<EventAction, Fail> {
        let t = self.set.start_time;
        self.t = t;
        self.h_next = None;
        if let Some(index) = first_non_finite(x) {
            return Err((SolverError::NonFinite { t, index }, t));
        }
        self.initial(sys, t, x)
    }

    /// The end of the run at `t = stop_time`: the final point.
    pub(crate) fn finish<S: HybridSystem>(&mut self, sys: &mut S, x: &[f64]) -> Result<(), Fail> {
        let t = self.t;
        self.emit(sys, t, x, OutputKind::Final);
        self.check_system(sys, t)
    }

    /// The next accepted step from `(self.t, x)` (rejected attempts retried with a smaller
    /// size), its guards sampled and the earliest crossing located; nothing is committed:
    /// `x`, `t` and the system's modes are as before, the step's dense output is the
    /// engine's.
    pub(crate) fn take_step<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        x: &[f64],
    ) -> Result<Step, Fail> {
        let t = self.t;
        loop {
            let (target, is_time_event) = self.next_target(sys, t)?;
            let (t_end, lands) = self.step_end(sys, t, x, self.h_next, target)?;
            match self.engine.attempt(sys, t, t_end, x) {
                Verdict::Reject { h_next: h_new } => {
                    self.stats.rejected_steps += 1;
                    self.h_next = Some(h_new);
                    continue;
                }
                Verdict::Accept { h_next: h_new } => self.h_next = Some(h_new),
            }
            if !self.engine.y1_checked_finite() {
                if let Some(index) = first_non_finite(self.engine.y1()) {
                    return Err((SolverError::NonFinite { t: t_end, index }, t));
                }
            }
            self.stats.steps += 1;
            if !lands {
                self.h_free = Some(t_end - t);
            }
            self.engine.accepted(sys);
            if self.engine.stiff() {
                self.stiff_verdict(t, t_end, x)?;
            }
            let event = if self.m > 0 {
                self.detect(sys, x, t, t_end)
            } else {
                None
            };
            return Ok(Step {
                t_end,
                target,
                lands_on_time_event: lands && is_time_event,
                lands,
                is_time_event,
                event,
            });
        }
    }

    /// Commit the step `s` that [`Run::take_step`] took from `(self.t, x)`: up to its
    /// state event (handled, then a restart) or to its end (and the time event there).
    /// `Some(Stopped)` when a handler stopped the run.
    pub(crate) fn commit<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        x: &mut [f64],
        s: Step,
    ) -> Result<Option<Status>, Fail> {
        if let Some(tr) = s.event {
            self.t = tr;
            let with_time_event = s.is_time_event && tr == s.target;
            if self.state_event(sys, tr, x, with_time_event)? == EventAction::Stop {
                return Ok(Some(Status::Stopped));
            }
            self.restart(sys, tr, x);
            self.h_next = None;
            return Ok(None);
        }

        // ---- no state event: accept the step as a whole ----
        let t_end = s.t_end;
        self.emit_grid(sys, x, t_end, s.lands_on_time_event);
        if self.grid.is_none() && !s.lands && !self.quiet {
            self.stats.output_points += 1;
            // Without guards nothing is sampled in the step: an explicit kernel's last call
            // was `derivatives_step_end` at this very point.
            if self.m == 0 && self.engine.step_end_evaluated() {
                sys.output_at_last_call(t_end, self.engine.y1(), OutputKind::Step);
            } else {
                sys.output(t_end, self.engine.y1(), OutputKind::Step);
            }
            self.last_out = t_end;
        }
        x.copy_from_slice(self.engine.y1());
        self.t = t_end;
        self.engine.advance(sys, t_end);
        self.check_system(sys, t_end)?;
        if self.m > 0 {
            std::mem::swap(&mut self.g, &mut self.bracket.lo);
            for (a, &gi) in self.armed.iter_mut().zip(&self.g) {
                *a = gi >= 0.0;
            }
        }
        if s.lands_on_time_event {
            match self.time_event(sys, t_end, x)? {
                TimeEventEnd::Stop => return Ok(Some(Status::Stopped)),
                TimeEventEnd::Restarted => self.h_next = self.step_after_time_event(self.h_next),
                TimeEventEnd::Kept => {}
            }
        }
        Ok(None)
    }

    /// The system changed at `self.t` from outside the solver (an input set between the
    /// steps of a co-simulation): an event call of kind [`EventKind::External`] and its
    /// iteration there, then a restart. Returns the handlers' last action.
    pub(crate) fn external_event<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        x: &mut [f64],
    ) -> Result<EventAction, Fail> {
        let t = self.t;
        if self.m > 0 {
            sys.guards(t, x, &mut self.g);
            self.stats.guard_evals += 1;
        }
        self.collect_negatives();
        self.emit(sys, t, x, OutputKind::EventLeft);
        self.stats.events += 1;
        let mut calls = 0;
        let action = self.settle(sys, t, x, EventKind::External, &mut calls)?;
        self.emit(sys, t, x, OutputKind::EventRight);
        self.check_system(sys, t)?;
        if action == EventAction::Continue {
            self.restart(sys, t, x);
            self.h_next = None;
        }
        Ok(action)
    }

    /// The initial event call and iteration at `t`, the initial point, and the kernels'
    /// start. Returns the handler's last action (`Stop`: the run ends here, started or not).
    fn initial<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        x: &mut [f64],
    ) -> Result<EventAction, Fail> {
        if self.m > 0 {
            sys.guards(t, x, &mut self.g);
            self.stats.guard_evals += 1;
        }
        self.collect_negatives();
        let mut calls = 0;
        let action = self.settle(sys, t, x, EventKind::Initial, &mut calls)?;
        self.emit(sys, t, x, OutputKind::Initial);
        self.check_system(sys, t)?;
        if action != EventAction::Stop {
            self.restart(sys, t, x);
        }
        Ok(action)
    }

    /// Where the step from `t` must end at the latest: the next time event (`true`) if it
    /// comes before the stop time, else the stop time (`false`).
    fn next_target<S: HybridSystem>(&self, sys: &mut S, t: f64) -> Result<(f64, bool), Fail> {
        let stop = self.set.stop_time;
        let t_ev = sys.next_time_event(t);
        if t_ev.is_nan() || t_ev <= t {
            return Err((
                SolverError::System {
                    t,
                    message: format!("next_time_event({t}) returned {t_ev}, which is not after t"),
                },
                t,
            ));
        }
        Ok(if t_ev < stop {
            (t_ev, true)
        } else {
            (stop, false)
        })
    }

    /// The end of the next attempted step from `(t, x)` (`h_next`: the proposed size,
    /// `None` to initialise it) and whether it lands on `target` (stretched to it when
    /// within [`SNAP_REL`]). Fails on a step-size underflow, too many steps or the
    /// wall-clock limit.
    fn step_end<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        x: &[f64],
        h_next: Option<f64>,
        target: f64,
    ) -> Result<(f64, bool), Fail> {
        let mut h = match (self.set.method, h_next) {
            (Method::Rk4 { step }, _) => step,
            (_, Some(h)) => h,
            (_, None) => match self.set.initial_step {
                Some(h0) => h0,
                None => {
                    let hmax = self.set.max_step.min(target - t);
                    self.engine.initial_step(sys, t, x, hmax)
                }
            },
        };
        let set = &self.set;
        h = h.min(set.max_step);
        let lands = t + h >= target - SNAP_REL * scale(target);
        let t_end = if lands { target } else { t + h };
        let h = t_end - t;
        if !lands && (h.is_nan() || h < set.min_step_rel * scale(t)) {
            return Err((
                SolverError::StepSizeUnderflow {
                    t,
                    h,
                    index: self.engine.worst(),
                },
                t,
            ));
        }
        if self.stats.steps + self.stats.rejected_steps >= set.max_steps {
            return Err((
                SolverError::MaxSteps {
                    t,
                    max_steps: set.max_steps,
                    index: self.engine.worst(),
                },
                t,
            ));
        }
        self.check_clock(t)?;
        Ok((t_end, lands))
    }

    /// Method Dopri5 found the model stiff on the step `[t, t1]` just accepted (`y0`: the
    /// state at `t`): fail with [`SolverError::Stiff`] if the rest of the run at this step
    /// size would take more than a tenth of `max_steps` or more than the steps left (a
    /// stiff stretch that the budget covers goes on, as does every non-stiff run).
    fn stiff_verdict(&mut self, t: f64, t1: f64, y0: &[f64]) -> Result<(), Fail> {
        let h = t1 - t;
        // An open-ended run (`stepping.rs`) has no rest to project: `max_steps` bounds it.
        let steps = if self.set.stop_time.is_finite() {
            (self.set.stop_time - t1) / h
        } else {
            0.0
        };
        let max = self.set.max_steps;
        let left = max.saturating_sub(self.stats.steps + self.stats.rejected_steps);
        if steps <= (max / 10).min(left) as f64 {
            return Ok(());
        }
        let index = self.engine.accepted_culprit(y0);
        Err((SolverError::Stiff { t, h, steps, index }, t))
    }

    /// A state event located at `tr` by [`Run::detect`] on the step just accepted: the
    /// grid points up to it, the state there (from the dense output, into `x`), the
    /// left-hand point, the event iteration (and the time event due at the same instant
    /// when `with_time_event`), the right-hand point. Returns the handlers' last action.
    fn state_event<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        tr: f64,
        x: &mut [f64],
        with_time_event: bool,
    ) -> Result<EventAction, Fail> {
        // Grid points up to tr first (they use `xs` as scratch).
        self.emit_grid(sys, x, tr, true);
        self.engine.dense(tr, &mut self.xs);
        self.neg.clear();
        for (i, (&gi, &a)) in self.bracket.hi.iter().zip(&self.armed).enumerate() {
            if a && gi < 0.0 {
                self.neg.push(i);
            }
        }
        let primary = self.neg.first().copied().unwrap_or(0);
        x.copy_from_slice(&self.xs);
        let t = tr;
        self.emit(sys, t, x, OutputKind::EventLeft);
        self.stats.events += 1;
        self.chatter_check(sys, t, primary)?;
        self.g.copy_from_slice(&self.bracket.hi);
        let mut calls = 0;
        let mut action = self.settle(sys, t, x, EventKind::State, &mut calls)?;
        if action == EventAction::Continue && with_time_event {
            self.collect_negatives();
            action = self.settle(sys, t, x, EventKind::Time, &mut calls)?;
        }
        self.emit(sys, t, x, OutputKind::EventRight);
        self.check_system(sys, t)?;
        Ok(action)
    }

    /// The time event at `t` (bit-exactly the time `next_time_event` returned), at the end
    /// of a step that landed on it: the left-hand point, the event iteration, the
    /// right-hand point, and the kernels kept or restarted.
    fn time_event<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        x: &mut [f64],
    ) -> Result<TimeEventEnd, Fail> {
        self.time_events += 1;
        if self.time_events > self.set.max_time_events {
            return Err((
                SolverError::TooManyTimeEvents {
                    t,
                    limit: self.set.max_time_events,
                },
                t,
            ));
        }
        self.emit(sys, t, x, OutputKind::EventLeft);
        self.stats.events += 1;
        self.collect_negatives();
        self.x_left.copy_from_slice(x);
        let mut calls = 0;
        let action = self.settle(sys, t, x, EventKind::Time, &mut calls)?;
        self.emit(sys, t, x, OutputKind::EventRight);
        self.check_system(sys, t)?;
        if action == EventAction::Stop {
            return Ok(TimeEventEnd::Stop);
        }
        // A time event that left the state and the derivatives as they were (a sample hit
        // whose held value did not change) leaves the integration as it was: the kernels
        // keep their step-size history and the step proposed before it. Anything else
        // restarts.
        let kept = if crate::simd::same_bits(x, &self.x_left) {
            self.engine.resume(sys, t, x)
        } else {
            self.engine.start(sys, t, x);
            false
        };
        self.rearm();
        Ok(if kept {
            TimeEventEnd::Kept
        } else {
            TimeEventEnd::Restarted
        })
    }

    /// The guards at the end `t1` of the accepted step, into `g_end`.
    fn guards_at_end<S: HybridSystem>(&mut self, sys: &mut S, t1: f64) {
        self.engine.dense(t1, &mut self.xs);
        sys.guards(t1, &self.xs, &mut self.g_end);
        self.stats.guard_evals += 1;
    }

    /// Sample the guards on the accepted step `[t0, t1]` (`y0` = state at `t0`) and locate
    /// the earliest crossing. Returns the event instant; then `bracket.hi` holds the guards
    /// there. Without a crossing, `bracket.lo` holds the guards at `t1`.
    ///
    /// The samples are the output grid points inside the step and the `guard_samples`
    /// equally spaced interior points, less those within half a spacing of a grid point:
    /// a grid point is evaluated for its output anyway, so it serves as a guard sample, and
    /// its output is emitted as soon as its guards show no crossing (the system serves the
    /// output from the guards' evaluation).
    fn detect<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        y0: &[f64],
        t0: f64,
        t1: f64,
    ) -> Option<f64> {
        self.engine.ensure_dense(sys, y0);
        let h = t1 - t0;
        let n = self.set.guard_samples;
        let half = 0.5 * h / (n + 1) as f64;
        // An explicit kernel evaluated (t1, y1) for the step's last stage and the system may
        // serve the guards from that evaluation: the step end first. An implicit kernel
        // evaluates f(t1, y1) after the guards, for its next step: the step end last (and
        // only without an interior crossing), so that evaluation may be served from the
        // guards'. The order changes no value.
        let end_first = self.engine.step_end_evaluated();
        if end_first {
            self.guards_at_end(sys, t1);
        }
        self.bracket.lo.copy_from_slice(&self.g);
        let mut tl = t0;
        let mut found = None;
        // Next equally spaced sample, next grid index, last grid point sampled.
        let mut j = 1;
        let mut k = self.next_grid;
        let mut last_grid = f64::NEG_INFINITY;
        loop {
            let tg = self.interior_grid_point(k, t0, t1);
            let mut tu = None;
            while j <= n {
                let u = t0 + (j as f64 / (n + 1) as f64) * h;
                let near = (u - last_grid).abs() < half || tg.is_some_and(|g| (g - u).abs() < half);
                if !near {
                    tu = Some(u);
                    break;
                }
                j += 1;
            }
            let (tj, grid) = match (tg, tu) {
                (Some(g), Some(u)) if u < g => (u, false),
                (Some(g), _) => (g, true),
                (None, Some(u)) => (u, false),
                (None, None) => break,
            };
            self.engine.dense(tj, &mut self.xs);
            sys.guards(tj, &self.xs, &mut self.bracket.hi);
            self.stats.guard_evals += 1;
            if crossed(&self.bracket.hi, &self.armed) {
                found = Some((tl, tj));
                break;
            }
            if grid {
                self.stats.output_points += 1;
                sys.output_at_last_call(tj, &self.xs, OutputKind::Interpolated);
                self.last_out = tj;
                k += 1;
                self.next_grid = k;
                last_grid = tj;
            } else {
                j += 1;
            }
            std::mem::swap(&mut self.bracket.lo, &mut self.bracket.hi);
            tl = tj;
        }
        if found.is_none() {
            if !end_first {
                self.guards_at_end(sys, t1);
            }
            self.bracket.hi.copy_from_slice(&self.g_end);
            if crossed(&self.bracket.hi, &self.armed) {
                found = Some((tl, t1));
            } else {
                std::mem::swap(&mut self.bracket.lo, &mut self.bracket.hi);
            }
        }
        let (a, b) = found?;
        let tol = LOCATE_REL * scale(b);
        let engine = &self.engine;
        let xs = &mut self.xs;
        let evals = &mut self.stats.guard_evals;
        let tr = locate(a, b, tol, &mut self.bracket, &self.armed, |tm, g| {
            engine.dense(tm, xs);
            sys.guards(tm, xs, g);
            *evals += 1;
        });
        Some(tr)
    }
}
