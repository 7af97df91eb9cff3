//! Powertrain blocks: `Engine` (SimDriveline gasoline/diesel power polynomial with a speed
//! governor), `TorqueConverter` (capacity-factor and torque-ratio tables, coast branch,
//! optional lag) and `CrCr4Speed` (two planetary gears in the CR-CR arrangement with
//! clutches A, B, R and brakes C, D, built from library blocks as a composite).
//!
//! Equations and default tables: `shared/reference/simdriveline-blocks.md` §2, §3, §5.

use drivelink_core::{
    BlockBuild, BlockDecl, BlockType, Cx, Diagram, EnergyRole, EventCx, EventTag, Forces, MechDecl,
    ParamDefault, ParamError, ParamKind, ParamSpec, ParamValue, Params, PortDecl, Registry,
    VarDecl, VarSource,
};
use serde_json::{json, Value};

use drivelink_core::Block;

use crate::signal::FirstCall;
use crate::util::{Table1D, Table2D};

pub(crate) mod fuel;
use fuel::Fuel;

/// SimDriveline 1.x default converter tables (speed ratio, torque ratio, capacity factor K
/// in rad/s/√(N·m)).
pub const DEFAULT_SPEED_RATIO: [f64; 10] = [0.0, 0.5, 0.6, 0.7, 0.8, 0.87, 0.92, 0.94, 0.96, 0.97];
pub const DEFAULT_TORQUE_RATIO: [f64; 10] = [
    2.232, 1.5462, 1.4058, 1.2746, 1.1528, 1.0732, 1.0192, 0.9983, 0.9983, 0.9983,
];
pub const DEFAULT_CAPACITY: [f64; 10] = [
    12.2938, 12.8588, 13.1452, 13.6285, 14.6163, 16.2675, 19.3503, 22.1046, 29.9986, 50.0,
];

