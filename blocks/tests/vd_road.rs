//! `Road` under `WheelCollider`s: a car braked on a road grade carries the loads of the
//! same car on the ground plane with gravity tilted (the two are the same problem turned
//! by the grade angle) and its energy audit closes; the contact point lies on the road
//! with the road's normal; a kerb step and a friction patch edge are located events at the
//! contact point's crossing, and the patch's friction scale multiplies a sliding wheel's
//! force; a flat road is the ground plane; bad road parameters are typed errors.

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, EnergyAudit, Error, EventTag, SimResult, G};
use serde_json::{json, Value};

mod common;
use common::{last, run_audited};

const M: f64 = 1500.0;
const A: f64 = 1.2;
const B: f64 = 1.5;
const HALF_TRACK: f64 = 0.8;
const K: f64 = 30000.0;
const WHEELS: [&str; 4] = ["fl", "fr", "rl", "rr"];

/// The car of `vd_rest.rs` (1500 kg, wheelbase 2.7 m) with `gravity`, starting at `v0`
/// along +x, every wheel given `wheel` params, on `road` (a `Road`'s params) when given.
fn car(gravity: [f64; 3], v0: f64, wheel: Value, road: Option<Value>) -> Diagram {
    let mut d = Diagram::new("road_car");
    d.add(
        "car",
        "RigidBody",
        json!({"m": M, "inertia": [550.0, 2400.0, 2600.0], "z0": 0.55, "v0": v0,
               "gravity": gravity}),
    );
    let mut road_line = vec!["road.surface".to_string()];
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
        road_line.push(format!("{name}.road"));
    }
    if let Some(r) = road {
        d.add("road", "Road", r);
        let refs: Vec<&str> = road_line.iter().map(String::as_str).collect();
        d.connect(&refs);
    }
    d.settings.rtol = 1e-9;
    d
}

fn log_wheels(d: &mut Diagram, vars: &[&str]) {
    let mut log = vec!["car.x".to_string(), "car.vx".into(), "car.z".into()];
    for w in WHEELS {
        for v in vars {
            log.push(format!("{w}.{v}"));
        }
    }
    d.log(&log);
}

const DOWN: [f64; 3] = [0.0, 0.0, -G];

#[test]
fn braked_car_on_a_road_grade_carries_the_loads_of_the_tilted_gravity_model() {
    let grade = 0.1f64;
    let theta = grade.atan();
    let wheel = json!({"static_friction": true});
    let brake = |d: &mut Diagram| {
        d.add("pedal", "Constant", json!({"value": 3000.0}));
        d.connect(&["pedal.y", "fl.brake", "fr.brake", "rl.brake", "rr.brake"]);
        d.settings.stop_time = 8.0;
        log_wheels(d, &["fz", "fx", "fy", "compression"]);
    };
    let mut tilted = car(
        [-G * theta.sin(), 0.0, -G * theta.cos()],
        0.0,
        wheel.clone(),
        None,
    );
    brake(&mut tilted);
    let mut road = car(
        DOWN,
        0.0,
        wheel,
        Some(json!({"features": [{"type": "grade", "angle": format!("{theta} rad")}]})),
    );
    brake(&mut road);
    let (rt, at) = run_audited(&tilted);
    let (rr, ar) = run_audited(&road);
    assert!(ar.relative_residual.abs() < 1e-6, "road audit: {ar:?}");
    assert!(ar.energy_created().is_empty(), "{:?}", ar.energy_created());
    assert!(at.relative_residual.abs() < 1e-6);
    let sum = |r: &drivelink_core::SimResult, v: &str| -> f64 {
        WHEELS.iter().map(|w| last(r, &format!("{w}.{v}"))).sum()
    };
    // Static balance on the slope: Σ normal loads = m·g·cos θ, Σ tire forces along the
    // slope = m·g·sin θ (the road pushes the car uphill).
    let (nz, fx) = (sum(&rr, "fz"), sum(&rr, "fx"));
    println!(
        "road grade: Σfz {nz:.6} N, Σfx {fx:.6} N; tilted Σfz {:.6}",
        sum(&rt, "fz")
    );
    assert!((nz - M * G * theta.cos()).abs() < 1e-6 * M * G, "Σfz {nz}");
    assert!((fx - M * G * theta.sin()).abs() < 1e-6 * M * G, "Σfx {fx}");
    // Wheel by wheel: the same loads and compressions as the tilted-gravity model.
    for w in WHEELS {
        for (v, tol) in [("fz", 1e-7), ("compression", 1e-9)] {
            let n = format!("{w}.{v}");
            let (a, b) = (last(&rr, &n), last(&rt, &n));
            println!("{n}: road {a:.9}, tilted {b:.9}");
            let scale = if v == "fz" { M * G } else { 1.0 };
            assert!((a - b).abs() < tol * scale, "{n}: road {a} vs tilted {b}");
        }
    }
    // The road's height at the end: the car stands on the slope (its z rose with x).
    let x = last(&rr, "car.x");
    let (zt, zr) = (last(&rt, "car.z"), last(&rr, "car.z"));
    println!("car.z road {zr}, tilted {zt}, x {x}");
}

