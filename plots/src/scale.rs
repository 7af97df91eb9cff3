//! Robust autoscale: a start-up spike does not crush the rest of a panel.
//!
//! The rule, per y axis of a time scope without a fixed `ylim` (mode panels excepted):
//! take the finite display values of the axis's signals in the visible window, their 1st
//! and 99th percentiles `p1`, `p99` and the bulk span `s = p99 - p1`. Samples outside
//! `[p1 - s, p99 + s]` are *far*. When there are far samples and every one of them lies in
//! the first [`START_FRACTION`] of the window's time span, the axis is fitted to the other
//! samples only, and the renderer marks where the data go off-scale (a triangle at the plot
//! edge with the extreme value). Far samples anywhere else are real events (an impact, a
//! shift) and keep the axis fitted to all data; so do windows with fewer than
//! [`MIN_SAMPLES`] samples or a constant bulk (`s = 0`).

use std::ops::Range;

use crate::signals::Panel;

/// Far samples must all lie in this leading fraction of the window's time span.
pub const START_FRACTION: f64 = 0.1;
/// Fewer finite samples on an axis than this: no clipping.
pub const MIN_SAMPLES: usize = 50;

/// The value at quantile `q` (0..=1) of `v` (reordered; not empty).
fn quantile(v: &mut [f64], q: f64) -> f64 {
    let k = ((v.len() - 1) as f64 * q).round() as usize;
    *v.select_nth_unstable_by(k, f64::total_cmp).1
}

/// The range of the bulk of axis `axis` of `panel` over the samples `inside` (times `time`)
/// when a start-up spike is to be left off-scale by the rule above; `None` to fit all data.
pub fn bulk_range(
    panel: &Panel<'_>,
    axis: usize,
    inside: Range<usize>,
    time: &[f64],
) -> Option<(f64, f64)> {
    let on_axis: Vec<_> = panel.signals.iter().filter(|s| s.axis == axis).collect();
    let span_of = |s: &crate::signals::PanelSignal<'_>| {
        let hi = inside.end.min(s.values.len()).min(time.len());
        inside.start.min(hi)..hi
    };
    let mut values: Vec<f64> = on_axis
        .iter()
        .flat_map(|s| s.values[span_of(s)].iter().map(|v| v * s.factor))
        .filter(|v| v.is_finite())
        .collect();
    if values.len() < MIN_SAMPLES {
        return None;
    }
    let (p1, p99) = (quantile(&mut values, 0.01), quantile(&mut values, 0.99));
    let s = p99 - p1;
    if !(s > 0.0 && s.is_finite()) {
        return None;
    }
    let (far_lo, far_hi) = (p1 - s, p99 + s);
    let (t0, t1) = (
        time[inside.start],
        time[inside.end.max(inside.start + 1) - 1],
    );
    let start_end = t0 + START_FRACTION * (t1 - t0);
    let (mut lo, mut hi, mut any_far) = (f64::INFINITY, f64::NEG_INFINITY, false);
    for s in &on_axis {
        let r = span_of(s);
        for (v, t) in s.values[r.clone()].iter().zip(&time[r]) {
            let v = v * s.factor;
            if !v.is_finite() {
                continue;
            }
            if v < far_lo || v > far_hi {
                if *t > start_end {
                    return None;
                }
                any_far = true;
            } else {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    (any_far && lo <= hi).then_some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signals::{Dash, PanelSignal};

    fn panel(values: &[f64]) -> Panel<'_> {
        Panel {
            signals: vec![PanelSignal {
                signal: "g.ratio",
                label: "g.ratio",
                unit: String::new(),
                factor: 1.0,
                values,
                si_unit: None,
                step: false,
                axis: 0,
                dash: Dash::Solid,
                color: 0,
            }],
            units: vec![String::new()],
        }
    }

    #[test]
    fn start_up_spike_is_left_off_scale() {
        let time: Vec<f64> = (0..1000).map(|i| i as f64 * 0.02).collect();
        // A ratio of 2.9 then 1.5 after a shift, with a spike to 13.6 in the first 0.1 s.
        let mut v: Vec<f64> = time
            .iter()
            .map(|&t| if t < 8.0 { 2.9 } else { 1.5 })
            .collect();
        v[1] = 12.6;
        v[2] = 13.6;
        v[3] = f64::NAN;
        let p = panel(&v);
        assert_eq!(bulk_range(&p, 0, 0..1000, &time), Some((1.5, 2.9)));
        // The same spike in the middle of the run is data: no clipping.
        v[1] = 2.9;
        v[2] = 2.9;
        v[500] = 13.6;
        let p = panel(&v);
        assert_eq!(bulk_range(&p, 0, 0..1000, &time), None);
        // No far sample: no clipping.
        v[500] = 2.9;
        let p = panel(&v);
        assert_eq!(bulk_range(&p, 0, 0..1000, &time), None);
    }
}
