//! `Model`: a compiled diagram, runnable as a [`HybridSystem`].
//!
//! A model is an immutable [`Plan`] (shared, `Arc`) plus the state of runs: the blocks
//! (with their modes), the mechanical network (masses, constraint coefficients,
//! factorization), the linear kernels, the signal buffer and the result being recorded.
//! Nothing in it is public: read it through methods.
//!
//! Modules: `eval` (the evaluation loop: outputs, network, derivatives, guards),
//! `linear` (kernels of the linear blocks), `events` (event handling and the friction
//! stuck/slip machine), `energy` (the energy audit), `record` (logging and output),
//! `sample` (the logged values at a given state, for an FMU's Model Exchange interface).
//!
//! State vector layout: `[node positions (n) | node speeds (n) | block states | work
//! integrals (one per force block, one per friction joint)]`.

mod cosim;
mod demand;
mod energy;
mod eval;
mod events;
mod heat;
pub(crate) mod linear;
mod linearize;
mod load;
mod program;
mod reach;
mod record;
mod sample;
mod snapshot;
#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use drivelink_solver::simd::AlignedBuf;
use drivelink_solver::{
    integrate, EventAction, EventCause, HybridSystem, OutputKind, Settings, Status, SystemError,
};

pub use energy::{EnergyAudit, HeatAudit};
pub use heat::MAX_ALGEBRAIC_HEAT_NODES;
pub use linearize::{Eigen, Linearization, MAX_LINEARIZE_STATES};
pub use snapshot::{ModelState, StateError};

use crate::block::{Block, BlockDecl, FrictionMode};
use crate::error::Error;
use crate::frame::{MassProps, FRAME_LOADS, FRAME_STATES};
use crate::ids::BlockIx;
use crate::network::{Network, NodeRow};
use crate::plan::Plan;
use crate::result::{RunStats, RunStatus, SimResult};

use linear::LinKernel;
use program::{GuardProgram, Program};

/// The model's evaluation programs (see [`program`]), with the plan they were laid out
/// from: a pass that takes the programs out of the model reads the plan through them
/// (no reference count to touch per evaluation).
struct Programs {
    plan: Arc<Plan>,
    /// Every stage of the plan (step ends, guard samples, output, events).
    all: Program,
    /// The stages an evaluation for derivatives only runs (`demand.rs`).
    rhs: Program,
    /// The stages an evaluation at an output point runs (`demand.rs`): those the logged
    /// variables and the derivatives depend on.
    shown: Program,
    /// The blocks whose outputs change only at events (refreshed after each event).
    constants: Program,
    /// The guard pass.
    guards: GuardProgram,
    /// The tracking rows with the signal slot of their target, in row order.
    tracking: Vec<(u32, crate::ids::SlotIx)>,
    /// The force blocks' `forces` calls (`network` unused).
    forces: Vec<program::Call>,
    /// The state blocks' `derivatives` calls (`network` unused).
    states: Vec<program::Call>,
    /// The work integrals of the force blocks and tracking rows.
    energy: program::EnergyProgram,
    /// The logged row.
    log: program::LogProgram,
    /// The states an output point reads, if few (`demand::output_states`).
    output_states: Option<Vec<usize>>,
    /// The signal slots evaluations for derivatives and at output points write (the others
    /// change only in full evaluations and refreshes), ascending.
    shown_slots: Vec<u32>,
}

/// A free friction joint engages when its engagement (normalized normal force) rises above
/// `ENGAGE_ON`, and an engaged one becomes free when it falls below `ENGAGE_OFF`. The
/// hysteresis keeps a pressure that decays towards zero (a first-order filter) from
/// toggling free/engaged on integration noise.
pub const ENGAGE_ON: f64 = 1e-6;
/// See [`ENGAGE_ON`].
pub const ENGAGE_OFF: f64 = 5e-7;

/// The message of a run ended through [`Model::set_cancel`].
pub const INTERRUPTED: &str = "interrupted: the run was cancelled by its caller (Ctrl-C)";

/// Buffers of one evaluation (all allocated by `instantiate`).
struct Eval {
    /// Signal slots (aligned: the linear kernels stream them).
    sig: AlignedBuf,
    /// Scratch for one block's outputs.
    ybuf: Vec<f64>,
    /// A full evaluation or a refresh wrote `sig` since its last check for non-finite
    /// values (otherwise only the slots of `Programs::shown_slots` can have changed).
    sig_unchecked: bool,
    /// The guards that change only at events (`plan.held_guard_blocks`), as evaluated at
    /// the first sample after the last event.
    held_g: Vec<f64>,
    /// Whether `held_g` holds them (false after every event, refresh and rerouting).
    held_g_valid: bool,
    /// Transmitted torque of each joint (kinetic when sliding, λ when locked, 0 free).
    joint_tau: Vec<f64>,
    /// Kinetic torque of each sliding joint (0 otherwise), for the energy integrals.
    joint_kin: Vec<f64>,
    /// Relative speed of each joint.
    joint_wrel: Vec<f64>,
    /// The instant each joint was last released from `Locked` (−∞ before its first
    /// release in a run): a joint released at an event instant starts sliding and is not
    /// relocked at that instant while its slip accelerates in its sliding direction.
    released_at: Vec<f64>,
    /// Power delivered by each force block at the last evaluation.
    block_power: Vec<f64>,
    /// The part of `block_power` each block dissipated inside itself (`Forces::dissipate`).
    block_loss: Vec<f64>,
    /// Targets of the tracking rows.
    targets: Vec<f64>,
    /// A failure a block asked for at the current event ([`crate::EventCx::fail`]).
    failure: Option<String>,
    /// Loads on every rigid body (6 each: world force, body moment).
    frame_load: Vec<f64>,
    /// Accelerations of every rigid body (6 each: world `v̇`, body `ω̇`).
    frame_acc: Vec<f64>,
    /// State derivatives of every rigid body (13 each).
    frame_dx: Vec<f64>,
    /// Poses of every rigid body at the evaluation's state (built once per evaluation,
    /// read by the blocks through `Cx::frame`).
    frame_states: Vec<crate::frame::FrameState>,
    /// Scratch of the time-event loop: the blocks called since the last evaluation.
    pending: Vec<usize>,
    /// By block, once asked: the blocks a change of it reaches (`reach.rs`).
    reach: Vec<Option<Vec<bool>>>,
}

