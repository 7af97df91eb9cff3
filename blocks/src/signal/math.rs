//! Math blocks: Gain, Sum, Product, Abs, MinMax, Saturation, Lookup1D, Lookup2D, Relational,
//! Switch.
//!
//! The switching blocks (Abs, MinMax, Saturation, Lookup1D, Relational, Switch) keep a mode
//! and declare guards on their inputs, so every switch happens at a located crossing and
//! the output formula is fixed inside a step.

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, EventCx, EventTag, Linear, Outputs, ParamDefault,
    ParamError, ParamKind, ParamSpec, Params, PortDecl, Registry, VarDecl, VarSource,
};
use serde_json::json;

use drivelink_core::block::{kernel, Kernel};
use drivelink_core::compile::ANY_UNIT as ANY;

use super::{count_param, numbered_inputs, FirstCall};

const RELATIONAL_OPS: &[&str] = &["<", "<=", ">", ">=", "==", "!="];

/// Register the math blocks.
pub fn register(r: &mut Registry) {
    r.register(gain_type());
    r.register(sum_type());
    r.register(product_type());
    // `Abs` (|u|) is registered once, with the ABS controller, by `crate::register_abs`.
    r.register(min_max_type());
    r.register(saturation_type());
    r.register(lookup1_d_type());
    r.register(lookup2_d_type());
    r.register(relational_type());
    r.register(switch_type());
}

/// The `Gain` block type: its parameters and how it is built.
fn gain_type() -> BlockType {
    BlockType {
        name: "Gain",
        category: "signal",
        doc: "y = k·u.",
        ports_doc: "u[in], y[out]",
        params: vec![ParamSpec::required("k", ANY, "gain")],
        build: BlockBuild::Primitive(|p| Ok(Box::new(Gain { k: p.num("k")? }))),
    }
}

/// The `Sum` block type: its parameters and how it is built.
fn sum_type() -> BlockType {
    BlockType {
        name: "Sum",
        category: "signal",
        doc: "y = Σ ±u_i; one input u1..un per character of `signs` ('+' or '-').",
        ports_doc: "u1[in], u2[in], y[out]",
        params: vec![ParamSpec::with(
            "signs",
            ParamKind::Text,
            ParamDefault::Value(json!("++")),
            "one '+' or '-' per input, for example \"+-\"",
        )],
        build: BlockBuild::Primitive(build_sum),
    }
}

/// The `Product` block type: its parameters and how it is built.
fn product_type() -> BlockType {
    BlockType {
        name: "Product",
        category: "signal",
        doc: "y = product of the inputs u1..un, each multiplied ('*') or divided ('/') as given by `ops`. Division by zero gives ±inf or NaN (the solver then reports a non-finite state if it reaches a state).",
        ports_doc: "u1[in], u2[in], y[out]",
        params: vec![ParamSpec::with(
            "ops",
            ParamKind::Text,
            ParamDefault::Value(json!("**")),
            "one '*' or '/' per input, for example \"*/\"",
        )],
        build: BlockBuild::Primitive(build_product),
    }
}

/// The `MinMax` block type: its parameters and how it is built.
fn min_max_type() -> BlockType {
    BlockType {
        name: "MinMax",
        category: "signal",
        doc: "y = min or max of the inputs u1..un; the selected input is a mode switched at located crossings.",
        ports_doc: "u1[in], u2[in], y[out]",
        params: vec![
            ParamSpec::with(
                "op",
                ParamKind::Choice(&["min", "max"]),
                ParamDefault::Required,
                "\"min\" or \"max\"",
            ),
            ParamSpec::number("inputs", "1", 2.0, "number of inputs (integer >= 1)"),
        ],
        build: BlockBuild::Primitive(build_minmax),
    }
}

/// The `Saturation` block type: its parameters and how it is built.
fn saturation_type() -> BlockType {
    BlockType {
        name: "Saturation",
        category: "signal",
        doc: "y = u limited to [lower, upper]; entering and leaving a limit are located zero crossings (logged). Variable `mode`: -1 lower, 0 linear, 1 upper.",
        ports_doc: "u[in], y[out]",
        params: vec![
            ParamSpec::required("lower", ANY, "lower limit (<= upper)"),
            ParamSpec::required("upper", ANY, "upper limit"),
        ],
        build: BlockBuild::Primitive(build_saturation),
    }
}

