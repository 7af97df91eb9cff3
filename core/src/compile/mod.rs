//! `compile()`: diagram -> execution plan -> runnable [`Model`].
//!
//! Compilation is a sequence of passes, each a function of its own that collects every
//! error it finds before giving up (so a user sees all offending names at once):
//!
//! 1. `flatten`: subsystems and composite blocks expanded (names become `sub.block`);
//! 2. `build`: model and block parameters resolved (expressions, units, dimension
//!    checks) and the blocks built; each built block's declaration ([`crate::BlockDecl`])
//!    is what the later passes read;
//! 3. `connect`: connections checked, signal inputs given their drivers, mechanical
//!    flanges joined into nodes (union-find);
//! 4. `layout`: every block's place in the flat buffers; `held`: the blocks whose outputs
//!    change only at events (constants, and pure functions of such signals);
//! 5. `order`: evaluation stages in dependency order (algebraic loops reported);
//! 6. `vars`: loggable variables with units, the logged list, scope checks.
//!
//! The result is an immutable [`Plan`]; [`Model::instantiate`] adds the run state (the
//! blocks, the mechanical network with its masses and constraint coefficients, buffers).

pub(crate) mod build;
pub(crate) mod connect;
#[cfg(test)]
pub(crate) mod fixture;
pub(crate) mod flatten;
pub(crate) mod held;
pub(crate) mod layout;
pub(crate) mod order;
pub(crate) mod vars;

use std::collections::HashMap;
use std::sync::Arc;

use drivelink_solver::Settings;

pub use build::{resolve_parameters, resolve_params, Scope, ScopeVal, ANY_UNIT};
pub use flatten::MAX_BLOCKS;

use crate::diagram::Diagram;
use crate::error::Error;
use crate::model::Model;
use crate::params::Registry;
use crate::plan::Plan;
pub use crate::warning::CompileWarning;

/// Blocks given settings but not the `enabled` switch that is off by default.
fn disabled_with_settings(flat: &flatten::Flat, reg: &Registry) -> Vec<CompileWarning> {
    flat.blocks
        .iter()
        .filter_map(|b| {
            let spec = reg.get(&b.type_name)?;
            // Every block's `enabled` switch is off unless given (the ABS of the Vehicle
            // Physics seed).
            let switch = spec.params.iter().find(|p| p.name == "enabled")?;
            let off = matches!(switch.kind, crate::params::ParamKind::Bool);
            if !off || b.params.contains_key("enabled") || b.params.is_empty() {
                return None;
            }
            Some(CompileWarning::DisabledWithSettings {
                block: b.name.clone(),
                given: b.params.keys().cloned().collect(),
            })
        })
        .collect()
}

/// Inner ports a subsystem or composite block exports, by flat name ("gb.selector.gear"),
/// with the name the user wrote ("gb", "gear"): the outermost exporting name.
fn outer_ports(flat: &flatten::Flat) -> HashMap<String, (String, String)> {
    let mut out: HashMap<String, (String, String)> = HashMap::new();
    for (exported, inner) in &flat.port_map {
        let Some(pr) = crate::diagram::PortRef::parse(exported) else {
            continue;
        };
        let shorter = out
            .get(inner)
            .is_none_or(|(b, p)| exported.len() < b.len() + 1 + p.len());
        if shorter {
            out.insert(inner.clone(), (pr.block, pr.port));
        }
    }
    out
}

/// `e` with inner port names of subsystems and composite blocks replaced by the ports
/// they export (an undriven `gb.selector.gear` is the user's `gb.gear`).
fn name_outer_ports(e: Error, outer: &HashMap<String, (String, String)>) -> Error {
    match e {
        Error::Many(v) => Error::Many(v.into_iter().map(|e| name_outer_ports(e, outer)).collect()),
        Error::UndrivenInput { block, port } => match outer.get(&format!("{block}.{port}")) {
            Some((b, p)) => Error::UndrivenInput {
                block: b.clone(),
                port: p.clone(),
            },
            None => Error::UndrivenInput { block, port },
        },
        e => e,
    }
}

