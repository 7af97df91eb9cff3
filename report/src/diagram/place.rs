//! Placement of one diagram level with `layout-rs`, then port positions and line routes.
//!
//! Every box is a layout node of its own size, every wire with two different boxes an edge
//! (tagged with the wire index); `layout-rs` assigns ranks left to right, orders each rank
//! to reduce crossings and routes long edges through dummy nodes. A capturing render
//! backend collects those routes. Then mechanical ports move to the side of their box that
//! faces their peers, ports are spread along their side, and each wire becomes a chain of
//! cubic curves from port to port through the route's waypoints, leaving and entering
//! boxes horizontally.

use std::panic::{catch_unwind, AssertUnwindSafe};

use layout::core::base::Orientation;
use layout::core::format::{ClipHandle, RenderBackend};
use layout::core::geometry::Point;
use layout::core::style::StyleAttr;
use layout::std_shapes::shapes::{Arrow, Element, LineEndKind, ShapeKind};
use layout::topo::layout::VisualGraph;

use drivelink_core::block::PortKind;

use super::{Level, LineKind, Node, Side};
use crate::error::ReportError;

/// Space around the drawing, px.
pub const MARGIN: f64 = 24.0;
/// Height of the title strip above the drawing, px.
pub const TITLE_H: f64 = 34.0;
/// Height of the legend strip below the drawing, px.
pub const LEGEND_H: f64 = 34.0;

/// A placed box: top-left corner and the position of each of its ports.
#[derive(Debug, Clone)]
pub struct PlacedNode {
    pub node: Node,
    pub x: f64,
    pub y: f64,
    pub port_pos: Vec<(f64, f64)>,
}

/// A routed wire: start point, then cubic segments `(control 1, control 2, end)`.
#[derive(Debug, Clone)]
pub struct PlacedWire {
    pub kind: LineKind,
    pub start: (f64, f64),
    pub segments: Vec<[(f64, f64); 3]>,
    /// Draw a junction dot at `start` (the line branches there).
    pub branch: bool,
    /// Names of the two ends, `block.port`, for the tooltip.
    pub label: String,
}

/// A placed level.
#[derive(Debug, Clone)]
pub struct Placed {
    pub nodes: Vec<PlacedNode>,
    pub wires: Vec<PlacedWire>,
    pub width: f64,
    pub height: f64,
}

/// Collects the routes `layout-rs` computes for the tagged edges; draws nothing.
struct Capture {
    routes: Vec<Option<Vec<(f64, f64)>>>,
}

impl RenderBackend for Capture {
    fn draw_rect(
        &mut self,
        _: Point,
        _: Point,
        _: &StyleAttr,
        _: Option<String>,
        _: Option<ClipHandle>,
    ) {
    }
    fn draw_line(&mut self, _: Point, _: Point, _: &StyleAttr, _: Option<String>) {}
    fn draw_circle(&mut self, _: Point, _: Point, _: &StyleAttr, _: Option<String>) {}
    fn draw_text(&mut self, _: Point, _: &str, _: &StyleAttr) {}
    fn draw_arrow(
        &mut self,
        path: &[(Point, Point)],
        _dashed: bool,
        _head: (bool, bool),
        _look: &StyleAttr,
        properties: Option<String>,
        _text: &str,
    ) {
        let Some(id) = properties.and_then(|p| p.parse::<usize>().ok()) else {
            return;
        };
        // The path is [(start, control), (control, point), ...]: the points are the
        // start's first entry and every later entry's second.
        let mut pts: Vec<(f64, f64)> = Vec::with_capacity(path.len());
        if let Some(first) = path.first() {
            pts.push((first.0.x, first.0.y));
        }
        pts.extend(path.iter().skip(1).map(|(_, p)| (p.x, p.y)));
        if let Some(slot) = self.routes.get_mut(id) {
            *slot = Some(pts);
        }
    }
    fn create_clip(&mut self, _: Point, _: Point, _: usize) -> ClipHandle {
        0
    }
}

