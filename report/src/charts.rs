//! plotly.js figures (as JSON) for the scopes (the energy audit's is in [`crate::energy`]).
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

use drivelink_core::number::round_significant;
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

/// A number rounded to 9 significant digits, as its 9-digit text reads back (JSON `null`
/// when not finite).
pub fn num(v: f64) -> Value {
    if !v.is_finite() {
        return Value::Null;
    }
    let r = round_significant(v, 9);
    serde_json::Number::from_f64(r).map_or(Value::Null, Value::Number)
}

/// A sample to draw, rounded to 6 significant digits: the hover shows `%{y:.6g}`, so the
/// value shown is the value sampled (JSON `null` when not finite).
pub fn sample(v: f64) -> Value {
    if !v.is_finite() {
        return Value::Null;
    }
    let r = round_significant(v, 6);
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
        EventTag::Touchdown => "#8c6d31",
        EventTag::Liftoff => "#e377c2",
    }
}

const EVENT_ORDER: [EventTag; 12] = [
    EventTag::Lock,
    EventTag::Unlock,
    EventTag::Engage,
    EventTag::Free,
    EventTag::ZeroCrossing,
    EventTag::Impact,
    EventTag::Shift,
    EventTag::Stall,
    EventTag::Touchdown,
    EventTag::Liftoff,
    EventTag::Stop,
    EventTag::TimeEvent,
];

/// The result's sample times as drawn ([`sample`]), made once for all the traces of a
/// report that are drawn against time with every sample (see [`WHOLE_MAX`]).
#[derive(Debug, Default)]
pub struct TimeSamples(Option<Vec<Value>>);

impl TimeSamples {
    /// The first `n` of `result`'s sample times as drawn.
    fn first(&mut self, result: &SimResult, n: usize) -> &[Value] {
        let all = self
            .0
            .get_or_insert_with(|| result.time.iter().map(|&t| sample(t)).collect());
        &all[..n]
    }
}

/// The plotly figure (`{data, layout}`) of one scope.
pub fn scope_figure(result: &SimResult, scope: &ScopeSpec) -> Result<Value, PlotError> {
    scope_figure_with(result, scope, &mut TimeSamples::default())
}

/// [`scope_figure`] with the sample times as drawn shared with other scopes of `result`.
pub fn scope_figure_with(
    result: &SimResult,
    scope: &ScopeSpec,
    times: &mut TimeSamples,
) -> Result<Value, PlotError> {
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
            // Against time with every sample: the times as drawn, made once.
            let xs = (xy.is_none() && s.values.len() <= WHOLE_MAX)
                .then(|| times.first(result, s.values.len()));
            fig.data.push(signal_trace(s, t, xs, x_range, ids[s.axis]));
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
            // A trajectory: one metre is as long on both axes, each spanning the data (the
            // plot area shrinks on one axis rather than the range growing).
            left_axis["scaleanchor"] = json!("x");
            left_axis["scaleratio"] = json!(1);
            left_axis["constrain"] = json!("domain");
            if let Some(r) = value_range(p) {
                let (a, b) = padded(r);
                left_axis["range"] = json!([num(a), num(b)]);
            }
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
///
/// `drawn_t`: `t` as drawn ([`sample`] of each), when the caller has it.
fn signal_trace(
    s: &PanelSignal<'_>,
    t: &[f64],
    drawn_t: Option<&[Value]>,
    x_range: (f64, f64),
    axis: usize,
) -> Value {
    let t = &t[..s.values.len()];
    let (xs, ys): (Vec<Value>, Vec<Value>) = if t.len() <= WHOLE_MAX {
        let xs = match drawn_t {
            Some(xs) => xs.to_vec(),
            None => t.iter().map(|&x| sample(x)).collect(),
        };
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
        "hovertemplate": format!("%{{y:.6g}}{}<extra>{}</extra>", crate::markup::escape(&unit), crate::markup::escape(s.label)),
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
        "title": {"text": crate::markup::escape(x_title)}, "anchor": format!("y{}", axis_suffix(bottom_axis)),
        "domain": [0.0, 1.0],
        "showspikes": true, "spikemode": "across", "spikethickness": 1,
        "spikecolor": "#999999", "spikedash": "dot", "exponentformat": "e"
    });
    if xy.is_none() {
        x_axis["range"] = json!([num(x_range.0), num(x_range.1)]);
    } else if x_range.0 <= x_range.1 {
        // The x signal's own range; with equal scaling the plot area narrows instead.
        let (a, b) = padded(x_range);
        x_axis["range"] = json!([num(a), num(b)]);
        x_axis["constrain"] = json!("domain");
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
        json!({"text": crate::markup::escape(scope.title_text()), "x": 0.01, "xanchor": "left"}),
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

/// The finite extremes of the displayed values of the signals of panel `p` (`None` when
/// it has no finite value).
fn value_range(p: &Panel<'_>) -> Option<(f64, f64)> {
    let (lo, hi) = p
        .signals
        .iter()
        .flat_map(|s| s.values.iter().map(move |v| v * s.factor))
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    (lo <= hi).then_some((lo, hi))
}

/// `(lo, hi)` widened by 3 % of its span on each side (by 1 when the span is zero), so
/// the line does not run along the plot edge.
fn padded((lo, hi): (f64, f64)) -> (f64, f64) {
    let pad = if hi > lo { 0.03 * (hi - lo) } else { 1.0 };
    (lo - pad, hi + pad)
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
                crate::markup::escape(&e.block),
                kind.as_str()
            );
            if !e.detail.is_empty() {
                s.push_str("<br>");
                s.push_str(&crate::markup::escape(&e.detail));
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
}
