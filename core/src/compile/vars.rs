//! Pass 6, variables: every loggable variable (signal outputs, block variables, aliases of
//! composite blocks) with its source and SI unit; the logged list; scope signals checked
//! (known variables, display units that fit the signal's dimension).

use std::collections::HashMap;

use crate::block::{BlockDecl, PortKind};
use crate::error::Error;
use crate::plan::{VarInfo, VarRef};
use crate::scope::{DisplayUnit, ScopeSpec};
use crate::suggest;

use super::flatten::Flat;
use super::layout::Layout;

/// The variables of a model and the indices of the logged ones.
pub(crate) struct Vars {
    pub vars: Vec<VarInfo>,
    pub log: Vec<usize>,
}

/// The variables of block `b`, in declaration order.
fn block_vars(b: usize, blk: &BlockDecl, lay: &Layout, out: &mut Vec<VarInfo>) {
    let bp = &lay.blocks[b];
    let mut y = bp.y.start;
    for decl in &bp.ports {
        if decl.kind == PortKind::Out {
            out.push(VarInfo {
                name: format!("{}.{}", bp.name, decl.name),
                source: VarRef::Signal(crate::ids::SlotIx::at(y)),
                unit: decl.unit,
                doc: "",
            });
            y += 1;
        }
    }
    for v in &blk.variables {
        let source = lay.var_ref(b, v.source);
        out.push(VarInfo {
            name: format!("{}.{}", bp.name, v.name),
            source,
            unit: Some(v.unit),
            doc: v.doc,
        });
    }
}

/// "; block 'x' has: ..." for an unknown variable whose block exists.
fn known_of_block(name: &str, vars: &[VarInfo]) -> String {
    let Some((block, _)) = name.rsplit_once('.') else {
        return String::new();
    };
    let prefix = format!("{block}.");
    let own: Vec<&str> = vars
        .iter()
        .filter(|v| v.name.starts_with(&prefix) && !v.name[prefix.len()..].contains('.'))
        .map(|v| v.name.as_str())
        .collect();
    if own.is_empty() {
        String::new()
    } else {
        format!("; block '{block}' has: {}", own.join(", "))
    }
}

/// Check the display units of a scope against its signals' dimensions.
fn check_scope(scope: &ScopeSpec, vars: &[VarInfo], errors: &mut Vec<Error>) {
    for s in scope.panels.iter().flatten() {
        let Some(u) = scope.unit_of(s) else {
            continue;
        };
        let Some(du) = DisplayUnit::parse(u) else {
            errors.push(Error::UnknownDisplayUnit {
                scope: scope.name.clone(),
                unit: u.to_string(),
                known: DisplayUnit::names(),
            });
            continue;
        };
        let Ok(i) = vars.binary_search_by(|v| v.name.as_str().cmp(&s.signal)) else {
            continue;
        };
        if let Some(si) = vars[i].unit {
            if !du.fits(si) {
                errors.push(Error::ScopeUnit {
                    scope: scope.name.clone(),
                    signal: s.signal.clone(),
                    unit: u.to_string(),
                    unit_dim: du.dim.ascii(),
                    si: format!("in {si}"),
                });
            }
        }
    }
}

/// Resolve the variables of the model, the logged list and the scopes.
/// For a logged name that is a mechanical, frame or heat port (`car.frame`), the hint that
/// it is a port, not a variable (a "did you mean" by spelling would point anywhere).
fn port_not_variable(w: &str, decls: &[BlockDecl], flat: &Flat) -> Option<String> {
    let (block, port) = w.rsplit_once('.')?;
    let b = flat.blocks.iter().position(|fb| fb.name == block)?;
    let decl = decls.get(b)?.ports.iter().find(|p| p.name == port)?;
    let kind = match decl.kind {
        PortKind::Rot => "rotational flange",
        PortKind::Trans => "translational flange",
        PortKind::Frame => "frame",
        PortKind::Heat => "heat port",
        PortKind::Road => "road",
        PortKind::In => "signal input",
        PortKind::Out => return None,
    };
    Some(format!(
        " ('{port}' is a {kind} port of '{block}', not a variable: log one of the block's variables)"
    ))
}

