//! The mechanical network: rigid nodes, inertias, kinematic constraints and friction joints.
//!
//! Each mechanical connection line is a node with a speed `v_i` and a position `x_i`. Blocks
//! add inertia to nodes (diagonal `M`), forces `f`, and linear constraint rows `G·v = 0`
//! (gears, grounds, rolling wheels, locked friction joints). Every derivative evaluation
//! solves
//!
//! ```text
//!   M·a = f + Gᵀλ,   G·a = b
//! ```
//!
//! in reduced coordinates: with `N` a basis of the null space of `G`,
//! `a = S·f + C·b`, `S = N (NᵀMN)⁻¹ Nᵀ`, `C = (I − S·M)·G⁺`, and the minimum-norm constraint
//! forces `λ = (G⁺)ᵀ (M·a − f) = Q·f + R·b` with `Q = (G⁺)ᵀ(M·S − I)`, `R = (G⁺)ᵀ·M·C`
//! (an evaluation forms `[a; λ]` as one axpy per non-zero force). The matrices depend on
//! the set of active rows only (the fixed rows and the locked joints), so they are
//! factorized once per set met in a run and kept (with the load-dependent joints'
//! sensitivities, `load.rs`) in a small cache keyed by that set: a mode change back to a set
//! met before (an ABS cycle, a gear shift back) only points the network at the kept
//! factorization. An evaluation is three small dense mat-vecs and allocates nothing. The null-space form makes massless nodes fine whenever `NᵀMN` is positive
//! definite, and redundant but consistent constraints (a lock that closes a loop) harmless.
//! `b` is non-zero only for tracking rows (prescribed speed with a time constant).
//!
//! At a mode change the speeds are projected onto the new constraints in the mass metric,
//! `v ← S_v·M·v`, which conserves momentum.

// Dense numeric kernels read better with explicit indices.
#![allow(clippy::needless_range_loop)]

mod load;

use drivelink_solver::simd::{add_columns, set_columns};
use nalgebra::{DMatrix, SymmetricEigen};

use crate::block::{FrictionMode, PortKind};
use crate::short;

/// A constraint row over nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeRow {
    /// (node, coefficient), nodes unique.
    pub terms: Vec<(usize, f64)>,
    /// `Some((tc))` for a tracking row (acceleration level), `None` for a velocity row.
    pub tracking: Option<f64>,
}

impl NodeRow {
    /// `Σ c·v`.
    #[inline]
    pub fn dot(&self, v: &[f64]) -> f64 {
        self.terms.iter().map(|&(i, c)| c * v[i]).sum()
    }
    /// Build from (node, coef) pairs, merging duplicate nodes.
    pub fn new(pairs: impl IntoIterator<Item = (usize, f64)>, tracking: Option<f64>) -> Self {
        let mut terms: Vec<(usize, f64)> = Vec::new();
        for (n, c) in pairs {
            if let Some(t) = terms.iter_mut().find(|t| t.0 == n) {
                t.1 += c;
            } else {
                terms.push((n, c));
            }
        }
        terms.retain(|t| t.1 != 0.0);
        NodeRow { terms, tracking }
    }
}

/// How many factorizations (sets of active rows) a network keeps.
const FACTOR_CACHE: usize = 64;

/// The factorization of one mode.
#[derive(Debug, Clone)]
struct Factor {
    /// n×n, column-major.
    s: Vec<f64>,
    /// n×m pseudo-inverse of G, column-major.
    p: Vec<f64>,
    /// The response to the forces, one column per node, `n + m` long: `S[:, j]` (the
    /// accelerations) on top of `Q[:, j]`, `Q = (G⁺)ᵀ (M S − I)` (the constraint forces).
    /// A solve is then one axpy per non-zero force.
    sq: Vec<f64>,
    /// The same for the tracking right-hand sides: `C[:, r]` on top of `(G⁺)ᵀ M C[:, r]`
    /// (only when tracking rows are active).
    cr: Vec<f64>,
    /// The active tracking rows: (active index, row index, time constant). The other
    /// entries of `b` are zero for the whole mode.
    tracking: Vec<(usize, usize, f64)>,
    /// n×n velocity projection `S_v·M`, column-major.
    proj: Vec<f64>,
    has_tracking: bool,
}

