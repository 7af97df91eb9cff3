//! `Abs`: anti-lock brake modulator (Vehicle Physics Pro ABS settings) as a discrete-time
//! controller.
//!
//! Ports: `demand[in]` (requested brake torque, N·m), `slip[in]` (tire slip velocity, m/s,
//! e.g. `Tire.slip`), `peak_slip[in]` (the slip of the controlled tire's peak grip, m/s:
//! connect `Tire.peak_slip`) -> `torque[out]` = `demand·ratio`. Variables: `ratio` (held
//! pressure ratio), `active` (1 while `ratio < 1`).
//!
//! At every cycle instant `t_k = k·cycle_time` (a time event; `k as f64 * cycle_time`) the
//! controller samples `s = |slip|` (and the peak slip) and sets the valve ratio, held until
//! the next cycle:
//!
//! ```text
//! trigger peak_slip_offset: s_min = peak_slip + min_slip_offset, s_max = peak_slip + max_slip_offset
//! trigger custom_slip:      s_min = min_slip,                    s_max = max_slip
//! x = (s − s_min)/(s_max − s_min)
//! simple:          ratio = min_pressure_ratio if s > s_min else 1
//! multi_position:  ratio = 1 if s <= s_min; min_pressure_ratio if s >= s_max; between them
//!                  1 − (k/N)·(1 − min_pressure_ratio), k = clamp(ceil(x·(N − 1)), 1, N − 1),
//!                  N = valve_positions: the band steps through the first N − 1 relief
//!                  positions and the full relief comes only beyond s_max (the seed's
//!                  "applying minPressureRatio beyond maxSlip")
//! continuous:      ratio = 1 − clamp(x, 0, 1)·(1 − min_pressure_ratio)
//! ```
//!
//! # Where the peak slip comes from
//!
//! With `trigger: peak_slip_offset` the offsets are relative to the peak slip "as defined in
//! the Tire Friction" (the seed), i.e. the `extremum_slip` of the tire the ABS controls. The
//! `peak_slip` input takes it from that tire (`Tire.peak_slip`, `WheelCollider.peak_slip`),
//! so changing the tire moves the trigger with it. Without a connection, an explicit
//! `peak_slip` parameter is the input's value; with neither, compiling the model fails with
//! the typed error `input '<abs>.peak_slip' has no driver` naming the block (there is no
//! silent default). With `trigger: custom_slip` the input is not needed and is ignored.
//!
//! # Idle while no brake is demanded
//! A modulator has nothing to do while the driver does not brake: while the demand is at
//! most [`DEMAND_ON`] (1 µN·m) the controller is idle, with the valve open (`ratio` 1,
//! `active` 0) and no cycle events. A demand rising above it is a located state event
//! (guard `DEMAND_ON − demand`) that wakes the controller; the valve stays open until the
//! next cycle instant `k·cycle_time`, and from then on it samples every cycle. A cycle
//! instant that finds the demand back at or below `DEMAND_ON` makes it idle again. (Before,
//! it sampled all the time: a car launching with spinning wheels showed an "active" ABS
//! without braking, and a 20 s run carried 2,000 cycle events for 5 s of braking.)
//!
//! Disabled (`enabled = false`) the torque is the demand. The demand passes through (it is
//! feedthrough), the slips only act at the cycle instants (no feedthrough), so a tire ->
//! ABS -> brake loop has no algebraic loop and the modulator cycles at its own rate instead
//! of chattering on the slip threshold; the number of ABS events is at most one per cycle.
//! The slip is taken as a magnitude, so the ABS works braking forwards and backwards.

use drivelink_core::{
    Block, BlockDecl, Cx, EventCx, ParamDefault, ParamError, ParamKind, ParamSpec, Params,
    PortDecl, VarDecl, VarSource,
};
use serde_json::json;

use super::finite;
use crate::signal::{next_sample_hit, FirstCall};

/// Demand (N·m) above which an idle controller wakes up.
pub const DEMAND_ON: f64 = 1e-6;

/// ABS operation modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AbsMode {
    Simple,
    MultiPosition,
    Continuous,
}