/// The `Lookup1D` block type: its parameters and how it is built.
fn lookup1_d_type() -> BlockType {
    BlockType {
        name: "Lookup1D",
        category: "signal",
        doc: "Piecewise-linear table y(u); the table segment is a mode switched at located breakpoint crossings.",
        ports_doc: "u[in], y[out]",
        params: vec![
            ParamSpec::with(
                "table",
                ParamKind::Table { cols: 2 },
                ParamDefault::Required,
                "[[x, y], ...] with strictly increasing x",
            ),
            ParamSpec::with(
                "extrapolate",
                ParamKind::Choice(&["hold", "linear"]),
                ParamDefault::Value(json!("hold")),
                "outside the table: \"hold\" the end values or extend the end segments \"linear\"ly",
            ),
        ],
        build: BlockBuild::Primitive(build_lookup),
    }
}

/// The `Lookup2D` block type: its parameters and how it is built.
fn lookup2_d_type() -> BlockType {
    BlockType {
        name: "Lookup2D",
        category: "signal",
        doc: "Bilinear table y = table(u1, u2) on strictly increasing axes x (for u1, the rows of table) and y (for u2, its columns). Continuous; cell edges are located events (as Lookup1D's segments), so no step straddles a kink; cell_x / cell_y give the active cell.",
        ports_doc: "u1[in], u2[in], y[out]",
        params: vec![
            ParamSpec::with("x", ParamKind::Vector { unit: ANY }, ParamDefault::Value(json!([0.0, 1.0])), "breakpoints of u1, strictly increasing"),
            ParamSpec::with("y", ParamKind::Vector { unit: ANY }, ParamDefault::Value(json!([0.0, 1.0])), "breakpoints of u2, strictly increasing"),
            ParamSpec::with("table", ParamKind::Matrix, ParamDefault::Value(json!([[0.0, 0.0], [0.0, 1.0]])), "len(x) rows of len(y) values: table[i][j] at (x[i], y[j]) (the defaults give u1·u2 on the unit square)"),
            ParamSpec::with(
                "extrapolate",
                ParamKind::Choice(&["hold", "linear"]),
                ParamDefault::Value(json!("hold")),
                "outside the axes: \"hold\" the edge values or extend the edge cells \"linear\"ly",
            ),
        ],
        build: BlockBuild::Primitive(build_lookup2d),
    }
}

/// The `Relational` block type: its parameters and how it is built.
fn relational_type() -> BlockType {
    BlockType {
        name: "Relational",
        category: "signal",
        doc: "y = 1 if `u1 op u2` else 0; the result changes only at located crossings of u1 − u2 (logged).",
        ports_doc: "u1[in], u2[in], y[out]",
        params: vec![ParamSpec::with(
            "op",
            ParamKind::Choice(RELATIONAL_OPS),
            ParamDefault::Required,
            "comparison: \"<\", \"<=\", \">\", \">=\", \"==\" or \"!=\"",
        )],
        build: BlockBuild::Primitive(build_relational),
    }
}

/// The `Switch` block type: its parameters and how it is built.
fn switch_type() -> BlockType {
    BlockType {
        name: "Switch",
        category: "signal",
        doc: "y = u1 when u2 >= threshold, else u3; switches only at located crossings of u2 − threshold (logged). Variable `mode`: 1 passing u1, 3 passing u3.",
        ports_doc: "u1[in], u2[in], u3[in], y[out]",
        params: vec![ParamSpec::required("threshold", ANY, "control threshold on u2")],
        build: BlockBuild::Primitive(|p| {
            Ok(Box::new(Switch {
                threshold: p.num("threshold")?,
                pass_u1: true,
                first: FirstCall::armed(),
            }))
        }),
    }
}

/// `Gain`: y = k·u.
#[derive(Debug, Clone)]
pub struct Gain {
    k: f64,
}

