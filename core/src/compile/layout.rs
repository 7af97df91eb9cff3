//! Pass 4, layout: where every block's states, outputs, inputs, flanges, constraint rows,
//! friction joints, guards and work integrals live in the model's flat buffers.

use crate::block::{BlockDecl, PortKind, RowKind, VarSource};
use crate::ids::{BlockIx, JointIx, NodeIx, SlotIx, StateIx};
use crate::plan::{BlockPlan, JointPlan, NodePlan, RowPlan, TapPlan, VarRef};

use super::connect::{Src, Wiring};

/// The buffers' layout (the structural part of a plan, before ordering).
pub(crate) struct Layout {
    pub blocks: Vec<BlockPlan>,
    pub in_slots: Vec<SlotIx>,
    pub port_dof: Vec<u32>,
    pub n_signals: usize,
    pub slot_defaults: Vec<(SlotIx, f64)>,
    pub nodes: Vec<NodePlan>,
    pub rows: Vec<RowPlan>,
    pub joints: Vec<JointPlan>,
    pub n_states: usize,
    pub x_joint_energy: usize,
    pub n_block_guards: usize,
    /// Names of the rigid bodies (first frame port of each line).
    pub frames: Vec<String>,
    /// The rigid bodies' states (13 each, consecutive).
    pub frames_x: std::ops::Range<usize>,
    /// The block variables wired as signal sources, their slots after the outputs'.
    pub taps: Vec<TapPlan>,
}

/// Whether a block's linear form fits its declaration (states, inputs, outputs) so the
/// linear kernels may evaluate it.
pub(crate) fn linear_fits(b: &BlockDecl, n_in: usize, n_out: usize) -> bool {
    match &b.linear {
        Some(l) => {
            l.n == b.states
                && l.m == n_in
                && l.p == n_out
                && l.a.len() == l.n * l.n
                && l.b.len() == l.n * l.m
                && l.c.len() == l.p * l.n
                && l.d.len() == l.p * l.m
                && b.guards.is_empty()
                && !b.constant_outputs()
                && b.mech == Default::default()
        }
        None => false,
    }
}

/// Lay out the buffers of the blocks declared `decls`, wired by `w`: signal slots (outputs
/// block by block, then one per variable wired as a signal, then a constant slot per
/// unconnected input), then per block its states, ports, rows, joints and guards, then
/// the rigid bodies' states and the work integrals.
pub(crate) fn layout(
    names: &[String],
    types: &[&'static str],
    decls: &[BlockDecl],
    w: &Wiring,
) -> Layout {
    let mut lay = Lay::new(w);
    for b in 0..decls.len() {
        let inputs_start = lay.input_slots(b);
        let block = lay.block(b, &names[b], types[b], &decls[b], inputs_start);
        lay.plans.push(block);
    }
    lay.finish(names, decls)
}

/// The layout under construction.
struct Lay<'a> {
    w: &'a Wiring,
    /// First output slot of each block, and the end of the last block's.
    y_start: Vec<usize>,
    /// The first slot of the variables wired as signals.
    tap_base: usize,
    n_signals: usize,
    in_slots: Vec<SlotIx>,
    slot_defaults: Vec<(SlotIx, f64)>,
    port_dof: Vec<u32>,
    rows: Vec<RowPlan>,
    joints: Vec<JointPlan>,
    plans: Vec<BlockPlan>,
    x_off: usize,
    g_off: usize,
}

impl<'a> Lay<'a> {
    /// Output slots first, block by block, then one slot per variable wired as a signal
    /// source; the block states after the node states.
    fn new(w: &'a Wiring) -> Self {
        let mut y_start = Vec::with_capacity(w.ports.len() + 1);
        let mut n_signals = 0;
        for ports in &w.ports {
            y_start.push(n_signals);
            n_signals += ports.iter().filter(|p| p.kind == PortKind::Out).count();
        }
        y_start.push(n_signals);
        let tap_base = n_signals;
        Lay {
            w,
            y_start,
            tap_base,
            n_signals: n_signals + w.taps.len(),
            in_slots: Vec::new(),
            slot_defaults: Vec::new(),
            port_dof: Vec::new(),
            rows: Vec::new(),
            joints: Vec::new(),
            plans: Vec::with_capacity(w.ports.len()),
            x_off: 2 * w.nodes.len(),
            g_off: 0,
        }
    }

    /// The slot of output port `at`.
    fn out_slot(&self, at: super::connect::PortAt) -> SlotIx {
        let before = self.w.ports[at.block.ix()][..at.port]
            .iter()
            .filter(|p| p.kind == PortKind::Out)
            .count();
        SlotIx::at(self.y_start[at.block.ix()] + before)
    }

