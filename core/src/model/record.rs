//! Recording: the logged variables at every output point, and the check that what is
//! recorded is finite (a non-finite signal fails the run, naming the block and port).
//! An output point not served by a kept full evaluation evaluates only what the logged
//! variables depend on (`EvalFor::Output`, `demand.rs`).

use crate::block::{Cx, FrictionVar};
use crate::plan::VarRef;

use super::eval::{buffers, cx_of, view};
use super::linear::EvalFor;
use super::program::LogOp;
use super::Model;
use crate::block::Buffers;

impl Model {
    /// The value of a variable after `eval` at `(t, x)`.
    #[inline]
    pub(super) fn var_value(&self, r: VarRef, t: f64, x: &[f64]) -> f64 {
        let plan = &self.plan;
        let n = plan.nodes.len();
        match r {
            VarRef::Signal(s) => self.ev.sig[s.ix()],
            // An unconnected support (no node) is the ground.
            VarRef::NodeSpeed(k) if k.ix() >= n => 0.0,
            VarRef::NodePos(k) | VarRef::NodeAccel(k) if k.ix() >= n => 0.0,
            VarRef::NodeSpeed(k) => x[n + k.ix()],
            VarRef::NodePos(k) => x[k.ix()],
            VarRef::NodeAccel(k) => self.net.a[k.ix()],
            VarRef::Friction(j, fv) => self.joint_value(j.ix(), fv, &x[..n]),
            VarRef::Custom(b, i) => {
                cx_of!(cx = self, plan, b, t, x);
                self.blocks[b.ix()].var(&cx, i)
            }
        }
    }

    /// Variable `fv` of friction joint `j` after `eval` (`pos`: the node positions).
    #[inline(always)]
    fn joint_value(&self, j: usize, fv: FrictionVar, pos: &[f64]) -> f64 {
        match fv {
            FrictionVar::WRel => self.ev.joint_wrel[j],
            FrictionVar::PhiRel => self.net.friction_rows[j].dot(pos),
            FrictionVar::Tau => self.friction_tau(j),
            FrictionVar::Mode => self.net.modes[j].code(),
            FrictionVar::PowerLoss => -self.friction_tau(j) * self.ev.joint_wrel[j],
        }
    }

    /// Record the logged variables at `(t, x)`: from the kept evaluation of the same point
    /// (a step end, the guard sample of a grid point, an event instant), or else from an
    /// evaluation of what the logged variables depend on ([`EvalFor::Output`]: the same
    /// values, bit for bit, as a full evaluation gives them).
    pub(super) fn record(&mut self, t: f64, x: &[f64]) {
        self.fill_row(t, x);
        self.push_row(t);
    }

    /// [`Model::record`] at the point of the kept evaluation (the caller knows it is).
    pub(super) fn record_kept(&mut self, t: f64, x: &[f64]) {
        self.fill_kept_row(t, x);
        self.push_row(t);
    }

    /// Append the filled row at `t` to the results.
    fn push_row(&mut self, t: f64) {
        self.run.output_points += 1;
        self.run.result.push_row(t, &self.run.row_buf);
        if let Some(p) = self.progress.as_mut() {
            p(t);
        }
    }

    /// The logged variables at `(t, x)` into `run.row_buf` (and the check that the signals
    /// are finite, into `run.failure`), without recording them: what [`Model::record`]
    /// records.
    pub(super) fn fill_row(&mut self, t: f64, x: &[f64]) {
        if !self.kept_at(t, x) {
            self.eval_for(t, x, EvalFor::Output);
        }
        self.fill_kept_row(t, x);
    }

    /// [`Model::fill_row`] from the evaluation at `(t, x)` just made.
    #[inline(always)]
    fn fill_kept_row(&mut self, t: f64, x: &[f64]) {
        // Taken out while it is filled (the variables read the model) and put back below.
        let mut row = std::mem::take(&mut self.run.row_buf);
        let plan = &*self.plan;
        let log = &self.programs().log;
        // The blocks' shared buffers, built at the first block variable logged (most rows
        // log signals and states only).
        let mut buf = None;
        for &(col, s) in &log.signals {
            row[col as usize] = self.ev.sig[s as usize];
        }
        for &(col, i) in &log.states {
            row[col as usize] = x[i as usize];
        }
        for &(col, op) in &log.others {
            let k = col as usize;
            match op {
                LogOp::Joint(j, fv) => {
                    row[k] = self.joint_value(j as usize, fv, &x[..plan.nodes.len()]);
                }
                LogOp::Value(r) => row[k] = self.var_value(r, t, x),
                LogOp::Custom { b, ref rt, vars } => {
                    let which = &log.vars[vars.0 as usize..vars.1 as usize];
                    let buf = buf.get_or_insert_with(|| buffers!(self, x, plan.nodes.len()));
                    let cx = view(rt, t, x, buf);
                    self.blocks[b.ix()].vars(&cx, which, &mut row[k..k + which.len()]);
                }
            }
        }
        if self.run.failure.is_none() && !self.signals_finite() {
            self.run.failure = self.non_finite_signal();
        }
        self.run.row_buf = row;
    }

