//! The step-kernel protocol: what a one-step method (the explicit Runge–Kutta
//! [`Stepper`](crate::stepper::Stepper), the implicit [`Radau`](crate::radau::Radau))
//! offers the engine that drives it, written once as the [`Kernel`] trait, and the pieces
//! both kernels share (the counted right-hand side, Hairer's initial step, the tolerance
//! pair, the dominant-component tracker).
//!
//! ## The protocol
//! For one step from `(t0, y0)` to `t1 = t0 + h` the hybrid loop (`integrator.rs`, through
//! `engine.rs`) calls, in this order:
//! 1. [`Kernel::start`] after every (re)start (or [`Kernel::start_with`] when `f0` is
//!    known, or [`Kernel::resume`] after a time event that may have changed nothing):
//!    `f0 = f(t0, y0)` is evaluated and the step-size history is forgotten.
//! 2. [`Kernel::initial_step`] when the step size is (re)initialised: only right after a
//!    start, as it reads `f0`.
//! 3. [`Kernel::attempt`] until it returns [`Verdict::Accept`], from the `(t0, y0)` of the
//!    last start or [`Kernel::advance`] (after a rejection with the shorter step it
//!    proposed, or a shorter one). An acceptance leaves the new state in [`Kernel::y1`];
//!    every attempt leaves its culprit in [`Kernel::worst`].
//! 4. [`Kernel::accepted`] once after the acceptance: `f(t1, y1)` is made available
//!    (FSAL kernels have it already). Then the step's dense output is valid: any number of
//!    [`Kernel::ensure_dense`] (idempotent) followed by [`Kernel::dense`] calls at `t` in
//!    `[t0, t1]`; [`Kernel::stiffness`] and [`Kernel::accepted_culprit`] read the step.
//! 5. [`Kernel::advance`] when the step is taken as a whole (not cut by a state event,
//!    which restarts at 1. instead): `f(t1, y1)` becomes the next step's `f0`. The step's
//!    dense output is not read after this.
//!
//! Between two starts the calls concern one trajectory: a kernel may keep what it derived
//! from the states it was handed (error scales, Jacobian, step-size history) until the
//! next start.

use crate::system::HybridSystem;

/// What an attempt decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Verdict {
    /// Accepted; `h_next` is the proposed next step.
    Accept { h_next: f64 },
    /// Rejected; retry from the same point with `h_next`.
    Reject { h_next: f64 },
}

/// A one-step method with its own step-size control and dense output (see the module
/// documentation for the order of the calls).
pub(crate) trait Kernel {
    /// (Re)start at `(t, y)`: evaluate `f0`; the step-size history (and whatever else was
    /// derived from the old trajectory) is forgotten.
    fn start<S: HybridSystem>(&mut self, sys: &mut S, t: f64, y: &[f64]);

    /// [`Kernel::start`] with `f0 = f(t, y)` already known (no evaluation).
    fn start_with(&mut self, y: &[f64], f0: &[f64]);

    /// `f(t0, y0)` of the current step (after a start or [`Kernel::advance`]).
    fn f0(&self) -> &[f64];

    /// The counter of right-hand-side evaluations made for this kernel.
    fn rhs_evals_mut(&mut self) -> &mut u64;

