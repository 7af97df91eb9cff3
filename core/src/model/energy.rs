//! The energy audit: where the mechanical work of a run went.
//!
//! Each force element's mechanical work `W` (the integrated power it delivers to its
//! flanges) is a state; a source's work is reported as supplied energy, any other
//! element's `−W − ΔE_stored` as dissipated. Friction joints integrate `tau·w_rel`. The
//! kinetic energy removed by velocity projections (locks, inconsistent initial speeds) and
//! block impacts is the impact loss. The residual `Σ sources − Σ losses − impact − ΔKE −
//! ΔPE` closes to the solver tolerance. Rigid bodies contribute their kinetic energy of
//! translation and rotation to `KE` and gravity's `m·g·z` to `PE`.
//!
//! Stored energy that jumps at an event with no work done is impact loss too (negative
//! when the event added energy). An event is an instant: no force does work across it, so
//! whatever a block's stored energy changes by between just before and just after the
//! instant's resets and mode changes was paid by nobody — a state a block's event handler
//! resets (a tire patch's deflection at breakaway), a mode that changes what a state means
//! (a massless wheel's compression jumping at a located kerb step), an input that jumps
//! because another block's mode did (an anti-roll bar twisted by that kerb). The event
//! handling (`events.rs`) takes every block's stored energy on both sides of each event
//! instant, books the difference as impact loss with the opposite sign and logs it on the
//! block (`impact`, "stored energy ... J"); the block's own loss is `−W − (ΔE_stored −
//! its jumps)`, so a jump is booked once, where it happened, and never as energy the block
//! delivered. The stored energy at the start is taken after the initial event (the modes
//! set), at the end with the final modes.
//!
//! Energy exchanged at signal level (an electrical bus of powers wired as signals) is
//! booked through reserved block variables (J, integrated from 0 at the start):
//! - a store declaring `energy_chemical` and `energy_terminal` (a `Battery`) supplies its
//!   chemical energy (a source under its name) and loses `energy_chemical −
//!   energy_terminal` (the loss `NAME.loss`);
//! - a mechanical source declaring `energy_electrical` (an `ElectricMachine`) draws its
//!   supplied energy from the bus. When the model has a store, such sources are not
//!   sources: the stores' terminal energy minus what they drew is booked as the loss
//!   `electrical_loads` (an auxiliary load wired to the bus, any other consumer).
//!
//! An engine with a fuel law supplies its fuel's chemical energy (`fuel_lhv` · fuel) and
//! books fuel power − shaft power as its internal loss, through the mechanical work and
//! internal-loss states like any source.
//!
//! The thermal side ([`HeatAudit`]): the loss heat the blocks delivered to connected heat
//! ports equals the heat stored in the capacitive nodes (`C·ΔT`) plus the heat that left
//! through fixed temperatures; its residual closes to the solver tolerance as well. The
//! delivered heat is part of the mechanical losses above (a loss routed to a heat port is
//! both dissipated mechanically and stored or conducted away thermally).

use crate::block::Cx;

use super::eval::{buffers, cx_of, view};
use super::Model;
use crate::block::Buffers;
use crate::ids::BlockIx;

/// The energy audit of a run: where the mechanical work went.
#[derive(Debug, Clone, PartialEq)]
pub struct EnergyAudit {
    /// Work delivered by source blocks (engines, torque sources), J.
    pub sources: Vec<(String, f64)>,
    /// Energy dissipated by each non-source element (friction joints, dampers, converter,
    /// road load), J (positive = dissipated).
    pub losses: Vec<(String, f64)>,
    /// Kinetic energy at the start, J.
    pub kinetic_initial: f64,
    /// Kinetic energy at the end, J.
    pub kinetic_final: f64,
    /// Stored (spring) energy at the start, J.
    pub potential_initial: f64,
    /// Stored energy at the end, J.
    pub potential_final: f64,
    /// Energy the events removed with no work done, J: the kinetic energy of velocity
    /// projections at mode changes and of impacts, less the stored energy the events
    /// added (jumps of the blocks' stored energy, see the module docs; negative when a
    /// kerb step compressed the springs more than the impacts dissipated).
    pub impact_loss: f64,
    /// `Σ sources − Σ losses − impact − ΔKE − ΔPE`, J.
    pub residual: f64,
    /// `residual / max(Σ|sources|, Σ|losses|, KE)`.
    pub relative_residual: f64,
    /// Where the loss heat went (empty without heat ports).
    pub heat: HeatAudit,
}

