//! The metric language's syntax: text to a tree of [`Node`]s, every error at a byte
//! position with what was expected.
//!
//! ```text
//! expr    := or
//! or      := and ('or' and)*
//! and     := not ('and' not)*
//! not     := 'not' not | cmp
//! cmp     := sum (('<' | '<=' | '>' | '>=' | '==' | '!=') sum)?
//! sum     := product (('+' | '-') product)*
//! product := unary (('*' | '/') unary)*
//! unary   := ('-' | '+' | 'not') unary | power
//! power   := primary ('^' unary)?
//! primary := number unit? | "quantity" | name | name '(' args ')' | '(' expr ')'
//! ```
//!
//! A unit follows a number directly (`1.07 s`, `9.80665 m/s^2`, `2 deg`), as in parameter
//! expressions; a quoted text is a quantity (`"500 ms"`). A name with a dot is a signal
//! (`car.r`); other names are resolved later ([`super::Metric::resolve`]).

use drivelink_core::units::{self, Dim};
use drivelink_core::{expr, suggest, EventTag};

/// A syntax error at byte `pos` of the expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SyntaxError {
    pub pos: usize,
    pub message: String,
}

/// A node of an expression, with the byte span of its text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

/// What a node is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// A number in SI units, with the dimension of its unit (`None`: a bare number).
    Num(f64, Option<Dim>),
    /// A name without a dot, before resolution.
    Name(String),
    /// A logged variable, `block.var`.
    Signal(String),
    /// The time of each sample (a signal).
    Time,
    /// The time the run ended.
    EndTime,
    /// How the run ended (text; a whole metric only).
    Status,
    /// A model parameter's value for the run.
    Param(String),
    /// The value of an earlier metric of the list (its index).
    Metric(usize),
    Neg(Box<Node>),
    Not(Box<Node>),
    Bin(Op, Box<Node>, Box<Node>),
    Call(Func, Vec<Node>),
    EventTime {
        block: String,
        kind: EventTag,
        n: usize,
    },
    Energy(String),
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

/// A function of the language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Func {
    Max,
    Min,
    Mean,
    Integral,
    Final,
    At,
    FirstTime,
    Count,
    FirstPeak,
    TimeOfMax,
    TimeOfMin,
    Slope,
    Abs,
    Sqrt,
    Exp,
    Ln,
    Sin,
    Cos,
    Tan,
    Atan,
    Atan2,
    Hypot,
    Sign,
    If,
}

/// Name, function, accepted argument counts, the form shown in messages.
pub(crate) const FUNCS: &[(&str, Func, &[usize], &str)] = &[
    ("max", Func::Max, &[1, 3], "max(SIGNAL [, T0, T1])"),
    ("min", Func::Min, &[1, 3], "min(SIGNAL [, T0, T1])"),
    ("mean", Func::Mean, &[1, 3], "mean(SIGNAL [, T0, T1])"),
    (
        "integral",
        Func::Integral,
        &[1, 3],
        "integral(SIGNAL [, T0, T1])",
    ),
    ("final", Func::Final, &[1], "final(SIGNAL)"),
    ("at", Func::At, &[2], "at(SIGNAL, TIME)"),
    (
        "first_time",
        Func::FirstTime,
        &[1, 3],
        "first_time(CONDITION [, T0, T1])",
    ),
    ("count", Func::Count, &[1, 3], "count(CONDITION [, T0, T1])"),
    (
        "first_peak",
        Func::FirstPeak,
        &[1, 3],
        "first_peak(SIGNAL [, T0, T1])",
    ),
    (
        "time_of_max",
        Func::TimeOfMax,
        &[1, 3],
        "time_of_max(SIGNAL [, T0, T1])",
    ),
    (
        "time_of_min",
        Func::TimeOfMin,
        &[1, 3],
        "time_of_min(SIGNAL [, T0, T1])",
    ),
    ("slope", Func::Slope, &[2, 4], "slope(Y, X [, X0, X1])"),
    ("abs", Func::Abs, &[1], "abs(X)"),
    ("sqrt", Func::Sqrt, &[1], "sqrt(X)"),
    ("exp", Func::Exp, &[1], "exp(X)"),
    ("ln", Func::Ln, &[1], "ln(X)"),
    ("sin", Func::Sin, &[1], "sin(X)"),
    ("cos", Func::Cos, &[1], "cos(X)"),
    ("tan", Func::Tan, &[1], "tan(X)"),
    ("atan", Func::Atan, &[1], "atan(X)"),
    ("atan2", Func::Atan2, &[2], "atan2(Y, X)"),
    ("hypot", Func::Hypot, &[2], "hypot(X, Y)"),
    ("sign", Func::Sign, &[1], "sign(X)"),
    ("if", Func::If, &[3], "if(CONDITION, THEN, ELSE)"),
];

