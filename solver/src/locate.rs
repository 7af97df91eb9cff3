//! Location of the earliest guard crossing inside one step (Illinois method, several guards).
//!
//! Given a bracket `[tl, tr]` where no *armed* guard is negative at `tl` and at least one
//! armed guard is negative at `tr`, [`locate`] shrinks the bracket until
//! `tr - tl <= tol` while keeping that invariant, and returns `tr`: the first instant found
//! just past the earliest crossing, where the crossing guard is strictly negative.
//!
//! All guards are evaluated together (one `guards` call gives all of them). At every
//! iteration the *leading* guard, the one whose secant root lies earliest in the bracket
//! (largest `-g(tr) / (g(tl) - g(tr))`, as in SUNDIALS' rootfinder), proposes the trial
//! point by the Illinois-modified secant rule; the trial is clamped away from the bracket
//! ends by half the tolerance, and a bisection is forced when the bracket does not halve for
//! two iterations in a row, so convergence is guaranteed.

/// Iteration cap (never reached in practice: bisection alone would need ~60 halvings to go
/// from a full step to 1e-12 relative).
const MAX_ITER: usize = 200;

/// Guard values at the bracket ends and at the trial point (each of length `n_guards`).
#[derive(Clone)]
pub(crate) struct Bracket {
    pub(crate) lo: Vec<f64>,
    pub(crate) hi: Vec<f64>,
    pub(crate) mid: Vec<f64>,
}

impl Bracket {
    pub(crate) fn new(m: usize) -> Self {
        Bracket {
            lo: vec![0.0; m],
            hi: vec![0.0; m],
            mid: vec![0.0; m],
        }
    }
}

/// Is any armed guard negative in `g`? (Without an early exit: one branch-free pass the
/// compiler vectorizes, cheaper than stopping at the first crossing for a few dozen guards,
/// which are all checked on every sample that finds none.)
pub(crate) fn crossed(g: &[f64], armed: &[bool]) -> bool {
    g.iter()
        .zip(armed)
        .fold(false, |any, (&gi, &a)| any | (a & (gi < 0.0)))
}

/// Shrink `[tl, tr]` (guard values in `b.lo` / `b.hi`) to width `<= tol` and return the new
/// right end; on return `b.hi` holds the guard values there. `eval(t, g)` fills the guards
/// at `t` (from the dense output).
pub(crate) fn locate<F: FnMut(f64, &mut [f64])>(
    mut tl: f64,
    mut tr: f64,
    tol: f64,
    b: &mut Bracket,
    armed: &[bool],
    mut eval: F,
) -> f64 {
    // Illinois weights on the retained end's value of the leading guard.
    let (mut wl, mut wr) = (1.0f64, 1.0f64);
    // +1: the right end moved last, -1: the left end moved last.
    let mut last_side = 0i8;
    let mut slow = 0u32;
    for _ in 0..MAX_ITER {
        let width = tr - tl;
        if width <= tol {
            break;
        }
        // Leading guard: the earliest secant root.
        let mut lead = usize::MAX;
        let mut best = -1.0f64;
        for (i, (&glo, &ghi)) in b.lo.iter().zip(&b.hi).enumerate() {
            if armed[i] && ghi < 0.0 {
                let denom = glo - ghi;
                let ratio = if denom > 0.0 { -ghi / denom } else { 1.0 };
                if ratio > best {
                    best = ratio;
                    lead = i;
                }
            }
        }
        let mut tm = if lead == usize::MAX || slow >= 2 {
            0.5 * (tl + tr)
        } else {
            let fl = wl * b.lo[lead];
            let fr = wr * b.hi[lead];
            let denom = fl - fr;
            if denom > 0.0 && denom.is_finite() {
                tr + width * fr / denom
            } else {
                0.5 * (tl + tr)
            }
        };
        if slow >= 2 {
            slow = 0;
        }
        let margin = 0.5 * tol;
        if tm.is_nan() || tm < tl + margin {
            tm = tl + margin;
        }
        if tm > tr - margin {
            tm = tr - margin;
        }
        if !(tm > tl && tm < tr) {
            // The bracket is at the floating-point resolution.
            break;
        }
        eval(tm, &mut b.mid);
        let side = if crossed(&b.mid, armed) {
            tr = tm;
            std::mem::swap(&mut b.hi, &mut b.mid);
            1i8
        } else {
            tl = tm;
            std::mem::swap(&mut b.lo, &mut b.mid);
            -1i8
        };
        if side == last_side {
            // The same end moved twice: damp the value kept at the other end.
            if side > 0 {
                wl *= 0.5;
            } else {
                wr *= 0.5;
            }
        } else {
            wl = 1.0;
            wr = 1.0;
        }
        last_side = side;
        if tr - tl > 0.5 * width {
            slow += 1;
        } else {
            slow = 0;
        }
    }
    tr
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_earliest_of_two_roots() {
        // g0 = t - 0.7, reversed: valid while 0.7 - t >= 0; g1 valid while 0.3 - t >= 0.
        let armed = [true, true];
        let f = |t: f64, g: &mut [f64]| {
            g[0] = 0.7 - t;
            g[1] = (0.3 - t) * (1.0 + t * t);
        };
        let mut b = Bracket::new(2);
        let ev = f;
        ev(0.0, &mut b.lo);
        ev(1.0, &mut b.hi);
        let mut calls = 0;
        let tr = locate(0.0, 1.0, 1e-12, &mut b, &armed, |t, g| {
            calls += 1;
            f(t, g)
        });
        assert!(tr > 0.3 && tr - 0.3 <= 1e-12, "tr = {tr}");
        assert!(b.hi[1] < 0.0 && b.hi[0] > 0.0);
        assert!(calls < 40, "calls = {calls}");
    }

    #[test]
    fn root_at_left_end() {
        let armed = [true];
        let f = |t: f64, g: &mut [f64]| g[0] = -t;
        let mut b = Bracket::new(1);
        b.lo[0] = 0.0;
        b.hi[0] = -1.0;
        let tr = locate(0.0, 1.0, 1e-12, &mut b, &armed, f);
        assert!(tr > 0.0 && tr <= 1e-12);
    }
}
