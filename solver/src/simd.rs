//! Wider vector instructions for the hot element-wise loops, chosen at run time.
//!
//! The kernels (stage combinations, error norms, dense output, the model's linear blocks)
//! are written once as plain `#[inline(always)]` loops the compiler vectorizes;
//! [`avx_dispatch!`](crate::avx_dispatch) compiles such a loop twice more, for AVX (four
//! `f64` per instruction instead of two) and for AVX-512 (eight), and picks the widest
//! variant the processor has. Only multiplications and additions are used, never fused
//! multiply-adds (Rust never contracts `a * b + c`), and every reduction keeps its own
//! fixed number of partial sums whatever the vector width, so the results are
//! bit-identical on every tier: a run gives the same numbers on every machine.
//!
//! The tier can be forced for comparisons: `DRIVELINK_SIMD=scalar|avx|avx512` in the
//! environment (read once, at the first kernel call; a tier the processor lacks falls
//! back to the widest it has), or [`set_level`] in process.

use std::sync::atomic::{AtomicU8, Ordering};

/// A kernel variant: which instruction set the element-wise loops are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The baseline (SSE2 on x86-64, whatever the target has elsewhere).
    Scalar = 1,
    /// AVX: four `f64` per instruction.
    Avx = 2,
    /// AVX-512F: eight `f64` per instruction.
    Avx512 = 3,
}

impl Level {
    fn from_u8(v: u8) -> Level {
        match v {
            3 => Level::Avx512,
            2 => Level::Avx,
            _ => Level::Scalar,
        }
    }
    /// The name `DRIVELINK_SIMD` takes.
    pub fn name(self) -> &'static str {
        match self {
            Level::Scalar => "scalar",
            Level::Avx => "avx",
            Level::Avx512 => "avx512",
        }
    }
}

/// 0 = not yet known, else a [`Level`].
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// The kernel tier in use (detected once; see the module doc).
#[inline(always)]
pub fn level() -> Level {
    match LEVEL.load(Ordering::Relaxed) {
        0 => detect_level(),
        v => Level::from_u8(v),
    }
}

/// The tier asked for by `DRIVELINK_SIMD` (or the widest), remembered (the first call of
/// [`level`] only).
#[cold]
fn detect_level() -> Level {
    let asked = std::env::var("DRIVELINK_SIMD").ok();
    let l = match asked.as_deref() {
        Some("scalar") => Level::Scalar,
        Some("avx") => Level::Avx.min(best()),
        _ => best(),
    };
    LEVEL.store(l as u8, Ordering::Relaxed);
    l
}

/// Use tier `l` from now on (at most the widest the processor has, which is returned).
/// Every tier gives the same bits, so this changes speed only.
pub fn set_level(l: Level) -> Level {
    let l = l.min(best());
    LEVEL.store(l as u8, Ordering::Relaxed);
    l
}

/// The widest tier this processor has.
pub fn best() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            return Level::Avx512;
        }
        if std::is_x86_feature_detected!("avx") {
            return Level::Avx;
        }
    }
    Level::Scalar
}

