//! `drivelink run / validate / blocks / plot` end to end through the built binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::temp_dir;

fn drivelink() -> Command {
    Command::new(env!("CARGO_BIN_EXE_drivelink"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn netlist(name: &str) -> PathBuf {
    root().join("models/netlists").join(name)
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// results.csv as (header, rows).
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let t = std::fs::read_to_string(path).unwrap();
    let mut lines = t.lines();
    let header = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(|c| c.parse::<f64>().unwrap()).collect())
        .collect();
    (header, rows)
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn first_order_step_response_matches_the_analytic_solution() {
    let dir = temp_dir("first_order");
    let out = drivelink()
        .arg("run")
        .arg(netlist("signal_first_order.json"))
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(
        stdout.contains("signal_first_order: completed at t = 3 s"),
        "{stdout}"
    );
    assert!(stdout.contains(&dir.display().to_string()), "{stdout}");

    let (header, rows) = read_csv(&dir.join("results.csv"));
    assert_eq!(header, ["time", "step.y", "lag.y"]);
    let (tau, t0) = (0.5, 0.2);
    assert!(
        rows.len() > 300,
        "output_interval 0.01 over 3 s: {} rows",
        rows.len()
    );
    let mut checked = 0;
    for r in &rows {
        let (t, u, y) = (r[0], r[1], r[2]);
        if t < t0 {
            assert_eq!((u, y), (0.0, 0.0), "before the step at t = {t}");
        } else if t > t0 {
            let exact = 1.0 - (-(t - t0) / tau).exp();
            assert_eq!(u, 1.0);
            assert!((y - exact).abs() < 1e-6, "t = {t}: y = {y}, exact {exact}");
            checked += 1;
        }
    }
    assert!(checked > 250);
    // The step instant is recorded twice (left and right value).
    let at_t0: Vec<&Vec<f64>> = rows.iter().filter(|r| r[0] == t0).collect();
    // The output grid also hits t0; the left/right pair stands for that grid point.
    assert_eq!(at_t0.len(), 2, "event instant exactly twice");
    let n = at_t0.len();
    assert_eq!(
        (at_t0[n - 2][1], at_t0[n - 1][1]),
        (0.0, 1.0),
        "left then right value"
    );
    let events = std::fs::read_to_string(dir.join("events.csv")).unwrap();
    let mut ev = events.lines();
    assert_eq!(ev.next(), Some("time,block,kind,detail"));
    let first: Vec<&str> = ev.next().expect("the step event").splitn(4, ',').collect();
    assert_eq!(first[0].parse::<f64>().unwrap(), t0);
    assert_eq!(&first[1..3], ["step", "time_event"]);

    let s = summary(&dir);
    assert_eq!(s["model"], "signal_first_order");
    assert_eq!(s["status"], "completed");
    assert_eq!(s["end_time"].as_f64(), Some(3.0));
    assert!(s["message"].is_string());
    for k in ["steps", "rejected_steps", "rhs_evals", "events"] {
        assert!(s["stats"][k].is_u64(), "stats.{k}: {s}");
    }
    assert!(s["stats"]["steps"].as_u64().unwrap() > 0);
    assert_eq!(s["stats"]["events"].as_u64(), Some(1));
    assert!(s["wall_time_s"].as_f64().unwrap() >= 0.0);

    let png = std::fs::read(dir.join("response.png")).expect("one PNG per scope");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(!dir.join("response.svg").exists());
}

#[test]
fn every_shipped_netlist_runs_with_exit_0_and_writes_every_scope() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("models/netlists"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    let reg = drivelink::blocks::registry();
    for f in files {
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let dir = temp_dir(&name);
        let out = drivelink()
            .arg("run")
            .arg(&f)
            .arg("--out")
            .arg(&dir)
            .arg("--svg")
            .output()
            .unwrap();
        let (stdout, stderr) = text(&out);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: stdout {stdout}\nstderr {stderr}"
        );
        let s = summary(&dir);
        assert!(
            s["status"] == "completed" || s["status"] == "stopped",
            "{name}: {s}"
        );
        for file in ["results.csv", "events.csv"] {
            assert!(dir.join(file).is_file(), "{name}: {file}");
        }
        let d = drivelink::netlist::load_file(&f).unwrap();
        for sc in &d.scopes {
            assert!(
                dir.join(format!("{}.png", sc.name)).is_file(),
                "{name}: scope {}",
                sc.name
            );
            assert!(
                dir.join(format!("{}.svg", sc.name)).is_file(),
                "{name}: scope {} svg",
                sc.name
            );
        }
        // validate agrees
        let v = drivelink().arg("validate").arg(&f).output().unwrap();
        let (vo, ve) = text(&v);
        assert_eq!(v.status.code(), Some(0), "{name}: {ve}");
        let m = drivelink::netlist::compile_located(&d, &reg, "x").unwrap();
        assert_eq!(
            vo.trim(),
            format!(
                "ok: {} ({} blocks, {} states)",
                d.name,
                m.plan().blocks().len(),
                m.plan().n_states()
            )
        );
    }
}

#[test]
fn stop_simulation_netlist_stops_at_the_located_instant() {
    let dir = temp_dir("stop");
    let out = drivelink()
        .arg("run")
        .arg(netlist("signal_stop.json"))
        .arg("--out")
        .arg(&dir)
        .arg("--no-plots")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let s = summary(&dir);
    assert_eq!(s["status"], "stopped");
    assert!((s["end_time"].as_f64().unwrap() - 2.5).abs() < 1e-9, "{s}");
    assert!(!dir.join("stop.png").exists(), "--no-plots");
    let events = std::fs::read_to_string(dir.join("events.csv")).unwrap();
    assert!(events.lines().any(|l| l.contains(",stop,")), "{events}");
}

#[test]
fn set_and_stop_time_override_the_netlist() {
    let dir = temp_dir("set");
    let out = drivelink()
        .arg("run")
        .arg(netlist("signal_first_order.json"))
        .args([
            "--set",
            "tau=0.25",
            "--set",
            "t0=\"0.5 s\"",
            "--stop-time",
            "1.5 s",
            "--no-plots",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(summary(&dir)["end_time"].as_f64(), Some(1.5));
    let (_, rows) = read_csv(&dir.join("results.csv"));
    let last = rows.last().unwrap();
    let exact = 1.0 - (-(1.5f64 - 0.5) / 0.25).exp();
    assert!((last[2] - exact).abs() < 1e-6, "{} vs {exact}", last[2]);
}

#[test]
fn set_unknown_parameter_is_exit_2_with_hint() {
    let out = drivelink()
        .arg("run")
        .arg(netlist("signal_first_order.json"))
        .args(["--set", "tua=1"])
        .output()
        .unwrap();
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("unknown parameter 'tua'") && stderr.contains("did you mean 'tau'"),
        "{stderr}"
    );
    assert!(stderr.contains("signal_first_order.json"), "{stderr}");
    let out = drivelink()
        .arg("validate")
        .arg(netlist("signal_first_order.json"))
        .args(["--set", "tau=3 kgg"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown unit in a --set value"
    );
    let out = drivelink()
        .arg("run")
        .arg(netlist("signal_first_order.json"))
        .args(["--stop-time", "-1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("--stop-time"));
}

#[test]
fn failed_run_writes_partial_results_and_exits_1() {
    let dir = temp_dir("failed");
    let model = dir.join("too_few_steps.json");
    std::fs::write(
        &model,
        r#"{"drivelink": 1, "name": "too_few_steps",
            "solver": {"stop_time": 10, "rtol": 1e-10, "atol": 1e-12, "max_steps": 20},
            "blocks": [{"name": "s", "type": "Sine", "params": {"amplitude": 1, "frequency": 1}},
                       {"name": "i", "type": "Integrator"}],
            "connections": [["s.y", "i.u"]],
            "log": ["i.y"],
            "scopes": [{"name": "partial", "signals": ["i.y"]}]}"#,
    )
    .unwrap();
    let out_dir = dir.join("out");
    let out = drivelink()
        .arg("run")
        .arg(&model)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("simulation failed") && stderr.contains("too_few_steps.json"),
        "{stderr}"
    );
    let s = summary(&out_dir);
    assert_eq!(s["status"], "failed");
    assert!(s["message"].as_str().unwrap().contains("max"), "{s}");
    let (_, rows) = read_csv(&out_dir.join("results.csv"));
    assert!(!rows.is_empty(), "partial results are written");
    assert!(rows.last().unwrap()[0] < 10.0);
    assert!(out_dir.join("partial.png").is_file());
}

#[test]
fn default_output_dir_is_out_model_name() {
    let dir = temp_dir("default_out");
    let out = drivelink()
        .current_dir(&dir)
        .arg("run")
        .arg(netlist("signal_saturation.json"))
        .arg("--no-plots")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(dir.join("out/signal_saturation/results.csv").is_file());
    assert!(dir.join("out/signal_saturation/summary.json").is_file());
}

#[test]
fn blocks_catalogue() {
    let reg = drivelink::blocks::registry();
    let out = drivelink().arg("blocks").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let all = text(&out).0;
    for t in reg.types() {
        assert!(
            all.contains(&format!("{} [{}]", t.name, t.category)),
            "catalogue lacks {}",
            t.name
        );
    }
    assert!(all.contains("Subsystem [structure]"));

    let out = drivelink().args(["blocks", "Step"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let step = text(&out).0;
    assert!(step.starts_with("Step [signal]"), "{step}");
    assert!(step.contains("ports: y[out]"), "{step}");
    assert!(
        step.contains("time") && step.contains("number [s]") && step.contains("required"),
        "{step}"
    );
    assert!(step.contains("after") && step.contains("= 1"), "{step}");
    assert!(!step.contains("Gain"), "only the one type");

    let out = drivelink().args(["blocks", "Gian"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).1.contains("did you mean 'Gain'"),
        "{}",
        text(&out).1
    );
}

#[test]
fn plot_replots_saved_results() {
    let dir = temp_dir("plot");
    let run = drivelink()
        .arg("run")
        .arg(netlist("signal_pid.json"))
        .arg("--out")
        .arg(&dir)
        .arg("--no-plots")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0));
    let csv = dir.join("results.csv");
    let png = dir.join("re/plot.png");
    let out = drivelink()
        .arg("plot")
        .arg(&csv)
        .args(["--signals", "setpoint.y,plant.y", "--title", "Loop"])
        .arg("--out")
        .arg(&png)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out).1);
    assert_eq!(&std::fs::read(&png).unwrap()[..4], b"\x89PNG");
    let svg = dir.join("plot.svg");
    let out = drivelink()
        .arg("plot")
        .arg(&csv)
        .args(["--signals", "pid.y", "--unit", "%"])
        .arg("--out")
        .arg(&svg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out).1);
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));

    let out = drivelink()
        .arg("plot")
        .arg(&csv)
        .args(["--signals", "plant.yy"])
        .arg("--out")
        .arg(dir.join("x.png"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).1.contains("did you mean 'plant.y'"),
        "{}",
        text(&out).1
    );
    let out = drivelink()
        .arg("plot")
        .arg(&csv)
        .args(["--signals", "plant.y", "--unit", "rmp"])
        .arg("--out")
        .arg(dir.join("x.png"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("did you mean 'rpm'"));
}

