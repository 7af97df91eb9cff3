//! Shared test problems (small `HybridSystem` impls with analytic reference solutions) and
//! the harness that runs them and records every output point.
#![allow(dead_code)]

use drivelink_solver::{
    integrate, EventAction, EventCause, EventKind, Failure, HybridSystem, Method, Outcome,
    OutputKind, Settings, SparsityPattern, SystemError,
};

/// Every output point of a run.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Recorder {
    pub t: Vec<f64>,
    pub x: Vec<Vec<f64>>,
    pub kind: Vec<OutputKind>,
}

impl Recorder {
    pub fn push(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        self.t.push(t);
        self.x.push(x.to_vec());
        self.kind.push(kind);
    }
    /// Bit patterns of all times and states (for determinism checks).
    pub fn bits(&self) -> Vec<u64> {
        let mut b: Vec<u64> = self.t.iter().map(|v| v.to_bits()).collect();
        for x in &self.x {
            b.extend(x.iter().map(|v| v.to_bits()));
        }
        b
    }
    /// Indices of outputs of `kind`.
    pub fn of(&self, kind: OutputKind) -> Vec<usize> {
        (0..self.kind.len())
            .filter(|&i| self.kind[i] == kind)
            .collect()
    }
}

/// Every method (RK4 with the step used throughout the tests).
pub fn methods() -> [Method; 5] {
    [
        Method::Dopri5,
        Method::Dop853,
        Method::Rk4 { step: 1e-2 },
        Method::Radau5,
        Method::Auto,
    ]
}

/// The adaptive methods.
pub fn adaptive_methods() -> [Method; 4] {
    [Method::Dopri5, Method::Dop853, Method::Radau5, Method::Auto]
}

/// One handler call: time, kind, guards, state on entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub t: f64,
    pub kind: EventKind,
    pub guards: Vec<usize>,
    pub x: Vec<f64>,
}

// ---------------------------------------------------------------------------------------
// Smooth problems with analytic solutions (no guards, no events).

pub struct Ode {
    pub name: &'static str,
    pub n: usize,
    pub f: fn(f64, &[f64], &mut [f64]),
    pub exact: fn(f64) -> Vec<f64>,
    pub rec: Recorder,
}