/// The step-end cache: the solver asks for derivatives, guards and output at the same
/// `(t, x)` in a row.
struct Cache {
    t: f64,
    x: AlignedBuf,
    valid: bool,
    /// `x` holds the kept evaluation's point, so [`Model::kept_at`] can recognise it. A
    /// model without guards keeps its step ends without copying the point: only the
    /// output of the same point follows, which the integrator identifies itself
    /// (`output_at_last_call`).
    has_x: bool,
    /// Inside event handling: the signals are those of a full evaluation with the current
    /// state, modes and block data (set by a full evaluation, cleared by anything that
    /// changes them), so the handler evaluates again only after a change.
    current: bool,
}

/// What one run accumulates.
struct Run {
    result: SimResult,
    row_buf: Vec<f64>,
    impact_loss: f64,
    stopped_by: Option<String>,
    /// The state the last run ended with (what `integrate` leaves: the last accepted or
    /// event-updated state, which the final output point records).
    last_x: Vec<f64>,
    /// The state the last run started from: `x0` with the node speeds the blocks derived
    /// from their inputs at the initial event, before the initial projection (whose loss
    /// is booked as impact). The energy audit measures from it.
    first_x: Vec<f64>,
    /// Each block's stored energy at the start of the run, after the initial event (its
    /// modes set); empty until then. The energy audit measures the stored energy from it.
    stored_start: Vec<f64>,
    /// Each block's stored energy that jumped at events with no work done (J, + gained),
    /// booked as impact loss (see `events.rs`).
    stored_jumps: Vec<f64>,
    next_te: Vec<f64>,
    /// The earliest of `next_te` (kept up to date where `next_te` changes).
    next_te_min: f64,
    model_evals: u64,
    output_points: u64,
    /// `solver.max_output_values` of the run and the rows it allows (the values over the
    /// columns), checked at every step (`check`): a grid at the steps is not known before.
    max_output_values: u64,
    max_rows: u64,
    /// A failure found while recording (a non-finite value), reported at the next event
    /// or at the end of the run.
    failure: Option<String>,
}

impl Run {
    /// Recompute the earliest pending time event.
    fn update_next_te_min(&mut self) {
        self.next_te_min = self.next_te.iter().copied().fold(f64::INFINITY, f64::min);
    }
}

/// A compiled model. See the module docs.
pub struct Model {
    plan: Arc<Plan>,
    blocks: Vec<Box<dyn Block>>,
    /// What each block is ([`Block::declare`], asked once at instantiation).
    decls: Vec<BlockDecl>,
    net: Network,
    /// Mass properties of every rigid body.
    frames: Vec<MassProps>,
    lin: LinKernel,
    /// The evaluation programs ([`Programs`]); boxed, so an evaluation pass takes them out
    /// and puts them back as one pointer (`None` only during a pass).
    progs: Option<Box<Programs>>,
    x0: Vec<f64>,
    ev: Eval,
    cache: Cache,
    run: Run,
    dirty_factor: bool,
    progress: Option<Box<dyn FnMut(f64) + Send>>,
    /// Set by another thread to end the run (see [`Model::set_cancel`]).
    cancel: Option<Arc<AtomicBool>>,
    /// The thermal network's values and scratch.
    heat: heat::Heat,
    /// Scratch of the load-dependent friction joints.
    load: load::LoadScratch,
    /// The blocks' warnings about their starting poses ([`Block::start_warning`]).
    start_warnings: Vec<String>,
    /// The run stepped to communication points from outside (`cosim.rs`).
    stepping: Option<Box<drivelink_solver::Integration>>,
    /// Inputs were set from outside since the last step ([`Model::inputs_changed`]).
    inputs_set: bool,
    /// What saving and restoring run states needs (`snapshot.rs`).
    snap: snapshot::SnapHooks,
}

/// The most nodes (shafts and translational points between blocks) the mechanical
/// network takes: it is solved with dense matrices (the mass matrix, the null space of
/// the constraints, their factorization): O(n²) memory and O(n³) time per set of locked
/// joints (2,000 nodes: 8 s to compile; 20,000 asked for 3.2 GB per matrix and aborted).
pub const MAX_NETWORK_NODES: usize = 2_000;

