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
    /// The embedded plotly.js could not be found in the `plotly` crate's offline sources.
    #[error("the plotly crate's embedded plotly.js was not found (plotly crate version changed?)")]
    NoPlotlyJs,
}
