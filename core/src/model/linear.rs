//! The linear kernels: every linear time-invariant block (`Gain`, `Sum`, `Integrator`,
//! `TransferFcn`, `StateSpace`, `PID`, ...) evaluated together as sparse rows over flat
//! arrays, instead of one virtual call per block.
//!
//! An output row is `sig[dst] = Σ c·x[i] + Σ d·sig[j]`, a derivative row
//! `dx[dst] = Σ a·x[i] + Σ b·sig[j]`; zero coefficients are dropped. Most rows have at most
//! one state term and one input term (gains, first-order lags, integrators): those are
//! stored inline and evaluated without indirection through a term list; longer rows keep
//! their terms in a compressed list. The rows follow the plan's `lin_out` / `lin_der`
//! order, so a plan stage `Linear(range)` is a range of rows.

use crate::block::Block;
use crate::plan::{LinRow, Plan};

/// What a row sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Nothing (all coefficients zero): the row is 0.
    Zero,
    /// `cx·x[xi]`.
    X,
    /// `cu·sig[ui]`.
    U,
    /// `cx·x[xi] + cu·sig[ui]`.
    XU,
    /// The terms `terms[start..end]` (state terms first, then input terms).
    General { start: u32, n_x: u32, end: u32 },
}

/// One row.
#[derive(Debug, Clone, Copy)]
struct Row {
    dst: u32,
    shape: Shape,
    xi: u32,
    ui: u32,
    cx: f64,
    cu: f64,
}

/// The rows of one kernel and the term list of its general rows.
#[derive(Debug, Clone, Default)]
struct Rows {
    rows: Vec<Row>,
    /// (index, coefficient) of general rows.
    terms: Vec<(u32, f64)>,
}

impl Rows {
    fn push(&mut self, dst: usize, x_terms: &[(usize, f64)], u_terms: &[(usize, f64)]) {
        let xs: Vec<(u32, f64)> = x_terms
            .iter()
            .filter(|t| t.1 != 0.0)
            .map(|&(i, c)| (i as u32, c))
            .collect();
        let us: Vec<(u32, f64)> = u_terms
            .iter()
            .filter(|t| t.1 != 0.0)
            .map(|&(i, c)| (i as u32, c))
            .collect();
        let mut row = Row {
            dst: dst as u32,
            shape: Shape::Zero,
            xi: 0,
            ui: 0,
            cx: 0.0,
            cu: 0.0,
        };
        row.shape = match (xs.len(), us.len()) {
            (0, 0) => Shape::Zero,
            (1, 0) => Shape::X,
            (0, 1) => Shape::U,
            (1, 1) => Shape::XU,
            _ => {
                let start = self.terms.len() as u32;
                self.terms.extend_from_slice(&xs);
                self.terms.extend_from_slice(&us);
                Shape::General {
                    start,
                    n_x: xs.len() as u32,
                    end: self.terms.len() as u32,
                }
            }
        };
        if let Some(&(i, c)) = xs.first() {
            row.xi = i;
            row.cx = c;
        }
        if let Some(&(j, c)) = us.first() {
            row.ui = j;
            row.cu = c;
        }
        self.rows.push(row);
    }

    /// The value of `row`.
    #[inline(always)]
    fn value(&self, row: &Row, x: &[f64], sig: &[f64]) -> f64 {
        match row.shape {
            Shape::X => row.cx * x[row.xi as usize],
            Shape::U => row.cu * sig[row.ui as usize],
            Shape::XU => row.cx * x[row.xi as usize] + row.cu * sig[row.ui as usize],
            Shape::Zero => 0.0,
            Shape::General { start, n_x, end } => {
                let (s, m, e) = (start as usize, (start + n_x) as usize, end as usize);
                let mut acc = 0.0;
                for &(i, c) in &self.terms[s..m] {
                    acc += c * x[i as usize];
                }
                for &(j, c) in &self.terms[m..e] {
                    acc += c * sig[j as usize];
                }
                acc
            }
        }
    }
}

/// A run of consecutive rows of one simple shape whose destination, state and input
/// indices all advance by one from row to row (a chain of lags, a bank of gains): evaluated
/// as one loop over contiguous slices, which the compiler vectorizes.
#[derive(Debug, Clone, Copy)]
struct Seg {
    /// First row (its coefficients are `cx[row..row + len]`, `cu[...]`).
    row: u32,
    len: u32,
}