/// Register the powertrain blocks.
pub fn register(r: &mut Registry) {
    r.register(BlockType {
        name: "Engine",
        category: "powertrain",
        doc: "Gasoline or diesel engine: tau = throttle·(P_max/Ω0)·(p1 + p2·w − p3·w²), w = Ω/Ω0, throttle clamped to [0,1]; zero torque at Ω <= 0 (Ω < 0 with a torque_map, which gives its torque at rest) and above max_speed (smooth governor band). Optional: torque_map (torque over speed × throttle, bilinear, replaces the polynomial), friction (motoring torque over |speed|, opposing the rotation, also while stalled; the energy audit books its work as the loss NAME.friction and the combustion work as the engine's supplied energy), idle_speed (an idle controller raises the throttle to idle_gain·(idle_speed − Ω) below it), stall_speed (below it the engine stalls: no combustion torque, a logged stall event, the run goes on; it does not restart), inertia (crankshaft inertia on the crank node, initial speed w0). Without them the torque is exactly the polynomial's. Fuel (optional): efficiency over the power fraction (FASTSim's form: fuel power = P_out/η(P_out/max_power), P_out = max(tau·Ω, 0) + aux_power) or fuel_map (g/s or BSFC g/kWh over speed × torque), at least idle_fuel_power while running, none once stalled; fuel_rate = fuel power/fuel_lhv, fuel its integral; the energy audit then books the fuel energy as the engine's supplied energy and fuel power − shaft power as the loss NAME.loss.",
        params: vec![
            ParamSpec::with("kind", ParamKind::Choice(&["gasoline", "diesel"]), ParamDefault::Value(json!("gasoline")), "power polynomial preset"),
            ParamSpec::number("max_power", "W", 150e3, "maximum power P_max (> 0)"),
            ParamSpec::number("speed_at_max_power", "rad/s", 4500.0 * std::f64::consts::PI / 30.0, "speed Ω0 at maximum power (> 0)"),
            ParamSpec::number("max_speed", "rad/s", 6000.0 * std::f64::consts::PI / 30.0, "maximum speed: no torque above it (> speed_at_max_power)"),
            ParamSpec::optional("polynomial", ParamKind::Vector { unit: "1" }, "custom [p1, p2, p3] with p1 + p2 − p3 = 1"),
            ParamSpec::optional("governor_band", ParamKind::Number { unit: "rad/s" }, "width of the governor band below max_speed (default 1% of max_speed)"),
            ParamSpec::optional("torque_map", ParamKind::Matrix, "combustion torque in N*m: one row per torque_map_speed breakpoint, one column per torque_map_throttle breakpoint (bilinear, edge values held, cell edges located as events; the governor still applies)"),
            ParamSpec::optional("torque_map_speed", ParamKind::Vector { unit: "rad/s" }, "speed breakpoints of torque_map, strictly increasing"),
            ParamSpec::optional("torque_map_throttle", ParamKind::Vector { unit: "1" }, "throttle breakpoints of torque_map, strictly increasing"),
            ParamSpec::optional("friction", ParamKind::Table { cols: 2 }, "motoring (friction) torque [[|speed| rad/s, torque N*m], ...], >= 0 and 0 at speed 0; opposes the rotation"),
            ParamSpec::optional("idle_speed", ParamKind::Number { unit: "rad/s" }, "idle speed held by the idle controller (> stall_speed)"),
            ParamSpec::number("idle_gain", "s/rad", 0.05, "idle controller gain: throttle per rad/s below idle_speed (> 0; proportional, so it settles slightly below idle_speed under load)"),
            ParamSpec::optional("stall_speed", ParamKind::Number { unit: "rad/s" }, "speed below which the engine stalls (> 0)"),
            ParamSpec::optional("inertia", ParamKind::Number { unit: "kg*m^2" }, "crankshaft inertia added to the crank node (> 0)"),
            ParamSpec::optional("w0", ParamKind::Number { unit: "rad/s" }, "initial crank speed (with inertia)"),
            ParamSpec::optional("efficiency", ParamKind::Json, "fuel conversion efficiency, FASTSim's form {\"power_fraction\": [...], \"eta\": [...]}: η in (0, 1] over P_out/max_power (fractions strictly increasing, >= 0; linear, ends held)"),
            ParamSpec::optional("fuel_map", ParamKind::Json, "fuel map over crank speed (rad/s) × shaft torque (N*m), one row per speed: {\"speed\": [...], \"torque\": [...], \"rate\": [[g/s ...]]} or {..., \"bsfc\": [[g/kWh ...]]} (>= 0; bilinear, edges held)"),
            ParamSpec::optional("fuel_lhv", ParamKind::Number { unit: "J/kg" }, "fuel lower heating value (> 0; default 43.2e6, FASTSim's gasoline)"),
            ParamSpec::optional("aux_power", ParamKind::Number { unit: "W" }, "accessory power the engine carries while running, added to the shaft power in the efficiency form (>= 0; FASTSim's pwr_aux)"),
            ParamSpec::optional("idle_fuel_power", ParamKind::Number { unit: "W" }, "least fuel power while running (>= 0; FASTSim's pwr_idle_fuel; default 0)"),
        ],
        build: BlockBuild::Primitive(build_engine),
        ports_doc: "throttle[in], crank[rot]",
    });
    let vec_default = |v: &[f64]| ParamDefault::Value(Value::from(v.to_vec()));
    r.register(BlockType {
        name: "TorqueConverter",
        category: "powertrain",
        doc: "Hydrodynamic torque converter: tau_impeller = (w_i/K(φ))², tau_turbine = TR(φ)·tau_impeller, φ = w_t/w_i; smooth to zero at φ = 1 and a coast branch (TR = 1) beyond. Between breakpoints the table is interpolated linearly in 1/K² (the torque per speed²), not in K (Simscape's choice): at a midpoint the two differ by a fraction of a percent (0.37 % at φ = 0.75 with the defaults).",
        params: vec![
            ParamSpec::with("speed_ratio", ParamKind::Vector { unit: "1" }, vec_default(&DEFAULT_SPEED_RATIO), "speed ratio breakpoints φ in [0, 1), increasing"),
            ParamSpec::with("torque_ratio", ParamKind::Vector { unit: "1" }, vec_default(&DEFAULT_TORQUE_RATIO), "torque ratio TR(φ)"),
            ParamSpec::with("capacity_factor", ParamKind::Vector { unit: "1" }, vec_default(&DEFAULT_CAPACITY), "capacity factor K(φ) = w_i/√tau_i in rad/s/√(N·m) (> 0)"),
            ParamSpec::number("time_constant", "s", 0.0, "first-order lag of the impeller torque (0 = none)"),
        ],
        build: BlockBuild::Primitive(build_converter),
        ports_doc: "impeller[rot], turbine[rot]",
    });
    r.register(BlockType {
        name: "CrCr4Speed",
        category: "powertrain",
        doc: "CR-CR 4-speed automatic: input planetary (g1) and output planetary (g2); clutches A (input->S_O), B (input->C_I=R_O), R (input->S_I), brakes C (S_I) and D (C_I=R_O). 1st A+D, 2nd A+C, 3rd A+B, 4th B+C, reverse R+D.",
        params: vec![
            ParamSpec::number("input_ratio", "1", 2.3, "g1: ring/sun teeth of the input planetary"),
            ParamSpec::number("output_ratio", "1", 2.0, "g2: ring/sun teeth of the output planetary"),
            ParamSpec::with("mu", ParamKind::NumberOrTable { unit: "1" }, ParamDefault::Value(json!(0.3)), "clutch kinetic friction coefficient or table [[slip, mu], ...]"),
            ParamSpec::number("peak", "1", 1.1, "static friction peak factor"),
            ParamSpec::number("surfaces", "1", 6.0, "friction surfaces per clutch"),
            ParamSpec::number("radius", "m", 0.1, "effective torque radius"),
            ParamSpec::number("fn_max", "N", 10000.0, "peak normal force (at pressure 1)"),
            ParamSpec::number("member_inertia", "kg*m^2", 0.005, "inertia of each planetary member and shaft"),
        ],
        build: BlockBuild::Composite(build_crcr),
        ports_doc: "input[rot], output[rot], A[in], B[in], C[in], D[in], R[in]",
    });
}

