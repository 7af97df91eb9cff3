//! `drivelink schema`: a JSON Schema (draft 2020-12) of the netlist format.
//!
//! Keywords used: `type` (a name or a list), `required`, `properties`,
//! `additionalProperties`, `enum`, `const`, `items`, `minItems`, `oneOf`, `anyOf`, `$ref`
//! (to `#` and `#/$defs/...`), `minimum`, `maximum`, `minLength`, plus the annotations `title`,
//! `description`, `default`, `examples` (display units: any unit expression is accepted).
//!
//! The netlist's own objects (top level, `solver`, scopes, scope signals) are built from the
//! tables in [`crate::spec`], the same the loader reads; block parameters from the registry.

use serde_json::{json, Map, Value};

use crate::spec::{self, Field, Kind, Section};
use drivelink_core::params::{ParamDefault, ParamKind, ParamSpec};
use drivelink_core::{DisplayUnit, Registry};

fn param_schema(p: &ParamSpec) -> Value {
    let mut s = match &p.kind {
        ParamKind::Number { .. } => json!({"type": ["number", "string"]}),
        ParamKind::Bool => json!({"type": ["boolean", "number"]}),
        // One of the options, or the name of a text model parameter holding one.
        ParamKind::Choice(opts) => json!({"anyOf": [
            {"enum": opts},
            {"type": "string"}
        ]}),
        ParamKind::Text => json!({"type": "string"}),
        ParamKind::Json => json!({}),
        ParamKind::Vector { .. } | ParamKind::Polynomial | ParamKind::Table { .. } => {
            json!({"type": ["array", "string"]})
        }
        ParamKind::Matrix | ParamKind::NumberOrTable { .. } => {
            json!({"type": ["array", "number", "string"]})
        }
        ParamKind::Record(fields) => json!({
            "type": "object",
            "additionalProperties": false,
            "properties": fields
                .iter()
                .map(|f| (f.name.to_string(), json!({"type": ["number", "string"]})))
                .collect::<serde_json::Map<String, Value>>()
        }),
    };
    let unit = p.unit().map(|u| format!(" [{u}]")).unwrap_or_default();
    s["description"] = Value::from(format!("{}{unit}", p.doc));
    if let ParamDefault::Value(v) = &p.default {
        s["default"] = v.clone();
    }
    s
}

/// The schema, with one `oneOf` branch per registered block type.
pub fn schema(reg: &Registry) -> Value {
    let mut type_names: Vec<&str> = reg.names().collect();
    type_names.push("Subsystem");
    let mut branches = Vec::new();
    for t in reg.types() {
        let mut props = Map::new();
        let mut required = Vec::new();
        for p in &t.params {
            props.insert(p.name.to_string(), param_schema(p));
            if p.default == ParamDefault::Required {
                required.push(p.name);
            }
        }
        let mut params =
            json!({"type": "object", "additionalProperties": false, "properties": props});
        if !required.is_empty() {
            params["required"] = json!(required);
        }
        let mut b = json!({
            "type": "object",
            "description": format!("{} (ports: {})", t.doc, t.ports_doc),
            "additionalProperties": false,
            "properties": {"name": {"type": "string"}, "type": {"const": t.name}, "params": params}
        });
        if !required.is_empty() {
            b["required"] = json!(["name", "type", "params"]);
        }
        branches.push(b);
    }
    let units = DisplayUnit::names();
    let mut sub = object(spec::BLOCK, &type_names, &units);
    sub["description"] = Value::from("A masked subsystem: an inner netlist from \"file\" (relative to this file) or an inline \"diagram\"; \"params\" override its parameters.");
    sub["properties"]["type"] = json!({"const": "Subsystem"});
    sub["oneOf"] = json!([{"required": ["file"]}, {"required": ["diagram"]}]);
    branches.push(sub);
    let top = required(object(spec::TOP, &type_names, &units), &["blocks"]);
    let mut scope = required(object(spec::SCOPE, &type_names, &units), &["name"]);
    scope["oneOf"] = json!([{"required": ["signals"]}, {"required": ["panels"]}]);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://drivelink.invalid/netlist-1.schema.json",
        "title": "drivelink netlist (format version 1)",
        "$ref": "#/$defs/netlist",
        "required": ["drivelink", "blocks"],
        "$defs": {
            "netlist": top,
            "value": {"type": ["number", "string", "boolean", "array"]},
            "block": {
                "type": "object",
                "required": ["name", "type"],
                "properties": {"type": {"enum": type_names}},
                "oneOf": branches
            },
            "signal": {"anyOf": [
                {"type": "string", "description": "block.var"},
                required(object(spec::SIGNAL, &type_names, &units), &["signal"])
            ]},
            "signals": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/signal"}},
            "scope": scope
        }
    })
}

