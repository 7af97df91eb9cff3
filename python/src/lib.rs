//! `drivelink._drivelink`: the native half of the `drivelink` Python package (pyo3, abi3).
//!
//! It exposes three classes to the pure-Python layer (`python/drivelink/__init__.py`),
//! which turns them into the public API: `NativeModel` (a netlist compiled once, run with
//! other parameter values), `NativeResult` (a run's samples as little-endian `f64` bytes
//! for `numpy.frombuffer`, events, summary, energy audit) and `NativeStudy` (a
//! `drivelink-sweep` study: the whole table on a rayon pool, or one run at a time for an
//! external executor). Runs release the GIL. Errors are `ModelError` (invalid model,
//! arguments or study; the located messages of the CLI, one per line, with the Python
//! argument names instead of the CLI's options) and `DrivelinkError` (its base class).
//!
//! A long call (a run, a study) works on a thread of its own while the calling thread
//! watches for Ctrl-C and reports progress to an optional Python callback; Ctrl-C, or an
//! exception the callback raises, ends the work at its next step and comes back to the
//! Python layer together with what was finished (the partial result or table), which
//! attaches it to the exception.

// Model errors carry every name a user needs; they are built only on the error path.
#![allow(clippy::result_large_err)]

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde_json::Value;

use drivelink_core::{Compiled, Diagram, EnergyAudit, Registry, SimResult};
use drivelink_netlist as netlist;
use drivelink_sweep::metric::{self, Metric};
use drivelink_sweep::{Cell, ColKind, Study, StudyArgs, SweepError, Table};

pyo3::create_exception!(
    _drivelink,
    DrivelinkError,
    PyException,
    "Base class of drivelink's errors."
);
pyo3::create_exception!(
    _drivelink,
    ModelError,
    DrivelinkError,
    "An invalid model, parameter value or study: the message names the file, JSON path, block, parameter or argument (one line per problem), as the CLI prints it."
);

fn model_error(file: &str, e: &drivelink_core::Error) -> PyErr {
    ModelError::new_err(e.lines(file).join("\n"))
}

fn sweep_error(file: &str, e: &SweepError) -> PyErr {
    ModelError::new_err(e.in_python_terms().lines(file).join("\n"))
}

/// What a call that can be cut short gives back: its output, and the exception that cut
/// it short (`None` when it ran to its end).
type Outcome<T> = (T, Option<Py<PyAny>>);

/// Read and load a netlist file; errors located as by the CLI.
fn load_diagram(path: &str) -> PyResult<Diagram> {
    let p = Path::new(path);
    let text = std::fs::read_to_string(p).map_err(|e| {
        model_error(
            path,
            &drivelink_core::Error::Io {
                path: path.to_string(),
                message: e.to_string(),
            },
        )
    })?;
    diagram_from_text(&text, path, p.parent().unwrap_or(Path::new("")))
}

fn diagram_from_text(text: &str, origin: &str, base: &Path) -> PyResult<Diagram> {
    let v = netlist::parse_text(text, origin).map_err(|e| model_error(origin, &e))?;
    netlist::load_value(&v, origin, base).map_err(|e| model_error(origin, &e))
}

fn json_value<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// Parse the `set` overrides (a JSON object from Python).
fn overrides(set_json: &str) -> PyResult<Vec<(String, Value)>> {
    match serde_json::from_str::<Value>(set_json) {
        Ok(Value::Object(m)) => Ok(m.into_iter().collect()),
        Ok(Value::Null) => Ok(Vec::new()),
        _ => Err(ModelError::new_err(
            "set: expected a dict of parameter name -> value (number, bool, or text such as \"250 ms\")",
        )),
    }
}

/// A netlist compiled once; `run` instantiates it with other parameter values.
#[pyclass(frozen, module = "drivelink._drivelink")]
struct NativeModel {
    compiled: Compiled,
    registry: Registry,
    origin: String,
    /// The netlist's `metrics`, computed after every run.
    metrics: Vec<Metric>,
}

