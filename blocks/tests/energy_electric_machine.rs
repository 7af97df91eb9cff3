//! `ElectricMachine`: the torque envelope `min(max_torque, max_power/|ω|)`, the efficiency
//! in both quadrants, regeneration switched off, and a motor spinning an inertia up through
//! its corner speed against the closed form, with the energy audit booking `∫p_elec` as
//! the source and `∫loss` as the machine's internal loss, delivered as heat to its port.

use drivelink_blocks::registry;
use drivelink_core::compile::{resolve_params, Scope};
use drivelink_core::probe::Probe;
use drivelink_core::{Block, BlockBuild, Diagram, EventTag};
use serde_json::{json, Value};

mod common;
use common::{close, last, run_completed};

const T_MAX: f64 = 200.0;
const P_MAX: f64 = 50e3;
/// Corner speed, rad/s.
const W_C: f64 = P_MAX / T_MAX;

fn build(params: Value) -> Box<dyn Block> {
    let reg = registry();
    let t = reg.get("ElectricMachine").expect("registered");
    let Value::Object(raw) = params else { panic!() };
    let p = resolve_params("em", t.name, &t.params, &raw, &Scope::new()).expect("params");
    let BlockBuild::Primitive(f) = &t.build else {
        panic!()
    };
    f(&p).unwrap_or_else(|e| panic!("{e}"))
}

/// `(tau, p_elec, loss)` at relative speed `w` and command `cmd`, modes set there.
fn at(b: &mut dyn Block, w: f64, cmd: f64) -> (f64, f64, f64) {
    let mut p = Probe::new(b);
    p.reset(0.0).inputs(&[cmd]).speeds(&[0.0, w, 0.0]);
    p.update_modes();
    let y = p.outputs();
    (y[0], y[1], y[2])
}

#[test]
fn torque_follows_the_max_torque_max_power_envelope() {
    let mut b = build(json!({"max_torque": T_MAX, "max_power": P_MAX, "max_speed": 1000.0}));
    for w in [0.0, 50.0, 249.0, -249.0] {
        close(
            at(b.as_mut(), w, 1.0).0,
            T_MAX,
            1e-12,
            &format!("tau at {w} rad/s"),
        );
    }
    for w in [251.0, 500.0, 999.0, -500.0] {
        close(
            at(b.as_mut(), w, 1.0).0,
            P_MAX / w.abs(),
            1e-9,
            &format!("tau at {w} rad/s"),
        );
    }
    close(
        at(b.as_mut(), 500.0, 0.5).0,
        0.5 * P_MAX / 500.0,
        1e-9,
        "half command",
    );
    close(
        at(b.as_mut(), 100.0, 2.0).0,
        T_MAX,
        1e-12,
        "command clamped to 1",
    );
    assert_eq!(
        at(b.as_mut(), 1001.0, 1.0).0,
        0.0,
        "no torque above max_speed"
    );
}

#[test]
fn efficiency_divides_motoring_and_multiplies_generating_power() {
    let eta = 0.9;
    let mut b = build(json!({"max_torque": T_MAX, "max_power": P_MAX, "efficiency": eta}));
    // Motoring: 100 N·m at 100 rad/s = 10 kW mechanical.
    let (tau, pe, loss) = at(b.as_mut(), 100.0, 0.5);
    close(tau, 100.0, 1e-12, "tau");
    close(pe, 10e3 / eta, 1e-9, "p_elec motoring");
    close(loss, 10e3 / eta - 10e3, 1e-9, "loss motoring");
    // Generating: −100 N·m at 100 rad/s = −10 kW mechanical, 9 kW back to the bus.
    let (tau, pe, loss) = at(b.as_mut(), 100.0, -0.5);
    close(tau, -100.0, 1e-12, "tau");
    close(pe, -10e3 * eta, 1e-9, "p_elec generating");
    close(loss, 10e3 * (1.0 - eta), 1e-9, "loss generating");
    // Reverse motoring: negative torque at negative speed draws power.
    let (_, pe, _) = at(b.as_mut(), -100.0, -0.5);
    close(pe, 10e3 / eta, 1e-9, "p_elec reverse motoring");
}

