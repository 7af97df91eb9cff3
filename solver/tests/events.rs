//! State events, time events, stops, grid output around events, determinism.

mod common;
use common::*;
use drivelink_solver::{EventAction, EventKind, Method, OutputKind, Settings, Status};

#[test]
fn bouncing_ball_impacts_match_closed_form() {
    for method in methods() {
        for interval in [None, Some(0.01)] {
            let mut b = Ball::new(0.8);
            let s = Settings {
                output_interval: interval,
                ..settings(method, 3.0)
            };
            let (r, _) = run(&mut b, &[1.0, 0.0], &s);
            let out = r.unwrap_or_else(|f| panic!("{method:?}: {}", f.error));
            assert_eq!(out.status, Status::Completed);
            let exact = b.exact_impacts(1.0, 6);
            assert_eq!(b.impacts.len(), 6, "{method:?}: {:?}", b.impacts);
            assert_eq!(out.stats.events, 6);
            for (t, te) in b.impacts.iter().zip(&exact) {
                assert!((t - te).abs() < 1e-10, "{method:?}: impact {t} vs {te}");
                // The event instant is just past the crossing.
                assert!(*t >= te - 1e-12);
            }
            // Each impact is an EventLeft/EventRight pair: height just below 0 on the left,
            // projected to 0 with reversed velocity on the right.
            let left = b.rec.of(OutputKind::EventLeft);
            assert_eq!(left.len(), 6);
            for &i in &left {
                assert_eq!(b.rec.kind[i + 1], OutputKind::EventRight);
                assert_eq!(b.rec.t[i], b.rec.t[i + 1]);
                assert!(b.rec.x[i][0] < 0.0 && b.rec.x[i][0] > -1e-10);
                assert_eq!(b.rec.x[i + 1][0], 0.0);
                assert!(b.rec.x[i + 1][1] > 0.0);
            }
            // Outputs are in non-decreasing time order.
            assert!(b.rec.t.windows(2).all(|w| w[0] <= w[1]));
            // The height never goes (noticeably) below the floor at any output point.
            assert!(b.rec.x.iter().all(|x| x[0] > -1e-10));
        }
    }
}

#[test]
fn time_events_hit_bit_exactly() {
    let times = vec![0.1 * 3.0, 1.0 / 3.0, 0.7, 2.0f64.sqrt(), 2.5];
    for method in methods() {
        for interval in [None, Some(0.1)] {
            let mut sys = Timed {
                times: times.clone(),
                calls: vec![],
                stop_at: None,
                rec: Recorder::default(),
            };
            let s = Settings {
                output_interval: interval,
                ..settings(method, 2.5)
            };
            let (r, _) = run(&mut sys, &[1.0], &s);
            let out = r.unwrap_or_else(|f| panic!("{method:?}: {}", f.error));
            assert_eq!(out.status, Status::Completed);
            let seen: Vec<f64> = sys
                .calls
                .iter()
                .filter(|c| c.kind == EventKind::Time)
                .map(|c| c.t)
                .collect();
            // The event at stop_time itself is not handled.
            assert_eq!(seen, times[..4].to_vec(), "{method:?}");
            assert_eq!(out.stats.events, 4);
            for &te in &times[..4] {
                let i = sys
                    .rec
                    .t
                    .iter()
                    .zip(&sys.rec.kind)
                    .position(|(&t, &k)| t == te && k == OutputKind::EventLeft)
                    .expect("EventLeft at the event time");
                assert_eq!(sys.rec.kind[i + 1], OutputKind::EventRight);
                assert_eq!(sys.rec.t[i + 1], te);
                // The reset is visible on the right.
                assert!((sys.rec.x[i + 1][0] - sys.rec.x[i][0] - 1.0).abs() < 1e-15);
            }
            // The solution with resets against the analytic piecewise solution.
            let mut x = 1.0f64;
            let mut t0 = 0.0;
            for &te in &times[..4] {
                x = x * (-(te - t0)).exp() + 1.0;
                t0 = te;
            }
            let exact_end = x * (-(2.5 - t0)).exp();
            let got = sys.rec.x.last().unwrap().clone();
            let tol = if matches!(method, Method::Rk4 { .. }) {
                1e-8
            } else {
                1e-5
            };
            assert!(
                (got[0] - exact_end).abs() < tol,
                "{method:?}: {} vs {exact_end}",
                got[0]
            );
            assert_eq!(*sys.rec.kind.last().unwrap(), OutputKind::Final);
            assert_eq!(*sys.rec.t.last().unwrap(), 2.5);
        }
    }
}

