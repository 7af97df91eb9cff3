//! `Model`: a compiled diagram, runnable as a [`HybridSystem`].
//!
//! Evaluation order at every derivative call (fixed at compile time):
//! signal blocks in topological order, with the whole mechanical network as one node
//! (`Stage::Net`): force elements and sliding friction joints give `f`, the network solves
//! for accelerations and constraint forces, then blocks whose outputs read the network
//! (`Stage::Post`: torque sensors, accelerations) run. All buffers are allocated by
//! `compile()`; an evaluation allocates nothing.
//!
//! State vector layout: `[node positions (n) | node speeds (n) | block states | energy
//! integrals (one per force block, one per friction joint)]`.

// Dense numeric kernels read better with explicit indices.
#![allow(clippy::needless_range_loop)]

use std::time::Instant;

use drivelink_solver::{
    integrate, EventAction, EventCause, EventKind, HybridSystem, OutputKind, Settings, Status,
    SystemError,
};

use crate::block::{Block, Cx, EventCx, FrictionLaw, FrictionMode, FrictionVar, PortDecl};
use crate::network::Network;
use crate::result::{EventRecord, EventTag, RunStatus, SimResult};
use crate::scope::ScopeSpec;

/// Slack on friction guards so a joint released at zero slip does not relock on round-off.
const SLIP_EPS: f64 = 1e-10;
/// Relative slack on locked-torque guards.
const TORQUE_EPS: f64 = 1e-9;
/// A free friction joint engages when its engagement (normalized normal force) rises above
/// `ENGAGE_ON`, and an engaged one becomes free when it falls below `ENGAGE_OFF`. The
/// hysteresis keeps a pressure that decays towards zero (a first-order filter) from
/// toggling free/engaged on integration noise.
pub const ENGAGE_ON: f64 = 1e-6;
pub const ENGAGE_OFF: f64 = 5e-7;

/// One evaluation stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Pre(usize),
    Net,
    Post(usize),
}

/// What an entry of the per-block constraint-force buffer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LamSrc {
    Row(usize),
    Fric(usize),
}

/// Where an input slot reads from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InputSrc {
    Signal(usize),
    Const(f64),
}

/// Per-block layout in the model's buffers.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub ports: Vec<PortDecl>,
    /// Node of each port (usize::MAX for signal ports).
    pub port_node: Vec<usize>,
    /// Offset of this block's ports in the per-port buffers.
    pub p_off: usize,
    pub u_off: usize,
    pub n_u: usize,
    pub y_off: usize,
    pub n_y: usize,
    pub x_off: usize,
    pub n_x: usize,
    pub g_off: usize,
    pub n_g: usize,
    /// Global fixed-row range and friction-joint range.
    pub rows: std::ops::Range<usize>,
    pub fric: std::ops::Range<usize>,
    /// Offset in the per-block lambda buffer (rows then joints).
    pub lam_off: usize,
    pub has_forces: bool,
    pub is_mech: bool,
    /// Index of this block's work integral in the state vector, if it has forces.
    pub energy_state: Option<usize>,
}

/// A resolved loggable variable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VarRef {
    Signal(usize),
    NodeSpeed(usize),
    NodePos(usize),
    NodeAccel(usize),
    Friction(usize, FrictionVar),
    Custom(usize, usize),
}

/// The energy audit of a run: where the mechanical work went.
#[derive(Debug, Clone, PartialEq)]
pub struct EnergyAudit {
    /// Work delivered by source blocks (engines, torque sources), J.
    pub sources: Vec<(String, f64)>,
    /// Energy dissipated by each non-source element (friction joints, dampers, converter,
    /// road load), J (positive = dissipated).
    pub losses: Vec<(String, f64)>,
    pub kinetic_initial: f64,
    pub kinetic_final: f64,
    pub potential_initial: f64,
    pub potential_final: f64,
    /// Kinetic energy lost in velocity projections at mode changes.
    pub impact_loss: f64,
    /// `Σ sources − Σ losses − impact − ΔKE − ΔPE`.
    pub residual: f64,
    /// `residual / max(Σ|sources|, Σ|losses|, KE)`.
    pub relative_residual: f64,
}

