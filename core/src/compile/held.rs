//! Pass 4b, held: the signals that change only at events.
//!
//! A block with [`Block::constant_outputs`] (a `Constant`, a `Step`, a held sample) is
//! evaluated after every event and never in between. So is a block whose outputs are a
//! function of its inputs and modes only ([`Block::pure_outputs`]: gains, sums, tables,
//! relational operators) when every input it reads is held: an unconnected optional input
//! (a constant slot) or an output of a held block. The schedule of a gear shift (`Step`s
//! into a `Sum` into `Lookup1D` tables) is then computed once per event, not once per
//! evaluation; the values are exactly those of the per-evaluation computation, because
//! nothing such a block reads changes between events.
//!
//! The pass marks those blocks `constant` (and takes them out of the linear kernels) and
//! returns every held block in an order where each comes after the blocks it reads: the
//! order in which the model refreshes them after an event.
//!
//! The same holds for guards: a guard block whose guards are a function of its inputs and
//! modes ([`Block::pure_guards`]) and whose inputs are all held has guards that change
//! only at events ([`held_guards`]). The guard pass evaluates them at the first sample
//! after an event and reuses the values until the next one (the full car's shift-schedule
//! tables and its stop).

use crate::block::{Block, PortKind};
use crate::ids::BlockIx;

use super::layout::Layout;

/// Whether block `b` may be held when its inputs are: pure outputs, nothing continuous.
fn may_hold(b: &dyn Block) -> bool {
    b.pure_outputs() && discrete_only(b)
}

/// No states, no mechanical or thermal part, signal ports only.
fn discrete_only(b: &dyn Block) -> bool {
    b.n_states() == 0
        && b.mech() == Default::default()
        && b.thermal() == Default::default()
        && b.ports()
            .iter()
            .all(|p| matches!(p.kind, PortKind::In | PortKind::Out))
}

/// The producer of a slot that is none: a constant slot.
const NONE: usize = usize::MAX;
/// The producer of a slot a variable wired as a signal writes: never held (a variable
/// follows the states).
const TAP: usize = usize::MAX - 1;

/// The producer of every signal slot ([`NONE`], [`TAP`] or a block).
fn producers(lay: &Layout) -> Vec<usize> {
    let mut producer = vec![NONE; lay.n_signals];
    for (b, bp) in lay.blocks.iter().enumerate() {
        for s in bp.y.clone() {
            producer[s] = b;
        }
    }
    for t in &lay.taps {
        producer[t.slot.ix()] = TAP;
    }
    producer
}

/// The guard blocks whose guards change only at events (after [`hold`]): pure guards
/// ([`Block::pure_guards`]), nothing continuous, and every input held. Their guards are
/// evaluated once after each event and reused at the samples in between.
pub(crate) fn held_guards(blocks: &[Box<dyn Block>], lay: &Layout) -> Vec<BlockIx> {
    let producer = producers(lay);
    (0..blocks.len())
        .filter(|&b| {
            let bp = &lay.blocks[b];
            !bp.guards.is_empty()
                && blocks[b].pure_guards()
                && discrete_only(blocks[b].as_ref())
                && lay.in_slots[bp.inputs.clone()]
                    .iter()
                    .all(|s| match producer[s.ix()] {
                        NONE => true,
                        TAP => false,
                        p => lay.blocks[p].constant,
                    })
        })
        .map(BlockIx::at)
        .collect()
}

/// Mark the blocks whose outputs change only at events as `constant` in `lay`; returns the
/// held blocks with outputs, each after the ones it reads.
pub(crate) fn hold(blocks: &[Box<dyn Block>], lay: &mut Layout) -> Vec<BlockIx> {
    let nb = blocks.len();
    let producer = producers(lay);
    let mut held: Vec<bool> = lay.blocks.iter().map(|bp| bp.constant).collect();
    let mut order: Vec<usize> = (0..nb).filter(|&b| held[b]).collect();
    let candidates: Vec<usize> = (0..nb)
        .filter(|&b| !held[b] && !lay.blocks[b].y.is_empty() && may_hold(blocks[b].as_ref()))
        .collect();
    // Each sweep holds the candidates whose inputs are all held by now, so a block joins
    // the order after its producers; a cycle of candidates never qualifies.
    loop {
        let mut grew = false;
        for &b in &candidates {
            if held[b] {
                continue;
            }
            let reads_held =
                lay.in_slots[lay.blocks[b].inputs.clone()]
                    .iter()
                    .all(|s| match producer[s.ix()] {
                        NONE => true,
                        TAP => false,
                        p => held[p],
                    });
            if reads_held {
                held[b] = true;
                order.push(b);
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    for &b in &order {
        let bp = &mut lay.blocks[b];
        bp.constant = true;
        bp.linear = false;
    }
    order
        .into_iter()
        .filter(|&b| !lay.blocks[b].y.is_empty())
        .map(BlockIx::at)
        .collect()
}
