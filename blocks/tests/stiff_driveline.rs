//! A stiff driveline: an engine-like 1 kg·m² hub driven by a constant torque, a stiff
//! steel shaft (torsional mode 1.03 kHz, damping ratio 0.1) to a 0.05 kg·m² gear, a
//! clutch that engages at 50 ms and locks, a 5 kg·m² wheel with a road-load damper, 10 s.
//! Radau5 reproduces the tight Dopri5 trajectory and the closed-form lock time with at
//! least ten times fewer derivative evaluations than Dopri5 needs at the same tolerance
//! (Jacobian evaluations included).

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, EventTag, Method, RunStatus, SimResult};
use drivelink_netlist as netlist;
use serde_json::json;

const J_HUB: f64 = 1.0;
const J_GEAR: f64 = 0.05;
const J_WHEEL: f64 = 5.0;
/// Shaft stiffness: with the clutch open the shaft mode is ω = √(c (J_hub + J_gear) /
/// (J_hub J_gear)) = 6481 rad/s (1.03 kHz).
const C_SHAFT: f64 = 2.0e6;
/// Damping ratio of that mode.
const ZETA: f64 = 0.1;
const T_ENGINE: f64 = 50.0;
const W0: f64 = 100.0;
/// Kinetic clutch torque at f = 1: mu · cgeo · fn_max = 0.3 · 1 · 1000.
const T_CLUTCH: f64 = 300.0;
const D_ROAD: f64 = 0.5;
const T_ENGAGE: f64 = 0.05;
const STOP: f64 = 10.0;

fn shaft_damping() -> f64 {
    let j_red = J_HUB * J_GEAR / (J_HUB + J_GEAR);
    2.0 * ZETA * (C_SHAFT * j_red).sqrt()
}

fn driveline(method: Method, tol: f64) -> Diagram {
    let mut d = Diagram::new("stiff_driveline");
    d.add("engine_torque", "Constant", json!({ "value": T_ENGINE }));
    d.add("engine", "TorqueSource", json!({}));
    d.add("hub", "Inertia", json!({ "J": J_HUB, "w0": W0 }));
    d.add(
        "shaft",
        "SpringDamper",
        json!({ "c": C_SHAFT, "d": shaft_damping() }),
    );
    d.add("gear", "Inertia", json!({ "J": J_GEAR, "w0": W0 }));
    d.add(
        "clutch",
        "Clutch",
        json!({ "mu": 0.3, "peak": 1.1, "fn_max": 1000.0 }),
    );
    d.add("wheel", "Inertia", json!({ "J": J_WHEEL }));
    d.add("road", "Damper", json!({ "d": D_ROAD }));
    d.add("ground", "Fixed", json!({}));
    d.add("engage", "Step", json!({ "time": T_ENGAGE }));
    d.connect(&["engine_torque.y", "engine.tau"]);
    d.connect(&["engine.flange", "hub.flange", "shaft.flange_a"]);
    d.connect(&["shaft.flange_b", "gear.flange", "clutch.flange_a"]);
    d.connect(&["clutch.flange_b", "wheel.flange", "road.flange_a"]);
    d.connect(&["road.flange_b", "ground.flange"]);
    d.connect(&["engage.y", "clutch.f"]);
    d.log(&["hub.w", "gear.w", "wheel.w", "shaft.tau", "clutch.mode"]);
    d.settings.method = method;
    d.settings.stop_time = STOP;
    d.settings.rtol = tol;
    d.settings.atol = tol;
    d.settings.output_interval = Some(0.01);
    d
}

