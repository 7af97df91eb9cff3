//! `drivelink sweep`, `sweep-merge` and `plot --x` end to end through the built binary:
//! runs bit-identical to `drivelink run --set`, shards merged equal to the whole study,
//! bad input refused before any run, tables plotted against any column.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;
use common::temp_dir;

fn drivelink() -> Command {
    Command::new(env!("CARGO_BIN_EXE_drivelink"))
}

fn netlist(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("models/netlists")
        .join(name)
}

fn run(args: &[&str]) -> Output {
    drivelink().args(args).output().unwrap()
}

fn ok(o: &Output) -> String {
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {out}\nstderr: {err}",
        o.status.code()
    );
    out
}

/// A CSV as a header and rows of cells (no quoted commas in these tables' numbers).
fn read_csv(p: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(p).unwrap();
    let mut lines = text.lines();
    let header = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    (header, rows)
}

/// The table without its `wall_time` column (the only column that differs between two
/// executions of the same study).
fn without_wall_time(p: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let (h, rows) = read_csv(p);
    let j = h.iter().position(|c| c == "wall_time").unwrap();
    let drop = |v: &Vec<String>| -> Vec<String> {
        v.iter()
            .enumerate()
            .filter(|(k, _)| *k != j)
            .map(|(_, c)| c.clone())
            .collect()
    };
    (drop(&h), rows.iter().map(drop).collect())
}

#[test]
fn sweep_runs_are_bit_identical_to_drivelink_run_with_set() {
    let dir = temp_dir("sweep_bits");
    let model = netlist("full_car.json");
    let out = dir.join("study");
    ok(&run(&[
        "sweep",
        model.to_str().unwrap(),
        "--grid",
        "throttle=0.15:0.35:3",
        "--grid",
        "clutchRise=0.1 s:0.5 s:2",
        "--metric",
        "v_max=max(vehicle.v)",
        "--stop-time",
        "25",
        "--keep-results",
        "--jobs",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]));
    let (h, rows) = read_csv(&out.join("sweep.csv"));
    assert_eq!(
        h,
        [
            "run",
            "throttle",
            "clutchRise",
            "status",
            "end_time",
            "wall_time",
            "v_max",
            "message"
        ]
    );
    assert_eq!(rows.len(), 6);
    for k in [1usize, 4] {
        let (throttle, rise) = (&rows[k][1], &rows[k][2]);
        let single = dir.join(format!("single{k}"));
        ok(&run(&[
            "run",
            model.to_str().unwrap(),
            "--set",
            &format!("throttle={throttle}"),
            "--set",
            &format!("clutchRise={rise}"),
            "--stop-time",
            "25",
            "--no-plots",
            "--no-report",
            "--out",
            single.to_str().unwrap(),
        ]));
        let (sh, srows) = read_csv(&single.join("results.csv"));
        let (wh, wrows) = read_csv(&out.join("runs").join(format!("{k:06}")).join("results.csv"));
        assert_eq!(srows.len(), wrows.len(), "run {k}: sample count");
        // Every column of `run` is in the sweep's results (which add the metric signals),
        // sample for sample, to the last bit (shortest round-trip text).
        for (j, name) in sh.iter().enumerate() {
            let wj = wh.iter().position(|n| n == name).unwrap();
            for (a, b) in srows.iter().zip(&wrows) {
                assert_eq!(a[j], b[wj], "run {k}, column {name}");
            }
        }
        let v = wh.iter().position(|n| n == "vehicle.v").unwrap();
        let max = wrows
            .iter()
            .map(|r| r[v].parse::<f64>().unwrap())
            .fold(f64::MIN, f64::max);
        assert_eq!(rows[k][6].parse::<f64>().unwrap(), max);
        let events_run = std::fs::read_to_string(single.join("events.csv")).unwrap();
        let events_sweep =
            std::fs::read_to_string(out.join("runs").join(format!("{k:06}")).join("events.csv"))
                .unwrap();
        assert_eq!(events_run, events_sweep, "run {k}: events");
    }
}

