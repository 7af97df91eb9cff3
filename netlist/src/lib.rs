//! JSON netlists: load and save [`Diagram`]s (format described in `NETLIST.md`).
//!
//! The loader checks the *structure* of a netlist: keys, value types, the format version,
//! solver settings, connection and port reference syntax, block names, scopes, subsystem
//! files (relative to the including file, cycles detected). Everything that needs the
//! block registry (block types, parameters, ports, units of block parameters) is checked by
//! [`drivelink_core::compile()`]. Every loader error is an [`Error::Netlist`] naming the file,
//! the JSON path (`blocks[3].params.J`, `solver.rtol`) and what was expected; several
//! errors of one file are reported together ([`Error::Many`]).
//!
//! Raw parameter values are kept as JSON in the diagram, so `to_json(load(x))` loads back
//! to an equal diagram, and a diagram built in Rust saves and loads back equal.

// Errors are core's (the compile entry points here return them too); they carry the names
// a user needs and are built only on the cold path, so their size does not matter.
#![allow(clippy::result_large_err)]

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use drivelink_solver::{Method, Settings};

use drivelink_core::compile::{resolve_parameters, Scope, ScopeVal};
use drivelink_core::diagram::{BlockSpec, Diagram, PortRef};
use drivelink_core::error::Error;
use drivelink_core::expr;
use drivelink_core::params::Registry;
use drivelink_core::scope::{DisplayUnit, ScopeSignal, ScopeSpec};
use drivelink_core::suggest;
use drivelink_core::units::Dim;

pub mod schema;
pub mod spec;

/// The netlist format version this crate reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// Solver methods (`stiff` is an alias of `radau5`).
pub const METHODS: &[&str] = Method::NAMES;
/// Default scope image size.
pub const DEFAULT_WIDTH: u32 = 1200;
pub const DEFAULT_HEIGHT: u32 = 800;
pub use spec::SIZE_RANGE;
/// Deepest subsystem nesting accepted.
pub const MAX_DEPTH: usize = 64;

/// Load a netlist file (subsystem files are resolved relative to it).
pub fn load_file(path: &Path) -> Result<Diagram, Error> {
    let mut stack = Vec::new();
    load_file_inner(path, &mut stack, 0)
}

/// Load a netlist from text. `origin` names it in messages (usually the file path);
/// subsystem `file`s are resolved relative to `base_dir`.
pub fn load_str(text: &str, origin: &str, base_dir: &Path) -> Result<Diagram, Error> {
    let v = parse_text(text, origin)?;
    load_value(&v, origin, base_dir)
}

/// Load a netlist from an already parsed JSON value (for tools that edit the JSON first,
/// such as `drivelink run --set`).
pub fn load_value(v: &Value, origin: &str, base_dir: &Path) -> Result<Diagram, Error> {
    let mut stack = Vec::new();
    load_value_inner(v, origin, base_dir, &mut stack, "", 0)
}

/// A netlist file's bytes as text: a file that is not UTF-8 is an error naming the line
/// and column (in characters) and the byte offset of the first byte that is not, and the
/// byte itself.
pub fn utf8_text(bytes: Vec<u8>, origin: &str) -> Result<String, Error> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        // Everything before `at` is valid UTF-8.
        let before = String::from_utf8_lossy(&bytes[..at]);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Error::Netlist {
            file: origin.to_string(),
            path: format!("line {line}, column {column}"),
            message: format!(
                "the file is not UTF-8 text: byte {at} is 0x{:02x}; save the netlist as UTF-8 (JSON text must be UTF-8)",
                bytes[at]
            ),
        }
    })
}

/// Parse JSON text; a syntax error names the line and column.
pub fn parse_text(text: &str, origin: &str) -> Result<Value, Error> {
    serde_json::from_str::<Value>(text).map_err(|e| {
        let msg = e.to_string();
        // serde_json appends " at line L column C"; we report those in the path.
        let msg = match msg.rfind(" at line ") {
            Some(i) => msg[..i].to_string(),
            None => msg,
        };
        Error::Netlist {
            file: origin.to_string(),
            path: format!("line {}, column {}", e.line(), e.column()),
            message: format!("malformed JSON: {msg}"),
        }
    })
}

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

// ---------------------------------------------------------------------------------------
// Compile errors located in the netlist
// ---------------------------------------------------------------------------------------

/// Load and compile a netlist file; every error is located (see [`locate_error`]).
pub fn compile_file(path: &Path, reg: &Registry) -> Result<drivelink_core::Model, Error> {
    let d = load_file(path)?;
    compile_located(&d, reg, &path.display().to_string())
}

/// [`drivelink_core::compile()`] with errors located in the netlist `origin`.
pub fn compile_located(
    d: &Diagram,
    reg: &Registry,
    origin: &str,
) -> Result<drivelink_core::Model, Error> {
    drivelink_core::compile(d, reg).map_err(|e| locate_error(d, reg, origin, e))
}

/// The JSON path of a (flattened) block name: `blocks[2]`, `blocks[2].diagram.blocks[0]`,
/// or `blocks[2] -> crcr4.json: blocks[0]` across a subsystem file.
pub fn block_path(d: &Diagram, name: &str) -> Option<String> {
    let (first, rest) = match name.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (name, None),
    };
    let i = d.blocks.iter().position(|b| b.name == first)?;
    let here = format!("blocks[{i}]");
    let b = &d.blocks[i];
    match (rest, &b.inner) {
        (Some(rest), Some(inner)) => {
            let sub = block_path(inner, rest)?;
            Some(match &b.file {
                Some(f) => format!("{here} -> {f}: {sub}"),
                None => format!("{here}.diagram.{sub}"),
            })
        }
        _ => Some(here),
    }
}

