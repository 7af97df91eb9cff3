//! Accuracy of the three methods on smooth problems with analytic solutions, dense output,
//! cross-checks against ode_solvers' own implementations, and a stats snapshot.

mod common;
use common::*;
use drivelink_solver::{Method, OutputKind, Settings, Status};
use ode_solvers::{Dop853, Dopri5, Rk4, Vector2};

#[test]
fn smooth_problems_match_analytic_solutions() {
    for method in methods() {
        for mut p in smooth_problems() {
            for interval in [None, Some(0.05)] {
                let s = Settings {
                    rtol: 1e-7,
                    atol: 1e-9,
                    output_interval: interval,
                    ..settings(method, 10.0)
                };
                p.rec = Recorder::default();
                let x0 = p.x0();
                let (r, x) = run(&mut p, &x0, &s);
                let out = r.unwrap_or_else(|f| panic!("{} {:?}: {}", p.name, method, f.error));
                assert_eq!(out.status, Status::Completed);
                assert_eq!(out.end_time, 10.0);
                let err = p.max_error();
                // Global error stays within a small multiple of the tolerance; RK4 with
                // h = 0.01 has an error ~ 1e-9 on these problems.
                let bound = match method {
                    Method::Rk4 { .. } => 1e-7,
                    _ => 1e-5,
                };
                assert!(
                    err < bound,
                    "{} {:?} {:?}: max error {err:e}",
                    p.name,
                    method,
                    interval
                );
                assert_eq!(x, *p.rec.x.last().unwrap());
                assert_eq!(*p.rec.kind.last().unwrap(), OutputKind::Final);
                assert_eq!(p.rec.kind[0], OutputKind::Initial);
                if let Some(dt) = interval {
                    // Grid points are start + k*dt, k = 1..199 (k = 200 is the Final point).
                    let grid = p.rec.of(OutputKind::Interpolated);
                    assert_eq!(grid.len(), 199);
                    for (k, &i) in grid.iter().enumerate() {
                        assert_eq!(p.rec.t[i], (k + 1) as f64 * dt);
                    }
                } else {
                    assert_eq!(p.rec.of(OutputKind::Step).len() as u64 + 1, out.stats.steps);
                }
            }
        }
    }
}

#[test]
fn dop853_more_accurate_and_cheaper_than_dopri5() {
    // At the same tolerance both track the tolerance (both propagate the higher-order
    // solution and control a lower-order estimate), DOP853 is more accurate and needs far
    // fewer right-hand-side evaluations at tight tolerances.
    for tol in [1e-6, 1e-10] {
        let mut res = vec![];
        for method in [Method::Dopri5, Method::Dop853] {
            let mut p = oscillator();
            let s = Settings {
                rtol: tol,
                atol: tol * 1e-2,
                output_interval: Some(0.1),
                ..settings(method, 20.0)
            };
            let x0 = p.x0();
            let (r, _) = run(&mut p, &x0, &s);
            res.push((p.max_error(), r.expect("run").stats.rhs_evals));
        }
        assert!(res[1].0 < res[0].0, "tol {tol:e}: {res:?}");
        assert!(res[1].1 * 2 < res[0].1, "tol {tol:e}: {res:?}");
    }
    // At the same (fixed) step size the 8th-order method is much more accurate, at the step
    // ends and on its 7th-order dense output.
    let mut errs = vec![];
    for method in [Method::Dopri5, Method::Dop853] {
        let h = 0.1;
        let mut p = oscillator();
        let s = Settings {
            rtol: 1e-2,
            atol: 1e-2,
            max_step: h,
            initial_step: Some(h),
            output_interval: Some(h / 3.0),
            ..settings(method, 4.0)
        };
        let x0 = p.x0();
        let (r, _) = run(&mut p, &x0, &s);
        assert_eq!(r.expect("run").stats.steps, 40);
        errs.push(p.max_error());
    }
    assert!(
        errs[1] < 1e-4 * errs[0],
        "dopri5 {:e}, dop853 {:e}",
        errs[0],
        errs[1]
    );
}