fn build_engine(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let kind = p.text("kind")?;
    let poly = match p.values.get("polynomial") {
        Some(ParamValue::Vector(v)) => {
            if v.len() != 3 {
                return Err(p.invalid(
                    "polynomial",
                    format!("expected [p1, p2, p3], got {} entries", v.len()),
                ));
            }
            // The engine delivers max_power at speed_at_max_power only when the
            // polynomial is 1 there (SimDriveline's constraint); published coefficients
            // are rounded to four decimals, hence the tolerance.
            let sum = v[0] + v[1] - v[2];
            if !((sum - 1.0).abs() <= 1e-3) {
                return Err(p.invalid(
                    "polynomial",
                    format!(
                        "p1 + p2 − p3 must be 1 (the torque at speed_at_max_power then gives max_power), got {} + {} − {} = {sum}",
                        v[0], v[1], v[2]
                    ),
                ));
            }
            [v[0], v[1], v[2]]
        }
        _ if kind == "diesel" => [0.6526, 1.6948, 1.3474],
        _ => [1.0, 1.0, 1.0],
    };
    let p_max = p.positive("max_power")?;
    let w0 = p.positive("speed_at_max_power")?;
    let w_max = p.positive("max_speed")?;
    if w_max <= w0 {
        return Err(p.invalid(
            "max_speed",
            format!("must exceed speed_at_max_power ({w0} rad/s), got {w_max} rad/s"),
        ));
    }
    let [p1, p2, p3] = poly;
    // The power polynomial p(w) = p1 w + p2 w² − p3 w³ must stay positive up to max_speed.
    let w_lim = if p3 > 0.0 {
        (p2 + (p2 * p2 + 4.0 * p1 * p3).sqrt()) / (2.0 * p3)
    } else {
        f64::INFINITY
    };
    // (With a torque map the polynomial is not used.)
    if w_max / w0 >= w_lim && !p.has("torque_map") {
        return Err(p.invalid(
            "max_speed",
            format!("{w_max} rad/s is beyond the speed where the power polynomial reaches zero ({:.1} rad/s = {w_lim:.3}·speed_at_max_power)", w_lim * w0),
        ));
    }
    let band = match p.opt_num("governor_band")? {
        Some(b) if b > 0.0 => b,
        Some(b) => return Err(p.invalid("governor_band", format!("must be > 0, got {b}"))),
        None => 0.01 * w_max,
    };
    Ok(Box::new(Engine {
        p1,
        p2,
        p3,
        tq: p_max / w0,
        w0,
        w_max,
        band,
        ext: engine_extensions(p)?,
        fuel: Fuel::from_params(p, p_max)?,
        stalled: false,
        map_cell: (0, 0),
        first: FirstCall::armed(),
    }))
}

