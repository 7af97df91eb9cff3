//! Results of a run: time vector, logged variables, event log, solver statistics, CSV I/O.
//!
//! Every event instant appears twice in the time vector: the left value (before the event
//! handler ran) and the right value (after it).

use std::io::{self, BufRead, Write};

use crate::scope::ScopeSpec;

/// Counters of one run: the solver's work and the model's evaluations.
///
/// `rhs_evals` counts derivative evaluations requested by the solver; `guard_evals` guard
/// evaluations (step ends, interior samples, event location); `output_points` points
/// written to the result; `model_evals` full evaluations of the model (signals, network)
/// whatever asked for them, after the step-end cache. Snapshotted in tests so regressions
/// show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunStats {
    /// Accepted steps.
    pub steps: u64,
    /// Rejected steps.
    pub rejected_steps: u64,
    /// Derivative evaluations asked for by the solver.
    pub rhs_evals: u64,
    /// Guard evaluations asked for by the solver.
    pub guard_evals: u64,
    /// Output points recorded.
    pub output_points: u64,
    /// Event instants handled.
    pub events: u64,
    /// Full model evaluations (signals and network), after the step-end cache.
    pub model_evals: u64,
    /// Jacobian evaluations (implicit methods).
    pub jacobian_evals: u64,
    /// LU factorisations (implicit methods).
    pub lu_decompositions: u64,
    /// The part of `rhs_evals` spent on finite-difference Jacobians.
    pub jacobian_rhs_evals: u64,
    /// Simplified-Newton iterations (implicit methods).
    pub newton_iterations: u64,
}

/// A switch of the integration method during a run (`"auto"`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MethodSwitch {
    /// When, s.
    pub time: f64,
    /// Method used before.
    pub from: String,
    /// Method used after.
    pub to: String,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Completed,
    Stopped,
    Failed,
}

impl RunStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Stopped => "stopped",
            RunStatus::Failed => "failed",
        }
    }
}

/// The kind of a logged event (`events.csv` column `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventTag {
    /// A friction element locked (slip reached zero and the holding torque fits).
    Lock,
    /// A locked friction element broke away and slides.
    Unlock,
    /// A friction element's normal force went to zero.
    Free,
    /// A free friction element got a normal force and slides.
    Engage,
    /// A signal block changed mode at a located zero crossing.
    ZeroCrossing,
    /// A time event (step time, breakpoint, sample hit).
    TimeEvent,
    /// The run was stopped by a block.
    Stop,
    /// A mechanical projection at a mode change dissipated energy (velocity jump).
    Impact,
    /// A gear change: a shift requested, a dog engaged after synchronisation, or an
    /// engagement demand blocked by slip.
    Shift,
    /// An engine stalled (its speed fell below the stall speed).
    Stall,
    /// A wheel's suspension reached the ground (located zero of its compression).
    Touchdown,
    /// A wheel left the ground (its compression fell below zero).
    Liftoff,
}

impl EventTag {
    pub fn as_str(&self) -> &'static str {
        match self {
            EventTag::Lock => "lock",
            EventTag::Unlock => "unlock",
            EventTag::Free => "free",
            EventTag::Engage => "engage",
            EventTag::ZeroCrossing => "zero_crossing",
            EventTag::TimeEvent => "time_event",
            EventTag::Stop => "stop",
            EventTag::Impact => "impact",
            EventTag::Shift => "shift",
            EventTag::Stall => "stall",
            EventTag::Touchdown => "touchdown",
            EventTag::Liftoff => "liftoff",
        }
    }
    pub fn parse(s: &str) -> Option<EventTag> {
        Some(match s {
            "lock" => EventTag::Lock,
            "unlock" => EventTag::Unlock,
            "free" => EventTag::Free,
            "engage" => EventTag::Engage,
            "zero_crossing" => EventTag::ZeroCrossing,
            "time_event" => EventTag::TimeEvent,
            "stop" => EventTag::Stop,
            "impact" => EventTag::Impact,
            "shift" => EventTag::Shift,
            "stall" => EventTag::Stall,
            "touchdown" => EventTag::Touchdown,
            "liftoff" => EventTag::Liftoff,
            _ => return None,
        })
    }
}

/// One row of the event log.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRecord {
    pub time: f64,
    /// Block path (`clutch1`, `gearbox.clutch_a`).
    pub block: String,
    pub kind: EventTag,
    /// Free text (`"w_rel crossed 0, holding torque 12.3 N·m <= 30 N·m"`).
    pub detail: String,
}

