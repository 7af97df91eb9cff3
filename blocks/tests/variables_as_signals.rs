//! Every variable `drivelink blocks TYPE` lists is a signal source like an output port
//! (`["inertia.w", "gain.u"]`): a function of the states closes no loop, so it can be fed
//! back; an acceleration fed back into what it depends on is an algebraic loop named at
//! compile time.

use drivelink_blocks::registry;
use drivelink_core::{compile, Error, RunStatus, SimResult};
use drivelink_netlist as netlist;
use serde_json::{json, Value};

fn load(v: &Value) -> drivelink_core::Diagram {
    netlist::load_value(v, "taps", std::path::Path::new(".")).unwrap_or_else(|e| panic!("{e}"))
}

fn run(v: &Value) -> (SimResult, drivelink_core::Model) {
    let mut m = compile(&load(v), &registry()).unwrap_or_else(|e| panic!("{e}"));
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    (r, m)
}

fn series<'a>(r: &'a SimResult, n: &str) -> &'a [f64] {
    r.get(n).unwrap_or_else(|| panic!("no {n}"))
}

/// An inertia whose own speed, read as a variable, commands a torque −c·w on it.
fn damped_by_its_speed(variable: &str) -> Value {
    json!({
        "drivelink": 1,
        "name": "taps",
        "blocks": [
            {"name": "inertia", "type": "Inertia", "params": {"J": 2.0, "w0": 10.0}},
            {"name": "damping", "type": "Gain", "params": {"k": -0.5}},
            {"name": "motor", "type": "TorqueSource"}
        ],
        "connections": [
            [variable, "damping.u"],
            ["damping.y", "motor.tau"],
            ["motor.flange", "inertia.flange"]
        ],
        "solver": {"stop_time": 4.0, "rtol": 1e-10, "atol": 1e-12},
        "log": ["inertia.w", "damping.y"]
    })
}

#[test]
fn a_speed_variable_fed_back_as_torque_decays_the_inertia_exponentially() {
    // J·dw/dt = −c·w: w = w0·exp(−c·t/J) with c = 0.5, J = 2.
    let (r, mut m) = run(&damped_by_its_speed("inertia.w"));
    assert!(m.plan().summary().contains("1 variables wired as signals"));
    let (w, tau) = (series(&r, "inertia.w"), series(&r, "damping.y"));
    for (i, &t) in r.time.iter().enumerate() {
        let exact = 10.0 * (-0.25 * t).exp();
        assert!((w[i] - exact).abs() < 1e-7, "t {t}: w {} vs {exact}", w[i]);
        // The torque is read at the same instant: exactly −c·w, no step of delay.
        assert_eq!(tau[i], -0.5 * w[i], "t {t}");
    }
    // The motor's work is the kinetic energy the inertia lost.
    let a = m.energy_audit();
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
}

#[test]
fn an_acceleration_fed_back_into_its_own_inertia_is_an_algebraic_loop_naming_it() {
    let e = compile(&load(&damped_by_its_speed("inertia.a")), &registry())
        .err()
        .expect("an algebraic loop");
    let Error::AlgebraicLoop { blocks } = &e else {
        panic!("not an algebraic loop: {e}");
    };
    for name in ["inertia.a", "damping", "<mechanical network>"] {
        assert!(blocks.iter().any(|b| b == name), "{name} not in {blocks:?}");
    }
}

#[test]
fn an_acceleration_read_by_a_block_outside_the_loop_is_evaluated_after_the_solve() {
    // The acceleration feeds a gain that drives nothing mechanical: no loop, and its
    // value is the network's acceleration of the same instant.
    let mut v = damped_by_its_speed("inertia.w");
    v["blocks"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "probe", "type": "Gain", "params": {"k": 2.0}}));
    v["connections"]
        .as_array_mut()
        .unwrap()
        .push(json!(["inertia.a", "probe.u"]));
    v["log"] = json!(["inertia.w", "inertia.a", "probe.y"]);
    let (r, _) = run(&v);
    let (w, a, y) = (
        series(&r, "inertia.w"),
        series(&r, "inertia.a"),
        series(&r, "probe.y"),
    );
    for i in 0..r.time.len() {
        assert_eq!(y[i], 2.0 * a[i]);
        // dw/dt = −c·w/J.
        assert!(
            (a[i] + 0.25 * w[i]).abs() < 1e-9 * w[0],
            "a {} w {}",
            a[i],
            w[i]
        );
    }
}

#[test]
fn a_body_position_integrated_as_a_signal_follows_the_closed_form() {
    // A rigid body coasting at 5 m/s without gravity: x = 5·t, so ∫x dt = 2.5·t².
    let v = json!({
        "drivelink": 1,
        "name": "taps",
        "blocks": [
            {"name": "car", "type": "RigidBody",
             "params": {"m": 1000.0, "inertia": [400.0, 1500.0, 1600.0], "z0": 1.0,
                        "v0": 5.0, "gravity": [0.0, 0.0, 0.0]}},
            {"name": "area", "type": "Integrator"}
        ],
        "connections": [["car.x", "area.u"]],
        "solver": {"stop_time": 3.0, "rtol": 1e-10, "atol": 1e-12},
        "log": ["car.x", "area.y"]
    });
    let (r, _) = run(&v);
    let (x, area) = (series(&r, "car.x"), series(&r, "area.y"));
    for (i, &t) in r.time.iter().enumerate() {
        assert!((x[i] - 5.0 * t).abs() < 1e-9, "t {t}: x {}", x[i]);
        assert!(
            (area[i] - 2.5 * t * t).abs() < 1e-7,
            "t {t}: area {}",
            area[i]
        );
    }
}

#[test]
fn a_misspelt_variable_in_a_connection_suggests_the_variable() {
    let e = compile(&load(&damped_by_its_speed("inertia.ww")), &registry())
        .err()
        .expect("an unknown port");
    let text = e.to_string();
    assert!(text.contains("'ww'") && text.contains("'w'"), "{text}");
}

#[test]
fn a_variable_cannot_be_driven_as_if_it_were_an_input() {
    // Two sources on one line (an output and a variable): one driver per line.
    let mut v = damped_by_its_speed("inertia.w");
    v["connections"] = json!([
        ["damping.y", "inertia.phi"],
        ["inertia.w", "damping.u"],
        ["damping.y", "motor.tau"],
        ["motor.flange", "inertia.flange"]
    ]);
    let e = compile(&load(&v), &registry()).err().expect("two drivers");
    assert!(e.to_string().contains("inertia.phi"), "{e}");
}