/// The factorization of one set of active rows and what else depends on that set only.
#[derive(Debug, Clone)]
struct ModeFactor {
    /// The active rows (the cache key), as in [`Network::active`].
    active: Vec<usize>,
    factor: Factor,
    /// The load-dependent joints' sensitivities under this factorization (`load.rs`).
    load: Vec<load::LoadSens>,
}

/// The mechanical network of a compiled model.
#[derive(Debug, Clone)]
pub struct Network {
    pub n: usize,
    pub node_names: Vec<String>,
    pub node_kinds: Vec<PortKind>,
    pub mass: Vec<f64>,
    /// Always-active rows.
    pub rows: Vec<NodeRow>,
    /// Friction joint rows.
    pub friction_rows: Vec<NodeRow>,
    /// The friction joints' modes: read freely, written through [`Network::set_modes`]
    /// (which keeps the lists of sliding and locked joints).
    pub modes: Vec<FrictionMode>,
    /// Indices of active rows: `i < rows.len()` are fixed rows, others friction joints
    /// `i - rows.len()`.
    active: Vec<usize>,
    /// The entry of `cache` of the current modes (`None` before the first factorization
    /// and after a failed one).
    factor: Option<usize>,
    // scratch
    pub f: Vec<f64>,
    pub a: Vec<f64>,
    b: Vec<f64>,
    /// `[a; λ]` of the last solve.
    out: Vec<f64>,
    /// Factorizations of the sets of active rows met so far (at most `cache_limit`; a new
    /// set beyond that replaces the last entry).
    cache: Vec<ModeFactor>,
    /// The most entries `cache` holds ([`FACTOR_CACHE`] unless set lower).
    cache_limit: usize,
    /// Factorizations computed (cache misses) since the network was built.
    factorizations: usize,
    /// λ per fixed row (0 when inactive is impossible: fixed rows are always active).
    pub lambda_rows: Vec<f64>,
    /// λ per friction joint (0 unless locked).
    pub lambda_fric: Vec<f64>,
    tmp: Vec<f64>,
    /// The load-dependent friction joints (`load.rs`); their sensitivities are in the
    /// cache entries.
    load_joints: Vec<usize>,
    /// [`Network::kinetic_signs`] (read in place by the evaluation, which borrows it
    /// beside the force vector).
    pub(crate) kinetic_sign: Vec<f64>,
}

/// Why a factorization failed: the nodes without inertia in a free direction.
#[derive(Debug, Clone, PartialEq)]
pub struct Singular {
    pub nodes: Vec<usize>,
}

impl Network {
    pub fn new(
        node_names: Vec<String>,
        node_kinds: Vec<PortKind>,
        mass: Vec<f64>,
        rows: Vec<NodeRow>,
        friction_rows: Vec<NodeRow>,
    ) -> Self {
        let n = node_names.len();
        let nf = friction_rows.len();
        let nr = rows.len();
        Network {
            n,
            node_names,
            node_kinds,
            mass,
            rows,
            friction_rows,
            modes: vec![FrictionMode::Free; nf],
            active: Vec::new(),
            factor: None,
            f: vec![0.0; n],
            a: vec![0.0; n],
            b: Vec::with_capacity(nr + nf),
            out: Vec::with_capacity(n + nr + nf),
            cache: Vec::new(),
            cache_limit: FACTOR_CACHE,
            factorizations: 0,
            lambda_rows: vec![0.0; nr],
            lambda_fric: vec![0.0; nf],
            tmp: vec![0.0; n],
            load_joints: Vec::new(),
            kinetic_sign: vec![0.0; nf],
        }
    }

    /// Set the friction modes (then [`Network::refactor`] before the next solve).
    pub fn set_modes(&mut self, modes: &[FrictionMode]) {
        self.modes.copy_from_slice(modes);
        self.list_modes();
    }

    /// By friction joint: the sign of its slip if it is sliding and its torque is its
    /// kinetic law (load-dependent joints, whose torque comes after the solve, have 0),
    /// else 0. Modes change only at events, so an evaluation reads this instead of
    /// testing every joint's mode.
    pub fn kinetic_signs(&self) -> &[f64] {
        &self.kinetic_sign
    }

