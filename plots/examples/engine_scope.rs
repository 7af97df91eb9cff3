//! Renders a synthetic engine run (speed in rpm, torque in N·m, a clutch mode as steps, lock
//! and unlock events) to a PNG (default `out/plots_example.png`) and an SVG next to it.

use drivelink_results::result::{EventRecord, EventTag, SimResult};
use drivelink_results::scope::{ScopeSignal, ScopeSpec};

fn main() {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "out/plots_example.png".into());
    let names = [
        "engine.w",
        "gearbox.w_in",
        "engine.tau",
        "clutch.tau",
        "clutch.mode",
    ];
    let mut r = SimResult::new("example", names.iter().map(|s| s.to_string()).collect());
    let lock_t = 1.2;
    let unlock_t = 3.1;
    let n = 5000;
    for i in 0..=n {
        let t = 5.0 * i as f64 / n as f64;
        let mode = if t < lock_t {
            1.0
        } else if t < unlock_t {
            2.0
        } else {
            1.0
        };
        let w_e = 80.0 + 30.0 * (1.0 - (-t).exp()) + 5.0 * (t * 7.0).sin();
        let w_g = if t < lock_t {
            w_e * t / lock_t
        } else if mode == 2.0 {
            w_e
        } else {
            w_e - 25.0 * (t - unlock_t)
        };
        let tau_e = 120.0 + 40.0 * (t * 1.3).sin();
        let tau_c = if mode == 2.0 { tau_e - 10.0 } else { 80.0 };
        r.push_row(t, &[w_e, w_g, tau_e, tau_c, mode]);
        // Event instants appear twice: left value then right value.
        let next = 5.0 * (i + 1) as f64 / n as f64;
        if (t < lock_t && next > lock_t) || (t < unlock_t && next > unlock_t) {
            let te = if next > lock_t && t < lock_t {
                lock_t
            } else {
                unlock_t
            };
            let left = [w_e, w_g, tau_e, tau_c, mode];
            let right_mode = if te == lock_t { 2.0 } else { 1.0 };
            r.push_row(te, &left);
            r.push_row(te, &[w_e, w_g, tau_e, tau_c - 15.0, right_mode]);
            r.events.push(EventRecord {
                time: te,
                block: "clutch".into(),
                kind: if te == lock_t {
                    EventTag::Lock
                } else {
                    EventTag::Unlock
                },
                detail: String::new(),
            });
        }
    }
    r.columns[1][100] = f64::NAN; // a gap
    r.events.push(EventRecord {
        time: 4.2,
        block: "brake".into(),
        kind: EventTag::Engage,
        detail: String::new(),
    });
    let mut scope = ScopeSpec::new(
        "example",
        vec![
            ScopeSignal::new("engine.w").with_label("engine speed"),
            ScopeSignal::new("gearbox.w_in").with_label("gearbox input speed"),
        ],
    );
    scope.title = Some("Launch: engine and clutch".into());
    scope.unit = Some("rpm".into());
    scope.panels.push(vec![
        ScopeSignal::new("engine.tau")
            .with_unit("N*m")
            .with_label("engine torque"),
        ScopeSignal::new("clutch.tau")
            .with_unit("N*m")
            .with_label("clutch torque"),
    ]);
    scope
        .panels
        .push(vec![ScopeSignal::new("clutch.mode").with_unit("1")]);
    scope.event_markers = true;
    let png = drivelink_plots::render_scope_png(&r, &scope).expect("render");
    if let Some(dir) = std::path::Path::new(&out).parent() {
        std::fs::create_dir_all(dir).expect("create output directory");
    }
    std::fs::write(&out, png).expect("write png");
    let svg = drivelink_plots::render_scope_svg(&r, &scope).expect("render svg");
    std::fs::write(std::path::Path::new(&out).with_extension("svg"), svg).expect("write svg");
    println!("wrote {out}");
}
