//! The `drivelink` command line: run, validate, blocks, schema, plot, diagram, sweep,
//! sweep-merge, tire.
//!
//! Exit codes: 0 success (run completed or stopped), 1 the simulation failed (partial
//! results are still written) or an output could not be written, 2 invalid input (model,
//! arguments, results file); nothing is simulated then.

// The core `Error` names everything a user needs; it is only built on the error path.
#![allow(clippy::result_large_err)]

mod catalogue;
mod compare;
mod console;
mod fmu;
mod study;
mod table_plot;
mod tire;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use serde_json::Value;

use drivelink_core::expr;
use drivelink_core::model::INTERRUPTED;
use drivelink_core::units::Dim;
use drivelink_core::{Diagram, Error, Model, RunStatus, SimResult};
use drivelink_netlist as netlist;
use drivelink_sweep::metric::{self, Metric};
use drivelink_sweep::{Cell, SweepError};

#[derive(Parser)]
#[command(
    name = "drivelink",
    version,
    about = "Simulink-style block-diagram simulation of drivelines and vehicles",
    long_about = "Simulink-style block-diagram simulation of drivelines and vehicles.\n\nExit codes: 0 ok (run completed or stopped), 1 simulation failed (partial results written), 2 invalid model or arguments."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a netlist and write results.csv, events.csv, summary.json and one PNG per scope.
    Run(RunArgs),
    /// Export a model as an FMU (FMI 3.0 Co-Simulation) for FMI importers such as fmpy.
    #[command(long_about = fmu::LONG_ABOUT)]
    Fmu(fmu::FmuArgs),
    /// Check a netlist (load and compile) without simulating.
    Validate {
        /// The model netlist (JSON).
        model: PathBuf,
        /// Override a top-level parameter (as for `run`).
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
    },
    /// The block catalogue: ports, parameters, units, defaults and loggable variables (one TYPE or all).
    Blocks {
        /// A block type, for example Clutch.
        #[arg(value_name = "TYPE")]
        type_name: Option<String>,
        /// Print Markdown (docs/blocks.md is `drivelink blocks --markdown`).
        #[arg(long)]
        markdown: bool,
    },
    /// Print the JSON Schema (draft 2020-12) of the netlist format.
    Schema,
    /// Linearize a model about an operating point: A, B, C, D and the eigenvalues, as JSON.
    Linearize(LinearizeArgs),
    /// Draw the block diagram as SVG, laid out left to right.
    Diagram {
        /// The model netlist (JSON).
        model: PathBuf,
        /// Output SVG file (default: <model file stem>.svg).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also draw every subsystem's and composite block's inner diagram, as
        /// <out stem>.<block path>.svg; the outer boxes link to them.
        #[arg(long)]
        expand: bool,
        /// Override a top-level parameter (as for `run`).
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
    },
    /// Evaluate a WheelCollider's tire law (friction curves or Magic Formula) over slip
    /// ratio and slip angle lists at one load: a CSV table or the Fx(κ), Fy(α) curves.
    #[command(long_about = tire::LONG_ABOUT)]
    Tire(tire::TireArgs),
    /// Compare two runs: A and B overlaid above their difference B − A for every signal
    /// both logged, in one HTML report; prints the largest differences.
    Report(compare::CompareArgs),
    /// Run a parameter study: grids and/or sampled parameters, metrics per run, in parallel;
    /// writes sweep.csv, sweep.parquet and study.json.
    Sweep(study::SweepArgs),
    /// Join the shards of one study (directories written by `sweep --shard I/N`) into one table.
    SweepMerge {
        /// The shard directories.
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// Output directory. One that holds a study already is refused (exit 2) unless
        /// --force.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Replace the study in --out (its sweep.csv, sweep.parquet, study.json and runs/
        /// are removed first; other files are left).
        #[arg(long)]
        force: bool,
    },
    /// Re-plot saved results (a results.csv of `drivelink run`), or any CSV table against
    /// one of its columns (`--x NAME`, for example a sweep.csv).
    Plot {
        /// The results file or table; several results files with `--x` overlay their runs
        /// on one XY picture.
        #[arg(required = true, num_args = 1..)]
        results: Vec<PathBuf>,
        /// Comma-separated signal names (columns of the CSV).
        #[arg(long, value_delimiter = ',', required = true)]
        signals: Vec<String>,
        /// Display unit of every signal (rpm, km/h, deg, ...).
        #[arg(long)]
        unit: Option<String>,
        /// Output image (.png, or .svg for SVG).
        #[arg(long)]
        out: PathBuf,
        /// Title of the plot.
        #[arg(long)]
        title: Option<String>,
        /// Time window: start,end in seconds (for example 9.9,10.3).
        #[arg(long, value_name = "A,B", allow_hyphen_values = true)]
        xlim: Option<String>,
        /// Fixed y range: low,high in display units (for example -100,6000).
        #[arg(long, value_name = "A,B", allow_hyphen_values = true)]
        ylim: Option<String>,
        /// The column on the x axis (default: time). For a table (first column not `time`,
        /// such as a sweep.csv) rows are sorted by it; for results files it is an XY plot
        /// (`--x car.x --signals car.y`, equal axis scaling when the units agree), several
        /// results files overlaid on one picture.
        #[arg(long, value_name = "NAME")]
        x: Option<String>,
        /// Keep only the rows where column NAME has VALUE (with --x; repeatable).
        #[arg(long = "where", value_name = "NAME=VALUE")]
        filters: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Run(args) => run(&args),
        Command::Fmu(args) => fmu::export(&args),
        Command::Validate { model, set } => validate(&model, &set),
        Command::Diagram {
            model,
            out,
            expand,
            set,
        } => diagram(&model, out, expand, &set),
        Command::Blocks {
            type_name,
            markdown,
        } => match catalogue::blocks(type_name.as_deref(), markdown) {
            Ok(text) => console::print(&text),
            Err(msg) => {
                console::error(msg);
                2
            }
        },
        Command::Linearize(args) => linearize(&args),
        Command::Schema => {
            let reg = drivelink_blocks::registry();
            match serde_json::to_string_pretty(&netlist::schema::schema(&reg)) {
                Ok(s) => console::print(&format!("{s}\n")),
                Err(e) => {
                    console::error(e);
                    1
                }
            }
        }
        Command::Sweep(args) => study::sweep(&args),
        Command::Tire(args) => tire::tire(&args),
        Command::Report(args) => compare::run(&args),
        Command::SweepMerge { dirs, out, force } => study::merge(&dirs, &out, force),
        Command::Plot {
            results,
            signals,
            unit,
            out,
            title,
            xlim,
            ylim,
            x,
            filters,
        } => {
            let lims = (
                parse_lim("--xlim", xlim.as_deref()),
                parse_lim("--ylim", ylim.as_deref()),
            );
            match lims {
                (Ok(xlim), Ok(ylim)) => {
                    let view = drivelink_plots::View {
                        xlim,
                        x_title: x.clone(),
                    };
                    let opts = PlotOpts {
                        unit: unit.as_deref(),
                        out: &out,
                        title: title.as_deref(),
                        view: &view,
                        ylim,
                    };
                    plot(&results, &signals, x.as_deref(), &filters, &opts)
                }
                (x, y) => {
                    for e in [x.err(), y.err()].into_iter().flatten() {
                        eprintln!("error: {e}");
                    }
                    2
                }
            }
        }
    };
    ExitCode::from(code)
}

