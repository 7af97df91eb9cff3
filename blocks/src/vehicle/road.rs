//! `Road`: a road surface for `WheelCollider`s, shared on a `road` line (see
//! `drivelink_core::PortKind::Road`): a height `z = h(x, y)` (world axes, m) summed from
//! features, and a friction scale per point from patches.
//!
//! Features (`features`, a list of objects):
//! - `grade` {`angle`, `x` = [x0, x1] (optional, default everywhere)}: a slope rising along
//!   +x, `h = tan(angle)·(x − x0)` between x0 and x1, 0 before, constant after (without
//!   `x`: `tan(angle)·x` everywhere);
//! - `bump` {`x`, `length`, `height`, `shape`, `y` = [ymin, ymax] (optional)}: over
//!   `[x, x + length]`, `s = (x − x_start)/length`: `half_sine` `height·sin(π·s)`,
//!   `cosine` `height·(1 − cos 2πs)/2`, `ramp` a triangle (`height` at `s = ½`), `step` a
//!   kerb: `height` from `x` to `x + length` (without `length`: from `x` on);
//! - `heightfield` {`x`, `y`, `z`}: bilinear in the grid `z[i][j]` at `(x[i], y[j])`
//!   (axes strictly increasing; outside the grid the edge value);
//! - `iso8608` {`class`, `x` = [x0, x1], `seed`, `dx`, `tracks`}: see [`iso8608`].
//!
//! Every discontinuity of the height (kerb steps, the y edges of a bump), of its slope (the
//! ends of a `half_sine`, the corners of a `ramp`, the ends of a ranged `grade`, every
//! grid line of a `heightfield`: its creases and its border) and of the
//! friction (patch edges) is an *edge*: an axis-parallel line `x = a` or `y = a`. A wheel
//! keeps the side of every edge as its mode, switched only at the located zeros of the
//! signed distance to the line (guards), so the height and friction it sees between events
//! are smooth functions of the pose and no step size jumps a kerb.

use std::sync::Arc;

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, ParamDefault, ParamError, ParamKind, ParamSpec,
    Params, PortDecl, PortKind, Registry,
};
use serde_json::Value;

pub mod iso8608;

/// An axis of the ground plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    X,
    Y,
}

/// A line `x = at` (axis X) or `y = at` (axis Y) where the surface changes abruptly.
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    pub axis: Axis,
    pub at: f64,
    /// What it is, for event logs (`features[2] (step) start`).
    pub label: String,
}

impl Edge {
    /// Signed distance of the point `(x, y)` past the line (≥ 0: on the far side).
    #[inline]
    pub fn distance(&self, x: f64, y: f64) -> f64 {
        match self.axis {
            Axis::X => x - self.at,
            Axis::Y => y - self.at,
        }
    }
}

/// A bump's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    HalfSine,
    Cosine,
    Ramp,
    Step,
}

/// One summand of the height.
#[derive(Debug, Clone)]
enum Feature {
    /// `h = slope·x` everywhere, or ranged with the edges at x0 and x1.
    Grade {
        slope: f64,
        range: Option<(f64, f64, usize, usize)>,
    },
    Bump {
        x0: f64,
        len: f64,
        height: f64,
        shape: Shape,
        /// Edges: start, middle (ramp), end (none for `cosine`: it is smooth at its ends;
        /// a `step` without `length` has no end).
        start: Option<usize>,
        mid: Option<usize>,
        end: Option<usize>,
        /// Edges of the y range.
        y: Option<(usize, usize)>,
    },
    Field(Grid),
    Profile(iso8608::Profile),
}

/// A bilinear height grid.
#[derive(Debug, Clone)]
struct Grid {
    x: Vec<f64>,
    y: Vec<f64>,
    z: Vec<Vec<f64>>,
    /// The first edge of its lines `x = x[i]` (one per entry; none for a single entry:
    /// constant along x), then of its lines `y = y[j]`: the slope jumps across each (its
    /// creases, and the grid's border beyond which the edge value holds).
    x_lines: Option<usize>,
    y_lines: Option<usize>,
}

