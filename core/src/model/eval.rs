//! The evaluation loop: one pass over the plan's stages computes every signal and the
//! network's accelerations and constraint forces at `(t, x)` under the current modes;
//! derivatives and guards read the result. Blocks read their inputs and flange motion in
//! place through their [`Cx`] view, so nothing is gathered or copied per evaluation, and
//! nothing is allocated.

// Dense numeric kernels read better with explicit indices.
#![allow(clippy::needless_range_loop)]

use crate::block::{kernel, Buffers, Cx, Forces, FrictionLaw, FrictionMode};
use std::sync::Arc;

use crate::plan::{BlockRt, Plan};
use crate::short;

use super::linear::EvalFor;
use super::program::{Call, Fused, Op, Place, Program, TapGroup, NO_SLOT};
use super::{Model, Programs, ENGAGE_OFF, ENGAGE_ON};

/// Slack on friction guards so a joint released at zero slip does not relock on round-off.
pub(super) const SLIP_EPS: f64 = 1e-10;
/// Relative slack on locked-torque guards.
const TORQUE_EPS: f64 = 1e-9;

/// The shared buffers of model `$m` at state `$x` (a macro so the borrow checker sees
/// field-level borrows); with a fourth argument, that signal slice instead of `$m.ev.sig`
/// (an empty one for a set of buffers built once and completed per block, see
/// [`Model::outputs_of`]).
macro_rules! buffers {
    ($m:expr, $x:expr, $n:expr) => {
        buffers!($m, $x, $n, &$m.ev.sig)
    };
    ($m:expr, $x:expr, $n:expr, $sig:expr) => {
        Buffers {
            sig: $sig,
            in_slots: &$m.plan.in_slots,
            port_dof: &$m.plan.port_dof,
            pos: &$x[..$n],
            vel: &$x[$n..2 * $n],
            acc: &$m.net.a,
            row_lambda: &$m.net.lambda_rows,
            joint_tau: &$m.ev.joint_tau,
            modes: &$m.net.modes,
            frames: &$x[$m.plan.frames_x.clone()],
            frame_states: &$m.ev.frame_states,
            frame_acc: &$m.ev.frame_acc,
            temp: &$m.heat.temp,
        }
    };
}
pub(super) use buffers;

/// `let $cx = ` the view of block `$b` (a `BlockIx`) of model `$m` at `(t, x)`, with its
/// buffers in a hidden local beside it (a statement, so the view can borrow them).
macro_rules! cx_of {
    ($cx:ident = $m:expr, $plan:expr, $b:expr, $t:expr, $x:expr) => {
        let buf = buffers!($m, $x, $plan.nodes.len());
        let rt = &$plan.rt[$b.ix()];
        let $cx = Cx::new(
            $t,
            &$x[rt.x.0 as usize..rt.x.1 as usize],
            &buf,
            $plan.block_tables($b),
        );
    };
}
pub(super) use cx_of;

/// The view of the block whose offsets are `rt` at `(t, x)` over `buf` (inlined: the
/// passes build one per block call).
#[inline(always)]
pub(super) fn view<'a>(rt: &'a BlockRt, t: f64, x: &'a [f64], buf: &'a Buffers<'a>) -> Cx<'a> {
    Cx::new(t, &x[rt.x.0 as usize..rt.x.1 as usize], buf, &rt.tab)
}

/// Static range slack of a locked joint's torque guard.
pub(super) fn torque_slack(law: &FrictionLaw) -> f64 {
    let span = if law.hi.is_finite() && law.lo.is_finite() {
        law.hi - law.lo
    } else {
        1.0
    };
    TORQUE_EPS * span.max(1e-3)
}

impl Model {
    /// `eval_and_keep` unless the kept evaluation is at the same `(t, x)`: the solver asks
    /// for the guards and the output of a step end right after its last stage's
    /// derivatives, and for the output of a grid point right after its guards (a grid
    /// point inside a step is one of its guard samples). Cheap probes of `x` reject a
    /// different point before the full compare.
    #[inline(always)]
    pub(super) fn eval_cached(&mut self, t: f64, x: &[f64]) {
        if !self.kept_at(t, x) {
            self.eval_and_keep(t, x);
        }
    }

