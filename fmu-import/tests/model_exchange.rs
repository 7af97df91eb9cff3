//! Model Exchange FMUs that drivelink did not write, run as `Fmu` blocks and integrated by
//! drivelink's solver, FMI 3.0 and 2.0: the bouncing ball (`examples/bouncing_ball_fmu.rs`)
//! bounces at the closed-form instants (its event indicator located as a guard, its
//! velocity reset by the FMU's event update), is caught at its announced time event and
//! stops the run when the FMU asks to terminate, and an error of the FMU while the solver
//! evaluates it fails the run with the FMU's message; Dahlquist's equation
//! (`examples/dahlquist_fmu.rs` as Model Exchange) driven by a sine follows its closed
//! form; a Co-Simulation-only FMU is refused as Model Exchange.

mod common;

use std::path::{Path, PathBuf};

use common::compile;
use drivelink_core::{EventTag, RunStatus, SimResult};
use drivelink_fmu_import::archive::TempDir;
use serde_json::{json, Value};

const BALL3: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="BouncingBall" instantiationToken="{bouncing-ball}">
  <ModelExchange modelIdentifier="bouncing_ball" needsCompletedIntegratorStep="false"/>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
    <Float64 name="h" valueReference="1" causality="output" variability="continuous" unit="m"/>
    <Float64 name="der(h)" valueReference="2" causality="local" variability="continuous" derivative="1"/>
    <Float64 name="v" valueReference="3" causality="output" variability="continuous" unit="m/s"/>
    <Float64 name="der(v)" valueReference="4" causality="local" variability="continuous" derivative="3"/>
    <Float64 name="g" valueReference="5" causality="parameter" variability="fixed" start="9.81"/>
    <Float64 name="e" valueReference="6" causality="parameter" variability="fixed" start="0.8"/>
    <Float64 name="h0" valueReference="7" causality="parameter" variability="fixed" start="1" unit="m"/>
    <Float64 name="t_catch" valueReference="8" causality="parameter" variability="fixed" start="-1"/>
    <Float64 name="max_bounces" valueReference="9" causality="parameter" variability="fixed" start="1000"/>
    <Float64 name="t_fail" valueReference="10" causality="parameter" variability="fixed" start="-1"/>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="1"/>
    <Output valueReference="3"/>
    <ContinuousStateDerivative valueReference="2"/>
    <ContinuousStateDerivative valueReference="4"/>
    <EventIndicator valueReference="1"/>
  </ModelStructure>
</fmiModelDescription>
"#;

const BALL2: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="BouncingBall" guid="{bouncing-ball}" numberOfEventIndicators="1">
  <ModelExchange modelIdentifier="bouncing_ball" completedIntegratorStepNotNeeded="true"/>
  <ModelVariables>
    <ScalarVariable name="time" valueReference="0" causality="independent" variability="continuous"><Real/></ScalarVariable>
    <ScalarVariable name="h" valueReference="1" causality="output" variability="continuous"><Real unit="m"/></ScalarVariable>
    <ScalarVariable name="der(h)" valueReference="2" causality="local" variability="continuous"><Real derivative="2"/></ScalarVariable>
    <ScalarVariable name="v" valueReference="3" causality="output" variability="continuous"><Real unit="m/s"/></ScalarVariable>
    <ScalarVariable name="der(v)" valueReference="4" causality="local" variability="continuous"><Real derivative="4"/></ScalarVariable>
    <ScalarVariable name="g" valueReference="5" causality="parameter" variability="fixed"><Real start="9.81"/></ScalarVariable>
    <ScalarVariable name="e" valueReference="6" causality="parameter" variability="fixed"><Real start="0.8"/></ScalarVariable>
    <ScalarVariable name="h0" valueReference="7" causality="parameter" variability="fixed"><Real start="1" unit="m"/></ScalarVariable>
    <ScalarVariable name="t_catch" valueReference="8" causality="parameter" variability="fixed"><Real start="-1"/></ScalarVariable>
    <ScalarVariable name="max_bounces" valueReference="9" causality="parameter" variability="fixed"><Real start="1000"/></ScalarVariable>
    <ScalarVariable name="t_fail" valueReference="10" causality="parameter" variability="fixed"><Real start="-1"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure>
    <Outputs><Unknown index="2"/><Unknown index="4"/></Outputs>
    <Derivatives><Unknown index="3"/><Unknown index="5"/></Derivatives>
  </ModelStructure>
