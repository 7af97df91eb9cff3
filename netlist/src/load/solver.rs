//! The `solver` section: numbers or expressions with units over the model parameters,
//! method names, and the settings resolved once the parameters are known.

use std::path::Path;

use serde_json::{Map, Value};

use drivelink_solver::{Method, Settings};

use drivelink_core::compile::{Scope, ScopeVal};
use drivelink_core::diagram::Diagram;
use drivelink_core::error::Error;
use drivelink_core::expr;
use drivelink_core::suggest;
use drivelink_core::units::Dim;

use super::*;

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
pub(super) fn resolve_settings(
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
pub(super) fn load_settings(
    cx: &mut Ctx,
    s: &Map<String, Value>,
    scope: Option<&Scope>,
) -> Settings {
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
    set_int(&mut st.max_output_values, "max_output_values");
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
