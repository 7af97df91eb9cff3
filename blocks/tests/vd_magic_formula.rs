//! `WheelCollider` with `"tire": "magic_formula"` against the Magic Formula written out
//! independently here: the peak friction and the cornering stiffness at three loads (the
//! block on its own), a car stopping on locked wheels (the deceleration is the formula's
//! force at κ = −1 at the measured loads), a steady turn (each wheel's side force is the
//! formula at its measured slip angle and load), and the parameter errors.
//!
//! The coefficients are a passenger-car tire after the 205/60R15 91V example of
//! H. B. Pacejka, *Tire and Vehicle Dynamics*, 2nd ed. (2006), Appendix 3 (MF-Tyre
//! parameter table, nominal load 4000 N), written in the .tir sign convention (positive
//! pdy1, negative pky1).

use drivelink_blocks::registry;
use drivelink_core::compile::{resolve_params, Scope};
use drivelink_core::frame::FRAME_STATES;
use drivelink_core::probe::Probe;
use drivelink_core::{Block, BlockBuild, Diagram, FrameState, SimResult};
use serde_json::{json, Value};

mod common;
use common::run_audited;

/// The coefficient set (see the module doc).
fn tire() -> Value {
    json!({
        "fz0": 4000.0,
        "pcx1": 1.685, "pdx1": 1.210, "pdx2": -0.037,
        "pex1": 0.344, "pex2": 0.095, "pex3": -0.020, "pex4": 0.0,
        "pkx1": 21.51, "pkx2": -0.163, "pkx3": 0.245,
        "phx1": -0.002, "phx2": 0.002, "pvx1": 0.0, "pvx2": 0.0,
        "rbx1": 12.35, "rbx2": -10.77, "rcx1": 1.092, "rhx1": 0.007,
        "pcy1": 1.193, "pdy1": 0.990, "pdy2": -0.145,
        "pey1": -1.003, "pey2": -0.537, "pey3": -0.083,
        "pky1": -14.95, "pky2": 2.130,
        "phy1": 0.003, "phy2": -0.001, "pvy1": 0.045, "pvy2": -0.024,
        "rby1": 6.461, "rby2": 4.196, "rby3": -0.015, "rcy1": 1.081, "rhy1": 0.009
    })
}

/// Coefficient `k` of [`tire`] (0 when absent).
fn c(k: &str) -> f64 {
    tire()[k].as_f64().unwrap_or(0.0)
}

fn sgn(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// The Magic Formula's `(Fx, Fy)` at `(κ, α, Fz)`, written out term by term from the
/// equations (independent of the block's code).
fn mf(kappa: f64, alpha: f64, fz: f64) -> (f64, f64) {
    let fz0 = c("fz0");
    let dfz = (fz - fz0) / fz0;
    // Longitudinal.
    let kx = kappa + c("phx1") + c("phx2") * dfz;
    let cx = c("pcx1");
    let dx = (c("pdx1") + c("pdx2") * dfz) * fz;
    let ex = (c("pex1") + c("pex2") * dfz + c("pex3") * dfz * dfz) * (1.0 - c("pex4") * sgn(kx));
    let kxk = fz * (c("pkx1") + c("pkx2") * dfz) * (c("pkx3") * dfz).exp();
    let bx = kxk / (cx * dx);
    let fx0 = dx * (cx * (bx * kx - ex * (bx * kx - (bx * kx).atan())).atan()).sin()
        + fz * (c("pvx1") + c("pvx2") * dfz);
    // Lateral.
    let ay = alpha + c("phy1") + c("phy2") * dfz;
    let cy = c("pcy1");
    let dy = (c("pdy1") + c("pdy2") * dfz) * fz;
    let ey = (c("pey1") + c("pey2") * dfz) * (1.0 - c("pey3") * sgn(ay));
    let ky = c("pky1") * fz0 * (2.0 * (fz / (c("pky2") * fz0)).atan()).sin();
    let by = ky / (cy * dy);
    let fy0 = dy * (cy * (by * ay - ey * (by * ay - (by * ay).atan())).atan()).sin()
        + fz * (c("pvy1") + c("pvy2") * dfz);
    // Combined.
    let bxa = c("rbx1") * (c("rbx2") * kappa).atan().cos();
    let gx = (c("rcx1") * (bxa * (alpha + c("rhx1"))).atan()).cos()
        / (c("rcx1") * (bxa * c("rhx1")).atan()).cos();
    let byk = c("rby1") * (c("rby2") * (alpha - c("rby3"))).atan().cos();
    let gy = (c("rcy1") * (byk * (kappa + c("rhy1"))).atan()).cos()
        / (c("rcy1") * (byk * c("rhy1")).atan()).cos();
    (fx0 * gx, fy0 * gy)
}

/// `|a − b| ≤ tol·|b|`.
fn rel(a: f64, b: f64, tol: f64, what: &str) {
    assert!(
        (a - b).abs() <= tol * b.abs(),
        "{what}: {a} vs {b} (relative {:.3e})",
        (a - b).abs() / b.abs()
    );
}

/// A wheel force `a` against the formula's `b`: equal to 1e-12 of the load `fz` (a
/// force near zero is a difference of terms of the size of the load).
fn near(a: f64, b: f64, fz: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-12 * fz,
        "{what}: {a} vs {b} (load {fz} N)"
    );
}

