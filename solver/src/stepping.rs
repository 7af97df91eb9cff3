//! A resumable integration: the run of [`crate::integrate`] advanced to points its caller
//! chooses (the communication points of a co-simulation) without being cut there.
//!
//! ## How it advances
//! The step loop is that of `integrator.rs` (the same `Run`: kernels, step-size and
//! controller history, guard bookkeeping, pending time events, statistics), kept between
//! calls. [`Integration::advance_to`]`(t)` takes steps as the one-shot run takes them (a
//! step is never shortened to end at `t`) until one reaches `t`; the state at `t` is then
//! the dense output of that step, and the step stays *pending*: it is checked (its guards
//! sampled, its earliest state event located) but not committed, so the system's modes
//! are still those of the stretch that contains `t`. The next call goes on with it: a
//! later `t` inside the same stretch is served by the same dense output again (no new
//! step); past it the step is committed (its state event or the time event at its end
//! handled) exactly as the one-shot run commits it. A run advanced to any sequence of
//! points therefore takes the same steps and locates the same events as the one-shot run
//! with the same settings.
//!
//! A state event located exactly at `t` (within the snapping distance `1e-12·max(1, |t|)`)
//! or a time event due at `t` is handled before the call returns: the state at `t` is the
//! one right after it.
//!
//! ## Changes from outside
//! When the caller changes the system between two calls (a co-simulation input set to a new
//! value), it says so with [`Integration::interrupt`]: the pending step is dropped, the run
//! goes on from the interpolated state at the current time, with an event call of kind
//! [`crate::EventKind::External`] there and a restart of the kernels (as after an event). Nothing
//! past the current time has been committed, so nothing needs to be undone.
//!
//! ## Open end
//! `Settings::stop_time` may be `+∞` (a co-simulation whose end is not known): steps are
//! then bounded by `max_step` and the time events only, and Dopri5's stiffness verdict
//! (which projects the rest of the run) is left to `max_steps`. `HybridSystem::output` is
//! never called: the caller reads [`Integration::state`] at [`Integration::time`].
//! `Settings::timeout` counts the time spent inside the calls only.

use std::time::{Duration, Instant};

use crate::integrator::{Run, Step};
use crate::simd::AlignedBuf;
use crate::{EventAction, Failure, HybridSystem, Settings, SolverError, Stats, Status};

/// Snapping distance between a requested time and a step end or event instant.
const SNAP_REL: f64 = 1e-12;

/// A run advanced in calls (see the module docs). A clone is the run at the same point,
/// to go on from there again (a saved FMU state).
#[derive(Clone)]
pub struct Integration {
    run: Run,
    /// The committed state, at `run.t`.
    x: AlignedBuf,
    /// The state at `time`.
    at: Vec<f64>,
    /// The time the last call reached.
    time: f64,
    /// The accepted, checked, uncommitted step whose stretch contains `time`.
    pending: Option<Step>,
    /// How the run ended (`Completed` at the stop time, or `Stopped` by a handler).
    ended: Option<Status>,
    /// The error the run failed with (it cannot go on).
    failed: Option<SolverError>,
    /// Wall time spent inside the calls (for `Settings::timeout`).
    spent: Duration,
}

