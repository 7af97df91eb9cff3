//! Event handling: block time events and mode updates, and the friction stuck/slip
//! machine, iterated at one instant until nothing changes.
//!
//! At the start of a run (the `Initial` event) the initial speeds are first made
//! consistent with the always-active constraints (gears, grounds, rolling wheels) by a
//! momentum-conserving projection; any kinetic energy that projection removes is logged
//! as an `impact` event at the start time and reported as a warning. Only then are the
//! friction joints given their modes, so a brake engaged at `t = 0` on a spinning
//! flywheel slides (it cannot stop it instantly).
//!
//! Every block's stored energy is taken at the start of each event instant and again
//! after its resets and mode changes: the difference, which no force paid for (an instant
//! has no duration to do work in), is booked as impact loss (negative when the event added
//! energy) and logged on the block; see the energy audit (`energy.rs`). Booking the jump
//! where the audit sees it, rather than asking each block to report its own, also covers
//! the jumps no block can see: an anti-roll bar whose input (a wheel's compression) jumps
//! because the wheel's mode changed at a kerb has no event of its own.

use drivelink_solver::{EventAction, EventCause, EventKind, SystemError};

use crate::block::{Block, EventCx, FrictionMode, PortKind};
use crate::ids::BlockIx;
use crate::plan::Plan;
use crate::result::{EventRecord, EventTag};

use super::eval::{torque_slack, SLIP_EPS};
use super::{Model, ENGAGE_OFF, ENGAGE_ON};
use crate::block::Buffers;

/// Time events of different blocks within this distance of each other are one instant:
/// every block due within it is called at the instant (`1e-13` relative to `max(1, |t|)`,
/// below the solver's snapping distance of `1e-12`).
fn time_event_tol(t: f64) -> f64 {
    1e-13 * t.abs().max(1.0)
}

impl Model {
    /// Call `f` on block `b` with its event view at `t` and log what it reports (`plan`:
    /// the model's, passed in so the many calls of an event share one reference).
    fn block_event<R>(
        &mut self,
        plan: &Plan,
        b: BlockIx,
        t: f64,
        x: &mut [f64],
        stop: &mut bool,
        f: impl FnOnce(&mut dyn Block, &mut EventCx) -> R,
    ) -> R {
        let n = plan.nodes.len();
        let mut log: Vec<(EventTag, String)> = Vec::new();
        let mut impacts: Vec<(usize, f64)> = Vec::new();
        let mut failure: Option<String> = None;
        let xr = plan.blocks[b.ix()].x.clone();
        // The block's own states are mutable; the node speeds and positions it reads are
        // a copy (blocks change node speeds only through impacts, applied below).
        // The rigid bodies' states follow all block states.
        let (nodes, rest) = x.split_at_mut(2 * n);
        let off = 2 * n;
        let (own, tail) = rest.split_at_mut(plan.frames_x.start - off);
        let buf = Buffers {
            sig: &self.ev.sig,
            in_slots: &plan.in_slots,
            port_dof: &plan.port_dof,
            pos: &nodes[..n],
            vel: &nodes[n..2 * n],
            acc: &self.net.a,
            row_lambda: &self.net.lambda_rows,
            joint_tau: &self.ev.joint_tau,
            modes: &self.net.modes,
            frames: &tail[..plan.frames_x.len()],
            // The bodies' poses of the evaluation every event handling starts with (blocks
            // never change body states in their event calls).
            frame_states: &self.ev.frame_states,
            frame_acc: &self.ev.frame_acc,
            temp: &self.heat.temp,
        };
        let mut ecx = EventCx::new(
            t,
            &mut own[xr.start - off..xr.end - off],
            buf,
            plan.block_tables(b),
            &mut log,
            stop,
        )
        .with_impacts(&mut impacts)
        .with_failure(&mut failure);
        let r = f(&mut *self.blocks[b.ix()], &mut ecx);
        self.cache.current = false;
        for (tag, d) in log {
            self.push_event(t, &plan.blocks[b.ix()].name, tag, d);
        }
        if let Some(message) = failure {
            if self.ev.failure.is_none() {
                self.ev.failure = Some(format!(
                    "block '{}' ({}): {message}",
                    plan.blocks[b.ix()].name,
                    plan.blocks[b.ix()].type_name
                ));
            }
        }
        if !impacts.is_empty() {
            self.apply_impacts(t, x, &impacts);
        }
        r
    }

