//! The documentation is true:
//! - `docs/blocks.md` is exactly what `drivelink blocks --markdown` prints;
//! - every ```json block of `README.md` and `docs/*.md` loads: complete netlists load and
//!   compile, block entries name a known type with valid parameters;
//! - the netlists the docs describe behave as the text says;
//! - every ```rust block of the README is an excerpt of an `examples/` program (which
//!   `cargo test` compiles and `tests/examples.rs` runs);
//! - relative links point at existing files and headings.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use drivelink::core::compile::{resolve_params, Scope};
use drivelink::core::{compile, EventTag, RunStatus};
use drivelink::netlist;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file under docs/.
fn doc_files() -> Vec<PathBuf> {
    let mut v = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    v.extend(docs);
    v
}

/// A fenced code block.
struct Snippet {
    /// `file:line` of the opening fence.
    at: String,
    file: PathBuf,
    lang: String,
    text: String,
}

fn snippets(file: &Path) -> Vec<Snippet> {
    let text = std::fs::read_to_string(file).unwrap();
    let name = file
        .strip_prefix(root())
        .unwrap_or(file)
        .display()
        .to_string();
    let mut out = Vec::new();
    let mut open: Option<(usize, String, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        match (&mut open, t.strip_prefix("```")) {
            (None, Some(lang)) => open = Some((i + 1, lang.trim().to_string(), String::new())),
            (Some(_), Some("")) => {
                let (l, lang, body) = open.take().unwrap();
                out.push(Snippet {
                    at: format!("{name}:{l}"),
                    file: file.to_path_buf(),
                    lang,
                    text: body,
                });
            }
            (Some((_, _, body)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "{name}: unclosed code fence");
    out
}

fn all_snippets(lang: &str) -> Vec<Snippet> {
    doc_files()
        .iter()
        .flat_map(|f| snippets(f))
        .filter(|s| s.lang == lang)
        .collect()
}

#[test]
fn committed_blocks_md_is_what_blocks_markdown_prints() {
    let out = Command::new(env!("CARGO_BIN_EXE_drivelink"))
        .args(["blocks", "--markdown"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let generated = String::from_utf8(out.stdout).unwrap();
    let committed = std::fs::read_to_string(root().join("docs/blocks.md")).unwrap_or_default();
    if generated != committed {
        let line = generated
            .lines()
            .zip(committed.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| generated.lines().count().min(committed.lines().count()));
        panic!(
            "docs/blocks.md is out of date (first difference at line {}); regenerate it with:\n\n    cargo run -- blocks --markdown > docs/blocks.md\n",
            line + 1
        );
    }
}

/// Load and compile a complete netlist snippet.
fn check_netlist(s: &Snippet, v: &Value) -> Result<drivelink::core::Model, String> {
    let base = s.file.parent().unwrap();
    let d = netlist::load_value(v, &s.at, base).map_err(|e| e.to_string())?;
    compile(&d, &drivelink::blocks::registry()).map_err(|e| e.to_string())
}

/// Check a block-entry snippet against the catalogue.
fn check_block(v: &serde_json::Map<String, Value>) -> Result<(), String> {
    for k in v.keys() {
        if netlist::spec::field_in(netlist::spec::BLOCK, k).is_none() {
            return Err(format!("unknown block key '{k}'"));
        }
    }
    let type_name = v["type"].as_str().ok_or("type is not a string")?;
    let name = v.get("name").and_then(Value::as_str).ok_or("no name")?;
    let empty = serde_json::Map::new();
    let params = match v.get("params") {
        Some(Value::Object(p)) => p,
        None => &empty,
        Some(_) => return Err("params is not an object".into()),
    };
    if type_name == "Subsystem" {
        return match (v.get("file"), v.get("diagram")) {
            (Some(Value::String(_)), None) | (None, Some(Value::Object(_))) => Ok(()),
            _ => Err("a Subsystem needs either \"file\" or \"diagram\"".into()),
        };
    }
    let reg = drivelink::blocks::registry();
    let t = reg
        .get(type_name)
        .ok_or_else(|| format!("unknown block type '{type_name}'"))?;
    resolve_params(name, type_name, &t.params, params, &Scope::new())
        .map(|_| ())
        .map_err(|es| {
            es.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        })
}

#[test]
fn every_json_snippet_in_the_docs_loads() {
    let all = all_snippets("json");
    assert!(all.len() >= 8, "only {} JSON snippets found", all.len());
    let mut netlists = 0;
    let mut failures = Vec::new();
    for s in &all {
        let v: Value = match serde_json::from_str(&s.text) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{}: not JSON: {e}", s.at));
                continue;
            }
        };
        let r = match &v {
            Value::Object(m) if m.contains_key("drivelink") => {
                netlists += 1;
                check_netlist(s, &v).map(|_| ())
            }
            Value::Object(m) if m.contains_key("type") => check_block(m),
            _ => Err(
                "neither a netlist (with \"drivelink\") nor a block entry (with \"type\")".into(),
            ),
        };
        if let Err(e) = r {
            failures.push(format!("{}: {e}", s.at));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(netlists >= 6, "only {netlists} complete netlists");
}

/// The first complete netlist named `name` in the docs, compiled and run.
fn run_documented(name: &str) -> drivelink::core::SimResult {
    let s = all_snippets("json")
        .into_iter()
        .find(|s| s.text.contains(&format!("\"name\": \"{name}\"")))
        .unwrap_or_else(|| panic!("no documented netlist {name}"));
    let v: Value = serde_json::from_str(&s.text).unwrap();
    let mut m = check_netlist(&s, &v).unwrap_or_else(|e| panic!("{}: {e}", s.at));
    let r = m.run();
    assert_ne!(r.status, RunStatus::Failed, "{}: {}", s.at, r.message);
    r
}

/// Two inertias J1 (at w0) and J2 joined by a clutch of kinetic torque `t`: they lock at
/// `w0·J1·J2/((J1 + J2)·t)` at the common speed `J1·w0/(J1 + J2)`.
fn check_clutch_lock(name: &str, a: &str, b: &str, j1: f64, j2: f64, w0: f64, t: f64) {
    let r = run_documented(name);
    let lock = r
        .events_of("clutch", EventTag::Lock)
        .chain(r.events_of("c", EventTag::Lock))
        .next()
        .unwrap_or_else(|| panic!("{name}: the clutch never locks"))
        .time;
    let t_lock = w0 * j1 * j2 / ((j1 + j2) * t);
    assert!(
        (lock - t_lock).abs() < 1e-9,
        "{name}: lock at {lock}, expected {t_lock}"
    );
    let common = j1 * w0 / (j1 + j2);
    for v in [a, b] {
        let w = r.last(v).unwrap();
        assert!(
            (w - common).abs() < 1e-9,
            "{name}: {v} = {w}, expected {common}"
        );
    }
}

#[test]
fn readme_netlist_locks_at_the_time_the_readme_states() {
    // README: J1 = 1 at 100 rpm, J2 = 2, mu 0.5 · fn_max 20 N · cgeo 1 m = 10 N·m;
    // "lock after 0.698 s at 33.3 rpm".
    let w0 = 100.0 * std::f64::consts::PI / 30.0;
    check_clutch_lock("two_inertias", "J1.w", "J2.w", 1.0, 2.0, w0, 10.0);
    let t_lock: f64 = w0 * 2.0 / 3.0 / 10.0;
    assert_eq!(format!("{t_lock:.3}"), "0.698");
    assert_eq!(format!("{:.1}", 100.0 / 3.0), "33.3");
}

#[test]
fn netlist_reference_first_example_locks_at_the_time_it_states() {
    // docs/netlist.md: J1 = 1, J2 = 2·J1, 10 rad/s, 0.5 · 20 N · 1 m = 10 N·m: "0.667 s",
    // "3.333 rad/s".
    check_clutch_lock("clutch_lock", "left.w", "right.w", 1.0, 2.0, 10.0, 10.0);
}

/// Lines of `text`, trimmed, without blank lines.
fn code_lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn readme_rust_snippets_are_excerpts_of_the_examples() {
    let examples: Vec<(String, String)> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.display().to_string(), text)
        })
        .collect();
    let rust: Vec<Snippet> = snippets(&root().join("README.md"))
        .into_iter()
        .filter(|s| s.lang == "rust")
        .collect();
    assert!(!rust.is_empty(), "the README has no Rust example");
    for s in rust {
        let want = code_lines(&s.text);
        let found = examples.iter().any(|(_, text)| {
            let have = code_lines(text);
            have.windows(want.len()).any(|w| w == want.as_slice())
        });
        assert!(
            found,
            "{}: this Rust snippet is not an excerpt of any examples/*.rs program; keep the README's Rust code a copy of example code so that it compiles",
            s.at
        );
    }
}

/// GitHub's anchor of a heading.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut in_code = false;
    let mut v = Vec::new();
    for l in text.lines() {
        if l.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        if !in_code {
            if let Some(h) = l.strip_prefix('#') {
                v.push(slug(h.trim_start_matches('#')));
            }
        }
    }
    v
}

#[test]
fn relative_links_in_the_docs_point_at_files_and_headings() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for f in doc_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, l) in text.lines().enumerate() {
            for part in l.split("](").skip(1) {
                let Some(target) = part.split(')').next() else {
                    continue;
                };
                if target.starts_with("http://") || target.starts_with("https://") {
                    continue;
                }
                checked += 1;
                let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
                let file = if path.is_empty() {
                    f.clone()
                } else {
                    f.parent().unwrap().join(path)
                };
                let at = format!("{}:{}", f.display(), i + 1);
                if !file.exists() {
                    bad.push(format!("{at}: {target}: no such file"));
                } else if !anchor.is_empty() && !anchors(&file).iter().any(|a| a == anchor) {
                    bad.push(format!("{at}: {target}: no such heading"));
                }
            }
        }
    }
    assert!(checked > 20, "only {checked} links found");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn docs_do_not_point_at_the_shared_contracts() {
    for f in doc_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            !text.contains("shared/"),
            "{} refers to files outside the repository",
            f.display()
        );
    }
}

/// The netlist reference documents every key of the format's tables (`netlist::spec`), so
/// a key added to the loader and the schema is also added to docs/netlist.md.
#[test]
fn netlist_reference_lists_every_key() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/netlist.md"),
    )
    .unwrap();
    let spec = &netlist::spec::SOLVER;
    let mut missing = Vec::new();
    for table in [
        spec as &[_],
        netlist::spec::TOP,
        netlist::spec::SCOPE,
        netlist::spec::BLOCK,
    ] {
        for k in netlist::spec::names(table) {
            if !doc.contains(&format!("`{k}`")) && !doc.contains(&format!("\"{k}\"")) {
                missing.push(k);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/netlist.md does not mention: {missing:?}"
    );
}
