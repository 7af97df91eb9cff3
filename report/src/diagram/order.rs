//! The grid of a level: its columns, each an ordered list of items (boxes, and slots where a
//! line passes through a column), the path of every wire through the grid, and the order
//! of each column (barycentre sweeps).
//!
//! Channel `k` is the free strip left of column `k` (channel `columns` right of the last).
//! A wire leaves its source port into the channel on that port's side, enters its target
//! port from the channel on that side, and crosses every column between the two channels
//! through a slot of its own net. The wires of a net share their source port, so they
//! share one trunk of slots leading left and one leading right from it ([`Trunk`]): the
//! grid stays linear in size even when one output feeds blocks in every column.

use super::level::{Node, Side, Wire};

/// What an item of a column is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ItemKind {
    /// The box of node `i`.
    Box(usize),
    /// A pass of net `i` through the column.
    Slot(usize),
}

/// A box or a slot in a column; `h` is the height it takes.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub kind: ItemKind,
    pub col: usize,
    pub h: f64,
}

/// A wire's way through the grid: its net, exit channel and entry channel.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Path {
    pub net: usize,
    pub exit: usize,
    pub entry: usize,
}

/// The slots of a net: `right[k]` in column `exit + k`, `left[k]` in column `exit - 1 - k`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Trunk {
    pub exit: usize,
    pub right: Vec<usize>,
    pub left: Vec<usize>,
}

impl Trunk {
    /// The slots a wire from the trunk's exit channel to channel `entry` passes, in order.
    pub fn slots(&self, entry: usize) -> &[usize] {
        if entry >= self.exit {
            &self.right[..entry - self.exit]
        } else {
            &self.left[..self.exit - entry]
        }
    }
}

/// A pull between two items: the point `own_off` below this item's top wants the height
/// of the point `other_off` below the other's top, with weight `w`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Link {
    pub other: usize,
    pub own_off: f64,
    pub other_off: f64,
    pub w: f64,
}

/// Columns of items and the paths of the wires.
#[derive(Debug, Clone)]
pub(crate) struct Grid {
    pub items: Vec<Item>,
    /// Item indices of each column, top to bottom.
    pub cols: Vec<Vec<usize>>,
    /// One per wire.
    pub paths: Vec<Path>,
    /// One per net.
    pub trunks: Vec<Trunk>,
    /// Links of each item.
    pub links: Vec<Vec<Link>>,
}

/// Offset of each port of `node` below its top: each side's ports spread evenly, but a
/// port on the box's row ([`Node::row_ports`]) sits at mid-height, the side's other ports
/// spread above and below it.
pub(crate) fn port_offsets(node: &Node) -> Vec<f64> {
    let mut off = vec![0.0; node.ports.len()];
    for side in [Side::Left, Side::Right] {
        let on_side: Vec<usize> = (0..node.ports.len())
            .filter(|&i| node.ports[i].side == side)
            .collect();
        let pinned = on_side.iter().copied().find(|i| node.row_ports.contains(i));
        let h = node.h;
        match pinned {
            None => {
                for (k, &i) in on_side.iter().enumerate() {
                    off[i] = (h * (k + 1) as f64 / (on_side.len() + 1) as f64).round();
                }
            }
            Some(p) => {
                off[p] = (0.5 * h).round();
                let others: Vec<usize> = on_side.into_iter().filter(|&i| i != p).collect();
                let above = others.len() / 2;
                let below = others.len() - above;
                for (k, &i) in others.iter().enumerate() {
                    let y = if k < above {
                        0.5 * h * (k + 1) as f64 / (above + 1) as f64
                    } else {
                        0.5 * h + 0.5 * h * (k - above + 1) as f64 / (below + 1) as f64
                    };
                    off[i] = y.round();
                }
            }
        }
    }
    off
}

/// The channel next to `side` of column `col`.
fn channel(col: usize, side: Side) -> usize {
    match side {
        Side::Left => col,
        Side::Right => col + 1,
    }
}

impl Grid {
    /// The grid of `nodes` in columns `rank`, with a slot wherever a wire crosses a column;
    /// `weight[w]` is the pull of wire `w`.
    pub fn build(nodes: &[Node], wires: &[Wire], rank: &[usize], weight: &[f64]) -> Grid {
        let n_cols = rank.iter().copied().max().map_or(1, |m| m + 1);
        let items: Vec<Item> = nodes
            .iter()
            .zip(rank)
            .enumerate()
            .map(|(i, (node, &col))| Item {
                kind: ItemKind::Box(i),
                col,
                h: node.span_h(),
            })
            .collect();
        let paths: Vec<Path> = wires
            .iter()
            .map(|w| Path {
                net: w.net,
                exit: channel(rank[w.from.0], nodes[w.from.0].ports[w.from.1].side),
                entry: channel(rank[w.to.0], nodes[w.to.0].ports[w.to.1].side),
            })
            .collect();
        let links = vec![Vec::new(); items.len()];
        let mut grid = Grid {
            items,
            cols: Vec::new(),
            paths,
            trunks: Vec::new(),
            links,
        };
        grid.build_trunks(nodes, wires, weight);
        grid.cols = vec![Vec::new(); n_cols];
        for (i, it) in grid.items.iter().enumerate() {
            grid.cols[it.col].push(i);
        }
        grid
    }

