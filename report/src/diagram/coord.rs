//! Heights of the items of each column: connected ports level with each other as far as
//! the column's order and spacing allow.
//!
//! Each item wants the mean height its links ask for; within a column the items keep
//! their order and their spacing ([`gap`]), and the positions closest to the wishes in
//! the least-squares sense are the weighted isotonic regression of the wishes (pool
//! adjacent violators, linear time). Sweeps alternate between pulls from the left column,
//! from the right, and from both. Where hinted pulls ([`super::hints`]) act on an item,
//! only they count, so a hinted row stays exactly straight.

use super::order::{Grid, ItemKind};

/// Space between two neighbours in a column, px.
fn gap(a: ItemKind, b: ItemKind) -> f64 {
    match (a, b) {
        (ItemKind::Box(_), ItemKind::Box(_)) => 26.0,
        (ItemKind::Slot(_), ItemKind::Slot(_)) => 10.0,
        _ => 14.0,
    }
}

/// Top of each item of `grid` (px, any origin).
pub(crate) fn tops(grid: &Grid, sweeps: usize) -> Vec<f64> {
    let mut top = vec![0.0f64; grid.items.len()];
    for col in &grid.cols {
        let mut y = 0.0;
        for (k, &i) in col.iter().enumerate() {
            if k > 0 {
                y += gap(grid.items[col[k - 1]].kind, grid.items[i].kind);
            }
            top[i] = y;
            y += grid.items[i].h;
        }
    }
    let n = grid.cols.len();
    for sweep in 0..sweeps {
        // 0: from the left, 1: from the right, 2: both; the last sweeps use both.
        let mode = if sweep + 2 >= sweeps { 2 } else { sweep % 2 };
        for step in 0..n {
            let c = if mode == 1 { n - 1 - step } else { step };
            settle(grid, &grid.cols[c], mode, &mut top);
        }
    }
    top
}

/// Places the items of one column (`col`, top to bottom) as close to their links' wishes
/// as order and spacing allow.
fn settle(grid: &Grid, col: &[usize], mode: usize, top: &mut [f64]) {
    if col.is_empty() {
        return;
    }
    let c = grid.items[col[0]].col;
    let mut want = Vec::with_capacity(col.len());
    let mut weight = Vec::with_capacity(col.len());
    let mut offset = 0.0;
    for (k, &i) in col.iter().enumerate() {
        if k > 0 {
            offset +=
                grid.items[col[k - 1]].h + gap(grid.items[col[k - 1]].kind, grid.items[i].kind);
        }
        // Links within the column (a feedback line's pass beside its own box) always count.
        let used = |oc: usize| match mode {
            0 => oc + 1 == c || oc == c,
            1 => oc == c + 1 || oc == c,
            _ => true,
        };
        // The strongest pulls rule: a hinted position is kept exactly.
        let strongest = grid.links[i]
            .iter()
            .filter(|l| used(grid.items[l.other].col))
            .fold(0.0f64, |m, l| m.max(l.w));
        let (mut sum, mut wsum) = (0.0, 0.0);
        for l in &grid.links[i] {
            if used(grid.items[l.other].col) && l.w == strongest {
                sum += l.w * (top[l.other] + l.other_off - l.own_off);
                wsum += l.w;
            }
        }
        // An item nothing pulls stays where it is (and gives way easily).
        let (y, w) = if wsum > 0.0 {
            (sum / wsum, wsum)
        } else {
            (top[i], 0.01)
        };
        want.push(y - offset);
        weight.push(w);
    }
    let z = isotonic(&want, &weight);
    let mut offset = 0.0;
    for (k, &i) in col.iter().enumerate() {
        if k > 0 {
            offset +=
                grid.items[col[k - 1]].h + gap(grid.items[col[k - 1]].kind, grid.items[i].kind);
        }
        top[i] = (z[k] + offset).round();
    }
}

/// The non-decreasing sequence closest to `y` in weighted least squares (pool adjacent
/// violators).
pub(crate) fn isotonic(y: &[f64], w: &[f64]) -> Vec<f64> {
    // Blocks of (weighted sum, weight, length).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::with_capacity(y.len());
    for (&v, &wt) in y.iter().zip(w) {
        blocks.push((v * wt, wt, 1));
        while blocks.len() >= 2 {
            let (s1, w1, n1) = blocks[blocks.len() - 1];
            let (s0, w0, n0) = blocks[blocks.len() - 2];
            if s0 / w0 <= s1 / w1 {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = (s0 + s1, w0 + w1, n0 + n1);
        }
    }
    blocks
        .iter()
        .flat_map(|&(s, wt, len)| std::iter::repeat_n(s / wt, len))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::isotonic;

    #[test]
    fn isotonic_regression_pools_violators_into_their_weighted_mean() {
        assert_eq!(
            isotonic(&[1.0, 3.0, 2.0, 4.0], &[1.0; 4]),
            [1.0, 2.5, 2.5, 4.0]
        );
        // The heavier wish wins the pool: (3·1 + 0·3) / 4.
        assert_eq!(isotonic(&[3.0, 0.0], &[1.0, 3.0]), [0.75, 0.75]);
        assert_eq!(isotonic(&[], &[]), Vec::<f64>::new());
    }
}
