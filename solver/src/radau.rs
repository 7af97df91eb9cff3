//! Radau IIA of order 5 (three stages) after Hairer & Wanner's RADAU5 (Solving ODEs II,
//! §IV.8, and the published Fortran code): one step kernel with its own step-size control
//! and dense output, driven by the same hybrid loop as the explicit methods through the
//! [`Kernel`] protocol (`kernel.rs`).
//!
//! ## The step
//! The collocation equations `Z = h (A ⊗ I) F(Z)` for the stage increments `Z = (z1, z2,
//! z3)` are solved by simplified Newton iterations in the eigenbasis of `A⁻¹ = T Λ T⁻¹`
//! (`W = T⁻¹ Z`): one real system with `γ/h·I − J` and one complex system with
//! `(α + iβ)/h·I − J`, i.e. one real and one complex `n × n` LU per step size. `J` is a
//! finite-difference Jacobian at the step start ([`mod@crate::jacobian`]).
//! * Starting values: the previous step's collocation polynomial extrapolated (zero after
//!   a restart).
//! * Convergence: `θ` (contraction rate) from successive increments; an iteration that
//!   will not converge within `NIT` iterations stops early and shrinks the step.
//! * Jacobian reuse: after an accepted step the Jacobian is kept when Newton converged
//!   fast (`θ ≤ THET`), the LU too when the new step size is within `[1, 1.2]` of the old
//!   one (the step size is then kept). After a rejection the Jacobian is recomputed unless
//!   it is fresh (formed at this step's start).
//! * Error estimate: `(γ/h·I − J)⁻¹ (f0 + (d1 z1 + d2 z2 + d3 z3)/h)` (an embedded formula
//!   of order 3, filtered through the iteration matrix so it stays bounded on stiff
//!   components), re-filtered with one more evaluation on the first step and after a
//!   rejection. Tolerances are transformed as in RADAU5 (`rtol' = 0.1 rtol^(2/3)`,
//!   `atol' = rtol' · atol/rtol`), so `rtol` means what it means for the explicit methods.
//! * Step size: `h_new = h · fac · err^(−1/4)` with Gustafsson's predictive correction,
//!   ratio limited to `[0.2, 8]`.
//! * Dense output: the collocation polynomial (degree 3) through `y0` and the three stage
//!   values, exact at the step end.

// The kernels index several parallel arrays (stages, scales, state) by component;
// explicit index loops read like the formulas.
#![allow(clippy::needless_range_loop)]

use nalgebra::{Complex, DMatrix};

use crate::iteration::IterationMatrices;
use crate::jacobian::{FiniteDifferences, SparsityPattern};
use crate::kernel::{hinit, rhs, Kernel, Tol, Verdict, Worst};
use crate::system::HybridSystem;

/// Method coefficients (RADAU5's `RADCOR`), computed once.
#[derive(Debug, Clone, Copy)]
struct Coeffs {
    c1: f64,
    c2: f64,
    c1m1: f64,
    c2m1: f64,
    c1mc2: f64,
    dd1: f64,
    dd2: f64,
    dd3: f64,
    /// Real eigenvalue `γ` of `A⁻¹`.
    u1: f64,
    /// Complex eigenvalue pair `α ± iβ` of `A⁻¹`.
    alph: f64,
    beta: f64,
}

impl Coeffs {
    fn new() -> Self {
        let sq6 = 6.0f64.sqrt();
        let c1 = (4.0 - sq6) / 10.0;
        let c2 = (4.0 + sq6) / 10.0;
        let (c81, c9) = (81.0f64.cbrt(), 9.0f64.cbrt());
        let u1 = 30.0 / (6.0 + c81 - c9);
        let alph = (12.0 - c81 + c9) / 60.0;
        let beta = (c81 + c9) * 3.0f64.sqrt() / 60.0;
        let cno = alph * alph + beta * beta;
        Coeffs {
            c1,
            c2,
            c1m1: c1 - 1.0,
            c2m1: c2 - 1.0,
            c1mc2: c1 - c2,
            dd1: -(13.0 + 7.0 * sq6) / 3.0,
            dd2: (-13.0 + 7.0 * sq6) / 3.0,
            dd3: -1.0 / 3.0,
            u1,
            alph: alph / cno,
            beta: beta / cno,
        }
    }
}