impl Block for Gain {
    fn declare(&self) -> BlockDecl {
        let linear = Some(Linear {
            m: 1,
            p: 1,
            d: vec![self.k],
            ..Default::default()
        });
        BlockDecl {
            ports: vec![PortDecl::input("u"), PortDecl::output("y")],
            outputs: Outputs::Pure,
            linear,
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = self.k * cx.u(0);
    }
}

/// Parse a per-input operator string: one entry per character, each one of `allowed`.
fn parse_ops(p: &Params, name: &str, allowed: [char; 2]) -> Result<Vec<bool>, ParamError> {
    let s = p.text(name)?;
    if s.is_empty() {
        return Err(p.invalid(
            name,
            format!(
                "is empty; give one '{}' or '{}' per input",
                allowed[0], allowed[1]
            ),
        ));
    }
    let mut out = Vec::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        if c == allowed[0] {
            out.push(true);
        } else if c == allowed[1] {
            out.push(false);
        } else {
            return Err(p.invalid(
                name,
                format!(
                    "\"{s}\": character {} is '{c}'; only '{}' and '{}' are allowed",
                    i + 1,
                    allowed[0],
                    allowed[1]
                ),
            ));
        }
    }
    Ok(out)
}

fn build_sum(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let plus = parse_ops(p, "signs", ['+', '-'])?;
    let signs = plus.iter().map(|&s| if s { 1.0 } else { -1.0 }).collect();
    Ok(Box::new(Sum { signs }))
}

/// `Sum`: y = Σ sign_i·u_i.
#[derive(Debug, Clone)]
pub struct Sum {
    signs: Vec<f64>,
}

impl Block for Sum {
    fn declare(&self) -> BlockDecl {
        let mut p = numbered_inputs(self.signs.len());
        p.push(PortDecl::output("y"));
        let linear = Some(Linear {
            m: self.signs.len(),
            p: 1,
            d: self.signs.clone(),
            ..Default::default()
        });
        BlockDecl {
            ports: p,
            outputs: Outputs::Pure,
            linear,
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = self.signs.iter().zip(cx.inputs()).map(|(s, u)| s * u).sum();
    }
}

fn build_product(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let mul = parse_ops(p, "ops", ['*', '/'])?;
    Ok(Box::new(Product { mul }))
}

/// `Product`: y = Π u_i^(±1). Division by zero follows IEEE arithmetic (inf or NaN).
#[derive(Debug, Clone)]
pub struct Product {
    mul: Vec<bool>,
}

impl Block for Product {
    fn declare(&self) -> BlockDecl {
        let mut p = numbered_inputs(self.mul.len());
        p.push(PortDecl::output("y"));
        BlockDecl {
            ports: p,
            outputs: Outputs::Pure,
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = kernel::product(self.mul.iter().copied().zip(cx.inputs()));
    }
    fn kernel(&self, after_network: bool) -> Option<Kernel> {
        (!after_network).then(|| Kernel::Product(self.mul.clone()))
    }
}

/// `Abs`: y = |u|, with the sign of u as a mode (guard `±u`) so the kink is located.
#[derive(Debug, Clone)]
pub struct Abs {
    neg: bool,
}

impl Block for Abs {
    drivelink_core::run_state!(neg);
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: vec![PortDecl::input("u"), PortDecl::output("y")],
            outputs: Outputs::Pure,
            pure_guards: true,
            ..BlockDecl::default()
        }
        .with_guards(&["sign"])
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = if self.neg { -cx.u(0) } else { cx.u(0) };
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        g[0] = if self.neg { -cx.u(0) } else { cx.u(0) };
    }
    fn reset(&mut self, _t0: f64) {
        // As built: the initial event picks the branch of the first input.
        self.neg = false;
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let u = cx.u(0);
        let valid = if self.neg { u <= 0.0 } else { u >= 0.0 };
        if valid || u.is_nan() {
            return false;
        }
        self.neg = !self.neg;
        true
    }
}

