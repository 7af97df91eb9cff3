//! One-step Runge–Kutta kernels with dense output: DOPRI5, DOP853 and classic RK4.
//!
//! A [`Stepper`] owns every stage and scratch buffer (allocated once in [`Stepper::new`]),
//! so taking a step, building the dense output and interpolating never allocate.
//!
//! It implements the [`Kernel`] protocol (`kernel.rs`) with the PI step-size control of
//! `controller.rs` (Hairer's, as in DOPRI5) and these particulars:
//! * the error norm is Hairer's RMS norm, `sk = atol + rtol·max(|y0|, |y1|)`; RK4 has none
//!   and accepts every step of its fixed size;
//! * DOPRI5 has `f(t1, y1)` as its last stage (FSAL); DOP853 and RK4 evaluate it in
//!   [`Kernel::accepted`];
//! * the dense output is built lazily on first use by [`Kernel::ensure_dense`] (DOP853
//!   needs three extra stages for it, which are skipped on steps where nobody
//!   interpolates), for the output states alone where they are named
//!   ([`Stepper::set_output_states`]);
//! * DOPRI5 checks `y1` finite while it sums the error, and measures Hairer's stiffness
//!   indicator from its last two stages.

// The kernels index several parallel arrays (y0, y1, stages, coefficients) by component;
// explicit index loops read like the formulas.
#![allow(clippy::needless_range_loop)]

use crate::controller::PiController;

use crate::kernel::{hinit, rhs, Kernel, Tol, Verdict, Worst};
use crate::simd::AlignedBuf;
use crate::system::HybridSystem;
use crate::tableau::{dop853, dopri5};

/// Which kernel a [`Stepper`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Dopri5,
    Dop853,
    Rk4,
}

impl Kind {
    /// Number of stage vectors kept.
    fn stages(self) -> usize {
        match self {
            Kind::Dopri5 => dopri5::STAGES,
            Kind::Dop853 => dop853::STAGES,
            // k1..k4 plus f(t1, y1) for the Hermite dense output / next k1.
            Kind::Rk4 => 5,
        }
    }

    /// Number of dense-output coefficient vectors.
    fn dense_coeffs(self) -> usize {
        match self {
            Kind::Dopri5 => 5,
            Kind::Dop853 => 8,
            Kind::Rk4 => 4,
        }
    }

    /// Index of the stage holding `f(t1, y1)` after an accepted step.
    fn end_stage(self) -> usize {
        match self {
            Kind::Dopri5 => dopri5::STAGES - 1,
            Kind::Dop853 => dop853::END,
            Kind::Rk4 => 4,
        }
    }

    /// A fresh PI controller with Hairer's default parameters for the method.
    fn controller(self, h_max: f64) -> PiController {
        match self {
            // DOPRI5: beta = 0.04, alpha = 0.2 - 0.75 beta, step ratio in [0.2, 10].
            Kind::Dopri5 | Kind::Rk4 => PiController::new(0.17, 0.04, 10.0, 0.2, h_max, 0.9),
            // DOP853: beta = 0, alpha = 1/8, step ratio in [0.333, 6].
            Kind::Dop853 => PiController::new(0.125, 0.0, 6.0, 0.333, h_max, 0.9),
        }
    }

    /// Order used by the initial-step heuristic.
    fn order(self) -> i32 {
        match self {
            Kind::Dopri5 => 5,
            Kind::Dop853 => 8,
            Kind::Rk4 => 4,
        }
    }
}

/// Stage buffers, candidate state and dense output of one method.
#[derive(Clone)]
pub(crate) struct Stepper {
    kind: Kind,
    n: usize,
    rtol: f64,
    atol: f64,
    /// Stage derivatives, flat: stage `s` is `k[s*n..(s+1)*n]`; stage 0 is `f(t0, y0)`.
    k: AlignedBuf,
    /// Stage argument scratch (after a DOPRI5 step: the argument of stage 6, which the
    /// stiffness test reads).
    ytmp: AlignedBuf,
    /// The error vector of the last attempt.
    evec: AlignedBuf,
    /// Candidate (after acceptance: accepted) state at `t1`.
    y1: AlignedBuf,
    /// Dense-output coefficients, flat, `dense_coeffs()` vectors of length `n`.
    cont: AlignedBuf,
    t0: f64,
    t1: f64,
    h: f64,
    dense_ready: bool,
    /// The dense output of the output states (`out_idx`) is built (implied by
    /// `dense_ready`).
    out_ready: bool,
    /// The states the output grid's points read (empty: every state), see
    /// [`Stepper::set_output_states`].
    out_idx: Vec<usize>,
    /// Right-hand-side evaluations made by this stepper.
    pub(crate) rhs_evals: u64,
    /// The component that dominated the error norm of the last attempt.
    worst: Option<usize>,
    /// Whether the last attempt's `y1` was checked finite while its error was summed
    /// (DOPRI5: the check costs nothing there); `false` when unchecked.
    y1_finite: bool,
    /// The non-zero tableau entries, found once.
    rows: Rows,
    /// The PI step-size control (its history is forgotten at every start).
    controller: PiController,
    h_max: f64,
}

