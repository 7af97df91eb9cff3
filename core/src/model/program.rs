//! The evaluation program: a list of stages ([`Stage`]) laid out flat once, at
//! instantiation, for the evaluation loop.
//!
//! The plan's stages say *what* runs in which order; a [`Program`] says it in the form the
//! loop wants. Consecutive block stages become one [`Op::Blocks`] (they share one set of
//! buffers), each block call carries its packed offsets ([`BlockRt`]) so the loop does not
//! look them up, and each linear stage carries its index among the linear stages. So an
//! evaluation neither scans the stage list for the end of a run of blocks nor matches on
//! the stages' payloads.
//!
//! The other per-evaluation passes get the same treatment: the guard pass
//! ([`GuardProgram`]: guard blocks with their guard ranges, friction joints with their
//! blocks), the force and state calls ([`Call`] lists), the work integrals
//! ([`EnergyProgram`]) and the logged row ([`LogProgram`]). Everything here is a function
//! of the plan (and of the linear kernel's choice of stages for derivatives), built once
//! and read-only afterwards.

use crate::block::{BlockDecl, Kernel, Operand};
use crate::ids::BlockIx;
use crate::ids::SlotIx;
use crate::plan::{BlockRt, Plan, Stage, TapPlan, VarRef};

/// One step of an evaluation pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    /// The output rows of the `k`-th linear stage of the plan.
    Linear(u32),
    /// The mechanical network: forces, friction, tracking targets, solve.
    Network,
    /// The block calls `start..end` of [`Program::calls`], in order.
    Blocks(u32, u32),
    /// The variable wired as a signal `plan.taps[k]`.
    Tap(u32),
    /// Block variables wired as signals, one `vars` call: [`Program::taps`]`[k]`.
    Taps(u32),
    /// The fused block outputs [`Program::fused`]`[k]`.
    Fused(u32),
}

/// Where a fused operation reads a value (a kernel's [`Operand`] resolved against the
/// plan).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Place {
    /// The signal of the input at position `i` of `plan.in_slots` (a position, not a
    /// slot: linearization reroutes inputs).
    Input(u32),
    /// The state `x[i]` (a node's position or speed).
    State(u32),
    /// The acceleration of node `i`.
    Accel(u32),
    /// The force of always-active row `i`.
    RowLambda(u32),
    /// The transmitted torque of friction joint `i`.
    JointTau(u32),
    /// Zero (a flange of an unconnected support: the ground).
    Zero,
}

/// One block's outputs as a fused operation (its [`Kernel`] resolved), writing the signal
/// slots from `y`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Fused {
    Read {
        y: u32,
        from: Vec<Place>,
    },
    Product {
        y: u32,
        terms: Vec<(bool, Place)>,
    },
    Ratio {
        y: u32,
        num: Place,
        den: Place,
        min: f64,
    },
}

impl Fused {
    /// `kernel` of the block whose offsets are `rt`, resolved against `plan`.
    fn new(plan: &Plan, rt: &BlockRt, kernel: &Kernel) -> Fused {
        let n = plan.nodes.len() as u32;
        let dof = |p: usize| plan.port_dof[rt.tab.ports.0 as usize + p];
        let place = |op: Operand| match op {
            Operand::Input(i) => Place::Input(rt.tab.inputs.0 + i as u32),
            Operand::Speed(p) if dof(p) < n => Place::State(n + dof(p)),
            Operand::Angle(p) if dof(p) < n => Place::State(dof(p)),
            Operand::Accel(p) if dof(p) < n => Place::Accel(dof(p)),
            Operand::Speed(_) | Operand::Angle(_) | Operand::Accel(_) => Place::Zero,
            Operand::Lambda(i) => {
                let nr = rt.tab.n_rows;
                match i as u32 {
                    i if i < nr => Place::RowLambda(rt.tab.rows_start + i),
                    i => Place::JointTau(rt.tab.joints_start + i - nr),
                }
            }
        };
        let y = rt.y.0;
        match kernel {
            Kernel::Read(ops) => Fused::Read {
                y,
                from: ops.iter().map(|&op| place(op)).collect(),
            },
            Kernel::Product(mul) => Fused::Product {
                y,
                terms: mul
                    .iter()
                    .enumerate()
                    .map(|(i, &m)| (m, place(Operand::Input(i))))
                    .collect(),
            },
            Kernel::Ratio { num, den, min } => Fused::Ratio {
                y,
                num: place(*num),
                den: place(*den),
                min: *min,
            },
        }
    }
}

