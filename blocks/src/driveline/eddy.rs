//! `EddyCurrentBrake`: Modelica's `EddyCurrentTorque`, a speed-dependent braking torque
//! (Kloss' characteristic) whose nominal speed follows the temperature of the disc's
//! resistance, read from an optional heat port that also receives the loss power.
//!
//! `tau = 2·tau_nominal·excitation²·w_n/(1 + w_n²)` with
//! `w_n = w/(w_nominal·(1 + alpha_ref·(T − TRef)))`,
//! `alpha_ref = alpha20/(1 + alpha20·(TRef − 293.15 K))`, `w` the flange speed relative
//! to the support. `tau` brakes (it acts against `w` on the flange, the reaction on the
//! support) and `tau·w >= 0` is the loss power. `T` is the heat port's temperature, or the
//! parameter `T` when the port is unconnected. The torque is read before the mechanical
//! solve, so a connected heat port's node must have a heat capacity or a fixed temperature
//! (checked at compile time). `excitation` is an optional input (default
//! `constant_excitation`).

use drivelink_core::{
    Block, BlockDecl, Cx, Forces, HeatFlows, ParamError, Params, PortDecl, ThermalDecl, VarDecl,
    VarSource,
};

use crate::util::{force_mech, FlangePair};

/// The eddy current brake.
#[derive(Debug, Clone)]
pub struct EddyCurrentBrake {
    tau_nominal: f64,
    w_nominal: f64,
    t_ref: f64,
    alpha_ref: f64,
    t_fixed: f64,
    excitation: f64,
}

const FLANGE: usize = 1;
const SUPPORT: usize = 2;
const HEAT: usize = 3;
/// The flange relative to its support.
const FL: FlangePair = FlangePair::new(SUPPORT, FLANGE);

impl EddyCurrentBrake {
    /// Device temperature, K.
    fn temperature(&self, cx: &Cx) -> f64 {
        cx.temp(HEAT).unwrap_or(self.t_fixed)
    }
    fn w(cx: &Cx) -> f64 {
        FL.w_rel(cx)
    }
    /// Braking torque magnitude law (positive for positive speed).
    pub fn torque(&self, excitation: f64, w: f64, temp: f64) -> f64 {
        let wn = w / (self.w_nominal * (1.0 + self.alpha_ref * (temp - self.t_ref)));
        2.0 * self.tau_nominal * excitation * excitation * wn / (1.0 + wn * wn)
    }
    fn tau(&self, cx: &Cx) -> f64 {
        self.torque(cx.u(0), Self::w(cx), self.temperature(cx))
    }
}

impl Block for EddyCurrentBrake {
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::optional_input("excitation", self.excitation).with_unit("1"),
            PortDecl::rot("flange"),
            PortDecl::support("support"),
            PortDecl::loss_heat("heat"),
        ];
        let variables = vec![
            VarDecl::new("tau", VarSource::Custom(0), "N*m")
                .doc("braking torque (acts against the flange speed; MSL flange.tau)"),
            VarDecl::new("w", VarSource::Custom(1), "rad/s")
                .doc("flange speed relative to the support"),
            VarDecl::new("lossPower", VarSource::Custom(2), "W").doc("loss power tau·w (>= 0)"),
            VarDecl::new("T", VarSource::Custom(3), "K").doc("device temperature"),
        ];
        let thermal = ThermalDecl {
            has_heat_flows: true,
            reads_temperature: vec![HEAT],
            ..Default::default()
        };
        BlockDecl {
            ports,
            variables,
            mech: force_mech(),
            thermal,
            ..BlockDecl::default()
        }
    }
    fn forces(&self, cx: &Cx, f: &mut Forces) {
        // Brakes the flange, the reaction on the support.
        FL.apply_drive(f, -self.tau(cx));
    }
    fn heat_flows(&self, cx: &Cx, q: &mut HeatFlows) {
        q.add(HEAT, self.tau(cx) * Self::w(cx));
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        match i {
            0 => self.tau(cx),
            1 => Self::w(cx),
            2 => self.tau(cx) * Self::w(cx),
            _ => self.temperature(cx),
        }
    }
}

pub(crate) fn build_eddy(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let alpha20 = p.num("alpha20")?;
    let t_ref = p.positive("TRef")?;
    let alpha_ref = alpha20 / (1.0 + alpha20 * (t_ref - 293.15));
    if !alpha_ref.is_finite() {
        return Err(p.invalid(
            "alpha20",
            format!("gives no finite coefficient at TRef = {t_ref} K"),
        ));
    }
    Ok(Box::new(EddyCurrentBrake {
        tau_nominal: p.non_negative("tau_nominal")?,
        w_nominal: p.positive("w_nominal")?,
        t_ref,
        alpha_ref,
        t_fixed: p.positive("T")?,
        excitation: p.num("constant_excitation")?,
    }))
}
