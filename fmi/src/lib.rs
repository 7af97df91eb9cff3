//! drivelink models as FMI 3.0 and FMI 2.0 FMUs, Model Exchange and Co-Simulation.
//!
//! Built as a `cdylib`, this crate is the runtime library shipped in every exported FMU
//! (`binaries/x86_64-linux/drivelink_fmi.so` for FMI 3.0, `binaries/linux64/` for FMI
//! 2.0: the same library exports both C interfaces, [`ffi`] and [`ffi2`]): at
//! instantiation it loads the netlist the FMU carries in `resources/model.json`, compiles
//! it with the block library, and each `fmi3DoStep` (`fmi2DoStep`) advances the model's one
//! run of drivelink's own hybrid solver to the communication point (events located inside
//! the step, the integration not cut at the points: [`drivelink_core::Model::step_to`]); a Model Exchange instance serves the model's
//! derivatives, guards (as event indicators) and event handling to the importer's
//! integrator ([`me`]). As an `rlib` it gives the
//! exporter (`drivelink fmu`) the variable list and `modelDescription.xml` ([`vars`]), so
//! both sides number the variables the same way. See `docs/fmi.md`.

// The core `Error` names everything a user needs; it is only built on the error path.
#![allow(clippy::result_large_err)]

pub mod ffi;
pub mod ffi2;
pub mod instance;
pub mod me;
pub mod vars;

pub use instance::{Instance, Version};
pub use vars::{
    instantiation_token, model_description, model_description_fmi2, model_description_fmi2_of,
    model_description_of, model_variables, variables, Description, Kind, Variable,
    MODEL_IDENTIFIER,
};
