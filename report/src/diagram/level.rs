//! One diagram level before placement: its boxes ([`Node`]) with the ports they show, and
//! its wires ([`Wire`]), one per connection end beyond the connection's source.
//!
//! Unused optional ports are left out: an optional flange or heat port that no connection
//! names, and a signal input with a default value that nothing drives. Blocks with an icon
//! ([`Icon`]: `Sum`, `Gain`, clutches, gears, planetary gear sets) get a compact box with
//! their name below it.

use std::collections::{HashMap, HashSet};

use drivelink_core::block::{PortDecl, PortKind};
use drivelink_core::diagram::{BlockSpec, Diagram, PortRef};
use serde_json::Value;

use super::{text, DiagramOptions, LineKind, PortTable};

/// Which side of a box a port sits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Left,
    Right,
}

/// A port of a node.
#[derive(Debug, Clone)]
pub(crate) struct Port {
    pub name: String,
    pub kind: PortKind,
    pub side: Side,
}

/// The picture drawn inside the box of a common block.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Icon {
    /// A circle with the sign of each input (`true`: `+`).
    Sum(Vec<bool>),
    /// A triangle pointing right.
    Gain,
    /// Two friction plates.
    Clutch,
    /// Two meshing gear wheels.
    Gear,
    /// Concentric circles: sun, planets' ring, ring gear.
    Planetary,
}

impl Icon {
    /// The icon of a block type (`params`: the block's netlist parameters).
    fn of(type_name: &str, params: &serde_json::Map<String, Value>, n_in: usize) -> Option<Icon> {
        match type_name {
            "Sum" => {
                let signs = params
                    .get("signs")
                    .and_then(Value::as_str)
                    .filter(|s| s.chars().all(|c| c == '+' || c == '-'))
                    .map(|s| s.chars().map(|c| c == '+').collect())
                    .unwrap_or_else(|| vec![true; n_in]);
                Some(Icon::Sum(signs))
            }
            "Gain" => Some(Icon::Gain),
            "Clutch" | "DogClutch" | "OneWayClutch" | "Synchronizer" => Some(Icon::Clutch),
            "IdealGear" | "LossyGear" => Some(Icon::Gear),
            "PlanetaryGear" => Some(Icon::Planetary),
            _ => None,
        }
    }
    /// Port names are drawn next to the ports (not for the signal icons).
    pub fn port_labels(&self) -> bool {
        !matches!(self, Icon::Sum(_) | Icon::Gain)
    }
}

/// Where a `WheelCollider` sits on its car: front or rear, left or right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Corner {
    pub front: bool,
    pub left: bool,
}

impl Corner {
    /// From the wheel's `center` parameter (x forward, y left) when it is a literal, else
    /// from a name ending in `fl`, `fr`, `rl` or `rr`.
    fn of(b: &BlockSpec) -> Option<Corner> {
        if b.type_name != "WheelCollider" {
            return None;
        }
        let center = b.params.get("center").and_then(Value::as_array);
        if let Some([x, y, ..]) = center.map(Vec::as_slice) {
            if let (Some(x), Some(y)) = (x.as_f64(), y.as_f64()) {
                if x != 0.0 && y != 0.0 {
                    return Some(Corner {
                        front: x > 0.0,
                        left: y > 0.0,
                    });
                }
            }
        }
        let name = b.name.to_ascii_lowercase();
        let tail = name.get(name.len().saturating_sub(2)..)?;
        let (f, l) = match tail {
            "fl" => (true, true),
            "fr" => (true, false),
            "rl" => (false, true),
            "rr" => (false, false),
            _ => return None,
        };
        Some(Corner { front: f, left: l })
    }
}

/// A box to place: a block, or a terminal standing for an exported port of an inner level.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub name: String,
    /// Second text line (block type); empty for terminals.
    pub type_label: String,
    pub category: String,
    pub terminal: bool,
    /// Where the box links to (expandable boxes).
    pub href: Option<String>,
    pub expandable: bool,
    pub ports: Vec<Port>,
    /// Drawn inside the box; the name then goes below it.
    pub icon: Option<Icon>,
    /// A wheel of a car body (placed at its corner).
    pub corner: Option<Corner>,
    /// A rigid body (a car's wheels go round it).
    pub rigid_body: bool,
    /// Ports on the power path: drawn at mid-height, so the path runs along one row.
    pub row_ports: Vec<usize>,
    pub w: f64,
    pub h: f64,
}

/// Height of the name line below an icon box, px.
pub(crate) const LABEL_BELOW: f64 = 16.0;

