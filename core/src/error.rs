//! The one error type of drivelink-core. Every variant names the offending block, port,
//! parameter, variable or netlist path, and says what was expected.
//!
//! `Debug` prints the same message as `Display`: a `main` that returns
//! `Result<(), drivelink_core::Error>` and propagates with `?` shows the user the message
//! (`Error: block 'c': unknown block type 'FrictionClutch' ...`), not the variant's fields.
//! Match on the variants to inspect the fields.

use std::fmt;

/// A bad block parameter.
#[derive(Clone, PartialEq, thiserror::Error)]
#[error("block '{block}': parameter '{param}' {message}")]
pub struct ParamError {
    pub block: String,
    pub param: String,
    pub message: String,
}

/// Errors of building, validating, compiling, loading and running models.
#[derive(Clone, PartialEq, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error("duplicate block name '{name}'")]
    DuplicateName { name: String },
    #[error("invalid block name '{name}': names must match [A-Za-z_][A-Za-z0-9_]*")]
    InvalidName { name: String },
    #[error("block '{block}': unknown block type '{type_name}'{hint}")]
    UnknownType {
        block: String,
        type_name: String,
        hint: String,
    },
    #[error("block '{block}' ({type_name}): unknown parameter '{param}'{hint}; known parameters: {known}")]
    UnknownParam {
        block: String,
        type_name: String,
        param: String,
        hint: String,
        known: String,
    },
    #[error("connection {connection}: unknown block '{block}'{hint}")]
    UnknownBlock {
        connection: usize,
        block: String,
        hint: String,
    },
    #[error("connection {connection}: block '{block}' ({type_name}) has no port '{port}'{hint}; its ports are {ports}")]
    UnknownPort {
        connection: usize,
        block: String,
        type_name: String,
        port: String,
        hint: String,
        ports: String,
    },
    #[error("connection {connection}: '{text}' is not a port reference; expected \"block.port\"")]
    BadPortRef { connection: usize, text: String },
    #[error("connection {connection} joins ports of different kinds: {details}")]
    KindMismatch { connection: usize, details: String },
    #[error("connection {connection} has {count} port(s); a connection needs at least two")]
    ShortConnection { connection: usize, count: usize },
    #[error("connection {connection}: a signal line needs exactly one output, it has {outputs}: {details}")]
    SignalDrivers {
        connection: usize,
        outputs: usize,
        details: String,
    },
    #[error("input '{block}.{port}' is driven twice (connections {first} and {second})")]
    TwoDrivers {
        block: String,
        port: String,
        first: usize,
        second: usize,
    },
    #[error("the road line joining {ports} has {providers} road provider(s); a road line needs exactly one (the 'surface' port of a Road block), e.g. [\"road.surface\", \"wheel_fl.road\", \"wheel_fr.road\"]")]
    RoadProviders {
        /// The line's ports, `block.port [kind]`, comma-separated.
        ports: String,
        providers: usize,
    },
    #[error("road port '{block}.{port}': {message}")]
    RoadData {
        block: String,
        port: String,
        message: String,
    },
    #[error("input '{block}.{port}' has no driver; connect a signal to it")]
    UndrivenInput { block: String, port: String },
    /// An output the block needs connected drives nothing (`PortDecl::must_drive`).
    #[error("output '{block}.{port}' drives nothing; {why}")]
    UnusedOutput {
        block: String,
        port: String,
        why: &'static str,
    },
    #[error("algebraic loop through blocks: {}", blocks.join(" -> "))]
    AlgebraicLoop { blocks: Vec<String> },
    #[error("the mechanical network is singular: nodes {} have no inertia in a direction the constraints leave free; {}", nodes.join(", "), singular_advice(unconnected))]
    SingularNetwork {
        nodes: Vec<String>,
        /// Those of `nodes` that are a single flange joined to nothing.
        unconnected: Vec<String>,
    },
    #[error("frame '{frame}' has no mass: connect a RigidBody (with m > 0 and inertia > 0) to it; every rigid body needs mass and inertia")]
    FrameWithoutMass { frame: String },
    #[error("node {node}: conflicting initial speeds {first} and {second} from {blocks}")]
    ConflictingInitial {
        node: String,
        first: f64,
        second: f64,
        blocks: String,
    },
    #[error("thermal nodes {} have no heat capacity, no fixed temperature and no conductor path to one, so their temperature is undefined; connect a HeatCapacitor, a FixedTemperature, or a ThermalConductor/Convection to one", nodes.join(", "))]
    IsolatedHeatNodes { nodes: Vec<String> },
    #[error("block '{block}' reads the temperature of its heat port '{port}' in its torque law, but thermal node {node} has no heat capacity or fixed temperature (its temperature would depend on the block's own loss in the same instant); connect a HeatCapacitor or a FixedTemperature to it")]
    TemperatureWithoutCapacity {
        block: String,
        port: String,
        node: String,
    },
    #[error("thermal node {node}: conflicting {what} {first} K and {second} K from {blocks}")]
    ConflictingTemperature {
        node: String,
        /// "initial temperatures" or "fixed temperatures".
        what: String,
        first: f64,
        second: f64,
        blocks: String,
    },
    #[error("unknown variable '{name}'{hint}{known}")]
    UnknownVariable {
        name: String,
        hint: String,
        /// The variables of the named block when the block exists
        /// (`"; block 'J1' has: J1.a, J1.phi, J1.w"`), else empty.
        known: String,
    },
    #[error("scope '{scope}': signal '{signal}' is {si} but the display unit '{unit}' is {unit_dim}; use a unit of the signal's dimension")]
    ScopeUnit {
        scope: String,
        signal: String,
        unit: String,
        unit_dim: String,
        si: String,
    },
    #[error("scope '{scope}': unknown display unit '{unit}'; use a unit expression such as {}", known.join(", "))]
    UnknownDisplayUnit {
        scope: String,
        unit: String,
        known: Vec<&'static str>,
    },
    #[error("{file}: {path}: {message}")]
    Netlist {
        file: String,
        path: String,
        message: String,
    },
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
    Many(Vec<Error>),
    #[error("I/O error on {path}: {message}")]
    Io { path: String, message: String },
}