pub(crate) fn variables(
    decls: &[BlockDecl],
    lay: &Layout,
    flat: &Flat,
    scopes: &[ScopeSpec],
) -> Result<Vars, Error> {
    let mut vars: Vec<VarInfo> = Vec::new();
    for (b, blk) in decls.iter().enumerate() {
        block_vars(b, blk, lay, &mut vars);
    }
    let by_name: HashMap<&str, usize> = vars
        .iter()
        .enumerate()
        .map(|(i, v)| (v.name.as_str(), i))
        .collect();
    let mut aliases: Vec<VarInfo> = flat
        .alias_map
        .iter()
        .filter_map(|(alias, target)| {
            by_name.get(target.as_str()).map(|&i| VarInfo {
                name: alias.clone(),
                ..vars[i].clone()
            })
        })
        .collect();
    drop(by_name);
    vars.append(&mut aliases);
    vars.sort_by(|a, b| a.name.cmp(&b.name));
    vars.dedup_by(|a, b| a.name == b.name);
    let mut wanted: Vec<String> = Vec::new();
    for l in &flat.log {
        if l == "all" {
            wanted.extend(vars.iter().map(|v| v.name.clone()));
        } else {
            wanted.push(l.clone());
        }
    }
    for s in scopes {
        wanted.extend(s.signal_names().map(str::to_string));
    }
    let mut log: Vec<usize> = Vec::new();
    let mut errors = Vec::new();
    for w in wanted {
        match vars.binary_search_by(|v| v.name.as_str().cmp(&w)) {
            Ok(i) => {
                if !log.contains(&i) {
                    log.push(i);
                }
            }
            Err(_) => errors.push(Error::UnknownVariable {
                hint: port_not_variable(&w, decls, flat)
                    .unwrap_or_else(|| suggest::hint(&w, vars.iter().map(|v| v.name.as_str()))),
                known: known_of_block(&w, &vars),
                name: w,
            }),
        }
    }
    for s in scopes {
        check_scope(s, &vars, &mut errors);
    }
    Error::from_list(errors)?;
    Ok(Vars { vars, log })
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{signal, Wired};
    use super::super::flatten::{Flat, FlatBlock};
    use super::variables;
    use crate::block::{BlockDecl, PortDecl, VarDecl, VarSource};
    use crate::error::Error;

    /// A flattened diagram of `names` logging `log`.
    fn flat(names: &[&str], log: &[&str]) -> Flat {
        Flat {
            blocks: names
                .iter()
                .map(|n| FlatBlock {
                    name: n.to_string(),
                    type_name: "Test".into(),
                    params: Default::default(),
                    scope: Default::default(),
                    base_dir: None,
                })
                .collect(),
            log: log.iter().map(|s| s.to_string()).collect(),
            ..Flat::default()
        }
    }

    fn shaft() -> BlockDecl {
        BlockDecl {
            variables: vec![VarDecl::new("w", VarSource::Speed(0), "rad/s")],
            ..BlockDecl::ports(vec![PortDecl::rot("flange"), PortDecl::output("y")])
        }
    }

    #[test]
    fn outputs_then_declared_variables_are_named_block_dot_name_with_their_units() {
        let w = Wired::new(vec![("s", shaft()), ("g", signal(&[], &["y"]))], &[]);
        let lay = w.layout();
        let v = variables(&w.decls, &lay, &flat(&["s", "g"], &["s.w", "g.y"]), &[])
            .expect("the logged names exist");
        let names: Vec<&str> = v.vars.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["g.y", "s.w", "s.y"], "sorted by name");
        let logged: Vec<&str> = v.log.iter().map(|&i| v.vars[i].name.as_str()).collect();
        assert_eq!(logged, ["s.w", "g.y"], "in the order asked for");
        assert_eq!(v.vars[1].unit, Some("rad/s"));
    }

    #[test]
    fn logging_a_port_that_is_not_a_variable_says_it_is_a_port() {
        let w = Wired::new(vec![("s", shaft())], &[]);
        let lay = w.layout();
        match variables(&w.decls, &lay, &flat(&["s"], &["s.flange"]), &[]) {
            Err(Error::UnknownVariable { name, hint, .. }) => {
                assert_eq!(name, "s.flange");
                assert!(hint.contains("rotational flange port"), "{hint}");
            }
            Err(e) => panic!("expected an unknown variable, got {e}"),
            Ok(_) => panic!("s.flange is not a variable"),
        }
    }
}
