//! Mesh efficiency on `PlanetaryGear` and the `OneWayClutch`'s clutch (its `f` input),
//! against analytic solutions.

use drivelink_core::{Diagram, EventTag};
use serde_json::json;

mod common;
use common::{close, run_completed as run};

#[test]
fn planetary_gear_with_fixed_carrier_transmits_eta_of_the_power_in_both_directions() {
    // Carrier fixed: sun → ring is a gear of ratio w_sun/w_ring = −g. The driving side
    // delivers η of its power: with the sun driving (torque ta on J_s, load tb on J_r),
    // a_ring = (i·η·ta + tb)/(J_r + η·i²·J_s), i = −g; with the ring driving,
    // a_ring = (ta + η·tb/i)/(J_s·i + η·J_r/i) (the same law seen from the other side).
    let (g, eta, js, jr) = (2.5, 0.9, 0.05, 0.4);
    let i = -g;
    for (ta, tb, sun_drives) in [(10.0, 0.0, true), (0.0, 30.0, false)] {
        let mut d = Diagram::new("planetary");
        d.add("ta", "Constant", json!({ "value": ta }));
        d.add("tb", "Constant", json!({ "value": tb }));
        d.add("srcS", "TorqueSource", json!({}));
        d.add("srcR", "TorqueSource", json!({}));
        d.add("Js", "Inertia", json!({ "J": js }));
        d.add("Jr", "Inertia", json!({ "J": jr }));
        d.add("ground", "Fixed", json!({}));
        d.add(
            "pg",
            "PlanetaryGear",
            json!({"ratio": g, "efficiency": eta}),
        );
        d.connect(&["ta.y", "srcS.tau"]);
        d.connect(&["tb.y", "srcR.tau"]);
        d.connect(&["srcS.flange", "Js.flange", "pg.sun"]);
        d.connect(&["srcR.flange", "Jr.flange", "pg.ring"]);
        d.connect(&["ground.flange", "pg.carrier"]);
        d.log(&["Js.w", "Jr.w", "pg.power_loss"]);
        d.settings.stop_time = 1.0;
        let (mut m, r) = run(&d);
        let a_ring = if sun_drives {
            (i * eta * ta + tb) / (jr + eta * i * i * js)
        } else {
            (ta + eta * tb / i) / (js * i + eta * jr / i)
        };
        close(r.last("Jr.w").unwrap(), a_ring, 1e-9, "ring speed at 1 s");
        close(
            r.last("Js.w").unwrap(),
            i * a_ring,
            1e-9,
            "sun speed at 1 s",
        );
        // Loss = (1 − η)·(mesh input power), the input power being the driving torque's
        // power less the driving inertia's kinetic-energy rate.
        let p_in = if sun_drives {
            (ta - js * i * a_ring) * i * a_ring
        } else {
            (tb - jr * a_ring) * a_ring
        };
        close(
            r.last("pg.power_loss").unwrap(),
            (1.0 - eta) * p_in,
            1e-8,
            "loss power",
        );
        let a = m.energy_audit();
        assert!(a.relative_residual.abs() < 1e-9, "{a:#?}");
    }
}

#[test]
fn one_way_clutch_overrunning_against_its_clutch_locks_at_delta_w_j_over_t() {
    // w_rel = w_b − w_a > 0: the freewheel overruns and the clutch (f = 1) slides with
    // T = mu·cgeo·fn_max; the two inertias lock after Δω·J/T, J = J_a·J_b/(J_a + J_b).
    let (ja, jb, w0, mu, fn_max) = (1.0, 2.0, 30.0, 0.4, 50.0);
    let mut d = Diagram::new("owc_clutch");
    d.add("Ja", "Inertia", json!({ "J": ja }));
    d.add("Jb", "Inertia", json!({ "J": jb, "w0": w0 }));
    d.add("owc", "OneWayClutch", json!({ "mu": mu, "fn_max": fn_max }));
    d.add("f", "Constant", json!({ "value": 1.0 }));
    d.connect(&["Ja.flange", "owc.flange_a"]);
    d.connect(&["owc.flange_b", "Jb.flange"]);
    d.connect(&["f.y", "owc.f"]);
    d.log(&["Ja.w", "Jb.w", "owc.mode"]);
    d.settings.stop_time = 3.0;
    let (mut m, r) = run(&d);
    let t = mu * fn_max;
    let j = ja * jb / (ja + jb);
    let locks: Vec<f64> = r.events_of("owc", EventTag::Lock).map(|e| e.time).collect();
    assert_eq!(locks.len(), 1, "{:?}", r.events);
    close(locks[0], w0 * j / t, 1e-7, "lock time");
    let wf = jb * w0 / (ja + jb);
    close(r.last("Ja.w").unwrap(), wf, 1e-9, "common speed");
    close(r.last("Jb.w").unwrap(), wf, 1e-9, "common speed");
    let a = m.energy_audit();
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
}
