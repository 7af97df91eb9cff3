//! Metrics: one number (or word) per run, computed from its results.
//!
//! `--metric NAME=EXPR`, EXPR one of
//!
//! | expression | value |
//! |---|---|
//! | `end_time` | time the run ended, s |
//! | `status` | `completed`, `stopped` or `failed` (a text column) |
//! | `final(SIG)` | last sample of SIG |
//! | `max(SIG)`, `min(SIG)` | extreme sample of SIG (event instants included, both sides) |
//! | `mean(SIG)` | time-weighted mean: the integral of the piecewise-linear trace of the results (trapezoidal rule over the samples; an event instant's two samples add a zero-width interval) divided by the time span |
//! | `at(SIG, TIME)` | SIG linearly interpolated at TIME (`12`, `"12 s"`, `"500 ms"`); the right value at an event instant; the first/last sample outside the run |
//! | `event_time(BLOCK, KIND, N)` | time of the N-th (1-based) event of KIND (`lock`, `unlock`, `free`, `engage`, `zero_crossing`, `time_event`, `stop`, `impact`) of BLOCK; NaN when the run has fewer |
//! | `energy(ELEMENT)` | for a source, the work it supplied; for any other element of the energy audit, the energy it dissipated, J |
//!
//! Values are SI. SIG is any loggable `block.var` (see `drivelink blocks TYPE`); the study
//! logs it even when the netlist does not. A failed run's signal metrics are NaN (its
//! partial results are not a value of the study); `end_time` and `status` are kept.

use drivelink_core::expr;
use drivelink_core::suggest;
use drivelink_core::units::Dim;
use drivelink_core::{EnergyAudit, EventTag, Plan, RunStatus, SimResult};

use crate::error::SweepError;
use crate::table::Cell;

/// What a metric computes.
#[derive(Debug, Clone, PartialEq)]
pub enum MetricKind {
    /// Time the run ended, s.
    EndTime,
    /// How the run ended (text).
    Status,
    /// Last sample of a signal.
    Final(String),
    /// Largest sample of a signal.
    Max(String),
    /// Smallest sample of a signal.
    Min(String),
    /// Time-weighted mean of a signal (trapezoidal rule).
    Mean(String),
    /// A signal interpolated at a time (s).
    At(String, f64),
    /// Time of the `n`-th (1-based) event of `kind` of `block`.
    EventTime {
        /// Block (or friction joint) name as in `events.csv`.
        block: String,
        /// Event kind.
        kind: EventTag,
        /// 1-based occurrence.
        n: usize,
    },
    /// Energy of an element of the audit, J.
    Energy(String),
}

/// A named metric, a column of the study table.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// Column name.
    pub name: String,
    /// The expression as given.
    pub expr: String,
    /// What it computes.
    pub kind: MetricKind,
}

const FUNCTIONS: &[&str] = &[
    "end_time",
    "status",
    "final",
    "max",
    "min",
    "mean",
    "at",
    "event_time",
    "energy",
];

/// Whether `s` may be a column name: letters, digits, `_`, `.`, `-`, not starting with a
/// digit.
pub(crate) fn is_column_name(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_alphanumeric() || matches!(ch, '_' | '.' | '-'))
}

