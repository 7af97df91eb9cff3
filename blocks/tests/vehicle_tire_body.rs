//! Tire friction curve and contact, vehicle body drag and load transfer.

use drivelink_blocks::registry;
use drivelink_blocks::vehicle::friction_curve;
use drivelink_core::{compile, Diagram, RunStatus, SimResult};
use serde_json::json;

fn run(d: &Diagram) -> SimResult {
    let mut m = compile(d, &registry()).unwrap_or_else(|e| panic!("compile failed: {e}"));
    let r = m.run();
    assert_ne!(r.status, RunStatus::Failed, "run failed: {}", r.message);
    r
}

const C: (f64, f64, f64, f64) = (0.4, 1.0, 0.8, 0.5);

fn c(s: f64) -> f64 {
    friction_curve(s, C.0, C.1, C.2, C.3)
}

#[test]
fn curve_values_slopes_and_symmetry() {
    assert_eq!(c(0.0), 0.0);
    assert!((c(0.4) - 1.0).abs() < 1e-15);
    assert!((c(0.8) - 0.5).abs() < 1e-15);
    assert_eq!(c(3.0), 0.5);
    // Hermite values: a = 0.5 on the first piece: ye·(−1/8 + 1/4 + 1/2) = 0.625.
    assert!((c(0.2) - 0.625).abs() < 1e-15);
    // Midway on the second piece: ye + (ya − ye)·0.5 = 0.75.
    assert!((c(0.6) - 0.75).abs() < 1e-15);
    // Odd.
    for s in [0.1, 0.3, 0.5, 0.7, 2.0] {
        assert_eq!(c(-s), -c(s));
    }
    // Zero slope at the extremum and the asymptote (both sides), initial slope ye/xe.
    let h = 1e-6;
    for x in [0.4, 0.8] {
        let left = (c(x) - c(x - h)) / h;
        let right = (c(x + h) - c(x)) / h;
        assert!(
            left.abs() < 1e-4 && right.abs() < 1e-4,
            "slope at {x}: {left} {right}"
        );
    }
    assert!(((c(h) - c(0.0)) / h - 1.0 / 0.4).abs() < 1e-4);
    // Monotone rising then falling.
    assert!(c(0.1) < c(0.2) && c(0.2) < c(0.3) && c(0.5) > c(0.6) && c(0.6) > c(0.7));
}

/// A wheel driven by `drive` N·m on a 300 kg mass, normal load 3000 N.
fn drive(drive: f64, stiffness: f64, mu: Option<f64>, stop: f64) -> SimResult {
    let mut d = Diagram::new("tire");
    d.add("body", "Mass", json!({ "m": 300.0 }));
    d.add("wheel", "Inertia", json!({ "J": 1.0 }));
    d.add(
        "tire",
        "Tire",
        json!({ "radius": 0.3, "stiffness": stiffness }),
    );
    d.add("load", "Constant", json!({ "value": 3000.0 }));
    d.add("tq", "Constant", json!({ "value": drive }));
    d.add("src", "TorqueSource", json!({}));
    d.connect(&["body.flange", "tire.body"]);
    d.connect(&["wheel.flange", "tire.hub", "src.flange"]);
    d.connect(&["load.y", "tire.normal_force"]);
    d.connect(&["tq.y", "src.tau"]);
    if let Some(m) = mu {
        d.add("mu", "Constant", json!({ "value": m }));
        d.connect(&["mu.y", "tire.mu_scale"]);
    }
    d.log(&[
        "body.v",
        "wheel.w",
        "tire.slip",
        "tire.force",
        "tire.mode",
        "tire.sticky",
    ]);
    d.settings.stop_time = stop;
    // The slip is a small difference of two speeds: resolve it well below the force tolerance.
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-10;
    run(&d)
}

