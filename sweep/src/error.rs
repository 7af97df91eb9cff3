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
    #[error("{flag}{}{text}: {message}", if text.is_empty() { "" } else { " " })]
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

    /// The same error in the terms of the Python package: each command-line option is
    /// named as the argument of `drivelink.sweep` that gives it (`--grid` as `grid`,
    /// `--metric` as `metrics`, `--stop-time` as `stop_time`, `--samples N` as
    /// `samples=N`, `--force` as `force=True`), in the names and in the messages.
    pub fn in_python_terms(&self) -> SweepError {
        let t = |s: &String| python_terms(s);
        match self {
            SweepError::Arg {
                flag,
                text,
                message,
            } => SweepError::Arg {
                flag: t(flag),
                text: text.clone(),
                message: t(message),
            },
            SweepError::UnknownParam {
                flag,
                name,
                hint,
                known,
            } => SweepError::UnknownParam {
                flag: t(flag),
                name: name.clone(),
                hint: hint.clone(),
                known: known.clone(),
            },
            SweepError::Value {
                flag,
                name,
                message,
            } => SweepError::Value {
                flag: t(flag),
                name: name.clone(),
                message: t(message),
            },
            // The metric's own name says which one: "--metric v:" becomes "metrics v:".
            SweepError::Metric { name, message } => SweepError::Arg {
                flag: "metrics".into(),
                text: name.clone(),
                message: t(message),
            },
            SweepError::Many(v) => {
                SweepError::Many(v.iter().map(|e| e.in_python_terms()).collect())
            }
            e => e.clone(),
        }
    }

    pub(crate) fn io(path: impl fmt::Display, e: impl fmt::Display) -> SweepError {
        SweepError::Io {
            path: path.to_string(),
            message: e.to_string(),
        }
    }
}

/// `text` with the command-line options of a study named as the arguments of
/// `drivelink.sweep` (see [`SweepError::in_python_terms`]).
fn python_terms(text: &str) -> String {
    // Longest first, so "--samples N" is not read as "--samples".
    const TERMS: [(&str, &str); 12] = [
        ("--samples N", "samples=N"),
        ("--stop-time", "stop_time"),
        ("--samples", "samples"),
        ("--metric", "metrics"),
        ("--sampling", "sampling"),
        ("--grid", "grid"),
        ("--dist", "dist"),
        ("--seed", "seed"),
        ("--set", "set"),
        ("--jobs", "jobs"),
        ("--shard", "shard"),
        ("--force", "force=True"),
    ];
    let mut out = text.to_string();
    for (cli, py) in TERMS {
        out = out.replace(cli, py);
    }
    out.replace("--out", "out")
}

#[cfg(test)]
mod tests {
    use super::SweepError;

    #[test]
    fn an_argument_error_without_text_has_no_stray_space() {
        let e = SweepError::Arg {
            flag: "--grid".into(),
            text: String::new(),
            message: "a study needs at least one --grid".into(),
        };
        assert_eq!(e.to_string(), "--grid: a study needs at least one --grid");
    }

    #[test]
    fn python_errors_name_the_python_arguments_not_the_cli_flags() {
        let e = SweepError::Many(vec![
            SweepError::Arg {
                flag: "--samples".into(),
                text: "3".into(),
                message: "sampling needs at least one --dist NAME=uniform(a,b)".into(),
            },
            SweepError::Value {
                flag: "--grid".into(),
                name: "T".into(),
                message: "parameter 'T' is already given by --set; give each parameter once".into(),
            },
            SweepError::Metric {
                name: "v".into(),
                message: "unknown signal 'x'".into(),
            },
            SweepError::Arg {
                flag: "--dist".into(),
                text: "J=uniform(1,2)".into(),
                message: "sampled parameters need --samples N".into(),
            },
            SweepError::Arg {
                flag: "--stop-time".into(),
                text: "x".into(),
                message: "bad".into(),
            },
        ]);
        assert_eq!(
            e.in_python_terms().lines("m.json"),
            [
                "samples 3: sampling needs at least one dist NAME=uniform(a,b)",
                "grid T: parameter 'T' is already given by set; give each parameter once",
                "metrics v: unknown signal 'x'",
                "dist J=uniform(1,2): sampled parameters need samples=N",
                "stop_time x: bad",
            ]
        );
    }
}