/// The eigenvector matrix `T` of `A⁻¹` (with `T32 = 1`, `T33 = 0`) and its inverse, as
/// published with RADAU5.
#[allow(clippy::excessive_precision)]
const T: [[f64; 3]; 3] = [
    [
        9.1232394870892942792e-02,
        -0.14125529502095420843,
        -3.0029194105147424492e-02,
    ],
    [
        0.24171793270710701896,
        0.20412935229379993199,
        0.38294211275726193779,
    ],
    [0.96604818261509293619, 1.0, 0.0],
];
#[allow(clippy::excessive_precision)]
const TI: [[f64; 3]; 3] = [
    [
        4.3255798900631553510,
        0.33919925181580986954,
        0.54177053993587487119,
    ],
    [
        -4.1787185915519047273,
        -0.32768282076106238708,
        0.47662355450055045196,
    ],
    [
        -0.50287263494578687595,
        2.5719269498556054292,
        -0.59603920482822492497,
    ],
];

/// Newton iterations allowed per attempt (RADAU5's `NIT`).
const NIT: usize = 7;
/// Keep the Jacobian after a step if Newton contracted at least this fast (RADAU5's
/// `THET`): Hairer advises 0.001 when Jacobians are cheap and about 0.1 when they are
/// costly. A Jacobian costing at most one Newton iteration (three evaluations) counts as
/// cheap (see `docs/solver.md` for the measurements behind the choice).
const THET_CHEAP: f64 = 0.001;
const THET_COSTLY: f64 = 0.1;
/// Safety factor of the step-size control.
const SAFE: f64 = 0.9;
/// Step-size ratio limits: `h_new / h` in `[1/FACL, 1/FACR]` = `[0.2, 8]`.
const FACL: f64 = 5.0;
const FACR: f64 = 1.0 / 8.0;
/// Keep `h` (and the LU) if `h_new / h` falls in `[QUOT1, QUOT2]`.
const QUOT1: f64 = 1.0;
const QUOT2: f64 = 1.2;
/// Power iterations per spectral-radius estimate (Auto's switch-back test).
const POWER_ITERS: usize = 12;
/// Under Auto, a Jacobian older than this many accepted steps is refreshed, so the
/// spectral radius behind the switch-back test stays current (LSODA's `MSBJ` is 50 for its
/// BDF Jacobian, its `MSBP` 20).
const AUTO_JAC_AGE: u32 = 20;

/// Outcome of the Newton iteration of one attempt.
enum Newton {
    /// Converged after this many iterations.
    Converged(usize),
    /// Diverging or not converging within `NIT`: halve the step.
    Diverged,
    /// Converging too slowly: retry with the step scaled by this factor.
    Slow(f64),
}