/// Build the network of a model from its blocks' mechanical declarations and fill the
/// node part of `x0`; an error above [`MAX_NETWORK_NODES`] nodes.
fn build_network(plan: &Plan, decls: &[BlockDecl], x0: &mut [f64]) -> Result<Network, Error> {
    let n = plan.nodes.len();
    if n > MAX_NETWORK_NODES {
        return Err(Error::Netlist {
            file: plan.name.clone(),
            path: "connections".into(),
            message: format!(
                "the mechanical network has {n} nodes (shafts between blocks); it takes at \
                 most {MAX_NETWORK_NODES}: it is solved with dense n x n matrices, O(n³) \
                 to factorize (merge rigidly coupled inertias, or model a long elastic \
                 shaft with fewer segments)"
            ),
        });
    }
    let mut mass = vec![0.0; n];
    let mut v0: Vec<Option<(f64, usize)>> = vec![None; n];
    let mut rows = Vec::with_capacity(plan.rows.len());
    let mut fric_rows = Vec::with_capacity(plan.joints.len());
    let mut errors = Vec::new();
    for (b, blk) in decls.iter().enumerate() {
        let bp = &plan.blocks[b];
        // An unconnected support flange has no node: it is the ground (`None`).
        let node = |p: usize| {
            let d = plan.port_dof[bp.port_tab.start + p];
            (d != u32::MAX).then_some(d as usize)
        };
        let decl = &blk.mech;
        for &(p, m) in &decl.masses {
            if let Some(k) = node(p) {
                mass[k] += m;
            }
        }
        for &(p, w, q) in &decl.initial {
            let Some(k) = node(p) else { continue };
            match v0[k] {
                Some((w_old, b_old)) if w_old != w => errors.push(Error::ConflictingInitial {
                    node: plan.nodes[k].name.clone(),
                    first: w_old,
                    second: w,
                    blocks: format!("{} and {}", plan.blocks[b_old].name, bp.name),
                }),
                _ => v0[k] = Some((w, b)),
            }
            x0[k] = q;
        }
        for c in &decl.constraints {
            let tracking = match c.kind {
                crate::block::RowKind::Velocity => None,
                crate::block::RowKind::Tracking { tc, .. } => Some(tc),
            };
            rows.push(NodeRow::new(
                c.row.0.iter().filter_map(|&(p, k)| node(p).map(|n| (n, k))),
                tracking,
            ));
        }
        for f in &decl.frictions {
            fric_rows.push(NodeRow::new(
                f.row.0.iter().filter_map(|&(p, c)| node(p).map(|n| (n, c))),
                None,
            ));
        }
    }
    Error::from_list(errors)?;
    for (k, v) in v0.iter().enumerate() {
        x0[n + k] = v.map(|v| v.0).unwrap_or(0.0);
    }
    let mut net = Network::new(
        plan.nodes.iter().map(|nd| nd.name.clone()).collect(),
        plan.nodes.iter().map(|nd| nd.kind).collect(),
        mass,
        rows,
        fric_rows,
    );
    if n > 0 {
        if let Err(s) = net.refactor() {
            let nodes: Vec<String> = s
                .nodes
                .iter()
                .map(|&i| plan.nodes[i].name.clone())
                .collect();
            // A node that is one flange joined to nothing is named after it (the connect
            // pass warned about it; the warning would not be seen behind this error).
            let unconnected = plan
                .warnings()
                .iter()
                .filter_map(|w| match w {
                    crate::warning::CompileWarning::UnconnectedFlange { block, port } => {
                        Some(format!("{block}.{port}"))
                    }
                    _ => None,
                })
                .filter(|f| nodes.contains(f))
                .collect();
            return Err(Error::SingularNetwork { nodes, unconnected });
        }
    }
    Ok(net)
}

/// Sum the mass properties of every rigid body from its blocks' declarations and fill the
/// bodies' part of `x0` (from the first block that gives initial states). A body without
/// mass or with a non-positive moment of inertia is an error naming it.
fn build_frames(plan: &Plan, decls: &[BlockDecl], x0: &mut [f64]) -> Result<Vec<MassProps>, Error> {
    let nf = plan.frames.len();
    let mut props = vec![
        MassProps {
            mass: 0.0,
            inertia: [0.0; 3],
            gravity: crate::frame::STANDARD_GRAVITY,
        };
        nf
    ];
    let mut given = vec![false; nf];
    let mut given_gravity = vec![false; nf];
    for (b, blk) in decls.iter().enumerate() {
        let bp = &plan.blocks[b];
        for d in &blk.mech.bodies {
            let f = plan.port_dof[bp.port_tab.start + d.port] as usize;
            props[f].mass += d.mass;
            for a in 0..3 {
                props[f].inertia[a] += d.inertia[a];
            }
            if let (Some(g), false) = (d.gravity, given_gravity[f]) {
                props[f].gravity = g;
                given_gravity[f] = true;
            }
            if let (Some(init), false) = (&d.initial, given[f]) {
                let s = plan.frames_x.start + f * FRAME_STATES;
                x0[s..s + FRAME_STATES].copy_from_slice(init);
                given[f] = true;
            }
        }
    }
    let mut errors = Vec::new();
    for (f, p) in props.iter().enumerate() {
        let massive = p.mass > 0.0 && p.inertia.iter().all(|&i| i > 0.0);
        if !massive {
            errors.push(Error::FrameWithoutMass {
                frame: plan.frames[f].clone(),
            });
        } else if !given[f] {
            // A body nobody placed starts at the origin, level, at rest.
            x0[plan.frames_x.start + f * FRAME_STATES + 3] = 1.0;
        }
    }
    Error::from_list(errors)?;
    Ok(props)
}

