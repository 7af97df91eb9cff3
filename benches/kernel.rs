//! Benchmarks of the simulation kernel: a chain of 1,000 first-order TransferFcn blocks
//! (10 s simulated, and the cost of one derivative evaluation), a 20-shaft driveline
//! (derivative evaluation and a 10 s run) and the full-car demo without plotting.
//!
//! Run: `cargo bench --bench kernel`. Numbers go to BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, Criterion};
use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, Model};
use drivelink_solver::HybridSystem;
use serde_json::json;

/// Step -> TF -> TF -> ... (n first-order lags with time constants spread 0.1..1 s).
pub fn tf_chain(n: usize) -> Diagram {
    let mut d = Diagram::new("tf_chain");
    d.add("u", "Step", json!({"time": 0.0}));
    let mut prev = "u.y".to_string();
    for k in 0..n {
        let tau = 0.1 + 0.9 * (k as f64) / (n as f64);
        let name = format!("tf{k}");
        d.add(
            &name,
            "TransferFcn",
            json!({"num": [1.0], "den": [tau, 1.0]}),
        );
        d.connect(&[prev.clone(), format!("{name}.u")]);
        prev = format!("{name}.y");
    }
    d.log(&[prev]);
    d.settings.stop_time = 10.0;
    d.settings.rtol = 1e-6;
    d.settings.atol = 1e-8;
    d
}

/// A 20-shaft driveline: a torque source, 20 inertias joined by torsional spring-dampers,
/// a gear in the middle, a slipping clutch near the end and a brake on the last shaft.
pub fn driveline20() -> Diagram {
    let mut d = Diagram::new("driveline20");
    d.add(
        "tq",
        "Sine",
        json!({"amplitude": 50.0, "frequency": 2.0, "offset": 100.0}),
    );
    d.add("src", "TorqueSource", json!({}));
    d.connect(&["tq.y", "src.tau"]);
    for k in 0..20 {
        d.add(
            &format!("J{k}"),
            "Inertia",
            json!({"J": 0.05 + 0.01 * k as f64}),
        );
    }
    d.connect(&["src.flange", "J0.flange"]);
    for k in 0..19 {
        let (a, b) = (format!("J{k}.flange"), format!("J{}.flange", k + 1));
        match k {
            9 => {
                d.add("gear", "IdealGear", json!({"ratio": 3.0}));
                d.connect(&[a, "gear.flange_a".into()]);
                d.connect(&["gear.flange_b".to_string(), b]);
            }
            15 => {
                d.add("clutch", "Clutch", json!({"mu": 0.3, "fn_max": 2000.0}));
                d.add(
                    "press",
                    "Ramp",
                    json!({"start_time": 1.0, "duration": 2.0, "height": 1.0}),
                );
                d.connect(&["press.y", "clutch.f"]);
                d.connect(&[a, "clutch.flange_a".into()]);
                d.connect(&["clutch.flange_b".to_string(), b]);
            }
            _ => {
                let s = format!("k{k}");
                d.add(&s, "SpringDamper", json!({"c": 2000.0, "d": 5.0}));
                d.connect(&[a, format!("{s}.flange_a")]);
                d.connect(&[format!("{s}.flange_b"), b]);
            }
        }
    }
    d.add("load", "Damper", json!({"d": 2.0}));
    d.add("ground", "Fixed", json!({}));
    d.connect(&["J19.flange", "load.flange_a"]);
    d.connect(&["load.flange_b", "ground.flange"]);
    d.log(&["J0.w", "J19.w", "clutch.mode"]);
    d.settings.stop_time = 10.0;
    d.settings.rtol = 1e-6;
    d.settings.atol = 1e-6;
    d
}

fn compiled(d: &Diagram) -> Model {
    compile(d, &registry()).unwrap_or_else(|e| panic!("{e}"))
}

fn benches(c: &mut Criterion) {
    let chain = tf_chain(1000);
    let mut m = compiled(&chain);
    let x = m.initial_state().to_vec();
    let mut dx = vec![0.0; m.n_states()];
    // Alternate the time so the model's step-end evaluation cache never hits.
    let mut k = 0u64;
    c.bench_function("tf_chain_1000/rhs_eval", |b| {
        b.iter(|| {
            k += 1;
            m.derivatives(0.5 + (k & 1) as f64 * 1e-3, &x, &mut dx)
        })
    });
    c.bench_function("tf_chain_1000/run_10s", |b| {
        b.iter(|| compiled(&chain).run())
    });

    let dl = driveline20();
    let mut m = compiled(&dl);
    let x = m.initial_state().to_vec();
    let mut dx = vec![0.0; m.n_states()];
    c.bench_function("driveline20/rhs_eval", |b| {
        b.iter(|| {
            k += 1;
            m.derivatives(0.5 + (k & 1) as f64 * 1e-3, &x, &mut dx)
        })
    });
    c.bench_function("driveline20/run_10s", |b| b.iter(|| compiled(&dl).run()));

    let car = drivelink_models::full_car(&drivelink_models::FullCarParams::default());
    let mut m = compiled(&car);
    c.bench_function("full_car/run", |b| b.iter(|| m.run()));
}

criterion_group! {
    name = kernel;
    config = Criterion::default().sample_size(20);
    targets = benches
}
criterion_main!(kernel);
