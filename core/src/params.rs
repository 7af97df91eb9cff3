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
    /// The directory relative file paths start from (the block's netlist file's; `None`
    /// for a diagram built in code: the working directory). See [`Params::path`].
    pub base_dir: Option<std::path::PathBuf>,
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
    /// Text parameter `name` as a file path: a relative path is taken from the directory of
    /// the netlist the block was written in ([`Params::base_dir`]), as a subsystem `file`
    /// is; an absolute one as it is.
    pub fn path(&self, name: &str) -> Result<std::path::PathBuf, ParamError> {
        let text = self.text(name)?;
        let p = std::path::Path::new(text);
        Ok(match &self.base_dir {
            Some(dir) if p.is_relative() => dir.join(p),
            _ => p.to_path_buf(),
        })
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
            Err(self.err(name, format!("must be > 0, got {}", crate::number::Num(v))))
        }
    }
    /// A number that must be >= 0.
    pub fn non_negative(&self, name: &str) -> Result<f64, ParamError> {
        let v = self.num(name)?;
        if v >= 0.0 {
            Ok(v)
        } else {
            Err(self.err(name, format!("must be >= 0, got {}", crate::number::Num(v))))
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

/// Two block types registered under one name. The first registration is kept; the later
/// one is refused (by [`Registry::register`], which records it, or by
/// [`Registry::try_register`], which returns it as this error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "block type '{name}' is registered twice: category '{kept_category}' (kept) and \
     category '{refused_category}' (refused)"
)]
pub struct RegistryError {
    /// The type name both registrations use.
    pub name: &'static str,
    /// Category of the registration that stays in the registry.
    pub kept_category: &'static str,
    /// Category of the refused registration.
    pub refused_category: &'static str,
}

/// Registry of block types (type name -> constructor + parameter docs).
///
/// A name names one type: a second registration under a name already taken is refused and
/// the first stays. The library registers its types at start-up from code
/// ([`Registry::register`]), where a clash is a defect of the library: it is recorded
/// ([`Registry::duplicates`]) and the library's tests require the list to be empty. Code
/// that registers its own types at run time uses [`Registry::try_register`] and gets the
/// clash as a [`RegistryError`]. A deliberate redefinition says so with
/// [`Registry::replace`].
#[derive(Default)]
pub struct Registry {
    types: BTreeMap<&'static str, BlockType>,
    duplicates: Vec<RegistryError>,
}

impl Registry {
    pub fn new() -> Self {
        Registry::default()
    }
    /// Registers `t`; if its name is taken, `t` is refused, the first type stays, and the
    /// clash is recorded in [`Registry::duplicates`].
    pub fn register(&mut self, t: BlockType) {
        if let Err(e) = self.try_register(t) {
            self.duplicates.push(e);
        }
    }
    /// Registers `t`, or refuses it with a [`RegistryError`] naming the type and both
    /// categories if its name is taken (the registry is then unchanged).
    pub fn try_register(&mut self, t: BlockType) -> Result<(), RegistryError> {
        if let Some(kept) = self.types.get(t.name) {
            return Err(RegistryError {
                name: t.name,
                kept_category: kept.category,
                refused_category: t.category,
            });
        }
        self.types.insert(t.name, t);
        Ok(())
    }
    /// Registers `t` as the final definition of its name, replacing any earlier type of
    /// that name (returned); the clashes recorded for the name are superseded and dropped.
    pub fn replace(&mut self, t: BlockType) -> Option<BlockType> {
        self.duplicates.retain(|d| d.name != t.name);
        self.types.insert(t.name, t)
    }
    /// The registrations [`Registry::register`] refused because their name was taken, in
    /// registration order.
    pub fn duplicates(&self) -> &[RegistryError] {
        &self.duplicates
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

#[cfg(test)]
mod tests {
    use super::*;

    fn no_block(p: &Params) -> Result<Box<dyn Block>, ParamError> {
        Err(p.invalid("x", "test type"))
    }

    fn typ(name: &'static str, category: &'static str, doc: &'static str) -> BlockType {
        BlockType {
            name,
            category,
            doc,
            params: vec![],
            build: BlockBuild::Primitive(no_block),
            ports_doc: "",
        }
    }

    #[test]
    fn a_second_type_with_a_taken_name_is_refused_and_recorded() {
        let mut r = Registry::new();
        r.register(typ("Gain", "signal", "first"));
        r.register(typ("Spring", "mech", "other"));
        r.register(typ("Gain", "vehicle", "second"));
        assert_eq!(r.get("Gain").map(|t| t.doc), Some("first"));
        assert_eq!(r.get("Gain").map(|t| t.category), Some("signal"));
        assert_eq!(r.names().collect::<Vec<_>>(), ["Gain", "Spring"]);
        let d = r.duplicates();
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0],
            RegistryError {
                name: "Gain",
                kept_category: "signal",
                refused_category: "vehicle"
            }
        );
        let msg = d[0].to_string();
        for part in ["'Gain'", "'signal'", "'vehicle'", "kept", "refused"] {
            assert!(msg.contains(part), "{msg}");
        }
    }

    #[test]
    fn try_register_returns_the_clash_and_leaves_the_registry_unchanged() {
        let mut r = Registry::new();
        assert_eq!(r.try_register(typ("Motor", "powertrain", "first")), Ok(()));
        let e = r.try_register(typ("Motor", "test", "second")).unwrap_err();
        assert_eq!(e.name, "Motor");
        assert_eq!(e.kept_category, "powertrain");
        assert_eq!(e.refused_category, "test");
        assert_eq!(r.get("Motor").map(|t| t.doc), Some("first"));
        assert_eq!(r.types().count(), 1);
        assert!(r.duplicates().is_empty());
    }

    #[test]
    fn replace_is_the_final_definition_and_clears_the_name_s_clashes() {
        let mut r = Registry::new();
        r.register(typ("Abs", "signal", "math"));
        r.register(typ("Abs", "vehicle", "controller"));
        r.register(typ("Sum", "signal", "sum"));
        r.register(typ("Sum", "mech", "clash"));
        assert_eq!(r.duplicates().len(), 2);
        let old = r.replace(typ("Abs", "signal / vehicle", "merged"));
        assert_eq!(old.map(|t| t.doc), Some("math"));
        assert_eq!(r.get("Abs").map(|t| t.doc), Some("merged"));
        // Only the clash of the replaced name is superseded.
        assert_eq!(r.duplicates().len(), 1);
        assert_eq!(r.duplicates()[0].name, "Sum");
        assert!(r.replace(typ("New", "test", "new")).is_none());
    }
}
