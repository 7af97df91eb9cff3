//! Loading: the structure checks of one netlist (file or inline diagram) and its sections,
//! `blocks`, `connections`, `log`, `scopes`, `exports`, `metrics`, with the errors
//! collected in a [`Ctx`] and reported together.

mod scope;
mod solver;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use drivelink_core::compile::{resolve_parameters, Scope, MAX_BLOCKS};
use drivelink_core::diagram::{BlockSpec, Diagram, PortRef};
use drivelink_core::error::Error;
use drivelink_core::scope::ScopeSpec;
use drivelink_core::suggest;

use crate::*;
use scope::load_scope;
use solver::{load_settings, resolve_settings};

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

pub(crate) fn load_file_inner(
    path: &Path,
    loading: &mut Loading,
    depth: usize,
) -> Result<Diagram, Error> {
    let origin = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| Error::Io {
        path: origin.clone(),
        message: e.to_string(),
    })?;
    let v = parse_text(&utf8_text(bytes, &origin)?, &origin)?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    loading.files.push(canon);
    let r = load_value_inner(&v, &origin, &base, loading, "", depth);
    loading.files.pop();
    r
}

/// What the loading of one netlist carries down into its subsystems.
#[derive(Debug, Default)]
pub(crate) struct Loading {
    /// The subsystem files being loaded, outermost first: a file met again is a cycle.
    files: Vec<PathBuf>,
    /// Block entries loaded so far at every level (each subsystem instance loads its
    /// file anew), against [`MAX_BLOCKS`].
    blocks: usize,
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

pub(crate) fn load_value_inner(
    v: &Value,
    origin: &str,
    base: &Path,
    loading: &mut Loading,
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
    d.base_dir = drivelink_core::diagram::BaseDir(Some(base.to_path_buf()));
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
    d.blocks = load_blocks(&mut cx, top, loading, depth);
    if loading.blocks > MAX_BLOCKS {
        // Loading stopped at the limit (reported where it was reached, inside this
        // diagram): the rest of it would only list the blocks that were not loaded.
        Error::from_list(cx.errors)?;
        return Err(Error::Netlist {
            file: origin.to_string(),
            path: root.to_string(),
            message: format!("the model has more than {MAX_BLOCKS} blocks"),
        });
    }
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
    loading: &mut Loading,
    depth: usize,
) -> Vec<BlockSpec> {
    let mut out = Vec::new();
    match top.get("blocks") {
        Some(Value::Array(bs)) => {
            for (i, b) in bs.iter().enumerate() {
                if loading.blocks >= MAX_BLOCKS {
                    if loading.blocks == MAX_BLOCKS {
                        cx.err(
                            format!("blocks[{i}]"),
                            format!(
                                "the model has more than {MAX_BLOCKS} blocks, counting every \
                                 subsystem instance and the blocks inside it (subsystems that \
                                 include many copies of subsystems multiply)"
                            ),
                        );
                        loading.blocks += 1;
                    }
                    break;
                }
                loading.blocks += 1;
                if let Some(spec) = load_block(cx, i, b, loading, depth) {
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
    loading: &mut Loading,
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
                if let Some(k) = loading.files.iter().position(|s| s == c) {
                    let chain: Vec<String> = loading.files[k..].iter().map(|p| p.display().to_string()).chain(std::iter::once(c.display().to_string())).collect();
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
            match load_file_inner(&full, loading, depth + 1) {
                Ok(inner) => spec.inner = Some(Box::new(inner)),
                Err(Error::Io { path: p, message }) => cx.err(format!("{path}.file"), format!("subsystem '{name}': cannot read '{p}': {message}")),
                Err(e) => cx.errors.push(e),
            }
            spec.file = Some(f.clone());
        }
        (Some(other), None) => cx.err(format!("{path}.file"), format!("subsystem '{name}': expected a file name string, {}", got(other))),
        (None, Some(inner)) => {
            let p = if cx.prefix.is_empty() { format!("{path}.diagram") } else { format!("{}.{path}.diagram", cx.prefix) };
            match load_value_inner(inner, cx.file, cx.base, loading, &p, depth + 1) {
                Ok(d) => spec.inner = Some(Box::new(d)),
                Err(e) => cx.errors.push(e),
            }
        }
    }
    Some(spec)
}