    /// Whether the kept evaluation is the one at `(t, x)`.
    pub(super) fn kept_at(&self, t: f64, x: &[f64]) -> bool {
        let c = &self.cache;
        let n = x.len();
        c.valid
            && c.has_x
            && t.to_bits() == c.t.to_bits()
            && (n == 0
                || (x[n - 1].to_bits() == c.x[n - 1].to_bits()
                    && x[n / 2].to_bits() == c.x[n / 2].to_bits()
                    && drivelink_solver::simd::same_bits(x, &c.x)))
    }

    /// `eval`, kept to serve the guards and output of the same point (a step end).
    ///
    /// A model with no guards and no time event to come (a chain of transfer functions)
    /// serves from it only its derivatives and its logged variables: no guard reads it
    /// and no event handler starts from it. It then evaluates what those depend on
    /// ([`EvalFor::Output`], the same bits as a full evaluation): a signal that nothing
    /// integrated, logged or guarded depends on is evaluated at events only.
    pub(super) fn eval_and_keep(&mut self, t: f64, x: &[f64]) {
        let what = self.kept_evaluation();
        self.eval_for_and_keep(t, x, what);
    }

    /// What a kept evaluation computes: everything, unless the model has no guards and no
    /// time event to come (see [`Model::eval_and_keep`]).
    fn kept_evaluation(&self) -> EvalFor {
        if self.has_guards() || self.run.next_te_min.is_finite() {
            EvalFor::All
        } else {
            EvalFor::Output
        }
    }

    /// Whether the model has guards (block guards or friction joints).
    fn has_guards(&self) -> bool {
        self.plan.n_block_guards > 0 || !self.plan.joints.is_empty()
    }

    /// `eval_and_keep` at a step end. With no guards, nothing but the output of the same
    /// point follows (the integrator's `output_at_last_call`), so the point itself is not
    /// copied for a comparison (a later call there evaluates anew).
    fn eval_and_keep_step_end(&mut self, t: f64, x: &[f64]) {
        if self.has_guards() {
            return self.eval_and_keep(t, x);
        }
        let what = self.kept_evaluation();
        self.eval_for(t, x, what);
        self.cache.t = t;
        self.cache.has_x = false;
        self.cache.valid = true;
    }

    /// The evaluation for `what` at `(t, x)`, kept for the calls that follow at the same
    /// point.
    pub(super) fn eval_for_and_keep(&mut self, t: f64, x: &[f64], what: EvalFor) {
        self.eval_for(t, x, what);
        self.cache.t = t;
        self.cache.x.copy_from_slice(x);
        self.cache.has_x = true;
        self.cache.valid = true;
    }

    /// Evaluate every signal and the network at (t, x) under the current modes.
    pub(super) fn eval(&mut self, t: f64, x: &[f64]) {
        self.eval_for(t, x, EvalFor::All);
    }

    /// Evaluate the model at (t, x) for `what` (see [`EvalFor`]: for derivatives only, the
    /// stages and linear output rows nothing read by the derivatives depends on are left
    /// out, at an output point those nothing logged depends on either, see `demand.rs`).
    pub(super) fn eval_for(&mut self, t: f64, x: &[f64], what: EvalFor) {
        self.cache.valid = false;
        self.cache.current = false;
        self.run.model_evals += 1;
        // The programs are taken out for the pass (a pointer, nothing in the pass reads
        // them through the model) and put back; the plan is read through them.
        let progs = self.take_programs();
        debug_assert!(
            Arc::ptr_eq(&progs.plan, &self.plan),
            "programs of another plan"
        );
        let plan = &*progs.plan;
        if !self.ev.frame_states.is_empty() {
            crate::frame::FrameState::fill(&x[plan.frames_x.clone()], &mut self.ev.frame_states);
        }
        self.heat_pre(x);
        let prog = match what {
            EvalFor::All => &progs.all,
            EvalFor::Derivatives => &progs.rhs,
            EvalFor::Output => &progs.shown,
        };
        self.run_program(plan, &progs, prog, what, t, x);
        self.progs = Some(progs);
        self.heat_post(t, x);
        self.cache.current = what == EvalFor::All;
        self.ev.sig_unchecked |= what == EvalFor::All;
    }

