//! The `Block` trait: what every library block implements.
//!
//! A block declares typed ports (signal `in`/`out`, mechanical `rot`/`trans`), continuous
//! states, guard functions (zero crossings), time events, loggable variables and its part of
//! the mechanical network ([`MechDecl`]: inertias, kinematic constraints, friction joints).
//! At run time the compiled model calls it with a [`Cx`] view holding only this block's
//! inputs, states and flange motion. Blocks do no I/O and hold no solver state.
//!
//! Sign conventions (SI units everywhere): a force element writes the generalized force it
//! applies to each of its flanges (positive accelerates the flange in its positive
//! direction). A constraint row `Σ c_i·v_i = 0` with multiplier `λ` applies `c_i·λ` to flange
//! `i`. A friction joint's relative speed is `w_rel = Σ c_i·v_i` over its row and the torque
//! it transmits is `tau`, applied as `c_i·tau`, so a two-flange row `[(a, -1), (b, +1)]`
//! gives `w_rel = w_b − w_a` and `tau` accelerates `b` by `+tau` and `a` by `−tau`.

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
}

impl PortKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            PortKind::In => "in",
            PortKind::Out => "out",
            PortKind::Rot => "rot",
            PortKind::Trans => "trans",
        }
    }
    pub fn is_mech(&self) -> bool {
        matches!(self, PortKind::Rot | PortKind::Trans)
    }
}

/// A declared port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortDecl {
    pub name: String,
    pub kind: PortKind,
    /// An unconnected signal input reads this value instead of being an error
    /// (for example `Tire.mu_scale` = 1). `None`: it must be driven.
    pub default: Option<OrderedDefault>,
}

/// A default value for an optional input (wrapped so `PortDecl` can be `Eq`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderedDefault(pub u64);

impl OrderedDefault {
    pub fn new(v: f64) -> Self {
        OrderedDefault(v.to_bits())
    }
    pub fn value(&self) -> f64 {
        f64::from_bits(self.0)
    }
}

impl PortDecl {
    pub fn input(name: impl Into<String>) -> Self {
        PortDecl {
            name: name.into(),
            kind: PortKind::In,
            default: None,
        }
    }
    pub fn optional_input(name: impl Into<String>, default: f64) -> Self {
        PortDecl {
            name: name.into(),
            kind: PortKind::In,
            default: Some(OrderedDefault::new(default)),
        }
    }
    pub fn output(name: impl Into<String>) -> Self {
        PortDecl {
            name: name.into(),
            kind: PortKind::Out,
            default: None,
        }
    }
    pub fn rot(name: impl Into<String>) -> Self {
        PortDecl {
            name: name.into(),
            kind: PortKind::Rot,
            default: None,
        }
    }
    pub fn trans(name: impl Into<String>) -> Self {
        PortDecl {
            name: name.into(),
            kind: PortKind::Trans,
            default: None,
        }
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
    Tracking { input: usize, tc: f64 },
}

/// A constraint row with its kind.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    pub row: Row,
    pub kind: RowKind,
}

/// A friction joint handled by the network's stuck/slip state machine.
#[derive(Debug, Clone, PartialEq)]
pub struct FrictionDecl {
    /// Relative-speed row (`w_rel = Σ c·v`).
    pub row: Row,
    /// Suffix used in event logs and guard names (`""` for single-joint blocks).
    pub label: String,
}

/// A block's contribution to the mechanical network.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MechDecl {
    /// Inertia or mass added to the node of a port.
    pub masses: Vec<(usize, f64)>,
    /// Initial speed of the node of a port (rad/s or m/s) and initial position.
    pub initial: Vec<(usize, f64, f64)>,
    /// Constraints that are always active.
    pub constraints: Vec<Constraint>,
    /// Friction joints (locked joints become constraints).
    pub frictions: Vec<FrictionDecl>,
    /// Whether `Block::forces` contributes forces.
    pub has_forces: bool,
}

/// The friction data a block gives for one joint at the current instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrictionLaw {
    /// Kinetic torque magnitude at this slip speed (>= 0), opposing the slip.
    pub kinetic: f64,
    /// Static range the locked constraint torque must stay in: `lo <= tau <= hi`.
    pub lo: f64,
    pub hi: f64,
    /// Engagement measure: the joint is free when this is <= 0 (normalized normal force).
    pub engagement: f64,
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
    pub fn code(&self) -> f64 {
        match self {
            FrictionMode::SlidingBackward => -1.0,
            FrictionMode::Locked => 0.0,
            FrictionMode::SlidingForward => 1.0,
            FrictionMode::Free => 2.0,
        }
    }
    pub fn name(&self) -> &'static str {
        match self {
            FrictionMode::SlidingBackward => "sliding backward",
            FrictionMode::Locked => "locked",
            FrictionMode::SlidingForward => "sliding forward",
            FrictionMode::Free => "free",
        }
    }
}

/// Quantities of a friction joint that can be logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrictionVar {
    WRel,
    PhiRel,
    Tau,
    Mode,
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

/// A loggable variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarDecl {
    pub name: String,
    pub source: VarSource,
}

