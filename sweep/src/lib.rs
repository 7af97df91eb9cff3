//! drivelink-sweep: parameter studies of drivelink models.
//!
//! A [`Study`] is a netlist compiled once, a list of parameter points (grids as a full
//! factorial, Latin hypercube or random samples of distributions, or both crossed), and
//! metrics computed from each run's results. Runs go in parallel on a rayon pool
//! ([`Study::run`]), one at a time ([`Study::run_one`], for external executors), or as
//! the `I`-th of `N` equal slices ([`shard_range`], for Slurm job arrays and Kubernetes
//! indexed jobs); [`merge_dirs`] joins the slices, checking the study id.
//!
//! The output of a study directory: `sweep.csv` and `sweep.parquet` (one row per run:
//! `run`, every swept parameter, `status`, `end_time`, `wall_time`, every metric,
//! `message`), `study.json` (study id, model, runs, shard, columns, arguments) and, with
//! `--keep-results`, `runs/NNNNNN/` per run.
//!
//! Modules: [`spec`] (argument syntax), [`sample`] (distributions, designs, generator),
//! [`metric`] (metric expressions), [`study`] (checking, compiling, running), [`table`]
//! (typed table, CSV, Parquet), [`error`].

// Model errors carry every name a user needs; they are built only on the error path.
#![allow(clippy::result_large_err)]

pub mod error;
pub mod metric;
pub mod sample;
pub mod spec;
pub mod study;
pub mod table;

use std::path::{Path, PathBuf};

use serde_json::Value;

pub use error::SweepError;
pub use metric::{Metric, Source};
pub use sample::{Dist, Sampling};
pub use spec::{parse_shard, StudyArgs, Swept};
pub use study::{shard_range, Study, MAX_RUNS};
pub use table::{Cell, ColKind, Column, Table};

