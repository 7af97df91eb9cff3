//! The step engine between the hybrid loop and the kernels: it holds the method's
//! kernels (the explicit Runge–Kutta [`Stepper`], the implicit [`Radau`]), passes each call
//! of the [`Kernel`] protocol (`kernel.rs`, which also says in which order the loop in
//! `integrator.rs` calls them) to the active one, and implements [`Method::Auto`]'s
//! switching and method Dopri5's stiffness verdict on top.
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

use crate::jacobian::SparsityPattern;
use crate::kernel::{Kernel, Verdict};
use crate::radau::Radau;
use crate::stepper::{Kind, Stepper};
use crate::system::HybridSystem;
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

/// Hairer's count of stiffness tests: the stiff ones since the last [`NONSTIFF_RESET`]
/// non-stiff ones in a row.
#[derive(Debug, Default, Clone)]
struct StiffCount {
    stiff: u32,
    nonstiff: u32,
}

impl StiffCount {
    /// Count a test that measured `hrho` (`h·ρ`).
    fn see(&mut self, hrho: f64) {
        if hrho > STIFF_HRHO {
            self.nonstiff = 0;
            self.stiff += 1;
        } else {
            self.nonstiff += 1;
            if self.nonstiff >= NONSTIFF_RESET {
                self.stiff = 0;
            }
        }
    }
}

/// Auto's counters (while Radau5 runs, `count.nonstiff` counts the non-stiff steps in a
/// row).
#[derive(Debug, Default, Clone)]
struct Switcher {
    count: StiffCount,
    pending: bool,
}

/// Method Dopri5's stiffness watch (as Hairer's DOPRI5: tested every
/// [`STIFF_TEST_EVERY`] accepted steps and at every step once stiff; [`STIFF_STRETCH`]
/// stiff tests without [`NONSTIFF_RESET`] others in between make the verdict).
#[derive(Debug, Default, Clone)]
struct StiffWatch {
    accepted: u64,
    count: StiffCount,
}

