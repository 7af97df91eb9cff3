//! Parameter expressions with units.
//!
//! Model parameters may be given as strings such as `"4500 rpm"`, `"3 kg*m^2"`, `"2*g1"`,
//! `"sqrt(J)"` or `"fn/2"`. [`eval`] / [`eval_with_names`] evaluate them to a [`Quantity`]
//! in SI units, tracking dimensions; [`check_dim`] then checks the result against the
//! parameter's declared dimension.
//!
//! # Grammar
//!
//! ```text
//! expr    := term (('+' | '-') term)*
//! term    := unary (('*' | '/') unary)*
//! unary   := ('-' | '+') unary | power
//! power   := primary ('^' unary)?               right-associative: 2^3^2 = 2^9
//! primary := number unit? | name | name '(' args ')' | '(' expr ')'
//! number  := digits ['.' digits] [('e'|'E') ['+'|'-'] digits]   (also ".5", "1e-3")
//! ```
//!
//! Unary minus binds looser than `^`, so `-2^2 = -4`. Names are `[A-Za-z_][A-Za-z0-9_]*`;
//! they are looked up first through the caller's `lookup` (so parameters shadow constants),
//! then among the constants `pi`, `e` and `g_n` (9.80665 m/s², standard gravity).
//! Functions: `sqrt abs sin cos tan asin acos atan atan2 exp ln log10 min max pow floor
//! ceil round` (a name is a function only when followed by `(`).
//!
//! # Where units are recognised
//!
//! A unit is recognised **only directly after a number literal**, separated by optional
//! whitespace, and the unit chain continues across `*`, `/` (and `.`, `·`) only while the
//! next item is a known unit symbol (or a parenthesised group made only of unit symbols),
//! and across `^` only while an integer exponent follows. Hence:
//!
//! * `"3 kg*m^2"` is 3 kg·m²; `"80 km/h"` is 22.2… m/s; `"1.2 kg/m^3"`, `"10000 N*m"` work;
//! * `"2*m"` is 2 times the parameter `m` (no number directly before `m`);
//! * `"fn/2"` is the parameter `fn` divided by 2;
//! * `"4500 rpm * 2"` is 9000 rpm (`2` is not a unit symbol, so the chain stops);
//! * `"3 m^2"` is 3 m² (the exponent belongs to the unit), `"(3 m)^2"` is 9 m²;
//! * `"0.4 N/(m/s)^2"` is 0.4 kg/m;
//! * a unit symbol after a number always wins over a parameter of the same name:
//!   `"2 t"` is 2 tonnes, write `"2*t"` for twice the parameter `t`.
//!
//! # Bare numbers
//!
//! A number without a unit is *bare* (`dim: None`) and adapts to whatever it meets: in a
//! product or quotient it acts as a dimensionless factor (`"fn/2"` keeps the dimension of
//! `fn`, `"1/tau"` has the inverse dimension of `tau`); added to a dimensioned quantity it
//! adopts that dimension (`"J + 0.1"`); [`check_dim`] accepts it for any declared unit and
//! takes it as SI. `pi` and `e` are bare, `"20 deg"` is `Some(dimensionless)`.
//!
//! # Errors
//!
//! Every error carries the byte offset and 1-based character column of the offending token:
//! `at column 7: unknown identifier 'J2' (did you mean 'J1'?)`. Adding quantities of
//! different dimensions, `sqrt` of odd exponents, non-dimensionless arguments to
//! `sin`/`cos`/`tan`/`exp`/`ln`/…, dimensioned exponents, NaN or infinite (intermediate)
//! results, malformed input and nesting deeper than 100 levels are all errors; no input
//! panics.

use std::fmt;

use crate::suggest;
use crate::units::{self, Dim, Unit, UnitErrorKind};

/// A value in SI units with an optional dimension (`None` = bare number, see module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantity {
    pub value: f64,
    pub dim: Option<Dim>,
}

impl Quantity {
    /// A bare number (adapts to any dimension).
    pub const fn bare(value: f64) -> Quantity {
        Quantity { value, dim: None }
    }

    /// An SI value with dimension `dim`.
    pub const fn new(value: f64, dim: Dim) -> Quantity {
        Quantity {
            value,
            dim: Some(dim),
        }
    }

    /// `value` expressed in `unit`, converted to SI.
    pub fn from_unit(value: f64, unit: Unit) -> Quantity {
        Quantity::new(value * unit.factor, unit.dim)
    }
}

/// `471.23889803846896 1/s`; bare and dimensionless values print just the number.
impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.dim {
            Some(d) if !d.is_dimensionless() => write!(f, "{} {d}", self.value),
            _ => write!(f, "{}", self.value),
        }
    }
}

/// An expression error at a position of the source string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at column {column}: {message}")]
pub struct ExprError {
    /// Byte offset into the source string.
    pub pos: usize,
    /// 1-based character column (what `Display` shows).
    pub column: usize,
    pub message: String,
}

