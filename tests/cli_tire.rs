//! `drivelink tire`: a WheelCollider's tire law as a table (the Magic Formula's values at
//! its peak and at zero slip, the friction curve's at the slip velocities of `--speed`),
//! as a picture, and the errors for a wrong block, bad lists and bad coefficients.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::temp_dir;

fn drivelink() -> Command {
    Command::new(env!("CARGO_BIN_EXE_drivelink"))
}

/// A model with a Magic Formula wheel `fl` (coefficients `mf`) and a curve wheel `rl`.
fn model(d: &Path, mf: &str) -> PathBuf {
    let text = format!(
        r#"{{
  "drivelink": 1,
  "name": "tire_cli",
  "parameters": {{"fz_nom": "4 kN"}},
  "blocks": [
    {{"name": "car", "type": "RigidBody", "params": {{"m": 400, "inertia": [100, 100, 100], "z0": 0.55}}}},
    {{"name": "fl", "type": "WheelCollider", "params": {{"center": [0, 0, -0.1], "radius": 0.3,
      "tire": "magic_formula", "mf": {mf}}}}},
    {{"name": "rl", "type": "WheelCollider", "params": {{"center": [-1, 0, -0.1], "radius": 0.3}}}}
  ],
  "connections": [["car.frame", "fl.body", "rl.body"]]
}}"#
    );
    let p = d.join("model.json");
    std::fs::write(&p, text).unwrap();
    p
}

/// Pure slip with Cx > 1, no shifts: `Fx = D·sin(C·atan(B·κ − E·(B·κ − atan(B·κ))))`.
const MF: &str = r#"{"fz0": "fz_nom", "pcx1": 1.65, "pdx1": 1.2, "pex1": 0.3, "pkx1": 20,
    "pcy1": 1.3, "pdy1": 1.0, "pey1": -1.0, "pky1": -15, "pky2": 2.0}"#;

fn run(args: &[&str]) -> Output {
    drivelink().args(args).output().expect("run drivelink")
}

fn rows(stdout: &[u8]) -> Vec<Vec<f64>> {
    let text = String::from_utf8_lossy(stdout);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("kappa,alpha,fz,fx,fy"));
    lines
        .map(|l| l.split(',').map(|c| c.parse::<f64>().unwrap()).collect())
        .collect()
}

