//! Mechanical blocks: rotational and translational components (Modelica layout:
//! components, sources, sensors), and the friction elements Clutch, Brake, OneWayClutch.
//!
//! Units: angles rad, speeds rad/s, torques N·m, positions m, velocities m/s, forces N.
//! Two-flange elements follow one convention: `w_rel = w_b − w_a`, and `tau` is the torque
//! transmitted from flange_a to flange_b (it accelerates b by +tau and a by −tau).

use drivelink_core::{
    BlockBuild, BlockDecl, BlockType, Constraint, Cx, EnergyRole, EventCx, EventTag, Forces,
    FrictionDecl, FrictionLaw, HeatFlows, MechDecl, ParamDefault, ParamError, ParamKind, ParamSpec,
    ParamValue, Params, PortDecl, Registry, Row, RowKind, VarDecl, VarSource,
};
use serde_json::json;

use drivelink_core::block::{kernel, Kernel, Operand};
use drivelink_core::Block;

use crate::driveline::lossy::{GEAR_PORTS, PLANETARY_PORTS};
use crate::driveline::{LossyGear, MeshLoss};
use crate::util::{force_mech, loss_heat, Compliant, CompliantLaw, FlangePair, Table1D};

fn num(name: &'static str, unit: &'static str, default: f64, doc: &'static str) -> ParamSpec {
    ParamSpec::number(name, unit, default, doc)
}

fn req(name: &'static str, unit: &'static str, doc: &'static str) -> ParamSpec {
    ParamSpec::required(name, unit, doc)
}

/// Register the mechanical blocks.
pub fn register(r: &mut Registry) {
    r.register(inertia_type());
    r.register(fixed_type());
    r.register(torque_source_type());
    r.register(force_source_type());
    r.register(speed_source_type());
    r.register(ideal_gear_type());
    r.register(planetary_gear_type());
    r.register(spring_damper_type());
    r.register(damper_type());
    r.register(clutch_type());
    r.register(brake_type());
    r.register(one_way_clutch_type());
    r.register(bearing_friction_type());
    r.register(torque_sensor_type());
    r.register(motion_sensor_type());
    r.register(speed_ratio_type());
    r.register(mass_type());
    r.register(ideal_rolling_wheel_type());
    r.register(road_load_type());
}

/// The `Inertia` block type: its parameters and how it is built.
fn inertia_type() -> BlockType {
    BlockType {
        name: "Inertia",
        category: "mechanical",
        doc: "Rotational inertia J on one flange.",
        ports_doc: "flange[rot]",
        params: vec![
            req("J", "kg*m^2", "moment of inertia (>= 0)"),
            num("w0", "rad/s", 0.0, "initial speed"),
            num("phi0", "rad", 0.0, "initial angle"),
        ],
        build: BlockBuild::Primitive(|p| {
            Ok(Box::new(Inertia {
                j: p.non_negative("J")?,
                w0: p.num("w0")?,
                phi0: p.num("phi0")?,
            }))
        }),
    }
}

/// The `Fixed` block type: its parameters and how it is built.
fn fixed_type() -> BlockType {
    BlockType {
        name: "Fixed",
        category: "mechanical",
        doc: "Ground: holds its flange at zero speed.",
        ports_doc: "flange[rot]",
        params: vec![],
        build: BlockBuild::Primitive(|_| Ok(Box::new(Fixed))),
    }
}

/// The `TorqueSource` block type: its parameters and how it is built.
fn torque_source_type() -> BlockType {
    BlockType {
        name: "TorqueSource",
        category: "mechanical",
        doc: "Applies the input torque to the flange (relative to the support), the reaction to the optional support (ground when unconnected).",
        ports_doc: "tau[in], flange[rot], support[rot] (optional)",
        params: vec![],
        build: BlockBuild::Primitive(|_| Ok(Box::new(Source { trans: false }))),
    }
}

/// The `ForceSource` block type: its parameters and how it is built.
fn force_source_type() -> BlockType {
    BlockType {
        name: "ForceSource",
        category: "mechanical",
        doc: "Applies the input force to the translational flange (reaction on ground).",
        ports_doc: "f[in], flange[trans]",
        params: vec![],
        build: BlockBuild::Primitive(|_| Ok(Box::new(Source { trans: true }))),
    }
}

/// The `SpeedSource` block type: its parameters and how it is built.
fn speed_source_type() -> BlockType {
    BlockType {
        name: "SpeedSource",
        category: "mechanical",
        doc: "Prescribes the flange speed relative to the optional support (ground when unconnected) from the input, tracked with time constant tc (like Modelica Speed with exact=false).",
        ports_doc: "w[in], flange[rot], support[rot] (optional)",
        params: vec![
        num("tc", "s", 1e-3, "tracking time constant of the prescribed speed (> 0)"),
    ],
        build: BlockBuild::Primitive(|p| Ok(Box::new(SpeedSource { tc: p.positive("tc")? }))),
    }
}

