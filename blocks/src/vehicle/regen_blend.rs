//! `RegenBlend`: the brake arbitration of an electrified axle — the machine takes what it
//! can of the driver's brake demand, the friction brake the rest, and the machine steps
//! back while the ABS acts.
//!
//! Inputs `demand` (the brake torque asked of the axle, N·m at the wheel shaft, ≥ 0), `w`
//! (the machine's speed, rad/s: its `w` variable) and `abs_active` (optional, 1 while an
//! `Abs` modulates the friction brake: its `active` variable). Outputs `cmd` (the
//! `ElectricMachine` command, ≤ 0: a fraction of its envelope) and `friction` (the torque
//! the friction brake must add, N·m at the wheel shaft: the `Abs` demand or the brake's).
//!
//! The machine's braking capacity at the wheel shaft is
//! `C = fade(|w|)·min(max_torque, max_power/|w|)·ratio/efficiency` (`ratio` = machine speed
//! over wheel-shaft speed; in regeneration the wheel drives the gear, so its torque is the
//! machine's times `ratio/efficiency`); `fade` is 0 below `fade_start`, 1 above `fade_end`
//! and linear between (a torque source cannot hold a car at rest: the friction brake
//! takes over as it stops). The machine takes `R = min(demand, C)` — its command is
//! `cmd = −R·efficiency/(ratio·min(max_torque, max_power/|w|))` — and the friction brake
//! `demand − R`: the two always sum to the demand, so the pedal feels the same whoever
//! brakes.
//!
//! **ABS.** The ABS modulates the friction brake only. The instant it becomes active the
//! regeneration is switched off (`R = 0`, the friction brake takes the whole demand
//! through the ABS, logged) and stays off until the demand falls below
//! `release_demand` (the driver lifts; an ABS still active then does not take it again): a
//! machine torque that the ABS does not control
//! would hold the wheel in the slip the ABS is relieving, and switching it back on inside
//! one stop would make the two controllers hunt. This is the arbitration of most
//! production EVs (regeneration yields to ABS).
//!
//! The envelope's corner, the fade's two edges, `demand = C` and the ABS switch are located
//! events, so every kink of the outputs is a step boundary.

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, EventCx, EventTag, ParamError, ParamSpec, Params,
    PortDecl, Registry, VarDecl, VarSource,
};

use crate::signal::FirstCall;

pub(crate) fn register(r: &mut Registry) {
    r.register(regen_blend_type());
}

/// The `RegenBlend` block type: its parameters and how it is built.
fn regen_blend_type() -> BlockType {
    BlockType {
        name: "RegenBlend",
        category: "vehicle",
        doc: "Brake arbitration of an electrified axle: the machine takes R = min(demand, C) of the brake demand, C = fade(|w|)·min(max_torque, max_power/|w|)·ratio/efficiency its braking capacity at the wheel shaft (fade 0 below fade_start, 1 above fade_end, linear between); the friction brake the rest, demand − R. cmd = −R·efficiency/(ratio·envelope) drives the ElectricMachine. When abs_active (an Abs's active variable) turns on, the regeneration yields (R = 0, logged) until the demand falls below release_demand. Kinks are located modes.",
        ports_doc: "demand[in] (N*m at the wheel shaft), w[in] (machine speed), abs_active[in] (optional, 0) -> cmd[out], friction[out]",
        params: vec![
            ParamSpec::required("max_torque", "N*m", "the machine's peak torque, as its ElectricMachine (> 0)"),
            ParamSpec::required("max_power", "W", "the machine's peak power, as its ElectricMachine (> 0)"),
            ParamSpec::number("ratio", "1", 1.0, "machine speed / wheel-shaft speed of the gear between them (> 0)"),
            ParamSpec::number("efficiency", "1", 1.0, "that gear's efficiency in (0, 1]: the wheel shaft's torque is the machine's × ratio/efficiency while regenerating"),
            ParamSpec::number("fade_start", "rad/s", 5.0, "machine speed below which the machine does not brake (>= 0)"),
            ParamSpec::number("fade_end", "rad/s", 20.0, "machine speed from which its full capacity brakes (> fade_start)"),
            ParamSpec::number("release_demand", "N*m", 1.0, "demand below which the regeneration may return after the ABS acted (> 0)"),
        ],
        build: BlockBuild::Primitive(build_regen_blend),
    }
}

/// Where the machine speed lies on the fade ramp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fade {
    Off,
    Ramp,
    Full,
}

/// The modes: each a side of a kink, changed only at events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Modes {
    fade: Fade,
    power_limited: bool,
    /// The capacity covers the demand (`demand <= C`).
    covers: bool,
    /// Regeneration switched off by the ABS until the demand is released.
    yielded: bool,
}

/// The `RegenBlend` block.
#[derive(Debug, Clone)]
pub struct RegenBlend {
    max_torque: f64,
    max_power: f64,
    ratio: f64,
    efficiency: f64,
    fade_start: f64,
    fade_end: f64,
    release: f64,
    modes: Modes,
    first: FirstCall,
}

