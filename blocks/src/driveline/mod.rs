//! Driveline elements beyond the basic mechanical library: backlash (`ElastoBacklash`,
//! `Backlash`), gears with losses (`LossyGear`, the mesh-loss law behind the `efficiency`
//! of `IdealGear`, `PlanetaryGear` and `Differential`), manual-transmission elements
//! (`DogClutch`, `Synchronizer`, `GearSelector`, the composite `ManualGearbox`), the
//! automatic transmission's gear choice (`ShiftSchedule`) and the
//! `EddyCurrentBrake`. Each submodule documents its equations and sign conventions; the
//! design notes are in `docs/driveline.md`.

use drivelink_core::{BlockBuild, BlockType, ParamDefault, ParamKind, ParamSpec, Registry};
use serde_json::json;

pub mod backlash;
pub mod eddy;
pub mod lossy;
pub mod shift;
pub mod shift_schedule;

pub use lossy::{LossyGear, MeshLoss};

fn num(name: &'static str, unit: &'static str, default: f64, doc: &'static str) -> ParamSpec {
    ParamSpec::number(name, unit, default, doc)
}

/// Register the driveline blocks.
pub fn register(r: &mut Registry) {
    r.register(elasto_backlash_type());
    r.register(backlash_type());
    r.register(lossy_gear_type());
    r.register(dog_clutch_type());
    r.register(synchronizer_type());
    r.register(gear_selector_type());
    r.register(BlockType {
        name: "ManualGearbox",
        category: "driveline",
        doc: "Manual gearbox (composite): input shaft, a gear pair and idler per gear (ratio w_input/w_output), a Synchronizer per gear to the output shaft, a GearSelector on the gear input (integer, 0 neutral, −1 reverse) with shift time and logged gear changes, and the mesh efficiency as one LossyGear stage at the output (both power-flow directions). Variables: selected, engaged, w_input, w_output, sync_<g>_mode, mesh_loss.",
        params: vec![
            ParamSpec::with("ratios", ParamKind::Vector { unit: "1" }, ParamDefault::Required, "forward ratios w_input/w_output [1st, 2nd, ...] (> 0)"),
            ParamSpec::optional("reverse_ratio", ParamKind::Number { unit: "1" }, "reverse ratio magnitude (> 0); reverse turns the output backwards"),
            num("efficiency", "1", 1.0, "mesh efficiency in (0, 1], both directions of power flow"),
            ParamSpec::with("inertias", ParamKind::Vector { unit: "kg*m^2" }, ParamDefault::Value(json!([0.01, 0.02])), "[input shaft, output shaft] inertias (> 0)"),
            num("gear_inertia", "kg*m^2", 1e-3, "inertia of each idler gear (> 0)"),
            num("synchronizer_torque", "N*m", 200.0, "cone torque of the synchronizers (> 0)"),
            num("peak", "1", 1.1, "static friction factor of the synchronizer cones (>= 1)"),
            num("sync_tolerance", "rad/s", 1e-6, "slip below which a synchronizer engages at once"),
            num("shift_time", "s", 0.2, "time in neutral during a gear change (>= 0)"),
        ],
        build: BlockBuild::Composite(shift::build_gearbox),
        ports_doc: "input[rot], output[rot], gear[in]",
    });
    r.register(shift_schedule_type());
    r.register(eddy_current_brake_type());
}

/// The `ElastoBacklash` block type: its parameters and how it is built.
fn elasto_backlash_type() -> BlockType {
    BlockType {
        name: "ElastoBacklash",
        category: "driveline",
        doc: "Backlash b in series with a spring c and damper d (MSL ElastoBacklash): no torque in the gap |phi_rel − phi_rel0| <= b/2; in contact tau_c = c·(phi_diff ∓ b/2), tau_d = d·w_rel, tau = 0 if the damper would pull, else tau_c + min/max(tau_c, tau_d). tau decelerates flange_b. Contacts and branches are located events. Optional heat port receives the dissipated power.",
        ports_doc: "flange_a[rot], flange_b[rot], heat[heat] (optional)",
        params: vec![
            ParamSpec::required("c", "N*m/rad", "contact spring stiffness (> 0)"),
            num("d", "N*m*s/rad", 0.0, "contact damping (>= 0)"),
            num("b", "rad", 0.0, "total backlash (>= 0; <= 1e-10 is a plain spring-damper)"),
            num("phi_rel0", "rad", 0.0, "relative angle phi_b − phi_a at the middle of the gap"),
        ],
        build: BlockBuild::Primitive(backlash::build_elasto),
    }
}