/// Places `level` (named `title` in errors).
pub fn place(level: Level, title: &str) -> Result<Placed, ReportError> {
    let Level { mut nodes, wires } = level;
    let (boxes, routes) = run_layout(&nodes, &wires, title)?;

    // Mechanical ports face their peers.
    for (n, node) in nodes.iter_mut().enumerate() {
        let cx = boxes[n].0 + 0.5 * node.w;
        for (p, port) in node.ports.iter_mut().enumerate() {
            if !matches!(port.kind, PortKind::Rot | PortKind::Trans | PortKind::Heat) {
                continue;
            }
            let peers: Vec<f64> = wires
                .iter()
                .filter_map(|w| {
                    if w.from == (n, p) {
                        Some(w.to.0)
                    } else if w.to == (n, p) {
                        Some(w.from.0)
                    } else {
                        None
                    }
                })
                .filter(|&m| m != n)
                .map(|m| boxes[m].0 + 0.5 * boxes[m].2)
                .collect();
            if peers.is_empty() {
                continue;
            }
            let mean = peers.iter().sum::<f64>() / peers.len() as f64;
            if mean < cx - 0.25 * node.w {
                port.side = Side::Left;
            } else if mean > cx + 0.25 * node.w {
                port.side = Side::Right;
            }
        }
    }

    let mut placed: Vec<PlacedNode> = nodes
        .into_iter()
        .zip(&boxes)
        .map(|(node, &(x, y, _, _))| {
            let port_pos = port_positions(&node, x, y);
            PlacedNode {
                node,
                x,
                y,
                port_pos,
            }
        })
        .collect();

    let mut routed = Vec::with_capacity(wires.len());
    for (i, w) in wires.iter().enumerate() {
        let a = &placed[w.from.0];
        let b = &placed[w.to.0];
        let p = a.port_pos[w.from.1];
        let q = b.port_pos[w.to.1];
        let np = normal(a.node.ports[w.from.1].side);
        let nq = normal(b.node.ports[w.to.1].side);
        let mut via: Vec<(f64, f64)> = routes[i].clone().unwrap_or_default();
        if via.len() >= 2 {
            // Drop the layout's own end points; keep the dummy-node waypoints, in order.
            let first = via[0];
            let d_from = dist(first, center(a));
            let d_to = dist(first, center(b));
            via = via[1..via.len() - 1].to_vec();
            if d_to < d_from {
                via.reverse();
            }
        } else {
            via.clear();
        }
        let segments = if w.from.0 == w.to.0 {
            self_loop(p, np, q, nq, a.y + a.node.h)
        } else {
            curve(p, np, &via, q, nq)
        };
        routed.push(PlacedWire {
            kind: w.kind,
            start: p,
            segments,
            branch: w.branch,
            label: format!(
                "{}.{} - {}.{}",
                a.node.name, a.node.ports[w.from.1].name, b.node.name, b.node.ports[w.to.1].name
            ),
        });
    }

    // Shift everything so the drawing starts at the margin, below the title strip.
    let mut lo = (f64::INFINITY, f64::INFINITY);
    let mut hi = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    let mut grow = |p: (f64, f64)| {
        lo = (lo.0.min(p.0), lo.1.min(p.1));
        hi = (hi.0.max(p.0), hi.1.max(p.1));
    };
    for n in &placed {
        grow((n.x - 12.0, n.y - 4.0));
        grow((n.x + n.node.w + 12.0, n.y + n.node.h + 14.0));
    }
    for w in &routed {
        grow(w.start);
        for s in &w.segments {
            s.iter().for_each(|&p| grow(p));
        }
    }
    if !lo.0.is_finite() {
        lo = (0.0, 0.0);
        hi = (200.0, 60.0);
    }
    let dx = MARGIN - lo.0;
    let dy = MARGIN + TITLE_H - lo.1;
    let shift = |p: &mut (f64, f64)| {
        p.0 += dx;
        p.1 += dy;
    };
    for n in &mut placed {
        n.x += dx;
        n.y += dy;
        n.port_pos.iter_mut().for_each(shift);
    }
    for w in &mut routed {
        shift(&mut w.start);
        for s in &mut w.segments {
            s.iter_mut().for_each(shift);
        }
    }
    let width = (hi.0 - lo.0 + 2.0 * MARGIN)
        .max(crate::diagram::text::width(title, 16.0, true) + 2.0 * MARGIN);
    let height = hi.1 - lo.1 + 2.0 * MARGIN + TITLE_H + LEGEND_H;
    Ok(Placed {
        nodes: placed,
        wires: routed,
        width: width.ceil(),
        height: height.ceil(),
    })
}