impl HybridSystem for Ode {
    fn n_states(&self) -> usize {
        self.n
    }
    fn n_guards(&self) -> usize {
        0
    }
    fn derivatives(&mut self, t: f64, x: &[f64], dx: &mut [f64]) {
        (self.f)(t, x, dx)
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
    fn guard_name(&self, i: usize) -> String {
        format!("g{i}")
    }
    fn output(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        self.rec.push(t, x, kind)
    }
}

/// x' = -x/2, x(0) = 1.
pub fn decay() -> Ode {
    Ode {
        name: "decay",
        n: 1,
        f: |_t, x, dx| dx[0] = -0.5 * x[0],
        exact: |t| vec![(-0.5 * t).exp()],
        rec: Recorder::default(),
    }
}

/// x'' = -4 x, x(0) = 1, x'(0) = 0 (omega = 2).
pub fn oscillator() -> Ode {
    Ode {
        name: "oscillator",
        n: 2,
        f: |_t, x, dx| {
            dx[0] = x[1];
            dx[1] = -4.0 * x[0];
        },
        exact: |t| vec![(2.0 * t).cos(), -2.0 * (2.0 * t).sin()],
        rec: Recorder::default(),
    }
}

pub fn smooth_problems() -> Vec<Ode> {
    vec![decay(), oscillator()]
}

impl Ode {
    /// Largest error over all recorded points against the analytic solution.
    pub fn max_error(&self) -> f64 {
        let mut e = 0.0f64;
        for (t, x) in self.rec.t.iter().zip(&self.rec.x) {
            let ex = (self.exact)(*t);
            for (a, b) in x.iter().zip(&ex) {
                e = e.max((a - b).abs());
            }
        }
        e
    }
    pub fn x0(&self) -> Vec<f64> {
        (self.exact)(0.0)
    }
}

// ---------------------------------------------------------------------------------------
// Bouncing ball: x = [height, velocity], guard = height, restitution e.

pub struct Ball {
    pub g: f64,
    pub e: f64,
    pub stop_at_first: bool,
    pub impacts: Vec<f64>,
    pub rec: Recorder,
}

impl Ball {
    pub fn new(e: f64) -> Self {
        Ball {
            g: 9.81,
            e,
            stop_at_first: false,
            impacts: vec![],
            rec: Recorder::default(),
        }
    }
    /// Closed-form impact times from rest at height `h0`, the first `k` of them.
    pub fn exact_impacts(&self, h0: f64, k: usize) -> Vec<f64> {
        let t1 = (2.0 * h0 / self.g).sqrt();
        let v1 = self.g * t1;
        let mut out = vec![t1];
        let mut v = v1 * self.e;
        while out.len() < k {
            let last = out[out.len() - 1];
            out.push(last + 2.0 * v / self.g);
            v *= self.e;
        }
        out
    }
}

impl HybridSystem for Ball {
    fn n_states(&self) -> usize {
        2
    }
    fn n_guards(&self) -> usize {
        1
    }
    fn derivatives(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = x[1];
        dx[1] = -self.g;
    }
    fn guards(&mut self, _t: f64, x: &[f64], g: &mut [f64]) {
        g[0] = x[0];
    }
    fn next_time_event(&self, _t: f64) -> f64 {
        f64::INFINITY
    }
    fn handle_event(
        &mut self,
        t: f64,
        x: &mut [f64],
        c: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        if c.kind == EventKind::State {
            self.impacts.push(t);
            if self.stop_at_first {
                return Ok(EventAction::Stop);
            }
            // Project onto the floor (the event point is just below it) and bounce.
            x[0] = 0.0;
            x[1] *= -self.e;
        }
        Ok(EventAction::Continue)
    }
    fn guard_name(&self, _i: usize) -> String {
        "ball.floor".into()
    }
    fn output(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        self.rec.push(t, x, kind)
    }
}

// ---------------------------------------------------------------------------------------
// Time events on x' = -x, with a list of event times.

pub struct Timed {
    pub times: Vec<f64>,
    pub calls: Vec<Call>,
    pub stop_at: Option<f64>,
    pub rec: Recorder,
}

impl HybridSystem for Timed {
    fn n_states(&self) -> usize {
        1
    }
    fn n_guards(&self) -> usize {
        0
    }
    fn derivatives(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = -x[0];
    }
    fn guards(&mut self, _t: f64, _x: &[f64], _g: &mut [f64]) {}
    fn next_time_event(&self, t: f64) -> f64 {
        self.times
            .iter()
            .copied()
            .find(|&te| te > t)
            .unwrap_or(f64::INFINITY)
    }
    fn handle_event(
        &mut self,
        t: f64,
        x: &mut [f64],
        c: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        self.calls.push(Call {
            t,
            kind: c.kind,
            guards: c.guards.to_vec(),
            x: x.to_vec(),
        });
        if c.kind == EventKind::Time {
            x[0] += 1.0; // a state reset
        }
        if self.stop_at == Some(t) {
            return Ok(EventAction::Stop);
        }
        Ok(EventAction::Continue)
    }
    fn guard_name(&self, i: usize) -> String {
        format!("g{i}")
    }
    fn output(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        self.rec.push(t, x, kind)
    }
}

// ---------------------------------------------------------------------------------------
// A configurable system: rhs and guards by function pointer; the handler records the call
// and returns `action` (it changes nothing).

pub struct Custom {
    pub n: usize,
    pub m: usize,
    pub f: fn(f64, &[f64], &mut [f64]),
    pub guard: fn(f64, &[f64], &mut [f64]),
    pub action: EventAction,
    pub calls: Vec<Call>,
    pub rec: Recorder,
}

impl Custom {
    pub fn new(
        n: usize,
        m: usize,
        f: fn(f64, &[f64], &mut [f64]),
        guard: fn(f64, &[f64], &mut [f64]),
        action: EventAction,
    ) -> Self {
        Custom {
            n,
            m,
            f,
            guard,
            action,
            calls: vec![],
            rec: Recorder::default(),
        }
    }
}

impl HybridSystem for Custom {
    fn n_states(&self) -> usize {
        self.n
    }
    fn n_guards(&self) -> usize {
        self.m
    }
    fn derivatives(&mut self, t: f64, x: &[f64], dx: &mut [f64]) {
        (self.f)(t, x, dx)
    }
    fn guards(&mut self, t: f64, x: &[f64], g: &mut [f64]) {
        (self.guard)(t, x, g)
    }
    fn next_time_event(&self, _t: f64) -> f64 {
        f64::INFINITY
    }
    fn handle_event(
        &mut self,
        t: f64,
        x: &mut [f64],
        c: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        self.calls.push(Call {
            t,
            kind: c.kind,
            guards: c.guards.to_vec(),
            x: x.to_vec(),
        });
        if c.kind == EventKind::Initial {
            return Ok(EventAction::Continue);
        }
        Ok(self.action)
    }
    fn guard_name(&self, i: usize) -> String {
        format!("custom.g{i}")
    }
    fn output(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        self.rec.push(t, x, kind)
    }
}

// ---------------------------------------------------------------------------------------
// Relay without hysteresis: x' = -mode, guard mode*x >= 0, the handler flips the mode.

pub struct Relay {
    pub mode: f64,
    pub rec: Recorder,
}

impl HybridSystem for Relay {
    fn n_states(&self) -> usize {
        1
    }
    fn n_guards(&self) -> usize {
        1
    }
    fn derivatives(&mut self, _t: f64, _x: &[f64], dx: &mut [f64]) {
        dx[0] = -self.mode;
    }
    fn guards(&mut self, _t: f64, x: &[f64], g: &mut [f64]) {
        g[0] = self.mode * x[0];
    }
    fn next_time_event(&self, _t: f64) -> f64 {
        f64::INFINITY
    }
    fn handle_event(
        &mut self,
        _t: f64,
        x: &mut [f64],
        c: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        if c.kind == EventKind::Initial {
            self.mode = if x[0] >= 0.0 { 1.0 } else { -1.0 };
        } else if !c.guards.is_empty() {
            self.mode = -self.mode;
        }
        Ok(EventAction::Continue)
    }
    fn guard_name(&self, _i: usize) -> String {
        "relay.sign".into()
    }
    fn output(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        self.rec.push(t, x, kind)
    }
}

/// Run `sys` from `x0` with `settings`, returning the result and the final state.
pub fn run<S: HybridSystem>(
    sys: &mut S,
    x0: &[f64],
    settings: &Settings,
) -> (Result<Outcome, Failure>, Vec<f64>) {
    let mut x = x0.to_vec();
    let r = integrate(sys, &mut x, settings);
    (r, x)
}

pub fn settings(method: Method, stop: f64) -> Settings {
    Settings {
        method,
        stop_time: stop,
        ..Settings::default()
    }
}

// ---------------------------------------------------------------------------------------
// Stiff problems.

/// Robertson's chemical kinetics (Hairer & Wanner, Solving ODEs II, §IV.1, eq. (1.4)):
/// y1' = −0.04 y1 + 1e4 y2 y3, y2' = 0.04 y1 − 1e4 y2 y3 − 3e7 y2², y3' = 3e7 y2²,
/// y(0) = (1, 0, 0). Eigenvalues down to about −1e4 while the solution evolves over
/// seconds to years; y1 + y2 + y3 = 1 is a linear invariant.
pub fn robertson() -> Custom {
    Custom::new(
        3,
        0,
        |_, y, dy| {
            dy[0] = -0.04 * y[0] + 1e4 * y[1] * y[2];
            dy[2] = 3e7 * y[1] * y[1];
            dy[1] = -dy[0] - dy[2];
        },
        |_, _, _| {},
        EventAction::Continue,
    )
}

/// Van der Pol's oscillator x'' − μ(1 − x²)x' + x = 0 as x = (x, x'), with a guard on the
/// sign of x (mode ±1, flipped at every crossing); the crossing times are recorded.
pub struct VanDerPol {
    pub mu: f64,
    pub mode: f64,
    pub crossings: Vec<f64>,
    pub rec: Recorder,
}

impl VanDerPol {
    pub fn new(mu: f64) -> Self {
        VanDerPol {
            mu,
            mode: 1.0,
            crossings: vec![],
            rec: Recorder::default(),
        }
    }
}

impl HybridSystem for VanDerPol {
    fn n_states(&self) -> usize {
        2
    }
    fn n_guards(&self) -> usize {
        1
    }
    fn derivatives(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = x[1];
        dx[1] = self.mu * (1.0 - x[0] * x[0]) * x[1] - x[0];
    }
    fn guards(&mut self, _t: f64, x: &[f64], g: &mut [f64]) {
        g[0] = self.mode * x[0];
    }
    fn next_time_event(&self, _t: f64) -> f64 {
        f64::INFINITY
    }
    fn handle_event(
        &mut self,
        t: f64,
        x: &mut [f64],
        c: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        if c.kind == EventKind::Initial {
            self.mode = if x[0] >= 0.0 { 1.0 } else { -1.0 };
        } else if !c.guards.is_empty() {
            self.mode = -self.mode;
            self.crossings.push(t);
        }
        Ok(EventAction::Continue)
    }
    fn guard_name(&self, _i: usize) -> String {
        "vdp.sign".into()
    }
    fn output(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        self.rec.push(t, x, kind)
    }
}

/// A chain of `n` first-order lags with a stiff spread of rates, x_i' = k_i (x_{i−1} − x_i)
/// (x_0 driven by 1), k_i = 10^(i mod 4): a tridiagonal Jacobian that it declares through
/// `jacobian_pattern`, so a finite-difference Jacobian costs 2 evaluations.
pub struct LagChain {
    pub n: usize,
    pub declare_pattern: bool,
}

impl LagChain {
    pub fn rate(i: usize) -> f64 {
        10f64.powi((i % 4) as i32)
    }
}

impl HybridSystem for LagChain {
    fn n_states(&self) -> usize {
        self.n
    }
    fn n_guards(&self) -> usize {
        0
    }
    fn derivatives(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) {
        for i in 0..self.n {
            let input = if i == 0 { 1.0 } else { x[i - 1] };
            dx[i] = Self::rate(i) * (input - x[i]);
        }
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
    fn guard_name(&self, i: usize) -> String {
        format!("g{i}")
    }
    fn output(&mut self, _t: f64, _x: &[f64], _kind: OutputKind) {}
    fn jacobian_pattern(&self) -> Option<SparsityPattern> {
        if !self.declare_pattern {
            return None;
        }
        let entries = (0..self.n).flat_map(|i| {
            let left = (i > 0).then(|| (i, i - 1));
            std::iter::once((i, i)).chain(left)
        });
        SparsityPattern::from_entries(self.n, entries).ok()
    }
}

// ---------------------------------------------------------------------------------------
// The stiff driveline of blocks/tests/stiff_driveline.rs written out by hand: a 1 kg·m²
// hub driven by 50 N·m, a shaft of 2e6 N·m/rad with damping ratio 0.1 (1.03 kHz) to a
// 0.05 kg·m² gear, a clutch (300 N·m kinetic, 330 N·m static) engaged by a time event at
// 50 ms, a 5 kg·m² wheel with a 0.5 N·m·s/rad road-load damper. States: shaft twist, hub,
// gear and wheel speeds. Guards: the slip while slipping, the static capacity minus the
// holding torque while locked.

pub struct Driveline {
    pub engaged: bool,
    pub locked: bool,
    pub locks: Vec<f64>,
    pub rec: Recorder,
}

impl Driveline {
    pub const J_HUB: f64 = 1.0;
    pub const J_GEAR: f64 = 0.05;
    pub const J_WHEEL: f64 = 5.0;
    pub const C: f64 = 2.0e6;
    pub const T_ENGINE: f64 = 50.0;
    pub const T_KINETIC: f64 = 300.0;
    pub const T_STATIC: f64 = 330.0;
    pub const D_ROAD: f64 = 0.5;
    pub const T_ENGAGE: f64 = 0.05;

