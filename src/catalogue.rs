//! `drivelink blocks [TYPE] [--markdown]`: the block catalogue, from the registry.
//!
//! For every block type: category, description, ports, parameters (kind, SI unit, default)
//! and the loggable variables (name, unit, meaning). Variables come from an instance built
//! with the type's default parameters ([`BlockType::example_params`] supplies example values for
//! required ones): its signal outputs and its declared variables ([`drivelink_core::BlockDecl::variables`]). A unit
//! is shown where the kernel's declaration fixes it (node speeds, angles, accelerations and
//! friction-joint quantities); the unit column stays empty for block-computed variables
//! until their declarations carry units. Composite types list their exported aliases and
//! their inner blocks.
//!
//! The text form is for the terminal; the Markdown form is `docs/blocks.md` (a test checks
//! that the committed file is what `drivelink blocks --markdown` prints).

use serde_json::{Map, Value};

use drivelink_core::compile::{resolve_parameters, resolve_params, Scope};
use drivelink_core::params::{ParamDefault, ParamKind, ParamSpec};
use drivelink_core::{
    BlockBuild, BlockDecl, BlockType, Diagram, FrictionVar, PortKind, Registry, VarSource,
};

/// The pseudo-type of subsystems (not in the registry).
const SUBSYSTEM: &str = "Subsystem";

/// Types with a second form chosen by their parameters: (type, label of the default form,
/// label of the other form, parameters selecting the other form).
const OTHER_FORMS: &[(&str, &str, &str, &str)] = &[(
    "Abs",
    "the |u| form (no parameters)",
    "the ABS controller form (any parameter)",
    r#"{"enabled": true}"#,
)];

/// One loggable variable of a block type.
#[derive(Debug, Clone, PartialEq)]
pub struct VarRow {
    /// Name after the block name: `NAME.<name>`.
    pub name: String,
    /// SI unit where the declaration fixes it, else empty.
    pub unit: String,
    /// What it is.
    pub meaning: String,
}

/// The variables of one form of a block type.
struct VarForm {
    /// `None` for a type with one form.
    label: Option<&'static str>,
    vars: Result<Vec<VarRow>, String>,
    /// Composite types: inner blocks as `name (Type)`.
    inner: Vec<String>,
}

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
        ParamKind::Json => "JSON (see the doc)".into(),
        ParamKind::Vector { unit } => format!("[number, ...] [{unit}]"),
        ParamKind::Polynomial => "[coefficient of s^n, ..., s^0] (units: s^k × common)".to_string(),
        ParamKind::Table { cols: 0 } => "table [[...], ...]".into(),
        ParamKind::Table { cols } => format!("table [[{}], ...]", vec!["x"; *cols].join(", ")),
        ParamKind::Matrix => "matrix [[...], ...]".into(),
        ParamKind::NumberOrTable { unit } => format!("number [{unit}] or table [[x, y], ...]"),
        ParamKind::Record(fields) => format!(
            "{{{}}}",
            fields
                .iter()
                .map(|f| format!("{}: number [{}]", f.name, f.unit))
                .collect::<Vec<_>>()
                .join(", ")
        ),
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

