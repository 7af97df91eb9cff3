//! `PathFollower` against geometry: signed lateral error and progress on a line and a
//! circle, pure pursuit's curvature `1/R` on a circle, the steer limit, the ISO 3888-2
//! gates where the documented table puts them with the centre line through their centres,
//! `cones_hit` counted exactly at located events, a kinematic bicycle holding a 40 m
//! circle lap after lap, and every bad input as a typed error naming the parameter.

use std::f64::consts::PI;

use drivelink_blocks::registry;
use drivelink_blocks::vehicle::path::iso3888::Track;
use drivelink_core::compile::{resolve_params, Scope};
use drivelink_core::probe::Probe;
use drivelink_core::{
    compile, Block, BlockBuild, BlockDecl, BlockType, Cx, Diagram, Error, EventTag, Feedthrough,
    ParamError, ParamSpec, Params, PortDecl, Registry, RunStatus,
};
use serde_json::{json, Value};

const L: f64 = 2.7;

fn try_build(params: Value) -> Result<Box<dyn Block>, ParamError> {
    let reg = registry();
    let t = reg.get("PathFollower").expect("registered");
    let Value::Object(raw) = params else {
        panic!("params must be an object")
    };
    let p = match resolve_params("pf", t.name, &t.params, &raw, &Scope::new()) {
        Ok(p) => p,
        Err(errors) => match errors.into_iter().next() {
            Some(Error::Param(e)) => return Err(e),
            other => panic!("unexpected resolution error {other:?}"),
        },
    };
    match &t.build {
        BlockBuild::Primitive(f) => f(&p),
        _ => panic!("not primitive"),
    }
}

fn follower(params: Value) -> Box<dyn Block> {
    try_build(params).unwrap_or_else(|e| panic!("{e}"))
}

/// Outputs `(steer, lateral_error, progress)` and the variables for the car at
/// `(x, y, yaw, speed)`, modes updated there first.
fn look(b: &mut Box<dyn Block>, car: [f64; 4]) -> ([f64; 3], Vec<(String, f64)>) {
    let names: Vec<String> = b.declare().variables.into_iter().map(|v| v.name).collect();
    let mut p = Probe::new(b.as_mut());
    p.inputs(&car);
    p.update_modes();
    assert!(
        p.guards().iter().all(|&g| g >= 0.0),
        "guards valid after update_modes"
    );
    let y = p.outputs();
    let vars = names
        .into_iter()
        .enumerate()
        .map(|(i, n)| (n, p.var(i)))
        .collect();
    ([y[0], y[1], y[2]], vars)
}

fn var(vars: &[(String, f64)], name: &str) -> f64 {
    vars.iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no variable {name}"))
        .1
}

#[test]
fn lateral_error_and_progress_on_a_line_are_signed_distances() {
    // Without a path or generator the path is the line, the x axis by default.
    let mut b = follower(json!({"wheelbase": L}));
    let ([_, e, s], _) = look(&mut b, [10.0, 2.0, 0.0, 5.0]);
    assert_eq!((e, s), (2.0, 10.0), "left of the x axis");
    let ([_, e, s], _) = look(&mut b, [-3.0, -1.5, 0.3, 5.0]);
    assert_eq!((e, s), (-1.5, -3.0), "right of it, before the origin");
    // A line heading north through (1, 1): a car at (0, 5) is 1 m to its left.
    let mut b = follower(
        json!({"generator": "line", "x0": 1.0, "y0": 1.0, "heading": "90 deg", "wheelbase": L}),
    );
    let ([_, e, s], _) = look(&mut b, [0.0, 5.0, PI / 2.0, 5.0]);
    assert!(
        (e - 1.0).abs() < 1e-12 && (s - 4.0).abs() < 1e-12,
        "e {e}, s {s}"
    );
    // A point list: the same as the line it draws, arc length along a corner.
    let mut b = follower(json!({"path": [[0, 0], [10, 0], [10, 10]], "wheelbase": L}));
    let ([_, e, s], _) = look(&mut b, [10.5, 4.0, PI / 2.0, 5.0]);
    assert!((e + 0.5).abs() < 1e-12, "right of the second leg: {e}");
    assert!((s - 14.0).abs() < 1e-12, "10 m + 4 m: {s}");
    let ([_, e, s], _) = look(&mut b, [25.0, 13.0, PI / 2.0, 5.0]);
    assert!(
        (e + 15.0).abs() < 1e-12 && (s - 23.0).abs() < 1e-12,
        "past the end: {e}, {s}"
    );
}