/// The dimension of a value does not match the declared one (see [`check_dim`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimMismatch {
    pub expected: Dim,
    /// How the declaration was written, e.g. `"rad/s"` (may be empty).
    pub expected_label: String,
    pub got: Dim,
}

impl fmt::Display for DimMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "expected {} but got {}",
            describe(&self.expected_label, self.expected),
            describe_dim(self.got)
        )
    }
}

impl std::error::Error for DimMismatch {}

fn describe(label: &str, d: Dim) -> String {
    let ds = d.to_string();
    let label = label.trim();
    if label.is_empty() || label == ds {
        ds
    } else {
        format!("{label} ({ds})")
    }
}

/// `W (kg·m²/s³)`, `m/s`, `dimensionless (1)`.
fn describe_dim(d: Dim) -> String {
    if d.is_dimensionless() {
        return describe("dimensionless", d);
    }
    describe(d.derived_name().unwrap_or(""), d)
}

/// Returns the SI value of `q` if it is bare or has dimension `expected`.
///
/// `label` is the declared unit as written (e.g. `"rad/s"`), used in the message:
/// `expected rad/s (1/s) but got W (kg·m²/s³)`.
pub fn check_dim(q: &Quantity, expected: Dim, label: &str) -> Result<f64, DimMismatch> {
    match q.dim {
        Some(d) if d != expected => Err(DimMismatch {
            expected,
            expected_label: label.to_string(),
            got: d,
        }),
        _ => Ok(q.value),
    }
}

/// Evaluates `src`; names are resolved through `lookup`, then the built-in constants.
pub fn eval(src: &str, lookup: &dyn Fn(&str) -> Option<Quantity>) -> Result<Quantity, ExprError> {
    eval_with_names(src, lookup, &[])
}

/// Like [`eval`], with the known parameter `names` used for "did you mean" hints.
pub fn eval_with_names(
    src: &str,
    lookup: &dyn Fn(&str) -> Option<Quantity>,
    names: &[&str],
) -> Result<Quantity, ExprError> {
    let mut p = Parser {
        src,
        pos: 0,
        depth: 0,
        lookup,
        names,
    };
    p.skip_ws();
    if p.peek().is_none() {
        return Err(p.err(0, "empty expression"));
    }
    let q = p.expr()?;
    p.skip_ws();
    match p.peek() {
        None => Ok(q),
        Some(')') => Err(p.err(p.pos, "unmatched ')'")),
        Some(c) => Err(p.err(p.pos, format!("unexpected '{c}'"))),
    }
}

const MAX_DEPTH: u32 = 100;

const CONSTANTS: &[&str] = &["pi", "e", "g_n"];

/// (name, min args, max args)
const FUNCTIONS: &[(&str, usize, usize)] = &[
    ("sqrt", 1, 1),
    ("abs", 1, 1),
    ("sin", 1, 1),
    ("cos", 1, 1),
    ("tan", 1, 1),
    ("asin", 1, 1),
    ("acos", 1, 1),
    ("atan", 1, 1),
    ("atan2", 2, 2),
    ("exp", 1, 1),
    ("ln", 1, 1),
    ("log10", 1, 1),
    ("min", 2, usize::MAX),
    ("max", 2, usize::MAX),
    ("pow", 2, 2),
    ("floor", 1, 1),
    ("ceil", 1, 1),
    ("round", 1, 1),
];

fn constant(name: &str) -> Option<Quantity> {
    match name {
        "pi" => Some(Quantity::bare(std::f64::consts::PI)),
        "e" => Some(Quantity::bare(std::f64::consts::E)),
        "g_n" => Some(Quantity::new(9.80665, Dim::ACCELERATION)),
        _ => None,
    }
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    depth: u32,
    lookup: &'a dyn Fn(&str) -> Option<Quantity>,
    names: &'a [&'a str],
}

type R<T> = Result<T, ExprError>;

impl<'a> Parser<'a> {
    fn err(&self, pos: usize, msg: impl Into<String>) -> ExprError {
        let column = self
            .src
            .get(..pos)
            .map_or(pos, |s| s.chars().count())
            .saturating_add(1);
        ExprError {
            pos,
            column,
            message: msg.into(),
        }
    }