/// A compiled model.
pub struct Model {
    pub name: String,
    pub settings: Settings,
    pub blocks: Vec<Box<dyn Block>>,
    pub names: Vec<String>,
    pub layout: Vec<Layout>,
    pub order: Vec<Stage>,
    pub net: Network,
    pub signals: Vec<f64>,
    pub inputs: Vec<InputSrc>,
    ubuf: Vec<f64>,
    pv: Vec<f64>,
    pq: Vec<f64>,
    pa: Vec<f64>,
    pf: Vec<f64>,
    plam: Vec<f64>,
    /// Friction joints: (block, local joint index, display name).
    pub fric_owner: Vec<(usize, usize, String)>,
    fric_tau: Vec<f64>,
    fric_wrel: Vec<f64>,
    /// Fixed rows: (block, tracking input slot in `ubuf` if a tracking row).
    pub row_owner: Vec<(usize, Option<usize>)>,
    targets: Vec<f64>,
    pub n_nodes: usize,
    pub x_blocks: usize,
    pub x_energy: usize,
    pub n_states: usize,
    pub n_block_guards: usize,
    x0: Vec<f64>,
    /// Logged variables (name, source).
    pub log: Vec<(String, VarRef)>,
    pub scopes: Vec<ScopeSpec>,
    /// All loggable variables, for "did you mean" and `log: "all"`.
    pub all_vars: Vec<(String, VarRef)>,
    next_te: Vec<f64>,
    result: SimResult,
    row_buf: Vec<f64>,
    impact_loss: f64,
    last_x: Vec<f64>,
    stopped_by: Option<String>,
    dirty_factor: bool,
    progress: Option<Box<dyn FnMut(f64) + Send>>,
    /// Flat (port buffer index, node) pairs of every mechanical port.
    port_map: Vec<(usize, usize)>,
    /// Blocks that take part in the network solve (forces, friction joints or rows).
    net_blocks: Vec<usize>,
    /// Fixed-row / friction-joint source of each entry of `plam`.
    lam_src: Vec<LamSrc>,
    /// (t, x) of the last evaluation done through `eval_cached`, valid until an event.
    cache_t: f64,
    cache_x: Vec<f64>,
    cache_valid: bool,
}

/// Parts `compile()` assembles a `Model` from.
pub struct ModelParts {
    pub name: String,
    pub settings: Settings,
    pub blocks: Vec<Box<dyn Block>>,
    pub names: Vec<String>,
    pub layout: Vec<Layout>,
    pub order: Vec<Stage>,
    pub net: Network,
    pub n_signals: usize,
    pub inputs: Vec<InputSrc>,
    pub n_ports: usize,
    pub n_lam: usize,
    pub fric_owner: Vec<(usize, usize, String)>,
    pub row_owner: Vec<(usize, Option<usize>)>,
    pub x_blocks: usize,
    pub x_energy: usize,
    pub n_states: usize,
    pub n_block_guards: usize,
    pub x0: Vec<f64>,
    pub log: Vec<(String, VarRef)>,
    pub all_vars: Vec<(String, VarRef)>,
    pub scopes: Vec<ScopeSpec>,
}

impl Model {
    pub fn from_parts(p: ModelParts) -> Model {
        let n_nodes = p.net.n;
        let nf = p.fric_owner.len();
        let nr = p.row_owner.len();
        let names: Vec<String> = p.log.iter().map(|(n, _)| n.clone()).collect();
        let n_log = names.len();
        let mut result = SimResult::new(p.name.clone(), names);
        result.scopes = p.scopes.clone();
        let port_map: Vec<(usize, usize)> = p
            .layout
            .iter()
            .flat_map(|l| {
                l.port_node
                    .iter()
                    .enumerate()
                    .filter(|(_, &n)| n != usize::MAX)
                    .map(move |(k, &n)| (l.p_off + k, n))
            })
            .collect();
        let net_blocks: Vec<usize> = (0..p.layout.len())
            .filter(|&b| {
                p.layout[b].has_forces
                    || !p.layout[b].fric.is_empty()
                    || !p.layout[b].rows.is_empty()
            })
            .collect();
        let lam_src: Vec<LamSrc> = p
            .layout
            .iter()
            .flat_map(|l| {
                l.rows
                    .clone()
                    .map(LamSrc::Row)
                    .chain(l.fric.clone().map(LamSrc::Fric))
            })
            .collect();
        Model {
            name: p.name,
            settings: p.settings,
            next_te: vec![f64::INFINITY; p.blocks.len()],
            blocks: p.blocks,
            names: p.names,
            layout: p.layout,
            order: p.order,
            net: p.net,
            signals: vec![0.0; p.n_signals],
            ubuf: vec![0.0; p.inputs.len()],
            inputs: p.inputs,
            pv: vec![0.0; p.n_ports],
            pq: vec![0.0; p.n_ports],
            pa: vec![0.0; p.n_ports],
            pf: vec![0.0; p.n_ports],
            plam: vec![0.0; p.n_lam],
            fric_owner: p.fric_owner,
            fric_tau: vec![0.0; nf],
            fric_wrel: vec![0.0; nf],
            row_owner: p.row_owner,
            targets: vec![0.0; nr],
            n_nodes,
            x_blocks: p.x_blocks,
            x_energy: p.x_energy,
            n_states: p.n_states,
            n_block_guards: p.n_block_guards,
            last_x: p.x0.clone(),
            x0: p.x0,
            log: p.log,
            scopes: p.scopes,
            all_vars: p.all_vars,
            result,
            row_buf: vec![0.0; n_log],
            impact_loss: 0.0,
            stopped_by: None,
            dirty_factor: true,
            progress: None,
            port_map,
            net_blocks,
            lam_src,
            cache_t: f64::NAN,
            cache_x: vec![0.0; p.n_states],
            cache_valid: false,
        }
    }

