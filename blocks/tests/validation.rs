//! Every compile-time validation error, each naming the offending element.

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, Error};
use serde_json::json;

fn err(d: &Diagram) -> Error {
    match compile(d, &registry()) {
        Ok(_) => panic!("expected a compile error"),
        Err(e) => e,
    }
}

fn base() -> Diagram {
    let mut d = Diagram::new("v");
    d.add("src", "Constant", json!({"value": 1.0}));
    d.add("g", "Gain", json!({"k": 2.0}));
    d
}

#[test]
fn unknown_port_names_block_port_and_suggests() {
    let mut d = base();
    d.connect(&["src.y", "g.uu"]);
    let e = err(&d);
    assert!(
        e.flatten().iter().any(
            |e| matches!(e, Error::UnknownPort { block, port, .. } if block == "g" && port == "uu")
        ),
        "{e}"
    );
    let msg = e.to_string();
    assert!(msg.contains("did you mean 'u'"), "{msg}");
}

#[test]
fn unknown_block_and_type_are_named() {
    let mut d = base();
    d.connect(&["srcc.y", "g.u"]);
    assert!(err(&d)
        .to_string()
        .contains("unknown block 'srcc' (did you mean 'src'?)"));
    let mut d = base();
    d.add("x", "Gian", json!({}));
    let msg = err(&d).to_string();
    assert!(
        msg.contains("'x'") && msg.contains("Gian") && msg.contains("did you mean 'Gain'"),
        "{msg}"
    );
}

#[test]
fn kind_mismatch_lists_ports_and_kinds() {
    let mut d = base();
    d.add("J", "Inertia", json!({"J": 1.0}));
    d.connect(&["src.y", "J.flange"]);
    let msg = err(&d).to_string();
    assert!(
        msg.contains("src.y [out]") && msg.contains("J.flange [rot]"),
        "{msg}"
    );
}

#[test]
fn undriven_input_is_named() {
    let d = base();
    let e = err(&d);
    assert!(
        matches!(e, Error::UndrivenInput { ref block, ref port } if block == "g" && port == "u"),
        "{e}"
    );
}

#[test]
fn two_drivers_and_two_outputs_are_errors() {
    let mut d = base();
    d.add("src2", "Constant", json!({"value": 3.0}));
    d.connect(&["src.y", "g.u"]);
    d.connect(&["src2.y", "g.u"]);
    let msg = err(&d).to_string();
    assert!(msg.contains("'g.u' is driven twice"), "{msg}");
    let mut d = base();
    d.add("src2", "Constant", json!({"value": 3.0}));
    d.connect(&["src.y", "src2.y", "g.u"]);
    let msg = err(&d).to_string();
    assert!(
        msg.contains("exactly one output") && msg.contains("src2.y"),
        "{msg}"
    );
}

#[test]
fn duplicate_and_invalid_names_are_errors() {
    let mut d = base();
    d.add("g", "Gain", json!({"k": 1.0}));
    d.connect(&["src.y", "g.u"]);
    assert!(err(&d)
        .flatten()
        .iter()
        .any(|e| matches!(e, Error::DuplicateName { name } if name == "g")));
    let mut d = base();
    d.add("9bad", "Constant", json!({"value": 1.0}));
    d.connect(&["src.y", "g.u"]);
    assert!(err(&d).to_string().contains("invalid block name '9bad'"));
}

#[test]
fn algebraic_loop_lists_its_blocks() {
    // g1 -> sum -> g1 with direct feedthrough everywhere.
    let mut d = Diagram::new("loop");
    d.add("src", "Constant", json!({"value": 1.0}));
    d.add("sum", "Sum", json!({"signs": "++"}));
    d.add("g1", "Gain", json!({"k": 0.5}));
    d.add("out", "Gain", json!({"k": 1.0}));
    d.connect(&["src.y", "sum.u1"]);
    d.connect(&["g1.y", "sum.u2"]);
    d.connect(&["sum.y", "g1.u", "out.u"]);
    let e = err(&d);
    match e {
        Error::AlgebraicLoop { blocks } => {
            assert_eq!(blocks, vec!["g1".to_string(), "sum".to_string()])
        }
        other => panic!("{other}"),
    }
    // The same loop through an integrator is fine (no direct feedthrough).
    let mut d = Diagram::new("no_loop");
    d.add("src", "Constant", json!({"value": 1.0}));
    d.add("sum", "Sum", json!({"signs": "+-"}));
    d.add("int", "Integrator", json!({}));
    d.connect(&["src.y", "sum.u1"]);
    d.connect(&["int.y", "sum.u2"]);
    d.connect(&["sum.y", "int.u"]);
    assert!(compile(&d, &registry()).is_ok());
}

