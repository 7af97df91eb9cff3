//! Static friction at the `WheelCollider`'s contact patch (`static_friction`): a car
//! braked on a 10 % grade stays put (against the creep of the slip-velocity curve), the
//! loads still follow the inclined-plane balance and the energy audit closes; on a grade
//! steeper than the grip the patches break away at located events and the car slides with
//! the curve's asymptote; the option off leaves the block exactly as it was; a car
//! dropped onto the ground falls freely, lands, and rests where a car placed there rests.

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, EventTag, G};
use serde_json::{json, Value};

mod common;
use common::{last, run_audited as run};

const M: f64 = 1500.0;
/// CoM to front axle, CoM to rear axle, half track, m (the car of `vd_car.rs`).
const A: f64 = 1.2;
const B: f64 = 1.5;
const HALF_TRACK: f64 = 0.8;
const K: f64 = 30000.0;
const WHEELS: [&str; 4] = ["fl", "fr", "rl", "rr"];

/// The car of `vd_car.rs` at rest on a grade `tan θ = grade` rising along +x (tilted
/// gravity in road axes), all four wheels braked with 3000 N·m, `wheel` params merged
/// into every wheel.
fn parked(grade: f64, wheel: Value) -> Diagram {
    moving(grade, 0.0, wheel)
}

/// As [`parked`], the car starting at `v0` (m/s, uphill) with the brakes applied.
fn moving(grade: f64, v0: f64, wheel: Value) -> Diagram {
    let theta = grade.atan();
    let gravity = [-G * theta.sin(), 0.0, -G * theta.cos()];
    let mut d = Diagram::new("parked");
    d.add(
        "car",
        "RigidBody",
        json!({"m": M, "inertia": [550.0, 2400.0, 2600.0], "z0": 0.55, "v0": v0,
               "gravity": gravity}),
    );
    for (name, x, y) in [
        ("fl", A, HALF_TRACK),
        ("fr", A, -HALF_TRACK),
        ("rl", -B, HALF_TRACK),
        ("rr", -B, -HALF_TRACK),
    ] {
        let spring = if x > 0.0 { K * B } else { K * A };
        let mut p = json!({
            "center": [x, y, -0.1], "radius": 0.33, "suspension_distance": 0.3,
            "target_position": 0.3, "spring": spring, "damper": 4000.0
        });
        for (k, v) in wheel.as_object().unwrap() {
            p[k] = v.clone();
        }
        d.add(name, "WheelCollider", p);
        d.connect(&["car.frame", &format!("{name}.body")]);
    }
    d.add("pedal", "Constant", json!({"value": 3000.0}));
    d.connect(&["pedal.y", "fl.brake", "fr.brake", "rl.brake", "rr.brake"]);
    d.settings.rtol = 1e-9;
    d
}

/// The largest distance `var` moves from its value at `t0` over the rest of the run.
fn drift_after(r: &drivelink_core::SimResult, var: &str, t0: f64) -> f64 {
    let s = r.get(var).unwrap_or_else(|| panic!("{var} not logged"));
    let s0 = r
        .value_at(var, t0)
        .unwrap_or_else(|| panic!("{var} at {t0} s"));
    r.time
        .iter()
        .zip(s)
        .filter(|(t, _)| **t >= t0)
        .map(|(_, x)| (x - s0).abs())
        .fold(0.0, f64::max)
}

