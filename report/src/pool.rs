//! Long arrays written once: the figures of a report share most of their data.
//!
//! Every time-based scope draws against the same sample times, and every scope's event
//! strip holds the same event times and hover texts, so most `x` and `text` arrays of the
//! figures are repeated many times. [`pool_arrays`] moves each long `x`, `y` and `text`
//! array of every trace into one list, once per distinct array, and leaves
//! `{"pool": index}` in its place; the client script puts the arrays back before drawing.

use std::collections::HashMap;

use serde_json::{json, Value};

/// Arrays shorter than this stay where they are (a reference would not save much).
pub const MIN_POOLED_LEN: usize = 16;

/// The trace keys whose arrays are pooled.
const KEYS: [&str; 3] = ["x", "y", "text"];

/// Moves the long arrays of the traces of `figures` (each `{"id", "figure": {"data"}}`)
/// into the returned pool, each distinct array once, leaving `{"pool": k}` references.
pub fn pool_arrays(figures: &mut [Value]) -> Vec<Value> {
    let mut pool: Vec<Value> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for f in figures.iter_mut() {
        let Some(traces) = f["figure"]["data"].as_array_mut() else {
            continue;
        };
        for trace in traces {
            for key in KEYS {
                let Some(slot) = trace.get_mut(key) else {
                    continue;
                };
                if slot.as_array().is_none_or(|a| a.len() < MIN_POOLED_LEN) {
                    continue;
                }
                let text = slot.to_string();
                let k = *index.entry(text).or_insert_with(|| {
                    pool.push(slot.take());
                    pool.len() - 1
                });
                *slot = json!({ "pool": k });
            }
        }
    }
    pool
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `figures` with every `{"pool": k}` replaced by `pool[k]`, as the client does.
    fn unpool(mut figures: Vec<Value>, pool: &[Value]) -> Vec<Value> {
        for f in &mut figures {
            for trace in f["figure"]["data"].as_array_mut().unwrap() {
                for key in KEYS {
                    if let Some(k) = trace[key]["pool"].as_u64() {
                        trace[key] = pool[k as usize].clone();
                    }
                }
            }
        }
        figures
    }

    #[test]
    fn repeated_arrays_are_written_once_and_restored_exactly() {
        let t: Vec<f64> = (0..100).map(|i| i as f64 * 0.1).collect();
        let y1: Vec<f64> = t.iter().map(|v| v * v).collect();
        let fig = |y: &[f64]| {
            json!({"id": "a", "figure": {"data": [
                {"x": t, "y": y, "name": "s"},
                {"x": [1.0, 2.0], "y": ["lock", "lock"], "text": ["a", "b"]},
            ]}})
        };
        let original = vec![fig(&y1), fig(&t)];
        let mut figures = original.clone();
        let pool = pool_arrays(&mut figures);
        // t (x of both figures, y of the second) once, y1 once; short arrays in place.
        assert_eq!(pool.len(), 2);
        assert_eq!(figures[0]["figure"]["data"][0]["x"], json!({"pool": 0}));
        assert_eq!(figures[1]["figure"]["data"][0]["y"], json!({"pool": 0}));
        assert_eq!(figures[1]["figure"]["data"][1]["x"], json!([1.0, 2.0]));
        assert_eq!(unpool(figures, &pool), original);
    }
}