    /// The initial state vector.
    pub fn initial_state(&self) -> &[f64] {
        &self.x0
    }

    /// Names of all loggable variables.
    pub fn variable_names(&self) -> impl Iterator<Item = &str> {
        self.all_vars.iter().map(|(n, _)| n.as_str())
    }
}

/// Build the `Cx` view of block `$b` from disjoint fields of the model (a macro so the
/// borrow checker sees field-level borrows).
macro_rules! cx {
    ($m:expr, $b:expr, $t:expr, $x:expr) => {{
        let l = &$m.layout[$b];
        let np = l.ports.len();
        Cx {
            t: $t,
            x: &$x[l.x_off..l.x_off + l.n_x],
            u: &$m.ubuf[l.u_off..l.u_off + l.n_u],
            v: &$m.pv[l.p_off..l.p_off + np],
            q: &$m.pq[l.p_off..l.p_off + np],
            a: &$m.pa[l.p_off..l.p_off + np],
            lambda: &$m.plam[l.lam_off..l.lam_off + l.rows.len() + l.fric.len()],
            modes: &$m.net.modes[l.fric.clone()],
        }
    }};
}

/// Copy block `b`'s inputs into its input slots.
macro_rules! gather_u {
    ($m:expr, $b:expr) => {{
        let l = &$m.layout[$b];
        for s in l.u_off..l.u_off + l.n_u {
            $m.ubuf[s] = match $m.inputs[s] {
                InputSrc::Signal(i) => $m.signals[i],
                InputSrc::Const(c) => c,
            };
        }
    }};
}

fn sliding_sign(m: FrictionMode) -> f64 {
    match m {
        FrictionMode::SlidingForward => 1.0,
        FrictionMode::SlidingBackward => -1.0,
        _ => 0.0,
    }
}

impl Model {
    /// `eval` unless the last cached evaluation was at the same (t, x) with the same modes
    /// (the solver asks for derivatives, guards and output at a step end in a row).
    fn eval_cached(&mut self, t: f64, x: &[f64]) {
        if self.cache_valid && t.to_bits() == self.cache_t.to_bits() && x == self.cache_x.as_slice()
        {
            return;
        }
        self.eval(t, x);
        self.cache_t = t;
        self.cache_x.copy_from_slice(x);
        self.cache_valid = true;
    }

    /// Evaluate every signal and the network at (t, x) under the current modes.
    pub fn eval(&mut self, t: f64, x: &[f64]) {
        self.cache_valid = false;
        let n = self.n_nodes;
        for &(k, node) in &self.port_map {
            self.pv[k] = x[n + node];
            self.pq[k] = x[node];
        }
        for si in 0..self.order.len() {
            match self.order[si] {
                Stage::Pre(b) => {
                    let (y0, ny) = (self.layout[b].y_off, self.layout[b].n_y);
                    if ny == 0 {
                        continue;
                    }
                    gather_u!(self, b);
                    let cx = cx!(self, b, t, x);
                    self.blocks[b].outputs(&cx, &mut self.signals[y0..y0 + ny]);
                }
                Stage::Net => self.eval_network(t, x),
                Stage::Post(b) => {
                    gather_u!(self, b);
                    let (y0, ny) = (self.layout[b].y_off, self.layout[b].n_y);
                    let cx = cx!(self, b, t, x);
                    self.blocks[b].network_outputs(&cx, &mut self.signals[y0..y0 + ny]);
                }
            }
        }
        // Every input slot now holds its final value for this (t, x): blocks evaluated
        // before their drivers (no direct feedthrough) and blocks without outputs read
        // their inputs in derivatives, guards, events and variables.
        for s in 0..self.inputs.len() {
            self.ubuf[s] = match self.inputs[s] {
                InputSrc::Signal(i) => self.signals[i],
                InputSrc::Const(c) => c,
            };
        }
    }

