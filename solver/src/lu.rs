//! Dense LU factorisation with partial pivoting, in place on nalgebra storage, for real and
//! complex matrices.
//!
//! nalgebra's own `LU::new` takes the matrix by value and allocates its permutation on
//! every factorisation; the implicit method refactors its iteration matrices whenever the
//! step size changes and must not allocate per step, so the elimination is done here in a
//! matrix and pivot vector allocated once. Storage is nalgebra's column-major `DMatrix`;
//! the inner loops run down columns (contiguous memory).

use nalgebra::{ComplexField, DMatrix};

/// An `n × n` matrix and, after [`Lu::factor`], its LU factors (`P A = L U`, unit lower
/// `L` below the diagonal, `U` on and above it).
#[derive(Debug, Clone)]
pub(crate) struct Lu<T> {
    a: DMatrix<T>,
    piv: Vec<usize>,
}

impl<T: ComplexField<RealField = f64> + Copy> Lu<T> {
    pub(crate) fn new(n: usize) -> Self {
        Lu {
            a: DMatrix::from_element(n, n, T::zero()),
            piv: vec![0; n],
        }
    }

    /// The matrix to fill before [`Lu::factor`].
    pub(crate) fn matrix_mut(&mut self) -> &mut DMatrix<T> {
        &mut self.a
    }

    /// Factor the matrix in place. Returns `false` if a pivot is exactly zero (singular).
    pub(crate) fn factor(&mut self) -> bool {
        let n = self.a.nrows();
        let a = self.a.as_mut_slice();
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
            for v in &mut a[k * n + k + 1..(k + 1) * n] {
                *v *= inv;
            }
            // Rank-one update of the trailing block, column by column.
            let (left, right) = a.split_at_mut((k + 1) * n);
            let lcol = &left[k * n + k + 1..(k + 1) * n];
            for j in 0..n - k - 1 {
                let colj = &mut right[j * n..(j + 1) * n];
                let akj = colj[k];
                if akj == T::zero() {
                    continue;
                }
                for (x, &l) in colj[k + 1..].iter_mut().zip(lcol) {
                    *x -= l * akj;
                }
            }
        }
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
            if bk != T::zero() {
                for (x, &l) in b[k + 1..].iter_mut().zip(&a[k * n + k + 1..(k + 1) * n]) {
                    *x -= l * bk;
                }
            }
        }
        for k in (0..n).rev() {
            b[k] /= a[k * n + k];
            let bk = b[k];
            if bk != T::zero() {
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

    #[test]
    fn singular_matrix_is_reported() {
        let mut lu = Lu::<f64>::new(2);
        lu.matrix_mut()
            .copy_from(&DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 4.0]));
        assert!(!lu.factor());
    }
}
