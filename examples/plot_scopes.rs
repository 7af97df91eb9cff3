//! Plot from Rust: run the full-car demo (built in Rust by `drivelink::models::full_car`),
//! render the scopes stored with the model to PNG, and draw a scope of our own.
//!
//! The model's scopes (`road_speed`, `engine`, `drive_ratio`, `clutch_modes`,
//! `clutch_slips`, `power`) are written by [`drivelink::plots::write_scopes`]; the extra one,
//! `speeds.png`, stacks the engine speed in rpm over the road speed in km/h, with markers at
//! the clutch events, and is rendered by [`drivelink::plots::render_scope_png`] (use
//! `render_scope_svg` for SVG).
//!
//! ```sh
//! cargo run --release --example plot_scopes    # writes out/examples/plot_scopes/*.png
//! ```

use std::error::Error;
use std::path::{Path, PathBuf};

use drivelink::blocks::registry;
use drivelink::core::{compile, ScopeSignal, ScopeSpec, SimResult};
use drivelink::models::{full_car, FullCarParams};

/// A two-panel scope defined in Rust: engine speed (rpm) above road speed (km/h).
pub fn speeds_scope() -> ScopeSpec {
    ScopeSpec {
        title: Some("Engine and road speed".into()),
        panels: vec![
            vec![ScopeSignal::new("engine.w")
                .with_unit("rpm")
                .with_label("engine")],
            vec![ScopeSignal::new("vehicle.v")
                .with_unit("km/h")
                .with_label("vehicle")],
        ],
        event_markers: true,
        width: 1000,
        height: 600,
        ..ScopeSpec::new("speeds", vec![])
    }
}

/// Run the full car, write its scopes and [`speeds_scope`] into `dir`; the result and the
/// paths of the written images.
pub fn run(dir: &Path) -> Result<(SimResult, Vec<PathBuf>), Box<dyn Error>> {
    let d = full_car(&FullCarParams::default());
    let mut model = compile(&d, &registry())?;
    let r = model.run();
    println!(
        "{}: {} at t = {:.3} s",
        r.model,
        r.status.as_str(),
        r.end_time
    );
    let mut written = drivelink::plots::write_scopes(&r, &r.scopes, dir, false)?;
    let png = drivelink::plots::render_scope_png(&r, &speeds_scope())?;
    let path = dir.join("speeds.png");
    std::fs::write(&path, png)?;
    written.push(path);
    for p in &written {
        println!("wrote {}", p.display());
    }
    Ok((r, written))
}

fn main() -> Result<(), Box<dyn Error>> {
    run(Path::new("out/examples/plot_scopes"))?;
    Ok(())
}