/// The optional parts of an `Engine` (`None` when none is given: the plain polynomial).
fn engine_extensions(p: &Params) -> Result<Option<EngineExt>, ParamError> {
    let map_names = ["torque_map", "torque_map_speed", "torque_map_throttle"];
    let map = match map_names.iter().filter(|n| p.has(n)).count() {
        0 => None,
        3 => Some(Table2D::from_params(
            p,
            "torque_map_speed",
            "torque_map_throttle",
            "torque_map",
            false,
        )?),
        _ => {
            let missing = map_names
                .iter()
                .find(|n| !p.has(n))
                .copied()
                .unwrap_or("torque_map");
            return Err(p.invalid(
                missing,
                "is required with the other torque_map parameters (torque_map, torque_map_speed, torque_map_throttle)",
            ));
        }
    };
    let friction = if p.has("friction") {
        let (x, y) = p.xy_table("friction")?;
        if x[0] < 0.0 {
            return Err(p.invalid("friction", format!("speeds are |speed| >= 0, got {}", x[0])));
        }
        if let Some(bad) = y.iter().find(|v| !(**v >= 0.0)) {
            return Err(p.invalid("friction", format!("torques must be >= 0, got {bad}")));
        }
        let t = Table1D::new(x, y, false);
        if t.eval(0.0) != 0.0 {
            return Err(p.invalid(
                "friction",
                format!(
                    "must be 0 at speed 0 (got {} N*m): a stalled engine would turn backwards",
                    t.eval(0.0)
                ),
            ));
        }
        Some(t)
    } else {
        None
    };
    let stall = match p.opt_num("stall_speed")? {
        Some(v) if v > 0.0 => Some(v),
        Some(v) => return Err(p.invalid("stall_speed", format!("must be > 0, got {v} rad/s"))),
        None => None,
    };
    let idle = match p.opt_num("idle_speed")? {
        Some(v) if v > stall.unwrap_or(0.0) => Some(v),
        Some(v) => {
            return Err(p.invalid(
                "idle_speed",
                format!(
                    "must be > 0 and above stall_speed ({} rad/s), got {v} rad/s",
                    stall.unwrap_or(0.0)
                ),
            ))
        }
        None => None,
    };
    let idle_gain = p.positive("idle_gain")?;
    let inertia = match p.opt_num("inertia")? {
        Some(j) if j > 0.0 => Some(j),
        Some(j) => return Err(p.invalid("inertia", format!("must be > 0, got {j}"))),
        None => None,
    };
    let w_init = p.opt_num("w0")?;
    if w_init.is_some() && inertia.is_none() {
        return Err(p.invalid(
            "w0",
            "is only used with inertia (set the crank node's speed on its Inertia otherwise)",
        ));
    }
    if map.is_none() && friction.is_none() && stall.is_none() && idle.is_none() && inertia.is_none()
    {
        return Ok(None);
    }
    Ok(Some(EngineExt {
        map,
        friction,
        idle,
        idle_gain,
        stall,
        inertia,
        w_init,
    }))
}

/// Optional engine features. See the `Engine` catalogue entry.
#[derive(Debug, Clone)]
struct EngineExt {
    map: Option<Table2D>,
    friction: Option<Table1D>,
    idle: Option<f64>,
    idle_gain: f64,
    stall: Option<f64>,
    inertia: Option<f64>,
    w_init: Option<f64>,
}

/// The SimDriveline engine.
pub struct Engine {
    p1: f64,
    p2: f64,
    p3: f64,
    /// P_max/Ω0.
    tq: f64,
    w0: f64,
    w_max: f64,
    band: f64,
    /// Torque map, friction, idle control, stall, inertia (`None`: the plain polynomial).
    ext: Option<EngineExt>,
    /// The fuel law (`None`: no fuel accounting; the audit books the shaft work).
    fuel: Option<Fuel>,
    /// Stalled (below `stall_speed` since the logged stall event).
    stalled: bool,
    /// The torque map's cell at (speed, effective throttle): a mode, so a step never
    /// straddles a cell edge (as `Lookup2D`).
    map_cell: (usize, usize),
    first: FirstCall,
}

