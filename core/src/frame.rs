//! Rigid bodies: the state and Newton–Euler dynamics behind the `frame` port kind.
//!
//! All `frame` ports joined by one line are one 6-DOF rigid body owned by the model (not a
//! node of the shaft network: bodies are not constrained to shafts). Its 13 continuous
//! states, in this order, are
//!
//! ```text
//! [x, y, z | qw, qx, qy, qz | vx, vy, vz | p, q, r]
//! ```
//!
//! the world position of the centre of mass (m), the attitude as a unit quaternion
//! (body → world; every reader renormalises it, and its derivative carries a small term
//! pulling `|q|` back to 1, so it stays on its manifold without a singularity), the world
//! velocity of the centre of mass (m/s) and the angular velocity in body axes (rad/s).
//! Axes: world `x` forward at start, `y` left, `z` up, gravity [`G`] along −z unless the
//! body's `RigidBody.gravity` tilts it (a slope: the world axes are then the road's, the
//! ground stays `z = 0`); body axes ISO 8855 (`x` forward, `y` left, `z` up), origin at
//! the centre of mass. Potential energy is `−m·g⃗·p`.
//!
//! Dynamics (Newton–Euler with the gyroscopic term, principal axes = body axes):
//! `m·v̇ = F + m·g`, `I·ω̇ = M − ω × (I·ω)`, `ṗ = v`, `q̇ = ½·q ⊗ (0, ω)`, with `F` the sum of
//! the world forces the blocks apply and `M` the sum of their moments about the centre of
//! mass in body axes ([`crate::block::Forces::add_frame_force`]).

/// Standard gravity, m/s², along the world's −z axis.
pub const G: f64 = 9.80665;
/// Continuous states per body.
pub const FRAME_STATES: usize = 13;
/// Loads accumulated per body per evaluation: world force (3), body moment (3).
pub const FRAME_LOADS: usize = 6;
/// Rate (1/s) of the term that pulls the quaternion's norm back to 1.
const NORM_RATE: f64 = 1.0;

/// A 3-vector.
pub type V3 = [f64; 3];

/// Cross product `a × b`.
#[inline]
pub fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Dot product.
#[inline]
pub fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `a + b`.
#[inline]
pub fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// `s·a`.
#[inline]
pub fn scale(s: f64, a: V3) -> V3 {
    [s * a[0], s * a[1], s * a[2]]
}

/// The pose and velocity of one body, read from its states (quaternion renormalised).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameState {
    pos: V3,
    /// Unit quaternion `(w, x, y, z)`, body → world.
    quat: [f64; 4],
    /// The same rotation as a matrix (rows), built once: every block asking for body
    /// points and axes rotates several vectors (a wheel four per evaluation).
    rot: [V3; 3],
    vel: V3,
    omega: V3,
}

impl Default for FrameState {
    /// At the origin, level, at rest.
    fn default() -> Self {
        let mut s = [0.0; FRAME_STATES];
        s[3] = 1.0;
        FrameState::from_slice(&s)
    }
}