    fn eval_network(&mut self, t: f64, x: &[f64]) {
        let n = self.n_nodes;
        if n == 0 {
            return;
        }
        for fi in self.net.f.iter_mut() {
            *fi = 0.0;
        }
        for bi in 0..self.net_blocks.len() {
            let b = self.net_blocks[bi];
            gather_u!(self, b);
            if self.layout[b].has_forces {
                let (p0, np) = (self.layout[b].p_off, self.layout[b].ports.len());
                for k in p0..p0 + np {
                    self.pf[k] = 0.0;
                }
                let l = &self.layout[b];
                let cx = Cx {
                    t,
                    x: &x[l.x_off..l.x_off + l.n_x],
                    u: &self.ubuf[l.u_off..l.u_off + l.n_u],
                    v: &self.pv[l.p_off..l.p_off + np],
                    q: &self.pq[l.p_off..l.p_off + np],
                    a: &self.pa[l.p_off..l.p_off + np],
                    lambda: &self.plam[l.lam_off..l.lam_off + l.rows.len() + l.fric.len()],
                    modes: &self.net.modes[l.fric.clone()],
                };
                self.blocks[b].forces(&cx, &mut self.pf[p0..p0 + np]);
                for (p, &node) in self.layout[b].port_node.iter().enumerate() {
                    if node != usize::MAX {
                        self.net.f[node] += self.pf[p0 + p];
                    }
                }
            }
        }
        let v = &x[n..2 * n];
        for j in 0..self.fric_owner.len() {
            let w_rel = self.net.friction_rows[j].dot(v);
            self.fric_wrel[j] = w_rel;
            let s = sliding_sign(self.net.modes[j]);
            let tau = if s != 0.0 {
                let b = self.fric_owner[j].0;
                let k = self.fric_owner[j].1;
                let cx = cx!(self, b, t, x);
                -s * self.blocks[b].friction(k, &cx, w_rel).kinetic
            } else {
                0.0
            };
            self.fric_tau[j] = tau;
            if tau != 0.0 {
                for &(node, c) in &self.net.friction_rows[j].terms {
                    self.net.f[node] += c * tau;
                }
            }
        }
        for (i, &(_, slot)) in self.row_owner.iter().enumerate() {
            if let Some(s) = slot {
                self.targets[i] = self.ubuf[s];
            }
        }
        self.net.set_tracking(v, &self.targets);
        self.net.solve();
        for &(k, node) in &self.port_map {
            self.pa[k] = self.net.a[node];
        }
        for (o, src) in self.lam_src.iter().enumerate() {
            self.plam[o] = match *src {
                LamSrc::Row(r) => self.net.lambda_rows[r],
                LamSrc::Fric(j) => match self.net.modes[j] {
                    FrictionMode::Locked => self.net.lambda_fric[j],
                    FrictionMode::Free => 0.0,
                    _ => self.fric_tau[j],
                },
            };
        }
    }

    fn law(&self, j: usize, t: f64, x: &[f64], w_rel: f64) -> FrictionLaw {
        let (b, k, _) = self.fric_owner[j];
        let cx = cx!(self, b, t, x);
        self.blocks[b].friction(k, &cx, w_rel)
    }

    /// Transmitted torque of friction joint `j` after `eval`.
    pub fn friction_tau(&self, j: usize) -> f64 {
        match self.net.modes[j] {
            FrictionMode::Locked => self.net.lambda_fric[j],
            FrictionMode::Free => 0.0,
            _ => self.fric_tau[j],
        }
    }