/// The `IdealGear` block type: its parameters and how it is built.
fn ideal_gear_type() -> BlockType {
    BlockType {
        name: "IdealGear",
        category: "mechanical",
        doc: "Gear w_a − w_s = ratio·(w_b − w_s) (support = ground when unconnected); lossless, or with a mesh efficiency in both directions of power flow (a LossyGear with lossTable [[0, efficiency, efficiency, 0, 0]]: it can lock when driven from the wrong side).",
        ports_doc: "flange_a[rot], flange_b[rot], support[rot] (optional), heat[heat] (optional)",
        params: vec![
            req("ratio", "1", "gear ratio w_a/w_b (non-zero)"),
            ParamSpec::optional("efficiency", ParamKind::Number { unit: "1" }, "mesh efficiency in (0, 1] in both directions of power flow (default 1: lossless); the loss power goes to the heat port"),
        ],
        build: BlockBuild::Primitive(|p| {
            let ratio = p.num("ratio")?;
            if ratio == 0.0 || !ratio.is_finite() {
                return Err(p.invalid("ratio", "must be finite and non-zero"));
            }
            Ok(Box::new(LossyGear {
                names: GEAR_PORTS,
                ratio,
                loss: MeshLoss::from_efficiency(p, "efficiency")?,
            }))
        }),
    }
}

/// The `PlanetaryGear` block type: its parameters and how it is built.
fn planetary_gear_type() -> BlockType {
    BlockType {
        name: "PlanetaryGear",
        category: "mechanical",
        doc: "Planetary gear: (1+g)·w_carrier = w_sun + g·w_ring, g = ring/sun teeth; lossless, or with a mesh efficiency on the power rolling through the meshes (in the carrier frame: a LossyGear sun → ring of ratio −g with the carrier as support).",
        ports_doc: "sun[rot], ring[rot], carrier[rot], heat[heat] (optional)",
        params: vec![
            req("ratio", "1", "ring/sun teeth ratio (> 1)"),
            ParamSpec::optional("efficiency", ParamKind::Number { unit: "1" }, "mesh efficiency in (0, 1] of the power rolling through the meshes (relative to the carrier), both directions (default 1: lossless)"),
        ],
        build: BlockBuild::Primitive(|p| {
            let g = p.num("ratio")?;
            if !(g > 1.0 && g.is_finite()) {
                return Err(p.invalid("ratio", format!("must be > 1 (ring/sun teeth), got {g}")));
            }
            Ok(Box::new(LossyGear {
                names: PLANETARY_PORTS,
                ratio: -g,
                loss: MeshLoss::from_efficiency(p, "efficiency")?,
            }))
        }),
    }
}

/// The `SpringDamper` block type: its parameters and how it is built.
fn spring_damper_type() -> BlockType {
    BlockType {
        name: "SpringDamper",
        category: "mechanical",
        doc: "Linear torsional spring and damper in parallel. Logged tau is the torque transmitted from flange_a to flange_b (it accelerates flange_b): tau = −(c·(phi_rel − phi_rel0) + d·w_rel) with phi_rel = phi_b − phi_a, w_rel = w_b − w_a. Modelica's SpringDamper tau (the cut torque at flange_b) is the opposite sign. The optional heat port receives the damper's loss d·w_rel².",
        ports_doc: "flange_a[rot], flange_b[rot], heat[heat] (optional)",
        params: vec![
            req("c", "N*m/rad", "spring stiffness (>= 0)"),
            num("d", "N*m*s/rad", 0.0, "damping (>= 0)"),
            num("phi_rel0", "rad", 0.0, "unstretched relative angle"),
        ],
        build: BlockBuild::Primitive(|p| {
            Ok(Box::new(Compliant(SpringDamper {
                c: p.non_negative("c")?,
                d: p.non_negative("d")?,
                phi0: p.num("phi_rel0")?,
            })))
        }),
    }
}

/// The `Damper` block type: its parameters and how it is built.
fn damper_type() -> BlockType {
    BlockType {
        name: "Damper",
        category: "mechanical",
        doc: "Linear torsional damper. Logged tau is the torque transmitted from flange_a to flange_b: tau = −d·w_rel with w_rel = w_b − w_a (Modelica's Damper tau is the opposite sign). The optional heat port receives the loss d·w_rel².",
        ports_doc: "flange_a[rot], flange_b[rot], heat[heat] (optional)",
        params: vec![req("d", "N*m*s/rad", "damping (>= 0)")],
        build: BlockBuild::Primitive(|p| {
            Ok(Box::new(Compliant(SpringDamper {
                c: 0.0,
                d: p.non_negative("d")?,
                phi0: 0.0,
            })))
        }),
    }
}

