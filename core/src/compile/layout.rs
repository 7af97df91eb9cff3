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

/// Lay out the buffers of `blocks` wired by `w`.
pub(crate) fn layout(
    names: &[String],
    types: &[&'static str],
    decls: &[BlockDecl],
    w: &Wiring,
) -> Layout {
    let nb = decls.len();
    let n_nodes = w.nodes.len();
    // Output slots first, block by block, then constant slots for unconnected inputs.
    let mut y_start = Vec::with_capacity(nb + 1);
    let mut n_signals = 0;
    for ports in &w.ports {
        y_start.push(n_signals);
        n_signals += ports.iter().filter(|p| p.kind == PortKind::Out).count();
    }
    y_start.push(n_signals);
    // Then one slot per variable wired as a signal source.
    let tap_base = n_signals;
    n_signals += w.taps.len();
    let out_slot = |at: super::connect::PortAt| {
        let before = w.ports[at.block.ix()][..at.port]
            .iter()
            .filter(|p| p.kind == PortKind::Out)
            .count();
        SlotIx::at(y_start[at.block.ix()] + before)
    };
    let mut in_slots = Vec::new();
    let mut slot_defaults = Vec::new();
    let mut port_dof = Vec::new();
    let mut rows = Vec::new();
    let mut joints = Vec::new();
    let mut plans = Vec::with_capacity(nb);
    let mut x_off = 2 * n_nodes;
    let mut g_off = 0;
    for b in 0..nb {
        let ports = &w.ports[b];
        let inputs_start = in_slots.len();
        for (p, decl) in ports.iter().enumerate() {
            if decl.kind != PortKind::In {
                continue;
            }
            let slot = match w.driver[b][p] {
                Some(Src::Port(at)) => out_slot(at),
                Some(Src::Tap(k)) => SlotIx::at(tap_base + k),
                None => {
                    let s = SlotIx::at(n_signals);
                    n_signals += 1;
                    slot_defaults.push((s, decl.default.unwrap_or(0.0)));
                    s
                }
            };
            in_slots.push(slot);
        }
        let tab_start = port_dof.len();
        // Mechanical ports index their node, frame ports their rigid body, heat ports
        // their thermal node.
        port_dof.extend(
            w.node[b]
                .iter()
                .zip(&w.frame_of[b])
                .zip(&w.heat_node[b])
                .map(|((n, f), h)| n.map(|n| n.0).or(f.map(|f| f.0)).or(*h).unwrap_or(u32::MAX)),
        );
        let blk = &decls[b];
        let decl = &blk.mech;
        let rows_start = rows.len();
        for c in &decl.constraints {
            let tracking = match c.kind {
                RowKind::Velocity => None,
                RowKind::Tracking { input, .. } => in_slots.get(inputs_start + input).copied(),
            };
            rows.push(RowPlan {
                block: BlockIx::at(b),
                tracking,
            });
        }
        let joints_start = joints.len();
        for (k, f) in decl.frictions.iter().enumerate() {
            joints.push(JointPlan {
                block: BlockIx::at(b),
                local: k,
                name: if f.label.is_empty() {
                    names[b].clone()
                } else {
                    format!("{}.{}", names[b], f.label)
                },
            });
        }
        let nx = blk.states;
        let ng = blk.n_guards();
        let n_in = in_slots.len() - inputs_start;
        let n_out = y_start[b + 1] - y_start[b];
        plans.push(BlockPlan {
            name: names[b].clone(),
            type_name: types[b],
            ports: ports.clone(),
            x: x_off..x_off + nx,
            y: y_start[b]..y_start[b + 1],
            inputs: inputs_start..in_slots.len(),
            port_tab: tab_start..port_dof.len(),
            rows: rows_start..rows.len(),
            joints: joints_start..joints.len(),
            guards: g_off..g_off + ng,
            energy: None,
            // Marked here, numbered with the work integrals below.
            internal_loss: (decl.has_forces && decl.internal_loss).then_some(StateIx::at(0)),
            internal_loss_name: blk.loss_name,
            has_forces: decl.has_forces,
            constant: blk.constant_outputs(),
            linear: linear_fits(blk, n_in, n_out),
        });
        x_off += nx;
        g_off += ng;
    }
    // Rigid bodies after the block states.
    let frames_x = x_off..x_off + crate::frame::FRAME_STATES * w.frames.len();
    x_off = frames_x.end;
    // Work integrals: one per block with forces or tracking rows (and one for the work a
    // block dissipates inside itself, right after it), then one per joint.
    for bp in plans.iter_mut() {
        let tracking = rows[bp.rows.clone()].iter().any(|r| r.tracking.is_some());
        if bp.has_forces || tracking {
            bp.energy = Some(StateIx::at(x_off));
            x_off += 1;
        }
        if bp.internal_loss.is_some() {
            bp.internal_loss = Some(StateIx::at(x_off));
            x_off += 1;
        }
    }
    let x_joint_energy = x_off;
    x_off += joints.len();
    let mut lay = Layout {
        blocks: plans,
        in_slots,
        port_dof,
        n_signals,
        slot_defaults,
        nodes: w
            .nodes
            .iter()
            .map(|n| NodePlan {
                name: n.name.clone(),
                kind: n.kind,
            })
            .collect(),
        rows,
        joints,
        n_states: x_off,
        x_joint_energy,
        n_block_guards: g_off,
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
