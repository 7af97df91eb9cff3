//! Shared helpers of the block library: registration of primitive blocks, table
//! interpolation, two-state modes switched with hysteresis at located events, and the
//! equations shared by elements acting between two flanges ([`FlangePair`]).

use drivelink_core::{
    Block, BlockDecl, Cx, Forces, FrictionDecl, HeatFlows, MechDecl, ParamError, Params, PortDecl,
    Row, ThermalDecl, VarDecl, VarSource,
};

/// The constructor of a primitive block from resolved parameters.
pub type Build = fn(&Params) -> Result<Box<dyn Block>, ParamError>;

/// Two rotational flanges `a`, `b` (port indices) of an element that acts between them:
/// the relative motion of `b` with respect to `a` and one torque between the two, written
/// once for every such element (Modelica's `PartialCompliant`: `phi_rel = flange_b.phi −
/// flange_a.phi`, `flange_b.tau = tau`, `flange_a.tau = −tau`; and, with `a` the support,
/// `PartialElementaryOneFlangeAndSupport2`).
///
/// Users: `SpringDamper` / `Damper`, `ElastoBacklash`, `Backlash`, `Clutch`,
/// `OneWayClutch`, `DogClutch` / `Synchronizer` ([`FlangePair::AB`]), `TorqueSource` and
/// `EddyCurrentBrake` (support and flange).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlangePair {
    /// The reference flange (`flange_a`, or the support).
    pub a: usize,
    /// The flange whose motion is measured relative to `a` (`flange_b`, or the flange).
    pub b: usize,
}

impl FlangePair {
    /// `flange_a` = port 0, `flange_b` = port 1.
    pub const AB: FlangePair = FlangePair { a: 0, b: 1 };

    /// `b` relative to `a`.
    pub const fn new(a: usize, b: usize) -> Self {
        FlangePair { a, b }
    }
    /// `phi_rel = phi_b − phi_a`.
    #[inline]
    pub fn phi_rel(self, cx: &Cx) -> f64 {
        cx.q(self.b) - cx.q(self.a)
    }
    /// `w_rel = w_b − w_a`.
    #[inline]
    pub fn w_rel(self, cx: &Cx) -> f64 {
        cx.v(self.b) - cx.v(self.a)
    }
    /// The row `w_b − w_a` (a friction joint or contact between the flanges).
    pub fn row(self) -> Row {
        Row(vec![(self.a, -1.0), (self.b, 1.0)])
    }
    /// A friction joint on `w_b − w_a`, labelled with the block's name in the audit.
    pub fn joint(self) -> FrictionDecl {
        FrictionDecl::new(self.row(), "")
    }
    /// A compliant element's torque `tau` (MSL `tau`, the cut torque at flange_b: positive
    /// when the element pulls the flanges together, like a stretched spring): `tau`
    /// accelerates flange_a, `−tau` flange_b (added in this order).
    #[inline]
    pub fn apply_compliant(self, f: &mut Forces, tau: f64) {
        f.add(self.a, tau);
        f.add(self.b, -tau);
    }
    /// A torque `tau` driving `b` relative to `a` (a source or brake on a flange, the
    /// reaction on its support): `tau` on `b`, `−tau` on `a` (added in this order).
    #[inline]
    pub fn apply_drive(self, f: &mut Forces, tau: f64) {
        f.add(self.b, tau);
        f.add(self.a, -tau);
    }
}

/// Port index of the optional loss heat port of a compliant element ([`compliant_ports`]).
pub const COMPLIANT_HEAT: usize = 2;

/// Ports of a compliant element: `flange_a`, `flange_b` ([`FlangePair::AB`]) and the
/// optional `heat` port receiving its loss power ([`COMPLIANT_HEAT`]).
pub fn compliant_ports() -> Vec<PortDecl> {
    vec![
        PortDecl::rot("flange_a"),
        PortDecl::rot("flange_b"),
        PortDecl::loss_heat("heat"),
    ]
}

