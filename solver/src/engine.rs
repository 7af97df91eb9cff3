//! The step engine between the hybrid loop and the kernels: it runs the explicit
//! Runge–Kutta kernels with their PI step-size controller or the Radau IIA kernel with
//! its own control, behind one protocol, and implements [`Method::Auto`]'s switching.
//!
//! Protocol for one step from `(t0, y0)` to `t1` (the loop in `integrator.rs`):
//! [`Engine::start`] after every (re)start, [`Engine::attempt`] until it accepts,
//! [`Engine::accepted`], then any number of [`Engine::ensure_dense`] / [`Engine::dense`]
//! calls, and [`Engine::advance`] when the step is taken as a whole (not cut by a state
//! event, which restarts instead).
//!
//! ## Auto switching (LSODA-like)
//! While Dopri5 runs, Hairer's stiffness test (`h·ρ` from the last two stages) is applied
//! to every accepted step: 15 steps with `h·ρ > 3.25` (the stability boundary), not
//! interrupted by 6 non-stiff ones, switch to Radau5. While Radau5 runs, the spectral
//! radius `ρ` of each new Jacobian is estimated by power iteration; 15 accepted steps in a
//! row whose proposed step `h` has `h·ρ < 3.25/2` (Dopri5 would be stable with margin at
//! the step size accuracy allows) switch back. A switch happens at a step boundary (or at
//! the restart after an event) and is recorded with its time.
//!
//! ## Method Dopri5's stiffness verdict
//! Method Dopri5 applies the same test every [`STIFF_TEST_EVERY`] accepted steps (as
//! Hairer's DOPRI5 does), and at every step while the last test was stiff; after
//! [`STIFF_STRETCH`] stiff tests not interrupted by 6 others ([`Engine::stiff`]) the step
//! loop projects the rest of the run at the current step size and fails with
//! `SolverError::Stiff` if that is more than it should grind through (`integrator.rs`).
//! A run that never tests stiff that long is the same, bit for bit: the test only reads
//! the stages.

use ode_solvers::controller::Controller;

use crate::jacobian::SparsityPattern;
use crate::radau::Radau;
use crate::stepper::{rhs, Kind, Stepper};
use crate::system::HybridSystem;
use crate::verdict::Verdict;
use crate::{Method, MethodSwitch, Settings, Stats};

/// Dopri5's stability boundary on the negative real axis (Hairer's stiffness test).
const STIFF_HRHO: f64 = 3.25;
/// Stiff indications (without 6 non-stiff ones in between) before Auto switches to Radau5.
const STIFF_STEPS: u32 = 15;
/// Non-stiff steps that clear the stiff count.
const NONSTIFF_RESET: u32 = 6;
/// Consecutive Radau5 steps with `h·ρ < STIFF_HRHO / 2` before Auto switches back.
const NONSTIFF_STEPS: u32 = 15;

/// Method Dopri5 applies Hairer's stiffness test every this many accepted steps (and at
/// every step while the last test found the model stiff), as his DOPRI5 does (`NSTIFF`).
const STIFF_TEST_EVERY: u64 = 1000;
/// Stiff tests (without [`NONSTIFF_RESET`] others in between) before method Dopri5 calls
/// the model stiff. Hairer's DOPRI5 gives up after 15; a vehicle's wheel landing keeps a
/// shipped test model at the stability limit for thousands of steps (once with steps of
/// 2e-9 s) before it goes on at ordinary steps, so only a stretch this long counts.
const STIFF_STRETCH: u32 = 50_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Active {
    Explicit,
    Implicit,
}

/// Auto's counters.
#[derive(Debug, Default)]
struct Switcher {
    stiff: u32,
    nonstiff: u32,
    pending: bool,
}

/// Method Dopri5's stiffness watch (as Hairer's DOPRI5: tested every
/// [`STIFF_TEST_EVERY`] accepted steps and at every step once stiff; [`STIFF_STRETCH`]
/// stiff tests without [`NONSTIFF_RESET`] others in between make the verdict).
#[derive(Debug, Default)]
struct StiffWatch {
    accepted: u64,
    stiff: u32,
    nonstiff: u32,
}

