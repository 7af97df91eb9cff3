//! The `Fmu` block: a drivelink model exported with `drivelink fmu` and imported back by
//! an `Fmu` block as Co-Simulation (`"kind": "cs"`) reproduces the native run at the
//! communication points and holds its outputs between them; imported as Model Exchange
//! (the default for an FMU that offers it) it is integrated by the importing model's
//! solver and reproduces the native run and its clutch lock; an FMU whose step fails fails
//! the run with the FMU's message; every broken FMU is refused with an error naming the
//! block and the file (exit 2 from the CLI).

mod common;

use std::path::{Path, PathBuf};

use common::{drivelink, temp_dir};
use drivelink::core::{RunStatus, SimResult};
use drivelink_fmu_import::archive::write_zip;
use serde_json::{json, Value};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/fmu").join(name)
}

/// `drivelink fmu MODEL --out DIR/NAME.fmu`, returning the FMU's path.
fn export(model: &Path, dir: &Path) -> PathBuf {
    export_fmi(model, dir, "3")
}

/// The same as FMI `version` (`--fmi 3` or `2`).
fn export_fmi(model: &Path, dir: &Path, version: &str) -> PathBuf {
    export_kind(model, dir, version, "both")
}

/// The same with `--kind KIND` (`both`, `me`, `cs`), written as `DIR/STEM_KIND_VERSION.fmu`.
fn export_kind(model: &Path, dir: &Path, version: &str, kind: &str) -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_drivelink"));
    let lib = exe.with_file_name("libdrivelink_fmi.so");
    assert!(
        lib.is_file(),
        "{} is missing: build the FMU runtime first (cargo build --workspace --all-targets, as scripts/test.sh does)",
        lib.display()
    );
    let stem = model.file_stem().unwrap().to_str().unwrap();
    let out = match kind {
        "both" => dir.join(format!("{stem}.fmu")),
        _ => dir.join(format!("{stem}_{kind}_{version}.fmu")),
    };
    let o = drivelink()
        .args([
            "fmu",
            model.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--fmi",
            version,
            "--kind",
            kind,
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// A netlist with one `Fmu` block `plant` (its params `params`), logging `log`.
fn import_netlist(params: Value, log: &[&str], stop: f64, interval: f64) -> Value {
    import_netlist_as("plant", params, log, stop, interval)
}

/// The same with the block named `name`.
fn import_netlist_as(name: &str, params: Value, log: &[&str], stop: f64, interval: f64) -> Value {
    json!({
        "drivelink": 1,
        "name": "fmu_import",
        "solver": { "stop_time": stop, "output_interval": interval },
        "blocks": [{ "name": name, "type": "Fmu", "params": params }],
        "connections": [],
        "log": log,
    })
}

fn compile(v: &Value) -> Result<drivelink::core::Model, String> {
    let d = drivelink::netlist::load_value(v, "fmu_import.json", Path::new("."))
        .map_err(|e| e.to_string())?;
    drivelink::core::compile(&d, &drivelink::blocks::registry()).map_err(|e| e.to_string())
}

fn run_file(path: &Path) -> SimResult {
    let d = drivelink::netlist::load_file(path).unwrap();
    let mut m = drivelink::core::compile(&d, &drivelink::blocks::registry()).unwrap();
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    r
}

/// The largest difference between the imported and the native signal at the
/// communication points `k·step` before `stop`, relative to the native signal's range (a
/// point at the stop time itself is not taken: a run ends before the time events due
/// then, as for every sampled block).
fn worst_at_points(
    imp: &SimResult,
    port: &str,
    nat: &SimResult,
    var: &str,
    step: f64,
    stop: f64,
) -> f64 {
    let y = nat.get(var).unwrap();
    let range = y.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
        - y.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(range > 0.0, "{var} is constant");
    let n = (stop / step).round() as usize;
    (0..n)
        .map(|k| {
            let t = k as f64 * step;
            let a = imp.value_at(port, t).unwrap();
            let b = nat.value_at(var, t).unwrap();
            (a - b).abs() / range
        })
        .fold(0.0, f64::max)
}

#[test]
fn exported_lag_imported_back_matches_the_native_run_at_every_communication_point() {
    let dir = temp_dir("import_lag");
    let model = fixture("lag.json");
    let fmu = export(&model, &dir);
    let native = run_file(&model);
    let step = 0.01;
    // Output every half step: the midpoints show the held values.
    // A block name of its own: the test looks for its unpacked directory below.
    let v = import_netlist_as(
        "lagplant",
        json!({ "fmu": fmu.to_str().unwrap(), "kind": "cs", "step": "10 ms" }),
        &["lagplant.lag_y", "lagplant.step_y"],
        1.0,
        step / 2.0,
    );
    let before = unpacked_dirs("lagplant");
    let mut m = compile(&v).unwrap();
    let unpacked: Vec<_> = unpacked_dirs("lagplant")
        .difference(&before)
        .cloned()
        .collect();
    assert_eq!(
        unpacked.len(),
        1,
        "one unpacked FMU while the model lives: {unpacked:?}"
    );
    let imported = m.run();
    assert_eq!(
        imported.status,
        RunStatus::Completed,
        "{}",
        imported.message
    );
    let worst = worst_at_points(&imported, "lagplant.lag_y", &native, "lag.y", step, 1.0);
    eprintln!("lag.y: worst difference at the communication points {worst:.3e} of its range");
    assert!(worst < 1e-9, "lag.y differs by {worst:e} of its range");
    // The closed form at the points, as a check of the native run itself.
    for k in 2..100 {
        let t = k as f64 * step;
        let exact = 1.0 - (-(t - 0.0123) / 0.5).exp();
        let got = imported.value_at("lagplant.lag_y", t).unwrap();
        assert!((got - exact).abs() < 1e-9, "t = {t}: {got} vs {exact}");
    }
    // Held between points: the value at the midpoint is the value at the point before.
    for k in 0..100 {
        let t = k as f64 * step;
        let held = imported.value_at("lagplant.lag_y", t).unwrap();
        let mid = imported.value_at("lagplant.lag_y", t + step / 2.0).unwrap();
        assert_eq!(mid, held, "t = {t}");
    }
    // The step at 12.3 ms shows at the next point, 20 ms.
    assert_eq!(imported.value_at("lagplant.step_y", 0.015), Some(0.0));
    assert_eq!(imported.value_at("lagplant.step_y", 0.02), Some(1.0));
    // The unpacked FMU is removed with the model.
    drop(m);
    assert!(
        !std::env::temp_dir().join(&unpacked[0]).exists(),
        "left behind: {}",
        unpacked[0]
    );
}

/// The directories an `Fmu` block named `block` unpacks into, now.
fn unpacked_dirs(block: &str) -> std::collections::BTreeSet<String> {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("drivelink_fmu_{block}_")))
        .collect()
}