/// Functions that take their arguments as names, not expressions.
const NAMED: &[(&str, &str)] = &[
    ("event_time", "event_time(BLOCK, KIND, N)"),
    ("energy", "energy(ELEMENT)"),
];

/// Event kinds `event_time` accepts.
pub(crate) const KINDS: &[&str] = &[
    "lock",
    "unlock",
    "free",
    "engage",
    "zero_crossing",
    "time_event",
    "stop",
    "impact",
];

impl Func {
    /// Whether the function reduces a signal over the run (or a window) to one number.
    pub fn is_aggregation(self) -> bool {
        !matches!(
            self,
            Func::Abs
                | Func::Sqrt
                | Func::Exp
                | Func::Ln
                | Func::Sin
                | Func::Cos
                | Func::Tan
                | Func::Atan
                | Func::Atan2
                | Func::Hypot
                | Func::Sign
                | Func::If
        )
    }

    /// The function's name as written.
    pub fn name(self) -> &'static str {
        FUNCS.iter().find(|f| f.1 == self).map_or("?", |f| f.0)
    }
}

/// Every function name (for "did you mean" and the list of what is known).
pub(crate) fn function_names() -> impl Iterator<Item = &'static str> {
    FUNCS
        .iter()
        .map(|f| f.0)
        .chain(NAMED.iter().map(|f| f.0))
        .chain(["end_time", "status"])
}

const MAX_DEPTH: u32 = 100;

