//! A scope's signals resolved against a result: samples, display units, y axes, line styles.
//!
//! Shared by the PNG/SVG renderer and the HTML report (`drivelink-report`), so both show
//! the same thing:
//! - every signal carries its own display unit ([`PanelSignal::unit`]); the signals of one
//!   panel are grouped by unit onto at most two y axes, the first unit on the left and the
//!   second on the right. A panel mixing three or more units is refused
//!   ([`PlotError::TooManyUnits`], naming the scope, the panel and the signals of each unit);
//! - a signal that lies on top of an earlier signal of the same axis (equal within 0.1 % of
//!   the axis span on at least 10 % of the samples) gets a dash style no overlapping earlier
//!   signal uses, so equal traces stay visible ([`Dash`]);
//! - step-like signals (modes, gears) are marked for staircase drawing.

use drivelink_results::result::SimResult;
use drivelink_results::scope::{DisplayUnit, ScopeSignal, ScopeSpec};

use crate::decimate::is_step_like;
use crate::error::{unknown_signal, PlotError};

/// Number of signal colours ([`crate::PALETTE`]); colour indices wrap around.
const PALETTE_LEN: usize = crate::PALETTE.len();

/// At most this many y axes (units) per panel: left and right.
pub const MAX_AXES: usize = 2;
/// Two samples coincide when they differ by at most this fraction of the axis data span.
pub const OVERLAP_TOL: f64 = 1e-3;
/// Two signals overlap when at least this fraction of their common finite samples coincide.
pub const OVERLAP_FRACTION: f64 = 0.1;

/// Line dash styles, in the order they are handed out to overlapping signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    Solid,
    Dash,
    Dot,
    DashDot,
    LongDash,
}

impl Dash {
    /// All styles, in the order they are used.
    pub const ALL: [Dash; 5] = [
        Dash::Solid,
        Dash::Dash,
        Dash::Dot,
        Dash::DashDot,
        Dash::LongDash,
    ];
    /// The plotly.js name of the style.
    pub fn plotly(&self) -> &'static str {
        match self {
            Dash::Solid => "solid",
            Dash::Dash => "dash",
            Dash::Dot => "dot",
            Dash::DashDot => "dashdot",
            Dash::LongDash => "longdash",
        }
    }
    /// On/off lengths in line widths (empty: solid).
    pub fn pattern(&self) -> &'static [f64] {
        match self {
            Dash::Solid => &[],
            Dash::Dash => &[4.0, 4.0],
            Dash::Dot => &[1.0, 3.0],
            Dash::DashDot => &[5.0, 3.0, 1.0, 3.0],
            Dash::LongDash => &[9.0, 4.0],
        }
    }
}

/// One signal of a panel, resolved.
#[derive(Debug, Clone)]
pub struct PanelSignal<'a> {
    /// Logged variable name.
    pub signal: &'a str,
    /// Legend label.
    pub label: &'a str,
    /// Display unit as written on an axis (`"rpm"`, `"N·m"`; `""`: the logged value as is).
    pub unit: String,
    /// `display = logged * factor`.
    pub factor: f64,
    /// Logged samples (as many as the result's time vector, or fewer).
    pub values: &'a [f64],
    /// SI unit the signal is logged in (`"rad/s"`), when the result knows it.
    pub si_unit: Option<&'a str>,
    /// Draw as a staircase (modes, gears).
    pub step: bool,
    /// Y axis: 0 left, 1 right.
    pub axis: usize,
    /// Dash style (solid unless it overlaps an earlier signal of its axis).
    pub dash: Dash,
    /// Colour index, counting the scope's signals in order.
    pub color: usize,
}

/// One panel: its signals and the unit of each y axis.
#[derive(Debug, Clone)]
pub struct Panel<'a> {
    /// The signals, in the scope's order.
    pub signals: Vec<PanelSignal<'a>>,
    /// Unit label of each y axis (one or two entries).
    pub units: Vec<String>,
}

