//! A study: a model compiled once, the list of parameter points, the metrics, and the
//! runs (one, a range, in parallel).
//!
//! Everything a user can get wrong is checked in [`Study::new`], before any run: unknown
//! parameters (with a suggestion), values that do not fit a parameter (a word for a number,
//! a number for a choice, a unit of another dimension, an array parameter), malformed
//! grids and distributions, a parameter given twice, unknown metric signals, blocks, event
//! kinds and energy elements. A run that fails afterwards (the solver fails, a sampled
//! value is out of a block's range) is a row with status `failed` and its message.
//!
//! Compile once, run many: the netlist is loaded and compiled once per study
//! ([`Compiled`]); each run re-resolves the top-level parameters and rebuilds the blocks
//! ([`Compiled::with_params`]), reusing the compiled plan (a private copy per run, so the
//! threads share no reference count) when the structure is unchanged. The signals that
//! metrics read are added to the compiled diagram's log (the user's file is not changed),
//! so every metric has its samples.

use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::Value;

use drivelink_core::compile::{resolve_parameters, Scope, ScopeVal};
use drivelink_core::units::Dim;
use drivelink_core::{Compiled, Diagram, EnergyAudit, Registry, SimResult};
use drivelink_netlist as netlist;

use crate::error::SweepError;
use crate::metric::{self, Metric};
use crate::sample::{unit_design, Dist};
use crate::spec::{self, DistKind, RawDist, RawGrid, RawValue, StudyArgs, Swept};
use crate::table::{Cell, ColKind, Column, Table};

/// Most runs one study may have.
pub const MAX_RUNS: usize = 100_000_000;

/// Names of the fixed columns: `run` first, then the swept parameters, then these, then
/// the metrics, then `message`.
pub const FIXED_COLUMNS: [&str; 4] = ["status", "end_time", "wall_time", "message"];

/// A study ready to run.
pub struct Study {
    compiled: Compiled,
    registry: Registry,
    args: StudyArgs,
    origin: String,
    /// Swept parameters (grid axes, then sampled ones) and their column types.
    params: Vec<(String, ColKind)>,
    /// The SI unit of each swept parameter, when known (see [`Study::units`]).
    param_units: Vec<Option<String>>,
    axes: Vec<Vec<Swept>>,
    /// Sampled values, one row per sample (empty without `--samples`).
    samples: Vec<Vec<f64>>,
    metrics: Vec<Metric>,
    needs_audit: bool,
    id: String,
    n_runs: usize,
    /// Set by another thread to end the study (see [`Study::with_cancel`]).
    cancel: Option<Arc<AtomicBool>>,
}

/// The parameter a value is for, as resolved from the netlist.
struct ParamInfo<'a> {
    flag: &'a str,
    name: &'a str,
    value: &'a ScopeVal,
    given: String,
}

impl ParamInfo<'_> {
    fn err(&self, message: String) -> SweepError {
        SweepError::Value {
            flag: self.flag.into(),
            name: self.name.into(),
            message,
        }
    }
    /// Check the dimension of a quantity against the parameter's; `Ok(SI value)`.
    fn number(&self, q: &drivelink_core::expr::Quantity, text: &str) -> Result<f64, SweepError> {
        match self.value {
            ScopeVal::Q(p) => match (p.dim, q.dim) {
                (Some(pd), Some(qd)) if pd != qd => Err(self.err(format!(
                    "'{text}' is {} but parameter '{}' is {} (the netlist gives {})",
                    dim_text(qd),
                    self.name,
                    dim_text(pd),
                    self.given
                ))),
                _ => Ok(q.value),
            },
            ScopeVal::Text(t) => Err(self.err(format!(
                "parameter '{}' is a choice (the netlist gives \"{t}\"); a number '{text}' cannot be assigned; give words, for example [{t}]",
                self.name
            ))),
            ScopeVal::Json(_) => Err(self.err(format!(
                "parameter '{}' is an array (the netlist gives {}); arrays cannot be swept",
                self.name, self.given
            ))),
        }
    }
    fn value(&self, v: &RawValue) -> Result<Swept, SweepError> {
        match v {
            RawValue::Q(q, text) => self.number(q, text).map(Swept::Number),
            RawValue::Word(w) => match self.value {
                ScopeVal::Text(_) => Ok(Swept::Text(w.clone())),
                _ => Err(self.err(format!(
                    "'{w}' is a word but parameter '{}' is a number (the netlist gives {})",
                    self.name, self.given
                ))),
            },
        }
    }
    fn kind(&self) -> ColKind {
        match self.value {
            ScopeVal::Text(_) => ColKind::Text,
            _ => ColKind::Float,
        }
    }
    /// The SI unit of the parameter's column: the netlist's dimension, else (a bare
    /// number in the netlist) that of the values given, else unknown.
    fn unit(&self, given: &[&drivelink_core::expr::Quantity]) -> Option<String> {
        let dim = match self.value {
            ScopeVal::Q(p) => p.dim.or_else(|| given.iter().find_map(|q| q.dim)),
            _ => None,
        };
        let angular = ["rpm", "rad", "deg", "rev"]
            .iter()
            .any(|u| self.given.contains(u));
        dim.map(|d| match unit_text(d).as_str() {
            // An angular speed (the netlist gives it in rpm, rad/s or deg/s) is in rad/s,
            // as the block catalogue and results name it; a plain 1/s stays a rate.
            "1/s" if angular => "rad/s".to_string(),
            t => t.to_string(),
        })
    }
}

