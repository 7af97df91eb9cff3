//! Parameter validation of the signal blocks: every bad value is an `Err` from `compile`
//! naming the block and the parameter.

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram};
use serde_json::{json, Value};

/// Compile a diagram holding one block `b` of `type_name` (inputs fed by a Constant) and
/// return the error text.
fn error_of(type_name: &str, params: Value, n_inputs: usize) -> String {
    let mut d = Diagram::new("bad");
    d.add("src", "Constant", json!({"value": 1.0}));
    d.add("b", type_name, params);
    for i in 0..n_inputs {
        let port = if n_inputs == 1 {
            "b.u".to_string()
        } else {
            format!("b.u{}", i + 1)
        };
        d.connect(&["src.y".to_string(), port]);
    }
    match compile(&d, &registry()) {
        Ok(_) => panic!("{type_name} compiled but should fail"),
        Err(e) => e.to_string(),
    }
}

fn assert_names(msg: &str, param: &str) {
    assert!(
        msg.contains("'b'"),
        "message does not name the block: {msg}"
    );
    assert!(
        msg.contains(&format!("'{param}'")),
        "message does not name '{param}': {msg}"
    );
}

#[test]
fn improper_transfer_fcn_is_rejected() {
    let m = error_of(
        "TransferFcn",
        json!({"num": [1.0, 0.0, 0.0], "den": [1.0, 1.0]}),
        1,
    );
    assert_names(&m, "num");
    assert!(m.contains("improper"), "{m}");
}

#[test]
fn transfer_fcn_empty_and_zero_leading_den() {
    assert_names(
        &error_of("TransferFcn", json!({"num": [], "den": [1.0, 1.0]}), 1),
        "num",
    );
    assert_names(
        &error_of("TransferFcn", json!({"num": [1.0], "den": []}), 1),
        "den",
    );
    let m = error_of("TransferFcn", json!({"num": [1.0], "den": [0.0, 1.0]}), 1);
    assert_names(&m, "den");
    assert!(m.contains("leading"), "{m}");
    // Leading numerator zeros do not make it improper.
    let mut d = Diagram::new("ok");
    d.add("src", "Constant", json!({"value": 1.0}));
    d.add(
        "b",
        "TransferFcn",
        json!({"num": [0.0, 0.0, 1.0], "den": [1.0, 1.0]}),
    );
    d.connect(&["src.y", "b.u"]);
    compile(&d, &registry()).unwrap();
}

#[test]
fn empty_tables_are_rejected() {
    assert_names(
        &error_of("SignalBuilder", json!({"points": []}), 0),
        "points",
    );
    assert_names(&error_of("Lookup1D", json!({"table": []}), 1), "table");
}

#[test]
fn non_monotone_signal_builder_times_are_rejected() {
    let m = error_of(
        "SignalBuilder",
        json!({"points": [[0.0, 0.0], [2.0, 1.0], [1.0, 2.0]]}),
        0,
    );
    assert_names(&m, "points");
    assert!(m.contains("non-decreasing"), "{m}");
    let m = error_of(
        "SignalBuilder",
        json!({"points": [[0.0, 0.0], [1.0, 1.0], [1.0, 2.0], [1.0, 3.0]]}),
        0,
    );
    assert_names(&m, "points");
}

#[test]
fn lookup_needs_increasing_axis() {
    assert_names(
        &error_of("Lookup1D", json!({"table": [[0.0, 0.0], [0.0, 1.0]]}), 1),
        "table",
    );
    assert_names(
        &error_of(
            "Lookup1D",
            json!({"table": [[0.0, 0.0]], "extrapolate": "flat"}),
            1,
        ),
        "extrapolate",
    );
}

#[test]
fn bad_op_strings_are_rejected() {
    let m = error_of("Sum", json!({"signs": "+*"}), 2);
    assert_names(&m, "signs");
    assert!(m.contains("'*'"), "{m}");
    assert_names(&error_of("Sum", json!({"signs": ""}), 0), "signs");
    assert_names(&error_of("Product", json!({"ops": "*+"}), 2), "ops");
    assert_names(&error_of("Relational", json!({"op": "=<"}), 2), "op");
    assert_names(&error_of("MinMax", json!({"op": "mean"}), 2), "op");
    assert_names(
        &error_of("MinMax", json!({"op": "max", "inputs": 1.5}), 2),
        "inputs",
    );
    assert_names(
        &error_of("MinMax", json!({"op": "max", "inputs": 0}), 0),
        "inputs",
    );
}

