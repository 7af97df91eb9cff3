//! Regression tests for plotting hangs on extreme values (huge, tiny and mixed magnitudes), NaN/inf
//! samples, time windows (`--xlim`), second y axes and overlapping traces.
//!
//! A hang must fail a test, not stall the suite: every render runs on a worker thread with
//! a deadline.

use std::sync::mpsc;
use std::time::Duration;

use drivelink_plots::{
    quick_scope, render_scope_png, render_scope_png_view, render_scope_svg, PlotError, View,
    PALETTE,
};
use drivelink_results::result::SimResult;
use drivelink_results::scope::{ScopeSignal, ScopeSpec};

/// Renders on a worker thread; panics if it takes longer than 60 s (a hang).
fn render_within_deadline(r: SimResult, s: ScopeSpec, view: View) -> Result<Vec<u8>, PlotError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(render_scope_png_view(&r, &s, &view));
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("rendering did not finish within 60 s (hang)")
}

fn constant(name: &str, value: f64, n: usize) -> SimResult {
    let mut r = SimResult::new("m", vec![name.to_string()]);
    for i in 0..n {
        r.push_row(i as f64 * 0.1, &[value]);
    }
    r
}

struct Image {
    w: usize,
    h: usize,
    rgb: Vec<u8>,
}

fn decode(png_bytes: &[u8]) -> Image {
    let dec = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    Image {
        w: info.width as usize,
        h: info.height as usize,
        rgb: buf,
    }
}

impl Image {
    /// Rows with more than `min` pixels of colour `k` of the palette (the legend swatch is
    /// 28 px wide, a plotted line spans the plot width).
    fn line_rows(&self, k: usize, min: usize) -> Vec<usize> {
        let c = PALETTE[k];
        (0..self.h)
            .filter(|&y| {
                (0..self.w)
                    .filter(|&x| {
                        let i = (y * self.w + x) * 3;
                        self.rgb[i..i + 3] == [c.0, c.1, c.2]
                    })
                    .count()
                    > min
            })
            .collect()
    }
    /// Number of pixels of colour `k` below row `y0` (below the legend strip).
    fn count_below(&self, k: usize, y0: usize) -> usize {
        let c = PALETTE[k];
        self.rgb
            .chunks(3)
            .enumerate()
            .filter(|(i, px)| i / self.w >= y0 && *px == [c.0, c.1, c.2])
            .count()
    }
}

#[test]
fn scope_of_constant_1e308_renders_with_the_line_where_a_constant_1_is() {
    // The y axis of a constant is centred on it, so the line sits on the same pixel row
    // whatever the constant's magnitude.
    let s = quick_scope("c", &["c.y"], None);
    let huge = decode(
        &render_within_deadline(constant("c.y", 1e308, 50), s.clone(), View::default()).unwrap(),
    );
    let one =
        decode(&render_within_deadline(constant("c.y", 1.0, 50), s, View::default()).unwrap());
    let rows = huge.line_rows(0, 200);
    assert!(!rows.is_empty(), "the 1e308 line is drawn");
    assert_eq!(rows, one.line_rows(0, 200));
}

#[test]
fn scope_with_ylim_plus_minus_1e308_renders_zero_line_at_the_middle() {
    let mut wide = quick_scope("z", &["z.y"], None);
    wide.ylim = Some((-1e308, 1e308));
    let mut unit = wide.clone();
    unit.ylim = Some((-1.0, 1.0));
    let a =
        decode(&render_within_deadline(constant("z.y", 0.0, 50), wide, View::default()).unwrap());
    let b =
        decode(&render_within_deadline(constant("z.y", 0.0, 50), unit, View::default()).unwrap());
    let rows = a.line_rows(0, 200);
    assert!(!rows.is_empty());
    assert_eq!(rows, b.line_rows(0, 200));
    // And the extreme end of the range itself: ylim up to f64::MAX.
    let mut max = quick_scope("z", &["z.y"], None);
    max.ylim = Some((-f64::MAX, f64::MAX));
    render_within_deadline(constant("z.y", f64::MAX, 50), max, View::default()).unwrap();
}

#[test]
fn sample_of_1e308_outside_a_fixed_ylim_is_clipped_without_hanging() {
    let mut r = constant("v.y", 0.0, 100);
    r.columns[0][50] = 1e308;
    r.columns[0][51] = -1e308;
    let mut s = quick_scope("v", &["v.y"], None);
    s.ylim = Some((-1.0, 1.0));
    let img = decode(&render_within_deadline(r, s.clone(), View::default()).unwrap());
    // The zero line is still drawn at the middle of the [-1, 1] panel, as without the spike.
    let clean = decode(&render_scope_png(&constant("v.y", 0.0, 100), &s).unwrap());
    let rows = img.line_rows(0, 200);
    assert!(!rows.is_empty());
    assert_eq!(rows, clean.line_rows(0, 200));
}

