//! `drivelink sweep` and `drivelink sweep-merge`: parameter studies from the command line
//! (the work is done by `drivelink-sweep`; this module parses options, shows progress and
//! prints the outcome).

use std::io::IsTerminal;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

use drivelink_sweep::{Cell, Sampling, Study, StudyArgs, SweepError};

use crate::console;

/// Arguments of `drivelink sweep`.
#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    /// The model netlist (JSON).
    #[arg(required_unless_present = "resume")]
    pub model: Option<PathBuf>,
    /// A swept parameter: NAME=START:STOP:COUNT (COUNT equally spaced values, both ends
    /// included; START/STOP may carry units: clutchRise=0.1 s:0.5 s:25) or NAME=[v1,v2,...].
    /// Several grids form the full factorial (the last varies fastest).
    #[arg(long, value_name = "NAME=SPEC")]
    pub grid: Vec<String>,
    /// A sampled parameter: NAME=uniform(a,b), NAME=normal(mu,sigma) or
    /// NAME=lognormal(mu,sigma) (mu, sigma of ln(value in SI)); needs --samples.
    #[arg(long, value_name = "NAME=DIST")]
    pub dist: Vec<String>,
    /// Number of sampled points (crossed with every grid point).
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,
    /// Seed of the sampling (the same seed gives the same points on every machine).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Sampling design: lhs (Latin hypercube) or random.
    #[arg(long, default_value = "lhs", value_parser = ["lhs", "random"])]
    pub sampling: String,
    /// A metric column: NAME=EXPR in the metric language (docs/sweep.md): end_time,
    /// status, max/min/mean/integral(SIG [, T0, T1]), final(SIG), at(SIG, TIME),
    /// first_time(COND [, T0, T1]), count, first_peak, time_of_max/min, slope(Y, X, X0, X1),
    /// event_time(BLOCK, KIND, N), energy(ELEMENT), combined with + - * / and comparisons.
    /// The netlist's "metrics" are the default columns; a --metric of the same NAME
    /// replaces one of them in place, others are added.
    #[arg(long = "metric", value_name = "NAME=EXPR")]
    pub metrics: Vec<String>,
    /// A value for every run (as for `run --set`).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Override solver.stop_time (seconds, or an expression such as "20 s").
    #[arg(long, value_name = "T")]
    pub stop_time: Option<String>,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Run only slice I (0-based) of N equal slices of the runs (Slurm job arrays,
    /// Kubernetes indexed jobs); join the slices with `drivelink sweep-merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Also write each run's results.csv, events.csv and summary.json under DIR/runs/NNNNNN/.
    #[arg(long)]
    pub keep_results: bool,
    /// Output directory (default: out/<model name>_sweep/). One that holds a study
    /// already is refused (exit 2) unless --force.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Replace the study in --out (its sweep.csv, sweep.parquet, study.json and runs/ are
    /// removed first; other files are left).
    #[arg(long)]
    pub force: bool,
    /// Finish the study in DIR that Ctrl-C cut short (its study.json says "interrupted":
    /// true): the runs it lacks are run with the netlist and arguments it records, and
    /// the table is written again, complete.
    #[arg(long, value_name = "DIR", conflicts_with_all = [
        "model", "grid", "dist", "samples", "metrics", "set", "stop_time", "shard", "out", "force",
    ])]
    pub resume: Option<PathBuf>,
}

/// Print a study error, one line per problem, naming the netlist for model errors.
fn report(origin: &str, e: &SweepError) {
    for line in e.lines(origin) {
        console::error(line);
    }
}

