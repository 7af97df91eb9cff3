//! The metric language on hand-made results, against values computed by hand.

use super::*;
use drivelink_core::compile::ScopeVal;
use drivelink_core::expr::Quantity;
use drivelink_core::{EventRecord, EventTag, RunStatus};

/// A result with a time grid `t` and the columns `(name, values)`.
fn result(t: &[f64], cols: &[(&str, Vec<f64>)]) -> SimResult {
    let mut r = SimResult::new("m", cols.iter().map(|c| c.0.to_string()).collect());
    for (k, &tk) in t.iter().enumerate() {
        let row: Vec<f64> = cols.iter().map(|c| c.1[k]).collect();
        r.push_row(tk, &row);
    }
    r.end_time = *t.last().unwrap_or(&0.0);
    r
}

/// `t = k·h` for k = 0..=n.
fn grid(n: usize, h: f64) -> Vec<f64> {
    (0..=n).map(|k| k as f64 * h).collect()
}

/// The values of netlist metrics `(name, expr)` on `res` with parameters `params`.
fn values(defs: &[(&str, &str)], res: &SimResult, params: &Scope) -> Vec<f64> {
    let mut ms: Vec<Metric> = defs
        .iter()
        .map(|(n, e)| Metric::from_netlist(n, e, "t.json").unwrap_or_else(|e| panic!("{e}")))
        .collect();
    resolve(&mut ms, params).unwrap_or_else(|e| panic!("{e}"));
    evaluate(&ms, res, None, params)
        .into_iter()
        .map(|c| match c {
            Cell::Float(x) => x,
            other => panic!("{other:?}"),
        })
        .collect()
}

fn value(expr: &str, res: &SimResult) -> f64 {
    values(&[("m", expr)], res, &Scope::new())[0]
}

/// The error message of netlist metrics `defs` (parse or resolve).
fn error(defs: &[(&str, &str)], params: &Scope) -> String {
    let mut d = Diagram::new("m");
    for (n, e) in defs {
        d.metric(n, e);
    }
    match netlist_metrics(&d, "t.json") {
        Err(e) => e.to_string(),
        Ok(mut ms) => resolve(&mut ms, params)
            .map(|()| panic!("{defs:?}: no error"))
            .unwrap_err()
            .to_string(),
    }
}

/// x = 2 t on [0, 10] (step 0.1).
fn ramp() -> SimResult {
    let t: Vec<f64> = (0..=100).map(|k| k as f64 / 10.0).collect();
    let x = t.iter().map(|t| 2.0 * t).collect();
    result(&t, &[("a.x", x)])
}

fn close(got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol,
        "got {got}, want {want} (tolerance {tol})"
    );
}

/// The docs write `at(v, "500 ms")`; the quotes were refused by the message that
/// recommends them.
#[test]
fn times_may_be_quoted() {
    assert_eq!(parse_time("\"500 ms\""), Ok(0.5));
    assert_eq!(parse_time("'2 s'"), Ok(2.0));
    assert_eq!(parse_time(" 12 "), Ok(12.0));
    assert!(parse_time("\"3 N\"").is_err());
    close(value("at(a.x, \"500 ms\")", &ramp()), 1.0, 1e-15);
}

#[test]
fn parse_names_each_form() {
    let m = Metric::parse("stop=event_time(vehicle_stop, stop, 1)").unwrap();
    assert_eq!(
        m.node.kind,
        Kind::EventTime {
            block: "vehicle_stop".into(),
            kind: EventTag::Stop,
            n: 1
        }
    );
    let m = Metric::parse("v10=at(vehicle.v, 500 ms)").unwrap();
    assert_eq!(m.name, "v10");
    let Kind::Call(Func::At, args) = &m.node.kind else {
        panic!("{:?}", m.node)
    };
    assert_eq!(args[0].kind, Kind::Signal("vehicle.v".into()));
    assert_eq!(args[1].kind, Kind::Num(0.5, Some(Dim::TIME)));
    let m = Metric::parse("max(engine.w)").unwrap();
    assert_eq!(m.name, "max(engine.w)");
    assert_eq!(m.signals(), ["engine.w"]);
    // A comparison's '=' is not the NAME=EXPR one.
    let m = Metric::parse("first_time(a.x >= 3)").unwrap();
    assert_eq!(m.name, "first_time(a.x >= 3)");
    let m = Metric::parse("late = first_time(a.x >= 3) > 1 s").unwrap();
    assert_eq!(m.name, "late");
}