fn build(params: Value) -> Result<Box<dyn Block>, String> {
    let reg = registry();
    let t = reg.get("WheelCollider").expect("registered");
    let Value::Object(raw) = params else {
        panic!("params must be an object")
    };
    let p = resolve_params("w", "WheelCollider", &t.params, &raw, &Scope::new()).map_err(|e| {
        e.iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    match &t.build {
        BlockBuild::Primitive(f) => f(&p).map_err(|e| e.to_string()),
        _ => panic!("not primitive"),
    }
}

/// The wheel on its own: radius 0.3 m, spring 1e5 N/m with its rest point at 0.15 m of
/// compression, mount 0.2 m below the body's centre of mass.
const R: f64 = 0.3;
const SPRING: f64 = 1.0e5;

fn wheel() -> Box<dyn Block> {
    build(
        json!({"center": [0.0, 0.0, -0.2], "radius": R, "suspension_distance": 0.3,
        "spring": SPRING, "damper": 1000.0, "target_position": 0.5,
        "tire": "magic_formula", "mf": tire()}),
    )
    .unwrap()
}

/// A level body at the height that loads the wheel with `fz`, moving at `u` forward and
/// `v` to the left (yaw 0).
fn state(fz: f64, u: f64, v: f64) -> [f64; FRAME_STATES] {
    // Compression 0.15 + fz/spring; mount height = suspension_distance + radius − c.
    let c = 0.15 + fz / SPRING;
    let z = (0.3 + R - c) + 0.2;
    let mut s = FrameState::initial([0.0, 0.0, z], 0.0, [0.0; 3], [0.0; 3]);
    s[7] = u;
    s[8] = v;
    s
}

/// The block's `(Fx, Fy, fz)` with the body at `(u, v)`, spin `w`.
fn forces(p: &mut Probe, fz: f64, u: f64, v: f64, w: f64) -> (f64, f64, f64) {
    p.frame_state(0, &state(fz, u, v)).speeds(&[0.0, w]);
    let (_, loads, _) = p.forces_and_loads();
    (loads[0], loads[1], p.outputs()[2])
}

#[test]
fn magic_formula_peak_friction_and_cornering_stiffness_at_three_loads() {
    let mut b = wheel();
    let mut p = Probe::new(b.as_mut());
    p.inputs(&[0.0, 0.0, 1.0]);
    let u = 20.0;
    for load in [2000.0, 4000.0, 6000.0] {
        // Pure longitudinal slip: κ = (w·r − u)/u; the maximum of Fx/Fz over κ by
        // golden-section search on the block's force.
        let fx_over_fz = |p: &mut Probe, kappa: f64| {
            let (fx, _, fz) = forces(p, load, u, 0.0, u * (1.0 + kappa) / R);
            (fx / fz, fz)
        };
        let (mut a, mut bb) = (0.0, 0.5);
        let g = 0.5 * (5f64.sqrt() - 1.0);
        for _ in 0..100 {
            let (x1, x2) = (bb - g * (bb - a), a + g * (bb - a));
            if fx_over_fz(&mut p, x1).0 > fx_over_fz(&mut p, x2).0 {
                bb = x2;
            } else {
                a = x1;
            }
        }
        let (peak, fz) = fx_over_fz(&mut p, 0.5 * (a + bb));
        // The formula's peak: sin(...) = 1 (Cx > 1), so μ = (Dx + SVx)/Fz.
        let dfz = (fz - 4000.0) / 4000.0;
        let mu_peak = c("pdx1") + c("pdx2") * dfz + c("pvx1") + c("pvx2") * dfz;
        rel(peak, mu_peak, 1e-9, &format!("peak Fx/Fz at {load} N"));
        assert!((fz - load).abs() < 1e-6 * load, "load {fz} vs {load}");
        // Cornering stiffness: dFy/dα at α = 0, κ = 0, by a central difference of the
        // block (α = atan(v/u)) against the formula's derivative in closed form.
        let h: f64 = 1e-6;
        let (vp, vm) = (u * h.tan(), u * (-h).tan());
        let w = u / R;
        let (_, fyp, _) = forces(&mut p, load, u, vp, w);
        let (_, fym, _) = forces(&mut p, load, u, vm, w);
        let slope = (fyp - fym) / ((vp / u).atan() - (vm / u).atan());
        rel(
            slope,
            cornering_stiffness(fz),
            1e-9,
            &format!("dFy/dα at {load} N"),
        );
        // The side force at a finite slip angle, combined with a driving slip.
        let (kappa, alpha): (f64, f64) = (0.05, 0.04);
        let (fx, fy, fz) = forces(&mut p, load, u, u * alpha.tan(), u * (1.0 + kappa) / R);
        let (ex, ey) = mf(kappa, (u * alpha.tan() / u).atan(), fz);
        rel(fx, ex, 1e-12, "combined Fx");
        rel(fy, ey, 1e-12, "combined Fy");
        // A contact sliding left (α > 0) is pushed right (negative pky1).
        assert!(fy < 0.0, "fy {fy}");
    }
}

/// `dFy/dα` at `α = 0`, `κ = 0` of the formula, differentiated by hand:
/// `Fy0 = D·sin(C·atan(φ)) + SV`, `φ = B·x − E·(B·x − atan(B·x))`, `x = α + SHy`:
/// `dFy0/dα = D·cos(C·atan φ)·C/(1 + φ²)·(B − E·(B − B/(1 + B²x²)))`; at κ = 0 the
/// combined weighting is 1 for every α.
fn cornering_stiffness(fz: f64) -> f64 {
    let fz0 = c("fz0");
    let dfz = (fz - fz0) / fz0;
    let x = c("phy1") + c("phy2") * dfz;
    let cy = c("pcy1");
    let dy = (c("pdy1") + c("pdy2") * dfz) * fz;
    let ey = (c("pey1") + c("pey2") * dfz) * (1.0 - c("pey3") * sgn(x));
    let ky = c("pky1") * fz0 * (2.0 * (fz / (c("pky2") * fz0)).atan()).sin();
    let by = ky / (cy * dy);
    let phi = by * x - ey * (by * x - (by * x).atan());
    let dphi = by - ey * (by - by / (1.0 + by * by * x * x));
    dy * (cy * phi.atan()).cos() * cy / (1.0 + phi * phi) * dphi
}

const M: f64 = 1500.0;

/// A car of 1500 kg on four Magic Formula wheels (`fl`, `fr`, `rl`, `rr`), wheelbase
/// 2.7 m, track 1.6 m, starting at `v0` along x.
fn car(v0: f64) -> Diagram {
    let mut d = Diagram::new("mf_car");
    d.add(
        "car",
        "RigidBody",
        json!({"m": M, "inertia": [550.0, 2400.0, 2600.0], "z0": 0.55, "v0": v0}),
    );
    for (name, x, y) in [
        ("fl", 1.2, 0.8),
        ("fr", 1.2, -0.8),
        ("rl", -1.5, 0.8),
        ("rr", -1.5, -0.8),
    ] {
        let spring = if x > 0.0 { 45000.0 } else { 36000.0 };
        d.add(
            name,
            "WheelCollider",
            json!({"center": [x, y, -0.1], "radius": 0.33, "suspension_distance": 0.3,
                "target_position": 0.3, "spring": spring, "damper": 4000.0,
                "tire": "magic_formula", "mf": tire()}),
        );
        d.connect(&["car.frame", &format!("{name}.body")]);
    }
    d
}

const WHEELS: [&str; 4] = ["fl", "fr", "rl", "rr"];

fn col<'a>(r: &'a SimResult, n: &str) -> &'a [f64] {
    r.get(n).unwrap_or_else(|| panic!("no {n}"))
}