    /// Apply the impacts a block asked for (see [`EventCx::impact`]): an impulse along each
    /// joint's row through the network with the current modes, the kinetic energy removed
    /// booked as impact loss and logged.
    fn apply_impacts(&mut self, t: f64, x: &mut [f64], impacts: &[(usize, f64)]) {
        let n = self.plan.nodes.len();
        if n == 0 {
            return;
        }
        if self.dirty_factor && self.refactor(t).is_err() {
            return;
        }
        for &(j, e) in impacts {
            let ke = self.net.kinetic_energy(&x[n..2 * n]);
            if let Some(lost) = self.net.impact(j, e, &mut x[n..2 * n]) {
                self.run.impact_loss += lost;
                // A plastic impact that removes only a round-off residual slip (a dog
                // engaging at a located zero of the slip) is not worth a log line.
                if e == 0.0 && lost.abs() <= 1e-9 * ke.max(1e-9) {
                    continue;
                }
                let name = self.plan.joints[j].name.clone();
                self.push_event(
                    t,
                    &name,
                    EventTag::Impact,
                    format!(
                        "impact with restitution {e}, w_rel = {:.6e} after; dissipated {lost:.6e} J",
                        self.net.friction_rows[j].dot(&x[n..2 * n])
                    ),
                );
            }
        }
        self.cache.valid = false;
        self.eval(t, x);
    }

    /// Event handling at `t`: time events of blocks, block mode updates, friction mode
    /// iteration, repeated until nothing changes.
    pub(super) fn handle(
        &mut self,
        t: f64,
        x: &mut [f64],
        cause: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        // A state or time event (or the next call of an event iteration) comes right after
        // the solver evaluated the guards at this very point under the modes and held
        // values still in force: that kept full evaluation is the one this handler starts
        // from. The initial event and a change from outside evaluate anew.
        let kept = matches!(
            cause.kind,
            EventKind::State | EventKind::Time | EventKind::Iteration
        ) && self.cache.current
            && self.kept_at(t, x);
        self.cache.valid = false;
        // Modes and held inputs may change here: the held guards are evaluated anew.
        self.ev.held_g_valid = false;
        let mut stop = false;
        if cause.kind == EventKind::Initial {
            self.initial_speeds_from_inputs(t, x)?;
            self.initial_projection(t, x)?;
        }
        if !kept {
            self.refresh_constants(t, x);
            self.eval(t, x);
        }
        // The stored energy before this instant's resets and mode changes (none at the
        // initial event: the modes are set there).
        let before = (cause.kind != EventKind::Initial).then(|| self.stored_energies(t, x));
        let plan = self.plan.clone();
        // The blocks whose time event calls ran since the last evaluation: a later event
        // call (a time event, or a mode update of the first round) is preceded by an
        // evaluation only if one of them reaches what it reads (`reach.rs`).
        let mut pending = std::mem::take(&mut self.ev.pending);
        pending.clear();
        if cause.kind == EventKind::Time {
            let tol = time_event_tol(t);
            for b in 0..plan.blocks.len() {
                if self.run.next_te[b] <= t + tol {
                    if pending.iter().any(|&p| self.reaches(p, b)) {
                        self.refresh_constants(t, x);
                        self.eval(t, x);
                        pending.clear();
                    }
                    self.block_event(&plan, BlockIx::at(b), t, x, &mut stop, |blk, ecx| {
                        blk.time_event(ecx)
                    });
                    if stop && self.run.stopped_by.is_none() {
                        self.run.stopped_by = Some(plan.blocks[b].name.clone());
                    }
                    pending.push(b);
                }
            }
            self.take_failure()?;
        }
        // A stop requested in `update_modes` counts only from the round in which nothing
        // changed: in an earlier round a block listed before the ones driving it may
        // still read their outputs from before this instant's mode updates.
        let mut round_stop = None;
        // The first mode update a time event call reaches.
        let first_reached = pending.iter().filter_map(|&p| self.first_reached(p)).min();
        for _round in 0..100 {
            let mut changed = false;
            round_stop = None;
            for b in 0..plan.blocks.len() {
                if !pending.is_empty() && first_reached == Some(b) {
                    self.refresh_constants(t, x);
                    self.eval(t, x);
                    pending.clear();
                }
                let current = self.cache.current;
                let mut asked = false;
                let c = self.block_event(&plan, BlockIx::at(b), t, x, &mut asked, |blk, ecx| {
                    blk.update_modes(ecx)
                });
                // No mode change: nothing the signals show changed (a resampled input is
                // held for later).
                self.cache.current = current && !c;
                if c {
                    changed = true;
                    self.refresh_constants(t, x);
                    self.eval(t, x);
                    pending.clear();
                }
                if asked && round_stop.is_none() {
                    round_stop = Some(b);
                }
            }
            // Time event calls no mode update read: evaluated before the joints settle.
            if !pending.is_empty() {
                self.refresh_constants(t, x);
                self.eval(t, x);
                pending.clear();
            }
            self.take_failure()?;
            if self.settle_frictions(t, x)? {
                changed = true;
            }
            if !changed {
                break;
            }
            if !self.cache.current {
                self.eval(t, x);
            }
        }
        self.ev.pending = pending;
        // Refresh the cached next time events after the mode updates, at every kind of
        // event: a block may schedule one from `update_modes` (a gear selector's shift
        // time after a lever move located as a state event).
        // A block whose hit fell within the tolerance of this time event fired for that
        // hit here: its next one comes after the hit, not after `t` (a sample at
        // 3·0.1 = 0.30000000000000004 handled with a step at 0.3 must not fire again
        // 5.6e-17 s later).
        let fired_tol = if cause.kind == EventKind::Time {
            time_event_tol(t)
        } else {
            f64::NEG_INFINITY
        };
        for (b, blk) in self.blocks.iter().enumerate() {
            let old = self.run.next_te[b];
            let after = if old <= t + fired_tol { old.max(t) } else { t };
            self.run.next_te[b] = blk.next_time_event(after);
        }
        self.run.update_next_te_min();
        if let Some(b) = round_stop {
            stop = true;
            if self.run.stopped_by.is_none() {
                self.run.stopped_by = Some(plan.blocks[b].name.clone());
            }
        }
        self.book_stored_jumps(t, x, before);
        if stop {
            let who = self.run.stopped_by.clone().unwrap_or_default();
            self.push_event(t, &who, EventTag::Stop, "stop requested".into());
            return Ok(EventAction::Stop);
        }
        // The last evaluation is that of the final modes at (t, x): it serves the guards
        // and the output the solver asks for next at this instant.
        if self.cache.current {
            self.cache.t = t;
            self.cache.x.copy_from_slice(x);
            self.cache.has_x = true;
            self.cache.valid = true;
        }
        Ok(EventAction::Continue)
    }

