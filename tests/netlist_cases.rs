//! The table of bad netlists in `tests/fixtures/bad/` and what their error must say.
//! Shared (via `#[path]`) by `netlist_bad.rs` (library) and `cli_bad.rs` (binary).
#![allow(dead_code)]

use std::path::PathBuf;

/// (fixture stem, substrings the error must contain). Every error must also contain the
/// fixture's file name; the first substring is the JSON path (or line/column).
pub const CASES: &[(&str, &[&str])] = &[
    (
        "malformed_json",
        &["line 6, column 5", "malformed JSON", "expected `,` or `]`"],
    ),
    (
        "wrong_version",
        &[
            "drivelink:",
            "unsupported format version 2",
            "reads version 1",
        ],
    ),
    (
        "missing_version",
        &["drivelink:", "missing format version", "\"drivelink\": 1"],
    ),
    ("not_an_object", &["(root)", "expected a JSON object"]),
    (
        "unknown_top_key",
        &[
            "conections:",
            "unknown top-level key 'conections'",
            "did you mean 'connections'",
        ],
    ),
    (
        "unknown_block_key",
        &[
            "blocks[0].parmas:",
            "unknown block key",
            "did you mean 'params'",
        ],
    ),
    (
        "unknown_block_type",
        &[
            "blocks[1].type:",
            "unknown block type 'TransferFnc'",
            "did you mean 'TransferFcn'",
        ],
    ),
    (
        "unknown_param",
        &[
            "blocks[0].params.tmie:",
            "unknown parameter 'tmie'",
            "did you mean 'time'",
            "known parameters: time, before, after",
        ],
    ),
    (
        "unknown_port",
        &[
            "connections[0]:",
            "has no port 'uu'",
            "did you mean 'u'",
            "its ports are u[in], y[out]",
        ],
    ),
    (
        "unknown_block_in_connection",
        &[
            "connections[0][0]:",
            "unknown block 'stpe'",
            "did you mean 'step'",
        ],
    ),
    (
        "bad_port_ref",
        &[
            "connections[0][0]:",
            "'step' is not a port reference",
            "expected \"block.port\"",
        ],
    ),
    ("short_connection", &["connections[0]:", "at least two"]),
    (
        "wrong_value_type",
        &["blocks:", "expected an array of blocks", "got an object"],
    ),
    (
        "wrong_param_type",
        &[
            "blocks[0].params.time:",
            "parameter 'time'",
            "expected a number",
        ],
    ),
    (
        "wrong_unit",
        &[
            "blocks[0].params.time:",
            "\"5 kg\"",
            "expected s but got kg",
        ],
    ),
    (
        "nan_param",
        &["blocks[0].params.value:", "sqrt of a negative number"],
    ),
    (
        "infinite_param",
        &["blocks[0].params.value:", "division by zero"],
    ),
    (
        "bad_parameter_expr",
        &[
            "parameters.k:",
            "unknown identifier 'tua'",
            "did you mean 'tau'",
        ],
    ),
    (
        "improper_tf",
        &["blocks[1].params.num:", "block 'lag'", "proper"],
    ),
    (
        "empty_lookup",
        &["blocks[1].params.table:", "block 'lut'", "empty"],
    ),
    (
        "nonmonotone_lookup",
        &[
            "blocks[1].params.table:",
            "block 'lut'",
            "strictly increasing",
        ],
    ),
    (
        "bad_signal_builder",
        &["blocks[0].params.points:", "block 'sb'", "non-decreasing"],
    ),
    (
        "bad_saturation",
        &["blocks[1].params.lower:", "block 'sat'", "<= upper"],
    ),
    (
        "negative_sample_time",
        &[
            "blocks[1].params.sample_time:",
            "block 'zoh'",
            "must be > 0",
        ],
    ),
    (
        "duplicate_names",
        &["blocks[1].name:", "duplicate block name 'g'", "blocks[0]"],
    ),
    (
        "invalid_name",
        &[
            "blocks[0].name:",
            "invalid block name '1st'",
            "[A-Za-z_][A-Za-z0-9_]*",
        ],
    ),
    (
        "two_drivers",
        &[
            "connections[1]:",
            "input 'g.u' is driven twice",
            "connections 0 and 1",
        ],
    ),
    (
        "two_outputs",
        &[
            "connections[0]:",
            "exactly one output",
            "a.y [out], b.y [out]",
        ],
    ),
    (
        "undriven_input",
        &["blocks[0]:", "input 'g.u' has no driver"],
    ),
    (
        "kind_mismatch",
        &[
            "connections[0]:",
            "different kinds",
            "c.y [out], J.flange [rot]",
        ],
    ),
    (
        "algebraic_loop",
        &["connections:", "algebraic loop", "g", "sum"],
    ),
    (
        "bad_solver",
        &[
            "solver.rtol:",
            "must be > 0",
            "solver.method:",
            "did you mean 'dopri5'",
            "solver.stop_tme:",
            "did you mean 'stop_time'",
        ],
    ),
    (
        "bad_solver_unit",
        &["solver.stop_time:", "expected s but got kg"],
    ),
    ("rk4_without_step", &["solver.step:", "rk4"]),
    (
        "bad_scope",
        &[
            "scopes[0].signals[0].unit:",
            "did you mean 'rpm'",
            "scopes[0].colour:",
            "unknown scope key",
        ],
    ),
    (
        "unknown_variable",
        &["log[0]:", "unknown variable 'c.yy'", "did you mean 'c.y'"],
    ),
    (
        "missing_subsystem",
        &[
            "blocks[0].file:",
            "subsystem 'gearbox'",
            "no_such_gearbox.json",
            "not found",
        ],
    ),
    (
        "subsystem_cycle_a",
        &[
            "blocks[0].file:",
            "cycle",
            "subsystem_cycle_a.json -> ",
            "subsystem_cycle_b.json -> ",
        ],
    ),
    (
        "subsystem_cycle_b",
        &[
            "blocks[0].file:",
            "cycle",
            "subsystem_cycle_b.json -> ",
            "subsystem_cycle_a.json",
        ],
    ),
    (
        "unknown_subsystem_param",
        &[
            "blocks[0].params.tua:",
            "unknown parameter 'tua'",
            "did you mean 'tau'",
        ],
    ),
    (
        // "step" for "steps" read as an unknown identifier.
        "output_interval_step",
        &[
            "solver.output_interval:",
            "expected a time",
            "did you mean 'steps'",
        ],
    ),
    (
        // Regression: a port a subsystem does not export read as "unknown block 'f'".
        "unknown_subsystem_port",
        &[
            "connections[0]:",
            "block 'f' (Subsystem) has no port 'yy'",
            "did you mean 'y'",
            "its ports are y",
        ],
    ),
    (
        "inline_diagram_error",
        &[
            "blocks[0].diagram.ports.y:",
            "unknown block 'cc'",
            "did you mean 'c'",
        ],
    ),
];

pub fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bad")
}

/// Every fixture file has a case and every case a fixture (nothing is skipped silently).
pub fn check_table_covers_fixtures() {
    let mut files: Vec<String> = std::fs::read_dir(fixture_dir())
        .expect("fixture dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut cases: Vec<String> = CASES.iter().map(|c| c.0.to_string()).collect();
    cases.sort();
    assert_eq!(files, cases, "tests/fixtures/bad/*.json and CASES differ");
}

#[test]
fn table_covers_fixtures() {
    check_table_covers_fixtures();
}