impl Panel<'_> {
    /// Finite min and max of the display values on `axis` (`None` without finite samples).
    pub fn data_range(&self, axis: usize) -> Option<(f64, f64)> {
        self.data_range_in(axis, 0..usize::MAX)
    }

    /// As [`Panel::data_range`], over the samples with index in `samples` only.
    pub fn data_range_in(
        &self,
        axis: usize,
        samples: std::ops::Range<usize>,
    ) -> Option<(f64, f64)> {
        let mut r: Option<(f64, f64)> = None;
        for s in self.signals.iter().filter(|s| s.axis == axis) {
            let hi = samples.end.min(s.values.len());
            let lo = samples.start.min(hi);
            if let Some((lo, hi)) = finite_range(&s.values[lo..hi], s.factor) {
                r = Some(match r {
                    Some((a, b)) => (a.min(lo), b.max(hi)),
                    None => (lo, hi),
                });
            }
        }
        r
    }
}

impl Panel<'_> {
    /// The range of the values on y axis `axis` at the samples whose abscissa `xs[i]` lies
    /// in `lo..=hi` (an XY scope's `--xlim`: the y range of what is in view).
    pub fn data_range_where(
        &self,
        axis: usize,
        xs: &[f64],
        (lo, hi): (f64, f64),
    ) -> Option<(f64, f64)> {
        let mut r: Option<(f64, f64)> = None;
        for s in self.signals.iter().filter(|s| s.axis == axis) {
            for (&x, &v) in xs.iter().zip(s.values.iter()) {
                let y = v * s.factor;
                if !(x >= lo && x <= hi && y.is_finite()) {
                    continue;
                }
                r = Some(match r {
                    Some((a, b)) => (a.min(y), b.max(y)),
                    None => (y, y),
                });
            }
        }
        r
    }
}

/// The quantity a display unit measures, for naming an axis of several different signals.
fn quantity_of(unit: &str) -> Option<&'static str> {
    Some(match unit {
        "rpm" | "rad/s" => "angular speed",
        "km/h" | "mph" | "m/s" => "speed",
        "hp" | "kW" | "W" => "power",
        "N·m" | "kN·m" => "torque",
        "N" | "kN" => "force",
        "J" | "kJ" => "energy",
        "deg" | "rad" => "angle",
        "m/s²" | "g" => "acceleration",
        "m" | "km" => "distance",
        "s" => "time",
        _ => return None,
    })
}