impl VarDecl {
    pub fn new(name: impl Into<String>, source: VarSource) -> Self {
        VarDecl {
            name: name.into(),
            source,
        }
    }
}

/// The run-time view a block gets: its own slices only.
#[derive(Debug, Clone, Copy)]
pub struct Cx<'a> {
    pub t: f64,
    /// This block's continuous states.
    pub x: &'a [f64],
    /// This block's signal inputs, in the order of its `in` ports.
    pub u: &'a [f64],
    /// Speeds of this block's mechanical ports, in port order (one entry per port; 0 for
    /// signal ports).
    pub v: &'a [f64],
    /// Angles / positions of this block's mechanical ports.
    pub q: &'a [f64],
    /// Accelerations of this block's mechanical ports (valid after the network solve).
    pub a: &'a [f64],
    /// Constraint forces of this block's always-active constraint rows, then of its friction
    /// joints (torque `tau` of each joint; 0 when free), valid after the network solve.
    pub lambda: &'a [f64],
    /// Modes of this block's friction joints.
    pub modes: &'a [FrictionMode],
}

/// What a block can do at an event instant.
#[derive(Debug)]
pub struct EventCx<'a> {
    pub t: f64,
    pub x: &'a mut [f64],
    pub u: &'a [f64],
    pub v: &'a [f64],
    pub q: &'a [f64],
    pub a: &'a [f64],
    pub lambda: &'a [f64],
    /// Events to log (kind, detail).
    pub log: &'a mut Vec<(EventTag, String)>,
    /// Set to true to stop the run at this instant.
    pub stop: &'a mut bool,
}

impl EventCx<'_> {
    pub fn log(&mut self, tag: EventTag, detail: impl Into<String>) {
        self.log.push((tag, detail.into()));
    }
}

/// A library block. See the module docs for conventions.
pub trait Block: Send {
    /// The registry type name (`"Inertia"`).
    fn type_name(&self) -> &'static str;
    /// Ports, in a fixed order.
    fn ports(&self) -> Vec<PortDecl>;
    /// Whether signal input `input` (index among `in` ports) feeds an output directly.
    fn feedthrough(&self, _input: usize) -> bool {
        true
    }
    /// Whether output `output` (index among `out` ports) needs the network solve
    /// (accelerations or constraint forces). Such outputs are computed by
    /// [`Block::network_outputs`].
    fn output_needs_network(&self, _output: usize) -> bool {
        false
    }
    /// Number of continuous states.
    fn n_states(&self) -> usize {
        0
    }
    /// Initial continuous states.
    fn initial_states(&self, _x: &mut [f64]) {}
    /// The mechanical part of the block.
    fn mech(&self) -> MechDecl {
        MechDecl::default()
    }
    /// Loggable variables besides the output ports.
    fn variables(&self) -> Vec<VarDecl> {
        Vec::new()
    }
    /// Number of guard functions.
    fn n_guards(&self) -> usize {
        0
    }
    /// Name of guard `i` (appended to the block name in messages).
    fn guard_name(&self, i: usize) -> String {
        format!("guard{i}")
    }

    /// Signal outputs that do not need the network solve (all `out` ports, in order; entries
    /// for network outputs may be left untouched).
    fn outputs(&mut self, _cx: &Cx, _y: &mut [f64]) {}
    /// Signal outputs that need the network solve; called after it.
    fn network_outputs(&mut self, _cx: &Cx, _y: &mut [f64]) {}
    /// Generalized forces on the mechanical ports (one entry per port, pre-zeroed).
    fn forces(&mut self, _cx: &Cx, _f: &mut [f64]) {}
    /// Friction law of joint `k` at relative speed `w_rel`.
    fn friction(&self, _k: usize, _cx: &Cx, _w_rel: f64) -> FrictionLaw {
        FrictionLaw {
            kinetic: 0.0,
            lo: 0.0,
            hi: 0.0,
            engagement: 0.0,
        }
    }
    /// Derivatives of the continuous states.
    fn derivatives(&mut self, _cx: &Cx, _dx: &mut [f64]) {}
    /// Guard values (valid while >= 0).
    fn guards(&mut self, _cx: &Cx, _g: &mut [f64]) {}
    /// Next time event strictly after `t`.
    fn next_time_event(&self, _t: f64) -> f64 {
        f64::INFINITY
    }
    /// Called at an instant returned by `next_time_event` (before `update_modes`).
    fn time_event(&mut self, _cx: &mut EventCx) {}
    /// Called at every event instant: choose modes consistent with the current inputs.
    /// Return true if a mode changed.
    fn update_modes(&mut self, _cx: &mut EventCx) -> bool {
        false
    }
    /// A custom variable.
    fn var(&self, _cx: &Cx, _i: usize) -> f64 {
        f64::NAN
    }
    /// Stored (potential) energy, for the energy audit (springs).
    fn potential_energy(&self, _cx: &Cx) -> f64 {
        0.0
    }
    /// Whether this block's mechanical work is a source (engine, torque source) in the
    /// energy audit; otherwise its work counts as a loss when negative.
    fn is_energy_source(&self) -> bool {
        false
    }
}
