//! drivelink-report: a run as one self-contained, interactive HTML page, and the block
//! diagram as SVG.
//!
//! [`render_report`] / [`write_report`] turn a [`SimResult`], its scopes, the energy audit
//! and optionally the diagram drawings into `report.html`: every scope as a plotly.js chart
//! (zoom, pan, hover values with units, legend toggles, event markers with block and kind),
//! the run summary, a Sankey chart and table of the energy audit, the event log as a
//! filterable table, and the block diagram with each subsystem's inner diagram. plotly.js
//! is embedded (a partial bundle with the trace types the report draws, vendored in
//! `assets/`), so the file opens offline in any browser.
//!
//! [`diagram`] lays a [`Diagram`](drivelink_core::Diagram) out left to right (layered,
//! with orthogonal lines) and writes SVG; the port lists come in as a [`diagram::PortTable`]
//! (built from a block [`Registry`](drivelink_core::Registry) by the caller), so this
//! crate does not depend on the block library.

pub mod charts;
pub mod diagram;
pub mod energy;
mod error;
pub mod events;
pub mod html;
mod js;
mod markup;
mod pool;

use std::path::Path;

use drivelink_core::model::EnergyAudit;
use drivelink_core::result::SimResult;
use drivelink_core::scope::ScopeSpec;

pub use diagram::{DiagramOptions, DiagramSvg, Drawing, Links, PortTable};
pub use error::ReportError;

/// Everything a report shows.
#[derive(Debug, Clone, Copy)]
pub struct ReportInput<'a> {
    /// The run.
    pub result: &'a SimResult,
    /// The scopes to chart (usually `result.scopes`).
    pub scopes: &'a [ScopeSpec],
    /// The energy audit of the run, when the model has one.
    pub energy: Option<&'a EnergyAudit>,
    /// The diagram: the top level first, then inner levels (see [`diagram::render`]).
    pub diagram: Option<&'a [DiagramSvg]>,
}

/// The plotly.js source every report embeds (the vendored partial bundle; never fails).
pub fn embedded_plotly_js() -> Result<&'static str, ReportError> {
    Ok(js::PLOTLY_JS)
}

/// The report page as HTML text. A scope that cannot be charted (unknown signal, unit) is
/// shown as an error message in its place; the rest of the report is unaffected.
pub fn render_report(input: &ReportInput<'_>) -> Result<String, ReportError> {
    html::page(input)
}

/// Writes the report page to `path`.
pub fn write_report(input: &ReportInput<'_>, path: &Path) -> Result<(), ReportError> {
    let html = render_report(input)?;
    std::fs::write(path, html).map_err(|source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    })
}
