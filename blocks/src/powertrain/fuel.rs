//! The `Engine`'s fuel law: how much fuel an engine burns at an operating point.
//!
//! Three forms, one per parameter (they exclude each other):
//! - `efficiency` = `{"power_fraction": [...], "eta": [...]}`, FASTSim's form: the output
//!   power `P_out = max(tau·ω, 0) + aux_power` (the shaft power, never negative: a motored
//!   engine burns no fuel for it, plus the accessories the engine carries), its fraction
//!   `P_out/max_power`, and the fuel power `P_out / eta(P_out/max_power)` (linear in the
//!   fraction, the end values held outside);
//! - `fuel_map` = `{"speed": [...], "torque": [...], "rate": [[...]]}`: the fuel rate in g/s
//!   over crank speed (rad/s) × shaft torque (N·m), bilinear, held outside;
//! - `fuel_map` = `{"speed": [...], "torque": [...], "bsfc": [[...]]}`: the brake specific
//!   fuel consumption in g/kWh over the same axes: rate = bsfc · max(tau·ω, 0).
//!
//! In every form the fuel power is at least `idle_fuel_power` (W, FASTSim's
//! `pwr_idle_fuel`) while the engine runs, and zero once it has stalled. The fuel rate is
//! the fuel power over `fuel_lhv` (J/kg). The helpers reading FASTSim's efficiency form and
//! a map from a JSON object are shared with `ElectricMachine`.

use drivelink_core::{ParamError, ParamValue, Params};
use serde_json::{Map, Value};

use crate::util::{Table1D, Table2D};

/// A number array `key` of the JSON object `obj` given as parameter `param`.
pub(crate) fn json_numbers(
    p: &Params,
    param: &str,
    obj: &Map<String, Value>,
    key: &str,
) -> Result<Vec<f64>, ParamError> {
    let bad = || p.invalid(param, format!("`{key}` must be an array of numbers"));
    obj.get(key)
        .and_then(Value::as_array)
        .ok_or_else(bad)?
        .iter()
        .map(|v| v.as_f64().ok_or_else(bad))
        .collect()
}

/// Every efficiency of parameter `param` in (0, 1].
pub(crate) fn check_eta(p: &Params, param: &str, etas: &[f64]) -> Result<(), ParamError> {
    match etas.iter().find(|e| !(**e > 0.0 && **e <= 1.0)) {
        Some(e) => Err(p.invalid(param, format!("η must be in (0, 1], got {e}"))),
        None => Ok(()),
    }
}

/// FASTSim's efficiency form `{"power_fraction": [...], "eta": [...]}` of parameter
/// `param`: strictly increasing fractions, as many η, each in (0, 1]; held outside.
pub(crate) fn power_fraction_table(
    p: &Params,
    param: &str,
    obj: &Map<String, Value>,
) -> Result<Table1D, ParamError> {
    let (x, y) = (
        json_numbers(p, param, obj, "power_fraction")?,
        json_numbers(p, param, obj, "eta")?,
    );
    if x.len() != y.len() {
        return Err(p.invalid(
            param,
            format!("power_fraction has {} entries, eta {}", x.len(), y.len()),
        ));
    }
    check_eta(p, param, &y)?;
    let rows: Vec<Vec<f64>> = x.iter().zip(&y).map(|(a, b)| vec![*a, *b]).collect();
    let (x, y) = drivelink_core::params::xy_from_rows(&rows)
        .map_err(|m| p.invalid(param, format!("power_fraction: {m}")))?;
    if let Some(f) = x.iter().find(|f| !(f.is_finite() && **f >= 0.0)) {
        return Err(p.invalid(
            param,
            format!("power fractions must be finite and >= 0, got {f}"),
        ));
    }
    Ok(Table1D::new(x, y, false))
}

/// A map `{"speed": [...], "torque": [...], z_key: [[...], ...]}` of parameter `param`
/// (one row of `z_key` per speed), bilinear and held outside, with its values (row-major).
pub(crate) fn json_map(
    p: &Params,
    param: &str,
    obj: &Map<String, Value>,
    z_key: &str,
) -> Result<(Table2D, Vec<f64>), ParamError> {
    let mut sub = Params {
        block: p.block.clone(),
        type_name: p.type_name.clone(),
        values: Default::default(),
        base_dir: p.base_dir.clone(),
    };
    for axis in ["speed", "torque"] {
        sub.values.insert(
            axis.into(),
            ParamValue::Vector(json_numbers(p, param, obj, axis)?),
        );
    }
    let rows = obj
        .get(z_key)
        .and_then(Value::as_array)
        .ok_or_else(|| p.invalid(param, format!("`{z_key}` must be a table [[...], ...]")))?;
    let mut z = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let row = r
            .as_array()
            .and_then(|r| r.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>());
        z.push(row.ok_or_else(|| {
            p.invalid(
                param,
                format!("`{z_key}` row {i} must be an array of numbers"),
            )
        })?);
    }
    let values = z.concat();
    sub.values.insert(z_key.into(), ParamValue::Table(z));
    let map = Table2D::from_params(&sub, "speed", "torque", z_key, false)
        .map_err(|e| p.invalid(param, format!("`{}` {}", e.param, e.message)))?;
    Ok((map, values))
}

/// The keys of a JSON object, for error messages.
pub(crate) fn keys(o: &Map<String, Value>) -> String {
    o.keys().cloned().collect::<Vec<_>>().join(", ")
}

/// Grams per kilogram.
const G_PER_KG: f64 = 1e3;
/// Joules per kilowatt-hour.
const J_PER_KWH: f64 = 3.6e6;

