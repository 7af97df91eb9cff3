//! The thermal network in the evaluation (see [`crate::thermal`] for the design):
//! temperatures of capacitive and fixed nodes before the stages, loss heat from the blocks
//! and the temperatures of nodes without capacity after them, derivatives of the
//! capacitive nodes and the heat integrals, the stored heat for the energy audit.

use crate::block::{BlockDecl, Buffers, Cx, HeatFlows};
use crate::error::Error;
use crate::plan::Plan;
use crate::thermal::{solve_dense, HeatNodeKind};

use super::eval::{buffers, cx_of};
use super::Model;

/// Run-time values and scratch of the thermal network.
#[derive(Debug, Clone, Default)]
pub(super) struct Heat {
    /// Temperature of every node, K.
    pub temp: Vec<f64>,
    /// Heat flow into every node from blocks, W.
    q: Vec<f64>,
    /// Conductance of every conductor, W/K.
    g: Vec<f64>,
    /// Heat capacity of every node (0 unless capacitive), J/K.
    cap: Vec<f64>,
    /// Fixed temperature of every node (NaN unless fixed), K.
    fixed: Vec<f64>,
    /// Net heat flow into every node (capacitive: `C·dT/dt`; fixed: what leaves the model).
    net_in: Vec<f64>,
    /// Heat the blocks delivered to connected ports at this evaluation, W.
    injected: f64,
    /// Dense system of the nodes without capacity.
    mat: Vec<f64>,
    rhs: Vec<f64>,
}

/// The most thermal nodes without a heat capacity (algebraic: their temperatures are
/// solved together, densely, at every evaluation: O(n²) memory, O(n³) time). 20,000 of
/// them asked for 3.2 GB and ran for minutes without finishing 10 ms.
pub const MAX_ALGEBRAIC_HEAT_NODES: usize = 500;

impl Heat {
    /// Values from the blocks' declarations; initial temperatures into `x0`.
    pub(super) fn build(plan: &Plan, decls: &[BlockDecl], x0: &mut [f64]) -> Result<Heat, Error> {
        let tp = &plan.thermal;
        let n = tp.nodes.len();
        if tp.n_alg > MAX_ALGEBRAIC_HEAT_NODES {
            return Err(Error::Netlist {
                file: plan.name.clone(),
                path: "connections".into(),
                message: format!(
                    "{} thermal nodes have no heat capacity; at most {MAX_ALGEBRAIC_HEAT_NODES} \
                     may (their temperatures are solved together, densely, at every \
                     evaluation): give nodes a HeatCapacitor, or use fewer conductors",
                    tp.n_alg
                ),
            });
        }
        let mut h = Heat {
            temp: vec![0.0; n],
            q: vec![0.0; n],
            g: vec![0.0; tp.conductors.len()],
            cap: vec![0.0; n],
            fixed: vec![f64::NAN; n],
            net_in: vec![0.0; n],
            injected: 0.0,
            mat: vec![0.0; tp.n_alg * tp.n_alg],
            rhs: vec![0.0; tp.n_alg],
        };
        if n == 0 {
            return Ok(h);
        }
        let mut t0: Vec<Option<(f64, usize)>> = vec![None; n];
        let mut fixed_by: Vec<Option<usize>> = vec![None; n];
        let mut errors = Vec::new();
        let conflict = |k: usize, what: &str, first: f64, second: f64, b0: usize, b1: usize| {
            Error::ConflictingTemperature {
                node: tp.nodes[k].name.clone(),
                what: what.to_string(),
                first,
                second,
                blocks: format!("{} and {}", plan.blocks[b0].name, plan.blocks[b1].name),
            }
        };
        for (b, blk) in decls.iter().enumerate() {
            let bp = &plan.blocks[b];
            let node = |p: usize| {
                let d = plan.port_dof[bp.port_tab.start + p];
                (d != u32::MAX).then_some(d as usize)
            };
            let d = &blk.thermal;
            for &(p, c, t) in &d.capacities {
                let Some(k) = node(p) else { continue };
                h.cap[k] += c;
                match t0[k] {
                    Some((t_old, b_old)) if t_old != t => {
                        errors.push(conflict(k, "initial temperatures", t_old, t, b_old, b))
                    }
                    _ => t0[k] = Some((t, b)),
                }
            }
            for &(p, t) in &d.fixed {
                let Some(k) = node(p) else { continue };
                if let Some(b_old) = fixed_by[k] {
                    if h.fixed[k] != t {
                        errors.push(conflict(k, "fixed temperatures", h.fixed[k], t, b_old, b));
                    }
                }
                h.fixed[k] = t;
                fixed_by[k] = Some(b);
            }
        }
        Error::from_list(errors)?;
        for (k, nd) in tp.nodes.iter().enumerate() {
            match nd.kind {
                HeatNodeKind::Capacitive { state } => {
                    x0[state.ix()] = t0[k].map(|v| v.0).unwrap_or(293.15);
                    h.temp[k] = x0[state.ix()];
                }
                HeatNodeKind::Fixed { .. } => h.temp[k] = h.fixed[k],
                HeatNodeKind::Algebraic { .. } => {}
            }
        }
        Ok(h)
    }

