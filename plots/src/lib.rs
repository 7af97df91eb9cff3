//! drivelink-plots: scope rendering.
