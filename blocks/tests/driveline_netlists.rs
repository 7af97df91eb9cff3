//! The driveline example netlists (`models/netlists/driveline_*.json`): the manual car
//! shifts 1-2-3 through its synchronizers, the clutch launch heats the disc by exactly
//! the clutch's loss, and both close their mechanical and thermal energy audits.

use std::path::PathBuf;

use drivelink_blocks::registry;
use drivelink_core::{compile, EventTag, Model, RunStatus, SimResult};
use drivelink_netlist as netlist;

fn run(file: &str) -> (Model, SimResult) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../models/netlists")
        .join(file);
    let d = netlist::load_file(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("{file}: {e}"));
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{file}: {}", r.message);
    (m, r)
}

#[test]
fn manual_car_shifts_one_two_three_through_synchronizers_without_stalling() {
    let (mut m, r) = run("driveline_manual_car.json");
    assert!(
        r.events.iter().all(|e| e.kind != EventTag::Stall),
        "{:?}",
        r.events
    );
    // Each gear is commanded after the shift time and its dog engages once synchronised.
    for (g, lever) in [(1, 0.2), (2, 6.0), (3, 12.0)] {
        let commanded: Vec<f64> = r
            .events_of("gearbox.selector", EventTag::Shift)
            .filter(|e| e.detail == format!("gear {g} commanded"))
            .map(|e| e.time)
            .collect();
        assert_eq!(commanded, vec![lever + 0.25], "gear {g}: {:?}", r.events);
        let engaged: Vec<f64> = r
            .events_of(&format!("gearbox.sync_{g}"), EventTag::Shift)
            .filter(|e| e.detail.contains("engaged"))
            .map(|e| e.time)
            .collect();
        assert_eq!(engaged.len(), 1, "gear {g}: {:?}", r.events);
        assert!(
            engaged[0] >= lever + 0.25 && engaged[0] < lever + 0.6,
            "gear {g}: {engaged:?}"
        );
    }
    // In 3rd at the end: w_input = 1.4·w_output; v = w_output/4.0 (final drive)·0.3 m.
    let (wi, wo) = (
        r.last("gearbox.w_input").unwrap(),
        r.last("gearbox.w_output").unwrap(),
    );
    assert!((wi - 1.4 * wo).abs() < 1e-9 * wi, "{wi} vs 1.4·{wo}");
    assert!((r.last("car.v").unwrap() - wo / 4.0 * 0.3).abs() < 1e-9);
    let a = m.energy_audit();
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
    assert!(a.heat.relative_residual.abs() < 1e-9, "{:#?}", a.heat);
}

#[test]
fn clutch_launch_heats_the_disc_by_the_clutch_loss() {
    let (mut m, r) = run("driveline_clutch_launch.json");
    assert!(
        r.events.iter().all(|e| e.kind != EventTag::Stall),
        "{:?}",
        r.events
    );
    assert_eq!(
        r.last("clutch.mode"),
        Some(0.0),
        "clutch locked after the launch"
    );
    let a = m.energy_audit();
    let loss = |n: &str| a.losses.iter().find(|(x, _)| x == n).map(|l| l.1).unwrap();
    let to_ambient: f64 = a.heat.to_fixed.iter().map(|l| l.1).sum();
    // C·ΔT of the disc and the oil from their logged temperatures.
    let disc = 1500.0 * (r.last("disc.T").unwrap() - 303.15);
    let oil = 6000.0 * (r.last("oil.T").unwrap() - 303.15);
    let stored: f64 = a.heat.stored.iter().map(|l| l.1).sum();
    assert!((stored - disc - oil).abs() < 1e-9 * stored, "{:#?}", a.heat);
    // Disc: the clutch's loss less what the housing conducted to ambient.
    let clutch = loss("clutch");
    assert!(
        (disc + to_ambient - clutch).abs() < 1e-9 * clutch,
        "disc {disc} + ambient {to_ambient} vs clutch loss {clutch}"
    );
    // Oil: the first-gear mesh loss.
    let gear = loss("first_gear");
    assert!(
        (oil - gear).abs() < 1e-9 * gear,
        "oil {oil} vs mesh loss {gear}"
    );
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
    assert!(a.heat.relative_residual.abs() < 1e-9, "{:#?}", a.heat);
}