/// The non-zero entries of one tableau row (indices and coefficients in stage order).
#[derive(Debug, Clone, Copy)]
struct Row {
    idx: [usize; 16],
    coef: [f64; 16],
    m: usize,
}

impl Row {
    fn new(a: &[f64]) -> Row {
        let mut row = Row {
            idx: [0; 16],
            coef: [0.0; 16],
            m: 0,
        };
        for (j, &aj) in a.iter().enumerate() {
            if aj != 0.0 && row.m < 16 {
                row.idx[row.m] = j;
                row.coef[row.m] = aj;
                row.m += 1;
            }
        }
        row
    }

    fn idx(&self) -> &[usize] {
        &self.idx[..self.m]
    }

    fn coef(&self) -> &[f64] {
        &self.coef[..self.m]
    }
}

/// A kernel's tableau rows as [`Row`]s: stage `s`'s argument row `a[s]` (empty for RK4,
/// which forms its stages in place), and the rows of `y1` (DOP853's `b`), of the error
/// (DOPRI5's `e`) and of the dense output (DOPRI5's `d`) where the kernel has them.
#[derive(Debug, Clone)]
struct Rows {
    a: Vec<Row>,
    b: Row,
    e: Row,
    d: Row,
}

impl Rows {
    fn new(kind: Kind) -> Rows {
        let empty = Row::new(&[]);
        match kind {
            Kind::Dopri5 => Rows {
                a: (0..dopri5::STAGES)
                    .map(|s| Row::new(&dopri5::A[s][..s]))
                    .collect(),
                b: empty,
                e: Row::new(&dopri5::E),
                d: Row::new(&dopri5::D),
            },
            Kind::Dop853 => Rows {
                a: (0..dop853::STAGES)
                    .map(|s| Row::new(&dop853::A[s][..s]))
                    .collect(),
                b: Row::new(&dop853::B),
                e: empty,
                d: empty,
            },
            Kind::Rk4 => Rows {
                a: Vec::new(),
                b: empty,
                e: empty,
                d: empty,
            },
        }
    }
}

/// [`rhs`] at the end of a step ([`HybridSystem::derivatives_step_end`]).
fn rhs_end<S: HybridSystem>(sys: &mut S, evals: &mut u64, t: f64, y: &[f64], dy: &mut [f64]) {
    *evals += 1;
    sys.derivatives_step_end(t, y, dy);
}

impl Stepper {
    /// A kernel for `n` states with the user's tolerances and largest step `h_max`.
    pub(crate) fn new(kind: Kind, n: usize, (rtol, atol): (f64, f64), h_max: f64) -> Self {
        Stepper {
            kind,
            n,
            rtol,
            atol,
            k: AlignedBuf::zeros(kind.stages() * n),
            ytmp: AlignedBuf::zeros(n),
            evec: AlignedBuf::zeros(n),
            y1: AlignedBuf::zeros(n),
            cont: AlignedBuf::zeros(kind.dense_coeffs() * n),
            t0: 0.0,
            t1: 0.0,
            h: 0.0,
            dense_ready: false,
            out_ready: false,
            out_idx: Vec::new(),
            rhs_evals: 0,
            worst: None,
            y1_finite: false,
            rows: Rows::new(kind),
            controller: kind.controller(h_max),
            h_max,
        }
    }

    /// Stage argument `ytmp = y0 + h * sum_j a[j] * k[j]` over the non-zero entries of
    /// `row` (summed in stage order).
    fn combine(ytmp: &mut [f64], y0: &[f64], k: &[f64], n: usize, h: f64, row: &Row) {
        stage_terms(ytmp, y0, k, n, row.idx(), row.coef(), h);
    }

