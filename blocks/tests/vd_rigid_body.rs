//! The `frame` port kind and `RigidBody`: free fall, torque-free rotation (Dzhanibekov),
//! compile-time errors.

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, Error, RunStatus, SimResult, G};
use serde_json::json;

fn run(d: &Diagram) -> (SimResult, drivelink_core::EnergyAudit) {
    let mut m = compile(d, &registry()).unwrap_or_else(|e| panic!("compile failed: {e}"));
    let r = m.run();
    assert_ne!(r.status, RunStatus::Failed, "run failed: {}", r.message);
    let a = m.energy_audit();
    (r, a)
}

#[test]
fn free_fall_is_z0_minus_half_g_t_squared() {
    let mut d = Diagram::new("fall");
    d.add(
        "b",
        "RigidBody",
        json!({"m": 2.0, "inertia": [1.0, 2.0, 3.0], "z0": 100.0, "v0": 3.0}),
    );
    d.log(&["b.x", "b.z", "b.vz", "b.az", "b.u", "b.speed"]);
    d.settings.stop_time = 3.0;
    d.settings.output_interval = Some(0.1);
    let (r, audit) = run(&d);
    let t = &r.time;
    let z = r.get("b.z").unwrap();
    let x = r.get("b.x").unwrap();
    let az = r.get("b.az").unwrap();
    assert!(t.len() > 20);
    for i in 0..t.len() {
        let exact = 100.0 - 0.5 * G * t[i] * t[i];
        assert!(
            (z[i] - exact).abs() < 1e-9,
            "t = {}: z = {} vs {exact}",
            t[i],
            z[i]
        );
        assert!((x[i] - 3.0 * t[i]).abs() < 1e-9);
        assert!((az[i] + G).abs() < 1e-12);
    }
    // Potential energy turns into kinetic energy: the audit closes.
    assert!(audit.relative_residual.abs() < 1e-9, "{audit:?}");
}

/// World axes rotation matrix from Z-Y-X Euler angles.
fn rot(roll: f64, pitch: f64, yaw: f64) -> [[f64; 3]; 3] {
    let (sr, cr) = roll.sin_cos();
    let (sp, cp) = pitch.sin_cos();
    let (sy, cy) = yaw.sin_cos();
    [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]
}

#[test]
fn intermediate_axis_flips_with_constant_angular_momentum_and_energy() {
    let inertia = [1.0, 2.0, 3.0];
    let mut d = Diagram::new("dzhanibekov");
    d.add(
        "b",
        "RigidBody",
        json!({"m": 1.0, "inertia": inertia, "z0": 0.0, "p0": 1e-3, "q0": 5.0, "r0": 0.0}),
    );
    d.log(&["b.p", "b.q", "b.r", "b.roll", "b.pitch", "b.yaw", "b.z"]);
    d.settings.stop_time = 10.0;
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-12;
    d.settings.output_interval = Some(0.01);
    let (r, _) = run(&d);
    let g = |n: &str| r.get(n).unwrap().to_vec();
    let (p, q, rr) = (g("b.p"), g("b.q"), g("b.r"));
    let (ro, pi, ya) = (g("b.roll"), g("b.pitch"), g("b.yaw"));
    let l_world = |i: usize| {
        let m = rot(ro[i], pi[i], ya[i]);
        let lb = [inertia[0] * p[i], inertia[1] * q[i], inertia[2] * rr[i]];
        [0, 1, 2].map(|a| m[a][0] * lb[0] + m[a][1] * lb[1] + m[a][2] * lb[2])
    };
    let ke = |i: usize| {
        0.5 * (inertia[0] * p[i] * p[i] + inertia[1] * q[i] * q[i] + inertia[2] * rr[i] * rr[i])
    };
    let (l0, e0) = (l_world(0), ke(0));
    let l_norm = (l0[0] * l0[0] + l0[1] * l0[1] + l0[2] * l0[2]).sqrt();
    let (mut min_q, mut dl, mut de): (f64, f64, f64) = (f64::INFINITY, 0.0, 0.0);
    for (i, &qi) in q.iter().enumerate() {
        let l = l_world(i);
        for a in 0..3 {
            dl = dl.max((l[a] - l0[a]).abs() / l_norm);
        }
        de = de.max((ke(i) - e0).abs() / e0);
        min_q = min_q.min(qi);
    }
    println!("max relative drift: |L| {dl:.2e}, KE {de:.2e}");
    // Solver tolerance 1e-10 relative per step, over 1,000 output points.
    assert!(
        dl < 1e-6,
        "world angular momentum drifted by {dl:.2e} of |L|"
    );
    assert!(de < 1e-7, "kinetic energy drifted by {de:.2e}");
    // The spin about the intermediate axis reverses (the flip).
    assert!(min_q < -4.9, "no flip: min q = {min_q}");
}

#[test]
fn frame_without_mass_is_a_named_error() {
    let mut d = Diagram::new("nomass");
    d.add("wheel", "WheelCollider", json!({"center": [1.0, 0.8, 0.0]}));
    let e = compile(&d, &registry()).err().expect("must fail");
    let msg = e.to_string();
    assert!(
        matches!(e, Error::FrameWithoutMass { .. }) || msg.contains("wheel.body"),
        "{msg}"
    );
    assert!(msg.contains("frame 'wheel.body' has no mass"), "{msg}");
}

#[test]
fn frame_joined_to_a_shaft_is_a_kind_mismatch() {
    let mut d = Diagram::new("mismatch");
    d.add(
        "b",
        "RigidBody",
        json!({"m": 1.0, "inertia": [1.0, 1.0, 1.0], "z0": 1.0}),
    );
    d.add("j", "Inertia", json!({"J": 1.0}));
    d.connect(&["b.frame", "j.flange"]);
    let e = compile(&d, &registry()).err().expect("must fail");
    let msg = e.to_string();
    assert!(
        msg.contains("b.frame [frame]") && msg.contains("[rot]"),
        "{msg}"
    );
}
