//! `PowerSplitController`: the rule-based energy management of a power-split hybrid (the
//! Prius layout: engine on the carrier of a planetary gear, generator MG1 on the sun, motor
//! MG2 and the wheels on the ring), turning the driver's pedals into an engine throttle,
//! two machine commands and a friction-brake command.
//!
//! `accel[in]`, `brake[in]` (pedals, `[0, 1]`), `v[in]` (m/s), `soc[in]`, `w_engine[in]`,
//! `w_ring[in]` (rad/s) -> `throttle[out]`, `mg1_cmd[out]`, `mg2_cmd[out]` (fractions of
//! each machine's available torque, `ElectricMachine.cmd`), `brake_cmd[out]` (the friction
//! brake's input). With `g` the planetary's ring/sun ratio and the torques at the ring:
//!
//! ```text
//! T_dem  = accel·ring_torque_max − brake·ring_brake_torque       driver's ring torque
//! P_req  = max(T_dem, 0)·w_ring + soc_gain·(soc_target − soc)    power asked of the engine
//! engine on  while P_req > p_off, switched on when P_req > p_on  (hysteresis, located)
//! P_e    = clamp(P_req, p_off, p_engine_max) when on, else 0
//! w_e*   = engine_line(P_e),  T_e* = P_e / w_e*                  operating point
//! throttle = T_e* / engine_full_torque(w_engine)
//! T_mg1  = (−T_e* + speed_kp·e + i)/(1 + g),  e = w_e* − w_engine,  i' = speed_ki·e
//! T_mg2  = T_dem − g/(1 + g)·T_e*   driving;  braking: the regenerative part
//!          max(T_dem, −T_mg2,avail·fade(v)) − g/(1 + g)·T_e*, the rest by friction
//! ```
//!
//! - **Speeds.** The planetary fixes `(1 + g)·w_engine = w_sun + g·w_ring` (Willis); MG1
//!   sets the engine speed through it: in steady state its torque `−T_e/(1 + g)` reacts
//!   the engine's, and the PI term drives the engine to the operating line. With the
//!   engine off the target is 0: MG1 holds the carrier still while MG2 drives.
//! - **Torques.** The engine's torque reaches the ring as `g/(1 + g)·T_e` (the planetary's
//!   torque split), MG2 adds the rest of the driver's demand. Each machine's command is its
//!   torque over what it has available at its speed, `min(max_torque, max_power/|w|)`,
//!   clamped to `[−1, 1]`.
//! - **Braking.** MG2 takes as much of the braking torque as it can; the friction brake
//!   (`brake_max_torque` at the wheels, `final_ratio` from the ring to the wheels) the
//!   rest. Regeneration fades out between `fade_high` and `fade_low` (m/s), so the car
//!   stops and stands on friction.
//! - **Charge sustaining.** The `soc_gain` term asks the engine for more power below
//!   `soc_target` and less above it: the state of charge returns to the target over a
//!   cycle, and the engine switches on for charging alone when the battery runs low.
//! - **Modes.** Engine on/off is the block's mode, switched at the located zero of its
//!   guard (`P_req − p_on` while off, `P_req − p_off` while on); the speed integral is
//!   reset at each switch. Variables: `engine_on`, `p_request`, `p_engine`,
//!   `w_engine_target`, `torque_engine`, `torque_mg1`, `torque_mg2`, `torque_demand`.

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, EventCx, EventTag, ParamDefault, ParamError,
    ParamKind, ParamSpec, Params, PortDecl, Registry, VarDecl, VarSource,
};

use super::finite;
use crate::util::Table1D;

pub(crate) fn register(r: &mut Registry) {
    r.register(power_split_controller_type());
}

