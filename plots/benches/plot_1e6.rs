//! Rendering 10^6 samples of two signals (PNG), exercising the per-column decimation.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use drivelink_plots::{render_scope_png, render_scope_svg};
use drivelink_results::result::SimResult;
use drivelink_results::scope::{ScopeSignal, ScopeSpec};

fn big_result(n: usize) -> SimResult {
    let mut r = SimResult::new("bench", vec!["engine.w".into(), "clutch.tau".into()]);
    r.time = (0..n).map(|i| i as f64 * 1e-5).collect();
    r.columns[0] = r
        .time
        .iter()
        .map(|t| 300.0 + 100.0 * (t * 3.0).sin() + (t * 900.0).sin())
        .collect();
    r.columns[1] = r
        .time
        .iter()
        .map(|t| 150.0 * (t * 1.7).cos() + 5.0 * (t * 2000.0).sin())
        .collect();
    r.end_time = r.time[n - 1];
    r
}

fn bench(c: &mut Criterion) {
    let r = big_result(1_000_000);
    let mut scope = ScopeSpec::new("bench", vec![ScopeSignal::new("engine.w").with_unit("rpm")]);
    scope
        .panels
        .push(vec![ScopeSignal::new("clutch.tau").with_unit("N*m")]);
    c.bench_function("png_1e6_two_signals", |b| {
        b.iter(|| render_scope_png(black_box(&r), black_box(&scope)).unwrap())
    });
    c.bench_function("svg_1e6_two_signals", |b| {
        b.iter(|| render_scope_svg(black_box(&r), black_box(&scope)).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
