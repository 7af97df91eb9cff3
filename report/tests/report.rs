//! The report page: self-contained (no network references), every scope, the events, the
//! energy audit and the diagram present; a bad scope does not lose the rest.

use drivelink_core::model::EnergyAudit;
use drivelink_core::result::{EventRecord, EventTag, SimResult};
use drivelink_core::scope::{ScopeSignal, ScopeSpec};
use drivelink_report::{embedded_plotly_js, render_report, DiagramSvg, ReportInput};

fn result() -> SimResult {
    let mut r = SimResult::new("demo", vec!["J.w".into(), "c.mode".into(), "c.tau".into()]);
    for i in 0..=20_000 {
        let t = i as f64 * 1e-3;
        let mode = if t < 5.0 { 1.0 } else { 0.0 };
        r.push_row(t, &[10.0 * (1.0 - (-t).exp()), mode, 3.0 * t.sin()]);
    }
    r.events.push(EventRecord {
        time: 5.0,
        block: "c".into(),
        kind: EventTag::Lock,
        detail: "locked, holding torque 1.5 N·m".into(),
    });
    r.events.push(EventRecord {
        time: 7.5,
        block: "step<1>".into(),
        kind: EventTag::TimeEvent,
        detail: "step 0 -> 1 & \"quoted\"".into(),
    });
    r.end_time = 20.0;
    r
}

fn scopes() -> Vec<ScopeSpec> {
    let mut speeds = ScopeSpec::new(
        "speeds",
        vec![ScopeSignal::new("J.w")
            .with_unit("rpm")
            .with_label("flywheel")],
    );
    speeds
        .panels
        .push(vec![ScopeSignal::new("c.mode").with_label("clutch mode")]);
    let mixed = ScopeSpec::new(
        "mixed",
        vec![
            ScopeSignal::new("J.w").with_unit("rpm"),
            ScopeSignal::new("c.tau").with_unit("N*m"),
        ],
    );
    vec![speeds, mixed]
}

fn audit() -> EnergyAudit {
    EnergyAudit {
        sources: vec![("engine".into(), 1000.0)],
        losses: vec![("c".into(), 400.0)],
        kinetic_initial: 0.0,
        kinetic_final: 600.0,
        potential_initial: 0.0,
        potential_final: 0.0,
        impact_loss: 0.0,
        residual: 0.0,
        relative_residual: 0.0,
        heat: Default::default(),
    }
}

/// The page with the embedded plotly.js cut out (that library's own text mentions URLs).
fn page_without_plotly(html: &str) -> String {
    let js = embedded_plotly_js().unwrap();
    assert_eq!(
        html.matches(js).count(),
        1,
        "plotly.js embedded exactly once"
    );
    html.replace(js, "")
}

#[test]
fn report_is_self_contained_with_every_scope_event_and_the_energy_audit() {
    let r = result();
    let scopes = scopes();
    let a = audit();
    let diagram = vec![DiagramSvg {
        path: String::new(),
        title: "demo".into(),
        svg: "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"drivelink-diagram\"><rect class=\"block\" data-block=\"J\"/></svg>".into(),
    }];
    let html = render_report(&ReportInput {
        result: &r,
        scopes: &scopes,
        energy: Some(&a),
        diagram: Some(&diagram),
    })
    .unwrap();
    let own = page_without_plotly(&html);
    for bad in ["http://", "https://", "<link", "@import", " src="] {
        assert!(!own.contains(bad), "the page refers to `{bad}`");
    }
    assert!(html.starts_with("<!DOCTYPE html>"));
    for s in &scopes {
        assert!(
            own.contains(&format!("data-scope=\"{}\"", s.name)),
            "scope {} present",
            s.name
        );
    }
    for label in ["\"flywheel\"", "\"clutch mode\"", "\"J.w\"", "\"c.tau\""] {
        assert!(own.contains(label), "trace {label} present");
    }
    // Units in the hover text, the second unit on a right axis.
    assert!(own.contains("%{y:.6g} rpm") && own.contains("%{y:.6g} N·m"));
    assert!(own.contains("\"side\":\"right\""));
    // Events: in the table (escaped) and as hover markers with block and kind.
    assert!(own.contains("<td>c</td><td>lock</td><td>locked, holding torque 1.5 N·m</td>"));
    assert!(own.contains(
        "<td>step&lt;1&gt;</td><td>time_event</td><td>step 0 -&gt; 1 &amp; &quot;quoted&quot;</td>"
    ));
    // (inside the JSON data block `<` is written `\u003c`)
    assert!(own.contains("c: \\u003cb>lock\\u003c/b>"));
    // Event markers are not clipped at the plot edge; a button hides and shows them all.
    assert!(own.contains("\"cliponaxis\":false"));
    assert!(own.contains("<button class=\"event-toggle\""));
    // Energy audit: chart and numbers; the diagram inline without its namespace URL.
    assert!(own.contains("\"type\":\"sankey\""));
    assert!(own.contains("dissipated: c"));
    assert!(own.contains("data-block=\"J\""));
}

