//! Ground contact as a located event: a car dropped from any height at any speed lands on
//! its wheels (events `touchdown` at the analytic free-fall time) and settles at its
//! static height whatever `max_step` is; a wheel that leaves the ground (`liftoff`) stores
//! no spring energy, so the energy audit closes with no element delivering energy; a
//! steered wheel starts rolling along its steered heading.

use drivelink_core::{Diagram, EventTag, G};
use serde_json::json;

mod common;
use common::{close, last, run_audited as run};

const M: f64 = 1500.0;
const A: f64 = 1.2;
const B: f64 = 1.5;
const HALF_TRACK: f64 = 0.8;
const DIST: f64 = 0.3;
const RADIUS: f64 = 0.33;
/// Mount height below the centre of mass, m (body z of `center`).
const MOUNT: f64 = -0.1;
/// Springs `K·b` front, `K·a` rear: equal static compression, the car settles level.
const K: f64 = 30000.0;

/// A car (`target_position` as given, no spin damping: it rolls on at its speed) with its centre of mass at `z0`, forward speed
/// `v0`, roll rate `p0`, front wheels steered by `steer` (a constant signal).
fn car(z0: f64, v0: f64, p0: f64, steer: f64, target: f64) -> Diagram {
    let mut d = Diagram::new("car");
    d.add(
        "car",
        "RigidBody",
        json!({"m": M, "inertia": [550.0, 2400.0, 2600.0], "z0": z0, "v0": v0, "p0": p0}),
    );
    d.add("steer", "Constant", json!({"value": steer}));
    for (name, x, y) in [
        ("fl", A, HALF_TRACK),
        ("fr", A, -HALF_TRACK),
        ("rl", -B, HALF_TRACK),
        ("rr", -B, -HALF_TRACK),
    ] {
        let spring = if x > 0.0 { K * B } else { K * A };
        d.add(
            name,
            "WheelCollider",
            json!({"center": [x, y, MOUNT], "radius": RADIUS, "suspension_distance": DIST,
                   "spring": spring, "damper": 4000.0, "wheel_damping_rate": 0.0,
                   "target_position": target}),
        );
        d.connect(&["car.frame", &format!("{name}.body")]);
        if x > 0.0 {
            d.connect(&["steer.y", &format!("{name}.steer")]);
        }
    }
    d.log(&[
        "car.z",
        "car.speed",
        "fl.compression",
        "rl.compression",
        "fl.w",
    ]);
    d.settings.rtol = 1e-8;
    d.settings.atol = 1e-10;
    d
}

/// The static compression of every wheel (equal front and rear) and the level car's
/// centre-of-mass height it gives.
fn static_pose() -> (f64, f64) {
    let c = M * G / (2.0 * (A + B) * K);
    (c, DIST + RADIUS - c - MOUNT)
}

#[test]
fn dropped_car_lands_on_its_wheels_and_settles_at_the_static_height_whatever_max_step() {
    let (c_static, z_static) = static_pose();
    for z0 in [0.8, 2.0, 5.0] {
        for v0 in [0.0, 15.0, 30.0] {
            for max_step in [f64::INFINITY, 0.005] {
                let case = format!("z0 {z0} m, v0 {v0} m/s, max_step {max_step} s");
                let mut d = car(z0, v0, 0.0, 0.0, 0.0);
                d.settings.stop_time = 8.0;
                d.settings.max_step = max_step;
                let (r, audit) = run(&d);
                // The first touchdown is located at the free-fall time of the mount
                // down to the reach of the suspension (all four wheels at once).
                let fall = z0 + MOUNT - (DIST + RADIUS);
                let t_land = (2.0 * fall / G).sqrt();
                let downs: Vec<_> = r
                    .events
                    .iter()
                    .filter(|e| e.kind == EventTag::Touchdown)
                    .collect();
                assert!(downs.len() >= 4, "{case}: {} touchdowns", downs.len());
                for e in &downs[..4] {
                    close(
                        e.time,
                        t_land,
                        1e-6,
                        &format!("{case}: {} touchdown time", e.block),
                    );
                }
                // It never sinks through: the mounts stay above the ground.
                let z_min = r
                    .get("car.z")
                    .unwrap()
                    .iter()
                    .cloned()
                    .fold(f64::INFINITY, f64::min);
                assert!(
                    z_min + MOUNT > 0.0,
                    "{case}: mount reached z = {}",
                    z_min + MOUNT
                );
                close(
                    last(&r, "car.z"),
                    z_static,
                    1e-5,
                    &format!("{case}: settled height"),
                );
                close(
                    last(&r, "fl.compression"),
                    c_static,
                    1e-5,
                    &format!("{case}: fl sag"),
                );
                close(
                    last(&r, "rl.compression"),
                    c_static,
                    1e-5,
                    &format!("{case}: rl sag"),
                );
                assert!(
                    audit.relative_residual.abs() < 1e-6,
                    "{case}: audit does not close: {audit:?}"
                );
                assert!(
                    audit.energy_created().is_empty(),
                    "{case}: energy from nothing: {:?}",
                    audit.energy_created()
                );
                // The landing dissipated what the fall gave: the wheels' losses are the
                // potential energy lost plus the kinetic energy the car lost.
                let lost: f64 = audit.losses.iter().map(|l| l.1).sum();
                let ke_drop = audit.kinetic_initial - audit.kinetic_final;
                let pe_drop = audit.potential_initial - audit.potential_final;
                close(
                    lost,
                    ke_drop + pe_drop,
                    1e-6 * (ke_drop + pe_drop).abs().max(1.0),
                    &format!("{case}: losses"),
                );
            }
        }
    }
}

