//! Open-loop steering inputs of the standard maneuvers: `SineWithDwell` (FMVSS 126 / UN
//! R140 sine with dwell) and `SteerRamp` (the slowly increasing steer that calibrates it).
//!
//! Both have no inputs and two outputs: `steering_wheel` (rad, the steering-wheel angle
//! `δ_sw`, positive turns left) and `steer` (rad, the road-wheel angle `δ_sw/ratio`). Every
//! kink of the waveform is a time event, hit exactly by the solver; the piece of the
//! waveform in use is a mode (`phase`) set in `update_modes` from `t`, so inside a step
//! each output is one smooth formula.
//!
//! `SineWithDwell` (amplitude `A`, frequency `f`, period `T = 1/f`, `t0 = start`):
//!
//! ```text
//! phase 0  t < t0                              δ_sw = 0
//! phase 1  t0 <= t < t1 = t0 + 3T/4            δ_sw = A·sin(2πf(t − t0))      (peak +A at t0 + T/4)
//! phase 2  t1 <= t < t2 = t1 + dwell           δ_sw = −A                      (the dwell)
//! phase 3  t2 <= t < t3 = t2 + T/4             δ_sw = A·sin(2πf(t − t0 − dwell)) (−A back to 0)
//! phase 4  t >= t3 = t0 + T + dwell            δ_sw = 0                       (end of steer)
//! ```
//!
//! The first lobe turns left for `A > 0` (a negative amplitude mirrors the maneuver). The
//! zero crossings are at `t0`, `t0 + T/2` and `t3`; `t_end = t3` is a variable (the
//! reference instant of the FMVSS 126 yaw-ratio metrics, "end of steer").
//!
//! `SteerRamp` (`rate`, `start`, optional `max`): `δ_sw = 0` before `start`, then
//! `rate·(t − start)`, held at `sign(rate)·max` from `t_max = start + max/|rate|` on.

use std::f64::consts::PI;

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, EventCx, EventTag, ParamDefault, ParamError,
    ParamKind, ParamSpec, Params, PortDecl, Registry, VarDecl, VarSource,
};
use serde_json::json;

use super::finite;
use crate::signal::FirstCall;

pub(crate) fn register(r: &mut Registry) {
    r.register(sine_with_dwell_type());
    r.register(steer_ramp_type());
}

/// The `SineWithDwell` block type: its parameters and how it is built.
fn sine_with_dwell_type() -> BlockType {
    BlockType {
        name: "SineWithDwell",
        category: "vehicle",
        doc: "FMVSS 126 sine-with-dwell steering input: δ_sw = amplitude·sin(2π·frequency·(t − start)) until its negative peak at 3/4 of the period, held at −amplitude for `dwell`, then the last quarter period back to 0, then 0 (first lobe positive = left). steer = δ_sw/ratio. The kinks are time events; variables phase (0 before, 1 sine, 2 dwell, 3 return, 4 after) and t_end (end of steer).",
        ports_doc: "steer[out], steering_wheel[out]",
        params: vec![
            ParamSpec::required("amplitude", "rad", "steering-wheel amplitude A (\"90 deg\"); negative mirrors the maneuver (first lobe right)"),
            ParamSpec::number("frequency", "Hz", 0.7, "sine frequency f (> 0)"),
            ParamSpec::number("dwell", "s", 0.5, "time held at the negative peak −A (>= 0)"),
            ParamSpec::number("start", "s", 1.0, "time the steering starts (0 before)"),
            ParamSpec::number("ratio", "1", 16.0, "steering ratio, steering-wheel angle per road-wheel angle (> 0)"),
        ],
        build: BlockBuild::Primitive(build_sine_dwell),
    }
}

