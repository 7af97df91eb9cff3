//! What a block's event call can change for the other blocks at the same instant.
//!
//! At a time event the due blocks' `time_event` calls run one after another, and each
//! reads its inputs (and flange motion) through its event view. A later call must see what
//! an earlier one changed, so the model used to evaluate after every call. It now
//! evaluates before a call only when a block that changed since the last evaluation
//! *reaches* it: its outputs feed the block's inputs, directly or through blocks with
//! direct feedthrough, blocks held between events, or the mechanical network (which every
//! mechanical, rigid-body and thermal block reads). Four ABS modulators sampling at the
//! same instant read their own wheels' slips, which no modulator's valve changes at that
//! instant: one evaluation serves all four calls instead of four.
//!
//! The same holds for the mode updates that follow at a time event: the evaluation after
//! the due blocks' calls is made before the first mode update one of them reaches, or
//! after the last of that round when none does. A drive cycle's breakpoint calls nothing
//! of its own but its mode update moves the segment before the driver reads it: the
//! evaluation after that mode change serves the time event call too (one evaluation
//! instead of two).

use crate::block::PortKind;
use crate::plan::Stage;

use super::Model;

impl Model {
    /// Whether a change of block `p` reaches what block `b`'s event call reads (computed
    /// once per block, at the first instant that asks).
    pub(super) fn reaches(&mut self, p: usize, b: usize) -> bool {
        if self.ev.reach[p].is_none() {
            self.ev.reach[p] = Some(self.reached_by(p));
        }
        self.ev.reach[p].as_ref().is_some_and(|r| r[b])
    }

    /// The first block (in the order of the event calls) whose event call a change of
    /// block `p` reaches.
    pub(super) fn first_reached(&mut self, p: usize) -> Option<usize> {
        if self.ev.reach[p].is_none() {
            self.ev.reach[p] = Some(self.reached_by(p));
        }
        self.ev.reach[p].as_ref()?.iter().position(|&r| r)
    }

    /// By block: whether a change of block `b` (its outputs or anything it feeds) can
    /// reach what that block's event call reads.
    pub(super) fn reached_by(&self, b: usize) -> Vec<bool> {
        let plan = &*self.plan;
        let nb = plan.blocks.len();
        let physical = |d: usize| {
            let bp = &plan.blocks[d];
            bp.has_forces
                || !bp.rows.is_empty()
                || !bp.joints.is_empty()
                || bp
                    .ports
                    .iter()
                    .any(|p| !matches!(p.kind, PortKind::In | PortKind::Out))
        };
        // Readers of every signal slot: (block, input index).
        let mut readers: Vec<Vec<(usize, usize)>> = vec![Vec::new(); plan.n_signals];
        for (d, bp) in plan.blocks.iter().enumerate() {
            for (i, s) in plan.in_slots[bp.inputs.clone()].iter().enumerate() {
                readers[s.ix()].push((d, i));
            }
        }
        let mut reached = vec![false; nb];
        let mut outputs_done = vec![false; nb];
        let mut network = false;
        let mut stack = vec![b];
        outputs_done[b] = true;
        // The slots of the variables of each block wired as signals: a change of the block
        // changes them like its outputs.
        let mut tap_slots: Vec<Vec<usize>> = vec![Vec::new(); nb];
        for t in &plan.taps {
            tap_slots[t.block.ix()].push(t.slot.ix());
        }
        while let Some(d) = stack.pop() {
            let slots = plan.blocks[d].y.clone().chain(tap_slots[d].iter().copied());
            for s in slots {
                for &(r, i) in &readers[s] {
                    reached[r] = true;
                    network |= physical(r);
                    let passes = plan.blocks[r].constant || self.decls[r].feedthrough.of(i);
                    if passes && !outputs_done[r] {
                        outputs_done[r] = true;
                        stack.push(r);
                    }
                }
            }
            if network && stack.is_empty() {
                // Everything the network computes: the blocks that read it and the outputs
                // computed after the solve.
                network = false;
                for (r, hit) in reached.iter_mut().enumerate() {
                    *hit |= physical(r);
                }
                // ... and the variables wired as signals, which read the network's results
                // or the bodies it moves.
                let after_net = plan.stages.iter().filter_map(|st| match st {
                    Stage::NetworkOutputs(r) => Some(r.ix()),
                    Stage::Tap(k) => Some(plan.taps[*k as usize].block.ix()),
                    _ => None,
                });
                for r in after_net {
                    if !outputs_done[r] {
                        outputs_done[r] = true;
                        stack.push(r);
                    }
                }
            }
        }
        reached
    }
}
