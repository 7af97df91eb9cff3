//! `RegenBlend` in `models/netlists/vehicle_ev_regen_abs.json` (an electric quarter car's
//! emergency stop): the machine's and the friction brake's torques sum to the demand at
//! every sample, the machine takes all it can (its envelope at the wheel shaft through the
//! gear's ratio and efficiency), and the instant the ABS acts the regeneration yields for
//! the rest of the stop — until the driver releases the pedal.

use std::path::PathBuf;

use drivelink_blocks::registry;
use drivelink_core::{compile, EventTag, RunStatus, SimResult};
use drivelink_netlist as netlist;
use serde_json::{json, Value};

fn netlist_json() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../models/netlists/vehicle_ev_regen_abs.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn run(v: &Value) -> SimResult {
    let d = netlist::load_value(v, "regen", std::path::Path::new(".")).unwrap();
    let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("{e}"));
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    let a = m.energy_audit();
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
    r
}

fn col<'a>(r: &'a SimResult, n: &str) -> &'a [f64] {
    r.get(n).unwrap_or_else(|| panic!("no {n}"))
}

/// The regenerated share is min(demand, capacity) outside the ABS, the two shares sum to
/// the demand, and the machine's torque at the wheel shaft is that share.
fn check_split(r: &SimResult, ratio: f64, eff: f64) -> usize {
    let (demand, regen, friction, capacity, yielded, tau_m) = (
        col(r, "pedal.y"),
        col(r, "blend.regen"),
        col(r, "blend.friction"),
        col(r, "blend.capacity"),
        col(r, "blend.yielded"),
        col(r, "motor.tau"),
    );
    let mut regenerating = 0;
    for k in 0..demand.len() {
        let scale = 1.0 + demand[k];
        assert!(
            (regen[k] + friction[k] - demand[k]).abs() < 1e-9 * scale,
            "sample {k}: {} + {} != {}",
            regen[k],
            friction[k],
            demand[k]
        );
        let want = if yielded[k] > 0.5 {
            0.0
        } else {
            demand[k].min(capacity[k])
        };
        assert!((regen[k] - want).abs() < 1e-9 * scale, "sample {k}");
        // generating: the machine's torque opposes its (forward) rotation
        assert!(
            (-tau_m[k] * ratio / eff - regen[k]).abs() < 1e-9 * scale,
            "sample {k}: machine {} N*m x {ratio}/{eff}, regen {} N*m",
            tau_m[k],
            regen[k]
        );
        if regen[k] > 0.0 {
            regenerating += 1;
        }
    }
    regenerating
}

#[test]
fn regeneration_takes_what_the_machine_can_and_the_friction_brake_the_rest() {
    let mut v = netlist_json();
    v["parameters"]["mu"] = json!(1.0);
    v["parameters"]["T_demand"] = json!("600 N*m");
    let r = run(&v);
    assert_eq!(r.events_of("abs", EventTag::ZeroCrossing).count(), 0);
    assert!(col(&r, "abs.active").iter().all(|a| *a == 0.0));
    let n = check_split(&r, 9.3, 0.95);
    assert!(n > 100, "{n} regenerating samples");
    // At 100 km/h the 25 kW machine brakes 25 kW/ω at the wheel shaft: less than the
    // 600 N*m asked, so the friction brake takes the rest; lower down it takes it all.
    let (t, friction, capacity) = (
        r.time.as_slice(),
        col(&r, "blend.friction"),
        col(&r, "blend.capacity"),
    );
    let k = t.iter().position(|&x| x >= 0.8).unwrap();
    let w_wheel = col(&r, "wheel.w")[k];
    let env = 25e3 / (w_wheel * 9.3);
    assert!(
        (capacity[k] - env * 9.3 / 0.95).abs() < 1e-9 * capacity[k],
        "capacity {} at ω {w_wheel}",
        capacity[k]
    );
    assert!(friction[k] > 0.0);
    // Below ω = P·ratio/(η·600 N*m) (13.2 m/s here) the machine covers the 600 N*m.
    let v = col(&r, "body.v");
    let k = v.iter().position(|&x| x < 12.0).unwrap();
    assert_eq!(friction[k], 0.0, "at {} m/s", v[k]);
    // The battery is charged with the machine's electrical power: more than half the car's
    // kinetic energy (154 kJ) comes back.
    let (p, soc) = (col(&r, "battery.power"), col(&r, "battery.soc"));
    let charged: f64 = (1..t.len())
        .map(|k| -0.5 * (p[k] + p[k - 1]) * (t[k] - t[k - 1]))
        .sum();
    assert!(charged > 80e3, "{charged} J");
    assert!(soc[soc.len() - 1] > soc[0]);
}