/// The SI unit of `d` as the results name units (`N*m`, `1/s`, `1` for dimensionless).
pub(crate) fn unit_text(d: Dim) -> String {
    match d.derived_name() {
        Some(n) => n.replace('·', "*"),
        None => d.ascii(),
    }
}

fn dim_text(d: Dim) -> String {
    if d.is_dimensionless() {
        return "dimensionless".into();
    }
    match d.derived_name() {
        Some(n) => format!("in {n}"),
        None => format!("in {d}"),
    }
}

/// The checks of [`Study::new`] on what the user gave: the netlist's top-level parameters,
/// which flag has given each so far, and the errors found (all reported together).
struct Checks<'a> {
    diagram: &'a Diagram,
    /// The netlist's top-level parameters, resolved.
    top: Scope,
    /// Names of the netlist's parameters, for messages.
    known: Vec<&'a str>,
    /// Parameters given so far, with the flag that gave each.
    taken: Vec<(String, &'static str)>,
    errors: Vec<SweepError>,
}

impl<'a> Checks<'a> {
    /// Resolve the top-level parameters of `diagram`; an error there is located in the
    /// netlist (`registry`, `origin`) and ends the study at once.
    fn new(diagram: &'a Diagram, registry: &Registry, origin: &str) -> Result<Self, SweepError> {
        let top = resolve_parameters(&diagram.parameters, &Scope::new(), &diagram.name)
            .map_err(|e| netlist::locate_error(diagram, registry, origin, e))?;
        Ok(Checks {
            diagram,
            top,
            known: diagram.parameters.iter().map(|p| p.0.as_str()).collect(),
            taken: Vec::new(),
            errors: Vec::new(),
        })
    }

    /// Claim parameter `name` for `flag`: its name, resolved value and the netlist's text
    /// of it; `None` (and an error) when it was already given or is no parameter.
    fn claim(&mut self, flag: &'static str, name: &str) -> Option<(String, ScopeVal, String)> {
        if let Some((_, other)) = self.taken.iter().find(|(n, _)| n == name) {
            self.errors.push(SweepError::Value {
                flag: flag.into(),
                name: name.into(),
                message: format!(
                    "parameter '{name}' is already given by {other}; give each parameter once"
                ),
            });
            return None;
        }
        self.taken.push((name.to_string(), flag));
        let Some(value) = self.top.get(name) else {
            self.errors.push(SweepError::UnknownParam {
                flag: flag.into(),
                name: name.into(),
                hint: drivelink_core::suggest::hint(name, self.known.iter().copied()),
                known: if self.known.is_empty() {
                    "(none)".into()
                } else {
                    self.known.join(", ")
                },
            });
            return None;
        };
        let given = self
            .diagram
            .parameters
            .iter()
            .find(|p| p.0 == name)
            .map(|p| p.1.to_string())
            .unwrap_or_default();
        Some((name.to_string(), value.clone(), given))
    }

