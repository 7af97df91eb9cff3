//! `RigidBody`: mass and inertia of the 6-DOF body of a `frame` line, and its outputs.
//!
//! Port: `frame[frame]`. The block adds its mass `m` and principal inertia `[Ixx, Iyy,
//! Izz]` (about the centre of mass, body axes) to the body of its frame line and gives the
//! body's initial pose and velocity (position `x0, y0, z0`, heading `yaw0` about the world
//! z axis, forward speed `v0` along body x, body angular velocity `p0, q0, r0`). Axes and
//! the dynamics are in [`drivelink_core::frame`]: world `x` forward at start, `y` left, `z`
//! up, gravity 9.80665 m/s² along −z; body axes ISO 8855 (x forward, y left, z up).
//! `gravity` (default `[0, 0, −9.80665]` m/s², world axes, Unity's `Physics.gravity`)
//! tilts gravity against the ground plane `z = 0`: a road of grade θ rising along +x is
//! `[−g·sin θ, 0, −g·cos θ]`, and the world axes are then the road's.
//!
//! Variables: `x, y, z` (world position of the centre of mass), `vx, vy, vz` (world
//! velocity), `u, v, w` (velocity in body axes), `speed`, `roll, pitch, yaw` (Z-Y-X Euler
//! angles of the attitude; `yaw` continuous, not wrapped), `p, q, r` (body angular
//! velocity), `ax, ay, az` (time derivative of the centre of mass's world velocity in body
//! axes: a body in free fall has `az = −9.80665`; gravity is not removed as an
//! accelerometer would), `beta` (side-slip angle `atan2(v, u)`, NaN — undefined, a gap
//! in scopes — while the horizontal speed `√(u² + v²)` is below 0.1 m/s).
//!
//! The block's one state tracks the number of turns of `yaw`: its derivative is the Euler
//! yaw rate `(q·sin φ + r·cos φ)/cos θ` (with `cos θ` kept away from 0), and the output
//! is the quaternion's yaw shifted by the multiple of 2π nearest to that state, so `yaw`
//! itself is exact and continuous.

use std::f64::consts::PI;

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, BodyDecl, Cx, FrameState, MechDecl, ParamDefault,
    ParamError, ParamKind, ParamSpec, Params, PortDecl, Registry, VarDecl, VarSource,
};

use drivelink_core::G;

use super::finite;

/// Horizontal speed below which the side-slip angle `beta` is undefined (NaN), m/s.
pub const BETA_MIN_SPEED: f64 = 0.1;

pub(crate) fn register(r: &mut Registry) {
    r.register(rigid_body_type());
}

