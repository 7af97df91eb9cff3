//! `LongitudinalDriver`: the speed controller of cruise control and drive cycles, a PI
//! controller with feed-forward on the reference's rate, one command split into
//! accelerator and brake pedals.
//!
//! `v_ref[in]`, `v[in]` (m/s), optional `a_ref[in]` (m/s²) -> `accel[out]`, `brake[out]`
//! (pedals, `[0, 1]`). With the speed error `e = v_ref − v`:
//!
//! ```text
//! u      = kff·ṽ_ref + kp·e + i          one command (dimensionless)
//! ṽ_ref  = a_ref when connected (a drive cycle's exact slope, `DriveCycle.a`), else
//!          (v_ref − r)/tau_ref,  r' = (v_ref − r)/tau_ref   the filtered rate of the reference
//!          (with a_ref connected the filter is not used and holds: r' = 0)
//! i'     = ki·e                 while the command is not saturated, 0 while it is
//! accel  = clamp(u, 0, 1)       brake = clamp(−u·brake_gain, 0, 1)
//! ```
//!
//! - **No chatter between the pedals.** Accelerator and brake come from the one command:
//!   at most one of them is positive at any instant, and the hand-over at `u = 0` is
//!   continuous (both pedals are 0 there), so no hysteresis is needed: there is nothing
//!   to chatter between, the pedals only move as fast as the command does.
//! - **Modes.** The command's region is a mode: `brake_saturated` (−2, `u <= −1/brake_gain`),
//!   `braking` (−1), `accelerating` (1, `0 <= u < 1`), `accel_saturated` (2, `u >= 1`). Each
//!   boundary is a guard, located by the solver; inside a step the pedals are one linear
//!   formula (no kink of a `clamp` inside a step).
//! - **Anti-windup by conditional integration**: in the two saturated modes the integral is
//!   frozen (`i' = 0`), so a long saturation (a speed step far above what the car can
//!   reach quickly, a hill the engine cannot climb at that speed) stores nothing that would
//!   overshoot afterwards. The freeze switches with the mode, at located events.
//! - **Start.** The reference filter starts at the reference (`r = v_ref` at the start
//!   instant: no rate kick from the initial value); the integral starts at `u0` (the
//!   command that holds the initial speed, for a run starting at cruise).
//!
//! Gains are SI: `kp` per (m/s) of error (s/m), `ki` per metre of integrated error (1/m),
//! `kff` per (m/s²) of reference rate (s²/m). Variables: `error` (m/s), `integral` (the
//! integral part `i` of the command), `command` (`u`), `ref_rate` (`ṽ_ref`, m/s²), `mode`.

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, EventCx, EventTag, ParamError, ParamSpec, Params,
    PortDecl, Registry, VarDecl, VarSource,
};

use super::finite;

pub(crate) fn register(r: &mut Registry) {
    r.register(longitudinal_driver_type());
}

