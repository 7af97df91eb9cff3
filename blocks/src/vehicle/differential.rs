//! `Differential`: final drive with open, locked, viscous, clutch-pack and torque-bias
//! output coupling (Vehicle Physics Pro differential settings).
//!
//! Ports: `input[rot]`, `left[rot]`, `right[rot]`, `heat[heat]` (optional: receives the
//! mesh loss and the coupling's slip loss). Variables: `w_left`, `w_right`, `tau_left`,
//! `tau_right` (torque the differential applies to each output), `mode` (of the coupling:
//! −1/+1 slipping, 0 locked, 2 free/open), `tau_input` (torque the input shaft delivers),
//! `tau_sensed` (the lagged carrier torque / `gear_ratio`), `transfer` (coupling torque, see
//! below), `w_rel` (`w_right − w_left`), `power_mode` (1 power, 0 coast), `tau_loss` and
//! `power_loss` (mesh loss), `mesh_mode`.
//!
//! # Mesh efficiency (`efficiency`)
//!
//! The final drive (input pinion → carrier) is a `LossyGear` of ratio `gear_ratio` with the
//! constant table `[[0, efficiency, efficiency, 0, 0]]` and the housing (ground) as support,
//! exactly as `efficiency` on `IdealGear`: a load-dependent friction joint on `w_input`
//! carries `tauLoss` (MSL `LossyGear` semantics, [`crate::driveline::MeshLoss`]), so the
//! carrier receives `T − tauLoss` of the input torque `T` (`tau_left + tau_right =
//! gear_ratio·(T − tauLoss)`). The input driving (power) delivers `efficiency` of its
//! power to the carrier; the wheels driving (coast, engine braking) deliver `efficiency`
//! of theirs to the input: in both directions the loss is `(1 − efficiency)` of the power
//! entering the mesh from the driving side. At `w_input = 0` the final drive is stuck
//! while the losses can hold the load (it locks when driven from the wrong side, as the
//! gear). The loss is in the energy audit (`<name>.mesh`) and goes to the heat port. The
//! coupling between the outputs (bevel gears, packs) is lossless apart from its own slip
//! work. `efficiency = 1` (the default) adds nothing: results are bit-identical to a
//! differential without the parameter.
//!
//! # Kinematics and torque split
//!
//! A constraint row `gear_ratio·(w_left + w_right)/2 − w_input = 0` (carrier = mean of the
//! outputs). Its force `λ` is the input torque `T_in`; each output receives
//! `gear_ratio·T_in/2` (the 50/50 split). A coupling between the outputs (a friction joint
//! of the network on `w_rel = w_right − w_left`) then transfers a torque `τ` from left to
//! right: `tau_left = g·T_in/2 − τ`, `tau_right = g·T_in/2 + τ`. The split is a parameter
//! of the block ([`Differential::from_params`]): `TorqueSplitter` is this block with the
//! row `w_input = g·(f·w_front + (1 − f)·w_rear)` and the outputs `g·f·T_in ∓ τ`,
//! `g·(1 − f)·T_in ± τ` (`f = front_share`; an axle is `f = 0.5`). Locking is the network's
//! exact stuck/slip event machine (as for clutches): the coupling locks when `w_rel`
//! reaches zero and stays locked while the needed `|τ|` is within its capacity `C`;
//! slipping, it transmits a kinetic torque `K` opposing `w_rel`.
//!
//! # Power and coast
//!
//! The sign of the input torque selects the power or coast settings, as the Vehicle Physics
//! seed says: power "when the input receives forward torque", coast when it receives reverse
//! torque, whatever the direction of rotation (driving forwards is power, engine braking
//! forwards and driving backwards in reverse gear are coast). The torque used is the sensed
//! (lagged) input torque `T_sensed` below, which is a continuous state, defined and smooth at
//! `w_input = 0` (a car held on its brakes with torque on the input is in power). The choice
//! is a discrete mode switched only at located zero crossings of `T_sensed` with a hysteresis
//! of `1e-6 N·m`; the capacities below depend on `|T_sensed|`, so both settings give the same
//! capacity at the switching point and the switch itself never jerks the right-hand side.
//!
//! # Torque sensing (no algebraic loop)
//!
//! `T_in` is a constraint force of the same network solve that the coupling torque enters.
//! Capacities that depend on it use `T_sensed`, a state following `λ` (the kinematic row's
//! force: `T_in`, less the mesh loss torque when `efficiency < 1`) through a first-order
//! lag with time constant `torque_sense_time` (default 5 ms):
//! `τ_s·dT_sensed/dt = λ − T_sensed`. Types whose capacity reads neither `T_sensed` nor
//! the power/coast side (open, locked, `viscous_coefficient`, lock ratio 0 or 1 on both
//! sides) carry no lag state and no power/coast guard; they report `tau_sensed = λ` and
//! `power_mode` from its sign. With `T_c = gear_ratio·|T_sensed|` the carrier
//! torque (sum of the output torques):
//!
//! | type | capacity `C` (static) | kinetic `K` while slipping | engaged when |
//! |---|---|---|---|
//! | open | — | — | never (mode 2) |
//! | locked | ∞ | `1e4 N·m·s/rad·|w_rel|` (only to merge unequal initial speeds) | always |
//! | viscous (lock ratio `s`) | `preload + s·T_c/2` (∞ at `s = 1`) | same as `C` (`1e4·|w_rel|` at `s = 1`) | `C > 0` |
//! | viscous with `viscous_coefficient` | `preload` | `preload + c_v·|w_rel|` | `preload > 0` or `c_v > 0` |
//! | clutch_pack | `clutch_preload + clutch_friction·T_c/tan(angle)` | same as `C` | `C > 0` |
//! | torque_bias | `torque_preload + T_c·(n−1)/(2(n+1))` | same as `C` | `C > 0` |
//!
//! with `s` = power/coast stiffness, `angle` = power/coast ramp angle, `n` = power/coast
//! ratio, `c_v` = `viscous_coefficient`. Properties:
//! - viscous, lock ratio (the default): the seed's stiffness is "the lock ratio among both
//!   outputs, 0 = open, 1 = locked", i.e. the coupling transfers the fraction `s` of what a
//!   locked differential would transfer (plus the preload). Stiffness 0 is open, 1 is
//!   exactly locked. In between, the transfer is measured against the largest torque a
//!   locked differential moves under the same (sensed) input torque, `T_c/2`: the whole half
//!   of an output without resistance. That is exact for a lifted wheel (a locked
//!   differential transfers `T_c/2` there, this one `s·T_c/2`) and an upper bound elsewhere.
//!   The literal "fraction `s` of the lock torque in the same state" needs the mechanical
//!   network's mobility of the output pair (the lock torque is a constraint force that only
//!   exists while locked, and no lag or block-local measurement recovers it, because the
//!   missing quantity is the reflected inertia, not the timing); it is a network-level
//!   feature, see ARCHITECTURE.md. With the torque-sensed measure, stiffness `s` behaves
//!   like a torque bias `(1 + s)/(1 − s) : 1`; the coupling always opposes the slip (it
//!   dissipates, never feeds the relative motion).
//! - viscous, explicit coefficient (an alternative, used when `viscous_coefficient` is
//!   given): a speed-sensing viscous coupling `preload + c_v·|w_rel|` (N·m·s/rad), like a
//!   viscous coupler filled with silicone; the stiffnesses are then not used.
//! - clutch pack: with one wheel lifted the locked coupling would have to carry about
//!   `T_c/2`; it holds only if `clutch_friction/tan(angle) >= 1/2` (beyond the preload): the
//!   defaults (0.4, 45°) let the lifted wheel spin as with an open differential, while
//!   friction above 0.5 with ramp angles below 45° lock even then (the seed's warning).
//!   With no input torque only the preload couples the outputs.
//! - torque bias: slipping, the outputs get `T_c/2 ± C`, so `tau_high/tau_low = n` (plus
//!   preload); a lifted wheel or no input torque gives (nearly) open behaviour; a 4:1
//!   Torsen is `torque_preload = 0, power_ratio = coast_ratio = 4`.
//!
//! Angles are in rad (`"45 deg"` in netlists); stiffness in [0, 1]; ratios >= 1.

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Constraint, Cx, EventCx, FrictionDecl, FrictionLaw,
    FrictionLoad, FrictionVar, HeatFlows, LoadLaw, MechDecl, ParamDefault, ParamError, ParamKind,
    ParamSpec, Params, PortDecl, Registry, Row, RowKind, RunState, RunStateError, ThermalDecl,
    VarDecl, VarSource,
};
use serde_json::json;

