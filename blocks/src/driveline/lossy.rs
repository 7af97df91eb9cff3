//! Gears with mesh losses: `LossyGear` (Modelica's `LossyGear`: mesh efficiencies and
//! bearing friction from a table over speed, stuck when the losses can hold the load, so a
//! gear can lock when driven from the wrong side) and the [`MeshLoss`] law it shares with
//! `IdealGear`, `PlanetaryGear` and `Differential` when they are given an `efficiency`.
//!
//! # Formulation (MSL semantics, exact)
//!
//! A lossy gear is an ideal gear row `w_a − w_s = ratio·(w_b − w_s)` plus a friction joint
//! on `w_rel = w_a − w_s` (flange_a relative to the support) that carries the loss torque
//! `tauLoss`, so `flange_b.tau = −ratio·(flange_a.tau − tauLoss)` as in MSL. Here
//! `flange_a.tau = T` (the load) is the torque the rest of the model applies to the gear
//! at flange_a, a constraint force: `T = −(λ_gear + τ_joint)`.
//!
//! - Rolling forward (`w_rel > 0`): `tauLoss = (1 − η₁)·T + τ_bf1` while
//!   `T − τ_bf,a >= 0` (flange_a drives, power flows a → b), else
//!   `tauLoss = (1 − 1/η₂)·T + τ_bf2` (flange_b drives).
//! - Rolling backward (`w_rel < 0`): `tauLoss = (1 − 1/η₂)·T − τ_bf2` while
//!   `T + τ_bf,a >= 0`, else `(1 − η₁)·T − τ_bf1`.
//! - `τ_bf,a = (τ_bf1 − τ_bf2)/(η₁ − 1/η₂)` (`τ_bf1/2` when `η₁ = η₂ = 1`): the switch
//!   between the two branches is continuous in `T`.
//! - Stuck (`w_rel = 0`): the joint holds `tauLoss = sa` as long as
//!   `tauLossMin_m(T) <= sa <= tauLossMax_p(T)`, the same formulas with the table values at
//!   zero speed and the branch chosen by the sign of `T ∓ τ_bf,a(0)`. Beyond, it starts
//!   rolling forward or backward (the network's stuck/slip machine, exactly as a clutch).
//!
//! Because `tauLoss` depends on `T`, a constraint force of the same solve, the joint is
//! declared load-dependent ([`drivelink_core::FrictionLoad`]): the network solves the
//! coupled equations exactly at every evaluation (no lag, no iteration). The branch
//! (`T − τ_bf,a >= 0` or not) is a block mode switched at located crossings (hysteresis
//! `1e-8 N·m`; the loss is continuous across it). The table (`lossTable` rows
//! `[|w_a|, η₁, η₂, τ_bf1, τ_bf2]`) is interpolated linearly in `|w_rel|` and extrapolated
//! linearly, as MSL does; its kinks are not events (MSL: `noEvent`).
//!
//! The loss power `tauLoss·w_rel >= 0` is in the energy audit (the joint's work) and goes
//! to the optional `heat` port.

use drivelink_core::{
    Block, BlockDecl, Constraint, Cx, EventCx, FrictionDecl, FrictionLaw, FrictionLoad,
    FrictionMode, FrictionVar, HeatFlows, LoadLaw, MechDecl, ParamError, Params, PortDecl, Row,
    RowKind, RunState, RunStateError, VarDecl, VarSource,
};

use crate::util::{hysteresis_guard, hysteresis_mode, Table1D};

/// Hysteresis band of the branch switch on `T ∓ τ_bf,a` (N·m).
const BRANCH_BAND: f64 = 1e-8;

/// Mesh efficiencies and bearing friction at one speed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Losses {
    /// Mesh efficiency when flange_a drives.
    pub eta1: f64,
    /// Mesh efficiency when flange_b drives.
    pub eta2: f64,
    /// Bearing friction referred to flange_a when flange_a drives (>= 0), N·m.
    pub tbf1: f64,
    /// Bearing friction referred to flange_a when flange_b drives (>= 0), N·m.
    pub tbf2: f64,
    /// Bearing friction on the flange_a side, N·m.
    pub tbf_a: f64,
}