/// Node speeds that blocks derive from the rigid bodies' initial states
/// ([`Block::initial_speeds`]), and the blocks' warnings about their starting poses
/// ([`Block::start_warning`]), each naming its block.
fn initial_speeds_from_frames(
    plan: &Plan,
    blocks: &[Box<dyn Block>],
    x0: &mut [f64],
) -> Vec<String> {
    let n = plan.nodes.len();
    let mut sig = vec![0.0; plan.n_signals];
    for &(s, v) in &plan.slot_defaults {
        sig[s.ix()] = v;
    }
    let acc = vec![0.0; n];
    let frame_acc = vec![0.0; FRAME_LOADS * plan.frames.len()];
    let lam_rows = vec![0.0; plan.rows.len()];
    let taus = vec![0.0; plan.joints.len()];
    let modes = vec![FrictionMode::Free; plan.joints.len()];
    let frame_states = crate::frame::FrameState::all(&x0[plan.frames_x.clone()]);
    let mut set = Vec::new();
    let mut warnings = Vec::new();
    for (b, blk) in blocks.iter().enumerate() {
        let buf = crate::block::Buffers {
            sig: &sig,
            in_slots: &plan.in_slots,
            port_dof: &plan.port_dof,
            pos: &x0[..n],
            vel: &x0[n..2 * n],
            acc: &acc,
            row_lambda: &lam_rows,
            joint_tau: &taus,
            modes: &modes,
            frames: &x0[plan.frames_x.clone()],
            frame_states: &frame_states,
            frame_acc: &frame_acc,
            // Initial speeds come from poses only (no thermal network exists yet).
            temp: &[],
        };
        let tab = plan.block_tables(BlockIx::at(b));
        let cx = crate::block::Cx::new(0.0, &x0[plan.blocks[b].x.clone()], &buf, tab);
        for (p, w) in blk.initial_speeds(&cx) {
            set.push((plan.port_dof[plan.blocks[b].port_tab.start + p] as usize, w));
        }
        if let Some(w) = blk.start_warning(&cx) {
            warnings.push(format!(
                "{} '{}': {w}",
                plan.blocks[b].type_name, plan.blocks[b].name
            ));
        }
    }
    for (node, w) in set {
        x0[n + node] = w;
    }
    warnings
}

impl Model {
    /// A run instance of `plan` with `blocks` (built from the plan's diagram, possibly with
    /// other parameter values: their structure must match the plan's).
    pub fn instantiate(plan: Arc<Plan>, mut blocks: Vec<Box<dyn Block>>) -> Result<Model, Error> {
        attach_roads(&plan.roads, &mut blocks, &|b| plan.blocks[b].name.clone())?;
        let decls: Vec<BlockDecl> = blocks.iter().map(|b| b.declare()).collect();
        Model::instantiate_declared(plan, blocks, decls)
    }

    /// [`Model::instantiate`] with `blocks` whose road data is attached already and their
    /// declarations `decls` (as `compile` has them).
    pub(crate) fn instantiate_declared(
        plan: Arc<Plan>,
        blocks: Vec<Box<dyn Block>>,
        decls: Vec<BlockDecl>,
    ) -> Result<Model, Error> {
        let mut x0 = vec![0.0; plan.n_states];
        let mut net = build_network(&plan, &decls, &mut x0)?;
        net.set_load_joints(
            &plan
                .load_joints
                .iter()
                .map(|l| l.joint.ix())
                .collect::<Vec<_>>(),
        );
        let frames = build_frames(&plan, &decls, &mut x0)?;
        let nf = frames.len();
        let heat = heat::Heat::build(&plan, &decls, &mut x0)?;
        let load = load::LoadScratch::new(&plan);
        for (b, blk) in blocks.iter().enumerate() {
            blk.initial_states(&mut x0[plan.blocks[b].x.clone()]);
        }
        let start_warnings = if nf > 0 {
            initial_speeds_from_frames(&plan, &blocks, &mut x0)
        } else {
            Vec::new()
        };
        let lin = LinKernel::build(&plan, &decls);
        let mut sig = AlignedBuf::zeros(plan.n_signals);
        for &(s, v) in &plan.slot_defaults {
            sig[s.ix()] = v;
        }
        let max_y = plan.blocks.iter().map(|b| b.y.len()).max().unwrap_or(0);
        let nj = plan.joints.len();
        let result = plan.empty_result();
        let n_log = result.names.len();
        let guard_prog = GuardProgram::new(&plan, &decls);
        let kernels: Vec<[Option<crate::block::Kernel>; 2]> = blocks
            .iter()
            .map(|b| [b.kernel(false), b.kernel(true)])
            .collect();
        let (all, rhs, shown, constants) = {
            let fuse = program::fuse(&plan, &kernels);
            (
                Program::new(&plan.rt, &plan.stages, &plan.taps, &fuse),
                Program::new(&plan.rt, lin.derivative_stages(), &plan.taps, &fuse),
                Program::new(&plan.rt, lin.output_stages(), &plan.taps, &fuse),
                Program::of_blocks(&plan.rt, &plan.const_blocks, &fuse),
            )
        };
        Ok(Model {
            ev: Eval {
                sig,
                // Also scratch for a tap group's variables (at most every tap).
                ybuf: vec![0.0; max_y.max(plan.taps.len())],
                sig_unchecked: true,
                held_g: vec![0.0; guard_prog.held_slots.len()],
                held_g_valid: false,
                joint_tau: vec![0.0; nj],
                joint_kin: vec![0.0; nj],
                joint_wrel: vec![0.0; nj],
                released_at: vec![f64::NEG_INFINITY; nj],
                block_power: vec![0.0; blocks.len()],
                block_loss: vec![0.0; blocks.len()],
                targets: vec![0.0; plan.rows.len()],
                failure: None,
                frame_load: vec![0.0; FRAME_LOADS * nf],
                frame_acc: vec![0.0; FRAME_LOADS * nf],
                frame_dx: vec![0.0; FRAME_STATES * nf],
                frame_states: vec![crate::frame::FrameState::default(); nf],
                pending: Vec::new(),
                reach: vec![None; plan.blocks.len()],
            },
            cache: Cache {
                t: f64::NAN,
                x: AlignedBuf::zeros(plan.n_states),
                valid: false,
                has_x: false,
                current: false,
            },
            run: Run {
                result,
                row_buf: vec![0.0; n_log],
                impact_loss: 0.0,
                stopped_by: None,
                last_x: x0.clone(),
                first_x: x0.clone(),
                stored_start: Vec::new(),
                stored_jumps: vec![0.0; blocks.len()],
                next_te: vec![f64::INFINITY; blocks.len()],
                next_te_min: f64::INFINITY,
                model_evals: 0,
                output_points: 0,
                max_output_values: u64::MAX,
                max_rows: u64::MAX,
                failure: None,
            },
            x0,
            net,
            frames,
            progs: Some(Box::new(Programs {
                plan: plan.clone(),
                all,
                rhs,
                shown,
                constants,
                guards: guard_prog,
                tracking: plan
                    .rows
                    .iter()
                    .enumerate()
                    .filter_map(|(i, r)| Some((i as u32, r.tracking?)))
                    .collect(),
                forces: program::Call::list(&plan.rt, &plan.force_blocks),
                states: program::Call::list(&plan.rt, &plan.state_blocks),
                energy: program::EnergyProgram::new(&plan),
                log: program::LogProgram::new(&plan),
                output_states: demand::output_states(&plan, lin.shown_state_reads()),
                shown_slots: lin.shown_slots(&plan),
            })),
            lin,
            blocks,
            decls,
            plan,
            dirty_factor: true,
            progress: None,
            cancel: None,
            heat,
            load,
            start_warnings,
            stepping: None,
            inputs_set: false,
            snap: snapshot::SnapHooks::default(),
        })
    }

