//! Where the energy went: the energy audit of a run.
//!
//! Without arguments: two inertias (J1 = 1, J2 = 2 kg·m², J1 at 10 rad/s) joined by an
//! engaging clutch. Momentum is conserved; the clutch dissipates exactly the kinetic energy
//! of the relative motion, ½·J1·J2/(J1 + J2)·Δω² = 33.333 J, before it locks. With a netlist
//! path the audit of that model is printed instead.
//!
//! ```sh
//! cargo run --example energy_audit
//! cargo run --release --example energy_audit -- models/netlists/full_car.json
//! ```

// drivelink_core::Error is large (it names blocks, ports and hints); clippy's
// result_large_err would ask to box it.
#![allow(clippy::result_large_err)]

use std::error::Error;
use std::path::Path;

use drivelink::blocks::registry;
use drivelink::core::{compile, Diagram, EnergyAudit, Model};
use drivelink::netlist;
use serde_json::json;

/// Inertias (kg·m²) and the initial speed of J1 (rad/s).
pub const J1: f64 = 1.0;
pub const J2: f64 = 2.0;
pub const W0: f64 = 10.0;

/// The clutch-lock model.
pub fn clutch_lock() -> Diagram {
    let mut d = Diagram::new("clutch_lock");
    d.add("J1", "Inertia", json!({"J": J1, "w0": W0}));
    d.add("J2", "Inertia", json!({"J": J2}));
    d.add("clutch", "Clutch", json!({"mu": 0.5, "fn_max": "10 N"}));
    d.add("pressure", "Constant", json!({"value": 1.0}));
    d.connect(&["J1.flange", "clutch.flange_a"]);
    d.connect(&["J2.flange", "clutch.flange_b"]);
    d.connect(&["pressure.y", "clutch.f"]);
    d.log(&["J1.w", "J2.w", "clutch.mode"]);
    d.settings.stop_time = 3.0;
    d
}

/// Compile and run `d`; the audit of the run.
pub fn audit(d: &Diagram) -> Result<EnergyAudit, drivelink::core::Error> {
    let mut model: Model = compile(d, &registry())?;
    let r = model.run();
    println!("{}: {} at t = {} s", r.model, r.status.as_str(), r.end_time);
    Ok(model.energy_audit())
}

/// Print an audit as a table (J).
pub fn print(a: &EnergyAudit) {
    for (name, e) in &a.sources {
        println!("  source  {name:<28} {e:>14.6} J");
    }
    for (name, e) in &a.losses {
        println!("  loss    {name:<28} {e:>14.6} J");
    }
    println!(
        "  kinetic energy   {:>14.6} J -> {:>14.6} J",
        a.kinetic_initial, a.kinetic_final
    );
    println!(
        "  spring energy    {:>14.6} J -> {:>14.6} J",
        a.potential_initial, a.potential_final
    );
    println!("  impact loss      {:>14.6} J", a.impact_loss);
    println!(
        "  residual         {:>14.3e} J ({:.1e} relative)",
        a.residual, a.relative_residual
    );
}

fn main() -> Result<(), Box<dyn Error>> {
    match std::env::args().nth(1) {
        Some(path) => print(&audit(&netlist::load_file(Path::new(&path))?)?),
        None => {
            let a = audit(&clutch_lock())?;
            print(&a);
            println!(
                "  expected clutch loss ½·J1·J2/(J1 + J2)·Δω² = {:.6} J",
                0.5 * J1 * J2 / (J1 + J2) * W0 * W0
            );
        }
    }
    Ok(())
}
