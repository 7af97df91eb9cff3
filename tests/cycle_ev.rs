//! `models/netlists/cycle_ev.json` (the Renault Zoe of FASTSim's vehicle file) on UDDS and
//! HWFET, run as a user runs it through `drivelink run --set cycle=...`, and checked
//! against what the run must conserve and what the cycle prescribes:
//!
//! - the driver follows the trace (never 2 km/h off) and the run ends with the cycle (the
//!   solver's `stop_time` is `"cycle"`: it completes at the trace's last time);
//! - the distance is the trace's own (trapezoids of the shipped CSV) within 0.5 %;
//! - the energy audit closes with the battery's chemical energy (from its state of charge)
//!   as its only source and no negative loss; the machine's drawn energy is ∫ p_elec dt of
//!   the logged machine power; the battery's terminal energy goes to the machine and the
//!   auxiliary load (booked `electrical_loads`: 250 W times the cycle's length);
//! - the battery's terminal power is the machine's plus the 250 W auxiliary load at every
//!   sample, `battery_energy_kwh` is ∫ p dt, and the charge it lost is that energy through
//!   its one-way efficiency (drawn p/η, stored p·η);
//! - the traction energy is within 1 % of the exact trace's (the road-load law on the
//!   trace, linear between breakpoints, integrated on a 1 ms grid): the driver's corrections
//!   cost less than that;
//! - against FASTSim 3.1.0's own run of the same vehicle file and cycle, recorded in
//!   `tests/fixtures/fastsim_zoe_2022.json` with its command: battery energy per km within
//!   2 % and traction energy per km within 1 % (the netlist regenerates at 0.84 as
//!   FASTSim does, `regen_efficiency`).

mod cycle_common;
use cycle_common::{
    exact_traction, integral, netlist, param, root, run, trace, trace_distance, KWH,
};

use serde_json::Value;

/// FASTSim's figures for `cycle` (see the fixture's `command` and `how`).
fn fastsim(cycle: &str) -> Value {
    let path = root().join("tests/fixtures/fastsim_zoe_2022.json");
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(f["peer"].as_str().unwrap().starts_with("FASTSim 3.1.0"));
    assert_eq!(f["vehicle"], "2022_Renault_Zoe_ZE50_R135.yaml");
    f["cycles"][cycle].clone()
}