/// The cell of `v` in the increasing axis `a` (≥ 2 entries) and the fraction in it,
/// clamped to the grid (outside: the edge value, slope 0). `past`: how many of the axis's
/// lines the point is past (the wheel's sides of them, its mode), so that between two
/// events the wheel keeps its cell and the cell's bilinear patch continues smoothly
/// beyond its lines until the crossing is located; `None`: from `v` itself.
fn cell(a: &[f64], v: f64, past: Option<usize>) -> (usize, f64, f64) {
    let n = a.len();
    let k = past.unwrap_or_else(|| a.partition_point(|&p| p <= v));
    if k == 0 {
        return (0, 0.0, 0.0);
    }
    if k >= n {
        return (n - 2, 1.0, 0.0);
    }
    let i = k - 1;
    let w = a[i + 1] - a[i];
    (i, (v - a[i]) / w, 1.0 / w)
}

impl Grid {
    /// Height and gradient (bilinear; a single-entry axis is constant along it) in the
    /// cell given by `past` (how many x and y lines the point is past; see [`cell`]).
    fn eval(&self, x: f64, y: f64, past: (Option<usize>, Option<usize>)) -> (f64, f64, f64) {
        let (i, fx, ix) = if self.x.len() > 1 {
            cell(&self.x, x, past.0)
        } else {
            (0, 0.0, 0.0)
        };
        let (j, fy, iy) = if self.y.len() > 1 {
            cell(&self.y, y, past.1)
        } else {
            (0, 0.0, 0.0)
        };
        let at = |a: usize, b: usize| {
            let a = a.min(self.x.len() - 1);
            let b = b.min(self.y.len() - 1);
            self.z[a][b]
        };
        let (z00, z10, z01, z11) = (at(i, j), at(i + 1, j), at(i, j + 1), at(i + 1, j + 1));
        let h = z00 * (1.0 - fx) * (1.0 - fy)
            + z10 * fx * (1.0 - fy)
            + z01 * (1.0 - fx) * fy
            + z11 * fx * fy;
        let hx = ((z10 - z00) * (1.0 - fy) + (z11 - z01) * fy) * ix;
        let hy = ((z01 - z00) * (1.0 - fx) + (z11 - z10) * fx) * iy;
        (h, hx, hy)
    }
}

/// A friction patch: `scale` inside the rectangle of its edges.
#[derive(Debug, Clone)]
struct MuPatch {
    x: Option<(usize, usize)>,
    y: Option<(usize, usize)>,
    scale: f64,
}

/// The road surface a `Road` shares with the wheels on its line.
#[derive(Debug, Clone, Default)]
pub struct Surface {
    features: Vec<Feature>,
    edges: Vec<Edge>,
    patches: Vec<MuPatch>,
    default_mu: f64,
    has_steps: bool,
}

/// The sides of the surface's edges a wheel is on (its mode), or `None` to take them from
/// the point itself (before a run's initial event).
pub type Sides<'a> = Option<&'a [bool]>;

