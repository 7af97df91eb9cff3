//! `PathFollower`: a steering driver that follows a path (pure pursuit or Stanley), with
//! the path generators of the standard maneuvers (a circle, the ISO 3888-2 lane change, a
//! line) and, on the ISO 3888-2 track, the cone gates: corner clearances and an exact
//! count of the gates hit.
//!
//! `x[in]`, `y[in]` (m, world), `yaw[in]` (rad), `speed[in]` (m/s) -> `steer[out]`
//! (road-wheel angle, rad, + = left), `lateral_error[out]` (m, + = the car's point left of
//! the path), `progress[out]` (m along the path). `(x, y)` is the car's reference point
//! (its centre of mass, `RigidBody.x/y`); the rear axle is `rear_axle` behind it along the
//! heading and the front axle `wheelbase` ahead of the rear axle.
//!
//! The path: `path` = a point list `[[x, y], ...]` (world, m), or `generator` =
//! `circle` (radius `radius`, centre `(0, radius)`: to the left of the x axis, tangent to
//! it at the origin, driven counter-clockwise; a car at the origin heading +x starts on
//! it), `iso3888_2` (the lane-change centre line for a car `vehicle_width` wide, section 1
//! starting at `x = x0` on `y = 0`, driven along +x; see `vehicle::path::iso3888`) or `line`
//! (through `(x0, y0)` with heading `heading`; the x axis by default; also the path when
//! neither `path` nor `generator` is given). Geometry in
//! `vehicle::path`.
//!
//! Laws, with `L_d = max(lookahead_min, lookahead_time·speed)`:
//! - `pure_pursuit`: the target is the path point `L_d` further along the path than the
//!   rear axle's nearest point; with `(l_x, l_y)` the target in the car's axes from the rear
//!   axle, the curvature is `κ = 2·l_y/(l_x² + l_y²)` and `steer = atan(wheelbase·κ)`. On a
//!   circle of radius `R` with the rear axle on it and tangent, `κ = 1/R` exactly.
//! - `stanley`: `steer = (ψ_path − yaw) + atan(−k·e_f/(|speed| + k_soft))` with `e_f` the
//!   front axle's lateral error and `ψ_path` the path heading at its nearest point
//!   (wrapped heading error).
//!
//! With `k_integral` > 0 the steer also has integral action on the car point's lateral
//! error, `steer −= k_integral·∫lateral_error dt` (one state; while the steer is limited
//! only the error that takes it back off the limit is integrated): a car whose tires slip sideways runs a little outside the path a kinematic
//! law aims for (pure pursuit ignores the side slip); the integral takes that steady error
//! away, as a human driver does.
//!
//! The steer is limited to `±max_steer` by a located mode (guards on the unlimited steer,
//! as `Saturation`). On the circle the lap count is a mode changed at the located crossing
//! of the top of the circle, so `progress` grows continuously lap after lap.
//!
//! # Gates (generator `iso3888_2`)
//! The car is a rectangle `vehicle_length × vehicle_width` centred on `(x, y)`, aligned
//! with `yaw`. Variables: `gate` (the section 1, 3 or 5 the car's point is in or
//! approaching), `clearance_fl`, `clearance_fr`, `clearance_rl`, `clearance_rr` (m, the
//! lateral clearance of each corner to that gate's cone lines, + inside the lane, −
//! outside), `min_clearance` and `cones_hit`. `cones_hit` counts the gated sections in
//! which at least one corner crossed a cone line: each corner has, per gated section, a
//! guard `max(distance outside the section's x range, lateral clearance)`, negative exactly
//! where the corner is within the section and outside its lane; its zero crossing is a
//! located event (logged `zero_crossing`, naming the corner, the section and the side),
//! and the first one in a section adds 1. A section counts once however many corners or
//! crossings; a corner that starts outside the lane of a section counts at the start.

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, EventCx, EventTag, ParamDefault, ParamError,
    ParamKind, ParamSpec, Params, PortDecl, Registry, VarDecl, VarSource,
};
use serde_json::json;

use super::finite;
use super::path::iso3888::Track;
use super::path::{wrap, Path, PathError, Polyline, Projection};
use crate::signal::FirstCall;
use crate::util::{key_bits, LastValue};

pub(crate) fn register(r: &mut Registry) {
    r.register(path_follower_type());
}