#[test]
fn regen_efficiency_replaces_the_map_in_the_generating_quadrant_only() {
    // FASTSim's table over the power fraction (0.84 at zero, 0.95 at 40 %), with the
    // generating quadrant at a fixed 0.84 as FASTSim 3.1 converts it.
    let table = json!({"power_fraction": [0.0, 0.4, 1.0], "eta": [0.84, 0.95, 0.93]});
    let mut b = build(json!({"max_torque": T_MAX, "max_power": P_MAX,
        "efficiency": table, "regen_efficiency": 0.84}));
    // Motoring 20 kW (fraction 0.4): the table's 0.95.
    let (_, pe, _) = at(b.as_mut(), 200.0, 0.5);
    close(pe, 20e3 / 0.95, 1e-9, "p_elec motoring");
    // Generating 20 kW: 0.84, not the table's 0.95.
    let (_, pe, loss) = at(b.as_mut(), 200.0, -0.5);
    close(pe, -20e3 * 0.84, 1e-9, "p_elec generating");
    close(loss, 20e3 * 0.16, 1e-9, "loss generating");
    // Without it the table serves both quadrants.
    let mut b = build(json!({"max_torque": T_MAX, "max_power": P_MAX, "efficiency": table}));
    close(at(b.as_mut(), 200.0, -0.5).1, -20e3 * 0.95, 1e-9, "table");
    for bad in [0.0, 1.5] {
        let reg = registry();
        let t = reg.get("ElectricMachine").expect("registered");
        let Value::Object(raw) =
            json!({"max_torque": T_MAX, "max_power": P_MAX, "regen_efficiency": bad})
        else {
            panic!()
        };
        let p = resolve_params("em", t.name, &t.params, &raw, &Scope::new()).expect("params");
        let BlockBuild::Primitive(f) = &t.build else {
            panic!()
        };
        let e = f(&p).err().expect("refused").to_string();
        assert!(
            e.contains("regen_efficiency") && e.contains("(0, 1]"),
            "{e}"
        );
    }
}

#[test]
fn without_regen_the_generating_quadrant_has_no_torque() {
    let mut b = build(json!({"max_torque": T_MAX, "max_power": P_MAX, "regen": false}));
    assert_eq!(at(b.as_mut(), 100.0, -0.5), (0.0, 0.0, 0.0));
    assert_eq!(at(b.as_mut(), -100.0, 0.5), (0.0, 0.0, 0.0));
    close(
        at(b.as_mut(), -100.0, -0.5).0,
        -100.0,
        1e-12,
        "reverse motoring allowed",
    );
    close(
        at(b.as_mut(), 100.0, 0.5).0,
        100.0,
        1e-12,
        "motoring allowed",
    );
}

#[test]
fn motor_spins_an_inertia_through_its_corner_and_the_audit_closes() {
    let (j, rotor, eta) = (0.5, 0.1, 0.92);
    let jt = j + rotor;
    let mut d = Diagram::new("em");
    d.add("cmd", "Constant", json!({"value": 1.0}));
    d.add(
        "em",
        "ElectricMachine",
        json!({"max_torque": T_MAX, "max_power": P_MAX, "efficiency": eta, "inertia": rotor}),
    );
    d.add("load", "Inertia", json!({"J": j}));
    d.add("e_elec", "Integrator", json!({}));
    d.add("e_loss", "Integrator", json!({}));
    d.add("housing", "HeatCapacitor", json!({"C": 1000.0}));
    d.connect(&["em.heat", "housing.port"]);
    d.connect(&["cmd.y", "em.cmd"]);
    d.connect(&["em.flange", "load.flange"]);
    d.connect(&["em.p_elec", "e_elec.u"]);
    d.connect(&["em.loss", "e_loss.u"]);
    d.log(&["load.w", "em.tau", "em.region", "e_elec.y", "e_loss.y"]);
    d.settings.stop_time = 5.0;
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-10;
    let (mut m, r) = run_completed(&d);
    // Torque limited: w = T·t/J up to the corner at t_c = J·w_c/T; then power limited:
    // J·w·w' = P, w² = w_c² + 2·P·(t − t_c)/J.
    let t_c = jt * W_C / T_MAX;
    let corner: Vec<_> = r
        .events_of("em", EventTag::ZeroCrossing)
        .filter(|e| e.detail.starts_with("torque limited -> power limited"))
        .collect();
    assert_eq!(corner.len(), 1, "{:?}", r.events);
    close(corner[0].time, t_c, 1e-6, "corner time");
    let w_end = (W_C * W_C + 2.0 * P_MAX * (5.0 - t_c) / jt).sqrt();
    close(last(&r, "load.w"), w_end, 1e-6 * w_end, "final speed");
    // Energy: the bus delivered ∫p_elec = KE/η (always motoring), the machine lost the rest.
    let ke = 0.5 * jt * w_end * w_end;
    close(last(&r, "e_elec.y"), ke / eta, 1e-6 * ke, "∫p_elec");
    let a = m.energy_audit();
    assert!(a.relative_residual.abs() < 1e-8, "audit: {a:#?}");
    let src = a.sources.iter().find(|s| s.0 == "em").expect("em source").1;
    close(
        src,
        last(&r, "e_elec.y"),
        1e-6 * ke,
        "audit source = ∫p_elec",
    );
    let loss = a
        .losses
        .iter()
        .find(|s| s.0 == "em.loss")
        .expect("em.loss")
        .1;
    close(loss, last(&r, "e_loss.y"), 1e-6 * ke, "audit loss = ∫loss");
    close(
        loss,
        ke * (1.0 / eta - 1.0),
        1e-6 * ke,
        "loss = KE·(1/η − 1)",
    );
}

