//! Differential types: kinematics, open/locked/viscous/clutch-pack/torque-bias properties,
//! the split-mu launch (rear axle, left wheel on ice), and the final-drive mesh efficiency
//! (loss in both power-flow directions, locking, energy and heat audit).

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, Model, RunStatus, SimResult};
use serde_json::{json, Value};

fn run(d: &Diagram) -> SimResult {
    let mut m = compile(d, &registry()).unwrap_or_else(|e| panic!("compile failed: {e}"));
    let r = m.run();
    assert_ne!(r.status, RunStatus::Failed, "run failed: {}", r.message);
    r
}

const LOG: [&str; 10] = [
    "diff.power_mode",
    "body.v",
    "diff.w_left",
    "diff.w_right",
    "diff.tau_left",
    "diff.tau_right",
    "diff.mode",
    "diff.transfer",
    "diff.w_rel",
    "diff.tau_input",
];

/// Split-mu launch: a motor with `torque·(1 − w_in/600 rad/s)` (speed-limited, like an
/// engine at its rev limit) on the differential input, rear axle of a 1200 kg car (3000 N
/// per wheel), left tire on ice (mu 0.1), right on asphalt.
fn split_mu(diff: Value, torque: f64, stop: f64) -> SimResult {
    run(&split_mu_diagram(diff, torque, stop))
}

/// The diagram of [`split_mu`].
fn split_mu_diagram(diff: Value, torque: f64, stop: f64) -> Diagram {
    let mut d = Diagram::new("split_mu");
    d.add("body", "Mass", json!({ "m": 1200.0 }));
    d.add("diff", "Differential", diff);
    d.add("speed", "MotionSensor", json!({}));
    d.add("droop", "Gain", json!({ "k": -torque / 600.0 }));
    d.add("t0", "Constant", json!({ "value": torque }));
    d.add("sum", "Sum", json!({ "signs": "++" }));
    d.add("tq", "Saturation", json!({ "lower": 0.0, "upper": torque }));
    d.connect(&["speed.w", "droop.u"]);
    d.connect(&["t0.y", "sum.u1"]);
    d.connect(&["droop.y", "sum.u2"]);
    d.connect(&["sum.y", "tq.u"]);
    d.add("src", "TorqueSource", json!({}));
    d.add("shaft", "Inertia", json!({ "J": 0.05 }));
    d.add("load", "Constant", json!({ "value": 3000.0 }));
    d.add("ice", "Constant", json!({ "value": 0.1 }));
    for side in ["left", "right"] {
        d.add(&format!("wheel_{side}"), "Inertia", json!({ "J": 1.0 }));
        d.add(&format!("tire_{side}"), "Tire", json!({ "radius": 0.3, "extremum_slip": 1.0, "extremum_value": 1.0, "asymptote_slip": 5.0, "asymptote_value": 0.8 }));
        d.connect(&[
            format!("diff.{side}"),
            format!("wheel_{side}.flange"),
            format!("tire_{side}.hub"),
        ]);
        d.connect(&[format!("tire_{side}.body"), "body.flange".to_string()]);
    }
    d.connect(&[
        "load.y",
        "tire_left.normal_force",
        "tire_right.normal_force",
    ]);
    d.connect(&["ice.y", "tire_left.mu_scale"]);
    d.connect(&["tq.y", "src.tau"]);
    d.connect(&["src.flange", "shaft.flange", "diff.input", "speed.flange"]);
    d.log(&LOG);
    d.log(&[
        "tire_left.force",
        "tire_right.force",
        "tire_left.mode",
        "tire_right.mode",
        "tire_left.slip",
        "tire_right.slip",
    ]);
    d.settings.stop_time = stop;
    d.settings.max_step = 0.01;
    d
}

/// One wheel lifted (inertia only), the other held (grounded): torque on the input.
fn lifted(diff: Value, torque: f64) -> SimResult {
    let mut d = Diagram::new("lifted");
    d.add("diff", "Differential", diff);
    d.add("tq", "Constant", json!({ "value": torque }));
    d.add("src", "TorqueSource", json!({}));
    d.add("ground", "Fixed", json!({}));
    d.add("wheel", "Inertia", json!({ "J": 1.0 }));
    d.connect(&["tq.y", "src.tau"]);
    d.connect(&["src.flange", "diff.input"]);
    d.connect(&["ground.flange", "diff.left"]);
    d.connect(&["wheel.flange", "diff.right"]);
    d.log(&[
        "diff.w_right",
        "diff.mode",
        "diff.tau_left",
        "diff.tau_right",
        "diff.transfer",
    ]);
    d.settings.stop_time = 1.0;
    run(&d)
}

fn last(r: &SimResult, n: &str) -> f64 {
    r.last(n).unwrap_or_else(|| panic!("no {n}"))
}

