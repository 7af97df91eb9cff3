//! A car of a `RigidBody` and four `WheelCollider`s: static sag, steady-state cornering
//! against the linear single-track model built from the same tire law, a braked wheel, load
//! transfer in braking and in steady cornering against the moment balances.

use drivelink_core::{Diagram, G};
use serde_json::{json, Value};

mod common;
use common::{last, run_audited as run};

const M: f64 = 1500.0;
/// CoM to front axle, CoM to rear axle, half track, m.
const A: f64 = 1.2;
const B: f64 = 1.5;
const HALF_TRACK: f64 = 0.8;
const DIST: f64 = 0.3;
const TARGET: f64 = 0.3;
/// Spring rate per unit of the opposite axle distance: springs `K·b` front, `K·a` rear
/// carry the static loads at equal compression, so the car settles level.
const K: f64 = 30000.0;

struct Car {
    d: Diagram,
}

/// The car: wheels `fl, fr, rl, rr`, body `car`; `front`/`rear` params merged into the
/// wheels of each axle.
fn car(v0: f64, front: Value, rear: Value) -> Car {
    car_with_body(v0, front, rear, json!({}))
}

/// The car with `body` params merged into the `RigidBody`'s.
fn car_with_body(v0: f64, front: Value, rear: Value, body: Value) -> Car {
    let mut d = Diagram::new("car");
    let mut bp = json!({"m": M, "inertia": [550.0, 2400.0, 2600.0], "z0": 0.55, "v0": v0});
    for (k, v) in body.as_object().unwrap() {
        bp[k] = v.clone();
    }
    d.add("car", "RigidBody", bp);
    for (name, x, y, extra) in [
        ("fl", A, HALF_TRACK, &front),
        ("fr", A, -HALF_TRACK, &front),
        ("rl", -B, HALF_TRACK, &rear),
        ("rr", -B, -HALF_TRACK, &rear),
    ] {
        let spring = if x > 0.0 { K * B } else { K * A };
        let mut p = json!({
            "center": [x, y, -0.1], "radius": 0.33, "suspension_distance": DIST,
            "target_position": TARGET, "spring": spring, "damper": 4000.0
        });
        for (k, v) in extra.as_object().unwrap() {
            p[k] = v.clone();
        }
        d.add(name, "WheelCollider", p);
        d.connect(&["car.frame", &format!("{name}.body")]);
    }
    Car { d }
}

#[test]
fn car_at_rest_settles_to_the_static_sag_and_stays_put() {
    let mut c = car(0.0, json!({}), json!({}));
    c.d.log(&[
        "fl.compression",
        "fr.compression",
        "rl.compression",
        "rr.compression",
        "fl.fz",
        "rl.fz",
        "car.x",
        "car.y",
        "car.yaw",
        "car.pitch",
        "car.roll",
        "car.speed",
    ]);
    c.d.settings.stop_time = 8.0;
    c.d.settings.rtol = 1e-9;
    c.d.settings.atol = 1e-12;
    let (r, audit) = run(&c.d);
    let l = A + B;
    for (w, axle_load, spring) in [
        ("fl", M * G * B / l / 2.0, K * B),
        ("fr", M * G * B / l / 2.0, K * B),
        ("rl", M * G * A / l / 2.0, K * A),
        ("rr", M * G * A / l / 2.0, K * A),
    ] {
        let sag = TARGET * DIST + axle_load / spring;
        let c = last(&r, &format!("{w}.compression"));
        assert!(
            (c - sag).abs() < 1e-6 * sag,
            "{w}: c = {c}, static sag {sag}"
        );
        if w == "fl" || w == "rl" {
            let fz = last(&r, &format!("{w}.fz"));
            assert!(
                (fz - axle_load).abs() < 1e-6 * axle_load,
                "{w}: fz = {fz} vs {axle_load}"
            );
        }
    }
    // Symmetric left/right: no lateral motion, roll or yaw at all. The pitch settles to
    // level (springs in proportion to the loads); while it oscillates the contact points
    // move a little along the ground and the rising branch of the curve holds the car
    // (no drift: the excursion stays below a micrometre and dies out).
    for (v, tol) in [
        ("car.y", 1e-12),
        ("car.yaw", 1e-12),
        ("car.roll", 1e-12),
        ("car.x", 1e-6),
    ] {
        let x = r.get(v).unwrap();
        assert!(x.iter().all(|x| x.abs() < tol), "{v} moved: {:?}", x.last());
    }
    assert!(last(&r, "car.pitch").abs() < 1e-9);
    assert!(last(&r, "car.speed") < 1e-7);
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
}