    /// The netlist with the values for every run: the `--set` parameters and the
    /// `--stop-time`.
    fn fixed_values(&mut self, args: &StudyArgs) -> Diagram {
        let mut d = self.diagram.clone();
        for s in &args.set {
            match spec::parse_set(s) {
                Ok((name, v)) => {
                    if let Some((name, value, given)) = self.claim("--set", &name) {
                        let p = ParamInfo {
                            flag: "--set",
                            name: &name,
                            value: &value,
                            given,
                        };
                        // A quantity of another dimension than the netlist's is refused
                        // here; anything else (a word, an expression of other
                        // parameters) is the model's to judge.
                        if let (Value::String(text), ScopeVal::Q(_)) = (&v, &value) {
                            if let Ok(spec::RawValue::Q(q, t)) = spec::raw_value(text) {
                                if let Err(e) = p.number(&q, &t) {
                                    self.errors.push(e);
                                    continue;
                                }
                            }
                        }
                        d.param(&name, v);
                    }
                }
                Err(e) => self.errors.push(e),
            }
        }
        if let Some(t) = &args.stop_time {
            match metric::parse_time(t) {
                Ok(x) if x > d.settings.start_time => d.set_stop_time(x),
                Ok(x) => self.errors.push(SweepError::Arg {
                    flag: "--stop-time".into(),
                    text: t.clone(),
                    message: format!(
                        "must be greater than the start time ({} s), got {x}",
                        d.settings.start_time
                    ),
                }),
                Err(m) => self.errors.push(SweepError::Arg {
                    flag: "--stop-time".into(),
                    text: t.clone(),
                    message: m,
                }),
            }
        }
        d
    }

