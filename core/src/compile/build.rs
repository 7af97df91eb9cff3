//! Pass 2, build: model parameters and block parameters resolved to SI values
//! (expressions evaluated, units converted and checked against the declared dimension),
//! then every primitive block built from its resolved parameters.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::block::Block;
use crate::error::{Error, ParamError};
use crate::expr::{self, Quantity};
use crate::params::{BlockBuild, ParamDefault, ParamKind, ParamSpec, ParamValue, Params, Registry};
use crate::suggest;
use crate::units;

use super::flatten::Flat;
pub use crate::param_scope::{Scope, ScopeVal};

/// Declared unit of a parameter that takes a value of any dimension (signal levels such as
/// `Constant.value` or `Step.after`, which carry whatever the signal means).
pub const ANY_UNIT: &str = "*";

/// Whether `s` is a plain word (`clutch_pack`), the form a text parameter takes.
fn is_word(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// Whether `s`, not an expression, reads as a file path: no spaces, and either rooted
/// (`/data/x.fmu`, `./a.csv`, `../b.csv`, `C:\\runs\\a.csv`) or ending in a file
/// extension of 2 to 5 letters and digits (`cycles/city.csv`, `trace.csv`; not
/// `engine.w`). Such a value is the text of a path parameter (`DriveCycle.cycle`,
/// `Fmu.fmu`); anything else that is not an expression stays an error (`1/tauu` names its
/// unknown identifier).
fn is_path(s: &str) -> bool {
    let rooted = s.starts_with(['/', '\\'])
        || s.starts_with("./")
        || s.starts_with("../")
        || s.get(1..3) == Some(":\\");
    let ext = s.rsplit_once('.').is_some_and(|(stem, e)| {
        !stem.is_empty()
            && (2..=5).contains(&e.len())
            && e.chars().all(|c| c.is_ascii_alphanumeric())
            && e.chars().any(|c| c.is_ascii_alphabetic())
    });
    !s.is_empty() && !s.chars().any(char::is_whitespace) && (rooted || ext)
}

fn quantity_lookup(scope: &Scope) -> impl Fn(&str) -> Option<Quantity> + '_ {
    move |name: &str| match scope.get(name) {
        Some(ScopeVal::Q(q)) => Some(*q),
        _ => None,
    }
}

/// Evaluate expression `s` in `scope`. A parameter that is not a number (a text or an
/// array parameter) used in the expression is named as such (it would otherwise be an
/// "unknown identifier" with itself as the "did you mean" hint); the hints name only
/// numeric parameters.
fn eval_expr(s: &str, scope: &Scope) -> Result<Quantity, String> {
    let names: Vec<&str> = scope
        .iter()
        .filter(|(_, v)| matches!(v, ScopeVal::Q(_)))
        .map(|(k, _)| k.as_str())
        .collect();
    expr::eval_with_names(s, &quantity_lookup(scope), &names).map_err(|e| {
        let not_a_number = identifiers(s).find_map(|id| match scope.get(id) {
            Some(ScopeVal::Text(t)) => Some(format!(
                "'{id}' is a text parameter (\"{t}\"), not a number"
            )),
            Some(ScopeVal::Json(_)) => Some(format!("'{id}' is an array parameter, not a number")),
            _ => None,
        });
        match not_a_number {
            Some(m) => format!("\"{s}\": {m}"),
            None => format!("\"{s}\": {e}"),
        }
    })
}

/// The identifiers (`[A-Za-z_][A-Za-z0-9_]*`, not preceded by a digit or a dot) in `s`.
fn identifiers(s: &str) -> impl Iterator<Item = &str> {
    let b = s.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            let start = i;
            if b[i].is_ascii_alphabetic() || b[i] == b'_' {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let after_number =
                    start > 0 && (b[start - 1].is_ascii_digit() || b[start - 1] == b'.');
                if !after_number {
                    return Some(&s[start..i]);
                }
            } else {
                i += 1;
            }
        }
        None
    })
}

