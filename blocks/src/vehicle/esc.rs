//! `Esc`: electronic stability control. A yaw-rate reference from the linear single-track
//! model and a corrective yaw moment made by braking single wheels.
//!
//! Ports: `steer[in]` (road-wheel angle δ, rad, + left), `speed[in]` (forward speed u,
//! m/s), `r[in]` (yaw rate, rad/s, + left), `ay[in]` (lateral acceleration, m/s², optional
//! 0, only used by the variable `beta_rate`), `demand_fl`, `demand_fr`, `demand_rl`,
//! `demand_rr` `[in]` (the driver's brake torques, N·m, optional 0) -> `fl`, `fr`, `rl`,
//! `rr` `[out]` (the wheel brake torques, N·m: a `WheelCollider.brake` takes them as they
//! are). The input and output names differ (`demand_fl` against `fl`) because a block's
//! port names are unique.
//!
//! # Reference and error
//!
//! ```text
//! r_lin = u·δ/(L + K·u²)                      L = wheelbase, K = understeer_gradient
//! r_ref = clamp(r_lin, −μ·g/|u|, μ·g/|u|)     μ = mu, g = 9.80665 m/s²
//! e     = r − r_ref                           (`error`)
//! ```
//!
//! `K` is in rad/(m/s²) (= s²/m): on a circle of radius R, `δ = L/R + K·ay`; 0 is a
//! neutral car, > 0 understeer. Negative gradients are refused (their reference is
//! infinite at the critical speed `√(L/−K)`).
//!
//! # Correction
//!
//! While active, `c = gain·(|e| − threshold)` (N·m, 0 at the threshold: the outputs are
//! continuous there) is added to one wheel's demand, never more than up to `max_torque`
//! (`out = max(d, min(d + c, max_torque))`: ESC never takes away from the driver's
//! braking); the other wheels get their demands unchanged. Braking a right wheel yaws the
//! car to the right, so `e > 0` (yawing too far left) brakes a right wheel and `e < 0` a
//! left one. The axle:
//!
//! - oversteer (`e·r > 0`: `|r| > |r_ref|` with the same sign, or `r` against `r_ref`):
//!   the outer front wheel (`fr` while yawing left, `fl` while yawing right);
//! - understeer (`e·r < 0`: `|r| < |r_ref|`): the inner rear wheel of the turn the driver
//!   asks for (`rl` for a left turn, `rr` for a right one).
//!
//! # Modes (located events, logged)
//!
//! Three guards make every switch a located event, so nothing chatters and every switch is
//! in the run's event log (`EventTag::ZeroCrossing`):
//!
//! - `speed`: armed while `u ≥ v_min`; below it (standing, reversing, parking) ESC is
//!   passive and the outputs are the demands;
//! - `active`: braking starts when `|e|` rises above `threshold` and stops when it falls
//!   below it (the correction is 0 there, so no hysteresis is needed);
//! - `axle`: front (oversteer) or rear (understeer), chosen when braking starts by the
//!   sign of `e·r`, and switched while braking only when `sign(e)·r` passes
//!   `∓axle_hysteresis` (a car ploughing straight on with `r ≈ 0` stays on one wheel).
//!
//! `enabled` 0 passes the demands through unchanged (no guards, no events).

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, EventCx, EventTag, Outputs, ParamError, ParamSpec,
    Params, PortDecl, Registry, VarDecl, VarSource, G,
};

use super::finite;
use crate::signal::FirstCall;

/// Output (and demand input) order.
const WHEELS: [&str; 4] = ["fl", "fr", "rl", "rr"];
const FL: usize = 0;
const FR: usize = 1;
const RL: usize = 2;
const RR: usize = 3;
/// Index of the first demand among the inputs.
const DEMAND0: usize = 4;

pub(crate) fn register(r: &mut Registry) {
    r.register(esc_type());
}

