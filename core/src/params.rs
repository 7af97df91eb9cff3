//! Block parameters and the block registry.
//!
//! Every block type declares its parameters ([`ParamSpec`]: name, SI unit, default, one-line
//! doc). The netlist loader and the Rust `Diagram` both give raw JSON values; they are
//! resolved here into typed [`ParamValue`]s (expressions evaluated, units converted and
//! checked against the declared dimension) before the block's constructor runs.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::block::{Block, PortDecl};
use crate::diagram::Diagram;
use crate::error::ParamError;

/// What kind of value a parameter takes.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamKind {
    /// A number (or an expression) in the given SI unit ("1" dimensionless).
    Number { unit: &'static str },
    /// true / false.
    Bool,
    /// One of the given strings.
    Choice(&'static [&'static str]),
    /// A free string (for example `Sum.signs`).
    Text,
    /// An array of numbers (`[1, 2]`), unit per entry.
    Vector { unit: &'static str },
    /// Polynomial coefficients in `s`, highest power first (`TransferFcn.num`/`den`):
    /// the coefficient of `s^k` may carry a unit, seconds to the `k`-th power times a unit
    /// common to the whole polynomial (`["tau", 1]` with `tau = "250 ms"`, or
    /// `[1, "1/tau"]`); bare numbers are SI.
    Polynomial,
    /// A table `[[x, y], ...]` with `cols` columns (0 = any).
    Table { cols: usize },
    /// A matrix `[[...], ...]` (StateSpace).
    Matrix,
    /// A number in `unit`, or a table `[[x, y], ...]` of it (`Clutch.mu`).
    NumberOrTable { unit: &'static str },
    /// A JSON object of numbers with these fields (name, SI unit, default), resolved to a
    /// vector in field order; keys not given keep their defaults
    /// (`WheelCollider.forward_friction`).
    Record(&'static [RecordField]),
    /// Any JSON value (a list of objects: `Road.features`), kept as written and parsed by
    /// the block (read it with [`Params::json`]); strings inside it that carry units are
    /// evaluated by the block, without model parameters.
    Json,
}

/// One field of a [`ParamKind::Record`] parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecordField {
    /// Key in the JSON object.
    pub name: &'static str,
    /// SI unit of its value.
    pub unit: &'static str,
    /// Default value (SI).
    pub default: f64,
}

impl ParamKind {
    /// The default JSON object of a record kind (every field at its default).
    pub fn record_default(fields: &[RecordField]) -> Value {
        Value::Object(
            fields
                .iter()
                .map(|f| (f.name.to_string(), Value::from(f.default)))
                .collect(),
        )
    }
}

/// A parameter default.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamDefault {
    /// The parameter must be given.
    Required,
    /// May be omitted; the block handles absence.
    Optional,
    /// A JSON default value (SI).
    Value(Value),
}

/// A declared parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    pub default: ParamDefault,
    pub doc: &'static str,
}

impl ParamSpec {
    pub fn number(name: &'static str, unit: &'static str, default: f64, doc: &'static str) -> Self {
        ParamSpec {
            name,
            kind: ParamKind::Number { unit },
            default: ParamDefault::Value(Value::from(default)),
            doc,
        }
    }
    pub fn required(name: &'static str, unit: &'static str, doc: &'static str) -> Self {
        ParamSpec {
            name,
            kind: ParamKind::Number { unit },
            default: ParamDefault::Required,
            doc,
        }
    }
    pub fn optional(name: &'static str, kind: ParamKind, doc: &'static str) -> Self {
        ParamSpec {
            name,
            kind,
            default: ParamDefault::Optional,
            doc,
        }
    }
    pub fn with(
        name: &'static str,
        kind: ParamKind,
        default: ParamDefault,
        doc: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            kind,
            default,
            doc,
        }
    }
    pub fn unit(&self) -> Option<&'static str> {
        match self.kind {
            ParamKind::Number { unit }
            | ParamKind::Vector { unit }
            | ParamKind::NumberOrTable { unit } => Some(unit),
            _ => None,
        }
    }
}

/// A resolved parameter value (SI).
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    Number(f64),
    Bool(bool),
    Text(String),
    Vector(Vec<f64>),
    Table(Vec<Vec<f64>>),
}

/// The resolved parameters of one block, with the block's name for error messages.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub block: String,
    pub type_name: String,
    pub values: BTreeMap<String, ParamValue>,
}

