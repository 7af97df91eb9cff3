//! `compile()`: diagram -> execution plan -> runnable [`Model`].
//!
//! Compilation is a sequence of passes, each a function of its own that collects every
//! error it finds before giving up (so a user sees all offending names at once):
//!
//! 1. [`flatten`]: subsystems and composite blocks expanded (names become `sub.block`);
//! 2. [`params`]: model and block parameters resolved (expressions, units, dimension
//!    checks) and the blocks built;
//! 3. [`connect`]: connections checked, signal inputs given their drivers, mechanical
//!    flanges joined into nodes (union-find);
//! 4. [`layout`]: every block's place in the flat buffers;
//! 5. [`order`]: evaluation stages in dependency order (algebraic loops reported);
//! 6. [`vars`]: loggable variables with units, the logged list, scope checks.
//!
//! The result is an immutable [`Plan`]; [`Model::instantiate`] adds the run state (the
//! blocks, the mechanical network with its masses and constraint coefficients, buffers).

pub(crate) mod connect;
pub(crate) mod flatten;
pub(crate) mod layout;
pub(crate) mod order;
pub(crate) mod params;
pub(crate) mod vars;

use std::sync::Arc;

pub use params::{resolve_parameters, resolve_params, Scope, ScopeVal, ANY_UNIT};

use crate::diagram::Diagram;
use crate::error::Error;
use crate::model::Model;
use crate::params::Registry;
use crate::plan::Plan;

/// Something worth telling the user that does not stop the model from running.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompileWarning {
    /// A mechanical port joined to nothing: its block acts on a node of its own.
    #[error("flange '{block}.{port}' is not connected to anything; the block acts on a shaft of its own")]
    UnconnectedFlange { block: String, port: String },
}

/// Compile a diagram with the block types of `reg`.
pub fn compile(d: &Diagram, reg: &Registry) -> Result<Model, Error> {
    let top = resolve_parameters(&d.parameters, &Scope::new(), &d.name)?;
    let flat = flatten::flatten_diagram(d, reg, top)?;
    let built = params::build_blocks(&flat, reg)?;
    let mut warnings = Vec::new();
    let ports = built.blocks.iter().map(|b| b.ports()).collect();
    let wiring = connect::connect(
        &built.names,
        &built.types,
        ports,
        &flat.connections,
        &mut warnings,
    )?;
    let lay = layout::layout(&built.names, &built.types, &built.blocks, &wiring);
    let ord = order::order(&built.names, &built.blocks, &lay, &wiring)?;
    let vars = vars::variables(&built.blocks, &lay, &flat, &d.scopes)?;
    let plan = Plan {
        name: d.name.clone(),
        settings: d.settings.clone(),
        blocks: lay.blocks,
        in_slots: lay.in_slots,
        port_dof: lay.port_dof,
        n_signals: lay.n_signals,
        slot_defaults: lay.slot_defaults,
        nodes: lay.nodes,
        rows: lay.rows,
        joints: lay.joints,
        n_states: lay.n_states,
        x_joint_energy: lay.x_joint_energy,
        n_block_guards: lay.n_block_guards,
        stages: ord.stages,
        lin_out: ord.lin_out,
        lin_der: ord.lin_der,
        const_blocks: ord.const_blocks,
        state_blocks: ord.state_blocks,
        guard_blocks: ord.guard_blocks,
        force_blocks: ord.force_blocks,
        energy_blocks: ord.energy_blocks,
        vars: vars.vars,
        log: vars.log,
        scopes: d.scopes.clone(),
        warnings,
    };
    Model::instantiate(Arc::new(plan), built.blocks)
}
