//! The report page: one HTML file with plotly.js, the figure data and the tables inline.
//!
//! Tables (summary, energy numbers, event log) are written as HTML here, so they read even
//! with scripts off; the charts are drawn by plotly.js from a JSON block
//! (`<script type="application/json" id="dl-data">`) by the small client script in
//! `js`. All text from the model is escaped.

use std::fmt::Write;

use serde_json::{json, Value};

use drivelink_core::model::EnergyAudit;
use drivelink_core::result::{EventTag, SimResult};

use crate::charts::{scope_figure_with, TimeSamples};
use crate::diagram::{anchor, block_types, DiagramSvg};
use crate::energy::{self, clean, energy_figure, fmt_energy, fmt_joules, loss_label};
use crate::js;
pub use crate::markup::escape;
use crate::{ReportError, ReportInput};

/// At most this many event rows are written into the table (the rest are in `events.csv`).
pub const MAX_EVENT_ROWS: usize = 10_000;

/// JSON text safe inside a `<script>` element (`<` written as `\u003c`).
fn script_json(v: &Value) -> String {
    v.to_string().replace('<', "\\u003c")
}

const STYLE: &str = r#"
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;margin:0;color:#222;background:#f6f7f9}
header{background:#1f2d3d;color:#fff;padding:14px 24px}
header h1{margin:0;font-size:22px}
header .sub{opacity:.8;font-size:13px;margin-top:4px}
nav{position:sticky;top:0;z-index:10;background:#fff;border-bottom:1px solid #ddd;padding:6px 24px;font-size:14px}
nav a{margin-right:14px;color:#1f6fb2;text-decoration:none}
main{padding:8px 24px 40px}
section{background:#fff;border:1px solid #e1e4e8;border-radius:6px;margin:16px 0;padding:12px 16px}
h2{font-size:18px;margin:4px 0 10px}
h3{font-size:15px;margin:14px 0 6px}
table{border-collapse:collapse;font-size:13px}
td,th{border-bottom:1px solid #eee;padding:3px 10px;text-align:left;vertical-align:top}
th{background:#f3f4f6;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.status-completed,.status-stopped{color:#1a7f37;font-weight:bold}
.status-failed{color:#cf222e;font-weight:bold}
.chart{width:100%;min-height:200px}
.error{color:#cf222e;background:#fff0f0;border:1px solid #f5c2c7;padding:8px;border-radius:4px}
.diagram{overflow:auto;max-height:85vh;border:1px solid #eee}
.diagram.fit svg{width:100%;height:auto}
button.fit-toggle,button.event-toggle{font-size:12px;margin-bottom:6px}
.events{max-height:480px;overflow:auto}
details{margin:8px 0}
summary{cursor:pointer;font-weight:600}
.note{color:#666;font-size:12px}
"#;

/// The whole page.
pub fn page(input: &ReportInput<'_>) -> Result<String, ReportError> {
    let r = input.result;
    let plotly = js::PLOTLY_JS;
    let mut figures: Vec<Value> = Vec::new();
    let mut body = String::new();

    summary_section(&mut body, r);
    if let Some(levels) = input.diagram {
        diagram_section(&mut body, levels);
    }

    body.push_str("<section id=\"scopes\"><h2>Scopes</h2>\n");
    if input.scopes.is_empty() {
        body.push_str("<p class=\"note\">The model defines no scopes.</p>\n");
    } else if !r.events.is_empty() {
        body.push_str("<button class=\"event-toggle\" type=\"button\" aria-pressed=\"true\">hide events on the charts</button> <span class=\"note\">(markers, lines and bands; the legend hides single kinds)</span>\n");
    }
    let mut times = TimeSamples::default();
    for (i, scope) in input.scopes.iter().enumerate() {
        let id = format!("scope-{i}");
        match scope_figure_with(r, scope, &mut times) {
            Ok(fig) => {
                let _ = writeln!(
                    body,
                    "<div class=\"chart\" id=\"{id}\" data-scope=\"{}\"></div>",
                    escape(&scope.name)
                );
                figures.push(json!({"id": id, "figure": fig}));
            }
            Err(e) => {
                let _ = writeln!(
                    body,
                    "<h3>{}</h3><p class=\"error\" data-scope=\"{}\">{}</p>",
                    escape(scope.title_text()),
                    escape(&scope.name),
                    escape(&e.to_string())
                );
            }
        }
    }
    body.push_str("</section>\n");

    if let Some(a) = input.energy {
        let types = input.diagram.map(block_types).unwrap_or_default();
        energy_section(&mut body, a, &types);
        figures.push(json!({"id": "energy-chart", "figure": energy_figure(a, &types)}));
    }
    events_section(&mut body, r);

    let pool = crate::pool::pool_arrays(&mut figures);
    let mut html = String::with_capacity(plotly.len() + body.len() + (1 << 16));
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        html,
        "<title>drivelink report: {}</title>",
        escape(&r.model)
    );
    let _ = writeln!(html, "<style>{STYLE}</style>");
    // plotly.js (MIT licence), embedded: the page needs no network.
    html.push_str("<script>\n");
    html.push_str(plotly);
    html.push_str("\n</script>\n</head>\n<body>\n");
    let _ = writeln!(
        html,
        "<header><h1>{}</h1><div class=\"sub\">drivelink run report &middot; status <b>{}</b> &middot; t = {} s</div></header>",
        escape(&r.model),
        r.status.as_str(),
        r.end_time
    );
    html.push_str("<nav><a href=\"#summary\">Summary</a>");
    if input.diagram.is_some() {
        html.push_str("<a href=\"#diagram\">Diagram</a>");
    }
    html.push_str("<a href=\"#scopes\">Scopes</a>");
    for (i, s) in input.scopes.iter().enumerate() {
        let _ = write!(html, "<a href=\"#scope-{i}\">{}</a>", escape(&s.name));
    }
    if input.energy.is_some() {
        html.push_str("<a href=\"#energy\">Energy</a>");
    }
    html.push_str("<a href=\"#events\">Events</a></nav>\n<main>\n");
    html.push_str(&body);
    html.push_str("</main>\n");
    let _ = writeln!(
        html,
        "<script type=\"application/json\" id=\"dl-data\">{}</script>",
        script_json(&json!({ "figures": figures, "pool": pool }))
    );
    let _ = writeln!(html, "<script>{}</script>", js::CLIENT);
    html.push_str("</body>\n</html>\n");
    Ok(html)
}

fn row(body: &mut String, k: &str, v: &str) {
    let _ = writeln!(body, "<tr><th>{}</th><td>{v}</td></tr>", escape(k));
}

fn summary_section(body: &mut String, r: &SimResult) {
    body.push_str("<section id=\"summary\"><h2>Run summary</h2><table>\n");
    row(body, "model", &escape(&r.model));
    row(
        body,
        "status",
        &format!("<span class=\"status-{0}\">{0}</span>", r.status.as_str()),
    );
    if !r.message.is_empty() {
        row(body, "message", &escape(&r.message));
    }
    row(body, "end time", &format!("{} s", r.end_time));
    row(
        body,
        "solver steps",
        &format!(
            "{} accepted, {} rejected",
            r.stats.steps, r.stats.rejected_steps
        ),
    );
    row(
        body,
        "right-hand side evaluations",
        &r.stats.rhs_evals.to_string(),
    );
    row(body, "solver events", &r.stats.events.to_string());
    let mut kinds: Vec<String> = Vec::new();
    for k in [
        EventTag::Lock,
        EventTag::Unlock,
        EventTag::Engage,
        EventTag::Free,
        EventTag::ZeroCrossing,
        EventTag::TimeEvent,
        EventTag::Impact,
        EventTag::Shift,
        EventTag::Stall,
        EventTag::Touchdown,
        EventTag::Liftoff,
        EventTag::Stop,
    ] {
        let n = r.events.iter().filter(|e| e.kind == k).count();
        if n > 0 {
            kinds.push(format!("{n} {}", k.as_str()));
        }
    }
    row(
        body,
        "logged events",
        &format!("{} ({})", r.events.len(), escape(&kinds.join(", "))),
    );
    row(
        body,
        "samples",
        &format!("{} × {} variables", r.time.len(), r.names.len()),
    );
    row(body, "wall time", &format!("{:.3} s", r.wall_time_s));
    body.push_str("</table></section>\n");
}

fn diagram_section(body: &mut String, levels: &[DiagramSvg]) {
    body.push_str("<section id=\"diagram\"><h2>Block diagram</h2>\n");
    body.push_str("<p class=\"note\">Signal lines are arrows; mechanical lines are thick (blue: rotational, green: translational). Boxes with a double outline open their inner diagram (click them, or the list below).</p>\n");
    for (i, l) in levels.iter().enumerate() {
        // Inline SVG needs no namespace declaration in HTML; each level's arrow marker
        // gets an id of its own (ids are page-wide).
        let mut svg = l
            .svg
            .replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1);
        if i > 0 {
            svg = svg
                .replace("id=\"dl-arrow\"", &format!("id=\"dl-arrow-{i}\""))
                .replace("url(#dl-arrow)", &format!("url(#dl-arrow-{i})"));
        }
        if i == 0 {
            body.push_str("<button class=\"fit-toggle\" type=\"button\">actual size / fit to width</button>\n");
            let _ = writeln!(
                body,
                "<div class=\"diagram fit\" id=\"diagram-top\">{svg}</div>"
            );
        } else {
            let _ = writeln!(
                body,
                "<details id=\"{}\"><summary>{}</summary><div class=\"diagram fit\">{svg}</div></details>",
                anchor(&l.path),
                escape(&l.title)
            );
        }
    }
    body.push_str("</section>\n");
}

fn energy_section(body: &mut String, a: &EnergyAudit, types: &energy::BlockTypes) {
    body.push_str("<section id=\"energy\"><h2>Energy audit</h2>\n<div class=\"chart\" id=\"energy-chart\"></div>\n");
    body.push_str("<table><tr><th>item</th><th>energy</th><th>J</th></tr>\n");
    let scale = energy::scale(a);
    let mut line = |name: &str, j: f64| {
        let j = clean(j, scale);
        let _ = writeln!(
            body,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(name),
            fmt_energy(j),
            fmt_joules(j)
        );
    };
    for (n, w) in &a.sources {
        line(&format!("source: {n}"), *w);
    }
    for (n, w) in &a.losses {
        line(&format!("dissipated: {}", loss_label(n, types)), *w);
    }
    line("kinetic energy, start", a.kinetic_initial);
    line("kinetic energy, end", a.kinetic_final);
    line("potential energy, start", a.potential_initial);
    line("potential energy, end", a.potential_final);
    line(
        "impacts (velocity jumps) and stored energy that jumped at events (− = added)",
        a.impact_loss,
    );
    line(
        "numerical residual (sources − losses − impacts − ΔKE − ΔPE)",
        a.residual,
    );
    let rel = clean(a.relative_residual, 1.0);
    let _ =
        writeln!(
        body,
        "<tr><td>relative residual</td><td class=\"num\">{}</td><td></td></tr></table></section>",
        if rel == 0.0 { "0".to_string() } else { format!("{rel:.3e}") }
    );
}

fn events_section(body: &mut String, r: &SimResult) {
    let _ = writeln!(
        body,
        "<section id=\"events\"><h2>Event log</h2><p><input id=\"event-filter\" type=\"search\" placeholder=\"filter (block, kind, text)\" size=\"40\"> <span class=\"note\">{} events{}</span></p>",
        r.events.len(),
        if r.events.len() > MAX_EVENT_ROWS {
            format!(", the first {MAX_EVENT_ROWS} shown (all in events.csv)")
        } else {
            String::new()
        }
    );
    body.push_str("<div class=\"events\"><table id=\"event-table\"><thead><tr><th>time [s]</th><th>block</th><th>kind</th><th>detail</th></tr></thead><tbody>\n");
    for e in r.events.iter().take(MAX_EVENT_ROWS) {
        let _ = writeln!(
            body,
            "<tr><td class=\"num\" title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            e.time,
            crate::charts::num(e.time),
            escape(&e.block),
            e.kind.as_str(),
            escape(&e.detail)
        );
    }
    body.push_str("</tbody></table></div></section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_script_ends() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        let v = json!({"t": "</script><script>alert(1)</script>"});
        assert!(!script_json(&v).contains("</script"));
    }
}