impl Metric {
    /// Parse `NAME=EXPR` (or a bare EXPR, which is then also the column name). Checks the
    /// syntax only; [`Metric::check`] checks the names against a compiled model.
    pub fn parse(arg: &str) -> Result<Metric, SweepError> {
        let (name, expr) = match arg.split_once('=') {
            Some((n, e)) => (n.trim(), e.trim()),
            None => (arg.trim(), arg.trim()),
        };
        let bad = |message: String| SweepError::Metric {
            name: if name.is_empty() { arg } else { name }.to_string(),
            message,
        };
        if arg.contains('=') && !is_column_name(name) {
            return Err(bad(format!(
                "'{name}' is not a column name; expected NAME=EXPR with NAME made of letters, digits, '_', '.', '-'"
            )));
        }
        let (func, args) = match expr.split_once('(') {
            Some((f, rest)) => {
                let Some(inner) = rest.trim_end().strip_suffix(')') else {
                    return Err(bad(format!("'{expr}': missing ')'")));
                };
                (
                    f.trim(),
                    inner.split(',').map(str::trim).collect::<Vec<_>>(),
                )
            }
            None => (expr, Vec::new()),
        };
        let want = |n: usize, form: &str| -> Result<(), SweepError> {
            if args.len() == n && args.iter().all(|a| !a.is_empty()) {
                Ok(())
            } else {
                Err(bad(format!(
                    "'{expr}': expected {form} ({n} argument{})",
                    if n == 1 { "" } else { "s" }
                )))
            }
        };
        let sig = |args: &[&str]| args[0].to_string();
        let kind = match func {
            "end_time" | "status" if expr.contains('(') => {
                return Err(bad(format!("'{expr}': {func} takes no arguments")))
            }
            "end_time" => MetricKind::EndTime,
            "status" => MetricKind::Status,
            "final" | "max" | "min" | "mean" => {
                want(1, &format!("{func}(SIGNAL)"))?;
                match func {
                    "final" => MetricKind::Final(sig(&args)),
                    "max" => MetricKind::Max(sig(&args)),
                    "min" => MetricKind::Min(sig(&args)),
                    _ => MetricKind::Mean(sig(&args)),
                }
            }
            "at" => {
                want(2, "at(SIGNAL, TIME)")?;
                MetricKind::At(sig(&args), parse_time(args[1]).map_err(bad)?)
            }
            "event_time" => {
                want(3, "event_time(BLOCK, KIND, N)")?;
                let kind = EventTag::parse(args[1]).ok_or_else(|| {
                    let kinds = KINDS.join(", ");
                    bad(format!(
                        "unknown event kind '{}'{}; kinds are: {kinds}",
                        args[1],
                        suggest::hint(args[1], KINDS.iter().copied())
                    ))
                })?;
                let n = match args[2].parse::<usize>() {
                    Ok(n) if n >= 1 => n,
                    _ => {
                        return Err(bad(format!(
                            "event number '{}': expected a whole number >= 1 (1 = first event)",
                            args[2]
                        )))
                    }
                };
                MetricKind::EventTime {
                    block: args[0].to_string(),
                    kind,
                    n,
                }
            }
            "energy" => {
                want(1, "energy(ELEMENT)")?;
                MetricKind::Energy(sig(&args))
            }
            other => {
                return Err(bad(format!(
                    "unknown metric '{other}'{}; expected one of: end_time, status, final(SIG), max(SIG), min(SIG), mean(SIG), at(SIG, TIME), event_time(BLOCK, KIND, N), energy(ELEMENT)",
                    suggest::hint(other, FUNCTIONS.iter().copied())
                )))
            }
        };
        let name = if arg.contains('=') {
            name.to_string()
        } else {
            expr.to_string()
        };
        Ok(Metric {
            name,
            expr: expr.to_string(),
            kind,
        })
    }

    /// The signal the metric reads, if any (the study logs it).
    pub fn signal(&self) -> Option<&str> {
        match &self.kind {
            MetricKind::Final(s)
            | MetricKind::Max(s)
            | MetricKind::Min(s)
            | MetricKind::Mean(s)
            | MetricKind::At(s, _) => Some(s),
            _ => None,
        }
    }

    /// Whether the column holds text (`status`) rather than numbers.
    pub fn is_text(&self) -> bool {
        self.kind == MetricKind::Status
    }