impl Surface {
    /// The edges (the lines a wheel's guards locate).
    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }
    /// Whether any feature is a `step` (a height jump).
    pub fn has_steps(&self) -> bool {
        self.has_steps
    }
    /// The sides of every edge at the point `(x, y)`: `true` on the far side (`≥ at`).
    pub fn sides_at(&self, x: f64, y: f64) -> Vec<bool> {
        self.edges.iter().map(|e| e.distance(x, y) >= 0.0).collect()
    }
    #[inline]
    fn side(&self, i: usize, x: f64, y: f64, sides: Sides) -> bool {
        match sides {
            Some(s) => s[i],
            None => self.edges[i].distance(x, y) >= 0.0,
        }
    }
    fn inside(&self, r: Option<(usize, usize)>, x: f64, y: f64, sides: Sides) -> bool {
        r.is_none_or(|(a, b)| self.side(a, x, y, sides) && !self.side(b, x, y, sides))
    }
    /// The height without the kerb steps and its gradient at `(x, y)`: `(h, ∂h/∂x, ∂h/∂y)`.
    pub fn smooth(&self, x: f64, y: f64, sides: Sides) -> (f64, f64, f64) {
        let (mut h, mut hx, mut hy) = (0.0, 0.0, 0.0);
        for f in &self.features {
            let (a, b, c) = match f {
                Feature::Grade { slope, range: None } => (slope * x, *slope, 0.0),
                Feature::Grade {
                    slope,
                    range: Some((x0, x1, e0, e1)),
                } => {
                    if !self.side(*e0, x, y, sides) {
                        (0.0, 0.0, 0.0)
                    } else if !self.side(*e1, x, y, sides) {
                        (slope * (x - x0), *slope, 0.0)
                    } else {
                        (slope * (x1 - x0), 0.0, 0.0)
                    }
                }
                Feature::Bump {
                    shape: Shape::Step, ..
                } => (0.0, 0.0, 0.0),
                Feature::Bump {
                    x0,
                    len,
                    height,
                    shape,
                    start,
                    mid,
                    end,
                    y: yr,
                } => {
                    if !self.inside(*yr, x, y, sides) {
                        continue;
                    }
                    bump(
                        x,
                        *x0,
                        *len,
                        *height,
                        *shape,
                        |e: Option<usize>| e.is_some_and(|e| self.side(e, x, y, sides)),
                        (*start, *mid, *end),
                    )
                }
                Feature::Field(g) => {
                    let past = |first: Option<usize>, n: usize| {
                        first.map(|e0| (e0..e0 + n).filter(|&e| self.side(e, x, y, sides)).count())
                    };
                    let past = match sides {
                        Some(_) => (past(g.x_lines, g.x.len()), past(g.y_lines, g.y.len())),
                        None => (None, None),
                    };
                    g.eval(x, y, past)
                }
                Feature::Profile(p) => p.eval(x, y),
            };
            h += a;
            hx += b;
            hy += c;
        }
        (h, hx, hy)
    }
    /// The sum of the kerb steps that apply at `(x, y)` (constant between a wheel's
    /// events: the steps are chosen by the sides only), m.
    pub fn steps(&self, x: f64, y: f64, sides: Sides) -> f64 {
        if !self.has_steps {
            return 0.0;
        }
        let mut h = 0.0;
        for f in &self.features {
            if let Feature::Bump {
                shape: Shape::Step,
                height,
                start,
                end,
                y: yr,
                ..
            } = f
            {
                let on = start.is_some_and(|e| self.side(e, x, y, sides))
                    && !end.is_some_and(|e| self.side(e, x, y, sides))
                    && self.inside(*yr, x, y, sides);
                if on {
                    h += height;
                }
            }
        }
        h
    }
    /// The friction scale at `(x, y)`: the last patch containing it, else `default_mu`.
    pub fn mu(&self, x: f64, y: f64, sides: Sides) -> f64 {
        self.patches
            .iter()
            .rev()
            .find(|p| self.inside(p.x, x, y, sides) && self.inside(p.y, x, y, sides))
            .map_or(self.default_mu, |p| p.scale)
    }
    /// The full height (steps included) at `(x, y)` with the sides taken from the point.
    pub fn height(&self, x: f64, y: f64) -> f64 {
        self.smooth(x, y, None).0 + self.steps(x, y, None)
    }
}