#[test]
fn range_errors() {
    assert_names(
        &error_of("Saturation", json!({"lower": 2.0, "upper": 1.0}), 1),
        "lower",
    );
    assert_names(
        &error_of("ZeroOrderHold", json!({"sample_time": 0.0}), 1),
        "sample_time",
    );
    assert_names(
        &error_of("UnitDelay", json!({"sample_time": -1.0}), 1),
        "sample_time",
    );
    assert_names(
        &error_of(
            "Ramp",
            json!({"start_time": 0.0, "duration": -1.0, "height": 1.0}),
            0,
        ),
        "duration",
    );
    assert_names(
        &error_of("Sine", json!({"amplitude": 1.0, "frequency": -2.0}), 0),
        "frequency",
    );
    assert_names(&error_of("PID", json!({"kp": 1.0, "kd": 0.1}), 1), "tf");
    assert_names(
        &error_of("PID", json!({"kp": 1.0, "kd": 0.1, "tf": 0.0}), 1),
        "tf",
    );
    assert_names(&error_of("Step", json!({}), 0), "time");
}

#[test]
fn state_space_dimension_checks() {
    let a = json!([[0.0, 1.0], [-1.0, -1.0]]);
    assert_names(
        &error_of(
            "StateSpace",
            json!({"A": [[0.0, 1.0]], "B": [[1.0]], "C": [[1.0]], "D": 0.0}),
            1,
        ),
        "A",
    );
    assert_names(
        &error_of(
            "StateSpace",
            json!({"A": a, "B": [[1.0]], "C": [[1.0, 0.0]], "D": 0.0}),
            1,
        ),
        "B",
    );
    assert_names(
        &error_of(
            "StateSpace",
            json!({"A": a, "B": [[0.0], [1.0]], "C": [[1.0, 0.0, 0.0]], "D": 0.0}),
            1,
        ),
        "C",
    );
    assert_names(
        &error_of(
            "StateSpace",
            json!({"A": a, "B": [[0.0], [1.0]], "C": [[1.0, 0.0]], "D": [[1.0, 2.0]]}),
            1,
        ),
        "D",
    );
    assert_names(
        &error_of(
            "StateSpace",
            json!({"A": a, "B": [[0.0], [1.0]], "C": [[1.0, 0.0]], "x0": [1.0]}),
            1,
        ),
        "x0",
    );
}

#[test]
fn ports_follow_parameters() {
    // Sum with three signs has u1..u3; connecting u4 is an unknown port.
    let mut d = Diagram::new("ports");
    d.add("src", "Constant", json!({"value": 1.0}));
    d.add("b", "Sum", json!({"signs": "+-+"}));
    d.connect(&["src.y", "b.u1", "b.u2", "b.u3", "b.u4"]);
    let e = compile(&d, &registry())
        .err()
        .expect("should fail")
        .to_string();
    assert!(e.contains("u4"), "{e}");
}

#[test]
fn every_signal_block_documents_its_parameters() {
    // The signal blocks of the full registry (`Abs` is the one type "signal / vehicle":
    // |u| without parameters, the ABS controller with them).
    let r = drivelink_blocks::registry();
    let signal = |c: &str| c == "signal" || c == "signal / vehicle";
    for t in r.types().filter(|t| signal(t.category)) {
        assert!(!t.doc.is_empty(), "{}", t.name);
        for p in &t.params {
            assert!(!p.doc.is_empty(), "{}.{}", t.name, p.name);
        }
    }
    let names: Vec<&str> = r
        .types()
        .filter(|t| signal(t.category))
        .map(|t| t.name)
        .collect();
    for n in [
        "Constant",
        "Step",
        "Ramp",
        "Sine",
        "SignalBuilder",
        "Clock",
        "Gain",
        "Sum",
        "Product",
        "Abs",
        "MinMax",
        "Saturation",
        "Lookup1D",
        "Relational",
        "Switch",
        "Integrator",
        "TransferFcn",
        "StateSpace",
        "PID",
        "ZeroOrderHold",
        "UnitDelay",
        "StopSimulation",
    ] {
        assert!(
            names.contains(&n),
            "{n} not registered as a signal block: {names:?}"
        );
    }
}