    fn derivs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) {
        self.eval_cached(t, x);
        let n = self.n_nodes;
        dx[..n].copy_from_slice(&x[n..2 * n]);
        dx[n..2 * n].copy_from_slice(&self.net.a[..n]);
        for b in 0..self.blocks.len() {
            let l = &self.layout[b];
            if l.n_x > 0 {
                let (x0, nx) = (l.x_off, l.n_x);
                let cx = cx!(self, b, t, x);
                self.blocks[b].derivatives(&cx, &mut dx[x0..x0 + nx]);
            }
            let l = &self.layout[b];
            if let Some(e) = l.energy_state {
                let mut p = 0.0;
                if l.has_forces {
                    for k in l.p_off..l.p_off + l.ports.len() {
                        p += self.pf[k] * self.pv[k];
                    }
                }
                for (k, r) in l.rows.clone().enumerate() {
                    if self.net.rows[r].tracking.is_some() {
                        p += self.plam[l.lam_off + k] * self.net.rows[r].dot(&x[n..2 * n]);
                    }
                }
                dx[e] = p;
            }
        }
        let e0 = self.x_energy
            + self
                .layout
                .iter()
                .filter(|l| l.energy_state.is_some())
                .count();
        for j in 0..self.fric_owner.len() {
            dx[e0 + j] = self.fric_tau[j] * self.fric_wrel[j];
        }
    }

    fn all_guards(&mut self, t: f64, x: &[f64], g: &mut [f64]) {
        self.eval_cached(t, x);
        for b in 0..self.blocks.len() {
            let l = &self.layout[b];
            if l.n_g > 0 {
                let (g0, ng) = (l.g_off, l.n_g);
                let cx = cx!(self, b, t, x);
                self.blocks[b].guards(&cx, &mut g[g0..g0 + ng]);
            }
        }
        let base = self.n_block_guards;
        for j in 0..self.fric_owner.len() {
            let w_rel = self.fric_wrel[j];
            let gj = &mut g[base + 3 * j..base + 3 * j + 3];
            let mode = self.net.modes[j];
            let (b, k, _) = self.fric_owner[j];
            let cx = cx!(self, b, t, x);
            let law = self.blocks[b].friction(
                k,
                &cx,
                if mode == FrictionMode::Locked {
                    0.0
                } else {
                    w_rel
                },
            );
            match mode {
                FrictionMode::Locked => {
                    let lam = self.net.lambda_fric[j];
                    gj[0] = lam - law.lo + torque_slack(&law);
                    gj[1] = law.hi - lam + torque_slack(&law);
                    gj[2] = law.engagement - ENGAGE_OFF;
                }
                FrictionMode::Free => {
                    gj[0] = 1.0;
                    gj[1] = 1.0;
                    gj[2] = ENGAGE_ON - law.engagement;
                }
                m => {
                    gj[0] = sliding_sign(m) * w_rel + SLIP_EPS;
                    gj[1] = 1.0;
                    gj[2] = law.engagement - ENGAGE_OFF;
                }
            }
        }
    }
}

fn torque_slack(law: &FrictionLaw) -> f64 {
    let span = if law.hi.is_finite() && law.lo.is_finite() {
        law.hi - law.lo
    } else {
        1.0
    };
    TORQUE_EPS * span.max(1e-3)
}

impl Model {
    fn push_event(&mut self, t: f64, block: usize, tag: EventTag, detail: String) {
        self.result.events.push(EventRecord {
            time: t,
            block: self.names[block].clone(),
            kind: tag,
            detail,
        });
    }

    fn fric_name(&self, j: usize) -> String {
        let (b, _, ref label) = self.fric_owner[j];
        if label.is_empty() {
            self.names[b].clone()
        } else {
            format!("{}.{}", self.names[b], label)
        }
    }

    /// Refactor the network for the current modes, reporting a singular network by node.
    fn refactor(&mut self, t: f64) -> Result<(), SystemError> {
        self.net.refactor().map_err(|s| SystemError {
            message: format!(
                "the mechanical network became singular after a mode change at t = {t} s: nodes {} have no inertia in a direction the constraints leave free",
                s.nodes.iter().map(|&i| self.net.node_names[i].clone()).collect::<Vec<_>>().join(", ")
            ),
        })?;
        self.dirty_factor = false;
        Ok(())
    }

