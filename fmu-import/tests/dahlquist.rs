//! An FMU that drivelink did not write (`examples/dahlquist_fmu.rs`: `dx/dt = −k·x + u`,
//! stepped exactly, and `y = 2·u`), packed as an FMI 3.0 and as an FMI 2.0 FMU, run as an
//! `Fmu` block: its input driven by a sine is
//! sampled and held at the communication points, so `x` follows the exact recursion of
//! a sampled system; an unconnected input reads its start value; the resource path
//! reaches the FMU; a value the FMU refuses at initialization and an input it refuses
//! during a step give its logged messages.

mod common;

use common::compile;

use std::path::{Path, PathBuf};

use drivelink_core::{RunStatus, SimResult};
use drivelink_fmu_import::archive::TempDir;
use serde_json::{json, Value};

const MD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="Dahlquist" instantiationToken="{dahlquist-test}">
  <CoSimulation modelIdentifier="dahlquist" canHandleVariableCommunicationStepSize="true"/>
  <UnitDefinitions>
    <Unit name="1/s"><BaseUnit s="-1"/></Unit>
  </UnitDefinitions>
  <DefaultExperiment startTime="0" stopTime="2" stepSize="0.1"/>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
    <Float64 name="x" valueReference="1" causality="output" variability="continuous"/>
    <Float64 name="k" valueReference="2" causality="parameter" variability="fixed" start="1" unit="1/s"/>
    <Float64 name="x0" valueReference="3" causality="parameter" variability="fixed" start="1"/>
    <Float64 name="u" valueReference="4" causality="input" variability="continuous" start="0"/>
    <Float64 name="y" valueReference="5" causality="output" variability="continuous"/>
    <Float64 name="limit" valueReference="6" causality="parameter" variability="fixed" start="1000"/>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="1" dependencies=""/>
    <Output valueReference="5" dependencies="4"/>
  </ModelStructure>
</fmiModelDescription>
"#;

const MD2: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="Dahlquist" guid="{dahlquist-test}">
  <CoSimulation modelIdentifier="dahlquist" canHandleVariableCommunicationStepSize="true"/>
  <UnitDefinitions>
    <Unit name="1/s"><BaseUnit s="-1"/></Unit>
  </UnitDefinitions>
  <DefaultExperiment startTime="0" stopTime="2" stepSize="0.1"/>
  <ModelVariables>
    <ScalarVariable name="time" valueReference="0" causality="independent" variability="continuous"><Real/></ScalarVariable>
    <ScalarVariable name="x" valueReference="1" causality="output" variability="continuous"><Real/></ScalarVariable>
    <ScalarVariable name="k" valueReference="2" causality="parameter" variability="fixed"><Real start="1" unit="1/s"/></ScalarVariable>
    <ScalarVariable name="x0" valueReference="3" causality="parameter" variability="fixed"><Real start="1"/></ScalarVariable>
    <ScalarVariable name="u" valueReference="4" causality="input" variability="continuous"><Real start="0"/></ScalarVariable>
    <ScalarVariable name="y" valueReference="5" causality="output" variability="continuous"><Real/></ScalarVariable>
    <ScalarVariable name="limit" valueReference="6" causality="parameter" variability="fixed"><Real start="1000"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure>
    <Outputs><Unknown index="2" dependencies=""/><Unknown index="6" dependencies="5"/></Outputs>
  </ModelStructure>
</fmiModelDescription>
"#;

/// The FMI versions the example library serves, with the prefix of their functions.
const VERSIONS: [(u8, &str); 2] = [(3, "fmi3"), (2, "fmi2")];

/// The FMU file: description, binary, `resources/x0.txt` holding `x0` (FMI 3.0).
fn dahlquist_fmu(dir: &Path, x0: f64) -> PathBuf {
    dahlquist_fmu_v(dir, x0, 3)
}

/// The FMU file of FMI version `fmi` (3 or 2).
fn dahlquist_fmu_v(dir: &Path, x0: f64, fmi: u8) -> PathBuf {
    let md = if fmi == 3 { MD } else { MD2 };
    let x0 = x0.to_string();
    common::pack(
        dir,
        &format!("dahlquist{fmi}.fmu"),
        md,
        fmi,
        &common::library("dahlquist_fmu"),
        "dahlquist",
        &[("resources/x0.txt", x0.as_bytes())],
    )
}

/// A netlist: `plant` (an Fmu with `params`), more `blocks`, `connections`, `log`.
fn netlist(params: Value, blocks: Value, connections: Value, log: &[&str]) -> Value {
    let mut all = vec![json!({ "name": "plant", "type": "Fmu", "params": params })];
    all.extend(blocks.as_array().cloned().unwrap_or_default());
    json!({
        "drivelink": 1,
        "name": "dahlquist_import",
        "solver": { "stop_time": 2, "output_interval": 0.05 },
        "blocks": all,
        "connections": connections,
        "log": log,
    })
}