impl Node {
    /// Width taken in its column (the box, or the name below it when wider).
    pub fn span_w(&self) -> f64 {
        if self.icon.is_some() {
            self.w
                .max(text::width(&self.name, super::NAME_FONT, true) + 4.0)
        } else {
            self.w
        }
    }
    /// Height taken in its column (the box and the name below an icon).
    pub fn span_h(&self) -> f64 {
        self.h
            + if self.icon.is_some() {
                LABEL_BELOW
            } else {
                0.0
            }
    }
}

/// A line from one port to another (one edge of a connection's star).
#[derive(Debug, Clone)]
pub(crate) struct Wire {
    pub kind: LineKind,
    pub from: (usize, usize),
    pub to: (usize, usize),
    /// The connection (net) the wire belongs to.
    pub net: usize,
}

/// One diagram level before placement.
#[derive(Debug, Clone)]
pub(crate) struct Level {
    pub nodes: Vec<Node>,
    pub wires: Vec<Wire>,
}

/// Text sizes and box metrics (px).
pub(crate) const NAME_FONT: f64 = 12.0;
pub(crate) const TYPE_FONT: f64 = 10.0;
pub(crate) const PORT_FONT: f64 = 9.5;
const PORT_PITCH: f64 = 17.0;
const PAD: f64 = 10.0;

/// The `(block, port)` pairs that a connection or an exported port of `d` names.
fn named_ports(d: &Diagram) -> HashSet<(String, String)> {
    let refs = d
        .connections
        .iter()
        .flatten()
        .chain(d.ports.iter().map(|(_, t)| t));
    refs.filter_map(|s| PortRef::parse(s))
        .map(|r| (r.block.to_string(), r.port.to_string()))
        .collect()
}

/// The ports of `decls` to draw: unused optional ports left out; then, as outputs, the
/// block's variables the connections name as signal sources (`car.r`: every variable is a
/// signal), in name order.
fn shown_ports(block: &str, decls: &[PortDecl], used: &HashSet<(String, String)>) -> Vec<PortDecl> {
    let mut shown: Vec<PortDecl> = decls
        .iter()
        .filter(|p| {
            let unused = !used.contains(&(block.to_string(), p.name.clone()));
            let optional = p.optional || (p.kind == PortKind::In && p.default.is_some());
            !(unused && optional)
        })
        .cloned()
        .collect();
    let mut variables: Vec<&str> = used
        .iter()
        .filter(|(b, p)| b == block && !decls.iter().any(|d| d.name == *p))
        .map(|(_, p)| p.as_str())
        .collect();
    variables.sort_unstable();
    shown.extend(variables.into_iter().map(PortDecl::output));
    shown
}

