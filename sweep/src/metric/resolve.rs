//! The names of a metric resolved (earlier metrics, model parameters, built-in names) and
//! the shape of its expression checked: one number, signals only inside aggregations,
//! time arguments that are times, windows that do not end before they start.

use drivelink_core::compile::{Scope, ScopeVal};
use drivelink_core::expr::{self, Quantity};
use drivelink_core::suggest;
use drivelink_core::units::Dim;

use super::parse::{Func, Kind, Node, Op};
use super::{at, Located, BUILTIN_NAMES, G_N};

/// The names a metric's bare words resolve against.
pub(super) struct Names<'a> {
    /// Every metric of the list: name and whether it is text.
    pub metrics: &'a [(String, bool)],
    /// This metric's index in the list.
    pub me: usize,
    pub params: &'a Scope,
}

impl Names<'_> {
    /// The candidates a misspelt name is compared with.
    fn known(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.metrics[..self.me]
            .iter()
            .map(|m| m.0.as_str())
            .collect();
        v.extend(
            self.params
                .iter()
                .filter(|(_, p)| matches!(p, ScopeVal::Q(_)))
                .map(|(n, _)| n.as_str()),
        );
        v.extend(BUILTIN_NAMES);
        v
    }

    fn resolve(&self, name: &str, pos: usize) -> Result<Kind, Located> {
        if let Some(i) = self.metrics.iter().position(|m| m.0 == name) {
            return match i.cmp(&self.me) {
                std::cmp::Ordering::Less if self.metrics[i].1 => Err(at(
                    pos,
                    format!("metric '{name}' is text (status), not a number"),
                )),
                std::cmp::Ordering::Less => Ok(Kind::Metric(i)),
                std::cmp::Ordering::Equal => {
                    Err(at(pos, format!("metric '{name}' refers to itself")))
                }
                std::cmp::Ordering::Greater => Err(at(
                    pos,
                    format!("metric '{name}' is defined after this one; a metric may use only the metrics before it"),
                )),
            };
        }
        match self.params.get(name) {
            Some(ScopeVal::Q(_)) => return Ok(Kind::Param(name.to_string())),
            Some(ScopeVal::Text(t)) => {
                return Err(at(
                    pos,
                    format!("parameter '{name}' is a word (\"{t}\"), not a number"),
                ))
            }
            Some(ScopeVal::Json(_)) => {
                return Err(at(
                    pos,
                    format!("parameter '{name}' is an array, not a number"),
                ))
            }
            None => {}
        }
        match name {
            "pi" => Ok(Kind::Num(std::f64::consts::PI, None)),
            "g_n" => Ok(Kind::Num(G_N, Some(Dim::ACCELERATION))),
            _ => {
                let known = self.known();
                Err(at(
                    pos,
                    format!(
                        "unknown name '{name}'{}; a name without a dot is an earlier metric, a model parameter or one of time, end_time, pi, g_n (signals are block.var)",
                        suggest::hint(name, known.iter().copied())
                    ),
                ))
            }
        }
    }

    /// Resolve the bare names of `n`.
    pub fn resolve_tree(&self, n: &mut Node) -> Result<(), Located> {
        match &mut n.kind {
            Kind::Name(name) => {
                let k = self.resolve(name, n.start)?;
                n.kind = k;
            }
            Kind::Neg(x) | Kind::Not(x) => self.resolve_tree(x)?,
            Kind::Bin(_, a, b) => {
                self.resolve_tree(a)?;
                self.resolve_tree(b)?;
            }
            Kind::Call(_, args) => {
                for a in args {
                    self.resolve_tree(a)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Whether `n` is a signal (varies over the samples) rather than one number; checks that
/// the arguments of functions have the shape they need.
pub(super) fn is_series(n: &Node, src: &str) -> Result<bool, Located> {
    Ok(match &n.kind {
        Kind::Signal(_) | Kind::Time => true,
        Kind::Status => {
            return Err(at(
                n.start,
                "status is text: it can only be a metric of its own (NAME=status)",
            ))
        }
        Kind::Neg(x) | Kind::Not(x) => is_series(x, src)?,
        Kind::Bin(_, a, b) => is_series(a, src)? | is_series(b, src)?,
        Kind::Call(f, args) if f.is_aggregation() => {
            let signals = if *f == Func::Slope { 2 } else { 1 };
            for a in &args[..signals] {
                is_series(a, src)?;
            }
            for (i, a) in args.iter().enumerate().skip(signals) {
                if is_series(a, src)? {
                    return Err(at(
                        a.start,
                        format!(
                            "argument {} of {} must be one number, not a signal; aggregate it (first_time(...), max(...))",
                            i + 1,
                            f.name()
                        ),
                    ));
                }
                if *f != Func::Slope {
                    check_time(a, src)?;
                }
            }
            check_window(*f, args, src)?;
            false
        }
        Kind::Call(_, args) => {
            let mut any = false;
            for a in args {
                any |= is_series(a, src)?;
            }
            any
        }
        _ => false,
    })
}

/// A time argument whose unit is known must be a time.
fn check_time(a: &Node, src: &str) -> Result<(), Located> {
    if let Some(d) = static_dim(a) {
        let text = &src[a.start..a.end];
        expr::check_dim(
            &Quantity {
                value: 0.0,
                dim: Some(d),
            },
            Dim::TIME,
            "s",
        )
        .map_err(|e| at(a.start, format!("time '{text}': {e}")))?;
    }
    Ok(())
}

/// A window [T0, T1] (or [X0, X1]) written as numbers must not end before it starts.
fn check_window(f: Func, args: &[Node], src: &str) -> Result<(), Located> {
    let first = if f == Func::Slope { 2 } else { 1 };
    if args.len() != first + 2 || f == Func::At {
        return Ok(());
    }
    let (a, b) = (&args[first], &args[first + 1]);
    match (constant(a), constant(b)) {
        (Some(x0), Some(x1)) if x0 > x1 => Err(at(
            a.start,
            format!(
                "window [{}, {}] of {} ends before it starts ({x0} > {x1}); expected start <= end",
                &src[a.start..a.end],
                &src[b.start..b.end],
                f.name()
            ),
        )),
        _ => Ok(()),
    }
}

/// The dimension of `n` when its units say it (numbers with units, times), else `None`.
fn static_dim(n: &Node) -> Option<Dim> {
    match &n.kind {
        Kind::Num(_, d) => *d,
        Kind::EndTime | Kind::EventTime { .. } => Some(Dim::TIME),
        Kind::Call(Func::FirstTime | Func::TimeOfMax | Func::TimeOfMin, _) => Some(Dim::TIME),
        Kind::Neg(x) => static_dim(x),
        Kind::Bin(Op::Add | Op::Sub, a, b) => match (static_dim(a), static_dim(b)) {
            (Some(x), Some(y)) if x != y => None,
            (x, y) => x.or(y),
        },
        Kind::Bin(op @ (Op::Mul | Op::Div), a, b) => {
            let (x, y) = (static_dim(a)?, static_dim(b)?);
            if *op == Op::Mul {
                x.checked_mul(y)
            } else {
                x.checked_div(y)
            }
        }
        _ => None,
    }
}

/// The value of `n` when it is made of numbers only.
fn constant(n: &Node) -> Option<f64> {
    match &n.kind {
        Kind::Num(v, _) => Some(*v),
        Kind::Neg(x) => constant(x).map(|v| -v),
        Kind::Bin(op, a, b) => {
            let (x, y) = (constant(a)?, constant(b)?);
            match op {
                Op::Add => Some(x + y),
                Op::Sub => Some(x - y),
                Op::Mul => Some(x * y),
                Op::Div => Some(x / y),
                _ => None,
            }
        }
        _ => None,
    }
}
