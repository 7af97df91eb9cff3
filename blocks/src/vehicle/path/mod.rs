//! Path geometry for `PathFollower`: the nearest point of a path to a position (arc-length
//! progress, signed lateral error, path heading) and the point at a given progress.
//!
//! Three shapes, all evaluated without mutation (`&self`) and deterministically:
//! - [`Path::Line`]: a straight line through `(x0, y0)` with heading `heading`; analytic.
//! - [`Path::Circle`]: a circle of radius `R` to the left of the x axis, tangent to it at
//!   the origin (centre `(0, R)`), driven counter-clockwise from the origin (a car at the
//!   origin heading +x starts on it); analytic. Its progress is `R·(θ + 2π·lap)`, with `θ`
//!   in `(−π, π]` measured counter-clockwise from the start point and `lap` a mode the
//!   caller keeps (the crossing of the branch cut `θ = ±π`, the top of the circle, is a
//!   located event of the block).
//! - [`Path::Polyline`]: a point list; progress is the arc length from the first point, the
//!   first and last segments extend beyond the ends (a car before the start has a negative
//!   progress, one past the end a progress beyond the length). The nearest segment is the
//!   first one at the minimum distance (ties go to the lower index), so the progress may
//!   jump where the path comes back near itself. A polyline sampled on a uniform grid in
//!   `x` (the ISO 3888-2 centre line) searches only the segments whose `x` range can hold
//!   the nearest point: the same result as the full scan, in O(window).
//!
//! Signs: the lateral error is positive when the position is to the left of the path (seen
//! in the direction of travel); headings are radians counter-clockwise from +x.

pub mod iso3888;

use std::f64::consts::PI;

/// The nearest point of a path to a position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Projection {
    /// Arc length along the path, m.
    pub s: f64,
    /// Signed distance, m (+ = left of the path).
    pub lateral: f64,
    /// Heading of the path there, rad.
    pub heading: f64,
}

/// A polyline with its cumulative arc lengths.
#[derive(Debug, Clone, PartialEq)]
pub struct Polyline {
    pts: Vec<[f64; 2]>,
    /// Arc length at each point.
    cum: Vec<f64>,
    /// Heading of each segment.
    seg_heading: Vec<f64>,
    /// `(x of the first point, dx)` when the points are on a uniform increasing grid in x.
    grid: Option<(f64, f64)>,
}

/// A path.
#[derive(Debug, Clone, PartialEq)]
pub enum Path {
    /// A straight line through `origin` with heading `heading`.
    Line { origin: [f64; 2], heading: f64 },
    /// The counter-clockwise circle of radius `radius` through the origin, centre (0, R).
    Circle { radius: f64 },
    /// A point list.
    Polyline(Polyline),
}

/// Why a point list is not a path: the index of the offending point and the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct PathError {
    pub index: Option<usize>,
    pub message: String,
}

impl Polyline {
    /// A polyline through `pts` (at least two, finite, no repeated consecutive points).
    pub fn new(pts: Vec<[f64; 2]>) -> Result<Polyline, PathError> {
        if pts.len() < 2 {
            return Err(PathError {
                index: None,
                message: format!("needs at least two points, got {}", pts.len()),
            });
        }
        let mut cum = Vec::with_capacity(pts.len());
        let mut seg_heading = Vec::with_capacity(pts.len() - 1);
        cum.push(0.0);
        for (i, p) in pts.iter().enumerate() {
            if !p[0].is_finite() || !p[1].is_finite() {
                return Err(PathError {
                    index: Some(i),
                    message: format!("point {i} must be finite, got [{}, {}]", p[0], p[1]),
                });
            }
            if i == 0 {
                continue;
            }
            let q = pts[i - 1];
            let (dx, dy) = (p[0] - q[0], p[1] - q[1]);
            let len = dx.hypot(dy);
            if !(len > 0.0) {
                return Err(PathError {
                    index: Some(i),
                    message: format!(
                        "point {i} repeats point {} ([{}, {}]); consecutive points must differ",
                        i - 1,
                        p[0],
                        p[1]
                    ),
                });
            }
            cum.push(cum[i - 1] + len);
            seg_heading.push(dy.atan2(dx));
        }
        Ok(Polyline {
            pts,
            cum,
            seg_heading,
            grid: None,
        })
    }

