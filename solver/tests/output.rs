//! Output grid points of a system that names the states its outputs read
//! (`HybridSystem::output_states`): those states are interpolated bit for bit as when
//! every state is, and the run is otherwise the same.

use drivelink_solver::{
    integrate, EventAction, EventCause, HybridSystem, Method, OutputKind, Settings, SystemError,
};

/// A chain of lags `x_i' = (x_{i−1} − x_i)·r_i` (`x_{−1}` = 1) whose outputs read only the
/// states `shown` names (all when `None`); with `guarded`, one guard that never fires.
struct Chain {
    n: usize,
    shown: Option<Vec<usize>>,
    guarded: bool,
    /// (t, kind, the shown states' values) of every output point.
    rec: Vec<(f64, OutputKind, Vec<f64>)>,
}

impl Chain {
    fn new(n: usize, shown: Option<Vec<usize>>, guarded: bool) -> Chain {
        Chain {
            n,
            shown,
            guarded,
            rec: Vec::new(),
        }
    }
}

impl HybridSystem for Chain {
    fn n_states(&self) -> usize {
        self.n
    }
    fn n_guards(&self) -> usize {
        usize::from(self.guarded)
    }
    fn derivatives(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) {
        for i in 0..self.n {
            let u = if i == 0 { 1.0 } else { x[i - 1] };
            dx[i] = (u - x[i]) * (1.0 + 0.25 * i as f64);
        }
    }
    fn guards(&mut self, _t: f64, x: &[f64], g: &mut [f64]) {
        if self.guarded {
            g[0] = 2.0 - x[0];
        }
    }
    fn next_time_event(&self, _t: f64) -> f64 {
        f64::INFINITY
    }
    fn handle_event(
        &mut self,
        _t: f64,
        _x: &mut [f64],
        _c: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        Ok(EventAction::Continue)
    }
    fn guard_name(&self, i: usize) -> String {
        format!("g{i}")
    }
    fn output(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        let vals = match &self.shown {
            Some(idx) => idx.iter().map(|&i| x[i]).collect(),
            None => x.to_vec(),
        };
        self.rec.push((t, kind, vals));
    }
    fn output_states(&self) -> Option<Vec<usize>> {
        self.shown.clone()
    }
}

/// The recorded (t, kind, values of `idx`) of a run of `sys`.
fn record(mut sys: Chain, s: &Settings, idx: &[usize]) -> Vec<(u64, OutputKind, Vec<u64>)> {
    let mut x = vec![0.0; sys.n];
    let out = integrate(&mut sys, &mut x, s).expect("the chain runs");
    assert!(out.stats.output_points > 100, "{:?}", out.stats);
    let full = sys.shown.is_none();
    sys.rec
        .into_iter()
        .map(|(t, k, v)| {
            let vals = if full {
                idx.iter().map(|&i| v[i].to_bits()).collect()
            } else {
                v.iter().map(|x| x.to_bits()).collect()
            };
            (t.to_bits(), k, vals)
        })
        .collect()
}

#[test]
fn output_states_are_interpolated_as_when_every_state_is() {
    let shown = vec![3, 11];
    for method in [Method::Dopri5, Method::Dop853, Method::Radau5, Method::Auto] {
        for guarded in [false, true] {
            let s = Settings {
                method,
                stop_time: 8.0,
                output_interval: Some(0.01),
                ..Settings::default()
            };
            let all = record(Chain::new(12, None, guarded), &s, &shown);
            let some = record(Chain::new(12, Some(shown.clone()), guarded), &s, &shown);
            assert_eq!(all, some, "{method:?}, guarded {guarded}");
            let grid = all
                .iter()
                .filter(|r| r.1 == OutputKind::Interpolated)
                .count();
            assert_eq!(grid, 799, "{method:?}");
        }
    }
}

#[test]
fn an_output_point_leaves_the_other_states_alone() {
    // The states an output does not read are not interpolated: between two grid points of
    // one step they keep whatever the scratch held (here: not the interpolated values).
    struct Probe(Chain, Vec<Vec<f64>>);
    impl HybridSystem for Probe {
        fn n_states(&self) -> usize {
            self.0.n_states()
        }
        fn n_guards(&self) -> usize {
            0
        }
        fn derivatives(&mut self, t: f64, x: &[f64], dx: &mut [f64]) {
            self.0.derivatives(t, x, dx)
        }
        fn guards(&mut self, _t: f64, _x: &[f64], _g: &mut [f64]) {}
        fn next_time_event(&self, _t: f64) -> f64 {
            f64::INFINITY
        }
        fn handle_event(
            &mut self,
            _t: f64,
            _x: &mut [f64],
            _c: EventCause<'_>,
        ) -> Result<EventAction, SystemError> {
            Ok(EventAction::Continue)
        }
        fn guard_name(&self, i: usize) -> String {
            format!("g{i}")
        }
        fn output(&mut self, _t: f64, x: &[f64], kind: OutputKind) {
            if kind == OutputKind::Interpolated {
                self.1.push(x.to_vec());
            }
        }
        fn output_states(&self) -> Option<Vec<usize>> {
            Some(vec![5])
        }
    }
    let mut p = Probe(Chain::new(6, None, false), Vec::new());
    let mut x = vec![0.0; 6];
    let s = Settings {
        stop_time: 4.0,
        output_interval: Some(0.01),
        ..Settings::default()
    };
    integrate(&mut p, &mut x, &s).expect("the chain runs");
    let pts = &p.1;
    assert_eq!(pts.len(), 399);
    // State 5 is interpolated (it has risen from 0 by t = 4 s, its mean delay being
    // Σ 1/r_i ≈ 4 s); state 0, which has long settled near 1, is never: the scratch's zeros
    // stay.
    assert!(pts[398][5] > 0.2, "{:?}", pts[398]);
    assert!(pts.iter().all(|x| x[0] == 0.0));
}

