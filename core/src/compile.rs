//! `compile()`: diagram -> runnable [`Model`].
//!
//! Steps, each collecting every error it finds before giving up (so a user sees all
//! offending names at once):
//! 1. flatten subsystems and composite blocks (names become `sub.block`), evaluate model
//!    parameters and block parameters (expressions, units, dimension checks), build blocks;
//! 2. resolve connections: unknown blocks/ports (with "did you mean"), kind mismatches,
//!    signal lines with zero or several outputs, inputs driven twice or not at all;
//!    mechanical lines joined into nodes by union-find;
//! 3. order signal evaluation by a topological sort with the mechanical network as one node
//!    (a cycle is an algebraic loop listing its blocks), check the network is not singular,
//!    resolve logged variables.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use petgraph::graph::{DiGraph, NodeIndex};
use serde_json::Value;

use crate::block::{Block, PortKind, RowKind, VarSource};
use crate::diagram::{Diagram, PortRef};
use crate::error::{Error, ParamError};
use crate::expr::{self, Quantity};
use crate::model::{InputSrc, Layout, Model, ModelParts, Stage, VarRef};
use crate::network::{Network, NodeRow};
use crate::params::{BlockBuild, ParamDefault, ParamKind, ParamSpec, ParamValue, Params, Registry};
use crate::suggest;
use crate::units;

/// Declared unit of a parameter that takes a value of any dimension (signal levels such as
/// `Constant.value` or `Step.after`, which carry whatever the signal means).
pub const ANY_UNIT: &str = "*";

/// A resolved model parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum ScopeVal {
    Q(Quantity),
    Json(Value),
}

/// Resolved parameters visible to the blocks of one (sub)diagram.
pub type Scope = BTreeMap<String, ScopeVal>;

/// A primitive block after flattening.
struct FlatBlock {
    name: String,
    type_name: String,
    params: serde_json::Map<String, Value>,
    scope: Rc<Scope>,
}

#[derive(Default)]
struct Flat {
    blocks: Vec<FlatBlock>,
    connections: Vec<Vec<String>>,
    log: Vec<String>,
    /// "sub.port" -> flat "block.port"
    port_map: HashMap<String, String>,
    /// "sub.alias" -> flat "block.var"
    alias_map: HashMap<String, String>,
}

fn quantity_lookup(scope: &Scope) -> impl Fn(&str) -> Option<Quantity> + '_ {
    move |name: &str| match scope.get(name) {
        Some(ScopeVal::Q(q)) => Some(*q),
        _ => None,
    }
}

/// Evaluate one model-parameter value (number, boolean, expression, or array kept as JSON)
/// in `scope`.
fn scope_value(v: &Value, scope: &Scope) -> Result<ScopeVal, String> {
    match v {
        Value::Number(n) => Ok(ScopeVal::Q(Quantity::bare(n.as_f64().unwrap_or(f64::NAN)))),
        Value::Bool(b) => Ok(ScopeVal::Q(Quantity::bare(if *b { 1.0 } else { 0.0 }))),
        Value::String(s) => match scope.get(s.trim()) {
            Some(ScopeVal::Json(j)) => Ok(ScopeVal::Json(j.clone())),
            _ => {
                let names: Vec<&str> = scope.keys().map(String::as_str).collect();
                expr::eval_with_names(s, &quantity_lookup(scope), &names)
                    .map(ScopeVal::Q)
                    .map_err(|e| format!("\"{s}\": {e}"))
            }
        },
        Value::Array(_) => Ok(ScopeVal::Json(v.clone())),
        _ => Err("expected a number, an expression string, a boolean or an array".to_string()),
    }
}

/// Evaluate a diagram's `parameters` in order, with `overrides` (already resolved) taking
/// precedence. `ctx` names the diagram in messages.
pub fn resolve_parameters(
    params: &[(String, Value)],
    overrides: &Scope,
    ctx: &str,
) -> Result<Scope, Error> {
    let mut scope = Scope::new();
    let mut errors = Vec::new();
    for (name, v) in params {
        if let Some(o) = overrides.get(name) {
            scope.insert(name.clone(), o.clone());
            continue;
        }
        let r = scope_value(v, &scope);
        match r {
            Ok(val) => {
                scope.insert(name.clone(), val);
            }
            Err(message) => errors.push(Error::Netlist {
                file: ctx.to_string(),
                path: format!("parameters.{name}"),
                message,
            }),
        }
    }
    for (name, o) in overrides {
        if !scope.contains_key(name) {
            scope.insert(name.clone(), o.clone());
        }
    }
    Error::from_list(errors)?;
    Ok(scope)
}

