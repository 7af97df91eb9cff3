//! `WheelCollider`: one wheel with its suspension and tire contact on a rigid body, with
//! the semantics of Unity's WheelCollider.
//!
//! Ports: `body[frame]`, `hub[rot]`, `brake[in]` (N·m ≥ 0, optional 0), `steer[in]` (rad,
//! optional 0), `mu_scale[in]` (optional 1) -> `forward_slip`, `sideways_slip` (m/s),
//! `fz` (N), `w` (rad/s), `peak_slip` (m/s, the forward curve's `extremum_slip`).
//!
//! # Suspension
//!
//! The suspension axis is the body's z axis through `center` (body axes from the centre of
//! mass: the wheel centre at full compression). A ray from the mount point `C = center`
//! along the body's −z axis meets the ground plane `z = 0` at the distance `s*` (world z of
//! `C` divided by the world z component of the body's z axis). The compression is
//! `c = suspension_distance + radius − s*` (0 at full extension, `suspension_distance` at
//! full compression: the wheel's centre at full extension is `center` moved down by
//! `suspension_distance`); the wheel is grounded while `c ≥ 0`, the body's z axis points
//! up and the mount is above the ground (a ray starting below the ground meets nothing:
//! a car rolled over and sunk through the plane gets no wheel forces, which would push it
//! out with energy from nothing; the compression then reads `−(suspension_distance +
//! radius)`). The force along the axis is
//!
//! ```text
//! F = max(0, spring·(c − target_position·suspension_distance) + damper·ċ
//!            + BUMP_STOP_FACTOR·spring·max(0, c − suspension_distance))
//! ```
//!
//! with `ċ` the exact time derivative of `c` from the body's motion. The ground never pulls
//! (`fz = F ≥ 0`); beyond full compression a bump stop [`BUMP_STOP_FACTOR`] times as stiff
//! as the spring acts. At rest on level ground a wheel carrying `Fz` sits at
//! `c = target_position·suspension_distance + Fz/spring`. The wheel has no vertical state
//! (as in Unity and PhysX: it follows the ground); its spin is the `hub` shaft, with the
//! spin inertia `0.5·mass·radius²` (or `inertia`) added to the hub node. The wheel's mass is
//! not added to the body.
//!
//! # Tire forces
//!
//! The wheel's heading `h` is the body's x axis turned by `steer` about the body's z axis,
//! projected on the ground; `l = ẑ × h` points to the wheel's left. With `v_G` the velocity
//! of the body point at the contact, `sx = radius·w − v_G·h` (forward slip: the wheel
//! surface ahead of the ground) and `sy = v_G·l` (the rubber's lateral sliding velocity),
//! both in m/s. The curves are the Unity/PhysX two-piece curve
//! ([`super::friction_curve`], rising branch from (0, 0) to the extremum included) times
//! `stiffness·mu_scale`. Combined slip:
//!
//! - `"circle"` (default): `ρ = √((sx/Sx)² + (sy/Sy)²)`, `Fx = (sx/Sx)/ρ·fx(ρ·Sx)·fz`,
//!   `Fy = −(sy/Sy)/ρ·fy(ρ·Sy)·fz`: pure slips give each curve exactly, and a locked wheel
//!   sliding forward (`|sx/Sx| ≫ |sy/Sy|`) has almost no side force;
//! - `"independent"`: `Fx = fx(sx)·fz`, `Fy = −fy(sy)·fz`, as Unity.
//!
//! With `tire = "magic_formula"` the forces are Pacejka's Magic Formula
//! ([`super::magic_formula`], coefficients in `mf`) at the slip ratio and slip angle
//! `κ = sx/max(|vx|, v_low)`, `α = atan(sy/max(|vx|, v_low))` with `vx = v_G·h`, `Fx`
//! along `h` and `Fy` along `l` as the formula gives them; `peak_slip` is then
//! `|κ_peak|·max(|vx|, v_low)` and `static_friction` is refused.
//!
//! The ground force `Fx·h + Fy·l + fz·ẑ` acts on the body at the point of the suspension
//! axis `force_app_point_distance` above the contact; the hub receives
//! `−Fx·radius − wheel_damping_rate·w`. The normal load `fz` is the vertical ground force
//! whose component along the suspension axis is the suspension force `F`:
//! `fz = F/(ẑ_body·ẑ)` (equal to `F` while the body is level). Where drivelink differs from
//! Unity: Unity applies `F` along the tilted suspension axis; its horizontal part would
//! push a pitched car at rest along the ground with no tire slip to resist it (a creep),
//! so drivelink applies the normal force along the ground normal (as PhysX applies it
//! along the contact normal), and the suspension's stored energy then changes at exactly
//! the rate of the normal force's work.
//!
//! # Brake and rest
//!
//! The brake is a friction joint of the hub against the ground (the network's stuck/slip
//! machine, like `Brake`): kinetic torque `brake`, static range `±brake`, so a braked wheel
//! stops and stays stopped exactly. By default the contact is a smooth law of slip
//! velocity with no singularity at standstill: a sliding car is brought to rest by the
//! rising branch, whose slope acts like a stiff damper (time constant `Sx/(g·ye)`, 0.04 s
//! with the defaults), but on a grade a braked car creeps at the slip where the curve
//! carries the pull (as Unity's WheelCollider).
//!
//! # Static friction at the patch (`static_friction`, opt-in)
//!
//! The patch has two modes, switched at located events: *Slip* (the curves above) and
//! *Stick*, where the patch is held by a deflection `d = (dx, dy)` (two states, heading
//! frame, `ḋ = (sx, sy)` in Stick, 0 and reset to 0 in Slip) with
//!
//! ```text
//! Fx = (kx·dx + mu·cx·sx)·fz,   Fy = −(ky·dy + mu·cy·sy)·fz,
//! c = ye/xe (the curve's slope at zero slip),   k = g·c²/4
//! ```
//!
//! per curve, so the damping equals the curve's rising-branch slope at the wheel's load
//! (the force is continuous to first order when the patch sticks with `d = 0`) and the
//! patch mode of the wheel's load share `fz/g` is critically damped at `mu_scale = 1`
//! (`(c·fz)² = 4·(k·fz)·(fz/g)`, standard gravity). The patch sticks (event `lock`) when
//! the wheel is grounded and both its slip speed `√(sx² + sy²)` and its rim speed
//! `radius·|w|` are below `stick_speed`; it breaks away (event `unlock`) when the force
//! reaches the friction limit — the ellipse `(Fx/(mu·yex·fz))² + (Fy/(mu·yey·fz))² = 1`
//! (`"circle"`), or either force at its extremum (`"independent"`) — when the wheel leaves
//! the ground, or when it rolls away (rim speed above `2·stick_speed`). After a breakaway
//! below `stick_speed` the patch must move faster than `stick_speed` once before it can
//! stick again (no chatter). The spring energy `½·fz·(kx·dx² + ky·dy²)` is in
//! `potential_energy`; the block's loss is then the damper's `∫mu·c·fz·|s|²` plus the
//! small work `½∫k·ḟz·|d|²` of the load changes on the load-scaled spring. The spring
//! energy released at a breakaway (the deflection is reset at the event) is booked by
//! the energy audit as impact loss, as every jump of stored energy at an event.
//!
//! # Road (`road` port)
//!
//! Connected to a `Road` ([`super::road`]), the ray meets the road's surface `z = h(x, y)`
//! instead of the plane (Newton's method from the vertical projection, to 1e-12 m): the
//! load acts along the road's normal `n` at the contact (`fz = F/(n·ẑ_body)`), the heading
//! and lateral axes lie in the tangent plane, `ċ = −(n·v_G)/(n·ẑ_body)`, and the friction
//! is multiplied by the road's patch scale. The wheel's side of every road edge (kerbs,
//! slope corners, patch edges) is a mode switched at located events (one guard per edge).
//! Unconnected, the code path is the plane's, unchanged.
//!
//! The load along `n` has the power `−F·ċ` (`n·v_G = −ċ·(n·ẑ_body)`): the spring stores
//! what the body's motion pays, and a static road does no work (Unity's WheelCollider
//! applies `F` along the suspension axis instead, whose power on a slope is not `−F·ċ`).
//! An `AntiRollBar` wired to the wheel's `hit_*` and `normal_*` variables applies its share
//! along the same `n` (see [`super::anti_roll_bar`]).
//!
//! A kerb step makes the compression jump at its located crossing: the spring's stored
//! energy changes with no work done (the massless, point-contact wheel has no impact to
//! pay for the climb). The energy audit books that jump (and the jump of an anti-roll
//! bar's twist, and of a stuck patch's spring with its load) as impact loss, negative up
//! a kerb, from the stored energy on both sides of the event (see `drivelink_core`'s
//! energy audit), so it closes over kerbs with no element delivering energy. On a road
//! with steps the wheel also sums its spring's jumps in the state `kerb_energy` (J, a
//! variable; + up a kerb, for information: the audit does not read it), logged on the
//! crossing's event.
//!
//! # Linear range (cornering stiffness)
//!
//! For small slip the curve is `c(s) ≈ ye·s/xe`, so the side force per unit slip velocity
//! is `C_v = stiffness·mu_scale·ye/Sy·fz` (N per m/s); with the slip angle `α ≈ sy/u` the
//! cornering stiffness per radian is `C_α = C_v·u`: it grows with the speed.

use std::sync::Arc;

use drivelink_core::frame::{add, cross, dot, scale, V3};
use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, Forces, FrameState, FrictionDecl, FrictionLaw,
    FrictionVar, MechDecl, ParamDefault, ParamError, ParamKind, ParamSpec, Params, PortDecl,
    PortKind, RecordField, Registry, Row, VarDecl, VarSource,
};

use super::magic_formula::{self, MagicFormula};
use super::road::Surface;
use super::{finite, friction_curve, in_range};
use crate::util::{key_bits, LastValue};
use drivelink_core::{EventCx, EventTag, G};

/// Bump-stop stiffness as a multiple of `spring`, beyond full compression.
pub const BUMP_STOP_FACTOR: f64 = 10.0;

/// The least world height of the body's z axis (unit vector) at which a suspension ray
/// points down to the ground (`AntiRollBar` uses the same test).
pub(crate) const AXIS_DOWN: f64 = 1e-6;

/// The suspension force `susp` (N along the axis) with the anti-roll bar's `bar` added:
/// `(total, own)`, the ground's `max(0, susp + bar)` and the part the wheel applies itself,
/// `total − bar` (exactly `susp` while the ground pushes; the bar applies `bar`).
fn with_bar(susp: f64, bar: f64) -> (f64, f64) {
    let total = susp + bar;
    if total >= 0.0 {
        (total, susp)
    } else {
        (0.0, -bar)
    }
}

