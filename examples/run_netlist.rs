//! Load a JSON netlist, change a parameter from Rust, run it and write the same files as
//! `drivelink run` (results.csv, events.csv, one PNG per scope).
//!
//! The default netlist is `models/netlists/mech_clutch_lock.json`: two inertias (1 and
//! 2 kg·m², the first at 10 rad/s) joined by a clutch. Here its normal force `fn` is raised
//! from 10 N to 20 N, so the kinetic torque is T = mu·fn·cgeo = 10 N·m and the clutch locks
//! at Δω·J1·J2/((J1 + J2)·T) = 0.667 s at the common speed J1·w0/(J1 + J2) = 3.333 rad/s.
//!
//! ```sh
//! cargo run --example run_netlist                      # writes out/examples/run_netlist/
//! cargo run --example run_netlist -- models/netlists/signal_pid.json
//! ```

use std::error::Error;
use std::path::{Path, PathBuf};

use drivelink::blocks::registry;
use drivelink::core::{compile, EventTag, SimResult};
use drivelink::netlist;

/// The netlist run when no path is given.
pub fn default_netlist() -> PathBuf {
    drivelink::models::netlist_dir().join("mech_clutch_lock.json")
}

/// Load `path`, apply `overrides` to its top-level parameters (values as in the JSON:
/// numbers in SI or expression strings with units), run it and write its files into `dir`.
pub fn run(
    path: &Path,
    overrides: &[(&str, &str)],
    dir: &Path,
) -> Result<SimResult, Box<dyn Error>> {
    let mut d = netlist::load_file(path)?;
    for (name, value) in overrides {
        d.param(name, *value);
    }
    let mut model = compile(&d, &registry())?;
    let r = model.run();
    std::fs::create_dir_all(dir)?;
    r.write_csv(std::fs::File::create(dir.join("results.csv"))?)?;
    r.write_events_csv(std::fs::File::create(dir.join("events.csv"))?)?;
    let images = drivelink::plots::write_scopes(&r, &r.scopes, dir, false)?;
    println!(
        "{}: {} at t = {} s; wrote results.csv, events.csv and {} image(s) into {}",
        r.model,
        r.status.as_str(),
        r.end_time,
        images.len(),
        dir.display()
    );
    for e in r.events.iter().filter(|e| e.kind != EventTag::TimeEvent) {
        println!(
            "  t = {:.6} s  {} {} {}",
            e.time,
            e.block,
            e.kind.as_str(),
            e.detail
        );
    }
    Ok(r)
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = Path::new("out/examples/run_netlist");
    match std::env::args().nth(1) {
        Some(path) => run(Path::new(&path), &[], dir)?,
        None => {
            let r = run(&default_netlist(), &[("fn", "20 N")], dir)?;
            if let Some(w) = r.last("J1.w") {
                println!(
                    "common speed {w:.6} rad/s (J1·w0/(J1 + J2) = {:.6})",
                    10.0 / 3.0
                );
            }
            r
        }
    };
    Ok(())
}
