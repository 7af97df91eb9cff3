//! The registry as a whole: every block type builds from its defaults (with example values
//! for required parameters) and declares consistent ports, variables and units; the linear
//! blocks' state-space forms compute exactly what their own equations compute.

use drivelink_blocks::registry;
use drivelink_core::compile::{resolve_params, Scope};
use drivelink_core::probe::Probe;
use drivelink_core::units::parse_unit;
use drivelink_core::{Block, BlockBuild, PortKind};
use serde_json::{json, Value};

fn build(type_name: &str, params: Value) -> Box<dyn Block> {
    let reg = registry();
    let t = reg.get(type_name).expect("registered");
    let Value::Object(raw) = params else { panic!() };
    let p = resolve_params("b", type_name, &t.params, &raw, &Scope::new())
        .unwrap_or_else(|e| panic!("{type_name}: {e:?}"));
    match &t.build {
        BlockBuild::Primitive(f) => f(&p).unwrap_or_else(|e| panic!("{type_name}: {e}")),
        _ => panic!("not primitive"),
    }
}

#[test]
fn every_block_type_builds_with_defaults_and_declares_consistent_ports_and_variables() {
    let reg = registry();
    let mut checked = 0;
    for t in reg.types() {
        let BlockBuild::Primitive(f) = &t.build else {
            continue;
        };
        // An `Fmu` block is built from an FMU file, not from example values: the root
        // crate's tests/fmu_roundtrip.rs builds it from real FMUs.
        if t.name == "Fmu" {
            continue;
        }
        // Example values for required parameters (some types need a specific range).
        let mut built = None;
        for x in [1.0, 2.0, 0.5] {
            let raw = t.example_params(x);
            if let Ok(p) = resolve_params("b", t.name, &t.params, &raw, &Scope::new()) {
                if let Ok(b) = f(&p) {
                    built = Some(b);
                    break;
                }
            }
        }
        let b = built.unwrap_or_else(|| panic!("{} does not build from example values", t.name));
        let ports = b.declare().ports;
        let mut names: Vec<&str> = ports.iter().map(|p| p.name.as_str()).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "{}: duplicate port names", t.name);
        for p in &ports {
            if let Some(u) = p.unit {
                assert!(parse_unit(u).is_ok(), "{}.{}: unit '{u}'", t.name, p.name);
            }
            assert!(
                p.default.is_none() || p.kind == PortKind::In,
                "{}.{}: only inputs have defaults",
                t.name,
                p.name
            );
        }
        let mut vars: Vec<String> = b
            .declare()
            .variables
            .iter()
            .map(|v| v.name.clone())
            .collect();
        for v in b.declare().variables {
            assert!(
                parse_unit(v.unit).is_ok(),
                "{}.{}: unit '{}'",
                t.name,
                v.name,
                v.unit
            );
        }
        vars.extend(
            ports
                .iter()
                .filter(|p| p.kind == PortKind::Out)
                .map(|p| p.name.clone()),
        );
        let nv = vars.len();
        vars.sort();
        vars.dedup();
        assert_eq!(
            vars.len(),
            nv,
            "{}: a variable shadows a port or another variable",
            t.name
        );
        // Declared mechanical pieces refer to mechanical ports.
        let mech = b.declare().mech;
        let is_mech = |p: usize| ports.get(p).is_some_and(|d| d.kind.is_mech());
        for &(p, _) in &mech.masses {
            assert!(is_mech(p), "{}: mass on a non-mechanical port", t.name);
        }
        for c in &mech.constraints {
            assert!(
                c.row.0.iter().all(|&(p, _)| is_mech(p)),
                "{}: constraint row",
                t.name
            );
        }
        for j in &mech.frictions {
            assert!(
                j.row.0.iter().all(|&(p, _)| is_mech(p)),
                "{}: friction row",
                t.name
            );
        }
        checked += 1;
    }
    assert!(checked > 40, "checked {checked} block types");
}