    /// The slots block `b`'s inputs read (an unconnected one a new constant slot holding its
    /// default); returns where they start in `in_slots`.
    fn input_slots(&mut self, b: usize) -> usize {
        let w = self.w;
        let inputs_start = self.in_slots.len();
        for (p, decl) in w.ports[b].iter().enumerate() {
            if decl.kind != PortKind::In {
                continue;
            }
            let slot = match w.driver[b][p] {
                Some(Src::Port(at)) => self.out_slot(at),
                Some(Src::Tap(k)) => SlotIx::at(self.tap_base + k),
                None => {
                    let s = SlotIx::at(self.n_signals);
                    self.n_signals += 1;
                    self.slot_defaults.push((s, decl.default.unwrap_or(0.0)));
                    s
                }
            };
            self.in_slots.push(slot);
        }
        inputs_start
    }

    /// Block `b`'s plan: its port table, rows, joints, states and guards appended.
    fn block(
        &mut self,
        b: usize,
        name: &str,
        type_name: &'static str,
        blk: &BlockDecl,
        inputs_start: usize,
    ) -> BlockPlan {
        let w = self.w;
        let tab_start = self.port_dof.len();
        // Mechanical ports index their node, frame ports their rigid body, heat ports
        // their thermal node.
        self.port_dof.extend(
            w.node[b]
                .iter()
                .zip(&w.frame_of[b])
                .zip(&w.heat_node[b])
                .map(|((n, f), h)| n.map(|n| n.0).or(f.map(|f| f.0)).or(*h).unwrap_or(u32::MAX)),
        );
        let decl = &blk.mech;
        let rows_start = self.rows.len();
        for c in &decl.constraints {
            let tracking = match c.kind {
                RowKind::Velocity => None,
                RowKind::Tracking { input, .. } => self.in_slots.get(inputs_start + input).copied(),
            };
            self.rows.push(RowPlan {
                block: BlockIx::at(b),
                tracking,
            });
        }
        let joints_start = self.joints.len();
        for (k, f) in decl.frictions.iter().enumerate() {
            self.joints.push(JointPlan {
                block: BlockIx::at(b),
                local: k,
                name: if f.label.is_empty() {
                    name.to_string()
                } else {
                    format!("{}.{}", name, f.label)
                },
            });
        }
        let (nx, ng) = (blk.states, blk.n_guards());
        let n_in = self.in_slots.len() - inputs_start;
        let n_out = self.y_start[b + 1] - self.y_start[b];
        let plan = BlockPlan {
            name: name.to_string(),
            type_name,
            ports: w.ports[b].clone(),
            x: self.x_off..self.x_off + nx,
            y: self.y_start[b]..self.y_start[b + 1],
            inputs: inputs_start..self.in_slots.len(),
            port_tab: tab_start..self.port_dof.len(),
            rows: rows_start..self.rows.len(),
            joints: joints_start..self.joints.len(),
            guards: self.g_off..self.g_off + ng,
            energy: None,
            // Marked here, numbered with the work integrals.
            internal_loss: (decl.has_forces && decl.internal_loss).then_some(StateIx::at(0)),
            internal_loss_name: blk.loss_name,
            has_forces: decl.has_forces,
            constant: blk.constant_outputs(),
            linear: linear_fits(blk, n_in, n_out),
        };
        self.x_off += nx;
        self.g_off += ng;
        plan
    }

    /// Work integrals: one per block with forces or tracking rows (and one for the work a
    /// block dissipates inside itself, right after it), numbered from `self.x_off`.
    fn number_work_integrals(&mut self) {
        for bp in self.plans.iter_mut() {
            let tracking = self.rows[bp.rows.clone()]
                .iter()
                .any(|r| r.tracking.is_some());
            if bp.has_forces || tracking {
                bp.energy = Some(StateIx::at(self.x_off));
                self.x_off += 1;
            }
            if bp.internal_loss.is_some() {
                bp.internal_loss = Some(StateIx::at(self.x_off));
                self.x_off += 1;
            }
        }
    }

    /// The rigid bodies after the block states, the work integrals, one per joint, and the
    /// variables wired as signals.
    fn finish(mut self, names: &[String], decls: &[BlockDecl]) -> Layout {
        let w = self.w;
        let frames_x = self.x_off..self.x_off + crate::frame::FRAME_STATES * w.frames.len();
        self.x_off = frames_x.end;
        self.number_work_integrals();
        let x_joint_energy = self.x_off;
        let tap_base = self.tap_base;
        let mut lay = Layout {
            blocks: self.plans,
            in_slots: self.in_slots,
            port_dof: self.port_dof,
            n_signals: self.n_signals,
            slot_defaults: self.slot_defaults,
            nodes: w
                .nodes
                .iter()
                .map(|n| NodePlan {
                    name: n.name.clone(),
                    kind: n.kind,
                })
                .collect(),
            n_states: self.x_off + self.joints.len(),
            rows: self.rows,
            joints: self.joints,
            x_joint_energy,
            n_block_guards: self.g_off,
            frames: w.frames.iter().map(|f| f.name.clone()).collect(),
            frames_x,
            taps: Vec::new(),
        };
        lay.taps = w
            .taps
            .iter()
            .enumerate()
            .map(|(k, tap)| {
                let b = tap.block.ix();
                let decl = &decls[b].variables[tap.var];
                TapPlan {
                    name: format!("{}.{}", names[b], decl.name),
                    block: tap.block,
                    var: lay.var_ref(b, decl.source),
                    reads: decl.reads,
                    slot: SlotIx::at(tap_base + k),
                }
            })
            .collect();
        lay
    }
}

