//! SVG text of a placed diagram level.
//!
//! Structure (tests and the report read it): every block box is `<rect class="block"
//! data-block="NAME" data-type="TYPE" x=".." y=".." width=".." height=".."/>` inside
//! `<g class="node">`, terminals use class `terminal` (no type); lines are `<path
//! class="line KIND" data-net="N" data-from="BLOCK" data-to="BLOCK" d="M x,y L x,y ...">`
//! (horizontal and vertical segments only; a branch starts where it leaves the lines of
//! its net drawn before it) drawn under the boxes, branch points `<circle
//! class="junction">`. Text is escaped. Hovering a box shows its name, type and ports
//! (`<title>`), hovering a line its ends. A block with an icon ([`super::icons`]) has its
//! name below its box.

use std::fmt::Write;

use drivelink_core::block::PortKind;

use super::level::{Port, Side, LABEL_BELOW};
use super::place::{Placed, PlacedNode, LEGEND_H, MARGIN};
use super::{icons, LineKind, NAME_FONT, PORT_FONT, TYPE_FONT};
use crate::markup::escape;

const FONT: &str = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif";

/// Fill and stroke of a box by library category.
fn colors(category: &str) -> (&'static str, &'static str) {
    match category {
        "signal" | "signal / vehicle" => ("#eef5fc", "#4a77a8"),
        "mechanical" => ("#fdf1e4", "#b5742c"),
        "powertrain" => ("#fbf5dc", "#a08a2a"),
        "vehicle" => ("#f1eaf7", "#7d5aa6"),
        "subsystem" => ("#eeeeee", "#555555"),
        "terminal" => ("#ffffff", "#555555"),
        _ => ("#ffffff", "#999999"),
    }
}

/// A coordinate with at most one decimal.
pub(crate) fn n(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// The SVG document of `p` with `title` on top.
pub fn write(p: &Placed, title: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="drivelink-diagram" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT}">"#,
        w = n(p.width),
        h = n(p.height)
    );
    s.push_str(
        "<defs><marker id=\"dl-arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#333333\"/></marker></defs>\n",
    );
    let _ = writeln!(
        s,
        r##"<rect x="0" y="0" width="{}" height="{}" fill="#ffffff"/>"##,
        n(p.width),
        n(p.height)
    );
    let _ = writeln!(
        s,
        r##"<text x="{}" y="{}" font-size="16" font-weight="bold" fill="#222222">{}</text>"##,
        n(MARGIN),
        n(MARGIN),
        escape(title)
    );
    for w in &p.wires {
        write_wire(&mut s, w);
    }
    for &(kind, (x, y)) in &p.dots {
        let r = if kind == LineKind::Signal { 3.2 } else { 5.5 };
        let _ = writeln!(
            s,
            r#"<circle class="junction" cx="{}" cy="{}" r="{r}" fill="{}"/>"#,
            n(x),
            n(y),
            kind.color()
        );
    }
    for node in &p.nodes {
        write_node(&mut s, node);
    }
    write_legend(&mut s, p);
    s.push_str("</svg>\n");
    s
}

fn write_wire(s: &mut String, w: &super::place::PlacedWire) {
    let mut d = String::new();
    for (k, p) in w.points.iter().enumerate() {
        let _ = write!(
            d,
            "{}{},{}",
            if k == 0 { "M" } else { " L" },
            n(p.0),
            n(p.1)
        );
    }
    let marker = if w.kind == LineKind::Signal {
        r#" marker-end="url(#dl-arrow)""#
    } else {
        ""
    };
    let _ = writeln!(
        s,
        r#"<path class="line {cls}" data-net="{net}" data-from="{a}" data-to="{b}" d="{d}" fill="none" stroke="{c}" stroke-width="{sw}" stroke-linejoin="round" stroke-linecap="round"{marker}><title>{t}</title></path>"#,
        cls = w.kind.name(),
        net = w.net,
        a = escape(&w.ends.0),
        b = escape(&w.ends.1),
        c = w.kind.color(),
        sw = w.kind.width(),
        t = escape(&w.label)
    );
}

