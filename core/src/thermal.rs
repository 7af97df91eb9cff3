//! The thermal network: heat ports joined into thermal nodes, heat capacities, fixed
//! temperatures, conductors, and the loss power of mechanical blocks.
//!
//! # Design
//!
//! A heat port carries a temperature `T` (K) and a heat flow `Q` (W, positive into the
//! port's node). Connected heat ports form a thermal node (union-find, like mechanical
//! flanges; a separate domain). Every node is one of three kinds, decided by the blocks'
//! [`ThermalDecl`]s at compile time:
//!
//! - **fixed**: some block fixes its temperature (`FixedTemperature`, an ambient). Heat
//!   flowing into it leaves the model; the energy audit integrates it ("to ambient").
//! - **capacitive**: it has a heat capacity `C > 0` (`HeatCapacitor`, summed over the
//!   node). Its temperature is a continuous state: `C·dT/dt = Σ Q_in`.
//! - **without capacity** (algebraic): its heat flows balance at every instant,
//!   `Σ G_e·(T_other − T) + Q = 0`. These temperatures are the solution of a small linear
//!   system (the conductance Laplacian restricted to such nodes), solved per evaluation
//!   after the mechanical network, because the loss powers feeding it are known only then.
//!   Every such node must reach a fixed or capacitive node through conductors, otherwise
//!   its temperature is undefined: a compile error names the nodes.
//!
//! Conductors (`ThermalConductor`, `Convection`) are declared structurally (which nodes
//! they join) with a conductance given per evaluation (a parameter or a signal input).
//!
//! Blocks with an optional heat port (friction elements, dampers, lossy gears) add their
//! loss power through [`crate::block::Block::heat_flows`]; an unconnected optional heat
//! port has no node and its heat is not modelled (Modelica's `useHeatPort = false`: the
//! loss is still in the mechanical energy audit).
//!
//! A block that reads a temperature *before* the mechanical solve (a torque that depends
//! on a resistance, `EddyCurrentBrake`) declares the port in
//! [`ThermalDecl::reads_temperature`]; its node must then be fixed or capacitive (an
//! algebraic node would make the torque depend on its own loss within one evaluation: an
//! algebraic loop, refused at compile time with the node's name).
//!
//! State layout (after the mechanical work integrals): the temperatures of the capacitive
//! nodes, then per fixed node the heat it received, then the total heat the blocks
//! delivered to connected heat ports.

use crate::block::{BlockDecl, ThermalDecl};
use crate::error::Error;
use crate::ids::{BlockIx, StateIx};

/// What decides a thermal node's temperature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeatNodeKind {
    /// Fixed by a block; `slot` numbers the fixed nodes (their heat integrals).
    Fixed { slot: usize },
    /// A heat capacity: the temperature is the state `state`.
    Capacitive { state: StateIx },
    /// No capacity: solved from the heat balance; `k` numbers these nodes.
    Algebraic { k: usize },
}

/// A thermal node of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeatNodePlan {
    pub name: String,
    pub kind: HeatNodeKind,
}

/// A conductor between two thermal nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConductorPlan {
    pub block: BlockIx,
    /// Index of the conductor within its block.
    pub k: usize,
    /// Nodes: heat flows `G·(T_a − T_b)` from `a` to `b`.
    pub a: usize,
    pub b: usize,
}

/// The structure of the thermal network of a plan.
#[derive(Debug, Clone, Default)]
pub(crate) struct ThermalPlan {
    pub nodes: Vec<HeatNodePlan>,
    pub conductors: Vec<ConductorPlan>,
    /// Blocks whose `heat_flows` is called (a connected heat port and declared flows).
    pub heat_blocks: Vec<BlockIx>,
    /// Number of nodes without capacity.
    pub n_alg: usize,
    /// First state of the fixed nodes' heat integrals.
    pub x_fixed: usize,
    /// The state integrating the heat blocks deliver (when there are thermal nodes).
    pub x_injected: Option<StateIx>,
}

