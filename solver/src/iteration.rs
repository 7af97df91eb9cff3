//! The iteration matrices of Radau IIA, `γ/h·I − J` (real) and `(α + iβ)/h·I − J`
//! (complex), factored on the states some derivative reads.
//!
//! A state whose column of `J` is zero (a quadrature: a work or heat integral, a shaft
//! angle nothing reads) feeds no derivative. Ordering such states `Q` after the others
//! `P`, both matrices are block lower triangular:
//!
//! ```text
//! [ c·I − J_PP    0  ] [z_P]   [b_P]
//! [   − J_QP     c·I ] [z_Q] = [b_Q]      so  z_P = (c·I − J_PP)⁻¹ b_P,
//!                                             z_Q = (b_Q + J_QP z_P) / c
//! ```
//!
//! Only `c·I − J_PP` is factored: on the 58-state vehicle car (18 work integrals, 10 shaft
//! angles) that is a 30 × 30 matrix instead of 58 × 58, and the `Q` rows cost one product
//! with `J_QP`'s non-zeros per solve (a zero-column state integrates one or a few others). The partition is taken from each new Jacobian's exact zero
//! columns, so it is exact for the matrix Newton uses (structural zeros and values that
//! are zero at this Jacobian alike). Without zero columns nothing changes: the full
//! matrices are factored as before.
//!
//! Both matrices of one Jacobian have the same pattern (`J_PP`'s non-zeros and the
//! diagonal). It is made once per Jacobian, with `J_QP`, and every factorisation at a new
//! step size rewrites only the pattern's entries and factors on it (`Lu::refill`,
//! `Lu::factor_on`; up to 64 factored states).

use nalgebra::{Complex, ComplexField, DMatrix};

use crate::lu::Lu;

/// The two iteration matrices of a Jacobian, reduced to its non-zero columns.
#[derive(Clone)]
pub(crate) struct IterationMatrices {
    n: usize,
    part: Partition,
    e1: Lu<f64>,
    e2: Lu<Complex<f64>>,
    /// Diagonal shifts of the last factorisation.
    fac1: f64,
    fac2: Complex<f64>,
    /// Gathered right-hand sides of the reduced solves.
    rb: Vec<f64>,
    cb: Vec<Complex<f64>>,
    /// The reduced matrices' pattern, shared by both (the Jacobian's non-zeros on the
    /// factored states, and the diagonal), one bit mask per column: made once per
    /// Jacobian, used by every factorisation of it (see [`Lu::factor_on`]). Empty when
    /// more than 64 states are factored.
    pattern: Vec<u64>,
    /// Scratch of [`Self::partition`]: column `j` of the Jacobian is all zeros.
    zero_col: Vec<bool>,
}

/// The states split by the Jacobian's zero columns.
#[derive(Clone)]
struct Partition {
    /// States with a non-zero Jacobian column, ascending.
    p: Vec<usize>,
    /// States with a zero column, ascending (empty: the full matrices are factored).
    q: Vec<usize>,
    /// The non-zeros of `J_QP`, row by row, as `(a, J[q[k], p[a]])` with `a` ascending:
    /// row `k` is `jqp[jqp_start[k]..jqp_start[k + 1]]` (a zero column's state is an
    /// integral of a few others: a shaft angle of one speed, a work integral of a power).
    jqp: Vec<(usize, f64)>,
    jqp_start: Vec<usize>,
}

impl IterationMatrices {
    /// Matrices for `n` states (every column non-zero until [`Self::partition`]).
    pub(crate) fn new(n: usize) -> Self {
        IterationMatrices {
            n,
            part: Partition {
                p: (0..n).collect(),
                q: Vec::with_capacity(n),
                jqp: Vec::with_capacity(n * n),
                jqp_start: Vec::with_capacity(n + 1),
            },
            e1: Lu::new(n),
            e2: Lu::new(n),
            fac1: f64::NAN,
            fac2: Complex::new(f64::NAN, f64::NAN),
            rb: vec![0.0; n],
            cb: vec![Complex::new(0.0, 0.0); n],
            pattern: Vec::with_capacity(n.min(64)),
            zero_col: vec![false; n],
        }
    }

    /// States factored (the size of the reduced matrices).
    #[cfg(test)]
    pub(crate) fn factored(&self) -> usize {
        self.part.p.len()
    }

    /// Split the states by the zero columns of the new Jacobian `jac` (allocates only when
    /// the number of factored states changes). An all-zero Jacobian keeps its last state
    /// factored, so there is always a matrix.
    pub(crate) fn partition(&mut self, jac: &DMatrix<f64>) {
        let n = self.n;
        let js = jac.as_slice();
        // Each column scanned once.
        for (j, z) in self.zero_col.iter_mut().enumerate() {
            *z = js[j * n..(j + 1) * n].iter().all(|&v| v == 0.0);
        }
        let zero = &self.zero_col;
        let all_zero = zero.iter().all(|&z| z);
        let factored = |j: usize| !zero[j] || (j + 1 == n && all_zero);
        let nq = (0..n).filter(|&j| !factored(j)).count();
        let part = &mut self.part;
        // `q` has the new size and only unfactored states: it is the new set.
        if part.q.len() == nq && part.q.iter().all(|&j| !factored(j)) {
            self.make_pattern(jac);
            return;
        }
        part.p.clear();
        part.q.clear();
        for j in 0..n {
            if factored(j) {
                part.p.push(j);
            } else {
                part.q.push(j);
            }
        }
        let np = part.p.len();
        if self.e1.size() != np {
            self.e1 = Lu::new(np);
            self.e2 = Lu::new(np);
        }
        self.make_pattern(jac);
    }