</fmiModelDescription>
"#;

/// Dahlquist's equation offering both interfaces (the default import is Model Exchange).
const DQ3: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="Dahlquist" instantiationToken="{dahlquist-test}">
  <ModelExchange modelIdentifier="dahlquist"/>
  <CoSimulation modelIdentifier="dahlquist" canHandleVariableCommunicationStepSize="true"/>
  <DefaultExperiment startTime="0" stopTime="2" stepSize="0.1"/>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
    <Float64 name="x" valueReference="1" causality="output" variability="continuous"/>
    <Float64 name="k" valueReference="2" causality="parameter" variability="fixed" start="1"/>
    <Float64 name="x0" valueReference="3" causality="parameter" variability="fixed" start="1"/>
    <Float64 name="u" valueReference="4" causality="input" variability="continuous" start="0"/>
    <Float64 name="y" valueReference="5" causality="output" variability="continuous"/>
    <Float64 name="limit" valueReference="6" causality="parameter" variability="fixed" start="1000"/>
    <Float64 name="der(x)" valueReference="7" causality="local" variability="continuous" derivative="1"/>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="1" dependencies=""/>
    <Output valueReference="5" dependencies="4"/>
    <ContinuousStateDerivative valueReference="7"/>
  </ModelStructure>
</fmiModelDescription>
"#;

const DQ2: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="Dahlquist" guid="{dahlquist-test}" numberOfEventIndicators="0">
  <ModelExchange modelIdentifier="dahlquist"/>
  <CoSimulation modelIdentifier="dahlquist" canHandleVariableCommunicationStepSize="true"/>
  <DefaultExperiment startTime="0" stopTime="2" stepSize="0.1"/>
  <ModelVariables>
    <ScalarVariable name="time" valueReference="0" causality="independent" variability="continuous"><Real/></ScalarVariable>
    <ScalarVariable name="x" valueReference="1" causality="output" variability="continuous"><Real/></ScalarVariable>
    <ScalarVariable name="k" valueReference="2" causality="parameter" variability="fixed"><Real start="1"/></ScalarVariable>
    <ScalarVariable name="x0" valueReference="3" causality="parameter" variability="fixed"><Real start="1"/></ScalarVariable>
    <ScalarVariable name="u" valueReference="4" causality="input" variability="continuous"><Real start="0"/></ScalarVariable>
    <ScalarVariable name="y" valueReference="5" causality="output" variability="continuous"><Real/></ScalarVariable>
    <ScalarVariable name="limit" valueReference="6" causality="parameter" variability="fixed"><Real start="1000"/></ScalarVariable>
    <ScalarVariable name="der(x)" valueReference="7" causality="local" variability="continuous"><Real derivative="2"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure>
    <Outputs><Unknown index="2" dependencies=""/><Unknown index="6" dependencies="5"/></Outputs>
    <Derivatives><Unknown index="8"/></Derivatives>
  </ModelStructure>
</fmiModelDescription>
"#;

/// The bouncing ball as an FMU of FMI version `fmi`.
fn ball_fmu(dir: &Path, fmi: u8) -> PathBuf {
    let md = if fmi == 3 { BALL3 } else { BALL2 };
    let lib = common::library("bouncing_ball_fmu");
    common::pack(
        dir,
        &format!("ball{fmi}.fmu"),
        md,
        fmi,
        &lib,
        "bouncing_ball",
        &[],
    )
}

/// Dahlquist's equation (both interfaces) as an FMU of FMI version `fmi`, `x0` = 1.
fn dahlquist_fmu(dir: &Path, fmi: u8) -> PathBuf {
    let md = if fmi == 3 { DQ3 } else { DQ2 };
    let lib = common::library("dahlquist_fmu");
    let entries: [(&str, &[u8]); 1] = [("resources/x0.txt", b"1")];
    common::pack(
        dir,
        &format!("dq{fmi}.fmu"),
        md,
        fmi,
        &lib,
        "dahlquist",
        &entries,
    )
}

/// A netlist: `plant` (an Fmu with `params`), more `blocks` and `connections`, logging
/// `log`, with `solver` settings.
fn netlist(params: Value, blocks: Value, connections: Value, log: &[&str], solver: Value) -> Value {
    let mut all = vec![json!({ "name": "plant", "type": "Fmu", "params": params })];
    all.extend(blocks.as_array().cloned().unwrap_or_default());
    json!({
        "drivelink": 1,
        "name": "me_import",
        "solver": solver,
        "blocks": all,
        "connections": connections,
        "log": log,
    })
}