#[test]
fn long_series_are_decimated_to_a_bounded_size() {
    let r = result();
    let scopes = scopes();
    let html = render_report(&ReportInput {
        result: &r,
        scopes: &scopes,
        energy: None,
        diagram: None,
    })
    .unwrap();
    let own = page_without_plotly(&html);
    // 20 001 samples of 4 traces would be > 1 MB of numbers; decimation keeps <= 4 per bucket.
    assert!(own.len() < 600_000, "report data {} bytes", own.len());
}

#[test]
fn a_bad_scope_is_reported_in_place_and_the_rest_is_kept() {
    let r = result();
    let mut scopes = scopes();
    scopes.push(ScopeSpec::new("typo", vec![ScopeSignal::new("J.ww")]));
    let html = render_report(&ReportInput {
        result: &r,
        scopes: &scopes,
        energy: None,
        diagram: None,
    })
    .unwrap();
    assert!(html.contains("class=\"error\" data-scope=\"typo\""));
    assert!(html.contains("unknown signal `J.ww`"));
    assert!(html.contains("data-scope=\"speeds\"") && html.contains("data-scope=\"mixed\""));
}

#[test]
fn xy_scope_plots_against_its_signal_with_equal_scaling_and_no_event_strip() {
    let mut r = SimResult::new("xy", vec!["car.x".into(), "car.y".into()]);
    for i in 0..=100 {
        let a = i as f64 * 0.03;
        r.push_row(a, &[10.0 * a.sin(), 10.0 * (1.0 - a.cos())]);
    }
    r.events.push(EventRecord {
        time: 1.0,
        block: "b".into(),
        kind: EventTag::Lock,
        detail: "locked".into(),
    });
    let mut scope = ScopeSpec::new("trajectory", vec![ScopeSignal::new("car.y").with_unit("m")]);
    scope.x = Some("car.x".into());
    let fig = drivelink_report::charts::scope_figure(&r, &scope).unwrap();
    let data = fig["data"].as_array().unwrap();
    // One trace (no event strip), its x values are car.x.
    assert_eq!(data.len(), 1);
    let xs = data[0]["x"].as_array().unwrap();
    // (samples are written with 6 significant digits: relative error at most 5e-6)
    let want = r.get("car.x").unwrap()[1];
    assert!((xs[1].as_f64().unwrap() - want).abs() <= 5e-6 * want.abs());
    assert_eq!(fig["layout"]["yaxis"]["scaleanchor"], "x");
    // Both axes span the data (x: 10·sin a over a in [0, 3] from 0 to the largest sample;
    // y: 10·(1 − cos a), from 0 to 10·(1 − cos 3)) plus 3 % of it each side; the plot
    // area gives way instead.
    let range = |axis: &str| -> Vec<f64> {
        let r = fig["layout"][axis]["range"].as_array().unwrap();
        r.iter().map(|v| v.as_f64().unwrap()).collect()
    };
    let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
    let x_hi = r
        .get("car.x")
        .unwrap()
        .iter()
        .fold(0.0_f64, |m, &v| m.max(v));
    let y_hi = 10.0 * (1.0 - 3.0_f64.cos());
    let x = range("xaxis");
    assert!(
        close(x[0], -0.03 * x_hi) && close(x[1], 1.03 * x_hi),
        "{x:?}"
    );
    let y = range("yaxis");
    assert!(
        close(y[0], -0.03 * y_hi) && close(y[1], 1.03 * y_hi),
        "{y:?}"
    );
    assert_eq!(fig["layout"]["xaxis"]["constrain"], "domain");
    assert_eq!(fig["layout"]["yaxis"]["constrain"], "domain");
    assert_eq!(fig["layout"]["xaxis"]["title"]["text"], "car.x");
    assert!(fig["layout"]["shapes"].as_array().unwrap().is_empty());
    scope.x = Some("car.z".into());
    assert!(drivelink_report::charts::scope_figure(&r, &scope).is_err());
}

