//! `drivelink schema` emits a JSON Schema that accepts every shipped netlist and rejects
//! structurally bad ones. The validator below implements exactly the keywords the schema
//! uses: type (name or list), required, properties, additionalProperties (bool or schema),
//! enum, const, items, minItems, maxItems, minimum, maximum, oneOf, anyOf, $ref (`#` and
//! `#/$defs/...`); annotations (title, description, default, examples, $schema, $id, $defs)
//! are ignored.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn schema() -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_drivelink"))
        .arg("schema")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).expect("schema is JSON")
}

const KNOWN: &[&str] = &[
    "type",
    "required",
    "properties",
    "additionalProperties",
    "enum",
    "const",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "minLength",
    "maximum",
    "examples",
    "oneOf",
    "anyOf",
    "$ref",
    "title",
    "description",
    "default",
    "$schema",
    "$id",
    "$defs",
];

fn resolve<'a>(root: &'a Value, r: &str) -> &'a Value {
    if r == "#" {
        return root;
    }
    let p = r
        .strip_prefix("#/")
        .unwrap_or_else(|| panic!("unsupported $ref {r}"));
    p.split('/').fold(root, |v, seg| {
        v.get(seg).unwrap_or_else(|| panic!("dangling $ref {r}"))
    })
}

fn type_ok(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.as_f64().is_some_and(|x| x.fract() == 0.0),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        other => panic!("unknown type {other}"),
    }
}

/// Errors of `v` against `s` (empty = valid), with JSON paths.
fn validate(root: &Value, s: &Value, v: &Value, path: &str, errs: &mut Vec<String>) {
    let Value::Object(s) = s else {
        if s == &Value::Bool(false) {
            errs.push(format!("{path}: not allowed"));
        }
        return;
    };
    for k in s.keys() {
        assert!(
            KNOWN.contains(&k.as_str()),
            "schema uses keyword {k} the test validator does not implement"
        );
    }
    if let Some(r) = s.get("$ref") {
        validate(root, resolve(root, r.as_str().unwrap()), v, path, errs);
    }
    if let Some(t) = s.get("type") {
        let ok = match t {
            Value::String(t) => type_ok(t, v),
            Value::Array(ts) => ts.iter().any(|t| type_ok(t.as_str().unwrap(), v)),
            _ => panic!("bad type"),
        };
        if !ok {
            errs.push(format!("{path}: expected type {t}, got {v}"));
            return;
        }
    }
    if let Some(e) = s.get("enum") {
        if !e.as_array().unwrap().contains(v) {
            errs.push(format!("{path}: {v} not in enum"));
        }
    }
    if let Some(c) = s.get("const") {
        let same = c == v || (c.as_f64().is_some() && c.as_f64() == v.as_f64());
        if !same {
            errs.push(format!("{path}: expected {c}, got {v}"));
        }
    }
    if let Value::Object(m) = v {
        if let Some(req) = s.get("required") {
            for r in req.as_array().unwrap() {
                if !m.contains_key(r.as_str().unwrap()) {
                    errs.push(format!("{path}: missing required {r}"));
                }
            }
        }
        let props = s.get("properties").and_then(Value::as_object);
        for (k, val) in m {
            let p = format!("{path}.{k}");
            match props.and_then(|p| p.get(k)) {
                Some(ps) => validate(root, ps, val, &p, errs),
                None => match s.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        errs.push(format!("{p}: additional property not allowed"))
                    }
                    Some(ap @ Value::Object(_)) => validate(root, ap, val, &p, errs),
                    _ => {}
                },
            }
        }
    }
    if let Some(x) = v.as_f64() {
        if let Some(lo) = s.get("minimum").and_then(Value::as_f64) {
            if x < lo {
                errs.push(format!("{path}: below the minimum {lo}"));
            }
        }
        if let Some(hi) = s.get("maximum").and_then(Value::as_f64) {
            if x > hi {
                errs.push(format!("{path}: above the maximum {hi}"));
            }
        }
    }
    if let (Value::String(text), Some(n)) = (v, s.get("minLength").and_then(Value::as_u64)) {
        if (text.chars().count() as u64) < n {
            errs.push(format!("{path}: shorter than {n} characters"));
        }
    }
    if let Value::Array(items) = v {
        if let Some(n) = s.get("minItems") {
            if (items.len() as u64) < n.as_u64().unwrap() {
                errs.push(format!("{path}: fewer than {n} items"));
            }
        }
        if let Some(n) = s.get("maxItems") {
            if (items.len() as u64) > n.as_u64().unwrap() {
                errs.push(format!("{path}: more than {n} items"));
            }
        }
        if let Some(is) = s.get("items") {
            for (i, it) in items.iter().enumerate() {
                validate(root, is, it, &format!("{path}[{i}]"), errs);
            }
        }
    }
    for (kw, exactly_one) in [("oneOf", true), ("anyOf", false)] {
        if let Some(Value::Array(alts)) = s.get(kw) {
            let mut sub: Vec<Vec<String>> = Vec::new();
            for a in alts {
                let mut e = Vec::new();
                validate(root, a, v, path, &mut e);
                sub.push(e);
            }
            let n_ok = sub.iter().filter(|e| e.is_empty()).count();
            let ok = if exactly_one { n_ok == 1 } else { n_ok >= 1 };
            if !ok {
                let best = sub
                    .iter()
                    .min_by_key(|e| e.len())
                    .cloned()
                    .unwrap_or_default();
                errs.push(format!(
                    "{path}: {kw} matched {n_ok} alternatives; closest: {}",
                    best.join("; ")
                ));
            }
        }
    }
}

