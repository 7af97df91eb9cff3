//! Analytic references for the signal blocks: linear systems vs closed forms, located
//! switching instants vs asin closed forms, exact time events, discrete sample hits, and
//! StopSimulation timing.

use std::f64::consts::PI;

use drivelink_blocks::registry;
use drivelink_core::{compile, Diagram, EventTag, RunStatus, SimResult};
use serde_json::json;

fn run(d: &Diagram) -> SimResult {
    let mut m = compile(d, &registry()).unwrap_or_else(|e| panic!("compile failed: {e}"));
    let r = m.run();
    assert_ne!(r.status, RunStatus::Failed, "run failed: {}", r.message);
    r
}

fn tight(d: &mut Diagram, stop: f64) {
    d.settings.stop_time = stop;
    d.settings.rtol = 1e-10;
    d.settings.atol = 1e-12;
}

/// Largest |sim − reference| over all samples, skipping the left value at event instants
/// (an event instant appears twice in `time`; the first row is the value before the
/// handler switched modes).
fn max_err(r: &SimResult, var: &str, f: impl Fn(f64) -> f64) -> f64 {
    let y = r.get(var).unwrap_or_else(|| panic!("{var} not logged"));
    let n = r.time.len();
    (0..n)
        .filter(|&i| i + 1 == n || r.time[i + 1] != r.time[i])
        .map(|i| (y[i] - f(r.time[i])).abs())
        .fold(0.0, f64::max)
}

/// The left (pre-event) value of `var` at event instant `t`.
fn left_value(r: &SimResult, var: &str, t: f64) -> f64 {
    let i = r
        .time
        .iter()
        .position(|&ti| ti == t)
        .unwrap_or_else(|| panic!("no sample at {t}"));
    assert_eq!(r.time.get(i + 1), Some(&t), "{t} is not an event instant");
    r.get(var).unwrap()[i]
}

fn event_times(r: &SimResult, block: &str, kind: EventTag) -> Vec<f64> {
    r.events_of(block, kind).map(|e| e.time).collect()
}

#[test]
fn first_order_transfer_fcn_step_response() {
    let tau = 0.7;
    let t0 = 0.5;
    let mut d = Diagram::new("tf1");
    d.add("step", "Step", json!({"time": t0}));
    d.add(
        "tf",
        "TransferFcn",
        json!({"num": [1.0], "den": [tau, 1.0]}),
    );
    d.connect(&["step.y", "tf.u"]);
    d.log(&["tf.y", "step.y"]);
    tight(&mut d, 5.0);
    let r = run(&d);
    let e = max_err(&r, "tf.y", |t| {
        if t < t0 {
            0.0
        } else {
            1.0 - (-(t - t0) / tau).exp()
        }
    });
    assert!(e < 1e-8, "max error {e}");
    // The step is a time event hit exactly.
    assert_eq!(event_times(&r, "step", EventTag::TimeEvent), vec![t0]);
}

/// A chain of lags `1/(τs + 1)` from a unit step: lag `k` (1-based) follows the Erlang
/// distribution function `F_k(t) = 1 − e^(−t/τ) Σ_{j<k} (t/τ)^j / j!`, and its integral is
/// `t·F_k(t) − k·τ·F_(k+1)(t)`. The derivatives depend only on the lags' states and on
/// `abs.y` (the integrator's input), so an evaluation for derivatives only computes
/// `lag7.y` (which `abs` reads) and `abs`, and skips the other 13 output rows (the lags
/// folded into the next lag's derivative, `g` and `int` read only by the log); the logged
/// values, computed by the full evaluations, are still exact.
#[test]
fn chain_of_lags_follows_the_erlang_distribution_with_skipped_outputs() {
    let tau = 0.1;
    let n = 12;
    let mut d = Diagram::new("lags");
    d.add("one", "Constant", json!({"value": 1.0}));
    let mut prev = "one.y".to_string();
    for i in 1..=n {
        let name = format!("lag{i}");
        d.add(
            &name,
            "TransferFcn",
            json!({"num": [1.0], "den": [tau, 1.0]}),
        );
        d.connect(&[prev.as_str(), &format!("{name}.u")]);
        prev = format!("{name}.y");
    }
    d.add("abs", "Abs", json!({}));
    d.connect(&["lag7.y", "abs.u"]);
    d.add("int", "Integrator", json!({}));
    d.connect(&["abs.y", "int.u"]);
    d.add("g", "Gain", json!({"k": 2.0}));
    d.connect(&["lag3.y", "g.u"]);
    d.log(&["lag1.y", "lag7.y", "lag12.y", "abs.y", "int.y", "g.y"]);
    tight(&mut d, 3.0);
    let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("compile failed: {e}"));
    assert_eq!(m.skipped_for_derivatives(), (0, 13));
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    let erlang = |k: usize, t: f64| {
        let (mut term, mut sum) = (1.0, 0.0);
        for j in 0..k {
            if j > 0 {
                term *= t / tau / j as f64;
            }
            sum += term;
        }
        1.0 - (-t / tau).exp() * sum
    };
    for k in [1, 7, 12] {
        let e = max_err(&r, &format!("lag{k}.y"), |t| erlang(k, t));
        assert!(e < 1e-8, "lag{k}: max error {e}");
    }
    assert!(max_err(&r, "abs.y", |t| erlang(7, t)) < 1e-8);
    assert!(max_err(&r, "g.y", |t| 2.0 * erlang(3, t)) < 1e-8);
    let e = max_err(&r, "int.y", |t| t * erlang(7, t) - 7.0 * tau * erlang(8, t));
    assert!(e < 1e-8, "int: max error {e}");

    // Without the integrator nothing the derivatives read depends on `abs`: its stage is
    // skipped too, and lag7 joins the skipped rows.
    let mut d2 = d.clone();
    d2.blocks.retain(|b| b.name != "int");
    d2.connections
        .retain(|c| !c.iter().any(|p| p.starts_with("int.")));
    d2.log.retain(|v| !v.starts_with("int."));
    let m2 = compile(&d2, &registry()).unwrap_or_else(|e| panic!("compile failed: {e}"));
    assert_eq!(m2.skipped_for_derivatives(), (1, 13));
}