/// A bump's height and slope along x (`side(e)`: whether the point is past edge `e`).
fn bump(
    x: f64,
    x0: f64,
    len: f64,
    height: f64,
    shape: Shape,
    side: impl Fn(Option<usize>) -> bool,
    (start, mid, end): (Option<usize>, Option<usize>, Option<usize>),
) -> (f64, f64, f64) {
    use std::f64::consts::PI;
    let s = (x - x0) / len;
    match shape {
        Shape::Cosine => {
            if (0.0..=1.0).contains(&s) {
                let (sn, cs) = (2.0 * PI * s).sin_cos();
                (0.5 * height * (1.0 - cs), height * PI / len * sn, 0.0)
            } else {
                (0.0, 0.0, 0.0)
            }
        }
        Shape::HalfSine => {
            if side(start) && !side(end) {
                let (sn, cs) = (PI * s).sin_cos();
                (height * sn, height * PI / len * cs, 0.0)
            } else {
                (0.0, 0.0, 0.0)
            }
        }
        Shape::Ramp => {
            if !side(start) || side(end) {
                (0.0, 0.0, 0.0)
            } else if !side(mid) {
                (2.0 * height * s, 2.0 * height / len, 0.0)
            } else {
                (2.0 * height * (1.0 - s), -2.0 * height / len, 0.0)
            }
        }
        Shape::Step => (0.0, 0.0, 0.0),
    }
}

/// Reads one feature or patch object, naming `features[i].key` in errors.
struct Obj<'a> {
    p: &'a Params,
    param: &'static str,
    i: usize,
    map: &'a serde_json::Map<String, Value>,
}

impl Obj<'_> {
    fn err(&self, key: &str, msg: impl std::fmt::Display) -> ParamError {
        self.p.invalid(
            self.param,
            format!("entry {} ({}[{}].{key}): {msg}", self.i, self.param, self.i),
        )
    }
    fn check_keys(&self, known: &[&str]) -> Result<(), ParamError> {
        for k in self.map.keys() {
            if !known.contains(&k.as_str()) {
                return Err(self.err(
                    k,
                    format!(
                        "unknown key{}; the keys are {}",
                        drivelink_core::suggest::hint(k, known.iter().copied()),
                        known.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }
    /// A number (or a string with a unit) in `unit`, or `None` when absent.
    fn opt_num(&self, key: &str, unit: &str) -> Result<Option<f64>, ParamError> {
        self.map
            .get(key)
            .map(|v| quantity(v, unit).map_err(|m| self.err(key, m)))
            .transpose()
    }
    fn num(&self, key: &str, unit: &str) -> Result<f64, ParamError> {
        self.opt_num(key, unit)?
            .ok_or_else(|| self.err(key, "is required"))
    }
    /// A pair `[a, b]` with `a ≤ b` (or `a < b` when `strict`), or `None` when absent.
    fn range(&self, key: &str, strict: bool) -> Result<Option<(f64, f64)>, ParamError> {
        let Some(v) = self.map.get(key) else {
            return Ok(None);
        };
        let xs = self.numbers(key, v, "m")?;
        if xs.len() != 2 {
            return Err(self.err(
                key,
                format!("must be [from, to], two numbers, got {} entries", xs.len()),
            ));
        }
        let ok = if strict {
            xs[0] < xs[1]
        } else {
            xs[0] <= xs[1]
        };
        if !ok {
            return Err(self.err(
                key,
                format!(
                    "must be increasing ([from, to] with from {} to), got [{}, {}]",
                    if strict { "<" } else { "<=" },
                    xs[0],
                    xs[1]
                ),
            ));
        }
        Ok(Some((xs[0], xs[1])))
    }
    fn numbers(&self, key: &str, v: &Value, unit: &str) -> Result<Vec<f64>, ParamError> {
        let Value::Array(items) = v else {
            return Err(self.err(key, "expected an array of numbers"));
        };
        items
            .iter()
            .enumerate()
            .map(|(j, it)| quantity(it, unit).map_err(|m| self.err(key, format!("entry {j}: {m}"))))
            .collect()
    }
    fn text(&self, key: &str) -> Result<Option<&str>, ParamError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.err(key, format!("expected a string, got {other}"))),
        }
    }
}

/// A JSON number (SI) or a string with a unit of the dimension of `unit`, finite.
pub(crate) fn quantity(v: &Value, unit: &str) -> Result<f64, String> {
    let x = match v {
        Value::Number(n) => n.as_f64().ok_or("not a finite number")?,
        Value::String(s) => {
            let q =
                drivelink_core::expr::eval(s, &|_| None).map_err(|e| format!("\"{s}\": {e}"))?;
            let want = drivelink_core::units::parse_unit(unit).map_err(|e| e.to_string())?;
            drivelink_core::expr::check_dim(&q, want.dim, unit)
                .map_err(|e| format!("\"{s}\": {e}"))?
        }
        other => return Err(format!("expected a number, got {other}")),
    };
    if x.is_finite() {
        Ok(x)
    } else {
        Err(format!("must be finite, got {x}"))
    }
}

/// The surface parser: features and patches with their edges.
struct Builder<'a> {
    p: &'a Params,
    s: Surface,
}