/// Turn a compile error into an [`Error::Netlist`] naming `origin` and the JSON path of the
/// offending block, parameter, connection or variable (the message is the compile
/// error's). Loader errors pass through unchanged; several errors stay [`Error::Many`].
pub fn locate_error(d: &Diagram, _reg: &Registry, origin: &str, e: Error) -> Error {
    let conn = |ci: usize| -> String {
        // `compile` puts the top-level connections first in its flat list.
        if ci < d.connections.len() {
            format!("connections[{ci}]")
        } else {
            "connections".to_string()
        }
    };
    let blk = |name: &str, tail: &str| -> String {
        match block_path(d, name) {
            Some(p) => format!("{p}{tail}"),
            None => "blocks".to_string(),
        }
    };
    let path = match &e {
        Error::Many(v) => {
            return Error::Many(
                v.iter()
                    .cloned()
                    .map(|x| locate_error(d, _reg, origin, x))
                    .collect(),
            )
        }
        Error::Io { .. } => return e,
        Error::Netlist {
            file,
            path,
            message,
        } => {
            if file == origin || Path::new(file).is_file() {
                return e;
            }
            let p = if file == &d.name {
                path.clone()
            } else {
                blk(file, &format!(".{path}"))
            };
            return Error::Netlist {
                file: origin.to_string(),
                path: p,
                message: message.clone(),
            };
        }
        Error::Param(pe) => blk(&pe.block, &format!(".params.{}", pe.param)),
        Error::UnknownParam { block, param, .. } => blk(block, &format!(".params.{param}")),
        Error::UnknownType { block, .. } => blk(block, ".type"),
        Error::DuplicateName { name } | Error::InvalidName { name } => blk(name, ".name"),
        Error::UnknownBlock { connection, .. }
        | Error::UnknownPort { connection, .. }
        | Error::BadPortRef { connection, .. }
        | Error::KindMismatch { connection, .. }
        | Error::ShortConnection { connection, .. }
        | Error::SignalDrivers { connection, .. } => conn(*connection),
        Error::TwoDrivers { second, .. } => conn(*second),
        Error::UndrivenInput { block, .. } | Error::UnusedOutput { block, .. } => blk(block, ""),
        Error::AlgebraicLoop { .. } | Error::RoadProviders { .. } => "connections".to_string(),
        Error::RoadData { block, .. } => blk(block, ""),
        Error::SingularNetwork { .. }
        | Error::ConflictingInitial { .. }
        | Error::IsolatedHeatNodes { .. }
        | Error::ConflictingTemperature { .. } => "blocks".to_string(),
        Error::TemperatureWithoutCapacity { block, .. } => blk(block, ""),
        Error::FrameWithoutMass { frame } => match frame.rsplit_once('.') {
            Some((b, _)) => blk(b, ""),
            None => "blocks".to_string(),
        },
        Error::UnknownVariable { name, .. } => {
            if let Some(i) = d.log.iter().position(|l| l == name) {
                format!("log[{i}]")
            } else if let Some(i) = d
                .scopes
                .iter()
                .position(|s| s.signal_names().any(|n| n == name))
            {
                format!("scopes[{i}]")
            } else {
                "log".to_string()
            }
        }
        Error::ScopeUnit { scope, .. } | Error::UnknownDisplayUnit { scope, .. } => {
            match d.scopes.iter().position(|s| &s.name == scope) {
                Some(i) => format!("scopes[{i}]"),
                None => "scopes".to_string(),
            }
        }
    };
    Error::Netlist {
        file: origin.to_string(),
        path,
        message: e.to_string(),
    }
}

// ---------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------

fn io_netlist(file: &str, path: &str, message: String) -> Error {
    Error::Netlist {
        file: file.to_string(),
        path: path.to_string(),
        message,
    }
}

fn load_file_inner(path: &Path, stack: &mut Vec<PathBuf>, depth: usize) -> Result<Diagram, Error> {
    let origin = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| Error::Io {
        path: origin.clone(),
        message: e.to_string(),
    })?;
    let v = parse_text(&utf8_text(bytes, &origin)?, &origin)?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    stack.push(canon);
    let r = load_value_inner(&v, &origin, &base, stack, "", depth);
    stack.pop();
    r
}

/// Loader state for one netlist (file or inline diagram).
struct Ctx<'a> {
    file: &'a str,
    /// JSON path of this (inline) diagram inside the file, "" or "blocks[2].diagram".
    prefix: String,
    base: &'a Path,
    errors: Vec<Error>,
}

impl Ctx<'_> {
    fn err(&mut self, path: impl Into<String>, message: impl Into<String>) {
        let path = path.into();
        let path = if self.prefix.is_empty() {
            path
        } else if path.starts_with('[') {
            format!("{}{path}", self.prefix)
        } else {
            format!("{}.{path}", self.prefix)
        };
        self.errors.push(Error::Netlist {
            file: self.file.to_string(),
            path,
            message: message.into(),
        });
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        let cut: String = s.chars().take(37).collect();
        format!("{cut}...")
    } else {
        s
    }
}

fn got(v: &Value) -> String {
    format!("got {} {}", kind_of(v), short(v))
}

fn join(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_string()
    } else {
        format!("{base}.{key}")
    }
}

/// Report every key of `m` that the table `known` does not list.
fn check_keys(cx: &mut Ctx, path: &str, m: &Map<String, Value>, known: &[spec::Field], what: &str) {
    for k in m.keys() {
        if spec::field_in(known, k).is_none() {
            let known: Vec<&str> = spec::names(known).collect();
            cx.err(
                join(path, k),
                format!(
                    "unknown {what} key '{k}'{}; expected one of: {}",
                    suggest::hint(k, known.iter().copied()),
                    known.join(", ")
                ),
            );
        }
    }
}

fn valid_ident(n: &str) -> bool {
    let mut c = n.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

fn load_value_inner(
    v: &Value,
    origin: &str,
    base: &Path,
    stack: &mut Vec<PathBuf>,
    prefix: &str,
    depth: usize,
) -> Result<Diagram, Error> {
    let root = if prefix.is_empty() { "(root)" } else { prefix };
    let Value::Object(top) = v else {
        return Err(io_netlist(
            origin,
            root,
            format!(
                "expected a JSON object netlist {{\"drivelink\": 1, ...}}, {}",
                got(v)
            ),
        ));
    };
    if depth > MAX_DEPTH {
        return Err(io_netlist(
            origin,
            root,
            format!("subsystems nested deeper than {MAX_DEPTH} levels"),
        ));
    }
    let mut cx = Ctx {
        file: origin,
        prefix: prefix.to_string(),
        base,
        errors: Vec::new(),
    };
    check_keys(&mut cx, "", top, spec::TOP, "top-level");
    check_version(&mut cx, top, prefix.is_empty());
    let mut d = Diagram::new("");
    load_header(&mut cx, top, origin, &mut d);
    d.parameters = load_parameters(&mut cx, top);
    // Evaluate the parameters once here so their errors name this file (compile evaluates
    // them again, with subsystem overrides).
    let scope = if cx.errors.is_empty() {
        match resolve_parameters(&d.parameters, &Scope::new(), origin) {
            Ok(s) => Some(s),
            Err(e) => {
                cx.errors.push(e);
                None
            }
        }
    } else {
        None
    };
    load_solver_section(&mut cx, top, scope.as_ref(), &mut d);
    d.blocks = load_blocks(&mut cx, top, stack, depth);
    check_unique_block_names(&mut cx, &d.blocks);
    let mut names: Vec<&str> = d.blocks.iter().map(|b| b.name.as_str()).collect();
    names.sort_unstable();
    d.connections = load_connections(&mut cx, top, &names);
    d.log = load_log(&mut cx, top, &names);
    d.scopes = load_scopes(&mut cx, top, &names);
    let (ports, aliases) = load_exports(&mut cx, top, &names);
    (d.ports, d.aliases) = (ports, aliases);
    d.metrics = load_metrics(&mut cx, top);
    Error::from_list(cx.errors)?;
    Ok(d)
}

/// The format version (`"drivelink"`), required at the top level only.
fn check_version(cx: &mut Ctx, top: &Map<String, Value>, required: bool) {
    match top.get("drivelink") {
        None if required => cx.err(
            "drivelink",
            format!(
                "missing format version; expected \"drivelink\": {FORMAT_VERSION} as the first key"
            ),
        ),
        None => {}
        Some(Value::Number(n))
            if n.as_u64() == Some(FORMAT_VERSION) || n.as_f64() == Some(FORMAT_VERSION as f64) => {}
        Some(other) => cx.err(
            "drivelink",
            format!(
                "unsupported format version {}; this drivelink reads version {FORMAT_VERSION}",
                short(other)
            ),
        ),
    }
}

/// `name` (the file name when absent) and `description`.
fn load_header(cx: &mut Ctx, top: &Map<String, Value>, origin: &str, d: &mut Diagram) {
    match top.get("name") {
        Some(Value::String(s)) if !s.trim().is_empty() => d.name = s.clone(),
        Some(other) => cx.err(
            "name",
            format!("expected a non-empty string, {}", got(other)),
        ),
        None => {
            d.name = Path::new(origin)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "model".to_string())
        }
    }
    match top.get("description") {
        Some(Value::String(s)) => d.description = s.clone(),
        Some(other) => cx.err("description", format!("expected a string, {}", got(other))),
        None => {}
    }
}

