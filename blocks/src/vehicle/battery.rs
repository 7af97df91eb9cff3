//! `Battery`: a traction battery at signal level, an open-circuit voltage behind an internal
//! resistance (or a fixed efficiency), its state of charge integrated from the current.
//!
//! `p[in]` (W, the power asked at the terminals, + discharging) -> `v[out]` (terminal
//! voltage, V), `i[out]` (A, + discharging), `loss[out]` (W). The state of charge is the
//! variable `soc`, a state: wired as a signal (`["battery.soc", "ems.soc"]`) it is known
//! before any output of the instant, so a strategy that sets the battery's power may read
//! it without an algebraic loop (an output port would feed through from `p`).
//!
//! Size and voltage: `capacity` (charge, SI A·s: write `"60 A*h"`) with `ocv` (V, a number
//! or a table `[[soc, V], ...]`, linear, held outside), or `energy` (SI J: write
//! `"52 kWh"`) with `v_nominal`: capacity = energy / v_nominal. `ocv` is required (it is
//! the battery's voltage in both forms); `v_nominal` defaults to the ocv at soc 0.5.
//! Without `capacity` or `energy` the battery never empties (an ideal source: soc stays at
//! soc0).
//!
//! Losses, with the delivered power `p` (after the limits below):
//! - `r_internal = R > 0`: the terminal power is `p = v·i` with `v = ocv − R·i`, so
//!   `i = (ocv − sqrt(ocv² − 4·R·p)) / (2·R)` (the root on the battery's normal branch,
//!   evaluated as `2·p / (ocv + sqrt(ocv² − 4·R·p))`, without cancellation at small
//!   power); `loss = R·i²`. The terminals cannot deliver more than `ocv²/(4·R)` (at
//!   `i = ocv/(2R)`, `v = ocv/2`): the power asked beyond it is clipped.
//! - `efficiency = η` (one way): discharging draws `p/η` from the chemistry, charging stores
//!   `p·η`; `i` is that chemical power over `ocv`, `v = ocv`, `loss` the difference.
//! - neither: lossless (`i = p/ocv`).
//!
//! In every form `soc' = −i/capacity` (`capacity` in A·s: `−i/(3600·capacity[A·h])`), so
//! the charge is conserved exactly: `soc(t) = soc0 − ∫i dt / capacity`.
//!
//! Limits are located modes with logged events (`EventTag::ZeroCrossing`, the detail
//! starting with `limit`, `empty` or `full`); the run goes on:
//! - discharge power above `min(p_discharge_max, ocv²/(4R))` is clipped to it, charge power
//!   beyond `p_charge_max` (a magnitude) clipped to `−p_charge_max`;
//! - `soc` reaching `soc_min` while discharging cuts the discharge power to 0 (`empty`),
//!   until charging is asked; `soc` reaching `soc_max` while charging cuts the charge
//!   (`full`) until discharging is asked.
//!
//! Variables: `ocv` (V), `power` (W, delivered after the limits), `limit` (1 discharge
//! clipped, −1 charge clipped, 0 free), `state` (−1 empty, 1 full, 0 normal),
//! `energy_terminal` (J, ∫power dt) and `energy_chemical` (J, `energy_terminal` plus the
//! integrated loss), both integrated as states from 0. The energy audit reads these two:
//! the chemical energy is a source, the difference the battery's loss (see
//! `drivelink_core::model::energy`).

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, EventCx, EventTag, ParamError, ParamKind,
    ParamSpec, ParamValue, Params, PortDecl, Registry, VarDecl, VarSource,
};

use super::{finite, in_range};
use crate::util::Table1D;

pub(crate) fn register(r: &mut Registry) {
    r.register(battery_type());
}

