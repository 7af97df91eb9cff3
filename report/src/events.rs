//! The event marks across a scope's panels: a dotted line at each isolated event, one
//! shaded band for each dense run of events.
//!
//! An anti-lock brake logs hundreds of lock / unlock events a second; a line for each
//! would draw a curtain over the panels. Events closer together than [`DENSE_GAP_PX`]
//! pixels (of a plot [`NOMINAL_PLOT_PX`] wide) form a run; a run of at least
//! [`DENSE_MIN_EVENTS`] events becomes one band from its first to its last event,
//! labelled with its count and kinds. The markers in the event strip stay one per event
//! (hover shows each).

use serde_json::{json, Value};

use drivelink_core::result::{EventTag, SimResult};

use crate::charts::{num, thin};

/// The plot width, in pixels, that the pixel distances below refer to.
pub const NOMINAL_PLOT_PX: f64 = 1000.0;
/// Events closer than this (pixels) belong to one run.
pub const DENSE_GAP_PX: f64 = 6.0;
/// A run of at least this many events is drawn as a band.
pub const DENSE_MIN_EVENTS: usize = 8;
/// The narrowest band, in pixels.
const MIN_BAND_PX: f64 = 2.0;
/// Vertical event lines per scope at most (evenly thinned beyond).
pub const MAX_EVENT_LINES: usize = 200;

/// A run of events closer together than the run gap.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Time of each event, in order, s.
    pub times: Vec<f64>,
    /// Events of each kind in the run, in order of first appearance.
    pub kinds: Vec<(EventTag, usize)>,
}

impl Run {
    /// Number of events in the run.
    pub fn count(&self) -> usize {
        self.times.len()
    }

    /// Time of the first event, s.
    pub fn start(&self) -> f64 {
        self.times[0]
    }

    /// Time of the last event, s.
    pub fn end(&self) -> f64 {
        self.times[self.times.len() - 1]
    }

    /// `312 events: lock 156, unlock 156`.
    pub fn label(&self) -> String {
        let kinds: Vec<String> = self
            .kinds
            .iter()
            .map(|(k, n)| format!("{} {n}", k.as_str()))
            .collect();
        format!("{} events: {}", self.count(), kinds.join(", "))
    }
}

/// The runs of the marked events of `result` (every kind but time events) with gaps of at
/// most `gap` seconds, in time order. Events with a non-finite time are left out.
pub fn runs(result: &SimResult, gap: f64) -> Vec<Run> {
    let mut events: Vec<(f64, EventTag)> = result
        .events
        .iter()
        .filter(|e| e.kind != EventTag::TimeEvent && e.time.is_finite())
        .map(|e| (e.time, e.kind))
        .collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<Run> = Vec::new();
    for (t, kind) in events {
        match out.last_mut() {
            Some(run) if t - run.end() <= gap => {
                run.times.push(t);
                match run.kinds.iter_mut().find(|k| k.0 == kind) {
                    Some(k) => k.1 += 1,
                    None => run.kinds.push((kind, 1)),
                }
            }
            _ => out.push(Run {
                times: vec![t],
                kinds: vec![(kind, 1)],
            }),
        }
    }
    out
}

/// The layout shapes marking the events of `result` on a time axis spanning `x_range`,
/// below paper height `top`: a band per dense run, a dotted line at each other event time.
pub fn event_shapes(result: &SimResult, x_range: (f64, f64), top: f64) -> Vec<Value> {
    let span = (x_range.1 - x_range.0).abs();
    let px = if span > 0.0 {
        span / NOMINAL_PLOT_PX
    } else {
        0.0
    };
    let mut lines: Vec<f64> = Vec::new();
    let mut shapes: Vec<Value> = Vec::new();
    for run in runs(result, DENSE_GAP_PX * px) {
        if run.count() >= DENSE_MIN_EVENTS {
            shapes.push(band(&run, px, top));
        } else {
            lines.extend(&run.times);
        }
    }
    lines.dedup();
    shapes.extend(thin(lines, MAX_EVENT_LINES).into_iter().map(|t| {
        json!({
            "type": "line", "xref": "x", "yref": "paper", "x0": num(t), "x1": num(t),
            "y0": 0, "y1": top, "layer": "below",
            "line": {"color": "#c8c8c8", "width": 1, "dash": "dot"}
        })
    }));
    shapes
}