/// The world acceleration's components along the body's heading on the ground and to
/// its left at sample `i` (from the body-axis accelerations and the Euler angles).
fn horizontal_accel(r: &SimResult, i: usize) -> (f64, f64) {
    let g = |n: &str| col(r, n)[i];
    let (phi, th, psi) = (g("car.roll"), g("car.pitch"), g("car.yaw"));
    let a = [g("car.ax"), g("car.ay"), g("car.az")];
    // Rotation body -> world, Z-Y-X Euler angles.
    let (sf, cf, st, ct, sp, cp) = (
        phi.sin(),
        phi.cos(),
        th.sin(),
        th.cos(),
        psi.sin(),
        psi.cos(),
    );
    let rot = [
        [cp * ct, cp * st * sf - sp * cf, cp * st * cf + sp * sf],
        [sp * ct, sp * st * sf + cp * cf, sp * st * cf - cp * sf],
    ];
    let aw = [
        rot[0][0] * a[0] + rot[0][1] * a[1] + rot[0][2] * a[2],
        rot[1][0] * a[0] + rot[1][1] * a[1] + rot[1][2] * a[2],
    ];
    // The heading: the body's x axis projected on the ground.
    let (hx, hy) = (rot[0][0], rot[1][0]);
    let n = hx.hypot(hy);
    let (hx, hy) = (hx / n, hy / n);
    (aw[0] * hx + aw[1] * hy, aw[1] * hx - aw[0] * hy)
}

