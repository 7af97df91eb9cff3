//! Scope layout and drawing on any plotters backend (bitmap for PNG, SVG).
//!
//! [`Plan::new`] validates a scope against a result (signals, display units, samples) and
//! computes everything backend-independent: ranges, labels, colours, legend layout.
//! [`Plan::draw`] then lays the image out as title, stacked panels (each with its legend
//! strip on top and its own y axis) and a shared time axis under the bottom panel.

use drivelink_core::result::{EventTag, SimResult};
use drivelink_core::scope::{DisplayUnit, ScopeSpec};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::decimate::{decimate, is_step_like, linear, staircase};
use crate::error::{unknown_signal, PlotError};
use crate::font::{ensure_registered, FAMILY};

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

/// At most this many event markers are drawn (evenly thinned beyond).
pub const MAX_MARKERS: usize = 200;
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
            line_w: (2.0 * s).round().max(1.0) as u32,
        }
    }
}

struct SignalPlan<'a> {
    name: &'a str,
    label: &'a str,
    values: &'a [f64],
    factor: f64,
    step: bool,
    color: RGBColor,
}

struct PanelPlan<'a> {
    signals: Vec<SignalPlan<'a>>,
    y_range: (f64, f64),
    /// All signals are integer steps spanning at most this many units (integer ticks).
    integer_span: Option<usize>,
    y_label: String,
    /// Legend items: (signal index, row, x offset from the legend start).
    legend: Vec<(usize, i32, i32)>,
    legend_h: i32,
}

/// A validated scope, ready to draw.
pub struct Plan<'a> {
    pub scope: &'a str,
    title: &'a str,
    size: (u32, u32),
    time: &'a [f64],
    x_range: (f64, f64),
    panels: Vec<PanelPlan<'a>>,
    markers: Vec<f64>,
    m: Metrics,
}

fn text_style(size: f64) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(&TEXT)
}

fn drawing_err(scope: &str, e: impl std::fmt::Display) -> PlotError {
    PlotError::Drawing {
        scope: scope.to_string(),
        message: e.to_string(),
    }
}

