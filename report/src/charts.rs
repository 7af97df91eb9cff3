//! plotly.js figures (as JSON) for the scopes and the energy audit.
//!
//! A scope becomes one figure: its panels stacked on a shared time axis (zoom and pan act on
//! all of them), each panel with a left y axis and, for a second display unit, a right one
//! ([`drivelink_plots::signals`], the same grouping as the PNGs). Hovering shows every
//! signal's value at that time with its unit. Clicking a legend entry hides or shows a
//! signal. Above the panels an event strip has one row per event kind: hovering a marker
//! shows the time, the block, the kind and the detail; marked events (every kind but time
//! events) also get a dotted vertical line across the panels, or one shaded band for a
//! dense run of them ([`crate::events`]).
//!
//! Series longer than [`WHOLE_MAX`] samples are decimated per pixel-sized bucket keeping
//! first/min/max/last ([`drivelink_plots::decimate`]); samples are written with 6 significant digits (the
//! precision the hover shows), event times and axis ranges with 9.

use serde_json::{json, Map, Value};

use drivelink_core::model::EnergyAudit;
use drivelink_core::result::{EventTag, SimResult};
use drivelink_core::scope::ScopeSpec;
use drivelink_plots::decimate::{decimate, linear};
use drivelink_plots::signals::{resolve, Dash, Panel, PanelSignal};
use drivelink_plots::{PlotError, PALETTE};

/// Buckets per trace: at most four points each survive decimation.
pub const BUCKETS: usize = 2000;
/// Series of at most this many samples are not decimated.
pub const WHOLE_MAX: usize = 2 * BUCKETS;
/// Event markers per scope at most (evenly thinned beyond).
pub const MAX_EVENT_MARKS: usize = 2000;

/// Pixel heights used to size a figure.
const PANEL_H: f64 = 300.0;
const PANEL_MIN_H: f64 = 130.0;
const STRIP_ROW_H: f64 = 14.0;
const GAP_H: f64 = 28.0;
const MARGIN_T: f64 = 56.0;
const MARGIN_B: f64 = 56.0;

/// A number rounded to 9 significant digits (JSON `null` when not finite).
pub fn num(v: f64) -> Value {
    if !v.is_finite() {
        return Value::Null;
    }
    let r: f64 = format!("{v:.8e}").parse().unwrap_or(v);
    serde_json::Number::from_f64(r).map_or(Value::Null, Value::Number)
}

/// A sample to draw, rounded to 6 significant digits: the hover shows `%{y:.6g}`, so the
/// value shown is the value sampled (JSON `null` when not finite).
pub fn sample(v: f64) -> Value {
    if !v.is_finite() {
        return Value::Null;
    }
    let r: f64 = format!("{v:.5e}").parse().unwrap_or(v);
    serde_json::Number::from_f64(r).map_or(Value::Null, Value::Number)
}

fn color(k: usize) -> String {
    let c = PALETTE[k % PALETTE.len()];
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// Colour of an event kind's markers.
fn event_color(kind: EventTag) -> &'static str {
    match kind {
        EventTag::Lock => "#2ca02c",
        EventTag::Unlock => "#d62728",
        EventTag::Free => "#7f7f7f",
        EventTag::Engage => "#1f77b4",
        EventTag::ZeroCrossing => "#9467bd",
        EventTag::TimeEvent => "#8c564b",
        EventTag::Stop => "#000000",
        EventTag::Impact => "#ff7f0e",
        EventTag::Shift => "#17becf",
        EventTag::Stall => "#bcbd22",
    }
}

const EVENT_ORDER: [EventTag; 10] = [
    EventTag::Lock,
    EventTag::Unlock,
    EventTag::Engage,
    EventTag::Free,
    EventTag::ZeroCrossing,
    EventTag::Impact,
    EventTag::Shift,
    EventTag::Stall,
    EventTag::Stop,
    EventTag::TimeEvent,
];