const FORWARD: &[RecordField] = &[
    RecordField {
        name: "extremum_slip",
        unit: "m/s",
        default: 0.4,
    },
    RecordField {
        name: "extremum_value",
        unit: "1",
        default: 1.0,
    },
    RecordField {
        name: "asymptote_slip",
        unit: "m/s",
        default: 0.8,
    },
    RecordField {
        name: "asymptote_value",
        unit: "1",
        default: 0.5,
    },
    RecordField {
        name: "stiffness",
        unit: "1",
        default: 1.0,
    },
];
const SIDEWAYS: &[RecordField] = &[
    RecordField {
        name: "extremum_slip",
        unit: "m/s",
        default: 0.2,
    },
    RecordField {
        name: "extremum_value",
        unit: "1",
        default: 1.0,
    },
    RecordField {
        name: "asymptote_slip",
        unit: "m/s",
        default: 0.5,
    },
    RecordField {
        name: "asymptote_value",
        unit: "1",
        default: 0.75,
    },
    RecordField {
        name: "stiffness",
        unit: "1",
        default: 1.0,
    },
];

pub(crate) fn register(r: &mut Registry) {
    r.register(wheel_collider_type());
}

/// The `WheelCollider` block type: its parameters and how it is built.
fn wheel_collider_type() -> BlockType {
    BlockType {
        name: "WheelCollider",
        category: "vehicle",
        doc: "One wheel on a rigid body (Unity WheelCollider semantics): suspension along the body's −z axis through center (spring, damper, target_position, bump stop; ground never pulls), no vertical wheel state, spin on the hub shaft (inertia 0.5·mass·radius² added to it), brake as a stuck/slip friction joint on the hub, steer, forward and sideways friction curves on slip velocity (the whole Unity curve) combined as a friction circle (default) or independently; opt-in static friction at the patch (static_friction: stick/slip modes at located events, a braked car on a grade stays put).",
        ports_doc: "body[frame], hub[rot], brake[in] (optional, 0), steer[in] (optional, 0), mu_scale[in] (optional, 1), bar_force[in] (optional, 0: an AntiRollBar's force on this wheel, N along the suspension axis, added to the suspension force before the ground's max(0, ·)) -> forward_slip[out], sideways_slip[out], fz[out] (computed after the network solve), w[out], peak_slip[out], compression[out] (m from full extension, < 0 in the air; −(suspension_distance + radius) while the axis cannot meet the ground: on its side, upside down, or its mount below the ground), road[road] (optional: a Road's surface; unconnected, the ground plane z = 0 with friction scale 1)",
        params: vec![
            ParamSpec::number("mass", "kg", 20.0, "wheel mass: sets the spin inertia 0.5·mass·radius² unless inertia is given (not added to the body)"),
            ParamSpec::optional("inertia", ParamKind::Number { unit: "kg*m^2" }, "spin inertia (> 0), instead of 0.5·mass·radius²"),
            ParamSpec::number("radius", "m", 0.5, "wheel radius (> 0)"),
            ParamSpec::number("wheel_damping_rate", "N*m*s/rad", 0.25, "damping torque on the spin per rad/s (>= 0)"),
            ParamSpec {
                name: "center",
                kind: ParamKind::Vector { unit: "m" },
                default: ParamDefault::Required,
                doc: "[x, y, z] of the wheel centre at full compression, body axes from the centre of mass; at full extension the centre is suspension_distance lower",
            },
            ParamSpec::number("suspension_distance", "m", 0.3, "suspension travel (> 0)"),
            ParamSpec::number("force_app_point_distance", "m", 0.0, "height above the contact point, on the suspension axis, where the wheel's forces act on the body"),
            ParamSpec::number("spring", "N/m", 35000.0, "spring rate (> 0)"),
            ParamSpec::number("damper", "N*s/m", 4500.0, "damping rate (>= 0)"),
            ParamSpec::number("target_position", "1", 0.0, "rest point of the spring as a fraction of suspension_distance (0 full extension, the default as in Unity; 1 full compression)"),
            ParamSpec::with("forward_friction", ParamKind::Record(FORWARD), ParamDefault::Value(ParamKind::record_default(FORWARD)), "forward friction curve: slips in m/s, values per unit normal load, stiffness multiplies the values; extremum_slip is output as peak_slip"),
            ParamSpec::with("sideways_friction", ParamKind::Record(SIDEWAYS), ParamDefault::Value(ParamKind::record_default(SIDEWAYS)), "sideways friction curve (as forward_friction)"),
            ParamSpec::with("combined", ParamKind::Choice(&["circle", "independent"]), ParamDefault::Value(serde_json::json!("circle")), "combined slip: friction circle on the normalized slip, or Unity's independent curves"),
            ParamSpec::with("tire", ParamKind::Choice(&["curve", "magic_formula"]), ParamDefault::Value(serde_json::json!("curve")), "tire law: the friction curves on slip velocity (forward_friction, sideways_friction, combined), or Pacejka's Magic Formula on the slip ratio and slip angle (mf)"),
            ParamSpec::optional("mf", ParamKind::Record(magic_formula::FIELDS), "with tire = magic_formula: the Magic Formula coefficients (MF 5.2 names in lower case, no camber or turn slip, every λ scaling 1); fz0 (N) is required, pcx1, pdx1, pcy1, pdy1 default to 1, v_low to 0.5 m/s, every other key to 0"),
            ParamSpec::optional("w0", ParamKind::Number { unit: "rad/s" }, "initial spin; default: rolling without slip at the body's initial velocity at the contact"),
            ParamSpec::with("static_friction", ParamKind::Bool, ParamDefault::Value(serde_json::json!(false)), "static friction at the contact patch: at rest the patch sticks (a critically damped spring-damper deflection, 2 states) until the force reaches the curve's extremum (breakaway), so a braked car on a grade stays put; off: the patch always follows the curve (a braked car creeps on a grade)"),
            ParamSpec::optional("stick_speed", ParamKind::Number { unit: "m/s" }, "with static_friction: the patch sticks when its slip speed and the rim speed are both below this (> 0); default half the smaller extremum_slip of the two curves"),
        ],
        build: BlockBuild::Primitive(build),
    }
}

/// One friction curve (values before `mu_scale`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Curve {
    xe: f64,
    ye: f64,
    xa: f64,
    ya: f64,
    /// `1 / xe`.
    inv_xe: f64,
    /// `xa / xe`: the asymptote on the normalized slip.
    rho_a: f64,
    /// `xe / (xa − xe)`: the falling branch's parameter per unit normalized slip.
    k_fall: f64,
}

