//! Pass 4b, held: the signals that change only at events.
//!
//! A block with [`Outputs::Constant`] (a `Constant`, a `Step`, a held sample) is
//! evaluated after every event and never in between. So is a block whose outputs are a
//! function of its inputs and modes only ([`Outputs::Pure`]: gains, sums, tables,
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
//! modes ([`BlockDecl::pure_guards`]) and whose inputs are all held has guards that change
//! only at events ([`held_guards`]). The guard pass evaluates them at the first sample
//! after an event and reuses the values until the next one (the full car's shift-schedule
//! tables and its stop).

use crate::block::{BlockDecl, Outputs, PortKind};
use crate::ids::BlockIx;

use super::layout::Layout;

/// Whether block `b` may be held when its inputs are: pure outputs, nothing continuous.
fn may_hold(b: &BlockDecl) -> bool {
    b.outputs == Outputs::Pure && discrete_only(b)
}

/// No states, no mechanical or thermal part, signal ports only.
fn discrete_only(b: &BlockDecl) -> bool {
    b.states == 0
        && b.mech == Default::default()
        && b.thermal == Default::default()
        && b.ports
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
/// ([`BlockDecl::pure_guards`]), nothing continuous, and every input held. Their guards are
/// evaluated once after each event and reused at the samples in between.
pub(crate) fn held_guards(decls: &[BlockDecl], lay: &Layout) -> Vec<BlockIx> {
    let producer = producers(lay);
    (0..decls.len())
        .filter(|&b| {
            let bp = &lay.blocks[b];
            !bp.guards.is_empty()
                && decls[b].pure_guards
                && discrete_only(&decls[b])
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
pub(crate) fn hold(decls: &[BlockDecl], lay: &mut Layout) -> Vec<BlockIx> {
    let nb = decls.len();
    let producer = producers(lay);
    let mut held: Vec<bool> = lay.blocks.iter().map(|bp| bp.constant).collect();
    let mut order: Vec<usize> = (0..nb).filter(|&b| held[b]).collect();
    let candidates: Vec<usize> = (0..nb)
        .filter(|&b| !held[b] && !lay.blocks[b].y.is_empty() && may_hold(&decls[b]))
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

#[cfg(test)]
mod tests {
    use super::super::fixture::{signal, Wired};
    use super::{held_guards, hold};
    use crate::block::{BlockDecl, Outputs};
    use crate::ids::BlockIx;

    fn constant() -> BlockDecl {
        BlockDecl {
            outputs: Outputs::Constant,
            ..signal(&[], &["y"])
        }
    }
    fn pure() -> BlockDecl {
        BlockDecl {
            outputs: Outputs::Pure,
            ..signal(&["u"], &["y"])
        }
    }

    #[test]
    fn a_pure_block_fed_only_by_a_constant_is_held_and_refreshed_after_it() {
        let w = Wired::new(
            vec![
                ("gain", pure()),
                ("c", constant()),
                ("reader", signal(&["u"], &["y"])),
            ],
            &[&["c.y", "gain.u"], &["gain.y", "reader.u"]],
        );
        let mut lay = w.layout();
        let order = hold(&w.decls, &mut lay);
        // The gain comes first in flat order but is refreshed after the constant it reads.
        assert_eq!(order, [BlockIx::at(w.ix("c")), BlockIx::at(w.ix("gain"))]);
        assert!(lay.blocks[w.ix("gain")].constant);
        assert!(!lay.blocks[w.ix("reader")].constant);
    }

    #[test]
    fn a_pure_block_fed_by_a_varying_signal_or_with_states_is_not_held() {
        let with_state = BlockDecl {
            states: 1,
            ..pure()
        };
        let w = Wired::new(
            vec![
                ("src", signal(&[], &["y"])),
                ("gain", pure()),
                ("c", constant()),
                ("integ", with_state),
            ],
            &[&["src.y", "gain.u"], &["c.y", "integ.u"]],
        );
        let mut lay = w.layout();
        assert_eq!(hold(&w.decls, &mut lay), [BlockIx::at(w.ix("c"))]);
        assert!(!lay.blocks[w.ix("gain")].constant);
        assert!(!lay.blocks[w.ix("integ")].constant);
    }

    #[test]
    fn pure_guards_fed_by_held_signals_are_evaluated_once_per_event() {
        let guard_block = || {
            BlockDecl {
                pure_guards: true,
                ..signal(&["u"], &[])
            }
            .with_guards(&["up"])
        };
        let w = Wired::new(
            vec![
                ("c", constant()),
                ("src", signal(&[], &["y"])),
                ("held", guard_block()),
                ("live", guard_block()),
            ],
            &[&["c.y", "held.u"], &["src.y", "live.u"]],
        );
        let mut lay = w.layout();
        hold(&w.decls, &mut lay);
        assert_eq!(held_guards(&w.decls, &lay), [BlockIx::at(w.ix("held"))]);
    }
}
