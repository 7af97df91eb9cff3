//! Placement of one diagram level: columns, mechanical port sides, the grid and its order,
//! heights, routes, then the drawing's frame (margins, title and legend strips).

use drivelink_core::block::PortKind;

use super::hints::{power_path, rank_hints, HINT_WEIGHT};
use super::level::{Level, Node, Side, Wire};
use super::order::Grid;
use super::{coord, rank, route, LineKind};
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

/// A routed wire: a polyline of horizontal and vertical segments.
#[derive(Debug, Clone)]
pub struct PlacedWire {
    pub kind: LineKind,
    pub points: Vec<(f64, f64)>,
    /// Names of the two ends, `block.port`, for the tooltip.
    pub label: String,
    /// Names of the boxes at the two ends.
    pub ends: (String, String),
    /// The net (connection) of the wire.
    pub net: usize,
}

/// A placed level.
#[derive(Debug, Clone)]
pub struct Placed {
    pub nodes: Vec<PlacedNode>,
    pub wires: Vec<PlacedWire>,
    /// Branch points: kind of the line and position.
    pub dots: Vec<(LineKind, (f64, f64))>,
    pub width: f64,
    pub height: f64,
}

/// Sweeps of the column order and of the height assignment.
const ORDER_SWEEPS: usize = 8;
const COORD_SWEEPS: usize = 10;

/// Places `level` (named `title` in errors).
pub fn place(level: Level, title: &str) -> Result<Placed, ReportError> {
    let Level { mut nodes, wires } = level;
    let hints = rank_hints(&nodes, &wires);
    let rank = rank::ranks(nodes.len(), &hints.edges, &hints.group);
    face_peers(&mut nodes, &wires, &rank);
    let spine = power_path(&nodes, &wires, &rank);
    let mut weight = vec![1.0; wires.len()];
    for &w in &spine {
        weight[w] = HINT_WEIGHT;
        let (a, b) = (wires[w].from, wires[w].to);
        nodes[a.0].row_ports.push(a.1);
        nodes[b.0].row_ports.push(b.1);
    }
    let mut grid = Grid::build(&nodes, &wires, &rank, &weight);
    for c in &hints.corners {
        // The wheel's middle at the body's top edge (front) or bottom edge (rear).
        let body_off = if c.front { 0.0 } else { nodes[c.body].h };
        let own = 0.5 * nodes[c.wheel].h;
        grid.link(c.wheel, own, c.body, body_off, HINT_WEIGHT);
    }
    grid.order(ORDER_SWEEPS);
    let top = coord::tops(&grid, COORD_SWEEPS);
    let routed = route::route(&nodes, &wires, &grid, &top);
    let frame = Frame::of(&nodes, &routed, title);
    let placed_wires = wires
        .iter()
        .zip(routed.lines)
        .map(|(w, pts)| {
            let (a, b) = (&nodes[w.from.0], &nodes[w.to.0]);
            PlacedWire {
                kind: w.kind,
                points: pts.into_iter().map(|p| frame.shift(p)).collect(),
                label: format!(
                    "{}.{} - {}.{}",
                    a.name, a.ports[w.from.1].name, b.name, b.ports[w.to.1].name
                ),
                ends: (a.name.clone(), b.name.clone()),
                net: w.net,
            }
        })
        .collect();
    let net_kind = |net: usize| wires.iter().find(|w| w.net == net).map(|w| w.kind);
    let dots = routed
        .dots
        .iter()
        .filter_map(|&(net, p)| Some((net_kind(net)?, frame.shift(p))))
        .collect();
    let placed_nodes = nodes
        .into_iter()
        .zip(routed.boxes.iter().zip(routed.ports))
        .map(|(node, (&(x, y), ports))| {
            let (x, y) = frame.shift((x, y));
            PlacedNode {
                node,
                x,
                y,
                port_pos: ports.into_iter().map(|p| frame.shift(p)).collect(),
            }
        })
        .collect();
    if !(frame.width.is_finite() && frame.height.is_finite()) {
        return Err(ReportError::Layout {
            diagram: title.to_string(),
            message: "the layout produced non-finite positions".into(),
        });
    }
    Ok(Placed {
        nodes: placed_nodes,
        wires: placed_wires,
        dots,
        width: frame.width,
        height: frame.height,
    })
}

/// Mechanical ports move to the side of their box that faces their peers' columns (ties
/// keep their side).
fn face_peers(nodes: &mut [Node], wires: &[Wire], rank: &[usize]) {
    let mut pull: Vec<Vec<i64>> = nodes.iter().map(|n| vec![0; n.ports.len()]).collect();
    for w in wires {
        let (a, b) = (w.from, w.to);
        let d = rank[b.0] as i64 - rank[a.0] as i64;
        pull[a.0][a.1] += d.signum();
        pull[b.0][b.1] -= d.signum();
    }
    for (node, pulls) in nodes.iter_mut().zip(pull) {
        for (port, p) in node.ports.iter_mut().zip(pulls) {
            if matches!(port.kind, PortKind::In | PortKind::Out) {
                continue;
            }
            if p > 0 {
                port.side = Side::Right;
            } else if p < 0 {
                port.side = Side::Left;
            }
        }
    }
}

/// The drawing's extent and the shift that puts it inside the margins, below the title.
struct Frame {
    dx: f64,
    dy: f64,
    width: f64,
    height: f64,
}

impl Frame {
    fn of(nodes: &[Node], routed: &route::Routed, title: &str) -> Frame {
        let mut lo = (f64::INFINITY, f64::INFINITY);
        let mut hi = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        let mut grow = |p: (f64, f64)| {
            lo = (lo.0.min(p.0), lo.1.min(p.1));
            hi = (hi.0.max(p.0), hi.1.max(p.1));
        };
        for (n, &(x, y)) in nodes.iter().zip(&routed.boxes) {
            let extra = 0.5 * (n.span_w() - n.w);
            grow((x - extra - 12.0, y - 4.0));
            grow((x + n.w + extra + 12.0, y + n.span_h() + 4.0));
        }
        routed.lines.iter().flatten().for_each(|&p| grow(p));
        if !lo.0.is_finite() {
            lo = (0.0, 0.0);
            hi = (200.0, 60.0);
        }
        let width =
            (hi.0 - lo.0 + 2.0 * MARGIN).max(super::text::width(title, 16.0, true) + 2.0 * MARGIN);
        Frame {
            dx: MARGIN - lo.0,
            dy: MARGIN + TITLE_H - lo.1,
            width: width.ceil(),
            height: (hi.1 - lo.1 + 2.0 * MARGIN + TITLE_H + LEGEND_H).ceil(),
        }
    }

    fn shift(&self, p: (f64, f64)) -> (f64, f64) {
        (p.0 + self.dx, p.1 + self.dy)
    }
}