    /// The blocks' warnings about their starting poses, each naming its block (a wheel
    /// whose mount starts below the ground): problems the run would hide, not errors.
    pub fn start_warnings(&self) -> &[String] {
        &self.start_warnings
    }

    /// Refuse settings that would exhaust the machine before running: an output grid of
    /// more than `max_output_points` points (or `max_output_values` values with the logged
    /// variables), an implicit method on more states than its dense matrices allow, a
    /// `max_step` forcing more than `max_steps` steps, blocks whose sample times produce
    /// more than `max_time_events` time events.
    /// Each error names the setting or block parameter and the number it would produce.
    pub fn check_settings(&self, s: &Settings) -> Result<(), Error> {
        // Times as the results write numbers (`1e-300`, never 300 digits): they echo
        // what the user gave, however extreme.
        use crate::number::Num;
        let span = s.stop_time - s.start_time;
        let span_text = Num(span);
        let mut errors = Vec::new();
        let limit = |path: &str, message: String| Error::Netlist {
            file: self.plan.name.clone(),
            path: path.to_string(),
            message,
        };
        if let Some(p) = s.estimated_output_points() {
            if p.is_nan() || p > s.max_output_points as f64 {
                errors.push(limit(
                    "solver.output_interval",
                    format!(
                        "an output every {} s over {span_text} s is {p:.3e} points, more than solver.max_output_points = {} (raise it to allow this)",
                        Num(s.output_grid().unwrap_or(f64::NAN)),
                        s.max_output_points
                    ),
                ));
            }
        }
        let columns = self.plan.log.len() + 1;
        if let Some(values) = s.estimated_output_points().map(|p| p * columns as f64) {
            if values > s.max_output_values as f64 {
                errors.push(limit(
                    "solver.max_output_values",
                    format!(
                        "an output every {} s over {span_text} s with {columns} columns (time and \
                         {} logged variables) is {values:.3e} values, more than \
                         solver.max_output_values = {} (the results are held in memory: \
                         {:.1} GB); choose a coarser output_interval, log fewer variables, or \
                         raise it",
                        Num(s.output_grid().unwrap_or(f64::NAN)),
                        columns - 1,
                        s.max_output_values,
                        values * 8.0 / 1e9
                    ),
                ));
            }
        }
        if let Some(message) = s.method.state_limit_error(self.plan.n_states) {
            errors.push(limit("solver.method", message));
        }
        if let Some(n) = s.estimated_min_steps() {
            if n.is_nan() || n > s.max_steps as f64 {
                errors.push(limit(
                    "solver.max_step",
                    format!(
                        "a step of at most {} s over {span_text} s needs {n:.3e} steps, more than solver.max_steps = {} (raise it to allow this)",
                        Num(match s.method {
                            drivelink_solver::Method::Rk4 { step } => step.min(s.max_step),
                            _ => s.max_step,
                        }),
                        s.max_steps
                    ),
                ));
            }
        }
        for (b, blk) in self.decls.iter().enumerate() {
            if let Some((ts, param)) = blk.time_event_period {
                let n = span / ts;
                if n.is_nan() || n > s.max_time_events as f64 {
                    errors.push(Error::Param(crate::error::ParamError {
                        block: self.plan.blocks[b].name.clone(),
                        param: param.to_string(),
                        message: format!(
                            "= {} s gives {n:.3e} time events over {span_text} s, more than solver.max_time_events = {} (raise it to allow this)",
                            Num(ts),
                            s.max_time_events
                        ),
                    }));
                }
            }
        }
        Error::from_list(errors)
    }