#[test]
fn parse_errors_name_the_metric_and_what_was_expected() {
    let e = Metric::parse("x=maxx(a.b)").unwrap_err().to_string();
    assert!(e.starts_with("--metric x: unknown metric 'maxx'"), "{e}");
    assert!(e.contains("did you mean 'max'"), "{e}");
    let e = Metric::parse("x=at(a.b)").unwrap_err().to_string();
    assert!(e.contains("at(SIGNAL, TIME)"), "{e}");
    let e = Metric::parse("x=event_time(c, lok, 1)")
        .unwrap_err()
        .to_string();
    assert!(e.contains("did you mean 'lock'"), "{e}");
    let e = Metric::parse("x=event_time(c, lock, 0)")
        .unwrap_err()
        .to_string();
    assert!(e.contains("whole number >= 1"), "{e}");
    let mut ms = vec![Metric::parse("x=at(a.b, 3 N)").unwrap()];
    let e = resolve(&mut ms, &Scope::new()).unwrap_err().to_string();
    assert!(e.contains("time '3 N'"), "{e}");
    let e = Metric::parse("x y=max(a.b)").unwrap_err().to_string();
    assert!(e.contains("'x y' is not a column name"), "{e}");
}

#[test]
fn time_mean_is_the_trapezoidal_integral_over_the_span() {
    // y = t on [0, 2]: mean 1; a jump at t = 1 recorded twice (left 0, right 10).
    assert_eq!(time_mean(&[0.0, 1.0, 2.0], &[0.0, 1.0, 2.0]), Some(1.0));
    let t = [0.0, 1.0, 1.0, 2.0];
    let y = [0.0, 0.0, 10.0, 10.0];
    assert_eq!(time_mean(&t, &y), Some(5.0));
}

/// x = 2 t crosses 5.05 at t = 2.525, between the samples 2.5 and 2.6.
#[test]
fn first_time_interpolates_the_crossing_of_a_ramp() {
    let r = ramp();
    close(value("first_time(a.x > 5.05)", &r), 2.525, 1e-12);
    close(value("first_time(a.x >= 5)", &r), 2.5, 1e-12);
    // Falling below: 20 - x < 3 from x > 17, t > 8.5.
    close(value("first_time(20 - a.x < 3)", &r), 8.5, 1e-12);
    // Both: the later crossing.
    close(
        value("first_time(a.x > 4.1 and time >= 1.234 s)", &r),
        2.05,
        1e-12,
    );
    close(value("first_time(a.x > 1 or a.x < -1)", &r), 0.5, 1e-12);
    // Holding at the start of the window: the window's start; in a window: after it.
    close(value("first_time(a.x > 1, 3.21 s, 5 s)", &r), 3.21, 1e-12);
    close(value("first_time(a.x > 12, 3.21 s, 9 s)", &r), 6.0, 1e-12);
    assert!(value("first_time(a.x > 30)", &r).is_nan());
    assert!(value("first_time(a.x > 12, 1 s, 5 s)", &r).is_nan());
}