/// Print every individual error on its own line, naming the file when the error does not.
fn report(file: &str, e: &Error) {
    for line in e.lines(file) {
        console::error(line);
    }
}

/// Read a netlist, apply `--set` overrides and load it.
fn load(model: &Path, set: &[String]) -> Result<Diagram, Error> {
    load_noting(model, set, true)
}

/// [`load`]; `notes`: print the notes on `--set` values (false when the same netlist is
/// loaded a second time in one command, for the report's diagram).
fn load_noting(model: &Path, set: &[String], notes: bool) -> Result<Diagram, Error> {
    let origin = model.display().to_string();
    let bytes = std::fs::read(model).map_err(|e| Error::Io {
        path: origin.clone(),
        message: format!("{e}{}", shipped_hint(model, &e)),
    })?;
    let mut v = netlist::parse_text(&netlist::utf8_text(bytes, &origin)?, &origin)?;
    apply_sets(&mut v, set, &origin, notes)?;
    let base = model.parent().map(Path::to_path_buf).unwrap_or_default();
    netlist::load_value(&v, &origin, &base).map_err(|e| name_set_origin(e, set))
}

/// Errors at `parameters.NAME` of a parameter given by `--set NAME=VALUE` say so (the
/// value is the user's, not the file's).
fn name_set_origin(e: Error, set: &[String]) -> Error {
    match e {
        Error::Many(v) => Error::Many(v.into_iter().map(|e| name_set_origin(e, set)).collect()),
        Error::Netlist {
            file,
            path,
            message,
        } => {
            let given = set.iter().find(|s| {
                s.split_once('=')
                    .is_some_and(|(n, _)| path == format!("parameters.{}", n.trim()))
            });
            let path = match given {
                Some(s) => format!("{path} (from --set {s})"),
                None => path,
            };
            Error::Netlist {
                file,
                path,
                message,
            }
        }
        other => other,
    }
}

/// For a model file that does not exist: `"; did you mean models/netlists/NAME?"` when the
/// shipped example of that name exists, else `""`.
fn shipped_hint(model: &Path, e: &std::io::Error) -> String {
    if e.kind() != std::io::ErrorKind::NotFound {
        return String::new();
    }
    let Some(file) = model.file_name() else {
        return String::new();
    };
    let shipped = Path::new("models").join("netlists").join(file);
    if shipped.is_file() && shipped != model {
        format!("; did you mean {}?", shipped.display())
    } else {
        String::new()
    }
}

/// A note when `--set` replaces a value with a unit (`"5 N*m"`) by a bare number: the
/// number is taken in SI units.
fn bare_number_note(s: &str, name: &str, old: &Value, new: &Value) {
    let (Value::String(old), Value::Number(_)) = (old, new) else {
        return;
    };
    let Ok(q) = expr::eval(old, &|_| None) else {
        return;
    };
    if let Some(d) = q.dim.filter(|d| !d.is_dimensionless()) {
        let unit = d
            .derived_name()
            .map_or_else(|| d.to_string(), str::to_string);
        console::note(format_args!(
            "--set {s}: a bare number is taken in SI units ({unit}); the netlist gives \"{old}\"; give a unit as in --set \"{name}={new} <unit>\""
        ));
    }
}

/// `--set name=value`: replace a top-level parameter in the netlist JSON.
fn apply_sets(v: &mut Value, set: &[String], origin: &str, notes: bool) -> Result<(), Error> {
    let mut errors = Vec::new();
    for s in set {
        let bad = |message: String| Error::Netlist {
            file: origin.to_string(),
            path: format!("--set {s}"),
            message,
        };
        let Some((name, value)) = s.split_once('=') else {
            errors.push(bad("expected name=value".into()));
            continue;
        };
        let name = name.trim();
        let parsed = match serde_json::from_str::<Value>(value.trim()) {
            Ok(j @ (Value::Number(_) | Value::Bool(_) | Value::Array(_) | Value::String(_))) => j,
            _ => Value::String(value.trim().to_string()),
        };
        let parsed = from_working_directory(parsed);
        let params = v
            .as_object_mut()
            .and_then(|m| m.get_mut("parameters"))
            .and_then(Value::as_object_mut);
        match params {
            Some(p) if p.contains_key(name) => {
                if let Some(old) = p.get(name) {
                    if let Some(m) = drivelink_core::compile::unit_mismatch(name, old, &parsed) {
                        errors.push(bad(m));
                        continue;
                    }
                    if notes {
                        bare_number_note(s, name, old, &parsed);
                    }
                }
                p.insert(name.to_string(), parsed);
            }
            Some(p) => {
                let known: Vec<&str> = p.keys().map(String::as_str).collect();
                errors.push(bad(format!(
                    "unknown parameter '{name}'{}; the model's parameters are: {}",
                    drivelink_core::suggest::hint(name, known.iter().copied()),
                    if known.is_empty() {
                        "(none)".to_string()
                    } else {
                        known.join(", ")
                    }
                )));
            }
            None => errors.push(bad(format!(
                "unknown parameter '{name}': the model has no \"parameters\""
            ))),
        }
    }
    Error::from_list(errors)
}