/// The plotly figure (`{data, layout}`) of one scope.
pub fn scope_figure(result: &SimResult, scope: &ScopeSpec) -> Result<Value, PlotError> {
    let panels = resolve(result, scope)?;
    let (t, x_range) = abscissa(result, scope)?;
    // An XY scope plots against a signal (no event strip, equal axis scaling).
    let xy = scope.x.as_deref();

    // Event strip rows: kinds present, in a fixed order.
    let kinds: Vec<EventTag> = EVENT_ORDER
        .into_iter()
        .filter(|k| xy.is_none() && result.events.iter().any(|e| e.kind == *k))
        .collect();
    let g = Geometry::new(panels.len(), kinds.len());
    let mut fig = FigureParts {
        data: Vec::new(),
        layout: Map::new(),
        next_axis: 1,
    };
    let mut top = 1.0;
    if !kinds.is_empty() {
        let lo = 1.0 - g.frac(g.strip_h);
        top = lo - g.frac(GAP_H);
        fig.event_strip(result, &kinds, (lo, 1.0));
    }

    let mut bottom_axis = 1;
    let trajectory = xy.is_some() && panels.len() == 1;
    for (k, p) in panels.iter().enumerate() {
        let hi = top - g.frac((g.panel_h + GAP_H) * k as f64);
        let lo = hi - g.frac(g.panel_h);
        let ids = fig.panel_axes(p, (lo, hi), scope.ylim, trajectory);
        bottom_axis = ids[0];
        for s in &p.signals {
            fig.data.push(signal_trace(s, t, x_range, ids[s.axis]));
        }
    }
    let height = g.plot_h + MARGIN_T + MARGIN_B;
    finish_layout(
        &mut fig.layout,
        result,
        scope,
        x_range,
        (bottom_axis, top),
        height,
    );
    Ok(json!({"data": fig.data, "layout": Value::Object(fig.layout)}))
}

/// The abscissa samples of `scope` (the result's time, or the x signal of an XY scope) and
/// their range (first to last time, or the finite extremes of the signal).
fn abscissa<'r>(
    result: &'r SimResult,
    scope: &ScopeSpec,
) -> Result<(&'r [f64], (f64, f64)), PlotError> {
    if result.time.is_empty() {
        return Err(PlotError::EmptyResult {
            scope: scope.name.clone(),
        });
    }
    let xy = scope.x.as_deref();
    let t: &[f64] = match xy {
        None => &result.time,
        Some(xn) => result.get(xn).ok_or_else(|| PlotError::UnknownSignal {
            scope: scope.name.clone(),
            signal: xn.to_string(),
            available: result.names.iter().take(10).cloned().collect(),
            more: result.names.len().saturating_sub(10),
        })?,
    };
    let x_range = match xy {
        None => (t[0], t[t.len() - 1]),
        Some(_) => t
            .iter()
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            }),
    };
    Ok((t, x_range))
}

/// Heights of a scope figure's parts, in pixels.
struct Geometry {
    /// The event strip (0 without one).
    strip_h: f64,
    /// One panel.
    panel_h: f64,
    /// Everything between the margins: strip, panels and the gaps between them.
    plot_h: f64,
}

impl Geometry {
    /// The heights for `panels` stacked panels under an event strip of `kinds` rows.
    fn new(panels: usize, kinds: usize) -> Self {
        let strip_h = if kinds == 0 {
            0.0
        } else {
            STRIP_ROW_H * kinds as f64 + 16.0
        };
        // One panel gets the full height; stacked panels share a bit more than that.
        let panel_h = if panels <= 1 {
            PANEL_H
        } else {
            (1.7 * PANEL_H / panels as f64).max(PANEL_MIN_H)
        };
        let panels_h = panel_h * panels as f64 + GAP_H * panels.saturating_sub(1) as f64;
        let plot_h = panels_h + if kinds == 0 { 0.0 } else { strip_h + GAP_H };
        Geometry {
            strip_h,
            panel_h,
            plot_h,
        }
    }

    /// `px` pixels as a fraction of the plot height (plotly's paper units).
    fn frac(&self, px: f64) -> f64 {
        px / self.plot_h
    }
}

/// A scope figure being assembled: its traces, its layout and the next free y axis number.
struct FigureParts {
    data: Vec<Value>,
    layout: Map<String, Value>,
    next_axis: usize,
}

impl FigureParts {
    /// The event strip in the paper band `domain`: a category y axis with one row per kind
    /// in `kinds` (the first on top) and one marker trace per kind.
    fn event_strip(&mut self, result: &SimResult, kinds: &[EventTag], (lo, hi): (f64, f64)) {
        let axis = self.next_axis;
        self.layout.insert(
            axis_key(axis),
            json!({
                "domain": [lo, hi], "anchor": "x", "type": "category",
                "categoryorder": "array",
                "categoryarray": kinds.iter().rev().map(|k| k.as_str()).collect::<Vec<_>>(),
                "fixedrange": true, "showgrid": true, "tickfont": {"size": 10}
            }),
        );
        for kind in kinds {
            self.data.push(event_trace(result, *kind, axis));
        }
        self.next_axis += 1;
    }