/// The mean of sin(ωt) over [t0, t1] is (cos ωt0 − cos ωt1)/(ω (t1 − t0)); the trapezoidal
/// rule with step h errs by at most h²ω²/12 of the amplitude (3e-8 here).
#[test]
fn windowed_mean_of_a_sine_is_the_closed_form() {
    let w = 2.0 * std::f64::consts::PI;
    let t = grid(20_000, 1e-4);
    let s = t.iter().map(|t| (w * t).sin()).collect();
    let r = result(&t, &[("a.s", s)]);
    let (t0, t1) = (0.12345, 0.6789);
    let want = ((w * t0).cos() - (w * t1).cos()) / (w * (t1 - t0));
    close(value("mean(a.s, 0.12345 s, 678.9 ms)", &r), want, 1e-7);
    let want_int = ((w * t0).cos() - (w * t1).cos()) / w;
    close(value("integral(a.s, 0.12345, 0.6789)", &r), want_int, 1e-7);
    // Over whole periods: 0; max and min of the window [0.1, 0.2]: at its ends.
    close(value("mean(a.s)", &r), 0.0, 1e-9);
    close(value("max(a.s, 0.3 s, 0.4 s)", &r), (w * 0.3).sin(), 1e-12);
    close(value("min(a.s, 0.3 s, 0.4 s)", &r), (w * 0.4).sin(), 1e-12);
    // Rises above 0.5 over two periods (at 0.0833 and 1.0833 s; holding at a window's
    // start counts): two.
    assert_eq!(value("count(a.s > 0.5)", &r), 2.0);
    assert_eq!(value("count(a.s > 0.5, 0.2 s, 2 s)", &r), 2.0);
    assert_eq!(value("count(a.s > 0.5, 0.3 s, 2 s)", &r), 2.0);
    assert_eq!(value("count(a.s > 0.5, 0.45 s, 2 s)", &r), 1.0);
    close(value("time_of_max(a.s)", &r), 0.25, 1e-12);
    close(value("time_of_min(a.s, 1 s, 2 s)", &r), 1.75, 1e-12);
}

#[test]
fn windowed_extremes_interpolate_the_window_ends() {
    let r = ramp();
    close(value("max(a.x, 1.05 s, 3.33 s)", &r), 6.66, 1e-12);
    close(value("min(a.x, 1.05 s, 3.33 s)", &r), 2.1, 1e-12);
    // Trapezoids are exact on a line: integral of 2t over [1, 4] = 15.
    close(value("integral(a.x, 1 s, 4 s)", &r), 15.0, 1e-12);
    close(value("mean(a.x, 1.05 s, 3.35 s)", &r), 4.4, 1e-12);
    // A window outside the run or reversed at run time: NaN.
    assert!(value("max(a.x, 5 s, 11 s)", &r).is_nan());
    assert!(value("max(a.x, -1 s, 1 s)", &r).is_nan());
    assert!(value("max(a.x, end_time, 1 s)", &r).is_nan());
    // A zero-width window: the value there.
    close(value("max(a.x, 2.25 s, 2.25 s)", &r), 4.5, 1e-12);
}

/// y = 3x + 1: slope 3 over all samples and over a range of x.
#[test]
fn slope_of_a_line_is_its_gradient() {
    let t = grid(100, 0.1);
    let x: Vec<f64> = t.iter().map(|t| (3.0 * t).sin()).collect();
    let y = x.iter().map(|x| 3.0 * x + 1.0).collect();
    let r = result(&t, &[("a.x", x), ("a.y", y)]);
    close(value("slope(a.y, a.x)", &r), 3.0, 1e-12);
    close(value("slope(a.y, a.x, 0.1, 0.4)", &r), 3.0, 1e-12);
    // Scaled as the understeer gradient is: (y in units of 2) against (x / 0.5).
    close(
        value("slope(a.y / 2, a.x / 0.5, -0.2, 0.8)", &r),
        0.75,
        1e-12,
    );
    // Fewer than two points in the range.
    assert!(value("slope(a.y, a.x, 5, 6)", &r).is_nan());
}

/// y = e^{−t} sin(ωt): |y| first peaks where tan(ωt) = ω, at value
/// e^{−t*}·ω/√(1+ω²); the next extreme, half a period later, is the negative trough.
#[test]
fn first_peak_of_a_damped_oscillation() {
    let w = 2.0 * std::f64::consts::PI;
    let t = grid(30_000, 1e-4);
    let y = t.iter().map(|t| (-t).exp() * (w * t).sin()).collect();
    let r = result(&t, &[("a.y", y)]);
    let ts = w.atan() / w;
    let peak = (-ts).exp() * w / (1.0 + w * w).sqrt();
    // A sample is within h/2 of the peak: off by at most |y''|·h²/8 ≈ 5e-8.
    close(value("first_peak(a.y)", &r), peak, 1e-7);
    let trough = -(-(ts + 0.5)).exp() * w / (1.0 + w * w).sqrt();
    close(value("first_peak(a.y, 0.3 s, 3 s)", &r), trough, 1e-7);
    // Still rising at the end of the window: no peak.
    assert!(value("first_peak(a.y, 0.3 s, 0.6 s)", &r).is_nan());
}

