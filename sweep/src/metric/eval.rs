//! The value of a metric expression for one run: numbers, and signal expressions sampled
//! on the results' time grid (or a window of it, interpolated at its ends), reduced by the
//! aggregations.

use std::borrow::Cow;

use drivelink_core::compile::{Scope, ScopeVal};
use drivelink_core::{EnergyAudit, RunStatus, SimResult};

use super::parse::{Func, Kind, Node, Op};
use super::time_mean;

/// What an expression is evaluated against.
pub(crate) struct Cx<'a> {
    pub res: &'a SimResult,
    pub audit: Option<&'a EnergyAudit>,
    /// The run's parameter values.
    pub params: &'a Scope,
    /// The values of the metrics before this one.
    pub earlier: &'a [f64],
}

/// A signal expression's values on a grid: one number for all points, or one per point.
enum Ser {
    Const(f64),
    Vec(Vec<f64>),
}

impl Ser {
    fn get(&self, i: usize) -> f64 {
        match self {
            Ser::Const(v) => *v,
            Ser::Vec(v) => v[i],
        }
    }
    fn into_vec(self, n: usize) -> Vec<f64> {
        match self {
            Ser::Const(v) => vec![v; n],
            Ser::Vec(v) => v,
        }
    }
    fn map(self, f: impl Fn(f64) -> f64) -> Ser {
        match self {
            Ser::Const(v) => Ser::Const(f(v)),
            Ser::Vec(v) => Ser::Vec(v.into_iter().map(f).collect()),
        }
    }
}

/// Element-wise combination of series of a grid of `n` points.
fn zip(args: &[Ser], n: usize, f: impl Fn(&[f64]) -> f64) -> Ser {
    let mut buf = vec![0.0; args.len()];
    if args.iter().all(|a| matches!(a, Ser::Const(_))) {
        for (b, a) in buf.iter_mut().zip(args) {
            *b = a.get(0);
        }
        return Ser::Const(f(&buf));
    }
    Ser::Vec(
        (0..n)
            .map(|i| {
                for (b, a) in buf.iter_mut().zip(args) {
                    *b = a.get(i);
                }
                f(&buf)
            })
            .collect(),
    )
}

/// Points of the results' time grid: the samples `lo..hi`, after an interpolated point
/// `head` and before an interpolated point `tail` (each `(t, k)`: at `t`, between samples
/// `k - 1` and `k`).
struct Grid {
    lo: usize,
    hi: usize,
    head: Option<(f64, usize)>,
    tail: Option<(f64, usize)>,
}

/// `y` linearly interpolated at `tq` between samples `k - 1` and `k` of `t` (the formula
/// of [`SimResult::value_at`], so `at` keeps its values).
fn interp(t: &[f64], y: &[f64], k: usize, tq: f64) -> f64 {
    let (t0, t1) = (t[k - 1], t[k]);
    if t1 <= t0 {
        return y[k - 1];
    }
    let s = (tq - t0) / (t1 - t0);
    y[k - 1] + s * (y[k] - y[k - 1])
}