/// The law of a compliant two-flange element: Modelica's `tau` of `PartialCompliant` (the
/// cut torque at flange_b: `+tau` acts on flange_a, `−tau` on flange_b, so `−tau` is the
/// torque transmitted from flange_a to flange_b) as a function of `phi_rel = phi_b − phi_a`
/// and `w_rel = w_b − w_a`, the energy the element stores and the power it dissipates.
/// [`Compliant`] makes it a block; the element itself states only its law.
pub trait CompliantLaw: Send + Sync + 'static {
    /// Modelica's `tau`, N·m.
    fn tau(&self, phi_rel: f64, w_rel: f64) -> f64;
    /// Stored energy, J.
    fn stored(&self, _phi_rel: f64) -> f64 {
        0.0
    }
    /// Dissipated power (>= 0), W, delivered to the optional heat port.
    fn loss(&self, _phi_rel: f64, _w_rel: f64) -> f64 {
        0.0
    }
}

/// A compliant element between `flange_a` and `flange_b` with its law `L` (Modelica's
/// `PartialCompliant` with a heat port): ports [`compliant_ports`], variables `tau`,
/// `phi_rel`, `w_rel`, the torque pair of [`FlangePair::AB`], the law's stored energy in the
/// audit and its loss on the heat port.
pub struct Compliant<L>(pub L);

impl<L: CompliantLaw> Compliant<L> {
    fn tau(&self, cx: &Cx) -> f64 {
        self.0
            .tau(FlangePair::AB.phi_rel(cx), FlangePair::AB.w_rel(cx))
    }
}

impl<L: CompliantLaw> Block for Compliant<L> {
    fn declare(&self) -> BlockDecl {
        let [phi, w] = relative_vars(1, 2);
        let tau = VarDecl::new("tau", VarSource::Custom(0), "N*m")
            .doc("torque transmitted from flange_a to flange_b");
        BlockDecl {
            ports: compliant_ports(),
            variables: vec![tau, phi, w],
            mech: force_mech(),
            thermal: loss_heat(),
            ..BlockDecl::default()
        }
    }
    fn forces(&self, cx: &Cx, f: &mut Forces) {
        // The element pulls b back and a forward: it transmits −tau to b.
        FlangePair::AB.apply_compliant(f, self.tau(cx));
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        match i {
            0 => -self.tau(cx),
            1 => FlangePair::AB.phi_rel(cx),
            _ => FlangePair::AB.w_rel(cx),
        }
    }
    fn potential_energy(&self, cx: &Cx) -> f64 {
        self.0.stored(FlangePair::AB.phi_rel(cx))
    }
    fn heat_flows(&self, cx: &Cx, q: &mut HeatFlows) {
        let pair = FlangePair::AB;
        q.add(
            COMPLIANT_HEAT,
            self.0.loss(pair.phi_rel(cx), pair.w_rel(cx)),
        );
    }
}

/// The mechanical declaration of a block acting through `Block::forces` only.
pub fn force_mech() -> MechDecl {
    MechDecl {
        has_forces: true,
        ..Default::default()
    }
}

/// The thermal declaration of a block that delivers loss heat to its (optional) heat port.
pub fn loss_heat() -> ThermalDecl {
    ThermalDecl {
        has_heat_flows: true,
        ..Default::default()
    }
}

/// The variables `phi_rel` (`phi_b − phi_a`) and `w_rel` (`w_b − w_a`) of a two-flange
/// element, computed as `Custom(phi)` and `Custom(w)` (see [`FlangePair`]).
pub fn relative_vars(phi: usize, w: usize) -> [VarDecl; 2] {
    [
        VarDecl::new("phi_rel", VarSource::Custom(phi), "rad").doc("phi_b − phi_a"),
        VarDecl::new("w_rel", VarSource::Custom(w), "rad/s").doc("w_b − w_a"),
    ]
}