    /// The evaluation programs (outside an evaluation pass).
    pub(super) fn programs(&self) -> &Programs {
        self.progs
            .as_deref()
            .expect("the programs are out of the model only during an evaluation pass")
    }

    /// Point the evaluation programs at `plan` (the same stages and block offsets as the
    /// one they were laid out from: linearization reroutes inputs only).
    pub(super) fn repoint_programs(&mut self, plan: Arc<Plan>) {
        self.progs
            .as_mut()
            .expect("not during an evaluation pass")
            .plan = plan;
    }

    /// The evaluation programs, taken out of the model for a pass.
    fn take_programs(&mut self) -> Box<Programs> {
        self.progs.take().expect("evaluation passes do not nest")
    }

    /// Run the steps of `prog` (one of `progs`, taken out of the model) in order.
    fn run_program(
        &mut self,
        plan: &Plan,
        progs: &Programs,
        prog: &Program,
        what: EvalFor,
        t: f64,
        x: &[f64],
    ) {
        for &op in prog.ops() {
            match op {
                Op::Linear(k) => self.lin.outputs(k as usize, what, x, &mut self.ev.sig),
                Op::Network => self.eval_network(plan, progs, t, x),
                Op::Blocks(start, end) => self.outputs_of(plan, prog.calls(start, end), t, x),
                Op::Tap(k) => {
                    let tap = &plan.taps[k as usize];
                    self.ev.sig[tap.slot.ix()] = self.tap_value(plan, tap, t, x);
                }
                Op::Fused(k) => self.run_fused(plan, prog.fused(k), x),
                Op::Taps(k) => self.run_taps(plan, prog.taps(k), t, x),
            }
        }
    }

    /// The variables of a tap group into their slots, from one `vars` call.
    fn run_taps(&mut self, plan: &Plan, g: &TapGroup, t: f64, x: &[f64]) {
        let n = g.vars.len();
        {
            let buf = buffers!(self, x, plan.nodes.len());
            let cx = view(&g.rt, t, x, &buf);
            self.blocks[g.b.ix()].vars(&cx, &g.vars, &mut self.ev.ybuf[..n]);
        }
        for (s, &v) in g.slots.iter().zip(&self.ev.ybuf[..n]) {
            self.ev.sig[s.ix()] = v;
        }
    }

    /// A block's outputs as its fused operation (`program.rs`): the values its `outputs`
    /// (or `network_outputs`) computes, read and written in place.
    #[inline(never)]
    fn run_fused(&mut self, plan: &Plan, op: &Fused, x: &[f64]) {
        match op {
            Fused::Read { y, from } => {
                for (k, &p) in from.iter().enumerate() {
                    let v = self.place(plan, p, x);
                    self.ev.sig[*y as usize + k] = v;
                }
            }
            Fused::Product { y, terms } => {
                let v = kernel::product(terms.iter().map(|&(m, p)| (m, self.place(plan, p, x))));
                self.ev.sig[*y as usize] = v;
            }
            Fused::Ratio { y, num, den, min } => {
                let v = kernel::ratio(self.place(plan, *num, x), self.place(plan, *den, x), *min);
                self.ev.sig[*y as usize] = v;
            }
        }
    }

    /// The value a fused operation reads at `p`.
    #[inline(always)]
    fn place(&self, plan: &Plan, p: Place, x: &[f64]) -> f64 {
        match p {
            Place::Input(i) => self.ev.sig[plan.in_slots[i as usize].ix()],
            Place::State(i) => x[i as usize],
            Place::Accel(i) => self.net.a[i as usize],
            Place::RowLambda(i) => self.net.lambda_rows[i as usize],
            Place::JointTau(i) => self.ev.joint_tau[i as usize],
            Place::Zero => 0.0,
        }
    }