/// The demand analysis needs only the inputs a block's output stage reads directly: an ABS
/// modulator's torque depends on the demand, not on the slip it samples at its cycle
/// instants, so the slip's producers (here a clock and a gain) wait for the full
/// evaluations, and the valve still switches at the first sample above the threshold.
#[test]
fn abs_slip_producers_are_not_evaluated_for_derivatives() {
    let mut d = Diagram::new("abs_demand");
    d.add("clk", "Clock", json!({}));
    d.add("slip", "Gain", json!({"k": 1.0}));
    d.add("demand", "Constant", json!({"value": 4.0}));
    d.add(
        "abs",
        "Abs",
        json!({"enabled": true, "trigger": "custom_slip", "min_slip": 0.55,
               "min_pressure_ratio": 0.25, "cycle_time": 0.1}),
    );
    d.add("int", "Integrator", json!({}));
    d.connect(&["clk.y", "slip.u"]);
    d.connect(&["slip.y", "abs.slip"]);
    d.connect(&["demand.y", "abs.demand"]);
    d.connect(&["abs.torque", "int.u"]);
    d.log(&["int.y", "abs.torque"]);
    tight(&mut d, 2.0);
    let mut m = compile(&d, &registry()).unwrap_or_else(|e| panic!("compile failed: {e}"));
    // Skipped: the clock's stage, the gain's linear row and the integrator's output row
    // (nothing the derivatives read; with every ABS input needed this was (0, 1)).
    assert_eq!(m.skipped_for_derivatives(), (1, 2));
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    // Open (4 N·m) until the sample at 0.6 s finds the slip 0.6 above 0.55, then 25 %.
    let got = r.last("int.y").expect("logged");
    assert!((got - (4.0 * 0.6 + 1.0 * 1.4)).abs() < 1e-9, "{got}");
}

#[test]
fn second_order_underdamped_step_response() {
    let (wn, zeta): (f64, f64) = (3.0, 0.25);
    let mut d = Diagram::new("tf2");
    d.add("step", "Step", json!({"time": 0.0}));
    d.add(
        "tf",
        "TransferFcn",
        json!({"num": [wn * wn], "den": [1.0, 2.0 * zeta * wn, wn * wn]}),
    );
    d.connect(&["step.y", "tf.u"]);
    d.log(&["tf.y"]);
    tight(&mut d, 6.0);
    let r = run(&d);
    let wd = wn * (1.0 - zeta * zeta).sqrt();
    let phi = zeta.acos();
    let e = max_err(&r, "tf.y", |t| {
        1.0 - (-zeta * wn * t).exp() / (1.0 - zeta * zeta).sqrt() * (wd * t + phi).sin()
    });
    assert!(e < 1e-8, "max error {e}");
    // A step at the start time is the initial value, not a logged switch.
    assert!(event_times(&r, "step", EventTag::TimeEvent).is_empty());
}

#[test]
fn integrator_of_sine() {
    let f = 1.5;
    let w = 2.0 * PI * f;
    let mut d = Diagram::new("int");
    d.add("s", "Sine", json!({"amplitude": 1.0, "frequency": f}));
    d.add("i", "Integrator", json!({}));
    d.connect(&["s.y", "i.u"]);
    d.log(&["i.y"]);
    tight(&mut d, 3.0);
    let r = run(&d);
    let e = max_err(&r, "i.y", |t| (1.0 - (w * t).cos()) / w);
    assert!(e < 1e-9, "max error {e}");
}

#[test]
fn integrator_initial_value_and_units() {
    let mut d = Diagram::new("int0");
    d.add("c", "Constant", json!({"value": 2.0}));
    d.add("i", "Integrator", json!({"x0": -1.0}));
    d.connect(&["c.y", "i.u"]);
    d.log(&["i.y"]);
    tight(&mut d, 2.0);
    let r = run(&d);
    assert!(max_err(&r, "i.y", |t| -1.0 + 2.0 * t) < 1e-12);
    // Sine frequency and phase with units.
    let mut d = Diagram::new("rpm");
    d.add(
        "s",
        "Sine",
        json!({"amplitude": 2.0, "frequency": "0.001 kHz", "phase": "90 deg", "offset": 1.0}),
    );
    d.log(&["s.y"]);
    d.settings.stop_time = 1.0;
    let r = run(&d);
    assert!(max_err(&r, "s.y", |t| 2.0 * (2.0 * PI * t).cos() + 1.0) < 1e-12);
}

#[test]
fn pi_control_of_first_order_plant_closed_loop() {
    // Plant 1/(s + 1), PI kp = 2, ki = 5, unit reference: Y/R = (2s + 5)/(s² + 3s + 5),
    // y = 1 − e^{−1.5t}(cos bt − (0.5/b) sin bt), b = √(5 − 2.25).
    let mut d = Diagram::new("pi");
    d.add("r", "Step", json!({"time": 0.0}));
    d.add("err", "Sum", json!({"signs": "+-"}));
    d.add("pid", "PID", json!({"kp": 2.0, "ki": 5.0}));
    d.add(
        "plant",
        "TransferFcn",
        json!({"num": [1.0], "den": [1.0, 1.0]}),
    );
    d.connect(&["r.y", "err.u1"]);
    d.connect(&["plant.y", "err.u2"]);
    d.connect(&["err.y", "pid.u"]);
    d.connect(&["pid.y", "plant.u"]);
    d.log(&["plant.y", "pid.integral"]);
    tight(&mut d, 8.0);
    let r = run(&d);
    let b = (5.0f64 - 2.25).sqrt();
    let e = max_err(&r, "plant.y", |t| {
        1.0 - (-1.5 * t).exp() * ((b * t).cos() - 0.5 / b * (b * t).sin())
    });
    assert!(e < 1e-8, "max error {e}");
    // At steady state the integral supplies the whole plant input: 5·∫e = 1.
    assert!((r.last("pid.integral").unwrap() - 0.2).abs() < 1e-4);
}

