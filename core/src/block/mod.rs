//! The `Block` trait: what every library block implements.
//!
//! A block has a *declaration*: one plain value, [`BlockDecl`], returned by
//! [`Block::declare`] and read once by `compile()` — typed ports (signal `in`/`out`,
//! mechanical `rot`/`trans`/`frame`, `heat`, `road`), continuous states, named guard
//! functions (zero crossings), loggable variables with units, which inputs feed the outputs
//! directly, its part of the mechanical network ([`MechDecl`]: inertias, kinematic
//! constraints, friction joints) and of the thermal network ([`ThermalDecl`]), for linear
//! time-invariant blocks its state-space matrices ([`Linear`]), and its role in the energy
//! audit. The compile passes, the model, the catalogue and the report read that value and
//! nothing else about a block's structure. And a *behaviour*: [`Block::reset`] at the start
//! of every run, evaluation methods that take `&self` (outputs, forces, friction laws,
//! derivatives, guards, variables), and event methods that take `&mut self` (`time_event`,
//! `update_modes`). So "modes change only at events" is enforced by the compiler: inside a
//! step every equation is fixed.
//!
//! At run time the model calls a block with a [`Cx`] view: its own states, its inputs,
//! the motion of its flanges and the forces of its constraint rows, read in place from the
//! model's buffers (nothing is copied per evaluation). Blocks do no I/O.
//!
//! Sign conventions (SI units everywhere): a force element adds the generalized force it
//! applies to each of its flanges through [`Forces::add`] (positive accelerates the flange
//! in its positive direction). A constraint row `Σ c_i·v_i = 0` with multiplier `λ` applies
//! `c_i·λ` to flange `i`. A friction joint's relative speed is `w_rel = Σ c_i·v_i` over its
//! row and the torque it transmits is `tau`, applied as `c_i·tau`, so a two-flange row
//! `[(a, -1), (b, +1)]` gives `w_rel = w_b − w_a` and `tau` accelerates `b` by `+tau` and
//! `a` by `−tau` (the torque transmitted from flange_a to flange_b; Modelica's `tau` of a
//! two-flange element is the torque *at* flange_b acting on the element, the opposite
//! sign for elements whose `tau` accelerates flange_b).

mod decl;
pub mod kernel;
mod run_state;

pub use decl::{BlockDecl, EnergyRole, Feedthrough, Outputs};
pub use kernel::{Kernel, Operand};
pub use run_state::{RunState, RunStateError};

use crate::ids::SlotIx;
use crate::result::EventTag;

/// Port kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PortKind {
    /// Signal input.
    In,
    /// Signal output.
    Out,
    /// Rotational flange (angle rad, speed rad/s, torque N·m).
    Rot,
    /// Translational flange (position m, velocity m/s, force N).
    Trans,
    /// Rigid-body frame: all frame ports on one line are one 6-DOF body
    /// (see [`crate::frame`]).
    Frame,
    /// Heat port (temperature K, heat flow W into the port's thermal node); see
    /// [`crate::thermal`].
    Heat,
    /// Road surface: immutable data shared at build time, not a signal. A line of road
    /// ports has exactly one provider (a non-optional road port: the `Road` block's
    /// `surface`, whose [`Block::shared`] gives the data) and any number of consumers
    /// (optional road ports: a `WheelCollider`'s `road`, handed the data by
    /// [`Block::attach`] after the blocks are built). An unconnected consumer keeps its
    /// built-in default (a wheel: the flat ground plane).
    Road,
}

impl PortKind {
    /// The netlist spelling (`in`, `out`, `rot`, `trans`).
    pub fn as_str(&self) -> &'static str {
        match self {
            PortKind::In => "in",
            PortKind::Out => "out",
            PortKind::Rot => "rot",
            PortKind::Trans => "trans",
            PortKind::Frame => "frame",
            PortKind::Heat => "heat",
            PortKind::Road => "road",
        }
    }
    /// Whether ports of this kind are mechanical (joined by lines into network nodes or,
    /// for `frame`, rigid bodies).
    pub fn is_mech(&self) -> bool {
        matches!(self, PortKind::Rot | PortKind::Trans | PortKind::Frame)
    }
    /// Whether ports of this kind are heat ports (joined into thermal nodes).
    pub fn is_heat(&self) -> bool {
        matches!(self, PortKind::Heat)
    }
    /// SI units of a mechanical port's (position, speed, acceleration, force).
    pub fn mech_units(&self) -> Option<[&'static str; 4]> {
        match self {
            PortKind::Rot => Some(["rad", "rad/s", "rad/s^2", "N*m"]),
            PortKind::Trans => Some(["m", "m/s", "m/s^2", "N"]),
            _ => None,
        }
    }
}

/// A declared port.
#[derive(Debug, Clone, PartialEq)]
pub struct PortDecl {
    /// Port name, unique within the block.
    pub name: String,
    /// Port kind.
    pub kind: PortKind,
    /// An unconnected signal input reads this value instead of being an error
    /// (for example `Tire.mu_scale` = 1). `None`: it must be driven.
    pub default: Option<f64>,
    /// SI unit of a signal port (`"rad/s"`, `"N*m"`, `"1"`), `None` when it carries
    /// whatever its input carries (a `Gain` output). Mechanical ports have their kind's
    /// units.
    pub unit: Option<&'static str>,
    /// An output that is NaN on purpose where its value is undefined (the ratio of two
    /// speeds while the divisor stands still); other non-finite outputs fail the run.
    pub may_be_undefined: bool,
    /// A mechanical port that may stay unconnected without a warning (the block gives
    /// its node an inertia of its own: a wheel's hub).
    pub free_ok: bool,
    /// An optional mechanical or heat port. Unconnected, an optional flange (a support
    /// flange, Modelica's `useSupport = false`) is the ground: it has no node, reads speed,
    /// angle and acceleration 0, drops the forces applied to it (the reactions go to the
    /// ground) and constraint terms on it vanish. An unconnected optional heat port is
    /// absent (its temperature reads `None`, heat added to it is not modelled:
    /// `useHeatPort = false`). No "unconnected" warning either way. Connected, it is an
    /// ordinary port.
    pub optional: bool,
    /// An output that must drive at least one input, and why (an `Esc`'s wheel brake
    /// torques: a stability control that brakes fewer than four wheels is a wiring
    /// error). `None`: an output may drive nothing.
    pub must_drive: Option<&'static str>,
    /// An output that needs the network solve (accelerations or constraint forces):
    /// computed by [`Block::network_outputs`] after the solve, not by [`Block::outputs`].
    pub needs_network: bool,
}

