//! The execution plan: everything `compile()` decides about a model's *structure*, laid out
//! flat for the evaluation loop, and immutable afterwards.
//!
//! A plan holds indices only (where each block's states, outputs, inputs, flanges, rows,
//! joints and guards are; the evaluation stages in order; which blocks carry states,
//! guards, forces or constant outputs; the loggable variables). Everything that depends on
//! parameter *values* (masses, gear ratios, linear-block coefficients, initial states,
//! the blocks themselves with their modes) belongs to a run instance, the
//! [`crate::model::Model`]. So one plan can be shared (`Arc`) by many runs, for example
//! the runs of a parameter sweep on several threads.

use std::ops::Range;

use crate::block::{FrictionVar, PortDecl, PortKind};
use crate::ids::{BlockIx, JointIx, NodeIx, SlotIx, StateIx};
use crate::scope::ScopeSpec;
use drivelink_solver::Settings;

/// Where one block lives in the model's buffers.
#[derive(Debug, Clone)]
pub struct BlockPlan {
    /// Flat name (`gearbox.clutch_a`).
    pub name: String,
    /// Registry type name.
    pub type_name: &'static str,
    /// Declared ports.
    pub ports: Vec<PortDecl>,
    /// Continuous states in the state vector.
    pub(crate) x: Range<usize>,
    /// Output slots in the signal buffer (consecutive).
    pub(crate) y: Range<usize>,
    /// Input slots: a range of [`Plan::in_slots`].
    pub(crate) inputs: Range<usize>,
    /// Port table: a range of [`Plan::port_dof`] (one entry per port).
    pub(crate) port_tab: Range<usize>,
    /// Always-active constraint rows.
    pub(crate) rows: Range<usize>,
    /// Friction joints.
    pub(crate) joints: Range<usize>,
    /// Guards in the block-guard vector.
    pub(crate) guards: Range<usize>,
    /// State integrating the block's mechanical work (force blocks, tracking rows).
    pub(crate) energy: Option<StateIx>,
    /// State integrating the part of that work the block dissipates inside itself
    /// (`MechDecl::internal_loss`).
    pub(crate) internal_loss: Option<StateIx>,
    /// Its name in the audit, `block.NAME` (`BlockDecl::loss_name`).
    pub(crate) internal_loss_name: &'static str,
    /// Whether `Block::forces` is called.
    pub(crate) has_forces: bool,
    /// Whether the block's outputs are evaluated only at events.
    pub(crate) constant: bool,
    /// Whether the block is evaluated by the linear kernels.
    pub(crate) linear: bool,
}

/// The offsets of one block in the flat buffers, packed for the evaluation loop (the same
/// ranges as its [`BlockPlan`], in one cache line).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BlockRt {
    pub x: (u32, u32),
    pub y: (u32, u32),
    /// Where the block's inputs, ports, rows and joints are: the record its views hold.
    pub tab: crate::block::BlockTables,
    /// The block has outputs computed after the network solve.
    pub net_out: bool,
}

impl BlockRt {
    fn of(bp: &BlockPlan, net_out: bool) -> BlockRt {
        let r = |r: &Range<usize>| (r.start as u32, r.end as u32);
        BlockRt {
            x: r(&bp.x),
            y: r(&bp.y),
            tab: crate::block::BlockTables {
                inputs: r(&bp.inputs),
                ports: r(&bp.port_tab),
                rows_start: bp.rows.start as u32,
                n_rows: bp.rows.len() as u32,
                joints_start: bp.joints.start as u32,
            },
            net_out,
        }
    }
}

/// One stage of the output pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stage {
    /// A block's `outputs`.
    Outputs(BlockIx),
    /// Rows `range` of the linear output kernel.
    Linear(Range<usize>),
    /// The mechanical network: forces, friction, solve.
    Network,
    /// A block's `network_outputs`.
    NetworkOutputs(BlockIx),
    /// A block variable wired as a signal source: [`Plan::taps`]`[k]` into its slot.
    Tap(u32),
}

/// A block variable wired as a signal source (`["car.r", "esc.r"]`): evaluated by the
/// output pass like an output, into a signal slot of its own, where its
/// [`crate::block::VarReads`] allows (before any block output for a function of the
/// states, after the network solve for an acceleration or a force).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TapPlan {
    /// `block.var`.
    pub name: String,
    /// The block whose variable it is.
    pub block: BlockIx,
    /// Where the value comes from.
    pub var: VarRef,
    /// What the value depends on at an instant.
    pub reads: crate::block::VarReads,
    /// The signal slot it writes.
    pub slot: SlotIx,
}

/// An always-active constraint row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowPlan {
    pub block: BlockIx,
    /// The signal slot of the target of a tracking row.
    pub tracking: Option<SlotIx>,
}

/// A friction joint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JointPlan {
    pub block: BlockIx,
    /// Index of the joint within its block.
    pub local: usize,
    /// Name in event logs and guard names (`brake`, `diff.lock`).
    pub name: String,
}

