//! `Tcs` against its definition: the slip formula, brake torque only above the target and
//! only on the spinning wheel, the throttle cut growing with the excess slip inside
//! [0, 1], the modes, the anti-windup, the pass-through when disabled, typed parameter
//! errors, and a closed loop with a wheel on ice (a test-only block) where the slip
//! settles at the target with TCS and runs away without it.

use std::collections::BTreeMap;

use drivelink_blocks::registry;
use drivelink_core::compile::{resolve_params, Scope};
use drivelink_core::params::{BlockType, ParamValue};
use drivelink_core::probe::Probe;
use drivelink_core::{
    compile, Block, BlockBuild, BlockDecl, Cx, Diagram, Feedthrough, ParamError, Params, PortDecl,
    RunStatus, SimResult,
};
use serde_json::{json, Value};

const R: f64 = 0.3;
const TARGET: f64 = 0.1;
const ENGINE_KP: f64 = 2.0;
const BRAKE_KP: f64 = 2000.0;

fn try_build(params: Value) -> Result<Box<dyn Block>, ParamError> {
    let reg = registry();
    let t = reg.get("Tcs").expect("Tcs registered");
    let Value::Object(raw) = params else {
        panic!("params must be an object")
    };
    let p = resolve_params("tcs", "Tcs", &t.params, &raw, &Scope::new()).expect("params");
    build_from(&p)
}

fn build_from(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let reg = registry();
    match &reg.get("Tcs").expect("Tcs registered").build {
        BlockBuild::Primitive(f) => f(p),
        _ => panic!("Tcs is primitive"),
    }
}

/// A TCS on wheels of radius 0.3 m (other parameters: defaults, then `extra`).
fn tcs(extra: Value) -> Box<dyn Block> {
    let mut p = json!({"radius": R});
    if let (Value::Object(m), Value::Object(e)) = (&mut p, extra) {
        m.extend(e);
    }
    try_build(p).expect("Tcs builds")
}

/// The spin rate giving slip `k` at speed `u` (|u| above v_min = 1 m/s).
fn w_for(k: f64, u: f64) -> f64 {
    u * (1.0 + k) / R
}

/// Outputs (throttle, brake_left, brake_right) with zero integrators.
fn out(b: &mut Box<dyn Block>, wl: f64, wr: f64, u: f64, demand: f64) -> Vec<f64> {
    let mut p = Probe::new(b.as_mut());
    p.inputs(&[wl, wr, u, demand]);
    p.outputs()
}

#[test]
fn slip_is_relative_to_the_speed_floored_at_v_min() {
    let mut b = tcs(json!({}));
    let mut p = Probe::new(b.as_mut());
    // 40 rad/s·0.3 m = 12 m/s at 10 m/s: 0.2. 5 rad/s at 0.5 m/s: (1.5 − 0.5)/1 = 1.
    for (w, u, k) in [
        (40.0, 10.0, 0.2),
        (5.0, 0.5, 1.0),
        (-40.0, -10.0, -0.2),
        (0.0, 10.0, -1.0),
    ] {
        p.inputs(&[w, 100.0 / 3.0, u, 1.0]);
        assert!((p.var(0) - k).abs() < 1e-14, "w {w}, u {u}: {}", p.var(0));
    }
    // The right wheel has its own slip: 100/3 rad/s at 0.5 m/s → (10 − 0.5)/1.
    p.inputs(&[0.0, 100.0 / 3.0, 0.5, 1.0]);
    assert!((p.var(1) - 9.5).abs() < 1e-12);
}

#[test]
fn only_a_wheel_slipping_beyond_the_target_is_braked() {
    let mut b = tcs(json!({"mode": "brake"}));
    let u = 10.0;
    // Below the target: nothing.
    let y = out(&mut b, w_for(0.09, u), w_for(0.0, u), u, 1.0);
    assert_eq!(y, vec![1.0, 0.0, 0.0]);
    // Left wheel at 0.15: brake_kp·0.05 = 100 N·m on the left wheel only.
    let y = out(&mut b, w_for(0.15, u), w_for(0.0, u), u, 1.0);
    assert!((y[1] - BRAKE_KP * 0.05).abs() < 1e-9, "{y:?}");
    assert_eq!((y[0], y[2]), (1.0, 0.0));
    // Mirrored.
    let y = out(&mut b, w_for(0.02, u), w_for(0.15, u), u, 1.0);
    assert!(
        (y[2] - BRAKE_KP * 0.05).abs() < 1e-9 && y[1] == 0.0,
        "{y:?}"
    );
    // A wheel spinning wildly gets max_brake_torque (1500 N·m), not more.
    let y = out(&mut b, w_for(5.0, u), w_for(0.0, u), u, 1.0);
    assert_eq!(y[1], 1500.0);
}

