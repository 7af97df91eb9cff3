//! `Battery`: the current from the terminal power through the internal resistance, the
//! state of charge against the constant-power closed form and the integrated current
//! (charge conservation), the power limits and `soc_min`/`soc_max` as located, logged
//! events, the efficiency and energy forms, and parameter errors.

use drivelink_blocks::registry;
use drivelink_core::compile::{resolve_params, Scope};
use drivelink_core::{Diagram, EventTag, SimResult};
use serde_json::{json, Value};

mod common;
use common::{close, last, run_completed};

const OCV: f64 = 400.0;
const R: f64 = 0.1;
/// Capacity 50 A·h, in A·s.
const CAP: f64 = 50.0 * 3600.0;

/// `source` (type, params) -> battery (params), logging the battery's outputs and the
/// integral of its current.
fn rig(src: &str, src_params: Value, bat: Value, stop: f64) -> Diagram {
    let mut d = Diagram::new("battery");
    d.add("src", src, src_params);
    d.add("bat", "Battery", bat);
    d.add("q", "Integrator", json!({}));
    d.connect(&["src.y", "bat.p"]);
    d.connect(&["bat.i", "q.u"]);
    d.log(&[
        "bat.soc",
        "bat.v",
        "bat.i",
        "bat.loss",
        "bat.power",
        "bat.limit",
        "bat.state",
        "q.y",
    ]);
    d.settings.stop_time = stop;
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-12;
    d
}

/// The current of power `p` at `ocv` behind `r` (the battery's branch of `p = (ocv − r·i)·i`).
fn current(p: f64, ocv: f64, r: f64) -> f64 {
    (ocv - (ocv * ocv - 4.0 * r * p).sqrt()) / (2.0 * r)
}

fn col<'a>(r: &'a SimResult, n: &str) -> &'a [f64] {
    r.get(n).unwrap_or_else(|| panic!("no {n}"))
}

#[test]
fn constant_power_follows_the_closed_form() {
    let p = 20e3;
    let bat = json!({"ocv": OCV, "capacity": "50 A*h", "r_internal": R, "soc0": 0.9});
    let (_, r) = run_completed(&rig("Constant", json!({"value": p}), bat, 600.0));
    let i = current(p, OCV, R);
    // p = v·i with v = ocv − R·i: i² R − ocv i + p = 0.
    close(R * i * i - OCV * i + p, 0.0, 1e-8, "quadratic residual");
    for (k, t) in r.time.iter().enumerate() {
        close(col(&r, "bat.i")[k], i, 1e-9, "i");
        close(col(&r, "bat.v")[k], OCV - R * i, 1e-9, "v");
        close(col(&r, "bat.loss")[k], R * i * i, 1e-7, "loss");
        close(
            col(&r, "bat.v")[k] * col(&r, "bat.i")[k],
            p,
            1e-6,
            "v·i = p",
        );
        close(
            col(&r, "bat.soc")[k],
            0.9 - i * t / CAP,
            1e-10,
            &format!("soc at {t} s"),
        );
    }
}

#[test]
fn soc_is_the_integrated_current_over_the_capacity() {
    // A varying power through a soc-dependent ocv: the soc still equals soc0 − ∫i/C.
    let bat = json!({
        "ocv": [[0.0, 320.0], [0.5, 370.0], [1.0, 410.0]],
        "capacity": "50 A*h", "r_internal": R, "soc0": 0.8
    });
    let src = json!({"amplitude": 40e3, "frequency": 0.01, "offset": 10e3});
    let (_, r) = run_completed(&rig("Sine", src, bat, 1000.0));
    let soc = col(&r, "bat.soc");
    let q = col(&r, "q.y");
    for k in 0..r.time.len() {
        close(
            soc[k],
            0.8 - q[k] / CAP,
            1e-9,
            &format!("soc at {} s", r.time[k]),
        );
    }
    // Both discharging and charging happened.
    let i = col(&r, "bat.i");
    assert!(i.iter().any(|&x| x > 50.0) && i.iter().any(|&x| x < -50.0));
}

#[test]
fn reaching_soc_min_cuts_the_power_at_the_located_instant() {
    let p = 20e3;
    let bat = json!({
        "ocv": OCV, "capacity": "50 A*h", "r_internal": R, "soc0": 0.3, "soc_min": 0.2
    });
    let (_, r) = run_completed(&rig("Constant", json!({"value": p}), bat, 600.0));
    let i = current(p, OCV, R);
    let t_empty = 0.1 * CAP / i;
    let ev: Vec<_> = r
        .events_of("bat", EventTag::ZeroCrossing)
        .filter(|e| e.detail.starts_with("empty"))
        .collect();
    assert_eq!(ev.len(), 1, "{:?}", r.events);
    close(ev[0].time, t_empty, 1e-6, "empty time");
    close(last(&r, "bat.soc"), 0.2, 1e-9, "soc held at soc_min");
    assert_eq!(last(&r, "bat.i"), 0.0);
    assert_eq!(last(&r, "bat.power"), 0.0);
    assert_eq!(last(&r, "bat.state"), -1.0);
    close(last(&r, "bat.v"), OCV, 0.0, "v = ocv without current");
}

