//! The stiff driveline (1 kHz shaft, clutch engagement and lock, 10 s) with Dopri5,
//! Radau5 and Auto at rtol = atol = 1e-6: wall time per run, and the work counters printed
//! once before measuring. The system is the hand-written `Driveline` of the shared solver
//! test set (the same physics as `blocks/tests/stiff_driveline.rs`, without the block
//! model's energy-integral states).
//!
//! `cargo bench -p drivelink-solver --bench stiff_driveline -- --warm-up-time 1 --measurement-time 3`

use criterion::{criterion_group, criterion_main, Criterion};
use drivelink_solver::{integrate, Method, Settings};

#[path = "../tests/common/mod.rs"]
mod common;
use common::Driveline;

fn settings(method: Method) -> Settings {
    Settings {
        method,
        stop_time: 10.0,
        rtol: 1e-6,
        atol: 1e-6,
        ..Settings::default()
    }
}

fn run(method: Method) -> drivelink_solver::Stats {
    let mut sys = Driveline::new();
    let mut x = Driveline::x0();
    match integrate(&mut sys, &mut x, &settings(method)) {
        Ok(out) => out.stats,
        Err(f) => panic!("{}: {}", method.name(), f.error),
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("stiff_driveline");
    for method in [Method::Dopri5, Method::Radau5, Method::Auto] {
        let s = run(method);
        eprintln!(
            "{:>6}: {} steps, {} rejected, {} derivative calls ({} for {} Jacobians), {} LU, {} Newton iterations, {} guard calls",
            method.name(),
            s.steps,
            s.rejected_steps,
            s.rhs_evals,
            s.jacobian_rhs_evals,
            s.jacobian_evals,
            s.lu_decompositions,
            s.newton_iterations,
            s.guard_evals
        );
        g.bench_function(method.name(), |b| b.iter(|| run(method)));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
