//! The embedded DejaVu Sans font, registered once with plotters' `ab_glyph` text support
//! (no system font libraries needed).

use std::sync::OnceLock;

use plotters::style::FontStyle;

/// Font family name used for every text drawn by this crate.
pub const FAMILY: &str = "DejaVu Sans";

static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();

/// Registers DejaVu Sans (regular and bold) under [`FAMILY`]; later calls are free.
pub fn ensure_registered() -> Result<(), String> {
    REGISTERED
        .get_or_init(|| {
            let fonts = [
                (FontStyle::Normal, dejavu::sans::regular()),
                (FontStyle::Bold, dejavu::sans::bold()),
            ];
            for (style, bytes) in fonts {
                plotters::style::register_font(FAMILY, style, bytes)
                    .map_err(|_| format!("cannot load the embedded {FAMILY} font"))?;
            }
            Ok(())
        })
        .clone()
}
