//! `Lookup2D` (bilinear interpolation, extrapolation, axis checks) and the `Engine`'s
//! optional features: torque map, friction, idle controller, stall, crank inertia.

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, Error, EventTag};
use serde_json::{json, Value};

mod common;
use common::{close, run_completed as run};

/// A bilinear function: exactly reproduced by bilinear interpolation on any grid.
fn f(x: f64, y: f64) -> f64 {
    1.5 + 2.0 * x - 0.5 * y + 0.25 * x * y
}

fn lookup(u1: f64, u2: f64, extrapolate: &str) -> Diagram {
    let xs = [0.0, 1.0, 3.0];
    let ys = [-1.0, 2.0, 2.5, 4.0];
    let table: Vec<Vec<f64>> = xs
        .iter()
        .map(|&x| ys.iter().map(|&y| f(x, y)).collect())
        .collect();
    let mut d = Diagram::new("lookup2d");
    d.add("a", "Constant", json!({ "value": u1 }));
    d.add("b", "Constant", json!({ "value": u2 }));
    d.add(
        "lut",
        "Lookup2D",
        json!({"x": xs, "y": ys, "table": table, "extrapolate": extrapolate}),
    );
    d.connect(&["a.y", "lut.u1"]);
    d.connect(&["b.y", "lut.u2"]);
    d.log(&["lut.y"]);
    d.settings.stop_time = 0.01;
    d
}

#[test]
fn lookup2d_is_exact_for_a_bilinear_function_inside_the_grid() {
    for (u, v) in [
        (0.0, -1.0),
        (0.5, 0.0),
        (2.2, 2.3),
        (3.0, 4.0),
        (1.0, 2.5),
        (2.9, 3.1),
    ] {
        let (_, r) = run(&lookup(u, v, "hold"));
        close(
            r.last("lut.y").unwrap(),
            f(u, v),
            1e-12,
            &format!("({u}, {v})"),
        );
    }
}

#[test]
fn lookup2d_holds_edges_or_extends_edge_cells_linearly() {
    // Hold: the nearest edge value.
    let (_, r) = run(&lookup(5.0, -3.0, "hold"));
    close(r.last("lut.y").unwrap(), f(3.0, -1.0), 1e-12, "hold");
    // Linear: the edge cells' bilinear form continues (exact for a bilinear function).
    let (_, r) = run(&lookup(5.0, -3.0, "linear"));
    close(r.last("lut.y").unwrap(), f(5.0, -3.0), 1e-12, "linear");
}