#[test]
fn kinematics_and_open_split() {
    let r = split_mu(json!({ "type": "open" }), 200.0, 2.0);
    // Input speed = g·(wl + wr)/2 and equal output torques g·T/2 (minus shaft inertia).
    let tl = last(&r, "diff.tau_left");
    let tr = last(&r, "diff.tau_right");
    assert!((tl - tr).abs() < 1e-9 * tl.abs(), "{tl} {tr}");
    assert_eq!(last(&r, "diff.mode"), 2.0);
    // The ice wheel spins, the asphalt wheel rolls: total drive is limited by the ice side:
    // each tire pushes about 0.1·0.8·3000 = 240 N (asymptote on ice).
    // Both tires follow the curve: the asphalt one rolls with a small driving slip on the
    // rising branch (force = curve(slip)·3000 N), the ice one spins.
    assert_eq!(last(&r, "tire_left.mode"), 1.0);
    let fl = last(&r, "tire_left.force");
    let fr = last(&r, "tire_right.force");
    let sr = last(&r, "tire_right.slip");
    assert!(sr > 0.0 && sr < 1.0, "asphalt slip {sr}");
    let curve = drivelink_blocks::vehicle::friction_curve(sr, 1.0, 1.0, 5.0, 0.8) * 3000.0;
    assert!((fr - curve).abs() < 1e-9 * curve, "{fr} vs curve {curve}");
    assert!((fl - 240.0).abs() < 1e-6, "ice force {fl}");
    // The asphalt wheel gets no more torque than the ice wheel: far below its 3000 N grip.
    assert!(
        fr * 0.3 <= tl + 1e-9 && fr < 0.15 * 3000.0,
        "asphalt force {fr} should be limited by the ice side"
    );
    println!(
        "open: v = {:.4} m/s, F_ice = {fl:.1} N, F_asphalt = {fr:.1} N",
        last(&r, "body.v")
    );
}

#[test]
fn locked_keeps_equal_wheel_speeds() {
    let r = split_mu(json!({ "type": "locked" }), 200.0, 2.0);
    let wl = r.get("diff.w_left").unwrap();
    let wr = r.get("diff.w_right").unwrap();
    for k in 0..wl.len() {
        assert!(
            (wl[k] - wr[k]).abs() < 1e-9 * (1.0 + wl[k].abs()),
            "t = {}: {} vs {}",
            r.time[k],
            wl[k],
            wr[k]
        );
    }
    assert_eq!(last(&r, "diff.mode"), 0.0);
}

#[test]
fn torque_bias_gives_n_times_the_low_grip_torque_while_slipping() {
    for n in [2.0, 4.0] {
        let r = split_mu(
            json!({ "type": "torque_bias", "torque_preload": 0.0, "power_ratio": n, "coast_ratio": n }),
            200.0,
            2.0,
        );
        assert_eq!(
            last(&r, "diff.mode"),
            -1.0,
            "should slip with the ice (left) wheel faster: w_rel = {}",
            last(&r, "diff.w_rel")
        );
        // Left (ice) is the fast, low-torque side.
        let tl = last(&r, "diff.tau_left");
        let tr = last(&r, "diff.tau_right");
        println!(
            "torque_bias {n}: tau_left {tl:.2}, tau_right {tr:.2}, ratio {:.6}",
            tr / tl
        );
        // Exact up to the torque-sensing lag (the motor torque droops with speed).
        assert!((tr / tl - n).abs() < 5e-3 * n, "ratio {} vs {n}", tr / tl);
    }
}

#[test]
fn split_mu_speeds_order_as_theory() {
    let speed = |p: Value, name: &str| {
        let r = split_mu(p, 200.0, 3.0);
        let v = last(&r, "body.v");
        println!(
            "split-mu {name}: v(3 s) = {v:.4} m/s, w_left {:.2}, w_right {:.2}, mode {}",
            last(&r, "diff.w_left"),
            last(&r, "diff.w_right"),
            last(&r, "diff.mode")
        );
        v
    };
    let locked = speed(json!({ "type": "locked" }), "locked");
    let tb8 = speed(
        json!({ "type": "torque_bias", "power_ratio": 8, "coast_ratio": 8 }),
        "torque_bias 8:1",
    );
    let tb4 = speed(
        json!({ "type": "torque_bias", "power_ratio": 4, "coast_ratio": 4 }),
        "torque_bias 4:1",
    );
    let tb2 = speed(
        json!({ "type": "torque_bias", "power_ratio": 2, "coast_ratio": 2 }),
        "torque_bias 2:1",
    );
    let cp = speed(json!({ "type": "clutch_pack" }), "clutch_pack (defaults)");
    let cp0 = speed(
        json!({ "type": "clutch_pack", "clutch_preload": 0, "clutch_friction": 0.2, "power_angle": "60 deg" }),
        "clutch_pack (weak)",
    );
    let vis = speed(json!({ "type": "viscous" }), "viscous (defaults)");
    let vis5 = speed(
        json!({ "type": "viscous", "power_stiffness": 0.05 }),
        "viscous 0.05",
    );
    let open = speed(json!({ "type": "open" }), "open");
    let tol = 1e-3;
    // Stronger coupling, more drive: each chain orders as theory predicts.
    for chain in [
        vec![locked, tb8, tb4, tb2, open],
        vec![locked, cp, cp0, open],
        vec![locked, vis, vis5, open],
    ] {
        for k in 1..chain.len() {
            assert!(chain[k - 1] >= chain[k] - tol, "order violated: {chain:?}");
        }
    }
    assert!(
        locked > 2.0 * open,
        "locked should clearly beat open: {locked} vs {open}"
    );
    // Torque bias while slipping: total tire force ≈ (n + 1)·F_ice (F_ice = 240 N) once the
    // ice wheel runs at its asymptote, so the 4:1 car is about 2.5 times the 1:1 (open) one.
    assert!(
        tb4 > 2.0 * open && tb4 < 3.0 * open,
        "4:1 {tb4} vs open {open}"
    );
}