#[test]
fn nan_and_infinite_samples_are_skipped_and_do_not_stretch_the_axis() {
    let n = 200;
    let mut r = SimResult::new("m", vec!["s.y".into()]);
    let mut clean = SimResult::new("m", vec!["s.y".into()]);
    for i in 0..n {
        let t = i as f64 * 0.01;
        let y = (t * 3.0).sin();
        clean.push_row(t, &[y]);
        let bad = match i {
            60 => f64::INFINITY,
            61 => f64::NEG_INFINITY,
            62 => f64::NAN,
            _ => y,
        };
        r.push_row(t, &[bad]);
    }
    let s = quick_scope("s", &["s.y"], None);
    let a = decode(&render_within_deadline(r, s.clone(), View::default()).unwrap());
    let b = decode(&render_scope_png(&clean, &s).unwrap());
    // Same axis (same extreme rows of the curve), the gap only removes pixels.
    let rows_a = a.line_rows(0, 0);
    let rows_b = b.line_rows(0, 0);
    assert_eq!(rows_a.first(), rows_b.first());
    assert_eq!(rows_a.last(), rows_b.last());
    assert!(
        a.count_below(0, 60) < b.count_below(0, 60),
        "the gap is not bridged"
    );
    // A scale to rpm of a value near f64::MAX overflows to inf: skipped the same way.
    let mut huge = constant("w", 1.0, 10);
    huge.columns[0][3] = f64::MAX;
    render_within_deadline(huge, quick_scope("w", &["w"], Some("rpm")), View::default()).unwrap();
}