/// A two-state discrete mode chosen by the sign of a continuous quantity `x` (on while
/// `x > 0`), with a hysteresis band: an on mode switches off once `x < −band/2`, an off mode
/// on once `x > band/2`. At the first event of a run (`fresh`) the sign alone decides
/// (`x = 0` counts as on). Pair it with [`hysteresis_guard`]: the guard's roots (`x = ∓band`)
/// lie beyond the switching thresholds, so a located crossing always switches and an event
/// elsewhere switches only after a genuine sign change: the mode cannot flip every step.
pub fn hysteresis_mode(on: bool, fresh: bool, x: f64, band: f64) -> bool {
    if fresh || x.is_nan() {
        return !(x < 0.0);
    }
    if on {
        !(x < -0.5 * band)
    } else {
        x > 0.5 * band
    }
}

/// The guard (valid while `>= 0`) that locates the switch of [`hysteresis_mode`].
pub fn hysteresis_guard(on: bool, x: f64, band: f64) -> f64 {
    if on {
        x + band
    } else {
        band - x
    }
}

/// A piecewise-linear table `y(x)` with a strictly increasing axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Table1D {
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    /// Extrapolate linearly outside the axis (else hold the end values).
    pub linear_extrapolation: bool,
}

impl Table1D {
    pub fn new(x: Vec<f64>, y: Vec<f64>, linear_extrapolation: bool) -> Self {
        Table1D {
            x,
            y,
            linear_extrapolation,
        }
    }

    /// Interpolate at `u`. Allocation-free. Inlined for the one-point table (a constant,
    /// as a clutch's single friction coefficient), which is then a load.
    #[inline]
    pub fn eval(&self, u: f64) -> f64 {
        if self.x.len() == 1 {
            return self.y[0];
        }
        self.eval_in(self.segment(u), u)
    }

    /// Interpolate at `u` in segment `k` (from [`Table1D::segment`] of `u`, here or on a
    /// table with the same axis: two tables on one axis search it once).
    pub fn eval_in(&self, k: usize, u: f64) -> f64 {
        let n = self.x.len();
        if n == 1 {
            return self.y[0];
        }
        let (x0, x1, y0, y1) = (self.x[k], self.x[k + 1], self.y[k], self.y[k + 1]);
        if !self.linear_extrapolation {
            if u <= self.x[0] {
                return self.y[0];
            }
            if u >= self.x[n - 1] {
                return self.y[n - 1];
            }
        }
        y0 + (y1 - y0) * (u - x0) / (x1 - x0)
    }

    /// Index `k` of the segment `[x_k, x_{k+1}]` containing `u` (clamped to the ends).
    pub fn segment(&self, u: f64) -> usize {
        let n = self.x.len();
        if n < 2 {
            return 0;
        }
        // The number of breakpoints at or below `u`: counted without branches on short
        // axes (the usual 5 to 20 points, where a binary search mispredicts), searched
        // on long ones. Both give the same count on a strictly increasing axis.
        let k = if n <= SHORT_AXIS {
            self.x.iter().map(|&xi| usize::from(xi <= u)).sum()
        } else {
            self.x.partition_point(|&xi| xi <= u)
        };
        k.saturating_sub(1).min(n - 2)
    }
}

/// Axes up to this length are searched by counting (see [`Table1D::segment`]).
const SHORT_AXIS: usize = 32;

/// A bilinear table `z(x, y)` on strictly increasing axes `x` (rows of `z`) and `y`
/// (columns). Outside the axes it holds the edge values or extends the edge cells
/// linearly. An axis of one point makes the table constant along it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table2D {
    x: Table1D,
    y: Table1D,
    /// `z[i][j]` at `(x[i], y[j])`.
    z: Vec<Vec<f64>>,
}

