//! Fuzz the netlist loader: mutate the shipped netlists (delete keys, replace values with
//! random JSON, truncate the text, flip characters) and check that load + compile never
//! panics (every outcome is Ok or a typed error with a non-empty message).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use drivelink::core::Registry;
use drivelink::netlist;
use proptest::prelude::*;
use serde_json::Value;

/// Cases per property (4 properties); `DRIVELINK_FUZZ_CASES` overrides.
fn cases() -> u32 {
    std::env::var("DRIVELINK_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000)
}

static OUTCOMES: [std::sync::atomic::AtomicUsize; 3] = [
    std::sync::atomic::AtomicUsize::new(0), // load error
    std::sync::atomic::AtomicUsize::new(0), // compile error
    std::sync::atomic::AtomicUsize::new(0), // compiled
];

fn count(k: usize) {
    OUTCOMES[k].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if std::env::var_os("DRIVELINK_FUZZ_STATS").is_some() {
        let n: Vec<usize> = OUTCOMES
            .iter()
            .map(|a| a.load(std::sync::atomic::Ordering::Relaxed))
            .collect();
        if n.iter().sum::<usize>() % 1000 == 0 {
            eprintln!(
                "fuzz outcomes: load error {}, compile error {}, compiled {}",
                n[0], n[1], n[2]
            );
        }
    }
}

struct Corpus {
    dir: PathBuf,
    files: Vec<(String, Value, String)>,
    reg: Registry,
}

fn corpus() -> &'static Corpus {
    static C: OnceLock<Corpus> = OnceLock::new();
    C.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/netlists");
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        let files = paths
            .into_iter()
            .map(|p| {
                let text = std::fs::read_to_string(&p).unwrap();
                let v: Value = serde_json::from_str(&text).unwrap();
                (p.display().to_string(), v, text)
            })
            .collect();
        Corpus {
            dir,
            files,
            reg: drivelink::blocks::registry(),
        }
    })
}

/// Every JSON path (object key or array index chain) in `v`.
#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Idx(usize),
}

fn paths(v: &Value, here: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                here.push(Seg::Key(k.clone()));
                out.push(here.clone());
                paths(c, here, out);
                here.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                here.push(Seg::Idx(i));
                out.push(here.clone());
                paths(c, here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

fn parent_mut<'a>(v: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    let mut cur = v;
    for s in path {
        cur = match (s, cur) {
            (Seg::Key(k), Value::Object(m)) => m.get_mut(k)?,
            (Seg::Idx(i), Value::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(Value::from),
        prop_oneof![
            Just("0".to_string()),
            Just("-1".to_string()),
            Just("1/0".to_string()),
            Just("sqrt(-1)".to_string()),
            Just("1e308*10".to_string()),
            Just("4500 rpm".to_string()),
            Just("3 kg".to_string()),
            Just("tau".to_string()),
            Just("all".to_string()),
            Just("Subsystem".to_string()),
            Just("signal_first_order.json".to_string()),
            Just("a.b".to_string()),
            ".*".prop_map(|s: String| s),
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,8}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn check_value(v: &Value) {
    let c = corpus();
    match netlist::load_value(v, "fuzz.json", &c.dir) {
        Ok(d) => match netlist::compile_located(&d, &c.reg, "fuzz.json") {
            Err(e) => {
                assert!(!e.to_string().is_empty());
                count(1)
            }
            Ok(_) => count(2),
        },
        Err(e) => {
            assert!(!e.to_string().is_empty());
            count(0)
        }
    }
}

fn check_text(t: &str) {
    let c = corpus();
    match netlist::load_str(t, "fuzz.json", &c.dir) {
        Ok(d) => match netlist::compile_located(&d, &c.reg, "fuzz.json") {
            Err(e) => {
                assert!(!e.to_string().is_empty());
                count(1)
            }
            Ok(_) => count(2),
        },
        Err(e) => {
            assert!(!e.to_string().is_empty());
            count(0)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn delete_keys(file in any::<prop::sample::Index>(), picks in prop::collection::vec(any::<prop::sample::Index>(), 1..4)) {
        let c = corpus();
        let mut v = c.files[file.index(c.files.len())].1.clone();
        for pick in picks {
            let mut all = Vec::new();
            paths(&v, &mut Vec::new(), &mut all);
            if all.is_empty() { break; }
            let p = all[pick.index(all.len())].clone();
            let (last, parent) = p.split_last().unwrap();
            if let Some(par) = parent_mut(&mut v, parent) {
                match (last, par) {
                    (Seg::Key(k), Value::Object(m)) => { m.shift_remove(k); }
                    (Seg::Idx(i), Value::Array(a)) if *i < a.len() => { a.remove(*i); }
                    _ => {}
                }
            }
        }
        check_value(&v);
    }

    #[test]
    fn replace_values(file in any::<prop::sample::Index>(), edits in prop::collection::vec((any::<prop::sample::Index>(), arb_json()), 1..4)) {
        let c = corpus();
        let mut v = c.files[file.index(c.files.len())].1.clone();
        for (pick, new) in edits {
            let mut all = Vec::new();
            paths(&v, &mut Vec::new(), &mut all);
            if all.is_empty() { v = new; continue; }
            let p = all[pick.index(all.len())].clone();
            if let Some(slot) = parent_mut(&mut v, &p) { *slot = new; }
        }
        check_value(&v);
    }

    #[test]
    fn truncate_text(file in any::<prop::sample::Index>(), at in any::<prop::sample::Index>()) {
        let c = corpus();
        let t = &c.files[file.index(c.files.len())].2;
        let mut cut = at.index(t.len() + 1);
        while !t.is_char_boundary(cut) { cut -= 1; }
        check_text(&t[..cut]);
    }

    #[test]
    fn flip_characters(file in any::<prop::sample::Index>(), flips in prop::collection::vec((any::<prop::sample::Index>(), prop::char::range(' ', '~')), 1..6)) {
        let c = corpus();
        let mut chars: Vec<char> = c.files[file.index(c.files.len())].2.chars().collect();
        for (at, ch) in flips {
            let i = at.index(chars.len());
            chars[i] = ch;
        }
        let t: String = chars.into_iter().collect();
        check_text(&t);
    }
}
