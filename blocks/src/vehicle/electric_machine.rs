//! `ElectricMachine`: a traction motor/generator as a torque source on its flange, its
//! electrical power at signal level (the bus power a `Battery` is fed with).
//!
//! `cmd[in]` (in [−1, 1], the fraction of the torque available at this speed; negative
//! brakes/generates when turning forward; clamped to [−1, 1]), `flange[rot]`, optional
//! `support[rot]` (the stator; ground when unconnected), optional `heat[heat]` (receives the
//! loss power when connected) -> `tau[out]` (N·m, on the flange,
//! the reaction on the support), `p_elec[out]` (W drawn from the bus, negative while
//! generating), `loss[out]` (W).
//!
//! With `ω = w_flange − w_support`:
//! - envelope `tau_max(ω) = min(max_torque, max_power/|ω|)`, `tau = cmd·tau_max(ω)`. The
//!   corner speed `ω_c = max_power/max_torque` splits a torque-limited and a power-limited
//!   region, a located mode (guard `|ω| − ω_c`): inside a step the torque is one formula.
//!   Above `max_speed` (optional) the torque is cut (mode `overspeed`, entered at
//!   `|ω| = max_speed`, left below `0.99·max_speed`: a 1 % band, so a machine held at its
//!   top speed switches at located instants rather than chattering);
//! - the mechanical power `P = tau·ω`; motoring (`P >= 0`) draws `p_elec = P/η`, generating
//!   returns `p_elec = P·η`. `efficiency` is a number, or FASTSim's form
//!   `{"power_fraction": [...], "eta": [...]}` (η over `|P|/max_power`, linear, held
//!   outside), or a map `{"speed": [...], "torque": [...], "eta": [[...], ...]}` (SI
//!   numbers, one row of `eta` per speed, bilinear, held outside; evaluated at `(ω, tau)`
//!   when an axis reaches below zero, else at `(|ω|, |tau|)`, the same map for all four
//!   quadrants). A table's breakpoints are not located: `p_elec` is continuous but may
//!   have a kink inside a step;
//!   `loss = p_elec − P >= 0`. The quadrant is a located mode (guard `cmd·ω`, with a
//!   hysteresis band of 1e-9 of the corner speed so that a machine standing still with a
//!   little torque keeps its mode);
//! - `regen = false`: no torque in the generating quadrant (`cmd·ω < 0`);
//!   `regen_efficiency`: that quadrant's efficiency as one number, in place of
//!   `efficiency` there (FASTSim 3.1.0 converts all regenerated power at its table's value
//!   at zero power fraction, whatever the power).
//!
//! The energy audit: the machine is an energy source whose supplied work is `∫p_elec dt`;
//! its mechanical work goes into the network and its loss is booked as the block's internal
//! loss (`MechDecl::internal_loss`, listed as `NAME.loss`). In a model with a `Battery`
//! the audit books the battery's chemical energy as the source instead, and the machine's
//! electrical energy as drawn from the bus (the variable `energy_electrical` marks the
//! block as a bus consumer). `inertia` (rotor, kg·m²) is added to the flange's node.
//! Variables `w` (rad/s, ω), `p_mech` (W), `region` (1 torque limited, 2 power limited, 3
//! overspeed), `energy_electrical` (J, ∫p_elec dt, a state from 0).

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, EnergyRole, EventCx, EventTag, Forces, HeatFlows,
    MechDecl, ParamError, ParamKind, ParamSpec, Params, PortDecl, Registry, VarDecl, VarSource,
};

use crate::powertrain::fuel::{check_eta, json_map, keys, power_fraction_table};
use crate::util::{loss_heat, FlangePair, Table1D, Table2D};
use serde_json::Value;

const CMD: usize = 0;
const FLANGE: usize = 1;
const SUPPORT: usize = 2;
/// The optional heat port receiving the loss.
const HEAT: usize = 6;
/// The support drives the flange: `ω = w_flange − w_support`.
const PAIR: FlangePair = FlangePair::new(SUPPORT, FLANGE);
/// The overspeed mode is left below this fraction of `max_speed`.
const OVERSPEED_BAND: f64 = 0.99;