    /// Book what the blocks' stored energy jumped by at this event instant, from
    /// `before` (each block's, taken before the instant's resets and mode changes) to now:
    /// no force does work across an instant, so the difference is energy the event itself
    /// added (+) or removed, booked as impact loss with the opposite sign and, beyond
    /// round-off, logged on the block. At the initial event (`before` = `None`) the stored
    /// energy the energy audit starts from is kept instead.
    fn book_stored_jumps(&mut self, t: f64, x: &[f64], before: Option<Vec<f64>>) {
        if !self.cache.current {
            self.eval(t, x);
        }
        let after = self.stored_energies(t, x);
        let Some(before) = before else {
            self.run.stored_start = after;
            return;
        };
        if before == after {
            return;
        }
        // Round-off against the energy in the model: what is stored, and the kinetic
        // energy of the shafts and bodies.
        let n = self.plan.nodes.len();
        let stored: f64 = before
            .iter()
            .zip(&after)
            .map(|(a, b)| a.abs().max(b.abs()))
            .sum();
        let scale = stored + self.net.kinetic_energy(&x[n..2 * n]) + self.frames_energy(x).0;
        for (b, (e0, e1)) in before.iter().zip(&after).enumerate() {
            let jump = e1 - e0;
            if jump == 0.0 || !jump.is_finite() {
                continue;
            }
            self.run.stored_jumps[b] += jump;
            self.run.impact_loss -= jump;
            if jump.abs() > 1e-9 * scale {
                let name = self.plan.blocks[b].name.clone();
                self.push_event(
                    t,
                    &name,
                    EventTag::Impact,
                    format!(
                        "stored energy {e0:.9e} -> {e1:.9e} J at the event, {jump:+.9e} J with no work done (booked as impact loss)"
                    ),
                );
            }
        }
    }

