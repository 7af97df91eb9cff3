//! The `examples/` programs, run through their own code (each example's `main` calls the
//! function tested here) and checked against the physics they claim. `cargo test` also
//! builds every example, so they cannot rot.

#[allow(dead_code)]
#[path = "../examples/build_and_run.rs"]
mod build_and_run;
#[allow(dead_code)]
#[path = "../examples/energy_audit.rs"]
mod energy_audit;
#[allow(dead_code)]
#[path = "../examples/plot_scopes.rs"]
mod plot_scopes;
#[allow(dead_code)]
#[path = "../examples/run_netlist.rs"]
mod run_netlist;

mod common;

use std::path::Path;

use drivelink::core::{EventTag, RunStatus};

use common::temp_dir;

/// Width and height from a PNG's IHDR chunk.
fn png_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(
        &b[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        path.display()
    );
    assert_eq!(&b[12..16], b"IHDR");
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (be(16), be(20))
}

#[test]
fn build_and_run_brake_stops_the_flywheel_at_j_w0_over_t() {
    use build_and_run::{J, T, W0};
    let dir = temp_dir("example_build_and_run");
    let r = build_and_run::run(&dir).unwrap();
    assert_eq!(r.status, RunStatus::Completed);
    let t_stop = J * W0 / T;
    let lock = r
        .events_of("b", EventTag::Lock)
        .next()
        .expect("the brake locks")
        .time;
    assert!(
        (lock - t_stop).abs() < 1e-9,
        "lock at {lock}, expected {t_stop}"
    );
    // constant deceleration T/J before the lock, rest after it
    let w = r.value_at("J.w", 2.5).unwrap();
    assert!((w - (W0 - T / J * 2.5)).abs() < 1e-9, "{w}");
    assert_eq!(r.last("J.w"), Some(0.0));
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert_eq!(csv.lines().next(), Some("time,J.w,b.mode,b.tau"));
    assert_eq!(csv.lines().count(), r.time.len() + 1);
    let events = std::fs::read_to_string(dir.join("events.csv")).unwrap();
    let lock_row = events
        .lines()
        .find(|l| l.contains(",b,lock,"))
        .unwrap_or_else(|| panic!("no lock row in events.csv:\n{events}"));
    let t: f64 = lock_row.split(',').next().unwrap().parse().unwrap();
    assert!((t - t_stop).abs() < 1e-9, "{lock_row}");
}

#[test]
fn run_netlist_with_doubled_normal_force_locks_at_the_analytic_time() {
    let dir = temp_dir("example_run_netlist");
    let r = run_netlist::run(&run_netlist::default_netlist(), &[("fn", "20 N")], &dir).unwrap();
    let (j1, j2, w0, torque) = (1.0, 2.0, 10.0, 0.5 * 20.0 * 1.0);
    let t_lock = w0 * j1 * j2 / ((j1 + j2) * torque);
    let lock = r
        .events_of("clutch", EventTag::Lock)
        .next()
        .expect("the clutch locks")
        .time;
    assert!(
        (lock - t_lock).abs() < 1e-9,
        "lock at {lock}, expected {t_lock}"
    );
    let common = j1 * w0 / (j1 + j2);
    for v in ["J1.w", "J2.w"] {
        let w = r.last(v).unwrap();
        assert!((w - common).abs() < 1e-9, "{v} = {w}, expected {common}");
    }
    for f in ["results.csv", "events.csv"] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    for scope in ["speeds", "clutch"] {
        assert_eq!(png_size(&dir.join(format!("{scope}.png"))), (1200, 800));
    }
}

#[test]
fn plot_scopes_writes_every_model_scope_and_the_rust_scope() {
    let dir = temp_dir("example_plot_scopes");
    let (r, written) = plot_scopes::run(&dir).unwrap();
    assert_eq!(r.status, RunStatus::Stopped);
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "road_speed.png",
            "engine.png",
            "drive_ratio.png",
            "clutch_modes.png",
            "clutch_slips.png",
            "power.png",
            "speeds.png"
        ]
    );
    for p in &written[..6] {
        assert_eq!(png_size(p), (1200, 800), "{}", p.display());
    }
    assert_eq!(png_size(&written[6]), (1000, 600));
}

#[test]
fn energy_audit_clutch_loss_is_the_relative_kinetic_energy() {
    use energy_audit::{J1, J2, W0};
    let a = energy_audit::audit(&energy_audit::clutch_lock()).unwrap();
    let loss_exact = 0.5 * J1 * J2 / (J1 + J2) * W0 * W0;
    let loss: f64 = a
        .losses
        .iter()
        .filter(|(n, _)| n == "clutch")
        .map(|(_, e)| e)
        .sum();
    assert!(
        ((loss - loss_exact) / loss_exact).abs() < 1e-9,
        "clutch loss {loss} J, expected {loss_exact} J"
    );
    assert!((a.kinetic_initial - 0.5 * J1 * W0 * W0).abs() < 1e-9);
    let w_common = J1 * W0 / (J1 + J2);
    assert!((a.kinetic_final - 0.5 * (J1 + J2) * w_common * w_common).abs() < 1e-9);
    assert!(a.sources.is_empty());
    assert!(a.relative_residual.abs() < 1e-9, "{}", a.relative_residual);
}

/// What `fn main() -> Result<(), drivelink::core::Error>` prints for an error propagated
/// with `?`: the standard library writes `Error: {err:?}`.
#[test]
fn compile_error_through_question_mark_in_main_prints_the_user_message() {
    let mut d = build_and_run::diagram();
    d.blocks[1].type_name = "FrictionBrake".into();
    let e = drivelink::core::compile(&d, &drivelink::blocks::registry())
        .err()
        .expect("an unknown type does not compile");
    let shown = format!("Error: {e:?}");
    assert!(
        shown.starts_with("Error: block 'b': unknown block type 'FrictionBrake'"),
        "{shown}"
    );
    assert!(!shown.contains("UnknownType"), "{shown}");
    assert_eq!(format!("{e:?}"), e.to_string());
}