/// Define `$name` calling the `#[inline(always)]` function `$body` with the same
/// arguments, compiled twice more, with AVX (`$avx`) and with AVX-512F (`$avx512`), and
/// dispatched at run time to the tier [`level`] chose.
#[macro_export]
macro_rules! avx_dispatch {
    ($(#[$m:meta])* $vis:vis fn $name:ident / $avx:ident / $avx512:ident = $body:ident ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)?) => {
        $(#[$m])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                match $crate::simd::level() {
                    // SAFETY: `level` never returns a tier the processor lacks.
                    $crate::simd::Level::Avx512 => return unsafe { $avx512($($arg),*) },
                    // SAFETY: as above.
                    $crate::simd::Level::Avx => return unsafe { $avx($($arg),*) },
                    $crate::simd::Level::Scalar => {}
                }
            }
            $body($($arg),*)
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx")]
        unsafe fn $avx($($arg: $ty),*) $(-> $ret)? {
            $body($($arg),*)
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        unsafe fn $avx512($($arg: $ty),*) $(-> $ret)? {
            $body($($arg),*)
        }
    };
}

/// A zero-initialised `f64` buffer whose first element sits on a 64-byte boundary: a
/// cache line, and the width of an AVX-512 register.
///
/// The allocator aligns a `Vec<f64>` to 16 bytes only, so where a buffer starts within its
/// cache line depended on what was allocated before it (the command line's length was
/// enough to move it), and full-width loads that straddle two lines made the element-wise
/// kernels up to 12 % slower on the 1,000-lag chain from one run to the next. The solver's
/// stage vectors and the model's signal and state vectors use this type. (A slice of
/// length `n` taken at `s·n` is aligned only when `n` is a multiple of 8.)
#[derive(Debug, Clone)]
pub struct AlignedBuf {
    lines: Vec<Line>,
    len: usize,
}

/// One cache line of entries: the allocation unit of [`AlignedBuf`], which gives the
/// buffer its alignment.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Line([f64; 8]);

impl AlignedBuf {
    /// `len` zeros, aligned.
    pub fn zeros(len: usize) -> AlignedBuf {
        AlignedBuf {
            lines: vec![Line([0.0; 8]); len.div_ceil(8)],
            len,
        }
    }

    /// A copy of `v`, aligned.
    pub fn from_slice(v: &[f64]) -> AlignedBuf {
        let mut a = AlignedBuf::zeros(v.len());
        a.copy_from_slice(v);
        a
    }

    /// Append `v` (into a new buffer: not for hot paths).
    pub fn extend_from_slice(&mut self, v: &[f64]) {
        let mut grown = AlignedBuf::zeros(self.len + v.len());
        grown[..self.len].copy_from_slice(self);
        grown[self.len..].copy_from_slice(v);
        *self = grown;
    }

    /// Keep the first `len` entries (no effect when there are no more).
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [f64];
    #[inline]
    fn deref(&self) -> &[f64] {
        // SAFETY: `Line` is `repr(C)` around `[f64; 8]`, so the lines are
        // `8 * lines.len() >= len` contiguous, initialised `f64`s, suitably aligned (an
        // empty `Vec`'s dangling pointer is aligned and non-null too); `len` never grows
        // past that (`zeros` sizes the lines for it, `truncate` only shrinks it).
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<f64>(), self.len) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    #[inline]
    fn deref_mut(&mut self) -> &mut [f64] {
        // SAFETY: as in `deref`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast::<f64>(), self.len) }
    }
}

crate::avx_dispatch!(
    /// Whether every entry of `v` is finite (one vectorized pass: `x − x` is 0 for a finite
    /// `x` and NaN for an infinite or NaN one).
    pub fn all_finite / all_finite_avx / all_finite_avx512 = all_finite_body(v: &[f64]) -> bool
);

#[inline(always)]
#[allow(clippy::eq_op)] // x − x is the test for finiteness
fn all_finite_body(v: &[f64]) -> bool {
    let mut acc = [0.0f64; 4];
    let chunks = v.chunks_exact(4);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..4 {
            acc[j] += c[j] - c[j];
        }
    }
    let mut s = acc[0] + acc[1] + acc[2] + acc[3];
    for &x in tail {
        s += x - x;
    }
    s == 0.0
}

crate::avx_dispatch!(
    /// Whether `a` and `b` hold the same bits, entry by entry (one vectorized pass with no
    /// early exit: the XOR of every pair of entries, OR-ed together, is zero). Slices of
    /// different lengths differ.
    pub fn same_bits / same_bits_avx / same_bits_avx512 = same_bits_body(a: &[f64], b: &[f64]) -> bool
);