/// The linear form and the block's own equations agree at an arbitrary point.
fn assert_linear_form_matches(name: &str, b: &mut Box<dyn Block>, u: &[f64], x: &[f64]) {
    let l = b.declare().linear.expect("linear");
    let mut p = Probe::new(b.as_mut());
    p.inputs(u).states(x);
    let (y, dx) = (p.outputs(), p.derivatives());
    // Row i of `m1·x + m2·u` for row-major matrices with `n` and `m` columns.
    let row = |m1: &[f64], m2: &[f64], i: usize| -> f64 {
        (0..l.n).map(|j| m1[i * l.n + j] * x[j]).sum::<f64>()
            + (0..l.m).map(|j| m2[i * l.m + j] * u[j]).sum::<f64>()
    };
    for (i, &yi) in y.iter().enumerate().take(l.p) {
        let lin = row(&l.c, &l.d, i);
        assert!(
            (lin - yi).abs() <= 1e-12 * (1.0 + yi.abs()),
            "{name} y{i}: {lin} vs {yi}"
        );
    }
    for (i, &di) in dx.iter().enumerate().take(l.n) {
        let lin = row(&l.a, &l.b, i);
        assert!(
            (lin - di).abs() <= 1e-12 * (1.0 + di.abs()),
            "{name} dx{i}: {lin} vs {di}"
        );
    }
}

#[test]
fn linear_forms_compute_what_the_blocks_compute() {
    let cases: Vec<(&str, Value, usize)> = vec![
        ("Gain", json!({"k": -2.5}), 1),
        ("Sum", json!({"signs": "+-+"}), 3),
        ("Integrator", json!({}), 1),
        ("TransferFcn", json!({"num": [2.0], "den": [0.5, 1.0]}), 1),
        (
            "TransferFcn",
            json!({"num": [1.0, 3.0], "den": [1.0, 0.4, 9.0]}),
            1,
        ),
        (
            "TransferFcn",
            json!({"num": [2.0, 1.0, 5.0], "den": [1.0, 2.0, 3.0]}),
            1,
        ),
        (
            "StateSpace",
            json!({"A": [[0, 1], [-4, -0.2]], "B": [[0], [1]], "C": [[1, 0.5]], "D": 0.3}),
            1,
        ),
        (
            "PID",
            json!({"kp": 2.0, "ki": 0.7, "kd": 0.1, "tf": 0.02}),
            1,
        ),
    ];
    for (ty, params, n_in) in cases {
        let mut b = build(ty, params);
        let n = b.declare().states;
        let u: Vec<f64> = (0..n_in).map(|i| 0.7 - 1.3 * i as f64).collect();
        let x: Vec<f64> = (0..n).map(|i| -0.4 + 0.9 * i as f64).collect();
        assert_linear_form_matches(ty, &mut b, &u, &x);
    }
}

/// The `name[kind]` entries of a ports line (`"u[in] -> y[out]; crank[rot]"`).
fn doc_ports(doc: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = doc;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']') else {
            break;
        };
        let name: String = rest[..open]
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<String>()
            .chars()
            .rev()
            .collect();
        out.push((name, rest[open + 1..open + close].to_string()));
        rest = &rest[open + close + 1..];
    }
    out
}

/// The ports line of the catalogue (`drivelink blocks`, the schema's descriptions, the
/// diagram's fallback) names every port the block declares, with its kind: a port added in
/// `ports()` without its documentation fails here.
#[test]
fn ports_documentation_lists_every_declared_port_with_its_kind() {
    let pair = |n: &str, k: &str| (n.to_string(), k.to_string());
    assert_eq!(
        doc_ports("u[in] -> y[out] (no parameters); crank[rot], heat[heat]"),
        vec![
            pair("u", "in"),
            pair("y", "out"),
            pair("crank", "rot"),
            pair("heat", "heat")
        ]
    );
    let reg = registry();
    let mut missing = Vec::new();
    let mut checked = 0;
    for t in reg.types() {
        let BlockBuild::Primitive(f) = &t.build else {
            continue;
        };
        checked += 1;
        let built = [1.0, 2.0, 0.5].iter().find_map(|&x| {
            let raw = t.example_params(x);
            let p = resolve_params("b", t.name, &t.params, &raw, &Scope::new()).ok()?;
            f(&p).ok()
        });
        let Some(b) = built else { continue };
        let documented = doc_ports(t.ports_doc);
        for p in b.declare().ports {
            let kind = p.kind.as_str();
            if !documented.iter().any(|(n, k)| *n == p.name && k == kind) {
                missing.push(format!("{}: {}[{kind}]", t.name, p.name));
            }
        }
    }
    assert!(checked > 40, "checked {checked} block types");
    assert!(missing.is_empty(), "ports not in ports_doc: {missing:#?}");
}