/// `lines` with the lines that share a port joined into one (in order of first mention):
/// an output listed in several connections drives one branching line.
fn merge_shared(lines: Vec<Vec<(usize, usize)>>) -> Vec<Vec<(usize, usize)>> {
    let mut parent: Vec<usize> = (0..lines.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut owner: HashMap<(usize, usize), usize> = HashMap::new();
    for (i, ends) in lines.iter().enumerate() {
        for e in ends {
            if let Some(&j) = owner.get(e) {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[a.max(b)] = a.min(b);
            } else {
                owner.insert(*e, i);
            }
        }
    }
    let mut merged: Vec<Vec<(usize, usize)>> = vec![Vec::new(); lines.len()];
    let mut seen: HashSet<(usize, usize)> = HashSet::new();
    for (i, ends) in lines.into_iter().enumerate() {
        let r = root(&mut parent, i);
        for e in ends {
            if seen.insert(e) {
                merged[r].push(e);
            }
        }
    }
    merged.retain(|ends| ends.len() >= 2);
    merged
}

impl Level {
    pub fn build(
        d: &Diagram,
        prefix: &str,
        table: &PortTable,
        opts: &DiagramOptions,
        warnings: &mut Vec<String>,
    ) -> Level {
        let used = named_ports(d);
        let mut nodes = Vec::new();
        for b in &d.blocks {
            let path = format!("{prefix}{}", b.name);
            let info = table.get(&path);
            let expandable = b.inner.is_some() || info.is_some_and(|i| i.inner.is_some());
            let ports = info.map_or_else(Vec::new, |i| shown_ports(&b.name, &i.ports, &used));
            let category = info.map_or_else(String::new, |i| i.category.clone());
            let href = expandable.then(|| opts.links.href(&path)).flatten();
            let mut node = Node::block(b, &category, &ports, href, expandable);
            node.corner = Corner::of(b);
            node.rigid_body = b.type_name == "RigidBody";
            nodes.push(node);
        }
        let lines = merge_shared(Self::lines(d, prefix, &mut nodes, warnings));
        let mut wires = Vec::new();
        for (net, ends) in lines.into_iter().enumerate() {
            // Signal lines run from their output; mechanical lines from their first port.
            let src = ends
                .iter()
                .position(|&(n, p)| nodes[n].ports[p].kind == PortKind::Out)
                .unwrap_or(0);
            let kind = LineKind::of(nodes[ends[src].0].ports[ends[src].1].kind);
            for (k, &e) in ends.iter().enumerate() {
                if k != src {
                    wires.push(Wire {
                        kind,
                        from: ends[src],
                        to: e,
                        net,
                    });
                }
            }
        }
        Level { nodes, wires }
    }

    /// The ends of every line: the exported ports' (adding their terminals to `nodes`),
    /// then the connections'.
    fn lines(
        d: &Diagram,
        prefix: &str,
        nodes: &mut Vec<Node>,
        warnings: &mut Vec<String>,
    ) -> Vec<Vec<(usize, usize)>> {
        // Block name -> box (the first of a repeated name): a scan per line end would make
        // a diagram of thousands of blocks quadratic.
        let mut by_name: HashMap<String, usize> = HashMap::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            by_name.entry(n.name.clone()).or_insert(i);
        }
        let find = |nodes: &[Node], r: &PortRef| -> Option<(usize, usize)> {
            let n = *by_name.get(r.block.as_str())?;
            let p = nodes[n].ports.iter().position(|p| p.name == r.port)?;
            Some((n, p))
        };
        let mut lines: Vec<Vec<(usize, usize)>> = Vec::new();
        for (name, target) in &d.ports {
            let Some(t) = PortRef::parse(target).and_then(|r| find(nodes, &r)) else {
                warnings.push(format!(
                    "{prefix}: exported port '{name}' -> '{target}' is not a port; left out"
                ));
                continue;
            };
            let kind = nodes[t.0].ports[t.1].kind;
            let own = match kind {
                PortKind::In => PortKind::Out,
                PortKind::Out => PortKind::In,
                k => k,
            };
            nodes.push(Node::terminal(name, own));
            let term = (nodes.len() - 1, 0);
            lines.push(if kind == PortKind::Out {
                vec![t, term]
            } else {
                vec![term, t]
            });
        }
        let at = if prefix.is_empty() {
            String::new()
        } else {
            format!("{prefix} ")
        };
        for (i, c) in d.connections.iter().enumerate() {
            let mut ends = Vec::new();
            for s in c {
                match PortRef::parse(s).and_then(|r| find(nodes, &r)) {
                    Some(e) => ends.push(e),
                    None => warnings.push(format!(
                        "{at}connections[{i}]: '{s}' is not a port of this diagram; left out"
                    )),
                }
            }
            if ends.len() >= 2 {
                lines.push(ends);
            }
        }
        lines
    }
}

impl Node {
    fn block(
        b: &BlockSpec,
        category: &str,
        decls: &[PortDecl],
        href: Option<String>,
        expandable: bool,
    ) -> Node {
        let (name, type_name) = (b.name.as_str(), b.type_name.as_str());
        // Mechanical ports alternate left/right until placement shows where their peers are.
        let mut mech = 0;
        let ports: Vec<Port> = decls
            .iter()
            .map(|p| {
                let side = match p.kind {
                    PortKind::In => Side::Left,
                    PortKind::Out => Side::Right,
                    PortKind::Rot
                    | PortKind::Trans
                    | PortKind::Frame
                    | PortKind::Heat
                    | PortKind::Road => {
                        mech += 1;
                        if mech % 2 == 1 {
                            Side::Left
                        } else {
                            Side::Right
                        }
                    }
                };
                Port {
                    name: p.name.clone(),
                    kind: p.kind,
                    side,
                }
            })
            .collect();
        let count = |k: PortKind| ports.iter().filter(|p| p.kind == k).count();
        let icon = Icon::of(type_name, &b.params, count(PortKind::In));
        let label_w = ports
            .iter()
            .map(|p| text::width(&p.name, PORT_FONT, false))
            .fold(0.0, f64::max);
        let w = match &icon {
            Some(Icon::Sum(_)) => 58.0,
            Some(_) if icon.as_ref().is_some_and(|i| !i.port_labels()) => 46.0,
            Some(_) => (2.0 * (label_w + 12.0) + 44.0).ceil(),
            None => {
                let title_w = text::width(name, NAME_FONT, true)
                    .max(text::width(type_name, TYPE_FONT, false) + 14.0);
                (title_w + 2.0 * (label_w + 12.0) + 2.0 * PAD)
                    .max(70.0)
                    .ceil()
            }
        };
        let n_mech = ports.len() - count(PortKind::In) - count(PortKind::Out);
        let per_side = (count(PortKind::In).max(count(PortKind::Out)) + n_mech).max(2) as f64;
        let min_h = if icon.is_some() { 46.0 } else { 44.0 };
        let h = (per_side * PORT_PITCH + 10.0).max(min_h).ceil();
        Node {
            name: name.to_string(),
            type_label: type_name.to_string(),
            category: category.to_string(),
            terminal: false,
            href,
            expandable,
            ports,
            icon,
            corner: None,
            rigid_body: false,
            row_ports: Vec::new(),
            w,
            h,
        }
    }