/// The `PowerSplitController` block type: its parameters and how it is built.
fn power_split_controller_type() -> BlockType {
    BlockType {
        name: "PowerSplitController",
        category: "vehicle",
        doc: "Rule-based energy management of a power-split hybrid (engine on the planetary's carrier, MG1 on the sun, MG2 and the wheels on the ring): the pedals give a ring torque demand; the engine runs on its operating line engine_line(P) at the power the demand and the state of charge ask (soc_gain·(soc_target − soc)), switched on above p_on and off below p_off (hysteresis, located); MG1 holds the engine speed (PI, reacting the engine torque through the planetary), MG2 supplies the rest of the ring torque and regenerates, the friction brake takes what MG2 cannot (and all of it below fade_low). Outputs: throttle, mg1_cmd and mg2_cmd (fractions of the machines' available torque, for ElectricMachine.cmd), brake_cmd.",
        ports_doc: "accel[in], brake[in], v[in], soc[in], w_engine[in], w_ring[in] -> throttle[out], mg1_cmd[out], mg2_cmd[out], brake_cmd[out]",
        params: vec![
            ParamSpec::required("ratio", "1", "planetary ring/sun teeth ratio g (> 1)"),
            ParamSpec::required("ring_torque_max", "N*m", "ring torque the accelerator asks at 1 (> 0)"),
            ParamSpec::required("ring_brake_torque", "N*m", "ring torque the brake pedal asks at 1, regenerative plus friction (> 0)"),
            ParamSpec::required("mg1_max_torque", "N*m", "MG1's max_torque (> 0)"),
            ParamSpec::required("mg1_max_power", "W", "MG1's max_power (> 0)"),
            ParamSpec::required("mg2_max_torque", "N*m", "MG2's max_torque, at the ring (> 0)"),
            ParamSpec::required("mg2_max_power", "W", "MG2's max_power (> 0)"),
            ParamSpec::required("brake_max_torque", "N*m", "the friction brake's torque at input 1, at the wheels (> 0)"),
            ParamSpec::number("final_ratio", "1", 1.0, "ring speed over wheel speed (> 0)"),
            ParamSpec::with("engine_full_torque", ParamKind::Table { cols: 2 }, ParamDefault::Value(serde_json::json!(DEFAULT_FULL_TORQUE)), "the engine's torque at full throttle [[speed rad/s, torque N*m], ...] (speeds increasing, torques > 0)"),
            ParamSpec::with("engine_line", ParamKind::Table { cols: 2 }, ParamDefault::Value(serde_json::json!(DEFAULT_LINE)), "operating line: engine speed for an engine power [[power W, speed rad/s], ...] (powers increasing, speeds > 0)"),
            ParamSpec::number("p_on", "W", 12000.0, "power request above which the engine starts (> p_off)"),
            ParamSpec::number("p_off", "W", 5000.0, "power request below which the engine stops (> 0); also its least power while running"),
            ParamSpec::number("p_engine_max", "W", 70000.0, "most power asked of the engine (> p_off)"),
            ParamSpec::number("soc_target", "1", 0.6, "state of charge the strategy sustains, in (0, 1)"),
            ParamSpec::number("soc_gain", "W", 200000.0, "engine power asked per unit of state of charge below the target (>= 0)"),
            ParamSpec::number("speed_kp", "N*m*s", 6.0, "engine speed control: MG1 torque (at the carrier) per rad/s of speed error (> 0)"),
            ParamSpec::number("speed_ki", "N*m", 0.0, "engine speed control: integral gain, per rad of integrated speed error (>= 0)"),
            ParamSpec::number("fade_low", "m/s", 0.2, "speed below which regeneration is off (>= 0)"),
            ParamSpec::number("fade_high", "m/s", 1.0, "speed above which regeneration takes all it can (> fade_low)"),
        ],
        build: BlockBuild::Primitive(build),
    }
}

