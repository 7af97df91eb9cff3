//! Rendering tests: size, content, colours, panel stacking, determinism, errors, SVG.

use drivelink_plots::{
    quick_scope, render_scope_png, render_scope_svg, write_scopes, PlotError, PALETTE,
};
use drivelink_results::result::{EventRecord, EventTag, SimResult};
use drivelink_results::scope::{ScopeSignal, ScopeSpec};

struct Image {
    w: usize,
    h: usize,
    rgb: Vec<u8>,
}

impl Image {
    fn px(&self, x: usize, y: usize) -> (u8, u8, u8) {
        let i = (y * self.w + x) * 3;
        (self.rgb[i], self.rgb[i + 1], self.rgb[i + 2])
    }
    /// (x, y) of every pixel of exactly this colour.
    fn find(&self, c: (u8, u8, u8)) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        for y in 0..self.h {
            for x in 0..self.w {
                if self.px(x, y) == c {
                    v.push((x, y));
                }
            }
        }
        v
    }
}

fn decode(png_bytes: &[u8]) -> Image {
    let dec = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    Image {
        w: info.width as usize,
        h: info.height as usize,
        rgb: buf,
    }
}

fn rgb(k: usize) -> (u8, u8, u8) {
    let c = PALETTE[k];
    (c.0, c.1, c.2)
}

/// Engine-like data: a speed ramp with a wobble, a torque, a mode with an event duplicate.
fn sample_result() -> SimResult {
    let mut r = SimResult::new(
        "test",
        vec![
            "engine.w".into(),
            "engine.tau".into(),
            "clutch.mode".into(),
            "flat".into(),
        ],
    );
    for i in 0..=2000 {
        let t = i as f64 * 1e-3;
        let mode = if t < 1.0 { 0.0 } else { 1.0 };
        r.push_row(
            t,
            &[
                100.0 + 50.0 * t + 5.0 * (t * 20.0).sin(),
                80.0 * (t * 3.0).cos(),
                mode,
                3.0,
            ],
        );
        if i == 1000 {
            // Event instant twice: left then right value.
            r.push_row(
                t,
                &[100.0 + 50.0 * t, 80.0 * (t * 3.0).cos() + 20.0, 2.0, 3.0],
            );
        }
    }
    r.columns[0][500] = f64::NAN;
    r.events.push(EventRecord {
        time: 1.5,
        block: "clutch".into(),
        kind: EventTag::Lock,
        detail: String::new(),
    });
    r.end_time = 2.0;
    r
}

fn two_panel_scope() -> ScopeSpec {
    let mut s = ScopeSpec::new("two", vec![ScopeSignal::new("engine.w").with_unit("rpm")]);
    s.title = Some("Two panels".into());
    s.panels.push(vec![ScopeSignal::new("engine.tau")
        .with_unit("N*m")
        .with_label("torque")]);
    s
}

#[test]
fn png_has_requested_size() {
    let r = sample_result();
    let png = render_scope_png(&r, &two_panel_scope()).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let w = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((w, h), (1200, 800));

    let mut s = quick_scope("small", &["engine.w"], None);
    s.width = 640;
    s.height = 360;
    let img = decode(&render_scope_png(&r, &s).unwrap());
    assert_eq!((img.w, img.h), (640, 360));
}

#[test]
fn plot_is_not_blank_and_every_signal_colour_appears() {
    let r = sample_result();
    let mut s = ScopeSpec::new(
        "all",
        vec![
            ScopeSignal::new("engine.w"),
            ScopeSignal::new("engine.tau"),
            ScopeSignal::new("flat"),
        ],
    );
    s.panels.push(vec![ScopeSignal::new("clutch.mode")]);
    let img = decode(&render_scope_png(&r, &s).unwrap());
    let non_white = img.rgb.chunks(3).filter(|p| p != &[255, 255, 255]).count();
    assert!(
        non_white > img.w * img.h / 50,
        "only {non_white} non-white pixels"
    );
    for k in 0..4 {
        let n = img.find(rgb(k)).len();
        assert!(n > 300, "palette colour {k} appears in {n} pixels only");
    }
}