impl Curve {
    /// The curve of record parameter `name` (keys as in `fields`, whose defaults fill the
    /// keys not given).
    fn from(p: &Params, name: &str, fields: &[RecordField]) -> Result<Curve, ParamError> {
        let v = p.vector(name)?;
        let (xe, ye, xa, ya, k) = (v[0], v[1], v[2], v[3], v[4]);
        let bad = |m: String| Err(p.invalid(name, m));
        // A value equal to its key's default may not have been given at all: say so.
        let default_note = |i: usize, x: f64| match fields.get(i) {
            Some(f) if f.default == x => format!(
                " (the default of {}, used when the key is not given)",
                f.name
            ),
            _ => String::new(),
        };
        if !(xe > 0.0 && xe.is_finite()) {
            return bad(format!(
                "extremum_slip must be > 0, got {xe}{}",
                default_note(0, xe)
            ));
        }
        if !(xa > xe && xa.is_finite()) {
            return bad(format!(
                "asymptote_slip must be > extremum_slip ({xe}), got {xa}{}",
                default_note(2, xa)
            ));
        }
        for (n, x) in [
            ("extremum_value", ye),
            ("asymptote_value", ya),
            ("stiffness", k),
        ] {
            if !(x >= 0.0 && x.is_finite()) {
                return bad(format!("{n} must be a finite number >= 0, got {x}"));
            }
        }
        Ok(Curve::new(xe, ye * k, xa, ya * k))
    }
    /// The curve through the extremum `(xe, ye)` and the asymptote `(xa, ya)` (values with
    /// the stiffness applied; `0 < xe < xa`), with its derived constants.
    fn new(xe: f64, ye: f64, xa: f64, ya: f64) -> Curve {
        Curve {
            xe,
            ye,
            xa,
            ya,
            inv_xe: 1.0 / xe,
            rho_a: xa / xe,
            k_fall: xe / (xa - xe),
        }
    }
    /// The curve (per unit load) at slip `s`, odd.
    #[inline]
    fn at(&self, s: f64) -> f64 {
        friction_curve(s, self.xe, self.ye, self.xa, self.ya)
    }
    /// `curve(ρ·xe)/ρ` for `ρ ≥ 0`: on the rising branch the cubic divided through,
    /// `ye·(1 + ρ − ρ²)` (no division, `ye` at `ρ = 0`), on the falling branch
    /// `ye + (ya − ye)·a²·(3 − 2a)` with `a = (ρ − 1)·xe/(xa − xe)`, over `ρ`, then `ya/ρ`.
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

/// The combined-slip curve law `(Fx, Fy)` at slip velocities `(sx, sy)`, friction
/// multiplier `mu` (≥ 0) and normal load `fz`: the friction circle (`circle`) or the
/// independent curves.
#[inline]
fn curve_forces(
    fwd: &Curve,
    side: &Curve,
    circle: bool,
    sx: f64,
    sy: f64,
    mu: f64,
    fz: f64,
) -> (f64, f64) {
    if circle {
        let (nx, ny) = (sx * fwd.inv_xe, sy * side.inv_xe);
        // Plain sqrt, not `hypot` (libm's overflow-safe hypot costs 4 % of a car's
        // run): normalized slips are far from overflow.
        let rho = (nx * nx + ny * ny).sqrt();
        (
            nx * fwd.per_rho(rho) * mu * fz,
            -ny * side.per_rho(rho) * mu * fz,
        )
    } else {
        (fwd.at(sx) * mu * fz, -side.at(sy) * mu * fz)
    }
}

/// A wheel's tire law on its own (`tire`: the friction curves or the Magic Formula), as
/// the block builds it: for evaluating the law outside a simulation (`drivelink tire`).
#[derive(Debug, Clone)]
pub struct TireLaw {
    fwd: Curve,
    side: Curve,
    circle: bool,
    mf: Option<Box<MagicFormula>>,
}

impl TireLaw {
    /// The tire law of a `WheelCollider`'s resolved parameters, checked as the block
    /// checks them (`mf` required with `tire = "magic_formula"` and refused without).
    pub fn from_params(p: &Params) -> Result<TireLaw, ParamError> {
        let fwd = Curve::from(p, "forward_friction", FORWARD)?;
        let side = Curve::from(p, "sideways_friction", SIDEWAYS)?;
        let mf = match (p.text("tire")?, p.has("mf")) {
            ("magic_formula", true) => Some(Box::new(MagicFormula::from_params(p, "mf")?)),
            ("magic_formula", false) => {
                return Err(p.invalid(
                    "mf",
                    "is required with tire = \"magic_formula\": an object of coefficients with at least fz0, e.g. {\"fz0\": 4000, \"pkx1\": 21.5, \"pky1\": -15, \"pky2\": 2.1}",
                ))
            }
            (_, true) => {
                return Err(p.invalid(
                    "mf",
                    "is given but tire is \"curve\" (the default): set \"tire\": \"magic_formula\" to use the Magic Formula, or remove mf",
                ))
            }
            (_, false) => None,
        };
        Ok(TireLaw {
            fwd,
            side,
            circle: p.text("combined")? == "circle",
            mf,
        })
    }
    /// Whether the law is the Magic Formula.
    pub fn is_magic_formula(&self) -> bool {
        self.mf.is_some()
    }
    /// `(Fx, Fy)`, N, at slip ratio `kappa`, slip angle `alpha` (rad) and normal load `fz`
    /// (N), `mu_scale` 1: the Magic Formula at `(κ, α)` directly (`speed` only fades its
    /// shifts out below `v_low`); the curves at the slip
    /// velocities of a contact moving at `speed` (m/s) along its heading,
    /// `sx = κ·speed`, `sy = speed·tan α`. `Fx` along the heading, `Fy` to the left.
    pub fn forces_at(&self, kappa: f64, alpha: f64, fz: f64, speed: f64) -> (f64, f64) {
        match &self.mf {
            Some(mf) => mf.forces(kappa, alpha, fz, 1.0, speed.abs()),
            None => curve_forces(
                &self.fwd,
                &self.side,
                self.circle,
                kappa * speed,
                speed * alpha.tan(),
                1.0,
                fz.max(0.0),
            ),
        }
    }
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    Ok(Box::new(collider(p)?))
}

/// The wheel of parameters `p`.
fn collider(p: &Params) -> Result<WheelCollider, ParamError> {
    let radius = p.positive("radius")?;
    let mass = p.non_negative("mass")?;
    let inertia = match p.opt_num("inertia")? {
        Some(_) => p.positive("inertia")?,
        None => 0.5 * mass * radius * radius,
    };
    if !(inertia > 0.0 && inertia.is_finite()) {
        return Err(p.invalid(
            "mass",
            format!("the spin inertia 0.5·mass·radius² must be > 0, got {inertia}; give mass > 0 or inertia"),
        ));
    }
    let c = p.vector("center")?;
    if c.len() != 3 || c.iter().any(|v| !v.is_finite()) {
        return Err(p.invalid(
            "center",
            format!("must be [x, y, z], three finite numbers, got {c:?}"),
        ));
    }
    let dist = p.positive("suspension_distance")?;
    let spring = p.positive("spring")?;
    let damper = p.non_negative("damper")?;
    let damping = p.non_negative("wheel_damping_rate")?;
    for (n, v) in [
        ("radius", radius),
        ("suspension_distance", dist),
        ("spring", spring),
        ("damper", damper),
        ("wheel_damping_rate", damping),
    ] {
        if !v.is_finite() {
            return Err(p.invalid(n, format!("must be finite, got {v}")));
        }
    }
    let TireLaw {
        fwd,
        side,
        circle,
        mf,
    } = TireLaw::from_params(p)?;
    if mf.is_some() && p.bool("static_friction")? {
        return Err(p.invalid(
            "static_friction",
            "works with tire = \"curve\" only (its patch stiffness and breakaway come from the friction curves); a braked wheel with the Magic Formula is held by the brake's stuck/slip machine",
        ));
    }
    let stick = if p.bool("static_friction")? {
        let v_rest = match p.opt_num("stick_speed")? {
            Some(_) => {
                let v = p.positive("stick_speed")?;
                if !v.is_finite() {
                    return Err(p.invalid("stick_speed", format!("must be finite, got {v}")));
                }
                v
            }
            None => 0.5 * fwd.xe.min(side.xe),
        };
        // The rising branch's slope per unit load (before mu_scale), s/m, and the patch
        // stiffness per unit load that makes the patch mode of the wheel's load share
        // `fz/g` critically damped: (slope·fz)² = 4·(k·fz)·(fz/g).
        let (cx, cy) = (fwd.ye / fwd.xe, side.ye / side.xe);
        Some(Stick {
            cx,
            cy,
            kx: G * cx * cx / 4.0,
            ky: G * cy * cy / 4.0,
            v_rest,
        })
    } else {
        None
    };
    let app = finite(p, "force_app_point_distance")?;
    let target = in_range(p, "target_position", 0.0, 1.0)?;
    Ok(WheelCollider {
        radius,
        inertia,
        damping,
        center: [c[0], c[1], c[2]],
        dist,
        app,
        spring,
        damper,
        reach_len: dist + radius,
        c0: target * dist,
        bump_rate: BUMP_STOP_FACTOR * spring,
        fwd,
        side,
        circle,
        peak_kappa: mf.as_ref().map_or(0.0, |m| m.braking_peak_kappa()),
        mf,
        w0: match p.opt_num("w0")? {
            Some(_) => Some(finite(p, "w0")?),
            None => None,
        },
        stick,
        mode: Patch::Slip { armed: true },
        reach: None,
        road: None,
        sides: None,
        last_ray: None,
    })
}

/// The static-friction model of the contact patch (per unit normal load).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stick {
    /// Damping: the curves' rising-branch slopes at zero slip, s/m (times `mu_scale`).
    cx: f64,
    cy: f64,
    /// Patch stiffness, 1/m: `g·c²/4` (critically damped for the load share `fz/g`).
    kx: f64,
    ky: f64,
    /// Rest threshold on the slip speed and the rim speed, m/s.
    v_rest: f64,
}

/// The mode of the contact patch with `static_friction`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Patch {
    /// The patch follows the friction curve; `armed`: it sticks when it comes to rest
    /// (false after a breakaway below the rest speed, until the patch has moved faster
    /// than the rest speed once: no immediate re-stick).
    Slip { armed: bool },
    /// The patch is held by its deflection.
    Stick,
}

impl Stick {
    /// The stuck patch's forces per unit normal load `(Fx, Fy)/fz` in the heading frame:
    /// `Fx = (kx·dx + mu·cx·sx)·fz`, `Fy = −(ky·dy + mu·cy·sy)·fz` (the deflection `d`
    /// integrates the slip velocities; the damping is the curves' slope at zero slip, so
    /// the force is continuous when the patch sticks with `d = 0`).
    fn unit_force(&self, k: &Contact, d: [f64; 2], mu: f64) -> (f64, f64) {
        let mu = mu.max(0.0);
        (
            self.kx * d[0] + mu * self.cx * k.sx,
            -(self.ky * d[1] + mu * self.cy * k.sy),
        )
    }
}

/// Relative margin between a guard's root and the test `update_modes` applies at the
/// located instant (as the hysteresis of the `Tire`'s sticky regime).
const STICK_EPS: f64 = 1e-6;

/// The wheel collider block.
#[derive(Debug, Clone)]
pub struct WheelCollider {
    radius: f64,
    inertia: f64,
    damping: f64,
    center: V3,
    dist: f64,
    app: f64,
    spring: f64,
    damper: f64,
    /// Parameter-only constants, computed once at build with the operations the forces
    /// used to repeat: `suspension_distance + radius` (the ray's length from the mount to
    /// the ground at full extension), the spring's rest compression
    /// `target_position·suspension_distance` and the bump stop's rate
    /// `BUMP_STOP_FACTOR·spring`.
    reach_len: f64,
    c0: f64,
    bump_rate: f64,
    fwd: Curve,
    side: Curve,
    circle: bool,
    /// The Magic Formula (`tire = "magic_formula"`), or `None` for the curves.
    mf: Option<Box<MagicFormula>>,
    /// With the Magic Formula: the slip ratio of its braking peak at `fz0` (≤ 0).
    peak_kappa: f64,
    w0: Option<f64>,
    /// Static friction at the patch (`static_friction`), or `None`.
    stick: Option<Stick>,
    mode: Patch,
    /// Whether the wheel touches the ground: changes only at located events; `None`
    /// before the run's initial event (then the geometry decides: `c ≥ 0`).
    reach: Option<Reach>,
    /// The road on the `road` port, or `None`: the ground plane `z = 0`, friction scale 1.
    road: Option<Arc<Surface>>,
    /// The side of every edge of the road the wheel is on (see [`super::road`]): changes
    /// only at located events; `None` before the run's initial event (then the point
    /// decides).
    sides: Option<Vec<bool>>,
    /// The last ray cast on the road (see [`RayCache`]).
    last_ray: Option<Box<RayCache>>,
}

/// The last ray a wheel cast on its road, keyed by the pose (position and orientation
/// quaternion) and the edge sides as a mask with a marker bit (`None` sides: 0). One
/// evaluation casts the same ray for the outputs, the forces and the guards, and a
/// recorded point once more for the logged variables: each after the first is this copy.
/// A plain ground plane is not cached: its ray costs less than the look-up.
type RayCache = LastValue<8, Ray>;

/// The [`RayCache`] key of pose `st` with `sides`, if the sides fit the mask.
fn ray_key(st: &FrameState, sides: super::road::Sides) -> Option<[u64; 8]> {
    let (p, q) = (st.pos(), st.quat());
    let mask = match sides {
        None => 0,
        Some(s) if s.len() < 63 => s
            .iter()
            .enumerate()
            .fold(1u64 << 63, |m, (i, &b)| m | (u64::from(b) << i)),
        Some(_) => return None,
    };
    let pose = key_bits([p[0], p[1], p[2], q[0], q[1], q[2], q[3]]);
    Some([
        pose[0], pose[1], pose[2], pose[3], pose[4], pose[5], pose[6], mask,
    ])
}

/// Whether a wheel is on the ground: the contact's mode, switched only at the located
/// zeros of the compression (events `touchdown` and `liftoff`), so a step never jumps
/// over a landing however large it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// No ground force; the guard `−c` reaches 0 when the ray meets the ground.
    Airborne,
    /// Suspension and tire forces act; the guard `c + ε·suspension_distance` reaches 0
    /// when the wheel hangs free.
    Grounded,
}

const BODY: usize = 0;
const HUB: usize = 1;
const IN_BRAKE: usize = 0;
const IN_STEER: usize = 1;
const IN_MU: usize = 2;
const IN_BAR: usize = 3;
/// The `fz` output: computed after the network solve (see `output_needs_network`).
const OUT_FZ: usize = 2;