/// The default full-throttle torque: the third-generation Prius's 73 kW engine (its power
/// polynomial at 544.5 rad/s), `[speed rad/s, torque N·m]`.
const DEFAULT_FULL_TORQUE: [[f64; 2]; 9] = [
    [0.0, 134.068],
    [50.0, 145.249],
    [100.0, 154.168],
    [150.0, 160.827],
    [200.0, 165.224],
    [300.0, 167.237],
    [400.0, 160.205],
    [544.5, 134.068],
    [576.0, 125.863],
];

/// The default operating line of that engine: `[power W, speed rad/s]`.
const DEFAULT_LINE: [[f64; 2]; 6] = [
    [3000.0, 100.0],
    [10000.0, 130.0],
    [20000.0, 180.0],
    [40000.0, 300.0],
    [60000.0, 430.0],
    [73000.0, 544.0],
];

/// A two-column table as a [`Table1D`] (held at its ends), its axis strictly increasing
/// and its values positive.
fn table(p: &Params, name: &str, what: &str) -> Result<Table1D, ParamError> {
    let rows = p.table(name)?;
    if rows.is_empty() {
        return Err(p.invalid(name, format!("needs at least one row [{what}]")));
    }
    let (x, y): (Vec<f64>, Vec<f64>) = rows.iter().map(|r| (r[0], r[1])).unzip();
    if let Some(k) = x.windows(2).position(|w| !(w[1] > w[0])) {
        return Err(p.invalid(
            name,
            format!(
                "the first column must be strictly increasing: row {} ({}) follows {}",
                k + 1,
                x[k + 1],
                x[k]
            ),
        ));
    }
    if let Some(k) = y.iter().position(|v| !(*v > 0.0 && v.is_finite())) {
        return Err(p.invalid(
            name,
            format!("row {k}: the second column must be > 0, got {}", y[k]),
        ));
    }
    Ok(Table1D::new(x, y, false))
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let positive = |name: &str| -> Result<f64, ParamError> {
        let v = finite(p, name)?;
        if !(v > 0.0) {
            return Err(p.invalid(name, format!("must be > 0, got {v}")));
        }
        Ok(v)
    };
    let non_neg = |name: &str| -> Result<f64, ParamError> {
        let v = finite(p, name)?;
        if v < 0.0 {
            return Err(p.invalid(name, format!("must be >= 0, got {v}")));
        }
        Ok(v)
    };
    let g = positive("ratio")?;
    if g <= 1.0 {
        return Err(p.invalid("ratio", format!("must be > 1 (ring/sun teeth), got {g}")));
    }
    let (p_on, p_off, p_max) = (
        positive("p_on")?,
        positive("p_off")?,
        positive("p_engine_max")?,
    );
    if p_on <= p_off {
        return Err(p.invalid("p_on", format!("must be > p_off ({p_off} W), got {p_on} W")));
    }
    if p_max <= p_off {
        return Err(p.invalid(
            "p_engine_max",
            format!("must be > p_off ({p_off} W), got {p_max} W"),
        ));
    }
    let soc_target = finite(p, "soc_target")?;
    if !(soc_target > 0.0 && soc_target < 1.0) {
        return Err(p.invalid("soc_target", format!("must be in (0, 1), got {soc_target}")));
    }
    let (fade_low, fade_high) = (non_neg("fade_low")?, finite(p, "fade_high")?);
    if fade_high <= fade_low {
        return Err(p.invalid(
            "fade_high",
            format!("must be > fade_low ({fade_low} m/s), got {fade_high}"),
        ));
    }
    Ok(Box::new(PowerSplitController {
        g,
        ring_torque_max: positive("ring_torque_max")?,
        ring_brake_torque: positive("ring_brake_torque")?,
        mg1: Envelope {
            torque: positive("mg1_max_torque")?,
            power: positive("mg1_max_power")?,
        },
        mg2: Envelope {
            torque: positive("mg2_max_torque")?,
            power: positive("mg2_max_power")?,
        },
        brake_max_torque: positive("brake_max_torque")?,
        final_ratio: positive("final_ratio")?,
        full_torque: table(p, "engine_full_torque", "speed rad/s, torque N*m")?,
        line: table(p, "engine_line", "power W, speed rad/s")?,
        p_on,
        p_off,
        p_max,
        soc_target,
        soc_gain: non_neg("soc_gain")?,
        kp: positive("speed_kp")?,
        ki: non_neg("speed_ki")?,
        fade_low,
        fade_high,
        on: false,
        first: true,
    }))
}

