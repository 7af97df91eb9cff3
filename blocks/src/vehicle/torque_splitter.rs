//! `TorqueSplitter`: the centre differential of a four-wheel drive, a [`Differential`]
//! whose carrier torque goes to its outputs in the fixed ratio `front_share : 1 −
//! front_share` instead of 50/50, with the same couplings between the outputs.
//!
//! Ports: `input[rot]` (from the gearbox), `front[rot]`, `rear[rot]` (the propeller shafts
//! to the axle differentials), `heat[heat]` (optional). The kinematic row is
//! `w_input = gear_ratio·(front_share·w_front + (1 − front_share)·w_rear)`; its force
//! `λ = T_in` gives the outputs `gear_ratio·front_share·T_in` and
//! `gear_ratio·(1 − front_share)·T_in` (power balance `T_in·w_input = τ_f·w_front +
//! τ_r·w_rear`), as a planetary centre differential does. The coupling `type`:
//!
//! - `"open"` (the default): the split is exactly `front_share` whatever the shafts do;
//! - `"locked"`: front and rear shafts turn at one speed (the coupling is a stuck joint of
//!   the network on `w_rel = w_rear − w_front`), the torques follow the grip;
//! - `"viscous"`, `"clutch"`: the `Differential`'s viscous coupling and clutch pack, with
//!   its parameters and its power/coast torque sensing (see `differential.rs`); their
//!   capacities refer to `T_c/2`, half the carrier torque, as on an axle (the mean of what
//!   a locked coupling transfers with the front or the rear shaft free).
//!
//! Variables: `w_front`, `w_rear`, `tau_front`, `tau_rear` (torques delivered to the
//! shafts), `tau_input`, `transfer` (coupling torque from front to rear), `w_rel`, `mode`,
//! and the `Differential`'s others.

use drivelink_core::{
    Block, BlockBuild, BlockType, ParamDefault, ParamError, ParamKind, ParamSpec, Params, Registry,
};
use serde_json::json;

use super::differential::{coupling_specs, sensing_specs, DiffType, Differential, Layout};

/// The centre differential: front and rear.
const CENTRE: Layout = Layout {
    ports: ["front", "rear"],
    w: ["w_front", "w_rear"],
    tau: ["tau_front", "tau_rear"],
    w_doc: ["front output shaft speed", "rear output shaft speed"],
    tau_doc: [
        "torque delivered to the front output shaft",
        "torque delivered to the rear output shaft",
    ],
    w_rel_doc: "w_rear − w_front",
};

pub(crate) fn register(r: &mut Registry) {
    r.register(torque_splitter_type());
}

/// The `TorqueSplitter` block type: its parameters and how it is built.
fn torque_splitter_type() -> BlockType {
    let mut params = vec![
        ParamSpec::with("type", ParamKind::Choice(&["open", "locked", "viscous", "clutch"]), ParamDefault::Value(json!("open")), "coupling between the front and rear shafts: open (fixed split front_share), locked, viscous or clutch (the Differential's viscous coupling and clutch pack, same parameters)"),
        ParamSpec::number("front_share", "1", 0.4, "share of the carrier torque delivered to the front shaft, in (0, 1): the fixed split of the open centre differential"),
        ParamSpec::number("gear_ratio", "1", 1.0, "input to output reduction ratio (> 0; a transfer case's ratio, 1 when there is none)"),
    ];
    params.extend(coupling_specs());
    params.extend(sensing_specs());
    BlockType {
        name: "TorqueSplitter",
        category: "vehicle",
        doc: "Centre differential of a four-wheel drive: w_input = gear_ratio·(front_share·w_front + (1 − front_share)·w_rear), so the front shaft receives front_share of the carrier torque and the rear shaft the rest (open), or a coupling between the shafts (locked, viscous, clutch) with the Differential's equations and parameters, handled by the stuck/slip event machine.",
        ports_doc: "input[rot], front[rot], rear[rot], heat[heat] (optional)",
        params,
        build: BlockBuild::Primitive(build),
    }
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let kind = match p.text("type")? {
        "open" => DiffType::Open,
        "locked" => DiffType::Locked,
        "viscous" => DiffType::Viscous,
        "clutch" => DiffType::ClutchPack,
        other => {
            return Err(p.invalid(
                "type",
                format!("unknown type '{other}' (open, locked, viscous, clutch)"),
            ))
        }
    };
    let share = p.num("front_share")?;
    if !(share > 0.0 && share < 1.0) {
        return Err(p.invalid(
            "front_share",
            format!("must be in (0, 1) (the front shaft's share of the torque), got {share}"),
        ));
    }
    Ok(Box::new(Differential::from_params(
        p, kind, share, &CENTRE,
    )?))
}
