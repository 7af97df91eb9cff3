//! A run stepped to communication points from outside (a co-simulation master stepping an
//! FMU): one solver run that goes on across the points ([`drivelink_solver::Integration`]:
//! steps are not cut at a point, a point inside a step is served by its dense output,
//! events inside a communication step are located and handled as in a native run), the
//! logged variables at the point reached, and the inputs set between two points.
//!
//! An input set to a new value at a point ([`Model::inputs_changed`]) restarts the run
//! there before the next step, as a time event that changed the inputs does: an event call
//! of kind `External` settles the modes for the new inputs, and the kernels start anew
//! from the state at the point. Without such a change the integration goes on untouched,
//! taking the native run's steps.

use drivelink_solver::{Integration, Settings, Stats, Status};

use super::Model;
use crate::result::RunStatus;

impl Model {
    /// Start a run stepped from outside at `settings.start_time` (its `stop_time` may be
    /// `+∞` when the end is not known; the output settings are not used): the blocks
    /// reset, the initial event made. The logged variables there are then
    /// [`Model::stepped_outputs`].
    pub fn start_stepping(&mut self, settings: &Settings) -> Result<(), String> {
        if settings.stop_time.is_finite() {
            self.check_settings(settings).map_err(|e| e.to_string())?;
        }
        self.stepping = None;
        self.inputs_set = false;
        self.start_run(settings.start_time, settings.max_output_values);
        let x0 = self.x0.clone();
        self.refresh_constants(settings.start_time, &x0);
        let it = Integration::start(self, &x0, settings).map_err(|f| self.explain(&f.error))?;
        self.run.last_x.copy_from_slice(it.state());
        self.stepping = Some(Box::new(it));
        self.snap.stepping = Some(settings.clone());
        Ok(())
    }

    /// Advance the stepped run to `t` (after a restart where inputs changed since the last
    /// point). Returns `Completed` and `t`, or `Stopped` and the instant a block stopped
    /// the run; an error is the message of the failed run (which cannot go on).
    pub fn step_to(&mut self, t: f64) -> Result<(RunStatus, f64), String> {
        let mut it = self
            .stepping
            .take()
            .ok_or_else(|| "the stepped run has not been started".to_string())?;
        let mut result = Ok(Status::Completed);
        if self.inputs_set {
            self.inputs_set = false;
            result = it.interrupt(self);
        }
        if result == Ok(Status::Completed) {
            result = it.advance_to(self, t);
        }
        self.run.last_x.copy_from_slice(it.state());
        let time = it.time();
        self.stepping = Some(it);
        match result {
            Ok(Status::Completed) => Ok((RunStatus::Completed, time)),
            Ok(Status::Stopped) => Ok((RunStatus::Stopped, time)),
            Err(f) => Err(match self.run.failure.take() {
                Some(message) => format!("at t = {} s: {message}", f.end_time),
                None => {
                    let x = self.run.last_x.clone();
                    self.explain_at(&f.error, time, &x)
                }
            }),
        }
    }

    /// The time the stepped run has reached (`None` before [`Model::start_stepping`]).
    pub fn stepped_time(&self) -> Option<f64> {
        self.stepping.as_ref().map(|it| it.time())
    }

    /// The solver statistics of the stepped run so far (steps, events, evaluations).
    pub fn stepped_stats(&self) -> Option<Stats> {
        self.stepping.as_ref().map(|it| it.stats())
    }

    /// The logged variables at the point the stepped run reached, in the order of the
    /// result's columns, into `out` (see [`Model::sample`]).
    pub fn stepped_outputs(&mut self, out: &mut [f64]) -> Result<(), String> {
        let t = self
            .stepped_time()
            .ok_or_else(|| "the stepped run has not been started".to_string())?;
        let x = std::mem::take(&mut self.run.last_x);
        let r = self.sample(t, &x, out);
        self.run.last_x = x;
        r
    }
}