#[test]
fn rolling_tire_follows_the_curve_with_slip_not_zero_slip_up_to_the_peak() {
    // Steady driving with 300 N·m: momentum gives F = T·m/(r·(m + J/r²)) = 959 N whatever
    // the tire; the tire transmits it through the slip where curve(slip)·3000 N = F (on the
    // rising branch, about 0.11 m/s), not at zero slip.
    let r = drive(300.0, 1.0, None, 1.0);
    let f = 300.0 / 0.3 * 300.0 / (300.0 + 1.0 / 0.09);
    let force = r.last("tire.force").unwrap();
    assert!((force - f).abs() < 1e-6 * f, "{force} vs {f}");
    // Invert the curve on its rising branch by bisection (independent of the block).
    let (mut lo, mut hi) = (0.0, C.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if c(mid) * 3000.0 < f {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let slip = r.last("tire.slip").unwrap();
    println!("rolling at 959 N: slip {slip:.6} m/s (curve inverse {lo:.6})");
    assert!(
        (slip - lo).abs() < 1e-6,
        "slip {slip} vs curve inverse {lo}"
    );
    assert_eq!(r.last("tire.mode"), Some(1.0), "a driving slip");
    // At every sample above the low-speed regime the force is the curve of the slip.
    let (sl, fo, st) = (
        r.get("tire.slip").unwrap(),
        r.get("tire.force").unwrap(),
        r.get("tire.sticky").unwrap(),
    );
    let mut checked = 0;
    for k in 0..sl.len() {
        if st[k] == 0.0 {
            checked += 1;
            let law = c(sl[k]) * 3000.0;
            assert!(
                (fo[k] - law).abs() <= 1e-9 * 3000.0,
                "t = {}: force {} vs curve {law}",
                r.time[k],
                fo[k]
            );
        }
    }
    assert!(checked > 10, "{checked} samples above the low-speed regime");
    // 1200 N·m needs 3836 N > 3000 N: the wheel spins up, force on the asymptote.
    let r = drive(1200.0, 1.0, None, 1.0);
    assert_eq!(r.last("tire.mode"), Some(1.0));
    assert!(r.last("tire.slip").unwrap() > 0.8);
    assert!((r.last("tire.force").unwrap() - 0.5 * 3000.0).abs() < 1e-6);
    // mu_scale scales the grip: 300 N·m on mu 0.2 (limit 600 N) spins.
    let r = drive(300.0, 1.0, Some(0.2), 1.0);
    assert_eq!(r.last("tire.mode"), Some(1.0));
    assert!((r.last("tire.force").unwrap() - 0.2 * 0.5 * 3000.0).abs() < 1e-6);
    // Stiffness 0: no force at all.
    let r = drive(100.0, 0.0, None, 1.0);
    assert_eq!(r.last("tire.force"), Some(0.0));
    assert_eq!(r.last("body.v"), Some(0.0));
    assert_eq!(r.last("tire.mode"), Some(2.0));
}

#[test]
fn body_drag_grade_and_load_transfer() {
    // Coast-down with drag only: m·dv/dt = −k·v² -> v = v0/(1 + k·v0·t/m).
    let (m, cda, rho, v0) = (1000.0, 0.6, 1.2, 30.0);
    let mut d = Diagram::new("coast");
    d.add("car", "VehicleBody", json!({ "m": m, "drag_area": cda, "air_density": rho, "v0": v0, "a": 1.2, "b": 1.5, "h": 0.5 }));
    d.log(&[
        "car.v",
        "car.drag",
        "car.normal_front",
        "car.normal_rear",
        "car.a_lagged",
        "car.a",
    ]);
    d.settings.stop_time = 10.0;
    d.settings.rtol = 1e-9;
    d.settings.atol = 1e-9;
    let r = run(&d);
    let k = 0.5 * rho * cda;
    let v = v0 / (1.0 + k * v0 * 10.0 / m);
    assert!(
        (r.last("car.v").unwrap() - v).abs() < 1e-6,
        "{:?} vs {v}",
        r.last("car.v")
    );
    // Quasi-steady: m·a_lag = −drag, so the pitch term cancels: loads = static split.
    let g = 9.80665;
    let nf = r.last("car.normal_front").unwrap();
    let nr = r.last("car.normal_rear").unwrap();
    assert!((nf + nr - m * g).abs() < 1e-6 * m * g);
    assert!((nf - 1.5 * m * g / 2.7).abs() < 0.5, "front {nf}");
    // Braking transfer: a car decelerating at 5 m/s² (force source) loads the front axle.
    let mut d = Diagram::new("brake");
    d.add(
        "car",
        "VehicleBody",
        json!({ "m": m, "drag_area": 0.0, "v0": 30.0, "a": 1.2, "b": 1.5, "h": 0.5 }),
    );
    d.add("f", "Constant", json!({ "value": -5.0 * m }));
    d.add("src", "ForceSource", json!({}));
    d.connect(&["f.y", "src.f"]);
    d.connect(&["src.flange", "car.body"]);
    d.log(&["car.normal_front", "car.normal_rear", "car.a_lagged"]);
    d.settings.stop_time = 1.0;
    let r = run(&d);
    let nf = r.last("car.normal_front").unwrap();
    let expected = (1.5 * m * g + 0.5 * m * 5.0) / 2.7;
    assert!(
        (nf - expected).abs() < 1e-3 * expected,
        "front {nf} vs {expected}"
    );
    // Grade: at rest on 10° with no force, the body rolls back at g·sin θ.
    let mut d = Diagram::new("grade");
    d.add(
        "car",
        "VehicleBody",
        json!({ "m": m, "grade": "10 deg", "drag_area": 0.0 }),
    );
    d.log(&["car.v"]);
    d.settings.stop_time = 1.0;
    let r = run(&d);
    assert!((r.last("car.v").unwrap() + g * (10.0f64).to_radians().sin()).abs() < 1e-9);
}

#[test]
fn car_driven_then_braked_comes_exactly_to_rest_without_chatter() {
    let mut d = Diagram::new("drive_brake");
    d.add(
        "car",
        "VehicleBody",
        json!({ "m": 1200.0, "drag_area": 0.7 }),
    );
    d.add("wheel", "Inertia", json!({ "J": 2.0 }));
    d.add("tire", "Tire", json!({ "radius": 0.3 }));
    d.add(
        "tq",
        "SignalBuilder",
        json!({ "points": [[0, 800], [3, 800], [3.01, 0]] }),
    );
    d.add("src", "TorqueSource", json!({}));
    d.add(
        "bt",
        "SignalBuilder",
        json!({ "points": [[0, 0], [4, 0], [4.5, 1500]] }),
    );
    d.add("brake", "Brake", json!({ "max_torque": 1.0, "peak": 1.0 }));
    d.connect(&["car.body", "tire.body"]);
    d.connect(&["wheel.flange", "tire.hub", "src.flange", "brake.flange"]);
    d.connect(&["car.normal_rear", "tire.normal_force"]);
    d.connect(&["tq.y", "src.tau"]);
    d.connect(&["bt.y", "brake.f"]);
    d.log(&["car.v", "car.s", "tire.mode", "brake.mode"]);
    d.settings.stop_time = 20.0;
    let r = run(&d);
    assert!(r.get("car.v").unwrap().iter().cloned().fold(0.0, f64::max) > 5.0);
    assert!(r.last("car.v").unwrap().abs() < 1e-12);
    let late: Vec<_> = r.events.iter().filter(|e| e.time > 10.0).collect();
    assert!(late.is_empty(), "events at standstill: {late:?}");
    assert!(r.events.len() < 30, "{:?}", r.events);
    let s = r.value_at("car.s", 12.0).unwrap();
    assert!((r.last("car.s").unwrap() - s).abs() < 1e-9, "creep");
}

#[test]
fn invalid_tire_and_body_parameters_are_errors() {
    let reg = registry();
    for (ty, p, name) in [
        ("Tire", json!({ "radius": 0 }), "radius"),
        (
            "Tire",
            json!({ "extremum_slip": 1.0, "asymptote_slip": 0.5 }),
            "asymptote_slip",
        ),
        ("Tire", json!({ "stiffness": -1 }), "stiffness"),
        ("VehicleBody", json!({ "m": 0 }), "m"),
        ("VehicleBody", json!({ "a": 0, "b": 0 }), "b"),
        ("VehicleBody", json!({ "grade": 2.0 }), "grade"),
    ] {
        let mut d = Diagram::new("bad");
        d.add("x", ty, p);
        let e = compile(&d, &reg)
            .err()
            .unwrap_or_else(|| panic!("{ty} {name}: accepted"));
        assert!(
            e.to_string().contains(name),
            "{ty}: error does not name {name}: {e}"
        );
    }
}

/// A 400 kg quarter car on a slope of `grade` (rad, positive uphill; gravity as a force
/// source, normal load m·g·cos θ), moving at `v0` with a free-rolling wheel (J = 1.2), braked
/// by `brake` N·m from 0.5 s.
fn slope_stop(grade: f64, v0: f64, brake: f64, stop: f64) -> SimResult {
    let (m, g, r) = (400.0, 9.81, 0.3);
    let mut d = Diagram::new("slope");
    d.add("body", "Mass", json!({ "m": m, "v0": v0 }));
    d.add("wheel", "Inertia", json!({ "J": 1.2, "w0": v0 / r }));
    d.add("tire", "Tire", json!({ "radius": r, "extremum_slip": 1.0, "extremum_value": 1.0, "asymptote_slip": 8.0, "asymptote_value": 0.6 }));
    d.add("load", "Constant", json!({ "value": m * g * grade.cos() }));
    d.add("pull", "Constant", json!({ "value": -m * g * grade.sin() }));
    d.add("gravity", "ForceSource", json!({}));
    d.add(
        "bt",
        "Step",
        json!({ "time": 0.5, "before": 0.0, "after": brake }),
    );
    d.add("brake", "Brake", json!({ "max_torque": 1.0, "peak": 1.0 }));
    d.connect(&["body.flange", "tire.body", "gravity.flange"]);
    d.connect(&["wheel.flange", "tire.hub", "brake.flange"]);
    d.connect(&["load.y", "tire.normal_force"]);
    d.connect(&["pull.y", "gravity.f"]);
    d.connect(&["bt.y", "brake.f"]);
    d.log(&[
        "body.v",
        "body.s",
        "wheel.w",
        "tire.force",
        "tire.mode",
        "tire.sticky",
        "tire.slip",
        "brake.mode",
        "brake.tau",
    ]);
    d.settings.stop_time = stop;
    run(&d)
}

#[test]
fn tire_braked_to_rest_on_a_slope_stays_put_without_creep() {
    // 10° downhill (grade −10°, rolling forwards = downhill): pull m·g·sin 10° = 681 N,
    // peak grip m·g·cos 10° = 3864 N, brake 3000 N·m > r·(pull + grip) -> the wheel locks,
    // the car skids to rest and is then held by the stuck contact.
    let grade = -10f64.to_radians();
    let r = slope_stop(grade, 5.0, 3000.0, 4.0);
    let v = r.get("body.v").unwrap();
    let k = v
        .iter()
        .position(|&x| x.abs() <= 1e-12)
        .expect("the car does not reach rest");
    let t_rest = r.time[k];
    let s_rest = r.value_at("body.s", t_rest).unwrap();
    println!(
        "slope stop: rest at {t_rest:.4} s after {s_rest:.4} m; {} events",
        r.events.len()
    );
    // Exactly at rest from then on: no creep, no chatter, no events.
    for (t, x) in r.time[k..].iter().zip(&v[k..]) {
        assert!(x.abs() <= 1e-12, "t = {t}: v = {x}");
    }
    assert!((r.last("body.s").unwrap() - s_rest).abs() < 1e-12, "creep");
    assert!(
        r.events.iter().all(|e| e.time <= t_rest + 1e-9),
        "{:?}",
        r.events
    );
    assert_eq!(r.last("tire.mode"), Some(0.0));
    assert_eq!(r.last("tire.sticky"), Some(1.0));
    assert_eq!(r.last("brake.mode"), Some(0.0));
    // Static balance: the stuck tire holds the pull exactly, the brake holds the wheel.
    let pull = -400.0 * 9.81 * grade.sin();
    assert!(
        (r.last("tire.force").unwrap() + pull).abs() < 1e-9 * pull,
        "{:?}",
        r.last("tire.force")
    );
    assert!((r.last("brake.tau").unwrap().abs() - 0.3 * pull).abs() < 1e-9 * pull);
    // The final skid below extremum_slip (1 m/s, locked wheel) is at the peak force, so the
    // last metre per second takes (1 m/s)/(g·(cos θ·1.0 − sin|θ|)) = 0.1218 s exactly.
    let a = 9.81 * (grade.cos() - grade.sin().abs());
    let t1 = r
        .time
        .iter()
        .zip(v)
        .rev()
        .find(|(_, &x)| x >= 1.0)
        .map(|(t, _)| *t)
        .unwrap();
    assert!(
        (t_rest - t1 - 1.0 / a).abs() < 0.01,
        "{} vs {}",
        t_rest - t1,
        1.0 / a
    );
}

#[test]
fn tire_force_is_continuous_through_zero_slip_at_speed() {
    // At 20 m/s the drive torque ramps from +300 to −300 N·m: the slip changes sign once,
    // through zero, and the force follows the curve all the way (no stiction at speed).
    let mut d = Diagram::new("through_zero");
    d.add("body", "Mass", json!({ "m": 300.0, "v0": 20.0 }));
    d.add("wheel", "Inertia", json!({ "J": 1.0, "w0": 20.0 / 0.3 }));
    d.add("tire", "Tire", json!({ "radius": 0.3 }));
    d.add("load", "Constant", json!({ "value": 3000.0 }));
    d.add(
        "tq",
        "SignalBuilder",
        json!({ "points": [[0, 300], [0.2, 300], [1.2, -300], [2, -300]] }),
    );
    d.add("src", "TorqueSource", json!({}));
    d.connect(&["body.flange", "tire.body"]);
    d.connect(&["wheel.flange", "tire.hub", "src.flange"]);
    d.connect(&["load.y", "tire.normal_force"]);
    d.connect(&["tq.y", "src.tau"]);
    d.log(&["tire.slip", "tire.force", "tire.mode", "tire.sticky"]);
    d.settings.stop_time = 2.0;
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-10;
    // Record at the solver's steps, which crowd where the force changes fast.
    d.settings.output_points = None;
    let r = run(&d);
    let (sl, fo) = (r.get("tire.slip").unwrap(), r.get("tire.force").unwrap());
    for k in 0..sl.len() {
        assert_eq!(r.get("tire.sticky").unwrap()[k], 0.0);
        let law = c(sl[k]) * 3000.0;
        assert!(
            (fo[k] - law).abs() <= 1e-9 * 3000.0,
            "t = {}: {} vs {law}",
            r.time[k],
            fo[k]
        );
    }
    assert!(r.value_at("tire.slip", 0.15).unwrap() > 0.0 && *sl.last().unwrap() < 0.0);
    // One sign change of the slip, at one located event (driving -> braking slip).
    let flips = sl.windows(2).filter(|w| w[0] > 0.0 && w[1] <= 0.0).count();
    assert_eq!(flips, 1);
    let ev: Vec<_> = r
        .events
        .iter()
        .filter(|e| e.block == "tire" && e.time > 0.0)
        .collect();
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0].kind, drivelink_core::EventTag::ZeroCrossing);
    // At the event instant (recorded twice, left and right) the force does not jump.
    let k = r
        .time
        .iter()
        .position(|&t| t == ev[0].time)
        .expect("event instant recorded");
    assert_eq!(r.time[k + 1], r.time[k]);
    assert!(
        (fo[k + 1] - fo[k]).abs() < 1e-9 * 3000.0,
        "{} vs {}",
        fo[k],
        fo[k + 1]
    );
    // The largest force step between samples stays far below the peak (3000 N): no jump.
    let max_step = fo
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .fold(0.0, f64::max);
    assert!(max_step < 100.0, "force step {max_step} N");
}

