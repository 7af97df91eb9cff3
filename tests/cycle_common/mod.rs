//! Helpers shared by the drive-cycle tests (`tests/cycle_ev.rs`, `tests/cycle_conv.rs`,
//! `tests/cycle_conv_geared.rs`):
//! a cycle netlist's parameters in SI, a run through the CLI as a user runs it, the
//! shipped trace, trapezoid integrals over the results, the traction energy of the exact
//! trace, the engine's efficiency table and the audit of a car whose fuel is its only source.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

#[path = "../common/mod.rs"]
mod common;
use common::temp_dir;

pub const KWH: f64 = 3.6e6;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `models/netlists/NAME.json`, parsed.
pub fn netlist(name: &str) -> Value {
    let path = root().join(format!("models/netlists/{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A model parameter of a cycle netlist in SI: a number, or "NUMBER UNIT" with the few
/// units the files use.
pub fn param(net: &Value, name: &str) -> f64 {
    let v = &net["parameters"][name];
    if let Some(x) = v.as_f64() {
        return x;
    }
    let s = v.as_str().unwrap_or_else(|| panic!("parameter {name}"));
    let (num, unit) = s.split_once(' ').unwrap_or((s, ""));
    let scale = match unit {
        "" | "kg" | "m" | "m^2" | "kg*m^2" | "kg/m^3" | "m/s^2" | "W" | "V" => 1.0,
        "kW" => 1e3,
        "MJ" | "MJ/kg" => 1e6,
        "kWh" => 3.6e6,
        "kg/L" => 1e3,
        other => panic!("unit {other} of {name}"),
    };
    num.parse::<f64>().unwrap() * scale
}

/// A finished run: its summary, its results and what it wrote on stderr.
pub struct Run {
    pub summary: Value,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<f64>>,
    pub stderr: String,
}

impl Run {
    pub fn col(&self, name: &str) -> Vec<f64> {
        let i = self
            .columns
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no column {name}"));
        self.rows.iter().map(|r| r[i]).collect()
    }
    pub fn metric(&self, name: &str) -> f64 {
        self.summary["metrics"][name].as_f64().unwrap_or(f64::NAN)
    }
}

/// `drivelink run models/netlists/NAME.json --set cycle=CYCLE`, recorded every 10 ms.
pub fn run(name: &str, cycle: &str) -> Run {
    let out = temp_dir(&format!("{name}_{cycle}"));
    let o = Command::new(env!("CARGO_BIN_EXE_drivelink"))
        .arg("run")
        .arg(root().join(format!("models/netlists/{name}.json")))
        .args(["--set", &format!("cycle={cycle}"), "--set", "dt_out=10 ms"])
        .args(["--no-plots", "--no-report", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{name} {cycle}: {stderr}");
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let columns = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    Run {
        summary,
        columns,
        rows,
        stderr,
    }
}

/// The shipped trace: (time s, speed m/s) rows.
pub fn trace(cycle: &str) -> Vec<(f64, f64)> {
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

/// The trace's distance (trapezoids of the shipped CSV), m.
pub fn trace_distance(tr: &[(f64, f64)]) -> f64 {
    tr.windows(2)
        .map(|w| 0.5 * (w[0].1 + w[1].1) * (w[1].0 - w[0].0))
        .sum()
}

/// Trapezoids of f(t) over the results' samples (an event instant's two rows add nothing);
/// the runs record every 10 ms (`dt_out`), where the trapezoids' error is about 1e-5 of
/// a cycle's energy (1e-3 on the netlists' default 0.1 s grid: it falls as the grid's square).
pub fn integral(t: &[f64], f: impl Fn(usize) -> f64) -> f64 {
    (1..t.len())
        .map(|k| 0.5 * (f(k - 1) + f(k)) * (t[k] - t[k - 1]))
        .sum()
}

/// ∫ max(P, 0) dt (kWh) of the road load on the exact trace, on a 1 ms grid, with the
/// netlist's vehicle parameters.
pub fn exact_traction(net: &Value, tr: &[(f64, f64)]) -> f64 {
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

/// The netlist engine's efficiency table `(fractions, etas)`.
pub fn eta_table(net: &Value) -> (Vec<f64>, Vec<f64>) {
    let engine = net["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "engine")
        .unwrap();
    let nums = |k: &str| -> Vec<f64> {
        engine["params"]["efficiency"][k]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    (nums("power_fraction"), nums("eta"))
}

/// Linear interpolation of `(xs, ys)` at `x`, the end values held.
pub fn interp(xs: &[f64], ys: &[f64], x: f64) -> f64 {
    if x <= xs[0] {
        return ys[0];
    }
    for k in 1..xs.len() {
        if x <= xs[k] {
            let s = (x - xs[k - 1]) / (xs[k] - xs[k - 1]);
            return ys[k - 1] + s * (ys[k] - ys[k - 1]);
        }
    }
    ys[ys.len() - 1]
}

/// The audit: the fuel is the only source, nothing is created, the engine loses the fuel
/// energy less its shaft work, and the run printed no audit warning.
pub fn check_audit(cycle: &str, net: &Value, r: &Run, fuel_g: f64) {
    assert!(
        !r.stderr.contains("energy audit"),
        "{cycle}: the audit warns: {}",
        r.stderr
    );
    let e = &r.summary["energy"];
    assert!(
        e["relative_residual"].as_f64().unwrap().abs() < 1e-6,
        "{cycle}: {e}"
    );
    let sources = e["sources"].as_object().unwrap();
    assert_eq!(sources.keys().collect::<Vec<_>>(), ["engine"], "{cycle}");
    let fuel_energy = fuel_g * 1e-3 * param(net, "fuelLhv");
    let supplied = sources["engine"].as_f64().unwrap();
    assert!(
        (supplied / fuel_energy - 1.0).abs() < 1e-6,
        "{cycle}: audit {supplied} J, fuel {fuel_energy} J"
    );
    let losses = e["losses"].as_object().unwrap();
    for (name, loss) in losses {
        assert!(loss.as_f64().unwrap() >= 0.0, "{cycle}: {name} {loss}");
    }
    let t = r.col("time");
    let p = r.col("engine.power");
    let shaft = integral(&t, |k| p[k]);
    let loss = losses["engine.loss"].as_f64().unwrap();
    assert!(
        ((supplied - loss) / shaft - 1.0).abs() < 1e-4,
        "{cycle}: fuel − loss {} J, ∫ shaft power {shaft} J",
        supplied - loss
    );
}
