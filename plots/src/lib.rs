//! drivelink-plots: scope rendering (PNG and SVG) of simulation results.
//!
//! A [`ScopeSpec`] describes one image: a title, panels stacked vertically that share the
//! time axis, each panel with one or more signals (optionally converted to a display unit
//! such as `rpm` or `km/h`). [`render_scope_png`] and [`render_scope_svg`] draw one scope,
//! [`write_scopes`] writes a set of scopes to a directory, and [`quick_scope`] builds a
//! single-panel scope for the command line (`drivelink plot results.csv --signals a,b`).
//!
//! Rendering needs no system library: text uses the embedded DejaVu Sans font. PNG text is
//! laid out from the font's advance widths, kerning and side bearings by the crate's own
//! glyph layout (plotters' raster text drops side bearings); SVG text is left to the viewer. Large results are decimated per pixel column
//! (min/max/first/last), so 10^6 samples plot quickly and no peak disappears. Output is
//! deterministic: the same input gives byte-identical files.
//!
//! Any finite value plots ([`axis`]: power-of-ten scaled axes, bounded tick search);
//! NaN and infinite samples are skipped (the line breaks there). A panel takes signals of
//! up to two display units (left and right y axis, [`signals`]); equal traces get distinct
//! dash styles. [`View`] selects a time window (`drivelink plot --xlim`).

pub mod axis;
mod clip;
pub mod decimate;
mod error;
mod font;
mod render;
mod scale;
pub mod signals;
mod text;

use std::path::{Path, PathBuf};

use drivelink_results::result::SimResult;
use drivelink_results::scope::{ScopeSignal, ScopeSpec};
use plotters::prelude::*;

pub use error::PlotError;
pub use font::FAMILY as FONT_FAMILY;
pub use render::PALETTE;
pub use signals::check_scope;

/// What part of a result a scope shows (beyond the scope's own settings such as `ylim`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View {
    /// Time window `[start, end]` in seconds; `None` shows every sample.
    pub xlim: Option<(f64, f64)>,
    /// Title of the x axis; `None` is `time [s]` (a table plotted against another column
    /// names that column).
    pub x_title: Option<String>,
}

/// Renders one scope as PNG file bytes (RGB, 8 bit, `scope.width` x `scope.height`).
pub fn render_scope_png(result: &SimResult, scope: &ScopeSpec) -> Result<Vec<u8>, PlotError> {
    render_scope_png_view(result, scope, &View::default())
}

/// Renders one scope as PNG file bytes, showing the time window of `view`.
pub fn render_scope_png_view(
    result: &SimResult,
    scope: &ScopeSpec,
    view: &View,
) -> Result<Vec<u8>, PlotError> {
    let plan = render::Plan::new(result, scope, view)?;
    let (w, h) = plan.size();
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let bitmap = BitMapBackend::with_buffer(&mut rgb, (w, h));
        let root = text::GlyphBackend::new(bitmap).into_drawing_area();
        plan.draw(&root, true)?;
        root.present().map_err(|e| drawing(scope, e))?;
    }
    encode_png(&rgb, w, h).map_err(|e| drawing(scope, e))
}

/// Renders one scope as an SVG document.
pub fn render_scope_svg(result: &SimResult, scope: &ScopeSpec) -> Result<String, PlotError> {
    render_scope_svg_view(result, scope, &View::default())
}

/// Renders one scope as an SVG document, showing the time window of `view`.
pub fn render_scope_svg_view(
    result: &SimResult,
    scope: &ScopeSpec,
    view: &View,
) -> Result<String, PlotError> {
    let plan = render::Plan::new(result, scope, view)?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, plan.size()).into_drawing_area();
        plan.draw(&root, false)?;
        root.present().map_err(|e| drawing(scope, e))?;
    }
    Ok(svg)
}

/// Writes `<scope.name>.png` (and `<scope.name>.svg` when `svg`) for every scope into `dir`
/// (created if missing). Returns the written paths in order. Characters that cannot be part
/// of a file name (`/`, `\`, `:`, control characters) are replaced by `_`.
pub fn write_scopes(
    result: &SimResult,
    scopes: &[ScopeSpec],
    dir: &Path,
    svg: bool,
) -> Result<Vec<PathBuf>, PlotError> {
    let io_err = |scope: &ScopeSpec, path: &Path, source| PlotError::Io {
        scope: scope.name.clone(),
        path: path.to_path_buf(),
        source,
    };
    let mut written = Vec::new();
    for scope in scopes {
        std::fs::create_dir_all(dir).map_err(|e| io_err(scope, dir, e))?;
        let stem = file_stem(&scope.name);
        let png = render_scope_png(result, scope)?;
        let path = dir.join(format!("{stem}.png"));
        std::fs::write(&path, png).map_err(|e| io_err(scope, &path, e))?;
        written.push(path);
        if svg {
            let text = render_scope_svg(result, scope)?;
            let path = dir.join(format!("{stem}.svg"));
            std::fs::write(&path, text).map_err(|e| io_err(scope, &path, e))?;
            written.push(path);
        }
    }
    Ok(written)
}

/// A single-panel scope of `signals`, all in display unit `unit` (SI when `None`), at the
/// default size; for `drivelink plot results.csv --signals a,b --unit rpm`.
pub fn quick_scope(name: &str, signals: &[&str], unit: Option<&str>) -> ScopeSpec {
    let mut scope = ScopeSpec::new(name, signals.iter().map(|s| ScopeSignal::new(*s)).collect());
    scope.unit = unit.map(str::to_string);
    scope
}

fn drawing(scope: &ScopeSpec, e: impl std::fmt::Display) -> PlotError {
    PlotError::Drawing {
        scope: scope.name.clone(),
        message: e.to_string(),
    }
}

fn file_stem(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    if s.is_empty() {
        "scope".to_string()
    } else {
        s
    }
}

fn encode_png(rgb: &[u8], w: u32, h: u32) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        let mut writer = enc.write_header()?;
        writer.write_image_data(rgb)?;
        writer.finish()?;
    }
    Ok(out)
}