/// Unit and meaning of a variable declared from a kernel source.
fn describe(block: &BlockDecl, source: VarSource) -> (String, String) {
    let ports = &block.ports;
    let port = |p: usize| ports.get(p);
    let port_name = |p: usize| port(p).map_or("?", |d| d.name.as_str()).to_string();
    let trans = |p: usize| port(p).is_some_and(|d| d.kind == PortKind::Trans);
    let pick = |tr: bool, rot: &str, lin: &str| if tr { lin } else { rot }.to_string();
    match source {
        VarSource::Speed(p) => (
            pick(trans(p), "rad/s", "m/s"),
            format!(
                "{} of {}",
                pick(trans(p), "speed", "velocity"),
                port_name(p)
            ),
        ),
        VarSource::Position(p) => (
            pick(trans(p), "rad", "m"),
            format!(
                "{} of {}",
                pick(trans(p), "angle", "position"),
                port_name(p)
            ),
        ),
        VarSource::Accel(p) => (
            pick(trans(p), "rad/s^2", "m/s^2"),
            format!("acceleration of {}", port_name(p)),
        ),
        VarSource::Friction(k, fv) => {
            let lin = block
                .mech
                .frictions
                .get(k)
                .is_some_and(|f| f.row.0.iter().any(|&(p, _)| trans(p)));
            match fv {
                FrictionVar::WRel => (
                    pick(lin, "rad/s", "m/s"),
                    "slip speed of the friction joint".into(),
                ),
                FrictionVar::PhiRel => (
                    pick(lin, "rad", "m"),
                    "relative angle of the friction joint".into(),
                ),
                FrictionVar::Tau => (
                    pick(lin, "N*m", "N"),
                    "torque transmitted by the friction joint".into(),
                ),
                FrictionVar::Mode => (
                    "1".into(),
                    "friction mode: -1 sliding backward, 0 locked, 1 sliding forward, 2 free"
                        .into(),
                ),
                FrictionVar::PowerLoss => {
                    ("W".into(), "power dissipated by the friction joint".into())
                }
            }
        }
        VarSource::Custom(_) => (String::new(), String::new()),
    }
}

/// Variables of a built primitive block: its signal outputs, then its declared variables.
fn block_vars(block: &BlockDecl) -> Vec<VarRow> {
    let mut rows: Vec<VarRow> = block
        .ports
        .iter()
        .filter(|p| p.kind == PortKind::Out)
        .map(|p| VarRow {
            name: p.name.clone(),
            unit: p.unit.unwrap_or_default().to_string(),
            meaning: "output port".into(),
        })
        .collect();
    for v in &block.variables {
        if rows.iter().any(|r| r.name == v.name) {
            continue;
        }
        let (_, derived) = describe(block, v.source);
        rows.push(VarRow {
            name: v.name.clone(),
            unit: v.unit.to_string(),
            meaning: if v.doc.is_empty() {
                derived
            } else {
                v.doc.to_string()
            },
        });
    }
    rows
}

/// Variables (and inner blocks, for composites) of `t` built from raw parameters `raw`.
fn instance_vars(
    reg: &Registry,
    t: &BlockType,
    raw: &Map<String, Value>,
    scope: &Scope,
    depth: usize,
) -> Result<(Vec<VarRow>, Vec<String>), String> {
    let params =
        resolve_params("example", t.name, &t.params, raw, scope).map_err(|es| first_error(&es))?;
    match &t.build {
        BlockBuild::Primitive(build) => {
            let b = build(&params).map_err(|e| e.to_string())?;
            Ok((block_vars(&b.declare()), Vec::new()))
        }
        BlockBuild::Composite(build) => {
            let d = build(&params).map_err(|e| e.to_string())?;
            composite_vars(reg, &d, depth)
        }
    }
}

fn first_error(es: &[drivelink_core::Error]) -> String {
    es.first().map(ToString::to_string).unwrap_or_default()
}

/// A composite's exported aliases (unit and meaning from the inner variable) and its inner
/// blocks.
fn composite_vars(
    reg: &Registry,
    d: &Diagram,
    depth: usize,
) -> Result<(Vec<VarRow>, Vec<String>), String> {
    if depth > 8 {
        return Err("composite blocks nested too deeply".into());
    }
    let scope =
        resolve_parameters(&d.parameters, &Scope::new(), &d.name).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for (alias, target) in &d.aliases {
        let (inner_block, inner_var) = target.rsplit_once('.').unwrap_or((target, ""));
        let found = d
            .blocks
            .iter()
            .find(|b| b.name == inner_block)
            .and_then(|b| reg.get(&b.type_name).map(|t| (b, t)))
            .and_then(|(b, t)| instance_vars(reg, t, &b.params, &scope, depth + 1).ok())
            .and_then(|(vars, _)| vars.into_iter().find(|v| v.name == inner_var));
        let (unit, meaning) = found.map_or((String::new(), String::new()), |v| (v.unit, v.meaning));
        let meaning = if meaning.is_empty() {
            format!("= {target}")
        } else {
            format!("= {target}: {meaning}")
        };
        rows.push(VarRow {
            name: alias.clone(),
            unit,
            meaning,
        });
    }
    let inner = d
        .blocks
        .iter()
        .map(|b| format!("{} ({})", b.name, b.type_name))
        .collect();
    Ok((rows, inner))
}