fn check_cycle(cycle: &str) {
    let net = netlist("cycle_ev");
    let tr = trace(cycle);
    let r = run("cycle_ev", cycle);
    let s = &r.summary;

    // the run ends with the cycle (`stop_time: "cycle"`), the trace is followed
    let t_end = tr.last().unwrap().0;
    assert_eq!(s["status"], "completed", "{cycle}: {}", s["message"]);
    assert_eq!(s["end_time"].as_f64(), Some(t_end), "{cycle}");
    let err = r.metric("trace_error_max_kmh");
    assert!(err < 2.0, "{cycle}: max trace error {err} km/h");
    assert_eq!(r.metric("trace_time_outside_kmh2"), 0.0, "{cycle}");

    // distance: the trace's own
    let d_trace = trace_distance(&tr);
    let d = r.metric("distance_km") * 1000.0;
    assert!(
        (d / d_trace - 1.0).abs() < 0.005,
        "{cycle}: {d} m against {d_trace} m"
    );

    assert!(
        !r.stderr.contains("energy audit"),
        "{cycle}: the audit warns: {}",
        r.stderr
    );
    // energy audit: closes, the battery's chemical energy is the only source, what the
    // machine drew (∫ p_elec dt) came from the battery's terminals, the rest of the
    // terminal energy went to the auxiliary load
    let e = &s["energy"];
    assert!(
        e["relative_residual"].as_f64().unwrap().abs() < 1e-6,
        "{cycle}: {e}"
    );
    let sources = e["sources"].as_object().unwrap();
    assert_eq!(sources.keys().collect::<Vec<_>>(), ["battery"], "{cycle}");
    let losses = e["losses"].as_object().unwrap();
    for (name, loss) in losses {
        assert!(loss.as_f64().unwrap() >= 0.0, "{cycle}: {name} {loss}");
    }
    let t = r.col("time");
    let p_motor = r.col("motor.p_elec");
    let e_motor = integral(&t, |k| p_motor[k]);
    let aux_energy = param(&net, "auxPower") * t_end;
    let loads = losses["electrical_loads"].as_f64().unwrap();
    assert!(
        (loads / aux_energy - 1.0).abs() < 1e-6,
        "{cycle}: electrical loads {loads} J, aux {aux_energy} J"
    );
    let src = sources["battery"].as_f64().unwrap();
    let drawn = src - losses["battery.loss"].as_f64().unwrap() - loads;
    assert!(
        (e_motor / drawn - 1.0).abs() < 1e-4,
        "{cycle}: ∫p_elec {e_motor} J, terminals less aux {drawn} J"
    );

    // battery: p = machine + aux at every sample; the metric is ∫ p dt; the charge lost is
    // that energy through the one-way efficiency
    let p_bat = r.col("battery.power");
    let aux = param(&net, "auxPower");
    for k in 0..t.len() {
        let want = p_motor[k] + aux;
        assert!(
            (p_bat[k] - want).abs() <= 1e-9 * want.abs().max(1.0),
            "{cycle}: t = {}",
            t[k]
        );
    }
    let e_bat = integral(&t, |k| p_bat[k]);
    let metric = r.metric("battery_energy_kwh") * KWH;
    assert!(
        (metric / e_bat - 1.0).abs() < 1e-9,
        "{cycle}: metric {metric} J, ∫p {e_bat} J"
    );
    let eta = param(&net, "batteryEff");
    let drawn =
        integral(&t, |k| p_bat[k].max(0.0)) / eta + integral(&t, |k| p_bat[k].min(0.0)) * eta;
    let soc = r.col("battery.soc");
    let chemical = (soc[0] - soc[soc.len() - 1]) * param(&net, "batteryEnergy");
    assert!(
        (chemical / drawn - 1.0).abs() < 1e-4,
        "{cycle}: soc {chemical} J, ∫p/η {drawn} J"
    );
    assert!(chemical > e_bat, "{cycle}: the battery's own loss");
    assert!(
        (src / chemical - 1.0).abs() < 1e-6,
        "{cycle}: audit source {src} J, soc {chemical} J"
    );

    // traction: the road load on the trace, within 1 % (the car is within 2 km/h of the
    // trace, above or below it, so its traction energy may be either side of the trace's)
    let exact = exact_traction(&net, &tr);
    let traction = r.metric("traction_energy_kwh");
    assert!(
        (traction / exact - 1.0).abs() < 0.01,
        "{cycle}: {traction} kWh against the trace's {exact} kWh"
    );

    // against FASTSim's own run of the same vehicle file and cycle
    let fs = fastsim(cycle);
    let km = r.metric("distance_km");
    let wh_per_km = r.metric("wh_per_km");
    let fs_wh_per_km = fs["wh_per_km"].as_f64().unwrap();
    assert!(
        (wh_per_km / fs_wh_per_km - 1.0).abs() < 0.02,
        "{cycle}: battery {wh_per_km} Wh/km, FASTSim {fs_wh_per_km} Wh/km"
    );
    let traction_wh_per_km = traction * KWH / 3600.0 / km;
    let fs_traction = fs["traction_wh_per_km"].as_f64().unwrap();
    assert!(
        (traction_wh_per_km / fs_traction - 1.0).abs() < 0.01,
        "{cycle}: traction {traction_wh_per_km} Wh/km, FASTSim {fs_traction} Wh/km"
    );
}

#[test]
fn zoe_follows_udds_and_its_energy_closes() {
    check_cycle("udds");
}

#[test]
fn zoe_follows_hwfet_and_its_energy_closes() {
    check_cycle("hwfet");
}