/// What one block stage becomes in a program.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum BlockStage {
    /// A call of the block's method.
    Call,
    /// Nothing: the block's kernel for the stage writes no output.
    Nothing,
    /// A fused operation.
    Fused(Fused),
}

/// What block `b`'s outputs stage (`network` false) or network-outputs stage becomes.
pub(super) type Fuse<'a> = dyn Fn(BlockIx, bool) -> BlockStage + 'a;

/// The [`Fuse`] of `plan` for blocks whose kernels are `kernels` (by block:
/// `[outputs, network_outputs]`, see [`crate::block::Kernel`]).
pub(super) fn fuse<'a>(
    plan: &'a Plan,
    kernels: &'a [[Option<Kernel>; 2]],
) -> impl Fn(BlockIx, bool) -> BlockStage + 'a {
    move |b, network| match kernels
        .get(b.ix())
        .and_then(|k| k[usize::from(network)].as_ref())
    {
        None => BlockStage::Call,
        Some(k) if k.n_outputs() == 0 => BlockStage::Nothing,
        Some(k) => BlockStage::Fused(Fused::new(plan, &plan.rt[b.ix()], k)),
    }
}

/// One block's `outputs` (or `network_outputs`) call.
#[derive(Debug, Clone, Copy)]
pub(super) struct Call {
    /// The block.
    pub b: BlockIx,
    /// `network_outputs` rather than `outputs`.
    pub network: bool,
    /// The block's offsets in the flat buffers (a copy of `plan.rt[b]`).
    pub rt: BlockRt,
}

impl Call {
    /// One call per block of `blocks`, in order (`network` false): the force and state
    /// passes' lists.
    pub fn list(rt: &[BlockRt], blocks: &[BlockIx]) -> Vec<Call> {
        blocks
            .iter()
            .map(|&b| Call {
                b,
                network: false,
                rt: rt[b.ix()],
            })
            .collect()
    }
}

/// One guard block's `guards` call: the block, its offsets, its guards in the guard
/// vector.
#[derive(Debug, Clone, Copy)]
pub(super) struct GuardCall {
    pub b: BlockIx,
    pub rt: BlockRt,
    pub g: (u32, u32),
}

/// One friction joint's law: the block, the joint's index in it, the block's offsets, and
/// the position in `plan.in_slots` of the input its engagement is ([`NO_SLOT`]: none, the
/// block's `engagement` gives it).
#[derive(Debug, Clone, Copy)]
pub(super) struct JointCall {
    pub b: BlockIx,
    pub local: u32,
    pub rt: BlockRt,
    pub engagement: u32,
}

/// [`JointCall::engagement`] of a joint whose engagement is not a signal read in place.
pub(super) const NO_SLOT: u32 = u32::MAX;

/// The guard pass laid out flat: the guard blocks' calls (those evaluated at every sample,
/// and those whose guards change only at events), then the joints' laws.
#[derive(Debug, Clone, Default)]
pub(super) struct GuardProgram {
    pub blocks: Vec<GuardCall>,
    /// The guard blocks of `plan.held_guard_blocks`, evaluated once after each event.
    pub held: Vec<GuardCall>,
    /// The positions in the guard vector of the `held` blocks' guards, in order (where
    /// the kept values go).
    pub held_slots: Vec<u32>,
    pub joints: Vec<JointCall>,
}

impl GuardProgram {
    /// The guard pass of `plan` over its blocks, declared as `decls`.
    pub fn new(plan: &Plan, decls: &[BlockDecl]) -> GuardProgram {
        let call = |b: BlockIx| {
            let g = &plan.blocks[b.ix()].guards;
            GuardCall {
                b,
                rt: plan.rt[b.ix()],
                g: (g.start as u32, g.end as u32),
            }
        };
        let (held, blocks): (Vec<GuardCall>, Vec<GuardCall>) = plan
            .guard_blocks
            .iter()
            .map(|&b| call(b))
            .partition(|c| plan.held_guard_blocks.contains(&c.b));
        let held_slots = held.iter().flat_map(|c| c.g.0..c.g.1).collect();
        let joints = plan
            .joints
            .iter()
            .map(|jp| {
                let rt = plan.rt[jp.block.ix()];
                // Where in `plan.in_slots` the block's input `i` is, as `Cx::u(i)` reads it
                // (a position, not a slot: linearization reroutes inputs).
                let engagement = decls[jp.block.ix()]
                    .mech
                    .frictions
                    .get(jp.local)
                    .and_then(|f| f.engagement_input)
                    .map_or(NO_SLOT, |i| rt.tab.inputs.0 + i as u32);
                JointCall {
                    b: jp.block,
                    local: jp.local as u32,
                    rt,
                    engagement,
                }
            })
            .collect();
        GuardProgram {
            blocks,
            held,
            held_slots,
            joints,
        }
    }
}

