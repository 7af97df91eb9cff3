//! Continuous blocks: Integrator, TransferFcn, StateSpace, PID.
//!
//! All are linear and mode-free. Outputs of blocks without direct feedthrough depend only
//! on their states (`feedthrough` false), which is what breaks algebraic loops.

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, Feedthrough, Linear, ParamDefault, ParamError,
    ParamKind, ParamSpec, Params, PortDecl, Registry, VarDecl, VarSource,
};

use drivelink_core::compile::ANY_UNIT as ANY;

use super::finite_vec;

/// Register the continuous blocks.
pub fn register(r: &mut Registry) {
    r.register(integrator_type());
    r.register(transfer_fcn_type());
    r.register(state_space_type());
    r.register(pid_type());
}

/// The `Integrator` block type: its parameters and how it is built.
fn integrator_type() -> BlockType {
    BlockType {
        name: "Integrator",
        category: "signal",
        doc: "y = x0 + ∫u dt (one state; no direct feedthrough).",
        ports_doc: "u[in], y[out]",
        params: vec![ParamSpec::number("x0", ANY, 0.0, "initial output")],
        build: BlockBuild::Primitive(|p| Ok(Box::new(Integrator { x0: p.num("x0")? }))),
    }
}

/// The `TransferFcn` block type: its parameters and how it is built.
fn transfer_fcn_type() -> BlockType {
    BlockType {
        name: "TransferFcn",
        category: "signal",
        doc: "Transfer function num(s)/den(s), coefficients highest power first, proper (deg num <= deg den); observer canonical form (x1 = y − b0·u: a lag's state is its output), zero initial state. Direct feedthrough only when deg num == deg den. Variables x1..xn: the canonical states.",
        ports_doc: "u[in], y[out]",
        params: vec![
            ParamSpec::with(
                "num",
                ParamKind::Polynomial,
                ParamDefault::Required,
                "numerator coefficients, highest power of s first",
            ),
            ParamSpec::with(
                "den",
                ParamKind::Polynomial,
                ParamDefault::Required,
                "denominator coefficients, highest power of s first (leading one non-zero)",
            ),
        ],
        build: BlockBuild::Primitive(build_tf),
    }
}

/// The `StateSpace` block type: its parameters and how it is built.
fn state_space_type() -> BlockType {
    BlockType {
        name: "StateSpace",
        category: "signal",
        doc: "Single-input single-output state space x' = A x + B u, y = C x + D u. Direct feedthrough iff D != 0. Variables x1..xn.",
        ports_doc: "u[in], y[out]",
        params: vec![
            ParamSpec::with("A", ParamKind::Matrix, ParamDefault::Required, "n×n state matrix [[...], ...]"),
            ParamSpec::with("B", ParamKind::Matrix, ParamDefault::Required, "n×1 input matrix [[b1], [b2], ...] (a 1×n row is accepted)"),
            ParamSpec::with("C", ParamKind::Matrix, ParamDefault::Required, "1×n output matrix [[c1, c2, ...]] (an n×1 column is accepted)"),
            ParamSpec::with("D", ParamKind::Matrix, ParamDefault::Value(serde_json::json!(0.0)), "1×1 feedthrough [[d]] or a number"),
            ParamSpec::optional("x0", ParamKind::Vector { unit: "1" }, "initial state [x1, ..., xn] (default zeros)"),
        ],
        build: BlockBuild::Primitive(build_ss),
    }
}

/// The `PID` block type: its parameters and how it is built.
fn pid_type() -> BlockType {
    BlockType {
        name: "PID",
        category: "signal",
        doc: "PID controller on the error input: y = kp·e + ki·∫e + kd·s/(tf·s + 1)·e. Variables `integral` (∫e) and `filter` (the derivative filter state).",
        ports_doc: "u[in], y[out]",
        params: vec![
            ParamSpec::required("kp", ANY, "proportional gain"),
            ParamSpec::number("ki", ANY, 0.0, "integral gain"),
            ParamSpec::number("kd", ANY, 0.0, "derivative gain"),
            ParamSpec::optional("tf", ParamKind::Number { unit: "s" }, "derivative filter time constant (> 0; required when kd != 0)"),
        ],
        build: BlockBuild::Primitive(build_pid),
    }
}

