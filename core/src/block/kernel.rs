//! Fused output operations: a block whose output equation is a plain read or a short
//! arithmetic of its inputs and flange motion says so ([`Block::kernel`]), and the model
//! compiles it into its evaluation program as one operation on the shared buffers, with
//! every index resolved at instantiation: no view, no call, no copy through a scratch
//! buffer. A sensor's outputs cost a load and a store.
//!
//! A kernel is a *description* of the outputs the block's own `outputs` (or
//! `network_outputs`) computes, with the same operations in the same order, so the fused
//! operation gives the same values to the bit; [`Kernel::eval`] is its reference
//! interpretation through a [`Cx`] view, and every block offering one is tested against
//! its `outputs` with it. A kernel is fixed for the run: a block whose output law changes at
//! events (modes, held values) does not offer one.
//!
//! [`Block::kernel`]: super::Block::kernel

use super::Cx;

/// A value an output reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operand {
    /// Signal input `i` (`Cx::u`).
    Input(usize),
    /// Speed of the node of port `p` (`Cx::v`; 0 for an unconnected support).
    Speed(usize),
    /// Angle / position of the node of port `p` (`Cx::q`).
    Angle(usize),
    /// Acceleration of the node of port `p` (`Cx::a`; after the network solve).
    Accel(usize),
    /// Constraint force `i` of the block (`Cx::lambda`: rows, then joints; after the
    /// network solve).
    Lambda(usize),
}

impl Operand {
    /// The operand's value through the view `cx`.
    pub fn eval(&self, cx: &Cx) -> f64 {
        match *self {
            Operand::Input(i) => cx.u(i),
            Operand::Speed(p) => cx.v(p),
            Operand::Angle(p) => cx.q(p),
            Operand::Accel(p) => cx.a(p),
            Operand::Lambda(i) => cx.lambda(i),
        }
    }
}

/// A block's outputs (those of one evaluation stage) as one fused operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Kernel {
    /// Output `k` is operand `k` (none: the stage writes nothing, as the outputs stage of
    /// a block whose outputs all come after the network solve).
    Read(Vec<Operand>),
    /// `y₀ = ((1·u₀) ∘ u₁) ∘ …` with `∘` a product where the flag is `true`, a quotient
    /// where it is `false`.
    Product(Vec<bool>),
    /// `y₀ = num / den` where `|den| ≥ min` and `|den| > 0`, else NaN (a ratio of speeds,
    /// undefined while the divisor stands still).
    Ratio {
        num: Operand,
        den: Operand,
        min: f64,
    },
}

impl Kernel {
    /// The outputs through the view `cx` into `y`: the reference the compiled operation is
    /// checked against.
    pub fn eval(&self, cx: &Cx, y: &mut [f64]) {
        match self {
            Kernel::Read(ops) => {
                for (y, op) in y.iter_mut().zip(ops) {
                    *y = op.eval(cx);
                }
            }
            Kernel::Product(mul) => {
                y[0] = product(mul.iter().enumerate().map(|(i, &m)| (m, cx.u(i))));
            }
            Kernel::Ratio { num, den, min } => y[0] = ratio(num.eval(cx), den.eval(cx), *min),
        }
    }

    /// The number of outputs the kernel writes (from the first).
    pub fn n_outputs(&self) -> usize {
        match self {
            Kernel::Read(ops) => ops.len(),
            Kernel::Product(_) | Kernel::Ratio { .. } => 1,
        }
    }
}

/// The product of `Kernel::Product`: from 1, each value multiplied (`true`) or divided in
/// turn.
#[inline]
pub fn product(terms: impl Iterator<Item = (bool, f64)>) -> f64 {
    let mut acc = 1.0;
    for (m, u) in terms {
        if m {
            acc *= u;
        } else {
            acc /= u;
        }
    }
    acc
}

/// The quotient of `Kernel::Ratio`.
#[inline]
pub fn ratio(num: f64, den: f64, min: f64) -> f64 {
    if den.abs() >= min && den.abs() > 0.0 {
        num / den
    } else {
        f64::NAN
    }
}