    /// Heat capacity of node `k`, J/K.
    pub(super) fn capacity(&self, k: usize) -> f64 {
        self.cap[k]
    }
}

impl Model {
    /// Temperatures known before the stages: capacitive nodes from the state, fixed nodes.
    pub(super) fn heat_pre(&mut self, x: &[f64]) {
        if self.plan.thermal.nodes.is_empty() {
            return;
        }
        let plan = self.plan.clone();
        for (k, nd) in plan.thermal.nodes.iter().enumerate() {
            match nd.kind {
                HeatNodeKind::Capacitive { state } => self.heat.temp[k] = x[state.ix()],
                HeatNodeKind::Fixed { .. } => self.heat.temp[k] = self.heat.fixed[k],
                HeatNodeKind::Algebraic { .. } => {}
            }
        }
    }

    /// After the stages: the blocks' loss heat, the conductances, the temperatures of the
    /// nodes without capacity, and the net heat flow into every node.
    pub(super) fn heat_post(&mut self, t: f64, x: &[f64]) {
        if self.plan.thermal.nodes.is_empty() {
            return;
        }
        let plan = self.plan.clone();
        let tp = &plan.thermal;
        self.heat.q.fill(0.0);
        let mut injected = 0.0;
        let mut q = std::mem::take(&mut self.heat.q);
        for &b in &tp.heat_blocks {
            let tab = plan.block_tables(b);
            cx_of!(cx = self, plan, b, t, x);
            let mut hf = HeatFlows::new(&mut q, tab.ports_in(&plan.port_dof));
            self.blocks[b.ix()].heat_flows(&cx, &mut hf);
            injected += hf.total();
        }
        self.heat.q = q;
        self.heat.injected = injected;
        for (c, cp) in tp.conductors.iter().enumerate() {
            cx_of!(cx = self, plan, cp.block, t, x);
            self.heat.g[c] = self.blocks[cp.block.ix()].conductance(cp.k, &cx).max(0.0);
        }
        let na = tp.n_alg;
        if na > 0 {
            let h = &mut self.heat;
            h.mat.fill(0.0);
            h.rhs.fill(0.0);
            for (k, nd) in tp.nodes.iter().enumerate() {
                if let HeatNodeKind::Algebraic { k: a } = nd.kind {
                    h.rhs[a] = h.q[k];
                }
            }
            for (c, cp) in tp.conductors.iter().enumerate() {
                let g = h.g[c];
                for (me, other) in [(cp.a, cp.b), (cp.b, cp.a)] {
                    let HeatNodeKind::Algebraic { k: a } = tp.nodes[me].kind else {
                        continue;
                    };
                    h.mat[a * na + a] += g;
                    match tp.nodes[other].kind {
                        HeatNodeKind::Algebraic { k: o } => h.mat[a * na + o] -= g,
                        _ => h.rhs[a] += g * h.temp[other],
                    }
                }
            }
            if solve_dense(&mut h.mat, &mut h.rhs, na) {
                for (k, nd) in tp.nodes.iter().enumerate() {
                    if let HeatNodeKind::Algebraic { k: a } = nd.kind {
                        h.temp[k] = h.rhs[a];
                    }
                }
            } else if self.run.failure.is_none() {
                let names: Vec<&str> = tp
                    .nodes
                    .iter()
                    .filter(|n| matches!(n.kind, HeatNodeKind::Algebraic { .. }))
                    .map(|n| n.name.as_str())
                    .collect();
                self.run.failure = Some(format!(
                    "at t = {t} s the temperatures of thermal nodes {} are undefined: every conductance joining them to a heat capacity or a fixed temperature is zero",
                    names.join(", ")
                ));
            }
        }
        let h = &mut self.heat;
        h.net_in.copy_from_slice(&h.q);
        for (c, cp) in tp.conductors.iter().enumerate() {
            let flow = h.g[c] * (h.temp[cp.a] - h.temp[cp.b]);
            h.net_in[cp.a] -= flow;
            h.net_in[cp.b] += flow;
        }
    }

    /// Derivatives of the thermal states (after `eval`).
    pub(super) fn heat_derivs(&self, dx: &mut [f64]) {
        let tp = &self.plan.thermal;
        for (k, nd) in tp.nodes.iter().enumerate() {
            match nd.kind {
                HeatNodeKind::Capacitive { state } => {
                    dx[state.ix()] = self.heat.net_in[k] / self.heat.cap[k]
                }
                HeatNodeKind::Fixed { slot } => dx[tp.x_fixed + slot] = self.heat.net_in[k],
                HeatNodeKind::Algebraic { .. } => {}
            }
        }
        if let Some(s) = tp.x_injected {
            dx[s.ix()] = self.heat.injected;
        }
    }
}
