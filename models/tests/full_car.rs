//! The full-car demo: the behaviour the SimDriveline documentation describes.

use drivelink_core::{compile, EventTag, Model, RunStatus, SimResult};
use drivelink_models::{full_car, FullCarParams};

fn run() -> (Model, SimResult) {
    let d = full_car(&FullCarParams::default());
    let mut m = compile(&d, &drivelink_blocks::registry()).unwrap_or_else(|e| panic!("{e}"));
    let r = m.run();
    (m, r)
}

#[test]
fn full_car_shifts_through_four_gears_and_neutral_then_brakes_to_a_stop() {
    let (mut m, r) = run();
    assert_eq!(r.status, RunStatus::Stopped, "{}", r.message);
    // Braking from 44 s stops the vehicle at 47.5 s (±0.2 s).
    assert!((r.end_time - 47.5).abs() < 0.2, "stopped at {}", r.end_time);
    assert!(r.last("vehicle.v").unwrap().abs() < 1e-9);

    // Drive-ratio plateaus equal the analytic CR-CR ratios (g1 = 2.3, g2 = 2.0).
    let (g1, g2) = (2.3, 2.0);
    let plateaus = [
        (5.0, 1.0 + g2),
        (15.0, (1.0 + g1 + g2) / (1.0 + g1)),
        (25.0, 1.0),
        (35.0, g1 / (1.0 + g1)),
    ];
    for (t, ratio) in plateaus {
        let got = r.value_at("gearbox.ratio", t).unwrap();
        assert!(
            (got - ratio).abs() < 1e-6,
            "ratio at {t} s: {got}, expected {ratio}"
        );
    }

    // Shifts are visible as clutch events in the right order and time window.
    let first = |block: &str, kind: EventTag, after: f64| {
        r.events
            .iter()
            .find(|e| e.block == block && e.kind == kind && e.time >= after)
            .map(|e| e.time)
            .unwrap_or_else(|| panic!("no {} event of {block} after {after}", kind.as_str()))
    };
    let within = |t: f64, a: f64, b: f64| assert!(t > a && t < b, "{t} not in ({a}, {b})");
    // 1st: A and D lock right after the start.
    within(first("gearbox.clutch_A", EventTag::Lock, 0.0), 0.0, 1.0);
    within(first("gearbox.brake_D", EventTag::Lock, 0.0), 0.0, 1.0);
    // 1->2: D breaks away, C locks.
    within(first("gearbox.brake_D", EventTag::Unlock, 10.0), 10.0, 11.0);
    within(first("gearbox.brake_C", EventTag::Lock, 10.0), 10.0, 11.0);
    // 2->3: C breaks away, B locks.
    within(first("gearbox.brake_C", EventTag::Unlock, 20.0), 20.0, 21.0);
    within(first("gearbox.clutch_B", EventTag::Lock, 20.0), 20.0, 21.0);
    // 3->4: A breaks away, C locks.
    within(
        first("gearbox.clutch_A", EventTag::Unlock, 30.0),
        30.0,
        31.0,
    );
    within(first("gearbox.brake_C", EventTag::Lock, 30.0), 30.0, 31.0);
    // 4->N: lock-up locks, B and C break away.
    within(first("lockup", EventTag::Lock, 40.0), 40.0, 41.0);
    within(
        first("gearbox.clutch_B", EventTag::Unlock, 40.0),
        40.0,
        44.0,
    );
    within(first("gearbox.brake_C", EventTag::Unlock, 40.0), 40.0, 44.0);
    // The brake locks exactly when the run stops.
    let lock = first("brake", EventTag::Lock, 44.0);
    assert_eq!(lock, r.end_time);

    // In neutral with the lock-up clutch locked the engine runs up to its 6000 rpm limit and
    // its torque falls to about zero with the throttle still applied.
    let rpm = r.value_at("engine.w", 43.5).unwrap() * 30.0 / std::f64::consts::PI;
    assert!(rpm > 5900.0 && rpm <= 6000.0, "engine at {rpm} rpm");
    assert!(r.value_at("engine.tau", 43.5).unwrap().abs() < 1.0);
    assert_eq!(r.value_at("lockup.mode", 43.5), Some(0.0));

    // Braking power is zero before 44 s, negative while braking, zero at rest.
    let bp = r.get("brake.power").unwrap();
    let peak = bp.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    for (k, &t) in r.time.iter().enumerate() {
        if t < 44.0 {
            assert_eq!(bp[k], 0.0, "braking power at {t}");
        } else {
            // At the stop instant the left value carries the event-location overshoot
            // (speed ~1e-12 past zero), hence a tolerance of 1e-9 of the peak.
            assert!(bp[k] <= 1e-9 * peak, "braking power {} at {t}", bp[k]);
        }
    }
    assert!(r.value_at("brake.power", 46.0).unwrap() < -1e4);
    assert!(bp.last().unwrap().abs() < 1e-9);

    // Energy audit: engine work = kinetic energy + converter, clutch, brake and road losses.
    let a = m.energy_audit();
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
    let loss = |name: &str| a.losses.iter().find(|l| l.0 == name).map(|l| l.1).unwrap();
    assert!(loss("brake") > 0.0 && loss("converter") > 0.0 && loss("road") > 0.0);
}