#[test]
fn exported_clutch_lock_imported_back_locks_inside_a_step_as_the_native_run() {
    let dir = temp_dir("import_clutch");
    let model = fixture("clutch_lock.json");
    let fmu = export(&model, &dir);
    let native = run_file(&model);
    let step = 0.01;
    let v = import_netlist_as(
        "clutchplant",
        json!({ "fmu": fmu.to_str().unwrap(), "kind": "cs", "step": step }),
        &[
            "clutchplant.clutch_w_rel",
            "clutchplant.clutch_tau",
            "clutchplant.J1_w",
            "clutchplant.J2_w",
        ],
        3.0,
        step,
    );
    let imported = compile(&v).unwrap().run();
    assert_eq!(
        imported.status,
        RunStatus::Completed,
        "{}",
        imported.message
    );
    for (port, var) in [
        ("clutchplant.clutch_w_rel", "clutch.w_rel"),
        ("clutchplant.clutch_tau", "clutch.tau"),
        ("clutchplant.J1_w", "J1.w"),
        ("clutchplant.J2_w", "J2.w"),
    ] {
        let worst = worst_at_points(&imported, port, &native, var, step, 3.0);
        eprintln!("{var}: worst difference at the communication points {worst:.3e} of its range");
        assert!(worst < 1e-9, "{var} differs by {worst:e} of its range");
    }
    // Locked (at 4/3 s, inside the step from 1.33 s to 1.34 s) from the point 1.34 s on.
    let w = |t: f64| imported.value_at("clutchplant.clutch_w_rel", t).unwrap();
    assert!(
        w(1.33).abs() > 1e-3,
        "still slipping at 1.33 s: {}",
        w(1.33)
    );
    assert!(w(1.34).abs() < 1e-9, "locked at 1.34 s: {}", w(1.34));
}