/// A machine's torque envelope.
#[derive(Debug, Clone, Copy)]
struct Envelope {
    torque: f64,
    power: f64,
}

impl Envelope {
    /// The torque available at speed `w`.
    fn available(self, w: f64) -> f64 {
        if w.abs() * self.torque > self.power {
            self.power / w.abs()
        } else {
            self.torque
        }
    }
    /// `tau` as a command: a fraction of the torque available at `w`, in `[−1, 1]`.
    fn command(self, tau: f64, w: f64) -> f64 {
        (tau / self.available(w)).clamp(-1.0, 1.0)
    }
}

/// The controller: see the module docs.
#[derive(Debug, Clone)]
pub struct PowerSplitController {
    g: f64,
    ring_torque_max: f64,
    ring_brake_torque: f64,
    mg1: Envelope,
    mg2: Envelope,
    brake_max_torque: f64,
    final_ratio: f64,
    full_torque: Table1D,
    line: Table1D,
    p_on: f64,
    p_off: f64,
    p_max: f64,
    soc_target: f64,
    soc_gain: f64,
    kp: f64,
    ki: f64,
    fade_low: f64,
    fade_high: f64,
    /// The engine runs (the mode).
    on: bool,
    first: bool,
}

/// One evaluation of the strategy.
#[derive(Debug, Clone, Copy)]
struct Decision {
    t_dem: f64,
    p_req: f64,
    p_e: f64,
    w_target: f64,
    t_e: f64,
    t_mg1: f64,
    t_mg2: f64,
    throttle: f64,
    mg1_cmd: f64,
    mg2_cmd: f64,
    brake_cmd: f64,
}

impl PowerSplitController {
    /// The ring torque the pedals ask.
    fn demand(&self, cx: &Cx) -> f64 {
        cx.u(0).clamp(0.0, 1.0) * self.ring_torque_max
            - cx.u(1).clamp(0.0, 1.0) * self.ring_brake_torque
    }
    /// The power asked of the engine (the mode's guard quantity).
    fn request(&self, cx: &Cx) -> f64 {
        let w_ring = cx.u(5);
        self.demand(cx).max(0.0) * w_ring + self.soc_gain * (self.soc_target - cx.u(3))
    }
    fn decide(&self, cx: &Cx) -> Decision {
        let (v, w_e, w_ring) = (cx.u(2), cx.u(4), cx.u(5));
        let t_dem = self.demand(cx);
        let p_req = self.request(cx);
        let (p_e, w_target) = if self.on {
            let p = p_req.clamp(self.p_off, self.p_max);
            (p, self.line.eval(p))
        } else {
            (0.0, 0.0)
        };
        let t_e = if self.on { p_e / w_target } else { 0.0 };
        let throttle = (t_e / self.full_torque.eval(w_e.max(0.0))).clamp(0.0, 1.0);
        let share = self.g / (1.0 + self.g);
        let t_mg1 = (-t_e + self.kp * (w_target - w_e) + cx.x[0]) / (1.0 + self.g);
        let (ring, friction) = if t_dem >= 0.0 {
            (t_dem, 0.0)
        } else {
            let fade = ((v - self.fade_low) / (self.fade_high - self.fade_low)).clamp(0.0, 1.0);
            let regen = t_dem.max(-self.mg2.available(w_ring) * fade);
            (regen, regen - t_dem)
        };
        let t_mg2 = ring - share * t_e;
        Decision {
            t_dem,
            p_req,
            p_e,
            w_target,
            t_e,
            t_mg1,
            t_mg2,
            throttle,
            mg1_cmd: self
                .mg1
                .command(t_mg1, w_e * (1.0 + self.g) - self.g * w_ring),
            mg2_cmd: self.mg2.command(t_mg2, w_ring),
            brake_cmd: (friction * self.final_ratio / self.brake_max_torque).clamp(0.0, 1.0),
        }
    }
}