impl Table2D {
    /// Read and check a table from parameters `x_name`, `y_name` (strictly increasing
    /// axes) and `z_name` (`len(x)` rows of `len(y)` finite values). Errors name the
    /// offending parameter.
    pub fn from_params(
        p: &Params,
        x_name: &str,
        y_name: &str,
        z_name: &str,
        linear: bool,
    ) -> Result<Table2D, ParamError> {
        let axis = |name: &str| -> Result<Vec<f64>, ParamError> {
            let v = p.vector(name)?;
            if v.is_empty() {
                return Err(p.invalid(name, "is empty; expected at least one breakpoint"));
            }
            if let Some(bad) = v.iter().find(|x| !x.is_finite()) {
                return Err(p.invalid(name, format!("has a non-finite breakpoint {bad}")));
            }
            if let Some(k) = v.windows(2).position(|w| w[1] <= w[0]) {
                return Err(p.invalid(
                    name,
                    format!(
                        "must be strictly increasing, but entry {} is {} after {}",
                        k + 1,
                        v[k + 1],
                        v[k]
                    ),
                ));
            }
            Ok(v.to_vec())
        };
        let (x, y) = (axis(x_name)?, axis(y_name)?);
        let z = p.table(z_name)?;
        if z.len() != x.len() {
            return Err(p.invalid(
                z_name,
                format!(
                    "has {} rows; expected one per {x_name} breakpoint ({})",
                    z.len(),
                    x.len()
                ),
            ));
        }
        for (i, row) in z.iter().enumerate() {
            if row.len() != y.len() {
                return Err(p.invalid(
                    z_name,
                    format!(
                        "row {i} has {} entries; expected one per {y_name} breakpoint ({})",
                        row.len(),
                        y.len()
                    ),
                ));
            }
            if let Some(bad) = row.iter().find(|v| !v.is_finite()) {
                return Err(p.invalid(z_name, format!("row {i} has a non-finite entry {bad}")));
            }
        }
        let idx = |n: usize| (0..n).map(|k| k as f64).collect::<Vec<f64>>();
        Ok(Table2D {
            x: Table1D::new(x.clone(), idx(x.len()), linear),
            y: Table1D::new(y.clone(), idx(y.len()), linear),
            z: z.to_vec(),
        })
    }

    /// The segment of `axis` containing `u` and the position in it (0..1 inside, beyond
    /// when extrapolating linearly, clamped when holding).
    fn locate(axis: &Table1D, u: f64) -> (usize, f64) {
        let n = axis.x.len();
        if n < 2 {
            return (0, 0.0);
        }
        let k = axis.segment(u);
        let s = (u - axis.x[k]) / (axis.x[k + 1] - axis.x[k]);
        let s = if axis.linear_extrapolation {
            s
        } else {
            s.clamp(0.0, 1.0)
        };
        (k, s)
    }

    /// The position in the cell of `axis` given by `mode` (the number of breakpoints
    /// `<= u` when the mode was set, `0..=n`): the edge cells extend outwards, so within
    /// one mode the value is one bilinear piece even when `u` has moved on.
    fn locate_in(axis: &Table1D, u: f64, mode: usize) -> (usize, f64) {
        let n = axis.x.len();
        if n < 2 {
            return (0, 0.0);
        }
        let k = mode.saturating_sub(1).min(n - 2);
        let s = (u - axis.x[k]) / (axis.x[k + 1] - axis.x[k]);
        let s = if axis.linear_extrapolation {
            s
        } else if mode == 0 {
            0.0
        } else if mode >= n {
            1.0
        } else {
            s
        };
        (k, s)
    }

    /// The cell modes of `(u, v)`: per axis, the number of breakpoints `<= u`.
    pub fn cell(&self, u: f64, v: f64) -> (usize, usize) {
        (
            self.x.x.partition_point(|&xi| xi <= u),
            self.y.x.partition_point(|&yi| yi <= v),
        )
    }