    /// What one Jacobian `jac` gives every factorisation of it, on the current partition:
    /// [`Self::pattern`] and `J_QP`.
    fn make_pattern(&mut self, jac: &DMatrix<f64>) {
        let n = self.n;
        let part = &mut self.part;
        let np = part.p.len();
        let js = jac.as_slice();
        part.jqp.clear();
        part.jqp_start.clear();
        for &qi in &part.q {
            part.jqp_start.push(part.jqp.len());
            for (a, &pj) in part.p.iter().enumerate() {
                let v = js[pj * n + qi];
                if v != 0.0 {
                    part.jqp.push((a, v));
                }
            }
        }
        part.jqp_start.push(part.jqp.len());
        self.pattern.clear();
        if np > 64 {
            return;
        }
        for (b, &pj) in part.p.iter().enumerate() {
            let col = &js[pj * n..(pj + 1) * n];
            let mut m = 1u64 << b;
            for (a, &pi) in part.p.iter().enumerate() {
                if col[pi] != 0.0 {
                    m |= 1 << a;
                }
            }
            self.pattern.push(m);
        }
    }

    /// Factor `fac1·I − J` and `fac2·I − J` on the factored states (`jac` the Jacobian
    /// last given to [`Self::partition`]). `false` if either is singular.
    pub(crate) fn factor(&mut self, jac: &DMatrix<f64>, fac1: f64, fac2: Complex<f64>) -> bool {
        let n = self.n;
        let p = &self.part.p;
        let np = p.len();
        let js = jac.as_slice();
        self.fac1 = fac1;
        self.fac2 = fac2;
        let v = |a: usize, b: usize| -js[p[b] * n + p[a]];
        if self.pattern.len() == np {
            // Only the pattern's entries are written (the diagonal shift added to `−J`, as
            // the dense fill below does).
            let pat = &self.pattern;
            self.e1
                .refill(pat, |a, b| if a == b { v(a, b) + fac1 } else { v(a, b) });
            self.e2.refill(pat, |a, b| {
                let z = Complex::new(v(a, b), 0.0);
                if a == b {
                    z + fac2
                } else {
                    z
                }
            });
            return self.e1.factor_on(pat) && self.e2.factor_on(pat);
        }
        // Column-major fills as flat slices, then the diagonal shifts.
        let m1 = self.e1.matrix_mut().as_mut_slice();
        let m2 = self.e2.matrix_mut().as_mut_slice();
        for b in 0..np {
            for a in 0..np {
                m1[b * np + a] = v(a, b);
                m2[b * np + a] = Complex::new(v(a, b), 0.0);
            }
        }
        for a in 0..np {
            m1[a * np + a] += fac1;
            m2[a * np + a] += fac2;
        }
        self.e1.factor() && self.e2.factor()
    }

    /// Solve `(fac1·I − J) x = b` in place.
    pub(crate) fn solve_real(&mut self, b: &mut [f64]) {
        self.part.solve(&self.e1, &mut self.rb, self.fac1, b);
    }

    /// Solve `(fac2·I − J) x = b` in place.
    pub(crate) fn solve_complex(&mut self, b: &mut [Complex<f64>]) {
        self.part.solve(&self.e2, &mut self.cb, self.fac2, b);
    }
}

