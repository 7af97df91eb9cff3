//! drivelink-units: SI units with dimensions, parameter expressions with units, and
//! "did you mean" suggestions.
//!
//! A leaf crate: it depends on nothing of drivelink, so the netlist loader, the results
//! and the plots use one lexer and one unit table without pulling in linear algebra.
//! - [`units`]: the unit table, dimensions, parsing of unit expressions (`"N*m/s"`);
//! - [`expr`]: parameter expressions (`"2*T + 5 N*m"`) evaluated to SI quantities;
//! - [`suggest`]: the closest names for typos.

pub mod expr;
pub mod suggest;
pub mod units;
