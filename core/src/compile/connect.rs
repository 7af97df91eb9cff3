//! Pass 3, connect: every connection line resolved to block ports, checked (unknown
//! blocks and ports with "did you mean", kind mismatches, signal lines with zero or several
//! outputs, inputs driven twice or not at all), signal inputs given their driver, and
//! mechanical flanges joined into nodes by union-find, road ports joined into road lines
//! (one provider each, see [`crate::block::PortKind::Road`]).
//!
//! A reference that names a block's variable rather than a port (`car.r`: every variable
//! `drivelink blocks TYPE` lists) is a signal source like an output port: a *tap*
//! ([`TapAt`]), given a slot of its own by the layout and evaluated where its
//! [`crate::block::VarReads`] allows by the order pass.

use std::collections::HashMap;

use petgraph::unionfind::UnionFind;

use crate::block::{PortDecl, PortKind};
use crate::diagram::PortRef;
use crate::error::Error;
use crate::ids::{BlockIx, FrameIx, NodeIx};
use crate::suggest;

use super::CompileWarning;

/// A port of the flattened model: block and index in its port list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PortAt {
    pub block: BlockIx,
    pub port: usize,
}

/// A block variable wired as a signal source: the block and the variable's index in its
/// `BlockDecl::variables`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TapAt {
    pub block: BlockIx,
    pub var: usize,
}

/// What drives a signal input: an output port or a tap (an index into [`Wiring::taps`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Src {
    Port(PortAt),
    Tap(usize),
}

/// One end of a connection line as written: a port, or a variable of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Port(PortAt),
    Var(TapAt),
}

/// A mechanical node: its display name (first flange joined), kind and flanges.
#[derive(Debug, Clone)]
pub(crate) struct NodeInfo {
    pub name: String,
    pub kind: PortKind,
    pub ports: Vec<PortAt>,
}

/// A thermal node: the heat ports joined by one connection line.
#[derive(Debug, Clone)]
pub(crate) struct HeatNodeInfo {
    pub name: String,
    pub ports: Vec<PortAt>,
}

/// The wiring of a flattened model.
pub(crate) struct Wiring {
    /// Ports of every block.
    pub ports: Vec<Vec<PortDecl>>,
    /// Driver (output port or tap) of every signal input, `None` for an unconnected
    /// optional input.
    pub driver: Vec<Vec<Option<Src>>>,
    /// The block variables wired as signal sources, each once.
    pub taps: Vec<TapAt>,
    /// Node of every mechanical port (`None` for signal ports).
    pub node: Vec<Vec<Option<NodeIx>>>,
    /// The mechanical nodes.
    pub nodes: Vec<NodeInfo>,
    /// Rigid body of every frame port (`None` for other ports).
    pub frame_of: Vec<Vec<Option<FrameIx>>>,
    /// The rigid bodies (lines of frame ports).
    pub frames: Vec<NodeInfo>,
    /// Thermal node of every heat port (`None` for other ports and unconnected heat ports).
    pub heat_node: Vec<Vec<Option<u32>>>,
    /// The thermal nodes.
    pub heat_nodes: Vec<HeatNodeInfo>,
    /// Road links: (provider, consumer) for every connected consumer road port.
    pub roads: Vec<(PortAt, PortAt)>,
}

/// Numbering of all ports of all blocks in one flat range.
struct PortSpace {
    base: Vec<usize>,
    total: usize,
}

impl PortSpace {
    fn new(ports: &[Vec<PortDecl>]) -> Self {
        let mut base = Vec::with_capacity(ports.len());
        let mut total = 0;
        for p in ports {
            base.push(total);
            total += p.len();
        }
        PortSpace { base, total }
    }
    fn global(&self, at: PortAt) -> usize {
        self.base[at.block.ix()] + at.port
    }
}

fn domain(k: PortKind) -> u8 {
    match k {
        PortKind::In | PortKind::Out => 0,
        PortKind::Rot => 1,
        PortKind::Trans => 2,
        PortKind::Frame => 3,
        PortKind::Heat => 4,
        PortKind::Road => 5,
    }
}