#[test]
fn pid_with_filtered_derivative_matches_equivalent_biproper_transfer_fcn() {
    let (kp, ki, kd, tf) = (1.5, 2.0, 0.3, 0.05);
    let mut d = Diagram::new("pid_tf");
    d.add(
        "s",
        "Sine",
        json!({"amplitude": 1.0, "frequency": 0.8, "phase": 0.3}),
    );
    d.add(
        "pid",
        "PID",
        json!({"kp": kp, "ki": ki, "kd": kd, "tf": tf}),
    );
    // kp + ki/s + kd s/(tf s + 1) = ((kp tf + kd) s² + (kp + ki tf) s + ki) / (tf s² + s)
    d.add(
        "tf",
        "TransferFcn",
        json!({"num": [kp * tf + kd, kp + ki * tf, ki], "den": [tf, 1.0, 0.0]}),
    );
    d.connect(&["s.y", "pid.u", "tf.u"]);
    d.log(&["pid.y", "tf.y"]);
    tight(&mut d, 3.0);
    let r = run(&d);
    let (a, b) = (r.get("pid.y").unwrap(), r.get("tf.y").unwrap());
    let e = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(e < 1e-7, "max difference {e}");
}

#[test]
fn state_space_matches_transfer_fcn() {
    // Same second-order system as a state space (companion form with a different basis).
    let (wn, zeta) = (2.0, 0.4);
    let mut d = Diagram::new("ss");
    d.add("step", "Step", json!({"time": 0.2, "after": 2.0}));
    d.add(
        "ss",
        "StateSpace",
        json!({
            "A": [[0.0, 1.0], [-wn * wn, -2.0 * zeta * wn]],
            "B": [[0.0], [1.0]],
            "C": [[wn * wn, 0.0]],
            "D": [[0.0]],
        }),
    );
    d.add(
        "tf",
        "TransferFcn",
        json!({"num": [wn * wn], "den": [1.0, 2.0 * zeta * wn, wn * wn]}),
    );
    d.connect(&["step.y", "ss.u", "tf.u"]);
    d.log(&["ss.y", "tf.y", "ss.x1"]);
    tight(&mut d, 5.0);
    let r = run(&d);
    let (a, b) = (r.get("ss.y").unwrap(), r.get("tf.y").unwrap());
    let e = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(e < 1e-8, "max difference {e}");
    let wd = wn * (1.0f64 - zeta * zeta).sqrt();
    let phi = zeta.acos();
    let e = max_err(&r, "ss.y", |t| {
        if t < 0.2 {
            return 0.0;
        }
        let s = t - 0.2;
        2.0 * (1.0 - (-zeta * wn * s).exp() / (1.0 - zeta * zeta).sqrt() * (wd * s + phi).sin())
    });
    assert!(e < 1e-8, "max error vs closed form {e}");
}

#[test]
fn biproper_transfer_fcn_has_direct_feedthrough() {
    // (s + 3)/(s + 1) = 1 + 2/(s + 1): step response 1 + 2(1 − e^{−t}).
    let mut d = Diagram::new("bip");
    d.add("step", "Step", json!({"time": 0.0}));
    d.add(
        "tf",
        "TransferFcn",
        json!({"num": [2.0, 6.0], "den": [2.0, 2.0]}),
    );
    d.connect(&["step.y", "tf.u"]);
    d.log(&["tf.y"]);
    tight(&mut d, 4.0);
    let r = run(&d);
    assert!(max_err(&r, "tf.y", |t| 1.0 + 2.0 * (1.0 - (-t).exp())) < 1e-8);
}

