//! `Abs` names both the math block |u| and the ABS brake controller in the catalogue; one
//! registered type serves both, chosen by whether ABS parameters are given.

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, RunStatus};
use serde_json::json;

#[test]
fn abs_without_parameters_is_the_absolute_value() {
    let mut d = Diagram::new("abs");
    d.add("s", "Sine", json!({"amplitude": 2.0, "frequency": 1.0}));
    d.add("a", "Abs", json!({}));
    d.connect(&["s.y", "a.u"]);
    d.log(&["a.y", "s.y"]);
    d.settings.stop_time = 1.0;
    let r = compile(&d, &registry()).unwrap().run();
    assert_eq!(r.status, RunStatus::Completed);
    for (y, u) in r.get("a.y").unwrap().iter().zip(r.get("s.y").unwrap()) {
        // (At the located sign change the left value lags by the ~1e-12 bracket.)
        assert!((y - u.abs()).abs() < 1e-9);
    }
}

#[test]
fn abs_with_parameters_is_the_brake_controller() {
    let mut d = Diagram::new("abs_ctrl");
    d.add("demand", "Constant", json!({"value": 1000.0}));
    d.add("slip", "Constant", json!({"value": 0.0}));
    d.add("peak", "Constant", json!({"value": 0.4}));
    d.add("abs", "Abs", json!({"enabled": true}));
    d.connect(&["demand.y", "abs.demand"]);
    d.connect(&["slip.y", "abs.slip"]);
    d.connect(&["peak.y", "abs.peak_slip"]);
    d.log(&["abs.torque"]);
    d.settings.stop_time = 0.1;
    let r = compile(&d, &registry())
        .unwrap_or_else(|e| panic!("{e}"))
        .run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    // No slip: the full demand passes.
    assert_eq!(r.last("abs.torque"), Some(1000.0));
}

#[test]
fn abs_peak_slip_offset_without_the_tire_peak_slip_is_a_compile_error() {
    // trigger peak_slip_offset (the default) needs the controlled tire's peak slip: neither
    // the input connected nor the parameter given is a typed error naming the block and port.
    let mut d = Diagram::new("abs_no_peak");
    d.add("demand", "Constant", json!({"value": 1000.0}));
    d.add("slip", "Constant", json!({"value": 0.0}));
    d.add(
        "abs_fl",
        "Abs",
        json!({"enabled": true, "trigger": "peak_slip_offset"}),
    );
    d.connect(&["demand.y", "abs_fl.demand"]);
    d.connect(&["slip.y", "abs_fl.slip"]);
    let e = match compile(&d, &registry()) {
        Ok(_) => panic!("compiled without a peak slip"),
        Err(e) => e,
    };
    assert_eq!(
        e,
        drivelink_core::Error::UndrivenInput {
            block: "abs_fl".into(),
            port: "peak_slip".into()
        },
        "{e}"
    );
    assert!(e.to_string().contains("abs_fl.peak_slip"), "{e}");
    // An explicit parameter is accepted; custom_slip does not need the peak at all.
    for p in [
        json!({"enabled": true, "peak_slip": 0.4}),
        json!({"enabled": true, "trigger": "custom_slip"}),
    ] {
        let mut d = Diagram::new("abs_ok");
        d.add("demand", "Constant", json!({"value": 1000.0}));
        d.add("slip", "Constant", json!({"value": 0.0}));
        d.add("abs", "Abs", p);
        d.connect(&["demand.y", "abs.demand"]);
        d.connect(&["slip.y", "abs.slip"]);
        assert!(compile(&d, &registry()).is_ok());
    }
}

#[test]
fn abs_trigger_follows_the_peak_slip_of_the_tire_it_controls() {
    // Same sampled slip 1.0 m/s, min_slip_offset 0.3: a tire peaking at 0.4 m/s makes the
    // ABS release (1.0 > 0.7), one peaking at 1.0 m/s does not (1.0 < 1.3). The peak comes
    // from Tire.peak_slip = extremum_slip.
    for (xe, released) in [(0.4, true), (1.0, false)] {
        let mut d = Diagram::new("abs_tire");
        d.add("demand", "Constant", json!({"value": 1000.0}));
        d.add("slip", "Constant", json!({"value": -1.0}));
        d.add(
            "tire",
            "Tire",
            json!({"extremum_slip": xe, "asymptote_slip": 2.0}),
        );
        d.add("load", "Constant", json!({"value": 0.0}));
        d.add("wheel", "Inertia", json!({"J": 1.0}));
        d.add("car", "Mass", json!({"m": 100.0}));
        d.add(
            "abs",
            "Abs",
            json!({"enabled": true, "mode": "simple", "min_slip_offset": 0.3, "cycle_time": 0.01}),
        );
        d.connect(&["load.y", "tire.normal_force"]);
        d.connect(&["wheel.flange", "tire.hub"]);
        d.connect(&["car.flange", "tire.body"]);
        d.connect(&["demand.y", "abs.demand"]);
        d.connect(&["slip.y", "abs.slip"]);
        d.connect(&["tire.peak_slip", "abs.peak_slip"]);
        d.log(&["abs.torque", "tire.peak_slip"]);
        d.settings.stop_time = 0.05;
        let r = compile(&d, &registry())
            .unwrap_or_else(|e| panic!("{e}"))
            .run();
        assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
        assert_eq!(r.last("tire.peak_slip"), Some(xe));
        let expected = if released { 250.0 } else { 1000.0 };
        assert_eq!(r.last("abs.torque"), Some(expected), "extremum_slip {xe}");
    }
}
