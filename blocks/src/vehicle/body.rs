//! `VehicleBody`: longitudinal vehicle dynamics with aerodynamic drag, grade and per-axle
//! normal loads with load transfer.
//!
//! Ports: `body[trans]` -> `normal_front[out]`, `normal_rear[out]` (N per axle).
//! Variables: `v`, `s`, `a` (body acceleration), `a_lagged`, `drag` (N, resisting force).
//!
//! ```text
//! m·dv/dt = F_x − F_d − m·g·sin θ,       F_d = ½·ρ·drag_area·v·|v|
//! N_front = [ b·m·g·cos θ − h·(F_d + m·g·sin θ + m·a_lag) ] / (a + b)
//! N_rear  = [ a·m·g·cos θ + h·(F_d + m·g·sin θ + m·a_lag) ] / (a + b)
//! τ_a·d(a_lag)/dt = a_body − a_lag
//! ```
//!
//! `F_x` is the sum of the forces the tires apply to the `body` node; the mass `m` is on that
//! node. `a`, `b` are the distances of the centre of gravity to the front and rear axle, `h`
//! its height, θ the grade (positive uphill). Normal loads are clamped at 0 (an axle lifts).
//!
//! Load transfer without an algebraic loop: the normal loads feed the tires' grip, which
//! sets the acceleration. Instead of solving that loop, the measured acceleration (`cx.a`
//! after the network solve) drives a first-order lag `a_lag` with time constant
//! `load_transfer_lag` (default 0.02 s, of the order of a car's pitch response). The
//! outputs are functions of states only (no feedthrough, no network output). `a_lag`
//! starts at `a0`, by default 0, a body without pitch: right for a launch from rest (the
//! pitch builds up with the lag), while a run that starts at speed with drag or on a grade
//! (already decelerating before t = 0) has the load transfer of that deceleration build up
//! over the first few lag time constants (65 N on a 1000 kg car coasting from 30 m/s)
//! unless `a0` gives the run's initial acceleration.

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, Forces, MechDecl, ParamError, ParamSpec, Params,
    PortDecl, Registry, VarDecl, VarSource,
};

use super::finite;

/// Standard gravity (m/s²).
pub const G: f64 = 9.80665;

pub(crate) fn register(r: &mut Registry) {
    r.register(vehicle_body_type());
}

/// The `VehicleBody` block type: its parameters and how it is built.
fn vehicle_body_type() -> BlockType {
    BlockType {
        name: "VehicleBody",
        category: "vehicle",
        doc: "Longitudinal vehicle body: mass m with drag ½ρ·drag_area·v|v| and grade m·g·sin θ; per-axle normal loads with load transfer from a lagged acceleration.",
        ports_doc: "body[trans] -> normal_front[out], normal_rear[out]",
        params: vec![
            ParamSpec::number("m", "kg", 1200.0, "vehicle mass (> 0)"),
            ParamSpec::number("a", "m", 1.4, "distance from the centre of gravity to the front axle (>= 0)"),
            ParamSpec::number("b", "m", 1.6, "distance from the centre of gravity to the rear axle (>= 0, a + b > 0)"),
            ParamSpec::number("h", "m", 0.5, "height of the centre of gravity (>= 0)"),
            ParamSpec::number("drag_area", "m^2", 0.8, "drag coefficient times frontal area Cd·A (>= 0)"),
            ParamSpec::number("air_density", "kg/m^3", 1.2, "air density ρ (>= 0)"),
            ParamSpec::number("grade", "rad", 0.0, "road grade angle θ, positive uphill (|θ| < π/2; write \"5 deg\")"),
            ParamSpec::number("g", "m/s^2", G, "gravitational acceleration (>= 0)"),
            ParamSpec::number("v0", "m/s", 0.0, "initial velocity"),
            ParamSpec::number("s0", "m", 0.0, "initial position"),
            ParamSpec::number("load_transfer_lag", "s", 0.02, "time constant of the acceleration lag used for load transfer (> 0); the lag starts at a0, so a run starting at speed with a0 = 0 builds its load transfer up over a few time constants. An explicit method steps at most about 3.3·lag while the lag is excited: a longitudinal model that does not use the axle loads may set it to 1 s"),
            ParamSpec::number("a0", "m/s^2", 0.0, "initial value of the lagged acceleration the load transfer follows (0: no pitch at the start, right for a launch from rest; the run's initial acceleration, e.g. −drag/m for a car coasting at v0, starts with the load transfer settled)"),
        ],
        build: BlockBuild::Primitive(build),
    }
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let m = p.positive("m")?;
    let a = p.non_negative("a")?;
    let b = p.non_negative("b")?;
    if !(a + b > 0.0) {
        return Err(p.invalid("b", "a + b (the wheelbase) must be > 0"));
    }
    let h = p.non_negative("h")?;
    let cda = p.non_negative("drag_area")?;
    let rho = p.non_negative("air_density")?;
    let grade = finite(p, "grade")?;
    if grade.abs() >= std::f64::consts::FRAC_PI_2 {
        return Err(p.invalid("grade", format!("must be an angle in rad with |grade| < π/2, got {grade} (write \"5 deg\" for degrees)")));
    }
    let g = p.non_negative("g")?;
    let tau = p.positive("load_transfer_lag")?;
    for (n, v) in [
        ("m", m),
        ("a", a),
        ("b", b),
        ("h", h),
        ("drag_area", cda),
        ("air_density", rho),
        ("g", g),
        ("load_transfer_lag", tau),
    ] {
        if !v.is_finite() {
            return Err(p.invalid(n, format!("must be finite, got {v}")));
        }
    }
    Ok(Box::new(VehicleBody {
        m,
        a,
        b,
        h,
        k_drag: 0.5 * rho * cda,
        sin: grade.sin(),
        cos: grade.cos(),
        g,
        v0: finite(p, "v0")?,
        s0: finite(p, "s0")?,
        tau,
        a0: finite(p, "a0")?,
    }))
}