/// Regression: a Step at 0.3 s and a sample hit at 3·0.1 = 0.30000000000000004 s are one
/// instant (1e-13 apart at most), and the sampled blocks fired there for their hit. They
/// then asked for their next hit after 0.3, got 0.30000000000000004 back and fired a second
/// time 5.6e-17 s later: a UnitDelay lost a sample, and every adaptive method failed with
/// a step-size underflow. Now each block fires once per hit: the ZOH holds the clock's value
/// of the latest hit `k·0.1`, the delay the one before, on every method.
#[test]
fn step_on_a_sample_hit_fires_each_sampled_block_once() {
    use drivelink_core::Method;
    for method in [
        Method::Dopri5,
        Method::Dop853,
        Method::Radau5,
        Method::Auto,
        Method::Rk4 { step: 0.01 },
    ] {
        let mut d = Diagram::new("coincide");
        d.add("clk", "Clock", json!({}));
        d.add("zoh", "ZeroOrderHold", json!({"sample_time": 0.1}));
        d.add("del", "UnitDelay", json!({"sample_time": 0.1}));
        // Steps and a ramp's end on hits 3, 7 and 12 (k·0.1 is not the decimal there).
        d.add("st", "Step", json!({"time": 0.3}));
        d.add("st2", "Step", json!({"time": 0.7}));
        d.add(
            "ramp",
            "Ramp",
            json!({"start_time": 0.0, "duration": 1.2, "height": 1.0}),
        );
        d.add("sum", "Sum", json!({"signs": "+++"}));
        d.add(
            "lag",
            "TransferFcn",
            json!({"num": [1.0], "den": [0.1, 1.0]}),
        );
        d.connect(&["clk.y", "zoh.u", "del.u"]);
        d.connect(&["st.y", "sum.u1"]);
        d.connect(&["st2.y", "sum.u2"]);
        d.connect(&["ramp.y", "sum.u3"]);
        d.connect(&["sum.y", "lag.u"]);
        d.log(&["zoh.y", "del.y", "lag.y"]);
        // Not on a hit: time events at the stop time are not handled.
        d.settings.stop_time = 2.05;
        d.settings.method = method;
        let r = run(&d);
        assert_eq!(r.end_time, 2.05, "{method:?}");
        let (z, u) = (r.get("zoh.y").unwrap(), r.get("del.y").unwrap());
        for (i, &t) in r.time.iter().enumerate() {
            if i + 1 < r.time.len() && r.time[i + 1] == t {
                continue; // the left value at an event instant
            }
            // The latest hit k·0.1 at or before t (within the instant's tolerance); a hit
            // merged with the step at 0.3 samples the clock at 0.3, so compare to 1e-15.
            let k = ((t + 1e-12) / 0.1).floor();
            assert!(
                (z[i] - k * 0.1).abs() < 1e-15,
                "{method:?}: zoh {} at t = {t}",
                z[i]
            );
            let expect = if k >= 1.0 { (k - 1.0) * 0.1 } else { 0.0 };
            assert!(
                (u[i] - expect).abs() < 1e-15,
                "{method:?}: delay {} at t = {t}",
                u[i]
            );
        }
    }
}

#[test]
fn zoh_and_unit_delay_of_a_ramp_at_and_between_hits() {
    let ts = 0.25;
    let mut d = Diagram::new("zoh");
    d.add("clk", "Clock", json!({}));
    d.add("zoh", "ZeroOrderHold", json!({"sample_time": ts}));
    d.add("del", "UnitDelay", json!({"sample_time": ts, "x0": -1.0}));
    d.connect(&["clk.y", "zoh.u", "del.u"]);
    d.log(&["zoh.y", "del.y"]);
    d.settings.stop_time = 2.1;
    d.settings.max_step = 0.03;
    let r = run(&d);
    let (z, u) = (r.get("zoh.y").unwrap(), r.get("del.y").unwrap());
    let n = r.time.len();
    let mut hits_seen = 0;
    for i in 0..n {
        let t = r.time[i];
        let k = (t / ts).floor();
        let is_hit = k * ts == t;
        let right = i + 1 == n || r.time[i + 1] != t;
        if is_hit {
            hits_seen += 1;
        }
        // Right value (between hits, or after the event at a hit): latest hit <= t.
        if right {
            assert_eq!(z[i], k * ts, "zoh at t = {t}");
            let expect = if k >= 1.0 { (k - 1.0) * ts } else { -1.0 };
            assert_eq!(u[i], expect, "delay at t = {t}");
        } else {
            // Left value at a hit: still the previous sample.
            assert!(is_hit, "duplicate time {t} that is not a hit");
            assert_eq!(z[i], (k - 1.0) * ts, "zoh left value at t = {t}");
        }
    }
    // Every hit 0.25 .. 2.0 is an event instant (left + right), plus t = 0.
    assert_eq!(hits_seen, 1 + 2 * 8, "times: {:?}", r.time);
}

#[test]
fn chain_of_unit_delays_sampling_at_the_same_instants_delays_one_sample_each() {
    // clock -> d1 -> d2 -> d3, all at 0.25 s, plus a delay of the clock beside them that
    // nothing in the chain reads: at every hit the calls run in turn, and a call is
    // preceded by an evaluation only when an earlier call reaches its input. After the
    // hit at k·ts: d1 = (k − 1)·ts, d2 = (k − 2)·ts, d3 = (k − 3)·ts (x0 = −1 before).
    let ts = 0.25;
    let mut d = Diagram::new("delays");
    d.add("clk", "Clock", json!({}));
    for name in ["d1", "d2", "d3", "side"] {
        d.add(name, "UnitDelay", json!({"sample_time": ts, "x0": -1.0}));
    }
    d.connect(&["clk.y", "d1.u", "side.u"]);
    d.connect(&["d1.y", "d2.u"]);
    d.connect(&["d2.y", "d3.u"]);
    d.log(&["d1.y", "d2.y", "d3.y", "side.y"]);
    d.settings.stop_time = 2.1;
    let r = run(&d);
    for (var, lag) in [("d1.y", 1.0), ("d2.y", 2.0), ("d3.y", 3.0), ("side.y", 1.0)] {
        let y = r.get(var).unwrap();
        for (i, &t) in r.time.iter().enumerate() {
            let right = i + 1 == r.time.len() || r.time[i + 1] != t;
            if !right {
                continue;
            }
            let k = (t / ts).floor();
            let expect = if k >= lag { (k - lag) * ts } else { -1.0 };
            assert_eq!(y[i], expect, "{var} at t = {t}");
        }
    }
}