#[test]
fn circle_starts_at_the_origin_heading_x_and_turns_left() {
    let r = 40.0;
    let mut b = follower(json!({"generator": "circle", "radius": r, "wheelbase": L}));
    // On the circle at the start, tangent: no error, progress 0, pure pursuit steers
    // exactly for the curvature 1/R: the chord to the target at arc L_d subtends α = L_d/2R
    // and κ = 2·sin α/(2R·sin α). Only rounding separates the two (1e-12 relative).
    for speed in [2.0, 10.0, 25.0] {
        let ([steer, e, s], vars) = look(&mut b, [0.0, 0.0, 0.0, speed]);
        assert_eq!((e, s), (0.0, 0.0));
        let kappa = var(&vars, "curvature");
        assert!(
            (kappa * r - 1.0).abs() < 1e-12,
            "κ·R = {} at {speed} m/s",
            kappa * r
        );
        assert!((steer - (L / r).atan()).abs() < 1e-12);
        assert_eq!(var(&vars, "lookahead"), f64::max(3.0, speed));
    }
    // Anywhere on it, tangent: κ = 1/R, progress is the arc from the origin.
    let phi: f64 = 2.0;
    let car = [r * phi.sin(), r * (1.0 - phi.cos()), phi, 15.0];
    let ([_, e, s], vars) = look(&mut b, car);
    assert!(
        e.abs() < 1e-12 && (s - r * phi).abs() < 1e-12,
        "e {e}, s {s}"
    );
    assert!((var(&vars, "curvature") * r - 1.0).abs() < 1e-12);
    assert!(var(&vars, "heading_error").abs() < 1e-12);
    // Inside the circle is left of the path (+), outside right (−).
    let ([_, e, s], _) = look(&mut b, [r + 1.5, r, PI / 2.0, 15.0]);
    assert!((e + 1.5).abs() < 1e-12 && (s - r * PI / 2.0).abs() < 1e-12);
    let ([_, e, _], _) = look(&mut b, [0.0, 0.5, 0.0, 15.0]);
    assert!((e - 0.5).abs() < 1e-12);
}

#[test]
fn steer_is_limited_to_max_steer_by_a_located_mode() {
    let mut b = follower(
        json!({"generator": "line", "wheelbase": L, "max_steer": "20 deg", "lookahead_min": 3.0}),
    );
    // 5 m right of the line, slow: pure pursuit asks for far more than 20°.
    let ([steer, _, _], vars) = look(&mut b, [0.0, -5.0, 0.0, 1.0]);
    assert_eq!(steer, 20.0 * PI / 180.0);
    assert!((var(&vars, "curvature") * L).atan() > 20.0 * PI / 180.0);
    let ([steer, _, _], _) = look(&mut b, [0.0, 5.0, 0.0, 1.0]);
    assert_eq!(steer, -20.0 * PI / 180.0);
    // Small errors: inside the limit, the law's own value.
    let ([steer, _, _], vars) = look(&mut b, [0.0, 0.1, 0.0, 10.0]);
    assert!(steer < 0.0 && steer > -0.1);
    assert!((steer - (var(&vars, "curvature") * L).atan()).abs() < 1e-15);
}