impl PortDecl {
    /// A port of `kind` (no default, no declared unit).
    pub fn new(name: impl Into<String>, kind: PortKind) -> Self {
        Self::of(name, kind)
    }
    fn of(name: impl Into<String>, kind: PortKind) -> Self {
        PortDecl {
            name: name.into(),
            kind,
            default: None,
            unit: None,
            may_be_undefined: false,
            free_ok: false,
            optional: false,
            must_drive: None,
            needs_network: false,
        }
    }
    /// A signal input that must be driven.
    pub fn input(name: impl Into<String>) -> Self {
        Self::of(name, PortKind::In)
    }
    /// A signal input that reads `default` when unconnected.
    pub fn optional_input(name: impl Into<String>, default: f64) -> Self {
        PortDecl {
            default: Some(default),
            ..Self::of(name, PortKind::In)
        }
    }
    /// A signal output.
    pub fn output(name: impl Into<String>) -> Self {
        Self::of(name, PortKind::Out)
    }
    /// A rotational flange.
    pub fn rot(name: impl Into<String>) -> Self {
        Self::of(name, PortKind::Rot)
    }
    /// A translational flange.
    pub fn trans(name: impl Into<String>) -> Self {
        Self::of(name, PortKind::Trans)
    }
    /// A rigid-body frame port.
    pub fn frame(name: impl Into<String>) -> Self {
        Self::of(name, PortKind::Frame)
    }
    /// The same mechanical port, allowed to stay unconnected without a warning.
    pub fn free_ok(mut self) -> Self {
        self.free_ok = true;
        self
    }
    /// An optional rotational support flange: fixed to the ground when unconnected (see
    /// [`PortDecl::optional`]).
    pub fn support(name: impl Into<String>) -> Self {
        PortDecl {
            optional: true,
            ..Self::of(name, PortKind::Rot)
        }
    }
    /// A heat port (temperature K, heat flow W) of a thermal element (capacitor,
    /// conductor, fixed temperature): it always has a thermal node, its own when
    /// unconnected.
    pub fn heat(name: impl Into<String>) -> Self {
        Self::of(name, PortKind::Heat)
    }
    /// An optional heat port receiving a block's loss power: absent when unconnected (see
    /// [`PortDecl::optional`]).
    pub fn loss_heat(name: impl Into<String>) -> Self {
        PortDecl {
            optional: true,
            ..Self::of(name, PortKind::Heat)
        }
    }
    /// The same output, allowed to be NaN where its value is undefined.
    pub fn undefined_ok(mut self) -> Self {
        self.may_be_undefined = true;
        self
    }
    /// The same port with a declared SI unit.
    pub fn with_unit(mut self, unit: &'static str) -> Self {
        self.unit = Some(unit);
        self
    }
    /// The same output, computed after the network solve by [`Block::network_outputs`]
    /// (it reads accelerations or constraint forces).
    pub fn after_network(mut self) -> Self {
        self.needs_network = true;
        self
    }
    /// The same output, required to drive at least one input (`why`: what the block needs
    /// it for, in the error when it drives nothing).
    pub fn must_drive(mut self, why: &'static str) -> Self {
        self.must_drive = Some(why);
        self
    }
}

/// A linear velocity constraint row over this block's mechanical ports: `Σ coef·v_port = 0`.
/// Port indices are indices into the block's full port list.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Row(pub Vec<(usize, f64)>);

/// How a constraint row acts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RowKind {
    /// An ideal kinematic constraint `Σ c·v = 0` (gears, grounds, rolling wheels).
    Velocity,
    /// An acceleration-level tracking constraint `Σ c·a = (target − Σ c·v)/tc` where the
    /// target is the block's signal input `input` (prescribed speed with a critical time
    /// constant `tc`, like Modelica's `Speed(exact=false)`).
    Tracking {
        /// Index of the target among the block's signal inputs.
        input: usize,
        /// Tracking time constant, s.
        tc: f64,
    },
}

/// A constraint row with its kind.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    /// The row over the block's ports.
    pub row: Row,
    /// Velocity or tracking constraint.
    pub kind: RowKind,
}

/// A friction joint handled by the network's stuck/slip state machine.
#[derive(Debug, Clone, PartialEq)]
pub struct FrictionDecl {
    /// Relative-speed row (`w_rel = Σ c·v`).
    pub row: Row,
    /// Suffix used in event logs and guard names (`""` for single-joint blocks).
    pub label: String,
    /// The signal input (index among the block's `in` ports) whose value *is*
    /// [`Block::engagement`] of this joint, unchanged, when there is one (a clutch's
    /// normalized normal force): the guard pass then reads that signal in place instead of
    /// calling `engagement`. `None`: the pass calls `engagement`.
    pub engagement_input: Option<usize>,
}

impl FrictionDecl {
    /// A joint over `row`, labelled `label` in event logs and guard names.
    pub fn new(row: Row, label: impl Into<String>) -> Self {
        FrictionDecl {
            row,
            label: label.into(),
            engagement_input: None,
        }
    }
    /// The same joint, its engagement read in place from signal input `input` (see
    /// [`FrictionDecl::engagement_input`]).
    pub fn engaged_by(mut self, input: usize) -> Self {
        self.engagement_input = Some(input);
        self
    }
}

/// Mass, inertia and (optionally) the initial pose and velocity a block gives the rigid
/// body of one of its `frame` ports. Masses and inertias of all blocks on a frame line
/// add up; the initial states come from the first block (in flat order) that gives them.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyDecl {
    /// The frame port.
    pub port: usize,
    /// Mass, kg.
    pub mass: f64,
    /// Principal moments of inertia about the centre of mass, body axes, kg·m².
    pub inertia: [f64; 3],
    /// Initial 13 states (see [`crate::frame`]), or `None`.
    pub initial: Option<[f64; crate::frame::FRAME_STATES]>,
    /// Gravity on the body, world axes, m/s² (`None`: standard gravity); the first block
    /// that gives it decides, like the initial states.
    pub gravity: Option<[f64; 3]>,
}