#[test]
fn panels_stack_vertically() {
    let r = sample_result();
    let img = decode(&render_scope_png(&r, &two_panel_scope()).unwrap());
    let top = img.find(rgb(0));
    let bottom = img.find(rgb(1));
    assert!(top.len() > 300 && bottom.len() > 300);
    let top_max = top.iter().map(|p| p.1).max().unwrap();
    let bottom_min = bottom.iter().map(|p| p.1).min().unwrap();
    assert!(
        top_max < bottom_min,
        "top panel ends at {top_max}, bottom starts at {bottom_min}"
    );
    assert!(top_max < img.h * 6 / 10 && bottom_min > img.h * 4 / 10);
    // Both signals span (nearly) the full width of the shared time axis.
    let span = |v: &[(usize, usize)]| {
        v.iter().map(|p| p.0).max().unwrap() - v.iter().map(|p| p.0).min().unwrap()
    };
    assert!(span(&top) > img.w * 8 / 10 && span(&bottom) > img.w * 8 / 10);
}

#[test]
fn same_input_gives_identical_bytes() {
    let r = sample_result();
    let mut s = two_panel_scope();
    s.event_markers = true;
    s.panels.push(vec![ScopeSignal::new("clutch.mode")]);
    let a = render_scope_png(&r, &s).unwrap();
    let b = render_scope_png(&r, &s).unwrap();
    assert!(a == b, "PNG output differs between two renders");
    assert_eq!(
        render_scope_svg(&r, &s).unwrap(),
        render_scope_svg(&r, &s).unwrap()
    );
}

#[test]
fn event_markers_are_drawn_when_asked() {
    let r = sample_result();
    let mut s = quick_scope("m", &["flat"], None);
    let grey = |img: &Image| img.find((160, 160, 160)).len();
    let without = grey(&decode(&render_scope_png(&r, &s).unwrap()));
    s.event_markers = true;
    let with = grey(&decode(&render_scope_png(&r, &s).unwrap()));
    assert!(with > without + 100, "marker pixels: {without} -> {with}");
}

#[test]
fn unknown_signal_error_names_it_and_lists_available() {
    let r = sample_result();
    let s = quick_scope("q", &["engine.w", "engine.speed"], Some("rpm"));
    let err = render_scope_png(&r, &s).unwrap_err();
    match &err {
        PlotError::UnknownSignal {
            scope,
            signal,
            available,
            more,
        } => {
            assert_eq!(scope, "q");
            assert_eq!(signal, "engine.speed");
            assert_eq!(available.len(), 4);
            assert_eq!(*more, 0);
            assert!(available[0].starts_with("engine."), "{available:?}");
        }
        other => panic!("wrong error {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("engine.speed") && msg.contains("clutch.mode"),
        "{msg}"
    );

    let mut many = SimResult::new("m", (0..25).map(|i| format!("b{i}.y")).collect());
    many.push_row(0.0, &[0.0; 25]);
    let err = render_scope_svg(&many, &quick_scope("q", &["x"], None)).unwrap_err();
    assert!(err.to_string().contains("(15 more)"), "{err}");
}

#[test]
fn unknown_unit_and_empty_result_errors() {
    let r = sample_result();
    let err = render_scope_png(&r, &quick_scope("q", &["engine.w"], Some("furlong"))).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, PlotError::UnknownUnit { .. }), "{msg}");
    assert!(
        msg.contains("furlong") && msg.contains("engine.w") && msg.contains("rpm"),
        "{msg}"
    );

    let empty = SimResult::new("e", vec!["a".into()]);
    let err = render_scope_png(&empty, &quick_scope("q", &["a"], None)).unwrap_err();
    assert!(matches!(err, PlotError::EmptyResult { .. }), "{err}");

    let err = render_scope_png(&r, &quick_scope("q", &[], None)).unwrap_err();
    assert!(matches!(err, PlotError::NoSignals { .. }), "{err}");
}

#[test]
fn svg_contains_title_and_labels() {
    let r = sample_result();
    let svg = render_scope_svg(&r, &two_panel_scope()).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..50]);
    assert!(svg.contains("Two panels"));
    assert!(svg.contains("torque"));
    assert!(svg.contains("time [s]"));
    assert!(svg.contains("rpm"));
}

