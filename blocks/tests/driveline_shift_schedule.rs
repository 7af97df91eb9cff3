//! `ShiftSchedule` against its lines: on a speed ramp the shifts happen at the located
//! instants the speed meets each line (linear in the throttle between breakpoints), the
//! downshifts on the way back at the lower lines, a throttle step kicks down (skipping a
//! gear), the wait after a shift holds the next one to the instant it ends, and bad lines
//! are refused naming the parameter.

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, EventTag, SimResult};
use serde_json::{json, Value};

mod common;
use common::{close, run_ok as run};

/// Lines of a 4-speed schedule in km/h at throttle 0.2 and 1.0.
fn schedule(extra: Value) -> Value {
    let mut p = json!({
        "throttle": [0.2, 1.0],
        "upshift": [[15, 30], [30, 60], [50, 90]],
        "downshift": [[8, 20], [20, 45], [35, 70]],
        "speed_unit": "km/h",
    });
    if let (Some(p), Some(e)) = (p.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            p.insert(k.clone(), v.clone());
        }
    }
    p
}

/// The schedule reading a speed `v` (Ramp up then down) and a throttle `th`.
fn ramp_model(up_rate: f64, throttle: Value, extra: Value) -> Diagram {
    let mut d = Diagram::new("shift_ramp");
    // Up at `up_rate` m/s² for 10 s, then back down to 0 over the next 10 s.
    d.add(
        "up",
        "Ramp",
        json!({"start_time": 0.0, "duration": 10.0, "height": up_rate * 10.0}),
    );
    d.add(
        "down",
        "Ramp",
        json!({"start_time": 10.0, "duration": 10.0, "height": -up_rate * 10.0}),
    );
    d.add("v", "Sum", json!({"signs": "++"}));
    d.add("th", "SignalBuilder", json!({ "points": throttle }));
    d.add("tcu", "ShiftSchedule", schedule(extra));
    d.connect(&["up.y", "v.u1"]);
    d.connect(&["down.y", "v.u2"]);
    d.connect(&["v.y", "tcu.v"]);
    d.connect(&["th.y", "tcu.throttle"]);
    d.log(&["tcu.gear", "v.y", "tcu.shifts"]);
    d.settings.stop_time = 20.0;
    d
}

/// The shifts logged by `tcu`: (time, from, to).
fn shifts(r: &SimResult) -> Vec<(f64, u32, u32)> {
    r.events_of("tcu", EventTag::Shift)
        .map(|e| {
            let mut it = e.detail.split_whitespace();
            let from = it.nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
            let to = it.nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
            (e.time, from, to)
        })
        .collect()
}

#[test]
fn shifts_happen_where_the_speed_meets_the_lines() {
    // 9 m/s² for 10 s (to 90 m/s = 324 km/h), throttle 0.6: halfway between the
    // breakpoints, so each line is the mean of its two entries.
    let a = 9.0;
    let (_, r) = run(&ramp_model(a, json!([[0, 0.6], [20, 0.6]]), json!({})));
    let kmh = 1.0 / 3.6;
    let up = [22.5 * kmh, 45.0 * kmh, 70.0 * kmh];
    let down = [14.0 * kmh, 32.5 * kmh, 52.5 * kmh];
    let mut expected: Vec<(f64, u32, u32)> = Vec::new();
    for (k, v) in up.iter().enumerate() {
        expected.push((v / a, k as u32 + 1, k as u32 + 2));
    }
    // On the way down v = a·(20 − t): the downshift at the line's speed.
    for (k, v) in down.iter().enumerate().rev() {
        expected.push((20.0 - v / a, k as u32 + 2, k as u32 + 1));
    }
    let got = shifts(&r);
    assert_eq!(
        got.iter().map(|s| (s.1, s.2)).collect::<Vec<_>>(),
        expected.iter().map(|s| (s.1, s.2)).collect::<Vec<_>>(),
        "{got:?}"
    );
    for (g, e) in got.iter().zip(&expected) {
        close(g.0, e.0, 1e-9, "shift instant");
    }
    let gear = r.get("tcu.gear").expect("gear");
    assert_eq!(gear.first().copied(), Some(1.0));
    assert_eq!(gear.last().copied(), Some(1.0));
    assert_eq!(
        r.get("tcu.shifts").and_then(|s| s.last()).copied(),
        Some(6.0)
    );
}