#[test]
fn iso3888_gates_are_where_the_table_puts_them_and_the_centre_line_goes_through_them() {
    for (w, c) in [(1.8, 3.0), (2.3, 1.3 * 2.3 + 0.25)] {
        let t = Track::new(w, 50.0);
        let a = 1.1 * w + 0.25;
        let b = w + 1.0;
        let want = [
            (1, [50.0, 62.0], 0.0, a),
            (3, [75.5, 86.5], a / 2.0 + 1.0 + b / 2.0, b),
            (5, [99.0, 111.0], (c - a) / 2.0, c),
        ];
        for (g, (section, x, yc, width)) in t.gates.iter().zip(want) {
            assert_eq!(g.section, section);
            assert!((g.x[0] - x[0]).abs() < 1e-12 && (g.x[1] - x[1]).abs() < 1e-12);
            assert!((g.y_center - yc).abs() < 1e-12, "section {section} centre");
            assert!((g.width - width).abs() < 1e-12, "section {section} width");
        }
        // Lane 3 starts 1 m left of lane 1's left cone line; lane 5's right cone line
        // continues lane 1's.
        assert!((t.gates[1].y_right() - t.gates[0].y_left() - 1.0).abs() < 1e-12);
        assert!((t.gates[2].y_right() - t.gates[0].y_right()).abs() < 1e-12);
        assert_eq!(t.edges[5] - t.edges[0], 61.0);
        // The follower's centre line passes through every gate's centre along its length.
        let mut f = follower(
            json!({"generator": "iso3888_2", "vehicle_width": w, "x0": 50.0, "wheelbase": L}),
        );
        for g in &t.gates {
            for k in 0..=12 {
                let x = g.x[0] + (g.x[1] - g.x[0]) * f64::from(k) / 12.0;
                let ([_, e, s], vars) = look(&mut f, [x, g.y_center, 0.0, 16.0]);
                assert!(e.abs() < 1e-9, "section {}: x {x}: error {e}", g.section);
                assert!(
                    s >= x - 50.0 - 1e-9,
                    "progress {s} is at least the distance along x"
                );
                // A car centred on the lane: each corner w/2 from its side, the lane's
                // (width − w)/2 clearance.
                if x > g.x[0] + 2.25 && x < g.x[1] {
                    let clear = var(&vars, "min_clearance");
                    assert!(
                        (clear - (g.width - w) / 2.0).abs() < 1e-9,
                        "clearance {clear}"
                    );
                    assert_eq!(var(&vars, "gate"), f64::from(g.section));
                    assert_eq!(var(&vars, "cones_hit"), 0.0);
                }
            }
        }
    }
}

/// A car driven straight along `y = y_car` at 15 m/s from x = 40 through the ISO 3888-2
/// track (1.8 m wide, 4.5 m long, x0 = 50): the result and the follower's events.
fn straight_through_gates(y_car: f64) -> drivelink_core::SimResult {
    let mut d = Diagram::new("gates");
    d.add(
        "x",
        "Ramp",
        json!({"start_time": 0.0, "duration": 10.0, "height": 150.0, "offset": 40.0}),
    );
    d.add("y", "Constant", json!({"value": y_car}));
    d.add("yaw", "Constant", json!({"value": 0.0}));
    d.add("v", "Constant", json!({"value": 15.0}));
    d.add(
        "pf",
        "PathFollower",
        json!({"generator": "iso3888_2", "vehicle_width": 1.8, "x0": 50.0, "wheelbase": L}),
    );
    for (s, p) in [
        ("x.y", "pf.x"),
        ("y.y", "pf.y"),
        ("yaw.y", "pf.yaw"),
        ("v.y", "pf.speed"),
    ] {
        d.connect(&[s, p]);
    }
    d.log(&["pf.cones_hit", "pf.min_clearance", "pf.lateral_error"]);
    d.settings.stop_time = 6.0;
    let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("{e}"));
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    r
}

