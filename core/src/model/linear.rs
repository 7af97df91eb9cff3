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
//!
//! An output row `y = c·x[i]` (one state term: a strictly proper transfer function, an
//! integrator) is *folded* into the derivative rows that read it, which then read
//! `c·x[i]` in its place (`cu·(c·x[i])`, the same operations in the same order, so the
//! result is bit-identical to reading the signal). An evaluation for derivatives only
//! ([`EvalFor::Derivatives`]) computes only the output rows the derivatives depend on
//! (`demand.rs`), one at an output point ([`EvalFor::Output`]) only those the logged
//! variables and the derivatives depend on; every other evaluation computes all of them,
//! so the signals seen by guards and events are complete. A chain of lags then costs one pass over
//! the states per evaluation instead of two.

use super::demand::{self, Demand};
use crate::block::BlockDecl;
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
    /// `cu·(cy·x[yi])`: a `U` row whose input is a folded output row `cy·x[yi]`.
    FoldedU,
    /// `cx·x[xi] + cu·(cy·x[yi])`: an `XU` row whose input is folded.
    XFoldedU,
    /// `cu·(sig[ui] − x[xi])`: an `XU` row with `cx = −cu` (a unit-gain first-order lag,
    /// `x' = (u − x)/τ`). The difference is taken first, so near equilibrium the value
    /// keeps its relative accuracy (`cx·x + cu·u` would round both products at the
    /// magnitude of `x`, an absolute error of `|cu·x|·ε` on a value going to zero).
    LagU,
    /// `cu·(cy·x[yi] − x[xi])`: a `LagU` row whose input is folded.
    LagFoldedU,
    /// The terms `terms[start..end]` (state terms first, then input terms).
    General { start: u32, n_x: u32, end: u32 },
}

impl Shape {
    /// A shape evaluated as one loop over contiguous slices when its indices advance
    /// together (see [`Seg`]).
    fn is_simple(self) -> bool {
        !matches!(self, Shape::Zero | Shape::General { .. })
    }
    fn reads_x(self) -> bool {
        matches!(
            self,
            Shape::X | Shape::XU | Shape::XFoldedU | Shape::LagU | Shape::LagFoldedU
        )
    }
    fn reads_sig(self) -> bool {
        matches!(self, Shape::U | Shape::XU | Shape::LagU)
    }
    fn reads_y(self) -> bool {
        matches!(self, Shape::FoldedU | Shape::XFoldedU | Shape::LagFoldedU)
    }
}

/// What an evaluation of the model is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EvalFor {
    /// Everything: guards, events, step ends (every signal is computed).
    All,
    /// The state derivatives of a solver stage only: output rows folded into the
    /// derivative rows are skipped.
    Derivatives,
    /// An output point: the logged variables and what they and the derivatives depend on.
    Output,
}

/// One row.
#[derive(Debug, Clone, Copy)]
struct Row {
    dst: u32,
    shape: Shape,
    xi: u32,
    ui: u32,
    /// State of the folded output row (shapes `FoldedU`, `XFoldedU`).
    yi: u32,
    cx: f64,
    cu: f64,
    /// Coefficient of the folded output row.
    cy: f64,
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
            yi: 0,
            cx: 0.0,
            cu: 0.0,
            cy: 0.0,
        };
        row.shape = match (xs.len(), us.len()) {
            (0, 0) => Shape::Zero,
            (1, 0) => Shape::X,
            (0, 1) => Shape::U,
            (1, 1) if xs[0].1 == -us[0].1 => Shape::LagU,
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
            Shape::FoldedU => row.cu * (row.cy * x[row.yi as usize]),
            Shape::XFoldedU => row.cx * x[row.xi as usize] + row.cu * (row.cy * x[row.yi as usize]),
            Shape::LagU => row.cu * (sig[row.ui as usize] - x[row.xi as usize]),
            Shape::LagFoldedU => row.cu * (row.cy * x[row.yi as usize] - x[row.xi as usize]),
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
    /// First row (its coefficients are `cx[row..row + len]`, `cu[...]`, `cy[...]`).
    row: u32,
    len: u32,
    /// Every row of the segment has the same coefficients (a bank of identical blocks):
    /// the loop reads them as three numbers instead of three arrays.
    uniform: bool,
}

/// One kernel: rows, their coefficients in flat arrays, and the segments that cover them.
#[derive(Debug, Clone, Default)]
struct Kernel {
    rows: Rows,
    cx: Vec<f64>,
    cu: Vec<f64>,
    cy: Vec<f64>,
    segs: Vec<Seg>,
    /// Some segment is long enough for the AVX build of the loops to pay for its call
    /// (see [`WIDE_SEGMENT`]); otherwise the kernel runs inline in the caller.
    wide: bool,
}

