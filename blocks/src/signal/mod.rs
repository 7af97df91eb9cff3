//! Signal blocks: sources, math, continuous, discrete and sinks.
//!
//! Conventions shared by every block here:
//! - Inputs of multi-input blocks are named `u1..un`, single inputs `u`, the output `y`.
//! - Discontinuities are never decided by an `if` on a live input inside a step. A block
//!   whose equations switch keeps a *mode* (Saturation limits, Relational result, Switch
//!   position, lookup segment, ...) that changes only in `update_modes` / `time_event`,
//!   and declares guards (valid while `>= 0`) so the solver locates every switch. Time
//!   discontinuities (Step, Ramp corners, SignalBuilder breakpoints, sample hits) are time
//!   events, hit bit-exactly.
//! - `update_modes` keeps the current mode while its guards are still valid and otherwise
//!   picks the mode the inputs call for, so after it returns every guard is `>= 0`.
//! - Block data (modes, held samples) is re-initialised in `reset` at the start of every
//!   run, so a compiled model can be run again from any start time.
//! - `outputs`, `derivatives` and `guards` do not allocate.

use drivelink_core::{ParamError, Params, Registry};

pub mod continuous;
pub mod discrete;
pub mod inport;
pub mod math;
pub mod sinks;
pub mod sources;

/// Register the signal blocks.
pub fn register(r: &mut Registry) {
    sources::register(r);
    inport::register(r);
    math::register(r);
    continuous::register(r);
    discrete::register(r);
    sinks::register(r);
}

/// Marks the first `update_modes` call after [`drivelink_core::Block::reset`]: blocks
/// whose initial mode depends on their inputs set it there silently (the initial mode is
/// not an event), and log every later change.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FirstCall(bool);

impl FirstCall {
    /// Armed: the next `take` returns true.
    pub(crate) fn armed() -> Self {
        FirstCall(true)
    }
    /// Re-arm (in `reset`).
    pub(crate) fn arm(&mut self) {
        self.0 = true;
    }
    /// True at the first call after arming.
    pub(crate) fn take(&mut self) -> bool {
        std::mem::take(&mut self.0)
    }
}

/// A parameter that must be an integer `>= min` (`MinMax.inputs`).
pub(crate) fn count_param(p: &Params, name: &str, min: usize) -> Result<usize, ParamError> {
    let v = p.num(name)?;
    if v.fract() != 0.0 || v < min as f64 || v > 1.0e6 {
        return Err(p.invalid(name, format!("must be an integer >= {min}, got {v}")));
    }
    Ok(v as usize)
}

/// Port names `u1..un`.
pub(crate) fn numbered_inputs(n: usize) -> Vec<drivelink_core::PortDecl> {
    (1..=n)
        .map(|i| drivelink_core::PortDecl::input(format!("u{i}")))
        .collect()
}

/// The next sample hit `k·ts` strictly after `t` (k integer, computed as `k as f64 * ts`,
/// never accumulated).
pub(crate) fn next_sample_hit(t: f64, ts: f64) -> f64 {
    if t.is_nan() || t == f64::INFINITY {
        return f64::INFINITY;
    }
    if t == f64::NEG_INFINITY {
        return f64::NEG_INFINITY;
    }
    let mut k = (t / ts).floor() + 1.0;
    // Round-off in t/ts: step k until k·ts is the first hit after t.
    while k * ts <= t {
        k += 1.0;
    }
    while (k - 1.0) * ts > t {
        k -= 1.0;
    }
    k * ts
}

/// Check a vector parameter for non-finite entries.
pub(crate) fn finite_vec(p: &Params, name: &str, v: &[f64]) -> Result<(), ParamError> {
    if let Some((i, x)) = v.iter().enumerate().find(|(_, x)| !x.is_finite()) {
        return Err(p.invalid(name, format!("entry {i} must be finite, got {x}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_hits_are_integer_multiples() {
        let ts = 0.1;
        assert_eq!(next_sample_hit(-1e-300, ts), 0.0);
        assert_eq!(next_sample_hit(0.0, ts), 0.1);
        let mut t = 0.0;
        for k in 1..=1000 {
            t = next_sample_hit(t, ts);
            assert_eq!(t, k as f64 * ts, "k = {k}");
        }
        assert_eq!(next_sample_hit(0.30000000000000004, ts), 4.0 * ts);
        assert_eq!(next_sample_hit(0.29999999999999993, ts), 3.0 * ts);
    }

    #[test]
    fn first_call_is_true_once_per_arming() {
        let mut c = FirstCall::armed();
        assert!(c.take());
        assert!(!c.take());
        c.arm();
        assert!(c.take());
    }
}