#[test]
fn throttle_cut_grows_with_excess_slip_and_stays_in_zero_one() {
    let mut b = tcs(json!({"mode": "engine"}));
    let u = 10.0;
    let mut prev = 0.0;
    for i in 0..=300 {
        let k = i as f64 * 0.01;
        // The worse wheel decides: the right one spins at k, the left one rolls.
        let y = out(&mut b, w_for(0.0, u), w_for(k, u), u, 0.8);
        let cut = 1.0 - y[0] / 0.8;
        assert!((0.0..=1.0).contains(&cut), "cut {cut} at slip {k}");
        assert!(
            cut >= prev - 1e-12,
            "cut fell from {prev} to {cut} at slip {k}"
        );
        let expect = (ENGINE_KP * (k - TARGET)).clamp(0.0, 1.0);
        assert!((cut - expect).abs() < 1e-12, "slip {k}: {cut} vs {expect}");
        prev = cut;
    }
    assert_eq!(prev, 1.0);
}

#[test]
fn engine_mode_never_brakes_and_brake_mode_never_cuts() {
    let mut engine = tcs(json!({"mode": "engine"}));
    let mut brake = tcs(json!({"mode": "brake"}));
    for u in [0.0f64, 0.5, 3.0, 20.0] {
        for kl in [-0.5, 0.0, 0.3, 2.0] {
            for kr in [0.0, 0.5, 4.0] {
                let (wl, wr) = (w_for(kl, u.max(1.0)), w_for(kr, u.max(1.0)));
                let ye = out(&mut engine, wl, wr, u, 0.7);
                assert_eq!((ye[1], ye[2]), (0.0, 0.0), "engine mode braked");
                let yb = out(&mut brake, wl, wr, u, 0.7);
                assert_eq!(yb[0], 0.7, "brake mode cut the throttle");
            }
        }
    }
}

#[test]
fn disabled_tcs_passes_the_throttle_and_freezes() {
    let mut b = tcs(json!({"enabled": 0}));
    let mut p = Probe::new(b.as_mut());
    p.inputs(&[w_for(3.0, 5.0), w_for(3.0, 5.0), 5.0, 0.65]);
    assert_eq!(p.outputs(), vec![0.65, 0.0, 0.0]);
    assert_eq!(p.derivatives(), vec![0.0; 3]);
}

/// Explicit Euler on the block's own integrators, inputs held: the states after `t` s.
fn integrate(p: &mut Probe, t: f64) {
    let dt = 1e-3;
    for _ in 0..(t / dt).round() as usize {
        let dx = p.derivatives();
        let x: Vec<f64> = p.x().iter().zip(&dx).map(|(x, d)| x + d * dt).collect();
        p.states(&x);
    }
}

#[test]
fn integrators_stay_bounded_during_long_saturation_and_recover_at_once() {
    let mut b = tcs(json!({}));
    let u = 10.0;
    let mut p = Probe::new(b.as_mut());
    // Excess slip 0.2: the cut's P part is 0.4; the integral rises until the cut
    // saturates at 1 and then stops (x_cut = 0.6); the brake's P part is 400 N·m, its
    // integral stops at 1500 − 400 = 1100 N·m. 100 s of it (a plain integrator would be
    // at 10·0.2·100 = 200).
    p.inputs(&[w_for(TARGET + 0.2, u), w_for(0.0, u), u, 1.0]);
    integrate(&mut p, 100.0);
    let x = p.x().to_vec();
    assert!((x[0] - 0.6).abs() < 0.011, "x_cut {}", x[0]);
    assert!((x[1] - 1100.0).abs() < 11.0, "x_brake {}", x[1]);
    assert_eq!(x[2], 0.0, "the rolling wheel's integrator");
    assert_eq!(p.outputs()[0], 0.0, "full cut");
    // The wheel grips again (slip 0, excess −0.1): the cut's integral falls at
    // 10·0.1 = 1/s and the cut (−0.2 + x_cut) is gone after 0.4 s; the brake's falls at
    // 1000 N·m/s and is gone after 1.2 s.
    p.inputs(&[w_for(0.0, u), w_for(0.0, u), u, 1.0]);
    integrate(&mut p, 0.45);
    assert_eq!(p.outputs()[0], 1.0, "throttle back after 0.45 s");
    integrate(&mut p, 0.8);
    assert_eq!(p.outputs()[1], 0.0, "brake released after 1.25 s");
    // And the integrators rest at 0 while the wheel grips, however long.
    integrate(&mut p, 10.0);
    assert!(p.x().iter().all(|&x| x.abs() < 1e-9), "{:?}", p.x());
}