/// A friction joint whose sliding torque depends on the load the block transmits
/// (declared by [`crate::block::FrictionLoad`]), with the load resolved to global indices.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LoadJointPlan {
    /// The joint.
    pub joint: JointIx,
    /// Load terms on always-active rows: (row, coefficient).
    pub rows: Vec<(usize, f64)>,
    /// Load terms on joint torques: (joint, coefficient).
    pub joints: Vec<(usize, f64)>,
}

/// A road link: the consumer's road port receives the data the provider's road port
/// shares ([`crate::block::Block::shared`], [`crate::block::Block::attach`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RoadLink {
    /// Providing block and its port index.
    pub provider: (BlockIx, usize),
    /// Consuming block and its port index.
    pub consumer: (BlockIx, usize),
}

/// A mechanical node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodePlan {
    pub name: String,
    pub kind: PortKind,
}

/// Where a loggable variable's value comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum VarRef {
    Signal(SlotIx),
    NodeSpeed(NodeIx),
    NodePos(NodeIx),
    NodeAccel(NodeIx),
    Friction(JointIx, FrictionVar),
    Custom(BlockIx, usize),
}

/// A loggable variable.
#[derive(Debug, Clone, PartialEq)]
pub struct VarInfo {
    /// `block.var` (or an alias of a composite block, `gearbox.A_mode`).
    pub name: String,
    pub(crate) source: VarRef,
    /// SI unit, `None` when unknown (the output of a `Gain` carries whatever its input
    /// carries).
    pub unit: Option<&'static str>,
    /// Meaning and sign convention.
    pub doc: &'static str,
}

/// A linear-kernel row: output `k` of a linear block (an output row) or state `k` (a
/// derivative row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LinRow {
    pub block: BlockIx,
    pub k: usize,
}

/// The immutable execution plan of a compiled model.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Which compilation made this plan (copies keep it): see [`Plan::compile_id`].
    pub(crate) compile_id: u64,
    pub(crate) name: String,
    pub(crate) settings: Settings,
    pub(crate) blocks: Vec<BlockPlan>,
    /// The blocks' offsets packed for the evaluation loop.
    pub(crate) rt: Vec<BlockRt>,
    /// Signal slot of every block input, per block (ranges in `BlockPlan::inputs`).
    pub(crate) in_slots: Vec<SlotIx>,
    /// Node (degree of freedom) of every block port, `u32::MAX` for signal ports.
    pub(crate) port_dof: Vec<u32>,
    /// Signal slots (outputs, then one constant slot per unconnected optional input).
    pub(crate) n_signals: usize,
    /// Constant slots and their values.
    pub(crate) slot_defaults: Vec<(SlotIx, f64)>,
    pub(crate) nodes: Vec<NodePlan>,
    pub(crate) rows: Vec<RowPlan>,
    pub(crate) joints: Vec<JointPlan>,
    /// Names of the rigid bodies (lines of frame ports).
    pub(crate) frames: Vec<String>,
    /// States of the rigid bodies (13 each, consecutive, see [`crate::frame`]).
    pub(crate) frames_x: Range<usize>,
    /// State vector: `[node positions | node speeds | block states | rigid bodies | work
    /// integrals of force blocks (each followed by its internal-loss integral, if it
    /// has one) | work integrals of joints]`.
    pub(crate) n_states: usize,
    /// First work-integral state of the joints.
    pub(crate) x_joint_energy: usize,
    /// Guards declared by blocks (the friction guards follow, three per joint).
    pub(crate) n_block_guards: usize,
    /// The output pass, in order.
    pub(crate) stages: Vec<Stage>,
    /// Block variables wired as signal sources (each evaluated by a [`Stage::Tap`]).
    pub(crate) taps: Vec<TapPlan>,
    /// Rows of the linear output kernel.
    pub(crate) lin_out: Vec<LinRow>,
    /// Rows of the linear derivative kernel.
    pub(crate) lin_der: Vec<LinRow>,
    /// Blocks whose outputs change only at events.
    pub(crate) const_blocks: Vec<BlockIx>,
    /// Non-linear blocks with states (their `derivatives` is called).
    pub(crate) state_blocks: Vec<BlockIx>,
    /// Blocks with guards.
    pub(crate) guard_blocks: Vec<BlockIx>,
    /// The guard blocks whose guards change only at events (`compile/held.rs`): a subset
    /// of `guard_blocks` the guard pass evaluates once after each event.
    pub(crate) held_guard_blocks: Vec<BlockIx>,
    /// Blocks whose `forces` is called.
    pub(crate) force_blocks: Vec<BlockIx>,
    /// Blocks with a work integral (force blocks, tracking rows).
    pub(crate) energy_blocks: Vec<BlockIx>,
    /// Every loggable variable, sorted by name.
    pub(crate) vars: Vec<VarInfo>,
    /// Logged variables (index into `vars`), in column order.
    pub(crate) log: Vec<usize>,
    pub(crate) scopes: Vec<ScopeSpec>,
    pub(crate) warnings: Vec<crate::warning::CompileWarning>,
    /// Load-dependent friction joints (lossy gears).
    pub(crate) load_joints: Vec<LoadJointPlan>,
    /// The thermal network.
    pub(crate) thermal: crate::thermal::ThermalPlan,
    /// The road links, attached to the blocks of every instance.
    pub(crate) roads: Vec<RoadLink>,
}