/// The connection lines with every exported variable alias of a composite block
/// (`gearbox.A_mode`) replaced by the inner variable it names, so an alias is a signal
/// source like the variable itself.
fn aliased_connections(flat: &flatten::Flat) -> Vec<Vec<String>> {
    let alias: HashMap<&str, &str> = flat
        .alias_map
        .iter()
        .map(|(a, t)| (a.as_str(), t.as_str()))
        .collect();
    flat.connections
        .iter()
        .map(|line| {
            line.iter()
                .map(|r| {
                    alias
                        .get(r.as_str())
                        .map_or_else(|| r.clone(), |t| t.to_string())
                })
                .collect()
        })
        .collect()
}

/// `settings` of a diagram that stops at its drive cycle's end ([`Diagram::stops_at_cycle`])
/// with the stop time set to the largest [`crate::BlockDecl::schedule_end`] of the built
/// blocks; other settings unchanged. No block with a schedule is an error naming
/// `solver.stop_time`, as is a schedule ending before `start_time`.
fn stop_at_schedule_end(
    d: &Diagram,
    mut settings: Settings,
    decls: &[crate::BlockDecl],
) -> Result<Settings, Error> {
    if !d.stops_at_cycle() {
        return Ok(settings);
    }
    let end = decls.iter().filter_map(|b| b.schedule_end).reduce(f64::max);
    let err = |message: String| Error::Netlist {
        file: d.name.clone(),
        path: "solver.stop_time".into(),
        message,
    };
    match end {
        None => Err(err(format!(
            "\"{}\" needs a DriveCycle block (the run ends at its trace's end); the model has none",
            crate::STOP_AT_CYCLE
        ))),
        Some(t) if t <= settings.start_time => Err(err(format!(
            "the drive cycle ends at {t} s, not after start_time ({} s)",
            settings.start_time
        ))),
        Some(t) => {
            settings.stop_time = t;
            Ok(settings)
        }
    }
}

/// Compile a diagram with the block types of `reg`.
pub fn compile(d: &Diagram, reg: &Registry) -> Result<Model, Error> {
    let top = resolve_parameters(&d.parameters, &Scope::new(), &d.name)?;
    let settings = d.settings_under(&top)?;
    let flat = flatten::flatten_diagram(d, reg, top)?;
    let mut built = build::build_blocks(&flat, reg)?;
    // Declarations before the road data is attached: the ports and the variable names
    // wiring may name (a wheel's road-dependent guards come with the second asking).
    let unattached = declarations(&built.blocks);
    let settings = stop_at_schedule_end(d, settings, &unattached)?;
    let mut warnings = Vec::new();
    let ports = unattached.iter().map(|b| b.ports.clone()).collect();
    let var_names: Vec<Vec<String>> = unattached
        .iter()
        .map(|b| b.variables.iter().map(|v| v.name.clone()).collect())
        .collect();
    let outer = outer_ports(&flat);
    let wiring = connect::connect(
        &built.names,
        &built.types,
        ports,
        &var_names,
        &aliased_connections(&flat),
        &mut warnings,
    )
    .map_err(|e| name_outer_ports(e, &outer))?;
    for w in &mut warnings {
        let (CompileWarning::UnconnectedFlange { block, port }
        | CompileWarning::UnconnectedHeatPort { block, port }) = w
        else {
            continue;
        };
        if let Some((b, p)) = outer.get(&format!("{block}.{port}")) {
            (*block, *port) = (b.clone(), p.clone());
        }
    }
    warnings.extend(disabled_with_settings(&flat, reg));
    // Road data is attached before the layout: a wheel's guards and variables depend on
    // its road (the kerbs and friction patches it must locate).
    let roads: Vec<crate::plan::RoadLink> = wiring
        .roads
        .iter()
        .map(|(p, c)| crate::plan::RoadLink {
            provider: (p.block, p.port),
            consumer: (c.block, c.port),
        })
        .collect();
    crate::model::attach_roads(&roads, &mut built.blocks, &|b| built.names[b].clone())?;
    let decls = declarations(&built.blocks);
    let mut lay = layout::layout(&built.names, &built.types, &decls, &wiring);
    let held = held::hold(&decls, &mut lay);
    let held_guard_blocks = held::held_guards(&decls, &lay);
    let ord = order::order(&built.names, &decls, &lay, &wiring, held)?;
    let vars = vars::variables(&decls, &lay, &flat, &d.scopes)?;
    let (thermal, n_states) = crate::thermal::plan(
        &built.names,
        &decls,
        &wiring.heat_node,
        wiring.heat_nodes.iter().map(|h| h.name.clone()).collect(),
        lay.n_states,
    )?;
    let load_joints = layout::load_joints(&decls, &lay);
    let net_out: Vec<bool> = ord
        .stages
        .iter()
        .fold(vec![false; lay.blocks.len()], |mut v, s| {
            if let crate::plan::Stage::NetworkOutputs(b) = s {
                v[b.ix()] = true;
            }
            v
        });
    static COMPILATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let plan = Plan {
        compile_id: COMPILATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        name: d.name.clone(),
        settings: settings.clone(),
        rt: Plan::pack(&lay.blocks, &net_out),
        blocks: lay.blocks,
        in_slots: lay.in_slots,
        port_dof: lay.port_dof,
        n_signals: lay.n_signals,
        slot_defaults: lay.slot_defaults,
        nodes: lay.nodes,
        rows: lay.rows,
        joints: lay.joints,
        n_states,
        x_joint_energy: lay.x_joint_energy,
        n_block_guards: lay.n_block_guards,
        frames: lay.frames,
        frames_x: lay.frames_x,
        stages: ord.stages,
        taps: lay.taps,
        lin_out: ord.lin_out,
        lin_der: ord.lin_der,
        const_blocks: ord.const_blocks,
        state_blocks: ord.state_blocks,
        guard_blocks: ord.guard_blocks,
        held_guard_blocks,
        force_blocks: ord.force_blocks,
        energy_blocks: ord.energy_blocks,
        vars: vars.vars,
        log: vars.log,
        scopes: d.scopes.clone(),
        warnings,
        load_joints,
        thermal,
        roads,
    };
    let model = Model::instantiate_declared(Arc::new(plan), built.blocks, decls)?;
    model.check_settings(&settings)?;
    Ok(model)
}