#[test]
fn exported_fmi2_fmus_imported_back_match_the_native_runs() {
    let dir = temp_dir("import_fmi2");
    let step = 0.01;
    for (fixture_name, stop, signals) in [
        ("lag.json", 1.0, &["lag.y", "step.y"][..]),
        (
            "clutch_lock.json",
            3.0,
            &["clutch.w_rel", "clutch.tau", "J1.w", "J2.w"][..],
        ),
    ] {
        let model = fixture(fixture_name);
        let fmu = export_fmi(&model, &dir, "2");
        // It is an FMI 2.0 FMU: the binary is where FMI 2.0 puts it.
        let bytes = std::fs::read(&fmu).unwrap();
        let needle = b"binaries/linux64/drivelink_fmi.so";
        assert!(bytes.windows(needle.len()).any(|w| w == needle));
        let native = run_file(&model);
        let ports: Vec<String> = signals
            .iter()
            .map(|s| format!("plant2.{}", s.replace('.', "_")))
            .collect();
        let log: Vec<&str> = ports.iter().map(String::as_str).collect();
        let v = import_netlist_as(
            "plant2",
            json!({ "fmu": fmu.to_str().unwrap(), "kind": "cs", "step": step }),
            &log,
            stop,
            step,
        );
        let imported = compile(&v).unwrap().run();
        assert_eq!(
            imported.status,
            RunStatus::Completed,
            "{}",
            imported.message
        );
        for (port, var) in ports.iter().zip(signals) {
            let worst = worst_at_points(&imported, port, &native, var, step, stop);
            eprintln!("FMI 2.0 {var}: worst difference at the communication points {worst:.3e} of its range");
            assert!(worst < 1e-9, "{var} differs by {worst:e} of its range");
        }
    }
}

#[test]
fn an_fmu_parameter_given_in_the_netlist_changes_the_imported_run() {
    let dir = temp_dir("import_param");
    let fmu = export(&fixture("lag.json"), &dir);
    // tau = 250 ms given with a unit (the FMU's tau is in s).
    let v = import_netlist(
        json!({ "fmu": fmu.to_str().unwrap(), "kind": "cs", "step": 0.01, "parameters": { "tau": "250 ms" } }),
        &["plant.lag_y"],
        0.5,
        0.01,
    );
    let r = compile(&v).unwrap().run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    let t: f64 = 0.3;
    let exact = 1.0 - (-(t - 0.0123) / 0.25).exp();
    let got = r.value_at("plant.lag_y", t).unwrap();
    assert!((got - exact).abs() < 1e-9, "{got} vs {exact}");
}

#[test]
fn an_fmu_whose_step_fails_fails_the_run_with_the_fmu_message() {
    let dir = temp_dir("import_fail");
    let fmu = export(&fixture("divide_by_zero.json"), &dir);
    let v = import_netlist(
        json!({ "fmu": fmu.to_str().unwrap(), "kind": "cs", "step": 0.1 }),
        &["plant.div_y"],
        1.0,
        0.1,
    );
    let r = compile(&v).unwrap().run();
    assert_eq!(r.status, RunStatus::Failed, "{}", r.message);
    // The division by zero at 0.55 s fails the FMU's step from 0.5 s to 0.6 s, and the
    // run fails there with the FMU's own message, naming the block.
    assert_eq!(r.end_time, 6.0 * 0.1);
    for part in [
        "block 'plant' (Fmu)",
        "fmi3DoStep returned Error",
        "non-finite value inf",
        "div.y",
    ] {
        assert!(r.message.contains(part), "{part}: {}", r.message);
    }
    assert_eq!(r.value_at("plant.div_y", 0.5), Some(1.0));
}