impl FrameState {
    /// From a body's 13 states (see the module docs). A zero quaternion reads as identity.
    #[inline]
    pub fn from_slice(s: &[f64]) -> FrameState {
        let q = [s[3], s[4], s[5], s[6]];
        let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
        let quat = if n > 0.0 && n.is_finite() {
            [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
        } else {
            [1.0, 0.0, 0.0, 0.0]
        };
        FrameState {
            pos: [s[0], s[1], s[2]],
            quat,
            rot: rotation(quat),
            vel: [s[7], s[8], s[9]],
            omega: [s[10], s[11], s[12]],
        }
    }
    /// The poses of consecutive bodies' states (13 each) into `out` (one per body).
    pub fn fill(frames: &[f64], out: &mut [FrameState]) {
        for (st, s) in out.iter_mut().zip(frames.chunks_exact(FRAME_STATES)) {
            *st = FrameState::from_slice(s);
        }
    }
    /// The poses of consecutive bodies' states, as a new vector.
    pub fn all(frames: &[f64]) -> Vec<FrameState> {
        frames
            .chunks_exact(FRAME_STATES)
            .map(FrameState::from_slice)
            .collect()
    }
    /// Initial states of a body at `pos` with heading `yaw` (rad, about world z), velocity
    /// `v_body` and angular velocity `omega` in body axes.
    pub fn initial(pos: V3, yaw: f64, v_body: V3, omega: V3) -> [f64; FRAME_STATES] {
        let (s, c) = (0.5 * yaw).sin_cos();
        let quat = [c, 0.0, 0.0, s];
        let st = FrameState {
            pos,
            quat,
            rot: rotation(quat),
            vel: [0.0; 3],
            omega,
        };
        let v = st.to_world(v_body);
        [
            pos[0], pos[1], pos[2], c, 0.0, 0.0, s, v[0], v[1], v[2], omega[0], omega[1], omega[2],
        ]
    }
    /// World position of the centre of mass, m.
    pub fn pos(&self) -> V3 {
        self.pos
    }
    /// World velocity of the centre of mass, m/s.
    pub fn vel(&self) -> V3 {
        self.vel
    }
    /// Angular velocity in body axes, rad/s.
    pub fn omega(&self) -> V3 {
        self.omega
    }
    /// The unit attitude quaternion `(w, x, y, z)`, body → world.
    pub fn quat(&self) -> [f64; 4] {
        self.quat
    }
    /// The rotation body → world as a matrix of rows: `to_world(v)[i] == dot(rotation()[i], v)`.
    /// Row 2 holds the world heights of the body axes (`rotation()[2][2]` is how upright
    /// the body's z axis stands).
    #[inline]
    pub fn rotation(&self) -> &[V3; 3] {
        &self.rot
    }
    /// A body-axes vector in world axes.
    #[inline]
    pub fn to_world(&self, v: V3) -> V3 {
        let r = &self.rot;
        [dot(r[0], v), dot(r[1], v), dot(r[2], v)]
    }
    /// A world-axes vector in body axes.
    #[inline]
    pub fn to_body(&self, v: V3) -> V3 {
        let r = &self.rot;
        [
            r[0][0] * v[0] + r[1][0] * v[1] + r[2][0] * v[2],
            r[0][1] * v[0] + r[1][1] * v[1] + r[2][1] * v[2],
            r[0][2] * v[0] + r[1][2] * v[1] + r[2][2] * v[2],
        ]
    }
    /// World position of the body point `r` (body axes, from the centre of mass).
    #[inline]
    pub fn point(&self, r: V3) -> V3 {
        add(self.pos, self.to_world(r))
    }
    /// World velocity of the body point `r`.
    #[inline]
    pub fn point_velocity(&self, r: V3) -> V3 {
        add(self.vel, self.to_world(cross(self.omega, r)))
    }
    /// The world vertical component of [`FrameState::point_velocity`] (its third entry,
    /// computed the same way).
    #[inline]
    pub fn point_vertical_velocity(&self, r: V3) -> f64 {
        self.vel[2] + dot(self.rot[2], cross(self.omega, r))
    }
    /// Euler angles `(roll, pitch, yaw)` (Z-Y-X, yaw first), yaw in (−π, π].
    pub fn euler(&self) -> V3 {
        let [w, x, y, z] = self.quat;
        let roll = (2.0 * (w * x + y * z)).atan2(1.0 - 2.0 * (x * x + y * y));
        let pitch = (2.0 * (w * y - z * x)).clamp(-1.0, 1.0).asin();
        let yaw = (2.0 * (w * z + x * y)).atan2(1.0 - 2.0 * (y * y + z * z));
        [roll, pitch, yaw]
    }
}

/// The rotation matrix (rows) of the unit quaternion `(w, x, y, z)`.
#[inline]
fn rotation([w, x, y, z]: [f64; 4]) -> [V3; 3] {
    let (xx, yy, zz) = (x * x, y * y, z * z);
    let (xy, xz, yz) = (x * y, x * z, y * z);
    let (wx, wy, wz) = (w * x, w * y, w * z);
    [
        [1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy)],
        [2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx)],
        [2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy)],
    ]
}

/// Standard gravity as a world vector, m/s²: [`G`] along −z.
pub const STANDARD_GRAVITY: V3 = [0.0, 0.0, -G];

/// Mass properties of one body.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MassProps {
    /// Mass, kg.
    pub mass: f64,
    /// Principal moments of inertia about the centre of mass in body axes, kg·m².
    pub inertia: V3,
    /// Gravity acting on the body, world axes, m/s² ([`STANDARD_GRAVITY`] unless a
    /// `RigidBody` tilts it, e.g. to put the ground plane on a slope).
    pub gravity: V3,
}

