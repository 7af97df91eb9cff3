//! drivelink facade: the crates of the workspace under one name.
//!
//! - [`core`]: ports, blocks, diagrams, compile, the mechanical network, results,
//!   linearization;
//! - [`netlist`]: the JSON netlist format (loader, writer, key specification, JSON Schema);
//! - [`blocks`]: the block library and its registry ([`blocks::registry`]);
//! - [`plots`]: scope rendering (PNG, SVG);
//! - [`report`]: the interactive HTML run report and the block diagram (SVG);
//! - [`sweep`]: parameter studies (grids, samples, metrics, shards, CSV and Parquet);
//! - [`solver`]: the hybrid ODE integrator;
//! - [`models`]: reference models in Rust code.
//!
//! The `drivelink` binary (run, validate, blocks, schema, plot, diagram, linearize, sweep,
//! sweep-merge) is built from `src/main.rs`.
#![warn(missing_docs)]

pub use drivelink_blocks as blocks;
pub use drivelink_core as core;
pub use drivelink_models as models;
pub use drivelink_netlist as netlist;
pub use drivelink_plots as plots;
pub use drivelink_report as report;
pub use drivelink_solver as solver;
pub use drivelink_sweep as sweep;
