//! Orthogonal routes: every wire is a chain of horizontal and vertical segments.
//!
//! Vertical segments run only in the channels between columns, on tracks: one track per
//! net and channel (the net's lines in a channel form one bus), nets whose vertical spans
//! overlap on different tracks. Horizontal segments run from a port to its channel (beside
//! its own box) and through the slots of the columns a wire crosses, which the column
//! keeps free. So no line crosses a box. The channels are as wide as their tracks need;
//! boxes are centred in their column.

use std::collections::HashMap;

use super::level::{Node, Side, Wire};
use super::order::{port_offsets, Grid};

/// Space between two tracks, px.
const PITCH: f64 = 10.0;
/// Narrowest channel between two columns, px.
const MIN_CHANNEL: f64 = 44.0;

/// A point, px.
type Pt = (f64, f64);
/// A segment between two points.
type Seg = (Pt, Pt);

/// Positions of the boxes, the wires' polylines and the branch dots.
#[derive(Debug, Clone)]
pub(crate) struct Routed {
    /// Top-left corner of each box.
    pub boxes: Vec<(f64, f64)>,
    /// Port positions of each box.
    pub ports: Vec<Vec<(f64, f64)>>,
    /// One polyline per wire, from its source port to its target port.
    pub lines: Vec<Vec<(f64, f64)>>,
    /// `(net, point)` where a net's lines part.
    pub dots: Vec<(usize, (f64, f64))>,
}

/// The channels a wire passes (in travel order) and the height it has in each: it enters
/// channel `k` at `ys[k]` and leaves it at `ys[k + 1]`.
fn channel_run(exit: usize, entry: usize) -> Vec<usize> {
    if exit <= entry {
        (exit..=entry).collect()
    } else {
        (entry..=exit).rev().collect()
    }
}

/// Routes the wires of `nodes` over `grid` with item tops `top`.
pub(crate) fn route(nodes: &[Node], wires: &[Wire], grid: &Grid, top: &[f64]) -> Routed {
    let offsets: Vec<Vec<f64>> = nodes.iter().map(port_offsets).collect();
    let port_y = |(n, p): (usize, usize)| top[n] + offsets[n][p];
    // Heights along each wire.
    let heights: Vec<Vec<f64>> = wires
        .iter()
        .zip(&grid.paths)
        .map(|(w, path)| {
            let mut ys = vec![port_y(w.from)];
            ys.extend(path.slots.iter().map(|&s| top[s]));
            ys.push(port_y(w.to));
            ys
        })
        .collect();
    // Vertical span of each net in each channel.
    let mut spans: HashMap<(usize, usize), (f64, f64)> = HashMap::new();
    for ((w, path), ys) in wires.iter().zip(&grid.paths).zip(&heights) {
        for (k, ch) in channel_run(path.exit, path.entry).into_iter().enumerate() {
            let (a, b) = (ys[k].min(ys[k + 1]), ys[k].max(ys[k + 1]));
            if b - a > 0.5 {
                let s = spans.entry((ch, w.net)).or_insert((a, b));
                *s = (s.0.min(a), s.1.max(b));
            }
        }
    }
    let n_ch = grid.cols.len() + 1;
    let (track, n_tracks) = assign_tracks(&spans, n_ch);
    let (col_x, col_w, ch_x, ch_w) = columns_x(nodes, grid, &n_tracks);
    let track_x = |ch: usize, net: usize| match track.get(&(ch, net)) {
        Some(&t) => {
            ch_x[ch] + 0.5 * (ch_w[ch] - (n_tracks[ch] as f64 - 1.0) * PITCH) + t as f64 * PITCH
        }
        None => ch_x[ch] + 0.5 * ch_w[ch],
    };
    let mut boxes = Vec::with_capacity(nodes.len());
    let mut ports = Vec::with_capacity(nodes.len());
    for (i, node) in nodes.iter().enumerate() {
        let c = grid.items[i].col;
        let x = col_x[c] + 0.5 * (col_w[c] - node.w);
        boxes.push((x, top[i]));
        ports.push(
            node.ports
                .iter()
                .zip(&offsets[i])
                .map(|(p, &off)| {
                    let px = if p.side == Side::Left { x } else { x + node.w };
                    (px, top[i] + off)
                })
                .collect::<Vec<_>>(),
        );
    }
    let mut lines = Vec::with_capacity(wires.len());
    for ((w, path), ys) in wires.iter().zip(&grid.paths).zip(&heights) {
        let mut pts = vec![ports[w.from.0][w.from.1]];
        for (k, ch) in channel_run(path.exit, path.entry).into_iter().enumerate() {
            let x = track_x(ch, w.net);
            pts.push((x, ys[k]));
            pts.push((x, ys[k + 1]));
        }
        pts.push(ports[w.to.0][w.to.1]);
        lines.push(simplify(pts));
    }
    let dots = junctions(wires, &lines);
    Routed {
        boxes,
        ports,
        lines,
        dots,
    }
}