#[test]
fn constant_signal_gets_a_range_and_is_drawn() {
    let mut r = SimResult::new("c", vec!["k".into()]);
    for i in 0..10 {
        r.push_row(i as f64, &[0.0]);
    }
    let img = decode(&render_scope_png(&r, &quick_scope("c", &["k"], None)).unwrap());
    assert!(img.find(rgb(0)).len() > 500);
}

#[test]
fn write_scopes_writes_png_and_svg() {
    let dir = tempfile::Builder::new()
        .prefix("drivelink_plots_test_")
        .tempdir()
        .unwrap();
    let r = sample_result();
    let scopes = [
        two_panel_scope(),
        quick_scope("speeds/rpm", &["engine.w"], Some("rpm")),
    ];
    let paths = write_scopes(&r, &scopes, dir.path(), true).unwrap();
    let names: Vec<_> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["two.png", "two.svg", "speeds_rpm.png", "speeds_rpm.svg"]
    );
    for p in &paths {
        assert!(std::fs::metadata(p).unwrap().len() > 1000);
    }
}

#[test]
fn quick_scope_is_one_panel_with_unit() {
    let s = quick_scope("x", &["a", "b"], Some("rpm"));
    assert_eq!(s.panels.len(), 1);
    assert_eq!(s.panels[0].len(), 2);
    assert_eq!(s.unit.as_deref(), Some("rpm"));
    assert_eq!((s.width, s.height), (1200, 800));
}

/// The texts of the rotated (axis title) `<text>` elements of an SVG, in order.
fn rotated_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter(|t| t.contains("rotate("))
        .map(|t| {
            let body = t.split('>').nth(1).unwrap_or("");
            body.trim_end_matches("</text").trim().to_string()
        })
        .collect()
}

#[test]
fn y_axis_titles_name_the_signal_or_quantity_and_the_unit() {
    let mut r = SimResult::new(
        "m",
        [
            "engine.w",
            "a.w_rel",
            "b.w_rel",
            "drive.y",
            "brake.power",
            "g.ratio",
        ]
        .map(String::from)
        .to_vec(),
    );
    r.units = ["rad/s", "rad/s", "rad/s", "W", "W", ""]
        .map(|u| (!u.is_empty()).then(|| u.to_string()))
        .to_vec();
    for i in 0..50 {
        let v = i as f64;
        r.push_row(v * 0.1, &[v, v, 2.0 * v, v, -v, 3.0]);
    }
    let mut s = ScopeSpec::new("t", vec![ScopeSignal::new("engine.w").with_unit("rpm")]);
    s.panels.push(vec![
        ScopeSignal::new("a.w_rel").with_unit("rpm"),
        ScopeSignal::new("b.w_rel").with_unit("rpm"),
    ]);
    s.panels.push(vec![
        ScopeSignal::new("drive.y").with_unit("hp"),
        ScopeSignal::new("brake.power").with_unit("hp"),
    ]);
    // No display unit: the SI unit the result knows; none at all: the name alone.
    s.panels.push(vec![ScopeSignal::new("engine.w")]);
    s.panels.push(vec![ScopeSignal::new("g.ratio")]);
    let titles = rotated_texts(&render_scope_svg(&r, &s).unwrap());
    assert_eq!(
        titles,
        [
            "engine.w [rpm]",
            "w_rel [rpm]",
            "power [hp]",
            "engine.w [rad/s]",
            "g.ratio"
        ]
    );
}

#[test]
fn y_axis_title_keeps_a_margin_from_the_image_edge() {
    let r = sample_result();
    let s = quick_scope("q", &["engine.w"], Some("rpm"));
    let img = decode(&render_scope_png(&r, &s).unwrap());
    // Dark grey text ink (the title) in the plot band, by column.
    let inked = |x: usize| {
        (100..700).any(|y| {
            let (r, g, b) = img.px(x, y);
            r < 140 && r == g && g == b
        })
    };
    let first = (0..img.w).find(|&x| inked(x)).unwrap();
    assert!(
        (8..=10).contains(&first),
        "title ink starts {first} px from the edge"
    );
}