impl RegenBlend {
    /// The machine's torque envelope at `|w|` on the side `power_limited`.
    fn envelope(&self, w: f64, power_limited: bool) -> f64 {
        if power_limited {
            self.max_power / w
        } else {
            self.max_torque
        }
    }
    fn fade_factor(&self, w: f64, f: Fade) -> f64 {
        match f {
            Fade::Off => 0.0,
            Fade::Full => 1.0,
            Fade::Ramp => (w - self.fade_start) / (self.fade_end - self.fade_start),
        }
    }
    /// The braking capacity at the wheel shaft in the modes `m`.
    fn capacity(&self, w: f64, m: Modes) -> f64 {
        self.fade_factor(w, m.fade) * self.envelope(w, m.power_limited) * self.ratio
            / self.efficiency
    }
    /// The regenerated part of the demand in the modes `m`.
    fn regen(&self, demand: f64, w: f64, m: Modes) -> f64 {
        if m.yielded {
            0.0
        } else if m.covers {
            demand.max(0.0)
        } else {
            self.capacity(w, m)
        }
    }
    /// The modes the inputs put the block in (the ABS latch as it is).
    fn modes_at(&self, demand: f64, w: f64, yielded: bool) -> Modes {
        let fade = if w <= self.fade_start {
            Fade::Off
        } else if w >= self.fade_end {
            Fade::Full
        } else {
            Fade::Ramp
        };
        let power_limited = w * self.max_torque > self.max_power;
        let mut m = Modes {
            fade,
            power_limited,
            covers: true,
            yielded,
        };
        m.covers = demand <= self.capacity(w, m);
        m
    }
}

impl Block for RegenBlend {
    drivelink_core::run_state!(modes, first);
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("demand").with_unit("N*m"),
            PortDecl::input("w").with_unit("rad/s"),
            PortDecl::optional_input("abs_active", 0.0),
            PortDecl::output("cmd").with_unit("1"),
            PortDecl::output("friction").with_unit("N*m"),
        ];
        let variables = vec![
            VarDecl::new("regen", VarSource::Custom(0), "N*m")
                .doc("the part of the demand the machine brakes, at the wheel shaft"),
            VarDecl::new("capacity", VarSource::Custom(1), "N*m").doc(
                "the machine's braking capacity at the wheel shaft (0 while it yields to the ABS)",
            ),
            VarDecl::new("yielded", VarSource::Custom(2), "1")
                .doc("1 while the regeneration yields to the ABS"),
        ];
        BlockDecl {
            ports,
            variables,
            ..BlockDecl::default()
        }
        .with_guards(&["fade", "corner", "capacity", "abs"])
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let (demand, w) = (cx.u(0).max(0.0), cx.u(1).abs());
        let r = self.regen(demand, w, self.modes);
        let env = self.envelope(w, self.modes.power_limited);
        y[0] = if r > 0.0 && env > 0.0 {
            -r * self.efficiency / (self.ratio * env)
        } else {
            0.0
        };
        y[1] = demand - r;
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let (demand, w) = (cx.u(0).max(0.0), cx.u(1).abs());
        let m = self.modes;
        g[0] = match m.fade {
            Fade::Off => self.fade_start - w,
            Fade::Ramp => (w - self.fade_start).min(self.fade_end - w),
            Fade::Full => w - self.fade_end,
        };
        let corner = self.max_power / self.max_torque;
        g[1] = if m.power_limited {
            w - corner
        } else {
            corner - w
        };
        let c = self.capacity(w, m);
        g[2] = if m.covers { c - demand } else { demand - c };
        // Yielded: until the demand falls below the release level. Not yielded: while the
        // ABS is idle or the demand is below that level (an ABS still active as the pedal
        // is released does not take the regeneration again).
        g[3] = if m.yielded {
            demand - self.release
        } else {
            (0.5 - cx.u(2)).max(self.release - demand)
        };
    }
    fn reset(&mut self, _t0: f64) {
        self.modes = Modes {
            fade: Fade::Off,
            power_limited: false,
            covers: true,
            yielded: false,
        };
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = self.first.take();
        let (demand, w, active) = (cx.u(0).max(0.0), cx.u(1).abs(), cx.u(2));
        let mut yielded = self.modes.yielded;
        if !yielded && active >= 0.5 && demand >= self.release {
            yielded = true;
            cx.log(
                EventTag::ZeroCrossing,
                format!("regeneration yields to the ABS (demand {demand:.6} N*m)"),
            );
        } else if yielded && demand < self.release {
            yielded = false;
            if !fresh {
                cx.log(
                    EventTag::ZeroCrossing,
                    "regeneration allowed again: the demand is released",
                );
            }
        }
        let m = self.modes_at(demand, w, yielded);
        let changed = m != self.modes;
        self.modes = m;
        changed
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        let (demand, w) = (cx.u(0).max(0.0), cx.u(1).abs());
        match i {
            0 => self.regen(demand, w, self.modes),
            1 if self.modes.yielded => 0.0,
            1 => self.capacity(w, self.modes),
            _ => f64::from(u8::from(self.modes.yielded)),
        }
    }
}

pub(crate) fn build_regen_blend(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let fade_start = p.non_negative("fade_start")?;
    let fade_end = p.positive("fade_end")?;
    if fade_end <= fade_start {
        return Err(p.invalid(
            "fade_end",
            format!("must be above fade_start ({fade_start} rad/s), got {fade_end} rad/s"),
        ));
    }
    let efficiency = p.positive("efficiency")?;
    if efficiency > 1.0 {
        return Err(p.invalid("efficiency", format!("must be in (0, 1], got {efficiency}")));
    }
    Ok(Box::new(RegenBlend {
        max_torque: p.positive("max_torque")?,
        max_power: p.positive("max_power")?,
        ratio: p.positive("ratio")?,
        efficiency,
        fade_start,
        fade_end,
        release: p.positive("release_demand")?,
        modes: Modes {
            fade: Fade::Off,
            power_limited: false,
            covers: true,
            yielded: false,
        },
        first: FirstCall::armed(),
    }))
}
