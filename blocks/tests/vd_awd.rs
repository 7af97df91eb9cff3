//! `TorqueSplitter` in the four-wheel drive of models/netlists/vd_awd.json: the open
//! centre differential splits the input torque at `front_share`, the locked one turns the
//! front and rear shafts at one speed; the split-mu demo spins its iced wheels and its
//! energy audit closes.

use std::path::PathBuf;

use drivelink_blocks::registry;
use drivelink_core::{compile, RunStatus, SimResult};
use drivelink_netlist as netlist;
use serde_json::Value;

/// vd_awd.json with the centre differential's `type` and the left wheels' `mu_left`
/// replaced, run; its audit must close to 1e-6 with no element delivering energy.
fn run_awd(centre_type: &str, mu_left: f64) -> SimResult {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/netlists/vd_awd.json");
    let text = std::fs::read_to_string(&path).expect("vd_awd.json");
    let mut v: Value = serde_json::from_str(&text).expect("JSON");
    v["parameters"]["mu_left"] = serde_json::json!(mu_left);
    for b in v["blocks"].as_array_mut().expect("blocks") {
        if b["name"] == "centre" {
            b["params"]["type"] = serde_json::json!(centre_type);
        }
    }
    let d = netlist::load_value(&v, "vd_awd", path.parent().expect("dir"))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("{e}"));
    assert!(m.plan().warnings().is_empty(), "{:?}", m.plan().warnings());
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    let a = m.energy_audit();
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
    assert!(a.energy_created().is_empty(), "{:?}", a.energy_created());
    r
}

fn series<'a>(r: &'a SimResult, n: &str) -> &'a [f64] {
    r.get(n).unwrap_or_else(|| panic!("no {n}"))
}

#[test]
fn open_centre_differential_splits_the_input_torque_at_front_share() {
    // Full grip everywhere and the demo's 450 N·m: no wheel spins.
    let r = run_awd("open", 1.0);
    let (input, front, rear) = (
        series(&r, "centre.tau_input"),
        series(&r, "centre.tau_front"),
        series(&r, "centre.tau_rear"),
    );
    for w in ["fl", "fr", "rl", "rr"] {
        let slip = series(&r, &format!("{w}.forward_slip"));
        assert!(slip.iter().all(|s| s.abs() < 0.4), "{w} slips");
    }
    for i in 0..r.time.len() {
        assert!(input[i] > 100.0, "input torque {} N·m", input[i]);
        let share = front[i] / input[i];
        assert!(
            (share - 0.4).abs() < 1e-6,
            "t {}: front share {share}",
            r.time[i]
        );
        assert!((front[i] + rear[i] - input[i]).abs() < 1e-9 * input[i]);
    }
}

#[test]
fn locked_centre_differential_turns_front_and_rear_shafts_at_one_speed() {
    // Split mu: the iced left wheels would spin the front axle (it carries less load)
    // faster than the rear one; the locked centre holds both shafts together and moves
    // the torque to where the grip is.
    let r = run_awd("locked", 0.2);
    let (wf, wr) = (series(&r, "centre.w_front"), series(&r, "centre.w_rear"));
    for i in 0..r.time.len() {
        assert!(
            (wf[i] - wr[i]).abs() < 1e-9 * wf[i].abs().max(1.0),
            "t {}: front {} rad/s, rear {} rad/s",
            r.time[i],
            wf[i],
            wr[i]
        );
    }
    let (front, input) = (
        series(&r, "centre.tau_front"),
        series(&r, "centre.tau_input"),
    );
    let n = r.time.len() - 1;
    println!("locked: front share at the end {}", front[n] / input[n]);
}

#[test]
fn split_mu_demo_spins_the_iced_wheels_of_each_open_axle() {
    let r = run_awd("open", 0.2);
    let last = |n: &str| *series(&r, n).last().expect("samples");
    // Each open axle differential gives its wheels equal torques: the iced left wheels
    // spin up, the right ones roll; the centre still splits 40/60.
    for (l, rt) in [("fl", "fr"), ("rl", "rr")] {
        assert!(
            last(&format!("{l}.w")) > 3.0 * last(&format!("{rt}.w")),
            "{l} {} rad/s, {rt} {} rad/s",
            last(&format!("{l}.w")),
            last(&format!("{rt}.w"))
        );
    }
    let share = last("centre.tau_front") / last("centre.tau_input");
    assert!((share - 0.4).abs() < 1e-6, "front share {share}");
}