/// How the fuel power follows from the operating point.
#[derive(Debug, Clone)]
enum Law {
    /// η over the fraction of `max_power`; the base power `max_power` and `aux_power`.
    Efficiency { eta: Table1D, p_max: f64, aux: f64 },
    /// Fuel rate in g/s over speed × torque.
    Rate(Table2D),
    /// BSFC in g/kWh over speed × torque.
    Bsfc(Table2D),
}

/// An engine's fuel law (see the module docs).
#[derive(Debug, Clone)]
pub struct Fuel {
    law: Law,
    /// Lower heating value, J/kg.
    lhv: f64,
    /// The least fuel power while running, W.
    idle: f64,
}

impl Fuel {
    /// The fuel law of an `Engine`'s parameters, `None` without `efficiency` or `fuel_map`.
    /// `p_max` is the engine's `max_power` (the base of the power fraction).
    pub fn from_params(p: &Params, p_max: f64) -> Result<Option<Fuel>, ParamError> {
        let law = match (p.has("efficiency"), p.has("fuel_map")) {
            (true, true) => {
                return Err(p.invalid("fuel_map", "give efficiency or fuel_map, not both"))
            }
            (false, false) => {
                for name in ["aux_power", "idle_fuel_power", "fuel_lhv"] {
                    if p.has(name) {
                        return Err(p.invalid(
                            name,
                            "is only used with a fuel law (efficiency or fuel_map)",
                        ));
                    }
                }
                return Ok(None);
            }
            (true, false) => efficiency_law(p, p_max)?,
            (false, true) => map_law(p)?,
        };
        let lhv = match p.opt_num("fuel_lhv")? {
            Some(v) if v.is_finite() && v > 0.0 => v,
            Some(v) => return Err(p.invalid("fuel_lhv", format!("must be > 0, got {v} J/kg"))),
            None => GASOLINE_LHV,
        };
        let idle = match p.opt_num("idle_fuel_power")? {
            Some(v) if v.is_finite() && v >= 0.0 => v,
            Some(v) => return Err(p.invalid("idle_fuel_power", format!("must be >= 0, got {v} W"))),
            None => 0.0,
        };
        Ok(Some(Fuel { law, lhv, idle }))
    }

    /// The fuel power (W) at crank speed `w` and shaft torque `tau` of a running engine.
    pub fn power(&self, w: f64, tau: f64) -> f64 {
        let shaft = (tau * w).max(0.0);
        let p = match &self.law {
            Law::Efficiency { eta, p_max, aux } => {
                let out = shaft + aux;
                out / eta.eval(out / p_max)
            }
            Law::Rate(m) => m.eval(w, tau).max(0.0) * self.lhv / G_PER_KG,
            Law::Bsfc(m) => m.eval(w, tau).max(0.0) * shaft / J_PER_KWH * self.lhv / G_PER_KG,
        };
        p.max(self.idle)
    }

    /// The fuel rate (g/s) of the fuel power `p_fuel` (W).
    pub fn rate(&self, p_fuel: f64) -> f64 {
        p_fuel / self.lhv * G_PER_KG
    }
}

/// FASTSim's gasoline: `specific_energy_joules_per_kilogram` of its fuel storage, J/kg.
pub const GASOLINE_LHV: f64 = 43.2e6;

/// The `efficiency` form, with `aux_power`.
fn efficiency_law(p: &Params, p_max: f64) -> Result<Law, ParamError> {
    let v = p.json("efficiency")?;
    let eta = match &v {
        Value::Object(o) if o.contains_key("power_fraction") && o.len() == 2 => {
            power_fraction_table(p, "efficiency", o)?
        }
        Value::Object(o) => {
            return Err(p.invalid(
                "efficiency",
                format!(
                    "expected {{power_fraction, eta}} (FASTSim's form), got the keys {}",
                    keys(o)
                ),
            ))
        }
        _ => {
            return Err(p.invalid(
                "efficiency",
                format!("expected {{\"power_fraction\": [...], \"eta\": [...]}}, got {v}"),
            ))
        }
    };
    let aux = match p.opt_num("aux_power")? {
        Some(a) if a.is_finite() && a >= 0.0 => a,
        Some(a) => return Err(p.invalid("aux_power", format!("must be >= 0, got {a} W"))),
        None => 0.0,
    };
    Ok(Law::Efficiency { eta, p_max, aux })
}

/// The `fuel_map` forms (rate in g/s or BSFC in g/kWh).
fn map_law(p: &Params) -> Result<Law, ParamError> {
    if p.has("aux_power") {
        return Err(p.invalid(
            "aux_power",
            "is only used with the efficiency form (a fuel map is over shaft speed and torque)",
        ));
    }
    let v = p.json("fuel_map")?;
    let Value::Object(o) = &v else {
        return Err(p.invalid(
            "fuel_map",
            format!("expected {{speed, torque, rate}} or {{speed, torque, bsfc}}, got {v}"),
        ));
    };
    let kind = match (o.contains_key("rate"), o.contains_key("bsfc")) {
        (true, false) if o.len() == 3 => "rate",
        (false, true) if o.len() == 3 => "bsfc",
        _ => {
            return Err(p.invalid(
                "fuel_map",
                format!(
                    "expected the keys speed, torque and rate (g/s) or bsfc (g/kWh), got {}",
                    keys(o)
                ),
            ))
        }
    };
    let (map, values) = json_map(p, "fuel_map", o, kind)?;
    if let Some(bad) = values.iter().find(|z| !(**z >= 0.0)) {
        let unit = if kind == "rate" { "g/s" } else { "g/kWh" };
        return Err(p.invalid(
            "fuel_map",
            format!("`{kind}` must be >= 0, got {bad} {unit}"),
        ));
    }
    Ok(if kind == "rate" {
        Law::Rate(map)
    } else {
        Law::Bsfc(map)
    })
}