fn center(n: &PlacedNode) -> (f64, f64) {
    (n.x + 0.5 * n.node.w, n.y + 0.5 * n.node.h)
}

fn dist(a: (f64, f64), b: (f64, f64)) -> f64 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}

/// Outward direction of a side.
fn normal(side: Side) -> f64 {
    match side {
        Side::Left => -1.0,
        Side::Right => 1.0,
    }
}

/// Port positions: each side's ports spread evenly along the box height, in port order.
fn port_positions(node: &Node, x: f64, y: f64) -> Vec<(f64, f64)> {
    let count = |s: Side| node.ports.iter().filter(|p| p.side == s).count();
    let (n_left, n_right) = (count(Side::Left), count(Side::Right));
    let (mut k_left, mut k_right) = (0, 0);
    node.ports
        .iter()
        .map(|p| {
            let (k, n, px) = match p.side {
                Side::Left => {
                    k_left += 1;
                    (k_left, n_left, x)
                }
                Side::Right => {
                    k_right += 1;
                    (k_right, n_right, x + node.w)
                }
            };
            (px, y + node.h * k as f64 / (n + 1) as f64)
        })
        .collect()
}

/// Cubic segments from `p` (leaving along `np`) through `via` to `q` (entering against
/// `nq`), each point passed horizontally.
fn curve(
    p: (f64, f64),
    np: f64,
    via: &[(f64, f64)],
    q: (f64, f64),
    nq: f64,
) -> Vec<[(f64, f64); 3]> {
    let mut pts = vec![(p, np)];
    for (i, &v) in via.iter().enumerate() {
        let prev = if i == 0 { p } else { via[i - 1] };
        let next = via.get(i + 1).copied().unwrap_or(q);
        let dir = if next.0 >= prev.0 { 1.0 } else { -1.0 };
        pts.push((v, dir));
    }
    pts.push((q, -nq));
    pts.windows(2)
        .map(|w| {
            let ((a, ta), (b, tb)) = (w[0], w[1]);
            let forward = (b.0 - a.0) * ta > 0.0 && (b.0 - a.0) * tb > 0.0;
            let d = if forward {
                (0.45 * (b.0 - a.0).abs()).max(12.0)
            } else {
                (0.45 * (b.0 - a.0).abs()).max(40.0)
            };
            [(a.0 + ta * d, a.1), (b.0 - tb * d, b.1), b]
        })
        .collect()
}

/// A line between two ports of the same box, around its bottom edge.
fn self_loop(p: (f64, f64), np: f64, q: (f64, f64), nq: f64, bottom: f64) -> Vec<[(f64, f64); 3]> {
    let below = bottom + 18.0;
    let a = (p.0 + np * 24.0, below);
    let b = (q.0 + nq * 24.0, below);
    vec![
        [(p.0 + np * 24.0, p.1), (a.0, a.1), a],
        [a, b, b],
        [(b.0, b.1), (q.0 + nq * 24.0, q.1), q],
    ]
}

/// Node visits the layout library's own cycle test may spend on one diagram level before
/// [`layout_edges`] hands it a pre-oriented graph instead (about 20 ms).
const CYCLE_TEST_BUDGET: u64 = 1_000_000;

