//! The grid of a level: its columns, each an ordered list of items (boxes, and slots where a
//! line passes through a column), the path of every wire through the grid, and the order
//! of each column (barycentre sweeps).
//!
//! Channel `k` is the free strip left of column `k` (channel `columns` right of the last).
//! A wire leaves its source port into the channel on that port's side, enters its target
//! port from the channel on that side, and crosses every column between the two channels
//! through a slot of its own net (one slot per net and column, shared by the net's wires).

use std::collections::HashMap;

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

/// A wire's way through the grid: exit channel, entry channel, slots in travel order.
#[derive(Debug, Clone)]
pub(crate) struct Path {
    pub exit: usize,
    pub entry: usize,
    pub slots: Vec<usize>,
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
        let mut items: Vec<Item> = nodes
            .iter()
            .zip(rank)
            .enumerate()
            .map(|(i, (node, &col))| Item {
                kind: ItemKind::Box(i),
                col,
                h: node.span_h(),
            })
            .collect();
        let offsets: Vec<Vec<f64>> = nodes.iter().map(port_offsets).collect();
        let mut slot_of: HashMap<(usize, usize), usize> = HashMap::new();
        let mut paths = Vec::with_capacity(wires.len());
        let mut links: Vec<Vec<Link>> = vec![Vec::new(); items.len()];
        for (wi, w) in wires.iter().enumerate() {
            let (a, b) = (w.from, w.to);
            let exit = channel(rank[a.0], nodes[a.0].ports[a.1].side);
            let entry = channel(rank[b.0], nodes[b.0].ports[b.1].side);
            let cols: Vec<usize> = if exit <= entry {
                (exit..entry).collect()
            } else {
                (entry..exit).rev().collect()
            };
            let slots: Vec<usize> = cols
                .iter()
                .map(|&c| {
                    *slot_of.entry((w.net, c)).or_insert_with(|| {
                        items.push(Item {
                            kind: ItemKind::Slot(w.net),
                            col: c,
                            h: 0.0,
                        });
                        links.push(Vec::new());
                        items.len() - 1
                    })
                })
                .collect();
            // Pulls along the path: port, slots, port.
            let mut chain = vec![(a.0, offsets[a.0][a.1])];
            chain.extend(slots.iter().map(|&s| (s, 0.0)));
            chain.push((b.0, offsets[b.0][b.1]));
            for pair in chain.windows(2) {
                let ((p, po), (q, qo)) = (pair[0], pair[1]);
                if p == q {
                    continue;
                }
                links[p].push(Link {
                    other: q,
                    own_off: po,
                    other_off: qo,
                    w: weight[wi],
                });
                links[q].push(Link {
                    other: p,
                    own_off: qo,
                    other_off: po,
                    w: weight[wi],
                });
            }
            paths.push(Path { exit, entry, slots });
        }
        let mut cols: Vec<Vec<usize>> = vec![Vec::new(); n_cols];
        for (i, it) in items.iter().enumerate() {
            cols[it.col].push(i);
        }
        Grid {
            items,
            cols,
            paths,
            links,
        }
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
