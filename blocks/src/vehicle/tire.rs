//! `Tire`: longitudinal tire contact with the Unity wheel-collider friction curve.
//!
//! Ports: `hub[rot]`, `body[trans]`, `normal_force[in]` (N, < 0 taken as 0),
//! `mu_scale[in]` (optional, default 1; < 0 taken as 0) -> `slip[out]` (m/s).
//! Variables: `slip`, `force` (on the body, N), `w` (hub speed), `mode`
//! (−1/+1 sliding, 0 rolling, 2 free).
//!
//! # Friction curve
//!
//! With `xe, ye` = extremum slip/value, `xa, ya` = asymptote slip/value and `s = |slip|`
//! (the PhysX 2.8 / Unity ≤ 4 `hermiteEval` form):
//!
//! ```text
//! s < xe:       a = s/xe,            c = ye·(−a³ + a² + a)        c(0) = 0, c'(xe) = 0
//! xe <= s < xa: a = (s−xe)/(xa−xe),  c = ye + (ya − ye)·(3a² − 2a³)  zero slope at both ends
//! s >= xa:      c = ya                                             flat beyond
//! curve(slip) = sign(slip)·c                                       odd in slip
//! ```
//!
//! The force on the body is `F = curve(slip)·k`, `k = stiffness·mu_scale·normal_force`: a
//! wheel spinning faster than the road (`slip > 0`) pushes the car forward, a braked wheel
//! (`slip < 0`) holds it back; the hub receives `−F·r`.
//!
//! # Contact as a friction joint (design)
//!
//! The contact is a friction joint of the mechanical network on the row
//! `slip = r·w_hub − v_body` (`[(hub, r), (body, −1)]`), so zero slip is handled exactly by
//! the network's stuck/slip event machine instead of a stiff regularized curve:
//! - **rolling (locked)**: the joint holds `slip = 0` while the needed traction lies within
//!   `±extremum_value·k` (the static limit is the curve's peak);
//! - **sliding**: the kinetic force opposes the slip with magnitude
//!   `k·curve(max(|slip|, extremum_slip))`: the curve itself beyond the extremum (falling
//!   branch and flat asymptote), the peak value on the rising branch;
//! - it re-locks when the slip crosses zero; it is **free** (no force) when `k = 0`
//!   (`stiffness = 0`, no grip, or a lifted wheel with zero normal force).
//!
//! Why the rising branch is not used while sliding: the curve's rising branch models the
//! elastic tread deflection at small slip, which here is the rigid rolling state. Sliding on
//! it would make the force vanish with the slip (`c ≈ ye·|slip|/xe`), so a skidding car (or
//! a wheel spinning back up under ABS) would approach zero slip only exponentially: no
//! finite-time lock, endless creep at standstill, and a force dip from the peak to 0 at
//! every break-away. With the peak value there, break-away is continuous (static limit =
//! kinetic force at zero slip), the slip reaches zero in finite time, and a car braked or
//! driven to rest comes exactly to rest (a locked brake and a locked tire leave no free
//! motion) and does not chatter at standstill.

use drivelink_core::{
    Block, Cx, FrictionDecl, FrictionLaw, FrictionVar, MechDecl, ParamError, ParamSpec, Params,
    PortDecl, Registry, Row, VarDecl, VarSource,
};

use super::{finite, reg};

/// Default extremum slip (m/s): Unity 5+ forward-friction default.
pub const DEFAULT_EXTREMUM_SLIP: f64 = 0.4;
/// Default extremum value (friction coefficient at the peak).
pub const DEFAULT_EXTREMUM_VALUE: f64 = 1.0;
/// Default asymptote slip (m/s).
pub const DEFAULT_ASYMPTOTE_SLIP: f64 = 0.8;
/// Default asymptote value.
pub const DEFAULT_ASYMPTOTE_VALUE: f64 = 0.5;

/// The two-piece Unity wheel friction curve (odd in `slip`), before `stiffness`.
/// Requires `0 < xe < xa` (validated by the block).
#[inline]
pub fn friction_curve(slip: f64, xe: f64, ye: f64, xa: f64, ya: f64) -> f64 {
    let s = slip.abs();
    let c = if s < xe {
        let a = s / xe;
        ye * (-a * a * a + a * a + a)
    } else if s < xa {
        let a = (s - xe) / (xa - xe);
        ye + (ya - ye) * (3.0 * a * a - 2.0 * a * a * a)
    } else {
        ya
    };
    if slip < 0.0 {
        -c
    } else {
        c
    }
}

