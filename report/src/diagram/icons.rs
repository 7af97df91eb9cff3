//! SVG pictures drawn inside the boxes of common blocks ([`Icon`]), Simulink style: a
//! `Sum` is a circle with the sign of each input beside it, a `Gain` a triangle, a clutch
//! two friction plates, a gear pair two meshing wheels, a planetary set concentric circles.

use std::fmt::Write;

use super::level::Icon;
use super::svg::n;

/// Writes the picture of `icon` for the box at `(x, y)` of size `w`×`h`, in `stroke`;
/// `inputs` are the positions of the box's signal inputs (for the signs of a `Sum`).
pub(crate) fn write(
    s: &mut String,
    icon: &Icon,
    (x, y, w, h): (f64, f64, f64, f64),
    stroke: &str,
    inputs: &[(f64, f64)],
) {
    let (cx, cy) = (x + 0.5 * w, y + 0.5 * h);
    let r = (0.5 * w.min(h) - 7.0).clamp(6.0, 17.0);
    let line = format!(r#"fill="none" stroke="{stroke}" stroke-width="1.6""#);
    match icon {
        Icon::Sum(signs) => {
            let _ = writeln!(
                s,
                r#"<circle class="icon" cx="{}" cy="{}" r="{}" {line}/>"#,
                n(cx),
                n(cy),
                n(r.min(11.0))
            );
            for (&plus, &(px, py)) in signs.iter().zip(inputs) {
                let _ = writeln!(
                    s,
                    r##"<text x="{}" y="{}" font-size="12" font-weight="bold" fill="#222222">{}</text>"##,
                    n(px + 6.0),
                    n(py + 4.0),
                    if plus { "+" } else { "\u{2212}" }
                );
            }
        }
        Icon::Gain => {
            let _ = writeln!(
                s,
                r#"<path class="icon" d="M{},{} L{},{} L{},{} Z" {line}/>"#,
                n(x + 9.0),
                n(y + 7.0),
                n(x + w - 9.0),
                n(cy),
                n(x + 9.0),
                n(y + h - 7.0)
            );
        }
        Icon::Clutch => {
            let ph = (2.0 * r).min(30.0);
            for px in [cx - 7.0, cx + 2.0] {
                let _ = writeln!(
                    s,
                    r#"<rect class="icon" x="{}" y="{}" width="5" height="{}" fill="{stroke}"/>"#,
                    n(px),
                    n(cy - 0.5 * ph),
                    n(ph)
                );
            }
            let _ = writeln!(
                s,
                r#"<path d="M{},{} l12,0 M{},{} l12,0" {line}/>"#,
                n(cx - 19.0),
                n(cy),
                n(cx + 7.0),
                n(cy)
            );
        }
        Icon::Gear => {
            let (r1, r2) = (0.55 * r, 0.4 * r);
            for (gx, gy, gr) in [
                (cx - 0.5 * r2, cy - 0.5 * r2, r1),
                (cx + r1, cy + r1 * 0.6, r2),
            ] {
                let _ = writeln!(
                    s,
                    r#"<circle class="icon" cx="{}" cy="{}" r="{}" fill="none" stroke="{stroke}" stroke-width="3" stroke-dasharray="2 1.6"/>"#,
                    n(gx),
                    n(gy),
                    n(gr)
                );
                let _ = writeln!(
                    s,
                    r#"<circle cx="{}" cy="{}" r="1.8" fill="{stroke}"/>"#,
                    n(gx),
                    n(gy)
                );
            }
        }
        Icon::Planetary => {
            for (k, rr) in [r, 0.62 * r, 0.25 * r].into_iter().enumerate() {
                let dash = if k == 1 {
                    r#" stroke-dasharray="3 2""#
                } else {
                    ""
                };
                let _ = writeln!(
                    s,
                    r#"<circle class="icon" cx="{}" cy="{}" r="{}" {line}{dash}/>"#,
                    n(cx),
                    n(cy),
                    n(rr)
                );
            }
        }
    }
}