#[test]
fn viscous_stiffness_is_the_lock_ratio_zero_open_one_locked_half_between() {
    // Split-mu launch, 3 s. Stiffness 0 is exactly open, 1 exactly locked, 0.5 strictly
    // between (it was: hidden viscous coefficient 100 N·m·s/rad made 0.5 act as locked).
    let v_at = |p: Value| {
        let r = split_mu(p, 200.0, 3.0);
        (last(&r, "body.v"), last(&r, "diff.mode"))
    };
    let (open, _) = v_at(json!({ "type": "open" }));
    let (locked, _) = v_at(json!({ "type": "locked" }));
    let (v0, m0) = v_at(json!({ "type": "viscous", "power_stiffness": 0, "coast_stiffness": 0 }));
    let (v1, m1) = v_at(json!({ "type": "viscous", "power_stiffness": 1, "coast_stiffness": 1 }));
    let (vh, mh) =
        v_at(json!({ "type": "viscous", "power_stiffness": 0.5, "coast_stiffness": 0.5 }));
    println!(
        "split-mu v(3 s): open {open:.5}, stiffness 0 {v0:.5}, 0.5 {vh:.5}, 1 {v1:.5}, locked {locked:.5} m/s"
    );
    assert!((v0 - open).abs() < 1e-12, "{v0} vs open {open}");
    assert_eq!(m0, 2.0, "stiffness 0: the coupling never engages");
    assert!((v1 - locked).abs() < 1e-12, "{v1} vs locked {locked}");
    assert_eq!(m1, 0.0);
    // Strictly between, by a clear margin on both sides.
    let span = locked - open;
    assert!(vh > open + 0.1 * span && vh < locked - 0.1 * span, "{vh}");
    assert_eq!(mh, -1.0, "0.5 slips with the ice wheel ahead");
}

/// Regression: every differential carried the 5 ms torque-sensing lag, and its
/// power/coast guard, although only the torque-sensing capacities read them. In the
/// vehicle-dynamics car the open differential's lag (following the input torque through
/// every ABS pressure step) caused a quarter of the rejected steps of the braking phase.
/// Now a type whose capacity reads neither the torque nor the power/coast side has no
/// state, and its `tau_sensed` is the unlagged input torque (lossless: `tau_input`).
#[test]
fn differential_lag_state_only_where_the_capacity_senses_torque() {
    let states = |p: Value| {
        let d = split_mu_diagram(p, 200.0, 1.0);
        let m = compile(&d, &registry()).unwrap_or_else(|e| panic!("{e}"));
        m.initial_state().len()
    };
    let sensing = states(json!({ "type": "clutch_pack" }));
    for p in [
        json!({ "type": "open" }),
        json!({ "type": "locked" }),
        json!({ "type": "viscous", "viscous_coefficient": 20.0 }),
        json!({ "type": "viscous", "power_stiffness": 0, "coast_stiffness": 0 }),
        json!({ "type": "viscous", "power_stiffness": 1, "coast_stiffness": 1 }),
    ] {
        assert_eq!(states(p.clone()) + 1, sensing, "{p}");
    }
    // Different lock ratios in power and coast: the side matters, so the lag stays.
    let p = json!({ "type": "viscous", "power_stiffness": 0, "coast_stiffness": 1 });
    assert_eq!(states(p), sensing);
    assert_eq!(
        states(json!({ "type": "torque_bias" })),
        sensing,
        "torque bias senses"
    );
    // Open: the reported sensed torque is the input torque at every sample, and the
    // power/coast flag follows its sign.
    let mut d = split_mu_diagram(json!({ "type": "open" }), 200.0, 1.0);
    d.log(&["diff.tau_sensed"]);
    let r = run(&d);
    let (ts, ti, pm) = (
        r.get("diff.tau_sensed").unwrap(),
        r.get("diff.tau_input").unwrap(),
        r.get("diff.power_mode").unwrap(),
    );
    for k in 0..ts.len() {
        assert_eq!(ts[k], ti[k], "t = {}", r.time[k]);
        assert_eq!(
            pm[k],
            f64::from(u8::from(ti[k] >= 0.0)),
            "t = {}",
            r.time[k]
        );
    }
    assert!(
        last(&r, "diff.tau_input") > 1.0,
        "the motor drives the input"
    );
}

