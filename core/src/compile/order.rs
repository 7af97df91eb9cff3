//! Pass 5, order: the evaluation stages in dependency order.
//!
//! Nodes of the dependency graph are block output evaluations, the mechanical network (one
//! node for all of it) and the network outputs of blocks that read accelerations or
//! constraint forces. An edge runs from a signal's source to every evaluation that reads
//! it directly (direct feedthrough), and to the network for inputs of mechanical blocks.
//! Blocks with constant outputs (evaluated only at events) and linear blocks without direct
//! feedthrough (outputs from states only: one kernel pass before everything) are not
//! ordered at all. The order is Kahn's algorithm that keeps linear blocks together where
//! the dependencies allow, so consecutive linear blocks become one kernel stage. A cycle
//! is an algebraic loop, reported with the blocks on it.
//!
//! A block variable wired as a signal (a tap) is a node of its own: after nothing when it
//! is a function of the states, after its block's input sources when it reads them, and
//! after the network and its block's outputs when it reads everything (an acceleration).
//! Feeding such a variable back into what it depends on is a loop like any other, named
//! by the variable (`car.ay`) and the blocks on it.

use std::collections::BTreeSet;

use petgraph::graph::{DiGraph, NodeIndex};

use crate::block::{BlockDecl, PortKind, VarReads};
use crate::error::Error;
use crate::ids::BlockIx;
use crate::plan::{LinRow, Stage, TapPlan};

use super::connect::{Src, Wiring};
use super::layout::Layout;

/// The ordered stages and the per-kind block lists.
pub(crate) struct Order {
    pub stages: Vec<Stage>,
    pub lin_out: Vec<LinRow>,
    pub lin_der: Vec<LinRow>,
    pub const_blocks: Vec<BlockIx>,
    pub state_blocks: Vec<BlockIx>,
    pub guard_blocks: Vec<BlockIx>,
    pub force_blocks: Vec<BlockIx>,
    pub energy_blocks: Vec<BlockIx>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Out(usize),
    Net,
    NetOut(usize),
    /// A block variable wired as a signal (`Layout::taps[k]`).
    Tap(usize),
}

/// Whether any input of a linear block feeds an output directly (a non-zero column of D).
fn linear_feedthrough(b: &BlockDecl) -> bool {
    b.linear
        .as_ref()
        .is_some_and(|l| l.d.iter().any(|&d| d != 0.0))
}

/// Build the dependency graph.
fn graph(decls: &[BlockDecl], lay: &Layout, w: &Wiring) -> DiGraph<Node, ()> {
    let nb = decls.len();
    let mut g: DiGraph<Node, ()> = DiGraph::new();
    let n_out = |b: usize| lay.blocks[b].y.len();
    let needs_net = |b: usize| (0..n_out(b)).any(|o| decls[b].output_needs_network(o));
    let unordered = |b: usize| {
        lay.blocks[b].constant || (lay.blocks[b].linear && !linear_feedthrough(&decls[b]))
    };
    let out: Vec<Option<NodeIndex>> = (0..nb)
        .map(|b| (n_out(b) > 0 && !unordered(b)).then(|| g.add_node(Node::Out(b))))
        .collect();
    let net = (!lay.nodes.is_empty() || !lay.frames.is_empty()).then(|| g.add_node(Node::Net));
    let post: Vec<Option<NodeIndex>> = (0..nb)
        .map(|b| needs_net(b).then(|| g.add_node(Node::NetOut(b))))
        .collect();
    let taps: Vec<NodeIndex> = (0..lay.taps.len())
        .map(|k| g.add_node(Node::Tap(k)))
        .collect();
    // The evaluation that writes what drives an input.
    let src_node = |src: Src| match src {
        Src::Port(at) => {
            let sb = at.block.ix();
            let o = w.ports[sb][..at.port]
                .iter()
                .filter(|d| d.kind == PortKind::Out)
                .count();
            if decls[sb].output_needs_network(o) {
                post[sb]
            } else {
                out[sb]
            }
        }
        Src::Tap(k) => Some(taps[k]),
    };
    // The evaluations that write block `b`'s inputs.
    let input_sources = |b: usize| {
        w.ports[b]
            .iter()
            .zip(&w.driver[b])
            .filter(|(decl, _)| decl.kind == PortKind::In)
            .map(|(_, d)| d.and_then(src_node))
            .collect::<Vec<_>>()
    };
    for b in 0..nb {
        if let Some(pn) = post[b] {
            if let Some(o) = out[b] {
                g.update_edge(o, pn, ());
            }
            if let Some(n) = net {
                g.update_edge(n, pn, ());
            }
        }
        let is_mech = w.ports[b].iter().any(|p| p.kind.is_mech());
        for (i, src) in input_sources(b).into_iter().enumerate() {
            let Some(src_node) = src else {
                continue;
            };
            if decls[b].feedthrough.of(i) {
                if let Some(o) = out[b] {
                    g.update_edge(src_node, o, ());
                }
                if let Some(pn) = post[b] {
                    g.update_edge(src_node, pn, ());
                }
            }
            if is_mech {
                if let Some(n) = net {
                    g.update_edge(src_node, n, ());
                }
            }
        }
    }
    // A variable wired as a signal comes after what it reads.
    for (k, tap) in lay.taps.iter().enumerate() {
        let b = tap.block.ix();
        let mut after: Vec<NodeIndex> = Vec::new();
        if tap.reads != VarReads::State {
            after.extend(input_sources(b).into_iter().flatten());
        }
        if tap.reads == VarReads::Everything {
            after.extend([net, out[b], post[b]].into_iter().flatten());
        }
        for n in after {
            g.update_edge(n, taps[k], ());
        }
    }
    g
}

