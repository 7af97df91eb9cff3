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
//! integrals and shaft angles feed nothing, most blocks touch a few states (vd_full_car:
//! 30 factored states, about 267 non-zeros of 900, little fill-in). Skipped terms are
//! exact zeros (`x − 0·a`), so the factors and solutions are those of the dense
//! elimination (up to the sign of zero) on either path:
//!
//! - **Up to 64 rows** (`MASK_MAX`): the pattern of every column and row is a bit mask,
//!   kept through the elimination (row swaps exchange bits, fill-in sets them). The pivot
//!   search, the multipliers, the columns the pivot row reaches and the triangular solves
//!   walk set bits only, so a factorisation costs about its non-zero operations instead
//!   of four scans of `n²` entries. The pattern is scanned from the matrix, or given by
//!   the caller ([`Lu::factor_on`]: Radau's two iteration matrices of one Jacobian share
//!   it).
//! - **Larger matrices**: the elimination collects the non-zero multipliers of each
//!   pivot column and, when they are fewer than half the column, updates only those rows
//!   (the dense column loop otherwise); zero pivot-row entries skip their column. After
//!   the factorisation the non-zeros of every column of `L` and `U` are listed, and the
//!   triangular solves walk those lists for sparse columns. The index lists are allocated
//!   once (`n²` capacity).

use nalgebra::{ComplexField, DMatrix};

/// On the dense path, a column with fewer than `len / SPARSE_DIV` non-zeros is updated
/// through its index list. 2, not 4: on the 58-state vehicle car's iteration matrices (about 390 non-zeros)
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
    /// Matrices of at most [`MASK_MAX`] rows: the non-zero pattern of every column
    /// (`col[j]` bit `i`: entry `(i, j)` may be non-zero) and row, as bit masks, kept
    /// through the elimination (see [`Lu::factor_masked`]). Empty for larger matrices.
    col: Vec<u64>,
    row: Vec<u64>,
    /// The last factorisation was the masked one: the solves walk `col`'s bits (the index
    /// lists otherwise).
    masked: bool,
}

/// The largest matrix factored on bit-mask patterns (one `u64` per row and column).
const MASK_MAX: usize = 64;

