//! The energy audit as a Sankey figure, and its numbers as text.
//!
//! Sources (and energy released from storage) flow into a "model" node, which passes it on
//! to each dissipating element and to energy stored at the end. The audit names an element
//! by its block (`fl`, a wheel) or by its friction joint (`fl.brake`, the wheel's brake;
//! `gearbox.clutch_A`); with the block types of the diagram, a sink is labelled and
//! coloured as a tire (a wheel block's loss: tire slip, damper), a brake, a clutch or
//! another loss ([`Sink`]). Values the audit's own rounding leaves (below 10^-12 of its
//! scale, or −0) are written as 0.

use std::collections::HashMap;

use serde_json::{json, Value};

use drivelink_core::model::EnergyAudit;

use crate::charts::num;

/// Block path -> block type, from the diagram (see [`crate::diagram::block_types`]).
pub type BlockTypes = HashMap<String, String>;

/// Below this fraction of the audit's scale an energy is rounding noise, written as 0.
const TINY: f64 = 1e-12;

/// Flows under this fraction of the total are merged into "other".
const SMALL: f64 = 1e-3;

/// What a dissipating element of the audit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    /// A wheel or tire block: its loss is the tire's slip work (and its damper's).
    Tire,
    /// A brake (block or friction joint).
    Brake,
    /// A clutch (block or friction joint).
    Clutch,
    /// Anything else (converter, road load, aero, damper, ...).
    Other,
}

impl Sink {
    /// The kind of the element `name` of block type `block_type` (when it is a block):
    /// by the type, else by the last part of the name (`fl.brake`, `gearbox.clutch_A`).
    pub fn of(name: &str, block_type: Option<&str>) -> Sink {
        let ty = block_type.unwrap_or("").to_ascii_lowercase();
        let last = name.rsplit('.').next().unwrap_or(name).to_ascii_lowercase();
        let key = if ty.is_empty() { &last } else { &ty };
        if ["wheel", "tire", "tyre"].iter().any(|w| ty.contains(w)) {
            Sink::Tire
        } else if key.contains("brake") {
            Sink::Brake
        } else if key.contains("clutch") {
            Sink::Clutch
        } else {
            Sink::Other
        }
    }

    /// Colour (r, g, b) of the sink's flows.
    fn rgb(self) -> (u8, u8, u8) {
        match self {
            Sink::Tire => (255, 127, 14),
            Sink::Brake => (214, 39, 40),
            Sink::Clutch => (148, 103, 189),
            Sink::Other => (140, 86, 75),
        }
    }
}

/// The label of loss `name`: with its kind (`fl (tire, WheelCollider)`, `fl.brake
/// (brake)`) or its block type (`converter (TorqueConverter)`) when known.
pub fn loss_label(name: &str, types: &BlockTypes) -> String {
    let ty = types.get(name).map(String::as_str);
    let kind = match Sink::of(name, ty) {
        Sink::Tire => "tire",
        Sink::Brake => "brake",
        Sink::Clutch => "clutch",
        Sink::Other => "",
    };
    match (kind, ty) {
        ("", None) => name.to_string(),
        ("", Some(t)) => format!("{name} ({t})"),
        (k, Some(t)) if !t.to_ascii_lowercase().contains(k) => format!("{name} ({k}, {t})"),
        (k, _) => format!("{name} ({k})"),
    }
}

/// The energy scale of an audit: the largest of the summed sources, the summed losses and
/// the kinetic and potential energies, J.
pub fn scale(a: &EnergyAudit) -> f64 {
    let sum = |v: &[(String, f64)]| v.iter().map(|(_, w)| w.abs()).sum::<f64>();
    [
        sum(&a.sources),
        sum(&a.losses),
        a.kinetic_initial.abs(),
        a.kinetic_final.abs(),
        a.potential_initial.abs(),
        a.potential_final.abs(),
    ]
    .into_iter()
    .filter(|v| v.is_finite())
    .fold(0.0, f64::max)
}

/// `j`, or 0 for −0 and for values below [`TINY`] times `scale`.
pub fn clean(j: f64, scale: f64) -> f64 {
    if j == 0.0 || j.abs() < TINY * scale {
        0.0
    } else {
        j
    }
}

/// `j` J in scientific notation with 7 significant digits, `0` for zero.
pub fn fmt_joules(j: f64) -> String {
    if j == 0.0 {
        "0".into()
    } else {
        format!("{j:.6e}")
    }
}

/// `1234.5` -> `"1.235 kJ"`.
pub fn fmt_energy(j: f64) -> String {
    let a = j.abs();
    if !a.is_finite() {
        return format!("{j} J");
    }
    let (v, u) = if a >= 1e6 {
        (j / 1e6, "MJ")
    } else if a >= 1e3 {
        (j / 1e3, "kJ")
    } else {
        (j, "J")
    };
    format!("{} {u}", sig(v, 4))
}

