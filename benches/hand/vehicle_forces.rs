//! The vehicle full car's body forces written by hand: `vd_full_car.json`'s rigid body
//! (Newton–Euler, unit quaternion), its four wheel colliders on the ground plane `z = 0`
//! (suspension along the body's −z axis, friction-circle tire on the Unity curves) and its
//! aero, as plain Rust with the netlist's parameters as constants. One call of
//! [`Car::eval`] is what drivelink computes for these blocks in one model evaluation:
//! the body's 13 state derivatives and each hub's spin acceleration (brakes released).
//!
//! The equations are drivelink's (see `blocks/src/vehicle/wheel_collider.rs`): the same
//! formulas in the same order, so the results agree to rounding. A wheel is on the ground
//! while its suspension ray meets the plane (body z axis up, mount above the ground) and
//! its compression is `≥ 0` (drivelink's contact mode before the run's initial event).

/// Standard gravity, m/s².
const G: f64 = 9.80665;
/// Rate (1/s) of the term that pulls the quaternion's norm back to 1.
const NORM_RATE: f64 = 1.0;
/// Bump-stop stiffness as a multiple of the spring rate.
const BUMP_STOP: f64 = 10.0;
/// The least world height of the body's z axis at which the ray points down.
const AXIS_DOWN: f64 = 1e-6;

type V3 = [f64; 3];

/// One Unity friction curve (values per unit load, stiffness 1), as drivelink's circle
/// law evaluates it: `curve(ρ·xe)/ρ` on the normalized slip `ρ`.
#[derive(Clone, Copy)]
struct Curve {
    ye: f64,
    ya: f64,
    inv_xe: f64,
    rho_a: f64,
    k_fall: f64,
}

impl Curve {
    const fn new(xe: f64, ye: f64, xa: f64, ya: f64) -> Curve {
        Curve {
            ye,
            ya,
            inv_xe: 1.0 / xe,
            rho_a: xa / xe,
            k_fall: xe / (xa - xe),
        }
    }
    #[inline]
    fn per_rho(&self, rho: f64) -> f64 {
        if rho < 1.0 {
            self.ye * (1.0 + rho - rho * rho)
        } else if rho < self.rho_a {
            let a = (rho - 1.0) * self.k_fall;
            (self.ye + (self.ya - self.ye) * a * a * (3.0 - 2.0 * a)) / rho
        } else {
            self.ya / rho
        }
    }
}

/// One wheel: mount point (body axes), spring rate.
struct Wheel {
    center: V3,
    spring: f64,
}

const RADIUS: f64 = 0.33;
const TRAVEL: f64 = 0.3;
const TARGET: f64 = 0.3;
const DAMPER: f64 = 4000.0;
const SPIN_DAMPING: f64 = 0.25;
/// `0.5·mass·radius²` with the default wheel mass 20 kg.
const SPIN_INERTIA: f64 = 0.5 * 20.0 * RADIUS * RADIUS;
const FORWARD: Curve = Curve::new(0.4, 1.0, 0.8, 0.5);
const SIDEWAYS: Curve = Curve::new(0.2, 1.0, 0.5, 0.75);
const MASS: f64 = 1500.0;
const INERTIA: V3 = [550.0, 2400.0, 2600.0];
const DRAG_AREA: f64 = 0.7;
const LIFT_AREA: f64 = 0.3;
const AIR_DENSITY: f64 = 1.2;
/// fl, fr, rl, rr: `k_spring·b` in front, `k_spring·a` behind (30000 N/m², a 1.2, b 1.5).
const WHEELS: [Wheel; 4] = [
    Wheel {
        center: [1.2, 0.8, -0.1],
        spring: 30000.0 * 1.5,
    },
    Wheel {
        center: [1.2, -0.8, -0.1],
        spring: 30000.0 * 1.5,
    },
    Wheel {
        center: [-1.5, 0.8, -0.1],
        spring: 30000.0 * 1.2,
    },
    Wheel {
        center: [-1.5, -0.8, -0.1],
        spring: 30000.0 * 1.2,
    },
];

/// What one evaluation gives.
#[derive(Debug, Clone, Copy, Default)]
pub struct Out {
    /// The body's 13 state derivatives.
    pub dx: [f64; 13],
    /// Each hub's spin acceleration, rad/s² (fl, fr, rl, rr).
    pub hub_acc: [f64; 4],
    /// Each wheel's `(fx, fy, fz)`, N.
    pub tire: [V3; 4],
}

/// The hand-written car (stateless: the parameters are constants).
pub struct Car;

#[inline]
fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