/// Resolve one raw JSON value against a parameter spec.
fn resolve_value(spec: &ParamSpec, raw: &Value, scope: &Scope) -> Result<ParamValue, String> {
    // A string naming an array-valued model parameter stands for that array.
    let raw = match raw {
        Value::String(s) => match scope.get(s.trim()) {
            Some(ScopeVal::Json(j)) => j,
            _ => raw,
        },
        _ => raw,
    };
    match &spec.kind {
        ParamKind::Number { unit } => number(raw, unit, scope).map(ParamValue::Number),
        ParamKind::Bool => match raw {
            Value::Bool(b) => Ok(ParamValue::Bool(*b)),
            Value::Number(n) if n.as_f64() == Some(0.0) || n.as_f64() == Some(1.0) => {
                Ok(ParamValue::Bool(n.as_f64() == Some(1.0)))
            }
            other => Err(format!("expected true or false, got {}", short(other))),
        },
        ParamKind::Choice(options) => match raw {
            Value::String(s) if options.contains(&s.as_str()) => Ok(ParamValue::Text(s.clone())),
            Value::String(s) => Err(format!(
                "'{s}' is not one of {}{}",
                options
                    .iter()
                    .map(|o| format!("\"{o}\""))
                    .collect::<Vec<_>>()
                    .join(", "),
                suggest::hint(s, options.iter().copied())
            )),
            other => Err(format!(
                "expected one of {:?}, got {}",
                options,
                short(other)
            )),
        },
        ParamKind::Text => match raw {
            Value::String(s) => Ok(ParamValue::Text(s.clone())),
            other => Err(format!("expected a string, got {}", short(other))),
        },
        ParamKind::Vector { unit } => match raw {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, it)| number(it, unit, scope).map_err(|e| format!("entry {i}: {e}")))
                .collect::<Result<Vec<_>, _>>()
                .map(ParamValue::Vector),
            other => Err(format!(
                "expected an array of numbers, got {}",
                short(other)
            )),
        },
        ParamKind::Table { cols } => table(raw, *cols, scope).map(ParamValue::Table),
        ParamKind::Matrix => match raw {
            Value::Number(_) | Value::String(_) => {
                number(raw, "1", scope).map(|v| ParamValue::Table(vec![vec![v]]))
            }
            _ => table(raw, 0, scope).map(ParamValue::Table),
        },
        ParamKind::NumberOrTable { unit } => match raw {
            Value::Array(_) => table(raw, 2, scope).map(ParamValue::Table),
            _ => number(raw, unit, scope).map(ParamValue::Number),
        },
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 40 {
        format!(
            "{}...",
            &s[..s.char_indices().nth(37).map(|c| c.0).unwrap_or(s.len())]
        )
    } else {
        s
    }
}

fn number(raw: &Value, unit: &str, scope: &Scope) -> Result<f64, String> {
    let v = match raw {
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| "not a finite number".to_string())?,
        Value::String(s) => {
            let names: Vec<&str> = scope.keys().map(String::as_str).collect();
            let q = expr::eval_with_names(s, &quantity_lookup(scope), &names)
                .map_err(|e| format!("\"{s}\": {e}"))?;
            if unit == ANY_UNIT {
                // Signal values of any dimension: the SI value ("10000 N*m" -> 10000).
                q.value
            } else {
                let want = units::parse_unit(unit)
                    .map_err(|e| format!("bad declared unit '{unit}': {e}"))?;
                // A bare number is SI; a dimensioned one is already converted to SI.
                expr::check_dim(&q, want.dim, unit).map_err(|e| format!("\"{s}\": {e}"))?
            }
        }
        Value::Bool(_) => return Err("expected a number, got a boolean".into()),
        other => return Err(format!("expected a number, got {}", short(other))),
    };
    if !v.is_finite() {
        return Err(format!("must be finite, got {v}"));
    }
    Ok(v)
}