/// `v` with `digits` significant digits (scientific below 0.01).
fn sig(v: f64, digits: usize) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if v.abs() < 0.01 {
        return format!("{v:.prec$e}", prec = digits - 1);
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (digits as i32 - 1 - mag).max(0) as usize;
    format!("{v:.decimals$}")
}

/// One flow of the energy audit.
struct Flow {
    label: String,
    joules: f64,
    rgb: (u8, u8, u8),
}

impl Flow {
    /// A flow of `joules` (not negative) drawn in colour `rgb`.
    fn new(label: String, joules: f64, rgb: (u8, u8, u8)) -> Self {
        Flow { label, joules, rgb }
    }

    /// The Sankey node label: the flow's label and its energy.
    fn node_label(&self) -> String {
        format!("{}: {}", self.label, fmt_energy(self.joules))
    }

    fn link_color(&self) -> String {
        let (r, g, b) = self.rgb;
        format!("rgba({r},{g},{b},0.5)")
    }

    fn node_color(&self) -> String {
        let (r, g, b) = self.rgb;
        format!("rgb({r},{g},{b})")
    }
}

/// Flow colours: into the model, stored or released, residual.
const GREEN: (u8, u8, u8) = (44, 160, 44);
const BLUE: (u8, u8, u8) = (31, 119, 180);
const GREY: (u8, u8, u8) = (127, 127, 127);
/// The model node.
const HUB: &str = "#9aa5b1";

/// The energy audit as a Sankey figure; `types` names the block type of each loss that
/// is a block. Flows under 0.1 % of the total are merged into one "other" flow naming
/// them (a single small flow keeps its own name).
pub fn energy_figure(a: &EnergyAudit, types: &BlockTypes) -> Value {
    let (ins, outs) = audit_flows(a, types);
    let total: f64 = ins
        .iter()
        .map(|f| f.joules)
        .sum::<f64>()
        .max(outs.iter().map(|f| f.joules).sum());
    sankey(&merge_small(ins, total), &merge_small(outs, total))
}

/// The flows of an audit into the model and out of it, in the audit's order.
fn audit_flows(a: &EnergyAudit, types: &BlockTypes) -> (Vec<Flow>, Vec<Flow>) {
    let mut ins: Vec<Flow> = Vec::new();
    let mut outs: Vec<Flow> = Vec::new();
    for (name, w) in &a.sources {
        if *w >= 0.0 {
            ins.push(Flow::new(format!("{name} (source)"), *w, GREEN));
        } else {
            outs.push(Flow::new(
                format!("{name} (absorbed)"),
                -w,
                Sink::Other.rgb(),
            ));
        }
    }
    for (name, w) in &a.losses {
        let label = loss_label(name, types);
        if *w >= 0.0 {
            let sink = Sink::of(name, types.get(name).map(String::as_str));
            outs.push(Flow::new(label, *w, sink.rgb()));
        } else {
            ins.push(Flow::new(format!("{label} (returned)"), -w, GREEN));
        }
    }
    let d_ke = a.kinetic_final - a.kinetic_initial;
    let d_pe = a.potential_final - a.potential_initial;
    for (label, delta) in [("kinetic energy", d_ke), ("potential energy", d_pe)] {
        let (stored, released) = (format!("{label} stored"), format!("{label} released"));
        push_balance(&mut ins, &mut outs, delta, (stored, released), BLUE);
    }
    // Impacts dissipate; a stored energy that jumped at an event with no work done (a
    // spring compressed by a kerb step under a massless wheel) may add energy: then the
    // impact term is negative and the flow comes into the model.
    push_balance(
        &mut ins,
        &mut outs,
        a.impact_loss,
        (
            "impacts (velocity jumps, event jumps)".into(),
            "stored energy added at events (kerb steps, resets)".into(),
        ),
        Sink::Other.rgb(),
    );
    let residual = "numerical residual (integration error)".to_string();
    push_balance(
        &mut ins,
        &mut outs,
        a.residual,
        (residual.clone(), residual),
        GREY,
    );
    (ins, outs)
}

/// A change `delta` of the energy in the model: out of it (labelled `out`) when positive,
/// its magnitude into it (labelled `into`) when negative, nothing when zero.
fn push_balance(
    ins: &mut Vec<Flow>,
    outs: &mut Vec<Flow>,
    delta: f64,
    (out, into): (String, String),
    rgb: (u8, u8, u8),
) {
    if delta > 0.0 {
        outs.push(Flow::new(out, delta, rgb));
    } else if delta < 0.0 {
        ins.push(Flow::new(into, -delta, rgb));
    }
}