/// The `PathFollower` block type: its parameters and how it is built.
fn path_follower_type() -> BlockType {
    BlockType {
        name: "PathFollower",
        category: "vehicle",
        doc: "Steering driver following a path: pure pursuit (target L_d = max(lookahead_min, lookahead_time·speed) ahead along the path from the rear axle, steer = atan(wheelbase·2·l_y/l²)) or Stanley (heading error + atan(−k·e_front/(|speed| + k_soft))), limited to ±max_steer (a located mode). The path is a point list (`path`) or a generator: circle (centre (0, radius), counter-clockwise from the origin), iso3888_2 (lane-change centre line from x0, with the gate clearances of the car's corners and cones_hit counted at located events), line (through (x0, y0) along heading; also the path when neither is given). Variables heading_error, lookahead, curvature; with the circle lap; with iso3888_2 gate, clearance_fl, clearance_fr, clearance_rl, clearance_rr, min_clearance, cones_hit, cone_left, cone_right.",
        ports_doc: "x[in], y[in], yaw[in], speed[in] -> steer[out], lateral_error[out], progress[out]",
        params: vec![
            ParamSpec::optional("path", ParamKind::Json, "the path: points [[x, y], ...] (world, m; at least two, consecutive points distinct), or a generator object {\"type\": \"circle\", \"radius\": 40}, {\"type\": \"iso3888_2\", \"vehicle_width\": 1.8, \"x0\": 50}, {\"type\": \"line\"} whose keys are the generator parameters below (a key not given takes the parameter's value); or give generator"),
            ParamSpec::optional("generator", ParamKind::Choice(&["circle", "iso3888_2", "line"]), "a generated path instead of a point list (neither: the line)"),
            ParamSpec::number("radius", "m", 40.0, "circle: radius (> 0)"),
            ParamSpec::number("vehicle_width", "m", 1.8, "iso3888_2: vehicle width w (sets the lane widths; the car's width for the gate clearances)"),
            ParamSpec::number("vehicle_length", "m", 4.5, "iso3888_2: the car's length for the gate clearances (> 0)"),
            ParamSpec::number("x0", "m", 0.0, "iso3888_2: x of the start of section 1; line: x of a point of the line"),
            ParamSpec::number("y0", "m", 0.0, "line: y of a point of the line"),
            ParamSpec::number("heading", "rad", 0.0, "line: direction of travel"),
            ParamSpec::with("law", ParamKind::Choice(&["pure_pursuit", "stanley"]), ParamDefault::Value(json!("pure_pursuit")), "steering law"),
            ParamSpec::number("lookahead_time", "s", 1.0, "pure pursuit: lookahead distance per m/s of speed (>= 0)"),
            ParamSpec::number("lookahead_min", "m", 3.0, "pure pursuit: minimum lookahead distance (> 0)"),
            ParamSpec::with("max_steer", ParamKind::Number { unit: "rad" }, ParamDefault::Value(json!("35 deg")), "road-wheel steer limit (> 0)"),
            ParamSpec::required("wheelbase", "m", "distance between the axles (> 0)"),
            ParamSpec::number("rear_axle", "m", 0.0, "distance from the (x, y) point back to the rear axle (the centre of mass's distance to the rear axle for RigidBody.x/y)"),
            ParamSpec::number("k", "1/s", 1.0, "stanley: cross-track gain (>= 0)"),
            ParamSpec::number("k_soft", "m/s", 1.0, "stanley: speed added to |speed| in the cross-track term (> 0)"),
            ParamSpec::number("k_integral", "rad/(m*s)", 0.0, "integral action: steer −= k_integral·∫lateral_error dt, conditional integration at the steer limit (>= 0; 0: none, no state)"),
        ],
        build: BlockBuild::Primitive(build),
    }
}

/// The steering law.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Law {
    PurePursuit,
    Stanley { k: f64, soft: f64 },
}

/// The steer limit's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sat {
    Linear,
    Lower,
    Upper,
}

/// The car's rectangle on the ISO 3888-2 track.
#[derive(Debug, Clone, PartialEq)]
struct Gates {
    track: Track,
    half_length: f64,
    half_width: f64,
}

const CORNERS: [&str; 4] = ["fl", "fr", "rl", "rr"];

/// A custom variable.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Var {
    HeadingError,
    Lookahead,
    Curvature,
    Lap,
    Gate,
    Clearance(usize),
    MinClearance,
    ConesHit,
    /// The left (true) or right cone line of the gate the car's point is in.
    Cone(bool),
}

