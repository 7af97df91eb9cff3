//! `models/netlists/cycle_conv.json` (the 2012 Ford Fusion of FASTSim's vehicle file) on
//! UDDS and HWFET, run as a user runs it through `drivelink run --set cycle=...`, and
//! checked against what the run must conserve, what FASTSim's fuel law prescribes and
//! what FASTSim computed:
//!
//! - the driver follows the trace (never 2 km/h off) and the run ends with the cycle;
//! - at every sample the fuel rate is FASTSim's law, `(max(P_engine, 0) + P_aux) /
//!   (η(fraction) · LHV)` with η interpolated here from the netlist's table, and while the
//!   car stands the engine burns the accessories' fuel power that FASTSim burns
//!   (`idle_fuel_power_w` of the fixture);
//! - the fuel mass is the integral of the fuel rate;
//! - the energy audit closes with the fuel's chemical energy as its only source, no
//!   negative loss and no warning, the engine's loss being fuel energy − shaft work;
//! - the traction energy is within 1 % of the exact trace's;
//! - against FASTSim 3.1.0's own run of the same vehicle file and cycle, recorded in
//!   `tests/fixtures/fastsim_fusion_2012.json` with its command: fuel per km within 3 %,
//!   traction energy per km within 1 %.

mod cycle_common;
use cycle_common::{
    check_audit, eta_table, exact_traction, integral, interp, netlist, param, root, run, trace,
    trace_distance, Run, KWH,
};

use serde_json::Value;

/// FASTSim's figures for `cycle` (see the fixture's `command` and `how`).
fn fastsim(cycle: &str) -> Value {
    let path = root().join("tests/fixtures/fastsim_fusion_2012.json");
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(f["peer"].as_str().unwrap().starts_with("FASTSim 3.1.0"));
    assert_eq!(f["vehicle"], "2012_Ford_Fusion.yaml");
    f["cycles"][cycle].clone()
}

/// FASTSim's fuel law at every sample; the fuel power while standing.
fn check_fuel_law(cycle: &str, net: &Value, r: &Run, fs: &Value) {
    let (fr, eta) = eta_table(net);
    let p_max = param(net, "engineMaxPower");
    let aux = param(net, "auxPower");
    let lhv = param(net, "fuelLhv");
    let (p_eng, rate, v, accel) = (
        r.col("engine.power"),
        r.col("engine.fuel_rate"),
        r.col("body.v"),
        r.col("driver.accel"),
    );
    let mut standing = 0;
    for k in 0..rate.len() {
        let out = p_eng[k].max(0.0) + aux;
        let want = out / interp(&fr, &eta, out / p_max) / lhv * 1e3;
        assert!(
            (rate[k] - want).abs() <= 1e-9 * want,
            "{cycle}: sample {k}: fuel rate {} g/s, FASTSim's law {want} g/s",
            rate[k]
        );
        if v[k] == 0.0 && accel[k] == 0.0 {
            standing += 1;
            let idle = fs["idle_fuel_power_w"].as_f64().unwrap();
            let p_fuel = rate[k] * 1e-3 * lhv;
            assert!(
                (p_fuel / idle - 1.0).abs() < 1e-9,
                "{cycle}: standing at sample {k}: {p_fuel} W of fuel, FASTSim {idle} W"
            );
        }
    }
    assert!(standing > 100, "{cycle}: {standing} standing samples");
}

fn check_cycle(cycle: &str) {
    let net = netlist("cycle_conv");
    let tr = trace(cycle);
    let fs = fastsim(cycle);
    let r = run("cycle_conv", cycle);
    let s = &r.summary;

    // the run ends with the cycle, the trace is followed, the distance is the trace's
    assert_eq!(s["status"], "completed", "{cycle}: {}", s["message"]);
    assert_eq!(
        s["end_time"].as_f64(),
        Some(tr.last().unwrap().0),
        "{cycle}"
    );
    let err = r.metric("trace_error_max_kmh");
    assert!(err < 2.0, "{cycle}: max trace error {err} km/h");
    assert_eq!(r.metric("trace_time_outside_kmh2"), 0.0, "{cycle}");
    let km = r.metric("distance_km");
    assert!(
        (km * 1000.0 / trace_distance(&tr) - 1.0).abs() < 0.005,
        "{cycle}: {km} km"
    );

    check_fuel_law(cycle, &net, &r, &fs);

    // the fuel mass is ∫ fuel_rate dt; the metrics follow from it
    let t = r.col("time");
    let rate = r.col("engine.fuel_rate");
    let fuel_g = *r.col("engine.fuel").last().unwrap();
    let integrated = integral(&t, |k| rate[k]);
    assert!(
        (integrated / fuel_g - 1.0).abs() < 1e-5,
        "{cycle}: ∫ fuel_rate {integrated} g, fuel {fuel_g} g"
    );
    assert!((r.metric("fuel_kg") / (fuel_g * 1e-3) - 1.0).abs() < 1e-12);
    // (the density in SI, kg/m³; 1000 l per m³)
    let litres = fuel_g * 1e-3 / param(&net, "fuelDensity") * 1e3;
    assert!(
        (r.metric("l_per_100km") / (100.0 * litres / km) - 1.0).abs() < 1e-9,
        "{cycle}: l/100 km"
    );

    check_audit(cycle, &net, &r, fuel_g);

    // traction: the road load on the trace, within 1 % (the car is within 2 km/h of the
    // trace, above or below it, so its traction energy may be either side of the trace's)
    let exact = exact_traction(&net, &tr);
    let traction = r.metric("traction_energy_kwh");
    assert!(
        (traction / exact - 1.0).abs() < 0.01,
        "{cycle}: {traction} kWh against the trace's {exact} kWh"
    );

    // against FASTSim's own run of the same vehicle file and cycle
    let g_per_km = 1e3 * r.metric("fuel_kg") / km;
    let fs_g_per_km = fs["fuel_g_per_km"].as_f64().unwrap();
    assert!(
        (g_per_km / fs_g_per_km - 1.0).abs() < 0.03,
        "{cycle}: {g_per_km} g/km, FASTSim {fs_g_per_km} g/km"
    );
    let wh_per_km = traction * KWH / 3600.0 / km;
    let fs_wh_per_km = fs["traction_wh_per_km"].as_f64().unwrap();
    assert!(
        (wh_per_km / fs_wh_per_km - 1.0).abs() < 0.01,
        "{cycle}: traction {wh_per_km} Wh/km, FASTSim {fs_wh_per_km} Wh/km"
    );
}

#[test]
fn fusion_follows_udds_and_burns_fastsims_fuel() {
    check_cycle("udds");
}

#[test]
fn fusion_follows_hwfet_and_burns_fastsims_fuel() {
    check_cycle("hwfet");
}
