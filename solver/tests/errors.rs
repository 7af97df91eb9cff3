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

/// Slow to evaluate: x' = −x with a 200 µs pause per evaluation.
fn slow_decay() -> Custom {
    Custom::new(
        1,
        0,
        |_, x, dx| {
            std::thread::sleep(std::time::Duration::from_micros(200));
            dx[0] = -x[0];
        },
        |_, _, _| {},
        EventAction::Continue,
    )
}

#[test]
fn timeout_ends_the_run_with_partial_results() {
    // 1e5 s at max_step 0.01 would take 1e7 steps (hours at 200 µs per evaluation); the
    // 50 ms limit ends it after a few dozen steps with the outputs so far delivered.
    for method in [Method::Dopri5, Method::Radau5] {
        let mut sys = slow_decay();
        let s = Settings {
            max_step: 0.01,
            timeout: Some(0.05),
            ..settings(method, 1e5)
        };
        let (r, x) = run(&mut sys, &[1.0], &s);
        let f = r.expect_err("must time out");
        let SolverError::Timeout { t, seconds } = f.error else {
            panic!("{method:?}: {:?}", f.error)
        };
        assert_eq!(seconds, 0.05);
        assert_eq!(f.end_time, t);
        assert!(t > 0.0 && t < 1e3, "{method:?}: t = {t}");
        // The partial trajectory reached t and is right (x = e^-t).
        assert_eq!(*sys.rec.t.last().unwrap(), t);
        assert_eq!(x, *sys.rec.x.last().unwrap());
        assert!(
            (x[0] - (-t).exp()).abs() < 1e-5,
            "{method:?}: {} at {t}",
            x[0]
        );
        assert_eq!(f.stats.output_points, sys.rec.t.len() as u64);
        assert!(f.error.to_string().contains("timeout"), "{}", f.error);
    }
}

/// Regression: with an output grid coarser than the distance a failed run covered (a
/// timeout at t = 0.09 s with outputs every 10 s), only the initial point was kept, though
/// the message says "results up to t were kept". The last good state is now the run's
/// final output point.
#[test]
fn failed_run_ends_with_its_last_good_state_on_a_coarse_grid() {
    for method in [Method::Dopri5, Method::Radau5] {
        let mut sys = slow_decay();
        let s = Settings {
            max_step: 0.01,
            timeout: Some(0.05),
            output_interval: Some(1e4),
            ..settings(method, 1e5)
        };
        let (r, x) = run(&mut sys, &[1.0], &s);
        let f = r.expect_err("must time out");
        let SolverError::Timeout { t, .. } = f.error else {
            panic!("{method:?}: {:?}", f.error)
        };
        assert!(t > 0.0, "{method:?}");
        assert_eq!(
            sys.rec.t,
            vec![0.0, t],
            "{method:?}: initial point and last good state"
        );
        assert_eq!(*sys.rec.kind.last().unwrap(), OutputKind::Final);
        assert_eq!(x, *sys.rec.x.last().unwrap());
        assert!(
            (x[0] - (-t).exp()).abs() < 1e-5,
            "{method:?}: {} at {t}",
            x[0]
        );
        assert_eq!(f.stats.output_points, 2);
    }
}

/// Three states; only x1 blows up (x1' = x1², finite-time singularity at t = 1).
fn blow_up_in_x1() -> Custom {
    Custom::new(
        3,
        0,
        |_, x, dx| {
            dx[0] = -x[0];
            dx[1] = x[1] * x[1];
            dx[2] = 0.5;
        },
        |_, _, _| {},
        EventAction::Continue,
    )
}

#[test]
fn step_size_underflow_names_the_state_that_caused_it() {
    for method in adaptive_methods() {
        let mut sys = blow_up_in_x1();
        let (r, _) = run(&mut sys, &[1.0, 1.0, 0.0], &settings(method, 2.0));
        let f = r.expect_err("must fail");
        match f.error {
            SolverError::StepSizeUnderflow { index, .. } => {
                assert_eq!(index, Some(1), "{method:?}: {}", f.error);
                assert!(f.error.to_string().contains("largest error in state 1"));
            }
            SolverError::NonFinite { index, .. } => assert_eq!(index, 1, "{method:?}"),
            ref e => panic!("{method:?}: {e:?}"),
        }
        assert_eq!(f.error.state_index(), Some(1));
    }
}

#[test]
fn max_steps_names_the_state_with_the_largest_error() {
    // x0 is constant (no error), x1 oscillates fast: x1 dominates every error estimate.
    for method in adaptive_methods() {
        let mut sys = Custom::new(
            3,
            0,
            |_, x, dx| {
                dx[0] = 0.0;
                dx[1] = 50.0 * x[2];
                dx[2] = -50.0 * x[1];
            },
            |_, _, _| {},
            EventAction::Continue,
        );
        let s = Settings {
            max_steps: 20,
            ..settings(method, 10.0)
        };
        let (r, _) = run(&mut sys, &[1.0, 1.0, 0.0], &s);
        let f = r.expect_err("must fail");
        let SolverError::MaxSteps { index, .. } = f.error else {
            panic!("{method:?}: {:?}", f.error)
        };
        assert!(matches!(index, Some(1) | Some(2)), "{method:?}: {index:?}");
    }
    // RK4 has no error estimate: no culprit.
    let mut p = oscillator();
    let s = Settings {
        max_steps: 5,
        ..settings(Method::Rk4 { step: 1e-3 }, 1.0)
    };
    let (r, _) = run(&mut p, &[1.0, 0.0], &s);
    let f = r.expect_err("must fail");
    assert_eq!(f.error.state_index(), None);
    assert!(!f.error.to_string().contains("largest error"));
}