fn non_negative(p: &Params, name: &str) -> Result<f64, ParamError> {
    let v = finite(p, name)?;
    if v < 0.0 {
        return Err(p.invalid(name, format!("must be >= 0, got {v}")));
    }
    Ok(v)
}

fn positive(p: &Params, name: &str) -> Result<f64, ParamError> {
    let v = finite(p, name)?;
    if !(v > 0.0) {
        return Err(p.invalid(name, format!("must be > 0, got {v}")));
    }
    Ok(v)
}

/// A [`PathError`] as the parameter error of `param`.
fn path_error(p: &Params, param: &str, e: PathError) -> ParamError {
    p.invalid(param, e.message)
}

/// A generator given as the object `path` (`{"type": "circle", "radius": 40}`): its type
/// and its keys, each a number (SI) or a quantity with a unit.
struct PathObject {
    kind: String,
    keys: serde_json::Map<String, serde_json::Value>,
}

impl PathObject {
    /// Key `name` of the object in `unit`, else the block parameter of that name.
    fn num(&self, p: &Params, name: &str, unit: &str) -> Result<f64, ParamError> {
        match self.keys.get(name) {
            Some(v) => super::road::quantity(v, unit)
                .map_err(|m| p.invalid("path", format!("key '{name}': {m}"))),
            None => finite(p, name),
        }
    }
}

/// The points of a point-list `path`: `[[x, y], ...]`, each a number (m) or a quantity.
fn path_points(p: &Params, rows: &[serde_json::Value]) -> Result<Vec<[f64; 2]>, ParamError> {
    rows.iter()
        .enumerate()
        .map(|(i, r)| match r.as_array().map(Vec::as_slice) {
            Some([x, y]) => {
                let q = |v| {
                    super::road::quantity(v, "m")
                        .map_err(|m| p.invalid("path", format!("point {i}: {m}")))
                };
                Ok([q(x)?, q(y)?])
            }
            _ => Err(p.invalid("path", format!("point {i} is {r}; expected [x, y]"))),
        })
        .collect()
}

