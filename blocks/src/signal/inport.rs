//! `Inport`: a signal coming from outside the model. In a native run it is the constant
//! `value`; in an exported FMU each top-level `Inport` is an input variable, and the FMU
//! sets its value through the block's [`InputHandle`] (shared as its port's data,
//! [`Block::shared`]), held between the instants the importer changes it.
//!
//! The output is declared constant (it changes only at those instants): the model
//! evaluates it after every event and whenever [`drivelink_core::Model::inputs_changed`]
//! says it changed, not at every evaluation.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use drivelink_core::compile::ANY_UNIT as ANY;
use drivelink_core::units::parse_unit;
use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, Outputs, ParamError, ParamKind, ParamSpec, Params,
    PortDecl, Registry,
};

/// The registry name of the block.
pub const TYPE_NAME: &str = "Inport";

/// The parameters of `Inport` (also read by the FMU exporter for the variable's start
/// value and unit).
pub fn param_specs() -> Vec<ParamSpec> {
    vec![
        ParamSpec::number(
            "value",
            ANY,
            0.0,
            "the output in a native run, and the start value of the FMU input",
        ),
        ParamSpec::optional(
            "unit",
            ParamKind::Text,
            "SI unit of the signal (N*m, rad/s, ...), declared for the FMU input",
        ),
    ]
}

/// Register `Inport`.
pub fn register(r: &mut Registry) {
    r.register(type_name_type());
}

/// The `TYPE_NAME` block type: its parameters and how it is built.
fn type_name_type() -> BlockType {
    BlockType {
        name: TYPE_NAME,
        category: "signal",
        doc: "An input of the model: y = value in a native run; in an exported FMU a top-level \
         Inport is an input variable named after the block (start = value), held between \
         the instants the importer sets it.",
        ports_doc: "y[out]",
        params: param_specs(),
        build: BlockBuild::Primitive(build),
    }
}

/// The start value and the declared unit of an `Inport` with parameters `p`. The unit
/// must be an SI unit (factor 1: `rad/s`, not `rpm`), since the value is SI.
pub fn settings(p: &Params) -> Result<(f64, Option<String>), ParamError> {
    let value = p.num("value")?;
    let unit = if p.has("unit") {
        let u = p.text("unit")?.trim().to_string();
        let parsed = parse_unit(&u).map_err(|e| p.invalid("unit", e.to_string()))?;
        if parsed.factor != 1.0 {
            return Err(p.invalid(
                "unit",
                format!(
                    "'{u}' is not an SI unit: signals are SI (give the SI unit of its dimension)"
                ),
            ));
        }
        Some(u).filter(|u| !u.is_empty() && u != "1")
    } else {
        None
    };
    Ok((value, unit))
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let (value, _) = settings(p)?;
    Ok(Box::new(Inport {
        input: Arc::new(InputHandle::new(value)),
    }))
}

/// The value of one `Inport` as the FMU runtime sets it: one per block of each model
/// instance (never shared between instances), read by the block at every evaluation.
#[derive(Debug)]
pub struct InputHandle {
    bits: AtomicU64,
    start: f64,
}

impl InputHandle {
    fn new(start: f64) -> Self {
        InputHandle {
            bits: AtomicU64::new(start.to_bits()),
            start,
        }
    }
    /// The current value.
    pub fn get(&self) -> f64 {
        f64::from_bits(self.bits.load(Ordering::Relaxed))
    }
    /// Set the value (the model must then be told: [`drivelink_core::Model::inputs_changed`],
    /// or a run or piece started).
    pub fn set(&self, v: f64) {
        self.bits.store(v.to_bits(), Ordering::Relaxed);
    }
    /// The block's `value` parameter.
    pub fn start(&self) -> f64 {
        self.start
    }
}

/// `Inport`: y = the handle's value (see the module docs).
#[derive(Debug)]
pub struct Inport {
    input: Arc<InputHandle>,
}

impl Block for Inport {
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: vec![PortDecl::output("y")],
            outputs: Outputs::Constant,
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, _cx: &Cx, y: &mut [f64]) {
        y[0] = self.input.get();
    }
    fn shared(&self, _port: usize) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        Some(self.input.clone())
    }
}
