//! Netlist round trips: load -> save -> load gives an equal Diagram; a Diagram built in Rust
//! saves and loads back equal.

use std::path::{Path, PathBuf};

use drivelink::core::{Diagram, Method, ScopeSignal, ScopeSpec};
use drivelink::netlist;
use serde_json::json;

mod common;
use common::temp_dir;

fn shipped() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("models/netlists"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
    v.sort();
    v
}

#[test]
fn shipped_netlists_round_trip() {
    for f in shipped() {
        let d = netlist::load_file(&f).unwrap();
        let base = f.parent().unwrap();
        let j = netlist::to_json(&d);
        let back = netlist::load_value(&j, "saved", base).unwrap();
        assert_eq!(d, back, "{}", f.display());
        // Saving is idempotent.
        assert_eq!(j, netlist::to_json(&back));
        // Through text too.
        let text = serde_json::to_string_pretty(&j).unwrap();
        assert_eq!(netlist::load_str(&text, "saved.json", base).unwrap(), d);
    }
}

fn rust_built() -> Diagram {
    let mut inner = Diagram::new("lowpass");
    inner.param("tau", 0.3).param("k", "2*tau");
    inner.add("g", "Gain", json!({"k": "k"}));
    inner.add("lag", "TransferFcn", json!({"num": [1], "den": ["tau", 1]}));
    inner.connect(&["g.y", "lag.u"]);
    inner.export_port("u", "g.u").export_port("y", "lag.y");
    inner.alias("out", "lag.y");

    let mut d = Diagram::new("rust_built");
    d.description = "built in Rust".into();
    d.param("amp", "2 N*m")
        .param("table", json!([[0, 0], [1, 2]]))
        .param("on", true);
    let s = d.add(
        "src",
        "Sine",
        json!({"amplitude": 1, "frequency": "2 Hz", "phase": 0.5}),
    );
    let sat = d.add("sat", "Saturation", json!({"lower": -0.5, "upper": 0.5}));
    d.add_subsystem("filt", inner, json!({"tau": 0.1}));
    d.add("clock", "Clock", serde_json::Value::Null);
    let (a, b) = (d.port(s, "y"), d.port(sat, "u"));
    d.connect(&[a.as_str(), b.as_str(), "filt.u"]);
    d.log(&["src.y", "sat.y", "filt.out", "sat.mode"]);
    let mut sc = ScopeSpec::new(
        "main",
        vec![
            ScopeSignal::new("src.y")
                .with_unit("deg")
                .with_label("source"),
            ScopeSignal::new("sat.y"),
        ],
    );
    sc.title = Some("Main".into());
    sc.panels.push(vec![ScopeSignal::new("filt.out")]);
    sc.unit = Some("rad".into());
    sc.width = 640;
    sc.height = 480;
    sc.event_markers = true;
    d.scope(sc);
    d.scope(ScopeSpec::new("plain", vec![ScopeSignal::new("clock.y")]));
    d.settings.method = Method::Rk4 { step: 1e-3 };
    d.settings.stop_time = 2.5;
    d.settings.start_time = 0.5;
    d.settings.rtol = 1e-9;
    d.settings.max_step = 0.01;
    d.settings.output_interval = Some(0.005);
    d.settings.initial_step = Some(1e-4);
    d.settings.max_steps = 12345;
    d.settings.chatter_window = 1e-5;
    d.settings.chatter_max_events = 7;
    d.settings.max_event_iterations = 9;
    d.settings.min_step_rel = 1e-13;
    d.settings_given = true;
    d
}

#[test]
fn rust_built_diagram_saves_and_loads_back_equal() {
    let d = rust_built();
    let dir = temp_dir("rt_rust_built");
    let path = dir.join("rust_built.json");
    netlist::save_file(&d, &path).unwrap();
    let back = netlist::load_file(&path).unwrap();
    assert_eq!(d, back);
    // It also compiles and runs.
    let mut m =
        netlist::compile_located(&back, &drivelink::blocks::registry(), "rust_built").unwrap();
    let r = m.run();
    assert_eq!(
        r.status,
        drivelink::core::RunStatus::Completed,
        "{}",
        r.message
    );
}

#[test]
fn default_settings_stay_implicit() {
    let mut d = Diagram::new("plain");
    d.add("c", "Constant", json!({"value": 1}));
    let j = netlist::to_json(&d);
    assert!(j.get("solver").is_none(), "{j}");
    assert_eq!(netlist::load_value(&j, "p", Path::new(".")).unwrap(), d);
}

#[test]
fn full_car_from_rust_round_trips() {
    let mut d = drivelink::models::full_car(&Default::default());
    // A Rust-built diagram with non-default settings saves a solver section.
    d.settings_given = d.settings_given || d.settings != Default::default();
    let back = netlist::load_value(&netlist::to_json(&d), "full_car", Path::new(".")).unwrap();
    assert_eq!(d, back);
}

#[test]
fn scope_ylim_loads_saves_and_rejects_bad_ranges() {
    use drivelink::netlist;
    let text = r#"{"drivelink": 1, "name": "y",
        "blocks": [{"name": "c", "type": "Constant", "params": {"value": 1}}],
        "scopes": [{"name": "s", "signals": ["c.y"], "ylim": [0, 4]}]}"#;
    let d = netlist::load_str(text, "y.json", std::path::Path::new(".")).unwrap();
    assert_eq!(d.scopes[0].ylim, Some((0.0, 4.0)));
    let back =
        netlist::load_value(&netlist::to_json(&d), "y.json", std::path::Path::new(".")).unwrap();
    assert_eq!(back, d);
    let bad = text.replace("[0, 4]", "[4, 0]");
    let msg = netlist::load_str(&bad, "y.json", std::path::Path::new("."))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("y.json") && msg.contains("scopes[0].ylim"),
        "{msg}"
    );
}