/// Steady state of a car coasting at `u0` with both front wheels steered by `delta`.
fn corner(u0: f64, delta: f64, sy_front: f64) -> (f64, f64) {
    let mut c = car(
        u0,
        json!({"sideways_friction": {"extremum_slip": sy_front}}),
        json!({}),
    );
    c.d.add("steer", "Constant", json!({"value": delta}));
    c.d.connect(&["steer.y", "fl.steer", "fr.steer"]);
    c.d.log(&["car.r", "car.u", "car.ay"]);
    c.d.settings.stop_time = 6.0;
    c.d.settings.rtol = 1e-8;
    let (r, audit) = run(&c.d);
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
    (last(&r, "car.r"), last(&r, "car.u"))
}

/// The linear single-track model with the same tire law: a wheel's side force per unit
/// slip velocity is `ye/Sy·Fz` (the curve's initial slope), so an axle's cornering
/// stiffness per radian of slip angle `α ≈ sy/u` is `C = 2·ye/Sy·Fz_wheel·u`; the steady
/// yaw rate is `r = u·δ/(L + K·u²)` with the understeer gradient
/// `K = (m/L)·(b/C_f − a/C_r)` (rad per m/s²).
fn bicycle(u: f64, delta: f64, sy_front: f64, sy_rear: f64) -> f64 {
    let l = A + B;
    let (fz_f, fz_r) = (M * G * B / l / 2.0, M * G * A / l / 2.0);
    let (cf, cr) = (2.0 * fz_f / sy_front * u, 2.0 * fz_r / sy_rear * u);
    let k = M / l * (B / cf - A / cr);
    u * delta / (l + k * u * u)
}

#[test]
fn steady_cornering_matches_the_single_track_model() {
    // Equal curves front and rear: neutral steer (K = 0); a softer front: understeer.
    for (sy_front, u0) in [(0.2, 15.0), (0.3, 20.0)] {
        let delta = 0.005;
        let (r, u) = corner(u0, delta, sy_front);
        let expect = bicycle(u, delta, sy_front, 0.2);
        let neutral = u * delta / (A + B);
        println!(
            "front Sy {sy_front}: u = {u:.3} m/s, r = {r:.6} rad/s, single-track {expect:.6} ({:+.3} %), neutral {neutral:.6}",
            100.0 * (r - expect) / expect
        );
        assert!(
            (r - expect).abs() < 0.02 * expect,
            "front Sy {sy_front}: r = {r}, single-track {expect} (neutral {neutral})"
        );
        if sy_front > 0.2 {
            // Understeer: the yaw rate is below the neutral-steer value by the model's margin.
            assert!(
                r < neutral && (neutral - r) > 0.5 * (neutral - expect),
                "r = {r}, neutral {neutral}, model {expect}"
            );
        }
    }
}

#[test]
fn braked_wheel_stops_exactly_and_holds() {
    // A car rolling at 5 m/s with all wheels braked at 2000 N·m: the wheels lock, the car
    // slides to rest, the locked wheels never turn back.
    let mut c = car(5.0, json!({}), json!({}));
    c.d.add("pedal", "Constant", json!({"value": 2000.0}));
    c.d.connect(&["pedal.y", "fl.brake", "fr.brake", "rl.brake", "rr.brake"]);
    c.d.log(&["fl.w", "rl.w", "car.u", "car.x", "fl.brake_mode"]);
    c.d.settings.stop_time = 4.0;
    let (r, audit) = run(&c.d);
    let w = r.get("fl.w").unwrap();
    let n = w.len();
    assert_eq!(
        last(&r, "fl.brake_mode"),
        0.0,
        "brake not locked at the end"
    );
    assert!(
        w[n / 2..].iter().all(|&w| w == 0.0),
        "a locked wheel turned"
    );
    assert!(last(&r, "car.u").abs() < 1e-4, "u = {}", last(&r, "car.u"));
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
}

