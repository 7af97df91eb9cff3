//! What an evaluation for derivatives only must compute.
//!
//! The solver's stage evaluations need the state derivatives and nothing else; signals
//! that only guards, event handlers, logs and scopes read can wait for the full
//! evaluations (step ends, guard samples, events, output points), which compute every
//! signal. This pass finds the signal slots a derivative evaluation reads, directly or
//! through the blocks and linear rows that produce them (a backward reachability over the
//! diagram), and from them the block output stages and linear output rows it must run.
//!
//! Read during a derivative evaluation (the seeds): every input of a block that takes part
//! in it outside its output stage (states, forces, friction joints, constraint rows, heat
//! flows or conductances, a work integral), the target slot of every tracking row, and the
//! signal terms of the linear derivative rows (after folding, see `linear.rs`). A block
//! that only has outputs (a sensor, a unit conversion, a relational operator feeding a
//! `StopSimulation`) is run only if something read needs one of its outputs, and then only
//! its inputs with direct feedthrough are needed (an ABS modulator's torque needs the
//! demand, not the wheel slip it samples at its cycle instants); a block whose outputs
//! change only at events (`constant_outputs`) is never run here anyway.
//!
//! The same analysis, seeded also with what the logged variables (and so the scopes, whose
//! signals are logged) read, gives what an evaluation at an output point must compute
//! ([`output_seeds`]): the logged signals, the inputs of a block whose custom variables are
//! logged, and everything the derivatives read (the network's forces and accelerations,
//! which node and friction variables show, depend on those). The signals nothing logged
//! depends on keep the values of the last full evaluation (a step end, a guard sample, an
//! event).

use crate::plan::{Plan, Stage, VarRef};

/// Who writes a signal slot.
#[derive(Debug, Clone, Copy)]
enum Producer {
    /// The output stage of a block outside the linear kernels.
    Block(usize),
    /// An output row of the linear kernel (its index).
    Row(usize),
    /// A block variable wired as a signal (`plan.taps[k]`).
    Tap(usize),
    /// A constant slot (an unconnected optional input) or a block at events only.
    None,
}

/// The result of the analysis.
#[derive(Debug, Clone, Default)]
pub(crate) struct Demand {
    /// By signal slot: read by the evaluation analysed (for derivatives, or at an output
    /// point).
    pub live: Vec<bool>,
    /// The plan's stages a derivative evaluation runs, in order (every `Linear` and
    /// `Network` stage; the block stages of blocks with a read output).
    pub stages: Vec<Stage>,
    /// Block output stages left out.
    pub skipped_blocks: usize,
}

/// Whether block `b` reads its inputs during a derivative evaluation outside its output
/// stage.
fn reads_inputs_continuously(plan: &Plan, b: usize) -> bool {
    let bp = &plan.blocks[b];
    let th = &plan.thermal;
    !bp.x.is_empty()
        || bp.has_forces
        || !bp.joints.is_empty()
        || !bp.rows.is_empty()
        || bp.energy.is_some()
        || th.heat_blocks.iter().any(|h| h.ix() == b)
        || th.conductors.iter().any(|c| c.block.ix() == b)
}

/// The signal slots the logged variables read besides the derivatives' (the extra seeds
/// of an output point's evaluation): a logged signal, and every input of a block whose
/// custom variables are logged (a block's `var` may read any of its inputs). Node, friction
/// and acceleration variables read the network's values, which the derivatives' seeds
/// already cover.
pub(crate) fn output_seeds(plan: &Plan) -> Vec<usize> {
    let mut seeds = Vec::new();
    for &v in &plan.log {
        match plan.vars[v].source {
            VarRef::Signal(s) => seeds.push(s.ix()),
            VarRef::Custom(b, _) => seeds.extend(
                plan.in_slots[plan.blocks[b.ix()].inputs.clone()]
                    .iter()
                    .map(|s| s.ix()),
            ),
            VarRef::NodeSpeed(_)
            | VarRef::NodePos(_)
            | VarRef::NodeAccel(_)
            | VarRef::Friction(..) => {}
        }
    }
    seeds
}

/// The states an output point reads ([`drivelink_solver::HybridSystem::output_states`]),
/// if few enough to interpolate apart (at most a quarter of them): every state except
/// those of the blocks evaluated by the linear kernels alone (no output stage, no
/// derivatives, forces or guards of their own, no logged custom variable), whose states
/// only the linear rows read; of those, the states `shown_reads` (read by the output rows
/// an output point computes) are read.
pub(crate) fn output_states(
    plan: &Plan,
    shown_reads: impl Iterator<Item = usize>,
) -> Option<Vec<usize>> {
    let mut kernel_only = vec![false; plan.blocks.len()];
    for r in plan.lin_out.iter().chain(&plan.lin_der) {
        kernel_only[r.block.ix()] = true;
    }
    for st in &plan.stages {
        if let Stage::Outputs(b) | Stage::NetworkOutputs(b) = st {
            kernel_only[b.ix()] = false;
        }
    }
    let own = plan
        .state_blocks
        .iter()
        .chain(&plan.guard_blocks)
        .chain(&plan.force_blocks)
        .chain(&plan.energy_blocks);
    for b in own {
        kernel_only[b.ix()] = false;
    }
    for &v in &plan.log {
        if let VarRef::Custom(b, _) = plan.vars[v].source {
            kernel_only[b.ix()] = false;
        }
    }
    let mut read = vec![true; plan.n_states];
    for (bp, _) in plan.blocks.iter().zip(&kernel_only).filter(|(_, &k)| k) {
        read[bp.x.clone()].fill(false);
    }
    for i in shown_reads {
        read[i] = true;
    }
    let idx: Vec<usize> = (0..plan.n_states).filter(|&i| read[i]).collect();
    (!idx.is_empty() && idx.len() * 4 <= plan.n_states).then_some(idx)
}

