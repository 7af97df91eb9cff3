//! The PI step-size controller of the explicit Runge–Kutta methods (Hairer, Nørsett and
//! Wanner, *Solving ODEs I*, section II.4, and DOPRI5's `stabilized step size control`):
//! the next step is `h / fac` with `fac = err^α · err_old^(−β) / safety`, kept between the
//! method's smallest and largest step ratios; after a rejected step the next accepted one
//! may not grow. A plain value: a run's state is cloned with it (a saved FMU state).

/// The controller's parameters and its history (the last accepted error and whether the
/// last attempt was rejected).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PiController {
    alpha: f64,
    beta: f64,
    /// `1 / fac_min`: the largest shrink factor.
    facc1: f64,
    /// `1 / fac_max`: the smallest shrink factor (the largest growth).
    facc2: f64,
    /// The error norm of the last accepted step (at least 1e-4).
    fac_old: f64,
    h_max: f64,
    reject: bool,
    safety: f64,
}

/// The smallest error norm the history keeps.
const ERR_FLOOR: f64 = 1.0e-4;

impl PiController {
    /// A controller with exponents `alpha`, `beta`, step ratios in `[fac_min, fac_max]`,
    /// steps at most `h_max` and the safety factor `safety`, with no history.
    pub(crate) fn new(
        alpha: f64,
        beta: f64,
        fac_max: f64,
        fac_min: f64,
        h_max: f64,
        safety: f64,
    ) -> Self {
        PiController {
            alpha,
            beta,
            facc1: 1.0 / fac_min,
            facc2: 1.0 / fac_max,
            fac_old: ERR_FLOOR,
            h_max: h_max.abs(),
            reject: false,
            safety,
        }
    }

    /// Judge a step of size `h` with error norm `err` (accepted when `err <= 1`) and
    /// propose the next step size into `h_new`.
    pub(crate) fn accept(&mut self, err: f64, h: f64, h_new: &mut f64) -> bool {
        let fac11 = err.powf(self.alpha);
        let fac = fac11 * self.fac_old.powf(-self.beta);
        let fac = self.facc2.max(self.facc1.min(fac / self.safety));
        *h_new = h / fac;
        if err <= 1.0 {
            self.fac_old = err.max(ERR_FLOOR);
            if h_new.abs() > self.h_max {
                *h_new = self.h_max;
            }
            if self.reject {
                *h_new = h_new.abs().min(h.abs());
            }
            self.reject = false;
            true
        } else {
            *h_new = h / self.facc1.min(fac11 / self.safety);
            self.reject = true;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_grow_and_shrink_within_the_method_s_ratios() {
        // DOPRI5's parameters: a tiny error grows the step tenfold at most, a huge one
        // shrinks it fivefold at most; after a rejection the next step does not grow.
        let mut c = PiController::new(0.17, 0.04, 10.0, 0.2, 1.0, 0.9);
        let mut h = 0.0;
        assert!(c.accept(1e-30, 0.01, &mut h));
        assert!((h - 0.1).abs() < 1e-15, "{h}");
        assert!(!c.accept(1e30, 0.01, &mut h));
        assert!((h - 0.002).abs() < 1e-15, "{h}");
        assert!(c.accept(1e-30, 0.002, &mut h));
        assert_eq!(h, 0.002, "no growth right after a rejection");
        // The largest step caps the proposal.
        let mut c = PiController::new(0.17, 0.04, 10.0, 0.2, 0.05, 0.9);
        assert!(c.accept(1e-30, 0.01, &mut h));
        assert_eq!(h, 0.05);
        // An error of exactly the tolerance at a steady history: h·safety·err^(−α)·err_old^β.
        let mut c = PiController::new(0.17, 0.04, 10.0, 0.2, 1.0, 0.9);
        assert!(c.accept(1.0, 0.01, &mut h));
        let expect = 0.01 / (1.0f64 * 1e-4f64.powf(-0.04) / 0.9);
        assert_eq!(h, expect);
    }
}