pub(crate) fn register(r: &mut Registry) {
    r.register(electric_machine_type());
}

/// The `ElectricMachine` block type: its parameters and how it is built.
fn electric_machine_type() -> BlockType {
    BlockType {
        name: "ElectricMachine",
        category: "vehicle",
        doc: "Electric motor/generator, a torque source on its flange: tau = cmd·min(max_torque, max_power/|ω|) (corner and max_speed cut as located modes), p_elec = P/η motoring, P·η generating (P = tau·ω), loss = p_elec − P booked as the block's internal loss in the energy audit; regen = false allows no generating torque; regen_efficiency replaces efficiency in the generating quadrant. Variables w, p_mech, region.",
        ports_doc: "cmd[in], flange[rot], support[rot] (optional), heat[heat] (optional) -> tau[out], p_elec[out], loss[out]",
        params: vec![
            ParamSpec::required("max_torque", "N*m", "peak torque (> 0)"),
            ParamSpec::required("max_power", "W", "peak power (> 0)"),
            ParamSpec::optional("max_speed", ParamKind::Number { unit: "rad/s" }, "top speed: no torque above it (> 0; default unlimited)"),
            ParamSpec::with("efficiency", ParamKind::Json, drivelink_core::ParamDefault::Value(1.0.into()), "efficiency in (0, 1]: a number, {\"power_fraction\": [...], \"eta\": [...]} (FASTSim) or {\"speed\": [...], \"torque\": [...], \"eta\": [[...]]} (bilinear)"),
            ParamSpec::number("inertia", "kg*m^2", 0.0, "rotor inertia added to the flange (>= 0)"),
            ParamSpec::with("regen", ParamKind::Bool, drivelink_core::ParamDefault::Value(true.into()), "whether the machine may generate (brake regeneratively)"),
            ParamSpec::optional("regen_efficiency", ParamKind::Number { unit: "1" }, "efficiency in (0, 1] of the generating quadrant, in place of `efficiency` there (FASTSim 3.1 converts all regenerated power at its table's value at zero power fraction)"),
        ],
        build: BlockBuild::Primitive(build),
    }
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let t_max = p.positive("max_torque")?;
    let p_max = p.positive("max_power")?;
    let w_max = match p.opt_num("max_speed")? {
        Some(_) => p.positive("max_speed")?,
        None => f64::INFINITY,
    };
    let eta = efficiency(p)?;
    let eta_regen = match p.opt_num("regen_efficiency")? {
        Some(e) if e > 0.0 && e <= 1.0 => Some(e),
        Some(e) => return Err(p.invalid("regen_efficiency", format!("must be in (0, 1], got {e}"))),
        None => None,
    };
    let inertia = p.non_negative("inertia")?;
    if !inertia.is_finite() {
        return Err(p.invalid("inertia", "must be finite"));
    }
    Ok(Box::new(ElectricMachine {
        t_max,
        p_max,
        w_corner: p_max / t_max,
        w_max,
        eta,
        eta_regen,
        inertia,
        regen: p.bool("regen")?,
        region: Region::Torque,
        generating: false,
        first: true,
    }))
}

/// The efficiency: a number, over the power fraction, or over speed and torque.
#[derive(Debug, Clone)]
enum Efficiency {
    Const(f64),
    PowerFraction(Table1D),
    /// The map, and whether it is evaluated at signed speed and torque.
    Map(Table2D, bool),
}

impl Efficiency {
    /// η at speed `w`, torque `tau` and power fraction `frac` (`P/max_power`).
    fn at(&self, w: f64, tau: f64, frac: f64) -> f64 {
        match self {
            Efficiency::Const(e) => *e,
            Efficiency::PowerFraction(t) => t.eval(frac.abs()),
            Efficiency::Map(m, true) => m.eval(w, tau),
            Efficiency::Map(m, false) => m.eval(w.abs(), tau.abs()),
        }
    }
}

