//! drivelink-core: ports, blocks, diagrams, the mechanical network, netlists and results.

pub mod result;
pub mod scope;
