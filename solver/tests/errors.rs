//! Failure modes: invalid settings, max steps, step-size underflow / non-finite state,
//! event iteration limit, chattering, system errors.

mod common;
use common::*;
use drivelink_solver::{
    integrate, EventAction, EventCause, EventKind, HybridSystem, Method, OutputKind, Settings,
    SolverError, SystemError,
};

#[test]
fn invalid_settings_are_rejected() {
    let bad = [
        Settings {
            stop_time: 0.0,
            ..Settings::default()
        },
        Settings {
            rtol: 0.0,
            ..Settings::default()
        },
        Settings {
            atol: -1.0,
            ..Settings::default()
        },
        Settings {
            method: Method::Rk4 { step: 0.0 },
            ..Settings::default()
        },
        Settings {
            output_interval: Some(0.0),
            ..Settings::default()
        },
        Settings {
            initial_step: Some(-1.0),
            ..Settings::default()
        },
        Settings {
            max_step: 0.0,
            ..Settings::default()
        },
        Settings {
            max_event_iterations: 0,
            ..Settings::default()
        },
        Settings {
            stop_time: f64::NAN,
            ..Settings::default()
        },
    ];
    for s in bad {
        let mut p = decay();
        let (r, _) = run(&mut p, &[1.0], &s);
        let f = r.expect_err("must fail");
        assert!(
            matches!(f.error, SolverError::InvalidSettings { .. }),
            "{s:?}: {:?}",
            f.error
        );
        assert!(p.rec.t.is_empty());
    }
    // Wrong state length.
    let mut p = decay();
    let mut x = vec![1.0, 2.0];
    let f = integrate(&mut p, &mut x, &Settings::default()).expect_err("must fail");
    assert!(f.error.to_string().contains("2 entries"), "{}", f.error);
}

#[test]
fn max_steps_error() {
    let mut p = oscillator();
    let s = Settings {
        max_steps: 10,
        ..settings(Method::Dopri5, 10.0)
    };
    let (r, _) = run(&mut p, &[1.0, 0.0], &s);
    let f = r.expect_err("must fail");
    let SolverError::MaxSteps { t, max_steps, .. } = f.error else {
        panic!("{:?}", f.error)
    };
    assert_eq!(max_steps, 10);
    assert_eq!(f.stats.steps + f.stats.rejected_steps, 10);
    assert_eq!(f.end_time, t);
    assert!(t > 0.0 && t < 10.0);
    assert!(
        f.error.to_string().contains(&format!("t = {t} s")),
        "{}",
        f.error
    );
}

#[test]
fn finite_time_blow_up_fails_near_t1() {
    // x' = x^2, x(0) = 1: x = 1/(1-t) blows up at t = 1.
    for method in methods() {
        let mut sys = Custom::new(
            1,
            0,
            |_, x, dx| dx[0] = x[0] * x[0],
            |_, _, _| {},
            EventAction::Continue,
        );
        let (r, _) = run(&mut sys, &[1.0], &settings(method, 2.0));
        let f = r.expect_err("must fail");
        let t = match f.error {
            SolverError::StepSizeUnderflow { t, .. } => t,
            SolverError::NonFinite { t, .. } => t,
            ref e => panic!("{method:?}: unexpected {e:?}"),
        };
        // The numerical blow-up time differs from 1 by the integration error; the fixed-step
        // RK4 cannot stop at the singularity and overflows shortly after it.
        let upper = if matches!(method, Method::Rk4 { .. }) {
            1.1
        } else {
            1.0 + 1e-4
        };
        assert!(t > 0.95 && t < upper, "{method:?}: t = {t}");
        assert!(f.end_time <= t && f.end_time > 0.95);
        assert!(
            f.error.to_string().contains(&format!("t = {t} s")),
            "{}",
            f.error
        );
        println!("{method:?}: {}", f.error);
    }
}

#[test]
fn event_iteration_limit() {
    // x' = -1 from 1, guard x; the handler changes nothing, so the guard stays negative.
    let mut sys = Custom::new(
        1,
        1,
        |_, _, dx| dx[0] = -1.0,
        |_, x, g| g[0] = x[0],
        EventAction::Continue,
    );
    let s = Settings {
        max_event_iterations: 7,
        ..settings(Method::Dopri5, 2.0)
    };
    let (r, _) = run(&mut sys, &[1.0], &s);
    let f = r.expect_err("must fail");
    let SolverError::EventIteration {
        t,
        iterations,
        ref guards,
    } = f.error
    else {
        panic!("{:?}", f.error)
    };
    assert!((t - 1.0).abs() < 1e-11);
    assert_eq!(iterations, 7);
    assert_eq!(guards, &vec!["custom.g0".to_string()]);
    let kinds: Vec<EventKind> = sys.calls.iter().map(|c| c.kind).collect();
    assert_eq!(kinds[0], EventKind::Initial);
    assert_eq!(kinds[1], EventKind::State);
    assert!(kinds[2..].iter().all(|&k| k == EventKind::Iteration));
    assert_eq!(kinds.len(), 1 + 7);
    assert!(f.error.to_string().contains("custom.g0"));
    assert_eq!(*sys.rec.kind.last().unwrap(), OutputKind::EventLeft);
}

#[test]
fn chattering_relay_is_reported() {
    for method in methods() {
        let mut sys = Relay {
            mode: 1.0,
            rec: Recorder::default(),
        };
        let (r, _) = run(&mut sys, &[0.5], &settings(method, 2.0));
        let f = r.expect_err("must fail");
        let SolverError::Chattering {
            t,
            ref guard,
            count,
            window,
        } = f.error
        else {
            panic!("{method:?}: {:?}", f.error)
        };
        assert_eq!(guard, "relay.sign");
        assert_eq!(count, 101);
        assert_eq!(window, 1e-6);
        assert!((t - 0.5).abs() < 1e-6, "{method:?}: {t}");
        assert!(f.error.to_string().contains("relay.sign"));
    }
}

/// A handler error becomes SolverError::System at the event time.
struct Failing;
impl HybridSystem for Failing {
    fn n_states(&self) -> usize {
        1
    }
    fn n_guards(&self) -> usize {
        0
    }
    fn derivatives(&mut self, _t: f64, _x: &[f64], dx: &mut [f64]) {
        dx[0] = 1.0;
    }
    fn guards(&mut self, _t: f64, _x: &[f64], _g: &mut [f64]) {}
    fn next_time_event(&self, t: f64) -> f64 {
        if t < 0.25 {
            0.25
        } else {
            f64::INFINITY
        }
    }
    fn handle_event(
        &mut self,
        _t: f64,
        _x: &mut [f64],
        c: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        if c.kind == EventKind::Time {
            return Err(SystemError {
                message: "singular network".into(),
            });
        }
        Ok(EventAction::Continue)
    }
    fn guard_name(&self, i: usize) -> String {
        format!("g{i}")
    }
    fn output(&mut self, _t: f64, _x: &[f64], _k: OutputKind) {}
}

#[test]
fn system_error_from_handler() {
    let (r, _) = run(&mut Failing, &[0.0], &settings(Method::Dop853, 1.0));
    let f = r.expect_err("must fail");
    assert_eq!(
        f.error,
        SolverError::System {
            t: 0.25,
            message: "singular network".into()
        }
    );
    assert_eq!(f.end_time, 0.25);
    assert_eq!(f.error.to_string(), "at t = 0.25 s: singular network");
}