/// A `--set` value naming an existing file by a relative path (`--set cycle=my.csv`) as
/// its absolute path: on the command line a path is the shell's, from the working
/// directory, while a relative path written in a netlist is taken from the netlist's
/// folder.
fn from_working_directory(v: Value) -> Value {
    match &v {
        Value::String(s) if Path::new(s).is_relative() && Path::new(s).is_file() => {
            std::fs::canonicalize(s).map_or(v, |p| Value::String(p.display().to_string()))
        }
        _ => v,
    }
}

fn build(model: &Path, set: &[String], stop_time: Option<&str>) -> Result<Model, Error> {
    build_run(model, set, stop_time).map(|(m, _)| m)
}

/// The netlist's `metrics` of a run: parsed, checked against the model, with the run's
/// parameter values they use.
#[derive(Default)]
struct RunMetrics {
    metrics: Vec<Metric>,
    params: drivelink_core::compile::Scope,
}

impl RunMetrics {
    /// The values for a finished run, in order.
    fn values(&self, res: &SimResult, audit: &drivelink_core::EnergyAudit) -> Vec<Cell> {
        metric::evaluate(&self.metrics, res, Some(audit), &self.params)
    }
}

/// A study error of the netlist's metrics as a model error (they are located at
/// `metrics.NAME` of `origin`).
fn metric_error(origin: &str, e: SweepError) -> Error {
    match e {
        SweepError::Model(e) => e,
        SweepError::Many(v) => {
            Error::Many(v.into_iter().map(|e| metric_error(origin, e)).collect())
        }
        other => Error::Netlist {
            file: origin.to_string(),
            path: "metrics".into(),
            message: other.to_string(),
        },
    }
}

/// [`build`], with the netlist's metrics: their signals are logged even when the netlist
/// does not log them.
fn build_run(
    model: &Path,
    set: &[String],
    stop_time: Option<&str>,
) -> Result<(Model, RunMetrics), Error> {
    let origin = model.display().to_string();
    let mut d = load(model, set)?;
    if let Some(t) = stop_time {
        let bad = |message: String| Error::Netlist {
            file: origin.clone(),
            path: "--stop-time".into(),
            message,
        };
        let q = expr::eval(t, &|_| None).map_err(|e| {
            bad(format!(
                "\"{t}\": {e}; expected a time such as 5 or \"5 s\""
            ))
        })?;
        let x = expr::check_dim(&q, Dim::TIME, "s").map_err(|e| bad(format!("\"{t}\": {e}")))?;
        if !x.is_finite() || x <= d.settings.start_time {
            return Err(bad(format!(
                "must be a finite time greater than the start time ({} s), got {x}",
                d.settings.start_time
            )));
        }
        d.set_stop_time(x);
    }
    let registry = drivelink_blocks::registry();
    if d.metrics.is_empty() {
        return netlist::compile_located(&d, &registry, &origin)
            .map(|m| (m, RunMetrics::default()));
    }
    let params = drivelink_core::compile::resolve_parameters(
        &d.parameters,
        &drivelink_core::compile::Scope::new(),
        &origin,
    )?;
    let mut metrics = metric::netlist_metrics(&d, &origin).map_err(|e| metric_error(&origin, e))?;
    metric::resolve(&mut metrics, &params).map_err(|e| metric_error(&origin, e))?;
    let compiled = drivelink_sweep::study::compile_for_metrics(d, &registry, &origin, &metrics)
        .map_err(|e| metric_error(&origin, e))?;
    let m = compiled
        .with_params(&registry, &[])
        .map_err(|e| netlist::locate_error(compiled.diagram(), &registry, &origin, e))?;
    Ok((m, RunMetrics { metrics, params }))
}