/// The page's markup: script bodies left out (their tags kept: they may have an id).
fn markup(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(open) = rest.find("<script") {
        let tag_end = rest[open..].find('>').map_or(rest.len(), |e| open + e + 1);
        out.push_str(&rest[..tag_end]);
        let end = rest[tag_end..]
            .find("</script>")
            .map_or(rest.len(), |e| tag_end + e);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Every `id="..."` attribute of `markup`.
fn element_ids(markup: &str) -> Vec<String> {
    markup
        .split(" id=\"")
        .skip(1)
        .filter_map(|part| part.find('"').map(|end| part[..end].to_string()))
        .collect()
}

#[test]
fn page_has_no_duplicate_element_ids() {
    use drivelink_core::block::PortDecl;
    use drivelink_core::diagram::{BlockSpec, Diagram};
    use drivelink_report::diagram::{self, BlockInfo};
    use drivelink_report::{DiagramOptions, Links, PortTable};

    // Two levels, each with a signal line (an arrow marker in each SVG).
    let spec = |name: &str, ty: &str, inner: Option<Diagram>| BlockSpec {
        name: name.into(),
        type_name: ty.into(),
        params: Default::default(),
        inner: inner.map(Box::new),
        file: None,
    };
    let mut inner = Diagram::new("sub");
    inner.blocks.push(spec("k", "Gain", None));
    inner.blocks.push(spec("m", "Gain", None));
    inner.connections.push(vec!["k.y".into(), "m.u".into()]);
    let mut d = Diagram::new("demo");
    d.blocks.push(spec("src", "Constant", None));
    d.blocks.push(spec("sub", "Subsystem", Some(inner)));
    d.connections.push(vec!["src.y".into(), "sub.u".into()]);
    let mut ports = PortTable::new();
    let info = |ports: Vec<PortDecl>| BlockInfo {
        ports,
        category: "signal".into(),
        inner: None,
    };
    ports.insert("src", info(vec![PortDecl::output("y")]));
    ports.insert("sub", info(vec![PortDecl::input("u")]));
    for b in ["sub.k", "sub.m"] {
        ports.insert(b, info(vec![PortDecl::input("u"), PortDecl::output("y")]));
    }
    let opts = DiagramOptions {
        expand: true,
        links: Links::Anchors,
    };
    let drawing = diagram::render(&d, &ports, &opts).unwrap();
    assert_eq!(drawing.levels.len(), 2);
    assert!(drawing.levels.iter().all(|l| l.svg.contains("marker-end")));

    let r = result();
    let scopes = scopes();
    let a = audit();
    let html = render_report(&ReportInput {
        result: &r,
        scopes: &scopes,
        energy: Some(&a),
        diagram: Some(&drawing.levels),
    })
    .unwrap();
    let page = markup(&html);
    let ids = element_ids(&page);
    for want in [
        "scope-0",
        "scope-1",
        "energy-chart",
        "diagram-top",
        "diagram-sub",
        "dl-data",
    ] {
        assert!(ids.iter().any(|i| i == want), "{want} in {ids:?}");
    }
    let mut seen = std::collections::HashSet::new();
    let dups: Vec<&String> = ids.iter().filter(|i| !seen.insert(*i)).collect();
    assert!(dups.is_empty(), "duplicate ids {dups:?}");
    // Every in-page reference names an element of the page.
    for part in page
        .split("url(#")
        .skip(1)
        .chain(page.split("href=\"#").skip(1))
    {
        let target = &part[..part.find(['"', ')']).unwrap()];
        assert!(
            ids.iter().any(|i| i == target),
            "#{target} refers to no element"
        );
    }
}

/// The sample times as drawn are made once per report and shared by its scopes: each
/// figure is the one its scope gives alone, time scopes and an XY scope in between alike.
#[test]
fn scopes_sharing_the_drawn_times_are_the_figures_each_scope_gives_alone() {
    use drivelink_report::charts::{scope_figure, scope_figure_with, TimeSamples};
    let mut r = SimResult::new("shared", vec!["a.y".into(), "b.y".into()]);
    for i in 0..=300 {
        let t = i as f64 / 30.0;
        r.push_row(t, &[t.sin() * 1e3 / 7.0, (0.3 * t).cos()]);
    }
    let mut xy = ScopeSpec::new("xy", vec![ScopeSignal::new("b.y")]);
    xy.x = Some("a.y".into());
    let scopes = [
        ScopeSpec::new("a", vec![ScopeSignal::new("a.y")]),
        xy,
        ScopeSpec::new(
            "both",
            vec![ScopeSignal::new("a.y"), ScopeSignal::new("b.y")],
        ),
    ];
    let mut times = TimeSamples::default();
    for scope in &scopes {
        let shared = scope_figure_with(&r, scope, &mut times).unwrap();
        assert_eq!(shared, scope_figure(&r, scope).unwrap(), "{}", scope.name);
    }
    // The time scopes' traces all draw the same times (the XY one draws a.y).
    let both = scope_figure_with(&r, &scopes[2], &mut times).unwrap();
    let xs = |k: usize| both["data"][k]["x"].clone();
    assert_eq!(xs(0), xs(1));
    assert_eq!(xs(0)[30], serde_json::json!(1.0));
}