/// The `Clutch` block type: its parameters and how it is built.
fn clutch_type() -> BlockType {
    BlockType {
        name: "Clutch",
        category: "mechanical",
        doc: "Friction clutch with Coulomb stuck/slip state machine; f is the normalized normal force. Logged tau is the torque transmitted from flange_a to flange_b (sliding: −sign(w_rel)·mu·cgeo·fn; locked: the holding torque); Modelica's Clutch tau is the opposite sign. The optional heat port receives the friction loss power.",
        ports_doc: "flange_a[rot], flange_b[rot], f[in], heat[heat] (optional)",
        params: friction_params(true),
        build: BlockBuild::Primitive(|p| {
            Ok(Box::new(Clutch {
                law: FrictionParams::from_params(p, true)?,
            }))
        }),
    }
}

/// The `Brake` block type: its parameters and how it is built.
fn brake_type() -> BlockType {
    BlockType {
        name: "Brake",
        category: "mechanical",
        doc: "Friction brake between the flange and the optional support (ground when unconnected); f is the normalized normal force. Logged tau is the torque the brake applies to the flange (negative while w > w_support); Modelica's Brake tau is the opposite sign. The optional heat port receives the friction loss power.",
        ports_doc: "flange[rot], f[in], support[rot] (optional), heat[heat] (optional)",
        params: friction_params(false),
        build: BlockBuild::Primitive(|p| {
            Ok(Box::new(Brake {
                law: FrictionParams::from_params(p, false)?,
            }))
        }),
    }
}

/// The `OneWayClutch` block type: its parameters and how it is built.
fn one_way_clutch_type() -> BlockType {
    BlockType {
        name: "OneWayClutch",
        category: "mechanical",
        doc: "Freewheel and clutch in parallel (MSL OneWayClutch): w_rel = w_b − w_a never goes negative (the freewheel holds any torque that would make it so); forward it overruns against the clutch's friction mu·cgeo·fn_max·f, and a locked one breaks forward away at the clutch's static capacity peak·mu(0)·cgeo·fn_max·f. f unconnected = 0: a pure freewheel. A start with w_rel < 0 is resolved as an exact plastic impact at t0 (momentum-conserving, logged with its energy loss): a freewheel cannot run backwards. The optional heat port receives the friction loss power.",
        ports_doc: "flange_a[rot], flange_b[rot], f[in] (optional, default 0), heat[heat] (optional)",
        params: friction_params(true),
        build: BlockBuild::Primitive(|p| {
            Ok(Box::new(OneWayClutch {
                law: FrictionParams::from_params(p, true)?,
                first: crate::signal::FirstCall::armed(),
            }))
        }),
    }
}

/// The `BearingFriction` block type: its parameters and how it is built.
fn bearing_friction_type() -> BlockType {
    BlockType {
        name: "BearingFriction",
        category: "mechanical",
        doc: "Coulomb bearing friction between the flange and the optional support (MSL BearingFriction): sliding torque tau_pos(|w|), stuck while the torque stays within peak·tau_pos(0). The optional heat port receives the loss power.",
        ports_doc: "flange[rot], support[rot] (optional), heat[heat] (optional)",
        params: vec![
            ParamSpec::with(
                "tau_pos",
                ParamKind::NumberOrTable { unit: "N*m" },
                ParamDefault::Value(json!(1.0)),
                "sliding friction torque (>= 0), or table [[|w| rad/s, torque N*m], ...]",
            ),
            num("peak", "1", 1.0, "static torque factor (>= 1): stuck capacity peak·tau_pos(0)"),
        ],
        build: BlockBuild::Primitive(build_bearing),
    }
}

/// The `TorqueSensor` block type: its parameters and how it is built.
fn torque_sensor_type() -> BlockType {
    BlockType {
        name: "TorqueSensor",
        category: "mechanical",
        doc: "Rigid connection that measures the torque transmitted from flange_a to flange_b.",
        ports_doc: "flange_a[rot], flange_b[rot], tau[out]",
        params: vec![],
        build: BlockBuild::Primitive(|_| Ok(Box::new(TorqueSensor))),
    }
}

/// The `MotionSensor` block type: its parameters and how it is built.
fn motion_sensor_type() -> BlockType {
    BlockType {
        name: "MotionSensor",
        category: "mechanical",
        doc: "Measures the absolute speed, angle and acceleration of a flange.",
        ports_doc: "flange[rot], w[out], phi[out], a[out]",
        params: vec![],
        build: BlockBuild::Primitive(|_| Ok(Box::new(MotionSensor))),
    }
}