#[test]
fn regeneration_yields_to_the_abs_for_the_rest_of_the_stop() {
    let r = run(&netlist_json());
    let yields: Vec<f64> = r
        .events_of("blend", EventTag::ZeroCrossing)
        .map(|e| e.time)
        .collect();
    assert_eq!(yields.len(), 1, "{yields:?}");
    let (t, active, regen, tau_m, w) = (
        r.time.as_slice(),
        col(&r, "abs.active"),
        col(&r, "blend.regen"),
        col(&r, "motor.tau"),
        col(&r, "wheel.w"),
    );
    // the yield is the ABS's first activation, at one of its sample instants
    let first = t[active.iter().position(|a| *a > 0.5).unwrap()];
    assert_eq!(yields[0], first);
    let n = check_split(&r, 9.3, 0.95);
    assert!(n > 20, "regenerating before the ABS: {n} samples");
    for k in 0..t.len() {
        if t[k] > first {
            assert_eq!((regen[k], tau_m[k]), (0.0, 0.0), "t = {}", t[k]);
        }
    }
    // The ABS alone keeps the wheel turning: while a locked wheel's slip (the car's speed)
    // would exceed the ABS trigger (the tire's peak slip 1 m/s + 0.3 m/s) the wheel never
    // stays locked longer than two of the ABS's 5 ms cycles. (Slower, a locked wheel's
    // slip is below the trigger: it stays locked, as the ABS is designed.)
    let trigger = 1.0 + 0.3;
    let v = col(&r, "body.v");
    let (mut since, mut longest) = (None, 0.0_f64);
    for k in 0..t.len() {
        if v[k] > trigger && w[k] <= 0.0 {
            let t0 = *since.get_or_insert(t[k]);
            longest = longest.max(t[k] - t0);
        } else {
            since = None;
        }
    }
    assert!(longest <= 0.010 + 1e-9, "wheel locked for {longest} s");
}

#[test]
fn released_pedal_gives_the_regeneration_back() {
    // Hard braking (ABS) until 2 s, the pedal released, then a light demand from 2.5 s.
    let mut v = netlist_json();
    let pedal = v["blocks"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|b| b["name"] == "pedal")
        .unwrap();
    *pedal = json!({"name": "pedal", "type": "SignalBuilder", "params": {"points":
        [[0, 0], [0.1, 0], [0.6, 1500], [2, 1500], [2, 0], [2.5, 0], [2.5, 200], [8, 200]]}});
    let r = run(&v);
    let events: Vec<(f64, String)> = r
        .events_of("blend", EventTag::ZeroCrossing)
        .map(|e| (e.time, e.detail.clone()))
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events[0].1.contains("yields"), "{events:?}");
    assert!(
        events[1].1.contains("allowed again") && events[1].0 == 2.0,
        "{events:?}"
    );
    let (t, regen) = (r.time.as_slice(), col(&r, "blend.regen"));
    let k = t.iter().position(|&x| x > 2.6).unwrap();
    assert!(
        (regen[k] - 200.0).abs() < 1e-9,
        "light demand at {} s: regen {} N*m",
        t[k],
        regen[k]
    );
    check_split(&r, 9.3, 0.95);
}
