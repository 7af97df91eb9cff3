//! Backlash: `ElastoBacklash` (Modelica's `ElastoBacklash`: a gap in series with a spring
//! and damper, contact torque that never pulls) and `Backlash` (a rigid gap: unilateral
//! contact with Newton's impact law).
//!
//! Both measure `phi_diff = phi_rel − phi_rel0`, `phi_rel = phi_b − phi_a`, against the
//! stops `±b/2` (`b` = total backlash).
//!
//! # ElastoBacklash
//!
//! Torque (MSL; `tau` accelerates flange_a and decelerates flange_b, like a spring):
//! free in the gap; in contact beyond `+b/2` with `tau_c = c·(phi_diff − b/2)`,
//! `tau_d = d·w_rel`: `tau = 0` if `tau_c + tau_d <= 0` (the damper would pull: the
//! contact opens), else `tau_c + min(tau_c, tau_d)`; mirrored beyond `−b/2`. Every region
//! and branch is a block mode switched at a located crossing (the torque is continuous
//! across the branch switches, so these are kinks, but located ones), so a step never
//! straddles a contact. For `b <= 1e-10` it is a plain spring-damper.
//! Energy: the spring energy `½·c·(phi_diff ∓ b/2)²` in contact is stored energy; the
//! rest of the torque's work is dissipated and goes to the optional heat port. (MSL's
//! `lossPower` is 0 in the opening branch `tau = 0`, where the spring energy vanishes; here
//! it is the energy-consistent `−tau_c·w_rel` there.)
//!
//! # Backlash (rigid)
//!
//! In the gap no torque. Reaching a stop with approach speed `|w_rel| > w_small`, the
//! flanges rebound: an impact `w_rel⁺ = −e·w_rel⁻` through the mechanical network
//! (momentum conserving, every other constraint kept; the kinetic energy lost is impact
//! loss in the energy audit). Slower than `w_small` (or with `e = 0`), the impact is
//! plastic and the contact **persists**: a friction joint on `w_rel` locks, with the
//! unilateral range (at `+b/2` it may push only, `tau <= 0`; at `−b/2`, `tau >= 0`), and
//! releases at the located instant the contact torque would have to pull. So a flange
//! resting against a stop under load stays there: the rebounds of restitution `e < 1`
//! shrink geometrically and end in a persistent contact after finitely many impacts
//! (`ln(w₀/w_small)/ln(1/e)`), never Zeno. After a rebound the block waits for the
//! relative speed to turn (located) before it can meet the same stop again.

use drivelink_core::{
    Block, BlockDecl, Cx, EventCx, EventTag, Forces, FrictionLaw, FrictionMode, FrictionVar,
    HeatFlows, MechDecl, ParamError, Params, PortDecl, VarDecl, VarSource,
};

use crate::signal::FirstCall;
use crate::util::{
    compliant_ports, force_mech, loss_heat, relative_vars, FlangePair, COMPLIANT_HEAT,
};

/// The flanges of both backlash elements (`flange_a`, `flange_b`).
const FL: FlangePair = FlangePair::AB;

/// Backlash below this is no backlash (MSL `bEps`).
const B_EPS: f64 = 1e-10;
/// Relative-speed slack of the rebound guard (rad/s).
const W_EPS: f64 = 1e-10;

/// Region of an `ElastoBacklash`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Region {
    /// No backlash: spring and damper.
    Elastic,
    Gap,
    /// Contact beyond +b/2: opening (0), damped (`tau_c + tau_d`), doubled (`2·tau_c`).
    PosOpen,
    PosDamped,
    PosDoubled,
    NegOpen,
    NegDamped,
    NegDoubled,
}

impl Region {
    /// The contact this region belongs to, as the event log names it (the damper's
    /// sub-regions of a contact are not contact changes).
    fn contact(self) -> &'static str {
        match self {
            Region::Elastic => "elastic",
            Region::Gap => "gap",
            Region::PosOpen | Region::PosDamped | Region::PosDoubled => "positive contact",
            Region::NegOpen | Region::NegDamped | Region::NegDoubled => "negative contact",
        }
    }
}

/// `ElastoBacklash`. See the module docs.
#[derive(Debug, Clone)]
pub struct ElastoBacklash {
    c: f64,
    d: f64,
    b: f64,
    phi0: f64,
    region: Region,
}

