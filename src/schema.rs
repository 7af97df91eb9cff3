//! `drivelink schema`: a JSON Schema (draft 2020-12) of the netlist format.
//!
//! Keywords used: `type` (a name or a list), `required`, `properties`,
//! `additionalProperties`, `enum`, `const`, `items`, `minItems`, `oneOf`, `anyOf`, `$ref`
//! (to `#` and `#/$defs/...`), plus the annotations `title`, `description`, `default`.

use serde_json::{json, Map, Value};

use drivelink_core::netlist;
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
    branches.push(json!({
        "type": "object",
        "description": "A masked subsystem: an inner netlist from \"file\" (relative to this file) or an inline \"diagram\"; \"params\" override its parameters.",
        "additionalProperties": false,
        "properties": {
            "name": {"type": "string"},
            "type": {"const": "Subsystem"},
            "params": {"type": "object", "additionalProperties": {"$ref": "#/$defs/value"}},
            "file": {"type": "string"},
            "diagram": {"$ref": "#/$defs/netlist"}
        },
        "oneOf": [{"required": ["file"]}, {"required": ["diagram"]}]
    }));
    let number = json!({"type": ["number", "string"], "description": "a number (SI) or an expression over the parameters, for example \"0.5 s\""});
    let integer = json!({"type": "integer"});
    let solver = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "method": {"enum": netlist::METHODS, "default": "dopri5"},
            "start_time": number, "stop_time": number, "rtol": number, "atol": number,
            "max_step": number, "output_interval": {"type": ["number", "string", "null"]},
            "step": number, "initial_step": number, "min_step_rel": number,
            "chatter_window": number, "max_steps": integer, "max_event_iterations": integer,
            "chatter_max_events": integer
        }
    });
    let units = DisplayUnit::names();
    let signal = json!({"anyOf": [
        {"type": "string", "description": "block.var"},
        {"type": "object", "required": ["signal"], "additionalProperties": false,
         "properties": {"signal": {"type": "string"}, "unit": {"enum": units}, "label": {"type": "string"}}}
    ]});
    let signals = json!({"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/signal"}});
    let scope = json!({
        "type": "object",
        "required": ["name"],
        "additionalProperties": false,
        "properties": {
            "name": {"type": "string"}, "title": {"type": "string"},
            "signals": signals,
            "panels": {"type": "array", "minItems": 1, "items": signals},
            "unit": {"enum": units},
            "width": integer, "height": integer, "event_markers": {"type": "boolean"},
            "ylim": {"type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "number"}},
            "x": {"type": "string", "description": "XY scope: plot the signals against this signal instead of time"}
        },
        "oneOf": [{"required": ["signals"]}, {"required": ["panels"]}]
    });
    let refs = json!({"type": "object", "additionalProperties": {"type": "string"}});
    let body = json!({
        "type": "object",
        "required": ["blocks"],
        "additionalProperties": false,
        "properties": {
            "drivelink": {"const": netlist::FORMAT_VERSION, "description": "format version"},
            "name": {"type": "string"},
            "description": {"type": "string"},
            "parameters": {"type": "object", "additionalProperties": {"$ref": "#/$defs/value"}},
            "solver": solver,
            "blocks": {"type": "array", "items": {"$ref": "#/$defs/block"}},
            "connections": {"type": "array", "items": {"type": "array", "minItems": 2, "items": {"type": "string"}}},
            "log": {"anyOf": [{"const": "all"}, {"type": "array", "items": {"type": "string"}}]},
            "scopes": {"type": "array", "items": {"$ref": "#/$defs/scope"}},
            "ports": refs,
            "aliases": refs
        }
    });
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://drivelink.invalid/netlist-1.schema.json",
        "title": "drivelink netlist (format version 1)",
        "$ref": "#/$defs/netlist",
        "required": ["drivelink", "blocks"],
        "$defs": {
            "netlist": body,
            "value": {"type": ["number", "string", "boolean", "array"]},
            "block": {
                "type": "object",
                "required": ["name", "type"],
                "properties": {"type": {"enum": type_names}},
                "oneOf": branches
            },
            "signal": signal,
            "scope": scope
        }
    })
}