fn table(raw: &Value, cols: usize, scope: &Scope) -> Result<Vec<Vec<f64>>, String> {
    let Value::Array(rows) = raw else {
        return Err(format!("expected a table [[...], ...], got {}", short(raw)));
    };
    if rows.is_empty() {
        return Err("table is empty".into());
    }
    let mut out = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let Value::Array(cells) = r else {
            return Err(format!("row {i} is not an array"));
        };
        if cols > 0 && cells.len() != cols {
            return Err(format!(
                "row {i} has {} entries, expected {cols}",
                cells.len()
            ));
        }
        let mut row = Vec::with_capacity(cells.len());
        for (j, c) in cells.iter().enumerate() {
            row.push(number(c, "1", scope).map_err(|e| format!("row {i}, column {j}: {e}"))?);
        }
        out.push(row);
    }
    Ok(out)
}

/// Resolve a block's raw parameters against its type's specs.
pub fn resolve_params(
    block: &str,
    type_name: &str,
    specs: &[ParamSpec],
    raw: &serde_json::Map<String, Value>,
    scope: &Scope,
) -> Result<Params, Vec<Error>> {
    let mut errors = Vec::new();
    let known: Vec<&str> = specs.iter().map(|s| s.name).collect();
    for k in raw.keys() {
        if !known.contains(&k.as_str()) {
            errors.push(Error::UnknownParam {
                block: block.to_string(),
                type_name: type_name.to_string(),
                param: k.clone(),
                hint: suggest::hint(k, known.iter().copied()),
                known: if known.is_empty() {
                    "(none)".into()
                } else {
                    known.join(", ")
                },
            });
        }
    }
    let mut values = BTreeMap::new();
    for spec in specs {
        let raw_v = match (raw.get(spec.name), &spec.default) {
            (Some(v), _) => v.clone(),
            (None, ParamDefault::Value(v)) => v.clone(),
            (None, ParamDefault::Optional) => continue,
            (None, ParamDefault::Required) => {
                errors.push(Error::Param(ParamError {
                    block: block.to_string(),
                    param: spec.name.to_string(),
                    message: format!("is required ({})", spec.doc),
                }));
                continue;
            }
        };
        match resolve_value(spec, &raw_v, scope) {
            Ok(v) => {
                values.insert(spec.name.to_string(), v);
            }
            Err(message) => errors.push(Error::Param(ParamError {
                block: block.to_string(),
                param: spec.name.to_string(),
                message,
            })),
        }
    }
    if errors.is_empty() {
        Ok(Params {
            block: block.to_string(),
            type_name: type_name.to_string(),
            values,
        })
    } else {
        Err(errors)
    }
}

