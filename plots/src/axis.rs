//! Axis ranges and tick marks that work for any finite data.
//!
//! plotters' own tick search never returns for ranges near `f64::MAX` (a scope on
//! `Constant 1e308`, or a scope with `ylim` ±1e308): the span overflows to infinity. Here an
//! axis is computed in a scaled space instead: when the largest magnitude on the axis is
//! `>= 1e6` or `< 1e-3`, values are shown as `value / 10^exp` (`exp` a multiple of 3) and the
//! factor is written next to the axis title (`×1e306`), so spans never overflow and tick
//! steps are ordinary numbers. Ticks are "nice" steps (1, 2, 2.5 or 5 × 10^k), at most
//! [`MAX_TICKS`] of them, produced by counting (there is no open-ended loop). Non-finite
//! data never reaches an axis: callers pass the finite min/max or `None`.

/// Upper bound on the number of ticks of one axis, whatever the request.
pub const MAX_TICKS: usize = 50;

/// Largest magnitude shown without a power-of-ten factor (exclusive).
const SCALE_ABOVE: f64 = 1e6;
/// Smallest non-zero magnitude shown without a power-of-ten factor.
const SCALE_BELOW: f64 = 1e-3;
/// Relative span below which a range counts as a single value and is widened.
const DEGENERATE: f64 = 1e-9;

/// One axis: its visible range, power-of-ten factor and ticks.
///
/// All coordinates returned by [`Axis::range`] and [`Axis::ticks`] are *axis units*: a data
/// value `v` sits at `v / 10^exp` ([`Axis::to_axis`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    lo: f64,
    hi: f64,
    exp: i32,
    /// The division by `10^exp`, its powers of ten formed once (see [`PowerOfTen`]).
    scale: PowerOfTen,
    ticks: Vec<f64>,
    decimals: usize,
}

impl Axis {
    /// An axis for data spanning `data` (finite min and max, `None` when there is no finite
    /// sample) or for the user range `fixed` (used as given when both ends are finite and
    /// `lo < hi`). A data range is padded by 6 % each side when `pad`; a single value gets a
    /// range of ±10 % around it (±1 around 0). `n` is the wanted number of ticks (clamped to
    /// `2..=MAX_TICKS`; the result has between 1 and about `n + 1`).
    pub fn new(data: Option<(f64, f64)>, fixed: Option<(f64, f64)>, pad: bool, n: usize) -> Axis {
        let fixed = fixed.filter(|&(a, b)| a.is_finite() && b.is_finite() && a < b);
        let (lo, hi) = match (fixed, data) {
            (Some(r), _) => r,
            (None, Some((a, b))) if a.is_finite() && b.is_finite() && a <= b => (a, b),
            _ => (-1.0, 1.0),
        };
        let exp = scale_exponent(lo.abs().max(hi.abs()));
        let scale = PowerOfTen::new(exp);
        let (mut a, mut b) = (scale.divide(lo), scale.divide(hi));
        let mag = a.abs().max(b.abs());
        if b - a <= mag * DEGENERATE {
            let c = 0.5 * (a + b);
            let half = if c != 0.0 { c.abs() * 0.1 } else { 1.0 };
            (a, b) = (c - half, c + half);
        } else if pad && fixed.is_none() {
            let span = b - a;
            (a, b) = (a - 0.06 * span, b + 0.06 * span);
        }
        let (ticks, decimals) = ticks(a, b, n, 0.0);
        Axis {
            lo: a,
            hi: b,
            exp,
            scale,
            ticks,
            decimals,
        }
    }

    /// The same axis with a tick step of at least `min_step` axis units (1 gives one tick
    /// per integer on a mode or gear panel).
    pub fn with_min_step(mut self, min_step: f64, n: usize) -> Axis {
        (self.ticks, self.decimals) = ticks(self.lo, self.hi, n, min_step);
        self
    }

    /// Visible range in axis units.
    pub fn range(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }

    /// Tick positions in axis units, increasing, all inside [`Axis::range`].
    pub fn ticks(&self) -> &[f64] {
        &self.ticks
    }

    /// The power of ten data values are divided by (0 for ordinary magnitudes).
    pub fn exponent(&self) -> i32 {
        self.exp
    }

    /// A data value in axis units.
    pub fn to_axis(&self, v: f64) -> f64 {
        self.scale.divide(v)
    }

    /// The tick label of an axis-unit value: as many decimals as the tick step needs.
    pub fn label(&self, v: f64) -> String {
        let d = self.decimals;
        let s = format!("{v:.d$}");
        if s.trim_start_matches('-')
            .chars()
            .all(|c| c == '0' || c == '.')
        {
            // "-0", "-0.00": no negative zero on an axis.
            return s.trim_start_matches('-').to_string();
        }
        s
    }

