//! Physical dimensions and units.
//!
//! Everything inside the simulator is SI. A [`Dim`] holds the exponents of the SI base
//! dimensions length (m), mass (kg), time (s), current (A) and temperature (K); angles
//! (rad, deg, rev) are dimensionless as in SI, so `rpm` is `2π/60 1/s` and `Hz` is `1/s`.
//! A [`Unit`] is a scale factor plus a dimension: `SI value = number * factor`.
//!
//! [`parse_unit`] parses unit declarations and unit suffixes:
//!
//! ```text
//! unit     := factor ( op factor )*          op: '*' '.' '·' (multiply), '/' (divide, left-assoc)
//! factor   := primary exponent?
//! primary  := symbol | '1' | '(' unit ')'
//! exponent := '^' int | '^' '(' int ')' | superscript digits (m², s⁻¹)
//! int      := ['+' | '-'] digits
//! ```
//!
//! so `kg*m^2`, `N*m`, `N.m`, `Nm`, `m/s^2`, `kg/m^3`, `N/(m/s)^2`, `N*m*s/rad`, `rad/s`,
//! `km/h`, `1/s` and `1` all parse. Symbols are case-sensitive (see
//! [`known_unit_symbols`]); an unknown symbol is an error that suggests the closest known one.
//!
//! [`parse_unit_prefix`] is the variant used by the expression evaluator after a number
//! literal: it takes the longest leading *unit chain* and leaves the rest of the input alone
//! (see `crate::expr` for the exact rule).

use std::fmt;
use std::ops::{Div, Mul};
use std::sync::OnceLock;

use crate::suggest;

/// Exponents of the SI base dimensions m, kg, s, A, K.
///
/// The `Mul`/`Div` operators and [`Dim::powi`] saturate at the `i8` range; use the
/// `checked_*` methods to detect overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Dim {
    pub m: i8,
    pub kg: i8,
    pub s: i8,
    pub a: i8,
    pub k: i8,
}

const fn d(m: i8, kg: i8, s: i8, a: i8, k: i8) -> Dim {
    Dim { m, kg, s, a, k }
}

impl Dim {
    /// Dimensionless (also the dimension of angles).
    pub const ONE: Dim = d(0, 0, 0, 0, 0);
    pub const LENGTH: Dim = d(1, 0, 0, 0, 0);
    pub const MASS: Dim = d(0, 1, 0, 0, 0);
    pub const TIME: Dim = d(0, 0, 1, 0, 0);
    pub const CURRENT: Dim = d(0, 0, 0, 1, 0);
    pub const TEMPERATURE: Dim = d(0, 0, 0, 0, 1);
    pub const FREQUENCY: Dim = d(0, 0, -1, 0, 0);
    pub const VELOCITY: Dim = d(1, 0, -1, 0, 0);
    pub const ACCELERATION: Dim = d(1, 0, -2, 0, 0);
    pub const FORCE: Dim = d(1, 1, -2, 0, 0);
    /// Energy and torque (J = N·m).
    pub const ENERGY: Dim = d(2, 1, -2, 0, 0);
    pub const POWER: Dim = d(2, 1, -3, 0, 0);
    pub const PRESSURE: Dim = d(-1, 1, -2, 0, 0);
    pub const INERTIA: Dim = d(2, 1, 0, 0, 0);
    pub const VOLUME: Dim = d(3, 0, 0, 0, 0);
    pub const VOLTAGE: Dim = d(2, 1, -3, -1, 0);

    /// Dimension with the given exponents of m, kg, s, A, K.
    pub const fn new(m: i8, kg: i8, s: i8, a: i8, k: i8) -> Dim {
        d(m, kg, s, a, k)
    }

    pub const fn is_dimensionless(self) -> bool {
        self.m == 0 && self.kg == 0 && self.s == 0 && self.a == 0 && self.k == 0
    }

    fn exps(self) -> [i8; 5] {
        [self.m, self.kg, self.s, self.a, self.k]
    }

    fn from_exps(e: [i8; 5]) -> Dim {
        d(e[0], e[1], e[2], e[3], e[4])
    }

    fn zip_checked(self, o: Dim, f: impl Fn(i8, i8) -> Option<i8>) -> Option<Dim> {
        let (a, b) = (self.exps(), o.exps());
        let mut out = [0i8; 5];
        for i in 0..5 {
            out[i] = f(a[i], b[i])?;
        }
        Some(Dim::from_exps(out))
    }

    /// `self * o`, or `None` if an exponent leaves the `i8` range.
    pub fn checked_mul(self, o: Dim) -> Option<Dim> {
        self.zip_checked(o, i8::checked_add)
    }

