//! Pass 1, flatten: subsystems and composite blocks expanded into one list of primitive
//! blocks named `sub.block`, each with the parameter scope it sees; connections, logged
//! variables, exported ports and variable aliases rewritten to flat names.

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::Value;

use crate::diagram::{BlockSpec, Diagram, PortRef};
use crate::error::{Error, ParamError};
use crate::params::{BlockBuild, BlockType, Params, Registry};
use crate::suggest;

use super::build::{resolve_parameters, resolve_params, scope_value, Scope};

/// The build of a composite block type: the inner diagram from resolved parameters.
type CompositeBuild = fn(&Params) -> Result<Diagram, ParamError>;

/// A primitive block after flattening.
pub(crate) struct FlatBlock {
    pub name: String,
    pub type_name: String,
    pub params: serde_json::Map<String, Value>,
    pub scope: Rc<Scope>,
    /// The directory of the diagram the block came from (see [`Diagram::base_dir`]).
    pub base_dir: Option<std::path::PathBuf>,
}

/// A diagram flattened to primitive blocks.
#[derive(Default)]
pub(crate) struct Flat {
    pub blocks: Vec<FlatBlock>,
    pub connections: Vec<Vec<String>>,
    pub log: Vec<String>,
    /// "sub.port" -> flat "block.port"
    pub port_map: HashMap<String, String>,
    /// "sub.alias" -> flat "block.var"
    pub alias_map: HashMap<String, String>,
    /// Flat name of each subsystem or composite block -> its type name and exported port
    /// names.
    pub sub_ports: HashMap<String, (String, Vec<String>)>,
    /// Block entries met so far, at every level (subsystems and composite blocks count
    /// as well as the primitive blocks inside them), against [`MAX_BLOCKS`].
    pub entries: usize,
}

/// The most block entries a model may expand to, all levels together: far above any
/// model built by hand (the 1,000-lag chain has 1,001), far below what exhausts a
/// machine (each costs about 8 KB to compile). Subsystems that include several copies of
/// subsystems that do the same multiply: ten levels of ten copies are 10^10 blocks.
pub const MAX_BLOCKS: usize = 250_000;

/// Flatten diagram `d` (the top level) with its resolved parameters `scope`.
pub(crate) fn flatten_diagram(d: &Diagram, reg: &Registry, scope: Scope) -> Result<Flat, Error> {
    let mut flat = Flat::default();
    let mut errors = Vec::new();
    flatten(d, reg, "", Rc::new(scope), &mut flat, &mut errors, 0);
    Error::from_list(errors)?;
    Ok(flat)
}