/// `parameters`, as written (names and value shapes checked).
fn load_parameters(cx: &mut Ctx, top: &Map<String, Value>) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    match top.get("parameters") {
        Some(Value::Object(p)) => {
            for (k, val) in p {
                let path = format!("parameters.{k}");
                if !valid_ident(k) {
                    cx.err(
                        &path,
                        format!(
                            "invalid parameter name '{k}'; names must match [A-Za-z_][A-Za-z0-9_]*"
                        ),
                    );
                }
                match val {
                    Value::Number(_) | Value::String(_) | Value::Bool(_) | Value::Array(_) => {}
                    other => cx.err(
                        &path,
                        format!(
                            "expected a number, an expression string, a boolean or an array, {}",
                            got(other)
                        ),
                    ),
                }
                out.push((k.clone(), val.clone()));
            }
        }
        Some(other) => cx.err(
            "parameters",
            format!(
                "expected an object {{\"name\": value, ...}}, {}",
                got(other)
            ),
        ),
        None => {}
    }
    out
}

/// The `solver` section, resolved under the file's parameters (`scope`) and kept as
/// written when it has expressions.
fn load_solver_section(
    cx: &mut Ctx,
    top: &Map<String, Value>,
    scope: Option<&Scope>,
    d: &mut Diagram,
) {
    match top.get("solver") {
        Some(Value::Object(s)) => {
            d.settings_given = true;
            d.settings = load_settings(cx, s, scope);
            // Expressions may name parameters: kept, so a compilation under other
            // parameter values reads them again.
            if s.iter().any(|(k, v)| v.is_string() && k != "method") {
                d.settings_src = Some(drivelink_core::SettingsSource {
                    raw: s.clone(),
                    resolved: d.settings.clone(),
                    resolve: resolve_settings,
                });
            }
        }
        Some(other) => cx.err(
            "solver",
            format!(
                "expected an object {{\"method\": \"dopri5\", \"stop_time\": ...}}, {}",
                got(other)
            ),
        ),
        None => {}
    }
}

/// `blocks` (each loaded by [`load_block`]; required).
fn load_blocks(
    cx: &mut Ctx,
    top: &Map<String, Value>,
    stack: &mut Vec<PathBuf>,
    depth: usize,
) -> Vec<BlockSpec> {
    let mut out = Vec::new();
    match top.get("blocks") {
        Some(Value::Array(bs)) => {
            for (i, b) in bs.iter().enumerate() {
                if let Some(spec) = load_block(cx, i, b, stack, depth) {
                    out.push(spec);
                }
            }
        }
        Some(other) => cx.err(
            "blocks",
            format!(
                "expected an array of blocks [{{\"name\": ..., \"type\": ...}}, ...], {}",
                got(other)
            ),
        ),
        None => cx.err(
            "blocks",
            "missing; expected an array of blocks [{\"name\": ..., \"type\": ...}, ...]",
        ),
    }
    out
}

/// Every block name is used once.
fn check_unique_block_names(cx: &mut Ctx, blocks: &[BlockSpec]) {
    let mut first_use: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, b) in blocks.iter().enumerate() {
        let n = b.name.as_str();
        match first_use.get(n) {
            Some(&j) => cx.err(format!("blocks[{i}].name"), format!("duplicate block name '{n}' (already used by blocks[{j}]); block names must be unique")),
            None => {
                first_use.insert(n, i);
            }
        }
    }
}

/// `connections`: arrays of two or more `"block.port"` references to blocks in `names`.
fn load_connections(cx: &mut Ctx, top: &Map<String, Value>, names: &[&str]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    match top.get("connections") {
        Some(Value::Array(cs)) => {
            for (i, c) in cs.iter().enumerate() {
                let path = format!("connections[{i}]");
                let Value::Array(items) = c else {
                    cx.err(
                        &path,
                        format!(
                            "expected an array of two or more \"block.port\" strings, {}",
                            got(c)
                        ),
                    );
                    continue;
                };
                if items.len() < 2 {
                    cx.err(
                        &path,
                        format!(
                            "a connection needs at least two \"block.port\" references, it has {}",
                            items.len()
                        ),
                    );
                }
                let mut refs = Vec::with_capacity(items.len());
                for (j, it) in items.iter().enumerate() {
                    let p = format!("{path}[{j}]");
                    match it {
                        Value::String(s) => {
                            check_ref(cx, &p, s, names, "port", "block.port");
                            refs.push(s.clone());
                        }
                        other => cx.err(
                            &p,
                            format!("expected a \"block.port\" string, {}", got(other)),
                        ),
                    }
                }
                out.push(refs);
            }
        }
        Some(other) => cx.err(
            "connections",
            format!(
                "expected an array of connections [[\"a.y\", \"b.u\"], ...], {}",
                got(other)
            ),
        ),
        None => {}
    }

    out
}

/// `log`: `"all"` or `"block.var"` references.
fn load_log(cx: &mut Ctx, top: &Map<String, Value>, names: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    match top.get("log") {
        Some(Value::String(s)) if s == "all" => out.push("all".into()),
        Some(Value::Array(items)) => {
            for (i, it) in items.iter().enumerate() {
                let p = format!("log[{i}]");
                match it {
                    Value::String(s) => {
                        if s != "all" {
                            check_ref(cx, &p, s, names, "variable", "block.var");
                        }
                        out.push(s.clone());
                    }
                    other => cx.err(
                        &p,
                        format!("expected a \"block.var\" string, {}", got(other)),
                    ),
                }
            }
        }
        Some(other) => cx.err(
            "log",
            format!(
                "expected an array of \"block.var\" strings or \"all\", {}",
                got(other)
            ),
        ),
        None => {}
    }

    out
}

