//! A model's run state saved mid-run and restored into a fresh model of the same netlist
//! continues exactly as the model it was taken from: every shipped netlist, stepped to a
//! mid time, its state saved; the same model restarted from that state and a fresh model
//! given it then run on to the end and agree bit for bit at every output point (a block
//! whose saved run state misses some run data makes the fresh model differ or log other
//! events), and both stay
//! within the solver's tolerance of the run that was never interrupted. A fresh model that
//! resumes the saved integration instead of restarting it continues as the run that was
//! never interrupted, bit for bit.

use std::path::PathBuf;

use drivelink_blocks::registry;
use drivelink_core::{compile, Model, ModelState, RunStatus, Settings, StateError};
use drivelink_netlist as netlist;

/// Each run stops here at the latest (the test's run time stays modest).
const MAX_SPAN: f64 = 6.0;
/// Output points after the mid time.
const POINTS: usize = 30;

fn model(file: &str) -> Model {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../models/netlists")
        .join(file);
    let d = netlist::load_file(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    compile(&d, &registry()).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn settings(m: &Model, span: f64) -> Settings {
    let mut s = m.settings().clone();
    s.stop_time = s.stop_time.min(s.start_time + span);
    s.output_interval = None;
    s.output_points = None;
    s
}

/// The logged variables at each of `points` (from the time `m` has reached), until the run
/// stops or ends.
fn outputs_at(m: &mut Model, points: &[f64], file: &str) -> Vec<(f64, Vec<f64>)> {
    let n = m.plan().empty_result().names.len();
    let mut rows = Vec::new();
    for &t in points {
        let (status, reached) = m
            .step_to(t)
            .unwrap_or_else(|e| panic!("{file}: step to {t}: {e}"));
        let mut y = vec![0.0; n];
        m.stepped_outputs(&mut y)
            .unwrap_or_else(|e| panic!("{file}: outputs at {t}: {e}"));
        rows.push((reached, y));
        if status == RunStatus::Stopped {
            break;
        }
    }
    rows
}

/// Step `file` to its mid time and save the state there (`None`: the model has blocks
/// whose state cannot be saved, such as an imported FMU).
fn stepped_to_mid(file: &str, span: f64) -> Option<(Model, ModelState, Vec<f64>)> {
    // Late in the run (more modes have changed from their initial ones), earlier for a
    // run that stops itself before; not a round fraction (a restart at a sample hit would
    // resample held values anyway).
    let (m, mid, s) = [0.6537, 0.4537, 0.2537]
        .iter()
        .find_map(|&frac| {
            let mut m = model(file);
            let s = settings(&m, span);
            m.start_stepping(&s)
                .unwrap_or_else(|e| panic!("{file}: start: {e}"));
            let mid = s.start_time + frac * (s.stop_time - s.start_time);
            let (status, _) = m.step_to(mid).unwrap_or_else(|e| panic!("{file}: {e}"));
            (status == RunStatus::Completed).then_some((m, mid, s))
        })
        .unwrap_or_else(|| panic!("{file} stops too early"));
    let points = (1..=POINTS)
        .map(|k| mid + (s.stop_time - mid) * k as f64 / POINTS as f64)
        .collect();
    match m.save_stepped_state() {
        Ok(state) => Some((m, state, points)),
        Err(StateError::Block { message, .. }) if message.contains("imported FMU") => None,
        Err(e) => panic!("{file}: save: {e}"),
    }
}

fn same_bits(a: &[(f64, Vec<f64>)], b: &[(f64, Vec<f64>)]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|((ta, ya), (tb, yb))| {
            ta.to_bits() == tb.to_bits()
                && ya.len() == yb.len()
                && ya.iter().zip(yb).all(|(p, q)| p.to_bits() == q.to_bits())
        })
}

/// The largest difference of `b` from `a` relative to each signal's range over `a`
/// (plus 1e-9 of its magnitude), and the signal.
fn worst_relative(a: &[(f64, Vec<f64>)], b: &[(f64, Vec<f64>)], names: &[String]) -> (f64, String) {
    let mut worst = (0.0, String::new());
    for (k, name) in names.iter().enumerate() {
        let col: Vec<f64> = a.iter().map(|r| r.1[k]).filter(|v| v.is_finite()).collect();
        let lo = col.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = col.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let scale = (hi - lo).max(1e-9 * hi.abs().max(lo.abs())).max(1e-300);
        for (ra, rb) in a.iter().zip(b) {
            let (p, q) = (ra.1[k], rb.1[k]);
            if p.is_nan() && q.is_nan() {
                continue;
            }
            let d = (p - q).abs() / scale;
            // A NaN difference (one side undefined) counts as the worst.
            if d.is_nan() || d > worst.0 {
                worst = (d, name.clone());
            }
        }
    }
    worst
}

#[test]
fn restored_state_continues_as_the_model_it_was_taken_from() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/netlists");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    files.sort();
    assert!(files.len() >= 40, "{files:?}");
    let checked = files
        .iter()
        .filter(|f| restores_exactly(f, MAX_SPAN))
        .count();
    assert!(checked >= 40, "only {checked} netlists checked");
}