impl Builder<'_> {
    fn edge(&mut self, axis: Axis, at: f64, label: String) -> usize {
        self.s.edges.push(Edge { axis, at, label });
        self.s.edges.len() - 1
    }
    fn edges(&mut self, axis: Axis, r: Option<(f64, f64)>, what: &str) -> Option<(usize, usize)> {
        let (a, b) = r?;
        let n = if axis == Axis::X { "x" } else { "y" };
        Some((
            self.edge(axis, a, format!("{what} {n} = {a} m")),
            self.edge(axis, b, format!("{what} {n} = {b} m")),
        ))
    }
    fn feature(
        &mut self,
        i: usize,
        map: &serde_json::Map<String, Value>,
    ) -> Result<(), ParamError> {
        let o = Obj {
            p: self.p,
            param: "features",
            i,
            map,
        };
        let ty = o.text("type")?.ok_or_else(|| {
            o.err(
                "type",
                "is required: one of \"bump\", \"grade\", \"heightfield\", \"iso8608\"",
            )
        })?;
        let f = match ty {
            "grade" => {
                o.check_keys(&["type", "angle", "x"])?;
                let angle = o.num("angle", "rad")?;
                if !(angle.abs() < std::f64::consts::FRAC_PI_2 * 0.9) {
                    return Err(o.err("angle", format!("must be within ±81 deg, got {angle} rad")));
                }
                let slope = angle.tan();
                let range = o.range("x", true)?;
                let what = format!("features[{i}] (grade)");
                Feature::Grade {
                    slope,
                    range: range.map(|(a, b)| {
                        let e = self.edges(Axis::X, Some((a, b)), &what).unwrap_or_default();
                        (a, b, e.0, e.1)
                    }),
                }
            }
            "bump" => self.bump(i, &o)?,
            "heightfield" => {
                o.check_keys(&["type", "x", "y", "z"])?;
                let mut g = grid(&o)?;
                let what = format!("features[{i}] (heightfield)");
                let mut lines = |axis: Axis, at: &[f64]| {
                    let n = if axis == Axis::X { "x" } else { "y" };
                    (at.len() > 1).then(|| {
                        let first = self.s.edges.len();
                        for v in at {
                            self.edge(axis, *v, format!("{what} {n} = {v} m"));
                        }
                        first
                    })
                };
                g.x_lines = lines(Axis::X, &g.x);
                g.y_lines = lines(Axis::Y, &g.y);
                Feature::Field(g)
            }
            "iso8608" => Feature::Profile(iso8608::Profile::from_obj(&o)?),
            other => {
                return Err(o.err(
                    "type",
                    format!(
                        "unknown feature type '{other}'{}; the types are bump, grade, heightfield, iso8608",
                        drivelink_core::suggest::hint(other, ["bump", "grade", "heightfield", "iso8608"].into_iter())
                    ),
                ))
            }
        };
        self.s.features.push(f);
        Ok(())
    }
    fn bump(&mut self, i: usize, o: &Obj) -> Result<Feature, ParamError> {
        o.check_keys(&["type", "x", "length", "height", "shape", "y"])?;
        let x0 = o.num("x", "m")?;
        let height = o.num("height", "m")?;
        let shape = match o.text("shape")?.unwrap_or("cosine") {
            "half_sine" => Shape::HalfSine,
            "cosine" => Shape::Cosine,
            "ramp" => Shape::Ramp,
            "step" => Shape::Step,
            other => {
                return Err(o.err(
                    "shape",
                    format!(
                        "unknown shape '{other}'; the shapes are half_sine, cosine, ramp, step"
                    ),
                ))
            }
        };
        let len = match o.opt_num("length", "m")? {
            Some(l) if l > 0.0 => l,
            Some(l) => return Err(o.err("length", format!("must be > 0, got {l}"))),
            None if shape == Shape::Step => f64::INFINITY,
            None => return Err(o.err("length", "is required (> 0)")),
        };
        let yr = o.range("y", true)?;
        let what = format!(
            "features[{i}] ({} bump)",
            o.text("shape")?.unwrap_or("cosine")
        );
        let (mut start, mut mid, mut end) = (None, None, None);
        if shape != Shape::Cosine {
            start = Some(self.edge(Axis::X, x0, format!("{what} start x = {x0} m")));
            if shape == Shape::Ramp {
                let m = x0 + 0.5 * len;
                mid = Some(self.edge(Axis::X, m, format!("{what} top x = {m} m")));
            }
            if len.is_finite() {
                let e = x0 + len;
                end = Some(self.edge(Axis::X, e, format!("{what} end x = {e} m")));
            }
        }
        if shape == Shape::Step {
            self.s.has_steps = true;
        }
        let y = self.edges(Axis::Y, yr, &what);
        Ok(Feature::Bump {
            x0,
            len,
            height,
            shape,
            start,
            mid,
            end,
            y,
        })
    }
    fn patch(&mut self, i: usize, map: &serde_json::Map<String, Value>) -> Result<(), ParamError> {
        let o = Obj {
            p: self.p,
            param: "mu",
            i,
            map,
        };
        o.check_keys(&["x", "y", "scale"])?;
        let scale = o.num("scale", "1")?;
        if scale < 0.0 {
            return Err(o.err("scale", format!("must be >= 0, got {scale}")));
        }
        let (xr, yr) = (o.range("x", true)?, o.range("y", true)?);
        let what = format!("mu[{i}] patch");
        let x = self.edges(Axis::X, xr, &what);
        let y = self.edges(Axis::Y, yr, &what);
        self.s.patches.push(MuPatch { x, y, scale });
        Ok(())
    }
}