/// Resolve one connection's references, pushing an error for each bad one.
#[allow(clippy::too_many_arguments)]
fn resolve_refs<'a>(
    ci: usize,
    conn: &'a [String],
    by_name: &HashMap<&str, usize>,
    names: &[String],
    types: &[&str],
    ports: &[Vec<PortDecl>],
    vars: &[Vec<String>],
    errors: &mut Vec<Error>,
) -> Option<Vec<(End, &'a str)>> {
    let mut resolved = Vec::with_capacity(conn.len());
    let mut ok = true;
    for text in conn {
        let Some(pr) = PortRef::parse(text) else {
            errors.push(Error::BadPortRef {
                connection: ci,
                text: text.clone(),
            });
            ok = false;
            continue;
        };
        let Some(&b) = by_name.get(pr.block.as_str()) else {
            errors.push(Error::UnknownBlock {
                connection: ci,
                block: pr.block.clone(),
                hint: suggest::hint(&pr.block, names.iter().map(String::as_str)),
            });
            ok = false;
            continue;
        };
        if let Some(p) = ports[b].iter().position(|p| p.name == pr.port) {
            let at = PortAt {
                block: BlockIx::at(b),
                port: p,
            };
            resolved.push((End::Port(at), text.as_str()));
            continue;
        }
        if let Some(v) = vars[b].iter().position(|v| *v == pr.port) {
            let at = TapAt {
                block: BlockIx::at(b),
                var: v,
            };
            resolved.push((End::Var(at), text.as_str()));
            continue;
        }
        let names_of_block = ports[b]
            .iter()
            .map(|p| p.name.as_str())
            .chain(vars[b].iter().map(String::as_str));
        errors.push(Error::UnknownPort {
            connection: ci,
            block: pr.block.clone(),
            type_name: types[b].to_string(),
            port: pr.port.clone(),
            hint: suggest::hint(&pr.port, names_of_block),
            ports: crate::params::port_summary(&ports[b]),
        });
        ok = false;
    }
    ok.then_some(resolved)
}