/// The `Backlash` block type: its parameters and how it is built.
fn backlash_type() -> BlockType {
    BlockType {
        name: "Backlash",
        category: "driveline",
        doc: "Rigid backlash: free in the gap |phi_rel − phi_rel0| < b/2, unilateral contact at the stops. An approach faster than w_small rebounds with w_rel+ = −restitution·w_rel− (impulse through the network, impact loss in the energy audit); slower (or restitution 0) the contact persists (a locked joint that can only push: tau <= 0 at +b/2, >= 0 at −b/2) until the contact torque would pull. tau is transmitted from flange_a to flange_b.",
        ports_doc: "flange_a[rot], flange_b[rot]",
        params: vec![
            ParamSpec::required("b", "rad", "total backlash (> 0)"),
            num("phi_rel0", "rad", 0.0, "relative angle phi_b − phi_a at the middle of the gap"),
            num("restitution", "1", 0.0, "coefficient of restitution in [0, 1] (0 plastic, 1 elastic)"),
            num("w_small", "rad/s", 1e-3, "impacts slower than this are plastic: the contact persists (ends rebound sequences after finitely many impacts)"),
        ],
        build: BlockBuild::Primitive(backlash::build_backlash),
    }
}

/// The `LossyGear` block type: its parameters and how it is built.
fn lossy_gear_type() -> BlockType {
    BlockType {
        name: "LossyGear",
        category: "driveline",
        doc: "Gear w_a − w_s = ratio·(w_b − w_s) with mesh efficiency and bearing friction from lossTable (MSL LossyGear): flange_b.tau = −ratio·(flange_a.tau − tauLoss), tauLoss from the quadrant of speed and power flow; stuck at w_a = w_s while the losses can hold the load (it locks when driven from the wrong side with low efficiency). Exact coupling of the loss with the transmitted torque. Reaction on the optional support (ground when unconnected), loss power to the optional heat port.",
        ports_doc: "flange_a[rot], flange_b[rot], support[rot] (optional), heat[heat] (optional)",
        params: vec![
            ParamSpec::required("ratio", "1", "transmission ratio w_a/w_b (non-zero)"),
            ParamSpec::with("lossTable", ParamKind::Table { cols: 5 }, ParamDefault::Value(json!([[0.0, 1.0, 1.0, 0.0, 0.0]])), "rows [|w_a| rad/s, eta_mf1, eta_mf2, |tau_bf1| N*m, |tau_bf2| N*m]: mesh efficiency when flange_a / flange_b drives, bearing friction referred to flange_a; linear in |w_a|, extrapolated linearly"),
        ],
        build: BlockBuild::Primitive(lossy::build_lossy_gear),
    }
}

/// The `DogClutch` block type: its parameters and how it is built.
fn dog_clutch_type() -> BlockType {
    BlockType {
        name: "DogClutch",
        category: "driveline",
        doc: "Positive (dog) clutch: engages only at zero slip. engage >= 0.5 demands engagement: with |w_rel| <= sync_tolerance it engages at once, otherwise the shift is blocked (logged) and it engages at the located zero crossing of the slip; engaged it holds any torque. engage < 0.5 opens it.",
        ports_doc: "flange_a[rot], flange_b[rot], engage[in]",
        params: vec![num("sync_tolerance", "rad/s", 1e-6, "slip below which a demand engages at once (the residual slip is removed by an exact plastic impact)")],
        build: BlockBuild::Primitive(shift::build_dog),
    }
}

/// The `Synchronizer` block type: its parameters and how it is built.
fn synchronizer_type() -> BlockType {
    BlockType {
        name: "Synchronizer",
        category: "driveline",
        doc: "Synchronizer: a cone clutch that must bring both sides to the same speed before the dog engages. engage >= 0.5 with slip: the cone slides with cone_torque (the dog is blocked, logged), at the located zero of the slip the dog engages (logged with the synchronisation time Δω·J/cone_torque) and holds any torque. engage < 0.5 opens it.",
        ports_doc: "flange_a[rot], flange_b[rot], engage[in]",
        params: vec![
            ParamSpec::required("cone_torque", "N*m", "kinetic friction torque of the cone while synchronising (> 0)"),
            num("peak", "1", 1.1, "static friction factor of the cone (>= 1)"),
            num("sync_tolerance", "rad/s", 1e-6, "slip below which a demand engages the dog at once"),
        ],
        build: BlockBuild::Primitive(shift::build_sync),
    }
}

