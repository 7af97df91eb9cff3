//! The ISO 3888-2 obstacle-avoidance (severe lane-change) track: its five sections, the
//! cone lines of the three gated ones, and a smooth centre line through the gates.
//!
//! With `w` the vehicle width, sections along +x from `x0` (61 m in all):
//!
//! | section | length | lane width            | lane centre `y`                      |
//! |---------|--------|-----------------------|--------------------------------------|
//! | 1       | 12 m   | `a = 1.1·w + 0.25`    | 0                                    |
//! | 2       | 13.5 m | (no cones)            | transition                           |
//! | 3       | 11 m   | `b = w + 1`           | `a/2 + 1 + b/2` (1 m gap edge to edge to the left of lane 1) |
//! | 4       | 12.5 m | (no cones)            | transition                           |
//! | 5       | 12 m   | `c = max(1.3·w + 0.25, 3)` | `(c − a)/2` (right cone line in line with lane 1's) |
//!
//! Sources: ISO 3888-2:2011 §4.1 (the section lengths, the widths as functions of the
//! vehicle width, the 61 m total and the 1 m lateral offset of lane 3); the lateral position
//! of lane 5 (its right-hand cone line continues lane 1's) as in Project Chrono's ISO 3888-2
//! double-lane-change demo (`demo_VEH_HMMWV_DoubleLaneChange`, lane offsets `a/2 + 1 + b/2`
//! and `(c − a)/2`), which fixes lane 5 at 3 m.
//!
//! The centre line is the lane centre in sections 1, 3, 5 and a quintic blend
//! `y0 + (y1 − y0)·(10ξ³ − 15ξ⁴ + 6ξ⁵)` across sections 2 and 4 (continuous slope and
//! curvature at the gates), sampled every [`SAMPLE_DX`] along x.

use super::{PathError, Polyline};

/// Sampling step of the centre line along x, m: the chord error of the blends is
/// `κ·dx²/8 <= 0.11·0.01/8 ≈ 1.4e-4 m` for a 1.8 m wide car.
pub const SAMPLE_DX: f64 = 0.1;

/// Section lengths, m.
pub const LENGTHS: [f64; 5] = [12.0, 13.5, 11.0, 12.5, 12.0];

/// One gated section: its x range and its cone lines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gate {
    /// Section number (1, 3 or 5).
    pub section: u8,
    /// Start and end along x, m.
    pub x: [f64; 2],
    /// Lane centre, m.
    pub y_center: f64,
    /// Lane width between the cone lines, m.
    pub width: f64,
}

impl Gate {
    /// Left cone line, m.
    pub fn y_left(&self) -> f64 {
        self.y_center + 0.5 * self.width
    }
    /// Right cone line, m.
    pub fn y_right(&self) -> f64 {
        self.y_center - 0.5 * self.width
    }
    /// Lateral clearance of a point to the cone lines (+ inside the lane, − outside).
    pub fn lateral_clearance(&self, y: f64) -> f64 {
        (self.y_left() - y).min(y - self.y_right())
    }
    /// A function negative exactly where a point is inside the section's x range and
    /// outside its lane (a cone line crossed), continuous everywhere: `max(distance outside
    /// the x range, lateral clearance)`.
    pub fn violation_guard(&self, p: [f64; 2]) -> f64 {
        let dx_out = (self.x[0] - p[0]).max(p[0] - self.x[1]);
        dx_out.max(self.lateral_clearance(p[1]))
    }
}

/// The track for a vehicle of width `w`, starting at `x0`.
#[derive(Debug, Clone, PartialEq)]
pub struct Track {
    /// Sections 1, 3, 5.
    pub gates: [Gate; 3],
    /// Section boundaries along x (6 values, from `x0` to `x0 + 61`).
    pub edges: [f64; 6],
}

impl Track {
    /// The track for vehicle width `w` from `x0` (both finite, `w > 0`).
    pub fn new(w: f64, x0: f64) -> Track {
        let a = 1.1 * w + 0.25;
        let b = w + 1.0;
        let c = (1.3 * w + 0.25).max(3.0);
        let mut edges = [x0; 6];
        for k in 0..5 {
            edges[k + 1] = edges[k] + LENGTHS[k];
        }
        let gate = |section: u8, k: usize, y_center: f64, width: f64| Gate {
            section,
            x: [edges[k], edges[k + 1]],
            y_center,
            width,
        };
        Track {
            gates: [
                gate(1, 0, 0.0, a),
                gate(3, 2, 0.5 * a + 1.0 + 0.5 * b, b),
                gate(5, 4, 0.5 * (c - a), c),
            ],
            edges,
        }
    }

    /// The centre line's `y` at `x`.
    pub fn center_y(&self, x: f64) -> f64 {
        let e = &self.edges;
        let [g1, g3, g5] = &self.gates;
        let blend = |x0: f64, x1: f64, y0: f64, y1: f64| {
            let xi = ((x - x0) / (x1 - x0)).clamp(0.0, 1.0);
            y0 + (y1 - y0) * xi * xi * xi * (10.0 - 15.0 * xi + 6.0 * xi * xi)
        };
        if x <= e[1] {
            g1.y_center
        } else if x < e[2] {
            blend(e[1], e[2], g1.y_center, g3.y_center)
        } else if x <= e[3] {
            g3.y_center
        } else if x < e[4] {
            blend(e[3], e[4], g3.y_center, g5.y_center)
        } else {
            g5.y_center
        }
    }

    /// The centre line sampled every [`SAMPLE_DX`] from `x0` to the end of section 5 (an
    /// error only where `x0` is so large that the samples coincide).
    pub fn center_line(&self) -> Result<Polyline, PathError> {
        let n = ((self.edges[5] - self.edges[0]) / SAMPLE_DX).round() as usize;
        let pts = (0..=n)
            .map(|i| {
                let x = self.edges[0] + i as f64 * SAMPLE_DX;
                [x, self.center_y(x)]
            })
            .collect();
        Ok(Polyline::new(pts)?.with_grid(SAMPLE_DX))
    }

    /// The gate whose clearances are reported for a car at `x`: the section the car is in
    /// or the next one ahead (the last one past the end).
    pub fn current_gate(&self, x: f64) -> usize {
        self.gates.iter().position(|g| x <= g.x[1]).unwrap_or(2)
    }
}
