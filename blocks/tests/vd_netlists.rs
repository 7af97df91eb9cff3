//! The vehicle-dynamics demonstration netlists models/netlists/vd_*.json: each runs, its
//! energy audit closes, and each shows the physics it is about.

use std::path::PathBuf;

use drivelink_blocks::registry;
use drivelink_core::{compile, EnergyAudit, EventTag, RunStatus, SimResult};
use drivelink_netlist as netlist;

mod common;
use common::temp_dir;

fn run(file: &str) -> (SimResult, EnergyAudit) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../models/netlists")
        .join(file);
    run_path(&path, file)
}

/// Load, compile and run the netlist at `path` (`file` names it in messages): no compile
/// warnings, not failed, the energy audit closed to 1e-6.
fn run_path(path: &std::path::Path, file: &str) -> (SimResult, EnergyAudit) {
    let d = netlist::load_file(path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert!(
        m.plan().warnings().is_empty(),
        "{file}: {:?}",
        m.plan().warnings()
    );
    let r = m.run();
    assert_ne!(r.status, RunStatus::Failed, "{file}: {}", r.message);
    let a = m.energy_audit();
    assert!(
        a.relative_residual.abs() < 1e-6,
        "{file}: energy residual {} J (relative {})",
        a.residual,
        a.relative_residual
    );
    (r, a)
}

fn last(r: &SimResult, n: &str) -> f64 {
    r.last(n).unwrap_or_else(|| panic!("no {n}"))
}

/// Value of `n` at the first sample at or after `t`.
fn at(r: &SimResult, n: &str, t: f64) -> f64 {
    let i = r.time.iter().position(|&x| x >= t).expect("time in range");
    r.get(n).unwrap()[i]
}

#[test]
fn static_car_settles_level_and_stays_put() {
    let (r, _) = run("vd_static.json");
    for w in ["fl", "fr", "rl", "rr"] {
        assert!(last(&r, &format!("{w}.fz")) > 3000.0);
    }
    assert!(last(&r, "car.speed") < 1e-6);
    assert!(last(&r, "car.pitch").abs() < 1e-6);
    assert!(last(&r, "car.x").abs() < 1e-5 && last(&r, "car.y").abs() < 1e-9);
}

/// Radius of the path at the end of a run: speed over yaw rate.
fn radius(r: &SimResult) -> f64 {
    last(r, "car.speed") / last(r, "car.r")
}

#[test]
fn locked_differential_runs_a_wider_circle_than_open() {
    let (open, _) = run("vd_turn_open.json");
    let (locked, _) = run("vd_turn_locked.json");
    let (ro, rl) = (radius(&open), radius(&locked));
    // The open car's rear wheels turn at different speeds, the locked car's at one.
    assert!((last(&open, "rr.w") - last(&open, "rl.w")).abs() > 0.5);
    let (wl, wr) = (last(&locked, "rl.w"), last(&locked, "rr.w"));
    assert!((wl - wr).abs() < 1e-9 * wl, "locked: {wl} vs {wr}");
    assert!(
        ro > 0.0 && rl > 1.05 * ro,
        "open R = {ro} m, locked R = {rl} m"
    );
}

#[test]
fn braking_while_steered_locked_car_keeps_its_course_abs_turns() {
    let (abs, _) = run("vd_brake_turn_abs.json");
    let (locked, _) = run("vd_brake_turn_no_abs.json");
    // Change of the direction of travel (course atan2(vy, vx)) in the 2 s after the car
    // steers and brakes at once (t = 1 s). The locked tires slide: the friction circle
    // leaves them almost no force across their sliding, the steered wheels have no grip to
    // turn the car and it ploughs on; the ABS keeps the wheels near the curve's peak and
    // the car follows its steered wheels.
    let course = |r: &SimResult, t: f64| at(r, "car.vy", t).atan2(at(r, "car.vx", t));
    let turn = |r: &SimResult| course(r, 3.0) - course(r, 1.0);
    let (ta, tl) = (turn(&abs), turn(&locked));
    assert_eq!(
        last(&locked, "fl.brake_mode"),
        0.0,
        "front wheels not locked"
    );
    assert!(tl.abs() < 0.2, "the locked car's course turned {tl} rad");
    assert!(
        ta > 3.0 * tl.abs(),
        "ABS course turned {ta} rad, locked {tl} rad"
    );
    assert!(last(&abs, "car.speed") < 0.1 && last(&locked, "car.speed") < 0.1);
}

/// Longest stretch (s) over which `wheel` stands still (spin exactly 0: its brake stuck)
/// while the car moves faster than 1 m/s.
fn longest_lock(r: &SimResult, wheel: &str) -> f64 {
    let (w, v) = (
        r.get(&format!("{wheel}.w")).unwrap(),
        r.get("car.speed").unwrap(),
    );
    let (mut longest, mut since) = (0.0_f64, None);
    for (i, &t) in r.time.iter().enumerate() {
        if w[i] == 0.0 && v[i] > 1.0 {
            let t0 = *since.get_or_insert(t);
            longest = longest.max(t - t0);
        } else {
            since = None;
        }
    }
    longest
}

/// Regression: the demo's ABS let the inside wheels lock. With `min_pressure_ratio` 0.2 the
/// relieved torque (0.2 x 2500 N·m front, 0.2 x 1500 N·m rear) exceeds what the unloaded
/// inside tires return while sliding (asymptote 0.5 x about 2,800 N and 1,300 N x 0.33 m),
/// so those wheels stayed locked for 2.5 s and 3 s and the car spun (side slip 0.7 rad).
/// Calibrated as VPP advises (the highest ratio that locks no wheel while braking and
/// steering: 0.1), every wheel stands still for less than one 10 ms ABS cycle while the
/// car moves and the car follows its wheels.
#[test]
fn abs_demo_inside_wheels_do_not_lock_while_braking_and_steering() {
    let (r, _) = run("vd_brake_turn_abs.json");
    for w in ["fl", "fr", "rl", "rr"] {
        let l = longest_lock(&r, w);
        assert!(l < 0.01, "{w} locked for {l} s with ABS");
    }
    let beta = r.get("car.beta").unwrap();
    let speed = r.get("car.speed").unwrap();
    let worst = (0..r.time.len())
        .filter(|&i| speed[i] > 2.0)
        .map(|i| beta[i].abs())
        .fold(0.0, f64::max);
    assert!(worst < 0.1, "side slip {worst} rad: the ABS car spins");
    assert!(last(&r, "car.speed") < 0.1, "not at rest by the end");

    // The calibration the description explains: at 0.2 the inside wheels lock.
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/netlists/vd_brake_turn_abs.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["parameters"]["abs_ratio"] = serde_json::json!(0.2);
    let d = netlist::load_value(&v, "abs_ratio 0.2", path.parent().unwrap()).unwrap();
    let r2 = compile(&d, &registry()).unwrap().run();
    assert!(longest_lock(&r2, "fl") > 1.0 && longest_lock(&r2, "rl") > 1.0);
    assert!(longest_lock(&r2, "fr") < 0.01 && longest_lock(&r2, "rr") < 0.01);
}

#[test]
fn split_mu_braking_yaws_towards_the_high_grip_side() {
    let (r, _) = run("vd_split_mu_brake.json");
    // Ice on the left: the right wheels brake harder and turn the car right (yaw < 0).
    assert!(last(&r, "car.yaw") < -0.05, "yaw {}", last(&r, "car.yaw"));
    assert!(last(&r, "car.y") < 0.0);
    assert_eq!(last(&r, "rl.w"), 0.0, "the low-grip rear wheel locks");
    assert!(
        last(&r, "rr.w") > 1.0,
        "the high-grip rear wheel keeps rolling"
    );
}

#[test]
fn full_car_drives_shifts_steers_and_stops_with_abs() {
    let (r, _) = run("vd_full_car.json");
    let speed_before_braking = at(&r, "car.speed", 15.0);
    assert!(speed_before_braking > 15.0, "{speed_before_braking}");
    assert!(last(&r, "car.speed") < 0.1);
    assert!(
        last(&r, "car.yaw") > 0.2,
        "the steering input turned the car"
    );
    // Brake hydraulics `1/(τ·s + 1)`, τ = 10 ms, between the ABS valve and the brake. The
    // valve steps between 0.2 and 1 of the 2000 N·m demand; the cylinder follows it, so
    // over any sample interval Δt it moves by at most (1 − e^(−Δt/τ))·(largest valve-cylinder
    // gap, 1600 N·m) and never leaves the valve's range.
    let (valve, cyl) = (
        r.get("abs_fl.torque").unwrap(),
        r.get("brake_fl.y").unwrap(),
    );
    let tau = 0.01;
    let largest_valve_step = valve
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .fold(0.0, f64::max);
    assert!(
        largest_valve_step > 1500.0,
        "the ABS cycled: {largest_valve_step}"
    );
    for i in 1..r.time.len() {
        let dt = r.time[i] - r.time[i - 1];
        let bound = (1.0 - (-dt / tau).exp()) * 1600.0 + 1e-6 * 2000.0;
        let dy = (cyl[i] - cyl[i - 1]).abs();
        assert!(
            dy <= bound,
            "cylinder moved {dy} N·m in {dt} s at t = {}",
            r.time[i]
        );
        assert!(cyl[i] <= 2000.0 * (1.0 + 1e-9), "{}", cyl[i]);
    }
    // The ABS idles once the car is slow; the cylinder then holds the whole demand.
    assert!((last(&r, "brake_fl.y") - 2000.0).abs() < 1e-6 * 2000.0);
}

/// The solver work of `vd_full_car.json`, exactly (runs are bit-identical between runs
/// and machines), so a change of the numerics or a regression in the work shows here. If
/// this changes, say why in the history below and in BENCHMARKS.md.
#[test]
fn full_car_solver_statistics_snapshot() {
    let (r, _) = run("vd_full_car.json");
    let s = r.stats;
    let got = (
        s.steps,
        s.rejected_steps,
        s.rhs_evals,
        s.guard_evals,
        s.output_points,
        s.events,
        s.jacobian_evals,
        s.lu_decompositions,
    );
    // The exact counts depend on rounding (the wheel collider divides by the axis height
    // through one reciprocal; the friction circle is divided through analytically). 109
    // logged events; the ABS cycles every 10 ms while braking set most of the steps.
    assert_eq!(got, (2940, 433, 24698, 8120, 2636, 571, 86, 427), "{s:?}");
    // Full model evaluations (a step end's derivatives, guards and output share one),
    // Newton iterations and the Jacobians' derivative calls (one of them at the initial
    // event, where the wheels' initial spins are taken with the steering input's value).
    assert_eq!(
        (s.model_evals, s.newton_iterations, s.jacobian_rhs_evals),
        (29_863, 1245, 2678),
        "{s:?}"
    );
}

/// `vd_parked_slope.json`: braked on a 10 % grade with static friction at the patches, the
/// car settles into the patch springs and then stays put; the patches carry the downhill
/// pull `m·g·sin θ` between them.
#[test]
fn parked_slope_demo_stays_put_with_static_friction() {
    let (r, _) = run("vd_parked_slope.json");
    let drift = (last(&r, "car.x") - at(&r, "car.x", 2.0)).abs();
    assert!(drift < 1e-6, "drift {drift} m from 2 s to 10 s");
    let theta = 0.1f64.atan();
    let pull = 1500.0 * drivelink_core::G * theta.sin();
    let carried: f64 = ["fl", "fr", "rl", "rr"]
        .iter()
        .map(|w| {
            assert_eq!(last(&r, &format!("{w}.patch_stuck")), 1.0, "{w} stuck");
            last(&r, &format!("{w}.fx"))
        })
        .sum();
    assert!(
        (carried - pull).abs() < 1e-5 * pull,
        "patch forces {carried} N against m·g·sin θ = {pull} N"
    );
}

/// Recording asks a block for each run of its logged custom variables at once
/// (`Block::vars`: the wheel collider computes its contact once for `fx`, `fy` and
/// `compression`). The batch must give what one variable at a time gives: the split-mu
/// stop logged grouped by wheel and interleaved across wheels (every run of one variable)
/// records the same values, bit for bit.
#[test]
fn batched_wheel_variables_record_what_single_ones_do() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/netlists/vd_split_mu_brake.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let wheels = ["fl", "fr", "rl", "rr"];
    let vars = ["fx", "fy", "compression"];
    let grouped: Vec<String> = wheels
        .iter()
        .flat_map(|w| vars.iter().map(move |v| format!("{w}.{v}")))
        .collect();
    let interleaved: Vec<String> = vars
        .iter()
        .flat_map(|v| wheels.iter().map(move |w| format!("{w}.{v}")))
        .collect();
    let run_logging = |log: &[String]| {
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["log"] = serde_json::json!(log);
        v["scopes"] = serde_json::json!([]);
        let d = netlist::load_value(&v, "split_mu", path.parent().unwrap())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("{e}"));
        m.run()
    };
    let (a, b) = (run_logging(&grouped), run_logging(&interleaved));
    assert_eq!(a.time, b.time);
    for name in &grouped {
        let (x, y) = (a.get(name).unwrap(), b.get(name).unwrap());
        assert!(
            x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()),
            "{name} differs"
        );
    }
    // The forces are there: the braked wheels pull back on the car.
    assert!(a.get("fr.fx").unwrap().iter().any(|&f| f < -1000.0));
}

