//! The errors of opening and instantiating an FMU. Each names the FMU file; the block
//! turns them into a [`drivelink_core::ParamError`] naming the block and the parameter.

/// Why an FMU cannot be used as a block.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FmuError {
    #[error("'{file}' cannot be read: {reason}")]
    Read { file: String, reason: String },
    #[error("'{file}' is not an FMU (not a readable zip archive): {reason}")]
    NotZip { file: String, reason: String },
    #[error("'{file}' is corrupt: {reason}")]
    Corrupt { file: String, reason: String },
    #[error(
        "'{file}' has no modelDescription.xml at the root of its archive, so it is not an FMU"
    )]
    NoDescription { file: String },
    #[error("'{file}': modelDescription.xml {reason}")]
    BadDescription { file: String, reason: String },
    #[error("'{file}' is an FMI {version} FMU; the Fmu block imports FMI 3.0 and 2.0 (supported versions: 3.0, 2.0)")]
    Version { file: String, version: String },
    #[error("'{file}' offers no Co-Simulation (it offers: {offered}); kind \"cs\" needs it")]
    NoCoSimulation { file: String, offered: String },
    #[error("'{file}' offers no Model Exchange (it offers: {offered}); kind \"me\" needs it: import it with kind \"cs\"")]
    NoModelExchange { file: String, offered: String },
    #[error("'{file}' offers neither Model Exchange nor Co-Simulation (it offers: {offered})")]
    NoInterface { file: String, offered: String },

    #[error("'{file}' has no binary for this platform: {expected} is not in the archive (its binaries: {found})")]
    NoBinary {
        file: String,
        expected: String,
        found: String,
    },
    #[error("'{file}': cannot load its binary {binary}: {reason}")]
    Load {
        file: String,
        binary: String,
        reason: String,
    },
    #[error("'{file}': the FMU variables '{first}' and '{second}' both become port '{port}'")]
    PortClash {
        file: String,
        first: String,
        second: String,
        port: String,
    },
    #[error("'{file}' has no variable '{name}'{hint}")]
    UnknownVariable {
        file: String,
        name: String,
        hint: String,
    },
    #[error("'{file}': '{name}' is {what} of the FMU; only its parameters can be given")]
    NotParameter {
        file: String,
        name: String,
        what: String,
    },
    #[error("'{file}': the value of '{name}' {reason}")]
    BadValue {
        file: String,
        name: String,
        reason: String,
    },
    #[error("'{file}': {reason}")]
    Unsupported { file: String, reason: String },
    #[error("'{file}': {call}")]
    Call { file: String, call: String },
}