/// The ABS controller's parameters (names and defaults of the Vehicle Physics brakes seed).
pub(crate) fn specs() -> Vec<ParamSpec> {
    vec![
        ParamSpec::with("enabled", ParamKind::Bool, ParamDefault::Value(json!(false)), "whether the ABS modulates the brake torque"),
        ParamSpec::with("mode", ParamKind::Choice(&["simple", "multi_position", "continuous"]), ParamDefault::Value(json!("simple")), "relief valve operation mode"),
        ParamSpec::with("trigger", ParamKind::Choice(&["peak_slip_offset", "custom_slip"]), ParamDefault::Value(json!("peak_slip_offset")), "how the slip band is given"),
        ParamSpec::number("min_slip_offset", "m/s", 0.3, "peak_slip_offset: ABS triggers beyond peak_slip + this"),
        ParamSpec::number("max_slip_offset", "m/s", 1.5, "peak_slip_offset: maximum relief beyond peak_slip + this"),
        ParamSpec::number("min_slip", "m/s", 0.5, "custom_slip: ABS triggers beyond this slip (>= 0)"),
        ParamSpec::number("max_slip", "m/s", 5.0, "custom_slip: maximum relief beyond this slip (> min_slip for multi_position/continuous)"),
        ParamSpec::number("min_pressure_ratio", "1", 0.25, "pressure ratio with the ABS in full effect, in [0, 1]"),
        ParamSpec::number("valve_positions", "1", 2.0, "multi_position: number of valve ratios, integer in [2, 8]"),
        ParamSpec::optional("peak_slip", ParamKind::Number { unit: "m/s" }, "peak_slip_offset: the tire's peak slip (its extremum_slip, >= 0) used when the peak_slip input is not connected; prefer connecting Tire.peak_slip"),
        ParamSpec::number("cycle_time", "s", 0.01, "controller cycle (sample) time (> 0)"),
    ]
}

/// Build the ABS controller from resolved parameters.
pub(crate) fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let enabled = p.bool("enabled")?;
    let mode = match p.text("mode")? {
        "simple" => AbsMode::Simple,
        "multi_position" => AbsMode::MultiPosition,
        "continuous" => AbsMode::Continuous,
        o => {
            return Err(p.invalid(
                "mode",
                format!("unknown mode '{o}' (simple, multi_position, continuous)"),
            ))
        }
    };
    let trigger = match p.text("trigger")? {
        "peak_slip_offset" => {
            let peak = match p.opt_num("peak_slip")? {
                Some(_) => {
                    let v = finite(p, "peak_slip")?;
                    if v < 0.0 {
                        return Err(p.invalid("peak_slip", format!("must be >= 0, got {v}")));
                    }
                    Some(v)
                }
                None => None,
            };
            let (lo, hi) = (finite(p, "min_slip_offset")?, finite(p, "max_slip_offset")?);
            if let Some(pk) = peak {
                if pk + lo < 0.0 {
                    return Err(p.invalid(
                        "min_slip_offset",
                        format!("gives a negative trigger slip {} m/s", pk + lo),
                    ));
                }
            }
            if mode != AbsMode::Simple && !(hi > lo) {
                return Err(p.invalid("max_slip_offset", format!("the maximum-relief offset ({hi} m/s) must be above the trigger offset ({lo} m/s)")));
            }
            Trigger::PeakOffset { lo, hi, peak }
        }
        "custom_slip" => {
            let (lo, hi) = (finite(p, "min_slip")?, finite(p, "max_slip")?);
            if lo < 0.0 {
                return Err(p.invalid(
                    "min_slip",
                    format!("gives a negative trigger slip {lo} m/s"),
                ));
            }
            if mode != AbsMode::Simple && !(hi > lo) {
                return Err(p.invalid("max_slip", format!("the maximum-relief slip ({hi} m/s) must be above the trigger slip ({lo} m/s)")));
            }
            Trigger::Custom { lo, hi }
        }
        o => {
            return Err(p.invalid(
                "trigger",
                format!("unknown trigger '{o}' (peak_slip_offset, custom_slip)"),
            ))
        }
    };
    let min_ratio = finite(p, "min_pressure_ratio")?;
    if !(0.0..=1.0).contains(&min_ratio) {
        return Err(p.invalid(
            "min_pressure_ratio",
            format!("must be in [0, 1], got {min_ratio}"),
        ));
    }
    let vp = finite(p, "valve_positions")?;
    if vp.fract() != 0.0 || !(2.0..=8.0).contains(&vp) {
        return Err(p.invalid(
            "valve_positions",
            format!("must be an integer in [2, 8], got {vp}"),
        ));
    }
    let ts = p.positive("cycle_time")?;
    if !ts.is_finite() {
        return Err(p.invalid("cycle_time", "must be finite"));
    }
    Ok(Box::new(Abs {
        enabled,
        mode,
        trigger,
        min_ratio,
        positions: vp,
        ts,
        ratio: 1.0,
        hit_t: f64::NAN,
        idle: true,
        first: FirstCall::armed(),
    }))
}

