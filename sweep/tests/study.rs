//! Studies on the shipped netlists: the design (Latin hypercube strata, grid order), the
//! metrics against direct computation and against the closed-form brake stop, failed runs
//! as rows, errors before any run, Parquet equal to CSV.

#![allow(clippy::result_large_err)]

use std::path::PathBuf;

use drivelink_core::{Compiled, EventTag};
use drivelink_netlist as netlist;
use drivelink_sweep::sample::{unit_design, Dist};
use drivelink_sweep::{Cell, Sampling, Study, StudyArgs, Table};

fn netlist_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../models/netlists")
        .join(name)
}

fn study(name: &str, args: StudyArgs) -> Result<Study, drivelink_sweep::SweepError> {
    let p = netlist_path(name);
    let d = netlist::load_file(&p).unwrap();
    Study::new(
        &d,
        drivelink_blocks::registry(),
        &p.display().to_string(),
        args,
    )
}

/// A fresh, empty directory under the system's temporary directory (`tag` names it),
/// removed with everything in it when dropped, whether the test passed or panicked.
fn temp_dir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("drivelink_{tag}_"))
        .tempdir()
        .expect("a temporary directory")
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn col<'a>(t: &'a Table, name: &str) -> Vec<&'a Cell> {
    let j = t
        .column_index(name)
        .unwrap_or_else(|| panic!("no column {name}"));
    t.rows().iter().map(|r| &r[j]).collect()
}

fn num(c: &Cell) -> f64 {
    match c {
        Cell::Float(x) => *x,
        Cell::Int(i) => *i as f64,
        Cell::Text(t) => panic!("text {t}"),
    }
}

