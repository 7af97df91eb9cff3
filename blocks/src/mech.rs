//! mech blocks.
use drivelink_core::Registry;

/// Register the mech blocks.
pub fn register(_r: &mut Registry) {}
