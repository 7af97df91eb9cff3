//! drivelink-results: what a run produces, independent of how it was computed.
//!
//! [`SimResult`] (time vector, logged variables, event log, statistics, status), CSV
//! input and output, and the scope specifications ([`ScopeSpec`]) that say how results
//! are displayed. `plots`, the report and the Python package read results through this
//! crate without depending on the solver or linear algebra.

pub mod number;
pub mod result;
pub mod scope;

pub use result::{EventRecord, EventTag, MethodSwitch, Num, RunStats, RunStatus, SimResult};
pub use scope::{DisplayUnit, ScopeSignal, ScopeSpec};