/// The lock time in closed form. Before engagement the hub and gear turn together
/// (centre-of-mass speed `W0 + T_ENGINE t / (J_hub + J_gear)`); while the clutch slips
/// the engine side is decelerated by `T_ENGINE − T_CLUTCH` (the shaft is internal to it;
/// its 1 kHz transient from the engagement decays as e^(−ζωt) = e^(−648 t), below 1e-90
/// at the lock), and the wheel follows `J_wheel w' = T_CLUTCH − D_ROAD w` from rest. The
/// clutch locks when the gear speed meets the wheel speed.
fn analytic_lock_time() -> f64 {
    let je = J_HUB + J_GEAR;
    let w_e0 = W0 + T_ENGINE * T_ENGAGE / je;
    let tau = J_WHEEL / D_ROAD;
    let w_inf = T_CLUTCH / D_ROAD;
    let slip = |s: f64| w_e0 + (T_ENGINE - T_CLUTCH) / je * s - w_inf * (1.0 - (-s / tau).exp());
    let dslip = |s: f64| (T_ENGINE - T_CLUTCH) / je - w_inf / tau * (-s / tau).exp();
    let mut s = 0.3;
    for _ in 0..50 {
        s -= slip(s) / dslip(s);
    }
    T_ENGAGE + s
}

fn lock_time(r: &SimResult) -> f64 {
    let locks: Vec<f64> = r
        .events_of("clutch", EventTag::Lock)
        .map(|e| e.time)
        .collect();
    assert_eq!(locks.len(), 1, "one lock: {locks:?}");
    locks[0]
}

/// The largest difference of the three speeds between two runs on their common output
/// grid (the two rows of the lock instant, whose time differs in the last bits between
/// runs, are left out).
fn speed_deviation(a: &SimResult, b: &SimResult) -> f64 {
    let rows = |r: &SimResult| -> Vec<usize> {
        let lock = lock_time(r);
        (0..r.time.len()).filter(|&i| r.time[i] != lock).collect()
    };
    let (ia, ib) = (rows(a), rows(b));
    assert_eq!(ia.len(), ib.len());
    let mut worst = 0.0f64;
    for var in ["hub.w", "gear.w", "wheel.w"] {
        let (x, y) = (a.get(var).expect("logged"), b.get(var).expect("logged"));
        for (&i, &j) in ia.iter().zip(&ib) {
            assert_eq!(a.time[i], b.time[j]);
            worst = worst.max((x[i] - y[j]).abs());
        }
    }
    worst
}

fn run(method: Method, tol: f64) -> SimResult {
    let mut m = compile(&driveline(method, tol), &registry()).expect("compiles");
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{method:?}: {}", r.message);
    // The energy audit closes to the solver tolerance (engine work = kinetic + spring
    // energy + shaft, clutch and road dissipation).
    let audit = m.energy_audit();
    assert!(
        audit.relative_residual.abs() < 100.0 * tol,
        "{method:?} {tol:e}: {audit:#?}"
    );
    r
}