impl Plan {
    /// The compilation this plan comes from: equal for a plan and its copies (a
    /// [`crate::Compiled::with_params`] run whose structure is unchanged reuses the compiled
    /// plan as a private copy), different for every `compile()`.
    pub fn compile_id(&self) -> u64 {
        self.compile_id
    }
    /// The model name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The settings the model was compiled with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }
    /// The blocks, in flat order.
    pub fn blocks(&self) -> &[BlockPlan] {
        &self.blocks
    }
    /// Number of continuous states (including node positions and speeds and the energy
    /// integrals).
    pub fn n_states(&self) -> usize {
        self.n_states
    }
    /// Number of mechanical nodes.
    pub fn n_nodes(&self) -> usize {
        self.nodes.len()
    }
    /// Names of the rigid bodies (the first frame port of each line).
    pub fn frames(&self) -> &[String] {
        &self.frames
    }
    /// Number of thermal nodes.
    pub fn n_heat_nodes(&self) -> usize {
        self.thermal.nodes.len()
    }
    /// Every loggable variable, sorted by name.
    pub fn variables(&self) -> &[VarInfo] {
        &self.vars
    }
    /// Names of the logged variables, in column order.
    pub fn logged(&self) -> impl Iterator<Item = &str> {
        self.log.iter().map(|&i| self.vars[i].name.as_str())
    }
    /// An empty result for this plan's logged variables: their names, SI units and the
    /// scopes (every run starts from one).
    pub fn empty_result(&self) -> drivelink_results::SimResult {
        let names = self.logged().map(str::to_string).collect();
        let mut r = drivelink_results::SimResult::new(self.name.clone(), names);
        r.scopes = self.scopes.clone();
        r.units = self
            .log
            .iter()
            .map(|&i| self.vars[i].unit.map(str::to_string))
            .collect();
        r
    }
    /// The scopes.
    pub fn scopes(&self) -> &[ScopeSpec] {
        &self.scopes
    }
    /// Warnings found while compiling (unconnected flanges, ...).
    pub fn warnings(&self) -> &[crate::warning::CompileWarning] {
        &self.warnings
    }
    /// A variable by name.
    pub fn variable(&self, name: &str) -> Option<&VarInfo> {
        self.vars
            .binary_search_by(|v| v.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.vars[i])
    }
    /// Names of the friction joints (`brake`, `diff.lock`), as they appear in event logs.
    pub fn joint_names(&self) -> impl Iterator<Item = &str> {
        self.joints.iter().map(|j| j.name.as_str())
    }
    /// Names of the elements the energy audit lists: blocks with a work integral (force
    /// blocks, tracking rows) and their internal losses (`engine.friction`), then the
    /// friction joints.
    pub fn energy_elements(&self) -> Vec<String> {
        let mut v = Vec::new();
        for b in self.blocks.iter().filter(|b| b.energy.is_some()) {
            v.push(b.name.clone());
            if b.internal_loss.is_some() {
                v.push(format!("{}.{}", b.name, b.internal_loss_name));
            }
        }
        v.extend(self.joint_names().map(str::to_string));
        v
    }
    /// The tables a block's [`crate::block::Cx`] reads through.
    #[inline]
    pub(crate) fn block_tables(&self, b: BlockIx) -> &crate::block::BlockTables {
        &self.rt[b.ix()].tab
    }

    /// The packed offsets of every block (`net_out[b]`: block `b` has network outputs).
    pub(crate) fn pack(blocks: &[BlockPlan], net_out: &[bool]) -> Vec<BlockRt> {
        blocks
            .iter()
            .zip(net_out)
            .map(|(bp, &n)| BlockRt::of(bp, n))
            .collect()
    }
}

impl Plan {
    /// One line on the plan's shape: blocks, evaluation stages by kind, linear-kernel rows,
    /// blocks evaluated only at events, states, nodes, joints, guards.
    pub fn summary(&self) -> String {
        let count = |f: &dyn Fn(&Stage) -> bool| self.stages.iter().filter(|s| f(s)).count();
        let taps = match self.taps.len() {
            0 => String::new(),
            n => format!("; {n} variables wired as signals"),
        };
        format!(
            "{} blocks; stages: {} block outputs, {} linear ({} rows), {} network, {} network outputs; {} blocks at events only; {} states, {} nodes, {} rows, {} joints, {} guards ({} of {} guard blocks held between events){taps}",
            self.blocks.len(),
            count(&|s| matches!(s, Stage::Outputs(_))),
            count(&|s| matches!(s, Stage::Linear(_))),
            self.lin_out.len(),
            count(&|s| matches!(s, Stage::Network)),
            count(&|s| matches!(s, Stage::NetworkOutputs(_))),
            self.const_blocks.len(),
            self.n_states,
            self.nodes.len(),
            self.rows.len(),
            self.joints.len(),
            self.n_block_guards + 3 * self.joints.len(),
            self.held_guard_blocks.len(),
            self.guard_blocks.len(),
        )
    }
}