#[test]
fn full_car_solver_statistics_snapshot() {
    // A snapshot of the solver work for the default settings. If this changes, the
    // numerics changed: check BENCHMARKS.md and update the numbers deliberately.
    let (_, r) = run();
    let s = r.stats;
    // Exact: results are bit-identical between runs and machines (the AVX kernels use no
    // FMA), so any change of the numbers is a change of the numerics.
    let got = (
        s.steps,
        s.rejected_steps,
        s.rhs_evals,
        s.guard_evals,
        s.output_points,
        s.events,
    );
    // DOPRI5 at rtol = atol = 1e-6, one equally spaced guard sample per step besides the
    // output grid points (which serve as samples); the run stops when the wheel brake
    // locks (47.4920569 s), after 28 events.
    assert_eq!(got, (885, 74, 5805, 3596, 2426, 28), "{s:?}");
    // Full model evaluations: a grid point's output, the derivatives at a step end and an
    // event handler at its instant are served from the guards' evaluation of the same
    // point, so there are fewer than derivative, guard and output calls together (11,827).
    assert_eq!(s.model_evals, 8_529, "{s:?}");
}

#[test]
fn full_car_at_zero_throttle_completes_without_chattering() {
    // The natural lower end of a throttle sweep. Before, the run failed at 11.69 s: a
    // released band brake's slip was still round-off small when the comparison of the
    // axle speed with 0 (`at_rest`) switched, the event relocked the brake, the projection
    // put the axle back at exactly 0, and the pair repeated every 1.6 ns until the chatter
    // limit. The car idles in gear and creeps backward at a few 1e-7 rad/s when the brake
    // comes on at 44 s; the run stops when the brake locks, a fraction of a millisecond
    // later. (Comparing the axle speed with 0 instead stopped at 44 s or ran on to 46.9 s
    // depending on whether round-off left the creep at −1e-27 or +1e-27 rad/s.)
    let d = full_car(&FullCarParams {
        throttle: 0.0,
        ..FullCarParams::default()
    });
    let mut m = compile(&d, &drivelink_blocks::registry()).unwrap_or_else(|e| panic!("{e}"));
    let r = m.run();
    assert_eq!(r.status, RunStatus::Stopped, "{}", r.message);
    assert!(
        r.end_time > 44.0 && r.end_time < 44.001,
        "stopped at {}",
        r.end_time
    );
    let last_brake = r.events.iter().rev().find(|e| e.block == "brake");
    assert!(
        last_brake.is_some_and(|e| e.kind == EventTag::Lock && e.time == r.end_time),
        "the run ends at the brake's lock: {last_brake:?}"
    );
    // The band brake released at 11.69 s stays released: no relock right after.
    let d_events: Vec<_> = r
        .events
        .iter()
        .filter(|e| e.block == "gearbox.brake_D" && (11.0..12.0).contains(&e.time))
        .collect();
    assert_eq!(d_events.len(), 1, "{d_events:?}");
    assert_eq!(d_events[0].kind, EventTag::Unlock);
    let a = m.energy_audit();
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
}