fn valid_name(n: &str) -> bool {
    let mut c = n.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

fn flatten(
    d: &Diagram,
    reg: &Registry,
    prefix: &str,
    scope: Rc<Scope>,
    out: &mut Flat,
    errors: &mut Vec<Error>,
    depth: usize,
) {
    if depth > 64 {
        errors.push(Error::Netlist {
            file: d.name.clone(),
            path: prefix.to_string(),
            message: "subsystems nested deeper than 64 levels (a cycle?)".into(),
        });
        return;
    }
    // This diagram's own connections go first in its segment of the flat list, so at the top
    // level connection `i` of the error messages is `connections[i]` of the netlist.
    let conn_start = out.connections.len();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for b in &d.blocks {
        if !valid_name(&b.name) {
            errors.push(Error::InvalidName {
                name: format!("{prefix}{}", b.name),
            });
        }
        if seen.insert(&b.name, 0).is_some() {
            errors.push(Error::DuplicateName {
                name: format!("{prefix}{}", b.name),
            });
        }
    }
    for b in &d.blocks {
        let full = format!("{prefix}{}", b.name);
        if b.type_name == "Subsystem" {
            let Some(inner) = &b.inner else {
                errors.push(Error::Netlist {
                    file: d.name.clone(),
                    path: full.clone(),
                    message: "Subsystem without a diagram".into(),
                });
                continue;
            };
            // Overrides are evaluated in the outer scope.
            let inner_names: Vec<&str> = inner.parameters.iter().map(|p| p.0.as_str()).collect();
            let mut overrides = Scope::new();
            for (k, v) in &b.params {
                if !inner_names.contains(&k.as_str()) {
                    errors.push(Error::UnknownParam {
                        block: full.clone(),
                        type_name: "Subsystem".into(),
                        param: k.clone(),
                        hint: suggest::hint(k, inner_names.iter().copied()),
                        known: inner_names.join(", "),
                    });
                    continue;
                }
                match resolve_in(&[(k.clone(), v.clone())], &scope, &full) {
                    Ok(s) => overrides.extend(s),
                    Err(e) => errors.push(e),
                }
            }
            expand(inner, &overrides, &full, reg, out, errors, depth);
            continue;
        }
        let Some(t) = reg.get(&b.type_name) else {
            let mut names: Vec<&str> = reg.names().collect();
            names.push("Subsystem");
            errors.push(Error::UnknownType {
                block: full,
                type_name: b.type_name.clone(),
                hint: suggest::hint(&b.type_name, names),
            });
            continue;
        };
        match &t.build {
            BlockBuild::Primitive(_) => out.blocks.push(FlatBlock {
                name: full,
                type_name: b.type_name.clone(),
                params: b.params.clone(),
                scope: scope.clone(),
            }),
            BlockBuild::Composite(f) => {
                let params = match resolve_params(&full, t.name, &t.params, &b.params, &scope) {
                    Ok(p) => p,
                    Err(es) => {
                        errors.extend(es);
                        continue;
                    }
                };
                match f(&params) {
                    Ok(inner) => expand(&inner, &Scope::new(), &full, reg, out, errors, depth),
                    Err(e) => errors.push(Error::Param(e)),
                }
            }
        }
    }
    let own: Vec<Vec<String>> = d
        .connections
        .iter()
        .map(|c| {
            c.iter()
                .map(|r| {
                    let full = format!("{prefix}{r}");
                    out.port_map.get(&full).cloned().unwrap_or(full)
                })
                .collect()
        })
        .collect();
    out.connections.splice(conn_start..conn_start, own);
    for l in &d.log {
        if l == "all" {
            out.log.push("all".into());
        } else {
            let full = format!("{prefix}{l}");
            out.log.push(full);
        }
    }
}

/// Flatten the inner diagram of subsystem or composite block `full`: resolve its parameters
/// (with `overrides` from the outer block), flatten it under `full.` and register its
/// exported ports and aliases.
fn expand(
    inner: &Diagram,
    overrides: &Scope,
    full: &str,
    reg: &Registry,
    out: &mut Flat,
    errors: &mut Vec<Error>,
    depth: usize,
) {
    let inner_scope = match resolve_parameters(&inner.parameters, overrides, full) {
        Ok(s) => s,
        Err(e) => {
            errors.push(e);
            return;
        }
    };
    let sub_prefix = format!("{full}.");
    flatten(
        inner,
        reg,
        &sub_prefix,
        Rc::new(inner_scope),
        out,
        errors,
        depth + 1,
    );
    export(inner, full, &sub_prefix, out, errors);
}

/// Evaluate `params` (name, raw) in an existing scope (for subsystem overrides).
fn resolve_in(params: &[(String, Value)], scope: &Scope, ctx: &str) -> Result<Scope, Error> {
    let mut out = Scope::new();
    for (name, v) in params {
        let val = scope_value(v, scope).map_err(|message| Error::Netlist {
            file: ctx.to_string(),
            path: format!("params.{name}"),
            message,
        })?;
        out.insert(name.clone(), val);
    }
    Ok(out)
}

/// Register a (sub)diagram's exported ports and aliases under the outer name.
fn export(inner: &Diagram, full: &str, sub_prefix: &str, out: &mut Flat, errors: &mut Vec<Error>) {
    for (exp, target) in &inner.ports {
        let t = format!("{sub_prefix}{target}");
        let t = out.port_map.get(&t).cloned().unwrap_or(t);
        if PortRef::parse(&t).is_none() {
            errors.push(Error::Netlist {
                file: full.to_string(),
                path: format!("ports.{exp}"),
                message: format!("'{target}' is not a \"block.port\" reference"),
            });
        }
        out.port_map.insert(format!("{full}.{exp}"), t);
    }
    for (alias, target) in &inner.aliases {
        let t = format!("{sub_prefix}{target}");
        let t = out.alias_map.get(&t).cloned().unwrap_or(t);
        out.alias_map.insert(format!("{full}.{alias}"), t);
    }
}

struct UnionFind(Vec<usize>);
impl UnionFind {
    fn find(&mut self, i: usize) -> usize {
        let mut r = i;
        while self.0[r] != r {
            r = self.0[r];
        }
        let mut k = i;
        while self.0[k] != r {
            let nx = self.0[k];
            self.0[k] = r;
            k = nx;
        }
        r
    }
    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.0[hi] = lo;
        }
    }
}