    /// The y axes of panel `p` in the paper band `(lo, hi)`: the left one (ranged by `ylim`,
    /// else at equal scale with x for a `trajectory`) and the right one for a second unit.
    /// Returns their axis numbers, left first.
    fn panel_axes(
        &mut self,
        p: &Panel<'_>,
        (lo, hi): (f64, f64),
        ylim: Option<(f64, f64)>,
        trajectory: bool,
    ) -> Vec<usize> {
        let left = self.next_axis;
        let mut ids = vec![left];
        let mut left_axis = json!({
            "domain": [lo.max(0.0), hi], "anchor": "x", "zeroline": false,
            "title": {"text": p.units[0]}, "exponentformat": "e"
        });
        if let Some((a, b)) = ylim {
            left_axis["range"] = json!([num(a), num(b)]);
            left_axis["autorange"] = json!(false);
        } else if trajectory && p.units.len() == 1 {
            // A trajectory: one metre is as long on both axes.
            left_axis["scaleanchor"] = json!("x");
            left_axis["scaleratio"] = json!(1);
        }
        self.layout.insert(axis_key(left), left_axis);
        self.next_axis += 1;
        if p.units.len() > 1 {
            let right = self.next_axis;
            ids.push(right);
            self.layout.insert(
                axis_key(right),
                json!({
                    "overlaying": format!("y{}", axis_suffix(left)), "side": "right",
                    "anchor": "x", "zeroline": false, "showgrid": false,
                    "title": {"text": p.units[1]}, "exponentformat": "e"
                }),
            );
            self.next_axis += 1;
        }
        ids
    }
}

/// The line trace of signal `s` against the abscissa `t`, on y axis number `axis`; hovering
/// shows the value with its unit. Up to [`WHOLE_MAX`] samples are written as they are (so
/// every such trace of a run has the same `x` array, written once in the page); longer
/// series are decimated over `x_range`.
fn signal_trace(s: &PanelSignal<'_>, t: &[f64], x_range: (f64, f64), axis: usize) -> Value {
    let t = &t[..s.values.len()];
    let (xs, ys): (Vec<Value>, Vec<Value>) = if t.len() <= WHOLE_MAX {
        let xs = t.iter().map(|&x| sample(x)).collect();
        let ys = s.values.iter().map(|&y| sample(y * s.factor)).collect();
        (xs, ys)
    } else {
        let segs = decimate(linear(t, s.values, s.factor), x_range, BUCKETS);
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for (i, seg) in segs.iter().enumerate() {
            if i > 0 {
                xs.push(Value::Null);
                ys.push(Value::Null);
            }
            for &(x, y) in seg {
                xs.push(sample(x));
                ys.push(sample(y));
            }
        }
        (xs, ys)
    };
    let unit = if s.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", s.unit)
    };
    json!({
        "type": "scatter", "mode": "lines", "name": s.label,
        "x": xs, "y": ys,
        "xaxis": "x", "yaxis": format!("y{}", axis_suffix(axis)),
        "line": {
            "color": color(s.color), "width": if s.dash == Dash::Solid { 2.0 } else { 2.4 },
            "dash": s.dash.plotly(), "shape": if s.step { "hv" } else { "linear" }
        },
        "connectgaps": false,
        "hovertemplate": format!("%{{y:.6g}}{}<extra>{}</extra>", crate::html::escape(&unit), crate::html::escape(s.label)),
    })
}

/// The rest of a scope figure's layout: the shared x axis (anchored to y axis number
/// `bottom_axis`), the event lines (below paper height `top`), the figure `height`, title,
/// hover mode, margins and legend.
fn finish_layout(
    layout: &mut Map<String, Value>,
    result: &SimResult,
    scope: &ScopeSpec,
    x_range: (f64, f64),
    (bottom_axis, top): (usize, f64),
    height: f64,
) {
    let xy = scope.x.as_deref();
    let x_title = xy.unwrap_or("time [s]");
    let mut x_axis = json!({
        "title": {"text": crate::html::escape(x_title)}, "anchor": format!("y{}", axis_suffix(bottom_axis)),
        "domain": [0.0, 1.0],
        "showspikes": true, "spikemode": "across", "spikethickness": 1,
        "spikecolor": "#999999", "spikedash": "dot", "exponentformat": "e"
    });
    if xy.is_none() {
        x_axis["range"] = json!([num(x_range.0), num(x_range.1)]);
    }
    layout.insert("xaxis".into(), x_axis);
    let shapes = if xy.is_some() {
        Vec::new()
    } else {
        crate::events::event_shapes(result, x_range, top)
    };
    layout.insert("shapes".into(), Value::Array(shapes));
    layout.insert("height".into(), json!(height.round()));
    layout.insert(
        "title".into(),
        json!({"text": crate::html::escape(scope.title_text()), "x": 0.01, "xanchor": "left"}),
    );
    layout.insert(
        "hovermode".into(),
        json!(if xy.is_some() { "closest" } else { "x unified" }),
    );
    layout.insert(
        "margin".into(),
        json!({"l": 70, "r": 80, "t": MARGIN_T, "b": MARGIN_B}),
    );
    layout.insert("legend".into(), json!({"groupclick": "toggleitem"}));
    layout.insert("plot_bgcolor".into(), json!("#ffffff"));
}