    /// The block calls `calls`, in order, into the signal buffer. The buffers a block reads
    /// are built once for the whole run; only the signal slice, which the run itself
    /// fills, is taken anew for each block.
    fn outputs_of(&mut self, plan: &Plan, calls: &[Call], t: f64, x: &[f64]) {
        let n = plan.nodes.len();
        let base = buffers!(self, x, n, &[]);
        for c in calls {
            let rt = &c.rt;
            let y = rt.y.0 as usize..rt.y.1 as usize;
            let ny = y.len();
            // Entries a block leaves untouched keep their value: only blocks with network
            // outputs leave some (the ones computed before or after the solve).
            if rt.net_out {
                short::copy(&mut self.ev.ybuf[..ny], &self.ev.sig[y.clone()]);
            }
            let cx = Cx::with_signals(
                t,
                &x[rt.x.0 as usize..rt.x.1 as usize],
                &self.ev.sig,
                &base,
                &rt.tab,
            );
            let blk = &self.blocks[c.b.ix()];
            if c.network {
                blk.network_outputs(&cx, &mut self.ev.ybuf[..ny]);
            } else {
                blk.outputs(&cx, &mut self.ev.ybuf[..ny]);
            }
            // Most blocks have one output: a store, not a call to `memcpy`.
            if ny == 1 {
                self.ev.sig[rt.y.0 as usize] = self.ev.ybuf[0];
            } else {
                short::copy(&mut self.ev.sig[y], &self.ev.ybuf[..ny]);
            }
        }
    }

    /// Outputs of the blocks whose outputs change only at events (after every event and at
    /// the start of a run).
    pub(super) fn refresh_constants(&mut self, t: f64, x: &[f64]) {
        self.cache.current = false;
        self.ev.held_g_valid = false;
        self.ev.sig_unchecked = true;
        let progs = self.take_programs();
        self.run_program(&progs.plan, &progs, &progs.constants, EvalFor::All, t, x);
        self.progs = Some(progs);
    }

    /// The value of a variable wired as a signal, at `(t, x)` (its block's custom
    /// variables through `Block::vars`, which every block implements, batched or not).
    fn tap_value(&self, plan: &Plan, tap: &crate::plan::TapPlan, t: f64, x: &[f64]) -> f64 {
        match tap.var {
            crate::plan::VarRef::Custom(b, i) => {
                let buf = buffers!(self, x, plan.nodes.len());
                let cx = view(&plan.rt[b.ix()], t, x, &buf);
                let mut v = [0.0];
                self.blocks[b.ix()].vars(&cx, &[i], &mut v);
                v[0]
            }
            r => self.var_value(r, t, x),
        }
    }

    /// Forces, friction, tracking targets, network solve.
    fn eval_network(&mut self, plan: &Plan, progs: &Programs, t: f64, x: &[f64]) {
        let n = plan.nodes.len();
        short::zero(&mut self.net.f);
        self.ev.frame_load.fill(0.0);
        // Nothing the force and friction laws read changes in this loop: one set of buffers.
        let buf = buffers!(self, x, n);
        for c in &progs.forces {
            let tab = &c.rt.tab;
            let cx = Cx::new(t, &x[c.rt.x.0 as usize..c.rt.x.1 as usize], &buf, tab);
            let mut f = Forces::new(&mut self.net.f, &x[n..2 * n], &plan.port_dof)
                .for_block(tab)
                .with_frames(&mut self.ev.frame_load, &self.ev.frame_states);
            self.blocks[c.b.ix()].forces(&cx, &mut f);
            // Two arrays, two scalar stores: one 16-byte store of the pair would load the
            // accumulator's two fields as one vector right after the block wrote them one
            // by one (a store-forwarding stall, 3 % of an evaluation).
            let b = c.b.ix();
            self.ev.block_power[b] = f.power();
            self.ev.block_loss[b] = f.loss();
        }
        let v = &x[n..2 * n];
        // Every joint's slip (guards, work integrals and logs read it); a kinetic torque
        // on the joints with a kinetic sign (sliding, not load-dependent: those get theirs
        // after the solve, `load.rs`), added to the forces in joint order.
        let has_joints = !self.net.friction_rows.is_empty();
        if has_joints {
            let joints = self.net.friction_rows.iter().zip(&self.net.kinetic_sign);
            let out = self.ev.joint_wrel.iter_mut().zip(&mut self.ev.joint_kin);
            for (((row, &s), (wrel, kin)), c) in joints.zip(out).zip(&progs.guards.joints) {
                let w_rel = row.dot(v);
                *wrel = w_rel;
                let tau = if s != 0.0 {
                    -s * self.blocks[c.b.ix()]
                        .friction(c.local as usize, &view(&c.rt, t, x, &buf), w_rel)
                        .kinetic
                } else {
                    0.0
                };
                *kin = tau;
                if tau != 0.0 {
                    for &(node, c) in &row.terms {
                        self.net.f[node] += c * tau;
                    }
                }
            }
        }
        for &(i, s) in &progs.tracking {
            self.ev.targets[i as usize] = self.ev.sig[s.ix()];
        }
        self.net.set_tracking(v, &self.ev.targets);
        self.net.solve();
        self.apply_load_friction(plan, t, x);
        if !self.frames.is_empty() {
            self.frame_dynamics(plan, x);
        }
        // A locked joint transmits its constraint force, a sliding one its kinetic torque,
        // a free one nothing (its kinetic torque is zero).
        if has_joints {
            let taus = self.ev.joint_tau.iter_mut().zip(&self.ev.joint_kin);
            let modes = self.net.modes.iter().zip(&self.net.lambda_fric);
            for ((tau, &kin), (mode, &lam)) in taus.zip(modes) {
                *tau = if *mode == FrictionMode::Locked {
                    lam
                } else {
                    kin
                };
            }
        }
    }