#[test]
fn viscous_lock_ratio_transfers_the_fraction_of_the_locked_transfer() {
    // One wheel lifted, the other held, 300 N·m on the input: a locked differential moves
    // the lifted side's whole half g·T/2 = 555 N·m to the held wheel; stiffness s moves s of
    // it (plus the preload) and the lifted wheel turns with the rest.
    let locked = lifted(json!({ "type": "locked" }), 300.0);
    let t_lock = last(&locked, "diff.transfer").abs();
    assert!(
        (t_lock - 3.7 * 300.0 / 2.0).abs() < 1e-9 * t_lock,
        "{t_lock}"
    );
    for (s, preload) in [(0.25, 0.0), (0.5, 0.0), (0.75, 0.0), (0.5, 40.0)] {
        let r = lifted(
            json!({ "type": "viscous", "power_stiffness": s, "preload": preload }),
            300.0,
        );
        let t = last(&r, "diff.transfer").abs();
        println!("lock ratio {s}, preload {preload}: transfer {t:.6} N·m of {t_lock:.6}");
        // Exact up to the solver tolerance on the sensed torque state (rtol 1e-6).
        assert!(
            (t - (s * t_lock + preload)).abs() < 1e-6 * t_lock,
            "s {s}: {t} vs {}",
            s * t_lock + preload
        );
        assert_eq!(last(&r, "diff.mode"), 1.0, "the lifted wheel slips");
        // Its wheel gets exactly what the coupling leaves it.
        assert!((last(&r, "diff.tau_right") - (t_lock - t)).abs() < 1e-9 * t_lock);
    }
}

#[test]
fn viscous_coefficient_is_an_explicit_speed_sensing_alternative() {
    // With viscous_coefficient c the coupling is preload + c·|w_rel|: outputs held at
    // prescribed speeds 50 + dw and 50 rad/s.
    for (c, preload) in [(20.0, 0.0), (100.0, 0.0), (20.0, 30.0)] {
        for dw in [10.0, 20.0] {
            let mut d = Diagram::new("viscous");
            d.add(
                "diff",
                "Differential",
                json!({ "type": "viscous", "viscous_coefficient": c, "preload": preload }),
            );
            d.add("wl", "Constant", json!({ "value": 50.0 + dw }));
            d.add("wr", "Constant", json!({ "value": 50.0 }));
            d.add("sl", "SpeedSource", json!({}));
            d.add("sr", "SpeedSource", json!({}));
            d.add("shaft", "Inertia", json!({ "J": 0.1 }));
            d.add("wheel_l", "Inertia", json!({ "J": 1.0, "w0": 50.0 + dw }));
            d.add("wheel_r", "Inertia", json!({ "J": 1.0, "w0": 50.0 }));
            d.connect(&["wl.y", "sl.w"]);
            d.connect(&["wr.y", "sr.w"]);
            d.connect(&["sl.flange", "wheel_l.flange", "diff.left"]);
            d.connect(&["sr.flange", "wheel_r.flange", "diff.right"]);
            d.connect(&["shaft.flange", "diff.input"]);
            d.log(&["diff.transfer", "diff.w_rel"]);
            d.settings.stop_time = 0.2;
            let r = run(&d);
            let t = last(&r, "diff.transfer");
            let w = last(&r, "diff.w_rel");
            // w_rel = −dw < 0: the coupling pushes the right output forward.
            let expected = preload + c * dw;
            assert!(
                (t - expected).abs() < 1e-6 * expected,
                "c {c}: transfer {t} at w_rel {w}, expected {expected}"
            );
        }
    }
}

#[test]
fn viscous_power_and_coast_settings_follow_input_torque() {
    // Power stiffness 0.5, coast 0 (open): driving couples, coasting does not.
    let p = json!({ "type": "viscous", "power_stiffness": 0.5, "coast_stiffness": 0.0 });
    let r = split_mu(p.clone(), 200.0, 2.0);
    assert_eq!(last(&r, "diff.power_mode"), 1.0);
    assert!(last(&r, "diff.transfer").abs() > 1.0);
    // Coast: car rolling forward at 20 m/s with a braking torque on the input.
    let mut d = Diagram::new("coast");
    d.add("body", "Mass", json!({ "m": 1200.0, "v0": 20.0 }));
    d.add("diff", "Differential", p);
    d.add("tq", "Constant", json!({ "value": -100.0 }));
    d.add("src", "TorqueSource", json!({}));
    d.add("load", "Constant", json!({ "value": 3000.0 }));
    d.add("ice", "Constant", json!({ "value": 0.1 }));
    for side in ["left", "right"] {
        d.add(
            &format!("wheel_{side}"),
            "Inertia",
            json!({ "J": 1.0, "w0": 20.0 / 0.3 }),
        );
        d.add(&format!("tire_{side}"), "Tire", json!({ "radius": 0.3 }));
        d.connect(&[
            format!("diff.{side}"),
            format!("wheel_{side}.flange"),
            format!("tire_{side}.hub"),
        ]);
        d.connect(&[format!("tire_{side}.body"), "body.flange".to_string()]);
    }
    d.connect(&[
        "load.y",
        "tire_left.normal_force",
        "tire_right.normal_force",
    ]);
    d.connect(&["ice.y", "tire_left.mu_scale"]);
    d.connect(&["tq.y", "src.tau"]);
    d.connect(&["src.flange", "diff.input"]);
    d.log(&[
        "diff.power_mode",
        "diff.transfer",
        "diff.mode",
        "diff.tau_left",
        "diff.tau_right",
        "diff.w_rel",
    ]);
    d.settings.stop_time = 0.5;
    let r = run(&d);
    assert_eq!(last(&r, "diff.power_mode"), 0.0);
    assert_eq!(last(&r, "diff.mode"), 2.0, "coast stiffness 0 is open");
    assert!(
        last(&r, "diff.w_rel") > 1.0,
        "the ice (left) wheel should slow down under coast torque: {}",
        last(&r, "diff.w_rel")
    );
    assert!((last(&r, "diff.tau_left") - last(&r, "diff.tau_right")).abs() < 1e-9);
}