/// The thermal part of the energy audit.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HeatAudit {
    /// Loss heat the blocks delivered to connected heat ports, J.
    pub delivered: f64,
    /// Heat stored in each capacitive thermal node, `C·(T_end − T_start)`, J.
    pub stored: Vec<(String, f64)>,
    /// Heat that left the model through each fixed-temperature node, J.
    pub to_fixed: Vec<(String, f64)>,
    /// `delivered − Σ stored − Σ to_fixed`, J.
    pub residual: f64,
    /// `residual / max(|delivered|, Σ|stored|, Σ|to_fixed|)`.
    pub relative_residual: f64,
}

impl EnergyAudit {
    /// The audit's energy scale: `max(Σ|sources|, Σ|losses|, kinetic energy)`, J.
    fn scale(&self) -> f64 {
        self.sources
            .iter()
            .map(|s| s.1.abs())
            .sum::<f64>()
            .max(self.losses.iter().map(|s| s.1.abs()).sum::<f64>())
            .max(self.kinetic_initial.max(self.kinetic_final))
            .max(1e-300)
    }
    /// The elements whose "loss" is negative beyond `1e-6` of the audit's scale: they
    /// delivered energy although they are no source (a damper, a tire or a brake cannot).
    /// The audit may still close (their work is accounted), so this is the check that
    /// catches energy from nothing (a wheel pushing a sunk car out of the ground).
    pub fn energy_created(&self) -> Vec<(String, f64)> {
        let scale = self.scale();
        self.losses
            .iter()
            .filter(|(_, l)| *l < -1e-6 * scale)
            .map(|(n, l)| (n.clone(), -l))
            .collect()
    }

    /// The audit as it appears in `summary.json` under `energy` (J): `sources` and
    /// `losses` as objects by element name, then the totals, and `heat` for models with
    /// heat ports.
    pub fn to_json(&self) -> serde_json::Value {
        let list = |v: &[(String, f64)]| -> serde_json::Value {
            serde_json::Value::Object(
                v.iter()
                    // A zero loss of an idle element is written "0.0", not "-0.0".
                    .map(|(n, e)| {
                        (
                            n.clone(),
                            serde_json::Value::from(if *e == 0.0 { 0.0 } else { *e }),
                        )
                    })
                    .collect(),
            )
        };
        let mut v = serde_json::json!({
            "sources": list(&self.sources),
            "losses": list(&self.losses),
            "kinetic_initial": self.kinetic_initial,
            "kinetic_final": self.kinetic_final,
            "potential_initial": self.potential_initial,
            "potential_final": self.potential_final,
            "impact_loss": self.impact_loss,
            "residual": self.residual,
            "relative_residual": self.relative_residual,
        });
        // The thermal part, for models with heat ports: heat delivered by the blocks,
        // stored per capacitive node (C·ΔT), left through each fixed temperature.
        let h = &self.heat;
        if !h.stored.is_empty() || !h.to_fixed.is_empty() {
            v["heat"] = serde_json::json!({
                "delivered": h.delivered,
                "stored": list(&h.stored),
                "to_fixed": list(&h.to_fixed),
                "residual": h.residual,
                "relative_residual": h.relative_residual,
            });
        }
        v
    }
}

