//! The SimDriveline "full car" demo (`drive_full_car`) rebuilt in drivelink.
//!
//! Engine (gasoline, 150 kW at 4500 rpm, 6000 rpm limit) with its inertia -> torque
//! converter with a lock-up clutch -> CR-CR 4-speed transmission (`CrCr4Speed`) -> final
//! drive gear -> vehicle inertia (the axle, and the vehicle mass through a rolling wheel) ->
//! torque sensor -> load (friction brake on the axle, road load through a second, massless
//! rolling wheel), as in the seed's final-drive subsystem.
//! A master clutch signal steps 1..5 at 10 s intervals; lookup tables turn it into the
//! clutch schedule (1st A+D, 2nd A+C, 3rd A+B, 4th B+C, neutral), each pressure shaped by
//! `s0/(s+s0)` hydraulics. At master 5 (40 s) the lock-up clutch engages. The brake torque
//! rises from 0 at 44 s to 10 000 N·m at 50 s; the run stops when the axle comes to rest.
//!
//! Parameter values: the calibrated set of `shared/reference/simdriveline-blocks.md` §8.

use drivelink_core::{Diagram, ScopeSignal, ScopeSpec};
use serde_json::json;

/// rad/s per rpm (the same factor the netlist unit `rpm` uses, so both forms agree bit for bit).
pub const RPM: f64 = 2.0 * std::f64::consts::PI / 60.0;

/// Tunable values of the full-car model (SI units).
#[derive(Debug, Clone, PartialEq)]
pub struct FullCarParams {
    pub throttle: f64,
    pub engine_inertia: f64,
    pub idle_speed: f64,
    pub turbine_inertia: f64,
    pub clutch_rise: f64,
    pub lockup_rise: f64,
    pub in_planet_ratio: f64,
    pub out_planet_ratio: f64,
    pub final_drive: f64,
    pub wheel_radius: f64,
    pub vehicle_mass: f64,
    pub wheel_inertia: f64,
    pub road_a: f64,
    pub road_c: f64,
    pub brake_max: f64,
}

impl Default for FullCarParams {
    fn default() -> Self {
        FullCarParams {
            throttle: 0.21,
            engine_inertia: 0.25,
            idle_speed: 800.0 * RPM,
            turbine_inertia: 0.05,
            clutch_rise: 0.2,
            lockup_rise: 0.2,
            in_planet_ratio: 2.3,
            out_planet_ratio: 2.0,
            final_drive: 3.23,
            wheel_radius: 0.3,
            vehicle_mass: 1500.0,
            wheel_inertia: 4.0,
            road_a: 150.0,
            road_c: 0.4,
            brake_max: 10000.0,
        }
    }
}

/// Clutch schedule: pressure of each clutch vs master signal 1..5.
pub const SCHEDULE: [(&str, [f64; 5]); 4] = [
    ("A", [1.0, 1.0, 1.0, 0.0, 0.0]),
    ("B", [0.0, 0.0, 1.0, 1.0, 0.0]),
    ("C", [0.0, 1.0, 0.0, 1.0, 0.0]),
    ("D", [1.0, 0.0, 0.0, 0.0, 0.0]),
];

/// The full-car diagram.
pub fn full_car(p: &FullCarParams) -> Diagram {
    let mut d = Diagram::new("full_car");
    d.description = "SimDriveline full-car demo: engine, torque converter with lock-up, CR-CR 4-speed through four gears and neutral, braking to a stop".into();
    // The sections run in this order so blocks, connections and scopes keep their order
    // (some connections name blocks a later section adds, e.g. `gearbox`, `lockup`).
    driver(&mut d, p);
    clutch_hydraulics(&mut d, p);
    lockup_control(&mut d, p);
    engine_and_converter(&mut d, p);
    transmission(&mut d, p);
    final_drive_and_load(&mut d, p);
    driveline_power(&mut d);
    stop_condition(&mut d);
    logged_variables(&mut d);
    scopes(&mut d);
    solver_settings(&mut d);
    d
}

