//! `ShiftSchedule`: the gear choice of an automatic transmission's controller (TCU) from
//! shift lines over the throttle, as the upshift/downshift threshold tables of Simulink's
//! automatic-transmission demo or a vehicle engineer's shift map.
//!
//! Inputs `v` (the speed the map is drawn over: vehicle speed in m/s, or any speed the
//! lines are given in) and `throttle` (0..1); output `gear` (1..=n), held between events.
//! The lines are given in `speed_unit` (m/s, km/h, mph, rad/s or rpm: the v input is SI).
//! Row `k` of `upshift` (k = 1..n−1) is the speed at which gear `k` shifts up to `k + 1`,
//! one entry per `throttle` breakpoint (linear between them, ends held; a row of one entry
//! is a line independent of the throttle); row `k` of `downshift` is the speed at which
//! `k + 1` shifts down to `k` (without `downshift`: the upshift lines × `downshift_ratio`).
//! Every downshift speed must lie below the upshift speed of the same row at every
//! breakpoint (the hysteresis that
//! keeps the choice from chattering): checked when the block is built.
//!
//! In gear `g` the two guards are `up_g(θ) − v` (g < n) and `v − down_{g−1}(θ)` (g > 1):
//! a shift happens at the located instant the speed crosses a line or the throttle moves
//! the line across the speed (a kickdown). At an event the gear goes up while
//! `v >= up_g(θ)` and down while `v <= down_{g−1}(θ)`, so one event may skip gears. After a
//! shift the next one waits `min_time` (a time event ends the wait; the lines are then
//! read again), which keeps a closed loop whose throttle answers the shift from hunting.
//! Every shift is logged (`shift` events) with the speed and throttle.

use drivelink_core::{
    Block, BlockDecl, Cx, EventCx, EventTag, Feedthrough, Outputs, ParamError, Params, PortDecl,
    VarDecl, VarSource,
};

use crate::signal::FirstCall;

/// The shift lines: speed over throttle for each gear change.
#[derive(Debug, Clone)]
struct Lines {
    /// Throttle breakpoints, strictly increasing.
    throttle: Vec<f64>,
    /// `speeds[k][j]`: the line of change `k` (gear k+1 ↔ k+2) at `throttle[j]`.
    speeds: Vec<Vec<f64>>,
}

impl Lines {
    /// The speed of line `k` at throttle `th` (linear, ends held).
    fn at(&self, k: usize, th: f64) -> f64 {
        let (x, y) = (&self.throttle, &self.speeds[k]);
        if x.len() == 1 || th <= x[0] {
            return y[0];
        }
        let last = x.len() - 1;
        if th >= x[last] {
            return y[last];
        }
        let j = x.partition_point(|&xi| xi <= th).clamp(1, last);
        let s = (th - x[j - 1]) / (x[j] - x[j - 1]);
        y[j - 1] + s * (y[j] - y[j - 1])
    }
}

/// The `ShiftSchedule` block.
#[derive(Debug, Clone)]
pub struct ShiftSchedule {
    up: Lines,
    down: Lines,
    /// Number of gears.
    n: usize,
    gear0: usize,
    min_time: f64,
    gear: usize,
    /// No shift before this time (the wait after a shift).
    hold_until: f64,
    shifts: u64,
    first: FirstCall,
}

impl ShiftSchedule {
    /// The gear the lines choose at speed `v` and throttle `th`, starting from `g`.
    fn choose(&self, mut g: usize, v: f64, th: f64) -> usize {
        while g < self.n && v >= self.up.at(g - 1, th) {
            g += 1;
        }
        while g > 1 && v <= self.down.at(g - 2, th) {
            g -= 1;
        }
        g
    }
}

impl Block for ShiftSchedule {
    drivelink_core::run_state!(gear, hold_until, shifts, first);
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("v").with_unit("m/s"),
            PortDecl::input("throttle").with_unit("1"),
            PortDecl::output("gear").with_unit("1"),
        ];
        let variables = vec![VarDecl::new("shifts", VarSource::Custom(0), "1")
            .doc("number of shifts since the start")];
        BlockDecl {
            ports,
            variables,
            outputs: Outputs::Constant,
            pure_guards: true,
            feedthrough: Feedthrough::None,
            ..BlockDecl::default()
        }
        .with_guards(&["upshift", "downshift"])
    }
    fn outputs(&self, _cx: &Cx, y: &mut [f64]) {
        y[0] = self.gear as f64;
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let (v, th) = (cx.u(0), cx.u(1));
        let waiting = cx.t < self.hold_until;
        g[0] = if waiting || self.gear >= self.n {
            1.0
        } else {
            self.up.at(self.gear - 1, th) - v
        };
        g[1] = if waiting || self.gear <= 1 {
            1.0
        } else {
            v - self.down.at(self.gear - 2, th)
        };
    }
    fn next_time_event(&self, t: f64) -> f64 {
        if self.hold_until > t {
            self.hold_until
        } else {
            f64::INFINITY
        }
    }
    fn reset(&mut self, _t0: f64) {
        self.gear = self.gear0;
        self.hold_until = f64::NEG_INFINITY;
        self.shifts = 0;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = self.first.take();
        if cx.t < self.hold_until {
            return false;
        }
        let (v, th) = (cx.u(0), cx.u(1));
        if !(v.is_finite() && th.is_finite()) {
            return false;
        }
        let g = self.choose(self.gear, v, th);
        if g == self.gear {
            return false;
        }
        if !fresh {
            cx.log(
                EventTag::Shift,
                format!(
                    "gear {} -> {g} at v = {v:.6} m/s, throttle {th:.4}",
                    self.gear
                ),
            );
            self.shifts += 1;
            if self.min_time > 0.0 {
                self.hold_until = cx.t + self.min_time;
            }
        }
        self.gear = g;
        true
    }
    fn var(&self, _cx: &Cx, _i: usize) -> f64 {
        self.shifts as f64
    }
}