fn axis_suffix(n: usize) -> String {
    if n == 1 {
        String::new()
    } else {
        n.to_string()
    }
}

fn axis_key(n: usize) -> String {
    format!("yaxis{}", axis_suffix(n))
}

/// At most `max` of `items`, evenly spaced (all of them when there are not more).
pub(crate) fn thin<T: Copy>(items: Vec<T>, max: usize) -> Vec<T> {
    let n = items.len();
    if n > max {
        (0..max).map(|k| items[k * n / max]).collect()
    } else {
        items
    }
}

/// Markers of one event kind on the strip, with hover text (time, block, kind, detail).
fn event_trace(result: &SimResult, kind: EventTag, axis: usize) -> Value {
    let events: Vec<_> = result.events.iter().filter(|e| e.kind == kind).collect();
    let n = events.len();
    let picked = thin(events, MAX_EVENT_MARKS);
    let xs: Vec<Value> = picked.iter().map(|e| num(e.time)).collect();
    let texts: Vec<String> = picked
        .iter()
        .map(|e| {
            let mut s = format!(
                "t = {} s<br>{}: <b>{}</b>",
                num(e.time),
                crate::html::escape(&e.block),
                kind.as_str()
            );
            if !e.detail.is_empty() {
                s.push_str("<br>");
                s.push_str(&crate::html::escape(&e.detail));
            }
            s
        })
        .collect();
    let name = if n > picked.len() {
        format!("{} ({n}, {} shown)", kind.as_str(), picked.len())
    } else {
        format!("{} ({n})", kind.as_str())
    };
    json!({
        "type": "scatter", "mode": "markers", "name": name,
        "legendgroup": "events", "legendgrouptitle": {"text": "events"},
        "x": xs, "y": vec![kind.as_str(); picked.len()],
        "xaxis": "x", "yaxis": format!("y{}", axis_suffix(axis)),
        "marker": {"symbol": "diamond", "size": 9, "color": event_color(kind),
                   "line": {"width": 1, "color": "#ffffff"}},
        "text": texts, "hovertemplate": "%{text}<extra></extra>",
        // Markers at the first and last instant are drawn whole, not cut at the plot edge.
        "cliponaxis": false,
    })
}

/// One flow of the energy audit.
struct Flow {
    label: String,
    joules: f64,
    color: &'static str,
}

impl Flow {
    /// A flow of `joules` (not negative) drawn in `color`.
    fn new(label: String, joules: f64, color: &'static str) -> Self {
        Flow {
            label,
            joules,
            color,
        }
    }

    /// The Sankey node label: the flow's label and its energy.
    fn node_label(&self) -> String {
        format!("{}: {}", self.label, fmt_energy(self.joules))
    }
}

/// Flow colours: into the model, out of it as a loss, stored or released, residual.
const GREEN: &str = "rgba(44,160,44,0.55)";
const RED: &str = "rgba(214,39,40,0.45)";
const BLUE: &str = "rgba(31,119,180,0.5)";
const GREY: &str = "rgba(127,127,127,0.5)";

/// The energy audit as a Sankey figure: sources (and energy released from storage) flow
/// into the model, which passes it on to each loss and to energy stored at the end.
/// Flows under 0.1 % of the total are merged into "other".
pub fn energy_figure(a: &EnergyAudit) -> Value {
    let (ins, outs) = audit_flows(a);
    let total: f64 = ins
        .iter()
        .map(|f| f.joules)
        .sum::<f64>()
        .max(outs.iter().map(|f| f.joules).sum());
    sankey(&merge_small(ins, total), &merge_small(outs, total))
}