/// The derivative of one block's work integral: the power of its forces (if it has any)
/// plus that of its tracking rows `rows` (a range of [`EnergyProgram::rows`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct EnergyTerm {
    pub state: u32,
    pub power_of: Option<BlockIx>,
    pub rows: (u32, u32),
    /// The state integrating the power the block dissipates inside itself.
    pub loss: Option<u32>,
}

/// The work integrals of the force blocks and tracking rows, laid out flat.
#[derive(Debug, Clone, Default)]
pub(super) struct EnergyProgram {
    pub terms: Vec<EnergyTerm>,
    /// The tracking rows of every term, in order.
    pub rows: Vec<u32>,
}

impl EnergyProgram {
    /// The work integrals of `plan`'s energy blocks.
    pub fn new(plan: &Plan) -> EnergyProgram {
        let mut p = EnergyProgram::default();
        for &b in &plan.energy_blocks {
            let bp = &plan.blocks[b.ix()];
            let Some(e) = bp.energy else {
                continue;
            };
            let start = p.rows.len() as u32;
            p.rows.extend(
                bp.rows
                    .clone()
                    .filter(|&r| plan.rows[r].tracking.is_some())
                    .map(|r| r as u32),
            );
            p.terms.push(EnergyTerm {
                state: e.ix() as u32,
                power_of: bp.has_forces.then_some(b),
                rows: (start, p.rows.len() as u32),
                loss: bp.internal_loss.map(|l| l.ix() as u32),
            });
        }
        p
    }
}

/// One step of recording a row of logged values (besides the signals and states, read
/// in place by [`LogProgram`]'s gather lists).
#[derive(Debug, Clone, Copy)]
pub(super) enum LogOp {
    /// A variable of a friction joint.
    Joint(u32, crate::block::FrictionVar),
    /// One value read from the model's buffers (an acceleration, an unconnected node).
    Value(VarRef),
    /// Block `b`'s custom variables `vars` (a range of [`LogProgram::vars`]) in one
    /// `Block::vars` call, into consecutive columns.
    Custom {
        b: BlockIx,
        rt: BlockRt,
        vars: (u32, u32),
    },
}

/// The logged variables laid out for recording: signals and node states are read in place
/// (the same values [`super::Model`]'s `var_value` gives), each kind in one list of
/// (column, source) so a row is a few gather loops rather than a dispatch per column;
/// consecutive custom variables of one block are one call.
#[derive(Debug, Clone, Default)]
pub(super) struct LogProgram {
    /// (column, signal slot).
    pub signals: Vec<(u32, u32)>,
    /// (column, state index).
    pub states: Vec<(u32, u32)>,
    /// (first column, operation) of the other variables ([`LogOp::Joint`],
    /// [`LogOp::Value`], [`LogOp::Custom`] writing consecutive columns).
    pub others: Vec<(u32, LogOp)>,
    /// The blocks' local indices of the custom variables, in column order.
    pub vars: Vec<usize>,
}

impl LogProgram {
    /// The recording program of `plan`'s log.
    pub fn new(plan: &Plan) -> LogProgram {
        let mut p = LogProgram::default();
        let n = plan.nodes.len();
        for (col, &v) in plan.log.iter().enumerate() {
            let col = col as u32;
            match plan.vars[v].source {
                VarRef::Custom(b, i) => {
                    let k = p.vars.len() as u32;
                    p.vars.push(i);
                    match p.others.last_mut() {
                        Some((c0, LogOp::Custom { b: last, vars, .. }))
                            if *last == b && vars.1 == k && *c0 + (k - vars.0) == col =>
                        {
                            vars.1 = k + 1
                        }
                        _ => p.others.push((
                            col,
                            LogOp::Custom {
                                b,
                                rt: plan.rt[b.ix()],
                                vars: (k, k + 1),
                            },
                        )),
                    }
                }
                VarRef::Signal(slot) => p.signals.push((col, slot.ix() as u32)),
                VarRef::NodeSpeed(k) if k.ix() < n => p.states.push((col, (n + k.ix()) as u32)),
                VarRef::NodePos(k) if k.ix() < n => p.states.push((col, k.ix() as u32)),
                VarRef::Friction(j, fv) => p.others.push((col, LogOp::Joint(j.ix() as u32, fv))),
                r => p.others.push((col, LogOp::Value(r))),
            }
        }
        p
    }
}