impl Losses {
    fn new(eta1: f64, eta2: f64, tbf1: f64, tbf2: f64) -> Self {
        let (tbf1, tbf2) = (tbf1.abs(), tbf2.abs());
        let tbf_a = if (eta1 - 1.0).abs() <= f64::EPSILON && (eta2 - 1.0).abs() <= f64::EPSILON {
            tbf1 / 2.0
        } else {
            (tbf1 - tbf2) / (eta1 - 1.0 / eta2)
        };
        Losses {
            eta1,
            eta2,
            tbf1,
            tbf2,
            tbf_a,
        }
    }
    /// The loss torque `(slope, offset)` of `tauLoss = slope·T + offset` in the branch
    /// `forward` (w_rel > 0) / backward and `eta_pos` (`T ∓ τ_bf,a >= 0`).
    fn branch(&self, forward: bool, eta_pos: bool) -> (f64, f64) {
        match (forward, eta_pos) {
            (true, true) => (1.0 - self.eta1, self.tbf1),
            (true, false) => (1.0 - 1.0 / self.eta2, self.tbf2),
            (false, true) => (1.0 - 1.0 / self.eta2, -self.tbf2),
            (false, false) => (1.0 - self.eta1, -self.tbf1),
        }
    }
}

/// The loss table of a lossy gear and its branch mode. See the module docs.
#[derive(Debug, Clone)]
pub struct MeshLoss {
    eta1: Table1D,
    eta2: Table1D,
    tbf1: Table1D,
    tbf2: Table1D,
    at0: Losses,
    /// Branch: `T ∓ τ_bf,a >= 0` while rolling.
    eta_pos: bool,
    /// The joint's sliding sign at the last event (to recognise a fresh start of rolling).
    last_dir: f64,
}

impl MeshLoss {
    /// From `lossTable` rows `[|w|, η₁, η₂, τ_bf1, τ_bf2]` (checked by the caller).
    pub fn new(rows: &[[f64; 5]]) -> Self {
        let col = |c: usize| {
            Table1D::new(
                rows.iter().map(|r| r[0]).collect(),
                rows.iter().map(|r| r[c]).collect(),
                true,
            )
        };
        let (eta1, eta2, tbf1, tbf2) = (col(1), col(2), col(3), col(4));
        let at0 = Losses::new(
            eta1.eval(0.0),
            eta2.eval(0.0),
            tbf1.eval(0.0),
            tbf2.eval(0.0),
        );
        MeshLoss {
            eta1,
            eta2,
            tbf1,
            tbf2,
            at0,
            eta_pos: true,
            last_dir: 0.0,
        }
    }

    /// A constant mesh efficiency `eta` in both directions, no bearing friction.
    pub fn efficiency(eta: f64) -> Self {
        MeshLoss::new(&[[0.0, eta, eta, 0.0, 0.0]])
    }

    /// Read and check a `lossTable` parameter; `None` for the ideal table `[0, 1, 1, 0, 0]`.
    pub fn from_table(p: &Params, name: &str) -> Result<Option<Self>, ParamError> {
        let t = p.table(name)?;
        if t.is_empty() {
            return Err(p.invalid(
                name,
                "is empty; expected rows [|w|, eta_mf1, eta_mf2, tau_bf1, tau_bf2]",
            ));
        }
        let mut rows = Vec::with_capacity(t.len());
        for (i, r) in t.iter().enumerate() {
            if r.len() != 5 {
                return Err(p.invalid(
                    name,
                    format!("row {i} has {} entries; expected [|w|, eta_mf1, eta_mf2, tau_bf1, tau_bf2]", r.len()),
                ));
            }
            if r.iter().any(|v| !v.is_finite()) {
                return Err(p.invalid(name, format!("row {i} has a non-finite entry")));
            }
            if r[0] < 0.0 {
                return Err(p.invalid(
                    name,
                    format!("row {i}: speeds are |w_a| >= 0, got {}", r[0]),
                ));
            }
            if let Some(prev) = rows.last().map(|p: &[f64; 5]| p[0]) {
                if r[0] <= prev {
                    return Err(p.invalid(
                        name,
                        format!(
                            "speeds must be strictly increasing, but row {i} has {} after {prev}",
                            r[0]
                        ),
                    ));
                }
            }
            for (c, what) in [(1, "eta_mf1"), (2, "eta_mf2")] {
                if !(r[c] > 0.0 && r[c] <= 1.0) {
                    return Err(p.invalid(
                        name,
                        format!("row {i}: {what} must be in (0, 1], got {}", r[c]),
                    ));
                }
            }
            rows.push([r[0], r[1], r[2], r[3], r[4]]);
        }
        let ideal = rows.len() == 1 && rows[0] == [0.0, 1.0, 1.0, 0.0, 0.0];
        Ok((!ideal).then(|| MeshLoss::new(&rows)))
    }