/// `Integrator`: one state, y = x, x' = u.
#[derive(Debug, Clone)]
pub struct Integrator {
    x0: f64,
}

impl Block for Integrator {
    fn declare(&self) -> BlockDecl {
        let linear = Some(Linear {
            n: 1,
            m: 1,
            p: 1,
            a: vec![0.0],
            b: vec![1.0],
            c: vec![1.0],
            d: vec![0.0],
        });
        BlockDecl {
            ports: vec![PortDecl::input("u"), PortDecl::output("y")],
            states: 1,
            linear,
            feedthrough: Feedthrough::None,
            ..BlockDecl::default()
        }
    }
    fn initial_states(&self, x: &mut [f64]) {
        x[0] = self.x0;
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = cx.x[0];
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        dx[0] = cx.u(0);
    }
}

fn build_tf(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let num = p.vector("num")?;
    let den = p.vector("den")?;
    if num.is_empty() {
        return Err(p.invalid("num", "is empty; give at least one coefficient"));
    }
    if den.is_empty() {
        return Err(p.invalid("den", "is empty; give at least one coefficient"));
    }
    finite_vec(p, "num", num)?;
    finite_vec(p, "den", den)?;
    let a0 = den[0];
    if a0 == 0.0 {
        return Err(p.invalid(
            "den",
            format!("leading coefficient (highest power of s) must be non-zero, got {den:?}"),
        ));
    }
    // Leading zeros of the numerator do not raise its degree.
    let first_nz = num.iter().position(|&c| c != 0.0).unwrap_or(num.len() - 1);
    let num = &num[first_nz..];
    let n = den.len() - 1;
    let m = num.len() - 1;
    if m > n {
        return Err(p.invalid(
            "num",
            format!(
                "improper transfer function: numerator degree {m} > denominator degree {n}; a TransferFcn must be proper"
            ),
        ));
    }
    // Normalize: den = s^n + a1 s^(n-1) + ... + an; num padded to n+1 coefficients b0..bn.
    let a: Vec<f64> = den[1..].iter().map(|c| c / a0).collect();
    let mut b = vec![0.0; n + 1];
    for (i, c) in num.iter().enumerate() {
        b[n - m + i] = c / a0;
    }
    let d = b[0];
    // Observer canonical form: B_i = b_i − a_i·b0.
    let c: Vec<f64> = (1..=n).map(|i| b[i] - d * a[i - 1]).collect();
    if a.iter().chain(&c).any(|v| !v.is_finite()) || !d.is_finite() {
        return Err(p.invalid("den", "normalizing by the leading coefficient overflows"));
    }
    Ok(Box::new(TransferFcn {
        a,
        c,
        d,
        biproper: m == n,
    }))
}

/// `TransferFcn` in observer canonical form. With `den = s^n + a1 s^(n-1) + ... + an` and
/// `num = b0 s^n + ... + bn` (both normalized by the leading den coefficient):
/// `x_i' = −a_i x1 + x_{i+1} + (b_i − a_i b0) u` (no `x_{n+1}`), `y = x1 + b0 u`. The first
/// state is the output minus its direct feedthrough, so a lag's state is its output.
#[derive(Debug, Clone)]
pub struct TransferFcn {
    a: Vec<f64>,
    /// `b_i − a_i b0`, the input column.
    c: Vec<f64>,
    d: f64,
    biproper: bool,
}