/// The segment length from which a kernel is run through its AVX build: below it, the
/// rows are a few scalar operations and the call costs more than the vector width saves
/// (the results are the same either way: no fused operations in either build).
const WIDE_SEGMENT: u32 = 8;

/// The contiguous operands of a segment (empty where its shape does not read them).
struct Operands<'a> {
    /// The coefficients are the same for every row (see [`Seg::uniform`]).
    uniform: bool,
    cx: &'a [f64],
    cu: &'a [f64],
    cy: &'a [f64],
    xs: &'a [f64],
    us: &'a [f64],
    ys: &'a [f64],
}

impl Kernel {
    /// The kernel of the rows whose destination slot is `live` (in order, stage by stage),
    /// flattened and segmented, with the segments of each `Linear` stage of `plan`.
    fn subset(&self, plan: &Plan, live: &[bool]) -> (Kernel, Vec<std::ops::Range<usize>>) {
        let mut sub = Kernel::default();
        let mut ranges = Vec::new();
        for st in &plan.stages {
            if let crate::plan::Stage::Linear(r) = st {
                let start = sub.rows.rows.len();
                let kept = self.rows.rows[r.clone()]
                    .iter()
                    .filter(|row| live[row.dst as usize]);
                sub.rows.rows.extend(kept);
                ranges.push(start..sub.rows.rows.len());
            }
        }
        sub.rows.terms = self.rows.terms.clone();
        sub.flatten();
        let segs = ranges.into_iter().map(|r| sub.segment(r)).collect();
        (sub, segs)
    }

    /// Copy the rows' coefficients into the flat arrays.
    fn flatten(&mut self) {
        let rows = &self.rows.rows;
        self.cx = rows.iter().map(|r| r.cx).collect();
        self.cu = rows.iter().map(|r| r.cu).collect();
        self.cy = rows.iter().map(|r| r.cy).collect();
    }

    /// Cover rows `range` with segments (runs where the indices advance together).
    fn segment(&mut self, range: std::ops::Range<usize>) -> std::ops::Range<usize> {
        let first = self.segs.len();
        let rows = &self.rows.rows;
        let mut i = range.start;
        while i < range.end {
            let r0 = rows[i];
            let mut len = 1;
            while r0.shape.is_simple() && i + len < range.end {
                let r = rows[i + len];
                let k = len as u32;
                let next = r.shape == r0.shape
                    && r.dst == r0.dst + k
                    && (!r0.shape.reads_x() || r.xi == r0.xi + k)
                    && (!r0.shape.reads_sig() || r.ui == r0.ui + k)
                    && (!r0.shape.reads_y() || r.yi == r0.yi + k);
                if !next {
                    break;
                }
                len += 1;
            }
            let same = |r: &Row| {
                r.cx.to_bits() == r0.cx.to_bits()
                    && r.cu.to_bits() == r0.cu.to_bits()
                    && r.cy.to_bits() == r0.cy.to_bits()
            };
            self.segs.push(Seg {
                row: i as u32,
                len: len as u32,
                uniform: rows[i..i + len].iter().all(same),
            });
            i += len;
        }
        self.wide = self.segs.iter().any(|s| s.len >= WIDE_SEGMENT);
        first..self.segs.len()
    }

    /// The operands of the segment starting at row `k` with `n` rows; `us` is given by the
    /// caller (it may alias the destination for output rows).
    #[inline(always)]
    fn operands<'a>(&'a self, seg: Seg, x: &'a [f64], us: &'a [f64]) -> Operands<'a> {
        let (k, n) = (seg.row as usize, seg.len as usize);
        let r0 = &self.rows.rows[k];
        let (xi, yi) = (r0.xi as usize, r0.yi as usize);
        Operands {
            uniform: seg.uniform,
            cx: &self.cx[k..k + n],
            cu: &self.cu[k..k + n],
            cy: &self.cy[k..k + n],
            xs: if r0.shape.reads_x() {
                &x[xi..xi + n]
            } else {
                &[]
            },
            us,
            ys: if r0.shape.reads_y() {
                &x[yi..yi + n]
            } else {
                &[]
            },
        }
    }

    /// Evaluate the derivative segments `segs` into `out` (which `x` and `sig` never alias).
    #[inline(always)]
    fn eval_into(&self, segs: std::ops::Range<usize>, x: &[f64], sig: &[f64], out: &mut [f64]) {
        for seg in &self.segs[segs] {
            let (k, n) = (seg.row as usize, seg.len as usize);
            let r0 = self.rows.rows[k];
            let (d, ui) = (r0.dst as usize, r0.ui as usize);
            // A lone row (every general row is one) is its scalar value, the same
            // operations as the loop's without the loop's setup.
            if n == 1 {
                out[d] = self.rows.value(&r0, x, sig);
            } else {
                let us = if r0.shape.reads_sig() {
                    &sig[ui..ui + n]
                } else {
                    &[][..]
                };
                simple_run(r0.shape, &self.operands(*seg, x, us), &mut out[d..d + n]);
            }
        }
    }
}

