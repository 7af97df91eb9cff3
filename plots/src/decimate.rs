//! Per-pixel-column decimation (min/max/first/last) and staircase expansion of samples.
//!
//! A plot only has a few thousand pixel columns; handing 10^6 points to the drawing backend
//! is slow and pointless. [`decimate`] keeps, for every run of consecutive samples falling
//! into one pixel column, the first, the minimum, the maximum and the last sample (in sample
//! order), so the drawn envelope is identical and no single-sample peak disappears.
//! Non-finite values (NaN) break the line: the output is a list of polyline segments.

/// Points of one pixel column, reduced to at most four samples.
#[derive(Clone, Copy)]
struct Bucket {
    col: i64,
    first: (usize, (f64, f64)),
    min: (usize, (f64, f64)),
    max: (usize, (f64, f64)),
    last: (usize, (f64, f64)),
}

impl Bucket {
    fn new(col: i64, k: usize, p: (f64, f64)) -> Self {
        Bucket {
            col,
            first: (k, p),
            min: (k, p),
            max: (k, p),
            last: (k, p),
        }
    }
    fn add(&mut self, k: usize, p: (f64, f64)) {
        if p.1 < self.min.1 .1 {
            self.min = (k, p);
        }
        if p.1 > self.max.1 .1 {
            self.max = (k, p);
        }
        self.last = (k, p);
    }
    fn flush(&self, out: &mut Vec<(f64, f64)>) {
        let mut pts = [self.first, self.min, self.max, self.last];
        pts.sort_by_key(|&(k, _)| k);
        let mut prev = usize::MAX;
        for (k, p) in pts {
            if k != prev {
                out.push(p);
                prev = k;
            }
        }
    }
}

/// Reduce `points` (x nondecreasing) to at most four points per pixel column.
///
/// `x_range` is mapped onto `columns` pixel columns; points with a non-finite coordinate
/// end the current segment. Returns the polyline segments in order.
pub fn decimate<I>(points: I, x_range: (f64, f64), columns: usize) -> Vec<Vec<(f64, f64)>>
where
    I: IntoIterator<Item = (f64, f64)>,
{
    let columns = columns.max(1);
    let (x0, x1) = x_range;
    let span = x1 - x0;
    let scale = if span > 0.0 && span.is_finite() {
        columns as f64 / span
    } else {
        0.0
    };
    let max_col = columns as i64 - 1;

    let mut segments = Vec::new();
    let mut seg: Vec<(f64, f64)> = Vec::new();
    let mut bucket: Option<Bucket> = None;

    for (k, p) in points.into_iter().enumerate() {
        if !(p.0.is_finite() && p.1.is_finite()) {
            if let Some(b) = bucket.take() {
                b.flush(&mut seg);
            }
            if !seg.is_empty() {
                segments.push(std::mem::take(&mut seg));
            }
            continue;
        }
        let col = (((p.0 - x0) * scale).floor() as i64).clamp(0, max_col);
        match bucket.as_mut() {
            Some(b) if b.col == col => b.add(k, p),
            _ => {
                if let Some(b) = bucket.take() {
                    b.flush(&mut seg);
                }
                bucket = Some(Bucket::new(col, k, p));
            }
        }
    }
    if let Some(b) = bucket.take() {
        b.flush(&mut seg);
    }
    if !seg.is_empty() {
        segments.push(seg);
    }
    segments
}

/// Samples `(t[i], y[i] * factor)` in order.
pub fn linear<'a>(
    t: &'a [f64],
    y: &'a [f64],
    factor: f64,
) -> impl Iterator<Item = (f64, f64)> + 'a {
    t.iter().zip(y).map(move |(&t, &y)| (t, y * factor))
}

