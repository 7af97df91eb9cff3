//! drivelink-models: reference models in Rust code, and the path of the shipped JSON
//! netlists (`models/netlists/*.json`). The full car exists in both forms with the same
//! results (a test checks it).

pub mod full_car;

pub use full_car::{full_car, FullCarParams};

/// Directory of the shipped netlists.
pub fn netlist_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("netlists")
}