/// `dst[i] = cx[i]·xs[i] (+ cu[i]·us[i])` or with a folded input `cu[i]·(cy[i]·ys[i])`,
/// for a run of one simple shape (operands of equal length; the unused ones may be
/// empty).
#[inline(always)]
fn simple_run(shape: Shape, o: &Operands, dst: &mut [f64]) {
    let n = dst.len();
    if o.uniform {
        let c = (o.cx[0], o.cu[0], o.cy[0]);
        run_shape(shape, c, o, dst);
    } else {
        let c = (&o.cx[..n], &o.cu[..n], &o.cy[..n]);
        run_shape(shape, c, o, dst);
    }
}

/// Coefficients of a segment: one per row (a slice) or one for all rows (a number).
trait Coef: Copy {
    fn at(self, i: usize) -> f64;
}

impl Coef for &[f64] {
    #[inline(always)]
    fn at(self, i: usize) -> f64 {
        self[i]
    }
}

impl Coef for f64 {
    #[inline(always)]
    fn at(self, _: usize) -> f64 {
        self
    }
}

/// The loop of [`simple_run`] for coefficients `(cx, cu, cy)`.
#[inline(always)]
fn run_shape<C: Coef>(shape: Shape, (cx, cu, cy): (C, C, C), o: &Operands, dst: &mut [f64]) {
    let n = dst.len();
    match shape {
        Shape::X => {
            let xs = &o.xs[..n];
            for i in 0..n {
                dst[i] = cx.at(i) * xs[i];
            }
        }
        Shape::U => {
            let us = &o.us[..n];
            for i in 0..n {
                dst[i] = cu.at(i) * us[i];
            }
        }
        Shape::XU => {
            let (xs, us) = (&o.xs[..n], &o.us[..n]);
            for i in 0..n {
                dst[i] = cx.at(i) * xs[i] + cu.at(i) * us[i];
            }
        }
        Shape::FoldedU => {
            let ys = &o.ys[..n];
            for i in 0..n {
                dst[i] = cu.at(i) * (cy.at(i) * ys[i]);
            }
        }
        Shape::LagU => {
            let (xs, us) = (&o.xs[..n], &o.us[..n]);
            for i in 0..n {
                dst[i] = cu.at(i) * (us[i] - xs[i]);
            }
        }
        Shape::LagFoldedU => {
            let (xs, ys) = (&o.xs[..n], &o.ys[..n]);
            for i in 0..n {
                dst[i] = cu.at(i) * (cy.at(i) * ys[i] - xs[i]);
            }
        }
        Shape::XFoldedU => {
            let (xs, ys) = (&o.xs[..n], &o.ys[..n]);
            for i in 0..n {
                dst[i] = cx.at(i) * xs[i] + cu.at(i) * (cy.at(i) * ys[i]);
            }
        }
        Shape::Zero | Shape::General { .. } => {}
    }
}

