//! Scope layout and drawing on any plotters backend (bitmap for PNG, SVG).
//!
//! [`Plan::new`] validates a scope against a result (signals, display units, samples,
//! ranges) and computes everything backend-independent: axes with their ticks
//! ([`crate::axis::Axis`], safe for any finite value), the visible sample window, labels,
//! colours, dash styles, legend layout. [`Plan::draw`] then lays the image out as title,
//! stacked panels (each with its legend strip on top, its left y axis and, when the panel
//! mixes two display units, a right y axis) and a shared time axis under the bottom panel.
//! Lines are clipped to the plot area in axis units before they reach the backend, so no
//! value, however large, turns into an enormous pixel coordinate.

use drivelink_results::result::{EventTag, SimResult};
use drivelink_results::scope::{DisplayUnit, ScopeSpec};
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;

use crate::axis::{Axis, MAX_TICKS};
use crate::clip::clip_polyline;
use crate::decimate::{decimate, linear, staircase};
use crate::error::PlotError;
use crate::font::{ensure_registered, FAMILY};
use crate::scale::bulk_range;
use crate::signals::{axis_title, finite_range, panel_title, resolve, Dash, Panel, PanelSignal};
use crate::text::text_width;
use crate::View;

/// Signal colours, in order of appearance in a scope (Tableau-like, well contrasted on
/// white, none of them grey so they never mix with grid or event markers).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),  // blue
    RGBColor(214, 39, 40),   // red
    RGBColor(44, 160, 44),   // green
    RGBColor(255, 127, 14),  // orange
    RGBColor(148, 103, 189), // purple
    RGBColor(140, 86, 75),   // brown
    RGBColor(227, 119, 194), // pink
    RGBColor(23, 190, 207),  // cyan
];

const TEXT: RGBColor = RGBColor(30, 30, 30);
const AXIS: RGBColor = RGBColor(90, 90, 90);
const GRID_MAJOR: RGBColor = RGBColor(220, 220, 220);
const GRID_MINOR: RGBColor = RGBColor(240, 240, 240);
const MARKER: RGBColor = RGBColor(160, 160, 160);

/// Event markers are drawn only when the time window holds at most this many marked event
/// instants; more would hide the data (a note on the plot says so instead).
pub const MAX_MARKERS: usize = 50;
/// Accepted image sizes (each side), in pixels.
pub const MIN_SIZE: (u32, u32) = (160, 120);
pub const MAX_SIDE: u32 = 16384;

/// Pixel sizes of the layout, scaled with the image (reference 1200x800).
struct Metrics {
    title_h: i32,
    title_font: f64,
    label_font: f64,
    desc_font: f64,
    legend_font: f64,
    legend_row_h: i32,
    swatch: i32,
    y_area: i32,
    x_area: i32,
    right: i32,
    bottom: i32,
    /// Margin between an axis title and the image edge.
    edge: i32,
    line_w: u32,
}

impl Metrics {
    fn new(w: u32, h: u32) -> Self {
        let s = (w as f64 / 1200.0).min(h as f64 / 800.0).clamp(0.5, 4.0);
        let px = |v: f64| (v * s).round() as i32;
        Metrics {
            title_h: px(46.0),
            title_font: 26.0 * s,
            label_font: 16.0 * s,
            desc_font: 17.0 * s,
            legend_font: 16.0 * s,
            legend_row_h: px(26.0),
            swatch: px(28.0),
            y_area: px(92.0),
            x_area: px(58.0),
            right: px(28.0),
            bottom: px(6.0),
            edge: px(8.0),
            line_w: (2.0 * s).round().max(1.0) as u32,
        }
    }
}

struct PanelPlan<'a> {
    panel: Panel<'a>,
    /// Left axis, and the right one when the panel has a second unit.
    axes: Vec<Axis>,
    /// Legend text per signal (with the unit when the panel has two axes).
    texts: Vec<String>,
    /// Panel title drawn in bold before the legend (multi-panel scopes, several signals).
    title: Option<String>,
    /// The legend text is the panel's title (multi-panel scopes, one signal): bold.
    bold_legend: bool,
    /// Title of each y axis (`engine.w [rpm]`, with the power-of-ten factor).
    titles: Vec<String>,
    /// Extremes left off-scale by the robust autoscale, marked at the plot edge.
    offscale: Vec<OffScale>,
    /// Legend items: (signal index, row, x offset from the legend start).
    legend: Vec<(usize, i32, i32)>,
    legend_h: i32,
}

impl<'a> PanelPlan<'a> {
    /// A panel with its legend laid out in rows at most `max_w` pixels wide (the legend
    /// text names the unit when the panel has two); its axes are set later. A `titled`
    /// panel (of a multi-panel scope) starts its legend with its title in bold; a panel of
    /// one signal shows the signal's legend text in bold as its title. In an `xy` scope
    /// the legend names the plotted signal next to its label (`y (car.y)`).
    fn with_legend(
        panel: Panel<'a>,
        m: &Metrics,
        max_w: i32,
        scope: &str,
        (titled, xy): (bool, bool),
    ) -> Result<Self, PlotError> {
        let two = panel.units.len() > 1;
        let texts: Vec<String> = panel
            .signals
            .iter()
            .map(|s| {
                let name = if xy && s.label != s.signal {
                    format!("{} ({})", s.label, s.signal)
                } else {
                    s.label.to_string()
                };
                match (two, s.unit.is_empty()) {
                    (true, false) => format!("{name} [{}]", s.unit),
                    _ => name,
                }
            })
            .collect();
        let width =
            |t: &str, bold| text_width(t, m.legend_font, bold).map_err(|e| drawing_err(scope, e));
        let title = if titled && texts.len() > 1 {
            Some(panel_title(&panel)).filter(|t| !t.is_empty())
        } else {
            None
        };
        let bold_legend = titled && texts.len() == 1;
        let (mut row, mut x) = (0, 0);
        if let Some(t) = &title {
            x = width(t, true)? + m.swatch;
        }
        let mut legend = Vec::with_capacity(texts.len());
        for (i, t) in texts.iter().enumerate() {
            let tw = width(t, bold_legend)?;
            let item_w = m.swatch + m.swatch / 3 + tw;
            if x > 0 && x + item_w > max_w {
                row += 1;
                x = 0;
            }
            legend.push((i, row, x));
            x += item_w + m.swatch;
        }
        let legend_h = (row + 1) * m.legend_row_h + m.legend_row_h / 4;
        Ok(PanelPlan {
            panel,
            axes: Vec::new(),
            texts,
            title,
            bold_legend,
            titles: Vec::new(),
            offscale: Vec::new(),
            legend,
            legend_h,
        })
    }

