//! Finite-difference Jacobians `J = ∂f/∂x` of a right-hand side `f(x)`, dense or with a
//! sparsity pattern whose columns are grouped by a Curtis–Powell–Reid colouring.
//!
//! Used by the implicit method ([`crate::Method::Radau5`]) for its Newton iteration, and
//! public so a model can linearize itself (`A = ∂f/∂x`, and with a closure over the inputs
//! `B = ∂f/∂u`) with the same machinery.
//!
//! ## Increments
//! Column `j` is perturbed by `δ_j = σ · max(|x_j|, s_j)` (then rounded so that
//! `(x_j + δ_j) − x_j == δ_j` exactly), with `σ = √ε ≈ 1.5e-8` for forward differences and
//! `σ = ∛ε ≈ 6.1e-6` for central differences (the increments that balance truncation and
//! rounding error for each scheme). `s_j` is a floor for components near zero: 1 by default
//! (SI magnitudes), the integrator uses `atol / rtol`, the magnitude below which the
//! error control of a component is absolute (LSODA's floor has the same role). Forward
//! differences reuse `f(x)` when the caller has it: one evaluation per colour; central
//! differences cost two per colour but are accurate to `O(δ²)` (linear systems: to
//! rounding), which is what a linearization wants.
//!
//! ## Colouring
//! Two columns may be perturbed in the same evaluation when no row has a non-zero in
//! both: the difference quotient of each row then belongs to exactly one of them. The
//! columns are coloured greedily in their natural order (Curtis, Powell & Reid 1974); a
//! structured model costs one evaluation per colour instead of one per state.
//!
//! ## Screening zero columns (the implicit method's Jacobians)
//! A model's pattern is conservative: a shaft angle that no block reads has a column that
//! comes out exactly zero at every Jacobian, yet costs an evaluation each time. With
//! screening on (Radau5 turns it on; [`FiniteDifferences::compute`] leaves it off), the
//! columns found exactly zero in one Jacobian are perturbed *together* in the next, each
//! by a different multiple of its increment, so that equal and opposite effects (a law
//! on the difference of two states) do not cancel. If that one evaluation returns `f(x)`
//! bit for bit, the columns are taken as zero again and the Jacobian is complete without
//! them; otherwise they are differenced one colour at a time as usual (one evaluation
//! lost). Unless effects with exactly those ratios cancel to the last bit in every row,
//! the matrix is the one the plain scheme forms (a skipped column is `+0.0`, which is
//! what `(f(x) − f(x)) / δ` gives), and a Newton matrix tolerates such an error anyway.
//! Screening is used only when it saves at least two evaluations.

use nalgebra::DMatrix;

use crate::system::HybridSystem;
use crate::SolverError;

/// The positions of the (possibly) non-zero entries of an `n × n` Jacobian, stored by
/// column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SparsityPattern {
    n: usize,
    /// `rows[start[j]..start[j + 1]]` are the rows of column `j`, sorted, without repeats.
    start: Vec<usize>,
    rows: Vec<usize>,
}

impl SparsityPattern {
    /// Every entry may be non-zero.
    pub fn dense(n: usize) -> Self {
        let start = (0..=n).map(|j| j * n).collect();
        let rows = (0..n).flat_map(|_| 0..n).collect();
        SparsityPattern { n, start, rows }
    }

    /// A pattern from `(row, column)` pairs (any order, repeats allowed). Fails with
    /// [`SolverError::PatternEntry`] for an entry outside the `n × n` matrix.
    pub fn from_entries<I>(n: usize, entries: I) -> Result<Self, SolverError>
    where
        I: IntoIterator<Item = (usize, usize)>,
    {
        let mut cols: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (row, col) in entries {
            if row >= n || col >= n {
                return Err(SolverError::PatternEntry { row, col, n });
            }
            cols[col].push(row);
        }
        let mut start = Vec::with_capacity(n + 1);
        let mut rows = Vec::new();
        start.push(0);
        for mut c in cols {
            c.sort_unstable();
            c.dedup();
            rows.extend(c);
            start.push(rows.len());
        }
        Ok(SparsityPattern { n, start, rows })
    }

    /// The matrix dimension.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of structurally non-zero entries.
    pub fn nnz(&self) -> usize {
        self.rows.len()
    }