/// Write `sweep.csv`, `sweep.parquet` and `study.json` into `dir` (created if missing).
pub fn write_study(dir: &Path, table: &Table, study: &Value) -> Result<(), SweepError> {
    std::fs::create_dir_all(dir).map_err(|e| SweepError::io(dir.display(), e))?;
    let p = dir.join("sweep.csv");
    let f = std::fs::File::create(&p).map_err(|e| SweepError::io(p.display(), e))?;
    table
        .write_csv(f)
        .map_err(|e| SweepError::io(p.display(), e))?;
    let text = serde_json::to_string_pretty(study).unwrap_or_default() + "\n";
    let id = study
        .get("study_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let units = study
        .get("units")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect();
    table.write_parquet(
        &dir.join("sweep.parquet"),
        &[
            ("drivelink.study_id", id),
            ("drivelink.study", text.clone()),
        ],
        &units,
    )?;
    let p = dir.join("study.json");
    std::fs::write(&p, text).map_err(|e| SweepError::io(p.display(), e))
}

/// What a study writes into its directory (with `runs/` of `--keep-results`).
const STUDY_FILES: [&str; 4] = ["sweep.csv", "sweep.parquet", "study.json", "runs"];

/// Make `dir` ready for a new study: refused when it already holds one (its table,
/// `study.json` or `runs/` would be overwritten or, worse, mixed with the new study's);
/// with `force` those files are removed first (nothing else in `dir` is touched).
pub fn prepare_out_dir(dir: &Path, force: bool) -> Result<(), SweepError> {
    let used: Vec<&str> = STUDY_FILES
        .into_iter()
        .filter(|f| dir.join(f).symlink_metadata().is_ok())
        .collect();
    if used.is_empty() {
        return Ok(());
    }
    if !force {
        return Err(SweepError::Arg {
            flag: "--out".into(),
            text: dir.display().to_string(),
            message: format!(
                "the directory holds a study already ({}); give another --out directory, or --force to replace that study",
                used.join(", ")
            ),
        });
    }
    for f in used {
        let p = dir.join(f);
        let removed = if p.is_dir() {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        };
        removed.map_err(|e| SweepError::io(p.display(), e))?;
    }
    Ok(())
}

/// Mark the `study.json` of a table cut short by Ctrl-C: `"interrupted": true` and the
/// number of runs it holds (`"finished_runs"`). [`merge_dirs`] refuses such a directory.
pub fn mark_interrupted(study: &mut Value, finished: usize) {
    if let Value::Object(m) = study {
        m.insert("interrupted".into(), Value::Bool(true));
        m.insert("finished_runs".into(), Value::from(finished));
    }
}

/// A study directory cut short by Ctrl-C, read back to finish it (`drivelink sweep
/// --resume DIR`): what its `study.json` records and the finished runs' table.
pub struct Interrupted {
    /// The netlist, as the study named it.
    pub model: PathBuf,
    /// The study's arguments.
    pub args: StudyArgs,
    /// The study id the netlist and arguments must give again.
    pub study_id: String,
    /// The slice of the runs the directory is for (`None`: the whole study).
    pub shard: Option<(usize, usize)>,
    /// The finished runs.
    pub table: Table,
}

/// Read the interrupted study in `dir`; refused (naming `dir`) when it is no study
/// directory or its study was not interrupted.
pub fn read_interrupted(dir: &Path) -> Result<Interrupted, SweepError> {
    let (study, table) = read_study(dir)?;
    let bad = |message: String| SweepError::Arg {
        flag: "--resume".into(),
        text: dir.display().to_string(),
        message,
    };
    if study.get("interrupted") != Some(&Value::Bool(true)) {
        return Err(bad(
            "the study there was not interrupted (study.json has no \"interrupted\": true); nothing to resume".into(),
        ));
    }
    let text = |k: &str| study.get(k).and_then(Value::as_str).map(str::to_string);
    let model = text("model").ok_or_else(|| bad("study.json names no \"model\"".into()))?;
    let study_id = text("study_id").ok_or_else(|| bad("study.json has no \"study_id\"".into()))?;
    let args = study
        .get("args")
        .cloned()
        .ok_or_else(|| bad("study.json has no \"args\"".into()))
        .and_then(|a| {
            serde_json::from_value(a).map_err(|e| bad(format!("study.json \"args\": {e}")))
        })?;
    let shard = match study.get("shard") {
        Some(Value::Object(m)) => {
            let n = |k: &str| m.get(k).and_then(Value::as_u64).map(|x| x as usize);
            match (n("index"), n("count")) {
                (Some(i), Some(c)) if i < c => Some((i, c)),
                _ => return Err(bad("study.json \"shard\": expected index < count".into())),
            }
        }
        _ => None,
    };
    Ok(Interrupted {
        model: PathBuf::from(model),
        args,
        study_id,
        shard,
        table,
    })
}

impl Interrupted {
    /// The runs of `study`'s slice that the table lacks, in order; refused when `study`
    /// is another study (the netlist, or drivelink, changed since).
    pub fn missing(&self, study: &Study) -> Result<Vec<usize>, SweepError> {
        if study.id() != self.study_id {
            return Err(SweepError::Arg {
                flag: "--resume".into(),
                text: self.model.display().to_string(),
                message: format!(
                    "the netlist now gives study {} but the directory holds study {}: the netlist (or drivelink) changed since; run the study again",
                    study.id(),
                    self.study_id
                ),
            });
        }
        let range = match self.shard {
            Some((i, n)) => shard_range(study.n_runs(), i, n),
            None => 0..study.n_runs(),
        };
        let done: std::collections::HashSet<i64> = self
            .table
            .rows()
            .iter()
            .filter_map(|r| match r.first() {
                Some(Cell::Int(i)) => Some(*i),
                _ => None,
            })
            .collect();
        Ok(range.filter(|&i| !done.contains(&(i as i64))).collect())
    }
}

/// A study directory read back: its `study.json` and table.
pub fn read_study(dir: &Path) -> Result<(Value, Table), SweepError> {
    let sp = dir.join("study.json");
    let text = std::fs::read_to_string(&sp).map_err(|e| SweepError::io(sp.display(), e))?;
    let bad = |message: String| SweepError::Table {
        path: sp.display().to_string(),
        message,
    };
    let study: Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("malformed JSON: {e}")))?;
    let columns: Vec<Column> = study
        .get("columns")
        .cloned()
        .ok_or_else(|| {
            bad("no \"columns\"; is this a directory written by drivelink sweep?".into())
        })
        .and_then(|c| serde_json::from_value(c).map_err(|e| bad(format!("columns: {e}"))))?;
    let cp = dir.join("sweep.csv");
    let csv = std::fs::read_to_string(&cp).map_err(|e| SweepError::io(cp.display(), e))?;
    let table = Table::read_csv(&csv, columns, &cp.display().to_string())?;
    Ok((study, table))
}

