//! The full car from the JSON netlist and from Rust code give the same results.

use drivelink_core::compile;
use drivelink_models::{full_car, netlist_dir, FullCarParams};
use drivelink_netlist as netlist;

#[test]
fn full_car_netlist_and_rust_model_give_identical_results() {
    let reg = drivelink_blocks::registry();
    let d_json =
        netlist::load_file(&netlist_dir().join("full_car.json")).unwrap_or_else(|e| panic!("{e}"));
    let d_rust = full_car(&FullCarParams::default());
    let r_json = compile(&d_json, &reg)
        .unwrap_or_else(|e| panic!("{e}"))
        .run();
    let r_rust = compile(&d_rust, &reg)
        .unwrap_or_else(|e| panic!("{e}"))
        .run();
    assert_eq!(r_json.status, r_rust.status);
    assert_eq!(r_json.names, r_rust.names);
    assert_eq!(r_json.time.len(), r_rust.time.len());
    assert_eq!(
        r_json.end_time.to_bits(),
        r_rust.end_time.to_bits(),
        "{} vs {}",
        r_json.end_time,
        r_rust.end_time
    );
    for (k, name) in r_json.names.iter().enumerate() {
        for (a, b) in r_json.columns[k].iter().zip(&r_rust.columns[k]) {
            assert!(
                a.to_bits() == b.to_bits() || (a - b).abs() <= 1e-12 * a.abs().max(1.0),
                "{name}: {a} vs {b}"
            );
        }
    }
    assert_eq!(r_json.events.len(), r_rust.events.len());
    assert_eq!(r_json.scopes.len(), 6);
}