impl Model {
    /// The energy audit of the last run (from its final state).
    pub fn energy_audit(&mut self) -> EnergyAudit {
        let x = self.run.last_x.clone();
        let x0 = self.run.first_x.clone();
        let plan = self.plan.clone();
        let n = plan.nodes.len();
        // The stored energy at the start as the initial event left it (modes set); a run
        // that never got there measures from the first state with the final modes.
        let pe0 = if self.run.stored_start.len() == plan.blocks.len() {
            self.run.stored_start.clone()
        } else {
            self.block_potentials(plan.settings.start_time, &x0)
        };
        let pe1 = self.block_potentials(plan.settings.stop_time, &x);
        let jumps = &self.run.stored_jumps;
        let mut sources = Vec::new();
        let mut losses = Vec::new();
        for (b, bp) in plan.blocks.iter().enumerate() {
            if let Some(e) = bp.energy {
                let w = x[e.ix()];
                // The work dissipated inside the block (an engine's friction) is a loss
                // of its own, not part of what a source supplied.
                let inside = bp.internal_loss.map_or(0.0, |l| x[l.ix()]);
                if self.decls[b].is_energy_source() {
                    sources.push((bp.name.clone(), w + inside));
                } else {
                    // What its stored energy gained without work at events is impact
                    // loss (negative), not this block's.
                    let stored = pe1[b] - pe0[b] - jumps[b];
                    losses.push((bp.name.clone(), -w - inside - stored));
                }
                if bp.internal_loss.is_some() {
                    losses.push((format!("{}.{}", bp.name, bp.internal_loss_name), inside));
                }
            }
        }
        for (j, jp) in plan.joints.iter().enumerate() {
            losses.push((jp.name.clone(), -x[plan.x_joint_energy + j]));
        }
        // (The model was last evaluated at the final state, by `block_potentials`.)
        self.book_signal_energy(&x, &mut sources, &mut losses);
        let kinetic_initial = self.net.kinetic_energy(&x0[n..2 * n]) + self.frames_energy(&x0).0;
        let kinetic_final = self.net.kinetic_energy(&x[n..2 * n]) + self.frames_energy(&x).0;
        let potential_initial: f64 = pe0.iter().sum::<f64>() + self.frames_energy(&x0).1;
        let potential_final: f64 = pe1.iter().sum::<f64>() + self.frames_energy(&x).1;
        let src: f64 = sources.iter().map(|s| s.1).sum();
        let loss: f64 = losses.iter().map(|s| s.1).sum();
        let residual = src
            - loss
            - self.run.impact_loss
            - (kinetic_final - kinetic_initial)
            - (potential_final - potential_initial);
        let mut audit = EnergyAudit {
            sources,
            losses,
            kinetic_initial,
            kinetic_final,
            potential_initial,
            potential_final,
            impact_loss: self.run.impact_loss,
            residual,
            relative_residual: 0.0,
            heat: self.heat_audit(&x0, &x),
        };
        audit.relative_residual = residual / audit.scale();
        audit
    }

    /// The value of each block's variable `name` at the final state `x` (the model
    /// evaluated there), by block: `None` for blocks without it.
    fn final_var(&self, x: &[f64], name: &str) -> Vec<Option<f64>> {
        let plan = &self.plan;
        let t = plan.settings.stop_time;
        (0..plan.blocks.len())
            .map(|b| {
                let blk = &self.blocks[b];
                let i = self.decls[b]
                    .variables
                    .iter()
                    .find_map(|v| match v.source {
                        crate::block::VarSource::Custom(i) if v.name == name => Some(i),
                        _ => None,
                    })?;
                let b = BlockIx::at(b);
                cx_of!(cx = self, plan, b, t, x);
                Some(blk.var(&cx, i))
            })
            .collect()
    }

    /// Book the signal-level stores and bus consumers (see the module docs) into the
    /// mechanical `sources` and `losses`.
    fn book_signal_energy(
        &self,
        x: &[f64],
        sources: &mut Vec<(String, f64)>,
        losses: &mut Vec<(String, f64)>,
    ) {
        let chemical = self.final_var(x, "energy_chemical");
        let terminal = self.final_var(x, "energy_terminal");
        let mut stores = Vec::new();
        for (b, bp) in self.plan.blocks.iter().enumerate() {
            if let (Some(c), Some(t)) = (chemical[b], terminal[b]) {
                stores.push((bp.name.clone(), c, t));
            }
        }
        if stores.is_empty() {
            return;
        }
        let consumers: Vec<&str> = self
            .final_var(x, "energy_electrical")
            .iter()
            .zip(&self.plan.blocks)
            .filter(|(e, _)| e.is_some())
            .map(|(_, bp)| bp.name.as_str())
            .collect();
        // What the machines supplied to the network (their electrical energy) came from the
        // stores' terminals.
        let mut drawn = 0.0;
        sources.retain(|(n, e)| {
            let consumer = consumers.contains(&n.as_str());
            if consumer {
                drawn += e;
            }
            !consumer
        });
        let delivered: f64 = stores.iter().map(|s| s.2).sum();
        for (k, (name, c, t)) in stores.into_iter().enumerate() {
            sources.insert(k, (name.clone(), c));
            losses.push((format!("{name}.loss"), c - t));
        }
        losses.push(("electrical_loads".into(), delivered - drawn));
    }