#[test]
fn cones_hit_counts_each_gate_crossed_once_at_located_events() {
    // Lanes (w = 1.8): 1 at y ∈ [−1.115, 1.115], 3 at [2.115, 4.915], 5 at [−1.115, 1.885].
    // Along y = 0 the corners (y = ±0.9) clear lanes 1 and 5 but miss lane 3 entirely: the
    // front corners enter section 3 (x = 75.5) when the centre is at 73.25 m.
    let r = straight_through_gates(0.0);
    assert_eq!(r.last("pf.cones_hit"), Some(1.0));
    // Each corner's crossing is an event, the gate counts once: the front corners at
    // x = 73.25 m, the rear ones (2.25 m behind the centre) at x = 77.75 m.
    let hits: Vec<_> = r.events_of("pf", EventTag::ZeroCrossing).collect();
    assert_eq!(hits.len(), 4, "{hits:?}");
    for (h, x_centre) in hits.iter().zip([73.25, 73.25, 77.75, 77.75]) {
        assert!(
            (h.time - (x_centre - 40.0) / 15.0).abs() < 1e-9,
            "{} at {}",
            h.detail,
            h.time
        );
        assert!(h.detail.contains("section 3") && h.detail.contains("right"));
        assert!(h.detail.contains("gates hit: 1"));
    }
    // y = 1.0: the left corners (1.9) are outside lane 1 (1.115) from the start of section 1
    // and outside lane 5 (1.885) too: three gates. At y = 0.98 (corners at 1.88) lane 5 is
    // cleared by 5 mm: two.
    assert_eq!(straight_through_gates(1.0).last("pf.cones_hit"), Some(3.0));
    let r = straight_through_gates(0.98);
    assert_eq!(r.last("pf.cones_hit"), Some(2.0));
    let entering_1 = r
        .events_of("pf", EventTag::ZeroCrossing)
        .find(|e| e.detail.contains("section 1"))
        .expect("a section 1 crossing");
    assert!((entering_1.time - (50.0 - 2.25 - 40.0) / 15.0).abs() < 1e-9);
}

/// A kinematic bicycle (reference point on the rear axle) at constant speed `v`:
/// `x' = v·cos ψ`, `y' = v·sin ψ`, `ψ' = v·tan δ/L`, starting at `(0, y0)` heading +x.
#[derive(Debug)]
struct Bicycle {
    v: f64,
    wheelbase: f64,
    y0: f64,
}

impl Block for Bicycle {
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("steer"),
            PortDecl::output("x"),
            PortDecl::output("y"),
            PortDecl::output("yaw"),
            PortDecl::output("speed"),
        ];
        BlockDecl {
            ports,
            states: 3,
            feedthrough: Feedthrough::None,
            ..BlockDecl::default()
        }
    }
    fn initial_states(&self, x: &mut [f64]) {
        x.copy_from_slice(&[0.0, self.y0, 0.0]);
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[..3].copy_from_slice(&cx.x[..3]);
        y[3] = self.v;
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        let psi = cx.x[2];
        dx[0] = self.v * psi.cos();
        dx[1] = self.v * psi.sin();
        dx[2] = self.v * cx.u(0).tan() / self.wheelbase;
    }
}

fn build_bicycle(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    Ok(Box::new(Bicycle {
        v: p.num("v")?,
        wheelbase: p.num("wheelbase")?,
        y0: p.num("y0")?,
    }))
}

/// The bicycle at 15 m/s from `(0, y0)` heading +x, steered by a `PathFollower` with
/// `follower` parameters.
fn bicycle_run(y0: f64, stop: f64, follower: Value) -> drivelink_core::SimResult {
    let mut reg: Registry = registry();
    reg.register(BlockType {
        name: "TestBicycle",
        category: "test",
        doc: "kinematic bicycle",
        params: vec![
            ParamSpec::required("v", "m/s", "speed"),
            ParamSpec::required("wheelbase", "m", "wheelbase"),
            ParamSpec::number("y0", "m", 0.0, "initial y"),
        ],
        build: BlockBuild::Primitive(build_bicycle),
        ports_doc: "steer[in] -> x[out], y[out], yaw[out], speed[out]",
    });
    let mut d = Diagram::new("circle");
    d.add(
        "car",
        "TestBicycle",
        json!({"v": 15.0, "wheelbase": L, "y0": y0}),
    );
    d.add("pf", "PathFollower", follower);
    for (s, p) in [
        ("car.x", "pf.x"),
        ("car.y", "pf.y"),
        ("car.yaw", "pf.yaw"),
        ("car.speed", "pf.speed"),
        ("pf.steer", "car.steer"),
    ] {
        d.connect(&[s, p]);
    }
    d.log(&["pf.lateral_error", "pf.progress", "pf.steer"]);
    if d.blocks
        .iter()
        .any(|b| b.params.get("generator") == Some(&json!("circle")))
    {
        d.log(&["pf.lap"]);
    }
    d.settings.stop_time = stop;
    d.settings.rtol = 1e-9;
    d.settings.atol = 1e-10;
    let mut m = compile(&d, &reg).unwrap_or_else(|e| panic!("{e}"));
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    r
}