impl ElastoBacklash {
    fn phi_diff(&self, cx: &Cx) -> f64 {
        FL.phi_rel(cx) - self.phi0
    }
    fn w_rel(cx: &Cx) -> f64 {
        FL.w_rel(cx)
    }
    /// `(tau_c, tau_d)` for the contact on the side of `region`.
    fn parts(&self, region: Region, phi: f64, w: f64) -> (f64, f64) {
        let half = 0.5 * self.b;
        let tc = match region {
            Region::Elastic => self.c * phi,
            Region::Gap => 0.0,
            Region::PosOpen | Region::PosDamped | Region::PosDoubled => self.c * (phi - half),
            _ => self.c * (phi + half),
        };
        (tc, self.d * w)
    }
    /// The region the values call for (MSL's conditions).
    fn region_of(&self, phi: f64, w: f64) -> Region {
        if self.b <= B_EPS {
            return Region::Elastic;
        }
        let half = 0.5 * self.b;
        if phi > half {
            let (tc, td) = self.parts(Region::PosOpen, phi, w);
            if tc + td <= 0.0 {
                Region::PosOpen
            } else if td < tc {
                Region::PosDamped
            } else {
                Region::PosDoubled
            }
        } else if phi < -half {
            let (tc, td) = self.parts(Region::NegOpen, phi, w);
            if tc + td >= 0.0 {
                Region::NegOpen
            } else if td > tc {
                Region::NegDamped
            } else {
                Region::NegDoubled
            }
        } else {
            Region::Gap
        }
    }
    /// The torque (MSL `tau`, accelerating flange_a) in `region`.
    fn tau_in(&self, region: Region, phi: f64, w: f64) -> f64 {
        let (tc, td) = self.parts(region, phi, w);
        match region {
            Region::Elastic | Region::PosDamped | Region::NegDamped => tc + td,
            Region::PosDoubled | Region::NegDoubled => 2.0 * tc,
            Region::Gap | Region::PosOpen | Region::NegOpen => 0.0,
        }
    }
    fn tau(&self, cx: &Cx) -> f64 {
        self.tau_in(self.region, self.phi_diff(cx), Self::w_rel(cx))
    }
    /// Spring part of the torque (its energy is stored).
    fn tau_spring(&self, cx: &Cx) -> f64 {
        match self.region {
            Region::Gap => 0.0,
            r => self.parts(r, self.phi_diff(cx), 0.0).0,
        }
    }
}

impl Block for ElastoBacklash {
    drivelink_core::run_state!(region);
    fn declare(&self) -> BlockDecl {
        let [phi, w] = relative_vars(0, 1);
        let variables = vec![
            phi,
            w,
            VarDecl::new("tau", VarSource::Custom(2), "N*m").doc(
                "contact torque (MSL tau: decelerates flange_b, accelerates flange_a; >= 0 at the +b/2 stop)",
            ),
            VarDecl::new("contact", VarSource::Custom(3), "1")
                .doc("1 in contact beyond +b/2, −1 beyond −b/2, 0 in the gap"),
            VarDecl::new("power_loss", VarSource::Custom(4), "W")
                .doc("power dissipated (torque work beyond the spring's stored energy)"),
        ];
        BlockDecl {
            ports: compliant_ports(),
            variables,
            mech: force_mech(),
            thermal: loss_heat(),
            ..BlockDecl::default()
        }
        .with_guards(&["contact", "branch_a", "branch_b"])
    }
    fn forces(&self, cx: &Cx, f: &mut Forces) {
        FL.apply_compliant(f, self.tau(cx));
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let phi = self.phi_diff(cx);
        let w = Self::w_rel(cx);
        let half = 0.5 * self.b;
        let (tc, td) = self.parts(self.region, phi, w);
        g.fill(1.0);
        match self.region {
            Region::Elastic => {}
            Region::Gap => {
                g[0] = half - phi;
                g[1] = phi + half;
            }
            Region::PosOpen => {
                g[0] = phi - half;
                g[1] = -(tc + td);
            }
            Region::PosDamped => {
                g[0] = phi - half;
                g[1] = tc + td;
                g[2] = tc - td;
            }
            Region::PosDoubled => {
                g[0] = phi - half;
                g[1] = td - tc;
            }
            Region::NegOpen => {
                g[0] = -half - phi;
                g[1] = tc + td;
            }
            Region::NegDamped => {
                g[0] = -half - phi;
                g[1] = -(tc + td);
                g[2] = td - tc;
            }
            Region::NegDoubled => {
                g[0] = -half - phi;
                g[1] = tc - td;
            }
        }
    }
    fn reset(&mut self, _t0: f64) {
        self.region = if self.b <= B_EPS {
            Region::Elastic
        } else {
            Region::Gap
        };
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let v = cx.view();
        let new = self.region_of(self.phi_diff(&v), Self::w_rel(&v));
        let changed = new != self.region;
        if self.region.contact() != new.contact() {
            // Each located contact change is logged, as the rigid Backlash's impacts are.
            let text = format!("{} -> {}", self.region.contact(), new.contact());
            cx.log(EventTag::ZeroCrossing, text);
        }
        self.region = new;
        changed
    }
    /// The spring energy from the geometry alone, `½·c·(|phi_diff| − b/2)²` beyond a stop
    /// (0 in the gap): equal to `½·tau_spring²/c` of the current region (the regions switch
    /// at the located crossings of `±b/2`), but independent of the mode, so it is also
    /// right when the audit evaluates the initial state after the run (with the final
    /// region).
    fn potential_energy(&self, cx: &Cx) -> f64 {
        let phi = self.phi_diff(cx);
        let stretch = if self.b <= B_EPS {
            phi
        } else {
            (phi.abs() - 0.5 * self.b).max(0.0)
        };
        0.5 * self.c * stretch * stretch
    }
    fn heat_flows(&self, cx: &Cx, q: &mut HeatFlows) {
        q.add(
            COMPLIANT_HEAT,
            (self.tau(cx) - self.tau_spring(cx)) * Self::w_rel(cx),
        );
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        match i {
            0 => FL.phi_rel(cx),
            1 => Self::w_rel(cx),
            2 => self.tau(cx),
            3 => match self.region {
                Region::Gap => 0.0,
                Region::PosOpen | Region::PosDamped | Region::PosDoubled => 1.0,
                Region::Elastic => self.phi_diff(cx).signum(),
                _ => -1.0,
            },
            _ => (self.tau(cx) - self.tau_spring(cx)) * Self::w_rel(cx),
        }
    }
}