/// Driver inputs: the throttle, and the master clutch signal stepping 1..5 at 10 s intervals.
fn driver(d: &mut Diagram, p: &FullCarParams) {
    d.add("throttle", "Constant", json!({ "value": p.throttle }));
    d.add("master_base", "Constant", json!({ "value": 1.0 }));
    for (k, t) in [10.0, 20.0, 30.0, 40.0].iter().enumerate() {
        d.add(
            &format!("shift{}", k + 1),
            "Step",
            json!({ "time": t, "before": 0.0, "after": 1.0 }),
        );
    }
    d.add("master", "Sum", json!({ "signs": "+++++" }));
    d.connect(&["master_base.y", "master.u1"]);
    for k in 1..=4 {
        d.connect(&[format!("shift{k}.y"), format!("master.u{}", k + 1)]);
    }
}

/// Clutch hydraulics: per clutch of [`SCHEDULE`], a schedule lookup on the master signal and a
/// first-order `s0/(s+s0)` pressure filter feeding the gearbox; the reverse clutch R gets zero.
fn clutch_hydraulics(d: &mut Diagram, p: &FullCarParams) {
    let s0 = 1.0 / p.clutch_rise;
    for (c, sched) in SCHEDULE {
        let table: Vec<[f64; 2]> = sched
            .iter()
            .enumerate()
            .map(|(i, v)| [(i + 1) as f64, *v])
            .collect();
        d.add(
            &format!("sched_{c}"),
            "Lookup1D",
            json!({ "table": table, "extrapolate": "hold" }),
        );
        d.add(
            &format!("hyd_{c}"),
            "TransferFcn",
            json!({ "num": [s0], "den": [1.0, s0] }),
        );
        d.connect(&["master.y".to_string(), format!("sched_{c}.u")]);
        d.connect(&[format!("sched_{c}.y"), format!("hyd_{c}.u")]);
        d.connect(&[format!("hyd_{c}.y"), format!("gearbox.{c}")]);
    }
    d.add("reverse", "Constant", json!({ "value": 0.0 }));
    d.connect(&["reverse.y", "gearbox.R"]);
}

/// Lock-up control: a schedule lookup and a first-order pressure filter driving the lock-up
/// clutch, which engages at master = 5.
fn lockup_control(d: &mut Diagram, p: &FullCarParams) {
    let s0l = 1.0 / p.lockup_rise;
    d.add(
        "sched_lockup",
        "Lookup1D",
        json!({ "table": [[4.0, 0.0], [5.0, 1.0]], "extrapolate": "hold" }),
    );
    d.add(
        "hyd_lockup",
        "TransferFcn",
        json!({ "num": [s0l], "den": [1.0, s0l] }),
    );
    d.connect(&["master.y", "sched_lockup.u"]);
    d.connect(&["sched_lockup.y", "hyd_lockup.u"]);
    d.connect(&["hyd_lockup.y", "lockup.f"]);
}

/// Engine with its inertia, torque converter, turbine inertia and lock-up clutch.
fn engine_and_converter(d: &mut Diagram, p: &FullCarParams) {
    d.add("engine", "Engine", json!({ "kind": "gasoline", "max_power": 150e3, "speed_at_max_power": 4500.0 * RPM, "max_speed": 6000.0 * RPM }));
    d.add(
        "engine_inertia",
        "Inertia",
        json!({ "J": p.engine_inertia, "w0": p.idle_speed }),
    );
    d.add("converter", "TorqueConverter", json!({}));
    d.add("turbine", "Inertia", json!({ "J": p.turbine_inertia }));
    d.add(
        "lockup",
        "Clutch",
        json!({ "mu": 0.3, "peak": 1.1, "surfaces": 2.0, "radius": 0.1, "fn_max": 10000.0 }),
    );
    d.connect(&["throttle.y", "engine.throttle"]);
    d.connect(&[
        "engine.crank",
        "engine_inertia.flange",
        "converter.impeller",
        "lockup.flange_a",
    ]);
    d.connect(&[
        "converter.turbine",
        "turbine.flange",
        "lockup.flange_b",
        "gearbox.input",
    ]);
}

