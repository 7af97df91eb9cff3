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

use std::path::Path;

use serde_json::Value;

use drivelink_solver::Method;

use drivelink_core::diagram::Diagram;
use drivelink_core::error::Error;
use drivelink_core::params::Registry;

mod load;
mod locate;
mod save;
pub mod schema;
pub mod spec;

use load::{load_file_inner, load_value_inner, Loading};
pub use locate::{block_path, locate_error};
pub use save::{save_file, to_json};

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
    load_file_inner(path, &mut Loading::default(), 0)
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
    load_value_inner(v, origin, base_dir, &mut Loading::default(), "", 0)
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
            "max_output_values" => json!({"max_output_values": 5000}),
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
