//! Rounding near equilibrium: a lag's derivative and the explicit stages keep their
//! relative accuracy where the state has settled (regressions of the 1,000-lag chain,
//! which took 15 % more steps when both rounded at the magnitude of the state).

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram};
use drivelink_solver::HybridSystem;
use serde_json::json;

#[test]
fn lag_derivative_near_equilibrium_keeps_its_relative_accuracy() {
    // x' = (u − x)/τ with u = 1 and x = 1 − d: the exact derivative is d/τ (u − x is exact
    // here). As −x/τ + u/τ it would carry about ε·200 = 4e-14 of rounding, 2e-4 of d/τ at
    // d = 1e-12.
    let tau = 0.005;
    let mut dg = Diagram::new("lag");
    dg.add("u", "Constant", json!({"value": 1.0}));
    dg.add(
        "lag",
        "TransferFcn",
        json!({"num": [1.0], "den": [tau, 1.0]}),
    );
    dg.connect(&["u.y", "lag.u"]);
    let mut m = compile(&dg, &registry()).expect("compile");
    let _ = m.run();
    for d in [1e-12, 3.5e-14, 1e-9] {
        let x = [1.0 - d];
        let exact = (1.0 - x[0]) / tau;
        let mut dx = [0.0];
        m.derivatives(0.0, &x, &mut dx);
        assert!(
            (dx[0] - exact).abs() <= 4.0 * f64::EPSILON * exact,
            "d = {d:e}: {} vs {exact}",
            dx[0]
        );
    }
}

#[test]
fn lag_chain_solver_statistics_snapshot() {
    // The benchmark chain (Constant -> 1,000 lags of 5 ms, 10 s, Dopri5 at 1e-6/1e-8):
    // exact work, as the full car's snapshot. scipy's RK45 takes 1,037 steps on the same
    // problem; before the stages were formed as y0 + h·Σ a·k and lags as c·(u − x) this
    // took 1,229.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../benches/netlists/tf_chain_1000.json"
    );
    let mut m =
        drivelink_netlist::compile_file(std::path::Path::new(path), &registry()).expect("compile");
    let r = m.run();
    assert_eq!(r.status.as_str(), "completed", "{}", r.message);
    let s = r.stats;
    assert_eq!(
        (s.steps, s.rejected_steps, s.rhs_evals),
        (1068, 6, 6446),
        "{s:?}"
    );
    // The last lag has settled: the Erlang(1000, 5 ms) distribution at 10 s is 1 to 1e-300.
    let y = r.last("lag999.y").expect("logged");
    assert!((y - 1.0).abs() < 2e-5, "{y}");
}