    /// The guards of cell `mode` at `(u, v)`: `[u − x_lo, x_hi − u, v − y_lo, y_hi − v]`
    /// (1 where the cell is open on that side), all `>= 0` while `(u, v)` is in the cell.
    pub fn cell_guards(&self, u: f64, v: f64, mode: (usize, usize), g: &mut [f64]) {
        let side = |axis: &[f64], w: f64, m: usize| {
            let lo = if m == 0 { 1.0 } else { w - axis[m - 1] };
            let hi = if m >= axis.len() { 1.0 } else { axis[m] - w };
            (lo, hi)
        };
        (g[0], g[1]) = side(&self.x.x, u, mode.0);
        (g[2], g[3]) = side(&self.y.x, v, mode.1);
    }

    /// Bilinear interpolation at `(u, v)` on the piece of cell `mode` (equal to
    /// [`Table2D::eval`] while `(u, v)` is in that cell). Allocation-free.
    pub fn eval_in(&self, u: f64, v: f64, mode: (usize, usize)) -> f64 {
        let (i, s) = Self::locate_in(&self.x, u, mode.0);
        let (j, t) = Self::locate_in(&self.y, v, mode.1);
        self.blend(i, s, j, t)
    }

    /// Bilinear interpolation at `(u, v)`. Allocation-free.
    pub fn eval(&self, u: f64, v: f64) -> f64 {
        let (i, s) = Self::locate(&self.x, u);
        let (j, t) = Self::locate(&self.y, v);
        self.blend(i, s, j, t)
    }

    /// The value at position `(s, t)` of cell `(i, j)`.
    fn blend(&self, i: usize, s: f64, j: usize, t: f64) -> f64 {
        let at = |i: usize, j: usize| self.z[i.min(self.z.len() - 1)][j.min(self.z[0].len() - 1)];
        let (z00, z01, z10, z11) = (at(i, j), at(i, j + 1), at(i + 1, j), at(i + 1, j + 1));
        let a = z00 + t * (z01 - z00);
        let b = z10 + t * (z11 - z10);
        a + s * (b - a)
    }
}

/// The last value a pure function of a few numbers gave, kept by a block between calls
/// that share no mutable state (`outputs`, `forces`, `guards`, `vars` of one evaluation,
/// the recording of the same point): the key is the bits of everything the value depends
/// on, so a hit returns what the call would compute, to the bit. A block holds one per
/// costly value (a wheel's ray on a road, a path follower's projections). A copy of a
/// block starts with nothing kept.
#[derive(Debug)]
pub struct LastValue<const N: usize, T>(std::sync::Mutex<Option<([u64; N], T)>>);

impl<const N: usize, T> Default for LastValue<N, T> {
    fn default() -> Self {
        LastValue(std::sync::Mutex::new(None))
    }
}

impl<const N: usize, T> Clone for LastValue<N, T> {
    fn clone(&self) -> Self {
        LastValue::default()
    }
}

impl<const N: usize, T: Copy> LastValue<N, T> {
    /// The value for `key` (the bits of the numbers it depends on), computed by `f`
    /// unless it is the last one.
    pub fn get_or(&self, key: [u64; N], f: impl FnOnce() -> T) -> T {
        let Ok(mut last) = self.0.lock() else {
            return f();
        };
        if let Some((k, v)) = *last {
            // Compared as words, folded (`==` on the arrays calls `memcmp`).
            if k.iter().zip(&key).fold(0, |d, (a, b)| d | (a ^ b)) == 0 {
                return v;
            }
        }
        let v = f();
        *last = Some((key, v));
        v
    }

    /// Whether a value is kept.
    pub fn is_kept(&self) -> bool {
        self.0.lock().is_ok_and(|l| l.is_some())
    }
}