/// The height of a cosine bump starting at `x0`, `len` long, `h` high, and its slope.
fn cosine(x: f64, x0: f64, len: f64, h: f64) -> (f64, f64) {
    let s = (x - x0) / len;
    if !(0.0..=1.0).contains(&s) {
        return (0.0, 0.0);
    }
    let a = 2.0 * std::f64::consts::PI * s;
    (
        0.5 * h * (1.0 - a.cos()),
        h * std::f64::consts::PI / len * a.sin(),
    )
}

#[test]
fn contact_point_lies_on_the_bump_with_the_bumps_normal() {
    let (x0, len, h) = (3.0, 2.0, 0.05);
    let mut d = car(
        DOWN,
        5.0,
        json!({}),
        Some(
            json!({"features": [{"type": "bump", "x": x0, "length": len, "height": h, "shape": "cosine"}]}),
        ),
    );
    d.settings.stop_time = 2.0;
    d.settings.output_interval = Some(0.005);
    log_wheels(
        &mut d,
        &[
            "hit_x",
            "hit_y",
            "hit_z",
            "normal_x",
            "normal_z",
            "grounded",
            "compression",
        ],
    );
    let (r, audit) = run_audited(&d);
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
    let mut on_bump = 0;
    let mut worst = (0.0f64, 0.0f64);
    for w in WHEELS {
        let g = |v: &str| r.get(&format!("{w}.{v}")).unwrap().to_vec();
        let (hx, hz, nx, nz, gr) = (
            g("hit_x"),
            g("hit_z"),
            g("normal_x"),
            g("normal_z"),
            g("grounded"),
        );
        for i in 0..hx.len() {
            if gr[i] != 1.0 {
                continue;
            }
            let (z, slope) = cosine(hx[i], x0, len, h);
            let n = 1.0 / (1.0 + slope * slope).sqrt();
            worst.0 = worst.0.max((hz[i] - z).abs());
            worst.1 = worst
                .1
                .max((nx[i] + slope * n).abs())
                .max((nz[i] - n).abs());
            if z > 0.5 * h {
                on_bump += 1;
            }
        }
    }
    println!("contact on the bump: height error {:.3e} m, normal error {:.3e} ({on_bump} samples on its top half)", worst.0, worst.1);
    assert!(on_bump > 20, "the wheels never reached the bump's top half");
    assert!(
        worst.0 < 1e-9,
        "contact point off the road by {} m",
        worst.0
    );
    assert!(worst.1 < 1e-9, "normal off by {}", worst.1);
    // The bump lifts the body: its height varies by a good part of the bump's height.
    let z = r.get("car.z").unwrap();
    let rise = z.iter().cloned().fold(f64::MIN, f64::max) - z[0];
    assert!(rise > 0.2 * h, "body rose only {rise} m");
}

#[test]
fn kerb_step_is_located_where_the_contact_point_crosses_it() {
    let (xk, hk) = (4.0, 0.03);
    let v0 = 4.0;
    let mut d = car(
        DOWN,
        v0,
        json!({}),
        Some(
            json!({"features": [{"type": "bump", "x": xk, "height": hk, "shape": "step", "y": [0.0, 2.0]}]}),
        ),
    );
    d.settings.stop_time = 2.0;
    log_wheels(&mut d, &["hit_x", "compression"]);
    for max_step in [0.5, 0.01] {
        d.settings.max_step = max_step;
        let (r, audit) = run_audited(&d);
        assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
        // Only the left wheels (y > 0) meet the kerb, each once.
        for w in WHEELS {
            let ev: Vec<_> = r
                .events
                .iter()
                .filter(|e| {
                    e.block == w
                        && e.kind == EventTag::ZeroCrossing
                        && e.detail.starts_with("road:")
                })
                .collect();
            let left = w.ends_with('l');
            assert_eq!(ev.len(), usize::from(left), "{w}: {ev:?}");
            if let Some(e) = ev.first() {
                assert!(e.detail.contains(&format!("x = {xk:.6} m")), "{}", e.detail);
                assert!(
                    e.detail.contains(&format!("kerb step +{hk:.6} m")),
                    "{}",
                    e.detail
                );
                // The contact point's analytic crossing: its x at the event's time is the
                // kerb's (the logged hit_x is the contact point on the axis; the body is
                // nearly level, so it is the edge point to the pitch times the height).
                let x_at = r.value_at(&format!("{w}.hit_x"), e.time).unwrap();
                println!(
                    "max_step {max_step}: {w} kerb event at t = {:.9} s, hit_x {x_at:.6}",
                    e.time
                );
                assert!((x_at - xk).abs() < 2e-3, "{w}: hit_x {x_at} at the event");
                // The compression jumps by the kerb's height at the event.
                let n = format!("{w}.compression");
                let i = r.time.iter().position(|&t| t == e.time).unwrap();
                let (before, after) = (r.get(&n).unwrap()[i], r.get(&n).unwrap()[i + 1]);
                assert!(
                    (after - before - hk).abs() < 0.05 * hk,
                    "{w}: compression {before} -> {after} at the kerb"
                );
            }
        }
    }
}