/// The path and, on the ISO 3888-2 track, its gates.
fn build_path(p: &Params) -> Result<(Path, Option<Gates>), ParamError> {
    let mut generator = if p.has("generator") {
        Some(p.text("generator")?.to_string())
    } else {
        None
    };
    let mut object = None;
    let mut points = None;
    if p.has("path") {
        match p.json("path")? {
            serde_json::Value::Array(rows) => points = Some(path_points(p, &rows)?),
            serde_json::Value::Object(mut keys) => {
                let kind = match keys.remove("type") {
                    Some(serde_json::Value::String(t)) => t,
                    _ => return Err(p.invalid(
                        "path",
                        "a generator object needs \"type\": \"circle\", \"iso3888_2\" or \"line\"",
                    )),
                };
                if let Some(g) = &generator {
                    return Err(p.invalid(
                        "generator",
                        format!("give either a path or a generator, not both (generator '{g}')"),
                    ));
                }
                generator = Some(kind.clone());
                object = Some(PathObject { kind, keys });
            }
            other => {
                return Err(p.invalid(
                    "path",
                    format!("expected points [[x, y], ...] or a generator object, got {other}"),
                ))
            }
        }
    }
    let num = |name: &str, unit: &str| match &object {
        Some(o) => o.num(p, name, unit),
        None => finite(p, name),
    };
    if let Some(o) = &object {
        let known: &[&str] = match o.kind.as_str() {
            "circle" => &["radius"],
            "iso3888_2" => &["vehicle_width", "vehicle_length", "x0"],
            "line" => &["x0", "y0", "heading"],
            other => {
                return Err(p.invalid(
                    "path",
                    format!("unknown generator type '{other}' (circle, iso3888_2, line)"),
                ))
            }
        };
        if let Some(k) = o.keys.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(p.invalid(
                "path",
                format!(
                    "key '{k}' is not one of {} for type '{}'",
                    known.join(", "),
                    o.kind
                ),
            ));
        }
    }
    let positive_num = |name: &str, unit: &str| {
        let v = num(name, unit)?;
        if v > 0.0 {
            Ok(v)
        } else {
            Err(p.invalid(name, format!("must be > 0, got {v}")))
        }
    };
    match (points, generator.as_deref()) {
        (Some(_), Some(g)) => Err(p.invalid(
            "generator",
            format!("give either a point list (path) or a generator, not both (generator '{g}')"),
        )),
        (Some(pts), None) => {
            let pl = Polyline::new(pts).map_err(|e| path_error(p, "path", e))?;
            Ok((Path::Polyline(pl), None))
        }
        (None, Some("circle")) => Ok((
            Path::Circle {
                radius: positive_num("radius", "m")?,
            },
            None,
        )),
        (None, None | Some("line")) => Ok((
            Path::Line {
                origin: [num("x0", "m")?, num("y0", "m")?],
                heading: num("heading", "rad")?,
            },
            None,
        )),
        (None, Some("iso3888_2")) => {
            let w = positive_num("vehicle_width", "m")?;
            let l = positive_num("vehicle_length", "m")?;
            let track = Track::new(w, num("x0", "m")?);
            let pl = track.center_line().map_err(|e| path_error(p, "x0", e))?;
            let gates = Gates {
                track,
                half_length: 0.5 * l,
                half_width: 0.5 * w,
            };
            Ok((Path::Polyline(pl), Some(gates)))
        }
        (None, Some(other)) => Err(p.invalid(
            "generator",
            format!("unknown generator type '{other}' (circle, iso3888_2, line)"),
        )),
    }
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let (path, gates) = build_path(p)?;
    let law = match p.text("law")? {
        "pure_pursuit" => Law::PurePursuit,
        "stanley" => Law::Stanley {
            k: non_negative(p, "k")?,
            soft: positive(p, "k_soft")?,
        },
        other => {
            return Err(p.invalid(
                "law",
                format!("unknown law '{other}' (pure_pursuit, stanley)"),
            ))
        }
    };
    let mut vars = vec![Var::HeadingError, Var::Lookahead, Var::Curvature];
    if matches!(path, Path::Circle { .. }) {
        vars.push(Var::Lap);
    }
    if gates.is_some() {
        vars.push(Var::Gate);
        vars.extend((0..4).map(Var::Clearance));
        vars.extend([
            Var::MinClearance,
            Var::ConesHit,
            Var::Cone(true),
            Var::Cone(false),
        ]);
    }
    Ok(Box::new(PathFollower {
        path,
        gates,
        law,
        lookahead_time: non_negative(p, "lookahead_time")?,
        lookahead_min: positive(p, "lookahead_min")?,
        k_integral: non_negative(p, "k_integral")?,
        max_steer: positive(p, "max_steer")?,
        wheelbase: positive(p, "wheelbase")?,
        rear_axle: finite(p, "rear_axle")?,
        vars,
        sat: Sat::Linear,
        lap: 0.0,
        side: true,
        outside: [[false; 3]; 4],
        hit: [false; 3],
        cones_hit: 0,
        first: FirstCall::armed(),
        last_eval: LastValue::default(),
    }))
}

/// The path follower: see the module docs.
#[derive(Debug, Clone)]
pub struct PathFollower {
    path: Path,
    gates: Option<Gates>,
    law: Law,
    lookahead_time: f64,
    lookahead_min: f64,
    /// Integral gain on the lateral error (0: no state).
    k_integral: f64,
    max_steer: f64,
    wheelbase: f64,
    rear_axle: f64,
    vars: Vec<Var>,
    sat: Sat,
    /// Circle: completed laps (the branch cut crossed counter-clockwise minus clockwise).
    lap: f64,
    /// Circle: the car's point is on the right half (x >= 0) of the circle's plane.
    side: bool,
    /// Per corner and gated section: the corner is within the section, outside its lane.
    outside: [[bool; 3]; 4],
    /// Per gated section: a corner crossed one of its cone lines.
    hit: [bool; 3],
    cones_hit: u32,
    first: FirstCall,
    /// The last evaluation of the law and the inputs, state and modes it read.
    last_eval: LastValue<7, Eval>,
}

/// One evaluation of the law.
#[derive(Debug, Clone, Copy)]
struct Eval {
    /// The car point's nearest path point.
    proj: Projection,
    /// The steer before the limit, rad.
    steer: f64,
    /// The lookahead distance, m.
    lookahead: f64,
    /// The commanded path curvature, 1/m.
    curvature: f64,
}

