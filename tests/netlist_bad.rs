//! Every bad netlist fixture fails to load or compile with a located message.

#[path = "netlist_cases.rs"]
mod cases;

use drivelink::core::Error;
use drivelink::netlist;

#[test]
fn every_bad_fixture_is_rejected_with_file_path_and_expectation() {
    cases::check_table_covers_fixtures();
    let reg = drivelink::blocks::registry();
    for (stem, expected) in cases::CASES {
        let path = cases::fixture_dir().join(format!("{stem}.json"));
        let err = match netlist::compile_file(&path, &reg) {
            Ok(_) => panic!("{stem}: expected an error, the netlist compiled"),
            Err(e) => e,
        };
        // Every individual error is a located netlist error naming this file (or, for an
        // error inside an included subsystem file, that file, which is a fixture too).
        for e in err.flatten() {
            match e {
                Error::Netlist { file, path: p, .. } => {
                    assert!(
                        file.ends_with(&format!("{stem}.json"))
                            || (stem.starts_with("subsystem_cycle")
                                && file.contains("subsystem_cycle_")),
                        "{stem}: error names file {file}: {e}"
                    );
                    assert!(!p.is_empty(), "{stem}: empty JSON path: {e}");
                }
                other => panic!("{stem}: not a located netlist error: {other:?}"),
            }
        }
        let text = err.to_string();
        assert!(
            text.contains(&format!("{stem}.json")),
            "{stem}: message does not name the file:\n{text}"
        );
        for want in *expected {
            assert!(
                text.contains(want),
                "{stem}: message lacks {want:?}:\n{text}"
            );
        }
    }
}

#[test]
fn malformed_json_reports_line_and_column_from_load_str() {
    let err = netlist::load_str(
        "{\n \"drivelink\": 1,\n \"blocks\": [}\n",
        "inline.json",
        std::path::Path::new("."),
    )
    .unwrap_err();
    match err {
        Error::Netlist {
            file,
            path,
            message,
        } => {
            assert_eq!(file, "inline.json");
            assert_eq!(path, "line 3, column 13");
            assert!(message.contains("malformed JSON"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn several_errors_are_reported_together() {
    let text = r#"{"drivelink": 1, "blocks": [{"name": "a", "type": "Gain", "params": {"k": 1}}, {"name": "a", "type": 3}],
                   "solver": {"atol": 0}, "log": [7]}"#;
    let err = netlist::load_str(text, "many.json", std::path::Path::new(".")).unwrap_err();
    let all: Vec<String> = err.flatten().iter().map(|e| e.to_string()).collect();
    assert!(
        all.iter().any(|m| m.contains("solver.atol: must be > 0")),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|m| m.contains("blocks[1].type: block 'a': expected a block type string")),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|m| m.contains("log[0]: expected a \"block.var\" string")),
        "{all:?}"
    );
}

#[test]
fn block_path_follows_subsystems() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models/netlists/signal_subsystem.json");
    let d = netlist::load_file(&path).unwrap();
    assert_eq!(
        netlist::block_path(&d, "slow.lag").as_deref(),
        Some("blocks[2].diagram.blocks[1]")
    );
    assert_eq!(
        netlist::block_path(&d, "input").as_deref(),
        Some("blocks[0]")
    );
    assert_eq!(netlist::block_path(&d, "nope"), None);
}

#[test]
fn subsystem_override_errors_are_located() {
    let text = r#"{"drivelink": 1, "name": "m", "blocks": [
        {"name": "f", "type": "Subsystem", "params": {"tau": "3 kg*zz"}, "diagram": {
            "parameters": {"tau": 0.3},
            "blocks": [{"name": "c", "type": "Constant", "params": {"value": "tau"}}],
            "ports": {"y": "c.y"}}}]}"#;
    let d = netlist::load_str(text, "ov.json", std::path::Path::new(".")).unwrap();
    let err = netlist::compile_located(&d, &drivelink::blocks::registry(), "ov.json")
        .err()
        .expect("must fail");
    let t = err.to_string();
    assert!(t.starts_with("ov.json: blocks[0].params.tau:"), "{t}");
}