#[test]
fn braking_load_transfer_follows_the_pitch_moment_balance() {
    // All wheels locked from 20 m/s: every tire slides beyond its asymptote slip, so the
    // deceleration is steady (0.5 g) and the pitch settles; then the front axle carries
    // m·g·b/L + m·|a|·h/L (h the height of the centre of mass).
    let mut c = car(20.0, json!({}), json!({}));
    c.d.add("pedal", "Constant", json!({"value": 3000.0}));
    c.d.connect(&["pedal.y", "fl.brake", "fr.brake", "rl.brake", "rr.brake"]);
    let wheels = ["fl", "fr", "rl", "rr"];
    let mut log = vec![
        "car.z".to_string(),
        "car.pitch".to_string(),
        "car.q".to_string(),
    ];
    for w in wheels {
        for v in ["fz", "fx", "compression"] {
            log.push(format!("{w}.{v}"));
        }
    }
    c.d.log(&log);
    c.d.settings.stop_time = 3.0;
    c.d.settings.rtol = 1e-9;
    let (r, audit) = run(&c.d);
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
    let g = |n: &str| last(&r, n);
    let fz: Vec<f64> = wheels.iter().map(|w| g(&format!("{w}.fz"))).collect();
    let fx: Vec<f64> = wheels.iter().map(|w| g(&format!("{w}.fx"))).collect();
    let total_fx: f64 = fx.iter().sum();
    let h = g("car.z");
    let a = total_fx / M;
    assert!((a + 0.5 * G).abs() < 0.01 * G, "deceleration {a}");
    assert!(
        g("car.q").abs() < 1e-4,
        "pitch still moving: q = {}",
        g("car.q")
    );
    // Textbook transfer (contacts at the static axle distances).
    let l = A + B;
    let front = fz[0] + fz[1];
    let textbook = M * G * B / l - M * a * h / l;
    assert!(
        (front - textbook).abs() < 0.01 * textbook,
        "front {front} N vs m·g·b/L + m·|a|·h/L = {textbook} N"
    );
    // Exact pitch balance with the pitched geometry: Σ x_i·Fz_i + h·ΣFx = 0, x_i the
    // horizontal offset of contact i from the centre of mass.
    let th = g("car.pitch");
    let xs = [A, A, -B, -B];
    let mut m = h * total_fx;
    for (k, w) in wheels.iter().enumerate() {
        let s = DIST + 0.33 - g(&format!("{w}.compression"));
        let zb = -0.1 - s;
        m += (xs[k] * th.cos() + zb * th.sin()) * fz[k];
    }
    println!("front axle {front:.3} N, textbook {textbook:.3} N, pitch {th:.5} rad, moment residual {m:.3e} N·m");
    assert!(
        m.abs() < 1e-3 * M * G * 0.1,
        "pitch moment residual {m} N·m"
    );
}