/// The blocks on an algebraic loop of `g` (a strongly connected component with more than
/// one node, or a node feeding itself), by name.
fn loop_blocks(g: &DiGraph<Node, ()>, names: &[String], taps: &[TapPlan]) -> Vec<String> {
    let cyc = petgraph::algo::tarjan_scc(g)
        .into_iter()
        .find(|c| c.len() > 1 || g.contains_edge(c[0], c[0]))
        .unwrap_or_default();
    let mut on: Vec<String> = cyc
        .iter()
        .map(|&i| match g[i] {
            Node::Out(b) | Node::NetOut(b) => names[b].clone(),
            Node::Net => "<mechanical network>".to_string(),
            Node::Tap(k) => taps[k].name.clone(),
        })
        .collect();
    on.sort();
    on.dedup();
    on
}

/// Order the evaluation of `blocks`; `const_blocks` are the held blocks with outputs in
/// their refresh order (the `held` pass).
pub(crate) fn order(
    names: &[String],
    decls: &[BlockDecl],
    lay: &Layout,
    w: &Wiring,
    const_blocks: Vec<BlockIx>,
) -> Result<Order, Error> {
    let g = graph(decls, lay, w);
    let is_lin = |n: Node| matches!(n, Node::Out(b) if lay.blocks[b].linear);
    let mut indeg: Vec<usize> = g
        .node_indices()
        .map(|i| g.neighbors_directed(i, petgraph::Incoming).count())
        .collect();
    let mut ready: [BTreeSet<usize>; 2] = [BTreeSet::new(), BTreeSet::new()];
    for i in g.node_indices() {
        if indeg[i.index()] == 0 {
            ready[is_lin(g[i]) as usize].insert(i.index());
        }
    }
    let mut lin_out = Vec::new();
    // Linear blocks without feedthrough: one kernel stage first.
    for (b, bp) in lay.blocks.iter().enumerate() {
        if bp.linear && !linear_feedthrough(&decls[b]) {
            lin_out.extend((0..bp.y.len()).map(|k| LinRow {
                block: BlockIx::at(b),
                k,
            }));
        }
    }
    let mut stages = Vec::new();
    if !lin_out.is_empty() {
        stages.push(Stage::Linear(0..lin_out.len()));
    }
    let mut last_lin = false;
    let mut emitted = 0;
    loop {
        let pick = if !ready[last_lin as usize].is_empty() {
            last_lin
        } else if !ready[!last_lin as usize].is_empty() {
            !last_lin
        } else {
            break;
        };
        let i = ready[pick as usize].pop_first().unwrap_or_default();
        emitted += 1;
        let node = g[NodeIndex::new(i)];
        match node {
            Node::Out(b) if lay.blocks[b].linear => {
                let start = lin_out.len();
                lin_out.extend((0..lay.blocks[b].y.len()).map(|k| LinRow {
                    block: BlockIx::at(b),
                    k,
                }));
                match stages.last_mut() {
                    Some(Stage::Linear(r)) if last_lin && r.end == start => r.end = lin_out.len(),
                    _ => stages.push(Stage::Linear(start..lin_out.len())),
                }
            }
            Node::Out(b) => stages.push(Stage::Outputs(BlockIx::at(b))),
            Node::Net => stages.push(Stage::Network),
            Node::NetOut(b) => stages.push(Stage::NetworkOutputs(BlockIx::at(b))),
            Node::Tap(k) => stages.push(Stage::Tap(k as u32)),
        }
        last_lin = is_lin(node);
        for nb in g.neighbors_directed(NodeIndex::new(i), petgraph::Outgoing) {
            let d = &mut indeg[nb.index()];
            *d -= 1;
            if *d == 0 {
                ready[is_lin(g[nb]) as usize].insert(nb.index());
            }
        }
    }
    if emitted < g.node_count() {
        return Err(Error::AlgebraicLoop {
            blocks: loop_blocks(&g, names, &lay.taps),
        });
    }
    let pick = |f: &dyn Fn(usize) -> bool| -> Vec<BlockIx> {
        (0..decls.len())
            .filter(|&b| f(b))
            .map(BlockIx::at)
            .collect()
    };
    let lin_der = lay
        .blocks
        .iter()
        .enumerate()
        .filter(|(_, bp)| bp.linear)
        .flat_map(|(b, bp)| {
            (0..bp.x.len()).map(move |k| LinRow {
                block: BlockIx::at(b),
                k,
            })
        })
        .collect();
    Ok(Order {
        stages,
        lin_out,
        lin_der,
        const_blocks,
        state_blocks: pick(&|b| !lay.blocks[b].linear && !lay.blocks[b].x.is_empty()),
        guard_blocks: pick(&|b| !lay.blocks[b].guards.is_empty()),
        force_blocks: pick(&|b| lay.blocks[b].has_forces),
        energy_blocks: pick(&|b| lay.blocks[b].energy.is_some()),
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{signal, Wired};
    use super::order;
    use crate::block::{BlockDecl, Feedthrough, PortDecl};
    use crate::error::Error;
    use crate::ids::BlockIx;
    use crate::plan::Stage;

    fn run(w: &Wired) -> Result<super::Order, Error> {
        let lay = w.layout();
        order(&w.names, &w.decls, &lay, &w.wiring, Vec::new())
    }

    #[test]
    fn two_blocks_feeding_each_other_straight_through_are_an_algebraic_loop_naming_both() {
        let w = Wired::new(
            vec![("a", signal(&["u"], &["y"])), ("b", signal(&["u"], &["y"]))],
            &[&["a.y", "b.u"], &["b.y", "a.u"]],
        );
        match run(&w) {
            Err(Error::AlgebraicLoop { blocks }) => {
                assert!(blocks.iter().any(|b| b == "a") && blocks.iter().any(|b| b == "b"));
            }
            Err(other) => panic!("expected an algebraic loop, got {other}"),
            Ok(o) => panic!("expected an algebraic loop, got the order {:?}", o.stages),
        }
    }

    #[test]
    fn a_block_without_feedthrough_breaks_the_loop_and_is_evaluated_first() {
        let lag = BlockDecl {
            states: 1,
            feedthrough: Feedthrough::None,
            ..signal(&["u"], &["y"])
        };
        let w = Wired::new(
            vec![("b", signal(&["u"], &["y"])), ("lag", lag)],
            &[&["lag.y", "b.u"], &["b.y", "lag.u"]],
        );
        let o = run(&w).expect("no loop");
        let pos = |b: usize| {
            o.stages
                .iter()
                .position(|s| matches!(s, Stage::Outputs(x) if *x == BlockIx::at(b)))
        };
        assert!(pos(w.ix("lag")) < pos(w.ix("b")), "{:?}", o.stages);
        assert_eq!(o.state_blocks, [BlockIx::at(w.ix("lag"))]);
    }

    #[test]
    fn an_output_that_reads_the_network_is_evaluated_after_it_and_before_its_readers() {
        let sensor = BlockDecl::ports(vec![
            PortDecl::rot("flange").free_ok(),
            PortDecl::output("a").after_network(),
        ]);
        let w = Wired::new(
            vec![("reader", signal(&["u"], &["y"])), ("sensor", sensor)],
            &[&["sensor.a", "reader.u"]],
        );
        let o = run(&w).expect("no loop");
        let at = |f: &dyn Fn(&Stage) -> bool| o.stages.iter().position(f).expect("a stage");
        let net = at(&|s| matches!(s, Stage::Network));
        let post = at(&|s| matches!(s, Stage::NetworkOutputs(_)));
        let read = at(&|s| matches!(s, Stage::Outputs(b) if *b == BlockIx::at(w.ix("reader"))));
        assert!(net < post && post < read, "{:?}", o.stages);
    }
}