    /// The rows where column `col` may be non-zero (sorted).
    pub fn rows_of(&self, col: usize) -> &[usize] {
        &self.rows[self.start[col]..self.start[col + 1]]
    }

    /// Whether entry `(row, col)` is in the pattern.
    pub fn contains(&self, row: usize, col: usize) -> bool {
        col < self.n && self.rows_of(col).binary_search(&row).is_ok()
    }

    /// Group the columns so that no two columns of a group share a row (greedy
    /// Curtis–Powell–Reid colouring in natural column order).
    pub fn colouring(&self) -> Colouring {
        let n = self.n;
        // Transpose: the columns present in each row.
        let mut row_count = vec![0usize; n + 1];
        for &r in &self.rows {
            row_count[r + 1] += 1;
        }
        for i in 0..n {
            row_count[i + 1] += row_count[i];
        }
        let mut fill = row_count.clone();
        let mut row_cols = vec![0usize; self.rows.len()];
        for j in 0..n {
            for &r in self.rows_of(j) {
                row_cols[fill[r]] = j;
                fill[r] += 1;
            }
        }
        let mut colour = vec![usize::MAX; n];
        // `forbidden[c] == j`: colour c is taken by a column conflicting with column j.
        let mut forbidden = vec![usize::MAX; n.max(1)];
        let mut n_colours = 0;
        for j in 0..n {
            for &r in self.rows_of(j) {
                for &k in &row_cols[row_count[r]..row_count[r + 1]] {
                    if colour[k] != usize::MAX {
                        forbidden[colour[k]] = j;
                    }
                }
            }
            let c = (0..).find(|&c| forbidden[c] != j).unwrap_or(0);
            colour[j] = c;
            n_colours = n_colours.max(c + 1);
        }
        let mut start = vec![0usize; n_colours + 1];
        for &c in &colour {
            start[c + 1] += 1;
        }
        for c in 0..n_colours {
            start[c + 1] += start[c];
        }
        let mut fill = start.clone();
        let mut columns = vec![0usize; n];
        for (j, &c) in colour.iter().enumerate() {
            columns[fill[c]] = j;
            fill[c] += 1;
        }
        Colouring {
            colour,
            start,
            columns,
        }
    }
}

/// A partition of the columns into groups (colours) of structurally orthogonal columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Colouring {
    colour: Vec<usize>,
    /// `columns[start[c]..start[c + 1]]` are the columns of colour `c`, ascending.
    start: Vec<usize>,
    columns: Vec<usize>,
}

impl Colouring {
    /// Number of colours (difference quotients per forward-difference Jacobian).
    pub fn n_colours(&self) -> usize {
        self.start.len() - 1
    }

    /// The colour of column `col`.
    pub fn colour_of(&self, col: usize) -> usize {
        self.colour[col]
    }

    /// The columns of colour `c`, ascending.
    pub fn columns(&self, c: usize) -> &[usize] {
        &self.columns[self.start[c]..self.start[c + 1]]
    }
}

/// The difference scheme of [`FiniteDifferences`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Differencing {
    /// `(f(x + δe_j) − f(x)) / δ`: one evaluation per colour (reusing `f(x)`), error
    /// `O(√ε)` relative. What the Newton iteration needs.
    #[default]
    Forward,
    /// `(f(x + δe_j) − f(x − δe_j)) / 2δ`: two evaluations per colour, error `O(ε^(2/3))`
    /// relative, exact to rounding for linear systems. What a linearization wants.
    Central,
}

/// A finite-difference Jacobian evaluator with its work buffers (allocated once: forming
/// a Jacobian allocates nothing).
#[derive(Debug, Clone)]
pub struct FiniteDifferences {
    pattern: SparsityPattern,
    colouring: Colouring,
    differencing: Differencing,
    /// Per-component floor `s_j` of the increment scale.
    floor: Vec<f64>,
    delta_plus: Vec<f64>,
    delta_minus: Vec<f64>,
    xp: Vec<f64>,
    fp: Vec<f64>,
    fm: Vec<f64>,
    /// `f(x)` when the caller of `compute` does not supply it.
    f0: Vec<f64>,
    /// Zero-column screening, when turned on.
    screen: Option<Screen>,
}