#[pymethods]
impl NativeModel {
    /// Load and compile `path`; `log` adds variables to the netlist's log (as do the
    /// netlist's metrics, with the signals they read).
    #[new]
    #[pyo3(signature = (path, log = Vec::new()))]
    fn new(path: &str, log: Vec<String>) -> PyResult<Self> {
        let mut d = load_diagram(path)?;
        for s in log {
            if !d.log.contains(&s) {
                d.log.push(s);
            }
        }
        let registry = drivelink_blocks::registry();
        let top = drivelink_core::compile::resolve_parameters(
            &d.parameters,
            &drivelink_core::compile::Scope::new(),
            path,
        )
        .map_err(|e| model_error(path, &e))?;
        let mut metrics = metric::netlist_metrics(&d, path).map_err(|e| sweep_error(path, &e))?;
        metric::resolve(&mut metrics, &top).map_err(|e| sweep_error(path, &e))?;
        let compiled = drivelink_sweep::study::compile_for_metrics(d, &registry, path, &metrics)
            .map_err(|e| sweep_error(path, &e))?;
        Ok(NativeModel {
            compiled,
            registry,
            origin: path.to_string(),
            metrics,
        })
    }
    /// The model name.
    fn name(&self) -> String {
        self.compiled.diagram().name.clone()
    }
    /// Top-level parameters as a JSON object (values as written in the netlist).
    fn parameters_json(&self) -> String {
        let m: serde_json::Map<String, Value> =
            self.compiled.diagram().parameters.iter().cloned().collect();
        json_value(&m)
    }
    /// Every loggable variable.
    fn variables(&self) -> Vec<String> {
        self.compiled
            .plan()
            .variables()
            .iter()
            .map(|v| v.name.clone())
            .collect()
    }
    /// The logged variables, in column order.
    fn logged(&self) -> Vec<String> {
        self.compiled.plan().logged().map(str::to_string).collect()
    }
    /// What compiling found (unconnected flanges, ...), as `drivelink validate` prints it.
    fn compile_warnings(&self) -> Vec<String> {
        self.compiled
            .plan()
            .warnings()
            .iter()
            .map(|w| w.to_string())
            .collect()
    }
    /// Run with `set` (a JSON object of parameter values) and an optional stop time
    /// (seconds, or a time with a unit). `progress(t, stop_time)` is called on this
    /// thread as the run reaches its output points. Returns the result and the exception
    /// (Ctrl-C, or raised by `progress`) that ended the run early, if any.
    #[pyo3(signature = (set_json, stop_time = None, progress = None))]
    fn run(
        &self,
        py: Python<'_>,
        set_json: &str,
        stop_time: Option<String>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Outcome<NativeResult>> {
        let set = overrides(set_json)?;
        // Seconds, or a time with a unit ("2 min"), as the CLI's --stop-time.
        let stop_time = stop_time
            .map(|text| {
                let q = drivelink_core::expr::eval(&text, &|_| None).map_err(|e| {
                    ModelError::new_err(format!(
                        "stop_time \"{text}\": {e}; expected a time such as 20 or \"2 min\""
                    ))
                })?;
                drivelink_core::expr::check_dim(&q, drivelink_core::units::Dim::TIME, "s")
                    .map_err(|e| ModelError::new_err(format!("stop_time \"{text}\": {e}")))
            })
            .transpose()?;
        let mut m = py
            .detach(|| self.compiled.with_params(&self.registry, &set))
            .map_err(|e| {
                let e =
                    netlist::locate_error(self.compiled.diagram(), &self.registry, &self.origin, e);
                model_error(&self.origin, &e)
            })?;
        // The run's own settings: a solver section written over the parameters follows `set`.
        let mut settings = m.settings().clone();
        if let Some(t) = stop_time {
            if !(t.is_finite() && t > settings.start_time) {
                return Err(ModelError::new_err(format!(
                    "stop_time: must be a finite time greater than the start time ({} s), got {t}",
                    settings.start_time
                )));
            }
            settings.stop_time = t;
        }
        let cancel = Arc::new(AtomicBool::new(false));
        m.set_cancel(cancel.clone());
        // The time of the last output point, as f64 bits (NaN: none yet).
        let reached = Arc::new(AtomicU64::new(f64::NAN.to_bits()));
        if progress.is_some() {
            let r = reached.clone();
            m.set_progress(Box::new(move |t| r.store(t.to_bits(), Ordering::Relaxed)));
        }
        let stop = settings.stop_time;
        let mut told = f64::NAN.to_bits();
        let poll = |py: Python<'_>| -> PyResult<()> {
            let t = reached.load(Ordering::Relaxed);
            match &progress {
                Some(f) if t != told && !f64::from_bits(t).is_nan() => {
                    told = t;
                    f.call1(py, (f64::from_bits(t), stop)).map(drop)
                }
                _ => Ok(()),
            }
        };
        let warnings = m.start_warnings().to_vec();
        // The run's parameter values, for the metrics that use them.
        let mut params = self.compiled.diagram().parameters.clone();
        for (name, v) in &set {
            if let Some(p) = params.iter_mut().find(|p| p.0 == *name) {
                p.1 = v.clone();
            }
        }
        let metrics = &self.metrics;
        let (r, e) = interruptible(py, &cancel, poll, move || {
            let result = m.run_with(&settings);
            let audit = m.energy_audit();
            let scope = metric::parameter_values(metrics, &params);
            let values = metric::evaluate(metrics, &result, Some(&audit), &scope);
            let metrics = (!metrics.is_empty()).then(|| metric::values_json(metrics, &values));
            NativeResult {
                result,
                audit,
                warnings,
                metrics,
            }
        })?;
        Ok((r, e.map(|e| e.into_value(py).into_any())))
    }
}