/// The `Esc` block type: its parameters and how it is built.
fn esc_type() -> BlockType {
    BlockType {
        name: "Esc",
        category: "vehicle",
        doc: "Electronic stability control: yaw-rate reference r_ref = u·δ/(L + K·u²) limited to μ·g/u; when |r − r_ref| exceeds threshold it adds gain·(|r − r_ref| − threshold) to one wheel's brake demand (oversteer: outer front wheel, understeer: inner rear wheel), capped at max_torque. Passive below v_min; enabled 0 passes the demands through. Activation, axle and arming are located events.",
        ports_doc: "steer[in], speed[in], r[in], ay[in] (optional, 0), demand_fl[in], demand_fr[in], demand_rl[in], demand_rr[in] (optional, 0) -> fl[out], fr[out], rl[out], rr[out]",
        params: specs(),
        build: BlockBuild::Primitive(build),
    }
}

fn specs() -> Vec<ParamSpec> {
    vec![
        ParamSpec::number("enabled", "1", 1.0, "1 on, 0 off (the demands pass through unchanged)"),
        ParamSpec::required("wheelbase", "m", "L of the reference model (> 0)"),
        ParamSpec::number("understeer_gradient", "rad/(m/s^2)", 0.0025, "K of the reference model, rad/(m/s²) = s²/m (>= 0; 0 neutral): δ = L/R + K·ay on a circle"),
        ParamSpec::number("mu", "1", 1.0, "road friction coefficient of the limit |r_ref| <= mu·g/u (> 0)"),
        ParamSpec::number("threshold", "rad/s", 0.05, "dead band on |r − r_ref| (>= 0)"),
        ParamSpec::number("gain", "N*m*s/rad", 5000.0, "brake torque per rad/s of |r − r_ref| beyond the threshold (>= 0)"),
        ParamSpec::number("max_torque", "N*m", 2000.0, "ESC adds brake torque up to this total per wheel (>= 0)"),
        ParamSpec::number("v_min", "m/s", 3.0, "passive below this forward speed (> 0)"),
        ParamSpec::number("axle_hysteresis", "rad/s", 0.02, "while braking, the front/rear choice switches when sign(r − r_ref)·r passes ∓ this (>= 0)"),
    ]
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let enabled = switch(p, "enabled")?;
    let wheelbase = positive_finite(p, "wheelbase")?;
    let k = non_negative_finite(p, "understeer_gradient")?;
    let mu = positive_finite(p, "mu")?;
    let threshold = non_negative_finite(p, "threshold")?;
    let gain = non_negative_finite(p, "gain")?;
    let max_torque = non_negative_finite(p, "max_torque")?;
    let v_min = positive_finite(p, "v_min")?;
    let hysteresis = non_negative_finite(p, "axle_hysteresis")?;
    Ok(Box::new(Esc {
        enabled,
        wheelbase,
        k,
        mu,
        threshold,
        gain,
        max_torque,
        v_min,
        hysteresis,
        armed: false,
        mode: EscMode::Off,
        first: FirstCall::armed(),
    }))
}

/// A 1/0 switch given as a number (a netlist parameter can set it).
pub(crate) fn switch(p: &Params, name: &str) -> Result<bool, ParamError> {
    let v = finite(p, name)?;
    if v == 0.0 || v == 1.0 {
        Ok(v == 1.0)
    } else {
        Err(p.invalid(name, format!("must be 1 (on) or 0 (off), got {v}")))
    }
}

/// A finite number parameter > 0.
pub(crate) fn positive_finite(p: &Params, name: &str) -> Result<f64, ParamError> {
    let v = finite(p, name)?;
    if v > 0.0 {
        Ok(v)
    } else {
        Err(p.invalid(name, format!("must be > 0, got {v}")))
    }
}

/// A finite number parameter >= 0.
pub(crate) fn non_negative_finite(p: &Params, name: &str) -> Result<f64, ParamError> {
    let v = finite(p, name)?;
    if v >= 0.0 {
        Ok(v)
    } else {
        Err(p.invalid(name, format!("must be >= 0, got {v}")))
    }
}

/// What the ESC is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EscMode {
    /// Not braking.
    Off,
    /// Oversteer: braking the outer front wheel.
    Front,
    /// Understeer: braking the inner rear wheel.
    Rear,
}