/// The `SpeedRatio` block type: its parameters and how it is built.
fn speed_ratio_type() -> BlockType {
    BlockType {
        name: "SpeedRatio",
        category: "mechanical",
        doc: "Measures the speed ratio w_a/w_b of two flanges (NaN while |w_b| < min_speed).",
        ports_doc: "flange_a[rot], flange_b[rot], ratio[out]",
        params: vec![num(
            "min_speed",
            "rad/s",
            1e-3,
            "below this |w_b| the ratio is undefined (NaN)",
        )],
        build: BlockBuild::Primitive(|p| {
            Ok(Box::new(SpeedRatio {
                min: p.non_negative("min_speed")?,
            }))
        }),
    }
}

/// The `Mass` block type: its parameters and how it is built.
fn mass_type() -> BlockType {
    BlockType {
        name: "Mass",
        category: "mechanical",
        doc: "Translational mass m.",
        ports_doc: "flange[trans]",
        params: vec![
            req("m", "kg", "mass (>= 0)"),
            num("v0", "m/s", 0.0, "initial velocity"),
            num("s0", "m", 0.0, "initial position"),
        ],
        build: BlockBuild::Primitive(|p| {
            Ok(Box::new(Mass {
                m: p.non_negative("m")?,
                v0: p.num("v0")?,
                s0: p.num("s0")?,
            }))
        }),
    }
}

/// The `IdealRollingWheel` block type: its parameters and how it is built.
fn ideal_rolling_wheel_type() -> BlockType {
    BlockType {
        name: "IdealRollingWheel",
        category: "mechanical",
        doc: "Rolling without slip: v_body = radius·w_hub.",
        ports_doc: "hub[rot], body[trans]",
        params: vec![req("radius", "m", "rolling radius (> 0)")],
        build: BlockBuild::Primitive(|p| {
            Ok(Box::new(RollingWheel {
                r: p.positive("radius")?,
            }))
        }),
    }
}

/// The `RoadLoad` block type: its parameters and how it is built.
fn road_load_type() -> BlockType {
    BlockType {
        name: "RoadLoad",
        category: "mechanical",
        doc: "Road load F = −sgn(v)·(A + B|v| + C·v²), the constant part regularized by tanh(v/v_reg) at standstill.",
        ports_doc: "flange[trans]",
        params: vec![
        num("A", "N", 0.0, "constant (rolling) resistance (>= 0)"),
        num("B", "N*s/m", 0.0, "linear coefficient (>= 0)"),
        num("C", "N*s^2/m^2", 0.0, "quadratic (aerodynamic) coefficient (>= 0)"),
        num("v_reg", "m/s", 1e-3, "regularization speed of the constant part at standstill (> 0)"),
    ],
        build: BlockBuild::Primitive(|p| Ok(Box::new(RoadLoad { a: p.non_negative("A")?, b: p.non_negative("B")?, c: p.non_negative("C")?, v_reg: p.positive("v_reg")? }))),
    }
}

fn friction_params(two_flange: bool) -> Vec<ParamSpec> {
    let _ = two_flange;
    vec![
        ParamSpec::with(
            "mu",
            ParamKind::NumberOrTable { unit: "1" },
            ParamDefault::Value(json!(0.3)),
            "kinetic friction coefficient, or table [[slip speed rad/s, mu], ...]",
        ),
        num(
            "peak",
            "1",
            1.1,
            "static friction peak factor (>= 1): static capacity = peak·cgeo·mu(0)·fn",
        ),
        num(
            "cgeo",
            "m",
            1.0,
            "geometry constant: torque = cgeo·mu·normal force (surfaces·radius)",
        ),
        ParamSpec::optional(
            "surfaces",
            ParamKind::Number { unit: "1" },
            "number of friction surfaces (with radius, sets cgeo = surfaces·radius)",
        ),
        ParamSpec::optional(
            "radius",
            ParamKind::Number { unit: "m" },
            "effective torque radius (with surfaces)",
        ),
        num("fn_max", "N", 1000.0, "normal force at input f = 1"),
        ParamSpec::optional(
            "max_torque",
            ParamKind::Number { unit: "N*m" },
            "kinetic torque at f = 1 (sets mu = 1, cgeo = 1, fn_max = max_torque)",
        ),
    ]
}

/// Parameters of a Coulomb friction element.
#[derive(Debug, Clone)]
pub struct FrictionParams {
    /// Kinetic coefficient vs |slip speed|.
    mu: Table1D,
    mu0: f64,
    peak: f64,
    /// cgeo·fn_max: torque per unit mu and unit input.
    scale: f64,
}