/// Arguments of `drivelink linearize`.
#[derive(clap::Args, Debug)]
struct LinearizeArgs {
    /// The model netlist (JSON).
    model: PathBuf,
    /// Signal inputs to open, `block.port` (comma-separated): cut from their drivers at the
    /// operating point and taken as the inputs u.
    #[arg(long, value_delimiter = ',', value_name = "BLOCK.PORT,...")]
    inputs: Vec<String>,
    /// Variables to output, `block.var` (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "BLOCK.VAR,...")]
    outputs: Vec<String>,
    /// Linearize at this time (seconds, or an expression such as "25 s"): the model runs
    /// there first. Default: the consistent initial state.
    #[arg(long, value_name = "T")]
    at: Option<String>,
    /// Override a top-level parameter (as for `run`).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Also write the JSON to this file.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

fn linearize(args: &LinearizeArgs) -> u8 {
    let origin = args.model.display().to_string();
    let mut m = match build(&args.model, &args.set, None) {
        Ok(m) => m,
        Err(e) => {
            report(&origin, &e);
            return 2;
        }
    };
    let at = match args.at.as_deref() {
        None => None,
        Some(t) => match expr::eval(t, &|_| None)
            .map_err(|e| e.to_string())
            .and_then(|q| expr::check_dim(&q, Dim::TIME, "s").map_err(|e| e.to_string()))
        {
            Ok(x) if x.is_finite() => Some(x),
            Ok(x) => {
                console::error(format_args!("{origin}: --at: must be finite, got {x}"));
                return 2;
            }
            Err(e) => {
                console::error(format_args!("{origin}: --at: \"{t}\": {e}"));
                return 2;
            }
        },
    };
    // The operating point is where asked, even past the netlist's stop time: say so.
    if let Some(t) = at.filter(|&t| t > m.settings().stop_time) {
        console::note(format_args!(
            "{origin}: --at {t} s is past solver.stop_time ({} s); the model is run on to {t} s",
            m.settings().stop_time
        ));
    }
    let lin = match m.linearize(at, &args.inputs, &args.outputs) {
        Ok(l) => l,
        Err(e) => {
            report(&origin, &e);
            return 2;
        }
    };
    let text = match serde_json::to_string_pretty(&lin.to_json()) {
        Ok(t) => t + "\n",
        Err(e) => {
            console::error(e);
            return 1;
        }
    };
    if let Some(path) = &args.out {
        if let Err(e) = std::fs::write(path, &text) {
            console::error(format_args!("cannot write {}: {e}", path.display()));
            return 1;
        }
    }
    console::print(&text)
}

/// What compiling found and the blocks' warnings about their starting poses, one line each.
fn print_warnings(origin: &str, m: &Model) {
    let compile = m.plan().warnings().iter().map(|w| w.to_string());
    for w in compile.chain(m.start_warnings().iter().cloned()) {
        console::warning(format_args!("{origin}: {w}"));
    }
}

fn validate(model: &Path, set: &[String]) -> u8 {
    let origin = model.display().to_string();
    match build(model, set, None) {
        Ok(m) => {
            print_warnings(&origin, &m);
            console::print(&format!(
                "ok: {} ({} blocks, {} states)\n",
                m.name(),
                m.plan().blocks().len(),
                m.plan().n_states()
            ))
        }
        Err(e) => {
            report(&origin, &e);
            2
        }
    }
}

/// A directory name from a model name (path separators and control characters replaced).
fn dir_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    match s.as_str() {
        "" | "." | ".." => "model".to_string(),
        _ => s,
    }
}

/// Arguments of `drivelink run`.
#[derive(clap::Args, Debug)]
struct RunArgs {
    /// The model netlist (JSON).
    model: PathBuf,
    /// Output directory (default: out/<model name>/).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Override solver.stop_time (seconds, or an expression such as "2 min").
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    stop_time: Option<String>,
    /// Override a top-level parameter: name=value (a JSON number, boolean or array, else an expression string such as "4500 rpm", or a word for a choice parameter).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Also write an SVG per scope.
    #[arg(long)]
    svg: bool,
    /// Do not render the scopes.
    #[arg(long)]
    no_plots: bool,
    /// Do not write report.html (the interactive run report).
    #[arg(long)]
    no_report: bool,
    /// End the run as failed (partial results written) after this much wall time (seconds, or an expression such as "2 min").
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    timeout: Option<String>,
}

fn run(args: &RunArgs) -> u8 {
    let RunArgs {
        model,
        out,
        stop_time,
        set,
        svg,
        no_plots,
        no_report,
        timeout,
    } = args;
    let (model, out, stop_time, svg, no_plots, no_report) = (
        model.as_path(),
        out.clone(),
        stop_time.as_deref(),
        *svg,
        *no_plots,
        *no_report,
    );
    let origin = model.display().to_string();
    // A wall-clock time, with a unit like --stop-time ("90 s", "2 min").
    let timeout = match timeout.as_deref().map(|t| {
        let x = expr::eval(t, &|_| None)
            .map_err(|e| e.to_string())
            .and_then(|q| expr::check_dim(&q, Dim::TIME, "s").map_err(|e| e.to_string()))?;
        if x.is_finite() && x > 0.0 {
            Ok(x)
        } else {
            Err(format!("must be positive, got {x}"))
        }
    }) {
        None => None,
        Some(Ok(x)) => Some(x),
        Some(Err(e)) => {
            console::error(format_args!(
                "--timeout {}: {e}; expected a positive wall time such as 30 or \"2 min\"",
                args.timeout.as_deref().unwrap_or_default()
            ));
            return 2;
        }
    };
    let (mut m, metrics) = match build_run(model, set, stop_time) {
        Ok(m) => m,
        Err(e) => {
            report(&origin, &e);
            return 2;
        }
    };
    print_warnings(&origin, &m);
    let dir = out.unwrap_or_else(|| Path::new("out").join(dir_name(m.name())));
    let bar = progress_bar(&mut m);
    let mut settings = m.settings().clone();
    if timeout.is_some() {
        settings.timeout = timeout;
    }
    m.set_cancel(interrupt_flag());
    let res = m.run_with(&settings);
    let t0 = m.settings().start_time;
    for e in res
        .events
        .iter()
        .filter(|e| e.time == t0 && e.kind == drivelink_core::EventTag::Impact)
    {
        console::warning(format_args!("{origin}: at t = {t0} s: {}", e.detail));
    }
    let audit = m.energy_audit();
    for (name, created) in audit.energy_created() {
        console::warning(format_args!(
            "{origin}: energy audit: '{name}' delivered {created:.6e} J although it is no source (its loss is negative beyond the solver tolerance); check its parameters and what drives it"
        ));
    }
    let energy = energy_json(&audit);
    let values = metrics.values(&res, &audit);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut code = match res.status {
        RunStatus::Completed | RunStatus::Stopped => 0,
        // Ended by Ctrl-C: the shell's code for SIGINT, after the results are written.
        RunStatus::Failed if res.message.contains(INTERRUPTED) => 130,
        RunStatus::Failed => 1,
    };
    let mut extra = vec![("energy", energy)];
    if !metrics.metrics.is_empty() {
        extra.push(("metrics", metric::values_json(&metrics.metrics, &values)));
    }
    let written = write_tables(&res, &dir, extra);
    if let Err(msg) = &written {
        console::error(msg);
        code = 1;
    }
    // (No plots or report in a directory the results could not be written to: that error
    // said it.) The plots and the report read the same finished result and write different
    // files: the plots are drawn on a thread of their own while this one writes the report.
    if written.is_ok() {
        let (plots, report) = std::thread::scope(|s| {
            let plots = (!no_plots).then(|| s.spawn(|| write_plots(&res, &dir, svg)));
            let report = (!no_report).then(|| write_run_report(model, set, &res, &audit, &dir));
            let plots = plots.map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("drawing the scopes failed unexpectedly".into()))
            });
            (plots, report)
        });
        for msg in [plots, report]
            .into_iter()
            .flatten()
            .filter_map(Result::err)
        {
            console::error(msg);
            code = 1;
        }
    }
    if res.status == RunStatus::Failed {
        console::error(format_args!("{origin}: simulation failed: {}", res.message));
    }
    let destination = match written {
        Ok(()) => format!("-> {}", dir.display()),
        Err(_) => "; results not written (see the error above)".to_string(),
    };
    // The instants of the logged events (the initial one included; the solver's event
    // count in summary.json also has the instants that logged nothing).
    let mut instants: Vec<u64> = res.events.iter().map(|e| e.time.to_bits()).collect();
    instants.sort_unstable();
    instants.dedup();
    let line = format!(
        "{}: {} at t = {} s ({} steps, {} events logged at {} event instants, {:.3} s wall) {destination}\n",
        res.model,
        res.status.as_str(),
        res.end_time,
        res.stats.steps,
        res.events.len(),
        instants.len(),
        res.wall_time_s,
    );
    let line = line + &metrics_text(&metrics.metrics, &values, m.plan());
    code.max(console::print(&line))
}