    /// A failure a block asked for in its last event call ([`EventCx::fail`]), as the
    /// error that fails the run.
    fn take_failure(&mut self) -> Result<(), SystemError> {
        match self.ev.failure.take() {
            Some(message) => Err(SystemError { message }),
            None => Ok(()),
        }
    }

    /// Make the initial speeds consistent with the always-active constraints (all joints
    /// free), conserving momentum; log the kinetic energy this removes.
    /// Node speeds that blocks derive from the rigid bodies' poses ([`Block::initial_speeds`])
    /// were first taken at instantiation with every signal at its default; at the initial
    /// event they are taken again with the inputs' values at the start time (a wheel
    /// steered at `t = 0` starts rolling along its steered heading), before the initial
    /// projection. Models without rigid bodies skip it.
    fn initial_speeds_from_inputs(&mut self, t: f64, x: &mut [f64]) -> Result<(), SystemError> {
        let n = self.plan.nodes.len();
        if n == 0 || self.plan.frames.is_empty() {
            return Ok(());
        }
        self.refactor(t)?;
        self.refresh_constants(t, x);
        self.eval(t, x);
        let plan = self.plan.clone();
        let mut stop = false;
        for b in 0..plan.blocks.len() {
            let speeds = self.block_event(&plan, BlockIx::at(b), t, x, &mut stop, |blk, ecx| {
                blk.initial_speeds(&ecx.view())
            });
            for (p, w) in speeds {
                x[n + plan.port_dof[plan.blocks[b].port_tab.start + p] as usize] = w;
            }
        }
        self.run.first_x.copy_from_slice(x);
        self.cache.valid = false;
        Ok(())
    }

    fn initial_projection(&mut self, t: f64, x: &mut [f64]) -> Result<(), SystemError> {
        let n = self.plan.nodes.len();
        if n == 0 {
            return Ok(());
        }
        self.refactor(t)?;
        let ke0 = self.net.kinetic_energy(&x[n..2 * n]);
        self.net.project(&mut x[n..2 * n]);
        let ke1 = self.net.kinetic_energy(&x[n..2 * n]);
        let lost = ke0 - ke1;
        if lost > 1e-9 * ke0.max(1e-9) {
            self.run.impact_loss += lost;
            self.push_event(
                t,
                "network",
                EventTag::Impact,
                format!(
                    "initial speeds are inconsistent with the rigid constraints; the momentum-conserving projection dissipated {lost:.6e} J"
                ),
            );
        }
        Ok(())
    }

    pub(super) fn push_event(&mut self, t: f64, block: &str, tag: EventTag, detail: String) {
        self.run.result.events.push(EventRecord {
            time: t,
            block: block.to_string(),
            kind: tag,
            detail,
        });
    }

    /// Refactor the network for the current modes, reporting a singular network by node.
    pub(super) fn refactor(&mut self, t: f64) -> Result<(), SystemError> {
        let plan = self.plan.clone();
        self.net.refactor().map_err(|s| SystemError {
            message: format!(
                "the mechanical network became singular after a mode change at t = {t} s: nodes {} have no inertia in a direction the constraints leave free",
                s.nodes.iter().map(|&i| plan.nodes[i].name.clone()).collect::<Vec<_>>().join(", ")
            ),
        })?;
        self.dirty_factor = false;
        self.cache.current = false;
        Ok(())
    }

    /// Candidate modes from the slips and engagements at `t`: an engaged joint whose slip
    /// reached zero locks, a free joint with normal force engages sliding.
    fn candidate_modes(&self, t: f64, x: &[f64], old: &[FrictionMode]) -> Vec<FrictionMode> {
        (0..old.len())
            .map(|j| {
                let w = self.ev.joint_wrel[j];
                let law = self.law(j, t, x, w);
                let engaged = if old[j] == FrictionMode::Free {
                    law.engagement > ENGAGE_ON
                } else {
                    law.engagement >= ENGAGE_OFF
                };
                if !engaged {
                    return FrictionMode::Free;
                }
                match old[j] {
                    FrictionMode::Locked => FrictionMode::Locked,
                    m => {
                        let s = m.sliding_sign();
                        let near = if s == 0.0 {
                            w.abs() <= SLIP_EPS
                        } else {
                            s * w <= SLIP_EPS
                        };
                        if near && self.starts_sliding(j, t, s) {
                            // Released at this instant, its slip still zero and growing
                            // in the sliding direction: it keeps sliding (Modelica's
                            // start-forward / start-backward phase), so a later call of
                            // the same instant's event iteration does not relock it.
                            m
                        } else if near {
                            FrictionMode::Locked
                        } else if w > 0.0 {
                            FrictionMode::SlidingForward
                        } else {
                            FrictionMode::SlidingBackward
                        }
                    }
                }
            })
            .collect()
    }