/// Evaluate one model-parameter value (number, boolean, expression, or array kept as JSON)
/// in `scope`.
pub(crate) fn scope_value(v: &Value, scope: &Scope) -> Result<ScopeVal, String> {
    match v {
        Value::Number(n) => Ok(ScopeVal::Q(Quantity::bare(n.as_f64().unwrap_or(f64::NAN)))),
        Value::Bool(b) => Ok(ScopeVal::Q(Quantity::bare(if *b { 1.0 } else { 0.0 }))),
        Value::String(s) => match scope.get(s.trim()) {
            Some(v @ (ScopeVal::Json(_) | ScopeVal::Text(_))) => Ok(v.clone()),
            _ => match eval_expr(s, scope) {
                Ok(q) => Ok(ScopeVal::Q(q)),
                Err(_) if is_word(s.trim()) || is_path(s.trim()) => {
                    Ok(ScopeVal::Text(s.trim().to_string()))
                }
                Err(e) => Err(e),
            },
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
    // A string naming an array-valued or text model parameter stands for its value.
    let text;
    let raw = match raw {
        Value::String(s) => match scope.get(s.trim()) {
            Some(ScopeVal::Json(j)) => j,
            Some(ScopeVal::Text(t)) => {
                if matches!(spec.kind, ParamKind::Choice(_) | ParamKind::Text) {
                    text = Value::String(t.clone());
                    &text
                } else {
                    return Err(format!(
                        "'{}' is a text parameter (\"{t}\"); expected {}",
                        s.trim(),
                        kind_noun(&spec.kind)
                    ));
                }
            }
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
        ParamKind::Polynomial => polynomial(raw, scope).map(ParamValue::Vector),
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
        ParamKind::Record(fields) => record(raw, fields, scope).map(ParamValue::Vector),
        // Kept as written: the block parses it (`Params::json`).
        ParamKind::Json => Ok(ParamValue::Text(raw.to_string())),
    }
}

/// A record parameter: a JSON object whose keys are among `fields` (each a number or an
/// expression in the field's unit); missing keys keep their defaults.
fn record(
    raw: &Value,
    fields: &[crate::params::RecordField],
    scope: &Scope,
) -> Result<Vec<f64>, String> {
    let Value::Object(map) = raw else {
        return Err(format!(
            "expected an object {{{}}}, got {}",
            fields
                .iter()
                .map(|f| format!("\"{}\": number", f.name))
                .collect::<Vec<_>>()
                .join(", "),
            short(raw)
        ));
    };
    for key in map.keys() {
        if !fields.iter().any(|f| f.name == key) {
            return Err(format!(
                "unknown key '{key}'{}; the keys are {}",
                suggest::hint(key, fields.iter().map(|f| f.name)),
                fields.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    fields
        .iter()
        .map(|f| match map.get(f.name) {
            Some(v) => number(v, f.unit, scope).map_err(|e| format!("key '{}': {e}", f.name)),
            None => Ok(f.default),
        })
        .collect()
}

/// What a parameter kind expects, for messages.
fn kind_noun(k: &ParamKind) -> &'static str {
    match k {
        ParamKind::Number { .. } => "a number",
        ParamKind::Bool => "true or false",
        ParamKind::Choice(_) | ParamKind::Text => "a string",
        ParamKind::Vector { .. } | ParamKind::Polynomial => "an array of numbers",
        ParamKind::Table { .. } | ParamKind::Matrix => "a table",
        ParamKind::NumberOrTable { .. } => "a number or a table",
        ParamKind::Record(_) => "an object of numbers",
        ParamKind::Json => "a JSON value",
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
            let q = eval_expr(s, scope)?;
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

/// Polynomial coefficients (highest power first): the coefficient of `s^k` must be of
/// dimension `D·s^k` with one `D` for the whole polynomial (bare numbers fit anything).
fn polynomial(raw: &Value, scope: &Scope) -> Result<Vec<f64>, String> {
    let Value::Array(items) = raw else {
        return Err(format!(
            "expected an array of coefficients, highest power of s first, got {}",
            short(raw)
        ));
    };
    let n = items.len();
    let mut common: Option<(units::Dim, usize)> = None;
    let mut out = Vec::with_capacity(n);
    for (i, it) in items.iter().enumerate() {
        let q = match it {
            Value::Number(x) => Quantity::bare(x.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => eval_expr(s, scope).map_err(|e| format!("entry {i}: {e}"))?,
            other => {
                return Err(format!(
                    "entry {i}: expected a number, got {}",
                    short(other)
                ))
            }
        };
        if !q.value.is_finite() {
            return Err(format!("entry {i}: must be finite, got {}", q.value));
        }
        let k = (n - 1 - i) as i32;
        if let Some(d) = q.dim {
            let per = d.checked_div(units::Dim::TIME.powi(k)).unwrap_or(d);
            match common {
                Some((c, j)) if c != per => {
                    return Err(format!(
                        "entry {i} (coefficient of s^{k}) has unit {} but entry {j} implies {} for it; the coefficient of s^k carries s^k times one unit common to the polynomial",
                        d.ascii(),
                        c.checked_mul(units::Dim::TIME.powi(k)).unwrap_or(c).ascii()
                    ))
                }
                None => common = Some((per, i)),
                _ => {}
            }
        }
        out.push(q.value);
    }
    Ok(out)
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
            base_dir: None,
        })
    } else {
        Err(errors)
    }
}

/// The built blocks of a flattened diagram, in flat order, with their names.
pub(crate) struct Built {
    pub blocks: Vec<Box<dyn Block>>,
    pub names: Vec<String>,
    pub types: Vec<&'static str>,
}

/// Build every primitive block of `flat` from its resolved parameters, collecting every
/// error.
pub(crate) fn build_blocks(flat: &Flat, reg: &Registry) -> Result<Built, Error> {
    let mut errors = Vec::new();
    let mut built = Built {
        blocks: Vec::with_capacity(flat.blocks.len()),
        names: Vec::with_capacity(flat.blocks.len()),
        types: Vec::with_capacity(flat.blocks.len()),
    };
    for fb in &flat.blocks {
        let Some(t) = reg.get(&fb.type_name) else {
            continue;
        };
        let BlockBuild::Primitive(build) = &t.build else {
            continue;
        };
        match resolve_params(&fb.name, t.name, &t.params, &fb.params, &fb.scope) {
            Ok(mut p) => {
                p.base_dir = fb.base_dir.clone();
                match build(&p) {
                    Ok(b) => {
                        built.blocks.push(b);
                        built.names.push(fb.name.clone());
                        built.types.push(t.name);
                    }
                    Err(e) => errors.push(Error::Param(e)),
                }
            }
            Err(es) => errors.extend(es),
        }
    }
    Error::from_list(errors)?;
    Ok(built)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_file_path_is_a_text_parameter_and_a_broken_expression_is_not() {
        for p in [
            "cycles/city.csv",
            "/data/c.csv",
            "./a.csv",
            "../b.fmu",
            "trace.csv",
            "C:\\r\\a.csv",
        ] {
            assert!(super::is_path(p), "{p}");
        }
        for e in ["1/tauu", "engine.w", "m s", "", "2*tau", "a/b"] {
            assert!(!super::is_path(e), "{e}");
        }
    }
}