/// Connect the ports of `names`/`ports` along `connections` (flat names); `vars` are the
/// names of each block's variables (`BlockDecl::variables`, in order), which a connection
/// may name as signal sources. Collects every error; warnings (unconnected mechanical
/// ports) go to `warnings`.
pub(crate) fn connect(
    names: &[String],
    types: &[&str],
    ports: Vec<Vec<PortDecl>>,
    vars: &[Vec<String>],
    connections: &[Vec<String>],
    warnings: &mut Vec<CompileWarning>,
) -> Result<Wiring, Error> {
    let space = PortSpace::new(&ports);
    let by_name: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut uf: UnionFind<usize> = UnionFind::new(space.total);
    let mut connected = vec![false; space.total];
    let mut signals = Signals {
        taps: Vec::new(),
        drives: ports.iter().map(|p| vec![false; p.len()]).collect(),
        driver: ports.iter().map(|p| vec![None; p.len()]).collect(),
    };
    let mut errors = Vec::new();
    for (ci, conn) in connections.iter().enumerate() {
        if conn.len() < 2 {
            errors.push(Error::ShortConnection {
                connection: ci,
                count: conn.len(),
            });
            continue;
        }
        let Some(resolved) =
            resolve_refs(ci, conn, &by_name, names, types, &ports, vars, &mut errors)
        else {
            continue;
        };
        // A variable drives a signal line like an output port.
        let kind = |e: End| match e {
            End::Port(at) => ports[at.block.ix()][at.port].kind,
            End::Var(_) => PortKind::Out,
        };
        let k0 = kind(resolved[0].0);
        if resolved.iter().any(|r| domain(kind(r.0)) != domain(k0)) {
            errors.push(Error::KindMismatch {
                connection: ci,
                details: resolved
                    .iter()
                    .map(|r| format!("{} [{}]", r.1, kind(r.0).as_str()))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
            continue;
        }
        let port_ends: Vec<PortAt> = resolved
            .iter()
            .filter_map(|r| match r.0 {
                End::Port(at) => Some(at),
                End::Var(_) => None,
            })
            .collect();
        for &at in &port_ends {
            connected[space.global(at)] = true;
        }
        if k0.is_mech() || k0.is_heat() || k0 == PortKind::Road {
            let g0 = space.global(port_ends[0]);
            for &at in &port_ends {
                uf.union(g0, space.global(at));
            }
            continue;
        }
        wire_signal_line(
            ci,
            &resolved,
            &port_ends,
            &kind,
            names,
            &ports,
            &mut signals,
            &mut errors,
        );
    }
    check_ports(
        names,
        &ports,
        &Coverage {
            space: &space,
            connected: &connected,
            drives: &signals.drives,
            driver: &signals.driver,
        },
        &mut errors,
        warnings,
    );
    let roads = road_links(names, &ports, &space, &mut uf, &connected, &mut errors);
    Error::from_list(errors)?;
    let (node, nodes) = number_nodes(names, &ports, &space, &mut uf, false, &connected);
    let (frame_of, frames) = number_nodes(names, &ports, &space, &mut uf, true, &connected);
    let frame_of = frame_of
        .into_iter()
        .map(|r| r.into_iter().map(|n| n.map(|n| FrameIx(n.0))).collect())
        .collect();
    let (heat_node, heat_nodes) = number_heat_nodes(names, &ports, &space, &mut uf, &connected);
    Ok(Wiring {
        frame_of,
        frames,
        driver: signals
            .driver
            .into_iter()
            .map(|v| v.into_iter().map(|d| d.map(|(src, _)| src)).collect())
            .collect(),
        taps: signals.taps,
        ports,
        node,
        nodes,
        heat_node,
        heat_nodes,
        roads,
    })
}

/// What the signal lines build: the variables wired as sources, which outputs drive an
/// input, and each input's driver with the line that set it.
struct Signals {
    taps: Vec<TapAt>,
    drives: Vec<Vec<bool>>,
    driver: Vec<Vec<Option<(Src, usize)>>>,
}

/// Line `ci` of signal ports (`resolved`, of which `port_ends` are ports): exactly one
/// output or variable drives every input on it, each input driven once.
#[allow(clippy::too_many_arguments)]
fn wire_signal_line(
    ci: usize,
    resolved: &[(End, &str)],
    port_ends: &[PortAt],
    kind: &dyn Fn(End) -> PortKind,
    names: &[String],
    ports: &[Vec<PortDecl>],
    st: &mut Signals,
    errors: &mut Vec<Error>,
) {
    let outs: Vec<End> = resolved
        .iter()
        .map(|r| r.0)
        .filter(|&e| kind(e) == PortKind::Out)
        .collect();
    if outs.len() != 1 {
        errors.push(Error::SignalDrivers {
            connection: ci,
            outputs: outs.len(),
            details: resolved
                .iter()
                .map(|r| format!("{} [{}]", r.1, kind(r.0).as_str()))
                .collect::<Vec<_>>()
                .join(", "),
        });
        return;
    }
    let src = match outs[0] {
        End::Port(at) => Src::Port(at),
        End::Var(tap) => Src::Tap(match st.taps.iter().position(|&t| t == tap) {
            Some(k) => k,
            None => {
                st.taps.push(tap);
                st.taps.len() - 1
            }
        }),
    };
    if let End::Port(at) = outs[0] {
        if port_ends
            .iter()
            .any(|&p| kind(End::Port(p)) == PortKind::In)
        {
            st.drives[at.block.ix()][at.port] = true;
        }
    }
    for &at in port_ends {
        if kind(End::Port(at)) != PortKind::In {
            continue;
        }
        let slot = &mut st.driver[at.block.ix()][at.port];
        if let Some((_, first)) = *slot {
            errors.push(Error::TwoDrivers {
                block: names[at.block.ix()].clone(),
                port: ports[at.block.ix()][at.port].name.clone(),
                first,
                second: ci,
            });
        } else {
            *slot = Some((src, ci));
        }
    }
}

/// What the connection lines reached: per port whether it is on a line, per output
/// whether it drives an input, per input its driver and the line that set it.
struct Coverage<'a> {
    space: &'a PortSpace,
    connected: &'a [bool],
    drives: &'a [Vec<bool>],
    driver: &'a [Vec<Option<(Src, usize)>>],
}

/// The errors and warnings about ports the lines left as they were: an output that must
/// drive an input and drives none, an undriven input without a default, an unconnected
/// flange or heat port that may not stay so.
fn check_ports(
    names: &[String],
    ports: &[Vec<PortDecl>],
    cov: &Coverage,
    errors: &mut Vec<Error>,
    warnings: &mut Vec<CompileWarning>,
) {
    for (b, bp) in ports.iter().enumerate() {
        for (p, decl) in bp.iter().enumerate() {
            if let (PortKind::Out, Some(why), false) =
                (decl.kind, decl.must_drive, cov.drives[b][p])
            {
                errors.push(Error::UnusedOutput {
                    block: names[b].clone(),
                    port: decl.name.clone(),
                    why,
                });
            }
            if decl.kind == PortKind::In && cov.driver[b][p].is_none() && decl.default.is_none() {
                errors.push(Error::UndrivenInput {
                    block: names[b].clone(),
                    port: decl.name.clone(),
                });
            }
            if decl.kind.is_mech()
                && decl.kind != PortKind::Frame
                && !decl.free_ok
                && !decl.optional
                && !cov.connected[cov.space.base[b] + p]
            {
                warnings.push(CompileWarning::UnconnectedFlange {
                    block: names[b].clone(),
                    port: decl.name.clone(),
                });
            }
            if decl.kind.is_heat() && !decl.optional && !cov.connected[cov.space.base[b] + p] {
                warnings.push(CompileWarning::UnconnectedHeatPort {
                    block: names[b].clone(),
                    port: decl.name.clone(),
                });
            }
        }
    }
}

/// The road lines (union-find classes of connected road ports): each needs exactly one
/// provider (a non-optional road port); every optional road port on it is a consumer
/// linked to that provider. A wrong count is an error naming the line's ports.
fn road_links(
    names: &[String],
    ports: &[Vec<PortDecl>],
    space: &PortSpace,
    uf: &mut UnionFind<usize>,
    connected: &[bool],
    errors: &mut Vec<Error>,
) -> Vec<(PortAt, PortAt)> {
    let mut lines: Vec<(usize, Vec<PortAt>)> = Vec::new();
    for (b, bp) in ports.iter().enumerate() {
        for (p, decl) in bp.iter().enumerate() {
            let g = space.base[b] + p;
            if decl.kind != PortKind::Road || !connected[g] {
                continue;
            }
            let root = uf.find_mut(g);
            let at = PortAt {
                block: BlockIx::at(b),
                port: p,
            };
            match lines.iter_mut().find(|l| l.0 == root) {
                Some(l) => l.1.push(at),
                None => lines.push((root, vec![at])),
            }
        }
    }
    let decl = |at: &PortAt| &ports[at.block.ix()][at.port];
    let mut links = Vec::new();
    for (_, line) in lines {
        let providers: Vec<PortAt> = line.iter().copied().filter(|a| !decl(a).optional).collect();
        if providers.len() != 1 {
            errors.push(Error::RoadProviders {
                ports: line
                    .iter()
                    .map(|a| {
                        let role = if decl(a).optional {
                            "road"
                        } else {
                            "road provider"
                        };
                        format!("{}.{} [{role}]", names[a.block.ix()], decl(a).name)
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                providers: providers.len(),
            });
            continue;
        }
        links.extend(
            line.iter()
                .filter(|a| decl(a).optional)
                .map(|&c| (providers[0], c)),
        );
    }
    links
}

/// Number the union-find classes of mechanical ports as nodes, in order of first port:
/// the shaft/body nodes of `rot`/`trans` ports, or (`frames`) the rigid bodies of `frame`
/// ports. An unconnected optional flange (a support) has no node: it is the ground.
fn number_nodes(
    names: &[String],
    ports: &[Vec<PortDecl>],
    space: &PortSpace,
    uf: &mut UnionFind<usize>,
    frames: bool,
    connected: &[bool],
) -> (Vec<Vec<Option<NodeIx>>>, Vec<NodeInfo>) {
    let mut node_of_root: HashMap<usize, NodeIx> = HashMap::new();
    let mut nodes: Vec<NodeInfo> = Vec::new();
    let mut node = Vec::with_capacity(ports.len());
    for (b, bp) in ports.iter().enumerate() {
        let mut row = Vec::with_capacity(bp.len());
        for (p, decl) in bp.iter().enumerate() {
            let g = space.base[b] + p;
            if !decl.kind.is_mech()
                || (decl.kind == PortKind::Frame) != frames
                || (decl.optional && !connected[g])
            {
                row.push(None);
                continue;
            }
            let root = uf.find_mut(g);
            let id = *node_of_root.entry(root).or_insert_with(|| {
                nodes.push(NodeInfo {
                    name: format!("{}.{}", names[b], decl.name),
                    kind: decl.kind,
                    ports: Vec::new(),
                });
                NodeIx::at(nodes.len() - 1)
            });
            nodes[id.ix()].ports.push(PortAt {
                block: BlockIx::at(b),
                port: p,
            });
            row.push(Some(id));
        }
        node.push(row);
    }
    (node, nodes)
}

/// Number the union-find classes of heat ports as thermal nodes, in order of first port.
/// An unconnected optional heat port has no node.
fn number_heat_nodes(
    names: &[String],
    ports: &[Vec<PortDecl>],
    space: &PortSpace,
    uf: &mut UnionFind<usize>,
    connected: &[bool],
) -> (Vec<Vec<Option<u32>>>, Vec<HeatNodeInfo>) {
    let mut node_of_root: HashMap<usize, u32> = HashMap::new();
    let mut nodes: Vec<HeatNodeInfo> = Vec::new();
    let mut node = Vec::with_capacity(ports.len());
    for (b, bp) in ports.iter().enumerate() {
        let mut row = Vec::with_capacity(bp.len());
        for (p, decl) in bp.iter().enumerate() {
            let g = space.base[b] + p;
            if !decl.kind.is_heat() || (decl.optional && !connected[g]) {
                row.push(None);
                continue;
            }
            let root = uf.find_mut(g);
            let id = *node_of_root.entry(root).or_insert_with(|| {
                nodes.push(HeatNodeInfo {
                    name: format!("{}.{}", names[b], decl.name),
                    ports: Vec::new(),
                });
                (nodes.len() - 1) as u32
            });
            nodes[id as usize].ports.push(PortAt {
                block: BlockIx::at(b),
                port: p,
            });
            row.push(Some(id));
        }
        node.push(row);
    }
    (node, nodes)
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{signal, Wired};
    use super::Src;
    use crate::block::{BlockDecl, PortDecl};
    use crate::warning::CompileWarning;

    #[test]
    fn a_line_joins_an_output_to_every_input_on_it() {
        let w = Wired::new(
            vec![
                ("src", signal(&[], &["y"])),
                ("a", signal(&["u"], &[])),
                ("b", signal(&["u"], &[])),
            ],
            &[&["a.u", "src.y", "b.u"]],
        );
        for reader in ["a", "b"] {
            match w.wiring.driver[w.ix(reader)][0] {
                Some(Src::Port(at)) => {
                    assert_eq!((at.block.ix(), at.port), (w.ix("src"), 0), "{reader}")
                }
                other => panic!("{reader}.u driven by {other:?}"),
            }
        }
    }

    #[test]
    fn an_unconnected_flange_is_a_warning_unless_the_block_declares_it_may_be() {
        let flange = |free: bool| {
            let p = PortDecl::rot("flange");
            BlockDecl::ports(vec![if free { p.free_ok() } else { p }])
        };
        let w = Wired::new(vec![("hub", flange(true)), ("shaft", flange(false))], &[]);
        assert_eq!(w.wiring.nodes.len(), 2, "each flange is a node of its own");
        assert_eq!(w.warnings.len(), 1, "{:?}", w.warnings);
        assert!(matches!(
            &w.warnings[0],
            CompileWarning::UnconnectedFlange { block, port } if block == "shaft" && port == "flange"
        ));
    }
}