    /// The model name.
    pub fn name(&self) -> &str {
        &self.plan.name
    }
    /// The execution plan.
    pub fn plan(&self) -> &Arc<Plan> {
        &self.plan
    }
    /// What an evaluation for the solver's derivatives only leaves out: (block output
    /// stages, linear output rows) whose values the derivatives do not depend on (they
    /// feed only guards, event-time blocks, logs or scopes, which full evaluations serve).
    pub fn skipped_for_derivatives(&self) -> (usize, usize) {
        self.lin.skipped_for_derivatives()
    }
    /// What an evaluation at an output point leaves out: (block output stages, linear
    /// output rows) that neither a logged variable (a scope's signal is logged) nor the
    /// derivatives depend on.
    pub fn skipped_at_outputs(&self) -> (usize, usize) {
        self.lin.skipped_at_outputs()
    }
    /// The settings `run()` uses.
    pub fn settings(&self) -> &Settings {
        &self.plan.settings
    }
    /// The initial state vector.
    pub fn initial_state(&self) -> &[f64] {
        &self.x0
    }
    /// Names of all loggable variables.
    pub fn variable_names(&self) -> impl Iterator<Item = &str> {
        self.plan.vars.iter().map(|v| v.name.as_str())
    }
    /// Flat block names, in plan order.
    pub fn block_names(&self) -> impl Iterator<Item = &str> {
        self.plan.blocks.iter().map(|b| b.name.as_str())
    }
    /// Index of the block named `name`.
    pub fn block_index(&self, name: &str) -> Option<BlockIx> {
        self.plan
            .blocks
            .iter()
            .position(|b| b.name == name)
            .map(BlockIx::at)
    }
    /// Number of mechanical nodes.
    pub fn n_nodes(&self) -> usize {
        self.plan.nodes.len()
    }
    /// Names of the mechanical nodes.
    pub fn node_names(&self) -> impl Iterator<Item = &str> {
        self.plan.nodes.iter().map(|n| n.name.as_str())
    }
    /// Current friction modes, by joint name.
    pub fn friction_modes(&self) -> impl Iterator<Item = (&str, FrictionMode)> {
        self.plan
            .joints
            .iter()
            .zip(&self.net.modes)
            .map(|(j, m)| (j.name.as_str(), *m))
    }

    /// Call `f(t)` at every output point (for progress bars).
    pub fn set_progress(&mut self, f: Box<dyn FnMut(f64) + Send>) {
        self.progress = Some(f);
    }

    /// End a run as failed ("interrupted", results up to the last step kept) once `flag`
    /// is set, for example by a thread watching for Ctrl-C. The flag is read after every
    /// step and event.
    pub fn set_cancel(&mut self, flag: Arc<AtomicBool>) {
        self.cancel = Some(flag);
    }

    /// Run the model with its settings.
    pub fn run(&mut self) -> SimResult {
        let settings = self.plan.settings.clone();
        self.run_with(&settings)
    }

    /// Run with explicit settings. Always returns a result; a failed run has status
    /// `Failed`, the error in `message`, and the samples up to the failure.
    pub fn run_with(&mut self, settings: &Settings) -> SimResult {
        if let Some(r) = self.refused(settings) {
            return r;
        }
        self.start_run(settings.start_time, settings.max_output_values);
        // Aligned: every stage of the step kernels streams the state.
        let x = AlignedBuf::from_slice(&self.x0);
        self.integrate_from(x, settings)
    }

    /// The failed result of settings the model refuses (`None`: they are fine).
    fn refused(&self, settings: &Settings) -> Option<SimResult> {
        let e = self.check_settings(settings).err()?;
        let mut r = self.plan.empty_result();
        r.status = RunStatus::Failed;
        r.end_time = settings.start_time;
        r.message = e.to_string();
        Some(r)
    }

    /// Integrate from `x` with `settings` (the run state already set up) and gather the
    /// result.
    fn integrate_from(&mut self, mut x: AlignedBuf, settings: &Settings) -> SimResult {
        self.run.result.reserve_rows(reserved_rows(settings));
        self.refresh_constants(settings.start_time, &x);
        let start = Instant::now();
        let out = integrate(self, &mut x, settings);
        let wall = start.elapsed().as_secs_f64();
        self.run.last_x.copy_from_slice(&x);
        let mut res = std::mem::replace(&mut self.run.result, SimResult::new("", vec![]));
        res.wall_time_s = wall;
        let (stats, end_time) = match &out {
            Ok(o) => (o.stats, o.end_time),
            Err(f) => (f.stats, f.end_time),
        };
        res.stats = RunStats {
            steps: stats.steps,
            rejected_steps: stats.rejected_steps,
            rhs_evals: stats.rhs_evals,
            guard_evals: stats.guard_evals,
            output_points: stats.output_points,
            events: stats.events,
            model_evals: self.run.model_evals,
            jacobian_evals: stats.jacobian_evals,
            jacobian_rhs_evals: stats.jacobian_rhs_evals,
            lu_decompositions: stats.lu_decompositions,
            newton_iterations: stats.newton_iterations,
        };
        let switches = match &out {
            Ok(o) => &o.switches,
            Err(f) => &f.switches,
        };
        res.method_switches = switches
            .iter()
            .map(|s| crate::result::MethodSwitch {
                time: s.t,
                from: s.from.name().to_string(),
                to: s.to.name().to_string(),
            })
            .collect();
        res.end_time = end_time;
        match out {
            Ok(o) => {
                res.status = match o.status {
                    Status::Completed => RunStatus::Completed,
                    Status::Stopped => RunStatus::Stopped,
                };
                res.message = match o.status {
                    Status::Completed => format!("completed at t = {} s", o.end_time),
                    Status::Stopped => format!(
                        "stopped by '{}' at t = {} s",
                        self.run.stopped_by.clone().unwrap_or_default(),
                        o.end_time
                    ),
                };
            }
            Err(f) => {
                res.status = RunStatus::Failed;
                res.message = self.explain_at(&f.error, end_time, &x);
            }
        }
        res
    }

