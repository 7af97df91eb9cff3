//! Manual-transmission elements: `DogClutch` (positive engagement, only at zero slip),
//! `Synchronizer` (a cone clutch that synchronises the two sides, then a dog engages),
//! `GearSelector` (gear lever: which synchronizer to engage, with a shift time) and the
//! composite `ManualGearbox`.
//!
//! Engagement demand: the `engage` input, on while `>= 0.5` (a Step from 0 to 1 is the
//! sleeve being pushed). Both clutches have one friction joint on `w_rel = w_b − w_a`:
//!
//! - `DogClutch`: demanded with `|w_rel| <= sync_tolerance`, the dog engages at once (an
//!   exact plastic impact removes the residual slip) and the joint locks with unlimited
//!   capacity. Demanded with slip, the shift is **blocked** (logged as a `shift` event) and
//!   the dog waits: it engages at the located instant the slip passes through zero. Without
//!   demand the joint is free.
//! - `Synchronizer`: demanded with slip, the cone clutch slides with the kinetic torque
//!   `cone_torque` (static capacity `peak·cone_torque`) and the dog is blocked (logged);
//!   at the located zero crossing of the slip the dog engages (logged with the
//!   synchronisation time) and the joint holds any torque. So two inertias `J₁, J₂` with
//!   speed difference `Δω` synchronise in `Δω·J/T` with `J = J₁J₂/(J₁+J₂)`.

use drivelink_core::{
    Block, BlockDecl, Cx, Diagram, EventCx, EventTag, Feedthrough, FrictionLaw, MechDecl, Outputs,
    ParamError, Params, PortDecl, VarDecl, VarSource,
};
use serde_json::json;

use crate::signal::FirstCall;
use crate::util::FlangePair;

/// Demand threshold of the `engage` input.
const ON: f64 = 0.5;

/// State of a dog clutch or synchronizer.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Dog {
    /// No demand.
    Open,
    /// Demand with slip: waiting (dog) or synchronising (cone) since `t`, slip sign `s0`.
    Blocked { s0: f64, since: f64 },
    /// Dog engaged.
    Engaged,
}

/// `DogClutch` (no cone) or `Synchronizer` (with a cone). See the module docs.
#[derive(Debug, Clone)]
pub struct DogClutch {
    /// Cone kinetic torque (0: a plain dog clutch).
    cone: f64,
    peak: f64,
    tol: f64,
    state: Dog,
    first: FirstCall,
}

impl DogClutch {
    fn w_rel(cx: &Cx) -> f64 {
        FlangePair::AB.w_rel(cx)
    }
    fn engage_now(&mut self, cx: &mut EventCx, w: f64, detail: String) {
        if w != 0.0 {
            cx.impact(0, 0.0);
        }
        self.state = Dog::Engaged;
        cx.log(EventTag::Shift, detail);
    }
}