#[test]
fn clutch_pack_lifted_wheel_open_with_defaults_locks_with_aggressive_ramps() {
    // Defaults (friction 0.4, 45°): with 300 N·m input (1110 N·m carrier) the lifted wheel
    // spins: capacity 50 + 0.4·1110 = 494 < 555 needed.
    let r = lifted(json!({ "type": "clutch_pack" }), 300.0);
    assert_eq!(last(&r, "diff.mode"), 1.0);
    assert!(last(&r, "diff.w_right") > 10.0);
    // The lifted wheel gets g·T/2 − capacity.
    let tr = last(&r, "diff.tau_right");
    assert!(
        (tr - (555.0 - 50.0 - 0.4 * 1110.0)).abs() < 1e-3 * 555.0,
        "lifted wheel torque {tr}"
    );
    // Friction 0.6 and 30° ramps: capacity 50 + 0.6·1110/tan 30° > 555: locks.
    let r = lifted(
        json!({ "type": "clutch_pack", "clutch_friction": 0.6, "power_angle": "30 deg", "coast_angle": "30 deg" }),
        300.0,
    );
    assert_eq!(last(&r, "diff.mode"), 0.0);
    assert!(last(&r, "diff.w_right").abs() < 1e-9);
    // No input torque: only the preload couples (a 40 N·m imbalance is held, 60 slips).
    for (imb, mode) in [(40.0, 0.0), (60.0, 1.0)] {
        let mut d = Diagram::new("preload");
        d.add("diff", "Differential", json!({ "type": "clutch_pack" }));
        d.add("tq", "Constant", json!({ "value": imb }));
        d.add("src", "TorqueSource", json!({}));
        d.add("ground", "Fixed", json!({}));
        d.add("wheel", "Inertia", json!({ "J": 1.0 }));
        d.add("shaft", "Inertia", json!({ "J": 0.1 }));
        d.connect(&["tq.y", "src.tau"]);
        d.connect(&["src.flange", "wheel.flange", "diff.right"]);
        d.connect(&["ground.flange", "diff.left"]);
        d.connect(&["shaft.flange", "diff.input"]);
        d.log(&["diff.mode"]);
        d.settings.stop_time = 0.5;
        let r = run(&d);
        assert_eq!(last(&r, "diff.mode"), mode, "imbalance {imb}");
    }
}

#[test]
fn torque_bias_open_with_lifted_wheel_or_no_torque() {
    // Lifted wheel: it gets g·T/(n+1) and spins (never locks); the Torsen is (0, 4, 4).
    let r = lifted(
        json!({ "type": "torque_bias", "torque_preload": 0, "power_ratio": 4, "coast_ratio": 4 }),
        300.0,
    );
    assert_eq!(last(&r, "diff.mode"), 1.0);
    let (tl, tr) = (last(&r, "diff.tau_left"), last(&r, "diff.tau_right"));
    assert!((tl / tr - 4.0).abs() < 1e-3, "{tl} / {tr}");
    // No input torque: free (open) coupling.
    let r = lifted(json!({ "type": "torque_bias" }), 0.0);
    assert_eq!(last(&r, "diff.mode"), 2.0);
    // Ratio 1 is open.
    let r = split_mu(
        json!({ "type": "torque_bias", "power_ratio": 1, "coast_ratio": 1 }),
        200.0,
        2.0,
    );
    assert_eq!(last(&r, "diff.mode"), 2.0);
}