/// The set bits of `m`, ascending.
#[inline]
fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            return None;
        }
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        Some(i)
    })
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
            col: vec![0; if n <= MASK_MAX { n } else { 0 }],
            row: vec![0; if n <= MASK_MAX { n } else { 0 }],
            masked: false,
        }
    }

    /// The matrix's dimension.
    pub(crate) fn size(&self) -> usize {
        self.a.nrows()
    }

    /// The matrix to fill before [`Lu::factor`].
    pub(crate) fn matrix_mut(&mut self) -> &mut DMatrix<T> {
        // Written from outside: the last factors' pattern no longer covers the matrix.
        self.masked = false;
        &mut self.a
    }

    /// Fill the matrix with `entry(i, j)` on the entries of `pattern` (bit `i` of
    /// `pattern[j]`) and zeros elsewhere, for [`Lu::factor_on`] with the same pattern.
    /// After a masked factorisation every entry outside its final masks is zero, so only
    /// those entries are cleared (all of them otherwise): the cost is the pattern's, not
    /// `n²`.
    pub(crate) fn refill(&mut self, pattern: &[u64], mut entry: impl FnMut(usize, usize) -> T) {
        let n = self.a.nrows();
        let a = self.a.as_mut_slice();
        if self.masked {
            for (j, &m) in self.col.iter().enumerate() {
                for i in bits(m) {
                    a[j * n + i] = T::zero();
                }
            }
        } else {
            a.fill(T::zero());
        }
        for (j, &m) in pattern.iter().enumerate() {
            for i in bits(m) {
                a[j * n + i] = entry(i, j);
            }
        }
    }

    /// Factor the matrix in place. Returns `false` if a pivot is exactly zero (singular).
    pub(crate) fn factor(&mut self) -> bool {
        if self.a.nrows() <= MASK_MAX {
            self.scan_pattern();
            self.factor_masked()
        } else {
            self.factor_dense()
        }
    }

    /// [`Lu::factor`] with the matrix's pattern given: `pattern[j]` has bit `i` set for
    /// every entry `(i, j)` that may be non-zero (a superset is fine: values are tested).
    /// Saves the scan of the matrix when several matrices share a pattern (Radau's real
    /// and complex iteration matrices of one Jacobian). Matrices larger than
    /// [`MASK_MAX`] ignore it.
    pub(crate) fn factor_on(&mut self, pattern: &[u64]) -> bool {
        if self.a.nrows() > MASK_MAX {
            return self.factor_dense();
        }
        debug_assert!(
            {
                let n = self.a.nrows();
                let a = self.a.as_slice();
                (0..n * n).all(|e| a[e] == T::zero() || (pattern[e / n] >> (e % n)) & 1 == 1)
            },
            "the pattern must cover every non-zero"
        );
        self.col.copy_from_slice(pattern);
        self.rows_from_cols();
        self.factor_masked()
    }

    /// The row masks of the column masks.
    fn rows_from_cols(&mut self) {
        self.row.fill(0);
        for (j, &m) in self.col.iter().enumerate() {
            for i in bits(m) {
                self.row[i] |= 1 << j;
            }
        }
    }

    /// The column and row masks of the matrix's non-zeros.
    fn scan_pattern(&mut self) {
        let n = self.a.nrows();
        let a = self.a.as_slice();
        for (j, c) in self.col.iter_mut().enumerate() {
            let mut m = 0u64;
            for (i, v) in a[j * n..(j + 1) * n].iter().enumerate() {
                if *v != T::zero() {
                    m |= 1 << i;
                }
            }
            *c = m;
        }
        self.rows_from_cols();
    }

    /// [`Lu::factor`] on the patterns' bit masks (`col`, `row` filled with a superset of
    /// the matrix's non-zeros): the same elimination (the same pivots,
    /// the same operations on every entry in the same order), with the scans over zeros
    /// replaced by walks over set bits. The pivot search, the multipliers and the rank-one
    /// update visit only entries of the pattern, and each value is still tested for an
    /// exact zero as [`Lu::factor_dense`] tests it, so the factors are the dense
    /// elimination's up to the sign of zero (the dense update of a wide column subtracts
    /// `0·a` from entries the masked one leaves alone).
    fn factor_masked(&mut self) -> bool {
        let n = self.a.nrows();
        self.masked = true;
        let Lu {
            a, piv, col, row, ..
        } = self;
        let a = a.as_mut_slice();
        // Bits `k..`: rows (or columns) not yet eliminated at step `k`.
        let from = |k: usize| if k >= 64 { 0 } else { u64::MAX << k };
        for k in 0..n {
            // Pivot: largest |re| + |im| in column k, rows k..n, the first one on ties.
            let mut p = k;
            let mut best = a[k * n + k].norm1();
            for i in bits(col[k] & from(k + 1)) {
                let m = a[k * n + i].norm1();
                if m > best {
                    best = m;
                    p = i;
                }
            }
            piv[k] = p;
            if best == 0.0 || !best.is_finite() {
                return false;
            }
            if p != k {
                // Rows k and p trade places in every column either touches.
                for j in bits(row[k] | row[p]) {
                    a.swap(j * n + k, j * n + p);
                    let c = &mut col[j];
                    if (*c >> k) & 1 != (*c >> p) & 1 {
                        *c ^= (1 << k) | (1 << p);
                    }
                }
                row.swap(k, p);
            }
            let inv = T::one() / a[k * n + k];
            let mut nz = 0u64;
            for i in bits(col[k] & from(k + 1)) {
                let v = &mut a[k * n + i];
                if *v != T::zero() {
                    *v *= inv;
                    nz |= 1 << i;
                }
            }
            if nz == 0 {
                continue;
            }
            // Rank-one update of the columns row k reaches; the update's rows join their
            // patterns (fill-in).
            for j in bits(row[k] & from(k + 1)) {
                let akj = a[j * n + k];
                if akj == T::zero() {
                    continue;
                }
                for i in bits(nz) {
                    let l = a[k * n + i];
                    a[j * n + i] -= l * akj;
                }
                let fill = nz & !col[j];
                col[j] |= nz;
                for i in bits(fill) {
                    row[i] |= 1 << j;
                }
            }
        }
        true
    }

    /// [`Lu::factor`] for matrices too large for bit masks: dense column scans, index
    /// lists of the factors' patterns for the solves.
    fn factor_dense(&mut self) -> bool {
        self.masked = false;
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
        if self.masked {
            // Column k's pattern: L's rows below the diagonal, U's above it.
            for k in 0..n {
                let bk = b[k];
                if bk == T::zero() {
                    continue;
                }
                for i in bits(self.col[k] & (u64::MAX << k) & !(1 << k)) {
                    b[i] -= a[k * n + i] * bk;
                }
            }
            for k in (0..n).rev() {
                b[k] /= a[k * n + k];
                let bk = b[k];
                if bk == T::zero() {
                    continue;
                }
                for i in bits(self.col[k] & ((1 << k) - 1)) {
                    b[i] -= a[k * n + i] * bk;
                }
            }
            return;
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

    /// A sparse matrix that needs row swaps (small diagonal entries) and fills in.
    fn pivoting_matrix(n: usize) -> DMatrix<f64> {
        DMatrix::from_fn(n, n, |i, j| {
            if i == j {
                if i % 3 == 0 {
                    1e-3
                } else {
                    2.0 + (i % 4) as f64
                }
            } else if i == j + 1 || j == i + 2 || (i == n - 1 && j % 5 == 0) {
                1.0 + ((i + 2 * j) % 5) as f64 * 0.3
            } else if j == 3 && i % 6 == 1 {
                -0.7
            } else {
                0.0
            }
        })
    }

    /// An LU holding `m`, not yet factored.
    fn loaded(m: &DMatrix<f64>) -> Lu<f64> {
        let mut lu = Lu::<f64>::new(m.nrows());
        lu.matrix_mut().copy_from(m);
        lu
    }

    /// The bit-mask elimination is the dense one: the same pivots and the same factors
    /// (entries compared by value, so `−0 == 0`), given its pattern or scanning for it, on
    /// a matrix whose elimination swaps rows and fills in.
    #[test]
    fn masked_elimination_gives_the_dense_factors() {
        let n = 30;
        let m = pivoting_matrix(n);
        let mut dense = loaded(&m);
        assert!(dense.factor_dense());
        assert!(
            dense.piv.iter().enumerate().any(|(k, &p)| p != k),
            "rows are swapped"
        );
        let mut masked = loaded(&m);
        assert!(masked.factor());
        assert_eq!(masked.piv, dense.piv);
        assert!(masked.a.iter().zip(dense.a.iter()).all(|(a, b)| a == b));
        // A pattern with extra bits (a superset) changes nothing.
        let pattern: Vec<u64> = (0..n)
            .map(|j| {
                (0..n)
                    .filter(|&i| m[(i, j)] != 0.0 || (i + j) % 7 == 0)
                    .fold(0u64, |acc, i| acc | (1 << i))
            })
            .collect();
        let mut given = loaded(&m);
        assert!(given.factor_on(&pattern));
        assert_eq!(given.piv, dense.piv);
        assert!(given.a.iter().zip(dense.a.iter()).all(|(a, b)| a == b));
        // And the solves agree with nalgebra's.
        let b = DVector::from_fn(n, |i, _| 1.0 - (i as f64 * 0.21).cos());
        let expect = m.clone().lu().solve(&b).unwrap();
        for lu in [&masked, &given, &dense] {
            let mut x = b.clone();
            lu.solve(x.as_mut_slice());
            assert!((&x - &expect).amax() < 1e-11 * expect.amax());
        }
    }

    /// Above 64 rows the dense elimination and its index lists are used.
    #[test]
    fn large_matrix_uses_the_dense_elimination() {
        let n = 70;
        let m = pivoting_matrix(n);
        let mut lu = loaded(&m);
        assert!(lu.col.is_empty());
        assert!(lu.factor());
        let b = DVector::from_fn(n, |i, _| (i as f64 * 0.3).sin());
        let mut x = b.clone();
        lu.solve(x.as_mut_slice());
        assert!((&m * &x - &b).amax() < 1e-11);
    }

    #[test]
    fn singular_matrix_is_reported() {
        let mut lu = Lu::<f64>::new(2);
        lu.matrix_mut()
            .copy_from(&DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 4.0]));
        assert!(!lu.factor());
    }
}