/// Result of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct SimResult {
    pub model: String,
    pub status: RunStatus,
    pub end_time: f64,
    /// Human-readable reason the run ended (error message when failed).
    pub message: String,
    pub time: Vec<f64>,
    /// Logged variable names, in column order.
    pub names: Vec<String>,
    /// One vector per name, each as long as `time`.
    pub columns: Vec<Vec<f64>>,
    pub events: Vec<EventRecord>,
    pub stats: RunStats,
    /// Switches of the integration method (`"auto"`), in time order.
    pub method_switches: Vec<MethodSwitch>,
    pub wall_time_s: f64,
    /// Scopes stored with the model, for the plots crate.
    pub scopes: Vec<ScopeSpec>,
    /// The SI unit of each column (`"rad/s"`, `"N*m"`; `None` when it has none), or
    /// empty when they are not known (a result read back from a CSV file).
    pub units: Vec<Option<String>>,
}

impl SimResult {
    /// An empty result with the given column names.
    pub fn new(model: impl Into<String>, names: Vec<String>) -> Self {
        let columns = vec![Vec::new(); names.len()];
        SimResult {
            model: model.into(),
            status: RunStatus::Completed,
            end_time: 0.0,
            message: String::new(),
            time: Vec::new(),
            names,
            columns,
            events: Vec::new(),
            stats: RunStats::default(),
            method_switches: Vec::new(),
            wall_time_s: 0.0,
            scopes: Vec::new(),
            units: Vec::new(),
        }
    }

    /// Index of a logged variable.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The samples of a logged variable.
    pub fn get(&self, name: &str) -> Option<&[f64]> {
        self.index_of(name).map(|i| self.columns[i].as_slice())
    }

    /// Linear interpolation of a variable at time `t` (the right value at an event instant).
    pub fn value_at(&self, name: &str, t: f64) -> Option<f64> {
        let y = self.get(name)?;
        if self.time.is_empty() {
            return None;
        }
        let k = self.time.partition_point(|&ti| ti <= t);
        if k == 0 {
            return Some(y[0]);
        }
        if k >= self.time.len() {
            return Some(y[y.len() - 1]);
        }
        let (t0, t1) = (self.time[k - 1], self.time[k]);
        if t1 <= t0 {
            return Some(y[k - 1]);
        }
        let s = (t - t0) / (t1 - t0);
        Some(y[k - 1] + s * (y[k] - y[k - 1]))
    }

    /// The last sample of a variable.
    pub fn last(&self, name: &str) -> Option<f64> {
        self.get(name).and_then(|y| y.last().copied())
    }