/// Stages laid out for the loop (see the module docs).
#[derive(Debug, Clone, Default)]
pub(super) struct Program {
    ops: Vec<Op>,
    calls: Vec<Call>,
    fused: Vec<Fused>,
    taps: Vec<TapGroup>,
}

/// Custom variables of one block wired as signals, consecutive in the stage order (an
/// anti-roll bar reads a wheel's contact point and normal, six of them): one
/// `Block::vars` call for all, which gives each the value a call of its own would.
#[derive(Debug, Clone)]
pub(super) struct TapGroup {
    pub b: BlockIx,
    pub rt: BlockRt,
    /// The block's variable indices.
    pub vars: Vec<usize>,
    /// The signal slot of each.
    pub slots: Vec<SlotIx>,
}

impl Program {
    /// The program of `stages` (the plan's, or a subset keeping every linear stage, as the
    /// evaluation for derivatives does: linear stages are numbered in the plan's order),
    /// with `rt` the plan's packed block offsets and `fuse` what each block stage becomes
    /// (see [`fuse`]).
    pub fn new(rt: &[BlockRt], stages: &[Stage], taps: &[TapPlan], fuse: &Fuse) -> Program {
        let mut p = Program::default();
        let mut lin = 0u32;
        for st in stages {
            match st {
                Stage::Linear(_) => {
                    p.ops.push(Op::Linear(lin));
                    lin += 1;
                }
                Stage::Network => p.ops.push(Op::Network),
                Stage::Outputs(b) => p.push_stage(rt, fuse, *b, false),
                Stage::NetworkOutputs(b) => p.push_stage(rt, fuse, *b, true),
                Stage::Tap(k) => p.push_tap(rt, taps, *k),
            }
        }
        p
    }

    /// Tap `k` of `taps`: a custom variable of the block whose custom variable was read
    /// just before joins it in a group; any other is read alone (a group of one costs
    /// more than the tap's own call).
    fn push_tap(&mut self, rt: &[BlockRt], taps: &[TapPlan], k: u32) {
        let tap = &taps[k as usize];
        let custom = |t: &TapPlan| match t.var {
            VarRef::Custom(b, i) => Some((b, i)),
            _ => None,
        };
        let Some((b, i)) = custom(tap) else {
            self.ops.push(Op::Tap(k));
            return;
        };
        let last = self.ops.len().checked_sub(1);
        match last.map(|l| (l, self.ops[l])) {
            Some((_, Op::Taps(g))) if self.taps[g as usize].b == b => {
                let g = &mut self.taps[g as usize];
                g.vars.push(i);
                g.slots.push(tap.slot);
            }
            Some((l, Op::Tap(k0))) => {
                let first = &taps[k0 as usize];
                match custom(first) {
                    Some((b0, i0)) if b0 == b => {
                        self.ops[l] = Op::Taps(self.taps.len() as u32);
                        self.taps.push(TapGroup {
                            b,
                            rt: rt[b.ix()],
                            vars: vec![i0, i],
                            slots: vec![first.slot, tap.slot],
                        });
                    }
                    _ => self.ops.push(Op::Tap(k)),
                }
            }
            _ => self.ops.push(Op::Tap(k)),
        }
    }

    /// The program of the `outputs` stages of `blocks` in order.
    pub fn of_blocks(rt: &[BlockRt], blocks: &[BlockIx], fuse: &Fuse) -> Program {
        let mut p = Program::default();
        for &b in blocks {
            p.push_stage(rt, fuse, b, false);
        }
        p
    }

    fn push_stage(&mut self, rt: &[BlockRt], fuse: &Fuse, b: BlockIx, network: bool) {
        match fuse(b, network) {
            BlockStage::Call => self.push_call(rt, b, network),
            BlockStage::Nothing => {}
            BlockStage::Fused(f) => {
                self.ops.push(Op::Fused(self.fused.len() as u32));
                self.fused.push(f);
            }
        }
    }

