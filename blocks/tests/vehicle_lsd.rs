//! Limited-slip differentials choose power or coast settings from the sign of the input
//! torque (Vehicle Physics Pro: "when the input receives forward torque (power) / reverse
//! torque (coast)"), never from the sign of the input power.

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, RunStatus, SimResult};
use serde_json::{json, Value};

fn run(d: &Diagram) -> SimResult {
    let mut m = compile(d, &registry()).unwrap_or_else(|e| panic!("compile failed: {e}"));
    let r = m.run();
    assert_ne!(r.status, RunStatus::Failed, "run failed: {}", r.message);
    r
}

fn last(r: &SimResult, n: &str) -> f64 {
    r.last(n).unwrap_or_else(|| panic!("no {n}"))
}

const G: f64 = 3.7;
const R: f64 = 0.3;

/// A 1200 kg car held on its front brakes (1000 N·m each, far above what is needed), rear
/// right wheel lifted (no normal load), `torque` N·m on the differential input from rest.
fn held_on_front_brakes(diff: Value, torque: f64) -> SimResult {
    let mut d = Diagram::new("held");
    d.add("body", "Mass", json!({ "m": 1200.0 }));
    d.add("diff", "Differential", diff);
    d.add("tq", "Constant", json!({ "value": torque }));
    d.add("src", "TorqueSource", json!({}));
    d.add("shaft", "Inertia", json!({ "J": 0.05 }));
    d.add("load", "Constant", json!({ "value": 3000.0 }));
    d.add("lifted", "Constant", json!({ "value": 0.0 }));
    d.add("hold", "Constant", json!({ "value": 1000.0 }));
    d.connect(&["tq.y", "src.tau"]);
    d.connect(&["src.flange", "shaft.flange", "diff.input"]);
    for w in ["fl", "fr", "rl", "rr"] {
        d.add(&format!("wheel_{w}"), "Inertia", json!({ "J": 1.0 }));
        d.add(&format!("tire_{w}"), "Tire", json!({ "radius": R }));
        d.connect(&[format!("tire_{w}.body"), "body.flange".to_string()]);
        let hub = vec![format!("wheel_{w}.flange"), format!("tire_{w}.hub")];
        let mut hub = hub;
        match w {
            "fl" | "fr" => {
                d.add(
                    &format!("brake_{w}"),
                    "Brake",
                    json!({ "max_torque": 1.0, "peak": 1.0 }),
                );
                hub.push(format!("brake_{w}.flange"));
                d.connect(&["hold.y".to_string(), format!("brake_{w}.f")]);
            }
            "rl" => hub.push("diff.left".to_string()),
            _ => hub.push("diff.right".to_string()),
        }
        d.connect(&hub);
    }
    d.connect(&[
        "load.y",
        "tire_fl.normal_force",
        "tire_fr.normal_force",
        "tire_rl.normal_force",
    ]);
    d.connect(&["lifted.y", "tire_rr.normal_force"]);
    d.log(&[
        "body.v",
        "diff.w_left",
        "diff.w_right",
        "diff.mode",
        "diff.power_mode",
        "diff.tau_left",
        "diff.tau_right",
        "diff.transfer",
        "diff.tau_input",
        "brake_fl.tau",
        "brake_fr.tau",
        "brake_fl.mode",
        "brake_fr.mode",
    ]);
    d.settings.stop_time = 1.0;
    let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("compile failed: {e}"));
    m.run()
}