/// Regression (the lag always started at 0): `a0` starts the load transfer at a
/// given acceleration. Under a constant braking force `F` (no drag, level road) the body
/// decelerates at exactly `F/m`, so with `a0 = F/m` the lag stays at `F/m` and the front
/// axle carries its settled load from t = 0; with the default `a0 = 0` the lag follows
/// `F/m·(1 − e^(−t/τ))`.
#[test]
fn load_transfer_lag_starts_at_a0() {
    let (m, g, tau, decel) = (1200.0, 9.80665, 0.02, -5.0);
    let settled = (1.5 * m * g - 0.5 * m * decel) / 2.7;
    let run_with = |a0: f64| {
        let mut d = Diagram::new("a0");
        d.add(
            "car",
            "VehicleBody",
            json!({ "m": m, "drag_area": 0.0, "v0": 30.0, "a": 1.2, "b": 1.5, "h": 0.5,
                    "load_transfer_lag": tau, "a0": a0 }),
        );
        d.add("f", "Constant", json!({ "value": decel * m }));
        d.add("src", "ForceSource", json!({}));
        d.connect(&["f.y", "src.f"]);
        d.connect(&["src.flange", "car.body"]);
        d.log(&["car.normal_front", "car.a_lagged"]);
        d.settings.stop_time = 0.1;
        d.settings.output_interval = Some(0.01);
        d.settings.rtol = 1e-10;
        d.settings.atol = 1e-12;
        run(&d)
    };
    let r = run_with(decel);
    for (&nf, &al) in r
        .get("car.normal_front")
        .unwrap()
        .iter()
        .zip(r.get("car.a_lagged").unwrap())
    {
        assert!((al - decel).abs() < 1e-9, "a_lagged {al}");
        assert!(
            (nf - settled).abs() < 1e-6 * settled,
            "front {nf} vs {settled}"
        );
    }
    let r = run_with(0.0);
    for (&t, &al) in r.time.iter().zip(r.get("car.a_lagged").unwrap()) {
        let exact = decel * (1.0 - (-t / tau).exp());
        assert!(
            (al - exact).abs() < 1e-7,
            "t = {t}: a_lagged {al} vs {exact}"
        );
    }
}
