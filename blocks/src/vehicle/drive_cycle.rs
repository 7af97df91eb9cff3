//! `DriveCycle`: a speed trace to follow (the reference of a `LongitudinalDriver`), one of
//! the standard cycles shipped in `models/cycles/` or a CSV file.
//!
//! `cycle` = `"udds"`, `"hwfet"`, `"us06"`, `"ftp75"`, `"nedc"`, `"wltc3b"` (embedded in
//! the block with `include_str!`: nothing is read at run time, nothing is needed on a fresh
//! machine) or the path of a CSV file, read once when the block is built (a relative path
//! is taken from the netlist's folder, as a subsystem `file` is; from the working directory
//! for a model built in code). The file's first line names the
//! columns: `time` (or `time [s]`) and a speed with its unit, `speed [m/s]`, `speed [km/h]`
//! or `speed [mph]`, in any order, other columns ignored; then one row per breakpoint,
//! times strictly increasing, speeds finite and >= 0. Blank lines and lines starting with
//! `#` are skipped. Errors name the parameter, the file, the line and the column.
//!
//! Outputs, with `τ = t + preview`:
//! - `v` (m/s): the trace at `τ`, linear between breakpoints, held before the first and
//!   after the last;
//! - `a` (m/s²): the slope of the segment in use (0 outside the trace);
//! - `done`: 0 while `t` is before the trace's end, 1 from its end on (the end in run time,
//!   not shifted by the preview).
//!
//! `repeat = n` plays the trace `n` times back to back (each copy shifted by the trace's
//! duration; the trace must end at the speed it starts with).
//!
//! A netlist's `"solver": {"stop_time": "cycle"}` ends the run at the trace's end (its last
//! breakpoint after `repeat`: a trace from 0 s lasts its duration × `repeat`), the instant
//! `done` turns 1; the preview does not shorten it ([`Block::schedule_end`]).
//!
//! Every breakpoint (at run time `t_k − preview`) and the end are time events, so a solver
//! step never straddles a kink of the trace: inside a step `v` is one straight line. The
//! segment is a mode set in `update_modes`. Variables: `distance` (m, the trace's distance
//! from its first point to `τ`), `segment` (number of breakpoints passed).

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, EventCx, EventTag, ParamDefault, ParamError,
    ParamKind, ParamSpec, Params, PortDecl, Registry, VarDecl, VarSource,
};

use super::finite;
use crate::signal::{count_param, FirstCall};

/// The standard cycles shipped with drivelink: (name, CSV text).
pub const STANDARD_CYCLES: [(&str, &str); 6] = [
    ("udds", include_str!("../../../models/cycles/udds.csv")),
    ("hwfet", include_str!("../../../models/cycles/hwfet.csv")),
    ("us06", include_str!("../../../models/cycles/us06.csv")),
    ("ftp75", include_str!("../../../models/cycles/ftp75.csv")),
    ("nedc", include_str!("../../../models/cycles/nedc.csv")),
    ("wltc3b", include_str!("../../../models/cycles/wltc3b.csv")),
];

pub(crate) fn register(r: &mut Registry) {
    r.register(drive_cycle_type());
}

/// The `DriveCycle` block type: its parameters and how it is built.
fn drive_cycle_type() -> BlockType {
    BlockType {
        name: "DriveCycle",
        category: "vehicle",
        doc: "A speed trace: one of the standard cycles (\"udds\", \"hwfet\", \"us06\", \"ftp75\", \"nedc\", \"wltc3b\", shipped in models/cycles/) or a CSV file (columns time and speed [m/s | km/h | mph], read when the block is built, relative to the netlist's folder). v = the trace at t + preview (linear between breakpoints), a = its slope, done = 1 from the trace's end on; every breakpoint is a time event. Variables distance (m, of the trace), segment.",
        ports_doc: "v[out], a[out], done[out]",
        params: vec![
            ParamSpec::with(
                "cycle",
                ParamKind::Text,
                ParamDefault::Value("udds".into()),
                "a standard cycle name (udds, hwfet, us06, ftp75, nedc, wltc3b) or the path of a CSV file",
            ),
            ParamSpec::number("preview", "s", 0.0, "look-ahead: the outputs are the trace at t + preview (>= 0)"),
            ParamSpec::number("repeat", "1", 1.0, "number of times the trace is played back to back (integer >= 1; at most 4194304 breakpoints in all)"),
        ],
        build: BlockBuild::Primitive(build),
    }
}

