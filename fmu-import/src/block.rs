//! The `Fmu` block: one FMI 3.0 or 2.0 Co-Simulation instance stepped at communication
//! points (a Model Exchange import is built by [`crate::me_block`]; both share the ports,
//! units and parameters of this module).
//!
//! Ports: every scalar `Float64` variable of causality `input` is a signal input and of
//! causality `output` a signal output, in the order of the model description, named after
//! the variable with every character other than an ASCII letter, digit or `_` replaced by
//! `_` (and `_` put before a leading digit). Values cross the boundary in SI: a variable
//! whose unit drivelink knows (`rpm`, `km/h`) or whose `<BaseUnit>` gives a factor and
//! offset is converted.
//!
//! Stepping follows the sample-hit mechanism of the discrete blocks: the communication
//! points `t0 + k·step` (k integer, computed, never accumulated) are time events. At a
//! point `t_k` the block advances the FMU from `t_k−1` to `t_k` (`fmi3DoStep`, the inputs
//! held since `t_k−1`), sets the inputs sampled at `t_k`, reads the outputs and holds them
//! until `t_k+1`; in `update_modes` at the same instant it samples the inputs again (the
//! values after the other blocks' mode changes) and, if they changed, sets them and reads
//! the outputs anew. So the block's outputs at `t_k` are the FMU's outputs at `t_k`. The
//! instance is created when the block is built (and initialised once, so that parameter
//! values the FMU refuses are build errors), reset (`fmi3Reset`, `fmi2Reset`) at the start
//! of every run and initialised at the start time with the inputs of the initial instant.
//!
//! A call that fails during a run (status `fmi3Error`, `fmi3Discard` or `fmi3Fatal`) logs
//! an event with the function, the status and the FMU's last logged messages, and the
//! block's outputs become NaN, which fails the run at that instant (naming the block).

use std::path::Path;
use std::sync::Mutex;

use drivelink_core::units::parse_unit;
use drivelink_core::{Block, BlockDecl, Cx, EventCx, Outputs, ParamError, Params, PortDecl};
use serde_json::Value;

use crate::cosim::{CallError, CoSim, Phase};
use crate::description::{Causality, Description, Variable};
use crate::{FmuError, Kind, Unpacked};

/// One port of the block: an FMU variable and the conversion of its values to SI
/// (`si = factor·value + offset`).
#[derive(Debug, Clone)]
pub(crate) struct Port {
    pub(crate) name: String,
    pub(crate) vr: u32,
    factor: f64,
    offset: f64,
    unit: Option<&'static str>,
    pub(crate) start: Option<f64>,
}

impl Port {
    pub(crate) fn fmu_to_si(&self, v: f64) -> f64 {
        self.factor * v + self.offset
    }
    pub(crate) fn si_to_fmu(&self, si: f64) -> f64 {
        (si - self.offset) / self.factor
    }
}

/// The ports and parameter values of an `Fmu` block, whatever the interface.
pub(crate) struct Io {
    pub(crate) inputs: Vec<Port>,
    pub(crate) outputs: Vec<Port>,
    pub(crate) in_vrs: Vec<u32>,
    pub(crate) out_vrs: Vec<u32>,
    /// Per input: whether an output depends on it directly.
    pub(crate) feed: Vec<bool>,
    /// Parameter value references and values (in the FMU's units).
    pub(crate) params: (Vec<u32>, Vec<f64>),
}

impl Io {
    /// Read the ports of `fmu` and the `parameters` of `p` (`param`: the parameter naming
    /// the file, for errors).
    pub(crate) fn new(p: &Params, param: &str, fmu: &Unpacked) -> Result<Io, ParamError> {
        let params = match p.has("parameters") {
            true => parameter_values(fmu, &p.json("parameters")?)
                .map_err(|m| p.invalid("parameters", m))?,
            false => (Vec::new(), Vec::new()),
        };
        let inputs = ports_of(&fmu.description, Causality::Input);
        let outputs = ports_of(&fmu.description, Causality::Output);
        let all: Vec<&Port> = inputs.iter().chain(&outputs).collect();
        check_names(fmu, &all).map_err(|e| p.invalid(param, e.to_string()))?;
        let deps = &fmu.description.output_deps;
        let feed = inputs
            .iter()
            .map(|i| {
                outputs.iter().any(|o| match deps.get(&o.vr) {
                    Some(Some(list)) => list.contains(&i.vr),
                    _ => true,
                })
            })
            .collect();
        Ok(Io {
            in_vrs: inputs.iter().map(|q| q.vr).collect(),
            out_vrs: outputs.iter().map(|q| q.vr).collect(),
            inputs,
            outputs,
            feed,
            params,
        })
    }

