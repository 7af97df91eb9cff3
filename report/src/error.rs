//! Errors of the report crate ([`ReportError`]).

use std::path::PathBuf;

/// Why a report or diagram could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Writing a file failed.
    #[error("cannot write `{}`: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The layered layout failed on a diagram level.
    #[error("diagram `{diagram}`: {message}")]
    Layout { diagram: String, message: String },
}