    /// Reset the run state and every block for a run starting at `t0` that may record
    /// `max_output_values` values.
    fn start_run(&mut self, t0: f64, max_output_values: u64) {
        self.run.result = self.plan.empty_result();
        self.run.first_x.copy_from_slice(&self.x0);
        self.run.impact_loss = 0.0;
        self.run.stored_start.clear();
        self.run.stored_jumps.fill(0.0);
        self.run.stopped_by = None;
        self.run.model_evals = 0;
        self.run.output_points = 0;
        self.run.max_output_values = max_output_values;
        self.run.max_rows = max_output_values / (self.run.row_buf.len() as u64 + 1);
        self.ev.sig_unchecked = true;
        self.run.failure = None;
        let free = vec![FrictionMode::Free; self.net.modes.len()];
        self.net.set_modes(&free);
        self.ev.released_at.fill(f64::NEG_INFINITY);
        self.dirty_factor = true;
        self.cache.valid = false;
        for b in self.blocks.iter_mut() {
            b.reset(t0);
        }
        for (b, blk) in self.blocks.iter().enumerate() {
            self.run.next_te[b] = blk.next_time_event(t0 - 1e-300);
        }
        self.run.update_next_te_min();
    }

    /// A solver error as the message users see, with the block behind a state index.
    pub(super) fn explain(&self, e: &drivelink_solver::SolverError) -> String {
        match e.state_index() {
            Some(i) => e.message_naming(&self.state_owner(i)),
            None => e.to_string(),
        }
    }

    /// What state `i` is ("state 2 of block 'tf3'", "speed of node 'J1.flange'").
    pub fn state_owner(&self, i: usize) -> String {
        let plan = &self.plan;
        let n = plan.nodes.len();
        if i < n {
            return format!("position of the shaft at '{}'", plan.nodes[i].name);
        }
        if i < 2 * n {
            return format!("speed of the shaft at '{}'", plan.nodes[i - n].name);
        }
        if let Some(b) = plan.blocks.iter().find(|b| b.x.contains(&i)) {
            return format!("state {} of block '{}'", i - b.x.start + 1, b.name);
        }
        if plan.frames_x.contains(&i) {
            let k = i - plan.frames_x.start;
            const NAMES: [&str; FRAME_STATES] = [
                "x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "p", "q", "r",
            ];
            return format!(
                "state {} of the rigid body at '{}'",
                NAMES[k % FRAME_STATES],
                plan.frames[k / FRAME_STATES]
            );
        }
        if let Some(b) = plan
            .blocks
            .iter()
            .find(|b| b.energy.map(|e| e.ix()) == Some(i))
        {
            return format!("work integral of block '{}'", b.name);
        }
        if let Some(b) = plan
            .blocks
            .iter()
            .find(|b| b.internal_loss.map(|e| e.ix()) == Some(i))
        {
            return format!("internal loss integral of block '{}'", b.name);
        }
        if i >= plan.x_joint_energy && i < plan.x_joint_energy + plan.joints.len() {
            return format!(
                "friction work integral of '{}'",
                plan.joints[i - plan.x_joint_energy].name
            );
        }
        for nd in &plan.thermal.nodes {
            match nd.kind {
                crate::thermal::HeatNodeKind::Capacitive { state } if state.ix() == i => {
                    return format!("temperature of the thermal node at '{}'", nd.name)
                }
                crate::thermal::HeatNodeKind::Fixed { slot }
                    if plan.thermal.x_fixed + slot == i =>
                {
                    return format!("heat into the fixed temperature at '{}'", nd.name)
                }
                _ => {}
            }
        }
        format!("state {i}")
    }
}

/// Rows a run reserves in its result before it starts: the output grid's points and an
/// eighth more for the event instants' pairs, at most [`MAX_RESERVED_ROWS`] (a longer run
/// grows its columns as it goes).
fn reserved_rows(settings: &Settings) -> usize {
    let grid = settings.estimated_output_points().unwrap_or(0.0);
    (grid * 1.125 + 64.0).min(MAX_RESERVED_ROWS as f64) as usize
}

/// The most rows reserved up front (a few MB for a few dozen logged variables).
const MAX_RESERVED_ROWS: usize = 1 << 16;