    /// The input start values (FMU units; 0 without one).
    pub(crate) fn input_starts(&self) -> Vec<f64> {
        self.inputs.iter().map(|q| q.start.unwrap_or(0.0)).collect()
    }

    /// The block's port declarations: the inputs, then the outputs.
    pub(crate) fn decls(&self) -> Vec<PortDecl> {
        let mut v = Vec::with_capacity(self.inputs.len() + self.outputs.len());
        for p in &self.inputs {
            let mut d = match p.start {
                Some(s) => PortDecl::optional_input(p.name.clone(), p.fmu_to_si(s)),
                None => PortDecl::input(p.name.clone()),
            };
            d.unit = p.unit;
            v.push(d);
        }
        for p in &self.outputs {
            let mut d = PortDecl::output(p.name.clone());
            d.unit = p.unit;
            v.push(d);
        }
        v
    }
}

/// The build error of a failed call while building: on parameter `param` (the file's),
/// naming the file.
pub(crate) fn call_error(p: &Params, param: &str, file: &str, e: CallError) -> ParamError {
    p.invalid(
        param,
        FmuError::Call {
            file: file.to_string(),
            call: e.to_string(),
        }
        .to_string(),
    )
}

/// The `Fmu` block (see the module docs).
pub struct FmuBlock {
    step: f64,
    io: Io,
    /// The inputs last set (FMU units) and a scratch buffer.
    u: Vec<f64>,
    u_new: Vec<f64>,
    /// The held outputs (SI) and a scratch buffer (FMU units).
    y: Vec<f64>,
    y_raw: Vec<f64>,
    t0: f64,
    /// The communication point the FMU is at.
    last_t: f64,
    /// The instant of the last sample (to resample at the same instant).
    hit_t: f64,
    /// The instance waits for `fmi3ExitInitializationMode` (first `update_modes`).
    first: bool,
    /// Why the run failed (the message, and whether it has been logged as an event).
    failed: Option<(String, bool)>,
    /// Declared before `fmu`: freed before the library is unloaded.
    inst: Box<dyn CoSim>,
    fmu: Unpacked,
}

/// Units, interned: a port's unit is a `&'static str`, and the same few units come back
/// at every build.
fn intern(s: &str) -> &'static str {
    static UNITS: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut v = UNITS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(u) = v.iter().find(|u| **u == s) {
        return u;
    }
    let u: &'static str = Box::leak(s.to_string().into_boxed_str());
    v.push(u);
    u
}