#[test]
fn convergence_orders_at_fixed_step() {
    // Halving a fixed step divides the step-end error by about 2^order (5 and 8), and the
    // dense-output error by about 2^(order of the interpolant + 1) (5 and 8).
    for (method, order) in [(Method::Dopri5, 5.0), (Method::Dop853, 8.0)] {
        let mut ends = vec![];
        let mut dense = vec![];
        for h in [0.1, 0.05] {
            let s = Settings {
                rtol: 1e-2,
                atol: 1e-2,
                max_step: h,
                initial_step: Some(h),
                ..settings(method, 4.0)
            };
            let mut p = oscillator();
            let x0 = p.x0();
            let (r, x) = run(&mut p, &x0, &s);
            r.expect("run");
            ends.push((x[0] - (p.exact)(4.0)[0]).abs());
            let mut p = oscillator();
            let (r, _) = run(
                &mut p,
                &x0,
                &Settings {
                    output_interval: Some(h / 3.0),
                    ..s
                },
            );
            r.expect("run");
            dense.push(p.max_error());
        }
        let end_order = (ends[0] / ends[1]).log2();
        let dense_order = (dense[0] / dense[1]).log2();
        assert!(
            end_order > order - 1.0,
            "{method:?}: step-end order {end_order}"
        );
        assert!(
            dense_order > order - 1.0 - 0.5,
            "{method:?}: dense order {dense_order}"
        );
    }
}

#[test]
fn dense_output_is_accurate_between_steps() {
    // Few large steps, many interpolated points between them.
    for method in [Method::Dopri5, Method::Dop853] {
        let mut p = decay();
        let s = Settings {
            rtol: 1e-10,
            atol: 1e-12,
            output_interval: Some(0.01),
            ..settings(method, 5.0)
        };
        let (r, _) = {
            let x0 = p.x0();
            run(&mut p, &x0, &s)
        };
        let out = r.expect("run");
        assert!(out.stats.steps < 200, "{:?}", out.stats);
        assert!(p.max_error() < 1e-8, "{:?} {:e}", method, p.max_error());
    }
}

/// ode_solvers system for the oscillator.
struct OscOde;
impl ode_solvers::System<f64, Vector2<f64>> for OscOde {
    fn system(&self, _t: f64, y: &Vector2<f64>, dy: &mut Vector2<f64>) {
        dy[0] = y[1];
        dy[1] = -4.0 * y[0];
    }
}

#[test]
fn cross_check_against_ode_solvers() {
    let (rtol, atol) = (1e-8, 1e-10);
    let y0 = Vector2::new(1.0, 0.0);
    // Adaptive methods: compare ours and theirs on the dense-output grid 0.5, 1.0, ..., 4.5.
    // (ode_solvers' own last point at x_end is not used: with its 1.01 last-step rule its
    // value at x_end is off by ~1e-3 in ode_solvers 0.6.2.)
    let mut theirs = Dopri5::new(OscOde, 0.0, 5.0, 0.5, y0, rtol, atol);
    theirs.integrate().expect("ode_solvers dopri5");
    let r5: Vec<(f64, Vector2<f64>)> = theirs
        .x_out()
        .iter()
        .copied()
        .zip(theirs.y_out().iter().copied())
        .collect();
    let mut theirs = Dop853::new(OscOde, 0.0, 5.0, 0.5, y0, rtol, atol);
    theirs.integrate().expect("ode_solvers dop853");
    let r8: Vec<(f64, Vector2<f64>)> = theirs
        .x_out()
        .iter()
        .copied()
        .zip(theirs.y_out().iter().copied())
        .collect();
    for (method, reference) in [(Method::Dopri5, r5), (Method::Dop853, r8)] {
        let mut p = oscillator();
        let s = Settings {
            rtol,
            atol,
            output_interval: Some(0.5),
            ..settings(method, 5.0)
        };
        let x0 = p.x0();
        let (r, _) = run(&mut p, &x0, &s);
        r.expect("run");
        let mut compared = 0;
        for (t, y) in &reference {
            if *t <= 0.0 || *t >= 5.0 {
                continue;
            }
            let i = p
                .rec
                .t
                .iter()
                .position(|tt| (tt - t).abs() < 1e-12)
                .expect("grid point");
            for c in 0..2 {
                assert!(
                    (p.rec.x[i][c] - y[c]).abs() < 1e-7,
                    "{method:?} t={t}: {:?} vs {y:?}",
                    p.rec.x[i]
                );
            }
            compared += 1;
        }
        assert_eq!(compared, 9);
    }
    // RK4 with the same fixed step: the same arithmetic up to rounding.
    let mut theirs = Rk4::new(OscOde, 0.0, y0, 5.0, 0.01);
    theirs.integrate().expect("ode_solvers rk4");
    let reference = *theirs.y_out().last().expect("output");
    assert!((theirs.x_out().last().expect("output") - 5.0).abs() < 1e-9);
    let mut p = oscillator();
    let x0 = p.x0();
    let (r, x) = run(&mut p, &x0, &settings(Method::Rk4 { step: 0.01 }, 5.0));
    r.expect("run");
    for i in 0..2 {
        assert!(
            (x[i] - reference[i]).abs() < 1e-11,
            "rk4: {x:?} vs {reference:?}"
        );
    }
}