impl Grid {
    fn whole(t: &[f64]) -> Grid {
        Grid {
            lo: 0,
            hi: t.len(),
            head: None,
            tail: None,
        }
    }
    /// The last sample.
    fn last(t: &[f64]) -> Grid {
        Grid {
            lo: t.len().saturating_sub(1),
            ..Grid::whole(t)
        }
    }
    /// The instant `tq` (the right value at an event instant); `None` outside the run.
    fn point(t: &[f64], tq: f64) -> Option<Grid> {
        let (&a, &b) = (t.first()?, t.last()?);
        if !(tq >= a && tq <= b) {
            return None;
        }
        let k = t.partition_point(|&ti| ti <= tq);
        Some(if k >= t.len() {
            Grid::last(t)
        } else {
            Grid {
                lo: k,
                hi: k,
                head: Some((tq, k)),
                tail: None,
            }
        })
    }
    /// The window `[t0, t1]`: every sample in it (both sides of an event instant), with
    /// the ends interpolated where they fall between samples; `None` when the window is
    /// not inside the run or ends before it starts.
    fn window(t: &[f64], t0: f64, t1: f64) -> Option<Grid> {
        let (&a, &b) = (t.first()?, t.last()?);
        if !(t0 >= a && t1 <= b && t0 <= t1) {
            return None;
        }
        let lo = t.partition_point(|&ti| ti < t0);
        let hi = t.partition_point(|&ti| ti <= t1);
        Some(Grid {
            lo,
            hi,
            head: (t[lo] != t0).then_some((t0, lo)),
            tail: (t[hi - 1] != t1).then_some((t1, hi)),
        })
    }
    fn len(&self) -> usize {
        self.hi - self.lo + usize::from(self.head.is_some()) + usize::from(self.tail.is_some())
    }
    /// The grid's times.
    fn times<'a>(&self, t: &'a [f64]) -> Cow<'a, [f64]> {
        if self.head.is_none() && self.tail.is_none() {
            return Cow::Borrowed(&t[self.lo..self.hi]);
        }
        let mut v = Vec::with_capacity(self.len());
        v.extend(self.head.map(|h| h.0));
        v.extend_from_slice(&t[self.lo..self.hi]);
        v.extend(self.tail.map(|h| h.0));
        Cow::Owned(v)
    }
    /// A signal's values on the grid.
    fn take(&self, t: &[f64], y: &[f64]) -> Vec<f64> {
        let mut v = Vec::with_capacity(self.len());
        v.extend(self.head.map(|(tq, k)| interp(t, y, k, tq)));
        v.extend_from_slice(&y[self.lo..self.hi]);
        v.extend(self.tail.map(|(tq, k)| interp(t, y, k, tq)));
        v
    }
}

fn truthy(x: f64) -> bool {
    x != 0.0 && !x.is_nan()
}

