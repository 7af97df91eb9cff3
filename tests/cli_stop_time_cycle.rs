//! `"solver": {"stop_time": "cycle"}`: a run ends at the end of its `DriveCycle`'s trace
//! (its last breakpoint after `repeat`, the shipped CSV's last time), resolved per
//! compilation, so a run under another `cycle` parameter gets that cycle's length; the
//! command line's `--stop-time` still overrides it; without a `DriveCycle` it is an error
//! naming `solver.stop_time`.

use std::path::Path;
use std::process::Command;

use drivelink::core::{Compiled, RunStatus};
use drivelink::netlist;
use serde_json::{json, Value};

mod common;
use common::temp_dir;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The last time (s) of a shipped cycle's CSV, read from the file itself.
fn csv_end(cycle: &str) -> f64 {
    let text = std::fs::read_to_string(root().join(format!("models/cycles/{cycle}.csv"))).unwrap();
    let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    last.split(',').next().unwrap().trim().parse().unwrap()
}

/// The trace's distance (m): trapezoids over the shipped CSV (speeds in m/s).
fn csv_distance(cycle: &str) -> f64 {
    let text = std::fs::read_to_string(root().join(format!("models/cycles/{cycle}.csv"))).unwrap();
    assert!(text.starts_with("time,speed [m/s]"), "{cycle}: header");
    let rows: Vec<(f64, f64)> = text
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (t, v) = l.split_once(',').unwrap();
            (t.trim().parse().unwrap(), v.trim().parse().unwrap())
        })
        .collect();
    rows.windows(2)
        .map(|w| 0.5 * (w[0].1 + w[1].1) * (w[1].0 - w[0].0))
        .sum()
}

/// A drive cycle (`cycle` parameter, `repeat`) whose speed is integrated to a distance.
fn cycle_netlist(repeat: u32) -> Value {
    json!({
        "drivelink": 1,
        "name": "trace_only",
        "parameters": {"cycle": "udds"},
        "solver": {"stop_time": "cycle", "output_interval": "10 s"},
        "blocks": [
            {"name": "trace", "type": "DriveCycle", "params": {"cycle": "cycle", "repeat": repeat}},
            {"name": "dist", "type": "Integrator"}
        ],
        "connections": [["trace.v", "dist.u"]],
        "log": "all"
    })
}

fn compiled(v: &Value) -> Compiled {
    let d = netlist::load_value(v, "trace_only.json", root()).unwrap();
    Compiled::new(&d, &drivelink::blocks::registry()).unwrap()
}

#[test]
fn stop_time_cycle_ends_the_run_with_the_udds_trace() {
    assert_eq!(csv_end("udds"), 1369.0);
    let c = compiled(&cycle_netlist(1));
    let mut m = c.model(&drivelink::blocks::registry()).unwrap();
    assert_eq!(m.settings().stop_time, 1369.0);
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    assert_eq!(r.end_time, 1369.0);
    // The whole trace was driven: the integrated speed is the trace's distance.
    let d = r
        .last("dist.y")
        .unwrap_or_else(|| panic!("columns: {:?}", r.names));
    let exact = csv_distance("udds");
    assert!((d - exact).abs() < 1e-6 * exact, "{d} m vs {exact} m");
}

#[test]
fn stop_time_cycle_counts_every_repeat() {
    let c = compiled(&cycle_netlist(2));
    let mut m = c.model(&drivelink::blocks::registry()).unwrap();
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    assert_eq!(r.end_time, 2738.0);
    let d = r.last("dist.y").unwrap();
    let exact = 2.0 * csv_distance("udds");
    assert!((d - exact).abs() < 1e-6 * exact, "{d} m vs {exact} m");
}

#[test]
fn stop_time_cycle_follows_the_cycle_parameter_of_each_run() {
    let reg = drivelink::blocks::registry();
    let c = compiled(&cycle_netlist(1));
    for cycle in ["udds", "hwfet", "us06", "udds"] {
        let mut m = c
            .with_params(&reg, &[("cycle".into(), json!(cycle))])
            .unwrap();
        assert_eq!(m.settings().stop_time, csv_end(cycle), "{cycle}");
        let r = m.run();
        assert_eq!(r.status, RunStatus::Completed, "{cycle}: {}", r.message);
        assert_eq!(r.end_time, csv_end(cycle), "{cycle}");
    }
}

#[test]
fn stop_time_cycle_without_a_drive_cycle_names_solver_stop_time() {
    let v = json!({
        "drivelink": 1,
        "name": "no_trace",
        "solver": {"stop_time": "cycle"},
        "blocks": [
            {"name": "k", "type": "Constant", "params": {"value": 1}},
            {"name": "i", "type": "Integrator"}
        ],
        "connections": [["k.y", "i.u"]]
    });
    let d = netlist::load_value(&v, "no_trace.json", root()).unwrap();
    let e = Compiled::new(&d, &drivelink::blocks::registry())
        .err()
        .expect("a model without a DriveCycle cannot stop at its end")
        .to_string();
    assert!(e.contains("solver.stop_time"), "{e}");
    assert!(e.contains("\"cycle\" needs a DriveCycle block"), "{e}");
}

