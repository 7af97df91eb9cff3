//! What a step kernel (the explicit Runge–Kutta stepper, Radau IIA) decided about an
//! attempted step; the engine that drives the kernels reads it. A leaf module, so that
//! neither kernel depends on the engine.

/// What an attempt decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Verdict {
    /// Accepted; `h_next` is the proposed next step.
    Accept { h_next: f64 },
    /// Rejected; retry from the same point with `h_next`.
    Reject { h_next: f64 },
}