/// Staircase of the samples: each value is held until the next sample time, where the line
/// jumps vertically (`(t[i], y[i-1])` then `(t[i], y[i])`). A NaN sample breaks the line.
pub fn staircase<'a>(
    t: &'a [f64],
    y: &'a [f64],
    factor: f64,
) -> impl Iterator<Item = (f64, f64)> + 'a {
    let n = t.len().min(y.len());
    (0..n).flat_map(move |i| {
        let cur = (t[i], y[i] * factor);
        let hold = if i > 0 && y[i - 1].is_finite() && y[i].is_finite() {
            Some((t[i], y[i - 1] * factor))
        } else {
            None
        };
        hold.into_iter().chain(std::iter::once(cur))
    })
}

/// Whether a signal should be drawn as steps: its name ends in `mode`, or it takes only a
/// handful (at most 8) of distinct integer values.
pub fn is_step_like(name: &str, values: &[f64]) -> bool {
    if name.to_ascii_lowercase().ends_with("mode") {
        return true;
    }
    let mut seen: Vec<f64> = Vec::with_capacity(8);
    let mut any = false;
    for &v in values {
        if v.is_nan() {
            continue;
        }
        if !v.is_finite() || v.fract() != 0.0 || v.abs() > 1e6 {
            return false;
        }
        any = true;
        if !seen.contains(&v) {
            if seen.len() == 8 {
                return false;
            }
            seen.push(v);
        }
    }
    any && seen.len() > 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_single_sample_spike_in_a_million() {
        let n = 1_000_000;
        let t: Vec<f64> = (0..n).map(|i| i as f64 * 1e-6).collect();
        let mut y = vec![0.0; n];
        y[654_321] = 5.0;
        y[123_457] = -3.0;
        let segs = decimate(linear(&t, &y, 1.0), (t[0], t[n - 1]), 1100);
        assert_eq!(segs.len(), 1);
        let pts = &segs[0];
        assert!(pts.len() <= 4 * 1100, "{} points", pts.len());
        assert!(pts.iter().any(|p| p.1 == 5.0 && p.0 == t[654_321]));
        assert!(pts.iter().any(|p| p.1 == -3.0 && p.0 == t[123_457]));
        assert_eq!(pts.first(), Some(&(0.0, 0.0)));
        assert_eq!(pts.last(), Some(&(t[n - 1], 0.0)));
        assert!(pts.windows(2).all(|w| w[0].0 <= w[1].0), "order kept");
    }

    #[test]
    fn nan_breaks_the_line() {
        let t = [0.0, 1.0, 2.0, 3.0, 4.0];
        let y = [1.0, 2.0, f64::NAN, 3.0, 4.0];
        let segs = decimate(linear(&t, &y, 1.0), (0.0, 4.0), 1000);
        assert_eq!(
            segs,
            vec![vec![(0.0, 1.0), (1.0, 2.0)], vec![(3.0, 3.0), (4.0, 4.0)]]
        );
    }

    #[test]
    fn sparse_points_pass_through_and_event_duplicates_stay() {
        let t = [0.0, 0.5, 0.5, 1.0];
        let y = [1.0, 1.5, 9.0, 9.0];
        let segs = decimate(linear(&t, &y, 2.0), (0.0, 1.0), 1000);
        assert_eq!(
            segs,
            vec![vec![(0.0, 2.0), (0.5, 3.0), (0.5, 18.0), (1.0, 18.0)]]
        );
    }

    #[test]
    fn staircase_holds_previous_value() {
        let t = [0.0, 1.0, 2.0];
        let y = [0.0, 1.0, 3.0];
        let pts: Vec<_> = staircase(&t, &y, 1.0).collect();
        assert_eq!(
            pts,
            vec![(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (2.0, 1.0), (2.0, 3.0)]
        );
    }

    #[test]
    fn step_detection() {
        assert!(is_step_like("clutch.mode", &[0.5]));
        assert!(is_step_like("gearbox.gear", &[1.0, 2.0, 2.0, 3.0]));
        assert!(!is_step_like("engine.w", &[1.0, 1.5]));
        assert!(!is_step_like("const", &[2.0, 2.0]));
        let many: Vec<f64> = (0..20).map(f64::from).collect();
        assert!(!is_step_like("counter", &many));
    }
}