fn build_minmax(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let max = match p.text("op")? {
        "min" => false,
        "max" => true,
        other => {
            return Err(p.invalid("op", format!("must be \"min\" or \"max\", got \"{other}\"")))
        }
    };
    let n = count_param(p, "inputs", 1)?;
    Ok(Box::new(MinMax { max, n, sel: 0 }))
}

/// `MinMax`: the selected input index is a mode; guards `±(u_sel − u_j)` for every other
/// input keep it the extreme one until a located crossing.
#[derive(Debug, Clone)]
pub struct MinMax {
    max: bool,
    n: usize,
    sel: usize,
}

impl MinMax {
    /// `u_a` is at least as extreme as `u_b`, as a guard value.
    fn margin(&self, a: f64, b: f64) -> f64 {
        if self.max {
            a - b
        } else {
            b - a
        }
    }
}

impl Block for MinMax {
    drivelink_core::run_state!(sel);
    fn declare(&self) -> BlockDecl {
        let mut p = numbered_inputs(self.n);
        p.push(PortDecl::output("y"));
        BlockDecl {
            ports: p,
            variables: vec![VarDecl::new("selected", VarSource::Custom(0), "1")
                .doc("index of the selected input")],
            outputs: Outputs::Pure,
            pure_guards: true,
            ..BlockDecl::default()
        }
        .guards_named(self.n - 1, |i| format!("guard{i}"))
    }
    fn var(&self, _cx: &Cx, _i: usize) -> f64 {
        (self.sel + 1) as f64
    }
    fn reset(&mut self, _t0: f64) {
        // As built: the initial event selects the extreme of the first inputs.
        self.sel = 0;
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = cx.u(self.sel.min(self.n - 1));
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let s = self.sel.min(self.n - 1);
        let us = cx.u(s);
        for (k, gk) in g.iter_mut().enumerate() {
            let j = if k < s { k } else { k + 1 };
            *gk = self.margin(us, cx.u(j));
        }
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let s = self.sel.min(self.n - 1);
        let us = cx.u(s);
        if (0..self.n).all(|j| !(self.margin(us, cx.u(j)) < 0.0)) {
            return false;
        }
        let mut best = 0;
        for j in 1..self.n {
            if self.margin(cx.u(j), cx.u(best)) > 0.0 {
                best = j;
            }
        }
        let changed = best != self.sel;
        self.sel = best;
        changed
    }
}

fn build_saturation(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let lower = p.num("lower")?;
    let upper = p.num("upper")?;
    if lower > upper {
        return Err(p.invalid("lower", format!("must be <= upper ({upper}), got {lower}")));
    }
    Ok(Box::new(Saturation {
        lower,
        upper,
        mode: SatMode::Linear,
        first: FirstCall::armed(),
    }))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SatMode {
    Lower,
    Linear,
    Upper,
}

impl SatMode {
    fn code(self) -> f64 {
        match self {
            SatMode::Lower => -1.0,
            SatMode::Linear => 0.0,
            SatMode::Upper => 1.0,
        }
    }
    fn name(self) -> &'static str {
        match self {
            SatMode::Lower => "lower",
            SatMode::Linear => "linear",
            SatMode::Upper => "upper",
        }
    }
}

/// `Saturation`: modes linear / lower / upper. Guards (valid while >= 0): linear
/// `u − lower`, `upper − u`; lower `lower − u`; upper `u − upper`.
#[derive(Debug, Clone)]
pub struct Saturation {
    lower: f64,
    upper: f64,
    mode: SatMode,
    first: FirstCall,
}

impl Saturation {
    fn valid(&self, m: SatMode, u: f64) -> bool {
        match m {
            SatMode::Linear => u >= self.lower && u <= self.upper,
            SatMode::Lower => u <= self.lower,
            SatMode::Upper => u >= self.upper,
        }
    }
}