#[test]
fn algebraic_loop_through_feedthrough_blocks_but_not_through_integrators() {
    // Gain -> Sum -> Gain loop is algebraic; through an Integrator it is not.
    let mut d = Diagram::new("loop");
    d.add("c", "Constant", json!({"value": 1.0}));
    d.add("sum", "Sum", json!({"signs": "+-"}));
    d.add("g", "Gain", json!({"k": 2.0}));
    d.connect(&["c.y", "sum.u1"]);
    d.connect(&["sum.y", "g.u"]);
    d.connect(&["g.y", "sum.u2"]);
    assert!(compile(&d, &registry())
        .err()
        .expect("should fail")
        .to_string()
        .contains("algebraic loop"));
    for (ty, p) in [
        ("Integrator", json!({})),
        ("UnitDelay", json!({"sample_time": 0.1})),
        ("TransferFcn", json!({"num": [1.0], "den": [1.0, 1.0]})),
    ] {
        let mut d = Diagram::new("noloop");
        d.add("c", "Constant", json!({"value": 1.0}));
        d.add("sum", "Sum", json!({"signs": "+-"}));
        d.add("g", ty, p);
        d.connect(&["c.y", "sum.u1"]);
        d.connect(&["sum.y", "g.u"]);
        d.connect(&["g.y", "sum.u2"]);
        compile(&d, &registry()).unwrap_or_else(|e| panic!("{ty}: {e}"));
    }
}

#[test]
fn signal_levels_accept_any_unit() {
    let mut d = Diagram::new("units");
    d.add("c", "Constant", json!({"value": "10 N*m"}));
    d.add("g", "Gain", json!({"k": "2 rad/s"}));
    d.connect(&["c.y", "g.u"]);
    d.log(&["g.y"]);
    d.settings.stop_time = 0.1;
    let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("{e}"));
    let r = m.run();
    assert_eq!(r.last("g.y"), Some(20.0));
    // Times are still checked: a step time in metres is an error naming the parameter.
    let m = error_of("Step", json!({"time": "3 m"}), 0);
    assert_names(&m, "time");
}

/// The coefficient of s^k carries seconds^k, so `den: ["tau", 1]` with
/// `tau = "250 ms"` is the lag 1/(0.25 s + 1), and `[1, "1/tau"]` (monic) works too.
#[test]
fn transfer_fcn_coefficients_with_time_units_are_accepted() {
    for (num, den) in [
        (json!([1]), json!(["tau", 1])),
        (json!(["1/tau"]), json!([1, "1/tau"])),
    ] {
        let mut d = Diagram::new("lag");
        d.param("tau", json!("250 ms"));
        d.add("u", "Step", json!({"time": 0.0}));
        d.add("tf", "TransferFcn", json!({"num": num, "den": den}));
        d.connect(&["u.y", "tf.u"]);
        d.log(&["tf.y"]);
        d.settings.stop_time = 1.0;
        d.settings.rtol = 1e-9;
        d.settings.atol = 1e-12;
        d.settings.output_interval = Some(0.05);
        let r = compile(&d, &registry())
            .unwrap_or_else(|e| panic!("{e}"))
            .run();
        let y = r.value_at("tf.y", 0.5).unwrap();
        assert!(
            (y - (1.0 - (-0.5f64 / 0.25).exp())).abs() < 1e-7,
            "y(0.5) = {y}"
        );
    }
}

#[test]
fn transfer_fcn_coefficients_with_inconsistent_units_are_named() {
    let msg = error_of("TransferFcn", json!({"num": [1], "den": ["2 s", "3 s"]}), 1);
    assert_names(&msg, "den");
    assert!(msg.contains("s^k"), "{msg}");
}
