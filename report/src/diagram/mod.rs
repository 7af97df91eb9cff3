//! The block diagram as SVG, laid out left to right like Simulink.
//!
//! Blocks are boxes with their type and name; signal inputs sit on the left side, signal
//! outputs on the right, mechanical ports on the side facing the blocks they connect to.
//! Signal lines are arrows from the output to each input; mechanical lines are thick lines
//! in a colour per kind ([`LineKind`]: rot, trans, frame and heat
//! port kinds) drawn from the first port of the connection to each other one, with a dot
//! where a line branches. Subsystems and composite library blocks (`CrCr4Speed`,
//! `TorqueConverter`, `Engine`) are single boxes marked as expandable; their inner diagrams
//! are drawn as separate levels, with the exported ports as terminal boxes, and the outer
//! box links to them ([`Links`]).
//!
//! Placement is layered (Sugiyama-style) by the `layout-rs` crate: each block is a node of
//! its measured size, each line end-to-end pair an edge; long edges are routed through the
//! layout's dummy nodes. Mechanical lines have no direction: they are laid out as running
//! from the first port listed in the connection to the others, so listing the upstream
//! flange first puts the driveline in reading order.

mod place;
mod ports;
mod svg;
mod text;

pub use ports::{BlockInfo, PortTable};

use std::collections::HashMap;

use drivelink_core::block::{PortDecl, PortKind};
use drivelink_core::diagram::{Diagram, PortRef};

use crate::error::ReportError;

/// The kind of a line, which sets its style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LineKind {
    /// A signal line (arrow, thin, dark grey).
    Signal,
    /// A rotational mechanical line (thick, blue).
    Rot,
    /// A translational mechanical line (thick, green).
    Trans,
    /// A 3-D frame line (thick, purple): a rigid body.
    Frame,
    /// A thermal line (thick, red): a thermal node.
    Heat,
}

impl LineKind {
    /// The line kind of a port kind.
    pub fn of(kind: PortKind) -> LineKind {
        match kind {
            PortKind::In | PortKind::Out => LineKind::Signal,
            PortKind::Rot => LineKind::Rot,
            PortKind::Trans => LineKind::Trans,
            PortKind::Frame => LineKind::Frame,
            PortKind::Heat => LineKind::Heat,
        }
    }
    /// Stroke colour.
    pub fn color(&self) -> &'static str {
        match self {
            LineKind::Signal => "#333333",
            LineKind::Rot => "#1f6fb2",
            LineKind::Trans => "#2e9e44",
            LineKind::Frame => "#8c4bbf",
            LineKind::Heat => "#d4472c",
        }
    }
    /// Legend name.
    pub fn name(&self) -> &'static str {
        match self {
            LineKind::Signal => "signal",
            LineKind::Rot => "rotational",
            LineKind::Trans => "translational",
            LineKind::Frame => "frame",
            LineKind::Heat => "heat",
        }
    }
    /// Stroke width in px.
    pub fn width(&self) -> f64 {
        match self {
            LineKind::Signal => 1.3,
            _ => 4.0,
        }
    }
}

/// Where an expandable box (subsystem, composite block) points to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Links {
    /// No links.
    None,
    /// A file per inner diagram: `<stem>.<path>.svg` beside the top-level file.
    Files(String),
    /// An anchor `#diagram-<path>` in the same page (the HTML report).
    Anchors,
}

impl Links {
    /// Where the box of the block at `path` links to (`None` for [`Links::None`]).
    pub fn href(&self, path: &str) -> Option<String> {
        match self {
            Links::None => None,
            Links::Files(stem) => Some(format!("{}.svg", file_stem(&format!("{stem}.{path}")))),
            Links::Anchors => Some(format!("#{}", anchor(path))),
        }
    }
}

/// The anchor id of the inner diagram of block `path` in the report.
pub fn anchor(path: &str) -> String {
    format!("diagram-{}", file_stem(path))
}