/// A speed trace: breakpoint times (s, strictly increasing) and speeds (m/s).
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// Breakpoint times, s.
    pub times: Vec<f64>,
    /// Speeds at the breakpoints, m/s.
    pub speeds: Vec<f64>,
}

/// The speed unit of a column header `speed [UNIT]`, as m/s per unit.
fn speed_unit(header: &str) -> Option<f64> {
    let (name, rest) = header.split_once('[')?;
    if !name.trim().eq_ignore_ascii_case("speed") {
        return None;
    }
    match rest.trim_end().strip_suffix(']')?.trim() {
        "m/s" => Some(1.0),
        "km/h" | "kph" => Some(1.0 / 3.6),
        "mph" => Some(0.44704),
        _ => None,
    }
}

/// The column indices of `time` and the speed, and the speed's scale to m/s.
fn parse_header(line: &str) -> Result<(usize, usize, f64), String> {
    let cols: Vec<&str> = line.split(',').map(str::trim).collect();
    let time = cols
        .iter()
        .position(|c| *c == "time" || c.replace(' ', "") == "time[s]")
        .ok_or_else(|| format!("line 1: no `time` column in the header `{line}`"))?;
    let (speed, scale) = cols
        .iter()
        .enumerate()
        .find_map(|(i, c)| speed_unit(c).map(|s| (i, s)))
        .ok_or_else(|| {
            format!("line 1: no speed column with its unit (`speed [m/s]`, `speed [km/h]` or `speed [mph]`) in the header `{line}`")
        })?;
    Ok((time, speed, scale))
}

/// The most breakpoints a repeated trace may have (2^22, about 4.2 million: the UDDS
/// played 3,000 times; 170 MB for the block's five per-breakpoint tables).
const MAX_POINTS: usize = 1 << 22;

