//! Text layout and rasterisation for raster (PNG) scopes.
//!
//! plotters' own `ab_glyph` text drawing places every glyph's ink at the pen position,
//! dropping the glyph's left side bearing, and truncates the pen to whole pixels: letters
//! run together (`cl` reads as `d`) or fall apart (`tim e`). Here a line of text is laid out
//! from the font's metrics: each glyph's origin is the pen position (advance widths plus
//! kerning, kept in fractional pixels: the glyph is rasterised at its sub-pixel position, so
//! the gaps between letters are the font's own, within anti-aliasing), and its ink is drawn
//! where the outline puts it, side bearings included. The line starts on a whole pixel and
//! the baseline is a pixel row.
//!
//! [`GlyphBackend`] wraps any plotters backend and replaces its text drawing and text
//! measuring with this layout; everything else is passed through unchanged. Anchors follow
//! the SVG backend: `Top` puts the top of the capitals at the anchor, `Center` centres the
//! capitals (digits) on it, `Bottom` puts the descenders on it.

use std::sync::OnceLock;

use ab_glyph::{point, Font, FontRef, GlyphId, PxScale, ScaleFont};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
    FontStyle,
};

/// The regular and bold faces of the embedded DejaVu Sans.
struct Faces {
    regular: FontRef<'static>,
    bold: FontRef<'static>,
}

static FACES: OnceLock<Option<Faces>> = OnceLock::new();

fn faces() -> Option<&'static Faces> {
    FACES
        .get_or_init(|| {
            Some(Faces {
                regular: FontRef::try_from_slice(dejavu::sans::regular()).ok()?,
                bold: FontRef::try_from_slice(dejavu::sans::bold()).ok()?,
            })
        })
        .as_ref()
}

/// The font error of a text that cannot be laid out (the embedded font failed to load).
#[derive(Debug)]
pub struct NoFont;

impl std::fmt::Display for NoFont {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("cannot load the embedded DejaVu Sans font")
    }
}

impl std::error::Error for NoFont {}

/// One line of text laid out at a font size (plotters' size: the pixel height from
/// descender to ascender).
pub struct Line {
    font: &'static FontRef<'static>,
    scale: PxScale,
    /// Glyph and its origin's x offset from the pen start, in pixels.
    glyphs: Vec<(GlyphId, f32)>,
    /// Advance width of the whole line, in pixels.
    pub width: f32,
    /// Ascent (above the baseline, > 0) and descent (below, < 0), in pixels.
    pub ascent: f32,
    pub descent: f32,
    /// Height of the capitals above the baseline, in pixels.
    pub cap: f32,
}

impl Line {
    /// Lays `text` out in the regular (or `bold`) face at `size` pixels.
    pub fn new(text: &str, size: f64, bold: bool) -> Result<Line, NoFont> {
        let faces = faces().ok_or(NoFont)?;
        let font = if bold { &faces.bold } else { &faces.regular };
        let scale = PxScale::from(size.max(0.0) as f32);
        let scaled = font.as_scaled(scale);
        let mut glyphs = Vec::with_capacity(text.len());
        let mut pen = 0.0f32;
        let mut prev: Option<GlyphId> = None;
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(p) = prev {
                pen += scaled.kern(p, id);
            }
            glyphs.push((id, pen));
            pen += scaled.h_advance(id);
            prev = Some(id);
        }
        // Top of the capitals: the ink top of 'H' (a glyph placed on the baseline).
        let cap = font
            .outline_glyph(scaled.scaled_glyph('H'))
            .map_or(0.7 * scaled.ascent(), |g| -g.px_bounds().min.y);
        Ok(Line {
            font,
            scale,
            glyphs,
            width: pen,
            ascent: scaled.ascent(),
            descent: scaled.descent(),
            cap,
        })
    }

    /// Offset of the pen start and the baseline from an anchor point (text frame, pixels).
    pub fn origin(&self, h: HPos, v: VPos) -> (i32, i32) {
        let x = match h {
            HPos::Left => 0.0,
            HPos::Center => -0.5 * self.width,
            HPos::Right => -self.width,
        };
        let y = match v {
            VPos::Top => self.cap,
            VPos::Center => 0.5 * self.cap,
            VPos::Bottom => self.descent,
        };
        (x.round() as i32, y.round() as i32)
    }

    /// Ink of the line: `(x, y, coverage)` per pixel, relative to the pen start on the
    /// baseline, coverage in `(0, 1]`. Glyphs sit at their sub-pixel pen positions.
    pub fn ink(&self, mut pixel: impl FnMut(i32, i32, f32)) {
        for &(id, x) in &self.glyphs {
            let glyph = id.with_scale_and_position(self.scale, point(x, 0.0));
            if let Some(outline) = self.font.outline_glyph(glyph) {
                let b = outline.px_bounds();
                let (x0, y0) = (b.min.x as i32, b.min.y as i32);
                outline.draw(|gx, gy, c| {
                    if c > 1.0 / 255.0 {
                        pixel(x0 + gx as i32, y0 + gy as i32, c.min(1.0));
                    }
                });
            }
        }
    }
}