/// `drivelink sweep`.
pub fn sweep(a: &SweepArgs) -> u8 {
    let model = match (&a.resume, &a.model) {
        (Some(dir), _) => return resume(dir, a.jobs, a.keep_results),
        (None, Some(m)) => m,
        (None, None) => {
            console::error("a model netlist is required (or --resume DIR)");
            return 2;
        }
    };
    let origin = model.display().to_string();
    let shard = match a.shard.as_deref().map(drivelink_sweep::parse_shard) {
        Some(Err(e)) => {
            report(&origin, &e);
            return 2;
        }
        Some(Ok(s)) => Some(s),
        None => None,
    };
    if a.jobs == Some(0) {
        console::error("--jobs 0: expected a number of worker threads >= 1");
        return 2;
    }
    let diagram = match crate::load(model, &[]) {
        Ok(d) => d,
        Err(e) => {
            crate::report(&origin, &e);
            return 2;
        }
    };
    let args = StudyArgs {
        grid: a.grid.clone(),
        dist: a.dist.clone(),
        samples: a.samples,
        seed: a.seed,
        sampling: if a.sampling == "random" {
            Sampling::Random
        } else {
            Sampling::Lhs
        },
        metrics: a.metrics.clone(),
        set: a.set.clone(),
        stop_time: a.stop_time.clone(),
    };
    let study = match Study::new(&diagram, drivelink_blocks::registry(), &origin, args) {
        Ok(s) => s.with_cancel(crate::interrupt_flag()),
        Err(e) => {
            report(&origin, &e);
            return 2;
        }
    };
    let runs = match shard {
        Some((i, n)) => drivelink_sweep::shard_range(study.n_runs(), i, n),
        None => 0..study.n_runs(),
    };
    let dir = a.out.clone().unwrap_or_else(|| {
        Path::new("out").join(format!(
            "{}_sweep",
            crate::dir_name(&study.compiled().diagram().name)
        ))
    });
    if let Err(e) = drivelink_sweep::prepare_out_dir(&dir, a.force) {
        report(&origin, &e);
        return match e {
            SweepError::Io { .. } => 1,
            _ => 2,
        };
    }
    execute(
        &study,
        &origin,
        Plan {
            todo: runs.clone().collect(),
            runs,
            done: Vec::new(),
            shard,
            dir,
            jobs: a.jobs.unwrap_or(0),
            keep: a.keep_results,
        },
    )
}

/// `drivelink sweep --resume DIR`.
fn resume(dir: &Path, jobs: Option<usize>, keep: bool) -> u8 {
    if jobs == Some(0) {
        console::error("--jobs 0: expected a number of worker threads >= 1");
        return 2;
    }
    let origin = format!("--resume {}", dir.display());
    let before = match drivelink_sweep::read_interrupted(dir) {
        Ok(r) => r,
        Err(e) => {
            report(&origin, &e);
            return 2;
        }
    };
    let origin = before.model.display().to_string();
    let diagram = match crate::load(&before.model, &[]) {
        Ok(d) => d,
        Err(e) => {
            crate::report(&origin, &e);
            return 2;
        }
    };
    let study = match Study::new(
        &diagram,
        drivelink_blocks::registry(),
        &origin,
        before.args.clone(),
    ) {
        Ok(s) => s.with_cancel(crate::interrupt_flag()),
        Err(e) => {
            report(&origin, &e);
            return 2;
        }
    };
    let todo = match before.missing(&study) {
        Ok(t) => t,
        Err(e) => {
            report(&origin, &e);
            return 2;
        }
    };
    let runs = match before.shard {
        Some((i, n)) => drivelink_sweep::shard_range(study.n_runs(), i, n),
        None => 0..study.n_runs(),
    };
    execute(
        &study,
        &origin,
        Plan {
            runs,
            todo,
            done: before.table.into_rows(),
            shard: before.shard,
            dir: dir.to_path_buf(),
            jobs: jobs.unwrap_or(0),
            // A study that kept its runs' results keeps those of the runs added.
            keep: keep || dir.join("runs").is_dir(),
        },
    )
}

/// What [`execute`] runs and writes.
struct Plan {
    /// The study's slice of the runs (all of them without a shard).
    runs: Range<usize>,
    /// The runs to run now (the slice, or what an interrupted study lacks).
    todo: Vec<usize>,
    /// Rows of runs finished before (resuming).
    done: Vec<Vec<Cell>>,
    shard: Option<(usize, usize)>,
    dir: PathBuf,
    jobs: usize,
    keep: bool,
}