impl Demand {
    /// The signal slots an evaluation of this demand may write or reads (the outputs of
    /// every block it runs, every live slot), ascending.
    pub fn touched(&self, plan: &Plan) -> Vec<u32> {
        let mut t = self.live.clone();
        for st in &self.stages {
            if let Stage::Outputs(b) | Stage::NetworkOutputs(b) = st {
                t[plan.blocks[b.ix()].y.clone()].fill(true);
            }
        }
        (0..t.len()).filter(|&s| t[s]).map(|s| s as u32).collect()
    }
}

/// Analyse `plan`. `kernel[b]`: block `b` is evaluated by the linear kernels (its inputs
/// are read through the rows only); `feedthrough[p]`: input position `p` (an index into
/// `plan.in_slots`) feeds its block's outputs directly; `out_rows`: (slot written, slots
/// read) of each linear output row; `der_reads`: the slots the linear derivative rows read;
/// `extra`: further slots read (none for the derivatives, [`output_seeds`] at an output
/// point).
pub(crate) fn analyse(
    plan: &Plan,
    kernel: &[bool],
    feedthrough: &[bool],
    out_rows: &[(usize, Vec<usize>)],
    der_reads: impl Iterator<Item = usize>,
    extra: &[usize],
) -> Demand {
    let mut producer = vec![Producer::None; plan.n_signals];
    let staged: Vec<bool> = {
        let mut s = vec![false; plan.blocks.len()];
        for st in &plan.stages {
            if let Stage::Outputs(b) | Stage::NetworkOutputs(b) = st {
                s[b.ix()] = true;
            }
        }
        s
    };
    for (b, bp) in plan.blocks.iter().enumerate() {
        if staged[b] {
            for s in bp.y.clone() {
                producer[s] = Producer::Block(b);
            }
        }
    }
    for (r, (dst, _)) in out_rows.iter().enumerate() {
        producer[*dst] = Producer::Row(r);
    }
    for (k, tap) in plan.taps.iter().enumerate() {
        producer[tap.slot.ix()] = Producer::Tap(k);
    }
    let inputs = |b: usize| {
        plan.in_slots[plan.blocks[b].inputs.clone()]
            .iter()
            .map(|s| s.ix())
    };
    // The inputs a block's output stage reads: those with direct feedthrough (the others
    // act through the block's states or at events, as an ABS modulator's slip input).
    let stage_inputs = |b: usize| {
        let r = plan.blocks[b].inputs.clone();
        plan.in_slots[r.clone()]
            .iter()
            .zip(&feedthrough[r])
            .filter(|(_, &f)| f)
            .map(|(s, _)| s.ix())
    };
    let mut live = vec![false; plan.n_signals];
    let mut stack = Vec::new();
    let mark = |s: usize, live: &mut Vec<bool>, stack: &mut Vec<usize>| {
        if !live[s] {
            live[s] = true;
            stack.push(s);
        }
    };
    for (b, &in_kernel) in kernel.iter().enumerate() {
        if !in_kernel && reads_inputs_continuously(plan, b) {
            for s in inputs(b) {
                mark(s, &mut live, &mut stack);
            }
        }
    }
    for r in &plan.rows {
        if let Some(s) = r.tracking {
            mark(s.ix(), &mut live, &mut stack);
        }
    }
    for s in der_reads.chain(extra.iter().copied()) {
        mark(s, &mut live, &mut stack);
    }
    let mut run = vec![false; plan.blocks.len()];
    let mut tap_run = vec![false; plan.taps.len()];
    while let Some(s) = stack.pop() {
        match producer[s] {
            Producer::Block(b) if !run[b] => {
                run[b] = true;
                for i in stage_inputs(b) {
                    mark(i, &mut live, &mut stack);
                }
            }
            Producer::Row(r) => {
                for &i in &out_rows[r].1 {
                    mark(i, &mut live, &mut stack);
                }
            }
            // A variable may read any input of its block (unless it reads states only).
            Producer::Tap(k) if !tap_run[k] => {
                tap_run[k] = true;
                let tap = &plan.taps[k];
                if tap.reads != crate::block::VarReads::State {
                    for i in inputs(tap.block.ix()) {
                        mark(i, &mut live, &mut stack);
                    }
                }
            }
            _ => {}
        }
    }
    let stages: Vec<Stage> = plan
        .stages
        .iter()
        .filter(|st| match st {
            Stage::Outputs(b) | Stage::NetworkOutputs(b) => run[b.ix()],
            Stage::Tap(k) => tap_run[*k as usize],
            Stage::Linear(_) | Stage::Network => true,
        })
        .cloned()
        .collect();
    let skipped_blocks = (0..plan.blocks.len())
        .filter(|&b| staged[b] && !run[b])
        .count();
    Demand {
        live,
        stages,
        skipped_blocks,
    }
}