/// The Radau IIA kernel: Jacobian, iteration matrices, stages, dense output and the
/// step-size controller state, allocated once.
#[derive(Clone)]
pub(crate) struct Radau {
    n: usize,
    co: Coeffs,
    /// Transformed tolerances (error and Newton norms).
    tol: Tol,
    /// The user's tolerances (initial step heuristic).
    user_tol: Tol,
    fnewt: f64,
    fd: FiniteDifferences,
    jac: DMatrix<f64>,
    /// Form a new Jacobian at the next attempt.
    need_jac: bool,
    /// The Jacobian was formed at the current step start.
    jac_fresh: bool,
    /// The real and complex iteration matrices, factored on the states some derivative
    /// reads (`iteration.rs`).
    e: IterationMatrices,
    /// Step size of the current factorisations (NaN: none valid).
    lu_h: f64,
    /// `f(t0, y0)` of the current step.
    f0: Vec<f64>,
    z: [Vec<f64>; 3],
    w: [Vec<f64>; 3],
    scal: Vec<f64>,
    tmp: Vec<f64>,
    ctmp: Vec<Complex<f64>>,
    y1: Vec<f64>,
    /// Dense output of the last accepted step: `y1 + s(c1 + (s − c2m1)(c2 + (s − c1m1)c3))`
    /// with `s = (t − t1)/h`; `cont[k*n..(k+1)*n]` is `c(k+1)`.
    cont: Vec<f64>,
    t1: f64,
    h: f64,
    /// Step size of the last accepted step (for the extrapolated starting values).
    h_old: f64,
    /// The last accepted step's polynomial may seed the next Newton iteration.
    have_cont: bool,
    /// The Jacobian-reuse threshold for this system (`THET_CHEAP` or `THET_COSTLY`).
    thet: f64,
    theta: f64,
    faccon: f64,
    /// First attempt after a (re)start.
    first: bool,
    /// The last attempt was rejected.
    reject: bool,
    /// Accepted steps since the last (re)start (Gustafsson's controller needs two).
    n_acc: u64,
    hacc: f64,
    erracc: f64,
    /// Estimate the spectral radius of every new Jacobian and refresh Jacobians older than
    /// `AUTO_JAC_AGE` steps (for `Method::Auto`).
    track_rho: bool,
    /// Accepted steps since the Jacobian was formed.
    jac_age: u32,
    rho: Option<f64>,
    pv: Vec<f64>,
    pw: Vec<f64>,
    worst: Option<usize>,
    pub(crate) rhs_evals: u64,
    pub(crate) jac_evals: u64,
    pub(crate) jac_rhs_evals: u64,
    pub(crate) lu_count: u64,
    pub(crate) newton_iters: u64,
}

impl Radau {
    /// A kernel for `n` states with the user's tolerances; `pattern` is the Jacobian's
    /// structure (dense if `None`).
    pub(crate) fn new(
        n: usize,
        rtol: f64,
        atol: f64,
        pattern: Option<SparsityPattern>,
        track_rho: bool,
    ) -> Self {
        let rtol_t = 0.1 * rtol.powf(2.0 / 3.0);
        let atol_t = rtol_t * (atol / rtol);
        let fnewt = (10.0 * f64::EPSILON / rtol_t).max(0.03f64.min(rtol_t.sqrt()));
        let pattern = pattern.unwrap_or_else(|| SparsityPattern::dense(n));
        let mut fd = FiniteDifferences::new(pattern);
        // atol / rtol: the magnitude below which a component's error control is absolute
        // (positive and finite: the settings were validated).
        fd.set_uniform_floor(atol / rtol);
        fd.screen_zero_columns();
        let vec = || vec![0.0; n];
        let thet = if fd.evaluations() <= 3 {
            THET_CHEAP
        } else {
            THET_COSTLY
        };
        Radau {
            n,
            co: Coeffs::new(),
            tol: Tol {
                rtol: rtol_t,
                atol: atol_t,
            },
            user_tol: Tol { rtol, atol },
            fnewt,
            fd,
            jac: DMatrix::zeros(n, n),
            need_jac: true,
            jac_fresh: false,
            e: IterationMatrices::new(n),
            lu_h: f64::NAN,
            f0: vec(),
            z: [vec(), vec(), vec()],
            w: [vec(), vec(), vec()],
            scal: vec(),
            tmp: vec(),
            ctmp: vec![Complex::new(0.0, 0.0); n],
            y1: vec(),
            cont: vec![0.0; 3 * n],
            t1: 0.0,
            h: 0.0,
            h_old: 0.0,
            have_cont: false,
            thet,
            theta: thet,
            faccon: 1.0,
            first: true,
            reject: false,
            n_acc: 0,
            hacc: 0.0,
            erracc: 0.0,
            track_rho,
            jac_age: 0,
            rho: None,
            pv: vec![1.0; n],
            pw: vec(),
            worst: None,
            rhs_evals: 0,
            jac_evals: 0,
            jac_rhs_evals: 0,
            lu_count: 0,
            newton_iters: 0,
        }
    }

