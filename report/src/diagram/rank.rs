//! Column (rank) of each box: the longest path from the sources, left to right.
//!
//! Boxes tied into one group (a car's left wheels) share a column. Lines that close a
//! cycle (feedback) are found by one depth-first search and counted backwards, so the
//! graph is acyclic; a box fed by nothing moves right to just before its first consumer
//! (a constant sits next to the block it feeds). Everything is linear in the diagram's
//! size.

/// Column of each of `n` boxes for the directed `edges` between boxes; `group[i]` is the
/// group of box `i` (boxes of one group share a column; edges inside a group are ignored).
pub(crate) fn ranks(n: usize, edges: &[(usize, usize)], group: &[usize]) -> Vec<usize> {
    let g = group.iter().copied().max().map_or(0, |m| m + 1);
    let mut gedges: Vec<(usize, usize)> = edges
        .iter()
        .map(|&(a, b)| (group[a], group[b]))
        .filter(|&(a, b)| a != b && a < g && b < g)
        .collect();
    let reversed = back_edges(g, &gedges);
    for (e, r) in gedges.iter_mut().zip(reversed) {
        if r {
            *e = (e.1, e.0);
        }
    }
    let order = topological_order(g, &gedges);
    let mut pred: Vec<Vec<usize>> = vec![Vec::new(); g];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); g];
    for &(a, b) in &gedges {
        pred[b].push(a);
        succ[a].push(b);
    }
    let mut rank = vec![0usize; g];
    for &v in &order {
        rank[v] = pred[v].iter().map(|&u| rank[u] + 1).max().unwrap_or(0);
    }
    // Sources right up to their first consumer.
    for v in 0..g {
        if pred[v].is_empty() {
            if let Some(m) = succ[v].iter().map(|&w| rank[w]).min() {
                rank[v] = m.saturating_sub(1);
            }
        }
    }
    (0..n)
        .map(|i| rank.get(group[i]).copied().unwrap_or(0))
        .collect()
}

/// Which of `edges` close a cycle: the back edges of one depth-first search, roots and
/// successors in order. Reversing them leaves an acyclic graph.
fn back_edges(n: usize, edges: &[(usize, usize)]) -> Vec<bool> {
    let mut out: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for (k, &(a, b)) in edges.iter().enumerate() {
        out[a].push((b, k));
    }
    // 0 unseen, 1 on the stack, 2 done.
    let mut state = vec![0u8; n];
    let mut reversed = vec![false; edges.len()];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        stack.push((root, 0));
        while let Some(top) = stack.last_mut() {
            let (v, k) = *top;
            if let Some(&(w, e)) = out[v].get(k) {
                top.1 += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        stack.push((w, 0));
                    }
                    1 => reversed[e] = true,
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
    }
    reversed
}

/// A topological order of the acyclic `edges` (Kahn's algorithm, smallest index first).
fn topological_order(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    use std::cmp::Reverse;
    let mut indegree = vec![0usize; n];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        indegree[b] += 1;
        succ[a].push(b);
    }
    let mut ready: std::collections::BinaryHeap<Reverse<usize>> =
        (0..n).filter(|&v| indegree[v] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(v)) = ready.pop() {
        order.push(v);
        for &w in &succ[v] {
            indegree[w] -= 1;
            if indegree[w] == 0 {
                ready.push(Reverse(w));
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own(n: usize) -> Vec<usize> {
        (0..n).collect()
    }

    #[test]
    fn a_chain_takes_one_column_per_box() {
        assert_eq!(ranks(4, &[(0, 1), (1, 2), (2, 3)], &own(4)), [0, 1, 2, 3]);
    }

    #[test]
    fn a_feedback_line_does_not_push_columns() {
        // 0 -> 1 -> 2 -> 0: the line closing the loop is counted backwards.
        assert_eq!(ranks(3, &[(0, 1), (1, 2), (2, 0)], &own(3)), [0, 1, 2]);
    }

    #[test]
    fn a_source_sits_just_before_its_consumer() {
        // 0 -> 1 -> 2 -> 3 and a constant 4 -> 3.
        let r = ranks(5, &[(0, 1), (1, 2), (2, 3), (4, 3)], &own(5));
        assert_eq!(r, [0, 1, 2, 3, 2]);
    }

    #[test]
    fn grouped_boxes_share_a_column() {
        // 0 -> 1 -> 2 and 3 in the group of 1 (fed by nothing itself).
        let r = ranks(4, &[(0, 1), (1, 2)], &[0, 1, 2, 1]);
        assert_eq!(r, [0, 1, 2, 1]);
    }
}