    fn rest(&self) -> &'a str {
        self.src.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn peek_nth(&self, n: usize) -> Option<char> {
        self.rest().chars().nth(n)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    fn finite(&self, q: Quantity, pos: usize) -> R<Quantity> {
        if q.value.is_nan() {
            Err(self.err(pos, "expression evaluates to NaN"))
        } else if q.value.is_infinite() {
            Err(self.err(pos, "expression evaluates to infinity"))
        } else {
            Ok(q)
        }
    }

    fn expr(&mut self) -> R<Quantity> {
        let mut lhs = self.term()?;
        loop {
            self.skip_ws();
            let op_pos = self.pos;
            let sub = match self.peek() {
                Some('+') => false,
                Some('-') => true,
                _ => return Ok(lhs),
            };
            self.bump();
            let rhs = self.term()?;
            lhs = self.add(lhs, rhs, sub, op_pos)?;
        }
    }

    fn term(&mut self) -> R<Quantity> {
        let mut lhs = self.unary()?;
        loop {
            self.skip_ws();
            let op_pos = self.pos;
            let div = match self.peek() {
                Some('*') => false,
                Some('/') => true,
                _ => return Ok(lhs),
            };
            self.bump();
            let rhs = self.unary()?;
            lhs = if div {
                self.div(lhs, rhs, op_pos)?
            } else {
                self.mul(lhs, rhs, op_pos)?
            };
        }
    }

    fn unary(&mut self) -> R<Quantity> {
        self.skip_ws();
        if self.depth >= MAX_DEPTH {
            return Err(self.err(self.pos, "expression nested too deeply"));
        }
        self.depth += 1;
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> R<Quantity> {
        match self.peek() {
            Some('-') => {
                self.bump();
                let q = self.unary()?;
                Ok(Quantity {
                    value: -q.value,
                    dim: q.dim,
                })
            }
            Some('+') => {
                self.bump();
                self.unary()
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> R<Quantity> {
        let base = self.primary()?;
        self.skip_ws();
        if self.peek() != Some('^') {
            return Ok(base);
        }
        let op_pos = self.pos;
        self.bump();
        let exp = self.unary()?;
        self.pow(base, exp, op_pos, "'^'")
    }

    fn primary(&mut self) -> R<Quantity> {
        self.skip_ws();
        let start = self.pos;
        match self.peek() {
            None => Err(self.err(
                start,
                "unexpected end of expression (expected a number, name or '(')",
            )),
            Some('(') => {
                self.bump();
                let q = self.expr()?;
                self.skip_ws();
                if self.peek() == Some(')') {
                    self.bump();
                    Ok(q)
                } else {
                    Err(self.err(
                        self.pos,
                        format!(
                            "expected ')' to close the '(' at column {}",
                            self.err(start, "").column
                        ),
                    ))
                }
            }
            Some(c) if c.is_ascii_digit() => self.number(),
            Some('.') if self.peek_nth(1).is_some_and(|c| c.is_ascii_digit()) => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => self.name(),
            Some(c) => Err(self.err(start, format!("unexpected '{c}'"))),
        }
    }

    fn number(&mut self) -> R<Quantity> {
        let start = self.pos;
        let digits = |p: &mut Self| {
            while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                p.bump();
            }
        };
        digits(self);
        if self.peek() == Some('.') {
            self.bump();
            digits(self);
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            let has_exp = match self.peek_nth(1) {
                Some(c) if c.is_ascii_digit() => true,
                Some('+' | '-') => self.peek_nth(2).is_some_and(|c| c.is_ascii_digit()),
                _ => false,
            };
            if has_exp {
                self.bump();
                if matches!(self.peek(), Some('+' | '-')) {
                    self.bump();
                }
                digits(self);
            }
        }
        let text = self.src.get(start..self.pos).unwrap_or("");
        let value: f64 = text
            .parse()
            .map_err(|_| self.err(start, format!("invalid number '{text}'")))?;
        if !value.is_finite() {
            return Err(self.err(start, format!("number '{text}' is out of range")));
        }
        // Optional unit chain directly after the literal.
        let after_number = self.pos;
        self.skip_ws();
        let unit_pos = self.pos;
        match units::parse_unit_prefix(self.rest()) {
            Ok(None) => {
                self.pos = after_number;
                Ok(Quantity::bare(value))
            }
            Ok(Some((unit, len))) => {
                self.pos += len;
                self.finite(Quantity::from_unit(value, unit), start)
            }
            Err(e) => {
                let pos = unit_pos + e.pos;
                if let UnitErrorKind::UnknownSymbol { symbol, .. } = &e.kind {
                    if e.pos == 0
                        && ((self.lookup)(symbol).is_some()
                            || constant(symbol).is_some()
                            || self.names.contains(&symbol.as_str()))
                    {
                        return Err(self.err(
                            pos,
                            format!(
                                "unexpected name '{symbol}' after a number (use '*' to multiply)"
                            ),
                        ));
                    }
                }
                Err(self.err(pos, e.to_string()))
            }
        }
    }

    fn name(&mut self) -> R<Quantity> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.bump();
        }
        let name = self.src.get(start..self.pos).unwrap_or("");
        let after = self.pos;
        self.skip_ws();
        if self.peek() == Some('(') {
            return self.call(name, start);
        }
        self.pos = after;
        if let Some(q) = (self.lookup)(name) {
            if !q.value.is_finite() {
                return Err(self.err(
                    start,
                    format!("parameter '{name}' has a non-finite value ({})", q.value),
                ));
            }
            return Ok(q);
        }
        if let Some(q) = constant(name) {
            return Ok(q);
        }
        if FUNCTIONS.iter().any(|(f, _, _)| *f == name) {
            return Err(self.err(
                start,
                format!("function '{name}' needs arguments: {name}(...)"),
            ));
        }
        let hint = suggest::hint(
            name,
            self.names.iter().copied().chain(CONSTANTS.iter().copied()),
        );
        Err(self.err(start, format!("unknown identifier '{name}'{hint}")))
    }

    fn call(&mut self, name: &str, start: usize) -> R<Quantity> {
        let Some(&(fname, min, max)) = FUNCTIONS.iter().find(|(f, _, _)| *f == name) else {
            let hint = suggest::hint(name, FUNCTIONS.iter().map(|(f, _, _)| *f));
            return Err(self.err(start, format!("unknown function '{name}'{hint}")));
        };
        self.bump(); // '('
        let mut args: Vec<(Quantity, usize)> = Vec::new();
        self.skip_ws();
        if self.peek() == Some(')') {
            self.bump();
        } else {
            loop {
                self.skip_ws();
                let arg_pos = self.pos;
                let q = self.expr()?;
                args.push((q, arg_pos));
                self.skip_ws();
                match self.peek() {
                    Some(',') => {
                        self.bump();
                    }
                    Some(')') => {
                        self.bump();
                        break;
                    }
                    _ => {
                        return Err(
                            self.err(self.pos, format!("expected ',' or ')' in call to {fname}"))
                        )
                    }
                }
            }
        }
        if args.len() < min || args.len() > max {
            let want = if min == max {
                format!("{min} argument{}", if min == 1 { "" } else { "s" })
            } else {
                format!("at least {min} arguments")
            };
            return Err(self.err(start, format!("{fname} expects {want}, got {}", args.len())));
        }
        let q = self.apply(fname, &args, start)?;
        self.finite(q, start)
    }

    fn apply(&self, f: &str, args: &[(Quantity, usize)], pos: usize) -> R<Quantity> {
        let Some(&(a, apos)) = args.first() else {
            return Err(self.err(pos, format!("{f} expects arguments")));
        };
        // Dimensionless-in, dimensionless-out functions keep the bare-ness of the argument.
        let dimless = |g: fn(f64) -> f64| -> R<Quantity> {
            match a.dim {
                Some(d) if !d.is_dimensionless() => Err(self.err(
                    apos,
                    format!(
                        "{f} needs a dimensionless argument, got {}",
                        describe_dim(d)
                    ),
                )),
                dim => Ok(Quantity {
                    value: g(a.value),
                    dim,
                }),
            }
        };
        let keep = |g: fn(f64) -> f64| Quantity {
            value: g(a.value),
            dim: a.dim,
        };
        match f {
            "sqrt" => {
                if a.value < 0.0 {
                    return Err(self.err(apos, format!("sqrt of a negative number ({})", a.value)));
                }
                let dim = match a.dim {
                    None => None,
                    Some(d) => Some(d.checked_root(2).ok_or_else(|| {
                        self.err(
                            apos,
                            format!("sqrt of {} has odd dimension exponents", describe_dim(d)),
                        )
                    })?),
                };
                Ok(Quantity {
                    value: a.value.sqrt(),
                    dim,
                })
            }
            "abs" => Ok(keep(f64::abs)),
            "floor" => Ok(keep(f64::floor)),
            "ceil" => Ok(keep(f64::ceil)),
            "round" => Ok(keep(f64::round)),
            "sin" => dimless(f64::sin),
            "cos" => dimless(f64::cos),
            "tan" => dimless(f64::tan),
            "asin" => dimless(f64::asin),
            "acos" => dimless(f64::acos),
            "atan" => dimless(f64::atan),
            "exp" => dimless(f64::exp),
            "ln" => dimless(f64::ln),
            "log10" => dimless(f64::log10),
            "atan2" => {
                let (b, _) = args.get(1).copied().unwrap_or((Quantity::bare(1.0), pos));
                let dim = self.common_dim(a.dim, b.dim, pos, "atan2 of")?;
                Ok(Quantity {
                    value: a.value.atan2(b.value),
                    dim: dim.map(|_| Dim::ONE),
                })
            }
            "min" | "max" => {
                let mut acc = a;
                for &(b, bpos) in args.iter().skip(1) {
                    let dim = self.common_dim(acc.dim, b.dim, bpos, &format!("{f} of"))?;
                    let value = if f == "min" {
                        acc.value.min(b.value)
                    } else {
                        acc.value.max(b.value)
                    };
                    acc = Quantity { value, dim };
                }
                Ok(acc)
            }
            "pow" => {
                let (b, _) = args.get(1).copied().unwrap_or((Quantity::bare(1.0), pos));
                self.pow(a, b, pos, "pow")
            }
            _ => Err(self.err(pos, format!("unknown function '{f}'"))),
        }
    }

    /// The common dimension of two operands that must agree (None adapts).
    fn common_dim(&self, a: Option<Dim>, b: Option<Dim>, pos: usize, what: &str) -> R<Option<Dim>> {
        match (a, b) {
            (Some(x), Some(y)) if x != y => Err(self.err(
                pos,
                format!(
                    "cannot take {what} quantities of different dimensions: {} and {}",
                    describe_dim(x),
                    describe_dim(y)
                ),
            )),
            (Some(x), _) | (_, Some(x)) => Ok(Some(x)),
            (None, None) => Ok(None),
        }
    }

    fn add(&self, a: Quantity, b: Quantity, sub: bool, pos: usize) -> R<Quantity> {
        let dim = match (a.dim, b.dim) {
            (Some(x), Some(y)) if x != y => {
                return Err(self.err(
                    pos,
                    format!(
                        "cannot {} quantities of different dimensions: {} and {}",
                        if sub { "subtract" } else { "add" },
                        describe_dim(x),
                        describe_dim(y)
                    ),
                ))
            }
            (Some(x), _) | (_, Some(x)) => Some(x),
            (None, None) => None,
        };
        let value = if sub {
            a.value - b.value
        } else {
            a.value + b.value
        };
        self.finite(Quantity { value, dim }, pos)
    }

    fn mul(&self, a: Quantity, b: Quantity, pos: usize) -> R<Quantity> {
        let dim = match (a.dim, b.dim) {
            (Some(x), Some(y)) => Some(
                x.checked_mul(y)
                    .ok_or_else(|| self.err(pos, "dimension exponent out of range"))?,
            ),
            (Some(x), None) | (None, Some(x)) => Some(x),
            (None, None) => None,
        };
        self.finite(
            Quantity {
                value: a.value * b.value,
                dim,
            },
            pos,
        )
    }

    fn div(&self, a: Quantity, b: Quantity, pos: usize) -> R<Quantity> {
        if b.value == 0.0 {
            return Err(self.err(pos, "division by zero"));
        }
        let dim = match (a.dim, b.dim) {
            (x, Some(y)) => Some(
                x.unwrap_or(Dim::ONE)
                    .checked_div(y)
                    .ok_or_else(|| self.err(pos, "dimension exponent out of range"))?,
            ),
            (x, None) => x,
        };
        // A bare number over a bare number stays bare; bare / dimensioned is the inverse.
        self.finite(
            Quantity {
                value: a.value / b.value,
                dim,
            },
            pos,
        )
    }

    fn pow(&self, base: Quantity, exp: Quantity, pos: usize, what: &str) -> R<Quantity> {
        if let Some(d) = exp.dim {
            if !d.is_dimensionless() {
                return Err(self.err(
                    pos,
                    format!(
                        "exponent of {what} must be dimensionless, got {}",
                        describe_dim(d)
                    ),
                ));
            }
        }
        let p = exp.value;
        let dim = match base.dim {
            None => None,
            Some(d) if d.is_dimensionless() => Some(d),
            Some(d) => {
                let scale = |e: i8| -> R<i8> {
                    let v = f64::from(e) * p;
                    let r = v.round();
                    if (v - r).abs() > 1e-9 {
                        Err(self.err(
                            pos,
                            format!(
                                "cannot raise {} to the power {p}: dimension exponents would not be integers",
                                describe_dim(d)
                            ),
                        ))
                    } else if r.abs() > 127.0 {
                        Err(self.err(pos, "dimension exponent out of range"))
                    } else {
                        Ok(r as i8)
                    }
                };
                Some(Dim::new(
                    scale(d.m)?,
                    scale(d.kg)?,
                    scale(d.s)?,
                    scale(d.a)?,
                    scale(d.k)?,
                ))
            }
        };
        self.finite(
            Quantity {
                value: base.value.powf(p),
                dim,
            },
            pos,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::parse_unit;

    fn params(name: &str) -> Option<Quantity> {
        match name {
            "g1" => Some(Quantity::bare(3.5)),
            "J" => Some(Quantity::new(0.25, Dim::INERTIA)),
            "Jb" => Some(Quantity::bare(0.25)),
            "A" => Some(Quantity::new(4.0, Dim::LENGTH.powi(2))),
            "J1" => Some(Quantity::new(2.0, Dim::INERTIA)),
            "fn" => Some(Quantity::new(50.0, Dim::FREQUENCY)),
            "m" => Some(Quantity::new(1200.0, Dim::MASS)),
            "w" => Some(Quantity::new(100.0, Dim::FREQUENCY)),
            "T" => Some(Quantity::new(300.0, Dim::ENERGY)),
            "tau" => Some(Quantity::new(0.5, Dim::TIME)),
            "e" => None,
            "bad" => Some(Quantity::bare(f64::NAN)),
            _ => None,
        }
    }

    const NAMES: &[&str] = &["g1", "J1", "J", "Jb", "A", "fn", "m", "w", "T", "tau"];

    fn ev(s: &str) -> Quantity {
        match eval_with_names(s, &params, NAMES) {
            Ok(q) => q,
            Err(e) => panic!("eval({s:?}) failed: {e}"),
        }
    }

    fn everr(s: &str) -> ExprError {
        match eval_with_names(s, &params, NAMES) {
            Ok(q) => panic!("eval({s:?}) should fail, got {q:?}"),
            Err(e) => e,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[track_caller]
    fn is(s: &str, value: f64, dim: Option<Dim>) {
        let q = ev(s);
        assert!(close(q.value, value), "{s:?}: {} != {value}", q.value);
        assert_eq!(q.dim, dim, "{s:?}");
    }

    #[test]
    fn spec_examples() {
        is("4500 rpm", 471.238_898_038_469, Some(Dim::FREQUENCY));
        is("150 kW", 150_000.0, Some(Dim::POWER));
        is("80 km/h", 22.222_222_222_222, Some(Dim::VELOCITY));
        is("20 deg", 0.349_065_850_398_866, Some(Dim::ONE));
        is("0.5 s", 0.5, Some(Dim::TIME));
        is("3 kg*m^2", 3.0, Some(Dim::INERTIA));
        assert_eq!(
            ev("3 kg*m^2").dim.map(|d| d.to_string()).as_deref(),
            Some("kg·m²")
        );
        is("2*g1", 7.0, None);
        is("sqrt(Jb)", 0.5, None);
        is("sqrt(A)", 2.0, Some(Dim::LENGTH));
        is("pi", std::f64::consts::PI, None);
        is("fn/2", 25.0, Some(Dim::FREQUENCY));
        is("1.2 kg/m^3", 1.2, Some(Dim::MASS / Dim::VOLUME));
        is("10000 N*m", 10_000.0, Some(Dim::ENERGY));
        is("4500 rpm * 2", 942.477_796_076_938, Some(Dim::FREQUENCY));
        is("2*m", 2400.0, Some(Dim::MASS));
    }

    #[test]
    fn unit_suffix_rule() {
        is("4500rpm", 471.238_898_038_469, Some(Dim::FREQUENCY));
        is("3 m^2", 3.0, Some(Dim::LENGTH.powi(2)));
        is("(3 m)^2", 9.0, Some(Dim::LENGTH.powi(2)));
        is("2 m/s^2", 2.0, Some(Dim::ACCELERATION));
        is("0.4 N/(m/s)^2", 0.4, Some(Dim::new(-1, 1, 0, 0, 0)));
        is("3 N.m", 3.0, Some(Dim::ENERGY));
        is("3 Nm + 2 N*m", 5.0, Some(Dim::ENERGY));
        is("2 kg*g1", 7.0, Some(Dim::MASS)); // g1 is not a unit: parameter
        is("2 kg * m", 2.0, Some(Dim::MASS * Dim::LENGTH)); // m is a unit after a number
        is("2 t", 2000.0, Some(Dim::MASS));
        is("50 %", 0.5, Some(Dim::ONE));
        is(
            "1 rev/min",
            2.0 * std::f64::consts::PI / 60.0,
            Some(Dim::FREQUENCY),
        );
        is("100 km/h / 2", 100.0 / 3.6 / 2.0, Some(Dim::VELOCITY));
        is("1e3 N", 1000.0, Some(Dim::FORCE));
        is("1e-3", 1e-3, None);
        is(".5", 0.5, None);
        is("5.", 5.0, None);
        is("2.5e+2 mm", 0.25, Some(Dim::LENGTH));
        is("1 bar", 1e5, Some(Dim::PRESSURE));
        is("9.81 m/s^2 * 1 t", 9810.0, Some(Dim::FORCE));
    }

    #[test]
    fn precedence_and_arithmetic() {
        is("2+3*4^2", 50.0, None);
        is("-2^2", -4.0, None);
        is("2^3^2", 512.0, None);
        is("2^-1", 0.5, None);
        is("(2+3)*4", 20.0, None);
        is("10-4-3", 3.0, None);
        is("12/3/2", 2.0, None);
        is("--3", 3.0, None);
        is("+3", 3.0, None);
        is("  1 +\t2 ", 3.0, None);
        is("e", std::f64::consts::E, None);
        is("g_n", 9.80665, Some(Dim::ACCELERATION));
        is("1200 kg * g_n", 1200.0 * 9.80665, Some(Dim::FORCE));
        is("J + 0.1", 0.35, Some(Dim::INERTIA));
        is("0.1 + J", 0.35, Some(Dim::INERTIA));
        is("1/tau", 2.0, Some(Dim::FREQUENCY));
        is("T*w", 30_000.0, Some(Dim::POWER));
        is("pow(2, 10)", 1024.0, None);
        is("pow(A, 1.5)", 8.0, Some(Dim::LENGTH.powi(3)));
        is("A^0.5", 2.0, Some(Dim::LENGTH));
        is(
            "(20 deg)^2",
            0.349_065_850_398_866f64.powi(2),
            Some(Dim::ONE),
        );
    }

    #[test]
    fn functions() {
        is("abs(-3 m)", 3.0, Some(Dim::LENGTH));
        is("sin(30 deg)", 0.5, Some(Dim::ONE));
        is("cos(0)", 1.0, None);
        is("tan(pi/4)", 1.0, None);
        is("atan(1)", std::f64::consts::FRAC_PI_4, None);
        is(
            "atan2(1 m, 1 m)",
            std::f64::consts::FRAC_PI_4,
            Some(Dim::ONE),
        );
        is("atan2(1, 1 m)", std::f64::consts::FRAC_PI_4, Some(Dim::ONE));
        is("exp(0)", 1.0, None);
        is("exp(-1 s/tau)", (-2.0f64).exp(), Some(Dim::ONE));
        is("ln(e)", 1.0, None);
        is("log10(1000)", 3.0, None);
        is("min(3 m, 2 m, 5)", 2.0, Some(Dim::LENGTH));
        is("max(1, 2, 3)", 3.0, None);
        is("floor(2.7)", 2.0, None);
        is("ceil(2.1 s)", 3.0, Some(Dim::TIME));
        is("round(2.5)", 3.0, None);
        is("sqrt (16)", 4.0, None);
        is("sqrt(4 m^2/s^2)", 2.0, Some(Dim::VELOCITY));
        is("asin(1)", std::f64::consts::FRAC_PI_2, None);
    }

    #[test]
    fn dimension_errors() {
        let e = everr("1 m + 2 s");
        assert_eq!(e.column, 5);
        assert_eq!(
            e.message,
            "cannot add quantities of different dimensions: m and s"
        );
        let e = everr("150 kW - 10 N*m");
        assert_eq!(
            e.message,
            "cannot subtract quantities of different dimensions: W (kg·m²/s³) and N·m (kg·m²/s²)"
        );
        assert!(everr("sqrt(J)").message.contains("odd dimension exponents"));
        assert!(everr("sqrt(3 m)").message.contains("odd"));
        assert!(everr("sin(2 m)")
            .message
            .contains("sin needs a dimensionless argument, got m"));
        assert!(everr("cos(1 s)").message.contains("dimensionless"));
        assert!(everr("exp(tau)").message.contains("dimensionless"));
        assert!(everr("ln(2 kg)").message.contains("dimensionless"));
        assert!(everr("2^(1 s)")
            .message
            .contains("must be dimensionless, got s"));
        assert!(everr("pow(2, 1 m)").message.contains("dimensionless"));
        assert!(everr("(2 m)^0.5").message.contains("would not be integers"));
        assert!(everr("min(1 m, 1 s)")
            .message
            .contains("different dimensions"));
        assert!(everr("atan2(1 m, 1 s)")
            .message
            .contains("different dimensions"));
        assert!(everr("(2 m)^200").message.contains("out of range"));
        assert!(everr("(1 m^100)*(1 m^100)")
            .message
            .contains("out of range"));
    }

    #[test]
    fn nan_and_infinity() {
        assert_eq!(everr("1/0").message, "division by zero");
        assert_eq!(everr("10^400").message, "expression evaluates to infinity");
        assert_eq!(
            everr("1e308*10").message,
            "expression evaluates to infinity"
        );
        assert!(everr("1e999").message.contains("out of range"));
        assert_eq!(everr("ln(0)").message, "expression evaluates to infinity");
        assert_eq!(everr("ln(-1)").message, "expression evaluates to NaN");
        assert_eq!(everr("asin(2)").message, "expression evaluates to NaN");
        assert_eq!(everr("(-8)^(1/3)").message, "expression evaluates to NaN");
        assert!(everr("sqrt(-1)").message.contains("negative"));
        assert!(everr("bad").message.contains("non-finite"));
        assert!(everr("1e200 km^2 * 1e200").message.contains("infinity"));
    }

    #[test]
    fn unknown_names() {
        let e = everr("2*J1 + J2");
        assert_eq!(
            e.to_string(),
            "at column 8: unknown identifier 'J2' (did you mean 'J1'?)"
        );
        assert_eq!(e.pos, 7);
        let e = everr("taw*2");
        assert_eq!(e.message, "unknown identifier 'taw' (did you mean 'tau'?)");
        let e = everr("xyzzy");
        assert_eq!(e.message, "unknown identifier 'xyzzy'");
        let e = everr("2*p");
        // ties go to the first candidate at the smallest distance
        assert_eq!(e.message, "unknown identifier 'p' (did you mean 'J'?)");
        let e = everr("sqr(4)");
        assert_eq!(e.message, "unknown function 'sqr' (did you mean 'sqrt'?)");
        let e = everr("sqrt");
        assert!(e.message.contains("needs arguments"));
        // plain eval: no names, constants still suggested
        let e = eval("2*pj", &|_| None).unwrap_err();
        assert_eq!(e.message, "unknown identifier 'pj' (did you mean 'pi'?)");
        // unknown units after a number
        let e = everr("4500 rpn");
        assert_eq!(
            e.to_string(),
            "at column 6: unknown unit 'rpn' (did you mean 'rpm'?)"
        );
        let e = everr("3 kg*m^2/sec");
        assert_eq!(e.message, "unknown identifier 'sec'"); // chain stopped before "/sec"
        let e = everr("150 KW");
        assert_eq!(e.message, "unknown unit 'KW' (did you mean 'kW'?)");
        let e = everr("2 tau");
        assert_eq!(
            e.message,
            "unexpected name 'tau' after a number (use '*' to multiply)"
        );
        // unicode columns are counted in characters
        let e = everr("20 ° + x");
        assert_eq!(e.column, 8);
    }

    #[test]
    fn malformed_input() {
        for (src, col) in [
            ("", 1),
            ("   ", 1),
            ("(1+2", 5),
            ("1+2)", 4),
            ("2+", 3),
            ("2*", 3),
            ("2^", 3),
            ("*2", 1),
            ("2 3", 3),
            ("sqrt(1,", 8),
            ("sqrt(1 2)", 8),
            ("sqrt()", 1),
            ("atan2(1)", 1),
            ("min(1)", 1),
            ("f(1)", 1),
            (".", 1),
            ("1..2", 3),
            ("2 kg m", 6),
            ("()", 2),
            ("#", 1),
            ("1 + ω", 5),
        ] {
            let e = everr(src);
            assert_eq!(e.column, col, "{src:?}: {e}");
        }
        assert_eq!(everr("").message, "empty expression");
        assert_eq!(everr("1+2)").message, "unmatched ')'");
        assert!(everr("(1+2")
            .message
            .contains("expected ')' to close the '(' at column 1"));
        let deep = "(".repeat(10_000) + "1" + &")".repeat(10_000);
        assert!(everr(&deep).message.contains("too deeply"));
        assert!(everr(&"-".repeat(10_000)).message.contains("too deeply"));
        assert!(everr(&"2^".repeat(10_000)).message.contains("too deeply"));
        let nested = "(".repeat(50) + "1" + &")".repeat(50);
        is(&nested, 1.0, None);
    }

    #[test]
    fn check_dim_messages() {
        let rad_s = parse_unit("rad/s").unwrap().dim;
        assert_eq!(
            check_dim(&ev("4500 rpm"), rad_s, "rad/s"),
            Ok(ev("4500 rpm").value)
        );
        assert_eq!(check_dim(&ev("2*g1"), rad_s, "rad/s"), Ok(7.0));
        let e = check_dim(&ev("150 kW"), rad_s, "rad/s").unwrap_err();
        assert_eq!(e.to_string(), "expected rad/s (1/s) but got W (kg·m²/s³)");
        let e = check_dim(&ev("20 deg"), Dim::LENGTH, "m").unwrap_err();
        assert_eq!(e.to_string(), "expected m but got dimensionless (1)");
        let e = check_dim(&ev("3 m/s"), Dim::ENERGY, "N*m").unwrap_err();
        assert_eq!(e.to_string(), "expected N*m (kg·m²/s²) but got m/s");
        let e = check_dim(&ev("1 s"), Dim::FREQUENCY, "").unwrap_err();
        assert_eq!(e.to_string(), "expected 1/s but got s");
        let damping = parse_unit("N*m*s/rad").unwrap().dim;
        assert_eq!(
            check_dim(&ev("0.5 N*m*s/rad"), damping, "N*m*s/rad"),
            Ok(0.5)
        );
    }

    #[test]
    fn quantity_display() {
        assert_eq!(ev("2 m/s").to_string(), "2 m/s");
        assert_eq!(ev("2").to_string(), "2");
        assert_eq!(ev("-1.5").to_string(), "-1.5");
    }

    /// Deterministic LCG fuzz: no input may panic, and Ok results are finite.
    #[test]
    fn garbage_never_panics() {
        const CHARS: &[char] = &[
            '0', '1', '2', '9', '.', 'e', 'E', '+', '-', '*', '/', '^', '(', ')', ',', ' ', 'm',
            'k', 'g', 's', 'N', 'W', 'r', 'p', 'J', 'h', 'x', '_', '%', '°', '²', '⁻', '·', 'µ',
            'q', 't', 'a', 'n', 'i', 'l', 'o', '\t', 'ω', 'd', 'M', 'P', 'z',
        ];
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize
        };
        let mut ok = 0usize;
        for _ in 0..20_000 {
            let len = next() % 24;
            let s: String = (0..len).map(|_| CHARS[next() % CHARS.len()]).collect();
            match eval_with_names(&s, &params, NAMES) {
                Ok(q) => {
                    ok += 1;
                    assert!(q.value.is_finite(), "{s:?} -> {q:?}");
                }
                Err(e) => {
                    assert!(e.pos <= s.len(), "{s:?}: {e:?}");
                    assert!(s.is_char_boundary(e.pos), "{s:?}: {e:?}");
                    assert!(e.column <= s.chars().count() + 1, "{s:?}: {e:?}");
                    let _ = e.to_string();
                }
            }
            if let Ok(u) = parse_unit(&s) {
                assert!(u.factor.is_finite() && u.factor > 0.0, "{s:?}");
            }
            let _ = units::parse_unit_prefix(&s);
        }
        assert!(ok > 0, "fuzzer should produce some valid expressions");
    }
}