#[test]
fn xlim_window_equals_the_plot_of_the_cut_data() {
    let mut all = SimResult::new("m", vec!["r.y".into()]);
    let mut cut = SimResult::new("m", vec!["r.y".into()]);
    for i in 0..=1000 {
        let t = i as f64 * 0.01;
        let y = t * t;
        all.push_row(t, &[y]);
        if (200..=400).contains(&i) {
            cut.push_row(t, &[y]);
        }
    }
    let s = quick_scope("r", &["r.y"], None);
    let view = View {
        xlim: Some((2.0, 4.0)),
        ..View::default()
    };
    let windowed = render_within_deadline(all, s.clone(), view).unwrap();
    let expected = render_scope_png_view(
        &cut,
        &s,
        &View {
            xlim: Some((2.0, 4.0)),
            ..View::default()
        },
    )
    .unwrap();
    assert!(
        windowed == expected,
        "window of the full result differs from the cut data"
    );
    let bad = render_scope_png_view(
        &cut,
        &s,
        &View {
            xlim: Some((4.0, 2.0)),
            ..View::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(bad, PlotError::BadRange { axis: "x", .. }),
        "{bad}"
    );
}

#[test]
fn equal_traces_stay_visible() {
    let mut r = SimResult::new("m", vec!["a".into(), "b".into()]);
    for i in 0..500 {
        let t = i as f64 * 0.01;
        r.push_row(t, &[t.sin(), t.sin()]);
    }
    let s = quick_scope("eq", &["a", "b"], None);
    let img = decode(&render_scope_png(&r, &s).unwrap());
    // Below the legend strip (title 46 px + legend 32 px) both colours are on the curve:
    // the second trace is dashed, so the first shows through its gaps.
    let first = img.count_below(0, 90);
    let second = img.count_below(1, 90);
    assert!(second > 1000, "second trace drawn ({second} px)");
    assert!(
        first > second / 3,
        "first trace visible under the second ({first} px)"
    );
}

#[test]
fn two_units_in_one_panel_get_left_and_right_axis_titles() {
    let mut r = SimResult::new("m", vec!["e.w".into(), "e.tau".into()]);
    for i in 0..100 {
        let t = i as f64 * 0.01;
        r.push_row(t, &[100.0 + t, 50.0 - t]);
    }
    let s = ScopeSpec::new(
        "mixed",
        vec![
            ScopeSignal::new("e.w").with_unit("rpm"),
            ScopeSignal::new("e.tau").with_unit("N*m"),
        ],
    );
    let svg = render_scope_svg(&r, &s).unwrap();
    let rotated: Vec<&str> = svg
        .split("<text")
        .skip(1)
        .filter(|t| t.contains("rotate("))
        .map(|t| {
            t.split('>')
                .nth(1)
                .unwrap_or("")
                .trim_end_matches("</text")
                .trim()
        })
        .collect();
    assert_eq!(
        rotated,
        ["e.w [rpm]", "e.tau [N·m]"],
        "left and right axis titles"
    );
    assert!(
        svg.contains("e.w [rpm]") && svg.contains("e.tau [N·m]"),
        "legend names units"
    );
}

#[test]
fn start_up_spike_does_not_crush_a_ratio_panel() {
    // A gear ratio of 2.9, then 1.5 after a shift at 8 s, with a start-up spike to 13.6.
    let mut r = SimResult::new("m", vec!["g.ratio".into()]);
    for i in 0..1000 {
        let t = i as f64 * 0.02;
        let v = match i {
            1 => 12.6,
            2 => 13.6,
            _ if t < 8.0 => 2.9,
            _ => 1.5,
        };
        r.push_row(t, &[v]);
    }
    let s = ScopeSpec::new("ratio", vec![ScopeSignal::new("g.ratio")]);
    let img = decode(&render_scope_png(&r, &s).unwrap());
    // Rows of the two plateaus (the long horizontal runs of the line colour): the bulk
    // spans most of the plot (about 600 px high), not a tenth of it.
    let mut rows = img.line_rows(0, 200);
    rows.dedup_by(|b, a| *b == *a + 1);
    assert_eq!(rows.len(), 2, "two plateaus: {rows:?}");
    let gap = rows[1] - rows[0];
    assert!(gap > 400, "plateaus only {gap} px apart");
    // The spike is marked off-scale at the top: a triangle of the line colour in the few
    // rows under the plot's top edge, at the start of the time axis.
    let c = PALETTE[0];
    let top_marks = (0..img.w)
        .flat_map(|x| (0..rows[0].saturating_sub(30)).map(move |y| (x, y)))
        .filter(|&(x, y)| {
            let i = (y * img.w + x) * 3;
            x < 140 && img.rgb[i..i + 3] == [c.0, c.1, c.2]
        })
        .count();
    assert!(top_marks > 10, "off-scale marker pixels: {top_marks}");
}

/// The widest run of pixel columns without colour `k` between columns that have it,
/// below row `y0` (under the legend strip).
fn widest_gap(img: &Image, k: usize, y0: usize) -> usize {
    let c = PALETTE[k];
    let inked: Vec<usize> = (0..img.w)
        .filter(|&x| {
            (y0..img.h).any(|y| {
                let i = (y * img.w + x) * 3;
                img.rgb[i..i + 3] == [c.0, c.1, c.2]
            })
        })
        .collect();
    inked.windows(2).map(|w| w[1] - w[0] - 1).max().unwrap_or(0)
}

#[test]
fn nan_samples_leave_a_gap_in_time_and_xy_scopes() {
    // A ramp 1..100 over t = 0..99 s, undefined (NaN) from 40 to 59 s: a gap of about a
    // fifth of the ~1080 px plot, not a line down to 0.
    let mut r = SimResult::new("m", vec!["car.x".into(), "car.beta".into()]);
    for i in 0..100 {
        let t = i as f64;
        let beta = if (40..60).contains(&i) {
            f64::NAN
        } else {
            t + 1.0
        };
        r.push_row(t, &[t, beta]);
    }
    let time_scope = quick_scope("beta", &["car.beta"], None);
    let img = decode(&render_scope_png(&r, &time_scope).unwrap());
    let gap = widest_gap(&img, 0, 100);
    // 20 missing samples of 99 intervals: (21 / 99) * 1080 px between the drawn ends.
    assert!((200..=240).contains(&gap), "time scope gap {gap} px");

    let mut xy = quick_scope("path", &["car.beta"], None);
    xy.x = Some("car.x".into());
    let img = decode(&render_scope_png(&r, &xy).unwrap());
    let gap = widest_gap(&img, 0, 100);
    assert!(gap > 100, "XY scope gap {gap} px");
    // A NaN abscissa breaks the line too.
    r.columns[0][70..75].fill(f64::NAN);
    r.columns[1][40..60].fill(50.0);
    let img = decode(&render_scope_png(&r, &xy).unwrap());
    let gap = widest_gap(&img, 0, 100);
    assert!(gap > 20, "XY scope gap at NaN x: {gap} px");
}
