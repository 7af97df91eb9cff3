//! Sources: Constant, Step, Ramp, Sine, SignalBuilder, Clock.
//!
//! Every time discontinuity (step instant, ramp corners, breakpoints) is a time event; the
//! piece of the waveform in use is a mode set in `update_modes` from `t`, so inside a step
//! each source is one smooth formula.

use std::f64::consts::PI;

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, EventCx, EventTag, Outputs, ParamDefault,
    ParamError, ParamKind, ParamSpec, Params, PortDecl, Registry, VarDecl, VarSource,
};

use drivelink_core::compile::ANY_UNIT as ANY;

use super::FirstCall;

/// Register the sources.
pub fn register(r: &mut Registry) {
    r.register(constant_type());
    r.register(step_type());
    r.register(ramp_type());
    r.register(sine_type());
    r.register(signal_builder_type());
    r.register(clock_type());
}

/// The `Constant` block type: its parameters and how it is built.
fn constant_type() -> BlockType {
    BlockType {
        name: "Constant",
        category: "signal",
        doc: "Constant output y = value.",
        ports_doc: "y[out]",
        params: vec![ParamSpec::required(
            "value",
            ANY,
            "the constant output value",
        )],
        build: BlockBuild::Primitive(build_constant),
    }
}

/// The `Step` block type: its parameters and how it is built.
fn step_type() -> BlockType {
    BlockType {
        name: "Step",
        category: "signal",
        doc: "Step from `before` to `after` at `time` (a time event; y = after for t >= time).",
        ports_doc: "y[out]",
        params: vec![
            ParamSpec::required("time", "s", "step time"),
            ParamSpec::number("before", ANY, 0.0, "output before the step"),
            ParamSpec::number("after", ANY, 1.0, "output from the step time on"),
        ],
        build: BlockBuild::Primitive(build_step),
    }
}

/// The `Ramp` block type: its parameters and how it is built.
fn ramp_type() -> BlockType {
    BlockType {
        name: "Ramp",
        category: "signal",
        doc: "y = offset + height·clamp((t − start_time)/duration, 0, 1); corners are time events (duration 0 = step).",
        ports_doc: "y[out]",
        params: vec![
            ParamSpec::required("start_time", "s", "time the ramp starts"),
            ParamSpec::required("duration", "s", "ramp duration (>= 0; 0 gives a step)"),
            ParamSpec::required("height", ANY, "total change of the output"),
            ParamSpec::number("offset", ANY, 0.0, "output before the ramp"),
        ],
        build: BlockBuild::Primitive(build_ramp),
    }
}

/// The `Sine` block type: its parameters and how it is built.
fn sine_type() -> BlockType {
    BlockType {
        name: "Sine",
        category: "signal",
        doc: "y = amplitude·sin(2π·frequency·t + phase) + offset.",
        ports_doc: "y[out]",
        params: vec![
            ParamSpec::required("amplitude", ANY, "amplitude"),
            ParamSpec::required("frequency", "Hz", "frequency (>= 0)"),
            ParamSpec::number("phase", "rad", 0.0, "phase at t = 0"),
            ParamSpec::number("offset", ANY, 0.0, "constant added to the sine"),
        ],
        build: BlockBuild::Primitive(build_sine),
    }
}

/// The `SignalBuilder` block type: its parameters and how it is built.
fn signal_builder_type() -> BlockType {
    BlockType {
        name: "SignalBuilder",
        category: "signal",
        doc: "Piecewise-linear signal through points [[t, v], ...], held outside their time range; every breakpoint is a time event. Two points at the same time make a jump.",
        ports_doc: "y[out]",
        params: vec![ParamSpec::with(
            "points",
            ParamKind::Table { cols: 2 },
            ParamDefault::Required,
            "breakpoints [[t (s), value], ...], times non-decreasing",
        )],
        build: BlockBuild::Primitive(build_signal_builder),
    }
}

/// The `Clock` block type: its parameters and how it is built.
fn clock_type() -> BlockType {
    BlockType {
        name: "Clock",
        category: "signal",
        doc: "Simulation time: y = t.",
        ports_doc: "y[out]",
        params: vec![],
        build: BlockBuild::Primitive(|_| Ok(Box::new(Clock))),
    }
}