/// A track in each channel for each net spanning it: greedy interval colouring, top
/// first. Returns the track of `(channel, net)` and the number of tracks per channel.
fn assign_tracks(
    spans: &HashMap<(usize, usize), (f64, f64)>,
    n_ch: usize,
) -> (HashMap<(usize, usize), usize>, Vec<usize>) {
    let mut by_ch: Vec<Vec<(f64, f64, usize)>> = vec![Vec::new(); n_ch];
    for (&(ch, net), &(a, b)) in spans {
        by_ch[ch].push((a, b, net));
    }
    let mut track = HashMap::with_capacity(spans.len());
    let mut counts = vec![0; n_ch];
    for (ch, list) in by_ch.iter_mut().enumerate() {
        list.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.2.cmp(&y.2)));
        let mut ends: Vec<f64> = Vec::new();
        for &(a, b, net) in list.iter() {
            let t = match ends.iter().position(|&e| e + 6.0 < a) {
                Some(t) => t,
                None => {
                    ends.push(f64::NEG_INFINITY);
                    ends.len() - 1
                }
            };
            ends[t] = b;
            track.insert((ch, net), t);
        }
        counts[ch] = ends.len();
    }
    (track, counts)
}

/// Left edge and width of each column and channel.
#[allow(clippy::type_complexity)]
fn columns_x(
    nodes: &[Node],
    grid: &Grid,
    n_tracks: &[usize],
) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let n = grid.cols.len();
    let mut col_w = vec![12.0f64; n];
    for (i, node) in nodes.iter().enumerate() {
        let c = grid.items[i].col;
        col_w[c] = col_w[c].max(node.span_w());
    }
    let ch_w: Vec<f64> = n_tracks
        .iter()
        .enumerate()
        .map(|(k, &t)| {
            let need = (t as f64 + 1.0) * PITCH;
            if k == 0 || k == n {
                need.max(16.0)
            } else {
                need.max(MIN_CHANNEL)
            }
        })
        .collect();
    let (mut col_x, mut ch_x) = (vec![0.0; n], vec![0.0; n + 1]);
    let mut x = 0.0;
    for k in 0..=n {
        ch_x[k] = x;
        x += ch_w[k];
        if k < n {
            col_x[k] = x;
            x += col_w[k];
        }
    }
    (col_x, col_w, ch_x, ch_w)
}

/// `pts` without repeated points and without points in the middle of a straight run.
fn simplify(pts: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(pts.len());
    for p in pts {
        if out
            .last()
            .is_some_and(|&q| (q.0 - p.0).abs() < 0.05 && (q.1 - p.1).abs() < 0.05)
        {
            continue;
        }
        if out.len() >= 2 {
            let (a, b) = (out[out.len() - 2], out[out.len() - 1]);
            let straight = ((a.0 - b.0).abs() < 0.05 && (b.0 - p.0).abs() < 0.05)
                || ((a.1 - b.1).abs() < 0.05 && (b.1 - p.1).abs() < 0.05);
            if straight {
                out.pop();
            }
        }
        out.push(p);
    }
    out
}

/// Points where three or more directions of one net's lines meet (a branch).
fn junctions(wires: &[Wire], lines: &[Vec<(f64, f64)>]) -> Vec<(usize, (f64, f64))> {
    let mut nets: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, w) in wires.iter().enumerate() {
        nets.entry(w.net).or_default().push(i);
    }
    let mut keys: Vec<usize> = nets.keys().copied().collect();
    keys.sort_unstable();
    let mut dots = Vec::new();
    for net in keys {
        let members = &nets[&net];
        if members.len() < 2 {
            continue;
        }
        let segs: Vec<Seg> = members
            .iter()
            .flat_map(|&i| lines[i].windows(2).map(|s| (s[0], s[1])))
            .collect();
        let mut points: Vec<(f64, f64)> = segs.iter().flat_map(|&(a, b)| [a, b]).collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        points.dedup_by(|a, b| (a.0 - b.0).abs() < 0.05 && (a.1 - b.1).abs() < 0.05);
        for p in points {
            if directions(p, &segs).count_ones() >= 3 {
                dots.push((net, p));
            }
        }
    }
    dots
}

/// The directions (bits: right, left, down, up) in which `segs` leave point `p`.
fn directions(p: Pt, segs: &[Seg]) -> u8 {
    let eps = 0.05;
    let mut dirs = 0u8;
    for &(a, b) in segs {
        let horizontal = (a.1 - b.1).abs() < eps;
        let (lo, hi, along, across, pa) = if horizontal {
            (a.0.min(b.0), a.0.max(b.0), p.0, (p.1 - a.1).abs(), 0)
        } else {
            (a.1.min(b.1), a.1.max(b.1), p.1, (p.0 - a.0).abs(), 2)
        };
        if across > eps || along < lo - eps || along > hi + eps {
            continue;
        }
        if along < hi - eps {
            dirs |= 1 << pa;
        }
        if along > lo + eps {
            dirs |= 1 << (pa + 1);
        }
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn straight_runs_collapse_to_their_ends() {
        let p = simplify(vec![
            (0.0, 0.0),
            (5.0, 0.0),
            (5.0, 0.0),
            (10.0, 0.0),
            (10.0, 4.0),
        ]);
        assert_eq!(p, [(0.0, 0.0), (10.0, 0.0), (10.0, 4.0)]);
    }

    #[test]
    fn a_tee_has_three_directions_and_a_corner_two() {
        let segs = [((0.0, 0.0), (10.0, 0.0)), ((5.0, 0.0), (5.0, 8.0))];
        assert_eq!(directions((5.0, 0.0), &segs).count_ones(), 3);
        assert_eq!(directions((10.0, 0.0), &segs).count_ones(), 1);
        let corner = [((0.0, 0.0), (10.0, 0.0)), ((10.0, 0.0), (10.0, 8.0))];
        assert_eq!(directions((10.0, 0.0), &corner).count_ones(), 2);
    }
}
