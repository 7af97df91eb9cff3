//! A model driven from outside drivelink's solver (an FMI Model Exchange importer
//! integrates the states itself and calls the model through [`HybridSystem`]): the start
//! of such a run, the logged variables at any `(t, x)` without recording a row, and the
//! event log and state of the run so far.
//!
//! [`HybridSystem`]: drivelink_solver::HybridSystem

use crate::result::EventRecord;

use super::Model;

impl Model {
    /// Reset for a run at `t0` driven from outside the solver and return the initial state
    /// before the initial event (the caller makes that event with
    /// `HybridSystem::handle_event` of kind `Initial`, as the solver does first).
    pub fn begin_external(&mut self, t0: f64) -> Vec<f64> {
        self.start_run(t0, self.plan.settings.max_output_values);
        let x = self.x0.clone();
        self.refresh_constants(t0, &x);
        x
    }

    /// The logged variables at `(t, x)` under the current modes, in the order of the
    /// result's columns (the values a run records at that point), into `out` (as long as
    /// the columns). Nothing is added to the run's result. An error names the first
    /// non-finite signal, as a run that records it fails with.
    pub fn sample(&mut self, t: f64, x: &[f64], out: &mut [f64]) -> Result<(), String> {
        self.fill_row(t, x);
        let row = &self.run.row_buf;
        let n = row.len().min(out.len());
        out[..n].copy_from_slice(&row[..n]);
        match self.run.failure.take() {
            Some(message) => Err(message),
            None => Ok(()),
        }
    }

    /// The events logged since the start of the run or the last call (mode changes,
    /// impacts, stops), taken out of the run's result.
    pub fn take_events(&mut self) -> Vec<EventRecord> {
        std::mem::take(&mut self.run.result.events)
    }

    /// The state where the last run (or piece of a run) ended.
    pub fn last_state(&self) -> &[f64] {
        &self.run.last_x
    }

    /// The data block `name` of this model instance shares on its port `port`
    /// ([`crate::Block::shared`]): a road's surface, or the input handle of an `Inport`
    /// through which an FMU sets the input. `None` for an unknown block or a port that
    /// shares nothing.
    pub fn block_shared(
        &self,
        name: &str,
        port: usize,
    ) -> Option<std::sync::Arc<dyn std::any::Any + Send + Sync>> {
        let b = self.block_index(name)?;
        self.blocks[b.ix()].shared(port)
    }

    /// Inputs set from outside (through the handles of [`Model::block_shared`]) changed
    /// while the model is driven from outside the solver at `(t, x)`: the evaluations from
    /// now on see them (the kept evaluation is dropped and the blocks whose outputs change
    /// only at events are evaluated anew), and a stepped run ([`Model::step_to`]) restarts
    /// at `t` with an event call that settles the modes for them.
    pub fn inputs_changed(&mut self, t: f64, x: &[f64]) {
        self.inputs_set = true;
        self.cache.valid = false;
        self.refresh_constants(t, x);
    }
}
