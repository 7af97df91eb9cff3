//! The study definition as given by a user: command-line style arguments
//! ([`StudyArgs`]) and their syntax.
//!
//! - `--grid NAME=START:STOP:COUNT`: COUNT (>= 2) equally spaced values from START to STOP,
//!   both included, value `k` = `((COUNT-1-k)·START + k·STOP)/(COUNT-1)` (exact at both
//!   ends); START and STOP are numbers (SI) or
//!   expressions with a unit, as for `--set` (`clutchRise=0.1 s:0.5 s:25`,
//!   `idleSpeed=700 rpm:900 rpm:3`).
//! - `--grid NAME=[v1, v2, ...]`: the listed values; numbers, expressions with units, or
//!   words for a choice parameter (`diff_type=[open, locked]`).
//! - `--dist NAME=uniform(a, b)|normal(mu, sigma)|lognormal(mu, sigma)`: a sampled
//!   parameter; `a`, `b`, `mu`, `sigma` may carry units (`normal(0.3, 0.02)`,
//!   `uniform(0.1 s, 0.5 s)`); for `lognormal` they are the mean and standard deviation of
//!   the natural logarithm of the value in SI units (plain numbers).
//! - `--set NAME=VALUE`: a value used by every run (as for `drivelink run`).
//!
//! Several grids form the full factorial, in the order given, the last grid varying
//! fastest. With `--samples N` the `N` sampled points are crossed with every grid point
//! (innermost).

use drivelink_core::expr::{self, Quantity};
use serde_json::Value;

use crate::error::SweepError;
use crate::sample::Sampling;
use crate::table::Cell;

/// A study's definition, exactly as given (CLI options or the Python arguments turned into
/// the same strings). Serializable: it is recorded in `study.json` and shipped to workers.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct StudyArgs {
    /// `NAME=START:STOP:COUNT` or `NAME=[v1,v2,...]`.
    pub grid: Vec<String>,
    /// `NAME=uniform(a,b)`, `NAME=normal(mu,sigma)`, `NAME=lognormal(mu,sigma)`.
    pub dist: Vec<String>,
    /// Number of sampled points (needs `dist`).
    pub samples: Option<usize>,
    /// Seed of the sampling.
    pub seed: u64,
    /// Latin hypercube (default) or plain random sampling.
    pub sampling: Sampling,
    /// `NAME=EXPR` metrics.
    pub metrics: Vec<String>,
    /// `NAME=VALUE` values for every run.
    pub set: Vec<String>,
    /// Override of `solver.stop_time` (`"20"`, `"20 s"`).
    pub stop_time: Option<String>,
}

/// One value of a swept parameter, as given to the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Swept {
    /// A number in SI units.
    Number(f64),
    /// A word (the value of a choice parameter).
    Text(String),
}

impl Swept {
    /// The raw netlist value ([`drivelink_core::Compiled::with_params`] takes it).
    pub fn json(&self) -> Value {
        match self {
            Swept::Number(x) => Value::from(*x),
            Swept::Text(s) => Value::String(s.clone()),
        }
    }
    /// The table cell.
    pub fn cell(&self) -> Cell {
        match self {
            Swept::Number(x) => Cell::Float(*x),
            Swept::Text(s) => Cell::Text(s.clone()),
        }
    }
}

/// A value as written, before it is checked against the parameter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawValue {
    /// A number or an expression with a unit (the text is kept for messages).
    Q(Quantity, String),
    /// A word.
    Word(String),
}

/// The values of a grid as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawGrid {
    /// `START:STOP:COUNT`.
    Range {
        start: (Quantity, String),
        stop: (Quantity, String),
        count: usize,
    },
    /// `[v1, ...]`.
    List(Vec<RawValue>),
}

impl RawGrid {
    /// The number of values.
    pub(crate) fn len(&self) -> usize {
        match self {
            RawGrid::Range { count, .. } => *count,
            RawGrid::List(v) => v.len(),
        }
    }

    /// The numbers written (not the words).
    pub(crate) fn quantities(&self) -> Vec<&Quantity> {
        match self {
            RawGrid::Range { start, stop, .. } => vec![&start.0, &stop.0],
            RawGrid::List(v) => v
                .iter()
                .filter_map(|x| match x {
                    RawValue::Q(q, _) => Some(q),
                    RawValue::Word(_) => None,
                })
                .collect(),
        }
    }
}

/// A distribution as written: its kind and its two arguments.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawDist {
    pub kind: DistKind,
    pub args: [(Quantity, String); 2],
}

/// The distribution families.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DistKind {
    Uniform,
    Normal,
    LogNormal,
}