#[test]
fn torque_sensor_feeding_a_torque_source_is_an_algebraic_loop_through_the_network() {
    let mut d = Diagram::new("mech_loop");
    d.add("J1", "Inertia", json!({"J": 1.0}));
    d.add("J2", "Inertia", json!({"J": 1.0}));
    d.add("ts", "TorqueSensor", json!({}));
    d.add("src", "TorqueSource", json!({}));
    d.connect(&["J1.flange", "ts.flange_a", "src.flange"]);
    d.connect(&["J2.flange", "ts.flange_b"]);
    d.connect(&["ts.tau", "src.tau"]);
    let msg = err(&d).to_string();
    assert!(
        msg.contains("algebraic loop")
            && msg.contains("ts")
            && msg.contains("<mechanical network>"),
        "{msg}"
    );
}

#[test]
fn singular_network_names_the_massless_node() {
    let mut d = Diagram::new("singular");
    d.add("J", "Inertia", json!({"J": 1.0}));
    d.add("gear", "IdealGear", json!({"ratio": 2.0}));
    d.add("c", "Clutch", json!({}));
    d.add("f", "Constant", json!({"value": 0.0}));
    d.connect(&["J.flange", "gear.flange_a"]);
    d.connect(&["gear.flange_b", "c.flange_a"]);
    d.connect(&["f.y", "c.f"]);
    // c.flange_b is a massless free node.
    let e = err(&d);
    match e {
        Error::SingularNetwork {
            ref nodes,
            ref unconnected,
        } => {
            assert_eq!(nodes, &vec!["c.flange_b".to_string()]);
            // Regression: the open flange is named as unconnected, not only as massless.
            assert_eq!(unconnected, &vec!["c.flange_b".to_string()]);
            assert!(
                e.to_string()
                    .contains("c.flange_b is not connected to anything: connect it to a shaft with inertia or to a Fixed"),
                "{e}"
            );
        }
        other => panic!("{other}"),
    }
}

#[test]
fn bad_parameters_name_block_and_parameter() {
    let mut d = Diagram::new("p");
    d.add("J", "Inertia", json!({"J": -1.0}));
    let msg = err(&d).to_string();
    assert!(
        msg.contains("block 'J': parameter 'J' must be >= 0"),
        "{msg}"
    );
    let mut d = Diagram::new("p");
    d.add("J", "Inertia", json!({"J": 1.0, "w00": 3.0}));
    let msg = err(&d).to_string();
    assert!(
        msg.contains("unknown parameter 'w00'") && msg.contains("did you mean 'w0'"),
        "{msg}"
    );
    let mut d = Diagram::new("p");
    d.add("J", "Inertia", json!({"J": "3 kg*m^2", "w0": "100 kW"}));
    let msg = err(&d).to_string();
    assert!(
        msg.contains("'w0'") && msg.contains("expected rad/s"),
        "{msg}"
    );
}

#[test]
fn several_errors_are_reported_together() {
    let mut d = Diagram::new("many");
    d.add("a", "Gain", json!({"k": 1.0}));
    d.add("b", "Gain", json!({"k": 1.0}));
    let e = err(&d);
    let all = e.flatten();
    assert_eq!(all.len(), 2, "{e}");
}

#[test]
fn unknown_logged_variable_suggests() {
    let mut d = base();
    d.connect(&["src.y", "g.u"]);
    d.log(&["g.yy"]);
    let msg = err(&d).to_string();
    assert!(
        msg.contains("unknown variable 'g.yy'") && msg.contains("did you mean 'g.y'"),
        "{msg}"
    );
}

/// An unknown block type gets a suggestion on word parts too
/// (`FrictionClutch` is 8 edits from `Clutch` but shares the word).
#[test]
fn unknown_type_friction_clutch_suggests_clutch() {
    let mut d = base();
    d.add("c", "FrictionClutch", json!({}));
    let e = err(&d).to_string();
    assert!(
        e.contains("'FrictionClutch'") && e.contains("did you mean 'Clutch'"),
        "{e}"
    );
}