impl Block for DogClutch {
    drivelink_core::run_state!(first, state);
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::rot("flange_a"),
            PortDecl::rot("flange_b"),
            PortDecl::input("engage").with_unit("1"),
        ];
        let mut v = VarDecl::friction_set(0, "", true);
        v.push(
            VarDecl::new("engaged", VarSource::Custom(0), "1")
                .doc("1 dog engaged, 0.5 blocked (synchronizing / waiting for zero slip), 0 open"),
        );
        let mech = MechDecl {
            frictions: vec![FlangePair::AB.joint()],
            ..Default::default()
        };
        BlockDecl {
            ports,
            variables: v,
            mech,
            ..BlockDecl::default()
        }
        .with_guards(&["demand", "slip"])
    }
    fn friction(&self, _k: usize, _cx: &Cx, _w_rel: f64) -> FrictionLaw {
        match self.state {
            Dog::Engaged => FrictionLaw {
                kinetic: 0.0,
                lo: f64::NEG_INFINITY,
                hi: f64::INFINITY,
                engagement: 1.0,
            },
            Dog::Blocked { .. } if self.cone > 0.0 => FrictionLaw {
                kinetic: self.cone,
                lo: -self.peak * self.cone,
                hi: self.peak * self.cone,
                engagement: 1.0,
            },
            _ => FrictionLaw::FREE,
        }
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let u = cx.u(0);
        match self.state {
            Dog::Open => {
                g[0] = ON - u;
                g[1] = 1.0;
            }
            Dog::Blocked { s0, .. } => {
                g[0] = u - ON;
                g[1] = s0 * Self::w_rel(cx);
            }
            Dog::Engaged => {
                g[0] = u - ON;
                g[1] = 1.0;
            }
        }
    }
    fn reset(&mut self, _t0: f64) {
        self.state = Dog::Open;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let _fresh = self.first.take();
        let (u, w) = {
            let v = cx.view();
            (v.u(0), Self::w_rel(&v))
        };
        let old = self.state;
        let demand = u >= ON;
        match self.state {
            _ if !demand => self.state = Dog::Open,
            Dog::Open => {
                if w.abs() <= self.tol {
                    self.engage_now(cx, w, format!("dog engaged at slip {w:.3e} rad/s"));
                } else {
                    self.state = Dog::Blocked {
                        s0: w.signum(),
                        since: cx.t,
                    };
                    let what = if self.cone > 0.0 {
                        "synchronizing"
                    } else {
                        "waiting for zero slip"
                    };
                    cx.log(
                        EventTag::Shift,
                        format!("blocked shift: engagement demanded with slip w_rel = {w:.6} rad/s; {what}"),
                    );
                }
            }
            Dog::Blocked { s0, since } => {
                if s0 * w <= self.tol {
                    let dt = cx.t - since;
                    self.engage_now(cx, w, format!("synchronized after {dt:.6} s, dog engaged"));
                }
            }
            Dog::Engaged => {}
        }
        self.state != old
    }
    fn var(&self, _cx: &Cx, _i: usize) -> f64 {
        match self.state {
            Dog::Open => 0.0,
            Dog::Blocked { .. } => 0.5,
            Dog::Engaged => 1.0,
        }
    }
}

pub(crate) fn build_dog(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    Ok(Box::new(DogClutch {
        cone: 0.0,
        peak: 1.0,
        tol: p.non_negative("sync_tolerance")?,
        state: Dog::Open,
        first: FirstCall::armed(),
    }))
}

pub(crate) fn build_sync(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let peak = p.num("peak")?;
    if !(peak >= 1.0) {
        return Err(p.invalid("peak", format!("must be >= 1, got {peak}")));
    }
    Ok(Box::new(DogClutch {
        cone: p.positive("cone_torque")?,
        peak,
        tol: p.non_negative("sync_tolerance")?,
        state: Dog::Open,
        first: FirstCall::armed(),
    }))
}

/// `GearSelector`: the gear lever. Input `gear` (rounded to an integer; 0 neutral, −1
/// reverse); outputs `s1..sn` (and `sR`), 1 for the synchronizer to engage. A new gear
/// opens the engaged synchronizer at once (neutral) and engages the new one after
/// `shift_time`; every change is logged. Outputs change only at events.
#[derive(Debug, Clone)]
pub struct GearSelector {
    n: usize,
    reverse: bool,
    shift_time: f64,
    /// Gear whose synchronizer is commanded.
    engaged: i64,
    /// Gear selected by the lever.
    target: i64,
    /// The lever's input rounded (the guards watch it leave ±0.5 around this, also when it
    /// is no gear of the box and `target` is neutral).
    lever: f64,
    /// Time the target gets engaged (infinite when none pending).
    due: f64,
    first: FirstCall,
}

impl GearSelector {
    fn valid(&self, g: i64) -> bool {
        (g >= 0 && g as usize <= self.n) || (g == -1 && self.reverse)
    }
    fn name(g: i64) -> String {
        match g {
            0 => "neutral".into(),
            -1 => "reverse".into(),
            g => format!("gear {g}"),
        }
    }
}