/// One kernel: rows, their coefficients in flat arrays, and the segments that cover them.
#[derive(Debug, Clone, Default)]
struct Kernel {
    rows: Rows,
    cx: Vec<f64>,
    cu: Vec<f64>,
    segs: Vec<Seg>,
}

impl Kernel {
    /// Cover rows `range` with segments (runs where the indices advance together).
    fn segment(&mut self, range: std::ops::Range<usize>) -> std::ops::Range<usize> {
        let first = self.segs.len();
        let rows = &self.rows.rows;
        let mut i = range.start;
        while i < range.end {
            let r0 = rows[i];
            let simple = matches!(r0.shape, Shape::X | Shape::U | Shape::XU);
            let mut len = 1;
            while simple && i + len < range.end {
                let r = rows[i + len];
                let k = len as u32;
                let next = r.shape == r0.shape
                    && r.dst == r0.dst + k
                    && (r0.shape == Shape::U || r.xi == r0.xi + k)
                    && (r0.shape == Shape::X || r.ui == r0.ui + k);
                if !next {
                    break;
                }
                len += 1;
            }
            self.segs.push(Seg {
                row: i as u32,
                len: len as u32,
            });
            i += len;
        }
        first..self.segs.len()
    }

    /// Evaluate the derivative segments `segs` into `out` (which `x` and `sig` never alias).
    #[inline(always)]
    fn eval_into(&self, segs: std::ops::Range<usize>, x: &[f64], sig: &[f64], out: &mut [f64]) {
        for seg in &self.segs[segs] {
            let (k, n) = (seg.row as usize, seg.len as usize);
            let r0 = self.rows.rows[k];
            let (d, xi, ui) = (r0.dst as usize, r0.xi as usize, r0.ui as usize);
            match r0.shape {
                Shape::X | Shape::U | Shape::XU => {
                    let xs = if r0.shape == Shape::U {
                        &[][..]
                    } else {
                        &x[xi..xi + n]
                    };
                    let us = if r0.shape == Shape::X {
                        &[][..]
                    } else {
                        &sig[ui..ui + n]
                    };
                    simple_run(
                        r0.shape,
                        &self.cx[k..k + n],
                        &self.cu[k..k + n],
                        xs,
                        us,
                        &mut out[d..d + n],
                    );
                }
                _ => out[d] = self.rows.value(&r0, x, sig),
            }
        }
    }
}

/// `dst[i] = cx[i]·xs[i] (+ cu[i]·us[i])` for a run of one simple shape (slices of equal
/// length; the unused one may be empty).
#[inline(always)]
fn simple_run(shape: Shape, cx: &[f64], cu: &[f64], xs: &[f64], us: &[f64], dst: &mut [f64]) {
    match shape {
        Shape::X => {
            for ((o, c), v) in dst.iter_mut().zip(cx).zip(xs) {
                *o = c * v;
            }
        }
        Shape::U => {
            for ((o, c), v) in dst.iter_mut().zip(cu).zip(us) {
                *o = c * v;
            }
        }
        _ => {
            let n = dst.len();
            let (cx, cu, xs, us) = (&cx[..n], &cu[..n], &xs[..n], &us[..n]);
            for i in 0..n {
                dst[i] = cx[i] * xs[i] + cu[i] * us[i];
            }
        }
    }
}

/// The output and derivative kernels of a model's linear blocks.
#[derive(Debug, Clone, Default)]
pub(crate) struct LinKernel {
    out: Kernel,
    der: Kernel,
    /// Segments of each `Linear` stage of the plan, in stage order.
    stage_segs: Vec<std::ops::Range<usize>>,
    /// Segments of the derivative kernel.
    der_segs: std::ops::Range<usize>,
}

/// Terms of a row: (global index, coefficient).
type Terms = Vec<(usize, f64)>;

/// The state and input terms of row `r` of a linear block, with global indices.
fn terms(
    plan: &Plan,
    r: &LinRow,
    mat_x: &[f64],
    mat_u: &[f64],
    n: usize,
    m: usize,
) -> (Terms, Terms) {
    let bp = &plan.blocks[r.block.ix()];
    let xs = (0..n)
        .map(|i| (bp.x.start + i, mat_x[r.k * n + i]))
        .collect();
    let us = (0..m)
        .map(|j| (plan.in_slots[bp.inputs.start + j].ix(), mat_u[r.k * m + j]))
        .collect();
    (xs, us)
}