    /// Events of one kind from one block.
    pub fn events_of<'a>(
        &'a self,
        block: &'a str,
        kind: EventTag,
    ) -> impl Iterator<Item = &'a EventRecord> + 'a {
        self.events
            .iter()
            .filter(move |e| e.block == block && e.kind == kind)
    }

    /// Make room for `rows` more rows without reallocating (a run reserves its output grid).
    pub fn reserve_rows(&mut self, rows: usize) {
        self.time.reserve(rows);
        for c in &mut self.columns {
            c.reserve(rows);
        }
    }

    /// Append a row (time + one value per column).
    pub fn push_row(&mut self, t: f64, values: &[f64]) {
        self.time.push(t);
        for (c, v) in self.columns.iter_mut().zip(values) {
            c.push(*v);
        }
    }

    /// `results.csv`: `time` then one column per logged variable (each number as [`Num`]
    /// writes it).
    pub fn write_csv<W: Write>(&self, w: W) -> io::Result<()> {
        let mut w = io::BufWriter::new(w);
        write!(w, "time")?;
        for n in &self.names {
            write!(w, ",{n}")?;
        }
        writeln!(w)?;
        // One line at a time into a reused buffer: the numbers are laid out by
        // `Num::push_to`, not through the formatting machinery (half of a full-car run's
        // instructions went to formatting its table).
        let mut line = Vec::with_capacity(24 * (self.columns.len() + 1));
        let mut digits = zmij::Buffer::new();
        for (k, t) in self.time.iter().enumerate() {
            line.clear();
            Num(*t).push_to(&mut line, &mut digits);
            for c in &self.columns {
                line.push(b',');
                Num(c[k]).push_to(&mut line, &mut digits);
            }
            line.push(b'\n');
            w.write_all(&line)?;
        }
        w.flush()
    }

    /// `events.csv`: `time,block,kind,detail`.
    pub fn write_events_csv<W: Write>(&self, w: W) -> io::Result<()> {
        let mut w = io::BufWriter::new(w);
        writeln!(w, "time,block,kind,detail")?;
        for e in &self.events {
            writeln!(
                w,
                "{},{},{},{}",
                e.time,
                e.block,
                e.kind.as_str(),
                csv_quote(&e.detail)
            )?;
        }
        w.flush()
    }

    /// `summary.json`; with the columns' SI units under `units` (by column name, the
    /// columns that have one) when they are known.
    pub fn summary_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "model": self.model,
            "status": self.status.as_str(),
            "end_time": self.end_time,
            "message": self.message,
            "stats": self.stats,
            "method_switches": self.method_switches,
            "wall_time_s": self.wall_time_s,
        });
        if !self.units.is_empty() {
            let units: serde_json::Map<String, serde_json::Value> = self
                .names
                .iter()
                .zip(&self.units)
                .filter_map(|(n, u)| Some((n.clone(), serde_json::Value::from(u.clone()?))))
                .collect();
            v["units"] = serde_json::Value::Object(units);
        }
        v
    }

    /// Read a `results.csv` written by [`SimResult::write_csv`] (for re-plotting).
    pub fn read_csv<R: BufRead>(r: R, model: &str) -> Result<SimResult, CsvError> {
        let mut lines = r.lines();
        let header = match lines.next() {
            Some(l) => l.map_err(|e| CsvError {
                line: 1,
                message: e.to_string(),
            })?,
            None => {
                return Err(CsvError {
                    line: 1,
                    message: "empty file".into(),
                })
            }
        };
        let mut cols = header.trim_end().split(',');
        if cols.next() != Some("time") {
            return Err(CsvError {
                line: 1,
                message: "first column must be `time`".into(),
            });
        }
        let names: Vec<String> = cols.map(str::to_string).collect();
        let mut res = SimResult::new(model, names);
        let mut row = vec![0.0; res.names.len()];
        for (i, line) in lines.enumerate() {
            let lineno = i + 2;
            let line = line.map_err(|e| CsvError {
                line: lineno,
                message: e.to_string(),
            })?;
            if line.trim().is_empty() {
                continue;
            }
            let mut it = line.trim_end().split(',');
            let t = parse_cell(it.next(), lineno, "time")?;
            for (j, slot) in row.iter_mut().enumerate() {
                *slot = parse_cell(it.next(), lineno, &res.names[j])?;
            }
            res.push_row(t, &row);
        }
        res.end_time = res.time.last().copied().unwrap_or(0.0);
        Ok(res)
    }
}

fn parse_cell(cell: Option<&str>, line: usize, col: &str) -> Result<f64, CsvError> {
    let cell = cell.ok_or_else(|| CsvError {
        line,
        message: format!("missing column `{col}`"),
    })?;
    cell.trim().parse::<f64>().map_err(|_| CsvError {
        line,
        message: format!("column `{col}`: `{cell}` is not a number"),
    })
}

fn csv_quote(s: &str) -> String {
    if s.contains(',') || s.contains('"') || s.contains('\n') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A malformed results CSV.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("results CSV line {line}: {message}")]
pub struct CsvError {
    pub line: usize,
    pub message: String,
}

/// A number as the CSV files write it: the shortest text that reads back to the same
/// `f64`, with an exponent outside `1e-5 ≤ |v| < 1e16` (`1e-300`, never 300 digits), and
/// zero (also −0, a force that is zero on the negative side) as `0`. The text is Rust's
/// `{}` inside that range and `{:e}` outside it, character for character.
pub struct Num(pub f64);

