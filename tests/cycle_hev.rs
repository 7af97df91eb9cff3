//! `models/netlists/cycle_hev_power_split.json` (a Prius-class power-split hybrid under the
//! rule-based `PowerSplitController`) on UDDS and HWFET, run as a user runs it, and checked
//! against what a power split must obey:
//!
//! - Willis's equation of the planetary, `(1 + g)·ω_engine = ω_MG1 + g·ω_MG2`, at every
//!   sample to round-off;
//! - the strategy is charge-sustaining as SAE J1711 counts it (the battery's net energy
//!   change within 1 % of the fuel energy) on both cycles, and the engine runs only part of
//!   the time on the city cycle;
//! - the engine never turns backwards (the one-way clutch on the carrier);
//! - the fuel mass is the integral of the fuel rate;
//! - the electrical bus balances: the battery delivers what MG1, MG2 and the accessories
//!   draw, wherever its power limits do not clip it;
//! - the energy audit closes with the fuel's and the battery's chemical energy as its
//!   sources (no warning, no negative loss);
//! - the driver follows the trace (never 2 km/h off).

mod cycle_common;
use cycle_common::{integral, netlist, param, run, Run};

const NAME: &str = "cycle_hev_power_split";

fn check(r: &Run, cycle: &str) {
    let net = netlist(NAME);
    let g = param(&net, "planetaryRatio");
    let (t, we, ws, wr) = (
        r.col("time"),
        r.col("engine.w"),
        r.col("mg1.w"),
        r.col("mg2.w"),
    );
    for k in 0..t.len() {
        let scale = 1.0 + ws[k].abs() + g * wr[k].abs();
        let res = (1.0 + g) * we[k] - ws[k] - g * wr[k];
        assert!(
            res.abs() < 1e-9 * scale,
            "{cycle}: Willis residual {res} rad/s at t = {}",
            t[k]
        );
        assert!(
            we[k] > -1e-6,
            "{cycle}: engine at {} rad/s at t = {}",
            we[k],
            t[k]
        );
    }
    // Charge-sustaining as SAE J1711 counts it: the battery's net energy change is within
    // 1 % of the fuel's energy over the cycle.
    let battery_change = r.metric("soc_change") * param(&net, "batteryEnergy");
    let fuel_energy = r.metric("fuel_kg") * param(&net, "fuelLhv");
    assert!(
        (battery_change / fuel_energy).abs() < 0.01,
        "{cycle}: battery {battery_change} J against fuel {fuel_energy} J"
    );
    // The fuel burnt is the integral of the fuel rate (g, on the 10 ms grid).
    let rate = r.col("engine.fuel_rate");
    let burnt = *r.col("engine.fuel").last().unwrap();
    let integrated = integral(&t, |k| rate[k]);
    assert!(burnt > 0.0);
    assert!(
        (integrated / burnt - 1.0).abs() < 1e-3,
        "{cycle}: fuel {burnt} g, integrated rate {integrated} g"
    );
    // The bus: battery power = MG1 + MG2 electrical power + the accessories, wherever the
    // battery's limits leave it free (|p| below the limit).
    let aux = param(&net, "auxPower");
    let limit = param(&net, "batteryPower");
    let (pb, p1, p2) = (
        r.col("battery.power"),
        r.col("mg1.p_elec"),
        r.col("mg2.p_elec"),
    );
    let mut free = 0;
    for k in 0..t.len() {
        let asked = p1[k] + p2[k] + aux;
        if asked.abs() < 0.999 * limit {
            free += 1;
            assert!(
                (pb[k] - asked).abs() < 1e-6 * limit,
                "{cycle}: battery {} W, bus {asked} W at t = {}",
                pb[k],
                t[k]
            );
        }
    }
    assert!(
        free > t.len() / 2,
        "{cycle}: {free} free samples of {}",
        t.len()
    );
    // The audit: fuel and battery are the sources, it closes, nothing is negative.
    let e = &r.summary["energy"];
    let rel = e["relative_residual"].as_f64().unwrap();
    assert!(rel.abs() < 1e-6, "{cycle}: audit residual {rel}");
    let sources = e["sources"].as_object().unwrap();
    assert!(
        sources.contains_key("engine") && sources.contains_key("battery"),
        "{sources:?}"
    );
    for (name, v) in e["losses"].as_object().unwrap() {
        let v = v.as_f64().unwrap();
        assert!(
            v > -1e-6 * sources["engine"].as_f64().unwrap(),
            "{cycle}: loss {name} = {v} J"
        );
    }
    assert!(!r.stderr.contains("warning"), "{cycle}: {}", r.stderr);
    let off = r.metric("trace_error_max_kmh");
    assert!(off < 2.0, "{cycle}: {off} km/h off the trace");
}

#[test]
fn power_split_hybrid_on_udds_obeys_willis_and_sustains_its_charge() {
    let r = run(NAME, "udds");
    check(&r, "udds");
    // In the city the car drives electrically most of the time.
    let on = r.metric("engine_on_fraction");
    assert!((0.05..0.5).contains(&on), "engine on {on} of the time");
}

#[test]
fn power_split_hybrid_on_hwfet_obeys_willis_and_sustains_its_charge() {
    let r = run(NAME, "hwfet");
    check(&r, "hwfet");
}
