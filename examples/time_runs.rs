//! Time the simulation of a netlist in process: compile once, run it N times, print the
//! fastest and median wall time of the run itself (no file output) with its statistics.
//!
//! ```text
//! cargo run --release --example time_runs -- models/netlists/full_car.json 50
//! ```
//!
//! Used for the numbers in BENCHMARKS.md (with `benches/peer/*.py` as the peers).

use std::io::Write;
use std::path::Path;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: time_runs MODEL.json [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
        .max(1);
    let reg = drivelink_blocks::registry();
    let mut model = match drivelink_netlist::compile_file(Path::new(path), &reg) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) ends the report quietly, as the CLI does.
    let mut say = |line: String| {
        if writeln!(out, "{line}").is_err() {
            std::process::exit(0);
        }
    };
    say(format!("plan: {}", model.plan().summary()));
    let (blocks, rows) = model.skipped_for_derivatives();
    say(format!(
        "derivative evaluations skip {blocks} block output stages and {rows} linear output rows"
    ));
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let t0 = Instant::now();
        let r = model.run();
        times.push(t0.elapsed().as_secs_f64());
        last = Some(r);
    }
    times.sort_by(f64::total_cmp);
    let r = last.expect("at least one run");
    let s = r.stats;
    say(format!(
        "{}: {} at t = {} s; min {:.3} ms, median {:.3} ms over {runs} runs; {} steps, {} rhs, {} guard evals, {} outputs, {} model evals",
        r.model,
        r.status.as_str(),
        r.end_time,
        times[0] * 1e3,
        times[runs / 2] * 1e3,
        s.steps,
        s.rhs_evals,
        s.guard_evals,
        s.output_points,
        s.model_evals
    ));
    say(format!(
        "  {} rejected, {} events, {} jacobians ({} rhs), {} LU, {} Newton iterations; {} states",
        s.rejected_steps,
        s.events,
        s.jacobian_evals,
        s.jacobian_rhs_evals,
        s.lu_decompositions,
        s.newton_iterations,
        model.plan().n_states()
    ));
}