#[test]
fn zoh_of_sine_holds_sampled_values() {
    let ts = 0.1;
    let f = 0.7;
    let mut d = Diagram::new("zoh_sine");
    d.add("s", "Sine", json!({"amplitude": 3.0, "frequency": f}));
    d.add("zoh", "ZeroOrderHold", json!({"sample_time": ts}));
    d.add("del", "UnitDelay", json!({"sample_time": ts}));
    d.connect(&["s.y", "zoh.u", "del.u"]);
    d.log(&["zoh.y", "del.y"]);
    d.settings.stop_time = 1.55;
    d.settings.output_interval = Some(0.01);
    let r = run(&d);
    let sine = |t: f64| 3.0 * (2.0 * PI * f * t).sin();
    for k in 0..15 {
        // Midway between hits k and k+1.
        let tm = (k as f64 + 0.5) * ts;
        let z = r.value_at("zoh.y", tm).unwrap();
        assert!((z - sine(k as f64 * ts)).abs() < 1e-12, "zoh at {tm}: {z}");
        let u = r.value_at("del.y", tm).unwrap();
        let expect = if k == 0 {
            0.0
        } else {
            sine((k - 1) as f64 * ts)
        };
        assert!((u - expect).abs() < 1e-12, "delay at {tm}: {u} vs {expect}");
    }
}

#[test]
fn zoh_samples_right_value_of_a_step_at_the_same_instant() {
    let mut d = Diagram::new("zoh_step");
    d.add("step", "Step", json!({"time": 0.5}));
    d.add("zoh", "ZeroOrderHold", json!({"sample_time": 0.25}));
    d.add("del", "UnitDelay", json!({"sample_time": 0.25}));
    d.connect(&["step.y", "zoh.u", "del.u"]);
    d.log(&["zoh.y", "del.y"]);
    d.settings.stop_time = 1.0;
    let r = run(&d);
    assert_eq!(r.value_at("zoh.y", 0.5), Some(1.0));
    assert_eq!(r.value_at("zoh.y", 0.49), Some(0.0));
    assert_eq!(r.value_at("del.y", 0.6), Some(0.0));
    assert_eq!(r.value_at("del.y", 0.75), Some(1.0));
}

#[test]
fn stop_simulation_on_clock_greater_than_c() {
    let c = 1.234_567;
    let mut d = Diagram::new("stop");
    d.add("clk", "Clock", json!({}));
    d.add("c", "Constant", json!({"value": c}));
    d.add("gt", "Relational", json!({"op": ">"}));
    d.add("stop", "StopSimulation", json!({}));
    d.connect(&["clk.y", "gt.u1"]);
    d.connect(&["c.y", "gt.u2"]);
    d.connect(&["gt.y", "stop.u"]);
    d.log(&["gt.y"]);
    d.settings.stop_time = 10.0;
    let r = run(&d);
    assert_eq!(r.status, RunStatus::Stopped, "{}", r.message);
    assert!(
        r.end_time >= c && r.end_time - c < 1e-9,
        "end {} vs {c}",
        r.end_time
    );
    let stops: Vec<_> = r
        .events
        .iter()
        .filter(|e| e.kind == EventTag::Stop)
        .collect();
    assert_eq!(stops.len(), 1);
    assert_eq!(stops[0].block, "stop");
    assert_eq!(event_times(&r, "gt", EventTag::ZeroCrossing).len(), 1);
    assert_eq!(r.last("gt.y"), Some(1.0));
}

/// Regression: with the StopSimulation listed before the blocks driving it, its mode
/// update at t = 0 read their outputs before their own first mode update (a Relational's
/// held value, a Saturation's region) and stopped the run at 0. A stop now counts only from
/// the settled mode update of the instant, so the order of the blocks in the diagram does
/// not matter: both diagrams stop where the input leaves zero.
#[test]
fn stop_simulation_listed_before_its_drivers_stops_where_its_input_leaves_zero() {
    // Clock >= 2.6 through a Relational, the stop block first.
    let mut d = Diagram::new("stop_first_relational");
    d.add("stop", "StopSimulation", json!({}));
    d.add("clk", "Clock", json!({}));
    d.add("rel", "Relational", json!({"op": ">="}));
    d.add("lim", "Constant", json!({"value": 2.6}));
    d.connect(&["clk.y", "rel.u1"]);
    d.connect(&["lim.y", "rel.u2"]);
    d.connect(&["rel.y", "stop.u"]);
    d.settings.stop_time = 3.0;
    let r = run(&d);
    assert_eq!(r.status, RunStatus::Stopped, "{}", r.message);
    assert!((r.end_time - 2.6).abs() < 1e-9, "end {}", r.end_time);
    assert_eq!(
        r.events_of("stop", EventTag::Stop).count(),
        1,
        "{:?}",
        r.events
    );
    // t − 1 saturated to [0, 5] through a Gain, the stop block first.
    let mut d = Diagram::new("stop_first_saturation");
    d.add("stop", "StopSimulation", json!({}));
    d.add("g", "Gain", json!({"k": 1.0}));
    d.add("clk", "Clock", json!({}));
    d.add("sat", "Saturation", json!({"lower": 0.0, "upper": 5.0}));
    d.add("c", "Constant", json!({"value": -1.0}));
    d.add("s", "Sum", json!({"signs": "++"}));
    d.connect(&["clk.y", "s.u1"]);
    d.connect(&["c.y", "s.u2"]);
    d.connect(&["s.y", "sat.u"]);
    d.connect(&["sat.y", "g.u"]);
    d.connect(&["g.y", "stop.u"]);
    d.settings.stop_time = 3.0;
    let r = run(&d);
    assert_eq!(r.status, RunStatus::Stopped, "{}", r.message);
    assert!((r.end_time - 1.0).abs() < 1e-9, "end {}", r.end_time);
}