    /// Kinetic (translation + rotation) and gravitational potential energy of the rigid
    /// bodies in state `x`, J.
    pub(super) fn frames_energy(&self, x: &[f64]) -> (f64, f64) {
        use crate::frame::FRAME_STATES as S;
        let xs = &x[self.plan.frames_x.clone()];
        self.frames
            .iter()
            .enumerate()
            .fold((0.0, 0.0), |(k, p), (f, m)| {
                let s = &xs[f * S..(f + 1) * S];
                (k + m.kinetic_energy(s), p + m.potential_energy(s))
            })
    }

    /// The thermal audit between the states `x0` and `x`.
    fn heat_audit(&self, x0: &[f64], x: &[f64]) -> HeatAudit {
        let tp = &self.plan.thermal;
        let mut a = HeatAudit::default();
        for (k, nd) in tp.nodes.iter().enumerate() {
            match nd.kind {
                crate::thermal::HeatNodeKind::Capacitive { state } => a.stored.push((
                    nd.name.clone(),
                    self.heat.capacity(k) * (x[state.ix()] - x0[state.ix()]),
                )),
                crate::thermal::HeatNodeKind::Fixed { slot } => a.to_fixed.push((
                    nd.name.clone(),
                    x[tp.x_fixed + slot] - x0[tp.x_fixed + slot],
                )),
                crate::thermal::HeatNodeKind::Algebraic { .. } => {}
            }
        }
        if let Some(s) = tp.x_injected {
            a.delivered = x[s.ix()] - x0[s.ix()];
        }
        let stored: f64 = a.stored.iter().map(|s| s.1).sum();
        let out: f64 = a.to_fixed.iter().map(|s| s.1).sum();
        a.residual = a.delivered - stored - out;
        let scale = a
            .delivered
            .abs()
            .max(a.stored.iter().map(|s| s.1.abs()).sum::<f64>())
            .max(a.to_fixed.iter().map(|s| s.1.abs()).sum::<f64>())
            .max(1e-300);
        a.relative_residual = a.residual / scale;
        a
    }

    /// Stored energy of every block at `(t, x)`.
    fn block_potentials(&mut self, t: f64, x: &[f64]) -> Vec<f64> {
        self.eval(t, x);
        self.stored_energies(t, x)
    }