/// An unknown log variable lists the variables of its block.
#[test]
fn unknown_variable_lists_the_blocks_variables() {
    let mut d = base();
    d.connect(&["src.y", "g.u"]);
    d.log(&["g.gain"]);
    let e = err(&d).to_string();
    assert!(
        e.contains("'g.gain'") && e.contains("block 'g' has: g.y"),
        "{e}"
    );
}

/// A flange joined to nothing is a named warning.
#[test]
fn unconnected_flange_is_a_named_warning() {
    let mut d = base();
    d.connect(&["src.y", "g.u"]);
    d.add("J", "Inertia", json!({"J": 1.0, "w0": 1.0}));
    let m = compile(&d, &registry()).expect("compiles");
    let w: Vec<String> = m.plan().warnings().iter().map(|w| w.to_string()).collect();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("'J.flange'"), "{w:?}");
}

/// Regression: the singularity test compared the reduced mass matrix's smallest
/// eigenvalue with 1e-12 of the largest node mass, so a 1e13 kg·m² flywheel made a
/// 2 kg·m² shaft "massless" (and a 1e-12 kg·m² shaft beside 2 kg·m² was refused). Real
/// inertia ratios up to about 1e18 now compile, and the clutch between them locks at the
/// closed-form instant `Δω·J1·J2/((J1 + J2)·T)`.
#[test]
fn large_inertia_ratio_is_not_a_singular_network() {
    for j1 in [1e13, 1e-12] {
        let mut d = Diagram::new("ratio");
        d.add("J1", "Inertia", json!({"J": j1, "w0": 10.0}));
        d.add("J2", "Inertia", json!({"J": 2.0}));
        d.add("c", "Clutch", json!({"mu": 0.5, "fn_max": 20.0}));
        d.add("one", "Constant", json!({"value": 1.0}));
        d.connect(&["J1.flange", "c.flange_a"]);
        d.connect(&["J2.flange", "c.flange_b"]);
        d.connect(&["one.y", "c.f"]);
        d.settings.stop_time = 3.0;
        let mut m =
            drivelink_core::compile(&d, &registry()).unwrap_or_else(|e| panic!("J1 = {j1}: {e}"));
        let r = m.run();
        let lock = r
            .events_of("c", drivelink_core::EventTag::Lock)
            .next()
            .unwrap_or_else(|| panic!("J1 = {j1}: no lock: {:?}", r.events))
            .time;
        // The kinetic torque mu·cgeo·fn_max = 10 N·m.
        let exact = 10.0 * j1 * 2.0 / ((j1 + 2.0) * 10.0);
        assert!(
            (lock - exact).abs() < 1e-9 * exact.max(1e-9) + 1e-9,
            "J1 = {j1}: lock at {lock}, exact {exact}"
        );
    }
}

/// Regression: errors and warnings about a composite block's ports named its inner blocks
/// (`gb.selector.gear`, `gb.mesh.flange_b`), which the user never wrote; they name the
/// ports it exports (`gb.gear`, `gb.output`).
#[test]
fn composite_block_ports_are_named_as_exported() {
    let mut d = Diagram::new("gb");
    d.add(
        "gb",
        "ManualGearbox",
        json!({"ratios": [3.0, 1.5], "efficiency": 0.9}),
    );
    d.add("J", "Inertia", json!({"J": 1.0}));
    d.connect(&["J.flange", "gb.input"]);
    let e = err(&d).to_string();
    assert!(e.contains("input 'gb.gear' has no driver"), "{e}");
    assert!(!e.contains("selector"), "{e}");
    d.add("lever", "Constant", json!({"value": 1.0}));
    d.connect(&["lever.y", "gb.gear"]);
    let m = compile(&d, &registry()).expect("compiles");
    let w: Vec<String> = m.plan().warnings().iter().map(|w| w.to_string()).collect();
    assert!(
        w.iter()
            .any(|w| w.contains("flange 'gb.output' is not connected")),
        "{w:?}"
    );
    assert!(!w.iter().any(|w| w.contains("gb.mesh")), "{w:?}");
}

/// Logging a port that is no variable (`J.flange`) says so, instead of a "did you mean"
/// by spelling (`car.frame` got "did you mean 'car.ax'?").
#[test]
fn logging_a_flange_says_it_is_a_port_not_a_variable() {
    let mut d = Diagram::new("log_port");
    d.add("J", "Inertia", json!({"J": 1.0}));
    d.log(&["J.flange"]);
    let e = err(&d).to_string();
    assert!(
        e.contains("'flange' is a rotational flange port of 'J', not a variable"),
        "{e}"
    );
    assert!(e.contains("J.w"), "{e}");
}
