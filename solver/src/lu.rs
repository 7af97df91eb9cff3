//! Dense LU factorisation with partial pivoting, in place on nalgebra storage, for real and
//! complex matrices, skipping the zeros of sparse matrices.
//!
//! nalgebra's own `LU::new` takes the matrix by value and allocates its permutation on
//! every factorisation; the implicit method refactors its iteration matrices whenever the
//! step size changes and must not allocate per step, so the elimination is done here in a
//! matrix and pivot vector allocated once. Storage is nalgebra's column-major `DMatrix`;
//! the inner loops run down columns (contiguous memory).
//!
//! ## Sparsity
//! The iteration matrices of a block-diagram model (`γ/h·I − J`) are mostly zeros: energy
//! integrals and shaft angles feed nothing, most blocks touch a few states. The
//! elimination therefore collects the non-zero multipliers of each pivot column and, when
//! they are fewer than a quarter of the column, updates only those rows (the dense column
//! loop otherwise); zero pivot-row entries skip their column entirely. After the
//! factorisation the non-zeros of every column of `L` and `U` are listed, and the
//! triangular solves walk those lists for sparse columns. Skipped terms are exact zeros
//! (`x − 0·a`), so the factors and solutions are those of the dense elimination (up to the
//! sign of zero). The index lists are allocated once (`n²` capacity).

use nalgebra::{ComplexField, DMatrix};

/// A column with fewer than `len / SPARSE_DIV` non-zeros is updated through its index
/// list. 2, not 4: on the 58-state vehicle car's iteration matrices (about 390 non-zeros)
/// the index loop is cheaper down to half-full columns (factorisation -12 % instructions,
/// BENCHMARKS.md); the results are the same either way (skipped terms are exact zeros).
const SPARSE_DIV: usize = 2;

/// An `n × n` matrix and, after [`Lu::factor`], its LU factors (`P A = L U`, unit lower
/// `L` below the diagonal, `U` on and above it).
#[derive(Debug, Clone)]
pub(crate) struct Lu<T> {
    a: DMatrix<T>,
    piv: Vec<usize>,
    /// Row indices of the non-zeros of `L`'s column `k` (below the diagonal):
    /// `l_idx[l_ptr[k]..l_ptr[k + 1]]`.
    l_idx: Vec<usize>,
    l_ptr: Vec<usize>,
    /// Row indices of the non-zeros of `U`'s column `k` above the diagonal.
    u_idx: Vec<usize>,
    u_ptr: Vec<usize>,
}

impl<T: ComplexField<RealField = f64> + Copy> Lu<T> {
    pub(crate) fn new(n: usize) -> Self {
        Lu {
            a: DMatrix::from_element(n, n, T::zero()),
            piv: vec![0; n],
            l_idx: Vec::with_capacity(n * n),
            l_ptr: vec![0; n + 1],
            u_idx: Vec::with_capacity(n * n),
            u_ptr: vec![0; n + 1],
        }
    }

    /// The matrix's dimension.
    pub(crate) fn size(&self) -> usize {
        self.a.nrows()
    }

    /// The matrix to fill before [`Lu::factor`].
    pub(crate) fn matrix_mut(&mut self) -> &mut DMatrix<T> {
        &mut self.a
    }

    /// Factor the matrix in place. Returns `false` if a pivot is exactly zero (singular).
    pub(crate) fn factor(&mut self) -> bool {
        let n = self.a.nrows();
        let a = self.a.as_mut_slice();
        // Scratch for the pivot column's non-zero rows (the L lists are rebuilt below).
        let nz = &mut self.l_idx;
        for k in 0..n {
            // Pivot: largest |re| + |im| in column k, rows k..n.
            let col = &a[k * n..(k + 1) * n];
            let mut p = k;
            let mut best = col[k].norm1();
            for (i, v) in col.iter().enumerate().skip(k + 1) {
                let m = v.norm1();
                if m > best {
                    best = m;
                    p = i;
                }
            }
            self.piv[k] = p;
            if best == 0.0 || !best.is_finite() {
                return false;
            }
            if p != k {
                for j in 0..n {
                    a.swap(j * n + k, j * n + p);
                }
            }
            let inv = T::one() / a[k * n + k];
            nz.clear();
            for (i, v) in a[k * n + k + 1..(k + 1) * n].iter_mut().enumerate() {
                if *v != T::zero() {
                    *v *= inv;
                    nz.push(i);
                }
            }
            if nz.is_empty() {
                continue;
            }
            let sparse = nz.len() * SPARSE_DIV < n - k;
            // Rank-one update of the trailing block, column by column.
            let (left, right) = a.split_at_mut((k + 1) * n);
            let lcol = &left[k * n + k + 1..(k + 1) * n];
            for j in 0..n - k - 1 {
                let colj = &mut right[j * n..(j + 1) * n];
                let akj = colj[k];
                if akj == T::zero() {
                    continue;
                }
                let below = &mut colj[k + 1..];
                if sparse {
                    for &i in nz.iter() {
                        below[i] -= lcol[i] * akj;
                    }
                } else {
                    for (x, &l) in below.iter_mut().zip(lcol) {
                        *x -= l * akj;
                    }
                }
            }
        }
        // The non-zero patterns of the factors, column by column.
        self.l_idx.clear();
        self.u_idx.clear();
        for k in 0..n {
            self.l_ptr[k] = self.l_idx.len();
            self.u_ptr[k] = self.u_idx.len();
            let col = &a[k * n..(k + 1) * n];
            for (i, v) in col.iter().enumerate() {
                if *v != T::zero() {
                    if i < k {
                        self.u_idx.push(i);
                    } else if i > k {
                        self.l_idx.push(i);
                    }
                }
            }
        }
        self.l_ptr[n] = self.l_idx.len();
        self.u_ptr[n] = self.u_idx.len();
        true
    }

