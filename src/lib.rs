//! drivelink facade.