/// The vehicle body block.
#[derive(Debug, Clone)]
pub struct VehicleBody {
    m: f64,
    a: f64,
    b: f64,
    h: f64,
    /// ½ρ·Cd·A.
    k_drag: f64,
    sin: f64,
    cos: f64,
    g: f64,
    v0: f64,
    s0: f64,
    tau: f64,
    /// Initial lagged acceleration, m/s².
    a0: f64,
}

impl VehicleBody {
    #[inline]
    fn drag(&self, v: f64) -> f64 {
        self.k_drag * v * v.abs()
    }
    /// (front, rear) axle loads for speed `v` and lagged acceleration `al`.
    #[inline]
    pub fn loads(&self, v: f64, al: f64) -> (f64, f64) {
        let w = self.m * self.g;
        let pitch = self.h * (self.drag(v) + w * self.sin + self.m * al);
        let l = self.a + self.b;
        (
            ((self.b * w * self.cos - pitch) / l).max(0.0),
            ((self.a * w * self.cos + pitch) / l).max(0.0),
        )
    }
}

impl Block for VehicleBody {
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::trans("body"),
            PortDecl::output("normal_front"),
            PortDecl::output("normal_rear"),
        ];
        let variables = vec![
            VarDecl::new("v", VarSource::Speed(0), "m/s").doc("vehicle speed"),
            VarDecl::new("s", VarSource::Position(0), "m").doc("distance travelled"),
            VarDecl::new("a", VarSource::Accel(0), "m/s^2").doc("acceleration"),
            VarDecl::new("a_lagged", VarSource::Custom(0), "m/s^2")
                .doc("acceleration through the load-transfer lag"),
            VarDecl::new("drag", VarSource::Custom(1), "N")
                .doc("aerodynamic drag force (opposes motion)"),
        ];
        let mech = MechDecl {
            masses: vec![(0, self.m)],
            initial: vec![(0, self.v0, self.s0)],
            has_forces: true,
            ..Default::default()
        };
        BlockDecl {
            ports,
            states: 1,
            variables,
            mech,
            ..BlockDecl::default()
        }
    }
    fn initial_states(&self, x: &mut [f64]) {
        x[0] = self.a0;
    }
    fn forces(&self, cx: &Cx, f: &mut Forces) {
        f.add(0, -self.drag(cx.v(0)) - self.m * self.g * self.sin);
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let (nf, nr) = self.loads(cx.v(0), cx.x[0]);
        y[0] = nf;
        y[1] = nr;
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        let a = cx.a(0);
        dx[0] = if a.is_finite() {
            (a - cx.x[0]) / self.tau
        } else {
            0.0
        };
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        match i {
            0 => cx.x[0],
            _ => self.drag(cx.v(0)),
        }
    }
    fn potential_energy(&self, cx: &Cx) -> f64 {
        // Height gained along the grade.
        self.m * self.g * self.sin * cx.q(0)
    }
}