fn flag(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

fn apply(op: Op, a: f64, b: f64) -> f64 {
    match op {
        Op::Add => a + b,
        Op::Sub => a - b,
        Op::Mul => a * b,
        Op::Div => a / b,
        Op::Pow => a.powf(b),
        Op::Lt => flag(a < b),
        Op::Le => flag(a <= b),
        Op::Gt => flag(a > b),
        Op::Ge => flag(a >= b),
        Op::Eq => flag(a == b),
        Op::Ne => flag(a != b),
        Op::And => flag(truthy(a) && truthy(b)),
        Op::Or => flag(truthy(a) || truthy(b)),
    }
}

/// An element-wise function of its arguments' values.
fn call(f: Func, x: &[f64]) -> f64 {
    match f {
        Func::Abs => x[0].abs(),
        Func::Sqrt => x[0].sqrt(),
        Func::Exp => x[0].exp(),
        Func::Ln => x[0].ln(),
        Func::Sin => x[0].sin(),
        Func::Cos => x[0].cos(),
        Func::Tan => x[0].tan(),
        Func::Atan => x[0].atan(),
        Func::Atan2 => x[0].atan2(x[1]),
        Func::Hypot => x[0].hypot(x[1]),
        Func::Sign if x[0] == 0.0 || x[0].is_nan() => x[0],
        Func::Sign => x[0].signum(),
        Func::If if truthy(x[0]) => x[1],
        Func::If => x[2],
        _ => f64::NAN,
    }
}

fn fold(y: &[f64], f: fn(f64, f64) -> f64) -> f64 {
    match y.first() {
        Some(&first) => y.iter().copied().fold(first, f),
        None => f64::NAN,
    }
}

impl Cx<'_> {
    fn failed(&self) -> bool {
        self.res.status == RunStatus::Failed
    }

    /// The value of a one-number expression.
    pub fn scalar(&self, n: &Node) -> f64 {
        match &n.kind {
            Kind::Num(v, _) => *v,
            Kind::Param(p) => match self.params.get(p) {
                Some(ScopeVal::Q(q)) => q.value,
                _ => f64::NAN,
            },
            Kind::Metric(i) => self.earlier.get(*i).copied().unwrap_or(f64::NAN),
            Kind::EndTime => self.res.end_time,
            Kind::Neg(x) => -self.scalar(x),
            Kind::Not(x) => flag(!truthy(self.scalar(x))),
            Kind::Bin(op, a, b) => apply(*op, self.scalar(a), self.scalar(b)),
            Kind::Call(f, args) if !f.is_aggregation() => {
                let x: Vec<f64> = args.iter().map(|a| self.scalar(a)).collect();
                call(*f, &x)
            }
            _ if self.failed() => f64::NAN,
            Kind::Call(f, args) => self.aggregate(*f, args),
            Kind::EventTime { block, kind, n } => self
                .res
                .events_of(block, *kind)
                .nth(n - 1)
                .map_or(f64::NAN, |e| e.time),
            Kind::Energy(e) => self
                .audit
                .and_then(|a| {
                    a.sources
                        .iter()
                        .chain(&a.losses)
                        .find(|(n, _)| n == e)
                        .map(|(_, v)| *v)
                })
                .unwrap_or(f64::NAN),
            // Signals outside an aggregation and `status` are refused by `resolve`.
            _ => f64::NAN,
        }
    }

    /// The values of a signal expression on grid `g`.
    fn series(&self, n: &Node, g: &Grid) -> Ser {
        let t = &self.res.time;
        match &n.kind {
            Kind::Signal(s) => match self.res.get(s) {
                Some(y) => Ser::Vec(g.take(t, y)),
                None => Ser::Const(f64::NAN),
            },
            Kind::Time => Ser::Vec(g.times(t).into_owned()),
            Kind::Neg(x) => self.series(x, g).map(|v| -v),
            Kind::Not(x) => self.series(x, g).map(|v| flag(!truthy(v))),
            Kind::Bin(op, a, b) => {
                let args = [self.series(a, g), self.series(b, g)];
                zip(&args, g.len(), |x| apply(*op, x[0], x[1]))
            }
            Kind::Call(f, args) if !f.is_aggregation() => {
                let args: Vec<Ser> = args.iter().map(|a| self.series(a, g)).collect();
                zip(&args, g.len(), |x| call(*f, x))
            }
            _ => Ser::Const(self.scalar(n)),
        }
    }

    /// How far a condition is from holding (>= 0 where a comparison holds), for the
    /// crossing instant of `first_time`; `None` for a condition that is no comparison.
    fn margin(&self, n: &Node, g: &Grid) -> Option<Ser> {
        let len = g.len();
        match &n.kind {
            Kind::Bin(op @ (Op::Lt | Op::Le | Op::Gt | Op::Ge), a, b) => {
                let args = [self.series(a, g), self.series(b, g)];
                let below = matches!(op, Op::Lt | Op::Le);
                Some(zip(&args, len, |x| {
                    if below {
                        x[1] - x[0]
                    } else {
                        x[0] - x[1]
                    }
                }))
            }
            Kind::Bin(op @ (Op::And | Op::Or), a, b) => {
                let args = [self.margin(a, g)?, self.margin(b, g)?];
                let and = *op == Op::And;
                Some(zip(&args, len, |x| {
                    if and {
                        x[0].min(x[1])
                    } else {
                        x[0].max(x[1])
                    }
                }))
            }
            Kind::Not(x) => Some(self.margin(x, g)?.map(|v| -v)),
            _ => None,
        }
    }

    /// The grid of an aggregation with an optional window `[args[0], args[1]]`.
    fn grid(&self, window: &[Node]) -> Option<Grid> {
        let t = &self.res.time;
        match window {
            [t0, t1] => Grid::window(t, self.scalar(t0), self.scalar(t1)),
            _ if t.is_empty() => None,
            _ => Some(Grid::whole(t)),
        }
    }

    fn aggregate(&self, f: Func, args: &[Node]) -> f64 {
        let t = &self.res.time;
        let g = match f {
            Func::Final if !t.is_empty() => Some(Grid::last(t)),
            Func::Final => None,
            Func::At => Grid::point(t, self.scalar(&args[1])),
            Func::Slope => self.grid(&[]),
            _ => self.grid(&args[1..]),
        };
        let Some(g) = g else {
            return f64::NAN;
        };
        let n = g.len();
        if n == 0 {
            return f64::NAN;
        }
        let values = || self.series(&args[0], &g).into_vec(n);
        match f {
            Func::Max => fold(&values(), f64::max),
            Func::Min => fold(&values(), f64::min),
            Func::Mean => time_mean(&g.times(t), &values()).unwrap_or(f64::NAN),
            Func::Integral => integral(&g.times(t), &values()),
            Func::Final | Func::At => values()[n - 1],
            Func::FirstTime => {
                let holds = values();
                let margin = self.margin(&args[0], &g).map(|m| m.into_vec(n));
                first_time(&g.times(t), &holds, margin.as_deref())
            }
            Func::Count => count(&values()),
            Func::FirstPeak => first_peak(&values()),
            Func::TimeOfMax | Func::TimeOfMin => {
                let y = values();
                let best = fold(
                    &y,
                    if f == Func::TimeOfMax {
                        f64::max
                    } else {
                        f64::min
                    },
                );
                y.iter()
                    .position(|v| *v == best)
                    .map_or(f64::NAN, |i| g.times(t)[i])
            }
            Func::Slope => {
                let (x0, x1) = match &args[2..] {
                    [a, b] => (self.scalar(a), self.scalar(b)),
                    _ => (f64::NEG_INFINITY, f64::INFINITY),
                };
                let x = self.series(&args[1], &g).into_vec(n);
                slope(&values(), &x, x0, x1)
            }
            _ => f64::NAN,
        }
    }
}

