//! vehicle blocks.
use drivelink_core::Registry;

/// Register the vehicle blocks.
pub fn register(_r: &mut Registry) {}