pub(crate) fn build_elasto(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let c = p.positive("c")?;
    let d = p.non_negative("d")?;
    let b = p.non_negative("b")?;
    let phi0 = p.num("phi_rel0")?;
    Ok(Box::new(ElastoBacklash {
        c,
        d,
        b,
        phi0,
        region: if b <= B_EPS {
            Region::Elastic
        } else {
            Region::Gap
        },
    }))
}

/// Contact state of a rigid `Backlash`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Contact {
    Gap,
    /// Persistent contact at +b/2 (joint engaged) / −b/2.
    Pos,
    Neg,
    /// Rebounding from +b/2 / −b/2: separating until the relative speed turns.
    ReboundPos,
    ReboundNeg,
}

/// `Backlash` (rigid). See the module docs.
#[derive(Debug, Clone)]
pub struct Backlash {
    b: f64,
    phi0: f64,
    e: f64,
    w_small: f64,
    state: Contact,
    first: FirstCall,
}

impl Backlash {
    fn phi_diff(&self, cx: &Cx) -> f64 {
        FL.phi_rel(cx) - self.phi0
    }
    fn w_rel(cx: &Cx) -> f64 {
        FL.w_rel(cx)
    }
    /// Meet stop `side` (+1 / −1) approaching with `w`: rebound or persistent contact.
    fn hit(&mut self, cx: &mut EventCx, side: f64, w: f64) {
        let approach = side * w;
        if self.e > 0.0 && approach > self.w_small {
            cx.impact(0, self.e);
            self.state = if side > 0.0 {
                Contact::ReboundPos
            } else {
                Contact::ReboundNeg
            };
        } else {
            if approach > 0.0 {
                cx.impact(0, 0.0);
            }
            self.state = if side > 0.0 {
                Contact::Pos
            } else {
                Contact::Neg
            };
            cx.log(
                EventTag::ZeroCrossing,
                format!(
                    "persistent contact at the {} stop (approach speed {approach:.3e} rad/s)",
                    if side > 0.0 { "+b/2" } else { "−b/2" }
                ),
            );
        }
    }
}