/// A jump at an event instant is recorded twice (left, right value).
#[test]
fn event_instants_keep_both_values() {
    let t = [0.0, 1.0, 1.0, 2.0];
    let r = result(&t, &[("a.x", vec![0.0, 0.0, 10.0, 10.0])]);
    assert_eq!(value("at(a.x, 1 s)", &r), 10.0);
    assert_eq!(value("max(a.x, 0 s, 1 s)", &r), 10.0);
    assert_eq!(value("first_time(a.x > 5)", &r), 1.0);
    assert_eq!(value("mean(a.x)", &r), 5.0);
    assert_eq!(value("final(a.x)", &r), 10.0);
}

#[test]
fn signal_expressions_are_evaluated_sample_by_sample() {
    let r = ramp();
    close(value("at(abs(a.x - 10), 2.55 s)", &r), 4.9, 1e-12);
    close(value("max(abs(a.x - 15))", &r), 15.0, 0.0);
    // The trace of the 0/1 samples rises over the step in which x passes 10, (5, 5.1):
    // 0.05 + 4.9 over 10 s.
    close(value("mean(a.x > 10)", &r), 0.495, 1e-12);
    close(
        value("final(if(a.x > 1, sqrt(a.x), -1))", &r),
        20f64.sqrt(),
        1e-15,
    );
    close(value("max(time * 2 - a.x)", &r), 0.0, 1e-12);
    // Units are SI: 2 deg in rad, 80 km/h in m/s, g_n.
    close(value("2 deg", &r), 2.0_f64.to_radians(), 1e-15);
    close(value("80 km/h * 3.6 / 80", &r), 1.0, 1e-15);
    close(value("9.80665 m/s^2 / g_n", &r), 1.0, 0.0);
    close(value("-2^2 + (1 + 2) * 3", &r), 5.0, 0.0);
    close(
        value("(1 < 2) + (2 <= 2) + (3 > 4) + not (1 == 1) + (1 != 2)", &r),
        3.0,
        0.0,
    );
    close(value("end_time / 2", &r), 5.0, 0.0);
    // Zero is written as 0, never -0.
    assert!(value("-0 * final(a.x)", &r).is_sign_positive());
}

#[test]
fn parameters_and_earlier_metrics_are_numbers() {
    let r = ramp();
    let mut params = Scope::new();
    params.insert(
        "amplitude".into(),
        ScopeVal::Q(Quantity::new(90f64.to_radians(), Dim::ONE)),
    );
    params.insert("t_steer".into(), ScopeVal::Q(Quantity::bare(2.0)));
    let v = values(
        &[
            ("amp_deg", "amplitude / 1 deg"),
            ("x_late", "at(a.x, t_steer + 1.07 s)"),
            ("ratio", "x_late / amp_deg"),
            ("passes", "ratio <= 0.07 and amp_deg >= 90"),
        ],
        &r,
        &params,
    );
    close(v[0], 90.0, 1e-12);
    close(v[1], 6.14, 1e-12);
    close(v[2], 6.14 / 90.0, 1e-12);
    assert_eq!(v[3], 1.0);
}

#[test]
fn a_failed_run_has_nan_for_what_reads_its_results() {
    let mut r = ramp();
    r.status = RunStatus::Failed;
    r.events.push(EventRecord {
        time: 1.0,
        block: "c".into(),
        kind: EventTag::Lock,
        detail: String::new(),
    });
    let v = values(
        &[
            ("m", "max(a.x)"),
            ("e", "event_time(c, lock, 1)"),
            ("t", "end_time"),
            ("k", "2 * 3"),
        ],
        &r,
        &Scope::new(),
    );
    assert!(v[0].is_nan() && v[1].is_nan());
    assert_eq!(&v[2..], [10.0, 6.0]);
}