/// A `heightfield` grid, checked.
fn grid(o: &Obj) -> Result<Grid, ParamError> {
    let axis = |key: &str| -> Result<Vec<f64>, ParamError> {
        let v = o.map.get(key).ok_or_else(|| o.err(key, "is required"))?;
        let a = o.numbers(key, v, "m")?;
        if a.is_empty() {
            return Err(o.err(key, "must have at least one entry"));
        }
        if let Some(k) = a.windows(2).position(|w| !(w[1] > w[0])) {
            return Err(o.err(
                key,
                format!(
                    "must be strictly increasing: entry {} ({}) follows {}",
                    k + 1,
                    a[k + 1],
                    a[k]
                ),
            ));
        }
        Ok(a)
    };
    let (x, y) = (axis("x")?, axis("y")?);
    let Some(Value::Array(rows)) = o.map.get("z") else {
        return Err(o.err(
            "z",
            "is required: [[z at (x[0], y[0]), z at (x[0], y[1]), ...], ...], one row per x",
        ));
    };
    if rows.len() != x.len() {
        return Err(o.err(
            "z",
            format!(
                "must have one row per x entry ({}), got {}",
                x.len(),
                rows.len()
            ),
        ));
    }
    let mut z = Vec::with_capacity(rows.len());
    for (r, row) in rows.iter().enumerate() {
        let v = o.numbers("z", row, "m")?;
        if v.len() != y.len() {
            return Err(o.err(
                "z",
                format!(
                    "row {r} must have one value per y entry ({}), got {}",
                    y.len(),
                    v.len()
                ),
            ));
        }
        z.push(v);
    }
    Ok(Grid {
        x,
        y,
        z,
        x_lines: None,
        y_lines: None,
    })
}