/// The kernels of one run and the state of their step-size control.
pub(crate) struct Engine {
    kind: Kind,
    explicit: Stepper,
    controller: Controller<f64>,
    h_max: f64,
    radau: Option<Radau>,
    active: Active,
    auto: Option<Switcher>,
    /// Method Dopri5 only: its stiffness watch.
    watch: Option<StiffWatch>,
    /// `h_next` of the last accepted attempt.
    h_next: f64,
    /// Derivative scratch for [`Engine::resume`].
    scratch: Vec<f64>,
    switches: Vec<MethodSwitch>,
}

/// A fresh PI controller with Hairer's default parameters for the method.
fn controller(kind: Kind, h_max: f64) -> Controller<f64> {
    match kind {
        // DOPRI5: beta = 0.04, alpha = 0.2 - 0.75 beta, step ratio in [0.2, 10].
        Kind::Dopri5 | Kind::Rk4 => Controller::new(0.17, 0.04, 10.0, 0.2, h_max, 0.9, 1.0),
        // DOP853: beta = 0, alpha = 1/8, step ratio in [0.333, 6].
        Kind::Dop853 => Controller::new(0.125, 0.0, 6.0, 0.333, h_max, 0.9, 1.0),
    }
}

impl Engine {
    /// The kernels for `set.method` on `n` states; `pattern` is the Jacobian structure the
    /// system declared (used by the implicit kernel).
    pub(crate) fn new(set: &Settings, n: usize, pattern: Option<SparsityPattern>) -> Self {
        let kind = match set.method {
            Method::Dop853 => Kind::Dop853,
            Method::Rk4 { .. } => Kind::Rk4,
            Method::Dopri5 | Method::Radau5 | Method::Auto => Kind::Dopri5,
        };
        let h_max = set.max_step.min(set.stop_time - set.start_time);
        let (radau, active, auto) = match set.method {
            Method::Radau5 => (
                Some(Radau::new(n, set.rtol, set.atol, pattern, false)),
                Active::Implicit,
                None,
            ),
            Method::Auto => (
                Some(Radau::new(n, set.rtol, set.atol, pattern, true)),
                Active::Explicit,
                Some(Switcher::default()),
            ),
            _ => (None, Active::Explicit, None),
        };
        // The explicit kernel is tiny; Radau5 keeps one (unused) so dispatch needs no
        // unwrapping.
        let explicit_n = if set.method == Method::Radau5 { 0 } else { n };
        Engine {
            kind,
            explicit: Stepper::new(kind, explicit_n, set.rtol, set.atol),
            controller: controller(kind, h_max),
            h_max,
            radau,
            active,
            auto,
            watch: (set.method == Method::Dopri5).then(StiffWatch::default),
            h_next: 0.0,
            scratch: vec![0.0; n],
            switches: Vec::with_capacity(if set.method == Method::Auto { 64 } else { 0 }),
        }
    }

    /// The implicit kernel while it is the active one.
    fn implicit(&mut self) -> Option<&mut Radau> {
        match self.active {
            Active::Implicit => self.radau.as_mut(),
            Active::Explicit => None,
        }
    }

    fn implicit_ref(&self) -> Option<&Radau> {
        match self.active {
            Active::Implicit => self.radau.as_ref(),
            Active::Explicit => None,
        }
    }

    fn active_method(&self) -> Method {
        match self.active {
            Active::Implicit => Method::Radau5,
            Active::Explicit => Method::Dopri5,
        }
    }

    /// (Re)start at `(t, y)`: a pending Auto switch takes effect here; the active kernel
    /// evaluates `f0` and forgets its step-size history.
    pub(crate) fn start<S: HybridSystem>(&mut self, sys: &mut S, t: f64, y: &[f64]) {
        if self.auto.as_ref().is_some_and(|a| a.pending) {
            self.flip(t);
        }
        self.controller = controller(self.kind, self.h_max);
        match self.implicit() {
            Some(r) => r.start(sys, t, y),
            None => self.explicit.start(sys, t, y),
        }
    }