/// Join the shards in `dirs` into one table and its `study.json` (shard `null`). Every
/// directory must carry the same study id and columns, no run may appear twice, and
/// together they must hold every run of the study.
pub fn merge_dirs(dirs: &[PathBuf]) -> Result<(Table, Value), SweepError> {
    let merge = |message: String| SweepError::Merge { message };
    let mut parts = Vec::new();
    for d in dirs {
        let (study, table) = read_study(d)?;
        if study.get("interrupted") == Some(&Value::Bool(true)) {
            return Err(merge(format!(
                "{} holds an interrupted study (Ctrl-C after {} of its runs); run it again before merging",
                d.display(),
                study.get("finished_runs").and_then(Value::as_u64).unwrap_or(0)
            )));
        }
        parts.push((d, (study, table)));
    }
    let Some((first_dir, (first, first_table))) = parts.first() else {
        return Err(merge("no directories given".into()));
    };
    let id = first.get("study_id").cloned().unwrap_or(Value::Null);
    let runs = first
        .get("runs")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0);
    // Which shard holds each run, kept for the runs held only: `runs` is read from a
    // file, and a damaged one may claim any number.
    let mut owner: std::collections::BTreeMap<usize, &PathBuf> = Default::default();
    let mut rows = Vec::new();
    for (d, (study, table)) in &parts {
        let other = study.get("study_id").cloned().unwrap_or(Value::Null);
        if other != id {
            return Err(merge(format!(
                "{} is study {other} but {} is study {id}; shards of one study have the same id (same netlist, arguments and drivelink version)",
                d.display(),
                first_dir.display()
            )));
        }
        if table.columns() != first_table.columns() {
            return Err(merge(format!(
                "{} has other columns than {}",
                d.display(),
                first_dir.display()
            )));
        }
        for row in table.rows() {
            let i = match row.first() {
                Some(Cell::Int(i)) if (*i as usize) < runs && *i >= 0 => *i as usize,
                other => {
                    return Err(merge(format!(
                        "{}: run index {other:?} outside 0..{runs}",
                        d.display()
                    )))
                }
            };
            if let Some(prev) = owner.insert(i, d) {
                return Err(merge(format!(
                    "run {i} is in both {} and {}",
                    prev.display(),
                    d.display()
                )));
            }
            rows.push(row.clone());
        }
    }
    if owner.len() < runs {
        return Err(merge(format!(
            "{} of {runs} runs are missing: {}; merge every shard of the study",
            runs - owner.len(),
            missing_ranges(owner.keys().copied(), runs)
        )));
    }
    rows.sort_by_key(|r| match r.first() {
        Some(Cell::Int(i)) => *i,
        _ => 0,
    });
    let mut study = first.clone();
    if let Value::Object(m) = &mut study {
        m.insert("shard".into(), Value::Null);
    }
    Ok((Table::new(first_table.columns().to_vec(), rows), study))
}

/// The runs of `0..runs` not in `held` (increasing) as `0-9, 20, 30-39`: the first 10
/// ranges, then how many more. Its cost follows the runs held, not `runs`.
fn missing_ranges(held: impl Iterator<Item = usize>, runs: usize) -> String {
    let mut gaps = Vec::new();
    let mut next = 0;
    for i in held.chain(std::iter::once(runs)) {
        if i > next {
            gaps.push((next, i - 1));
        }
        next = i + 1;
    }
    let n = gaps.len();
    let mut out: Vec<String> = gaps
        .iter()
        .take(10)
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    if n > 10 {
        out.push(format!("... ({} more ranges)", n - 10));
    }
    out.join(", ")
}
