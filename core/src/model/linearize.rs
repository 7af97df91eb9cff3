//! Linearization: `ẋ = A·x + B·u`, `y = C·x + D·u` about an operating point.
//!
//! The operating point is the state of a run stopped at time `t` (or the consistent initial
//! state), with the modes the model is in there: locked friction joints count as
//! constraints, sliding ones as their kinetic torque, saturations as their current branch.
//!
//! Coordinates: the mechanical network's speeds are reduced to the independent ones under
//! the active constraints (gears, grounds, locked joints): a row-echelon form of the
//! constraint matrix picks the dependent nodes, and each remaining (free) node's angle and
//! speed is a state, named after the node (`J1.flange.phi`, `J1.flange.w`). Then the
//! blocks' own states (`tf.x1`, ...). Left out: the work integrals of the energy audit and
//! the angles nothing depends on (no spring acts on them): they feed nothing back and would
//! only add zero eigenvalues. Inputs are signal inputs of blocks (`engine.throttle`), cut from
//! their drivers at the operating point (an open-loop input, as Simulink's linearization
//! input points); outputs are any loggable variables. Derivatives are central finite
//! differences, exact to rounding for linear models.

use std::sync::Arc;

use nalgebra::{DMatrix, DVector};
use serde_json::{json, Value};

use drivelink_solver::{EventCause, EventKind};

use crate::block::{FrictionMode, PortKind};
use crate::error::Error;
use crate::ids::SlotIx;
use crate::plan::{Plan, VarRef};
use crate::suggest;

use super::linear::{EvalFor, LinKernel};
use super::Model;

/// One eigenvalue of `A` with its natural frequency and damping ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Eigen {
    /// Real part, 1/s.
    pub re: f64,
    /// Imaginary part, rad/s.
    pub im: f64,
    /// `|λ|`, rad/s.
    pub natural_frequency: f64,
    /// `−Re λ / |λ|` (1 for a real negative eigenvalue; NaN for λ = 0).
    pub damping: f64,
}

/// A linear model about an operating point.
#[derive(Debug, Clone, PartialEq)]
pub struct Linearization {
    /// The operating point's time, s.
    pub time: f64,
    /// State names, in the order of the rows of `A`.
    pub states: Vec<String>,
    /// Input names (`block.port`).
    pub inputs: Vec<String>,
    /// Output names (`block.var`).
    pub outputs: Vec<String>,
    /// The state, input and output values at the operating point.
    pub x0: Vec<f64>,
    /// See `x0`.
    pub u0: Vec<f64>,
    /// See `x0`.
    pub y0: Vec<f64>,
    /// `∂ẋ/∂x`.
    pub a: DMatrix<f64>,
    /// `∂ẋ/∂u`.
    pub b: DMatrix<f64>,
    /// `∂y/∂x`.
    pub c: DMatrix<f64>,
    /// `∂y/∂u`.
    pub d: DMatrix<f64>,
    /// Eigenvalues of `A`, sorted by real part ascending (the slowest, closest to the
    /// imaginary axis, last).
    pub eigenvalues: Vec<Eigen>,
}

fn matrix_json(m: &DMatrix<f64>) -> Value {
    Value::Array(
        (0..m.nrows())
            .map(|i| Value::Array((0..m.ncols()).map(|j| json!(m[(i, j)])).collect()))
            .collect(),
    )
}

