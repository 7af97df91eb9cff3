//! Load-dependent friction joints (gears with mesh losses) in the evaluation: after the
//! network solve without their torques, solve the small coupled system for the torques of
//! the sliding ones and correct every acceleration and constraint force (see
//! `crate::network` / `load.rs` for the superposition and
//! [`crate::block::FrictionLoad`] for the block side).

use crate::block::{Buffers, Cx};
use crate::plan::Plan;
use crate::thermal::solve_dense;

use super::eval::{buffers, cx_of};
use super::Model;

/// Scratch of the coupled solve (allocated once per model).
#[derive(Debug, Clone, Default)]
pub(super) struct LoadScratch {
    /// Plan indices of the sliding load joints of this evaluation.
    active: Vec<usize>,
    /// `K×K` matrix, row-major.
    mat: Vec<f64>,
    /// Right-hand side, then the torques.
    rhs: Vec<f64>,
    slope: Vec<f64>,
    /// Whether friction joint `j` is load-dependent (its torque is set here).
    pub is_load: Vec<bool>,
}

impl LoadScratch {
    /// Scratch for `plan`.
    pub(super) fn new(plan: &Plan) -> Self {
        let k = plan.load_joints.len();
        let mut is_load = vec![false; plan.joints.len()];
        for lj in &plan.load_joints {
            is_load[lj.joint.ix()] = true;
        }
        LoadScratch {
            active: Vec::with_capacity(k),
            mat: vec![0.0; k * k],
            rhs: vec![0.0; k],
            slope: vec![0.0; k],
            is_load,
        }
    }
}

impl Model {
    /// The torques of the sliding load-dependent joints, applied to the network solution.
    /// Called right after the network solve (the joints' torques were left out of it).
    pub(super) fn apply_load_friction(&mut self, plan: &Plan, t: f64, x: &[f64]) {
        let nl = plan.load_joints.len();
        if nl == 0 {
            return;
        }
        self.load.active.clear();
        for (k, lj) in plan.load_joints.iter().enumerate() {
            if self.net.modes[lj.joint.ix()].sliding_sign() != 0.0 {
                self.load.active.push(k);
            }
        }
        let na = self.load.active.len();
        if na == 0 {
            return;
        }
        for i in 0..na {
            let k = self.load.active[i];
            let lj = &plan.load_joints[k];
            let j = lj.joint.ix();
            let jp = &plan.joints[j];
            let law = {
                cx_of!(cx = self, plan, jp.block, t, x);
                self.blocks[jp.block.ix()].load_friction(jp.local, &cx, self.ev.joint_wrel[j])
            };
            // The load at zero torques of the sliding load joints.
            let mut t0: f64 = lj
                .rows
                .iter()
                .map(|&(r, c)| c * self.net.lambda_rows[r])
                .sum();
            for &(jj, c) in &lj.joints {
                let tau = if self.load.is_load[jj] && self.net.modes[jj].sliding_sign() != 0.0 {
                    0.0
                } else {
                    match self.net.modes[jj] {
                        crate::block::FrictionMode::Locked => self.net.lambda_fric[jj],
                        crate::block::FrictionMode::Free => 0.0,
                        _ => self.ev.joint_kin[jj],
                    }
                };
                t0 += c * tau;
            }
            self.load.slope[i] = law.slope;
            self.load.rhs[i] = law.tau0 + law.slope * t0;
            for i2 in 0..na {
                let k2 = self.load.active[i2];
                let j2 = plan.load_joints[k2].joint.ix();
                let mut d: f64 = lj
                    .rows
                    .iter()
                    .map(|&(r, c)| c * self.net.load_d_row(k2, r))
                    .sum();
                for &(jj, c) in &lj.joints {
                    d += c * self.net.load_d_joint(k2, jj);
                    if jj == j2 {
                        d += c;
                    }
                }
                self.load.mat[i * na + i2] = f64::from(u8::from(i == i2)) - law.slope * d;
            }
        }
        if !solve_dense(&mut self.load.mat[..na * na], &mut self.load.rhs[..na], na) {
            if self.run.failure.is_none() {
                let names: Vec<&str> = self.load.active[..na]
                    .iter()
                    .map(|&k| plan.joints[plan.load_joints[k].joint.ix()].name.as_str())
                    .collect();
                self.run.failure = Some(format!(
                    "at t = {t} s the load-dependent friction of {} has no solution (its loss grows as fast as the load it causes); check the efficiencies",
                    names.join(", ")
                ));
            }
            return;
        }
        for i in 0..na {
            let k = self.load.active[i];
            let tau = self.load.rhs[i];
            self.net.apply_load_torque(k, tau);
            self.ev.joint_kin[plan.load_joints[k].joint.ix()] = tau;
        }
    }
}