    /// Newton–Euler of every rigid body from the loads the force blocks applied (out of
    /// line: a driveline has none; not cold: a vehicle calls it at every evaluation).
    #[inline(never)]
    fn frame_dynamics(&mut self, plan: &Plan, x: &[f64]) {
        use crate::frame::{FRAME_LOADS as L, FRAME_STATES as S};
        let xs = &x[plan.frames_x.clone()];
        for (f, props) in self.frames.iter().enumerate() {
            let l = &self.ev.frame_load[f * L..(f + 1) * L];
            props.derivatives(
                &xs[f * S..(f + 1) * S],
                [l[0], l[1], l[2]],
                [l[3], l[4], l[5]],
                &mut self.ev.frame_dx[f * S..(f + 1) * S],
                &mut self.ev.frame_acc[f * L..(f + 1) * L],
            );
        }
    }

    /// Friction law of joint `j` at `(t, x)` and relative speed `w_rel` (after `eval`).
    pub(super) fn law(&self, j: usize, t: f64, x: &[f64], w_rel: f64) -> FrictionLaw {
        let plan = &self.plan;
        let jp = &plan.joints[j];
        cx_of!(cx = self, plan, jp.block, t, x);
        self.blocks[jp.block.ix()].friction(jp.local, &cx, w_rel)
    }

    /// Transmitted torque of friction joint `j` after `eval`.
    pub(super) fn friction_tau(&self, j: usize) -> f64 {
        self.ev.joint_tau[j]
    }