/// The metrics as `run` prints them: one `  NAME = VALUE UNIT` line each, under
/// `metrics:` (nothing without metrics).
fn metrics_text(metrics: &[Metric], values: &[Cell], plan: &drivelink_core::Plan) -> String {
    if metrics.is_empty() {
        return String::new();
    }
    let width = metrics.iter().map(|m| m.name.len()).max().unwrap_or(0);
    let mut text = String::from("metrics:\n");
    for (m, v) in metrics.iter().zip(values) {
        let (value, unit) = match v {
            Cell::Float(x) => (
                drivelink_core::result::Num(*x).to_string(),
                m.unit(plan).filter(|u| x.is_finite() && u != "1"),
            ),
            Cell::Int(i) => (i.to_string(), None),
            Cell::Text(t) => (t.clone(), None),
        };
        let unit = unit.map(|u| format!(" {u}")).unwrap_or_default();
        text += &format!("  {:width$} = {value}{unit}\n", m.name);
    }
    text
}

/// The flag the first Ctrl-C sets: the run ends at its next step as failed
/// ("interrupted") and its results so far are written, as after `--timeout`. A second
/// Ctrl-C ends the process at once, after removing the directories its FMU blocks
/// unpacked (the models are not dropped then). Without a handler (one could not be
/// installed) the flag is never set and Ctrl-C ends the process as usual.
pub(crate) fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let set = flag.clone();
    let installed = ctrlc::set_handler(move || {
        if set.swap(true, Ordering::Relaxed) {
            drivelink_fmu_import::archive::remove_unpacked();
            std::process::exit(130);
        }
    });
    if installed.is_err() {
        // Already installed (a second run in this process) or not possible: keep the
        // default behaviour.
        return Arc::new(AtomicBool::new(false));
    }
    flag
}

/// A progress bar on stderr, shown only on a terminal and only once a run has taken ~1 s.
fn progress_bar(m: &mut Model) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let (t0, t1) = (m.settings().start_time, m.settings().stop_time);
    let span = t1 - t0;
    if !(span > 0.0 && span.is_finite()) {
        return None;
    }
    const TICKS: u64 = 1000;
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(TICKS),
        indicatif::ProgressDrawTarget::hidden(),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{bar:40}] {percent:>3}% t = {msg} s",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    let handle = bar.clone();
    let start = Instant::now();
    let mut shown = false;
    let mut calls: u64 = 0;
    m.set_progress(Box::new(move |t| {
        calls += 1;
        if !calls.is_multiple_of(64) {
            return;
        }
        if !shown {
            if start.elapsed() < Duration::from_secs(1) {
                return;
            }
            handle.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            shown = true;
        }
        let f = ((t - t0) / span).clamp(0.0, 1.0);
        handle.set_position((f * TICKS as f64) as u64);
        handle.set_message(format!("{t:.3}"));
    }));
    Some(bar)
}

/// The energy audit as it appears in `summary.json` (J).
fn energy_json(a: &drivelink_core::EnergyAudit) -> Value {
    a.to_json()
}

/// Writes `results.csv`, `events.csv` and `summary.json` (with `extra` added to the
/// summary) into `dir`, created if need be.
fn write_tables(res: &SimResult, dir: &Path, extra: Vec<(&str, Value)>) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create output directory {}: {e}", dir.display()))?;
    let create = |name: &str| {
        let p = dir.join(name);
        std::fs::File::create(&p)
            .map_err(|e| format!("cannot write {}: {e}", p.display()))
            .map(|f| (f, p))
    };
    let (f, p) = create("results.csv")?;
    res.write_csv(f)
        .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    let (f, p) = create("events.csv")?;
    res.write_events_csv(f)
        .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    let p = dir.join("summary.json");
    let mut summary = res.summary_json();
    if let Value::Object(map) = &mut summary {
        for (key, v) in extra {
            map.insert(key.into(), v);
        }
    }
    let mut text = serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?;
    text.push('\n');
    std::fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))
}

