//! The port lists of a diagram's blocks ([`PortTable`]), and how to get them from a
//! [`Registry`].
//!
//! The diagram drawing needs each block's ports (name and kind) and, for blocks that can be
//! opened, their inner diagram. Ports of a built block depend on its parameters (a `Sum`
//! with four signs has four inputs), so [`PortTable::from_registry`] resolves parameters the
//! way `compile` does: model parameters in order, subsystem overrides evaluated in the outer
//! diagram's scope, composite blocks expanded by their registered builder. The report crate
//! only sees a `Registry` (a core type); the CLI passes the block library's.
//!
//! A block whose parameters do not resolve still gets ports: those of its type's catalogue
//! line (built from default parameters), and failing that the ports its connections name.
//! Each such fallback is recorded as a warning.

use std::collections::BTreeMap;

use serde_json::Value;

use drivelink_core::block::PortDecl;
use drivelink_core::compile::{resolve_parameters, resolve_params, Scope};
use drivelink_core::diagram::{BlockSpec, Diagram, PortRef};
use drivelink_core::params::{BlockBuild, BlockType, Registry};

/// What the drawing needs to know about one block.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockInfo {
    /// Ports in the block's order.
    pub ports: Vec<PortDecl>,
    /// Library category (`"signal"`, `"mechanical"`, `"powertrain"`, `"vehicle"`,
    /// `"subsystem"`), used for the box colour.
    pub category: String,
    /// The inner diagram of a composite block (subsystems carry theirs in the
    /// [`BlockSpec`]).
    pub inner: Option<Diagram>,
}

/// Ports (and composite expansions) of every block of a diagram, by block path
/// (`"gearbox"`, `"gearbox.clutch_A"`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PortTable {
    blocks: BTreeMap<String, BlockInfo>,
    warnings: Vec<String>,
}

impl PortTable {
    /// An empty table (every block then gets the ports its connections name).
    pub fn new() -> Self {
        PortTable::default()
    }

    /// Sets the information of the block at `path`.
    pub fn insert(&mut self, path: impl Into<String>, info: BlockInfo) {
        self.blocks.insert(path.into(), info);
    }

    /// The information of the block at `path`.
    pub fn get(&self, path: &str) -> Option<&BlockInfo> {
        self.blocks.get(path)
    }

    /// Blocks whose ports had to be guessed, and why.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Resolves the ports of every block of `d` (and of its subsystems and composite
    /// blocks, recursively) with the block types of `reg`.
    pub fn from_registry(d: &Diagram, reg: &Registry) -> PortTable {
        let mut t = PortTable::new();
        let top = Level {
            params: d.parameters.clone(),
            overrides: Scope::new(),
        };
        t.walk(d, "", &top, reg, 0);
        t
    }

    fn walk(&mut self, d: &Diagram, prefix: &str, level: &Level, reg: &Registry, depth: usize) {
        if depth > 64 {
            return;
        }
        let scope = level.scope(prefix).unwrap_or_default();
        for b in &d.blocks {
            let path = format!("{prefix}{}", b.name);
            let info = if b.type_name == "Subsystem" {
                self.subsystem(b, &path, level, reg, depth)
            } else {
                self.library_block(b, &path, &scope, d, reg, depth)
            };
            self.blocks.insert(path, info);
        }
    }

    /// A subsystem: exported ports, kinds taken from the inner blocks they name.
    fn subsystem(
        &mut self,
        b: &BlockSpec,
        path: &str,
        level: &Level,
        reg: &Registry,
        depth: usize,
    ) -> BlockInfo {
        let mut ports = Vec::new();
        if let Some(inner) = &b.inner {
            let mut overrides = Scope::new();
            for (k, v) in &b.params {
                match level.evaluate(v, path) {
                    Some(val) => {
                        overrides.insert(k.clone(), val);
                    }
                    None => self.warnings.push(format!(
                        "{path}: parameter '{k}' does not resolve; its inner diagram is drawn with the default"
                    )),
                }
            }
            let inner_level = Level {
                params: inner.parameters.clone(),
                overrides,
            };
            let sub = format!("{path}.");
            self.walk(inner, &sub, &inner_level, reg, depth + 1);
            ports = self.exported(inner, &sub);
        }
        BlockInfo {
            ports,
            category: "subsystem".into(),
            inner: None,
        }
    }