impl Block for Saturation {
    drivelink_core::run_state!(mode, first);
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: vec![PortDecl::input("u"), PortDecl::output("y")],
            variables: vec![
                VarDecl::new("mode", VarSource::Custom(0), "1").doc("the active branch (mode)")
            ],
            outputs: Outputs::Pure,
            pure_guards: true,
            ..BlockDecl::default()
        }
        .with_guards(&["lower", "upper"])
    }
    fn var(&self, _cx: &Cx, _i: usize) -> f64 {
        self.mode.code()
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = match self.mode {
            SatMode::Linear => cx.u(0),
            SatMode::Lower => self.lower,
            SatMode::Upper => self.upper,
        };
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let u = cx.u(0);
        match self.mode {
            SatMode::Linear => {
                g[0] = u - self.lower;
                g[1] = self.upper - u;
            }
            SatMode::Lower => {
                g[0] = self.lower - u;
                g[1] = 1.0;
            }
            SatMode::Upper => {
                g[0] = 1.0;
                g[1] = u - self.upper;
            }
        }
    }
    fn reset(&mut self, _t0: f64) {
        self.mode = SatMode::Linear;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = self.first.take();
        let u = cx.u(0);
        if self.valid(self.mode, u) || u.is_nan() {
            return false;
        }
        let new = if u > self.upper {
            SatMode::Upper
        } else if u < self.lower {
            SatMode::Lower
        } else {
            SatMode::Linear
        };
        let old = self.mode;
        self.mode = new;
        if !fresh {
            cx.log(
                EventTag::ZeroCrossing,
                format!("{} -> {}, u = {u}", old.name(), new.name()),
            );
        }
        true
    }
}

fn build_lookup(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let (x, y) = p.xy_table("table")?;
    let linear = p.text("extrapolate")? == "linear";
    Ok(Box::new(Lookup1D {
        x,
        y,
        linear,
        seg: 0,
        fresh: true,
    }))
}

fn build_lookup2d(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let linear = p.text("extrapolate")? == "linear";
    Ok(Box::new(Lookup2D {
        table: crate::util::Table2D::from_params(p, "x", "y", "table", linear)?,
        cell: (0, 0),
    }))
}

/// `Lookup2D`: bilinear interpolation. Mode `cell` = per axis the number of breakpoints
/// `<= u` (as `Lookup1D`'s segment); four guards keep it until a located crossing of a cell
/// edge, so a step never straddles a kink of the interpolant.
#[derive(Debug, Clone)]
pub struct Lookup2D {
    table: crate::util::Table2D,
    cell: (usize, usize),
}

impl Block for Lookup2D {
    drivelink_core::run_state!(cell);
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("u1"),
            PortDecl::input("u2"),
            PortDecl::output("y"),
        ];
        let variables = vec![
            VarDecl::new("cell_x", VarSource::Custom(0), "1")
                .doc("breakpoints of x at or below u1 (the active cell along x)"),
            VarDecl::new("cell_y", VarSource::Custom(1), "1")
                .doc("breakpoints of y at or below u2 (the active cell along y)"),
        ];
        BlockDecl {
            ports,
            variables,
            outputs: Outputs::Pure,
            pure_guards: true,
            ..BlockDecl::default()
        }
        .with_guards(&["cell_x_low", "cell_x_high", "cell_y_low", "cell_y_high"])
    }
    fn var(&self, _cx: &Cx, i: usize) -> f64 {
        if i == 0 {
            self.cell.0 as f64
        } else {
            self.cell.1 as f64
        }
    }
    fn reset(&mut self, _t0: f64) {
        // The initial event finds the cell of the first inputs (as for a fresh block).
        self.cell = (0, 0);
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = self.table.eval_in(cx.u(0), cx.u(1), self.cell);
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        self.table.cell_guards(cx.u(0), cx.u(1), self.cell, g);
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let (u, v) = (cx.u(0), cx.u(1));
        if u.is_nan() || v.is_nan() {
            return false;
        }
        let cell = self.table.cell(u, v);
        let changed = cell != self.cell;
        self.cell = cell;
        changed
    }
}

/// `Lookup1D`: piecewise-linear interpolation. Mode `seg` = number of breakpoints `<= u`
/// (0..=n); guards `u − x[seg−1]` and `x[seg] − u` keep it until a located crossing, so a
/// step never straddles a kink.
#[derive(Debug, Clone)]
pub struct Lookup1D {
    x: Vec<f64>,
    y: Vec<f64>,
    linear: bool,
    seg: usize,
    /// No mode update yet in this run.
    fresh: bool,
}

