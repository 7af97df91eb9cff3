//! PNG text: letters keep their spacing (advance widths and side bearings), labels sit where
//! the layout puts them.

use drivelink_plots::render_scope_png;
use drivelink_results::result::SimResult;
use drivelink_results::scope::{ScopeSignal, ScopeSpec};

/// First and last column of a run of inked columns.
type Run = (usize, usize);

struct Image {
    w: usize,
    h: usize,
    rgb: Vec<u8>,
}

fn decode(png_bytes: &[u8]) -> Image {
    let dec = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    Image {
        w: info.width as usize,
        h: info.height as usize,
        rgb: buf,
    }
}

impl Image {
    /// Whether the pixel is text ink of at least half coverage: grey (text is near-black
    /// on white) and darker than mid-grey.
    fn ink(&self, x: usize, y: usize) -> bool {
        let i = (y * self.w + x) * 3;
        let p = &self.rgb[i..i + 3];
        let (lo, hi) = (*p.iter().min().unwrap(), *p.iter().max().unwrap());
        hi - lo < 16 && hi < 143
    }

    /// Runs `(first, last)` of columns from `x0` holding ink in rows `rows`.
    fn ink_runs(&self, x0: usize, rows: std::ops::Range<usize>) -> Vec<Run> {
        let mut runs: Vec<Run> = Vec::new();
        for x in x0..self.w {
            if rows.clone().any(|y| self.ink(x, y)) {
                match runs.last_mut() {
                    Some(r) if r.1 + 1 == x => r.1 = x,
                    _ => runs.push((x, x)),
                }
            }
        }
        runs
    }
}

/// Blank columns between consecutive ink runs.
fn gaps(runs: &[Run]) -> Vec<usize> {
    runs.windows(2).map(|w| w[1].0 - w[0].1 - 1).collect()
}

fn scope_png(title: &str, label: &str) -> Image {
    let mut r = SimResult::new("t", vec!["a.y".into()]);
    for i in 0..10 {
        r.push_row(i as f64, &[i as f64]);
    }
    let mut s = ScopeSpec::new("t", vec![ScopeSignal::new("a.y").with_label(label)]);
    s.title = Some(title.into());
    let img = decode(&render_scope_png(&r, &s).unwrap());
    assert_eq!((img.w, img.h), (1200, 800));
    img
}

/// Ink runs of the bold title (top band, 46 px high at 1200x800) and of the legend label
/// (regular face, right of the colour swatch that ends at x = 120).
fn title_and_legend_runs(text: &str) -> (Vec<Run>, Vec<Run>) {
    let img = scope_png(text, text);
    (img.ink_runs(0, 0..46), img.ink_runs(124, 46..72))
}

#[test]
fn png_text_keeps_letters_apart() {
    // "clutch": six letters, six separate ink runs, in both faces; the c and the l are
    // apart (the legend printed "dutch" before).
    let (title, legend) = title_and_legend_runs("clutch");
    for runs in [&title, &legend] {
        assert_eq!(runs.len(), 6, "ink runs {runs:?}");
        let g = gaps(runs);
        assert!(g[0] >= 1, "no blank column between c and l: {runs:?}");
        assert!(g.iter().all(|&g| g >= 1), "gaps {g:?}");
    }

    // "time": four letters with even spacing in both faces (the legend read "tim e").
    let (title, legend) = title_and_legend_runs("time");
    for runs in [&title, &legend] {
        assert_eq!(runs.len(), 4, "ink runs {runs:?}");
        let g = gaps(runs);
        let (lo, hi) = (*g.iter().min().unwrap(), *g.iter().max().unwrap());
        assert!(lo >= 1 && hi - lo <= 1, "gaps between t, i, m, e: {g:?}");
    }
}