/// The layout's edges `(wire, (from, to))` for the wires `pairs` (box indices `from → to`)
/// among `n` boxes, self-wires left out.
///
/// `layout-rs` breaks cycles itself: for each edge in turn it reverses the edge when the
/// head already reaches the tail, by a depth-first search that unmarks the nodes it
/// backs out of, so one test visits every path leaving the head. That is exponential in
/// the number of forks in series (a ladder of 20 forks took 0.8 s, each further fork
/// doubling it) and quadratic even on a chain listed backwards. [`cycle_test_cost`]
/// counts those visits in advance. Within [`CYCLE_TEST_BUDGET`] the wires go as they are,
/// in wire order, and the drawing is the library's own. Beyond it the wires that close a
/// cycle in one depth-first search (boxes in order) are reversed here and the edges are
/// handed over in the topological order of their tails: when an edge is added its head
/// has no successors yet, so the library's test stops at once and keeps every edge as
/// given, and the whole placement stays near linear in the diagram's size.
fn layout_edges(n: usize, pairs: &[(usize, usize)]) -> Vec<(usize, (usize, usize))> {
    let edges: Vec<(usize, (usize, usize))> = pairs
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, (a, b))| a != b && a < n && b < n)
        .collect();
    if cycle_test_cost(n, &edges, CYCLE_TEST_BUDGET) <= CYCLE_TEST_BUDGET {
        return edges;
    }
    let reversed = back_edges(n, &edges);
    let oriented: Vec<(usize, (usize, usize))> = edges
        .iter()
        .zip(&reversed)
        .map(|(&(i, (a, b)), &r)| (i, if r { (b, a) } else { (a, b) }))
        .collect();
    let rank = topological_rank(n, &oriented);
    let mut ordered = oriented;
    ordered.sort_by_key(|&(i, (a, _))| (rank[a], i));
    ordered
}

/// The node visits of `layout-rs`'s cycle test on `edges` in order (counted up to just
/// past `budget`): for each edge `a → b`, the number of paths leaving `b` in the graph of
/// the edges before it, each oriented as the library orients it (reversed when `b`
/// already reaches `a`).
fn cycle_test_cost(n: usize, edges: &[(usize, (usize, usize))], budget: u64) -> u64 {
    let mut kept: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut seen = vec![0usize; n];
    let mut paths = vec![0u64; n];
    let mut order = Vec::new();
    let mut stack: Vec<(usize, usize)> = Vec::new();
    let mut total = 0u64;
    for (stamp, &(_, (a, b))) in edges.iter().enumerate() {
        let stamp = stamp + 1;
        // Post-order of the nodes reachable from b (each once), then the path counts.
        order.clear();
        seen[b] = stamp;
        stack.push((b, 0));
        while let Some(top) = stack.last_mut() {
            let (v, k) = *top;
            if let Some(&w) = kept[v].get(k) {
                top.1 += 1;
                if seen[w] != stamp {
                    seen[w] = stamp;
                    stack.push((w, 0));
                }
            } else {
                order.push(v);
                stack.pop();
            }
        }
        let mut reaches = false;
        for &v in &order {
            reaches |= v == a;
            paths[v] = kept[v]
                .iter()
                .fold(1u64, |s, &w| s.saturating_add(paths[w]));
        }
        total = total.saturating_add(paths[b]);
        if total > budget {
            return total;
        }
        if reaches {
            kept[b].push(a);
        } else {
            kept[a].push(b);
        }
    }
    total
}