    /// The swept parameters given with `flag` (`--grid` or `--dist`): each of `texts` is
    /// split by `parse` into a name and what was written, its parameter claimed, and
    /// `resolve` gives its column type and values. Those that pass, in order.
    fn swept<R, T>(
        &mut self,
        flag: &'static str,
        texts: &[String],
        parse: impl Fn(&str) -> Result<(String, R), SweepError>,
        resolve: impl Fn(&ParamInfo<'_>, &R) -> Result<(ColKind, T), SweepError>,
    ) -> Vec<(String, ColKind, T)> {
        let mut out = Vec::new();
        for text in texts {
            let (name, raw) = match parse(text) {
                Ok(x) => x,
                Err(e) => {
                    self.errors.push(e);
                    continue;
                }
            };
            let Some((name, value, given)) = self.claim(flag, &name) else {
                continue;
            };
            let p = ParamInfo {
                flag,
                name: &name,
                value: &value,
                given,
            };
            match resolve(&p, &raw) {
                Ok((kind, v)) => out.push((name.clone(), kind, v)),
                Err(e) => self.errors.push(e),
            }
        }
        out
    }

    /// The number of samples (0 without sampling), checked against the `--dist`s; and
    /// the check that the study sweeps something.
    fn sample_count(&mut self, args: &StudyArgs) -> usize {
        let n_samples = match (args.samples, args.dist.is_empty()) {
            (Some(0), _) => {
                self.errors.push(SweepError::Arg {
                    flag: "--samples".into(),
                    text: "0".into(),
                    message: "expected a number of samples >= 1".into(),
                });
                0
            }
            (Some(n), false) => n,
            (Some(n), true) => {
                self.errors.push(SweepError::Arg {
                    flag: "--samples".into(),
                    text: n.to_string(),
                    message: "sampling needs at least one --dist NAME=uniform(a,b)|normal(mu,sigma)|lognormal(mu,sigma)".into(),
                });
                0
            }
            (None, false) => {
                self.errors.push(SweepError::Arg {
                    flag: "--dist".into(),
                    text: args.dist.join(" "),
                    message: "sampled parameters need --samples N".into(),
                });
                0
            }
            (None, true) => 0,
        };
        // (With --samples but no --dist the error above already says what is missing.)
        if args.grid.is_empty() && args.dist.is_empty() && args.samples.is_none() {
            self.errors.push(SweepError::Arg {
                flag: "--grid".into(),
                text: String::new(),
                message: "a study needs at least one --grid NAME=SPEC, or --samples N with a --dist NAME=DIST".into(),
            });
        }
        n_samples
    }

    /// The metrics: the netlist's `metrics` section with the `--metric`s added (one of the
    /// same name replaces the netlist's, see [`metric::merge`]), parsed and their names
    /// resolved (signals are checked against the compiled model later), each with a
    /// column name the table does not have yet (`params` are the swept ones).
    fn metrics(
        &mut self,
        texts: &[String],
        params: &[(String, ColKind)],
        origin: &str,
    ) -> Vec<Metric> {
        let mut args: Vec<Metric> = Vec::new();
        for m in texts {
            match Metric::parse(m) {
                Ok(m) if args.iter().any(|o| o.name == m.name) => {
                    self.errors.push(SweepError::Metric {
                        name: m.name.clone(),
                        message: format!("the table already has a column '{}'; give the metric another name (NAME=EXPR)", m.name),
                    });
                }
                Ok(m) => args.push(m),
                Err(e) => self.errors.push(e),
            }
        }
        let netlist = match metric::netlist_metrics(self.diagram, origin) {
            Ok(v) => v,
            Err(e) => {
                self.errors.push(e);
                Vec::new()
            }
        };
        let mut metrics = metric::merge(netlist, args);
        metrics.retain(|m| {
            let clash = params.iter().any(|(n, _)| *n == m.name)
                || m.name == "run"
                || FIXED_COLUMNS.contains(&m.name.as_str());
            if clash {
                self.errors.push(m.located(format!(
                    "the table already has a column '{}'; give the metric another name{}",
                    m.name,
                    if m.source == metric::Source::Arg {
                        " (NAME=EXPR)"
                    } else {
                        ""
                    }
                )));
            }
            !clash
        });
        if let Err(e) = metric::resolve(&mut metrics, &self.top) {
            self.errors.push(e);
        }
        metrics
    }
}

/// Compile the checked netlist `d`, check the metrics' names against the compiled model,
/// and add the signals the metrics read to the log (compiling again if any was missing).
/// `origin` names the netlist in messages.
pub fn compile_for_metrics(
    mut d: Diagram,
    registry: &Registry,
    origin: &str,
    metrics: &[Metric],
) -> Result<Compiled, SweepError> {
    let located = |d: &Diagram, e| netlist::locate_error(d, registry, origin, e);
    let mut compiled = Compiled::new(&d, registry).map_err(|e| located(&d, e))?;
    SweepError::from_list(
        metrics
            .iter()
            .filter_map(|m| m.check(compiled.plan()).err())
            .collect(),
    )?;
    let logged: Vec<String> = compiled.plan().logged().map(str::to_string).collect();
    let missing: Vec<&str> = metrics
        .iter()
        .flat_map(Metric::signals)
        .filter(|s| !logged.iter().any(|l| l == s))
        .collect();
    if !missing.is_empty() {
        for s in missing {
            if !d.log.iter().any(|l| l == s) {
                d.log.push(s.to_string());
            }
        }
        compiled = Compiled::new(&d, registry).map_err(|e| located(&d, e))?;
    }
    Ok(compiled)
}

/// Number of runs: the grid's points times the samples (at least 1); an error (naming the
/// `grid` arguments) above [`MAX_RUNS`] or on overflow.
fn count_runs(
    n_grid: Option<usize>,
    n_samples: usize,
    grid: &[String],
) -> Result<usize, SweepError> {
    n_grid
        .and_then(|g| g.checked_mul(n_samples.max(1)))
        .filter(|&n| n <= MAX_RUNS)
        .ok_or_else(|| SweepError::Arg {
            flag: "--grid".into(),
            text: grid.join(" "),
            message: format!("the study has more than {MAX_RUNS} runs"),
        })
}

/// The number of points of the grid the `grid` arguments span, read from their text
/// (those that do not parse count once: their error is reported where they are
/// resolved); `None` on overflow. Known before a single value is made, so a grid of a
/// billion points is refused at once instead of being built first.
fn grid_points(grid: &[String]) -> Option<usize> {
    grid.iter()
        .map(|a| spec::parse_grid(a).map_or(1, |(_, raw)| raw.len()))
        .try_fold(1usize, |acc, n| acc.checked_mul(n))
}

/// The sampled values in SI units, one row of `dists.len()` per sample (none without
/// sampling), drawn as `args` ask (design, seed).
fn draw_samples(n_samples: usize, dists: &[Dist], args: &StudyArgs) -> Vec<Vec<f64>> {
    if n_samples > 0 {
        unit_design(n_samples, dists.len(), args.sampling, args.seed)
            .into_iter()
            .map(|u| u.iter().zip(dists).map(|(u, d)| d.quantile(*u)).collect())
            .collect()
    } else {
        Vec::new()
    }
}

/// The study id: a hash of the drivelink version, the netlist as loaded and the
/// arguments (see [`id_args`]).
fn study_id(diagram: &Diagram, args: &StudyArgs) -> String {
    let id_text = serde_json::json!({
        "drivelink": env!("CARGO_PKG_VERSION"),
        "netlist": netlist::to_json(diagram),
        "args": id_args(args),
    })
    .to_string();
    format!("{:016x}", fnv1a(&id_text))
}

/// The arguments as the study id sees them: without whitespace, which no argument's
/// meaning depends on (values are numbers, expressions with units or single words), so
/// shards written `[0.1, 0.2]` and `[0.1,0.2]` are one study.
fn id_args(args: &StudyArgs) -> StudyArgs {
    let strip = |v: &[String]| -> Vec<String> {
        v.iter()
            .map(|s| s.chars().filter(|c| !c.is_whitespace()).collect())
            .collect()
    };
    StudyArgs {
        grid: strip(&args.grid),
        dist: strip(&args.dist),
        metrics: strip(&args.metrics),
        set: strip(&args.set),
        stop_time: args
            .stop_time
            .as_ref()
            .map(|s| s.chars().filter(|c| !c.is_whitespace()).collect()),
        ..args.clone()
    }
}

/// FNV-1a, 64 bit: a stable hash for the study id.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Runs `[floor(i·n/N), floor((i+1)·n/N))` of `n`: slice `i` (0-based) of `count` equal
/// slices.
pub fn shard_range(n_runs: usize, index: usize, count: usize) -> Range<usize> {
    let at = |k: usize| ((k as u128 * n_runs as u128) / count as u128) as usize;
    at(index)..at(index + 1)
}

impl Study {
    /// Check the study against the model and compile it. `origin` names the netlist in
    /// messages; `diagram` is the netlist as loaded (it is not changed).
    pub fn new(
        diagram: &Diagram,
        registry: Registry,
        origin: &str,
        args: StudyArgs,
    ) -> Result<Study, SweepError> {
        let mut checks = Checks::new(diagram, &registry, origin)?;
        // Values for every run.
        let d = checks.fixed_values(&args);

        // Grid axes (their size checked first: the values are made below).
        let n_grid = grid_points(&args.grid);
        count_runs(n_grid, 1, &args.grid)?;
        let mut params = Vec::new();
        let mut param_units = Vec::new();
        let mut axes = Vec::new();
        let grid = checks.swept("--grid", &args.grid, spec::parse_grid, |p, raw| {
            Ok((p.kind(), (grid_values(p, raw)?, p.unit(&raw.quantities()))))
        });
        for (name, kind, (values, unit)) in grid {
            params.push((name, kind));
            param_units.push(unit);
            axes.push(values);
        }

        // Sampled parameters.
        let mut dists = Vec::new();
        let sampled = checks.swept("--dist", &args.dist, spec::parse_dist, |p, raw| {
            // The arguments of a lognormal are of ln(value): only the netlist says the unit.
            let given = match raw.kind {
                DistKind::LogNormal => Vec::new(),
                _ => raw.args.iter().map(|(q, _)| q).collect(),
            };
            Ok((ColKind::Float, (dist_of(p, raw)?, p.unit(&given))))
        });
        for (name, kind, (dist, unit)) in sampled {
            params.push((name, kind));
            param_units.push(unit);
            dists.push(dist);
        }
        let n_samples = checks.sample_count(&args);

        // Metrics: syntax, then names against the compiled model.
        let metrics = checks.metrics(&args.metrics, &params, origin);
        SweepError::from_list(checks.errors)?;
        let compiled = compile_for_metrics(d, &registry, origin, &metrics)?;

        let n_runs = count_runs(n_grid, n_samples, &args.grid)?;
        let samples = draw_samples(n_samples, &dists, &args);
        let id = study_id(diagram, &args);
        let needs_audit = metrics.iter().any(Metric::needs_audit);
        Ok(Study {
            compiled,
            registry,
            args,
            origin: origin.to_string(),
            params,
            param_units,
            axes,
            samples,
            metrics,
            needs_audit,
            id,
            n_runs,
            cancel: None,
        })
    }