    /// Maps a display value of `axis` to left-axis units (the right axis is drawn as a
    /// linear relabelling of the left one).
    fn to_left(&self, axis: usize, v: f64) -> f64 {
        let left = &self.axes[0];
        match self.axes.get(axis) {
            Some(a) if axis > 0 => {
                let (l0, l1) = left.range();
                let (a0, a1) = a.range();
                l0 + (a.to_axis(v) - a0) * (l1 - l0) / (a1 - a0)
            }
            _ => left.to_axis(v),
        }
    }
}

/// A validated scope, ready to draw.
pub struct Plan<'a> {
    pub scope: &'a str,
    title: &'a str,
    size: (u32, u32),
    time: &'a [f64],
    /// Sample indices drawn: those inside the x range plus one neighbour each side.
    window: (usize, usize),
    x_axis: Axis,
    panels: Vec<PanelPlan<'a>>,
    /// Event marker times (axis units).
    markers: Vec<f64>,
    /// Number of marked event instants in view when there are too many to draw (else 0).
    markers_off: usize,
    /// An XY scope (the abscissa is a signal, not time).
    xy: bool,
    /// Title of the x axis (without its power-of-ten factor): the view's, else the XY
    /// scope's abscissa signal, else `time [s]`.
    x_title: String,
    plot_h: i32,
    /// Font size of every y axis title: the largest (up to `m.desc_font`) at which all fit.
    y_title_font: f64,
    right_w: i32,
    m: Metrics,
}

/// A linear f64 coordinate whose tick marks are given (from an [`Axis`]) instead of searched
/// by plotters (whose search does not return for ranges near `f64::MAX`).
struct Ticked {
    lo: f64,
    hi: f64,
    bold: Vec<f64>,
    light: Vec<f64>,
}