    /// Take the step from `(t0, y0)` to `t1` (`h = t1 - t0`): the candidate `y1` and the
    /// scaled error norm (Hairer's RMS norm, `sk = atol + rtol·max(|y0|, |y1|)`; `<= 1`
    /// acceptable; `0` for RK4, which has no estimate).
    fn trial<S: HybridSystem>(&mut self, sys: &mut S, t0: f64, t1: f64, y0: &[f64]) -> f64 {
        let n = self.n;
        let h = t1 - t0;
        self.t0 = t0;
        self.t1 = t1;
        self.h = h;
        self.forget_dense();
        match self.kind {
            Kind::Dopri5 => {
                for s in 1..dopri5::STAGES {
                    let ts = if dopri5::C[s] == 1.0 {
                        t1
                    } else {
                        t0 + dopri5::C[s] * h
                    };
                    let (done, rest) = self.k.split_at_mut(s * n);
                    let arg: &mut AlignedBuf = if s == dopri5::STAGES - 1 {
                        &mut self.y1
                    } else {
                        &mut self.ytmp
                    };
                    Self::combine(arg, y0, done, n, h, &self.rows.a[s]);
                    if s == dopri5::STAGES - 1 {
                        rhs_end(sys, &mut self.rhs_evals, ts, arg, &mut rest[..n]);
                    } else {
                        rhs(sys, &mut self.rhs_evals, ts, arg, &mut rest[..n]);
                    }
                }
                if n == 0 {
                    self.y1_finite = true;
                    return 0.0;
                }
                // The scaled sum of e = Σ E_s k_s (and y1's finiteness on the way).
                let (idx, coef) = (self.rows.e.idx(), self.rows.e.coef());
                let tol = (h, self.atol, self.rtol);
                let err = error_sum(&mut self.evec, &self.k, idx, coef, (y0, &self.y1), tol);
                self.y1_finite = err.is_finite();
                let norm = (err / n as f64).sqrt();
                // Only a rejected step's culprit is ever reported (step-size underflow, too
                // many steps), so the error vector is stored and searched only then.
                if norm.is_nan() || norm > 1.0 {
                    combine_terms(&mut self.evec, None, &self.k, n, idx, coef);
                    self.worst = worst_term(&self.evec, (y0, &self.y1), tol);
                }
                norm
            }
            Kind::Dop853 => {
                for s in 1..dop853::STEP_STAGES {
                    let ts = if s == dop853::STEP_STAGES - 1 {
                        t1
                    } else {
                        t0 + dop853::C[s] * h
                    };
                    let (done, rest) = self.k.split_at_mut(s * n);
                    Self::combine(&mut self.ytmp, y0, done, n, h, &self.rows.a[s]);
                    rhs(sys, &mut self.rhs_evals, ts, &self.ytmp, &mut rest[..n]);
                }
                Self::combine(&mut self.y1, y0, &self.k, n, h, &self.rows.b);
                if n == 0 {
                    return 0.0;
                }
                // Per component: (e5/sk)^2 and (e3/sk)^2.
                let terms = |i: usize| {
                    let k = |s: usize| self.k[s * n + i];
                    let mut bsum = 0.0;
                    let mut e5 = 0.0;
                    for s in 0..dop853::STEP_STAGES {
                        bsum += dop853::B[s] * k(s);
                        e5 += dop853::ER[s] * k(s);
                    }
                    let e3 = bsum
                        - dop853::BHH[0] * k(0)
                        - dop853::BHH[1] * k(8)
                        - dop853::BHH[2] * k(11);
                    let sk = self.atol + self.rtol * y0[i].abs().max(self.y1[i].abs());
                    // NaN for a non-finite y1 (which alone would only make sk infinite
                    // and the terms 0): such a step is never accepted.
                    #[allow(clippy::eq_op)]
                    let bad = self.y1[i] - self.y1[i];
                    ((e5 / sk).powi(2) + bad, (e3 / sk).powi(2) + bad)
                };
                let (mut err5, mut err3) = (0.0f64, 0.0f64);
                let mut worst = Worst::default();
                for i in 0..n {
                    let (a, b) = terms(i);
                    err5 += a;
                    err3 += b;
                    worst.see(i, a + 0.01 * b);
                }
                self.worst = worst.index();
                let mut deno = err5 + 0.01 * err3;
                if deno <= 0.0 {
                    deno = 1.0;
                }
                h.abs() * err5 * (1.0 / (n as f64 * deno)).sqrt()
            }
            Kind::Rk4 => {
                let tm = t0 + 0.5 * h;
                let (k0, rest) = self.k.split_at_mut(n);
                let (k1, rest) = rest.split_at_mut(n);
                let (k2, rest) = rest.split_at_mut(n);
                let k3 = &mut rest[..n];
                for i in 0..n {
                    self.ytmp[i] = y0[i] + 0.5 * h * k0[i];
                }
                rhs(sys, &mut self.rhs_evals, tm, &self.ytmp, k1);
                for i in 0..n {
                    self.ytmp[i] = y0[i] + 0.5 * h * k1[i];
                }
                rhs(sys, &mut self.rhs_evals, tm, &self.ytmp, k2);
                for i in 0..n {
                    self.ytmp[i] = y0[i] + h * k2[i];
                }
                rhs(sys, &mut self.rhs_evals, t1, &self.ytmp, k3);
                for i in 0..n {
                    self.y1[i] = y0[i] + h / 6.0 * (k0[i] + 2.0 * k1[i] + 2.0 * k2[i] + k3[i]);
                }
                0.0
            }
        }
    }

