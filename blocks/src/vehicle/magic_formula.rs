//! Pacejka's Magic Formula tire law (the MF 5.2 force equations without camber and turn
//! slip, every λ scaling factor 1) for `WheelCollider` with `"tire": "magic_formula"`.
//!
//! Slips (ISO, in the wheel's heading frame; `vx`, `vy` the contact point's velocity
//! along the heading and to the left, `ω·r − vx` the forward slip velocity):
//!
//! ```text
//! κ = (ω·r − vx) / max(|vx|, v_low),   α = atan(vy / max(|vx|, v_low))
//! ```
//!
//! With `dfz = (Fz − fz0)/fz0`:
//!
//! ```text
//! Fx0 = Dx·sin(Cx·atan(Bx·κx − Ex·(Bx·κx − atan(Bx·κx)))) + SVx
//!   κx = κ + phx1 + phx2·dfz,  Cx = pcx1,  Dx = (pdx1 + pdx2·dfz)·Fz
//!   Ex = (pex1 + pex2·dfz + pex3·dfz²)·(1 − pex4·sgn(κx))
//!   Kx = Fz·(pkx1 + pkx2·dfz)·exp(pkx3·dfz),  Bx = Kx/(Cx·Dx),  SVx = Fz·(pvx1 + pvx2·dfz)
//! Fy0 = Dy·sin(Cy·atan(By·αy − Ey·(By·αy − atan(By·αy)))) + SVy
//!   αy = α + phy1 + phy2·dfz,  Cy = pcy1,  Dy = (pdy1 + pdy2·dfz)·Fz
//!   Ey = (pey1 + pey2·dfz)·(1 − pey3·sgn(αy))
//!   Ky = pky1·fz0·sin(2·atan(Fz/(pky2·fz0))),  By = Ky/(Cy·Dy),  SVy = Fz·(pvy1 + pvy2·dfz)
//! Fx = Fx0·cos(rcx1·atan(Bxa·(α + rhx1))) / cos(rcx1·atan(Bxa·rhx1)),  Bxa = rbx1·cos(atan(rbx2·κ))
//! Fy = Fy0·cos(rcy1·atan(Byk·(κ + rhy1))) / cos(rcy1·atan(Byk·rhy1)),  Byk = rby1·cos(atan(rby2·(α − rby3)))
//! ```
//!
//! `mu_scale` multiplies `Dx` and `Dy` (the stiffness factors `Bx`, `By` are those of
//! `mu_scale = 1`, so the whole pure-slip curve scales, as `mu_scale` scales the friction
//! curves; `SVx`, `SVy` do not scale). Where `Cx·Dx` or `Cy·Dy` is 0 at some load the
//! curve is flat there (`B = 0`, force `SV`), not a division by zero; at `fz0` such
//! coefficients are refused when the block is built. The evaluation allocates nothing.

use drivelink_core::{ParamError, Params, RecordField};

/// A record field (unit `"1"` unless given).
const fn field(name: &'static str, unit: &'static str, default: f64) -> RecordField {
    RecordField {
        name,
        unit,
        default,
    }
}

/// The keys of `WheelCollider.mf`, in storage order. `fz0` has no default (NaN marks it
/// missing); `pcx1`, `pcy1`, `pdx1`, `pdy1` default to 1, `v_low` to 0.5 m/s, every other
/// coefficient to 0.
pub const FIELDS: &[RecordField] = &[
    field("fz0", "N", f64::NAN),
    field("v_low", "m/s", 0.5),
    field("pcx1", "1", 1.0),
    field("pdx1", "1", 1.0),
    field("pdx2", "1", 0.0),
    field("pex1", "1", 0.0),
    field("pex2", "1", 0.0),
    field("pex3", "1", 0.0),
    field("pex4", "1", 0.0),
    field("pkx1", "1", 0.0),
    field("pkx2", "1", 0.0),
    field("pkx3", "1", 0.0),
    field("phx1", "1", 0.0),
    field("phx2", "1", 0.0),
    field("pvx1", "1", 0.0),
    field("pvx2", "1", 0.0),
    field("rbx1", "1", 0.0),
    field("rbx2", "1", 0.0),
    field("rcx1", "1", 0.0),
    field("rhx1", "1", 0.0),
    field("pcy1", "1", 1.0),
    field("pdy1", "1", 1.0),
    field("pdy2", "1", 0.0),
    field("pey1", "1", 0.0),
    field("pey2", "1", 0.0),
    field("pey3", "1", 0.0),
    field("pky1", "1", 0.0),
    field("pky2", "1", 0.0),
    field("phy1", "1", 0.0),
    field("phy2", "1", 0.0),
    field("pvy1", "1", 0.0),
    field("pvy2", "1", 0.0),
    field("rby1", "1", 0.0),
    field("rby2", "1", 0.0),
    field("rby3", "1", 0.0),
    field("rcy1", "1", 0.0),
    field("rhy1", "1", 0.0),
];

