//! The `Engine`'s fuel law: FASTSim's efficiency over the power fraction, a fuel-rate map
//! and a BSFC map at fixed operating points against the formulas by hand; the fuel mass as
//! the integral of the rate over a constant operating point; the energy audit booking the
//! fuel energy as the engine's supply and fuel power − shaft power as its loss; bad fuel
//! parameters refused naming the block and the parameter.

use drivelink_blocks::registry;
use drivelink_core::compile::{resolve_params, Scope};
use drivelink_core::probe::Probe;
use drivelink_core::{compile, Block, BlockBuild, Diagram, Forces};
use serde_json::{json, Value};

mod common;
use common::{close, last, run_completed};

/// A flat torque map: `TAU_FULL` N·m at full throttle at every speed, linear in throttle.
const TAU_FULL: f64 = 200.0;
const P_MAX: f64 = 100e3;
const LHV: f64 = 43.2e6;
const AUX: f64 = 700.0;
const FRACTIONS: [f64; 4] = [0.0, 0.1, 0.4, 1.0];
const ETAS: [f64; 4] = [0.1, 0.3, 0.36, 0.3];

fn map_params() -> Value {
    json!({
        "max_power": P_MAX,
        "torque_map": [[0.0, TAU_FULL], [0.0, TAU_FULL]],
        "torque_map_speed": [0.0, 1000.0],
        "torque_map_throttle": [0.0, 1.0],
        "max_speed": 1100.0,
        "speed_at_max_power": 500.0,
    })
}

fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    base
}

fn fastsim_params() -> Value {
    with(
        map_params(),
        json!({
            "efficiency": {"power_fraction": FRACTIONS, "eta": ETAS},
            "fuel_lhv": LHV,
            "aux_power": AUX,
        }),
    )
}

fn build(params: Value) -> Result<Box<dyn Block>, String> {
    let reg = registry();
    let t = reg.get("Engine").expect("registered");
    let Value::Object(raw) = params else { panic!() };
    let p = resolve_params("eng", t.name, &t.params, &raw, &Scope::new())
        .map_err(|e| format!("{e:?}"))?;
    let BlockBuild::Primitive(f) = &t.build else {
        panic!()
    };
    f(&p).map_err(|e| e.to_string())
}

/// The index of variable `name` among the engine's variables.
fn var_index(b: &dyn Block, name: &str) -> usize {
    let vars = b.declare().variables;
    let k = vars.iter().position(|v| v.name == name).unwrap();
    match vars[k].source {
        drivelink_core::VarSource::Custom(i) => i,
        _ => panic!("{name} is not a custom variable"),
    }
}

/// `(fuel_rate g/s, fuel_power W, d fuel/dt, dissipated W, delivered W)` at throttle `u`
/// and crank speed `w`.
fn at(b: &mut dyn Block, u: f64, w: f64) -> (f64, f64, f64, f64, f64) {
    let (rate, power) = (var_index(b, "fuel_rate"), var_index(b, "fuel_power"));
    let n = b.declare().states;
    let mut p = Probe::new(b);
    p.reset(0.0)
        .inputs(&[u])
        .speeds(&[0.0, w])
        .states(&vec![0.0; n]);
    p.update_modes();
    let (delivered, dissipated) = p.with_cx(|cx| {
        let (mut f, vel, dof) = (vec![0.0; 2], [0.0, w], [0u32, 1]);
        let mut acc = Forces::new(&mut f, &vel, &dof);
        p.block().forces(cx, &mut acc);
        (acc.power(), acc.loss())
    });
    let dx = p.derivatives();
    (p.var(rate), p.var(power), dx[0], dissipated, delivered)
}

/// η of the table at fraction `f`, by hand.
fn eta_at(f: f64) -> f64 {
    let k = FRACTIONS
        .partition_point(|x| *x <= f)
        .clamp(1, FRACTIONS.len() - 1)
        - 1;
    let s = (f - FRACTIONS[k]) / (FRACTIONS[k + 1] - FRACTIONS[k]);
    ETAS[k] + s * (ETAS[k + 1] - ETAS[k])
}