    /// End the runs going on and skip the rest once `flag` is set (by a thread watching
    /// for Ctrl-C): [`Study::run`] then returns [`SweepError::Interrupted`].
    pub fn with_cancel(mut self, flag: Arc<AtomicBool>) -> Study {
        self.cancel = Some(flag);
        self
    }

    fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// The study id: a hash of the netlist, the study's arguments and the drivelink
    /// version. Shards of one study carry the same id.
    pub fn id(&self) -> &str {
        &self.id
    }
    /// Number of runs.
    pub fn n_runs(&self) -> usize {
        self.n_runs
    }
    /// The arguments the study was defined with.
    pub fn args(&self) -> &StudyArgs {
        &self.args
    }
    /// The compiled model (with the metric signals logged).
    pub fn compiled(&self) -> &Compiled {
        &self.compiled
    }
    /// The metrics.
    pub fn metrics(&self) -> &[Metric] {
        &self.metrics
    }
    /// Names of the swept parameters, in column order.
    pub fn parameter_names(&self) -> impl Iterator<Item = &str> {
        self.params.iter().map(|p| p.0.as_str())
    }

    /// The table's columns: `run`, the swept parameters, `status`, `end_time`,
    /// `wall_time`, the metrics, `message`.
    pub fn columns(&self) -> Vec<Column> {
        let col = |name: &str, kind| Column {
            name: name.to_string(),
            kind,
        };
        let mut c = vec![col("run", ColKind::Int)];
        c.extend(self.params.iter().map(|(n, k)| col(n, *k)));
        c.push(col("status", ColKind::Text));
        c.push(col("end_time", ColKind::Float));
        c.push(col("wall_time", ColKind::Float));
        c.extend(self.metrics.iter().map(|m| {
            col(
                &m.name,
                if m.is_text() {
                    ColKind::Text
                } else {
                    ColKind::Float
                },
            )
        }));
        c.push(col("message", ColKind::Text));
        c
    }