/// Compile a diagram with the block types of `reg`.
pub fn compile(d: &Diagram, reg: &Registry) -> Result<Model, Error> {
    // ---- 1. flatten, parameters, build ----
    let mut errors = Vec::new();
    let top_scope = resolve_parameters(&d.parameters, &Scope::new(), &d.name)?;
    let mut flat = Flat::default();
    flatten(d, reg, "", Rc::new(top_scope), &mut flat, &mut errors, 0);
    let mut blocks: Vec<Box<dyn Block>> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for fb in &flat.blocks {
        let Some(t) = reg.get(&fb.type_name) else {
            continue;
        };
        let BlockBuild::Primitive(build) = &t.build else {
            continue;
        };
        match resolve_params(&fb.name, t.name, &t.params, &fb.params, &fb.scope) {
            Ok(p) => match build(&p) {
                Ok(b) => {
                    blocks.push(b);
                    names.push(fb.name.clone());
                }
                Err(e) => errors.push(Error::Param(e)),
            },
            Err(es) => errors.extend(es),
        }
    }
    Error::from_list(errors)?;

    // ---- 2. ports and connections ----
    let nb = blocks.len();
    let ports: Vec<Vec<crate::block::PortDecl>> = blocks.iter().map(|b| b.ports()).collect();
    let mut port_base = Vec::with_capacity(nb);
    let mut total_ports = 0;
    for p in &ports {
        port_base.push(total_ports);
        total_ports += p.len();
    }
    let by_name: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut uf = UnionFind((0..total_ports).collect());
    let mut driver: Vec<Option<(usize, usize)>> = vec![None; total_ports]; // In port -> (Out global port, connection)
    let mut errors = Vec::new();
    for (ci, conn) in flat.connections.iter().enumerate() {
        if conn.len() < 2 {
            errors.push(Error::ShortConnection {
                connection: ci,
                count: conn.len(),
            });
            continue;
        }
        let mut resolved: Vec<(usize, usize, &str)> = Vec::new(); // (block, port, text)
        let mut ok = true;
        for text in conn {
            let Some(pr) = PortRef::parse(text) else {
                errors.push(Error::BadPortRef {
                    connection: ci,
                    text: text.clone(),
                });
                ok = false;
                continue;
            };
            let Some(&b) = by_name.get(pr.block.as_str()) else {
                errors.push(Error::UnknownBlock {
                    connection: ci,
                    block: pr.block.clone(),
                    hint: suggest::hint(&pr.block, names.iter().map(String::as_str)),
                });
                ok = false;
                continue;
            };
            let Some(p) = ports[b].iter().position(|p| p.name == pr.port) else {
                errors.push(Error::UnknownPort {
                    connection: ci,
                    block: pr.block.clone(),
                    type_name: blocks[b].type_name().to_string(),
                    port: pr.port.clone(),
                    hint: suggest::hint(&pr.port, ports[b].iter().map(|p| p.name.as_str())),
                    ports: crate::params::port_summary(&ports[b]),
                });
                ok = false;
                continue;
            };
            resolved.push((b, p, text));
        }
        if !ok {
            continue;
        }
        let kinds: Vec<PortKind> = resolved.iter().map(|&(b, p, _)| ports[b][p].kind).collect();
        let domain = |k: PortKind| match k {
            PortKind::In | PortKind::Out => 0,
            PortKind::Rot => 1,
            PortKind::Trans => 2,
        };
        if kinds.iter().any(|&k| domain(k) != domain(kinds[0])) {
            errors.push(Error::KindMismatch {
                connection: ci,
                details: resolved
                    .iter()
                    .zip(&kinds)
                    .map(|(r, k)| format!("{} [{}]", r.2, k.as_str()))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
            continue;
        }
        if kinds[0].is_mech() {
            let g0 = port_base[resolved[0].0] + resolved[0].1;
            for &(b, p, _) in &resolved {
                let g = port_base[b] + p;
                uf.union(g0, g);
            }
        } else {
            let outs: Vec<&(usize, usize, &str)> = resolved
                .iter()
                .filter(|r| ports[r.0][r.1].kind == PortKind::Out)
                .collect();
            if outs.len() != 1 {
                errors.push(Error::SignalDrivers {
                    connection: ci,
                    outputs: outs.len(),
                    details: resolved
                        .iter()
                        .map(|r| format!("{} [{}]", r.2, ports[r.0][r.1].kind.as_str()))
                        .collect::<Vec<_>>()
                        .join(", "),
                });
                continue;
            }
            let src = port_base[outs[0].0] + outs[0].1;
            for &(b, p, _) in &resolved {
                if ports[b][p].kind != PortKind::In {
                    continue;
                }
                let g = port_base[b] + p;
                if let Some((_, first)) = driver[g] {
                    errors.push(Error::TwoDrivers {
                        block: names[b].clone(),
                        port: ports[b][p].name.clone(),
                        first,
                        second: ci,
                    });
                } else {
                    driver[g] = Some((src, ci));
                }
            }
        }
    }
    for b in 0..nb {
        for (p, decl) in ports[b].iter().enumerate() {
            if decl.kind == PortKind::In
                && driver[port_base[b] + p].is_none()
                && decl.default.is_none()
            {
                errors.push(Error::UndrivenInput {
                    block: names[b].clone(),
                    port: decl.name.clone(),
                });
            }
        }
    }
    Error::from_list(errors)?;

    // ---- 3. layout ----
    // Signal slots: every Out port.
    let mut out_slot = vec![usize::MAX; total_ports];
    let mut n_signals = 0;
    let mut layout: Vec<Layout> = Vec::with_capacity(nb);
    let mut inputs: Vec<InputSrc> = Vec::new();
    for b in 0..nb {
        let mut l = Layout {
            ports: ports[b].clone(),
            ..Default::default()
        };
        l.y_off = n_signals;
        for (p, decl) in ports[b].iter().enumerate() {
            if decl.kind == PortKind::Out {
                out_slot[port_base[b] + p] = n_signals;
                n_signals += 1;
            }
        }
        l.n_y = n_signals - l.y_off;
        layout.push(l);
    }
    for b in 0..nb {
        layout[b].u_off = inputs.len();
        for (p, decl) in ports[b].iter().enumerate() {
            if decl.kind == PortKind::In {
                let src = match driver[port_base[b] + p] {
                    Some((g, _)) => InputSrc::Signal(out_slot[g]),
                    None => InputSrc::Const(decl.default.map(|d| d.value()).unwrap_or(0.0)),
                };
                inputs.push(src);
            }
        }
        layout[b].n_u = inputs.len() - layout[b].u_off;
    }
    // Mechanical nodes.
    let mut node_of_root: HashMap<usize, usize> = HashMap::new();
    let mut node_names = Vec::new();
    let mut node_kinds = Vec::new();
    let mut port_node = vec![usize::MAX; total_ports];
    for b in 0..nb {
        for (p, decl) in ports[b].iter().enumerate() {
            if decl.kind.is_mech() {
                let g = port_base[b] + p;
                let r = uf.find(g);
                let id = *node_of_root.entry(r).or_insert_with(|| {
                    node_names.push(format!("{}.{}", names[b], decl.name));
                    node_kinds.push(decl.kind);
                    node_names.len() - 1
                });
                port_node[g] = id;
            }
        }
    }
    let n = node_names.len();
    let mut mass = vec![0.0; n];
    let mut v0: Vec<Option<(f64, usize)>> = vec![None; n];
    let mut q0 = vec![0.0; n];
    let mut rows = Vec::new();
    let mut row_owner = Vec::new();
    let mut fric_rows = Vec::new();
    let mut fric_owner = Vec::new();
    let mut n_lam = 0;
    let mut n_ports = 0;
    let mut x_off = 2 * n;
    let mut g_off = 0;
    let mut errors = Vec::new();
    for b in 0..nb {
        let decl = blocks[b].mech();
        let l = &mut layout[b];
        l.port_node = (0..ports[b].len())
            .map(|p| port_node[port_base[b] + p])
            .collect();
        l.is_mech = ports[b].iter().any(|p| p.kind.is_mech());
        l.p_off = n_ports;
        n_ports += ports[b].len();
        l.x_off = x_off;
        l.n_x = blocks[b].n_states();
        x_off += l.n_x;
        l.g_off = g_off;
        l.n_g = blocks[b].n_guards();
        g_off += l.n_g;
        l.has_forces = decl.has_forces;
        for &(p, m) in &decl.masses {
            mass[l.port_node[p]] += m;
        }
        for &(p, w, q) in &decl.initial {
            let node = l.port_node[p];
            match v0[node] {
                Some((w_old, b_old)) if w_old != w => errors.push(Error::ConflictingInitial {
                    node: node_names[node].clone(),
                    first: w_old,
                    second: w,
                    blocks: format!("{} and {}", names[b_old], names[b]),
                }),
                _ => v0[node] = Some((w, b)),
            }
            q0[node] = q;
        }
        let r0 = rows.len();
        for c in &decl.constraints {
            let (tracking, slot) = match c.kind {
                RowKind::Velocity => (None, None),
                RowKind::Tracking { input, tc } => (Some(tc), Some(l.u_off + input)),
            };
            rows.push(NodeRow::new(
                c.row.0.iter().map(|&(p, k)| (l.port_node[p], k)),
                tracking,
            ));
            row_owner.push((b, slot));
        }
        l.rows = r0..rows.len();
        let f0 = fric_rows.len();
        for (k, fdecl) in decl.frictions.iter().enumerate() {
            fric_rows.push(NodeRow::new(
                fdecl.row.0.iter().map(|&(p, c)| (l.port_node[p], c)),
                None,
            ));
            fric_owner.push((b, k, fdecl.label.clone()));
        }
        l.fric = f0..fric_rows.len();
        l.lam_off = n_lam;
        n_lam += l.rows.len() + l.fric.len();
    }
    Error::from_list(errors)?;
    let x_blocks = 2 * n;
    let x_energy = x_off;
    let mut n_energy = 0;
    for l in layout.iter_mut() {
        let tracking = l.rows.clone().any(|r| row_owner[r].1.is_some());
        if l.has_forces || tracking {
            l.energy_state = Some(x_energy + n_energy);
            n_energy += 1;
        }
    }
    let n_states = x_energy + n_energy + fric_rows.len();
    let mut net = Network::new(node_names.clone(), node_kinds, mass, rows, fric_rows);
    if n > 0 {
        if let Err(s) = net.refactor() {
            return Err(Error::SingularNetwork {
                nodes: s.nodes.iter().map(|&i| node_names[i].clone()).collect(),
            });
        }
    }

    // ---- 4. evaluation order ----
    let mut g: DiGraph<Stage, ()> = DiGraph::new();
    let pre: Vec<NodeIndex> = (0..nb).map(|b| g.add_node(Stage::Pre(b))).collect();
    let net_node = g.add_node(Stage::Net);
    let out_index = |b: usize, p: usize| {
        ports[b][..p]
            .iter()
            .filter(|d| d.kind == PortKind::Out)
            .count()
    };
    let in_index = |b: usize, p: usize| {
        ports[b][..p]
            .iter()
            .filter(|d| d.kind == PortKind::In)
            .count()
    };
    let has_post: Vec<bool> = (0..nb)
        .map(|b| {
            let outs = ports[b].iter().filter(|d| d.kind == PortKind::Out).count();
            (0..outs).any(|o| blocks[b].output_needs_network(o))
        })
        .collect();
    let post: Vec<Option<NodeIndex>> = (0..nb)
        .map(|b| {
            if has_post[b] {
                Some(g.add_node(Stage::Post(b)))
            } else {
                None
            }
        })
        .collect();
    let mut owner_of_port = vec![(0usize, 0usize); total_ports];
    for b in 0..nb {
        for p in 0..ports[b].len() {
            owner_of_port[port_base[b] + p] = (b, p);
        }
    }
    for b in 0..nb {
        if let Some(pn) = post[b] {
            g.update_edge(pre[b], pn, ());
            g.update_edge(net_node, pn, ());
        }
        for (p, decl) in ports[b].iter().enumerate() {
            if decl.kind != PortKind::In {
                continue;
            }
            let Some((src, _)) = driver[port_base[b] + p] else {
                continue;
            };
            let (sb, sp) = owner_of_port[src];
            let src_node = if blocks[sb].output_needs_network(out_index(sb, sp)) {
                post[sb].unwrap_or(pre[sb])
            } else {
                pre[sb]
            };
            if blocks[b].feedthrough(in_index(b, p)) {
                g.update_edge(src_node, pre[b], ());
                if let Some(pn) = post[b] {
                    g.update_edge(src_node, pn, ());
                }
            }
            if layout[b].is_mech {
                g.update_edge(src_node, net_node, ());
            }
        }
    }
    let order: Vec<Stage> = match petgraph::algo::toposort(&g, None) {
        Ok(o) => o.into_iter().map(|i| g[i]).collect(),
        Err(_) => {
            let sccs = petgraph::algo::tarjan_scc(&g);
            let cyc = sccs.into_iter().find(|c| c.len() > 1).unwrap_or_default();
            let mut blocks_on: Vec<String> = cyc
                .iter()
                .map(|&i| match g[i] {
                    Stage::Pre(b) | Stage::Post(b) => names[b].clone(),
                    Stage::Net => "<mechanical network>".to_string(),
                })
                .collect();
            blocks_on.sort();
            blocks_on.dedup();
            return Err(Error::AlgebraicLoop { blocks: blocks_on });
        }
    };

    // ---- 5. variables ----
    let mut all_vars: Vec<(String, VarRef)> = Vec::new();
    for b in 0..nb {
        for (p, decl) in ports[b].iter().enumerate() {
            if decl.kind == PortKind::Out {
                all_vars.push((
                    format!("{}.{}", names[b], decl.name),
                    VarRef::Signal(out_slot[port_base[b] + p]),
                ));
            }
        }
        for v in blocks[b].variables() {
            let r = match v.source {
                VarSource::Speed(p) => VarRef::NodeSpeed(layout[b].port_node[p]),
                VarSource::Position(p) => VarRef::NodePos(layout[b].port_node[p]),
                VarSource::Accel(p) => VarRef::NodeAccel(layout[b].port_node[p]),
                VarSource::Friction(k, fv) => VarRef::Friction(layout[b].fric.start + k, fv),
                VarSource::Custom(i) => VarRef::Custom(b, i),
            };
            all_vars.push((format!("{}.{}", names[b], v.name), r));
        }
    }
    let lookup: HashMap<&str, VarRef> = all_vars.iter().map(|(n, r)| (n.as_str(), *r)).collect();
    let mut wanted: Vec<String> = Vec::new();
    for l in &flat.log {
        if l == "all" {
            wanted.extend(all_vars.iter().map(|v| v.0.clone()));
        } else {
            wanted.push(l.clone());
        }
    }
    for s in &d.scopes {
        wanted.extend(s.signal_names().map(str::to_string));
    }
    let mut log: Vec<(String, VarRef)> = Vec::new();
    let mut errors = Vec::new();
    for w in wanted {
        if log.iter().any(|(n, _)| *n == w) {
            continue;
        }
        let target = flat.alias_map.get(&w).cloned().unwrap_or_else(|| w.clone());
        match lookup.get(target.as_str()) {
            Some(r) => log.push((w, *r)),
            None => {
                let mut cands: Vec<&str> = all_vars.iter().map(|v| v.0.as_str()).collect();
                cands.extend(flat.alias_map.keys().map(String::as_str));
                errors.push(Error::UnknownVariable {
                    hint: suggest::hint(&w, cands),
                    name: w,
                });
            }
        }
    }
    Error::from_list(errors)?;
    let aliased: Vec<(String, VarRef)> = flat
        .alias_map
        .iter()
        .filter_map(|(alias, target)| lookup.get(target.as_str()).map(|r| (alias.clone(), *r)))
        .collect();
    drop(lookup);
    all_vars.extend(aliased);
    all_vars.sort_by(|a, b| a.0.cmp(&b.0));

    // ---- 6. initial state ----
    let mut x0 = vec![0.0; n_states];
    for i in 0..n {
        x0[i] = q0[i];
        x0[n + i] = v0[i].map(|v| v.0).unwrap_or(0.0);
    }
    for b in 0..nb {
        let l = &layout[b];
        blocks[b].initial_states(&mut x0[l.x_off..l.x_off + l.n_x]);
    }
    Ok(Model::from_parts(ModelParts {
        name: d.name.clone(),
        settings: d.settings.clone(),
        blocks,
        names,
        layout,
        order,
        net,
        n_signals,
        inputs,
        n_ports,
        n_lam,
        fric_owner,
        row_owner,
        x_blocks,
        x_energy,
        n_states,
        n_block_guards: g_off,
        x0,
        log,
        all_vars,
        scopes: d.scopes.clone(),
    }))
}