impl Engine {
    /// Full-throttle torque envelope at speed `w` (rad/s), without the governor.
    pub fn envelope(&self, w: f64) -> f64 {
        if w <= 0.0 {
            return 0.0;
        }
        let x = w / self.w0;
        self.tq * (self.p1 + self.p2 * x - self.p3 * x * x)
    }
    /// Governor factor in [0, 1]: 1 below the band, 0 at and above max speed, C¹ in between.
    pub fn governor(&self, w: f64) -> f64 {
        let xi = ((self.w_max - w) / self.band).clamp(0.0, 1.0);
        xi * xi * (3.0 - 2.0 * xi)
    }
    /// Engine torque for throttle `u` at speed `w`: the polynomial's, or with the optional
    /// features the combustion torque (map or polynomial, idle control, zero when
    /// stalled) plus the friction torque.
    pub fn torque(&self, u: f64, w: f64) -> f64 {
        match &self.ext {
            None => u.clamp(0.0, 1.0) * self.envelope(w) * self.governor(w),
            Some(e) => self.combustion(e, u, w) + Self::friction(e, w),
        }
    }
    /// The throttle after the idle controller.
    fn throttle(e: &EngineExt, u: f64, w: f64) -> f64 {
        let u = u.clamp(0.0, 1.0);
        match e.idle {
            Some(idle) => u.max((e.idle_gain * (idle - w)).clamp(0.0, 1.0)),
            None => u,
        }
    }
    fn combustion(&self, e: &EngineExt, u: f64, w: f64) -> f64 {
        // The polynomial is a power law (no torque at rest); a torque map says what the
        // engine gives at rest.
        if self.stalled || w < 0.0 || (w == 0.0 && e.map.is_none()) {
            return 0.0;
        }
        let u = Self::throttle(e, u, w);
        let full = match &e.map {
            Some(m) => m.eval_in(w, u, self.map_cell),
            None => u * self.envelope(w),
        };
        full * self.governor(w)
    }
    /// Friction torque on the crank (opposes the rotation, 0 at rest).
    fn friction(e: &EngineExt, w: f64) -> f64 {
        match &e.friction {
            Some(f) => -w.signum() * f.eval(w.abs()),
            None => 0.0,
        }
    }
    fn stall_speed(&self) -> Option<f64> {
        self.ext.as_ref().and_then(|e| e.stall)
    }
    fn map(&self) -> Option<&Table2D> {
        self.ext.as_ref().and_then(|e| e.map.as_ref())
    }
    /// The torque map's inputs: crank speed and the throttle after the idle controller.
    fn map_point(&self, cx: &Cx) -> (f64, f64) {
        let w = cx.v(1);
        match &self.ext {
            Some(e) => (w, Self::throttle(e, cx.u(0), w)),
            None => (w, cx.u(0)),
        }
    }
    /// The stall mode at an event (`fresh`: the first update of the run).
    fn update_stall(&mut self, cx: &mut EventCx, fresh: bool) -> bool {
        let Some(ws) = self.stall_speed() else {
            return false;
        };
        let w = cx.v(1);
        if self.stalled || w >= ws {
            return false;
        }
        self.stalled = true;
        let when = if fresh {
            "at the start"
        } else {
            "engine dragged down"
        };
        cx.log(
            EventTag::Stall,
            format!("stalled ({when}): crank speed {w} rad/s below stall_speed {ws} rad/s; no combustion torque from now on"),
        );
        true
    }
    /// Number of stall guards (0 or 1); the map's four cell guards follow.
    fn n_stall_guards(&self) -> usize {
        usize::from(self.stall_speed().is_some())
    }
    /// `(shaft torque, fuel power W)` at throttle `u` and crank speed `w`: no fuel without
    /// a fuel law or once stalled.
    fn torque_and_fuel(&self, u: f64, w: f64) -> (f64, f64) {
        let tau = self.torque(u, w);
        let fuel = match &self.fuel {
            Some(f) if !self.stalled => f.power(w, tau),
            _ => 0.0,
        };
        (tau, fuel)
    }
}