/// The variable part of a logged name (`fl.forward_slip` -> `forward_slip`).
fn variable(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// The unit shown on axis `axis`: the display unit, else the SI unit its signals share.
fn axis_unit(on_axis: &[&PanelSignal<'_>]) -> String {
    let Some(first) = on_axis.first() else {
        return String::new();
    };
    if !first.unit.is_empty() {
        first.unit.clone()
    } else if on_axis.iter().all(|s| s.si_unit == first.si_unit) {
        first.si_unit.map_or(String::new(), |si| {
            DisplayUnit::parse(si).map_or(si.to_string(), |u| u.label)
        })
    } else {
        String::new()
    }
}

/// What axis `axis` of `panel` shows (without unit): one signal's logged name, else the
/// signals' common variable, else the quantity of `unit`, else nothing.
fn axis_name(on_axis: &[&PanelSignal<'_>], unit: &str) -> String {
    let Some(first) = on_axis.first() else {
        return String::new();
    };
    if on_axis.iter().all(|s| s.signal == first.signal) {
        first.signal.to_string()
    } else if on_axis
        .iter()
        .all(|s| variable(s.signal) == variable(first.signal))
    {
        variable(first.signal).to_string()
    } else {
        quantity_of(unit).unwrap_or_default().to_string()
    }
}

fn on_axis<'p, 'a>(panel: &'p Panel<'a>, axis: usize) -> Vec<&'p PanelSignal<'a>> {
    panel.signals.iter().filter(|s| s.axis == axis).collect()
}

/// The title of y axis `axis` of `panel`: what is plotted and its unit.
///
/// One signal on the axis: its logged name (`engine.w [rpm]`). Several: their common
/// variable (`forward_slip [m/s]` for `fl.forward_slip`, `fr.forward_slip`, ...), else the
/// quantity their unit measures (`power [hp]`), else the unit alone. The unit is the display
/// unit, else the SI unit the signals share (`gearbox.ratio` has none: no brackets).
pub fn axis_title(panel: &Panel<'_>, axis: usize) -> String {
    let signals = on_axis(panel, axis);
    let unit = axis_unit(&signals);
    let name = axis_name(&signals, &unit);
    match (name.is_empty(), unit.is_empty()) {
        (_, true) => name,
        (true, false) => unit,
        (false, false) => format!("{name} [{unit}]"),
    }
}

/// The title of a panel of a multi-panel scope: the legend label its signals share, else
/// what each axis shows (`forward_slip`; `engine.w and engine.tau` for two axes).
pub fn panel_title(panel: &Panel<'_>) -> String {
    let first = panel.signals.first().map_or("", |s| s.label);
    if panel.signals.iter().all(|s| s.label == first) {
        return first.to_string();
    }
    let names: Vec<String> = (0..panel.units.len())
        .map(|k| {
            let signals = on_axis(panel, k);
            axis_name(&signals, &axis_unit(&signals))
        })
        .filter(|n| !n.is_empty())
        .collect();
    names.join(" and ")
}

/// Finite min and max of `values * factor` (non-finite products are skipped).
pub fn finite_range(values: &[f64], factor: f64) -> Option<(f64, f64)> {
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

/// The display unit of one scope signal (`None`: as logged).
fn display_unit(scope: &ScopeSpec, s: &ScopeSignal) -> Result<Option<DisplayUnit>, PlotError> {
    match scope.unit_of(s) {
        Some(u) => DisplayUnit::parse(u)
            .map(Some)
            .ok_or_else(|| PlotError::UnknownUnit {
                scope: scope.name.clone(),
                signal: s.signal.clone(),
                unit: u.to_string(),
                accepted: DisplayUnit::names(),
            }),
        None => Ok(None),
    }
}

/// The axis units of one panel, in order of first appearance, with the signals of each.
fn unit_groups<'a>(
    scope: &ScopeSpec,
    panel: &'a [ScopeSignal],
) -> Result<Vec<(String, Vec<&'a str>)>, PlotError> {
    let mut groups: Vec<(String, Vec<&'a str>)> = Vec::new();
    for s in panel {
        let unit = display_unit(scope, s)?.map_or(String::new(), |u| u.label);
        match groups.iter_mut().find(|(u, _)| *u == unit) {
            Some((_, names)) => names.push(&s.signal),
            None => groups.push((unit, vec![&s.signal])),
        }
    }
    Ok(groups)
}

/// Checks a scope without data: at least one signal, known display units, at most
/// [`MAX_AXES`] units per panel. (`drivelink validate` can call this before a run.)
pub fn check_scope(scope: &ScopeSpec) -> Result<(), PlotError> {
    if scope.signal_names().next().is_none() {
        return Err(PlotError::NoSignals {
            scope: scope.name.clone(),
        });
    }
    for (k, panel) in scope.panels.iter().enumerate() {
        let groups = unit_groups(scope, panel)?;
        if groups.len() > MAX_AXES {
            return Err(PlotError::TooManyUnits {
                scope: scope.name.clone(),
                panel: k + 1,
                units: groups
                    .into_iter()
                    .map(|(u, names)| {
                        let u = if u.is_empty() { "as logged" } else { &u };
                        (u.to_string(), names.into_iter().map(String::from).collect())
                    })
                    .collect(),
            });
        }
    }
    Ok(())
}

/// Resolves every panel of `scope` against `result` (empty panels are dropped).
pub fn resolve<'a>(
    result: &'a SimResult,
    scope: &'a ScopeSpec,
) -> Result<Vec<Panel<'a>>, PlotError> {
    check_scope(scope)?;
    let n_time = result.time.len();
    let mut panels = Vec::new();
    for panel in &scope.panels {
        let units: Vec<String> = unit_groups(scope, panel)?
            .into_iter()
            .map(|(u, _)| u)
            .collect();
        let mut signals = Vec::with_capacity(panel.len());
        for s in panel {
            let values = result
                .get(&s.signal)
                .ok_or_else(|| unknown_signal(&scope.name, &s.signal, &result.names))?;
            let values = &values[..values.len().min(n_time)];
            let si_unit = result
                .names
                .iter()
                .position(|n| *n == s.signal)
                .and_then(|k| result.units.get(k)?.as_deref());
            let unit = display_unit(scope, s)?;
            let unit_label = unit.as_ref().map_or(String::new(), |u| u.label.clone());
            let axis = units.iter().position(|u| *u == unit_label).unwrap_or(0);
            signals.push(PanelSignal {
                signal: &s.signal,
                label: s.display_label(),
                unit: unit_label,
                factor: unit.as_ref().map_or(1.0, |u| u.factor),
                values,
                si_unit,
                step: is_step_like(&s.signal, values),
                axis,
                dash: Dash::Solid,
                color: 0,
            });
        }
        if signals.is_empty() {
            continue;
        }
        let mut p = Panel { signals, units };
        assign_dashes(&mut p);
        panels.push(p);
    }
    assign_colors(&mut panels);
    Ok(panels)
}

/// Whether `c` separates the parts of a logged name (`fl.forward_slip`, `slip_fl`).
fn is_separator(c: char) -> bool {
    c == '.' || c == '_'
}

/// What tells the signals of a panel apart: each name without the parts all of them share
/// (`fl` of `fl.forward_slip` next to `fr.forward_slip`; `fl` of `slip_fl` next to
/// `slip_fr`). `None` for a panel of one signal, or when a name would be left empty.
fn distinct_parts(names: &[&str]) -> Option<Vec<String>> {
    if names.len() < 2 {
        return None;
    }
    let chars: Vec<Vec<char>> = names.iter().map(|n| n.chars().collect()).collect();
    let shortest = chars.iter().map(Vec::len).min().unwrap_or(0);
    let same = |f: &dyn Fn(&Vec<char>) -> char| chars.iter().all(|c| f(c) == f(&chars[0]));
    // A cut at `k` in `c` is on a part boundary when a separator is next to it.
    let boundary = |c: &Vec<char>, k: usize| {
        k == 0 || k == c.len() || is_separator(c[k - 1]) || is_separator(c[k])
    };
    // Longest common prefix and suffix, cut back to part boundaries in every name.
    let mut pre = (0..shortest).take_while(|&i| same(&|c| c[i])).count();
    while pre > 0 && !chars.iter().all(|c| boundary(c, pre)) {
        pre -= 1;
    }
    let mut suf = (0..shortest - pre)
        .take_while(|&i| same(&|c| c[c.len() - 1 - i]))
        .count();
    while suf > 0 && !chars.iter().all(|c| boundary(c, c.len() - suf)) {
        suf -= 1;
    }
    let parts: Vec<String> = chars
        .iter()
        .map(|c| {
            let part: String = c[pre..c.len() - suf].iter().collect();
            part.trim_matches(is_separator).to_string()
        })
        .collect();
    parts.iter().all(|p| !p.is_empty()).then_some(parts)
}

/// Colours in order of appearance, except that a signal with the same legend label, or the
/// same distinct part of its name ([`distinct_parts`]: the wheel `fl` of `fl.forward_slip`
/// and `fl.sideways_slip`), as a signal of an earlier panel keeps that signal's colour
/// (unless another signal of its own panel has it already). Within a panel colours differ.
fn assign_colors(panels: &mut [Panel<'_>]) {
    let mut known: Vec<(String, usize)> = Vec::new();
    let mut next = 0;
    for p in panels.iter_mut() {
        let names: Vec<&str> = p.signals.iter().map(|s| s.signal).collect();
        let parts = distinct_parts(&names);
        let mut used: Vec<usize> = Vec::new();
        for (i, s) in p.signals.iter_mut().enumerate() {
            let keys: Vec<String> = std::iter::once(format!("label:{}", s.label))
                .chain(parts.as_ref().map(|v| format!("part:{}", v[i])))
                .collect();
            let earlier = keys.iter().find_map(|k| {
                known
                    .iter()
                    .find(|(n, c)| n == k && !used.contains(c))
                    .map(|(_, c)| *c)
            });
            let color = earlier.unwrap_or_else(|| {
                while used.iter().any(|u| u % PALETTE_LEN == next % PALETTE_LEN) {
                    next += 1;
                }
                next += 1;
                next - 1
            });
            s.color = color;
            used.push(color);
            for k in keys {
                if !known.iter().any(|(n, _)| *n == k) {
                    known.push((k, color));
                }
            }
        }
    }
}

/// Gives each signal the first dash style that no earlier, overlapping signal of its axis has.
fn assign_dashes(p: &mut Panel<'_>) {
    let spans: Vec<f64> = (0..p.units.len())
        .map(|a| p.data_range(a).map_or(0.0, |(lo, hi)| hi - lo))
        .collect();
    for i in 1..p.signals.len() {
        let (before, rest) = p.signals.split_at_mut(i);
        let s = &mut rest[0];
        let tol = OVERLAP_TOL * spans[s.axis];
        let taken: Vec<Dash> = before
            .iter()
            .filter(|e| e.axis == s.axis && overlap(e, s, tol))
            .map(|e| e.dash)
            .collect();
        s.dash = Dash::ALL
            .into_iter()
            .find(|d| !taken.contains(d))
            .unwrap_or(Dash::ALL[i % Dash::ALL.len()]);
    }
}

/// Whether two signals coincide (within `tol`, display units) on at least
/// [`OVERLAP_FRACTION`] of their common finite samples.
fn overlap(a: &PanelSignal<'_>, b: &PanelSignal<'_>, tol: f64) -> bool {
    let (mut common, mut equal) = (0usize, 0usize);
    for (x, y) in a.values.iter().zip(b.values) {
        let (x, y) = (x * a.factor, y * b.factor);
        if x.is_finite() && y.is_finite() {
            common += 1;
            if (x - y).abs() <= tol {
                equal += 1;
            }
        }
    }
    common > 0 && equal as f64 >= OVERLAP_FRACTION * common as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(cols: &[(&str, Vec<f64>)]) -> SimResult {
        let names = cols.iter().map(|(n, _)| n.to_string()).collect();
        let mut r = SimResult::new("m", names);
        let n = cols[0].1.len();
        for i in 0..n {
            let row: Vec<f64> = cols.iter().map(|(_, v)| v[i]).collect();
            r.push_row(i as f64, &row);
        }
        r
    }

    #[test]
    fn equal_traces_get_distinct_dashes() {
        let ramp: Vec<f64> = (0..100).map(f64::from).collect();
        let other: Vec<f64> = ramp.iter().map(|v| 500.0 - v).collect();
        let r = result(&[
            ("a", ramp.clone()),
            ("b", ramp.clone()),
            ("c", other),
            ("d", ramp),
        ]);
        let scope = ScopeSpec::new(
            "s",
            ["a", "b", "c", "d"]
                .iter()
                .map(|n| ScopeSignal::new(*n))
                .collect(),
        );
        let panels = resolve(&r, &scope).unwrap();
        let dashes: Vec<Dash> = panels[0].signals.iter().map(|s| s.dash).collect();
        // b equals a; c is elsewhere; d equals a and b.
        assert_eq!(dashes, [Dash::Solid, Dash::Dash, Dash::Solid, Dash::Dot]);
    }

    #[test]
    fn one_wheel_keeps_one_colour_across_panels() {
        let v: Vec<f64> = (0..10).map(f64::from).collect();
        let wheels = ["fl", "fr", "rl", "rr"];
        let names: Vec<String> = ["forward_slip", "sideways_slip"]
            .iter()
            .flat_map(|q| wheels.iter().map(move |w| format!("{w}.{q}")))
            .collect();
        let cols: Vec<(&str, Vec<f64>)> = names.iter().map(|n| (n.as_str(), v.clone())).collect();
        let r = result(&cols);
        let mut scope = ScopeSpec::new("slips", names[..4].iter().map(ScopeSignal::new).collect());
        // Unlabelled: the wheel is the part of the name that differs.
        scope
            .panels
            .push(names[4..].iter().map(ScopeSignal::new).collect());
        let colours = |scope: &ScopeSpec| -> Vec<Vec<usize>> {
            resolve(&r, scope)
                .unwrap()
                .iter()
                .map(|p| p.signals.iter().map(|s| s.color).collect())
                .collect()
        };
        assert_eq!(colours(&scope), [[0, 1, 2, 3], [0, 1, 2, 3]]);
        // Labelled "fl", ... in both panels, the second panel in another order.
        let mut labelled = scope.clone();
        labelled.panels[1].reverse();
        for p in &mut labelled.panels {
            for s in p.iter_mut() {
                s.label = Some(s.signal[..2].to_string());
            }
        }
        assert_eq!(colours(&labelled), [[0, 1, 2, 3], [3, 2, 1, 0]]);
        // A new signal in a later panel gets the next unused colour; one panel never
        // repeats a colour even when two of its signals share a label.
        let mut more = scope.clone();
        more.panels.push(vec![
            ScopeSignal::new("fl.forward_slip").with_label("x"),
            ScopeSignal::new("fl.sideways_slip").with_label("x"),
        ]);
        assert_eq!(colours(&more)[2], [4, 5]);
    }

    #[test]
    fn distinct_parts_strip_shared_name_parts_at_separators() {
        let parts = |n: &[&str]| distinct_parts(n);
        assert_eq!(parts(&["slip_fl", "slip_fr"]).unwrap(), ["fl", "fr"]);
        assert_eq!(
            parts(&["gearbox.A_w_rel", "lockup.w_rel"]).unwrap(),
            ["gearbox.A", "lockup"]
        );
        assert_eq!(parts(&["car.ax", "car.ay"]).unwrap(), ["ax", "ay"]);
        assert_eq!(parts(&["a.y"]), None);
        assert_eq!(parts(&["a.y", "a.y"]), None);
    }

    #[test]
    fn two_units_share_a_panel_on_left_and_right_axes() {
        let r = result(&[("w", vec![1.0, 2.0]), ("tau", vec![3.0, 4.0])]);
        let scope = ScopeSpec::new(
            "s",
            vec![
                ScopeSignal::new("w").with_unit("rpm"),
                ScopeSignal::new("tau").with_unit("N*m"),
                ScopeSignal::new("w").with_unit("rpm").with_label("again"),
            ],
        );
        let panels = resolve(&r, &scope).unwrap();
        assert_eq!(panels[0].units, vec!["rpm", "N·m"]);
        let axes: Vec<usize> = panels[0].signals.iter().map(|s| s.axis).collect();
        assert_eq!(axes, [0, 1, 0]);
    }

    #[test]
    fn three_units_in_one_panel_are_refused_naming_scope_and_signals() {
        let r = result(&[("w", vec![1.0]), ("tau", vec![3.0]), ("p", vec![5.0])]);
        let scope = ScopeSpec::new(
            "mixed",
            vec![
                ScopeSignal::new("w").with_unit("rpm"),
                ScopeSignal::new("tau").with_unit("N*m"),
                ScopeSignal::new("p").with_unit("hp"),
            ],
        );
        let e = resolve(&r, &scope).unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(e, PlotError::TooManyUnits { panel: 1, .. }),
            "{msg}"
        );
        for part in ["`mixed`", "rpm: `w`", "N·m: `tau`", "hp: `p`"] {
            assert!(msg.contains(part), "{part} missing in: {msg}");
        }
    }
}
