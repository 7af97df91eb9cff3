//! The full-car demo (models/netlists/full_car.json) with the implicit method and with
//! Auto: the same stop, shifts and energy balance as with Dopri5. The car is not stiff at
//! the demo's tolerance, so Auto should cost about what Dopri5 costs.

use std::path::PathBuf;

use drivelink_blocks::registry;
use drivelink_core::{compile, EventTag, Method, RunStatus, SimResult};
use drivelink_netlist as netlist;

fn run(method: Method, tol: Option<f64>) -> SimResult {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/netlists/full_car.json");
    let mut d = netlist::load_file(&path).unwrap_or_else(|e| panic!("{e}"));
    d.settings.method = method;
    if let Some(tol) = tol {
        d.settings.rtol = tol;
        d.settings.atol = tol;
    }
    let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("{e}"));
    let r = m.run();
    assert_eq!(r.status, RunStatus::Stopped, "{method:?}: {}", r.message);
    // Engine work = kinetic energy + converter, clutch, brake and road losses, to the
    // solver tolerance (the demo runs at rtol = atol = 1e-6).
    let audit = m.energy_audit();
    assert!(
        audit.relative_residual.abs() < 1e-4,
        "{method:?}: {audit:#?}"
    );
    r
}

#[test]
fn full_car_stops_and_shifts_the_same_with_radau5_and_auto() {
    // The converged stop (Dopri5 and Dop853 at 1e-10 agree to 3e-9 s): 47.4920569 s.
    let reference = run(Method::Dopri5, Some(1e-10));
    let dopri = run(Method::Dopri5, None);
    for method in [Method::Radau5, Method::Auto] {
        let r = run(method, None);
        println!("{method:?}: stop {} s, {:?}", r.end_time, r.stats);
        // Same bound as the explicit methods' test (models/tests/full_car_methods.rs).
        assert!(
            (r.end_time - reference.end_time).abs() < 2e-5,
            "{method:?}: stop {} vs {}",
            r.end_time,
            reference.end_time
        );
        // Second gear (CR-CR ratio 5.3/3.3) at 15 s, the 1-2 shift's break-away of D.
        let ratio2 = r.value_at("gearbox.ratio", 15.0).expect("logged");
        assert!((ratio2 - 5.3 / 3.3).abs() < 1e-6, "{method:?}: {ratio2}");
        let unlock = |r: &SimResult| {
            r.events_of("gearbox.brake_D", EventTag::Unlock)
                .next()
                .map(|e| e.time)
                .expect("D breaks away")
        };
        assert!((unlock(&r) - unlock(&reference)).abs() < 2e-5, "{method:?}");
        // Not stiff at this tolerance: the implicit method takes fewer, larger steps for
        // about the same number of derivative calls, Auto no more than Dopri5.
        assert!(r.stats.steps < dopri.stats.steps, "{method:?}");
        assert!(
            r.stats.rhs_evals < dopri.stats.rhs_evals + dopri.stats.rhs_evals / 10,
            "{method:?}: {} vs {}",
            r.stats.rhs_evals,
            dopri.stats.rhs_evals
        );
    }
    println!("Dopri5: stop {} s, {:?}", dopri.end_time, dopri.stats);
}

/// `Model::jacobian_pattern` groups the columns of the quadrature states (work and heat
/// integrals, which no derivative reads) with the others: the finite-difference Jacobian is
/// the dense one to the last bit, at one evaluation per read state. Checked on the
/// driveline car and on the vehicle-dynamics car (rigid body, wheel colliders), at the
/// initial state under the modes the run ended in.
#[test]
fn jacobian_pattern_gives_the_dense_jacobian_bit_for_bit() {
    use drivelink_solver::{jacobian, Differencing, FiniteDifferences, HybridSystem};
    for (file, read) in [("full_car.json", 25), ("vd_full_car.json", 43)] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../models/netlists")
            .join(file);
        let d = netlist::load_file(&path).unwrap_or_else(|e| panic!("{e}"));
        let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("{e}"));
        m.run();
        let x = m.initial_state().to_vec();
        let n = x.len();
        let pattern = m.jacobian_pattern().expect("quadrature states present");
        assert_eq!(pattern.colouring().n_colours(), read, "{file}");
        let (grouped, evals) = jacobian(&mut m, 0.5, &x, Differencing::Forward).unwrap();
        assert_eq!(evals, 1 + read, "{file}");
        let mut dense = grouped.clone();
        FiniteDifferences::dense(n)
            .compute(|xx, dx| m.derivatives(0.5, xx, dx), &x, None, &mut dense)
            .unwrap();
        for (a, b) in grouped.iter().zip(dense.iter()) {
            assert_eq!(a.to_bits(), b.to_bits(), "{file}: {a} vs {b}");
        }
    }
}