    /// After a time event at `(t, y)` that left the state as it was: evaluate the
    /// derivatives into `scratch` (one evaluation, length `n`). If they are `f0`, bit for
    /// bit, nothing the integration depends on changed: the kernel keeps its state
    /// (step-size history, Jacobian, factorisations) and this returns `true`. Otherwise it
    /// restarts as [`Kernel::start_with`] these derivatives and returns `false`.
    fn resume<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        scratch: &mut [f64],
    ) -> bool {
        rhs(sys, self.rhs_evals_mut(), t, y, scratch);
        if crate::simd::same_bits(self.f0(), scratch) {
            return true;
        }
        self.start_with(y, scratch);
        false
    }

    /// Hairer's automatic initial step at `(t, y)` (right after a start), at most `hmax`;
    /// the component that sets it becomes [`Kernel::worst`].
    fn initial_step<S: HybridSystem>(&mut self, sys: &mut S, t: f64, y: &[f64], hmax: f64) -> f64;

    /// Attempt the step `[t0, t1]` from `y0` and decide on it with the kernel's step-size
    /// control.
    fn attempt<S: HybridSystem>(&mut self, sys: &mut S, t0: f64, t1: f64, y0: &[f64]) -> Verdict;

    /// Finish an accepted step: make `f(t1, y1)` available where the method does not have
    /// it already.
    fn accepted<S: HybridSystem>(&mut self, _sys: &mut S) {}

    /// Build the dense output of the accepted step (idempotent; `y0`: the state at its
    /// start), for kernels that build it lazily.
    fn ensure_dense<S: HybridSystem>(&mut self, _sys: &mut S, _y0: &[f64]) {}

    /// The dense output at `t` inside the accepted step (after [`Kernel::ensure_dense`]);
    /// the step end returns [`Kernel::y1`] bit for bit.
    fn dense(&self, t: f64, out: &mut [f64]);

    /// [`Kernel::ensure_dense`] for an output grid point: a kernel told which states the
    /// output reads may build only those.
    fn ensure_dense_out<S: HybridSystem>(&mut self, sys: &mut S, y0: &[f64]) {
        self.ensure_dense(sys, y0);
    }

    /// [`Kernel::dense`] for an output grid point (after [`Kernel::ensure_dense_out`]):
    /// where only the output states were built, `out`'s other entries are left as they
    /// are.
    fn dense_out(&self, t: f64, out: &mut [f64]) {
        self.dense(t, out);
    }

    /// The state at the end of the accepted step.
    fn y1(&self) -> &[f64];

    /// Whether the last attempt already found every entry of [`Kernel::y1`] finite;
    /// `false` means unchecked, not non-finite.
    fn y1_checked_finite(&self) -> bool {
        false
    }

    /// Move on after a step taken as a whole: `f(t1, y1)` becomes the next `f0`.
    fn advance<S: HybridSystem>(&mut self, sys: &mut S);

    /// The component that dominated the error of the last attempt (or the first step).
    fn worst(&self) -> Option<usize>;

    /// Hairer's stiffness indicator `h·ρ` of the step just accepted (`None` where the
    /// kernel has no estimate of `ρ`, the dominant eigenvalue's modulus); `h_next` is the
    /// step size the kernel proposed next. Above 3.25, DOPRI5's stability boundary on the
    /// negative real axis, that step size is limited by stability.
    fn stiffness(&self, h_next: f64) -> Option<f64>;

    /// The state whose error limits the step just accepted (`y0`: the state at its
    /// start), where the kernel can name it.
    fn accepted_culprit(&mut self, _y0: &[f64]) -> Option<usize> {
        None
    }
}

/// Evaluate `dy = f(t, y)` and count it in `evals`.
pub(crate) fn rhs<S: HybridSystem>(
    sys: &mut S,
    evals: &mut u64,
    t: f64,
    y: &[f64],
    dy: &mut [f64],
) {
    *evals += 1;
    sys.derivatives(t, y, dy);
}

/// Scalar tolerances of an error norm.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tol {
    pub(crate) rtol: f64,
    pub(crate) atol: f64,
}

impl Tol {
    /// The error scale `atol + rtol·|y|` of a component of value `y`.
    #[inline]
    pub(crate) fn scale(self, y: f64) -> f64 {
        self.atol + self.rtol * y.abs()
    }
}