    /// `self / o`, or `None` if an exponent leaves the `i8` range.
    pub fn checked_div(self, o: Dim) -> Option<Dim> {
        self.zip_checked(o, i8::checked_sub)
    }

    /// `self^n`, or `None` if an exponent leaves the `i8` range.
    pub fn checked_powi(self, n: i32) -> Option<Dim> {
        self.zip_checked(Dim::ONE, |e, _| {
            i32::from(e)
                .checked_mul(n)
                .and_then(|v| i8::try_from(v).ok())
        })
    }

    /// The `n`-th root (`n > 0`), or `None` if some exponent is not divisible by `n`.
    pub fn checked_root(self, n: i32) -> Option<Dim> {
        if n <= 0 {
            return None;
        }
        self.zip_checked(Dim::ONE, |e, _| {
            let e = i32::from(e);
            if e % n == 0 {
                i8::try_from(e / n).ok()
            } else {
                None
            }
        })
    }

    /// `self^n`, saturating at the `i8` range.
    pub fn powi(self, n: i32) -> Dim {
        let sat = |e: i8| {
            let v = i64::from(e) * i64::from(n);
            v.clamp(i64::from(i8::MIN), i64::from(i8::MAX)) as i8
        };
        d(
            sat(self.m),
            sat(self.kg),
            sat(self.s),
            sat(self.a),
            sat(self.k),
        )
    }

    /// `1 / self` (saturating).
    pub fn recip(self) -> Dim {
        Dim::ONE / self
    }

    /// ASCII rendering, e.g. `kg*m^2/s^2` (same as `format!("{:#}", dim)`).
    pub fn ascii(self) -> String {
        self.render(true)
    }

    /// A conventional name for some derived dimensions (`N`, `N·m`, `W`, `Pa`, `V`), if any.
    pub fn derived_name(self) -> Option<&'static str> {
        const NAMES: &[(Dim, &str)] = &[
            (Dim::FORCE, "N"),
            (Dim::ENERGY, "N·m"),
            (Dim::POWER, "W"),
            (Dim::PRESSURE, "Pa"),
            (Dim::VOLTAGE, "V"),
        ];
        NAMES.iter().find(|(dd, _)| *dd == self).map(|(_, n)| *n)
    }

    fn render(self, ascii: bool) -> String {
        // Display order: kg, m, s, A, K (so torque reads kg·m²/s²).
        let parts = [
            ("kg", self.kg),
            ("m", self.m),
            ("s", self.s),
            ("A", self.a),
            ("K", self.k),
        ];
        let term = |sym: &str, e: i32| -> String {
            if e == 1 {
                sym.to_string()
            } else if ascii {
                format!("{sym}^{e}")
            } else {
                format!("{sym}{}", superscript(e))
            }
        };
        let sep = if ascii { "*" } else { "·" };
        let num: Vec<String> = parts
            .iter()
            .filter(|(_, e)| *e > 0)
            .map(|(s, e)| term(s, i32::from(*e)))
            .collect();
        let den: Vec<String> = parts
            .iter()
            .filter(|(_, e)| *e < 0)
            .map(|(s, e)| term(s, -i32::from(*e)))
            .collect();
        let num_s = if num.is_empty() {
            "1".to_string()
        } else {
            num.join(sep)
        };
        match den.len() {
            0 => num_s,
            1 => format!("{num_s}/{}", den[0]),
            _ => format!("{num_s}/({})", den.join(sep)),
        }
    }
}

fn superscript(e: i32) -> String {
    e.to_string()
        .chars()
        .map(|c| match c {
            '-' => '⁻',
            '0' => '⁰',
            '1' => '¹',
            '2' => '²',
            '3' => '³',
            '4' => '⁴',
            '5' => '⁵',
            '6' => '⁶',
            '7' => '⁷',
            '8' => '⁸',
            '9' => '⁹',
            other => other,
        })
        .collect()
}

fn superscript_digit(c: char) -> Option<u32> {
    "⁰¹²³⁴⁵⁶⁷⁸⁹".chars().position(|x| x == c).map(|p| p as u32)
}

/// `kg·m²/s²`; with `{:#}` the ASCII form `kg*m^2/s^2`. Dimensionless prints as `1`.
impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(f.alternate()))
    }
}

impl Mul for Dim {
    type Output = Dim;
    fn mul(self, o: Dim) -> Dim {
        let (a, b) = (self.exps(), o.exps());
        let mut out = [0i8; 5];
        for i in 0..5 {
            out[i] = a[i].saturating_add(b[i]);
        }
        Dim::from_exps(out)
    }
}