#[test]
fn stop_simulation_on_continuous_input_leaving_zero() {
    // A ramp starting at 0.7 leaves zero continuously; the guard −|u| locates it.
    let mut d = Diagram::new("stop_ramp");
    d.add(
        "ramp",
        "Ramp",
        json!({"start_time": 0.7, "duration": 1.0, "height": 1.0}),
    );
    d.add("stop", "StopSimulation", json!({}));
    d.connect(&["ramp.y", "stop.u"]);
    d.settings.stop_time = 5.0;
    let r = run(&d);
    assert_eq!(r.status, RunStatus::Stopped, "{}", r.message);
    assert!(
        r.end_time >= 0.7 && r.end_time - 0.7 < 1e-9,
        "end {}",
        r.end_time
    );

    // A smooth integrated input (no time event at the departure): u = t²/2 − 0.5 crosses
    // zero at t = 1 through a Saturation at [0, 10].
    let mut d = Diagram::new("stop_smooth");
    d.add("clk", "Clock", json!({}));
    d.add("off", "Constant", json!({"value": -1.0}));
    d.add("sum", "Sum", json!({"signs": "++"}));
    d.add("sat", "Saturation", json!({"lower": 0.0, "upper": 10.0}));
    d.add("stop", "StopSimulation", json!({}));
    d.connect(&["clk.y", "sum.u1"]);
    d.connect(&["off.y", "sum.u2"]);
    d.connect(&["sum.y", "sat.u"]);
    d.connect(&["sat.y", "stop.u"]);
    d.settings.stop_time = 5.0;
    let r = run(&d);
    assert_eq!(r.status, RunStatus::Stopped, "{}", r.message);
    assert!(
        r.end_time >= 1.0 && r.end_time - 1.0 < 1e-9,
        "end {}",
        r.end_time
    );
}

#[test]
fn saturation_of_sine_entry_and_exit_times() {
    let (amp, f, lo, hi) = (2.0f64, 1.0f64, -1.0f64, 1.5f64);
    let w = 2.0 * PI * f;
    let mut d = Diagram::new("sat");
    d.add("s", "Sine", json!({"amplitude": amp, "frequency": f}));
    d.add("sat", "Saturation", json!({"lower": lo, "upper": hi}));
    d.connect(&["s.y", "sat.u"]);
    d.log(&["sat.y", "sat.mode"]);
    d.settings.stop_time = 2.0;
    let r = run(&d);
    let a_hi = (hi / amp).asin();
    let a_lo = (-lo / amp).asin();
    let mut expect = Vec::new();
    for k in 0..2 {
        let base = 2.0 * PI * k as f64;
        expect.push((base + a_hi) / w); // enter upper
        expect.push((base + PI - a_hi) / w); // leave upper
        expect.push((base + PI + a_lo) / w); // enter lower
        expect.push((base + 2.0 * PI - a_lo) / w); // leave lower
    }
    let got = event_times(&r, "sat", EventTag::ZeroCrossing);
    assert_eq!(got.len(), expect.len(), "events: {:?}", r.events);
    for (g, e) in got.iter().zip(&expect) {
        assert!((g - e).abs() < 1e-9, "crossing at {g}, expected {e}");
    }
    // Output is the clamped sine everywhere.
    let err = max_err(&r, "sat.y", |t| (amp * (w * t).sin()).clamp(lo, hi));
    assert!(err < 1e-8, "max error {err}");
    assert_eq!(r.value_at("sat.mode", 0.2), Some(1.0));
    assert_eq!(r.value_at("sat.mode", 0.7), Some(-1.0));
    assert_eq!(r.value_at("sat.mode", 0.45), Some(0.0));
}

#[test]
fn step_and_signal_builder_breakpoints_are_hit_exactly() {
    let bps = [0.1, 0.35, 1.7];
    let mut d = Diagram::new("sb");
    d.add(
        "step",
        "Step",
        json!({"time": 0.3, "before": 2.0, "after": -1.0}),
    );
    d.add(
        "sb",
        "SignalBuilder",
        json!({"points": [[0.1, 0.0], [0.35, 2.0], [0.35, -1.0], [1.7, 3.0]]}),
    );
    d.add(
        "ramp",
        "Ramp",
        json!({"start_time": 0.2, "duration": 0.9, "height": 3.0, "offset": 1.0}),
    );
    d.log(&["step.y", "sb.y", "ramp.y"]);
    d.settings.stop_time = 2.5;
    let r = run(&d);
    assert_eq!(event_times(&r, "step", EventTag::TimeEvent), vec![0.3]);
    assert_eq!(event_times(&r, "sb", EventTag::TimeEvent), bps.to_vec());
    assert_eq!(
        event_times(&r, "ramp", EventTag::TimeEvent),
        vec![0.2, 0.2 + 0.9]
    );
    for &b in bps.iter().chain(&[0.3, 0.2, 1.1]) {
        let n = r.time.iter().filter(|&&t| t == b).count();
        assert_eq!(
            n, 2,
            "breakpoint {b} should appear twice (left/right) in the time vector"
        );
    }
    let sb = |t: f64| {
        if t < 0.1 {
            0.0
        } else if t < 0.35 {
            2.0 * (t - 0.1) / 0.25
        } else if t < 1.7 {
            -1.0 + 4.0 * (t - 0.35) / 1.35
        } else {
            3.0
        }
    };
    assert!(max_err(&r, "sb.y", sb) < 1e-12);
    assert!(max_err(&r, "step.y", |t| if t < 0.3 { 2.0 } else { -1.0 }) == 0.0);
    assert!(
        max_err(&r, "ramp.y", |t| 1.0
            + 3.0 * ((t - 0.2) / 0.9).clamp(0.0, 1.0))
            < 1e-12
    );
    // Left values at the breakpoints are the end of the previous segment.
    assert_eq!(left_value(&r, "sb.y", 0.35), 2.0);
    assert_eq!(left_value(&r, "step.y", 0.3), 2.0);
    assert!((left_value(&r, "sb.y", 1.7) - 3.0).abs() < 1e-12);
    // Right value at the jump is the post-jump segment.
    assert_eq!(r.value_at("sb.y", 0.35), Some(-1.0));
}