fn run(v: &Value) -> SimResult {
    compile(v).unwrap().run()
}

/// The instants of the plant's events of kind `tag`.
fn event_times(r: &SimResult, tag: EventTag) -> Vec<f64> {
    r.events
        .iter()
        .filter(|e| e.block == "plant" && e.kind == tag)
        .map(|e| e.time)
        .collect()
}

/// The closed-form bounce instants of a ball dropped from `h0` (`g`, restitution `e`):
/// `t1 = sqrt(2·h0/g)`, `t_k+1 = t_k + 2·e^k·v1/g` with `v1 = g·t1`.
fn bounce_times(g: f64, e: f64, h0: f64, n: usize) -> Vec<f64> {
    let t1 = (2.0 * h0 / g).sqrt();
    let v1 = g * t1;
    let mut t = vec![t1];
    for k in 1..n {
        let last = t[k - 1];
        t.push(last + 2.0 * e.powi(k as i32) * v1 / g);
    }
    t
}

#[test]
fn the_ball_bounces_at_the_closed_form_instants() {
    for fmi in [3, 2] {
        let dir = TempDir::new("me_ball").unwrap();
        let fmu = ball_fmu(dir.path(), fmi);
        let (g, e, h0) = (9.81, 0.7, 2.0);
        let v = netlist(
            json!({ "fmu": fmu.to_str().unwrap(), "parameters": { "g": g, "e": e, "h0": "200 cm" } }),
            json!([]),
            json!([]),
            &["plant.h", "plant.v"],
            json!({ "stop_time": 3.5, "output_interval": 0.01 }),
        );
        let r = run(&v);
        assert_eq!(r.status, RunStatus::Completed, "FMI {fmi}: {}", r.message);
        let got = event_times(&r, EventTag::ZeroCrossing);
        let exact = bounce_times(g, e, h0, 40);
        let exact: Vec<f64> = exact.into_iter().filter(|&t| t < 3.5).collect();
        assert_eq!(
            got.len(),
            exact.len(),
            "FMI {fmi}: bounces at {got:?}, expected {exact:?}"
        );
        let worst = got
            .iter()
            .zip(&exact)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        eprintln!(
            "FMI {fmi}: {} bounces, worst bounce-time error {worst:.3e} s; {} steps ({} rejected), {} derivative and {} guard evaluations, {} events",
            got.len(),
            r.stats.steps,
            r.stats.rejected_steps,
            r.stats.rhs_evals,
            r.stats.guard_evals,
            r.stats.events
        );
        assert!(worst < 1e-9, "FMI {fmi}: bounce times {got:?} vs {exact:?}");
        // Between the bounces the height is the parabola of the rebound speed e^k·v1 (at
        // the recorded instants: values between them are interpolated).
        let v1 = (2.0 * g * h0).sqrt();
        let h = r.get("plant.h").unwrap();
        let mut checked = 0;
        for (i, &t) in r.time.iter().enumerate() {
            let Some(k) = exact.windows(2).position(|w| w[0] < t && t < w[1]) else {
                continue;
            };
            let (s, vk) = (t - exact[k], e.powi(k as i32 + 1) * v1);
            let want = vk * s - 0.5 * g * s * s;
            assert!(
                (h[i] - want).abs() < 1e-8,
                "FMI {fmi}: h({t}) = {}, exact {want}",
                h[i]
            );
            checked += 1;
        }
        assert!(checked > 200, "{checked}");
    }
}

#[test]
fn the_ball_is_caught_at_its_announced_time_event() {
    for fmi in [3, 2] {
        let dir = TempDir::new("me_catch").unwrap();
        let fmu = ball_fmu(dir.path(), fmi);
        let v = netlist(
            json!({ "fmu": fmu.to_str().unwrap(), "kind": "me", "parameters": { "t_catch": 0.3 } }),
            json!([]),
            json!([]),
            &["plant.h", "plant.v"],
            json!({ "stop_time": 1.0, "output_interval": 0.05 }),
        );
        let r = run(&v);
        assert_eq!(r.status, RunStatus::Completed, "FMI {fmi}: {}", r.message);
        assert_eq!(event_times(&r, EventTag::TimeEvent), [0.3], "FMI {fmi}");
        assert!(event_times(&r, EventTag::ZeroCrossing).is_empty());
        let caught = 1.0 - 0.5 * 9.81 * 0.3 * 0.3;
        for t in [0.35, 0.6, 1.0] {
            let h = r.value_at("plant.h", t).unwrap();
            assert!(
                (h - caught).abs() < 1e-10,
                "FMI {fmi}: h({t}) = {h}, caught at {caught}"
            );
            assert_eq!(r.value_at("plant.v", t), Some(0.0));
        }
    }
}