    /// Name the states the output grid's points read ([`HybridSystem::output_states`]):
    /// [`Kernel::ensure_dense_out`] and [`Kernel::dense_out`] then serve only those.
    pub(crate) fn set_output_states(&mut self, idx: Vec<usize>) {
        self.out_idx = idx;
        self.out_ready = false;
    }

    /// Whether the output states are served apart (DOPRI5 with output states named).
    fn has_output_states(&self) -> bool {
        self.kind == Kind::Dopri5 && !self.out_idx.is_empty()
    }

    fn forget_dense(&mut self) {
        self.dense_ready = false;
        self.out_ready = false;
    }

    /// [`Kernel::ensure_dense`] for the output states only (DOPRI5, with
    /// [`Stepper::has_output_states`]): the same coefficients, formed component by
    /// component in the same order of operations, so bit for bit the same.
    fn ensure_dense_outputs(&mut self, y0: &[f64]) {
        if self.dense_ready || self.out_ready {
            return;
        }
        debug_assert!(self.has_output_states());
        self.out_ready = true;
        let (n, h) = (self.n, self.h);
        let e = self.kind.end_stage();
        let (idx, coef) = (self.rows.d.idx(), self.rows.d.coef());
        for &i in &self.out_idx {
            let mut acc = 0.0;
            for (&j, &c) in idx.iter().zip(coef) {
                acc += c * self.k[j * n + i];
            }
            let ydiff = self.y1[i] - y0[i];
            let bspl = h * self.k[i] - ydiff;
            self.cont[i] = y0[i];
            self.cont[n + i] = ydiff;
            self.cont[2 * n + i] = bspl;
            self.cont[3 * n + i] = ydiff - h * self.k[e * n + i] - bspl;
            self.cont[4 * n + i] = acc * h;
        }
    }

    /// [`Kernel::dense`] of the output states only (after
    /// [`Stepper::ensure_dense_outputs`]): `out`'s other entries are left as they are.
    fn dense_outputs(&self, t: f64, out: &mut [f64]) {
        debug_assert!(self.out_ready || self.dense_ready);
        if t == self.t1 {
            for &i in &self.out_idx {
                out[i] = self.y1[i];
            }
            return;
        }
        let n = self.n;
        let th = (t - self.t0) / self.h;
        let th1 = 1.0 - th;
        let c = &self.cont;
        for &i in &self.out_idx {
            let (c0, c1, c2, c3, c4) = (c[i], c[n + i], c[2 * n + i], c[3 * n + i], c[4 * n + i]);
            out[i] = c0 + th * (c1 + th1 * (c2 + th * (c3 + th1 * c4)));
        }
    }
}

/// The explicit kernel: the method's stages with the PI step-size control.
impl Kernel for Stepper {
    fn start<S: HybridSystem>(&mut self, sys: &mut S, t: f64, y: &[f64]) {
        let n = self.n;
        rhs(sys, &mut self.rhs_evals, t, y, &mut self.k[..n]);
        self.forget_dense();
        self.controller = self.kind.controller(self.h_max);
    }

    fn start_with(&mut self, _y: &[f64], f0: &[f64]) {
        let n = self.n;
        self.k[..n].copy_from_slice(f0);
        self.forget_dense();
        self.controller = self.kind.controller(self.h_max);
    }

    fn f0(&self) -> &[f64] {
        &self.k[..self.n]
    }

    fn rhs_evals_mut(&mut self) -> &mut u64 {
        &mut self.rhs_evals
    }

    fn initial_step<S: HybridSystem>(&mut self, sys: &mut S, t: f64, y: &[f64], hmax: f64) -> f64 {
        let n = self.n;
        // The dense coefficient storage is scratch for f(t+h, ytmp): it is rebuilt before
        // any interpolation.
        self.forget_dense();
        let (f1, _) = self.cont.split_at_mut(n);
        let tol = Tol {
            rtol: self.rtol,
            atol: self.atol,
        };
        let (h, worst) = hinit(
            sys,
            &mut self.rhs_evals,
            (t, y, &self.k[..n]),
            (&mut self.ytmp, f1),
            tol,
            self.kind.order(),
            hmax,
        );
        self.worst = worst;
        h
    }

    /// The error norm of [`Stepper::trial`] judged by the PI controller (RK4: always
    /// accepted, its step fixed).
    fn attempt<S: HybridSystem>(&mut self, sys: &mut S, t0: f64, t1: f64, y0: &[f64]) -> Verdict {
        let h = t1 - t0;
        let err = self.trial(sys, t0, t1, y0);
        if self.kind == Kind::Rk4 {
            Verdict::Accept { h_next: h }
        } else if !err.is_finite() {
            // NaN/inf in the trial: shrink hard and retry.
            Verdict::Reject { h_next: 0.2 * h }
        } else {
            let mut h_new = h;
            if self.controller.accept(err, h, &mut h_new) {
                Verdict::Accept { h_next: h_new }
            } else {
                Verdict::Reject { h_next: h_new }
            }
        }
    }