/// The last call a [`LastCall`] system received: which method, at which point.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    Derivatives,
    StepEnd(u64, Vec<u64>),
    Guards(u64, Vec<u64>),
    Other,
}

/// Wraps a system and checks the integrator's promise on `output_at_last_call`: its point
/// is, bit for bit, that of the call just made, `guards` or `derivatives_step_end`.
struct LastCall<S> {
    inner: S,
    last: Seen,
    promised: usize,
    broken: Vec<String>,
}

fn bits(x: &[f64]) -> Vec<u64> {
    x.iter().map(|v| v.to_bits()).collect()
}

impl<S: HybridSystem> HybridSystem for LastCall<S> {
    fn n_states(&self) -> usize {
        self.inner.n_states()
    }
    fn n_guards(&self) -> usize {
        self.inner.n_guards()
    }
    fn derivatives(&mut self, t: f64, x: &[f64], dx: &mut [f64]) {
        self.last = Seen::Derivatives;
        self.inner.derivatives(t, x, dx);
    }
    fn derivatives_step_end(&mut self, t: f64, x: &[f64], dx: &mut [f64]) {
        self.last = Seen::StepEnd(t.to_bits(), bits(x));
        self.inner.derivatives_step_end(t, x, dx);
    }
    fn guards(&mut self, t: f64, x: &[f64], g: &mut [f64]) {
        self.last = Seen::Guards(t.to_bits(), bits(x));
        self.inner.guards(t, x, g);
    }
    fn next_time_event(&self, t: f64) -> f64 {
        self.inner.next_time_event(t)
    }
    fn handle_event(
        &mut self,
        t: f64,
        x: &mut [f64],
        cause: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        self.last = Seen::Other;
        self.inner.handle_event(t, x, cause)
    }
    fn guard_name(&self, i: usize) -> String {
        self.inner.guard_name(i)
    }
    fn output(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        self.last = Seen::Other;
        self.inner.output(t, x, kind);
    }
    fn output_at_last_call(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        self.promised += 1;
        let here = (t.to_bits(), bits(x));
        let kept = match &self.last {
            Seen::StepEnd(tb, xb) | Seen::Guards(tb, xb) => (*tb, xb.clone()) == here,
            _ => false,
        };
        if !kept {
            self.broken
                .push(format!("{kind:?} at t = {t} after {:?}", self.last));
        }
        self.output(t, x, kind);
    }
    fn output_states(&self) -> Option<Vec<usize>> {
        self.inner.output_states()
    }
}

#[test]
fn an_output_served_from_the_last_call_is_at_that_calls_point() {
    // With and without guards, on the output grid and at the step ends, for every method:
    // every output the integrator serves from the last call is at that call's point, and
    // the outputs are those of a run that compares nothing.
    let methods = [
        Method::Dopri5,
        Method::Dop853,
        Method::Rk4 { step: 1e-2 },
        Method::Radau5,
        Method::Auto,
    ];
    for method in methods {
        for guarded in [false, true] {
            for grid in [None, Some(0.05)] {
                let s = Settings {
                    method,
                    stop_time: 2.0,
                    output_interval: grid,
                    ..Settings::default()
                };
                let mut plain = Chain::new(6, None, guarded);
                let mut x = vec![0.0; 6];
                integrate(&mut plain, &mut x, &s).expect("runs");
                let mut sys = LastCall {
                    inner: Chain::new(6, None, guarded),
                    last: Seen::Other,
                    promised: 0,
                    broken: Vec::new(),
                };
                let mut x = vec![0.0; 6];
                integrate(&mut sys, &mut x, &s).expect("runs");
                let case = format!("{method:?}, guarded {guarded}, grid {grid:?}");
                assert!(sys.broken.is_empty(), "{case}: {:?}", sys.broken);
                let served_somewhere = guarded && grid.is_some()
                    || !guarded && grid.is_none() && !matches!(method, Method::Radau5);
                if served_somewhere {
                    assert!(
                        sys.promised > 0,
                        "{case}: no output served from the last call"
                    );
                }
                assert_eq!(sys.inner.rec, plain.rec, "{case}");
            }
        }
    }
}