/// The columns of [`FiniteDifferences`] found exactly zero in the last Jacobian.
#[derive(Debug, Clone)]
struct Screen {
    /// Those columns, ascending (only columns with a non-empty pattern).
    cols: Vec<usize>,
    /// `zero[j]`: column `j` is in `cols`.
    zero: Vec<bool>,
    /// `skip[c]`: colour `c` has only screened (or empty) columns this time.
    skip: Vec<bool>,
}

impl FiniteDifferences {
    /// An evaluator for Jacobians with the given structure (forward differences, floor 1).
    pub fn new(pattern: SparsityPattern) -> Self {
        let n = pattern.n();
        let colouring = pattern.colouring();
        FiniteDifferences {
            pattern,
            colouring,
            differencing: Differencing::Forward,
            floor: vec![1.0; n],
            delta_plus: vec![0.0; n],
            delta_minus: vec![0.0; n],
            xp: vec![0.0; n],
            fp: vec![0.0; n],
            fm: vec![0.0; n],
            f0: vec![0.0; n],
            screen: None,
        }
    }

    /// Screen the columns found exactly zero in one Jacobian with a single evaluation in
    /// the next (see the module documentation; forward differences with `f(x)` given).
    pub(crate) fn screen_zero_columns(&mut self) {
        let n = self.pattern.n();
        self.screen = Some(Screen {
            cols: Vec::with_capacity(n),
            zero: vec![false; n],
            skip: vec![false; self.colouring.n_colours()],
        });
    }

    /// An evaluator for dense `n × n` Jacobians.
    pub fn dense(n: usize) -> Self {
        Self::new(SparsityPattern::dense(n))
    }

    /// Use `differencing` instead of forward differences.
    pub fn with_differencing(mut self, differencing: Differencing) -> Self {
        self.differencing = differencing;
        self
    }

    /// Use `floor` (> 0, finite) as the increment floor `s_j` of every component.
    pub fn with_floor(mut self, floor: f64) -> Result<Self, SolverError> {
        check_floor(floor)?;
        self.set_uniform_floor(floor);
        Ok(self)
    }

    /// Set the same increment floor for every component (the caller checked it).
    pub(crate) fn set_uniform_floor(&mut self, floor: f64) {
        self.floor.iter_mut().for_each(|s| *s = floor);
    }

    /// Set a per-component increment floor `s_j` (each > 0 and finite).
    pub fn set_floors(&mut self, floors: &[f64]) -> Result<(), SolverError> {
        check_len("increment floors", self.pattern.n(), floors.len())?;
        for &s in floors {
            check_floor(s)?;
        }
        self.floor.copy_from_slice(floors);
        Ok(())
    }

    /// The structure used.
    pub fn pattern(&self) -> &SparsityPattern {
        &self.pattern
    }

    /// The column grouping used.
    pub fn colouring(&self) -> &Colouring {
        &self.colouring
    }

    /// The difference scheme used.
    pub fn differencing(&self) -> Differencing {
        self.differencing
    }

    /// Evaluations of `f` one Jacobian costs (forward differences: given `f(x)`; with
    /// zero-column screening, at most this).
    pub fn evaluations(&self) -> usize {
        match self.differencing {
            Differencing::Forward => self.colouring.n_colours(),
            Differencing::Central => 2 * self.colouring.n_colours(),
        }
    }

    /// Form `jac = ∂f/∂x` at `x`. `f(x, out)` evaluates the right-hand side; `fx` is `f(x)`
    /// if the caller has it (forward differences evaluate it otherwise; central
    /// differences do not need it). Entries outside the pattern are set to zero. Returns
    /// the number of `f` evaluations made.
    pub fn compute<F>(
        &mut self,
        mut f: F,
        x: &[f64],
        fx: Option<&[f64]>,
        jac: &mut DMatrix<f64>,
    ) -> Result<usize, SolverError>
    where
        F: FnMut(&[f64], &mut [f64]),
    {
        let n = self.pattern.n();
        check_len("the state", n, x.len())?;
        if let Some(f0) = fx {
            check_len("f(x)", n, f0.len())?;
        }
        if jac.nrows() != n || jac.ncols() != n {
            return Err(SolverError::Dimension {
                what: "the Jacobian matrix (rows x columns)",
                expected: n * n,
                got: jac.nrows() * jac.ncols(),
            });
        }
        if let (None, Differencing::Forward) = (fx, self.differencing) {
            let mut f0 = std::mem::take(&mut self.f0);
            f(x, &mut f0);
            let evals = 1 + self.form(&mut f, x, Some(&f0), jac);
            self.f0 = f0;
            return Ok(evals);
        }
        Ok(self.form(f, x, fx, jac))
    }