/// Variables of every form of `t`.
fn forms(reg: &Registry, t: &BlockType) -> Vec<VarForm> {
    let build = |raw: &Map<String, Value>| {
        // Example values that a block rejects (a planetary ratio must exceed 1) are retried.
        let mut last = Err(String::new());
        for x in [1.0, 2.0, 0.5] {
            let mut m = t.example_params(x);
            m.extend(raw.clone());
            last = instance_vars(reg, t, &m, &Scope::new(), 0);
            if last.is_ok() {
                break;
            }
        }
        last
    };
    let form = |label, raw: &Map<String, Value>| {
        let r = build(raw);
        let inner = r.as_ref().map(|(_, i)| i.clone()).unwrap_or_default();
        VarForm {
            label,
            vars: r.map(|(v, _)| v),
            inner,
        }
    };
    match OTHER_FORMS.iter().find(|f| f.0 == t.name) {
        Some(&(_, first, second, raw)) => {
            let other: Map<String, Value> = serde_json::from_str(raw).unwrap_or_default();
            vec![form(Some(first), &Map::new()), form(Some(second), &other)]
        }
        None => vec![form(None, &Map::new())],
    }
}

/// Lay out rows as left-aligned columns (the last column is not padded).
fn columns(rows: &[Vec<String>], indent: &str) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = indent.to_string();
        for (c, cell) in r.iter().enumerate() {
            line.push_str(cell);
            if c + 1 < r.len() {
                line.push_str(&" ".repeat(widths[c] - cell.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn var_cells(v: &VarRow) -> Vec<String> {
    vec![v.name.clone(), v.unit.clone(), v.meaning.clone()]
}

/// The text form of one block type.
pub fn type_text(reg: &Registry, t: &BlockType) -> String {
    let mut s = format!("{} [{}]\n    {}\n", t.name, t.category, t.doc);
    let ports = if t.ports_doc.is_empty() {
        "(none)"
    } else {
        t.ports_doc
    };
    s.push_str(&format!("    ports: {ports}\n"));
    if t.params.is_empty() {
        s.push_str("    parameters: (none)\n");
    } else {
        s.push_str("    parameters:\n");
        let rows: Vec<Vec<String>> = t
            .params
            .iter()
            .map(|p| {
                vec![
                    p.name.to_string(),
                    kind_text(p),
                    default_text(p),
                    p.doc.to_string(),
                ]
            })
            .collect();
        s.push_str(&columns(&rows, "      "));
    }
    for f in forms(reg, t) {
        let label = f.label.map(|l| format!(" of {l}")).unwrap_or_default();
        match &f.vars {
            Ok(v) if v.is_empty() => s.push_str(&format!("    variables{label}: (none)\n")),
            Ok(v) => {
                s.push_str(&format!("    variables{label}, logged as NAME.VAR:\n"));
                let rows: Vec<Vec<String>> = v.iter().map(var_cells).collect();
                s.push_str(&columns(&rows, "      "));
            }
            Err(e) => s.push_str(&format!(
                "    variables{label}: depend on the parameters ({e})\n"
            )),
        }
        if !f.inner.is_empty() {
            s.push_str(&format!(
                "    inner blocks (their variables log as NAME.BLOCK.VAR): {}\n",
                f.inner.join(", ")
            ));
        }
    }
    s
}

const SUBSYSTEM_DOC: &str = "A masked subsystem: an inner netlist given by \"file\" (relative to the including file) or an inline \"diagram\"; its \"ports\" are exported, its \"parameters\" are overridden by \"params\", its \"aliases\" name inner variables.";

fn subsystem_text() -> String {
    format!(
        "{SUBSYSTEM} [structure]\n    {SUBSYSTEM_DOC}\n    ports: the inner netlist's \"ports\"\n    parameters: the inner netlist's \"parameters\"\n    variables: the inner netlist's \"aliases\", and every inner variable as NAME.BLOCK.VAR\n"
    )
}

/// Categories in catalogue order.
fn categories(reg: &Registry) -> Vec<&'static str> {
    let mut cats: Vec<&str> = reg.types().map(|t| t.category).collect();
    cats.sort();
    cats.dedup();
    cats
}

/// The whole catalogue as text.
pub fn catalogue_text(reg: &Registry) -> String {
    let mut s = String::new();
    for c in categories(reg) {
        s.push_str(&format!("== {c} ==\n\n"));
        for t in reg.types().filter(|t| t.category == c) {
            s.push_str(&type_text(reg, t));
            s.push('\n');
        }
    }
    s.push_str("== structure ==\n\n");
    s.push_str(&subsystem_text());
    s
}

/// Escape text for a Markdown table cell or paragraph.
fn md(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '|' | '*' | '<' | '\\' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A Markdown table.
fn md_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        "---|".repeat(header.len())
    );
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| md(c)).collect();
        s.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    s
}

/// The Markdown form of one block type (a `###` section).
pub fn type_markdown(reg: &Registry, t: &BlockType) -> String {
    let mut s = format!("### {}\n\n{}\n\n", t.name, md(t.doc));
    let ports = if t.ports_doc.is_empty() {
        "(none)"
    } else {
        t.ports_doc
    };
    s.push_str(&format!("Ports: {}\n\n", md(ports)));
    if t.params.is_empty() {
        s.push_str("Parameters: none.\n\n");
    } else {
        let rows: Vec<Vec<String>> = t
            .params
            .iter()
            .map(|p| {
                vec![
                    p.name.to_string(),
                    kind_text(p),
                    default_text(p),
                    p.doc.to_string(),
                ]
            })
            .collect();
        s.push_str(&md_table(
            &["parameter", "kind [SI unit]", "default", "description"],
            &rows,
        ));
        s.push('\n');
    }
    for f in forms(reg, t) {
        let label = f
            .label
            .map(|l| format!(" of {}", md(l)))
            .unwrap_or_default();
        match &f.vars {
            Ok(v) if v.is_empty() => s.push_str(&format!("Variables{label}: none.\n\n")),
            Ok(v) => {
                s.push_str(&format!("Variables{label}:\n\n"));
                let rows: Vec<Vec<String>> = v.iter().map(var_cells).collect();
                s.push_str(&md_table(&["variable", "unit", "description"], &rows));
                s.push('\n');
            }
            Err(e) => s.push_str(&format!(
                "Variables{label}: depend on the parameters ({}).\n\n",
                md(e)
            )),
        }
        if !f.inner.is_empty() {
            s.push_str(&format!(
                "Inner blocks (their variables log as `NAME.BLOCK.VAR`): {}.\n\n",
                md(&f.inner.join(", "))
            ));
        }
    }
    s
}

/// The whole catalogue as Markdown (`docs/blocks.md`).
pub fn catalogue_markdown(reg: &Registry) -> String {
    let mut s = String::from(
        "# Block catalogue\n\n\
         <!-- Generated by `drivelink blocks --markdown`; do not edit. Regenerate with\n     \
         cargo run -- blocks --markdown > docs/blocks.md -->\n\n\
         Every block type of the library with its ports, parameters and loggable variables,\n\
         generated from the block registry (`drivelink blocks --markdown`). The netlist format\n\
         is described in [netlist.md](netlist.md).\n\n\
         - **Ports**: `in` / `out` are signals, `rot` / `trans` are rotational / translational\n  \
         flanges.\n\
         - **Parameters**: the unit in brackets is the SI unit a bare number is taken in; any\n  \
         compatible unit may be written instead (`\"4500 rpm\"`). `[*]` takes any unit (a\n  \
         signal level), `[1]` is dimensionless. `required` parameters have no default,\n  \
         `optional` ones change the behaviour when given (see the description).\n\
         - **Variables** are logged as `NAME.VAR` (`log`, scopes), signal outputs included.\n  \
         They are listed for the default parameters (example values for required ones);\n  \
         where the list depends on the parameters the description says so. A unit is given\n  \
         where the kernel fixes it (speeds, angles, friction-joint quantities).\n\n",
    );
    let cats = categories(reg);
    s.push_str("Contents:\n\n");
    for c in &cats {
        let names: Vec<String> = reg
            .types()
            .filter(|t| t.category == *c)
            .map(|t| format!("[{}](#{})", t.name, t.name.to_lowercase()))
            .collect();
        s.push_str(&format!("- {}: {}\n", md(c), names.join(", ")));
    }
    s.push_str(&format!(
        "- structure: [{SUBSYSTEM}](#{})\n\n",
        SUBSYSTEM.to_lowercase()
    ));
    for c in &cats {
        s.push_str(&format!("## {}\n\n", md(c)));
        for t in reg.types().filter(|t| t.category == *c) {
            s.push_str(&type_markdown(reg, t));
        }
    }
    s.push_str(&format!(
        "## structure\n\n### {SUBSYSTEM}\n\n{}\n\nPorts: the inner netlist's `ports`. Parameters: the inner netlist's `parameters`. Variables: the inner netlist's `aliases`, and every inner variable as `NAME.BLOCK.VAR`. See [netlist.md](netlist.md#subsystems).\n",
        md(SUBSYSTEM_DOC)
    ));
    s
}

/// `drivelink blocks [TYPE] [--markdown]`: the catalogue text, or an error message naming
/// the unknown type (with a suggestion and the known types).
pub fn blocks(type_name: Option<&str>, markdown: bool) -> Result<String, String> {
    let reg: Registry = drivelink_blocks::registry();
    match type_name {
        None if markdown => Ok(catalogue_markdown(&reg)),
        None => Ok(catalogue_text(&reg)),
        Some(SUBSYSTEM) if markdown => Ok(format!("### {SUBSYSTEM}\n\n{}\n", md(SUBSYSTEM_DOC))),
        Some(SUBSYSTEM) => Ok(subsystem_text()),
        Some(name) => match reg.get(name) {
            Some(t) if markdown => Ok(type_markdown(&reg, t)),
            Some(t) => Ok(type_text(&reg, t)),
            None => {
                let mut names: Vec<&str> = reg.names().collect();
                names.push(SUBSYSTEM);
                Err(format!(
                    "unknown block type '{name}'{}; known types: {}",
                    drivelink_core::suggest::hint(name, names.iter().copied()),
                    names.join(", ")
                ))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_block_type_builds_an_example_instance_for_its_variables() {
        let reg = drivelink_blocks::registry();
        // `Fmu` builds from an FMU file, which an example value cannot name: its ports and
        // variables are the file's (tests/fmu_roundtrip.rs lists them from a real FMU).
        for t in reg.types().filter(|t| t.name != "Fmu") {
            for f in forms(&reg, t) {
                assert!(
                    f.vars.is_ok(),
                    "{} ({:?}): {:?}",
                    t.name,
                    f.label,
                    f.vars.err()
                );
            }
        }
    }

    fn vars_of(type_name: &str) -> Vec<VarRow> {
        let reg = drivelink_blocks::registry();
        let t = reg.get(type_name).unwrap();
        forms(&reg, t).remove(0).vars.unwrap()
    }

    fn row<'a>(rows: &'a [VarRow], name: &str) -> &'a VarRow {
        rows.iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no variable {name} in {rows:?}"))
    }

    #[test]
    fn clutch_variables_carry_the_units_of_a_rotational_friction_joint() {
        let v = vars_of("Clutch");
        let names: Vec<&str> = v.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["w_rel", "phi_rel", "tau", "mode", "power_loss"]);
        assert_eq!(row(&v, "w_rel").unit, "rad/s");
        assert_eq!(row(&v, "phi_rel").unit, "rad");
        assert_eq!(row(&v, "tau").unit, "N*m");
        assert_eq!(row(&v, "power_loss").unit, "W");
        assert!(row(&v, "mode").meaning.contains("0 locked"));
    }

    #[test]
    fn inertia_and_mass_variables_are_rotational_and_translational() {
        let j = vars_of("Inertia");
        assert_eq!(
            (row(&j, "w").unit.as_str(), row(&j, "phi").unit.as_str()),
            ("rad/s", "rad")
        );
        assert_eq!(row(&j, "a").unit, "rad/s^2");
        let m = vars_of("Mass");
        assert_eq!(
            (row(&m, "v").unit.as_str(), row(&m, "s").unit.as_str()),
            ("m/s", "m")
        );
    }

    #[test]
    fn signal_outputs_are_listed_as_variables() {
        let g = vars_of("Gain");
        assert_eq!(g.len(), 1);
        assert_eq!(
            (g[0].name.as_str(), g[0].meaning.as_str()),
            ("y", "output port")
        );
        let s = vars_of("MotionSensor");
        for n in ["w", "phi", "a"] {
            row(&s, n);
        }
    }

    #[test]
    fn composite_lists_its_aliases_with_the_inner_units() {
        let v = vars_of("CrCr4Speed");
        assert_eq!(row(&v, "A_w_rel").unit, "rad/s");
        assert_eq!(row(&v, "D_tau").unit, "N*m");
        assert!(row(&v, "A_mode").meaning.starts_with("= clutch_A.mode"));
        row(&v, "ratio");
        let text = type_text(
            &drivelink_blocks::registry(),
            drivelink_blocks::registry().get("CrCr4Speed").unwrap(),
        );
        assert!(text.contains("inner blocks"), "{text}");
        assert!(text.contains("clutch_A (Clutch)"), "{text}");
    }

    #[test]
    fn abs_lists_both_forms() {
        let reg = drivelink_blocks::registry();
        let t = reg.get("Abs").unwrap();
        let f = forms(&reg, t);
        assert_eq!(f.len(), 2);
        let plain: Vec<String> = f[0]
            .vars
            .clone()
            .unwrap()
            .into_iter()
            .map(|r| r.name)
            .collect();
        assert_eq!(plain, ["y"]);
        let ctrl: Vec<String> = f[1]
            .vars
            .clone()
            .unwrap()
            .into_iter()
            .map(|r| r.name)
            .collect();
        assert!(ctrl.contains(&"torque".to_string()), "{ctrl:?}");
    }

    #[test]
    fn markdown_escapes_table_breaking_characters() {
        assert_eq!(md("\"min\"|\"max\""), "\"min\"\\|\"max\"");
        assert_eq!(md("2*T <= x"), "2\\*T \\<= x");
        let t = md_table(&["a", "b"], &[vec!["x|y".into(), "z".into()]]);
        assert_eq!(t, "| a | b |\n|---|---|\n| x\\|y | z |\n");
    }

    #[test]
    fn unknown_type_suggests_by_word_part() {
        let e = blocks(Some("FrictionClutch"), false).unwrap_err();
        assert!(
            e.starts_with("unknown block type 'FrictionClutch' (did you mean 'Clutch'?)"),
            "{e}"
        );
        assert!(e.contains("known types: Abs, "), "{e}");
    }
}
