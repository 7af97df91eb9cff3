//! Metrics: one number (or word) per run, computed from its results by a small expression
//! language, parsed once when the study (or run) is set up and evaluated after each run.
//!
//! Metrics come from `--metric NAME=EXPR` (a sweep) and from the netlist's top-level
//! `"metrics": {"NAME": "EXPR", ...}` section (every `drivelink run`, a sweep's default
//! columns). EXPR is an arithmetic expression of numbers (SI, or with a unit directly
//! after them: `1.07 s`, `2 deg`, `9.80665 m/s^2`; a quoted `"500 ms"` too), model
//! parameters (their value in the run), earlier metrics of the same list, `end_time`,
//! `pi`, `g_n`, and these functions:
//!
//! | expression | value |
//! |---|---|
//! | `end_time` | time the run ended, s |
//! | `status` | `completed`, `stopped` or `failed` (a text column; a whole `--metric` only) |
//! | `final(SIG)` | last sample of SIG |
//! | `max(SIG [, T0, T1])`, `min(...)` | extreme sample of SIG (event instants included, both sides); over the window [T0, T1] with SIG interpolated at its ends |
//! | `mean(SIG [, T0, T1])` | time-weighted mean: the integral of the piecewise-linear trace of the results (trapezoidal rule over the samples; an event instant's two samples add a zero-width interval) divided by the time span (or the window's) |
//! | `integral(SIG [, T0, T1])` | that integral itself (unit of SIG times s) |
//! | `at(SIG, TIME)` | SIG linearly interpolated at TIME (`12`, `12 s`, `"500 ms"`, `t_steer + 1 s`); the right value at an event instant; NaN outside the run |
//! | `first_time(COND [, T0, T1])` | first instant COND holds: between two samples the crossing of a comparison is interpolated linearly; NaN if never |
//! | `count(COND [, T0, T1])` | how many times COND starts to hold (holding at T0 counts) |
//! | `first_peak(SIG [, T0, T1])` | SIG at the first local maximum of abs(SIG) (a sample where it stops rising); NaN if none |
//! | `time_of_max(SIG [, T0, T1])`, `time_of_min` | instant of the first extreme sample |
//! | `slope(Y, X [, X0, X1])` | least-squares slope of Y against X over the samples with X0 <= X <= X1 |
//! | `event_time(BLOCK, KIND, N)` | time of the N-th (1-based) event of KIND (`lock`, `unlock`, `free`, `engage`, `zero_crossing`, `time_event`, `stop`, `impact`) of BLOCK; NaN when the run has fewer |
//! | `energy(ELEMENT)` | for a source, the work it supplied; for any other element of the energy audit, the energy it dissipated, J |
//!
//! SIG, COND, Y and X are signal expressions: element-wise arithmetic, comparisons
//! (`< <= > >= == !=`, 1 or 0), `and`, `or`, `not`, `abs`, `sqrt`, `exp`, `ln`, `sin`,
//! `cos`, `tan`, `atan`, `atan2`, `hypot`, `sign`, `if(C, A, B)` over logged variables
//! (`block.var`), `time` and numbers, on the results' time grid. T0, T1, TIME, X0, X1 are
//! numbers (any expression without a bare signal; `first_time(...)` is one). A window that
//! is not inside the run, or whose start is after its end, gives NaN.
//!
//! Values are SI. SIG is any loggable `block.var` (see `drivelink blocks TYPE`); a study
//! or a run logs it even when the netlist does not. A failed run's metrics that read its
//! results, events or energy are NaN (its partial results are not a value of the study);
//! `end_time`, `status`, parameters and numbers are kept.
//!
//! Modules: `parse` (syntax), `resolve` (names and shapes), `eval` (values on a
//! [`SimResult`]).

mod eval;
mod parse;
mod resolve;

use drivelink_core::compile::Scope;
use drivelink_core::expr;
use drivelink_core::suggest;
use drivelink_core::units::Dim;
use drivelink_core::{Diagram, EnergyAudit, Plan, SimResult};
use serde_json::Value;

use crate::error::SweepError;
use crate::table::Cell;
use parse::{Func, Kind, Node};
use resolve::{is_series, Names};

/// Where a metric was defined: names it in messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A `--metric NAME=EXPR` argument (`metrics=` in Python).
    Arg,
    /// The `metrics` section of the netlist file named.
    Netlist(String),
}

/// A named metric, a column of the study table and an entry of `summary.json`'s
/// `"metrics"`.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// Column name.
    pub name: String,
    /// The expression as given.
    pub expr: String,
    /// Where it was given.
    pub source: Source,
    node: Node,
}