impl Lookup1D {
    fn value(&self, s: usize, u: f64) -> f64 {
        let n = self.x.len();
        if n == 1 {
            return self.y[0];
        }
        // Line through points (k, k+1).
        let k = if s == 0 {
            if !self.linear {
                return self.y[0];
            }
            0
        } else if s >= n {
            if !self.linear {
                return self.y[n - 1];
            }
            n - 2
        } else {
            s - 1
        };
        let (x0, x1, y0, y1) = (self.x[k], self.x[k + 1], self.y[k], self.y[k + 1]);
        y0 + (y1 - y0) * (u - x0) / (x1 - x0)
    }
    fn valid(&self, s: usize, u: f64) -> bool {
        let lo = s == 0 || u >= self.x[s - 1];
        let hi = s >= self.x.len() || u <= self.x[s];
        lo && hi
    }
}

impl Block for Lookup1D {
    drivelink_core::run_state!(seg, fresh);
    fn declare(&self) -> BlockDecl {
        let variables = vec![VarDecl::new("segment", VarSource::Custom(0), "1")
            .doc("index of the active table segment")];
        BlockDecl {
            ports: vec![PortDecl::input("u"), PortDecl::output("y")],
            variables,
            outputs: Outputs::Pure,
            pure_guards: true,
            ..BlockDecl::default()
        }
        .guards_named(2, |i| {
            if i == 0 {
                "segment_low"
            } else {
                "segment_high"
            }
            .into()
        })
    }
    fn var(&self, _cx: &Cx, _i: usize) -> f64 {
        self.seg as f64
    }
    fn reset(&mut self, _t0: f64) {
        // The initial event finds the segment of the first input (as for a fresh block).
        self.seg = 0;
        self.fresh = true;
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = self.value(self.seg, cx.u(0));
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let u = cx.u(0);
        let s = self.seg;
        g[0] = if s == 0 { 1.0 } else { u - self.x[s - 1] };
        g[1] = if s >= self.x.len() {
            1.0
        } else {
            self.x[s] - u
        };
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let u = cx.u(0);
        // At the start, an input exactly on the segment's upper breakpoint (a clock
        // starting at the table's first point) takes the segment above, as the search
        // does: left below, its guard would be zero and cross at once, an event 5e-13 s
        // after the start. (Later the segment is kept while the input stays in it.)
        let fresh = std::mem::take(&mut self.fresh);
        let on_top = fresh && self.x.get(self.seg).is_some_and(|&xs| u == xs);
        if u.is_nan() || (self.valid(self.seg, u) && !on_top) {
            return false;
        }
        self.seg = self.x.partition_point(|&xi| xi <= u);
        true
    }
}

fn build_relational(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let op = match p.text("op")? {
        "<" => RelOp::Lt,
        "<=" => RelOp::Le,
        ">" => RelOp::Gt,
        ">=" => RelOp::Ge,
        "==" => RelOp::Eq,
        "!=" => RelOp::Ne,
        other => {
            return Err(p.invalid(
                "op",
                format!("\"{other}\" is not one of \"<\", \"<=\", \">\", \">=\", \"==\", \"!=\""),
            ))
        }
    };
    Ok(Box::new(Relational {
        op,
        sign: Sign::Zero,
        first: FirstCall::armed(),
    }))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RelOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// Sign of `u1 − u2`, the Relational mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sign {
    Neg,
    Zero,
    Pos,
}

impl Sign {
    fn of(d: f64) -> Option<Sign> {
        if d > 0.0 {
            Some(Sign::Pos)
        } else if d < 0.0 {
            Some(Sign::Neg)
        } else if d == 0.0 {
            Some(Sign::Zero)
        } else {
            None
        }
    }
}

/// `Relational`: the mode is the sign of `d = u1 − u2` (negative, zero, positive), changed
/// only at events; guards: positive `d`, negative `−d`, zero both `d` and `−d` (so leaving
/// an exact equality is located too). y is the comparison evaluated on the mode.
#[derive(Debug, Clone)]
pub struct Relational {
    op: RelOp,
    sign: Sign,
    first: FirstCall,
}