#[inline(always)]
fn same_bits_body(a: &[f64], b: &[f64]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut acc = [0u64; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ta, tb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for j in 0..4 {
            acc[j] |= x[j].to_bits() ^ y[j].to_bits();
        }
    }
    let mut d = acc[0] | acc[1] | acc[2] | acc[3];
    for (x, y) in ta.iter().zip(tb) {
        d |= x.to_bits() ^ y.to_bits();
    }
    d == 0
}

crate::avx_dispatch!(
    /// [`add_columns`] in the generic loop (each column added to `out` in memory).
    fn add_columns_generic / add_columns_generic_avx / add_columns_generic_avx512 = add_columns_body(
        out: &mut [f64], cols: &[f64], c: &[f64], skip_zero: bool
    )
);

/// `out += Σ_j c[j]·cols[j·w..(j+1)·w]` with `w = out.len()`: a column-major matrix times a
/// vector, column by column in one contiguous pass. Each entry sums its products in column
/// order, as a row-by-row dot product from `out` would, with one multiply and one add per
/// product (no fused multiply-add), so every tier gives the same bits. `skip_zero`: leave
/// out the columns whose coefficient is zero (a sparse right-hand side; then a non-finite
/// entry in such a column does not propagate).
///
/// On the AVX-512 tier a short `out` (up to 64 entries: a network's accelerations and
/// constraint forces) is summed in registers and stored once, instead of being loaded and
/// stored again for every column.
pub fn add_columns(out: &mut [f64], cols: &[f64], c: &[f64], skip_zero: bool) {
    #[cfg(target_arch = "x86_64")]
    if level() == Level::Avx512 && out.len() <= short_columns::MAX {
        // SAFETY: `level` never returns a tier the processor lacks.
        unsafe { short_columns::sum(out, cols, c, skip_zero, false) };
        return;
    }
    add_columns_generic(out, cols, c, skip_zero);
}

/// `out = Σ_j c[j]·cols[j·w..(j+1)·w]`: [`add_columns`] onto zeros, the same bits, without
/// a pass that zeroes `out` first.
pub fn set_columns(out: &mut [f64], cols: &[f64], c: &[f64], skip_zero: bool) {
    #[cfg(target_arch = "x86_64")]
    if level() == Level::Avx512 && out.len() <= short_columns::MAX {
        // SAFETY: as above.
        unsafe { short_columns::sum(out, cols, c, skip_zero, true) };
        return;
    }
    out.fill(0.0);
    add_columns_generic(out, cols, c, skip_zero);
}

#[inline(always)]
fn add_columns_body(out: &mut [f64], cols: &[f64], c: &[f64], skip_zero: bool) {
    let w = out.len();
    if w == 0 {
        return;
    }
    for (col, &cj) in cols.chunks_exact(w).zip(c) {
        if skip_zero && cj == 0.0 {
            continue;
        }
        for (o, &v) in out.iter_mut().zip(col) {
            *o += v * cj;
        }
    }
}

/// The AVX-512 kernel of [`add_columns`] for short columns: `out` lives in `K` registers
/// (eight entries each, the last one masked) for the whole sum.
#[cfg(target_arch = "x86_64")]
mod short_columns {
    use std::arch::x86_64::{
        __m512d, _mm512_add_pd, _mm512_mask_storeu_pd, _mm512_maskz_loadu_pd, _mm512_mul_pd,
        _mm512_set1_pd, _mm512_setzero_pd,
    };

    /// The longest `out` summed in registers (eight registers).
    pub(super) const MAX: usize = 64;