#[test]
fn stop_time_misspelled_cycle_is_refused_with_a_suggestion() {
    let mut v = cycle_netlist(1);
    v["solver"]["stop_time"] = json!("cylce");
    let e = netlist::load_value(&v, "trace_only.json", root())
        .expect_err("a misspelled word is not a stop time")
        .to_string();
    assert!(e.contains("solver.stop_time"), "{e}");
    assert!(e.contains("cycle"), "{e}");
}

#[test]
fn stop_time_cycle_saves_and_loads_back() {
    let v = cycle_netlist(1);
    let d = netlist::load_value(&v, "trace_only.json", root()).unwrap();
    assert!(d.stops_at_cycle());
    let saved = netlist::to_json(&d);
    assert_eq!(saved["solver"]["stop_time"], "cycle");
    // Settings changed in code since loading keep the cycle's end as the stop time.
    let mut changed = d.clone();
    changed.settings.rtol = 1e-5;
    assert_eq!(netlist::to_json(&changed)["solver"]["stop_time"], "cycle");
    let m = Compiled::new(&changed, &drivelink::blocks::registry())
        .unwrap()
        .model(&drivelink::blocks::registry())
        .unwrap();
    assert_eq!(m.settings().stop_time, 1369.0);
    assert_eq!(m.settings().rtol, 1e-5);
    // A stop time set in code replaces it.
    let mut set = d.clone();
    set.set_stop_time(100.0);
    assert!(!set.stops_at_cycle());
    assert_eq!(
        netlist::to_json(&set)["solver"]["stop_time"].as_f64(),
        Some(100.0)
    );
}

/// `drivelink COMMAND FILE ARGS --out DIR` on the netlist `v`; `read(DIR)` of the output.
fn cli<T>(v: &Value, tag: &str, command: &[&str], read: impl Fn(&Path) -> T) -> T {
    let dir = temp_dir(&format!("stop_cycle_{tag}"));
    let file = dir.join("trace_only.json");
    std::fs::write(&file, serde_json::to_string_pretty(v).unwrap()).unwrap();
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_drivelink"))
        .arg(command[0])
        .arg(&file)
        .args(&command[1..])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    read(&out)
}

/// `drivelink run FILE ARGS` on the netlist `v`; the summary.json of the run.
fn cli_run(v: &Value, tag: &str, args: &[&str]) -> Value {
    let mut command = vec!["run", "--no-plots", "--no-report"];
    command.extend(args);
    cli(v, tag, &command, |out| {
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
    })
}

#[test]
fn cli_sweep_over_the_cycle_gives_each_run_its_cycle_length() {
    let v = cycle_netlist(1);
    let csv = cli(
        &v,
        "sweep",
        &["sweep", "--grid", "cycle=[udds, hwfet]", "--jobs", "1"],
        |out| std::fs::read_to_string(out.join("sweep.csv")).unwrap(),
    );
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    for (row, cycle) in rows.iter().zip(["udds", "hwfet"]) {
        assert_eq!(row[col("cycle")], cycle, "{csv}");
        assert_eq!(row[col("status")], "completed", "{csv}");
        let end: f64 = row[col("end_time")].parse().unwrap();
        assert_eq!(end, csv_end(cycle), "{csv}");
    }
}

#[test]
fn cli_run_stops_at_the_cycle_unless_told_otherwise() {
    let v = cycle_netlist(1);
    let s = cli_run(&v, "hwfet", &["--set", "cycle=hwfet"]);
    assert_eq!(s["status"], "completed", "{}", s["message"]);
    assert_eq!(s["end_time"].as_f64(), Some(csv_end("hwfet")));
    let s = cli_run(&v, "override", &["--stop-time", "100 s"]);
    assert_eq!(s["status"], "completed", "{}", s["message"]);
    assert_eq!(s["end_time"].as_f64(), Some(100.0));
}

#[test]
fn cycle_csv_next_to_the_netlist_is_found_from_any_working_directory() {
    // A three-point trace in `my_cycle.csv` beside the netlist, named by a relative path;
    // the CLI runs from another directory (the system's temporary directory's parent).
    let dir = temp_dir("csv_beside");
    std::fs::create_dir_all(dir.join("cycles")).unwrap();
    std::fs::write(
        dir.join("cycles/my_cycle.csv"),
        "time,speed [km/h]\n0,0\n10,36\n30,36\n",
    )
    .unwrap();
    let mut v = cycle_netlist(1);
    v["blocks"][0]["params"]["cycle"] = json!("cycles/my_cycle.csv");
    let file = dir.join("trace_only.json");
    std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let elsewhere = std::env::temp_dir()
        .parent()
        .unwrap_or(Path::new("/"))
        .to_path_buf();
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_drivelink"))
        .current_dir(&elsewhere)
        .args(["run", "--no-plots", "--no-report"])
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    // The run ends with the file's trace (30 s), having driven 50 m + 200 m.
    assert_eq!(s["end_time"].as_f64(), Some(30.0));
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let k = head.iter().position(|c| *c == "dist.y").unwrap();
    let last: f64 = csv
        .lines()
        .last()
        .unwrap()
        .split(',')
        .nth(k)
        .unwrap()
        .parse()
        .unwrap();
    assert!((last - 250.0).abs() < 1e-6, "distance {last} m");
}