    /// [`FiniteDifferences::compute`] without the dimension checks (the integrator's
    /// buffers are sized at setup). `f0` must be given for forward differences.
    pub(crate) fn form<F>(
        &mut self,
        mut f: F,
        x: &[f64],
        f0: Option<&[f64]>,
        jac: &mut DMatrix<f64>,
    ) -> usize
    where
        F: FnMut(&[f64], &mut [f64]),
    {
        let sigma = match self.differencing {
            Differencing::Forward => f64::EPSILON.sqrt(),
            Differencing::Central => f64::EPSILON.cbrt(),
        };
        for (((&xj, &s), dp), dm) in x
            .iter()
            .zip(&self.floor)
            .zip(&mut self.delta_plus)
            .zip(&mut self.delta_minus)
        {
            let d = sigma * xj.abs().max(s);
            // Exactly representable increments: the quotient then divides by the step
            // actually taken.
            *dp = (xj + d) - xj;
            *dm = xj - (xj - d);
        }
        jac.fill(0.0);
        self.xp.copy_from_slice(x);
        let mut evals = 0;
        let screened = match (self.differencing, f0) {
            (Differencing::Forward, Some(f0)) => self.screen_pass(&mut f, x, f0, &mut evals),
            _ => false,
        };
        for c in 0..self.colouring.n_colours() {
            if screened && self.screen.as_ref().is_some_and(|s| s.skip[c]) {
                continue;
            }
            let cols =
                &self.colouring.columns[self.colouring.start[c]..self.colouring.start[c + 1]];
            for &j in cols {
                self.xp[j] = x[j] + self.delta_plus[j];
            }
            f(&self.xp, &mut self.fp);
            evals += 1;
            match (self.differencing, f0) {
                (Differencing::Forward, Some(f0)) => {
                    for &j in cols {
                        let inv = 1.0 / self.delta_plus[j];
                        for &i in self.pattern.rows_of(j) {
                            jac[(i, j)] = (self.fp[i] - f0[i]) * inv;
                        }
                    }
                }
                _ => {
                    for &j in cols {
                        self.xp[j] = x[j] - self.delta_minus[j];
                    }
                    f(&self.xp, &mut self.fm);
                    evals += 1;
                    for &j in cols {
                        let inv = 1.0 / (self.delta_plus[j] + self.delta_minus[j]);
                        for &i in self.pattern.rows_of(j) {
                            jac[(i, j)] = (self.fp[i] - self.fm[i]) * inv;
                        }
                    }
                }
            }
            for &j in cols {
                self.xp[j] = x[j];
            }
        }
        self.update_screen(jac);
        evals
    }

    /// Perturb the screened columns together (column `k` of `m` by `(1 + k/m)` times its
    /// increment); `true` if `f` returned `f0` bit for bit, so they are zero columns again.
    /// Does nothing (`false`) when screening is off or would save fewer than two
    /// evaluations.
    fn screen_pass<F>(&mut self, f: &mut F, x: &[f64], f0: &[f64], evals: &mut usize) -> bool
    where
        F: FnMut(&[f64], &mut [f64]),
    {
        let Some(sc) = self.screen.as_mut() else {
            return false;
        };
        let pattern = &self.pattern;
        let mut saved = 0;
        for c in 0..self.colouring.n_colours() {
            let cols =
                &self.colouring.columns[self.colouring.start[c]..self.colouring.start[c + 1]];
            sc.skip[c] = cols
                .iter()
                .all(|&j| sc.zero[j] || pattern.rows_of(j).is_empty());
            saved += usize::from(sc.skip[c]);
        }
        if saved < 2 {
            return false;
        }
        let m = sc.cols.len() as f64;
        for (k, &j) in sc.cols.iter().enumerate() {
            self.xp[j] = x[j] + self.delta_plus[j] * (1.0 + k as f64 / m);
        }
        f(&self.xp, &mut self.fp);
        *evals += 1;
        for &j in &sc.cols {
            self.xp[j] = x[j];
        }
        // `==` is false for NaN: a NaN falls back to the plain scheme.
        self.fp.iter().zip(f0).all(|(a, b)| a == b)
    }