impl MassProps {
    /// Kinetic energy (translation + rotation) of a body in state `s`, J.
    pub fn kinetic_energy(&self, s: &[f64]) -> f64 {
        let st = FrameState::from_slice(s);
        let (v, w, i) = (st.vel, st.omega, self.inertia);
        0.5 * self.mass * dot(v, v)
            + 0.5 * (i[0] * w[0] * w[0] + i[1] * w[1] * w[1] + i[2] * w[2] * w[2])
    }
    /// Potential energy of gravity `−m·g⃗·p` (`m·g·z` for standard gravity), J.
    pub fn potential_energy(&self, s: &[f64]) -> f64 {
        -self.mass * dot(self.gravity, [s[0], s[1], s[2]])
    }
    /// State derivatives `dx` (13) and accelerations `acc` (6: the world `v̇` of the centre
    /// of mass, gravity's part included, then the body `ω̇`) of a body in state `s` under
    /// the world force `force` and the body moment `moment` of the blocks (gravity is
    /// added here).
    #[inline]
    pub fn derivatives(&self, s: &[f64], force: V3, moment: V3, dx: &mut [f64], acc: &mut [f64]) {
        let q = [s[3], s[4], s[5], s[6]];
        let w = [s[10], s[11], s[12]];
        let n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
        let k = NORM_RATE * (1.0 - n2);
        dx[0] = s[7];
        dx[1] = s[8];
        dx[2] = s[9];
        // q̇ = ½ q ⊗ (0, ω) + k·q
        dx[3] = 0.5 * (-q[1] * w[0] - q[2] * w[1] - q[3] * w[2]) + k * q[0];
        dx[4] = 0.5 * (q[0] * w[0] + q[2] * w[2] - q[3] * w[1]) + k * q[1];
        dx[5] = 0.5 * (q[0] * w[1] + q[3] * w[0] - q[1] * w[2]) + k * q[2];
        dx[6] = 0.5 * (q[0] * w[2] + q[1] * w[1] - q[2] * w[0]) + k * q[3];
        let inv_m = 1.0 / self.mass;
        let g = self.gravity;
        dx[7] = force[0] * inv_m + g[0];
        dx[8] = force[1] * inv_m + g[1];
        dx[9] = force[2] * inv_m + g[2];
        let i = self.inertia;
        let iw = [i[0] * w[0], i[1] * w[1], i[2] * w[2]];
        let gyro = cross(w, iw);
        for a in 0..3 {
            dx[10 + a] = (moment[a] - gyro[a]) / i[a];
        }
        acc[..3].copy_from_slice(&dx[7..10]);
        acc[3..6].copy_from_slice(&dx[10..13]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotations_are_inverse_and_yaw_turns_forward_to_left() {
        let s = FrameState::initial(
            [1.0, 2.0, 3.0],
            std::f64::consts::FRAC_PI_2,
            [5.0, 0.0, 0.0],
            [0.0; 3],
        );
        let st = FrameState::from_slice(&s);
        let vw = st.vel();
        // Round-off of the rotation matrix: a few ulps of the speed (5 m/s).
        let ulps = 4.0 * f64::EPSILON * 5.0;
        assert!(vw[0].abs() < ulps && (vw[1] - 5.0).abs() < ulps, "{vw:?}");
        let v = [0.3, -0.7, 1.1];
        let back = st.to_body(st.to_world(v));
        for a in 0..3 {
            assert!((back[a] - v[a]).abs() < 1e-15);
        }
        let e = st.euler();
        assert!((e[2] - std::f64::consts::FRAC_PI_2).abs() < 1e-15);
        assert!(e[0].abs() < 1e-15 && e[1].abs() < 1e-15);
    }

    #[test]
    fn rotation_matrix_is_the_quaternion_sandwich_product() {
        // An arbitrary attitude: q ⊗ (0, v) ⊗ q* computed as Hamilton products.
        let mut s = [0.0; FRAME_STATES];
        s[3..7].copy_from_slice(&[0.9, -0.2, 0.3, 0.25]);
        let st = FrameState::from_slice(&s);
        let q = st.quat();
        let mul = |a: [f64; 4], b: [f64; 4]| {
            [
                a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
            ]
        };
        let v = [0.3, -0.7, 1.1];
        let p = mul(mul(q, [0.0, v[0], v[1], v[2]]), [q[0], -q[1], -q[2], -q[3]]);
        let w = st.to_world(v);
        for a in 0..3 {
            assert!((w[a] - p[a + 1]).abs() < 1e-15, "{w:?} vs {p:?}");
        }
        let back = st.to_body(w);
        for a in 0..3 {
            assert!((back[a] - v[a]).abs() < 1e-15);
        }
    }

    #[test]
    fn vertical_point_velocity_has_the_bits_of_the_full_vector() {
        // A tumbling, translating body: the vertical part alone is the full vector's third
        // entry to the bit (a wheel's load after the network solve reads it alone).
        let mut s = [0.0; FRAME_STATES];
        s[3..7].copy_from_slice(&[0.9, -0.2, 0.3, 0.25]);
        s[7..10].copy_from_slice(&[12.0, -0.4, 0.07]);
        s[10..13].copy_from_slice(&[0.3, -1.2, 0.8]);
        let st = FrameState::from_slice(&s);
        for r in [[1.2, 0.8, -0.35], [-1.5, -0.8, -0.1], [0.0, 0.0, 0.0]] {
            let v = st.point_velocity(r);
            assert_eq!(st.point_vertical_velocity(r).to_bits(), v[2].to_bits());
            assert_ne!(v[2], 0.0);
        }
    }
}