fn is_word(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// Split `NAME=REST`.
pub(crate) fn split_name<'a>(
    flag: &str,
    arg: &'a str,
    form: &str,
) -> Result<(&'a str, &'a str), SweepError> {
    match arg.split_once('=') {
        Some((n, r)) if !n.trim().is_empty() && !r.trim().is_empty() => Ok((n.trim(), r.trim())),
        _ => Err(SweepError::Arg {
            flag: flag.into(),
            text: arg.into(),
            message: format!("expected {form}"),
        }),
    }
}

fn quantity(text: &str) -> Result<Quantity, String> {
    let t = text.trim().trim_matches('"');
    expr::eval(t, &|_| None).map_err(|e| format!("'{t}': {e}"))
}

pub(crate) fn raw_value(text: &str) -> Result<RawValue, String> {
    let t = text.trim();
    if let Some(inner) = t.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        if is_word(inner) {
            return Ok(RawValue::Word(inner.to_string()));
        }
    }
    match quantity(t) {
        Ok(q) => Ok(RawValue::Q(q, t.to_string())),
        Err(_) if is_word(t) => Ok(RawValue::Word(t.to_string())),
        Err(e) => Err(e),
    }
}

/// Parse `NAME=START:STOP:COUNT` or `NAME=[v1,...]`.
pub(crate) fn parse_grid(arg: &str) -> Result<(String, RawGrid), SweepError> {
    const FORM: &str =
        "NAME=START:STOP:COUNT (for example throttle=0.15:0.35:40) or NAME=[v1,v2,...]";
    let (name, rest) = split_name("--grid", arg, FORM)?;
    let bad = |message: String| SweepError::Arg {
        flag: "--grid".into(),
        text: arg.into(),
        message,
    };
    if let Some(inner) = rest.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or_else(|| bad("a list needs a closing ']'".into()))?;
        let items: Vec<&str> = inner.split(',').map(str::trim).collect();
        if items.iter().any(|s| s.is_empty()) {
            return Err(bad(format!("empty value in the list; expected {FORM}")));
        }
        let values = items
            .iter()
            .map(|s| raw_value(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(bad)?;
        return Ok((name.to_string(), RawGrid::List(values)));
    }
    let parts: Vec<&str> = rest.split(':').collect();
    let [start, stop, count] = parts[..] else {
        return Err(bad(format!("expected {FORM}")));
    };
    let count = match count.trim().parse::<usize>() {
        Ok(n) if n >= 2 => n,
        _ => {
            return Err(bad(format!(
                "COUNT '{}' must be a whole number >= 2 (give a single value as NAME=[v])",
                count.trim()
            )))
        }
    };
    let start = (quantity(start).map_err(&bad)?, start.trim().to_string());
    let stop = (quantity(stop).map_err(&bad)?, stop.trim().to_string());
    if start.0.dim != stop.0.dim && start.0.dim.is_some() && stop.0.dim.is_some() {
        return Err(bad(format!(
            "START '{}' and STOP '{}' have different units",
            start.1, stop.1
        )));
    }
    if !(start.0.value.is_finite() && stop.0.value.is_finite()) {
        return Err(bad("START and STOP must be finite".into()));
    }
    Ok((name.to_string(), RawGrid::Range { start, stop, count }))
}

/// Parse `NAME=uniform(a,b)` and the other distributions.
pub(crate) fn parse_dist(arg: &str) -> Result<(String, RawDist), SweepError> {
    const FORM: &str = "NAME=uniform(a,b), NAME=normal(mu,sigma) or NAME=lognormal(mu,sigma)";
    let (name, rest) = split_name("--dist", arg, FORM)?;
    let bad = |message: String| SweepError::Arg {
        flag: "--dist".into(),
        text: arg.into(),
        message,
    };
    let (f, inner) = rest
        .split_once('(')
        .and_then(|(f, r)| Some((f.trim(), r.trim_end().strip_suffix(')')?)))
        .ok_or_else(|| bad(format!("expected {FORM}")))?;
    let kind = match f {
        "uniform" => DistKind::Uniform,
        "normal" => DistKind::Normal,
        "lognormal" => DistKind::LogNormal,
        other => {
            return Err(bad(format!(
                "unknown distribution '{other}'{}; expected uniform, normal or lognormal",
                drivelink_core::suggest::hint(other, ["uniform", "normal", "lognormal"])
            )))
        }
    };
    let args: Vec<&str> = inner.split(',').map(str::trim).collect();
    let [a, b] = args[..] else {
        return Err(bad(format!("{f} takes two arguments; expected {FORM}")));
    };
    let qa = (quantity(a).map_err(&bad)?, a.to_string());
    let qb = (quantity(b).map_err(&bad)?, b.to_string());
    let (x, y) = (qa.0.value, qb.0.value);
    match kind {
        DistKind::Uniform if !(x.is_finite() && y.is_finite() && x < y) => {
            return Err(bad(format!("uniform(a, b) needs finite a < b, got a = {x}, b = {y}")))
        }
        DistKind::Normal | DistKind::LogNormal if !(x.is_finite() && y.is_finite() && y > 0.0) => {
            return Err(bad(format!(
                "{f}(mu, sigma) needs a finite mu and sigma > 0, got mu = {x}, sigma = {y}"
            )))
        }
        DistKind::LogNormal if qa.0.dim.is_some_and(|d| !d.is_dimensionless()) || qb.0.dim.is_some_and(|d| !d.is_dimensionless()) => {
            return Err(bad(
                "lognormal(mu, sigma) takes plain numbers: the mean and standard deviation of ln(value in SI units)".into(),
            ))
        }
        _ => {}
    }
    if qa.0.dim.is_some() && qb.0.dim.is_some() && qa.0.dim != qb.0.dim {
        return Err(bad(format!("'{a}' and '{b}' have different units")));
    }
    Ok((
        name.to_string(),
        RawDist {
            kind,
            args: [qa, qb],
        },
    ))
}

/// Parse `--set NAME=VALUE` as `drivelink run` does: a JSON number, boolean, array or
/// string, else the text itself (an expression such as `4500 rpm`, or a word).
pub(crate) fn parse_set(arg: &str) -> Result<(String, Value), SweepError> {
    let (name, value) = split_name("--set", arg, "NAME=VALUE")?;
    let parsed = match serde_json::from_str::<Value>(value) {
        Ok(j @ (Value::Number(_) | Value::Bool(_) | Value::Array(_) | Value::String(_))) => j,
        _ => Value::String(value.to_string()),
    };
    Ok((name.to_string(), parsed))
}

/// `I/N` of `--shard`: slice `I` (0-based) of `N`.
pub fn parse_shard(text: &str) -> Result<(usize, usize), SweepError> {
    let bad = || {
        SweepError::Arg {
        flag: "--shard".into(),
        text: text.into(),
        message: "expected I/N with 0 <= I < N (I is 0-based, as $SLURM_ARRAY_TASK_ID with --array=0-(N-1) or $JOB_COMPLETION_INDEX)".into(),
    }
    };
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_syntax_errors_name_the_argument_and_the_form() {
        let e = parse_grid("throttle=0.1:0.3").unwrap_err().to_string();
        assert!(
            e.starts_with("--grid throttle=0.1:0.3: expected NAME=START:STOP:COUNT"),
            "{e}"
        );
        let e = parse_grid("throttle=0.1:0.3:1").unwrap_err().to_string();
        assert!(e.contains("COUNT '1' must be a whole number >= 2"), "{e}");
        let e = parse_grid("throttle=[0.1, ]").unwrap_err().to_string();
        assert!(e.contains("empty value"), "{e}");
        let e = parse_grid("x=1 s:2 N:3").unwrap_err().to_string();
        assert!(e.contains("different units"), "{e}");
        let (_, g) = parse_grid("d=[open, \"locked\", 2 rpm]").unwrap();
        let RawGrid::List(v) = g else { panic!() };
        assert_eq!(v[0], RawValue::Word("open".into()));
        assert_eq!(v[1], RawValue::Word("locked".into()));
        assert!(
            matches!(&v[2], RawValue::Q(q, _) if (q.value - 2.0 * (2.0 * std::f64::consts::PI / 60.0)).abs() < 1e-15)
        );
    }

    #[test]
    fn dist_syntax_errors_name_the_argument() {
        let e = parse_dist("mu=uniform(0.5, 0.1)").unwrap_err().to_string();
        assert!(e.contains("finite a < b"), "{e}");
        let e = parse_dist("mu=normal(0.3, 0)").unwrap_err().to_string();
        assert!(e.contains("sigma > 0"), "{e}");
        let e = parse_dist("mu=gauss(0.3, 0.1)").unwrap_err().to_string();
        assert!(e.contains("unknown distribution 'gauss'"), "{e}");
        let e = parse_dist("m=lognormal(1 kg, 0.1)")
            .unwrap_err()
            .to_string();
        assert!(e.contains("plain numbers"), "{e}");
    }

    #[test]
    fn shard_is_zero_based_and_checked() {
        assert_eq!(parse_shard("0/4").unwrap(), (0, 4));
        assert_eq!(parse_shard("3/4").unwrap(), (3, 4));
        assert!(parse_shard("4/4").is_err());
        assert!(parse_shard("1/0").is_err());
        assert!(parse_shard("a/2").is_err());
    }
}