impl PathFollower {
    /// The nearest path point to `p`, continuous with the car point's projection `near`
    /// (on the circle: the angle unwrapped next to the car's).
    fn project_near(&self, p: [f64; 2], near: &Projection) -> Projection {
        match self.path {
            Path::Circle { radius } => {
                let phi_near = near.s / radius;
                let (theta, _) = Path::circle_angle(radius, p);
                let lap = ((phi_near - theta) / (2.0 * std::f64::consts::PI)).round();
                self.path.project(p, lap)
            }
            _ => self.path.project(p, self.lap),
        }
    }

    /// The circle's lap count for the car point `p`: the mode `lap`, and one more (less)
    /// when `p` is already past the top of the circle while the mode still has it on the
    /// right (left) half, between a crossing and its located event (no jump of 2πR).
    fn lap_at(&self, p: [f64; 2]) -> f64 {
        let Path::Circle { radius } = self.path else {
            return self.lap;
        };
        let (theta, _) = Path::circle_angle(radius, p);
        let half = 0.5 * std::f64::consts::PI;
        if self.side && theta < -half {
            self.lap + 1.0
        } else if !self.side && theta > half {
            self.lap - 1.0
        } else {
            self.lap
        }
    }

    /// [`PathFollower::steer_law`] at this instant, kept for the other calls at the same
    /// point (the guards after the outputs, the logged variables): two projections on the
    /// path each.
    fn eval(&self, cx: &Cx) -> Eval {
        let integral = if self.k_integral > 0.0 { cx.x[0] } else { 0.0 };
        let side = f64::from(u8::from(self.side));
        let key = key_bits([cx.u(0), cx.u(1), cx.u(2), cx.u(3), integral, self.lap, side]);
        self.last_eval.get_or(key, || self.steer_law(cx))
    }

    /// The steering law at this instant.
    fn steer_law(&self, cx: &Cx) -> Eval {
        let (x, y, yaw, speed) = (cx.u(0), cx.u(1), cx.u(2), cx.u(3));
        let (sn, cs) = yaw.sin_cos();
        let proj = self.path.project([x, y], self.lap_at([x, y]));
        let rear = [x - self.rear_axle * cs, y - self.rear_axle * sn];
        let lookahead = self.lookahead_min.max(self.lookahead_time * speed);
        let (steer, curvature) = match self.law {
            Law::PurePursuit => {
                let pr = if self.rear_axle == 0.0 {
                    proj
                } else {
                    self.project_near(rear, &proj)
                };
                let t = self.path.point_at(pr.s + lookahead);
                let (dx, dy) = (t[0] - rear[0], t[1] - rear[1]);
                let (lx, ly) = (cs * dx + sn * dy, cs * dy - sn * dx);
                let l2 = lx * lx + ly * ly;
                let kappa = if l2 > 0.0 { 2.0 * ly / l2 } else { 0.0 };
                ((self.wheelbase * kappa).atan(), kappa)
            }
            Law::Stanley { k, soft } => {
                let front = [rear[0] + self.wheelbase * cs, rear[1] + self.wheelbase * sn];
                let pf = self.project_near(front, &proj);
                let d = wrap(pf.heading - yaw) + (-k * pf.lateral / (speed.abs() + soft)).atan();
                (d, d.tan() / self.wheelbase)
            }
        };
        let steer = if self.k_integral > 0.0 {
            steer - self.k_integral * cx.x[0]
        } else {
            steer
        };
        Eval {
            proj,
            steer,
            lookahead,
            curvature,
        }
    }

    /// The car's corners (fl, fr, rl, rr), world, m.
    fn corners(&self, g: &Gates, x: f64, y: f64, yaw: f64) -> [[f64; 2]; 4] {
        let (sn, cs) = yaw.sin_cos();
        let (a, b) = (g.half_length, g.half_width);
        [(a, b), (a, -b), (-a, b), (-a, -b)]
            .map(|(u, v)| [x + cs * u - sn * v, y + sn * u + cs * v])
    }

    fn n_steer_guards(&self) -> usize {
        2 + usize::from(matches!(self.path, Path::Circle { .. }))
    }

    /// The circle's half-plane coordinate of the car point (x; its sign is `side`).
    fn circle_side(&self, cx: &Cx) -> Option<(f64, f64)> {
        match self.path {
            Path::Circle { radius } => Some((cx.u(0), cx.u(1) - radius)),
            _ => None,
        }
    }