    /// The same polyline, known to be sampled at `x_i = x_first + i·dx` (dx > 0).
    pub(crate) fn with_grid(mut self, dx: f64) -> Polyline {
        self.grid = Some((self.pts[0][0], dx));
        self
    }

    /// The points.
    pub fn points(&self) -> &[[f64; 2]] {
        &self.pts
    }

    /// Total arc length, m.
    pub fn length(&self) -> f64 {
        self.cum[self.cum.len() - 1]
    }

    fn n_seg(&self) -> usize {
        self.pts.len() - 1
    }

    /// Squared distance from `p` to segment `i` and the segment parameter of the nearest
    /// point (unclamped below 0 on the first segment and above 1 on the last: the ends
    /// extend the path).
    fn seg_distance(&self, i: usize, p: [f64; 2]) -> (f64, f64) {
        let (a, b) = (self.pts[i], self.pts[i + 1]);
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let l2 = dx * dx + dy * dy;
        let mut t = ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / l2;
        if i > 0 {
            t = t.max(0.0);
        }
        if i + 1 < self.n_seg() {
            t = t.min(1.0);
        }
        let (qx, qy) = (a[0] + t * dx, a[1] + t * dy);
        ((p[0] - qx).powi(2) + (p[1] - qy).powi(2), t)
    }

    /// The segments that can hold the nearest point, ascending: all of them, or on an x
    /// grid the first, the window of `x ± D` (D = distance to the nearest grid point by
    /// x, an upper bound of the minimum distance) and the last.
    fn candidates(&self, p: [f64; 2]) -> (usize, usize) {
        let n = self.n_seg();
        let Some((x_first, dx)) = self.grid else {
            return (0, n - 1);
        };
        let k = ((p[0] - x_first) / dx).round().clamp(0.0, n as f64) as usize;
        let q = self.pts[k];
        let d = (p[0] - q[0]).hypot(p[1] - q[1]);
        let lo = ((p[0] - d - x_first) / dx).floor() - 1.0;
        let hi = ((p[0] + d - x_first) / dx).ceil() + 1.0;
        let clamp = |v: f64| v.clamp(0.0, (n - 1) as f64) as usize;
        (clamp(lo), clamp(hi))
    }

    /// The nearest point of the polyline to `p`.
    pub fn project(&self, p: [f64; 2]) -> Projection {
        let n = self.n_seg();
        let (lo, hi) = self.candidates(p);
        let mut best = (f64::INFINITY, 0usize, 0.0);
        let mut consider = |i: usize| {
            let (d2, t) = self.seg_distance(i, p);
            if d2 < best.0 {
                best = (d2, i, t);
            }
        };
        if lo > 0 {
            consider(0);
        }
        for i in lo..=hi {
            consider(i);
        }
        if hi < n - 1 {
            consider(n - 1);
        }
        let (d2, i, t) = best;
        let (a, b) = (self.pts[i], self.pts[i + 1]);
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let len = self.cum[i + 1] - self.cum[i];
        let (qx, qy) = (a[0] + t * dx, a[1] + t * dy);
        let cross = dx * (p[1] - qy) - dy * (p[0] - qx);
        Projection {
            s: self.cum[i] + t * len,
            lateral: d2.sqrt().copysign(cross),
            heading: self.heading_on(i, t),
        }
    }

    /// The path heading on segment `i` at parameter `t`: linear in `t` between the
    /// headings of neighbouring segments' midpoints (continuous along the path).
    fn heading_on(&self, i: usize, t: f64) -> f64 {
        let h = self.seg_heading[i];
        let (other, w) = if t < 0.5 {
            (i.checked_sub(1), 0.5 - t)
        } else {
            (Some(i + 1).filter(|&j| j < self.n_seg()), t - 0.5)
        };
        match other {
            Some(j) => h + w.min(0.5) * wrap(self.seg_heading[j] - h),
            None => h,
        }
    }

