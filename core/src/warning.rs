//! [`CompileWarning`]: what compilation tells the user without stopping the model. Its own
//! module so that the plan (which keeps the warnings) and the compiler (which finds them)
//! both use it without importing each other.

/// Something worth telling the user that does not stop the model from running.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompileWarning {
    /// A mechanical port joined to nothing: its block acts on a node of its own.
    #[error("flange '{block}.{port}' is not connected to anything; the block acts on a shaft of its own")]
    UnconnectedFlange { block: String, port: String },
    /// A heat port of a thermal element joined to nothing: a thermal node of its own.
    #[error(
        "heat port '{block}.{port}' is not connected to anything; it is a thermal node of its own"
    )]
    UnconnectedHeatPort { block: String, port: String },
    /// A block that is off unless `"enabled": true` is given, given other parameters but
    /// not `enabled`: it does nothing (an `Abs` tuned but left disabled).
    #[error(
        "block '{block}' is given {} but not \"enabled\": it is disabled and does nothing; add \"enabled\": true (or write \"enabled\": false to keep it off)",
        given.join(", ")
    )]
    DisabledWithSettings { block: String, given: Vec<String> },
}