#[test]
fn relational_and_switch_switch_at_located_crossings() {
    let f = 1.0;
    let w = 2.0 * PI * f;
    let mut d = Diagram::new("sw");
    d.add("s", "Sine", json!({"amplitude": 1.0, "frequency": f}));
    d.add("half", "Constant", json!({"value": 0.5}));
    d.add("ge", "Relational", json!({"op": ">="}));
    d.add("a", "Constant", json!({"value": 10.0}));
    d.add("b", "Clock", json!({}));
    d.add("sw", "Switch", json!({"threshold": 0.5}));
    d.connect(&["s.y", "ge.u1", "sw.u2"]);
    d.connect(&["half.y", "ge.u2"]);
    d.connect(&["a.y", "sw.u1"]);
    d.connect(&["b.y", "sw.u3"]);
    d.log(&["ge.y", "sw.y", "sw.mode"]);
    d.settings.stop_time = 1.0;
    let r = run(&d);
    let t1 = (0.5f64).asin() / w;
    let t2 = (PI - (0.5f64).asin()) / w;
    for blk in ["ge", "sw"] {
        let got = event_times(&r, blk, EventTag::ZeroCrossing);
        assert_eq!(got.len(), 2, "{blk}: {:?}", r.events);
        assert!(
            (got[0] - t1).abs() < 1e-9 && (got[1] - t2).abs() < 1e-9,
            "{blk}: {got:?}"
        );
    }
    assert_eq!(r.value_at("ge.y", 0.2), Some(1.0));
    assert_eq!(r.value_at("ge.y", 0.05), Some(0.0));
    assert_eq!(r.value_at("sw.y", 0.2), Some(10.0));
    assert!((r.value_at("sw.y", 0.6).unwrap() - 0.6).abs() < 1e-12);
}

#[test]
fn relational_ops_on_constants() {
    let cases = [
        ("<", 0.0),
        ("<=", 1.0),
        (">", 0.0),
        (">=", 1.0),
        ("==", 1.0),
        ("!=", 0.0),
    ];
    for (op, expect) in cases {
        let mut d = Diagram::new("rel");
        d.add("a", "Constant", json!({"value": 2.0}));
        d.add("b", "Constant", json!({"value": 2.0}));
        d.add("r", "Relational", json!({"op": op}));
        d.connect(&["a.y", "r.u1"]);
        d.connect(&["b.y", "r.u2"]);
        d.log(&["r.y"]);
        d.settings.stop_time = 1.0;
        let r = run(&d);
        assert!(
            r.get("r.y").unwrap().iter().skip(1).all(|&v| v == expect),
            "{op}"
        );
    }
}

#[test]
fn math_blocks_values() {
    let f = 0.5;
    let w = 2.0 * PI * f;
    let mut d = Diagram::new("math");
    d.add("s", "Sine", json!({"amplitude": 2.0, "frequency": f}));
    d.add(
        "c",
        "Sine",
        json!({"amplitude": 2.0, "frequency": f, "phase": PI / 2.0}),
    );
    d.add("k", "Constant", json!({"value": 4.0}));
    d.add("g", "Gain", json!({"k": -3.0}));
    d.add("sum", "Sum", json!({"signs": "+-+"}));
    d.add("prod", "Product", json!({"ops": "*/"}));
    d.add("mx", "MinMax", json!({"op": "max", "inputs": 3}));
    d.add("mn", "MinMax", json!({"op": "min"}));
    d.add(
        "lut",
        "Lookup1D",
        json!({"table": [[-1.0, 5.0], [0.0, 0.0], [1.0, 2.0]]}),
    );
    d.add(
        "lutl",
        "Lookup1D",
        json!({"table": [[-1.0, 5.0], [0.0, 0.0], [1.0, 2.0]], "extrapolate": "linear"}),
    );
    d.connect(&[
        "s.y", "g.u", "sum.u1", "prod.u1", "mx.u1", "mn.u1", "lut.u", "lutl.u",
    ]);
    d.connect(&["c.y", "sum.u2", "mx.u2", "mn.u2"]);
    d.connect(&["k.y", "sum.u3", "prod.u2", "mx.u3"]);
    d.log(&["g.y", "sum.y", "prod.y", "mx.y", "mn.y", "lut.y", "lutl.y"]);
    d.settings.stop_time = 3.0;
    d.settings.max_step = 0.05;
    let r = run(&d);
    let s = |t: f64| 2.0 * (w * t).sin();
    let c = |t: f64| 2.0 * (w * t + PI / 2.0).sin();
    let tab = |u: f64, lin: bool| {
        if u <= -1.0 && !lin {
            5.0
        } else if u >= 1.0 && !lin {
            2.0
        } else if u < 0.0 {
            -5.0 * u
        } else {
            2.0 * u
        }
    };
    let tol = 1e-12;
    assert!(max_err(&r, "g.y", |t| -3.0 * s(t)) < tol);
    assert!(max_err(&r, "sum.y", |t| s(t) - c(t) + 4.0) < tol);
    assert!(max_err(&r, "prod.y", |t| s(t) / 4.0) < tol);
    assert!(max_err(&r, "mx.y", |t| s(t).max(c(t)).max(4.0)) < tol);
    assert!(max_err(&r, "mn.y", |t| s(t).min(c(t))) < tol);
    assert!(max_err(&r, "lut.y", |t| tab(s(t), false)) < 1e-11);
    assert!(max_err(&r, "lutl.y", |t| tab(s(t), true)) < 1e-11);
}

