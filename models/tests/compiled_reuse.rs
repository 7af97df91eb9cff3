//! Compile once, run many: a model re-instantiated with other parameter values shares
//! the plan and gives bit-identical results to a full compile of the changed diagram.

use std::sync::Arc;

use drivelink_core::{compile, Compiled};
use drivelink_models::netlist_dir;
use drivelink_netlist as netlist;
use serde_json::json;

fn assert_identical(a: &drivelink_core::SimResult, b: &drivelink_core::SimResult) {
    assert_eq!(a.status, b.status);
    assert_eq!(a.end_time.to_bits(), b.end_time.to_bits());
    assert_eq!(a.time.len(), b.time.len());
    for (ca, cb) in a.columns.iter().zip(&b.columns) {
        for (x, y) in ca.iter().zip(cb) {
            assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()));
        }
    }
}

#[test]
fn reinstantiated_full_car_shares_the_plan_and_matches_a_fresh_compile() {
    let reg = drivelink_blocks::registry();
    let d = netlist::load_file(&netlist_dir().join("full_car.json")).expect("loads");
    let c = Compiled::new(&d, &reg).expect("compiles");
    let mut m = c
        .with_params(
            &reg,
            &[
                ("throttle".into(), json!(0.3)),
                ("clutchRise".into(), json!("0.4 s")),
            ],
        )
        .expect("instantiates");
    assert!(
        m.plan().compile_id() == c.plan().compile_id() && !Arc::ptr_eq(m.plan(), c.plan()),
        "same structure: the compiled plan is reused, as a private copy"
    );
    let r = m.run();
    let mut d2 = d.clone();
    d2.param("throttle", json!(0.3));
    d2.param("clutchRise", json!("0.4 s"));
    let r2 = compile(&d2, &reg).expect("compiles").run();
    assert_identical(&r, &r2);
    // A lower throttle reaches a lower top speed: the override took effect.
    let base = c.model(&reg).expect("instantiates").run();
    let vmax = |r: &drivelink_core::SimResult, name: &str| {
        r.get(name)
            .unwrap()
            .iter()
            .cloned()
            .fold(f64::MIN, f64::max)
    };
    let v = r
        .names
        .iter()
        .find(|n| n.contains("car") || n.contains("vehicle"))
        .cloned();
    if let Some(v) = v {
        assert!(vmax(&r, &v) != vmax(&base, &v));
    }
}

#[test]
fn a_parameter_that_changes_the_structure_compiles_in_full() {
    let reg = drivelink_blocks::registry();
    let mut d = drivelink_core::Diagram::new("lag");
    d.param("den", json!([0.5, 1.0]));
    d.add("u", "Step", json!({"time": 0.0}));
    d.add("tf", "TransferFcn", json!({"num": [1.0], "den": "den"}));
    d.connect(&["u.y", "tf.u"]);
    d.log(&["tf.y"]);
    d.settings.stop_time = 1.0;
    let c = Compiled::new(&d, &reg).expect("compiles");
    let mut m = c
        .with_params(&reg, &[("den".into(), json!([0.1, 0.5, 1.0]))])
        .expect("instantiates");
    assert_ne!(
        m.plan().compile_id(),
        c.plan().compile_id(),
        "second order: a new plan"
    );
    assert_eq!(m.plan().n_states(), 2);
    let r = m.run();
    // 1/(0.1 s² + 0.5 s + 1) reaches its steady state 1 with a damped overshoot.
    assert!(r.last("tf.y").unwrap() > 0.9);
}

#[test]
fn an_unknown_parameter_override_is_named_with_a_suggestion() {
    let reg = drivelink_blocks::registry();
    let d = netlist::load_file(&netlist_dir().join("full_car.json")).expect("loads");
    let c = Compiled::new(&d, &reg).expect("compiles");
    let e = c
        .with_params(&reg, &[("throtle".into(), json!(0.3))])
        .err()
        .expect("unknown name")
        .to_string();
    assert!(
        e.contains("parameters.throtle") && e.contains("did you mean 'throttle'"),
        "{e}"
    );
}