/// The run's scopes as pictures in `dir` (none without scopes or samples).
fn write_plots(res: &SimResult, dir: &Path, svg: bool) -> Result<(), String> {
    if res.scopes.is_empty() {
        return Ok(());
    }
    if res.time.is_empty() {
        console::warning("no samples were recorded; scopes not drawn");
        return Ok(());
    }
    drivelink_plots::write_scopes(res, &res.scopes, dir, svg)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// How `drivelink plot` draws and where it writes.
struct PlotOpts<'a> {
    unit: Option<&'a str>,
    out: &'a Path,
    title: Option<&'a str>,
    view: &'a drivelink_plots::View,
    ylim: Option<(f64, f64)>,
}

/// Whether the first header cell of a CSV file is `time` (a `results.csv`).
fn first_column_is_time(path: &Path) -> bool {
    use std::io::BufRead;
    let Ok(f) = std::fs::File::open(path) else {
        return true;
    };
    let mut line = String::new();
    let _ = std::io::BufReader::new(f).read_line(&mut line);
    line.split(',').next().map(str::trim) == Some("time")
}

/// Several runs on one XY picture: one result whose rows are the runs' rows one after the
/// other (a NaN row between runs breaks the lines), with the abscissa as column `x` and
/// each run's signals as `<run>: <signal>` (NaN outside the run's rows). A run is named
/// after its results file's directory (`out/vd_turn_open/results.csv` -> `vd_turn_open`).
fn overlay(paths: &[PathBuf], runs: &[SimResult], x: &str, names: &[&str]) -> SimResult {
    let label = |p: &Path| {
        p.parent()
            .and_then(|d| d.file_name())
            .or_else(|| p.file_stem())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "run".into())
    };
    let mut cols = vec![x.to_string()];
    for (i, p) in paths.iter().enumerate() {
        let l = label(p);
        let l = if paths[..i].iter().any(|q| label(q) == l) {
            format!("{l} ({})", i + 1)
        } else {
            l
        };
        cols.extend(names.iter().map(|n| format!("{l}: {n}")));
    }
    let mut out = SimResult::new("overlay", cols);
    // Each overlaid column keeps its run's unit (the abscissa that of the first run).
    let unit_of = |r: &SimResult, n: &str| -> Option<String> {
        if n == "time" {
            return Some("s".into());
        }
        r.index_of(n)
            .and_then(|k| r.units.get(k).cloned().flatten())
    };
    out.units = std::iter::once(runs.first().and_then(|r| unit_of(r, x)))
        .chain(
            runs.iter()
                .flat_map(|r| names.iter().map(move |n| unit_of(r, n))),
        )
        .collect();
    for (i, r) in runs.iter().enumerate() {
        if i > 0 {
            out.time.push(f64::NAN);
            out.columns.iter_mut().for_each(|c| c.push(f64::NAN));
        }
        let rows = r.time.len();
        out.time.extend_from_slice(&r.time);
        if x == "time" {
            out.columns[0].extend_from_slice(&r.time);
        } else {
            out.columns[0].extend_from_slice(r.get(x).unwrap_or(&[]));
        }
        for (j, col) in out.columns.iter_mut().enumerate().skip(1) {
            let (run, k) = ((j - 1) / names.len(), (j - 1) % names.len());
            match r.get(names[k]) {
                Some(v) if run == i => col.extend_from_slice(v),
                _ => col.extend(std::iter::repeat_n(f64::NAN, rows)),
            }
        }
    }
    out
}

fn plot(
    results: &[PathBuf],
    signals: &[String],
    x: Option<&str>,
    filters: &[String],
    o: &PlotOpts<'_>,
) -> u8 {
    let is_svg = match o
        .out
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .as_deref()
    {
        Some("svg") => true,
        Some("png") => false,
        _ => {
            console::error(format_args!(
                "--out {}: expected an image file name ending in .png or .svg",
                o.out.display()
            ));
            return 2;
        }
    };
    let names: Vec<&str> = signals
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    if names.is_empty() {
        console::error("--signals: expected one or more comma-separated signal names");
        return 2;
    }
    let table = results.iter().find(|p| !first_column_is_time(p));
    if results.len() > 1 && (x.is_none() || table.is_some()) {
        console::error(
            "several files are overlaid only as results files (first column `time`) with --x: --x time against time, --x SIGNAL as an XY plot (for example --x car.x)",
        );
        return 2;
    }
    if !filters.is_empty() && table.is_none() {
        console::error(
            "--where: filters rows of a table (a CSV whose first column is not `time`, such as sweep.csv) plotted with --x NAME",
        );
        return 2;
    }
    // What is drawn: the result, the columns shown, and the XY abscissa if any.
    let (res, shown, xy) = match plot_data(results, &names, x, table, filters) {
        Ok(d) => d,
        Err(code) => return code,
    };
    if let Some(u) = o.unit {
        if let Err(code) = check_plot_unit(results, &names, u, table.is_none()) {
            return code;
        }
    }
    if let Some(xlim) = o.view.xlim {
        warn_empty_window(&res, xy, xlim);
    }
    let stem = o
        .out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plot".into());
    let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
    let mut scope = drivelink_plots::quick_scope(&stem, &shown, o.unit);
    scope.title = Some(
        o.title
            .map_or_else(|| default_title(&names, xy, results), str::to_string),
    );
    scope.ylim = o.ylim;
    scope.x = xy.map(str::to_string);
    // Without --unit every signal shows in its recorded SI unit: two units take the left
    // and right axes, and the axes say what they are.
    if o.unit.is_none() {
        for sig in scope.panels.iter_mut().flatten() {
            let si = res
                .index_of(&sig.signal)
                .and_then(|k| res.units.get(k).cloned().flatten());
            sig.unit = si.filter(|u| drivelink_core::DisplayUnit::parse(u).is_some());
        }
    }
    // Results files name the abscissa with its unit (a table names its column).
    let results_view;
    let view = if table.is_none() {
        results_view = drivelink_plots::View {
            xlim: o.view.xlim,
            x_title: None,
        };
        &results_view
    } else {
        o.view
    };
    let bytes = if is_svg {
        drivelink_plots::render_scope_svg_view(&res, &scope, view).map(String::into_bytes)
    } else {
        drivelink_plots::render_scope_png_view(&res, &scope, view)
    };
    let bytes = match bytes {
        Ok(b) => b,
        Err(e) => {
            console::error(e);
            return 2;
        }
    };
    let out = o.out;
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        if let Err(e) = std::fs::create_dir_all(parent) {
            console::error(format_args!("cannot create {}: {e}", parent.display()));
            return 1;
        }
    }
    if let Err(e) = std::fs::write(out, bytes) {
        console::error(format_args!("cannot write {}: {e}", out.display()));
        return 1;
    }
    console::print(&format!("wrote {}\n", out.display()))
}