impl Trace {
    /// Parse a CSV trace (see the module docs); errors name the line and column.
    pub fn parse_csv(text: &str) -> Result<Trace, String> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim_start_matches('\u{feff}').trim()))
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
        let (_, header) = lines.next().ok_or("the file is empty")?;
        let (ct, cv, scale) = parse_header(header)?;
        let names: Vec<&str> = header.split(',').map(str::trim).collect();
        let mut trace = Trace {
            times: Vec::new(),
            speeds: Vec::new(),
        };
        for (n, line) in lines {
            let cells: Vec<&str> = line.split(',').map(str::trim).collect();
            let cell = |c: usize| -> Result<f64, String> {
                let s = cells.get(c).ok_or_else(|| {
                    format!("line {n}: column {} ({}) is missing", c + 1, names[c])
                })?;
                let v: f64 = s.parse().map_err(|_| {
                    format!(
                        "line {n}, column {} ({}): `{s}` is not a number",
                        c + 1,
                        names[c]
                    )
                })?;
                if !v.is_finite() {
                    return Err(format!(
                        "line {n}, column {} ({}): `{s}` is not finite",
                        c + 1,
                        names[c]
                    ));
                }
                Ok(v)
            };
            let (t, v) = (cell(ct)?, cell(cv)?);
            if v < 0.0 {
                return Err(format!(
                    "line {n}, column {} ({}): speed {v} is negative",
                    cv + 1,
                    names[cv]
                ));
            }
            if let Some(&prev) = trace.times.last() {
                if t <= prev {
                    return Err(format!(
                        "line {n}, column {} ({}): times must increase, but {t} follows {prev}",
                        ct + 1,
                        names[ct]
                    ));
                }
            }
            trace.times.push(t);
            trace.speeds.push(v * scale);
        }
        if trace.times.len() < 2 {
            return Err("a trace needs at least two rows".into());
        }
        Ok(trace)
    }

    /// One of the standard cycles by name.
    pub fn standard(name: &str) -> Option<Trace> {
        let (_, text) = STANDARD_CYCLES.iter().find(|(n, _)| *n == name)?;
        // The shipped files are checked by the tests: they parse.
        Trace::parse_csv(text).ok()
    }

    /// Duration from the first to the last breakpoint, s.
    pub fn duration(&self) -> f64 {
        self.times[self.times.len() - 1] - self.times[0]
    }

    /// The distance along the whole trace (exact integral of the piecewise-linear speed), m.
    pub fn distance(&self) -> f64 {
        self.cumulative_distance().last().copied().unwrap_or(0.0)
    }

    /// Distance from the first breakpoint to each breakpoint, m.
    fn cumulative_distance(&self) -> Vec<f64> {
        let mut d = 0.0;
        let mut out = Vec::with_capacity(self.times.len());
        out.push(0.0);
        for k in 1..self.times.len() {
            d += 0.5 * (self.speeds[k - 1] + self.speeds[k]) * (self.times[k] - self.times[k - 1]);
            out.push(d);
        }
        out
    }

    /// The trace played `n` times back to back; an error beyond [`MAX_POINTS`]
    /// breakpoints (checked before they are made).
    fn repeated(&self, n: usize) -> Result<Trace, String> {
        if n == 1 {
            return Ok(self.clone());
        }
        let (v0, v1) = (self.speeds[0], self.speeds[self.speeds.len() - 1]);
        if v0 != v1 {
            return Err(format!(
                "the trace ends at {v1} m/s but starts at {v0} m/s: it cannot repeat without a jump"
            ));
        }
        let points = (self.times.len() - 1)
            .checked_mul(n)
            .map(|p| p + 1)
            .filter(|&p| p <= MAX_POINTS);
        let Some(points) = points else {
            return Err(format!(
                "{n} gives more than {MAX_POINTS} breakpoints (the trace has {}); at most {} \
                 repeats of this trace",
                self.times.len(),
                (MAX_POINTS - 1) / (self.times.len() - 1)
            ));
        };
        let period = self.duration();
        let mut out = self.clone();
        out.times.reserve_exact(points - self.times.len());
        out.speeds.reserve_exact(points - self.times.len());
        for k in 1..n {
            let shift = period * k as f64;
            out.times.extend(self.times[1..].iter().map(|t| t + shift));
            out.speeds.extend_from_slice(&self.speeds[1..]);
        }
        Ok(out)
    }
}

/// The trace a `cycle` parameter names: a standard cycle or a CSV file.
fn load(p: &Params) -> Result<Trace, ParamError> {
    let name = p.text("cycle")?;
    if let Some(t) = Trace::standard(name) {
        return Ok(t);
    }
    let path = p.path("cycle")?;
    let looks_like_path = name.contains(['/', '\\', '.']);
    if !looks_like_path && !path.exists() {
        let names = STANDARD_CYCLES.iter().map(|(n, _)| *n);
        return Err(p.invalid(
            "cycle",
            format!(
                "unknown cycle `{name}`{}; the standard cycles are udds, hwfet, us06, ftp75, nedc, wltc3b, or give the path of a CSV file",
                drivelink_core::suggest::hint(name, names)
            ),
        ));
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| p.invalid("cycle", format!("cannot read `{}`: {e}", path.display())))?;
    Trace::parse_csv(&text).map_err(|m| p.invalid("cycle", format!("`{name}` {m}")))
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let preview = finite(p, "preview")?;
    if preview < 0.0 {
        return Err(p.invalid("preview", format!("must be >= 0, got {preview}")));
    }
    let repeat = count_param(p, "repeat", 1)?;
    let trace = load(p)?
        .repeated(repeat)
        .map_err(|m| p.invalid("repeat", m))?;
    let n = trace.times.len();
    let slopes = (1..n)
        .map(|k| (trace.speeds[k] - trace.speeds[k - 1]) / (trace.times[k] - trace.times[k - 1]))
        .collect();
    Ok(Box::new(DriveCycle {
        events: trace.times.iter().map(|t| t - preview).collect(),
        end: trace.times[n - 1],
        cum: trace.cumulative_distance(),
        slopes,
        trace,
        preview,
        seg: 0,
        done: false,
        first: FirstCall::armed(),
    }))
}