    /// The state derivatives at `(t, x)`. `keep`: a step end, evaluated in full and kept
    /// for the guards and output of the same point (see [`Model::eval_and_keep`]);
    /// otherwise an evaluation for derivatives only ([`EvalFor::Derivatives`]: signals the
    /// derivatives do not depend on are left stale), so a caller that reads signals
    /// afterwards must pass `true`.
    pub(super) fn derivs(&mut self, t: f64, x: &[f64], dx: &mut [f64], keep: bool) {
        // A full evaluation kept at this very point (a step end whose guards were
        // evaluated first: an implicit method asks for the derivatives there after the
        // guards) serves as it is: it computed everything the derivatives read.
        if !self.kept_at(t, x) {
            if keep {
                self.eval_and_keep_step_end(t, x);
            } else {
                self.eval_for(t, x, EvalFor::Derivatives);
            }
        }
        let plan = &*self.plan;
        let n = plan.nodes.len();
        short::copy(&mut dx[..n], &x[n..2 * n]);
        short::copy(&mut dx[n..2 * n], &self.net.a[..n]);
        if !self.ev.frame_dx.is_empty() {
            dx[plan.frames_x.clone()].copy_from_slice(&self.ev.frame_dx);
        }
        self.lin.derivatives(x, &self.ev.sig, dx);
        let states = &self.programs().states;
        if !states.is_empty() {
            let buf = buffers!(self, x, n);
            for c in states {
                let cx = view(&c.rt, t, x, &buf);
                let xb = c.rt.x.0 as usize..c.rt.x.1 as usize;
                self.blocks[c.b.ix()].derivatives(&cx, &mut dx[xb]);
            }
        }
        let en = &self.programs().energy;
        for e in &en.terms {
            let mut p = match e.power_of {
                Some(b) => self.ev.block_power[b.ix()],
                None => 0.0,
            };
            for &r in &en.rows[e.rows.0 as usize..e.rows.1 as usize] {
                let r = r as usize;
                p += self.net.lambda_rows[r] * self.net.rows[r].dot(&x[n..2 * n]);
            }
            dx[e.state as usize] = p;
            if let (Some(l), Some(b)) = (e.loss, e.power_of) {
                dx[l as usize] = self.ev.block_loss[b.ix()];
            }
        }
        let e0 = plan.x_joint_energy;
        let work = &mut dx[e0..e0 + plan.joints.len()];
        for (d, (&kin, &w_rel)) in work
            .iter_mut()
            .zip(self.ev.joint_kin.iter().zip(&self.ev.joint_wrel))
        {
            *d = kin * w_rel;
        }
        self.heat_derivs(dx);
    }

    pub(super) fn all_guards(&mut self, t: f64, x: &[f64], g: &mut [f64]) {
        self.eval_cached(t, x);
        let plan = &*self.plan;
        let buf = buffers!(self, x, plan.nodes.len());
        let view = |rt| view(rt, t, x, &buf);
        let prog = &self
            .progs
            .as_deref()
            .expect("not during an evaluation pass")
            .guards;
        for c in &prog.blocks {
            self.blocks[c.b.ix()].guards(&view(&c.rt), &mut g[c.g.0 as usize..c.g.1 as usize]);
        }
        // Guards that change only at events: evaluated at the first sample after one and
        // kept (`held_g`), copied at the samples in between.
        if self.ev.held_g_valid {
            for (&i, &v) in prog.held_slots.iter().zip(&self.ev.held_g) {
                g[i as usize] = v;
            }
        } else {
            for c in &prog.held {
                self.blocks[c.b.ix()].guards(&view(&c.rt), &mut g[c.g.0 as usize..c.g.1 as usize]);
            }
            for (&i, v) in prog.held_slots.iter().zip(&mut self.ev.held_g) {
                *v = g[i as usize];
            }
            self.ev.held_g_valid = true;
        }
        let g = &mut g[plan.n_block_guards..];
        let joints = prog
            .joints
            .iter()
            .zip(g.chunks_exact_mut(3))
            .zip(&self.net.modes)
            .zip(self.ev.joint_wrel.iter().zip(&self.net.lambda_fric));
        for (((c, gj), mode), (&w_rel, &lam)) in joints {
            let blk = &self.blocks[c.b.ix()];
            let k = c.local as usize;
            if *mode == FrictionMode::Locked {
                let law = blk.friction(k, &view(&c.rt), 0.0);
                // `lo` read alone: the pair `lo, hi` loaded as one vector right after the
                // block stored them one by one stalls (store forwarding).
                let lo = std::hint::black_box(law.lo);
                let slack = torque_slack(&law);
                gj[0] = lam - lo + slack;
                gj[1] = law.hi - lam + slack;
                gj[2] = law.engagement - ENGAGE_OFF;
                continue;
            }
            // Free and sliding joints read only the engagement of their law; a clutch's is
            // its input signal, read in place with no call.
            let engagement = match c.engagement {
                NO_SLOT => blk.engagement(k, &view(&c.rt), w_rel),
                pos => self.ev.sig[plan.in_slots[pos as usize].ix()],
            };
            gj[1] = 1.0;
            if *mode == FrictionMode::Free {
                gj[0] = 1.0;
                gj[2] = ENGAGE_ON - engagement;
            } else {
                gj[0] = mode.sliding_sign() * w_rel + SLIP_EPS;
                gj[2] = engagement - ENGAGE_OFF;
            }
        }
    }
}