    fn update_sat(&mut self, steer: f64) -> bool {
        let valid = match self.sat {
            Sat::Linear => steer.abs() <= self.max_steer,
            Sat::Lower => steer <= -self.max_steer,
            Sat::Upper => steer >= self.max_steer,
        };
        if valid || steer.is_nan() {
            return false;
        }
        self.sat = if steer > self.max_steer {
            Sat::Upper
        } else if steer < -self.max_steer {
            Sat::Lower
        } else {
            Sat::Linear
        };
        true
    }

    fn update_lap(&mut self, cx: &mut EventCx, fresh: bool) -> bool {
        let Some((vx, vy)) = self.circle_side(&cx.view()) else {
            return false;
        };
        let side = vx >= 0.0;
        if side == self.side {
            return false;
        }
        if vy > 0.0 && !fresh {
            // Through the top of the circle, the branch cut of the angle.
            self.lap += if self.side { 1.0 } else { -1.0 };
            cx.log(EventTag::ZeroCrossing, format!("lap {}", self.lap));
        }
        self.side = side;
        true
    }

    fn update_gates(&mut self, cx: &mut EventCx) -> bool {
        let Some(g) = &self.gates else {
            return false;
        };
        let (x, y, yaw) = (cx.u(0), cx.u(1), cx.u(2));
        let corners = self.corners(g, x, y, yaw);
        let mut changed = false;
        let mut logs = Vec::new();
        for (c, p) in corners.iter().enumerate() {
            for (k, gate) in g.track.gates.iter().enumerate() {
                let out = gate.violation_guard(*p) < 0.0;
                if out == self.outside[c][k] {
                    continue;
                }
                self.outside[c][k] = out;
                changed = true;
                if out {
                    if !self.hit[k] {
                        self.hit[k] = true;
                        self.cones_hit += 1;
                    }
                    let side = if p[1] > gate.y_center {
                        "left"
                    } else {
                        "right"
                    };
                    logs.push(format!(
                        "corner {} crosses the {side} cone line of section {} (gates hit: {})",
                        CORNERS[c], gate.section, self.cones_hit
                    ));
                }
            }
        }
        for l in logs {
            cx.log(EventTag::ZeroCrossing, l);
        }
        changed
    }
}