#[test]
fn shards_merged_equal_the_unsharded_study() {
    let dir = temp_dir("sweep_shards");
    let model = netlist("mech_brake_stop.json");
    let common = [
        "--grid",
        "J=1:3:5",
        "--dist",
        "T=uniform(10 N*m, 14 N*m)",
        "--samples",
        "3",
        "--seed",
        "11",
        "--metric",
        "stop=event_time(brake, lock, 1)",
    ];
    let sweep = |out: &Path, extra: &[&str]| {
        let mut a = vec!["sweep", model.to_str().unwrap()];
        a.extend(common);
        a.extend(extra);
        a.extend(["--out", out.to_str().unwrap()]);
        ok(&run(&a))
    };
    let whole = dir.join("whole");
    sweep(&whole, &[]);
    let shards: Vec<PathBuf> = (0..4).map(|i| dir.join(format!("shard{i}"))).collect();
    for (i, s) in shards.iter().enumerate() {
        let text = sweep(s, &["--shard", &format!("{i}/4"), "--jobs", "1"]);
        assert!(text.contains(&format!("shard {i}/4")), "{text}");
    }
    let merged = dir.join("merged");
    let mut a = vec!["sweep-merge".to_string()];
    // Out of order on purpose.
    for i in [2, 0, 3, 1] {
        a.push(shards[i].display().to_string());
    }
    a.extend(["--out".to_string(), merged.display().to_string()]);
    ok(&drivelink().args(&a).output().unwrap());
    assert_eq!(
        without_wall_time(&merged.join("sweep.csv")),
        without_wall_time(&whole.join("sweep.csv"))
    );
    let (_, rows) = read_csv(&whole.join("sweep.csv"));
    assert_eq!(rows.len(), 15);

    // A missing shard, a repeated one, and a shard of another study are refused.
    let o = drivelink()
        .args([
            "sweep-merge",
            shards[0].to_str().unwrap(),
            shards[2].to_str().unwrap(),
            "--out",
        ])
        .arg(dir.join("m2"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("runs are missing: 3-6, 11-14"), "{err}");
    let o = drivelink()
        .args([
            "sweep-merge",
            shards[0].to_str().unwrap(),
            shards[0].to_str().unwrap(),
            "--out",
        ])
        .arg(dir.join("m3"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("run 0 is in both"));
    let other = dir.join("other");
    ok(&run(&[
        "sweep",
        model.to_str().unwrap(),
        "--grid",
        "J=1:3:5",
        "--shard",
        "1/4",
        "--out",
        other.to_str().unwrap(),
    ]));
    let o = drivelink()
        .args([
            "sweep-merge",
            shards[0].to_str().unwrap(),
            other.to_str().unwrap(),
            "--out",
        ])
        .arg(dir.join("m4"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("shards of one study have the same id"),
        "{err}"
    );

    // A damaged study.json claiming 2^63 runs: the runs are missing, said at once (the
    // merge used to allocate a slot per claimed run and abort).
    let damaged = dir.join("damaged");
    std::fs::create_dir_all(&damaged).unwrap();
    for f in ["sweep.csv", "sweep.parquet"] {
        std::fs::copy(shards[0].join(f), damaged.join(f)).unwrap();
    }
    let study = std::fs::read_to_string(shards[0].join("study.json")).unwrap();
    let study = study.replacen("\"runs\": 15", "\"runs\": 9223372036854775808", 1);
    assert!(study.contains("9223372036854775808"), "{study}");
    std::fs::write(damaged.join("study.json"), study).unwrap();
    let o = drivelink()
        .args(["sweep-merge", damaged.to_str().unwrap(), "--out"])
        .arg(dir.join("m5"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "9223372036854775805 of 9223372036854775808 runs are missing: 3-9223372036854775807"
        ),
        "{err}"
    );
}

#[test]
fn bad_sweeps_exit_2_naming_the_culprit_and_run_nothing() {
    let dir = temp_dir("sweep_bad");
    let model = netlist("full_car.json");
    let out = dir.join("never");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--grid", "throtle=0.1:0.3:3"],
            "--grid throtle: unknown parameter 'throtle' (did you mean 'throttle'?)",
        ),
        (
            &["--grid", "throttle=0.1:0.3"],
            "--grid throttle=0.1:0.3: expected NAME=START:STOP:COUNT",
        ),
        (
            &["--grid", "throttle=[0.1]", "--metric", "v=max(vehicle.vv)"],
            "--metric v: unknown signal 'vehicle.vv' (did you mean 'vehicle.v'?)",
        ),
        (
            &["--grid", "throttle=[0.1]", "--metric", "v=top(vehicle.v)"],
            "--metric v: unknown metric 'top'",
        ),
        (
            &["--grid", "throttle=[0.1]", "--shard", "4/4"],
            "--shard 4/4: expected I/N with 0 <= I < N",
        ),
        (
            &["--grid", "idleSpeed=[1 N]"],
            "--grid idleSpeed: '1 N' is in N but parameter 'idleSpeed' is",
        ),
        (
            &["--grid", "throttle=[0.1]", "--set", "idleSpeed=1 N"],
            "--set idleSpeed: '1 N' is in N but parameter 'idleSpeed' is",
        ),
        // No stray space after the option when there is no text to quote.
        (
            &["--metric", "v=max(vehicle.v)"],
            "error: --grid: a study needs at least one --grid NAME=SPEC, or --samples N with a --dist NAME=DIST",
        ),
    ];
    for (args, expected) in cases {
        let mut a = vec!["sweep", model.to_str().unwrap()];
        a.extend(args.iter());
        a.extend(["--out", out.to_str().unwrap()]);
        let o = run(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(expected),
            "{args:?}: expected {expected:?} in\n{err}"
        );
        assert!(!out.exists(), "{args:?}: something was written");
    }
}

#[test]
fn plot_draws_a_table_against_any_column() {
    let dir = temp_dir("sweep_plot");
    let out = dir.join("study");
    ok(&run(&[
        "sweep",
        netlist("mech_brake_stop.json").to_str().unwrap(),
        "--grid",
        "J=1:3:5",
        "--grid",
        "T=[10, 12]",
        "--metric",
        "stop=event_time(brake, lock, 1)",
        "--out",
        out.to_str().unwrap(),
    ]));
    let csv = out.join("sweep.csv");
    let png = dir.join("stop.png");
    let text = ok(&run(&[
        "plot",
        csv.to_str().unwrap(),
        "--x",
        "J",
        "--signals",
        "stop",
        "--where",
        "T=12",
        "--out",
        png.to_str().unwrap(),
    ]));
    assert!(text.contains("wrote"));
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
    let svg = dir.join("stop.svg");
    ok(&run(&[
        "plot",
        csv.to_str().unwrap(),
        "--x",
        "J",
        "--signals",
        "stop,end_time",
        "--out",
        svg.to_str().unwrap(),
    ]));
    let s = std::fs::read_to_string(&svg).unwrap();
    // Text elements' contents, trimmed (the SVG writer puts them on their own lines).
    let texts: Vec<&str> = s
        .split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>'))
        .map(|(_, rest)| rest.split('<').next().unwrap_or("").trim())
        .collect();
    assert!(
        texts.contains(&"J"),
        "the x axis is titled by its column: {texts:?}"
    );
    assert!(!s.contains("time [s]"));
    // Without --x, a table whose first column is not time says how to plot it.
    let o = run(&[
        "plot",
        csv.to_str().unwrap(),
        "--signals",
        "stop",
        "--out",
        png.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("--x NAME"), "{err}");
    // Unknown columns are named with a suggestion.
    let o = run(&[
        "plot",
        csv.to_str().unwrap(),
        "--x",
        "JJ",
        "--signals",
        "stp",
        "--out",
        png.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--x: no column 'JJ' (did you mean 'J'?)"),
        "{err}"
    );
    assert!(
        err.contains("--signals: no column 'stp' (did you mean 'stop'?)"),
        "{err}"
    );
    // A results.csv against a signal other than time.
    let single = dir.join("single");
    ok(&run(&[
        "run",
        netlist("mech_brake_stop.json").to_str().unwrap(),
        "--no-plots",
        "--no-report",
        "--out",
        single.to_str().unwrap(),
    ]));
    ok(&run(&[
        "plot",
        single.join("results.csv").to_str().unwrap(),
        "--x",
        "brake.tau",
        "--signals",
        "brake.mode",
        "--out",
        dir.join("mode.png").to_str().unwrap(),
    ]));
}

/// Start `cmd`, wait until `ready()` (something the process itself has written: the time
/// it takes does not matter), send it SIGINT as Ctrl-C does, and return its output. A
/// process that ends before it is ready fails the test with its output.
fn interrupted_when(cmd: &mut Command, ready: impl Fn() -> bool) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while !ready() {
        if child.try_wait().unwrap().is_some() {
            let o = child.wait_with_output().unwrap();
            panic!(
                "ended (exit {:?}) before it was ready to be interrupted\nstderr: {}",
                o.status.code(),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    child.wait_with_output().unwrap()
}

/// Ctrl-C in `drivelink sweep`: the finished runs are written, marked as an interrupted
/// study that `sweep-merge` refuses, and the exit code is 130. The fixture's stop time is
/// its parameter `t_end`, so one sweep holds a run of 1 s and one of minutes; only the
/// short one can be in the table, and only its results directory is kept. Ctrl-C comes
/// once the first run's results are written (so the long run is under way, on one
/// thread), however long the machine takes to get there.
#[test]
fn ctrl_c_keeps_the_finished_runs_of_a_sweep_and_merge_refuses_them() {
    let model = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/long_run.json");
    let dir = temp_dir("sweep_ctrl_c");
    let out = dir.join("study");
    let mut cmd = drivelink();
    cmd.arg("sweep")
        .arg(&model)
        .args([
            "--grid",
            "t_end=[1 s, 1e6 s, 2 s]",
            "--metric",
            "y_end=final(lag.y)",
            "--keep-results",
        ])
        .args(["--jobs", "1", "--out"])
        .arg(&out);
    // The second run takes minutes uncancelled; interrupt it once the first is written.
    let first = out.join("runs/000000/summary.json");
    let o = interrupted_when(&mut cmd, || first.is_file());
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted") && stderr.contains("after 1 of 3 runs"),
        "{stderr}"
    );
    let (header, rows) = read_csv(&out.join("sweep.csv"));
    assert_eq!(rows.len(), 1, "only the finished run: {rows:?}");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(rows[0][col("run")], "0");
    assert_eq!(rows[0][col("status")], "completed");
    assert_eq!(rows[0][col("end_time")], "1");
    let study: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("study.json")).unwrap()).unwrap();
    assert_eq!(study["interrupted"], true);
    assert_eq!(study["finished_runs"], 1);
    let mut kept: Vec<String> = std::fs::read_dir(out.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    assert_eq!(kept, ["000000"], "the table's runs only");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("runs/000000/summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["status"], "completed");
    assert_eq!(summary["end_time"], 1.0);
    let m = run(&[
        "sweep-merge",
        out.to_str().unwrap(),
        "--out",
        dir.join("m").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&m.stderr);
    assert_eq!(m.status.code(), Some(2), "{err}");
    assert!(err.contains("interrupted study"), "{err}");
}

/// A swept parameter that the solver section names (`"stop_time": "t_end"`) sets the
/// stop time of each run (every run kept the netlist's value).
#[test]
fn a_swept_parameter_in_the_solver_section_sets_each_runs_stop_time() {
    let model = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/long_run.json");
    let dir = temp_dir("sweep_stop_param");
    let o = run(&[
        "sweep",
        model.to_str().unwrap(),
        "--grid",
        "t_end=[0.5 s, 1 s, 2 s]",
        "--out",
        dir.to_str().unwrap(),
    ]);
    ok(&o);
    let (header, rows) = read_csv(&dir.join("sweep.csv"));
    let col = header.iter().position(|h| h == "end_time").unwrap();
    let ends: Vec<&str> = rows.iter().map(|r| r[col].as_str()).collect();
    assert_eq!(ends, ["0.5", "1", "2"]);
}

/// A second study written into the `--out` of a first one overwrote its table and, with
/// `--keep-results`, left the first study's runs beside the second's table. It is refused
/// (exit 2, nothing written) naming the directory; `--force` replaces the study.
#[test]
fn a_second_study_into_a_used_out_is_refused_and_force_replaces_it() {
    let dir = temp_dir("sweep_used_out");
    let model = netlist("mech_brake_stop.json");
    let sweep = |grid: &str, extra: &[&str]| {
        let mut a = vec![
            "sweep",
            model.to_str().unwrap(),
            "--grid",
            grid,
            "--out",
            dir.to_str().unwrap(),
        ];
        a.extend(extra);
        run(&a)
    };
    ok(&sweep("J=1:3:3", &["--keep-results"]));
    let before = std::fs::read_to_string(dir.join("sweep.csv")).unwrap();
    let o = sweep("J=[5]", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "--out {}: the directory holds a study already",
            dir.display()
        )) && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("sweep.csv")).unwrap(),
        before
    );
    ok(&sweep("J=[5]", &["--force"]));
    let (_, rows) = read_csv(&dir.join("sweep.csv"));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][1], "5");
    assert!(
        !dir.join("runs").exists(),
        "the first study's runs are gone"
    );
}