/// The flows of an audit into the model and out of it, in the audit's order.
fn audit_flows(a: &EnergyAudit) -> (Vec<Flow>, Vec<Flow>) {
    let mut ins: Vec<Flow> = Vec::new();
    let mut outs: Vec<Flow> = Vec::new();
    for (name, w) in &a.sources {
        if *w >= 0.0 {
            ins.push(Flow::new(format!("{name} (source)"), *w, GREEN));
        } else {
            outs.push(Flow::new(format!("{name} (absorbed)"), -w, RED));
        }
    }
    for (name, w) in &a.losses {
        if *w >= 0.0 {
            outs.push(Flow::new(name.clone(), *w, RED));
        } else {
            ins.push(Flow::new(format!("{name} (returned)"), -w, GREEN));
        }
    }
    let d_ke = a.kinetic_final - a.kinetic_initial;
    let d_pe = a.potential_final - a.potential_initial;
    for (label, delta) in [("kinetic energy", d_ke), ("potential energy", d_pe)] {
        let (stored, released) = (format!("{label} stored"), format!("{label} released"));
        push_balance(&mut ins, &mut outs, delta, (stored, released), BLUE);
    }
    if a.impact_loss > 0.0 {
        outs.push(Flow::new(
            "impacts (velocity jumps)".into(),
            a.impact_loss,
            RED,
        ));
    }
    let residual = "residual (integration error)".to_string();
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
    color: &'static str,
) {
    if delta > 0.0 {
        outs.push(Flow::new(out, delta, color));
    } else if delta < 0.0 {
        ins.push(Flow::new(into, -delta, color));
    }
}

/// The finite, positive `flows` of at least 0.1 % of `total`, largest first, then the
/// smaller ones merged into one "other" flow.
fn merge_small(flows: Vec<Flow>, total: f64) -> Vec<Flow> {
    let (mut big, small): (Vec<Flow>, Vec<Flow>) = flows
        .into_iter()
        .filter(|f| f.joules.is_finite() && f.joules > 0.0)
        .partition(|f| f.joules >= 1e-3 * total);
    big.sort_by(|a, b| b.joules.total_cmp(&a.joules));
    if !small.is_empty() {
        big.push(Flow::new(
            format!("other ({} elements)", small.len()),
            small.iter().map(|f| f.joules).sum(),
            GREY,
        ));
    }
    big
}

/// The Sankey figure of flows `ins` into a "model" node and `outs` out of it.
fn sankey(ins: &[Flow], outs: &[Flow]) -> Value {
    let mut labels: Vec<String> = ins.iter().map(Flow::node_label).collect();
    let hub = labels.len();
    labels.push("model".into());
    labels.extend(outs.iter().map(Flow::node_label));
    let (mut src, mut dst, mut val, mut col) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, f) in ins.iter().enumerate() {
        src.push(i);
        dst.push(hub);
        val.push(num(f.joules));
        col.push(f.color);
    }
    for (i, f) in outs.iter().enumerate() {
        src.push(hub);
        dst.push(hub + 1 + i);
        val.push(num(f.joules));
        col.push(f.color);
    }
    let height = (60.0 + 34.0 * ins.len().max(outs.len()) as f64).max(320.0);
    json!({
        "data": [{
            "type": "sankey", "orientation": "h", "valueformat": ".4s", "valuesuffix": " J",
            "node": {"label": labels, "pad": 14, "thickness": 16,
                     "color": "#9aa5b1", "line": {"width": 0}},
            "link": {"source": src, "target": dst, "value": val, "color": col},
        }],
        "layout": {
            "title": {"text": "Where the energy went", "x": 0.01, "xanchor": "left"},
            "height": height.round(), "margin": {"l": 20, "r": 20, "t": 50, "b": 20},
            "font": {"size": 12},
        }
    })
}

/// `1234.5` -> `"1.23 kJ"`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_nine_significant_digits() {
        assert_eq!(num(12.340000000000002), json!(12.34));
        assert_eq!(num(1.0 / 3.0), json!(0.333333333));
        assert_eq!(num(f64::NAN), Value::Null);
        assert_eq!(num(f64::INFINITY), Value::Null);
        assert_eq!(num(1e308), json!(1e308));
    }

    #[test]
    fn samples_keep_the_six_digits_the_hover_shows() {
        assert_eq!(sample(1.0 / 3.0), json!(0.333333));
        assert_eq!(sample(47.49206510819189), json!(47.4921));
        assert_eq!(sample(-1234567.0), json!(-1234570.0));
        assert_eq!(sample(9.530_581e-16), json!(9.53058e-16));
        assert_eq!(sample(f64::NAN), Value::Null);
        // What `%{y:.6g}` shows of the sample is what it shows of the exact value.
        let v = std::f64::consts::E;
        assert_eq!(
            format!("{:.5e}", sample(v).as_f64().unwrap()),
            format!("{v:.5e}")
        );
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
        let f = energy_figure(&a);
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
}