impl Num {
    /// Append the text to `out` (`digits`: scratch for the shortest digits, reused).
    pub fn push_to(&self, out: &mut Vec<u8>, digits: &mut zmij::Buffer) {
        let v = self.0;
        if v == 0.0 {
            out.push(b'0');
            return;
        }
        if !v.is_finite() {
            out.extend_from_slice(if v.is_nan() {
                b"NaN"
            } else if v > 0.0 {
                b"inf"
            } else {
                b"-inf"
            });
            return;
        }
        let a = v.abs();
        // A whole number below 2^53 (a mode, a gear, a count) is its integer's digits: its
        // neighbours are whole numbers too, so no shorter text reads back to it.
        if a <= 9_007_199_254_740_992.0 {
            let i = v as i64;
            if i as f64 == v {
                let mut t = [0u8; 20];
                let mut at = t.len();
                let mut u = i.unsigned_abs();
                while u > 0 {
                    at -= 1;
                    t[at] = b'0' + (u % 10) as u8;
                    u /= 10;
                }
                if i < 0 {
                    at -= 1;
                    t[at] = b'-';
                }
                out.extend_from_slice(&t[at..]);
                return;
            }
        }
        let positional = (1e-5..1e16).contains(&a);
        if !maybe_halfway(a) {
            // zmij writes the same digits as Rust's formatting, and its own layout is
            // Rust's but for a trailing ".0" on whole numbers and a "+" in positive
            // exponents; where it chose the other notation, lay the digits out below.
            let text = digits.format_finite(v).as_bytes();
            let e = text.iter().position(|&c| c == b'e');
            match (positional, e) {
                (true, None) => {
                    out.extend_from_slice(text.strip_suffix(b".0").unwrap_or(text));
                    return;
                }
                (false, Some(i)) => {
                    out.extend_from_slice(&text[..=i]);
                    let rest = &text[i + 1..];
                    out.extend_from_slice(rest.strip_prefix(b"+").unwrap_or(rest));
                    return;
                }
                _ => {}
            }
        }
        let (d, k) = shortest(a, digits);
        let d = &d.0[..d.1];
        if halfway_above(a, d, k) {
            // Two shortest texts equally near: zmij takes the even last digit, Rust's
            // formatting the upper one. Rare (a value whose exact decimal expansion has
            // one digit more, a 5): written as Rust writes it.
            let text = if (1e-5..1e16).contains(&a) {
                format!("{v}")
            } else {
                format!("{v:e}")
            };
            out.extend_from_slice(text.as_bytes());
            return;
        }
        // At most a sign, "0.", four zeros and 17 digits, or 17 digits, a point and
        // "e-324".
        let mut t = [0u8; 32];
        let mut n = 0;
        let mut put = |bytes: &[u8]| {
            t[n..n + bytes.len()].copy_from_slice(bytes);
            n += bytes.len();
        };
        if v < 0.0 {
            put(b"-");
        }
        if positional {
            // Positional: `k` digits before the point.
            if k <= 0 {
                put(b"0.");
                put(&b"0000"[..(-k) as usize]);
                put(d);
            } else if (k as usize) < d.len() {
                put(&d[..k as usize]);
                put(b".");
                put(&d[k as usize..]);
            } else {
                put(d);
                put(&b"0000000000000000"[..k as usize - d.len()]);
            }
        } else {
            put(&d[..1]);
            if d.len() > 1 {
                put(b".");
                put(&d[1..]);
            }
            put(b"e");
            let e = k - 1;
            if e < 0 {
                put(b"-");
            }
            let e = e.unsigned_abs();
            if e >= 100 {
                put(&[b'0' + (e / 100) as u8]);
            }
            if e >= 10 {
                put(&[b'0' + (e / 10 % 10) as u8]);
            }
            put(&[b'0' + (e % 10) as u8]);
        }
        out.extend_from_slice(&t[..n]);
    }
}

/// The shortest digits that read back to a finite positive `v` (without leading or
/// trailing zeros, at most 17) and the position of the decimal point: the value is
/// `0.d₁d₂… × 10^k`. Read off zmij's text (`"12.34"`, `"0.001234"`, `"1.234e33"`,
/// `"1e-7"`: digits, an optional point, an optional exponent).
fn shortest(v: f64, buf: &mut zmij::Buffer) -> (([u8; 17], usize), i32) {
    let text = buf.format_finite(v).as_bytes();
    let mut d = [0u8; 17];
    let mut len = 0;
    // Digits before the point (less the leading zeros after it), and the exponent.
    let mut k = 0i32;
    let mut seen_point = false;
    let mut exp = 0i32;
    let mut at = 0;
    while at < text.len() {
        let c = text[at];
        at += 1;
        match c {
            b'.' => seen_point = true,
            b'e' => {
                exp = exponent(&text[at..]);
                break;
            }
            b'0' if len == 0 => {
                // A leading zero moves the point, not the digits.
                if seen_point {
                    k -= 1;
                }
            }
            _ => {
                if !seen_point {
                    k += 1;
                }
                if len < d.len() {
                    d[len] = c;
                    len += 1;
                }
            }
        }
    }
    while len > 1 && d[len - 1] == b'0' {
        len -= 1;
    }
    ((d, len), k + exp)
}