/// The kernels of one run and the state of their switching.
#[derive(Clone)]
pub(crate) struct Engine {
    explicit: Stepper,
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

/// `$body` with `$k` bound to the active kernel (`&mut` or, with `&self`, `&`): the one
/// place the engine picks it. A `match` on two concrete types, so every protocol call is
/// a static (inlinable) call.
macro_rules! active {
    (&$e:ident, $k:ident => $body:expr) => {
        match (&$e.radau, $e.active) {
            (Some($k), Active::Implicit) => $body,
            _ => {
                let $k = &$e.explicit;
                $body
            }
        }
    };
    ($e:ident, $k:ident => $body:expr) => {
        match (&mut $e.radau, $e.active) {
            (Some($k), Active::Implicit) => $body,
            _ => {
                let $k = &mut $e.explicit;
                $body
            }
        }
    };
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
            explicit: Stepper::new(kind, explicit_n, (set.rtol, set.atol), h_max),
            radau,
            active,
            auto,
            watch: (set.method == Method::Dopri5).then(StiffWatch::default),
            h_next: 0.0,
            scratch: vec![0.0; n],
            switches: Vec::with_capacity(if set.method == Method::Auto { 64 } else { 0 }),
        }
    }

    fn active_method(&self) -> Method {
        match self.active {
            Active::Implicit => Method::Radau5,
            Active::Explicit => Method::Dopri5,
        }
    }

    /// Whether Auto decided to switch at the next step boundary or restart.
    fn switch_pending(&self) -> bool {
        self.auto.as_ref().is_some_and(|a| a.pending)
    }

    /// [`Kernel::start`]; a pending Auto switch takes effect here.
    pub(crate) fn start<S: HybridSystem>(&mut self, sys: &mut S, t: f64, y: &[f64]) {
        if self.switch_pending() {
            self.flip(t);
        }
        active!(self, k => k.start(sys, t, y));
    }

    /// [`Kernel::resume`]; with an Auto switch pending, a [`Engine::start`] (`false`).
    pub(crate) fn resume<S: HybridSystem>(&mut self, sys: &mut S, t: f64, y: &[f64]) -> bool {
        if self.switch_pending() {
            self.start(sys, t, y);
            return false;
        }
        let scratch = &mut self.scratch;
        active!(self, k => k.resume(sys, t, y, scratch))
    }

    /// [`Kernel::initial_step`].
    pub(crate) fn initial_step<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        hmax: f64,
    ) -> f64 {
        active!(self, k => k.initial_step(sys, t, y, hmax))
    }

    /// [`Kernel::attempt`].
    pub(crate) fn attempt<S: HybridSystem>(
        &mut self,
        sys: &mut S,
        t0: f64,
        t1: f64,
        y0: &[f64],
    ) -> Verdict {
        let verdict = active!(self, k => k.attempt(sys, t0, t1, y0));
        if let Verdict::Accept { h_next } = verdict {
            self.h_next = h_next;
        }
        verdict
    }

    /// [`Kernel::accepted`], then method Dopri5's stiffness watch or Auto's counters.
    pub(crate) fn accepted<S: HybridSystem>(&mut self, sys: &mut S) {
        active!(self, k => k.accepted(sys));
        let h_next = self.h_next;
        if let Some(w) = self.watch.as_mut() {
            w.accepted += 1;
            if w.count.stiff > 0 || w.accepted % STIFF_TEST_EVERY == 0 {
                if let Some(hrho) = self.explicit.stiffness(h_next) {
                    w.count.see(hrho);
                }
            }
            return;
        }
        if self.auto.is_none() {
            return;
        }
        let hrho = active!(&self, k => k.stiffness(h_next));
        let active = self.active;
        let (Some(a), Some(hrho)) = (self.auto.as_mut(), hrho) else {
            return;
        };
        match active {
            Active::Explicit => {
                a.count.see(hrho);
                a.pending = a.count.stiff >= STIFF_STEPS;
            }
            Active::Implicit => {
                if hrho < 0.5 * STIFF_HRHO {
                    a.count.nonstiff += 1;
                    a.pending = a.count.nonstiff >= NONSTIFF_STEPS;
                } else {
                    a.count.nonstiff = 0;
                }
            }
        }
    }

    /// Method Dopri5 found the model stiff (see [`StiffWatch`]) at the step just accepted.
    pub(crate) fn stiff(&self) -> bool {
        self.watch
            .as_ref()
            .is_some_and(|w| w.count.stiff >= STIFF_STRETCH)
    }

    /// [`Kernel::accepted_culprit`].
    pub(crate) fn accepted_culprit(&mut self, y0: &[f64]) -> Option<usize> {
        active!(self, k => k.accepted_culprit(y0))
    }

    /// [`Kernel::ensure_dense`].
    pub(crate) fn ensure_dense<S: HybridSystem>(&mut self, sys: &mut S, y0: &[f64]) {
        active!(self, k => k.ensure_dense(sys, y0));
    }

    /// Name the states the output grid's points read ([`HybridSystem::output_states`]).
    pub(crate) fn set_output_states(&mut self, idx: Vec<usize>) {
        self.explicit.set_output_states(idx);
    }

    /// [`Kernel::ensure_dense_out`].
    pub(crate) fn ensure_dense_out<S: HybridSystem>(&mut self, sys: &mut S, y0: &[f64]) {
        active!(self, k => k.ensure_dense_out(sys, y0));
    }

    /// [`Kernel::dense_out`].
    pub(crate) fn dense_out(&self, t: f64, out: &mut [f64]) {
        active!(&self, k => k.dense_out(t, out));
    }

    /// Whether the active kernel evaluated the system at the end `(t1, y1)` of the step just
    /// accepted, as its last stage (the explicit methods, through
    /// [`HybridSystem::derivatives_step_end`]); the implicit one evaluates it in
    /// [`Engine::advance`].
    pub(crate) fn step_end_evaluated(&self) -> bool {
        self.active == Active::Explicit
    }

    /// [`Kernel::dense`].
    pub(crate) fn dense(&self, t: f64, out: &mut [f64]) {
        active!(&self, k => k.dense(t, out));
    }

    /// [`Kernel::y1`].
    pub(crate) fn y1(&self) -> &[f64] {
        active!(&self, k => k.y1())
    }

    /// [`Kernel::y1_checked_finite`].
    pub(crate) fn y1_checked_finite(&self) -> bool {
        active!(&self, k => k.y1_checked_finite())
    }

    /// [`Kernel::advance`] after a step ending at `t1`; a pending Auto switch takes effect
    /// here: the other kernel starts from the active one's `(y1, f1)`.
    pub(crate) fn advance<S: HybridSystem>(&mut self, sys: &mut S, t1: f64) {
        active!(self, k => k.advance(sys));
        if !self.switch_pending() {
            return;
        }
        let Some(radau) = self.radau.as_mut() else {
            return;
        };
        match self.active {
            Active::Explicit => hand_over(&self.explicit, radau),
            Active::Implicit => hand_over(radau, &mut self.explicit),
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

    /// [`Kernel::worst`].
    pub(crate) fn worst(&self) -> Option<usize> {
        active!(&self, k => k.worst())
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

    /// The switch log so far (Auto).
    pub(crate) fn switches(&self) -> &[MethodSwitch] {
        &self.switches
    }

    /// The switch log (Auto).
    pub(crate) fn take_switches(&mut self) -> Vec<MethodSwitch> {
        std::mem::take(&mut self.switches)
    }
}

/// Start `to` where `from` has just advanced to: its end state and derivatives, so a
/// switch costs no evaluation.
fn hand_over(from: &impl Kernel, to: &mut impl Kernel) {
    to.start_with(from.y1(), from.f0());
}
