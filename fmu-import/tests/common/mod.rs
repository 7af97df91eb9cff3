//! What the tests of the `Fmu` block share: the example FMU libraries built next to them,
//! packing one into an FMU file, and compiling a netlist value.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use drivelink_fmu_import::archive::write_zip;
use serde_json::Value;

/// The example library `name` (`dahlquist_fmu`, `bouncing_ball_fmu`), built next to the
/// tests by `cargo test -p drivelink-fmu-import`.
pub fn library(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let debug = exe.parent().and_then(Path::parent).unwrap();
    let lib = debug
        .join("examples")
        .join(format!("lib{name}{}", std::env::consts::DLL_SUFFIX));
    assert!(
        lib.is_file(),
        "{} is missing: run the tests with `cargo test -p drivelink-fmu-import`, which builds the example",
        lib.display()
    );
    lib
}

/// Pack `library` as `DIR/FILE` with the description `md` of FMI version `fmi` (3 or 2),
/// the binary named `id`, and more `entries`.
pub fn pack(
    dir: &Path,
    file: &str,
    md: &str,
    fmi: u8,
    library: &Path,
    id: &str,
    entries: &[(&str, &[u8])],
) -> PathBuf {
    let so = std::fs::read(library).unwrap();
    let platform = match fmi {
        3 => drivelink_fmu_import::platform(),
        _ => drivelink_fmu_import::platform2(),
    };
    let binary = format!("binaries/{platform}/{id}{}", std::env::consts::DLL_SUFFIX);
    let mut all: Vec<(&str, &[u8], bool)> = vec![
        ("modelDescription.xml", md.as_bytes(), true),
        (&binary, &so, true),
    ];
    all.extend(entries.iter().map(|(n, b)| (*n, *b, false)));
    let p = dir.join(file);
    std::fs::write(&p, write_zip(&all)).unwrap();
    p
}

/// Compile a netlist value with the block library.
pub fn compile(v: &Value) -> Result<drivelink_core::Model, String> {
    let d = drivelink_netlist::load_value(v, "fmu_test.json", Path::new("."))
        .map_err(|e| e.to_string())?;
    drivelink_core::compile(&d, &drivelink_blocks::registry()).map_err(|e| e.to_string())
}