impl FrictionParams {
    pub fn from_params(p: &Params, _two: bool) -> Result<Self, ParamError> {
        let mut scale;
        let mu = match p.values.get("mu") {
            Some(ParamValue::Number(m)) => {
                if *m < 0.0 {
                    return Err(p.invalid("mu", format!("must be >= 0, got {m}")));
                }
                Table1D::new(vec![0.0], vec![*m], false)
            }
            Some(ParamValue::Table(_)) => {
                let (x, y) = p.xy_table("mu")?;
                if x[0] < 0.0 {
                    return Err(
                        p.invalid("mu", "slip speeds in the mu table must be >= 0 (|w_rel|)")
                    );
                }
                if y.iter().any(|v| *v < 0.0) {
                    return Err(p.invalid("mu", "friction coefficients must be >= 0"));
                }
                Table1D::new(x, y, false)
            }
            _ => return Err(p.invalid("mu", "expected a number or a table [[slip, mu], ...]")),
        };
        let peak = p.num("peak")?;
        if peak < 1.0 {
            return Err(p.invalid("peak", format!("must be >= 1, got {peak}")));
        }
        let mut cgeo = p.non_negative("cgeo")?;
        match (p.opt_num("surfaces")?, p.opt_num("radius")?) {
            (Some(n), Some(r)) => {
                if n <= 0.0 || r <= 0.0 {
                    return Err(p.invalid("surfaces", "surfaces and radius must be > 0"));
                }
                cgeo = n * r;
            }
            (Some(_), None) => {
                return Err(p.invalid("radius", "is required when surfaces is given"))
            }
            (None, Some(_)) => {
                return Err(p.invalid("surfaces", "is required when radius is given"))
            }
            _ => {}
        }
        let fn_max = p.non_negative("fn_max")?;
        scale = cgeo * fn_max;
        let mut mu = mu;
        if let Some(t) = p.opt_num("max_torque")? {
            if t < 0.0 {
                return Err(p.invalid("max_torque", format!("must be >= 0, got {t}")));
            }
            mu = Table1D::new(vec![0.0], vec![1.0], false);
            scale = t;
        }
        let mu0 = mu.eval(0.0);
        Ok(FrictionParams {
            mu,
            mu0,
            peak,
            scale,
        })
    }

    /// The friction law for normalized normal force `f` at slip `w_rel`.
    #[inline]
    pub fn law(&self, f: f64, w_rel: f64) -> FrictionLaw {
        let fpos = f.max(0.0);
        let kinetic = self.scale * self.mu.eval(w_rel.abs()) * fpos;
        let cap = self.peak * self.scale * self.mu0 * fpos;
        FrictionLaw {
            kinetic,
            lo: -cap,
            hi: cap,
            engagement: f,
        }
    }
}

fn friction_vars(prefix: &str, k: usize) -> Vec<VarDecl> {
    let prefix = if prefix.is_empty() {
        String::new()
    } else {
        format!("{prefix}_")
    };
    VarDecl::friction_set(k, &prefix, true)
}

/// Rotational inertia.
struct Inertia {
    j: f64,
    w0: f64,
    phi0: f64,
}
impl Block for Inertia {
    fn declare(&self) -> BlockDecl {
        let variables = vec![
            VarDecl::new("w", VarSource::Speed(0), "rad/s").doc("speed"),
            VarDecl::new("phi", VarSource::Position(0), "rad").doc("angle"),
            VarDecl::new("a", VarSource::Accel(0), "rad/s^2").doc("angular acceleration"),
        ];
        let mech = MechDecl {
            masses: vec![(0, self.j)],
            initial: vec![(0, self.w0, self.phi0)],
            ..Default::default()
        };
        BlockDecl {
            ports: vec![PortDecl::rot("flange")],
            variables,
            mech,
            ..BlockDecl::default()
        }
    }
}

/// Ground.
struct Fixed;
impl Block for Fixed {
    fn declare(&self) -> BlockDecl {
        let mech = MechDecl {
            constraints: vec![Constraint {
                row: Row(vec![(0, 1.0)]),
                kind: RowKind::Velocity,
            }],
            ..Default::default()
        };
        BlockDecl {
            ports: vec![PortDecl::rot("flange")],
            mech,
            ..BlockDecl::default()
        }
    }
}