/// What a block contributes to the *structure* of a plan: its name, its type and its
/// declaration. Two blocks fit the same plan, whatever their parameter values, when
/// their names and types are equal and their declarations have the same structure
/// ([`crate::BlockDecl::same_structure`]).
#[derive(Debug, Clone)]
struct BlockSig {
    name: String,
    type_name: &'static str,
    decl: crate::BlockDecl,
}

impl BlockSig {
    fn fits(&self, name: &str, type_name: &str, decl: &crate::BlockDecl) -> bool {
        self.name == name && self.type_name == type_name && self.decl.same_structure(decl)
    }
}

/// Every built block's declaration, in flat order.
fn declarations(blocks: &[Box<dyn crate::Block>]) -> Vec<crate::BlockDecl> {
    blocks.iter().map(|b| b.declare()).collect()
}

/// A diagram compiled once and instantiable again with other values of its top-level
/// parameters: the parameters are re-resolved and the blocks rebuilt, and when the blocks'
/// structure is unchanged (the usual case: a sweep over throttles, ratios, friction
/// coefficients) the new run reuses the plan (a private copy, so that models on different
/// threads share no reference count) instead of repeating the connect, layout, order and
/// variable passes. A parameter that changes the structure (the order of a
/// transfer function, the number of inputs of a `Sum`) is compiled in full.
pub struct Compiled {
    diagram: Diagram,
    plan: Arc<Plan>,
    sigs: Vec<BlockSig>,
}

fn signatures(built: &build::Built, decls: Vec<crate::BlockDecl>) -> Vec<BlockSig> {
    decls
        .into_iter()
        .zip(&built.names)
        .zip(&built.types)
        .map(|((decl, n), t)| BlockSig {
            name: n.clone(),
            type_name: t,
            decl,
        })
        .collect()
}

/// Whether the built blocks (declared `decls`) fit the plan whose blocks have `sigs`.
fn fit(sigs: &[BlockSig], built: &build::Built, decls: &[crate::BlockDecl]) -> bool {
    sigs.len() == decls.len()
        && sigs
            .iter()
            .zip(decls)
            .enumerate()
            .all(|(b, (s, d))| s.fits(&built.names[b], built.types[b], d))
}