    /// The SI unit of each column of [`Study::columns`], in the same order, `None` where
    /// there is none or it is unknown: `end_time` and `wall_time` in `s`; a swept
    /// parameter in its netlist's unit (or, for a bare number in the netlist, in the unit
    /// its values were given in); a metric of a signal in the signal's unit,
    /// `event_time` in `s`, `energy` in `J`.
    pub fn units(&self) -> Vec<Option<String>> {
        let s = || Some("s".to_string());
        let mut u = vec![None];
        u.extend(self.param_units.iter().cloned());
        u.extend([None, s(), s()]);
        u.extend(self.metrics.iter().map(|m| m.unit(self.compiled.plan())));
        u.push(None);
        u
    }

    /// The parameter values of run `i` (`i < n_runs`), in column order.
    pub fn point(&self, i: usize) -> Vec<(&str, Swept)> {
        let n_s = self.samples.len().max(1);
        let (mut g, s) = (i / n_s, i % n_s);
        let mut grid: Vec<Swept> = Vec::with_capacity(self.axes.len());
        for axis in self.axes.iter().rev() {
            grid.push(axis[g % axis.len()].clone());
            g /= axis.len();
        }
        grid.reverse();
        let sampled = self
            .samples
            .get(s)
            .into_iter()
            .flatten()
            .map(|x| Swept::Number(*x));
        self.params
            .iter()
            .map(|p| p.0.as_str())
            .zip(grid.into_iter().chain(sampled))
            .collect()
    }

    /// Run `i` and its table row. With `keep`, the run's `results.csv`, `events.csv` and
    /// `summary.json` go to `keep/runs/NNNNNN/`.
    pub fn run_one(&self, i: usize, keep: Option<&Path>) -> Result<Vec<Cell>, SweepError> {
        let point = self.point(i);
        let overrides: Vec<(String, Value)> = point
            .iter()
            .map(|(n, v)| (n.to_string(), v.json()))
            .collect();
        let with_audit = self.needs_audit || keep.is_some();
        let outcome = catch_unwind(AssertUnwindSafe(
            || -> Result<(SimResult, Option<EnergyAudit>), String> {
                let mut m = self
                    .compiled
                    .with_params(&self.registry, &overrides)
                    .map_err(|e| {
                        netlist::locate_error(
                            self.compiled.diagram(),
                            &self.registry,
                            &self.origin,
                            e,
                        )
                        .to_string()
                    })?;
                if let Some(c) = &self.cancel {
                    m.set_cancel(c.clone());
                }
                let res = m.run();
                let audit = with_audit.then(|| m.energy_audit());
                Ok((res, audit))
            },
        ))
        .unwrap_or_else(|p| {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!("internal error (panic): {what}"))
        });
        let mut row = vec![Cell::Int(i as i64)];
        row.extend(point.iter().map(|(_, v)| v.cell()));
        match outcome {
            Ok((res, audit)) => {
                // A run cut short by the flag has no row (`run_until_cancelled`), so it
                // leaves no results directory either: `runs/` holds the table's runs.
                let cut =
                    self.cancelled() && res.message.contains(drivelink_core::model::INTERRUPTED);
                if let (Some(dir), false) = (keep, cut) {
                    self.keep(dir, i, &point, &res, audit.as_ref())?;
                }
                row.push(Cell::Text(res.status.as_str().into()));
                row.push(Cell::Float(res.end_time));
                row.push(Cell::Float(res.wall_time_s));
                let params = metric::parameter_values(&self.metrics, &self.run_parameters(&point));
                row.extend(metric::evaluate(
                    &self.metrics,
                    &res,
                    audit.as_ref(),
                    &params,
                ));
                row.push(Cell::Text(res.message));
            }
            Err(message) => {
                row.push(Cell::Text("failed".into()));
                row.push(Cell::Float(f64::NAN));
                row.push(Cell::Float(f64::NAN));
                row.extend(self.metrics.iter().map(|m| {
                    if m.is_text() {
                        Cell::Text("failed".into())
                    } else {
                        Cell::Float(f64::NAN)
                    }
                }));
                row.push(Cell::Text(message));
            }
        }
        Ok(row)
    }