/// The contact state of a wheel at one instant.
#[derive(Debug, Clone, Copy, Default)]
pub struct Contact {
    /// Compression, m (< 0 in the air).
    pub c: f64,
    /// Whether the ground is within reach.
    pub grounded: bool,
    /// Normal load (the vertical ground force, anti-roll bar included), N.
    pub fz: f64,
    /// The vertical force the wheel itself applies to the body, N: `fz` less the
    /// anti-roll bar's part, which the `AntiRollBar` applies (equal to `fz` without a bar).
    own: f64,
    /// Forward and sideways slip velocities, m/s.
    pub sx: f64,
    /// Sideways slip velocity, m/s.
    pub sy: f64,
    /// Tire forces in the heading frame, N.
    pub fx: f64,
    /// Lateral tire force (left), N.
    pub fy: f64,
    /// World heading and lateral unit vectors on the ground.
    h: V3,
    l: V3,
    /// Body point where the forces act, body axes.
    app: V3,
    /// World velocity of the body point at the contact (on the axis, at the ground).
    vg: V3,
    /// On a road: the ground's unit normal at the contact and the road's friction scale
    /// there (unused on the ground plane).
    n: V3,
    road_mu: f64,
}

impl Contact {
    /// The contact point's speed along the heading, m/s (0 in the air).
    fn vx(&self) -> f64 {
        self.vg[0] * self.h[0] + self.vg[1] * self.h[1]
    }
}

/// The wheel's heading on the ground (world x, y): the body's x axis turned by `steer`
/// about the body's z axis (body `[cos δ, sin δ, 0]`), projected on the ground and
/// normalized. An unsteered wheel (the rear ones, the front ones driving straight) skips
/// the sine and cosine.
#[inline]
fn heading(r: &[V3; 3], steer: f64) -> [f64; 2] {
    let (hx, hy) = if steer == 0.0 {
        (r[0][0], r[1][0])
    } else {
        let (sd, cd) = steer.sin_cos();
        (r[0][0] * cd + r[0][1] * sd, r[1][0] * cd + r[1][1] * sd)
    };
    let hn = (hx * hx + hy * hy).sqrt();
    if hn > 0.0 {
        let inv = 1.0 / hn;
        [hx * inv, hy * inv]
    } else {
        [1.0, 0.0]
    }
}

/// The friction multiplier of contact `k` on `road` (`None`: the ground plane): the
/// `mu_scale` input `u` times the road's friction scale at the contact (the input itself
/// on the ground plane).
#[inline(always)]
fn mu_on(road: Option<&Surface>, k: &Contact, u: f64) -> f64 {
    if road.is_some() {
        u * k.road_mu
    } else {
        u
    }
}

/// Newton's method for the ray `m + s·d` meeting the road raised by `offset` (the kerb
/// steps that apply), from `s0`: `(s, (h, ∂h/∂x, ∂h/∂y))` at the root, converged to
/// `1e-12·(1 + |s|)` m (at most 20 iterations; quadratic convergence takes 2 to 4 on
/// roads whose slope changes little over the step of the first guess). `s` is NaN when
/// the ray runs parallel to the road.
fn solve_ray(
    road: &Surface,
    m: V3,
    d: V3,
    offset: f64,
    s0: f64,
    sides: super::road::Sides,
) -> (f64, (f64, f64, f64)) {
    solve_ray_from(road, m, d, offset, (s0, None), sides).0
}

/// The road's smooth height and gradient under the ray `m + s·d`.
type RayPoint = (f64, (f64, f64, f64));

/// [`solve_ray`] from `s0` where `at_s0` may already hold the road's value under the ray
/// (the end of a previous solve from the same mount and direction): the same point gives
/// the same value, so it is not evaluated again, nor is the end point when the last step
/// was exactly zero. Returns the end and the value there, and whether that value is the
/// road's at the end (not so when the ray runs parallel to the road: the end is NaN).
fn solve_ray_from(
    road: &Surface,
    m: V3,
    d: V3,
    offset: f64,
    (s0, at_s0): (f64, Option<(f64, f64, f64)>),
    sides: super::road::Sides,
) -> (RayPoint, bool) {
    let under = |s: f64| {
        let p = [m[0] + s * d[0], m[1] + s * d[1]];
        road.smooth(p[0], p[1], sides)
    };
    let mut s = s0;
    let mut known = at_s0.map(|v| (s0.to_bits(), v));
    for _ in 0..20 {
        let (h, hx, hy) = match known {
            Some((b, v)) if b == s.to_bits() => v,
            _ => under(s),
        };
        known = Some((s.to_bits(), (h, hx, hy)));
        let f = m[2] + s * d[2] - h - offset;
        let fp = d[2] - hx * d[0] - hy * d[1];
        if !(fp < 0.0) {
            return ((f64::NAN, (h, hx, hy)), false);
        }
        let ds = -f / fp;
        s += ds;
        if ds.abs() <= 1e-12 * (1.0 + s.abs()) {
            break;
        }
    }
    let end = match known {
        Some((b, v)) if b == s.to_bits() => v,
        _ => under(s),
    };
    ((s, end), true)
}

/// Where the suspension's ray meets the ground plane.
#[derive(Debug, Clone, Copy)]
struct Ray {
    /// Compression `suspension_distance + radius − s*`, m: continuous in the pose while
    /// the axis points down (also with the mount below the ground, where it exceeds
    /// `suspension_distance + radius`), so a step that would carry the wheel through the
    /// ground changes its sign; `−(suspension_distance + radius)` while the axis points
    /// sideways or up.
    c: f64,
    /// `1 / (world z of the body's z axis)`, 0 when the ray never meets the ground.
    inv_zz: f64,
    /// Whether the ray from the mount meets the ground (axis down, mount above it).
    meets: bool,
    /// On a road: the contact's normal, friction scale and edge point (`None` on the
    /// ground plane, or while the axis points sideways or up).
    hit: Option<RoadHit>,
}

/// Where the suspension ray meets a road: what the ground plane does not need.
#[derive(Debug, Clone, Copy)]
struct RoadHit {
    /// The road's unit normal at the contact, world.
    n: V3,
    /// `1 / (n·ẑ_body)`.
    inv_nz: f64,
    /// The friction scale at the contact.
    mu: f64,
    /// Where the ray meets the road without its kerb steps (world x, y): the point whose
    /// side of the road's edges the wheel locates (the contact point itself when the body
    /// is level or no kerb applies).
    q: [f64; 2],
}

/// Margin of the road-edge guards, m: an edge is located `EDGE_EPS` past its line and the
/// side flips from the line on.
const EDGE_EPS: f64 = 1e-9;

/// The road's port.
const ROAD: usize = 12;

/// The contact guard's margins, relative to `suspension_distance`: `touchdown` is
/// located at `c = −ε` and accepted from `c > −2ε`, `liftoff` located at `c = −3ε` and
/// accepted below `−2ε`, so the guard of the new mode starts at `2ε` (no re-trigger).
const REACH_EPS: f64 = 1e-6;