fn bicycle_on_circle(y0: f64, stop: f64) -> drivelink_core::SimResult {
    bicycle_run(
        y0,
        stop,
        json!({"generator": "circle", "radius": 40.0, "wheelbase": L}),
    )
}

#[test]
fn stanley_brings_a_kinematic_bicycle_onto_a_line() {
    // Near the line Stanley gives ė_front = −v·sin(atan(k·e/(v + k_soft))) ≈ −k·v/(v + k_soft)·e
    // (heading error term cancelling the heading): 1 m off, after 15 s the error is
    // about e^{−15·k·15/16} ≈ 8e-7 m.
    let r = bicycle_run(
        -1.0,
        15.0,
        json!({"generator": "line", "law": "stanley", "k": 1.0, "wheelbase": L}),
    );
    let e = r.get("pf.lateral_error").unwrap();
    assert!((e[0] + 1.0).abs() < 1e-12);
    assert!(
        r.get("pf.steer").unwrap()[0] > 0.0,
        "steers left, towards the line"
    );
    let end = r.last("pf.lateral_error").unwrap();
    assert!(end.abs() < 1e-4, "lateral error {end} m after 15 s");
}

#[test]
fn kinematic_bicycle_holds_a_40_m_circle_lap_after_lap() {
    // Started on the circle: pure pursuit's steer is exactly the circle's, so the car stays
    // on it (the error is the solver's), and the progress is the distance driven.
    let stop = 40.0;
    let r = bicycle_on_circle(0.0, stop);
    let e = r.get("pf.lateral_error").unwrap();
    let worst = e.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    assert!(worst < 1e-4, "worst lateral error {worst} m");
    let driven = 15.0 * stop;
    let s = r.last("pf.progress").unwrap();
    assert!(
        (s - driven).abs() < 1e-3,
        "progress {s} vs {driven} m driven"
    );
    // The lap count changes at the top of the circle: round(laps driven).
    let laps = driven / (2.0 * PI * 40.0);
    assert_eq!(r.last("pf.lap"), Some(laps.round()));
    // The progress never jumps (no wrap at the laps).
    let ps = r.get("pf.progress").unwrap();
    for k in 1..ps.len() {
        let ds = ps[k] - ps[k - 1];
        let dt = r.time[k] - r.time[k - 1];
        assert!(ds <= 15.0 * dt * 1.01 + 1e-9, "jump {ds} m in {dt} s");
    }
    // Started 1 m outside: back on the circle within 0.1 m after one lap, and held.
    let r = bicycle_on_circle(-1.0, 40.0);
    assert!((r.get("pf.lateral_error").unwrap()[0] + 1.0).abs() < 1e-12);
    for (t, e) in r.time.iter().zip(r.get("pf.lateral_error").unwrap()) {
        if *t > 2.0 * PI * 40.0 / 15.0 {
            assert!(e.abs() < 0.1, "lateral error {e} m at {t} s");
        }
    }
}