    /// Finish an accepted step: make sure `f(t1, y1)` is available.
    fn accepted<S: HybridSystem>(&mut self, sys: &mut S) {
        let n = self.n;
        match self.kind {
            Kind::Dopri5 => {} // FSAL: stage 7 already is f(t1, y1).
            Kind::Dop853 | Kind::Rk4 => {
                let e = self.kind.end_stage();
                rhs_end(
                    sys,
                    &mut self.rhs_evals,
                    self.t1,
                    &self.y1,
                    &mut self.k[e * n..(e + 1) * n],
                );
            }
        }
    }

    /// Build the dense output of the last accepted step (idempotent; `y0` is the state at
    /// the step start).
    fn ensure_dense<S: HybridSystem>(&mut self, sys: &mut S, y0: &[f64]) {
        if self.dense_ready {
            return;
        }
        self.dense_ready = true;
        let n = self.n;
        let h = self.h;
        let e = self.kind.end_stage();
        match self.kind {
            Kind::Dopri5 => {
                let (idx, coef) = (self.rows.d.idx(), self.rows.d.coef());
                let (c0, rest) = self.cont.split_at_mut(n);
                let (c1, rest) = rest.split_at_mut(n);
                let (c2, rest) = rest.split_at_mut(n);
                let (c3, rest) = rest.split_at_mut(n);
                let c4 = &mut rest[..n];
                // c4 = h·Σ D_s k_s first (summed as before: from 0, in stage order).
                combine_terms(c4, None, &self.k, n, idx, coef);
                let (k0, ke) = (&self.k[..n], &self.k[e * n..e * n + n]);
                let (y0, y1) = (&y0[..n], &self.y1[..n]);
                for i in 0..n {
                    let ydiff = y1[i] - y0[i];
                    let bspl = h * k0[i] - ydiff;
                    c0[i] = y0[i];
                    c1[i] = ydiff;
                    c2[i] = bspl;
                    c3[i] = ydiff - h * ke[i] - bspl;
                    c4[i] *= h;
                }
            }
            Kind::Dop853 => {
                // Three extra stages (14..16 in Hairer's numbering).
                for s in dop853::END + 1..dop853::STAGES {
                    let ts = self.t0 + dop853::C[s] * h;
                    let (done, rest) = self.k.split_at_mut(s * n);
                    Self::combine(&mut self.ytmp, y0, done, n, h, &self.rows.a[s]);
                    rhs(sys, &mut self.rhs_evals, ts, &self.ytmp, &mut rest[..n]);
                }
                for i in 0..n {
                    let ydiff = self.y1[i] - y0[i];
                    let bspl = h * self.k[i] - ydiff;
                    self.cont[i] = y0[i];
                    self.cont[n + i] = ydiff;
                    self.cont[2 * n + i] = bspl;
                    self.cont[3 * n + i] = ydiff - h * self.k[e * n + i] - bspl;
                    for (r, drow) in dop853::D.iter().enumerate() {
                        let mut d = 0.0;
                        for (s, &ds) in drow.iter().enumerate() {
                            if ds != 0.0 {
                                d += ds * self.k[s * n + i];
                            }
                        }
                        self.cont[(4 + r) * n + i] = h * d;
                    }
                }
            }
            Kind::Rk4 => {
                for i in 0..n {
                    self.cont[i] = y0[i];
                    self.cont[n + i] = h * self.k[i];
                    self.cont[2 * n + i] = self.y1[i];
                    self.cont[3 * n + i] = h * self.k[e * n + i];
                }
            }
        }
    }

