//! Text width estimates for laying out SVG text without a font engine.
//!
//! The diagram's text is drawn by the viewer (browser) in a sans-serif font, so exact widths
//! are unknown when the boxes are sized. These per-character estimates follow DejaVu Sans /
//! Verdana, the widest common sans-serif faces, so a box sized with them fits the text in
//! any of the usual fonts.

/// Width in pixels of `s` at `size` px (`bold`: about 8 % wider).
pub fn width(s: &str, size: f64, bold: bool) -> f64 {
    let em: f64 = s.chars().map(char_em).sum();
    em * size * if bold { 1.08 } else { 1.0 }
}

/// Advance of one character in em.
fn char_em(c: char) -> f64 {
    match c {
        'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' => 0.32,
        'f' | 't' | 'r' | ' ' | '(' | ')' | '[' | ']' | '-' | 'I' => 0.42,
        'm' | 'w' | 'M' | 'W' => 0.92,
        '_' => 0.55,
        c if c.is_ascii_uppercase() => 0.72,
        c if c.is_ascii_digit() => 0.64,
        c if c.is_ascii() => 0.62,
        _ => 0.9,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn wider_text_is_wider() {
        assert!(super::width("WWW", 12.0, false) > super::width("iii", 12.0, false));
        assert!(super::width("abc", 12.0, true) > super::width("abc", 12.0, false));
        assert_eq!(super::width("", 12.0, false), 0.0);
    }
}