    /// An axis title with the power-of-ten factor appended when there is one
    /// (`"rpm"` -> `"rpm ×1e6"`).
    pub fn title(&self, base: &str) -> String {
        match (self.exp, base.is_empty()) {
            (0, _) => base.to_string(),
            (e, true) => format!("×1e{e}"),
            (e, false) => format!("{base} ×1e{e}"),
        }
    }
}

/// The power of ten (a multiple of 3) to divide values of magnitude `mag` by.
fn scale_exponent(mag: f64) -> i32 {
    if !(mag.is_finite() && (mag >= SCALE_ABOVE || (mag > 0.0 && mag < SCALE_BELOW))) {
        return 0;
    }
    let e = mag.log10().floor() as i32;
    (e.div_euclid(3) * 3).clamp(-324, 306)
}

/// The division of data values by `10^exp`: by the power itself, or for `|exp| > 300` in
/// two steps, so neither power of ten overflows or underflows (`exp` may be as small as
/// -324, whose power is not representable). The powers are formed once per axis, not per
/// value (each is a text parsed, see [`pow10`]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct PowerOfTen {
    first: f64,
    second: Option<f64>,
}

impl PowerOfTen {
    fn new(exp: i32) -> PowerOfTen {
        if (-300..=300).contains(&exp) {
            PowerOfTen {
                first: pow10(exp),
                second: None,
            }
        } else {
            let half = exp / 2;
            PowerOfTen {
                first: pow10(half),
                second: Some(pow10(exp - half)),
            }
        }
    }

    /// `v / 10^exp`.
    #[inline]
    fn divide(self, v: f64) -> f64 {
        match self.second {
            None => v / self.first,
            Some(second) => v / self.first / second,
        }
    }
}

/// `10^e`, correctly rounded (`powi` multiplies and may be off by an ulp).
fn pow10(e: i32) -> f64 {
    format!("1e{e}").parse().unwrap_or(f64::NAN)
}

/// "Nice" ticks in `[a, b]` (finite, `a < b`) for about `n` intervals with a step of at
/// least `min_step`, and the decimals their labels need.
fn ticks(a: f64, b: f64, n: usize, min_step: f64) -> (Vec<f64>, usize) {
    let n = n.clamp(2, MAX_TICKS);
    let mut step = nice_step((b - a) / n as f64).max(min_step);
    // The count is bounded by construction; widen the step if rounding ever says otherwise.
    let (first, count) = loop {
        let first = (a / step).ceil();
        let last = (b / step).floor();
        let count = last - first + 1.0;
        if count <= MAX_TICKS as f64 || !step.is_finite() {
            break (first, count.clamp(0.0, MAX_TICKS as f64) as usize);
        }
        step *= 2.0;
    };
    let ticks: Vec<f64> = (0..count)
        .map(|k| {
            let v = (first + k as f64) * step;
            if v == 0.0 {
                0.0
            } else {
                v
            }
        })
        .filter(|v| *v >= a && *v <= b)
        .collect();
    // Decimals the step needs: 2.5 × 10^e needs one more than 10^e, when e <= 0.
    let e = step.log10().floor();
    let mantissa = step / 10f64.powf(e);
    let extra = usize::from((mantissa - 2.5).abs() < 1e-9 && e <= 0.0);
    let decimals = ((-e).max(0.0) as usize + extra).min(15);
    (ticks, decimals)
}