    /// Rebuild the kinetic signs from `modes`.
    pub(crate) fn list_modes(&mut self) {
        for (j, (k, m)) in self.kinetic_sign.iter_mut().zip(&self.modes).enumerate() {
            *k = if self.load_joints.contains(&j) {
                0.0
            } else {
                m.sliding_sign()
            };
        }
    }

    fn row(&self, i: usize) -> &NodeRow {
        if i < self.rows.len() {
            &self.rows[i]
        } else {
            &self.friction_rows[i - self.rows.len()]
        }
    }

    /// Recompute the factorization for the current modes (or take it from the cache of
    /// the modes seen before in this model: an ABS cycle locks and releases the same
    /// brakes again and again, and the factorization depends on the set of active rows
    /// only).
    pub fn refactor(&mut self) -> Result<(), Singular> {
        let n = self.n;
        self.list_modes();
        self.active.clear();
        for i in 0..self.rows.len() {
            self.active.push(i);
        }
        for (j, m) in self.modes.iter().enumerate() {
            if *m == FrictionMode::Locked {
                self.active.push(self.rows.len() + j);
            }
        }
        let m = self.active.len();
        if let Some(k) = self.cache.iter().position(|e| e.active == self.active) {
            self.factor = Some(k);
            self.size_scratch(m);
            return Ok(());
        }
        // Until the new factorization exists, none is valid: a solve after a failed
        // refactor must not combine the previous modes' factor with these rows.
        self.factor = None;
        self.size_scratch(m);
        let mut g = DMatrix::<f64>::zeros(m, n);
        let mut has_tracking = false;
        for (r, &i) in self.active.iter().enumerate() {
            let row = self.row(i);
            has_tracking |= row.tracking.is_some();
            for &(k, c) in &row.terms {
                g[(r, k)] += c;
            }
        }
        let mdiag =
            DMatrix::<f64>::from_diagonal(&nalgebra::DVector::from_column_slice(&self.mass));
        let s = reduced_inverse(&g, &mdiag)?;
        let p = if m > 0 {
            g.clone()
                .pseudo_inverse(1e-12)
                .map_err(|_| Singular { nodes: vec![] })?
        } else {
            DMatrix::zeros(n, 0)
        };
        let c = if has_tracking {
            (DMatrix::identity(n, n) - &s * &mdiag) * &p
        } else {
            DMatrix::zeros(n, m)
        };
        let proj = if has_tracking {
            // Project onto the velocity rows only.
            let vel: Vec<usize> = (0..m)
                .filter(|&r| self.row(self.active[r]).tracking.is_none())
                .collect();
            let mut gv = DMatrix::<f64>::zeros(vel.len(), n);
            for (rr, &r) in vel.iter().enumerate() {
                for k in 0..n {
                    gv[(rr, k)] = g[(r, k)];
                }
            }
            match reduced_inverse(&gv, &mdiag) {
                Ok(sv) => sv * &mdiag,
                Err(_) => DMatrix::identity(n, n),
            }
        } else {
            &s * &mdiag
        };
        self.size_scratch(m);
        // [S; Q] and [C; R] column by column (see `Factor`).
        let w = n + m;
        let q = p.transpose() * (&mdiag * &s - DMatrix::identity(n, n));
        let mut sq = vec![0.0; w * n];
        for j in 0..n {
            for i in 0..n {
                sq[j * w + i] = s[(i, j)];
            }
            for r in 0..m {
                sq[j * w + n + r] = q[(r, j)];
            }
        }
        let mut cr = Vec::new();
        if has_tracking {
            let rr = p.transpose() * &mdiag * &c;
            cr = vec![0.0; w * m];
            for j in 0..m {
                for i in 0..n {
                    cr[j * w + i] = c[(i, j)];
                }
                for r in 0..m {
                    cr[j * w + n + r] = rr[(r, j)];
                }
            }
        }
        let tracking = self
            .active
            .iter()
            .enumerate()
            .filter_map(|(r, &i)| self.row(i).tracking.map(|tc| (r, i, tc)))
            .collect();
        let factor = Factor {
            s: s.as_slice().to_vec(),
            p: p.as_slice().to_vec(),
            sq,
            cr,
            proj: proj.as_slice().to_vec(),
            has_tracking,
            tracking,
        };
        let load = self.load_sens(&factor);
        let entry = ModeFactor {
            active: self.active.clone(),
            factor,
            load,
        };
        let k = if self.cache.len() < self.cache_limit {
            self.cache.push(entry);
            self.cache.len() - 1
        } else {
            let last = self.cache.len() - 1;
            self.cache[last] = entry;
            last
        };
        self.factor = Some(k);
        self.factorizations += 1;
        Ok(())
    }