#[test]
fn heightfield_creases_are_located_where_the_contact_point_crosses_them() {
    // A 3 cm triangular ridge as a heightfield (lines x = 4, 5, 6 m): its three creases are
    // slope jumps, each located as an event of every wheel where its contact point crosses
    // it, at the same instants whatever the step size.
    let lines = [4.0, 5.0, 6.0];
    let field = json!({"type": "heightfield", "x": lines, "y": [-5.0, 5.0],
        "z": [[0.0, 0.0], [0.03, 0.03], [0.0, 0.0]]});
    let mut d = car(DOWN, 4.0, json!({}), Some(json!({ "features": [field] })));
    d.settings.stop_time = 3.0;
    log_wheels(&mut d, &["hit_x"]);
    let mut instants: Vec<Vec<f64>> = Vec::new();
    for max_step in [0.5, 0.01] {
        d.settings.max_step = max_step;
        let (r, audit) = run_audited(&d);
        assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
        // Event instants: two rows at one time.
        let events: Vec<usize> = (1..r.time.len())
            .filter(|&i| r.time[i] == r.time[i - 1])
            .collect();
        let mut found = Vec::new();
        for w in WHEELS {
            let hit = r.get(&format!("{w}.hit_x")).unwrap();
            for x in lines {
                let at = events
                    .iter()
                    .find(|&&i| (hit[i] - x).abs() < 2e-3)
                    .unwrap_or_else(|| {
                        panic!("max_step {max_step}: {w} crosses x = {x} m at no event")
                    });
                found.push(r.time[*at]);
            }
        }
        instants.push(found);
    }
    for (a, b) in instants[0].iter().zip(&instants[1]) {
        assert!((a - b).abs() < 1e-6, "crease instants {a} s and {b} s");
    }
}

#[test]
fn friction_patch_scales_a_sliding_wheels_force_from_its_located_edge() {
    let (xp, scale) = (6.0, 0.3);
    let mut d = car(
        DOWN,
        12.0,
        json!({}),
        Some(json!({"mu": [{"x": [xp, 1000.0], "scale": scale}]})),
    );
    // Locked wheels: a brake far beyond the grip.
    d.add("pedal", "Constant", json!({"value": 20000.0}));
    d.connect(&["pedal.y", "fl.brake", "fr.brake", "rl.brake", "rr.brake"]);
    d.settings.stop_time = 1.2;
    log_wheels(&mut d, &["fx", "fz", "hit_x", "w"]);
    let (r, audit) = run_audited(&d);
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:?}");
    for w in WHEELS {
        let e = r
            .events
            .iter()
            .find(|e| e.block == w && e.detail.starts_with("road:"))
            .unwrap_or_else(|| panic!("{w}: no patch event"));
        assert!(e.detail.contains(&format!("x = {xp:.6} m")), "{}", e.detail);
        assert!(
            e.detail.contains(&format!("friction scale 1 -> {scale}")),
            "{}",
            e.detail
        );
        // The force per unit load of the locked, sliding wheel: the curve's asymptote 0.5
        // before the edge, scale × 0.5 after it.
        let ratio = |t: f64| {
            r.value_at(&format!("{w}.fx"), t).unwrap() / r.value_at(&format!("{w}.fz"), t).unwrap()
        };
        let (before, after) = (ratio(e.time - 0.02), ratio(e.time + 0.02));
        println!(
            "{w}: patch edge at t = {:.6} s, fx/fz {before:.5} -> {after:.5}",
            e.time
        );
        assert!(
            (before + 0.5).abs() < 1e-3,
            "{w}: fx/fz {before} before the patch"
        );
        assert!(
            (after + 0.5 * scale).abs() < 1e-3,
            "{w}: fx/fz {after} on the patch"
        );
    }
}