/// Finite min and max of `values * factor`.
fn finite_range(values: &[f64], factor: f64) -> Option<(f64, f64)> {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for &v in values {
        let v = v * factor;
        if v.is_finite() {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    (lo <= hi).then_some((lo, hi))
}

/// Pads a data range by 6 % each side; a constant gets a non-zero range around it.
fn padded(range: Option<(f64, f64)>) -> (f64, f64) {
    let (lo, hi) = range.unwrap_or((-1.0, 1.0));
    let span = hi - lo;
    let mag = lo.abs().max(hi.abs());
    if span <= mag * 1e-9 || span == 0.0 {
        let c = 0.5 * (lo + hi);
        let half = if c.abs() > 0.0 { c.abs() * 0.1 } else { 1.0 };
        (c - half, c + half)
    } else {
        (lo - 0.06 * span, hi + 0.06 * span)
    }
}

/// Tick label formatter for an axis of the given span and about `n` labels: as many decimals
/// as the tick step needs (plus one, trailing zeros trimmed), scientific for huge values.
fn tick_formatter(range: (f64, f64), n: usize) -> impl Fn(&f64) -> String {
    let span = (range.1 - range.0).abs().max(f64::MIN_POSITIVE);
    let raw = span / n.max(1) as f64;
    let decimals = (-(raw.log10().floor()) + 1.0).clamp(0.0, 12.0) as usize;
    let huge = range.0.abs().max(range.1.abs()) >= 1e6;
    move |v: &f64| {
        if huge {
            return if *v == 0.0 {
                "0".to_string()
            } else {
                format!("{v:.2e}")
            };
        }
        let mut s = format!("{v:.decimals$}");
        if s.contains('.') {
            while s.ends_with('0') {
                s.pop();
            }
            if s.ends_with('.') {
                s.pop();
            }
        }
        if s == "-0" {
            s = "0".into();
        }
        s
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

fn text_width(text: &str, size: f64) -> Result<i32, String> {
    let (w, _) = (FAMILY, size)
        .into_font()
        .box_size(text)
        .map_err(|e| e.to_string())?;
    Ok(w as i32)
}

/// Event kinds drawn as markers: every mode change, not the (possibly numerous) time events.
fn marked(kind: EventTag) -> bool {
    !matches!(kind, EventTag::TimeEvent)
}

impl<'a> Plan<'a> {
    /// Validates `scope` against `result` and prepares the drawing.
    pub fn new(result: &'a SimResult, scope: &'a ScopeSpec) -> Result<Self, PlotError> {
        let name = scope.name.as_str();
        ensure_registered().map_err(|e| drawing_err(name, e))?;
        let (w, h) = (scope.width, scope.height);
        if w < MIN_SIZE.0 || h < MIN_SIZE.1 || w > MAX_SIDE || h > MAX_SIDE {
            return Err(drawing_err(
                name,
                format!(
                    "image size {w}x{h} outside {}x{} ..= {MAX_SIDE}x{MAX_SIDE}",
                    MIN_SIZE.0, MIN_SIZE.1
                ),
            ));
        }
        if scope.signal_names().next().is_none() {
            return Err(PlotError::NoSignals {
                scope: name.to_string(),
            });
        }
        let m = Metrics::new(w, h);

        // Validate every signal and unit before looking at the samples.
        let mut panels = Vec::new();
        let mut color_k = 0;
        for panel in &scope.panels {
            let mut signals = Vec::new();
            let mut units: Vec<Option<String>> = Vec::new();
            for s in panel {
                let values = result
                    .get(&s.signal)
                    .ok_or_else(|| unknown_signal(name, &s.signal, &result.names))?;
                let unit = match scope.unit_of(s) {
                    Some(u) => {
                        Some(DisplayUnit::parse(u).ok_or_else(|| PlotError::UnknownUnit {
                            scope: name.to_string(),
                            signal: s.signal.clone(),
                            unit: u.to_string(),
                            accepted: DisplayUnit::names(),
                        })?)
                    }
                    None => None,
                };
                units.push(unit.as_ref().map(|u| u.label.clone()));
                let n = values.len().min(result.time.len());
                signals.push(SignalPlan {
                    name: &s.signal,
                    label: s.display_label(),
                    values: &values[..n],
                    factor: unit.as_ref().map_or(1.0, |u| u.factor),
                    step: false,
                    color: PALETTE[color_k % PALETTE.len()],
                });
                color_k += 1;
            }
            if signals.is_empty() {
                continue;
            }
            let y_label = if units.iter().all(|u| *u == units[0]) {
                units[0].clone().unwrap_or_default()
            } else {
                let mut distinct: Vec<&str> = Vec::new();
                for u in units.iter().flatten().map(String::as_str) {
                    if !u.is_empty() && !distinct.contains(&u) {
                        distinct.push(u);
                    }
                }
                distinct.join(", ")
            };
            panels.push(PanelPlan {
                signals,
                y_range: (0.0, 1.0),
                integer_span: None,
                y_label,
                legend: Vec::new(),
                legend_h: 0,
            });
        }
        if result.time.is_empty() {
            return Err(PlotError::EmptyResult {
                scope: name.to_string(),
            });
        }
        let time = result.time.as_slice();

        let x_range = match finite_range(time, 1.0) {
            Some((a, b)) if b > a => (a, b),
            Some((a, _)) => (a, a + 1.0),
            None => {
                return Err(PlotError::EmptyResult {
                    scope: name.to_string(),
                })
            }
        };

        // Ranges, step detection and legend layout.
        let legend_max_w = w as i32 - m.y_area - m.right;
        for p in &mut panels {
            let mut range: Option<(f64, f64)> = None;
            for s in &mut p.signals {
                s.step = is_step_like(s.name, s.values);
                if let Some((lo, hi)) = finite_range(s.values, s.factor) {
                    range = Some(match range {
                        Some((a, b)) => (a.min(lo), b.max(hi)),
                        None => (lo, hi),
                    });
                }
            }
            p.y_range = match scope.ylim {
                Some((lo, hi)) if lo < hi => (lo, hi),
                _ => padded(range),
            };
            if let Some((lo, hi)) = range {
                let integral = p.signals.iter().all(|s| s.step && s.factor == 1.0);
                if integral && hi - lo <= 12.0 && lo.fract() == 0.0 && hi.fract() == 0.0 {
                    p.integer_span = Some((hi - lo) as usize);
                }
            }
            let (mut row, mut x) = (0, 0);
            for (i, s) in p.signals.iter().enumerate() {
                let tw = text_width(s.label, m.legend_font).map_err(|e| drawing_err(name, e))?;
                let item_w = m.swatch + m.swatch / 3 + tw;
                if x > 0 && x + item_w > legend_max_w {
                    row += 1;
                    x = 0;
                }
                p.legend.push((i, row, x));
                x += item_w + m.swatch;
            }
            p.legend_h = (row + 1) * m.legend_row_h + m.legend_row_h / 4;
        }

        let markers = if scope.event_markers {
            let mut ts: Vec<f64> = result
                .events
                .iter()
                .filter(|e| marked(e.kind) && e.time >= x_range.0 && e.time <= x_range.1)
                .map(|e| e.time)
                .collect();
            ts.sort_by(f64::total_cmp);
            ts.dedup();
            if ts.len() > MAX_MARKERS {
                let n = ts.len();
                ts = (0..MAX_MARKERS).map(|k| ts[k * n / MAX_MARKERS]).collect();
            }
            ts
        } else {
            Vec::new()
        };

        Ok(Plan {
            scope: name,
            title: scope.title_text(),
            size: (w, h),
            time,
            x_range,
            panels,
            markers,
            m,
        })
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
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| drawing_err(self.scope, e);
        let m = &self.m;
        let (w, h) = (self.size.0 as i32, self.size.1 as i32);
        root.fill(&WHITE).map_err(err)?;

        let title_style = (FAMILY, m.title_font, FontStyle::Bold)
            .into_font()
            .color(&TEXT)
            .pos(Pos::new(HPos::Center, VPos::Center));
        root.draw_text(self.title, &title_style, (w / 2, m.title_h / 2))
            .map_err(err)?;

        let (_, mut rest) = root.split_vertically(m.title_h);
        let n = self.panels.len() as i32;
        let legends: i32 = self.panels.iter().map(|p| p.legend_h).sum();
        let plot_h = ((h - m.title_h - m.x_area - m.bottom - legends) / n.max(1)).max(10);

        for (i, p) in self.panels.iter().enumerate() {
            let last = i + 1 == self.panels.len();
            let area_h = p.legend_h + plot_h + if last { m.x_area } else { 0 };
            let (area, below) = rest.split_vertically(area_h);
            rest = below;
            self.draw_panel(&area, p, plot_h, last, pixel_lines)?;
        }
        Ok(())
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        p: &PanelPlan<'_>,
        plot_h: i32,
        last: bool,
        pixel_lines: bool,
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| drawing_err(self.scope, e);
        let m = &self.m;

        // Legend strip above the plot area.
        let legend_text = text_style(m.legend_font).pos(Pos::new(HPos::Left, VPos::Center));
        for &(k, row, x) in &p.legend {
            let s = &p.signals[k];
            let y = row * m.legend_row_h + m.legend_row_h / 2 + m.legend_row_h / 4;
            let x = m.y_area + x;
            let style = ShapeStyle {
                color: s.color.to_rgba(),
                filled: false,
                stroke_width: m.line_w + 1,
            };
            area.draw(&PathElement::new(vec![(x, y), (x + m.swatch, y)], style))
                .map_err(err)?;
            area.draw_text(s.label, &legend_text, (x + m.swatch + m.swatch / 3, y))
                .map_err(err)?;
        }

        let (x0, x1) = self.x_range;
        let (y0, y1) = p.y_range;
        let mut chart = ChartBuilder::on(area)
            .margin_top(p.legend_h)
            .margin_right(m.right)
            .y_label_area_size(m.y_area)
            .x_label_area_size(if last { m.x_area } else { 0 })
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(err)?;

        let plot_w = chart.plotting_area().dim_in_pixel().0.max(1) as usize;
        let n_x = (plot_w / 80).clamp(2, 20);
        let mut n_y = (plot_h as usize / 28).clamp(3, 14);
        if let Some(span) = p.integer_span {
            // One tick per integer value when they fit, so mode panels read 0, 1, 2, ...
            if span < n_y {
                n_y = span + 1;
            }
        }
        let xf = tick_formatter(self.x_range, n_x);
        let yf = tick_formatter(p.y_range, n_y);
        let label_style = text_style(m.label_font);
        let desc_style = text_style(m.desc_font);
        {
            let mut mesh = chart.configure_mesh();
            mesh.bold_line_style(GRID_MAJOR)
                .light_line_style(GRID_MINOR)
                .max_light_lines(1)
                .axis_style(AXIS)
                .x_labels(n_x)
                .y_labels(n_y)
                .x_label_formatter(&xf)
                .y_label_formatter(&yf)
                .label_style(label_style)
                .axis_desc_style(desc_style);
            if !p.y_label.is_empty() {
                mesh.y_desc(p.y_label.as_str());
            }
            if last {
                mesh.x_desc("time [s]");
            }
            mesh.draw().map_err(err)?;
        }

        // Event markers behind the signals, at most one per pixel column.
        let marker_style = ShapeStyle {
            color: MARKER.to_rgba(),
            filled: false,
            stroke_width: 1,
        };
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
                    marker_style,
                ))
                .map_err(err)?;
        }

        let plot_area = chart.plotting_area().strip_coord_spec();
        let base = plot_area.get_base_pixel();
        for s in &p.signals {
            let style = ShapeStyle {
                color: s.color.to_rgba(),
                filled: false,
                stroke_width: m.line_w,
            };
            let t = &self.time[..s.values.len()];
            let segments = if s.step {
                decimate(staircase(t, s.values, s.factor), self.x_range, plot_w)
            } else {
                decimate(linear(t, s.values, s.factor), self.x_range, plot_w)
            };
            for seg in segments {
                if seg.len() == 1 {
                    let dot = Circle::new(seg[0], m.line_w, style.filled());
                    chart.draw_series(std::iter::once(dot)).map_err(err)?;
                } else if pixel_lines && m.line_w > 1 {
                    // Thick line as 1 px polylines offset by whole pixels: plotters' wide-line
                    // polygons grow long miter spikes at the sharp turns of decimated data.
                    let mut px: Vec<(i32, i32)> = Vec::with_capacity(seg.len());
                    for q in &seg {
                        let c = chart.backend_coord(q);
                        let c = (c.0 - base.0, c.1 - base.1);
                        if px.last() != Some(&c) {
                            px.push(c);
                        }
                    }
                    if px.len() == 1 {
                        px.push(px[0]);
                    }
                    let thin = ShapeStyle {
                        stroke_width: 1,
                        ..style
                    };
                    for (dx, dy) in pen_offsets(m.line_w) {
                        let shifted: Vec<(i32, i32)> =
                            px.iter().map(|&(x, y)| (x + dx, y + dy)).collect();
                        plot_area
                            .draw(&PathElement::new(shifted, thin))
                            .map_err(err)?;
                    }
                } else {
                    chart
                        .draw_series(LineSeries::new(seg, style))
                        .map_err(err)?;
                }
            }
        }
        Ok(())
    }
}