/// The `SteerRamp` block type: its parameters and how it is built.
fn steer_ramp_type() -> BlockType {
    BlockType {
        name: "SteerRamp",
        category: "vehicle",
        doc: "Slowly increasing steer (FMVSS 126 slowly increasing steer): δ_sw = 0 before `start`, then rate·(t − start), held at ±max once |δ_sw| reaches max (if given). steer = δ_sw/ratio. The corners are time events.",
        ports_doc: "steer[out], steering_wheel[out]",
        params: vec![
            ParamSpec::with("rate", ParamKind::Number { unit: "rad/s" }, ParamDefault::Value(json!("13.5 deg/s")), "steering-wheel rate (!= 0; negative steers right)"),
            ParamSpec::number("start", "s", 1.0, "time the ramp starts (0 before)"),
            ParamSpec::number("ratio", "1", 16.0, "steering ratio, steering-wheel angle per road-wheel angle (> 0)"),
            ParamSpec::optional("max", ParamKind::Number { unit: "rad" }, "steering-wheel angle magnitude the ramp stops at (> 0); unlimited when absent"),
        ],
        build: BlockBuild::Primitive(build_ramp),
    }
}

/// A finite steering ratio > 0.
fn ratio(p: &Params) -> Result<f64, ParamError> {
    let r = finite(p, "ratio")?;
    if !(r > 0.0) {
        return Err(p.invalid("ratio", format!("must be > 0, got {r}")));
    }
    Ok(r)
}

/// A finite time parameter.
fn time(p: &Params, name: &str) -> Result<f64, ParamError> {
    finite(p, name)
}

fn build_sine_dwell(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let amplitude = finite(p, "amplitude")?;
    let f = p.positive("frequency")?;
    let period = 1.0 / f;
    if !period.is_finite() {
        return Err(p.invalid("frequency", format!("gives an infinite period, got {f}")));
    }
    let dwell = p.non_negative("dwell")?;
    let start = time(p, "start")?;
    let t1 = start + 0.75 * period;
    let t2 = t1 + dwell;
    let t3 = t2 + 0.25 * period;
    if !t3.is_finite() {
        return Err(p.invalid("dwell", "start + period + dwell overflows"));
    }
    Ok(Box::new(SineWithDwell {
        amplitude,
        f,
        dwell,
        ratio: ratio(p)?,
        times: [start, t1, t2, t3],
        phase: 0,
        first: FirstCall::armed(),
    }))
}

/// The number of instants in `times` at or before `t`: the phase of a piecewise waveform.
fn phase_at(times: &[f64], t: f64) -> u8 {
    times.iter().filter(|&&ti| ti <= t).count() as u8
}

/// The first instant of `times` strictly after `t`.
fn next_after(times: &[f64], t: f64) -> f64 {
    times
        .iter()
        .copied()
        .find(|&ti| ti > t)
        .unwrap_or(f64::INFINITY)
}

/// Set `phase` from `t`; log the change unless it is the initial one.
fn update_phase(
    phase: &mut u8,
    first: &mut FirstCall,
    times: &[f64],
    names: &[&str],
    cx: &mut EventCx,
) -> bool {
    let fresh = first.take();
    let ph = phase_at(times, cx.t);
    if ph == *phase {
        return false;
    }
    *phase = ph;
    if !fresh {
        cx.log(EventTag::TimeEvent, names[ph as usize]);
    }
    true
}

/// `SineWithDwell`: see the module docs.
#[derive(Debug, Clone)]
pub struct SineWithDwell {
    amplitude: f64,
    f: f64,
    dwell: f64,
    ratio: f64,
    /// `[start, t1 (dwell starts), t2 (dwell ends), t3 (end of steer)]`.
    times: [f64; 4],
    phase: u8,
    first: FirstCall,
}

impl SineWithDwell {
    /// The kink instants: start, dwell start, dwell end, end of steer (s).
    pub fn kinks(&self) -> [f64; 4] {
        self.times
    }
    /// The steering-wheel angle (rad) at `t` in phase `phase`.
    fn wheel(&self, phase: u8, t: f64) -> f64 {
        let a = self.amplitude;
        match phase {
            1 => a * (2.0 * PI * self.f * (t - self.times[0])).sin(),
            2 => -a,
            3 => a * (2.0 * PI * self.f * (t - self.times[0] - self.dwell)).sin(),
            _ => 0.0,
        }
    }
}