/// Attach the road data of `plan`'s road links to freshly built blocks, so their
/// signatures (guard counts) are those of the blocks the plan was laid out for.
fn attach_built(plan: &Plan, built: &mut build::Built) -> Result<(), Error> {
    let names = &built.names;
    crate::model::attach_roads(&plan.roads, &mut built.blocks, &|b| names[b].clone())
}

impl Compiled {
    /// Compile `d`.
    pub fn new(d: &Diagram, reg: &Registry) -> Result<Compiled, Error> {
        let model = compile(d, reg)?;
        let top = resolve_parameters(&d.parameters, &Scope::new(), &d.name)?;
        let flat = flatten::flatten_diagram(d, reg, top)?;
        let mut built = build::build_blocks(&flat, reg)?;
        attach_built(model.plan(), &mut built)?;
        Ok(Compiled {
            diagram: d.clone(),
            plan: model.plan().clone(),
            sigs: signatures(&built, declarations(&built.blocks)),
        })
    }
    /// The plan.
    pub fn plan(&self) -> &Arc<Plan> {
        &self.plan
    }
    /// The diagram it was compiled from.
    pub fn diagram(&self) -> &Diagram {
        &self.diagram
    }
    /// A fresh run instance with the diagram's own parameter values.
    pub fn model(&self, reg: &Registry) -> Result<Model, Error> {
        self.with_params(reg, &[])
    }
    /// A run instance with top-level parameters overridden. Values are raw netlist values:
    /// numbers (SI), expression strings with units (`"250 ms"`), booleans, or strings for
    /// choice parameters. An unknown name is an error naming it (with a suggestion).
    pub fn with_params(
        &self,
        reg: &Registry,
        overrides: &[(String, serde_json::Value)],
    ) -> Result<Model, Error> {
        self.instance_with(reg, overrides, true)
    }
    /// [`Compiled::with_params`] for values that must keep the compiled structure (a
    /// parameter tuned mid-run, whose model takes the run state of the old one): values
    /// that change it are an error instead of a new compilation.
    pub fn with_params_same_structure(
        &self,
        reg: &Registry,
        overrides: &[(String, serde_json::Value)],
    ) -> Result<Model, Error> {
        self.instance_with(reg, overrides, false)
    }
    fn instance_with(
        &self,
        reg: &Registry,
        overrides: &[(String, serde_json::Value)],
        recompile: bool,
    ) -> Result<Model, Error> {
        let mut d = self.diagram.clone();
        let known: Vec<&str> = self
            .diagram
            .parameters
            .iter()
            .map(|p| p.0.as_str())
            .collect();
        let mut errors = Vec::new();
        for (name, value) in overrides {
            if !known.contains(&name.as_str()) {
                errors.push(Error::Netlist {
                    file: d.name.clone(),
                    path: format!("parameters.{name}"),
                    message: format!(
                        "no such model parameter{}; the model's parameters are: {}",
                        crate::suggest::hint(name, known.iter().copied()),
                        known.join(", ")
                    ),
                });
                continue;
            }
            let given = d.parameters.iter().find(|p| p.0 == *name).map(|p| &p.1);
            if let Some(m) = given.and_then(|old| unit_mismatch(name, old, value)) {
                errors.push(Error::Netlist {
                    file: d.name.clone(),
                    path: format!("parameters.{name}"),
                    message: m,
                });
                continue;
            }
            d.param(name, si_number_as_quantity(given, value));
        }
        Error::from_list(errors)?;
        let top = resolve_parameters(&d.parameters, &Scope::new(), &d.name)?;
        let settings = d.settings_under(&top)?;
        let flat = flatten::flatten_diagram(&d, reg, top)?;
        let mut built = build::build_blocks(&flat, reg)?;
        attach_built(&self.plan, &mut built)?;
        let decls = declarations(&built.blocks);
        let settings = stop_at_schedule_end(&d, settings, &decls)?;
        if fit(&self.sigs, &built, &decls) {
            // A copy of the plan per model, not a shared `Arc`: the evaluation loop clones
            // its `Arc<Plan>` handle several times per evaluation, and models of one study
            // run on different threads; one shared reference count made every such clone
            // a contended atomic (a 2-thread sweep ran 19 % slower per run than two
            // single-thread processes). The copy is small next to a run.
            let plan = Plan {
                settings,
                ..Plan::clone(&self.plan)
            };
            let model = Model::instantiate_declared(Arc::new(plan), built.blocks, decls)?;
            // As `compile`: settings the new values make absurd (a sample time giving
            // billions of time events) are refused before any run, naming the parameter.
            model.check_settings(model.settings())?;
            Ok(model)
        } else if recompile {
            compile(&d, reg)
        } else {
            Err(Error::Netlist {
                file: d.name.clone(),
                path: "parameters".into(),
                message: "these values change the model's structure (its blocks' ports, \
                          states or guards): it must be compiled anew"
                    .into(),
            })
        }
    }
}

