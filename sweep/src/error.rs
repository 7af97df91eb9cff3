//! The one error type of drivelink-sweep. Every variant names the argument, parameter,
//! metric, signal or file at fault and says what was expected; all of them are found
//! before the first run starts.
//!
//! `Debug` prints the same message as `Display`, as in `drivelink-core`.

use std::fmt;

/// Errors of defining, running, writing and merging a study.
#[derive(Clone, PartialEq, thiserror::Error)]
pub enum SweepError {
    /// A malformed command-line argument (`--grid`, `--dist`, `--samples`, `--shard`, ...).
    #[error("{flag} {text}: {message}")]
    Arg {
        /// The option (`--grid`).
        flag: String,
        /// What the user gave.
        text: String,
        /// What was expected.
        message: String,
    },
    /// A swept, sampled or set parameter the model does not have.
    #[error(
        "{flag} {name}: unknown parameter '{name}'{hint}; the model's parameters are: {known}"
    )]
    UnknownParam {
        /// The option (`--grid`, `--dist`, `--set`).
        flag: String,
        /// The parameter name given.
        name: String,
        /// `" (did you mean 'x'?)"` or empty.
        hint: String,
        /// The model's parameters, comma-separated.
        known: String,
    },
    /// A value that does not fit the parameter (a word for a number, a torque for a time).
    #[error("{flag} {name}: {message}")]
    Value {
        /// The option.
        flag: String,
        /// The parameter.
        name: String,
        /// What is wrong and what was expected.
        message: String,
    },
    /// A bad metric: malformed expression, unknown signal, block, event kind or element.
    #[error("--metric {name}: {message}")]
    Metric {
        /// The metric's column name (or the whole argument when it has no name).
        name: String,
        /// What is wrong and what was expected.
        message: String,
    },
    /// The model does not load or compile (the located message of `drivelink validate`).
    #[error(transparent)]
    Model(#[from] drivelink_core::Error),
    /// A file that cannot be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The system's message.
        message: String,
    },
    /// A malformed study table or study file (`sweep.csv`, `study.json`).
    #[error("{path}: {message}")]
    Table {
        /// The file.
        path: String,
        /// Where (line, column) and what was expected.
        message: String,
    },
    /// Shards that do not form one study (different study ids, missing or repeated runs).
    #[error("sweep-merge: {message}")]
    Merge {
        /// What does not fit, naming the directories.
        message: String,
    },
    /// The study was cancelled through [`crate::Study::with_cancel`]'s flag (Ctrl-C).
    #[error("interrupted: the study was cancelled by its caller (Ctrl-C); no table was made")]
    Interrupted,
    /// Several errors, each on its own line.
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
    Many(Vec<SweepError>),
}

impl fmt::Debug for SweepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl SweepError {
    /// Collapse a list of errors: none -> Ok, one -> that error, several -> `Many`.
    pub fn from_list(mut errs: Vec<SweepError>) -> Result<(), SweepError> {
        match errs.len() {
            0 => Ok(()),
            1 => Err(errs.remove(0)),
            _ => Err(SweepError::Many(errs)),
        }
    }

    /// The messages a user sees, one per individual error; model errors are located in
    /// the netlist `file` as `drivelink validate` prints them.
    pub fn lines(&self, file: &str) -> Vec<String> {
        match self {
            SweepError::Many(v) => v.iter().flat_map(|e| e.lines(file)).collect(),
            SweepError::Model(e) => e.lines(file),
            e => vec![e.to_string()],
        }
    }

    pub(crate) fn io(path: impl fmt::Display, e: impl fmt::Display) -> SweepError {
        SweepError::Io {
            path: path.to_string(),
            message: e.to_string(),
        }
    }
}