    /// The dense output at `t` inside the last accepted step (built by `ensure_dense`).
    /// The end point itself returns `y1` bit-exactly.
    fn dense(&self, t: f64, out: &mut [f64]) {
        debug_assert!(self.dense_ready);
        if t == self.t1 {
            out.copy_from_slice(&self.y1);
            return;
        }
        let n = self.n;
        let th = (t - self.t0) / self.h;
        let th1 = 1.0 - th;
        let c = &self.cont;
        match self.kind {
            Kind::Dopri5 => {
                let (c0, c1, c2, c3, c4) = (
                    &c[..n],
                    &c[n..2 * n],
                    &c[2 * n..3 * n],
                    &c[3 * n..4 * n],
                    &c[4 * n..5 * n],
                );
                dopri5_dense(&mut out[..n], [c0, c1, c2, c3, c4], th, th1);
            }
            Kind::Dop853 => {
                for (i, o) in out.iter_mut().enumerate() {
                    let conpar = c[4 * n + i]
                        + th * (c[5 * n + i] + th1 * (c[6 * n + i] + th * c[7 * n + i]));
                    *o = c[i]
                        + th * (c[n + i]
                            + th1 * (c[2 * n + i] + th * (c[3 * n + i] + th1 * conpar)));
                }
            }
            Kind::Rk4 => {
                // Cubic Hermite on (y0, h f0, y1, h f1).
                let th2 = th * th;
                let th3 = th2 * th;
                let h00 = 2.0 * th3 - 3.0 * th2 + 1.0;
                let h10 = th3 - 2.0 * th2 + th;
                let h01 = -2.0 * th3 + 3.0 * th2;
                let h11 = th3 - th2;
                for (i, o) in out.iter_mut().enumerate() {
                    *o = h00 * c[i] + h10 * c[n + i] + h01 * c[2 * n + i] + h11 * c[3 * n + i];
                }
            }
        }
    }

    /// The output states alone where they are named (DOPRI5).
    fn ensure_dense_out<S: HybridSystem>(&mut self, sys: &mut S, y0: &[f64]) {
        if self.has_output_states() {
            self.ensure_dense_outputs(y0);
        } else {
            self.ensure_dense(sys, y0);
        }
    }

    fn dense_out(&self, t: f64, out: &mut [f64]) {
        if self.has_output_states() {
            self.dense_outputs(t, out);
        } else {
            self.dense(t, out);
        }
    }

    fn y1(&self) -> &[f64] {
        &self.y1
    }

    fn y1_checked_finite(&self) -> bool {
        self.y1_finite
    }

    /// Move to the next step: `f(t1, y1)` becomes `f0`.
    fn advance<S: HybridSystem>(&mut self, _sys: &mut S) {
        let n = self.n;
        let e = self.kind.end_stage();
        let (k0, rest) = self.k.split_at_mut(n);
        k0.copy_from_slice(&rest[(e - 1) * n..e * n]);
        self.forget_dense();
    }

    fn worst(&self) -> Option<usize> {
        self.worst
    }

    /// Hairer's stiffness indicator of the last accepted DOPRI5 step (Solving ODEs II,
    /// §IV.2): `h·ρ` with `ρ = ‖f(y1) − f(ŷ6)‖ / ‖y1 − ŷ6‖` from the last two stages, which
    /// both sit at `t1`; `h·ρ` above 3.25 (the stability boundary) means the step size is
    /// limited by stability. `None` for the other kernels or when `y1 == ŷ6`. Valid until
    /// [`Kernel::advance`].
    fn stiffness(&self, _h_next: f64) -> Option<f64> {
        if self.kind != Kind::Dopri5 {
            return None;
        }
        let n = self.n;
        let (mut num, mut den) = (0.0f64, 0.0f64);
        for i in 0..n {
            num += (self.k[6 * n + i] - self.k[5 * n + i]).powi(2);
            den += (self.y1[i] - self.ytmp[i]).powi(2);
        }
        (den > 0.0).then(|| self.h.abs() * (num / den).sqrt())
    }

    /// The component with the largest term of the error of the last accepted DOPRI5 step
    /// (`y0`: the state at its start): the state whose error limits the step (`None` for
    /// the other kernels).
    fn accepted_culprit(&mut self, y0: &[f64]) -> Option<usize> {
        if self.kind != Kind::Dopri5 || self.n == 0 {
            return None;
        }
        let n = self.n;
        let (idx, coef) = (self.rows.e.idx(), self.rows.e.coef());
        combine_terms(&mut self.evec, None, &self.k, n, idx, coef);
        worst_term(&self.evec, (y0, &self.y1), (self.h, self.atol, self.rtol))
    }
}

crate::avx_dispatch!(
/// A stage argument `out = y0 + h·(Σ_j a[j]·k[idx[j]])`, as the published codes form it:
/// the increments are summed first and added to `y0` once. (Adding each `h·a_j·k_j` to
/// `y0` in turn rounds at the magnitude of `y` once per term; near an equilibrium that
/// noise, about `ε·|y|` per stage, is as large as the stage differences the error estimate
/// is made of: on the chain of 1,000 lags it cost 15 % more steps.)
fn stage_terms / stage_terms_avx / stage_terms_avx512 = stage_terms_body(
    out: &mut [f64],
    y0: &[f64],
    k: &[f64],
    n: usize,
    idx: &[usize],
    a: &[f64],
    h: f64,
));