    /// A library block: built from its resolved parameters (composites expanded).
    fn library_block(
        &mut self,
        b: &BlockSpec,
        path: &str,
        scope: &Scope,
        d: &Diagram,
        reg: &Registry,
        depth: usize,
    ) -> BlockInfo {
        let Some(t) = reg.get(&b.type_name) else {
            self.warnings.push(format!(
                "{path}: unknown block type '{}'; ports taken from its connections",
                b.type_name
            ));
            return BlockInfo {
                ports: ports_from_connections(d, &b.name),
                category: String::new(),
                inner: None,
            };
        };
        let category = t.category.to_string();
        let params = resolve_params(path, t.name, &t.params, &b.params, scope);
        let built = match (&t.build, params) {
            (BlockBuild::Primitive(f), Ok(p)) => f(&p)
                .map(|blk| (blk.declare().ports, None))
                .map_err(|e| e.to_string()),
            (BlockBuild::Composite(f), Ok(p)) => match f(&p) {
                Ok(inner) => {
                    let sub = format!("{path}.");
                    let level = Level {
                        params: inner.parameters.clone(),
                        overrides: Scope::new(),
                    };
                    self.walk(&inner, &sub, &level, reg, depth + 1);
                    Ok((self.exported(&inner, &sub), Some(inner)))
                }
                Err(e) => Err(e.to_string()),
            },
            (_, Err(es)) => Err(es
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")),
        };
        match built {
            Ok((ports, inner)) => BlockInfo {
                ports,
                category,
                inner,
            },
            Err(e) => {
                self.warnings.push(format!(
                    "{path}: {e}; ports taken from the {} type's example instance",
                    t.name
                ));
                let ports =
                    example_ports(t, path).unwrap_or_else(|| ports_from_connections(d, &b.name));
                BlockInfo {
                    ports,
                    category,
                    inner: None,
                }
            }
        }
    }

    /// The exported ports of an inner diagram whose blocks are in the table under `sub`.
    fn exported(&mut self, inner: &Diagram, sub: &str) -> Vec<PortDecl> {
        let mut ports = Vec::new();
        for (name, target) in &inner.ports {
            let kind = PortRef::parse(target).and_then(|r| {
                self.blocks
                    .get(&format!("{sub}{}", r.block))
                    .and_then(|i| i.ports.iter().find(|p| p.name == r.port))
                    .map(|p| p.kind)
            });
            match kind {
                Some(kind) => ports.push(PortDecl::new(name.clone(), kind)),
                None => self.warnings.push(format!(
                    "{}: exported port '{name}' names '{target}', which is not an inner port",
                    sub.trim_end_matches('.')
                )),
            }
        }
        ports
    }
}

/// The parameters of one diagram level and the overrides its parent block gives.
struct Level {
    params: Vec<(String, Value)>,
    overrides: Scope,
}

impl Level {
    fn scope(&self, ctx: &str) -> Option<Scope> {
        resolve_parameters(&self.params, &self.overrides, ctx).ok()
    }

    /// `v` evaluated in this level's scope: appended as one more parameter, so it sees
    /// every parameter of the level exactly as `compile` would.
    fn evaluate(&self, v: &Value, ctx: &str) -> Option<drivelink_core::compile::ScopeVal> {
        const TMP: &str = "\u{1}override";
        let mut params = self.params.clone();
        params.push((TMP.to_string(), v.clone()));
        resolve_parameters(&params, &self.overrides, ctx)
            .ok()
            .and_then(|mut s| s.remove(TMP))
    }
}

/// The declared ports of `t` built from its example parameters (every required parameter
/// an example value of its kind), when its own values do not build: `None` when that
/// does not build either (then the connections name the ports).
fn example_ports(t: &BlockType, path: &str) -> Option<Vec<PortDecl>> {
    let BlockBuild::Primitive(build) = &t.build else {
        return None;
    };
    let params = resolve_params(
        path,
        t.name,
        &t.params,
        &t.example_params(1.0),
        &Scope::new(),
    );
    let block = build(&params.ok()?).ok()?;
    Some(block.declare().ports)
}

/// The ports of `block` that the connections of `d` name, as signal inputs (the kind is
/// unknown), in order of first mention.
fn ports_from_connections(d: &Diagram, block: &str) -> Vec<PortDecl> {
    let mut ports: Vec<PortDecl> = Vec::new();
    for r in d
        .connections
        .iter()
        .flatten()
        .filter_map(|s| PortRef::parse(s))
    {
        if r.block == block && !ports.iter().any(|p| p.name == r.port) {
            ports.push(PortDecl::input(r.port));
        }
    }
    ports
}

#[cfg(test)]
mod tests {
    use super::*;
    use drivelink_core::block::PortKind;

    #[test]
    fn a_block_whose_values_do_not_build_is_drawn_with_its_example_instance_ports() {
        let reg = drivelink_blocks::registry();
        let t = reg.get("Clutch").expect("Clutch is registered");
        let ports = example_ports(t, "gearbox.c1").expect("the example builds");
        let kinds: Vec<(&str, PortKind)> =
            ports.iter().map(|p| (p.name.as_str(), p.kind)).collect();
        assert_eq!(
            kinds,
            [
                ("flange_a", PortKind::Rot),
                ("flange_b", PortKind::Rot),
                ("f", PortKind::In),
                ("heat", PortKind::Heat)
            ]
        );
    }
}