#[test]
fn cornering_load_transfer_follows_the_roll_moment_balance() {
    // At 15 m/s with both front wheels steered by 0.04 rad: a left turn at about 0.3 g
    // with every tire on the rising branch of its curve. The rear hubs are held at the
    // rolling speed of 15 m/s (speed sources), so the turn becomes truly steady (a coasting
    // car slows down and its roll keeps drifting). Once the roll has settled
    // the outer (right) wheels carry m·a_y·h/t more than the inner ones. The tire forces
    // act at the contacts (force_app_point_distance 0: the roll centre is on the ground),
    // so all of the transfer goes through the springs, and each axle takes its share of
    // the roll stiffness k·t²/2: front K·B/(K·B + K·A) = b/L.
    let mut c = car(15.0, json!({}), json!({}));
    let delta = 0.04;
    c.d.add("steer", "Constant", json!({"value": delta}));
    c.d.connect(&["steer.y", "fl.steer", "fr.steer"]);
    c.d.add("w_rear", "Constant", json!({"value": 15.0 / 0.33}));
    for w in ["rl", "rr"] {
        c.d.add(&format!("drive_{w}"), "SpeedSource", json!({}));
        c.d.connect(&[&format!("drive_{w}.flange"), &format!("{w}.hub")]);
        c.d.connect(&["w_rear.y", &format!("drive_{w}.w")]);
    }
    let wheels = ["fl", "fr", "rl", "rr"];
    let mut log: Vec<String> = [
        "car.z",
        "car.roll",
        "car.pitch",
        "car.p",
        "car.q",
        "car.r",
        "car.ay",
        "car.u",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for w in wheels {
        for v in ["fz", "fx", "fy", "compression"] {
            log.push(format!("{w}.{v}"));
        }
    }
    c.d.log(&log);
    c.d.settings.stop_time = 5.0;
    c.d.settings.rtol = 1e-9;
    let (r, audit) = run(&c.d);
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
    let g = |n: &str| last(&r, n);
    let fz: Vec<f64> = wheels.iter().map(|w| g(&format!("{w}.fz"))).collect();
    let h = g("car.z");
    let ay = g("car.ay");
    assert!(ay > 0.25 * G, "lateral acceleration {ay} m/s²");
    assert!(
        g("car.p").abs() < 1e-4,
        "roll still moving: p = {}",
        g("car.p")
    );
    let t = 2.0 * HALF_TRACK;
    let transfer = 0.5 * ((fz[1] + fz[3]) - (fz[0] + fz[2]));
    // Exact roll balance about the centre of mass with the rolled geometry: the contact of
    // wheel i is the point of its suspension axis `radius + suspension_distance − c` below
    // `center`; its lateral offset in the heading frame is y·cos φ − z·sin φ. The ground
    // forces are the normal loads and the horizontal tire forces (fx, fy in the wheel's
    // heading frame, turned by the steer angle), at the height −h. Steady rotation about
    // the vertical needs the gyroscopic moment q·r·(Izz − Iyy) about the body x axis.
    let phi = g("car.roll");
    let ys = [HALF_TRACK, -HALF_TRACK, HALF_TRACK, -HALF_TRACK];
    let steer: [f64; 4] = [delta, delta, 0.0, 0.0];
    let mut moment = 0.0;
    let mut lateral = 0.0;
    let mut arm = 0.0;
    for (k, w) in wheels.iter().enumerate() {
        let s = DIST + 0.33 - g(&format!("{w}.compression"));
        let zb = -0.1 - s;
        arm -= zb / 4.0;
        let f_lat = g(&format!("{w}.fx")) * steer[k].sin() + g(&format!("{w}.fy")) * steer[k].cos();
        lateral += f_lat;
        moment += (ys[k] * phi.cos() - zb * phi.sin()) * fz[k] + h * f_lat;
    }
    let gyro = g("car.q") * g("car.r") * (2600.0 - 2400.0);
    let scale = M * ay * h;
    println!(
        "roll {phi:.5} rad, ΣF_lat = {lateral:.2} N (m·a_y = {:.2} N), roll moment {moment:.4e} N·m, gyroscopic q·r·(Izz − Iyy) = {gyro:.4e} N·m",
        M * ay
    );
    assert!(
        (moment - gyro).abs() < 1e-6 * scale,
        "roll moment residual {} N·m",
        moment - gyro
    );
    // Textbook: m·a_y·h/t with the contacts at ±t/2, plus the lateral shift of the centre
    // of mass over the contacts as the body rolls (the contacts sit `arm` ≈ 0.6 m below it
    // on the suspension axes: m·g·arm·φ/t, 8 % of the transfer at this roll angle of the
    // soft demo suspension).
    let textbook = M * ay * h / t;
    let with_roll = textbook + M * G * arm * phi / t;
    println!(
        "a_y = {ay:.4} m/s², h = {h:.5} m: transfer {transfer:.2} N, m·a_y·h/t = {textbook:.2} N ({:+.3} %), + m·g·arm·φ/t = {with_roll:.2} N ({:+.3} %)",
        100.0 * (transfer - textbook) / textbook,
        100.0 * (transfer - with_roll) / with_roll
    );
    assert!(
        (transfer - with_roll).abs() < 0.005 * with_roll,
        "transfer {transfer} N vs m·a_y·h/t + m·g·arm·φ/t = {with_roll} N"
    );
    // Per axle: the share of the roll stiffness.
    let front = 0.5 * (fz[1] - fz[0]);
    let rear = 0.5 * (fz[3] - fz[2]);
    let share = front / (front + rear);
    let stiffness_share = B / (A + B);
    println!("front share {share:.6}, roll-stiffness share {stiffness_share:.6}");
    assert!(
        (share - stiffness_share).abs() < 1e-4 * stiffness_share,
        "front share {share} vs roll-stiffness share {stiffness_share}"
    );
}

#[test]
fn parked_on_a_slope_loads_follow_the_incline_and_locked_wheels_creep_at_the_curve_slip() {
    // A 10 % grade rising along +x (the car faces uphill), as a tilted gravity vector in
    // road axes, all four wheels braked far above what holding the car needs. The brakes
    // hold the wheels exactly (w = 0, joints stuck), but the WheelCollider's contact is a
    // law of the slip velocity with no static friction: the tires carry the downhill pull
    // m·g·sin θ only while sliding at the slip where the curve gives it, so the car
    // creeps downhill at that constant speed (the default; with `static_friction` the car
    // stays put: tests/vd_rest.rs, docs/vehicle.md). The normal loads follow the
    // inclined-plane moment balance.
    let theta = 0.1f64.atan();
    let gravity = [-G * theta.sin(), 0.0, -G * theta.cos()];
    let mut c = car_with_body(0.0, json!({}), json!({}), json!({ "gravity": gravity }));
    c.d.add("pedal", "Constant", json!({"value": 3000.0}));
    c.d.connect(&["pedal.y", "fl.brake", "fr.brake", "rl.brake", "rr.brake"]);
    let wheels = ["fl", "fr", "rl", "rr"];
    let mut log: Vec<String> = [
        "car.z",
        "car.pitch",
        "car.q",
        "car.u",
        "car.vx",
        "car.y",
        "car.yaw",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for w in wheels {
        for v in ["fz", "fx", "compression", "w", "brake_mode"] {
            log.push(format!("{w}.{v}"));
        }
    }
    c.d.log(&log);
    c.d.settings.stop_time = 6.0;
    c.d.settings.rtol = 1e-9;
    let (r, audit) = run(&c.d);
    // The tilted gravity's work is potential energy −m·g⃗·p: the audit closes.
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
    let g = |n: &str| last(&r, n);
    for w in wheels {
        assert_eq!(g(&format!("{w}.brake_mode")), 0.0, "{w}: brake not stuck");
        let ws = r.get(&format!("{w}.w")).unwrap();
        assert!(
            ws[ws.len() / 2..].iter().all(|&w| w == 0.0),
            "{w}: a braked wheel turned"
        );
    }
    // Symmetric: no lateral drift or yaw at all.
    assert!(g("car.y").abs() < 1e-12 && g("car.yaw").abs() < 1e-12);
    // Creep: Σfz = m·g·cos θ, so each locked wheel (slip −u) needs curve(u) = tan θ.
    let (xe, ye, xa, ya) = (0.4, 1.0, 0.8, 0.5);
    let (mut lo, mut hi) = (0.0, xe);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if drivelink_blocks::vehicle::friction_curve(mid, xe, ye, xa, ya) < theta.tan() {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let creep = -0.5 * (lo + hi);
    // The contacts move along the road (world x) with the centre of mass (no pitch rate);
    // `u` is along the slightly pitched body axis.
    let u = g("car.vx");
    println!("creep: vx = {u:.9} m/s, the curve's slip for tan θ: {creep:.9} m/s");
    assert!(
        (u - creep).abs() < 1e-6 * creep.abs(),
        "u = {u} m/s, expected creep {creep} m/s"
    );
    assert!(
        g("car.q").abs() < 1e-7,
        "pitch still moving: q = {}",
        g("car.q")
    );
    // Loads: normal to the road Σfz = m·g·cos θ; front axle by the moment balance about
    // the centre of mass, textbook (contacts at the static axle distances):
    // m·g·cos θ·b/L − m·g·sin θ·h/L (the downhill rear axle carries more).
    let fz: Vec<f64> = wheels.iter().map(|w| g(&format!("{w}.fz"))).collect();
    let fx: Vec<f64> = wheels.iter().map(|w| g(&format!("{w}.fx"))).collect();
    let total: f64 = fz.iter().sum();
    assert!(
        (total - M * G * theta.cos()).abs() < 1e-6 * M * G,
        "Σfz = {total} vs m·g·cos θ = {}",
        M * G * theta.cos()
    );
    let total_fx: f64 = fx.iter().sum();
    assert!(
        (total_fx - M * G * theta.sin()).abs() < 1e-6 * M * G,
        "Σfx = {total_fx} vs m·g·sin θ = {}",
        M * G * theta.sin()
    );
    let h = g("car.z");
    let l = A + B;
    let front = fz[0] + fz[1];
    let textbook = M * G * theta.cos() * B / l - M * G * theta.sin() * h / l;
    println!("front axle {front:.3} N, inclined-plane textbook {textbook:.3} N");
    assert!(
        (front - textbook).abs() < 0.01 * textbook,
        "front {front} N vs m·g·cos θ·b/L − m·g·sin θ·h/L = {textbook} N"
    );
    // Exact pitch balance with the pitched geometry, as for braking.
    let th = g("car.pitch");
    let xs = [A, A, -B, -B];
    let mut m = h * total_fx;
    for (k, w) in wheels.iter().enumerate() {
        let s = DIST + 0.33 - g(&format!("{w}.compression"));
        let zb = -0.1 - s;
        m += (xs[k] * th.cos() + zb * th.sin()) * fz[k];
    }
    println!("pitch {th:.6} rad, moment residual {m:.3e} N·m");
    assert!(m.abs() < 1e-6 * M * G * h, "pitch moment residual {m} N·m");
}

/// Regression: a car that rolled over and sank through the ground plane (nothing collides
/// the body with it) met the ground again from below when its axes turned back: the rays
/// started below the plane, the compressions read metres, and the wheels threw the car out
/// at 150 m/s with megajoules from nothing while the audit closed. A ray from a mount below
/// the ground now meets nothing: the car rolls over, falls freely (kinetic energy gained =
/// m·g·depth), and no wheel does positive work on it.
#[test]
fn car_rolled_over_and_sunk_gets_no_wheel_forces_from_below() {
    // Dropped from 1.5 m with a 4 rad/s roll rate: it lands on its side and goes under.
    let mut c = car_with_body(0.0, json!({}), json!({}), json!({"z0": 1.5, "p0": 4.0}));
    c.d.log(&["car.z", "car.vz", "fl.grounded", "fl.compression"]);
    c.d.settings.stop_time = 3.0;
    c.d.settings.rtol = 1e-8;
    c.d.settings.atol = 1e-9;
    let (r, a) = run(&c.d);
    let z = r.get("car.z").unwrap();
    let zmax_after_sinking = r
        .time
        .iter()
        .zip(z)
        .skip_while(|(_, &z)| z > -1.0)
        .map(|(_, &z)| z)
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(
        last(&r, "car.z") < -10.0,
        "sinks: z = {}",
        last(&r, "car.z")
    );
    assert!(
        zmax_after_sinking < -1.0,
        "never thrown back up once 1 m under: max z {zmax_after_sinking}"
    );
    // Free fall at the end: vz = −g per second, no wheel force.
    let vz = r.get("car.vz").unwrap();
    let n = vz.len();
    let dv = (vz[n - 1] - vz[n - 11]) / (r.time[n - 1] - r.time[n - 11]);
    assert!((dv + G).abs() < 1e-6 * G, "free fall: dvz/dt = {dv}");
    assert_eq!(last(&r, "fl.grounded"), 0.0);
    assert_eq!(last(&r, "fl.compression"), -(DIST + 0.33));
    // No element created energy: every wheel's "loss" is a loss (>= 0 to round-off), and
    // the kinetic energy gained is what the height lost gives.
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
    for (name, loss) in &a.losses {
        assert!(*loss > -1e-6 * a.kinetic_final, "{name} created {loss} J");
    }
    let depth = 1.5 - last(&r, "car.z");
    assert!(
        a.kinetic_final < M * G * depth,
        "kinetic {} J <= m·g·depth {} J",
        a.kinetic_final,
        M * G * depth
    );
}

/// Regression: a car whose wheel mounts start below the ground (`z0` taken for
/// the ground clearance) fell through the plane without a word. Each wheel now warns at
/// instantiation, naming itself and the depth of its mount (`z0 + center_z`); a car on
/// its wheels does not.
#[test]
fn wheel_mounts_starting_below_the_ground_are_named_at_instantiation() {
    let reg = drivelink_blocks::registry();
    let sunk = car_with_body(0.0, json!({}), json!({}), json!({"z0": 0.06}));
    let m = drivelink_core::compile(&sunk.d, &reg).expect("compiles");
    let w = m.start_warnings();
    assert_eq!(w.len(), 4, "{w:#?}");
    for (wheel, text) in ["fl", "fr", "rl", "rr"].iter().zip(w) {
        assert!(
            text.starts_with(&format!("WheelCollider '{wheel}'")),
            "{text}"
        );
        // Mount at 0.06 − 0.1 = −0.04 m.
        assert!(text.contains("0.0400 m below the ground"), "{text}");
    }
    // Mounts at 0.55 − 0.1 = 0.45 m: nothing to say.
    let ok = drivelink_core::compile(&car(0.0, json!({}), json!({})).d, &reg).expect("compiles");
    assert!(ok.start_warnings().is_empty(), "{:?}", ok.start_warnings());
}