#[test]
fn flat_road_gives_the_ground_planes_run() {
    let run = |road: Option<Value>| {
        let mut d = car(DOWN, 10.0, json!({}), road);
        d.add("steer", "Constant", json!({"value": 0.05}));
        d.connect(&["steer.y", "fl.steer", "fr.steer"]);
        d.settings.stop_time = 2.0;
        log_wheels(&mut d, &["fz", "fy"]);
        run_audited(&d).0
    };
    let (plane, road) = (run(None), run(Some(json!({}))));
    for n in ["car.x", "car.z", "fl.fz", "rr.fy"] {
        let (a, b) = (last(&plane, n), last(&road, n));
        assert!(
            (a - b).abs() < 1e-7 * (1.0 + a.abs()),
            "{n}: plane {a} vs flat road {b}"
        );
    }
}

fn road_error(road: Value) -> String {
    let d = car(DOWN, 0.0, json!({}), Some(road));
    match compile(&d, &registry()) {
        Ok(_) => panic!("accepted"),
        Err(e) => {
            assert!(
                e.flatten()
                    .iter()
                    .all(|x| matches!(x, Error::Param(p) if p.block == "road")),
                "not a ParamError of 'road': {e}"
            );
            e.to_string()
        }
    }
}

#[test]
fn bad_road_parameters_are_typed_errors_naming_the_key() {
    let cases = [
        (
            json!({"features": [{"type": "heightfield", "x": [0, 1, 1], "y": [0], "z": [[0], [0], [0]]}]}),
            "features[0].x",
        ),
        (
            json!({"features": [{"type": "bump", "x": 1, "length": 1, "height": 0.1, "y": [1, 0]}]}),
            "features[0].y",
        ),
        (json!({"mu": [{"x": [5, 2], "scale": 0.5}]}), "mu[0].x"),
        (
            json!({"features": [{"type": "iso8608", "class": "Z", "x": [0, 100]}]}),
            "features[0].class",
        ),
        (
            json!({"features": [{"type": "pothole"}]}),
            "features[0].type",
        ),
        (
            json!({"features": [{"type": "bump", "x": 1, "length": 1, "height": 0.1, "shape": "square"}]}),
            "features[0].shape",
        ),
        (
            json!({"features": [{"type": "grade", "angle": "5 m"}]}),
            "features[0].angle",
        ),
        (json!({"features": {"type": "grade"}}), "features"),
    ];
    for (road, key) in cases {
        let msg = road_error(road);
        println!("{msg}");
        assert!(msg.contains(key), "{msg} does not name {key}");
    }
}

#[test]
fn a_road_line_needs_exactly_one_road() {
    let mut d = car(DOWN, 0.0, json!({}), None);
    d.connect(&["fl.road", "fr.road"]);
    let e = compile(&d, &registry()).err().expect("accepted");
    let msg = e.to_string();
    assert!(
        matches!(e, Error::RoadProviders { providers: 0, .. }),
        "{msg}"
    );
    assert!(msg.contains("fl.road") && msg.contains("fr.road"), "{msg}");
    let mut d = car(DOWN, 0.0, json!({}), Some(json!({})));
    d.add("road2", "Road", json!({}));
    d.connect(&["road2.surface", "fl.road"]);
    let msg = compile(&d, &registry())
        .err()
        .expect("accepted")
        .to_string();
    assert!(msg.contains("2 road provider"), "{msg}");
    let mut d = car(DOWN, 0.0, json!({}), Some(json!({})));
    d.connect(&["road.surface", "car.frame"]);
    assert!(matches!(
        compile(&d, &registry()),
        Err(Error::KindMismatch { .. })
    ));
}

/// The surface of a `Road` with these raw parameters.
fn surface(raw: Value) -> drivelink_blocks::vehicle::road::Surface {
    let reg = registry();
    let t = reg.get("Road").unwrap();
    let p = drivelink_core::compile::resolve_params(
        "road",
        "Road",
        &t.params,
        raw.as_object().unwrap(),
        &drivelink_core::compile::Scope::new(),
    )
    .unwrap();
    drivelink_blocks::vehicle::road::surface(&p).unwrap()
}