#[test]
fn sweep_merge_counts_one_shard_and_one_run_in_the_singular() {
    let dir = temp_dir("sweep_merge_one");
    let model = netlist("mech_brake_stop.json");
    let whole = dir.join("whole");
    ok(&run(&[
        "sweep",
        model.to_str().unwrap(),
        "--grid",
        "J=[2]",
        "--out",
        whole.to_str().unwrap(),
    ]));
    let text = ok(&run(&[
        "sweep-merge",
        whole.to_str().unwrap(),
        "--out",
        dir.join("m").to_str().unwrap(),
    ]));
    assert!(
        text.starts_with("merged 1 shard: 1 run of study "),
        "{text}"
    );
    // Merging again into the used directory overwrote it silently; now it is refused
    // unless --force.
    let again = run(&[
        "sweep-merge",
        whole.to_str().unwrap(),
        "--out",
        dir.join("m").to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(2));
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("holds a study already"), "{err}");
    ok(&run(&[
        "sweep-merge",
        whole.to_str().unwrap(),
        "--out",
        dir.join("m").to_str().unwrap(),
        "--force",
    ]));
}

/// `sweep --resume DIR` finishes a study Ctrl-C cut short: the runs its table lacks are
/// run (with the netlist and arguments study.json records, their results kept as the
/// study kept them) and the table is written complete. The interrupted directory is made
/// from a complete one by taking runs out of it, as Ctrl-C leaves it.
#[test]
fn resume_finishes_an_interrupted_study_to_the_complete_table() {
    let dir = temp_dir("sweep_resume");
    let model = netlist("mech_brake_stop.json");
    let study = |out: &Path| {
        ok(&run(&[
            "sweep",
            model.to_str().unwrap(),
            "--grid",
            "J=1:3:5",
            "--metric",
            "stop=event_time(brake, lock, 1)",
            "--keep-results",
            "--out",
            out.to_str().unwrap(),
        ]))
    };
    let whole = dir.join("whole");
    study(&whole);
    let cut = dir.join("cut");
    study(&cut);
    // What Ctrl-C leaves: runs 1 and 3 missing from the table and from runs/.
    let csv = std::fs::read_to_string(cut.join("sweep.csv")).unwrap();
    let kept: Vec<&str> = csv
        .lines()
        .filter(|l| !l.starts_with("1,") && !l.starts_with("3,"))
        .collect();
    std::fs::write(cut.join("sweep.csv"), kept.join("\n") + "\n").unwrap();
    for r in ["000001", "000003"] {
        std::fs::remove_dir_all(cut.join("runs").join(r)).unwrap();
    }
    let sp = cut.join("study.json");
    let mut s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sp).unwrap()).unwrap();
    s["interrupted"] = true.into();
    s["finished_runs"] = 3.into();
    std::fs::write(&sp, s.to_string()).unwrap();

    let text = ok(&run(&["sweep", "--resume", cut.to_str().unwrap()]));
    assert!(
        text.contains("5 runs (2 run now, the others before)"),
        "{text}"
    );
    assert_eq!(
        without_wall_time(&cut.join("sweep.csv")),
        without_wall_time(&whole.join("sweep.csv"))
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sp).unwrap()).unwrap();
    assert!(s.get("interrupted").is_none(), "{s}");
    for r in ["000001", "000003"] {
        assert_eq!(
            std::fs::read_to_string(cut.join("runs").join(r).join("results.csv")).unwrap(),
            std::fs::read_to_string(whole.join("runs").join(r).join("results.csv")).unwrap(),
            "run {r}"
        );
    }
    // A complete study has nothing to resume.
    let o = run(&["sweep", "--resume", whole.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("was not interrupted"), "{err}");
}
