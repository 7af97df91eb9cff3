//! `AntiRollBar` on a car of a `RigidBody` and four `WheelCollider`s: the steady roll
//! angle in a turn against the roll-stiffness sum with and without the bar, the bar's
//! energy stored (not created) in the energy audit; the wheels' `sprung_mass`, `hit_*`
//! and `normal_*` variables at rest.

use drivelink_core::{Diagram, EnergyAudit, SimResult, G};
use serde_json::json;

mod common;
use common::{last, run_audited as run};

const M: f64 = 1500.0;
/// CoM to front axle, CoM to rear axle, half track, wheel radius, suspension travel.
const A: f64 = 1.2;
const B: f64 = 1.5;
const HALF_TRACK: f64 = 0.8;
const RADIUS: f64 = 0.33;
const DIST: f64 = 0.3;
/// Spring rate per unit of the opposite axle distance (the car settles level).
const K: f64 = 30000.0;
const WHEELS: [&str; 4] = ["fl", "fr", "rl", "rr"];

/// The car (body `car`, wheels `fl, fr, rl, rr`) at `v0`, with anti-roll bars of
/// stiffness `bars[0]` on the front axle and `bars[1]` on the rear one (none for 0).
fn car(v0: f64, bars: [f64; 2]) -> Diagram {
    let mut d = Diagram::new("car");
    d.add(
        "car",
        "RigidBody",
        json!({"m": M, "inertia": [550.0, 2400.0, 2600.0], "z0": 0.55, "v0": v0}),
    );
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
            json!({"center": [x, y, -0.1], "radius": RADIUS, "suspension_distance": DIST,
                   "target_position": 0.3, "spring": spring, "damper": 4000.0}),
        );
        d.connect(&["car.frame", &format!("{name}.body")]);
    }
    for (bar, (l, r), kb) in [
        ("arb_front", ("fl", "fr"), bars[0]),
        ("arb_rear", ("rl", "rr"), bars[1]),
    ] {
        if kb == 0.0 {
            continue;
        }
        d.add(
            bar,
            "AntiRollBar",
            json!({"stiffness": kb, "track": 2.0 * HALF_TRACK}),
        );
        d.connect(&["car.frame", &format!("{bar}.body")]);
        d.connect(&[&format!("{l}.compression"), &format!("{bar}.c_left")]);
        d.connect(&[&format!("{r}.compression"), &format!("{bar}.c_right")]);
        d.connect(&[&format!("{bar}.left"), &format!("{l}.bar_force")]);
        d.connect(&[&format!("{bar}.right"), &format!("{r}.bar_force")]);
    }
    d
}

