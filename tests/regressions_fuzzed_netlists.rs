//! Regression tests for defects found by fuzzing netlists and by new
//! users (bad input must end in a clear error naming the culprit, or a correct result —
//! never a hang, a silent NaN or an exhausted machine). Each runs the release CLI as a
//! user would.

use std::path::PathBuf;
use std::process::Command;

mod common;
use common::{temp_dir, TempDir};

fn drivelink() -> Command {
    Command::new(env!("CARGO_BIN_EXE_drivelink"))
}

/// A fresh temporary directory holding `model.json` with `text` (removed when the
/// directory is dropped), and the file's path.
fn model(tag: &str, text: &str) -> (TempDir, PathBuf) {
    let dir = temp_dir(&format!("i10_{tag}"));
    let path = dir.join("model.json");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

/// Run `drivelink run` on `text`; returns (exit code, stderr, summary.json if written).
fn run(tag: &str, text: &str, extra: &[&str]) -> (i32, String, Option<serde_json::Value>) {
    let (dir, path) = model(tag, text);
    let out = dir.join("out");
    let o = drivelink()
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .arg("--no-plots")
        .arg("--no-report")
        .args(extra)
        .output()
        .unwrap();
    let summary = std::fs::read_to_string(out.join("summary.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        summary,
    )
}

const DIVIDE_BY_ZERO: &str = r#"{"drivelink": 1, "name": "div0",
    "solver": {"stop_time": 1},
    "blocks": [{"name": "zero", "type": "Constant", "params": {"value": 0}},
               {"name": "one", "type": "Constant", "params": {"value": 1}},
               {"name": "div", "type": "Product", "params": {"ops": "*/"}}],
    "connections": [["one.y", "div.u1"], ["zero.y", "div.u2"]],
    "log": ["div.y"]}"#;

#[test]
fn non_finite_output_fails_the_run_naming_block_and_port() {
    let (code, err, summary) = run("div0", DIVIDE_BY_ZERO, &[]);
    assert_eq!(code, 1, "{err}");
    let s = summary.expect("partial results are written");
    assert_eq!(s["status"], "failed");
    let msg = s["message"].as_str().unwrap();
    assert!(
        msg.contains("'div.y'") && msg.contains("non-finite"),
        "{msg}"
    );
    assert_eq!(s["end_time"], 0.0, "fails at the time the value appears");
}

#[test]
fn overflowing_gain_fails_the_run_naming_the_gain() {
    let text = r#"{"drivelink": 1, "name": "overflow", "solver": {"stop_time": 1},
        "blocks": [{"name": "big", "type": "Constant", "params": {"value": 1e308}},
                   {"name": "g", "type": "Gain", "params": {"k": 10}}],
        "connections": [["big.y", "g.u"]], "log": ["g.y"]}"#;
    let (code, err, summary) = run("overflow", text, &[]);
    assert_eq!(code, 1, "{err}");
    let msg = summary.unwrap()["message"].as_str().unwrap().to_string();
    assert!(msg.contains("'g.y'") && msg.contains("inf"), "{msg}");
}

#[test]
fn step_size_underflow_names_the_block_behind_the_state() {
    let text = r#"{"drivelink": 1, "name": "stiff_tf", "solver": {"stop_time": 1},
        "blocks": [{"name": "u", "type": "Step", "params": {"time": 0}},
                   {"name": "tf", "type": "TransferFcn", "params": {"num": [1], "den": [1, 1e308]}}],
        "connections": [["u.y", "tf.u"]], "log": ["tf.y"]}"#;
    let (code, err, summary) = run("underflow", text, &[]);
    assert_eq!(code, 1, "{err}");
    let msg = summary.unwrap()["message"].as_str().unwrap().to_string();
    assert!(msg.contains("block 'tf'"), "{msg}");
}