/// The drive-cycle block: see the module docs.
#[derive(Debug, Clone)]
pub struct DriveCycle {
    trace: Trace,
    /// Slope of segment `k` (between breakpoints `k` and `k + 1`), m/s².
    slopes: Vec<f64>,
    /// Distance of the trace at each breakpoint, m.
    cum: Vec<f64>,
    /// Run times of the breakpoints, `t_k − preview`.
    events: Vec<f64>,
    /// Run time of the trace's end (its last breakpoint, not shifted).
    end: f64,
    preview: f64,
    /// Number of breakpoints passed (`events[k] <= t`), a mode.
    seg: usize,
    /// `t >= end`, a mode.
    done: bool,
    first: FirstCall,
}

impl DriveCycle {
    /// `(v, a, distance)` of the trace at run time `t` in the current segment.
    fn at(&self, t: f64) -> (f64, f64, f64) {
        let tau = t + self.preview;
        let Trace { times, speeds } = &self.trace;
        let n = times.len();
        let s = self.seg;
        if s == 0 {
            return (speeds[0], 0.0, 0.0);
        }
        if s >= n {
            let v = speeds[n - 1];
            return (v, 0.0, self.cum[n - 1] + v * (tau - times[n - 1]));
        }
        let (t0, v0, a) = (times[s - 1], speeds[s - 1], self.slopes[s - 1]);
        let v = v0 + a * (tau - t0);
        (v, a, self.cum[s - 1] + 0.5 * (v0 + v) * (tau - t0))
    }
}

impl Block for DriveCycle {
    drivelink_core::run_state!(seg, done, first);
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::output("v").with_unit("m/s"),
            PortDecl::output("a").with_unit("m/s^2"),
            PortDecl::output("done").with_unit("1"),
        ];
        let variables = vec![
            VarDecl::new("distance", VarSource::Custom(0), "m")
                .doc("distance of the trace from its first point to t + preview")
                .from_state(),
            VarDecl::new("segment", VarSource::Custom(1), "1")
                .doc("number of breakpoints passed")
                .from_state(),
        ];
        BlockDecl {
            ports,
            variables,
            schedule_end: Some(self.end),
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let (v, a, _) = self.at(cx.t);
        y[0] = v;
        y[1] = a;
        y[2] = if self.done { 1.0 } else { 0.0 };
    }
    fn next_time_event(&self, t: f64) -> f64 {
        let k = self.events.partition_point(|&e| e <= t);
        let next = self.events.get(k).copied().unwrap_or(f64::INFINITY);
        if self.end > t {
            next.min(self.end)
        } else {
            next
        }
    }
    fn reset(&mut self, _t0: f64) {
        self.seg = 0;
        self.done = false;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = self.first.take();
        let seg = self.events.partition_point(|&e| e <= cx.t);
        let done = cx.t >= self.end;
        if seg == self.seg && done == self.done {
            return false;
        }
        if !fresh {
            if seg != self.seg {
                cx.log(
                    EventTag::TimeEvent,
                    format!("breakpoint {seg} of {}", self.events.len()),
                );
            }
            if done != self.done {
                cx.log(
                    EventTag::TimeEvent,
                    if done { "cycle ends" } else { "cycle restarts" },
                );
            }
        }
        self.seg = seg;
        self.done = done;
        true
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        match i {
            0 => self.at(cx.t).2,
            _ => self.seg as f64,
        }
    }
}