/// The ESC block.
#[derive(Debug, Clone)]
pub struct Esc {
    enabled: bool,
    wheelbase: f64,
    k: f64,
    mu: f64,
    threshold: f64,
    gain: f64,
    max_torque: f64,
    v_min: f64,
    hysteresis: f64,
    /// `u >= v_min` (located).
    armed: bool,
    mode: EscMode,
    first: FirstCall,
}

impl Esc {
    /// The yaw-rate reference (rad/s) for road-wheel angle `steer` and speed `u`.
    pub fn r_ref(&self, steer: f64, u: f64) -> f64 {
        let lin = u * steer / (self.wheelbase + self.k * u * u);
        if u == 0.0 {
            return lin;
        }
        let lim = self.mu * G / u.abs();
        if lim.is_nan() {
            // A speed that is not a number: so is the reference, and the run ends naming
            // the non-finite value (`clamp` would panic on the NaN bounds).
            return lin;
        }
        lin.clamp(-lim, lim)
    }
    /// The yaw-rate error `r − r_ref` at the inputs of `cx`.
    fn error(&self, cx: &Cx) -> f64 {
        cx.u(2) - self.r_ref(cx.u(0), cx.u(1))
    }
    /// The correction torque (N·m, before the cap) and the braked wheel, in mode `mode`
    /// at error `e`.
    fn correction(&self, mode: EscMode, e: f64) -> (f64, Option<usize>) {
        let right = e > 0.0;
        let wheel = match mode {
            EscMode::Off => return (0.0, None),
            EscMode::Front if right => FR,
            EscMode::Front => FL,
            EscMode::Rear if right => RR,
            EscMode::Rear => RL,
        };
        (self.gain * (e.abs() - self.threshold).max(0.0), Some(wheel))
    }
    /// The mode the inputs ask for, from the current one (see the module docs).
    fn next_mode(&self, armed: bool, e: f64, r: f64) -> EscMode {
        let on = match self.mode {
            EscMode::Off => e.abs() > self.threshold,
            _ => e.abs() >= self.threshold,
        };
        if !armed || !on {
            return EscMode::Off;
        }
        let sr = e.signum() * r;
        match self.mode {
            EscMode::Front if sr >= -self.hysteresis => EscMode::Front,
            EscMode::Rear if sr <= self.hysteresis => EscMode::Rear,
            EscMode::Front => EscMode::Rear,
            EscMode::Rear => EscMode::Front,
            EscMode::Off if sr > 0.0 => EscMode::Front,
            EscMode::Off => EscMode::Rear,
        }
    }
    fn describe(&self, mode: EscMode, e: f64) -> String {
        let (_, w) = self.correction(mode, e);
        match (mode, w) {
            (EscMode::Front, Some(w)) => format!("oversteer: braking {}", WHEELS[w]),
            (EscMode::Rear, Some(w)) => format!("understeer: braking {}", WHEELS[w]),
            _ => "released".into(),
        }
    }
}