#[test]
fn guard_samples_and_timeout_are_validated() {
    for s in [
        Settings {
            guard_samples: Settings::MAX_GUARD_SAMPLES + 1,
            ..Settings::default()
        },
        Settings {
            timeout: Some(0.0),
            ..Settings::default()
        },
        Settings {
            timeout: Some(f64::NAN),
            ..Settings::default()
        },
    ] {
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
}

#[test]
fn method_names_round_trip_and_unknown_names_list_the_valid_ones() {
    for &name in Method::NAMES {
        let step = (name == "rk4").then_some(1e-3);
        let m = Method::from_name(name, step).unwrap_or_else(|e| panic!("{name}: {e}"));
        let canonical = if name == "stiff" { "radau5" } else { name };
        assert_eq!(m.name(), canonical);
    }
    assert_eq!(Method::from_name("stiff", None), Ok(Method::Radau5));
    let e = Method::from_name("ode15s", None).unwrap_err();
    for &name in Method::NAMES {
        assert!(e.contains(name), "{e}");
    }
    assert!(Method::from_name("rk4", None).unwrap_err().contains("step"));
    assert!(Method::from_name("rk4", Some(-1.0)).is_err());
    assert!(Method::from_name("radau5", Some(1e-3))
        .unwrap_err()
        .contains("adaptive"));
}

#[test]
fn estimated_output_points_count_the_grid_exactly() {
    // Smooth problem (no events): the estimate equals what the run delivers.
    for (stop, dt) in [(10.0, 0.05), (10.0, 0.3), (1.0, 0.1), (2.5, 1.0)] {
        let s = Settings {
            output_interval: Some(dt),
            ..settings(Method::Dopri5, stop)
        };
        let mut p = decay();
        let (r, _) = run(&mut p, &[1.0], &s);
        let out = r.expect("run");
        assert_eq!(
            s.estimated_output_points(),
            Some(p.rec.t.len() as f64),
            "{stop} {dt}"
        );
        assert_eq!(out.stats.output_points, p.rec.t.len() as u64);
    }
    let absurd = Settings {
        output_interval: Some(5e-324),
        ..Settings::default()
    };
    assert_eq!(absurd.estimated_output_points(), Some(f64::INFINITY));
    assert_eq!(Settings::default().estimated_output_points(), None);
    let tiny_step = Settings {
        max_step: 1e-12,
        ..Settings::default()
    };
    assert_eq!(tiny_step.estimated_min_steps(), Some(1e13));
}

/// Regression (DOPRI5's error sum is also the finiteness check of `y1`):
/// a state that overflows while every stage derivative stays finite has an infinite error
/// scale and so a zero error term; the step must still not be accepted. `x' = 1e306` from
/// `x = 1.7e308` overflows f64 at `t ≈ 9.77 s` (the stage sums `Σ a·k` stay far from it).
/// The explicit kernels (Radau's Newton iteration does not converge at these magnitudes
/// and fails at t = 0 with a step-size underflow naming state 0).
#[test]
fn an_overflowing_state_is_never_accepted() {
    for method in [Method::Dopri5, Method::Dop853] {
        let mut sys = Custom::new(
            1,
            0,
            |_, _, dx| dx[0] = 1e306,
            |_, _, _| {},
            EventAction::Continue,
        );
        let (r, _) = run(&mut sys, &[1.7e308], &settings(method, 20.0));
        let f = r.expect_err("must fail");
        assert_eq!(f.error.state_index(), Some(0), "{method:?}: {}", f.error);
        // The exact solution 1.7e308 + 1e306·t reaches f64::MAX at t = 9.769...: the run
        // ends there, and every recorded state is finite.
        let t_max = (f64::MAX - 1.7e308) / 1e306;
        assert!(
            (f.end_time - t_max).abs() < 1e-3 * t_max,
            "{method:?}: {}",
            f.error
        );
        assert!(
            sys.rec.x.iter().flatten().all(|v| v.is_finite()),
            "{method:?}"
        );
    }
}

#[test]
fn a_first_step_too_small_to_take_names_the_state_that_forces_it() {
    // x1' = 1e120: the automatic first step is below 1e-16 s, an underflow before any step
    // is attempted; the state whose rate forces it is named.
    for method in adaptive_methods() {
        let mut sys = Custom::new(
            3,
            0,
            |_, _, dx| {
                dx[0] = 1.0;
                dx[1] = 1e120;
                dx[2] = -1.0;
            },
            |_, _, _| {},
            EventAction::Continue,
        );
        let (r, _) = run(&mut sys, &[0.0; 3], &settings(method, 1.0));
        let f = match r {
            Ok(o) => panic!("{method:?}: {o:?}"),
            Err(f) => f,
        };
        let SolverError::StepSizeUnderflow { index, .. } = f.error else {
            panic!("{method:?}: {:?}", f.error)
        };
        assert_eq!(index, Some(1), "{method:?}: {}", f.error);
        assert_eq!(f.stats.steps, 0, "{method:?}");
    }
}