/// Names a bare word can be, besides earlier metrics and parameters.
const BUILTIN_NAMES: &[&str] = &["time", "end_time", "pi", "g_n"];

/// Standard gravity, m/s².
const G_N: f64 = 9.80665;

/// Whether `s` may be a column name: letters, digits, `_`, `.`, `-`, not starting with a
/// digit.
pub(crate) fn is_column_name(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_alphanumeric() || matches!(ch, '_' | '.' | '-'))
}

/// A message about a metric, at a byte position of its expression (if any).
struct Located {
    pos: Option<usize>,
    message: String,
}

fn at(pos: usize, message: impl Into<String>) -> Located {
    Located {
        pos: Some(pos),
        message: message.into(),
    }
}

/// Every node of a tree, parents first.
fn visit<'a>(n: &'a Node, f: &mut impl FnMut(&'a Node)) {
    f(n);
    match &n.kind {
        Kind::Neg(x) | Kind::Not(x) => visit(x, f),
        Kind::Bin(_, a, b) => {
            visit(a, f);
            visit(b, f);
        }
        Kind::Call(_, args) => args.iter().for_each(|a| visit(a, f)),
        _ => {}
    }
}

impl Metric {
    /// Parse `NAME=EXPR` (or a bare EXPR, which is then also the column name). Checks the
    /// syntax only; [`resolve`] resolves the names and [`Metric::check`] checks signals,
    /// blocks and elements against a compiled model.
    pub fn parse(arg: &str) -> Result<Metric, SweepError> {
        // `a <= b` and `x == 1` hold a '=' of their own: NAME is before a '=' that is not
        // part of a comparison.
        let named = arg
            .split_once('=')
            .filter(|(n, e)| !e.starts_with('=') && !n.contains(['<', '>', '!', '(']));
        let (name, expr) = match named {
            Some((n, e)) => (n.trim(), e.trim()),
            None => (arg.trim(), arg.trim()),
        };
        if named.is_some() && !is_column_name(name) {
            return Err(SweepError::Metric {
                name: if name.is_empty() { arg } else { name }.to_string(),
                message: format!("'{name}' is not a column name; expected NAME=EXPR with NAME made of letters, digits, '_', '.', '-'"),
            });
        }
        Metric::new(name, expr, Source::Arg)
    }

    /// A metric of the netlist `file`'s `metrics` section.
    pub fn from_netlist(name: &str, expr: &str, file: &str) -> Result<Metric, SweepError> {
        let m = Metric::new(name, expr, Source::Netlist(file.to_string()))?;
        if m.is_text() {
            return Err(m.error(at(
                0,
                "status is text; a netlist metric is a number (a sweep takes --metric NAME=status)",
            )));
        }
        Ok(m)
    }

    fn new(name: &str, expr: &str, source: Source) -> Result<Metric, SweepError> {
        let mut m = Metric {
            name: name.to_string(),
            expr: expr.to_string(),
            source,
            node: Node {
                kind: Kind::Num(f64::NAN, None),
                start: 0,
                end: 0,
            },
        };
        m.node = parse::parse(expr).map_err(|e| m.error(at(e.pos, e.message)))?;
        Ok(m)
    }

    /// An error about this metric (no position), located where it was given.
    pub(crate) fn located(&self, message: String) -> SweepError {
        self.error(Located { pos: None, message })
    }

    /// The error `l` about this metric, located where it was given.
    fn error(&self, l: Located) -> SweepError {
        let column = l
            .pos
            .map(|p| self.expr.get(..p).map_or(p, |s| s.chars().count()) + 1);
        match &self.source {
            Source::Arg => SweepError::Metric {
                name: self.name.clone(),
                message: match column {
                    Some(c) if self.expr.chars().count() > 1 => {
                        format!("{} (at column {c} of {})", l.message, self.expr)
                    }
                    _ => l.message,
                },
            },
            Source::Netlist(file) => SweepError::Model(drivelink_core::Error::Netlist {
                file: file.clone(),
                path: format!("metrics.{}", self.name),
                message: match column {
                    Some(c) => format!("at column {c}: {}", l.message),
                    None => l.message,
                },
            }),
        }
    }

    /// Whether the column holds text (`status`) rather than numbers.
    pub fn is_text(&self) -> bool {
        self.node.kind == Kind::Status
    }

    /// The signals the metric reads (the study and the run log them).
    pub fn signals(&self) -> Vec<&str> {
        let mut v = Vec::new();
        visit(&self.node, &mut |n| {
            if let Kind::Signal(s) = &n.kind {
                if !v.contains(&s.as_str()) {
                    v.push(s.as_str());
                }
            }
        });
        v
    }