#[test]
fn stiff_driveline_radau5_matches_dopri5_with_ten_times_fewer_evaluations() {
    let reference = run(Method::Dopri5, 1e-10);
    let radau = run(Method::Radau5, 1e-6);
    let dopri = run(Method::Dopri5, 1e-6);
    let t_lock = analytic_lock_time();
    println!(
        "radau5 1e-6: {:?}\ndopri5 1e-6: {:?}",
        radau.stats, dopri.stats
    );

    // The lock event: both at the closed-form instant, hence at the same time, to 1e-9 s.
    assert!((lock_time(&reference) - t_lock).abs() < 1e-9);
    assert!((lock_time(&radau) - t_lock).abs() < 1e-9);

    // The same trajectory as the tight Dopri5 run on the 10 ms grid: Radau5 at 1e-6 is at
    // least as close to it as Dopri5 itself at 1e-6 (measured: 7.7e-4 vs 1.3e-3 rad/s, on
    // speeds of ~100 rad/s, largest in the lightly damped ringing after the lock), and
    // tightening Radau5's tolerance converges onto it.
    let deviation = |r: &SimResult| speed_deviation(r, &reference);
    let (dev_radau, dev_dopri) = (deviation(&radau), deviation(&dopri));
    println!("largest speed deviation from the reference: radau5 {dev_radau:e}, dopri5 {dev_dopri:e} rad/s");
    assert!(dev_radau <= dev_dopri, "{dev_radau:e} vs {dev_dopri:e}");
    let dev_tight = deviation(&run(Method::Radau5, 1e-10));
    assert!(
        dev_tight < 1e-2 * dev_radau,
        "{dev_tight:e} vs {dev_radau:e}"
    );

    // After the lock everything turns as one inertia against the road load: the speed
    // relaxes to T_ENGINE / D_ROAD with time constant (J_hub + J_gear + J_wheel) / D_ROAD.
    let w_lock = radau.value_at("wheel.w", lock_time(&radau)).expect("value");
    let j_all = J_HUB + J_GEAR + J_WHEEL;
    let w_inf = T_ENGINE / D_ROAD;
    let w_end = w_inf + (w_lock - w_inf) * (-(STOP - t_lock) * D_ROAD / j_all).exp();
    let got = radau.last("wheel.w").expect("value");
    assert!((got - w_end).abs() < 1e-4, "{got} vs {w_end}");

    // Cost: every derivative call counts, the Jacobians' included (measured: 2,431
    // against 48,630, 20x; Dopri5's step stays at its stability limit h ≈ 3.3/|λ| of
    // the shaft mode for the whole run, Radau5's grows to the road-load time scale).
    assert!(radau.stats.jacobian_rhs_evals > 0);
    assert!(
        10 * radau.stats.rhs_evals <= dopri.stats.rhs_evals,
        "radau5 {} vs dopri5 {} derivative evaluations",
        radau.stats.rhs_evals,
        dopri.stats.rhs_evals
    );
    // SNAPSHOT: the implicit method's exact work (steps, rejected, derivative calls,
    // of which for Jacobians, Jacobians, LU factorisations, Newton iterations). Update
    // deliberately when the numerics or the model's evaluation change. (Screening the
    // Jacobians' zero columns, the shaft angles nothing reads, took 7 Jacobian calls off
    // 64 and left every other figure as it was. Starting the step after the time event
    // from the step size the run had, not from the initial-step estimate: 303 → 307 steps,
    // 2,353 → 2,405 calls.)
    let s = radau.stats;
    assert_eq!(
        (
            s.steps,
            s.rejected_steps,
            s.rhs_evals,
            s.jacobian_rhs_evals,
            s.jacobian_evals,
            s.lu_decompositions,
            s.newton_iterations
        ),
        (307, 57, 2405, 71, 10, 285, 673)
    );
}

#[test]
fn stiff_driveline_from_a_netlist_with_method_stiff_runs_radau5() {
    // "stiff" is the netlist alias of the implicit method; the netlist gives the same run.
    let mut v = netlist::to_json(&driveline(Method::Radau5, 1e-6));
    v["solver"]["method"] = json!("stiff");
    let d = netlist::load_value(&v, "stiff_driveline.json", std::path::Path::new("."))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d.settings.method, Method::Radau5);
    let from_netlist = compile(&d, &registry()).expect("compiles").run();
    let direct = run(Method::Radau5, 1e-6);
    assert_eq!(from_netlist.stats, direct.stats);
    assert_eq!(lock_time(&from_netlist), lock_time(&direct));
    // "auto" is accepted too, an unknown name lists the valid ones.
    v["solver"]["method"] = json!("auto");
    let d = netlist::load_value(&v, "stiff_driveline.json", std::path::Path::new("."))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d.settings.method, Method::Auto);
    v["solver"]["method"] = json!("ode15s");
    let e = netlist::load_value(&v, "stiff_driveline.json", std::path::Path::new("."))
        .expect_err("unknown method")
        .to_string();
    assert!(
        e.contains("solver.method") && e.contains("radau5") && e.contains("auto"),
        "{e}"
    );
}