    /// Solve `A x = b` in place with the factors of the last successful [`Lu::factor`].
    pub(crate) fn solve(&self, b: &mut [T]) {
        let n = self.a.nrows();
        let a = self.a.as_slice();
        for k in 0..n {
            b.swap(k, self.piv[k]);
        }
        for k in 0..n {
            let bk = b[k];
            if bk == T::zero() {
                continue;
            }
            let rows = &self.l_idx[self.l_ptr[k]..self.l_ptr[k + 1]];
            if rows.len() * SPARSE_DIV < n - k {
                for &i in rows {
                    b[i] -= a[k * n + i] * bk;
                }
            } else {
                for (x, &l) in b[k + 1..].iter_mut().zip(&a[k * n + k + 1..(k + 1) * n]) {
                    *x -= l * bk;
                }
            }
        }
        for k in (0..n).rev() {
            b[k] /= a[k * n + k];
            let bk = b[k];
            if bk == T::zero() {
                continue;
            }
            let rows = &self.u_idx[self.u_ptr[k]..self.u_ptr[k + 1]];
            if rows.len() * SPARSE_DIV <= k {
                for &i in rows {
                    b[i] -= a[k * n + i] * bk;
                }
            } else {
                for (x, &u) in b[..k].iter_mut().zip(&a[k * n..k * n + k]) {
                    *x -= u * bk;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Complex, DVector};

    #[test]
    fn real_solve_matches_nalgebra() {
        let n = 7;
        let m = DMatrix::from_fn(n, n, |i, j| {
            ((i * 7 + j * 3) % 11) as f64 - 4.0 + (i == j) as u8 as f64 * 0.5
        });
        let b = DVector::from_fn(n, |i, _| i as f64 - 2.0);
        let mut lu = Lu::<f64>::new(n);
        lu.matrix_mut().copy_from(&m);
        assert!(lu.factor());
        let mut x = b.clone();
        lu.solve(x.as_mut_slice());
        let r = &m * &x - &b;
        assert!(r.amax() < 1e-12, "residual {}", r.amax());
        let expect = m.lu().solve(&b).unwrap();
        assert!((x - expect).amax() < 1e-12);
    }

    #[test]
    fn complex_solve_has_small_residual() {
        let n = 5;
        let m = DMatrix::from_fn(n, n, |i, j| {
            Complex::new(
                ((i + 2 * j) % 5) as f64 - 2.0,
                if i == j { 3.0 } else { 0.1 * j as f64 },
            )
        });
        let b = DVector::from_fn(n, |i, _| Complex::new(1.0, i as f64));
        let mut lu = Lu::<Complex<f64>>::new(n);
        lu.matrix_mut().copy_from(&m);
        assert!(lu.factor());
        let mut x = b.clone();
        lu.solve(x.as_mut_slice());
        let r = &m * &x - &b;
        assert!(r.iter().all(|v| v.norm() < 1e-12));
    }

    /// A sparse matrix (a band, a dense row and column, zero columns of the kind energy
    /// integrals give) takes the index-list paths; the solution must match the dense
    /// elimination (nalgebra) and the residual must vanish, for real and complex entries.
    #[test]
    fn sparse_matrix_solves_like_the_dense_elimination() {
        let n = 40;
        let entry = |i: usize, j: usize| -> f64 {
            if i == j {
                3.0 + (i % 5) as f64
            } else if j == i + 1 || i == j + 2 {
                0.5 - (i % 3) as f64 * 0.4
            } else if i == 7 || (j == 11 && i.is_multiple_of(4)) {
                0.3 * ((i + j) % 7) as f64 - 0.9
            } else {
                0.0
            }
        };
        let m = DMatrix::from_fn(n, n, entry);
        let b = DVector::from_fn(n, |i, _| (i as f64 * 0.37).sin());
        let mut lu = Lu::<f64>::new(n);
        lu.matrix_mut().copy_from(&m);
        assert!(lu.factor());
        assert!(lu.l_idx.len() < n * n / 8, "the factors are sparse");
        let mut x = b.clone();
        lu.solve(x.as_mut_slice());
        let expect = m.clone().lu().solve(&b).unwrap();
        assert!((&x - expect).amax() < 1e-13);
        assert!((&m * &x - &b).amax() < 1e-13);

        let mc = DMatrix::from_fn(n, n, |i, j| {
            let v = entry(i, j);
            Complex::new(v, if i == j { 1.5 } else { 0.2 * v })
        });
        let bc = DVector::from_fn(n, |i, _| Complex::new(1.0, i as f64));
        let mut luc = Lu::<Complex<f64>>::new(n);
        luc.matrix_mut().copy_from(&mc);
        assert!(luc.factor());
        let mut xc = bc.clone();
        luc.solve(xc.as_mut_slice());
        assert!((&mc * &xc - &bc).iter().all(|v| v.norm() < 1e-12));
    }

    #[test]
    fn singular_matrix_is_reported() {
        let mut lu = Lu::<f64>::new(2);
        lu.matrix_mut()
            .copy_from(&DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 4.0]));
        assert!(!lu.factor());
    }
}