    /// The netlist's parameters with the values of a run's point in place.
    fn run_parameters(&self, point: &[(&str, Swept)]) -> Vec<(String, Value)> {
        let mut p = self.compiled.diagram().parameters.clone();
        for (name, v) in point {
            if let Some(x) = p.iter_mut().find(|x| x.0 == *name) {
                x.1 = v.json();
            }
        }
        p
    }

    fn keep(
        &self,
        dir: &Path,
        i: usize,
        point: &[(&str, Swept)],
        res: &SimResult,
        audit: Option<&EnergyAudit>,
    ) -> Result<(), SweepError> {
        let d = dir.join("runs").join(format!("{i:06}"));
        std::fs::create_dir_all(&d).map_err(|e| SweepError::io(d.display(), e))?;
        let create = |name: &str| {
            let p = d.join(name);
            std::fs::File::create(&p)
                .map(|f| (f, p.clone()))
                .map_err(|e| SweepError::io(p.display(), e))
        };
        let (f, p) = create("results.csv")?;
        res.write_csv(f)
            .map_err(|e| SweepError::io(p.display(), e))?;
        let (f, p) = create("events.csv")?;
        res.write_events_csv(f)
            .map_err(|e| SweepError::io(p.display(), e))?;
        let mut summary = res.summary_json();
        if let Value::Object(map) = &mut summary {
            map.insert(
                "parameters".into(),
                Value::Object(
                    point
                        .iter()
                        .map(|(n, v)| (n.to_string(), v.json()))
                        .collect(),
                ),
            );
            if let Some(a) = audit {
                map.insert("energy".into(), a.to_json());
            }
        }
        let p = d.join("summary.json");
        let text = serde_json::to_string_pretty(&summary).unwrap_or_default() + "\n";
        std::fs::write(&p, text).map_err(|e| SweepError::io(p.display(), e))
    }