/// `scopes` (each loaded by [`load_scope`]; names unique: they are file names).
fn load_scopes(cx: &mut Ctx, top: &Map<String, Value>, names: &[&str]) -> Vec<ScopeSpec> {
    let mut out: Vec<ScopeSpec> = Vec::new();
    match top.get("scopes") {
        Some(Value::Array(items)) => {
            for (i, it) in items.iter().enumerate() {
                if let Some(s) = load_scope(cx, i, it, names) {
                    if let Some(j) = out.iter().position(|o| o.name == s.name) {
                        cx.err(format!("scopes[{i}].name"), format!("duplicate scope name '{}' (already used by scopes[{j}]); scope names are file names and must be unique", s.name));
                    }
                    out.push(s);
                }
            }
        }
        Some(other) => cx.err(
            "scopes",
            format!(
                "expected an array of scopes [{{\"name\": ..., \"signals\": [...]}}, ...], {}",
                got(other)
            ),
        ),
        None => {}
    }

    out
}

/// The exported `ports` and `aliases` of a subsystem file.
#[allow(clippy::type_complexity)]
fn load_exports(
    cx: &mut Ctx,
    top: &Map<String, Value>,
    names: &[&str],
) -> (Vec<(String, String)>, Vec<(String, String)>) {
    let (mut ports, mut aliases) = (Vec::new(), Vec::new());
    for (key, what, shape) in [
        ("ports", "port", "block.port"),
        ("aliases", "variable", "block.var"),
    ] {
        match top.get(key) {
            Some(Value::Object(m)) => {
                let mut out = Vec::new();
                for (k, val) in m {
                    let p = format!("{key}.{k}");
                    if !valid_ident(k) {
                        cx.err(&p, format!("invalid exported name '{k}'; names must match [A-Za-z_][A-Za-z0-9_]*"));
                    }
                    match val {
                        Value::String(s) => {
                            check_ref(cx, &p, s, names, what, shape);
                            out.push((k.clone(), s.clone()));
                        }
                        other => {
                            cx.err(&p, format!("expected a \"{shape}\" string, {}", got(other)))
                        }
                    }
                }
                if key == "ports" {
                    ports = out;
                } else {
                    aliases = out;
                }
            }
            Some(other) => cx.err(
                key,
                format!(
                    "expected an object {{\"exported_name\": \"{shape}\", ...}}, {}",
                    got(other)
                ),
            ),
            None => {}
        }
    }

    (ports, aliases)
}

/// `metrics`: names (identifiers, so that later metrics can use them) -> expressions. The
/// expressions are parsed by `drivelink-sweep`, which locates its errors at `metrics.NAME`.
fn load_metrics(cx: &mut Ctx, top: &Map<String, Value>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    match top.get("metrics") {
        Some(Value::Object(m)) => {
            for (k, val) in m {
                let p = format!("metrics.{k}");
                if !valid_ident(k) {
                    cx.err(&p, format!("invalid metric name '{k}'; names must match [A-Za-z_][A-Za-z0-9_]* (a later metric may use it)"));
                }
                match val {
                    Value::String(s) if !s.trim().is_empty() => out.push((k.clone(), s.clone())),
                    other => cx.err(
                        &p,
                        format!(
                            "expected a metric expression such as \"max(block.var)\", {}",
                            got(other)
                        ),
                    ),
                }
            }
        }
        Some(other) => cx.err(
            "metrics",
            format!(
                "expected an object {{\"name\": \"max(block.var)\", ...}}, {}",
                got(other)
            ),
        ),
        None => {}
    }
    out
}

/// Check a `"block.port"` / `"block.var"` reference: syntax and that the first segment is a
/// block of this diagram.
fn check_ref(cx: &mut Ctx, path: &str, s: &str, names: &[&str], what: &str, shape: &str) {
    if PortRef::parse(s).is_none() {
        cx.err(
            path,
            format!("'{s}' is not a {what} reference; expected \"{shape}\""),
        );
        return;
    }
    let first = s.split('.').next().unwrap_or("");
    // `names` is sorted (see `load_value_inner`): large netlists check in O(log n).
    if names.binary_search(&first).is_err() {
        cx.err(
            path,
            format!("'{s}': unknown block '{first}'{}; expected \"{shape}\" with a block of this netlist", suggest::hint(first, names.iter().copied())),
        );
    }
}

fn load_block(
    cx: &mut Ctx,
    i: usize,
    b: &Value,
    stack: &mut Vec<PathBuf>,
    depth: usize,
) -> Option<BlockSpec> {
    let path = format!("blocks[{i}]");
    let Value::Object(m) = b else {
        cx.err(
            &path,
            format!(
                "expected a block object {{\"name\": ..., \"type\": ..., \"params\": {{...}}}}, {}",
                got(b)
            ),
        );
        return None;
    };
    check_keys(cx, &path, m, spec::BLOCK, "block");
    let name = match m.get("name") {
        Some(Value::String(s)) => {
            if !valid_ident(s) {
                cx.err(
                    format!("{path}.name"),
                    format!("invalid block name '{s}'; names must match [A-Za-z_][A-Za-z0-9_]*"),
                );
            }
            s.clone()
        }
        Some(other) => {
            cx.err(
                format!("{path}.name"),
                format!("expected a block name string, {}", got(other)),
            );
            return None;
        }
        None => {
            cx.err(
                format!("{path}.name"),
                "missing block name; expected \"name\": \"...\"",
            );
            return None;
        }
    };
    let type_name = match m.get("type") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            cx.err(
                format!("{path}.type"),
                format!(
                    "block '{name}': expected a block type string, {}",
                    got(other)
                ),
            );
            return None;
        }
        None => {
            cx.err(
                format!("{path}.type"),
                format!("block '{name}': missing block type; expected \"type\": \"Gain\", ..."),
            );
            return None;
        }
    };
    let params = match m.get("params") {
        Some(Value::Object(p)) => {
            for (k, val) in p {
                // Objects are record parameters (a friction curve's keys); whether a
                // parameter takes one is the compile pass's check, against its kind.
                if val.is_null() {
                    cx.err(
                        format!("{path}.params.{k}"),
                        format!("block '{name}': expected a number, an expression string, a boolean, a string choice, an array or an object of numbers (a record parameter), {}", got(val)),
                    );
                }
            }
            p.clone()
        }
        Some(other) => {
            cx.err(
                format!("{path}.params"),
                format!(
                    "block '{name}': expected an object {{\"param\": value, ...}}, {}",
                    got(other)
                ),
            );
            Map::new()
        }
        None => Map::new(),
    };
    let mut spec = BlockSpec {
        name: name.clone(),
        type_name: type_name.clone(),
        params,
        inner: None,
        file: None,
    };
    let is_sub = type_name == "Subsystem";
    let (file, diagram) = (m.get("file"), m.get("diagram"));
    if !is_sub {
        for (k, v) in [("file", file), ("diagram", diagram)] {
            if v.is_some() {
                cx.err(
                    format!("{path}.{k}"),
                    format!("block '{name}' ({type_name}): only Subsystem blocks take '{k}'"),
                );
            }
        }
        return Some(spec);
    }
    match (file, diagram) {
        (Some(_), Some(_)) => cx.err(&path, format!("subsystem '{name}': give either \"file\" or \"diagram\", not both")),
        (None, None) => cx.err(&path, format!("subsystem '{name}': missing its netlist; expected \"file\": \"inner.json\" or an inline \"diagram\": {{...}}")),
        (Some(Value::String(f)), None) => {
            let full = cx.base.join(f);
            let canon = std::fs::canonicalize(&full).ok();
            if let Some(c) = &canon {
                if let Some(k) = stack.iter().position(|s| s == c) {
                    let chain: Vec<String> = stack[k..].iter().map(|p| p.display().to_string()).chain(std::iter::once(c.display().to_string())).collect();
                    cx.err(format!("{path}.file"), format!("subsystem '{name}': subsystem files include each other (a cycle): {}", chain.join(" -> ")));
                    return Some(spec);
                }
            }
            if canon.is_none() || !full.is_file() {
                cx.err(
                    format!("{path}.file"),
                    format!("subsystem '{name}': subsystem file '{f}' not found (looked for {}); expected a netlist path relative to this file", full.display()),
                );
                return Some(spec);
            }
            match load_file_inner(&full, stack, depth + 1) {
                Ok(inner) => spec.inner = Some(Box::new(inner)),
                Err(Error::Io { path: p, message }) => cx.err(format!("{path}.file"), format!("subsystem '{name}': cannot read '{p}': {message}")),
                Err(e) => cx.errors.push(e),
            }
            spec.file = Some(f.clone());
        }
        (Some(other), None) => cx.err(format!("{path}.file"), format!("subsystem '{name}': expected a file name string, {}", got(other))),
        (None, Some(inner)) => {
            let p = if cx.prefix.is_empty() { format!("{path}.diagram") } else { format!("{}.{path}.diagram", cx.prefix) };
            match load_value_inner(inner, cx.file, cx.base, stack, &p, depth + 1) {
                Ok(d) => spec.inner = Some(Box::new(d)),
                Err(e) => cx.errors.push(e),
            }
        }
    }
    Some(spec)
}