impl Div for Dim {
    type Output = Dim;
    fn div(self, o: Dim) -> Dim {
        let (a, b) = (self.exps(), o.exps());
        let mut out = [0i8; 5];
        for i in 0..5 {
            out[i] = a[i].saturating_sub(b[i]);
        }
        Dim::from_exps(out)
    }
}

/// A unit: `SI value = number * factor`, with dimension `dim`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit {
    pub factor: f64,
    pub dim: Dim,
}

impl Unit {
    /// The dimensionless unit `1`.
    pub const ONE: Unit = Unit::new(1.0, Dim::ONE);

    pub const fn new(factor: f64, dim: Dim) -> Unit {
        Unit { factor, dim }
    }

    /// Converts a number in this unit to SI.
    pub fn to_si(&self, value: f64) -> f64 {
        value * self.factor
    }

    /// Converts an SI value to a number in this unit.
    pub fn from_si(&self, si: f64) -> f64 {
        si / self.factor
    }

    /// `self^n` (dimension saturating, see [`Dim::powi`]).
    pub fn powi(self, n: i32) -> Unit {
        Unit::new(self.factor.powi(n), self.dim.powi(n))
    }
}

impl Mul for Unit {
    type Output = Unit;
    fn mul(self, o: Unit) -> Unit {
        Unit::new(self.factor * o.factor, self.dim * o.dim)
    }
}

impl Div for Unit {
    type Output = Unit;
    fn div(self, o: Unit) -> Unit {
        Unit::new(self.factor / o.factor, self.dim / o.dim)
    }
}

const PI: f64 = std::f64::consts::PI;
const LBF: f64 = 4.448_221_615_260_5;
const INCH: f64 = 0.0254;

/// Symbol table: (symbol, factor to SI, dimension). Order matters for suggestion ties.
static UNITS: &[(&str, f64, Dim)] = &[
    ("m", 1.0, Dim::LENGTH),
    ("km", 1e3, Dim::LENGTH),
    ("cm", 1e-2, Dim::LENGTH),
    ("mm", 1e-3, Dim::LENGTH),
    ("um", 1e-6, Dim::LENGTH),
    ("µm", 1e-6, Dim::LENGTH),
    ("s", 1.0, Dim::TIME),
    ("ms", 1e-3, Dim::TIME),
    ("min", 60.0, Dim::TIME),
    ("h", 3600.0, Dim::TIME),
    ("kg", 1.0, Dim::MASS),
    ("g", 1e-3, Dim::MASS),
    ("t", 1e3, Dim::MASS),
    ("N", 1.0, Dim::FORCE),
    ("kN", 1e3, Dim::FORCE),
    ("Nm", 1.0, Dim::ENERGY),
    ("kNm", 1e3, Dim::ENERGY),
    ("J", 1.0, Dim::ENERGY),
    ("kJ", 1e3, Dim::ENERGY),
    ("MJ", 1e6, Dim::ENERGY),
    ("Wh", 3600.0, Dim::ENERGY),
    ("kWh", 3.6e6, Dim::ENERGY),
    ("W", 1.0, Dim::POWER),
    ("kW", 1e3, Dim::POWER),
    ("MW", 1e6, Dim::POWER),
    ("hp", 745.699_871_582_270_2, Dim::POWER),
    ("PS", 735.498_75, Dim::POWER),
    ("rad", 1.0, Dim::ONE),
    ("deg", PI / 180.0, Dim::ONE),
    ("°", PI / 180.0, Dim::ONE),
    ("rev", 2.0 * PI, Dim::ONE),
    ("rpm", 2.0 * PI / 60.0, Dim::FREQUENCY),
    ("Hz", 1.0, Dim::FREQUENCY),
    ("kHz", 1e3, Dim::FREQUENCY),
    ("kph", 1e3 / 3600.0, Dim::VELOCITY),
    ("mph", 0.447_04, Dim::VELOCITY),
    ("Pa", 1.0, Dim::PRESSURE),
    ("kPa", 1e3, Dim::PRESSURE),
    ("MPa", 1e6, Dim::PRESSURE),
    ("bar", 1e5, Dim::PRESSURE),
    ("psi", LBF / (INCH * INCH), Dim::PRESSURE),
    ("lbf", LBF, Dim::FORCE),
    ("lb", 0.453_592_37, Dim::MASS),
    ("ft", 0.3048, Dim::LENGTH),
    ("in", INCH, Dim::LENGTH),
    ("mi", 1609.344, Dim::LENGTH),
    ("L", 1e-3, Dim::VOLUME),
    ("A", 1.0, Dim::CURRENT),
    ("mA", 1e-3, Dim::CURRENT),
    ("V", 1.0, Dim::VOLTAGE),
    ("K", 1.0, Dim::TEMPERATURE),
    ("%", 0.01, Dim::ONE),
];