impl Block for Engine {
    drivelink_core::run_state!(map_cell, stalled, first);
    fn declare(&self) -> BlockDecl {
        // Declared whatever the options, so the catalogue (built with the defaults) lists
        // them; without friction, idle control or stall they read 0, the clamped throttle
        // and 0.
        let variables = vec![
            VarDecl::new("w", VarSource::Speed(1), "rad/s").doc("crankshaft speed"),
            VarDecl::new("tau", VarSource::Custom(0), "N*m").doc("engine torque on the crankshaft"),
            VarDecl::new("power", VarSource::Custom(1), "W").doc("engine power"),
            VarDecl::new("tau_friction", VarSource::Custom(2), "N*m")
                .doc("friction (motoring) torque on the crankshaft, included in tau (0 without friction)"),
            VarDecl::new("throttle_eff", VarSource::Custom(3), "1")
                .doc("throttle after the idle controller, clamped to [0, 1] (0 while stalled)"),
            VarDecl::new("stalled", VarSource::Custom(4), "1")
                .doc("1 once the engine has stalled (needs stall_speed)"),
            VarDecl::new("fuel_rate", VarSource::Custom(5), "g/s")
                .doc("fuel mass flow (needs efficiency or fuel_map; 0 without)"),
            VarDecl::new("fuel", VarSource::Custom(6), "g")
                .doc("fuel burnt since the start, the integral of fuel_rate (0 without a fuel law)")
                .from_state(),
            VarDecl::new("fuel_power", VarSource::Custom(7), "W")
                .doc("fuel chemical power, fuel_rate times fuel_lhv (0 without a fuel law)"),
        ];
        let mut m = MechDecl {
            has_forces: true,
            internal_loss: self.fuel.is_some()
                || self.ext.as_ref().is_some_and(|e| e.friction.is_some()),
            ..Default::default()
        };
        if let Some(j) = self.ext.as_ref().and_then(|e| e.inertia) {
            m.masses.push((1, j));
            if let Some(w) = self.ext.as_ref().and_then(|e| e.w_init) {
                m.initial.push((1, w, 0.0));
            }
        }
        BlockDecl {
            ports: vec![PortDecl::input("throttle"), PortDecl::rot("crank")],
            states: usize::from(self.fuel.is_some()),
            variables,
            mech: m,
            energy: EnergyRole::Source,
            loss_name: if self.fuel.is_some() {
                "loss"
            } else {
                "friction"
            },
            ..BlockDecl::default()
        }
        .guards_named(
            self.n_stall_guards() + if self.map().is_some() { 4 } else { 0 },
            |i| match i.checked_sub(self.n_stall_guards()) {
                None => "stall".into(),
                Some(k) => [
                    "map_speed_low",
                    "map_speed_high",
                    "map_throttle_low",
                    "map_throttle_high",
                ][k.min(3)]
                .into(),
            },
        )
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        if let Some(f) = &self.fuel {
            dx[0] = f.rate(self.torque_and_fuel(cx.u(0), cx.v(1)).1);
        }
    }
    fn forces(&self, cx: &Cx, f: &mut Forces) {
        let w = cx.v(1);
        if self.fuel.is_some() {
            // The fuel power is supplied, the shaft power delivered: the rest (friction
            // included) is the engine's loss.
            let (tau, fuel) = self.torque_and_fuel(cx.u(0), w);
            f.add(1, tau);
            f.dissipate(fuel - tau * w);
            return;
        }
        f.add(1, self.torque(cx.u(0), w));
        // The friction torque opposes the rotation: its power is dissipated in the engine.
        if let Some(e) = self.ext.as_ref().filter(|e| e.friction.is_some()) {
            f.dissipate(-Self::friction(e, w) * w);
        }
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let ns = self.n_stall_guards();
        if let Some(ws) = self.stall_speed() {
            g[0] = if self.stalled { 1.0 } else { cx.v(1) - ws };
        }
        if let Some(m) = self.map() {
            let (w, u) = self.map_point(cx);
            m.cell_guards(w, u, self.map_cell, &mut g[ns..ns + 4]);
        }
    }
    fn reset(&mut self, _t0: f64) {
        self.stalled = false;
        self.map_cell = (0, 0);
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = self.first.take();
        let mut changed = false;
        if let Some(m) = self.map() {
            let (w, u) = self.map_point(&cx.view());
            if !(w.is_nan() || u.is_nan()) {
                let cell = m.cell(w, u);
                changed = cell != self.map_cell;
                self.map_cell = cell;
            }
        }
        changed | self.update_stall(cx, fresh)
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        let (u, w) = (cx.u(0), cx.v(1));
        match (i, &self.ext) {
            (0, _) => self.torque(u, w),
            (1, _) => self.torque(u, w) * w,
            (2, Some(e)) => Self::friction(e, w),
            (3, Some(e)) if !self.stalled => Self::throttle(e, u, w),
            (3, None) => u.clamp(0.0, 1.0),
            (4, _) => f64::from(u8::from(self.stalled)),
            (5 | 7, _) => match &self.fuel {
                Some(f) => {
                    let p = self.torque_and_fuel(u, w).1;
                    if i == 5 {
                        f.rate(p)
                    } else {
                        p
                    }
                }
                None => 0.0,
            },
            (6, _) if self.fuel.is_some() => cx.x[0],
            _ => 0.0,
        }
    }
    /// `tau` and `power` (logged together in the full car) from one torque evaluation.
    fn vars(&self, cx: &Cx, which: &[usize], out: &mut [f64]) {
        let mut tau = None;
        for (o, &i) in out.iter_mut().zip(which) {
            *o = match i {
                0 | 1 => {
                    let t = *tau.get_or_insert_with(|| self.torque(cx.u(0), cx.v(1)));
                    if i == 0 {
                        t
                    } else {
                        t * cx.v(1)
                    }
                }
                _ => self.var(cx, i),
            };
        }
    }
}