/// A plot's title from what it shows: the signals (`engine.w, engine.tau`), against the
/// abscissa for an XY plot (`car.y vs car.x`), and the runs when several are overlaid.
fn default_title(names: &[&str], xy: Option<&str>, results: &[PathBuf]) -> String {
    let mut t = names.join(", ");
    if let Some(x) = xy.filter(|&x| x != "time") {
        t = format!("{t} vs {x}");
    }
    if results.len() > 1 {
        let runs: Vec<String> = results
            .iter()
            .map(|p| {
                p.parent().and_then(|d| d.file_name()).map_or_else(
                    || p.display().to_string(),
                    |d| d.to_string_lossy().into_owned(),
                )
            })
            .collect();
        t = format!("{t}: {}", runs.join(", "));
    }
    t
}

/// What `plot` draws: the result (a table's rows, one results file, or several overlaid
/// against `--x`), the columns shown, and the XY abscissa if any. `Err` is the exit code
/// (the message printed).
fn plot_data<'a>(
    results: &[PathBuf],
    names: &[&str],
    x: Option<&'a str>,
    table: Option<&PathBuf>,
    filters: &[String],
) -> Result<(SimResult, Vec<String>, Option<&'a str>), u8> {
    Ok(match (x, table) {
        (Some(x), Some(table)) => {
            let spec = table_plot::TablePlot {
                x,
                signals: names,
                filters,
            };
            match table_plot::load(table, &spec) {
                Ok(r) => (r, names.iter().map(|n| n.to_string()).collect(), None),
                Err(e) => return Err(table_plot::fail(e)),
            }
        }
        (None, Some(table)) => {
            console::error(format_args!(
                "{}: the first column is not `time`; plot a table against one of its columns with --x NAME",
                table.display()
            ));
            return Err(2);
        }
        (x, None) => {
            // `--x time` on results files is the time axis: a single file plots as without
            // `--x`, several are overlaid against their own times.
            let x = x.filter(|&xn| !(xn == "time" && results.len() == 1));
            let wanted: Vec<&str> = names
                .iter()
                .copied()
                .chain(x.filter(|&xn| xn != "time"))
                .collect();
            let mut runs = Vec::with_capacity(results.len());
            for p in results {
                match read_results(p, &wanted) {
                    Ok(r) => runs.push(r),
                    Err(code) => return Err(code),
                }
            }
            match x {
                Some(xn) if runs.len() > 1 => {
                    let merged = overlay(results, &runs, xn, names);
                    let shown = merged.names[1..].to_vec();
                    (merged, shown, Some(xn))
                }
                _ => (
                    runs.swap_remove(0),
                    names.iter().map(|n| n.to_string()).collect(),
                    x,
                ),
            }
        }
    })
}

/// `--unit u`: a known display unit, and (for results files, `results_files`) one that
/// fits the signals' recorded units. `Err` is the exit code (the message printed).
fn check_plot_unit(
    results: &[PathBuf],
    names: &[&str],
    u: &str,
    results_files: bool,
) -> Result<(), u8> {
    let Some(du) = drivelink_core::DisplayUnit::parse(u) else {
        let known = drivelink_core::DisplayUnit::names();
        console::error(format_args!(
            "--unit: unknown display unit '{u}'{}; expected one of: {}",
            drivelink_core::suggest::hint(u, known.iter().copied()),
            known.join(", ")
        ));
        return Err(2);
    };
    // Results files carry their units in the summary.json beside them.
    if results_files {
        if let Err(msg) = check_unit_fits(results, names, u, &du) {
            console::error(msg);
            return Err(2);
        }
    }
    Ok(())
}

/// A window that holds no sample draws empty axes: say why (a warning; the plot is still
/// written).
fn warn_empty_window(res: &SimResult, xy: Option<&str>, (a, b): (f64, f64)) {
    let xs: &[f64] = match xy {
        Some(xn) => res.get(xn).unwrap_or(&[]),
        None => &res.time,
    };
    if !xs.iter().any(|&x| x >= a && x <= b) {
        let (lo, hi) = xs
            .iter()
            .filter(|x| x.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
                (l.min(x), h.max(x))
            });
        console::warning(format_args!(
            "--xlim {a},{b}: no sample in that window (the data spans {lo} to {hi}); the plot is empty"
        ));
    }
}