/// The coefficients of one tire (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MagicFormula {
    fz0: f64,
    inv_fz0: f64,
    v_low: f64,
    pcx1: f64,
    pdx1: f64,
    pdx2: f64,
    pex1: f64,
    pex2: f64,
    pex3: f64,
    pex4: f64,
    pkx1: f64,
    pkx2: f64,
    pkx3: f64,
    phx1: f64,
    phx2: f64,
    pvx1: f64,
    pvx2: f64,
    rbx1: f64,
    rbx2: f64,
    rcx1: f64,
    rhx1: f64,
    pcy1: f64,
    pdy1: f64,
    pdy2: f64,
    pey1: f64,
    pey2: f64,
    pey3: f64,
    pky1: f64,
    pky2: f64,
    phy1: f64,
    phy2: f64,
    pvy1: f64,
    pvy2: f64,
    rby1: f64,
    rby2: f64,
    rby3: f64,
    rcy1: f64,
    rhy1: f64,
}

/// `sgn(x)`: −1, 0 or 1.
#[inline]
fn sgn(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// `D·sin(C·atan(B·x − E·(B·x − atan(B·x))))`, the Magic Formula's shape.
#[inline]
fn shape(b: f64, c: f64, d: f64, e: f64, x: f64) -> f64 {
    let bx = b * x;
    d * (c * (bx - e * (bx - bx.atan())).atan()).sin()
}

/// `B = K/(C·D)`, or 0 where `C·D` is 0 (a flat curve instead of a division by zero).
#[inline]
fn stiffness_factor(k: f64, c: f64, d: f64) -> f64 {
    let cd = c * d;
    if cd != 0.0 {
        k / cd
    } else {
        0.0
    }
}

/// The combined-slip weighting `cos(rc·atan(b·(s + rh)))/cos(rc·atan(b·rh))`.
#[inline]
fn weight(rc: f64, b: f64, s: f64, rh: f64) -> f64 {
    (rc * (b * (s + rh)).atan()).cos() / (rc * (b * rh).atan()).cos()
}

/// `cos(atan(x))` without the trigonometry.
#[inline]
fn cos_atan(x: f64) -> f64 {
    1.0 / (1.0 + x * x).sqrt()
}

impl MagicFormula {
    /// The coefficients of record parameter `name` (resolved in [`FIELDS`] order), checked:
    /// `fz0` given, finite and > 0, `v_low` > 0, and `Bx`, `By` finite at `fz0`. Errors
    /// name the key (`mf.pdx1`).
    pub fn from_params(p: &Params, name: &str) -> Result<MagicFormula, ParamError> {
        let v = p.vector(name)?;
        let get = |key: &str| -> f64 {
            FIELDS
                .iter()
                .position(|f| f.name == key)
                .and_then(|i| v.get(i).copied())
                .unwrap_or(f64::NAN)
        };
        let bad = |key: &str, m: String| p.invalid(&format!("{name}.{key}"), m);
        let fz0 = get("fz0");
        if fz0.is_nan() {
            return Err(bad(
                "fz0",
                "is required: the nominal load (FNOMIN of a .tir file), N".into(),
            ));
        }
        if !(fz0 > 0.0 && fz0.is_finite()) {
            return Err(bad("fz0", format!("must be a finite load > 0, got {fz0}")));
        }
        let v_low = get("v_low");
        if !(v_low > 0.0 && v_low.is_finite()) {
            return Err(bad(
                "v_low",
                format!("must be a finite speed > 0, got {v_low}"),
            ));
        }
        for (f, x) in FIELDS.iter().zip(v) {
            if !x.is_finite() {
                return Err(bad(f.name, format!("must be finite, got {x}")));
            }
        }
        let mf = MagicFormula {
            fz0,
            inv_fz0: 1.0 / fz0,
            v_low,
            pcx1: get("pcx1"),
            pdx1: get("pdx1"),
            pdx2: get("pdx2"),
            pex1: get("pex1"),
            pex2: get("pex2"),
            pex3: get("pex3"),
            pex4: get("pex4"),
            pkx1: get("pkx1"),
            pkx2: get("pkx2"),
            pkx3: get("pkx3"),
            phx1: get("phx1"),
            phx2: get("phx2"),
            pvx1: get("pvx1"),
            pvx2: get("pvx2"),
            rbx1: get("rbx1"),
            rbx2: get("rbx2"),
            rcx1: get("rcx1"),
            rhx1: get("rhx1"),
            pcy1: get("pcy1"),
            pdy1: get("pdy1"),
            pdy2: get("pdy2"),
            pey1: get("pey1"),
            pey2: get("pey2"),
            pey3: get("pey3"),
            pky1: get("pky1"),
            pky2: get("pky2"),
            phy1: get("phy1"),
            phy2: get("phy2"),
            pvy1: get("pvy1"),
            pvy2: get("pvy2"),
            rby1: get("rby1"),
            rby2: get("rby2"),
            rby3: get("rby3"),
            rcy1: get("rcy1"),
            rhy1: get("rhy1"),
        };
        mf.check_at_nominal_load().map_err(|(key, m)| bad(key, m))?;
        Ok(mf)
    }

    /// `Bx` and `By` finite at `Fz = fz0` (`dfz = 0`), else the offending key and why.
    fn check_at_nominal_load(&self) -> Result<(), (&'static str, String)> {
        let zero_at_fz0 = |key: &'static str, what: &str, b: &str| {
            Err((
                key,
                format!("= 0 makes {what} zero at the nominal load fz0, so {b} is infinite (give it, typically about 1 or more)"),
            ))
        };
        if self.pcx1 == 0.0 {
            return zero_at_fz0("pcx1", "Cx = pcx1", "Bx = Kx/(Cx·Dx)");
        }
        if self.pdx1 == 0.0 {
            return zero_at_fz0("pdx1", "Dx = (pdx1 + pdx2·dfz)·Fz", "Bx = Kx/(Cx·Dx)");
        }
        if self.pcy1 == 0.0 {
            return zero_at_fz0("pcy1", "Cy = pcy1", "By = Ky/(Cy·Dy)");
        }
        if self.pdy1 == 0.0 {
            return zero_at_fz0("pdy1", "Dy = (pdy1 + pdy2·dfz)·Fz", "By = Ky/(Cy·Dy)");
        }
        if self.pky2 == 0.0 {
            return Err((
                "pky2",
                "= 0 divides by zero in Ky = pky1·fz0·sin(2·atan(Fz/(pky2·fz0))): give pky2 (the load at the cornering stiffness's maximum over fz0, typically 1.5 to 3)".into(),
            ));
        }
        let bx = self.pkx1 / (self.pcx1 * self.pdx1);
        let ky = self.pky1 * (2.0 * (1.0 / self.pky2).atan()).sin();
        let by = ky / (self.pcy1 * self.pdy1);
        if !bx.is_finite() {
            return Err((
                "pkx1",
                format!("gives Bx = pkx1/(pcx1·pdx1) = {bx} at fz0; expected a finite number"),
            ));
        }
        if !by.is_finite() {
            return Err((
                "pky1",
                format!("gives By = Ky/(Cy·Dy) = {by}·fz0/fz0 at fz0; expected a finite number"),
            ));
        }
        Ok(())
    }

    /// The nominal load `fz0`, N.
    pub fn fz0(&self) -> f64 {
        self.fz0
    }

    /// The speed below which the slips are taken over `v_low` instead of `|vx|`, m/s.
    pub fn v_low(&self) -> f64 {
        self.v_low
    }

    /// `(κ, α)` from the forward slip velocity `sx = ω·r − vx`, the heading speed `vx`
    /// and the lateral speed `vy` of the contact point.
    #[inline]
    pub fn slips(&self, sx: f64, vx: f64, vy: f64) -> (f64, f64) {
        let inv = 1.0 / vx.abs().max(self.v_low);
        (sx * inv, (vy * inv).atan())
    }

    /// The factor on the shifts `SH`, `SV` at the contact speed `|vx|` = `speed`:
    /// `(1 − cos(π·speed/v_low))/2` below `v_low` (0 at standstill), 1 above.
    #[inline]
    pub fn shift_factor(&self, speed: f64) -> f64 {
        if speed < self.v_low {
            0.5 * (1.0 - (std::f64::consts::PI * speed / self.v_low).cos())
        } else {
            1.0
        }
    }

    /// `(Fx, Fy)` at slips `(κ, α)` and normal load `fz` (N, ≥ 0; no force at 0), with the
    /// friction multiplier `mu` on `Dx`, `Dy`, for a contact moving at `speed = |vx|`
    /// (below `v_low` the shifts fade out, [`Self::shift_factor`]).
    #[inline]
    pub fn forces(&self, kappa: f64, alpha: f64, fz: f64, mu: f64, speed: f64) -> (f64, f64) {
        if !(fz > 0.0) {
            return (0.0, 0.0);
        }
        let dfz = (fz - self.fz0) * self.inv_fz0;
        let r = self.shift_factor(speed);
        let fx0 = self.pure_fx(kappa, fz, dfz, mu, r);
        let fy0 = self.pure_fy(alpha, fz, dfz, mu, r);
        let gx = if self.rbx1 != 0.0 {
            let bxa = self.rbx1 * cos_atan(self.rbx2 * kappa);
            weight(self.rcx1, bxa, alpha, self.rhx1)
        } else {
            1.0
        };
        let gy = if self.rby1 != 0.0 {
            let byk = self.rby1 * cos_atan(self.rby2 * (alpha - self.rby3));
            weight(self.rcy1, byk, kappa, self.rhy1)
        } else {
            1.0
        };
        (fx0 * gx, fy0 * gy)
    }

    /// Pure longitudinal force `Fx0` at slip `kappa`, load `fz`, `dfz`, the shifts times
    /// `r`.
    #[inline]
    fn pure_fx(&self, kappa: f64, fz: f64, dfz: f64, mu: f64, r: f64) -> f64 {
        let kx = kappa + r * (self.phx1 + self.phx2 * dfz);
        let c = self.pcx1;
        let d = (self.pdx1 + self.pdx2 * dfz) * fz;
        let e = (self.pex1 + self.pex2 * dfz + self.pex3 * dfz * dfz) * (1.0 - self.pex4 * sgn(kx));
        let k = fz * (self.pkx1 + self.pkx2 * dfz) * (self.pkx3 * dfz).exp();
        let b = stiffness_factor(k, c, d);
        shape(b, c, mu * d, e, kx) + r * fz * (self.pvx1 + self.pvx2 * dfz)
    }

    /// Pure lateral force `Fy0` at slip angle `alpha`, load `fz`, `dfz`, the shifts times
    /// `r`.
    #[inline]
    fn pure_fy(&self, alpha: f64, fz: f64, dfz: f64, mu: f64, r: f64) -> f64 {
        let ay = alpha + r * (self.phy1 + self.phy2 * dfz);
        let c = self.pcy1;
        let d = (self.pdy1 + self.pdy2 * dfz) * fz;
        let e = (self.pey1 + self.pey2 * dfz) * (1.0 - self.pey3 * sgn(ay));
        let k = self.pky1 * self.fz0 * (2.0 * (fz / (self.pky2 * self.fz0)).atan()).sin();
        let b = stiffness_factor(k, c, d);
        shape(b, c, mu * d, e, ay) + r * fz * (self.pvy1 + self.pvy2 * dfz)
    }

    /// The braking slip `κ ≤ 0` of the largest braking force of the pure-slip curve at
    /// `fz0` (searched on `[−1, 0]`; −1 when the curve keeps rising to a locked wheel).
    pub fn braking_peak_kappa(&self) -> f64 {
        let f = |k: f64| self.pure_fx(k, self.fz0, 0.0, 1.0, 1.0);
        // Scan, then refine the best bracket by golden-section search.
        const N: usize = 200;
        let mut best = (0usize, f64::INFINITY);
        for i in 0..=N {
            let x = -(i as f64) / N as f64;
            let y = f(x);
            if y < best.1 {
                best = (i, y);
            }
        }
        let step = 1.0 / N as f64;
        let centre = -(best.0 as f64) * step;
        let (mut a, mut b) = ((centre - step).max(-1.0), (centre + step).min(0.0));
        let g = 0.5 * (5f64.sqrt() - 1.0);
        for _ in 0..80 {
            let (x1, x2) = (b - g * (b - a), a + g * (b - a));
            if f(x1) < f(x2) {
                b = x2;
            } else {
                a = x1;
            }
        }
        let k = 0.5 * (a + b);
        if f(k) <= best.1 {
            k
        } else {
            centre
        }
    }
}