fn build_constant(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    Ok(Box::new(Constant {
        value: p.num("value")?,
    }))
}

/// `Constant`: y = value.
#[derive(Debug, Clone)]
pub struct Constant {
    value: f64,
}

impl Block for Constant {
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: vec![PortDecl::output("y")],
            outputs: Outputs::Constant,
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, _cx: &Cx, y: &mut [f64]) {
        y[0] = self.value;
    }
}

fn build_step(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    Ok(Box::new(Step {
        time: p.num("time")?,
        before: p.num("before")?,
        after: p.num("after")?,
        on: false,
        first: FirstCall::armed(),
    }))
}

/// `Step`: `before` until `time`, `after` from then on. The switch is a time event; the
/// mode `on = t >= time` is set in `update_modes`.
#[derive(Debug, Clone)]
pub struct Step {
    time: f64,
    before: f64,
    after: f64,
    on: bool,
    first: FirstCall,
}

impl Block for Step {
    drivelink_core::run_state!(on, first);
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: vec![PortDecl::output("y")],
            outputs: Outputs::Constant,
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, _cx: &Cx, y: &mut [f64]) {
        y[0] = if self.on { self.after } else { self.before };
    }
    fn next_time_event(&self, t: f64) -> f64 {
        if self.time > t {
            self.time
        } else {
            f64::INFINITY
        }
    }
    fn reset(&mut self, _t0: f64) {
        self.on = false;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = self.first.take();
        let on = cx.t >= self.time;
        if on == self.on {
            return false;
        }
        self.on = on;
        if !fresh {
            let (a, b) = if on {
                (self.before, self.after)
            } else {
                (self.after, self.before)
            };
            cx.log(EventTag::TimeEvent, format!("step {a} -> {b}"));
        }
        true
    }
}

fn build_ramp(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let start = p.num("start_time")?;
    let duration = p.non_negative("duration")?;
    let end = start + duration;
    if !end.is_finite() {
        return Err(p.invalid("duration", "start_time + duration overflows"));
    }
    Ok(Box::new(Ramp {
        start,
        end,
        duration,
        height: p.num("height")?,
        offset: p.num("offset")?,
        phase: RampPhase::Before,
        first: FirstCall::armed(),
    }))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RampPhase {
    Before,
    Rising,
    After,
}

/// `Ramp`: offset, then a linear rise by `height` over `duration`, then held. Both corners
/// are time events; the phase is a mode.
#[derive(Debug, Clone)]
pub struct Ramp {
    start: f64,
    end: f64,
    duration: f64,
    height: f64,
    offset: f64,
    phase: RampPhase,
    first: FirstCall,
}

impl Block for Ramp {
    drivelink_core::run_state!(phase, first);
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: vec![PortDecl::output("y")],
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = match self.phase {
            RampPhase::Before => self.offset,
            RampPhase::Rising => self.offset + self.height * (cx.t - self.start) / self.duration,
            RampPhase::After => self.offset + self.height,
        };
    }
    fn next_time_event(&self, t: f64) -> f64 {
        if self.start > t {
            self.start
        } else if self.end > t {
            self.end
        } else {
            f64::INFINITY
        }
    }
    fn reset(&mut self, _t0: f64) {
        self.phase = RampPhase::Before;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = self.first.take();
        let t = cx.t;
        let phase = if t < self.start {
            RampPhase::Before
        } else if t < self.end {
            RampPhase::Rising
        } else {
            RampPhase::After
        };
        if phase == self.phase {
            return false;
        }
        self.phase = phase;
        if !fresh {
            let what = match phase {
                RampPhase::Before => "before ramp",
                RampPhase::Rising => "ramp starts",
                RampPhase::After => "ramp ends",
            };
            cx.log(EventTag::TimeEvent, what);
        }
        true
    }
}

fn build_sine(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let f = p.non_negative("frequency")?;
    Ok(Box::new(Sine {
        amplitude: p.num("amplitude")?,
        omega: 2.0 * PI * f,
        phase: p.num("phase")?,
        offset: p.num("offset")?,
    }))
}

