//! drivelink-core: ports, blocks, diagrams, the mechanical network, compilation and the model.

// Errors carry the names a user needs (block, port, parameter, hint); they are built only on
// the cold path of validation, so their size does not matter.
#![allow(clippy::result_large_err)]

pub mod block;
pub mod compile;
pub mod diagram;
pub mod error;
pub mod frame;
pub mod ids;
pub mod model;
pub mod network;
pub mod param_scope;
pub mod params;
pub mod plan;
pub mod probe;
mod short;
pub mod thermal;
pub mod warning;

// The leaf crates, re-exported under their old paths.
pub use drivelink_results::{number, result, scope};
pub use drivelink_units::{expr, suggest, units};

pub use block::*;
pub use compile::compile;
pub use compile::Compiled;
pub use diagram::{
    BlockId, BlockSpec, Diagram, PortRef, SettingsReader, SettingsSource, STOP_AT_CYCLE,
};
pub use drivelink_solver::{Method, Settings};
pub use error::{Error, ParamError};
pub use frame::{FrameState, MassProps, G};
pub use ids::{BlockIx, FrameIx, JointIx, NodeIx, RowIx, SlotIx, StateIx};
pub use model::{Eigen, EnergyAudit, HeatAudit, Linearization, Model, ModelState, StateError};
pub use params::{
    BlockBuild, BlockType, ParamDefault, ParamKind, ParamSpec, ParamValue, Params, RecordField,
    Registry, RegistryError,
};
pub use plan::{Plan, VarInfo};
pub use result::{EventRecord, EventTag, RunStats, RunStatus, SimResult};
pub use scope::{DisplayUnit, ScopeSignal, ScopeSpec};
pub use warning::CompileWarning;