/// The nice number (1, 2, 2.5, 5 or 10 × 10^k) at or above `x > 0`.
fn nice_step(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    let f = x / p;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(ax: &Axis) {
        let (lo, hi) = ax.range();
        assert!(lo.is_finite() && hi.is_finite() && lo < hi, "{ax:?}");
        assert!((hi - lo).is_finite());
        assert!(
            !ax.ticks().is_empty() && ax.ticks().len() <= MAX_TICKS,
            "{ax:?}"
        );
        assert!(ax.ticks().windows(2).all(|w| w[0] < w[1]), "{ax:?}");
        assert!(ax.ticks().iter().all(|t| *t >= lo && *t <= hi), "{ax:?}");
        let labels: Vec<String> = ax.ticks().iter().map(|t| ax.label(*t)).collect();
        let mut dedup = labels.clone();
        dedup.dedup();
        assert_eq!(labels, dedup, "distinct tick labels");
    }

    /// Equal up to floating-point rounding of the power-of-ten division.
    fn close(a: (f64, f64), b: (f64, f64)) -> bool {
        (a.0 - b.0).abs() <= 1e-13 * b.0.abs().max(1.0)
            && (a.1 - b.1).abs() <= 1e-13 * b.1.abs().max(1.0)
    }

    #[test]
    fn axis_of_constant_1e308_is_finite_with_ticks() {
        let ax = Axis::new(Some((1e308, 1e308)), None, true, 8);
        check(&ax);
        assert_eq!(ax.exponent(), 306);
        // 1e308 / 1e306 = 100, widened by 10 % to 90..110.
        assert!(close(ax.range(), (90.0, 110.0)), "{ax:?}");
        let labels: Vec<String> = ax.ticks().iter().map(|t| ax.label(*t)).collect();
        assert_eq!(
            labels,
            ["90.0", "92.5", "95.0", "97.5", "100.0", "102.5", "105.0", "107.5", "110.0"]
        );
        assert_eq!(ax.title("m"), "m ×1e306");
    }

    /// A value on an axis is the value over the axis's power of ten, to the bit, the
    /// power formed once per axis: at every scale exponent, the two-step ones included.
    #[test]
    fn a_value_on_a_scaled_axis_is_the_value_over_its_power_of_ten_to_the_bit() {
        let power = |e: i32| -> f64 { format!("1e{e}").parse().unwrap() };
        let reference = |v: f64, exp: i32| {
            if (-300..=300).contains(&exp) {
                v / power(exp)
            } else {
                let half = exp / 2;
                v / power(half) / power(exp - half)
            }
        };
        let values = [
            0.0,
            -0.0,
            1.0,
            -3.7,
            123_456.789,
            9.87e-310,
            1.7e308,
            4.9e-324,
        ];
        for exp in (-324..=306).step_by(3) {
            let mag = 10f64.powi(exp) * 5.0;
            let ax = Axis::new(Some((-mag, mag)), None, false, 6);
            let e = ax.exponent();
            for &v in &values {
                for v in [v, v * 10f64.powi(e)] {
                    assert_eq!(
                        ax.to_axis(v).to_bits(),
                        reference(v, e).to_bits(),
                        "{v:e} at 1e{e}"
                    );
                }
            }
        }
    }

    #[test]
    fn axis_with_ylim_plus_minus_1e308_has_finite_span() {
        let ax = Axis::new(Some((0.0, 0.0)), Some((-1e308, 1e308)), true, 8);
        check(&ax);
        assert!(close(ax.range(), (-100.0, 100.0)), "{ax:?}");
        assert_eq!(ax.to_axis(0.0), 0.0);
        assert!(ax.ticks().contains(&0.0));
        let ax = Axis::new(None, Some((-f64::MAX, f64::MAX)), false, 14);
        check(&ax);
    }

    #[test]
    fn axis_of_any_finite_range_has_increasing_ticks_inside() {
        let vals = [
            -f64::MAX,
            -1e300,
            -1e6,
            -1.0,
            -1e-300,
            -f64::MIN_POSITIVE,
            -5e-324,
            0.0,
            5e-324,
            1e-300,
            1e-3,
            0.1,
            1.0,
            999_999.0,
            1e6,
            1e200,
            f64::MAX,
        ];
        for &a in &vals {
            for &b in &vals {
                if a <= b {
                    for pad in [false, true] {
                        check(&Axis::new(Some((a, b)), None, pad, 8));
                    }
                }
                check(&Axis::new(None, Some((a, b)), false, 5));
            }
        }
    }

    #[test]
    fn ordinary_ranges_get_ordinary_ticks() {
        let ax = Axis::new(Some((0.0, 4.0)), Some((0.0, 4.0)), true, 4);
        assert_eq!(ax.ticks(), &[0.0, 1.0, 2.0, 3.0, 4.0]);
        assert_eq!(ax.exponent(), 0);
        let ax = Axis::new(Some((0.0, 47.5)), None, false, 10);
        assert_eq!(ax.range(), (0.0, 47.5));
        assert_eq!(ax.ticks()[1], 5.0);
        assert_eq!(ax.label(-0.0), "0");
        let ax = Axis::new(Some((0.0, 1.0)), None, false, 4);
        assert_eq!(ax.ticks(), &[0.0, 0.25, 0.5, 0.75, 1.0]);
        assert_eq!(ax.label(0.25), "0.25");
        let ax = Axis::new(Some((-1.0, 2.0)), None, true, 14).with_min_step(1.0, 14);
        assert_eq!(ax.ticks(), &[-1.0, 0.0, 1.0, 2.0]);
        assert_eq!(ax.label(1.0), "1");
        // A step of 250 needs no decimals.
        let ax = Axis::new(None, Some((2000.0, 5000.0)), false, 12);
        assert_eq!(ax.label(ax.ticks()[1]), "2250");
    }

    #[test]
    fn no_data_gives_unit_range() {
        let ax = Axis::new(None, None, false, 5);
        assert_eq!(ax.range(), (-1.0, 1.0));
        // A reversed or non-finite fixed range is ignored.
        let ax = Axis::new(Some((2.0, 3.0)), Some((5.0, 1.0)), false, 5);
        assert_eq!(ax.range(), (2.0, 3.0));
        let ax = Axis::new(Some((2.0, 3.0)), Some((f64::NAN, 1.0)), false, 5);
        assert_eq!(ax.range(), (2.0, 3.0));
    }
}