    /// The factorization of the current modes.
    #[inline]
    fn current(&self) -> Option<&ModeFactor> {
        self.factor.map(|k| &self.cache[k])
    }

    /// How many factorizations the network has computed: one per set of active rows met
    /// (while the cache holds them), however often the modes return to a set.
    pub fn factorizations(&self) -> usize {
        self.factorizations
    }

    /// Keep at most `limit` factorizations (at least one, the current modes'), forgetting
    /// the others: `1` refactors at every change of the set of active rows.
    pub fn set_factor_cache_limit(&mut self, limit: usize) {
        self.cache_limit = limit.clamp(1, FACTOR_CACHE);
        if self.cache.len() > self.cache_limit {
            let keep = self.factor.map(|k| self.cache.swap_remove(k));
            self.cache.clear();
            self.factor = keep.map(|e| {
                self.cache.push(e);
                0
            });
        }
    }

    /// Size the per-solve scratch for `m` active rows (zero tracking right-hand sides).
    fn size_scratch(&mut self, m: usize) {
        self.b.clear();
        self.b.resize(m, 0.0);
        self.out.clear();
        self.out.resize(self.n + m, 0.0);
    }

    /// Number of active constraint rows.
    pub fn n_active(&self) -> usize {
        self.active.len()
    }

    /// Set the tracking right-hand sides: `b_r = (target − row·v)/tc` for tracking rows.
    /// `targets[i]` is the target of fixed row `i` (ignored for velocity rows).
    pub fn set_tracking(&mut self, v: &[f64], targets: &[f64]) {
        let Some(k) = self.factor else {
            return;
        };
        for &(r, i, tc) in &self.cache[k].factor.tracking {
            if i < targets.len() {
                self.b[r] = (targets[i] - self.rows[i].dot(v)) / tc;
            }
        }
    }

    /// Solve for accelerations `a` and constraint forces from the forces in `self.f`.
    /// Requires a successful `refactor` for the current modes.
    pub fn solve(&mut self) {
        let n = self.n;
        let Some(k) = self.factor else {
            return;
        };
        let fac = &self.cache[k].factor;
        let m = self.active.len();
        let w = n + m;
        // [a; λ] = [S; Q] f (+ [C; R] b): one axpy per non-zero force (and tracking term).
        let out = &mut self.out[..w];
        set_columns(out, &fac.sq, &self.f[..n], true);
        if fac.has_tracking {
            add_columns(out, &fac.cr, &self.b[..m], true);
        }
        short::copy(&mut self.a[..n], &out[..n]);
        short::zero(&mut self.lambda_fric);
        let nr = self.rows.len();
        // The active rows' forces, straight from the solution: the fixed rows are the
        // first `nr` active rows, in order (`refactor`), the locked joints follow.
        let (fixed, locked) = out[n..].split_at(nr);
        for (l, &lam) in self.lambda_rows.iter_mut().zip(fixed) {
            *l = lam;
        }
        for (&i, &lam) in self.active[nr..].iter().zip(locked) {
            self.lambda_fric[i - nr] = lam;
        }
    }

    /// Project speeds onto the active velocity constraints in the mass metric.
    pub fn project(&mut self, v: &mut [f64]) {
        let n = self.n;
        let Some(k) = self.factor else {
            return;
        };
        let fac = &self.cache[k].factor;
        for i in 0..n {
            self.tmp[i] = 0.0;
        }
        for j in 0..n {
            let vj = v[j];
            if vj != 0.0 {
                let col = &fac.proj[j * n..(j + 1) * n];
                for i in 0..n {
                    self.tmp[i] += col[i] * vj;
                }
            }
        }
        v[..n].copy_from_slice(&self.tmp[..n]);
    }