impl Block for Esc {
    drivelink_core::run_state!(armed, mode, first);
    fn declare(&self) -> BlockDecl {
        let mut p = vec![
            PortDecl::input("steer").with_unit("rad"),
            PortDecl::input("speed").with_unit("m/s"),
            PortDecl::input("r").with_unit("rad/s"),
            PortDecl::optional_input("ay", 0.0).with_unit("m/s^2"),
        ];
        for w in WHEELS {
            p.push(PortDecl::optional_input(format!("demand_{w}"), 0.0).with_unit("N*m"));
        }
        for w in WHEELS {
            p.push(
                PortDecl::output(w)
                    .with_unit("N*m")
                    .must_drive("an Esc brakes single wheels of a four-wheel car: connect fl, fr, rl and rr to the brake inputs of the front-left, front-right, rear-left and rear-right wheels"),
            );
        }
        let variables = vec![
            VarDecl::new("r_ref", VarSource::Custom(0), "rad/s").doc("yaw-rate reference u·δ/(L + K·u²), limited to mu·g/|u| (+ left)"),
            VarDecl::new("error", VarSource::Custom(1), "rad/s").doc("yaw-rate error r − r_ref (> 0: yawing too far left)"),
            VarDecl::new("active", VarSource::Custom(2), "1").doc("1 while ESC brakes a wheel (located mode)"),
            VarDecl::new("correction", VarSource::Custom(3), "N*m").doc("brake torque ESC asks for, gain·(|error| − threshold), before the max_torque cap; 0 while inactive"),
            VarDecl::new("oversteer", VarSource::Custom(4), "1").doc("1 oversteer (outer front wheel braked), −1 understeer (inner rear), 0 inactive"),
            VarDecl::new("wheel", VarSource::Custom(5), "1").doc("the braked wheel: 1 fl, 2 fr, 3 rl, 4 rr, 0 none"),
            VarDecl::new("armed", VarSource::Custom(6), "1").doc("1 while speed >= v_min and enabled (located), 0 passive"),
            VarDecl::new("beta_rate", VarSource::Custom(7), "rad/s").doc("side-slip rate estimate ay/max(u, v_min) − r (from the ay input; informative, not used by the control)"),
        ];
        BlockDecl {
            ports: p,
            variables,
            outputs: Outputs::Pure,
            pure_guards: true,
            ..BlockDecl::default()
        }
        .guards_named(if self.enabled { 3 } else { 0 }, |i| {
            ["speed", "active", "axle"][i.min(2)].into()
        })
        .feedthrough_by(|input| input != 3)
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        for (i, o) in y.iter_mut().enumerate().take(4) {
            *o = cx.u(DEMAND0 + i);
        }
        if !self.enabled || !self.armed {
            return;
        }
        if let (c, Some(w)) = self.correction(self.mode, self.error(cx)) {
            let d = y[w];
            y[w] = d.max((d + c).min(self.max_torque));
        }
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        if g.len() < 3 {
            return;
        }
        let u = cx.u(1);
        g[0] = if self.armed {
            u - self.v_min
        } else {
            self.v_min - u
        };
        let e = self.error(cx);
        let sr = e.signum() * cx.u(2);
        (g[1], g[2]) = match (self.armed, self.mode) {
            (false, _) => (1.0, 1.0),
            (true, EscMode::Off) => (self.threshold - e.abs(), 1.0),
            (true, EscMode::Front) => (e.abs() - self.threshold, sr + self.hysteresis),
            (true, EscMode::Rear) => (e.abs() - self.threshold, self.hysteresis - sr),
        };
    }
    fn reset(&mut self, _t0: f64) {
        self.armed = false;
        self.mode = EscMode::Off;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        if !self.enabled {
            return false;
        }
        let first = self.first.take();
        let u = cx.u(1);
        // Armed at u = v_min when already armed (or at the start); arming needs u > v_min.
        let armed = if first || self.armed {
            u >= self.v_min
        } else {
            u > self.v_min
        };
        let e = self.error(&cx.view());
        let mode = self.next_mode(armed, e, cx.u(2));
        let mut changed = false;
        if armed != self.armed {
            let what = if armed {
                format!("armed at u = {u} m/s")
            } else {
                format!("passive below v_min (u = {u} m/s)")
            };
            cx.log(EventTag::ZeroCrossing, what);
            self.armed = armed;
            changed = true;
        }
        if mode != self.mode {
            cx.log(EventTag::ZeroCrossing, self.describe(mode, e));
            self.mode = mode;
            changed = true;
        }
        changed
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        let e = self.error(cx);
        let on = self.enabled && self.armed;
        let mode = if on { self.mode } else { EscMode::Off };
        let (c, w) = self.correction(mode, e);
        match i {
            0 => self.r_ref(cx.u(0), cx.u(1)),
            1 => e,
            2 => f64::from(u8::from(mode != EscMode::Off)),
            3 => c,
            4 => match mode {
                EscMode::Off => 0.0,
                EscMode::Front => 1.0,
                EscMode::Rear => -1.0,
            },
            5 => w.map_or(0.0, |w| w as f64 + 1.0),
            6 => f64::from(u8::from(on)),
            7 => cx.u(3) / cx.u(1).max(self.v_min) - cx.u(2),
            _ => f64::NAN,
        }
    }
}
