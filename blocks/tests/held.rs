//! Blocks held between events (`core/src/compile/held.rs`): a gear-shift schedule built
//! from steps, a sum and a table is evaluated at events only, and integrates exactly like
//! the piecewise-constant signal it is; a gain fed by a time-varying source is not held.

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram};
use serde_json::json;

#[test]
fn a_shift_schedule_of_steps_sum_and_table_is_held_and_integrates_exactly() {
    // level = 1 + step(1 s) + step(2.5 s) ∈ {1, 2, 3}; gear = table(level) = 0.5·level²
    // (breakpoints at the levels); ∫gear over 0..4 s = 0.5·(1·1 + 4·1.5 + 9·1.5) = 10.25.
    // ramp = 2·clock (time-varying: not held); ∫ramp = t² = 16 at 4 s.
    let mut d = Diagram::new("schedule");
    d.add("base", "Constant", json!({"value": 1.0}));
    d.add("s1", "Step", json!({"time": 1.0}));
    d.add("s2", "Step", json!({"time": 2.5}));
    d.add("level", "Sum", json!({"signs": "+++"}));
    d.add(
        "gear",
        "Lookup1D",
        json!({"table": [[1.0, 0.5], [2.0, 2.0], [3.0, 4.5]]}),
    );
    d.add("i_gear", "Integrator", json!({}));
    d.add("clock", "Clock", json!({}));
    d.add("ramp", "Gain", json!({"k": 2.0}));
    d.add("i_ramp", "Integrator", json!({}));
    d.connect(&["base.y", "level.u1"]);
    d.connect(&["s1.y", "level.u2"]);
    d.connect(&["s2.y", "level.u3"]);
    d.connect(&["level.y", "gear.u"]);
    d.connect(&["gear.y", "i_gear.u"]);
    d.connect(&["clock.y", "ramp.u"]);
    d.connect(&["ramp.y", "i_ramp.u"]);
    d.log(&["i_gear.y", "i_ramp.y", "gear.y"]);
    d.settings.stop_time = 4.0;
    let mut m = compile(&d, &registry()).expect("compile");
    // Held: base, s1, s2 (constant outputs), level and gear (pure, fed by held blocks).
    let summary = m.plan().summary();
    assert!(summary.contains("5 blocks at events only"), "{summary}");
    let r = m.run();
    assert_eq!(r.status.as_str(), "completed", "{}", r.message);
    let last = |v: &str| r.last(v).expect(v);
    assert!(
        (last("i_gear.y") - 10.25).abs() < 1e-9,
        "{}",
        last("i_gear.y")
    );
    assert!(
        (last("i_ramp.y") - 16.0).abs() < 1e-9,
        "{}",
        last("i_ramp.y")
    );
    assert_eq!(last("gear.y"), 4.5);
    // A second run from a later start time holds the schedule of that start (1 + 1 + 1).
    let mut s = m.settings().clone();
    s.start_time = 3.0;
    s.stop_time = 3.5;
    let r2 = m.run_with(&s);
    assert_eq!(r2.value_at("gear.y", 3.0), Some(4.5));
}
