//! A netlist's `metrics` section end to end: `drivelink run` writes the values to
//! summary.json and prints them, `drivelink sweep` makes them its default columns, bad
//! metrics are located errors.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::{drivelink, temp_dir};

use serde_json::{json, Value};

/// s.y = amp·sin(2π t) and r.y, a ramp from 0 at t = 1 s to 4 at t = 3 s, on a 1 ms grid;
/// only s.y is logged (the metrics need r.y too).
fn netlist(metrics: Value) -> Value {
    json!({
        "drivelink": 1, "name": "m",
        "parameters": {"amp": 2},
        "solver": {"stop_time": 3, "output_interval": "1 ms"},
        "blocks": [
            {"name": "s", "type": "Sine", "params": {"amplitude": "amp", "frequency": 1}},
            {"name": "r", "type": "Ramp", "params": {"start_time": 1, "duration": 2, "height": 4}}
        ],
        "log": ["s.y"],
        "metrics": metrics
    })
}

fn metrics() -> Value {
    json!({
        "peak": "max(s.y)",
        "mean_half": "mean(s.y, 0 s, 500 ms)",
        "cross": "first_time(r.y >= 2)",
        "ratio": "peak / amp",
        "gain": "slope(r.y, time, 1.2, 2.8)",
        "never": "first_time(r.y > 10)"
    })
}

fn write(dir: &Path, v: &Value) -> PathBuf {
    let p = dir.join("net.json");
    std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    p
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    drivelink().args(args).output().unwrap()
}

fn close(v: &Value, want: f64, tol: f64) {
    let got = v.as_f64().unwrap_or_else(|| panic!("{v} is no number"));
    assert!((got - want).abs() <= tol, "got {got}, want {want}");
}

#[test]
fn run_writes_and_prints_the_netlists_metrics() {
    let dir = temp_dir("run");
    let net = write(&dir, &netlist(metrics()));
    let out = dir.join("out");
    let o = run(&[
        "run".as_ref(),
        net.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--no-report".as_ref(),
        "--no-plots".as_ref(),
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{stdout}{stderr}");
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let m = &summary["metrics"];
    let names: Vec<&str> = m.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["peak", "mean_half", "cross", "ratio", "gain", "never"]
    );
    // The sine's peak is a sample (t = 0.25 s is on the grid).
    close(&m["peak"], 2.0, 1e-9);
    // Mean of amp·sin over half a period: 2·amp/π; trapezoids with h = 1 ms err by at most
    // h²ω²/12 of the amplitude (7e-6).
    close(&m["mean_half"], 4.0 / std::f64::consts::PI, 1e-5);
    // r.y = 2 (t − 1) reaches 2 at t = 2 s, and rises 2 per second.
    close(&m["cross"], 2.0, 1e-9);
    close(&m["ratio"], 1.0, 1e-9);
    close(&m["gain"], 2.0, 1e-9);
    assert_eq!(m["never"], Value::Null);
    // r.y was logged for the metrics.
    let header = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(header.lines().next().unwrap().contains("r.y"), "{header}");
    // Printed, one per line, NaN as NaN.
    assert!(stdout.contains("metrics:\n"), "{stdout}");
    let peak = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("peak"))
        .unwrap();
    let v: f64 = peak.split('=').nth(1).unwrap().trim().parse().unwrap();
    assert!((v - 2.0).abs() < 1e-9, "{peak}");
    assert!(stdout.contains("  never     = NaN\n"), "{stdout}");
}

#[test]
fn bad_metrics_are_located_in_the_netlist() {
    let dir = temp_dir("bad");
    let net = write(
        &dir,
        &netlist(json!({"a": "max(s.yy)", "b": "c * 2", "c": "mean(r.y, 2 s, 1 s)"})),
    );
    for cmd in ["validate", "run"] {
        let o = run(&[
            cmd.as_ref(),
            net.as_os_str(),
            "--out".as_ref(),
            dir.join("o").as_os_str(),
        ][..if cmd == "run" { 4 } else { 2 }]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        let file = net.display().to_string();
        assert!(
            err.contains(&format!(
                "{file}: metrics.b: at column 1: metric 'c' is defined after this one"
            )),
            "{err}"
        );
        assert!(
            err.contains(&format!(
                "{file}: metrics.c: at column 11: window [2 s, 1 s] of mean ends before it starts"
            )),
            "{err}"
        );
    }
    // Names resolve; the signal is checked against the model.
    let net = write(&dir, &netlist(json!({"a": "max(s.yy)"})));
    let o = run(&["validate".as_ref(), net.as_os_str()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("metrics.a: at column 5: unknown signal 's.yy' (did you mean 's.y'?)"),
        "{err}"
    );
}

/// sweep.csv as (header, rows of text cells).
fn read_csv(p: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let t = std::fs::read_to_string(p).unwrap();
    let mut lines = t.lines();
    let h = lines.next().unwrap().split(',').map(String::from).collect();
    (
        h,
        lines
            .map(|l| l.split(',').map(String::from).collect())
            .collect(),
    )
}

fn column(h: &[String], rows: &[Vec<String>], name: &str) -> Vec<f64> {
    let i = h
        .iter()
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("{name} in {h:?}"));
    rows.iter().map(|r| r[i].parse().unwrap()).collect()
}

#[test]
fn sweep_takes_the_netlists_metrics_as_columns() {
    let dir = temp_dir("sweep");
    let net = write(&dir, &netlist(metrics()));
    let out = dir.join("a");
    let o = run(&[
        "sweep".as_ref(),
        net.as_os_str(),
        "--grid".as_ref(),
        "amp=[1,3]".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (h, rows) = read_csv(&out.join("sweep.csv"));
    let metric_cols: Vec<&str> = h[5..h.len() - 1].iter().map(String::as_str).collect();
    assert_eq!(
        metric_cols,
        ["peak", "mean_half", "cross", "ratio", "gain", "never"]
    );
    // Each run's amplitude: the parameter in `ratio` is the run's value.
    let peak = column(&h, &rows, "peak");
    assert!(
        (peak[0] - 1.0).abs() < 1e-9 && (peak[1] - 3.0).abs() < 1e-9,
        "{peak:?}"
    );
    for r in column(&h, &rows, "ratio") {
        assert!((r - 1.0).abs() < 1e-9, "{r}");
    }
    // --metric replaces a netlist metric of its name in place and adds the others.
    let out = dir.join("b");
    let o = run(&[
        "sweep".as_ref(),
        net.as_os_str(),
        "--grid".as_ref(),
        "amp=[1,3]".as_ref(),
        "--metric".as_ref(),
        "peak=min(s.y)".as_ref(),
        "--metric".as_ref(),
        "e=end_time * 2".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (h, rows) = read_csv(&out.join("sweep.csv"));
    let metric_cols: Vec<&str> = h[5..h.len() - 1].iter().map(String::as_str).collect();
    assert_eq!(
        metric_cols,
        ["peak", "mean_half", "cross", "ratio", "gain", "never", "e"]
    );
    let ratio = column(&h, &rows, "ratio");
    assert!(ratio.iter().all(|r| (r + 1.0).abs() < 1e-9), "{ratio:?}");
    assert_eq!(column(&h, &rows, "e"), [6.0, 6.0]);
}