    /// The friction mode iteration at an event instant: lock the joints whose slip reached
    /// zero, check every locked joint's torque against its static range, release the worst
    /// violator in the direction of its torque, repeat. Projects speeds in `x`. Returns true
    /// if a mode changed.
    fn settle_frictions(&mut self, t: f64, x: &mut [f64]) -> Result<bool, SystemError> {
        let nf = self.fric_owner.len();
        if nf == 0 {
            if self.dirty_factor && self.n_nodes > 0 {
                self.refactor(t)?;
            }
            return Ok(false);
        }
        let old = self.net.modes.clone();
        self.eval(t, x);
        let mut cand = old.clone();
        for j in 0..nf {
            let w = self.fric_wrel[j];
            let law = self.law(j, t, x, w);
            let engaged = if old[j] == FrictionMode::Free {
                law.engagement > ENGAGE_ON
            } else {
                law.engagement >= ENGAGE_OFF
            };
            cand[j] = if !engaged {
                FrictionMode::Free
            } else {
                match old[j] {
                    FrictionMode::Locked => FrictionMode::Locked,
                    m => {
                        let s = sliding_sign(m);
                        let near = if s == 0.0 {
                            w.abs() <= SLIP_EPS
                        } else {
                            s * w <= SLIP_EPS
                        };
                        if near {
                            FrictionMode::Locked
                        } else if w > 0.0 {
                            FrictionMode::SlidingForward
                        } else {
                            FrictionMode::SlidingBackward
                        }
                    }
                }
            };
        }
        let n = self.n_nodes;
        for _iter in 0..(2 * nf + 2) {
            let refactor_needed = self.dirty_factor || cand != self.net.modes;
            self.net.modes.copy_from_slice(&cand);
            if refactor_needed {
                self.refactor(t)?;
                let ke0 = self.net.kinetic_energy(&x[n..2 * n]);
                self.net.project(&mut x[n..2 * n]);
                let ke1 = self.net.kinetic_energy(&x[n..2 * n]);
                let lost = ke0 - ke1;
                self.impact_loss += lost;
                if lost > 1e-9 * ke0.max(1e-9) {
                    self.result.events.push(EventRecord {
                        time: t,
                        block: "network".into(),
                        kind: EventTag::Impact,
                        detail: format!("velocity projection dissipated {lost:.6e} J"),
                    });
                }
            }
            self.eval(t, x);
            // Worst violation among locked joints.
            let mut worst: Option<(usize, f64, bool)> = None;
            for j in 0..nf {
                if cand[j] != FrictionMode::Locked {
                    continue;
                }
                let law = self.law(j, t, x, 0.0);
                let lam = self.net.lambda_fric[j];
                let slack = torque_slack(&law);
                let over = lam - law.hi - slack;
                let under = law.lo - lam - slack;
                let (excess, high) = if over > under {
                    (over, true)
                } else {
                    (under, false)
                };
                if excess > 0.0 && worst.is_none_or(|w| excess > w.1) {
                    worst = Some((j, excess, high));
                }
            }
            match worst {
                None => break,
                Some((j, _, high)) => {
                    cand[j] = if high {
                        FrictionMode::SlidingBackward
                    } else {
                        FrictionMode::SlidingForward
                    };
                }
            }
        }
        if cand != self.net.modes {
            self.net.modes.copy_from_slice(&cand);
            self.refactor(t)?;
            self.eval(t, x);
        }
        let mut changed = false;
        for j in 0..nf {
            let (a, b) = (old[j], self.net.modes[j]);
            if a == b {
                continue;
            }
            changed = true;
            let tag = match (a, b) {
                (_, FrictionMode::Locked) => EventTag::Lock,
                (_, FrictionMode::Free) => EventTag::Free,
                (FrictionMode::Locked, _) => EventTag::Unlock,
                (FrictionMode::Free, _) => EventTag::Engage,
                _ => EventTag::ZeroCrossing,
            };
            let detail = match b {
                FrictionMode::Locked => {
                    format!("locked, holding torque {:.6} N·m", self.net.lambda_fric[j])
                }
                _ => format!(
                    "{} -> {}, w_rel = {:.3e}",
                    a.name(),
                    b.name(),
                    self.fric_wrel[j]
                ),
            };
            let name = self.fric_name(j);
            self.result.events.push(EventRecord {
                time: t,
                block: name,
                kind: tag,
                detail,
            });
        }
        Ok(changed)
    }

    /// Call `f` on block `b` with its event view at `t` and log what it reports.
    fn block_event<R>(
        &mut self,
        b: usize,
        t: f64,
        x: &mut [f64],
        stop: &mut bool,
        f: impl FnOnce(&mut dyn Block, &mut EventCx) -> R,
    ) -> R {
        gather_u!(self, b);
        let mut log: Vec<(EventTag, String)> = Vec::new();
        let l = &self.layout[b];
        let (x0, nx, np) = (l.x_off, l.n_x, l.ports.len());
        let mut ecx = EventCx {
            t,
            x: &mut x[x0..x0 + nx],
            u: &self.ubuf[l.u_off..l.u_off + l.n_u],
            v: &self.pv[l.p_off..l.p_off + np],
            q: &self.pq[l.p_off..l.p_off + np],
            a: &self.pa[l.p_off..l.p_off + np],
            lambda: &self.plam[l.lam_off..l.lam_off + l.rows.len() + l.fric.len()],
            log: &mut log,
            stop,
        };
        let r = f(&mut *self.blocks[b], &mut ecx);
        for (tag, d) in log {
            self.push_event(t, b, tag, d);
        }
        r
    }

    /// Event handling at `t`: time events of blocks, block mode updates, friction mode
    /// iteration, repeated until nothing changes.
    fn handle(
        &mut self,
        t: f64,
        x: &mut [f64],
        cause: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        self.cache_valid = false;
        let mut stop = false;
        self.eval(t, x);
        if matches!(cause.kind, EventKind::Time | EventKind::Initial) {
            let tol = 1e-13 * t.abs().max(1.0);
            for si in 0..self.order.len() {
                let b = match self.order[si] {
                    Stage::Pre(b) => b,
                    _ => continue,
                };
                let due = if cause.kind == EventKind::Initial {
                    false
                } else {
                    self.next_te[b] <= t + tol
                };
                if due {
                    self.block_event(b, t, x, &mut stop, |blk, ecx| blk.time_event(ecx));
                    self.eval(t, x);
                }
            }
            for b in 0..self.blocks.len() {
                self.next_te[b] = self.blocks[b].next_time_event(t);
            }
        }
        for _round in 0..100 {
            let mut changed = false;
            for si in 0..self.order.len() {
                let b = match self.order[si] {
                    Stage::Pre(b) => b,
                    _ => continue,
                };
                let c = self.block_event(b, t, x, &mut stop, |blk, ecx| blk.update_modes(ecx));
                if c {
                    changed = true;
                    self.eval(t, x);
                }
                if stop && self.stopped_by.is_none() {
                    self.stopped_by = Some(self.names[b].clone());
                }
            }
            if self.settle_frictions(t, x)? {
                changed = true;
            }
            if !changed {
                break;
            }
            self.eval(t, x);
        }
        if stop {
            let who = self.stopped_by.clone().unwrap_or_default();
            self.result.events.push(EventRecord {
                time: t,
                block: who,
                kind: EventTag::Stop,
                detail: "stop requested".into(),
            });
            return Ok(EventAction::Stop);
        }
        Ok(EventAction::Continue)
    }