impl WheelCollider {
    /// The contact of the wheel with the body in state `st`, spin `w`, steer `steer` and
    /// friction multiplier `mu`.
    pub fn contact(&self, st: &FrameState, w: f64, steer: f64, mu: f64) -> Contact {
        self.contact_with(self.road.as_deref(), st, w, steer, mu, 0.0)
    }
    /// [`WheelCollider::contact`] on `road` (`None`: the ground plane; see
    /// [`WheelCollider::forces_outlined`]) with the anti-roll bar's force `bar` (N, along
    /// the suspension axis) added to the suspension force.
    #[inline(always)]
    fn contact_with(
        &self,
        road: Option<&Surface>,
        st: &FrameState,
        w: f64,
        steer: f64,
        mu: f64,
        bar: f64,
    ) -> Contact {
        let mut k = self.kinematics_in(road, st, w, steer, bar);
        if !k.grounded {
            return k;
        }
        let mu = mu_on(road, &k, mu).max(0.0);
        (k.fx, k.fy) = match &self.mf {
            None => curve_forces(&self.fwd, &self.side, self.circle, k.sx, k.sy, mu, k.fz),
            Some(mf) => {
                let vx = k.vx();
                let (kappa, alpha) = mf.slips(k.sx, vx, k.sy);
                mf.forces(kappa, alpha, k.fz, mu, vx.abs())
            }
        };
        k
    }
    /// The `peak_slip` output, m/s: the forward curve's `extremum_slip`, or with the Magic
    /// Formula the slip velocity of its braking peak at the contact's speed,
    /// `|κ_peak|·max(|vx|, v_low)` (`κ_peak` of the pure-slip curve at `fz0`).
    fn peak_slip(&self, k: &Contact) -> f64 {
        match &self.mf {
            None => self.fwd.xe,
            Some(mf) => self.peak_kappa.abs() * k.vx().abs().max(mf.v_low()),
        }
    }
    /// Where the suspension's ray meets the ground plane in pose `st`.
    #[inline]
    fn ray(&self, st: &FrameState) -> Ray {
        self.ray_with(self.road.as_deref(), st, self.sides.as_deref())
    }
    /// [`WheelCollider::ray`] on `road` (`None`: the ground plane) with the road's edges
    /// on the given `sides` (`None`: from the point itself).
    #[inline(always)]
    fn ray_with(&self, road: Option<&Surface>, st: &FrameState, sides: super::road::Sides) -> Ray {
        // Only the heights of the rotated body vectors enter the suspension: row 2 of the
        // rotation (`zz` is the world height of the body's z axis).
        let r = st.rotation();
        let zz = r[2][2];
        // The world height of the mount point.
        let hc = st.pos()[2] + dot(r[2], self.center);
        if !(zz > AXIS_DOWN) {
            // The axis points sideways or up: the ray never meets the ground.
            return Ray {
                c: self.no_ground(),
                inv_zz: 0.0,
                meets: false,
                hit: None,
            };
        }
        if let Some(road) = road {
            return self.ray_on_kept(road, st, sides);
        }
        let inv_zz = 1.0 / zz;
        Ray {
            c: self.reach_len - hc * inv_zz,
            inv_zz,
            // A mount below the ground (a car rolled over and sunk through the plane, which
            // nothing else collides with) meets nothing: a wheel there pushing the body up
            // would create energy from nothing.
            meets: hc >= 0.0,
            hit: None,
        }
    }
    /// [`WheelCollider::ray_on`], the last ray if the pose and sides are the same (see
    /// [`RayCache`]); through a call, so that the plane's path stays lean.
    #[inline(never)]
    fn ray_on_kept(&self, road: &Surface, st: &FrameState, sides: super::road::Sides) -> Ray {
        let cast = || self.ray_on(road, st, sides);
        match ray_key(st, sides) {
            Some(key) => match &self.last_ray {
                Some(last) => last.get_or(key, cast),
                None => cast(),
            },
            None => cast(),
        }
    }
    /// [`WheelCollider::ray`] on a road (the axis points down): the ray `M + s·d` from
    /// the mount `M` along `d = −ẑ_body` meets `z = h(x, y)` where
    /// `f(s) = M_z + s·d_z − h(M_x + s·d_x, M_y + s·d_y) = 0`, solved by Newton's method
    /// from the vertical projection, first on the road without its kerb steps (the edge
    /// point `q`), then with the steps that apply there (a constant between events).
    #[inline(always)]
    fn ray_on(&self, road: &Surface, st: &FrameState, sides: super::road::Sides) -> Ray {
        let r = st.rotation();
        let zb = [r[0][2], r[1][2], r[2][2]];
        let d = [-zb[0], -zb[1], -zb[2]];
        let m = st.point(self.center);
        let (h_m, _, _) = road.smooth(m[0], m[1], sides);
        let ((sq, at_sq), at_end) =
            solve_ray_from(road, m, d, 0.0, ((m[2] - h_m) / zb[2], None), sides);
        let q = [m[0] + sq * d[0], m[1] + sq * d[1]];
        let steps = road.steps(q[0], q[1], sides);
        let (s, (_, hx, hy)) = if steps == 0.0 {
            // The same equation again from its solution: one Newton step, whose point the
            // first solve evaluated last.
            solve_ray_from(road, m, d, 0.0, (sq, at_end.then_some(at_sq)), sides).0
        } else {
            solve_ray(road, m, d, steps, sq - steps / zb[2], sides)
        };
        let inv_n = 1.0 / (1.0 + hx * hx + hy * hy).sqrt();
        let n = [-hx * inv_n, -hy * inv_n, inv_n];
        let nz = dot(n, zb);
        let hit = RoadHit {
            n,
            inv_nz: 1.0 / nz,
            mu: road.mu(q[0], q[1], sides),
            q,
        };
        let meets = m[2] - h_m - steps >= 0.0 && nz > AXIS_DOWN && s.is_finite();
        Ray {
            c: if s.is_finite() {
                self.reach_len - s
            } else {
                self.no_ground()
            },
            inv_zz: 1.0 / zb[2],
            meets,
            hit: Some(hit),
        }
    }
    /// The contact's mode: the located one, or before the initial event the geometry's.
    #[inline]
    fn reach_in(&self, ray: &Ray) -> Reach {
        match self.reach {
            Some(r) => r,
            None if ray.c >= 0.0 => Reach::Grounded,
            None => Reach::Airborne,
        }
    }
    /// The contact's geometry, normal load and slips, without the tire forces (`fx`, `fy`
    /// zero): all the block's outputs need, evaluated once more per evaluation than the
    /// forces. `bar`: the anti-roll bar's force along the axis (N), added to the
    /// suspension force before the ground's `max(0, ·)`.
    #[inline(always)]
    fn kinematics(&self, st: &FrameState, w: f64, steer: f64, bar: f64) -> Contact {
        self.kinematics_in(self.road.as_deref(), st, w, steer, bar)
    }
    /// [`WheelCollider::kinematics`] on `road` (`None`: the ground plane).
    #[inline(always)]
    fn kinematics_in(
        &self,
        road: Option<&Surface>,
        st: &FrameState,
        w: f64,
        steer: f64,
        bar: f64,
    ) -> Contact {
        let ray = self.ray_with(road, st, self.sides.as_deref());
        if let Some(hit) = ray.hit {
            return self.kinematics_on(st, &ray, &hit, w, steer, bar);
        }
        let mut k = Contact {
            c: if ray.meets { ray.c } else { self.no_ground() },
            ..Contact::default()
        };
        if !ray.meets || self.reach_in(&ray) == Reach::Airborne {
            return k;
        }
        k.grounded = true;
        let (c, inv_zz) = (ray.c, ray.inv_zz);
        let s = self.reach_len - c;
        let r = st.rotation();
        // Body point at the contact (on the axis, s below the mount) and its velocity.
        let g_body = [self.center[0], self.center[1], self.center[2] - s];
        let vg = st.point_velocity(g_body);
        (k.fz, k.own) = self.plane_load(c, inv_zz, vg[2], bar);
        k.app = [g_body[0], g_body[1], g_body[2] + self.app];
        k.vg = vg;
        let [hx, hy] = heading(r, steer);
        // l = z × h.
        k.h = [hx, hy, 0.0];
        k.l = [-hy, hx, 0.0];
        k.sx = self.radius * w - (vg[0] * hx + vg[1] * hy);
        k.sy = vg[1] * hx - vg[0] * hy;
        k
    }
    /// The normal load `(fz, own)` (N) on the ground plane at compression `c`, with
    /// `inv_zz = 1/(ẑ_body·ẑ)`, the world vertical velocity `vgz` of the body point at the
    /// contact and the anti-roll bar's force `bar` (see [`Contact::own`]).
    #[inline]
    fn plane_load(&self, c: f64, inv_zz: f64, vgz: f64, bar: f64) -> (f64, f64) {
        // ċ = −ṡ, ṡ = (v_G)_z / (z_w)_z.
        let cdot = -vgz * inv_zz;
        let c0 = self.c0;
        let bump = self.bump_rate * (c - self.dist).max(0.0);
        // The suspension force along the axis; the ground's normal force (the tire load)
        // is the vertical force whose axis component it is.
        let susp = self.spring * (c - c0) + self.damper * cdot + bump;
        if bar == 0.0 {
            let fz = susp.max(0.0) * inv_zz;
            (fz, fz)
        } else {
            // The bar adds to the load but the ground never pulls; the wheel applies its
            // own part, the bar (a couple of `AntiRollBar`) the rest.
            let (total, own) = with_bar(susp, bar);
            (total * inv_zz, own * inv_zz)
        }
    }
    /// The contact's normal load `fz` alone (as [`WheelCollider::kinematics`] gives it:
    /// it depends on neither the spin nor the steer): on the ground plane only the
    /// vertical velocity of the contact point, not the heading and slips.
    #[inline(always)]
    fn normal_load(&self, road: Option<&Surface>, st: &FrameState, bar: f64) -> f64 {
        let ray = self.ray_with(road, st, self.sides.as_deref());
        if let Some(hit) = ray.hit {
            return self.kinematics_on(st, &ray, &hit, 0.0, 0.0, bar).fz;
        }
        if !ray.meets || self.reach_in(&ray) == Reach::Airborne {
            return 0.0;
        }
        let s = self.reach_len - ray.c;
        let g_body = [self.center[0], self.center[1], self.center[2] - s];
        let vgz = st.point_vertical_velocity(g_body);
        self.plane_load(ray.c, ray.inv_zz, vgz, bar).0
    }
    /// [`WheelCollider::kinematics`] on a road: the load along the road's normal `n` at
    /// the contact, whose component along the suspension axis is the suspension force;
    /// the heading and lateral axes in the road's tangent plane.
    #[inline(never)]
    fn kinematics_on(
        &self,
        st: &FrameState,
        ray: &Ray,
        hit: &RoadHit,
        w: f64,
        steer: f64,
        bar: f64,
    ) -> Contact {
        let mut k = Contact {
            c: if ray.meets { ray.c } else { self.no_ground() },
            n: hit.n,
            road_mu: hit.mu,
            ..Contact::default()
        };
        if !ray.meets || self.reach_in(ray) == Reach::Airborne {
            return k;
        }
        k.grounded = true;
        let c = ray.c;
        let s = self.reach_len - c;
        let r = st.rotation();
        let n = hit.n;
        let g_body = [self.center[0], self.center[1], self.center[2] - s];
        let vg = st.point_velocity(g_body);
        // The contact point `G + ṡ·d` stays on the road: n·(v_G + ṡ·d) = 0, ċ = −ṡ.
        let cdot = -dot(n, vg) * hit.inv_nz;
        let c0 = self.c0;
        let bump = self.bump_rate * (c - self.dist).max(0.0);
        let susp = self.spring * (c - c0) + self.damper * cdot + bump;
        let (total, own) = if bar == 0.0 {
            (susp.max(0.0), susp.max(0.0))
        } else {
            with_bar(susp, bar)
        };
        k.fz = total * hit.inv_nz;
        k.own = own * hit.inv_nz;
        k.app = [g_body[0], g_body[1], g_body[2] + self.app];
        k.vg = vg;
        // The steered wheel's heading, projected on the tangent plane.
        let hw = if steer == 0.0 {
            [r[0][0], r[1][0], r[2][0]]
        } else {
            let (sd, cd) = steer.sin_cos();
            [
                r[0][0] * cd + r[0][1] * sd,
                r[1][0] * cd + r[1][1] * sd,
                r[2][0] * cd + r[2][1] * sd,
            ]
        };
        let ht = add(hw, scale(-dot(hw, n), n));
        let hn = dot(ht, ht).sqrt();
        k.h = if hn > 0.0 {
            scale(1.0 / hn, ht)
        } else {
            [1.0, 0.0, 0.0]
        };
        k.l = cross(n, k.h);
        k.sx = self.radius * w - dot(vg, k.h);
        k.sy = dot(vg, k.l);
        k
    }
    /// The friction multiplier of the contact: the `mu_scale` input `u` times the road's
    /// friction scale at the contact (the input itself on the ground plane).
    #[inline]
    fn mu_of(&self, k: &Contact, u: f64) -> f64 {
        mu_on(self.road.as_deref(), k, u)
    }
    /// The index of the kerb-energy state (on a road with kerb steps), after the patch's.
    fn kerb_ix(&self) -> Option<usize> {
        let road = self.road.as_ref()?;
        road.has_steps()
            .then_some(if self.stick.is_some() { 2 } else { 0 })
    }
    /// The compression of `ray` as the contact reports it: `no_ground` when it meets
    /// nothing.
    fn compression(&self, ray: &Ray) -> f64 {
        if ray.meets {
            ray.c
        } else {
            self.no_ground()
        }
    }
    /// The compression reported when the suspension's ray does not meet the ground at all:
    /// `−(suspension_distance + radius)`, as for a mount twice its reach above the ground.
    fn no_ground(&self) -> f64 {
        -self.reach_len
    }
    #[inline(always)]
    fn contact_of(&self, cx: &Cx) -> Contact {
        self.contact_in(self.road.as_deref(), cx)
    }
    /// The contact at this instant on `road` (`None`: the ground plane), tire forces
    /// included (the patch's spring and damper while it sticks).
    #[inline(always)]
    fn contact_in(&self, road: Option<&Surface>, cx: &Cx) -> Contact {
        if let (Patch::Stick, Some(st)) = (self.mode, self.stick) {
            let mut k = self.kinematics_in(
                road,
                cx.frame(BODY),
                cx.v(HUB),
                cx.u(IN_STEER),
                cx.u(IN_BAR),
            );
            if k.grounded {
                let (fx, fy) = st.unit_force(&k, [cx.x[0], cx.x[1]], mu_on(road, &k, cx.u(IN_MU)));
                k.fx = fx * k.fz;
                k.fy = fy * k.fz;
            }
            return k;
        }
        self.contact_with(
            road,
            cx.frame(BODY),
            cx.v(HUB),
            cx.u(IN_STEER),
            cx.u(IN_MU),
            cx.u(IN_BAR),
        )
    }
    /// The block's forces on the wheel's road, or with its patch stuck, through a call
    /// never inlined: the plane's slipping tire, the path of every evaluation of a plain
    /// car, is compiled alone with the road `None` as a constant (the road's code drops out
    /// and the contact stays in registers).
    #[inline(never)]
    fn forces_outlined(&self, cx: &Cx, f: &mut Forces) {
        self.forces_on(self.road.as_deref(), cx, f);
    }
    /// The outputs on the wheel's road through a call (see
    /// [`WheelCollider::forces_outlined`]).
    #[inline(never)]
    fn outputs_outlined(&self, cx: &Cx, y: &mut [f64]) {
        self.outputs_on(self.road.as_deref(), cx, y);
    }
    /// The normal load on the wheel's road through a call (see
    /// [`WheelCollider::forces_outlined`]).
    #[inline(never)]
    fn normal_load_outlined(&self, st: &FrameState, bar: f64) -> f64 {
        self.normal_load(self.road.as_deref(), st, bar)
    }
    /// The block's outputs but `fz` on `road` (`None`: the ground plane).
    #[inline(always)]
    fn outputs_on(&self, road: Option<&Surface>, cx: &Cx, y: &mut [f64]) {
        let k = self.kinematics_in(road, cx.frame(BODY), cx.v(HUB), cx.u(IN_STEER), 0.0);
        y[0] = k.sx;
        y[1] = k.sy;
        y[3] = cx.v(HUB);
        y[4] = self.peak_slip(&k);
        y[5] = k.c;
    }
    /// The block's forces at this instant on `road` (`None`: the ground plane): the tire
    /// and the wheel's damping on the hub, the ground force on the body.
    #[inline(always)]
    fn forces_on(&self, road: Option<&Surface>, cx: &Cx, f: &mut Forces) {
        let k = self.contact_in(road, cx);
        f.add(HUB, -k.fx * self.radius - self.damping * cx.v(HUB));
        if !k.grounded {
            self.bar_reaction_in_the_air(cx, k.c, f);
            return;
        }
        let normal = if road.is_some() {
            scale(k.own, k.n)
        } else {
            [0.0, 0.0, k.own]
        };
        let force = add(add(scale(k.fx, k.h), scale(k.fy, k.l)), normal);
        if self.app == 0.0 {
            // The forces act at the contact point, whose velocity is known.
            f.add_frame_force_moving(BODY, k.app, force, k.vg);
        } else {
            f.add_frame_force(BODY, k.app, force);
        }
    }
    /// The contact the custom variables `which` read: with the tire forces only if `fx`
    /// or `fy` is among them, else its geometry and load alone (the same values: the
    /// tire forces change no other field). An anti-roll bar reads a wheel's contact point
    /// and normal at every evaluation.
    #[inline(always)]
    fn vars_contact(&self, cx: &Cx, which: &[usize]) -> Contact {
        if which.iter().any(|&i| i == 1 || i == 2) {
            return self.contact_of(cx);
        }
        self.kinematics(cx.frame(BODY), cx.v(HUB), cx.u(IN_STEER), cx.u(IN_BAR))
    }
    /// Custom variable `i` (see `variables`) given the contact `k` at this instant.
    fn var_of(&self, k: &Contact, cx: &Cx, i: usize) -> f64 {
        match i {
            0 => cx.v(HUB) * 30.0 / std::f64::consts::PI,
            1 => k.fx,
            2 => k.fy,
            3 => k.c,
            4 => f64::from(u8::from(k.grounded)),
            5 => cx.u(IN_STEER),
            6 => f64::from(u8::from(self.mode == Patch::Stick)),
            7 => k.fz / G,
            8..=10 if k.grounded => self.hit_point(cx.frame(BODY), k.c)[i - 8],
            11..=13 if k.grounded && self.road.is_some() => k.n[i - 11],
            // The ground plane z = 0: its normal is the world z axis.
            13 if k.grounded => 1.0,
            8..=13 => 0.0,
            14 => self.kerb_ix().map_or(0.0, |j| cx.x[j]),
            _ => f64::NAN,
        }
    }
    /// The world point where the suspension ray meets the ground at compression `c`.
    fn hit_point(&self, st: &FrameState, c: f64) -> V3 {
        let s = self.reach_len - c;
        st.point([self.center[0], self.center[1], self.center[2] - s])
    }
    /// The body point where the wheel's forces act at compression `c` (body axes):
    /// `force_app_point_distance` above the contact on the suspension axis.
    fn force_point(&self, c: f64) -> V3 {
        let s = self.reach_len - c;
        [
            self.center[0],
            self.center[1],
            self.center[2] - s + self.app,
        ]
    }
    /// A wheel off the ground carries no load, and so no anti-roll bar force either: it
    /// applies the reaction `−bar` (vertical, `bar/(ẑ_body·ẑ)`) to the bar's part of the
    /// `AntiRollBar`'s couple at its force point, as on the ground the bar's part of the
    /// load is the bar's. Nothing while the suspension axis points sideways or up (the
    /// bar applies nothing then either).
    fn bar_reaction_in_the_air(&self, cx: &Cx, c: f64, f: &mut Forces) {
        let bar = cx.u(IN_BAR);
        let st = cx.frame(BODY);
        let zz = st.rotation()[2][2];
        if bar == 0.0 || !(zz > AXIS_DOWN) {
            return;
        }
        f.add_frame_force(BODY, self.force_point(c), [0.0, 0.0, -bar / zz]);
    }
    /// The patch's force relative to the friction limit (1 at breakaway), with the
    /// deflection `d` held: the friction circle (ellipse) on the forces normalized by
    /// the curves' extremum values, or the larger of the two with `"independent"`.
    fn stick_ratio(&self, st: &Stick, k: &Contact, d: [f64; 2], mu: f64) -> f64 {
        let (fx, fy) = st.unit_force(k, d, mu);
        let (lx, ly) = (mu * self.fwd.ye, mu * self.side.ye);
        if !(lx > 0.0 && ly > 0.0) {
            // No grip at all: the patch cannot stick.
            return 2.0;
        }
        let (nx, ny) = (fx / lx, fy / ly);
        if self.circle {
            (nx * nx + ny * ny).sqrt()
        } else {
            nx.abs().max(ny.abs())
        }
    }
    /// The patch's speed relative to the rest threshold: the larger of the slip speed
    /// and the rim speed, over `stick_speed`.
    fn rest_ratio(&self, st: &Stick, k: &Contact, w: f64) -> f64 {
        (k.sx * k.sx + k.sy * k.sy)
            .sqrt()
            .max(self.radius * w.abs())
            / st.v_rest
    }
    /// Stored energy of the spring and bump stop at compression `c`, J: the spring
    /// pushes only beyond its rest point `target_position·suspension_distance` (the
    /// ground never pulls), so a wheel hanging below it stores nothing.
    fn stored(&self, c: f64) -> f64 {
        let e = (c - self.c0).max(0.0);
        let b = (c - self.dist).max(0.0);
        0.5 * self.spring * e * e + 0.5 * BUMP_STOP_FACTOR * self.spring * b * b
    }
}