/// The slips of wheel `n` at sample `i` from its outputs: `vx = r·w − forward_slip`.
fn slips(r: &SimResult, n: &str, i: usize, radius: f64) -> (f64, f64) {
    let sx = col(r, &format!("{n}.forward_slip"))[i];
    let sy = col(r, &format!("{n}.sideways_slip"))[i];
    let w = col(r, &format!("{n}.w"))[i];
    let vx = radius * w - sx;
    let d = vx.abs().max(0.5);
    (sx / d, (sy / d).atan())
}

fn log_all(d: &mut Diagram) {
    let mut names: Vec<String> = [
        "car.roll",
        "car.pitch",
        "car.yaw",
        "car.ax",
        "car.ay",
        "car.az",
        "car.speed",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for w in WHEELS {
        for v in [
            "fz",
            "fx",
            "fy",
            "w",
            "forward_slip",
            "sideways_slip",
            "brake_mode",
        ] {
            names.push(format!("{w}.{v}"));
        }
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    d.log(&refs);
}

#[test]
fn magic_formula_car_on_locked_wheels_decelerates_by_the_formula_at_kappa_minus_one() {
    let mut d = car(20.0);
    d.add("pedal", "Constant", json!({"value": 4000.0}));
    d.connect(&["pedal.y", "fl.brake", "fr.brake", "rl.brake", "rr.brake"]);
    log_all(&mut d);
    d.settings.stop_time = 4.0;
    let (r, audit) = run_audited(&d);
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
    let mut checked = 0;
    let mut decel = Vec::new();
    for i in 0..r.time.len() {
        let locked = WHEELS.iter().all(|w| col(&r, &format!("{w}.w"))[i] == 0.0);
        if !locked || col(&r, "car.speed")[i] < 1.0 {
            continue;
        }
        let mut sum = 0.0;
        let mut side = 0.0;
        for w in WHEELS {
            let fz = col(&r, &format!("{w}.fz"))[i];
            let (kappa, alpha) = slips(&r, w, i, 0.33);
            assert_eq!(kappa, -1.0, "{w} at t = {}", r.time[i]);
            let (fx, fy) = mf(-1.0, alpha, fz);
            near(col(&r, &format!("{w}.fx"))[i], fx, fz, "wheel fx");
            near(col(&r, &format!("{w}.fy"))[i], fy, fz, "wheel fy");
            sum += fx;
            side += fy;
        }
        let (ah, al) = horizontal_accel(&r, i);
        rel(
            ah,
            sum / M,
            1e-9,
            &format!("deceleration at t = {}", r.time[i]),
        );
        assert!(
            (al - side / M).abs() < 1e-9 * (sum / M).abs(),
            "lateral {al} vs {}",
            side / M
        );
        decel.push(-ah);
        checked += 1;
    }
    assert!(checked > 50, "only {checked} samples in the slide");
    // The locked tire slides at about 0.8 g: μ(κ = −1) of this tire is 0.79..0.82.
    let mean = decel.iter().sum::<f64>() / decel.len() as f64;
    let stop = r.time[col(&r, "car.speed")
        .iter()
        .position(|&v| v < 1e-3)
        .unwrap_or(0)];
    println!(
        "{checked} samples in the slide, mean deceleration {mean:.4} m/s² ({:.4} g), speed under 1 mm/s at {stop:.3} s",
        mean / 9.80665
    );
    assert!((7.5..8.3).contains(&mean), "mean deceleration {mean}");
    // The brake holds the stopped wheels and the car comes to rest.
    assert!(col(&r, "car.speed").last().unwrap().abs() < 1e-3);
    for w in WHEELS {
        assert_eq!(*col(&r, &format!("{w}.brake_mode")).last().unwrap(), 0.0);
    }
}

#[test]
fn magic_formula_steady_turn_side_forces_follow_the_formula_at_the_measured_slip() {
    // Front wheels steered 0.03 rad; the rear hubs held at the rolling speed of 15 m/s
    // (speed sources), so the turn is steady (a coasting car slows down).
    let mut d = car(15.0);
    d.add("steer", "Constant", json!({"value": 0.03}));
    d.connect(&["steer.y", "fl.steer", "fr.steer"]);
    d.add("w_rear", "Constant", json!({"value": 15.0 / 0.33}));
    for w in ["rl", "rr"] {
        d.add(&format!("drive_{w}"), "SpeedSource", json!({}));
        d.connect(&[&format!("drive_{w}.flange"), &format!("{w}.hub")]);
        d.connect(&["w_rear.y", &format!("drive_{w}.w")]);
    }
    log_all(&mut d);
    d.log(&["car.r", "car.u"]);
    d.settings.stop_time = 6.0;
    let (r, audit) = run_audited(&d);
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
    let i = r.time.len() - 1;
    // Steady: the yaw rate has settled.
    let rr = col(&r, "car.r");
    let j = r.time.iter().position(|&t| t >= 5.0).unwrap();
    assert!(
        (rr[i] - rr[j]).abs() < 1e-3 * rr[i].abs(),
        "yaw rate {} -> {}",
        rr[j],
        rr[i]
    );
    let mut lateral = 0.0;
    for w in WHEELS {
        let fz = col(&r, &format!("{w}.fz"))[i];
        let (kappa, alpha) = slips(&r, w, i, 0.33);
        let (fx, fy) = mf(kappa, alpha, fz);
        near(
            col(&r, &format!("{w}.fy"))[i],
            fy,
            fz,
            &format!("{w} side force"),
        );
        near(
            col(&r, &format!("{w}.fx"))[i],
            fx,
            fz,
            &format!("{w} forward force"),
        );
        assert!(alpha.abs() > 1e-3, "{w}: slip angle {alpha}");
        lateral += fy;
    }
    // Turning left: the tires push the car to the left (the contacts slide right).
    assert!(lateral > 0.0 && rr[i] > 0.0);
    println!(
        "u = {:.3} m/s, r = {:.5} rad/s, ay = {:.4} m/s², Σfy = {lateral:.1} N",
        col(&r, "car.u")[i],
        rr[i],
        col(&r, "car.ay")[i]
    );
}

#[test]
fn magic_formula_bad_coefficients_are_named() {
    let base = json!({"center": [0.0, 0.0, 0.0], "tire": "magic_formula"});
    let with = |mf: Value| {
        let mut p = base.clone();
        p["mf"] = mf;
        build(p).err().unwrap_or_else(|| panic!("accepted"))
    };
    let e = with(json!({"pkx1": 20.0}));
    assert!(
        e.contains("block 'w'") && e.contains("mf.fz0") && e.contains("required"),
        "{e}"
    );
    let e = with(json!({"fz0": -5.0}));
    assert!(e.contains("mf.fz0") && e.contains("> 0"), "{e}");
    let e = with(json!({"fz0": 4000.0, "pdx1": 0.0, "pky2": 2.0}));
    assert!(e.contains("mf.pdx1") && e.contains("Bx"), "{e}");
    let e = with(json!({"fz0": 4000.0, "pcy1": 0.0, "pky2": 2.0}));
    assert!(e.contains("mf.pcy1") && e.contains("By"), "{e}");
    let e = with(json!({"fz0": 4000.0}));
    assert!(e.contains("mf.pky2"), "{e}");
    let e = with(json!({"fz0": 4000.0, "pky2": 2.0, "pdx3": 1.0}));
    assert!(
        e.contains("block 'w'") && e.contains("unknown key 'pdx3'"),
        "{e}"
    );
    let e = build(base.clone()).err().unwrap();
    assert!(e.contains("'mf'") && e.contains("required"), "{e}");
    let e = build(json!({"center": [0, 0, 0], "mf": {"fz0": 4000}}))
        .err()
        .unwrap();
    assert!(e.contains("'mf'") && e.contains("magic_formula"), "{e}");
    let mut p = base.clone();
    p["mf"] = tire();
    p["static_friction"] = json!(true);
    let e = build(p).err().unwrap();
    assert!(e.contains("static_friction"), "{e}");
    // Units are allowed in the record.
    let mut p = base;
    p["mf"] = json!({"fz0": "4 kN", "pky2": 2.0});
    assert!(build(p).is_ok());
}
