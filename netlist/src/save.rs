//! Saving: a [`Diagram`] as netlist JSON (`to_json`), written back by `save_file`; what
//! the loader reads, so `load(to_json(d))` equals `d`.

use std::path::Path;

use serde_json::{Map, Value};

use drivelink_solver::{Method, Settings};

use drivelink_core::diagram::{BlockSpec, Diagram};
use drivelink_core::error::Error;
use drivelink_core::scope::{ScopeSignal, ScopeSpec};

use crate::*;

/// Save a diagram as a netlist file (pretty-printed JSON). Subsystems loaded from a `file`
/// keep referring to it (the file itself is not written); others are written inline.
pub fn save_file(d: &Diagram, path: &Path) -> Result<(), Error> {
    let mut text = serde_json::to_string_pretty(&to_json(d)).map_err(|e| Error::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    text.push('\n');
    std::fs::write(path, text).map_err(|e| Error::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

/// The netlist JSON of a diagram.
pub fn to_json(d: &Diagram) -> Value {
    let mut m = Map::new();
    m.insert("drivelink".into(), Value::from(FORMAT_VERSION));
    m.insert("name".into(), Value::from(d.name.clone()));
    if !d.description.is_empty() {
        m.insert("description".into(), Value::from(d.description.clone()));
    }
    if !d.parameters.is_empty() {
        let p: Map<String, Value> = d
            .parameters
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        m.insert("parameters".into(), Value::Object(p));
    }
    if d.settings_given || d.settings != Diagram::default_settings() {
        // A section with expressions is saved as written (they may name parameters),
        // unless the settings were changed in code since loading.
        let solver = match &d.settings_src {
            Some(src) if src.resolved == d.settings => Value::Object(src.raw.clone()),
            _ => {
                let mut solver = settings_json(&d.settings);
                if d.stops_at_cycle() {
                    solver["stop_time"] = Value::from(drivelink_core::STOP_AT_CYCLE);
                }
                solver
            }
        };
        m.insert("solver".into(), solver);
    }
    let blocks: Vec<Value> = d.blocks.iter().map(block_json).collect();
    m.insert("blocks".into(), Value::Array(blocks));
    let conns: Vec<Value> = d
        .connections
        .iter()
        .map(|c| Value::Array(c.iter().map(|s| Value::from(s.clone())).collect()))
        .collect();
    m.insert("connections".into(), Value::Array(conns));
    if !d.log.is_empty() {
        m.insert(
            "log".into(),
            Value::Array(d.log.iter().map(|s| Value::from(s.clone())).collect()),
        );
    }
    if !d.scopes.is_empty() {
        m.insert(
            "scopes".into(),
            Value::Array(d.scopes.iter().map(scope_json).collect()),
        );
    }
    if !d.metrics.is_empty() {
        let p: Map<String, Value> = d
            .metrics
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.clone())))
            .collect();
        m.insert("metrics".into(), Value::Object(p));
    }
    if !d.ports.is_empty() {
        let p: Map<String, Value> = d
            .ports
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.clone())))
            .collect();
        m.insert("ports".into(), Value::Object(p));
    }
    if !d.aliases.is_empty() {
        let p: Map<String, Value> = d
            .aliases
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.clone())))
            .collect();
        m.insert("aliases".into(), Value::Object(p));
    }
    Value::Object(m)
}