impl Ticked {
    fn new(axis: &Axis) -> Self {
        let (lo, hi) = axis.range();
        let bold = axis.ticks().to_vec();
        let light = bold.windows(2).map(|w| 0.5 * (w[0] + w[1])).collect();
        Ticked {
            lo,
            hi,
            bold,
            light,
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = (v - self.lo) / (self.hi - self.lo);
        let px = limit.0 as f64 + f * (limit.1 - limit.0) as f64;
        // `as` saturates; clipped lines never get here with far-away values anyway.
        px.round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

fn text_style(size: f64) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(&TEXT)
}

/// The chart of one panel: time (or XY abscissa) against the left y axis.
type Chart<'c, DB> = ChartContext<'c, DB, Cartesian2d<Ticked, Ticked>>;

/// A signal line: palette colour `color` (wrapping around), `width` pixels wide.
fn line_style(color: usize, width: u32) -> ShapeStyle {
    ShapeStyle {
        color: PALETTE[color % PALETTE.len()].to_rgba(),
        filled: false,
        stroke_width: width,
    }
}

/// A 1 px line in `color` (axes, event markers).
fn hairline(color: RGBColor) -> ShapeStyle {
    ShapeStyle {
        color: color.to_rgba(),
        filled: false,
        stroke_width: 1,
    }
}

/// The on/off lengths of `dash` in pixels, for a dash unit of `unit` pixels.
fn dash_pattern(dash: Dash, unit: u32) -> Vec<f64> {
    dash.pattern().iter().map(|l| l * unit as f64).collect()
}

/// Pixel position of the chart point `q`, relative to the area whose top-left pixel is `base`.
fn local_px<DB: DrawingBackend>(
    chart: &Chart<'_, DB>,
    q: &(f64, f64),
    base: (i32, i32),
) -> (i32, i32) {
    let c = chart.backend_coord(q);
    (c.0 - base.0, c.1 - base.1)
}

fn drawing_err(scope: &str, e: impl std::fmt::Display) -> PlotError {
    PlotError::Drawing {
        scope: scope.to_string(),
        message: e.to_string(),
    }
}

fn check_range(scope: &str, axis: &'static str, r: Option<(f64, f64)>) -> Result<(), PlotError> {
    match r {
        Some((low, high)) if !(low.is_finite() && high.is_finite() && low < high) => {
            Err(PlotError::BadRange {
                scope: scope.to_string(),
                axis,
                low,
                high,
            })
        }
        _ => Ok(()),
    }
}

/// Whole-pixel pen offsets that paint a line about `w` pixels wide with 1 px lines.
fn pen_offsets(w: u32) -> Vec<(i32, i32)> {
    let w = w.max(1) as i32;
    let lo = -(w - 1) / 2;
    let hi = lo + w - 1;
    let mut v = vec![(0, 0)];
    for d in lo..=hi {
        if d != 0 {
            v.push((d, 0));
            v.push((0, d));
        }
    }
    v
}

/// How a dash pattern advances along a polyline.
#[derive(Clone, Copy, PartialEq)]
enum DashAlong {
    /// Along the path length (XY scopes, legend swatches).
    Path,
    /// Along the path length, except where the trace is dense (a time trace that turns
    /// up and down at least [`DENSE_TURNS`] times within one dash period either side):
    /// there along the x axis only, so the vertical strokes of an oscillation are drawn
    /// whole in alternating bands of columns instead of as a tangle of dash pieces. A lone
    /// steep excursion stays dashed along its length, so it never vanishes in a gap.
    Time,
}

/// Turns (changes of vertical direction) within one dash period either side that make a
/// stretch of a time trace dense.
const DENSE_TURNS: usize = 4;

/// Whether each segment of the pixel polyline `px` lies in a dense stretch (see
/// [`DashAlong::Time`]) for a dash pattern of `period` pixels.
fn dense_segments(px: &[(i32, i32)], period: f64) -> Vec<bool> {
    let mut turns: Vec<i32> = Vec::new();
    let mut last_dir = 0;
    for w in px.windows(2) {
        let dir = (w[1].1 - w[0].1).signum();
        if dir != 0 {
            if last_dir != 0 && dir != last_dir {
                turns.push(w[0].0);
            }
            last_dir = dir;
        }
    }
    turns.sort_unstable();
    let reach = period.ceil() as i32;
    px.windows(2)
        .map(|w| {
            let (lo, hi) = (w[0].0.min(w[1].0) - reach, w[0].0.max(w[1].0) + reach);
            let n = turns.partition_point(|&x| x <= hi) - turns.partition_point(|&x| x < lo);
            n >= DENSE_TURNS
        })
        .collect()
}

/// Splits a pixel polyline into the "on" pieces of a dash `pattern` (lengths in pixels,
/// alternating on/off) measured `along` the path or the x axis. An empty pattern returns
/// the polyline unchanged.
fn dash_polyline(px: &[(i32, i32)], pattern: &[f64], along: DashAlong) -> Vec<Vec<(i32, i32)>> {
    if pattern.is_empty() || pattern.iter().any(|l| *l <= 0.0) {
        return vec![px.to_vec()];
    }
    let mut out = Vec::new();
    let mut cur: Vec<(i32, i32)> = Vec::new();
    let (mut k, mut left) = (0usize, pattern[0]);
    let at = |a: (i32, i32), b: (i32, i32), f: f64| {
        (
            (a.0 as f64 + f * (b.0 - a.0) as f64).round() as i32,
            (a.1 as f64 + f * (b.1 - a.1) as f64).round() as i32,
        )
    };
    if let Some(&p) = px.first() {
        cur.push(p);
    }
    let dense = match along {
        DashAlong::Path => vec![false; px.len().saturating_sub(1)],
        DashAlong::Time => dense_segments(px, pattern.iter().sum()),
    };
    for (w, dense) in px.windows(2).zip(dense) {
        let (a, b) = (w[0], w[1]);
        let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
        let len = if dense { dx.abs() } else { dx.hypot(dy) };
        let mut pos = 0.0;
        while len - pos > left {
            pos += left;
            let p = at(a, b, pos / len);
            if k % 2 == 0 {
                cur.push(p);
                out.push(std::mem::take(&mut cur));
            } else {
                cur.push(p);
            }
            k = (k + 1) % pattern.len();
            left = pattern[k];
        }
        left -= len - pos;
        if k % 2 == 0 {
            cur.push(b);
        } else {
            cur.clear();
            cur.push(b);
        }
    }
    if k % 2 == 0 && cur.len() > 1 {
        out.push(cur);
    }
    out
}

/// `text` at `size` if it fits in `room` pixels; else at a smaller size (down to 3/4),
/// shortened with "…" if even that is too long.
fn fit_text(text: &str, size: f64, room: i32, scope: &str) -> Result<(String, f64), PlotError> {
    let width = |t: &str, size: f64| text_width(t, size, false).map_err(|e| drawing_err(scope, e));
    let w = width(text, size)?;
    if w <= room {
        return Ok((text.to_string(), size));
    }
    let small = 0.75 * size;
    let shrunk = (size * room as f64 / w as f64).max(small);
    if width(text, shrunk)? <= room {
        return Ok((text.to_string(), shrunk));
    }
    let mut chars: Vec<char> = text.chars().collect();
    while !chars.is_empty() {
        chars.pop();
        let t: String = chars.iter().chain(std::iter::once(&'…')).collect();
        if width(&t, small)? <= room {
            return Ok((t, small));
        }
    }
    Ok((String::new(), small))
}

/// `v` with `digits` significant digits (no exponent for ordinary magnitudes).
fn significant(v: f64, digits: i32) -> String {
    let mag = v.abs().log10().floor() as i32;
    if v == 0.0 || !(-4..=9).contains(&mag) {
        return format!("{v:.*e}", (digits - 1) as usize);
    }
    format!("{v:.*}", (digits - 1 - mag).max(0) as usize)
}

/// Event kinds drawn as markers: every mode change, not the (possibly numerous) time events.
fn marked(kind: EventTag) -> bool {
    !matches!(kind, EventTag::TimeEvent)
}

/// Refuses image sizes outside [`MIN_SIZE`] ..= [`MAX_SIDE`] (each side).
fn check_size(scope: &str, w: u32, h: u32) -> Result<(), PlotError> {
    if w < MIN_SIZE.0 || h < MIN_SIZE.1 || w > MAX_SIDE || h > MAX_SIDE {
        return Err(drawing_err(
            scope,
            format!(
                "image size {w}x{h} outside {}x{} ..= {MAX_SIDE}x{MAX_SIDE}",
                MIN_SIZE.0, MIN_SIZE.1
            ),
        ));
    }
    Ok(())
}

/// The abscissa samples of `scope` (the result's time, or the x signal of an XY scope) and
/// their finite range (one unit wide when all samples are equal).
fn abscissa<'r>(
    result: &'r SimResult,
    scope: &ScopeSpec,
) -> Result<(&'r [f64], (f64, f64)), PlotError> {
    let name = scope.name.as_str();
    if result.time.is_empty() {
        return Err(PlotError::EmptyResult {
            scope: name.to_string(),
        });
    }
    // An XY scope plots against a signal instead of time.
    let time = match scope.x.as_deref() {
        None => result.time.as_slice(),
        Some(xn) => result.get(xn).ok_or_else(|| PlotError::UnknownSignal {
            scope: name.to_string(),
            signal: xn.to_string(),
            available: result.names.iter().take(10).cloned().collect(),
            more: result.names.len().saturating_sub(10),
        })?,
    };
    let x_data = match finite_range(time, 1.0) {
        Some((a, b)) if b > a => (a, b),
        Some((a, _)) => (a, a + 1.0),
        None => {
            return Err(PlotError::EmptyResult {
                scope: name.to_string(),
            })
        }
    };
    Ok((time, x_data))
}

/// Title of the abscissa: `time [s]`, or an XY scope's x signal with its SI unit
/// (`car.x [m]`).
fn abscissa_title(result: &SimResult, scope: &ScopeSpec) -> String {
    let Some(x) = scope.x.as_deref() else {
        return "time [s]".into();
    };
    let unit = result
        .names
        .iter()
        .position(|n| n == x)
        .and_then(|k| result.units.get(k)?.as_deref())
        .map(|si| DisplayUnit::parse(si).map_or(si.to_string(), |u| u.label))
        .filter(|u| !u.is_empty());
    match unit {
        Some(u) => format!("{x} [{u}]"),
        None => x.to_string(),
    }
}

/// The x axis over `data` (or the `fixed` range), with ticks for a plot `plot_w` pixels wide.
fn x_axis_over(data: (f64, f64), fixed: Option<(f64, f64)>, plot_w: i32) -> Axis {
    Axis::new(
        Some(data),
        fixed,
        false,
        (plot_w as usize / 80).clamp(2, 20),
    )
}

/// Indices of the samples inside the x range `(x0, x1)` (every sample of an XY scope).
fn visible_samples(time: &[f64], xy: bool, (x0, x1): (f64, f64)) -> Range<usize> {
    if xy {
        // Not sorted: every sample is drawn (clipped to the axes).
        0..time.len()
    } else {
        time.partition_point(|&t| t < x0)..time.partition_point(|&t| t <= x1)
    }
}

/// The x and y ranges that show `x_data` and `y_data` centred, at the same units per pixel
/// on both axes of a plot of `(width, height)` pixels; `None` when they are not finite.
fn equal_scaling(
    (xa, xb): (f64, f64),
    (ya, yb): (f64, f64),
    (plot_w, plot_h): (i32, i32),
) -> Option<((f64, f64), (f64, f64))> {
    let (pw, ph) = (plot_w.max(1) as f64, plot_h.max(1) as f64);
    let per_px = ((xb - xa) / pw).max((yb - ya) / ph).max(1e-300) * 1.05;
    let (xc, yc) = (0.5 * (xa + xb), 0.5 * (ya + yb));
    let xr = (xc - 0.5 * per_px * pw, xc + 0.5 * per_px * pw);
    let yr = (yc - 0.5 * per_px * ph, yc + 0.5 * per_px * ph);
    (xr.1 > xr.0 && yr.1 > yr.0 && xr.0.is_finite() && yr.1.is_finite()).then_some((xr, yr))
}

/// How the y axes of a panel are fitted.
struct YFit<'t> {
    /// Range of the left axis when fixed (`ylim`, or the equal scaling of a trajectory).
    fixed: Option<(f64, f64)>,
    /// Wanted number of ticks.
    n: usize,
    /// Most integer ticks a mode panel can label without overlap.
    max_int_ticks: usize,
    /// Sample times, for the robust autoscale of time scopes (`None`: XY scope).
    time: Option<&'t [f64]>,
}