/// A block of every primitive type, built from its example parameters.
fn every_primitive_block() -> Vec<(&'static str, Box<dyn Block>)> {
    let reg = registry();
    reg.types()
        .filter_map(|t| {
            let BlockBuild::Primitive(f) = &t.build else {
                return None;
            };
            [1.0, 2.0, 0.5].iter().find_map(|&x| {
                let raw = t.example_params(x);
                let p = resolve_params("b", t.name, &t.params, &raw, &Scope::new()).ok()?;
                f(&p).ok().map(|b| (t.name, b))
            })
        })
        .collect()
}

/// What a `pure_outputs` or `pure_guards` declaration promises: no states, signal ports
/// only, and the same values of `what` (`eval` of a probe) at other times for the same
/// inputs `u`. Returns the values.
fn assert_pure(
    name: &str,
    b: &mut Box<dyn Block>,
    u: &[f64],
    what: &str,
    eval: impl Fn(&Probe) -> Vec<f64>,
) -> Vec<f64> {
    assert_eq!(b.declare().states, 0, "{name}: pure {what}, no states");
    assert!(
        b.declare()
            .ports
            .iter()
            .all(|p| matches!(p.kind, PortKind::In | PortKind::Out)),
        "{name}: pure {what}, signal ports only"
    );
    let mut at = |t: f64| {
        let mut p = Probe::new(b.as_mut());
        p.inputs(u).time(t);
        eval(&p)
    };
    let (v0, v1) = (at(0.25), at(17.5));
    assert_eq!(v0, v1, "{name}: {what} depend on time");
    v0
}

#[test]
fn blocks_held_between_events_declare_it_truthfully() {
    // `pure_outputs`: the outputs are a function of the inputs and modes only, so a block
    // fed only by signals that change at events may itself be evaluated at events only
    // (`core/src/compile/held.rs`). Checked: no states, signal ports only, and the same
    // outputs at other times and flange motions for the same inputs.
    // `constant_outputs`: the outputs do not depend on the inputs at all.
    let mut pure = Vec::new();
    let mut constant = Vec::new();
    for (name, mut b) in every_primitive_block() {
        let n_in = b
            .declare()
            .ports
            .iter()
            .filter(|p| p.kind == PortKind::In)
            .count();
        let u: Vec<f64> = (0..n_in).map(|i| 0.3 + 0.7 * i as f64).collect();
        if b.declare().pure_outputs() {
            assert_pure(name, &mut b, &u, "outputs", |p| p.outputs());
            pure.push(name);
        }
        if b.declare().constant_outputs() {
            let with = |b: &mut Box<dyn Block>, u: &[f64]| {
                let mut p = Probe::new(b.as_mut());
                p.inputs(u).time(1.0);
                p.outputs()
            };
            let other: Vec<f64> = u.iter().map(|v| 5.0 - 3.0 * v).collect();
            let (ya, yb) = (with(&mut b, &u), with(&mut b, &other));
            assert_eq!(ya, yb, "{name}: constant outputs depend on the inputs");
            constant.push(name);
        }
    }
    for t in [
        "Gain",
        "Sum",
        "Product",
        "Lookup1D",
        "Lookup2D",
        "Saturation",
        "Switch",
    ] {
        assert!(
            pure.contains(&t),
            "{t} should declare pure outputs: {pure:?}"
        );
    }
    for t in [
        "Constant",
        "Step",
        "UnitDelay",
        "ZeroOrderHold",
        "Relational",
    ] {
        assert!(
            constant.contains(&t),
            "{t} should declare constant outputs: {constant:?}"
        );
    }
}

/// `Block::engagement` (the guard pass of free and sliding joints reads it instead of the
/// whole law) gives exactly the engagement of `Block::friction`, for every block with
/// friction joints, at several inputs and slips.
#[test]
fn engagement_is_the_engagement_of_the_friction_law() {
    let mut checked = 0;
    for (name, mut b) in every_primitive_block() {
        let joints = b.declare().mech.frictions.len();
        if joints == 0 {
            continue;
        }
        let ports = b.declare().ports;
        let n_in = ports.iter().filter(|p| p.kind == PortKind::In).count();
        let n_mech = ports.len();
        let mut p = Probe::new(b.as_mut());
        for (k, &f) in [0.0, 0.4, 1.0].iter().enumerate() {
            let u: Vec<f64> = (0..n_in).map(|i| f + 0.1 * i as f64).collect();
            let v: Vec<f64> = (0..n_mech)
                .map(|i| 3.0 * k as f64 - 1.5 * i as f64)
                .collect();
            p.inputs(&u).speeds(&v);
            for j in 0..joints {
                for w_rel in [0.0, -2.5, 7.0] {
                    let (law, e) = p.with_cx(|cx| {
                        (
                            p.block().friction(j, cx, w_rel).engagement,
                            p.block().engagement(j, cx, w_rel),
                        )
                    });
                    assert_eq!(
                        law.to_bits(),
                        e.to_bits(),
                        "{name} joint {j} at f {f}, w_rel {w_rel}"
                    );
                }
            }
        }
        checked += 1;
    }
    assert!(
        checked >= 5,
        "checked {checked} block types with friction joints"
    );
}