/// Run `work` on a thread of its own while the calling thread, without the GIL, waits for
/// it and every 50 ms checks for Python signals and calls `poll` (which reports progress
/// to Python; it is called once more when the work is done). On Ctrl-C
/// (KeyboardInterrupt, or any exception a signal handler raises) or an exception from
/// `poll` it sets `cancel`, waits for the work to end at its next step, and returns the
/// work's output with that exception. A panic in `work` is raised as a DrivelinkError.
fn interruptible<T: Send>(
    py: Python<'_>,
    cancel: &AtomicBool,
    mut poll: impl FnMut(Python<'_>) -> PyResult<()>,
    work: impl FnOnce() -> T + Send,
) -> PyResult<(T, Option<PyErr>)> {
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel();
        let worker = s.spawn(move || {
            let out = work();
            // The caller may be gone (interrupted): nothing to tell then.
            let _ = tx.send(());
            out
        });
        let join = |w: std::thread::ScopedJoinHandle<'_, T>| {
            w.join()
                .map_err(|_| DrivelinkError::new_err("the run panicked (an internal error)"))
        };
        let mut rx = rx;
        loop {
            // The receiver is moved into the wait and back (it may not be shared).
            let (done, back) = py.detach(move || {
                // Sent, or the sender dropped by a panic: done either way.
                let done = !matches!(
                    rx.recv_timeout(Duration::from_millis(50)),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                );
                (done, rx)
            });
            rx = back;
            if done {
                let out = join(worker)?;
                return Ok((out, poll(py).err()));
            }
            if let Err(e) = py.check_signals().and_then(|()| poll(py)) {
                cancel.store(true, Ordering::Relaxed);
                let out = py.detach(|| join(worker))?;
                return Ok((out, Some(e)));
            }
        }
    })
}

/// One run's results.
#[pyclass(frozen, module = "drivelink._drivelink")]
struct NativeResult {
    result: SimResult,
    audit: EnergyAudit,
    /// The model's warnings about this run's starting pose (`Model::start_warnings`).
    warnings: Vec<String>,
    /// The netlist's metrics (`summary.json`'s `"metrics"`), when it has any.
    metrics: Option<Value>,
}

fn f64_bytes<'py>(py: Python<'py>, v: &[f64]) -> Bound<'py, PyBytes> {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    PyBytes::new(py, &bytes)
}

#[pymethods]
impl NativeResult {
    /// The model's warnings about the run's starting pose (a wheel mount below the ground).
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    /// Logged variable names, in column order.
    fn names(&self) -> Vec<String> {
        self.result.names.clone()
    }
    /// The time vector as little-endian f64 bytes.
    fn time_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        f64_bytes(py, &self.result.time)
    }
    /// One logged variable as little-endian f64 bytes (`None` when not logged).
    fn column_bytes<'py>(&self, py: Python<'py>, name: &str) -> Option<Bound<'py, PyBytes>> {
        self.result.get(name).map(|c| f64_bytes(py, c))
    }
    /// Events as (time, block, kind, detail) tuples.
    fn events(&self) -> Vec<(f64, String, String, String)> {
        self.result
            .events
            .iter()
            .map(|e| {
                (
                    e.time,
                    e.block.clone(),
                    e.kind.as_str().to_string(),
                    e.detail.clone(),
                )
            })
            .collect()
    }
    /// `summary.json` (with the energy audit and the netlist's metrics) as JSON text.
    fn summary_json(&self) -> String {
        let mut s = self.result.summary_json();
        if let Value::Object(m) = &mut s {
            m.insert("energy".into(), self.audit.to_json());
            if let Some(v) = &self.metrics {
                m.insert("metrics".into(), v.clone());
            }
        }
        json_value(&s)
    }
    /// `completed`, `stopped` or `failed`.
    fn status(&self) -> &'static str {
        self.result.status.as_str()
    }
    /// Time the run ended, s.
    fn end_time(&self) -> f64 {
        self.result.end_time
    }
    /// Why the run ended.
    fn message(&self) -> String {
        self.result.message.clone()
    }
}

