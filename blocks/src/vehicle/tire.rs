//! `Tire`: longitudinal tire contact with the Unity wheel-collider friction curve.
//!
//! Ports: `hub[rot]`, `body[trans]`, `normal_force[in]` (N, < 0 taken as 0),
//! `mu_scale[in]` (optional, default 1; < 0 taken as 0) -> `slip[out]` (m/s),
//! `peak_slip[out]` (m/s, the curve's `extremum_slip`, for `Abs.peak_slip`).
//! Variables: `slip`, `force` (on the body, N), `w` (hub speed), `mode` (−1 braking slip,
//! +1 driving slip, 0 stuck, 2 no grip), `sticky` (1 in the low-speed regime, else 0).
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
//! (`slip < 0`) holds it back; the hub receives `−F·r`. The whole curve is used, the rising
//! branch included: a rolling tire transmits a force only through a slip (`c ≈ ye·slip/xe`
//! for small slip), continuously through zero slip.
//!
//! # Low speed and rest (design)
//!
//! A force law on slip velocity alone cannot hold a car at rest: holding a parked or braked
//! car on a slope needs a force at zero slip, so the car would creep at the slip the force
//! needs, and a car braked to rest would only approach rest exponentially (the force
//! vanishes with the speed). Below the speed at which the curve peaks, the slip velocity
//! also cannot reach the peak without one surface moving backwards (`|slip| <= 2·v_ref`).
//! drivelink therefore gives the contact a low-speed regime, in the spirit of PhysX's sticky
//! tyre, with `v_ref = max(|v_body|, |r·w_hub|)` (the faster of the two surfaces):
//!
//! - **Above `extremum_slip`** (`v_ref >= xe`): the true curve, `F = curve(slip)·k`.
//! - **Below it** (`v_ref < xe`): the curve is evaluated at the slip measured relative to the
//!   speed, `slip·xe/v_ref` (continuous with the true curve at `v_ref = xe`): a skid with one
//!   surface at rest (`|slip| = v_ref`) gets the peak force, a wheel rolling slowly is stiffer
//!   than at speed. The force stays bounded (`|slip·xe/v_ref| <= 2·xe`) and the law has no
//!   singularity: at `v_ref = 0` a sliding contact transmits the peak force.
//! - **Stiction at rest**: in this regime the contact is also a friction joint that can stick
//!   (`slip = 0` exactly) while the needed force stays within the peak `ye·k`. A car braked
//!   to rest reaches it in finite time (the skid force is the peak, not one that vanishes
//!   with the speed), the slip's located zero crossing locks the contact, and the car then
//!   stays exactly at rest, also on a slope whose pull is within the peak grip: no creep, no
//!   chatter. A stuck contact breaks away (continuously: the kinetic force at break-away from
//!   rest is the same peak) when the needed force exceeds the peak, and it unsticks when
//!   `v_ref` leaves the regime (the force then drops to the curve's value at zero slip, 0,
//!   and the slip builds up on the rising branch).
//!
//! The regime is a discrete mode of the block (`sticky`), switched at the located crossings
//! of `v_ref = xe` (relative hysteresis 1e-6). Above it the contact is the same friction
//! joint with a zero static range: it never sticks, and a zero crossing of the slip (from
//! driving to braking) is just a located event.
//!
//! Where this differs from the peers: Unity's and PhysX 2.8's slip-velocity curve has no rest
//! handling of its own (PhysX 2.8 uses a low-speed static friction mode with `ye` as the
//! friction coefficient, PhysX 3+ replaces the forces by velocity constraints after a
//! time below a threshold speed). Here the regime and its threshold are the curve's own
//! extremum slip, with no extra parameter, and the result is an exact rest.

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, EventCx, Feedthrough, FrictionDecl, FrictionLaw,
    FrictionVar, MechDecl, ParamError, ParamSpec, Params, PortDecl, Registry, Row, VarDecl,
    VarSource,
};

use super::finite;
use crate::signal::FirstCall;
use crate::util::{hysteresis_guard, hysteresis_mode};

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

/// The slip at which the curve is evaluated for a contact slip `slip = r·w − v` when the
/// faster surface moves at `v_ref = max(|v_body|, |r·w|)`: `slip` itself at `v_ref >= xe`,
/// `slip·xe/v_ref` below (the low-speed regime, see the module docs), magnitude `xe` at
/// `v_ref = 0` (a contact breaking away from rest). Returns a magnitude (>= 0).
#[inline]
pub fn curve_slip(slip: f64, v_ref: f64, xe: f64) -> f64 {
    let s = slip.abs();
    if v_ref >= xe {
        s
    } else if v_ref > 0.0 {
        s * xe / v_ref
    } else {
        xe
    }
}

/// Relative hysteresis of the sticky regime's threshold `v_ref = extremum_slip`.
const STICKY_BAND: f64 = 1e-6;

pub(crate) fn register(r: &mut Registry) {
    r.register(tire_type());
}

