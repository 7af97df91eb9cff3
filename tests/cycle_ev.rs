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
//!   cost less than that.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const KWH: f64 = 3.6e6;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn netlist() -> Value {
    let text = std::fs::read_to_string(root().join("models/netlists/cycle_ev.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A model parameter of cycle_ev.json in SI: a number, or "NUMBER UNIT" with the few units
/// the file uses.
fn param(net: &Value, name: &str) -> f64 {
    let v = &net["parameters"][name];
    if let Some(x) = v.as_f64() {
        return x;
    }
    let s = v.as_str().unwrap_or_else(|| panic!("parameter {name}"));
    let (num, unit) = s.split_once(' ').unwrap_or((s, ""));
    let scale = match unit {
        "" | "kg" | "m" | "m^2" | "kg*m^2" | "kg/m^3" | "m/s^2" | "W" | "V" => 1.0,
        "kW" => 1e3,
        "MJ" => 1e6,
        other => panic!("unit {other} of {name}"),
    };
    num.parse::<f64>().unwrap() * scale
}

struct Run {
    summary: Value,
    columns: Vec<String>,
    rows: Vec<Vec<f64>>,
}

impl Run {
    fn col(&self, name: &str) -> Vec<f64> {
        let i = self.columns.iter().position(|c| c == name).unwrap();
        self.rows.iter().map(|r| r[i]).collect()
    }
    fn metric(&self, name: &str) -> f64 {
        self.summary["metrics"][name].as_f64().unwrap_or(f64::NAN)
    }
}

fn run(cycle: &str) -> Run {
    let out =
        std::env::temp_dir().join(format!("drivelink_cycle_ev_{cycle}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = Command::new(env!("CARGO_BIN_EXE_drivelink"))
        .arg("run")
        .arg(root().join("models/netlists/cycle_ev.json"))
        .args(["--set", &format!("cycle={cycle}"), "--set", "dt_out=10 ms"])
        .args(["--no-plots", "--no-report", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{cycle}: {stderr}");
    assert!(
        !stderr.contains("energy audit"),
        "{cycle}: the audit warns: {stderr}"
    );
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let columns = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    let _ = std::fs::remove_dir_all(&out);
    Run {
        summary,
        columns,
        rows,
    }
}

/// The shipped trace: (time s, speed m/s) rows.
fn trace(cycle: &str) -> Vec<(f64, f64)> {
    let path: PathBuf = root().join(format!("models/cycles/{cycle}.csv"));
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("time,speed [m/s]"));
    lines
        .map(|l| {
            let (t, v) = l.split_once(',').unwrap();
            (t.parse().unwrap(), v.parse().unwrap())
        })
        .collect()
}

/// Trapezoids of f(t) over the results' samples (an event instant's two rows add nothing);
/// the runs record every 10 ms (`dt_out`), where the trapezoids' error is about 1e-5 of
/// a cycle's energy (1e-3 on the netlist's default 0.1 s grid: it falls as the grid's square).
fn integral(t: &[f64], f: impl Fn(usize) -> f64) -> f64 {
    (1..t.len())
        .map(|k| 0.5 * (f(k - 1) + f(k)) * (t[k] - t[k - 1]))
        .sum()
}

/// ∫ max(P, 0) dt of the road load on the exact trace, on a 1 ms grid.
fn exact_traction(net: &Value, tr: &[(f64, f64)]) -> f64 {
    let m = param(net, "vehicleMass");
    let r = param(net, "wheelRadius");
    let j = param(net, "numWheels") * param(net, "wheelInertia");
    let crr = param(net, "rrCoef");
    let cda = param(net, "dragCoef") * param(net, "frontalArea");
    let rho = param(net, "airDensity");
    let g = param(net, "gravity");
    let h = 1e-3;
    let mut e = 0.0;
    for w in tr.windows(2) {
        let ((t0, v0), (t1, v1)) = (w[0], w[1]);
        let a = (v1 - v0) / (t1 - t0);
        let n = ((t1 - t0) / h).round() as usize;
        for k in 0..n {
            let v = v0 + a * (k as f64 + 0.5) * h;
            let rolling = if v > 0.0 { crr * m * g } else { 0.0 };
            let f = (m + j / (r * r)) * a + rolling + 0.5 * rho * cda * v * v;
            e += (f * v).max(0.0) * h;
        }
    }
    e / KWH
}

fn check_cycle(cycle: &str) {
    let net = netlist();
    let tr = trace(cycle);
    let r = run(cycle);
    let s = &r.summary;

    // the run ends with the cycle (`stop_time: "cycle"`), the trace is followed
    let t_end = tr.last().unwrap().0;
    assert_eq!(s["status"], "completed", "{cycle}: {}", s["message"]);
    assert_eq!(s["end_time"].as_f64(), Some(t_end), "{cycle}");
    let err = r.metric("trace_error_max_kmh");
    assert!(err < 2.0, "{cycle}: max trace error {err} km/h");
    assert_eq!(r.metric("trace_time_outside_kmh2"), 0.0, "{cycle}");

    // distance: the trace's own
    let d_trace: f64 = tr
        .windows(2)
        .map(|w| 0.5 * (w[0].1 + w[1].1) * (w[1].0 - w[0].0))
        .sum();
    let d = r.metric("distance_km") * 1000.0;
    assert!(
        (d / d_trace - 1.0).abs() < 0.005,
        "{cycle}: {d} m against {d_trace} m"
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

    // traction: the road load on the trace, plus under 1 % for the driver's corrections
    let exact = exact_traction(&net, &tr);
    let traction = r.metric("traction_energy_kwh");
    assert!(
        traction >= exact && traction < 1.01 * exact,
        "{cycle}: {traction} kWh against the trace's {exact} kWh"
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