/// Regression: `plot --unit` could not check dimensions, so `--unit rpm` drew a
/// speed in m/s scaled by 30/π. summary.json now records the columns' SI units and the
/// plot refuses a unit of another kind, naming the signal; a fitting unit still plots.
#[test]
fn plot_unit_of_another_kind_is_refused_naming_the_signal() {
    let dir = temp_dir("plot_units");
    let run = drivelink()
        .arg("run")
        .arg(netlist("full_car.json"))
        .arg("--out")
        .arg(&dir)
        .args(["--no-plots", "--no-report"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0));
    let units = &summary(&dir)["units"];
    assert_eq!(
        (&units["engine.w"], &units["vehicle.v"]),
        (&"rad/s".into(), &"m/s".into())
    );
    let plot = |signals: &str, unit: &str| {
        drivelink()
            .arg("plot")
            .arg(dir.join("results.csv"))
            .args(["--signals", signals, "--unit", unit, "--out"])
            .arg(dir.join("p.png"))
            .output()
            .unwrap()
    };
    let bad = plot("engine.w,vehicle.v", "rpm");
    assert_eq!(bad.status.code(), Some(2));
    let err = text(&bad).1;
    assert!(
        err.contains("'vehicle.v' is in m/s") && err.contains("rpm cannot display"),
        "{err}"
    );
    assert_eq!(plot("engine.w", "rpm").status.code(), Some(0));
    assert_eq!(plot("vehicle.v", "km/h").status.code(), Some(0));
}

