//! Ride over a sine road against the linear closed form: a car whose front and rear
//! wheels are one road wavelength apart, every wheel alike and the centre of mass midway,
//! sees the same road height at all four contacts, so it only heaves: a one-degree-of-
//! freedom body on the four suspensions (a quarter car without an unsprung mass, which the
//! `WheelCollider` does not have). With `K` and `C` the four springs' and dampers' sums,
//! the body's heave per road height is `Z/H = (C·s + K)/(M·s² + C·s + K)` and the wheel
//! load's variation `ΔFz/H = M·s²·Z/H/4` per wheel. The road is a train of `cosine` bumps
//! of one wavelength each (a cosine wave of amplitude `height/2` about `height/2`),
//! driven at `v = λ·f` for each frequency `f`, held by a `LongitudinalDriver` on the hubs
//! (the speed is read from `car.u`, a variable wired as a signal).

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, RunStatus, SimResult};
use serde_json::json;

const M: f64 = 1000.0;
const SPRING: f64 = 20000.0;
const DAMPER: f64 = 1500.0;
/// The wavelength, the wheelbase: long, so that the speeds of the test are high and the
/// body's kinetic energy large next to what the tires take from it over the waves (at
/// 1.4 m/s on a 2 m wavelength the car coasted down to 0.9 m/s, changing the frequency).
const LAMBDA: f64 = 10.0;
/// The road's amplitude (bump height / 2).
const H0: f64 = 0.005;
/// Where the waves start and how many there are.
const X0: f64 = 20.0;
const WAVES: usize = 30;

/// The car at `v` (m/s) on the wave train; `stop` s.
fn heave_car(v: f64, stop: f64) -> Diagram {
    let mut d = Diagram::new("heave");
    d.add(
        "car",
        "RigidBody",
        json!({"m": M, "inertia": [400.0, 12000.0, 12000.0], "z0": 0.55, "v0": v}),
    );
    let features: Vec<_> = (0..WAVES)
        .map(|k| {
            json!({"type": "bump", "x": X0 + LAMBDA * k as f64, "length": LAMBDA,
                   "height": 2.0 * H0, "shape": "cosine"})
        })
        .collect();
    d.add("road", "Road", json!({"features": features}));
    let mut road_line = vec!["road.surface".to_string()];
    for (name, x, y) in [
        ("fl", LAMBDA / 2.0, 0.8),
        ("fr", LAMBDA / 2.0, -0.8),
        ("rl", -LAMBDA / 2.0, 0.8),
        ("rr", -LAMBDA / 2.0, -0.8),
    ] {
        d.add(
            name,
            "WheelCollider",
            json!({"center": [x, y, -0.1], "radius": 0.3, "suspension_distance": 0.3,
                   "target_position": 0.5, "spring": SPRING, "damper": DAMPER}),
        );
        d.connect(&["car.frame", &format!("{name}.body")]);
        road_line.push(format!("{name}.road"));
        // Each hub driven by the speed controller's command.
        d.add(&format!("drive_{name}"), "TorqueSource", json!({}));
        d.connect(&[&format!("drive_{name}.flange"), &format!("{name}.hub")]);
    }
    // The tires take energy from the body over the waves (their slip follows the contact's
    // vertical motion): a speed controller holds the speed, as on a ride test.
    d.add("v_ref", "Constant", json!({"value": v}));
    d.add(
        "driver",
        "LongitudinalDriver",
        json!({"kp": 2.0, "ki": 1.0, "kff": 0.0}),
    );
    d.add("torque", "Gain", json!({"k": 300.0}));
    d.connect(&["v_ref.y", "driver.v_ref"]);
    d.connect(&["car.u", "driver.v"]);
    d.connect(&["driver.accel", "torque.u"]);
    d.connect(&[
        "torque.y",
        "drive_fl.tau",
        "drive_fr.tau",
        "drive_rl.tau",
        "drive_rr.tau",
    ]);
    let refs: Vec<&str> = road_line.iter().map(String::as_str).collect();
    d.connect(&refs);
    d.log(&["car.x", "car.z", "car.pitch", "fl.fz", "rl.fz"]);
    d.settings.stop_time = stop;
    d.settings.rtol = 1e-9;
    d.settings.atol = 1e-11;
    d
}

/// Half the peak-to-peak of `name` over the samples with `x` in `[x_lo, x_hi]`.
fn amplitude(r: &SimResult, name: &str, x_lo: f64, x_hi: f64) -> f64 {
    let (x, y) = (r.get("car.x").expect("x"), r.get(name).expect(name));
    let window = x
        .iter()
        .zip(y)
        .filter(|(&x, _)| (x_lo..=x_hi).contains(&x))
        .map(|(_, &y)| y);
    let (lo, hi) = window.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| {
        (lo.min(y), hi.max(y))
    });
    0.5 * (hi - lo)
}

/// |Z/H| of the heave closed form at angular frequency `w`.
fn heave_gain(w: f64) -> f64 {
    let (k, c) = (4.0 * SPRING, 4.0 * DAMPER);
    let num = k.hypot(c * w);
    let den = (k - M * w * w).hypot(c * w);
    num / den
}

#[test]
fn heave_over_a_sine_road_follows_the_linear_transfer_function() {
    let fn_hz = (4.0 * SPRING / M).sqrt() / (2.0 * std::f64::consts::PI);
    for f in [0.5 * fn_hz, fn_hz, 2.5 * fn_hz] {
        let v = LAMBDA * f;
        // Settle over the first half of the waves, measure over the second half.
        let stop = (X0 + LAMBDA * (WAVES as f64 - 1.0)) / v;
        let d = heave_car(v, stop);
        let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("{e}"));
        let r = m.run();
        assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
        let x_lo = X0 + LAMBDA * (WAVES as f64 / 2.0);
        let x_hi = X0 + LAMBDA * (WAVES as f64 - 2.0);
        let w = 2.0 * std::f64::consts::PI * f;
        let z = amplitude(&r, "car.z", x_lo, x_hi) / H0;
        let expected = heave_gain(w);
        assert!(
            (z / expected - 1.0).abs() < 1e-3,
            "{f:.3} Hz: heave gain {z:.5}, closed form {expected:.5}"
        );
        // The wheel load varies by M·w²·|Z| / 4 per wheel, to the 2 % of the quarter-car
        // law: the drive torque's fore-aft load transfer and the load's tilt with the road
        // slope add about 0.35 N to the 32 N of the lowest frequency (1.1 %).
        let dfz = amplitude(&r, "fl.fz", x_lo, x_hi);
        let expected_dfz = M * w * w * expected * H0 / 4.0;
        assert!(
            (dfz / expected_dfz - 1.0).abs() < 0.02,
            "{f:.3} Hz: wheel-load amplitude {dfz:.3} N, closed form {expected_dfz:.3} N"
        );
        // The same road under front and rear: the body heaves; what pitch the drive torque
        // makes moves the wheels by less than 1 % of the heave.
        let pitch = amplitude(&r, "car.pitch", x_lo, x_hi);
        assert!(
            pitch * LAMBDA / 2.0 < 0.01 * z * H0,
            "{f:.3} Hz: pitch amplitude {pitch} rad"
        );
    }
}