    /// Kinetic energy `½ Σ M v²`.
    pub fn kinetic_energy(&self, v: &[f64]) -> f64 {
        self.mass.iter().zip(v).map(|(m, v)| 0.5 * m * v * v).sum()
    }
}

/// `S = N (NᵀMN)⁻¹ Nᵀ` with `N` a null-space basis of `g`.
/// A direction of the reduced mass matrix `NᵀMN` whose eigenvalue is at most this times
/// the largest node mass has no inertia. A massless node's direction comes out at the
/// round-off of the null-space basis squared (about 1e-32 of the largest mass), while a
/// real inertia ratio of up to about 1e18 (a 1e13 kg·m² flywheel beside a 2 kg·m² shaft, a
/// 1e-12 kg·m² "almost massless" shaft) stays above it.
const SINGULAR_REL: f64 = 1e-20;

fn reduced_inverse(g: &DMatrix<f64>, m: &DMatrix<f64>) -> Result<DMatrix<f64>, Singular> {
    let n = m.nrows();
    let basis = null_space(g, n);
    let k = basis.ncols();
    if k == 0 {
        return Ok(DMatrix::zeros(n, n));
    }
    let mr = basis.transpose() * m * &basis;
    let scale = m
        .diagonal()
        .iter()
        .cloned()
        .fold(0.0_f64, f64::max)
        .max(1e-300);
    // Positive definiteness check with a relative threshold.
    let eig = SymmetricEigen::new(mr.clone());
    let min_idx = (0..k)
        .min_by(|&a, &b| eig.eigenvalues[a].total_cmp(&eig.eigenvalues[b]))
        .unwrap_or(0);
    if eig.eigenvalues[min_idx] <= SINGULAR_REL * scale {
        let z = eig.eigenvectors.column(min_idx);
        let dir = &basis * z;
        let big = dir.amax();
        let nodes = (0..n).filter(|&i| dir[i].abs() > 0.1 * big).collect();
        return Err(Singular { nodes });
    }
    let inv = match mr.cholesky() {
        Some(ch) => ch.inverse(),
        None => {
            return Err(Singular {
                nodes: (0..n).filter(|&i| m[(i, i)] == 0.0).collect(),
            })
        }
    };
    Ok(&basis * inv * basis.transpose())
}

