//! `Probe`: one block evaluated on its own, for unit tests of block equations.
//!
//! A probe gives the block inputs, flange speeds, positions and accelerations, constraint
//! forces, joint modes and states directly (each flange its own node), and calls one
//! evaluation method at a time, so a test can check a block's equations against their
//! closed form without building a model.

use crate::block::{
    Block, BlockTables, Buffers, Cx, EventCx, Forces, FrictionLaw, FrictionMode, PortKind,
};
use crate::frame::{FrameState, FRAME_LOADS, FRAME_STATES};
use crate::ids::SlotIx;
use crate::result::EventTag;

/// A single block with hand-set surroundings. See the module docs.
pub struct Probe<'b> {
    block: &'b mut dyn Block,
    t: f64,
    x: Vec<f64>,
    /// Inputs then outputs.
    sig: Vec<f64>,
    inputs: Vec<SlotIx>,
    n_in: usize,
    n_out: usize,
    port_dof: Vec<u32>,
    pos: Vec<f64>,
    vel: Vec<f64>,
    acc: Vec<f64>,
    row_lambda: Vec<f64>,
    joint_tau: Vec<f64>,
    modes: Vec<FrictionMode>,
    /// Rigid-body states of every port (13 each; used by frame ports only).
    frames: Vec<f64>,
    /// Poses of `frames`, one per port.
    frame_states: Vec<FrameState>,
    /// Rigid-body accelerations of every port (6 each).
    frame_acc: Vec<f64>,
    /// Temperature per port (heat ports), K.
    temp: Vec<f64>,
    /// Impacts asked for at the last event call: (joint, restitution).
    impacts: Vec<(usize, f64)>,
}

impl<'b> Probe<'b> {
    /// A probe around `block`: inputs, speeds and states zero, joints free, `t = 0`.
    pub fn new(block: &'b mut dyn Block) -> Self {
        let decl = block.declare();
        let ports = &decl.ports;
        let n_in = ports.iter().filter(|p| p.kind == PortKind::In).count();
        let n_out = ports.iter().filter(|p| p.kind == PortKind::Out).count();
        let np = ports.len();
        let mech = &decl.mech;
        let mut x = vec![0.0; decl.states];
        block.initial_states(&mut x);
        Probe {
            t: 0.0,
            x,
            sig: vec![0.0; n_in + n_out],
            inputs: (0..n_in).map(SlotIx::at).collect(),
            n_in,
            n_out,
            port_dof: (0..np as u32).collect(),
            pos: vec![0.0; np],
            vel: vec![0.0; np],
            acc: vec![0.0; np],
            row_lambda: vec![0.0; mech.constraints.len()],
            joint_tau: vec![0.0; mech.frictions.len()],
            modes: vec![FrictionMode::Free; mech.frictions.len()],
            frames: (0..np)
                .flat_map(|_| {
                    let mut s = [0.0; FRAME_STATES];
                    s[3] = 1.0;
                    s
                })
                .collect(),
            frame_states: vec![FrameState::default(); np],
            frame_acc: vec![0.0; FRAME_LOADS * np],
            temp: vec![293.15; np],
            impacts: Vec::new(),
            block,
        }
    }
    /// The block.
    pub fn block(&self) -> &dyn Block {
        &*self.block
    }
    /// Set the time.
    pub fn time(&mut self, t: f64) -> &mut Self {
        self.t = t;
        self
    }
    /// Set the signal inputs (in port order of the `in` ports).
    pub fn inputs(&mut self, u: &[f64]) -> &mut Self {
        self.sig[..u.len()].copy_from_slice(u);
        self
    }
    /// Set the speeds, one per port (entries of signal ports are ignored).
    pub fn speeds(&mut self, v: &[f64]) -> &mut Self {
        self.vel[..v.len()].copy_from_slice(v);
        self
    }
    /// Set the angles / positions, one per port.
    pub fn positions(&mut self, q: &[f64]) -> &mut Self {
        self.pos[..q.len()].copy_from_slice(q);
        self
    }
    /// Set the accelerations, one per port.
    pub fn accels(&mut self, a: &[f64]) -> &mut Self {
        self.acc[..a.len()].copy_from_slice(a);
        self
    }
    /// Set the states.
    pub fn states(&mut self, x: &[f64]) -> &mut Self {
        self.x[..x.len()].copy_from_slice(x);
        self
    }
    /// Set the constraint forces: the always-active rows, then the joints' torques.
    pub fn lambdas(&mut self, lam: &[f64]) -> &mut Self {
        let nr = self.row_lambda.len();
        for (i, &l) in lam.iter().enumerate() {
            if i < nr {
                self.row_lambda[i] = l;
            } else if let Some(t) = self.joint_tau.get_mut(i - nr) {
                *t = l;
            }
        }
        self
    }
    /// Set the temperatures, one per port (entries of other ports are ignored), K.
    pub fn temps(&mut self, t: &[f64]) -> &mut Self {
        self.temp[..t.len()].copy_from_slice(t);
        self
    }
    /// Set the joints' modes.
    pub fn modes(&mut self, m: &[FrictionMode]) -> &mut Self {
        self.modes[..m.len()].copy_from_slice(m);
        self
    }