fn build_converter(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let sr = p.vector("speed_ratio")?.to_vec();
    let tr = p.vector("torque_ratio")?.to_vec();
    let k = p.vector("capacity_factor")?.to_vec();
    if sr.is_empty() {
        return Err(p.invalid("speed_ratio", "is empty"));
    }
    if tr.len() != sr.len() || k.len() != sr.len() {
        return Err(p.invalid(
            "torque_ratio",
            format!("speed_ratio, torque_ratio and capacity_factor must have equal lengths ({}, {}, {})", sr.len(), tr.len(), k.len()),
        ));
    }
    for w in sr.windows(2) {
        if w[1] <= w[0] {
            return Err(p.invalid(
                "speed_ratio",
                format!("must be strictly increasing ({} after {})", w[1], w[0]),
            ));
        }
    }
    if sr[0] < 0.0 || sr[sr.len() - 1] >= 1.0 {
        return Err(p.invalid("speed_ratio", "breakpoints must lie in [0, 1)"));
    }
    if let Some(bad) = k.iter().find(|v| **v <= 0.0) {
        return Err(p.invalid("capacity_factor", format!("must be > 0, got {bad}")));
    }
    let tc = p.non_negative("time_constant")?;
    // Work with K* = 1/K² (torque per speed²), which goes smoothly to zero at φ = 1.
    let mut x = sr.clone();
    let mut kstar: Vec<f64> = k.iter().map(|k| 1.0 / (k * k)).collect();
    let mut trv = tr.clone();
    x.push(1.0);
    kstar.push(0.0);
    trv.push(1.0);
    Ok(Box::new(TorqueConverter {
        kstar: Table1D::new(x.clone(), kstar, false),
        tr: Table1D::new(x, trv, false),
        tc,
    }))
}

/// Hydrodynamic torque converter.
pub struct TorqueConverter {
    kstar: Table1D,
    tr: Table1D,
    tc: f64,
}

impl TorqueConverter {
    /// Steady-state (impeller load, turbine torque) at impeller speed `wi`, turbine `wt`.
    /// Drive (φ <= 1): tau_i = K*(φ)·wi², tau_t = TR(φ)·tau_i. Coast (φ > 1): the turbine
    /// drives, tau_i = −K*(1/φ)·wt², TR = 1. No torque for wi <= 0.
    pub fn steady(&self, wi: f64, wt: f64) -> (f64, f64) {
        if wi <= 0.0 {
            return (0.0, 0.0);
        }
        let phi = wt / wi;
        if phi <= 1.0 {
            // K* and TR share the speed-ratio axis: one search for both.
            let u = phi.max(0.0);
            let k = self.kstar.segment(u);
            let ti = self.kstar.eval_in(k, u) * wi * wi;
            (ti, self.tr.eval_in(k, u) * ti)
        } else {
            let ti = -self.kstar.eval(1.0 / phi) * wt * wt;
            (ti, ti)
        }
    }
    fn torques(&self, cx: &Cx) -> (f64, f64) {
        let (ti, tt) = self.steady(cx.v(0), cx.v(1));
        if self.tc > 0.0 {
            // The lagged impeller torque is the state; the turbine keeps the same ratio.
            let lag = cx.x[0];
            let ratio = if ti != 0.0 { tt / ti } else { 1.0 };
            (lag, ratio * lag)
        } else {
            (ti, tt)
        }
    }
}

