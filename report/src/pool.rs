//! Long arrays written once: the figures of a report share most of their data.
//!
//! Every time-based scope draws against the same sample times, and every scope's event
//! strip holds the same event times and hover texts, so most `x` and `text` arrays of the
//! figures are repeated many times. [`pool_arrays`] moves each long `x`, `y` and `text`
//! array of every trace into one list, once per distinct array, and leaves
//! `{"pool": index}` in its place; the client script puts the arrays back before drawing.
//!
//! A pooled array of samples (numbers of 6 significant digits, see `charts::sample`, and
//! `null` gaps) is written as `{"f32": base64}`: little-endian `f32`s, `NaN` for `null`.
//! That takes 5.3 characters per sample instead of about 11, and loses nothing: a decimal
//! of 6 significant digits survives the round trip through `f32` (which carries 7.2), so
//! the client's `+x.toPrecision(6)` gives back exactly the number the JSON would have held.
//! Arrays with anything else (event times of 9 digits, texts) stay JSON.

use std::collections::HashMap;

use drivelink_core::number::round_significant;
use serde_json::{json, Value};

/// Arrays shorter than this stay where they are (a reference would not save much).
pub const MIN_POOLED_LEN: usize = 16;

/// The trace keys whose arrays are pooled.
const KEYS: [&str; 3] = ["x", "y", "text"];

/// Moves the long arrays of the traces of `figures` (each `{"id", "figure": {"data"}}`)
/// into the returned pool, each distinct array once, leaving `{"pool": k}` references.
pub fn pool_arrays(figures: &mut [Value]) -> Vec<Value> {
    let mut pool: Vec<Value> = Vec::new();
    let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
    for f in figures.iter_mut() {
        let Some(traces) = f["figure"]["data"].as_array_mut() else {
            continue;
        };
        for trace in traces {
            for key in KEYS {
                let Some(slot) = trace.get_mut(key) else {
                    continue;
                };
                let Some(items) = slot.as_array().filter(|a| a.len() >= MIN_POOLED_LEN) else {
                    continue;
                };
                let k = *index.entry(key_of(items)).or_insert_with(|| {
                    pool.push(slot.take());
                    pool.len() - 1
                });
                *slot = json!({ "pool": k });
            }
        }
    }
    pool.into_iter().map(packed).collect()
}

/// A key equal for two arrays exactly when their JSON texts are equal, made without
/// writing the text (the long arrays are samples: formatting each number only to compare
/// the arrays was most of the pooling's cost). A number keeps its kind: `1` and `1.0`
/// print differently, and a float is its bits (distinct bits print distinct shortest
/// texts, `0.0` and `-0.0` among them); strings are length-prefixed; anything nested is
/// keyed by its text.
fn key_of(items: &[Value]) -> Vec<u8> {
    let mut key = Vec::with_capacity(9 * items.len());
    for item in items {
        add_key(&mut key, item);
    }
    key
}

/// One value's part of [`key_of`]: a tag and its bits, self-delimiting.
fn add_key(key: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => key.push(0),
        Value::Bool(b) => key.extend_from_slice(&[1, u8::from(*b)]),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => {
                key.push(2);
                key.extend_from_slice(&u.to_le_bytes());
            }
            (None, Some(i), _) => {
                key.push(3);
                key.extend_from_slice(&i.to_le_bytes());
            }
            (None, None, x) => {
                key.push(4);
                key.extend_from_slice(&x.unwrap_or(f64::NAN).to_bits().to_le_bytes());
            }
        },
        Value::String(s) => {
            key.push(5);
            key.extend_from_slice(&(s.len() as u64).to_le_bytes());
            key.extend_from_slice(s.as_bytes());
        }
        Value::Array(_) | Value::Object(_) => {
            let text = v.to_string();
            key.push(6);
            key.extend_from_slice(&(text.len() as u64).to_le_bytes());
            key.extend_from_slice(text.as_bytes());
        }
    }
}