    /// The slots of every net's trunk and the pulls along the wires: source port to the
    /// trunk's first slots, slot to slot, each target to the slot before it.
    fn build_trunks(&mut self, nodes: &[Node], wires: &[Wire], weight: &[f64]) {
        let offsets: Vec<Vec<f64>> = nodes.iter().map(port_offsets).collect();
        let n_nets = wires.iter().map(|w| w.net + 1).max().unwrap_or(0);
        // Per net and side: the strongest wire reaching each trunk position.
        let mut reach: Vec<[Vec<f64>; 2]> = vec![[Vec::new(), Vec::new()]; n_nets];
        let mut source = vec![None; n_nets];
        for (w, (p, &wt)) in wires.iter().zip(self.paths.iter().zip(weight)) {
            source[w.net] = Some((w.from, p.exit));
            let (side, len) = if p.entry >= p.exit {
                (0, p.entry - p.exit)
            } else {
                (1, p.exit - p.entry)
            };
            let marks = &mut reach[w.net][side];
            if len > 0 {
                if marks.len() < len {
                    marks.resize(len, 0.0);
                }
                marks[len - 1] = marks[len - 1].max(wt);
            }
        }
        self.trunks = vec![Trunk::default(); n_nets];
        for net in 0..n_nets {
            let Some(((sb, sp), exit)) = source[net] else {
                continue;
            };
            let mut sides: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
            for (side, slots) in sides.iter_mut().enumerate() {
                let marks = &reach[net][side];
                let mut prev = (sb, offsets[sb][sp]);
                // From the far end back: a trunk link pulls as hard as the strongest wire
                // through it.
                let mut strongest = vec![0.0f64; marks.len()];
                let mut m = 0.0f64;
                for k in (0..marks.len()).rev() {
                    m = m.max(marks[k]);
                    strongest[k] = m;
                }
                for (k, &wt) in strongest.iter().enumerate() {
                    let col = if side == 0 { exit + k } else { exit - 1 - k };
                    let s = self.slot(net, col);
                    self.link(prev.0, prev.1, s, 0.0, wt);
                    prev = (s, 0.0);
                    slots.push(s);
                }
            }
            let [right, left] = sides;
            self.trunks[net] = Trunk { exit, right, left };
        }
        for (wi, w) in wires.iter().enumerate() {
            let p = self.paths[wi];
            let last = self.trunks[w.net].slots(p.entry).last().copied();
            let (a, a_off) = match last {
                Some(s) => (s, 0.0),
                None => (w.from.0, offsets[w.from.0][w.from.1]),
            };
            if a != w.to.0 {
                self.link(a, a_off, w.to.0, offsets[w.to.0][w.to.1], weight[wi]);
            }
        }
    }

    /// A new slot of `net` in column `col`.
    fn slot(&mut self, net: usize, col: usize) -> usize {
        self.items.push(Item {
            kind: ItemKind::Slot(net),
            col,
            h: 0.0,
        });
        self.links.push(Vec::new());
        self.items.len() - 1
    }

    /// Adds a pull between items `a` and `b` in both directions.
    pub fn link(&mut self, a: usize, a_off: f64, b: usize, b_off: f64, w: f64) {
        self.links[a].push(Link {
            other: b,
            own_off: a_off,
            other_off: b_off,
            w,
        });
        self.links[b].push(Link {
            other: a,
            own_off: b_off,
            other_off: a_off,
            w,
        });
    }

    /// Orders every column to shorten the lines between neighbouring columns: barycentre
    /// sweeps, left to right and back.
    pub fn order(&mut self, sweeps: usize) {
        let mut pos = vec![0.0f64; self.items.len()];
        let frac = |items: &[Item], i: usize, off: f64| {
            if items[i].h > 0.0 {
                off / items[i].h
            } else {
                0.0
            }
        };
        for sweep in 0..sweeps {
            for col in &self.cols {
                for (k, &i) in col.iter().enumerate() {
                    pos[i] = k as f64;
                }
            }
            let forward = sweep % 2 == 0;
            let n = self.cols.len();
            for step in 0..n {
                let c = if forward { step } else { n - 1 - step };
                let mut keyed: Vec<(f64, usize)> = self.cols[c]
                    .iter()
                    .map(|&i| {
                        let (mut sum, mut wsum) = (0.0, 0.0);
                        for l in &self.links[i] {
                            let oc = self.items[l.other].col;
                            if oc == c {
                                // A pass beside its own box: next to the box, on the side of
                                // the port.
                                let f = frac(&self.items, l.other, l.other_off);
                                sum += l.w * (pos[l.other] + 0.9 * (f - 0.5));
                                wsum += l.w;
                                continue;
                            }
                            let side_ok = if forward { oc + 1 == c } else { oc == c + 1 };
                            if side_ok {
                                let o = pos[l.other] + frac(&self.items, l.other, l.other_off);
                                sum += l.w * (o - frac(&self.items, i, l.own_off));
                                wsum += l.w;
                            }
                        }
                        (if wsum > 0.0 { sum / wsum } else { pos[i] }, i)
                    })
                    .collect();
                keyed.sort_by(|x, y| x.0.total_cmp(&y.0));
                self.cols[c] = keyed.into_iter().map(|(_, i)| i).collect();
                for (k, &i) in self.cols[c].iter().enumerate() {
                    pos[i] = k as f64;
                }
            }
        }
    }
}