    /// Read an `efficiency` parameter (in (0, 1]); `None` when absent or 1.
    pub fn from_efficiency(p: &Params, name: &str) -> Result<Option<Self>, ParamError> {
        let Some(eta) = p.opt_num(name)? else {
            return Ok(None);
        };
        if !(eta > 0.0 && eta <= 1.0) {
            return Err(p.invalid(name, format!("must be in (0, 1], got {eta}")));
        }
        Ok((eta < 1.0).then(|| MeshLoss::efficiency(eta)))
    }

    /// Losses at relative speed `w`.
    pub fn at(&self, w: f64) -> Losses {
        let a = w.abs();
        Losses::new(
            self.eta1.eval(a),
            self.eta2.eval(a),
            self.tbf1.eval(a),
            self.tbf2.eval(a),
        )
    }

    /// The loss torque while rolling in direction `dir` (±1) at `w_rel`, as the joint
    /// torque `tau = −tauLoss = tau0 + slope·T`.
    pub fn sliding(&self, dir: f64, w_rel: f64) -> LoadLaw {
        let (a, b) = self.at(w_rel).branch(dir > 0.0, self.eta_pos);
        LoadLaw {
            tau0: -b,
            slope: -a,
        }
    }

    /// The loss torque `tauLoss` at load `T` while rolling in direction `dir`.
    pub fn tau_loss(&self, dir: f64, w_rel: f64, t: f64) -> f64 {
        let (a, b) = self.at(w_rel).branch(dir > 0.0, self.eta_pos);
        a * t + b
    }

    /// The static range `[lo, hi]` of the joint torque `−sa` while stuck under load `T`
    /// (MSL: `tauLossMin_m <= sa <= tauLossMax_p`).
    pub fn stuck_range(&self, t: f64) -> (f64, f64) {
        let l = &self.at0;
        let (a, b) = l.branch(true, t - l.tbf_a > 0.0);
        let max_p = a * t + b;
        let (a, b) = l.branch(false, t + l.tbf_a > 0.0);
        let min_m = a * t + b;
        (-max_p, -min_m)
    }

    /// `T − dir·τ_bf,a(w)`: its sign selects the branch.
    fn tau_eta(&self, dir: f64, w_rel: f64, t: f64) -> f64 {
        t - dir * self.at(w_rel).tbf_a
    }

    /// The guard of the branch while the joint rolls in direction `dir` (1 when stuck).
    pub fn guard(&self, dir: f64, w_rel: f64, t: f64) -> f64 {
        if dir == 0.0 {
            return 1.0;
        }
        hysteresis_guard(self.eta_pos, self.tau_eta(dir, w_rel, t), BRANCH_BAND)
    }

    /// Choose the branch at an event: by the sign of `T ∓ τ_bf,a` when rolling has just
    /// started, with hysteresis while it goes on. Returns true if the branch changed.
    pub fn update(&mut self, mode: FrictionMode, w_rel: f64, t: f64) -> bool {
        let dir = mode.sliding_sign();
        let fresh = dir != self.last_dir;
        self.last_dir = dir;
        if dir == 0.0 {
            return false;
        }
        let new = hysteresis_mode(
            self.eta_pos,
            fresh,
            self.tau_eta(dir, w_rel, t),
            BRANCH_BAND,
        );
        let changed = new != self.eta_pos;
        self.eta_pos = new;
        changed
    }

