//! Benchmarks of the run report and the block diagram for the full-car demo: drawing the
//! diagram (ports from the registry, layered layout, SVG, with the gearbox's inner level)
//! and writing report.html (charts, tables, diagram, the embedded partial plotly.js bundle).
//! Prints the report's size. Then the diagram of a large model, the 1,000-lag chain.
//!
//! Run: `cargo bench --bench report`. Numbers go to BENCHMARKS.md.

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use drivelink_netlist as netlist;
use drivelink_report::{diagram, render_report, DiagramOptions, Links, PortTable, ReportInput};

fn bench(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/netlists/full_car.json");
    let d = netlist::load_file(&path).expect("full_car.json loads");
    let reg = drivelink_blocks::registry();
    let mut model = drivelink_core::compile(&d, &reg).expect("full car compiles");
    let res = model.run();
    let audit = model.energy_audit();
    let opts = DiagramOptions {
        expand: true,
        links: Links::Anchors,
    };
    let draw = || {
        let ports = PortTable::from_registry(&d, &reg);
        diagram::render(&d, &ports, &opts).expect("diagram")
    };
    let drawing = draw();
    let input = ReportInput {
        result: &res,
        scopes: &res.scopes,
        energy: Some(&audit),
        diagram: Some(&drawing.levels),
    };
    let html = render_report(&input).expect("report");
    let js = drivelink_report::embedded_plotly_js()
        .expect("plotly.js")
        .len();
    println!(
        "full_car report.html: {} bytes ({} plotly.js, {} own); top-level diagram SVG {} bytes",
        html.len(),
        js,
        html.len() - js,
        drawing.levels[0].svg.len()
    );
    c.bench_function("full_car/diagram", |b| b.iter(draw));
    c.bench_function("full_car/report_html", |b| b.iter(|| render_report(&input)));

    // A large diagram: the 1,000-lag chain of the kernel benchmark.
    let chain = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/netlists/tf_chain_1000.json");
    let chain = netlist::load_file(&chain).expect("tf_chain_1000.json loads");
    let top = DiagramOptions {
        expand: false,
        links: Links::None,
    };
    c.bench_function("tf_chain_1000/diagram", |b| {
        b.iter(|| {
            let ports = PortTable::from_registry(&chain, &reg);
            diagram::render(&chain, &ports, &top).expect("diagram")
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