    /// Run `runs` on `jobs` threads (0: all cores); `progress(done)` is called after each
    /// run. Rows come back in run order.
    pub fn run(
        &self,
        runs: Range<usize>,
        jobs: usize,
        keep: Option<&Path>,
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<Table, SweepError> {
        // A table cut short by the flag is not the study's: refused as a whole.
        match self.run_until_cancelled(runs, jobs, keep, progress)? {
            (_, true) => Err(SweepError::Interrupted),
            (table, false) => Ok(table),
        }
    }

    /// [`Study::run`], except that once the cancel flag is set (Ctrl-C) the table of the
    /// runs that finished before it is returned, with `true`: the runs cut short by the
    /// flag and those never started are left out (their run indices are missing from the
    /// `run` column). Without the flag set, the whole table and `false`.
    pub fn run_until_cancelled(
        &self,
        runs: Range<usize>,
        jobs: usize,
        keep: Option<&Path>,
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<(Table, bool), SweepError> {
        let runs: Vec<usize> = runs.collect();
        self.run_listed_until_cancelled(&runs, jobs, keep, progress)
    }

    /// [`Study::run_until_cancelled`] of the runs listed in `runs` (each `< n_runs`; the
    /// rows come back in the order of the list): what resuming an interrupted study runs.
    pub fn run_listed_until_cancelled(
        &self,
        runs: &[usize],
        jobs: usize,
        keep: Option<&Path>,
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<(Table, bool), SweepError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .build()
            .map_err(|e| SweepError::Arg {
                flag: "--jobs".into(),
                text: jobs.to_string(),
                message: format!("cannot start the worker threads: {e}"),
            })?;
        let done = AtomicUsize::new(0);
        // A run skipped, or cut short by the flag (its message holds
        // `drivelink_core::model::INTERRUPTED`), has no row.
        let cut = |row: &[Cell]| matches!(row.last(), Some(Cell::Text(m)) if m.contains(drivelink_core::model::INTERRUPTED));
        let rows: Vec<Option<Vec<Cell>>> = pool.install(|| {
            runs.par_iter()
                .with_max_len(1)
                .map(|&i| {
                    if self.cancelled() {
                        return Ok(None);
                    }
                    let row = self.run_one(i, keep)?;
                    if self.cancelled() && cut(&row) {
                        return Ok(None);
                    }
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                    Ok(Some(row))
                })
                .collect::<Result<_, SweepError>>()
        })?;
        let table = Table::new(self.columns(), rows.into_iter().flatten().collect());
        Ok((table, self.cancelled()))
    }

    /// `study.json` of a table of this study: the id, the model, the number of runs, the
    /// shard (`null` for a whole study), the columns and the arguments.
    pub fn study_json(&self, shard: Option<(usize, usize)>) -> Value {
        let shard = shard.map(|(i, n)| {
            let r = shard_range(self.n_runs, i, n);
            serde_json::json!({ "index": i, "count": n, "first_run": r.start, "end_run": r.end })
        });
        serde_json::json!({
            "study_id": self.id,
            "drivelink_version": env!("CARGO_PKG_VERSION"),
            "model": self.origin,
            "model_name": self.compiled.diagram().name,
            "runs": self.n_runs,
            "shard": shard,
            "columns": self.columns(),
            "units": self.units_json(),
            "args": self.args,
        })
    }

    /// The known units by column name (`study.json`'s `"units"`).
    pub fn units_json(&self) -> Value {
        Value::Object(
            self.columns()
                .into_iter()
                .zip(self.units())
                .filter_map(|(c, u)| u.map(|u| (c.name, Value::String(u))))
                .collect(),
        )
    }
}

/// The values of a grid axis in SI units (or words for a choice) from what was written.
fn grid_values(p: &ParamInfo<'_>, raw: &RawGrid) -> Result<Vec<Swept>, SweepError> {
    match raw {
        RawGrid::Range { start, stop, count } => p
            .number(&start.0, &start.1)
            .and_then(|a| Ok((a, p.number(&stop.0, &stop.1)?)))
            .map(|(a, b)| {
                (0..*count)
                    .map(|k| Swept::Number(grid_point(a, b, *count, k)))
                    .collect::<Vec<_>>()
            }),
        RawGrid::List(v) => v.iter().map(|x| p.value(x)).collect(),
    }
}

/// A distribution in SI units from what was written.
fn dist_of(p: &ParamInfo<'_>, raw: &RawDist) -> Result<Dist, SweepError> {
    let [(qa, ta), (qb, tb)] = &raw.args;
    Ok(match raw.kind {
        DistKind::Uniform => Dist::Uniform {
            a: p.number(qa, ta)?,
            b: p.number(qb, tb)?,
        },
        DistKind::Normal => Dist::Normal {
            mu: p.number(qa, ta)?,
            sigma: p.number(qb, tb)?,
        },
        DistKind::LogNormal => {
            // mu and sigma are of ln(value): only the parameter's kind is checked.
            if !matches!(p.value, ScopeVal::Q(_)) {
                p.number(qa, ta)?;
            }
            Dist::LogNormal {
                mu: qa.value,
                sigma: qb.value,
            }
        }
    })
}

/// Point `k` of `count` (>= 2) evenly spaced values from `a` to `b`: exactly `a` and `b` at
/// the ends (`0.15:0.35:4` ends on 0.35, not 0.3499999999999999), and the weighted mean
/// `((n − k)·a + k·b)/n` between them (`0.1:0.5:3` gives 0.3, not 0.30000000000000004).
fn grid_point(a: f64, b: f64, count: usize, k: usize) -> f64 {
    let n = count - 1;
    if k == 0 {
        a
    } else if k == n {
        b
    } else {
        let (n, k) = (n as f64, k as f64);
        ((n - k) * a + k * b) / n
    }
}

#[cfg(test)]
mod grid_tests {
    use super::grid_point;

    #[test]
    fn grid_ends_are_exactly_start_and_stop() {
        for (a, b, count) in [
            (0.15, 0.35, 4),
            (0.1, 0.5, 25),
            (0.15, 0.35, 40),
            (-1.0, 0.3, 7),
        ] {
            assert_eq!(grid_point(a, b, count, 0), a);
            assert_eq!(grid_point(a, b, count, count - 1), b);
        }
        assert_eq!(grid_point(0.1, 0.5, 3, 1), 0.3);
        // Evenly spaced to rounding.
        let v: Vec<f64> = (0..40).map(|k| grid_point(0.15, 0.35, 40, k)).collect();
        for w in v.windows(2) {
            assert!((w[1] - w[0] - 0.2 / 39.0).abs() < 1e-15);
        }
    }
}