/// The `RigidBody` block type: its parameters and how it is built.
fn rigid_body_type() -> BlockType {
    BlockType {
        name: "RigidBody",
        category: "vehicle",
        doc: "Mass and inertia of the 6-DOF rigid body of its frame line (Newton–Euler with gyroscopic terms, unit quaternion attitude, gravity 9.80665 m/s² along world −z unless the gravity parameter tilts it for a slope), its initial pose and velocity, and its outputs: position, attitude (roll, pitch, continuous yaw), velocities in world and body axes, body rates, accelerations, side-slip angle.",
        ports_doc: "frame[frame]",
        params: vec![
            ParamSpec::required("m", "kg", "mass (> 0): the whole vehicle's mass"),
            ParamSpec {
                name: "inertia",
                kind: ParamKind::Vector { unit: "kg*m^2" },
                default: ParamDefault::Required,
                doc: "[Ixx, Iyy, Izz]: principal moments of inertia about the centre of mass in body axes (> 0)",
            },
            ParamSpec::number("x0", "m", 0.0, "initial world x of the centre of mass"),
            ParamSpec::number("y0", "m", 0.0, "initial world y of the centre of mass"),
            ParamSpec::required("z0", "m", "initial height of the centre of mass above the ground"),
            ParamSpec::number("yaw0", "rad", 0.0, "initial heading about the world z axis (positive turns left)"),
            ParamSpec::number("v0", "m/s", 0.0, "initial forward speed along body x"),
            ParamSpec::number("p0", "rad/s", 0.0, "initial roll rate (body x)"),
            ParamSpec::number("q0", "rad/s", 0.0, "initial pitch rate (body y)"),
            ParamSpec::number("r0", "rad/s", 0.0, "initial yaw rate (body z)"),
            ParamSpec {
                name: "gravity",
                kind: ParamKind::Vector { unit: "m/s^2" },
                default: ParamDefault::Value(serde_json::json!([0.0, 0.0, -G])),
                doc: "[gx, gy, gz]: gravity in world axes (Unity's Physics.gravity). The ground is the plane z = 0 of the world axes, so a road of grade θ rising along +x is [−g·sin θ, 0, −g·cos θ] (the world axes are then the road's)",
            },
        ],
        build: BlockBuild::Primitive(build),
    }
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let m = p.positive("m")?;
    if !m.is_finite() {
        return Err(p.invalid("m", format!("must be finite, got {m}")));
    }
    let iv = p.vector("inertia")?;
    if iv.len() != 3 || iv.iter().any(|&i| !(i > 0.0 && i.is_finite())) {
        return Err(p.invalid(
            "inertia",
            format!("must be [Ixx, Iyy, Izz], three finite numbers > 0, got {iv:?}"),
        ));
    }
    let gv = p.vector("gravity")?;
    if gv.len() != 3 || gv.iter().any(|g| !g.is_finite()) {
        return Err(p.invalid(
            "gravity",
            format!("must be [gx, gy, gz], three finite numbers, got {gv:?}"),
        ));
    }
    let n = |k: &str| finite(p, k);
    Ok(Box::new(RigidBody {
        gravity: [gv[0], gv[1], gv[2]],
        m,
        inertia: [iv[0], iv[1], iv[2]],
        pos0: [n("x0")?, n("y0")?, n("z0")?],
        yaw0: n("yaw0")?,
        v0: n("v0")?,
        w0: [n("p0")?, n("q0")?, n("r0")?],
    }))
}

/// The rigid-body block.
#[derive(Debug, Clone)]
pub struct RigidBody {
    gravity: [f64; 3],
    m: f64,
    inertia: [f64; 3],
    pos0: [f64; 3],
    yaw0: f64,
    v0: f64,
    w0: [f64; 3],
}

const VARS: [(&str, &str, &str); 20] = [
    ("x", "m", "world x of the centre of mass"),
    ("y", "m", "world y of the centre of mass (left)"),
    ("z", "m", "height of the centre of mass"),
    ("vx", "m/s", "world x velocity"),
    ("vy", "m/s", "world y velocity"),
    ("vz", "m/s", "world z velocity (up)"),
    ("u", "m/s", "forward velocity (body x)"),
    ("v", "m/s", "lateral velocity (body y, left)"),
    ("w", "m/s", "vertical velocity (body z, up)"),
    ("speed", "m/s", "magnitude of the velocity"),
    (
        "roll",
        "rad",
        "roll angle (Z-Y-X Euler; positive: right side down)",
    ),
    (
        "pitch",
        "rad",
        "pitch angle (Z-Y-X Euler; positive: nose down)",
    ),
    (
        "yaw",
        "rad",
        "heading (Z-Y-X Euler, continuous: not wrapped; positive turns left)",
    ),
    ("p", "rad/s", "roll rate (body x)"),
    ("q", "rad/s", "pitch rate (body y)"),
    ("r", "rad/s", "yaw rate (body z; positive turns left)"),
    (
        "ax",
        "m/s^2",
        "longitudinal acceleration: d(world velocity)/dt in body x",
    ),
    (
        "ay",
        "m/s^2",
        "lateral acceleration: d(world velocity)/dt in body y (left)",
    ),
    (
        "az",
        "m/s^2",
        "vertical acceleration: d(world velocity)/dt in body z (−9.80665 in free fall)",
    ),
    (
        "beta",
        "rad",
        "side-slip angle atan2(v, u); NaN (undefined: a gap in plots) below 0.1 m/s horizontal speed",
    ),
];