#[test]
fn invalid_differential_parameters_are_errors() {
    let reg = registry();
    for (p, name) in [
        (json!({ "type": "spool" }), "type"),
        (json!({ "gear_ratio": 0 }), "gear_ratio"),
        (json!({ "power_stiffness": 1.5 }), "power_stiffness"),
        (json!({ "power_angle": 45 }), "power_angle"),
        (json!({ "coast_ratio": 0.5 }), "coast_ratio"),
        (json!({ "clutch_preload": -1 }), "clutch_preload"),
        (json!({ "torque_sense_time": 0 }), "torque_sense_time"),
        (json!({ "efficiency": 0 }), "efficiency"),
        (json!({ "efficiency": 1.2 }), "efficiency"),
    ] {
        let mut d = Diagram::new("bad");
        d.add("x", "Differential", p);
        let e = compile(&d, &reg)
            .err()
            .unwrap_or_else(|| panic!("{name}: accepted"));
        assert!(
            e.to_string().contains(name),
            "error does not name {name}: {e}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Final-drive mesh efficiency

const G: f64 = 2.0;
const J_IN: f64 = 1.0;
/// Inertia of each output (wheel).
const J_W: f64 = 1.0;

/// An open differential (ratio 2) from rest: torque `ta` on the input inertia (1 kg·m²),
/// `tb/2` on each output inertia (1 kg·m² each), mesh efficiency `eta`, the heat port on a
/// capacitor. With equal outputs it is a gear `w_in = 2·w_out` to 2 kg·m².
fn lossy_diff(ta: f64, tb: f64, eta: f64) -> (Model, SimResult) {
    let mut d = Diagram::new("lossy_diff");
    d.add(
        "diff",
        "Differential",
        json!({ "type": "open", "gear_ratio": G, "efficiency": eta }),
    );
    d.add("ta", "Constant", json!({ "value": ta }));
    d.add("tb", "Constant", json!({ "value": tb / 2.0 }));
    d.add("srcIn", "TorqueSource", json!({}));
    d.add("Jin", "Inertia", json!({ "J": J_IN }));
    d.connect(&["ta.y", "srcIn.tau"]);
    d.connect(&["srcIn.flange", "Jin.flange", "diff.input"]);
    for side in ["left", "right"] {
        d.add(&format!("J_{side}"), "Inertia", json!({ "J": J_W }));
        d.add(&format!("src_{side}"), "TorqueSource", json!({}));
        d.connect(&["tb.y".to_string(), format!("src_{side}.tau")]);
        d.connect(&[
            format!("diff.{side}"),
            format!("J_{side}.flange"),
            format!("src_{side}.flange"),
        ]);
    }
    d.add(
        "housing",
        "HeatCapacitor",
        json!({ "C": 500.0, "T0": 300.0 }),
    );
    d.connect(&["diff.heat", "housing.port"]);
    d.log(&[
        "Jin.w",
        "J_left.w",
        "J_right.w",
        "diff.mesh_mode",
        "diff.tau_loss",
        "diff.power_loss",
        "diff.tau_input",
        "diff.tau_left",
        "diff.tau_right",
        "housing.T",
    ]);
    d.settings.stop_time = 1.0;
    let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("compile failed: {e}"));
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "run: {}", r.message);
    (m, r)
}

fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!(
        (a - b).abs() <= tol,
        "{what}: {a} vs expected {b} (tol {tol})"
    );
}

/// The mesh loss is in the mechanical audit as `diff.mesh`, it all reaches the heat port
/// (with no slip in the open coupling), and both audits close.
fn assert_mesh_audit(m: &mut Model, r: &SimResult) {
    let a = m.energy_audit();
    let mesh = a
        .losses
        .iter()
        .find(|(n, _)| n == "diff.mesh")
        .map(|l| l.1)
        .unwrap_or_else(|| panic!("no diff.mesh loss: {a:#?}"));
    assert!(mesh > 0.0, "{a:#?}");
    assert!(a.relative_residual.abs() < 1e-9, "{a:#?}");
    let stored = 500.0 * (last(r, "housing.T") - 300.0);
    close(stored, mesh, 1e-9 * mesh, "heat stored = mesh loss");
    assert!(a.heat.relative_residual.abs() < 1e-9, "{:#?}", a.heat);
}

#[test]
fn differential_efficiency_input_driving_loses_one_minus_eta_of_the_input_power() {
    // The input drives (power): the carrier receives eta·T_in, T_in = ta − J_in·a_in;
    // a_out = (g·η·ta + tb)/(2·J_w + η·g²·J_in).
    let (eta, ta, tb) = (0.9, 20.0, -6.0);
    let (mut m, r) = lossy_diff(ta, tb, eta);
    let a_out = (G * eta * ta + tb) / (2.0 * J_W + eta * G * G * J_IN);
    close(last(&r, "J_left.w"), a_out, 1e-9, "w_left(1 s)");
    close(last(&r, "J_right.w"), a_out, 1e-9, "w_right(1 s)");
    close(last(&r, "Jin.w"), G * a_out, 1e-9, "w_input(1 s)");
    assert_eq!(last(&r, "diff.mesh_mode"), 1.0);
    let t_in = ta - J_IN * G * a_out;
    close(last(&r, "diff.tau_input"), t_in, 1e-9, "input torque");
    // The outputs share g·η·T_in; loss = (1 − η)·P_in.
    close(
        last(&r, "diff.tau_left") + last(&r, "diff.tau_right"),
        G * eta * t_in,
        1e-9,
        "carrier torque",
    );
    let p_in = t_in * G * a_out;
    close(
        last(&r, "diff.power_loss"),
        (1.0 - eta) * p_in,
        1e-8,
        "loss power",
    );
    assert_mesh_audit(&mut m, &r);
}