/// Parse a whole expression.
pub(crate) fn parse(src: &str) -> Result<Node, SyntaxError> {
    let mut p = Parser {
        src,
        pos: 0,
        depth: 0,
    };
    p.ws();
    if p.peek().is_none() {
        return Err(p.err(0, "empty expression; expected for example max(block.var)"));
    }
    let n = p.or()?;
    p.ws();
    match p.peek() {
        None => Ok(n),
        Some(')') => Err(p.err(p.pos, "unmatched ')'")),
        Some(c) => Err(p.err(
            p.pos,
            format!("unexpected '{c}'; expected an operator (+ - * / ^ < <= > >= == != and or) or the end"),
        )),
    }
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    depth: u32,
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl<'a> Parser<'a> {
    fn err(&self, pos: usize, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            pos,
            message: message.into(),
        }
    }
    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }
    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }
    fn ws(&mut self) {
        let r = self.rest();
        self.pos += r.len() - r.trim_start().len();
    }
    /// Consume `s` (after whitespace) if it comes next.
    fn eat(&mut self, s: &str) -> bool {
        self.ws();
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }
    /// Consume the keyword `k` (a whole word) if it comes next.
    fn keyword(&mut self, k: &str) -> bool {
        self.ws();
        let r = self.rest();
        if r.starts_with(k) && !r[k.len()..].starts_with(|c: char| is_name_char(c) || c == '.') {
            self.pos += k.len();
            true
        } else {
            false
        }
    }
    fn node(&self, kind: Kind, start: usize) -> Node {
        Node {
            kind,
            start,
            end: self.pos,
        }
    }
    fn bin(&self, op: Op, l: Node, r: Node) -> Node {
        let start = l.start;
        self.node(Kind::Bin(op, Box::new(l), Box::new(r)), start)
    }
    fn deeper(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err(self.pos, format!("nested deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn or(&mut self) -> Result<Node, SyntaxError> {
        let mut l = self.and()?;
        while self.keyword("or") {
            let r = self.and()?;
            l = self.bin(Op::Or, l, r);
        }
        Ok(l)
    }
    fn and(&mut self) -> Result<Node, SyntaxError> {
        let mut l = self.not()?;
        while self.keyword("and") {
            let r = self.not()?;
            l = self.bin(Op::And, l, r);
        }
        Ok(l)
    }
    fn not(&mut self) -> Result<Node, SyntaxError> {
        self.ws();
        let start = self.pos;
        if self.keyword("not") {
            self.deeper()?;
            let x = self.not()?;
            self.depth -= 1;
            return Ok(self.node(Kind::Not(Box::new(x)), start));
        }
        self.cmp()
    }
    fn cmp(&mut self) -> Result<Node, SyntaxError> {
        let l = self.sum()?;
        self.ws();
        let op = [
            ("<=", Op::Le),
            (">=", Op::Ge),
            ("==", Op::Eq),
            ("!=", Op::Ne),
            ("<", Op::Lt),
            (">", Op::Gt),
        ]
        .into_iter()
        .find(|(s, _)| self.rest().starts_with(s));
        let Some((s, op)) = op else {
            if self.rest().starts_with('=') {
                return Err(self.err(
                    self.pos,
                    "unexpected '='; comparisons are <, <=, >, >=, == and !=",
                ));
            }
            return Ok(l);
        };
        self.pos += s.len();
        let r = self.sum()?;
        self.ws();
        if ["<", ">", "=="].iter().any(|c| self.rest().starts_with(c)) {
            return Err(self.err(
                self.pos,
                "comparisons do not chain (a < b < c); write a < b and b < c",
            ));
        }
        Ok(self.bin(op, l, r))
    }
    fn sum(&mut self) -> Result<Node, SyntaxError> {
        let mut l = self.product()?;
        loop {
            let op = if self.eat("+") {
                Op::Add
            } else if self.eat("-") {
                Op::Sub
            } else {
                return Ok(l);
            };
            let r = self.product()?;
            l = self.bin(op, l, r);
        }
    }
    fn product(&mut self) -> Result<Node, SyntaxError> {
        let mut l = self.unary()?;
        loop {
            let op = if self.eat("*") {
                Op::Mul
            } else if self.eat("/") {
                Op::Div
            } else {
                return Ok(l);
            };
            let r = self.unary()?;
            l = self.bin(op, l, r);
        }
    }
    fn unary(&mut self) -> Result<Node, SyntaxError> {
        self.ws();
        let start = self.pos;
        if self.keyword("not") {
            self.deeper()?;
            let x = self.unary()?;
            self.depth -= 1;
            return Ok(self.node(Kind::Not(Box::new(x)), start));
        }
        for (s, neg) in [("-", true), ("+", false)] {
            if self.eat(s) {
                self.deeper()?;
                let x = self.unary()?;
                self.depth -= 1;
                return Ok(if neg {
                    self.node(Kind::Neg(Box::new(x)), start)
                } else {
                    x
                });
            }
        }
        let base = self.primary()?;
        if self.eat("^") {
            self.deeper()?;
            let e = self.unary()?;
            self.depth -= 1;
            return Ok(self.bin(Op::Pow, base, e));
        }
        Ok(base)
    }

    fn primary(&mut self) -> Result<Node, SyntaxError> {
        self.ws();
        let start = self.pos;
        let Some(c) = self.peek() else {
            return Err(self.err(start, "unexpected end; expected a number, a name or '('"));
        };
        if c == '(' {
            self.pos += 1;
            self.deeper()?;
            let x = self.or()?;
            self.depth -= 1;
            if !self.eat(")") {
                return Err(self.err(self.pos, "expected ')'"));
            }
            return Ok(Node {
                start,
                end: self.pos,
                ..x
            });
        }
        if c.is_ascii_digit() || c == '.' {
            return self.number();
        }
        if c == '"' || c == '\'' {
            return self.quoted(c);
        }
        if is_name_start(c) {
            return self.name();
        }
        Err(self.err(
            start,
            format!("unexpected '{c}'; expected a number, a name or '('"),
        ))
    }

    fn number(&mut self) -> Result<Node, SyntaxError> {
        let start = self.pos;
        let b = self.src.as_bytes();
        let mut i = self.pos;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            let mut j = i + 1;
            if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                j += 1;
            }
            if j < b.len() && b[j].is_ascii_digit() {
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                i = j;
            }
        }
        let text = &self.src[start..i];
        let value: f64 = text
            .parse()
            .map_err(|_| self.err(start, format!("'{text}' is not a number")))?;
        self.pos = i;
        // A unit directly after the number (not a keyword: `2 and x`).
        let save = self.pos;
        self.ws();
        let at = self.pos;
        let word: String = self
            .rest()
            .chars()
            .take_while(|c| is_name_char(*c))
            .collect();
        let unit_start = self
            .peek()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '%' || c == '°');
        if !unit_start || ["and", "or", "not"].contains(&word.as_str()) {
            self.pos = save;
            return Ok(self.node(Kind::Num(value, None), start));
        }
        match units::parse_unit_prefix(self.rest()) {
            Ok(Some((u, n))) => {
                self.pos = at + n;
                Ok(self.node(Kind::Num(value * u.factor, Some(u.dim)), start))
            }
            Ok(None) => {
                self.pos = save;
                Ok(self.node(Kind::Num(value, None), start))
            }
            Err(e) => Err(self.err(
                at + e.pos,
                format!(
                    "{}; a name after a number is its unit (write 2*x for a product)",
                    e.kind
                ),
            )),
        }
    }

    fn quoted(&mut self, q: char) -> Result<Node, SyntaxError> {
        let start = self.pos;
        let body = &self.src[start + 1..];
        let Some(len) = body.find(q) else {
            return Err(self.err(start, format!("missing closing {q}")));
        };
        let text = &body[..len];
        self.pos = start + 1 + len + 1;
        let v = expr::eval(text, &|_| None).map_err(|e| {
            self.err(
                start,
                format!("'{text}': {e}; expected a quantity such as \"500 ms\""),
            )
        })?;
        Ok(self.node(Kind::Num(v.value, v.dim), start))
    }

    fn name(&mut self) -> Result<Node, SyntaxError> {
        let start = self.pos;
        let r = self.rest();
        let mut len = r.find(|c: char| !is_name_char(c)).unwrap_or(r.len());
        // Dotted segments: `car.r`, `gearbox.clutch_a.w`.
        while r[len..].starts_with('.') && r[len + 1..].starts_with(is_name_start) {
            let seg = &r[len + 1..];
            len += 1 + seg.find(|c: char| !is_name_char(c)).unwrap_or(seg.len());
        }
        let name = &r[..len];
        self.pos += len;
        let after = self.pos;
        if self.eat("(") {
            return self.call(name, start);
        }
        self.pos = after;
        let kind = match name {
            "time" => Kind::Time,
            "end_time" => Kind::EndTime,
            "status" => Kind::Status,
            "and" | "or" | "not" => {
                return Err(self.err(
                    start,
                    format!("'{name}' needs a condition on each side (a < b {name} c > d)"),
                ))
            }
            _ if name.contains('.') => Kind::Signal(name.to_string()),
            _ => Kind::Name(name.to_string()),
        };
        Ok(self.node(kind, start))
    }

    fn call(&mut self, name: &str, start: usize) -> Result<Node, SyntaxError> {
        if let Some((_, form)) = NAMED.iter().find(|f| f.0 == name) {
            return self.named_call(name, form, start);
        }
        if name == "end_time" || name == "status" {
            return Err(self.err(start, format!("{name} takes no arguments")));
        }
        let Some(&(_, func, arities, form)) = FUNCS.iter().find(|f| f.0 == name) else {
            let forms: Vec<&str> = FUNCS
                .iter()
                .map(|f| f.3)
                .chain(NAMED.iter().map(|f| f.1))
                .collect();
            return Err(self.err(
                start,
                format!(
                    "unknown metric '{name}'{}; expected one of: end_time, status, {}",
                    suggest::hint(name, function_names()),
                    forms.join(", ")
                ),
            ));
        };
        let mut args = Vec::new();
        self.deeper()?;
        if !self.eat(")") {
            loop {
                args.push(self.or()?);
                if self.eat(",") {
                    continue;
                }
                if self.eat(")") {
                    break;
                }
                self.ws();
                return Err(self.err(self.pos, format!("expected ',' or ')' in {form}")));
            }
        }
        self.depth -= 1;
        if !arities.contains(&args.len()) {
            let counts: Vec<String> = arities.iter().map(|n| n.to_string()).collect();
            return Err(self.err(
                start,
                format!(
                    "{name} takes {} arguments, got {}: expected {form}",
                    counts.join(" or "),
                    args.len()
                ),
            ));
        }
        Ok(self.node(Kind::Call(func, args), start))
    }

    /// `event_time(BLOCK, KIND, N)` and `energy(ELEMENT)`: names as written.
    fn named_call(&mut self, name: &str, form: &str, start: usize) -> Result<Node, SyntaxError> {
        let open = self.pos;
        let Some(len) = self.rest().find(')') else {
            return Err(self.err(open, format!("missing ')': expected {form}")));
        };
        let inner = &self.src[open..open + len];
        self.pos = open + len + 1;
        let args: Vec<&str> = inner.split(',').map(str::trim).collect();
        let want = if name == "energy" { 1 } else { 3 };
        if args.len() != want || args.iter().any(|a| a.is_empty()) {
            return Err(self.err(
                start,
                format!(
                    "expected {form} ({want} argument{})",
                    if want == 1 { "" } else { "s" }
                ),
            ));
        }
        if name == "energy" {
            return Ok(self.node(Kind::Energy(args[0].to_string()), start));
        }
        let kind = EventTag::parse(args[1]).ok_or_else(|| {
            self.err(
                open,
                format!(
                    "unknown event kind '{}'{}; kinds are: {}",
                    args[1],
                    suggest::hint(args[1], KINDS.iter().copied()),
                    KINDS.join(", ")
                ),
            )
        })?;
        let n = match args[2].parse::<usize>() {
            Ok(n) if n >= 1 => n,
            _ => {
                return Err(self.err(
                    open,
                    format!(
                        "event number '{}': expected a whole number >= 1 (1 = first event)",
                        args[2]
                    ),
                ))
            }
        };
        Ok(self.node(
            Kind::EventTime {
                block: args[0].to_string(),
                kind,
                n,
            },
            start,
        ))
    }
}
