//! Load-dependent friction joints and impacts in the network.
//!
//! **Load-dependent joints** (a gear with mesh losses, [`crate::block::FrictionLoad`]): a
//! sliding joint applies `tau_k` along its row `r_k`, and the network is linear in its
//! forces, so with the solution `(a₀, λ₀)` computed without these torques,
//! `a = a₀ + Σ tau_k·u_k` and `λ = λ₀ + Σ tau_k·Λ_k` with `u_k = S·r_k` and
//! `Λ_k = (G⁺)ᵀ(M·u_k − r_k)`. Both are computed with every factorization and kept with
//! it (one set per set of active rows met); per evaluation the model solves the small coupled system for the
//! `tau_k` (each affine in a load that is itself a combination of the `λ`) and applies the
//! correction here: exact, allocation-free, `O(K·(n + m))`.
//!
//! **Impacts**: an impulse `P` along a joint row `r` changes the speeds by `S·r·P` (every
//! active constraint kept, momentum conserved), and `r·v` by `(rᵀ·S·r)·P`; Newton's law
//! `r·v⁺ = −e·r·v⁻` fixes `P`.

use super::{Factor, Network};

/// Sensitivities of one load-dependent joint under one factorization.
#[derive(Debug, Clone, Default)]
pub(super) struct LoadSens {
    /// The friction joint.
    pub joint: usize,
    /// `S·r` (accelerations per unit joint torque).
    pub u: Vec<f64>,
    /// d λ_row / d tau for every fixed row.
    pub d_rows: Vec<f64>,
    /// d λ_joint / d tau for every friction joint (non-zero only for locked ones).
    pub d_fric: Vec<f64>,
}

impl Network {
    /// Declare the load-dependent friction joints (indices of friction rows), once after
    /// building the network. Their sensitivities are computed with every factorization
    /// and kept with it.
    pub fn set_load_joints(&mut self, joints: &[usize]) {
        self.load_joints = joints.to_vec();
        self.list_modes();
        let mut cache = std::mem::take(&mut self.cache);
        for e in cache.iter_mut() {
            let (factor, active) = (&e.factor, e.active.clone());
            e.load = self.load_sens_for(factor, &active);
        }
        self.cache = cache;
    }

    /// The sensitivities of the load-dependent joints under `fac`, the factorization of
    /// the current active rows.
    pub(super) fn load_sens(&self, fac: &Factor) -> Vec<LoadSens> {
        self.load_sens_for(fac, &self.active)
    }

    /// The sensitivities under `fac`, the factorization of the rows `active`.
    fn load_sens_for(&self, fac: &Factor, active: &[usize]) -> Vec<LoadSens> {
        let n = self.n;
        let nr = self.rows.len();
        let mut res = vec![0.0; n];
        let mut out = Vec::with_capacity(self.load_joints.len());
        for &joint in &self.load_joints {
            let mut ls = LoadSens {
                joint,
                u: vec![0.0; n],
                d_rows: vec![0.0; nr],
                d_fric: vec![0.0; self.friction_rows.len()],
            };
            let terms = &self.friction_rows[joint].terms;
            for i in 0..n {
                ls.u[i] = terms.iter().map(|&(k, c)| fac.s[k * n + i] * c).sum();
            }
            for i in 0..n {
                res[i] = self.mass[i] * ls.u[i];
            }
            for &(k, c) in terms {
                res[k] -= c;
            }
            for (r, &i) in active.iter().enumerate() {
                let col = &fac.p[r * n..(r + 1) * n];
                let d: f64 = col.iter().zip(&res).map(|(p, q)| p * q).sum();
                if i < nr {
                    ls.d_rows[i] = d;
                } else {
                    ls.d_fric[i - nr] = d;
                }
            }
            out.push(ls);
        }
        out
    }

    /// Number of load-dependent joints.
    pub fn n_load(&self) -> usize {
        self.load_joints.len()
    }

    /// The friction joint of load-dependent joint `k`.
    pub fn load_joint(&self, k: usize) -> usize {
        self.load_joints[k]
    }

    /// `d λ_row / d tau_k` of fixed row `row` (zero without a factorization).
    pub fn load_d_row(&self, k: usize, row: usize) -> f64 {
        self.current().map_or(0.0, |e| e.load[k].d_rows[row])
    }

    /// `d λ_joint / d tau_k` of friction joint `joint` (zero unless it is locked).
    pub fn load_d_joint(&self, k: usize, joint: usize) -> f64 {
        self.current().map_or(0.0, |e| e.load[k].d_fric[joint])
    }

    /// Add the torque `tau` of load-dependent joint `k` to the last solution: forces,
    /// accelerations and constraint forces.
    pub fn apply_load_torque(&mut self, k: usize, tau: f64) {
        let Some(e) = self.factor else {
            return;
        };
        if tau == 0.0 {
            return;
        }
        let ls = &self.cache[e].load[k];
        for &(node, c) in &self.friction_rows[ls.joint].terms {
            self.f[node] += c * tau;
        }
        for (a, u) in self.a.iter_mut().zip(&ls.u) {
            *a += tau * u;
        }
        for (l, d) in self.lambda_rows.iter_mut().zip(&ls.d_rows) {
            *l += tau * d;
        }
        for (l, d) in self.lambda_fric.iter_mut().zip(&ls.d_fric) {
            *l += tau * d;
        }
    }

    /// Apply an impact on friction joint `joint`'s row to the speeds `v` so that
    /// `r·v⁺ = −restitution·r·v⁻`, keeping every active constraint. Returns the kinetic
    /// energy removed (>= 0 for restitution in [0, 1]), or `None` when the row cannot
    /// move (`rᵀ·S·r = 0`: the active constraints already fix it) or the network has no
    /// factorization.
    pub fn impact(&mut self, joint: usize, restitution: f64, v: &mut [f64]) -> Option<f64> {
        let n = self.n;
        let fac = &self.cache[self.factor?].factor;
        let terms = &self.friction_rows[joint].terms;
        let w: f64 = terms.iter().map(|&(k, c)| c * v[k]).sum();
        for i in 0..n {
            self.tmp[i] = terms.iter().map(|&(k, c)| fac.s[k * n + i] * c).sum();
        }
        let rsr: f64 = terms.iter().map(|&(k, c)| c * self.tmp[k]).sum();
        let scale = terms.iter().map(|&(_, c)| c * c).sum::<f64>()
            / self
                .mass
                .iter()
                .cloned()
                .fold(0.0_f64, f64::max)
                .max(1e-300);
        if rsr.is_nan() || rsr <= 1e-12 * scale {
            return None;
        }
        let p = -(1.0 + restitution) * w / rsr;
        let ke0 = self.kinetic_energy(v);
        for i in 0..n {
            v[i] += p * self.tmp[i];
        }
        Some(ke0 - self.kinetic_energy(v))
    }
}