    fn restart(&mut self, y: &[f64]) {
        self.need_jac = true;
        self.jac_fresh = false;
        self.lu_h = f64::NAN;
        self.have_cont = false;
        self.first = true;
        self.reject = false;
        self.n_acc = 0;
        self.theta = self.thet;
        self.faccon = 1.0;
        Self::update_scal(&mut self.scal, y, self.tol);
    }

    /// The error scales `atol + rtol·|y_i|` of a step from `y`.
    fn update_scal(scal: &mut [f64], y: &[f64], tol: Tol) {
        for (s, &yi) in scal.iter_mut().zip(y) {
            *s = tol.scale(yi);
        }
    }

    fn accept_empty(&mut self, t1: f64, h: f64) {
        self.t1 = t1;
        self.h = h;
        self.h_old = h;
        self.first = false;
        self.worst = None;
    }

    fn form_jacobian<S: HybridSystem>(&mut self, sys: &mut S, t0: f64, y0: &[f64]) {
        let evals = self.fd.form(
            |x, dx| sys.derivatives(t0, x, dx),
            y0,
            Some(&self.f0),
            &mut self.jac,
        ) as u64;
        self.rhs_evals += evals;
        self.jac_rhs_evals += evals;
        self.jac_evals += 1;
        self.jac_age = 0;
        self.need_jac = false;
        self.jac_fresh = true;
        self.e.partition(&self.jac);
        self.lu_h = f64::NAN;
        if self.track_rho {
            self.rho = Some(self.power_iteration());
        }
    }

    /// `|λ_max(J)|` by power iteration (geometric mean of the growth over
    /// [`POWER_ITERS`] products, warm-started from the last estimate's vector, so a
    /// dominant complex pair is measured too).
    fn power_iteration(&mut self) -> f64 {
        let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        let nv = norm(&self.pv);
        if !(nv > 0.0 && nv.is_finite()) {
            self.pv.iter_mut().for_each(|x| *x = 1.0);
        }
        let nv = norm(&self.pv);
        self.pv.iter_mut().for_each(|x| *x /= nv);
        let mut log_growth = 0.0;
        for _ in 0..POWER_ITERS {
            // Every product, zeros included: a NaN or ∞ in the Jacobian must reach the norm.
            crate::simd::set_columns(&mut self.pw, self.jac.as_slice(), &self.pv, false);
            let nw = norm(&self.pw);
            if !(nw > 0.0 && nw.is_finite()) {
                self.pv.iter_mut().for_each(|x| *x = 1.0);
                return if nw == 0.0 { 0.0 } else { f64::INFINITY };
            }
            log_growth += nw.ln();
            for i in 0..self.n {
                self.pv[i] = self.pw[i] / nw;
            }
        }
        (log_growth / POWER_ITERS as f64).exp()
    }

    /// Factor `γ/h·I − J` and `(α + iβ)/h·I − J`. `false` if either is singular.
    fn factor(&mut self, h: f64) -> bool {
        let fac1 = self.co.u1 / h;
        let fac2 = Complex::new(self.co.alph / h, self.co.beta / h);
        self.lu_count += 1;
        let ok = self.e.factor(&self.jac, fac1, fac2);
        self.lu_h = if ok { h } else { f64::NAN };
        ok
    }

    /// A rejection that is not an error-test failure: scale the step by `factor`, and
    /// refresh the Jacobian unless it was formed at this step's start.
    fn fail(&mut self, h: f64, factor: f64) -> Verdict {
        self.reject = true;
        if !self.jac_fresh {
            self.need_jac = true;
        }
        Verdict::Reject { h_next: h * factor }
    }