/// A parameter study (see `drivelink-sweep`).
#[pyclass(frozen, module = "drivelink._drivelink")]
struct NativeStudy {
    study: Study,
    origin: String,
    /// The study's cancel flag: set on Ctrl-C, cleared when a call starts.
    cancel: Arc<AtomicBool>,
}

#[pymethods]
impl NativeStudy {
    /// A study of the netlist `text` (named `origin`; subsystem files are resolved from
    /// `base_dir`) with `args_json` (the CLI's options as a JSON object).
    #[new]
    fn new(text: &str, origin: &str, base_dir: &str, args_json: &str) -> PyResult<Self> {
        let d = diagram_from_text(text, origin, Path::new(base_dir))?;
        let args: StudyArgs = serde_json::from_str(args_json)
            .map_err(|e| ModelError::new_err(format!("study arguments: {e}")))?;
        let cancel = Arc::new(AtomicBool::new(false));
        let study = Study::new(&d, drivelink_blocks::registry(), origin, args)
            .map_err(|e| sweep_error(origin, &e))?
            .with_cancel(cancel.clone());
        Ok(NativeStudy {
            study,
            origin: origin.to_string(),
            cancel,
        })
    }
    /// The study id (the CLI's for the same netlist and arguments).
    fn id(&self) -> String {
        self.study.id().to_string()
    }
    /// Number of runs.
    fn n_runs(&self) -> usize {
        self.study.n_runs()
    }
    /// The table's columns as JSON: `[{"name": ..., "type": "int"|"float"|"text"}, ...]`.
    fn columns_json(&self) -> String {
        json_value(&self.study.columns())
    }
    /// `study.json` as JSON text (of slice `shard`, `(I, N)`, of the runs).
    #[pyo3(signature = (shard = None))]
    fn study_json(&self, shard: Option<(usize, usize)>) -> String {
        json_value(&self.study.study_json(shard))
    }
    /// The known SI units by column name, as JSON.
    fn units_json(&self) -> String {
        json_value(&self.study.units_json())
    }
    /// Slice `shard` ("I/N") of the runs: `(first run, end run, I, N)`.
    fn shard(&self, shard: &str) -> PyResult<(usize, usize, usize, usize)> {
        let (i, n) =
            drivelink_sweep::parse_shard(shard).map_err(|e| sweep_error(&self.origin, &e))?;
        let r = drivelink_sweep::shard_range(self.study.n_runs(), i, n);
        Ok((r.start, r.end, i, n))
    }
    /// Runs `start..end` on `jobs` threads (0: all cores), each run's results kept under
    /// `keep/runs/NNNNNN/` when `keep` is given; `progress(done, total)` is called on this
    /// thread as runs finish. Returns the rows as JSON (NaN is null) and the exception
    /// (Ctrl-C, or raised by `progress`) that ended the study early, if any: then the rows
    /// are those of the runs finished before it.
    #[pyo3(signature = (start, end, jobs = 0, progress = None, keep = None))]
    fn run(
        &self,
        py: Python<'_>,
        start: usize,
        end: usize,
        jobs: usize,
        progress: Option<Py<PyAny>>,
        keep: Option<String>,
    ) -> PyResult<Outcome<String>> {
        let end = end.min(self.study.n_runs());
        let runs = start.min(end)..end;
        let total = runs.len();
        self.cancel.store(false, Ordering::Relaxed);
        let done = AtomicUsize::new(0);
        let mut told = 0;
        let poll = |py: Python<'_>| -> PyResult<()> {
            let d = done.load(Ordering::Relaxed);
            match &progress {
                Some(f) if d != told => {
                    told = d;
                    f.call1(py, (d, total)).map(drop)
                }
                _ => Ok(()),
            }
        };
        let tick = |_: usize| {
            done.fetch_add(1, Ordering::Relaxed);
        };
        let keep = keep.as_deref().map(Path::new);
        let (out, e) = interruptible(py, &self.cancel, poll, || {
            self.study.run_until_cancelled(runs, jobs, keep, &tick)
        })?;
        let (table, _) = out.map_err(|e| sweep_error(&self.origin, &e))?;
        Ok((
            json_value(table.rows()),
            e.map(|e| e.into_value(py).into_any()),
        ))
    }
    /// Run `i` alone; its row as JSON. Ctrl-C ends it at its next step and is raised.
    fn run_one(&self, py: Python<'_>, i: usize) -> PyResult<String> {
        if i >= self.study.n_runs() {
            return Err(ModelError::new_err(format!(
                "run {i}: the study has {} runs",
                self.study.n_runs()
            )));
        }
        self.cancel.store(false, Ordering::Relaxed);
        let (row, e) = interruptible(py, &self.cancel, |_| Ok(()), || self.study.run_one(i, None))?;
        if let Some(e) = e {
            return Err(e);
        }
        let row = row.map_err(|e| sweep_error(&self.origin, &e))?;
        Ok(json_value(&row))
    }
    /// Make `out` ready for the study: refused (ModelError) when it holds a study
    /// already, unless `force`, which removes that study's files.
    fn prepare_out(&self, out: &str, force: bool) -> PyResult<()> {
        drivelink_sweep::prepare_out_dir(Path::new(out), force)
            .map_err(|e| sweep_error(&self.origin, &e))
    }
    /// Write the study directory `out` as `drivelink sweep --out` does: `sweep.csv`,
    /// `sweep.parquet` and `study.json` of the rows `rows_json` (as `run` gives them),
    /// for slice `shard` (`(I, N)`) of the runs, marked interrupted when `interrupted`.
    #[pyo3(signature = (out, rows_json, shard = None, interrupted = false))]
    fn write(
        &self,
        out: &str,
        rows_json: &str,
        shard: Option<(usize, usize)>,
        interrupted: bool,
    ) -> PyResult<()> {
        let columns = self.study.columns();
        let rows = rows_from_json(rows_json, &columns)?;
        let mut study = self.study.study_json(shard);
        if interrupted {
            drivelink_sweep::mark_interrupted(&mut study, rows.len());
        }
        let table = Table::new(columns, rows);
        drivelink_sweep::write_study(Path::new(out), &table, &study)
            .map_err(|e| sweep_error(&self.origin, &e))
    }
}