use super::{finite, in_range};
use crate::driveline::MeshLoss;
use crate::signal::FirstCall;
use crate::util::{hysteresis_guard, hysteresis_mode};

/// Power/coast hysteresis band on the sensed input torque (N·m), see
/// [`hysteresis_mode`]: coast once `T_sensed < −TORQUE_EPS/2`, power again once
/// `T_sensed > TORQUE_EPS/2`, each located by a guard.
const TORQUE_EPS: f64 = 1e-6;

/// Slip rate (N·m·s/rad) of a locked coupling that starts with unequal output speeds: it
/// merges them within milliseconds; a consistent start never slides.
const MERGE_RATE: f64 = 1e4;

/// Differential types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffType {
    Open,
    Locked,
    Viscous,
    ClutchPack,
    TorqueBias,
}

pub(crate) fn register(r: &mut Registry) {
    r.register(differential_type());
}

/// The `Differential` block type: its parameters and how it is built.
fn differential_type() -> BlockType {
    let mut params = vec![
        ParamSpec::with(
            "type",
            ParamKind::Choice(&["open", "locked", "viscous", "clutch_pack", "torque_bias"]),
            ParamDefault::Value(json!("viscous")),
            "coupling type",
        ),
        ParamSpec::number(
            "gear_ratio",
            "1",
            3.7,
            "input to output reduction ratio (final ratio, > 0)",
        ),
    ];
    params.extend(coupling_specs());
    params.extend([
        ParamSpec::number(
            "torque_preload",
            "N*m",
            0.0,
            "torque bias: minimum torque coupling the outputs (>= 0)",
        ),
        ParamSpec::number(
            "power_ratio",
            "1",
            5.0,
            "torque bias: max torque ratio n:1 in power (forward input torque, >= 1)",
        ),
        ParamSpec::number(
            "coast_ratio",
            "1",
            5.0,
            "torque bias: max torque ratio n:1 in coast (reverse input torque, >= 1; 1 = open)",
        ),
    ]);
    params.extend(sensing_specs());
    BlockType {
        name: "Differential",
        category: "vehicle",
        doc: "Final drive differential: w_input = gear_ratio·(w_left + w_right)/2, 50/50 split, then an output coupling by type (open, locked, viscous, clutch_pack, torque_bias) handled by the stuck/slip event machine. Power settings apply while the input receives forward torque (sensed input torque >= 0, whatever the direction of rotation), coast settings while it receives reverse torque (engine braking, or driving in reverse gear).",
        ports_doc: "input[rot], left[rot], right[rot], heat[heat] (optional)",
        params,
        build: BlockBuild::Primitive(build),
    }
}

