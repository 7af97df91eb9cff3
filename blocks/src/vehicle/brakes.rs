//! `BrakeSystem`: brake pedal and handbrake to per-wheel brake torques (Vehicle Physics Pro
//! brakes settings).
//!
//! Ports: `pedal[in]` (0..1), `handbrake[in]` (0..1, optional, default 0; both clamped) -> `front[out]`,
//! `rear[out]`, `neutral[out]` (N·m per wheel, >= 0). Variables: `front`, `rear`, `neutral`
//! (the outputs).
//!
//! ```text
//! front   = pedal·max_brake_torque·brake_bias       + handbrake·handbrake_torque·h_front
//! rear    = pedal·max_brake_torque·(1 − brake_bias) + handbrake·handbrake_torque·h_rear
//! neutral = pedal·max_brake_torque/2                + handbrake·handbrake_torque·min(h_front, h_rear)
//! h_front = min(1, 2·handbrake_axle),  h_rear = min(1, 2·(1 − handbrake_axle))
//! ```
//!
//! Each wheel of an axle receives its axle's torque regardless of the number of wheels;
//! bias 0.5 gives `max_brake_torque/2` per wheel on both axles, the torque neutral wheels
//! always get. Handbrake axle 0 = rear only, 1 = front only, 0.5 = both (and the neutral
//! wheels, as a parking brake on every wheel) apply the full handbrake torque, which adds to
//! the pedal torque.

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, ParamError, ParamSpec, Params, PortDecl, Registry,
};

use super::in_range;

pub(crate) fn register(r: &mut Registry) {
    r.register(brake_system_type());
}

/// The `BrakeSystem` block type: its parameters and how it is built.
fn brake_system_type() -> BlockType {
    BlockType {
        name: "BrakeSystem",
        category: "vehicle",
        doc: "Brake pedal and handbrake to per-wheel brake torques: front = pedal·max·bias, rear = pedal·max·(1−bias), neutral = pedal·max/2, plus handbrake torque on the handbrake axle(s).",
        ports_doc: "pedal[in], handbrake[in] -> front[out], rear[out], neutral[out]",
        params: vec![
            ParamSpec::number("max_brake_torque", "N*m", 2000.0, "brake torque split between front and rear by the bias (>= 0)"),
            ParamSpec::number("brake_bias", "1", 0.7, "front share of the brake torque, 1 = front, 0 = rear, in [0, 1]"),
            ParamSpec::number("handbrake_torque", "N*m", 1500.0, "torque per wheel with the handbrake fully applied, added to the pedal torque (>= 0)"),
            ParamSpec::number("handbrake_axle", "1", 0.0, "axle(s) of the handbrake: 0 = rear, 0.5 = all, 1 = front, in [0, 1]"),
        ],
        build: BlockBuild::Primitive(build),
    }
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let max = in_range(p, "max_brake_torque", 0.0, f64::MAX)?;
    let bias = in_range(p, "brake_bias", 0.0, 1.0)?;
    let hb = in_range(p, "handbrake_torque", 0.0, f64::MAX)?;
    let axle = in_range(p, "handbrake_axle", 0.0, 1.0)?;
    Ok(Box::new(BrakeSystem {
        max,
        bias,
        hb,
        h_front: (2.0 * axle).min(1.0),
        h_rear: (2.0 * (1.0 - axle)).min(1.0),
    }))
}

/// The brake system block.
#[derive(Debug, Clone)]
pub struct BrakeSystem {
    max: f64,
    bias: f64,
    hb: f64,
    h_front: f64,
    h_rear: f64,
}

fn unit(u: f64) -> f64 {
    if u.is_nan() {
        0.0
    } else {
        u.clamp(0.0, 1.0)
    }
}

impl BrakeSystem {
    /// (front, rear, neutral) per-wheel torques.
    pub fn torques(&self, pedal: f64, handbrake: f64) -> (f64, f64, f64) {
        let (p, h) = (unit(pedal), unit(handbrake));
        let t = p * self.max;
        let hb = h * self.hb;
        (
            t * self.bias + hb * self.h_front,
            t * (1.0 - self.bias) + hb * self.h_rear,
            0.5 * t + hb * self.h_front.min(self.h_rear),
        )
    }
}

impl Block for BrakeSystem {
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("pedal"),
            PortDecl::optional_input("handbrake", 0.0),
            PortDecl::output("front"),
            PortDecl::output("rear"),
            PortDecl::output("neutral"),
        ];
        BlockDecl {
            ports,
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let (f, r, n) = self.torques(cx.u(0), cx.u(1));
        y[0] = f;
        y[1] = r;
        y[2] = n;
    }
}
