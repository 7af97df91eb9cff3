//! The 1,000-lag chain of `benches/netlists/tf_chain_1000.json` written by hand: a chain
//! of first-order lags `y_k' = (u_k − y_k)/τ`, `τ = 0.005 s`, `u_0 = 1` (the netlist's
//! Constant), `u_k = y_(k−1)`, from rest; integrated by drivelink's solver with the
//! netlist's settings (Dopri5, rtol 1e-6, atol 1e-8, 10 s, output at every step: the last
//! lag's value kept per step, as the netlist logs it).
//!
//! `lag_chain_hand` runs it once; `--runs N` runs it N times in process and prints the
//! fastest and the median wall time (as `examples/time_runs` does for a netlist). Used by
//! `benches/peer/compare.sh`, which times it beside drivelink and scipy.

mod repeat;

use std::process::ExitCode;
use std::time::Instant;

use drivelink_solver::{
    integrate, EventAction, EventCause, HybridSystem, Method, OutputKind, Settings, Stats,
    SystemError,
};

/// Lags in the chain.
const N: usize = 1000;
/// Time constant of every lag, s.
const TAU: f64 = 0.005;

/// The chain, and the last lag's value at every output point.
struct LagChain {
    /// `1/τ`.
    rate: f64,
    out: Vec<(f64, f64)>,
}

impl HybridSystem for LagChain {
    fn n_states(&self) -> usize {
        N
    }
    fn n_guards(&self) -> usize {
        0
    }
    fn derivatives(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) {
        let mut u = 1.0;
        for (d, &y) in dx.iter_mut().zip(x) {
            *d = self.rate * (u - y);
            u = y;
        }
    }
    fn guards(&mut self, _t: f64, _x: &[f64], _g: &mut [f64]) {}
    fn next_time_event(&self, _t: f64) -> f64 {
        f64::INFINITY
    }
    fn handle_event(
        &mut self,
        _t: f64,
        _x: &mut [f64],
        _cause: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        Ok(EventAction::Continue)
    }
    fn guard_name(&self, i: usize) -> String {
        format!("guard{i}")
    }
    fn output(&mut self, t: f64, x: &[f64], _kind: OutputKind) {
        self.out.push((t, x[N - 1]));
    }
    fn output_states(&self) -> Option<Vec<usize>> {
        Some(vec![N - 1])
    }
}

/// One run: the chain after it and the solver's counters; the integration's wall time.
fn run() -> Result<((LagChain, Stats), f64), String> {
    let settings = Settings {
        method: Method::Dopri5,
        stop_time: 10.0,
        rtol: 1e-6,
        atol: 1e-8,
        output_interval: None,
        output_points: None,
        ..Settings::default()
    };
    let clock = Instant::now();
    let mut chain = LagChain {
        rate: 1.0 / TAU,
        out: Vec::new(),
    };
    let mut x = vec![0.0; N];
    let out = integrate(&mut chain, &mut x, &settings).map_err(|f| format!("{:?}", f.error))?;
    let wall = clock.elapsed().as_secs_f64();
    Ok(((chain, out.stats), wall))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs = match args.as_slice() {
        [] => Ok(1),
        [flag, n] if flag == "--runs" => repeat::count("lag_chain_hand", n),
        _ => Err("usage: lag_chain_hand [--runs N]".to_string()),
    };
    let done = runs.and_then(|runs| {
        repeat::repeat(runs, run).map_err(|e| format!("lag_chain_hand: the run failed: {e}"))
    });
    let ((chain, stats), _, times) = match done {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let y_last = chain.out.last().map_or(f64::NAN, |o| o.1);
    println!(
        "hand: y_last(10) = {y_last:.10}, {} steps, {} rhs, {} outputs; {}",
        stats.steps,
        stats.rhs_evals,
        stats.output_points,
        repeat::summary(&times)
    );
    ExitCode::SUCCESS
}
