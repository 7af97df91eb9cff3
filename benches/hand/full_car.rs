//! The full car written by hand (`model.rs`), run with the netlist's solver settings.
//!
//! The model records the same variables as the netlist writes to `results.csv` (its log and
//! its scopes' signals, `model::COLUMNS`) at every output point. `full_car_hand` runs it
//! once and prints one line: the wall time of the integration, the solver's counters and
//! the model evaluations; `--runs N` runs it N times in process and
//! also prints the fastest and the median wall time (as `examples/time_runs` does for a
//! netlist). `full_car_hand --compare DIR` also reads
//! the `results.csv` and `events.csv` that `drivelink run models/netlists/full_car.json
//! --out DIR` wrote and compares: every recorded column at every output-grid time (the
//! largest difference as a fraction of the column's range; modes, the gear stage and
//! undefined values exactly), the friction mode changes
//! (joint, kind, time), and the end time. Environment: `HAND_TOL=1e-10` runs with
//! `rtol = atol = 1e-10` (compare with a netlist run at the same tolerances),
//! `HAND_EVENTS=1` lists every mode change with its time difference.
//! Used by `benches/full_car_hand.sh`.

mod model;
mod repeat;

use std::process::ExitCode;
use std::time::Instant;

use drivelink_solver::{integrate, Method, OutputKind, Settings, Stats};
use model::{FullCar, Mode, COLUMNS, JOINT_NAMES};

fn settings() -> Settings {
    let tol = std::env::var("HAND_TOL").ok().and_then(|v| v.parse().ok());
    let base = Settings {
        method: Method::Dopri5,
        stop_time: 50.0,
        rtol: 1e-6,
        atol: 1e-6,
        output_interval: Some(0.02),
        output_points: None,
        guard_samples: 1,
        ..Settings::default()
    };
    match tol {
        Some(t) => Settings {
            rtol: t,
            atol: t,
            ..base
        },
        None => base,
    }
}