/// A block's contribution to the mechanical network.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MechDecl {
    /// Mass and inertia added to the rigid body of a frame port.
    pub bodies: Vec<BodyDecl>,
    /// Inertia or mass added to the node of a port.
    pub masses: Vec<(usize, f64)>,
    /// Initial speed of the node of a port (rad/s or m/s) and initial position.
    pub initial: Vec<(usize, f64, f64)>,
    /// Constraints that are always active.
    pub constraints: Vec<Constraint>,
    /// Friction joints (locked joints become constraints).
    pub frictions: Vec<FrictionDecl>,
    /// Friction joints whose sliding torque depends on the load the block transmits (a
    /// gear with mesh losses): see [`FrictionLoad`].
    pub friction_loads: Vec<FrictionLoad>,
    /// Whether `Block::forces` contributes forces.
    pub has_forces: bool,
    /// Whether `Block::forces` books part of its power as dissipated inside the block
    /// ([`Forces::dissipate`]: an engine's friction). The energy audit then lists that
    /// part as a loss of its own, `block.NAME` with NAME from
    /// [`BlockDecl::loss_name`], and a source's supplied work excludes it.
    pub internal_loss: bool,
}

impl MechDecl {
    /// Friction joints and nothing else (a clutch, a brake).
    pub fn joints(frictions: Vec<FrictionDecl>) -> Self {
        MechDecl {
            frictions,
            ..MechDecl::default()
        }
    }
}

/// A friction joint whose sliding torque is affine in a load `T` that is itself a
/// constraint force of the same network solve (the torque a lossy gear transmits):
/// `T = Σ c_i·λ_i` over the block's constraint forces (indices as in [`Cx::lambda`]:
/// the block's always-active rows first, then its joints, the joint's own torque
/// included). While the joint slides, the network solves the coupled equations exactly:
/// the joint applies `tau = tau0 + slope·T` ([`Block::load_friction`]) and every
/// acceleration and constraint force of the evaluation is consistent with it (no lag, no
/// iteration). Locked, the joint is an ordinary constraint; its static range may then be
/// computed from `cx.lambda` (valid when `friction` is asked for a locked joint).
#[derive(Debug, Clone, PartialEq)]
pub struct FrictionLoad {
    /// Index of the joint among the block's friction joints.
    pub joint: usize,
    /// The load's coefficients over the block's constraint forces.
    pub load: Vec<(usize, f64)>,
}

/// The sliding torque of a load-dependent friction joint: `tau = tau0 + slope·T` (applied
/// along the joint's row like any joint torque; see [`FrictionLoad`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadLaw {
    /// Torque at zero load, N·m.
    pub tau0: f64,
    /// `d tau / d T`.
    pub slope: f64,
}

/// A block's contribution to the thermal network (see [`crate::thermal`]). Port indices
/// are indices into the block's full port list (heat ports).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ThermalDecl {
    /// Heat capacity (J/K) added to the node of a heat port, with the node's initial
    /// temperature (K).
    pub capacities: Vec<(usize, f64, f64)>,
    /// A fixed temperature (K) of the node of a heat port (an ambient, a coolant).
    pub fixed: Vec<(usize, f64)>,
    /// Conductive links between the nodes of two heat ports, heat flow
    /// `G·(T_first − T_second)` from the first to the second; `G` comes from
    /// [`Block::conductance`] at every evaluation (a parameter or a signal input).
    pub conductors: Vec<(usize, usize)>,
    /// Whether [`Block::heat_flows`] adds heat (loss power) to the block's heat ports.
    pub has_heat_flows: bool,
    /// Heat ports whose temperature the block reads before the network solve (in
    /// `forces`, `friction`, `outputs`): their node must have a heat capacity or a fixed
    /// temperature (a node without capacity gets its temperature from this evaluation's
    /// heat flows, after the mechanical solve).
    pub reads_temperature: Vec<usize>,
}

/// Heat flows a block adds to the thermal nodes of its heat ports (W, positive into the
/// node). Heat added to an unconnected optional heat port is not modelled.
#[derive(Debug)]
pub struct HeatFlows<'a> {
    q: &'a mut [f64],
    port_dof: &'a [u32],
    total: f64,
}

impl<'a> HeatFlows<'a> {
    /// An accumulator over the per-node heat flows `q`.
    pub fn new(q: &'a mut [f64], port_dof: &'a [u32]) -> Self {
        HeatFlows {
            q,
            port_dof,
            total: 0.0,
        }
    }
    /// Add the heat flow `watts` into the node of heat port `p`.
    #[inline]
    pub fn add(&mut self, p: usize, watts: f64) {
        let d = self.port_dof[p];
        if d != u32::MAX {
            self.q[d as usize] += watts;
            self.total += watts;
        }
    }
    /// The heat added to connected ports so far, W.
    pub fn total(&self) -> f64 {
        self.total
    }
}

/// The friction data a block gives for one joint at the current instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrictionLaw {
    /// Kinetic torque magnitude at this slip speed (>= 0), opposing the slip.
    pub kinetic: f64,
    /// Lower end of the static range the locked constraint torque must stay in.
    pub lo: f64,
    /// Upper end of the static range: `lo <= tau <= hi`.
    pub hi: f64,
    /// Engagement measure: the joint is free when this is <= 0 (normalized normal force).
    pub engagement: f64,
}

impl FrictionLaw {
    /// A joint without normal force (free).
    pub const FREE: FrictionLaw = FrictionLaw {
        kinetic: 0.0,
        lo: 0.0,
        hi: 0.0,
        engagement: 0.0,
    };
}

/// Friction modes, with the netlist's numeric coding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrictionMode {
    /// Sliding with `w_rel < 0` (−1).
    SlidingBackward,
    /// Locked (0).
    Locked,
    /// Sliding with `w_rel > 0` (+1).
    SlidingForward,
    /// No normal force (2).
    Free,
}