/// A Magic Formula coefficient that overflows the tire law (`pdy2` = 1e308: an infinite
/// peak friction, a NaN lateral force) made every step fail until the step size underflowed,
/// and the message called the model stiff. It now says the equations are not finite at
/// the start and names the wheel whose force is not.
#[test]
fn an_overflowing_tire_coefficient_names_the_wheel_instead_of_calling_the_model_stiff() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/netlists/vd_iso7401_step_steer.json"
    );
    let mut net: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let rr = net["blocks"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|b| b["name"] == "rr")
        .expect("the right rear wheel");
    rr["params"]["mf"]["pdy2"] = serde_json::json!(1e308);
    let (code, err, summary) = run("tire_overflow", &net.to_string(), &["--stop-time", "1"]);
    assert_eq!(code, 1, "{err}");
    let s = summary.expect("partial results are written");
    assert_eq!(s["status"], "failed");
    assert_eq!(s["end_time"], 0.0, "fails where the value appears");
    let msg = s["message"].as_str().unwrap();
    assert!(
        msg.contains("not finite at t = 0 s") && msg.contains("block 'rr' (WheelCollider)"),
        "{msg}"
    );
    assert!(!msg.contains("stiff"), "{msg}");
}

#[test]
fn absurd_output_interval_is_refused_before_running() {
    let text = r#"{"drivelink": 1, "name": "grid", "solver": {"stop_time": 10, "output_interval": 5e-324},
        "blocks": [{"name": "c", "type": "Constant", "params": {"value": 1}}],
        "connections": [], "log": ["c.y"]}"#;
    let (code, err, summary) = run("grid", text, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(summary.is_none(), "nothing simulated");
    assert!(
        err.contains("solver.output_interval") && err.contains("max_output_points"),
        "{err}"
    );
    // The interval is echoed as the results write numbers, not as 324 decimals.
    assert!(err.contains("an output every 5e-324 s over 10 s"), "{err}");
}

#[test]
fn absurd_sample_time_is_refused_naming_the_block_parameter() {
    let text = r#"{"drivelink": 1, "name": "zoh", "solver": {"stop_time": 10},
        "blocks": [{"name": "c", "type": "Constant", "params": {"value": 1}},
                   {"name": "hold", "type": "ZeroOrderHold", "params": {"sample_time": 1e-300}}],
        "connections": [["c.y", "hold.u"]], "log": ["hold.y"]}"#;
    let (code, err, _) = run("zoh", text, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("'hold'") && err.contains("sample_time") && err.contains("max_time_events"),
        "{err}"
    );
    // 1e-300 as written, not 300 decimals (it was printed as "0.000…0001 s").
    assert!(
        err.contains("= 1e-300 s gives 1.000e301 time events"),
        "{err}"
    );
    // Raising the documented limit is the explicit way to allow it (here: 1e5 hits).
    let text = text.replace(r#""sample_time": 1e-300"#, r#""sample_time": 1e-4"#);
    let text = text.replace(
        r#""stop_time": 10}"#,
        r#""stop_time": 10, "max_time_events": 200000}"#,
    );
    let (code, err, _) = run("zoh_ok", &text, &[]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn tiny_max_step_is_refused_before_running() {
    let text = r#"{"drivelink": 1, "name": "tiny", "solver": {"stop_time": 10, "max_step": 1e-12},
        "blocks": [{"name": "c", "type": "Constant", "params": {"value": 1}},
                   {"name": "i", "type": "Integrator"}],
        "connections": [["c.y", "i.u"]], "log": ["i.y"]}"#;
    let (code, err, _) = run("tiny", text, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("solver.max_step") && err.contains("max_steps"),
        "{err}"
    );
}

#[test]
fn timeout_ends_the_run_as_failed_with_partial_results() {
    // 10^6 s of a lightly damped oscillator at tight tolerance: minutes of work.
    let text = r#"{"drivelink": 1, "name": "long",
        "solver": {"stop_time": 1e6, "rtol": 1e-10, "atol": 1e-12, "max_steps": 1000000000},
        "blocks": [{"name": "J", "type": "Inertia", "params": {"J": 1, "w0": 1}},
                   {"name": "k", "type": "SpringDamper", "params": {"c": 100, "d": 0.001}},
                   {"name": "g", "type": "Fixed"}],
        "connections": [["J.flange", "k.flange_a"], ["k.flange_b", "g.flange"]],
        "log": ["J.w"]}"#;
    let t0 = std::time::Instant::now();
    let (code, err, summary) = run("timeout", text, &["--timeout", "0.5"]);
    assert!(
        t0.elapsed().as_secs_f64() < 30.0,
        "the timeout ended the run"
    );
    assert_eq!(code, 1, "{err}");
    let s = summary.expect("partial results are written");
    assert_eq!(s["status"], "failed");
    assert!(s["message"].as_str().unwrap().contains("timeout"), "{s}");
    assert!(s["end_time"].as_f64().unwrap() > 0.0);
}