impl Block for Backlash {
    drivelink_core::run_state!(first, state);
    fn declare(&self) -> BlockDecl {
        let variables = vec![
            VarDecl::new("phi_rel", VarSource::Custom(0), "rad").doc("phi_b − phi_a"),
            VarDecl::new("w_rel", VarSource::Friction(0, FrictionVar::WRel), "rad/s")
                .doc("w_b − w_a"),
            VarDecl::new("tau", VarSource::Friction(0, FrictionVar::Tau), "N*m").doc(
                "contact torque transmitted from flange_a to flange_b (<= 0 at the +b/2 stop, >= 0 at −b/2)",
            ),
            VarDecl::new("contact", VarSource::Custom(1), "1").doc(
                "1 persistent contact at +b/2, −1 at −b/2, 0 in the gap, 2 / −2 rebounding from +b/2 / −b/2",
            ),
        ];
        let mech = MechDecl {
            frictions: vec![FL.joint()],
            ..Default::default()
        };
        BlockDecl {
            ports: vec![PortDecl::rot("flange_a"), PortDecl::rot("flange_b")],
            variables,
            mech,
            ..BlockDecl::default()
        }
        .with_guards(&["stop_pos", "stop_neg"])
    }
    fn friction(&self, _k: usize, _cx: &Cx, _w_rel: f64) -> FrictionLaw {
        match self.state {
            Contact::Pos => FrictionLaw {
                kinetic: 0.0,
                lo: f64::NEG_INFINITY,
                hi: 0.0,
                engagement: 1.0,
            },
            Contact::Neg => FrictionLaw {
                kinetic: 0.0,
                lo: 0.0,
                hi: f64::INFINITY,
                engagement: 1.0,
            },
            _ => FrictionLaw::FREE,
        }
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let phi = self.phi_diff(cx);
        let w = Self::w_rel(cx);
        let half = 0.5 * self.b;
        let (gp, gn) = match self.state {
            Contact::Gap => (half - phi, phi + half),
            Contact::ReboundPos => (W_EPS - w, phi + half),
            Contact::ReboundNeg => (half - phi, w + W_EPS),
            Contact::Pos | Contact::Neg => (1.0, 1.0),
        };
        g[0] = gp;
        g[1] = gn;
    }
    fn reset(&mut self, _t0: f64) {
        self.first.arm();
        self.state = Contact::Gap;
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = self.first.take();
        let (phi, w, jm) = {
            let v = cx.view();
            (self.phi_diff(&v), Self::w_rel(&v), v.mode(0))
        };
        let half = 0.5 * self.b;
        let old = self.state;
        match self.state {
            _ if fresh => {
                if phi >= half {
                    self.hit(cx, 1.0, w.max(0.0));
                } else if phi <= -half {
                    self.hit(cx, -1.0, w.min(0.0));
                }
            }
            Contact::Gap => {
                if phi >= half {
                    self.hit(cx, 1.0, w);
                } else if phi <= -half {
                    self.hit(cx, -1.0, w);
                }
            }
            Contact::Pos | Contact::Neg => {
                // The stuck/slip machine released the contact: it separates.
                if matches!(
                    jm,
                    FrictionMode::SlidingBackward | FrictionMode::SlidingForward
                ) {
                    self.state = if self.state == Contact::Pos {
                        Contact::ReboundPos
                    } else {
                        Contact::ReboundNeg
                    };
                }
            }
            Contact::ReboundPos => {
                if phi <= -half {
                    self.hit(cx, -1.0, w);
                } else if w > W_EPS {
                    if phi >= half {
                        self.hit(cx, 1.0, w);
                    } else {
                        self.state = Contact::Gap;
                    }
                }
            }
            Contact::ReboundNeg => {
                if phi >= half {
                    self.hit(cx, 1.0, w);
                } else if w < -W_EPS {
                    if phi <= -half {
                        self.hit(cx, -1.0, w);
                    } else {
                        self.state = Contact::Gap;
                    }
                }
            }
        }
        self.state != old
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        match i {
            0 => FL.phi_rel(cx),
            _ => match self.state {
                Contact::Gap => 0.0,
                Contact::Pos => 1.0,
                Contact::Neg => -1.0,
                Contact::ReboundPos => 2.0,
                Contact::ReboundNeg => -2.0,
            },
        }
    }
}

pub(crate) fn build_backlash(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let b = p.positive("b")?;
    let e = p.num("restitution")?;
    if !(0.0..=1.0).contains(&e) {
        return Err(p.invalid("restitution", format!("must be in [0, 1], got {e}")));
    }
    let w_small = p.non_negative("w_small")?;
    Ok(Box::new(Backlash {
        b,
        phi0: p.num("phi_rel0")?,
        e,
        w_small,
        state: Contact::Gap,
        first: FirstCall::armed(),
    }))
}