impl std::fmt::Debug for Integration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Integration")
            .field("time", &self.time)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl Integration {
    /// Start a run of `sys` from `x0` at `settings.start_time`: the settings checked, the
    /// initial event call and iteration made. `settings.stop_time` may be `+∞`.
    // A `Failure` is built once, when a run fails; boxing it would buy nothing.
    #[allow(clippy::result_large_err)]
    pub fn start<S: HybridSystem>(
        sys: &mut S,
        x0: &[f64],
        settings: &Settings,
    ) -> Result<Integration, Failure> {
        let clock = Instant::now();
        let mut run = Run::prepare(sys, x0.len(), settings, clock, true)?;
        run.set_quiet();
        let mut x = AlignedBuf::from_slice(x0);
        let mut ended = None;
        let mut failed = None;
        match run.begin(sys, &mut x) {
            Ok(EventAction::Stop) => ended = Some(Status::Stopped),
            Ok(EventAction::Continue) => {}
            Err((e, _)) => failed = Some(e),
        }
        let mut me = Integration {
            at: x.to_vec(),
            x,
            time: settings.start_time,
            pending: None,
            ended,
            failed: None,
            spent: clock.elapsed(),
            run,
        };
        match failed {
            Some(e) => Err(me.fail(e, settings.start_time)),
            None => Ok(me),
        }
    }

    /// The time the run has reached (the last time asked for, or where a handler stopped
    /// it).
    pub fn time(&self) -> f64 {
        self.time
    }

    /// The state at [`Integration::time`].
    pub fn state(&self) -> &[f64] {
        &self.at
    }

    /// How the run ended, if it did: `Completed` at the stop time, `Stopped` by a handler.
    pub fn ended(&self) -> Option<Status> {
        self.ended
    }

    /// The statistics so far (steps taken, including the one pending).
    pub fn stats(&self) -> Stats {
        let mut s = self.run.stats;
        self.run.engine.fill_stats(&mut s);
        s
    }

    /// Advance to `t` (not before [`Integration::time`], not after the stop time). Returns
    /// `Completed` when `t` is reached (the run goes on unless `t` is the stop time) and
    /// `Stopped` when a handler stopped it at [`Integration::time`] `<= t`. A run that has
    /// failed or ended earlier refuses to go on.
    #[allow(clippy::result_large_err)]
    pub fn advance_to<S: HybridSystem>(&mut self, sys: &mut S, t: f64) -> Result<Status, Failure> {
        if let Some(e) = &self.failed {
            return Err(self.failure(e.clone(), self.time));
        }
        let stop = self.run.set.stop_time;
        let refuse = if t.is_nan() || t < self.time {
            Some(format!(
                "cannot advance to t = {t} s: the run is at t = {} s",
                self.time
            ))
        } else if t > stop + SNAP_REL * stop.abs().max(1.0) {
            Some(format!(
                "cannot advance to t = {t} s, after the stop time {stop} s"
            ))
        } else if let Some(status) = self.ended.filter(|_| t > self.time) {
            Some(format!(
                "cannot advance to t = {t} s: the run ended ({status:?}) at t = {} s",
                self.time
            ))
        } else {
            None
        };
        if let Some(message) = refuse {
            let e = SolverError::InvalidSettings { message };
            return Err(self.failure(e, self.time));
        }
        if let Some(status) = self.ended {
            return Ok(status);
        }
        if t == self.time {
            return Ok(Status::Completed);
        }
        // The wall clock only for a timeout (a call at every 1 ms communication point would
        // otherwise read it twice for nothing).
        let entered = self.run.set.timeout.map(|_| Instant::now());
        if let Some(now) = entered {
            self.run.clock = now.checked_sub(self.spent).unwrap_or(now);
        }
        let result = self.go(sys, t);
        if let Some(now) = entered {
            self.spent += now.elapsed();
        }
        result.map_err(|(e, t_fail)| self.fail(e, t_fail))
    }

    /// The loop of [`Integration::advance_to`].
    fn go<S: HybridSystem>(&mut self, sys: &mut S, t: f64) -> Result<Status, (SolverError, f64)> {
        let near = |a: f64| a - SNAP_REL * a.abs().max(1.0);
        loop {
            if let Some(step) = self.pending {
                if t < near(step.segment_end()) {
                    self.run.engine.ensure_dense(sys, &self.x);
                    self.run.engine.dense(t, &mut self.at);
                    self.time = t;
                    return Ok(Status::Completed);
                }
                self.pending = None;
                if let Some(status) = self.run.commit(sys, &mut self.x, step)? {
                    return Ok(self.end(status, self.run.t));
                }
            }
            if self.run.t >= near(t) {
                if self.run.t >= self.run.set.stop_time {
                    self.run.finish(sys, &self.x)?;
                    return Ok(self.end(Status::Completed, t));
                }
                self.at.copy_from_slice(&self.x);
                self.time = t;
                return Ok(Status::Completed);
            }
            self.pending = Some(self.run.take_step(sys, &self.x)?);
        }
    }

    /// The system was changed from outside at [`Integration::time`] (an input set to a
    /// new value): the run restarts there from [`Integration::state`], after an event call
    /// of kind [`crate::EventKind::External`] and its iteration. Returns `Stopped` when a handler
    /// stopped the run there. Nothing happens after the run ended.
    #[allow(clippy::result_large_err)]
    pub fn interrupt<S: HybridSystem>(&mut self, sys: &mut S) -> Result<Status, Failure> {
        if let Some(e) = &self.failed {
            return Err(self.failure(e.clone(), self.time));
        }
        if let Some(status) = self.ended {
            return Ok(status);
        }
        if self.pending.take().is_some() {
            self.x.copy_from_slice(&self.at);
            self.run.t = self.time;
        }
        let action = self.run.external_event(sys, &mut self.x);
        let action = action.map_err(|(e, t)| self.fail(e, t))?;
        self.at.copy_from_slice(&self.x);
        Ok(match action {
            EventAction::Stop => self.end(Status::Stopped, self.time),
            EventAction::Continue => Status::Completed,
        })
    }

    /// The run ended with `status` at `t` (the committed state).
    fn end(&mut self, status: Status, t: f64) -> Status {
        self.at.copy_from_slice(&self.x);
        self.time = t;
        self.ended = Some(status);
        status
    }

    /// The run failed with `e` at `t` (its last good state kept): it cannot go on.
    fn fail(&mut self, e: SolverError, t: f64) -> Failure {
        self.pending = None;
        self.failed = Some(e.clone());
        if crate::simd::all_finite(&self.x) {
            self.at.copy_from_slice(&self.x);
            self.time = t.max(self.time);
        }
        self.failure(e, t)
    }

    fn failure(&self, error: SolverError, end_time: f64) -> Failure {
        Failure {
            error,
            end_time,
            stats: self.stats(),
            switches: self.run.engine.switches().to_vec(),
        }
    }
}