    fn push_call(&mut self, rt: &[BlockRt], b: BlockIx, network: bool) {
        let k = self.calls.len() as u32;
        self.calls.push(Call {
            b,
            network,
            rt: rt[b.ix()],
        });
        match self.ops.last_mut() {
            Some(Op::Blocks(_, end)) if *end == k => *end = k + 1,
            _ => self.ops.push(Op::Blocks(k, k + 1)),
        }
    }

    /// The steps, in order.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// The block calls `start..end`.
    pub fn calls(&self, start: u32, end: u32) -> &[Call] {
        &self.calls[start as usize..end as usize]
    }

    /// Fused operation `k`.
    pub fn fused(&self, k: u32) -> &Fused {
        &self.fused[k as usize]
    }

    /// Tap group `k`.
    pub fn taps(&self, k: u32) -> &TapGroup {
        &self.taps[k as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets(n: usize) -> Vec<BlockRt> {
        (0..n)
            .map(|i| BlockRt {
                y: (i as u32, i as u32 + 1),
                ..BlockRt::default()
            })
            .collect()
    }

    #[test]
    fn consecutive_block_stages_share_one_op_and_linear_stages_are_numbered_in_order() {
        let rt = offsets(4);
        let b = BlockIx::at;
        let stages = [
            Stage::Outputs(b(0)),
            Stage::Outputs(b(1)),
            Stage::Linear(0..2),
            Stage::Network,
            Stage::NetworkOutputs(b(2)),
            Stage::Outputs(b(3)),
            Stage::Linear(2..3),
        ];
        let p = Program::new(&rt, &stages, &[], &|_, _| BlockStage::Call);
        assert_eq!(
            p.ops(),
            &[
                Op::Blocks(0, 2),
                Op::Linear(0),
                Op::Network,
                Op::Blocks(2, 4),
                Op::Linear(1)
            ]
        );
        let calls = p.calls(2, 4);
        assert_eq!((calls[0].b, calls[0].network), (b(2), true));
        assert_eq!((calls[1].b, calls[1].network), (b(3), false));
        assert_eq!(calls[1].rt.y, (3, 4));
    }

    #[test]
    fn a_list_of_blocks_is_one_run_of_output_calls() {
        let rt = offsets(3);
        let p = Program::of_blocks(&rt, &[BlockIx::at(2), BlockIx::at(0)], &|_, _| {
            BlockStage::Call
        });
        assert_eq!(p.ops(), &[Op::Blocks(0, 2)]);
        assert!(p.calls(0, 2).iter().all(|c| !c.network));
        assert_eq!(p.calls(0, 2)[0].b, BlockIx::at(2));
        assert!(Program::of_blocks(&rt, &[], &|_, _| BlockStage::Call)
            .ops()
            .is_empty());
    }

    #[test]
    fn consecutive_variables_of_one_block_wired_as_signals_are_one_vars_call() {
        // Taps 0–2 read block 1's variables 8, 9, 11 (a wheel's contact point and
        // normal), tap 3 block 2's, tap 4 a node speed, tap 5 block 1's again: one group
        // for the first three, each of the others alone (a group of one is the tap's own
        // call).
        let rt = offsets(3);
        let b = BlockIx::at;
        let tap = |var: VarRef, slot: usize| TapPlan {
            name: String::new(),
            block: b(1),
            var,
            reads: crate::block::VarReads::State,
            slot: SlotIx::at(slot),
        };
        let taps = [
            tap(VarRef::Custom(b(1), 8), 10),
            tap(VarRef::Custom(b(1), 9), 11),
            tap(VarRef::Custom(b(1), 11), 12),
            tap(VarRef::Custom(b(2), 0), 13),
            tap(VarRef::NodeSpeed(crate::ids::NodeIx::at(0)), 14),
            tap(VarRef::Custom(b(1), 3), 15),
        ];
        let stages: Vec<Stage> = (0..6).map(Stage::Tap).collect();
        let p = Program::new(&rt, &stages, &taps, &|_, _| BlockStage::Call);
        assert_eq!(p.ops(), &[Op::Taps(0), Op::Tap(3), Op::Tap(4), Op::Tap(5)]);
        let g = p.taps(0);
        assert_eq!((g.b, g.vars.as_slice()), (b(1), &[8, 9, 11][..]));
        assert_eq!(g.slots, [SlotIx::at(10), SlotIx::at(11), SlotIx::at(12)]);
        assert_eq!(g.rt.y, (1, 2));
    }
}
