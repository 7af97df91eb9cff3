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
use super::order::{port_offsets, Grid, Path};

/// Space between two tracks, px.
const PITCH: f64 = 10.0;
/// Narrowest channel between two columns, px.
const MIN_CHANNEL: f64 = 44.0;

/// A point, px.
type Pt = (f64, f64);

/// Positions of the boxes, the wires' polylines and the branch dots.
#[derive(Debug, Clone)]
pub(crate) struct Routed {
    /// Top-left corner of each box.
    pub boxes: Vec<(f64, f64)>,
    /// Port positions of each box.
    pub ports: Vec<Vec<(f64, f64)>>,
    /// One polyline per wire to its target port: from its source port, or for a branch
    /// from where it leaves the lines of its net drawn before.
    pub lines: Vec<Vec<(f64, f64)>>,
    /// `(net, point)` where a net's lines part.
    pub dots: Vec<(usize, (f64, f64))>,
}

/// The channels a wire passes (in travel order): it enters the `k`-th at the height of
/// the `k`-th point of its run (its source port, then its slots) and leaves it at the next
/// (its slots, then its target port).
fn channel_run(exit: usize, entry: usize) -> impl Iterator<Item = usize> {
    let (lo, hi) = (exit.min(entry), exit.max(entry));
    let up = exit <= entry;
    (0..=hi - lo).map(move |k| if up { lo + k } else { hi - k })
}

/// The heights along a wire: source port, slots, target port.
fn heights(grid: &Grid, top: &[f64], path: &Path, from_y: f64, to_y: f64) -> Vec<f64> {
    let slots = grid.trunks[path.net].slots(path.entry);
    let mut ys = Vec::with_capacity(slots.len() + 2);
    ys.push(from_y);
    ys.extend(slots.iter().map(|&s| top[s]));
    ys.push(to_y);
    ys
}

/// Where the nets run in each channel: the vertical span of each net (keyed by channel
/// and net), and its stubs: `(channel, net, height, from the left edge)` for each
/// horizontal piece between the channel's edge and the net's track.
#[derive(Debug, Default)]
struct ChannelUse {
    spans: HashMap<(usize, usize), (f64, f64)>,
    stubs: Vec<(usize, usize, f64, bool)>,
}

impl ChannelUse {
    /// A run of `net` through channel `ch` from height `y0` (coming from the left edge
    /// when `left0`) to `y1` (leaving by the left edge when `left1`).
    fn add(&mut self, ch: usize, net: usize, (y0, left0): (f64, bool), (y1, left1): (f64, bool)) {
        let (a, b) = (y0.min(y1), y0.max(y1));
        if b - a > 0.5 {
            let s = self.spans.entry((ch, net)).or_insert((a, b));
            *s = (s.0.min(a), s.1.max(b));
        }
        self.stubs.push((ch, net, y0, left0));
        self.stubs.push((ch, net, y1, left1));
    }

    /// The runs of the trunks (once per net), then of each wire's first and last channel.
    fn of(
        wires: &[Wire],
        nodes: &[Node],
        grid: &Grid,
        top: &[f64],
        port_y: &dyn Fn((usize, usize)) -> f64,
    ) -> ChannelUse {
        let mut u = ChannelUse::default();
        for (net, t) in grid.trunks.iter().enumerate() {
            for k in 1..t.right.len() {
                u.add(
                    t.exit + k,
                    net,
                    (top[t.right[k - 1]], true),
                    (top[t.right[k]], false),
                );
            }
            for k in 1..t.left.len() {
                u.add(
                    t.exit - k,
                    net,
                    (top[t.left[k - 1]], false),
                    (top[t.left[k]], true),
                );
            }
        }
        for (w, path) in wires.iter().zip(&grid.paths) {
            let slots = grid.trunks[w.net].slots(path.entry);
            let from_left = nodes[w.from.0].ports[w.from.1].side == Side::Right;
            let to_left = nodes[w.to.0].ports[w.to.1].side == Side::Right;
            let (py, qy) = (port_y(w.from), port_y(w.to));
            let rightwards = path.entry >= path.exit;
            match (slots.first(), slots.last()) {
                (Some(&f), Some(&l)) => {
                    u.add(path.exit, w.net, (py, from_left), (top[f], !rightwards));
                    u.add(path.entry, w.net, (top[l], rightwards), (qy, to_left));
                }
                _ => u.add(path.exit, w.net, (py, from_left), (qy, to_left)),
            }
        }
        u
    }
}