#[test]
fn braked_on_a_10_percent_grade_with_static_friction_the_car_stays_put() {
    let theta = 0.1f64.atan();
    let mut d = parked(0.1, json!({"static_friction": true}));
    let mut log = vec!["car.x".to_string(), "car.vx".into(), "car.z".into()];
    for w in WHEELS {
        for v in ["fz", "fx", "fy", "patch_stuck", "w"] {
            log.push(format!("{w}.{v}"));
        }
    }
    d.log(&log);
    d.settings.stop_time = 12.0;
    let (r, audit) = run(&d);
    println!("{audit:?}");
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
    // The patches stick at the initial instant (at rest) and never let go.
    for w in WHEELS {
        let s = r.get(&format!("{w}.patch_stuck")).unwrap();
        assert!(
            s.iter().all(|&v| v == 1.0),
            "{w}: patch not stuck throughout"
        );
        assert!(
            r.events
                .iter()
                .any(|e| e.block == w && e.kind == EventTag::Lock && e.time == 0.0),
            "{w}: no located stick event at t = 0"
        );
        assert!(
            !r.events
                .iter()
                .any(|e| e.block == w && e.kind == EventTag::Unlock),
            "{w}: patch broke away"
        );
    }
    // Settled after 2 s: the centre of mass moves less than 1 µm over the next 10 s
    // (the creeping model slides 0.37 m in that time).
    let x = r.get("car.x").unwrap();
    let x2 = r.value_at("car.x", 2.0).unwrap();
    let drift = drift_after(&r, "car.x", 2.0);
    let settle = x2 - x[0];
    println!("parked on 10 %: sag travel {settle:.6e} m in 2 s, drift {drift:.3e} m over 10 s");
    assert!(drift < 1e-6, "drift {drift} m after settling");
    assert!(
        last(&r, "car.vx").abs() < 1e-9,
        "vx = {}",
        last(&r, "car.vx")
    );
    // Loads: Σfz = m·g·cos θ, the tires carry the downhill pull Σfx = m·g·sin θ, no side
    // force, and the front axle by the inclined-plane moment balance.
    let g = |n: &str| last(&r, n);
    let fz: Vec<f64> = WHEELS.iter().map(|w| g(&format!("{w}.fz"))).collect();
    let total: f64 = fz.iter().sum();
    let total_fx: f64 = WHEELS.iter().map(|w| g(&format!("{w}.fx"))).sum();
    assert!(
        (total - M * G * theta.cos()).abs() < 1e-6 * M * G,
        "Σfz = {total}"
    );
    assert!(
        (total_fx - M * G * theta.sin()).abs() < 1e-6 * M * G,
        "Σfx = {total_fx} vs m·g·sin θ = {}",
        M * G * theta.sin()
    );
    for w in WHEELS {
        assert!(g(&format!("{w}.fy")).abs() < 1e-6, "{w}: side force");
        assert_eq!(g(&format!("{w}.w")), 0.0, "{w}: braked wheel turned");
    }
    let h = g("car.z");
    let front = fz[0] + fz[1];
    let textbook = M * G * theta.cos() * B / (A + B) - M * G * theta.sin() * h / (A + B);
    println!("front axle {front:.3} N, inclined-plane textbook {textbook:.3} N");
    assert!(
        (front - textbook).abs() < 0.01 * textbook,
        "front {front} N vs textbook {textbook} N"
    );
}

#[test]
fn braked_from_motion_on_the_grade_the_patches_stick_at_located_events_and_hold() {
    // 2 m/s uphill on the 10 % grade, brakes applied: the wheels lock, the car slides to
    // a stop; each patch sticks at the located instant its slip speed falls through
    // stick_speed (half the sideways extremum_slip: 0.1 m/s), then holds the car.
    let mut d = moving(0.1, 2.0, json!({"static_friction": true}));
    let mut log = vec!["car.x".to_string(), "car.vx".into()];
    for w in WHEELS {
        log.push(format!("{w}.patch_stuck"));
        log.push(format!("{w}.w"));
        log.push(format!("{w}.forward_slip"));
    }
    d.log(&log);
    d.settings.stop_time = 8.0; // 4.7 s of holding after settling
    let (r, audit) = run(&d);
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
    let mut t_stick: f64 = 0.0;
    for w in WHEELS {
        let locks: Vec<_> = r
            .events
            .iter()
            .filter(|e| e.block == w && e.kind == EventTag::Lock && e.detail.starts_with("patch"))
            .collect();
        assert_eq!(locks.len(), 1, "{w}: {locks:?}");
        let e = locks[0];
        println!("{w}: t = {:.6} s: {}", e.time, e.detail);
        // Located where the slip speed is stick_speed (the wheel is locked: rim speed 0).
        let i = r.time.iter().position(|&t| t == e.time).unwrap();
        let sx = r.get(&format!("{w}.forward_slip")).unwrap()[i];
        assert!(e.time > 0.1, "{w}: stuck at {}", e.time);
        assert!(
            (sx + 0.1).abs() < 1e-6,
            "{w}: slip {sx} m/s at the stick event"
        );
        assert_eq!(
            r.get(&format!("{w}.w")).unwrap()[i],
            0.0,
            "{w}: wheel not locked"
        );
        assert_eq!(last(&r, &format!("{w}.patch_stuck")), 1.0);
        t_stick = t_stick.max(e.time);
    }
    assert!(
        !r.events
            .iter()
            .any(|e| e.kind == EventTag::Unlock && e.detail.starts_with("patch")),
        "a patch broke away"
    );
    // Held: from 3 s after the last stick on (the pitch and patch modes settled), the car
    // stays within 1 µm.
    let t0 = t_stick + 3.0;
    let x0 = r.value_at("car.x", t0).unwrap();
    let drift = r
        .time
        .iter()
        .zip(r.get("car.x").unwrap())
        .filter(|(t, _)| **t >= t0)
        .map(|(_, x)| (x - x0).abs())
        .fold(0.0, f64::max);
    println!("stuck by {t_stick:.4} s, stopped at x = {x0:.6} m, drift {drift:.3e} m");
    assert!(drift < 1e-6, "drift {drift} m");
    // (The creep of the curve model, 0.0369 m/s, would move it 0.17 m in that window.)
}

