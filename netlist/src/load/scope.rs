//! The `scopes` section: signals with display units and ranges, panels, XY scopes.

use serde_json::Value;

use drivelink_core::scope::{DisplayUnit, ScopeSignal, ScopeSpec};
use drivelink_core::suggest;

use super::*;

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

pub(super) fn load_scope(cx: &mut Ctx, i: usize, v: &Value, names: &[&str]) -> Option<ScopeSpec> {
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