#[test]
fn differential_efficiency_wheels_driving_lose_one_minus_eta_of_the_wheel_power() {
    // The wheels drive (coast: engine braking) against a load at the input: the input
    // receives η·S/g, S = tb − 2·J_w·a_out the torque the wheels put in;
    // a_out = (ta + η·tb/g)/(J_in·g + η·2·J_w/g).
    let (eta, ta, tb) = (0.8, -3.0, 30.0);
    let (mut m, r) = lossy_diff(ta, tb, eta);
    let a_out = (ta + eta * tb / G) / (J_IN * G + eta * 2.0 * J_W / G);
    assert!(a_out > 0.0);
    close(last(&r, "J_left.w"), a_out, 1e-9, "w_left(1 s)");
    close(last(&r, "Jin.w"), G * a_out, 1e-9, "w_input(1 s)");
    assert_eq!(last(&r, "diff.mesh_mode"), 1.0);
    let s = tb - 2.0 * J_W * a_out;
    let p_in = s * a_out;
    close(
        last(&r, "diff.power_loss"),
        (1.0 - eta) * p_in,
        1e-8,
        "loss power",
    );
    // Power delivered to the input: η of the wheels' power.
    let t_in = last(&r, "diff.tau_input");
    close(-t_in * G * a_out, eta * p_in, 1e-8, "power at the input");
    assert_mesh_audit(&mut m, &r);
}

#[test]
fn differential_efficiency_locks_when_driven_from_the_wheels_within_the_friction_band() {
    // Load ta = 10 at the input, drive tb at the wheels: at rest the final drive holds
    // while η·ta <= −tb/g <= ta/η (the LossyGear band). With η = 0.5, g = 2: stuck for
    // tb in [−40, −10]; outside, the input drives forward or the wheels drive backward.
    let (eta, ta) = (0.5, 10.0);
    for tb in [-10.5, -25.0, -39.5] {
        let (mut m, r) = lossy_diff(ta, tb, eta);
        assert!(
            r.get("diff.mesh_mode").unwrap().iter().all(|&x| x == 0.0),
            "tb = {tb}"
        );
        assert_eq!(last(&r, "Jin.w"), 0.0, "tb = {tb}");
        // The open outputs could counter-rotate about the held carrier; equal torques
        // leave them at rest (to round-off).
        assert!(last(&r, "J_left.w").abs() < 1e-12, "tb = {tb}");
        // Nothing moves: every energy is round-off (the relative residual is meaningless).
        let a = m.energy_audit();
        assert!(a.residual.abs() < 1e-9, "{a:#?}");
    }
    let tb = -8.0;
    let (_, r) = lossy_diff(ta, tb, eta);
    close(
        last(&r, "J_left.w"),
        (G * eta * ta + tb) / (2.0 * J_W + eta * G * G * J_IN),
        1e-9,
        "input drives",
    );
    assert_eq!(last(&r, "diff.mesh_mode"), 1.0);
    let tb = -50.0;
    let (mut m, r) = lossy_diff(ta, tb, eta);
    close(
        last(&r, "J_left.w"),
        (ta + eta * tb / G) / (J_IN * G + eta * 2.0 * J_W / G),
        1e-9,
        "wheels drive backward",
    );
    assert_eq!(last(&r, "diff.mesh_mode"), -1.0);
    assert_mesh_audit(&mut m, &r);
}

#[test]
fn differential_efficiency_one_is_bit_identical_to_no_efficiency() {
    let base = json!({ "type": "clutch_pack", "clutch_preload": 20.0 });
    let mut with = base.clone();
    with["efficiency"] = json!(1.0);
    let a = split_mu(base, 200.0, 1.0);
    let b = split_mu(with, 200.0, 1.0);
    assert_eq!(a.time, b.time);
    for n in LOG {
        assert_eq!(a.get(n), b.get(n), "{n}");
    }
}

