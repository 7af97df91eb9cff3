//! Placeholder, replaced by the integrator implementation.
use crate::*;
pub fn integrate<S: HybridSystem>(_sys: &mut S, _x: &mut [f64], _s: &Settings) -> Result<Outcome, Failure> {
    unimplemented!()
}