/// `Sine`: y = amplitude·sin(2π f t + phase) + offset.
#[derive(Debug, Clone)]
pub struct Sine {
    amplitude: f64,
    omega: f64,
    phase: f64,
    offset: f64,
}

impl Block for Sine {
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: vec![PortDecl::output("y")],
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = self.amplitude * (self.omega * cx.t + self.phase).sin() + self.offset;
    }
}

fn build_signal_builder(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let rows = p.table("points")?;
    if rows.is_empty() {
        return Err(p.invalid(
            "points",
            "is empty; expected [[t, v], ...] with at least one point",
        ));
    }
    let mut times = Vec::with_capacity(rows.len());
    let mut values = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let (t, v) = match r.as_slice() {
            [t, v] => (*t, *v),
            _ => {
                return Err(p.invalid(
                    "points",
                    format!("row {i} has {} entries; expected [t, v]", r.len()),
                ))
            }
        };
        if !t.is_finite() || !v.is_finite() {
            return Err(p.invalid("points", format!("row {i} must be finite, got [{t}, {v}]")));
        }
        if let Some(&prev) = times.last() {
            if t < prev {
                return Err(p.invalid(
                    "points",
                    format!("times must be non-decreasing, but row {i} has t = {t} after {prev}"),
                ));
            }
        }
        if i >= 2 && times[i - 2] == t {
            return Err(p.invalid(
                "points",
                format!("more than two points at t = {t} (row {i}); a jump needs exactly two"),
            ));
        }
        times.push(t);
        values.push(v);
    }
    Ok(Box::new(SignalBuilder {
        times,
        values,
        seg: 0,
        first: FirstCall::armed(),
    }))
}

/// `SignalBuilder`: piecewise-linear through `(t_i, v_i)`, held before the first and after
/// the last point. The mode `seg` = number of breakpoints `<= t` (0..=n), updated at the
/// breakpoint time events, selects the line segment `[seg−1, seg]` used inside a step.
#[derive(Debug, Clone)]
pub struct SignalBuilder {
    times: Vec<f64>,
    values: Vec<f64>,
    seg: usize,
    first: FirstCall,
}

impl SignalBuilder {
    fn segment_at(&self, t: f64) -> usize {
        self.times.partition_point(|&ti| ti <= t)
    }
}

impl Block for SignalBuilder {
    drivelink_core::run_state!(seg, first);
    fn declare(&self) -> BlockDecl {
        let variables = vec![VarDecl::new("segment", VarSource::Custom(0), "1")
            .doc("index of the active breakpoint segment")];
        BlockDecl {
            ports: vec![PortDecl::output("y")],
            variables,
            ..BlockDecl::default()
        }
    }
    fn var(&self, _cx: &Cx, _i: usize) -> f64 {
        self.seg as f64
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let n = self.values.len();
        let s = self.seg.min(n);
        y[0] = if s == 0 {
            self.values[0]
        } else if s >= n {
            self.values[n - 1]
        } else {
            // times[s-1] <= t < times[s], and times[s-1] < times[s] by construction of seg.
            let (t0, t1) = (self.times[s - 1], self.times[s]);
            let (v0, v1) = (self.values[s - 1], self.values[s]);
            v0 + (v1 - v0) * (cx.t - t0) / (t1 - t0)
        };
    }
    fn next_time_event(&self, t: f64) -> f64 {
        let k = self.segment_at(t);
        self.times.get(k).copied().unwrap_or(f64::INFINITY)
    }
    fn reset(&mut self, _t0: f64) {
        self.seg = 0;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = self.first.take();
        let s = self.segment_at(cx.t);
        if s == self.seg {
            return false;
        }
        self.seg = s;
        if !fresh {
            cx.log(
                EventTag::TimeEvent,
                format!("breakpoint {s} of {}", self.times.len()),
            );
        }
        true
    }
}

/// `Clock`: y = t.
#[derive(Debug, Clone)]
pub struct Clock;

impl Block for Clock {
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: vec![PortDecl::output("y")],
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = cx.t;
    }
}