    fn terminal(name: &str, kind: PortKind) -> Node {
        let side = if kind == PortKind::In {
            Side::Left
        } else {
            Side::Right
        };
        Node {
            name: name.to_string(),
            type_label: String::new(),
            category: "terminal".into(),
            terminal: true,
            href: None,
            expandable: false,
            ports: vec![Port {
                name: String::new(),
                kind,
                side,
            }],
            icon: None,
            corner: None,
            rigid_body: false,
            row_ports: Vec::new(),
            w: (text::width(name, NAME_FONT, true) + 2.0 * PAD + 8.0).ceil(),
            h: 26.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_sharing_a_port_become_one_net() {
        // a.y -> b.u and a.y -> c.u (two connections), d.y -> e.u apart.
        let (a, b, c, d, e) = ((0, 0), (1, 0), (2, 0), (3, 0), (4, 0));
        let merged = merge_shared(vec![vec![a, b], vec![d, e], vec![a, c]]);
        assert_eq!(merged, [vec![a, b, c], vec![d, e]]);
    }

    #[test]
    fn only_unused_optional_ports_are_left_out() {
        let mut heat = PortDecl::new("heat", PortKind::Heat);
        heat.optional = true;
        let mut mu = PortDecl::input("mu_scale");
        mu.default = Some(1.0);
        let decls = vec![PortDecl::new("flange", PortKind::Rot), heat, mu];
        let names = |used: &HashSet<(String, String)>| -> Vec<String> {
            shown_ports("w", &decls, used)
                .into_iter()
                .map(|p| p.name)
                .collect()
        };
        // A required port stays even unconnected.
        assert_eq!(names(&HashSet::new()), ["flange"]);
        let used: HashSet<(String, String)> = [("w", "heat"), ("w", "mu_scale")]
            .iter()
            .map(|(b, p)| (b.to_string(), p.to_string()))
            .collect();
        assert_eq!(names(&used), ["flange", "heat", "mu_scale"]);
    }

    #[test]
    fn a_variable_wired_as_a_signal_is_drawn_as_an_output_of_its_block() {
        let decls = vec![PortDecl::new("frame", PortKind::Frame)];
        let used: HashSet<(String, String)> = [("car", "r"), ("car", "frame"), ("car", "u")]
            .iter()
            .map(|(b, p)| (b.to_string(), p.to_string()))
            .collect();
        let shown = shown_ports("car", &decls, &used);
        let names: Vec<(&str, PortKind)> =
            shown.iter().map(|p| (p.name.as_str(), p.kind)).collect();
        assert_eq!(
            names,
            [
                ("frame", PortKind::Frame),
                ("r", PortKind::Out),
                ("u", PortKind::Out)
            ]
        );
    }

    #[test]
    fn a_wheel_corner_comes_from_its_center_or_its_name() {
        let wheel = |name: &str, params: Value| BlockSpec {
            name: name.into(),
            type_name: "WheelCollider".into(),
            params: params.as_object().cloned().unwrap_or_default(),
            inner: None,
            file: None,
        };
        let c = Corner::of(&wheel("w1", serde_json::json!({"center": [-1.4, -0.8, 0]})));
        assert_eq!(
            c,
            Some(Corner {
                front: false,
                left: false
            })
        );
        // The name when the centre is an expression.
        let c = Corner::of(&wheel("wheel_FR", serde_json::json!({"center": "c"})));
        assert_eq!(
            c,
            Some(Corner {
                front: true,
                left: false
            })
        );
        assert_eq!(Corner::of(&wheel("spare", serde_json::json!({}))), None);
    }
}