/// The `LongitudinalDriver` block type: its parameters and how it is built.
fn longitudinal_driver_type() -> BlockType {
    BlockType {
        name: "LongitudinalDriver",
        category: "vehicle",
        doc: "Speed controller (cruise control, drive cycles): u = kff·dv_ref/dt (the optional input a_ref, e.g. DriveCycle.a, else the reference differentiated through a filter of time constant tau_ref) + kp·e + ki·∫e with e = v_ref − v; accel = clamp(u, 0, 1), brake = clamp(−u·brake_gain, 0, 1): never both pedals, a continuous hand-over at u = 0. The saturations are located modes; the integral is frozen while saturated (anti-windup). Variables error, integral, command, ref_rate, mode (−2 brake saturated, −1 braking, 1 accelerating, 2 accel saturated).",
        ports_doc: "v_ref[in], v[in], a_ref[in] (optional) -> accel[out], brake[out]",
        params: vec![
            ParamSpec::number("kp", "s/m", 0.5, "proportional gain, command per m/s of speed error (>= 0)"),
            ParamSpec::number("ki", "1/m", 0.1, "integral gain, command per metre of integrated speed error (>= 0)"),
            ParamSpec::number("kff", "s^2/m", 0.3, "feed-forward gain on the reference's rate, command per m/s² (>= 0)"),
            ParamSpec::number("tau_ref", "s", 0.5, "time constant of the filter that differentiates the reference (> 0)"),
            ParamSpec::number("brake_gain", "1", 1.0, "brake pedal per unit of negative command (> 0)"),
            ParamSpec::number("u0", "1", 0.0, "initial integral part of the command (the command holding the initial speed)"),
        ],
        build: BlockBuild::Primitive(build),
    }
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let non_neg = |name: &str| -> Result<f64, ParamError> {
        let v = finite(p, name)?;
        if v < 0.0 {
            return Err(p.invalid(name, format!("must be >= 0, got {v}")));
        }
        Ok(v)
    };
    let positive = |name: &str| -> Result<f64, ParamError> {
        let v = finite(p, name)?;
        if !(v > 0.0) {
            return Err(p.invalid(name, format!("must be > 0, got {v}")));
        }
        Ok(v)
    };
    Ok(Box::new(LongitudinalDriver {
        kp: non_neg("kp")?,
        ki: non_neg("ki")?,
        kff: non_neg("kff")?,
        tau: positive("tau_ref")?,
        brake_gain: positive("brake_gain")?,
        u0: finite(p, "u0")?,
        region: Region::Accel,
        t0: f64::NAN,
        first: true,
    }))
}

/// The command's region (a mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Region {
    BrakeSat,
    Brake,
    Accel,
    AccelSat,
}

impl Region {
    fn code(self) -> f64 {
        match self {
            Region::BrakeSat => -2.0,
            Region::Brake => -1.0,
            Region::Accel => 1.0,
            Region::AccelSat => 2.0,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Region::BrakeSat => "brake saturated",
            Region::Brake => "braking",
            Region::Accel => "accelerating",
            Region::AccelSat => "accel saturated",
        }
    }
    fn saturated(self) -> bool {
        matches!(self, Region::BrakeSat | Region::AccelSat)
    }
}

/// The longitudinal driver: see the module docs.
#[derive(Debug, Clone)]
pub struct LongitudinalDriver {
    kp: f64,
    ki: f64,
    kff: f64,
    tau: f64,
    brake_gain: f64,
    u0: f64,
    region: Region,
    /// Start time of the run (the reference filter is set to the reference there).
    t0: f64,
    first: bool,
}

impl LongitudinalDriver {
    /// The filtered reference rate (m/s²) for the reference `v_ref` and filter state `r`.
    fn ref_rate(&self, v_ref: f64, r: f64) -> f64 {
        (v_ref - r) / self.tau
    }
    /// The rate the feed-forward acts on: the `a_ref` input when it is connected (a
    /// drive cycle's exact slope), else the filtered rate of the reference.
    fn feed_rate(&self, cx: &Cx) -> f64 {
        let a_ref = cx.u(2);
        if a_ref.is_nan() {
            self.ref_rate(cx.u(0), cx.x[1])
        } else {
            a_ref
        }
    }
    /// The command `u` from the inputs and states.
    fn command(&self, cx: &Cx) -> f64 {
        let (v_ref, v) = (cx.u(0), cx.u(1));
        self.kff * self.feed_rate(cx) + self.kp * (v_ref - v) + cx.x[0]
    }
    /// The command at which braking saturates (`−1/brake_gain`).
    fn u_brake_full(&self) -> f64 {
        -1.0 / self.brake_gain
    }
    fn valid(&self, r: Region, u: f64) -> bool {
        let lo = self.u_brake_full();
        match r {
            Region::BrakeSat => u <= lo,
            Region::Brake => (lo..=0.0).contains(&u),
            Region::Accel => (0.0..=1.0).contains(&u),
            Region::AccelSat => u >= 1.0,
        }
    }
    fn region_for(&self, u: f64) -> Region {
        if u >= 1.0 {
            Region::AccelSat
        } else if u >= 0.0 {
            Region::Accel
        } else if u > self.u_brake_full() {
            Region::Brake
        } else {
            Region::BrakeSat
        }
    }
}