    /// Whether every signal is finite. Every signal is looked at: those written since the
    /// last look (all of them after a full evaluation or a refresh, else those
    /// evaluations for derivatives and at output points write), the others having been
    /// found finite then.
    #[inline(always)]
    fn signals_finite(&mut self) -> bool {
        let sig = &self.ev.sig;
        let finite = if self.ev.sig_unchecked {
            drivelink_solver::simd::all_finite(sig)
        } else {
            let slots = &self.programs().shown_slots;
            slots.iter().all(|&s| sig[s as usize].is_finite())
        };
        self.ev.sig_unchecked = false;
        finite
    }

    /// The first non-finite signal, as a message naming its block and port (after
    /// [`Model::signals_finite`] found one), or `None` when every non-finite value is
    /// allowed where it is.
    #[cold]
    fn non_finite_signal(&self) -> Option<String> {
        let plan = &self.plan;
        let out_port = |s: usize| {
            let bp = plan.blocks.iter().find(|b| b.y.contains(&s))?;
            let decl = bp
                .ports
                .iter()
                .filter(|p| p.kind == crate::block::PortKind::Out)
                .nth(s - bp.y.start)?;
            Some((bp, decl))
        };
        // A variable wired as a signal may be undefined where its block says so (a
        // side-slip angle at standstill); what reads it is checked at its own outputs.
        let is_tap = |s: usize| plan.taps.iter().any(|t| t.slot.ix() == s);
        let allowed_nan = |s: usize, v: f64| {
            is_tap(s) || (v.is_nan() && out_port(s).is_some_and(|(_, d)| d.may_be_undefined))
        };
        let s = self
            .ev
            .sig
            .iter()
            .enumerate()
            .position(|(s, &v)| !v.is_finite() && !allowed_nan(s, v))?;
        let (bp, decl) = out_port(s)?;
        let port = decl.name.as_str();
        Some(format!(
            "non-finite value {} on output '{}.{port}' ({}); check its inputs and parameters (division by zero, overflow)",
            self.ev.sig[s], bp.name, bp.type_name
        ))
    }
}

impl Model {
    /// A solver failure as the message users see, at the point `(t, x)` where the run
    /// ended. A step-size underflow whose cause is a non-finite value of the model's
    /// equations at that very point (a parameter that overflows a tire law, a division by
    /// zero) says so, naming what is not finite, instead of calling the model stiff: the
    /// first non-finite signal (block and port), else the first block applying a
    /// non-finite force, else the first non-finite derivative (the state and its block).
    #[cold]
    pub(super) fn explain_at(
        &mut self,
        e: &drivelink_solver::SolverError,
        t: f64,
        x: &[f64],
    ) -> String {
        use drivelink_solver::SolverError;
        let SolverError::StepSizeUnderflow { h, .. } = *e else {
            return self.explain(e);
        };
        match self.non_finite_at(t, x) {
            Some(what) => format!(
                "the model's equations are not finite at t = {t} s, so no step could be taken \
                 (the step size fell to {h:e} s): {what}"
            ),
            None => self.explain(e),
        }
    }

    /// What is not finite in the evaluation at `(t, x)` (see [`Model::explain_at`]), or
    /// `None` when the signals, the forces and the derivatives there are all finite.
    fn non_finite_at(&mut self, t: f64, x: &[f64]) -> Option<String> {
        if x.iter().any(|v| !v.is_finite()) {
            return None;
        }
        // Kept, so the derivatives below read this evaluation instead of making another.
        self.eval_for_and_keep(t, x, EvalFor::All);
        if !self.signals_finite() {
            if let Some(m) = self.non_finite_signal() {
                return Some(m);
            }
        }
        if let Some(b) = self.ev.block_power.iter().position(|p| !p.is_finite()) {
            let bp = &self.plan.blocks[b];
            return Some(format!(
                "block '{}' ({}) applies a non-finite force (its power is {}); check its inputs and parameters (division by zero, overflow)",
                bp.name, bp.type_name, self.ev.block_power[b]
            ));
        }
        let mut dx = vec![0.0; x.len()];
        self.derivs(t, x, &mut dx, true);
        let i = dx.iter().position(|v| !v.is_finite())?;
        Some(format!(
            "the derivative of the {} is {}; check the parameters of the blocks it depends on (division by zero, overflow)",
            self.state_owner(i),
            dx[i]
        ))
    }
}