/// The build error of an `Fmu` block whose file is `fmu` (with more params): it names the
/// block and the file.
fn build_error(fmu: &Path, extra: Value) -> String {
    let e = build_error_of(fmu, extra);
    assert!(e.contains(fmu.to_str().unwrap()), "names the file: {e}");
    e
}

/// The build error of an `Fmu` block whose file is `fmu` imported as Co-Simulation (with
/// more params, which may change the kind): it names the block.
fn build_error_of(fmu: &Path, extra: Value) -> String {
    let mut params = json!({ "fmu": fmu.to_str().unwrap(), "kind": "cs", "step": 0.01 });
    if let (Value::Object(p), Value::Object(x)) = (&mut params, extra) {
        p.extend(x);
        // `"kind": null` asks for the default kind: no kind and no step.
        if p.get("kind") == Some(&Value::Null) {
            p.remove("kind");
            p.remove("step");
        }
    }
    let e = compile(&import_netlist(params, &[], 1.0, 0.1))
        .err()
        .expect("the FMU is refused");
    assert!(e.contains("block 'plant'"), "names the block: {e}");
    e
}

const MD3: &str = r#"<fmiModelDescription fmiVersion="3.0" modelName="m" instantiationToken="{t}">
  <CoSimulation modelIdentifier="m"/>
  <ModelVariables><Float64 name="y" valueReference="1" causality="output"/></ModelVariables>
</fmiModelDescription>"#;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn broken_fmus_are_refused_with_what_is_wrong() {
    let dir = temp_dir("import_errors");
    let e = build_error(&dir.join("missing.fmu"), json!({}));
    assert!(e.contains("cannot be read"), "{e}");

    let text = write(
        &dir,
        "text.fmu",
        b"this is a text file, not a zip archive at all",
    );
    let e = build_error(&text, json!({}));
    assert!(
        e.contains("is not an FMU (not a readable zip archive)"),
        "{e}"
    );

    let mut bytes = write_zip(&[("modelDescription.xml", MD3.as_bytes(), true)]);
    let mid = bytes.len() / 4;
    bytes[mid] ^= 0x55;
    let corrupt = write(&dir, "corrupt.fmu", &bytes);
    let e = build_error(&corrupt, json!({}));
    assert!(e.contains("corrupt") || e.contains("inflate"), "{e}");

    let nomd = write(
        &dir,
        "nomd.fmu",
        &write_zip(&[("readme.txt", b"hi", false)]),
    );
    let e = build_error(&nomd, json!({}));
    assert!(e.contains("no modelDescription.xml"), "{e}");

    let md1 = r#"<fmiModelDescription fmiVersion="1.0" modelName="m" guid="{g}"/>"#;
    let fmi1 = write(
        &dir,
        "fmi1.fmu",
        &write_zip(&[("modelDescription.xml", md1.as_bytes(), false)]),
    );
    let e = build_error(&fmi1, json!({}));
    assert!(
        e.contains("FMI 1.0 FMU") && e.contains("supported versions: 3.0, 2.0"),
        "{e}"
    );

    let me = MD3.replace(
        "<CoSimulation modelIdentifier=\"m\"/>",
        "<ModelExchange modelIdentifier=\"m\"/>",
    );
    let me = write(
        &dir,
        "me.fmu",
        &write_zip(&[("modelDescription.xml", me.as_bytes(), false)]),
    );
    let e = build_error(&me, json!({ "kind": "cs" }));
    assert!(
        e.contains("offers no Co-Simulation (it offers: ModelExchange); kind \"cs\" needs it"),
        "{e}"
    );
    let none = MD3.replace("<CoSimulation modelIdentifier=\"m\"/>", "");
    let none = write(
        &dir,
        "none.fmu",
        &write_zip(&[("modelDescription.xml", none.as_bytes(), false)]),
    );
    let e = build_error(&none, json!({ "kind": null }));
    assert!(
        e.contains("offers neither Model Exchange nor Co-Simulation (it offers: no interface)"),
        "{e}"
    );

    let win = write(
        &dir,
        "win.fmu",
        &write_zip(&[
            ("modelDescription.xml", MD3.as_bytes(), false),
            ("binaries/x86_64-windows/m.dll", b"MZ", false),
        ]),
    );
    let e = build_error(&win, json!({}));
    let expected = format!("binaries/{}/m.so", drivelink_fmu_import::platform());
    assert!(
        e.contains(&expected) && e.contains("binaries/x86_64-windows/m.dll"),
        "{e}"
    );

    let junk = write(
        &dir,
        "junk.fmu",
        &write_zip(&[
            ("modelDescription.xml", MD3.as_bytes(), false),
            (&expected, b"not a shared library", false),
        ]),
    );
    let e = build_error(&junk, json!({}));
    assert!(e.contains("cannot load its binary"), "{e}");
}