#[test]
fn iso8608_profile_has_its_class_psd() {
    use drivelink_blocks::vehicle::road::iso8608::fft;
    let (dx, seg) = (0.05, 1024usize);
    let n_pts = 65536;
    let len = (n_pts - 1) as f64 * dx;
    let bins = seg / 2;
    let mut psd = vec![0.0; bins];
    let mut count = 0.0;
    let hann: Vec<f64> = (0..seg)
        .map(|j| 0.5 * (1.0 - (2.0 * std::f64::consts::PI * j as f64 / seg as f64).cos()))
        .collect();
    let w2: f64 = hann.iter().map(|w| w * w).sum();
    for seed in 1..=4 {
        let s = surface(json!({"features": [
            {"type": "iso8608", "class": "C", "x": [0.0, len], "seed": seed, "dx": dx}]}));
        let z: Vec<f64> = (0..n_pts).map(|j| s.height(j as f64 * dx, 0.0)).collect();
        // Class A is class C over 4 (√16), sample for sample, with the same seed.
        let a = surface(json!({"features": [
            {"type": "iso8608", "class": "A", "x": [0.0, len], "seed": seed, "dx": dx}]}));
        for j in (0..n_pts).step_by(997) {
            let za = a.height(j as f64 * dx, 0.0);
            assert!(
                (4.0 * za - z[j]).abs() <= 1e-12 * (1.0 + z[j].abs()),
                "class A vs C at {j}"
            );
        }
        // Segments away from the faded ends (2 m each).
        for k in 1..(n_pts / seg - 1) {
            let mut re: Vec<f64> = (0..seg).map(|j| z[k * seg + j] * hann[j]).collect();
            let mut im = vec![0.0; seg];
            fft(&mut re, &mut im, -1.0);
            for b in 1..bins {
                psd[b] += 2.0 * (re[b] * re[b] + im[b] * im[b]) * dx / w2;
            }
            count += 1.0;
        }
    }
    let gd = |n: f64| 256e-6 * (n / 0.1).powi(-2);
    let dn = 1.0 / (seg as f64 * dx);
    let mut ratios = Vec::new();
    for (b, p) in psd.iter().enumerate().skip(1) {
        let n = b as f64 * dn;
        if (0.1..=2.0).contains(&n) {
            let r = p / count / gd(n);
            assert!((r - 1.0).abs() < 0.3, "PSD at n = {n:.3}: {r:.3} of Gd");
            ratios.push(r);
        }
    }
    let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
    println!(
        "ISO 8608 class C: {} bins in 0.1..2 cycles/m, {count} segments, mean PSD/Gd {mean:.4}",
        ratios.len()
    );
    assert!((mean - 1.0).abs() < 0.03, "mean PSD/Gd {mean}");
}

#[test]
fn heightfield_is_bilinear_with_edge_values_outside() {
    let s = surface(json!({"features": [{"type": "heightfield",
        "x": [0.0, 1.0, 3.0], "y": [-1.0, 1.0], "z": [[0.0, 0.2], [0.1, 0.1], [0.5, 0.3]]}]}));
    // Inside: bilinear in the cell [1, 3] × [−1, 1].
    let (x, y) = (2.0, 0.5);
    let (fx, fy) = (0.5, 0.75);
    let want = 0.1 * (1.0 - fx) * (1.0 - fy)
        + 0.5 * fx * (1.0 - fy)
        + 0.1 * (1.0 - fx) * fy
        + 0.3 * fx * fy;
    assert!((s.height(x, y) - want).abs() < 1e-15);
    let (h, hx, hy) = s.smooth(x, y, None);
    assert!((h - want).abs() < 1e-15);
    assert!((hx - ((0.5 - 0.1) * (1.0 - fy) + (0.3 - 0.1) * fy) / 2.0).abs() < 1e-15);
    assert!((hy - ((0.1 - 0.1) * (1.0 - fx) + (0.3 - 0.5) * fx) / 2.0).abs() < 1e-15);
    // Outside: the edge value, flat.
    assert_eq!(s.height(10.0, 5.0), 0.3);
    assert_eq!(s.height(-4.0, -5.0), 0.0);
    assert_eq!(s.smooth(10.0, 0.0, None).1, 0.0);
}

/// Adds a rear `AntiRollBar` of `stiffness` (N/m) between `rl` and `rr`, with the wheels'
/// contact points and road normals wired to its contact inputs when `wired`.
fn with_rear_bar(d: &mut Diagram, stiffness: f64, wired: bool) {
    d.add(
        "bar",
        "AntiRollBar",
        json!({"stiffness": stiffness, "track": 2.0 * HALF_TRACK}),
    );
    d.connect(&["car.frame", "bar.body"]);
    d.connect(&["rl.compression", "bar.c_left"]);
    d.connect(&["rr.compression", "bar.c_right"]);
    d.connect(&["bar.left", "rl.bar_force"]);
    d.connect(&["bar.right", "rr.bar_force"]);
    for (w, side) in [("rl", "left"), ("rr", "right")] {
        if !wired {
            break;
        }
        for q in ["hit", "normal"] {
            for c in ["x", "y", "z"] {
                d.connect(&[&format!("{w}.{q}_{c}"), &format!("bar.{q}_{side}_{c}")]);
            }
        }
    }
}

/// The loss booked for element `name` in the audit.
fn loss_of(a: &EnergyAudit, name: &str) -> f64 {
    a.losses
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no loss {name} in {a:?}"))
        .1
}