/// The integer tick step (1, 2, 5, 10, ...) that labels `lo..=hi` with at most `max` ticks.
fn integer_step(lo: f64, hi: f64, max: usize) -> f64 {
    let mut step = 1.0;
    for k in 0.. {
        step = [1.0, 2.0, 5.0][k % 3] * 10f64.powi((k / 3) as i32);
        if (hi - lo) / step + 1.0 <= max.max(2) as f64 {
            break;
        }
    }
    step
}

/// The y axes of `panel` (left, and right for a second unit) over the samples `inside`,
/// each with whether a start-up spike was left off-scale ([`crate::scale`]).
///
/// An axis of integer step signals (modes, gears) spanning at most 12 gets half a unit of
/// padding above and below and a tick on every integer (every 2nd or 5th when the panel is
/// too low for all labels).
fn y_axes(panel: &Panel<'_>, inside: Range<usize>, fit: &YFit<'_>) -> Vec<(Axis, bool)> {
    (0..panel.units.len())
        .map(|k| {
            let data = panel.data_range_in(k, inside.clone());
            let fixed = if k == 0 { fit.fixed } else { None };
            let on_axis = panel.signals.iter().filter(|s| s.axis == k);
            let integral = on_axis.clone().all(|s| s.step && s.factor == 1.0);
            let int_range = data.filter(|(lo, hi)| {
                integral && hi - lo <= 12.0 && lo.fract() == 0.0 && hi.fract() == 0.0
            });
            match (fixed, int_range) {
                (Some(_), Some(_)) => (
                    Axis::new(data, fixed, true, fit.n).with_min_step(1.0, fit.n),
                    false,
                ),
                (None, Some((lo, hi))) => {
                    let step = integer_step(lo, hi, fit.max_int_ticks);
                    let axis = Axis::new(Some((lo - 0.5, hi + 0.5)), None, false, fit.n);
                    (axis.with_min_step(step, MAX_TICKS), false)
                }
                (Some(_), None) => (Axis::new(data, fixed, true, fit.n), false),
                (None, None) => {
                    let bulk = fit
                        .time
                        .filter(|_| !integral)
                        .and_then(|t| bulk_range(panel, k, inside.clone(), t));
                    match bulk {
                        Some(b) => (Axis::new(Some(b), None, true, fit.n), true),
                        None => (Axis::new(data, None, true, fit.n), false),
                    }
                }
            }
        })
        .collect()
}

/// Where a signal leaves a clipped axis: its extreme beyond the axis.
struct OffScale {
    /// Signal index in the panel.
    signal: usize,
    /// Abscissa (axis units) and display value of the extreme sample.
    x: f64,
    value: f64,
    /// Above the axis (else below).
    above: bool,
}

/// The extremes beyond the axes of `p` of every signal on an axis flagged in `clipped`.
fn off_scale(
    p: &PanelPlan<'_>,
    clipped: &[bool],
    time: &[f64],
    inside: Range<usize>,
    x_axis: &Axis,
) -> Vec<OffScale> {
    let mut out = Vec::new();
    for (i, s) in p.panel.signals.iter().enumerate() {
        if !clipped.get(s.axis).copied().unwrap_or(false) {
            continue;
        }
        let axis = &p.axes[s.axis];
        let (lo, hi) = axis.range();
        let end = inside.end.min(s.values.len()).min(time.len());
        // (sample index, value) of the largest value above and the smallest below the axis.
        let (mut max, mut min) = (None::<(usize, f64)>, None::<(usize, f64)>);
        for k in inside.start.min(end)..end {
            let v = s.values[k] * s.factor;
            if !v.is_finite() {
                continue;
            }
            if axis.to_axis(v) > hi && !matches!(max, Some((_, m)) if m >= v) {
                max = Some((k, v));
            }
            if axis.to_axis(v) < lo && !matches!(min, Some((_, m)) if m <= v) {
                min = Some((k, v));
            }
        }
        for (e, above) in [(max, true), (min, false)] {
            if let Some((k, value)) = e {
                out.push(OffScale {
                    signal: i,
                    x: x_axis.to_axis(time[k]),
                    value,
                    above,
                });
            }
        }
    }
    out
}