/// Hairer's `HINIT` (Solving ODEs I, §II.4): a first step for a method of `order` from
/// `(t, y)` with `f0 = f(t, y)` given, at most `hmax`, and the component that changes
/// fastest relative to its tolerance, `max |f0_i| / (atol + rtol·|y_i|)` (the first
/// non-finite one if any): the one that sets the step, so the culprit of a step-size
/// underflow before any step was rejected. One extra evaluation; `ytmp` and `f1` are
/// scratch of length `n`.
#[allow(clippy::needless_range_loop)] // the formulas index y, f0 and f1 alike
pub(crate) fn hinit<S: HybridSystem>(
    sys: &mut S,
    evals: &mut u64,
    (t, y, f0): (f64, &[f64], &[f64]),
    (ytmp, f1): (&mut [f64], &mut [f64]),
    tol: Tol,
    order: i32,
    hmax: f64,
) -> (f64, Option<usize>) {
    let n = y.len();
    let (mut dnf, mut dny) = (0.0f64, 0.0f64);
    let mut fastest = Worst::default();
    for i in 0..n {
        let sk = tol.scale(y[i]);
        let df = (f0[i] / sk).powi(2);
        fastest.see(i, df);
        dnf += df;
        dny += (y[i] / sk).powi(2);
    }
    let mut h = if dnf <= 1e-10 || dny <= 1e-10 {
        1e-6
    } else {
        (dny / dnf).sqrt() * 0.01
    };
    h = h.min(hmax);
    // One explicit Euler step to estimate the second derivative.
    for i in 0..n {
        ytmp[i] = y[i] + h * f0[i];
    }
    rhs(sys, evals, t + h, ytmp, f1);
    let mut der2 = 0.0f64;
    for i in 0..n {
        let sk = tol.scale(y[i]);
        der2 += ((f1[i] - f0[i]) / sk).powi(2);
    }
    der2 = der2.sqrt() / h;
    let der12 = der2.abs().max(dnf.sqrt());
    let h1 = if der12 <= 1e-15 || !der12.is_finite() {
        1e-6f64.max(h * 1e-3)
    } else {
        (0.01 / der12).powf(1.0 / f64::from(order))
    };
    ((100.0 * h).min(h1).min(hmax), fastest.index())
}

/// Tracks the component with the largest error term (the first non-finite one wins).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Worst {
    index: Option<usize>,
    value: f64,
    non_finite: bool,
}

impl Worst {
    /// Consider term `e` of component `i`.
    pub(crate) fn see(&mut self, i: usize, e: f64) {
        if self.non_finite {
            return;
        }
        if !e.is_finite() {
            self.non_finite = true;
            self.index = Some(i);
        } else if self.index.is_none() || e > self.value {
            self.index = Some(i);
            self.value = e;
        }
    }

    /// The dominant component, `None` if nothing was seen.
    pub(crate) fn index(&self) -> Option<usize> {
        self.index
    }
}

#[cfg(test)]
mod tests {
    //! One generic walk through the protocol, run on every kernel: what the engine relies
    //! on holds for each of them.
    use super::{Kernel, Verdict};
    use crate::radau::Radau;
    use crate::stepper::{Kind, Stepper};
    use crate::{EventAction, EventCause, HybridSystem, OutputKind, SystemError};

    /// `x0' = -x0`, `x1' = -10·x1`, counting its evaluations.
    struct Decay {
        evals: u64,
    }

    impl Decay {
        fn f(x: &[f64]) -> [f64; 2] {
            [-x[0], -10.0 * x[1]]
        }
    }

    impl HybridSystem for Decay {
        fn n_states(&self) -> usize {
            2
        }
        fn n_guards(&self) -> usize {
            0
        }
        fn derivatives(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) {
            self.evals += 1;
            dx.copy_from_slice(&Self::f(x));
        }
        fn guards(&mut self, _t: f64, _x: &[f64], _g: &mut [f64]) {}
        fn next_time_event(&self, _t: f64) -> f64 {
            f64::INFINITY
        }
        fn handle_event(
            &mut self,
            _t: f64,
            _x: &mut [f64],
            _c: EventCause<'_>,
        ) -> Result<EventAction, SystemError> {
            Ok(EventAction::Continue)
        }
        fn guard_name(&self, _i: usize) -> String {
            String::new()
        }
        fn output(&mut self, _t: f64, _x: &[f64], _kind: OutputKind) {}
    }