impl Block for PowerSplitController {
    drivelink_core::run_state!(on, first);
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("accel").with_unit("1"),
            PortDecl::input("brake").with_unit("1"),
            PortDecl::input("v").with_unit("m/s"),
            PortDecl::input("soc").with_unit("1"),
            PortDecl::input("w_engine").with_unit("rad/s"),
            PortDecl::input("w_ring").with_unit("rad/s"),
            PortDecl::output("throttle").with_unit("1"),
            PortDecl::output("mg1_cmd").with_unit("1"),
            PortDecl::output("mg2_cmd").with_unit("1"),
            PortDecl::output("brake_cmd").with_unit("1"),
        ];
        let variables = vec![
            VarDecl::new("engine_on", VarSource::Custom(0), "1").doc("1 while the engine runs"),
            VarDecl::new("p_request", VarSource::Custom(1), "W")
                .doc("power asked of the engine P_req"),
            VarDecl::new("p_engine", VarSource::Custom(2), "W")
                .doc("engine power target P_e (0 while off)"),
            VarDecl::new("w_engine_target", VarSource::Custom(3), "rad/s")
                .doc("engine speed target on the operating line"),
            VarDecl::new("torque_engine", VarSource::Custom(4), "N*m")
                .doc("engine torque target T_e*"),
            VarDecl::new("torque_mg1", VarSource::Custom(5), "N*m").doc("MG1 torque asked (sun)"),
            VarDecl::new("torque_mg2", VarSource::Custom(6), "N*m").doc("MG2 torque asked (ring)"),
            VarDecl::new("torque_demand", VarSource::Custom(7), "N*m")
                .doc("the pedals' ring torque demand"),
        ];
        BlockDecl {
            ports,
            states: 1,
            variables,
            ..BlockDecl::default()
        }
        .guards_named(1, |_i| {
            if self.on {
                "engine_stop"
            } else {
                "engine_start"
            }
            .into()
        })
    }
    fn initial_states(&self, x: &mut [f64]) {
        x[0] = 0.0;
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let d = self.decide(cx);
        y[0] = d.throttle;
        y[1] = d.mg1_cmd;
        y[2] = d.mg2_cmd;
        y[3] = d.brake_cmd;
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        let d = self.decide(cx);
        dx[0] = self.ki * (d.w_target - cx.u(4));
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let p = self.request(cx);
        g[0] = if self.on {
            p - self.p_off
        } else {
            self.p_on - p
        };
    }
    fn reset(&mut self, _t0: f64) {
        self.on = false;
        self.first = true;
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = std::mem::take(&mut self.first);
        let p = self.request(&cx.view());
        let on = if self.on {
            p >= self.p_off
        } else {
            p > self.p_on
        };
        if on == self.on || p.is_nan() {
            return false;
        }
        if !fresh {
            cx.log(
                EventTag::ZeroCrossing,
                format!(
                    "engine {}, power request {p:.1} W",
                    if on { "on" } else { "off" }
                ),
            );
        }
        self.on = on;
        // The speed integral starts afresh with each operating point.
        cx.x[0] = 0.0;
        true
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        let d = self.decide(cx);
        match i {
            0 => f64::from(u8::from(self.on)),
            1 => d.p_req,
            2 => d.p_e,
            3 => d.w_target,
            4 => d.t_e,
            5 => d.t_mg1,
            6 => d.t_mg2,
            _ => d.t_dem,
        }
    }
}