#[test]
fn fuel_rate_is_output_power_over_eta_and_lhv() {
    let mut b = build(fastsim_params()).unwrap();
    // (throttle, speed): mid-table, on a breakpoint-free stretch, and at rest (the
    // accessories alone: FASTSim's idle fuel while the car stands)
    for (u, w) in [
        (0.5, 300.0),
        (0.9, 250.0),
        (0.1, 120.0),
        (0.0, 0.0),
        (0.4, 0.0),
    ] {
        let shaft = u * TAU_FULL * w;
        let out = shaft + AUX;
        let eta = eta_at(out / P_MAX);
        let want_power = out / eta;
        let want_rate = want_power / LHV * 1e3;
        let (rate, power, dfuel, dissipated, delivered) = at(b.as_mut(), u, w);
        let what = format!("u = {u}, w = {w} rad/s");
        close(
            rate,
            want_rate,
            1e-12 * want_rate,
            &format!("fuel_rate at {what}"),
        );
        close(
            power,
            want_power,
            1e-9 * want_power,
            &format!("fuel_power at {what}"),
        );
        assert_eq!(dfuel, rate, "d fuel/dt at {what}");
        close(
            delivered,
            shaft,
            1e-9 * shaft.max(1.0),
            &format!("shaft power at {what}"),
        );
        close(
            dissipated,
            want_power - shaft,
            1e-9 * want_power,
            &format!("loss at {what}"),
        );
    }
}

#[test]
fn idle_fuel_power_is_the_least_fuel_power() {
    let mut b = build(with(fastsim_params(), json!({"idle_fuel_power": 9000.0}))).unwrap();
    // at rest: 700 W / η(0.007) = 6.5 kW < 9 kW
    close(
        at(b.as_mut(), 0.0, 0.0).1,
        9000.0,
        1e-9,
        "fuel power at rest",
    );
    // under load the law's value
    let out = 0.5 * TAU_FULL * 300.0 + AUX;
    close(
        at(b.as_mut(), 0.5, 300.0).1,
        out / eta_at(out / P_MAX),
        1e-6,
        "fuel power under load",
    );
}

#[test]
fn fuel_maps_give_the_rate_and_the_bsfc_law() {
    let speeds = [100.0, 300.0];
    let torques = [0.0, 200.0];
    let rate = build(with(
        map_params(),
        json!({"fuel_map": {"speed": speeds, "torque": torques, "rate": [[0.2, 2.0], [0.6, 5.0]]}}),
    ));
    let mut rate = rate.unwrap();
    // (u = 0.5: 100 N·m, half-way on the torque axis; w = 200: half-way on the speed axis)
    let want = 0.25 * (0.2 + 2.0 + 0.6 + 5.0);
    close(at(rate.as_mut(), 0.5, 200.0).0, want, 1e-12, "rate map");
    close(
        at(rate.as_mut(), 0.5, 200.0).1,
        want * 1e-3 * 43.2e6,
        1e-6,
        "fuel power of the rate map (default lhv, FASTSim's gasoline)",
    );
    let mut bsfc = build(with(
        map_params(),
        json!({"fuel_map": {"speed": speeds, "torque": torques, "bsfc": [[400.0, 260.0], [380.0, 240.0]]}, "fuel_lhv": 42.8e6}),
    ))
    .unwrap();
    let (u, w) = (1.0, 300.0);
    let p_kw = TAU_FULL * w / 1e3;
    close(
        at(bsfc.as_mut(), u, w).0,
        240.0 * p_kw / 3600.0,
        1e-12,
        "bsfc map",
    );
}

/// An engine on the flat map at half throttle, its crank inertia held at `W` rad/s by a
/// torque source cancelling the engine torque exactly: a constant operating point.
fn constant_point() -> Diagram {
    let mut d = Diagram::new("fuel_integral");
    d.add("u", "Constant", json!({"value": 0.5}));
    d.add(
        "eng",
        "Engine",
        with(fastsim_params(), json!({"inertia": 0.2, "w0": W})),
    );
    d.add("hold", "Constant", json!({"value": -0.5 * TAU_FULL}));
    d.add("load", "TorqueSource", json!({}));
    d.connect(&["u.y", "eng.throttle"]);
    d.connect(&["hold.y", "load.tau"]);
    d.connect(&["eng.crank", "load.flange"]);
    d.log(&["eng.w", "eng.fuel_rate", "eng.fuel"]);
    d.settings.stop_time = 50.0;
    d
}
const W: f64 = 300.0;

#[test]
fn fuel_over_a_constant_operating_point_is_rate_times_time() {
    let (mut m, r) = run_completed(&constant_point());
    let out = 0.5 * TAU_FULL * W + AUX;
    let rate = out / eta_at(out / P_MAX) / LHV * 1e3;
    close(last(&r, "eng.w"), W, 1e-9, "crank speed held");
    close(last(&r, "eng.fuel_rate"), rate, 1e-12 * rate, "fuel_rate");
    let fuel = last(&r, "eng.fuel");
    close(fuel, rate * 50.0, 1e-9 * fuel, "fuel after 50 s");
    // the audit: the fuel's chemical energy supplied, the shaft work to the load, the rest
    // the engine's loss
    let a = m.energy_audit();
    assert!(a.relative_residual.abs() < 1e-9, "{a:#?}");
    let get = |v: &[(String, f64)], n: &str| v.iter().find(|s| s.0 == n).map(|s| s.1);
    let supplied = get(&a.sources, "eng").unwrap();
    close(supplied, fuel * 1e-3 * LHV, 1e-9 * supplied, "fuel energy");
    let shaft = 0.5 * TAU_FULL * W * 50.0;
    close(
        get(&a.losses, "eng.loss").unwrap(),
        supplied - shaft,
        1e-6 * supplied,
        "engine loss",
    );
    assert!(a.energy_created().is_empty(), "{:?}", a.energy_created());
}