/// Kinks of the interpolant are events: `∫ Lookup2D(t, t/2) dt` over a table that is
/// bilinear only cell by cell is piecewise polynomial in `t`, which Dopri5 integrates exactly
/// when no step straddles a cell edge. At a loose rtol (1e-3, long steps) the integral still
/// matches the closed form (Simpson on each piece between kinks) to round-off, and the
/// solver stopped at every edge crossing.
#[test]
fn lookup2d_cell_edges_are_located_events_so_steps_never_straddle_a_kink() {
    let xs = [0.0, 0.7, 1.3, 2.2, 3.0];
    let ys = [0.0, 0.4, 0.9, 1.5];
    let z = |i: usize, j: usize| ((i * 7 + j * 3) % 5) as f64 - 0.3 * (i * j) as f64;
    let table: Vec<Vec<f64>> = (0..xs.len())
        .map(|i| (0..ys.len()).map(|j| z(i, j)).collect())
        .collect();
    let stop = 2.9;
    let mut d = Diagram::new("lookup2d_kinks");
    d.add(
        "t",
        "Ramp",
        json!({"start_time": 0, "duration": stop, "height": stop}),
    );
    d.add("half", "Gain", json!({"k": 0.5}));
    d.add(
        "lut",
        "Lookup2D",
        json!({"x": xs, "y": ys, "table": table, "extrapolate": "hold"}),
    );
    d.add("int", "Integrator", json!({}));
    d.connect(&["t.y", "lut.u1", "half.u"]);
    d.connect(&["half.y", "lut.u2"]);
    d.connect(&["lut.y", "int.u"]);
    d.log(&["int.y", "lut.cell_x", "lut.cell_y"]);
    d.settings.stop_time = stop;
    d.settings.rtol = 1e-3;
    d.settings.atol = 1e-3;
    let (_, r) = run(&d);

    // Closed form: the bilinear interpolant along (t, t/2), Simpson on each piece.
    let interp = |u: f64, v: f64| {
        let k = |a: &[f64], w: f64| a.partition_point(|&x| x <= w).clamp(1, a.len() - 1) - 1;
        let (i, j) = (k(&xs, u), k(&ys, v));
        let s = ((u - xs[i]) / (xs[i + 1] - xs[i])).clamp(0.0, 1.0);
        let t = ((v - ys[j]) / (ys[j + 1] - ys[j])).clamp(0.0, 1.0);
        let a = z(i, j) + t * (z(i, j + 1) - z(i, j));
        let b = z(i + 1, j) + t * (z(i + 1, j + 1) - z(i + 1, j));
        a + s * (b - a)
    };
    let mut kinks: Vec<f64> = xs
        .iter()
        .copied()
        .chain(ys.iter().map(|y| 2.0 * y))
        .filter(|&k| k > 0.0 && k < stop)
        .collect();
    kinks.sort_by(f64::total_cmp);
    let mut edges = vec![0.0];
    edges.extend(&kinks);
    edges.push(stop);
    let exact: f64 = edges
        .windows(2)
        .map(|w| {
            let (a, b) = (w[0], w[1]);
            let g = |t: f64| interp(t, 0.5 * t);
            (b - a) / 6.0 * (g(a) + 4.0 * g(0.5 * (a + b)) + g(b))
        })
        .sum();
    close(
        r.last("int.y").unwrap(),
        exact,
        1e-10 * exact.abs().max(1.0),
        "integral",
    );
    assert_eq!(r.last("lut.cell_x"), Some(4.0));
    assert_eq!(r.last("lut.cell_y"), Some(3.0));
    assert!(
        r.stats.events >= kinks.len() as u64,
        "{} events for {} edge crossings",
        r.stats.events,
        kinks.len()
    );
}

fn compile_error(d: &Diagram) -> String {
    match compile(d, &registry()) {
        Ok(_) => panic!("expected an error"),
        Err(e) => {
            assert!(matches!(e, Error::Param(_) | Error::Many(_)), "{e:?}");
            e.to_string()
        }
    }
}

#[test]
fn lookup2d_rejects_non_monotone_axes_and_ragged_tables_naming_the_parameter() {
    let mut d = lookup(0.0, 0.0, "hold");
    d.blocks.retain(|b| b.name != "lut");
    d.add(
        "lut",
        "Lookup2D",
        json!({"x": [0, 1], "y": [0, 2, 1], "table": [[0, 0, 0], [0, 0, 0]]}),
    );
    let e = compile_error(&d);
    assert!(e.contains("lut") && e.contains("'y'"), "{e}");
    assert!(e.contains("strictly increasing"), "{e}");
    let mut d = lookup(0.0, 0.0, "hold");
    d.blocks.retain(|b| b.name != "lut");
    d.add(
        "lut",
        "Lookup2D",
        json!({"x": [0, 1], "y": [0, 1], "table": [[0, 0], [0]]}),
    );
    let e = compile_error(&d);
    assert!(e.contains("table") && e.contains("row 1"), "{e}");
}

// ---------------------------------------------------------------------------------------
// Engine

/// An engine with crank inertia and the given extra parameters, throttle `u`.
fn engine(extra: Value, u: f64, stop: f64) -> Diagram {
    let mut p = json!({"inertia": 0.2, "w0": 100.0});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    let mut d = Diagram::new("engine");
    d.add("u", "Constant", json!({ "value": u }));
    d.add("eng", "Engine", p);
    d.connect(&["u.y", "eng.throttle"]);
    d.log(&[
        "eng.w",
        "eng.tau",
        "eng.tau_friction",
        "eng.throttle_eff",
        "eng.stalled",
    ]);
    d.settings.stop_time = stop;
    d
}