/// `pure_guards` (the guard pass reuses the guards of a block fed only by held signals
/// between events, `core/src/compile/held.rs`) is declared truthfully: no states, signal
/// ports only, and the same guards at other times for the same inputs.
#[test]
fn blocks_with_pure_guards_declare_it_truthfully() {
    let mut pure = Vec::new();
    for (name, mut b) in every_primitive_block() {
        if !b.declare().pure_guards {
            continue;
        }
        let n_in = b
            .declare()
            .ports
            .iter()
            .filter(|p| p.kind == PortKind::In)
            .count();
        let u: Vec<f64> = (0..n_in).map(|i| 0.3 + 0.7 * i as f64).collect();
        let g = assert_pure(name, &mut b, &u, "guards", |p| p.guards());
        assert!(!g.is_empty(), "{name}: pure guards but no guards");
        pure.push(name);
    }
    for t in [
        "Lookup1D",
        "Lookup2D",
        "Relational",
        "Saturation",
        "StopSimulation",
        "Switch",
    ] {
        assert!(pure.contains(&t), "{t} declares pure guards");
    }
}

#[test]
fn no_two_library_block_types_share_a_name() {
    let reg = registry();
    let clashes: Vec<String> = reg.duplicates().iter().map(|e| e.to_string()).collect();
    assert!(clashes.is_empty(), "{clashes:#?}");
    // `Abs` is the one deliberate redefinition: the merged math / ABS type.
    assert_eq!(reg.get("Abs").map(|t| t.category), Some("signal / vehicle"));
}

/// A block that offers fused kernels for its outputs (`Block::kernel`) must compute with
/// them exactly what its own `outputs` and `network_outputs` compute: the model runs the
/// kernel in its place. Checked bit for bit over varied surroundings, a standing divisor
/// and negative values included.
#[test]
fn fused_output_kernels_compute_what_the_blocks_compute_to_the_bit() {
    let reg = registry();
    let mut fused = Vec::new();
    for t in reg.types() {
        let BlockBuild::Primitive(f) = &t.build else {
            continue;
        };
        if t.name == "Fmu" {
            continue;
        }
        let Some(mut b) = [1.0, 2.0, 0.5].iter().find_map(|&x| {
            let raw = t.example_params(x);
            let p = resolve_params("b", t.name, &t.params, &raw, &Scope::new()).ok()?;
            f(&p).ok()
        }) else {
            continue;
        };
        if b.kernel(false).is_none() && b.kernel(true).is_none() {
            continue;
        }
        fused.push(t.name);
        let np = b.declare().ports.len();
        let mut p = Probe::new(b.as_mut());
        let n_in = p.n_inputs();
        for k in 0..40 {
            let v = |i: usize| {
                let s = (k * 7 + i * 13) as f64;
                match (k + i) % 5 {
                    0 => 0.0,
                    1 => -(s * 0.37).sin() * 120.0,
                    _ => (s * 0.61).cos() * 3.0 + 0.25,
                }
            };
            let vals: Vec<f64> = (0..np.max(n_in)).map(v).collect();
            p.inputs(&vals[..n_in])
                .speeds(&vals[..np])
                .positions(&vals.iter().map(|v| v * 2.5).collect::<Vec<_>>()[..np])
                .accels(&vals.iter().map(|v| v - 1.0).collect::<Vec<_>>()[..np])
                .lambdas(&vals[..np]);
            let want = p.outputs();
            let got = p.kernel_outputs().expect("the block offers a kernel");
            let bits = |y: &[f64]| y.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&got),
                bits(&want),
                "{} at sample {k}: {got:?} against {want:?}",
                t.name
            );
        }
    }
    for name in ["MotionSensor", "TorqueSensor", "SpeedRatio", "Product"] {
        assert!(fused.contains(&name), "{name} offers no kernel: {fused:?}");
    }
}