#[test]
fn names_are_resolved_with_located_errors() {
    let mut params = Scope::new();
    params.insert("amplitude".into(), ScopeVal::Q(Quantity::bare(1.0)));
    params.insert("mode".into(), ScopeVal::Text("open".into()));
    let e = error(&[("a", "max(a.x) * amplitud")], &params);
    assert_eq!(
        e,
        "t.json: metrics.a: at column 12: unknown name 'amplitud' (did you mean 'amplitude'?); a name without a dot is an earlier metric, a model parameter or one of time, end_time, pi, g_n (signals are block.var)"
    );
    let e = error(&[("a", "b + 1"), ("b", "max(a.x)")], &params);
    assert!(
        e.starts_with("t.json: metrics.a: at column 1: metric 'b' is defined after this one"),
        "{e}"
    );
    let e = error(&[("a", "2 * a")], &params);
    assert!(
        e.contains("metrics.a: at column 5: metric 'a' refers to itself"),
        "{e}"
    );
    let e = error(&[("a", "mode + 1")], &params);
    assert!(
        e.contains("parameter 'mode' is a word (\"open\"), not a number"),
        "{e}"
    );
    let e = error(&[("a", "mean(a.x, 12 s, 10 s)")], &params);
    assert!(
        e.contains("metrics.a: at column 11: window [12 s, 10 s] of mean ends before it starts"),
        "{e}"
    );
    let e = error(&[("a", "a.x * 2")], &params);
    assert!(
        e.contains("metrics.a: at column 1: 'a.x * 2' is a signal, not one number"),
        "{e}"
    );
    let e = error(&[("a", "max(a.x, a.x, 3)")], &params);
    assert!(
        e.contains("at column 10: argument 2 of max must be one number"),
        "{e}"
    );
    let e = error(&[("a", "at(a.x, 2 m)")], &params);
    assert!(e.contains("at column 9: time '2 m': expected s"), "{e}");
    let e = error(&[("a", "mxa(a.x)")], &params);
    assert!(
        e.contains("metrics.a: at column 1: unknown metric 'mxa' (did you mean 'max'?)"),
        "{e}"
    );
    let e = error(&[("a", "max(a.x, 1 s)")], &params);
    assert!(
        e.contains("max takes 1 or 3 arguments, got 2: expected max(SIGNAL [, T0, T1])"),
        "{e}"
    );
    let e = error(&[("a", "max(a.x) +")], &params);
    assert!(e.contains("at column 11: unexpected end"), "{e}");
    let e = error(&[("a", "2 degg")], &params);
    assert!(
        e.contains("at column 3: unknown unit 'degg' (did you mean 'deg'?)"),
        "{e}"
    );
    let e = error(&[("a", "status")], &params);
    assert!(e.contains("status is text"), "{e}");
    let e = error(&[("a", "1 < 2 < 3")], &params);
    assert!(e.contains("comparisons do not chain"), "{e}");
    // Several errors are reported together.
    let e = error(&[("a", "max(a.x"), ("b", "min(")], &params);
    assert!(e.contains("metrics.a") && e.contains("metrics.b"), "{e}");
}

#[test]
fn merge_replaces_by_name_in_place_and_appends_the_rest() {
    let net = vec![
        Metric::from_netlist("a", "max(x.y)", "t.json").unwrap(),
        Metric::from_netlist("b", "a * 2", "t.json").unwrap(),
    ];
    let args = vec![
        Metric::parse("c=min(x.y)").unwrap(),
        Metric::parse("a=final(x.y)").unwrap(),
    ];
    let m = merge(net, args);
    let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(m[0].expr, "final(x.y)");
    assert_eq!(m[0].source, Source::Arg);
}

#[test]
fn summary_json_writes_nan_as_null() {
    let ms = vec![
        Metric::from_netlist("a", "1", "t.json").unwrap(),
        Metric::from_netlist("b", "0/0", "t.json").unwrap(),
    ];
    let v = values_json(&ms, &[Cell::Float(1.5), Cell::Float(f64::NAN)]);
    assert_eq!(v, serde_json::json!({"a": 1.5, "b": null}));
}