#[test]
fn latin_hypercube_hits_each_stratum_once_per_dimension() {
    for (n, d, seed) in [(1, 1, 0), (7, 3, 1), (50, 4, 42), (1000, 2, 7)] {
        let pts = unit_design(n, d, Sampling::Lhs, seed);
        assert_eq!(pts.len(), n);
        for j in 0..d {
            let mut strata: Vec<usize> = pts.iter().map(|p| (p[j] * n as f64) as usize).collect();
            strata.sort_unstable();
            assert_eq!(strata, (0..n).collect::<Vec<_>>(), "n = {n}, dimension {j}");
        }
    }
    // Through a study: the sampled values, mapped back through their distribution's CDF,
    // fill each of the N equal-probability strata exactly once (normal, lognormal, uniform).
    let n = 40;
    let s = study(
        "mech_brake_stop.json",
        StudyArgs {
            dist: strs(&[
                "J=normal(2 kg*m^2, 0.1 kg*m^2)",
                "w0=lognormal(3.4, 0.1)",
                "T=uniform(10 N*m, 14 N*m)",
            ]),
            samples: Some(n),
            seed: 3,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(s.n_runs(), n);
    let dists = [
        Dist::Normal {
            mu: 2.0,
            sigma: 0.1,
        },
        Dist::LogNormal {
            mu: 3.4,
            sigma: 0.1,
        },
        Dist::Uniform { a: 10.0, b: 14.0 },
    ];
    for (j, dist) in dists.iter().enumerate() {
        let mut strata: Vec<usize> = (0..n)
            .map(|i| match &s.point(i)[j].1 {
                drivelink_sweep::Swept::Number(x) => (dist.cdf(*x) * n as f64) as usize,
                other => panic!("{other:?}"),
            })
            .collect();
        strata.sort_unstable();
        assert_eq!(strata, (0..n).collect::<Vec<_>>(), "parameter {j}");
    }
}

#[test]
fn the_same_seed_gives_the_same_samples_and_another_seed_others() {
    let args = |seed| StudyArgs {
        dist: strs(&["T=uniform(10, 14)"]),
        samples: Some(5),
        seed,
        ..Default::default()
    };
    let (a, b, c) = (
        study("mech_brake_stop.json", args(1)).unwrap(),
        study("mech_brake_stop.json", args(1)).unwrap(),
        study("mech_brake_stop.json", args(2)).unwrap(),
    );
    let pts = |s: &Study| (0..5).map(|i| s.point(i)[0].1.clone()).collect::<Vec<_>>();
    assert_eq!(pts(&a), pts(&b));
    assert_ne!(pts(&a), pts(&c));
    assert_eq!(a.id(), b.id());
    assert_ne!(a.id(), c.id());
    // Regression: the id hashed the arguments' text, so shards written with and without
    // spaces ("uniform(10, 14)" / "uniform(10,14)") could not be merged.
    let spaced = study("mech_brake_stop.json", args(1)).unwrap();
    let tight = study(
        "mech_brake_stop.json",
        StudyArgs {
            dist: strs(&["T=uniform(10,14)"]),
            ..args(1)
        },
    )
    .unwrap();
    assert_eq!(spaced.id(), tight.id());
}

#[test]
fn grid_points_enumerate_the_full_factorial_with_the_last_grid_fastest() {
    let s = study(
        "mech_brake_stop.json",
        StudyArgs {
            grid: strs(&["J=[1 kg*m^2, 2]", "T=0.1:0.3:3"]),
            dist: strs(&["w0=uniform(10, 20)"]),
            samples: Some(2),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(s.n_runs(), 2 * 3 * 2);
    let names: Vec<&str> = s.parameter_names().collect();
    assert_eq!(names, ["J", "T", "w0"]);
    let t_values = [0.1, (0.1 + 0.3) / 2.0, 0.3];
    for i in 0..s.n_runs() {
        let p = s.point(i);
        let (j, t, sample) = (i / 6, (i / 2) % 3, i % 2);
        assert_eq!(
            p[0].1,
            drivelink_sweep::Swept::Number([1.0, 2.0][j]),
            "run {i}"
        );
        assert_eq!(
            p[1].1,
            drivelink_sweep::Swept::Number(t_values[t]),
            "run {i}"
        );
        // The samples are the innermost loop: the same two values under every grid point.
        assert_eq!(p[2].1, s.point(sample)[2].1, "run {i}");
    }
    // The range ends exactly at STOP.
    assert_eq!(s.point(4)[1].1, drivelink_sweep::Swept::Number(0.3));
}

#[test]
fn metrics_match_direct_computation_and_the_closed_form_brake_stop() {
    // A brake of torque T stops a flywheel J from w0 at t = J·w0/T and dissipates all of
    // its kinetic energy J·w0²/2.
    let metrics = strs(&[
        "lock=event_time(brake, lock, 1)",
        "heat=energy(brake)",
        "w_end=final(flywheel.w)",
        "w_max=max(flywheel.w)",
        "tau_min=min(brake.tau)",
        "w_mean=mean(flywheel.w)",
        "w_2s=at(flywheel.w, 2000 ms)",
        "t_end=end_time",
        "how=status",
        "second_lock=event_time(brake, lock, 2)",
        "w_late=at(flywheel.w, 9)",
    ]);
    let s = study(
        "mech_brake_stop.json",
        StudyArgs {
            grid: strs(&["J=[1, 2, 3]", "T=[12, 15]"]),
            metrics,
            ..Default::default()
        },
    )
    .unwrap();
    let t = s.run(0..s.n_runs(), 2, None, &|_| {}).unwrap();
    assert_eq!(t.rows().len(), 6);
    let compiled = s.compiled();
    let reg = drivelink_blocks::registry();
    for (i, row) in t.rows().iter().enumerate() {
        let (jv, tv) = (num(&row[1]), num(&row[2]));
        let w0 = 30.0;
        let get = |name: &str| num(col(&t, name)[i]);
        let stop = jv * w0 / tv;
        assert!(
            (get("lock") - stop).abs() < 1e-9,
            "run {i}: lock {} vs {stop}",
            get("lock")
        );
        let ke = 0.5 * jv * w0 * w0;
        assert!(
            (get("heat") - ke).abs() < 1e-6 * ke,
            "run {i}: {} vs {ke}",
            get("heat")
        );
        assert!(get("second_lock").is_nan());
        // Past the run's 8 s: NaN, not the held end value (regression).
        assert!(get("w_late").is_nan(), "{}", get("w_late"));
        assert_eq!(col(&t, "how")[i], &Cell::Text("completed".into()));
        // Direct computation from the same run.
        let mut m = compiled
            .with_params(&reg, &[("J".into(), jv.into()), ("T".into(), tv.into())])
            .unwrap();
        let r = m.run();
        let w = r.get("flywheel.w").unwrap();
        let tau = r.get("brake.tau").unwrap();
        assert_eq!(get("w_end"), *w.last().unwrap());
        assert_eq!(get("w_max"), w.iter().cloned().fold(f64::MIN, f64::max));
        assert_eq!(get("tau_min"), tau.iter().cloned().fold(f64::MAX, f64::min));
        assert_eq!(get("w_2s"), r.value_at("flywheel.w", 2.0).unwrap());
        assert_eq!(get("t_end"), r.end_time);
        let lock = r.events_of("brake", EventTag::Lock).next().unwrap().time;
        assert_eq!(get("lock"), lock);
        // The mean of a linear decay to rest, then rest: w0·stop/2 over the 8 s span.
        let mean_exact = w0 * stop / 2.0 / 8.0;
        assert!(
            (get("w_mean") - mean_exact).abs() < 1e-6,
            "{} vs {mean_exact}",
            get("w_mean")
        );
        // The speed signal was not in the netlist's log: the study logged it.
        assert!(!netlist::load_file(&netlist_path("mech_brake_stop.json"))
            .unwrap()
            .log
            .contains(&"flywheel.w".to_string()));
    }
}

#[test]
fn a_failed_run_is_a_row_with_status_failed_and_its_message() {
    let s = study(
        "mech_brake_stop.json",
        StudyArgs {
            grid: strs(&["J=[2, -1, 1]"]),
            metrics: strs(&["lock=event_time(brake, lock, 1)", "how=status"]),
            ..Default::default()
        },
    )
    .unwrap();
    let t = s.run(0..3, 1, None, &|_| {}).unwrap();
    let status: Vec<&Cell> = col(&t, "status");
    assert_eq!(status[0], &Cell::Text("completed".into()));
    assert_eq!(status[1], &Cell::Text("failed".into()));
    assert_eq!(status[2], &Cell::Text("completed".into()));
    let Cell::Text(msg) = col(&t, "message")[1] else {
        panic!()
    };
    assert!(msg.contains("flywheel") && msg.contains("'J'"), "{msg}");
    assert!(num(col(&t, "lock")[1]).is_nan());
    assert_eq!(col(&t, "how")[1], &Cell::Text("failed".into()));
    // The runs around it are intact: J·w0/T.
    assert!((num(col(&t, "lock")[2]) - 30.0 / 12.0).abs() < 1e-9);
}

#[test]
fn bad_studies_are_typed_errors_naming_the_culprit_before_any_run() {
    let err = |args: StudyArgs| {
        study("vehicle_split_mu_open.json", args)
            .err()
            .unwrap()
            .to_string()
    };
    let e = err(StudyArgs {
        grid: strs(&["T00=[1, 2]"]),
        ..Default::default()
    });
    assert!(
        e.contains("--grid T00: unknown parameter 'T00' (did you mean 'T0'?)"),
        "{e}"
    );
    let e = err(StudyArgs {
        grid: strs(&["diff_type=[1, 2]"]),
        ..Default::default()
    });
    assert!(
        e.contains("--grid diff_type: parameter 'diff_type' is a choice"),
        "{e}"
    );
    let e = err(StudyArgs {
        grid: strs(&["T0=[open]"]),
        ..Default::default()
    });
    assert!(
        e.contains("'open' is a word but parameter 'T0' is a number"),
        "{e}"
    );
    let e = err(StudyArgs {
        grid: strs(&["T0=100:200"]),
        ..Default::default()
    });
    assert!(
        e.contains("--grid T0=100:200: expected NAME=START:STOP:COUNT"),
        "{e}"
    );
    let e = err(StudyArgs {
        grid: strs(&["mu_ice=[0.1]"]),
        metrics: strs(&[
            "v=max(body.vv)",
            "x=energy(nothing)",
            "y=event_time(dif, lock, 1)",
        ]),
        ..Default::default()
    });
    assert!(
        e.contains("--metric v: unknown signal 'body.vv' (did you mean 'body.v'?)"),
        "{e}"
    );
    assert!(
        e.contains("--metric x: 'nothing' is not in the energy audit"),
        "{e}"
    );
    assert!(
        e.contains("--metric y: unknown block 'dif' (did you mean 'diff'?)"),
        "{e}"
    );
    let e = err(StudyArgs {
        grid: strs(&["T0=[1]"]),
        dist: strs(&["T0=uniform(1, 2)"]),
        samples: Some(3),
        ..Default::default()
    });
    assert!(e.contains("already given by --grid"), "{e}");
    let e = err(StudyArgs {
        dist: strs(&["T0=uniform(1, 2)"]),
        ..Default::default()
    });
    assert!(e.contains("need --samples N"), "{e}");
    // A unit of another dimension than the netlist's value.
    let e = study(
        "mech_brake_stop.json",
        StudyArgs {
            grid: strs(&["J=1 s:2 s:3"]),
            ..Default::default()
        },
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("--grid J: '1 s' is in s but parameter 'J' is"),
        "{e}"
    );
}

#[test]
fn choice_parameters_sweep_over_words() {
    let s = study(
        "vehicle_split_mu_open.json",
        StudyArgs {
            grid: strs(&["diff_type=[open, locked]"]),
            stop_time: Some("0.5 s".into()),
            metrics: strs(&["v=final(body.v)"]),
            ..Default::default()
        },
    )
    .unwrap();
    let t = s.run(0..2, 1, None, &|_| {}).unwrap();
    assert_eq!(
        col(&t, "diff_type"),
        [&Cell::Text("open".into()), &Cell::Text("locked".into())]
    );
    assert_eq!(col(&t, "status"), [&Cell::Text("completed".into()); 2]);
    // With the left wheel on ice, the locked differential drives the car faster.
    assert!(num(col(&t, "v")[1]) > num(col(&t, "v")[0]));
}

#[test]
fn parquet_holds_the_same_table_as_the_csv() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let s = study(
        "mech_brake_stop.json",
        StudyArgs {
            grid: strs(&["J=[1, 2, -1]"]),
            metrics: strs(&["lock=event_time(brake, lock, 1)"]),
            ..Default::default()
        },
    )
    .unwrap();
    let t = s.run(0..3, 1, None, &|_| {}).unwrap();
    let scratch = temp_dir("sweep_parquet");
    let dir = scratch.path();
    drivelink_sweep::write_study(dir, &t, &s.study_json(None)).unwrap();
    let reader =
        SerializedFileReader::new(std::fs::File::open(dir.join("sweep.parquet")).unwrap()).unwrap();
    let kv = reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .unwrap();
    assert!(kv
        .iter()
        .any(|k| k.key == "drivelink.study_id" && k.value.as_deref() == Some(s.id())));
    // Each column's unit is its Arrow field metadata `unit`, as `study.json` lists them.
    let arrow = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(dir.join("sweep.parquet")).unwrap(),
    )
    .unwrap();
    let field_units: serde_json::Map<String, serde_json::Value> = arrow
        .schema()
        .fields()
        .iter()
        .filter_map(|f| Some((f.name().clone(), f.metadata().get("unit")?.clone().into())))
        .collect();
    assert_eq!(serde_json::Value::Object(field_units), s.units_json());
    assert_eq!(s.units_json()["lock"], "s");
    let rows: Vec<_> = reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    for (row, cells) in rows.iter().zip(t.rows()) {
        for (j, (_, field)) in row.get_column_iter().enumerate() {
            use parquet::record::Field;
            let same = match (field, &cells[j]) {
                (Field::Long(a), Cell::Int(b)) => a == b,
                (Field::Double(a), Cell::Float(b)) => {
                    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
                }
                (Field::Str(a), Cell::Text(b)) => a == b,
                _ => false,
            };
            assert!(same, "column {j}: {field:?} vs {:?}", cells[j]);
        }
    }
    let csv = std::fs::read_to_string(dir.join("sweep.csv")).unwrap();
    let back = Table::read_csv(&csv, s.columns(), "sweep.csv").unwrap();
    for (a, b) in back.rows().iter().flatten().zip(t.rows().iter().flatten()) {
        assert!(a.same(b));
    }
    // The compiled model is reused: each run gets a copy of the compiled plan (no
    // compile passes, no reference count shared between threads).
    let reg = drivelink_blocks::registry();
    let c: &Compiled = s.compiled();
    let m = c.with_params(&reg, &[("J".into(), 3.0.into())]).unwrap();
    assert_eq!(m.plan().compile_id(), c.plan().compile_id());
    assert!(!std::sync::Arc::ptr_eq(m.plan(), c.plan()));
}

/// A study whose cancel flag is set (Ctrl-C in Python) runs nothing and makes no table;
/// the same study without the flag set runs every point.
#[test]
fn a_cancelled_study_makes_no_table() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let flag = Arc::new(AtomicBool::new(true));
    let s = study(
        "mech_brake_stop.json",
        StudyArgs {
            grid: strs(&["T=10:14:3"]),
            ..Default::default()
        },
    )
    .unwrap()
    .with_cancel(flag.clone());
    let e = s.run(0..3, 1, None, &|_| {}).unwrap_err();
    assert!(matches!(e, drivelink_sweep::SweepError::Interrupted), "{e}");
    flag.store(false, Ordering::Relaxed);
    let t = s.run(0..3, 1, None, &|_| {}).unwrap();
    assert_eq!(t.rows().len(), 3);
    assert!(col(&t, "status")
        .iter()
        .all(|c| **c == Cell::Text("completed".into())));
}

#[test]
fn the_table_knows_the_si_unit_of_each_column_it_can() {
    let s = study(
        "full_car.json",
        StudyArgs {
            // idleSpeed is "800 rpm" in the netlist; clutchRise "0.2 s";
            // throttle a bare number given bare: unknown.
            grid: strs(&[
                "idleSpeed=[700 rpm, 900 rpm]",
                "clutchRise=[0.1 s, 0.3 s]",
                "throttle=[0.2]",
            ]),
            metrics: strs(&[
                "v=max(vehicle.v)",
                "stop=event_time(stop, stop, 1)",
                "s=status",
            ]),
            ..Default::default()
        },
    )
    .unwrap();
    let named: Vec<(String, Option<String>)> = s
        .columns()
        .into_iter()
        .map(|c| c.name)
        .zip(s.units())
        .collect();
    let unit = |n: &str| named.iter().find(|(c, _)| c == n).unwrap().1.as_deref();
    // An angular speed is in rad/s, as the catalogue names it (it read "1/s").
    assert_eq!(unit("idleSpeed"), Some("rad/s"));
    assert_eq!(unit("clutchRise"), Some("s"));
    assert_eq!(unit("throttle"), None);
    assert_eq!(unit("end_time"), Some("s"));
    assert_eq!(unit("wall_time"), Some("s"));
    assert_eq!(unit("v"), Some("m/s"));
    assert_eq!(unit("stop"), Some("s"));
    assert_eq!(unit("s"), None);
    assert_eq!(unit("run"), None);
    let json = s.study_json(None);
    assert_eq!(json["units"]["v"], "m/s");
    assert!(json["units"].get("throttle").is_none());
}

#[test]
fn a_second_study_into_a_used_directory_is_refused_unless_forced() {
    // A directory that does not exist yet, as a new `--out` is.
    let scratch = temp_dir("used_out");
    let dir = scratch.path().join("study");
    let s = study(
        "mech_brake_stop.json",
        StudyArgs {
            grid: strs(&["J=[1, 2]"]),
            ..Default::default()
        },
    )
    .unwrap();
    drivelink_sweep::prepare_out_dir(&dir, false).unwrap();
    let t = s.run(0..2, 1, Some(&dir), &|_| {}).unwrap();
    drivelink_sweep::write_study(&dir, &t, &s.study_json(None)).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let e = drivelink_sweep::prepare_out_dir(&dir, false)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!("--out {}: the directory holds a study already (sweep.csv, sweep.parquet, study.json, runs)", dir.display())),
        "{e}"
    );
    assert!(e.contains("--force"), "{e}");
    assert!(dir.join("runs/000001").is_dir());
    drivelink_sweep::prepare_out_dir(&dir, true).unwrap();
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["notes.txt"], "only the study's files are removed");
}