/// `name` with characters unfit for a file name or id replaced by `_`.
fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Block path -> block type of every block box in the drawn `levels` (read back from
/// their `data-block` / `data-type` attributes; inner levels' blocks as `path.block`).
pub fn block_types(levels: &[DiagramSvg]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for level in levels {
        let prefix = if level.path.is_empty() {
            String::new()
        } else {
            format!("{}.", level.path)
        };
        for rect in level.svg.split("<rect class=\"block\" ").skip(1) {
            let (Some(name), Some(ty)) = (attr(rect, "data-block"), attr(rect, "data-type")) else {
                continue;
            };
            out.insert(format!("{prefix}{}", unescape(name)), unescape(ty));
        }
    }
    out
}

/// The value of attribute `name` at the start of the attribute list `tag` (up to `/>`).
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let tag = &tag[..tag.find("/>")?];
    let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// `s` with the escapes of [`crate::html::escape`] undone.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// One drawn level of a diagram.
#[derive(Debug, Clone, PartialEq)]
pub struct DiagramSvg {
    /// Block path of the level (`""` for the top level, `"gearbox"` for its inside).
    pub path: String,
    /// Title: the model name, or `path (Type)` for an inner level.
    pub title: String,
    /// The SVG document.
    pub svg: String,
}

/// Options of [`render`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagramOptions {
    /// Also draw every subsystem's and composite block's inner diagram (recursively).
    pub expand: bool,
    /// Links from expandable boxes to their inner diagrams.
    pub links: Links,
}

/// The drawings of a diagram and what could not be drawn exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawing {
    /// The top level first, then the inner levels depth first (when expanded).
    pub levels: Vec<DiagramSvg>,
    /// Lines naming unknown blocks or ports (left out), blocks whose ports were guessed.
    pub warnings: Vec<String>,
}

/// Draws `d` (and, with `opts.expand`, its inner levels) with the ports of `ports`.
pub fn render(
    d: &Diagram,
    ports: &PortTable,
    opts: &DiagramOptions,
) -> Result<Drawing, ReportError> {
    let mut out = Drawing {
        levels: Vec::new(),
        warnings: ports.warnings().to_vec(),
    };
    let title = if d.name.is_empty() {
        "model".to_string()
    } else {
        d.name.clone()
    };
    render_level(d, "", &title, ports, opts, &mut out, 0)?;
    Ok(out)
}

fn render_level(
    d: &Diagram,
    prefix: &str,
    title: &str,
    ports: &PortTable,
    opts: &DiagramOptions,
    out: &mut Drawing,
    depth: usize,
) -> Result<(), ReportError> {
    let level = Level::build(d, prefix, ports, opts, &mut out.warnings);
    let placed = place::place(level, title)?;
    out.levels.push(DiagramSvg {
        path: prefix.trim_end_matches('.').to_string(),
        title: title.to_string(),
        svg: svg::write(&placed, title),
    });
    if !opts.expand || depth >= 64 {
        return Ok(());
    }
    for b in &d.blocks {
        let path = format!("{prefix}{}", b.name);
        let inner = b
            .inner
            .as_deref()
            .or_else(|| ports.get(&path).and_then(|i| i.inner.as_ref()));
        if let Some(inner) = inner {
            let title = format!("{path} ({})", b.type_name);
            render_level(
                inner,
                &format!("{path}."),
                &title,
                ports,
                opts,
                out,
                depth + 1,
            )?;
        }
    }
    Ok(())
}

/// Which side of a box a port sits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

/// A port of a node.
#[derive(Debug, Clone)]
struct Port {
    name: String,
    kind: PortKind,
    side: Side,
}

/// A box to place: a block, or a terminal standing for an exported port of an inner level.
#[derive(Debug, Clone)]
struct Node {
    name: String,
    /// Second text line (block type); empty for terminals.
    type_label: String,
    category: String,
    terminal: bool,
    /// Where the box links to (expandable boxes).
    href: Option<String>,
    expandable: bool,
    ports: Vec<Port>,
    w: f64,
    h: f64,
}

/// A line from one port to another (one edge of a connection's star).
#[derive(Debug, Clone)]
struct Wire {
    kind: LineKind,
    from: (usize, usize),
    to: (usize, usize),
    /// The line has more than two ports: draw a junction dot at `from`.
    branch: bool,
}

/// One diagram level before placement.
#[derive(Debug, Clone)]
struct Level {
    nodes: Vec<Node>,
    wires: Vec<Wire>,
}