/// A solver value: a number or an expression (with units) over the model parameters.
fn solver_number(
    cx: &mut Ctx,
    key: &str,
    v: &Value,
    scope: Option<&Scope>,
    dim: Dim,
    unit: &str,
) -> Option<f64> {
    let path = format!("solver.{key}");
    let x = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => {
            let Some(scope) = scope else {
                // The parameters themselves are broken (already reported).
                return None;
            };
            let look = |n: &str| match scope.get(n) {
                Some(ScopeVal::Q(q)) => Some(*q),
                _ => None,
            };
            let names: Vec<&str> = scope.keys().map(String::as_str).collect();
            let q = match expr::eval_with_names(s, &look, &names) {
                Ok(q) => q,
                Err(e) => {
                    cx.err(path, format!("\"{s}\": {e}"));
                    return None;
                }
            };
            match expr::check_dim(&q, dim, unit) {
                Ok(x) => x,
                Err(e) => {
                    cx.err(path, format!("\"{s}\": {e}"));
                    return None;
                }
            }
        }
        other => {
            let u = if unit == "1" {
                String::new()
            } else {
                format!(" (SI {unit}) or an expression such as \"0.5 {unit}\"")
            };
            cx.err(path, format!("expected a number{u}, {}", got(other)));
            return None;
        }
    };
    if !x.is_finite() {
        cx.err(path, format!("must be finite, got {x}"));
        return None;
    }
    Some(x)
}

/// Whether `text` is a single word close to `word` (a misspelling of the one word a
/// `solver` key takes besides a time), not an expression.
fn is_near_word(text: &str, word: &str) -> bool {
    let t = text.trim();
    t.chars().all(|c| c.is_ascii_alphabetic()) && !suggest::hint(t, [word]).is_empty()
}

/// A `solver` value read through its [`spec::Field`].
enum Got {
    Num(f64),
    Int(u64),
    Name(String),
    /// `"output_interval": "steps"`.
    Steps,
    /// `"stop_time": "cycle"`.
    Cycle,
    /// `null`.
    Null,
}

/// Read one `solver` key as its [`spec::Kind`] says (errors reported on `cx`).
fn read_solver_field(
    cx: &mut Ctx,
    fld: &spec::Field,
    v: &Value,
    scope: Option<&Scope>,
) -> Option<Got> {
    let path = format!("solver.{}", fld.name);
    let positive = |cx: &mut Ctx, x: f64| {
        if x > 0.0 {
            Some(Got::Num(x))
        } else {
            cx.err(&path, format!("must be > 0, got {x}"));
            None
        }
    };
    match fld.kind {
        spec::Kind::Quantity {
            dim,
            unit,
            positive: pos,
        } => {
            let x = solver_number(cx, fld.name, v, scope, dim, unit)?;
            if pos {
                positive(cx, x)
            } else {
                Some(Got::Num(x))
            }
        }
        spec::Kind::StopTime => match v {
            Value::String(m) if m.trim() == drivelink_core::STOP_AT_CYCLE => Some(Got::Cycle),
            // A word that is not a time: the one word this key takes, if it is near it.
            Value::String(m) if is_near_word(m, drivelink_core::STOP_AT_CYCLE) => {
                cx.err(
                    path,
                    format!(
                        "\"{m}\": expected a time (\"20 min\") or \"cycle\"{}",
                        suggest::hint(m.trim(), [drivelink_core::STOP_AT_CYCLE])
                    ),
                );
                None
            }
            _ => solver_number(cx, fld.name, v, scope, Dim::TIME, "s").map(Got::Num),
        },
        spec::Kind::OutputInterval => match v {
            Value::Null => Some(Got::Null),
            Value::String(m) if m.trim() == "steps" => Some(Got::Steps),
            // A word that is not a time: the one word this key takes, if it is near it.
            Value::String(m) if is_near_word(m, "steps") => {
                cx.err(
                    path,
                    format!(
                        "\"{m}\": expected a time (\"10 ms\") or \"steps\"{}",
                        suggest::hint(m.trim(), ["steps"])
                    ),
                );
                None
            }
            _ => {
                let x = solver_number(cx, fld.name, v, scope, Dim::TIME, "s")?;
                positive(cx, x)
            }
        },
        spec::Kind::Integer { min, max } => match v {
            Value::Number(n) if n.as_u64().is_some_and(|k| (min..=max).contains(&k)) => {
                n.as_u64().map(Got::Int)
            }
            other => {
                let range = if max == u64::MAX {
                    format!(">= {min}")
                } else {
                    format!("from {min} to {max}")
                };
                cx.err(path, format!("expected an integer {range}, {}", got(other)));
                None
            }
        },
        spec::Kind::Name(names) => match v {
            Value::String(m) if names.contains(&m.as_str()) => Some(Got::Name(m.clone())),
            Value::String(m) => {
                cx.err(
                    path,
                    format!(
                        "unknown {} '{m}'{}; expected one of: {}",
                        fld.name,
                        suggest::hint(m, names.iter().copied()),
                        names.join(", ")
                    ),
                );
                None
            }
            other => {
                let quoted: Vec<String> = names.iter().map(|m| format!("\"{m}\"")).collect();
                cx.err(
                    path,
                    format!("expected one of {}, {}", quoted.join(", "), got(other)),
                );
                None
            }
        },
        // No solver key has another kind (`spec_and_loader_agree` checks the table).
        _ => None,
    }
}

