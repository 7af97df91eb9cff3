//! Helpers shared by the block test files (each file is its own test crate and uses the
//! ones it needs, hence `dead_code` allowed).
#![allow(dead_code)]

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, EnergyAudit, Model, RunStatus, SimResult};

/// Compile and run; the run must not fail (it may stop early).
pub fn run_ok(d: &Diagram) -> (Model, SimResult) {
    let mut m = compile(d, &registry()).unwrap_or_else(|e| panic!("compile failed: {e}"));
    let r = m.run();
    assert_ne!(r.status, RunStatus::Failed, "run failed: {}", r.message);
    (m, r)
}

/// Compile and run; the run must reach its stop time.
pub fn run_completed(d: &Diagram) -> (Model, SimResult) {
    let mut m = compile(d, &registry()).unwrap_or_else(|e| panic!("compile failed: {e}"));
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "run: {}", r.message);
    (m, r)
}

/// [`run_ok`], then the energy audit of the run.
pub fn run_audited(d: &Diagram) -> (SimResult, EnergyAudit) {
    let (mut m, r) = run_ok(d);
    let a = m.energy_audit();
    (r, a)
}

/// The energy audit of the last run closes to `tol` (relative).
pub fn assert_energy_closes(m: &mut Model, tol: f64) {
    let a = m.energy_audit();
    assert!(
        a.relative_residual.abs() < tol,
        "energy audit does not close: {a:#?}"
    );
}

/// `|a − b| <= tol`, naming `what`.
pub fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!(
        (a - b).abs() <= tol,
        "{what}: {a} vs expected {b} (tol {tol})"
    );
}

/// The last sample of variable `n`.
pub fn last(r: &SimResult, n: &str) -> f64 {
    r.last(n).unwrap_or_else(|| panic!("no {n}"))
}

/// A fresh, empty directory under the system's temporary directory (`tag` names it:
/// `drivelink_TAG_XXXXXX`), removed with everything in it when dropped, whether the test
/// passed or panicked: bind it to a variable for as long as the test uses it.
pub fn temp_dir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("drivelink_{tag}_"))
        .tempdir()
        .expect("a temporary directory")
}