/// Regression: a friction joint released at an event instant with its slip at zero was
/// relocked by the next call of the same instant's event iteration (its slip was still
/// within the lock tolerance) and released again 2e-12 s later. vd_full_car with 0 or 4
/// guard samples logged `gearbox.brake_D` unlock, lock, unlock at 4.0735 s (111 events
/// instead of 109); the full car's 8-sample run once did the same with `brake_C`. A joint
/// released at an instant now keeps sliding there while its slip accelerates in the
/// sliding direction (the start of sliding), so every sampling finds the same events and
/// no joint relocks within a microsecond of its release.
#[test]
fn a_joint_released_at_an_instant_is_not_relocked_at_that_instant() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/netlists/vd_full_car.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut counts = Vec::new();
    for samples in [0, 1, 4] {
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["solver"]["guard_samples"] = serde_json::json!(samples);
        v["scopes"] = serde_json::json!([]);
        let d = netlist::load_value(&v, "vd_full_car", path.parent().unwrap())
            .unwrap_or_else(|e| panic!("{e}"));
        let r = compile(&d, &registry())
            .unwrap_or_else(|e| panic!("{e}"))
            .run();
        assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
        for (i, e) in r.events.iter().enumerate() {
            if e.kind != EventTag::Unlock {
                continue;
            }
            // The joint's next event, if it is a lock, comes well after the release.
            if let Some(next) = r.events[i + 1..].iter().find(|n| n.block == e.block) {
                assert!(
                    !(next.kind == EventTag::Lock && next.time - e.time < 1e-6),
                    "guard_samples {samples}: {} unlocked at {} and relocked at {}",
                    e.block,
                    e.time,
                    next.time
                );
            }
        }
        counts.push(r.events.len());
    }
    assert!(
        counts.iter().all(|&c| c == counts[0]),
        "events logged: {counts:?}"
    );
}