#[test]
fn tire_table_holds_the_magic_formula_and_the_curve_at_every_pair() {
    let d = temp_dir("cli_tire_table");
    let m = model(&d, MF);
    let m = m.to_str().unwrap();
    let o = run(&[
        "tire",
        m,
        "--block",
        "fl",
        "--fz",
        "4 kN",
        "--kappa=-0.5:0.5:5",
        "--alpha",
        r#"[0, "5 deg"]"#,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r = rows(&o.stdout);
    assert_eq!(r.len(), 10);
    let (b, c, dd, e) = (
        20.0 * 4000.0 / (1.65 * 1.2 * 4000.0),
        1.65,
        1.2 * 4000.0,
        0.3,
    );
    let fx = |k: f64| dd * (c * (b * k - e * (b * k - (b * k).atan())).atan()).sin();
    let (by, cy, dy, ey) = (
        -15.0 * (2.0 * (0.5f64).atan()).sin() / 1.3,
        1.3,
        4000.0,
        -1.0,
    );
    let fy = |a: f64| dy * (cy * (by * a - ey * (by * a - (by * a).atan())).atan()).sin();
    for (i, row) in r.iter().enumerate() {
        let (k, a) = (
            -0.5 + 0.25 * (i / 2) as f64,
            if i % 2 == 0 { 0.0 } else { 5f64.to_radians() },
        );
        assert!(
            (row[0] - k).abs() < 1e-15 && (row[1] - a).abs() < 1e-15,
            "{row:?}"
        );
        assert_eq!(row[2], 4000.0);
        // No combined-slip coefficients: the pure-slip forces at every pair.
        assert!((row[3] - fx(k)).abs() <= 1e-9 * dd, "{row:?} vs {}", fx(k));
        assert!((row[4] - fy(a)).abs() <= 1e-9 * dy, "{row:?} vs {}", fy(a));
    }
    // Negative pky1: a positive slip angle gives a force to the right.
    assert!(r[1][4] < 0.0);
    // The curve wheel at 10 m/s: κ = 0.02 is a forward slip of 0.2 m/s on the rising
    // branch of the default curve (extremum 0.4 m/s, 1.0): ye·ρ·(1 + ρ − ρ²)·fz, ρ = 0.5.
    let o = run(&[
        "tire", m, "--block", "rl", "--fz", "3000", "--kappa", "0.02", "--alpha", "0",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r = rows(&o.stdout);
    let want = 0.5 * (1.0 + 0.5 - 0.25) * 3000.0;
    assert!((r[0][3] - want).abs() < 1e-9 * want, "{:?} vs {want}", r[0]);
    assert_eq!(r[0][4], 0.0);
    // At --speed 20 m/s the same κ is 0.4 m/s: the extremum.
    let o = run(&[
        "tire", m, "--block", "rl", "--fz", "3000", "--kappa", "0.02", "--alpha", "0", "--speed",
        "72 km/h",
    ]);
    let r = rows(&o.stdout);
    assert!((r[0][3] - 3000.0).abs() < 1e-9, "{:?}", r[0]);
    // --out FILE.csv writes the same table.
    let csv = d.join("t.csv");
    let o = run(&[
        "tire",
        m,
        "--block",
        "fl",
        "--fz",
        "4000",
        "--out",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let text = std::fs::read_to_string(&csv).unwrap();
    // The default lists: 201 slip ratios by 61 slip angles.
    assert_eq!(text.lines().count(), 1 + 201 * 61);
}

#[test]
fn tire_png_draws_the_two_pure_slip_curves() {
    let d = temp_dir("cli_tire_png");
    let m = model(&d, MF);
    let png = d.join("curves.png");
    let o = run(&[
        "tire",
        m.to_str().unwrap(),
        "--block",
        "fl",
        "--fz",
        "4000",
        "--kappa=-1:1:201",
        "--alpha",
        "-15 deg:15 deg:61",
        "--out",
        png.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    // The size in the IHDR chunk: the default scope, 1200 x 800.
    let w = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
    let h = u32::from_be_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
    assert_eq!((w, h), (1200, 800));
    let svg = d.join("curves.svg");
    let o = run(&[
        "tire",
        m.to_str().unwrap(),
        "--block",
        "fl",
        "--fz",
        "4000",
        "--out",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("Fx(κ) at α = 0") && text.contains("Fy(α) at κ = 0"));
}

#[test]
fn tire_bad_input_exits_2_naming_what_is_wrong() {
    let d = temp_dir("cli_tire_bad");
    let good = model(&d, MF);
    let g = good.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--block", "fx", "--fz", "4000"], "no block 'fx'"),
        (
            vec!["--block", "car", "--fz", "4000"],
            "'car' is a RigidBody",
        ),
        (vec!["--block", "fl", "--fz", "4 m"], "--fz"),
        (
            vec!["--block", "fl", "--fz", "4000", "--kappa", "1:2"],
            "--kappa 1:2",
        ),
        (
            vec!["--block", "fl", "--fz", "4000", "--kappa", "0:1:0"],
            "count n",
        ),
        (
            vec!["--block", "fl", "--fz", "4000", "--alpha", "5 m"],
            "--alpha",
        ),
        (
            vec!["--block", "fl", "--fz", "4000", "--out", "x.txt"],
            ".csv",
        ),
        (
            vec!["--block", "fl", "--fz", "4000", "--speed", "0"],
            "--speed",
        ),
        // Two lists of 100,000 values each are 10^10 pairs: refused before any is
        // evaluated (the table was built in memory: 8 GB after a minute, unfinished).
        (
            vec![
                "--block",
                "fl",
                "--fz",
                "4000",
                "--kappa=-1:1:100000",
                "--alpha=-0.1:0.1:100000",
            ],
            "100000 x 100000 = 10000000000 pairs; a table holds at most 1000000",
        ),
    ];
    for (args, want) in cases {
        let mut all = vec!["tire", g];
        all.extend(args.iter().copied());
        let o = run(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // Bad coefficients: the block and the key are named, as by validate.
    for (mf, key) in [
        (r#"{"fz0": 4000, "pdx1": 0, "pky2": 2}"#, "mf.pdx1"),
        (r#"{"pky2": 2}"#, "mf.fz0"),
        (r#"{"fz0": 0, "pky2": 2}"#, "mf.fz0"),
        (r#"{"fz0": 4000, "pky2": 2, "qsx1": 1}"#, "qsx1"),
    ] {
        let sub = d.join(key.replace('.', "_"));
        std::fs::create_dir_all(&sub).unwrap();
        let m = model(&sub, mf);
        let o = run(&["tire", m.to_str().unwrap(), "--block", "fl", "--fz", "4000"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{mf}: {err}");
        assert!(err.contains("'fl'") && err.contains(key), "{mf}: {err}");
    }
    let o = run(&["tire", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(help.contains("--kappa") && help.contains("a:b:n") && help.contains("magic_formula"));
}