/// How the trigger slip band is given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Trigger {
    /// Offsets from the tire's peak slip (from the `peak_slip` input; `peak` is the
    /// explicit parameter, the input's value when it is not connected).
    PeakOffset { lo: f64, hi: f64, peak: Option<f64> },
    /// Absolute slips.
    Custom { lo: f64, hi: f64 },
}

/// The ABS block.
#[derive(Debug, Clone)]
pub struct Abs {
    enabled: bool,
    mode: AbsMode,
    trigger: Trigger,
    min_ratio: f64,
    positions: f64,
    ts: f64,
    ratio: f64,
    hit_t: f64,
    /// No brake demanded: valve open, no cycle events (see the module docs).
    idle: bool,
    first: FirstCall,
}

impl Abs {
    /// The trigger band `(s_min, s_max)` for the sampled peak slip `peak` (m/s).
    pub fn band(&self, peak: f64) -> (f64, f64) {
        match self.trigger {
            Trigger::PeakOffset { lo, hi, .. } => (peak + lo, peak + hi),
            Trigger::Custom { lo, hi } => (lo, hi),
        }
    }
    /// The valve ratio for a sampled slip and peak slip.
    pub fn ratio_for(&self, slip: f64, peak: f64) -> f64 {
        if !self.enabled || slip.is_nan() {
            return 1.0;
        }
        let s = slip.abs();
        let (s_min, s_max) = self.band(peak);
        let span = s_max - s_min;
        match self.mode {
            AbsMode::Simple => {
                if s > s_min {
                    self.min_ratio
                } else {
                    1.0
                }
            }
            AbsMode::MultiPosition => {
                if s <= s_min {
                    1.0
                } else if s >= s_max {
                    self.min_ratio
                } else {
                    // Inside the band the valve steps through its first N − 1 relief
                    // positions; the last one (min_pressure_ratio) only beyond s_max.
                    let steps = self.positions - 1.0;
                    let k = ((s - s_min) / span * steps).ceil().clamp(1.0, steps);
                    1.0 - k / self.positions * (1.0 - self.min_ratio)
                }
            }
            AbsMode::Continuous => {
                let x = ((s - s_min) / span).clamp(0.0, 1.0);
                1.0 - x * (1.0 - self.min_ratio)
            }
        }
    }
}

