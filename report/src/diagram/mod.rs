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
//! Placement is layered (Sugiyama-style), in stages: columns (`rank`: longest path,
//! feedback lines broken), the order in each column (`order`: barycentre sweeps, with a
//! slot for every line passing a column), heights (`coord`: least-squares alignment of
//! connected ports), then orthogonal routes (`route`: vertical tracks in the channels
//! between columns, horizontal runs through the slots), so no line crosses a box. The
//! power path of a driveline is kept on one row and a car's wheels at its corners
//! (`hints`). Mechanical lines have no direction: they are laid out as running from the
//! first port listed in the connection to the others, so listing the upstream flange
//! first puts the driveline in reading order.

mod coord;
mod hints;
mod icons;
mod level;
mod order;
mod place;
mod ports;
mod rank;
mod route;
mod svg;
mod text;

pub use ports::{BlockInfo, PortTable};

use std::collections::HashMap;

use drivelink_core::block::PortKind;
use drivelink_core::diagram::Diagram;

use level::{Level, NAME_FONT, PORT_FONT, TYPE_FONT};

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
    /// A road line (thick, brown): a road surface shared by the wheels on it.
    Road,
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
            PortKind::Road => LineKind::Road,
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
            LineKind::Road => "#8a6236",
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
            LineKind::Road => "road",
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

/// `s` with the escapes of [`crate::markup::escape`] undone.
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
