//! Linearization (`Model::linearize`) against closed forms: a two-inertia torsional
//! oscillator, a first-order lag, and the full car's slowest mode in third gear.

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram};
use drivelink_netlist as netlist;
use serde_json::json;

#[test]
fn two_inertias_with_spring_damper_give_the_closed_form_eigenvalues() {
    let (j1, j2, c, d): (f64, f64, f64, f64) = (1.0, 2.0, 100.0, 0.5);
    let mut dg = Diagram::new("osc");
    dg.add("J1", "Inertia", json!({"J": j1, "w0": 1.0}));
    dg.add("J2", "Inertia", json!({"J": j2}));
    dg.add("k", "SpringDamper", json!({"c": c, "d": d}));
    dg.connect(&["J1.flange", "k.flange_a"]);
    dg.connect(&["k.flange_b", "J2.flange"]);
    let mut m = compile(&dg, &registry()).unwrap();
    let lin = m.linearize(None, &[], &["k.tau".into()]).unwrap();
    assert_eq!(lin.states.len(), 4, "{:?}", lin.states);
    // Two free inertias: the rigid rotation (0, 0) and the torsional pair.
    let jr = j1 * j2 / (j1 + j2);
    let re = -d / (2.0 * jr);
    let im = (c / jr - re * re).sqrt();
    let ev = &lin.eigenvalues;
    let pair: Vec<_> = ev.iter().filter(|e| e.im.abs() > 1.0).collect();
    assert_eq!(pair.len(), 2, "{ev:?}");
    for e in pair {
        assert!((e.re - re).abs() <= 1e-8 * im, "{e:?} vs {re} ± {im}i");
        assert!(
            (e.im.abs() - im).abs() <= 1e-8 * im,
            "{e:?} vs {re} ± {im}i"
        );
        assert!((e.natural_frequency - (c / jr).sqrt()).abs() <= 1e-8 * im);
        assert!((e.damping - d / (2.0 * (c * jr).sqrt())).abs() <= 1e-8);
    }
    let zeros = ev
        .iter()
        .filter(|e| e.natural_frequency <= 1e-8 * im)
        .count();

    assert_eq!(zeros, 2, "{ev:?}");
    // C: the logged tau is the torque transmitted from flange_a to flange_b (it accelerates
    // J2), −c·(phi_b − phi_a) − d·(w_b − w_a): +c per radian of J1, −d per rad/s of J2.
    let col = |name: &str| lin.states.iter().position(|s| s == name).unwrap();
    assert!(
        (lin.c[(0, col("J1.flange.phi"))] - c).abs() < 1e-6 * c,
        "{}",
        lin.c
    );
    assert!(
        (lin.c[(0, col("J2.flange.w"))] + d).abs() < 1e-6 * c,
        "{}",
        lin.c
    );
}

#[test]
fn first_order_lag_gives_a_minus_one_over_tau_and_b_one_over_tau() {
    let tau = 0.25;
    let mut dg = Diagram::new("lag");
    dg.add("u", "Constant", json!({"value": 1.0}));
    dg.add(
        "tf",
        "TransferFcn",
        json!({"num": [1.0], "den": [tau, 1.0]}),
    );
    dg.connect(&["u.y", "tf.u"]);
    let mut m = compile(&dg, &registry()).unwrap();
    let lin = m
        .linearize(Some(0.5), &["tf.u".into()], &["tf.y".into()])
        .unwrap();
    assert_eq!(lin.states, vec!["tf.x1"]);
    assert!((lin.a[(0, 0)] + 1.0 / tau).abs() < 1e-9, "{}", lin.a);
    assert!((lin.b[(0, 0)] - 1.0 / tau).abs() < 1e-9, "{}", lin.b);
    assert!((lin.c[(0, 0)] - 1.0).abs() < 1e-9 && lin.d[(0, 0)].abs() < 1e-9);
    // The operating point: the step response 1 − e^(−t/τ) at 0.5 s.
    assert!((lin.x0[0] - (1.0 - (-0.5f64 / tau).exp())).abs() < 1e-6);
    assert_eq!(lin.u0, vec![1.0]);
}