/// The `GearSelector` block type: its parameters and how it is built.
fn gear_selector_type() -> BlockType {
    BlockType {
        name: "GearSelector",
        category: "driveline",
        doc: "Gear lever for synchronizers: gear input rounded to an integer (0 neutral, −1 reverse); output s_k = 1 engages gear k's synchronizer. A new gear opens the engaged one at once and commands the new one after shift_time; each change is logged. An invalid gear selects neutral (logged).",
        ports_doc: "gear[in], s1[out] .. sN[out], sR[out] (with reverse)",
        params: vec![
            ParamSpec::required("gears", "1", "number of forward gears (>= 1)"),
            ParamSpec::with("reverse", ParamKind::Bool, ParamDefault::Value(json!(false)), "whether there is a reverse gear (output sR)"),
            num("shift_time", "s", 0.2, "time in neutral between opening one synchronizer and commanding the next (>= 0)"),
        ],
        build: BlockBuild::Primitive(shift::build_selector),
    }
}

/// The `ShiftSchedule` block type: its parameters and how it is built.
fn shift_schedule_type() -> BlockType {
    BlockType {
        name: "ShiftSchedule",
        category: "driveline",
        doc: "Gear choice of an automatic transmission (TCU) from shift lines over the throttle: row k of upshift is the speed at which gear k shifts up, row k of downshift the speed at which gear k+1 shifts down, one entry per throttle breakpoint (linear, ends held; every downshift speed below the upshift speed of its row). Shifts at the located crossings of the lines (a throttle step can kick down, several gears at once); after a shift the next waits min_time. Output gear (1..n), held; each shift logged.",
        ports_doc: "v[in] (speed, m/s), throttle[in] (0..1), gear[out]",
        params: vec![
            ParamSpec::with("throttle", ParamKind::Vector { unit: "1" }, ParamDefault::Value(json!([0.0, 1.0])), "throttle breakpoints of the lines, strictly increasing in [0, 1]"),
            ParamSpec::with("upshift", ParamKind::Matrix, ParamDefault::Required, "one row per gear change k -> k+1 (gears − 1 rows): the speed (in speed_unit) at each throttle breakpoint, or one speed for all"),
            ParamSpec::optional("downshift", ParamKind::Matrix, "one row per gear change k+1 -> k: the speed at each throttle breakpoint (or one for all), below the upshift speed of the same row; default: the upshift lines × downshift_ratio"),
            num("downshift_ratio", "1", 0.6, "without downshift: the downshift lines as this fraction of the upshift lines, in (0, 1)"),
            ParamSpec::with("speed_unit", ParamKind::Choice(&["m/s", "km/h", "mph", "rad/s", "rpm"]), ParamDefault::Value(json!("m/s")), "unit of the speeds in upshift and downshift (the v input is SI: m/s or rad/s)"),
            num("gear0", "1", 1.0, "gear at the start, before the lines are read (1..n)"),
            num("min_time", "s", 0.0, "least time between two shifts (>= 0)"),
        ],
        build: BlockBuild::Primitive(shift_schedule::build_shift_schedule),
    }
}

/// The `EddyCurrentBrake` block type: its parameters and how it is built.
fn eddy_current_brake_type() -> BlockType {
    BlockType {
        name: "EddyCurrentBrake",
        category: "driveline",
        doc: "Eddy current brake (MSL EddyCurrentTorque): tau = 2·tau_nominal·excitation²·w_n/(1 + w_n²), w_n = w/(w_nominal·(1 + alpha_ref·(T − TRef))), alpha_ref = alpha20/(1 + alpha20·(TRef − 293.15 K)); brakes the flange (reaction on the optional support), loss tau·w to the optional heat port, whose temperature T it uses (parameter T when unconnected; a connected node needs a heat capacity or fixed temperature).",
        ports_doc: "excitation[in] (optional), flange[rot], support[rot] (optional), heat[heat] (optional)",
        params: vec![
            ParamSpec::required("tau_nominal", "N*m", "maximum braking torque (at w = w_nominal, excitation 1; >= 0)"),
            ParamSpec::required("w_nominal", "rad/s", "speed of the maximum torque at TRef (> 0)"),
            num("TRef", "K", 293.15, "reference temperature"),
            num("alpha20", "1/K", 0.0, "temperature coefficient of the resistance at 20 °C (copper 3.92e-3)"),
            num("T", "K", 293.15, "device temperature when the heat port is not connected"),
            num("constant_excitation", "1", 1.0, "excitation when the input is not connected"),
        ],
        build: BlockBuild::Primitive(eddy::build_eddy),
    }
}