impl Block for TransferFcn {
    fn declare(&self) -> BlockDecl {
        let variables = (0..self.a.len())
            .map(|i| {
                VarDecl::new(format!("x{}", i + 1), VarSource::Custom(i), "1")
                    .doc("canonical state")
            })
            .collect();
        let n = self.a.len();
        let mut a = vec![0.0; n * n];
        for (i, ai) in self.a.iter().enumerate() {
            a[i * n] = -ai;
            if i + 1 < n {
                a[i * n + i + 1] = 1.0;
            }
        }
        let mut c = vec![0.0; n];
        if n > 0 {
            c[0] = 1.0;
        }
        let linear = Some(Linear {
            n,
            m: 1,
            p: 1,
            a,
            b: self.c.clone(),
            c,
            d: vec![if self.biproper { self.d } else { 0.0 }],
        });
        BlockDecl {
            ports: vec![PortDecl::input("u"), PortDecl::output("y")],
            states: self.a.len(),
            variables,
            linear,
            ..BlockDecl::default()
        }
        .feedthrough_by(|_input| self.biproper)
    }
    fn initial_states(&self, x: &mut [f64]) {
        x.fill(0.0);
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        cx.x.get(i).copied().unwrap_or(f64::NAN)
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let mut acc = cx.x.first().copied().unwrap_or(0.0);
        if self.biproper {
            acc += self.d * cx.u(0);
        }
        y[0] = acc;
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        let n = self.a.len();
        let u = cx.u(0);
        let x0 = cx.x[0];
        for (i, d) in dx.iter_mut().enumerate().take(n) {
            let next = if i + 1 < n { cx.x[i + 1] } else { 0.0 };
            *d = -self.a[i] * x0 + next + self.c[i] * u;
        }
    }
}

/// All entries of a matrix parameter, checking it is `rows × cols` (or, when
/// `allow_transpose`, `cols × rows`).
fn matrix_entries(
    p: &Params,
    name: &str,
    rows: usize,
    cols: usize,
    allow_transpose: bool,
    shape_doc: &str,
) -> Result<Vec<f64>, ParamError> {
    let t = p.table(name)?;
    let r = t.len();
    let ok_shape = |r: usize, c: usize| t.len() == r && t.iter().all(|row| row.len() == c);
    let fits = ok_shape(rows, cols) || (allow_transpose && ok_shape(cols, rows));
    if !fits {
        let shape: Vec<usize> = t.iter().map(|row| row.len()).collect();
        return Err(p.invalid(
            name,
            format!("must be {shape_doc} ({rows}×{cols}); got {r} row(s) of lengths {shape:?}"),
        ));
    }
    let v: Vec<f64> = t.iter().flatten().copied().collect();
    finite_vec(p, name, &v)?;
    Ok(v)
}

fn build_ss(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let a_rows = p.table("A")?;
    let n = a_rows.len();
    if n == 0 {
        return Err(p.invalid("A", "is empty; expected an n×n matrix with n >= 1"));
    }
    let a = matrix_entries(p, "A", n, n, false, "square")?;
    let b = matrix_entries(p, "B", n, 1, true, "a column with one entry per state")?;
    let c = matrix_entries(p, "C", 1, n, true, "a row with one entry per state")?;
    let d = matrix_entries(p, "D", 1, 1, false, "a 1×1 matrix or a number")?;
    let d = d.first().copied().unwrap_or(0.0);
    let x0 = match p.values.get("x0") {
        None => vec![0.0; n],
        Some(_) => {
            let v = p.vector("x0")?;
            if v.len() != n {
                return Err(p.invalid(
                    "x0",
                    format!("must have one entry per state ({n}), got {}", v.len()),
                ));
            }
            finite_vec(p, "x0", v)?;
            v.to_vec()
        }
    };
    Ok(Box::new(StateSpace { n, a, b, c, d, x0 }))
}

/// `StateSpace` (SISO): `x' = A x + B u`, `y = C x + D u`; `A` stored row-major.
#[derive(Debug, Clone)]
pub struct StateSpace {
    n: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    d: f64,
    x0: Vec<f64>,
}

