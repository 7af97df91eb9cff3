//! Build a model in Rust, run it and read its results.
//!
//! A flywheel (J = 2 kg·m², 30 rad/s) is stopped by a brake whose kinetic torque is 12 N·m:
//! it decelerates at 6 rad/s², locks at t = J·w0/T = 5 s and then stays at rest.
//!
//! ```sh
//! cargo run --example build_and_run          # writes out/examples/build_and_run.csv
//! ```

use std::error::Error;
use std::path::Path;

use drivelink::blocks::registry;
use drivelink::core::{compile, Diagram, EventTag, SimResult};
use serde_json::json;

/// Flywheel inertia, kg·m².
pub const J: f64 = 2.0;
/// Initial speed, rad/s.
pub const W0: f64 = 30.0;
/// Brake torque at full application, N·m.
pub const T: f64 = 12.0;

/// The model: an inertia, a brake to ground, a constant full application.
pub fn diagram() -> Diagram {
    let mut d = Diagram::new("brake");
    d.add("J", "Inertia", json!({"J": J, "w0": W0}));
    d.add("b", "Brake", json!({"max_torque": T}));
    d.add("one", "Constant", json!({"value": 1.0}));
    d.connect(&["J.flange", "b.flange"]);
    d.connect(&["one.y", "b.f"]);
    d.log(&["J.w", "b.mode", "b.tau"]);
    d.settings.stop_time = 8.0;
    d
}

/// Compile the model with the library blocks and run it.
pub fn simulate() -> Result<SimResult, drivelink::core::Error> {
    let mut model = compile(&diagram(), &registry())?;
    Ok(model.run())
}

/// The instant the brake locks, if it did.
pub fn lock_time(r: &SimResult) -> Option<f64> {
    r.events_of("b", EventTag::Lock).map(|e| e.time).next()
}

/// Run, print what the result holds and write it as CSV into `dir`.
pub fn run(dir: &Path) -> Result<SimResult, Box<dyn Error>> {
    let r = simulate()?;
    println!(
        "{}: {} at t = {} s ({} steps, {} events)",
        r.model,
        r.status.as_str(),
        r.end_time,
        r.stats.steps,
        r.stats.events
    );
    println!("logged: {}", r.names.join(", "));
    if let Some(t) = lock_time(&r) {
        println!("brake locks at t = {t:.9} s (J·w0/T = {} s)", J * W0 / T);
    }
    let w = r.get("J.w").ok_or("J.w was not logged")?;
    println!(
        "J.w: {} samples, last {:.3e} rad/s",
        w.len(),
        w[w.len() - 1]
    );
    let mid = r.value_at("J.w", 2.5).ok_or("J.w was not logged")?;
    println!(
        "J.w at 2.5 s = {mid:.6} rad/s (w0 - T/J·t = {:.6})",
        W0 - T / J * 2.5
    );
    std::fs::create_dir_all(dir)?;
    let csv = dir.join("build_and_run.csv");
    r.write_csv(std::fs::File::create(&csv)?)?;
    println!("wrote {}", csv.display());
    Ok(r)
}

fn main() -> Result<(), Box<dyn Error>> {
    run(Path::new("out/examples"))?;
    Ok(())
}