    /// Newton starting values: the last accepted step's collocation polynomial
    /// extrapolated to the new stages, or zero after a restart.
    fn starting_values(&mut self, h: f64) {
        let n = self.n;
        let co = self.co;
        if self.first || !self.have_cont {
            for k in 0..3 {
                self.z[k].iter_mut().for_each(|v| *v = 0.0);
                self.w[k].iter_mut().for_each(|v| *v = 0.0);
            }
            return;
        }
        let c3q = h / self.h_old;
        let c1q = co.c1 * c3q;
        let c2q = co.c2 * c3q;
        for i in 0..n {
            let ak1 = self.cont[i];
            let ak2 = self.cont[n + i];
            let ak3 = self.cont[2 * n + i];
            let z1 = c1q * (ak1 + (c1q - co.c2m1) * (ak2 + (c1q - co.c1m1) * ak3));
            let z2 = c2q * (ak1 + (c2q - co.c2m1) * (ak2 + (c2q - co.c1m1) * ak3));
            let z3 = c3q * (ak1 + (c3q - co.c2m1) * (ak2 + (c3q - co.c1m1) * ak3));
            self.z[0][i] = z1;
            self.z[1][i] = z2;
            self.z[2][i] = z3;
            for k in 0..3 {
                self.w[k][i] = TI[k][0] * z1 + TI[k][1] * z2 + TI[k][2] * z3;
            }
        }
    }

    /// The simplified Newton iteration for the stage increments (RADAU5's loop 40).
    fn newton<S: HybridSystem>(&mut self, sys: &mut S, t0: f64, t1: f64, y0: &[f64]) -> Newton {
        let n = self.n;
        let h = t1 - t0;
        let co = self.co;
        let fac1 = co.u1 / h;
        let (alphn, betan) = (co.alph / h, co.beta / h);
        self.faccon = self.faccon.max(f64::EPSILON).powf(0.8);
        self.theta = self.thet;
        let (mut dynold, mut thqold) = (0.0f64, 0.0f64);
        let mut newt = 0;
        loop {
            if newt >= NIT {
                return Newton::Diverged;
            }
            // Stage derivatives, written over the stage increments they were computed from.
            let cs = [co.c1, co.c2, 1.0];
            for k in 0..3 {
                for i in 0..n {
                    self.tmp[i] = y0[i] + self.z[k][i];
                }
                let tk = if k == 2 { t1 } else { t0 + cs[k] * h };
                rhs(sys, &mut self.rhs_evals, tk, &self.tmp, &mut self.z[k]);
            }
            // Right-hand sides in the eigenbasis, then the two linear solves.
            for i in 0..n {
                let (a1, a2, a3) = (self.z[0][i], self.z[1][i], self.z[2][i]);
                let r1 = TI[0][0] * a1 + TI[0][1] * a2 + TI[0][2] * a3;
                let r2 = TI[1][0] * a1 + TI[1][1] * a2 + TI[1][2] * a3;
                let r3 = TI[2][0] * a1 + TI[2][1] * a2 + TI[2][2] * a3;
                let (s2, s3) = (-self.w[1][i], -self.w[2][i]);
                self.z[0][i] = r1 - self.w[0][i] * fac1;
                self.ctmp[i] =
                    Complex::new(r2 + s2 * alphn - s3 * betan, r3 + s3 * alphn + s2 * betan);
            }
            self.e.solve_real(&mut self.z[0]);
            self.e.solve_complex(&mut self.ctmp);
            for i in 0..n {
                self.z[1][i] = self.ctmp[i].re;
                self.z[2][i] = self.ctmp[i].im;
            }
            newt += 1;
            self.newton_iters += 1;
            let mut dyno = 0.0;
            let mut worst = Worst::default();
            for i in 0..n {
                let s = self.scal[i];
                let d = (self.z[0][i] / s).powi(2)
                    + (self.z[1][i] / s).powi(2)
                    + (self.z[2][i] / s).powi(2);
                dyno += d;
                worst.see(i, d);
            }
            self.worst = worst.index();
            let dyno = (dyno / (3 * n) as f64).sqrt();
            if !dyno.is_finite() {
                return Newton::Diverged;
            }
            if newt > 1 && newt < NIT {
                let thq = dyno / dynold;
                self.theta = if newt == 2 {
                    thq
                } else {
                    (thq * thqold).sqrt()
                };
                thqold = thq;
                if self.theta < 0.99 {
                    self.faccon = self.theta / (1.0 - self.theta);
                    let left = (NIT - 1 - newt) as i32;
                    let dyth = self.faccon * dyno * self.theta.powi(left) / self.fnewt;
                    if dyth >= 1.0 {
                        let qnewt = dyth.clamp(1e-4, 20.0);
                        return Newton::Slow(0.8 * qnewt.powf(-1.0 / (4.0 + f64::from(left))));
                    }
                } else {
                    return Newton::Diverged;
                }
            }
            dynold = dyno.max(f64::EPSILON);
            for i in 0..n {
                let w1 = self.w[0][i] + self.z[0][i];
                let w2 = self.w[1][i] + self.z[1][i];
                let w3 = self.w[2][i] + self.z[2][i];
                self.w[0][i] = w1;
                self.w[1][i] = w2;
                self.w[2][i] = w3;
                self.z[0][i] = T[0][0] * w1 + T[0][1] * w2 + T[0][2] * w3;
                self.z[1][i] = T[1][0] * w1 + T[1][1] * w2 + T[1][2] * w3;
                self.z[2][i] = T[2][0] * w1 + w2;
            }
            if self.faccon * dyno <= self.fnewt {
                return Newton::Converged(newt);
            }
        }
    }