/// Run `plan.todo` with a progress bar, write the table of those and `plan.done` into
/// `plan.dir` (marked interrupted after Ctrl-C), and print the outcome.
fn execute(study: &Study, origin: &str, plan: Plan) -> u8 {
    let Plan {
        runs,
        todo,
        done,
        shard,
        dir,
        jobs,
        keep,
    } = plan;
    let bar = progress_bar(todo.len() as u64);
    let tick = |done: usize| {
        if let Some(b) = &bar {
            b.set_position(done as u64);
        }
    };
    let start = Instant::now();
    let keep = keep.then_some(dir.as_path());
    let (new, interrupted) = match study.run_listed_until_cancelled(&todo, jobs, keep, &tick) {
        Ok(t) => t,
        Err(e) => {
            if let Some(b) = &bar {
                b.abandon();
            }
            report(origin, &e);
            return 1;
        }
    };
    let wall = start.elapsed().as_secs_f64();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut rows = done;
    rows.extend(new.into_rows());
    rows.sort_by_key(|r| match r.first() {
        Some(Cell::Int(i)) => *i,
        _ => 0,
    });
    let table = drivelink_sweep::Table::new(study.columns(), rows);
    let mut study_json = study.study_json(shard);
    if interrupted {
        drivelink_sweep::mark_interrupted(&mut study_json, table.rows().len());
    }
    if let Err(e) = drivelink_sweep::write_study(&dir, &table, &study_json) {
        report(origin, &e);
        return 1;
    }
    if interrupted {
        console::error(format_args!(
            "{origin}: interrupted (Ctrl-C) after {} of {} runs; the finished runs are in {} (study.json says \"interrupted\": true; finish it with drivelink sweep --resume {}; sweep-merge refuses it)",
            table.rows().len(),
            runs.len(),
            dir.display(),
            dir.display()
        ));
        return 130;
    }
    let status_col = table.column_index("status");
    let wall_col = table.column_index("wall_time");
    let mut failed = 0;
    let mut solver = 0.0;
    for row in table.rows() {
        if let Some(Cell::Text(s)) = status_col.map(|c| &row[c]) {
            failed += usize::from(s == "failed");
        }
        if let Some(Cell::Float(w)) = wall_col.map(|c| &row[c]) {
            if w.is_finite() {
                solver += w;
            }
        }
    }
    if failed > 0 {
        console::warning(format_args!(
            "{origin}: {failed} of {} runs failed; their rows have status 'failed' and the reason in 'message'",
            runs.len()
        ));
    }
    let threads = if jobs == 0 { rayon_threads() } else { jobs };
    let shard_text = shard.map_or_else(String::new, |(i, n)| {
        format!(" (shard {i}/{n}: runs {}..{})", runs.start, runs.end)
    });
    let n = runs.len();
    let resumed = if todo.len() == n {
        String::new()
    } else {
        format!(" ({} run now, the others before)", todo.len())
    };
    console::print(&format!(
        "{}: {n} run{}{shard_text}{resumed}, {failed} failed, in {wall:.3} s wall on {threads} thread{} (solver {solver:.3} s in total), study {} -> {}\n",
        study.compiled().diagram().name,
        if n == 1 { "" } else { "s" },
        if threads == 1 { "" } else { "s" },
        study.id(),
        dir.display()
    ))
}

/// Threads of rayon's default pool (all cores).
fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A progress bar with an ETA on stderr, only on a terminal.
fn progress_bar(len: u64) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() || len == 0 {
        return None;
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{bar:40}] {pos}/{len} runs, {per_sec}, ETA {eta}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    Some(bar)
}

/// `drivelink sweep-merge DIR... --out DIR [--force]`: the shards are read first, so
/// `--out` may be one of them with `--force`.
pub fn merge(dirs: &[PathBuf], out: &Path, force: bool) -> u8 {
    let merged = drivelink_sweep::merge_dirs(dirs)
        .and_then(|x| drivelink_sweep::prepare_out_dir(out, force).map(|()| x));
    let (table, study) = match merged {
        Ok(x) => x,
        Err(e) => {
            for m in e.lines("sweep-merge") {
                console::error(m);
            }
            return 2;
        }
    };
    if let Err(e) = drivelink_sweep::write_study(out, &table, &study) {
        console::error(e);
        return 1;
    }
    console::print(&format!(
        "merged {} shard{}: {} run{} of study {} -> {}\n",
        dirs.len(),
        if dirs.len() == 1 { "" } else { "s" },
        table.rows().len(),
        if table.rows().len() == 1 { "" } else { "s" },
        study.get("study_id").and_then(|v| v.as_str()).unwrap_or(""),
        out.display()
    ))
}