fn valid_name(n: &str) -> bool {
    let mut c = n.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

fn flatten(
    d: &Diagram,
    reg: &Registry,
    prefix: &str,
    scope: Rc<Scope>,
    out: &mut Flat,
    errors: &mut Vec<Error>,
    depth: usize,
) {
    if depth > 64 {
        errors.push(Error::Netlist {
            file: d.name.clone(),
            path: prefix.to_string(),
            message: "subsystems nested deeper than 64 levels (a cycle?)".into(),
        });
        return;
    }
    // This diagram's own connections go first in its segment of the flat list, so at the top
    // level connection `i` of the error messages is `connections[i]` of the netlist.
    let conn_start = out.connections.len();
    check_names(d, prefix, errors);
    let level = Level {
        reg,
        scope: &scope,
        depth,
    };
    for b in &d.blocks {
        let full = format!("{prefix}{}", b.name);
        if out.entries >= MAX_BLOCKS {
            if out.entries == MAX_BLOCKS {
                errors.push(Error::Netlist {
                    file: d.name.clone(),
                    path: full,
                    message: format!(
                        "the model expands to more than {MAX_BLOCKS} blocks (counting every \
                         subsystem and the blocks inside it) by this one: subsystems that \
                         include many copies of subsystems multiply"
                    ),
                });
                out.entries += 1;
            }
            return;
        }
        out.entries += 1;
        if b.type_name == "Subsystem" {
            flatten_subsystem(d, b, &full, &level, out, errors);
            continue;
        }
        let Some(t) = reg.get(&b.type_name) else {
            let mut names: Vec<&str> = reg.names().collect();
            names.push("Subsystem");
            errors.push(Error::UnknownType {
                block: full,
                type_name: b.type_name.clone(),
                hint: suggest::hint(&b.type_name, names),
            });
            continue;
        };
        match &t.build {
            BlockBuild::Primitive(_) => out.blocks.push(FlatBlock {
                name: full,
                type_name: b.type_name.clone(),
                params: b.params.clone(),
                scope: scope.clone(),
                base_dir: d.base_dir.0.clone(),
            }),
            BlockBuild::Composite(f) => flatten_composite(d, b, t, *f, &full, &level, out, errors),
        }
    }
    let own: Vec<Vec<String>> = d
        .connections
        .iter()
        .enumerate()
        .map(|(ci, c)| {
            c.iter()
                .map(|r| {
                    let full = format!("{prefix}{r}");
                    if let Some(flat) = out.port_map.get(&full) {
                        return flat.clone();
                    }
                    unknown_sub_port(out, ci, r, &full, errors);
                    full
                })
                .collect()
        })
        .collect();
    out.connections.splice(conn_start..conn_start, own);
    for l in &d.log {
        if l == "all" {
            out.log.push("all".into());
        } else {
            let full = format!("{prefix}{l}");
            out.log.push(full);
        }
    }
}

/// Flatten the inner diagram of subsystem or composite block `full`: resolve its parameters
/// (with `overrides` from the outer block), flatten it under `full.` and register its
/// exported ports and aliases.
fn expand(
    inner: &Diagram,
    overrides: &Scope,
    full: &str,
    reg: &Registry,
    out: &mut Flat,
    errors: &mut Vec<Error>,
    depth: usize,
) {
    let inner_scope = match resolve_parameters(&inner.parameters, overrides, full) {
        Ok(s) => s,
        Err(e) => {
            errors.push(e);
            return;
        }
    };
    let sub_prefix = format!("{full}.");
    flatten(
        inner,
        reg,
        &sub_prefix,
        Rc::new(inner_scope),
        out,
        errors,
        depth + 1,
    );
    export(inner, full, &sub_prefix, out, errors);
}

/// Evaluate `params` (name, raw) in an existing scope (for subsystem overrides).
fn resolve_in(params: &[(String, Value)], scope: &Scope, ctx: &str) -> Result<Scope, Error> {
    let mut out = Scope::new();
    for (name, v) in params {
        let val = scope_value(v, scope).map_err(|message| Error::Netlist {
            file: ctx.to_string(),
            path: format!("params.{name}"),
            message,
        })?;
        out.insert(name.clone(), val);
    }
    Ok(out)
}

/// A connection end `r` (`full` with the prefix) naming a port a subsystem or composite
/// block does not export: the error names the block and its ports (otherwise the flat name
/// would later read as an unknown block).
fn unknown_sub_port(out: &Flat, ci: usize, r: &str, full: &str, errors: &mut Vec<Error>) {
    let Some(pr) = PortRef::parse(full) else {
        return;
    };
    let Some((type_name, exported)) = out.sub_ports.get(&pr.block) else {
        return;
    };
    errors.push(Error::UnknownPort {
        connection: ci,
        block: PortRef::parse(r).map_or(pr.block.clone(), |p| p.block),
        type_name: type_name.clone(),
        port: pr.port.clone(),
        hint: suggest::hint(&pr.port, exported.iter().map(String::as_str)),
        ports: if exported.is_empty() {
            "none (it exports no ports)".into()
        } else {
            exported.join(", ")
        },
    });
}

/// Register a (sub)diagram's exported ports and aliases under the outer name.
fn export(inner: &Diagram, full: &str, sub_prefix: &str, out: &mut Flat, errors: &mut Vec<Error>) {
    let exported = inner.ports.iter().map(|(e, _)| e.clone()).collect();
    out.sub_ports
        .insert(full.to_string(), ("Subsystem".into(), exported));
    for (exp, target) in &inner.ports {
        let t = format!("{sub_prefix}{target}");
        let t = out.port_map.get(&t).cloned().unwrap_or(t);
        if PortRef::parse(&t).is_none() {
            errors.push(Error::Netlist {
                file: full.to_string(),
                path: format!("ports.{exp}"),
                message: format!("'{target}' is not a \"block.port\" reference"),
            });
        }
        out.port_map.insert(format!("{full}.{exp}"), t);
    }
    for (alias, target) in &inner.aliases {
        let t = format!("{sub_prefix}{target}");
        let t = out.alias_map.get(&t).cloned().unwrap_or(t);
        out.alias_map.insert(format!("{full}.{alias}"), t);
    }
}

/// Block names of one diagram level: valid identifiers, each once.
fn check_names(d: &Diagram, prefix: &str, errors: &mut Vec<Error>) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for b in &d.blocks {
        if !valid_name(&b.name) {
            errors.push(Error::InvalidName {
                name: format!("{prefix}{}", b.name),
            });
        }
        if seen.insert(&b.name, 0).is_some() {
            errors.push(Error::DuplicateName {
                name: format!("{prefix}{}", b.name),
            });
        }
    }
}

/// Where a diagram level is flattened: the registry, the level's resolved parameters and
/// its nesting depth.
struct Level<'a> {
    reg: &'a Registry,
    scope: &'a Rc<Scope>,
    depth: usize,
}