fn run(v: &Value) -> SimResult {
    compile(v).unwrap().run()
}

#[test]
fn a_sine_input_is_sampled_and_held_at_the_communication_points() {
    for (fmi, _) in VERSIONS {
        sine_input(fmi);
    }
}

fn sine_input(fmi: u8) {
    let dir = TempDir::new("dahlquist_sine").unwrap();
    let fmu = dahlquist_fmu_v(dir.path(), 2.0, fmi);
    let (k, h, w): (f64, f64, f64) = (1.5, 0.1, 2.0 * std::f64::consts::PI * 0.7);
    let v = netlist(
        json!({ "fmu": fmu.to_str().unwrap(), "parameters": { "k": k } }),
        json!([{ "name": "src", "type": "Sine", "params": { "amplitude": 1, "frequency": 0.7 } }]),
        json!([["src.y", "plant.u"]]),
        &["plant.x", "plant.y"],
    );
    let r = run(&v);
    assert_eq!(r.status, RunStatus::Completed, "FMI {fmi}: {}", r.message);
    // x_k = x_k−1·e^(−k·h) + u(t_k−1)·(1 − e^(−k·h))/k, x_0 = 2 (from resources/x0.txt).
    let e = (-k * h).exp();
    let mut x = 2.0;
    for j in 0..20 {
        let t = j as f64 * h;
        let u = (w * t).sin();
        let got = r.value_at("plant.x", t).unwrap();
        assert!(
            (got - x).abs() < 1e-12,
            "FMI {fmi}: x at t = {t}: {got} vs {x}"
        );
        // y = 2·u(t_k), read after setting the input sampled at t_k.
        let y = r.value_at("plant.y", t).unwrap();
        assert!((y - 2.0 * u).abs() < 1e-12, "FMI {fmi}: y at t = {t}: {y}");
        // Held until the next point.
        assert_eq!(r.value_at("plant.x", t + h / 2.0), Some(got), "t = {t}");
        x = x * e + u * (1.0 - e) / k;
    }
}

#[test]
fn an_unconnected_input_reads_its_start_value_and_the_default_step_is_the_fmu_s() {
    let dir = TempDir::new("dahlquist_free").unwrap();
    let fmu = dahlquist_fmu(dir.path(), 1.0);
    // No step given: the DefaultExperiment stepSize 0.1 s; k given with a unit (1/s).
    let v = netlist(
        json!({ "path": fmu.to_str().unwrap(), "parameters": { "k": "2 Hz" } }),
        json!([]),
        json!([]),
        &["plant.x"],
    );
    let r = run(&v);
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    for j in 0..20 {
        let t = j as f64 * 0.1;
        let got = r.value_at("plant.x", t).unwrap();
        let exact = (-2.0 * t).exp();
        assert!((got - exact).abs() < 1e-12, "t = {t}: {got} vs {exact}");
    }
    // A second run of the same model starts again from x0 (fmi3Reset).
    let mut m = compile(&v).unwrap();
    let a = m.run();
    let b = m.run();
    assert_eq!(a.columns, b.columns);
}

#[test]
fn communication_points_count_from_the_start_time() {
    let dir = TempDir::new("dahlquist_start").unwrap();
    let fmu = dahlquist_fmu(dir.path(), 1.0);
    let mut v = netlist(
        json!({ "fmu": fmu.to_str().unwrap(), "step": 0.1 }),
        json!([]),
        json!([]),
        &["plant.x"],
    );
    v["solver"] = json!({ "start_time": 0.25, "stop_time": 1.5, "output_interval": 0.05 });
    let r = run(&v);
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    // The FMU starts at 0.25 s from x0 = 1 (k = 1) and is stepped at 0.25 + j·0.1.
    for j in 0..12 {
        let t = 0.25 + j as f64 * 0.1;
        let got = r.value_at("plant.x", t).unwrap();
        let exact = (-(j as f64) * 0.1).exp();
        assert!((got - exact).abs() < 1e-12, "t = {t}: {got} vs {exact}");
        assert_eq!(r.value_at("plant.x", t + 0.05), Some(got), "held after {t}");
    }
}