    /// RADAU5's `ESTRAD`: the scaled error norm of the converged step (at least 1e-10).
    fn error_estimate<S: HybridSystem>(&mut self, sys: &mut S, t0: f64, y0: &[f64], h: f64) -> f64 {
        let n = self.n;
        let co = self.co;
        let (hee1, hee2, hee3) = (co.dd1 / h, co.dd2 / h, co.dd3 / h);
        // w[1] holds F2 = (d1 z1 + d2 z2 + d3 z3)/h (W is no longer needed).
        for i in 0..n {
            let f2 = hee1 * self.z[0][i] + hee2 * self.z[1][i] + hee3 * self.z[2][i];
            self.w[1][i] = f2;
            self.tmp[i] = f2 + self.f0[i];
        }
        self.e.solve_real(&mut self.tmp);
        let mut err = self.scaled_norm();
        if err >= 1.0 && (self.first || self.reject) {
            for i in 0..n {
                self.w[2][i] = y0[i] + self.tmp[i];
            }
            let [w0, _, w2] = &mut self.w;
            rhs(sys, &mut self.rhs_evals, t0, w2, w0);
            for i in 0..n {
                self.tmp[i] = self.w[0][i] + self.w[1][i];
            }
            self.e.solve_real(&mut self.tmp);
            err = self.scaled_norm();
        }
        err
    }

    /// RMS of `tmp / scal`, at least 1e-10; records the dominant component.
    fn scaled_norm(&mut self) -> f64 {
        let mut sum = 0.0;
        let mut worst = Worst::default();
        for i in 0..self.n {
            let e = (self.tmp[i] / self.scal[i]).powi(2);
            sum += e;
            worst.see(i, e);
        }
        self.worst = worst.index();
        (sum / self.n as f64).sqrt().max(1e-10)
    }