#[test]
fn model_can_be_run_twice_with_identical_results() {
    let mut d = Diagram::new("twice");
    d.add("s", "Sine", json!({"amplitude": 2.0, "frequency": 1.0}));
    d.add("sat", "Saturation", json!({"lower": -1.0, "upper": 1.0}));
    d.add("zoh", "ZeroOrderHold", json!({"sample_time": 0.1}));
    d.add("del", "UnitDelay", json!({"sample_time": 0.1, "x0": 7.0}));
    d.add("step", "Step", json!({"time": 0.5}));
    d.connect(&["s.y", "sat.u"]);
    d.connect(&["sat.y", "zoh.u", "del.u"]);
    d.log(&["sat.y", "zoh.y", "del.y", "step.y"]);
    d.settings.stop_time = 1.0;
    let mut m = compile(&d, &registry()).unwrap();
    let a = m.run();
    let b = m.run();
    assert_eq!(a.time, b.time);
    assert_eq!(a.columns, b.columns);
    assert_eq!(a.events, b.events);
}

/// Regression: `Abs` and `MinMax` kept their branch from the end of the previous run (and
/// `Lookup1D` its segment). A second run that starts on a tie (`u = 0` for `Abs`, equal
/// inputs for `MinMax`) then kept the stale branch, which is valid at a tie, and logged a
/// switch right after the start that the first run never had. `reset` now re-initialises
/// them: the second run logs the first run's events and does exactly its work.
#[test]
fn branch_modes_are_reset_between_runs_of_one_model() {
    let reg = drivelink_blocks::registry();
    let mut d = Diagram::new("rerun");
    // sin(πt): 0 at the start, rising, −1 at the end (1.5 s): every branch ends on the
    // other side from where it starts.
    d.add("s", "Sine", json!({"amplitude": 1.0, "frequency": 0.5}));
    d.add("zero", "Constant", json!({"value": 0.0}));
    d.add("abs", "Abs", json!({}));
    d.add("mx", "MinMax", json!({"op": "max"}));
    d.add(
        "lut",
        "Lookup1D",
        json!({"table": [[-0.5, 0.0], [0.0, 1.0], [0.5, 0.0]]}),
    );
    d.connect(&["s.y", "abs.u", "mx.u1", "lut.u"]);
    d.connect(&["zero.y", "mx.u2"]);
    d.log(&["abs.y", "mx.y", "lut.y"]);
    tight(&mut d, 1.5);
    let mut m = compile(&d, &reg).unwrap_or_else(|e| panic!("{e}"));
    let a = m.run();
    let b = m.run();
    assert_eq!(a.status, RunStatus::Completed, "{}", a.message);
    let names = |r: &drivelink_core::SimResult| -> Vec<String> {
        r.events
            .iter()
            .map(|e| format!("{} {:?}", e.block, e.kind))
            .collect()
    };
    assert_eq!(names(&a), names(&b));
    assert_eq!(a.stats, b.stats);
    assert_eq!(a.columns, b.columns);
    // And both are the analytic outputs (kinks of |sin| and max(sin, 0) at t = 1).
    let s = |t: f64| (PI * t).sin();
    assert!(max_err(&a, "abs.y", |t| s(t).abs()) < 1e-9);
    assert!(max_err(&a, "mx.y", |t| s(t).max(0.0)) < 1e-9);
}

#[test]
fn abs_of_sine_switches_sign_at_located_zero_crossings() {
    // `Abs` without parameters is |u| (with ABS parameters it is the vehicle controller).
    let reg = drivelink_blocks::registry();
    let f = 0.5;
    let w = 2.0 * PI * f;
    let mut d = Diagram::new("abs");
    d.add(
        "s",
        "Sine",
        json!({"amplitude": 2.0, "frequency": f, "phase": 0.3}),
    );
    d.add("abs", "Abs", json!({}));
    d.add("int", "Integrator", json!({}));
    d.connect(&["s.y", "abs.u"]);
    d.connect(&["abs.y", "int.u"]);
    d.log(&["abs.y"]);
    tight(&mut d, 3.0);
    let mut m = compile(&d, &reg).unwrap_or_else(|e| panic!("{e}"));
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    assert!(max_err(&r, "abs.y", |t| (2.0 * (w * t + 0.3).sin()).abs()) < 1e-12);
    // Kinks at w t + 0.3 = k π are event instants (sampled twice).
    for k in 1..=2 {
        let tk = (k as f64 * PI - 0.3) / w;
        assert!(
            r.time
                .windows(2)
                .any(|p| p[0] == p[1] && (p[0] - tk).abs() < 1e-9),
            "no event at {tk}"
        );
    }
}

/// Regression: a clock into a table whose first breakpoint is 0 started in the segment
/// below it, whose guard was zero, so an event was located 5e-13 s after the start (an
/// extra output row). The input on a breakpoint takes the segment above: no event until
/// the next breakpoint.
#[test]
fn lookup_input_starting_on_a_breakpoint_has_no_event_at_the_start() {
    let mut d = Diagram::new("lookup_start");
    d.add("clk", "Clock", json!({}));
    d.add(
        "map",
        "Lookup1D",
        json!({"table": [[0.0, 1.0], [1.0, 3.0], [2.0, 2.0]]}),
    );
    d.connect(&["clk.y", "map.u"]);
    d.log(&["map.y"]);
    d.settings.stop_time = 1.5;
    let r = run(&d);
    let crossings = event_times(&r, "map", EventTag::ZeroCrossing);
    assert!(
        crossings.iter().all(|&t| t > 0.5),
        "no event near the start: {crossings:?}"
    );
    assert!(
        r.time.iter().all(|&t| t == 0.0 || t >= 1e-6),
        "{:?}",
        &r.time[..4]
    );
    assert!(
        max_err(&r, "map.y", |t| if t <= 1.0 {
            1.0 + 2.0 * t
        } else {
            3.0 - (t - 1.0)
        }) < 1e-9
    );
}