impl Block for WheelCollider {
    drivelink_core::run_state!(mode, reach, sides);
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::frame("body"),
            PortDecl::rot("hub").free_ok(),
            PortDecl::optional_input("brake", 0.0).with_unit("N*m"),
            PortDecl::optional_input("steer", 0.0).with_unit("rad"),
            PortDecl::optional_input("mu_scale", 1.0).with_unit("1"),
            PortDecl::optional_input("bar_force", 0.0).with_unit("N"),
            PortDecl::output("forward_slip").with_unit("m/s"),
            PortDecl::output("sideways_slip").with_unit("m/s"),
            PortDecl::output("fz").with_unit("N"),
            PortDecl::output("w").with_unit("rad/s"),
            PortDecl::output("peak_slip").with_unit("m/s"),
            PortDecl::output("compression").with_unit("m"),
            PortDecl {
                optional: true,
                ..PortDecl::new("road", PortKind::Road)
            },
        ];
        let patch = if self.stick.is_some() { 2 } else { 0 };
        let states = patch + usize::from(self.kerb_ix().is_some());
        let mut v = vec![
            VarDecl::new("rpm", VarSource::Custom(0), "1").doc("wheel spin in revolutions per minute (a plain number; w is the SI spin, display it with unit rpm)"),
            VarDecl::new("fx", VarSource::Custom(1), "N")
                .doc("tire force along the wheel's heading (+ pushes the car forward)"),
            VarDecl::new("fy", VarSource::Custom(2), "N").doc("tire force to the wheel's left"),
            VarDecl::new("grounded", VarSource::Custom(4), "1")
                .doc("1 while the ground is within reach, else 0"),
            VarDecl::new("steer", VarSource::Custom(5), "rad")
                .doc("steer angle (positive turns the wheel left)"),
            VarDecl::new("sprung_mass", VarSource::Custom(7), "kg")
                .doc("fz/g with standard gravity: the mass whose weight the wheel's normal load carries (Unity's sprungMass); at rest on level ground the wheel's share of the body's mass, in motion it follows the load transfer; 0 in the air"),
            VarDecl::new("hit_x", VarSource::Custom(8), "m")
                .doc("world x of the contact point (where the suspension ray meets the ground; Unity's WheelHit.point); 0 in the air"),
            VarDecl::new("hit_y", VarSource::Custom(9), "m").doc("world y of the contact point; 0 in the air"),
            VarDecl::new("hit_z", VarSource::Custom(10), "m").doc("world z of the contact point (0 on the ground plane); 0 in the air"),
            VarDecl::new("normal_x", VarSource::Custom(11), "1")
                .doc("world x of the ground's unit normal at the contact (Unity's WheelHit.normal); 0 in the air"),
            VarDecl::new("normal_y", VarSource::Custom(12), "1").doc("world y of the ground normal; 0 in the air"),
            VarDecl::new("normal_z", VarSource::Custom(13), "1").doc("world z of the ground normal: 1 on the plane, 0 in the air"),
        ];
        if self.kerb_ix().is_some() {
            v.push(
                VarDecl::new("kerb_energy", VarSource::Custom(14), "J")
                    .doc("on a road with kerb steps: the suspension energy (spring and bump stop) the located kerb crossings added (+ up a kerb, − down one); the energy audit books these jumps as (negative) impact loss, not as the wheel's (see docs/vehicle.md)"),
            );
        }
        if self.stick.is_some() {
            v.push(
                VarDecl::new("patch_stuck", VarSource::Custom(6), "1")
                    .doc("with static_friction: 1 while the contact patch sticks, else 0"),
            );
        }
        // The custom variables are functions of the pose, the spin, the patch states and
        // the inputs (steer, anti-roll bar force): usable as signals before the solve.
        v = v.into_iter().map(VarDecl::from_inputs).collect();
        for d in VarDecl::friction_set(0, "brake_", true) {
            if matches!(
                d.source,
                VarSource::Friction(
                    _,
                    FrictionVar::Tau | FrictionVar::Mode | FrictionVar::PowerLoss
                )
            ) {
                v.push(d);
            }
        }
        let mech = MechDecl {
            masses: vec![(HUB, self.inertia)],
            frictions: vec![FrictionDecl::new(Row(vec![(HUB, 1.0)]), "brake")],
            has_forces: true,
            ..Default::default()
        };
        BlockDecl {
            ports,
            states,
            variables: v,
            mech,
            ..BlockDecl::default()
        }
        .guards_named(
            self.own_guards() + self.road.as_ref().map_or(0, |r| r.edges().len()),
            |i| {
                let base = self.own_guards();
                if i >= base {
                    if let Some(e) = self.road.as_ref().and_then(|r| r.edges().get(i - base)) {
                        return format!("road: {}", e.label);
                    }
                }
                ["contact", "patch_rest", "patch_breakaway"]
                    .get(i)
                    .map_or_else(|| format!("guard{i}"), |s| s.to_string())
            },
        )
        .feedthrough_by(|input| input == IN_STEER)
        .network_outputs_by(
            |output| // `fz` includes the anti-roll bar's force, an input fed by the wheels'
        // compressions: computed after the other outputs, it closes no algebraic loop.
        output == OUT_FZ,
        )
    }
    fn attach(
        &mut self,
        port: usize,
        data: Arc<dyn std::any::Any + Send + Sync>,
    ) -> Result<(), String> {
        if port != ROAD {
            return Ok(());
        }
        let surface = data
            .downcast::<Surface>()
            .map_err(|_| "expects the surface of a Road block".to_string())?;
        self.road = Some(surface);
        self.sides = None;
        // Off the plane's path: a wheel without a road carries a pointer, not the cache.
        self.last_ray = Some(Box::default());
        Ok(())
    }
    fn start_warning(&self, cx: &Cx) -> Option<String> {
        // The world height of the mount point, as `kinematics` (a body starts upright:
        // its initial attitude is a heading only).
        let st = cx.frame(BODY);
        let mut hc = st.pos()[2] + dot(st.rotation()[2], self.center);
        if let Some(road) = &self.road {
            let m = st.point(self.center);
            hc = m[2] - road.height(m[0], m[1]);
        }
        (hc < 0.0).then(|| {
            format!(
                "its mount point (center [{}, {}, {}] m in body axes) starts {:.4} m below the ground: the suspension meets no ground, so the wheel carries no load and the body falls through the plane; raise the body's initial height (z0) or the wheel's center",
                self.center[0], self.center[1], self.center[2], -hc
            )
        })
    }
    fn initial_speeds(&self, cx: &Cx) -> Vec<(usize, f64)> {
        let w = match self.w0 {
            Some(w) => w,
            None => {
                // Rolling without slip: radius·w equals the forward speed along the
                // steered heading of the contact (on the ground) or of the wheel's lowest
                // point at full extension (in the air: it lands rolling).
                let st = cx.frame(BODY);
                let k = self.kinematics(st, 0.0, cx.u(IN_STEER), 0.0);
                if k.grounded {
                    -k.sx / self.radius
                } else {
                    let [hx, hy] = heading(st.rotation(), cx.u(IN_STEER));
                    let low = [
                        self.center[0],
                        self.center[1],
                        self.center[2] - self.dist - self.radius,
                    ];
                    let v = st.point_velocity(low);
                    (v[0] * hx + v[1] * hy) / self.radius
                }
            }
        };
        vec![(HUB, w)]
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        // On the ground plane (a constant `None`) the road's code drops out and the
        // contact stays in registers; a road's path is a call.
        match self.road {
            None => self.outputs_on(None, cx, y),
            Some(_) => self.outputs_outlined(cx, y),
        }
    }
    fn network_outputs(&self, cx: &Cx, y: &mut [f64]) {
        let st = cx.frame(BODY);
        y[OUT_FZ] = match self.road {
            None => self.normal_load(None, st, cx.u(IN_BAR)),
            Some(_) => self.normal_load_outlined(st, cx.u(IN_BAR)),
        };
    }
    fn forces(&self, cx: &Cx, f: &mut Forces) {
        // A stuck patch's forces (static friction) go through the call too: the slipping
        // tire on the plane is the path every evaluation of a plain car takes.
        let stuck = self.mode == Patch::Stick && self.stick.is_some();
        if self.road.is_none() && !stuck {
            self.forces_on(None, cx, f);
        } else {
            self.forces_outlined(cx, f);
        }
    }
    fn friction(&self, _k: usize, cx: &Cx, _w_rel: f64) -> FrictionLaw {
        let t = cx.u(IN_BRAKE).max(0.0);
        FrictionLaw {
            kinetic: t,
            lo: -t,
            hi: t,
            engagement: t,
        }
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        self.var_of(&self.vars_contact(cx, &[i]), cx, i)
    }
    fn vars(&self, cx: &Cx, which: &[usize], out: &mut [f64]) {
        // One contact for all of them (recording logs fx, fy, compression together).
        let k = self.vars_contact(cx, which);
        for (o, &i) in out.iter_mut().zip(which) {
            *o = self.var_of(&k, cx, i);
        }
    }
    fn potential_energy(&self, cx: &Cx) -> f64 {
        // With the located modes: a kerb's jump of the compression at its crossing is a
        // jump of this energy, which the audit books as impact loss (not the wheel's).
        // The compression and the load only: no tire forces.
        let k = self.kinematics(cx.frame(BODY), cx.v(HUB), cx.u(IN_STEER), cx.u(IN_BAR));
        let e = self.stored(k.c);
        match self.stick {
            // The patch spring: ½·fz·(kx·dx² + ky·dy²) (d is 0 while the patch slips).
            Some(st) if k.grounded => {
                let (dx, dy) = (cx.x[0], cx.x[1]);
                e + 0.5 * k.fz * (st.kx * dx * dx + st.ky * dy * dy)
            }
            _ => e,
        }
    }
    fn initial_states(&self, x: &mut [f64]) {
        x.fill(0.0);
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        // The kerb energy changes only at the located kerb crossings.
        dx.fill(0.0);
        if self.stick.is_none() {
            return;
        }
        if self.mode == Patch::Stick {
            let k = self.kinematics(cx.frame(BODY), cx.v(HUB), cx.u(IN_STEER), 0.0);
            if k.grounded {
                dx[0] = k.sx;
                dx[1] = k.sy;
            }
        }
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let st = cx.frame(BODY);
        let ray = self.ray(st);
        let eps = REACH_EPS * self.dist;
        g[0] = match self.reach_in(&ray) {
            Reach::Airborne => -ray.c - eps,
            Reach::Grounded => ray.c + 3.0 * eps,
        };
        if let Some(road) = &self.road {
            self.edge_guards(road, &ray, &mut g[self.own_guards()..]);
        }
        let Some(stick) = self.stick else {
            return;
        };
        let w = cx.v(HUB);
        let k = self.kinematics(st, w, cx.u(IN_STEER), cx.u(IN_BAR));
        let r = self.rest_ratio(&stick, &k, w);
        match self.mode {
            Patch::Slip { armed: true } => {
                g[1] = if k.grounded {
                    r - (1.0 - STICK_EPS)
                } else {
                    1.0
                };
                g[2] = 1.0;
            }
            Patch::Slip { armed: false } => {
                g[1] = (1.0 + STICK_EPS) - r;
                g[2] = 1.0;
            }
            Patch::Stick => {
                let n =
                    self.stick_ratio(&stick, &k, [cx.x[0], cx.x[1]], self.mu_of(&k, cx.u(IN_MU)));
                g[1] = 2.0 * (1.0 + STICK_EPS) - self.radius * w.abs() / stick.v_rest;
                g[2] = (1.0 + STICK_EPS) - n;
            }
        }
    }
    fn reset(&mut self, _t0: f64) {
        self.mode = Patch::Slip { armed: true };
        self.reach = None;
        self.sides = None;
    }
    fn update_modes(&mut self, ecx: &mut EventCx) -> bool {
        // The road's edges first: a kerb changes the compression the contact mode sees.
        let sides_changed = self.update_sides(ecx);
        let reach_changed = self.update_reach(ecx) || sides_changed;
        let Some(st) = self.stick else {
            return reach_changed;
        };
        let (k, w, d, mu) = {
            let cx = ecx.view();
            let w = cx.v(HUB);
            (
                self.kinematics(cx.frame(BODY), w, cx.u(IN_STEER), cx.u(IN_BAR)),
                w,
                [cx.x[0], cx.x[1]],
                cx.u(IN_MU),
            )
        };
        let mu = self.mu_of(&k, mu);
        let r = self.rest_ratio(&st, &k, w);
        let old = self.mode;
        let new = match old {
            Patch::Slip { armed } => {
                let armed = armed || r > 1.0;
                if armed && k.grounded && r < 1.0 && self.stick_ratio(&st, &k, [0.0, 0.0], mu) < 1.0
                {
                    Patch::Stick
                } else {
                    Patch::Slip { armed }
                }
            }
            Patch::Stick => {
                let n = self.stick_ratio(&st, &k, d, mu);
                if !k.grounded {
                    ecx.log(EventTag::Unlock, "patch: wheel left the ground");
                    Patch::Slip { armed: true }
                } else if n > 1.0 {
                    let e = 0.5 * k.fz * (st.kx * d[0] * d[0] + st.ky * d[1] * d[1]);
                    ecx.log(
                        EventTag::Unlock,
                        format!(
                            "patch breakaway: force {:.4} of the friction limit, fx {:.6e} N, fy {:.6e} N, deflection [{:.6e}, {:.6e}] m, {:.6e} J released",
                            n,
                            st.unit_force(&k, d, mu).0 * k.fz,
                            st.unit_force(&k, d, mu).1 * k.fz,
                            d[0],
                            d[1],
                            e
                        ),
                    );
                    Patch::Slip { armed: r > 1.0 }
                } else if self.radius * w.abs() > 2.0 * st.v_rest {
                    ecx.log(
                        EventTag::Unlock,
                        "patch: wheel rolls away (rim speed above 2·stick_speed)",
                    );
                    Patch::Slip { armed: true }
                } else {
                    Patch::Stick
                }
            }
        };
        if new == Patch::Stick && old != Patch::Stick {
            ecx.log(
                EventTag::Lock,
                format!(
                    "patch sticks: slip [{:.6e}, {:.6e}] m/s, rim speed {:.6e} m/s",
                    k.sx,
                    k.sy,
                    self.radius * w
                ),
            );
        }
        if (new == Patch::Stick) != (old == Patch::Stick) {
            // The deflection starts from 0 when the patch sticks; at a breakaway its
            // spring energy is released (the audit books it as impact loss).
            ecx.x[0] = 0.0;
            ecx.x[1] = 0.0;
        }
        self.mode = new;
        new != old || reach_changed
    }
}