    fn var_value(&self, r: VarRef, t: f64, x: &[f64]) -> f64 {
        let n = self.n_nodes;
        match r {
            VarRef::Signal(i) => self.signals[i],
            VarRef::NodeSpeed(k) => x[n + k],
            VarRef::NodePos(k) => x[k],
            VarRef::NodeAccel(k) => self.net.a[k],
            VarRef::Friction(j, fv) => match fv {
                FrictionVar::WRel => self.fric_wrel[j],
                FrictionVar::PhiRel => self.net.friction_rows[j].dot(&x[..n]),
                FrictionVar::Tau => self.friction_tau(j),
                FrictionVar::Mode => self.net.modes[j].code(),
                FrictionVar::PowerLoss => -self.friction_tau(j) * self.fric_wrel[j],
            },
            VarRef::Custom(b, i) => {
                let cx = cx!(self, b, t, x);
                self.blocks[b].var(&cx, i)
            }
        }
    }

    fn record(&mut self, t: f64, x: &[f64]) {
        self.eval_cached(t, x);
        for k in 0..self.log.len() {
            self.row_buf[k] = self.var_value(self.log[k].1, t, x);
        }
        let row = std::mem::take(&mut self.row_buf);
        self.result.push_row(t, &row);
        self.row_buf = row;
        if let Some(p) = self.progress.as_mut() {
            p(t);
        }
        self.last_x.copy_from_slice(x);
    }

    /// Call `f(t)` at every output point (for progress bars).
    pub fn set_progress(&mut self, f: Box<dyn FnMut(f64) + Send>) {
        self.progress = Some(f);
    }

    /// Run the model with its settings.
    pub fn run(&mut self) -> SimResult {
        let settings = self.settings.clone();
        self.run_with(&settings)
    }

    /// Run with explicit settings. Always returns a result; a failed run has status
    /// `Failed`, the error in `message`, and the samples up to the failure.
    pub fn run_with(&mut self, settings: &Settings) -> SimResult {
        let names: Vec<String> = self.log.iter().map(|(n, _)| n.clone()).collect();
        let mut fresh = SimResult::new(self.name.clone(), names);
        fresh.scopes = self.scopes.clone();
        self.result = fresh;
        self.impact_loss = 0.0;
        self.stopped_by = None;
        for m in self.net.modes.iter_mut() {
            *m = FrictionMode::Free;
        }
        self.dirty_factor = true;
        self.cache_valid = false;
        let mut x = self.x0.clone();
        self.reset_blocks();
        let start = Instant::now();
        let out = integrate(self, &mut x, settings);
        let wall = start.elapsed().as_secs_f64();
        let mut res = std::mem::replace(&mut self.result, SimResult::new("", vec![]));
        res.wall_time_s = wall;
        match out {
            Ok(o) => {
                res.stats = run_stats(&o.stats);
                res.end_time = o.end_time;
                res.status = match o.status {
                    Status::Completed => RunStatus::Completed,
                    Status::Stopped => RunStatus::Stopped,
                };
                res.message = match o.status {
                    Status::Completed => format!("completed at t = {} s", o.end_time),
                    Status::Stopped => format!(
                        "stopped by '{}' at t = {} s",
                        self.stopped_by.clone().unwrap_or_default(),
                        o.end_time
                    ),
                };
            }
            Err(f) => {
                res.stats = run_stats(&f.stats);
                res.end_time = f.end_time;
                res.status = RunStatus::Failed;
                res.message = f.error.to_string();
            }
        }
        res
    }

    fn reset_blocks(&mut self) {
        for b in 0..self.blocks.len() {
            let l = &self.layout[b];
            let (x0, nx) = (l.x_off, l.n_x);
            self.blocks[b].initial_states(&mut self.x0[x0..x0 + nx]);
            self.next_te[b] = self.blocks[b].next_time_event(self.settings.start_time - 1e-300);
        }
    }