/// The full car at 25 s, third gear, torque converter open (lock-up closes only in the
/// neutral phase). Its slowest mode is the vehicle's speed, damped by the road load and by
/// the driveline's torque slope. By hand: the vehicle side is the inertia reflected to the
/// road (m + J_axle/r² + gear-reflected member and turbine inertias) and the damping
/// 2·C·v from the road load plus the turbine torque's slope with turbine speed reflected
/// to the road. The test computes both from the model's own parameters and the operating
/// point, and compares the time constant with the linearization's slowest eigenvalue.
#[test]
fn opened_input_of_a_block_held_between_events_reaches_the_derivatives() {
    // Constant -> Gain (held between events: its input is a constant) -> Lookup1D (held)
    // -> lag. Opening the gain's input cuts it from the constant; its perturbation must
    // still pass through both held blocks: B = k·slope/tau, D (to the table's output) =
    // k·slope.
    let (k, slope, tau) = (3.0, 2.0, 0.5);
    let mut dg = Diagram::new("held");
    dg.add("u", "Constant", json!({"value": 0.2}));
    dg.add("g", "Gain", json!({"k": k}));
    dg.add(
        "tab",
        "Lookup1D",
        json!({"table": [[-10.0, -10.0 * slope], [10.0, 10.0 * slope]]}),
    );
    dg.add(
        "tf",
        "TransferFcn",
        json!({"num": [1.0], "den": [tau, 1.0]}),
    );
    dg.connect(&["u.y", "g.u"]);
    dg.connect(&["g.y", "tab.u"]);
    dg.connect(&["tab.y", "tf.u"]);
    let mut m = compile(&dg, &registry()).unwrap();
    assert!(
        m.plan().summary().contains("3 blocks at events only"),
        "{}",
        m.plan().summary()
    );
    let lin = m
        .linearize(None, &["g.u".into()], &["tab.y".into()])
        .unwrap();
    assert!((lin.b[(0, 0)] - k * slope / tau).abs() < 1e-7, "{}", lin.b);
    assert!((lin.d[(0, 0)] - k * slope).abs() < 1e-7, "{}", lin.d);
}

#[test]
fn full_car_third_gear_is_stable_and_its_slowest_mode_is_the_road_load_time_constant() {
    let reg = registry();
    let d = netlist::load_file(&drivelink_models::netlist_dir().join("full_car.json")).unwrap();
    let mut m = compile(&d, &reg).unwrap();
    let lin = m
        .linearize(
            Some(25.0),
            &["engine.throttle".into()],
            &["vehicle.v".into()],
        )
        .unwrap();
    let ev = &lin.eigenvalues;
    assert!(ev.iter().all(|e| e.re < 0.0), "stable: {ev:?}");
    let slow = ev.last().unwrap();
    assert!(slow.im.abs() < 1e-9, "slowest mode is real: {slow:?}");
    // By hand: vehicle speed v, road load F = A + C v² (B = 0), so ∂F/∂v = 2 C v; the
    // effective mass and the driveline's share come from the linear model's own row of the
    // vehicle speed: a = −(1/τ)·δv with 1/τ = −A_vv, and the road-load part of it is
    // 2·C·v/m_eff where m_eff = (∂v̇/∂F_road)^-1 follows from the B-column of a road force.
    let v = lin.y0[0];
    let c_road = 0.4;
    let vi = lin
        .states
        .iter()
        .position(|s| s.ends_with(".v"))
        .expect("vehicle speed is a state");
    let a_vv = lin.a[(vi, vi)];
    // m_eff: the model's rigid group of the car (vehicle mass + axle and wheel inertias
    // through the wheel radius + the gearbox output side through the final drive).
    let m_eff = 1500.0 + 4.0 / 0.3f64.powi(2);
    let road_only = -2.0 * c_road * v / m_eff;
    println!("v = {v} m/s, A_vv = {a_vv}, road-load rate {road_only}, slowest {slow:?}");
    assert!(v > 15.0 && v < 40.0, "third gear cruising: v = {v}");
    // The slowest eigenvalue is the vehicle mode, −2·C·v/m_eff. What the hand value leaves
    // out shifts it by a few percent at most: the turbine and gearbox member inertias
    // reflected to the road (0.05 kg·m² and 6 × 0.005 kg·m² through a ~4.3:1 total ratio
    // and 0.3 m: under 1 % of m_eff) and the torque converter's coupling to the engine
    // (the engine mode at −46 1/s takes the converter's damping): 3 % bounds both.
    assert!(
        (slow.re - road_only).abs() <= 0.03 * road_only.abs(),
        "slowest {} vs road load {road_only}",
        slow.re
    );
    // The hydraulic lags of the clutch pressures (1/(0.2 s + 1)) are modes of their own.
    let lags = ev.iter().filter(|e| (e.re + 5.0).abs() < 1e-6).count();
    assert_eq!(lags, 5, "{ev:?}");
}

