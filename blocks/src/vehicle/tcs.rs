//! `Tcs`: traction control. Keeps each driven wheel's forward slip near `slip_target` by
//! cutting the engine's throttle and/or braking the spinning wheel.
//!
//! Ports: `w_left[in]`, `w_right[in]` (the driven wheels' spin rates, rad/s),
//! `speed[in]` (the car's forward speed u, m/s), `throttle_demand[in]` (the driver's
//! throttle, [0, 1]) -> `throttle[out]` (to the engine), `brake_left[out]`,
//! `brake_right[out]` (N·m ≥ 0: a `WheelCollider.brake` takes them as they are).
//!
//! # Control law
//!
//! ```text
//! κ_i  = (ω_i·radius − u)/max(|u|, v_min)             slip of wheel i (`slip_left`, ...)
//! e_i  = κ_i − slip_target                             its excess slip
//! E    = max(e_left, e_right)
//! cut  = clamp(engine_kp·E + x_cut, 0, 1)              (`cut`)
//! throttle = throttle_demand·(1 − cut)
//! brake_i  = clamp(brake_kp·e_i + x_i, 0, max_brake_torque)
//! ẋ_cut = engine_ki·E,   ẋ_i = brake_ki·e_i            (anti-windup below)
//! ```
//!
//! The slip is signed like the wheel's drive: reversing with the wheels spinning backwards
//! gives a negative slip, so TCS acts in forward driving only.
//!
//! The engine path acts on the worse wheel, the brake path on each wheel by itself: on a
//! split-μ launch the brake on the spinning wheel is the torque the open differential
//! then passes to the gripping one. `mode` `"engine"` only cuts (no brake torque),
//! `"brake"` only brakes (the throttle is the demand), `"both"` does both.
//!
//! Anti-windup (conditional integration): an integrator stops while its output is
//! saturated in the direction its error pushes (`cut` at 1 with `E > 0`, a brake at
//! `max_brake_torque` with `e_i > 0`), and it never goes below 0 (it stops at 0 while
//! the slip is below the target). So `x_cut` stays in [0, 1] and each `x_i` in
//! [0, max_brake_torque], however long the wheel spins, and nothing is cut or braked in
//! normal driving. `enabled` 0 passes the demand through (no cut, no brake, frozen
//! integrators).

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, ParamDefault, ParamError, ParamKind, ParamSpec,
    Params, PortDecl, Registry, VarDecl, VarSource,
};
use serde_json::json;

use super::esc::{non_negative_finite, positive_finite, switch};
use super::finite;

pub(crate) fn register(r: &mut Registry) {
    r.register(tcs_type());
}

/// The `Tcs` block type: its parameters and how it is built.
fn tcs_type() -> BlockType {
    BlockType {
        name: "Tcs",
        category: "vehicle",
        doc: "Traction control: slip κ = (ω·radius − u)/max(|u|, v_min) of each driven wheel; a PI on the larger excess slip over slip_target cuts the throttle (throttle = demand·(1 − cut)), a PI per wheel on its own excess slip brakes it (capped at max_brake_torque); mode engine / brake / both; conditional-integration anti-windup; enabled 0 passes the demand through.",
        ports_doc: "w_left[in], w_right[in], speed[in], throttle_demand[in] -> throttle[out], brake_left[out], brake_right[out]",
        params: specs(),
        build: BlockBuild::Primitive(build),
    }
}

fn specs() -> Vec<ParamSpec> {
    vec![
        ParamSpec::number(
            "enabled",
            "1",
            1.0,
            "1 on, 0 off (the throttle demand passes through, no brake)",
        ),
        ParamSpec::with(
            "mode",
            ParamKind::Choice(&["both", "engine", "brake"]),
            ParamDefault::Value(json!("both")),
            "engine: cut the throttle only; brake: brake the spinning wheel only; both",
        ),
        ParamSpec::required("radius", "m", "rolling radius of the driven wheels (> 0)"),
        ParamSpec::number(
            "slip_target",
            "1",
            0.1,
            "forward slip ratio held at the driven wheels (>= 0)",
        ),
        ParamSpec::number(
            "engine_kp",
            "1",
            2.0,
            "throttle cut per unit of excess slip (>= 0)",
        ),
        ParamSpec::number(
            "engine_ki",
            "1/s",
            10.0,
            "throttle cut per second per unit of excess slip (>= 0)",
        ),
        ParamSpec::number(
            "brake_kp",
            "N*m",
            2000.0,
            "brake torque per unit of excess slip (>= 0)",
        ),
        ParamSpec::number(
            "brake_ki",
            "N*m/s",
            10000.0,
            "brake torque per second per unit of excess slip (>= 0)",
        ),
        ParamSpec::number(
            "max_brake_torque",
            "N*m",
            1500.0,
            "largest brake torque per wheel (>= 0)",
        ),
        ParamSpec::number(
            "v_min",
            "m/s",
            1.0,
            "floor of the slip's denominator max(|u|, v_min) (> 0)",
        ),
    ]
}

/// Which actuators the TCS uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcsMode {
    Engine,
    Brake,
    Both,
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let mode = match p.text("mode")? {
        "engine" => TcsMode::Engine,
        "brake" => TcsMode::Brake,
        "both" => TcsMode::Both,
        o => return Err(p.invalid("mode", format!("unknown mode '{o}' (engine, brake, both)"))),
    };
    let slip_target = finite(p, "slip_target")?;
    if slip_target < 0.0 {
        return Err(p.invalid("slip_target", format!("must be >= 0, got {slip_target}")));
    }
    Ok(Box::new(Tcs {
        enabled: switch(p, "enabled")?,
        engine: mode != TcsMode::Brake,
        brake: mode != TcsMode::Engine,
        radius: positive_finite(p, "radius")?,
        slip_target,
        engine_kp: non_negative_finite(p, "engine_kp")?,
        engine_ki: non_negative_finite(p, "engine_ki")?,
        brake_kp: non_negative_finite(p, "brake_kp")?,
        brake_ki: non_negative_finite(p, "brake_ki")?,
        max_brake: non_negative_finite(p, "max_brake_torque")?,
        v_min: positive_finite(p, "v_min")?,
    }))
}