#[test]
fn grid_points_around_events() {
    // A time event on a grid point: the event's left/right pair stands for the grid point,
    // so the instant appears exactly twice.
    let mut sys = Timed {
        times: vec![0.5],
        calls: vec![],
        stop_at: None,
        rec: Recorder::default(),
    };
    let s = Settings {
        output_interval: Some(0.25),
        ..settings(Method::Dopri5, 1.0)
    };
    let (r, _) = run(&mut sys, &[1.0], &s);
    r.expect("run");
    let kinds: Vec<(f64, OutputKind)> = sys
        .rec
        .t
        .iter()
        .copied()
        .zip(sys.rec.kind.iter().copied())
        .collect();
    use OutputKind::*;
    assert_eq!(
        kinds,
        vec![
            (0.0, Initial),
            (0.25, Interpolated),
            (0.5, EventLeft),
            (0.5, EventRight),
            (0.75, Interpolated),
            (1.0, Final)
        ]
    );
    // State events with a grid: all grid points before the impact precede its EventLeft.
    let mut b = Ball::new(0.5);
    let s = Settings {
        output_interval: Some(0.05),
        ..settings(Method::Dop853, 1.0)
    };
    let (r, _) = run(&mut b, &[1.0, 0.0], &s);
    r.expect("run");
    let grid = b.rec.of(Interpolated);
    assert_eq!(grid.len(), 19);
    for (k, &i) in grid.iter().enumerate() {
        assert_eq!(b.rec.t[i], (k + 1) as f64 * 0.05);
    }
    assert!(b.rec.t.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn guard_starting_at_zero() {
    for method in methods() {
        // x' = 1 from 0: guard x moves into the valid side -> never fires.
        let mut sys = Custom::new(
            1,
            1,
            |_, _, dx| dx[0] = 1.0,
            |_, x, g| g[0] = x[0],
            EventAction::Stop,
        );
        let (r, _) = run(&mut sys, &[0.0], &settings(method, 1.0));
        let out = r.expect("run");
        assert_eq!(out.status, Status::Completed);
        assert_eq!(sys.calls.len(), 1);
        assert_eq!(sys.calls[0].kind, EventKind::Initial);
        assert!(sys.calls[0].guards.is_empty());
        // Guard -x moves into the negative side -> fires immediately after t0.
        let mut sys = Custom::new(
            1,
            1,
            |_, _, dx| dx[0] = 1.0,
            |_, x, g| g[0] = -x[0],
            EventAction::Stop,
        );
        let (r, _) = run(&mut sys, &[0.0], &settings(method, 1.0));
        let out = r.expect("run");
        assert_eq!(out.status, Status::Stopped);
        assert_eq!(sys.calls.len(), 2);
        assert_eq!(sys.calls[1].kind, EventKind::State);
        assert_eq!(sys.calls[1].guards, vec![0]);
        assert!(
            sys.calls[1].t > 0.0 && sys.calls[1].t <= 2e-12,
            "{method:?}: {}",
            sys.calls[1].t
        );
        assert_eq!(out.end_time, sys.calls[1].t);
    }
}

#[test]
fn double_crossing_inside_one_step_is_caught() {
    // x' = 1 (integrated exactly, so the step grows x10 per step up to max_step = 8):
    // steps [0, 1], [1, 9]. The guard (x-4.5)^2 - 1 is negative on (3.5, 5.5), entirely
    // inside the second step: positive at both its ends, caught by an interior sample
    // (Radau5 grows the step by at most 8x, which gives the same two steps).
    for method in [Method::Dopri5, Method::Dop853, Method::Radau5, Method::Auto] {
        let mut sys = Custom::new(
            1,
            1,
            |_, _, dx| dx[0] = 1.0,
            |_, x, g| g[0] = (x[0] - 4.5).powi(2) - 1.0,
            EventAction::Stop,
        );
        let s = Settings {
            initial_step: Some(1.0),
            max_step: 8.0,
            ..settings(method, 20.0)
        };
        let (r, _) = run(&mut sys, &[0.0], &s);
        let out = r.expect("run");
        assert_eq!(out.status, Status::Stopped);
        assert_eq!(
            out.stats.steps, 2,
            "{method:?}: the crossing must be inside one big step"
        );
        assert_eq!(sys.calls.len(), 2);
        assert_eq!(sys.calls[1].kind, EventKind::State);
        assert!(
            (sys.calls[1].t - 3.5).abs() < 1e-11,
            "{method:?}: {}",
            sys.calls[1].t
        );
    }
}

#[test]
fn output_grid_points_inside_a_step_are_guard_samples() {
    // The dip of the tests above, no interior samples, an output grid of 4 s: the grid
    // point at x = 4 lies in the dip (3.5, 5.5) inside the step [1, 9], so it catches the
    // crossing, and its own output, past the event, is never emitted. Without the
    // crossing (a guard that stays positive) every grid point is emitted once, in order,
    // with the state of the exact solution x = t.
    for (guard, stops) in [
        (
            (|_, x, g| g[0] = (x[0] - 4.5).powi(2) - 1.0) as fn(f64, &[f64], &mut [f64]),
            true,
        ),
        (|_, _, g| g[0] = 1.0, false),
    ] {
        let mut sys = Custom::new(1, 1, |_, _, dx| dx[0] = 1.0, guard, EventAction::Stop);
        let s = Settings {
            initial_step: Some(1.0),
            max_step: 8.0,
            guard_samples: 0,
            output_interval: Some(4.0),
            ..settings(Method::Dopri5, 20.0)
        };
        let (r, _) = run(&mut sys, &[0.0], &s);
        let out = r.expect("run");
        let grid: Vec<f64> = sys
            .rec
            .of(OutputKind::Interpolated)
            .into_iter()
            .map(|i| sys.rec.t[i])
            .collect();
        assert!(
            sys.rec.t.windows(2).all(|w| w[0] <= w[1]),
            "{:?}",
            sys.rec.t
        );
        for &i in &sys.rec.of(OutputKind::Interpolated) {
            assert!((sys.rec.x[i][0] - sys.rec.t[i]).abs() < 1e-12);
        }
        if stops {
            assert_eq!(out.status, Status::Stopped);
            assert!((out.end_time - 3.5).abs() < 1e-11, "{}", out.end_time);
            assert!(grid.is_empty(), "grid outputs past the event: {grid:?}");
        } else {
            assert_eq!(out.status, Status::Completed);
            assert_eq!(grid, [4.0, 8.0, 12.0, 16.0]);
        }
    }
}

#[test]
fn double_crossing_is_missed_without_interior_guard_samples() {
    // The same dip as above with `guard_samples = 0`: only the step ends are sampled, both
    // are positive, the run completes without an event. This is what one interior sample
    // buys.
    for (samples, status) in [(0, Status::Completed), (1, Status::Stopped)] {
        let mut sys = Custom::new(
            1,
            1,
            |_, _, dx| dx[0] = 1.0,
            |_, x, g| g[0] = (x[0] - 4.5).powi(2) - 1.0,
            EventAction::Stop,
        );
        let s = Settings {
            initial_step: Some(1.0),
            max_step: 8.0,
            guard_samples: samples,
            ..settings(Method::Dopri5, 20.0)
        };
        let (r, _) = run(&mut sys, &[0.0], &s);
        let out = r.expect("run");
        assert_eq!(out.status, status, "guard_samples = {samples}");
        // Guards before and after the initial handler call, then only at step ends.
        if samples == 0 {
            assert_eq!(out.stats.guard_evals, 2 + out.stats.steps);
        }
    }
}

#[test]
fn earliest_of_several_guards_is_located() {
    // Three guards crossing at 0.9, 0.3 (twice: a symmetric pair) and 0.6 in the same step.
    let mut sys = Custom::new(
        1,
        4,
        |_, _, dx| dx[0] = 1.0,
        |_, x, g| {
            g[0] = 0.9 - x[0];
            g[1] = 0.3 - x[0];
            g[2] = 0.6 - x[0];
            g[3] = (0.3 - x[0]) * 2.0;
        },
        EventAction::Stop,
    );
    let s = Settings {
        initial_step: Some(2.0),
        ..settings(Method::Dopri5, 2.0)
    };
    let (r, _) = run(&mut sys, &[0.0], &s);
    let out = r.expect("run");
    assert_eq!(out.status, Status::Stopped);
    assert_eq!(sys.calls[1].guards, vec![1, 3]);
    assert!((out.end_time - 0.3).abs() < 1e-12);
}

#[test]
fn stop_from_handler_at_located_time() {
    for method in methods() {
        for interval in [None, Some(0.1)] {
            let mut b = Ball::new(0.8);
            b.stop_at_first = true;
            let s = Settings {
                output_interval: interval,
                ..settings(method, 10.0)
            };
            let (r, x) = run(&mut b, &[1.0, 0.0], &s);
            let out = r.expect("run");
            let exact = (2.0 / 9.81f64).sqrt();
            assert_eq!(out.status, Status::Stopped);
            assert!(
                (out.end_time - exact).abs() < 1e-9,
                "{method:?}: {}",
                out.end_time
            );
            // The run ends with the EventRight point at the stop instant; no Final.
            assert_eq!(*b.rec.kind.last().unwrap(), OutputKind::EventRight);
            assert_eq!(*b.rec.t.last().unwrap(), out.end_time);
            assert!(b.rec.of(OutputKind::Final).is_empty());
            assert_eq!(x, *b.rec.x.last().unwrap());
        }
    }
    // A stop at a time event.
    let mut sys = Timed {
        times: vec![0.5, 0.75],
        calls: vec![],
        stop_at: Some(0.75),
        rec: Recorder::default(),
    };
    let (r, _) = run(&mut sys, &[1.0], &settings(Method::Dopri5, 2.0));
    let out = r.expect("run");
    assert_eq!((out.status, out.end_time), (Status::Stopped, 0.75));
    assert_eq!(*sys.rec.kind.last().unwrap(), OutputKind::EventRight);
}

#[test]
fn identical_runs_are_bit_identical() {
    for method in methods() {
        for interval in [None, Some(0.01)] {
            let go = || {
                let mut b = Ball::new(0.7);
                let s = Settings {
                    output_interval: interval,
                    ..settings(method, 2.0)
                };
                let (r, x) = run(&mut b, &[1.0, 0.3], &s);
                let out = r.expect("run");
                (
                    b.rec.bits(),
                    x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    out.stats,
                )
            };
            assert_eq!(go(), go());
        }
    }
}

/// `x' = −k·x` with a time event every 0.1 s; the handler sets `k` from a schedule, so an
/// event may change the derivative (a new `k`) or nothing at all (the same `k`).
struct Sampled {
    k: f64,
    schedule: fn(f64) -> f64,
}

impl drivelink_solver::HybridSystem for Sampled {
    fn n_states(&self) -> usize {
        1
    }
    fn n_guards(&self) -> usize {
        0
    }
    fn derivatives(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = -self.k * x[0];
    }
    fn guards(&mut self, _t: f64, _x: &[f64], _g: &mut [f64]) {}
    fn next_time_event(&self, t: f64) -> f64 {
        // Sample hits k·0.1, computed (never accumulated) as the blocks do.
        let k = (t / 0.1).floor() + 1.0;
        let te = k * 0.1;
        if te > t {
            te
        } else {
            (k + 1.0) * 0.1
        }
    }
    fn handle_event(
        &mut self,
        t: f64,
        _x: &mut [f64],
        _c: drivelink_solver::EventCause<'_>,
    ) -> Result<EventAction, drivelink_solver::SystemError> {
        self.k = (self.schedule)(t);
        Ok(EventAction::Continue)
    }
    fn guard_name(&self, i: usize) -> String {
        format!("g{i}")
    }
    fn output(&mut self, _t: f64, _x: &[f64], _kind: OutputKind) {}
}

#[test]
fn time_events_that_change_nothing_keep_the_step_size_history() {
    // With a constant schedule every sample hit changes nothing: each costs one
    // evaluation (the derivative at the event, found bit-identical to the one the step
    // ended with) and the integration goes on with the step it had, so there is no initial
    // step selection after the start. With a schedule that changes k at every hit, each
    // hit restarts the kernel but also costs one evaluation: the first step after it comes
    // from the step the integration had, not from the initial-step probe.
    for method in [Method::Dopri5, Method::Radau5] {
        for (schedule, restarts) in [
            ((|_| 1.0) as fn(f64) -> f64, false),
            (
                (|t: f64| 1.0 + 0.5 * ((t / 0.1).round() % 2.0)) as fn(f64) -> f64,
                true,
            ),
        ] {
            let mut sys = Sampled { k: 1.0, schedule };
            let s = Settings {
                rtol: 1e-8,
                atol: 1e-10,
                ..settings(method, 1.0)
            };
            let (r, x) = run(&mut sys, &[1.0], &s);
            let out = r.expect("run");
            let st = out.stats;
            // Hits at 0.1 … 0.9 (the one at the stop time is not handled).
            assert_eq!(st.events, 9, "{method:?}");
            if method == Method::Dopri5 {
                // Start: f0 and the initial-step probe; 6 new stages per attempt (FSAL).
                assert_eq!(
                    st.rhs_evals,
                    2 + 6 * (st.steps + st.rejected_steps) + st.events,
                    "{method:?} restarts {restarts}: {st:?}"
                );
            } else if !restarts {
                // Radau5 keeps its Jacobian across the hits: one for the whole run.
                assert_eq!(st.jacobian_evals, 1, "{st:?}");
            } else {
                assert!(st.jacobian_evals >= 10, "{st:?}");
            }
            if !restarts {
                assert!(
                    (x[0] - (-1.0f64).exp()).abs() < 1e-7,
                    "{method:?}: {}",
                    x[0]
                );
            }
        }
    }
}

/// `x' = −k·x` with one time event at `t_switch` where the handler sets `k = k_after` and
/// multiplies the state by `scale_after`; records every output point.
struct Switched {
    k: f64,
    t_switch: f64,
    k_after: f64,
    scale_after: f64,
    rec: Recorder,
}

impl drivelink_solver::HybridSystem for Switched {
    fn n_states(&self) -> usize {
        1
    }
    fn n_guards(&self) -> usize {
        0
    }
    fn derivatives(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = -self.k * x[0];
    }
    fn guards(&mut self, _t: f64, _x: &[f64], _g: &mut [f64]) {}
    fn next_time_event(&self, t: f64) -> f64 {
        if t < self.t_switch {
            self.t_switch
        } else {
            f64::INFINITY
        }
    }
    fn handle_event(
        &mut self,
        _t: f64,
        x: &mut [f64],
        c: drivelink_solver::EventCause<'_>,
    ) -> Result<EventAction, drivelink_solver::SystemError> {
        if c.kind == EventKind::Time {
            self.k = self.k_after;
            x[0] *= self.scale_after;
        }
        Ok(EventAction::Continue)
    }
    fn guard_name(&self, i: usize) -> String {
        format!("g{i}")
    }
    fn output(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        self.rec.push(t, x, kind)
    }
}

/// Accepted step sizes of a run with output at the steps: `(before, after)` the event,
/// without the step that landed on it.
fn steps_around(rec: &Recorder, t_switch: f64) -> (Vec<f64>, Vec<f64>) {
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for w in rec.t.windows(2) {
        let h = w[1] - w[0];
        if h <= 0.0 || w[1] == t_switch {
            continue;
        }
        if w[1] < t_switch {
            before.push(h);
        } else {
            after.push(h);
        }
    }
    (before, after)
}

#[test]
fn step_after_a_time_event_continues_from_the_step_size_it_had() {
    // A new rate of the same size at t = 3.05: the dynamics keep their time scale, so the
    // first step after the event is 0.7 × the last step the controller chose before it
    // (Hairer's initial-step estimate would start about ten times shorter), and the
    // solution stays accurate.
    for method in [Method::Dopri5, Method::Dop853, Method::Radau5] {
        let mut sys = Switched {
            k: 1.0,
            t_switch: 3.05,
            k_after: 1.2,
            scale_after: 1.0,
            rec: Recorder::default(),
        };
        let (r, x) = run(&mut sys, &[1.0], &settings(method, 6.0));
        let out = r.expect("run");
        assert_eq!(out.stats.events, 1);
        let (before, after) = steps_around(&sys.rec, 3.05);
        let last_free = *before.last().expect("steps before the event");
        let first = after[0];
        assert!(
            (first - 0.7 * last_free).abs() <= 1e-12 * last_free || first < 0.7 * last_free,
            "{method:?}: first step {first} after a last free step {last_free}"
        );
        assert!(
            first > 0.3 * last_free,
            "{method:?}: first step {first} after a last free step {last_free}"
        );
        let exact = (-3.05f64).exp() * (-1.2 * (6.0 - 3.05f64)).exp();
        assert!(
            (x[0] - exact).abs() < 1e-5 * exact,
            "{method:?}: {} against {exact}",
            x[0]
        );
    }
}

#[test]
fn time_event_into_fast_dynamics_still_meets_the_tolerance() {
    // At t = 3.05 the rate jumps from 1 to 200 and the state is tripled: the step the
    // integration had is far too long for the new dynamics. Error control rejects it and
    // shortens it until the error test passes, so the solution after the event is as
    // accurate as after a fresh start.
    for method in [Method::Dopri5, Method::Dop853, Method::Radau5] {
        let mut sys = Switched {
            k: 1.0,
            t_switch: 3.05,
            k_after: 200.0,
            scale_after: 3.0,
            rec: Recorder::default(),
        };
        let (r, _) = run(&mut sys, &[1.0], &settings(method, 3.2));
        let out = r.expect("run");
        assert!(out.stats.rejected_steps >= 1, "{method:?}: {:?}", out.stats);
        let (before, _) = steps_around(&sys.rec, 3.05);
        let last_free = *before.last().expect("steps before the event");
        for (t, x) in sys.rec.t.iter().zip(&sys.rec.x) {
            if *t > 3.05 {
                let exact = 3.0 * (-3.05f64).exp() * (-200.0 * (t - 3.05)).exp();
                assert!(
                    (x[0] - exact).abs() < 1e-5 * 3.0 * (-3.05f64).exp(),
                    "{method:?} at {t}: {} against {exact} (step before {last_free})",
                    x[0]
                );
            }
        }
    }
}