    /// After a time event at `(t, y)` that left the state as it was: evaluate the
    /// derivatives (one evaluation). If they are what the last step ended with, bit for
    /// bit, nothing the integration depends on changed: every kernel keeps its state
    /// (step-size history, Jacobian, factorisations) and this returns `true`. Otherwise
    /// the kernels restart as after [`Engine::start`] (with these derivatives) and this
    /// returns `false`.
    pub(crate) fn resume<S: HybridSystem>(&mut self, sys: &mut S, t: f64, y: &[f64]) -> bool {
        if self.auto.as_ref().is_some_and(|a| a.pending) {
            self.start(sys, t, y);
            return false;
        }
        let scratch = &mut self.scratch;
        match (self.active, self.radau.as_mut()) {
            (Active::Implicit, Some(r)) => {
                rhs(sys, &mut r.rhs_evals, t, y, scratch);
                if crate::simd::same_bits(r.f0(), scratch) {
                    return true;
                }
                r.start_with(y, scratch);
            }
            _ => {
                rhs(sys, &mut self.explicit.rhs_evals, t, y, scratch);
                if crate::simd::same_bits(self.explicit.f0(), scratch) {
                    return true;
                }
                self.explicit.start_with(scratch);
                self.controller = controller(self.kind, self.h_max);
            }
        }
        false
    }