/// Torque or force source.
struct Source {
    trans: bool,
}
impl Block for Source {
    fn declare(&self) -> BlockDecl {
        let ports = if self.trans {
            vec![PortDecl::input("f"), PortDecl::trans("flange")]
        } else {
            vec![
                PortDecl::input("tau"),
                PortDecl::rot("flange"),
                PortDecl::support("support"),
            ]
        };
        BlockDecl {
            ports,
            mech: force_mech(),
            energy: EnergyRole::Source,
            ..BlockDecl::default()
        }
    }
    fn forces(&self, cx: &Cx, f: &mut Forces) {
        if self.trans {
            f.add(1, cx.u(0));
        } else {
            // The torque on the flange, its reaction on the support.
            FlangePair::new(2, 1).apply_drive(f, cx.u(0));
        }
    }
}

/// Prescribed speed (tracking constraint).
struct SpeedSource {
    tc: f64,
}
impl Block for SpeedSource {
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("w"),
            PortDecl::rot("flange"),
            PortDecl::support("support"),
        ];
        let variables = vec![
            VarDecl::new("w", VarSource::Speed(1), "rad/s").doc("flange speed"),
            VarDecl::new("tau", VarSource::Custom(0), "N*m")
                .doc("torque the source applies (tracking force)"),
        ];
        let mech = MechDecl {
            constraints: vec![Constraint {
                row: Row(vec![(1, 1.0), (2, -1.0)]),
                kind: RowKind::Tracking {
                    input: 0,
                    tc: self.tc,
                },
            }],
            ..Default::default()
        };
        BlockDecl {
            ports,
            variables,
            mech,
            energy: EnergyRole::Source,
            ..BlockDecl::default()
        }
    }
    fn var(&self, cx: &Cx, _i: usize) -> f64 {
        cx.lambda(0)
    }
}

struct SpringDamper {
    c: f64,
    d: f64,
    phi0: f64,
}
/// MSL `tau = c·(phi_rel − phi_rel0) + d·w_rel`, stored `c/2·(phi_rel − phi_rel0)²`,
/// loss `d·w_rel²`.
impl CompliantLaw for SpringDamper {
    fn tau(&self, phi_rel: f64, w_rel: f64) -> f64 {
        self.c * (phi_rel - self.phi0) + self.d * w_rel
    }
    fn stored(&self, phi_rel: f64) -> f64 {
        let d = phi_rel - self.phi0;
        0.5 * self.c * d * d
    }
    fn loss(&self, _phi_rel: f64, w_rel: f64) -> f64 {
        self.d * w_rel * w_rel
    }
}

/// The friction loss power of a block's joint `k` with rows before it: `−tau·w_rel`.
fn joint_loss(cx: &Cx, n_rows: usize, k: usize, w_rel: f64) -> f64 {
    -cx.lambda(n_rows + k) * w_rel
}

/// Friction clutch between two flanges.
struct Clutch {
    law: FrictionParams,
}
impl Block for Clutch {
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: vec![
                PortDecl::rot("flange_a"),
                PortDecl::rot("flange_b"),
                PortDecl::input("f"),
                PortDecl::loss_heat("heat"),
            ],
            variables: friction_vars("", 0),
            // The joint's engagement is the normalized normal force `f`, read in place.
            mech: MechDecl::joints(vec![FlangePair::AB.joint().engaged_by(0)]),
            thermal: loss_heat(),
            ..BlockDecl::default()
        }
    }
    fn friction(&self, _k: usize, cx: &Cx, w_rel: f64) -> FrictionLaw {
        self.law.law(cx.u(0), w_rel)
    }
    fn engagement(&self, _k: usize, cx: &Cx, _w_rel: f64) -> f64 {
        // `FrictionParams::law`'s engagement: the normalized normal force.
        cx.u(0)
    }
    fn heat_flows(&self, cx: &Cx, q: &mut HeatFlows) {
        q.add(3, joint_loss(cx, 0, 0, FlangePair::AB.w_rel(cx)));
    }
}

/// Friction brake to the support (ground when unconnected).
struct Brake {
    law: FrictionParams,
}
impl Block for Brake {
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::rot("flange"),
            PortDecl::input("f"),
            PortDecl::support("support"),
            PortDecl::loss_heat("heat"),
        ];
        let mut v = friction_vars("", 0);
        v.push(VarDecl::new("w", VarSource::Speed(0), "rad/s").doc("flange speed"));
        v.push(VarDecl::new("power", VarSource::Custom(0), "W").doc(
            "power of the brake torque on the flange relative to the support (<= 0 while braking)",
        ));
        // The joint's engagement is the normalized normal force `f`, read in place.
        let joint = FrictionDecl::new(Row(vec![(0, 1.0), (2, -1.0)]), "").engaged_by(0);
        BlockDecl {
            ports,
            variables: v,
            mech: MechDecl::joints(vec![joint]),
            thermal: loss_heat(),
            ..BlockDecl::default()
        }
    }
    fn friction(&self, _k: usize, cx: &Cx, w_rel: f64) -> FrictionLaw {
        self.law.law(cx.u(0), w_rel)
    }
    fn engagement(&self, _k: usize, cx: &Cx, _w_rel: f64) -> f64 {
        // `FrictionParams::law`'s engagement: the normalized normal force.
        cx.u(0)
    }
    fn heat_flows(&self, cx: &Cx, q: &mut HeatFlows) {
        q.add(3, joint_loss(cx, 0, 0, cx.v(0) - cx.v(2)));
    }
    fn var(&self, cx: &Cx, _i: usize) -> f64 {
        // Power of the brake torque on the shaft (negative while braking).
        cx.lambda(0) * (cx.v(0) - cx.v(2))
    }
}

