//! Results of a run: time vector, logged variables, event log, solver statistics, CSV I/O.
//!
//! Every event instant appears twice in the time vector: the left value (before the event
//! handler ran) and the right value (after it).

use std::io::{self, BufRead, Write};

pub use crate::number::Num;
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

#[cfg(test)]
mod tests {
    use super::*;

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