/// The `Battery` block type: its parameters and how it is built.
fn battery_type() -> BlockType {
    let opt = |name, unit, doc| ParamSpec::optional(name, ParamKind::Number { unit }, doc);
    BlockType {
        name: "Battery",
        category: "vehicle",
        doc: "Traction battery: open-circuit voltage ocv(soc) behind r_internal (i = (ocv − sqrt(ocv² − 4·R·p))/(2R), loss R·i²) or a one-way efficiency; soc' = −i/capacity (capacity, or energy/v_nominal). p (+ discharging) is clipped to p_discharge_max, ocv²/(4R) and −p_charge_max (located modes, events `limit`); soc_min reached cuts the discharge (`empty`), soc_max the charge (`full`). Variables soc (a state: connectable as a signal without a loop), ocv, power, limit, state.",
        ports_doc: "p[in] -> v[out], i[out], loss[out]",
        params: vec![
            ParamSpec::with("ocv", ParamKind::NumberOrTable { unit: "V" }, drivelink_core::ParamDefault::Required, "open-circuit voltage, a number or a table [[soc, V], ...] (> 0)"),
            opt("capacity", "A*s", "charge capacity (SI A·s; write \"60 A*h\"); or give energy"),
            opt("energy", "J", "stored energy (SI J; write \"52 kWh\"), with v_nominal: capacity = energy/v_nominal"),
            opt("v_nominal", "V", "nominal voltage converting energy to capacity (default: ocv at soc 0.5)"),
            opt("r_internal", "V/A", "internal resistance (> 0); or give efficiency"),
            opt("efficiency", "1", "one-way efficiency in (0, 1] instead of a resistance"),
            ParamSpec::required("soc0", "1", "initial state of charge in [0, 1]"),
            ParamSpec::number("soc_min", "1", 0.0, "state of charge at which discharging stops"),
            ParamSpec::number("soc_max", "1", 1.0, "state of charge at which charging stops"),
            opt("p_discharge_max", "W", "maximum discharge power at the terminals (> 0; default unlimited)"),
            opt("p_charge_max", "W", "maximum charge power at the terminals (a magnitude, > 0; default unlimited)"),
        ],
        build: BlockBuild::Primitive(build),
    }
}

/// The open-circuit voltage table over soc.
fn ocv_table(p: &Params) -> Result<Table1D, ParamError> {
    let (x, y) = match p.values.get("ocv") {
        Some(ParamValue::Number(v)) => (vec![0.0], vec![*v]),
        Some(ParamValue::Table(_)) => p.xy_table("ocv")?,
        _ => return Err(p.invalid("ocv", "expected a number or a table [[soc, V], ...]")),
    };
    if let Some(v) = y.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
        return Err(p.invalid("ocv", format!("voltages must be finite and > 0, got {v}")));
    }
    Ok(Table1D::new(x, y, false))
}

/// A positive power limit, infinite when not given.
fn power_limit(p: &Params, name: &str) -> Result<f64, ParamError> {
    let Some(v) = p.opt_num(name)? else {
        return Ok(f64::INFINITY);
    };
    if !(v > 0.0) {
        return Err(p.invalid(name, format!("must be > 0, got {v}")));
    }
    Ok(v)
}

/// Capacity (A·s) from `capacity` or `energy`/`v_nominal`; infinite when neither is given.
fn capacity(p: &Params, ocv: &Table1D) -> Result<f64, ParamError> {
    match (p.opt_num("capacity")?, p.opt_num("energy")?) {
        (Some(_), Some(_)) => Err(p.invalid("energy", "give capacity or energy, not both")),
        (Some(_), None) => {
            if p.has("v_nominal") {
                return Err(p.invalid("v_nominal", "only converts energy; capacity is given"));
            }
            p.positive("capacity")
        }
        (None, Some(_)) => {
            let e = p.positive("energy")?;
            let v = match p.opt_num("v_nominal")? {
                Some(_) => p.positive("v_nominal")?,
                None => ocv.eval(0.5),
            };
            Ok(e / v)
        }
        (None, None) => Ok(f64::INFINITY),
    }
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let ocv = ocv_table(p)?;
    let cap = capacity(p, &ocv)?;
    let (r, eff) = match (p.opt_num("r_internal")?, p.opt_num("efficiency")?) {
        (Some(_), Some(_)) => {
            return Err(p.invalid("efficiency", "give r_internal or efficiency, not both"))
        }
        (Some(_), None) => (p.positive("r_internal")?, 1.0),
        (None, Some(_)) => {
            let e = finite(p, "efficiency")?;
            if !(e > 0.0 && e <= 1.0) {
                return Err(p.invalid("efficiency", format!("must be in (0, 1], got {e}")));
            }
            (0.0, e)
        }
        (None, None) => (0.0, 1.0),
    };
    let soc_min = in_range(p, "soc_min", 0.0, 1.0)?;
    let soc_max = in_range(p, "soc_max", 0.0, 1.0)?;
    if soc_max <= soc_min {
        return Err(p.invalid(
            "soc_max",
            format!("must be > soc_min = {soc_min}, got {soc_max}"),
        ));
    }
    Ok(Box::new(Battery {
        ocv,
        cap,
        r,
        eff,
        soc0: in_range(p, "soc0", 0.0, 1.0)?,
        soc_min,
        soc_max,
        pd: power_limit(p, "p_discharge_max")?,
        pc: power_limit(p, "p_charge_max")?,
        limit: Limit::Free,
        level: Level::Normal,
        first: true,
    }))
}