    /// Whether the metric reads the energy audit.
    pub fn needs_audit(&self) -> bool {
        let mut any = false;
        visit(&self.node, &mut |n| {
            any |= matches!(n.kind, Kind::Energy(_))
        });
        any
    }

    /// Whether the metric uses a model parameter's value.
    fn uses_params(&self) -> bool {
        let mut any = false;
        visit(&self.node, &mut |n| any |= matches!(n.kind, Kind::Param(_)));
        any
    }

    /// The SI unit of the metric's values when it is plain: `s` for times, `J` for
    /// energies, the signal's unit for `max`, `min`, `mean`, `final`, `at` and
    /// `first_peak` of a signal; `None` otherwise.
    pub fn unit(&self, plan: &Plan) -> Option<String> {
        match &self.node.kind {
            Kind::EndTime
            | Kind::EventTime { .. }
            | Kind::Call(Func::FirstTime | Func::TimeOfMax | Func::TimeOfMin, _) => {
                Some("s".into())
            }
            Kind::Energy(_) => Some("J".into()),
            Kind::Call(
                Func::Max | Func::Min | Func::Mean | Func::Final | Func::At | Func::FirstPeak,
                args,
            ) => match &args[0].kind {
                Kind::Signal(s) => plan.variable(s).and_then(|v| v.unit.map(str::to_string)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Check signal, block and element names against a compiled plan.
    pub fn check(&self, plan: &Plan) -> Result<(), SweepError> {
        let mut err = None;
        visit(&self.node, &mut |n| {
            if err.is_none() {
                err = check_node(n, plan).err();
            }
        });
        err.map_or(Ok(()), |e| Err(self.error(e)))
    }
}

/// The names one node uses, against the compiled plan.
fn check_node(n: &Node, plan: &Plan) -> Result<(), Located> {
    match &n.kind {
        Kind::Signal(s) if plan.variable(s).is_none() => {
            let names = plan.variables().iter().map(|v| v.name.as_str());
            let block = s.rsplit_once('.').map(|(b, _)| b).unwrap_or("");
            let of_block: Vec<&str> = plan
                .variables()
                .iter()
                .map(|v| v.name.as_str())
                .filter(|n| n.rsplit_once('.').map(|(b, _)| b) == Some(block))
                .collect();
            let known = if of_block.is_empty() {
                "; `drivelink blocks TYPE` lists a block's variables".to_string()
            } else {
                format!("; block '{block}' has: {}", of_block.join(", "))
            };
            Err(at(
                n.start,
                format!("unknown signal '{s}'{}{known}", suggest::hint(s, names)),
            ))
        }
        Kind::EventTime { block, .. } => {
            let names: Vec<&str> = plan
                .blocks()
                .iter()
                .map(|b| b.name.as_str())
                .chain(plan.joint_names())
                .chain(std::iter::once("network"))
                .collect();
            if names.contains(&block.as_str()) {
                Ok(())
            } else {
                Err(at(
                    n.start,
                    format!(
                        "unknown block '{block}'{}",
                        suggest::hint(block, names.iter().copied())
                    ),
                ))
            }
        }
        Kind::Energy(e) => {
            let names = plan.energy_elements();
            if names.contains(e) {
                Ok(())
            } else {
                Err(at(
                    n.start,
                    format!(
                        "'{e}' is not in the energy audit{}; its elements are: {}",
                        suggest::hint(e, names.iter().map(String::as_str)),
                        names.join(", ")
                    ),
                ))
            }
        }
        _ => Ok(()),
    }
}

/// The metrics of a netlist's `metrics` section, parsed (`file` names the netlist in
/// messages; every malformed metric is reported).
pub fn netlist_metrics(d: &Diagram, file: &str) -> Result<Vec<Metric>, SweepError> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (name, expr) in &d.metrics {
        match Metric::from_netlist(name, expr, file) {
            Ok(m) => out.push(m),
            Err(e) => errors.push(e),
        }
    }
    SweepError::from_list(errors)?;
    Ok(out)
}

/// The netlist's metrics with `args` (`--metric`) added: an argument naming a netlist
/// metric replaces its expression in place (later netlist metrics then use the new value);
/// the others follow the netlist's, in their order.
pub fn merge(mut netlist: Vec<Metric>, args: Vec<Metric>) -> Vec<Metric> {
    for a in args {
        match netlist.iter_mut().find(|m| m.name == a.name) {
            Some(m) => *m = a,
            None => netlist.push(a),
        }
    }
    netlist
}

/// Resolve the bare names of every metric of the list (earlier metrics, the model
/// parameters `params`, built-in names) and check the shape of each expression (one
/// number; signals only inside aggregations; windows that do not end before they start).
pub fn resolve(metrics: &mut [Metric], params: &Scope) -> Result<(), SweepError> {
    let names: Vec<(String, bool)> = metrics
        .iter()
        .map(|m| (m.name.clone(), m.is_text()))
        .collect();
    let mut errors = Vec::new();
    for (me, m) in metrics.iter_mut().enumerate() {
        let cx = Names {
            metrics: &names,
            me,
            params,
        };
        let mut node = m.node.clone();
        let r = cx.resolve_tree(&mut node).and_then(|()| {
            if node.kind == Kind::Status {
                return Ok(());
            }
            if is_series(&node, &m.expr)? {
                Err(at(
                    node.start,
                    format!(
                        "'{}' is a signal, not one number: aggregate it, e.g. max(...), mean(...), final(...), at(..., 2 s)",
                        m.expr
                    ),
                ))
            } else {
                Ok(())
            }
        });
        match r {
            Ok(()) => m.node = node,
            Err(l) => errors.push(m.error(l)),
        }
    }
    SweepError::from_list(errors)
}

/// The numbers of the model parameters a list of metrics uses, for one run: `params` are
/// the netlist's parameters (with the run's values in place).
pub fn parameter_values(metrics: &[Metric], params: &[(String, Value)]) -> Scope {
    if !metrics.iter().any(Metric::uses_params) {
        return Scope::new();
    }
    drivelink_core::compile::resolve_parameters(params, &Scope::new(), "").unwrap_or_default()
}

/// The value of each metric for a finished run, in order (`audit` is needed for
/// `energy(...)` only; `params` are the run's parameter values, see [`parameter_values`]).
pub fn evaluate(
    metrics: &[Metric],
    res: &SimResult,
    audit: Option<&EnergyAudit>,
    params: &Scope,
) -> Vec<Cell> {
    let mut values: Vec<f64> = Vec::with_capacity(metrics.len());
    let mut cells = Vec::with_capacity(metrics.len());
    for m in metrics {
        if m.is_text() {
            values.push(f64::NAN);
            cells.push(Cell::Text(res.status.as_str().to_string()));
            continue;
        }
        let cx = eval::Cx {
            res,
            audit,
            params,
            earlier: &values,
        };
        // A zero loss of an idle element is 0, not -0 (as summary.json writes it).
        let v = cx.scalar(&m.node);
        let v = if v == 0.0 { 0.0 } else { v };
        values.push(v);
        cells.push(Cell::Float(v));
    }
    cells
}

/// `summary.json`'s `"metrics"`: name -> number (`null` for NaN or an infinity).
pub fn values_json(metrics: &[Metric], cells: &[Cell]) -> Value {
    Value::Object(
        metrics
            .iter()
            .zip(cells)
            .map(|(m, c)| {
                let v = match c {
                    Cell::Float(x) if x.is_finite() => Value::from(*x),
                    Cell::Int(i) => Value::from(*i),
                    Cell::Text(t) => Value::from(t.clone()),
                    _ => Value::Null,
                };
                (m.name.clone(), v)
            })
            .collect(),
    )
}

/// Time-weighted mean of the piecewise-linear trace `(t, y)`: trapezoidal integral over the
/// span divided by the span (the single value for a zero span; `None` without samples).
pub fn time_mean(t: &[f64], y: &[f64]) -> Option<f64> {
    let (first, last) = (*t.first()?, *t.last()?);
    let span = last - first;
    if span <= 0.0 {
        return y.last().copied();
    }
    let integral: f64 = t
        .windows(2)
        .zip(y.windows(2))
        .map(|(t, y)| (t[1] - t[0]) * 0.5 * (y[0] + y[1]))
        .sum();
    Some(integral / span)
}

/// A time from text: a number of seconds or an expression with a time unit.
pub(crate) fn parse_time(text: &str) -> Result<f64, String> {
    // A time with a unit may be quoted, as the docs write it: at(v, "500 ms").
    let text = text.trim();
    let text = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .or_else(|| text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')))
        .unwrap_or(text);
    let q = expr::eval(text, &|_| None)
        .map_err(|e| format!("time '{text}': {e}; expected a time such as 12 or \"500 ms\""))?;
    let t = expr::check_dim(&q, Dim::TIME, "s").map_err(|e| format!("time '{text}': {e}"))?;
    if t.is_finite() {
        Ok(t)
    } else {
        Err(format!("time '{text}': expected a finite time"))
    }
}

#[cfg(test)]
mod tests;