impl LinKernel {
    /// Build the kernels from the blocks' linear forms, in the plan's row order.
    pub fn build(plan: &Plan, blocks: &[Box<dyn Block>]) -> LinKernel {
        let mut k = LinKernel::default();
        for r in &plan.lin_out {
            if let Some(l) = blocks[r.block.ix()].linear() {
                let (xs, us) = terms(plan, r, &l.c, &l.d, l.n, l.m);
                k.out
                    .rows
                    .push(plan.blocks[r.block.ix()].y.start + r.k, &xs, &us);
            }
        }
        for r in &plan.lin_der {
            if let Some(l) = blocks[r.block.ix()].linear() {
                let (xs, us) = terms(plan, r, &l.a, &l.b, l.n, l.m);
                k.der
                    .rows
                    .push(plan.blocks[r.block.ix()].x.start + r.k, &xs, &us);
            }
        }
        for kern in [&mut k.out, &mut k.der] {
            kern.cx = kern.rows.rows.iter().map(|r| r.cx).collect();
            kern.cu = kern.rows.rows.iter().map(|r| r.cu).collect();
        }
        for st in &plan.stages {
            if let crate::plan::Stage::Linear(r) = st {
                let segs = k.out.segment(r.clone());
                k.stage_segs.push(segs);
            }
        }
        k.der_segs = k.der.segment(0..k.der.rows.rows.len());
        k
    }

    /// Evaluate the output rows of the plan's `i`-th `Linear` stage into the signal
    /// buffer. A run whose inputs overlap its outputs (a chain of gains) is evaluated row
    /// by row in order, so each row reads the value the previous one wrote.
    #[inline]
    pub fn outputs(&self, i: usize, x: &[f64], sig: &mut [f64]) {
        lin_outputs(self, i, x, sig);
    }

    /// Evaluate every derivative row into `dx`.
    #[inline]
    pub fn derivatives(&self, x: &[f64], sig: &[f64], dx: &mut [f64]) {
        lin_derivatives(self, x, sig, dx);
    }
}

drivelink_solver::avx_dispatch!(
    /// [`LinKernel::outputs`], compiled also for AVX.
    fn lin_outputs / lin_outputs_avx = lin_outputs_body(
        kern: &LinKernel, i: usize, x: &[f64], sig: &mut [f64]
    )
);

drivelink_solver::avx_dispatch!(
    /// [`LinKernel::derivatives`], compiled also for AVX.
    fn lin_derivatives / lin_derivatives_avx = lin_derivatives_body(
        kern: &LinKernel, x: &[f64], sig: &[f64], dx: &mut [f64]
    )
);

#[inline(always)]
fn lin_derivatives_body(kern: &LinKernel, x: &[f64], sig: &[f64], dx: &mut [f64]) {
    kern.der.eval_into(kern.der_segs.clone(), x, sig, dx);
}

#[inline(always)]
fn lin_outputs_body(kern: &LinKernel, i: usize, x: &[f64], sig: &mut [f64]) {
    let k = &kern.out;
    {
        for seg in &k.segs[kern.stage_segs[i].clone()] {
            let (r, n) = (seg.row as usize, seg.len as usize);
            let r0 = k.rows.rows[r];
            let (d, xi, u) = (r0.dst as usize, r0.xi as usize, r0.ui as usize);
            let (cx, cu) = (&k.cx[r..r + n], &k.cu[r..r + n]);
            match r0.shape {
                Shape::X => simple_run(Shape::X, cx, cu, &x[xi..xi + n], &[], &mut sig[d..d + n]),
                Shape::U | Shape::XU if n > 1 && (d + n <= u || u + n <= d) => {
                    let xs = if r0.shape == Shape::U {
                        &[][..]
                    } else {
                        &x[xi..xi + n]
                    };
                    let (src, dst) = if d > u {
                        let (lo, hi) = sig.split_at_mut(d);
                        (&lo[u..u + n], &mut hi[..n])
                    } else {
                        let (lo, hi) = sig.split_at_mut(u);
                        (&hi[..n], &mut lo[d..d + n])
                    };
                    simple_run(r0.shape, cx, cu, xs, src, dst);
                }
                _ => {
                    for row in &k.rows.rows[r..r + n] {
                        sig[row.dst as usize] = k.rows.value(row, x, sig);
                    }
                }
            }
        }
    }
}