/// The `solver` section `raw` read under the parameters `scope` (a
/// [`drivelink_core::SettingsSource`]'s reader): the loader's checks, errors naming
/// `origin` and the `solver.*` key.
fn resolve_settings(
    raw: &Map<String, Value>,
    scope: &drivelink_core::compile::Scope,
    origin: &str,
) -> Result<Settings, Error> {
    let mut cx = Ctx {
        file: origin,
        prefix: String::new(),
        base: Path::new("."),
        errors: Vec::new(),
    };
    let st = load_settings(&mut cx, raw, Some(scope));
    Error::from_list(cx.errors)?;
    Ok(st)
}

/// The `solver` section: every key of [`spec::SOLVER`] read through its kind, then applied.
fn load_settings(cx: &mut Ctx, s: &Map<String, Value>, scope: Option<&Scope>) -> Settings {
    check_keys(cx, "solver", s, spec::SOLVER, "solver");
    let mut read: Vec<(&str, Got)> = Vec::new();
    for fld in spec::SOLVER {
        if let Some(v) = s.get(fld.name) {
            if let Some(g) = read_solver_field(cx, fld, v, scope) {
                read.push((fld.name, g));
            }
        }
    }
    let get = |key: &str| read.iter().find(|(k, _)| *k == key).map(|(_, g)| g);
    let num = |key: &str| match get(key) {
        Some(Got::Num(x)) => Some(*x),
        _ => None,
    };
    let int = |key: &str| match get(key) {
        Some(Got::Int(k)) => Some(*k),
        _ => None,
    };
    let mut st = Diagram::default_settings();
    let step = num("step");
    let method = match get("method") {
        Some(Got::Name(m)) => m.as_str(),
        _ => "dopri5",
    };
    st.method = match Method::from_name(method, step) {
        Ok(m) => m,
        Err(message) => {
            // The name is one of the methods (checked on reading), so the message is about
            // "step" (missing for rk4, or given to an adaptive method); an invalid "step"
            // value was reported already.
            if step.is_some() || !s.contains_key("step") {
                cx.err("solver.step", message);
            }
            Method::from_name(method, None).unwrap_or(Method::Rk4 { step: 1e-3 })
        }
    };
    let (start, stop) = (num("start_time"), num("stop_time"));
    if let Some(x) = start {
        st.start_time = x;
    }
    if let Some(x) = stop {
        st.stop_time = x;
    }
    if matches!(get("stop_time"), Some(Got::Cycle)) {
        // Known once the blocks are built: compiling sets it to the drive cycle's end
        // (`Diagram::stops_at_cycle`); infinite until then.
        st.stop_time = f64::INFINITY;
    }
    if (start.is_some() || stop.is_some()) && st.stop_time <= st.start_time {
        cx.err(
            "solver.stop_time",
            format!(
                "must be greater than start_time ({} s), got {} s",
                st.start_time, st.stop_time
            ),
        );
    }
    let steps_only = matches!(get("output_interval"), Some(Got::Steps));
    st.output_interval = num("output_interval");
    st.output_points = if steps_only {
        None
    } else {
        Some(
            int("output_points")
                .map(|n| n as u32)
                .unwrap_or(Settings::NETLIST_OUTPUT_POINTS),
        )
    };
    st.initial_step = num("initial_step");
    st.timeout = num("timeout");
    let set_num = |slot: &mut f64, key: &str| {
        if let Some(x) = num(key) {
            *slot = x;
        }
    };
    set_num(&mut st.rtol, "rtol");
    set_num(&mut st.atol, "atol");
    set_num(&mut st.max_step, "max_step");
    set_num(&mut st.min_step_rel, "min_step_rel");
    set_num(&mut st.chatter_window, "chatter_window");
    let set_int = |slot: &mut u64, key: &str| {
        if let Some(k) = int(key) {
            *slot = k;
        }
    };
    set_int(&mut st.max_output_points, "max_output_points");
    set_int(&mut st.max_time_events, "max_time_events");
    set_int(&mut st.max_steps, "max_steps");
    let set_usize = |slot: &mut usize, key: &str| {
        if let Some(k) = int(key) {
            *slot = usize::try_from(k).unwrap_or(usize::MAX);
        }
    };
    set_usize(&mut st.guard_samples, "guard_samples");
    set_usize(&mut st.max_event_iterations, "max_event_iterations");
    set_usize(&mut st.chatter_max_events, "chatter_max_events");
    st
}

fn load_signal(cx: &mut Ctx, path: &str, v: &Value, names: &[&str]) -> Option<ScopeSignal> {
    match v {
        Value::String(s) => {
            check_ref(cx, path, s, names, "variable", "block.var");
            Some(ScopeSignal::new(s.clone()))
        }
        Value::Object(m) => {
            check_keys(cx, path, m, spec::SIGNAL, "scope signal");
            let signal = match m.get("signal") {
                Some(Value::String(s)) => {
                    check_ref(
                        cx,
                        &format!("{path}.signal"),
                        s,
                        names,
                        "variable",
                        "block.var",
                    );
                    s.clone()
                }
                Some(other) => {
                    cx.err(
                        format!("{path}.signal"),
                        format!("expected a \"block.var\" string, {}", got(other)),
                    );
                    return None;
                }
                None => {
                    cx.err(
                        format!("{path}.signal"),
                        "missing; expected \"signal\": \"block.var\"",
                    );
                    return None;
                }
            };
            let mut s = ScopeSignal::new(signal);
            s.unit = display_unit(cx, &format!("{path}.unit"), m.get("unit"));
            match m.get("label") {
                Some(Value::String(l)) => s.label = Some(l.clone()),
                Some(other) => cx.err(
                    format!("{path}.label"),
                    format!("expected a string, {}", got(other)),
                ),
                None => {}
            }
            Some(s)
        }
        other => {
            cx.err(path, format!("expected a \"block.var\" string or {{\"signal\": ..., \"unit\": ..., \"label\": ...}}, {}", got(other)));
            None
        }
    }
}