    /// `out (+)= Σ_j c[j]·cols[j·w..]` (`fresh`: from zeros, not from `out`).
    ///
    /// # Safety
    /// The processor has AVX-512F; `out.len() <= MAX`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn sum(
        out: &mut [f64],
        cols: &[f64],
        c: &[f64],
        skip_zero: bool,
        fresh: bool,
    ) {
        // SAFETY (all arms): the caller's guarantees, and `K` = ceil(w / 8).
        unsafe {
            match out.len().div_ceil(8) {
                0 => {}
                1 => sum_k::<1>(out, cols, c, skip_zero, fresh),
                2 => sum_k::<2>(out, cols, c, skip_zero, fresh),
                3 => sum_k::<3>(out, cols, c, skip_zero, fresh),
                4 => sum_k::<4>(out, cols, c, skip_zero, fresh),
                5 => sum_k::<5>(out, cols, c, skip_zero, fresh),
                6 => sum_k::<6>(out, cols, c, skip_zero, fresh),
                7 => sum_k::<7>(out, cols, c, skip_zero, fresh),
                _ => sum_k::<8>(out, cols, c, skip_zero, fresh),
            }
        }
    }

    /// [`sum`] for `8·(K − 1) < out.len() <= 8·K`.
    ///
    /// # Safety
    /// The processor has AVX-512F; `out.len()` is in that range.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn sum_k<const K: usize>(
        out: &mut [f64],
        cols: &[f64],
        c: &[f64],
        skip_zero: bool,
        fresh: bool,
    ) {
        let w = out.len();
        debug_assert!(w > 8 * (K - 1) && w <= 8 * K);
        // Lanes past the end are masked: neither read (no fault) nor written.
        let mut mask = [0xffu8; K];
        mask[K - 1] = match w % 8 {
            0 => 0xff,
            r => (1u8 << r) - 1,
        };
        let mut acc: [__m512d; K] = [_mm512_setzero_pd(); K];
        // SAFETY: every pointer below is `8·v < w` entries into a slice of `w` (`out`, a
        // column of `cols`), and the masks keep each access inside the slice.
        unsafe {
            if !fresh {
                for v in 0..K {
                    acc[v] = _mm512_maskz_loadu_pd(mask[v], out.as_ptr().add(8 * v));
                }
            }
            for (col, &cj) in cols.chunks_exact(w).zip(c) {
                if skip_zero && cj == 0.0 {
                    continue;
                }
                let b = _mm512_set1_pd(cj);
                for v in 0..K {
                    let x = _mm512_maskz_loadu_pd(mask[v], col.as_ptr().add(8 * v));
                    acc[v] = _mm512_add_pd(acc[v], _mm512_mul_pd(x, b));
                }
            }
            for v in 0..K {
                _mm512_mask_storeu_pd(out.as_mut_ptr().add(8 * v), mask[v], acc[v]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{add_columns, all_finite, same_bits};

    #[test]
    fn aligned_buffers_start_on_a_cache_line() {
        // Allocations of every size class and offset: each buffer starts on a 64-byte
        // boundary, has the length asked for, is zeroed, and so is its clone.
        let mut keep = Vec::new();
        for len in 0..100 {
            let pad = vec![0u8; len * 3 + 1];
            let mut a = super::AlignedBuf::zeros(len);
            assert_eq!(a.len(), len);
            assert!(a.iter().all(|&v| v == 0.0));
            if len > 0 {
                assert_eq!(a.as_ptr() as usize % 64, 0, "len {len}");
                a[len - 1] = len as f64;
            }
            let mut b = a.clone();
            assert_eq!(&b[..], &a[..]);
            b.extend_from_slice(&[1.0, 2.0]);
            assert_eq!(&b[len..], &[1.0, 2.0]);
            b.truncate(len);
            assert_eq!(&b[..], &a[..]);
            if len > 0 {
                assert_eq!(b.as_ptr() as usize % 64, 0, "clone, len {len}");
            }
            keep.push((pad, a, b));
        }
    }

    #[test]
    fn same_bits_sees_any_difference_and_signed_zeros() {
        let a: Vec<f64> = (0..11).map(|i| i as f64 * 0.1).collect();
        assert!(same_bits(&a, &a.clone()));
        for k in 0..a.len() {
            let mut b = a.clone();
            b[k] = f64::from_bits(b[k].to_bits() ^ 1);
            assert!(!same_bits(&a, &b), "one bit at {k}");
        }
        assert!(!same_bits(&[0.0], &[-0.0]));
        assert!(same_bits(&[f64::NAN], &[f64::NAN]));
        assert!(!same_bits(&a, &a[1..]));
        assert!(same_bits(&[], &[]));
    }

    #[test]
    fn add_columns_is_the_row_by_row_product() {
        // 3 rows, 4 columns (column-major), one zero coefficient.
        let a: Vec<f64> = (0..12).map(|i| 0.1 * i as f64 - 0.45).collect();
        let v = [1.5, 0.0, -2.0, 0.25];
        for skip in [false, true] {
            let mut out = vec![0.0; 3];
            add_columns(&mut out, &a, &v, skip);
            for (i, &o) in out.iter().enumerate() {
                let mut s = 0.0;
                for j in 0..4 {
                    s += a[j * 3 + i] * v[j];
                }
                assert_eq!(o.to_bits(), s.to_bits(), "row {i}, skip {skip}");
            }
        }
        // A NaN in a column with a zero coefficient reaches the result only without skipping.
        let mut b = a.clone();
        b[4] = f64::NAN;
        let (mut with, mut without) = (vec![0.0; 3], vec![0.0; 3]);
        add_columns(&mut with, &b, &v, false);
        add_columns(&mut without, &b, &v, true);
        assert!(with[1].is_nan() && without.iter().all(|x| x.is_finite()));
        add_columns(&mut [], &[], &[], true);
    }

    #[test]
    fn columns_summed_in_registers_equal_the_generic_loop_to_the_bit() {
        // Every length up to past the register kernel's limit, a non-zero `out`, zero
        // coefficients (skipped or not) and a NaN in a skipped column: the dispatched sums
        // (the register kernel on an AVX-512 processor) and, where the processor has it,
        // the kernel called directly give the generic loop's bits.
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for w in 0..=70usize {
            for ncol in [1usize, 3, 10] {
                let cols: Vec<f64> = (0..w * ncol)
                    .map(|i| ((i * 7919) % 113) as f64 * 0.013 - 0.7)
                    .collect();
                let mut c: Vec<f64> = (0..ncol).map(|j| 1.0 / (j as f64 + 0.3) - 1.1).collect();
                c[ncol / 2] = 0.0;
                let mut with_nan = cols.clone();
                if w > 0 {
                    with_nan[(ncol / 2) * w + w / 2] = f64::NAN;
                }
                let start: Vec<f64> = (0..w).map(|i| (i as f64).sin() * 3.0).collect();
                for (m, skip) in [(&cols, false), (&cols, true), (&with_nan, true)] {
                    let mut reference = start.clone();
                    super::add_columns_body(&mut reference, m, &c, skip);
                    let mut fresh = vec![0.0; w];
                    super::add_columns_body(&mut fresh, m, &c, skip);
                    let mut added = start.clone();
                    add_columns(&mut added, m, &c, skip);
                    assert_eq!(bits(&added), bits(&reference), "add, w {w}, {ncol} columns");
                    let mut set = vec![5.0; w];
                    super::set_columns(&mut set, m, &c, skip);
                    assert_eq!(bits(&set), bits(&fresh), "set, w {w}, {ncol} columns");
                    #[cfg(target_arch = "x86_64")]
                    if std::is_x86_feature_detected!("avx512f") && w <= super::short_columns::MAX {
                        let mut direct = start.clone();
                        // SAFETY: the processor has AVX-512F and `w` is within the limit.
                        unsafe { super::short_columns::sum(&mut direct, m, &c, skip, false) };
                        assert_eq!(bits(&direct), bits(&reference), "kernel, w {w}");
                    }
                }
            }
        }
    }

    #[test]
    fn all_finite_finds_any_non_finite_entry() {
        let mut v = vec![1.0; 37];
        assert!(all_finite(&v));
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            for k in [0, 17, 36] {
                v[k] = bad;
                assert!(!all_finite(&v), "{bad} at {k}");
                v[k] = 1.0;
            }
        }
        assert!(all_finite(&[]));
        assert!(all_finite(&[f64::MAX, -f64::MAX]));
    }
}