const SINE_PHASES: [&str; 5] = [
    "before steer",
    "sine starts",
    "dwell starts",
    "dwell ends",
    "end of steer",
];

impl Block for SineWithDwell {
    drivelink_core::run_state!(phase, first);
    fn declare(&self) -> BlockDecl {
        let variables = vec![
            VarDecl::new("phase", VarSource::Custom(0), "1").doc(
                "0 before, 1 sine, 2 dwell at −amplitude, 3 return to 0, 4 after the end of steer",
            ),
            VarDecl::new("t_end", VarSource::Custom(1), "s")
                .doc("end of steer: start + 1/frequency + dwell (a constant)"),
        ];
        BlockDecl {
            ports: steer_ports(),
            variables,
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let sw = self.wheel(self.phase, cx.t);
        y[0] = sw / self.ratio;
        y[1] = sw;
    }
    fn next_time_event(&self, t: f64) -> f64 {
        next_after(&self.times, t)
    }
    fn reset(&mut self, _t0: f64) {
        self.phase = 0;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        update_phase(
            &mut self.phase,
            &mut self.first,
            &self.times,
            &SINE_PHASES,
            cx,
        )
    }
    fn var(&self, _cx: &Cx, i: usize) -> f64 {
        if i == 0 {
            f64::from(self.phase)
        } else {
            self.times[3]
        }
    }
}

/// The two outputs of a steering input.
fn steer_ports() -> Vec<PortDecl> {
    vec![
        PortDecl::output("steer").with_unit("rad"),
        PortDecl::output("steering_wheel").with_unit("rad"),
    ]
}

fn build_ramp(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let rate = finite(p, "rate")?;
    if rate == 0.0 {
        return Err(p.invalid("rate", "must not be 0"));
    }
    let start = time(p, "start")?;
    let max = match p.opt_num("max")? {
        Some(_) => {
            let m = finite(p, "max")?;
            if !(m > 0.0) {
                return Err(p.invalid("max", format!("must be > 0, got {m}")));
            }
            Some(m)
        }
        None => None,
    };
    let t_max = max.map_or(f64::INFINITY, |m| start + m / rate.abs());
    Ok(Box::new(SteerRamp {
        rate,
        max: max.map_or(f64::INFINITY, |m| m.copysign(rate)),
        ratio: ratio(p)?,
        times: [start, t_max],
        phase: 0,
        first: FirstCall::armed(),
    }))
}

/// `SteerRamp`: see the module docs.
#[derive(Debug, Clone)]
pub struct SteerRamp {
    rate: f64,
    /// The held angle with the ramp's sign (infinite without a limit).
    max: f64,
    ratio: f64,
    /// `[start, t_max]` (`t_max` infinite without a limit).
    times: [f64; 2],
    phase: u8,
    first: FirstCall,
}

const RAMP_PHASES: [&str; 3] = ["before ramp", "ramp starts", "ramp reaches max"];

impl Block for SteerRamp {
    drivelink_core::run_state!(phase, first);
    fn declare(&self) -> BlockDecl {
        let variables = vec![VarDecl::new("phase", VarSource::Custom(0), "1")
            .doc("0 before the ramp, 1 ramping, 2 held at max")];
        BlockDecl {
            ports: steer_ports(),
            variables,
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let sw = match self.phase {
            0 => 0.0,
            1 => self.rate * (cx.t - self.times[0]),
            _ => self.max,
        };
        y[0] = sw / self.ratio;
        y[1] = sw;
    }
    fn next_time_event(&self, t: f64) -> f64 {
        next_after(&self.times, t)
    }
    fn reset(&mut self, _t0: f64) {
        self.phase = 0;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        update_phase(
            &mut self.phase,
            &mut self.first,
            &self.times,
            &RAMP_PHASES,
            cx,
        )
    }
    fn var(&self, _cx: &Cx, _i: usize) -> f64 {
        f64::from(self.phase)
    }
}