/// The TCS block.
#[derive(Debug, Clone)]
pub struct Tcs {
    enabled: bool,
    /// Whether the engine path (throttle cut) acts.
    engine: bool,
    /// Whether the brake path acts.
    brake: bool,
    radius: f64,
    slip_target: f64,
    engine_kp: f64,
    engine_ki: f64,
    brake_kp: f64,
    brake_ki: f64,
    max_brake: f64,
    v_min: f64,
}

/// States: the throttle cut's integral, then the left and right brakes' integrals.
const X_CUT: usize = 0;
const X_LEFT: usize = 1;

/// A PI output `kp·e + x` clamped to `[0, max]`, and the integrator's rate with the
/// anti-windup of the module docs.
fn pi(kp: f64, ki: f64, max: f64, e: f64, x: f64) -> (f64, f64) {
    let raw = kp * e + x;
    let out = raw.clamp(0.0, max);
    let hold = (e > 0.0 && (raw >= max || x >= max)) || (e < 0.0 && x <= 0.0);
    (out, if hold { 0.0 } else { ki * e })
}

impl Tcs {
    /// The slip ratio of a wheel spinning at `w` (rad/s) on a car at `u` (m/s).
    pub fn slip(&self, w: f64, u: f64) -> f64 {
        (w * self.radius - u) / u.abs().max(self.v_min)
    }
    /// The excess slips `(e_left, e_right)` at the inputs of `cx`.
    fn excess(&self, cx: &Cx) -> [f64; 2] {
        let u = cx.u(2);
        [
            self.slip(cx.u(0), u) - self.slip_target,
            self.slip(cx.u(1), u) - self.slip_target,
        ]
    }
    /// The cut and its integrator's rate.
    fn cut(&self, cx: &Cx, e: [f64; 2]) -> (f64, f64) {
        if !(self.enabled && self.engine) {
            return (0.0, 0.0);
        }
        pi(
            self.engine_kp,
            self.engine_ki,
            1.0,
            e[0].max(e[1]),
            cx.x[X_CUT],
        )
    }
    /// Wheel `i`'s brake torque and its integrator's rate.
    fn brake(&self, cx: &Cx, e: [f64; 2], i: usize) -> (f64, f64) {
        if !(self.enabled && self.brake) {
            return (0.0, 0.0);
        }
        pi(
            self.brake_kp,
            self.brake_ki,
            self.max_brake,
            e[i],
            cx.x[X_LEFT + i],
        )
    }
}

impl Block for Tcs {
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("w_left").with_unit("rad/s"),
            PortDecl::input("w_right").with_unit("rad/s"),
            PortDecl::input("speed").with_unit("m/s"),
            PortDecl::input("throttle_demand").with_unit("1"),
            PortDecl::output("throttle").with_unit("1"),
            PortDecl::output("brake_left").with_unit("N*m"),
            PortDecl::output("brake_right").with_unit("N*m"),
        ];
        let variables = vec![
            VarDecl::new("slip_left", VarSource::Custom(0), "1")
                .doc("left driven wheel's slip ratio (ω·radius − u)/max(|u|, v_min)"),
            VarDecl::new("slip_right", VarSource::Custom(1), "1")
                .doc("right driven wheel's slip ratio"),
            VarDecl::new("cut", VarSource::Custom(2), "1")
                .doc("throttle cut in [0, 1]: throttle = throttle_demand·(1 − cut)"),
            VarDecl::new("active", VarSource::Custom(3), "1")
                .doc("1 while TCS cuts the throttle or brakes a wheel"),
            VarDecl::new("cut_integral", VarSource::Custom(4), "1")
                .doc("the throttle cut's integrator state, in [0, 1]"),
            VarDecl::new("brake_integral_left", VarSource::Custom(5), "N*m")
                .doc("the left brake's integrator state, in [0, max_brake_torque]"),
            VarDecl::new("brake_integral_right", VarSource::Custom(6), "N*m")
                .doc("the right brake's integrator state, in [0, max_brake_torque]"),
        ];
        BlockDecl {
            ports,
            states: 3,
            variables,
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let e = self.excess(cx);
        y[0] = cx.u(3) * (1.0 - self.cut(cx, e).0);
        y[1] = self.brake(cx, e, 0).0;
        y[2] = self.brake(cx, e, 1).0;
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        let e = self.excess(cx);
        dx[X_CUT] = self.cut(cx, e).1;
        dx[X_LEFT] = self.brake(cx, e, 0).1;
        dx[X_LEFT + 1] = self.brake(cx, e, 1).1;
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        let u = cx.u(2);
        match i {
            0 => self.slip(cx.u(0), u),
            1 => self.slip(cx.u(1), u),
            2 => self.cut(cx, self.excess(cx)).0,
            3 => {
                let e = self.excess(cx);
                let on = self.cut(cx, e).0 > 0.0
                    || self.brake(cx, e, 0).0 > 0.0
                    || self.brake(cx, e, 1).0 > 0.0;
                f64::from(u8::from(on))
            }
            4..=6 => cx.x[i - 4],
            _ => f64::NAN,
        }
    }
}