/// A decimal exponent as zmij writes it (`-7`, `33`, `+33`).
fn exponent(text: &[u8]) -> i32 {
    let (neg, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let e = digits
        .iter()
        .fold(0i32, |e, &c| e * 10 + i32::from(c - b'0'));
    if neg {
        -e
    } else {
        e
    }
}

/// The odd binary significand and the exponent of `v` (> 0, finite): `v = m·2^e2`.
fn odd_significand(v: f64) -> (u64, i32) {
    let bits = v.to_bits();
    let frac = bits & ((1u64 << 52) - 1);
    let biased = (bits >> 52) as i32;
    let (m, e2) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), biased - 1075)
    };
    let tz = m.trailing_zeros();
    (m >> tz, e2 + tz as i32)
}

/// Whether `v` (> 0, finite) could lie halfway between two shortest texts (see
/// [`halfway_above`]): only a value with at most 25 binary places and at most 22 binary
/// zeros at its end can.
fn maybe_halfway(v: f64) -> bool {
    (-25..=22).contains(&odd_significand(v).1)
}

/// Whether `v` (> 0, finite) lies exactly halfway between the digits `d` (with the point
/// at `k`) and the next text up, `d` with its last digit one more: whether its exact value
/// is `N·10^E` with `N` = `d` followed by a 5 and `E = k − len(d) − 1`. Checked on the odd
/// binary significand `m·2^e2` of `v`; a value with more than 25 binary places (almost
/// every one) has a longer exact expansion and is never halfway.
fn halfway_above(v: f64, d: &[u8], k: i32) -> bool {
    let (m, e2) = odd_significand(v);
    // N < 10^18 < 5^26: a quotient by 5^p needs p <= 25, and a product N·5^E below 2^53
    // needs E <= 22.
    if !(-25..=22).contains(&e2) {
        return false;
    }
    let n = d.iter().fold(0u64, |n, &c| n * 10 + u64::from(c - b'0')) * 10 + 5;
    let e = k - d.len() as i32 - 1;
    if e >= 0 {
        // N·5^E·2^E with N·5^E odd: the significand is N·5^E and the exponent E.
        e2 == e && u128::from(n) * 5u128.pow(e as u32) == u128::from(m)
    } else {
        // N / (5^p·2^p): N must hold 5^p; the odd part of N / 5^p is the significand.
        let p = (-e) as u32;
        if p > 25 {
            return false;
        }
        let five = 5u64.pow(p);
        if n % five != 0 {
            return false;
        }
        let q = n / five;
        let qz = q.trailing_zeros();
        m == q >> qz && e2 == qz as i32 - p as i32
    }
}

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = Vec::with_capacity(32);
        self.push_to(&mut out, &mut zmij::Buffer::new());
        // The text is ASCII.
        f.write_str(std::str::from_utf8(&out).map_err(|_| std::fmt::Error)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text `Num` wrote when it went through Rust's formatting: `{}` inside
    /// `1e-5 ≤ |v| < 1e16`, `{:e}` outside, `0` for either zero.
    fn formatted(v: f64) -> String {
        if v == 0.0 {
            "0".into()
        } else if !v.is_finite() || (1e-5..1e16).contains(&v.abs()) {
            format!("{v}")
        } else {
            format!("{v:e}")
        }
    }

    #[test]
    fn csv_numbers_are_rusts_shortest_text_character_for_character() {
        // Every kind of f64: random bit patterns (all exponents, subnormals), random values
        // of the sizes a run logs, the edges of the positional range, integers, and the
        // extremes. The laid-out digits must equal Rust's `{}` / `{:e}` text exactly.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut values = vec![
            0.0,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            f64::EPSILON,
            5e-324,
            -5e-324,
            1e-5,
            9.999999999999999e-6,
            1e16,
            9999999999999998.0,
            0.1 + 0.2,
            9007199254740993.0,
            123456789.0,
            1e-300,
            1.2345678901234567e20,
        ];
        for e in -320..=308 {
            let p = 10f64.powi(e);
            values.extend([
                p,
                -p,
                p * 1.5,
                f64::from_bits(p.to_bits() + 1),
                f64::from_bits(p.to_bits() - 1),
            ]);
        }
        // Values whose exact decimal expansion is short enough to fall halfway between
        // two shortest texts: powers of two and their small multiples, quarters at 1e15.
        for i in -2000i64..2000 {
            values.push(i as f64);
        }
        for i in [
            (1i64 << 53) - 1,
            1 << 53,
            (1 << 53) + 2,
            1 << 52,
            999_999_999_999_999,
        ] {
            values.extend([i as f64, -(i as f64), i as f64 + 0.5, i as f64 - 0.5]);
        }
        for k in 0..1075 {
            let p = 2f64.powi(-k);
            values.extend([p, 3.0 * p, 5.0 * p, 7.0 * p, 2f64.powi(k.min(1023))]);
        }
        for _ in 0..20_000 {
            let a = ((1u64 << 50) + next() % (7u64 << 50)) as f64;
            values.extend([a + 0.25, a + 0.75, a + 0.5, -(a + 0.25)]);
        }
        for _ in 0..200_000 {
            let bits = next();
            values.push(f64::from_bits(bits));
            // Run-sized values: a mantissa in [1, 2) times 2^(-30..40).
            let m = 1.0 + (bits >> 11) as f64 / (1u64 << 53) as f64;
            let e = (bits % 70) as i32 - 30;
            values.push(m * 2f64.powi(e) * if bits & 1 == 1 { -1.0 } else { 1.0 });
            values.push(((bits % 2_000_001) as f64 - 1_000_000.0) / 1000.0);
        }
        let mut out = Vec::new();
        let mut digits = zmij::Buffer::new();
        for v in values {
            out.clear();
            Num(v).push_to(&mut out, &mut digits);
            let text = std::str::from_utf8(&out).unwrap();
            assert_eq!(text, formatted(v), "bits {:#018x}", v.to_bits());
            assert_eq!(Num(v).to_string(), text);
        }
    }

    #[test]
    fn csv_writes_a_negative_zero_as_zero() {
        let mut r = SimResult::new("m", vec!["f.fx".into()]);
        r.push_row(0.0, &[-0.0]);
        r.push_row(1.0, &[-1e-300]);
        r.push_row(2.0, &[1.2345678901234567e20]);
        r.push_row(3.0, &[f64::NAN]);
        let mut buf = Vec::new();
        r.write_csv(&mut buf).unwrap();
        let text = String::from_utf8(buf.clone()).unwrap();
        assert_eq!(
            text,
            "time,f.fx\n0,0\n1,-1e-300\n2,1.2345678901234567e20\n3,NaN\n"
        );
        // Every value reads back to the same bits (but the sign of zero).
        let back = SimResult::read_csv(io::Cursor::new(buf), "m").unwrap();
        assert_eq!(back.columns[0][1].to_bits(), (-1e-300f64).to_bits());
        assert_eq!(
            back.columns[0][2].to_bits(),
            1.2345678901234567e20f64.to_bits()
        );
    }

    #[test]
    fn csv_round_trip_keeps_values_and_event_duplicates() {
        let mut r = SimResult::new("m", vec!["a.y".into(), "b.w".into()]);
        r.push_row(0.0, &[1.0, 2.5]);
        r.push_row(0.5, &[1.5, -3.0]);
        r.push_row(0.5, &[9.0, -3.0]);
        let mut buf = Vec::new();
        r.write_csv(&mut buf).unwrap();
        let back = SimResult::read_csv(io::Cursor::new(buf), "m").unwrap();
        assert_eq!(back.time, vec![0.0, 0.5, 0.5]);
        assert_eq!(back.get("a.y").unwrap(), &[1.0, 1.5, 9.0]);
        assert_eq!(back.get("b.w").unwrap(), &[2.5, -3.0, -3.0]);
        // Right value wins at an event instant.
        assert_eq!(back.value_at("a.y", 0.5), Some(9.0));
        assert_eq!(back.value_at("a.y", 0.25), Some(1.25));
    }

    #[test]
    fn csv_reader_names_bad_line_and_column() {
        let text = "time,x\n0,1\n0.1,abc\n";
        let err = SimResult::read_csv(io::Cursor::new(text), "m").unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.message.contains("`x`"), "{}", err.message);
    }
}