#[test]
fn full_car_is_deterministic() {
    let (_, a) = run();
    let (_, b) = run();
    assert_eq!(a.time.len(), b.time.len(), "different number of samples");
    assert!(a.time == b.time, "time vectors differ");
    for (k, name) in a.names.iter().enumerate() {
        let same = a.columns[k]
            .iter()
            .zip(&b.columns[k])
            .all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(same, "column {name} differs between two runs");
    }
    assert!(a.events == b.events, "event logs differ");
}

#[test]
fn full_car_power_sensor_sits_in_front_of_the_load_so_total_and_braking_power_peak_after_44_s() {
    // The seed's Power scope: the torque sensor is after the vehicle inertia, in front of the
    // road-load/brake actuator, so the driveline power it shows is the power the load takes:
    // road load plus brake. Law: drive_power = (A·tanh(v/v_reg) + C·v²)·v − brake.power at
    // every sample, and after 44 s "both the total and the braking power then quickly peak
    // and drop to zero".
    let (_, r) = run();
    let p = FullCarParams::default();
    let dp = r.get("drive_power.y").unwrap();
    let bp = r.get("brake.power").unwrap();
    let v = r.get("vehicle.v").unwrap();
    let hp = 745.699_871_582_270_2;
    for k in 0..r.time.len() {
        let road = (p.road_a * (v[k] / 1e-3).tanh() + p.road_c * v[k] * v[k]) * v[k];
        let expected = road - bp[k];
        assert!(
            (dp[k] - expected).abs() <= 1e-9 * expected.abs().max(1.0),
            "t = {}: driveline power {} W, road + brake {} W",
            r.time[k],
            dp[k],
            expected
        );
    }
    let after = |col: &[f64]| -> (f64, f64) {
        let mut best = (0.0, 0.0);
        for (k, &t) in r.time.iter().enumerate() {
            if t > 44.0 && col[k].abs() > best.1 {
                best = (t, col[k].abs());
            }
        }
        best
    };
    let (t_dp, peak_dp) = after(dp);
    let (t_bp, peak_bp) = after(bp);
    println!(
        "power after 44 s: driveline peak {:.1} hp at {t_dp:.2} s, braking peak {:.1} hp at {t_bp:.2} s",
        peak_dp / hp,
        peak_bp / hp
    );
    // Both peak well inside the braking phase (not at its ends), at about the same time,
    // and the driveline peak is the braking one plus the road load (>= 100 hp each).
    assert!(peak_dp > 100.0 * hp && peak_bp > 100.0 * hp);
    assert!(peak_dp > peak_bp);
    for t in [t_dp, t_bp] {
        assert!(t > 44.5 && t < r.end_time - 0.5, "peak at {t}");
    }
    assert!((t_dp - t_bp).abs() < 0.2, "{t_dp} vs {t_bp}");
    // Before braking the sensor sees only the road load: a few hp, never more.
    let before = r
        .time
        .iter()
        .zip(dp)
        .filter(|(t, _)| **t < 44.0)
        .fold(0.0_f64, |m, (_, p)| m.max(p.abs()));
    assert!(before < 0.1 * peak_dp, "{before}");
    // Both drop to zero at rest.
    assert!(dp.last().unwrap().abs() < 1e-6 * peak_dp);
    assert!(bp.last().unwrap().abs() < 1e-6 * peak_bp);
}

/// The shift schedule's five tables read only the held master schedule, and the stop reads
/// only the held logic of the two speed comparisons, so their guards change only at
/// events: the guard pass evaluates them once after each event and reuses them in between
/// (results bit-identical, the snapshot above unchanged). The two comparisons read the
/// vehicle speed and stay live.
#[test]
fn full_car_schedule_tables_have_held_guards() {
    let (m, _) = run();
    let summary = m.plan().summary();
    assert!(
        summary.contains("(6 of 8 guard blocks held between events)"),
        "{summary}"
    );
}
