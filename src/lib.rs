//! drivelink facade: the crates of the workspace under one name.
//!
//! - [`core`]: ports, blocks, diagrams, compile, the mechanical network, netlists, results;
//! - [`blocks`]: the block library and its registry ([`blocks::registry`]);
//! - [`plots`]: scope rendering (PNG, SVG);
//! - [`solver`]: the hybrid ODE integrator;
//! - [`models`]: reference models in Rust code.
//!
//! The `drivelink` binary (run, validate, blocks, schema, plot) is built from `src/main.rs`.

pub use drivelink_blocks as blocks;
pub use drivelink_core as core;
pub use drivelink_models as models;
pub use drivelink_plots as plots;
pub use drivelink_solver as solver;

pub use drivelink_core::netlist;