/// Regression: the netlist loader rejected every JSON object in `params`, so a friction
/// curve could not be given in a netlist at all (`"forward_friction": {...}`, as the
/// contract and the catalogue document), only through the Rust API. Now the curve given
/// in the file takes effect: with every wheel locked and the car running straight, the
/// tires slide on the curve's asymptote, so the car decelerates at `asymptote_value · g`
/// once the pitch has settled (the normal loads then sum to m·g; no aero).
#[test]
fn friction_curve_given_as_an_object_in_a_netlist_sets_the_locked_wheel_deceleration() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../models/netlists/vd_brake_turn_no_abs.json");
    let text = std::fs::read_to_string(&src).expect("reads");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("parses");
    let decel_for = |v: &serde_json::Value, mu: Option<f64>| {
        let mut v = v.clone();
        for b in v["blocks"].as_array_mut().expect("blocks") {
            match b["type"].as_str() {
                Some("WheelCollider") => {
                    if let Some(mu) = mu {
                        // Keys not given keep their defaults; a value may carry its unit.
                        b["params"]["forward_friction"] = serde_json::json!({
                            "asymptote_value": mu,
                            "asymptote_slip": "0.8 m/s"
                        });
                    }
                }
                Some("Aero") => {
                    b["params"]["drag_area"] = 0.0.into();
                    b["params"]["lift_area"] = 0.0.into();
                }
                _ => {}
            }
            if b["name"] == "steering_wheel" {
                b["params"]["after"] = 0.0.into();
            }
        }
        let dir = temp_dir("curve_object");
        let path = dir.path().join(format!(
            "curve_object_{}.json",
            mu.map_or("default".to_string(), |m| m.to_string())
        ));
        std::fs::write(&path, serde_json::to_string(&v).expect("writes")).expect("writes");
        let (r, _) = run_path(&path, "the netlist with a curve object");
        for w in ["fl", "fr", "rl", "rr"] {
            assert_eq!(at(&r, &format!("{w}.brake_mode"), 2.5), 0.0, "{w} locked");
        }
        // Mean deceleration over 2.0–2.5 s from the speed (the car still moves).
        let (v0, v1) = (at(&r, "car.speed", 2.0), at(&r, "car.speed", 2.5));
        assert!(v1 > 5.0, "still sliding at 2.5 s ({v1} m/s)");
        (v0 - v1) / 0.5
    };
    let g = 9.80665;
    let default = decel_for(&v, None);
    let custom = decel_for(&v, Some(0.7));
    assert!(
        (default / g - 0.5).abs() < 5e-4,
        "default asymptote 0.5: {} g",
        default / g
    );
    assert!(
        (custom / g - 0.7).abs() < 7e-4,
        "asymptote 0.7 from the netlist: {} g",
        custom / g
    );
    // The loader's own message for a value no parameter can take is unchanged.
    v["blocks"][1]["params"]["radius"] = serde_json::Value::Null;
    let dir = temp_dir("null_param");
    let path = dir.path().join("null.json");
    std::fs::write(&path, serde_json::to_string(&v).expect("writes")).expect("writes");
    let e = netlist::load_file(&path)
        .expect_err("null is refused")
        .to_string();
    assert!(e.contains("blocks[1].params.radius"), "{e}");
}