/// The shaded band of a dense `run`, at least [`MIN_BAND_PX`] pixels wide (`px` seconds
/// each), labelled with its count and kinds at the top.
fn band(run: &Run, px: f64, top: f64) -> Value {
    let half = 0.5 * (MIN_BAND_PX * px - (run.end() - run.start())).max(0.0);
    json!({
        "type": "rect", "xref": "x", "yref": "paper",
        "x0": num(run.start() - half), "x1": num(run.end() + half), "y0": 0, "y1": top,
        "layer": "below", "fillcolor": "rgba(255,150,30,0.14)",
        "line": {"width": 0},
        "name": run.label(),
        "label": {"text": run.label(), "textposition": "top center",
                  "font": {"size": 10, "color": "#8a4b00"}, "yanchor": "bottom"}
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use drivelink_core::result::EventRecord;

    fn with_events(events: &[(f64, EventTag)]) -> SimResult {
        let mut r = SimResult::new("e", vec!["x".into()]);
        r.push_row(0.0, &[0.0]);
        r.push_row(10.0, &[0.0]);
        for &(time, kind) in events {
            r.events.push(EventRecord {
                time,
                block: "abs".into(),
                kind,
                detail: String::new(),
            });
        }
        r
    }

    #[test]
    fn dense_events_become_one_labelled_band_and_isolated_ones_lines() {
        // 100 alternating lock / unlock events 1 ms apart from t = 5 s (0.1 px apart on a
        // 10 s axis), isolated events at 0, 1 and 10 s, a time event (no mark) at 2 s.
        let mut ev = vec![
            (0.0, EventTag::Engage),
            (1.0, EventTag::Lock),
            (10.0, EventTag::Stop),
            (2.0, EventTag::TimeEvent),
        ];
        for i in 0..100 {
            let kind = if i % 2 == 0 {
                EventTag::Lock
            } else {
                EventTag::Unlock
            };
            ev.push((5.0 + i as f64 * 1e-3, kind));
        }
        let shapes = event_shapes(&with_events(&ev), (0.0, 10.0), 0.8);
        let bands: Vec<&Value> = shapes.iter().filter(|s| s["type"] == "rect").collect();
        assert_eq!(bands.len(), 1);
        assert_eq!(bands[0]["x0"], json!(5.0));
        assert_eq!(bands[0]["x1"], json!(5.099));
        assert_eq!(bands[0]["label"]["text"], "100 events: lock 50, unlock 50");
        let lines: Vec<f64> = shapes
            .iter()
            .filter(|s| s["type"] == "line")
            .map(|s| s["x0"].as_f64().unwrap())
            .collect();
        assert_eq!(lines, vec![0.0, 1.0, 10.0]);
    }

    #[test]
    fn a_short_run_keeps_its_lines_and_a_narrow_band_is_widened() {
        // A gear shift: three events within 20 ms, far below the band count.
        let shift = [
            (3.0, EventTag::Unlock),
            (3.01, EventTag::Lock),
            (3.02, EventTag::Engage),
        ];
        let shapes = event_shapes(&with_events(&shift), (0.0, 10.0), 1.0);
        assert!(shapes.iter().all(|s| s["type"] == "line"));
        assert_eq!(shapes.len(), 3);
        // Eight events at one instant: a band 2 px (of 1000 over 10 s) wide.
        let burst = [(4.0, EventTag::Impact); 8];
        let shapes = event_shapes(&with_events(&burst), (0.0, 10.0), 1.0);
        assert_eq!(shapes.len(), 1);
        let (x0, x1) = (
            shapes[0]["x0"].as_f64().unwrap(),
            shapes[0]["x1"].as_f64().unwrap(),
        );
        assert!((x1 - x0 - 0.02).abs() < 1e-12 && (x0 + x1 - 8.0).abs() < 1e-12);
    }
}
