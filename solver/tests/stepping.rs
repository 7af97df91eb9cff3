//! `Integration`: a run advanced to points its caller chooses takes the one-shot run's
//! steps and events, serves the points from the dense output, handles a time event due at
//! a point before returning, and restarts at a point where the system was changed from
//! outside.

mod common;
use common::*;
use drivelink_solver::{
    EventAction, EventCause, EventKind, HybridSystem, Integration, Method, OutputKind, Settings,
    Status, SystemError,
};

/// The ball's height and velocity at `t` from rest at height 1, bouncing at the given
/// impact instants with restitution `e` (free fall between them).
fn ball_at(b: &Ball, impacts: &[f64], t: f64) -> [f64; 2] {
    let (mut t0, mut h0, mut v0) = (0.0, 1.0, 0.0);
    for &ti in impacts.iter().take_while(|&&ti| ti <= t) {
        v0 = -b.e * (v0 - b.g * (ti - t0));
        t0 = ti;
        h0 = 0.0;
    }
    let dt = t - t0;
    [h0 + v0 * dt - 0.5 * b.g * dt * dt, v0 - b.g * dt]
}

#[test]
fn stepping_at_fine_points_takes_the_one_shot_steps_and_impacts() {
    for method in adaptive_methods() {
        let s = settings(method, 3.0);
        let mut native = Ball::new(0.8);
        let (r, _) = run(&mut native, &[1.0, 0.0], &s);
        let native_out = r.unwrap_or_else(|f| panic!("{method:?}: {}", f.error));

        let mut b = Ball::new(0.8);
        let mut it = Integration::start(&mut b, &[1.0, 0.0], &s).unwrap();
        let h = 1e-3;
        let mut worst: f64 = 0.0;
        for k in 1..=3000 {
            let t = if k == 3000 { 3.0 } else { k as f64 * h };
            let st = it.advance_to(&mut b, t).unwrap();
            assert_eq!(st, Status::Completed);
            assert_eq!(it.time(), t);
            let exact = ball_at(&b, &b.impacts.clone(), t);
            for (xi, ei) in it.state().iter().zip(exact) {
                worst = worst.max((xi - ei).abs());
            }
        }
        assert_eq!(it.ended(), Some(Status::Completed));
        // The same steps and the same event instants, bit for bit.
        assert_eq!(b.impacts, native.impacts, "{method:?}");
        assert_eq!(it.stats().steps, native_out.stats.steps, "{method:?}");
        assert_eq!(it.stats().events, native_out.stats.events, "{method:?}");
        // Nothing was handed to `output`: the caller reads the state.
        assert!(b.rec.t.is_empty());
        // Free fall is a parabola: every method's dense output holds it to round-off,
        // except Radau5's third-order interpolant (exact to its tolerance only).
        let tol = if method == Method::Dopri5 || method == Method::Dop853 {
            1e-9
        } else {
            1e-5
        };
        assert!(worst < tol, "{method:?}: worst state error {worst:e}");
    }
}

#[test]
fn time_event_due_at_a_point_is_handled_before_it_returns() {
    let mut sys = Timed {
        times: vec![0.5, 1.25],
        calls: vec![],
        stop_at: None,
        rec: Recorder::default(),
    };
    let s = settings(Method::Dopri5, 2.0);
    let mut it = Integration::start(&mut sys, &[1.0], &s).unwrap();
    for k in 1..=8 {
        let t = 0.25 * k as f64;
        it.advance_to(&mut sys, t).unwrap();
        // x' = -x with +1 at 0.5 and at 1.25 (the value right after each).
        let mut x = (-t).exp();
        if t >= 0.5 {
            x += (-(t - 0.5)).exp();
        }
        if t >= 1.25 {
            x += (-(t - 1.25)).exp();
        }
        assert!(
            (it.state()[0] - x).abs() < 1e-6,
            "t = {t}: {}",
            it.state()[0]
        );
    }
    let kinds: Vec<(f64, EventKind)> = sys.calls.iter().map(|c| (c.t, c.kind)).collect();
    assert_eq!(
        kinds,
        [
            (0.0, EventKind::Initial),
            (0.5, EventKind::Time),
            (1.25, EventKind::Time)
        ]
    );
}

/// `x' = (u − x)/τ`: a first-order lag of an input `u` set from outside.
struct Lag {
    u: f64,
    tau: f64,
    external: Vec<f64>,
}

impl HybridSystem for Lag {
    fn n_states(&self) -> usize {
        1
    }
    fn n_guards(&self) -> usize {
        0
    }
    fn derivatives(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = (self.u - x[0]) / self.tau;
    }
    fn guards(&mut self, _t: f64, _x: &[f64], _g: &mut [f64]) {}
    fn next_time_event(&self, _t: f64) -> f64 {
        f64::INFINITY
    }
    fn handle_event(
        &mut self,
        t: f64,
        _x: &mut [f64],
        c: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        if c.kind == EventKind::External {
            self.external.push(t);
        }
        Ok(EventAction::Continue)
    }
    fn guard_name(&self, i: usize) -> String {
        format!("g{i}")
    }
    fn output(&mut self, _t: f64, _x: &[f64], _kind: OutputKind) {}
}

#[test]
fn input_changed_at_a_point_restarts_there() {
    for open_end in [false, true] {
        let mut sys = Lag {
            u: 0.0,
            tau: 0.2,
            external: vec![],
        };
        let s = Settings {
            stop_time: if open_end { f64::INFINITY } else { 2.0 },
            rtol: 1e-10,
            atol: 1e-12,
            ..Settings::default()
        };
        let mut it = Integration::start(&mut sys, &[0.0], &s).unwrap();
        it.advance_to(&mut sys, 0.3).unwrap();
        assert_eq!(it.state()[0], 0.0);
        // u steps to 1 at 0.3 s: x = 1 − exp(−(t − 0.3)/τ) from there.
        sys.u = 1.0;
        it.interrupt(&mut sys).unwrap();
        assert_eq!(sys.external, [0.3]);
        for k in 4..=20 {
            let t = 0.1 * k as f64;
            it.advance_to(&mut sys, t).unwrap();
            let exact = 1.0 - (-(t - 0.3) / sys.tau).exp();
            let err = (it.state()[0] - exact).abs();
            assert!(err < 1e-8, "open end {open_end}, t = {t}: error {err:e}");
        }
        let ended = it.ended();
        assert_eq!(ended, (!open_end).then_some(Status::Completed));
    }
}

#[test]
fn stepping_refuses_to_go_back_or_past_the_stop_time() {
    let mut sys = Lag {
        u: 1.0,
        tau: 0.2,
        external: vec![],
    };
    let mut it = Integration::start(&mut sys, &[0.0], &settings(Method::Dopri5, 1.0)).unwrap();
    it.advance_to(&mut sys, 0.5).unwrap();
    let back = it.advance_to(&mut sys, 0.25).unwrap_err();
    assert!(
        back.error.to_string().contains("the run is at t = 0.5 s"),
        "{}",
        back.error
    );
    let past = it.advance_to(&mut sys, 1.5).unwrap_err();
    assert!(
        past.error.to_string().contains("after the stop time 1 s"),
        "{}",
        past.error
    );
}