/// Table rows from their JSON (as [`NativeStudy::run`] gives them: NaN as null).
fn rows_from_json(text: &str, columns: &[drivelink_sweep::Column]) -> PyResult<Vec<Vec<Cell>>> {
    let bad = |what: String| DrivelinkError::new_err(format!("study rows: {what}"));
    let rows: Vec<Vec<Value>> = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    rows.into_iter()
        .map(|row| {
            if row.len() != columns.len() {
                return Err(bad(format!(
                    "a row of {} cells for {} columns",
                    row.len(),
                    columns.len()
                )));
            }
            row.into_iter()
                .zip(columns)
                .map(|(v, c)| match (c.kind, &v) {
                    (ColKind::Int, Value::Number(n)) if n.as_i64().is_some() => {
                        Ok(Cell::Int(n.as_i64().unwrap_or_default()))
                    }
                    (ColKind::Float, Value::Number(n)) => {
                        Ok(Cell::Float(n.as_f64().unwrap_or(f64::NAN)))
                    }
                    (ColKind::Float, Value::Null) => Ok(Cell::Float(f64::NAN)),
                    (ColKind::Text, Value::String(s)) => Ok(Cell::Text(s.clone())),
                    _ => Err(bad(format!("column '{}': unexpected {v}", c.name))),
                })
                .collect()
        })
        .collect()
}

/// The native module.
#[pymodule]
fn _drivelink(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeModel>()?;
    m.add_class::<NativeResult>()?;
    m.add_class::<NativeStudy>()?;
    m.add("DrivelinkError", m.py().get_type::<DrivelinkError>())?;
    m.add("ModelError", m.py().get_type::<ModelError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