#[test]
fn steeper_than_the_grip_the_patches_break_away_and_the_car_slides_on_the_asymptote() {
    // tan θ = 1.2 > μ = extremum_value 1: the stuck patches load up to the friction limit,
    // break away at located events, and the locked wheels slide with the asymptote 0.5.
    let theta = 1.2f64.atan();
    let mut d = parked(1.2, json!({"static_friction": true}));
    let mut log = vec!["car.vx".to_string()];
    for w in WHEELS {
        log.push(format!("{w}.patch_stuck"));
        log.push(format!("{w}.fx"));
        log.push(format!("{w}.fz"));
    }
    d.log(&log);
    d.settings.stop_time = 3.0;
    let (r, audit) = run(&d);
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
    for w in WHEELS {
        let breaks: Vec<_> = r
            .events
            .iter()
            .filter(|e| e.block == w && e.kind == EventTag::Unlock)
            .collect();
        assert_eq!(breaks.len(), 1, "{w}: {breaks:?}");
        let b = breaks[0];
        println!("{w}: t = {:.6} s: {}", b.time, b.detail);
        assert!(b.detail.contains("breakaway"), "{w}: {}", b.detail);
        assert!(b.time > 0.0 && b.time < 0.5, "{w}: breakaway at {}", b.time);
        // At the located instant (the sample logged before the event) the patch force is
        // the friction limit μ·fz (μ = 1); after it, the curve's force at the slip.
        let i = r.time.iter().position(|&t| t == b.time).unwrap();
        let fx = r.get(&format!("{w}.fx")).unwrap();
        let fz = r.get(&format!("{w}.fz")).unwrap();
        println!(
            "{w}: at breakaway fx {:.3} N, fz {:.3} N; after: fx {:.3} N",
            fx[i],
            fz[i],
            fx[i + 1]
        );
        assert!(
            (fx[i] / fz[i] - 1.0).abs() < 1e-5,
            "{w}: fx/fz = {}",
            fx[i] / fz[i]
        );
        assert!(fx[i + 1] < fx[i]);
        assert_eq!(last(&r, &format!("{w}.patch_stuck")), 0.0);
    }
    // Sliding downhill, accelerating at g·(sin θ − 0.5·cos θ) once the slip is past the
    // asymptote (Σfz = m·g·cos θ with the pitch settled).
    let a_exp = -G * (theta.sin() - 0.5 * theta.cos());
    let (t1, t2) = (2.5, 3.0);
    let a = (r.value_at("car.vx", t2).unwrap() - r.value_at("car.vx", t1).unwrap()) / (t2 - t1);
    println!("sliding: a = {a:.6} m/s², g·(sin θ − 0.5·cos θ) = {a_exp:.6} m/s²");
    assert!(last(&r, "car.vx") < -1.0);
    assert!(
        (a - a_exp).abs() < 1e-5 * a_exp.abs(),
        "a = {a}, expected {a_exp}"
    );
}

