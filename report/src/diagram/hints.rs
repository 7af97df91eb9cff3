//! Layout hints a reader of a vehicle model expects: a car's wheels at the corners of its
//! body, and the power path of a driveline on one row.
//!
//! Wheels (`WheelCollider`) joined to a rigid body by a frame line go to the column left
//! of the body (the left wheels) or right of it (the right wheels), the front wheel above
//! the body's top edge, the rear one at its bottom edge: a top view with the car heading up
//! the page. The power path is the longest chain of boxes joined by mechanical lines that
//! enter a box at one port and leave it at another, left to right (engine, converter,
//! gearbox, final drive, wheel, vehicle); its lines are held straight.

use super::level::{Node, Wire};
use super::LineKind;

/// How strongly a hinted position pulls, against 1 for an ordinary line.
pub(crate) const HINT_WEIGHT: f64 = 1.0e6;

/// A wheel placed at a corner of its body.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CornerWheel {
    pub wheel: usize,
    pub body: usize,
    pub front: bool,
}

/// What the column assignment needs: groups of boxes sharing a column and the directed
/// edges to rank by.
#[derive(Debug, Clone)]
pub(crate) struct RankHints {
    pub group: Vec<usize>,
    pub edges: Vec<(usize, usize)>,
    pub corners: Vec<CornerWheel>,
}

/// Groups and rank edges of `nodes` and `wires`, with every car's wheels at its corners.
pub(crate) fn rank_hints(nodes: &[Node], wires: &[Wire]) -> RankHints {
    let n = nodes.len();
    let mut group: Vec<usize> = (0..n).collect();
    let mut corners = Vec::new();
    // The first left and first right wheel of each body: their groups take the others.
    let mut first: Vec<[Option<usize>; 2]> = vec![[None, None]; n];
    let mut skip = vec![false; wires.len()];
    for (i, w) in wires.iter().enumerate() {
        if w.kind != LineKind::Frame {
            continue;
        }
        let (a, b) = (w.from.0, w.to.0);
        let (body, wheel) = if nodes[a].rigid_body && nodes[b].corner.is_some() {
            (a, b)
        } else if nodes[b].rigid_body && nodes[a].corner.is_some() {
            (b, a)
        } else {
            continue;
        };
        let Some(c) = nodes[wheel].corner else {
            continue;
        };
        skip[i] = true;
        let rep = *first[body][usize::from(c.left)].get_or_insert(wheel);
        group[wheel] = rep;
        corners.push(CornerWheel {
            wheel,
            body,
            front: c.front,
        });
    }
    let mut edges: Vec<(usize, usize)> = wires
        .iter()
        .zip(&skip)
        .filter(|(_, &s)| !s)
        .map(|(w, _)| (w.from.0, w.to.0))
        .collect();
    for c in &corners {
        let left = nodes[c.wheel].corner.is_some_and(|k| k.left);
        edges.push(if left {
            (c.wheel, c.body)
        } else {
            (c.body, c.wheel)
        });
    }
    RankHints {
        group,
        edges,
        corners,
    }
}

/// The wires of the power path: the longest chain of mechanical wires running left to
/// right (by `rank`) that passes each box from one port to another, corner wheels left
/// out. Empty when it joins fewer than three boxes.
pub(crate) fn power_path(nodes: &[Node], wires: &[Wire], rank: &[usize]) -> Vec<usize> {
    let mech = |w: &Wire| matches!(w.kind, LineKind::Rot | LineKind::Trans);
    let mut ids: Vec<usize> = (0..wires.len())
        .filter(|&i| {
            let w = &wires[i];
            mech(w)
                && rank[w.to.0] > rank[w.from.0]
                && nodes[w.from.0].corner.is_none()
                && nodes[w.to.0].corner.is_none()
        })
        .collect();
    ids.sort_by_key(|&i| (rank[wires[i].from.0], i));
    // into[box]: the wires processed so far that end at the box.
    let mut into: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut best = vec![0usize; wires.len()];
    let mut prev: Vec<Option<usize>> = vec![None; wires.len()];
    for &i in &ids {
        let w = &wires[i];
        best[i] = 1;
        for &j in &into[w.from.0] {
            if wires[j].to.1 != w.from.1 && best[j] + 1 > best[i] {
                best[i] = best[j] + 1;
                prev[i] = Some(j);
            }
        }
        into[w.to.0].push(i);
    }
    let Some(&last) = ids.iter().max_by_key(|&&i| (best[i], std::cmp::Reverse(i))) else {
        return Vec::new();
    };
    if best[last] < 2 {
        return Vec::new();
    }
    let mut chain = vec![last];
    let mut at = last;
    while let Some(p) = prev[at] {
        chain.push(p);
        at = p;
    }
    chain.reverse();
    chain
}

#[cfg(test)]
mod tests {
    use super::super::level::{Node, Port, Side};
    use super::*;
    use drivelink_core::block::PortKind;

    fn node(name: &str, ports: &[&str]) -> Node {
        Node {
            name: name.into(),
            type_label: String::new(),
            category: String::new(),
            terminal: false,
            href: None,
            expandable: false,
            ports: ports
                .iter()
                .map(|p| Port {
                    name: p.to_string(),
                    kind: PortKind::Rot,
                    side: Side::Left,
                })
                .collect(),
            icon: None,
            corner: None,
            rigid_body: false,
            row_ports: Vec::new(),
            w: 80.0,
            h: 40.0,
        }
    }

    fn rot(from: (usize, usize), to: (usize, usize), net: usize) -> Wire {
        Wire {
            kind: LineKind::Rot,
            from,
            to,
            net,
        }
    }

    #[test]
    fn the_power_path_passes_each_box_from_one_port_to_another() {
        // engine.crank -> clutch.a; clutch.b -> gear.a; gear.b -> wheel.hub; and a dead
        // end: clutch.a -> inertia.f (same port clutch was entered by).
        let nodes = vec![
            node("engine", &["crank"]),
            node("clutch", &["a", "b"]),
            node("gear", &["a", "b"]),
            node("wheel", &["hub"]),
            node("inertia", &["f"]),
            node("inertia2", &["f"]),
        ];
        let wires = vec![
            rot((0, 0), (1, 0), 0),
            rot((1, 0), (4, 0), 0),
            rot((1, 1), (2, 0), 1),
            rot((2, 1), (3, 0), 2),
            // A longer chain that re-uses the port it came in by is no path.
            rot((4, 0), (5, 0), 3),
        ];
        let rank = [0, 1, 2, 3, 2, 3];
        assert_eq!(power_path(&nodes, &wires, &rank), [0, 2, 3]);
        // Two boxes are no path.
        assert!(power_path(&nodes[..2], &wires[..1], &rank[..2]).is_empty());
    }
}