#[test]
fn wheel_hanging_in_the_air_stores_no_spring_energy() {
    // At the static height (springs preloaded to target_position 0.3) with a hard roll
    // rate: the left wheels lift off and land again. A hanging wheel's spring is slack: before, its stored energy was booked as
    // ½·k·(target·distance)² although the spring force was 0, and the audit named the
    // wheels as delivering energy.
    let (_, z_static) = static_pose();
    let target = 0.3;
    let mut d = car(z_static + target * DIST, 0.0, 5.0, 0.0, target);
    d.settings.stop_time = 4.0;
    let (r, audit) = run(&d);
    let lifts: Vec<_> = r
        .events
        .iter()
        .filter(|e| e.kind == EventTag::Liftoff)
        .collect();
    let lands = r
        .events
        .iter()
        .filter(|e| e.kind == EventTag::Touchdown)
        .count();
    assert!(
        lifts.len() >= 2,
        "the rolled car lifts its wheels: {} liftoffs",
        lifts.len()
    );
    assert_eq!(lifts.len(), lands, "every wheel that lifted landed again");
    assert!(
        audit.energy_created().is_empty(),
        "{:?}",
        audit.energy_created()
    );
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
    // Each liftoff is located where the compression crosses zero.
    for e in &lifts {
        assert!(e.detail.contains("compression -"), "{}", e.detail);
    }
    // The audit of a run that ends while the wheels hang: their springs are slack, so
    // nothing is stored in them and nothing was delivered.
    let t_lift = lifts[0].time;
    let t_land = r
        .events
        .iter()
        .find(|e| e.kind == EventTag::Touchdown && e.time > t_lift)
        .expect("a landing")
        .time;
    d.settings.stop_time = 0.5 * (t_lift + t_land);
    let (r, audit) = run(&d);
    assert!(
        r.events.iter().any(|e| e.kind == EventTag::Liftoff),
        "ends in the air"
    );
    assert!(
        audit.energy_created().is_empty(),
        "{:?}",
        audit.energy_created()
    );
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
}

#[test]
fn steered_wheel_starts_rolling_along_its_steered_heading() {
    // A car at 10 m/s with the front wheels steered 90° at t = 0: the front wheels' contact
    // points move sideways across their heading, so they start without spin; the rear
    // wheels roll at v/r. Before, every wheel started at v/r whatever its steer.
    let (_, z_static) = static_pose();
    for (steer, w_front) in [
        (std::f64::consts::FRAC_PI_2, 0.0),
        (0.5, 10.0 * 0.5f64.cos() / RADIUS),
    ] {
        let mut d = car(z_static, 10.0, 0.0, steer, 0.0);
        d.log(&["fl.w", "rl.w"]);
        d.settings.stop_time = 1e-3;
        let (r, _) = run(&d);
        let fl = r.get("fl.w").unwrap()[0];
        let rl = r.get("rl.w").unwrap()[0];
        close(
            fl,
            w_front,
            1e-9,
            &format!("steer {steer}: front spin at t = 0"),
        );
        close(
            rl,
            10.0 / RADIUS,
            1e-9,
            &format!("steer {steer}: rear spin at t = 0"),
        );
    }
}

#[test]
fn side_slip_is_undefined_at_standstill_not_zero() {
    // A scope of car.beta drew a flat 0 for a car at rest (atan2 of a zero velocity); it
    // is NaN there, a gap, and a number as soon as the car moves.
    let (_, z_static) = static_pose();
    for (v0, moving) in [(0.0, false), (10.0, true)] {
        let mut d = car(z_static, v0, 0.0, 0.0, 0.0);
        d.log(&["car.beta"]);
        d.settings.stop_time = 0.5;
        let (r, _) = run(&d);
        let beta = r.get("car.beta").unwrap();
        if moving {
            assert!(
                beta.iter().all(|b| b.abs() < 1e-6),
                "straight ahead: {beta:?}"
            );
        } else {
            assert!(beta.iter().all(|b| b.is_nan()), "at rest: {beta:?}");
        }
    }
}