/// Build the thermal plan. `heat_node[b][p]` is the thermal node of port `p` of block `b`;
/// states are numbered from `x_off`. Returns the plan and the next free state index.
pub(crate) fn plan(
    names: &[String],
    blocks: &[BlockDecl],
    heat_node: &[Vec<Option<u32>>],
    node_names: Vec<String>,
    x_off: usize,
) -> Result<(ThermalPlan, usize), Error> {
    let n = node_names.len();
    if n == 0 {
        return Ok((ThermalPlan::default(), x_off));
    }
    let decls: Vec<&ThermalDecl> = blocks.iter().map(|b| &b.thermal).collect();
    let node_of = |b: usize, p: usize| heat_node[b].get(p).copied().flatten();
    let mut fixed = vec![false; n];
    let mut cap = vec![false; n];
    let mut conductors = Vec::new();
    let mut heat_blocks = Vec::new();
    for (b, d) in decls.iter().enumerate() {
        for &(p, _) in &d.fixed {
            if let Some(k) = node_of(b, p) {
                fixed[k as usize] = true;
            }
        }
        for &(p, _, _) in &d.capacities {
            if let Some(k) = node_of(b, p) {
                cap[k as usize] = true;
            }
        }
        for (k, &(pa, pb)) in d.conductors.iter().enumerate() {
            if let (Some(a), Some(bn)) = (node_of(b, pa), node_of(b, pb)) {
                conductors.push(ConductorPlan {
                    block: BlockIx::at(b),
                    k,
                    a: a as usize,
                    b: bn as usize,
                });
            }
        }
        if d.has_heat_flows && heat_node[b].iter().any(Option::is_some) {
            heat_blocks.push(BlockIx::at(b));
        }
    }
    // Nodes without capacity must reach a fixed or capacitive node through conductors.
    let mut reached: Vec<bool> = (0..n).map(|i| fixed[i] || cap[i]).collect();
    loop {
        let mut grew = false;
        for c in &conductors {
            if reached[c.a] != reached[c.b] {
                reached[c.a] = true;
                reached[c.b] = true;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    let mut errors = Vec::new();
    let isolated: Vec<String> = (0..n)
        .filter(|&i| !reached[i])
        .map(|i| node_names[i].clone())
        .collect();
    if !isolated.is_empty() {
        errors.push(Error::IsolatedHeatNodes { nodes: isolated });
    }
    for (b, d) in decls.iter().enumerate() {
        for &p in &d.reads_temperature {
            if let Some(k) = node_of(b, p) {
                if !fixed[k as usize] && !cap[k as usize] {
                    errors.push(Error::TemperatureWithoutCapacity {
                        block: names[b].clone(),
                        port: blocks[b]
                            .ports
                            .get(p)
                            .map(|d| d.name.clone())
                            .unwrap_or_default(),
                        node: node_names[k as usize].clone(),
                    });
                }
            }
        }
    }
    Error::from_list(errors)?;
    let mut x = x_off;
    let mut n_alg = 0;
    let mut nodes = Vec::with_capacity(n);
    let mut n_fixed = 0;
    for (i, name) in node_names.into_iter().enumerate() {
        let kind = if fixed[i] {
            n_fixed += 1;
            HeatNodeKind::Fixed { slot: n_fixed - 1 }
        } else if cap[i] {
            x += 1;
            HeatNodeKind::Capacitive {
                state: StateIx::at(x - 1),
            }
        } else {
            n_alg += 1;
            HeatNodeKind::Algebraic { k: n_alg - 1 }
        };
        nodes.push(HeatNodePlan { name, kind });
    }
    let x_fixed = x;
    x += n_fixed;
    let x_injected = Some(StateIx::at(x));
    x += 1;
    Ok((
        ThermalPlan {
            nodes,
            conductors,
            heat_blocks,
            n_alg,
            x_fixed,
            x_injected,
        },
        x,
    ))
}

/// Solve `A·y = b` in place for a small dense `n×n` system (row-major `a`), Gaussian
/// elimination with partial pivoting. Returns false when a pivot is not larger than
/// `1e-14·max|A|` (singular). Allocation-free.
pub(crate) fn solve_dense(a: &mut [f64], b: &mut [f64], n: usize) -> bool {
    if n == 1 {
        solve_one(a, b)
    } else {
        eliminate(a, b, n)
    }
}

/// [`solve_dense`] of a 1×1 system (one sliding gear with mesh losses: the common case),
/// the elimination's operations without its loops: the same test, the same quotient.
#[inline]
fn solve_one(a: &mut [f64], b: &mut [f64]) -> bool {
    let scale = 0.0_f64.max(a[0].abs()).max(1e-300);
    if a[0].abs() <= 1e-14 * scale {
        return false;
    }
    b[0] /= a[0];
    true
}

/// [`solve_dense`] by Gaussian elimination with partial pivoting.
fn eliminate(a: &mut [f64], b: &mut [f64], n: usize) -> bool {
    let scale = a.iter().fold(0.0_f64, |m, v| m.max(v.abs())).max(1e-300);
    for c in 0..n {
        let mut p = c;
        for r in c + 1..n {
            if a[r * n + c].abs() > a[p * n + c].abs() {
                p = r;
            }
        }
        if a[p * n + c].abs() <= 1e-14 * scale {
            return false;
        }
        if p != c {
            for k in 0..n {
                a.swap(c * n + k, p * n + k);
            }
            b.swap(c, p);
        }
        let piv = a[c * n + c];
        for r in c + 1..n {
            let f = a[r * n + c] / piv;
            if f != 0.0 {
                for k in c..n {
                    a[r * n + k] -= f * a[c * n + k];
                }
                b[r] -= f * b[c];
            }
        }
    }
    for c in (0..n).rev() {
        let mut s = b[c];
        for k in c + 1..n {
            s -= a[c * n + k] * b[k];
        }
        b[c] = s / a[c * n + c];
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_solve_matches_hand_solution_and_detects_singularity() {
        // 2x + y = 5, x + 3y = 10 -> x = 1, y = 3.
        let mut a = [2.0, 1.0, 1.0, 3.0];
        let mut b = [5.0, 10.0];
        assert!(solve_dense(&mut a, &mut b, 2));
        assert!((b[0] - 1.0).abs() < 1e-15 && (b[1] - 3.0).abs() < 1e-15);
        // A zero first pivot needs the row swap.
        let mut a = [0.0, 1.0, 1.0, 0.0];
        let mut b = [2.0, 3.0];
        assert!(solve_dense(&mut a, &mut b, 2));
        assert_eq!(b, [3.0, 2.0]);
        let mut s = [1.0, 2.0, 2.0, 4.0];
        let mut b = [1.0, 2.0];
        assert!(!solve_dense(&mut s, &mut b, 2));
    }

    #[test]
    fn a_one_by_one_system_solves_to_the_bits_of_the_elimination() {
        let values = [
            3.0,
            -0.7,
            1e-300,
            5e-324,
            0.0,
            -0.0,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for &a0 in &values {
            for &b0 in &values {
                let (mut a1, mut b1) = ([a0], [b0]);
                let (mut a2, mut b2) = ([a0], [b0]);
                let one = solve_one(&mut a1, &mut b1);
                let general = eliminate(&mut a2, &mut b2, 1);
                assert_eq!(one, general, "a = {a0}, b = {b0}");
                if one {
                    assert_eq!(b1[0].to_bits(), b2[0].to_bits(), "a = {a0}, b = {b0}");
                }
            }
        }
        // The quotient, and a zero coefficient is singular.
        let mut b = [6.0];
        assert!(solve_dense(&mut [4.0], &mut b, 1));
        assert_eq!(b, [1.5]);
        assert!(!solve_dense(&mut [0.0], &mut [1.0], 1));
    }
}