/// `drivelink validate` on `path`: (exit code, stderr).
fn validate(path: &std::path::Path) -> (i32, String) {
    let o = drivelink().arg("validate").arg(path).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Subsystem files that each include ten copies of the one below, eight levels deep,
/// are 10^8 blocks: loading them took 16 GB and had not finished after two minutes. The
/// loader now stops at the block limit with that one error (not the follow-on errors of
/// the connections to the blocks it did not load).
#[test]
fn nested_copies_of_subsystems_stop_at_the_block_limit_instead_of_exhausting_memory() {
    let dir = temp_dir("nested_copies");
    std::fs::write(
        dir.join("s0.json"),
        r#"{"drivelink": 1, "name": "s0",
            "blocks": [{"name": "g", "type": "Gain", "params": {"k": 1}}],
            "ports": {"u": "g.u", "y": "g.y"}}"#,
    )
    .unwrap();
    for level in 1..=8 {
        let blocks: Vec<String> = (0..10)
            .map(|i| {
                format!(
                    r#"{{"name": "b{i}", "type": "Subsystem", "file": "s{}.json"}}"#,
                    level - 1
                )
            })
            .collect();
        let conns: Vec<String> = (0..9)
            .map(|i| format!(r#"["b{i}.y", "b{}.u"]"#, i + 1))
            .collect();
        std::fs::write(
            dir.join(format!("s{level}.json")),
            format!(
                r#"{{"drivelink": 1, "name": "s{level}", "blocks": [{}],
                    "connections": [{}], "ports": {{"u": "b0.u", "y": "b9.y"}}}}"#,
                blocks.join(", "),
                conns.join(", ")
            ),
        )
        .unwrap();
    }
    let top = dir.join("top.json");
    std::fs::write(
        &top,
        r#"{"drivelink": 1, "name": "top",
            "blocks": [{"name": "src", "type": "Step", "params": {"time": 0.1}},
                       {"name": "x", "type": "Subsystem", "file": "s8.json"}],
            "connections": [["src.y", "x.u"]]}"#,
    )
    .unwrap();
    let (code, err) = validate(&top);
    assert_eq!(code, 2, "{err}");
    let limit = format!(
        "the model has more than {} blocks",
        drivelink_core::compile::MAX_BLOCKS
    );
    assert!(err.contains(&limit), "{err}");
    assert_eq!(err.lines().count(), 1, "one error, no follow-ons: {err}");
}

