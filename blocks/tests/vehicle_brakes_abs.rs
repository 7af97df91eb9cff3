//! BrakeSystem torques and the ABS emergency stop on a falling-grip tire.

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, EventTag, Model, RunStatus, SimResult};
use serde_json::json;

fn run(d: &Diagram) -> SimResult {
    let mut m = compile(d, &registry()).unwrap_or_else(|e| panic!("compile failed: {e}"));
    let r = m.run();
    assert_ne!(r.status, RunStatus::Failed, "run failed: {}", r.message);
    r
}

fn brakes(pedal: f64, handbrake: f64, params: serde_json::Value) -> (f64, f64, f64) {
    let mut d = Diagram::new("brakes");
    d.add("pedal", "Constant", json!({ "value": pedal }));
    d.add("hb", "Constant", json!({ "value": handbrake }));
    d.add("bs", "BrakeSystem", params);
    d.add("clk", "Integrator", json!({}));
    d.add("one", "Constant", json!({ "value": 1.0 }));
    d.connect(&["one.y", "clk.u"]);
    d.connect(&["pedal.y", "bs.pedal"]);
    d.connect(&["hb.y", "bs.handbrake"]);
    d.log(&["bs.front", "bs.rear", "bs.neutral"]);
    d.settings.stop_time = 0.1;
    let r = run(&d);
    (
        r.last("bs.front").unwrap(),
        r.last("bs.rear").unwrap(),
        r.last("bs.neutral").unwrap(),
    )
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn brake_bias_splits_per_axle_torque() {
    let (f, r, n) = brakes(1.0, 0.0, json!({}));
    assert!(
        close(f, 1400.0) && close(r, 600.0) && close(n, 1000.0),
        "{f} {r} {n}"
    );
    let (f, r, _) = brakes(
        0.5,
        0.0,
        json!({ "brake_bias": 0.5, "max_brake_torque": 3000 }),
    );
    assert!(close(f, 750.0) && close(r, 750.0), "{f} {r}");
    // Pedal clamped to [0, 1].
    let (f, r, _) = brakes(2.0, 0.0, json!({}));
    assert!(close(f, 1400.0) && close(r, 600.0));
    let (f, r, n) = brakes(-1.0, 0.0, json!({}));
    assert!(f == 0.0 && r == 0.0 && n == 0.0);
}

#[test]
fn handbrake_axle_selects_rear_all_front() {
    let (f, r, n) = brakes(0.0, 1.0, json!({ "handbrake_axle": 0.0 }));
    assert!(
        close(f, 0.0) && close(r, 1500.0) && close(n, 0.0),
        "{f} {r} {n}"
    );
    let (f, r, n) = brakes(0.0, 1.0, json!({ "handbrake_axle": 0.5 }));
    assert!(
        close(f, 1500.0) && close(r, 1500.0) && close(n, 1500.0),
        "{f} {r} {n}"
    );
    let (f, r, n) = brakes(0.0, 1.0, json!({ "handbrake_axle": 1.0 }));
    assert!(
        close(f, 1500.0) && close(r, 0.0) && close(n, 0.0),
        "{f} {r} {n}"
    );
    // Handbrake adds to the pedal torque.
    let (f, r, _) = brakes(1.0, 0.5, json!({}));
    assert!(close(f, 1400.0) && close(r, 600.0 + 750.0), "{f} {r}");
}

#[test]
fn invalid_brake_and_abs_parameters_are_errors() {
    let reg = registry();
    for (ty, p, name) in [
        ("BrakeSystem", json!({ "brake_bias": 1.5 }), "brake_bias"),
        (
            "BrakeSystem",
            json!({ "handbrake_axle": -0.1 }),
            "handbrake_axle",
        ),
        (
            "BrakeSystem",
            json!({ "max_brake_torque": -1 }),
            "max_brake_torque",
        ),
        ("Abs", json!({ "valve_positions": 2.5 }), "valve_positions"),
        ("Abs", json!({ "valve_positions": 9 }), "valve_positions"),
        (
            "Abs",
            json!({ "min_pressure_ratio": 1.2 }),
            "min_pressure_ratio",
        ),
        ("Abs", json!({ "cycle_time": 0 }), "cycle_time"),
        (
            "Abs",
            json!({ "mode": "continuous", "trigger": "custom_slip", "min_slip": 2, "max_slip": 1 }),
            "max_slip",
        ),
        ("Abs", json!({ "mode": "sometimes" }), "mode"),
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

// Quarter car of the emergency-stop tests and netlists.
const M: f64 = 400.0;
const J: f64 = 1.2;
const R: f64 = 0.3;
const GRAV: f64 = 9.81;
/// Tire curve (extremum slip, extremum value, asymptote slip, asymptote value).
const CURVE: (f64, f64, f64, f64) = (1.0, 1.0, 8.0, 0.6);
const T_ON: f64 = 0.1;

fn curve(s: f64) -> f64 {
    drivelink_blocks::vehicle::friction_curve(s, CURVE.0, CURVE.1, CURVE.2, CURVE.3)
}

/// Quarter car: wheel (inertia 1.2 kg·m², r = 0.3 m) on a 400 kg mass with a constant
/// 3924 N normal load, braked from 100 km/h by `demand` from 0.1 s through the ABS, which
/// takes its trigger from the tire's peak slip.
pub fn emergency_stop(abs: serde_json::Value, demand: f64) -> (Model, SimResult) {
    let v0 = 100.0 / 3.6;
    let mut d = Diagram::new("emergency_stop");
    d.add("body", "Mass", json!({ "m": M, "v0": v0 }));
    d.add("wheel", "Inertia", json!({ "J": J, "w0": v0 / R }));
    d.add("tire", "Tire", json!({ "radius": R, "extremum_slip": CURVE.0, "extremum_value": CURVE.1, "asymptote_slip": CURVE.2, "asymptote_value": CURVE.3 }));
    d.add("load", "Constant", json!({ "value": M * GRAV }));
    d.add(
        "demand",
        "Step",
        json!({ "time": T_ON, "before": 0.0, "after": demand }),
    );
    d.add("abs", "Abs", abs);
    d.add("brake", "Brake", json!({ "max_torque": 1.0, "peak": 1.0 }));
    d.connect(&["body.flange", "tire.body"]);
    d.connect(&["wheel.flange", "tire.hub", "brake.flange"]);
    d.connect(&["load.y", "tire.normal_force"]);
    d.connect(&["demand.y", "abs.demand"]);
    d.connect(&["tire.slip", "abs.slip"]);
    d.connect(&["tire.peak_slip", "abs.peak_slip"]);
    d.connect(&["abs.torque", "brake.f"]);
    d.log(&[
        "body.v",
        "body.s",
        "tire.slip",
        "tire.force",
        "tire.mode",
        "brake.mode",
        "abs.ratio",
        "wheel.w",
    ]);
    d.settings.stop_time = 9.0;
    d.settings.max_step = 0.002;
    let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("compile failed: {e}"));
    let r = m.run();
    assert_ne!(r.status, RunStatus::Failed, "run failed: {}", r.message);
    (m, r)
}

fn stop_distance(r: &SimResult) -> (f64, f64) {
    let v = r.get("body.v").unwrap();
    let s = r.get("body.s").unwrap();
    let k = v
        .iter()
        .position(|&x| x <= 1e-9)
        .expect("the car does not stop");
    (r.time[k], s[k])
}

/// Independent solution of the locked-wheel stop (no block code): the tire law
/// `F = k·curve(σ)` with `σ = slip` above `extremum_slip` and `slip·xe/v_ref` below it.
/// Phase 1 (RK4, h = 1e-6 s): the braked wheel decelerates until it stops (it then stays
/// locked: the tire torque r·F <= 1177 N·m < the brake torque). Phase 2 (locked wheel,
/// slip = −v): `dt = dv/(g·c(σ(v)))`, `ds = v·dt`, by composite Simpson quadrature in `v` on
/// the pieces where `c` is smooth. Returns (stop time, distance).
fn locked_wheel_reference(demand: f64) -> (f64, f64) {
    let v0 = 100.0 / 3.6;
    let k = M * GRAV;
    let xe = CURVE.0;
    let force = |v: f64, w: f64| -> f64 {
        let slip = R * w - v;
        let vref = v.abs().max((R * w).abs());
        let sigma = if vref >= xe { slip } else { slip * xe / vref };
        k * curve(sigma)
    };
    let f = |y: [f64; 3]| -> [f64; 3] {
        // y = (v, w, s)
        let fx = force(y[0], y[1]);
        [fx / M, (-fx * R - demand) / J, y[0]]
    };
    let h = 1e-6;
    let mut t = T_ON;
    let mut y = [v0, v0 / R, v0 * T_ON];
    loop {
        let k1 = f(y);
        let a = |k: [f64; 3], c: f64| [y[0] + c * k[0], y[1] + c * k[1], y[2] + c * k[2]];
        let k2 = f(a(k1, 0.5 * h));
        let k3 = f(a(k2, 0.5 * h));
        let k4 = f(a(k3, h));
        let mut yn = [0.0; 3];
        for i in 0..3 {
            yn[i] = y[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
        if yn[1] <= 0.0 {
            // Land on w = 0 by linear interpolation within the step.
            let frac = y[1] / (y[1] - yn[1]);
            t += frac * h;
            for i in 0..3 {
                y[i] += frac * (yn[i] - y[i]);
            }
            break;
        }
        y = yn;
        t += h;
    }
    // Phase 2: dv/dt = −g·c(σ), σ = v (v >= xe) or xe (v < xe).
    let decel = |v: f64| GRAV * curve(v.max(xe));
    let simpson = |g: &dyn Fn(f64) -> f64, a: f64, b: f64| -> f64 {
        let n = 20_000;
        let hh = (b - a) / n as f64;
        let mut sum = g(a) + g(b);
        for i in 1..n {
            let x = a + i as f64 * hh;
            sum += if i % 2 == 1 { 4.0 } else { 2.0 } * g(x);
        }
        sum * hh / 3.0
    };
    let v1 = y[0];
    let mut pieces = vec![0.0];
    for b in [CURVE.0, CURVE.2] {
        if b < v1 {
            pieces.push(b);
        }
    }
    pieces.push(v1);
    let (mut dt, mut ds) = (0.0, 0.0);
    for p in pieces.windows(2) {
        dt += simpson(&|v| 1.0 / decel(v), p[0], p[1]);
        ds += simpson(&|v| v / decel(v), p[0], p[1]);
    }
    (t + dt, y[2] + ds)
}

/// Time-weighted mean of `g(|slip|)` while braking at speed (t > T_ON + 0.2 s, v > 3 m/s).
fn braking_mean(r: &SimResult, g: impl Fn(f64) -> f64) -> f64 {
    let v = r.get("body.v").unwrap();
    let sl = r.get("tire.slip").unwrap();
    let (mut sum, mut tw) = (0.0, 0.0);
    for k in 1..r.time.len() {
        if r.time[k] > T_ON + 0.2 && v[k] > 3.0 {
            let dt = r.time[k] - r.time[k - 1];
            sum += g(sl[k].abs()) * dt;
            tw += dt;
        }
    }
    sum / tw.max(1e-12)
}

#[test]
fn emergency_stop_locked_wheels_match_the_curve_and_rest_exactly() {
    let demand = 1600.0;
    let (mut m, locked) = emergency_stop(json!({ "enabled": false }), demand);
    let (t_lock, s_lock) = stop_distance(&locked);
    let (t_ref, s_ref) = locked_wheel_reference(demand);
    println!(
        "locked: stop at {t_lock:.6} s after {s_lock:.6} m (independent solution {t_ref:.6} s, {s_ref:.6} m)"
    );
    // Solver tolerance (rtol 1e-6) on a 67 m stop: agreement to 1e-5 relative.
    assert!((s_lock - s_ref).abs() < 1e-5 * s_ref, "{s_lock} vs {s_ref}");
    assert!((t_lock - t_ref).abs() < 1e-5 * t_ref, "{t_lock} vs {t_ref}");
    // At rest: exact zero speed, no creep, no chatter.
    assert!(
        locked.last("body.v").unwrap().abs() < 1e-12,
        "{:?}",
        locked.last("body.v")
    );
    assert!(locked.last("wheel.w").unwrap().abs() < 1e-12);
    let s_end = locked.last("body.s").unwrap();
    assert!(
        (s_end - locked.value_at("body.s", t_lock + 0.5).unwrap()).abs() < 1e-9,
        "creep after rest"
    );
    assert_eq!(locked.last("tire.mode"), Some(0.0));
    assert_eq!(locked.last("brake.mode"), Some(0.0));
    let late: Vec<_> = locked
        .events
        .iter()
        .filter(|e| e.time > t_lock + 1e-6)
        .collect();
    assert!(late.is_empty(), "events after rest: {late:?}");
    // Energy: the initial kinetic energy went into tire slip and the brake.
    let a = m.energy_audit();
    println!(
        "locked: energy residual {:.3e} (relative {:.3e}), losses {:?}",
        a.residual, a.relative_residual, a.losses
    );
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
}

#[test]
fn emergency_stop_abs_keeps_slip_near_the_peak_and_stops_near_the_ideal_distance() {
    let demand = 1600.0;
    let v0: f64 = 100.0 / 3.6;
    // No tire force can exceed the peak k·ye = m·g·1.0: from the moment the brake is applied,
    // no strategy stops in less than v0·t_on + v0²/(2·g·ye).
    let s_ideal = v0 * T_ON + v0 * v0 / (2.0 * GRAV * CURVE.1);
    let (_, locked) = emergency_stop(json!({ "enabled": false }), demand);
    let (_, s_lock) = stop_distance(&locked);
    for (mode, extra) in [
        ("simple", json!({})),
        ("multi_position", json!({ "valve_positions": 3 })),
        ("continuous", json!({})),
    ] {
        let mut p = json!({ "enabled": true, "mode": mode, "cycle_time": 0.005 });
        for (key, v) in extra.as_object().unwrap() {
            p[key] = v.clone();
        }
        let (mut m, r) = emergency_stop(p, demand);
        let (t, s) = stop_distance(&r);
        let mean_slip = braking_mean(&r, |x| x);
        let grip = braking_mean(&r, curve) / CURVE.1;
        let n_ev = r.events.len();
        println!(
            "abs {mode}: stop at {t:.4} s after {s:.4} m (ideal {s_ideal:.4} m, locked {s_lock:.4} m), mean |slip| {mean_slip:.3} m/s, mean grip {:.2} % of the peak, events {n_ev}",
            100.0 * grip
        );
        // Physics: never shorter than the ideal stop, and close to it because the ABS keeps
        // the tire near its peak (mean grip >= 95 % of the peak, mean slip within the band
        // between half the peak slip and the maximum-relief slip 1.0 + 1.5 m/s).
        assert!(
            s >= s_ideal,
            "{mode}: {s} beats the physical limit {s_ideal}"
        );
        assert!((0.95..=1.0).contains(&grip), "{mode}: mean grip {grip}");
        assert!(s <= s_ideal / 0.95 + 1e-9, "{mode}: {s} vs ideal {s_ideal}");
        assert!(
            mean_slip >= 0.5 * CURVE.0 && mean_slip <= CURVE.0 + 1.5,
            "{mode}: mean slip {mean_slip}"
        );
        assert!(s < 0.9 * s_lock, "{mode}: {s} vs locked {s_lock}");
        // Bounded events: at most a few per controller cycle.
        let cycles = (t / 0.005).ceil() as usize;
        assert!(
            n_ev < 4 * cycles + 50,
            "{mode}: {n_ev} events in {cycles} cycles"
        );
        assert!(
            r.last("body.v").unwrap().abs() < 1e-12,
            "{mode}: not at rest"
        );
        assert!(r.events_of("tire", EventTag::Lock).count() >= 1);
        let a = m.energy_audit();
        assert!(a.relative_residual.abs() < 1e-6, "{mode}: {a:#?}");
    }
}