/// The trapezoidal integral of the piecewise-linear trace `(t, y)`.
fn integral(t: &[f64], y: &[f64]) -> f64 {
    t.windows(2)
        .zip(y.windows(2))
        .map(|(t, y)| (t[1] - t[0]) * 0.5 * (y[0] + y[1]))
        .sum()
}

/// The first instant the condition `holds` (nonzero): the first point's time when it holds
/// there; else, between the last point where it does not and the first where it does, the
/// zero of the linearly interpolated `margin` (when the condition is a comparison).
pub(crate) fn first_time(t: &[f64], holds: &[f64], margin: Option<&[f64]>) -> f64 {
    let Some(i) = holds.iter().position(|h| truthy(*h)) else {
        return f64::NAN;
    };
    if i == 0 {
        return t[0];
    }
    let (ta, tb) = (t[i - 1], t[i]);
    match margin.map(|m| (m[i - 1], m[i])) {
        Some((ma, mb)) if ma.is_finite() && mb.is_finite() && ma <= 0.0 && mb > ma => {
            (ta + (tb - ta) * (-ma / (mb - ma))).clamp(ta, tb)
        }
        _ => tb,
    }
}

/// How many times the condition starts to hold (holding at the first point counts).
pub(crate) fn count(holds: &[f64]) -> f64 {
    let mut before = false;
    let mut n = 0usize;
    for h in holds {
        let now = truthy(*h);
        if now && !before {
            n += 1;
        }
        before = now;
    }
    n as f64
}

/// The value at the first local maximum of `|y|`: the last point of the first rise of
/// `|y|` that is followed by a fall (a flat top counts once); NaN when `|y|` has none.
pub(crate) fn first_peak(y: &[f64]) -> f64 {
    let mut rising = false;
    for i in 1..y.len() {
        let (a, b) = (y[i - 1].abs(), y[i].abs());
        if b > a {
            rising = true;
        } else if b < a && rising {
            return y[i - 1];
        }
    }
    f64::NAN
}

/// The least-squares slope of `y` against `x` over the points with `x0 <= x <= x1` (both
/// finite); NaN with fewer than two distinct x.
pub(crate) fn slope(y: &[f64], x: &[f64], x0: f64, x1: f64) -> f64 {
    let pts: Vec<(f64, f64)> = x
        .iter()
        .zip(y)
        .filter(|(x, y)| x.is_finite() && y.is_finite() && **x >= x0 && **x <= x1)
        .map(|(x, y)| (*x, *y))
        .collect();
    if pts.len() < 2 {
        return f64::NAN;
    }
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx > 0.0 {
        sxy / sxx
    } else {
        f64::NAN
    }
}