impl WheelCollider {
    /// The block's own guards: `contact`, and the patch's two with static friction.
    fn own_guards(&self) -> usize {
        if self.stick.is_some() {
            3
        } else {
            1
        }
    }
    /// The road-edge guards: the signed distance of the edge point past each edge's line,
    /// positive on the wheel's side, located `EDGE_EPS` beyond the line; 1 while the axis
    /// cannot meet the road.
    fn edge_guards(&self, road: &Surface, ray: &Ray, g: &mut [f64]) {
        let Some(hit) = ray.hit else {
            g.fill(1.0);
            return;
        };
        for (i, (e, gi)) in road.edges().iter().zip(g.iter_mut()).enumerate() {
            let d = e.distance(hit.q[0], hit.q[1]);
            let side = self.sides.as_ref().map_or(d >= 0.0, |s| s[i]);
            *gi = if side { d + EDGE_EPS } else { EDGE_EPS - d };
        }
    }
    /// The road's edges at an event instant: each side follows the edge point (`≥ 0`
    /// past the line). A crossing that changes the kerb height or the friction scale at
    /// the point is logged (`zero_crossing`, "road: ..."); at the run's initial event the
    /// sides are set from the point without a log line. Returns whether a side changed.
    fn update_sides(&mut self, ecx: &mut EventCx) -> bool {
        let Some(road) = self.road.clone() else {
            return false;
        };
        let ray = self.ray(ecx.view().frame(BODY));
        let Some(hit) = ray.hit else {
            return false;
        };
        let [x, y] = hit.q;
        let new = road.sides_at(x, y);
        let Some(old) = self.sides.replace(new.clone()) else {
            return false;
        };
        if old == new {
            return false;
        }
        // A kerb makes the compression jump: the spring's energy changes with no work
        // done (the audit books it as impact loss); sum it in kerb_energy.
        let jump = self.stored(self.compression(&self.ray(ecx.view().frame(BODY))))
            - self.stored(self.compression(&ray));
        if let Some(i) = self.kerb_ix() {
            ecx.x[i] += jump;
        }
        let (dh, mu0, mu1) = (
            road.steps(x, y, Some(&new)) - road.steps(x, y, Some(&old)),
            road.mu(x, y, Some(&old)),
            road.mu(x, y, Some(&new)),
        );
        if dh != 0.0 || mu0 != mu1 {
            let crossed: Vec<&str> = road
                .edges()
                .iter()
                .zip(old.iter().zip(&new))
                .filter(|(_, (a, b))| a != b)
                .map(|(e, _)| e.label.as_str())
                .collect();
            ecx.log(
                EventTag::ZeroCrossing,
                format!(
                    "road: crossed {} at x = {x:.6} m, y = {y:.6} m: kerb step {dh:+.6} m, friction scale {mu0} -> {mu1}, suspension energy {jump:+.6e} J (kerb_energy)",
                    crossed.join(", ")
                ),
            );
        }
        true
    }
    /// The contact's mode at an event instant: `touchdown` once the compression has
    /// reached the ground (`c > −2ε`), `liftoff` once it is below `−2ε`; at the run's
    /// initial event the mode is set from the pose without a log line. Returns whether
    /// the mode changed.
    fn update_reach(&mut self, ecx: &mut EventCx) -> bool {
        let (ray, vz) = {
            let cx = ecx.view();
            let st = cx.frame(BODY);
            let ray = self.ray(st);
            let s = self.reach_len - ray.c;
            let vz = st.point_velocity([self.center[0], self.center[1], self.center[2] - s])[2];
            (ray, vz)
        };
        let eps = REACH_EPS * self.dist;
        let on_ground = ray.c > -2.0 * eps;
        let new = if on_ground {
            Reach::Grounded
        } else {
            Reach::Airborne
        };
        let old = self.reach.replace(new);
        match (old, new) {
            (Some(Reach::Airborne), Reach::Grounded) => ecx.log(
                EventTag::Touchdown,
                format!(
                    "the suspension ray meets the ground: compression {:.6e} m, vertical speed {:.6e} m/s",
                    ray.c, vz
                ),
            ),
            (Some(Reach::Grounded), Reach::Airborne) => ecx.log(
                EventTag::Liftoff,
                format!(
                    "the wheel hangs free: compression {:.6e} m, vertical speed {:.6e} m/s",
                    ray.c, vz
                ),
            ),
            _ => {}
        }
        // Before the initial event the geometry decided (`c ≥ 0`): a change only if the
        // located mode differs from it.
        let was = old.unwrap_or(if ray.c >= 0.0 {
            Reach::Grounded
        } else {
            Reach::Airborne
        });
        was != new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The friction circle's `per_rho` is the curve divided through by the normalized
    /// slip, on every branch, and the rising branch's slope at standstill.
    #[test]
    fn per_rho_is_the_curve_over_the_normalized_slip_on_every_branch() {
        let c = Curve::new(0.4, 1.0, 0.8, 0.5);
        assert_eq!(c.per_rho(0.0), c.ye);
        for i in 1..=600 {
            let rho = f64::from(i) * 0.005; // 0.005 .. 3: rising, falling, asymptote
            let want = c.at(rho * c.xe) / rho;
            let got = c.per_rho(rho);
            assert!(
                (got - want).abs() <= 4.0 * f64::EPSILON * want.abs(),
                "rho {rho}: {got} vs {want}"
            );
        }
        // Continuous at the extremum and at the asymptote.
        for edge in [1.0, c.rho_a] {
            let (lo, hi) = (c.per_rho(edge * (1.0 - 1e-12)), c.per_rho(edge));
            assert!((lo - hi).abs() < 1e-9, "jump at rho {edge}: {lo} vs {hi}");
        }
    }

    /// Parameters of catalogue type `ty` from `raw`.
    fn params(ty: &str, raw: serde_json::Value) -> Params {
        let reg = crate::registry();
        let t = reg.get(ty).expect("a catalogue type");
        let raw = raw.as_object().expect("an object");
        let scope = drivelink_core::compile::Scope::new();
        drivelink_core::compile::resolve_params("b", ty, &t.params, raw, &scope)
            .expect("valid parameters")
    }

    /// A wheel with the catalogue's defaults on a road with a cosine bump, a kerb step
    /// (its edge is the wheel's sides) and a grade.
    fn wheel_on_road() -> WheelCollider {
        let road = params(
            "Road",
            serde_json::json!({"features": [
                {"type": "bump", "x": 1.0, "length": 2.0, "height": 0.1, "shape": "cosine"},
                {"type": "bump", "x": 2.5, "height": 0.05, "shape": "step"},
                {"type": "grade", "angle": 0.02}
            ]}),
        );
        let surface = crate::vehicle::road::surface(&road).expect("a road");
        let mut w = collider(&params(
            "WheelCollider",
            serde_json::json!({"center": [0.0, 0.0, 0.0]}),
        ))
        .expect("a wheel");
        w.attach(ROAD, Arc::new(surface)).expect("attaches");
        w
    }

    /// A body pose at `(x, y, z)`, pitched by `pitch` rad.
    fn pose(x: f64, y: f64, z: f64, pitch: f64) -> FrameState {
        let mut s = [0.0; drivelink_core::frame::FRAME_STATES];
        s[..3].copy_from_slice(&[x, y, z]);
        s[3] = (0.5 * pitch).cos();
        s[5] = (0.5 * pitch).sin();
        FrameState::from_slice(&s)
    }

    /// A ray as text that tells any two rays apart (every field, the road hit's
    /// included; `Debug` prints each number so that it reads back to the same bits).
    fn ray_bits(r: &Ray) -> String {
        format!("{r:?}")
    }

    #[test]
    fn a_ray_solved_again_from_its_end_reuses_the_end_point_to_the_bit() {
        // Tilted rays over the bump and the grade: solving again from the first solve's
        // end with the value known there gives the bits of a solve that evaluates it.
        let w = wheel_on_road();
        let road = w.road.clone().expect("a road");
        for i in 0..40 {
            let x = -0.5 + 0.1 * f64::from(i);
            let m = [x, 0.2, 0.6];
            let d = [0.05 * (0.3 * x).sin(), -0.02, -1.0];
            let ((sq, at), at_end) = solve_ray_from(&road, m, d, 0.0, (0.5, None), None);
            assert!(at_end && sq.is_finite(), "x {x}");
            let again = solve_ray(&road, m, d, 0.0, sq, None);
            let reused = solve_ray_from(&road, m, d, 0.0, (sq, Some(at)), None).0;
            let bits = |(s, (h, hx, hy)): RayPoint| [s, h, hx, hy].map(f64::to_bits);
            assert_eq!(bits(reused), bits(again), "x {x}");
            // The end lies on the road.
            let p = [m[0] + sq * d[0], m[1] + sq * d[1], m[2] + sq * d[2]];
            let (h, _, _) = road.smooth(p[0], p[1], None);
            assert!(
                (p[2] - h).abs() < 1e-12,
                "x {x}: {} above the road",
                p[2] - h
            );
        }
    }

    #[test]
    fn a_ray_cast_again_on_a_road_is_the_ray_cast_afresh() {
        // The wheel casts at poses A, B, A, A, then A raised, then pitched, and with other
        // sides: each ray is, to the bit, the ray a wheel that has cast nothing gives; the
        // repeated pose is served from the last cast.
        let poses = [
            pose(0.9, 0.1, 0.55, 0.01),
            pose(1.6, -0.2, 0.6, -0.02),
            pose(0.9, 0.1, 0.55, 0.01),
            pose(0.9, 0.1, 0.55, 0.01),
            pose(0.9, 0.1, 0.57, 0.01),
            pose(0.9, 0.1, 0.57, 0.03),
            pose(2.6, 0.0, 0.62, 0.0),
        ];
        let mut w = wheel_on_road();
        for (i, st) in poses.iter().enumerate() {
            let fresh = wheel_on_road().ray(st);
            let got = w.ray(st);
            assert_eq!(ray_bits(&got), ray_bits(&fresh), "pose {i}");
            assert!(
                got.meets && got.c > 0.0,
                "pose {i}: the wheel touches the road"
            );
        }
        let cached = |w: &WheelCollider| w.last_ray.as_ref().is_some_and(|l| l.is_kept());
        assert!(cached(&w));
        // Other sides of the step's edge (set at an event): a new key, cast afresh, the
        // step's height then applies.
        let road = w.road.clone().expect("a road");
        let st = &poses[6];
        let before = w.ray(st);
        let flipped: Vec<bool> = road.sides_at(0.0, 0.0);
        w.sides = Some(flipped.clone());
        let mut fresh = wheel_on_road();
        fresh.sides = Some(flipped);
        assert_eq!(ray_bits(&w.ray(st)), ray_bits(&fresh.ray(st)));
        assert_ne!(
            ray_bits(&w.ray(st)),
            ray_bits(&before),
            "the step changes the ray"
        );
        // A new road forgets the last ray.
        w.attach(ROAD, road).expect("attaches");
        assert!(!cached(&w));
    }
}