impl FrictionMode {
    /// The numeric code logged as `mode`.
    pub fn code(&self) -> f64 {
        match self {
            FrictionMode::SlidingBackward => -1.0,
            FrictionMode::Locked => 0.0,
            FrictionMode::SlidingForward => 1.0,
            FrictionMode::Free => 2.0,
        }
    }
    /// A readable name for event details.
    pub fn name(&self) -> &'static str {
        match self {
            FrictionMode::SlidingBackward => "sliding backward",
            FrictionMode::Locked => "locked",
            FrictionMode::SlidingForward => "sliding forward",
            FrictionMode::Free => "free",
        }
    }
    /// `+1` sliding forward, `−1` sliding backward, `0` otherwise.
    pub fn sliding_sign(&self) -> f64 {
        match self {
            FrictionMode::SlidingForward => 1.0,
            FrictionMode::SlidingBackward => -1.0,
            _ => 0.0,
        }
    }
}

/// Quantities of a friction joint that can be logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrictionVar {
    /// Relative speed `Σ c·v` of the joint's row.
    WRel,
    /// Relative angle `Σ c·q`.
    PhiRel,
    /// Transmitted torque (the constraint force when locked).
    Tau,
    /// Mode code (−1, 0, 1, 2).
    Mode,
    /// Dissipated power `−tau·w_rel` (>= 0).
    PowerLoss,
}

/// Where a loggable variable comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarSource {
    /// Speed of the node of a port.
    Speed(usize),
    /// Angle / position of the node of a port.
    Position(usize),
    /// Acceleration of the node of a port.
    Accel(usize),
    /// A friction joint quantity (joint index, quantity).
    Friction(usize, FrictionVar),
    /// The block's own `Block::var(index)`.
    Custom(usize),
}

/// What a variable's value depends on at an instant, which decides where a variable wired
/// as a signal source (`["car.r", "esc.r"]`) is evaluated and whether feeding it back
/// closes an algebraic loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarReads {
    /// States and modes only (positions, speeds, rigid-body poses and velocities, modes):
    /// known before any block output of the instant, so it never closes a loop.
    State,
    /// Also the block's inputs at the same instant.
    Inputs,
    /// Anything, the network's accelerations and constraint forces included: evaluated
    /// after the network solve, so feeding it to a block that acts on the network (or
    /// to the inputs of its own block) closes an algebraic loop.
    Everything,
}

/// A loggable variable.
#[derive(Debug, Clone, PartialEq)]
pub struct VarDecl {
    /// Name, logged as `block.name`.
    pub name: String,
    /// Where its value comes from.
    pub source: VarSource,
    /// SI unit (`"rad/s"`, `"N*m"`, `"1"` for dimensionless, mode codes and flags).
    pub unit: &'static str,
    /// One line: meaning and sign convention.
    pub doc: &'static str,
    /// What the value depends on at an instant (node speeds and positions, a joint's
    /// relative angle and mode: [`VarReads::State`]; accelerations, torques and custom
    /// variables unless declared otherwise: [`VarReads::Everything`]).
    pub reads: VarReads,
}

impl VarDecl {
    /// A variable with its SI unit.
    pub fn new(name: impl Into<String>, source: VarSource, unit: &'static str) -> Self {
        let reads = match source {
            VarSource::Speed(_)
            | VarSource::Position(_)
            | VarSource::Friction(_, FrictionVar::PhiRel | FrictionVar::Mode) => VarReads::State,
            VarSource::Accel(_) | VarSource::Friction(..) | VarSource::Custom(_) => {
                VarReads::Everything
            }
        };
        VarDecl {
            name: name.into(),
            source,
            unit,
            doc: "",
            reads,
        }
    }
    /// The same variable with a one-line doc (meaning, sign convention).
    pub fn doc(mut self, doc: &'static str) -> Self {
        self.doc = doc;
        self
    }
    /// The same variable declared a function of the states and modes only (a custom
    /// variable such as a body's position or yaw rate): usable as a signal anywhere,
    /// feedback loops included.
    pub fn from_state(mut self) -> Self {
        self.reads = VarReads::State;
        self
    }
    /// The same variable declared a function of the states, modes and the block's own
    /// inputs (not of accelerations or constraint forces).
    pub fn from_inputs(mut self) -> Self {
        self.reads = VarReads::Inputs;
        self
    }
    /// The standard variables of a friction joint `k`: `w_rel`, `phi_rel`, `tau`, `mode`,
    /// `power_loss` (with `prefix` before each name, `""` for single-joint blocks).
    pub fn friction_set(k: usize, prefix: &str, rot: bool) -> Vec<VarDecl> {
        let (w, q, f) = if rot {
            ("rad/s", "rad", "N*m")
        } else {
            ("m/s", "m", "N")
        };
        vec![
            VarDecl::new(
                format!("{prefix}w_rel"),
                VarSource::Friction(k, FrictionVar::WRel),
                w,
            )
            .doc("relative speed across the joint (w_b − w_a for two flanges)"),
            VarDecl::new(
                format!("{prefix}phi_rel"),
                VarSource::Friction(k, FrictionVar::PhiRel),
                q,
            )
            .doc("relative angle across the joint"),
            VarDecl::new(
                format!("{prefix}tau"),
                VarSource::Friction(k, FrictionVar::Tau),
                f,
            )
            .doc("torque transmitted from flange_a to flange_b (accelerates flange_b)"),
            VarDecl::new(
                format!("{prefix}mode"),
                VarSource::Friction(k, FrictionVar::Mode),
                "1",
            )
            .doc("−1 sliding backward, 0 locked, 1 sliding forward, 2 free"),
            VarDecl::new(
                format!("{prefix}power_loss"),
                VarSource::Friction(k, FrictionVar::PowerLoss),
                "W",
            )
            .doc("power dissipated by friction (>= 0)"),
        ]
    }
}

/// The state-space form of a linear time-invariant block:
/// `x' = A·x + B·u`, `y = C·x + D·u` (matrices row-major). The model evaluates all such
/// blocks together in flat kernels instead of calling them one by one; the block's own
/// `outputs`/`derivatives` must compute the same (a registry test checks it).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Linear {
    /// States (n).
    pub n: usize,
    /// Inputs (m), the block's `in` ports in order.
    pub m: usize,
    /// Outputs (p), the block's `out` ports in order.
    pub p: usize,
    /// n×n.
    pub a: Vec<f64>,
    /// n×m.
    pub b: Vec<f64>,
    /// p×n.
    pub c: Vec<f64>,
    /// p×m.
    pub d: Vec<f64>,
}