#[test]
fn bad_parameters_are_typed_errors_naming_the_parameter() {
    for (name, value) in [
        ("engine_kp", json!(-1.0)),
        ("engine_ki", json!(-1.0)),
        ("brake_kp", json!(-1.0)),
        ("brake_ki", json!(-1.0)),
        ("max_brake_torque", json!(-1.0)),
        ("slip_target", json!(-0.1)),
        ("radius", json!(0.0)),
        ("radius", json!(-0.3)),
        ("v_min", json!(0.0)),
        ("enabled", json!(0.5)),
    ] {
        let mut p = json!({"radius": R});
        p[name] = value;
        match try_build(p) {
            Err(e) => assert_eq!((e.param.as_str(), e.block.as_str()), (name, "tcs")),
            Ok(_) => panic!("{name} accepted"),
        }
    }
    // An unknown mode: refused when the parameters are resolved (naming it)...
    let reg = registry();
    let t = reg.get("Tcs").unwrap();
    let Value::Object(raw) = json!({"radius": R, "mode": "throttle"}) else {
        unreachable!()
    };
    let errs = resolve_params("tcs", "Tcs", &t.params, &raw, &Scope::new()).unwrap_err();
    assert!(
        errs.iter().any(|e| e.to_string().contains("mode")),
        "{errs:?}"
    );
    // ...and by the block itself if it gets one anyway.
    let mut values = BTreeMap::new();
    values.insert("mode".to_string(), ParamValue::Text("throttle".into()));
    let p = Params {
        block: "tcs".into(),
        type_name: "Tcs".into(),
        values,
        base_dir: None,
    };
    let e = build_from(&p).err().expect("unknown mode refused");
    assert_eq!(e.param, "mode");
}

// ---- closed loop: one driven wheel on ice ----

/// A quarter car on ice: wheel spin ω and speed u (states), engine torque
/// `T·throttle` at the wheel, a brake torque, and the tire force
/// `Fx = μ·Fz·sin(1.9·atan(10·κ))` (peak at κ ≈ 0.11, falling to 16 % of it when spinning).
struct IceWheel;

const T_ENGINE: f64 = 600.0;
const MU_FZ: f64 = 0.1 * 4000.0;
const J: f64 = 1.5;
const MASS: f64 = 400.0;
const U0: f64 = 2.0;

fn tire_force(w: f64, u: f64) -> f64 {
    let k = (w * R - u) / u.abs().max(1.0);
    MU_FZ * (1.9 * (10.0 * k).atan()).sin()
}

impl Block for IceWheel {
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("throttle"),
            PortDecl::optional_input("brake", 0.0),
            PortDecl::output("w"),
            PortDecl::output("u"),
        ];
        BlockDecl {
            ports,
            states: 2,
            feedthrough: Feedthrough::None,
            ..BlockDecl::default()
        }
    }
    fn initial_states(&self, x: &mut [f64]) {
        x[0] = U0 / R;
        x[1] = U0;
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = cx.x[0];
        y[1] = cx.x[1];
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        let (w, u) = (cx.x[0], cx.x[1]);
        let fx = tire_force(w, u);
        let brake = cx.u(1) * (w / 0.5).tanh();
        dx[0] = (T_ENGINE * cx.u(0).clamp(0.0, 1.0) - brake - R * fx) / J;
        dx[1] = fx / MASS;
    }
}