impl Layout {
    /// The node (degree of freedom) of port `p` of block `b` (`u32::MAX` for a signal port).
    pub(crate) fn port_dof_of(&self, b: usize, p: usize) -> u32 {
        self.port_dof[self.blocks[b].port_tab.start + p]
    }

    /// Where the value of block `b`'s variable from `source` is found.
    pub(crate) fn var_ref(&self, b: usize, source: VarSource) -> VarRef {
        let node = |p: usize| NodeIx(self.port_dof_of(b, p));
        match source {
            VarSource::Speed(p) => VarRef::NodeSpeed(node(p)),
            VarSource::Position(p) => VarRef::NodePos(node(p)),
            VarSource::Accel(p) => VarRef::NodeAccel(node(p)),
            VarSource::Friction(k, fv) => {
                VarRef::Friction(JointIx::at(self.blocks[b].joints.start + k), fv)
            }
            VarSource::Custom(i) => VarRef::Custom(BlockIx::at(b), i),
        }
    }
}

/// The load-dependent friction joints of all blocks, their loads resolved to global row
/// and joint indices.
pub(crate) fn load_joints(decls: &[BlockDecl], lay: &Layout) -> Vec<crate::plan::LoadJointPlan> {
    let mut out = Vec::new();
    for (b, blk) in decls.iter().enumerate() {
        let bp = &lay.blocks[b];
        for fl in &blk.mech.friction_loads {
            if fl.joint >= bp.joints.len() {
                continue;
            }
            let nr = bp.rows.len();
            let mut rows = Vec::new();
            let mut joints = Vec::new();
            for &(i, c) in &fl.load {
                if i < nr {
                    rows.push((bp.rows.start + i, c));
                } else if i - nr < bp.joints.len() {
                    joints.push((bp.joints.start + i - nr, c));
                }
            }
            out.push(crate::plan::LoadJointPlan {
                joint: crate::ids::JointIx::at(bp.joints.start + fl.joint),
                rows,
                joints,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{signal, Wired};
    use super::linear_fits;
    use crate::block::{BlockDecl, Linear};
    use crate::ids::SlotIx;

    #[test]
    fn states_guards_and_outputs_are_laid_out_block_after_block_in_declaration_order() {
        let a = BlockDecl {
            states: 2,
            ..signal(&[], &["y"])
        }
        .with_guards(&["g0"]);
        let b = BlockDecl {
            states: 3,
            ..signal(&["u"], &["y1", "y2"])
        }
        .with_guards(&["h0", "h1"]);
        let w = Wired::new(vec![("a", a), ("b", b)], &[&["a.y", "b.u"]]);
        let lay = w.layout();
        let (a, b) = (&lay.blocks[w.ix("a")], &lay.blocks[w.ix("b")]);
        assert_eq!((a.x.clone(), b.x.clone()), (0..2, 2..5));
        assert_eq!((a.guards.clone(), b.guards.clone()), (0..1, 1..3));
        assert_eq!((a.y.clone(), b.y.clone()), (0..1, 1..3));
        assert_eq!(lay.n_block_guards, 3);
        // b's one input reads a's output slot.
        assert_eq!(lay.in_slots[b.inputs.clone()], [SlotIx::at(0)]);
    }

    #[test]
    fn an_unconnected_optional_input_reads_a_constant_slot_holding_its_default() {
        let b = BlockDecl::ports(vec![
            crate::block::PortDecl::optional_input("mu", 0.75),
            crate::block::PortDecl::output("y"),
        ]);
        let w = Wired::new(vec![("b", b)], &[]);
        let lay = w.layout();
        let slot = lay.in_slots[lay.blocks[0].inputs.start];
        assert!(
            slot.ix() >= lay.blocks[0].y.end,
            "a slot of its own after the outputs"
        );
        assert!(lay.slot_defaults.contains(&(slot, 0.75)));
    }

    fn lag() -> Linear {
        Linear {
            n: 1,
            m: 1,
            p: 1,
            a: vec![-1.0],
            b: vec![1.0],
            c: vec![1.0],
            d: vec![0.0],
        }
    }

    #[test]
    fn a_linear_form_runs_in_the_kernels_only_when_it_matches_the_declaration() {
        let fits = |d: &BlockDecl| linear_fits(d, d.n_inputs(), d.n_outputs());
        let lag_block = BlockDecl {
            states: 1,
            linear: Some(lag()),
            ..signal(&["u"], &["y"])
        };
        assert!(fits(&lag_block));
        // Guards, a state count the matrices disagree with, or outputs that change only at
        // events each keep it out of the kernels.
        assert!(!fits(&lag_block.clone().with_guards(&["g"])));
        assert!(!fits(&BlockDecl {
            states: 2,
            ..lag_block.clone()
        }));
        assert!(!fits(&BlockDecl {
            outputs: crate::block::Outputs::Constant,
            ..lag_block.clone()
        }));
        assert!(!fits(&BlockDecl {
            linear: None,
            ..lag_block
        }));
    }
}