fn num(x: f64) -> Value {
    // Integral values are written as integers when exact (1 rather than 1.0) for
    // readability; serde_json reads both back to the same f64.
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 9.0e15 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

fn settings_json(s: &Settings) -> Value {
    let def = Diagram::default_settings();
    let mut m = Map::new();
    m.insert("method".into(), Value::from(s.method.name()));
    if let Method::Rk4 { step } = s.method {
        m.insert("step".into(), num(step));
    }
    m.insert("start_time".into(), num(s.start_time));
    m.insert("stop_time".into(), num(s.stop_time));
    if s.rtol != def.rtol {
        m.insert("rtol".into(), num(s.rtol));
    }
    if s.atol != def.atol {
        m.insert("atol".into(), num(s.atol));
    }
    if s.max_step.is_finite() {
        m.insert("max_step".into(), num(s.max_step));
    }
    match (s.output_interval, s.output_points) {
        (Some(dt), _) => {
            m.insert("output_interval".into(), num(dt));
        }
        (None, None) => {
            m.insert("output_interval".into(), Value::from("steps"));
        }
        _ => {}
    }
    if let Some(n) = s.output_points.filter(|&n| Some(n) != def.output_points) {
        m.insert("output_points".into(), Value::from(n));
    }
    if s.guard_samples != def.guard_samples {
        m.insert("guard_samples".into(), Value::from(s.guard_samples as u64));
    }
    if let Some(t) = s.timeout {
        m.insert("timeout".into(), num(t));
    }
    if s.max_output_points != def.max_output_points {
        m.insert("max_output_points".into(), Value::from(s.max_output_points));
    }
    if s.max_output_values != def.max_output_values {
        m.insert("max_output_values".into(), Value::from(s.max_output_values));
    }
    if s.max_time_events != def.max_time_events {
        m.insert("max_time_events".into(), Value::from(s.max_time_events));
    }
    if let Some(h) = s.initial_step {
        m.insert("initial_step".into(), num(h));
    }
    if s.max_steps != def.max_steps {
        m.insert("max_steps".into(), Value::from(s.max_steps));
    }
    if s.min_step_rel != def.min_step_rel {
        m.insert("min_step_rel".into(), num(s.min_step_rel));
    }
    if s.max_event_iterations != def.max_event_iterations {
        m.insert(
            "max_event_iterations".into(),
            Value::from(s.max_event_iterations as u64),
        );
    }
    if s.chatter_window != def.chatter_window {
        m.insert("chatter_window".into(), num(s.chatter_window));
    }
    if s.chatter_max_events != def.chatter_max_events {
        m.insert(
            "chatter_max_events".into(),
            Value::from(s.chatter_max_events as u64),
        );
    }
    Value::Object(m)
}

fn block_json(b: &BlockSpec) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::from(b.name.clone()));
    m.insert("type".into(), Value::from(b.type_name.clone()));
    if !b.params.is_empty() {
        m.insert("params".into(), Value::Object(b.params.clone()));
    }
    if let Some(f) = &b.file {
        m.insert("file".into(), Value::from(f.clone()));
    } else if let Some(inner) = &b.inner {
        m.insert("diagram".into(), to_json(inner));
    }
    Value::Object(m)
}

fn signal_json(s: &ScopeSignal) -> Value {
    if s.unit.is_none() && s.label.is_none() {
        return Value::from(s.signal.clone());
    }
    let mut m = Map::new();
    m.insert("signal".into(), Value::from(s.signal.clone()));
    if let Some(u) = &s.unit {
        m.insert("unit".into(), Value::from(u.clone()));
    }
    if let Some(l) = &s.label {
        m.insert("label".into(), Value::from(l.clone()));
    }
    Value::Object(m)
}

fn scope_json(s: &ScopeSpec) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::from(s.name.clone()));
    if let Some(t) = &s.title {
        m.insert("title".into(), Value::from(t.clone()));
    }
    if s.panels.len() == 1 {
        m.insert(
            "signals".into(),
            Value::Array(s.panels[0].iter().map(signal_json).collect()),
        );
    } else {
        let panels = s
            .panels
            .iter()
            .map(|p| Value::Array(p.iter().map(signal_json).collect()))
            .collect();
        m.insert("panels".into(), Value::Array(panels));
    }
    if let Some(u) = &s.unit {
        m.insert("unit".into(), Value::from(u.clone()));
    }
    if s.width != DEFAULT_WIDTH {
        m.insert("width".into(), Value::from(s.width));
    }
    if s.height != DEFAULT_HEIGHT {
        m.insert("height".into(), Value::from(s.height));
    }
    if s.event_markers {
        m.insert("event_markers".into(), Value::Bool(true));
    }
    if let Some((lo, hi)) = s.ylim {
        m.insert("ylim".into(), serde_json::json!([lo, hi]));
    }
    if let Some(x) = &s.x {
        m.insert("x".into(), Value::from(x.clone()));
    }
    Value::Object(m)
}