impl HybridSystem for Model {
    fn n_states(&self) -> usize {
        self.plan.n_states
    }
    fn n_guards(&self) -> usize {
        self.plan.n_block_guards + 3 * self.plan.joints.len()
    }
    fn derivatives(&mut self, t: f64, x: &[f64], dx: &mut [f64]) {
        self.derivs(t, x, dx, false);
    }
    fn derivatives_step_end(&mut self, t: f64, x: &[f64], dx: &mut [f64]) {
        self.derivs(t, x, dx, true);
    }
    fn guards(&mut self, t: f64, x: &[f64], g: &mut [f64]) {
        self.all_guards(t, x, g);
    }
    fn next_time_event(&self, t: f64) -> f64 {
        if self.run.next_te_min > t {
            return self.run.next_te_min;
        }
        self.run
            .next_te
            .iter()
            .copied()
            .filter(|&te| te > t)
            .fold(f64::INFINITY, f64::min)
    }
    fn handle_event(
        &mut self,
        t: f64,
        x: &mut [f64],
        cause: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        if self.snap.resuming && cause.kind == drivelink_solver::EventKind::Initial {
            // A stepped run restarted from a restored state (`snapshot.rs`).
            let cause = EventCause {
                kind: drivelink_solver::EventKind::External,
                guards: cause.guards,
            };
            return self.handle(t, x, cause);
        }
        self.handle(t, x, cause)
    }
    fn guard_name(&self, i: usize) -> String {
        let plan = &self.plan;
        if i < plan.n_block_guards {
            if let Some((b, bp)) = plan
                .blocks
                .iter()
                .enumerate()
                .find(|(_, bp)| bp.guards.contains(&i))
            {
                return format!(
                    "{}.{}",
                    bp.name,
                    self.decls[b].guard_name(i - bp.guards.start)
                );
            }
            return format!("guard{i}");
        }
        let j = (i - plan.n_block_guards) / 3;
        let what = ["slip/torque-low", "torque-high", "engagement"][(i - plan.n_block_guards) % 3];
        format!("{}.{}", plan.joints[j].name, what)
    }
    fn output(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        // The left-hand point of an event is evaluated in full and kept: the handler
        // called next at the same point starts from that evaluation (`events.rs`).
        if kind == OutputKind::EventLeft {
            self.eval_cached(t, x);
        }
        self.record(t, x);
    }
    fn output_at_last_call(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        // The integrator's promise: `(t, x)` is the point of the call just made, whose
        // evaluation is kept (guards and step ends keep theirs), so the point is not
        // compared again.
        if self.cache.valid && self.cache.t.to_bits() == t.to_bits() {
            debug_assert!(
                !self.cache.has_x || self.kept_at(t, x),
                "output_at_last_call off the kept point"
            );
            self.record_kept(t, x);
        } else {
            self.output(t, x, kind);
        }
    }
    /// The states an evaluation at an output point and the logged variables read, when
    /// they are few (a long chain of linear blocks logging its end): the grid points
    /// interpolate only these.
    fn output_states(&self) -> Option<Vec<usize>> {
        self.programs().output_states.clone()
    }
    fn check(&mut self) -> Result<(), SystemError> {
        if self
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            return Err(SystemError {
                message: INTERRUPTED.into(),
            });
        }
        if self.run.output_points > self.run.max_rows {
            return Err(SystemError {
                message: format!(
                    "the results reached {} rows of {} columns, more than \
                     solver.max_output_values = {} values (they are held in memory); output \
                     on a coarser grid, log fewer variables, or raise it",
                    self.run.output_points,
                    self.run.row_buf.len() + 1,
                    self.run.max_output_values
                ),
            });
        }
        match self.run.failure.take() {
            Some(message) => Err(SystemError { message }),
            None => Ok(()),
        }
    }
    /// Dense, except for the columns of the quadrature states (the work integrals and
    /// heat totals, see `Model::quadrature_states`): no derivative reads them, so their columns of
    /// `∂(dx)/∂x` are exactly zero and the finite differences perturb them together with
    /// another column at no cost. The Jacobian is then the dense one to the last bit
    /// (every other column's quotient is computed from the same `f` values), and a
    /// Jacobian costs one evaluation per state that is read instead of one per state.
    /// Kept dense where the grouping would bring the cost to 3 evaluations or fewer from
    /// more (Radau5 then reuses Jacobians on a different rule): such small models keep
    /// their exact runs.
    fn jacobian_pattern(&self) -> Option<drivelink_solver::SparsityPattern> {
        let n = self.plan.n_states;
        let mut quad = vec![false; n];
        for i in self.quadrature_states() {
            quad[i] = true;
        }
        let read = quad.iter().filter(|&&q| !q).count();
        if read == n || (read <= 3 && n > 3) {
            return None;
        }
        let entries = (0..n)
            .filter(|&j| !quad[j])
            .flat_map(|j| (0..n).map(move |i| (i, j)));
        drivelink_solver::SparsityPattern::from_entries(n, entries).ok()
    }
}

impl Model {
    /// The states no evaluation reads (pure quadratures, written by `derivs` only): the
    /// work integrals of the force blocks and the joints, the heat into fixed
    /// temperatures and the injected heat. Blocks see their own states only (`Cx::x`),
    /// the network the node states, the thermal pass the capacitive temperatures.
    fn quadrature_states(&self) -> impl Iterator<Item = usize> + '_ {
        let plan = &*self.plan;
        let tp = &plan.thermal;
        let n_fixed = tp
            .nodes
            .iter()
            .filter(|nd| matches!(nd.kind, crate::thermal::HeatNodeKind::Fixed { .. }))
            .count();
        plan.blocks
            .iter()
            .flat_map(|bp| bp.energy.into_iter().chain(bp.internal_loss))
            .map(|e| e.ix())
            .chain(plan.x_joint_energy..plan.x_joint_energy + plan.joints.len())
            .chain(tp.x_fixed..tp.x_fixed + n_fixed)
            .chain(tp.x_injected.map(|s| s.ix()))
    }
}

/// Hand every road consumer the data of its line's provider (see
/// [`crate::block::PortKind::Road`]); `name(b)` is block `b`'s flat name for errors.
pub(crate) fn attach_roads(
    links: &[crate::plan::RoadLink],
    blocks: &mut [Box<dyn Block>],
    name: &dyn Fn(usize) -> String,
) -> Result<(), Error> {
    for l in links {
        let ((pb, pp), (cb, cp)) = (
            (l.provider.0.ix(), l.provider.1),
            (l.consumer.0.ix(), l.consumer.1),
        );
        let port_name = |b: usize, p: usize| {
            blocks[b]
                .declare()
                .ports
                .get(p)
                .map_or_else(String::new, |d| d.name.clone())
        };
        let Some(data) = blocks[pb].shared(pp) else {
            return Err(Error::RoadData {
                block: name(pb),
                port: port_name(pb, pp),
                message: "provides no road data".into(),
            });
        };
        let consumer_port = port_name(cb, cp);
        blocks[cb]
            .attach(cp, data)
            .map_err(|message| Error::RoadData {
                block: name(cb),
                port: consumer_port,
                message,
            })?;
    }
    Ok(())
}
