//! The full car with each integration method: the physics (stop time, gear ratios, event
//! sequence) does not depend on the method, only the cost does.

use drivelink_core::{compile, EventTag, Method, RunStatus};
use drivelink_models::{full_car, FullCarParams};

#[test]
fn full_car_gives_the_same_stop_and_shifts_with_every_method() {
    let reg = drivelink_blocks::registry();
    let base = full_car(&FullCarParams::default());
    let mut stops = Vec::new();
    for method in [Method::Dopri5, Method::Dop853, Method::Rk4 { step: 1e-3 }] {
        let mut d = base.clone();
        d.settings.method = method;
        let r = compile(&d, &reg).unwrap().run();
        assert_eq!(
            r.status,
            RunStatus::Stopped,
            "{}: {}",
            method.name(),
            r.message
        );
        let d_unlock = r
            .events_of("gearbox.brake_D", EventTag::Unlock)
            .next()
            .map(|e| e.time)
            .unwrap();
        let ratio2 = r.value_at("gearbox.ratio", 15.0).unwrap();
        assert!(
            (ratio2 - 5.3 / 3.3).abs() < 1e-6,
            "{}: 2nd gear ratio {ratio2}",
            method.name()
        );
        stops.push((method.name(), r.end_time, d_unlock, r.stats.rhs_evals));
    }
    let (_, t0, u0, _) = stops[0];
    for &(name, t, u, _) in &stops[1..] {
        // Observed: all three agree to ~3e-6 s (solver tolerance 1e-6 on speeds).
        assert!((t - t0).abs() < 2e-5, "{name}: stop {t} vs dopri5 {t0}");
        assert!(
            (u - u0).abs() < 2e-5,
            "{name}: D break-away {u} vs dopri5 {u0}"
        );
    }
}