/// Text sizes and box metrics (px).
const NAME_FONT: f64 = 12.0;
const TYPE_FONT: f64 = 10.0;
const PORT_FONT: f64 = 9.5;
const PORT_PITCH: f64 = 17.0;
const PAD: f64 = 10.0;

impl Level {
    fn build(
        d: &Diagram,
        prefix: &str,
        table: &PortTable,
        opts: &DiagramOptions,
        warnings: &mut Vec<String>,
    ) -> Level {
        let mut nodes = Vec::new();
        for b in &d.blocks {
            let path = format!("{prefix}{}", b.name);
            let info = table.get(&path);
            let expandable = b.inner.is_some() || info.is_some_and(|i| i.inner.is_some());
            let ports = info.map_or_else(Vec::new, |i| i.ports.clone());
            let category = info.map_or_else(String::new, |i| i.category.clone());
            nodes.push(Node::block(
                &b.name,
                &b.type_name,
                &category,
                &ports,
                expandable.then(|| opts.links.href(&path)).flatten(),
                expandable,
            ));
        }
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
        // Exported ports of an inner level become terminals wired to their targets.
        let mut lines: Vec<Vec<(usize, usize)>> = Vec::new();
        for (name, target) in &d.ports {
            let Some(t) = PortRef::parse(target).and_then(|r| find(&nodes, &r)) else {
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
        for (i, c) in d.connections.iter().enumerate() {
            let mut ends = Vec::new();
            for s in c {
                match PortRef::parse(s).and_then(|r| find(&nodes, &r)) {
                    Some(e) => ends.push(e),
                    None => warnings.push(format!(
                        "{}connections[{i}]: '{s}' is not a port of this diagram; left out",
                        if prefix.is_empty() {
                            String::new()
                        } else {
                            format!("{prefix} ")
                        }
                    )),
                }
            }
            if ends.len() >= 2 {
                lines.push(ends);
            }
        }
        let mut wires = Vec::new();
        for ends in lines {
            // Signal lines run from their output; mechanical lines from their first port.
            let src = ends
                .iter()
                .position(|&(n, p)| nodes[n].ports[p].kind == PortKind::Out)
                .unwrap_or(0);
            let kind = LineKind::of(nodes[ends[src].0].ports[ends[src].1].kind);
            let branch = ends.len() > 2;
            for (k, &e) in ends.iter().enumerate() {
                if k != src {
                    wires.push(Wire {
                        kind,
                        from: ends[src],
                        to: e,
                        branch,
                    });
                }
            }
        }
        Level { nodes, wires }
    }
}

impl Node {
    fn block(
        name: &str,
        type_name: &str,
        category: &str,
        decls: &[PortDecl],
        href: Option<String>,
        expandable: bool,
    ) -> Node {
        // Mechanical ports alternate left/right until placement shows where their peers are.
        let mut mech = 0;
        let ports: Vec<Port> = decls
            .iter()
            .map(|p| {
                let side = match p.kind {
                    PortKind::In => Side::Left,
                    PortKind::Out => Side::Right,
                    PortKind::Rot | PortKind::Trans | PortKind::Frame | PortKind::Heat => {
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
        let label_w = ports
            .iter()
            .map(|p| text::width(&p.name, PORT_FONT, false))
            .fold(0.0, f64::max);
        let title_w =
            text::width(name, NAME_FONT, true).max(text::width(type_name, TYPE_FONT, false) + 14.0);
        let w = (title_w + 2.0 * (label_w + 12.0) + 2.0 * PAD)
            .max(70.0)
            .ceil();
        let count = |k: PortKind| ports.iter().filter(|p| p.kind == k).count();
        let n_mech = count(PortKind::Rot)
            + count(PortKind::Trans)
            + count(PortKind::Frame)
            + count(PortKind::Heat);
        let per_side = (count(PortKind::In).max(count(PortKind::Out)) + n_mech).max(2) as f64;
        let h = (per_side * PORT_PITCH + 10.0).max(44.0).ceil();
        Node {
            name: name.to_string(),
            type_label: type_name.to_string(),
            category: category.to_string(),
            terminal: false,
            href,
            expandable,
            ports,
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
            w: (text::width(name, NAME_FONT, true) + 2.0 * PAD + 8.0).ceil(),
            h: 26.0,
        }
    }
}