/// The port name of an FMU variable name (see the module docs).
pub fn port_name(var: &str) -> String {
    let mut s: String = var
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// The port of variable `v`, with its unit conversion.
fn port(d: &Description, v: &Variable) -> Port {
    let mut p = Port {
        name: port_name(&v.name),
        vr: v.value_reference,
        factor: 1.0,
        offset: 0.0,
        unit: None,
        start: v.start,
    };
    let Some(unit) = v.unit.as_deref() else {
        return p;
    };
    let known = parse_unit(unit).ok();
    if let Some(def) = d.units.get(unit) {
        (p.factor, p.offset) = (def.factor, def.offset);
    } else if let Some(u) = known {
        p.factor = u.factor;
    }
    if let Some(u) = known.filter(|u| u.dim != drivelink_core::units::Dim::ONE) {
        let si = match u.dim.derived_name() {
            Some(n) => n.replace('·', "*"),
            None => u.dim.ascii(),
        };
        if parse_unit(&si).is_ok() {
            p.unit = Some(intern(&si));
        }
    }
    p
}

/// The scalar `Float64` ports of causality `c`, in description order.
fn ports_of(d: &Description, c: Causality) -> Vec<Port> {
    d.variables
        .iter()
        .filter(|v| v.causality == c && v.type_name == "Float64" && !v.array)
        .map(|v| port(d, v))
        .collect()
}

/// Two variables that map to one port name are an error.
fn check_names(fmu: &Unpacked, ports: &[&Port]) -> Result<(), FmuError> {
    for (i, a) in ports.iter().enumerate() {
        if let Some(b) = ports[..i].iter().find(|b| b.name == a.name) {
            let var = |p: &Port| {
                fmu.description
                    .variables
                    .iter()
                    .find(|v| v.value_reference == p.vr)
                    .map_or_else(String::new, |v| v.name.clone())
            };
            return Err(FmuError::PortClash {
                file: fmu.file.clone(),
                first: var(b),
                second: var(a),
                port: a.name.clone(),
            });
        }
    }
    Ok(())
}

/// The FMU parameter values given in the `parameters` object, in the FMU's units.
fn parameter_values(fmu: &Unpacked, given: &Value) -> Result<(Vec<u32>, Vec<f64>), String> {
    let Value::Object(m) = given else {
        return Err("must be an object {\"NAME\": VALUE, ...}".into());
    };
    let d = &fmu.description;
    let (mut vrs, mut vals) = (Vec::new(), Vec::new());
    for (name, value) in m {
        let var = d
            .variables
            .iter()
            .find(|v| v.name == *name)
            .ok_or_else(|| {
                let names = d.variables.iter().map(|v| v.name.as_str());
                FmuError::UnknownVariable {
                    file: fmu.file.clone(),
                    name: name.clone(),
                    hint: drivelink_core::suggest::hint(name, names),
                }
                .to_string()
            })?;
        let bad = |reason: String| {
            FmuError::BadValue {
                file: fmu.file.clone(),
                name: name.clone(),
                reason,
            }
            .to_string()
        };
        let settable = matches!(
            var.causality,
            Causality::Parameter | Causality::StructuralParameter
        ) && !var.constant;
        if !settable || var.type_name != "Float64" || var.array {
            let what = if var.constant {
                "a constant".to_string()
            } else if settable {
                format!(
                    "a {} parameter (only scalar Float64 parameters are supported)",
                    var.type_name
                )
            } else {
                let c = var.causality.as_str();
                let article = if c.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                };
                format!("{article} {c}")
            };
            return Err(FmuError::NotParameter {
                file: fmu.file.clone(),
                name: name.clone(),
                what,
            }
            .to_string());
        }
        let v = match value {
            Value::Number(n) => n.as_f64().ok_or_else(|| bad("is not a number".into()))?,
            Value::String(s) => {
                let q = drivelink_core::expr::eval(s, &|_| None).map_err(|e| bad(e.to_string()))?;
                let p = port(d, var);
                match (q.dim, var.unit.as_deref().and_then(|u| parse_unit(u).ok())) {
                    (Some(qd), Some(u)) if qd != u.dim => {
                        return Err(bad(format!(
                            "\"{s}\" does not have the dimension of the variable's unit {}",
                            var.unit.as_deref().unwrap_or("")
                        )))
                    }
                    (Some(_), _) => p.si_to_fmu(q.value),
                    (None, _) => q.value,
                }
            }
            _ => return Err(bad("must be a number or a string with a unit".into())),
        };
        if !v.is_finite() {
            return Err(bad(format!("must be finite, got {v}")));
        }
        vrs.push(var.value_reference);
        vals.push(v);
    }
    Ok((vrs, vals))
}

/// Build an `Fmu` block from its parameters.
pub fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let (param, file) = match (p.has("fmu"), p.has("path")) {
        (true, true) => return Err(p.invalid("path", "give either `fmu` or `path`, not both")),
        (true, false) => ("fmu", p.path("fmu")?.display().to_string()),
        (false, true) => ("path", p.path("path")?.display().to_string()),
        (false, false) => return Err(p.invalid("fmu", "is required: the path of the .fmu file")),
    };
    let kind = match p.has("kind") {
        true => Some(match p.text("kind")? {
            "me" => Kind::ModelExchange,
            _ => Kind::CoSimulation,
        }),
        false => None,
    };
    let fmu = crate::open(Path::new(&file), &file, &p.block, kind).map_err(|e| {
        let on = match e {
            FmuError::NoModelExchange { .. } | FmuError::NoCoSimulation { .. }
                if kind.is_some() =>
            {
                "kind"
            }
            _ => param,
        };
        p.invalid(on, e.to_string())
    })?;
    match fmu.kind {
        Kind::ModelExchange if p.has("step") => Err(p.invalid(
            "step",
            format!(
                "applies to Co-Simulation only, and '{file}' runs as Model Exchange here ({}): remove `step`, or set `kind` to \"cs\" to step it",
                if kind.is_some() {
                    "kind \"me\""
                } else {
                    "the default for an FMU that offers it"
                }
            ),
        )),
        Kind::ModelExchange => crate::me_block::build(p, param, fmu),
        Kind::CoSimulation => build_cs(p, param, fmu),
    }
}