impl Block for PathFollower {
    drivelink_core::run_state!(sat, lap, side, outside, hit, cones_hit, first);
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("x").with_unit("m"),
            PortDecl::input("y").with_unit("m"),
            PortDecl::input("yaw").with_unit("rad"),
            PortDecl::input("speed").with_unit("m/s"),
            PortDecl::output("steer").with_unit("rad"),
            PortDecl::output("lateral_error").with_unit("m"),
            PortDecl::output("progress").with_unit("m"),
        ];
        let variables = self.vars
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let s = VarSource::Custom(i);
                match v {
                    Var::HeadingError => VarDecl::new("heading_error", s, "rad")
                        .doc("path heading at the nearest point minus yaw (wrapped)"),
                    Var::Lookahead => VarDecl::new("lookahead", s, "m")
                        .doc("lookahead distance max(lookahead_min, lookahead_time·speed)"),
                    Var::Curvature => VarDecl::new("curvature", s, "1/m")
                        .doc("commanded path curvature tan(steer)/wheelbase, before the limit (+ = left)"),
                    Var::Lap => VarDecl::new("lap", s, "1")
                        .doc("circle: laps completed (crossings of the top of the circle)"),
                    Var::Gate => VarDecl::new("gate", s, "1")
                        .doc("iso3888_2: the gated section (1, 3, 5) the car is in or approaching"),
                    Var::Clearance(c) => VarDecl::new(format!("clearance_{}", CORNERS[*c]), s, "m")
                        .doc("iso3888_2: lateral clearance of this corner to the current gate's cone lines (+ inside, − outside)"),
                    Var::MinClearance => VarDecl::new("min_clearance", s, "m")
                        .doc("iso3888_2: the smallest of the four corner clearances"),
                    Var::ConesHit => VarDecl::new("cones_hit", s, "1")
                        .doc("iso3888_2: gated sections in which a corner crossed a cone line (located events)"),
                    Var::Cone(left) => VarDecl::new(if *left { "cone_left" } else { "cone_right" }, s, "m")
                        .doc(if *left {
                            "iso3888_2: y of the left cone line of the gated section the car's point is in; NaN between sections (plotted against car.x: the gates)"
                        } else {
                            "iso3888_2: y of the right cone line of the gated section the car's point is in; NaN between sections"
                        }),
                }
            })
            .collect();
        BlockDecl {
            ports,
            states: usize::from(self.k_integral > 0.0),
            variables,
            ..BlockDecl::default()
        }
        .guards_named(
            self.n_steer_guards() + if self.gates.is_some() { 12 } else { 0 },
            |i| match i {
                0 => "steer_lower".into(),
                1 => "steer_upper".into(),
                _ if i < self.n_steer_guards() => "lap".into(),
                _ => {
                    let j = i - self.n_steer_guards();
                    format!("cone_{}_section{}", CORNERS[j / 3], [1, 3, 5][j % 3])
                }
            },
        )
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let e = self.eval(cx);
        y[0] = match self.sat {
            Sat::Linear => e.steer,
            Sat::Lower => -self.max_steer,
            Sat::Upper => self.max_steer,
        };
        y[1] = e.proj.lateral;
        y[2] = e.proj.s;
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        if let Some(d) = dx.first_mut() {
            // Conditional integration (anti-windup): while the steer is limited, only the
            // part of the error that takes it back off the limit is integrated.
            let e = self.eval(cx).proj.lateral;
            *d = match self.sat {
                Sat::Linear => e,
                // steer −= k·∫e: e > 0 lowers the steer.
                Sat::Upper => e.max(0.0),
                Sat::Lower => e.min(0.0),
            };
        }
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let steer = self.eval(cx).steer;
        let m = self.max_steer;
        let (g0, g1) = match self.sat {
            Sat::Linear => (steer + m, m - steer),
            Sat::Lower => (-m - steer, 1.0),
            Sat::Upper => (1.0, steer - m),
        };
        g[0] = g0;
        g[1] = g1;
        if let Some((vx, _)) = self.circle_side(cx) {
            g[2] = if self.side { vx } else { -vx };
        }
        if let Some(gates) = &self.gates {
            let corners = self.corners(gates, cx.u(0), cx.u(1), cx.u(2));
            let base = self.n_steer_guards();
            for (c, p) in corners.iter().enumerate() {
                for (k, gate) in gates.track.gates.iter().enumerate() {
                    let v = gate.violation_guard(*p);
                    g[base + 3 * c + k] = if self.outside[c][k] { -v } else { v };
                }
            }
        }
    }
    fn reset(&mut self, _t0: f64) {
        self.sat = Sat::Linear;
        self.lap = 0.0;
        self.side = true;
        self.outside = [[false; 3]; 4];
        self.hit = [false; 3];
        self.cones_hit = 0;
        self.first.arm();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let fresh = self.first.take();
        // The lap first: the law's projection depends on it.
        let lap = self.update_lap(cx, fresh);
        let steer = self.eval(&cx.view()).steer;
        let old = self.sat;
        let sat = self.update_sat(steer);
        if sat && !fresh {
            cx.log(
                EventTag::ZeroCrossing,
                format!("steer limit {old:?} -> {:?}, steer {steer} rad", self.sat),
            );
        }
        let gates = self.update_gates(cx);
        lap || sat || gates
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        let clearances = || -> [f64; 4] {
            let Some(g) = &self.gates else {
                return [f64::NAN; 4];
            };
            let gate = &g.track.gates[g.track.current_gate(cx.u(0))];
            self.corners(g, cx.u(0), cx.u(1), cx.u(2))
                .map(|p| gate.lateral_clearance(p[1]))
        };
        match self.vars[i] {
            Var::HeadingError => wrap(self.eval(cx).proj.heading - cx.u(2)),
            Var::Lookahead => self.eval(cx).lookahead,
            Var::Curvature => self.eval(cx).curvature,
            Var::Lap => self.lap,
            Var::Gate => self.gates.as_ref().map_or(f64::NAN, |g| {
                f64::from(g.track.gates[g.track.current_gate(cx.u(0))].section)
            }),
            Var::Clearance(c) => clearances()[c],
            Var::MinClearance => clearances().into_iter().fold(f64::INFINITY, f64::min),
            Var::ConesHit => f64::from(self.cones_hit),
            Var::Cone(left) => self.gates.as_ref().map_or(f64::NAN, |g| {
                let x = cx.u(0);
                match g
                    .track
                    .gates
                    .iter()
                    .find(|gate| (gate.x[0]..=gate.x[1]).contains(&x))
                {
                    Some(gate) if left => gate.y_left(),
                    Some(gate) => gate.y_right(),
                    None => f64::NAN,
                }
            }),
        }
    }
}