impl Block for StateSpace {
    fn declare(&self) -> BlockDecl {
        let variables = (0..self.n)
            .map(|i| {
                VarDecl::new(format!("x{}", i + 1), VarSource::Custom(i), "1")
                    .doc("canonical state")
            })
            .collect();
        let linear = Some(Linear {
            n: self.n,
            m: 1,
            p: 1,
            a: self.a.clone(),
            b: self.b.clone(),
            c: self.c.clone(),
            d: vec![self.d],
        });
        BlockDecl {
            ports: vec![PortDecl::input("u"), PortDecl::output("y")],
            states: self.n,
            variables,
            linear,
            ..BlockDecl::default()
        }
        .feedthrough_by(|_input| self.d != 0.0)
    }
    fn initial_states(&self, x: &mut [f64]) {
        x.copy_from_slice(&self.x0);
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        cx.x.get(i).copied().unwrap_or(f64::NAN)
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let mut acc: f64 = self.c.iter().zip(cx.x).map(|(c, x)| c * x).sum();
        if self.d != 0.0 {
            acc += self.d * cx.u(0);
        }
        y[0] = acc;
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        let u = cx.u(0);
        for (i, (row, &bi)) in self.a.chunks_exact(self.n).zip(&self.b).enumerate() {
            dx[i] = row.iter().zip(cx.x).map(|(a, x)| a * x).sum::<f64>() + bi * u;
        }
    }
}

fn build_pid(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let kp = p.num("kp")?;
    let ki = p.num("ki")?;
    let kd = p.num("kd")?;
    let tf = match p.opt_num("tf")? {
        Some(tf) if tf > 0.0 => tf,
        Some(tf) if kd != 0.0 => {
            return Err(p.invalid("tf", format!("must be > 0 when kd != 0, got {tf}")))
        }
        None if kd != 0.0 => {
            return Err(p.invalid(
                "tf",
                "is required when kd != 0 (derivative filter time constant, > 0)",
            ))
        }
        Some(tf) if tf < 0.0 => return Err(p.invalid("tf", format!("must be > 0, got {tf}"))),
        _ => 1.0, // unused: kd == 0
    };
    Ok(Box::new(Pid { kp, ki, kd, tf }))
}

/// `PID`: states `[∫e, xf]` with `xf' = (e − xf)/tf`; the filtered derivative is
/// `kd·(e − xf)/tf` = `kd·s/(tf·s + 1)·e`.
#[derive(Debug, Clone)]
pub struct Pid {
    kp: f64,
    ki: f64,
    kd: f64,
    tf: f64,
}

impl Block for Pid {
    fn declare(&self) -> BlockDecl {
        let variables = vec![
            VarDecl::new("integral", VarSource::Custom(0), "1")
                .doc("integral of the error input ∫e dt"),
            VarDecl::new("filter", VarSource::Custom(1), "1").doc("derivative filter state"),
        ];
        let kd_tf = if self.kd != 0.0 {
            self.kd / self.tf
        } else {
            0.0
        };
        let linear = Some(Linear {
            n: 2,
            m: 1,
            p: 1,
            a: vec![0.0, 0.0, 0.0, -1.0 / self.tf],
            b: vec![1.0, 1.0 / self.tf],
            c: vec![self.ki, -kd_tf],
            d: vec![self.kp + kd_tf],
        });
        BlockDecl {
            ports: vec![PortDecl::input("u"), PortDecl::output("y")],
            states: 2,
            variables,
            linear,
            ..BlockDecl::default()
        }
        .feedthrough_by(|_input| self.kp != 0.0 || self.kd != 0.0)
    }
    fn initial_states(&self, x: &mut [f64]) {
        x.fill(0.0);
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        cx.x.get(i).copied().unwrap_or(f64::NAN)
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let e = if self.kp != 0.0 || self.kd != 0.0 {
            cx.u(0)
        } else {
            0.0
        };
        let mut out = self.kp * e + self.ki * cx.x[0];
        if self.kd != 0.0 {
            out += self.kd * (e - cx.x[1]) / self.tf;
        }
        y[0] = out;
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        let e = cx.u(0);
        dx[0] = e;
        dx[1] = (e - cx.x[1]) / self.tf;
    }
}