    /// After a Jacobian: the columns to screen in the next one are those that came out
    /// exactly zero (skipped ones included: they were zero-filled).
    fn update_screen(&mut self, jac: &DMatrix<f64>) {
        let Some(sc) = self.screen.as_mut() else {
            return;
        };
        let n = self.pattern.n();
        let js = jac.as_slice();
        sc.cols.clear();
        for j in 0..n {
            let rows = self.pattern.rows_of(j);
            let zero = !rows.is_empty() && rows.iter().all(|&i| js[j * n + i] == 0.0);
            sc.zero[j] = zero;
            if zero {
                sc.cols.push(j);
            }
        }
    }
}

fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), SolverError> {
    if expected == got {
        Ok(())
    } else {
        Err(SolverError::Dimension {
            what,
            expected,
            got,
        })
    }
}

fn check_floor(s: f64) -> Result<(), SolverError> {
    if s > 0.0 && s.is_finite() {
        Ok(())
    } else {
        Err(SolverError::InvalidSettings {
            message: format!("Jacobian increment floor ({s}) must be positive and finite"),
        })
    }
}

/// The finite-difference Jacobian `∂(dx)/∂x` of `sys.derivatives` at `(t, x)`, using the
/// system's [`HybridSystem::jacobian_pattern`] (dense without one) and increment floor 1.
/// Returns the matrix and the number of `derivatives` calls made. The system's modes are
/// left as they are: call it at an operating point reached by a run.
pub fn jacobian<S: HybridSystem>(
    sys: &mut S,
    t: f64,
    x: &[f64],
    differencing: Differencing,
) -> Result<(DMatrix<f64>, usize), SolverError> {
    let n = sys.n_states();
    check_len("the state", n, x.len())?;
    let pattern = match sys.jacobian_pattern() {
        Some(p) => {
            check_len("the Jacobian pattern (dimension)", n, p.n())?;
            p
        }
        None => SparsityPattern::dense(n),
    };
    let mut fd = FiniteDifferences::new(pattern).with_differencing(differencing);
    let mut jac = DMatrix::zeros(n, n);
    let evals = fd.compute(|xx, dx| sys.derivatives(t, xx, dx), x, None, &mut jac)?;
    Ok((jac, evals))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// f(x) = A x + small nonlinearity on a tridiagonal structure.
    fn tridiag(x: &[f64], dx: &mut [f64]) {
        let n = x.len();
        for i in 0..n {
            let left = if i > 0 { x[i - 1] } else { 0.0 };
            let right = if i + 1 < n { x[i + 1] } else { 0.0 };
            dx[i] = -2.0 * x[i] + left + 0.5 * right + 0.1 * x[i] * x[i];
        }
    }

    fn tridiag_pattern(n: usize) -> SparsityPattern {
        let mut e = vec![];
        for i in 0..n {
            e.push((i, i));
            if i > 0 {
                e.push((i, i - 1));
            }
            if i + 1 < n {
                e.push((i, i + 1));
            }
        }
        SparsityPattern::from_entries(n, e).unwrap()
    }

    fn exact(x: &[f64]) -> DMatrix<f64> {
        let n = x.len();
        DMatrix::from_fn(n, n, |i, j| {
            if i == j {
                -2.0 + 0.2 * x[i]
            } else if j + 1 == i {
                1.0
            } else if j == i + 1 {
                0.5
            } else {
                0.0
            }
        })
    }

    #[test]
    fn tridiagonal_pattern_needs_three_colours() {
        let p = tridiag_pattern(10);
        let c = p.colouring();
        assert_eq!(c.n_colours(), 3);
        for col in 0..10 {
            assert_eq!(c.colour_of(col), col % 3);
        }
        assert_eq!(SparsityPattern::dense(7).colouring().n_colours(), 7);
        // Diagonal: one colour.
        let d = SparsityPattern::from_entries(5, (0..5).map(|i| (i, i))).unwrap();
        assert_eq!(d.colouring().n_colours(), 1);
    }

    #[test]
    fn coloured_jacobian_matches_the_exact_one() {
        let n = 10;
        let x: Vec<f64> = (0..n).map(|i| 0.3 * i as f64 - 1.0).collect();
        let ex = exact(&x);
        for (pattern, evals) in [(tridiag_pattern(n), 3), (SparsityPattern::dense(n), n)] {
            let mut fd = FiniteDifferences::new(pattern);
            let mut f0 = vec![0.0; n];
            tridiag(&x, &mut f0);
            let mut j = DMatrix::zeros(n, n);
            let e = fd.compute(tridiag, &x, Some(&f0), &mut j).unwrap();
            assert_eq!(e, evals);
            // Forward differences: error ~ sqrt(eps) * |f''| * scale.
            assert!((&j - &ex).amax() < 1e-7, "{}", (&j - &ex).amax());
            let mut fd = fd.with_differencing(Differencing::Central);
            let e = fd.compute(tridiag, &x, None, &mut j).unwrap();
            assert_eq!(e, 2 * evals);
            // Central differences of a quadratic: exact up to rounding.
            assert!((&j - &ex).amax() < 1e-9, "{}", (&j - &ex).amax());
        }
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        assert_eq!(
            SparsityPattern::from_entries(3, [(0, 0), (3, 1)]),
            Err(SolverError::PatternEntry {
                row: 3,
                col: 1,
                n: 3
            })
        );
        let mut fd = FiniteDifferences::dense(3);
        let mut j = DMatrix::zeros(3, 3);
        let r = fd.compute(|_, _| {}, &[1.0, 2.0], None, &mut j);
        assert!(matches!(
            r,
            Err(SolverError::Dimension {
                expected: 3,
                got: 2,
                ..
            })
        ));
        assert!(FiniteDifferences::dense(2).with_floor(0.0).is_err());
    }

    /// `dx0 = −x0 + k·(x2 − x3)`, `dx1 = −x1·x0`, `dx2 = dx3 = dx4 = 0`: columns 2 and 3
    /// are zero while `k = 0` (and then carry equal and opposite entries), column 4 always.
    fn switched(k: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = -x[0] + k * (x[2] - x[3]);
        dx[1] = -x[1] * x[0];
        dx[2] = 0.0;
        dx[3] = 0.0;
        dx[4] = 0.0;
    }

    fn plain_and_screened(
        k: f64,
        x: &[f64],
        fd: &mut FiniteDifferences,
    ) -> (DMatrix<f64>, DMatrix<f64>, usize) {
        let mut f0 = vec![0.0; 5];
        switched(k, x, &mut f0);
        let mut plain = FiniteDifferences::dense(5);
        let mut j_plain = DMatrix::zeros(5, 5);
        plain.form(|x, dx| switched(k, x, dx), x, Some(&f0), &mut j_plain);
        let mut j = DMatrix::zeros(5, 5);
        let evals = fd.form(|x, dx| switched(k, x, dx), x, Some(&f0), &mut j);
        (j_plain, j, evals)
    }

    #[test]
    fn screened_zero_columns_cost_one_evaluation_and_change_no_entry() {
        let x = [0.3, -1.2, 0.5, 0.5, 2.0];
        let mut fd = FiniteDifferences::dense(5);
        fd.screen_zero_columns();
        // First Jacobian: nothing known yet, one evaluation per column.
        let (p, j, evals) = plain_and_screened(0.0, &x, &mut fd);
        assert_eq!(evals, 5);
        assert_eq!(p, j);
        // Columns 2, 3, 4 were zero: one screening evaluation replaces three.
        let (p, j, evals) = plain_and_screened(0.0, &x, &mut fd);
        assert_eq!(evals, 3);
        assert_eq!(p, j);
        // The coupling switches on with equal increments on x2 and x3 (their effects
        // would cancel if perturbed alike): the screen fails, the columns are
        // differenced, and the matrix is the plain one (one evaluation lost).
        let (p, j, evals) = plain_and_screened(4.0, &x, &mut fd);
        assert_eq!(evals, 6);
        assert_eq!(p, j);
        assert!((j[(0, 2)] - 4.0).abs() < 1e-6 && (j[(0, 3)] + 4.0).abs() < 1e-6);
        // Only column 4 is zero now: screening would save one evaluation, so it is off.
        let (p, j, evals) = plain_and_screened(4.0, &x, &mut fd);
        assert_eq!(evals, 5);
        assert_eq!(p, j);
    }
}