/// What the model passes to a [`Cx`]: the shared buffers of one evaluation.
#[derive(Debug, Clone, Copy)]
pub struct Buffers<'a> {
    /// All signal slots.
    pub sig: &'a [f64],
    /// The signal slot of every block's inputs, block after block ([`BlockTables::inputs`]
    /// is one block's range).
    pub in_slots: &'a [SlotIx],
    /// The degree of freedom (node) of every block's ports, block after block
    /// ([`BlockTables::ports`] is one block's range; `u32::MAX` for signal ports and
    /// unconnected optional heat ports).
    pub port_dof: &'a [u32],
    /// Node positions (per degree of freedom).
    pub pos: &'a [f64],
    /// Node speeds.
    pub vel: &'a [f64],
    /// Node accelerations (valid after the network solve).
    pub acc: &'a [f64],
    /// Constraint force of every always-active row.
    pub row_lambda: &'a [f64],
    /// Transmitted torque of every friction joint (0 when free).
    pub joint_tau: &'a [f64],
    /// Mode of every friction joint.
    pub modes: &'a [FrictionMode],
    /// States of every rigid body (13 each, see [`crate::frame`]).
    pub frames: &'a [f64],
    /// The same, as poses (quaternion normalised, rotation matrix built): one per body,
    /// made once per evaluation from `frames`.
    pub frame_states: &'a [crate::frame::FrameState],
    /// Accelerations of every rigid body (6 each: world `v̇`, body `ω̇`; valid after the
    /// network stage).
    pub frame_acc: &'a [f64],
    /// Temperature of every thermal node, K.
    pub temp: &'a [f64],
}

/// Where one block's pieces are in the shared buffers: offsets, fixed when the model is
/// built. A view holds a reference to its block's record, so making a view slices
/// nothing; the accessors add the offset to the index they are asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockTables {
    /// The block's inputs: `start..end` of [`Buffers::in_slots`].
    pub inputs: (u32, u32),
    /// The block's ports: `start..end` of [`Buffers::port_dof`].
    pub ports: (u32, u32),
    /// First of the block's always-active rows in `row_lambda`.
    pub rows_start: u32,
    /// Number of the block's always-active rows.
    pub n_rows: u32,
    /// First of the block's joints in `joint_tau` / `modes`.
    pub joints_start: u32,
}

impl BlockTables {
    /// Tables of a block whose inputs and ports are the first `n_inputs` and `n_ports` of
    /// the buffers, with `n_rows` rows and its joints from the first (a block alone, as a
    /// probe holds it).
    pub fn alone(n_inputs: usize, n_ports: usize, n_rows: usize) -> Self {
        BlockTables {
            inputs: (0, n_inputs as u32),
            ports: (0, n_ports as u32),
            rows_start: 0,
            n_rows: n_rows as u32,
            joints_start: 0,
        }
    }
    /// The signal slots of the block's inputs within `in_slots`.
    #[inline]
    pub fn inputs_in<'s>(&self, in_slots: &'s [SlotIx]) -> &'s [SlotIx] {
        &in_slots[self.inputs.0 as usize..self.inputs.1 as usize]
    }
    /// The nodes of the block's ports within `port_dof`.
    #[inline]
    pub fn ports_in<'s>(&self, port_dof: &'s [u32]) -> &'s [u32] {
        &port_dof[self.ports.0 as usize..self.ports.1 as usize]
    }
}

/// The run-time view a block gets: its own states, and its inputs, flange motion and
/// constraint forces read in place.
#[derive(Debug, Clone, Copy)]
pub struct Cx<'a> {
    /// Time, s.
    pub t: f64,
    /// This block's continuous states.
    pub x: &'a [f64],
    /// The signal slots the inputs are read from (`buf.sig` unless given separately).
    sig: &'a [f64],
    /// Shared by every block of an evaluation pass (by reference: a view is built per
    /// block call, so it stays a few words).
    buf: &'a Buffers<'a>,
    tab: &'a BlockTables,
}

impl<'a> Cx<'a> {
    /// A view for one block (used by the model and by [`crate::probe`]).
    #[inline]
    pub fn new(t: f64, x: &'a [f64], buf: &'a Buffers<'a>, tab: &'a BlockTables) -> Self {
        Cx {
            t,
            x,
            sig: buf.sig,
            buf,
            tab,
        }
    }
    /// A view whose inputs are read from `sig` rather than `buf.sig`: the model's output
    /// pass fills the signals as it goes, so it shares one `buf` over a run of blocks and
    /// gives each block the signals as they are at its turn.
    #[inline]
    pub fn with_signals(
        t: f64,
        x: &'a [f64],
        sig: &'a [f64],
        buf: &'a Buffers<'a>,
        tab: &'a BlockTables,
    ) -> Self {
        Cx {
            t,
            x,
            sig,
            buf,
            tab,
        }
    }
    /// Signal input `i` (index among the block's `in` ports).
    #[inline]
    pub fn u(&self, i: usize) -> f64 {
        debug_assert!(i < self.n_inputs(), "input {i} of a block with fewer");
        self.sig[self.buf.in_slots[self.tab.inputs.0 as usize + i].ix()]
    }
    /// Number of signal inputs.
    #[inline]
    pub fn n_inputs(&self) -> usize {
        (self.tab.inputs.1 - self.tab.inputs.0) as usize
    }
    /// All signal inputs, in order.
    #[inline]
    pub fn inputs(&self) -> impl Iterator<Item = f64> + '_ {
        let slots = self.tab.inputs_in(self.buf.in_slots);
        slots.iter().map(|s| self.sig[s.ix()])
    }
    /// The node (degree of freedom) of port `p`: an index into the node buffers,
    /// `u32::MAX` for none.
    #[inline(always)]
    fn dof(&self, p: usize) -> u32 {
        debug_assert!(
            p < (self.tab.ports.1 - self.tab.ports.0) as usize,
            "port {p} of a block with fewer"
        );
        self.buf.port_dof[self.tab.ports.0 as usize + p]
    }
    /// Speed of the node of port `p` (rad/s or m/s; 0 for an unconnected support).
    #[inline]
    pub fn v(&self, p: usize) -> f64 {
        // An unconnected support has no node (u32::MAX, out of range): the ground.
        self.buf
            .vel
            .get(self.dof(p) as usize)
            .copied()
            .unwrap_or(0.0)
    }
    /// Angle / position of the node of port `p` (0 for an unconnected support).
    #[inline]
    pub fn q(&self, p: usize) -> f64 {
        self.buf
            .pos
            .get(self.dof(p) as usize)
            .copied()
            .unwrap_or(0.0)
    }
    /// Acceleration of the node of port `p` (valid after the network solve: in
    /// `network_outputs`, `derivatives`, `guards`, `var` and events; 0 for an unconnected
    /// support).
    #[inline]
    pub fn a(&self, p: usize) -> f64 {
        self.buf
            .acc
            .get(self.dof(p) as usize)
            .copied()
            .unwrap_or(0.0)
    }
    /// Constraint force `i` of this block: its always-active rows first, then its
    /// friction joints (the transmitted torque `tau`; 0 when free). Valid after the
    /// network solve.
    #[inline]
    pub fn lambda(&self, i: usize) -> f64 {
        let nr = self.tab.n_rows as usize;
        if i < nr {
            self.buf.row_lambda[self.tab.rows_start as usize + i]
        } else {
            self.buf.joint_tau[self.tab.joints_start as usize + i - nr]
        }
    }
    /// Mode of this block's friction joint `k`.
    #[inline]
    pub fn mode(&self, k: usize) -> FrictionMode {
        self.buf.modes[self.tab.joints_start as usize + k]
    }
    /// Pose and velocity of the rigid body of frame port `p`.
    #[inline]
    pub fn frame(&self, p: usize) -> &crate::frame::FrameState {
        &self.buf.frame_states[self.dof(p) as usize]
    }
    /// Accelerations of the rigid body of frame port `p`: the world `v̇` of its centre of
    /// mass (m/s²) and its body `ω̇` (rad/s²). Valid after the network stage.
    #[inline]
    pub fn frame_acc(&self, p: usize) -> ([f64; 3], [f64; 3]) {
        let b = self.dof(p) as usize * 6;
        let a = &self.buf.frame_acc[b..b + 6];
        ([a[0], a[1], a[2]], [a[3], a[4], a[5]])
    }
    /// Temperature of the thermal node of heat port `p`, K; `None` when the port is an
    /// unconnected optional heat port. Nodes with a heat capacity or a fixed temperature
    /// are valid in every method; a node without capacity after the network solve
    /// (`network_outputs`, `derivatives`, `guards`, `var`, `heat_flows`, events).
    #[inline]
    pub fn temp(&self, p: usize) -> Option<f64> {
        let d = self.dof(p);
        (d != u32::MAX).then(|| self.buf.temp[d as usize])
    }
}

