//! Discrete blocks: ZeroOrderHold, UnitDelay.
//!
//! Sample hits are the instants `k·sample_time` (k integer, from t = 0), computed as
//! `k as f64 * sample_time`, never accumulated, and are time events. The held values are
//! block data, not continuous states: they are sampled from the input in `time_event` and
//! sampled again in `update_modes` at the same instant, so a sample taken at a hit sees the
//! input *after* every other block's mode change at that instant (the right-hand value).
//! At the start of a run the blocks sample their input once (start at a hit or not).

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, EventCx, Feedthrough, Outputs, ParamError,
    ParamSpec, Params, PortDecl, Registry, VarDecl, VarSource,
};

use drivelink_core::compile::ANY_UNIT as ANY;

use super::{next_sample_hit, FirstCall};

/// Register the discrete blocks.
pub fn register(r: &mut Registry) {
    r.register(zero_order_hold_type());
    r.register(unit_delay_type());
}

/// The `ZeroOrderHold` block type: its parameters and how it is built.
fn zero_order_hold_type() -> BlockType {
    BlockType {
        name: "ZeroOrderHold",
        category: "signal",
        doc: "Samples u at t = k·sample_time and holds it: y = u(t_k) for t_k <= t < t_k+1.",
        ports_doc: "u[in], y[out]",
        params: vec![ParamSpec::required(
            "sample_time",
            "s",
            "sample period (> 0)",
        )],
        build: BlockBuild::Primitive(build_zoh),
    }
}

/// The `UnitDelay` block type: its parameters and how it is built.
fn unit_delay_type() -> BlockType {
    BlockType {
        name: "UnitDelay",
        category: "signal",
        doc: "One-sample delay: at t_k = k·sample_time the output becomes the input sampled at t_k−1 (x0 until the first hit after the start). Variable `state`: the stored sample.",
        ports_doc: "u[in], y[out]",
        params: vec![
            ParamSpec::required("sample_time", "s", "sample period (> 0)"),
            ParamSpec::number("x0", ANY, 0.0, "initial output"),
        ],
        build: BlockBuild::Primitive(build_delay),
    }
}

fn sample_time(p: &Params) -> Result<f64, ParamError> {
    let ts = p.positive("sample_time")?;
    if !ts.is_finite() {
        return Err(p.invalid("sample_time", format!("must be finite, got {ts}")));
    }
    Ok(ts)
}

fn build_zoh(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    Ok(Box::new(ZeroOrderHold {
        ts: sample_time(p)?,
        held: 0.0,
        hit_t: f64::NAN,
        first: FirstCall::armed(),
    }))
}

/// Same value, NaN equal to NaN (so a NaN input does not report a change forever).
fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// `ZeroOrderHold`: output = the input sampled at the last hit.
#[derive(Debug, Clone)]
pub struct ZeroOrderHold {
    ts: f64,
    held: f64,
    /// Time of the last sample (to resample at the same instant in `update_modes`).
    hit_t: f64,
    first: FirstCall,
}

impl Block for ZeroOrderHold {
    drivelink_core::run_state!(held, hit_t, first);
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: vec![PortDecl::input("u"), PortDecl::output("y")],
            outputs: Outputs::Constant,
            time_event_period: Some((self.ts, "sample_time")),
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, _cx: &Cx, y: &mut [f64]) {
        y[0] = self.held;
    }
    fn next_time_event(&self, t: f64) -> f64 {
        next_sample_hit(t, self.ts)
    }
    fn time_event(&mut self, cx: &mut EventCx) {
        self.held = cx.u(0);
        self.hit_t = cx.t;
    }
    fn reset(&mut self, _t0: f64) {
        self.held = 0.0;
        self.hit_t = f64::NAN;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        if self.first.take() {
            self.hit_t = cx.t;
            let changed = !same(self.held, cx.u(0));
            self.held = cx.u(0);
            return changed;
        }
        if cx.t == self.hit_t && !same(self.held, cx.u(0)) {
            self.held = cx.u(0);
            return true;
        }
        false
    }
}

fn build_delay(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    Ok(Box::new(UnitDelay {
        ts: sample_time(p)?,
        x0: p.num("x0")?,
        out: 0.0,
        stored: 0.0,
        hit_t: f64::NAN,
        first: FirstCall::armed(),
    }))
}

/// `UnitDelay`: at each hit the output takes the stored sample and the input is stored.
#[derive(Debug, Clone)]
pub struct UnitDelay {
    ts: f64,
    x0: f64,
    out: f64,
    stored: f64,
    hit_t: f64,
    first: FirstCall,
}

impl Block for UnitDelay {
    drivelink_core::run_state!(out, stored, hit_t, first);
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: vec![PortDecl::input("u"), PortDecl::output("y")],
            variables: vec![VarDecl::new("state", VarSource::Custom(0), "1").doc("the held sample")],
            outputs: Outputs::Constant,
            time_event_period: Some((self.ts, "sample_time")),
            feedthrough: Feedthrough::None,
            ..BlockDecl::default()
        }
    }
    fn var(&self, _cx: &Cx, _i: usize) -> f64 {
        self.stored
    }
    fn outputs(&self, _cx: &Cx, y: &mut [f64]) {
        y[0] = self.out;
    }
    fn next_time_event(&self, t: f64) -> f64 {
        next_sample_hit(t, self.ts)
    }
    fn time_event(&mut self, cx: &mut EventCx) {
        self.out = self.stored;
        self.stored = cx.u(0);
        self.hit_t = cx.t;
    }
    fn reset(&mut self, _t0: f64) {
        self.out = self.x0;
        self.stored = 0.0;
        self.hit_t = f64::NAN;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        if self.first.take() {
            let changed = !same(self.out, self.x0);
            self.out = self.x0;
            self.stored = cx.u(0);
            self.hit_t = cx.t;
            return changed;
        }
        if cx.t == self.hit_t {
            // Resample the right-hand input value; the output does not change.
            self.stored = cx.u(0);
        }
        false
    }
}