    /// Check signal, block and element names against a compiled plan.
    pub fn check(&self, plan: &Plan) -> Result<(), SweepError> {
        let bad = |message: String| SweepError::Metric {
            name: self.name.clone(),
            message,
        };
        if let Some(s) = self.signal() {
            if plan.variable(s).is_none() {
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
                return Err(bad(format!(
                    "unknown signal '{s}'{}{known}",
                    suggest::hint(s, names)
                )));
            }
        }
        match &self.kind {
            MetricKind::EventTime { block, .. } => {
                let names: Vec<&str> = plan
                    .blocks()
                    .iter()
                    .map(|b| b.name.as_str())
                    .chain(plan.joint_names())
                    .chain(std::iter::once("network"))
                    .collect();
                if !names.contains(&block.as_str()) {
                    return Err(bad(format!(
                        "unknown block '{block}'{}",
                        suggest::hint(block, names.iter().copied())
                    )));
                }
            }
            MetricKind::Energy(e) => {
                let names = plan.energy_elements();
                if !names.contains(e) {
                    return Err(bad(format!(
                        "'{e}' is not in the energy audit{}; its elements are: {}",
                        suggest::hint(e, names.iter().map(String::as_str)),
                        names.join(", ")
                    )));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The metric's value for a finished run (`audit` is needed for `energy(...)` only).
    pub fn eval(&self, res: &SimResult, audit: Option<&EnergyAudit>) -> Cell {
        let failed = res.status == RunStatus::Failed;
        // A zero loss of an idle element is 0, not -0 (as summary.json writes it).
        let num =
            |v: Option<f64>| Cell::Float(v.map_or(f64::NAN, |x| if x == 0.0 { 0.0 } else { x }));
        match &self.kind {
            MetricKind::EndTime => Cell::Float(res.end_time),
            MetricKind::Status => Cell::Text(res.status.as_str().to_string()),
            _ if failed => Cell::Float(f64::NAN),
            MetricKind::Final(s) => num(res.last(s)),
            MetricKind::Max(s) => num(res.get(s).and_then(|y| fold(y, f64::max))),
            MetricKind::Min(s) => num(res.get(s).and_then(|y| fold(y, f64::min))),
            MetricKind::Mean(s) => num(res.get(s).and_then(|y| time_mean(&res.time, y))),
            // Outside the run's time span (past an early stop, before the start): NaN,
            // as `event_time` of an event that did not happen, not a held end value.
            MetricKind::At(s, t) => num(match (res.time.first(), res.time.last()) {
                (Some(&a), Some(&b)) if *t >= a && *t <= b => res.value_at(s, *t),
                _ => None,
            }),
            MetricKind::EventTime { block, kind, n } => {
                num(res.events_of(block, *kind).nth(n - 1).map(|e| e.time))
            }
            MetricKind::Energy(e) => num(audit.and_then(|a| {
                a.sources
                    .iter()
                    .chain(&a.losses)
                    .find(|(n, _)| n == e)
                    .map(|(_, v)| *v)
            })),
        }
    }
}

const KINDS: &[&str] = &[
    "lock",
    "unlock",
    "free",
    "engage",
    "zero_crossing",
    "time_event",
    "stop",
    "impact",
];

fn fold(y: &[f64], f: fn(f64, f64) -> f64) -> Option<f64> {
    let first = *y.first()?;
    Some(y.iter().copied().fold(first, f))
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
mod tests {
    use super::*;

    /// The docs write `at(v, "500 ms")`; the quotes were refused by the message that
    /// recommends them.
    #[test]
    fn times_may_be_quoted() {
        assert_eq!(parse_time("\"500 ms\""), Ok(0.5));
        assert_eq!(parse_time("'2 s'"), Ok(2.0));
        assert_eq!(parse_time(" 12 "), Ok(12.0));
        assert!(parse_time("\"3 N\"").is_err());
    }

    #[test]
    fn parse_names_each_form() {
        let m = Metric::parse("stop=event_time(vehicle_stop, stop, 1)").unwrap();
        assert_eq!(
            m.kind,
            MetricKind::EventTime {
                block: "vehicle_stop".into(),
                kind: EventTag::Stop,
                n: 1
            }
        );
        let m = Metric::parse("v10=at(vehicle.v, 500 ms)").unwrap();
        assert_eq!(m.kind, MetricKind::At("vehicle.v".into(), 0.5));
        let m = Metric::parse("max(engine.w)").unwrap();
        assert_eq!(m.name, "max(engine.w)");
        assert_eq!(m.kind, MetricKind::Max("engine.w".into()));
    }

    #[test]
    fn parse_errors_name_the_metric_and_what_was_expected() {
        let e = Metric::parse("x=maxx(a.b)").unwrap_err().to_string();
        assert!(e.starts_with("--metric x: unknown metric 'maxx'"), "{e}");
        assert!(e.contains("did you mean 'max'"), "{e}");
        let e = Metric::parse("x=at(a.b)").unwrap_err().to_string();
        assert!(e.contains("at(SIGNAL, TIME)"), "{e}");
        let e = Metric::parse("x=event_time(c, lok, 1)")
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean 'lock'"), "{e}");
        let e = Metric::parse("x=event_time(c, lock, 0)")
            .unwrap_err()
            .to_string();
        assert!(e.contains("whole number >= 1"), "{e}");
        let e = Metric::parse("x=at(a.b, 3 N)").unwrap_err().to_string();
        assert!(e.contains("time '3 N'"), "{e}");
    }

    #[test]
    fn time_mean_is_the_trapezoidal_integral_over_the_span() {
        // y = t on [0, 2]: mean 1; a jump at t = 1 recorded twice (left 0, right 10).
        assert_eq!(time_mean(&[0.0, 1.0, 2.0], &[0.0, 1.0, 2.0]), Some(1.0));
        let t = [0.0, 1.0, 1.0, 2.0];
        let y = [0.0, 0.0, 10.0, 10.0];
        assert_eq!(time_mean(&t, &y), Some(5.0));
    }
}