/// Generalized forces a block applies to its flanges, accumulated straight into the
/// network's force vector. Also sums the power the block delivers (`Σ f·v`), which the
/// energy audit integrates.
#[derive(Debug)]
pub struct Forces<'a> {
    f: &'a mut [f64],
    vel: &'a [f64],
    /// The nodes of the ports, the block's from `port0` on.
    port_dof: &'a [u32],
    port0: usize,
    power: f64,
    loss: f64,
    frame_load: &'a mut [f64],
    frames: &'a [crate::frame::FrameState],
}

impl<'a> Forces<'a> {
    /// An accumulator over the network force vector `f` (per degree of freedom).
    pub fn new(f: &'a mut [f64], vel: &'a [f64], port_dof: &'a [u32]) -> Self {
        Forces {
            f,
            vel,
            port_dof,
            port0: 0,
            power: 0.0,
            loss: 0.0,
            frame_load: &mut [],
            frames: &[],
        }
    }
    /// The same accumulator for the block whose tables are `tab`, its ports' nodes read
    /// from every block's `port_dof` (nothing sliced).
    pub(crate) fn for_block(mut self, tab: &BlockTables) -> Self {
        self.port0 = tab.ports.0 as usize;
        self
    }
    /// The node of port `p`.
    #[inline(always)]
    fn dof(&self, p: usize) -> usize {
        self.port_dof[self.port0 + p] as usize
    }
    /// The same accumulator with the rigid bodies: their load accumulator `load` (6 per
    /// body: world force, body moment) and their poses `frames` (one per body, made once
    /// per evaluation: a force does not rebuild the rotation).
    pub fn with_frames(
        mut self,
        load: &'a mut [f64],
        frames: &'a [crate::frame::FrameState],
    ) -> Self {
        self.frame_load = load;
        self.frames = frames;
        self
    }
    /// Apply the world force `force` (N) at the point `point` (m, body axes from the
    /// centre of mass) of the rigid body of frame port `p`.
    #[inline]
    pub fn add_frame_force(&mut self, p: usize, point: [f64; 3], force: [f64; 3]) {
        let b = self.dof(p);
        let v = self.frames[b].point_velocity(point);
        self.add_frame_force_moving(p, point, force, v);
    }
    /// [`Forces::add_frame_force`] for a caller that already has the world velocity
    /// `velocity` of the body point `point` (its power is `force · velocity`). Always
    /// inlined: a wheel calls it once per evaluation, and as a call across the crate
    /// boundary its vectors went through memory (about 75 instructions a call).
    #[inline(always)]
    pub fn add_frame_force_moving(
        &mut self,
        p: usize,
        point: [f64; 3],
        force: [f64; 3],
        velocity: [f64; 3],
    ) {
        use crate::frame::{cross, dot, FRAME_LOADS};
        let b = self.dof(p);
        let st = &self.frames[b];
        let m = cross(point, st.to_body(force));
        let l = &mut self.frame_load[b * FRAME_LOADS..(b + 1) * FRAME_LOADS];
        for a in 0..3 {
            l[a] += force[a];
            l[3 + a] += m[a];
        }
        self.power += dot(force, velocity);
    }
    /// Apply the moment `moment` (N·m, body axes) to the rigid body of frame port `p`.
    #[inline]
    pub fn add_frame_moment(&mut self, p: usize, moment: [f64; 3]) {
        use crate::frame::{dot, FRAME_LOADS};
        let b = self.dof(p);
        let st = &self.frames[b];
        let l = &mut self.frame_load[b * FRAME_LOADS..(b + 1) * FRAME_LOADS];
        for a in 0..3 {
            l[3 + a] += moment[a];
        }
        self.power += dot(moment, st.omega());
    }
    /// Add the generalized force `value` on port `p` (positive accelerates the flange in
    /// its positive direction). A force on an unconnected support goes to the ground.
    #[inline]
    pub fn add(&mut self, p: usize, value: f64) {
        let d = self.dof(p);
        if let Some(f) = self.f.get_mut(d) {
            *f += value;
            self.power += value * self.vel[d];
        }
    }
    /// The power delivered by the forces added so far, W.
    pub fn power(&self) -> f64 {
        self.power
    }
    /// Book `p` W (>= 0) of the power of the forces added as dissipated inside the block
    /// (an engine's friction torque times its speed): the work integral keeps the whole
    /// power, the audit shows this part as the block's internal loss (see
    /// [`MechDecl::internal_loss`]).
    #[inline]
    pub fn dissipate(&mut self, p: f64) {
        self.loss += p;
    }
    /// The power booked through [`Forces::dissipate`], W.
    pub fn loss(&self) -> f64 {
        self.loss
    }
}

