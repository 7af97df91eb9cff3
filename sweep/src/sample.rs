//! Sampling: distributions, Latin hypercube and plain random designs, and the study's own
//! random number generator.
//!
//! The generator is xoshiro256** seeded through SplitMix64, written here so that a seed
//! gives the same samples on every machine and with every version of the dependencies
//! (shards of one study computed on different machines must agree).
//!
//! A Latin hypercube of `n` points in `d` dimensions draws, for each dimension, a random
//! permutation `π` of the `n` strata and puts point `i` at `u = (π(i) + r) / n` with `r`
//! uniform in (0, 1): each stratum `[k/n, (k+1)/n)` of each dimension holds exactly one
//! point. `u` is then mapped through the inverse CDF of the parameter's distribution, so
//! the strata are equal-probability intervals of that distribution.

/// A distribution of a sampled parameter (values in SI units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    /// Uniform on `[a, b]`.
    Uniform { a: f64, b: f64 },
    /// Normal with mean `mu` and standard deviation `sigma`.
    Normal { mu: f64, sigma: f64 },
    /// `exp(N(mu, sigma))`: `mu` and `sigma` are those of the natural logarithm of the
    /// value in SI units.
    LogNormal { mu: f64, sigma: f64 },
}

impl Dist {
    /// The value at cumulative probability `u` in (0, 1).
    pub fn quantile(&self, u: f64) -> f64 {
        match *self {
            Dist::Uniform { a, b } => a + u * (b - a),
            Dist::Normal { mu, sigma } => mu + sigma * normal_quantile(u),
            Dist::LogNormal { mu, sigma } => (mu + sigma * normal_quantile(u)).exp(),
        }
    }
    /// The cumulative probability of `x`.
    pub fn cdf(&self, x: f64) -> f64 {
        match *self {
            Dist::Uniform { a, b } => ((x - a) / (b - a)).clamp(0.0, 1.0),
            Dist::Normal { mu, sigma } => normal_cdf((x - mu) / sigma),
            Dist::LogNormal { mu, sigma } => {
                if x <= 0.0 {
                    0.0
                } else {
                    normal_cdf((x.ln() - mu) / sigma)
                }
            }
        }
    }
}

/// How sampled points are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sampling {
    /// Latin hypercube (the default): every stratum of every dimension hit once.
    #[default]
    Lhs,
    /// Independent uniform draws (plain Monte Carlo).
    Random,
}

impl Sampling {
    /// `lhs` or `random`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Sampling::Lhs => "lhs",
            Sampling::Random => "random",
        }
    }
}

/// The standard normal CDF `Φ(z)`.
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// The standard normal quantile `Φ⁻¹(u)` for `u` in (0, 1): Acklam's rational
/// approximation (relative error 1.15e-9) refined by one Halley step on `Φ(z) − u`, which
/// brings it to about machine precision.
pub fn normal_quantile(u: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    if u <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if u >= 1.0 {
        return f64::INFINITY;
    }
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    let z = if u < 0.02425 {
        tail((-2.0 * u.ln()).sqrt())
    } else if u > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - u).ln()).sqrt())
    } else {
        let q = u - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    // One Halley step: e = Φ(z) − u, z -= t / (1 + z·t/2) with t = e·√(2π)·exp(z²/2).
    let e = normal_cdf(z) - u;
    let t = e * (2.0 * std::f64::consts::PI).sqrt() * (z * z / 2.0).exp();
    z - t / (1.0 + z * t / 2.0)
}

/// xoshiro256** (Blackman and Vigna), seeded by SplitMix64.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator from a seed (any value, 0 included).
    pub fn new(seed: u64) -> Rng {
        let mut z = seed;
        let mut next = || {
            z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut x = z;
            x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            x ^ (x >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }
    /// Uniform in the open interval (0, 1) (53-bit resolution, never 0 or 1).
    pub fn open01(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    /// Uniform integer in `0..n` (`n > 0`), without modulo bias.
    pub fn below(&mut self, n: usize) -> usize {
        let n = n as u64;
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return (x % n) as usize;
            }
        }
    }
}

/// Unit-cube points of a design: `n` rows of `d` coordinates in (0, 1), row-major.
pub fn unit_design(n: usize, d: usize, method: Sampling, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = Rng::new(seed);
    let mut pts = vec![vec![0.0; d]; n];
    match method {
        Sampling::Random => {
            for p in pts.iter_mut() {
                for u in p.iter_mut() {
                    *u = rng.open01();
                }
            }
        }
        Sampling::Lhs => {
            for j in 0..d {
                // Fisher–Yates permutation of the strata.
                let mut perm: Vec<usize> = (0..n).collect();
                for i in (1..n).rev() {
                    perm.swap(i, rng.below(i + 1));
                }
                for (p, k) in pts.iter_mut().zip(perm) {
                    p[j] = (k as f64 + rng.open01()) / n as f64;
                }
            }
        }
    }
    pts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_quantile_inverts_the_cdf_to_machine_precision() {
        for &u in &[1e-12, 1e-6, 0.01, 0.02425, 0.2, 0.5, 0.7, 0.975, 1.0 - 1e-9] {
            let z = normal_quantile(u);
            assert!(
                ((normal_cdf(z) - u) / u.min(1.0 - u)).abs() < 1e-12,
                "u = {u}"
            );
        }
        // Known quantiles.
        assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-14);
        assert_eq!(normal_quantile(0.5), 0.0);
    }

    #[test]
    fn rng_is_reproducible_and_open01_stays_inside() {
        let a: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..5).map(|_| r.next_u64()).collect()
        };
        let mut r = Rng::new(7);
        assert_eq!(a, (0..5).map(|_| r.next_u64()).collect::<Vec<_>>());
        let mut r = Rng::new(0);
        for _ in 0..10_000 {
            let u = r.open01();
            assert!(u > 0.0 && u < 1.0);
        }
    }
}