/// One run: the model after it, the solver's counters and end time; the integration's
/// wall time.
fn run() -> Result<((FullCar, Stats, f64), f64), String> {
    let clock = Instant::now();
    let mut car = FullCar::new();
    let mut x = car.initial_state();
    let out = integrate(&mut car, &mut x, &settings()).map_err(|f| format!("{:?}", f.error))?;
    let wall = clock.elapsed().as_secs_f64();
    Ok(((car, out.stats, out.end_time), wall))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (compare, runs) = match args.as_slice() {
        [] => (None, Ok(1)),
        [flag, dir] if flag == "--compare" => (Some(dir.clone()), Ok(1)),
        [flag, n] if flag == "--runs" => (None, repeat::count("full_car_hand", n)),
        _ => (
            None,
            Err("usage: full_car_hand [--compare DRIVELINK_OUT_DIR | --runs N]".to_string()),
        ),
    };
    let done = runs.and_then(|runs| {
        repeat::repeat(runs, run).map_err(|e| format!("full_car_hand: the run failed: {e}"))
    });
    let ((car, stats, end), wall, times) = match done {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "hand: end_time {end} s, wall_time_s {wall:.9}, steps {}, rejected {}, rhs_evals {}, guard_evals {}, output_points {}, events {}, model_evals {}, evaluations of the equations {}",
        stats.steps,
        stats.rejected_steps,
        stats.rhs_evals,
        stats.guard_evals,
        stats.output_points,
        stats.events,
        stats.model_evals(),
        car.evals,
    );
    if times.len() > 1 {
        println!("hand: {}", repeat::summary(&times));
    }
    match compare {
        None => ExitCode::SUCCESS,
        Some(dir) => match compare_with(&car, end, &dir) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::FAILURE,
            Err(e) => {
                eprintln!("full_car_hand: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

/// Read a CSV file into its header and rows (the files drivelink writes: no quoted commas
/// in `results.csv`; `events.csv` details are quoted and only the first three columns are
/// read).
fn read_csv(path: &str) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let mut lines = text.lines();
    let head = lines.next().ok_or(format!("{path} is empty"))?;
    let header = head.split(',').map(str::to_string).collect();
    let rows = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    Ok((header, rows))
}

fn num(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .map_err(|e| format!("not a number {s:?}: {e}"))
}

/// The drivelink event kind of a mode change.
fn kind(from: Mode, to: Mode) -> &'static str {
    match (from, to) {
        (_, Mode::Locked) => "lock",
        (_, Mode::Free) => "free",
        (Mode::Locked, _) => "unlock",
        (Mode::Free, _) => "engage",
        _ => "zero_crossing",
    }
}

/// Compare with drivelink's output; prints the differences and whether they are within
/// 1e-4 of the signals' ranges (every column of [`COLUMNS`] at every output-grid time; the
/// mode and stage columns and where a value is undefined exactly), 1e-6 s on the mode
/// changes and 1e-4 s on the end time.
fn compare_with(car: &FullCar, end: f64, dir: &str) -> Result<bool, String> {
    let (header, rows) = read_csv(&format!("{dir}/results.csv"))?;
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or(format!("no column {name} in results.csv"))
    };
    let ct = col("time")?;
    let cols = COLUMNS
        .iter()
        .map(|c| col(c))
        .collect::<Result<Vec<_>, String>>()?;
    // Grid points: the initial point and the interpolated ones, keyed by time.
    let mine: Vec<_> = car
        .results
        .iter()
        .filter(|r| matches!(r.kind, OutputKind::Initial | OutputKind::Interpolated))
        .collect();
    let theirs: Vec<(f64, Vec<f64>)> = rows
        .iter()
        .map(|r| {
            let values = cols.iter().map(|&c| num(&r[c])).collect::<Result<_, _>>()?;
            Ok((num(&r[ct])?, values))
        })
        .collect::<Result<_, String>>()?;
    let pairs: Vec<_> = mine
        .iter()
        .filter_map(|m| theirs.iter().find(|r| r.0 == m.t).map(|r| (m, &r.1)))
        .collect();
    println!(
        "compare: {} grid points of {} (drivelink rows {})",
        pairs.len(),
        mine.len(),
        theirs.len()
    );
    let mut ok = pairs.len() + 2 >= mine.len();
    for (k, name) in COLUMNS.iter().enumerate() {
        let exact = name.ends_with("mode") || *name == "master.y";
        let (lo, hi) = theirs
            .iter()
            .map(|r| r.1[k])
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        let range = hi - lo;
        let (mut worst, mut unequal) = (0.0f64, 0usize);
        for (m, r) in &pairs {
            let (a, b) = (m.values[k], r[k]);
            if a.is_nan() || b.is_nan() || exact {
                unequal += usize::from(!(a == b || (a.is_nan() && b.is_nan())));
            } else if range > 0.0 {
                worst = worst.max((a - b).abs() / range);
            } else {
                unequal += usize::from(a != b);
            }
        }
        let pass = worst <= 1e-4 && unequal == 0;
        ok &= pass;
        println!(
            "compare: {name:16} largest |difference| / range {worst:.3e} (range {range:.6}), {unequal} points unequal{}",
            if pass { "" } else { "  <- FAIL" }
        );
    }
    let ok_events = compare_events(car, dir)?;
    let (_, summary) = read_csv(&format!("{dir}/events.csv"))?;
    let their_end = summary
        .last()
        .map(|r| num(&r[0]))
        .transpose()?
        .unwrap_or(f64::NAN);
    println!(
        "compare: end time hand {end} s, drivelink {their_end} s, difference {:.3e} s",
        (end - their_end).abs()
    );
    let ok = ok && ok_events && (end - their_end).abs() <= 1e-4;
    println!("compare: {}", if ok { "PASS" } else { "FAIL" });
    Ok(ok)
}

/// Compare the friction mode changes (joint, kind, time) in order.
fn compare_events(car: &FullCar, dir: &str) -> Result<bool, String> {
    let (_, rows) = read_csv(&format!("{dir}/events.csv"))?;
    let kinds = ["lock", "unlock", "engage", "free", "zero_crossing"];
    let theirs: Vec<(f64, &str, &str)> = rows
        .iter()
        .filter(|r| JOINT_NAMES.contains(&r[1].as_str()) && kinds.contains(&r[2].as_str()))
        .map(|r| Ok((num(&r[0])?, r[1].as_str(), r[2].as_str())))
        .collect::<Result<_, String>>()?;
    let mine: Vec<(f64, &str, &str)> = car
        .changes
        .iter()
        .map(|c| (c.t, JOINT_NAMES[c.joint], kind(c.from, c.to)))
        .collect();
    let mut worst = 0.0f64;
    let mut same = mine.len() == theirs.len();
    let verbose = std::env::var_os("HAND_EVENTS").is_some();
    for (m, d) in mine.iter().zip(&theirs) {
        if m.1 != d.1 || m.2 != d.2 {
            same = false;
            println!("compare: event differs: hand {m:?}, drivelink {d:?}");
        }
        if verbose {
            println!("  {:>18} {:>6} {:.12} {:+.3e}", m.1, m.2, d.0, m.0 - d.0);
        }
        // The wheel brake's lock ends the run: reported with the end time.
        if m.1 != "brake" {
            worst = worst.max((m.0 - d.0).abs());
        }
    }
    println!(
        "compare: friction mode changes hand {}, drivelink {}; same joints and kinds in order: {same}; largest time difference of the clutch and gearbox-brake changes {worst:.3e} s",
        mine.len(),
        theirs.len()
    );
    Ok(same && worst <= 1e-6)
}