/// What a block can do at an event instant: change its states and modes, log, stop.
#[derive(Debug)]
pub struct EventCx<'a> {
    /// Time, s.
    pub t: f64,
    /// This block's continuous states (may be reset).
    pub x: &'a mut [f64],
    buf: Buffers<'a>,
    tab: &'a BlockTables,
    log: &'a mut Vec<(EventTag, String)>,
    stop: &'a mut bool,
    impacts: Option<&'a mut Vec<(usize, f64)>>,
    failure: Option<&'a mut Option<String>>,
}

impl<'a> EventCx<'a> {
    /// An event view (used by the model and by [`crate::probe`]).
    pub fn new(
        t: f64,
        x: &'a mut [f64],
        buf: Buffers<'a>,
        tab: &'a BlockTables,
        log: &'a mut Vec<(EventTag, String)>,
        stop: &'a mut bool,
    ) -> Self {
        EventCx {
            t,
            x,
            buf,
            tab,
            log,
            stop,
            impacts: None,
            failure: None,
        }
    }
    /// The same view, recording impact requests ([`EventCx::impact`]) in `impacts`.
    pub fn with_impacts(mut self, impacts: &'a mut Vec<(usize, f64)>) -> Self {
        self.impacts = Some(impacts);
        self
    }
    /// The same view, recording a failure ([`EventCx::fail`]) in `failure`.
    pub fn with_failure(mut self, failure: &'a mut Option<String>) -> Self {
        self.failure = Some(failure);
        self
    }
    /// Fail the run at this instant with `message` (an FMU call that returned an error,
    /// a table the run has left): the run ends with status "failed" and the message names
    /// the block, as any simulation failure (exit 1, results so far written). Without a
    /// model to fail (a probe), the block's run stops and the message is logged.
    pub fn fail(&mut self, message: impl Into<String>) {
        let message = message.into();
        match &mut self.failure {
            Some(f) => {
                if f.is_none() {
                    **f = Some(message);
                }
            }
            None => {
                self.log.push((EventTag::Stop, message));
                *self.stop = true;
            }
        }
    }
    /// Ask for an impact on this block's friction joint `k` at this instant: the model
    /// applies an impulse along the joint's row (through the mechanical network, momentum
    /// conserving, all other constraints kept) so that the relative speed becomes
    /// `w_rel+ = −restitution·w_rel−` (Newton's impact law; 0 = plastic, 1 = elastic), and
    /// books the kinetic energy it removes as impact loss. Applied after this block's
    /// `update_modes` returns, before the friction modes are settled.
    pub fn impact(&mut self, k: usize, restitution: f64) {
        let j = self.tab.joints_start as usize + k;
        if let Some(v) = self.impacts.as_mut() {
            v.push((j, restitution));
        }
    }
    /// Mode of this block's friction joint `k`.
    pub fn mode(&self, k: usize) -> FrictionMode {
        self.view().mode(k)
    }
    /// Temperature of the node of heat port `p` (see [`Cx::temp`]).
    pub fn temp(&self, p: usize) -> Option<f64> {
        self.view().temp(p)
    }
    /// The evaluation view at this instant (to share code with `outputs`/`guards`).
    pub fn view(&self) -> Cx<'_> {
        Cx::new(self.t, self.x, &self.buf, self.tab)
    }
    /// Signal input `i`.
    pub fn u(&self, i: usize) -> f64 {
        self.view().u(i)
    }
    /// Speed of the node of port `p`.
    pub fn v(&self, p: usize) -> f64 {
        self.view().v(p)
    }
    /// Angle / position of the node of port `p`.
    pub fn q(&self, p: usize) -> f64 {
        self.view().q(p)
    }
    /// Acceleration of the node of port `p`.
    pub fn a(&self, p: usize) -> f64 {
        self.view().a(p)
    }
    /// Constraint force `i` (rows, then joints), as [`Cx::lambda`].
    pub fn lambda(&self, i: usize) -> f64 {
        self.view().lambda(i)
    }
    /// Log an event of this block.
    pub fn log(&mut self, tag: EventTag, detail: impl Into<String>) {
        self.log.push((tag, detail.into()));
    }
    /// Ask the run to stop at this instant (status "stopped").
    pub fn request_stop(&mut self) {
        *self.stop = true;
    }
}

/// A library block. See the module docs for conventions.
pub trait Block: Send + Sync {
    // ---- declaration ----
    /// What the block is: ports, states, guards, variables, network and audit roles (see
    /// [`BlockDecl`]). Asked once per built block, after [`Block::attach`].
    fn declare(&self) -> BlockDecl;
    /// Initial continuous states.
    fn initial_states(&self, _x: &mut [f64]) {}
    /// A problem with the block's starting pose that the run would otherwise hide (a wheel
    /// whose mount starts below the ground carries nothing and the car falls through the
    /// plane): one sentence, without the block's name. Asked once at instantiation, with
    /// the same view as [`Block::initial_speeds`]; the model keeps the warnings
    /// ([`crate::model::Model::start_warnings`]) and the CLI prints them.
    fn start_warning(&self, _cx: &Cx) -> Option<String> {
        None
    }
    /// Initial speeds of the nodes of this block's ports that follow from the initial
    /// states of the rigid bodies (a wheel rolling at its body's initial velocity): called
    /// once when a model is instantiated, with a view where only the flange speeds and
    /// positions, the rigid bodies and the block's own states are valid (inputs read 0 or
    /// their defaults). The initial projection then makes all speeds consistent.
    fn initial_speeds(&self, _cx: &Cx) -> Vec<(usize, f64)> {
        Vec::new()
    }
    // ---- shared data (road ports) ----
    /// The immutable data this block provides on its road port `port` (index into
    /// [`BlockDecl::ports`]): the `Road`'s surface. Called once per model instance after the
    /// blocks are built; the consumers on the port's line receive it by
    /// [`Block::attach`]. `None`: the port provides nothing.
    fn shared(&self, _port: usize) -> Option<std::sync::Arc<dyn std::any::Any + Send + Sync>> {
        None
    }
    /// Receive the data the provider of the line of road port `port` shares, before the
    /// plan is laid out and again for every model instance (so the block's guard count and
    /// variables may depend on it). `Err(message)` when the data is not what the port
    /// expects.
    fn attach(
        &mut self,
        _port: usize,
        _data: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    ) -> Result<(), String> {
        Ok(())
    }