/// An override `new` of a parameter whose netlist value `old` is a quantity with a unit
/// (`"80 km/h"`): a bare number is that quantity in SI units, so it is given the SI unit of
/// the old value's dimension (`22.2` → `"22.2 m/s"`), as a sweep's grid and `--set
/// speed=22.2` mean it. Anything else is returned as it is.
fn si_number_as_quantity(
    old: Option<&serde_json::Value>,
    new: &serde_json::Value,
) -> serde_json::Value {
    use serde_json::Value;
    let (Some(Value::String(old)), Value::Number(n)) = (old, new) else {
        return new.clone();
    };
    let dim = crate::expr::eval(old, &|_| None).ok().and_then(|q| q.dim);
    match (dim, n.as_f64()) {
        (Some(dim), Some(x)) if dim != crate::units::Dim::ONE => {
            Value::String(format!("{x:?} {}", dim.ascii()))
        }
        _ => new.clone(),
    }
}

/// A parameter override whose unit is of another kind than the netlist's literal value
/// of the parameter (`clutchRise = "0.4 kg"` for `"0.2 s"`): the message, or `None` when
/// they fit or either side is not a plain quantity with a unit (a bare number is taken in
/// SI units; an expression of other parameters is checked where it is used).
pub fn unit_mismatch(
    name: &str,
    old: &serde_json::Value,
    new: &serde_json::Value,
) -> Option<String> {
    use serde_json::Value;
    let (Value::String(old), Value::String(new)) = (old, new) else {
        return None;
    };
    let was = crate::expr::eval(old, &|_| None).ok()?.dim?;
    let now = crate::expr::eval(new, &|_| None).ok()?.dim?;
    let text = |d: crate::units::Dim| {
        d.derived_name()
            .map_or_else(|| d.to_string(), str::to_string)
    };
    (was != now).then(|| {
        format!(
            "\"{new}\" is in {} but parameter '{name}' is in {} (the netlist gives \"{old}\")",
            text(now),
            text(was)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::si_number_as_quantity;
    use serde_json::json;

    #[test]
    fn a_bare_number_overriding_a_quantity_is_that_quantity_in_si_units() {
        let speed = json!("80 km/h");
        let v = si_number_as_quantity(Some(&speed), &json!(16.666666666666668));
        let q = crate::expr::eval(v.as_str().expect("a quantity"), &|_| None).expect("parses");
        assert_eq!(q.value, 16.666666666666668);
        assert_eq!(
            q.dim,
            crate::expr::eval("1 m/s", &|_| None).expect("m/s").dim
        );
        // Torque, and a tiny value in exponent form.
        let torque = json!("1500 N*m");
        let v = si_number_as_quantity(Some(&torque), &json!(1.5e-7));
        let q = crate::expr::eval(v.as_str().expect("a quantity"), &|_| None).expect("parses");
        assert_eq!(q.value, 1.5e-7);
        // Dimensionless old values, strings and plain numbers are left alone.
        assert_eq!(
            si_number_as_quantity(Some(&json!("180 deg")), &json!(2.0)),
            json!(2.0)
        );
        assert_eq!(
            si_number_as_quantity(Some(&json!(3)), &json!(2.0)),
            json!(2.0)
        );
        assert_eq!(
            si_number_as_quantity(Some(&speed), &json!("50 km/h")),
            json!("50 km/h")
        );
        assert_eq!(si_number_as_quantity(None, &json!(2.0)), json!(2.0));
    }
}