/// The SI value of one `speed_unit`.
fn speed_scale(p: &Params) -> Result<f64, ParamError> {
    Ok(match p.text("speed_unit")? {
        "km/h" => 1.0 / 3.6,
        "mph" => 0.44704,
        "rpm" => std::f64::consts::PI / 30.0,
        _ => 1.0,
    })
}

/// The lines of one matrix parameter (in `speed_unit`, returned in SI): `n − 1` rows, one
/// speed per throttle breakpoint.
fn lines(p: &Params, name: &str, throttle: &[f64]) -> Result<Lines, ParamError> {
    let rows = p.table(name)?;
    if rows.is_empty() {
        return Err(p.invalid(
            name,
            "is empty; give one row of speeds per gear change (gears − 1 rows)",
        ));
    }
    for (k, row) in rows.iter().enumerate() {
        if row.len() != throttle.len() && row.len() != 1 {
            return Err(p.invalid(
                name,
                format!(
                    "row {k} has {} speeds; give one per throttle breakpoint ({}), or one for all",
                    row.len(),
                    throttle.len()
                ),
            ));
        }
        if let Some(v) = row.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
            return Err(p.invalid(name, format!("row {k}: speeds must be >= 0, got {v}")));
        }
    }
    let scale = speed_scale(p)?;
    Ok(Lines {
        throttle: throttle.to_vec(),
        speeds: rows
            .iter()
            .map(|r| {
                if r.len() == 1 {
                    vec![r[0] * scale; throttle.len()]
                } else {
                    r.iter().map(|v| v * scale).collect()
                }
            })
            .collect(),
    })
}

pub(crate) fn build_shift_schedule(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let throttle = p.vector("throttle")?.to_vec();
    if throttle.is_empty()
        || throttle.windows(2).any(|w| w[1] <= w[0])
        || throttle.iter().any(|t| !(0.0..=1.0).contains(t))
    {
        return Err(p.invalid(
            "throttle",
            format!("must be strictly increasing breakpoints in [0, 1], got {throttle:?}"),
        ));
    }
    let up = lines(p, "upshift", &throttle)?;
    let down = if p.has("downshift") {
        lines(p, "downshift", &throttle)?
    } else {
        let ratio = p.num("downshift_ratio")?;
        if !(ratio > 0.0 && ratio < 1.0) {
            return Err(p.invalid("downshift_ratio", format!("must be in (0, 1), got {ratio}")));
        }
        Lines {
            throttle: up.throttle.clone(),
            speeds: up
                .speeds
                .iter()
                .map(|r| r.iter().map(|v| v * ratio).collect())
                .collect(),
        }
    };
    if up.speeds.len() != down.speeds.len() {
        return Err(p.invalid(
            "downshift",
            format!(
                "has {} rows but upshift has {}: one row per gear change in both",
                down.speeds.len(),
                up.speeds.len()
            ),
        ));
    }
    for (k, (u, d)) in up.speeds.iter().zip(&down.speeds).enumerate() {
        if let Some(j) = (0..u.len()).find(|&j| d[j] >= u[j]) {
            return Err(p.invalid(
                "downshift",
                format!(
                    "row {k} at throttle {}: the downshift speed {} must be below the upshift speed {} (gear {} <-> {}, in m/s or rad/s)",
                    throttle[j],
                    d[j],
                    u[j],
                    k + 1,
                    k + 2
                ),
            ));
        }
    }
    let n = up.speeds.len() + 1;
    let gear0 = crate::signal::count_param(p, "gear0", 1)?;
    if gear0 > n {
        return Err(p.invalid(
            "gear0",
            format!("must be a gear of the schedule (1..={n}), got {gear0}"),
        ));
    }
    Ok(Box::new(ShiftSchedule {
        up,
        down,
        n,
        gear0,
        min_time: p.non_negative("min_time")?,
        gear: gear0,
        hold_until: f64::NEG_INFINITY,
        shifts: 0,
        first: FirstCall::armed(),
    }))
}