    // ---- lifecycle ----
    /// Called at the start of every run (before the initial event), with the start time:
    /// re-initialise modes, held samples and any other run data.
    fn reset(&mut self, _t0: f64) {}

    // ---- evaluation (modes fixed) ----
    /// Signal outputs that do not need the network solve (all `out` ports, in order; entries
    /// for network outputs may be left untouched).
    fn outputs(&self, _cx: &Cx, _y: &mut [f64]) {}
    /// Signal outputs that need the network solve; called after it.
    fn network_outputs(&self, _cx: &Cx, _y: &mut [f64]) {}
    /// The outputs of `outputs` (`after_network` false) or of `network_outputs` (true) as
    /// one fused operation, if they are a plain read or a short arithmetic fixed for the
    /// run (see [`Kernel`]): the model then runs the operation instead of the call. It must
    /// compute what the method computes, in the same order, to the bit.
    fn kernel(&self, _after_network: bool) -> Option<Kernel> {
        None
    }
    /// Generalized forces on the mechanical ports.
    fn forces(&self, _cx: &Cx, _f: &mut Forces) {}
    /// Friction law of joint `k` at relative speed `w_rel`.
    fn friction(&self, _k: usize, _cx: &Cx, _w_rel: f64) -> FrictionLaw {
        FrictionLaw::FREE
    }
    /// [`FrictionLaw::engagement`] of `friction(k, cx, w_rel)` alone: the guards of a free
    /// or sliding joint read nothing else. A block whose engagement is cheaper than its
    /// whole law overrides it; it must give exactly the law's value.
    fn engagement(&self, k: usize, cx: &Cx, w_rel: f64) -> f64 {
        self.friction(k, cx, w_rel).engagement
    }
    /// The sliding torque of a load-dependent joint `k` (declared in
    /// [`MechDecl::friction_loads`]) at relative speed `w_rel`, as an affine function of
    /// its load; called before the load is known (do not read `cx.lambda`). Its
    /// `FrictionLaw::kinetic` is not used while sliding.
    fn load_friction(&self, _k: usize, _cx: &Cx, _w_rel: f64) -> LoadLaw {
        LoadLaw {
            tau0: 0.0,
            slope: 0.0,
        }
    }
    /// Derivatives of the continuous states.
    fn derivatives(&self, _cx: &Cx, _dx: &mut [f64]) {}
    /// Guard values (valid while >= 0).
    fn guards(&self, _cx: &Cx, _g: &mut [f64]) {}
    /// Next time event strictly after `t`.
    fn next_time_event(&self, _t: f64) -> f64 {
        f64::INFINITY
    }
    /// A custom variable.
    fn var(&self, _cx: &Cx, _i: usize) -> f64 {
        f64::NAN
    }
    /// Several custom variables at one instant: `out[k]` = variable `which[k]`. Recording
    /// asks for each run of a block's logged custom variables at once. The default asks
    /// [`Block::var`] for each; a block whose variables share an expensive intermediate
    /// (a wheel's contact) overrides it to compute that once. Must give exactly what `var`
    /// gives.
    fn vars(&self, cx: &Cx, which: &[usize], out: &mut [f64]) {
        for (o, &i) in out.iter_mut().zip(which) {
            *o = self.var(cx, i);
        }
    }
    /// Stored (potential) energy, for the energy audit (springs), with the block's
    /// current modes and inputs. The audit takes it after the initial event, at the end,
    /// and on both sides of every event instant: what it jumps by at an event (a state
    /// the block resets, a mode that changes a state's meaning, an input that jumps) is
    /// booked as impact loss, not as the block's loss.
    fn potential_energy(&self, _cx: &Cx) -> f64 {
        0.0
    }

    // ---- thermal (see `crate::thermal`) ----
    /// Conductance `G` (W/K) of the block's conductor `k` (>= 0).
    fn conductance(&self, _k: usize, _cx: &Cx) -> f64 {
        0.0
    }
    /// Heat flows into the block's heat ports (its loss power), after the network solve.
    fn heat_flows(&self, _cx: &Cx, _q: &mut HeatFlows) {}

    // ---- events ----
    /// Called at an instant returned by `next_time_event` (before `update_modes`).
    fn time_event(&mut self, _cx: &mut EventCx) {}
    /// Called at every event instant: choose modes consistent with the current inputs.
    /// Return true if a mode changed.
    fn update_modes(&mut self, _cx: &mut EventCx) -> bool {
        false
    }

    // ---- run state (see `crate::model::ModelState`) ----
    /// Everything [`Block::reset`], [`Block::time_event`] and [`Block::update_modes`] wrote
    /// (modes, held samples, phases, first-call flags), to be put back with
    /// [`Block::restore_run_state`] into this block or into one of the same type built with
    /// other parameter values. `Ok(None)`: the block keeps no run data. `Err(reason)`: its
    /// run state cannot be saved (one sentence, without the block's name). Blocks with
    /// run data in plain fields implement both methods with [`crate::run_state!`].
    fn save_run_state(&self) -> Result<Option<RunState>, String> {
        Ok(None)
    }
    /// Put back a run state [`Block::save_run_state`] gave (only called with `Some`).
    /// A state of another type is an error, never a panic.
    fn restore_run_state(&mut self, saved: &RunState) -> Result<(), RunStateError> {
        Err(RunStateError {
            expected: "no run state",
            found: saved.type_name(),
        })
    }
}
