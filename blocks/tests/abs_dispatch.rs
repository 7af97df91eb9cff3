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
    d.add("abs", "Abs", json!({"enabled": true}));
    d.connect(&["demand.y", "abs.demand"]);
    d.connect(&["slip.y", "abs.slip"]);
    d.log(&["abs.torque"]);
    d.settings.stop_time = 0.1;
    let r = compile(&d, &registry())
        .unwrap_or_else(|e| panic!("{e}"))
        .run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    // No slip: the full demand passes.
    assert_eq!(r.last("abs.torque"), Some(1000.0));
}