    /// Accept or reject on `err` and propose the next step size (RADAU5's step-size
    /// control with Gustafsson's predictive correction).
    fn control(&mut self, t1: f64, h: f64, err: f64, newt: usize, y0: &[f64]) -> Verdict {
        let cfac = SAFE * (1 + 2 * NIT) as f64;
        let fac = SAFE.min(cfac / (newt + 2 * NIT) as f64);
        let mut quot = FACR.max(FACL.min(err.powf(0.25) / fac));
        let mut hnew = h / quot;
        if err.is_nan() || err >= 1.0 {
            let first = self.first;
            self.reject = true;
            // An error-test failure says the step was too long, not that the Jacobian is
            // poor: keep it if Newton converged fast (RADAU5 always refreshes it here).
            if !self.jac_fresh && self.theta > self.thet {
                self.need_jac = true;
            }
            let h_next = if first || !hnew.is_finite() {
                0.1 * h
            } else {
                hnew
            };
            return Verdict::Reject { h_next };
        }
        self.first = false;
        self.n_acc += 1;
        if self.n_acc > 1 {
            let facgus = (self.hacc / h) * (err * err / self.erracc).powf(0.25) / SAFE;
            quot = quot.max(FACR.max(FACL.min(facgus)));
            hnew = h / quot;
        }
        self.hacc = h;
        self.erracc = err.max(1e-2);
        self.accept_step(t1, h, y0);
        // Keep the Jacobian only if Newton converged fast (and, under Auto, while it is
        // young enough for the spectral radius to be current).
        self.jac_age += 1;
        if self.theta > self.thet || (self.track_rho && self.jac_age >= AUTO_JAC_AGE) {
            self.need_jac = true;
        }
        self.jac_fresh = false;
        if self.reject {
            hnew = hnew.min(h);
        }
        self.reject = false;
        let qt = hnew / h;
        if self.theta <= self.thet && (QUOT1..=QUOT2).contains(&qt) {
            // Same step size: the factorisations stay valid.
            hnew = h;
        }
        Verdict::Accept { h_next: hnew }
    }

    /// The new state and the dense-output coefficients of an accepted step.
    fn accept_step(&mut self, t1: f64, h: f64, y0: &[f64]) {
        let n = self.n;
        let co = self.co;
        for i in 0..n {
            self.y1[i] = y0[i] + self.z[2][i];
            let (z1, z2, z3) = (self.z[0][i], self.z[1][i], self.z[2][i]);
            let c1 = (z2 - z3) / co.c2m1;
            let ak = (z1 - z2) / co.c1mc2;
            let acont3 = (ak - z1 / co.c1) / co.c2;
            let c2 = (ak - c1) / co.c1m1;
            self.cont[i] = c1;
            self.cont[n + i] = c2;
            self.cont[2 * n + i] = c2 - acont3;
        }
        self.t1 = t1;
        self.h = h;
        self.h_old = h;
        self.have_cont = true;
    }
}

/// The implicit kernel: RADAU5's step with its own step-size control.
impl Kernel for Radau {
    /// (Re)start at `(t, y)`: evaluate `f0`; the Jacobian, factorisations, starting values
    /// and controller history are discarded (the modes may have changed).
    fn start<S: HybridSystem>(&mut self, sys: &mut S, t: f64, y: &[f64]) {
        rhs(sys, &mut self.rhs_evals, t, y, &mut self.f0);
        self.restart(y);
    }

    fn start_with(&mut self, y: &[f64], f0: &[f64]) {
        self.f0.copy_from_slice(f0);
        self.restart(y);
    }

    fn f0(&self) -> &[f64] {
        &self.f0
    }

    fn rhs_evals_mut(&mut self) -> &mut u64 {
        &mut self.rhs_evals
    }

    /// Hairer's `HINIT` for a 5th-order method with the user's tolerances.
    fn initial_step<S: HybridSystem>(&mut self, sys: &mut S, t: f64, y: &[f64], hmax: f64) -> f64 {
        // `y1` is scratch here: after a restart no dense output refers to it.
        let (h, worst) = hinit(
            sys,
            &mut self.rhs_evals,
            (t, y, &self.f0),
            (&mut self.tmp, &mut self.y1),
            self.user_tol,
            5,
            hmax,
        );
        self.worst = worst;
        h
    }

    /// Attempt a step from `(t0, y0)` to `t1`; on acceptance `y1` and the dense output
    /// hold the new step.
    fn attempt<S: HybridSystem>(&mut self, sys: &mut S, t0: f64, t1: f64, y0: &[f64]) -> Verdict {
        let h = t1 - t0;
        if self.n == 0 {
            self.accept_empty(t1, h);
            return Verdict::Accept { h_next: h / FACR };
        }
        if self.need_jac {
            self.form_jacobian(sys, t0, y0);
        }
        // The factorisations stay valid for the same step size (a step recomputed as
        // `(t + h) − t` may differ from `h` in the last bits).
        let same_h = (h - self.lu_h).abs() <= 1e-12 * h.abs();
        if !same_h && !self.factor(h) {
            // Singular iteration matrix: halve the step (RADAU5 gives up after 5 in a
            // row; here the step-size underflow check ends it).
            return self.fail(h, 0.5);
        }
        self.starting_values(h);
        let newt = match self.newton(sys, t0, t1, y0) {
            Newton::Converged(k) => k,
            Newton::Diverged => return self.fail(h, 0.5),
            Newton::Slow(f) => return self.fail(h, f),
        };
        let err = self.error_estimate(sys, t0, y0, h);
        self.control(t1, h, err, newt, y0)
    }