/// The texts of the bold `<text>` elements of an SVG, in order.
fn bold_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter(|t| t.split('>').next().unwrap_or("").contains("bold"))
        .map(|t| {
            let body = t.split('>').nth(1).unwrap_or("");
            body.trim_end_matches("</text").trim().to_string()
        })
        .collect()
}

#[test]
fn every_panel_of_a_multi_panel_scope_is_titled() {
    let mut r = SimResult::new(
        "m",
        [
            "fl.forward_slip",
            "fr.forward_slip",
            "fl.sideways_slip",
            "fr.sideways_slip",
            "e.w",
        ]
        .map(String::from)
        .to_vec(),
    );
    for i in 0..20 {
        let v = i as f64;
        r.push_row(v, &[v, -v, 2.0 * v, -2.0 * v, 3.0]);
    }
    let mut s = ScopeSpec::new(
        "slips",
        vec![
            ScopeSignal::new("fl.forward_slip").with_label("fl"),
            ScopeSignal::new("fr.forward_slip").with_label("fr"),
        ],
    );
    s.panels.push(vec![
        ScopeSignal::new("fl.sideways_slip").with_label("fl"),
        ScopeSignal::new("fr.sideways_slip").with_label("fr"),
    ]);
    s.panels
        .push(vec![ScopeSignal::new("e.w").with_label("engine speed")]);
    let svg = render_scope_svg(&r, &s).unwrap();
    // The scope title, then each panel's: the common variable, or the one signal's label.
    assert_eq!(
        bold_texts(&svg),
        ["slips", "forward_slip", "sideways_slip", "engine speed"]
    );
    // A one-panel scope has the scope title only.
    let one = quick_scope("one", &["e.w", "fl.forward_slip"], None);
    assert_eq!(bold_texts(&render_scope_svg(&r, &one).unwrap()), ["one"]);
}

#[test]
fn too_many_event_markers_are_left_off_with_a_note() {
    let mut r = sample_result();
    let mut s = quick_scope("m", &["flat"], None);
    s.event_markers = true;
    // Marker grey in the plot, below the band where the note is written.
    let marker_px = |img: Image| {
        let v = img.find((160, 160, 160));
        v.iter().filter(|p| p.1 > 150).count()
    };
    let grey = |r: &SimResult| marker_px(decode(&render_scope_png(r, &s).unwrap()));
    let one = grey(&r);
    // 60 more marked instants (plus the lock at 1.5 s): more than MAX_MARKERS = 50.
    for k in 0..60 {
        r.events.push(EventRecord {
            time: 0.01 + k as f64 * 0.02,
            block: "clutch".into(),
            kind: EventTag::Unlock,
            detail: String::new(),
        });
    }
    let mut plain = s.clone();
    plain.event_markers = false;
    let none = marker_px(decode(&render_scope_png(&r, &plain).unwrap()));
    assert!(one > none + 100, "one marker drawn: {none} -> {one} px");
    assert_eq!(grey(&r), none, "61 markers are not drawn");
    let svg = render_scope_svg(&r, &s).unwrap();
    assert!(
        svg.contains("event markers off: 61 events in view (more than 50)"),
        "note missing"
    );
}

#[test]
fn trajectory_axes_carry_units_and_the_legend_names_the_signal() {
    let mut r = SimResult::new("m", vec!["car.x".into(), "car.y".into()]);
    r.units = vec![Some("m".into()), Some("m".into())];
    for i in 0..50 {
        let t = i as f64;
        r.push_row(t, &[2.0 * t, 0.05 * t * t]);
    }
    let mut s = ScopeSpec::new(
        "trajectory",
        vec![ScopeSignal::new("car.y").with_label("y")],
    );
    s.x = Some("car.x".into());
    let svg = render_scope_svg(&r, &s).unwrap();
    assert_eq!(rotated_texts(&svg), ["car.y [m]"]);
    let texts: Vec<&str> = svg
        .split("<text")
        .skip(1)
        .map(|t| {
            t.split('>')
                .nth(1)
                .unwrap_or("")
                .trim_end_matches("</text")
                .trim()
        })
        .collect();
    for text in ["car.x [m]", "y (car.y)"] {
        assert!(texts.contains(&text), "{text} missing in {texts:?}");
    }
}