impl Block for GearSelector {
    drivelink_core::run_state!(engaged, target, lever, due, first);
    fn declare(&self) -> BlockDecl {
        let mut p = vec![PortDecl::input("gear").with_unit("1")];
        for k in 1..=self.n {
            p.push(PortDecl::output(format!("s{k}")).with_unit("1"));
        }
        if self.reverse {
            p.push(PortDecl::output("sR").with_unit("1"));
        }
        let variables = vec![
            VarDecl::new("selected", VarSource::Custom(0), "1")
                .doc("gear selected by the lever (0 neutral, −1 reverse)"),
            VarDecl::new("engaged", VarSource::Custom(1), "1")
                .doc("gear whose synchronizer is commanded (0 during a shift)"),
        ];
        BlockDecl {
            ports: p,
            variables,
            outputs: Outputs::Constant,
            feedthrough: Feedthrough::None,
            ..BlockDecl::default()
        }
        .with_guards(&["lever_up", "lever_down"])
    }
    fn outputs(&self, _cx: &Cx, y: &mut [f64]) {
        for (k, yk) in y.iter_mut().enumerate().take(self.n) {
            *yk = f64::from(u8::from(self.engaged == k as i64 + 1));
        }
        if self.reverse {
            y[self.n] = f64::from(u8::from(self.engaged == -1));
        }
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let u = cx.u(0);
        g[0] = self.lever + 0.5 - u;
        g[1] = u - (self.lever - 0.5);
    }
    fn next_time_event(&self, t: f64) -> f64 {
        if self.due > t {
            self.due
        } else {
            f64::INFINITY
        }
    }
    fn reset(&mut self, _t0: f64) {
        self.engaged = 0;
        self.target = 0;
        self.lever = 0.0;
        self.due = f64::INFINITY;
        self.first.arm();
    }
    fn time_event(&mut self, cx: &mut EventCx) {
        if cx.t >= self.due {
            self.engaged = self.target;
            self.due = f64::INFINITY;
            cx.log(
                EventTag::Shift,
                format!("{} commanded", Self::name(self.engaged)),
            );
        }
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = self.first.take();
        let u = cx.u(0);
        let lever = if u.is_finite() { u.round() } else { 0.0 };
        let moved = lever != self.lever;
        self.lever = lever;
        let mut g = lever as i64;
        if !u.is_finite() || !self.valid(g) {
            g = 0;
        }
        if (moved || fresh) && (!u.is_finite() || lever as i64 != g) {
            cx.log(
                EventTag::Shift,
                format!(
                    "gear input {u} is not a gear of this box (1..={}{}); neutral",
                    self.n,
                    if self.reverse { " or −1" } else { "" }
                ),
            );
        }
        if g == self.target {
            // The lever moved between values that select the same gear (7 -> 8 on a
            // 5-speed box: neutral both): only the guards' band moved.
            return moved;
        }
        let from = self.engaged;
        self.target = g;
        if fresh || self.shift_time == 0.0 {
            self.engaged = g;
            self.due = f64::INFINITY;
        } else {
            self.engaged = 0;
            self.due = cx.t + self.shift_time;
        }
        cx.log(
            EventTag::Shift,
            format!("shift {} -> {}", Self::name(from), Self::name(g)),
        );
        true
    }
    fn var(&self, _cx: &Cx, i: usize) -> f64 {
        if i == 0 {
            self.target as f64
        } else {
            self.engaged as f64
        }
    }
}

pub(crate) fn build_selector(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let n = crate::signal::count_param(p, "gears", 1)?;
    let shift_time = p.non_negative("shift_time")?;
    Ok(Box::new(GearSelector {
        n,
        reverse: p.bool("reverse")?,
        shift_time,
        engaged: 0,
        target: 0,
        lever: 0.0,
        due: f64::INFINITY,
        first: FirstCall::armed(),
    }))
}