/// The bits of `values` (a [`LastValue`] key).
pub fn key_bits<const N: usize>(values: [f64; N]) -> [u64; N] {
    values.map(f64::to_bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hysteresis_switches_only_beyond_the_band() {
        let b = 1e-6;
        // Fresh: the sign decides, zero is on.
        assert!(hysteresis_mode(false, true, 0.0, b));
        assert!(!hysteresis_mode(true, true, -1e-12, b));
        // Inside the band nothing switches.
        for x in [-0.4e-6, 0.0, 0.4e-6] {
            assert!(hysteresis_mode(true, false, x, b));
            assert!(!hysteresis_mode(false, false, x, b));
        }
        // At the guard roots (x = ∓band) the switch is certain.
        assert!(!hysteresis_mode(true, false, -b, b));
        assert!(hysteresis_mode(false, false, b, b));
        assert_eq!(hysteresis_guard(true, -b, b), 0.0);
        assert_eq!(hysteresis_guard(false, b, b), 0.0);
    }

    #[test]
    fn interpolates_holds_and_extrapolates() {
        let t = Table1D::new(vec![0.0, 1.0, 3.0], vec![0.0, 10.0, 30.0], false);
        assert_eq!(t.eval(0.5), 5.0);
        assert_eq!(t.eval(2.0), 20.0);
        assert_eq!(t.eval(-1.0), 0.0);
        assert_eq!(t.eval(4.0), 30.0);
        let l = Table1D {
            linear_extrapolation: true,
            ..t
        };
        assert_eq!(l.eval(4.0), 40.0);
        assert_eq!(l.eval(-1.0), -10.0);
    }

    #[test]
    fn counted_and_searched_segments_agree_on_short_and_long_axes() {
        // The segment holds u (x_k <= u < x_{k+1}, clamped to the end segments) whichever
        // way the axis is searched; the long axis takes the binary search.
        for n in [2, 5, 11, SHORT_AXIS, SHORT_AXIS + 1, 200] {
            let x: Vec<f64> = (0..n).map(|i| (i as f64).powf(1.3)).collect();
            let t = Table1D::new(x.clone(), x.iter().map(|v| v * v).collect(), false);
            let probes = x.iter().flat_map(|&xi| [xi - 1e-9, xi, xi + 1e-9]).chain([
                f64::NEG_INFINITY,
                f64::INFINITY,
                f64::NAN,
                -5.0,
                1e9,
            ]);
            for u in probes {
                let k = t.segment(u);
                let expect = x
                    .partition_point(|&xi| xi <= u)
                    .saturating_sub(1)
                    .min(n - 2);
                assert_eq!(k, expect, "n = {n}, u = {u}");
                if u.is_finite() && u >= x[0] && u < x[n - 1] {
                    assert!(x[k] <= u && u < x[k + 1], "n = {n}, u = {u}, k = {k}");
                }
            }
        }
    }

    #[test]
    fn a_kept_value_is_served_for_its_key_only() {
        let last: LastValue<2, f64> = LastValue::default();
        let calls = std::cell::Cell::new(0);
        let f = |x: f64| {
            calls.set(calls.get() + 1);
            x.sin()
        };
        let key = |a: f64, b: f64| key_bits([a, b]);
        assert_eq!(last.get_or(key(0.5, 1.0), || f(0.5)), 0.5f64.sin());
        assert_eq!(last.get_or(key(0.5, 1.0), || f(0.5)), 0.5f64.sin());
        assert_eq!(calls.get(), 1, "served from the kept value");
        // Another key, even one bit away (0.0 against −0.0), is computed.
        assert_eq!(last.get_or(key(0.5, 2.0), || f(0.7)), 0.7f64.sin());
        assert_eq!(last.get_or(key(0.0, 1.0), || f(0.1)), 0.1f64.sin());
        assert_eq!(last.get_or(key(-0.0, 1.0), || f(0.2)), 0.2f64.sin());
        assert_eq!(calls.get(), 4);
        // A copy keeps nothing.
        assert!(last.is_kept() && !last.clone().is_kept());
    }
}
