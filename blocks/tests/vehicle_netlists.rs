//! The example netlists models/netlists/vehicle_*.json load and run.

use std::path::PathBuf;

use drivelink_blocks::registry;
use drivelink_core::{compile, Model, RunStatus, SimResult};
use drivelink_netlist as netlist;

fn run_model(file: &str) -> (Model, SimResult) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../models/netlists")
        .join(file);
    let d = netlist::load_file(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("{file}: {e}"));
    let r = m.run();
    assert_ne!(r.status, RunStatus::Failed, "{file}: {}", r.message);
    (m, r)
}

fn run(file: &str) -> SimResult {
    run_model(file).1
}

#[test]
fn vehicle_netlists_energy_audit_closes() {
    // Source work = kinetic energy change + what each tire, brake, clutch, differential
    // coupling, converter and drag dissipated, to solver tolerance.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/netlists");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("vehicle_") && n.ends_with(".json"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    for f in files {
        let (mut m, _) = run_model(&f);
        let a = m.energy_audit();
        println!(
            "{f}: energy residual {:.3e} J, relative {:.3e}",
            a.residual, a.relative_residual
        );
        assert!(a.relative_residual.abs() < 1e-6, "{f}: {a:#?}");
    }
}

#[test]
fn split_mu_netlists_order_by_type() {
    let mut v = Vec::new();
    for t in ["locked", "torque_bias", "viscous", "open"] {
        let r = run(&format!("vehicle_split_mu_{t}.json"));
        let vv = r.value_at("body.v", 5.0).unwrap();
        println!("netlist split-mu {t}: v(5 s) = {vv:.3} m/s");
        v.push(vv);
    }
    let r = run("vehicle_split_mu_clutch_pack.json");
    println!(
        "netlist split-mu clutch_pack: v(5 s) = {:.3} m/s",
        r.value_at("body.v", 5.0).unwrap()
    );
    // Locked is the best and open the worst; the others lie between.
    assert!(
        v[1..].iter().all(|&x| x <= v[0] + 1e-3) && v[..3].iter().all(|&x| x >= v[3] - 1e-3),
        "{v:?}"
    );
}

#[test]
fn emergency_stop_netlists_abs_is_shorter() {
    let a = run("vehicle_emergency_stop_abs.json");
    let n = run("vehicle_emergency_stop_no_abs.json");
    let (sa, sn) = (a.last("body.s").unwrap(), n.last("body.s").unwrap());
    println!("netlist emergency stop: ABS {sa:.2} m, locked {sn:.2} m");
    assert!(a.last("body.v").unwrap().abs() < 1e-9 && n.last("body.v").unwrap().abs() < 1e-9);
    assert!(sa < 0.8 * sn);
}

#[test]
fn complete_car_accelerates_through_gears_and_stops() {
    let r = run("vehicle_complete_car.json");
    let vmax = r.get("body.v").unwrap().iter().cloned().fold(0.0, f64::max);
    let ev = r.events.len();
    println!(
        "complete car: v_max = {:.1} km/h, end {:.3} s ({:?}), distance {:.1} m, events {ev}",
        vmax * 3.6,
        r.end_time,
        r.status,
        r.last("body.s").unwrap()
    );
    assert!(vmax > 20.0, "{vmax}");
    let tl = r
        .get("tire_rl.slip")
        .unwrap()
        .iter()
        .cloned()
        .fold(0.0, f64::min);
    println!("complete car: most negative rear slip {tl:.2} m/s");
    assert!(
        r.last("body.v").unwrap().abs() < 1e-9,
        "{:?}",
        r.last("body.v")
    );
}