fn ice_wheel(_p: &Params) -> Result<Box<dyn Block>, ParamError> {
    Ok(Box::new(IceWheel))
}

/// Full throttle for 5 s on ice with the TCS `params`; the right wheel rolls freely.
fn launch(params: Value) -> SimResult {
    let mut reg = registry();
    reg.register(BlockType {
        name: "IceWheel",
        category: "test",
        doc: "a driven wheel on ice",
        params: vec![],
        build: BlockBuild::Primitive(ice_wheel),
        ports_doc: "throttle[in], brake[in] -> w[out], u[out]",
    });
    let mut d = Diagram::new("ice_launch");
    d.add("pedal", "Constant", json!({"value": 1.0}));
    d.add("wheel", "IceWheel", json!({}));
    d.add("free", "Gain", json!({"k": 1.0 / R}));
    let mut p = json!({"radius": R});
    if let (Value::Object(m), Value::Object(e)) = (&mut p, params) {
        m.extend(e);
    }
    d.add("tcs", "Tcs", p);
    d.connect(&["pedal.y", "tcs.throttle_demand"]);
    d.connect(&["tcs.throttle", "wheel.throttle"]);
    d.connect(&["tcs.brake_left", "wheel.brake"]);
    d.connect(&["wheel.w", "tcs.w_left"]);
    d.connect(&["wheel.u", "tcs.speed", "free.u"]);
    d.connect(&["free.y", "tcs.w_right"]);
    d.log(&[
        "wheel.u",
        "tcs.slip_left",
        "tcs.cut",
        "tcs.brake_left",
        "tcs.cut_integral",
    ]);
    d.settings.stop_time = 5.0;
    let mut m = compile(&d, &reg).unwrap_or_else(|e| panic!("{e}"));
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    r
}

/// Mean and largest deviation from the target of the left slip over `t >= from`.
fn slip_after(r: &SimResult, from: f64) -> (f64, f64) {
    let k = r.get("tcs.slip_left").unwrap();
    let tail: Vec<f64> = r
        .time
        .iter()
        .zip(k)
        .filter(|(t, _)| **t >= from)
        .map(|(_, k)| *k)
        .collect();
    let mean = tail.iter().sum::<f64>() / tail.len() as f64;
    let dev = tail.iter().fold(0.0f64, |m, k| m.max((k - TARGET).abs()));
    (mean, dev)
}

#[test]
fn wheel_on_ice_settles_at_the_slip_target_with_tcs_and_spins_up_without() {
    let off = launch(json!({"enabled": 0}));
    let k_off = off.last("tcs.slip_left").unwrap();
    let du_off = off.last("wheel.u").unwrap() - U0;
    // 600 N·m against at most 0.3·400 = 120 N·m of grip: the wheel runs away.
    assert!(k_off > 10.0, "slip without TCS {k_off}");
    for mode in ["both", "engine", "brake"] {
        let on = launch(json!({"mode": mode}));
        let (mean, dev) = slip_after(&on, 2.0);
        let peak = on
            .get("tcs.slip_left")
            .unwrap()
            .iter()
            .fold(0.0f64, |m, k| m.max(*k));
        println!(
            "{mode}: mean slip {mean}, max deviation {dev} after 2 s, peak {peak}, off {k_off}"
        );
        // Integral action: no steady error while the speed rises slowly.
        assert!((mean - TARGET).abs() < 1e-3, "{mode}: mean slip {mean}");
        assert!(dev < 5e-3, "{mode}: slip strays {dev} from the target");
        // Held near the peak of the curve, the tire pushes about 400 N instead of the
        // ~60 N of a spinning one: the car gains several times the speed.
        let du_on = on.last("wheel.u").unwrap() - U0;
        println!("{mode}: speed gain {du_on} m/s against {du_off} m/s");
        assert!(du_on > 3.0 * du_off, "{mode}: {du_on} vs {du_off} m/s");
        let cut = on.get("tcs.cut").unwrap();
        assert!(cut.iter().all(|c| (0.0..=1.0).contains(c)));
        let xi = on.get("tcs.cut_integral").unwrap();
        assert!(xi.iter().all(|x| (-1e-6..=1.0 + 1e-6).contains(x)));
    }
}