/// The output and derivative kernels of a model's linear blocks.
#[derive(Debug, Clone, Default)]
pub(crate) struct LinKernel {
    /// Every output row.
    out: Kernel,
    /// The output rows not folded into derivative rows (for [`EvalFor::Derivatives`]).
    live: Kernel,
    der: Kernel,
    /// Segments of each `Linear` stage of the plan in `out`, in stage order.
    stage_segs: Vec<std::ops::Range<usize>>,
    /// The same in `live`.
    live_segs: Vec<std::ops::Range<usize>>,
    /// The output rows an evaluation at an output point computes (for
    /// [`EvalFor::Output`]: the logged variables' and the derivatives' demand).
    shown: Kernel,
    /// The same in `shown`.
    shown_segs: Vec<std::ops::Range<usize>>,
    /// Segments of the derivative kernel.
    der_segs: std::ops::Range<usize>,
    /// What a derivative evaluation computes.
    demand: Demand,
    /// What an evaluation at an output point computes.
    shown_demand: Demand,
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

/// The signal slots a linear row reads.
fn sig_reads(rows: &Rows, r: &Row) -> Vec<usize> {
    match r.shape {
        Shape::U | Shape::XU | Shape::LagU => vec![r.ui as usize],
        Shape::General { start, n_x, end } => rows.terms[(start + n_x) as usize..end as usize]
            .iter()
            .map(|&(j, _)| j as usize)
            .collect(),
        _ => Vec::new(),
    }
}

/// Fold into the derivative rows every input that is an output row `c·x[i]` (one state
/// term): the row then reads `c·x[i]` itself. Returns how many rows were folded.
fn fold(out: &Rows, der: &mut Rows, n_signals: usize) -> usize {
    let mut by_slot = vec![None; n_signals];
    for r in &out.rows {
        if r.shape == Shape::X {
            by_slot[r.dst as usize] = Some((r.xi, r.cx));
        }
    }
    let mut n = 0;
    for row in &mut der.rows {
        if let (Shape::U | Shape::XU | Shape::LagU, Some((yi, cy))) =
            (row.shape, by_slot[row.ui as usize])
        {
            row.shape = match row.shape {
                Shape::U => Shape::FoldedU,
                Shape::LagU => Shape::LagFoldedU,
                _ => Shape::XFoldedU,
            };
            (row.yi, row.cy) = (yi, cy);
            n += 1;
        }
    }
    n
}

impl LinKernel {
    /// Build the kernels from the blocks' linear forms, in the plan's row order.
    pub fn build(plan: &Plan, decls: &[BlockDecl]) -> LinKernel {
        let mut k = LinKernel::default();
        for r in &plan.lin_out {
            if let Some(l) = &decls[r.block.ix()].linear {
                let (xs, us) = terms(plan, r, &l.c, &l.d, l.n, l.m);
                k.out
                    .rows
                    .push(plan.blocks[r.block.ix()].y.start + r.k, &xs, &us);
            }
        }
        for r in &plan.lin_der {
            if let Some(l) = &decls[r.block.ix()].linear {
                let (xs, us) = terms(plan, r, &l.a, &l.b, l.n, l.m);
                k.der
                    .rows
                    .push(plan.blocks[r.block.ix()].x.start + r.k, &xs, &us);
            }
        }
        fold(&k.out.rows, &mut k.der.rows, plan.n_signals);
        let mut kernel = vec![false; plan.blocks.len()];
        for r in plan.lin_out.iter().chain(&plan.lin_der) {
            kernel[r.block.ix()] = true;
        }
        let out_rows: Vec<(usize, Vec<usize>)> = k
            .out
            .rows
            .rows
            .iter()
            .map(|r| (r.dst as usize, sig_reads(&k.out.rows, r)))
            .collect();
        let der_reads: Vec<usize> = k
            .der
            .rows
            .rows
            .iter()
            .flat_map(|r| sig_reads(&k.der.rows, r))
            .collect();
        let mut feedthrough = vec![false; plan.in_slots.len()];
        for (b, bp) in plan.blocks.iter().enumerate() {
            for (i, f) in feedthrough[bp.inputs.clone()].iter_mut().enumerate() {
                *f = decls[b].feedthrough.of(i);
            }
        }
        let analyse = |extra: &[usize]| {
            demand::analyse(
                plan,
                &kernel,
                &feedthrough,
                &out_rows,
                der_reads.iter().copied(),
                extra,
            )
        };
        k.demand = analyse(&[]);
        k.shown_demand = analyse(&demand::output_seeds(plan));
        for kern in [&mut k.out, &mut k.der] {
            kern.flatten();
        }
        for st in &plan.stages {
            if let crate::plan::Stage::Linear(r) = st {
                let segs = k.out.segment(r.clone());
                k.stage_segs.push(segs);
            }
        }
        (k.live, k.live_segs) = k.out.subset(plan, &k.demand.live);
        (k.shown, k.shown_segs) = k.out.subset(plan, &k.shown_demand.live);
        k.der_segs = k.der.segment(0..k.der.rows.rows.len());
        k
    }

    /// The plan's stages an evaluation for derivatives only runs.
    pub fn derivative_stages(&self) -> &[crate::plan::Stage] {
        &self.demand.stages
    }

    /// The plan's stages an evaluation at an output point runs.
    pub fn output_stages(&self) -> &[crate::plan::Stage] {
        &self.shown_demand.stages
    }

    /// The signal slots an evaluation at an output point (or for derivatives, a subset)
    /// may write, ascending (see [`Demand::touched`]).
    pub fn shown_slots(&self, plan: &Plan) -> Vec<u32> {
        self.shown_demand.touched(plan)
    }