    fn dense(&self, t: f64, out: &mut [f64]) {
        if t == self.t1 {
            out.copy_from_slice(&self.y1);
            return;
        }
        let n = self.n;
        let co = self.co;
        let s = (t - self.t1) / self.h;
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.y1[i]
                + s * (self.cont[i]
                    + (s - co.c2m1) * (self.cont[n + i] + (s - co.c1m1) * self.cont[2 * n + i]));
        }
    }

    fn y1(&self) -> &[f64] {
        &self.y1
    }

    /// Move to the next step: `f0 = f(t1, y1)` and new error scales.
    fn advance<S: HybridSystem>(&mut self, sys: &mut S) {
        rhs(sys, &mut self.rhs_evals, self.t1, &self.y1, &mut self.f0);
        Self::update_scal(&mut self.scal, &self.y1, self.tol);
    }

    fn worst(&self) -> Option<usize> {
        self.worst
    }

    /// `h_next·ρ` with `ρ` the power-iteration estimate of the last Jacobian's spectral
    /// radius (only with `track_rho`): whether DOPRI5 would be stable at the step size
    /// accuracy allows.
    fn stiffness(&self, h_next: f64) -> Option<f64> {
        self.rho.map(|rho| h_next * rho)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Radau IIA (s = 3) coefficient matrix.
    fn a_matrix() -> [[f64; 3]; 3] {
        let s6 = 6.0f64.sqrt();
        [
            [
                (88.0 - 7.0 * s6) / 360.0,
                (296.0 - 169.0 * s6) / 1800.0,
                (-2.0 + 3.0 * s6) / 225.0,
            ],
            [
                (296.0 + 169.0 * s6) / 1800.0,
                (88.0 + 7.0 * s6) / 360.0,
                (-2.0 - 3.0 * s6) / 225.0,
            ],
            [(16.0 - s6) / 36.0, (16.0 + s6) / 36.0, 1.0 / 9.0],
        ]
    }

    fn mul(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
        let mut c = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                for k in 0..3 {
                    c[i][j] += a[i][k] * b[k][j];
                }
            }
        }
        c
    }

    #[test]
    fn transformation_diagonalises_a_inverse() {
        // T⁻¹ = TI, and TI A⁻¹ T = [[γ, 0, 0], [0, α, −β], [0, β, α]]: equivalently
        // A T Λ = T.
        let co = Coeffs::new();
        let ti_t = mul(&TI, &T);
        for i in 0..3 {
            for j in 0..3 {
                let e = if i == j { 1.0 } else { 0.0 };
                assert!(
                    (ti_t[i][j] - e).abs() < 1e-15,
                    "TI T [{i}][{j}] = {}",
                    ti_t[i][j]
                );
            }
        }
        let lam = [
            [co.u1, 0.0, 0.0],
            [0.0, co.alph, -co.beta],
            [0.0, co.beta, co.alph],
        ];
        let atl = mul(&a_matrix(), &mul(&T, &lam));
        for i in 0..3 {
            for j in 0..3 {
                assert!(
                    (atl[i][j] - T[i][j]).abs() < 1e-14,
                    "[{i}][{j}]: {} vs {}",
                    atl[i][j],
                    T[i][j]
                );
            }
        }
        // Row sums of A are the nodes c.
        let a = a_matrix();
        for (i, c) in [co.c1, co.c2, 1.0].iter().enumerate() {
            assert!((a[i].iter().sum::<f64>() - c).abs() < 1e-15);
        }
    }
}