/// A free rigid body (the `frame` port kind): its 13 states are linearized like any other,
/// with the kinematics `ṗ = v` exact, every mode an integrator except the quaternion's norm
/// direction, which the renormalisation term pulls back at rate 2 (|q|² − 1 decays as
/// `e^(−2t)`).
#[test]
fn free_rigid_body_linearizes_to_kinematic_integrators() {
    let mut dg = Diagram::new("body");
    dg.add(
        "car",
        "RigidBody",
        json!({"m": 1200.0, "inertia": [400.0, 1500.0, 1700.0], "z0": 1.0, "v0": 10.0}),
    );
    let mut m = compile(&dg, &registry()).unwrap();
    let lin = m
        .linearize(None, &[], &["car.z".into(), "car.x".into()])
        .unwrap();
    let idx = |n: &str| {
        lin.states
            .iter()
            .position(|s| s == n)
            .unwrap_or_else(|| panic!("{n} in {:?}", lin.states))
    };
    // The body's 13 states and the RigidBody's continuous yaw (an integral of the yaw rate).
    assert_eq!(lin.states.len(), 14, "{:?}", lin.states);
    for (p, v) in [("x", "vx"), ("y", "vy"), ("z", "vz")] {
        let (i, j) = (
            idx(&format!("car.frame.{p}")),
            idx(&format!("car.frame.{v}")),
        );
        assert!(
            (lin.a[(i, j)] - 1.0).abs() < 1e-9,
            "d{p}/d{v} = {}",
            lin.a[(i, j)]
        );
    }
    assert!((lin.c[(0, idx("car.frame.z"))] - 1.0).abs() < 1e-9);
    assert!((lin.c[(1, idx("car.frame.x"))] - 1.0).abs() < 1e-9);
    let mut re: Vec<f64> = lin.eigenvalues.iter().map(|e| e.re).collect();
    re.sort_by(f64::total_cmp);
    assert!((re[0] + 2.0).abs() < 1e-6, "{re:?}");
    assert!(re[1..].iter().all(|r| r.abs() < 1e-6), "{re:?}");
    assert!(lin.eigenvalues.iter().all(|e| e.im.abs() < 1e-6));
}

/// A heat capacity cooled through a conductor to an ambient: `C·Ṫ = −G·(T − T_amb)`, so the
/// linearization has the one state `T` with `A = −G/C` (the thermal nodes' temperatures are
/// states like any other).
#[test]
fn heat_capacitor_through_a_conductor_linearizes_to_minus_g_over_c() {
    let (c, g) = (450.0, 3.0);
    let mut dg = Diagram::new("cooling");
    dg.add("disc", "HeatCapacitor", json!({"C": c, "T0": 350.0}));
    dg.add("cond", "ThermalConductor", json!({"G": g}));
    dg.add("amb", "FixedTemperature", json!({"T": 293.15}));
    dg.connect(&["disc.port", "cond.port_a"]);
    dg.connect(&["cond.port_b", "amb.port"]);
    let mut m = compile(&dg, &registry()).unwrap();
    let lin = m.linearize(None, &[], &["cond.Q_flow".into()]).unwrap();
    assert_eq!(lin.states.len(), 1, "{:?}", lin.states);
    assert!(lin.states[0].ends_with(".T"), "{:?}", lin.states);
    assert!(
        (lin.a[(0, 0)] + g / c).abs() < 1e-9 * g / c,
        "{}",
        lin.a[(0, 0)]
    );
    assert!((lin.c[(0, 0)] - g).abs() < 1e-9 * g, "{}", lin.c[(0, 0)]);
}

/// An input listed twice would be two columns of B for one signal: refused, naming it.
#[test]
fn an_input_listed_twice_is_refused() {
    let reg = registry();
    let d = drivelink_netlist::load_file(
        &drivelink_models::netlist_dir().join("signal_first_order.json"),
    )
    .expect("loads");
    let mut m = compile(&d, &reg).unwrap();
    let e = m
        .linearize(None, &["lag.u".into(), "lag.u".into()], &["lag.y".into()])
        .expect_err("refused")
        .to_string();
    assert!(e.contains("'lag.u' is listed twice"), "{e}");
}