#[test]
fn the_fmu_asking_to_terminate_stops_the_run() {
    for fmi in [3, 2] {
        let dir = TempDir::new("me_terminate").unwrap();
        let fmu = ball_fmu(dir.path(), fmi);
        let v = netlist(
            json!({ "fmu": fmu.to_str().unwrap(), "parameters": { "max_bounces": 2 } }),
            json!([]),
            json!([]),
            &["plant.h"],
            json!({ "stop_time": 3.0, "output_interval": 0.05 }),
        );
        let r = run(&v);
        assert_eq!(r.status, RunStatus::Stopped, "FMI {fmi}: {}", r.message);
        let second = bounce_times(9.81, 0.8, 1.0, 2)[1];
        assert!(
            (r.end_time - second).abs() < 1e-9,
            "FMI {fmi}: {}",
            r.end_time
        );
        let why = r
            .events
            .iter()
            .find(|e| e.kind == EventTag::Stop && e.block == "plant")
            .map(|e| e.detail.clone());
        assert_eq!(
            why.as_deref(),
            Some("the FMU asked to terminate the simulation")
        );
    }
}

#[test]
fn an_fmu_error_during_integration_fails_the_run_with_its_message() {
    for (fmi, prefix) in [
        (3, "fmi3GetContinuousStateDerivatives"),
        (2, "fmi2GetDerivatives"),
    ] {
        let dir = TempDir::new("me_fail").unwrap();
        let fmu = ball_fmu(dir.path(), fmi);
        let v = netlist(
            json!({ "fmu": fmu.to_str().unwrap(), "parameters": { "t_fail": 0.2 } }),
            json!([]),
            json!([]),
            &["plant.h"],
            json!({ "stop_time": 1.0, "output_interval": 0.05 }),
        );
        let r = run(&v);
        assert_eq!(r.status, RunStatus::Failed, "FMI {fmi}: {}", r.message);
        let call = format!("{prefix} returned Error");
        for part in [
            "block 'plant' (Fmu)",
            "failed at t = ",
            call.as_str(),
            "after t_fail = 0.2 s",
        ] {
            assert!(r.message.contains(part), "FMI {fmi}: {part}: {}", r.message);
        }
        // The run ends at the start of the step in which the FMU failed, never after.
        assert!(r.end_time <= 0.2, "FMI {fmi}: ended at {}", r.end_time);
        eprintln!("FMI {fmi}: failed at {} s: {}", r.end_time, r.message);
    }
}

#[test]
fn dahlquist_as_model_exchange_follows_its_closed_form() {
    for fmi in [3, 2] {
        let dir = TempDir::new("me_dahlquist").unwrap();
        let fmu = dahlquist_fmu(dir.path(), fmi);
        let (k, w) = (1.5, 2.0 * std::f64::consts::PI * 0.7);
        // No kind: the FMU offers both, Model Exchange is taken.
        let v = netlist(
            json!({ "fmu": fmu.to_str().unwrap(), "parameters": { "k": k } }),
            json!([{ "name": "src", "type": "Sine", "params": { "amplitude": 1, "frequency": 0.7 } }]),
            json!([["src.y", "plant.u"]]),
            &["plant.x", "plant.y"],
            json!({ "stop_time": 2.0, "output_interval": 0.01, "rtol": 1e-10, "atol": 1e-12 }),
        );
        let r = run(&v);
        assert_eq!(r.status, RunStatus::Completed, "FMI {fmi}: {}", r.message);
        // x' = −k·x + sin(w·t), x(0) = 1 (resources/x0.txt).
        let d = k * k + w * w;
        let exact =
            |t: f64| (1.0 + w / d) * (-k * t).exp() + (k * (w * t).sin() - w * (w * t).cos()) / d;
        let mut worst: f64 = 0.0;
        for j in 0..=200 {
            let t = j as f64 * 0.01;
            let x = r.value_at("plant.x", t).unwrap();
            worst = worst.max((x - exact(t)).abs());
            // y = 2·u at every output point (no holding: a continuous output).
            let y = r.value_at("plant.y", t).unwrap();
            assert!(
                (y - 2.0 * (w * t).sin()).abs() < 1e-12,
                "FMI {fmi}: y({t}) = {y}"
            );
        }
        eprintln!(
            "FMI {fmi}: Dahlquist ME worst |x − exact| {worst:.3e}; {} steps, {} derivative evaluations",
            r.stats.steps, r.stats.rhs_evals
        );
        assert!(worst < 1e-8, "FMI {fmi}: x differs by {worst:e}");
        // A second run of the same model starts again from x0.
        let mut m = compile(&v).unwrap();
        let (a, b) = (m.run(), m.run());
        assert_eq!(a.columns, b.columns);
    }
}