#[test]
fn feedback_through_the_held_output_runs() {
    // u = −x: x_k = x_k−1·(e + (e − 1)/k) with e = e^(−k·h) (x holds between points).
    let dir = TempDir::new("dahlquist_loop").unwrap();
    let fmu = dahlquist_fmu(dir.path(), 1.0);
    let v = netlist(
        json!({ "fmu": fmu.to_str().unwrap(), "step": 0.1 }),
        json!([{ "name": "neg", "type": "Gain", "params": { "k": -1 } }]),
        json!([["plant.x", "neg.u"], ["neg.y", "plant.u"]]),
        &["plant.x"],
    );
    let r = run(&v);
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    let e = (-0.1f64).exp();
    let mut x = 1.0;
    for j in 0..20 {
        let t = j as f64 * 0.1;
        let got = r.value_at("plant.x", t).unwrap();
        assert!((got - x).abs() < 1e-12, "t = {t}: {got} vs {x}");
        x = x * e - x * (1.0 - e);
    }
}

#[test]
fn a_value_the_fmu_refuses_is_a_build_error_with_its_message() {
    for (fmi, prefix) in VERSIONS {
        let dir = TempDir::new("dahlquist_bad_k").unwrap();
        let fmu = dahlquist_fmu_v(dir.path(), 1.0, fmi);
        let v = netlist(
            json!({ "fmu": fmu.to_str().unwrap(), "parameters": { "k": -1 } }),
            json!([]),
            json!([]),
            &[],
        );
        let e = compile(&v).err().expect("refused");
        let call = format!("{prefix}ExitInitializationMode returned Error");
        for part in [
            "block 'plant'",
            &format!("dahlquist{fmi}.fmu"),
            &call,
            "the FMU logged: [Error] k = -1 must be >= 0",
        ] {
            assert!(e.contains(part), "{part}: {e}");
        }
    }
    let dir = TempDir::new("dahlquist_not_param").unwrap();
    let fmu = dahlquist_fmu(dir.path(), 1.0);
    let v = netlist(
        json!({ "fmu": fmu.to_str().unwrap(), "parameters": { "y": 1 } }),
        json!([]),
        json!([]),
        &[],
    );
    let e = compile(&v).err().expect("refused");
    assert!(e.contains("'y' is an output of the FMU"), "{e}");
}

#[test]
fn an_input_the_fmu_refuses_during_a_step_fails_the_run_with_its_message() {
    for (fmi, prefix) in VERSIONS {
        let dir = TempDir::new("dahlquist_limit").unwrap();
        let fmu = dahlquist_fmu_v(dir.path(), 1.0, fmi);
        // u = t: above the limit 0.45 from the point 0.5 s on; the step from there fails.
        let v = netlist(
            json!({ "fmu": fmu.to_str().unwrap(), "step": 0.1, "parameters": { "limit": 0.45 } }),
            json!([{ "name": "t", "type": "Ramp", "params": { "start_time": 0, "height": 10, "duration": 10 } }]),
            json!([["t.y", "plant.u"]]),
            &["plant.x"],
        );
        let r = run(&v);
        assert_eq!(r.status, RunStatus::Failed, "{}", r.message);
        // The run fails with the FMU's own message, naming the block.
        let call = format!("{prefix}DoStep returned Error");
        for part in [
            "block 'plant' (Fmu)",
            call.as_str(),
            "[Error] input u = 0.5 exceeds the limit 0.45",
        ] {
            assert!(r.message.contains(part), "{part}: {}", r.message);
        }
        assert_eq!(r.end_time, 6.0 * 0.1);
    }
}

#[test]
fn ports_are_the_float64_inputs_and_outputs() {
    let dir = TempDir::new("dahlquist_ports").unwrap();
    let fmu = dahlquist_fmu(dir.path(), 1.0);
    let reg = drivelink_blocks::registry();
    let t = reg.get("Fmu").unwrap();
    let mut raw = serde_json::Map::new();
    raw.insert("fmu".into(), json!(fmu.to_str().unwrap()));
    let p = drivelink_core::compile::resolve_params(
        "plant",
        "Fmu",
        &t.params,
        &raw,
        &drivelink_core::compile::Scope::new(),
    )
    .unwrap();
    let drivelink_core::BlockBuild::Primitive(build) = &t.build else {
        panic!()
    };
    let b = build(&p).unwrap();
    let ports: Vec<(String, &str, Option<f64>)> = b
        .declare()
        .ports
        .iter()
        .map(|p| (p.name.clone(), p.kind.as_str(), p.default))
        .collect();
    assert_eq!(
        ports,
        [
            ("u".to_string(), "in", Some(0.0)),
            ("x".to_string(), "out", None),
            ("y".to_string(), "out", None)
        ]
    );
    // y depends on u (ModelStructure), x does not; the block declares the input as
    // feeding an output through.
    assert!(b.declare().feedthrough.of(0));
    assert_eq!(b.declare().time_event_period, Some((0.1, "step")));
}