/// The CR-CR 4-speed transmission.
fn transmission(d: &mut Diagram, p: &FullCarParams) {
    d.add("gearbox", "CrCr4Speed", json!({
        "input_ratio": p.in_planet_ratio, "output_ratio": p.out_planet_ratio,
        "mu": 0.3, "peak": 1.1, "surfaces": 6.0, "radius": 0.1, "fn_max": 10000.0, "member_inertia": 0.005,
    }));
}

/// Final drive, axle, brake (with its torque schedule), wheels, vehicle mass and road load.
fn final_drive_and_load(d: &mut Diagram, p: &FullCarParams) {
    d.add(
        "final_drive",
        "IdealGear",
        json!({ "ratio": p.final_drive }),
    );
    d.add("drive_torque", "TorqueSensor", json!({}));
    d.add("axle", "Inertia", json!({ "J": p.wheel_inertia }));
    d.add("axle_speed", "MotionSensor", json!({}));
    d.add(
        "brake",
        "Brake",
        json!({ "max_torque": p.brake_max, "peak": 1.1 }),
    );
    d.add(
        "brake_torque",
        "SignalBuilder",
        json!({ "points": [[0.0, 0.0], [44.0, 0.0], [50.0, p.brake_max]] }),
    );
    d.add("brake_pedal", "Gain", json!({ "k": 1.0 / p.brake_max }));
    d.add(
        "wheel",
        "IdealRollingWheel",
        json!({ "radius": p.wheel_radius }),
    );
    d.add("vehicle", "Mass", json!({ "m": p.vehicle_mass }));
    d.add(
        "road",
        "RoadLoad",
        json!({ "A": p.road_a, "B": 0.0, "C": p.road_c }),
    );
    // The seed's final-drive subsystem: the vehicle inertia (axle and, through the rolling
    // wheel, the vehicle mass) ends the driveline; the torque sensor sits after it, in front
    // of the load (brake and road load), so it measures the torque the load takes. A second,
    // massless rolling wheel carries the road load, behind the sensor.
    d.add(
        "road_wheel",
        "IdealRollingWheel",
        json!({ "radius": p.wheel_radius }),
    );
    d.connect(&["gearbox.output", "final_drive.flange_a"]);
    d.connect(&[
        "final_drive.flange_b",
        "axle.flange",
        "wheel.hub",
        "drive_torque.flange_a",
    ]);
    d.connect(&["wheel.body", "vehicle.flange"]);
    d.connect(&[
        "drive_torque.flange_b",
        "axle_speed.flange",
        "brake.flange",
        "road_wheel.hub",
    ]);
    d.connect(&["road_wheel.body", "road.flange"]);
    d.connect(&["brake_torque.y", "brake_pedal.u"]);
    d.connect(&["brake_pedal.y", "brake.f"]);
}

/// Driveline power delivered to the load (road load and brake): drive torque times axle speed.
fn driveline_power(d: &mut Diagram) {
    d.add("drive_power", "Product", json!({ "ops": "**" }));
    d.connect(&["drive_torque.tau", "drive_power.u1"]);
    d.connect(&["axle_speed.w", "drive_power.u2"]);
}

/// Stop condition: stop when the brakes have brought the axle to rest, that is when the
/// brake locks (its `mode` is 0, stuck) while braking. The lock is the located instant the
/// axle's speed reaches zero; comparing the speed itself with 0 would depend on whether a
/// speed the lock projected to zero is left at +1e-27 or -1e-27 rad/s.
fn stop_condition(d: &mut Diagram) {
    d.add("rest_level", "Constant", json!({ "value": 0.0 }));
    d.add("at_rest", "Relational", json!({ "op": "==" }));
    d.add("braking", "Relational", json!({ "op": ">" }));
    d.add("stopped", "Product", json!({ "ops": "**" }));
    d.add("stop", "StopSimulation", json!({}));
    d.connect(&["brake.mode", "at_rest.u1"]);
    d.connect(&["rest_level.y", "at_rest.u2", "braking.u2"]);
    d.connect(&["brake_torque.y", "braking.u1"]);
    d.connect(&["at_rest.y", "stopped.u1"]);
    d.connect(&["braking.y", "stopped.u2"]);
    d.connect(&["stopped.y", "stop.u"]);
}