impl Block for LongitudinalDriver {
    drivelink_core::run_state!(region, t0, first);
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("v_ref").with_unit("m/s"),
            PortDecl::input("v").with_unit("m/s"),
            PortDecl::optional_input("a_ref", f64::NAN).with_unit("m/s^2"),
            PortDecl::output("accel").with_unit("1"),
            PortDecl::output("brake").with_unit("1"),
        ];
        let variables = vec![
            VarDecl::new("error", VarSource::Custom(0), "m/s")
                .doc("speed error v_ref − v (+ = too slow)"),
            VarDecl::new("integral", VarSource::Custom(1), "1")
                .doc("integral part of the command (frozen while saturated)"),
            VarDecl::new("command", VarSource::Custom(2), "1")
                .doc("command u: accel = clamp(u, 0, 1), brake = clamp(−u·brake_gain, 0, 1)"),
            VarDecl::new("ref_rate", VarSource::Custom(3), "m/s^2")
                .doc("the feed-forward's input: a_ref when connected, else the filtered rate of the reference"),
            VarDecl::new("mode", VarSource::Custom(4), "1")
                .doc("−2 brake saturated, −1 braking, 1 accelerating, 2 accel saturated"),
        ];
        BlockDecl {
            ports,
            states: 2,
            variables,
            ..BlockDecl::default()
        }
        .with_guards(&["lower", "upper"])
    }
    fn initial_states(&self, x: &mut [f64]) {
        x[0] = self.u0;
        x[1] = 0.0;
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let u = self.command(cx);
        let (a, b) = match self.region {
            Region::BrakeSat => (0.0, 1.0),
            // The clamps act only between a boundary crossing and its location (the mode's
            // formula a hair beyond its range), so the pedals stay in [0, 1] at every sample.
            Region::Brake => (0.0, (-u * self.brake_gain).clamp(0.0, 1.0)),
            Region::Accel => (u.clamp(0.0, 1.0), 0.0),
            Region::AccelSat => (1.0, 0.0),
        };
        y[0] = a;
        y[1] = b;
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        let (v_ref, v) = (cx.u(0), cx.u(1));
        dx[0] = if self.region.saturated() {
            0.0
        } else {
            self.ki * (v_ref - v)
        };
        // With `a_ref` connected the reference filter feeds nothing: it holds, so that a
        // state integrated for nothing does not limit the step (its rate would jump at
        // every breakpoint of a drive cycle).
        dx[1] = if cx.u(2).is_nan() {
            self.ref_rate(v_ref, cx.x[1])
        } else {
            0.0
        };
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let u = self.command(cx);
        let lo = self.u_brake_full();
        let (g0, g1) = match self.region {
            Region::BrakeSat => (1.0, lo - u),
            Region::Brake => (u - lo, -u),
            Region::Accel => (u, 1.0 - u),
            Region::AccelSat => (u - 1.0, 1.0),
        };
        g[0] = g0;
        g[1] = g1;
    }
    fn reset(&mut self, t0: f64) {
        self.region = Region::Accel;
        self.t0 = t0;
        self.first = true;
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = std::mem::take(&mut self.first);
        let mut changed = false;
        let v_ref = cx.u(0);
        if cx.t == self.t0 && cx.x[1] != v_ref && v_ref.is_finite() {
            // The reference filter starts at the reference: no rate from its initial value.
            cx.x[1] = v_ref;
            changed = true;
        }
        let u = self.command(&cx.view());
        if self.valid(self.region, u) || u.is_nan() {
            return changed;
        }
        let new = self.region_for(u);
        if !fresh {
            cx.log(
                EventTag::ZeroCrossing,
                format!("{} -> {}, command {u}", self.region.name(), new.name()),
            );
        }
        self.region = new;
        true
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        match i {
            0 => cx.u(0) - cx.u(1),
            1 => cx.x[0],
            2 => self.command(cx),
            3 => self.feed_rate(cx),
            _ => self.region.code(),
        }
    }
}