#[test]
fn efficiency_over_power_fraction_as_fastsim_gives_it() {
    let eff = json!({"power_fraction": [0.0, 0.5, 1.0], "eta": [0.8, 0.9, 0.95]});
    let mut b = build(json!({"max_torque": T_MAX, "max_power": P_MAX, "efficiency": eff}));
    // Motoring at 100 N·m, 125 rad/s: P = 12.5 kW = 0.25·P_MAX, η = 0.85.
    let (_, pe, loss) = at(b.as_mut(), 125.0, 0.5);
    close(pe, 12.5e3 / 0.85, 1e-9, "p_elec motoring");
    close(loss, 12.5e3 / 0.85 - 12.5e3, 1e-9, "loss motoring");
    // Generating at −200 N·m, 187.5 rad/s: |P| = 37.5 kW = 0.75·P_MAX, η = 0.925.
    let (_, pe, _) = at(b.as_mut(), 187.5, -1.0);
    close(pe, -37.5e3 * 0.925, 1e-9, "p_elec generating");
}

#[test]
fn efficiency_map_is_bilinear_over_speed_and_torque() {
    let eff =
        json!({"speed": [0.0, 500.0], "torque": [0.0, 200.0], "eta": [[0.8, 0.9], [0.9, 0.95]]});
    let mut b = build(json!({"max_torque": T_MAX, "max_power": 1e6, "efficiency": eff}));
    // The cell's centre: the mean of its corners; the same map in reverse (magnitudes).
    let eta = (0.8 + 0.9 + 0.9 + 0.95) / 4.0;
    for (w, cmd) in [(250.0, 0.5), (-250.0, -0.5)] {
        let (tau, pe, _) = at(b.as_mut(), w, cmd);
        close(pe, tau * w / eta, 1e-9, &format!("p_elec at {w} rad/s"));
    }
    let (tau, pe, _) = at(b.as_mut(), 250.0, -0.5);
    close(pe, tau * 250.0 * eta, 1e-9, "p_elec generating");
}

#[test]
fn bad_efficiency_tables_name_the_parameter() {
    let reg = registry();
    let t = reg.get("ElectricMachine").unwrap();
    for (eff, what) in [
        (json!(1.2), "(0, 1]"),
        (
            json!({"power_fraction": [0.0, 1.0], "eta": [0.9, 1.1]}),
            "(0, 1]",
        ),
        (
            json!({"power_fraction": [0.0, 1.0], "eta": [0.9]}),
            "entries",
        ),
        (
            json!({"speed": [0.0, 1.0], "torque": [0.0], "eta": [[0.9]]}),
            "rows",
        ),
        (json!({"fraction": [0.0], "eta": [0.9]}), "keys"),
    ] {
        let raw = json!({"max_torque": 1.0, "max_power": 1.0, "efficiency": eff});
        let Value::Object(raw) = raw else { panic!() };
        let p = resolve_params("em", t.name, &t.params, &raw, &Scope::new()).expect("params");
        let BlockBuild::Primitive(f) = &t.build else {
            panic!()
        };
        let e = f(&p).err().expect("an error");
        assert_eq!(e.param, "efficiency", "{e}");
        assert!(e.message.contains(what), "{e}");
    }
}