/// The coupling parameters shared by `Differential` and `TorqueSplitter` (viscous and
/// clutch pack).
pub(crate) fn coupling_specs() -> Vec<ParamSpec> {
    let deg = |d: f64| d * std::f64::consts::PI / 180.0;
    vec![
        ParamSpec::number("preload", "N*m", 0.0, "viscous: minimum torque coupling the outputs (>= 0)"),
        ParamSpec::number("power_stiffness", "1", 0.2, "viscous: lock ratio in power (forward input torque): fraction of a locked differential's transfer, 0 = open, 1 = locked"),
        ParamSpec::number("coast_stiffness", "1", 0.2, "viscous: lock ratio in coast (reverse input torque), 0 = open, 1 = locked"),
        ParamSpec::optional("viscous_coefficient", ParamKind::Number { unit: "N*m*s/rad" }, "viscous, alternative to the lock ratio: coupling torque preload + c·|w_rel| (>= 0); when given, the stiffnesses are not used"),
        ParamSpec::number("clutch_preload", "N*m", 50.0, "clutch pack: minimum torque transfer (>= 0)"),
        ParamSpec::number("clutch_friction", "1", 0.4, "clutch pack: friction coefficient of the pack (>= 0)"),
        ParamSpec::number("power_angle", "rad", deg(45.0), "clutch pack: ramp angle in power (forward input torque), in (0, 90 deg]"),
        ParamSpec::number("coast_angle", "rad", deg(80.0), "clutch pack: ramp angle in coast (reverse input torque), in (0, 90 deg]; 90 deg = no ramp (1-way LSD)"),
    ]
}