/// A car with a rear anti-roll bar coasting at 10 m/s over `feature` (under its left
/// wheels only, so the bar twists), and the same car on a flat road: their audits and the
/// bump run's results.
fn coast_over(feature: Value) -> (SimResult, EnergyAudit, EnergyAudit) {
    let run = |features: Value| {
        let mut d = car(DOWN, 10.0, json!({}), Some(json!({ "features": features })));
        with_rear_bar(&mut d, 20000.0, true);
        d.settings.stop_time = 3.0;
        d.log(&["bar.energy", "car.speed"]);
        run_audited(&d)
    };
    let (r, bump) = run(json!([feature]));
    let (_, flat) = run(json!([]));
    (r, bump, flat)
}

/// What must hold for a car coasting over a road feature: the audit closes, nothing
/// delivers energy, the bar's work is minus its energy change (its loss is 0 to the
/// solver's tolerance, relative to the largest energy it stored), and the kinetic energy
/// the feature cost equals the extra losses and stored energy it left (a static road does
/// no work).
fn assert_the_road_does_no_work(feature: Value) {
    let (r, bump, flat) = coast_over(feature.clone());
    let bar_peak = r
        .get("bar.energy")
        .unwrap()
        .iter()
        .cloned()
        .fold(0.0, f64::max);
    let bar_loss = loss_of(&bump, "bar");
    let ke_cost = flat.kinetic_final - bump.kinetic_final;
    let extra: f64 = bump.losses.iter().map(|l| l.1).sum::<f64>()
        - flat.losses.iter().map(|l| l.1).sum::<f64>()
        + (bump.potential_final - flat.potential_final);
    println!(
        "{feature}: residual {:.3e}, bar peak energy {bar_peak:.4} J, bar loss {bar_loss:.3e} J, kinetic energy cost {ke_cost:.4} J, extra losses + stored {extra:.4} J",
        bump.relative_residual
    );
    assert!(bump.relative_residual.abs() <= 1e-6, "{bump:#?}");
    assert!(
        bump.energy_created().is_empty(),
        "{:?}",
        bump.energy_created()
    );
    assert!(bar_peak > 1.0, "the bar hardly twisted: {bar_peak} J");
    assert!(
        bar_loss.abs() <= 1e-6 * bar_peak,
        "the bar's work differs from minus its energy change by {bar_loss} J"
    );
    // The feature costs kinetic energy: the dampers dissipate what it stirred up.
    assert!(ke_cost > 0.0, "the car gained {} J over the road", -ke_cost);
    let scale = bump.kinetic_initial;
    assert!(
        (ke_cost - extra).abs() <= 1e-6 * scale,
        "kinetic energy cost {ke_cost} J vs extra losses and stored energy {extra} J"
    );
}

#[test]
fn coasting_over_a_half_sine_bump_costs_kinetic_energy_and_the_bar_stores_its_energy() {
    assert_the_road_does_no_work(
        json!({"type": "bump", "x": 8.0, "length": 2.0, "height": 0.06, "shape": "half_sine", "y": [0.0, 2.0]}),
    );
}

#[test]
fn coasting_over_a_ramp_costs_kinetic_energy_and_the_bar_stores_its_energy() {
    assert_the_road_does_no_work(
        json!({"type": "bump", "x": 8.0, "length": 3.0, "height": 0.06, "shape": "ramp", "y": [0.0, 2.0]}),
    );
}