/// Freewheel and clutch in parallel (MSL OneWayClutch).
struct OneWayClutch {
    law: FrictionParams,
    first: crate::signal::FirstCall,
}
impl Block for OneWayClutch {
    drivelink_core::run_state!(first);
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::rot("flange_a"),
            PortDecl::rot("flange_b"),
            PortDecl::optional_input("f", 0.0),
            PortDecl::loss_heat("heat"),
        ];
        let mech = MechDecl {
            frictions: vec![FlangePair::AB.joint()],
            ..Default::default()
        };
        BlockDecl {
            ports,
            variables: friction_vars("", 0),
            mech,
            thermal: loss_heat(),
            ..BlockDecl::default()
        }
    }
    fn friction(&self, _k: usize, cx: &Cx, w_rel: f64) -> FrictionLaw {
        // The clutch's law; the freewheel adds an unlimited range against w_rel < 0.
        let c = self.law.law(cx.u(0), w_rel);
        FrictionLaw {
            kinetic: c.kinetic,
            lo: c.lo.min(0.0),
            hi: f64::INFINITY,
            engagement: 1.0,
        }
    }
    fn reset(&mut self, _t0: f64) {
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        if self.first.take() {
            let w = FlangePair::AB.w_rel(&cx.view());
            if w < 0.0 {
                cx.log(
                    EventTag::Impact,
                    format!("inconsistent start: w_rel = {w} rad/s < 0 on a freewheel; resolved by a plastic impact (momentum conserved)"),
                );
                cx.impact(0, 0.0);
                return true;
            }
        }
        false
    }
    fn heat_flows(&self, cx: &Cx, q: &mut HeatFlows) {
        q.add(3, joint_loss(cx, 0, 0, FlangePair::AB.w_rel(cx)));
    }
}

fn build_bearing(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let tau = match p.values.get("tau_pos") {
        Some(ParamValue::Number(t)) => {
            if !(*t >= 0.0) {
                return Err(p.invalid("tau_pos", format!("must be >= 0, got {t}")));
            }
            Table1D::new(vec![0.0], vec![*t], false)
        }
        Some(ParamValue::Table(_)) => {
            let (x, y) = p.xy_table("tau_pos")?;
            if x[0] < 0.0 || y.iter().any(|v| !(*v >= 0.0)) {
                return Err(p.invalid("tau_pos", "speeds |w| and torques must be >= 0"));
            }
            Table1D::new(x, y, true)
        }
        _ => {
            return Err(p.invalid(
                "tau_pos",
                "expected a number or a table [[|w|, torque], ...]",
            ))
        }
    };
    let peak = p.num("peak")?;
    if !(peak >= 1.0) {
        return Err(p.invalid("peak", format!("must be >= 1, got {peak}")));
    }
    Ok(Box::new(BearingFriction { tau, peak }))
}

/// Bearing friction to the support (MSL BearingFriction).
struct BearingFriction {
    tau: Table1D,
    peak: f64,
}
impl Block for BearingFriction {
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::rot("flange"),
            PortDecl::support("support"),
            PortDecl::loss_heat("heat"),
        ];
        let mech = MechDecl {
            frictions: vec![FrictionDecl::new(Row(vec![(0, 1.0), (1, -1.0)]), "")],
            ..Default::default()
        };
        BlockDecl {
            ports,
            variables: friction_vars("", 0),
            mech,
            thermal: loss_heat(),
            ..BlockDecl::default()
        }
    }
    fn friction(&self, _k: usize, _cx: &Cx, w_rel: f64) -> FrictionLaw {
        let cap = self.peak * self.tau.eval(0.0);
        FrictionLaw {
            kinetic: self.tau.eval(w_rel.abs()),
            lo: -cap,
            hi: cap,
            engagement: 1.0,
        }
    }
    fn heat_flows(&self, cx: &Cx, q: &mut HeatFlows) {
        q.add(2, joint_loss(cx, 0, 0, cx.v(0) - cx.v(1)));
    }
}