    const TOL: (f64, f64) = (1e-6, 1e-6);

    /// Start at `t = 0`, take one step, advance, and resume; check each promise of the
    /// protocol on the way. `name` labels the failures.
    fn walk<K: Kernel>(mut k: K, name: &str) {
        let mut sys = Decay { evals: 0 };
        let y0 = [1.0, 1.0];
        k.start(&mut sys, 0.0, &y0);
        assert_eq!(k.f0(), Decay::f(&y0), "{name}: f0 after start");
        let mut h = k.initial_step(&mut sys, 0.0, &y0, 1.0);
        assert!(h > 0.0 && h <= 1.0, "{name}: initial step {h}");
        // The fast state sets the first step.
        assert_eq!(k.worst(), Some(1), "{name}: culprit of the first step");
        let mut tries = 0;
        while let Verdict::Reject { h_next } = k.attempt(&mut sys, 0.0, h, &y0) {
            assert!(h_next < h, "{name}: a rejection shrinks the step");
            h = h_next;
            tries += 1;
            assert!(tries < 20, "{name}: no step accepted");
        }
        k.accepted(&mut sys);
        let y1 = k.y1().to_vec();
        // The accepted step meets the tolerance: each state within a few times its
        // scale `atol + rtol·|y|` of the exact solution.
        for (i, rate) in [1.0, 10.0].into_iter().enumerate() {
            let exact = (-rate * h).exp();
            let scale = TOL.1 + TOL.0 * exact;
            assert!(
                (y1[i] - exact).abs() < 10.0 * scale,
                "{name}: state {i} after a step of {h}: {} vs {exact}",
                y1[i]
            );
        }
        // The dense output: the step end bit for bit, the start close to y0.
        k.ensure_dense(&mut sys, &y0);
        let mut out = [0.0; 2];
        k.dense(h, &mut out);
        assert_eq!(
            out.map(f64::to_bits),
            [y1[0].to_bits(), y1[1].to_bits()],
            "{name}"
        );
        k.dense(0.0, &mut out);
        for i in 0..2 {
            assert!(
                (out[i] - y0[i]).abs() < 10.0 * (TOL.1 + TOL.0),
                "{name}: dense(t0)"
            );
        }
        // Advance: the next f0 is f(t1, y1), bit for bit.
        k.advance(&mut sys);
        assert_eq!(k.f0(), Decay::f(&y1), "{name}: f0 after advance");
        // Resume where nothing changed: one evaluation, and everything kept.
        let mut scratch = [0.0; 2];
        let before = (sys.evals, *k.rhs_evals_mut());
        assert!(
            k.resume(&mut sys, h, &y1, &mut scratch),
            "{name}: resume kept"
        );
        assert_eq!(sys.evals, before.0 + 1, "{name}: one evaluation to resume");
        assert_eq!(*k.rhs_evals_mut(), before.1 + 1, "{name}: counted");
        // Resume at another state: a restart from there.
        let moved = [y1[0], 0.5 * y1[1]];
        assert!(
            !k.resume(&mut sys, h, &moved, &mut scratch),
            "{name}: resume restarts"
        );
        assert_eq!(k.f0(), Decay::f(&moved), "{name}: f0 after the restart");
    }

    #[test]
    fn every_kernel_keeps_the_protocol() {
        for (kind, name) in [
            (Kind::Dopri5, "dopri5"),
            (Kind::Dop853, "dop853"),
            (Kind::Rk4, "rk4"),
        ] {
            walk(Stepper::new(kind, 2, TOL, 1.0), name);
        }
        walk(Radau::new(2, TOL.0, TOL.1, None, false), "radau5");
    }
}
