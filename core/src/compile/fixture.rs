//! Test fixture of the compile passes: blocks given as hand-written [`BlockDecl`]s (no
//! block is built), wired by `connect` from connection lines as a netlist writes them, so
//! each pass is tested on the declarations alone.

use crate::block::{BlockDecl, PortDecl};
use crate::warning::CompileWarning;

use super::connect::{connect, Wiring};
use super::layout::{layout, Layout};

/// Named declarations wired by connection lines.
pub(crate) struct Wired {
    pub names: Vec<String>,
    pub types: Vec<&'static str>,
    pub decls: Vec<BlockDecl>,
    pub wiring: Wiring,
    pub warnings: Vec<CompileWarning>,
}

impl Wired {
    /// Connect `blocks` (name, declaration) with `lines` (`["a.y", "b.u"]`, ...).
    pub fn new(blocks: Vec<(&str, BlockDecl)>, lines: &[&[&str]]) -> Wired {
        let names: Vec<String> = blocks.iter().map(|(n, _)| n.to_string()).collect();
        let types = vec!["Test"; blocks.len()];
        let decls: Vec<BlockDecl> = blocks.into_iter().map(|(_, d)| d).collect();
        let ports = decls.iter().map(|d| d.ports.clone()).collect();
        let vars: Vec<Vec<String>> = decls
            .iter()
            .map(|d| d.variables.iter().map(|v| v.name.clone()).collect())
            .collect();
        let lines: Vec<Vec<String>> = lines
            .iter()
            .map(|l| l.iter().map(|s| s.to_string()).collect())
            .collect();
        let mut warnings = Vec::new();
        let wiring = connect(&names, &types, ports, &vars, &lines, &mut warnings)
            .expect("the fixture's lines connect");
        Wired {
            names,
            types,
            decls,
            wiring,
            warnings,
        }
    }
    /// The layout pass over the wired blocks.
    pub fn layout(&self) -> Layout {
        layout(&self.names, &self.types, &self.decls, &self.wiring)
    }
    /// Index of block `name`.
    pub fn ix(&self, name: &str) -> usize {
        self.names
            .iter()
            .position(|n| n == name)
            .expect("a block of the fixture")
    }
}

/// A signal block with inputs `ins` and outputs `outs`, everything else default.
pub(crate) fn signal(ins: &[&str], outs: &[&str]) -> BlockDecl {
    let mut ports: Vec<PortDecl> = ins.iter().map(|n| PortDecl::input(*n)).collect();
    ports.extend(outs.iter().map(|n| PortDecl::output(*n)));
    BlockDecl::ports(ports)
}