/// Build the surface of a `Road`'s resolved parameters.
pub fn surface(p: &Params) -> Result<Surface, ParamError> {
    let default_mu = p.non_negative("default_mu")?;
    let mut b = Builder {
        p,
        s: Surface {
            default_mu,
            ..Surface::default()
        },
    };
    for (param, f) in [("features", 0), ("mu", 1)] {
        let v = p.json(param)?;
        let Value::Array(items) = v else {
            return Err(p.invalid(param, "must be a list of objects"));
        };
        for (i, it) in items.iter().enumerate() {
            let Value::Object(map) = it else {
                return Err(p.invalid(param, format!("entry {i} must be an object, got {it}")));
            };
            if f == 0 {
                b.feature(i, map)?;
            } else {
                b.patch(i, map)?;
            }
        }
    }
    Ok(b.s)
}

/// The `Road` block: provides its surface on the `surface` port.
#[derive(Debug, Clone)]
pub struct Road {
    surface: Arc<Surface>,
}

impl Road {
    /// The surface.
    pub fn surface(&self) -> &Arc<Surface> {
        &self.surface
    }
}

impl Block for Road {
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: vec![PortDecl::new("surface", PortKind::Road)],
            ..BlockDecl::default()
        }
    }
    fn shared(&self, port: usize) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        (port == 0).then(|| self.surface.clone() as Arc<dyn std::any::Any + Send + Sync>)
    }
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    Ok(Box::new(Road {
        surface: Arc::new(surface(p)?),
    }))
}

pub(crate) fn register(r: &mut Registry) {
    r.register(road_type());
}

/// The `Road` block type: its parameters and how it is built.
fn road_type() -> BlockType {
    BlockType {
        name: "Road",
        category: "vehicle",
        doc: "A road surface for WheelColliders (connect surface to their road ports): height z(x, y) in world axes summed from features (grade, bump with shapes half_sine, cosine, ramp, step = a kerb, heightfield, iso8608 random profile) and a friction scale from mu patches; kerbs, slope corners and patch edges are located events of each wheel. Point contact: no tire envelope.",
        ports_doc: "surface[road] (the surface shared with the wheels on its line)",
        params: vec![
            ParamSpec::with("features", ParamKind::Json, ParamDefault::Value(serde_json::json!([])), "list of height features, summed (world axes, m): {\"type\": \"grade\", \"angle\": \"5 deg\", \"x\": [x0, x1]} (x optional: everywhere); {\"type\": \"bump\", \"x\": 20, \"length\": 0.5, \"height\": 0.05, \"shape\": \"half_sine\"|\"cosine\"|\"ramp\"|\"step\", \"y\": [ymin, ymax]} (over [x, x + length]; step: a kerb, up at x, down at x + length or never without length); {\"type\": \"heightfield\", \"x\": [...], \"y\": [...], \"z\": [[...], ...]} (bilinear, z[i][j] at (x[i], y[j]), edge value outside); {\"type\": \"iso8608\", \"class\": \"A\"..\"H\", \"x\": [x0, x1], \"seed\": 1, \"dx\": 0.05, \"tracks\": \"same\"|\"independent\"}"),
            ParamSpec::with("mu", ParamKind::Json, ParamDefault::Value(serde_json::json!([])), "friction patches [{\"x\": [x0, x1], \"y\": [y0, y1], \"scale\": 0.2}, ...] (x, y optional: unbounded): the tire friction is multiplied by the scale of the last patch containing the contact point, else default_mu"),
            ParamSpec::number("default_mu", "1", 1.0, "friction scale outside every patch (>= 0)"),
        ],
        build: BlockBuild::Primitive(build),
    }
}