/// 20 N·m of friction above 10 rad/s, rising linearly from 0 at rest.
fn friction() -> Value {
    json!([[0.0, 0.0], [10.0, 20.0], [1000.0, 20.0]])
}

/// The torque map of the map tests: speed breakpoints (rad/s), throttle breakpoints and
/// torques (N·m).
const MAP_SPEEDS: [f64; 4] = [0.0, 100.0, 300.0, 600.0];
const MAP_THROTTLES: [f64; 3] = [0.0, 0.5, 1.0];
const MAP: [[f64; 3]; 4] = [
    [0.0, 50.0, 100.0],
    [0.0, 80.0, 160.0],
    [0.0, 100.0, 200.0],
    [0.0, 90.0, 180.0],
];

/// An engine on that map at throttle `u`, run to 1.2 s.
fn map_engine(u: f64) -> Diagram {
    engine(
        json!({"torque_map": MAP, "torque_map_speed": MAP_SPEEDS,
               "torque_map_throttle": MAP_THROTTLES, "max_speed": 1000.0}),
        u,
        1.2,
    )
}

#[test]
fn engine_torque_map_replaces_the_polynomial_bilinearly() {
    let (speeds, map) = (MAP_SPEEDS, MAP);
    let u = 0.7;
    let (mut m, r) = run(&map_engine(u));
    let hand = |w: f64| {
        let i = speeds.partition_point(|&s| s <= w).clamp(1, 3) - 1;
        let s = ((w - speeds[i]) / (speeds[i + 1] - speeds[i])).clamp(0.0, 1.0);
        let t = (u - 0.5) / 0.5;
        let lo = map[i][1] + t * (map[i][2] - map[i][1]);
        let hi = map[i + 1][1] + t * (map[i + 1][2] - map[i + 1][1]);
        lo + s * (hi - lo)
    };
    let (w, tau) = (r.get("eng.w").unwrap(), r.get("eng.tau").unwrap());
    // Through three map cells, below the governor band (990..1000 rad/s).
    assert!(*w.last().unwrap() > 600.0, "{:?}", w.last());
    assert!(*w.last().unwrap() < 990.0, "{:?}", w.last());
    for (w, tau) in w.iter().zip(tau) {
        close(*tau, hand(*w), 1e-9, &format!("tau at {w} rad/s"));
    }
    let a = m.energy_audit();
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
}

/// The torque map's cell edges are located events, as `Lookup2D`'s: accelerating through
/// the speed breakpoints 100, 300 and 600 rad/s, the solver stops at each (an event instant
/// is recorded twice, left and right) with the crank speed on the breakpoint.
#[test]
fn engine_torque_map_cell_edges_are_located_events() {
    let mut d = map_engine(0.7);
    d.settings.output_interval = None;
    d.settings.output_points = None;
    let (_, r) = run(&d);
    let w = r.get("eng.w").unwrap();
    let at_events: Vec<f64> = (1..r.time.len())
        .filter(|&k| r.time[k] == r.time[k - 1])
        .map(|k| w[k])
        .collect();
    for edge in [300.0, 600.0] {
        assert!(
            at_events.iter().any(|&x| (x - edge).abs() < 1e-6 * edge),
            "no event at w = {edge} rad/s; event speeds {at_events:?}"
        );
    }
}