    /// The energy audit of the last run (from its final state).
    ///
    /// Each force element's mechanical work `W` (integrated power it delivers to its
    /// flanges) is a state; a source's work is reported as supplied energy, any other
    /// element's `−W − ΔE_stored` as dissipated. Friction joints integrate `tau·w_rel`.
    pub fn energy_audit(&mut self) -> EnergyAudit {
        let x = self.last_x.clone();
        let x0 = self.x0.clone();
        let n = self.n_nodes;
        let t = self.settings.stop_time;
        let pe0 = self.block_potentials(self.settings.start_time, &x0);
        let pe1 = self.block_potentials(t, &x);
        let mut sources = Vec::new();
        let mut losses = Vec::new();
        for (b, l) in self.layout.iter().enumerate() {
            if let Some(e) = l.energy_state {
                let w = x[e];
                if self.blocks[b].is_energy_source() {
                    sources.push((self.names[b].clone(), w));
                } else {
                    losses.push((self.names[b].clone(), -w - (pe1[b] - pe0[b])));
                }
            }
        }
        let e0 = self.x_energy
            + self
                .layout
                .iter()
                .filter(|l| l.energy_state.is_some())
                .count();
        for j in 0..self.fric_owner.len() {
            losses.push((self.fric_name(j), -x[e0 + j]));
        }
        let kinetic_initial = self.net.kinetic_energy(&x0[n..2 * n]);
        let kinetic_final = self.net.kinetic_energy(&x[n..2 * n]);
        let potential_initial: f64 = pe0.iter().sum();
        let potential_final: f64 = pe1.iter().sum();
        let src: f64 = sources.iter().map(|s| s.1).sum();
        let loss: f64 = losses.iter().map(|s| s.1).sum();
        let residual = src
            - loss
            - self.impact_loss
            - (kinetic_final - kinetic_initial)
            - (potential_final - potential_initial);
        let scale = sources
            .iter()
            .map(|s| s.1.abs())
            .sum::<f64>()
            .max(losses.iter().map(|s| s.1.abs()).sum::<f64>())
            .max(kinetic_initial.max(kinetic_final))
            .max(1e-300);
        EnergyAudit {
            sources,
            losses,
            kinetic_initial,
            kinetic_final,
            potential_initial,
            potential_final,
            impact_loss: self.impact_loss,
            residual,
            relative_residual: residual / scale,
        }
    }

    fn block_potentials(&mut self, t: f64, x: &[f64]) -> Vec<f64> {
        self.eval(t, x);
        (0..self.blocks.len())
            .map(|b| {
                let cx = cx!(self, b, t, x);
                self.blocks[b].potential_energy(&cx)
            })
            .collect()
    }
}

impl HybridSystem for Model {
    fn n_states(&self) -> usize {
        self.n_states
    }
    fn n_guards(&self) -> usize {
        self.n_block_guards + 3 * self.fric_owner.len()
    }
    fn derivatives(&mut self, t: f64, x: &[f64], dx: &mut [f64]) {
        self.derivs(t, x, dx);
    }
    fn guards(&mut self, t: f64, x: &[f64], g: &mut [f64]) {
        self.all_guards(t, x, g);
    }
    fn next_time_event(&self, t: f64) -> f64 {
        self.next_te
            .iter()
            .copied()
            .filter(|&te| te > t)
            .fold(f64::INFINITY, f64::min)
    }
    fn handle_event(
        &mut self,
        t: f64,
        x: &mut [f64],
        cause: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        self.handle(t, x, cause)
    }
    fn guard_name(&self, i: usize) -> String {
        if i < self.n_block_guards {
            for (b, l) in self.layout.iter().enumerate() {
                if i >= l.g_off && i < l.g_off + l.n_g {
                    return format!(
                        "{}.{}",
                        self.names[b],
                        self.blocks[b].guard_name(i - l.g_off)
                    );
                }
            }
            return format!("guard{i}");
        }
        let j = (i - self.n_block_guards) / 3;
        let what = ["slip/torque-low", "torque-high", "engagement"][(i - self.n_block_guards) % 3];
        format!("{}.{}", self.fric_name(j), what)
    }
    fn output(&mut self, t: f64, x: &[f64], _kind: OutputKind) {
        self.record(t, x);
    }
}

/// The solver's counters as the result's statistics.
fn run_stats(s: &drivelink_solver::Stats) -> crate::result::RunStats {
    crate::result::RunStats {
        steps: s.steps,
        rejected_steps: s.rejected_steps,
        rhs_evals: s.rhs_evals,
        guard_evals: s.guard_evals,
        events: s.events,
        ..Default::default()
    }
}