#[test]
fn stats_snapshot() {
    // SNAPSHOT: exact counters for one fixed problem and settings. They change only if the
    // step-size control, the initial step or the stage bookkeeping change; update them
    // deliberately when such a change is intended.
    let mut p = oscillator();
    let s = settings(Method::Dopri5, 10.0);
    let (r, _) = {
        let x0 = p.x0();
        run(&mut p, &x0, &s)
    };
    let st = r.expect("run").stats;
    println!("dopri5 {st:?}");
    let mut p = oscillator();
    let s8 = settings(Method::Dop853, 10.0);
    let (r, _) = {
        let x0 = p.x0();
        run(&mut p, &x0, &s8)
    };
    let st8 = r.expect("run").stats;
    println!("dop853 {st8:?}");
    let mut b = Ball::new(0.8);
    let (r, _) = run(&mut b, &[1.0, 0.0], &settings(Method::Dopri5, 3.0));
    let stb = r.expect("run").stats;
    println!("ball {stb:?}");
    assert_eq!(
        (
            st.steps,
            st.rejected_steps,
            st.rhs_evals,
            st.guard_evals,
            st.events
        ),
        (105, 12, 704, 0, 0)
    );
    assert_eq!((st8.steps, st8.rejected_steps, st8.rhs_evals), (23, 0, 278));
    assert_eq!(
        (
            stb.steps,
            stb.rejected_steps,
            stb.rhs_evals,
            stb.guard_evals,
            stb.events
        ),
        // The step end's guards are evaluated first (the model serves them from the last
        // stage's evaluation), so a step with an interior crossing costs one more guard
        // evaluation than when the end was sampled last: 6 events, 168 -> 173.
        (24, 0, 158, 173, 6)
    );
    assert_eq!(stb.output_points, b.rec.t.len() as u64);
}

/// Run `method` with default settings on the shared problems: oscillator to 10 s, decay to
/// 10 s, bouncing ball (e = 0.8) to 3 s.
fn shared_stats(method: Method) -> [drivelink_solver::Stats; 3] {
    let mut p = oscillator();
    let x0 = p.x0();
    let (r, _) = run(&mut p, &x0, &settings(method, 10.0));
    let osc = r.expect("oscillator").stats;
    let mut p = decay();
    let x0 = p.x0();
    let (r, _) = run(&mut p, &x0, &settings(method, 10.0));
    let dec = r.expect("decay").stats;
    let mut b = Ball::new(0.8);
    let (r, _) = run(&mut b, &[1.0, 0.0], &settings(method, 3.0));
    let ball = r.expect("ball").stats;
    assert_eq!(ball.output_points, b.rec.t.len() as u64);
    [osc, dec, ball]
}

/// (steps, rejected, rhs evaluations, Jacobian rhs evaluations, guard evaluations, events,
/// Jacobians, LU factorisations, Newton iterations).
type Counters = (u64, u64, u64, u64, u64, u64, u64, u64, u64);

fn counters(s: &drivelink_solver::Stats) -> Counters {
    (
        s.steps,
        s.rejected_steps,
        s.rhs_evals,
        s.jacobian_rhs_evals,
        s.guard_evals,
        s.events,
        s.jacobian_evals,
        s.lu_decompositions,
        s.newton_iterations,
    )
}

#[test]
fn radau5_and_auto_stats_snapshot() {
    // SNAPSHOT: exact counters of the implicit method and of Auto on the shared problems.
    // They change only if the Newton iteration, the Jacobian/LU reuse, the step-size
    // control or the switching change; update them deliberately when that is intended.
    let radau = shared_stats(Method::Radau5);
    for s in &radau {
        println!("radau5 {s:?}");
    }
    // The linear problems need one Jacobian for the whole run (Newton keeps converging
    // fast); the ball needs one per restart (every impact is an event).
    let expect_radau: [Counters; 3] = [
        (122, 9, 582, 2, 0, 0, 1, 52, 152),
        (27, 0, 123, 1, 0, 0, 1, 6, 31),
        (25, 0, 143, 14, 184, 6, 7, 25, 32),
    ];
    assert_eq!(radau.map(|s| counters(&s)), expect_radau);
    // Non-stiff problems: Auto never leaves Dopri5, so it costs exactly what Dopri5 costs.
    let auto = shared_stats(Method::Auto);
    let dopri = shared_stats(Method::Dopri5);
    assert_eq!(auto, dopri);
}