#[test]
fn battery_feeding_the_motor_gives_up_the_kinetic_energy_plus_both_losses() {
    // The machine's bus power is the battery's terminal power (signal-level coupling); with
    // a constant ocv the chemical energy drawn is ocv·capacity·Δsoc.
    let (j, eta, ocv, r_int) = (0.6, 0.92, 400.0, 0.05);
    let cap = 50.0 * 3600.0;
    let mut d = Diagram::new("ev");
    d.add("cmd", "Constant", json!({"value": 1.0}));
    d.add(
        "em",
        "ElectricMachine",
        json!({"max_torque": T_MAX, "max_power": P_MAX, "efficiency": eta}),
    );
    d.add("load", "Inertia", json!({"J": j}));
    d.add(
        "bat",
        "Battery",
        json!({"ocv": ocv, "capacity": "50 A*h", "r_internal": r_int, "soc0": 0.9}),
    );
    d.add("e_bat_loss", "Integrator", json!({}));
    d.connect(&["cmd.y", "em.cmd"]);
    d.connect(&["em.flange", "load.flange"]);
    d.connect(&["em.p_elec", "bat.p"]);
    d.connect(&["bat.loss", "e_bat_loss.u"]);
    d.log(&["load.w", "bat.soc", "e_bat_loss.y"]);
    d.settings.stop_time = 5.0;
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-10;
    let (_, r) = run_completed(&d);
    let t_c = j * W_C / T_MAX;
    let w_end = (W_C * W_C + 2.0 * P_MAX * (5.0 - t_c) / j).sqrt();
    close(last(&r, "load.w"), w_end, 1e-6 * w_end, "final speed");
    let ke = 0.5 * j * w_end * w_end;
    let chemical = ocv * cap * (0.9 - last(&r, "bat.soc"));
    let expected = ke / eta + last(&r, "e_bat_loss.y");
    close(
        chemical,
        expected,
        1e-6 * expected,
        "ocv·Q drawn = KE/η + battery loss",
    );
}

#[test]
fn an_unloaded_motor_stops_accelerating_at_max_speed() {
    let mut d = Diagram::new("top");
    d.add("cmd", "Constant", json!({"value": 1.0}));
    d.add(
        "em",
        "ElectricMachine",
        json!({"max_torque": T_MAX, "max_power": P_MAX, "max_speed": 600.0}),
    );
    d.add("load", "Inertia", json!({"J": 0.2}));
    d.connect(&["cmd.y", "em.cmd"]);
    d.connect(&["em.flange", "load.flange"]);
    d.log(&["load.w", "em.tau", "em.region"]);
    d.settings.stop_time = 5.0;
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-10;
    let (_, r) = run_completed(&d);
    // w² = w_c² + 2·P·(t − t_c)/J reaches 600 rad/s at t_top.
    let t_c = 0.2 * W_C / T_MAX;
    let t_top = t_c + 0.2 * (600.0f64.powi(2) - W_C * W_C) / (2.0 * P_MAX);
    let top: Vec<_> = r
        .events_of("em", EventTag::ZeroCrossing)
        .filter(|e| e.detail.starts_with("power limited -> overspeed"))
        .collect();
    assert_eq!(top.len(), 1, "{:?}", r.events);
    close(top[0].time, t_top, 1e-6, "time at max_speed");
    close(last(&r, "load.w"), 600.0, 1e-6, "held at max_speed");
    assert_eq!(last(&r, "em.tau"), 0.0);
    assert_eq!(last(&r, "em.region"), 3.0);
}

#[test]
fn a_machine_without_regen_starting_at_rest_motors() {
    // At rest the quadrant boundary cmd·ω = 0 is where the run starts: the machine must
    // start motoring (not generating, where regen = false gives no torque) and spin the
    // inertia up at T/J.
    let j = 0.5;
    let mut d = Diagram::new("em_rest");
    d.add("cmd", "Constant", json!({"value": 0.5}));
    d.add(
        "em",
        "ElectricMachine",
        json!({"max_torque": T_MAX, "max_power": P_MAX, "regen": false}),
    );
    d.add("load", "Inertia", json!({"J": j}));
    d.connect(&["cmd.y", "em.cmd"]);
    d.connect(&["em.flange", "load.flange"]);
    d.log(&["load.w"]);
    let t_end = 0.5 * j * W_C / (0.5 * T_MAX);
    d.settings.stop_time = t_end;
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-10;
    let (_, r) = run_completed(&d);
    close(
        last(&r, "load.w"),
        0.5 * T_MAX * t_end / j,
        1e-9 * W_C,
        "speed T·t/J",
    );
}
