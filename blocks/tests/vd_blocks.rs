//! Equations of the vehicle-dynamics blocks evaluated on their own (`Probe`): Steering's
//! Ackermann formula, Aero's drag and downforce, the WheelCollider's contact law and
//! parameter checks; the Abs controller idle without demand.

use drivelink_blocks::registry;
use drivelink_blocks::vehicle::friction_curve;
use drivelink_core::compile::{resolve_params, Scope};
use drivelink_core::frame::FRAME_STATES;
use drivelink_core::probe::Probe;
use drivelink_core::{compile, Block, BlockBuild, Diagram, FrameState, RunStatus};
use serde_json::{json, Value};

fn build(type_name: &str, params: Value) -> Result<Box<dyn Block>, String> {
    let reg = registry();
    let t = reg.get(type_name).expect("registered");
    let Value::Object(raw) = params else { panic!() };
    let p = resolve_params("b", type_name, &t.params, &raw, &Scope::new()).map_err(|e| {
        e.iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    match &t.build {
        BlockBuild::Primitive(f) => f(&p).map_err(|e| e.to_string()),
        _ => panic!("not primitive"),
    }
}

#[test]
fn steering_follows_the_ackermann_cotangent_law() {
    let (l, t, ratio) = (2.7, 1.6, 16.0);
    for ack in [0.0, 0.5, 1.0] {
        let mut b = build(
            "Steering",
            json!({"ratio": ratio, "wheelbase": l, "track": t, "ackermann": ack}),
        )
        .unwrap();
        let mut p = Probe::new(b.as_mut());
        for wheel in [-4.0, -0.5, 0.3, 2.0, 6.0] {
            let y = p.inputs(&[wheel]).outputs();
            let d = wheel / ratio;
            let k = ack * t / (2.0 * l);
            let cot = |x: f64| x.cos() / x.sin();
            assert!(
                (cot(y[0]) - (cot(d) - k)).abs() < 1e-12,
                "left {wheel} {ack}"
            );
            assert!(
                (cot(y[1]) - (cot(d) + k)).abs() < 1e-12,
                "right {wheel} {ack}"
            );
            // Same sign as the command; the inner wheel turns more with Ackermann.
            assert!(y[0].signum() == d.signum() && y[1].signum() == d.signum());
            if ack > 0.0 {
                let (inner, outer) = if d > 0.0 { (y[0], y[1]) } else { (y[1], y[0]) };
                assert!(inner.abs() > outer.abs());
            }
        }
        assert_eq!(p.inputs(&[0.0]).outputs(), vec![0.0, 0.0]);
    }
}

/// A body state at the origin, level, heading `yaw`, world velocity `v`, body rates `w`.
fn state(yaw: f64, v: [f64; 3], w: [f64; 3]) -> [f64; FRAME_STATES] {
    let mut s = FrameState::initial([0.0, 0.0, 0.5], yaw, [0.0; 3], w);
    s[7..10].copy_from_slice(&v);
    s
}

#[test]
fn aero_drag_opposes_the_air_velocity_and_downforce_presses_down() {
    let (cd_a, rho, cl_a) = (0.7, 1.2, 0.3);
    let center = [1.0, 0.0, 0.2];
    let mut b = build(
        "Aero",
        json!({"drag_area": cd_a, "air_density": rho, "lift_area": cl_a, "center": center}),
    )
    .unwrap();
    let mut p = Probe::new(b.as_mut());
    // Moving at 30 m/s along world x with a yaw rate: the point's velocity includes ω × r.
    let (u, r) = (30.0, 0.5);
    p.frame_state(0, &state(0.0, [u, 0.0, 0.0], [0.0, 0.0, r]));
    let (_, loads, power) = p.forces_and_loads();
    let v = [u, r * center[0], 0.0];
    let speed = (v[0] * v[0] + v[1] * v[1]).sqrt();
    let drag = [
        -0.5 * rho * cd_a * speed * v[0],
        -0.5 * rho * cd_a * speed * v[1],
    ];
    let down = 0.5 * rho * cl_a * speed * speed;
    assert!((loads[0] - drag[0]).abs() < 1e-9 && (loads[1] - drag[1]).abs() < 1e-9);
    assert!((loads[2] + down).abs() < 1e-9);
    // Power = drag · v (downforce is perpendicular to a level point velocity).
    assert!((power - (drag[0] * v[0] + drag[1] * v[1])).abs() < 1e-9);
    // Moment about the centre of mass: r × F in body axes (level body, yaw 0).
    let m_y = center[2] * drag[0] - center[0] * (-down);
    assert!((loads[4] - m_y).abs() < 1e-9, "{} vs {m_y}", loads[4]);
}

#[test]
fn wheel_collider_contact_law_pure_and_combined_slip() {
    // A level body with its centre of mass at 0.5 m: the mount (center) is 0.3 m above
    // the ground; radius 0.3, travel 0.3.
    let params = json!({"center": [1.0, 0.5, -0.2], "radius": 0.3, "suspension_distance": 0.3,
        "spring": 20000.0, "damper": 1000.0, "target_position": 0.5});
    let mut b = build("WheelCollider", params).unwrap();
    let mut p = Probe::new(b.as_mut());
    // Body at rest: compression = 0.3 + 0.3 − 0.3 = 0.3 (full, no bump beyond), load
    // spring·(c − 0.15) = 3000 N.
    p.frame_state(0, &state(0.0, [0.0; 3], [0.0; 3]));
    // Inputs: brake 0, steer 0, mu_scale 1.
    p.speeds(&[0.0, 0.0]).inputs(&[0.0, 0.0, 1.0]);
    let y = p.outputs();
    assert!((y[2] - 3000.0).abs() < 1e-9, "fz {}", y[2]);
    // Pure forward slip sx = r·w − u: the forward curve exactly.
    let (u, sx) = (10.0, 0.3);
    p.frame_state(0, &state(0.0, [u, 0.0, 0.0], [0.0; 3]));
    p.speeds(&[0.0, (u + sx) / 0.3]);
    let (f, loads, _) = p.forces_and_loads();
    let fx = friction_curve(sx, 0.4, 1.0, 0.8, 0.5) * 3000.0;
    assert!((loads[0] - fx).abs() < 1e-9, "{} vs {fx}", loads[0]);
    assert!(loads[1].abs() < 1e-9);
    // The hub receives −Fx·r − damping·w.
    let w = (u + sx) / 0.3;
    assert!((f[1] - (-fx * 0.3 - 0.25 * w)).abs() < 1e-9);
    // Combined: a locked wheel sliding mostly forward has almost no side force; with the
    // same lateral slip a rolling wheel has the full sideways curve.
    let sy = 0.1;
    p.frame_state(0, &state(0.0, [u, sy, 0.0], [0.0; 3]));
    p.speeds(&[0.0, u / 0.3]);
    let (_, rolling, _) = p.forces_and_loads();
    let fy = -friction_curve(sy, 0.2, 1.0, 0.5, 0.75) * 3000.0;
    assert!((rolling[1] - fy).abs() < 1e-9, "{} vs {fy}", rolling[1]);
    p.speeds(&[0.0, 0.0]);
    let (_, locked, _) = p.forces_and_loads();
    assert!(
        locked[1].abs() < 0.03 * fy.abs(),
        "locked side force {}",
        locked[1]
    );
    // Circle: ρ = √((−u/Sx)² + (sy/Sy)²), Fx = (sx/Sx)/ρ·fx(ρ·Sx)·fz.
    let (nx, ny) = (-u / 0.4, sy / 0.2);
    let rho = nx.hypot(ny);
    let fx_c = nx / rho * friction_curve(rho * 0.4, 0.4, 1.0, 0.8, 0.5) * 3000.0;
    let fy_c = -ny / rho * friction_curve(rho * 0.2, 0.2, 1.0, 0.5, 0.75) * 3000.0;
    assert!((locked[0] - fx_c).abs() < 1e-9 && (locked[1] - fy_c).abs() < 1e-9);
    // The outputs (computed without the tire curve) carry the same slips and load as the
    // contact behind the forces: forward_slip = r·w − u, sideways_slip, fz, w, peak_slip.
    let y = p.outputs();
    assert!(
        (y[0] + u).abs() < 1e-12 && (y[1] - sy).abs() < 1e-12,
        "{y:?}"
    );
    assert!(
        (y[2] - 3000.0).abs() < 1e-9 && y[3] == 0.0 && y[4] == 0.4,
        "{y:?}"
    );
}

#[test]
fn wheel_collider_in_the_air_transmits_nothing_and_bad_curves_are_named() {
    let mut b = build("WheelCollider", json!({"center": [0.0, 0.0, 0.0]})).unwrap();
    let mut p = Probe::new(b.as_mut());
    let mut s = state(0.0, [5.0, 0.0, 0.0], [0.0; 3]);
    s[2] = 2.0;
    p.frame_state(0, &s).speeds(&[0.0, 3.0]);
    let (_, loads, _) = p.forces_and_loads();
    assert!(loads.iter().all(|&l| l == 0.0));
    assert_eq!(p.outputs()[2], 0.0);
    let e = build(
        "WheelCollider",
        json!({"center": [0, 0, 0], "forward_friction": {"extremum_slip": 0.9}}),
    )
    .err()
    .unwrap();
    assert!(
        e.contains("forward_friction") && e.contains("asymptote_slip must be > extremum_slip"),
        "{e}"
    );
    // The 0.8 came from the default, which the message says (the key was not given).
    assert!(e.contains("got 0.8 (the default of asymptote_slip"), "{e}");
    let e = build(
        "WheelCollider",
        json!({"center": [0, 0, 0], "sideways_friction": {"extremum": 0.9}}),
    )
    .err()
    .unwrap();
    assert!(
        e.contains("unknown key 'extremum'") && e.contains("extremum_slip"),
        "{e}"
    );
    let e = build("WheelCollider", json!({"center": [0, 0]}))
        .err()
        .unwrap();
    assert!(e.contains("center"), "{e}");
}

#[test]
fn abs_is_idle_without_demand_and_cycles_only_while_braking() {
    // Demand 0 until 0.1 s, a ramp to 100 N·m by 0.2 s, held, back to 0 at 0.35 s; the
    // slip is far beyond the trigger band throughout. Idle (no demand) the valve is open
    // and there are no cycle events; the rising demand wakes the controller (a located
    // state event just after 0.1 s), the valve stays open until the cycle instant 0.11 s,
    // then every cycle finds the slip too high (ratio min_pressure_ratio); the cycle at
    // 0.35 s finds no demand and makes it idle again.
    let mut d = Diagram::new("abs_idle");
    d.add(
        "demand",
        "SignalBuilder",
        json!({"points": [[0.0, 0.0], [0.1, 0.0], [0.2, 100.0], [0.3, 100.0], [0.35, 0.0], [1.0, 0.0]]}),
    );
    d.add("slip", "Constant", json!({"value": 2.0}));
    d.add(
        "abs",
        "Abs",
        json!({"enabled": true, "peak_slip": 0.4, "min_pressure_ratio": 0.25}),
    );
    d.connect(&["demand.y", "abs.demand"]);
    d.connect(&["slip.y", "abs.slip"]);
    d.log(&["abs.ratio", "abs.active", "abs.torque", "demand.y"]);
    d.settings.stop_time = 1.0;
    let r = compile(&d, &registry())
        .unwrap_or_else(|e| panic!("{e}"))
        .run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    let ratio = r.get("abs.ratio").unwrap();
    let active = r.get("abs.active").unwrap();
    let torque = r.get("abs.torque").unwrap();
    let demand = r.get("demand.y").unwrap();
    for (i, &t) in r.time.iter().enumerate() {
        // The second of an instant's two records is its right value; the first (left)
        // belongs to the time before it.
        let right = i > 0 && r.time[i - 1] == t;
        let cycling = if right {
            t > 0.105 && t < 0.345
        } else {
            t > 0.11 && t <= 0.35
        };
        let expect = if cycling { 0.25 } else { 1.0 };
        assert_eq!(ratio[i], expect, "ratio at t = {t}");
        assert_eq!(
            active[i],
            if cycling { 1.0 } else { 0.0 },
            "active at t = {t}"
        );
        assert_eq!(torque[i], demand[i] * expect, "torque at t = {t}");
    }
    // Event instants (recorded twice): the cycles 0.11 … 0.35 s while braking, none while
    // idle (the wake just after 0.1 s and the builder's breakpoints aside).
    let instants: Vec<f64> = r
        .time
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    let cycles: Vec<f64> = instants
        .iter()
        .copied()
        .filter(|t| (t * 100.0 - (t * 100.0).round()).abs() < 1e-9 && *t > 0.105)
        .collect();
    assert_eq!(cycles.len(), 25, "cycle instants {cycles:?}");
    assert!(
        instants.iter().all(|&t| t <= 0.35 + 1e-12 || t == 1.0),
        "events while idle: {instants:?}"
    );
    assert!(
        instants.iter().any(|&t| t > 0.1 && t < 0.1 + 1e-6),
        "no wake event just after 0.1 s: {instants:?}"
    );
}