impl Block for Abs {
    drivelink_core::run_state!(ratio, hit_t, idle, first);
    fn declare(&self) -> BlockDecl {
        let peak = match self.trigger {
            // No explicit value: the tire must provide it (compile error if unconnected).
            Trigger::PeakOffset { peak: None, .. } => PortDecl::input("peak_slip"),
            Trigger::PeakOffset { peak: Some(v), .. } => PortDecl::optional_input("peak_slip", v),
            // Not used by a custom band.
            Trigger::Custom { .. } => PortDecl::optional_input("peak_slip", 0.0),
        };
        let ports = vec![
            PortDecl::input("demand"),
            PortDecl::input("slip"),
            peak,
            PortDecl::output("torque"),
        ];
        let variables = vec![
            VarDecl::new("ratio", VarSource::Custom(0), "1")
                .doc("brake pressure ratio applied (0..1)")
                .from_state(),
            VarDecl::new("active", VarSource::Custom(1), "1")
                .doc("1 while ABS modulates the brake")
                .from_state(),
        ];
        BlockDecl {
            ports,
            variables,
            time_event_period: self.enabled.then_some((self.ts, "cycle_time")),
            ..BlockDecl::default()
        }
        .guards_named(usize::from(self.enabled), |_i| "wake".into())
        .feedthrough_by(|input| input == 0)
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = cx.u(0) * self.ratio;
    }
    fn next_time_event(&self, t: f64) -> f64 {
        if self.enabled && !self.idle {
            next_sample_hit(t, self.ts)
        } else {
            f64::INFINITY
        }
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        if let Some(g) = g.first_mut() {
            *g = if self.idle { DEMAND_ON - cx.u(0) } else { 1.0 };
        }
    }
    fn time_event(&mut self, cx: &mut EventCx) {
        if self.enabled && !(cx.u(0) > DEMAND_ON) {
            // Nothing demanded at this cycle: idle, valve open.
            self.idle = true;
            self.ratio = 1.0;
            self.hit_t = f64::NAN;
            return;
        }
        self.ratio = self.ratio_for(cx.u(1), cx.u(2));
        self.hit_t = cx.t;
    }
    fn reset(&mut self, _t0: f64) {
        self.ratio = 1.0;
        self.hit_t = f64::NAN;
        self.idle = true;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        if self.first.take() {
            if self.enabled && !(cx.u(0) > DEMAND_ON) {
                self.idle = true;
                self.ratio = 1.0;
                return false;
            }
            self.idle = false;
            self.hit_t = cx.t;
            let r = self.ratio_for(cx.u(1), cx.u(2));
            let changed = r != self.ratio;
            self.ratio = r;
            return changed;
        }
        if self.idle {
            if self.enabled && cx.u(0) > DEMAND_ON {
                // Woken by a demand: the valve stays open until the next cycle instant.
                self.idle = false;
                return true;
            }
            return false;
        }
        if cx.t == self.hit_t {
            // Resample the right-hand slip value at the cycle instant.
            let r = self.ratio_for(cx.u(1), cx.u(2));
            if r != self.ratio {
                self.ratio = r;
                return true;
            }
        }
        false
    }
    fn var(&self, _cx: &Cx, i: usize) -> f64 {
        if i == 0 {
            self.ratio
        } else if self.ratio < 1.0 {
            1.0
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn abs(positions: f64) -> Abs {
        Abs {
            enabled: true,
            mode: AbsMode::MultiPosition,
            trigger: Trigger::Custom { lo: 1.0, hi: 4.0 },
            min_ratio: 0.25,
            positions,
            ts: 0.01,
            ratio: 1.0,
            hit_t: f64::NAN,
            idle: true,
            first: FirstCall::armed(),
        }
    }

    /// The seed: "brake pressure multiplied by discrete ratios from minSlip to maxSlip,
    /// applying minPressureRatio beyond maxSlip". Inside the band the valve never reaches
    /// its full relief (before, the last third of a 3-position band already gave it).
    #[test]
    fn multi_position_reaches_full_relief_only_beyond_max_slip() {
        for n in 2..=8 {
            let a = abs(f64::from(n));
            let step = 0.75 / f64::from(n);
            assert_eq!(a.ratio_for(1.0, 0.0), 1.0, "N {n}: at the trigger slip");
            assert_eq!(a.ratio_for(4.0, 0.0), 0.25, "N {n}: at max slip");
            assert_eq!(a.ratio_for(-9.0, 0.0), 0.25, "N {n}: beyond max slip");
            let mut seen = Vec::new();
            for i in 1..300 {
                let s = 1.0 + 3.0 * f64::from(i) / 300.0;
                let r = a.ratio_for(s, 0.0);
                assert!(
                    r > 0.25 + 1e-12,
                    "N {n}: full relief at slip {s} inside the band"
                );
                // One of the first N − 1 relief positions 1 − k·(1 − min)/N.
                let k = (1.0 - r) / step;
                assert!((k - k.round()).abs() < 1e-9 && (1.0..f64::from(n)).contains(&k.round()));
                if !seen.contains(&(k.round() as i64)) {
                    seen.push(k.round() as i64);
                }
            }
            assert_eq!(
                seen.len(),
                n as usize - 1,
                "N {n}: every in-band position used"
            );
        }
    }
}