/// Euler yaw rate `(q·sin φ + r·cos φ)/cos θ` with `cos θ` kept at least 1e-6, as the
/// time derivative of the quaternion's yaw `ψ = atan2(N, D)`, `N = 2(w·z + x·y)`,
/// `D = 1 − 2(y² + z²)`, along `q̇ = ½ q ⊗ (0, ω)`: `ψ̇ = (Ṅ·D − N·Ḋ)/(N² + D²)`, where
/// `N² + D² = cos²θ` (the same value without a sine, cosine or arc tangent).
fn yaw_rate(st: &FrameState) -> f64 {
    let [w, x, y, z] = st.quat();
    let [p, q, r] = st.omega();
    // q̇ = ½ q ⊗ (0, ω)
    let dw = 0.5 * (-x * p - y * q - z * r);
    let dx = 0.5 * (w * p + y * r - z * q);
    let dy = 0.5 * (w * q + z * p - x * r);
    let dz = 0.5 * (w * r + x * q - y * p);
    let n = 2.0 * (w * z + x * y);
    let d = 1.0 - 2.0 * (y * y + z * z);
    let dn = 2.0 * (dw * z + w * dz + dx * y + x * dy);
    let dd = -4.0 * (y * dy + z * dz);
    (dn * d - n * dd) / (n * n + d * d).max(1e-12)
}