    fn parts(&self) -> (Buffers<'_>, BlockTables) {
        (
            Buffers {
                sig: &self.sig,
                in_slots: &self.inputs,
                port_dof: &self.port_dof,
                pos: &self.pos,
                vel: &self.vel,
                acc: &self.acc,
                row_lambda: &self.row_lambda,
                joint_tau: &self.joint_tau,
                temp: &self.temp,
                modes: &self.modes,
                frames: &self.frames,
                frame_states: &self.frame_states,
                frame_acc: &self.frame_acc,
            },
            BlockTables::alone(
                self.inputs.len(),
                self.port_dof.len(),
                self.row_lambda.len(),
            ),
        )
    }

    /// `f` applied to the evaluation view.
    pub fn with_cx<R>(&self, f: impl FnOnce(&Cx) -> R) -> R {
        let (b, t) = self.parts();
        f(&Cx::new(self.t, &self.x, &b, &t))
    }
    /// The outputs (`outputs`, then `network_outputs` over them).
    pub fn outputs(&self) -> Vec<f64> {
        let mut y = vec![0.0; self.n_out];
        self.with_cx(|cx| {
            self.block.outputs(cx, &mut y);
            self.block.network_outputs(cx, &mut y);
        });
        y
    }
    /// The outputs as the block's kernels give them ([`Block::kernel`]: the outputs
    /// stage's, then the network stage's over it), or `None` if it offers neither.
    pub fn kernel_outputs(&self) -> Option<Vec<f64>> {
        let (k0, k1) = (self.block.kernel(false), self.block.kernel(true));
        if k0.is_none() && k1.is_none() {
            return None;
        }
        let mut y = vec![0.0; self.n_out];
        self.with_cx(|cx| {
            for k in [k0, k1].iter().flatten() {
                k.eval(cx, &mut y);
            }
        });
        Some(y)
    }
    /// The generalized forces on every port, and the power they deliver.
    pub fn forces(&self) -> (Vec<f64>, f64) {
        let (f, _, p) = self.forces_and_loads();
        (f, p)
    }
    /// The generalized forces on every port, the loads on the rigid body of every port (6
    /// each: world force, body moment; zero for non-frame ports), and the power.
    pub fn forces_and_loads(&self) -> (Vec<f64>, Vec<f64>, f64) {
        let mut f = vec![0.0; self.port_dof.len()];
        let mut loads = vec![0.0; FRAME_LOADS * self.port_dof.len()];
        let p = self.with_cx(|cx| {
            let mut acc = Forces::new(&mut f, &self.vel, &self.port_dof)
                .with_frames(&mut loads, &self.frame_states);
            self.block.forces(cx, &mut acc);
            acc.power()
        });
        (f, loads, p)
    }
    /// Set the rigid-body states (13, see [`crate::frame`]) seen through frame port `p`.
    pub fn frame_state(&mut self, p: usize, s: &[f64; FRAME_STATES]) -> &mut Self {
        self.frames[p * FRAME_STATES..(p + 1) * FRAME_STATES].copy_from_slice(s);
        self.frame_states[p] = FrameState::from_slice(s);
        self
    }
    /// The state derivatives.
    pub fn derivatives(&self) -> Vec<f64> {
        let mut dx = vec![0.0; self.x.len()];
        self.with_cx(|cx| self.block.derivatives(cx, &mut dx));
        dx
    }
    /// The guards.
    pub fn guards(&self) -> Vec<f64> {
        let mut g = vec![0.0; self.block.declare().n_guards()];
        self.with_cx(|cx| self.block.guards(cx, &mut g));
        g
    }
    /// Friction law of joint `k` at `w_rel`.
    pub fn friction(&self, k: usize, w_rel: f64) -> FrictionLaw {
        self.with_cx(|cx| self.block.friction(k, cx, w_rel))
    }
    /// The heat flows into every port (W) from `heat_flows`, and their total.
    pub fn heat_flows(&self) -> (Vec<f64>, f64) {
        let mut q = vec![0.0; self.port_dof.len()];
        let total = self.with_cx(|cx| {
            let mut h = crate::block::HeatFlows::new(&mut q, &self.port_dof);
            self.block.heat_flows(cx, &mut h);
            h.total()
        });
        (q, total)
    }
    /// The sliding torque law of load-dependent joint `k` at `w_rel`.
    pub fn load_friction(&self, k: usize, w_rel: f64) -> crate::block::LoadLaw {
        self.with_cx(|cx| self.block.load_friction(k, cx, w_rel))
    }
    /// The impacts asked for at the last `update_modes` / `time_event`: (joint,
    /// restitution).
    pub fn impacts(&self) -> &[(usize, f64)] {
        &self.impacts
    }
    /// Custom variable `i`.
    pub fn var(&self, i: usize) -> f64 {
        self.with_cx(|cx| self.block.var(cx, i))
    }
    /// Reset the block for a run starting at `t0`.
    pub fn reset(&mut self, t0: f64) -> &mut Self {
        self.block.reset(t0);
        self.t = t0;
        self
    }
    fn event<R>(
        &mut self,
        f: impl FnOnce(&mut dyn Block, &mut EventCx) -> R,
    ) -> (R, Vec<(EventTag, String)>, bool) {
        let mut log = Vec::new();
        let mut stop = false;
        let buf = Buffers {
            sig: &self.sig,
            in_slots: &self.inputs,
            port_dof: &self.port_dof,
            pos: &self.pos,
            vel: &self.vel,
            acc: &self.acc,
            row_lambda: &self.row_lambda,
            joint_tau: &self.joint_tau,
            modes: &self.modes,
            frames: &self.frames,
            frame_states: &self.frame_states,
            frame_acc: &self.frame_acc,
            temp: &self.temp,
        };
        let tab = BlockTables::alone(
            self.inputs.len(),
            self.port_dof.len(),
            self.row_lambda.len(),
        );
        self.impacts.clear();
        let mut ecx = EventCx::new(self.t, &mut self.x, buf, &tab, &mut log, &mut stop)
            .with_impacts(&mut self.impacts);
        let r = f(&mut *self.block, &mut ecx);
        (r, log, stop)
    }
    /// `update_modes` at the current time: whether a mode changed, and the logged events.
    pub fn update_modes(&mut self) -> (bool, Vec<(EventTag, String)>) {
        let (r, log, _) = self.event(|b, cx| b.update_modes(cx));
        (r, log)
    }
    /// `time_event` at the current time: the logged events and whether a stop was asked.
    pub fn time_event(&mut self) -> (Vec<(EventTag, String)>, bool) {
        let (_, log, stop) = self.event(|b, cx| b.time_event(cx));
        (log, stop)
    }
    /// The current states.
    pub fn x(&self) -> &[f64] {
        &self.x
    }
    /// Number of signal inputs.
    pub fn n_inputs(&self) -> usize {
        self.n_in
    }
}