#[test]
fn kind_cs_still_steps_an_fmu_that_offers_both() {
    let dir = TempDir::new("me_both_cs").unwrap();
    let fmu = dahlquist_fmu(dir.path(), 3);
    let v = netlist(
        json!({ "fmu": fmu.to_str().unwrap(), "kind": "cs", "step": 0.1 }),
        json!([]),
        json!([]),
        &["plant.x"],
        json!({ "stop_time": 1.0, "output_interval": 0.05 }),
    );
    let r = run(&v);
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    // Held between the communication points.
    assert_eq!(r.value_at("plant.x", 0.15), r.value_at("plant.x", 0.1));
    let x = r.value_at("plant.x", 0.5).unwrap();
    assert!((x - (-0.5f64).exp()).abs() < 1e-12, "{x}");
}

#[test]
fn a_step_given_to_a_model_exchange_import_is_refused_not_ignored() {
    let dir = TempDir::new("me_step").unwrap();
    let fmu = dahlquist_fmu(dir.path(), 3);
    for params in [
        json!({ "fmu": fmu.to_str().unwrap(), "step": 0.1 }),
        json!({ "fmu": fmu.to_str().unwrap(), "kind": "me", "step": 0.1 }),
    ] {
        let v = netlist(
            params,
            json!([]),
            json!([]),
            &[],
            json!({ "stop_time": 1.0 }),
        );
        let e = compile(&v).err().expect("refused");
        for part in ["block 'plant'", "step", "Co-Simulation only", "\"cs\""] {
            assert!(e.contains(part), "{part}: {e}");
        }
    }
}

#[test]
fn a_co_simulation_only_fmu_is_refused_as_model_exchange() {
    let dir = TempDir::new("me_cs_only").unwrap();
    // Dahlquist's description without its ModelExchange element.
    let md = DQ3.replace("  <ModelExchange modelIdentifier=\"dahlquist\"/>\n", "");
    let lib = common::library("dahlquist_fmu");
    let fmu = common::pack(dir.path(), "cs_only.fmu", &md, 3, &lib, "dahlquist", &[]);
    let v = netlist(
        json!({ "fmu": fmu.to_str().unwrap(), "kind": "me" }),
        json!([]),
        json!([]),
        &[],
        json!({ "stop_time": 1.0 }),
    );
    let e = compile(&v).err().expect("refused");
    for part in [
        "block 'plant'",
        "kind",
        fmu.to_str().unwrap(),
        "offers no Model Exchange (it offers: CoSimulation)",
    ] {
        assert!(e.contains(part), "{part}: {e}");
    }
}

#[test]
fn a_parameter_the_ball_refuses_is_a_build_error_with_its_message() {
    for (fmi, prefix) in [(3, "fmi3"), (2, "fmi2")] {
        let dir = TempDir::new("me_bad_g").unwrap();
        let fmu = ball_fmu(dir.path(), fmi);
        let v = netlist(
            json!({ "fmu": fmu.to_str().unwrap(), "parameters": { "g": -1 } }),
            json!([]),
            json!([]),
            &[],
            json!({ "stop_time": 1.0 }),
        );
        let e = compile(&v).err().expect("refused");
        let call = format!("{prefix}ExitInitializationMode returned Error");
        for part in ["block 'plant'", call.as_str(), "g = -1 must be > 0"] {
            assert!(e.contains(part), "FMI {fmi}: {part}: {e}");
        }
    }
}
