//! drivelink-blocks: the block library and its registry.
//!
//! Categories follow Modelica's layout: `signal` (sources, math, continuous, discrete,
//! sinks), `mech` (rotational and translational components, friction elements, sensors),
//! `powertrain` (engine, torque converter, CR-CR 4-speed), `vehicle` (tires, body,
//! differentials, brakes, ABS), `driveline` (backlash, lossy gears, synchronizers, dog
//! clutches, manual gearbox, eddy current brake), `thermal` (heat capacitors, conductors,
//! convection, fixed temperatures). Blocks do no I/O and hold no solver state.

// Parameter checks are written `!(x > 0.0)` on purpose: they reject NaN as well.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod driveline;
pub mod mech;
pub mod powertrain;
pub mod signal;
pub mod thermal;
pub mod util;
pub mod vehicle;

use drivelink_core::Block;
use drivelink_core::{
    BlockBuild, BlockType, ParamDefault, ParamError, ParamSpec, ParamValue, Params, Registry,
};

/// The registry of every library block.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    signal::register(&mut r);
    mech::register(&mut r);
    powertrain::register(&mut r);
    vehicle::register(&mut r);
    driveline::register(&mut r);
    thermal::register(&mut r);
    register_abs(&mut r);
    drivelink_fmu_import::register(&mut r);
    r
}

/// `Abs` names two blocks in the catalogue (NETLIST.md): the math block `|u|` (u -> y, no
/// parameters) and the vehicle ABS controller (demand, slip -> torque, with the brakes
/// seed's parameters). One registered type serves both: without parameters it is `|u|`;
/// with any ABS parameter (for example `"enabled": true`) it is the controller, the
/// parameters not given taking the seed's defaults. It is the only type of that name: the
/// signal and vehicle modules provide its two builds (`signal::math::build_abs_value`,
/// `vehicle::abs::specs`) and register nothing under it.
fn register_abs(r: &mut Registry) {
    let params: Vec<ParamSpec> = vehicle::abs::specs()
        .into_iter()
        .map(|mut s| {
            s.default = ParamDefault::Optional;
            s
        })
        .collect();
    r.register(BlockType {
        name: "Abs",
        category: "signal / vehicle",
        doc: "Without parameters: y = |u| (math, located sign changes). With any parameter: the anti-lock braking controller (demand, slip -> torque), every unspecified parameter at its seed default (enabled=false, mode=simple, trigger=peak_slip_offset, min_slip_offset=0.3, max_slip_offset=1.5, min_slip=0.5, max_slip=5, min_pressure_ratio=0.25, valve_positions=2, cycle_time=0.01 s). With trigger peak_slip_offset the peak slip comes from the controlled tire: connect Tire.peak_slip to the peak_slip input, or give the peak_slip parameter; with neither the model does not compile (no default).",
        params,
        build: BlockBuild::Primitive(build_abs),
        ports_doc: "u[in] -> y[out] (no parameters); demand[in], slip[in], peak_slip[in] -> torque[out] (ABS controller; peak_slip required with trigger peak_slip_offset unless the parameter is given)",
    });
}

fn build_abs(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    if p.values.is_empty() {
        return signal::math::build_abs_value(p);
    }
    let mut full = p.clone();
    for spec in vehicle::abs::specs() {
        if full.values.contains_key(spec.name) {
            continue;
        }
        let v = match &spec.default {
            ParamDefault::Value(serde_json::Value::Number(n)) => {
                ParamValue::Number(n.as_f64().unwrap_or(f64::NAN))
            }
            ParamDefault::Value(serde_json::Value::Bool(b)) => ParamValue::Bool(*b),
            ParamDefault::Value(serde_json::Value::String(s)) => ParamValue::Text(s.clone()),
            _ => continue,
        };
        full.values.insert(spec.name.to_string(), v);
    }
    vehicle::abs::build(&full)
}
