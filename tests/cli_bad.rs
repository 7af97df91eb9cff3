//! `drivelink validate` on every bad fixture: exit code 2, the located message on stderr.

#[path = "netlist_cases.rs"]
mod cases;
mod common;

use std::process::Command;

use common::temp_dir;

fn drivelink() -> Command {
    Command::new(env!("CARGO_BIN_EXE_drivelink"))
}

#[test]
fn validate_rejects_every_bad_fixture_with_exit_2() {
    cases::check_table_covers_fixtures();
    for (stem, expected) in cases::CASES {
        let path = cases::fixture_dir().join(format!("{stem}.json"));
        let out = drivelink()
            .arg("validate")
            .arg(&path)
            .output()
            .expect("run drivelink");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{stem}: exit code; stderr:\n{stderr}"
        );
        assert!(
            out.stdout.is_empty(),
            "{stem}: nothing on stdout expected: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        for line in stderr.lines() {
            assert!(
                line.starts_with("error: ") && line.contains(&format!("{stem}.json")),
                "{stem}: line does not name the file: {line}"
            );
        }
        for want in *expected {
            assert!(
                stderr.contains(want),
                "{stem}: stderr lacks {want:?}:\n{stderr}"
            );
        }
    }
}

#[test]
fn run_rejects_a_bad_fixture_without_simulating() {
    let path = cases::fixture_dir().join("wrong_unit.json");
    let scratch = temp_dir("cli_bad");
    let dir = scratch.join("out");
    let out = drivelink()
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected s but got kg"));
    assert!(!dir.exists(), "nothing may be written for an invalid model");
}

#[test]
fn missing_model_file_is_exit_2() {
    let out = drivelink()
        .args(["validate", "/nonexistent/model.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("/nonexistent/model.json"), "{e}");
}

#[test]
fn netlist_that_is_not_utf8_is_refused_at_its_line_and_column() {
    // Latin-1 "°" (0xb0) in a description on line 3: before, the message was serde's
    // "stream did not contain valid UTF-8" with no position.
    let dir = temp_dir("cli_utf8");
    let path = dir.join("latin1.json");
    let mut bytes = b"{\n  \"drivelink\": 1,\n  \"description\": \"45 ".to_vec();
    bytes.push(0xb0);
    bytes.extend_from_slice(b" steer\",\n  \"blocks\": []\n}\n");
    std::fs::write(&path, bytes).unwrap();
    let out = drivelink().arg("validate").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("latin1.json"), "{e}");
    assert!(e.contains("line 3, column 22"), "{e}");
    assert!(e.contains("not UTF-8") && e.contains("0xb0"), "{e}");
}