fn display_unit(cx: &mut Ctx, path: &str, v: Option<&Value>) -> Option<String> {
    match v {
        None => None,
        Some(Value::String(u)) => {
            if DisplayUnit::parse(u).is_none() {
                let names = DisplayUnit::names();
                cx.err(
                    path,
                    format!(
                        "unknown display unit '{u}'{}; expected one of: {}",
                        suggest::hint(u, names.iter().copied()),
                        names.join(", ")
                    ),
                );
            }
            Some(u.clone())
        }
        Some(other) => {
            cx.err(
                path,
                format!(
                    "expected a display unit string such as \"rpm\", {}",
                    got(other)
                ),
            );
            None
        }
    }
}

fn load_scope(cx: &mut Ctx, i: usize, v: &Value, names: &[&str]) -> Option<ScopeSpec> {
    let path = format!("scopes[{i}]");
    let Value::Object(m) = v else {
        cx.err(
            &path,
            format!(
                "expected a scope object {{\"name\": ..., \"signals\": [...]}}, {}",
                got(v)
            ),
        );
        return None;
    };
    check_keys(cx, &path, m, spec::SCOPE, "scope");
    let name = match m.get("name") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(other) => {
            cx.err(
                format!("{path}.name"),
                format!(
                    "expected a non-empty string (the image file stem), {}",
                    got(other)
                ),
            );
            return None;
        }
        None => {
            cx.err(
                format!("{path}.name"),
                "missing scope name; expected \"name\": \"speeds\" (written as speeds.png)",
            );
            return None;
        }
    };
    let mut s = ScopeSpec::new(name, Vec::new());
    s.panels.clear();
    let sig_list = |cx: &mut Ctx, p: &str, v: &Value| -> Vec<ScopeSignal> {
        match v {
            Value::Array(items) if !items.is_empty() => items
                .iter()
                .enumerate()
                .filter_map(|(j, it)| load_signal(cx, &format!("{p}[{j}]"), it, names))
                .collect(),
            Value::Array(_) => {
                cx.err(p, "empty; expected at least one signal");
                Vec::new()
            }
            other => {
                cx.err(p, format!("expected an array of signals, {}", got(other)));
                Vec::new()
            }
        }
    };
    match (m.get("signals"), m.get("panels")) {
        (Some(_), Some(_)) => cx.err(
            &path,
            "give either \"signals\" (one panel) or \"panels\" (stacked), not both",
        ),
        (None, None) => cx.err(
            &path,
            "missing \"signals\": [\"block.var\", ...] (or \"panels\": [[...], [...]])",
        ),
        (Some(sig), None) => {
            let p = format!("{path}.signals");
            s.panels.push(sig_list(cx, &p, sig));
        }
        (None, Some(Value::Array(ps))) if !ps.is_empty() => {
            for (j, pv) in ps.iter().enumerate() {
                let p = format!("{path}.panels[{j}]");
                s.panels.push(sig_list(cx, &p, pv));
            }
        }
        (None, Some(other)) => cx.err(
            format!("{path}.panels"),
            format!(
                "expected a non-empty array of signal arrays [[...], [...]], {}",
                got(other)
            ),
        ),
    }
    match m.get("title") {
        Some(Value::String(t)) => s.title = Some(t.clone()),
        Some(other) => cx.err(
            format!("{path}.title"),
            format!("expected a string, {}", got(other)),
        ),
        None => {}
    }
    match m.get("x") {
        Some(Value::String(t)) => s.x = Some(t.clone()),
        Some(other) => cx.err(
            format!("{path}.x"),
            format!(
                "expected the name of the signal to plot the others against (\"car.x\"), {}",
                got(other)
            ),
        ),
        None => {}
    }
    s.unit = display_unit(cx, &format!("{path}.unit"), m.get("unit"));
    for (key, slot) in [("width", &mut s.width), ("height", &mut s.height)] {
        match m.get(key) {
            None => {}
            Some(Value::Number(n))
                if n.as_u64()
                    .is_some_and(|k| (SIZE_RANGE.0..=SIZE_RANGE.1).contains(&k)) =>
            {
                *slot = n.as_u64().unwrap_or(0) as u32
            }
            Some(other) => cx.err(
                format!("{path}.{key}"),
                format!(
                    "expected an integer number of pixels in {}..={}, {}",
                    SIZE_RANGE.0,
                    SIZE_RANGE.1,
                    got(other)
                ),
            ),
        }
    }
    match m.get("event_markers") {
        Some(Value::Bool(b)) => s.event_markers = *b,
        Some(other) => cx.err(
            format!("{path}.event_markers"),
            format!("expected true or false, {}", got(other)),
        ),
        None => {}
    }
    match m.get("ylim") {
        None => {}
        Some(Value::Array(v))
            if v.len() == 2
                && v.iter().all(|x| x.as_f64().is_some_and(f64::is_finite))
                && v[0].as_f64() < v[1].as_f64() =>
        {
            s.ylim = Some((v[0].as_f64().unwrap_or(0.0), v[1].as_f64().unwrap_or(1.0)));
        }
        Some(other) => cx.err(
            format!("{path}.ylim"),
            format!(
                "expected [low, high] with low < high (display units), {}",
                got(other)
            ),
        ),
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn load(v: Value) -> Result<Diagram, Error> {
        load_value(&v, "t.json", Path::new("."))
    }

    #[test]
    fn minimal_and_round_trip() {
        let v = json!({
            "drivelink": 1, "name": "m",
            "parameters": {"a": 2, "b": "2*a", "tab": [[0, 1], [1, 2]]},
            "solver": {"method": "rk4", "step": 0.01, "stop_time": "5*a", "max_step": "10 ms"},
            "blocks": [{"name": "c", "type": "Constant", "params": {"value": "b"}},
                       {"name": "g", "type": "Gain", "params": {"k": 3}}],
            "connections": [["c.y", "g.u"]],
            "log": ["g.y"],
            "scopes": [{"name": "s", "signals": ["g.y", {"signal": "c.y", "unit": "rpm"}]},
                       {"name": "p", "panels": [["g.y"], ["c.y"]], "width": 640, "event_markers": true}]
        });
        let d = load(v).unwrap();
        assert_eq!(d.settings.stop_time, 10.0);
        assert!((d.settings.max_step - 0.01).abs() < 1e-15);
        assert_eq!(d.settings.method, Method::Rk4 { step: 0.01 });
        let back = load(to_json(&d)).unwrap();
        assert_eq!(d, back);
    }

    #[test]
    fn errors_have_paths() {
        let e = load(json!({"drivelink": 2, "blocks": {}}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.json: drivelink"), "{e}");
        assert!(e.contains("t.json: blocks: expected an array"), "{e}");
        let e = load(json!({"drivelink": 1, "blokcs": []}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean 'blocks'"), "{e}");
        let e = load(json!({"drivelink": 1, "blocks": [], "solver": {"rtol": -1, "mehtod": "x"}}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("solver.rtol: must be > 0"), "{e}");
        assert!(e.contains("did you mean 'method'"), "{e}");
        let e = parse_text("{\n  \"drivelink\": 1,\n  ]", "x.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.json: line 3, column 3"), "{e}");
    }

    /// A value for every solver key that differs from its default, with the other keys it
    /// needs. A key in `spec::SOLVER` without an entry here fails: add one.
    fn solver_example(key: &str) -> Value {
        match key {
            "method" => json!({"method": "dop853"}),
            "start_time" => json!({"start_time": "1 s"}),
            "stop_time" => json!({"stop_time": 3}),
            "rtol" => json!({"rtol": 1e-4}),
            "atol" => json!({"atol": 1e-3}),
            "max_step" => json!({"max_step": "5 ms"}),
            "step" => json!({"method": "rk4", "step": 0.002}),
            "initial_step" => json!({"initial_step": 1e-5}),
            "output_interval" => json!({"output_interval": "steps"}),
            "output_points" => json!({"output_points": 17}),
            "max_output_points" => json!({"max_output_points": 1000}),
            "max_time_events" => json!({"max_time_events": 1000}),
            "guard_samples" => json!({"guard_samples": 9}),
            "timeout" => json!({"timeout": "2 min"}),
            "max_steps" => json!({"max_steps": 123}),
            "min_step_rel" => json!({"min_step_rel": 1e-12}),
            "max_event_iterations" => json!({"max_event_iterations": 7}),
            "chatter_window" => json!({"chatter_window": 1e-4}),
            "chatter_max_events" => json!({"chatter_max_events": 11}),
            other => panic!("spec::SOLVER has '{other}': give it an example here"),
        }
    }

    /// Loader and spec agree: every key of the table is read and lands in the settings
    /// (a key listed but not applied would leave the defaults), round-trips through
    /// `to_json`, and rejects a value of the wrong type naming `solver.KEY`.
    #[test]
    fn spec_and_loader_agree() {
        let base = load(json!({"drivelink": 1, "blocks": []}))
            .unwrap()
            .settings;
        for fld in spec::SOLVER {
            let solver = solver_example(fld.name);
            let v = json!({"drivelink": 1, "blocks": [], "solver": solver});
            let d = load(v).unwrap_or_else(|e| panic!("{}: {e}", fld.name));
            let mut only_step = base.clone();
            if fld.name == "step" {
                // rk4 with another step: the step must be the one given.
                only_step.method = Method::Rk4 { step: 1.0 };
            }
            assert_ne!(d.settings, only_step, "solver.{} is not applied", fld.name);
            assert_eq!(
                load(to_json(&d)).unwrap(),
                d,
                "solver.{} round trip",
                fld.name
            );
            let bad = json!({"drivelink": 1, "blocks": [], "solver": {fld.name: {"x": 1}}});
            let e = load(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("solver.{}", fld.name)), "{e}");
        }
    }

    /// A netlist giving top-level key `key` a value other than its default (with a block
    /// `c` to refer to). A key in `spec::TOP` without an entry here fails: add one.
    fn top_example(key: &str) -> Value {
        let mut v = json!({"drivelink": 1, "name": "base",
            "blocks": [{"name": "c", "type": "Constant", "params": {"value": 1}}]});
        let (k, x) = match key {
            "drivelink" => return v,
            "name" => ("name", json!("other")),
            "description" => ("description", json!("text")),
            "parameters" => ("parameters", json!({"a": "2 s"})),
            "solver" => ("solver", json!({"stop_time": 3})),
            "blocks" => ("blocks", json!([])),
            "connections" => ("connections", json!([["c.y", "c.u"]])),
            "log" => ("log", json!(["c.y"])),
            "scopes" => ("scopes", json!([{"name": "s", "signals": ["c.y"]}])),
            "metrics" => ("metrics", json!({"peak": "max(c.y)", "half": "peak / 2"})),
            "ports" => ("ports", json!({"out": "c.y"})),
            "aliases" => ("aliases", json!({"level": "c.y"})),
            other => panic!("spec::TOP has '{other}': give it an example here"),
        };
        v[k] = x;
        v
    }

    /// Every top-level key is read (the diagram differs from one without it), saved by
    /// `to_json` and loaded back equal; a value of the wrong type is an error at its key.
    #[test]
    fn top_keys_are_read_and_saved() {
        let base = load(top_example("drivelink")).unwrap();
        for fld in spec::TOP {
            let d = load(top_example(fld.name)).unwrap_or_else(|e| panic!("{}: {e}", fld.name));
            if fld.name != "drivelink" {
                assert_ne!(d, base, "{} is not read", fld.name);
            }
            assert_eq!(load(to_json(&d)).unwrap(), d, "{} round trip", fld.name);
            if !matches!(fld.name, "drivelink" | "blocks") {
                let mut bad = top_example("drivelink");
                bad[fld.name] = json!(true);
                let e = load(bad).unwrap_err().to_string();
                assert!(e.contains(&format!("t.json: {}", fld.name)), "{e}");
            }
        }
    }

    #[test]
    fn metrics_keep_their_order_and_need_names_and_text() {
        let mut v = top_example("metrics");
        v["metrics"] = json!({"z": "final(c.y)", "a": "z + 1", "m": "max(c.y)"});
        let d = load(v.clone()).unwrap();
        let names: Vec<&str> = d.metrics.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(names, ["z", "a", "m"]);
        assert_eq!(d.metrics[1].1, "z + 1");
        v["metrics"] = json!({"bad name": "final(c.y)", "e": "", "n": 3});
        let e = load(v).unwrap_err().to_string();
        assert!(e.contains("metrics.bad name: invalid metric name"), "{e}");
        assert!(e.contains("metrics.e: expected a metric expression"), "{e}");
        assert!(e.contains("metrics.n: expected a metric expression such as \"max(block.var)\", got a number 3"), "{e}");
    }

    /// The schema is built from the same tables: each key of each table is a property of
    /// its object, and nothing else is.
    #[test]
    fn schema_lists_every_key() {
        let s = schema::schema(&Registry::new());
        let defs = &s["$defs"];
        let keys = |v: &Value| -> Vec<String> {
            v["properties"]
                .as_object()
                .expect("properties")
                .keys()
                .cloned()
                .collect()
        };
        let names =
            |t: &[spec::Field]| -> Vec<String> { spec::names(t).map(String::from).collect() };
        assert_eq!(keys(&defs["netlist"]), names(spec::TOP));
        assert_eq!(
            keys(&defs["netlist"]["properties"]["solver"]),
            names(spec::SOLVER)
        );
        assert_eq!(keys(&defs["scope"]), names(spec::SCOPE));
        assert_eq!(keys(&defs["signal"]["anyOf"][1]), names(spec::SIGNAL));
        let sub = defs["block"]["oneOf"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(keys(&sub), names(spec::BLOCK));
    }
}