/// Regression: a re-run of a compiled model kept the table blocks' segments (`Lookup1D`,
/// `LookupTable2D`) from the end of the previous run, so the full car's initial event
/// switched five shift-schedule tables back and cost 5 more model evaluations than a fresh
/// run. Every block now re-initialises its modes in `reset`: for every shipped netlist a
/// second run of the same model does exactly the work of the first (same solver
/// statistics, model evaluations included) and gives the same bits.
#[test]
fn every_netlist_rerun_does_the_work_of_its_first_run() {
    let reg = drivelink_blocks::registry();
    let mut names: Vec<_> = std::fs::read_dir(netlist_dir())
        .expect("netlist dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    assert!(names.len() > 20, "{names:?}");
    for path in names {
        let d = netlist::load_file(&path).unwrap_or_else(|e| panic!("{e}"));
        let mut m = compile(&d, &reg).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let first = m.run();
        let second = m.run();
        assert_eq!(first.stats, second.stats, "{}", path.display());
        assert_eq!(
            first.events.len(),
            second.events.len(),
            "{}",
            path.display()
        );
        assert_identical(&first, &second);
    }
}

/// A netlist whose solver section names a parameter (`"stop_time": "t_end"`): the lag
/// `y' = (1 − y)/τ` from rest, so `y(t_end) = 1 − e^(−t_end/τ)` tells where the run ended.
fn settings_over_parameters() -> drivelink_core::Diagram {
    let text = json!({
        "drivelink": 1,
        "name": "stop_over_parameter",
        "parameters": {"t_end": "2 s", "tau": "0.5 s"},
        "solver": {"method": "dopri5", "stop_time": "t_end", "output_interval": "t_end/4",
                   "rtol": 1e-10, "atol": 1e-12},
        "blocks": [
            {"name": "one", "type": "Constant", "params": {"value": 1}},
            {"name": "lag", "type": "TransferFcn", "params": {"num": [1], "den": ["tau/(1 s)", 1]}}
        ],
        "connections": [["one.y", "lag.u"]],
        "log": ["lag.y"]
    })
    .to_string();
    netlist::load_str(&text, "stop_over_parameter.json", std::path::Path::new(".")).expect("loads")
}

/// Regression: a sweep of a parameter that the solver section uses
/// (`"stop_time": "t_end"`) kept the stop time of the netlist's value for every run,
/// because the settings were resolved once, when the netlist was loaded.
#[test]
fn solver_settings_written_over_parameters_follow_the_run_parameters() {
    let reg = drivelink_blocks::registry();
    let d = settings_over_parameters();
    let c = Compiled::new(&d, &reg).expect("compiles");
    let tau = 0.5_f64;
    for t_end in [0.7_f64, 3.0] {
        let mut m = c
            .with_params(&reg, &[("t_end".into(), json!(format!("{t_end} s")))])
            .expect("instantiates");
        assert_eq!(m.settings().stop_time, t_end);
        assert_eq!(m.settings().output_interval, Some(t_end / 4.0));
        let r = m.run();
        assert_eq!(r.end_time, t_end);
        // Five grid points 0, t/4, ..., t: the output interval followed too.
        assert_eq!(r.time.len(), 5, "{:?}", r.time);
        let y = *r.get("lag.y").unwrap().last().unwrap();
        let exact = 1.0 - (-t_end / tau).exp();
        assert!((y - exact).abs() < 1e-8, "y({t_end}) = {y}, exact {exact}");
    }
    // A full compile of a diagram whose parameter changed reads the section again too.
    let mut d2 = d.clone();
    d2.param("t_end", json!("1.5 s"));
    assert_eq!(compile(&d2, &reg).expect("compiles").run().end_time, 1.5);
    // A stop time set in code wins over the section, and the rest still follows.
    let mut d3 = d.clone();
    d3.set_stop_time(4.0);
    d3.param("t_end", json!("8 s"));
    let m3 = compile(&d3, &reg).expect("compiles");
    assert_eq!(
        (m3.settings().stop_time, m3.settings().output_interval),
        (4.0, Some(2.0))
    );
    // Saving keeps the section as written, so a saved copy sweeps the same way.
    assert_eq!(netlist::to_json(&d)["solver"]["stop_time"], "t_end");
    // A value the section cannot take is an error naming the key.
    let e = c
        .with_params(&reg, &[("t_end".into(), json!("-1 s"))])
        .err()
        .expect("a negative stop time is refused")
        .to_string();
    assert!(
        e.contains("solver.stop_time") && e.contains("greater than start_time"),
        "{e}"
    );
}

/// Regression: `with_params` instantiated a model whose new values made its
/// settings absurd (a sample time giving billions of time events), and the run failed at
/// its start without naming the parameter; `compile` refused the same diagram. Both
/// refuse it now, with the same error.
#[test]
fn with_params_refuses_absurd_settings_as_compile_does() {
    let reg = drivelink_blocks::registry();
    let d = netlist::load_file(&netlist_dir().join("signal_discrete.json")).expect("loads");
    let c = Compiled::new(&d, &reg).expect("compiles");
    let e = c
        .with_params(&reg, &[("Ts".into(), json!("1e-9 s"))])
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("max_time_events") && e.contains("sample_time"),
        "{e}"
    );
    let mut d2 = d.clone();
    d2.param("Ts", json!("1e-9 s"));
    let e2 = compile(&d2, &reg).err().expect("refused").to_string();
    assert_eq!(e, e2);
}