#[test]
fn a_throttle_step_kicks_down_past_a_gear() {
    // Speed t m/s up to 10 s, then 20 − t; throttle 0.2: 2nd from 15 km/h (4.17 s), 3rd
    // from 30 km/h (8.33 s). Full throttle at 11 s (v = 9 m/s = 32.4 km/h): the 3 -> 2
    // line moves to 45 km/h, above the speed: 3 -> 2 at the step; the 2 -> 1 line (20 km/h)
    // stays below it.
    let mut d = ramp_model(
        1.0,
        json!([[0, 0.2], [11, 0.2], [11, 1.0], [20, 1.0]]),
        json!({}),
    );
    d.settings.stop_time = 11.5;
    let (_, r) = run(&d);
    let got = shifts(&r);
    let kmh = 1.0 / 3.6;
    assert_eq!(got.len(), 3, "{got:?}");
    close(got[0].0, 15.0 * kmh, 1e-9, "1 -> 2");
    close(got[1].0, 30.0 * kmh, 1e-9, "2 -> 3");
    assert_eq!((got[2].1, got[2].2), (3, 2), "{got:?}");
    close(got[2].0, 11.0, 1e-12, "kickdown at the throttle step");
    // A deeper kickdown skips a gear: with the 2 -> 1 line at 33 km/h at full throttle,
    // full throttle at 9 s (32.4 km/h in 3rd) goes from 3rd to 1st in one event.
    let mut d = ramp_model(
        1.0,
        json!([[0, 0.2], [9, 0.2], [9, 1.0], [20, 1.0]]),
        json!({"upshift": [[15, 40], [30, 60], [50, 90]], "downshift": [[8, 33], [20, 45], [35, 70]]}),
    );
    d.settings.stop_time = 9.5;
    let (_, r) = run(&d);
    let got = shifts(&r);
    assert_eq!(
        got.last().map(|s| (s.1, s.2)),
        Some((3, 1)),
        "one event from 3rd to 1st: {got:?}"
    );
}

#[test]
fn the_wait_after_a_shift_holds_the_next_one_until_it_ends() {
    // 9 m/s² at throttle 0.2: the 1->2 line at 15 km/h (0.463 s) and 2->3 at 30 km/h
    // (0.926 s); with a 1 s wait the second shift comes at 1.463 s (47.4 km/h: below the
    // 3->4 line at 50 km/h), and 3->4 when the next wait ends, at 2.463 s (79.8 km/h).
    let a = 9.0;
    let kmh = 1.0 / 3.6;
    let (_, r) = run(&ramp_model(
        a,
        json!([[0, 0.2], [20, 0.2]]),
        json!({"min_time": 1.0}),
    ));
    let got = shifts(&r);
    close(got[0].0, 15.0 * kmh / a, 1e-9, "1 -> 2");
    close(got[1].0, got[0].0 + 1.0, 1e-12, "2 -> 3 when the wait ends");
    assert_eq!((got[1].1, got[1].2), (2, 3));
    close(
        got[2].0,
        got[1].0 + 1.0,
        1e-12,
        "3 -> 4 after the next wait",
    );
    assert_eq!((got[2].1, got[2].2), (3, 4));
}

#[test]
fn without_downshift_lines_the_upshift_lines_scaled_give_them() {
    // One speed per row (lines independent of the throttle), downshift at 0.5 of them:
    // up at 20, 40, 60 km/h on the ramp, down at 30, 20, 10 km/h on the way back.
    let extra = json!({"upshift": [[20], [40], [60]], "downshift_ratio": 0.5});
    let mut v = schedule(extra);
    v.as_object_mut().unwrap().remove("downshift");
    let mut d = ramp_model(9.0, json!([[0, 0.6], [20, 0.6]]), json!({}));
    d.blocks
        .iter_mut()
        .find(|b| b.name == "tcu")
        .unwrap()
        .params = v.as_object().unwrap().clone();
    let (_, r) = run(&d);
    let kmh = 1.0 / 3.6;
    let got = shifts(&r);
    let want = [
        (20.0 * kmh / 9.0, 1, 2),
        (40.0 * kmh / 9.0, 2, 3),
        (60.0 * kmh / 9.0, 3, 4),
        (20.0 - 30.0 * kmh / 9.0, 4, 3),
        (20.0 - 20.0 * kmh / 9.0, 3, 2),
        (20.0 - 10.0 * kmh / 9.0, 2, 1),
    ];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!((g.1, g.2), (w.1, w.2), "{got:?}");
        close(g.0, w.0, 1e-9, "shift instant");
    }
}

#[test]
fn lines_without_hysteresis_are_refused_naming_the_row() {
    let reg = registry();
    let mut d = Diagram::new("bad");
    d.add(
        "tcu",
        "ShiftSchedule",
        schedule(json!({"downshift": [[8, 20], [30, 45], [35, 70]]})),
    );
    let err = match compile(&d, &reg) {
        Ok(_) => panic!("lines without hysteresis compiled"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("tcu") && err.contains("downshift") && err.contains("row 1"),
        "{err}"
    );
    let mut d = Diagram::new("bad");
    d.add(
        "tcu",
        "ShiftSchedule",
        schedule(json!({"upshift": [[15, 30, 40], [30, 60], [50, 90]]})),
    );
    let err = match compile(&d, &reg) {
        Ok(_) => panic!("lines without hysteresis compiled"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("upshift") && err.contains("row 0"), "{err}");
}