impl Relational {
    fn result(&self, s: Sign) -> bool {
        match self.op {
            RelOp::Lt => s == Sign::Neg,
            RelOp::Le => s != Sign::Pos,
            RelOp::Gt => s == Sign::Pos,
            RelOp::Ge => s != Sign::Neg,
            RelOp::Eq => s == Sign::Zero,
            RelOp::Ne => s != Sign::Zero,
        }
    }
}

impl Block for Relational {
    drivelink_core::run_state!(sign, first);
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("u1"),
            PortDecl::input("u2"),
            PortDecl::output("y"),
        ];
        BlockDecl {
            ports,
            outputs: Outputs::Constant,
            pure_guards: true,
            ..BlockDecl::default()
        }
        .with_guards(&["crossing", "leave_equal"])
    }
    fn outputs(&self, _cx: &Cx, y: &mut [f64]) {
        y[0] = if self.result(self.sign) { 1.0 } else { 0.0 };
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let d = cx.u(0) - cx.u(1);
        match self.sign {
            Sign::Pos => {
                g[0] = d;
                g[1] = 1.0;
            }
            Sign::Neg => {
                g[0] = -d;
                g[1] = 1.0;
            }
            Sign::Zero => {
                g[0] = d;
                g[1] = -d;
            }
        }
    }
    fn reset(&mut self, _t0: f64) {
        self.sign = Sign::Zero;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = self.first.take();
        let d = cx.u(0) - cx.u(1);
        let Some(s) = Sign::of(d) else { return false };
        if s == self.sign {
            return false;
        }
        let (y0, y1) = (self.result(self.sign), self.result(s));
        self.sign = s;
        if y0 != y1 && !fresh {
            cx.log(
                EventTag::ZeroCrossing,
                format!("y -> {}, u1 - u2 = {d:.3e}", if y1 { 1 } else { 0 }),
            );
        }
        y0 != y1
    }
}

/// `Switch`: y = u1 while the mode `pass_u1` holds, else u3. Mode `pass_u1 = u2 >= threshold`
/// set at events; guard `u2 − threshold` (first) or `threshold − u2` (third).
#[derive(Debug, Clone)]
pub struct Switch {
    threshold: f64,
    /// Mode: passing u1 (`u2 >= threshold`) or u3.
    pass_u1: bool,
    first: FirstCall,
}

impl Block for Switch {
    drivelink_core::run_state!(pass_u1, first);
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("u1"),
            PortDecl::input("u2"),
            PortDecl::input("u3"),
            PortDecl::output("y"),
        ];
        BlockDecl {
            ports,
            variables: vec![
                VarDecl::new("mode", VarSource::Custom(0), "1").doc("the active branch (mode)")
            ],
            outputs: Outputs::Pure,
            pure_guards: true,
            ..BlockDecl::default()
        }
        .with_guards(&["threshold"])
    }
    fn var(&self, _cx: &Cx, _i: usize) -> f64 {
        if self.pass_u1 {
            1.0
        } else {
            3.0
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = if self.pass_u1 { cx.u(0) } else { cx.u(2) };
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let d = cx.u(1) - self.threshold;
        g[0] = if self.pass_u1 { d } else { -d };
    }
    fn reset(&mut self, _t0: f64) {
        self.pass_u1 = true;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = self.first.take();
        let d = cx.u(1) - self.threshold;
        if d.is_nan() {
            return false;
        }
        let first = d >= 0.0;
        if first == self.pass_u1 {
            return false;
        }
        self.pass_u1 = first;
        if !fresh {
            cx.log(
                EventTag::ZeroCrossing,
                format!(
                    "passing {}, u2 = {}",
                    if first { "u1" } else { "u3" },
                    cx.u(1)
                ),
            );
        }
        true
    }
}

/// Build the `|u|` block.
pub(crate) fn build_abs_value(_p: &Params) -> Result<Box<dyn Block>, ParamError> {
    Ok(Box::new(Abs { neg: false }))
}