    /// Stored energy of every block at `(t, x)`, the model already evaluated there with
    /// the blocks' current modes (the buffers the blocks read built once for all).
    pub(super) fn stored_energies(&self, t: f64, x: &[f64]) -> Vec<f64> {
        let plan = &*self.plan;
        let buf = buffers!(self, x, plan.nodes.len());
        plan.rt
            .iter()
            .zip(&self.blocks)
            .map(|(rt, blk)| blk.potential_energy(&view(rt, t, x, &buf)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{Block, BlockDecl, EventCx, Forces, MechDecl, PortDecl};
    use crate::params::{BlockBuild, BlockType, Registry};
    use crate::{compile, Diagram, EventTag, RunStatus};

    const C: f64 = 100.0;
    const RESET_AT: f64 = 0.5;

    /// A flywheel (1 kg·m²) on a torsion spring to the ground (`C` N·m/rad) wound up by
    /// its rest angle, a state starting at 1 rad; at `RESET_AT` its time event sets the
    /// rest angle to the flywheel's angle, relaxing the spring with no work done.
    struct RelaxedSpring;

    impl Block for RelaxedSpring {
        fn declare(&self) -> BlockDecl {
            BlockDecl {
                ports: vec![PortDecl::rot("a")],
                states: 1,
                mech: MechDecl {
                    masses: vec![(0, 1.0)],
                    has_forces: true,
                    ..MechDecl::default()
                },
                ..BlockDecl::default()
            }
        }
        fn initial_states(&self, x: &mut [f64]) {
            x[0] = 1.0;
        }
        fn forces(&self, cx: &Cx, f: &mut Forces) {
            f.add(0, -C * (cx.q(0) - cx.x[0]));
        }
        fn potential_energy(&self, cx: &Cx) -> f64 {
            0.5 * C * (cx.q(0) - cx.x[0]).powi(2)
        }
        fn next_time_event(&self, t: f64) -> f64 {
            if t < RESET_AT {
                RESET_AT
            } else {
                f64::INFINITY
            }
        }
        fn time_event(&mut self, ecx: &mut EventCx) {
            ecx.x[0] = ecx.q(0);
        }
    }

    /// A state reset by a block's event handler drops its spring's energy with no work
    /// done: the audit books the drop as impact loss (logged on the block), the block's
    /// own loss stays zero, and the balance closes.
    #[test]
    fn a_spring_relaxed_by_its_event_handler_books_its_energy_as_impact_loss() {
        let mut reg = Registry::new();
        reg.register(BlockType {
            name: "RelaxedSpring",
            category: "test",
            doc: "a flywheel on a spring relaxed at 0.5 s",
            params: vec![],
            build: BlockBuild::Primitive(|_| Ok(Box::new(RelaxedSpring))),
            ports_doc: "a[rot]",
        });
        let mut d = Diagram::new("relaxed");
        d.add("spring", "RelaxedSpring", serde_json::json!({}));
        d.settings.stop_time = 1.0;
        d.settings.rtol = 1e-10;
        d.settings.atol = 1e-12;
        let mut m = compile(&d, &reg).expect("compiles");
        let r = m.run();
        assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
        let a = m.energy_audit();
        // Before the reset the flywheel swings on the spring, `q = 1 − cos(ω·t)` with
        // `ω = √C`: the spring holds `½·C·(q − 1)² = 50·cos²(ω·t)` J, released at the
        // reset; after it the flywheel swings about its new rest angle.
        let jump: Vec<_> = r
            .events
            .iter()
            .filter(|e| e.block == "spring" && e.kind == EventTag::Impact)
            .collect();
        assert_eq!(jump.len(), 1, "{:?}", r.events);
        assert_eq!(jump[0].time, RESET_AT);
        let released = 50.0 * (C.sqrt() * RESET_AT).cos().powi(2);
        assert!(released > 1.0);
        assert!(
            (a.impact_loss - released).abs() <= 1e-7 * 50.0,
            "impact {} J vs released {released} J",
            a.impact_loss
        );
        let logged: f64 = jump[0]
            .detail
            .split("J at the event, ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.parse().ok())
            .expect("the jump in the log line");
        assert!(
            (logged + a.impact_loss).abs() <= 1e-9 * released,
            "{}",
            jump[0].detail
        );
        assert!(a.losses[0].1.abs() <= 1e-7 * 50.0, "{a:?}");
        assert!(a.relative_residual.abs() <= 1e-7, "{a:?}");
    }

    /// A closed audit can still hide energy from nothing (a sunk car's wheels pushing it
    /// out of the ground booked −4.6 MJ of "loss" each): the negative losses beyond
    /// round-off are named, the round-off ones and the sources are not.
    #[test]
    fn negative_losses_beyond_round_off_are_energy_created() {
        let a = EnergyAudit {
            sources: vec![("engine".into(), 1000.0)],
            losses: vec![
                ("brake".into(), 600.0),
                ("aero".into(), -1e-9),
                ("fl".into(), -4.6e6),
            ],
            kinetic_initial: 0.0,
            kinetic_final: 4.6e6 + 400.0,
            potential_initial: 0.0,
            potential_final: 0.0,
            impact_loss: 0.0,
            residual: 0.0,
            relative_residual: 0.0,
            heat: HeatAudit::default(),
        };
        assert_eq!(a.energy_created(), vec![("fl".to_string(), 4.6e6)]);
    }
}