/// The `efficiency` parameter (see the module docs); every η must be in (0, 1].
fn efficiency(p: &Params) -> Result<Efficiency, ParamError> {
    let v = p.json("efficiency")?;
    match &v {
        Value::Number(n) => {
            let e = n.as_f64().unwrap_or(f64::NAN);
            check_eta(p, "efficiency", &[e])?;
            Ok(Efficiency::Const(e))
        }
        Value::Object(o) if o.contains_key("power_fraction") && o.len() == 2 => Ok(
            Efficiency::PowerFraction(power_fraction_table(p, "efficiency", o)?),
        ),
        Value::Object(o) if o.contains_key("speed") && o.len() == 3 => {
            let (map, etas) = json_map(p, "efficiency", o, "eta")?;
            check_eta(p, "efficiency", &etas)?;
            let signed = ["speed", "torque"].iter().any(|k| {
                o[*k]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x.as_f64() < Some(0.0)))
            });
            Ok(Efficiency::Map(map, signed))
        }
        Value::Object(o) => Err(p.invalid(
            "efficiency",
            format!(
                "expected {{power_fraction, eta}} or {{speed, torque, eta}}, got the keys {}",
                keys(o)
            ),
        )),
        _ => Err(p.invalid(
            "efficiency",
            format!("expected a number or an object, got {v}"),
        )),
    }
}

/// The envelope's region (a mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Region {
    Torque,
    Power,
    Overspeed,
}

/// The electric machine: see the module docs.
#[derive(Debug, Clone)]
pub struct ElectricMachine {
    t_max: f64,
    p_max: f64,
    w_corner: f64,
    w_max: f64,
    eta: Efficiency,
    /// The generating quadrant's efficiency, when given apart (`regen_efficiency`).
    eta_regen: Option<f64>,
    inertia: f64,
    regen: bool,
    region: Region,
    /// The quadrant: `cmd·ω < 0` (a mode).
    generating: bool,
    first: bool,
}

impl ElectricMachine {
    /// The torque on the flange for `cmd` at relative speed `w`, in the current modes.
    fn torque(&self, cmd: f64, w: f64) -> f64 {
        if self.generating && !self.regen {
            return 0.0;
        }
        let c = cmd.clamp(-1.0, 1.0);
        match self.region {
            Region::Torque => c * self.t_max,
            Region::Power => c * self.p_max / w.abs(),
            Region::Overspeed => 0.0,
        }
    }
    /// `(tau, p_mech, p_elec, loss)` at this instant.
    fn power(&self, cx: &Cx) -> (f64, f64, f64, f64) {
        let w = PAIR.w_rel(cx);
        let tau = self.torque(cx.u(CMD), w);
        let pm = tau * w;
        let pe = match (self.generating, self.eta_regen) {
            (true, Some(e)) => pm * e,
            (true, None) => pm * self.eta.at(w, tau, pm / self.p_max),
            (false, _) => pm / self.eta.at(w, tau, pm / self.p_max),
        };
        (tau, pm, pe, pe - pm)
    }
    /// The hysteresis band of the quadrant mode, in `cmd·ω` (rad/s): 1e-9 of the corner
    /// speed. A machine held at a standstill with a little torque (a car stopped against
    /// its rolling resistance) sits on the boundary `cmd·ω = 0` where round-off flips the
    /// sign of ω; the band keeps the mode, at a power error below 1e-9 of `max_power`.
    fn quadrant_band(&self) -> f64 {
        1e-9 * self.w_corner
    }
    fn region_for(&self, w: f64) -> Region {
        let a = w.abs();
        if a >= self.w_max || (self.region == Region::Overspeed && a > OVERSPEED_BAND * self.w_max)
        {
            Region::Overspeed
        } else if a > self.w_corner {
            Region::Power
        } else {
            Region::Torque
        }
    }
    fn region_name(r: Region) -> &'static str {
        match r {
            Region::Torque => "torque limited",
            Region::Power => "power limited",
            Region::Overspeed => "overspeed",
        }
    }
}