impl Linearization {
    /// The JSON written by `drivelink linearize`.
    pub fn to_json(&self) -> Value {
        json!({
            "time": self.time,
            "states": self.states,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "x0": self.x0,
            "u0": self.u0,
            "y0": self.y0,
            "A": matrix_json(&self.a),
            "B": matrix_json(&self.b),
            "C": matrix_json(&self.c),
            "D": matrix_json(&self.d),
            "eigenvalues": self.eigenvalues.iter().map(|e| json!({
                "real": e.re,
                "imag": e.im,
                "natural_frequency": e.natural_frequency,
                "damping": e.damping,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Where a coordinate of the linear model lives in the full state vector.
#[derive(Debug, Clone)]
enum Coord {
    /// A free node's position (with the dependent nodes' moves per unit).
    Pos(Vec<(usize, f64)>),
    /// A free node's speed (same expansion, in the speed half).
    Vel(Vec<(usize, f64)>),
    /// A block state.
    State(usize),
}

/// Rows of the active velocity constraints (always-active velocity rows and locked
/// joints) as a dense matrix.
fn active_constraints(m: &Model) -> DMatrix<f64> {
    let n = m.plan.nodes.len();
    let mut rows: Vec<Vec<(usize, f64)>> = Vec::new();
    for r in &m.net.rows {
        if r.tracking.is_none() {
            rows.push(r.terms.clone());
        }
    }
    for (j, r) in m.net.friction_rows.iter().enumerate() {
        if m.net.modes[j] == FrictionMode::Locked {
            rows.push(r.terms.clone());
        }
    }
    let mut g = DMatrix::zeros(rows.len(), n);
    for (i, r) in rows.iter().enumerate() {
        for &(k, c) in r {
            g[(i, k)] += c;
        }
    }
    g
}

/// The free nodes of `g` (reduced row-echelon form with partial pivoting) and, for each,
/// the speeds of every node per unit speed of it: `v = Σ_free v_f · e(f)`.
fn free_nodes(g: &DMatrix<f64>) -> Vec<(usize, Vec<(usize, f64)>)> {
    let (m, n) = g.shape();
    let mut r = g.clone();
    let scale = r.amax().max(1e-300);
    let tol = 1e-10 * scale;
    let mut pivots: Vec<usize> = Vec::new();
    let mut row = 0;
    for col in 0..n {
        if row >= m {
            break;
        }
        let (p, best) = (row..m)
            .map(|i| (i, r[(i, col)].abs()))
            .fold((row, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        if best <= tol {
            continue;
        }
        r.swap_rows(row, p);
        let pv = r[(row, col)];
        for j in 0..n {
            r[(row, j)] /= pv;
        }
        for i in 0..m {
            if i != row {
                let f = r[(i, col)];
                if f != 0.0 {
                    for j in 0..n {
                        r[(i, j)] -= f * r[(row, j)];
                    }
                }
            }
        }
        pivots.push(col);
        row += 1;
    }
    (0..n)
        .filter(|c| !pivots.contains(c))
        .map(|f| {
            let mut e = vec![(f, 1.0)];
            for (i, &p) in pivots.iter().enumerate() {
                let c = -r[(i, f)];
                if c.abs() > tol {
                    e.push((p, c));
                }
            }
            (f, e)
        })
        .collect()
}

/// Central-difference increment for a coordinate of value `x`.
fn increment(x: f64) -> f64 {
    6e-6 * x.abs().max(1.0)
}

/// The most states [`Model::linearize`] takes (see its error).
pub const MAX_LINEARIZE_STATES: usize = 2_000;

impl Model {
    /// The state at the start of a run after its initial event (consistent speeds,
    /// modes chosen), without integrating.
    fn initialized(&mut self) -> Result<Vec<f64>, Error> {
        let t0 = self.plan.settings.start_time;
        self.start_run(t0, self.plan.settings.max_output_values);
        let mut x = self.x0.clone();
        self.refresh_constants(t0, &x);
        self.handle(
            t0,
            &mut x,
            EventCause {
                kind: EventKind::Initial,
                guards: &[],
            },
        )
        .map_err(|e| Error::Netlist {
            file: self.plan.name.clone(),
            path: "linearize".into(),
            message: format!("the initial state is not consistent: {e}"),
        })?;
        Ok(x)
    }

    /// Linearize about the state at time `at` (run there from the start; `None`: the
    /// consistent initial state), with the signal inputs `inputs` (`block.port`, cut from
    /// their drivers) and the variables `outputs` (`block.var`). See the module docs.
    pub fn linearize(
        &mut self,
        at: Option<f64>,
        inputs: &[String],
        outputs: &[String],
    ) -> Result<Linearization, Error> {
        let model_name = self.plan.name.clone();
        let bad = |path: &str, message: String| Error::Netlist {
            file: model_name.clone(),
            path: path.to_string(),
            message,
        };
        let (in_pos, out_refs) = match (self.resolve_inputs(inputs), self.resolve_outputs(outputs))
        {
            (Ok(i), Ok(o)) => (i, o),
            (Err(a), Err(b)) => return Err(Error::Many(vec![a, b])),
            (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        let n = self.plan.n_states;
        if n > MAX_LINEARIZE_STATES {
            return Err(bad(
                "states",
                format!(
                    "the model has {n} states; linearize takes at most {MAX_LINEARIZE_STATES}: it \
                     keeps dense n x n matrices and computes their eigenvalues in O(n³) (2,000 \
                     states take about 40 s, 4,000 more than 5 min)"
                ),
            ));
        }
        let t0 = self.plan.settings.start_time;
        let (t, x) = match at {
            Some(t) if t > t0 => {
                let mut s = self.plan.settings.clone();
                s.stop_time = t;
                let r = self.run_with(&s);
                if r.status != crate::result::RunStatus::Completed {
                    return Err(bad(
                        "--at",
                        format!(
                            "the run to the operating point t = {t} s ended early ({}): {}",
                            r.status.as_str(),
                            r.message
                        ),
                    ));
                }
                (t, self.run.last_x.clone())
            }
            Some(t) if t < t0 => {
                return Err(bad(
                    "--at",
                    format!("t = {t} s is before the start time {t0} s"),
                ))
            }
            _ => (t0, self.initialized()?),
        };
        // Open the inputs: reroute each to a slot of its own holding its value here.
        self.eval(t, &x);
        let u0: Vec<f64> = in_pos
            .iter()
            .map(|&p| self.ev.sig[self.plan.in_slots[p].ix()])
            .collect();
        let saved = self.open_inputs(&in_pos, &u0);
        let out = self.linearize_here(t, &x, &u0, &out_refs);
        self.close_inputs(saved);
        let mut lin = out;
        lin.inputs = inputs.to_vec();
        lin.outputs = outputs.to_vec();
        Ok(lin)
    }

    /// The positions in `plan.in_slots` of the inputs `block.port`.
    fn resolve_inputs(&self, inputs: &[String]) -> Result<Vec<usize>, Error> {
        let plan = &self.plan;
        let mut errors = Vec::new();
        let mut pos = Vec::new();
        for name in inputs {
            let (block, port) = name.rsplit_once('.').unwrap_or((name.as_str(), ""));
            let Some(b) = plan.blocks.iter().position(|bp| bp.name == block) else {
                errors.push(Error::Netlist {
                    file: plan.name.clone(),
                    path: format!("--inputs {name}"),
                    message: format!(
                        "unknown block '{block}'{}",
                        suggest::hint(block, plan.blocks.iter().map(|b| b.name.as_str()))
                    ),
                });
                continue;
            };
            let ins: Vec<&str> = plan.blocks[b]
                .ports
                .iter()
                .filter(|p| p.kind == PortKind::In)
                .map(|p| p.name.as_str())
                .collect();
            match ins.iter().position(|p| *p == port) {
                // The same input twice would be two columns of B for one signal.
                Some(i) if pos.contains(&(plan.blocks[b].inputs.start + i)) => {
                    errors.push(Error::Netlist {
                        file: plan.name.clone(),
                        path: format!("--inputs {name}"),
                        message: format!("'{name}' is listed twice; list each input once"),
                    })
                }
                Some(i) => pos.push(plan.blocks[b].inputs.start + i),
                None => errors.push(Error::Netlist {
                    file: plan.name.clone(),
                    path: format!("--inputs {name}"),
                    message: format!(
                        "block '{block}' has no signal input '{port}'{}; its inputs are: {}",
                        suggest::hint(port, ins.iter().copied()),
                        if ins.is_empty() {
                            "(none)".to_string()
                        } else {
                            ins.join(", ")
                        }
                    ),
                }),
            }
        }
        Error::from_list(errors)?;
        Ok(pos)
    }

    /// The sources of the variables `outputs`.
    fn resolve_outputs(&self, outputs: &[String]) -> Result<Vec<VarRef>, Error> {
        let plan = &self.plan;
        let mut errors = Vec::new();
        let mut refs = Vec::new();
        for name in outputs {
            match plan.variable(name) {
                Some(v) => refs.push(v.source),
                None => errors.push(Error::UnknownVariable {
                    hint: suggest::hint(name, plan.vars.iter().map(|v| v.name.as_str())),
                    known: String::new(),
                    name: name.clone(),
                }),
            }
        }
        Error::from_list(errors)?;
        Ok(refs)
    }

    /// Reroute the inputs at `in_pos` to new constant slots holding `u0`; returns what
    /// `close_inputs` restores.
    fn open_inputs(&mut self, in_pos: &[usize], u0: &[f64]) -> (Arc<Plan>, LinKernel) {
        let mut p = (*self.plan).clone();
        for (k, &pos) in in_pos.iter().enumerate() {
            let old = p.in_slots[pos];
            let new = SlotIx::at(p.n_signals + k);
            p.in_slots[pos] = new;
            for r in p.rows.iter_mut() {
                if r.tracking == Some(old) && r.block.ix() == self.block_of_input(pos) {
                    r.tracking = Some(new);
                }
            }
        }
        p.n_signals += in_pos.len();
        self.ev.sig.extend_from_slice(u0);
        let p = Arc::new(p);
        let lin = LinKernel::build(&p, &self.decls);
        let old_lin = std::mem::replace(&mut self.lin, lin);
        let old_plan = std::mem::replace(&mut self.plan, p.clone());
        self.repoint_programs(p);
        self.cache.valid = false;
        self.ev.held_g_valid = false;
        (old_plan, old_lin)
    }

    fn close_inputs(&mut self, (plan, lin): (Arc<Plan>, LinKernel)) {
        self.ev.sig.truncate(plan.n_signals);
        self.repoint_programs(plan.clone());
        self.plan = plan;
        self.ev.held_g_valid = false;
        self.lin = lin;
        self.cache.valid = false;
    }

    /// The block owning input position `pos`.
    fn block_of_input(&self, pos: usize) -> usize {
        self.plan
            .blocks
            .iter()
            .position(|b| b.inputs.contains(&pos))
            .unwrap_or(usize::MAX)
    }

    /// The linear model at `(t, x)` with the (already opened) inputs at `u0`.
    fn linearize_here(&mut self, t: f64, x: &[f64], u0: &[f64], outs: &[VarRef]) -> Linearization {
        let plan = self.plan.clone();
        let n = plan.nodes.len();
        let g = active_constraints(self);
        let free = free_nodes(&g);
        let mut coords: Vec<Coord> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let units = |k: usize| match plan.nodes[k].kind {
            PortKind::Trans => ("s", "v"),
            _ => ("phi", "w"),
        };
        for (f, e) in &free {
            coords.push(Coord::Pos(e.clone()));
            names.push(format!("{}.{}", plan.nodes[*f].name, units(*f).0));
        }
        for (f, e) in &free {
            coords.push(Coord::Vel(e.iter().map(|&(k, c)| (n + k, c)).collect()));
            names.push(format!("{}.{}", plan.nodes[*f].name, units(*f).1));
        }
        for bp in &plan.blocks {
            for (k, i) in bp.x.clone().enumerate() {
                coords.push(Coord::State(i));
                names.push(format!("{}.x{}", bp.name, k + 1));
            }
        }
        // Rigid bodies: their 13 states as they are (the quaternion's norm direction is a
        // stable mode of the renormalisation term; x, y and yaw are integrators).
        const BODY_STATES: [&str; crate::frame::FRAME_STATES] = [
            "x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "p", "q", "r",
        ];
        for (b, body) in plan.frames.iter().enumerate() {
            for (k, var) in BODY_STATES.iter().enumerate() {
                coords.push(Coord::State(
                    plan.frames_x.start + b * crate::frame::FRAME_STATES + k,
                ));
                names.push(format!("{body}.{var}"));
            }
        }
        // Thermal nodes with a heat capacity: their temperature is a state.
        for nd in &plan.thermal.nodes {
            if let crate::thermal::HeatNodeKind::Capacitive { state } = nd.kind {
                coords.push(Coord::State(state.ix()));
                names.push(format!("{}.T", nd.name));
            }
        }
        let ns = coords.len();
        let (ni, no) = (u0.len(), outs.len());
        let nraw = plan.n_states;
        let first_in = plan.n_signals - ni;
        let select = |dx: &[f64]| -> DVector<f64> {
            DVector::from_iterator(
                ns,
                coords.iter().map(|c| match c {
                    Coord::Pos(e) => dx[e[0].0],
                    Coord::Vel(e) => dx[e[0].0],
                    Coord::State(i) => dx[*i],
                }),
            )
        };
        let value = |c: &Coord, x: &[f64]| match c {
            Coord::Pos(e) | Coord::Vel(e) => x[e[0].0],
            Coord::State(i) => x[*i],
        };
        let mut dx = vec![0.0; nraw];
        let mut xp = x.to_vec();
        // One evaluation: (selected derivatives, outputs) at state xp. A full evaluation
        // (as at a step end): the outputs are read after it, so none may be skipped.
        // The blocks held between events (`compile/held.rs`) are refreshed first: an opened
        // input may feed one, and its perturbation must reach what it computes.
        let probe = |m: &mut Model, xp: &[f64], dx: &mut [f64]| -> (DVector<f64>, DVector<f64>) {
            m.refresh_constants(t, xp);
            m.eval_for_and_keep(t, xp, EvalFor::All);
            m.derivs(t, xp, dx, true);
            let y = DVector::from_iterator(no, outs.iter().map(|&r| m.var_value(r, t, xp)));
            (select(dx), y)
        };
        let (_, y0) = probe(self, x, &mut dx);
        let mut a = DMatrix::zeros(ns, ns);
        let mut c = DMatrix::zeros(no, ns);
        for (j, coord) in coords.iter().enumerate() {
            let h = increment(value(coord, x));
            let expand: Vec<(usize, f64)> = match coord {
                Coord::Pos(e) | Coord::Vel(e) => e.clone(),
                Coord::State(i) => vec![(*i, 1.0)],
            };
            for &(i, w) in &expand {
                xp[i] = x[i] + w * h;
            }
            let (fp, yp) = probe(self, &xp, &mut dx);
            for &(i, w) in &expand {
                xp[i] = x[i] - w * h;
            }
            let (fm, ym) = probe(self, &xp, &mut dx);
            for &(i, _) in &expand {
                xp[i] = x[i];
            }
            a.set_column(j, &((fp - fm) / (2.0 * h)));
            c.set_column(j, &((yp - ym) / (2.0 * h)));
        }
        let mut b = DMatrix::zeros(ns, ni);
        let mut d = DMatrix::zeros(no, ni);
        for (k, &uk) in u0.iter().enumerate().take(ni) {
            let h = increment(uk);
            self.ev.sig[first_in + k] = uk + h;
            let (fp, yp) = probe(self, x, &mut dx);
            self.ev.sig[first_in + k] = uk - h;
            let (fm, ym) = probe(self, x, &mut dx);
            self.ev.sig[first_in + k] = uk;
            b.set_column(k, &((fp - fm) / (2.0 * h)));
            d.set_column(k, &((yp - ym) / (2.0 * h)));
        }
        // Angles nothing depends on (no spring, no angle-dependent force) are unobservable
        // integrators with eigenvalue 0: leave them out.
        let keep: Vec<usize> = (0..ns)
            .filter(|&j| {
                !matches!(coords[j], Coord::Pos(_))
                    || a.column(j)
                        .iter()
                        .chain(c.column(j).iter())
                        .any(|&v| v != 0.0)
            })
            .collect();
        let a = a.select_rows(&keep).select_columns(&keep);
        let b = b.select_rows(&keep);
        let c = c.select_columns(&keep);
        let names: Vec<String> = keep.iter().map(|&j| names[j].clone()).collect();
        let x0: Vec<f64> = keep.iter().map(|&j| value(&coords[j], x)).collect();
        let eigenvalues = eigen(&a);
        Linearization {
            time: t,
            states: names,
            inputs: Vec::new(),
            outputs: Vec::new(),
            x0,
            u0: u0.to_vec(),
            y0: y0.iter().copied().collect(),
            a,
            b,
            c,
            d,
            eigenvalues,
        }
    }
}

/// Eigenvalues of `a` with natural frequency and damping, sorted by real part ascending
/// (fastest decay first, slowest last).
fn eigen(a: &DMatrix<f64>) -> Vec<Eigen> {
    if a.nrows() == 0 {
        return Vec::new();
    }
    let ev: Vec<(f64, f64)> = match nalgebra::linalg::Schur::try_new(a.clone(), 1e-14, 100_000) {
        Some(s) => s
            .complex_eigenvalues()
            .iter()
            .map(|z| (z.re, z.im))
            .collect(),
        None => a
            .complex_eigenvalues()
            .iter()
            .map(|z| (z.re, z.im))
            .collect(),
    };
    // A mode whose eigenvalue is below 1e-9 of the largest is a rigid-body or integrator
    // mode (0 in exact arithmetic; the finite-difference Jacobian leaves it near 1e-13,
    // whose sign would read as a growing mode with damping −1): reported as exactly 0.
    let largest = ev.iter().map(|&(re, im)| re.hypot(im)).fold(0.0, f64::max);
    let mut out: Vec<Eigen> = ev
        .into_iter()
        .map(|(re, im)| {
            let (re, im) = if re.hypot(im) <= 1e-9 * largest {
                (0.0, 0.0)
            } else {
                (re, im)
            };
            let wn = re.hypot(im);
            Eigen {
                re,
                im,
                natural_frequency: wn,
                damping: if wn > 0.0 { -re / wn } else { f64::NAN },
            }
        })
        .collect();
    out.sort_by(|p, q| p.re.total_cmp(&q.re).then(p.im.total_cmp(&q.im)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rigid-body mode left at +1.6e-13 by finite differences is reported as exactly 0
    /// with undefined damping (it read as a growing mode with damping −1); a slow real
    /// mode at 1e-6 of the fastest is kept.
    #[test]
    fn numerically_zero_eigenvalues_are_reported_as_zero() {
        let a = DMatrix::from_diagonal(&nalgebra::DVector::from_vec(vec![-10.0, 1.6e-13, -1e-5]));
        let ev = eigen(&a);
        assert_eq!(ev.len(), 3);
        assert!((ev[0].re + 10.0).abs() < 1e-12);
        assert!((ev[1].re + 1e-5).abs() < 1e-15);
        assert!((ev[1].damping - 1.0).abs() < 1e-12);
        assert_eq!(
            (ev[2].re, ev[2].im, ev[2].natural_frequency),
            (0.0, 0.0, 0.0)
        );
        assert!(ev[2].damping.is_nan());
    }
}
