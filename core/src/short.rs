//! Copies and zero fills of short vectors (a dozen numbers: a network's node speeds, a
//! block's few outputs) as inline loads and stores. `copy_from_slice` and `fill` of a length
//! known only at run time call the C library's `memcpy`/`memset`, whose call and length
//! dispatch cost more than the copy itself at these lengths (the full car's evaluation made
//! about five such calls). Longer vectors still take the library's routines.

/// The longest vector copied or filled inline.
const SHORT: usize = 12;

/// `dst.copy_from_slice(src)` (the same panic on a length mismatch), inline when short.
#[inline(always)]
pub(crate) fn copy(dst: &mut [f64], src: &[f64]) {
    let n = dst.len();
    if n > SHORT || src.len() != n {
        dst.copy_from_slice(src);
        return;
    }
    // Blocks of four of a constant length (vector moves), then up to three single ones;
    // no loop, so nothing for the compiler to turn back into a `memcpy` call.
    let q = n & !3;
    if q >= 4 {
        dst[..4].copy_from_slice(&src[..4]);
    }
    if q >= 8 {
        dst[4..8].copy_from_slice(&src[4..8]);
    }
    if q >= 12 {
        dst[8..12].copy_from_slice(&src[8..12]);
    }
    if n > q {
        dst[q] = src[q];
    }
    if n > q + 1 {
        dst[q + 1] = src[q + 1];
    }
    if n > q + 2 {
        dst[q + 2] = src[q + 2];
    }
}

/// `v.fill(0.0)`, inline when short.
#[inline(always)]
pub(crate) fn zero(v: &mut [f64]) {
    let n = v.len();
    if n > SHORT {
        v.fill(0.0);
        return;
    }
    let q = n & !3;
    if q >= 4 {
        v[..4].copy_from_slice(&[0.0; 4]);
    }
    if q >= 8 {
        v[4..8].copy_from_slice(&[0.0; 4]);
    }
    if q >= 12 {
        v[8..12].copy_from_slice(&[0.0; 4]);
    }
    if n > q {
        v[q] = 0.0;
    }
    if n > q + 1 {
        v[q + 1] = 0.0;
    }
    if n > q + 2 {
        v[q + 2] = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::{copy, zero};

    #[test]
    fn short_copies_and_fills_equal_the_library_ones_at_every_length() {
        for n in 0..30 {
            let src: Vec<f64> = (0..n).map(|i| (i as f64 + 0.5) * -1.25).collect();
            let mut a = vec![7.0; n + 3];
            let mut b = a.clone();
            copy(&mut a[1..1 + n], &src);
            b[1..1 + n].copy_from_slice(&src);
            assert_eq!(a, b, "copy of {n}");
            zero(&mut a[2..2 + n]);
            b[2..2 + n].fill(0.0);
            assert_eq!(a, b, "fill of {n}");
            // Signed zeros and NaNs keep their bits.
            let odd = vec![-0.0; n];
            copy(&mut a[..n], &odd);
            assert!(a[..n].iter().all(|v| v.to_bits() == (-0.0f64).to_bits()));
        }
    }

    #[test]
    #[should_panic]
    fn a_short_copy_of_another_length_panics_as_copy_from_slice_does() {
        copy(&mut [0.0; 3], &[1.0; 2]);
    }
}