/// An orthonormal basis of the null space of `g` (m×n), as an n×k matrix.
fn null_space(g: &DMatrix<f64>, n: usize) -> DMatrix<f64> {
    if g.nrows() == 0 {
        return DMatrix::identity(n, n);
    }
    let gtg = g.transpose() * g;
    let eig = SymmetricEigen::new(gtg);
    let max = eig.eigenvalues.iter().cloned().fold(0.0_f64, f64::max);
    let tol = 1e-10 * max.max(1.0);
    let cols: Vec<usize> = (0..n)
        .filter(|&i| eig.eigenvalues[i].abs() <= tol)
        .collect();
    let mut basis = DMatrix::zeros(n, cols.len());
    for (c, &i) in cols.iter().enumerate() {
        basis.set_column(c, &eig.eigenvectors.column(i));
    }
    basis
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(mass: Vec<f64>, rows: Vec<NodeRow>) -> Network {
        let n = mass.len();
        Network::new(
            (0..n).map(|i| format!("n{i}")).collect(),
            vec![PortKind::Rot; n],
            mass,
            rows,
            vec![],
        )
    }

    #[test]
    fn solve_after_a_failed_refactor_never_uses_the_previous_modes_factor() {
        // A massless shaft held to a flywheel by a clutch: locked, the network is
        // regular; released, the shaft has no inertia and the refactor fails. A solve
        // after the failure must not read the locked modes' factor with the released
        // modes' row count (an index out of range), and must produce no accelerations.
        let mut nw = Network::new(
            vec!["flywheel".into(), "shaft".into()],
            vec![PortKind::Rot; 2],
            vec![1.0, 0.0],
            vec![],
            vec![NodeRow::new([(0, 1.0), (1, -1.0)], None)],
        );
        nw.modes[0] = FrictionMode::Locked;
        nw.refactor().unwrap();
        nw.f.copy_from_slice(&[2.0, 0.0]);
        nw.solve();
        assert_eq!(nw.a, vec![2.0, 2.0]);
        nw.modes[0] = FrictionMode::Free;
        let err = nw.refactor().unwrap_err();
        assert_eq!(err.nodes, vec![1], "the massless shaft is named");
        nw.solve();
        assert!(nw.factor.is_none());
        // Locked again (from the cache): the solve is the locked one.
        nw.modes[0] = FrictionMode::Locked;
        nw.refactor().unwrap();
        nw.solve();
        assert_eq!(nw.a, vec![2.0, 2.0]);
    }

    #[test]
    fn cached_factorization_solves_like_a_fresh_one() {
        // Two inertias and a clutch between them: free, locked, free, locked. The second
        // lock comes from the cache and must give the fresh factorization's solve bit for
        // bit (the locked pair accelerates as one inertia, T/(J0 + J1)).
        let mk = || {
            Network::new(
                vec!["a".into(), "b".into()],
                vec![PortKind::Rot; 2],
                vec![1.0, 3.0],
                vec![],
                vec![NodeRow::new([(0, 1.0), (1, -1.0)], None)],
            )
        };
        let solve = |nw: &mut Network| {
            nw.f.copy_from_slice(&[2.0, 0.0]);
            nw.solve();
            (nw.a.clone(), nw.lambda_fric.clone())
        };
        let mut fresh = mk();
        fresh.modes[0] = FrictionMode::Locked;
        fresh.refactor().unwrap();
        let want = solve(&mut fresh);
        assert!((want.0[0] - 0.5).abs() < 1e-15 && (want.0[1] - 0.5).abs() < 1e-15);
        let mut nw = mk();
        for mode in [FrictionMode::Free, FrictionMode::Locked, FrictionMode::Free] {
            nw.modes[0] = mode;
            nw.refactor().unwrap();
        }
        assert_eq!(solve(&mut nw).0, vec![2.0, 0.0]);
        nw.modes[0] = FrictionMode::Locked;
        nw.refactor().unwrap();
        assert_eq!(nw.cache.len(), 2);
        let got = solve(&mut nw);
        assert!(got
            .0
            .iter()
            .zip(&want.0)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        assert!(got
            .1
            .iter()
            .zip(&want.1)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    /// Three inertias (1, 2, 4 kg·m²) with the friction joints `joints` between them.
    fn three_inertias(joints: Vec<NodeRow>) -> Network {
        Network::new(
            vec!["a".into(), "b".into(), "c".into()],
            vec![PortKind::Rot; 3],
            vec![1.0, 2.0, 4.0],
            vec![],
            joints,
        )
    }

    #[test]
    fn the_kinetic_signs_follow_every_mode_change() {
        let mut nw = three_inertias(vec![
            NodeRow::new([(0, 1.0), (1, -1.0)], None),
            NodeRow::new([(1, 1.0), (2, -1.0)], None),
            NodeRow::new([(0, 1.0), (2, -1.0)], None),
        ]);
        use FrictionMode::{Free, Locked, SlidingBackward, SlidingForward};
        assert_eq!(nw.kinetic_signs(), [0.0; 3]);
        for modes in [
            [SlidingForward, Locked, SlidingBackward],
            [Locked, Free, Locked],
            [Free, SlidingBackward, SlidingForward],
        ] {
            nw.set_modes(&modes);
            let want: Vec<f64> = modes.iter().map(|m| m.sliding_sign()).collect();
            assert_eq!(nw.kinetic_signs(), want);
            assert_eq!(nw.modes, modes);
        }
        // A load-dependent joint's torque comes after the solve: no kinetic sign.
        nw.set_load_joints(&[2]);
        assert_eq!(nw.kinetic_signs(), [0.0, -1.0, 0.0]);
        nw.set_modes(&[SlidingBackward, Free, SlidingForward]);
        assert_eq!(nw.kinetic_signs(), [-1.0, 0.0, 0.0]);
    }

    #[test]
    fn a_full_factorization_cache_replaces_an_entry_and_solves_like_a_fresh_one() {
        // Three inertias, two clutches (0–1, 1–2): the sets {}, {0}, {1}, {0, 1} met in
        // turn with room for two. Every set beyond the second replaces the last entry, so
        // each new set is factorized, the kept first set is not, and every solve is the
        // fresh network's, bit for bit.
        let mk = || {
            three_inertias(vec![
                NodeRow::new([(0, 1.0), (1, -1.0)], None),
                NodeRow::new([(1, 1.0), (2, -1.0)], None),
            ])
        };
        use FrictionMode::{Free, Locked};
        let sets = [
            [Free, Free],
            [Locked, Free],
            [Free, Locked],
            [Locked, Locked],
        ];
        let solve = |nw: &mut Network, modes: [FrictionMode; 2]| {
            nw.set_modes(&modes);
            nw.refactor().unwrap();
            nw.f.copy_from_slice(&[3.0, 0.0, -1.0]);
            nw.solve();
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            (bits(&nw.a), bits(&nw.lambda_fric))
        };
        let mut nw = mk();
        nw.set_factor_cache_limit(2);
        let mut want = Vec::new();
        for (k, &modes) in sets.iter().enumerate() {
            want.push(solve(&mut mk(), modes));
            assert_eq!(solve(&mut nw, modes), want[k]);
            assert_eq!(nw.factorizations(), k + 1);
            assert!(nw.cache.len() <= 2);
        }
        // The first set is still kept; the fourth replaced the third.
        assert_eq!(solve(&mut nw, sets[0]), want[0]);
        assert_eq!(solve(&mut nw, sets[3]), want[3]);
        assert_eq!(nw.factorizations(), 4);
        assert_eq!(solve(&mut nw, sets[2]), want[2]);
        assert_eq!(nw.factorizations(), 5);
        // All locked, the three inertias turn as one: (3 − 1)/(1 + 2 + 4).
        let a = f64::from_bits(want[3].0[0]);
        assert!((a - 2.0 / 7.0).abs() < 1e-15, "{a}");
    }

    #[test]
    fn gear_pair_reflects_inertia() {
        // w0 = 2 w1; J0 = 1, J1 = 4; torque 1 on node 0.
        // Reduced: q = w1, w0 = 2q; J_eq = 1*4 + 4 = 8 on q; torque on q = 2*1 = 2 -> q' = 0.25.
        let mut nw = net(
            vec![1.0, 4.0],
            vec![NodeRow::new([(0, 1.0), (1, -2.0)], None)],
        );
        nw.refactor().unwrap();
        nw.f.copy_from_slice(&[1.0, 0.0]);
        nw.solve();
        assert!((nw.a[1] - 0.25).abs() < 1e-12);
        assert!((nw.a[0] - 0.5).abs() < 1e-12);
        // λ applies +λ on node 0 and −2λ on node 1: node 0: 1·0.5 = 1 + λ -> λ = −0.5.
        assert!((nw.lambda_rows[0] + 0.5).abs() < 1e-12);
    }

    #[test]
    fn massless_node_between_gears_is_fine_and_free_massless_node_is_singular() {
        let mut ok = net(
            vec![1.0, 0.0],
            vec![NodeRow::new([(0, 1.0), (1, -1.0)], None)],
        );
        assert!(ok.refactor().is_ok());
        let mut bad = net(vec![1.0, 0.0], vec![]);
        let err = bad.refactor().unwrap_err();
        assert_eq!(err.nodes, vec![1]);
    }

    #[test]
    fn redundant_consistent_rows_and_momentum_projection() {
        // Three nodes locked in a loop: 0=1, 1=2, 0=2 (redundant).
        let rows = vec![
            NodeRow::new([(0, 1.0), (1, -1.0)], None),
            NodeRow::new([(1, 1.0), (2, -1.0)], None),
            NodeRow::new([(0, 1.0), (2, -1.0)], None),
        ];
        let mut nw = net(vec![1.0, 2.0, 3.0], rows);
        nw.refactor().unwrap();
        let mut v = vec![6.0, 0.0, 0.0];
        nw.project(&mut v);
        for vi in &v {
            assert!((vi - 1.0).abs() < 1e-12, "{v:?}");
        }
        nw.f.copy_from_slice(&[6.0, 0.0, 0.0]);
        nw.solve();
        for ai in &nw.a {
            assert!((ai - 1.0).abs() < 1e-12);
        }
    }
}