#[test]
fn a_set_value_in_another_unit_than_the_netlists_is_refused() {
    let with_set = |v: &str| {
        study(
            "mech_brake_stop.json",
            StudyArgs {
                grid: strs(&["T=[10, 12]"]),
                set: strs(&[v]),
                ..Default::default()
            },
        )
    };
    let e = with_set("J=3 N").err().unwrap().to_string();
    assert!(
        e.starts_with(
            "--set J: '3 N' is in N but parameter 'J' is in kg·m² (the netlist gives \"2 kg*m^2\")"
        ),
        "{e}"
    );
    for fits in ["J=3 kg*m^2", "J=3", "J=1.5*2 kg*m^2"] {
        assert!(with_set(fits).is_ok(), "{fits}");
    }
}

/// A grid's size is known from its text: a grid of 10^18 points (or two axes whose
/// product overflows) is refused before any of its values is made. It used to build the
/// axis first: 23 GB and 30 s for one axis of 10^9 points before the refusal, a
/// capacity-overflow panic for 10^18.
#[test]
fn a_grid_of_a_billion_billion_points_is_refused_before_its_values_are_made() {
    for grid in [
        vec!["T0=100:200:1000000000000000000"],
        vec!["T0=100:200:4294967296", "mu_ice=0.1:0.9:4294967296"],
    ] {
        let e = study(
            "vehicle_split_mu_open.json",
            StudyArgs {
                grid: strs(&grid),
                ..Default::default()
            },
        )
        .err()
        .expect("refused")
        .to_string();
        assert!(
            e.contains(&format!(
                "the study has more than {} runs",
                drivelink_sweep::MAX_RUNS
            )),
            "{e}"
        );
    }
}
