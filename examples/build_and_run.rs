//! Build a model in Rust, run it and read its results.
//!
//! A flywheel (J = 2 kg·m², 30 rad/s) is stopped by a brake whose kinetic torque is 12 N·m:
//! it decelerates at 6 rad/s², locks at t = J·w0/T = 5 s and then stays at rest.
//!
//! ```sh
//! cargo run --example build_and_run    # writes out/examples/build_and_run/
//! ```

// drivelink_core::Error is large (it names blocks, ports and hints); clippy's
// result_large_err would ask to box it.
#![allow(clippy::result_large_err)]

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

/// Run, print what the result holds and write `results.csv` and `events.csv` into `dir`.
pub fn run(dir: &Path) -> Result<SimResult, Box<dyn Error>> {
    let r = simulate()?;
    println!("{}: {} at t = {} s", r.model, r.status.as_str(), r.end_time);
    // Columns by name: the samples, or a value interpolated at any time.
    let w: &[f64] = r.get("J.w").ok_or("J.w is not logged")?;
    let w_mid = r.value_at("J.w", 2.5).ok_or("J.w is not logged")?;
    // Events: time, block, kind, detail.
    let lock = r.events_of("b", EventTag::Lock).next().map(|e| e.time);
    println!(
        "logged {:?}: {} samples, w(2.5 s) = {w_mid} rad/s",
        r.names,
        w.len()
    );
    println!(
        "the brake locks at t = {lock:?} s (J·w0/T = {} s)",
        J * W0 / T
    );
    // The files `drivelink run` writes.
    std::fs::create_dir_all(dir)?;
    r.write_csv(std::fs::File::create(dir.join("results.csv"))?)?;
    r.write_events_csv(std::fs::File::create(dir.join("events.csv"))?)?;
    println!("wrote results.csv and events.csv into {}", dir.display());
    Ok(r)
}

fn main() -> Result<(), Box<dyn Error>> {
    run(Path::new("out/examples/build_and_run"))?;
    Ok(())
}
