//! Compile errors located in the netlist: a flattened block name mapped back to the JSON
//! path of its block (across inline and file subsystems), so that a compile error names
//! the file and the place in it.

use std::path::Path;

use drivelink_core::diagram::Diagram;
use drivelink_core::error::Error;
use drivelink_core::params::Registry;

/// The JSON path of a (flattened) block name: `blocks[2]`, `blocks[2].diagram.blocks[0]`,
/// or `blocks[2] -> crcr4.json: blocks[0]` across a subsystem file.
pub fn block_path(d: &Diagram, name: &str) -> Option<String> {
    let (first, rest) = match name.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (name, None),
    };
    let i = d.blocks.iter().position(|b| b.name == first)?;
    let here = format!("blocks[{i}]");
    let b = &d.blocks[i];
    match (rest, &b.inner) {
        (Some(rest), Some(inner)) => {
            let sub = block_path(inner, rest)?;
            Some(match &b.file {
                Some(f) => format!("{here} -> {f}: {sub}"),
                None => format!("{here}.diagram.{sub}"),
            })
        }
        _ => Some(here),
    }
}

/// Turn a compile error into an [`Error::Netlist`] naming `origin` and the JSON path of the
/// offending block, parameter, connection or variable (the message is the compile
/// error's). Loader errors pass through unchanged; several errors stay [`Error::Many`].
pub fn locate_error(d: &Diagram, _reg: &Registry, origin: &str, e: Error) -> Error {
    let conn = |ci: usize| -> String {
        // `compile` puts the top-level connections first in its flat list.
        if ci < d.connections.len() {
            format!("connections[{ci}]")
        } else {
            "connections".to_string()
        }
    };
    let blk = |name: &str, tail: &str| -> String {
        match block_path(d, name) {
            Some(p) => format!("{p}{tail}"),
            None => "blocks".to_string(),
        }
    };
    let path = match &e {
        Error::Many(v) => {
            return Error::Many(
                v.iter()
                    .cloned()
                    .map(|x| locate_error(d, _reg, origin, x))
                    .collect(),
            )
        }
        Error::Io { .. } => return e,
        Error::Netlist {
            file,
            path,
            message,
        } => {
            if file == origin || Path::new(file).is_file() {
                return e;
            }
            let p = if file == &d.name {
                path.clone()
            } else {
                blk(file, &format!(".{path}"))
            };
            return Error::Netlist {
                file: origin.to_string(),
                path: p,
                message: message.clone(),
            };
        }
        Error::Param(pe) => blk(&pe.block, &format!(".params.{}", pe.param)),
        Error::UnknownParam { block, param, .. } => blk(block, &format!(".params.{param}")),
        Error::UnknownType { block, .. } => blk(block, ".type"),
        Error::DuplicateName { name } | Error::InvalidName { name } => blk(name, ".name"),
        Error::UnknownBlock { connection, .. }
        | Error::UnknownPort { connection, .. }
        | Error::BadPortRef { connection, .. }
        | Error::KindMismatch { connection, .. }
        | Error::ShortConnection { connection, .. }
        | Error::SignalDrivers { connection, .. } => conn(*connection),
        Error::TwoDrivers { second, .. } => conn(*second),
        Error::UndrivenInput { block, .. } | Error::UnusedOutput { block, .. } => blk(block, ""),
        Error::AlgebraicLoop { .. } | Error::RoadProviders { .. } => "connections".to_string(),
        Error::RoadData { block, .. } => blk(block, ""),
        Error::SingularNetwork { .. }
        | Error::ConflictingInitial { .. }
        | Error::IsolatedHeatNodes { .. }
        | Error::ConflictingTemperature { .. } => "blocks".to_string(),
        Error::TemperatureWithoutCapacity { block, .. } => blk(block, ""),
        Error::FrameWithoutMass { frame } => match frame.rsplit_once('.') {
            Some((b, _)) => blk(b, ""),
            None => "blocks".to_string(),
        },
        Error::UnknownVariable { name, .. } => {
            if let Some(i) = d.log.iter().position(|l| l == name) {
                format!("log[{i}]")
            } else if let Some(i) = d
                .scopes
                .iter()
                .position(|s| s.signal_names().any(|n| n == name))
            {
                format!("scopes[{i}]")
            } else {
                "log".to_string()
            }
        }
        Error::ScopeUnit { scope, .. } | Error::UnknownDisplayUnit { scope, .. } => {
            match d.scopes.iter().position(|s| &s.name == scope) {
                Some(i) => format!("scopes[{i}]"),
                None => "scopes".to_string(),
            }
        }
    };
    Error::Netlist {
        file: origin.to_string(),
        path,
        message: e.to_string(),
    }
}