pub(crate) fn register(r: &mut Registry) {
    reg(
        r,
        "Tire",
        "Longitudinal tire: Unity wheel-collider friction curve on slip velocity r·w − v (m/s); force = curve·stiffness·mu_scale·normal_force on the body, −force·r on the hub. Pure rolling is an exact locked state up to the curve's peak.",
        "hub[rot], body[trans], normal_force[in], mu_scale[in] (optional, 1) -> slip[out]",
        vec![
            ParamSpec::number("radius", "m", 0.3, "rolling radius (> 0)"),
            ParamSpec::number("extremum_slip", "m/s", DEFAULT_EXTREMUM_SLIP, "slip velocity of the curve's extremum (> 0)"),
            ParamSpec::number("extremum_value", "1", DEFAULT_EXTREMUM_VALUE, "friction coefficient at the extremum (>= 0); also the static (rolling) limit"),
            ParamSpec::number("asymptote_slip", "m/s", DEFAULT_ASYMPTOTE_SLIP, "slip velocity of the asymptote, flat beyond (> extremum_slip)"),
            ParamSpec::number("asymptote_value", "1", DEFAULT_ASYMPTOTE_VALUE, "friction coefficient at and beyond the asymptote (>= 0)"),
            ParamSpec::number("stiffness", "1", 1.0, "multiplier of extremum and asymptote values (>= 0); 0 disables all friction"),
            ParamSpec::number("inertia", "kg*m^2", 0.0, "wheel inertia added to the hub (>= 0); 0 = provide an Inertia block"),
            ParamSpec::optional("v0", drivelink_core::ParamKind::Number { unit: "m/s" }, "initial rolling speed: sets the hub speed to v0/radius"),
        ],
        build,
    );
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let r = p.positive("radius")?;
    let xe = p.positive("extremum_slip")?;
    let xa = p.positive("asymptote_slip")?;
    if !(xa > xe) {
        return Err(p.invalid(
            "asymptote_slip",
            format!("must be > extremum_slip ({xe}), got {xa}"),
        ));
    }
    let ye = p.non_negative("extremum_value")?;
    let ya = p.non_negative("asymptote_value")?;
    let stiffness = p.non_negative("stiffness")?;
    let inertia = p.non_negative("inertia")?;
    for (n, v) in [
        ("radius", r),
        ("extremum_slip", xe),
        ("asymptote_slip", xa),
        ("extremum_value", ye),
        ("asymptote_value", ya),
        ("stiffness", stiffness),
        ("inertia", inertia),
    ] {
        if !v.is_finite() {
            return Err(p.invalid(n, format!("must be finite, got {v}")));
        }
    }
    let w0 = match p.opt_num("v0")? {
        Some(_) => Some(finite(p, "v0")? / r),
        None => None,
    };
    Ok(Box::new(Tire {
        r,
        xe,
        ye,
        xa,
        ya,
        stiffness,
        inertia,
        w0,
    }))
}

/// The tire block.
#[derive(Debug, Clone)]
pub struct Tire {
    r: f64,
    xe: f64,
    ye: f64,
    xa: f64,
    ya: f64,
    stiffness: f64,
    inertia: f64,
    w0: Option<f64>,
}

impl Tire {
    /// Grip scale `k = stiffness·mu_scale·N` (N), from the inputs.
    #[inline]
    fn grip(&self, cx: &Cx) -> f64 {
        let n = cx.u(0);
        let mu = cx.u(1);
        let n = if n.is_finite() { n.max(0.0) } else { 0.0 };
        let mu = if mu.is_finite() { mu.max(0.0) } else { 0.0 };
        self.stiffness * mu * n
    }
}

impl Block for Tire {
    fn type_name(&self) -> &'static str {
        "Tire"
    }
    fn ports(&self) -> Vec<PortDecl> {
        vec![
            PortDecl::rot("hub"),
            PortDecl::trans("body"),
            PortDecl::input("normal_force"),
            PortDecl::optional_input("mu_scale", 1.0),
            PortDecl::output("slip"),
        ]
    }
    fn feedthrough(&self, _input: usize) -> bool {
        false
    }
    fn mech(&self) -> MechDecl {
        let mut m = MechDecl {
            frictions: vec![FrictionDecl {
                row: Row(vec![(0, self.r), (1, -1.0)]),
                label: String::new(),
            }],
            ..Default::default()
        };
        if self.inertia > 0.0 {
            m.masses.push((0, self.inertia));
        }
        if let Some(w0) = self.w0 {
            m.initial.push((0, w0, 0.0));
        }
        m
    }
    fn friction(&self, _k: usize, cx: &Cx, w_rel: f64) -> FrictionLaw {
        let k = self.grip(cx);
        let kinetic =
            friction_curve(w_rel.abs().max(self.xe), self.xe, self.ye, self.xa, self.ya) * k;
        let cap = self.ye * k;
        FrictionLaw {
            kinetic,
            lo: -cap,
            hi: cap,
            engagement: k,
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = self.r * cx.v(0) - cx.v(1);
    }
    fn variables(&self) -> Vec<VarDecl> {
        vec![
            VarDecl::new("slip", VarSource::Custom(0), "m/s")
                .doc("slip velocity r·w − v (positive driving)"),
            VarDecl::new("force", VarSource::Custom(1), "N")
                .doc("longitudinal tire force on the body"),
            VarDecl::new("w", VarSource::Speed(0), "rad/s").doc("wheel speed"),
            VarDecl::new("mode", VarSource::Friction(0, FrictionVar::Mode), "1")
                .doc("contact mode: 0 rolling (stuck), ±1 sliding"),
        ]
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        match i {
            0 => self.r * cx.v(0) - cx.v(1),
            // The joint torque tau acts as +r·tau on the hub and −tau on the body.
            _ => -cx.lambda(0),
        }
    }
}
