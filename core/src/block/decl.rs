//! [`BlockDecl`]: what a block *is*, as one plain, comparable value.
//!
//! Everything `compile()` needs to know about a block before it runs (its ports, states,
//! guards, variables, which inputs feed its outputs straight through, its part of the
//! mechanical and thermal networks, its linear form, its role in the energy audit) is one
//! value returned by [`crate::Block::declare`], asked once per built block (after its
//! road data is attached). The compile passes, the model, the catalogue and the report read
//! this value; the `Block` trait's other methods are behaviour only.
//!
//! Two blocks whose declarations have the same structure ([`BlockDecl::same_structure`])
//! fit the same plan whatever their parameter values: [`crate::Compiled`] compares them to
//! decide whether a re-parameterised diagram can reuse its plan. The structure is the
//! declaration without the values the plan does not read (masses, initial speeds and
//! temperatures, row coefficients, the linear matrices except the pattern of `D`, heat
//! capacities, sample periods, the schedule's end); the comparison names every field, so a
//! field added to a declaration does not compile until it is compared.

use super::{
    BodyDecl, Constraint, FrictionDecl, Linear, MechDecl, PortDecl, PortKind, Row, RowKind,
    ThermalDecl, VarDecl,
};

/// Which signal inputs feed an output directly (within one evaluation), for the
/// algebraic-loop check and the evaluation order.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Feedthrough {
    /// Every input (the default: the safe assumption).
    #[default]
    All,
    /// No input: outputs depend on states, time, parameters and modes only (an
    /// integrator, a transfer function without direct term, a delay).
    None,
    /// Per input (index among the block's `in` ports).
    Inputs(Vec<bool>),
}

impl Feedthrough {
    /// Whether input `i` (index among the `in` ports) feeds an output directly.
    pub fn of(&self, i: usize) -> bool {
        match self {
            Feedthrough::All => true,
            Feedthrough::None => false,
            Feedthrough::Inputs(v) => v.get(i).copied().unwrap_or(true),
        }
    }
}

/// How a block's signal outputs change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Outputs {
    /// With time, states, inputs or flange motion: evaluated at every evaluation.
    #[default]
    Varying,
    /// A function of the inputs, parameters and modes only (not of time, states or flange
    /// motion): `Gain`, `Sum`, `Lookup1D`, `Saturation`, ... Such a block whose inputs all
    /// change only at events is evaluated after every event instead of at every evaluation
    /// (the `held` compile pass). A block that reads `cx.t`, its states or a flange in
    /// `outputs` must not declare it.
    Pure,
    /// A function of parameters and modes only, so they change only at events:
    /// `Constant`, `Step`, held samples. Evaluated after every event.
    Constant,
}

/// A block's role in the energy audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EnergyRole {
    /// Its mechanical work counts as a loss when negative (a damper, a clutch, a brake).
    #[default]
    Passive,
    /// Its mechanical work is a source (an engine, a torque source, a machine).
    Source,
}

/// What a block is: its declaration (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct BlockDecl {
    /// Ports, in a fixed order.
    pub ports: Vec<PortDecl>,
    /// Number of continuous states.
    pub states: usize,
    /// Guard functions (zero crossings), by name: the name is appended to the block name in
    /// messages. Their number is the block's guard count.
    pub guards: Vec<String>,
    /// Loggable variables besides the output ports.
    pub variables: Vec<VarDecl>,
    /// Which inputs feed an output directly.
    pub feedthrough: Feedthrough,
    /// How the outputs change.
    pub outputs: Outputs,
    /// Whether the guards are a function of the inputs and modes only, as
    /// [`Outputs::Pure`] says of the outputs: a guard block whose inputs change only at
    /// events (a shift schedule's tables) then has guards that change only at events, and
    /// the guard pass reuses their values between events instead of calling `guards` at
    /// every sample. A block that reads `cx.t`, its states or a flange in `guards` must not
    /// declare it.
    pub pure_guards: bool,
    /// The state-space form of a linear time-invariant block.
    pub linear: Option<Linear>,
    /// The mechanical part of the block.
    pub mech: MechDecl,
    /// The thermal part of the block: capacities, fixed temperatures, conductors.
    pub thermal: ThermalDecl,
    /// Its role in the energy audit.
    pub energy: EnergyRole,
    /// Name of the loss a block declaring [`MechDecl::internal_loss`] books through
    /// [`crate::block::Forces::dissipate`] (the audit lists it as `block.NAME`).
    pub loss_name: &'static str,
    /// The period of the block's recurring time events (a sample time), with the name of
    /// the parameter that sets it; used to refuse a run that would produce an absurd
    /// number of them before it starts.
    pub time_event_period: Option<(f64, &'static str)>,
    /// The run time (s) at which the block's scheduled input ends, if it has one: a drive
    /// cycle's length. `"stop_time": "cycle"` stops a run at the largest of these.
    pub schedule_end: Option<f64>,
}

