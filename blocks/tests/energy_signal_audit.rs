//! The energy audit across a signal-level electrical bus: a `Battery` feeding an
//! `ElectricMachine` that spins an inertia up, plus a constant auxiliary load on the same
//! bus. The battery's chemical energy is the only source (its state of charge says how
//! much), its loss is booked as `battery.loss`, what the bus delivered besides the machine
//! as `electrical_loads`, the machine's loss as `em.loss`, and the audit closes.

use drivelink_core::Diagram;
use serde_json::json;

mod common;
use common::{close, last, run_completed};

const OCV: f64 = 400.0;
const CAP_AS: f64 = 20.0 * 3600.0;
const AUX: f64 = 300.0;
const ETA_BAT: f64 = 0.95;
const ETA_EM: f64 = 0.9;
const T_END: f64 = 4.0;

fn rig() -> Diagram {
    let mut d = Diagram::new("bus");
    d.add("cmd", "Constant", json!({"value": 0.5}));
    d.add(
        "em",
        "ElectricMachine",
        json!({"max_torque": 100.0, "max_power": 20e3, "efficiency": ETA_EM}),
    );
    d.add("load", "Inertia", json!({"J": 0.5}));
    d.add("aux", "Constant", json!({"value": AUX}));
    d.add("sum", "Sum", json!({"signs": "++"}));
    d.add(
        "battery",
        "Battery",
        json!({"ocv": OCV, "capacity": "20 A*h", "efficiency": ETA_BAT, "soc0": 0.8}),
    );
    d.connect(&["cmd.y", "em.cmd"]);
    d.connect(&["em.flange", "load.flange"]);
    d.connect(&["em.p_elec", "sum.u1"]);
    d.connect(&["aux.y", "sum.u2"]);
    d.connect(&["sum.y", "battery.p"]);
    d.log(&[
        "load.w",
        "battery.soc",
        "battery.energy_chemical",
        "battery.energy_terminal",
        "em.energy_electrical",
    ]);
    d.settings.stop_time = T_END;
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-10;
    d
}

#[test]
fn battery_chemical_energy_is_the_source_of_a_bus_with_a_machine_and_an_aux_load() {
    let (mut m, r) = run_completed(&rig());
    // Half command: 50 N·m up to the 200 rad/s corner, then half the 20 kW; whatever the
    // path, the machine delivered the inertia's kinetic energy, drawing it over η.
    let w = last(&r, "load.w");
    let ke = 0.5 * 0.5 * w * w;
    let machine = ke / ETA_EM;
    close(
        last(&r, "em.energy_electrical"),
        machine,
        1e-7 * machine,
        "∫p_elec = KE/η",
    );
    let terminal = machine + AUX * T_END;
    close(
        last(&r, "battery.energy_terminal"),
        terminal,
        1e-7 * terminal,
        "terminal energy",
    );
    let chemical = terminal / ETA_BAT;
    close(
        last(&r, "battery.energy_chemical"),
        chemical,
        1e-7 * chemical,
        "chemical energy",
    );
    // the charge the soc lost, at the constant ocv, is the chemical energy
    let from_soc = (0.8 - last(&r, "battery.soc")) * CAP_AS * OCV;
    close(
        from_soc,
        chemical,
        1e-7 * chemical,
        "chemical energy from the soc",
    );

    let a = m.energy_audit();
    assert!(a.relative_residual.abs() < 1e-8, "{a:#?}");
    assert!(a.energy_created().is_empty(), "{:?}", a.energy_created());
    let names: Vec<&str> = a.sources.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(names, ["battery"], "{a:#?}");
    close(a.sources[0].1, chemical, 1e-7 * chemical, "audit source");
    let loss = |n: &str| a.losses.iter().find(|s| s.0 == n).map(|s| s.1).unwrap();
    close(
        loss("battery.loss"),
        chemical - terminal,
        1e-7 * chemical,
        "battery loss",
    );
    close(
        loss("electrical_loads"),
        AUX * T_END,
        1e-7 * chemical,
        "aux load",
    );
    close(
        loss("em.loss"),
        machine - ke,
        1e-7 * chemical,
        "machine loss",
    );
}

/// Without a battery the machine stays the source of what it draws (an ideal bus).
#[test]
fn a_machine_without_a_battery_is_the_source() {
    let mut d = rig();
    d.blocks.retain(|b| b.name != "battery");
    d.connections
        .retain(|c| !c.iter().any(|p| p.starts_with("sum.y")));
    d.log.retain(|l| !l.starts_with("battery."));
    let (mut m, r) = run_completed(&d);
    let a = m.energy_audit();
    assert!(a.relative_residual.abs() < 1e-8, "{a:#?}");
    let names: Vec<&str> = a.sources.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(names, ["em"], "{a:#?}");
    let e = last(&r, "em.energy_electrical");
    close(a.sources[0].1, e, 1e-7 * e, "∫p_elec");
    assert!(
        !a.losses.iter().any(|s| s.0 == "electrical_loads"),
        "{a:#?}"
    );
}