/// Axis positions (on `x_axis`) of the marked events from `lo` to `hi`: sorted, without
/// duplicates; `Err(count)` when there are more than [`MAX_MARKERS`].
fn event_markers(
    result: &SimResult,
    (lo, hi): (f64, f64),
    x_axis: &Axis,
) -> Result<Vec<f64>, usize> {
    let mut ts: Vec<f64> = result
        .events
        .iter()
        .filter(|e| marked(e.kind) && e.time >= lo && e.time <= hi)
        .map(|e| x_axis.to_axis(e.time))
        .filter(|t| t.is_finite())
        .collect();
    ts.sort_by(f64::total_cmp);
    ts.dedup();
    if ts.len() > MAX_MARKERS {
        return Err(ts.len());
    }
    Ok(ts)
}

/// Samples are marked when the visible ones of a signal are at least this many pixels
/// apart on average (a zoomed-in window).
const SAMPLE_MARK_PX: usize = 12;

impl<'a> Plan<'a> {
    /// Validates `scope` against `result` and prepares the drawing of the time window
    /// `view.xlim` (all samples when `None`).
    pub fn new(
        result: &'a SimResult,
        scope: &'a ScopeSpec,
        view: &View,
    ) -> Result<Self, PlotError> {
        let name = scope.name.as_str();
        ensure_registered().map_err(|e| drawing_err(name, e))?;
        let (w, h) = (scope.width, scope.height);
        check_size(name, w, h)?;
        check_range(name, "x", view.xlim)?;
        check_range(name, "y", scope.ylim)?;
        let m = Metrics::new(w, h);

        let panels = resolve(result, scope)?;
        let (time, x_data) = abscissa(result, scope)?;
        let xy = scope.x.is_some();
        let right_w = if panels.iter().any(|p| p.units.len() > 1) {
            m.y_area
        } else {
            m.right
        };
        let plot_w = (w as i32 - m.y_area - right_w).max(10);
        let mut x_axis = x_axis_over(x_data, view.xlim, plot_w);
        let (x0, x1) = view.xlim.unwrap_or(x_data);
        let inside = visible_samples(time, xy, (x0, x1));
        let window = (
            inside.start.saturating_sub(1),
            (inside.end + 1).min(time.len()),
        );

        // Legend layout first: it decides the height left for the plots.
        let titled = panels.len() > 1;
        let legend_max_w = w as i32 - m.y_area - right_w;
        let mut plans = panels
            .into_iter()
            .map(|panel| PanelPlan::with_legend(panel, &m, legend_max_w, name, (titled, xy)))
            .collect::<Result<Vec<_>, _>>()?;
        let n = plans.len().max(1) as i32;
        let legends: i32 = plans.iter().map(|p| p.legend_h).sum();
        let plot_h = ((h as i32 - m.title_h - m.x_area - m.bottom - legends) / n).max(10);
        let n_y = (plot_h as usize / 28).clamp(3, 14);
        // Equal scaling of a one-panel, one-unit XY scope (a trajectory): the same metres
        // per pixel on both axes, the data centred.
        let mut y_fixed = scope.ylim;
        // (Not against time: runs overlaid with `--x time` are no trajectory.)
        // With `--xlim` the window is that x range, and y is fitted to the samples in it.
        let trajectory = xy
            && scope.x.as_deref() != Some("time")
            && plans.len() == 1
            && plans[0].panel.units.len() == 1
            && scope.ylim.is_none();
        if trajectory {
            let y_data = match view.xlim {
                Some(w) => plans[0].panel.data_range_where(0, time, w),
                None => plans[0].panel.data_range_in(0, inside.clone()),
            };
            if let Some((xr, yr)) = y_data.and_then(|y_data| {
                equal_scaling(view.xlim.unwrap_or(x_data), y_data, (plot_w, plot_h))
            }) {
                x_axis = x_axis_over(xr, Some(xr), plot_w);
                y_fixed = Some(yr);
            }
        }
        for p in &mut plans {
            let fit = YFit {
                fixed: y_fixed,
                n: n_y,
                max_int_ticks: (plot_h as f64 / (1.4 * m.label_font)) as usize,
                time: (!xy).then_some(time),
            };
            let (axes, clipped): (Vec<Axis>, Vec<bool>) =
                y_axes(&p.panel, inside.clone(), &fit).into_iter().unzip();
            p.axes = axes;
            p.offscale = off_scale(p, &clipped, time, inside.clone(), &x_axis);
            p.titles = (0..p.axes.len())
                .map(|k| p.axes[k].title(&axis_title(&p.panel, k)))
                .collect();
        }

        let mut y_title_font = m.desc_font;
        for t in plans.iter().flat_map(|p| &p.titles) {
            y_title_font = y_title_font.min(fit_text(t, m.desc_font, plot_h, name)?.1);
        }
        let (markers, markers_off) = if scope.event_markers && !xy {
            match event_markers(result, (x0, x1), &x_axis) {
                Ok(ts) => (ts, 0),
                Err(n) => (Vec::new(), n),
            }
        } else {
            (Vec::new(), 0)
        };

        Ok(Plan {
            scope: name,
            title: scope.title_text(),
            size: (w, h),
            time,
            window,
            x_axis,
            panels: plans,
            markers,
            markers_off,
            xy,
            x_title: view
                .x_title
                .clone()
                .unwrap_or_else(|| abscissa_title(result, scope)),
            plot_h,
            y_title_font,
            right_w,
            m,
        })
    }