/// A geared car's first upshifts come after 24 s: restored after them, the fresh model
/// keeps the gear and the shift schedule's wait.
#[test]
fn geared_cycle_restored_after_its_upshifts_keeps_its_gear() {
    assert!(restores_exactly("cycle_conv_geared.json", 40.0));
}

/// Check the restore of `file` stepped over at most `span` seconds (false: skipped, its
/// state cannot be saved).
fn restores_exactly(file: &str, span: f64) -> bool {
    {
        let Some((mut same, state, points)) = stepped_to_mid(file, span) else {
            println!("{file}: skipped (state cannot be saved)");
            return false;
        };
        // The run that was never interrupted.
        let (mut plain, _, _) = stepped_to_mid(file, span).expect("saved once already");
        let native = outputs_at(&mut plain, &points, file);
        // The same model restarted from its own state.
        same.take_events();
        same.restore_state(&state)
            .unwrap_or_else(|e| panic!("{file}: restore into itself: {e}"));
        let a = outputs_at(&mut same, &points, file);
        // A fresh model given the state.
        let mut fresh = model(file);
        fresh
            .restore_state(&state)
            .unwrap_or_else(|e| panic!("{file}: restore into a fresh model: {e}"));
        let b = outputs_at(&mut fresh, &points, file);
        // A block that forgot a mode it recovers at the restart (a gear chosen again from
        // the speed) still logs the change there.
        let (ea, eb) = (same.take_events(), fresh.take_events());
        if let Some((x, y)) = ea.iter().zip(&eb).find(|(x, y)| x != y) {
            panic!(
                "{file}: the fresh model restored at t = {} s logs other events: {y:?} instead of {x:?}",
                state.time()
            );
        }
        assert_eq!(ea.len(), eb.len(), "{file}: event counts differ");
        assert!(
            same_bits(&a, &b),
            "{file}: the fresh model restored at t = {} s differs from the model the state was taken from",
            state.time()
        );
        // A fresh model going on with the saved integration: the uninterrupted run, bit
        // for bit (taking a state changes nothing; a block that forgot run data differs).
        let mut resumed = model(file);
        resumed
            .resume_state(&state)
            .unwrap_or_else(|e| panic!("{file}: resume in a fresh model: {e}"));
        let c = outputs_at(&mut resumed, &points, file);
        assert!(
            same_bits(&native, &c),
            "{file}: a fresh model resuming at t = {} s differs from the uninterrupted run",
            state.time()
        );
        let names = same.plan().empty_result().names;
        let (dev, signal) = worst_relative(&native, &a, &names);
        println!(
            "{file}: restored at t = {:.4} s; {} points bit-identical; vs the uninterrupted run {dev:.2e} of the range ({signal})",
            state.time(),
            a.len()
        );
        assert_eq!(
            a.len(),
            native.len(),
            "{file}: the restored run stopped elsewhere"
        );
    }
    true
}

#[test]
fn state_of_another_netlist_is_refused() {
    let (_, state, _) = stepped_to_mid("signal_discrete.json", MAX_SPAN).expect("no FMU");
    let mut other = model("signal_first_order.json");
    let e = other.restore_state(&state).unwrap_err();
    assert!(matches!(e, StateError::OtherStructure), "{e}");
    assert!(e.to_string().contains("another model structure"), "{e}");
}