    /// The point at arc length `s` (extended beyond the ends along the end segments).
    pub fn point_at(&self, s: f64) -> [f64; 2] {
        let n = self.n_seg();
        let i = (self.cum.partition_point(|&c| c <= s)).clamp(1, n) - 1;
        let (a, b) = (self.pts[i], self.pts[i + 1]);
        let t = (s - self.cum[i]) / (self.cum[i + 1] - self.cum[i]);
        [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])]
    }
}

/// `a` wrapped to `(−π, π]`.
pub fn wrap(a: f64) -> f64 {
    let w = a.rem_euclid(2.0 * PI);
    if w > PI {
        w - 2.0 * PI
    } else {
        w
    }
}

impl Path {
    /// The angle `θ ∈ (−π, π]` of `p` on a circle of radius `r`, counter-clockwise from
    /// the start point (the origin), and the vector from the centre.
    pub fn circle_angle(r: f64, p: [f64; 2]) -> (f64, [f64; 2]) {
        let v = [p[0], p[1] - r];
        (v[0].atan2(-v[1]), v)
    }

    /// The nearest point of the path to `p`; `lap` is the circle's lap count (ignored by
    /// the other shapes).
    pub fn project(&self, p: [f64; 2], lap: f64) -> Projection {
        match self {
            Path::Line { origin, heading } => {
                let (sn, cs) = heading.sin_cos();
                let (dx, dy) = (p[0] - origin[0], p[1] - origin[1]);
                Projection {
                    s: dx * cs + dy * sn,
                    lateral: cs * dy - sn * dx,
                    heading: *heading,
                }
            }
            Path::Circle { radius } => {
                let (theta, v) = Path::circle_angle(*radius, p);
                let phi = theta + 2.0 * PI * lap;
                Projection {
                    s: radius * phi,
                    lateral: radius - v[0].hypot(v[1]),
                    heading: phi,
                }
            }
            Path::Polyline(pl) => pl.project(p),
        }
    }

    /// The point at progress `s`.
    pub fn point_at(&self, s: f64) -> [f64; 2] {
        match self {
            Path::Line { origin, heading } => {
                let (sn, cs) = heading.sin_cos();
                [origin[0] + s * cs, origin[1] + s * sn]
            }
            Path::Circle { radius } => {
                let (sn, cs) = (s / radius).sin_cos();
                [radius * sn, radius * (1.0 - cs)]
            }
            Path::Polyline(pl) => pl.point_at(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_window_search_finds_what_the_full_scan_finds() {
        let pts: Vec<[f64; 2]> = (0..200)
            .map(|i| {
                let x = f64::from(i) * 0.5;
                [x, 3.0 * (x / 7.0).sin()]
            })
            .collect();
        let full = Polyline::new(pts).unwrap();
        let grid = full.clone().with_grid(0.5);
        for i in 0..400 {
            let p = [
                -20.0 + 0.37 * f64::from(i),
                -9.0 + 0.05 * f64::from((i * 7919) % 360),
            ];
            assert_eq!(full.project(p), grid.project(p), "p = {p:?}");
        }
    }

    #[test]
    fn polyline_heading_is_continuous_along_the_path() {
        let pl = Polyline::new(vec![[0.0, 0.0], [1.0, 0.0], [2.0, 1.0], [2.0, 3.0]]).unwrap();
        let mut prev = pl.project([0.0, 0.0]).heading;
        for k in 1..=300 {
            let s = f64::from(k) * 0.01 * pl.length();
            let q = pl.point_at(s);
            let h = pl.project(q).heading;
            assert!(
                (h - prev).abs() < 0.05,
                "heading jumps {prev} -> {h} at s = {s}"
            );
            prev = h;
        }
        assert_eq!(prev, PI / 2.0, "last segment's heading at its end");
    }
}