fn write_node(s: &mut String, pn: &PlacedNode) {
    let node = &pn.node;
    let (fill, stroke) = colors(&node.category);
    let (x, y, w, h) = (pn.x, pn.y, node.w, node.h);
    if let Some(href) = &node.href {
        let _ = write!(s, r#"<a href="{}">"#, escape(href));
    }
    let ports: Vec<String> = node
        .ports
        .iter()
        .map(|p| format!("{} [{}]", p.name, p.kind.as_str()))
        .collect();
    let tip = if node.terminal {
        format!("exported port {}", node.name)
    } else {
        format!(
            "{} ({})\nports: {}{}",
            node.name,
            node.type_label,
            ports.join(", "),
            if node.expandable {
                "\nclick to open the inner diagram"
            } else {
                ""
            }
        )
    };
    let _ = writeln!(s, r#"<g class="node"><title>{}</title>"#, escape(&tip));
    let class = if node.terminal { "terminal" } else { "block" };
    let rx = if node.terminal { 12 } else { 4 };
    let _ = writeln!(
        s,
        r#"<rect class="{class}" data-block="{}"{} x="{}" y="{}" width="{}" height="{}" rx="{rx}" fill="{fill}" stroke="{stroke}" stroke-width="1.4"/>"#,
        escape(&node.name),
        if node.terminal {
            String::new()
        } else {
            format!(" data-type=\"{}\"", escape(&node.type_label))
        },
        n(x),
        n(y),
        n(w),
        n(h)
    );
    if node.expandable {
        // A second outline and a corner mark: the box opens into an inner diagram.
        let _ = writeln!(
            s,
            r#"<rect x="{}" y="{}" width="{}" height="{}" rx="3" fill="none" stroke="{stroke}" stroke-width="0.8"/>"#,
            n(x + 3.0),
            n(y + 3.0),
            n(w - 6.0),
            n(h - 6.0)
        );
        let _ = writeln!(
            s,
            r#"<path d="M{},{} l8,0 l0,8 z" fill="{stroke}"/>"#,
            n(x + w - 12.0),
            n(y + 4.0)
        );
    }
    write_labels(s, pn, stroke);
    let labels = node.icon.as_ref().is_none_or(|i| i.port_labels());
    for (port, &(px, py)) in node.ports.iter().zip(&pn.port_pos) {
        write_port(s, port, px, py, node.terminal || !labels);
    }
    s.push_str("</g>\n");
    if node.href.is_some() {
        s.push_str("</a>\n");
    }
}

/// The texts of a box: its name (and type), or its icon with the name below.
fn write_labels(s: &mut String, pn: &PlacedNode, stroke: &str) {
    let node = &pn.node;
    let (x, y, w, h) = (pn.x, pn.y, node.w, node.h);
    let cx = x + 0.5 * w;
    let cy = y + 0.5 * h;
    let name = |s: &mut String, ty: f64| {
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" font-size="{NAME_FONT}" font-weight="bold" text-anchor="middle" fill="#222222">{}</text>"##,
            n(cx),
            n(ty),
            escape(&node.name)
        );
    };
    if node.terminal {
        name(s, cy + 4.0);
    } else if let Some(icon) = &node.icon {
        let inputs: Vec<(f64, f64)> = node
            .ports
            .iter()
            .zip(&pn.port_pos)
            .filter(|(p, _)| p.kind == PortKind::In)
            .map(|(_, &q)| q)
            .collect();
        icons::write(s, icon, (x, y, w, h), stroke, &inputs);
        name(s, y + h + LABEL_BELOW - 3.0);
    } else {
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" font-size="{TYPE_FONT}" font-style="italic" text-anchor="middle" fill="#666666">{}</text>"##,
            n(cx),
            n(cy - 4.0),
            escape(&node.type_label)
        );
        name(s, cy + 11.0);
    }
}

fn write_port(s: &mut String, port: &Port, px: f64, py: f64, terminal: bool) {
    let out = if port.side == Side::Left { -1.0 } else { 1.0 };
    match port.kind {
        PortKind::In => {
            // A chevron pointing into the box.
            let _ = writeln!(
                s,
                r##"<path d="M{},{} l5,4 l-5,4" fill="none" stroke="#333333" stroke-width="1.2"/>"##,
                n(px - 1.0),
                n(py - 4.0)
            );
        }
        PortKind::Out => {
            let _ = writeln!(
                s,
                r##"<path d="M{},{} l6,4 l-6,4 z" fill="#333333"/>"##,
                n(px),
                n(py - 4.0)
            );
        }
        PortKind::Rot | PortKind::Trans | PortKind::Frame | PortKind::Heat | PortKind::Road => {
            let c = LineKind::of(port.kind).color();
            let _ = writeln!(
                s,
                r#"<rect x="{}" y="{}" width="8" height="8" fill="{c}"/>"#,
                n(px - 4.0),
                n(py - 4.0)
            );
        }
    }
    if terminal || port.name.is_empty() {
        return;
    }
    let (tx, anchor) = if out < 0.0 {
        (px + 9.0, "start")
    } else {
        (px - 9.0, "end")
    };
    let _ = writeln!(
        s,
        r##"<text x="{}" y="{}" font-size="{PORT_FONT}" text-anchor="{anchor}" fill="#444444">{}</text>"##,
        n(tx),
        n(py + 3.5),
        escape(&port.name)
    );
}

fn write_legend(s: &mut String, p: &Placed) {
    let y = p.height - LEGEND_H * 0.5 - 4.0;
    let mut x = MARGIN;
    let mut kinds = vec![LineKind::Signal, LineKind::Rot, LineKind::Trans];
    for extra in [LineKind::Frame, LineKind::Heat, LineKind::Road] {
        if p.wires.iter().any(|w| w.kind == extra) {
            kinds.push(extra);
        }
    }
    for k in kinds {
        let marker = if k == LineKind::Signal {
            r#" marker-end="url(#dl-arrow)""#
        } else {
            ""
        };
        let _ = writeln!(
            s,
            r#"<path class="legend" d="M{},{} l28,0" stroke="{}" stroke-width="{}"{marker}/>"#,
            n(x),
            n(y),
            k.color(),
            k.width()
        );
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" font-size="11" fill="#444444">{}</text>"##,
            n(x + 34.0),
            n(y + 4.0),
            k.name()
        );
        x += 34.0 + super::text::width(k.name(), 11.0, false) + 22.0;
    }
}