/// The user-facing message (same as `Display`), so `?` from `main` prints it.
impl fmt::Debug for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The user-facing message (same as `Display`), so `?` from `main` prints it.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Error {
    /// Collapse a list of errors: none -> Ok, one -> that error, several -> `Many`.
    pub fn from_list(mut errs: Vec<Error>) -> Result<(), Error> {
        match errs.len() {
            0 => Ok(()),
            1 => Err(errs.remove(0)),
            _ => Err(Error::Many(errs)),
        }
    }
    /// The messages a user sees for a model file `file`, one per individual error: a
    /// netlist or I/O error names its file already, any other is prefixed with `file: `
    /// (what `drivelink validate` prints after `error: `).
    pub fn lines(&self, file: &str) -> Vec<String> {
        self.flatten()
            .into_iter()
            .map(|e| match e {
                Error::Netlist { .. } | Error::Io { .. } => e.to_string(),
                other => format!("{file}: {other}"),
            })
            .collect()
    }
    /// All individual errors.
    pub fn flatten(&self) -> Vec<&Error> {
        match self {
            Error::Many(v) => v.iter().flat_map(|e| e.flatten()).collect(),
            e => vec![e],
        }
    }
}

/// What to do about a singular network: connect the lone flanges among its nodes (a
/// massless element's flange left open), else add inertia or constraints.
fn singular_advice(unconnected: &[String]) -> String {
    if unconnected.is_empty() {
        "add an Inertia/Mass there or constrain them".to_string()
    } else {
        format!(
            "{} {} not connected to anything: connect {} to a shaft with inertia or to a Fixed (ground)",
            unconnected.join(", "),
            if unconnected.len() == 1 { "is" } else { "are" },
            if unconnected.len() == 1 { "it" } else { "them" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_prints_the_user_message_not_the_fields() {
        let e = Error::UnknownType {
            block: "c".into(),
            type_name: "FrictionClutch".into(),
            hint: " (did you mean 'Clutch'?)".into(),
        };
        let msg = "block 'c': unknown block type 'FrictionClutch' (did you mean 'Clutch'?)";
        assert_eq!(e.to_string(), msg);
        assert_eq!(format!("{e:?}"), msg);
        assert_eq!(format!("{e:#?}"), msg);
        let p = ParamError {
            block: "J".into(),
            param: "J".into(),
            message: "must be > 0, got -1".into(),
        };
        assert_eq!(
            format!("{p:?}"),
            "block 'J': parameter 'J' must be > 0, got -1"
        );
        assert_eq!(format!("{:?}", Error::Param(p.clone())), p.to_string());
        let many = Error::Many(vec![Error::Param(p), e]);
        assert_eq!(format!("{many:?}"), many.to_string());
        assert_eq!(many.to_string().lines().count(), 2);
    }
}