#[test]
fn static_friction_off_is_the_block_as_before_bit_for_bit() {
    // The default and an explicit `false` give identical trajectories (no states, no
    // guards), so the creep pinned in vd_car.rs is untouched.
    let mut runs = Vec::new();
    for p in [json!({}), json!({"static_friction": false})] {
        let mut d = parked(0.1, p);
        d.log(&["car.x", "car.vx", "fl.fx", "rr.fz"]);
        d.settings.stop_time = 1.0;
        runs.push(run(&d).0);
    }
    assert_eq!(runs[0].time, runs[1].time);
    assert_eq!(runs[0].columns, runs[1].columns);
    // And it creeps: the car has moved downhill.
    assert!(last(&runs[0], "car.vx") < -0.03);
}

#[test]
fn bad_stick_speed_is_a_typed_error_naming_the_parameter() {
    let d = parked(0.1, json!({"static_friction": true, "stick_speed": -1.0}));
    let e = compile(&d, &registry())
        .err()
        .expect("must fail")
        .to_string();
    assert!(e.contains("stick_speed"), "{e}");
}

#[test]
fn across_a_10_percent_side_slope_the_stuck_patches_hold_the_car_sideways() {
    // The grade falls towards −y (tilted gravity with a y component): the lateral patch
    // deflections carry m·g·sin θ, and the car stays put sideways.
    let theta = 0.1f64.atan();
    let mut d = parked(0.0, json!({"static_friction": true}));
    d.blocks
        .iter_mut()
        .find(|b| b.name == "car")
        .unwrap()
        .params
        .insert(
            "gravity".into(),
            json!([0.0, -G * theta.sin(), -G * theta.cos()]),
        );
    let mut log = vec!["car.y".to_string(), "car.x".into()];
    for w in WHEELS {
        log.push(format!("{w}.fy"));
        log.push(format!("{w}.patch_stuck"));
    }
    d.log(&log);
    d.settings.stop_time = 12.0;
    let (r, audit) = run(&d);
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
    for w in WHEELS {
        let s = r.get(&format!("{w}.patch_stuck")).unwrap();
        assert!(
            s.iter().all(|&v| v == 1.0),
            "{w}: patch not stuck throughout"
        );
    }
    // The roll and lateral patch modes settle within 3 s (0.6 µm between 2 and 3 s, then
    // a fixed position); from then on the car stays put.
    let y2 = r.value_at("car.y", 3.0).unwrap();
    let drift = r
        .time
        .iter()
        .zip(r.get("car.y").unwrap())
        .filter(|(t, _)| **t >= 3.0)
        .map(|(_, y)| (y - y2).abs())
        .fold(0.0, f64::max);
    let total_fy: f64 = WHEELS.iter().map(|w| last(&r, &format!("{w}.fy"))).sum();
    println!(
        "side slope: settled by {:.3e} m, drift {drift:.3e} m, Σfy {total_fy:.3} N",
        y2
    );
    assert!(drift < 1e-6, "sideways drift {drift} m");
    assert!(
        (total_fy - M * G * theta.sin()).abs() < 1e-6 * M * G,
        "Σfy = {total_fy} vs m·g·sin θ = {}",
        M * G * theta.sin()
    );
}

#[test]
fn unbraked_on_the_grade_the_stuck_patches_roll_with_the_wheels_and_let_go_at_twice_stick_speed() {
    // No brake: in Stick the patch holds the slip (not the position) at zero, so the car
    // rolls downhill without slip, accelerating at m·g·sin θ/(m + 4·I/r²) (wheel spin
    // inertia I = 0.5·20·0.33²; wheel damping 0.25 N·m·s/rad, negligible here); each
    // patch lets go at the located instant its rim speed reaches 2·stick_speed (0.2 m/s).
    let theta = 0.1f64.atan();
    let mut d = parked(0.1, json!({"static_friction": true}));
    d.blocks.retain(|b| b.name != "pedal");
    d.connections
        .retain(|c| !c.iter().any(|p| p.starts_with("pedal")));
    let mut log = vec!["car.vx".to_string()];
    for w in WHEELS {
        log.push(format!("{w}.w"));
        log.push(format!("{w}.forward_slip"));
    }
    d.log(&log);
    d.settings.stop_time = 1.0;
    let (r, audit) = run(&d);
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
    let inertia = 0.5 * 20.0 * 0.33 * 0.33;
    let a_roll = -G * theta.sin() * M / (M + 4.0 * inertia / (0.33 * 0.33));
    for w in WHEELS {
        let go: Vec<_> = r
            .events
            .iter()
            .filter(|e| e.block == w && e.kind == EventTag::Unlock)
            .collect();
        assert_eq!(go.len(), 1, "{w}: {go:?}");
        assert!(go[0].detail.contains("rolls away"), "{}", go[0].detail);
        let i = r.time.iter().position(|&t| t == go[0].time).unwrap();
        let rim = 0.33 * r.get(&format!("{w}.w")).unwrap()[i];
        let sx = r.get(&format!("{w}.forward_slip")).unwrap()[i];
        println!(
            "{w}: lets go at {:.4} s, rim speed {rim:.6} m/s, slip {sx:.3e} m/s",
            go[0].time
        );
        assert!((rim.abs() - 0.2).abs() < 1e-6, "{w}: rim speed {rim}");
        // The speed at that instant is that of uniform rolling acceleration from rest
        // (the patch transient at the start delays it by 0.3 %).
        let t = go[0].time;
        assert!(
            (t - 0.2 / a_roll.abs()).abs() < 0.01 * t,
            "{w}: at {t} s, rolling from rest reaches 0.2 m/s at {} s",
            0.2 / a_roll.abs()
        );
    }
}