#[test]
fn kerb_steps_book_the_suspension_energy_jump_as_kerb_energy() {
    let (x0, len, hk) = (6.0, 8.0, 0.05);
    let mut d = car(
        DOWN,
        10.0,
        json!({}),
        Some(
            json!({"features": [{"type": "bump", "x": x0, "length": len, "height": hk, "shape": "step", "y": [0.0, 2.0]}]}),
        ),
    );
    d.settings.stop_time = 2.5;
    log_wheels(&mut d, &["compression", "kerb_energy"]);
    let (r, a) = run_audited(&d);
    assert!(a.relative_residual.abs() <= 1e-6, "{a:#?}");
    assert!(a.energy_created().is_empty(), "{:?}", a.energy_created());
    // Every left wheel climbs the kerb and comes down again; each crossing's jump is the
    // spring's energy at the compression after it less that before (½·k·(c − c0)², the
    // compressions recorded on both sides of the event instant), and the wheel's
    // kerb_energy is their sum.
    let c0 = 0.3 * 0.3;
    let mut kerbs = 0.0;
    for w in WHEELS {
        let k = if w.starts_with('f') { K * B } else { K * A };
        let spring = |c: f64| 0.5 * k * (c - c0).max(0.0).powi(2);
        let comp = r.get(&format!("{w}.compression")).unwrap();
        let mut sum = 0.0;
        let mut crossings = 0;
        for e in r
            .events
            .iter()
            .filter(|e| e.block == w && e.detail.starts_with("road:"))
        {
            let i = r.time.iter().position(|&t| t == e.time).unwrap();
            let jump = spring(comp[i + 1]) - spring(comp[i]);
            let logged: f64 = e
                .detail
                .split("suspension energy ")
                .nth(1)
                .and_then(|s| s.split(' ').next())
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("no energy in {}", e.detail));
            assert!(
                (logged - jump).abs() <= 1e-6 * jump.abs(),
                "{w}: logged {logged:+.6e} J vs jump {jump:+.6e} J"
            );
            sum += jump;
            crossings += 1;
        }
        let booked = last(&r, &format!("{w}.kerb_energy"));
        println!(
            "{w}: {crossings} kerb crossings, kerb_energy {booked:.6} J (jumps sum {sum:.6} J)"
        );
        assert_eq!(crossings, if w.ends_with('l') { 2 } else { 0 }, "{w}");
        assert!(
            (booked - sum).abs() <= 1e-9 * (1.0 + sum.abs()),
            "{w}: kerb_energy {booked} J vs jumps {sum} J"
        );
        kerbs += booked;
    }
    // Up the kerb the springs gain energy, down it they lose some.
    assert!(last(&r, "fl.kerb_energy").abs() > 0.0);
    // The audit books the jumps once, as impact loss (nothing else is an impact here).
    println!(
        "impact loss {:.9} J, Σ kerb_energy {kerbs:.9} J, residual {:.3e} J",
        a.impact_loss, a.residual
    );
    assert!(
        (a.impact_loss + kerbs).abs() <= 1e-9 * kerbs.abs(),
        "impact loss {} J vs Σ kerb_energy {kerbs} J",
        a.impact_loss
    );
}

/// The value of `name` on both sides of the event instant `t` (the rows recorded just
/// before and just after it).
fn around(r: &SimResult, name: &str, t: f64) -> (f64, f64) {
    let i = r.time.iter().position(|&s| s == t).unwrap();
    assert_eq!(r.time[i + 1], t, "one row on each side of the event at {t}");
    let v = r.get(name).unwrap();
    (v[i], v[i + 1])
}

/// The number after `key` in an event's detail.
fn logged(detail: &str, key: &str) -> f64 {
    detail
        .split(key)
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no number after {key:?} in {detail}"))
}

#[test]
fn kerb_under_the_left_wheels_twists_the_bar_without_the_bar_delivering_energy() {
    // The kerb car with a rear bar wired to the wheels' contacts: each rear-left crossing
    // jumps rl's compression and with it the bar's twist. No force does work across the
    // event, so the bar's energy jump is the event's (impact loss), not the bar's.
    let kb = 20000.0;
    let mut d = car(
        DOWN,
        10.0,
        json!({}),
        Some(
            json!({"features": [{"type": "bump", "x": 6.0, "length": 8.0, "height": 0.05, "shape": "step", "y": [0.0, 2.0]}]}),
        ),
    );
    with_rear_bar(&mut d, kb, true);
    d.settings.stop_time = 2.5;
    log_wheels(&mut d, &["compression", "kerb_energy"]);
    d.log(&["bar.energy"]);
    let (r, a) = run_audited(&d);
    println!(
        "kerb + bar: residual {:.3e} J ({:.3e} relative), bar loss {:.3e} J, impact loss {:.6} J",
        a.residual,
        a.relative_residual,
        loss_of(&a, "bar"),
        a.impact_loss
    );
    assert!(a.relative_residual.abs() <= 1e-10, "{a:#?}");
    assert!(a.energy_created().is_empty(), "{:?}", a.energy_created());
    // The bar's jumps, computed from the compressions recorded on both sides of each
    // event: ½·kb·((cl − cr)² after − (cl − cr)² before).
    let mut bar_jumps = 0.0;
    let mut stored_max: f64 = 0.0;
    let bar_events: Vec<_> = r
        .events
        .iter()
        .filter(|e| e.block == "bar" && e.kind == EventTag::Impact)
        .collect();
    for e in &bar_events {
        let (l0, l1) = around(&r, "rl.compression", e.time);
        let (r0, r1) = around(&r, "rr.compression", e.time);
        let (e0, e1) = (0.5 * kb * (l0 - r0).powi(2), 0.5 * kb * (l1 - r1).powi(2));
        let booked = logged(&e.detail, "J at the event, ");
        println!(
            "t = {:.6} s: bar {e0:.6} -> {e1:.6} J, booked {booked:+.9} J",
            e.time
        );
        assert!(
            (booked - (e1 - e0)).abs() <= 1e-9 * e0.max(e1),
            "bar jump booked {booked} J vs ½·kb·Δ(twist²) {} J",
            e1 - e0
        );
        // The rear-left wheel crossed the kerb at that instant.
        assert!(r
            .events
            .iter()
            .any(|w| w.block == "rl" && w.time == e.time && w.detail.starts_with("road:")));
        bar_jumps += booked;
        stored_max = stored_max.max(e0).max(e1);
    }
    // Up the kerb and down again: two jumps, the first one twisting the bar up.
    assert_eq!(bar_events.len(), 2, "{bar_events:?}");
    assert!(logged(&bar_events[0].detail, "J at the event, ") > 1.0);
    // The bar's own loss is its work less its continuous energy change: zero to the
    // solver's tolerance, the jumps excluded.
    assert!(
        loss_of(&a, "bar").abs() <= 1e-6 * stored_max,
        "bar loss {} J",
        loss_of(&a, "bar")
    );
    // The impact loss is exactly the jumps: the wheels' springs (kerb_energy) and the bar's.
    let kerbs: f64 = WHEELS
        .iter()
        .map(|w| last(&r, &format!("{w}.kerb_energy")))
        .sum();
    assert!(
        (a.impact_loss + kerbs + bar_jumps).abs() <= 1e-9 * (kerbs.abs() + bar_jumps.abs()),
        "impact loss {} J vs Σ kerb_energy {kerbs} J + bar {bar_jumps} J",
        a.impact_loss
    );
}