fn assert_held_and_locked(name: &str, r: &SimResult, torque: f64) {
    assert_ne!(r.status, RunStatus::Failed, "{name}: {}", r.message);
    println!(
        "{name}: {} at {} s, {} events, lifted wheel {:.3e} rad/s, transfer {:.6} N·m, front brakes {:.6} + {:.6} N·m",
        r.status.as_str(),
        r.end_time,
        r.events.len(),
        last(r, "diff.w_right"),
        last(r, "diff.transfer"),
        last(r, "brake_fl.tau"),
        last(r, "brake_fr.tau"),
    );
    assert_eq!(r.end_time, 1.0);
    // Locked coupling, power settings, everything at rest.
    assert_eq!(last(r, "diff.mode"), 0.0, "{name}: coupling not locked");
    assert_eq!(last(r, "diff.power_mode"), 1.0);
    for v in ["body.v", "diff.w_left", "diff.w_right"] {
        assert!(last(r, v).abs() < 1e-9, "{name}: {v} = {}", last(r, v));
    }
    // The lifted wheel takes no torque: the coupling moves its whole half g·T/2 to the
    // grounded wheel, and the front brakes hold the whole g·T (equal radii), half each.
    let half = G * torque / 2.0;
    let tol = 1e-6 * half;
    assert!((last(r, "diff.tau_right")).abs() < tol, "{name}");
    assert!(
        (last(r, "diff.tau_left") - 2.0 * half).abs() < tol,
        "{name}"
    );
    assert!(
        (last(r, "diff.transfer").abs() - half).abs() < tol,
        "{name}"
    );
    let held = last(r, "brake_fl.tau") + last(r, "brake_fr.tau");
    assert!(
        (held.abs() - 2.0 * half).abs() < tol,
        "{name}: brakes hold {held} N·m, applied g·T = {}",
        2.0 * half
    );
    assert!(
        (last(r, "brake_fl.tau") - last(r, "brake_fr.tau")).abs() < tol,
        "{name}: the symmetric front brakes share the load equally"
    );
    assert_eq!(last(r, "brake_fl.mode"), 0.0);
    // No chattering: a handful of events (the initial locks and the relock after the
    // torque-sensing lag lets the lifted wheel move for a few milliseconds).
    assert!(r.events.len() < 30, "{name}: {} events", r.events.len());
}

#[test]
fn lsd_on_front_brakes_with_lifted_wheel_stays_locked() {
    // Default clutch pack: capacity 50 + 0.4·g·100·1/tan 45° = 198 N·m >= g·T/2 = 185 N·m.
    let r = held_on_front_brakes(json!({ "type": "clutch_pack" }), 100.0);
    assert_held_and_locked("clutch_pack", &r, 100.0);
    // Torque bias 4:1 in power, open (1:1) in coast, 100 N·m preload: in power it holds
    // 100 + g·100·3/10 = 211 N·m >= 185 N·m; the coast settings (100 N·m) would not.
    let r = held_on_front_brakes(
        json!({ "type": "torque_bias", "torque_preload": 100.0, "power_ratio": 4, "coast_ratio": 1 }),
        100.0,
    );
    assert_held_and_locked("torque_bias", &r, 100.0);
}

/// Split-mu launch (rear axle of a 1200 kg car, 3000 N per wheel, left tire on ice, mu 0.1)
/// driven forwards (`sign` = 1) or backwards in reverse gear (`sign` = −1) by a speed-limited
/// motor `sign·T0·(1 − |w|/600 rad/s)`.
fn split_mu(diff: Value, sign: f64, stop: f64) -> SimResult {
    let t0 = 200.0;
    let mut d = Diagram::new("split_mu");
    d.add("body", "Mass", json!({ "m": 1200.0 }));
    d.add("diff", "Differential", diff);
    d.add("speed", "MotionSensor", json!({}));
    d.add("droop", "Gain", json!({ "k": -t0 / 600.0 }));
    d.add("t0", "Constant", json!({ "value": sign * t0 }));
    d.add("sum", "Sum", json!({ "signs": "++" }));
    let (lo, hi) = if sign > 0.0 { (0.0, t0) } else { (-t0, 0.0) };
    d.add("tq", "Saturation", json!({ "lower": lo, "upper": hi }));
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
        d.add(&format!("tire_{side}"), "Tire", json!({ "radius": R, "extremum_slip": 1.0, "extremum_value": 1.0, "asymptote_slip": 5.0, "asymptote_value": 0.8 }));
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
    d.log(&[
        "body.v",
        "diff.mode",
        "diff.power_mode",
        "diff.tau_left",
        "diff.tau_right",
        "diff.tau_input",
        "diff.w_rel",
    ]);
    d.settings.stop_time = stop;
    d.settings.max_step = 0.01;
    run(&d)
}