#[test]
fn bad_path_follower_inputs_are_typed_errors_naming_the_parameter() {
    let cases = [
        (
            json!({"path": [[0, 0]], "wheelbase": L}),
            "path",
            "at least two",
        ),
        (
            json!({"path": [[0, 0], [1, 0], [1, 0], [2, 0]], "wheelbase": L}),
            "path",
            "point 2",
        ),
        (
            json!({"path": [[0, 0], [1, 0]], "generator": "line", "wheelbase": L}),
            "generator",
            "not both",
        ),
        (
            json!({"generator": "spiral", "wheelbase": L}),
            "generator",
            "spiral",
        ),
        (
            json!({"generator": "line", "law": "mpc", "wheelbase": L}),
            "law",
            "mpc",
        ),
        (
            json!({"generator": "line", "lookahead_time": -1.0, "wheelbase": L}),
            "lookahead_time",
            ">= 0",
        ),
        (
            json!({"generator": "line", "lookahead_min": -3.0, "wheelbase": L}),
            "lookahead_min",
            "> 0",
        ),
        (
            json!({"generator": "line", "max_steer": 0.0, "wheelbase": L}),
            "max_steer",
            "> 0",
        ),
        (
            json!({"generator": "line", "max_steer": -0.5, "wheelbase": L}),
            "max_steer",
            "> 0",
        ),
        (
            json!({"generator": "line", "wheelbase": 0.0}),
            "wheelbase",
            "> 0",
        ),
        (
            json!({"generator": "circle", "radius": -40.0, "wheelbase": L}),
            "radius",
            "> 0",
        ),
        (
            json!({"generator": "iso3888_2", "vehicle_width": 0.0, "wheelbase": L}),
            "vehicle_width",
            "> 0",
        ),
        (
            json!({"generator": "line", "law": "stanley", "k_soft": 0.0, "wheelbase": L}),
            "k_soft",
            "> 0",
        ),
    ];
    for (params, name, says) in cases {
        let e = try_build(params.clone())
            .err()
            .unwrap_or_else(|| panic!("{params} built"));
        assert_eq!(e.param, name, "{params}: {e}");
        assert!(
            e.message.contains(says),
            "{params}: '{}' should say '{says}'",
            e.message
        );
    }
}

#[test]
fn a_generator_object_path_is_the_generator_given_by_parameters() {
    let cases = [
        (
            json!({"path": {"type": "circle", "radius": "25 m"}, "wheelbase": L}),
            json!({"generator": "circle", "radius": 25, "wheelbase": L}),
        ),
        (
            json!({"path": {"type": "iso3888_2", "vehicle_width": 1.7, "x0": 30}, "wheelbase": L}),
            json!({"generator": "iso3888_2", "vehicle_width": 1.7, "x0": 30, "wheelbase": L}),
        ),
        (
            json!({"path": {"type": "line", "y0": "2 m"}, "wheelbase": L}),
            json!({"generator": "line", "y0": 2, "wheelbase": L}),
        ),
    ];
    for (object, flat) in cases {
        let (mut a, mut b) = (follower(object.clone()), follower(flat));
        for car in [
            [3.0, 1.0, 0.2, 10.0],
            [40.0, 3.0, 0.1, 15.0],
            [-5.0, 8.0, 1.0, 5.0],
        ] {
            let (ya, va) = look(&mut a, car);
            let (yb, vb) = look(&mut b, car);
            assert_eq!(ya, yb, "{object}: outputs at {car:?}");
            // Bit for bit (NaN where the car is between gates).
            let bits = |v: &[(String, f64)]| -> Vec<(String, u64)> {
                v.iter().map(|(n, x)| (n.clone(), x.to_bits())).collect()
            };
            assert_eq!(bits(&va), bits(&vb), "{object}: variables at {car:?}");
        }
    }
}

#[test]
fn a_bad_generator_object_names_the_key() {
    for (params, expect) in [
        (json!({"path": {"type": "oval"}, "wheelbase": L}), "oval"),
        (
            json!({"path": {"type": "circle", "radius": 40, "r": 3}, "wheelbase": L}),
            "'r'",
        ),
        (json!({"path": {"radius": 40}, "wheelbase": L}), "type"),
        (
            json!({"path": {"type": "circle", "radius": "40 s"}, "wheelbase": L}),
            "radius",
        ),
        (
            json!({"path": {"type": "circle", "radius": -1}, "wheelbase": L}),
            "radius",
        ),
        (
            json!({"path": {"type": "circle"}, "generator": "line", "wheelbase": L}),
            "generator",
        ),
        (
            json!({"path": [[0, 0], [1, "x"]], "wheelbase": L}),
            "point 1",
        ),
    ] {
        let e = try_build(params.clone()).err().map(|e| e.to_string());
        let e = e.unwrap_or_else(|| panic!("{params}: no error"));
        assert!(e.contains(expect), "{params}: {e}");
    }
}