    /// The branch and the last sliding sign: the run state of the mesh loss.
    pub fn branch(&self) -> (bool, f64) {
        (self.eta_pos, self.last_dir)
    }

    /// Put back a run state [`MeshLoss::branch`] gave.
    pub fn set_branch(&mut self, (eta_pos, last_dir): (bool, f64)) {
        self.eta_pos = eta_pos;
        self.last_dir = last_dir;
    }

    /// Re-initialise the branch (start of a run).
    pub fn reset(&mut self) {
        self.eta_pos = true;
        self.last_dir = 0.0;
    }

    /// Whether the branch is `T ∓ τ_bf,a >= 0` (1) or not (0), for logging.
    pub fn branch_code(&self) -> f64 {
        if self.eta_pos {
            1.0
        } else {
            0.0
        }
    }
}

/// Port names of a lossy gear: (flange_a, flange_b, support), and the suffixes of their
/// torque variables.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GearPorts {
    pub a: &'static str,
    pub b: &'static str,
    pub s: &'static str,
    /// Variable suffixes (`tau_a`, `tau_sun`, ...).
    pub va: &'static str,
    pub vb: &'static str,
    pub vs: &'static str,
    /// Whether the third port is an optional support (grounded when unconnected) or a
    /// required flange (a planetary carrier).
    pub s_optional: bool,
}

/// The ports of `LossyGear` and `IdealGear`.
pub(crate) const GEAR_PORTS: GearPorts = GearPorts {
    a: "flange_a",
    b: "flange_b",
    s: "support",
    va: "a",
    vb: "b",
    vs: "support",
    s_optional: true,
};

/// The ports of `PlanetaryGear` (sun = a, ring = b, carrier = support).
pub(crate) const PLANETARY_PORTS: GearPorts = GearPorts {
    a: "sun",
    b: "ring",
    s: "carrier",
    va: "sun",
    vb: "ring",
    vs: "carrier",
    s_optional: false,
};

/// A gear `w_a − w_s = ratio·(w_b − w_s)` with optional mesh losses: `LossyGear`,
/// `IdealGear` (with `efficiency`) and `PlanetaryGear` (with `efficiency`: sun = a,
/// ring = b, carrier = support, ratio = −ring/sun). Ports: a, b, support, heat.
#[derive(Debug, Clone)]
pub struct LossyGear {
    pub(crate) names: GearPorts,
    pub(crate) ratio: f64,
    /// `None`: ideal (no joint).
    pub(crate) loss: Option<MeshLoss>,
}

const A: usize = 0;
const B: usize = 1;
const S: usize = 2;
const HEAT: usize = 3;

impl LossyGear {
    /// Orientation of the gear row: a lossless planetary gear keeps the row
    /// `(1+g)·w_carrier − w_sun − g·w_ring = 0` of the ideal `PlanetaryGear` (the negated
    /// gear row, in that order), so models with it reproduce their earlier results to the
    /// last bit; every other gear uses `w_a − ratio·w_b + (ratio − 1)·w_s = 0`.
    fn row_sign(&self) -> f64 {
        if self.loss.is_none() && !self.names.s_optional {
            -1.0
        } else {
            1.0
        }
    }
    /// The gear row's constraint torque in the orientation `w_a − ratio·w_b + ...`.
    fn lambda_gear(&self, cx: &Cx) -> f64 {
        self.row_sign() * cx.lambda(0)
    }
    /// The load `T = flange_a.tau` (torque the model applies to the gear at flange_a).
    fn load(&self, cx: &Cx) -> f64 {
        if self.loss.is_some() {
            -(cx.lambda(0) + cx.lambda(1))
        } else {
            -self.lambda_gear(cx)
        }
    }
    /// The loss torque `tauLoss` (0 when ideal).
    fn tau_loss(&self, cx: &Cx) -> f64 {
        if self.loss.is_some() {
            -cx.lambda(1)
        } else {
            0.0
        }
    }
    fn w_rel(&self, cx: &Cx) -> f64 {
        cx.v(A) - cx.v(S)
    }
    /// Torque the gear applies to port `p` (a, b, support).
    fn port_torque(&self, cx: &Cx, p: usize) -> f64 {
        let lg = self.lambda_gear(cx);
        let lj = if self.loss.is_some() {
            cx.lambda(1)
        } else {
            0.0
        };
        match p {
            A => lg + lj,
            B => -self.ratio * lg,
            _ => (self.ratio - 1.0) * lg - lj,
        }
    }
}