/// Subsystem `b` (flat name `full`) of diagram `d`: its parameter overrides resolved in
/// the outer scope, its diagram expanded under `full`.
fn flatten_subsystem(
    d: &Diagram,
    b: &BlockSpec,
    full: &str,
    level: &Level,
    out: &mut Flat,
    errors: &mut Vec<Error>,
) {
    let Some(inner) = &b.inner else {
        errors.push(Error::Netlist {
            file: d.name.clone(),
            path: full.to_string(),
            message: "Subsystem without a diagram".into(),
        });
        return;
    };
    // Overrides are evaluated in the outer scope.
    let inner_names: Vec<&str> = inner.parameters.iter().map(|p| p.0.as_str()).collect();
    let mut overrides = Scope::new();
    for (k, v) in &b.params {
        if !inner_names.contains(&k.as_str()) {
            errors.push(Error::UnknownParam {
                block: full.to_string(),
                type_name: "Subsystem".into(),
                param: k.clone(),
                hint: suggest::hint(k, inner_names.iter().copied()),
                known: inner_names.join(", "),
            });
            continue;
        }
        match resolve_in(&[(k.clone(), v.clone())], level.scope, full) {
            Ok(s) => overrides.extend(s),
            Err(e) => errors.push(e),
        }
    }
    // An inner diagram written inline finds its paths where the outer one does.
    let inherited;
    let inner: &Diagram = if inner.base_dir.0.is_none() && d.base_dir.0.is_some() {
        let mut c = (**inner).clone();
        c.base_dir = d.base_dir.clone();
        inherited = c;
        &inherited
    } else {
        inner
    };
    expand(inner, &overrides, full, level.reg, out, errors, level.depth);
}

/// Composite block `b` of type `t` (flat name `full`): its parameters resolved, the
/// diagram its build returns expanded under `full`.
#[allow(clippy::too_many_arguments)]
fn flatten_composite(
    d: &Diagram,
    b: &BlockSpec,
    t: &BlockType,
    build: CompositeBuild,
    full: &str,
    level: &Level,
    out: &mut Flat,
    errors: &mut Vec<Error>,
) {
    let params = match resolve_params(full, t.name, &t.params, &b.params, level.scope) {
        Ok(p) => p,
        Err(es) => {
            errors.extend(es);
            return;
        }
    };
    match build(&params) {
        Ok(mut inner) => {
            if inner.base_dir.0.is_none() {
                inner.base_dir = d.base_dir.clone();
            }
            expand(
                &inner,
                &Scope::new(),
                full,
                level.reg,
                out,
                errors,
                level.depth,
            );
            if let Some(entry) = out.sub_ports.get_mut(full) {
                entry.0 = t.name.to_string();
            }
        }
        Err(e) => errors.push(Error::Param(e)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::flatten_diagram;
    use crate::block::{Block, BlockDecl, PortDecl};
    use crate::diagram::Diagram;
    use crate::error::{Error, ParamError};
    use crate::param_scope::Scope;
    use crate::params::{BlockBuild, BlockType, Params, Registry};

    struct Pass;
    impl Block for Pass {
        fn declare(&self) -> BlockDecl {
            BlockDecl::ports(vec![PortDecl::input("u"), PortDecl::output("y")])
        }
    }
    fn build(_: &Params) -> Result<Box<dyn Block>, ParamError> {
        Ok(Box::new(Pass))
    }
    fn registry() -> Registry {
        let mut r = Registry::new();
        r.register(BlockType {
            name: "Pass",
            category: "test",
            doc: "",
            ports_doc: "u[in] -> y[out]",
            params: Vec::new(),
            build: BlockBuild::Primitive(build),
        });
        r
    }

    #[test]
    fn a_subsystem_becomes_its_blocks_named_under_it_with_its_exported_ports_mapped() {
        let mut inner = Diagram::new("filter");
        inner.add("a", "Pass", json!({}));
        inner.add("b", "Pass", json!({}));
        inner.connect(&["a.y", "b.u"]);
        inner.export_port("in", "a.u").export_port("out", "b.y");
        let mut top = Diagram::new("top");
        top.add("src", "Pass", json!({}));
        top.add_subsystem("f", inner, json!({}));
        top.connect(&["src.y", "f.in"]);
        let flat = flatten_diagram(&top, &registry(), Scope::new()).expect("flattens");
        let names: Vec<&str> = flat.blocks.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["src", "f.a", "f.b"]);
        assert!(flat
            .connections
            .contains(&vec!["f.a.y".to_string(), "f.b.u".to_string()]));
        assert_eq!(flat.port_map.get("f.in").map(String::as_str), Some("f.a.u"));
        assert_eq!(
            flat.port_map.get("f.out").map(String::as_str),
            Some("f.b.y")
        );
    }

    #[test]
    fn an_unknown_block_type_is_an_error_naming_the_block() {
        let mut top = Diagram::new("top");
        top.add("x", "Nope", json!({}));
        match flatten_diagram(&top, &registry(), Scope::new()) {
            Err(Error::UnknownType {
                block, type_name, ..
            }) => assert_eq!((block.as_str(), type_name.as_str()), ("x", "Nope")),
            Err(e) => panic!("expected an unknown type, got {e}"),
            Ok(_) => panic!("Nope is not registered"),
        }
    }
}