/// All unit symbols understood by [`parse_unit`], in table order.
pub fn known_unit_symbols() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| UNITS.iter().map(|(n, _, _)| *n).collect())
}

/// The unit of a single symbol (`"kW"`, `"rpm"`), if known. Case-sensitive.
pub fn unit_symbol(sym: &str) -> Option<Unit> {
    UNITS
        .iter()
        .find(|(n, _, _)| *n == sym)
        .map(|(_, f, dd)| Unit::new(*f, *dd))
}

/// A unit parse error at byte offset `pos` of the parsed string.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind}")]
pub struct UnitError {
    /// Byte offset into the parsed string.
    pub pos: usize,
    pub kind: UnitErrorKind,
}

/// What went wrong while parsing a unit.
#[derive(Debug, Clone, PartialEq)]
pub enum UnitErrorKind {
    /// A symbol that is not in [`known_unit_symbols`], with the closest known one.
    UnknownSymbol {
        symbol: String,
        suggestion: Option<&'static str>,
    },
    /// Malformed unit text.
    Syntax(String),
    /// An exponent or scale factor out of range.
    OutOfRange(String),
}

impl fmt::Display for UnitErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitErrorKind::UnknownSymbol { symbol, suggestion } => {
                write!(f, "unknown unit '{symbol}'")?;
                if let Some(s) = suggestion {
                    write!(f, " (did you mean '{s}'?)")?;
                }
                Ok(())
            }
            UnitErrorKind::Syntax(m) | UnitErrorKind::OutOfRange(m) => f.write_str(m),
        }
    }
}

impl UnitError {
    fn syntax(pos: usize, msg: impl Into<String>) -> UnitError {
        UnitError {
            pos,
            kind: UnitErrorKind::Syntax(msg.into()),
        }
    }

    fn range(pos: usize, msg: impl Into<String>) -> UnitError {
        UnitError {
            pos,
            kind: UnitErrorKind::OutOfRange(msg.into()),
        }
    }

    fn unknown(pos: usize, symbol: &str) -> UnitError {
        UnitError {
            pos,
            kind: UnitErrorKind::UnknownSymbol {
                symbol: symbol.to_string(),
                suggestion: suggest::did_you_mean(symbol, known_unit_symbols().iter().copied()),
            },
        }
    }
}

/// Parses a complete unit string such as `"kg*m^2"`, `"N/(m/s)^2"` or `"1"`.
pub fn parse_unit(s: &str) -> Result<Unit, UnitError> {
    let mut c = Cursor::new(s);
    c.skip_ws();
    if c.peek().is_none() {
        return Err(UnitError::syntax(c.pos, "empty unit"));
    }
    let u = c.product()?;
    c.skip_ws();
    match c.peek() {
        None => Ok(u),
        Some(ch) => Err(UnitError::syntax(
            c.pos,
            format!("unexpected '{ch}' in unit"),
        )),
    }
}

/// Parses the longest leading unit chain of `s` (used after number literals).
///
/// Returns `Ok(None)` if `s` does not start with a symbol, `Err` if it starts with an
/// unknown symbol (with a suggestion), else the unit and the number of bytes consumed.
/// After the first symbol the chain continues across `*`, `·`, `.` and `/` only while the
/// next item is a known symbol or a parenthesised group made only of units, and across `^`
/// only while an integer exponent follows; anything else is left unconsumed.
pub fn parse_unit_prefix(s: &str) -> Result<Option<(Unit, usize)>, UnitError> {
    let mut c = Cursor::new(s);
    let start = c.pos;
    let Some(sym) = c.symbol() else {
        return Ok(None);
    };
    let mut u = unit_symbol(sym).ok_or_else(|| UnitError::unknown(start, sym))?;
    u = c.exponent_on(u, false)?;
    loop {
        let save = c.pos;
        c.skip_ws();
        let op_pos = c.pos;
        let div = match c.peek() {
            Some('*') | Some('·') => false,
            Some('.') if c.peek_nth(1).is_some_and(is_symbol_start) => false,
            Some('/') => true,
            _ => {
                c.pos = save;
                break;
            }
        };
        c.bump();
        c.skip_ws();
        let rhs = match c.peek() {
            Some('(') => {
                let mut sub = c.clone();
                match sub.primary() {
                    Ok(g) => {
                        c.pos = sub.pos;
                        Some(g)
                    }
                    Err(_) => None,
                }
            }
            Some(ch) if is_symbol_start(ch) => {
                let sym = c.symbol().unwrap_or("");
                unit_symbol(sym)
            }
            _ => None,
        };
        let Some(rhs) = rhs else {
            c.pos = save;
            break;
        };
        let rhs = c.exponent_on(rhs, false)?;
        u = combine(u, rhs, div, op_pos)?;
    }
    Ok(Some((u, c.pos)))
}