/// A top-level string (choice) parameter can be set from the command
/// line: `--set diff_type=locked` on the open split-mu launch gives the locked netlist's
/// results exactly.
#[test]
fn set_string_parameter_chooses_the_differential_type() {
    let out = temp_dir("set_string");
    let o = drivelink()
        .args(["run", "--no-plots", "--set", "diff_type=locked", "--out"])
        .arg(&out)
        .arg(netlist("vehicle_split_mu_open.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let locked = temp_dir("set_string_ref");
    let o = drivelink()
        .args(["run", "--no-plots", "--out"])
        .arg(&locked)
        .arg(netlist("vehicle_split_mu_locked.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let a = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let b = std::fs::read_to_string(locked.join("results.csv")).unwrap();
    assert_eq!(a, b, "same model, same results");
    let o = drivelink()
        .args(["validate", "--set", "diff_type=lokced"])
        .arg(netlist("vehicle_split_mu_open.json"))
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("did you mean \"locked\"") || err.contains("did you mean 'locked'"),
        "{err}"
    );
}

#[test]
fn clutch_launch_summary_reports_the_heat_audit() {
    // summary.json carries the thermal audit: the heat the clutch and the gear mesh
    // delivered equals the heat stored in the disc and oil plus what left to ambient.
    let dir = temp_dir("clutch_launch");
    let out = drivelink()
        .arg("run")
        .arg(netlist("driveline_clutch_launch.json"))
        .arg("--out")
        .arg(&dir)
        .arg("--no-plots")
        .output()
        .unwrap();
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let s = summary(&dir);
    let e = &s["energy"];
    let heat = &e["heat"];
    let delivered = heat["delivered"].as_f64().unwrap();
    let losses = &e["losses"];
    let mech = losses["clutch"].as_f64().unwrap() + losses["first_gear"].as_f64().unwrap();
    assert!((delivered - mech).abs() < 1e-9 * mech, "{e:#}");
    let sum = |v: &serde_json::Value| -> f64 {
        v.as_object()
            .unwrap()
            .values()
            .map(|x| x.as_f64().unwrap())
            .sum()
    };
    let (stored, to_fixed) = (sum(&heat["stored"]), sum(&heat["to_fixed"]));
    assert!(stored > 0.0 && to_fixed > 0.0, "{heat:#}");
    assert!(
        (delivered - stored - to_fixed).abs() < 1e-9 * delivered,
        "{heat:#}"
    );
}

/// Ctrl-C during `drivelink run` killed the process and lost every result. The first
/// Ctrl-C now ends the run at its next step, writes what was computed (as `--timeout`
/// does) and exits with 130.
#[test]
fn ctrl_c_ends_a_run_and_keeps_its_results() {
    let dir = temp_dir("ctrl_c");
    // A sine through a lag for 1e6 s: minutes of wall time uncancelled.
    let model = root().join("tests/fixtures/long_run.json");
    let out = dir.join("out");
    let mut cmd = drivelink();
    cmd.arg("run")
        .arg(&model)
        .arg("--out")
        .arg(&out)
        .args(["--no-plots", "--no-report"]);
    // Running for minutes uncancelled; interrupt it once it has run for a while.
    let o = common::interrupted(&mut cmd, std::time::Duration::from_millis(1500));
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(csv.lines().count() > 2, "rows were kept:\n{csv}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "failed");
    let end = summary["end_time"].as_f64().unwrap();
    assert!(end > 0.0 && end < 1e6, "end_time {end}");
}

/// A car whose wheel mounts start below the ground (`--set`-able `z0` of 5 cm, under the
/// mounts' 10 cm) runs, but `validate` and `run` warn about every wheel first.
#[test]
fn wheel_mounts_below_the_ground_are_warned_about_by_validate_and_run() {
    let dir = temp_dir("sunk_car");
    let mut d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(netlist("vd_static.json")).unwrap()).unwrap();
    d["blocks"][0]["params"]["z0"] = serde_json::json!("0.05 m");
    let model = dir.join("sunk.json");
    std::fs::write(&model, d.to_string()).unwrap();
    for args in [
        vec!["validate"],
        vec![
            "run",
            "--no-plots",
            "--no-report",
            "--stop-time",
            "0.5",
            "--out",
        ],
    ] {
        let mut c = drivelink();
        c.args(&args);
        if args[0] == "run" {
            c.arg(dir.join("out"));
        }
        let o = c.arg(&model).output().unwrap();
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{stdout}\n{stderr}");
        for wheel in ["fl", "fr", "rl", "rr"] {
            assert!(
                stderr.contains(&format!(
                    "warning: {}: WheelCollider '{wheel}': its mount point",
                    model.display()
                )) && stderr.contains("0.0500 m below the ground"),
                "{:?}: {stderr}",
                args
            );
        }
    }
}

/// `drivelink linearize` end to end: an operating point past the netlist's stop time is
/// computed where asked, with a note saying the model ran on (it used to do so
/// silently); one the model never reaches (its stop block fires first) is an error
/// naming the stop.
#[test]
fn linearize_past_the_stop_time_notes_it_and_a_stopped_run_is_an_error() {
    let o = drivelink()
        .arg("linearize")
        .arg(netlist("mech_brake_stop.json"))
        .args(["--at", "12"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("--at 12 s is past solver.stop_time (8 s)"),
        "{stderr}"
    );
    let lin: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(lin["A"].is_array(), "{stdout}");
    let o = drivelink()
        .arg("linearize")
        .arg(netlist("full_car.json"))
        .args(["--at", "60"])
        .output()
        .unwrap();
    let stderr = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("ended early (stopped)") && stderr.contains("'stop'"),
        "{stderr}"
    );
}

#[test]
fn set_value_in_a_unit_of_another_kind_is_refused() {
    // clutchRise is "0.2 s" in the netlist: "0.4 kg" used to run (rc 0) with the number
    // taken as seconds; a time in another unit still runs.
    let scratch = temp_dir("set_unit");
    let dir = scratch.join("out");
    let out = drivelink()
        .arg("run")
        .arg(netlist("full_car.json"))
        .args(["--set", "clutchRise=0.4 kg", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("\"0.4 kg\" is in kg but parameter 'clutchRise' is in s"),
        "{e}"
    );
    assert!(!dir.exists(), "nothing is written for a refused value");
    let ok = drivelink()
        .args(["validate"])
        .arg(netlist("full_car.json"))
        .args(["--set", "clutchRise=400 ms"])
        .output()
        .unwrap();
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

#[test]
fn abs_given_settings_but_not_enabled_is_warned_about() {
    // An Abs tuned but without "enabled": true silently did nothing.
    let text = std::fs::read_to_string(netlist("vehicle_emergency_stop_abs.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for b in v["blocks"].as_array_mut().unwrap() {
        if b["type"] == "Abs" {
            b["params"].as_object_mut().unwrap().remove("enabled");
        }
    }
    let dir = temp_dir("abs_enabled");
    let path = dir.join("abs.json");
    std::fs::write(&path, v.to_string()).unwrap();
    let out = drivelink().arg("validate").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("warning:")
            && e.contains("block 'abs' is given")
            && e.contains("min_pressure_ratio")
            && e.contains("not \"enabled\""),
        "{e}"
    );
    // The shipped netlist says "enabled": true: no such warning.
    let out = drivelink()
        .arg("validate")
        .arg(netlist("vehicle_emergency_stop_abs.json"))
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("enabled"));
}