impl RigidBody {
    /// The continuous yaw: the quaternion's yaw `y` (in (−π, π]) shifted by the multiple
    /// of 2π nearest to the tracked value `tracked`.
    fn unwrapped_yaw(y: f64, tracked: f64) -> f64 {
        y + 2.0 * PI * ((tracked - y) / (2.0 * PI)).round()
    }
    /// Variable `i` at this instant; `euler`: the attitude's Euler angles, computed at the
    /// first variable that needs them and kept for the others of the same instant (roll,
    /// pitch and yaw share two arc tangents and an arc sine).
    fn var_with(&self, cx: &Cx, i: usize, euler: &mut Option<[f64; 3]>) -> f64 {
        let st = cx.frame(0);
        let body_v = || st.to_body(st.vel());
        match i {
            0..=2 => st.pos()[i],
            3..=5 => st.vel()[i - 3],
            6..=8 => body_v()[i - 6],
            9 => {
                let v = st.vel();
                (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
            }
            10 | 11 => euler.get_or_insert_with(|| st.euler())[i - 10],
            12 => Self::unwrapped_yaw(euler.get_or_insert_with(|| st.euler())[2], cx.x[0]),
            13..=15 => st.omega()[i - 13],
            16..=18 => st.to_body(cx.frame_acc(0).0)[i - 16],
            19 => {
                let v = body_v();
                if v[0].hypot(v[1]) < BETA_MIN_SPEED {
                    // Undefined at standstill: NaN, a gap in scopes and plots.
                    f64::NAN
                } else {
                    v[1].atan2(v[0])
                }
            }
            _ => f64::NAN,
        }
    }
}

impl Block for RigidBody {
    fn declare(&self) -> BlockDecl {
        let variables = VARS
            .iter()
            .enumerate()
            .map(|(i, (n, u, d))| {
                let v = VarDecl::new(*n, VarSource::Custom(i), u).doc(d);
                // The accelerations (ax, ay, az) need the network's solve; everything else
                // is a function of the body's state.
                if (16..=18).contains(&i) {
                    v
                } else {
                    v.from_state()
                }
            })
            .collect();
        let mech = MechDecl {
            bodies: vec![BodyDecl {
                port: 0,
                mass: self.m,
                inertia: self.inertia,
                initial: Some(FrameState::initial(
                    self.pos0,
                    self.yaw0,
                    [self.v0, 0.0, 0.0],
                    self.w0,
                )),
                gravity: Some(self.gravity),
            }],
            ..Default::default()
        };
        BlockDecl {
            ports: vec![PortDecl::frame("frame")],
            states: 1,
            variables,
            mech,
            ..BlockDecl::default()
        }
    }
    fn initial_states(&self, x: &mut [f64]) {
        x[0] = self.yaw0;
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        dx[0] = yaw_rate(cx.frame(0));
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        self.var_with(cx, i, &mut None)
    }
    fn vars(&self, cx: &Cx, which: &[usize], out: &mut [f64]) {
        // Recording logs roll, pitch and yaw together: one set of Euler angles for them.
        let mut euler = None;
        for (o, &i) in out.iter_mut().zip(which) {
            *o = self.var_with(cx, i, &mut euler);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drivelink_core::frame::FRAME_STATES;

    #[test]
    fn yaw_rate_is_the_euler_rate_without_trigonometry() {
        // (q·sin φ + r·cos φ)/cos θ at arbitrary attitudes and body rates.
        for (quat, omega) in [
            ([0.9, -0.2, 0.3, 0.25], [0.4, -1.3, 0.7]),
            ([0.2, 0.1, -0.05, 0.97], [-2.0, 0.5, 3.0]),
            ([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.5]),
            ([0.7, 0.7, 0.1, -0.1], [1.0, 1.0, -1.0]),
        ] {
            let mut s = [0.0; FRAME_STATES];
            s[3..7].copy_from_slice(&quat);
            s[10..13].copy_from_slice(&omega);
            let st = FrameState::from_slice(&s);
            let [roll, pitch, _] = st.euler();
            let w = st.omega();
            let euler = (w[1] * roll.sin() + w[2] * roll.cos()) / pitch.cos();
            let got = yaw_rate(&st);
            assert!(
                (got - euler).abs() <= 1e-12 * euler.abs().max(1.0),
                "{quat:?} {omega:?}: {got} vs {euler}"
            );
        }
    }

    /// `vars` computes the Euler angles once for roll, pitch and yaw: it gives exactly
    /// what `var` gives, in any order and mixed with the other variables.
    #[test]
    fn vars_equal_var_bit_for_bit() {
        let mut b: Box<dyn Block> = Box::new(RigidBody {
            gravity: [0.0, 0.0, -G],
            m: 1500.0,
            inertia: [550.0, 2400.0, 2600.0],
            pos0: [0.0; 3],
            yaw0: 0.0,
            v0: 0.0,
            w0: [0.0; 3],
        });
        let mut p = drivelink_core::probe::Probe::new(b.as_mut());
        let mut s = [0.0; FRAME_STATES];
        s[0..3].copy_from_slice(&[12.0, -3.0, 0.55]);
        s[3..7].copy_from_slice(&[0.2, 0.1, -0.05, 0.97]);
        s[7..10].copy_from_slice(&[8.0, 14.0, -0.3]);
        s[10..13].copy_from_slice(&[0.1, -0.2, 0.9]);
        // A tracked yaw one turn ahead: the logged yaw is unwrapped by 2π.
        p.frame_state(0, &s).states(&[2.0 * PI + 2.7]);
        for which in [
            vec![10, 11, 12],
            vec![12, 0, 10, 19, 11, 9],
            vec![11],
            (0..20).collect::<Vec<_>>(),
        ] {
            let (one, all) = p.with_cx(|cx| {
                let one: Vec<f64> = which.iter().map(|&i| p.block().var(cx, i)).collect();
                let mut all = vec![f64::NAN; which.len()];
                p.block().vars(cx, &which, &mut all);
                (one, all)
            });
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&one), bits(&all), "which {which:?}");
        }
        // The yaw is the quaternion's, one turn up (the tracked value is near 2π + 2.7).
        let e = p.with_cx(|cx| cx.frame(0).euler());
        let yaw = p.with_cx(|cx| p.block().var(cx, 12));
        assert_eq!(yaw, e[2] + 2.0 * PI);
        assert!((yaw - (2.0 * PI + 2.7)).abs() < PI);
    }
}