/// `array` as `{"f32": base64}` when every element is `null` or a number that the `f32`
/// round trip keeps (see the module doc), else `array` itself.
fn packed(array: Value) -> Value {
    let Some(items) = array.as_array() else {
        return array;
    };
    let mut bytes = Vec::with_capacity(4 * items.len());
    for item in items {
        let v = match item {
            Value::Null => f32::NAN,
            Value::Number(n) => match n.as_f64() {
                Some(x) if survives_f32(x) => x as f32,
                _ => return array,
            },
            _ => return array,
        };
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    json!({ "f32": base64(&bytes) })
}

/// Whether `x` comes back unchanged from `f32` printed with 6 significant digits.
///
/// Where `x as f32` is a normal number, that is the case exactly when `x` has at most 6
/// significant digits (`x` is its own 6-digit rounding, found from its shortest digits
/// alone): the `f32` lies within 2^-24 of `x` relatively, well inside the half-spacing of
/// 6-digit decimals (at least 5·10^-7 relatively, below a power of ten too), so its 6
/// digits are `x`'s; and a number that some 6-digit decimal reads back to has at most 6
/// shortest digits. Elsewhere (zero, `f32` subnormals and overflow) the round trip itself
/// is tested.
fn survives_f32(x: f64) -> bool {
    let narrow = x as f32;
    if narrow.is_normal() {
        return round_significant(x, 6) == x;
    }
    narrow.is_finite() && round_significant(f64::from(narrow), 6) == x
}

/// Standard base64 (RFC 4648, with padding), as the browser's `atob` reads it.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            out.push(if i <= chunk.len() {
                char::from(ALPHABET[((n >> shift) & 63) as usize])
            } else {
                '='
            });
        }
    }
    out
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
                        trace[key] = unpack(&pool[k as usize]);
                    }
                }
            }
        }
        figures
    }

    /// A pool entry as the client restores it: `{"f32": ...}` decoded (`atob`, a
    /// `Float32Array`, `NaN` to `null`, `+x.toPrecision(6)`), anything else as it is.
    fn unpack(entry: &Value) -> Value {
        let Some(text) = entry["f32"].as_str() else {
            return entry.clone();
        };
        let digit = |c: u8| match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        };
        let mut bytes = Vec::new();
        for quad in text.as_bytes().chunks(4) {
            let pad = quad.iter().filter(|&&c| c == b'=').count();
            let n = quad
                .iter()
                .map(|&c| if c == b'=' { 0 } else { u32::from(digit(c)) })
                .fold(0u32, |n, d| (n << 6) | d);
            bytes.extend_from_slice(&n.to_be_bytes()[1..4 - pad]);
        }
        let values = bytes.chunks(4).map(|b| {
            let x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            if x.is_nan() {
                Value::Null
            } else {
                crate::charts::sample(f64::from(x))
            }
        });
        Value::Array(values.collect())
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

    /// The pool's key stands for the array's JSON text: arrays that print alike share one
    /// entry, arrays that print differently never do, however close their values.
    #[test]
    fn arrays_share_a_pool_entry_exactly_when_their_json_texts_are_equal() {
        let arrays: Vec<Value> = vec![
            json!([1, 2, 3]),
            json!([1.0, 2.0, 3.0]),
            json!([0.0, 1.5]),
            json!([-0.0, 1.5]),
            json!([1, -2, null, true]),
            json!([1, -2, null, false]),
            json!(["a", "bc"]),
            json!(["ab", "c"]),
            json!([0.1 + 0.2, 1e300]),
            json!([0.30000000000000004, 1e300]),
            json!([[1, 2], {"a": 1}]),
            json!([[1, 2], {"a": 2}]),
            json!([u64::MAX, i64::MIN]),
            json!([]),
        ];
        // Compared as texts, not as `Value`s: `Value` equality takes 0.0 and -0.0 as equal.
        let texts: Vec<String> = arrays.iter().map(Value::to_string).collect();
        for (a, ta) in arrays.iter().zip(&texts) {
            for (b, tb) in arrays.iter().zip(&texts) {
                let key = |v: &Value| key_of(v.as_array().unwrap());
                assert_eq!(key(a) == key(b), ta == tb, "{a} against {b}");
            }
        }
    }

    #[test]
    fn sampled_arrays_are_packed_as_f32_and_restored_exactly() {
        use crate::charts::sample;
        // Samples of 6 significant digits over many decades, signs and gaps.
        let y: Vec<Value> = (0..200)
            .map(|i| match i % 17 {
                0 => Value::Null,
                k => sample((-1f64).powi(i) * (1.0 + i as f64 * 0.7311) * 10f64.powi(k - 9)),
            })
            .collect();
        // Event times of 9 significant digits do not survive f32: they stay JSON.
        let events: Vec<Value> = (0..50)
            .map(|i| crate::charts::num(1.0 + i as f64 * 0.123456789))
            .collect();
        let original = vec![json!({"id": "a", "figure": {"data": [
            {"x": events, "y": y, "name": "s"},
        ]}})];
        let mut figures = original.clone();
        let pool = pool_arrays(&mut figures);
        assert_eq!(pool.len(), 2);
        assert!(pool[0].is_array(), "event times stay JSON: {}", pool[0]);
        let text = pool[1]["f32"].as_str().expect("samples packed");
        assert_eq!(text.len(), (200usize * 4).div_ceil(3) * 4);
        assert!(text.len() * 5 < serde_json::to_string(&y).unwrap().len() * 3);
        assert_eq!(unpool(figures, &pool), original);
        // Beyond the range of f32: stays JSON.
        let huge = Value::Array((0..20).map(|i| sample(1e300 * f64::from(i))).collect());
        assert_eq!(packed(huge.clone()), huge);
    }

    /// The packing test answers what its definition answers (the `f32` round trip printed
    /// with 6 digits gives `x` back) on 6- and 9-digit decimals over the whole range,
    /// random doubles, `f32`'s subnormals, overflow and the decades' edges.
    #[test]
    fn the_f32_packing_test_answers_as_the_round_trip_itself() {
        let by_round_trip = |x: f64| {
            let narrow = x as f32;
            narrow.is_finite() && round_significant(f64::from(narrow), 6) == x
        };
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut values = vec![
            0.0,
            -0.0,
            1e-45,
            1.4e-45,
            1.17549e-38,
            1.17550e-38,
            3.40282e38,
        ];
        values.extend([
            3.40283e38, 3.5e38, 1e39, 1e300, 99999.95, 100000.0, 999999.0,
        ]);
        for _ in 0..200_000 {
            let r = next();
            let mantissa = (r % 1_000_000_000) as f64;
            let exp = ((r >> 32) % 100) as i32 - 55;
            let v = if r >> 63 == 1 { -mantissa } else { mantissa } * 10f64.powi(exp);
            values.push(round_significant(v, 6));
            values.push(round_significant(v, 9));
            values.push(f64::from_bits(next()));
        }
        for x in values.into_iter().filter(|x| x.is_finite()) {
            assert_eq!(survives_f32(x), by_round_trip(x), "{x:e}");
        }
    }

    #[test]
    fn base64_matches_rfc_4648_test_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }
}