    /// Whether joint `j`, released from a lock (at `t`, or earlier with its slip not seen
    /// outside the round-off band since) and sliding in direction `s` with its slip still
    /// within `SLIP_EPS` of zero, is starting to slide rather than stopping: its slip
    /// accelerates in the sliding direction (after `eval`). At its release instant, and at
    /// any event soon after it (another block's event while the slip is still round-off
    /// small): relocking it there would undo the release with a projection, and the next
    /// event would release it again (the full car at throttle 0 failed this way: a
    /// comparison of the released shaft's speed with 0 switched every 1.6 ns).
    fn starts_sliding(&self, j: usize, t: f64, s: f64) -> bool {
        s != 0.0
            && self.ev.released_at[j] <= t
            && self.ev.released_at[j] > f64::NEG_INFINITY
            && s * self.net.friction_rows[j].dot(&self.net.a) >= 0.0
    }

    /// The direction a released load-dependent joint `j` (a lossy gear's mesh) starts to
    /// slide in: that of its slip's acceleration with the joint free (no friction torque),
    /// or `None` when that is zero. Its locked torque is no guide when another constraint
    /// acts on the same motion (a speed source's tracking row on the input shaft: the
    /// minimum-norm split of the two forces can give the mesh a torque of either sign, and
    /// a mesh started backward while the source drives it forward relocked and released
    /// again every 5e-13 s). Leaves the network factored for `cand` with `j` free.
    fn release_direction(
        &mut self,
        t: f64,
        x: &[f64],
        cand: &mut [FrictionMode],
        j: usize,
    ) -> Result<Option<FrictionMode>, SystemError> {
        cand[j] = FrictionMode::Free;
        self.net.set_modes(cand);
        self.refactor(t)?;
        self.eval(t, x);
        let acc = self.net.friction_rows[j].dot(&self.net.a);
        Ok(if acc > 0.0 {
            Some(FrictionMode::SlidingForward)
        } else if acc < 0.0 {
            Some(FrictionMode::SlidingBackward)
        } else {
            None
        })
    }