/// The power limit in force (a mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    Free,
    Discharge,
    Charge,
}

/// The state-of-charge limit in force (a mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Normal,
    Empty,
    Full,
}

/// The battery's operating point at one instant.
#[derive(Debug, Clone, Copy)]
struct Op {
    ocv: f64,
    /// Delivered terminal power after the limits, W.
    p: f64,
    i: f64,
    v: f64,
    loss: f64,
}

/// The battery block: see the module docs.
#[derive(Debug, Clone)]
pub struct Battery {
    ocv: Table1D,
    /// Capacity, A·s (infinite: never empties).
    cap: f64,
    r: f64,
    eff: f64,
    soc0: f64,
    soc_min: f64,
    soc_max: f64,
    pd: f64,
    pc: f64,
    limit: Limit,
    level: Level,
    first: bool,
}

impl Battery {
    /// The largest discharge power at this ocv: `min(p_discharge_max, ocv²/(4R))`.
    fn upper(&self, ocv: f64) -> f64 {
        if self.r > 0.0 {
            self.pd.min(ocv * ocv / (4.0 * self.r))
        } else {
            self.pd
        }
    }
    /// The operating point for `soc` and the asked power `p` in the current modes.
    fn op(&self, soc: f64, p: f64) -> Op {
        let ocv = self.ocv.eval(soc);
        let p = match self.limit {
            Limit::Free => p,
            Limit::Discharge => self.upper(ocv),
            Limit::Charge => -self.pc,
        };
        let p = match self.level {
            Level::Normal => p,
            Level::Empty => p.min(0.0),
            Level::Full => p.max(0.0),
        };
        if self.r > 0.0 {
            // max(0): only between a limit's crossing and its location.
            let root = (ocv * ocv - 4.0 * self.r * p).max(0.0).sqrt();
            let i = 2.0 * p / (ocv + root);
            Op {
                ocv,
                p,
                i,
                v: ocv - self.r * i,
                loss: self.r * i * i,
            }
        } else {
            let chem = if p >= 0.0 { p / self.eff } else { p * self.eff };
            Op {
                ocv,
                p,
                i: chem / ocv,
                v: ocv,
                loss: chem - p,
            }
        }
    }
    fn limit_for(&self, p: f64, ocv: f64) -> Limit {
        if p > self.upper(ocv) {
            Limit::Discharge
        } else if p < -self.pc {
            Limit::Charge
        } else {
            Limit::Free
        }
    }
    fn limit_valid(&self, l: Limit, p: f64, ocv: f64) -> bool {
        match l {
            Limit::Free => (-self.pc..=self.upper(ocv)).contains(&p),
            Limit::Discharge => p >= self.upper(ocv),
            Limit::Charge => p <= -self.pc,
        }
    }
    fn level_for(&self, soc: f64, p: f64) -> Level {
        if soc <= self.soc_min && p > 0.0 {
            Level::Empty
        } else if soc >= self.soc_max && p < 0.0 {
            Level::Full
        } else {
            Level::Normal
        }
    }
    fn level_valid(&self, l: Level, soc: f64, p: f64) -> bool {
        match l {
            Level::Normal => self.level_for(soc, p) == Level::Normal,
            Level::Empty => p >= 0.0,
            Level::Full => p <= 0.0,
        }
    }
    /// Log the change of the power limit.
    fn log_limit(&self, cx: &mut EventCx, new: Limit, p: f64, ocv: f64) {
        let msg = match new {
            Limit::Discharge if self.r > 0.0 && self.upper(ocv) < self.pd => format!(
                "limit: discharge power {p} W clipped to ocv²/(4·r_internal) = {} W",
                self.upper(ocv)
            ),
            Limit::Discharge => format!(
                "limit: discharge power {p} W clipped to p_discharge_max = {} W",
                self.pd
            ),
            Limit::Charge => format!(
                "limit: charge power {} W clipped to p_charge_max = {} W",
                -p, self.pc
            ),
            Limit::Free => format!("limit released at {p} W"),
        };
        cx.log(EventTag::ZeroCrossing, msg);
    }
    fn log_level(&self, cx: &mut EventCx, new: Level, soc: f64) {
        let msg = match new {
            Level::Empty => format!(
                "empty: soc {soc} reached soc_min = {}, discharge cut",
                self.soc_min
            ),
            Level::Full => format!(
                "full: soc {soc} reached soc_max = {}, charge cut",
                self.soc_max
            ),
            Level::Normal if self.level == Level::Empty => "empty left: charging".to_string(),
            Level::Normal => "full left: discharging".to_string(),
        };
        cx.log(EventTag::ZeroCrossing, msg);
    }
}