#[test]
fn lsd_reversing_on_split_mu_uses_coast_settings() {
    let one_way = json!({ "type": "clutch_pack", "clutch_preload": 0.0, "clutch_friction": 0.2, "power_angle": "45 deg", "coast_angle": "90 deg" });
    let torsen_1way =
        json!({ "type": "torque_bias", "torque_preload": 0.0, "power_ratio": 4, "coast_ratio": 1 });
    // Power ratio of the clutch pack while slipping: (1 + x)/(1 − x), x = 2·0.2/tan 45° = 0.4.
    for (name, p, power_ratio) in [
        ("1-way clutch pack", one_way, 1.4 / 0.6),
        ("torque bias 4:1 / 1:1", torsen_1way, 4.0),
    ] {
        // Forwards (power): the asphalt (right) wheel gets the power ratio times the ice one.
        let f = split_mu(p.clone(), 1.0, 2.0);
        let ratio_f = last(&f, "diff.tau_right") / last(&f, "diff.tau_left");
        // Reverse gear (coast: the input receives reverse torque while the car moves
        // backwards, negative input power is never looked at): open, exactly equal torques.
        let b = split_mu(p, -1.0, 2.0);
        let ratio_b = last(&b, "diff.tau_right") / last(&b, "diff.tau_left");
        println!(
            "{name}: forwards tau_R/tau_L = {ratio_f:.6} (v = {:.3} m/s), reverse {ratio_b:.6} (v = {:.3} m/s)",
            last(&f, "body.v"),
            last(&b, "body.v")
        );
        assert_eq!(last(&f, "diff.power_mode"), 1.0, "{name}");
        assert!(
            (ratio_f - power_ratio).abs() < 5e-3 * power_ratio,
            "{name}: forwards {ratio_f} vs {power_ratio}"
        );
        assert!(last(&b, "body.v") < -0.5, "{name}: the car should reverse");
        assert!(last(&b, "diff.tau_input") < 0.0);
        assert_eq!(last(&b, "diff.power_mode"), 0.0, "{name}: reverse is coast");
        assert_eq!(
            last(&b, "diff.mode"),
            2.0,
            "{name}: coast settings are open"
        );
        assert!((ratio_b - 1.0).abs() < 1e-12, "{name}: reverse {ratio_b}");
        // Every sample of the reverse run: equal output torques (the coupling never engaged).
        let (tl, tr) = (
            b.get("diff.tau_left").unwrap(),
            b.get("diff.tau_right").unwrap(),
        );
        for k in 0..tl.len() {
            assert!(
                (tl[k] - tr[k]).abs() <= 1e-12 * tl[k].abs().max(1.0),
                "t = {}",
                b.time[k]
            );
        }
    }
}

#[test]
fn lsd_power_coast_follows_the_input_torque_sign_at_zero_speed() {
    // Held on the brakes (w_input = 0): 100 N·m forward torque is power, −100 N·m is coast,
    // although the input power is zero in both cases.
    for (torque, mode) in [(100.0, 1.0), (-100.0, 0.0)] {
        let r = held_on_front_brakes(json!({ "type": "clutch_pack" }), torque);
        assert_ne!(r.status, RunStatus::Failed, "{}", r.message);
        let pm = r.get("diff.power_mode").unwrap();
        // After the first instant (where the sensed torque is still 0, counted as power),
        // the mode is constant: no flipping.
        let flips = pm.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(flips <= 1, "torque {torque}: {flips} power/coast flips");
        assert_eq!(last(&r, "diff.power_mode"), mode, "torque {torque}");
    }
    // In coast the default 80° ramp gives about 50 + 0.4·g·100·tan 10° = 76 N·m < 185 N·m:
    // the lifted wheel turns backwards, driven by g·T_in/2 − capacity(T_in) (T_in is a little
    // below 100 N·m: the input shaft accelerates with the wheel).
    let r = held_on_front_brakes(json!({ "type": "clutch_pack" }), -100.0);
    let t_in = last(&r, "diff.tau_input");
    let cap = 50.0 + 0.4 * G * t_in.abs() / 80f64.to_radians().tan();
    let tr = last(&r, "diff.tau_right");
    assert!(
        (tr + (G * t_in.abs() / 2.0 - cap)).abs() < 1e-6 * cap,
        "lifted wheel torque {tr}, T_in {t_in}, capacity {cap}"
    );
    assert!(last(&r, "diff.w_right") < -10.0);
}