#[inline(always)]
fn stage_terms_body(
    out: &mut [f64],
    y0: &[f64],
    k: &[f64],
    n: usize,
    idx: &[usize],
    a: &[f64],
    h: f64,
) {
    macro_rules! fixed {
        ($($s:literal)*) => {
            match idx.len() {
                $($s => return stage_fused::<$s>(out, y0, k, n, idx, a, h),)*
                _ => {}
            }
        };
    }
    fixed!(0 1 2 3 4 5 6 7 8 9 10 11 12);
    let out = &mut out[..n];
    out.fill(0.0);
    for (&j, &c) in idx.iter().zip(a) {
        for (o, &kv) in out.iter_mut().zip(&k[j * n..j * n + n]) {
            *o += c * kv;
        }
    }
    for (o, &y) in out.iter_mut().zip(&y0[..n]) {
        *o = y + h * *o;
    }
}

#[inline(always)]
fn stage_fused<const S: usize>(
    out: &mut [f64],
    y0: &[f64],
    k: &[f64],
    n: usize,
    idx: &[usize],
    a: &[f64],
    h: f64,
) {
    let ks: [&[f64]; S] = std::array::from_fn(|j| &k[idx[j] * n..idx[j] * n + n]);
    let c: [f64; S] = std::array::from_fn(|j| a[j]);
    let (out, y0) = (&mut out[..n], &y0[..n]);
    for i in 0..n {
        let mut acc = 0.0;
        for j in 0..S {
            acc += c[j] * ks[j][i];
        }
        out[i] = y0[i] + h * acc;
    }
}

crate::avx_dispatch!(
/// `out = base + Σ_j coef[j]·k[idx[j]]` (element-wise, `base` 0 when `None`, summed in the
/// order given, exactly as repeated axpy passes would). One pass over the components; the
/// number of terms is a compile-time constant in the common cases so the compiler unrolls
/// and vectorizes.
fn combine_terms / combine_terms_avx / combine_terms_avx512 = combine_terms_body(
    out: &mut [f64],
    base: Option<&[f64]>,
    k: &[f64],
    n: usize,
    idx: &[usize],
    coef: &[f64],
));

#[inline(always)]
fn combine_terms_body(
    out: &mut [f64],
    base: Option<&[f64]>,
    k: &[f64],
    n: usize,
    idx: &[usize],
    coef: &[f64],
) {
    macro_rules! fixed {
        ($($s:literal)*) => {
            match idx.len() {
                $($s => return fused::<$s>(out, base, k, n, idx, coef),)*
                _ => {}
            }
        };
    }
    fixed!(0 1 2 3 4 5 6 7 8 9 10 11 12);
    let out = &mut out[..n];
    match base {
        Some(b) => out.copy_from_slice(&b[..n]),
        None => out.fill(0.0),
    }
    for (&j, &c) in idx.iter().zip(coef) {
        for (o, &kv) in out.iter_mut().zip(&k[j * n..j * n + n]) {
            *o += c * kv;
        }
    }
}

#[inline(always)]
fn fused<const S: usize>(
    out: &mut [f64],
    base: Option<&[f64]>,
    k: &[f64],
    n: usize,
    idx: &[usize],
    coef: &[f64],
) {
    let ks: [&[f64]; S] = std::array::from_fn(|j| &k[idx[j] * n..idx[j] * n + n]);
    let c: [f64; S] = std::array::from_fn(|j| coef[j]);
    let out = &mut out[..n];
    match base {
        Some(b) => {
            let b = &b[..n];
            for i in 0..n {
                let mut acc = b[i];
                for j in 0..S {
                    acc += c[j] * ks[j][i];
                }
                out[i] = acc;
            }
        }
        None => {
            for i in 0..n {
                let mut acc = 0.0;
                for j in 0..S {
                    acc += c[j] * ks[j][i];
                }
                out[i] = acc;
            }
        }
    }
}

crate::avx_dispatch!(
/// DOPRI5's error sum `Σ_i (h·e_i/sk_i)²` with `e = Σ_j coef[j]·k[idx[j]]` formed
/// component by component exactly as [`combine_terms`] forms it; `sq` (length `n`)
/// receives the squared terms. A non-finite `y1_i` makes its term NaN (see
/// [`error_squares`]), so a finite sum also says that `y1` is finite.
fn error_sum / error_sum_avx / error_sum_avx512 = error_sum_body(
    sq: &mut [f64],
    k: &[f64],
    idx: &[usize],
    coef: &[f64],
    y: (&[f64], &[f64]),
    tol: (f64, f64, f64),
) -> f64);

#[inline(always)]
fn error_sum_body(
    sq: &mut [f64],
    k: &[f64],
    idx: &[usize],
    coef: &[f64],
    y: (&[f64], &[f64]),
    tol: (f64, f64, f64),
) -> f64 {
    match idx.len() {
        6 => error_squares::<6>(sq, k, idx, coef, y, tol),
        7 => error_squares::<7>(sq, k, idx, coef, y, tol),
        _ => {
            let n = sq.len();
            combine_terms_body(sq, None, k, n, idx, coef);
            let e = sq.to_vec();
            error_squares::<1>(sq, &e, &[0], &[1.0], y, tol);
        }
    }
    lane_sum(sq)
}