impl Default for BlockDecl {
    fn default() -> Self {
        BlockDecl {
            ports: Vec::new(),
            states: 0,
            guards: Vec::new(),
            variables: Vec::new(),
            feedthrough: Feedthrough::All,
            outputs: Outputs::Varying,
            pure_guards: false,
            linear: None,
            mech: MechDecl::default(),
            thermal: ThermalDecl::default(),
            energy: EnergyRole::Passive,
            loss_name: "loss",
            time_event_period: None,
            schedule_end: None,
        }
    }
}

impl BlockDecl {
    /// A declaration with these ports and everything else at its default.
    pub fn ports(ports: Vec<PortDecl>) -> Self {
        BlockDecl {
            ports,
            ..BlockDecl::default()
        }
    }
    /// The same declaration with one guard per name in `names`.
    pub fn with_guards(mut self, names: &[&str]) -> Self {
        self.guards = names.iter().map(|n| n.to_string()).collect();
        self
    }
    /// The same declaration with `n` guards named by `name(i)`.
    pub fn guards_named(mut self, n: usize, name: impl Fn(usize) -> String) -> Self {
        self.guards = (0..n).map(name).collect();
        self
    }
    /// The same declaration with input `i` (index among the `in` ports) feeding an output
    /// directly where `feeds(i)`.
    pub fn feedthrough_by(mut self, feeds: impl Fn(usize) -> bool) -> Self {
        self.feedthrough = Feedthrough::Inputs((0..self.n_inputs()).map(feeds).collect());
        self
    }
    /// The same declaration with output `o` (index among the `out` ports) computed after
    /// the network solve where `needs(o)` (see [`PortDecl::needs_network`]).
    pub fn network_outputs_by(mut self, needs: impl Fn(usize) -> bool) -> Self {
        let outs = self.ports.iter_mut().filter(|p| p.kind == PortKind::Out);
        for (o, p) in outs.enumerate() {
            p.needs_network = needs(o);
        }
        self
    }
    /// Number of guards.
    pub fn n_guards(&self) -> usize {
        self.guards.len()
    }
    /// Number of signal inputs.
    pub fn n_inputs(&self) -> usize {
        self.ports.iter().filter(|p| p.kind == PortKind::In).count()
    }
    /// Number of signal outputs.
    pub fn n_outputs(&self) -> usize {
        self.ports
            .iter()
            .filter(|p| p.kind == PortKind::Out)
            .count()
    }
    /// The `o`-th signal output's declaration.
    pub fn output(&self, o: usize) -> Option<&PortDecl> {
        self.ports.iter().filter(|p| p.kind == PortKind::Out).nth(o)
    }
    /// Whether output `o` (index among the `out` ports) needs the network solve
    /// (accelerations or constraint forces): computed by `Block::network_outputs`.
    pub fn output_needs_network(&self, o: usize) -> bool {
        self.output(o).is_some_and(|p| p.needs_network)
    }
    /// Whether the outputs change only at events.
    pub fn constant_outputs(&self) -> bool {
        self.outputs == Outputs::Constant
    }
    /// Whether the outputs are a function of the inputs, parameters and modes only.
    pub fn pure_outputs(&self) -> bool {
        self.outputs == Outputs::Pure
    }
    /// Whether the block is a source in the energy audit.
    pub fn is_energy_source(&self) -> bool {
        self.energy == EnergyRole::Source
    }
    /// Name of guard `i` (`guard{i}` past the declared names).
    pub fn guard_name(&self, i: usize) -> String {
        self.guards
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("guard{i}"))
    }
    /// Whether `other` has this declaration's structure: equal in everything but the
    /// values the plan does not read (see the module docs). Every field is named here
    /// (the patterns have no `..`), so a field added to a declaration does not compile
    /// until it is compared.
    pub fn same_structure(&self, other: &BlockDecl) -> bool {
        let BlockDecl {
            ports,
            states,
            guards,
            variables,
            feedthrough,
            outputs,
            pure_guards,
            linear,
            mech,
            thermal,
            energy,
            loss_name,
            time_event_period,
            schedule_end,
        } = self;
        *ports == other.ports
            && *states == other.states
            && *guards == other.guards
            && *variables == other.variables
            && *feedthrough == other.feedthrough
            && *outputs == other.outputs
            && *pure_guards == other.pure_guards
            && same_linear(linear.as_ref(), other.linear.as_ref())
            && same_mech(mech, &other.mech)
            && same_thermal(thermal, &other.thermal)
            && *energy == other.energy
            && *loss_name == other.loss_name
            && time_event_period.map(|t| t.1) == other.time_event_period.map(|t| t.1)
            && schedule_end.is_some() == other.schedule_end.is_some()
    }
}

/// Same shape and the same pattern of non-zero direct terms (`D`).
fn same_linear(a: Option<&Linear>, b: Option<&Linear>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            let Linear {
                n,
                m,
                p,
                a: _,
                b: _,
                c: _,
                d,
            } = a;
            (*n, *m, *p) == (b.n, b.m, b.p)
                && d.len() == b.d.len()
                && d.iter().zip(&b.d).all(|(x, y)| (*x != 0.0) == (*y != 0.0))
        }
        _ => false,
    }
}

