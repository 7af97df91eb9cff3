//! Signal blocks: sources, math, continuous, discrete and sinks.
use drivelink_core::Registry;

/// Register the signal blocks.
pub fn register(_r: &mut Registry) {}