#[test]
fn differential_efficiency_in_a_split_mu_launch_closes_the_audit_with_slip_and_mesh_heat() {
    // Clutch-pack coupling slipping on split mu, mesh efficiency 0.95: the heat port
    // receives the mesh loss plus the coupling's slip work, both in the mechanical audit.
    let mut d = Diagram::new("split_mu_lossy");
    d.add(
        "diff",
        "Differential",
        json!({ "type": "clutch_pack", "clutch_preload": 20.0, "efficiency": 0.95 }),
    );
    d.add("tq", "Constant", json!({ "value": 150.0 }));
    d.add("src", "TorqueSource", json!({}));
    d.add("shaft", "Inertia", json!({ "J": 0.05 }));
    d.add("ground", "Fixed", json!({}));
    d.add("wheel", "Inertia", json!({ "J": 1.0 }));
    d.add("spin", "Damper", json!({ "d": 2.0 }));
    d.add(
        "housing",
        "HeatCapacitor",
        json!({ "C": 300.0, "T0": 300.0 }),
    );
    d.connect(&["tq.y", "src.tau"]);
    d.connect(&["src.flange", "shaft.flange", "diff.input"]);
    d.connect(&["diff.left", "ground.flange", "spin.flange_b"]);
    d.connect(&["diff.right", "wheel.flange", "spin.flange_a"]);
    d.connect(&["diff.heat", "housing.port"]);
    d.log(&["diff.mode", "diff.power_loss", "housing.T", "wheel.w"]);
    d.settings.stop_time = 1.0;
    let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("compile failed: {e}"));
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    assert_ne!(last(&r, "diff.mode"), 0.0, "the coupling slips");
    let a = m.energy_audit();
    let loss = |n: &str| a.losses.iter().find(|(x, _)| x == n).map_or(0.0, |l| l.1);
    let (mesh, slip) = (loss("diff.mesh"), loss("diff"));
    assert!(mesh > 0.0 && slip > 0.0, "{a:#?}");
    let stored = 300.0 * (last(&r, "housing.T") - 300.0);
    close(
        stored,
        mesh + slip,
        1e-9 * (mesh + slip),
        "heat = mesh + slip loss",
    );
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
    assert!(a.heat.relative_residual.abs() < 1e-9, "{:#?}", a.heat);
}

#[test]
fn differential_efficiency_in_the_complete_car_loses_speed_locks_at_rest_and_closes_the_audit() {
    // The complete RWD car (launch through four gears, braking to rest with ABS) with a
    // 95 % final drive: the run completes, the car is slower than without losses at
    // every instant of the drive, the final drive is stuck once the car has stopped, and
    // the audit closes with the mesh loss in it.
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../models/netlists/vehicle_complete_car.json");
    let base = drivelink_netlist::load_file(&path).expect("netlist");
    let mut lossy = base.clone();
    for b in lossy.blocks.iter_mut().filter(|b| b.name == "diff") {
        b.params.insert("efficiency".into(), json!(0.95));
    }
    lossy.log.push("diff.mesh_mode".into());
    let ideal = run(&base);
    let mut m = compile(&lossy, &registry()).expect("compile");
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    for t in [3.0, 6.0, 12.0, 18.0, 24.0] {
        let (v, v0) = (
            r.value_at("body.v", t).unwrap(),
            ideal.value_at("body.v", t).unwrap(),
        );
        assert!(v < v0, "t = {t}: {v} m/s with losses, {v0} m/s without");
    }
    assert!(last(&r, "body.v").abs() < 1e-12, "at rest");
    assert_eq!(last(&r, "diff.mesh_mode"), 0.0, "final drive stuck at rest");
    let a = m.energy_audit();
    let mesh = a
        .losses
        .iter()
        .find(|(n, _)| n == "diff.mesh")
        .map_or(0.0, |l| l.1);
    assert!(mesh > 0.0, "{a:#?}");
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
}

#[test]
fn differential_efficiency_equals_ideal_gear_efficiency_with_symmetric_outputs() {
    // With equal outputs the open differential is a gear w_in = g·w_out to 2·J_w: the
    // same trajectories as IdealGear {ratio g, efficiency η}, both power-flow directions
    // and the stuck band.
    for (ta, tb, eta) in [(20.0, -6.0, 0.9), (-3.0, 30.0, 0.8), (10.0, -25.0, 0.5)] {
        let (_, diff) = lossy_diff(ta, tb, eta);
        let mut d = Diagram::new("gear");
        d.add(
            "gear",
            "IdealGear",
            json!({ "ratio": G, "efficiency": eta }),
        );
        d.add("ta", "Constant", json!({ "value": ta }));
        d.add("tb", "Constant", json!({ "value": tb }));
        d.add("srcIn", "TorqueSource", json!({}));
        d.add("srcOut", "TorqueSource", json!({}));
        d.add("Jin", "Inertia", json!({ "J": J_IN }));
        d.add("Jout", "Inertia", json!({ "J": 2.0 * J_W }));
        d.connect(&["ta.y", "srcIn.tau"]);
        d.connect(&["tb.y", "srcOut.tau"]);
        d.connect(&["srcIn.flange", "Jin.flange", "gear.flange_a"]);
        d.connect(&["gear.flange_b", "Jout.flange", "srcOut.flange"]);
        d.log(&["Jin.w", "Jout.w", "gear.mode", "gear.power_loss"]);
        d.settings.stop_time = 1.0;
        let gear = run(&d);
        let what = format!("ta {ta}, tb {tb}, eta {eta}");
        close(last(&diff, "Jin.w"), last(&gear, "Jin.w"), 1e-10, &what);
        close(last(&diff, "J_left.w"), last(&gear, "Jout.w"), 1e-10, &what);
        close(
            last(&diff, "diff.power_loss"),
            last(&gear, "gear.power_loss"),
            1e-9,
            &what,
        );
        assert_eq!(
            last(&diff, "diff.mesh_mode"),
            last(&gear, "gear.mode"),
            "{what}"
        );
    }
}