/// Which of `edges` close a cycle: the back edges of one depth-first search, roots and
/// successors in order. Reversing them leaves an acyclic graph.
fn back_edges(n: usize, edges: &[(usize, (usize, usize))]) -> Vec<bool> {
    let mut out: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for (k, &(_, (a, b))) in edges.iter().enumerate() {
        out[a].push((b, k));
    }
    // 0 unseen, 1 on the stack, 2 done.
    let mut state = vec![0u8; n];
    let mut reversed = vec![false; edges.len()];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        stack.push((root, 0));
        while let Some(top) = stack.last_mut() {
            let (v, k) = *top;
            if let Some(&(w, e)) = out[v].get(k) {
                top.1 += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        stack.push((w, 0));
                    }
                    1 => reversed[e] = true,
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
    }
    reversed
}

/// Position of each node in a topological order of the acyclic `edges` (Kahn's
/// algorithm, the smallest ready index first).
fn topological_rank(n: usize, edges: &[(usize, (usize, usize))]) -> Vec<usize> {
    use std::cmp::Reverse;
    let mut indegree = vec![0usize; n];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(_, (a, b)) in edges {
        indegree[b] += 1;
        succ[a].push(b);
    }
    let mut ready: std::collections::BinaryHeap<Reverse<usize>> =
        (0..n).filter(|&v| indegree[v] == 0).map(Reverse).collect();
    let mut rank = vec![usize::MAX; n];
    let mut next = 0;
    while let Some(Reverse(v)) = ready.pop() {
        rank[v] = next;
        next += 1;
        for &w in &succ[v] {
            indegree[w] -= 1;
            if indegree[w] == 0 {
                ready.push(Reverse(w));
            }
        }
    }
    rank
}