/// Build the Co-Simulation block of the unpacked `fmu`.
fn build_cs(p: &Params, param: &str, fmu: Unpacked) -> Result<Box<dyn Block>, ParamError> {
    let file = fmu.file.clone();
    let step = match p.opt_num("step")? {
        Some(s) => s,
        None => fmu.description.default_step.ok_or_else(|| {
            p.invalid(
                "step",
                format!("is required: '{file}' has no DefaultExperiment stepSize"),
            )
        })?,
    };
    if !(step > 0.0 && step.is_finite()) {
        return Err(p.invalid("step", format!("must be finite and > 0, got {step}")));
    }
    let io = Io::new(p, param, &fmu)?;
    let call = |e: CallError| call_error(p, param, &file, e);
    let token = fmu.description.instantiation_token.clone();
    let inst = fmu
        .library
        .instantiate(&p.block, &token, fmu.resources.as_deref())
        .map_err(call)?;
    let mut b = FmuBlock {
        step,
        u: io.input_starts(),
        u_new: vec![0.0; io.inputs.len()],
        y: vec![0.0; io.outputs.len()],
        y_raw: vec![0.0; io.outputs.len()],
        io,
        t0: 0.0,
        last_t: 0.0,
        hit_t: f64::NAN,
        first: true,
        failed: None,
        inst,
        fmu,
    };
    // Initialise once at t = 0 with the start values: parameter values the FMU refuses
    // are errors of the netlist, found before any run.
    b.initialise(0.0).map_err(call)?;
    b.inst.set(&b.io.in_vrs, &b.u).map_err(call)?;
    b.inst.exit_initialization().map_err(call)?;
    Ok(Box::new(b))
}

impl FmuBlock {
    /// From any state but fatal to initialization mode at `t0`, parameters set.
    fn initialise(&mut self, t0: f64) -> Result<(), CallError> {
        if self.inst.phase() != Phase::Instantiated {
            self.inst.reset()?;
        }
        self.inst.set(&self.io.params.0, &self.io.params.1)?;
        self.inst.enter_initialization(t0)
    }

    /// The run fails: outputs NaN, the message kept for [`FmuBlock::report_failure`].
    fn fail(&mut self, e: CallError, t: f64) {
        let msg = format!("FMU '{}' failed at t = {t} s: {e}", self.fmu.file);
        self.failed = Some((msg, false));
        self.y.fill(f64::NAN);
    }

    /// Fail the run with the FMU's message (once).
    fn report_failure(&mut self, cx: &mut EventCx) {
        if let Some((msg, reported)) = &mut self.failed {
            if !*reported {
                *reported = true;
                cx.fail(msg.clone());
            }
        }
    }

    /// Sample the inputs (into `u_new`, FMU units); true if they differ from those set.
    fn sample_inputs(&mut self, cx: &EventCx) -> bool {
        let mut changed = false;
        for (i, p) in self.io.inputs.iter().enumerate() {
            let v = p.si_to_fmu(cx.u(i));
            changed |= !same(v, self.u[i]);
            self.u_new[i] = v;
        }
        changed
    }

    /// Set the sampled inputs, optionally leave initialization mode, read the outputs;
    /// true if an output changed.
    fn exchange(&mut self, exit_init: bool) -> Result<bool, CallError> {
        self.u.copy_from_slice(&self.u_new);
        self.inst.set(&self.io.in_vrs, &self.u)?;
        if exit_init {
            self.inst.exit_initialization()?;
        }
        self.inst.get(&self.io.out_vrs, &mut self.y_raw)?;
        let mut changed = false;
        for ((y, &raw), p) in self.y.iter_mut().zip(&self.y_raw).zip(&self.io.outputs) {
            let v = p.fmu_to_si(raw);
            changed |= !same(*y, v);
            *y = v;
        }
        Ok(changed)
    }
}