/// Variables recorded in the results.
fn logged_variables(d: &mut Diagram) {
    d.log(&[
        "engine.w",
        "engine.tau",
        "engine.power",
        "vehicle.v",
        "vehicle.s",
        "brake.tau",
        "brake.mode",
        "lockup.mode",
        "gearbox.A_mode",
        "gearbox.B_mode",
        "gearbox.C_mode",
        "gearbox.D_mode",
        "gearbox.ratio",
        "master.y",
    ]);
}

/// Scopes: road speed, engine speed and torque, drive ratio, clutch modes and slips, power.
fn scopes(d: &mut Diagram) {
    fn sig(s: impl Into<String>) -> ScopeSignal {
        ScopeSignal::new(s)
    }
    d.scope(ScopeSpec {
        title: Some("Road speed".into()),
        ..ScopeSpec::new(
            "road_speed",
            vec![sig("vehicle.v")
                .with_unit("km/h")
                .with_label("vehicle speed")],
        )
    });
    d.scope(ScopeSpec {
        title: Some("Engine RPM & Torque".into()),
        panels: vec![
            vec![sig("engine.w").with_unit("rpm").with_label("engine speed")],
            vec![sig("engine.tau")
                .with_unit("N*m")
                .with_label("engine torque")],
        ],
        ..ScopeSpec::new("engine", vec![])
    });
    d.scope(ScopeSpec {
        title: Some("Drive ratio (input/output speed; undefined in neutral)".into()),
        ylim: Some((0.0, 4.0)),
        ..ScopeSpec::new(
            "drive_ratio",
            vec![sig("gearbox.ratio").with_label("CR-CR ratio")],
        )
    });
    d.scope(ScopeSpec {
        title: Some("Clutch modes (-1/+1 sliding, 0 locked, 2 free)".into()),
        event_markers: false,
        panels: ["A", "B", "C", "D"]
            .iter()
            .map(|c| vec![sig(format!("gearbox.{c}_mode")).with_label(format!("clutch {c}"))])
            .chain(std::iter::once(vec![
                sig("lockup.mode").with_label("lock-up")
            ]))
            .collect(),
        ..ScopeSpec::new("clutch_modes", vec![])
    });
    d.scope(ScopeSpec {
        title: Some("Clutch slips".into()),
        panels: vec![["A", "B", "C", "D"]
            .iter()
            .map(|c| {
                sig(format!("gearbox.{c}_w_rel"))
                    .with_unit("rpm")
                    .with_label(format!("clutch {c}"))
            })
            .chain(std::iter::once(
                sig("lockup.w_rel").with_unit("rpm").with_label("lock-up"),
            ))
            .collect()],
        ..ScopeSpec::new("clutch_slips", vec![])
    });
    d.scope(ScopeSpec {
        title: Some("Driveline and braking power (+ into the load; − taken by the brake)".into()),
        panels: vec![vec![
            sig("drive_power.y")
                .with_unit("hp")
                .with_label("driveline power, + into the load"),
            sig("brake.power")
                .with_unit("hp")
                .with_label("braking power, − taken from the shaft"),
        ]],
        ..ScopeSpec::new("power", vec![])
    });
}

/// Solver settings: 50 s, tolerances 1e-6, output every 0.02 s, one guard sample per step.
fn solver_settings(d: &mut Diagram) {
    d.settings.stop_time = 50.0;
    d.settings.rtol = 1e-6;
    d.settings.atol = 1e-6;
    d.settings.output_interval = Some(0.02);
    // One equally spaced guard sample per step besides the 0.02 s output grid points (which
    // are samples too): the same 33 events as the default 4, those before the braking
    // within 3e-10 s, the stop 8e-6 s later (the braking phase's integration error); 16 %
    // fewer model calls (docs/solver.md, `guard_samples`).
    d.settings.guard_samples = 1;
    d.settings_given = true;
}