impl Partition {
    /// Solve `(c·I − J) x = b` in place with the factors `lu` of the reduced matrix:
    /// `z_P = (c·I − J_PP)⁻¹ b_P` (through the gather buffer `zp`), then
    /// `z_Q = (b_Q + J_QP z_P) / c`. Without zero columns `lu` is the whole matrix.
    fn solve<T: ComplexField<RealField = f64> + Copy>(
        &self,
        lu: &Lu<T>,
        zp: &mut [T],
        c: T,
        b: &mut [T],
    ) {
        if self.q.is_empty() {
            lu.solve(b);
            return;
        }
        let np = self.p.len();
        let zp = &mut zp[..np];
        for (z, &i) in zp.iter_mut().zip(&self.p) {
            *z = b[i];
        }
        lu.solve(zp);
        for (z, &i) in zp.iter().zip(&self.p) {
            b[i] = *z;
        }
        for (k, &qi) in self.q.iter().enumerate() {
            // The non-zero terms in the dense sum's order (the zeros add exact zeros).
            let mut s = T::zero();
            for &(a, j) in &self.jqp[self.jqp_start[k]..self.jqp_start[k + 1]] {
                s += zp[a].scale(j);
            }
            b[qi] = (b[qi] + s) / c;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Jacobian with zero columns 1 and 3 (states nothing reads) and rows that read the
    /// others.
    fn jacobian() -> DMatrix<f64> {
        DMatrix::from_row_slice(
            4,
            4,
            &[
                -3.0, 0.0, 1.0, 0.0, //
                0.5, 0.0, 0.0, 0.0, //
                2.0, 0.0, -7.0, 0.0, //
                1.0, 0.0, 4.0, 0.0,
            ],
        )
    }

    /// One Jacobian factored at several shifts, large and small (the elimination fills in,
    /// and a small shift makes it swap rows): each factorisation only rewrites the
    /// pattern's entries and clears the last one's fill-in, and each solve must be exact
    /// for its own matrices.
    #[test]
    fn refactoring_one_jacobian_at_new_shifts_stays_exact() {
        let n = 6;
        // An arrow (full first row and column: eliminating it fills everything) and a
        // strong coupling that makes small shifts swap rows.
        let j = DMatrix::from_fn(n, n, |i, k| match (i, k) {
            _ if i == k => -1.0 - i as f64,
            (0, _) => 3.0 + k as f64,
            (_, 0) => 2.0 - i as f64,
            (2, 3) => -25.0,
            (3, 2) => 30.0,
            _ => 0.0,
        });
        let mut it = IterationMatrices::new(n);
        it.partition(&j);
        let b: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
        for (fac1, fac2) in [
            (1e3, Complex::new(900.0, 300.0)),
            (0.01, Complex::new(0.02, 0.01)),
            (50.0, Complex::new(40.0, 25.0)),
        ] {
            assert!(it.factor(&j, fac1, fac2));
            let mut x = b.clone();
            it.solve_real(&mut x);
            let e1 = DMatrix::identity(n, n) * fac1 - &j;
            let r = &e1 * nalgebra::DVector::from_column_slice(&x)
                - nalgebra::DVector::from_column_slice(&b);
            assert!(r.amax() < 1e-11, "fac1 {fac1}: residual {r}");
            let mut z: Vec<Complex<f64>> = b.iter().map(|&v| Complex::new(v, 1.0)).collect();
            let zb = z.clone();
            it.solve_complex(&mut z);
            let e2 =
                DMatrix::<Complex<f64>>::identity(n, n) * fac2 - j.map(|v| Complex::new(v, 0.0));
            let r = &e2 * nalgebra::DVector::from_column_slice(&z)
                - nalgebra::DVector::from_column_slice(&zb);
            assert!(r.norm() < 1e-11, "fac2 {fac2}: residual {r}");
        }
    }

    #[test]
    fn reduced_solves_match_the_full_systems() {
        let j = jacobian();
        let mut it = IterationMatrices::new(4);
        it.partition(&j);
        assert_eq!(it.factored(), 2);
        let (fac1, fac2) = (3.5, Complex::new(2.0, 1.5));
        assert!(it.factor(&j, fac1, fac2));
        let b = [1.0, -2.0, 0.5, 3.0];
        let mut x = b;
        it.solve_real(&mut x);
        let e1 = DMatrix::identity(4, 4) * fac1 - &j;
        let r = &e1 * nalgebra::DVector::from_column_slice(&x)
            - nalgebra::DVector::from_column_slice(&b);
        assert!(r.norm() < 1e-14, "residual {r}");
        let mut z: Vec<Complex<f64>> = b.iter().map(|&v| Complex::new(v, -v)).collect();
        let zb = z.clone();
        it.solve_complex(&mut z);
        let e2 = DMatrix::<Complex<f64>>::identity(4, 4) * fac2 - j.map(|v| Complex::new(v, 0.0));
        let r = &e2 * nalgebra::DVector::from_column_slice(&z)
            - nalgebra::DVector::from_column_slice(&zb);
        assert!(r.norm() < 1e-14, "residual {r}");
    }

    #[test]
    fn without_zero_columns_the_full_matrices_are_factored() {
        let j = DMatrix::from_row_slice(2, 2, &[-1.0, 2.0, 0.5, -4.0]);
        let mut it = IterationMatrices::new(2);
        it.partition(&j);
        assert_eq!(it.factored(), 2);
        assert!(it.factor(&j, 1.0, Complex::new(1.0, 1.0)));
        let mut x = [1.0, 1.0];
        it.solve_real(&mut x);
        let e = DMatrix::identity(2, 2) - &j;
        let r =
            &e * nalgebra::DVector::from_column_slice(&x) - nalgebra::DVector::from_element(2, 1.0);
        assert!(r.norm() < 1e-15);
    }

    #[test]
    fn an_all_zero_jacobian_keeps_one_factored_state() {
        let j = DMatrix::zeros(3, 3);
        let mut it = IterationMatrices::new(3);
        it.partition(&j);
        assert_eq!(it.factored(), 1);
        assert!(it.factor(&j, 2.0, Complex::new(2.0, 0.5)));
        let mut x = [2.0, 4.0, 6.0];
        it.solve_real(&mut x);
        assert_eq!(x, [1.0, 2.0, 3.0]);
    }
}