impl Block for Battery {
    drivelink_core::run_state!(limit, level, first);
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("p").with_unit("W"),
            PortDecl::output("v").with_unit("V"),
            PortDecl::output("i").with_unit("A"),
            PortDecl::output("loss").with_unit("W"),
        ];
        let variables = vec![
            VarDecl::new("soc", VarSource::Custom(6), "1")
                .doc("state of charge (a state: wired as a signal it closes no loop, so a strategy may read it while driving the battery's power)")
                .from_state(),
            VarDecl::new("ocv", VarSource::Custom(0), "V").doc("open-circuit voltage"),
            VarDecl::new("power", VarSource::Custom(1), "W")
                .doc("terminal power delivered after the limits (+ discharging)"),
            VarDecl::new("limit", VarSource::Custom(2), "1")
                .doc("1 discharge power clipped, −1 charge power clipped, 0 free"),
            VarDecl::new("state", VarSource::Custom(3), "1")
                .doc("−1 empty (discharge cut), 1 full (charge cut), 0 normal"),
            VarDecl::new("energy_terminal", VarSource::Custom(4), "J")
                .doc("energy delivered at the terminals since the start, ∫power dt (+ discharging)")
                .from_state(),
            VarDecl::new("energy_chemical", VarSource::Custom(5), "J")
                .doc("chemical energy drawn since the start: energy_terminal plus the integrated loss")
                .from_state(),
        ];
        BlockDecl {
            ports,
            states: 3,
            variables,
            ..BlockDecl::default()
        }
        .with_guards(&["discharge_limit", "charge_limit", "soc_min", "soc_max"])
    }
    fn initial_states(&self, x: &mut [f64]) {
        x[0] = self.soc0;
        x[1] = 0.0;
        x[2] = 0.0;
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let o = self.op(cx.x[0], cx.u(0));
        y[0] = o.v;
        y[1] = o.i;
        y[2] = o.loss;
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        let o = self.op(cx.x[0], cx.u(0));
        dx[0] = -o.i / self.cap;
        dx[1] = o.p;
        dx[2] = o.loss;
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let (soc, p) = (cx.x[0], cx.u(0));
        let up = self.upper(self.ocv.eval(soc));
        let finite_or = |v: f64| if v.is_finite() { v } else { 1.0 };
        g[0] = finite_or(match self.limit {
            Limit::Free => up - p,
            Limit::Discharge => p - up,
            Limit::Charge => 1.0,
        });
        g[1] = finite_or(match self.limit {
            Limit::Free => p + self.pc,
            Limit::Charge => -self.pc - p,
            Limit::Discharge => 1.0,
        });
        (g[2], g[3]) = match self.level {
            Level::Normal => (soc - self.soc_min, self.soc_max - soc),
            Level::Empty => (p, 1.0),
            Level::Full => (1.0, -p),
        };
    }
    fn reset(&mut self, _t0: f64) {
        self.limit = Limit::Free;
        self.level = Level::Normal;
        self.first = true;
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = std::mem::take(&mut self.first);
        let (soc, p) = (cx.x[0], cx.u(0));
        if p.is_nan() {
            return false;
        }
        let ocv = self.ocv.eval(soc);
        let mut changed = false;
        if !self.limit_valid(self.limit, p, ocv) {
            let new = self.limit_for(p, ocv);
            if !fresh {
                self.log_limit(cx, new, p, ocv);
            }
            self.limit = new;
            changed = true;
        }
        if !self.level_valid(self.level, soc, p) {
            let new = self.level_for(soc, p);
            if !fresh {
                self.log_level(cx, new, soc);
            }
            self.level = new;
            changed = true;
        }
        changed
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        match i {
            4 => return cx.x[1],
            5 => return cx.x[1] + cx.x[2],
            6 => return cx.x[0],
            _ => {}
        }
        let o = self.op(cx.x[0], cx.u(0));
        match i {
            0 => o.ocv,
            1 => o.p,
            2 => match self.limit {
                Limit::Free => 0.0,
                Limit::Discharge => 1.0,
                Limit::Charge => -1.0,
            },
            _ => match self.level {
                Level::Normal => 0.0,
                Level::Empty => -1.0,
                Level::Full => 1.0,
            },
        }
    }
}