    /// The locked joint whose constraint torque leaves its static range the most, and
    /// whether it is over the top (`true`) or under the bottom.
    fn worst_violator(&self, t: f64, x: &[f64], cand: &[FrictionMode]) -> Option<(usize, bool)> {
        let mut worst: Option<(usize, f64, bool)> = None;
        for (j, m) in cand.iter().enumerate() {
            if *m != FrictionMode::Locked {
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
        worst.map(|w| (w.0, w.2))
    }

    /// The friction mode iteration at an event instant: lock the joints whose slip reached
    /// zero, check every locked joint's torque against its static range, release the worst
    /// violator in the direction of its torque, repeat. Projects speeds in `x`. Returns true
    /// if a mode changed.
    fn settle_frictions(&mut self, t: f64, x: &mut [f64]) -> Result<bool, SystemError> {
        let nf = self.plan.joints.len();
        let n = self.plan.nodes.len();
        if nf == 0 {
            if self.dirty_factor && n > 0 {
                self.refactor(t)?;
            }
            return Ok(false);
        }
        let old = self.net.modes.clone();
        if !self.cache.current {
            self.eval(t, x);
        }
        // A released joint whose slip has left the round-off band since is an ordinary
        // sliding joint again (see `starts_sliding`).
        for (j, m) in old.iter().enumerate() {
            if m.sliding_sign() * self.ev.joint_wrel[j] > SLIP_EPS {
                self.ev.released_at[j] = f64::NEG_INFINITY;
            }
        }
        let mut cand = self.candidate_modes(t, x, &old);
        for _iter in 0..(2 * nf + 2) {
            if self.dirty_factor || cand != self.net.modes {
                self.net.set_modes(&cand);
                self.refactor(t)?;
                let ke0 = self.net.kinetic_energy(&x[n..2 * n]);
                self.net.project(&mut x[n..2 * n]);
                let lost = ke0 - self.net.kinetic_energy(&x[n..2 * n]);
                self.run.impact_loss += lost;
                if lost > 1e-9 * ke0.max(1e-9) {
                    self.push_event(
                        t,
                        "network",
                        EventTag::Impact,
                        format!("velocity projection dissipated {lost:.6e} J"),
                    );
                }
            }
            if !self.cache.current {
                self.eval(t, x);
            }
            match self.worst_violator(t, x, &cand) {
                None => break,
                Some((j, high)) => {
                    let by_torque = if high {
                        FrictionMode::SlidingBackward
                    } else {
                        FrictionMode::SlidingForward
                    };
                    cand[j] = if self.load.is_load[j] {
                        self.release_direction(t, x, &mut cand, j)?
                            .unwrap_or(by_torque)
                    } else {
                        by_torque
                    };
                }
            }
        }
        if cand != self.net.modes {
            self.net.set_modes(&cand);
            self.refactor(t)?;
            self.eval(t, x);
        }
        let changed = old != self.net.modes;
        for (j, &from) in old.iter().enumerate() {
            if from != self.net.modes[j] {
                if from == FrictionMode::Locked && self.net.modes[j].sliding_sign() != 0.0 {
                    self.ev.released_at[j] = t;
                }
                self.log_mode_change(t, j, from);
            }
        }
        Ok(changed)
    }

    /// Log joint `j`'s change from mode `from` to its current mode.
    fn log_mode_change(&mut self, t: f64, j: usize, from: FrictionMode) {
        let to = self.net.modes[j];
        let tag = match (from, to) {
            (_, FrictionMode::Locked) => EventTag::Lock,
            (_, FrictionMode::Free) => EventTag::Free,
            (FrictionMode::Locked, _) => EventTag::Unlock,
            (FrictionMode::Free, _) => EventTag::Engage,
            _ => EventTag::ZeroCrossing,
        };
        let detail = match to {
            FrictionMode::Locked => {
                // A joint whose slip involves a translational node (a tire's r·w − v, a
                // linear brake) holds a force.
                let plan = &self.plan;
                let linear = self.net.friction_rows[j].terms.iter().any(|&(n, _)| {
                    plan.nodes
                        .get(n)
                        .is_some_and(|nd| nd.kind == PortKind::Trans)
                });
                let (what, unit) = if linear {
                    ("force", "N")
                } else {
                    ("torque", "N·m")
                };
                format!(
                    "locked, holding {what} {:.6} {unit}",
                    self.net.lambda_fric[j]
                )
            }
            _ => format!(
                "{} -> {}, w_rel = {:.3e}",
                from.name(),
                to.name(),
                self.ev.joint_wrel[j]
            ),
        };
        let name = self.plan.joints[j].name.clone();
        self.push_event(t, &name, tag, detail);
    }
}

#[cfg(test)]
mod tests {
    use drivelink_solver::{EventCause, EventKind, HybridSystem, OutputKind};
    use serde_json::json;

    use crate::block::Buffers;
    use crate::block::{Block, BlockDecl, Cx, EventCx, Feedthrough, Forces, MechDecl, Outputs};
    use crate::block::{PortDecl, VarDecl, VarSource};
    use crate::model::eval::{buffers, cx_of};
    use crate::params::{BlockBuild, BlockType, Params, Registry};
    use crate::{compile, Diagram, Model, RunStatus};

    /// Spring rate of [`Coil`], N·m/rad.
    const C: f64 = 40.0;
    /// Sample period of [`Ticker`], s.
    const PERIOD: f64 = 0.25;

    /// `y = 1 + sin(3 t)/2`, varying between the ticks.
    struct Wave;

    impl Block for Wave {
        fn declare(&self) -> BlockDecl {
            BlockDecl {
                ports: vec![PortDecl::output("y")],
                ..BlockDecl::default()
            }
        }
        fn outputs(&self, cx: &Cx, y: &mut [f64]) {
            y[0] = 1.0 + 0.5 * (3.0 * cx.t).sin();
        }
    }

    /// Holds its input, sampled every `PERIOD` s (a time event of its own).
    struct Ticker {
        held: f64,
    }

    impl Block for Ticker {
        fn declare(&self) -> BlockDecl {
            BlockDecl {
                ports: vec![PortDecl::input("u"), PortDecl::output("y")],
                feedthrough: Feedthrough::None,
                outputs: Outputs::Constant,
                time_event_period: Some((PERIOD, "period")),
                ..BlockDecl::default()
            }
        }
        fn reset(&mut self, _t0: f64) {
            self.held = 0.0;
        }
        fn outputs(&self, _cx: &Cx, y: &mut [f64]) {
            y[0] = self.held;
        }
        fn next_time_event(&self, t: f64) -> f64 {
            ((t / PERIOD).floor() + 1.0) * PERIOD
        }
        fn time_event(&mut self, cx: &mut EventCx) {
            self.held = cx.view().u(0);
        }
    }

    /// A flywheel (1 kg·m²) on a torsion spring (`C`) whose rest angle is its input: it
    /// stores `C (q − u)²/2`, which jumps whenever the held input does.
    struct Coil;

    impl Block for Coil {
        fn declare(&self) -> BlockDecl {
            BlockDecl {
                ports: vec![PortDecl::rot("a"), PortDecl::input("u")],
                variables: vec![VarDecl::new("stored", VarSource::Custom(0), "J")],
                mech: MechDecl {
                    masses: vec![(0, 1.0)],
                    has_forces: true,
                    ..MechDecl::default()
                },
                ..BlockDecl::default()
            }
        }
        fn forces(&self, cx: &Cx, f: &mut Forces) {
            f.add(0, -C * (cx.q(0) - cx.u(0)));
        }
        fn potential_energy(&self, cx: &Cx) -> f64 {
            0.5 * C * (cx.q(0) - cx.u(0)).powi(2)
        }
        fn var(&self, cx: &Cx, _i: usize) -> f64 {
            self.potential_energy(cx)
        }
    }

    /// A staircase `y = ⌊t / PERIOD⌋` whose level is a mode, set at the ticks by
    /// `update_modes` (its time events call nothing of their own).
    struct Stairs {
        level: f64,
    }

    impl Block for Stairs {
        fn declare(&self) -> BlockDecl {
            BlockDecl {
                ports: vec![PortDecl::output("y")],
                outputs: Outputs::Constant,
                ..BlockDecl::default()
            }
        }
        fn reset(&mut self, _t0: f64) {
            self.level = 0.0;
        }
        fn outputs(&self, _cx: &Cx, y: &mut [f64]) {
            y[0] = self.level;
        }
        fn next_time_event(&self, t: f64) -> f64 {
            ((t / PERIOD).floor() + 1.0) * PERIOD
        }
        fn update_modes(&mut self, cx: &mut EventCx) -> bool {
            let level = (cx.t / PERIOD).floor();
            let changed = level != self.level;
            self.level = level;
            changed
        }
    }

    fn registry() -> Registry {
        let mut r = Registry::new();
        let mut add = |name: &'static str, build: fn(&Params) -> _| {
            r.register(BlockType {
                name,
                category: "test",
                doc: "",
                params: vec![],
                build: BlockBuild::Primitive(build),
                ports_doc: "",
            })
        };
        add("Wave", |_| Ok(Box::new(Wave)));
        add("Ticker", |_| Ok(Box::new(Ticker { held: 0.0 })));
        add("Coil", |_| Ok(Box::new(Coil)));
        add("Stairs", |_| Ok(Box::new(Stairs { level: 0.0 })));
        r
    }

    /// `wave → ticker → coil`, run for 1 s with an output point at every tick; the model
    /// after its run.
    fn sampled_coil() -> Model {
        let mut d = Diagram::new("sampled_coil");
        d.add("wave", "Wave", json!({}));
        d.add("ticker", "Ticker", json!({}));
        d.add("coil", "Coil", json!({}));
        d.connect(&["wave.y", "ticker.u"]);
        d.connect(&["ticker.y", "coil.u"]);
        d.log(&["wave.y", "ticker.y", "coil.stored"]);
        ran(d)
    }

    /// The model of `d` after a run of 1 s with an output point at every tick.
    fn ran(mut d: Diagram) -> Model {
        d.settings.stop_time = 1.0;
        d.settings.output_interval = Some(PERIOD);
        let mut m = compile(&d, &registry()).expect("compiles");
        let r = m.run();
        assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
        // Four ticks in (0, 1]; the spring's energy jumped at each (booked as impact).
        assert!(r.events.len() >= 3, "{:?}", r.events);
        m
    }

    /// The rest of the instant `t` after its left-hand point, as the solver asks for it:
    /// the time event handled, the guards, the right-hand point's output.
    fn handle_tick(m: &mut Model, t: f64, x: &mut [f64]) {
        let cause = EventCause {
            kind: EventKind::Time,
            guards: &[],
        };
        m.handle_event(t, x, cause).expect("handled");
        let mut g = vec![0.0; m.n_guards()];
        m.guards(t, x, &mut g);
        m.output(t, x, OutputKind::EventRight);
    }

    #[test]
    fn a_tick_starts_from_the_evaluation_of_its_recorded_left_hand_point() {
        let mut m = sampled_coil();
        // The tick at the stop time is left to a run that goes on.
        let t = m.next_time_event(0.9);
        assert_eq!(t, 1.0);
        let mut x = m.run.last_x.clone();
        x[0] += 0.125;
        // What an output point of its own records there (a fresh model, the same run).
        let mut fresh = sampled_coil();
        fresh.output(t, &x, OutputKind::Interpolated);
        let row = fresh.run.row_buf.clone();
        let evals = m.run.model_evals;
        m.output(t, &x, OutputKind::EventLeft);
        let bits = |v: &[f64]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&m.run.row_buf),
            bits(&row),
            "the same left-hand values"
        );
        handle_tick(&mut m, t, &mut x);
        // One evaluation of the left-hand point (recorded, then the handler's start) and
        // one after the tick changed the held input; none more for the guards and the
        // right-hand point.
        assert_eq!(m.run.model_evals, evals + 2);
        // The tick took the wave's value at t, and the coil's rest angle with it.
        let wave = 1.0 + 0.5 * (3.0 * t).sin();
        assert_eq!(m.run.row_buf[1], wave);
        let stored = 0.5 * C * (x[0] - wave).powi(2);
        assert!(
            (m.run.row_buf[2] - stored).abs() <= 1e-12 * stored,
            "{:?}",
            m.run.row_buf
        );
    }

    #[test]
    fn stored_energies_are_each_blocks_potential_energy() {
        let mut m = sampled_coil();
        let mut x = m.run.last_x.clone();
        x[0] -= 0.5;
        m.eval(1.0, &x);
        let bits = |v: &[f64]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let each = m.stored_energies(1.0, &x);
        // Each block's own view, built for it alone, gives the same bits.
        let plan = m.plan.clone();
        let alone: Vec<f64> = (0..plan.blocks.len())
            .map(|b| {
                let b = crate::ids::BlockIx::at(b);
                cx_of!(cx = m, plan, b, 1.0, &x);
                m.blocks[b.ix()].potential_energy(&cx)
            })
            .collect();
        assert_eq!(bits(&each), bits(&alone));
        // The coil's is its spring's `C (q − u)²/2` (the other blocks store nothing).
        let coil = m
            .plan
            .blocks
            .iter()
            .position(|b| b.name == "coil")
            .expect("coil");
        let u = m.ev.sig[m.plan.in_slots[m.plan.blocks[coil].inputs.clone()][0].ix()];
        assert_eq!(each[coil], 0.5 * C * (x[0] - u).powi(2));
        assert_eq!(each.iter().filter(|&&e| e != 0.0).count(), 1);
    }

    #[test]
    fn a_mode_change_at_a_tick_serves_the_time_events_no_mode_update_read_before_it() {
        // The staircase's tick calls nothing of its own; the mode update that moves its
        // level comes before the coil, the only block its output reaches: one evaluation
        // after that update serves both (none for the tick call alone).
        let mut d = Diagram::new("stairs_coil");
        d.add("stairs", "Stairs", json!({}));
        d.add("coil", "Coil", json!({}));
        d.connect(&["stairs.y", "coil.u"]);
        d.log(&["stairs.y", "coil.stored"]);
        let mut m = ran(d);
        let t = m.next_time_event(0.9);
        assert_eq!(t, 1.0);
        let mut x = m.run.last_x.clone();
        x[0] += 0.125;
        let evals = m.run.model_evals;
        m.output(t, &x, OutputKind::EventLeft);
        // Before the tick the level is 3 (set at 0.75 s).
        assert_eq!(m.run.row_buf[0], 3.0);
        handle_tick(&mut m, t, &mut x);
        assert_eq!(m.run.model_evals, evals + 2);
        // The level moved to 4, and the coil's stored energy with it.
        assert_eq!(m.run.row_buf[0], 4.0);
        let stored = 0.5 * C * (x[0] - 4.0).powi(2);
        assert!(
            (m.run.row_buf[1] - stored).abs() <= 1e-12 * stored,
            "{:?}",
            m.run.row_buf
        );
    }
}