#[test]
fn bar_wired_to_the_contacts_on_the_plane_acts_as_the_vertical_couple() {
    // A steady turn rolls the car on the ground plane; the bar's share along the plane's
    // normal at the two contacts is the vertical couple of the unwired bar.
    let run = |wired: bool| {
        let mut d = car(DOWN, 15.0, json!({}), None);
        with_rear_bar(&mut d, 20000.0, wired);
        d.add("steer", "Constant", json!({"value": 0.04}));
        d.connect(&["steer.y", "fl.steer", "fr.steer"]);
        d.settings.stop_time = 3.0;
        d.log(&["bar.energy", "car.roll", "car.yaw", "rl.fz"]);
        run_audited(&d)
    };
    let ((wired, a), (couple, _)) = (run(true), run(false));
    assert!(last(&wired, "bar.energy") > 1.0, "the bar hardly twisted");
    for n in ["bar.energy", "car.roll", "car.yaw", "rl.fz"] {
        let (x, y) = (last(&wired, n), last(&couple, n));
        assert!(
            (x - y).abs() <= 1e-7 * (1.0 + y.abs()),
            "{n}: wired {x} vs couple {y}"
        );
    }
    assert!(a.relative_residual.abs() <= 1e-6, "{a:#?}");
    assert!(loss_of(&a, "bar").abs() <= 1e-6 * last(&wired, "bar.energy"));
}

#[test]
fn a_wheels_contact_point_is_the_same_logged_with_or_without_its_tire_forces() {
    // Over a cosine bump while steering: the contact point, normal, compression and load
    // a wheel reports read its contact without the tire forces unless fx or fy is read
    // with them; both give the same values to the bit, and the run is the same.
    let geometry = [
        "hit_x",
        "hit_z",
        "normal_x",
        "normal_z",
        "compression",
        "sprung_mass",
    ];
    let run = |vars: &[&str]| {
        let bump = json!({"features": [
            {"type": "bump", "x": 6.0, "length": 3.0, "height": 0.08, "shape": "cosine"}
        ]});
        let mut d = car(DOWN, 8.0, json!({}), Some(bump));
        d.add("steer", "Constant", json!({"value": 0.03}));
        d.connect(&["steer.y", "fl.steer", "fr.steer"]);
        d.settings.stop_time = 1.5;
        log_wheels(&mut d, vars);
        common::run_completed(&d).1
    };
    let alone = run(&geometry);
    let mut with_forces = geometry.to_vec();
    with_forces.extend(["fx", "fy"]);
    let both = run(&with_forces);
    for w in WHEELS {
        for v in geometry {
            let n = format!("{w}.{v}");
            let (a, b) = (alone.get(&n).unwrap(), both.get(&n).unwrap());
            let bits = |c: &[f64]| c.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(a), bits(b), "{n}");
        }
        // The wheel rides over the bump: its normal tilts forward, then back.
        let nx = alone.get(&format!("{w}.normal_x")).unwrap();
        let (lo, hi) = nx
            .iter()
            .fold((0.0f64, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
        assert!(lo < -0.05 && hi > 0.05, "{w}: normal_x spans {lo}..{hi}");
    }
    let fx = both.get("fl.fx").unwrap();
    assert!(fx.iter().any(|&v| v != 0.0), "the tire forces act");
}