    /// Maps a drawing error of backend `DB` to a [`PlotError`] naming this scope.
    fn err<DB: DrawingBackend>(
        &self,
    ) -> impl Fn(DrawingAreaErrorKind<DB::ErrorType>) -> PlotError + Copy + '_ {
        move |e| drawing_err(self.scope, e)
    }

    /// Image size in pixels.
    pub fn size(&self) -> (u32, u32) {
        self.size
    }

    /// Draws the whole scope on `root` (which must be `self.size()`). `pixel_lines` draws
    /// thick signal lines as offset 1 px lines (for raster backends).
    pub fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        pixel_lines: bool,
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let err = self.err::<DB>();
        let m = &self.m;
        let w = self.size.0 as i32;
        root.fill(&WHITE).map_err(err)?;

        let title_style = (FAMILY, m.title_font, FontStyle::Bold)
            .into_font()
            .color(&TEXT)
            .pos(Pos::new(HPos::Center, VPos::Center));
        root.draw_text(self.title, &title_style, (w / 2, m.title_h / 2))
            .map_err(err)?;

        let (_, mut rest) = root.split_vertically(m.title_h);
        for (i, p) in self.panels.iter().enumerate() {
            let last = i + 1 == self.panels.len();
            let area_h = p.legend_h + self.plot_h + if last { m.x_area } else { 0 };
            let (area, below) = rest.split_vertically(area_h);
            rest = below;
            self.draw_panel(&area, p, last, pixel_lines)?;
        }
        if self.markers_off > 0 {
            let note = format!(
                "event markers off: {} events in view (more than {MAX_MARKERS})",
                self.markers_off
            );
            let style = (FAMILY, m.label_font)
                .into_font()
                .color(&AXIS)
                .pos(Pos::new(HPos::Right, VPos::Top));
            let top = m.title_h + self.panels.first().map_or(0, |p| p.legend_h);
            root.draw_text(&note, &style, (w - self.right_w - 6, top + 6))
                .map_err(err)?;
        }
        Ok(())
    }

    fn draw_legend<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        p: &PanelPlan<'_>,
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let err = self.err::<DB>();
        let m = &self.m;
        let anchor = Pos::new(HPos::Left, VPos::Center);
        let bold = (FAMILY, m.legend_font, FontStyle::Bold)
            .into_font()
            .color(&TEXT)
            .pos(anchor);
        let legend_text = if p.bold_legend {
            bold.clone()
        } else {
            text_style(m.legend_font).pos(anchor)
        };
        let row_y = |row: i32| row * m.legend_row_h + m.legend_row_h / 2 + m.legend_row_h / 4;
        if let Some(title) = &p.title {
            area.draw_text(title, &bold, (m.y_area, row_y(0)))
                .map_err(err)?;
        }
        for &(k, row, x) in &p.legend {
            let s = &p.panel.signals[k];
            let y = row_y(row);
            let x = m.y_area + x;
            let style = line_style(s.color, m.line_w + 1);
            let pattern = dash_pattern(s.dash, m.line_w + 1);
            for piece in dash_polyline(&[(x, y), (x + m.swatch, y)], &pattern, DashAlong::Path) {
                area.draw(&PathElement::new(piece, style)).map_err(err)?;
            }
            area.draw_text(&p.texts[k], &legend_text, (x + m.swatch + m.swatch / 3, y))
                .map_err(err)?;
        }
        Ok(())
    }

    /// The right y axis of a panel with a second unit: axis line, ticks, labels and title,
    /// drawn in the right margin next to the plot (the primary mesh labels only the left).
    fn draw_right_axis<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        p: &PanelPlan<'_>,
        chart: &Chart<'_, DB>,
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let err = self.err::<DB>();
        let m = &self.m;
        let right = &p.axes[1];
        let (x1, (y0, y1)) = (self.x_axis.range().1, p.axes[0].range());
        let base = area.get_base_pixel();
        let at = |y: f64| local_px(chart, &(x1, y), base);
        let (top, bottom) = (at(y1), at(y0));
        let line = hairline(AXIS);
        area.draw(&PathElement::new(vec![top, bottom], line))
            .map_err(err)?;
        let tick = (m.label_font * 0.4).round() as i32;
        let labels = text_style(m.label_font).pos(Pos::new(HPos::Left, VPos::Center));
        let (r0, r1) = right.range();
        for &t in right.ticks() {
            let (x, y) = at(y0 + (t - r0) * (y1 - y0) / (r1 - r0));
            area.draw(&PathElement::new(vec![(x, y), (x + tick, y)], line))
                .map_err(err)?;
            area.draw_text(&right.label(t), &labels, (x + tick + 3, y))
                .map_err(err)?;
        }
        Ok(())
    }

    /// One panel in `area`: its legend, the grid and left axis (with the x axis below when
    /// `last`), the event markers, the signals and, for a second unit, the right axis.
    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        p: &PanelPlan<'_>,
        last: bool,
        pixel_lines: bool,
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let err = self.err::<DB>();
        let m = &self.m;
        self.draw_legend(area, p)?;

        let mut builder = ChartBuilder::on(area);
        builder
            .margin_top(p.legend_h)
            .y_label_area_size(m.y_area)
            .x_label_area_size(if last { m.x_area } else { 0 });
        builder.margin_right(self.right_w);
        let mut chart = builder
            .build_cartesian_2d(Ticked::new(&self.x_axis), Ticked::new(&p.axes[0]))
            .map_err(err)?;
        self.draw_mesh(&mut chart, p)?;
        self.draw_markers(&mut chart, p.axes[0].range())?;
        for s in &p.panel.signals {
            self.draw_signal(&mut chart, p, s, pixel_lines)?;
        }
        self.draw_off_scale(area, p, &chart)?;
        if p.axes.len() > 1 {
            self.draw_right_axis(area, p, &chart)?;
        }
        self.draw_axis_titles(area, p, &chart, last)
    }

    /// Marks where the data of panel `p` leave an axis clipped by the robust autoscale: a
    /// triangle in the signal's colour at the plot edge, pointing out, and the extreme value.
    fn draw_off_scale<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        p: &PanelPlan<'_>,
        chart: &Chart<'_, DB>,
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let err = self.err::<DB>();
        let m = &self.m;
        let base = area.get_base_pixel();
        let (y0, y1) = p.axes[0].range();
        let right = local_px(chart, &(self.x_axis.range().1, y0), base).0;
        let h = (m.label_font * 0.6).round() as i32;
        for o in &p.offscale {
            let s = &p.panel.signals[o.signal];
            let (x, edge) = local_px(chart, &(o.x, if o.above { y1 } else { y0 }), base);
            let dir = if o.above { 1 } else { -1 };
            let (tip, foot) = (edge + dir * 2, edge + dir * (2 + h));
            let corners = vec![(x, tip), (x - h / 2 - 1, foot), (x + h / 2 + 1, foot)];
            let color = PALETTE[s.color % PALETTE.len()];
            area.draw(&Polygon::new(corners, color.filled()))
                .map_err(err)?;
            let word = if o.above { "max" } else { "min" };
            let text = match s.unit.as_str() {
                "" => format!("{word} {}", significant(o.value, 4)),
                u => format!("{word} {} {u}", significant(o.value, 4)),
            };
            let left_of = x + 160 > right;
            let (hpos, tx) = if left_of {
                (HPos::Right, x - h)
            } else {
                (HPos::Left, x + h)
            };
            let style = text_style(m.label_font).pos(Pos::new(hpos, VPos::Center));
            area.draw_text(&text, &style, (tx, (tip + foot) / 2))
                .map_err(err)?;
        }
        Ok(())
    }

    /// Grid, left axis with its labels and (on the bottom panel) the x axis labels of
    /// panel `p`.
    fn draw_mesh<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<'_, DB>,
        p: &PanelPlan<'_>,
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let err = self.err::<DB>();
        let m = &self.m;
        let left = &p.axes[0];
        let xf = |v: &f64| self.x_axis.label(*v);
        let yf = |v: &f64| left.label(*v);
        let mut mesh = chart.configure_mesh();
        mesh.bold_line_style(GRID_MAJOR)
            .light_line_style(GRID_MINOR)
            .axis_style(AXIS)
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .label_style(text_style(m.label_font));
        mesh.draw().map_err(err)
    }

    /// The axis titles of panel `p` in `area`: each y title along its axis, `m.edge` from
    /// the image edge, at the scope's y title size (shortened with "…" if need be); the
    /// x title (when `last`) centred under the plot, `m.edge` above the image bottom.
    fn draw_axis_titles<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        p: &PanelPlan<'_>,
        chart: &Chart<'_, DB>,
        last: bool,
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let err = self.err::<DB>();
        let m = &self.m;
        let base = area.get_base_pixel();
        let ((x0, x1), (y0, y1)) = (self.x_axis.range(), p.axes[0].range());
        let (left, bottom) = local_px(chart, &(x0, y0), base);
        let (right, top) = local_px(chart, &(x1, y1), base);
        let (area_w, area_h) = area.dim_in_pixel();
        let mid_y = (top + bottom) / 2;
        let sides = [
            (m.edge, FontTransform::Rotate270),
            (area_w as i32 - m.edge, FontTransform::Rotate90),
        ];
        for (title, (x, turn)) in p.titles.iter().zip(sides) {
            let (text, size) = fit_text(title, self.y_title_font, bottom - top, self.scope)?;
            let style = text_style(size)
                .transform(turn)
                .pos(Pos::new(HPos::Center, VPos::Top));
            area.draw_text(&text, &style, (x, mid_y)).map_err(err)?;
        }
        if last {
            let title = self.x_axis.title(&self.x_title);
            let (text, size) = fit_text(&title, m.desc_font, right - left, self.scope)?;
            let style = text_style(size).pos(Pos::new(HPos::Center, VPos::Bottom));
            let at = ((left + right) / 2, area_h as i32 - m.edge);
            area.draw_text(&text, &style, at).map_err(err)?;
        }
        Ok(())
    }

    /// The event markers across the left axis range `(y0, y1)`, dashed.
    fn draw_markers<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<'_, DB>,
        (y0, y1): (f64, f64),
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let err = self.err::<DB>();
        // Event markers behind the signals, at most one per pixel column.
        let mut prev_px = i32::MIN;
        for &t in &self.markers {
            let px = chart.backend_coord(&(t, y0)).0;
            if px == prev_px {
                continue;
            }
            prev_px = px;
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(t, y0), (t, y1)],
                    6,
                    4,
                    hairline(MARKER),
                ))
                .map_err(err)?;
        }
        Ok(())
    }

    /// The visible samples of signal `s` in left-axis units, decimated to `plot_w` columns.
    fn signal_segments(
        &self,
        p: &PanelPlan<'_>,
        s: &PanelSignal<'_>,
        plot_w: usize,
    ) -> Vec<Vec<(f64, f64)>> {
        let (x0, x1) = self.x_axis.range();
        let (i0, i1) = self.window;
        let hi = i1.min(s.values.len());
        let lo = i0.min(hi);
        let (t, y) = (&self.time[lo..hi], &s.values[lo..hi]);
        let to_axes = |(t, v): (f64, f64)| (self.x_axis.to_axis(t), p.to_left(s.axis, v));
        if s.step {
            decimate(staircase(t, y, s.factor).map(to_axes), (x0, x1), plot_w)
        } else {
            decimate(linear(t, y, s.factor).map(to_axes), (x0, x1), plot_w)
        }
    }

    /// One signal of panel `p`, clipped to the plot: single points as dots, solid lines
    /// through plotters, dashed (and, with `pixel_lines`, thick) lines as pixel polylines.
    fn draw_signal<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<'_, DB>,
        p: &PanelPlan<'_>,
        s: &PanelSignal<'_>,
        pixel_lines: bool,
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let err = self.err::<DB>();
        let m = &self.m;
        let plot_area = chart.plotting_area().strip_coord_spec();
        let base = plot_area.get_base_pixel();
        let plot_w = chart.plotting_area().dim_in_pixel().0.max(1) as usize;
        let ((x0, x1), (y0, y1)) = (self.x_axis.range(), p.axes[0].range());
        let clip_rect = ((x0, y0), (x1, y1));
        let style = line_style(s.color, m.line_w);
        let pattern = dash_pattern(s.dash, m.line_w.max(2));
        let segments = self.signal_segments(p, s, plot_w);
        for seg in segments.iter().flat_map(|g| clip_polyline(g, clip_rect)) {
            if seg.len() == 1 {
                let dot = Circle::new(seg[0], m.line_w, style.filled());
                chart.draw_series(std::iter::once(dot)).map_err(err)?;
                continue;
            }
            if !(pixel_lines && m.line_w > 1) && s.dash == Dash::Solid {
                chart
                    .draw_series(LineSeries::new(seg, style))
                    .map_err(err)?;
                continue;
            }
            // Pixel polylines: dashes are laid out in pixels, and thick raster lines are
            // drawn as 1 px polylines offset by whole pixels (plotters' wide-line polygons
            // grow long miter spikes at the sharp turns of decimated data).
            let mut px: Vec<(i32, i32)> = Vec::with_capacity(seg.len());
            for q in &seg {
                let c = local_px(chart, q, base);
                if px.last() != Some(&c) {
                    px.push(c);
                }
            }
            if px.len() == 1 {
                px.push(px[0]);
            }
            self.draw_pixel_polyline(&plot_area, &px, &pattern, style, pixel_lines)?;
        }
        // Zoomed in so far that the samples stand apart: mark them, so the output points
        // (and the solver's steps between them) show.
        let n_pts: usize = segments.iter().map(Vec::len).sum();
        if !self.xy && n_pts > 1 && n_pts * SAMPLE_MARK_PX <= plot_w {
            let inside = |&(x, y): &(f64, f64)| x >= x0 && x <= x1 && y >= y0 && y <= y1;
            let marks = segments
                .iter()
                .flatten()
                .filter(|q| inside(q))
                .map(|&q| Circle::new(q, m.line_w + 1, style.filled()));
            chart.draw_series(marks).map_err(err)?;
        }
        Ok(())
    }

    /// The "on" pieces of the pixel polyline `px` (dash `pattern`) in `style`; with
    /// `pixel_lines`, each as 1 px lines offset by whole pixels to the line width.
    fn draw_pixel_polyline<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        px: &[(i32, i32)],
        pattern: &[f64],
        style: ShapeStyle,
        pixel_lines: bool,
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let err = self.err::<DB>();
        let (offsets, pen) = if pixel_lines {
            (
                pen_offsets(self.m.line_w),
                ShapeStyle {
                    stroke_width: 1,
                    ..style
                },
            )
        } else {
            (vec![(0, 0)], style)
        };
        let along = if self.xy {
            DashAlong::Path
        } else {
            DashAlong::Time
        };
        for piece in dash_polyline(px, pattern, along) {
            for &(dx, dy) in &offsets {
                let shifted: Vec<(i32, i32)> =
                    piece.iter().map(|&(x, y)| (x + dx, y + dy)).collect();
                area.draw(&PathElement::new(shifted, pen)).map_err(err)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signals::PanelSignal;

    fn panel<'a>(name: &'a str, values: &'a [f64], step: bool) -> Panel<'a> {
        Panel {
            signals: vec![PanelSignal {
                signal: name,
                label: name,
                unit: String::new(),
                factor: 1.0,
                values,
                si_unit: None,
                step,
                axis: 0,
                dash: Dash::Solid,
                color: 0,
            }],
            units: vec![String::new()],
        }
    }

    #[test]
    fn mode_axis_has_a_tick_per_integer_and_half_a_unit_of_padding() {
        let modes = [2.0, -1.0, 0.0, 1.0, 0.0, 2.0];
        let p = panel("c.mode", &modes, true);
        let fit = YFit {
            fixed: None,
            n: 3,
            max_int_ticks: 8,
            time: None,
        };
        let (axis, clipped) = y_axes(&p, 0..6, &fit).remove(0);
        assert_eq!(axis.ticks(), &[-1.0, 0.0, 1.0, 2.0]);
        assert_eq!(axis.range(), (-1.5, 2.5));
        assert!(!clipped);
        // A panel too low for four labels labels every other integer.
        let fit = YFit {
            max_int_ticks: 3,
            ..fit
        };
        assert_eq!(y_axes(&p, 0..6, &fit)[0].0.ticks(), &[0.0, 2.0]);
    }

    #[test]
    fn dense_trace_is_dashed_in_bands_of_columns_a_lone_spike_along_its_length() {
        // An oscillation of 100 px strokes, one per pixel column, over 64 columns.
        let zigzag: Vec<(i32, i32)> = (0..64)
            .map(|x| (x, if x % 2 == 0 { 0 } else { 100 }))
            .collect();
        let pieces = dash_polyline(&zigzag, &[4.0, 4.0], DashAlong::Time);
        // Every stroke is drawn whole or not at all: bands of 4 columns on, 4 off.
        let mut cols: Vec<i32> = pieces.iter().flatten().map(|p| p.0).collect();
        cols.sort_unstable();
        cols.dedup();
        assert!(cols.iter().all(|x| x % 8 <= 4), "{cols:?}");
        assert!(cols.len() >= 30, "{cols:?}");
        // Along the path the same trace is cut into pieces in every column (the tangle).
        let path = dash_polyline(&zigzag, &[4.0, 4.0], DashAlong::Path);
        assert!(path.len() > 500);
        // A lone spike, 200 px deep over two columns: dashed along its length, so it shows.
        let spike = [(0, 0), (40, 0), (41, 200), (42, 0), (80, 0)];
        let pieces = dash_polyline(&spike, &[4.0, 4.0], DashAlong::Time);
        let deep = pieces.iter().flatten().filter(|p| p.1 > 50).count();
        assert!(deep >= 10, "spike drawn in {deep} dash ends");
    }

    #[test]
    fn dash_pattern_splits_a_line_into_on_pieces() {
        let pieces = dash_polyline(&[(0, 0), (20, 0)], &[5.0, 3.0], DashAlong::Path);
        assert_eq!(
            pieces,
            vec![
                vec![(0, 0), (5, 0)],
                vec![(8, 0), (13, 0)],
                vec![(16, 0), (20, 0)]
            ]
        );
        // Solid: unchanged.
        assert_eq!(
            dash_polyline(&[(0, 0), (3, 4)], &[], DashAlong::Path),
            vec![vec![(0, 0), (3, 4)]]
        );
    }
}