    pub fn new() -> Self {
        Driveline {
            engaged: false,
            locked: false,
            locks: vec![],
            rec: Recorder::default(),
        }
    }

    /// Initial state: relaxed shaft, hub and gear at 100 rad/s, wheel at rest.
    pub fn x0() -> Vec<f64> {
        vec![0.0, 100.0, 100.0, 0.0]
    }

    /// Shaft damping for damping ratio 0.1 of the open-clutch mode.
    pub fn d_shaft() -> f64 {
        let j_red = Self::J_HUB * Self::J_GEAR / (Self::J_HUB + Self::J_GEAR);
        2.0 * 0.1 * (Self::C * j_red).sqrt()
    }

    fn shaft_torque(x: &[f64]) -> f64 {
        Self::C * x[0] + Self::d_shaft() * (x[1] - x[2])
    }

    /// Acceleration of gear and wheel together while locked, and the holding torque.
    fn locked_motion(x: &[f64]) -> (f64, f64) {
        let a = (Self::shaft_torque(x) - Self::D_ROAD * x[3]) / (Self::J_GEAR + Self::J_WHEEL);
        (a, Self::J_WHEEL * a + Self::D_ROAD * x[3])
    }
}

impl Default for Driveline {
    fn default() -> Self {
        Self::new()
    }
}

impl HybridSystem for Driveline {
    fn n_states(&self) -> usize {
        4
    }
    fn n_guards(&self) -> usize {
        2
    }
    fn derivatives(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) {
        let tau = Self::shaft_torque(x);
        dx[0] = x[1] - x[2];
        dx[1] = (Self::T_ENGINE - tau) / Self::J_HUB;
        if self.locked {
            let (a, _) = Self::locked_motion(x);
            dx[2] = a;
            dx[3] = a;
        } else {
            let friction = if self.engaged { Self::T_KINETIC } else { 0.0 };
            dx[2] = (tau - friction) / Self::J_GEAR;
            dx[3] = (friction - Self::D_ROAD * x[3]) / Self::J_WHEEL;
        }
    }
    fn guards(&mut self, _t: f64, x: &[f64], g: &mut [f64]) {
        g[0] = if self.engaged && !self.locked {
            x[2] - x[3]
        } else {
            1.0
        };
        g[1] = if self.locked {
            Self::T_STATIC - Self::locked_motion(x).1.abs()
        } else {
            1.0
        };
    }
    fn next_time_event(&self, t: f64) -> f64 {
        if t < Self::T_ENGAGE {
            Self::T_ENGAGE
        } else {
            f64::INFINITY
        }
    }
    fn handle_event(
        &mut self,
        t: f64,
        x: &mut [f64],
        c: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        if c.kind == EventKind::Time {
            self.engaged = true;
        }
        if c.guards.contains(&0) {
            // Lock: gear and wheel move together (momentum-conserving projection).
            self.locked = true;
            self.locks.push(t);
            let w = (Self::J_GEAR * x[2] + Self::J_WHEEL * x[3]) / (Self::J_GEAR + Self::J_WHEEL);
            x[2] = w;
            x[3] = w;
        }
        if c.guards.contains(&1) {
            self.locked = false;
        }
        Ok(EventAction::Continue)
    }
    fn guard_name(&self, i: usize) -> String {
        ["clutch.slip", "clutch.capacity"][i].to_string()
    }
    fn output(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        self.rec.push(t, x, kind)
    }
}