fn is_symbol_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == '%' || c == '°'
}

fn combine(a: Unit, b: Unit, div: bool, pos: usize) -> Result<Unit, UnitError> {
    let dim = if div {
        a.dim.checked_div(b.dim)
    } else {
        a.dim.checked_mul(b.dim)
    }
    .ok_or_else(|| UnitError::range(pos, "unit exponent out of range"))?;
    let factor = if div {
        a.factor / b.factor
    } else {
        a.factor * b.factor
    };
    check_factor(Unit::new(factor, dim), pos)
}

fn check_factor(u: Unit, pos: usize) -> Result<Unit, UnitError> {
    if u.factor.is_finite() && u.factor > 0.0 {
        Ok(u)
    } else {
        Err(UnitError::range(pos, "unit scale factor out of range"))
    }
}

const MAX_DEPTH: u32 = 32;
const MAX_EXPONENT: i32 = 127;

#[derive(Clone)]
struct Cursor<'a> {
    s: &'a str,
    pos: usize,
    depth: u32,
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Self {
        Cursor {
            s,
            pos: 0,
            depth: 0,
        }
    }

    fn rest(&self) -> &'a str {
        self.s.get(self.pos..).unwrap_or("")
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

    /// Lexes a symbol: `%`, `°`, or a letter/underscore followed by letters, ASCII digits
    /// and underscores.
    fn symbol(&mut self) -> Option<&'a str> {
        let start = self.pos;
        match self.peek()? {
            '%' | '°' => {
                self.bump();
            }
            c if c.is_alphabetic() || c == '_' => {
                while self
                    .peek()
                    .is_some_and(|c| c.is_alphabetic() || c.is_ascii_digit() || c == '_')
                {
                    self.bump();
                }
            }
            _ => return None,
        }
        self.s.get(start..self.pos)
    }

    fn digits(&mut self) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
        }
        self.s.get(start..self.pos).unwrap_or("")
    }

    /// unit := factor (op factor)*  (strict: everything must be a unit)
    fn product(&mut self) -> Result<Unit, UnitError> {
        let mut u = self.factor()?;
        loop {
            let save = self.pos;
            self.skip_ws();
            let op_pos = self.pos;
            let div = match self.peek() {
                Some('*') | Some('·') | Some('.') => false,
                Some('/') => true,
                _ => {
                    self.pos = save;
                    return Ok(u);
                }
            };
            self.bump();
            let rhs = self.factor()?;
            u = combine(u, rhs, div, op_pos)?;
        }
    }

    fn factor(&mut self) -> Result<Unit, UnitError> {
        let p = self.primary()?;
        self.exponent_on(p, true)
    }

    fn primary(&mut self) -> Result<Unit, UnitError> {
        self.skip_ws();
        let start = self.pos;
        match self.peek() {
            None => Err(UnitError::syntax(start, "unexpected end of unit")),
            Some('(') => {
                if self.depth >= MAX_DEPTH {
                    return Err(UnitError::syntax(start, "unit nested too deeply"));
                }
                self.bump();
                self.depth += 1;
                let u = self.product()?;
                self.depth -= 1;
                self.skip_ws();
                if self.peek() == Some(')') {
                    self.bump();
                    Ok(u)
                } else {
                    Err(UnitError::syntax(self.pos, "expected ')' in unit"))
                }
            }
            Some(c) if c.is_ascii_digit() => {
                let n = self.digits();
                if n == "1" {
                    Ok(Unit::ONE)
                } else {
                    Err(UnitError::syntax(
                        start,
                        format!("unexpected number '{n}' in unit (only '1' is allowed)"),
                    ))
                }
            }
            Some(c) if is_symbol_start(c) => {
                let sym = self.symbol().unwrap_or("");
                unit_symbol(sym).ok_or_else(|| UnitError::unknown(start, sym))
            }
            Some(c) => Err(UnitError::syntax(
                start,
                format!("unexpected '{c}' in unit"),
            )),
        }
    }

    /// Applies an optional exponent to `u`. In non-strict (chain) mode a `^` not followed by
    /// an integer is left unconsumed instead of being an error.
    fn exponent_on(&mut self, u: Unit, strict: bool) -> Result<Unit, UnitError> {
        let start = self.pos;
        let Some(e) = self.exponent(strict)? else {
            return Ok(u);
        };
        let dim = u
            .dim
            .checked_powi(e)
            .ok_or_else(|| UnitError::range(start, "unit exponent out of range"))?;
        check_factor(Unit::new(u.factor.powi(e), dim), start)
    }

    fn exponent(&mut self, strict: bool) -> Result<Option<i32>, UnitError> {
        let save = self.pos;
        // Superscripts directly after the symbol: m², s⁻¹.
        if let Some(c) = self.peek() {
            if c == '⁻' || c == '⁺' || superscript_digit(c).is_some() {
                let neg = c == '⁻';
                if c == '⁻' || c == '⁺' {
                    self.bump();
                }
                let mut v: i32 = 0;
                let mut any = false;
                while let Some(dg) = self.peek().and_then(superscript_digit) {
                    self.bump();
                    any = true;
                    v = v.saturating_mul(10).saturating_add(dg as i32);
                }
                if !any {
                    if strict {
                        return Err(UnitError::syntax(save, "expected exponent digits"));
                    }
                    self.pos = save;
                    return Ok(None);
                }
                if v > MAX_EXPONENT {
                    return Err(UnitError::range(save, "unit exponent out of range"));
                }
                return Ok(Some(if neg { -v } else { v }));
            }
        }
        self.skip_ws();
        if self.peek() != Some('^') {
            self.pos = save;
            return Ok(None);
        }
        let caret = self.pos;
        self.bump();
        self.skip_ws();
        let paren = self.peek() == Some('(');
        if paren {
            self.bump();
            self.skip_ws();
        }
        let neg = match self.peek() {
            Some('-') => {
                self.bump();
                true
            }
            Some('+') => {
                self.bump();
                false
            }
            _ => false,
        };
        let digits = self.digits();
        let mut ok = !digits.is_empty();
        if ok && paren {
            self.skip_ws();
            ok = self.peek() == Some(')');
            if ok {
                self.bump();
            }
        }
        if ok && !strict {
            // "m^2.5" or "m^2x" is not an integer exponent: leave the '^' alone.
            ok = !self
                .peek()
                .is_some_and(|c| c == '.' || c.is_alphanumeric() || c == '_');
        }
        if !ok {
            if strict {
                return Err(UnitError::syntax(
                    caret,
                    "expected an integer exponent after '^'",
                ));
            }
            self.pos = save;
            return Ok(None);
        }
        let v: i32 = match digits.parse::<i32>() {
            Ok(v) if v <= MAX_EXPONENT => v,
            _ => return Err(UnitError::range(caret, "unit exponent out of range")),
        };
        Ok(Some(if neg { -v } else { v }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    fn pu(s: &str) -> Unit {
        match parse_unit(s) {
            Ok(u) => u,
            Err(e) => panic!("parse_unit({s:?}) failed: {e}"),
        }
    }

    #[test]
    fn dim_display() {
        assert_eq!(Dim::ENERGY.to_string(), "kg·m²/s²");
        assert_eq!(format!("{:#}", Dim::ENERGY), "kg*m^2/s^2");
        assert_eq!(Dim::ENERGY.ascii(), "kg*m^2/s^2");
        assert_eq!(Dim::ONE.to_string(), "1");
        assert_eq!(Dim::FREQUENCY.to_string(), "1/s");
        assert_eq!(Dim::VELOCITY.to_string(), "m/s");
        assert_eq!(Dim::POWER.to_string(), "kg·m²/s³");
        assert_eq!(Dim::PRESSURE.to_string(), "kg/(m·s²)");
        assert_eq!(format!("{:#}", Dim::PRESSURE), "kg/(m*s^2)");
        assert_eq!(Dim::INERTIA.to_string(), "kg·m²");
        assert_eq!(Dim::VOLTAGE.to_string(), "kg·m²/(s³·A)");
        assert_eq!(Dim::new(0, 0, -12, 0, 0).to_string(), "1/s¹²");
        assert_eq!(Dim::TEMPERATURE.to_string(), "K");
    }

    #[test]
    fn dim_algebra() {
        assert_eq!(Dim::FORCE * Dim::LENGTH, Dim::ENERGY);
        assert_eq!(Dim::ENERGY / Dim::TIME, Dim::POWER);
        assert_eq!(Dim::LENGTH.powi(3), Dim::VOLUME);
        assert_eq!(Dim::TIME.recip(), Dim::FREQUENCY);
        assert_eq!(Dim::INERTIA.checked_root(2), None); // kg^1 is odd
        assert_eq!(
            Dim::new(2, 2, 0, 0, 0).checked_root(2),
            Some(d(1, 1, 0, 0, 0))
        );
        assert_eq!(Dim::INERTIA.checked_root(3), None);
        assert_eq!(
            Dim::new(2, 0, -4, 0, 0).checked_root(2),
            Some(Dim::ACCELERATION)
        );
        assert_eq!(
            Dim::new(100, 0, 0, 0, 0).checked_mul(Dim::new(100, 0, 0, 0, 0)),
            None
        );
        assert_eq!(Dim::new(100, 0, 0, 0, 0).checked_powi(2), None);
        assert_eq!(
            Dim::new(-100, 0, 0, 0, 0).checked_div(Dim::new(100, 0, 0, 0, 0)),
            None
        );
        // saturating operators never panic
        assert_eq!(
            (Dim::new(100, 0, 0, 0, 0) * Dim::new(100, 0, 0, 0, 0)).m,
            127
        );
        assert_eq!(Dim::new(100, 0, 0, 0, 0).powi(i32::MIN).m, -128);
        assert_eq!(Dim::ENERGY.derived_name(), Some("N·m"));
        assert_eq!(Dim::POWER.derived_name(), Some("W"));
        assert_eq!(Dim::VELOCITY.derived_name(), None);
    }

    #[test]
    fn simple_symbols() {
        assert!(close(pu("kW").factor, 1000.0));
        assert_eq!(pu("kW").dim, Dim::POWER);
        assert!(close(pu("rpm").factor, 2.0 * PI / 60.0));
        assert_eq!(pu("rpm").dim, Dim::FREQUENCY);
        assert!(close(pu("deg").factor, 0.017_453_292_519_943_295));
        assert_eq!(pu("deg").dim, Dim::ONE);
        assert_eq!(pu("rad"), Unit::ONE);
        assert_eq!(pu("1"), Unit::ONE);
        assert_eq!(pu("Hz"), Unit::new(1.0, Dim::FREQUENCY));
        assert!(close(pu("%").factor, 0.01));
        assert!(close(pu("hp").factor, 745.699_871_582_270_2));
        assert!(close(pu("psi").factor, 6_894.757_293_168_361));
        assert!(close(pu("bar").factor, 1e5));
        assert!(close(pu("lb").factor, 0.453_592_37));
        assert!(close(pu("t").factor, 1000.0));
        assert_eq!(pu("t").dim, Dim::MASS);
        assert!(close(pu("g").factor, 1e-3));
        assert!(close(pu("h").factor, 3600.0));
        assert!(close(pu("kph").factor, 1.0 / 3.6));
        assert!(close(pu("mph").factor, 0.447_04));
        assert_eq!(pu("V").dim, Dim::POWER / Dim::CURRENT);
        assert!(close(pu("kWh").factor, 3.6e6));
        for sym in known_unit_symbols() {
            let u = pu(sym);
            assert!(u.factor.is_finite() && u.factor > 0.0, "{sym}");
        }
    }

    #[test]
    fn compound_units() {
        assert_eq!(pu("kg*m^2"), Unit::new(1.0, Dim::INERTIA));
        assert_eq!(pu("kg·m²"), Unit::new(1.0, Dim::INERTIA));
        assert_eq!(pu("N*m"), Unit::new(1.0, Dim::ENERGY));
        assert_eq!(pu("N.m"), Unit::new(1.0, Dim::ENERGY));
        assert_eq!(pu("Nm"), Unit::new(1.0, Dim::ENERGY));
        assert_eq!(pu("m/s^2"), Unit::new(1.0, Dim::ACCELERATION));
        assert_eq!(pu("m*s^-2"), Unit::new(1.0, Dim::ACCELERATION));
        assert_eq!(pu("m*s^(-2)"), Unit::new(1.0, Dim::ACCELERATION));
        assert_eq!(pu("m*s⁻²"), Unit::new(1.0, Dim::ACCELERATION));
        assert_eq!(pu("kg/m^3"), Unit::new(1.0, Dim::MASS / Dim::VOLUME));
        assert_eq!(pu("N/(m/s)^2"), Unit::new(1.0, Dim::new(-1, 1, 0, 0, 0)));
        assert_eq!(pu("rad/s"), Unit::new(1.0, Dim::FREQUENCY));
        assert_eq!(pu("1/s"), Unit::new(1.0, Dim::FREQUENCY));
        assert_eq!(pu("N*m*s/rad"), Unit::new(1.0, Dim::new(2, 1, -1, 0, 0)));
        assert_eq!(
            pu(" kg / m / s "),
            Unit::new(1.0, Dim::new(-1, 1, -1, 0, 0))
        );
        let kmh = pu("km/h");
        assert!(close(kmh.factor, 1000.0 / 3600.0));
        assert_eq!(kmh.dim, Dim::VELOCITY);
        let kmh2 = pu("(km/h)^2");
        assert!(close(kmh2.factor, (1000.0f64 / 3600.0).powi(2)));
        assert_eq!(kmh2.dim, Dim::VELOCITY.powi(2));
        // every declared SI unit of the block library parses with factor 1
        for (decl, dim) in [
            ("rad/s", Dim::FREQUENCY),
            ("W", Dim::POWER),
            ("N*m", Dim::ENERGY),
            ("kg*m^2", Dim::INERTIA),
            ("m/s", Dim::VELOCITY),
            ("m", Dim::LENGTH),
            ("s", Dim::TIME),
            ("Hz", Dim::FREQUENCY),
            ("N", Dim::FORCE),
            ("kg", Dim::MASS),
            ("1", Dim::ONE),
            ("rad", Dim::ONE),
            ("N*m*s/rad", Dim::new(2, 1, -1, 0, 0)),
            ("N/(m/s)^2", Dim::new(-1, 1, 0, 0, 0)),
        ] {
            assert_eq!(pu(decl), Unit::new(1.0, dim), "{decl}");
        }
        // Display round-trips through the parser
        for dd in [
            Dim::ENERGY,
            Dim::PRESSURE,
            Dim::VOLTAGE,
            Dim::FREQUENCY,
            Dim::ONE,
        ] {
            assert_eq!(pu(&dd.to_string()).dim, dd);
            assert_eq!(pu(&dd.ascii()).dim, dd);
        }
    }

    #[test]
    fn unit_errors() {
        let e = parse_unit("rpn").unwrap_err();
        assert_eq!(e.to_string(), "unknown unit 'rpn' (did you mean 'rpm'?)");
        assert_eq!(e.pos, 0);
        let e = parse_unit("kg*mm^2/sec").unwrap_err();
        assert_eq!(e.pos, 8);
        assert!(matches!(
            e.kind,
            UnitErrorKind::UnknownSymbol { ref symbol, .. } if symbol == "sec"
        ));
        assert_eq!(
            parse_unit("KW").unwrap_err().to_string(),
            "unknown unit 'KW' (did you mean 'kW'?)"
        );
        assert_eq!(
            parse_unit("furlong").unwrap_err().to_string(),
            "unknown unit 'furlong'"
        );
        for bad in [
            "",
            "  ",
            "kg*",
            "/s",
            "(m/s",
            "m/s)",
            "m^",
            "m^x",
            "m^2.5",
            "2",
            "1.5",
            "m^999",
            "km^200",
            "m^127*m",
            "((((((((((((((((((((((((((((((((((m)))))))))))))))))))))))))))))))))",
            "kg m",
            "m^(2",
            "*",
            "^2",
            "m²²²²",
        ] {
            assert!(parse_unit(bad).is_err(), "{bad:?} should fail");
        }
    }

    #[test]
    fn prefix_chain() {
        let p = |s: &str| parse_unit_prefix(s).unwrap();
        let (u, n) = p("km/h").unwrap();
        assert_eq!((u.dim, n), (Dim::VELOCITY, 4));
        let (u, n) = p("kg*m^2 + 1").unwrap();
        assert_eq!((u.dim, n), (Dim::INERTIA, 6));
        let (u, n) = p("rpm * 2").unwrap();
        assert_eq!((u.dim, n), (Dim::FREQUENCY, 3));
        let (u, n) = p("m/x").unwrap();
        assert_eq!((u.dim, n), (Dim::LENGTH, 1));
        let (u, n) = p("m^x").unwrap();
        assert_eq!((u.dim, n), (Dim::LENGTH, 1));
        let (u, n) = p("m^2.5").unwrap();
        assert_eq!((u.dim, n), (Dim::LENGTH, 1));
        let (u, n) = p("N/(m/s)^2)").unwrap();
        assert_eq!((u.dim, n), (Dim::new(-1, 1, 0, 0, 0), 9));
        let (u, n) = p("N/(m+s)").unwrap();
        assert_eq!((u.dim, n), (Dim::FORCE, 1));
        let (u, n) = p("N.m").unwrap();
        assert_eq!((u.dim, n), (Dim::ENERGY, 3));
        let (u, n) = p("N.5").unwrap();
        assert_eq!((u.dim, n), (Dim::FORCE, 1));
        assert_eq!(p("2 m"), None);
        assert_eq!(p(""), None);
        assert!(parse_unit_prefix("rpn").is_err());
        assert!(parse_unit_prefix("m^1000").is_err());
    }
}