impl Block for LossyGear {
    fn save_run_state(&self) -> Result<Option<RunState>, String> {
        Ok(self.loss.as_ref().map(|l| RunState::new(l.branch())))
    }
    fn restore_run_state(&mut self, saved: &RunState) -> Result<(), RunStateError> {
        let branch = *saved.get::<(bool, f64)>()?;
        if let Some(l) = self.loss.as_mut() {
            l.set_branch(branch);
        }
        Ok(())
    }
    fn declare(&self) -> BlockDecl {
        let s = if self.names.s_optional {
            PortDecl::support(self.names.s)
        } else {
            PortDecl::rot(self.names.s)
        };
        let ports = vec![
            PortDecl::rot(self.names.a),
            PortDecl::rot(self.names.b),
            s,
            PortDecl::loss_heat("heat"),
        ];
        let mut v = vec![
            VarDecl::new("w_rel", VarSource::Custom(0), "rad/s")
                .doc("speed of the first flange relative to the support (w_a − w_s)"),
            VarDecl::new(
                format!("tau_{}", self.names.va),
                VarSource::Custom(1),
                "N*m",
            )
            .doc("torque the gear applies to the first flange"),
            VarDecl::new(
                format!("tau_{}", self.names.vb),
                VarSource::Custom(2),
                "N*m",
            )
            .doc("torque the gear applies to the second flange"),
            VarDecl::new(
                format!("tau_{}", self.names.vs),
                VarSource::Custom(3),
                "N*m",
            )
            .doc("torque the gear applies to the support / carrier (the reaction)"),
            VarDecl::new("tau_loss", VarSource::Custom(4), "N*m")
                .doc("mesh and bearing loss torque referred to the first flange (MSL tauLoss)"),
            VarDecl::new("power_loss", VarSource::Custom(5), "W")
                .doc("power lost in the gear, tau_loss·w_rel (>= 0)"),
        ];
        if self.loss.is_some() {
            v.push(
                VarDecl::new("mode", VarSource::Friction(0, FrictionVar::Mode), "1")
                    .doc("1 rolling forward, 0 stuck, −1 rolling backward (MSL LossyGear.mode)"),
            );
            v.push(VarDecl::new("branch", VarSource::Custom(6), "1").doc(
                "1 while T ∓ tau_bf_a >= 0 (first flange drives when rolling forward), else 0",
            ));
        } else {
            v.push(
                VarDecl::new("mode", VarSource::Custom(7), "1")
                    .doc("2: ideal gear without losses (MSL mode Free)"),
            );
        }
        let r = self.ratio;
        let row = if self.row_sign() < 0.0 {
            Row(vec![(S, 1.0 - r), (A, -1.0), (B, r)])
        } else {
            Row(vec![(A, 1.0), (B, -r), (S, r - 1.0)])
        };
        let mut m = MechDecl {
            constraints: vec![Constraint {
                row,
                kind: RowKind::Velocity,
            }],
            ..Default::default()
        };
        if self.loss.is_some() {
            m.frictions
                .push(FrictionDecl::new(Row(vec![(A, 1.0), (S, -1.0)]), ""));
            m.friction_loads.push(FrictionLoad {
                joint: 0,
                load: vec![(0, -1.0), (1, -1.0)],
            });
        }
        let thermal = drivelink_core::ThermalDecl {
            has_heat_flows: self.loss.is_some(),
            ..Default::default()
        };
        BlockDecl {
            ports,
            variables: v,
            mech: m,
            thermal,
            ..BlockDecl::default()
        }
        .guards_named(usize::from(self.loss.is_some()), |_i| "branch".into())
    }
    fn friction(&self, _k: usize, cx: &Cx, _w_rel: f64) -> FrictionLaw {
        let Some(loss) = &self.loss else {
            return FrictionLaw::FREE;
        };
        let (lo, hi) = loss.stuck_range(self.load(cx));
        FrictionLaw {
            kinetic: 0.0,
            lo,
            hi,
            engagement: 1.0,
        }
    }
    fn load_friction(&self, _k: usize, cx: &Cx, w_rel: f64) -> LoadLaw {
        match &self.loss {
            Some(loss) => loss.sliding(cx.mode(0).sliding_sign(), w_rel),
            None => LoadLaw {
                tau0: 0.0,
                slope: 0.0,
            },
        }
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        if let Some(loss) = &self.loss {
            g[0] = loss.guard(cx.mode(0).sliding_sign(), self.w_rel(cx), self.load(cx));
        }
    }
    fn reset(&mut self, _t0: f64) {
        if let Some(l) = self.loss.as_mut() {
            l.reset();
        }
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        if self.loss.is_none() {
            return false;
        }
        let (mode, w, t) = {
            let v = cx.view();
            (v.mode(0), self.w_rel(&v), self.load(&v))
        };
        match self.loss.as_mut() {
            Some(l) => l.update(mode, w, t),
            None => false,
        }
    }
    fn heat_flows(&self, cx: &Cx, q: &mut HeatFlows) {
        q.add(HEAT, self.tau_loss(cx) * self.w_rel(cx));
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        match i {
            0 => self.w_rel(cx),
            1 => self.port_torque(cx, A),
            2 => self.port_torque(cx, B),
            3 => self.port_torque(cx, S),
            4 => self.tau_loss(cx),
            5 => self.tau_loss(cx) * self.w_rel(cx),
            6 => self.loss.as_ref().map_or(f64::NAN, MeshLoss::branch_code),
            _ => 2.0,
        }
    }
}

