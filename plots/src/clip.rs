//! Clipping of polylines to a rectangle (Liang–Barsky), in axis units.
//!
//! Values far outside the visible range (a fixed `ylim`, an x window) must not reach the
//! drawing backend: mapped to pixels they would saturate to `i32::MAX` and a raster line to
//! there would take forever. Every polyline is cut to the plot rectangle first.

/// A rectangle `((x0, y0), (x1, y1))` with `x0 < x1`, `y0 < y1`.
pub type Rect = ((f64, f64), (f64, f64));

/// The parts of `poly` inside `rect`, in order. Consecutive segments that stay inside are
/// joined into one polyline; a single point inside stays a one-point polyline.
pub fn clip_polyline(poly: &[(f64, f64)], rect: Rect) -> Vec<Vec<(f64, f64)>> {
    let inside = |p: (f64, f64)| {
        p.0 >= rect.0 .0 && p.0 <= rect.1 .0 && p.1 >= rect.0 .1 && p.1 <= rect.1 .1
    };
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    if poly.len() == 1 {
        if inside(poly[0]) {
            out.push(vec![poly[0]]);
        }
        return out;
    }
    for w in poly.windows(2) {
        match clip_segment(w[0], w[1], rect) {
            Some((a, b)) => {
                if cur.last() != Some(&a) {
                    if !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                    cur.push(a);
                }
                cur.push(b);
                if b != w[1] {
                    out.push(std::mem::take(&mut cur));
                }
            }
            None => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The part of segment `a`–`b` inside `rect`, if any.
fn clip_segment(a: (f64, f64), b: (f64, f64), rect: Rect) -> Option<((f64, f64), (f64, f64))> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    let checks = [
        (-dx, a.0 - rect.0 .0),
        (dx, rect.1 .0 - a.0),
        (-dy, a.1 - rect.0 .1),
        (dy, rect.1 .1 - a.1),
    ];
    for (p, q) in checks {
        if !(p.is_finite() && q.is_finite()) {
            return None;
        }
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let r = q / p;
            if p < 0.0 {
                t0 = t0.max(r);
            } else {
                t1 = t1.min(r);
            }
        }
    }
    if t0 > t1 {
        return None;
    }
    let at = |t: f64| {
        if t == 0.0 {
            a
        } else if t == 1.0 {
            b
        } else {
            (a.0 + t * dx, a.1 + t * dy)
        }
    };
    Some((at(t0), at(t1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Rect = ((0.0, 0.0), (10.0, 10.0));

    #[test]
    fn inside_polyline_is_kept_whole() {
        let p = vec![(1.0, 1.0), (2.0, 3.0), (4.0, 2.0)];
        assert_eq!(clip_polyline(&p, R), vec![p]);
    }

    #[test]
    fn excursion_outside_is_cut_at_the_border() {
        let p = [(0.0, 5.0), (5.0, 15.0), (10.0, 5.0)];
        assert_eq!(
            clip_polyline(&p, R),
            vec![
                vec![(0.0, 5.0), (2.5, 10.0)],
                vec![(7.5, 10.0), (10.0, 5.0)]
            ]
        );
    }

    #[test]
    fn huge_values_become_border_points() {
        let p = [(1.0, 5.0), (2.0, 1e308), (3.0, 5.0)];
        let parts = clip_polyline(&p, R);
        assert_eq!(parts.len(), 2);
        for part in parts.iter().flatten() {
            assert!(part.1 <= 10.0 && part.1 >= 0.0);
        }
        assert!(clip_polyline(&[(20.0, 1.0)], R).is_empty());
    }
}