#[test]
fn parameters_the_fmu_does_not_have_are_refused() {
    let dir = temp_dir("import_errors_params");
    let fmu = export(&fixture("lag.json"), &dir);
    let e = build_error(&fmu, json!({ "parameters": { "tauu": 1 } }));
    assert!(
        e.contains("has no variable 'tauu' (did you mean 'tau'?)"),
        "{e}"
    );
    let e = build_error(&fmu, json!({ "parameters": { "lag.y": 1 } }));
    assert!(e.contains("'lag.y' is an output of the FMU"), "{e}");
    let e = build_error(&fmu, json!({ "parameters": { "tau": "3 m" } }));
    assert!(e.contains("dimension"), "{e}");
}

#[test]
fn a_co_simulation_fmu_imported_as_model_exchange_is_refused() {
    let dir = temp_dir("import_errors_kind");
    let fmu = export_kind(&fixture("lag.json"), &dir, "3", "cs");
    let e = build_error(&fmu, json!({ "kind": "me" }));
    assert!(
        e.contains("parameter 'kind'")
            && e.contains("offers no Model Exchange (it offers: CoSimulation)"),
        "{e}"
    );
}

#[test]
fn the_cli_exits_2_on_a_missing_fmu() {
    let dir = temp_dir("import_cli_missing");
    let missing = dir.join("nowhere.fmu");
    let net = dir.join("import.json");
    let v = import_netlist(
        json!({ "fmu": missing.to_str().unwrap(), "step": 0.01 }),
        &[],
        1.0,
        0.1,
    );
    std::fs::write(&net, v.to_string()).unwrap();
    let o = drivelink()
        .args([
            "run",
            net.to_str().unwrap(),
            "--out",
            dir.join("out").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("plant") && err.contains("nowhere.fmu") && err.contains("cannot be read"),
        "{err}"
    );
}

#[test]
fn the_block_catalogue_lists_fmu() {
    let o = drivelink().args(["blocks", "Fmu"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("Fmu [fmi]"), "{text}");
    for part in ["fmu", "step", "parameters", "Co-Simulation"] {
        assert!(text.contains(part), "{part}: {text}");
    }
}

/// The instants of the events of `r` logged by `block` whose detail contains `what`.
fn events_of(r: &SimResult, block: &str, what: &str) -> Vec<f64> {
    r.events
        .iter()
        .filter(|e| e.block == block && e.detail.contains(what))
        .map(|e| e.time)
        .collect()
}

/// The largest difference between the imported and the native signal at the native
/// run's output instants, relative to the native signal's range.
fn worst_at_outputs(imp: &SimResult, port: &str, nat: &SimResult, var: &str) -> f64 {
    let y = nat.get(var).unwrap();
    let range = y.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
        - y.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(range > 0.0, "{var} is constant");
    let a = imp.get(port).unwrap();
    assert_eq!(imp.time, nat.time, "{port}: the same output instants");
    a.iter()
        .zip(y)
        .map(|(a, b)| (a - b).abs() / range)
        .fold(0.0, f64::max)
}

#[test]
fn the_clutch_lock_exported_as_model_exchange_locks_when_the_native_run_does() {
    let dir = temp_dir("import_me_clutch");
    let model = root().join("models/netlists/mech_clutch_lock.json");
    let native = run_file(&model);
    let lock: Vec<f64> = native
        .events
        .iter()
        .filter(|e| e.block == "clutch" && e.kind == drivelink::core::EventTag::Lock)
        .map(|e| e.time)
        .collect();
    assert_eq!(lock.len(), 1, "{lock:?}");
    assert!(
        (lock[0] - 4.0 / 3.0).abs() < 1e-6,
        "native lock at {}",
        lock[0]
    );
    let signals = ["clutch.w_rel", "clutch.tau", "J1.w", "J2.w"];
    for version in ["3", "2"] {
        let fmu = export_kind(&model, &dir, version, "me");
        let ports: Vec<String> = signals
            .iter()
            .map(|s| format!("plant.{}", s.replace('.', "_")))
            .collect();
        let log: Vec<&str> = ports.iter().map(String::as_str).collect();
        // The importing model's solver settings are the native run's (mech_clutch_lock's
        // own: the defaults, 3 s); the FMU's states are integrated by that solver.
        let mut v = import_netlist(json!({ "fmu": fmu.to_str().unwrap() }), &log, 3.0, 0.01);
        v["solver"] = json!({ "stop_time": 3 });
        let imported = compile(&v).unwrap().run();
        assert_eq!(
            imported.status,
            RunStatus::Completed,
            "FMI {version}: {}",
            imported.message
        );
        // The lock is the FMU's event indicator of the clutch's slip crossing zero.
        let crossings = events_of(&imported, "plant", "crossed zero");
        assert!(
            !crossings.is_empty(),
            "FMI {version}: no event indicator crossed"
        );
        let first = crossings[0];
        eprintln!(
            "FMI {version}: ME import locks at {first} s, native {} s (difference {:.3e} s); {} steps, {} derivative evaluations, {} events",
            lock[0],
            (first - lock[0]).abs(),
            imported.stats.steps,
            imported.stats.rhs_evals,
            imported.stats.events
        );
        assert!(
            (first - lock[0]).abs() < 1e-6,
            "FMI {version}: {crossings:?} vs the native lock at {}",
            lock[0]
        );
        for (port, var) in ports.iter().zip(signals) {
            if native.get(var).is_none() {
                continue;
            }
            let worst = worst_at_outputs(&imported, port, &native, var);
            eprintln!("FMI {version} ME {var}: worst difference {worst:.3e} of its range");
            assert!(worst < 1e-6, "FMI {version}: {var} differs by {worst:e}");
        }
        // Locked after the event: no slip.
        let w = imported.value_at("plant.clutch_w_rel", 2.0).unwrap();
        assert!(w.abs() < 1e-9, "FMI {version}: w_rel at 2 s = {w}");
    }
}

#[test]
fn the_lag_exported_as_model_exchange_follows_the_importing_solver_s_tolerance() {
    let dir = temp_dir("import_me_lag");
    let model = fixture("lag.json");
    let native = run_file(&model);
    let fmu = export(&model, &dir);
    // No kind: the FMU offers both interfaces and is imported as Model Exchange, so its
    // accuracy is that of the importing model's solver: here the fixture's own settings.
    let mut v = import_netlist(
        json!({ "fmu": fmu.to_str().unwrap() }),
        &["plant.lag_y", "plant.step_y"],
        1.0,
        0.01,
    );
    v["solver"] = solver_of(&model);
    let r = compile(&v).unwrap().run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    let worst = worst_at_outputs(&r, "plant.lag_y", &native, "lag.y");
    eprintln!("ME lag.y: worst difference from the native run {worst:.3e} of its range");
    assert!(worst < 1e-9, "lag.y differs by {worst:e} of its range");
    for k in 2..100 {
        let t = k as f64 * 0.01;
        let exact = 1.0 - (-(t - 0.0123) / 0.5).exp();
        let got = r.value_at("plant.lag_y", t).unwrap();
        assert!((got - exact).abs() < 1e-9, "t = {t}: {got} vs {exact}");
    }
    // The step at 12.3 ms is the FMU's time event: its output steps there, not at a
    // communication point.
    let step = r.get("plant.step_y").unwrap();
    let at: Vec<f64> = r
        .time
        .iter()
        .zip(step)
        .filter(|(t, _)| **t == 0.0123)
        .map(|(_, y)| *y)
        .collect();
    assert_eq!(at, [0.0, 1.0], "the pair of rows at the event instant");
    for (t, y) in r.time.iter().zip(step).filter(|(t, _)| **t != 0.0123) {
        assert_eq!(*y, if *t < 0.0123 { 0.0 } else { 1.0 }, "step.y at {t}");
    }
    assert_eq!(events_of(&r, "plant", "FMU time event"), [0.0123]);
}

/// The solver settings of a netlist file.
fn solver_of(model: &Path) -> Value {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(model).unwrap()).unwrap();
    v["solver"].clone()
}

#[test]
fn a_model_exchange_fmu_that_fails_fails_the_run_at_that_instant() {
    let dir = temp_dir("import_me_fail");
    let fmu = export(&fixture("divide_by_zero.json"), &dir);
    let v = import_netlist(
        json!({ "fmu": fmu.to_str().unwrap() }),
        &["plant.div_y"],
        1.0,
        0.1,
    );
    let r = compile(&v).unwrap().run();
    assert_eq!(r.status, RunStatus::Failed, "{}", r.message);
    eprintln!("{}", r.message);
    // The division by zero at 0.55 s (a time event of the FMU) fails the run there.
    assert!((r.end_time - 0.55).abs() < 1e-12, "{}", r.end_time);
    for part in ["block 'plant' (Fmu)", "returned Error", "div.y"] {
        assert!(r.message.contains(part), "{part}: {}", r.message);
    }
}

/// `modelDescription.xml` of the FMU at `fmu`.
fn description_of(fmu: &Path) -> String {
    let archive =
        drivelink_fmu_import::archive::Archive::parse(std::fs::read(fmu).unwrap()).unwrap();
    let entry = archive
        .entry("modelDescription.xml")
        .expect("a description");
    String::from_utf8(archive.read(entry).unwrap()).unwrap()
}

#[test]
fn a_model_holding_an_imported_fmu_exports_fixed_parameters_and_no_fmu_state() {
    // An imported FMU's run state stays inside it, so a model that holds one can neither
    // save nor restore its own: its parameters cannot change mid-run and its FMU cannot
    // get or set its state. A model of drivelink blocks only can do both.
    let dir = temp_dir("nested_fmu");
    let inner = export(&fixture("lag.json"), &dir);
    let own = description_of(&inner);
    assert!(own.contains("name=\"tau\" valueReference"), "{own}");
    assert!(own.contains("causality=\"parameter\" variability=\"tunable\""));
    assert_eq!(own.matches("canGetAndSetFMUState=\"true\"").count(), 2);
    let mut outer = import_netlist(
        json!({ "fmu": inner.to_str().unwrap(), "kind": "cs", "step": "10 ms" }),
        &["plant.lag_y"],
        1.0,
        0.01,
    );
    outer["parameters"] = json!({ "gain": 2.0 });
    let path = dir.join("outer.json");
    std::fs::write(&path, serde_json::to_string_pretty(&outer).unwrap()).unwrap();
    for version in ["3", "2"] {
        let xml = description_of(&export_kind(&path, &dir, version, "cs"));
        assert!(
            xml.contains("name=\"gain\"") && xml.contains("variability=\"fixed\""),
            "{xml}"
        );
        assert!(!xml.contains("variability=\"tunable\""), "{xml}");
        assert!(
            !xml.to_lowercase().contains("cangetandsetfmustate=\"true\""),
            "{xml}"
        );
        assert!(
            xml.to_lowercase()
                .contains("cangetandsetfmustate=\"false\""),
            "{xml}"
        );
    }
}