    /// Hairer's automatic initial step at `(t, y)` (after `start`), at most `hmax`.
    pub(crate) fn initial_step<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        hmax: f64,
    ) -> f64 {
        match self.implicit() {
            Some(r) => r.initial_step(sys, t, y, hmax),
            None => self.explicit.initial_step(sys, t, y, hmax),
        }
    }

    /// Attempt the step `[t0, t1]` from `y0` and decide on it.
    pub(crate) fn attempt<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        t0: f64,
        t1: f64,
        y0: &[f64],
    ) -> Verdict {
        let h = t1 - t0;
        let verdict = match self.implicit() {
            Some(r) => r.attempt(sys, t0, t1, y0),
            None => {
                let err = self.explicit.attempt(sys, t0, t1, y0);
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
        };
        if let Verdict::Accept { h_next } = verdict {
            self.h_next = h_next;
        }
        verdict
    }

    /// Finish an accepted step (and feed Auto's stiffness counters).
    pub(crate) fn accepted<S: HybridSystem>(&mut self, sys: &mut S) {
        if self.active == Active::Explicit {
            self.explicit.accepted(sys);
        }
        if let Some(w) = self.watch.as_mut() {
            w.accepted += 1;
            if w.stiff > 0 || w.accepted % STIFF_TEST_EVERY == 0 {
                if let Some(hrho) = self.explicit.stiffness() {
                    if hrho > STIFF_HRHO {
                        w.nonstiff = 0;
                        w.stiff += 1;
                    } else {
                        w.nonstiff += 1;
                        if w.nonstiff >= NONSTIFF_RESET {
                            w.stiff = 0;
                        }
                    }
                }
            }
            return;
        }
        if self.auto.is_none() {
            return;
        }
        let h_next = self.h_next;
        let hrho = match self.active {
            Active::Explicit => self.explicit.stiffness(),
            Active::Implicit => self
                .radau
                .as_ref()
                .and_then(|r| r.spectral_radius())
                .map(|rho| h_next * rho),
        };
        let active = self.active;
        let (Some(a), Some(hrho)) = (self.auto.as_mut(), hrho) else {
            return;
        };
        match active {
            Active::Explicit => {
                if hrho > STIFF_HRHO {
                    a.nonstiff = 0;
                    a.stiff += 1;
                    a.pending = a.stiff >= STIFF_STEPS;
                } else {
                    a.nonstiff += 1;
                    if a.nonstiff >= NONSTIFF_RESET {
                        a.stiff = 0;
                    }
                }
            }
            Active::Implicit => {
                if hrho < 0.5 * STIFF_HRHO {
                    a.nonstiff += 1;
                    a.pending = a.nonstiff >= NONSTIFF_STEPS;
                } else {
                    a.nonstiff = 0;
                }
            }
        }
    }

    /// Method Dopri5 found the model stiff (see [`StiffWatch`]) at the step just accepted.
    pub(crate) fn stiff(&self) -> bool {
        self.watch
            .as_ref()
            .is_some_and(|w| w.stiff >= STIFF_STRETCH)
    }

    /// The state whose error limits the step just accepted (`y0`: the state at its start).
    pub(crate) fn accepted_culprit(&mut self, y0: &[f64]) -> Option<usize> {
        match self.active {
            Active::Explicit => self.explicit.accepted_culprit(y0),
            Active::Implicit => None,
        }
    }

    /// Build the dense output of the last accepted step (`y0`: the state at its start).
    pub(crate) fn ensure_dense<S: HybridSystem>(&mut self, sys: &mut S, y0: &[f64]) {
        if self.active == Active::Explicit {
            self.explicit.ensure_dense(sys, y0);
        }
    }

    /// Name the states the output grid's points read ([`HybridSystem::output_states`]).
    pub(crate) fn set_output_states(&mut self, idx: Vec<usize>) {
        self.explicit.set_output_states(idx);
    }

    /// Whether the output states are interpolated apart (DOPRI5 active, states named).
    fn output_states_apart(&self) -> bool {
        self.active == Active::Explicit && self.explicit.has_output_states()
    }

    /// [`Engine::ensure_dense`] for an output grid point: only the output states where
    /// they are named ([`Engine::set_output_states`]).
    pub(crate) fn ensure_dense_out<S: HybridSystem>(&mut self, sys: &mut S, y0: &[f64]) {
        if self.output_states_apart() {
            self.explicit.ensure_dense_out(y0);
        } else {
            self.ensure_dense(sys, y0);
        }
    }

    /// [`Engine::dense`] for an output grid point (after [`Engine::ensure_dense_out`]):
    /// only the output states where they are named, the other entries left as they are.
    pub(crate) fn dense_out(&self, t: f64, out: &mut [f64]) {
        if self.output_states_apart() {
            self.explicit.dense_out(t, out);
        } else {
            self.dense(t, out);
        }
    }

    /// The dense output at `t` inside the last accepted step.
    pub(crate) fn dense(&self, t: f64, out: &mut [f64]) {
        match self.implicit_ref() {
            Some(r) => r.dense(t, out),
            None => self.explicit.dense(t, out),
        }
    }

    /// The state at the end of the last attempted step.
    pub(crate) fn y1(&self) -> &[f64] {
        match self.implicit_ref() {
            Some(r) => r.y1(),
            None => self.explicit.y1(),
        }
    }

    /// Whether the kernel already found every entry of [`Engine::y1`] finite; `false`
    /// means unchecked.
    pub(crate) fn y1_checked_finite(&self) -> bool {
        self.implicit_ref().is_none() && self.explicit.y1_checked_finite()
    }

    /// Move on after a step taken as a whole, ending at `t1`: the next step's `f0`; a
    /// pending Auto switch takes effect here.
    pub(crate) fn advance<S: HybridSystem>(&mut self, sys: &mut S, t1: f64) {
        match self.implicit() {
            Some(r) => r.advance(sys),
            None => self.explicit.advance(),
        }
        if !self.auto.as_ref().is_some_and(|a| a.pending) {
            return;
        }
        let Some(radau) = self.radau.as_mut() else {
            return;
        };
        match self.active {
            Active::Explicit => radau.start_with(self.explicit.y1(), self.explicit.f0()),
            Active::Implicit => {
                self.explicit.start_with(radau.f0());
                self.controller = controller(self.kind, self.h_max);
            }
        }
        self.flip(t1);
    }

    /// Make the other kernel active and log the switch (Auto only).
    fn flip(&mut self, t: f64) {
        let from = self.active_method();
        self.active = match self.active {
            Active::Explicit => Active::Implicit,
            Active::Implicit => Active::Explicit,
        };
        if let Some(a) = self.auto.as_mut() {
            *a = Switcher::default();
        }
        self.switches.push(MethodSwitch {
            t,
            from,
            to: self.active_method(),
        });
    }

    /// The component that dominated the error of the last attempt.
    pub(crate) fn worst(&self) -> Option<usize> {
        match self.implicit_ref() {
            Some(r) => r.worst(),
            None => self.explicit.worst(),
        }
    }

    /// Add the kernels' counters to `stats`.
    pub(crate) fn fill_stats(&self, stats: &mut Stats) {
        stats.rhs_evals = self.explicit.rhs_evals;
        if let Some(r) = &self.radau {
            stats.rhs_evals += r.rhs_evals;
            stats.jacobian_evals = r.jac_evals;
            stats.jacobian_rhs_evals = r.jac_rhs_evals;
            stats.lu_decompositions = r.lu_count;
            stats.newton_iterations = r.newton_iters;
        }
    }

    /// The switch log (Auto).
    pub(crate) fn take_switches(&mut self) -> Vec<MethodSwitch> {
        std::mem::take(&mut self.switches)
    }
}