/// Dropped from 0.35 m above its resting height onto level ground, braked, with static
/// friction: the body falls freely (`z = z0 − g·t²/2`, no wheel grounded) until the first
/// touchdown, bounces on the dampers, and comes to rest exactly where the same car placed
/// at its resting height settles (height and every wheel load to 1e-6), then does not move;
/// the energy audit closes through the impact.
#[test]
fn dropped_onto_level_ground_the_car_lands_settles_at_the_static_sag_and_stays_put() {
    let stop = 8.0;
    let mut log = vec![
        "car.x".to_string(),
        "car.y".into(),
        "car.z".into(),
        "car.yaw".into(),
    ];
    for w in WHEELS {
        log.push(format!("{w}.fz"));
    }
    let mut placed = parked(0.0, json!({"static_friction": true}));
    placed.log(&log);
    placed.settings.stop_time = stop;
    let (rest, _) = run(&placed);

    let z0 = 0.9;
    let mut dropped = parked(0.0, json!({"static_friction": true}));
    dropped.blocks[0].params.insert("z0".into(), json!(z0));
    dropped.log(&log);
    dropped.settings.stop_time = stop;
    let (r, audit) = run(&dropped);
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");

    // Free fall until the first wheel carries load.
    let fz_sum: Vec<f64> = (0..r.time.len())
        .map(|i| {
            WHEELS
                .iter()
                .map(|w| r.get(&format!("{w}.fz")).unwrap()[i])
                .sum()
        })
        .collect();
    let touch = r
        .time
        .iter()
        .zip(&fz_sum)
        .find(|(_, &f)| f > 0.0)
        .map(|(t, _)| *t)
        .expect("the car never touched down");
    let z = r.get("car.z").unwrap();
    let fall = r
        .time
        .iter()
        .zip(z)
        .filter(|(t, _)| **t < touch)
        .map(|(t, z)| (z - (z0 - G * t * t / 2.0)).abs())
        .fold(0.0, f64::max);
    println!("touchdown at {touch:.6} s, free-fall error {fall:.2e} m");
    assert!(
        touch > 0.1,
        "touched down at {touch} s: the drop height is in the air"
    );
    assert!(fall < 1e-9, "free fall off by {fall} m");

    // At rest where the placed car rests, and staying there.
    let at = |res: &drivelink_core::SimResult, v: &str| last(res, v);
    assert!(
        (at(&r, "car.z") - at(&rest, "car.z")).abs() < 1e-6,
        "rest height {} vs placed {}",
        at(&r, "car.z"),
        at(&rest, "car.z")
    );
    for w in WHEELS {
        let v = format!("{w}.fz");
        assert!(
            (at(&r, &v) - at(&rest, &v)).abs() < 1e-6 * M * G,
            "{w}: load {} vs placed {}",
            at(&r, &v),
            at(&rest, &v)
        );
    }
    for v in ["car.x", "car.y", "car.yaw"] {
        let drift = drift_after(&r, v, 5.0);
        // The same bound as the car parked on the grade (tolerance-level motion of the
        // still-ringing suspension is about 1e-9 m here).
        println!("{v}: drift {drift:.2e} from 5 to {stop} s");
        assert!(drift < 1e-6, "{v} drifts {drift} after settling");
    }
}
