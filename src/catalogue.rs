//! `drivelink blocks [TYPE]`: the block catalogue.

use drivelink_core::params::{ParamDefault, ParamKind, ParamSpec};
use drivelink_core::{BlockType, Registry};

/// Kind and unit of a parameter, as shown in the catalogue.
pub fn kind_text(p: &ParamSpec) -> String {
    match &p.kind {
        ParamKind::Number { unit } => format!("number [{unit}]"),
        ParamKind::Bool => "boolean".into(),
        ParamKind::Choice(opts) => opts
            .iter()
            .map(|o| format!("\"{o}\""))
            .collect::<Vec<_>>()
            .join("|"),
        ParamKind::Text => "string".into(),
        ParamKind::Vector { unit } => format!("[number, ...] [{unit}]"),
        ParamKind::Table { cols: 0 } => "table [[...], ...]".into(),
        ParamKind::Table { cols } => format!("table [[{}], ...]", vec!["x"; *cols].join(", ")),
        ParamKind::Matrix => "matrix [[...], ...]".into(),
        ParamKind::NumberOrTable { unit } => format!("number [{unit}] or table [[x, y], ...]"),
    }
}

/// Default of a parameter, as shown in the catalogue.
pub fn default_text(p: &ParamSpec) -> String {
    match &p.default {
        ParamDefault::Required => "required".into(),
        ParamDefault::Optional => "optional".into(),
        ParamDefault::Value(v) => format!("= {v}"),
    }
}

fn print_type(t: &BlockType) {
    println!("{} [{}]", t.name, t.category);
    println!("    {}", t.doc);
    println!(
        "    ports: {}",
        if t.ports_doc.is_empty() {
            "(none)"
        } else {
            t.ports_doc
        }
    );
    if t.params.is_empty() {
        println!("    parameters: (none)");
    } else {
        println!("    parameters:");
        let wn = t.params.iter().map(|p| p.name.len()).max().unwrap_or(0);
        let wk = t
            .params
            .iter()
            .map(|p| kind_text(p).chars().count())
            .max()
            .unwrap_or(0);
        let wd = t
            .params
            .iter()
            .map(|p| default_text(p).chars().count())
            .max()
            .unwrap_or(0);
        for p in &t.params {
            let k = kind_text(p);
            let d = default_text(p);
            println!(
                "      {:wn$}  {}{}  {}{}  {}",
                p.name,
                k,
                " ".repeat(wk - k.chars().count()),
                d,
                " ".repeat(wd - d.chars().count()),
                p.doc
            );
        }
    }
}

fn print_subsystem() {
    println!("Subsystem [structure]");
    println!("    A masked subsystem: an inner netlist given by \"file\" (relative to the including file) or an inline \"diagram\"; its \"ports\" are exported, its \"parameters\" are overridden by \"params\".");
    println!("    ports: the inner netlist's \"ports\"");
    println!("    parameters: the inner netlist's \"parameters\"");
}

/// Print the catalogue (or one type). Returns the exit code.
pub fn blocks(type_name: Option<&str>) -> u8 {
    let reg: Registry = drivelink_blocks::registry();
    match type_name {
        Some("Subsystem") => {
            print_subsystem();
            0
        }
        Some(name) => match reg.get(name) {
            Some(t) => {
                print_type(t);
                0
            }
            None => {
                let mut names: Vec<&str> = reg.names().collect();
                names.push("Subsystem");
                // Accept a case-insensitive exact match as a hint too.
                let hint = drivelink_core::suggest::hint(name, names.iter().copied());
                eprintln!(
                    "error: unknown block type '{name}'{hint}; known types: {}",
                    names.join(", ")
                );
                2
            }
        },
        None => {
            let mut cats: Vec<&str> = reg.types().map(|t| t.category).collect();
            cats.sort();
            cats.dedup();
            for c in cats {
                println!("== {c} ==");
                println!();
                for t in reg.types().filter(|t| t.category == c) {
                    print_type(t);
                    println!();
                }
            }
            println!("== structure ==");
            println!();
            print_subsystem();
            0
        }
    }
}