#[test]
fn discharge_power_is_clipped_with_a_logged_limit() {
    // p rises 0 -> 100 kW over 100 s; p_discharge_max 50 kW is reached at 50 s.
    let bat = json!({
        "ocv": OCV, "capacity": "50 A*h", "r_internal": R, "soc0": 0.9,
        "p_discharge_max": 50e3
    });
    let ramp = json!({"start_time": 0.0, "duration": 100.0, "height": 100e3});
    let (_, r) = run_completed(&rig("Ramp", ramp, bat, 120.0));
    let ev: Vec<_> = r
        .events_of("bat", EventTag::ZeroCrossing)
        .filter(|e| e.detail.starts_with("limit"))
        .collect();
    assert_eq!(ev.len(), 1, "{:?}", r.events);
    close(ev[0].time, 50.0, 1e-6, "limit time");
    close(last(&r, "bat.power"), 50e3, 1e-6, "clipped power");
    close(
        last(&r, "bat.i"),
        current(50e3, OCV, R),
        1e-9,
        "clipped current",
    );
    assert_eq!(last(&r, "bat.limit"), 1.0);
}

#[test]
fn power_beyond_ocv_squared_over_4r_is_clipped_to_the_maximum_transfer_point() {
    // R = 1 Ω: at most 400²/4 = 40 kW, at i = ocv/(2R) = 200 A and v = ocv/2.
    let bat = json!({"ocv": OCV, "capacity": "50 A*h", "r_internal": 1.0, "soc0": 0.9});
    let ramp = json!({"start_time": 0.0, "duration": 60.0, "height": 60e3});
    let (_, r) = run_completed(&rig("Ramp", ramp, bat, 70.0));
    let ev: Vec<_> = r
        .events_of("bat", EventTag::ZeroCrossing)
        .filter(|e| e.detail.starts_with("limit") && e.detail.contains("ocv²"))
        .collect();
    assert_eq!(ev.len(), 1, "{:?}", r.events);
    close(ev[0].time, 40.0, 1e-6, "limit time");
    // The ocv is constant here, so the limit is 40 kW exactly.
    close(last(&r, "bat.i"), 200.0, 1e-6, "current at the limit");
    close(last(&r, "bat.v"), 200.0, 1e-6, "voltage at the limit");
}

#[test]
fn charging_with_an_efficiency_stops_at_soc_max() {
    // η = 0.9 one way: charging 10 kW stores 9 kW, i = −9 kW / 400 V = −22.5 A; the energy
    // form: 50 kWh at 400 V is 125 A·h.
    let bat = json!({
        "ocv": OCV, "energy": "50 kWh", "v_nominal": OCV, "efficiency": 0.9,
        "soc0": 0.8, "soc_max": 0.9, "p_charge_max": 8e3
    });
    // p_charge_max 8 kW clips the asked 10 kW from the start (the initial mode, no event).
    let (_, r) = run_completed(&rig("Constant", json!({"value": -10e3}), bat, 7200.0));
    let cap = 125.0 * 3600.0;
    let i = -8e3 * 0.9 / OCV;
    close(col(&r, "bat.i")[0], i, 1e-12, "charge current");
    close(col(&r, "bat.loss")[0], 8e3 * 0.1, 1e-9, "charge loss");
    let t_full = 0.1 * cap / -i;
    let ev: Vec<_> = r
        .events_of("bat", EventTag::ZeroCrossing)
        .filter(|e| e.detail.starts_with("full"))
        .collect();
    assert_eq!(ev.len(), 1, "{:?}", r.events);
    close(ev[0].time, t_full, 1e-6, "full time");
    close(last(&r, "bat.soc"), 0.9, 1e-9, "soc held at soc_max");
    assert_eq!(last(&r, "bat.i"), 0.0);
    assert_eq!(last(&r, "bat.limit"), -1.0);
}

#[test]
fn discharging_with_an_efficiency_draws_p_over_eta() {
    let bat = json!({"ocv": OCV, "capacity": "50 A*h", "efficiency": 0.95, "soc0": 0.5});
    let (_, r) = run_completed(&rig("Constant", json!({"value": 19e3}), bat, 100.0));
    close(last(&r, "bat.i"), 19e3 / 0.95 / OCV, 1e-12, "i");
    close(last(&r, "bat.loss"), 19e3 / 0.95 - 19e3, 1e-9, "loss");
    close(last(&r, "bat.soc"), 0.5 - 50.0 * 100.0 / CAP, 1e-12, "soc");
}

fn build_error(params: Value) -> drivelink_core::ParamError {
    let reg = registry();
    let t = reg.get("Battery").unwrap();
    let Value::Object(raw) = params else { panic!() };
    let p = resolve_params("bat", t.name, &t.params, &raw, &Scope::new()).expect("params");
    let drivelink_core::BlockBuild::Primitive(f) = &t.build else {
        panic!()
    };
    f(&p).err().expect("a build error")
}

#[test]
fn contradicting_parameters_are_errors_naming_the_parameter() {
    let e = build_error(json!({"ocv": OCV, "capacity": 1.0, "energy": 1.0, "soc0": 0.5}));
    assert_eq!(e.param, "energy");
    let e = build_error(json!({"ocv": OCV, "r_internal": 0.1, "efficiency": 0.9, "soc0": 0.5}));
    assert_eq!(e.param, "efficiency");
    let e = build_error(json!({"ocv": [[0.0, 300.0], [0.5, -1.0]], "soc0": 0.5}));
    assert_eq!(e.param, "ocv");
    let e = build_error(json!({"ocv": OCV, "soc0": 0.5, "soc_min": 0.6, "soc_max": 0.5}));
    assert_eq!(e.param, "soc_max");
}