    /// The states the output rows of an evaluation at an output point read.
    pub fn shown_state_reads(&self) -> impl Iterator<Item = usize> + '_ {
        let rows = &self.shown.rows;
        rows.rows.iter().flat_map(move |r| {
            let terms: &[(u32, f64)] = match r.shape {
                Shape::General { start, n_x, .. } => {
                    &rows.terms[start as usize..(start + n_x) as usize]
                }
                _ => &[],
            };
            let single = r.shape.reads_x().then_some(r.xi as usize);
            single
                .into_iter()
                .chain(terms.iter().map(|&(i, _)| i as usize))
        })
    }

    /// What an evaluation at an output point leaves out: (block output stages, linear
    /// output rows).
    pub fn skipped_at_outputs(&self) -> (usize, usize) {
        let shown = self.shown.rows.rows.len();
        (
            self.shown_demand.skipped_blocks,
            self.out.rows.rows.len() - shown,
        )
    }

    /// What an evaluation for derivatives only leaves out: (block output stages, linear
    /// output rows).
    pub fn skipped_for_derivatives(&self) -> (usize, usize) {
        let live = self.live.rows.rows.len();
        (self.demand.skipped_blocks, self.out.rows.rows.len() - live)
    }

    /// Evaluate the output rows of the plan's `i`-th `Linear` stage into the signal
    /// buffer (for [`EvalFor::Derivatives`], only the rows not folded). A run whose inputs
    /// overlap its outputs (a chain of gains) is evaluated row by row in order, so each
    /// row reads the value the previous one wrote.
    #[inline]
    pub fn outputs(&self, i: usize, what: EvalFor, x: &[f64], sig: &mut [f64]) {
        let (k, segs) = match what {
            EvalFor::All => (&self.out, self.stage_segs[i].clone()),
            EvalFor::Derivatives => (&self.live, self.live_segs[i].clone()),
            EvalFor::Output => (&self.shown, self.shown_segs[i].clone()),
        };
        if k.wide {
            lin_outputs(k, segs, x, sig);
        } else {
            lin_outputs_body(k, segs, x, sig);
        }
    }

    /// Evaluate every derivative row into `dx`.
    #[inline]
    pub fn derivatives(&self, x: &[f64], sig: &[f64], dx: &mut [f64]) {
        if self.der.wide {
            lin_derivatives(self, x, sig, dx);
        } else {
            lin_derivatives_body(self, x, sig, dx);
        }
    }
}

drivelink_solver::avx_dispatch!(
    /// [`LinKernel::outputs`], compiled also for AVX.
    fn lin_outputs / lin_outputs_avx / lin_outputs_avx512 = lin_outputs_body(
        k: &Kernel, segs: std::ops::Range<usize>, x: &[f64], sig: &mut [f64]
    )
);

drivelink_solver::avx_dispatch!(
    /// [`LinKernel::derivatives`], compiled also for AVX.
    fn lin_derivatives / lin_derivatives_avx / lin_derivatives_avx512 = lin_derivatives_body(
        kern: &LinKernel, x: &[f64], sig: &[f64], dx: &mut [f64]
    )
);

#[inline(always)]
fn lin_derivatives_body(kern: &LinKernel, x: &[f64], sig: &[f64], dx: &mut [f64]) {
    kern.der.eval_into(kern.der_segs.clone(), x, sig, dx);
}

#[inline(always)]
fn lin_outputs_body(k: &Kernel, segs: std::ops::Range<usize>, x: &[f64], sig: &mut [f64]) {
    for seg in &k.segs[segs] {
        let (r, n) = (seg.row as usize, seg.len as usize);
        let r0 = k.rows.rows[r];
        let (d, u) = (r0.dst as usize, r0.ui as usize);
        match r0.shape {
            // A lone row (every general row is one): its scalar value, as in `eval_into`.
            _ if n == 1 => sig[d] = k.rows.value(&r0, x, sig),
            Shape::X => simple_run(Shape::X, &k.operands(*seg, x, &[]), &mut sig[d..d + n]),
            Shape::U | Shape::XU | Shape::LagU if n > 1 && (d + n <= u || u + n <= d) => {
                let (src, dst) = if d > u {
                    let (lo, hi) = sig.split_at_mut(d);
                    (&lo[u..u + n], &mut hi[..n])
                } else {
                    let (lo, hi) = sig.split_at_mut(u);
                    (&hi[..n], &mut lo[d..d + n])
                };
                simple_run(r0.shape, &k.operands(*seg, x, src), dst);
            }
            _ => {
                for row in &k.rows.rows[r..r + n] {
                    sig[row.dst as usize] = k.rows.value(row, x, sig);
                }
            }
        }
    }
}