/// The same ports in every row, joint, mass, body and load (coefficients and values aside).
fn same_mech(a: &MechDecl, b: &MechDecl) -> bool {
    let MechDecl {
        bodies,
        masses,
        initial,
        constraints,
        frictions,
        friction_loads,
        has_forces,
        internal_loss,
    } = a;
    let rows =
        |x: &Row, y: &Row| x.0.len() == y.0.len() && x.0.iter().zip(&y.0).all(|(p, q)| p.0 == q.0);
    let ports =
        |x: &[(usize, f64)], y: &[(usize, f64)]| x.iter().map(|e| e.0).eq(y.iter().map(|e| e.0));
    bodies.len() == b.bodies.len()
        && bodies.iter().zip(&b.bodies).all(|(x, y)| {
            let BodyDecl {
                port,
                mass: _,
                inertia: _,
                initial,
                gravity,
            } = x;
            *port == y.port
                && initial.is_some() == y.initial.is_some()
                && gravity.is_some() == y.gravity.is_some()
        })
        && ports(masses, &b.masses)
        && initial.iter().map(|e| e.0).eq(b.initial.iter().map(|e| e.0))
        && constraints.len() == b.constraints.len()
        && constraints.iter().zip(&b.constraints).all(|(x, y)| {
            let Constraint { row, kind } = x;
            rows(row, &y.row)
                && match (kind, &y.kind) {
                    (RowKind::Velocity, RowKind::Velocity) => true,
                    (RowKind::Tracking { input, tc: _ }, RowKind::Tracking { input: j, .. }) => {
                        input == j
                    }
                    _ => false,
                }
        })
        && frictions.len() == b.frictions.len()
        && frictions.iter().zip(&b.frictions).all(|(x, y)| {
            let FrictionDecl {
                row,
                label,
                engagement_input,
            } = x;
            rows(row, &y.row) && *label == y.label && *engagement_input == y.engagement_input
        })
        // The plan keeps the loads' coefficients: they are structure.
        && *friction_loads == b.friction_loads
        && *has_forces == b.has_forces
        && *internal_loss == b.internal_loss
}

/// The same ports with capacities and fixed temperatures, conductors and roles.
fn same_thermal(a: &ThermalDecl, b: &ThermalDecl) -> bool {
    let ThermalDecl {
        capacities,
        fixed,
        conductors,
        has_heat_flows,
        reads_temperature,
    } = a;
    capacities
        .iter()
        .map(|e| e.0)
        .eq(b.capacities.iter().map(|e| e.0))
        && fixed.iter().map(|e| e.0).eq(b.fixed.iter().map(|e| e.0))
        && *conductors == b.conductors
        && *has_heat_flows == b.has_heat_flows
        && *reads_temperature == b.reads_temperature
}

#[cfg(test)]
mod tests {
    use super::super::{Constraint, Linear, MechDecl, PortDecl, Row, RowKind};
    use super::{BlockDecl, Feedthrough};

    fn gear(ratio: f64, inertia: f64, d: f64) -> BlockDecl {
        BlockDecl {
            ports: vec![
                PortDecl::rot("a"),
                PortDecl::rot("b"),
                PortDecl::input("u"),
                PortDecl::output("y"),
            ],
            states: 1,
            mech: MechDecl {
                masses: vec![(0, inertia)],
                constraints: vec![Constraint {
                    row: Row(vec![(0, 1.0), (1, -ratio)]),
                    kind: RowKind::Velocity,
                }],
                ..MechDecl::default()
            },
            linear: Some(Linear {
                n: 1,
                m: 1,
                p: 1,
                a: vec![-ratio],
                b: vec![1.0],
                c: vec![inertia],
                d: vec![d],
            }),
            ..BlockDecl::default()
        }
    }

    #[test]
    fn parameter_values_leave_the_structure_unchanged() {
        assert!(gear(3.5, 0.1, 2.0).same_structure(&gear(4.1, 0.7, 5.0)));
    }

    #[test]
    fn what_the_plan_is_built_from_changes_the_structure() {
        let base = gear(3.5, 0.1, 2.0);
        // A direct term appearing or vanishing changes the evaluation order.
        assert!(!base.same_structure(&gear(3.5, 0.1, 0.0)));
        let more_states = BlockDecl {
            states: 2,
            ..gear(3.5, 0.1, 2.0)
        };
        assert!(!base.same_structure(&more_states));
        let no_feedthrough = BlockDecl {
            feedthrough: Feedthrough::None,
            ..gear(3.5, 0.1, 2.0)
        };
        assert!(!base.same_structure(&no_feedthrough));
        assert!(!base.same_structure(&gear(3.5, 0.1, 2.0).with_guards(&["lock"])));
        let mut other_port = gear(3.5, 0.1, 2.0);
        other_port.mech.constraints[0].row.0[1].0 = 3;
        assert!(!base.same_structure(&other_port));
    }
}