/// Same value, NaN equal to NaN.
fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// The next communication point `t0 + k·step` strictly after `t` (k >= 1 integer).
fn next_point(t: f64, t0: f64, step: f64) -> f64 {
    if t.is_nan() || t == f64::INFINITY {
        return f64::INFINITY;
    }
    let mut k = ((t - t0) / step).floor().max(0.0) + 1.0;
    while t0 + k * step <= t {
        k += 1.0;
    }
    while k > 1.0 && t0 + (k - 1.0) * step > t {
        k -= 1.0;
    }
    t0 + k * step
}

/// Why a model with an `Fmu` block cannot save its run state.
pub(crate) const UNSAVED_STATE: &str =
    "the run state of an imported FMU (its instance) cannot be saved: a model with an Fmu block has no saved state";

impl Block for FmuBlock {
    /// The imported FMU keeps run data of its own (its instance) that drivelink does not
    /// save: a model with an `Fmu` block has no saved state.
    fn save_run_state(&self) -> Result<Option<drivelink_core::RunState>, String> {
        Err(crate::block::UNSAVED_STATE.into())
    }
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: self.io.decls(),
            outputs: Outputs::Constant,
            time_event_period: Some((self.step, "step")),
            ..BlockDecl::default()
        }
        .feedthrough_by(|input| self.io.feed.get(input).copied().unwrap_or(true))
    }
    fn outputs(&self, _cx: &Cx, y: &mut [f64]) {
        y[..self.y.len()].copy_from_slice(&self.y);
    }
    fn next_time_event(&self, t: f64) -> f64 {
        next_point(t, self.t0, self.step)
    }
    fn reset(&mut self, t0: f64) {
        self.t0 = t0;
        self.last_t = t0;
        self.hit_t = f64::NAN;
        self.first = true;
        self.failed = None;
        self.y.fill(0.0);
        self.u = self.io.input_starts();
        if self.inst.phase() == Phase::Fatal {
            let e = CallError {
                function: "(an earlier call)",
                status: "Fatal",
                messages: vec!["the FMU cannot be used any more".into()],
            };
            self.fail(e, t0);
            return;
        }
        if let Err(e) = self.initialise(t0) {
            self.fail(e, t0);
        }
    }
    fn time_event(&mut self, cx: &mut EventCx) {
        if self.failed.is_some() || self.first {
            return;
        }
        let h = cx.t - self.last_t;
        if h > 0.0 {
            match self.inst.do_step(self.last_t, h) {
                Ok(terminate) => {
                    if terminate {
                        cx.request_stop();
                    }
                }
                Err(e) => {
                    self.fail(e, cx.t);
                    self.report_failure(cx);
                    return;
                }
            }
            self.last_t = cx.t;
        }
        self.hit_t = cx.t;
        self.sample_inputs(cx);
        if let Err(e) = self.exchange(false) {
            self.fail(e, cx.t);
            self.report_failure(cx);
        }
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        if self.failed.is_some() {
            self.report_failure(cx);
            return false;
        }
        let first = std::mem::take(&mut self.first);
        if !first && cx.t != self.hit_t {
            return false;
        }
        if first {
            self.hit_t = cx.t;
            self.last_t = cx.t;
        }
        if !self.sample_inputs(cx) && !first {
            return false;
        }
        match self.exchange(first) {
            Ok(changed) => changed,
            Err(e) => {
                self.fail(e, cx.t);
                self.report_failure(cx);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_names_keep_letters_digits_and_underscores() {
        assert_eq!(port_name("clutch.w_rel"), "clutch_w_rel");
        assert_eq!(port_name("der(x)"), "der_x_");
        assert_eq!(port_name("2nd"), "_2nd");
        assert_eq!(port_name("a[1]"), "a_1_");
    }

    #[test]
    fn communication_points_are_counted_from_the_start_time() {
        assert_eq!(next_point(0.0, 0.0, 0.1), 0.1);
        let mut t = 0.0;
        for k in 1..=1000 {
            t = next_point(t, 0.0, 0.1);
            assert_eq!(t, k as f64 * 0.1, "k = {k}");
        }
        assert_eq!(next_point(0.25, 0.05, 0.1), 0.05 + 3.0 * 0.1);
        assert_eq!(next_point(-1.0, 0.5, 0.1), 0.6);
    }
}