impl Car {
    /// The body state `s` (13: position, quaternion, world velocity, body rates), the hub
    /// spins `w` (rad/s) and the front wheels' steer angles (rad).
    #[inline(never)]
    pub fn eval(s: &[f64; 13], w: &[f64; 4], steer: [f64; 2]) -> Out {
        let mut out = Out::default();
        let q = [s[3], s[4], s[5], s[6]];
        let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
        let [qw, qx, qy, qz] = [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
        let r = [
            [
                1.0 - 2.0 * (qy * qy + qz * qz),
                2.0 * (qx * qy - qw * qz),
                2.0 * (qx * qz + qw * qy),
            ],
            [
                2.0 * (qx * qy + qw * qz),
                1.0 - 2.0 * (qx * qx + qz * qz),
                2.0 * (qy * qz - qw * qx),
            ],
            [
                2.0 * (qx * qz - qw * qy),
                2.0 * (qy * qz + qw * qx),
                1.0 - 2.0 * (qx * qx + qy * qy),
            ],
        ];
        let vel = [s[7], s[8], s[9]];
        let om = [s[10], s[11], s[12]];
        let to_world = |v: V3| -> V3 {
            [
                r[0][0] * v[0] + r[0][1] * v[1] + r[0][2] * v[2],
                r[1][0] * v[0] + r[1][1] * v[1] + r[1][2] * v[2],
                r[2][0] * v[0] + r[2][1] * v[1] + r[2][2] * v[2],
            ]
        };
        let to_body = |v: V3| -> V3 {
            [
                r[0][0] * v[0] + r[1][0] * v[1] + r[2][0] * v[2],
                r[0][1] * v[0] + r[1][1] * v[1] + r[2][1] * v[2],
                r[0][2] * v[0] + r[1][2] * v[1] + r[2][2] * v[2],
            ]
        };
        let mut force = [0.0; 3];
        let mut moment = [0.0; 3];
        let zz = r[2][2];
        for (i, wh) in WHEELS.iter().enumerate() {
            let mut fx = 0.0;
            let c = wh.center;
            let hc = s[2] + (r[2][0] * c[0] + r[2][1] * c[1] + r[2][2] * c[2]);
            let inv_zz = 1.0 / zz;
            let comp = TRAVEL + RADIUS - hc * inv_zz;
            if zz > AXIS_DOWN && hc >= 0.0 && comp >= 0.0 {
                // The contact on the suspension axis and its velocity.
                let g = [c[0], c[1], c[2] - (TRAVEL + RADIUS - comp)];
                let wr = to_world(cross(om, g));
                let vg = [vel[0] + wr[0], vel[1] + wr[1], vel[2] + wr[2]];
                let cdot = -vg[2] * inv_zz;
                let bump = BUMP_STOP * wh.spring * (comp - TRAVEL).max(0.0);
                let susp = wh.spring * (comp - TARGET * TRAVEL) + DAMPER * cdot + bump;
                let fz = susp.max(0.0) * inv_zz;
                // The steered heading on the ground, and the slips.
                let d = if i < 2 { steer[i] } else { 0.0 };
                let (hx, hy) = if d == 0.0 {
                    (r[0][0], r[1][0])
                } else {
                    let (sd, cd) = d.sin_cos();
                    (r[0][0] * cd + r[0][1] * sd, r[1][0] * cd + r[1][1] * sd)
                };
                let inv = 1.0 / (hx * hx + hy * hy).sqrt();
                let (hx, hy) = (hx * inv, hy * inv);
                let sx = RADIUS * w[i] - (vg[0] * hx + vg[1] * hy);
                let sy = vg[1] * hx - vg[0] * hy;
                // The friction circle.
                let (nx, ny) = (sx * FORWARD.inv_xe, sy * SIDEWAYS.inv_xe);
                let rho = (nx * nx + ny * ny).sqrt();
                fx = nx * FORWARD.per_rho(rho) * fz;
                let fy = -ny * SIDEWAYS.per_rho(rho) * fz;
                let f = [fx * hx + fy * -hy, fx * hy + fy * hx, fz];
                let m = cross(g, to_body(f));
                for a in 0..3 {
                    force[a] += f[a];
                    moment[a] += m[a];
                }
                out.tire[i] = [fx, fy, fz];
            }
            out.hub_acc[i] = (-fx * RADIUS - SPIN_DAMPING * w[i]) / SPIN_INERTIA;
        }
        // Aero at the centre of mass: drag against the velocity, downforce along −z_body.
        let v2 = vel[0] * vel[0] + vel[1] * vel[1] + vel[2] * vel[2];
        let drag = -0.5 * AIR_DENSITY * DRAG_AREA * v2.sqrt();
        let down = 0.5 * AIR_DENSITY * LIFT_AREA * v2;
        for a in 0..3 {
            force[a] += drag * vel[a] + down * -r[a][2];
        }
        // Newton–Euler.
        let k = NORM_RATE * (1.0 - (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]));
        let dx = &mut out.dx;
        dx[..3].copy_from_slice(&vel);
        dx[3] = 0.5 * (-q[1] * om[0] - q[2] * om[1] - q[3] * om[2]) + k * q[0];
        dx[4] = 0.5 * (q[0] * om[0] + q[2] * om[2] - q[3] * om[1]) + k * q[1];
        dx[5] = 0.5 * (q[0] * om[1] + q[3] * om[0] - q[1] * om[2]) + k * q[2];
        dx[6] = 0.5 * (q[0] * om[2] + q[1] * om[1] - q[2] * om[0]) + k * q[3];
        dx[7] = force[0] / MASS;
        dx[8] = force[1] / MASS;
        dx[9] = force[2] / MASS - G;
        let iw = [INERTIA[0] * om[0], INERTIA[1] * om[1], INERTIA[2] * om[2]];
        let gyro = cross(om, iw);
        for a in 0..3 {
            dx[10 + a] = (moment[a] - gyro[a]) / INERTIA[a];
        }
        out
    }
}
