//! `drivelink report A B`: two runs compared, as Simulink's Simulation Data Inspector does:
//! every signal both runs logged, overlaid (A and B) above the difference `B − A` on A's
//! sample times, in one offline HTML report, and a table of the largest differences on
//! standard output.

use std::path::{Path, PathBuf};

use drivelink_core::result::SimResult;
use drivelink_core::scope::{ScopeSignal, ScopeSpec};

use crate::console;

/// Arguments of `drivelink report`.
#[derive(clap::Args, Debug)]
#[command(
    long_about = "Compare two runs: every signal both logged (or --signals), A and B overlaid above their difference B − A (B interpolated linearly onto A's sample times), in one self-contained HTML report; prints the largest |B − A| of each signal, also relative to the signal's range in A.\n\nA and B are run directories (out/full_car) or their results.csv files; the units their summary.json records label the axes.\n\nExample: drivelink run models/netlists/full_car.json --out out/a && drivelink run models/netlists/full_car.json --set throttle=0.3 --out out/b && drivelink report out/a out/b --out compare.html"
)]
pub struct CompareArgs {
    /// Run A (the reference): a run directory or its results.csv.
    pub a: PathBuf,
    /// Run B: a run directory or its results.csv.
    pub b: PathBuf,
    /// Comma-separated signals to compare (default: every signal both runs logged).
    #[arg(long, value_delimiter = ',')]
    pub signals: Vec<String>,
    /// The report file to write.
    #[arg(long, default_value = "compare.html")]
    pub out: PathBuf,
}

/// A run's results file: `path` itself, or `path/results.csv` for a directory.
fn results_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("results.csv")
    } else {
        path.to_path_buf()
    }
}

/// A results file with the units its `summary.json` records.
fn read_run(path: &Path) -> Result<SimResult, String> {
    let file = results_file(path);
    let text =
        std::fs::File::open(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let mut r = SimResult::read_csv(std::io::BufReader::new(text), "results")
        .map_err(|e| format!("{}: {e}", file.display()))?;
    r.units = crate::recorded_units(&file, &r.names);
    Ok(r)
}

/// The largest difference of one signal.
struct Diff {
    name: String,
    unit: String,
    max: f64,
    at: f64,
    /// `max` over the signal's range in A (0 when A is constant).
    relative: f64,
}

/// A and B (on A's times) and `B − A` for `names`, as one result; the largest difference
/// of each.
fn combine(a: &SimResult, b: &SimResult, names: &[String]) -> (SimResult, Vec<Diff>) {
    let mut cols = Vec::new();
    for n in names {
        cols.extend([format!("A: {n}"), format!("B: {n}"), format!("B − A: {n}")]);
    }
    let mut out = SimResult::new("compare", cols);
    out.time = a.time.clone();
    let mut diffs = Vec::new();
    for (k, n) in names.iter().enumerate() {
        let ya = a.get(n).unwrap_or(&[]);
        let yb: Vec<f64> = a
            .time
            .iter()
            .map(|&t| b.value_at(n, t).unwrap_or(f64::NAN))
            .collect();
        let d: Vec<f64> = ya.iter().zip(&yb).map(|(x, y)| y - x).collect();
        let (mut max, mut at) = (0.0f64, f64::NAN);
        for (i, v) in d.iter().enumerate() {
            if v.abs() > max {
                (max, at) = (v.abs(), a.time[i]);
            }
        }
        let (lo, hi) = ya
            .iter()
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
                (l.min(v), h.max(v))
            });
        let range = hi - lo;
        let unit = a
            .index_of(n)
            .and_then(|i| a.units.get(i).cloned().flatten())
            .unwrap_or_default();
        diffs.push(Diff {
            name: n.clone(),
            unit: unit.clone(),
            max,
            at,
            relative: if range > 0.0 { max / range } else { 0.0 },
        });
        out.columns[3 * k] = ya.to_vec();
        out.columns[3 * k + 1] = yb;
        out.columns[3 * k + 2] = d;
        let u = (!unit.is_empty()).then_some(unit);
        out.units.extend([u.clone(), u.clone(), u]);
    }
    (out, diffs)
}

/// One scope per signal: A and B overlaid, the difference below.
fn scopes(names: &[String], result: &SimResult) -> Vec<ScopeSpec> {
    names
        .iter()
        .map(|n| {
            let sig = |prefix: &str, label: &str| {
                let col = format!("{prefix}: {n}");
                let unit = result
                    .index_of(&col)
                    .and_then(|i| result.units.get(i).cloned().flatten())
                    .filter(|u| drivelink_core::DisplayUnit::parse(u).is_some());
                let s = ScopeSignal::new(col).with_label(label);
                match unit {
                    Some(u) => s.with_unit(u),
                    None => s,
                }
            };
            let mut s = ScopeSpec::new(n.clone(), vec![sig("A", "A"), sig("B", "B")]);
            s.panels.push(vec![sig("B − A", "B − A")]);
            s.title = Some(n.clone());
            s
        })
        .collect()
}

/// `drivelink report A B`.
pub fn run(args: &CompareArgs) -> u8 {
    let (a, b) = match (read_run(&args.a), read_run(&args.b)) {
        (Ok(a), Ok(b)) => (a, b),
        (ra, rb) => {
            for e in [ra.err(), rb.err()].into_iter().flatten() {
                console::error(e);
            }
            return 2;
        }
    };
    let common: Vec<String> = a
        .names
        .iter()
        .filter(|n| b.index_of(n).is_some())
        .cloned()
        .collect();
    let names: Vec<String> = if args.signals.is_empty() {
        common
    } else {
        let missing: Vec<&String> = args
            .signals
            .iter()
            .filter(|s| !common.contains(s))
            .collect();
        if !missing.is_empty() {
            console::error(format_args!(
                "--signals: {} not logged by both runs; both logged: {}",
                missing
                    .iter()
                    .map(|s| format!("'{s}'"))
                    .collect::<Vec<_>>()
                    .join(", "),
                common.join(", ")
            ));
            return 2;
        }
        args.signals.clone()
    };
    if names.is_empty() {
        console::error("the two runs have no logged signal in common");
        return 2;
    }
    let (mut merged, diffs) = combine(&a, &b, &names);
    // The page's title names the runs; its summary counts the samples compared.
    merged.model = format!("A {} vs B {}", args.a.display(), args.b.display());
    merged.end_time = a.time.last().copied().unwrap_or(0.0);
    let scopes = scopes(&names, &merged);
    let input = drivelink_report::ReportInput {
        result: &merged,
        scopes: &scopes,
        energy: None,
        diagram: None,
    };
    if let Err(e) = drivelink_report::write_report(&input, &args.out) {
        console::error(e);
        return 1;
    }
    let mut text = format!(
        "{:<32} {:>14} {:>12} {:>12}\n",
        "signal", "max |B - A|", "at t [s]", "of A's range"
    );
    for d in &diffs {
        text += &format!(
            "{:<32} {:>14} {:>12.6} {:>11.3e}\n",
            d.name,
            format!("{:.6e} {}", d.max, d.unit),
            d.at,
            d.relative
        );
    }
    text += &format!("wrote {}\n", args.out.display());
    console::print(&text)
}