/// `sq[i] = (h·e_i/sk_i)² + (y1_i − y1_i)` for `S` terms (one pass the compiler
/// vectorizes). The second term is 0 for a finite `y1_i`, so it leaves the square as it
/// is, and NaN otherwise: an infinite `y1_i` alone would only make `sk_i` infinite and its
/// term 0.
#[inline(always)]
#[allow(clippy::eq_op)] // x − x is the test for finiteness
fn error_squares<const S: usize>(
    sq: &mut [f64],
    k: &[f64],
    idx: &[usize],
    coef: &[f64],
    (y0, y1): (&[f64], &[f64]),
    (h, atol, rtol): (f64, f64, f64),
) {
    let n = sq.len();
    let ks: [&[f64]; S] = std::array::from_fn(|j| &k[idx[j] * n..idx[j] * n + n]);
    let c: [f64; S] = std::array::from_fn(|j| coef[j]);
    let (y0, y1) = (&y0[..n], &y1[..n]);
    for i in 0..n {
        let mut e = 0.0;
        for j in 0..S {
            e += c[j] * ks[j][i];
        }
        // max(|y0|, |y1|) written as a comparison (vectorizes; equal to f64::max for
        // numbers, and a NaN state fails the run anyway).
        let (a, b) = (y0[i].abs(), y1[i].abs());
        let sk = atol + rtol * if a > b { a } else { b };
        let q = h * e / sk;
        sq[i] = q * q + (y1[i] - y1[i]);
    }
}

/// `Σ v` in four interleaved partial sums (entry `i` into sum `i mod 4`, the remainder
/// after them): vectorizes, and the order is fixed, so the result is the same on every
/// run and machine.
#[inline(always)]
fn lane_sum(v: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let chunks = v.chunks_exact(4);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..4 {
            acc[j] += c[j];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for &x in tail {
        s += x;
    }
    s
}

/// The component with the largest term of [`error_sum`] (the first non-finite one if any).
#[allow(clippy::eq_op)] // x − x is the test for finiteness
fn worst_term(
    e: &[f64],
    (y0, y1): (&[f64], &[f64]),
    (h, atol, rtol): (f64, f64, f64),
) -> Option<usize> {
    let mut worst = Worst::default();
    for i in 0..e.len() {
        let sk = atol + rtol * y0[i].abs().max(y1[i].abs());
        worst.see(i, (h * e[i] / sk).powi(2) + (y1[i] - y1[i]));
    }
    worst.index()
}

crate::avx_dispatch!(
/// DOPRI5's dense output, element-wise (see [`dopri5_dense_body`]).
fn dopri5_dense / dopri5_dense_avx / dopri5_dense_avx512 = dopri5_dense_body(
    out: &mut [f64], c: [&[f64]; 5], th: f64, th1: f64
));

/// DOPRI5's dense output `c0 + θ(c1 + (1−θ)(c2 + θ(c3 + (1−θ)c4)))`.
#[inline(always)]
fn dopri5_dense_body(out: &mut [f64], c: [&[f64]; 5], th: f64, th1: f64) {
    let n = out.len();
    let [c0, c1, c2, c3, c4] = c.map(|s| &s[..n]);
    for i in 0..n {
        out[i] = c0[i] + th * (c1[i] + th1 * (c2[i] + th * (c3[i] + th1 * c4[i])));
    }
}

#[cfg(test)]
mod tests {
    use super::{dop853, dopri5, Kind, Row, Rows};

    /// A [`Row`] holds at most 16 entries: every tableau row the kernels use keeps all its
    /// non-zero entries, in stage order, with their coefficients.
    #[test]
    fn tableau_rows_keep_every_non_zero_entry() {
        let check = |a: &[f64], row: &Row| {
            let want: Vec<(usize, f64)> = a
                .iter()
                .enumerate()
                .filter(|(_, &v)| v != 0.0)
                .map(|(j, &v)| (j, v))
                .collect();
            let got: Vec<(usize, f64)> = row
                .idx()
                .iter()
                .copied()
                .zip(row.coef().iter().copied())
                .collect();
            assert_eq!(got, want);
        };
        let r = Rows::new(Kind::Dopri5);
        for s in 0..dopri5::STAGES {
            check(&dopri5::A[s][..s], &r.a[s]);
        }
        check(&dopri5::E, &r.e);
        check(&dopri5::D, &r.d);
        let r = Rows::new(Kind::Dop853);
        for s in 0..dop853::STAGES {
            check(&dop853::A[s][..s], &r.a[s]);
        }
        check(&dop853::B, &r.b);
    }
}