/// The torque-sensing lag and the mesh efficiency, shared by `Differential` and
/// `TorqueSplitter`.
pub(crate) fn sensing_specs() -> Vec<ParamSpec> {
    vec![
        ParamSpec::number("torque_sense_time", "s", 0.005, "time constant of the input-torque lag used by torque-sensing capacities (> 0)"),
        ParamSpec::optional("efficiency", ParamKind::Number { unit: "1" }, "final-drive mesh efficiency in (0, 1] in both directions of power flow (default 1: lossless): a LossyGear with lossTable [[0, efficiency, efficiency, 0, 0]] between input and carrier; it can lock when driven from the wrong side; the loss power goes to the heat port"),
    ]
}

fn angle(p: &Params, name: &str) -> Result<f64, ParamError> {
    let a = finite(p, name)?;
    if !(a > 0.0 && a <= std::f64::consts::FRAC_PI_2 + 1e-12) {
        return Err(p.invalid(
            name,
            format!("must be an angle in (0, π/2] rad, got {a} (write \"45 deg\" for degrees)"),
        ));
    }
    Ok(a)
}

/// `1/tan(angle)`, exactly 0 at 90° (a ramp that does not press the pack: 1-way LSDs).
fn ramp_factor(angle: f64) -> f64 {
    if angle >= std::f64::consts::FRAC_PI_2 - 1e-12 {
        0.0
    } else {
        1.0 / angle.tan()
    }
}

fn non_neg_finite(p: &Params, name: &str) -> Result<f64, ParamError> {
    let v = p.non_negative(name)?;
    if !v.is_finite() {
        return Err(p.invalid(name, format!("must be finite, got {v}")));
    }
    Ok(v)
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let kind = match p.text("type")? {
        "open" => DiffType::Open,
        "locked" => DiffType::Locked,
        "viscous" => DiffType::Viscous,
        "clutch_pack" => DiffType::ClutchPack,
        "torque_bias" => DiffType::TorqueBias,
        other => {
            return Err(p.invalid(
                "type",
                format!("unknown type '{other}' (open, locked, viscous, clutch_pack, torque_bias)"),
            ))
        }
    };
    Ok(Box::new(Differential::from_params(p, kind, 0.5, &AXLE)?))
}