/// The finite, positive `flows` of at least 0.1 % of `total`, largest first, then the
/// smaller ones: one as it is, several merged into one "other" flow that names them.
fn merge_small(flows: Vec<Flow>, total: f64) -> Vec<Flow> {
    let (mut big, mut small): (Vec<Flow>, Vec<Flow>) = flows
        .into_iter()
        .filter(|f| f.joules.is_finite() && f.joules > 0.0)
        .partition(|f| f.joules >= SMALL * total);
    big.sort_by(|a, b| b.joules.total_cmp(&a.joules));
    small.sort_by(|a, b| b.joules.total_cmp(&a.joules));
    if small.len() == 1 {
        big.append(&mut small);
    } else if !small.is_empty() {
        let mut names: Vec<&str> = small.iter().take(3).map(|f| f.label.as_str()).collect();
        let more = small.len() - names.len();
        let more = format!("{more} more");
        if small.len() > 3 {
            names.push(&more);
        }
        big.push(Flow::new(
            format!("other: {}", names.join(", ")),
            small.iter().map(|f| f.joules).sum(),
            GREY,
        ));
    }
    big
}

/// The Sankey figure of flows `ins` into a "model" node and `outs` out of it.
fn sankey(ins: &[Flow], outs: &[Flow]) -> Value {
    let mut labels: Vec<String> = ins.iter().map(Flow::node_label).collect();
    let mut colors: Vec<String> = ins.iter().map(Flow::node_color).collect();
    let hub = labels.len();
    labels.push("model".into());
    colors.push(HUB.into());
    labels.extend(outs.iter().map(Flow::node_label));
    colors.extend(outs.iter().map(Flow::node_color));
    let (mut src, mut dst, mut val, mut col) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, f) in ins.iter().enumerate() {
        src.push(i);
        dst.push(hub);
        val.push(num(f.joules));
        col.push(f.link_color());
    }
    for (i, f) in outs.iter().enumerate() {
        src.push(hub);
        dst.push(hub + 1 + i);
        val.push(num(f.joules));
        col.push(f.link_color());
    }
    let height = (60.0 + 34.0 * ins.len().max(outs.len()) as f64).max(320.0);
    json!({
        "data": [{
            "type": "sankey", "orientation": "h", "valueformat": ".4s", "valuesuffix": " J",
            "node": {"label": labels, "pad": 14, "thickness": 16,
                     "color": colors, "line": {"width": 0}},
            "link": {"source": src, "target": dst, "value": val, "color": col},
        }],
        "layout": {
            "title": {"text": "Where the energy went", "x": 0.01, "xanchor": "left"},
            "height": height.round(), "margin": {"l": 20, "r": 20, "t": 50, "b": 20},
            "font": {"size": 12},
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn audit(losses: Vec<(&str, f64)>) -> EnergyAudit {
        let in_total: f64 = losses.iter().map(|l| l.1).sum();
        EnergyAudit {
            sources: vec![("engine".into(), in_total)],
            losses: losses.into_iter().map(|(n, w)| (n.into(), w)).collect(),
            kinetic_initial: 0.0,
            kinetic_final: 0.0,
            potential_initial: 0.0,
            potential_final: 0.0,
            impact_loss: 0.0,
            residual: 0.0,
            relative_residual: 0.0,
            heat: Default::default(),
        }
    }

    fn labels(f: &Value) -> Vec<String> {
        f["data"][0]["node"]["label"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_string())
            .collect()
    }
    #[test]
    fn energy_units() {
        assert_eq!(fmt_energy(1234.6), "1.235 kJ");
        assert_eq!(fmt_energy(12.0), "12.00 J");
        assert_eq!(fmt_energy(2.5e6), "2.500 MJ");
        assert_eq!(fmt_energy(1.079e-7), "1.079e-7 J");
    }

    #[test]
    fn sankey_balances_sources_and_sinks() {
        let a = EnergyAudit {
            sources: vec![("engine".into(), 1000.0)],
            losses: vec![("clutch".into(), 300.0), ("spring".into(), -50.0)],
            kinetic_initial: 0.0,
            kinetic_final: 750.0,
            potential_initial: 0.0,
            potential_final: 0.0,
            impact_loss: 0.0,
            residual: 0.0,
            relative_residual: 0.0,
            heat: Default::default(),
        };
        let f = energy_figure(&a, &BlockTypes::new());
        let link = &f["data"][0]["link"];
        let hub = f["data"][0]["node"]["label"]
            .as_array()
            .unwrap()
            .iter()
            .position(|l| l == "model")
            .unwrap();
        let sum = |into: bool| -> f64 {
            let src = link["source"].as_array().unwrap();
            let dst = link["target"].as_array().unwrap();
            let val = link["value"].as_array().unwrap();
            (0..val.len())
                .filter(|&i| if into { dst[i] == hub } else { src[i] == hub })
                .map(|i| val[i].as_f64().unwrap())
                .sum()
        };
        // In: 1000 (engine) + 50 (spring returned); out: 300 (clutch) + 750 (kinetic).
        assert_eq!(sum(true), 1050.0);
        assert_eq!(sum(false), 1050.0);
    }

    #[test]
    fn energy_added_at_kerb_events_flows_into_the_model() {
        // A kerb step compresses springs with no work done: the audit books −156 J of
        // impact loss (energy added at events); the Sankey shows it coming in, balanced.
        let mut a = audit(vec![("rolling", 1000.0)]);
        a.sources[0].1 = 844.0;
        a.impact_loss = -156.0;
        let f = energy_figure(&a, &BlockTypes::new());
        let l = labels(&f);
        let added = "stored energy added at events (kerb steps, resets): 156.0 J";
        assert!(l.iter().any(|x| x == added), "{l:?}");
        let link = &f["data"][0]["link"];
        let hub = l.iter().position(|x| x == "model").unwrap();
        let (src, dst, val) = (
            link["source"].as_array().unwrap(),
            link["target"].as_array().unwrap(),
            link["value"].as_array().unwrap(),
        );
        let sum = |into: bool| -> f64 {
            (0..val.len())
                .filter(|&i| if into { dst[i] == hub } else { src[i] == hub })
                .map(|i| val[i].as_f64().unwrap())
                .sum()
        };
        assert_eq!(sum(true), 1000.0);
        assert_eq!(sum(false), 1000.0);
    }

    #[test]
    fn tires_brakes_and_clutches_are_told_apart() {
        let types: BlockTypes = [
            ("fl", "WheelCollider"),
            ("brake", "Brake"),
            ("lockup", "Clutch"),
            ("converter", "TorqueConverter"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let a = audit(vec![
            ("fl", 400.0),
            ("fl.brake", 300.0),
            ("brake", 200.0),
            ("gearbox.clutch_A", 100.0),
            ("lockup", 90.0),
            ("converter", 80.0),
            ("road", 70.0),
        ]);
        let f = energy_figure(&a, &types);
        let l = labels(&f);
        for want in [
            "fl (tire, WheelCollider): 400.0 J",
            "fl.brake (brake): 300.0 J",
            "brake (brake): 200.0 J",
            "gearbox.clutch_A (clutch): 100.0 J",
            "lockup (clutch): 90.00 J",
            "converter (TorqueConverter): 80.00 J",
            "road: 70.00 J",
        ] {
            assert!(l.iter().any(|x| x == want), "{want} in {l:?}");
        }
        let color = |label: &str| {
            let i = l.iter().position(|x| x.starts_with(label)).unwrap();
            f["data"][0]["node"]["color"][i]
                .as_str()
                .unwrap()
                .to_string()
        };
        assert_eq!(color("fl ("), "rgb(255,127,14)");
        assert_eq!(color("fl.brake"), "rgb(214,39,40)");
        assert_eq!(color("brake ("), "rgb(214,39,40)");
        assert_eq!(color("lockup"), "rgb(148,103,189)");
        assert_ne!(color("fl ("), color("fl.brake"));
    }

    #[test]
    fn small_flows_are_named() {
        // One small flow keeps its own name; several are listed in one "other" flow.
        let mut a = audit(vec![("road", 1e6)]);
        a.residual = 2.0;
        let l = labels(&energy_figure(&a, &BlockTypes::new()));
        assert!(l.contains(&"numerical residual (integration error): 2.000 J".to_string()));
        assert!(!l.iter().any(|x| x.starts_with("other")), "{l:?}");
        let mut a = audit(vec![
            ("road", 1e6),
            ("a", 3.0),
            ("b", 2.0),
            ("c", 1.0),
            ("d", 0.5),
        ]);
        a.sources[0].1 = 1e6;
        a.residual = 6.5;
        let l = labels(&energy_figure(&a, &BlockTypes::new()));
        assert!(
            l.contains(
                &"other: numerical residual (integration error), a, b, 2 more: 13.00 J".to_string()
            ),
            "{l:?}"
        );
    }

    #[test]
    fn negative_zero_and_rounding_noise_are_written_as_zero() {
        assert_eq!(fmt_joules(clean(-0.0, 1e5)), "0");
        assert_eq!(fmt_joules(clean(-1.47e-9, 8.8e5)), "0");
        assert_eq!(fmt_energy(clean(-1.47e-9, 8.8e5)), "0 J");
        assert_eq!(fmt_joules(clean(0.06404, 8.8e5)), "6.404000e-2");
        assert_eq!(fmt_joules(clean(-0.0, 0.0)), "0");
        assert_eq!(scale(&audit(vec![("a", 3.0), ("b", -1.0)])), 4.0);
    }
}