/// A steady left turn: 15 m/s, front wheels steered by 0.04 rad, rear hubs held at the
/// rolling speed (speed sources), 5 s; the audit must close to 1e-6 with no element
/// delivering energy.
fn steady_turn(bars: [f64; 2]) -> (SimResult, EnergyAudit) {
    let mut d = car(15.0, bars);
    d.add("steer", "Constant", json!({"value": 0.04}));
    d.connect(&["steer.y", "fl.steer", "fr.steer"]);
    d.add("w_rear", "Constant", json!({"value": 15.0 / RADIUS}));
    for w in ["rl", "rr"] {
        d.add(&format!("drive_{w}"), "SpeedSource", json!({}));
        d.connect(&[&format!("drive_{w}.flange"), &format!("{w}.hub")]);
        d.connect(&["w_rear.y", &format!("drive_{w}.w")]);
    }
    let mut log: Vec<String> = ["car.z", "car.roll", "car.p", "car.ay"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for w in WHEELS {
        log.push(format!("{w}.fz"));
        log.push(format!("{w}.compression"));
    }
    for bar in ["arb_front", "arb_rear"] {
        if bars[usize::from(bar == "arb_rear")] > 0.0 {
            log.push(format!("{bar}.energy"));
        }
    }
    d.log(&log);
    d.settings.stop_time = 5.0;
    d.settings.rtol = 1e-9;
    let (r, audit) = run(&d);
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:#?}");
    assert!(
        audit.energy_created().is_empty(),
        "energy from nothing: {:?}",
        audit.energy_created()
    );
    assert!(last(&r, "car.p").abs() < 1e-4, "roll still moving");
    (r, audit)
}

/// The roll angle the roll-stiffness sum predicts, and the measured one. With springs `k`
/// and a bar `kb` on an axle of track `t`, a roll `φ` changes the compressions by `∓t·φ/2`
/// and the load difference across the axle by `(k + 2·kb)·t·φ`: the axle's roll stiffness
/// is `K = (k + 2·kb)·t²/2`. The contacts are the roll centre (on the ground), so the
/// springs and bars carry the whole roll moment: `ΣK·φ = m·a_y·h + m·g·e·φ`, the second
/// term the centre of mass moving sideways over the contacts as the body rolls (`e` its
/// height above the contacts along the suspension axes): `φ = m·a_y·h/(ΣK − m·g·e)`.
fn roll_against_stiffness(r: &SimResult, bars: [f64; 2]) -> (f64, f64) {
    let t = 2.0 * HALF_TRACK;
    let k_roll = |k: f64, kb: f64| (k + 2.0 * kb) * t * t / 2.0;
    let sum = k_roll(K * B, bars[0]) + k_roll(K * A, bars[1]);
    let e: f64 = WHEELS
        .iter()
        .map(|w| 0.1 + DIST + RADIUS - last(r, &format!("{w}.compression")))
        .sum::<f64>()
        / 4.0;
    let (ay, h, phi) = (last(r, "car.ay"), last(r, "car.z"), last(r, "car.roll"));
    let predicted = M * ay * h / (sum - M * G * e);
    println!(
        "bars {bars:?}: a_y {ay:.4} m/s², h {h:.5} m, ΣK {sum:.1} N·m/rad, roll {phi:.6} rad, predicted {predicted:.6} rad ({:+.3} %), m·a_y·h/ΣK {:.6} rad",
        100.0 * (phi - predicted) / predicted,
        M * ay * h / sum
    );
    // A left turn rolls the body to the right (positive roll: right side down).
    (phi, predicted)
}

#[test]
fn anti_roll_bar_reduces_the_roll_to_the_roll_stiffness_sum() {
    let none = [0.0, 0.0];
    let front = [25000.0, 0.0];
    let both = [25000.0, 12000.0];
    let mut rolls = Vec::new();
    for bars in [none, front, both] {
        let (r, audit) = steady_turn(bars);
        assert!(last(&r, "car.ay") > 0.25 * G);
        let (phi, predicted) = roll_against_stiffness(&r, bars);
        assert!(
            (phi - predicted).abs() < 0.01 * predicted,
            "bars {bars:?}: roll {phi} rad vs m·a_y·h/(ΣK − m·g·e) = {predicted} rad"
        );
        rolls.push(phi);
        if bars == none {
            continue;
        }
        // The bar's energy is stored: its loss in the audit is nil (its couple's work is
        // −ΔE), and the energy it holds at the end is ½·kb·(c_left − c_right)².
        let dc = last(&r, "fl.compression") - last(&r, "fr.compression");
        let stored = last(&r, "arb_front.energy");
        assert!(
            (stored - 0.5 * bars[0] * dc * dc).abs() < 1e-12 * stored,
            "bar energy {stored} J vs ½·kb·Δc² {} J",
            0.5 * bars[0] * dc * dc
        );
        assert!(stored > 1.0, "the bar holds {stored} J");
        let loss = audit
            .losses
            .iter()
            .find(|(n, _)| n == "arb_front")
            .map(|l| l.1)
            .expect("the bar is in the audit");
        println!("arb_front: stored {stored:.4} J, loss {loss:.3e} J");
        assert!(
            loss.abs() < 1e-6 * stored,
            "the bar's loss {loss} J (it stores {stored} J)"
        );
        // Each axle takes its share of the roll stiffness: the front load transfer over
        // the total is K_front/ΣK.
        let fz = |w: &str| last(&r, &format!("{w}.fz"));
        let (df, dr) = (fz("fr") - fz("fl"), fz("rr") - fz("rl"));
        let t2 = 2.0 * HALF_TRACK * HALF_TRACK;
        let (kf, kr) = ((K * B + 2.0 * bars[0]) * t2, (K * A + 2.0 * bars[1]) * t2);
        let share = df / (df + dr);
        println!(
            "front share of the transfer {share:.6}, of the roll stiffness {:.6}",
            kf / (kf + kr)
        );
        assert!(
            (share - kf / (kf + kr)).abs() < 1e-3 * share,
            "front share {share} vs K_front/ΣK {}",
            kf / (kf + kr)
        );
    }
    assert!(
        rolls[1] < 0.8 * rolls[0] && rolls[2] < rolls[1],
        "{rolls:?}"
    );
}

#[test]
fn wheels_report_sprung_mass_contact_point_and_ground_normal_at_rest() {
    let mut d = car(0.0, [20000.0, 0.0]);
    let mut log = vec!["car.x".to_string(), "car.y".to_string()];
    for w in WHEELS {
        for v in [
            "sprung_mass",
            "hit_x",
            "hit_y",
            "hit_z",
            "normal_x",
            "normal_y",
            "normal_z",
            "compression",
        ] {
            log.push(format!("{w}.{v}"));
        }
    }
    d.log(&log);
    d.settings.stop_time = 5.0;
    d.settings.rtol = 1e-10;
    let (r, audit) = run(&d);
    assert!(audit.relative_residual.abs() < 1e-6, "{audit:#?}");
    let g = |w: &str, v: &str| last(&r, &format!("{w}.{v}"));
    // The sprung masses carry the body: Σ = m, each axle its static share m·b/L, m·a/L.
    let total: f64 = WHEELS.iter().map(|w| g(w, "sprung_mass")).sum();
    assert!((total - M).abs() < 1e-6 * M, "Σ sprung_mass {total} kg");
    for (w, share) in [("fl", B), ("fr", B), ("rl", A), ("rr", A)] {
        let want = 0.5 * M * share / (A + B);
        let got = g(w, "sprung_mass");
        assert!(
            (got - want).abs() < 1e-6 * want,
            "{w}: {got} kg vs {want} kg"
        );
    }
    // The contact points lie on the ground plane under the wheels' centres (the car is
    // level at rest), the ground normal is z.
    let (cx, cy) = (last(&r, "car.x"), last(&r, "car.y"));
    for (w, x, y) in [
        ("fl", A, HALF_TRACK),
        ("fr", A, -HALF_TRACK),
        ("rl", -B, HALF_TRACK),
        ("rr", -B, -HALF_TRACK),
    ] {
        assert!(
            (g(w, "hit_x") - cx - x).abs() < 1e-5,
            "{w}.hit_x {}",
            g(w, "hit_x")
        );
        assert!(
            (g(w, "hit_y") - cy - y).abs() < 1e-5,
            "{w}.hit_y {}",
            g(w, "hit_y")
        );
        assert!(g(w, "hit_z").abs() < 1e-12, "{w}.hit_z {}", g(w, "hit_z"));
        assert_eq!(
            [g(w, "normal_x"), g(w, "normal_y"), g(w, "normal_z")],
            [0.0, 0.0, 1.0]
        );
    }
    // Level at rest: the bar is not twisted and carries nothing.
    assert!((g("fl", "compression") - g("fr", "compression")).abs() < 1e-12);
}