/// Composite blocks expand when the model is flattened: 40,000 four-speed gearboxes
/// (each a composite of six blocks) pass the loader's count and are stopped by the
/// flattening's, naming the block where the limit was reached.
#[test]
fn composite_blocks_expanding_past_the_block_limit_are_refused() {
    let blocks: Vec<String> = (0..40_000)
        .map(|i| format!(r#"{{"name": "g{i}", "type": "CrCr4Speed"}}"#))
        .collect();
    let (_dir, path) = model(
        "many_composites",
        &format!(
            r#"{{"drivelink": 1, "name": "many", "blocks": [{}]}}"#,
            blocks.join(", ")
        ),
    );
    let (code, err) = validate(&path);
    assert_eq!(code, 2, "{err}");
    let limit = format!(
        "the model expands to more than {} blocks",
        drivelink_core::compile::MAX_BLOCKS
    );
    assert!(err.contains(&limit), "{err}");
}

/// A chain of `n` integrators fed by a constant, with solver method `method`.
fn integrator_chain(n: usize, method: &str) -> String {
    let mut blocks =
        vec![r#"{"name": "src", "type": "Constant", "params": {"value": 1}}"#.to_string()];
    blocks.extend((0..n).map(|k| format!(r#"{{"name": "i{k}", "type": "Integrator"}}"#)));
    let mut conns = vec![r#"["src.y", "i0.u"]"#.to_string()];
    conns.extend((1..n).map(|k| format!(r#"["i{}.y", "i{k}.u"]"#, k - 1)));
    netlist_text(
        "chain",
        &format!(r#"{{"stop_time": 0.01, "method": "{method}"}}"#),
        &blocks,
        &conns,
    )
}

/// A netlist named `name` with the solver section `solver` (JSON), the blocks `blocks`
/// and the connections `conns` (each a JSON text).
fn netlist_text(name: &str, solver: &str, blocks: &[String], conns: &[String]) -> String {
    format!(
        r#"{{"drivelink": 1, "name": "{name}", "solver": {solver},
            "blocks": [{}], "connections": [{}]}}"#,
        blocks.join(", "),
        conns.join(", ")
    )
}

/// Radau5 keeps about five dense n x n matrices: 30,000 states asked for 36 GB and the
/// process aborted when the allocation failed (`auto` too, which prepares Radau5 to
/// switch to it). A model with more states than the implicit kernel takes is refused
/// before the run, naming the method; the explicit methods take it.
#[test]
fn an_implicit_method_on_more_states_than_its_dense_matrices_allow_is_refused() {
    let n = drivelink_solver::MAX_IMPLICIT_STATES + 1;
    for method in ["radau5", "auto"] {
        let (_dir, path) = model(method, &integrator_chain(n, method));
        let (code, err) = validate(&path);
        assert_eq!(code, 2, "{method}: {err}");
        assert!(
            err.contains(&format!("solver.method: method {method}"))
                && err.contains(&format!("dense {n} x {n} matrices"))
                && err.contains("use dopri5 or dop853"),
            "{method}: {err}"
        );
    }
    let (_dir, path) = model("dopri5", &integrator_chain(n, "dopri5"));
    let (code, err) = validate(&path);
    assert_eq!(code, 0, "{err}");
    // At the limit the implicit method is accepted.
    let (_dir, path) = model(
        "radau5_limit",
        &integrator_chain(drivelink_solver::MAX_IMPLICIT_STATES, "radau5"),
    );
    let (code, err) = validate(&path);
    assert_eq!(code, 0, "{err}");
}

/// Linearizing 30,000 states asked for a 7.2 GB A matrix and aborted; its eigenvalues
/// would have taken days. Above the limit `linearize` says how many states it takes.
#[test]
fn linearizing_more_states_than_the_dense_analysis_takes_is_refused() {
    let n = drivelink_core::model::MAX_LINEARIZE_STATES + 1;
    let (_dir, path) = model("linearize", &integrator_chain(n, "dopri5"));
    let o = drivelink().arg("linearize").arg(&path).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "the model has {n} states; linearize takes at most {}",
            n - 1
        )),
        "{err}"
    );
}

/// The mechanical network is solved with dense matrices: 20,000 inertias joined by
/// springs asked for 3.2 GB per matrix and aborted while compiling. Above the node limit
/// the model is refused before the network is built.
#[test]
fn a_mechanical_network_of_more_nodes_than_its_dense_solve_takes_is_refused() {
    let n = drivelink_core::model::MAX_NETWORK_NODES + 1;
    let mut blocks: Vec<String> = (0..n)
        .map(|k| format!(r#"{{"name": "j{k}", "type": "Inertia", "params": {{"J": 1}}}}"#))
        .collect();
    blocks.extend(
        (1..n).map(|k| {
            format!(r#"{{"name": "s{k}", "type": "SpringDamper", "params": {{"c": 100}}}}"#)
        }),
    );
    let conns: Vec<String> = (1..n)
        .flat_map(|k| {
            [
                format!(r#"["j{}.flange", "s{k}.flange_a"]"#, k - 1),
                format!(r#"["s{k}.flange_b", "j{k}.flange"]"#),
            ]
        })
        .collect();
    let (_dir, path) = model(
        "network_nodes",
        &netlist_text("springs", "{}", &blocks, &conns),
    );
    let (code, err) = validate(&path);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "the mechanical network has {n} nodes (shafts between blocks); it takes at most {}",
            n - 1
        )),
        "{err}"
    );
}

/// Thermal nodes without a heat capacity are solved together, densely, at every
/// evaluation: a chain of 20,000 conductors asked for 3.2 GB and ran for minutes without
/// finishing 10 ms. Above the limit the model is refused, saying what to change.
#[test]
fn more_thermal_nodes_without_capacity_than_the_dense_solve_takes_are_refused() {
    let n = drivelink_core::model::MAX_ALGEBRAIC_HEAT_NODES + 2;
    let mut blocks = vec![
        r#"{"name": "amb", "type": "FixedTemperature", "params": {"T": 300}}"#.to_string(),
        r#"{"name": "cap", "type": "HeatCapacitor", "params": {"C": 1, "T0": 400}}"#.to_string(),
    ];
    blocks.extend((0..n).map(|k| {
        format!(r#"{{"name": "g{k}", "type": "ThermalConductor", "params": {{"G": 1}}}}"#)
    }));
    let mut conns = vec![r#"["amb.port", "g0.port_a"]"#.to_string()];
    conns.extend((1..n).map(|k| format!(r#"["g{}.port_b", "g{k}.port_a"]"#, k - 1)));
    conns.push(format!(r#"["g{}.port_b", "cap.port"]"#, n - 1));
    let (_dir, path) = model("heat_nodes", &netlist_text("heat", "{}", &blocks, &conns));
    let (code, err) = validate(&path);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "{} thermal nodes have no heat capacity; at most {}",
            n - 1,
            n - 2
        )),
        "{err}"
    );
}

/// Results are held in memory before they are written. `vd_full_car` logging every
/// variable (271) every 20 µs is 2.7e8 values: 2.1 GB of memory and a 3.1 GB CSV, and
/// the finest grid `max_output_points` allowed was ten times that. The grid times the
/// columns is now checked against `solver.max_output_values`, which can be raised.
#[test]
fn a_fine_output_grid_of_every_variable_is_refused_before_it_fills_memory() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/netlists/vd_full_car.json");
    let mut d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    d["log"] = serde_json::json!(["all"]);
    d["solver"]["output_interval"] = serde_json::json!(2e-5);
    let (_dir, fine) = model("all_fine", &d.to_string());
    let (code, err) = validate(&fine);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("solver.max_output_values: an output every 0.00002 s over 20 s with")
            && err.contains("more than solver.max_output_values = 250000000"),
        "{err}"
    );
    // Raised, the same grid is accepted.
    d["solver"]["max_output_values"] = serde_json::json!(300_000_000u64);
    let (_dir, raised) = model("all_raised", &d.to_string());
    let (code, err) = validate(&raised);
    assert_eq!(code, 0, "{err}");
}

/// At the steps (`"output_interval": "steps"`) the number of rows is not known before
/// the run: the limit is checked as rows are recorded, and the run fails there with the
/// rows so far written.
#[test]
fn output_at_every_step_stops_at_the_value_limit_with_its_rows_so_far() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/netlists/vd_full_car.json");
    let mut d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    d["log"] = serde_json::json!(["all"]);
    d["solver"]["output_interval"] = serde_json::json!("steps");
    d["solver"]["max_output_values"] = serde_json::json!(100_000);
    let (code, err, summary) = run("steps_limit", &d.to_string(), &[]);
    assert_eq!(code, 1, "{err}");
    let summary = summary.expect("summary.json of the failed run");
    let message = summary["message"].as_str().unwrap_or_default();
    // 272 columns: the 368th row passes 100,000 values.
    assert!(
        message.contains("the results reached 368 rows of 272 columns, more than solver.max_output_values = 100000 values"),
        "{message}"
    );
    assert_eq!(summary["status"], "failed");
    assert!(summary["end_time"].as_f64().unwrap() < 20.0);
}

/// A negative value too small to matter is echoed as written: `-1e-300`, not 300 decimals.
#[test]
fn a_refused_tiny_parameter_is_echoed_as_written() {
    let (_dir, path) = model(
        "tiny_negative",
        r#"{"drivelink": 1, "name": "t", "blocks": [{"name": "j", "type": "Inertia", "params": {"J": -1e-300}}]}"#,
    );
    let (code, err) = validate(&path);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("parameter 'J' must be >= 0, got -1e-300"),
        "{err}"
    );
}