struct TorqueSensor;
impl Block for TorqueSensor {
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::rot("flange_a"),
            PortDecl::rot("flange_b"),
            PortDecl::output("tau").after_network(),
        ];
        let mech = MechDecl {
            constraints: vec![Constraint {
                row: FlangePair::AB.row(),
                kind: RowKind::Velocity,
            }],
            ..Default::default()
        };
        BlockDecl {
            ports,
            mech,
            ..BlockDecl::default()
        }
    }
    fn network_outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = cx.lambda(0);
    }
    fn kernel(&self, after_network: bool) -> Option<Kernel> {
        // Nothing before the solve: the torque is the row's force.
        Some(Kernel::Read(if after_network {
            vec![Operand::Lambda(0)]
        } else {
            vec![]
        }))
    }
}

struct MotionSensor;
impl Block for MotionSensor {
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::rot("flange"),
            PortDecl::output("w"),
            PortDecl::output("phi"),
            PortDecl::output("a").after_network(),
        ];
        BlockDecl {
            ports,
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = cx.v(0);
        y[1] = cx.q(0);
    }
    fn network_outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = cx.v(0);
        y[1] = cx.q(0);
        y[2] = cx.a(0);
    }
    fn kernel(&self, after_network: bool) -> Option<Kernel> {
        let mut read = vec![Operand::Speed(0), Operand::Angle(0)];
        if after_network {
            read.push(Operand::Accel(0));
        }
        Some(Kernel::Read(read))
    }
}

struct Mass {
    m: f64,
    v0: f64,
    s0: f64,
}
impl Block for Mass {
    fn declare(&self) -> BlockDecl {
        let variables = vec![
            VarDecl::new("v", VarSource::Speed(0), "m/s").doc("velocity"),
            VarDecl::new("s", VarSource::Position(0), "m").doc("position"),
            VarDecl::new("a", VarSource::Accel(0), "m/s^2").doc("acceleration"),
        ];
        let mech = MechDecl {
            masses: vec![(0, self.m)],
            initial: vec![(0, self.v0, self.s0)],
            ..Default::default()
        };
        BlockDecl {
            ports: vec![PortDecl::trans("flange")],
            variables,
            mech,
            ..BlockDecl::default()
        }
    }
}

struct RollingWheel {
    r: f64,
}
impl Block for RollingWheel {
    fn declare(&self) -> BlockDecl {
        let mech = MechDecl {
            constraints: vec![Constraint {
                row: Row(vec![(1, 1.0), (0, -self.r)]),
                kind: RowKind::Velocity,
            }],
            ..Default::default()
        };
        BlockDecl {
            ports: vec![PortDecl::rot("hub"), PortDecl::trans("body")],
            variables: vec![VarDecl::new("f", VarSource::Custom(0), "N")
                .doc("force the wheel applies to the body")],
            mech,
            ..BlockDecl::default()
        }
    }
    fn var(&self, cx: &Cx, _i: usize) -> f64 {
        // Force the wheel applies to the body.
        cx.lambda(0)
    }
}

struct RoadLoad {
    a: f64,
    b: f64,
    c: f64,
    v_reg: f64,
}
impl RoadLoad {
    fn force(&self, v: f64) -> f64 {
        -(self.a * (v / self.v_reg).tanh() + self.b * v + self.c * v * v.abs())
    }
}
impl Block for RoadLoad {
    fn declare(&self) -> BlockDecl {
        let variables = vec![
            VarDecl::new("f", VarSource::Custom(0), "N")
                .doc("road-load force on the flange (opposes motion)"),
            VarDecl::new("power", VarSource::Custom(1), "W").doc("power dissipated"),
        ];
        let mech = MechDecl {
            has_forces: true,
            ..Default::default()
        };
        BlockDecl {
            ports: vec![PortDecl::trans("flange")],
            variables,
            mech,
            ..BlockDecl::default()
        }
    }
    fn forces(&self, cx: &Cx, f: &mut Forces) {
        f.add(0, self.force(cx.v(0)));
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        let f = self.force(cx.v(0));
        if i == 0 {
            f
        } else {
            f * cx.v(0)
        }
    }
}

/// Speed ratio sensor (the CR-CR drive ratio).
struct SpeedRatio {
    min: f64,
}
impl Block for SpeedRatio {
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::rot("flange_a"),
            PortDecl::rot("flange_b"),
            PortDecl::output("ratio").undefined_ok(),
        ];
        BlockDecl {
            ports,
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = kernel::ratio(cx.v(0), cx.v(1), self.min);
    }
    fn kernel(&self, after_network: bool) -> Option<Kernel> {
        (!after_network).then_some(Kernel::Ratio {
            num: Operand::Speed(0),
            den: Operand::Speed(1),
            min: self.min,
        })
    }
}