fn check(root: &Value, v: &Value) -> Vec<String> {
    let mut e = Vec::new();
    validate(root, root, v, "$", &mut e);
    e
}

fn json_files(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
    v.sort();
    v
}

#[test]
fn schema_is_draft_2020_12_with_block_types() {
    let s = schema();
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    let types = s["$defs"]["block"]["properties"]["type"]["enum"]
        .as_array()
        .unwrap()
        .clone();
    let reg = drivelink::blocks::registry();
    for t in reg.names() {
        assert!(types.contains(&Value::from(t)), "enum lacks {t}");
    }
    assert!(types.contains(&Value::from("Subsystem")));
}

#[test]
fn schema_accepts_every_shipped_netlist() {
    let s = schema();
    let files = json_files("models/netlists");
    assert!(!files.is_empty());
    for f in files {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let e = check(&s, &v);
        assert!(e.is_empty(), "{}: {e:#?}", f.display());
        // and the saved form of the loaded diagram too
        let d = drivelink::netlist::load_file(&f).unwrap();
        let e = check(&s, &drivelink::netlist::to_json(&d));
        assert!(e.is_empty(), "{} (saved): {e:#?}", f.display());
    }
}

#[test]
fn schema_rejects_structural_errors() {
    let s = schema();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bad");
    for stem in [
        "wrong_version",
        "missing_version",
        "not_an_object",
        "unknown_top_key",
        "unknown_block_key",
        "unknown_block_type",
        "unknown_param",
        "wrong_value_type",
        "wrong_param_type",
        "short_connection",
        "bad_solver",
        "bad_scope",
    ] {
        let v: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{stem}.json"))).unwrap(),
        )
        .unwrap();
        assert!(!check(&s, &v).is_empty(), "{stem} passed the schema");
    }
}

/// Every setting the loader accepts passes the schema, and a value the loader refuses for
/// its range (guard_samples above its maximum, a zero width) fails it: the schema and the
/// loader read the same key table (`drivelink-netlist`'s `spec`).
#[test]
fn schema_and_loader_agree_on_solver_and_scope_settings() {
    let s = schema();
    let v = serde_json::json!({
        "drivelink": 1,
        "blocks": [{"name": "c", "type": "Constant", "params": {"value": 1}}],
        "solver": {"method": "auto", "stop_time": "2 s", "rtol": 1e-5, "atol": 1e-7,
                   "max_step": 0.1, "initial_step": 1e-4, "output_points": 500,
                   "max_output_points": 100000, "max_time_events": 1000,
                   "guard_samples": 2, "timeout": 60, "max_steps": 100000,
                   "min_step_rel": 1e-13, "max_event_iterations": 20,
                   "chatter_window": 1e-5, "chatter_max_events": 50},
        "scopes": [{"name": "s", "signals": [{"signal": "c.y", "label": "one", "unit": "mm"}],
                    "width": 640, "height": 480, "ylim": [0, 2], "event_markers": true}]
    });
    assert!(drivelink::netlist::load_value(&v, "t.json", std::path::Path::new(".")).is_ok());
    let e = check(&s, &v);
    assert!(e.is_empty(), "{e:#?}");
    for (section, key, bad) in [
        ("solver", "guard_samples", serde_json::json!(1001)),
        ("solver", "max_steps", serde_json::json!(0)),
        ("solver", "method", serde_json::json!("euler")),
    ] {
        let mut w = v.clone();
        w[section][key] = bad;
        assert!(
            drivelink::netlist::load_value(&w, "t.json", std::path::Path::new(".")).is_err(),
            "{section}.{key}"
        );
        assert!(
            !check(&s, &w).is_empty(),
            "{section}.{key} passed the schema"
        );
    }
    let mut w = v.clone();
    w["scopes"][0]["width"] = serde_json::json!(5);
    assert!(drivelink::netlist::load_value(&w, "t.json", std::path::Path::new(".")).is_err());
    assert!(!check(&s, &w).is_empty(), "width 5 passed the schema");
}
