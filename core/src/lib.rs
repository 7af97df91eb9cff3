//! drivelink-core: ports, blocks, diagrams, the mechanical network, netlists and results.

pub mod expr;
pub mod result;
pub mod scope;
pub mod suggest;
pub mod units;