/// Whether display unit `du` (written `u`) fits every signal of `names` whose SI unit the
/// `summary.json` beside each results file records (a signal or a file without a
/// recorded unit is not checked). The error names the signal, its unit and the file.
fn check_unit_fits(
    results: &[PathBuf],
    names: &[&str],
    u: &str,
    du: &drivelink_core::DisplayUnit,
) -> Result<(), String> {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    for p in results {
        for (n, si) in names.iter().zip(recorded_units(p, &names)) {
            if let Some(si) = si.filter(|si| !du.fits(si)) {
                return Err(format!(
                    "--unit {u}: '{n}' is in {si} (as {} records), which {u} cannot display; give a unit of the same kind, or plot it separately",
                    p.with_file_name("summary.json").display()
                ));
            }
        }
    }
    Ok(())
}

/// The SI units of the columns `names` of a results file, as the `summary.json` beside it
/// records them (`units`); empty when there is none (a table of another origin).
pub(crate) fn recorded_units(results: &Path, names: &[String]) -> Vec<Option<String>> {
    let Some(units) = std::fs::read_to_string(results.with_file_name("summary.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.get("units").cloned())
    else {
        return Vec::new();
    };
    names
        .iter()
        .map(|n| units.get(n).and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// Read a `results.csv` and check that it has the `names` columns (exit code 2 otherwise).
fn read_results(results: &Path, names: &[&str]) -> Result<SimResult, u8> {
    let file = std::fs::File::open(results).map_err(|e| {
        console::error(format_args!("cannot read {}: {e}", results.display()));
        2
    })?;
    let mut res = SimResult::read_csv(std::io::BufReader::new(file), "results").map_err(|e| {
        console::error(format_args!("{}: {e}", results.display()));
        2
    })?;
    res.units = recorded_units(results, &res.names);
    let mut bad = false;
    for n in names {
        if res.index_of(n).is_none() {
            console::error(format_args!(
                "{}: no column '{n}'{}; columns are: {}",
                results.display(),
                drivelink_core::suggest::hint(n, res.names.iter().map(String::as_str)),
                res.names.join(", ")
            ));
            bad = true;
        }
    }
    if bad {
        Err(2)
    } else {
        Ok(res)
    }
}

// ---- report.html, `diagram`, `plot --xlim/--ylim` (drivelink-report) ----

/// `--xlim A,B` / `--ylim A,B`: two finite numbers, low < high.
fn parse_lim(flag: &str, text: Option<&str>) -> Result<Option<(f64, f64)>, String> {
    let Some(text) = text else {
        return Ok(None);
    };
    let bad = || {
        format!(
            "{flag} {text}: expected two numbers low,high with low < high (for example 9.9,10.3)"
        )
    };
    let (a, b) = text.split_once(',').ok_or_else(bad)?;
    let (a, b): (f64, f64) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if a.is_finite() && b.is_finite() && a < b {
        Ok(Some((a, b)))
    } else {
        Err(bad())
    }
}

/// The diagram drawings of a netlist (all levels), with the block library's ports.
fn draw_diagram(
    d: &Diagram,
    links: drivelink_report::Links,
    expand: bool,
) -> Result<drivelink_report::Drawing, drivelink_report::ReportError> {
    let ports = drivelink_report::PortTable::from_registry(d, &drivelink_blocks::registry());
    drivelink_report::diagram::render(
        d,
        &ports,
        &drivelink_report::DiagramOptions { expand, links },
    )
}

/// Writes `dir/report.html` for a finished run (the diagram is drawn from the netlist).
fn write_run_report(
    model: &Path,
    set: &[String],
    res: &SimResult,
    audit: &drivelink_core::EnergyAudit,
    dir: &Path,
) -> Result<(), String> {
    let drawing = match load_noting(model, set, false) {
        Ok(d) => match draw_diagram(&d, drivelink_report::Links::Anchors, true) {
            Ok(drawing) => Some(drawing),
            Err(e) => {
                eprintln!("warning: report: block diagram left out: {e}");
                None
            }
        },
        Err(_) => None,
    };
    if let Some(dr) = &drawing {
        for w in &dr.warnings {
            eprintln!("warning: diagram: {w}");
        }
    }
    let input = drivelink_report::ReportInput {
        result: res,
        scopes: &res.scopes,
        energy: Some(audit),
        diagram: drawing.as_ref().map(|d| d.levels.as_slice()),
    };
    drivelink_report::write_report(&input, &dir.join("report.html")).map_err(|e| e.to_string())
}

/// `drivelink diagram MODEL.json --out model.svg [--expand]`.
fn diagram(model: &Path, out: Option<PathBuf>, expand: bool, set: &[String]) -> u8 {
    let origin = model.display().to_string();
    let d = match load(model, set) {
        Ok(d) => d,
        Err(e) => {
            report(&origin, &e);
            return 2;
        }
    };
    let out = out.unwrap_or_else(|| {
        let stem = model
            .file_stem()
            .map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
        PathBuf::from(format!("{stem}.svg"))
    });
    let stem = out
        .file_stem()
        .map_or_else(|| "diagram".into(), |s| s.to_string_lossy().into_owned());
    let files = drivelink_report::Links::Files(stem);
    let links = if expand {
        files.clone()
    } else {
        drivelink_report::Links::None
    };
    let drawing = match draw_diagram(&d, links, expand) {
        Ok(dr) => dr,
        Err(e) => {
            eprintln!("error: {origin}: {e}");
            return 1;
        }
    };
    for w in &drawing.warnings {
        eprintln!("warning: {origin}: {w}");
    }
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf);
    if let Some(p) = &parent {
        if let Err(e) = std::fs::create_dir_all(p) {
            eprintln!("error: cannot create {}: {e}", p.display());
            return 1;
        }
    }
    let mut written = Vec::new();
    for level in &drawing.levels {
        let path = if level.path.is_empty() {
            out.clone()
        } else {
            let name = files.href(&level.path).unwrap_or_default();
            parent.clone().unwrap_or_default().join(name)
        };
        if let Err(e) = std::fs::write(&path, &level.svg) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return 1;
        }
        written.push(path.display().to_string());
    }
    println!("wrote {}", written.join(", "));
    0
}