impl Block for TorqueConverter {
    fn declare(&self) -> BlockDecl {
        let variables = vec![
            VarDecl::new("speed_ratio", VarSource::Custom(0), "1").doc("turbine / impeller speed"),
            VarDecl::new("tau_impeller", VarSource::Custom(1), "N*m")
                .doc("torque absorbed by the impeller"),
            VarDecl::new("tau_turbine", VarSource::Custom(2), "N*m")
                .doc("torque delivered by the turbine"),
        ];
        let mech = MechDecl {
            has_forces: true,
            ..Default::default()
        };
        BlockDecl {
            ports: vec![PortDecl::rot("impeller"), PortDecl::rot("turbine")],
            states: usize::from(self.tc > 0.0),
            variables,
            mech,
            ..BlockDecl::default()
        }
    }
    fn forces(&self, cx: &Cx, f: &mut Forces) {
        let (ti, tt) = self.torques(cx);
        f.add(0, -ti);
        f.add(1, tt);
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        if self.tc > 0.0 {
            let (ti, _) = self.steady(cx.v(0), cx.v(1));
            dx[0] = (ti - cx.x[0]) / self.tc;
        }
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        let (ti, tt) = self.torques(cx);
        match i {
            0 => {
                if cx.v(0).abs() > 1e-9 {
                    cx.v(1) / cx.v(0)
                } else {
                    f64::NAN
                }
            }
            1 => ti,
            _ => tt,
        }
    }
}

fn build_crcr(p: &Params) -> Result<Diagram, ParamError> {
    let g1 = p.num("input_ratio")?;
    let g2 = p.num("output_ratio")?;
    for (name, g) in [("input_ratio", g1), ("output_ratio", g2)] {
        if g <= 1.0 {
            return Err(p.invalid(name, format!("must be > 1 (ring/sun teeth), got {g}")));
        }
    }
    let mu: Value = match p.values.get("mu") {
        Some(ParamValue::Number(m)) => json!(m),
        Some(ParamValue::Table(t)) => json!(t),
        _ => return Err(p.invalid("mu", "expected a number or a table")),
    };
    let j = p.positive("member_inertia")?;
    let fric = json!({
        "mu": mu,
        "peak": p.num("peak")?,
        "surfaces": p.positive("surfaces")?,
        "radius": p.positive("radius")?,
        "fn_max": p.non_negative("fn_max")?,
    });
    let mut d = Diagram::new("CrCr4Speed");
    d.add("pg_in", "PlanetaryGear", json!({ "ratio": g1 }));
    d.add("pg_out", "PlanetaryGear", json!({ "ratio": g2 }));
    for m in [
        "input_shaft",
        "output_shaft",
        "sun_in",
        "sun_out",
        "x_member",
    ] {
        d.add(m, "Inertia", json!({ "J": j }));
    }
    for c in ["A", "B", "R"] {
        d.add(&format!("clutch_{c}"), "Clutch", fric.clone());
    }
    for c in ["C", "D"] {
        d.add(&format!("brake_{c}"), "Brake", fric.clone());
    }
    d.add("ratio_sensor", "SpeedRatio", json!({}));
    // Input shaft to clutches A, B, R.
    d.connect(&[
        "input_shaft.flange",
        "clutch_A.flange_a",
        "clutch_B.flange_a",
        "clutch_R.flange_a",
        "ratio_sensor.flange_a",
    ]);
    // S_O
    d.connect(&["pg_out.sun", "clutch_A.flange_b", "sun_out.flange"]);
    // X = C_I = R_O
    d.connect(&[
        "pg_in.carrier",
        "pg_out.ring",
        "clutch_B.flange_b",
        "brake_D.flange",
        "x_member.flange",
    ]);
    // S_I
    d.connect(&[
        "pg_in.sun",
        "clutch_R.flange_b",
        "brake_C.flange",
        "sun_in.flange",
    ]);
    // Y = R_I = C_O (output)
    d.connect(&[
        "pg_in.ring",
        "pg_out.carrier",
        "output_shaft.flange",
        "ratio_sensor.flange_b",
    ]);
    d.export_port("input", "input_shaft.flange");
    d.export_port("output", "output_shaft.flange");
    for c in ["A", "B", "R"] {
        d.export_port(c, &format!("clutch_{c}.f"));
        for v in ["mode", "w_rel", "tau"] {
            d.alias(&format!("{c}_{v}"), &format!("clutch_{c}.{v}"));
        }
    }
    for c in ["C", "D"] {
        d.export_port(c, &format!("brake_{c}.f"));
        for v in ["mode", "w_rel", "tau"] {
            d.alias(&format!("{c}_{v}"), &format!("brake_{c}.{v}"));
        }
    }
    d.alias("ratio", "ratio_sensor.ratio");
    Ok(d)
}