/// Build a `LossyGear` from `ratio` and `lossTable`.
pub(crate) fn build_lossy_gear(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let ratio = p.num("ratio")?;
    if ratio == 0.0 || !ratio.is_finite() {
        return Err(p.invalid("ratio", format!("must be finite and non-zero, got {ratio}")));
    }
    Ok(Box::new(LossyGear {
        names: GEAR_PORTS,
        ratio,
        loss: MeshLoss::from_table(p, "lossTable")?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branches_are_continuous_at_the_switch_and_invert_efficiencies() {
        let l = Losses::new(0.8, 0.6, 1.0, 2.0);
        // At T = τ_bf,a the two forward branches give the same loss.
        let t = l.tbf_a;
        let (a1, b1) = l.branch(true, true);
        let (a2, b2) = l.branch(true, false);
        assert!((a1 * t + b1 - (a2 * t + b2)).abs() < 1e-12);
        let t = -l.tbf_a;
        let (a3, b3) = l.branch(false, true);
        let (a4, b4) = l.branch(false, false);
        assert!((a3 * t + b3 - (a4 * t + b4)).abs() < 1e-12);
        // Without bearing friction, flange_a driving delivers η₁ of its torque
        // (T − tauLoss = η₁·T), flange_b driving needs T/η₂ − tauLoss... = T/η₂.
        let l = Losses::new(0.8, 0.6, 0.0, 0.0);
        let (a, b) = l.branch(true, true);
        assert!((10.0 - (a * 10.0 + b) - 8.0).abs() < 1e-12);
        let (a, b) = l.branch(true, false);
        assert!((-6.0 - (a * -6.0 + b) - (-10.0)).abs() < 1e-12);
    }
}
