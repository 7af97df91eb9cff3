//! drivelink-blocks: the block library and its registry.
//!
//! Categories follow Modelica's layout: `signal` (sources, math, continuous, discrete,
//! sinks), `mech` (rotational and translational components, friction elements, sensors),
//! `powertrain` (engine, torque converter, CR-CR 4-speed), `vehicle` (tires, body,
//! differentials, brakes, ABS). Blocks do no I/O and hold no solver state.

// Parameter checks are written `!(x > 0.0)` on purpose: they reject NaN as well.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod mech;
pub mod powertrain;
pub mod signal;
pub mod util;
pub mod vehicle;

use drivelink_core::Registry;

/// The registry of every library block.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    signal::register(&mut r);
    mech::register(&mut r);
    powertrain::register(&mut r);
    vehicle::register(&mut r);
    r
}