#[test]
fn engine_stalls_at_the_stall_speed_logs_it_and_the_run_goes_on() {
    // Throttle 0, 20 N·m friction on 0.2 kg·m²: −100 rad/s², from 100 to 50 rad/s in 0.5 s.
    // Tight tolerances: the checks below are closed forms, not the solver's accuracy.
    let mut d = engine(
        json!({"friction": friction(), "stall_speed": 50.0}),
        0.0,
        1.5,
    );
    d.settings.rtol = 1e-9;
    d.settings.atol = 1e-12;
    let (mut m, r) = run(&d);
    let stalls: Vec<f64> = r
        .events_of("eng", EventTag::Stall)
        .map(|e| e.time)
        .collect();
    assert_eq!(stalls.len(), 1, "{:?}", r.events);
    close(stalls[0], 0.5, 1e-8, "stall instant");
    assert_eq!(r.last("eng.stalled"), Some(1.0));
    close(r.end_time, 1.5, 0.0, "run completed");
    // After the stall friction alone decelerates the crank: w = 10 at 0.9 s, then
    // w' = −(20/10)·w/0.2 = −10·w: w(1.5) = 10·e^(−6).
    close(
        r.last("eng.w").unwrap(),
        10.0 * (-6.0f64).exp(),
        1e-6,
        "coast after the stall",
    );
    let a = m.energy_audit();
    assert!(a.relative_residual.abs() < 1e-6, "{a:#?}");
    // The friction is the engine's own loss, not negative supplied work (it was once
    // booked as a source of −1,000 J): with the throttle closed the engine supplies
    // nothing, and its friction took the crank's kinetic energy ½·J·(w0² − w_end²).
    let of = |v: &[(String, f64)], name: &str| v.iter().find(|e| e.0 == name).map(|e| e.1);
    let supplied = of(&a.sources, "eng").expect("the engine is a source");
    assert!(supplied.abs() < 1e-9, "supplied {supplied} J: {a:#?}");
    let w_end = r.last("eng.w").unwrap();
    let ke_lost = 0.5 * 0.2 * (100.0f64.powi(2) - w_end * w_end);
    let friction = of(&a.losses, "eng.friction").expect("the friction is a loss");
    close(
        friction,
        ke_lost,
        1e-6 * ke_lost,
        "friction loss = kinetic energy lost",
    );
}

#[test]
fn engine_idle_controller_holds_the_speed_where_torque_balances_friction() {
    // Proportional idle control: u = 0.05·(80 − w) with the default polynomial envelope;
    // at steady state u·envelope(w) = 20 N·m friction.
    let mut d = engine(
        json!({"friction": friction(), "idle_speed": 80.0, "stall_speed": 40.0}),
        0.0,
        10.0,
    );
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-10;
    let (_, r) = run(&d);
    assert!(
        r.events_of("eng", EventTag::Stall).next().is_none(),
        "{:?}",
        r.events
    );
    // Envelope of the default gasoline engine: P_max/Ω0·(1 + x − x²), x = w/Ω0.
    let w0 = 4500.0 * std::f64::consts::PI / 30.0;
    let env = |w: f64| 150e3 / w0 * (1.0 + w / w0 - (w / w0).powi(2));
    let (mut lo, mut hi) = (40.0, 80.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if 0.05 * (80.0 - mid) * env(mid) > 20.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    close(
        r.last("eng.w").unwrap(),
        lo,
        1e-6,
        "idle speed under friction",
    );
    close(r.last("eng.tau").unwrap(), 0.0, 1e-6, "torque balance");
    close(
        r.last("eng.throttle_eff").unwrap(),
        0.05 * (80.0 - lo),
        1e-6,
        "idle throttle",
    );
}

#[test]
fn engine_rejects_idle_below_stall_and_friction_at_rest_naming_the_parameter() {
    let e = compile_error(&engine(
        json!({"idle_speed": 30.0, "stall_speed": 40.0}),
        0.0,
        1.0,
    ));
    assert!(e.contains("idle_speed") && e.contains("stall_speed"), "{e}");
    let e = compile_error(&engine(
        json!({"friction": [[0.0, 5.0], [10.0, 20.0]]}),
        0.0,
        1.0,
    ));
    assert!(e.contains("friction") && e.contains("speed 0"), "{e}");
    let e = compile_error(&engine(json!({"torque_map": [[1.0]]}), 0.0, 1.0));
    assert!(e.contains("torque_map_speed"), "{e}");
}