/// The `ManualGearbox` composite: input shaft, one gear pair and idler per gear, a
/// synchronizer per gear to the output shaft, a `GearSelector`, and the mesh efficiency as
/// one lossy stage (`LossyGear` ratio 1) at the output.
pub(crate) fn build_gearbox(p: &Params) -> Result<Diagram, ParamError> {
    let ratios = p.vector("ratios")?.to_vec();
    if ratios.is_empty() {
        return Err(p.invalid(
            "ratios",
            "is empty; give the forward ratios [1st, 2nd, ...]",
        ));
    }
    for (i, r) in ratios.iter().enumerate() {
        if !(r.is_finite() && *r > 0.0) {
            return Err(p.invalid(
                "ratios",
                format!("entry {i} must be > 0 (w_input/w_output), got {r}"),
            ));
        }
    }
    let rev = match p.opt_num("reverse_ratio")? {
        Some(r) if r > 0.0 && r.is_finite() => Some(r),
        Some(r) => {
            return Err(p.invalid(
                "reverse_ratio",
                format!("must be > 0 (a magnitude; reverse turns the output backwards), got {r}"),
            ))
        }
        None => None,
    };
    let eta = p.num("efficiency")?;
    if !(eta > 0.0 && eta <= 1.0) {
        return Err(p.invalid("efficiency", format!("must be in (0, 1], got {eta}")));
    }
    let inertias = p.vector("inertias")?.to_vec();
    if inertias.len() != 2 || inertias.iter().any(|j| !(*j > 0.0 && j.is_finite())) {
        return Err(p.invalid(
            "inertias",
            format!(
                "expected [input shaft, output shaft] inertias > 0 in kg*m^2, got {inertias:?}"
            ),
        ));
    }
    let j_gear = p.positive("gear_inertia")?;
    let sync = json!({
        "cone_torque": p.positive("synchronizer_torque")?,
        "peak": p.num("peak")?,
        "sync_tolerance": p.non_negative("sync_tolerance")?,
    });
    let mut d = Diagram::new("ManualGearbox");
    d.add(
        "selector",
        "GearSelector",
        json!({"gears": ratios.len(), "reverse": rev.is_some(), "shift_time": p.non_negative("shift_time")?}),
    );
    d.add("input_shaft", "Inertia", json!({"J": inertias[0]}));
    d.add("output_shaft", "Inertia", json!({"J": inertias[1]}));
    let mut gears: Vec<(String, f64)> = ratios
        .iter()
        .enumerate()
        .map(|(i, r)| (format!("{}", i + 1), *r))
        .collect();
    if let Some(r) = rev {
        gears.push(("R".into(), -r));
    }
    for (g, r) in &gears {
        d.add(&format!("pair_{g}"), "IdealGear", json!({ "ratio": r }));
        d.add(&format!("idler_{g}"), "Inertia", json!({ "J": j_gear }));
        d.add(&format!("sync_{g}"), "Synchronizer", sync.clone());
        d.connect(&["input_shaft.flange", &format!("pair_{g}.flange_a")]);
        d.connect(&[
            &format!("pair_{g}.flange_b"),
            &format!("idler_{g}.flange"),
            &format!("sync_{g}.flange_a"),
        ]);
        d.connect(&[&format!("sync_{g}.flange_b"), "output_shaft.flange"]);
        d.connect(&[&format!("selector.s{g}"), &format!("sync_{g}.engage")]);
        d.alias(&format!("sync_{g}_mode"), &format!("sync_{g}.mode"));
    }
    if eta < 1.0 {
        d.add(
            "mesh",
            "LossyGear",
            json!({"ratio": 1.0, "lossTable": [[0.0, eta, eta, 0.0, 0.0]]}),
        );
        d.connect(&["output_shaft.flange", "mesh.flange_a"]);
        d.export_port("output", "mesh.flange_b");
        d.alias("mesh_loss", "mesh.power_loss");
    } else {
        d.export_port("output", "output_shaft.flange");
    }
    d.export_port("input", "input_shaft.flange");
    d.export_port("gear", "selector.gear");
    d.alias("selected", "selector.selected");
    d.alias("engaged", "selector.engaged");
    d.alias("w_input", "input_shaft.w");
    d.alias("w_output", "output_shaft.w");
    Ok(d)
}
