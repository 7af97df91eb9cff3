//! powertrain blocks.
use drivelink_core::Registry;

/// Register the powertrain blocks.
pub fn register(_r: &mut Registry) {}