impl Params {
    fn err(&self, param: &str, message: impl Into<String>) -> ParamError {
        ParamError {
            block: self.block.clone(),
            param: param.to_string(),
            message: message.into(),
        }
    }
    /// Error for a value out of its valid range.
    pub fn invalid(&self, param: &str, message: impl Into<String>) -> ParamError {
        self.err(param, message)
    }
    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }
    pub fn num(&self, name: &str) -> Result<f64, ParamError> {
        match self.values.get(name) {
            Some(ParamValue::Number(v)) => Ok(*v),
            Some(ParamValue::Bool(b)) => Ok(if *b { 1.0 } else { 0.0 }),
            Some(_) => Err(self.err(name, "expected a number")),
            None => Err(self.err(name, "is required")),
        }
    }
    pub fn opt_num(&self, name: &str) -> Result<Option<f64>, ParamError> {
        if self.has(name) {
            self.num(name).map(Some)
        } else {
            Ok(None)
        }
    }
    /// A number that must be > 0.
    pub fn positive(&self, name: &str) -> Result<f64, ParamError> {
        let v = self.num(name)?;
        if v > 0.0 {
            Ok(v)
        } else {
            Err(self.err(name, format!("must be > 0, got {v}")))
        }
    }
    /// A number that must be >= 0.
    pub fn non_negative(&self, name: &str) -> Result<f64, ParamError> {
        let v = self.num(name)?;
        if v >= 0.0 {
            Ok(v)
        } else {
            Err(self.err(name, format!("must be >= 0, got {v}")))
        }
    }
    pub fn bool(&self, name: &str) -> Result<bool, ParamError> {
        match self.values.get(name) {
            Some(ParamValue::Bool(b)) => Ok(*b),
            Some(ParamValue::Number(v)) => Ok(*v != 0.0),
            Some(_) => Err(self.err(name, "expected true or false")),
            None => Err(self.err(name, "is required")),
        }
    }
    pub fn text(&self, name: &str) -> Result<&str, ParamError> {
        match self.values.get(name) {
            Some(ParamValue::Text(s)) => Ok(s),
            Some(_) => Err(self.err(name, "expected a string")),
            None => Err(self.err(name, "is required")),
        }
    }
    pub fn vector(&self, name: &str) -> Result<&[f64], ParamError> {
        match self.values.get(name) {
            Some(ParamValue::Vector(v)) => Ok(v),
            Some(_) => Err(self.err(name, "expected an array of numbers")),
            None => Err(self.err(name, "is required")),
        }
    }
    pub fn table(&self, name: &str) -> Result<&[Vec<f64>], ParamError> {
        match self.values.get(name) {
            Some(ParamValue::Table(v)) => Ok(v),
            Some(_) => Err(self.err(name, "expected a table [[x, y], ...]")),
            None => Err(self.err(name, "is required")),
        }
    }
    /// A [`ParamKind::Json`] parameter's value.
    pub fn json(&self, name: &str) -> Result<Value, ParamError> {
        let text = self.text(name)?;
        serde_json::from_str(text).map_err(|e| self.err(name, format!("is not JSON: {e}")))
    }
    /// A two-column table with a strictly increasing first column, as `(xs, ys)`.
    pub fn xy_table(&self, name: &str) -> Result<(Vec<f64>, Vec<f64>), ParamError> {
        let t = self.table(name)?;
        xy_from_rows(t).map_err(|m| self.err(name, m))
    }
}

/// Split `[[x, y], ...]` rows into axis and values, checking shape and monotonicity.
pub fn xy_from_rows(t: &[Vec<f64>]) -> Result<(Vec<f64>, Vec<f64>), String> {
    if t.is_empty() {
        return Err("table is empty; expected [[x, y], ...] with at least one row".into());
    }
    let mut xs = Vec::with_capacity(t.len());
    let mut ys = Vec::with_capacity(t.len());
    for (i, r) in t.iter().enumerate() {
        if r.len() != 2 {
            return Err(format!("row {i} has {} entries; expected [x, y]", r.len()));
        }
        if let Some(&prev) = xs.last() {
            if r[0] <= prev {
                return Err(format!(
                    "first column must be strictly increasing, but row {i} has x = {} after {prev}",
                    r[0]
                ));
            }
        }
        xs.push(r[0]);
        ys.push(r[1]);
    }
    Ok((xs, ys))
}

/// How a block type is built.
pub enum BlockBuild {
    /// A primitive block from resolved parameters.
    Primitive(fn(&Params) -> Result<Box<dyn Block>, ParamError>),
    /// A composite block: expands into an inner diagram (a masked subsystem) whose exported
    /// ports and variable aliases are given by the diagram's `ports` and `aliases`.
    Composite(fn(&Params) -> Result<Diagram, ParamError>),
}

/// A registered block type.
pub struct BlockType {
    pub name: &'static str,
    pub category: &'static str,
    pub doc: &'static str,
    pub params: Vec<ParamSpec>,
    pub build: BlockBuild,
    /// Ports for the catalogue (from default parameters); the built block is authoritative.
    pub ports_doc: &'static str,
}

impl BlockType {
    /// Raw parameters for an example instance: every required parameter gets an example
    /// value of its kind (numbers `x`), the others keep their defaults.
    pub fn example_params(&self, x: f64) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        for p in self
            .params
            .iter()
            .filter(|p| p.default == ParamDefault::Required)
        {
            let v = match &p.kind {
                ParamKind::Number { .. } | ParamKind::NumberOrTable { .. } => Value::from(x),
                ParamKind::Bool => Value::from(false),
                ParamKind::Choice(opts) => Value::from(opts.first().copied().unwrap_or_default()),
                ParamKind::Text => Value::from(""),
                // Three entries: a 3-D vector (a position, principal inertias).
                ParamKind::Vector { .. } => Value::from(vec![x, x, x]),
                ParamKind::Polynomial => Value::from(vec![x, x]),
                ParamKind::Table { cols } => {
                    let n = (*cols).max(1);
                    Value::from(vec![vec![0.0; n], vec![x; n]])
                }
                ParamKind::Matrix => Value::from(vec![vec![x]]),
                ParamKind::Record(fields) => ParamKind::record_default(fields),
                ParamKind::Json => Value::Array(Vec::new()),
            };
            m.insert(p.name.to_string(), v);
        }
        m
    }
}

/// Registry of block types (type name -> constructor + parameter docs).
#[derive(Default)]
pub struct Registry {
    types: BTreeMap<&'static str, BlockType>,
}

impl Registry {
    pub fn new() -> Self {
        Registry::default()
    }
    pub fn register(&mut self, t: BlockType) {
        self.types.insert(t.name, t);
    }
    pub fn get(&self, name: &str) -> Option<&BlockType> {
        self.types.get(name)
    }
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.types.keys().copied()
    }
    pub fn types(&self) -> impl Iterator<Item = &BlockType> {
        self.types.values()
    }
}

/// Ports of a built block, for the catalogue.
pub fn port_summary(ports: &[PortDecl]) -> String {
    ports
        .iter()
        .map(|p| format!("{}[{}]", p.name, p.kind.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}