/// Routes the wires of `nodes` over `grid` with item tops `top`.
pub(crate) fn route(nodes: &[Node], wires: &[Wire], grid: &Grid, top: &[f64]) -> Routed {
    let offsets: Vec<Vec<f64>> = nodes.iter().map(port_offsets).collect();
    let port_y = |(n, p): (usize, usize)| top[n] + offsets[n][p];
    let used = ChannelUse::of(wires, nodes, grid, top, &port_y);
    let n_ch = grid.cols.len() + 1;
    let (mut track, mut n_tracks) = assign_tracks(&used.spans, n_ch);
    untangle_stubs(&used, &mut track, &mut n_tracks);
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
    let full = full_wires(wires, grid);
    let mut lines = Vec::with_capacity(wires.len());
    for (wi, (w, path)) in wires.iter().zip(&grid.paths).enumerate() {
        let ys = heights(grid, top, path, port_y(w.from), port_y(w.to));
        let q = ports[w.to.0][w.to.1];
        if !full[wi] {
            // A branch: from where it leaves the trunk another wire of its net draws.
            let x = track_x(path.entry, w.net);
            let before = ys[ys.len() - 2];
            lines.push(simplify(vec![(x, before), (x, q.1), q]));
            continue;
        }
        let mut pts = vec![ports[w.from.0][w.from.1]];
        for (k, ch) in channel_run(path.exit, path.entry).enumerate() {
            let x = track_x(ch, w.net);
            pts.push((x, ys[k]));
            pts.push((x, ys[k + 1]));
        }
        pts.push(q);
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

/// Which wires are drawn from their source port: per net, the first of those reaching
/// farthest right and the first reaching farthest left. The others are drawn from the
/// point where they leave the trunk, which those pass.
fn full_wires(wires: &[Wire], grid: &Grid) -> Vec<bool> {
    let mut longest: HashMap<(usize, bool), (usize, usize)> = HashMap::new();
    for (i, (w, p)) in wires.iter().zip(&grid.paths).enumerate() {
        let right = p.entry >= p.exit;
        let reach = p.entry.abs_diff(p.exit);
        let e = longest.entry((w.net, right)).or_insert((reach, i));
        if reach > e.0 {
            *e = (reach, i);
        }
    }
    let mut full = vec![false; wires.len()];
    for &(_, i) in longest.values() {
        full[i] = true;
    }
    full
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

/// Swaps the tracks of two nets whose stubs at one height come from opposite edges of a
/// channel and would overlap (the one from the left on the farther track), where the
/// swap keeps every track free of overlapping spans; otherwise the net leaving by the
/// right edge moves to a new track beyond the others.
fn untangle_stubs(
    used: &ChannelUse,
    track: &mut HashMap<(usize, usize), usize>,
    n_tracks: &mut [usize],
) {
    let mut stubs_in: HashMap<usize, Vec<(f64, usize, bool)>> = HashMap::new();
    for &(ch, net, y, left) in &used.stubs {
        stubs_in.entry(ch).or_default().push((y, net, left));
    }
    let mut spans_in: HashMap<usize, Vec<(usize, f64, f64)>> = HashMap::new();
    for (&(ch, net), &(lo, hi)) in &used.spans {
        spans_in.entry(ch).or_default().push((net, lo, hi));
    }
    let mut chans: Vec<usize> = stubs_in.keys().copied().collect();
    chans.sort_unstable();
    for ch in chans {
        let mut stubs = stubs_in.remove(&ch).unwrap_or_default();
        stubs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let spans = spans_in.remove(&ch).unwrap_or_default();
        for i in 0..stubs.len() {
            for j in i + 1..stubs.len() {
                let ((ya, a, la), (yb, b, lb)) = (stubs[i], stubs[j]);
                if yb - ya > 0.5 {
                    break;
                }
                if a == b || la == lb {
                    continue;
                }
                let (l, r) = if la { (a, b) } else { (b, a) };
                let (Some(&tl), Some(&tr)) = (track.get(&(ch, l)), track.get(&(ch, r))) else {
                    continue;
                };
                let fits = |net: usize, t: usize, other: usize| {
                    let Some(&(_, a, b)) = spans.iter().find(|s| s.0 == net) else {
                        return true;
                    };
                    spans.iter().all(|&(m, lo, hi)| {
                        m == net
                            || m == other
                            || track.get(&(ch, m)) != Some(&t)
                            || hi + 6.0 < a
                            || b + 6.0 < lo
                    })
                };
                if tl <= tr {
                    continue;
                }
                if fits(l, tr, r) && fits(r, tl, l) {
                    track.insert((ch, l), tr);
                    track.insert((ch, r), tl);
                } else {
                    track.insert((ch, r), n_tracks[ch]);
                    n_tracks[ch] += 1;
                }
            }
        }
    }
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
fn junctions(wires: &[Wire], lines: &[Vec<Pt>]) -> Vec<(usize, Pt)> {
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
        let runs = Runs::of(members.iter().flat_map(|&i| lines[i].windows(2)));
        let mut points: Vec<Pt> = members
            .iter()
            .flat_map(|&i| lines[i].iter().copied())
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        points.dedup_by(|a, b| (a.0 - b.0).abs() < 0.05 && (a.1 - b.1).abs() < 0.05);
        dots.extend(
            points
                .into_iter()
                .filter(|&p| runs.directions(p).count_ones() >= 3)
                .map(|p| (net, p)),
        );
    }
    dots
}

/// The lines of a net as maximal straight runs: horizontal ones by height, vertical ones
/// by abscissa (keys in tenths of a pixel), overlapping pieces merged.
struct Runs {
    horizontal: HashMap<i64, Vec<(f64, f64)>>,
    vertical: HashMap<i64, Vec<(f64, f64)>>,
}

fn key(v: f64) -> i64 {
    (v * 10.0).round() as i64
}

impl Runs {
    fn of<'a>(segs: impl Iterator<Item = &'a [Pt]>) -> Runs {
        let mut runs = Runs {
            horizontal: HashMap::new(),
            vertical: HashMap::new(),
        };
        for s in segs {
            let (a, b) = (s[0], s[1]);
            if (a.1 - b.1).abs() < 0.05 {
                let v = runs.horizontal.entry(key(a.1)).or_default();
                v.push((a.0.min(b.0), a.0.max(b.0)));
            } else {
                let v = runs.vertical.entry(key(a.0)).or_default();
                v.push((a.1.min(b.1), a.1.max(b.1)));
            }
        }
        for list in runs
            .horizontal
            .values_mut()
            .chain(runs.vertical.values_mut())
        {
            list.sort_by(|x, y| x.0.total_cmp(&y.0));
            let mut merged: Vec<(f64, f64)> = Vec::with_capacity(list.len());
            for &(lo, hi) in list.iter() {
                match merged.last_mut() {
                    Some(last) if lo <= last.1 + 0.05 => last.1 = last.1.max(hi),
                    _ => merged.push((lo, hi)),
                }
            }
            *list = merged;
        }
        runs
    }

    /// The directions (bits: right, left, down, up) in which the runs leave `p`.
    fn directions(&self, p: Pt) -> u8 {
        let eps = 0.05;
        let mut dirs = 0u8;
        let along = |list: Option<&Vec<(f64, f64)>>, v: f64, bit: u8, dirs: &mut u8| {
            for &(lo, hi) in list.into_iter().flatten() {
                if v >= lo - eps && v <= hi + eps {
                    if v < hi - eps {
                        *dirs |= 1 << bit;
                    }
                    if v > lo + eps {
                        *dirs |= 1 << (bit + 1);
                    }
                }
            }
        };
        along(self.horizontal.get(&key(p.1)), p.0, 0, &mut dirs);
        along(self.vertical.get(&key(p.0)), p.1, 2, &mut dirs);
        dirs
    }
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
        let tee: Vec<[Pt; 2]> = vec![[(0.0, 0.0), (10.0, 0.0)], [(5.0, 0.0), (5.0, 8.0)]];
        let runs = Runs::of(tee.iter().map(|s| &s[..]));
        assert_eq!(runs.directions((5.0, 0.0)).count_ones(), 3);
        assert_eq!(runs.directions((10.0, 0.0)).count_ones(), 1);
        // Two pieces of one straight run and a corner: two directions each.
        let corner: Vec<[Pt; 2]> = vec![
            [(0.0, 0.0), (4.0, 0.0)],
            [(4.0, 0.0), (10.0, 0.0)],
            [(10.0, 0.0), (10.0, 8.0)],
        ];
        let runs = Runs::of(corner.iter().map(|s| &s[..]));
        assert_eq!(runs.directions((4.0, 0.0)).count_ones(), 2);
        assert_eq!(runs.directions((10.0, 0.0)).count_ones(), 2);
    }
}
