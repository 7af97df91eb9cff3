use drivelink_core::result::SimResult;
use drivelink_core::scope::{ScopeSignal, ScopeSpec};
use drivelink_plots::*;
fn main() {
    let mut r = SimResult::new(
        "m",
        vec![
            "a".into(),
            "b".into(),
            "e.w".into(),
            "e.tau".into(),
            "big".into(),
        ],
    );
    for i in 0..=1000 {
        let t = i as f64 * 0.01;
        r.push_row(t, &[t.sin(), t.sin(), 100.0 + t, 50.0 - t * t, 1e308]);
    }
    let s = quick_scope("eq", &["a", "b"], None);
    std::fs::write("/tmp/hang/eq.png", render_scope_png(&r, &s).unwrap()).unwrap();
    let mut s = ScopeSpec::new(
        "mixed",
        vec![
            ScopeSignal::new("e.w").with_unit("rpm"),
            ScopeSignal::new("e.tau").with_unit("N*m"),
        ],
    );
    s.panels.push(vec![ScopeSignal::new("a")]);
    std::fs::write("/tmp/hang/mixed.png", render_scope_png(&r, &s).unwrap()).unwrap();
    std::fs::write("/tmp/hang/mixed.svg", render_scope_svg(&r, &s).unwrap()).unwrap();
    let s = quick_scope("big", &["big"], None);
    std::fs::write("/tmp/hang/big.png", render_scope_png(&r, &s).unwrap()).unwrap();
    let s = quick_scope("win", &["e.tau"], None);
    std::fs::write(
        "/tmp/hang/win.png",
        render_scope_png_view(
            &r,
            &s,
            &View {
                xlim: Some((2.0, 4.0)),
            },
        )
        .unwrap(),
    )
    .unwrap();
}