impl Block for ElectricMachine {
    drivelink_core::run_state!(region, generating, first);
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("cmd").with_unit("1"),
            PortDecl::rot("flange"),
            PortDecl::support("support"),
            PortDecl::output("tau").with_unit("N*m"),
            PortDecl::output("p_elec").with_unit("W"),
            PortDecl::output("loss").with_unit("W"),
            PortDecl::loss_heat("heat"),
        ];
        let variables = vec![
            VarDecl::new("w", VarSource::Custom(0), "rad/s")
                .doc("speed of the flange relative to the support")
                .from_state(),
            VarDecl::new("p_mech", VarSource::Custom(1), "W")
                .doc("mechanical power tau·ω delivered to the flange"),
            VarDecl::new("region", VarSource::Custom(2), "1")
                .doc("1 torque limited, 2 power limited, 3 overspeed"),
            VarDecl::new("energy_electrical", VarSource::Custom(3), "J")
                .doc("electrical energy drawn from the bus since the start, ∫p_elec dt (negative: net generated)")
                .from_state(),
        ];
        let mech = MechDecl {
            masses: if self.inertia > 0.0 {
                vec![(FLANGE, self.inertia)]
            } else {
                Vec::new()
            },
            has_forces: true,
            internal_loss: true,
            ..Default::default()
        };
        BlockDecl {
            ports,
            states: 1,
            variables,
            mech,
            thermal: loss_heat(),
            energy: EnergyRole::Source,
            ..BlockDecl::default()
        }
        .with_guards(&["corner", "max_speed", "quadrant"])
    }
    fn forces(&self, cx: &Cx, f: &mut Forces) {
        let (tau, _, _, loss) = self.power(cx);
        PAIR.apply_drive(f, tau);
        f.dissipate(loss);
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        dx[0] = self.power(cx).2;
    }
    fn heat_flows(&self, cx: &Cx, q: &mut HeatFlows) {
        q.add(HEAT, self.power(cx).3);
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let (tau, _, pe, loss) = self.power(cx);
        y[0] = tau;
        y[1] = pe;
        y[2] = loss;
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let w = PAIR.w_rel(cx);
        let a = w.abs();
        let finite_or = |v: f64| if v.is_finite() { v } else { 1.0 };
        (g[0], g[1]) = match self.region {
            Region::Torque => (self.w_corner - a, finite_or(self.w_max - a)),
            Region::Power => (a - self.w_corner, finite_or(self.w_max - a)),
            Region::Overspeed => (1.0, a - OVERSPEED_BAND * self.w_max),
        };
        let q = cx.u(CMD) * w;
        g[2] = crate::util::hysteresis_guard(!self.generating, q, self.quadrant_band());
    }
    fn reset(&mut self, _t0: f64) {
        self.region = Region::Torque;
        self.generating = false;
        self.first = true;
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = std::mem::take(&mut self.first);
        let view = cx.view();
        let w = PAIR.w_rel(&view);
        let q = view.u(CMD) * w;
        let region = self.region_for(w);
        // Motoring is the "on" side, so a machine at rest (q = 0) starts motoring.
        let generating =
            !crate::util::hysteresis_mode(!self.generating, fresh, q, self.quadrant_band());
        let mut changed = false;
        if region != self.region {
            if !fresh {
                let msg = format!(
                    "{} -> {} at {w} rad/s",
                    Self::region_name(self.region),
                    Self::region_name(region)
                );
                cx.log(EventTag::ZeroCrossing, msg);
            }
            self.region = region;
            changed = true;
        }
        if generating != self.generating {
            if !fresh {
                let msg = if generating {
                    "motoring -> generating"
                } else {
                    "generating -> motoring"
                };
                cx.log(EventTag::ZeroCrossing, msg);
            }
            self.generating = generating;
            changed = true;
        }
        changed
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        match i {
            0 => PAIR.w_rel(cx),
            1 => self.power(cx).1,
            3 => cx.x[0],
            _ => match self.region {
                Region::Torque => 1.0,
                Region::Power => 2.0,
                Region::Overspeed => 3.0,
            },
        }
    }
}