/// Names of a differential's outputs and the variables about them: the left and right
/// wheels of an axle (`Differential`), or the front and rear axles (`TorqueSplitter`).
#[derive(Debug)]
pub(crate) struct Layout {
    /// Output port names (first, second).
    pub ports: [&'static str; 2],
    /// Variable names: speeds, torques (first, second).
    pub w: [&'static str; 2],
    pub tau: [&'static str; 2],
    /// Docs of the speeds, the torques and `w_rel`.
    pub w_doc: [&'static str; 2],
    pub tau_doc: [&'static str; 2],
    pub w_rel_doc: &'static str,
}

/// The final drive of an axle: left and right.
pub(crate) const AXLE: Layout = Layout {
    ports: ["left", "right"],
    w: ["w_left", "w_right"],
    tau: ["tau_left", "tau_right"],
    w_doc: ["left output speed", "right output speed"],
    tau_doc: [
        "torque delivered to the left output",
        "torque delivered to the right output",
    ],
    w_rel_doc: "w_right − w_left",
};

impl Differential {
    /// The differential of resolved parameters `p` with coupling `kind`, the first output's
    /// share `split` of the carrier torque (0.5 for an axle) and the names of `layout`.
    pub(crate) fn from_params(
        p: &Params,
        kind: DiffType,
        split: f64,
        layout: &'static Layout,
    ) -> Result<Differential, ParamError> {
        let g = p.positive("gear_ratio")?;
        if !g.is_finite() {
            return Err(p.invalid("gear_ratio", "must be finite"));
        }
        let ratio = |name: &str| -> Result<f64, ParamError> {
            if !p.has(name) {
                // A coupling without torque-bias settings (`TorqueSplitter`).
                return Ok(1.0);
            }
            let n = finite(p, name)?;
            if n < 1.0 {
                return Err(p.invalid(name, format!("must be >= 1 (n:1 torque ratio), got {n}")));
            }
            Ok(n)
        };
        let cv = match p.opt_num("viscous_coefficient")? {
            Some(_) => Some(non_neg_finite(p, "viscous_coefficient")?),
            None => None,
        };
        let ts = p.positive("torque_sense_time")?;
        if !ts.is_finite() {
            return Err(p.invalid("torque_sense_time", "must be finite"));
        }
        let (pa, ca) = (angle(p, "power_angle")?, angle(p, "coast_angle")?);
        let (pn, cn) = (ratio("power_ratio")?, ratio("coast_ratio")?);
        // Only the torque-sensing capacities read T_sensed (and only they have power and coast
        // settings that differ in effect); the others carry no lag state and no power/coast
        // guard, which would cost accuracy control and events for nothing.
        let stiffness = [
            in_range(p, "power_stiffness", 0.0, 1.0)?,
            in_range(p, "coast_stiffness", 0.0, 1.0)?,
        ];
        let senses = match kind {
            DiffType::Open | DiffType::Locked => false,
            // A lock ratio of 0 (open) or 1 (locked) on both sides reads neither the torque
            // nor the side.
            DiffType::Viscous => {
                let [sp, sc] = stiffness;
                cv.is_none() && !(sp == sc && (sp == 0.0 || sp >= 1.0))
            }
            DiffType::ClutchPack | DiffType::TorqueBias => true,
        };
        Ok(Differential {
            senses,
            split,
            layout,
            kind,
            g,
            preload: non_neg_finite(p, "preload")?,
            stiffness,
            cv,
            clutch_preload: non_neg_finite(p, "clutch_preload")?,
            clutch_friction: non_neg_finite(p, "clutch_friction")?,
            ramp: [ramp_factor(pa), ramp_factor(ca)],
            torque_preload: if p.has("torque_preload") {
                non_neg_finite(p, "torque_preload")?
            } else {
                0.0
            },
            bias: [
                (pn - 1.0) / (2.0 * (pn + 1.0)),
                (cn - 1.0) / (2.0 * (cn + 1.0)),
            ],
            ts,
            loss: MeshLoss::from_efficiency(p, "efficiency")?,
            power: true,
            first: FirstCall::armed(),
        })
    }
}

/// The differential block.
#[derive(Debug, Clone)]
pub struct Differential {
    /// The first output's (left, front) share of the carrier torque: 0.5 for an axle.
    split: f64,
    /// Port and variable names.
    layout: &'static Layout,
    /// Whether the capacity depends on the sensed input torque (the lag state and the
    /// power/coast guard exist only then).
    senses: bool,
    kind: DiffType,
    g: f64,
    preload: f64,
    /// Lock ratios [power, coast].
    stiffness: [f64; 2],
    /// Explicit viscous coefficient (the alternative to the lock ratio), N·m·s/rad.
    cv: Option<f64>,
    clutch_preload: f64,
    clutch_friction: f64,
    /// 1/tan(ramp angle), [power, coast].
    ramp: [f64; 2],
    torque_preload: f64,
    /// (n−1)/(2(n+1)), [power, coast].
    bias: [f64; 2],
    ts: f64,
    /// Final-drive mesh loss (`None`: lossless, no joint).
    loss: Option<MeshLoss>,
    /// Discrete power/coast mode.
    power: bool,
    first: FirstCall,
}

impl Differential {
    #[inline]
    fn side(&self) -> usize {
        if self.power {
            0
        } else {
            1
        }
    }
    /// (static capacity, kinetic torque, engagement) at slip `w_rel` and sensed torque `t`.
    #[inline]
    pub fn law_at(&self, w_rel: f64, t_sensed: f64) -> (f64, f64, f64) {
        let k = self.side();
        let tc = if t_sensed.is_finite() {
            self.g * t_sensed.abs()
        } else {
            0.0
        };
        let dw = w_rel.abs();
        match self.kind {
            DiffType::Open => (0.0, 0.0, 0.0),
            DiffType::Locked => (f64::INFINITY, MERGE_RATE * dw, 1.0),
            DiffType::Viscous => match self.cv {
                Some(cv) => {
                    let kin = self.preload + cv * dw;
                    let eng = if self.preload > 0.0 || cv > 0.0 {
                        1.0
                    } else {
                        0.0
                    };
                    (self.preload, kin, eng)
                }
                None => {
                    let s = self.stiffness[k];
                    if s >= 1.0 {
                        (f64::INFINITY, MERGE_RATE * dw, 1.0)
                    } else {
                        let c = self.preload + s * 0.5 * tc;
                        (c, c, c)
                    }
                }
            },
            DiffType::ClutchPack => {
                let c = self.clutch_preload + self.clutch_friction * tc * self.ramp[k];
                (c, c, c)
            }
            DiffType::TorqueBias => {
                let c = self.torque_preload + tc * self.bias[k];
                (c, c, c)
            }
        }
    }
}

/// Ports.
const INPUT: usize = 0;
const HEAT: usize = 3;
/// Constraint-force indices ([`Cx::lambda`]): the kinematic row, the coupling joint, the
/// mesh-loss joint (present only with losses).
const L_ROW: usize = 0;
const L_COUPLING: usize = 1;
const L_MESH: usize = 2;
/// Friction joints: the coupling, the mesh loss.
const J_MESH: usize = 1;

impl Differential {
    /// The input torque `T` (the torque the input shaft applies to the differential; MSL's
    /// `flange_a.tau` of the final drive): `λ_row − λ_mesh`.
    fn input_torque(&self, cx: &Cx) -> f64 {
        cx.lambda(L_ROW) - self.mesh_joint_torque(cx)
    }
    /// The mesh joint's torque on the input (`−tauLoss`; 0 when lossless).
    fn mesh_joint_torque(&self, cx: &Cx) -> f64 {
        if self.loss.is_some() {
            cx.lambda(L_MESH)
        } else {
            0.0
        }
    }
    /// `T_sensed`: the lag state, or (a type whose capacity senses no torque) the unlagged
    /// carrier torque / gear_ratio it would follow.
    fn sensed(&self, cx: &Cx) -> f64 {
        if self.senses {
            cx.x[0]
        } else {
            cx.lambda(L_ROW)
        }
    }
    /// The mesh loss torque `tauLoss` referred to the input.
    fn tau_loss(&self, cx: &Cx) -> f64 {
        -self.mesh_joint_torque(cx)
    }
}

impl Block for Differential {
    fn save_run_state(&self) -> Result<Option<RunState>, String> {
        let branch = self.loss.as_ref().map(|l| l.branch());
        Ok(Some(RunState::new((self.power, self.first, branch))))
    }
    fn restore_run_state(&mut self, saved: &RunState) -> Result<(), RunStateError> {
        let (power, first, branch) = *saved.get::<(bool, FirstCall, Option<(bool, f64)>)>()?;
        self.power = power;
        self.first = first;
        if let (Some(l), Some(b)) = (self.loss.as_mut(), branch) {
            l.set_branch(b);
        }
        Ok(())
    }
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::rot("input"),
            PortDecl::rot(self.layout.ports[0]),
            PortDecl::rot(self.layout.ports[1]),
            PortDecl::loss_heat("heat"),
        ];
        let l = self.layout;
        let variables = vec![
            VarDecl::new(l.w[0], VarSource::Speed(1), "rad/s").doc(l.w_doc[0]),
            VarDecl::new(l.w[1], VarSource::Speed(2), "rad/s").doc(l.w_doc[1]),
            VarDecl::new(l.tau[0], VarSource::Custom(0), "N*m").doc(l.tau_doc[0]),
            VarDecl::new(l.tau[1], VarSource::Custom(1), "N*m").doc(l.tau_doc[1]),
            VarDecl::new("mode", VarSource::Friction(0, FrictionVar::Mode), "1")
                .doc("lock coupling mode: −1/1 sliding, 0 locked, 2 free"),
            VarDecl::new("tau_input", VarSource::Custom(2), "N*m")
                .doc("torque the input shaft applies to the differential (MSL flange_a.tau of the final drive)"),
            VarDecl::new("tau_sensed", VarSource::Custom(3), "N*m")
                .doc("carrier torque / gear_ratio (the input torque less the mesh loss) through the sensing lag (types without a torque-sensing capacity: open, locked, viscous with viscous_coefficient or with lock ratio 0 or 1 on both sides, carry no lag and report it unlagged)"),
            VarDecl::new("transfer", VarSource::Friction(0, FrictionVar::Tau), "N*m")
                .doc("torque transferred between the outputs by the locking coupling"),
            VarDecl::new("w_rel", VarSource::Friction(0, FrictionVar::WRel), "rad/s")
                .doc(l.w_rel_doc),
            VarDecl::new("power_mode", VarSource::Custom(4), "1")
                .doc("1 power (forward input torque), 0 coast (types without a torque-sensing capacity: from the unlagged torque's sign)"),
            VarDecl::new("tau_loss", VarSource::Custom(5), "N*m")
                .doc("final-drive mesh loss torque referred to the input (MSL tauLoss; 0 when efficiency = 1)"),
            VarDecl::new("power_loss", VarSource::Custom(6), "W")
                .doc("final-drive mesh loss power, tau_loss·w_input (>= 0)"),
            if self.loss.is_some() {
                VarDecl::new("mesh_mode", VarSource::Friction(J_MESH, FrictionVar::Mode), "1")
            } else {
                VarDecl::new("mesh_mode", VarSource::Custom(7), "1")
            }
            .doc("final drive: 1 rolling forward, 0 stuck, −1 rolling backward (MSL LossyGear.mode); 2 when lossless"),
        ];
        // w_input = g·(split·w_first + (1 − split)·w_second): its force λ = T_in gives the
        // outputs g·split·λ and g·(1 − split)·λ (0.5·g each on an axle).
        let (h1, h2) = (self.g * self.split, self.g * (1.0 - self.split));
        let mut m = MechDecl {
            constraints: vec![Constraint {
                row: Row(vec![(0, -1.0), (1, h1), (2, h2)]),
                kind: RowKind::Velocity,
            }],
            frictions: vec![FrictionDecl::new(Row(vec![(1, -1.0), (2, 1.0)]), "")],
            ..Default::default()
        };
        if self.loss.is_some() {
            // The mesh-loss joint on w_input (relative to the grounded housing); its load is
            // the input torque T = λ_row − λ_mesh.
            m.frictions
                .push(FrictionDecl::new(Row(vec![(INPUT, 1.0)]), "mesh"));
            m.friction_loads.push(FrictionLoad {
                joint: J_MESH,
                load: vec![(L_ROW, 1.0), (L_MESH, -1.0)],
            });
        }
        let thermal = ThermalDecl {
            has_heat_flows: true,
            ..Default::default()
        };
        BlockDecl {
            ports,
            states: usize::from(self.senses),
            variables,
            mech: m,
            thermal,
            ..BlockDecl::default()
        }
        .guards_named(
            usize::from(self.senses) + usize::from(self.loss.is_some()),
            |i| {
                if self.senses && i == 0 {
                    "power_coast".into()
                } else {
                    "mesh_branch".into()
                }
            },
        )
    }
    fn initial_states(&self, x: &mut [f64]) {
        x.fill(0.0);
    }
    fn friction(&self, k: usize, cx: &Cx, w_rel: f64) -> FrictionLaw {
        if k == J_MESH {
            let Some(loss) = &self.loss else {
                return FrictionLaw::FREE;
            };
            let (lo, hi) = loss.stuck_range(self.input_torque(cx));
            return FrictionLaw {
                kinetic: 0.0,
                lo,
                hi,
                engagement: 1.0,
            };
        }
        // Only the sensing types read the torque (the others ignore it).
        let t_sensed = if self.senses { cx.x[0] } else { 0.0 };
        let (cap, kinetic, engagement) = self.law_at(w_rel, t_sensed);
        FrictionLaw {
            kinetic,
            lo: -cap,
            hi: cap,
            engagement,
        }
    }
    fn load_friction(&self, k: usize, cx: &Cx, w_rel: f64) -> LoadLaw {
        match (&self.loss, k) {
            (Some(loss), J_MESH) => loss.sliding(cx.mode(J_MESH).sliding_sign(), w_rel),
            _ => LoadLaw {
                tau0: 0.0,
                slope: 0.0,
            },
        }
    }
    fn heat_flows(&self, cx: &Cx, q: &mut HeatFlows) {
        // Mesh loss plus the coupling's slip work (both >= 0).
        let w_rel = cx.v(2) - cx.v(1);
        let slip = -cx.lambda(L_COUPLING) * w_rel;
        q.add(HEAT, self.tau_loss(cx) * cx.v(INPUT) + slip);
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        if !self.senses {
            return;
        }
        let l = cx.lambda(0);
        dx[0] = if l.is_finite() {
            (l - cx.x[0]) / self.ts
        } else {
            0.0
        };
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let mesh = usize::from(self.senses);
        if self.senses {
            g[0] = hysteresis_guard(self.power, cx.x[0], TORQUE_EPS);
        }
        if let Some(loss) = &self.loss {
            g[mesh] = loss.guard(
                cx.mode(J_MESH).sliding_sign(),
                cx.v(INPUT),
                self.input_torque(cx),
            );
        }
    }
    fn reset(&mut self, _t0: f64) {
        // As built: the initial event decides power or coast from the first torque.
        self.power = true;
        self.first.arm();
        if let Some(l) = self.loss.as_mut() {
            l.reset();
        }
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = self.first.take();
        let mut changed = false;
        if self.senses {
            // Power while the input receives forward torque (sensed torque >= 0).
            let new = hysteresis_mode(self.power, fresh, cx.x[0], TORQUE_EPS);
            changed = new != self.power;
            self.power = new;
        }
        if self.loss.is_some() {
            let (mode, w, t) = {
                let v = cx.view();
                (v.mode(J_MESH), v.v(INPUT), self.input_torque(&v))
            };
            if let Some(l) = self.loss.as_mut() {
                changed |= l.update(mode, w, t);
            }
        }
        changed
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        let lambda = cx.lambda(L_ROW);
        let tau = cx.lambda(L_COUPLING);
        match i {
            0 => self.g * self.split * lambda - tau,
            1 => self.g * (1.0 - self.split) * lambda + tau,
            2 => self.input_torque(cx),
            3 => self.sensed(cx),
            4 => {
                let power = if self.senses {
                    self.power
                } else {
                    cx.lambda(L_ROW) >= 0.0
                };
                f64::from(u8::from(power))
            }
            5 => self.tau_loss(cx),
            6 => self.tau_loss(cx) * cx.v(INPUT),
            _ => 2.0,
        }
    }
}