#[test]
fn bad_fuel_parameters_name_the_block_and_parameter() {
    let eff = |f: Value, e: Value| {
        with(
            map_params(),
            json!({"efficiency": {"power_fraction": f, "eta": e}}),
        )
    };
    let map = |z: Value| {
        with(
            map_params(),
            json!({"fuel_map": {"speed": [0, 100], "torque": [0, 100], "bsfc": z}}),
        )
    };
    let cases = [
        (
            eff(json!([0, 1]), json!([0.0, 0.3])),
            "efficiency",
            "(0, 1]",
        ),
        (
            eff(json!([0, 1]), json!([0.2, 1.2])),
            "efficiency",
            "(0, 1]",
        ),
        (
            eff(json!([0, 0.5, 0.5]), json!([0.2, 0.3, 0.3])),
            "efficiency",
            "strictly increasing",
        ),
        (eff(json!([0, 0.5]), json!([0.2])), "efficiency", "entries"),
        (
            eff(json!([-0.1, 0.5]), json!([0.2, 0.3])),
            "efficiency",
            ">= 0",
        ),
        (map(json!([[250, 240], [-5, 230]])), "fuel_map", ">= 0"),
        (map(json!([[250, 240]])), "fuel_map", "bsfc"),
        (
            with(
                map_params(),
                json!({"fuel_map": {"speed": [0], "torque": [0], "eta": [[1]]}}),
            ),
            "fuel_map",
            "rate",
        ),
        (
            with(
                fastsim_params(),
                json!({"fuel_map": {"speed": [0], "torque": [0], "rate": [[1]]}}),
            ),
            "fuel_map",
            "not both",
        ),
        (
            with(fastsim_params(), json!({"fuel_lhv": 0.0})),
            "fuel_lhv",
            "> 0",
        ),
        (
            with(fastsim_params(), json!({"aux_power": -1.0})),
            "aux_power",
            ">= 0",
        ),
        (
            with(map_params(), json!({"aux_power": 500.0})),
            "aux_power",
            "fuel law",
        ),
        (
            with(
                map(json!([[250, 240], [230, 220]])),
                json!({"aux_power": 500.0}),
            ),
            "aux_power",
            "efficiency form",
        ),
    ];
    for (params, param, text) in cases {
        let e = build(params.clone())
            .err()
            .unwrap_or_else(|| panic!("accepted {params}"));
        assert!(
            e.contains("eng") && e.contains(param) && e.contains(text),
            "{params}: {e}"
        );
    }
    // through the compiler as a user meets it: a typed error, no panic
    let mut d = constant_point();
    d.blocks.retain(|b| b.name != "eng");
    d.add("eng", "Engine", eff(json!([0, 1]), json!([0.2, 1.5])));
    let e = compile(&d, &registry()).err().expect("refused").to_string();
    assert!(e.contains("eng") && e.contains("efficiency"), "{e}");
}

/// A torque map says what the engine gives at rest (an engine tied to the wheels without a
/// clutch, as FASTSim's conventional car, starts the car): from rest at half throttle the
/// flat map's 100 N·m spin 0.2 kg·m² up to 500 rad/s in 1 s, burning fuel from the first
/// instant. The power polynomial gives no torque at rest: that engine stays still.
#[test]
fn a_torque_map_engine_starts_from_rest() {
    let run = |params: Value| {
        let mut d = Diagram::new("from_rest");
        d.add("u", "Constant", json!({"value": 0.5}));
        d.add("eng", "Engine", with(params, json!({"inertia": 0.2})));
        d.connect(&["u.y", "eng.throttle"]);
        d.log(&["eng.w", "eng.fuel"]);
        d.settings.stop_time = 1.0;
        run_completed(&d).1
    };
    let r = run(fastsim_params());
    close(
        last(&r, "eng.w"),
        0.5 * TAU_FULL / 0.2,
        1e-9,
        "map engine's speed",
    );
    assert!(last(&r, "eng.fuel") > 0.0);
    let r = run(json!({"efficiency": {"power_fraction": FRACTIONS, "eta": ETAS}}));
    assert_eq!(last(&r, "eng.w"), 0.0, "polynomial engine at rest");
}