/// `v` with `required` keys.
fn required(mut v: Value, keys: &[&str]) -> Value {
    v["required"] = json!(keys);
    v
}

/// A closed object with one property per field.
fn object(fields: &[Field], type_names: &[&str], units: &[&str]) -> Value {
    let props: Map<String, Value> = fields
        .iter()
        .map(|f| (f.name.to_string(), field_schema(f, type_names, units)))
        .collect();
    json!({"type": "object", "additionalProperties": false, "properties": props})
}

/// The schema of one field, with its meaning and default as annotations.
fn field_schema(f: &Field, type_names: &[&str], units: &[&str]) -> Value {
    let value = json!({"$ref": "#/$defs/value"});
    let mut s = match f.kind {
        Kind::Quantity { .. } => json!({"type": ["number", "string"]}),
        Kind::Integer { min, max } => {
            let mut s = json!({"type": "integer", "minimum": min});
            if max < u64::MAX {
                s["maximum"] = json!(max);
            }
            s
        }
        Kind::Name(names) => json!({"enum": names}),
        Kind::OutputInterval => json!({"type": ["number", "string", "null"]}),
        // A time expression is a string too, so "cycle" is an example, not an enum.
        Kind::StopTime => {
            json!({"type": ["number", "string"], "examples": [10, "20 min", "cycle"]})
        }
        Kind::Text { .. } => json!({"type": "string"}),
        Kind::Bool => json!({"type": "boolean"}),
        // Any unit expression of the right dimension is accepted ("mm", "kN*m"): the usual
        // spellings are listed as examples, not as an enum.
        Kind::DisplayUnit => json!({"type": "string", "examples": units}),
        Kind::Signals => json!({"$ref": "#/$defs/signals"}),
        Kind::Panels => {
            json!({"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/signals"}})
        }
        Kind::Range => {
            json!({"type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "number"}})
        }
        Kind::Section(sec) => match sec {
            Section::FormatVersion => json!({"const": crate::FORMAT_VERSION}),
            Section::Parameters | Section::BlockParams => {
                json!({"type": "object", "additionalProperties": value})
            }
            Section::Solver => object(spec::SOLVER, type_names, units),
            Section::Blocks => json!({"type": "array", "items": {"$ref": "#/$defs/block"}}),
            Section::Connections => json!({"type": "array", "items":
                {"type": "array", "minItems": 2, "items": {"type": "string"}}}),
            Section::Log => json!({"anyOf": [{"const": "all"},
                {"type": "array", "items": {"type": "string"}}]}),
            Section::Scopes => json!({"type": "array", "items": {"$ref": "#/$defs/scope"}}),
            Section::PortMap => {
                json!({"type": "object", "additionalProperties": {"type": "string"}})
            }
            Section::BlockType => json!({"enum": type_names}),
            Section::Diagram => json!({"$ref": "#/$defs/netlist"}),
            Section::Metrics => json!({"type": "object",
                "additionalProperties": {"type": "string", "minLength": 1}}),
        },
    };
    let unit = match f.kind {
        Kind::Quantity { unit, .. } if unit != "1" => format!(" [{unit}]"),
        Kind::StopTime => " [s]".to_string(),
        _ => String::new(),
    };
    let default = if f.default.is_empty() {
        String::new()
    } else {
        format!(" (default: {})", f.default)
    };
    s["description"] = Value::from(format!("{}{unit}{default}", f.doc));
    s
}