/// Box rectangles `(x, y, w, h)` and the route of each wire from `layout-rs`.
#[allow(clippy::type_complexity)]
fn run_layout(
    nodes: &[Node],
    wires: &[super::Wire],
    title: &str,
) -> Result<(Vec<(f64, f64, f64, f64)>, Vec<Option<Vec<(f64, f64)>>>), ReportError> {
    // No box or one box: nothing to arrange (and `layout-rs` panics on an empty graph).
    if nodes.len() <= 1 {
        let boxes = nodes.iter().map(|n| (0.0, 0.0, n.w, n.h)).collect();
        return Ok((boxes, vec![None; wires.len()]));
    }
    let work = || {
        let mut vg = VisualGraph::new(Orientation::LeftToRight);
        // The library's self-check re-verifies the whole graph after every edge: cubic
        // in the diagram's size (8 s for a chain of 2,000 blocks). `layout_edges` hands
        // it an acyclic graph in an order that keeps its own cycle test O(1) per edge.
        vg.dag.set_validate(false);
        let handles: Vec<_> = nodes
            .iter()
            .map(|n| {
                let el = Element::create(
                    ShapeKind::new_box(""),
                    StyleAttr::simple(),
                    Orientation::LeftToRight,
                    Point::new(n.w, n.h),
                );
                vg.add_node(el)
            })
            .collect();
        let pairs: Vec<(usize, usize)> = wires.iter().map(|w| (w.from.0, w.to.0)).collect();
        for (i, (from, to)) in layout_edges(nodes.len(), &pairs) {
            let arrow = Arrow::with_properties(
                LineEndKind::None,
                LineEndKind::Arrow,
                layout::core::style::LineStyleKind::Normal,
                "",
                &StyleAttr::simple(),
                i.to_string(),
                &None,
                &None,
            );
            vg.add_edge(arrow, handles[from], handles[to]);
        }
        let mut cap = Capture {
            routes: vec![None; wires.len()],
        };
        vg.do_it(false, false, false, &mut cap);
        let boxes = handles
            .iter()
            .zip(nodes)
            .map(|(h, n)| {
                let c = vg.pos(*h).center();
                (c.x - 0.5 * n.w, c.y - 0.5 * n.h, n.w, n.h)
            })
            .collect::<Vec<_>>();
        (boxes, cap.routes)
    };
    let (boxes, routes) =
        catch_unwind(AssertUnwindSafe(work)).map_err(|_| ReportError::Layout {
            diagram: title.to_string(),
            message: "the layout library failed on this diagram".into(),
        })?;
    if boxes.iter().any(|b| !(b.0.is_finite() && b.1.is_finite())) {
        return Err(ReportError::Layout {
            diagram: title.to_string(),
            message: "the layout produced non-finite positions".into(),
        });
    }
    Ok((boxes, routes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Box indices `0..` for a ladder of `k` forks: `s_i → a_i, s_i → b_i, a_i → s_{i+1},
    /// b_i → s_{i+1}` (`s_i = 3i`, `a_i = 3i + 1`, `b_i = 3i + 2`), wires listed upstream
    /// first; `n` boxes in all.
    fn ladder(k: usize) -> (usize, Vec<(usize, usize)>) {
        let mut w = Vec::new();
        for i in 0..k {
            let (s, a, b, next) = (3 * i, 3 * i + 1, 3 * i + 2, 3 * i + 3);
            w.extend([(s, a), (s, b), (a, next), (b, next)]);
        }
        (3 * k + 1, w)
    }

    fn indexed(pairs: &[(usize, usize)]) -> Vec<(usize, (usize, usize))> {
        pairs.iter().copied().enumerate().collect()
    }

    #[test]
    fn cycle_test_cost_counts_the_paths_leaving_each_head() {
        // A diamond listed downstream first: d alone (1), d alone (1), b → d (2), c → d (2).
        let (a, b, c, d) = (0, 1, 2, 3);
        let diamond = [(b, d), (c, d), (a, b), (a, c)];
        assert_eq!(cycle_test_cost(4, &indexed(&diamond), u64::MAX), 6);
        // Listed upstream first, every head is new: one visit per wire.
        let (n, w) = ladder(12);
        assert_eq!(cycle_test_cost(n, &indexed(&w), u64::MAX), w.len() as u64);
        // Listed downstream first, the head of the last wires reaches 2^k paths: the
        // count passes the budget and stops there.
        let (n, mut w) = ladder(25);
        w.reverse();
        let cost = cycle_test_cost(n, &indexed(&w), CYCLE_TEST_BUDGET);
        assert!(cost > CYCLE_TEST_BUDGET, "{cost}");
        // A closed loop: the library reverses the wire that closes it, and counts it.
        let ring = [(0, 1), (1, 2), (2, 0)];
        assert_eq!(cycle_test_cost(3, &indexed(&ring), u64::MAX), 1 + 1 + 3);
    }

    #[test]
    fn small_diagrams_keep_their_wires_as_listed() {
        let (n, mut w) = ladder(6);
        w.push((4, 4)); // a self-wire: left out
        w.push((18, 0)); // closes a cycle: left to the library
        let got = layout_edges(n, &w);
        let want: Vec<_> = indexed(&w)
            .into_iter()
            .filter(|&(_, (a, b))| a != b)
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn large_fork_ladders_are_handed_over_acyclic_and_tails_first() {
        let (n, mut w) = ladder(30);
        w.reverse();
        // Feedback from the last rung to the first: one cycle through every rung.
        w.push((n - 1, 0));
        let got = layout_edges(n, &w);
        // Every wire once.
        let mut ids: Vec<usize> = got.iter().map(|&(i, _)| i).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..w.len()).collect::<Vec<_>>());
        // Only the feedback wire is reversed.
        for &(i, (a, b)) in &got {
            let (p, q) = w[i];
            if i == w.len() - 1 {
                assert_eq!((a, b), (q, p), "the feedback wire turned round");
            } else {
                assert_eq!((a, b), (p, q), "wire {i} kept its direction");
            }
        }
        // When an edge is added, its head has no successors yet: the library's own test
        // visits one node, and keeps the edge (so the graph it builds is acyclic).
        let mut has_succ = vec![false; n];
        for &(i, (a, b)) in &got {
            assert!(!has_succ[b], "wire {i}: head {b} already has successors");
            has_succ[a] = true;
        }
        assert_eq!(cycle_test_cost(n, &got, u64::MAX), got.len() as u64);
    }
}