/// Width in whole pixels (rounded up) of `text` at `size` (regular or `bold` face).
pub fn text_width(text: &str, size: f64, bold: bool) -> Result<i32, NoFont> {
    Ok(Line::new(text, size, bold)?.width.ceil() as i32)
}

/// A plotters backend whose text is laid out and rasterised by [`Line`]; every other
/// drawing call goes to the wrapped backend unchanged.
pub struct GlyphBackend<B> {
    inner: B,
}

impl<B> GlyphBackend<B> {
    pub fn new(inner: B) -> Self {
        GlyphBackend { inner }
    }
}

fn font_error<E: std::error::Error + Send + Sync>(e: NoFont) -> DrawingErrorKind<E> {
    DrawingErrorKind::FontError(Box::new(e))
}

impl<B: DrawingBackend> DrawingBackend for GlyphBackend<B> {
    type ErrorType = B::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let bold = matches!(style.style(), FontStyle::Bold);
        let line = Line::new(text, style.size(), bold).map_err(font_error)?;
        let anchor = style.anchor();
        let (ox, oy) = line.origin(anchor.h_pos, anchor.v_pos);
        let trans = style.transform();
        let (w, h) = self.inner.get_size();
        let mut result = Ok(());
        line.ink(|x, y, c| {
            let (x, y) = trans.transform(x + ox, y + oy);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if result.is_ok() && x >= 0 && y >= 0 && x < w as i32 && y < h as i32 {
                let ink = BackendColor {
                    alpha: color.alpha * c as f64,
                    rgb: color.rgb,
                };
                result = self.inner.draw_pixel((x, y), ink);
            }
        });
        result
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        let bold = matches!(style.style(), FontStyle::Bold);
        let line = Line::new(text, style.size(), bold).map_err(font_error)?;
        Ok((
            line.width.ceil() as u32,
            (line.ascent - line.descent).ceil() as u32,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns (relative to the pen start) holding ink of at least `min` coverage.
    fn inked_columns(text: &str, size: f64, min: f32) -> Vec<i32> {
        let line = Line::new(text, size, false).unwrap();
        let mut cols = Vec::new();
        line.ink(|x, _, c| {
            if c >= min {
                cols.push(x);
            }
        });
        cols.sort_unstable();
        cols.dedup();
        cols
    }

    #[test]
    fn glyph_ink_keeps_its_side_bearing() {
        // 'l' has a left side bearing of about 0.09 em: its ink does not start at the pen.
        let cols = inked_columns("l", 40.0, 0.5);
        assert!(cols[0] >= 2, "ink starts at column {}", cols[0]);
    }

    #[test]
    fn width_is_the_sum_of_advances() {
        let one = Line::new("m", 20.0, false).unwrap().width;
        let three = Line::new("mmm", 20.0, false).unwrap().width;
        assert!((three - 3.0 * one).abs() < 1e-4, "{one} {three}");
        assert_eq!(text_width("", 20.0, false).unwrap(), 0);
    }
}