/// The `Tire` block type: its parameters and how it is built.
fn tire_type() -> BlockType {
    BlockType {
        name: "Tire",
        category: "vehicle",
        doc: "Longitudinal tire: Unity wheel-collider friction curve (the whole two-piece Hermite curve) on slip velocity r·w − v (m/s); force = curve(slip)·stiffness·mu_scale·normal_force on the body, −force·r on the hub. Below extremum_slip (speed of the faster surface) the slip is measured relative to that speed and the contact sticks at rest up to the peak force, so a car braked to rest stays exactly at rest.",
        ports_doc: "hub[rot], body[trans], normal_force[in], mu_scale[in] (optional, 1) -> slip[out], peak_slip[out]",
        params: vec![
            ParamSpec::number("radius", "m", 0.3, "rolling radius (> 0)"),
            ParamSpec::number("extremum_slip", "m/s", DEFAULT_EXTREMUM_SLIP, "slip velocity of the curve's extremum (> 0); also the speed below which the low-speed (sticky) regime applies; output as peak_slip"),
            ParamSpec::number("extremum_value", "1", DEFAULT_EXTREMUM_VALUE, "friction coefficient at the extremum (>= 0); also the static limit at rest"),
            ParamSpec::number("asymptote_slip", "m/s", DEFAULT_ASYMPTOTE_SLIP, "slip velocity of the asymptote, flat beyond (> extremum_slip)"),
            ParamSpec::number("asymptote_value", "1", DEFAULT_ASYMPTOTE_VALUE, "friction coefficient at and beyond the asymptote (>= 0)"),
            ParamSpec::number("stiffness", "1", 1.0, "multiplier of extremum and asymptote values (>= 0); 0 disables all friction"),
            ParamSpec::number("inertia", "kg*m^2", 0.0, "wheel inertia added to the hub (>= 0); 0 = provide an Inertia block"),
            ParamSpec::optional("v0", drivelink_core::ParamKind::Number { unit: "m/s" }, "initial rolling speed: sets the hub speed to v0/radius"),
        ],
        build: BlockBuild::Primitive(build),
    }
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
        sticky: true,
        first: FirstCall::armed(),
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
    /// Low-speed regime (`v_ref < extremum_slip`): the contact may stick.
    sticky: bool,
    first: FirstCall,
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
    /// Speed of the faster contact surface, `max(|v_body|, |r·w_hub|)`.
    #[inline]
    /// The larger of the body speed and the wheel's surface speed (hub port 0, body 1).
    fn v_ref(&self, w: f64, v: f64) -> f64 {
        v.abs().max((self.r * w).abs())
    }
}

impl Block for Tire {
    drivelink_core::run_state!(sticky, first);
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::rot("hub"),
            PortDecl::trans("body"),
            PortDecl::input("normal_force"),
            PortDecl::optional_input("mu_scale", 1.0),
            PortDecl::output("slip").with_unit("m/s"),
            PortDecl::output("peak_slip"),
        ];
        let variables = vec![
            VarDecl::new("force", VarSource::Custom(1), "N")
                .doc("longitudinal tire force on the body"),
            VarDecl::new("w", VarSource::Speed(0), "rad/s").doc("wheel speed"),
            VarDecl::new("mode", VarSource::Friction(0, FrictionVar::Mode), "1")
                .doc("contact joint mode: 0 stuck (sticky regime), ±1 sliding"),
            VarDecl::new("sticky", VarSource::Custom(2), "1")
                .doc("1 in the low-speed sticky regime"),
        ];
        let mut m = MechDecl {
            frictions: vec![FrictionDecl::new(Row(vec![(0, self.r), (1, -1.0)]), "")],
            ..Default::default()
        };
        if self.inertia > 0.0 {
            m.masses.push((0, self.inertia));
        }
        if let Some(w0) = self.w0 {
            m.initial.push((0, w0, 0.0));
        }
        BlockDecl {
            ports,
            variables,
            mech: m,
            feedthrough: Feedthrough::None,
            ..BlockDecl::default()
        }
        .with_guards(&["sticky"])
    }
    fn friction(&self, _k: usize, cx: &Cx, w_rel: f64) -> FrictionLaw {
        let k = self.grip(cx);
        let s = curve_slip(w_rel, self.v_ref(cx.v(0), cx.v(1)), self.xe);
        let kinetic = friction_curve(s, self.xe, self.ye, self.xa, self.ya) * k;
        let cap = if self.sticky { self.ye * k } else { 0.0 };
        FrictionLaw {
            kinetic,
            lo: -cap,
            hi: cap,
            engagement: k,
        }
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let x = self.xe - self.v_ref(cx.v(0), cx.v(1));
        g[0] = hysteresis_guard(self.sticky, x, STICKY_BAND * self.xe);
    }
    fn reset(&mut self, _t0: f64) {
        // As built: the initial event decides the regime from the first speeds.
        self.sticky = true;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = self.first.take();
        let x = self.xe - self.v_ref(cx.v(0), cx.v(1));
        let new = hysteresis_mode(self.sticky, fresh, x, STICKY_BAND * self.xe);
        let changed = new != self.sticky;
        self.sticky = new;
        changed
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = self.r * cx.v(0) - cx.v(1);
        y[1] = self.xe;
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        match i {
            0 => self.r * cx.v(0) - cx.v(1),
            // The joint torque tau acts as +r·tau on the hub and −tau on the body.
            1 => -cx.lambda(0),
            _ => {
                if self.sticky {
                    1.0
                } else {
                    0.0
                }
            }
        }
    }
}
