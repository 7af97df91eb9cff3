//! `drivelink tire MODEL.json --block NAME --fz N`: a `WheelCollider`'s tire law evaluated
//! on its own, at every (κ, α) pair of two lists, as a CSV table `kappa,alpha,fz,fx,fy`
//! (N; α in rad) or as a picture of the pure-slip curves Fx(κ) at α = 0 and Fy(α) at
//! κ = 0. The Magic Formula takes (κ, α) directly; the friction curves take the slip
//! velocities of a contact moving at `--speed` along its heading, `sx = κ·speed`,
//! `sy = speed·tan α`. `mu_scale` is 1.

use std::path::{Path, PathBuf};

use drivelink_blocks::vehicle::wheel_collider::TireLaw;
use drivelink_core::compile::{resolve_parameters, resolve_params, Scope};
use drivelink_core::expr;
use drivelink_core::scope::ScopeSignal;
use drivelink_core::units::Dim;
use drivelink_core::{Error, SimResult};
use drivelink_netlist as netlist;

use crate::console;

/// The long help of `drivelink tire --help`.
pub const LONG_ABOUT: &str = "Evaluate a WheelCollider's tire law (tire = \"curve\" or \"magic_formula\") at every (kappa, alpha) pair of two lists and one normal load: a CSV table kappa,alpha,fz,fx,fy (forces in N, alpha in rad) on standard output or in --out FILE.csv, or --out FILE.png / FILE.svg: the pure-slip curves Fx(kappa) at alpha = 0 (top) and Fy(alpha) at kappa = 0 (bottom) on a shared slip axis.\n\nFx pushes along the wheel's heading (+ drives), Fy to its left. The Magic Formula takes kappa and alpha directly; the friction curves take the slip velocities of a contact moving at --speed: forward slip kappa*speed, sideways slip speed*tan(alpha).\n\nLIST is a:b:n (n values from a to b, both included), [v, ...] (a JSON array), or one value; alpha in rad, or with a unit (\"-10 deg:10 deg:41\", '[0, \"5 deg\"]'); at most 100000 values per list and 1000000 pairs in a table.\n\nExample: drivelink tire car.json --block fl --fz \"4 kN\" --kappa=-1:1:201 --alpha 0 --out fx.csv";

/// Arguments of `drivelink tire`.
#[derive(clap::Args, Debug)]
pub struct TireArgs {
    /// The model netlist (JSON).
    model: PathBuf,
    /// The WheelCollider to evaluate: a block at the model's top level.
    #[arg(long, value_name = "NAME")]
    block: String,
    /// Normal load, N (or with a unit: "4 kN").
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    fz: String,
    /// Slip ratios κ: a:b:n, [v, ...] or one value.
    #[arg(
        long,
        value_name = "LIST",
        allow_hyphen_values = true,
        default_value = "-1:1:201"
    )]
    kappa: String,
    /// Slip angles α, rad or with a unit: a:b:n, [v, ...] or one value.
    #[arg(
        long,
        value_name = "LIST",
        allow_hyphen_values = true,
        default_value = "-15 deg:15 deg:61"
    )]
    alpha: String,
    /// Contact speed along the heading (m/s, or with a unit) turning the slips into the
    /// friction curves' slip velocities; with the Magic Formula only its shifts' fading
    /// below v_low depends on it.
    #[arg(long, value_name = "V", default_value = "10")]
    speed: String,
    /// Output: FILE.csv (the table), FILE.png or FILE.svg (the pure-slip curves);
    /// default: the table on standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Override a top-level parameter (as for `run`).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
}

/// What `--out` asks for.
enum Output {
    Stdout,
    Csv(PathBuf),
    Picture { path: PathBuf, svg: bool },
}

/// `drivelink tire`: the exit code (2 for bad input, 1 when the output cannot be written).
pub fn tire(args: &TireArgs) -> u8 {
    let origin = args.model.display().to_string();
    let law = match wheel_law(&args.model, &args.set, &args.block) {
        Ok(l) => l,
        Err(e) => {
            crate::report(&origin, &e);
            return 2;
        }
    };
    let inputs = (
        output(args.out.as_deref()),
        quantity("--fz", &args.fz, Dim::FORCE, "N"),
        quantity("--speed", &args.speed, Dim::VELOCITY, "m/s"),
        list("--kappa", &args.kappa, "1"),
        list("--alpha", &args.alpha, "rad"),
    );
    let (out, fz, speed, kappas, alphas) = match inputs {
        (Ok(o), Ok(fz), Ok(v), Ok(k), Ok(a)) => (o, fz, v, k, a),
        (o, fz, v, k, a) => {
            let errors = [o.err(), fz.err(), v.err(), k.err(), a.err()];
            for e in errors.into_iter().flatten() {
                console::error(e);
            }
            return 2;
        }
    };
    if !(fz >= 0.0 && fz.is_finite()) {
        console::error(format_args!("--fz: must be a finite load >= 0 N, got {fz}"));
        return 2;
    }
    if !(speed > 0.0 && speed.is_finite()) {
        console::error(format_args!(
            "--speed: must be a finite speed > 0, got {speed}"
        ));
        return 2;
    }
    let pairs = kappas.len() * alphas.len();
    if pairs > MAX_PAIRS && !matches!(out, Output::Picture { .. }) {
        console::error(format_args!(
            "--kappa and --alpha: {} x {} = {pairs} pairs; a table holds at most {MAX_PAIRS} \
             (shorten a list; a picture draws the two lists, not their pairs)",
            kappas.len(),
            alphas.len()
        ));
        return 2;
    }
    match out {
        Output::Stdout => console::print(&table(&law, fz, speed, &kappas, &alphas)),
        Output::Csv(path) => write(&path, table(&law, fz, speed, &kappas, &alphas).as_bytes()),
        Output::Picture { path, svg } => {
            let title = format!(
                "{}: {} at Fz = {fz} N",
                args.block,
                if law.is_magic_formula() {
                    "Magic Formula".to_string()
                } else {
                    format!("friction curves at {speed} m/s")
                }
            );
            match picture(&law, fz, speed, (&kappas, &alphas), &title, &path, svg) {
                Ok(bytes) => write(&path, &bytes),
                Err(e) => {
                    console::error(e);
                    2
                }
            }
        }
    }
}

/// The tire law of top-level block `name` of the model (compiled first, so every error of
/// the model, the wheel's coefficients included, is reported as by `validate`).
fn wheel_law(model: &Path, set: &[String], name: &str) -> Result<TireLaw, Error> {
    let origin = model.display().to_string();
    let d = crate::load(model, set)?;
    let reg = drivelink_blocks::registry();
    netlist::compile_located(&d, &reg, &origin)?;
    let bad = |message: String| Error::Netlist {
        file: origin.clone(),
        path: format!("--block {name}"),
        message,
    };
    let wheels: Vec<&str> = d
        .blocks
        .iter()
        .filter(|b| b.type_name == "WheelCollider")
        .map(|b| b.name.as_str())
        .collect();
    let Some(b) = d.blocks.iter().find(|b| b.name == name) else {
        return Err(bad(format!(
            "no block '{name}' at the model's top level{}; its WheelColliders are: {}",
            drivelink_core::suggest::hint(name, wheels.iter().copied()),
            if wheels.is_empty() {
                "(none)".to_string()
            } else {
                wheels.join(", ")
            }
        )));
    };
    if b.type_name != "WheelCollider" {
        return Err(bad(format!(
            "'{name}' is a {}, not a WheelCollider; the model's WheelColliders are: {}",
            b.type_name,
            if wheels.is_empty() {
                "(none)".to_string()
            } else {
                wheels.join(", ")
            }
        )));
    }
    let t = reg
        .get("WheelCollider")
        .ok_or_else(|| bad("WheelCollider is not a registered block type".into()))?;
    let scope = resolve_parameters(&d.parameters, &Scope::new(), &d.name)?;
    let p = resolve_params(&b.name, t.name, &t.params, &b.params, &scope).map_err(Error::Many)?;
    Ok(TireLaw::from_params(&p)?)
}

/// What `--out` names: a table or a picture, by its extension.
fn output(out: Option<&Path>) -> Result<Output, String> {
    let Some(path) = out else {
        return Ok(Output::Stdout);
    };
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    match ext.as_deref() {
        Some("csv") => Ok(Output::Csv(path.to_path_buf())),
        Some("png") => Ok(Output::Picture {
            path: path.to_path_buf(),
            svg: false,
        }),
        Some("svg") => Ok(Output::Picture {
            path: path.to_path_buf(),
            svg: true,
        }),
        _ => Err(format!(
            "--out {}: expected a file name ending in .csv (the table), .png or .svg (the curves)",
            path.display()
        )),
    }
}

/// One number of dimension `dim` (SI unit `si` for messages): a bare number is SI.
fn quantity(flag: &str, text: &str, dim: Dim, si: &str) -> Result<f64, String> {
    let q = expr::eval(text.trim(), &|_| None).map_err(|e| format!("{flag} \"{text}\": {e}"))?;
    let v = expr::check_dim(&q, dim, si).map_err(|e| format!("{flag} \"{text}\": {e}"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("{flag} \"{text}\": must be finite, got {v}"))
    }
}

/// The most values a list may have.
const MAX_VALUES: usize = 100_000;

/// The most (κ, α) pairs a table may have: a CSV of about 60 MB.
const MAX_PAIRS: usize = 1_000_000;

/// A list of dimensionless values (`si`: "1" or "rad"): `a:b:n`, `[v, ...]` or one value.
fn list(flag: &str, text: &str, si: &str) -> Result<Vec<f64>, String> {
    let t = text.trim();
    let one = |s: &str| quantity(flag, s, Dim::ONE, si);
    if t.starts_with('[') {
        let v: serde_json::Value = serde_json::from_str(t)
            .map_err(|e| format!("{flag} {t}: not a JSON array of values: {e}"))?;
        let items = v
            .as_array()
            .ok_or_else(|| format!("{flag} {t}: expected [v, ...]"))?;
        let values = items
            .iter()
            .map(|it| match it {
                serde_json::Value::Number(n) => n
                    .as_f64()
                    .ok_or_else(|| format!("{flag}: {n} is not a finite number")),
                serde_json::Value::String(s) => one(s),
                other => Err(format!("{flag}: {other} is not a number or a quantity")),
            })
            .collect::<Result<Vec<f64>, String>>()?;
        if values.is_empty() || values.len() > MAX_VALUES {
            return Err(format!(
                "{flag} {t}: expected 1 to {MAX_VALUES} values, got {}",
                values.len()
            ));
        }
        return Ok(values);
    }
    let parts: Vec<&str> = t.split(':').collect();
    match parts.as_slice() {
        [v] => Ok(vec![one(v)?]),
        [a, b, n] => {
            let (a, b) = (one(a)?, one(b)?);
            let n: usize = n.trim().parse().ok().filter(|n| (1..=MAX_VALUES).contains(n)).ok_or_else(|| {
                format!("{flag} {t}: the count n of a:b:n must be a whole number from 1 to {MAX_VALUES}, got '{}'", n.trim())
            })?;
            Ok(if n == 1 {
                vec![a]
            } else {
                (0..n)
                    .map(|i| a + (b - a) * i as f64 / (n - 1) as f64)
                    .collect()
            })
        }
        _ => Err(format!(
            "{flag} {t}: expected a:b:n (n values from a to b), [v, ...] or one value"
        )),
    }
}

/// The CSV table `kappa,alpha,fz,fx,fy`, κ outer, α inner.
fn table(law: &TireLaw, fz: f64, speed: f64, kappas: &[f64], alphas: &[f64]) -> String {
    let mut s = String::from("kappa,alpha,fz,fx,fy\n");
    for &k in kappas {
        for &a in alphas {
            // `+ 0.0`: a negative zero prints as 0.
            let (fx, fy) = law.forces_at(k, a, fz, speed);
            let (fx, fy) = (fx + 0.0, fy + 0.0);
            s.push_str(&format!("{k},{a},{fz},{fx},{fy}\n"));
        }
    }
    s
}

/// The pure-slip curves as a two-panel picture: Fx over the κ list at α = 0 on top, Fy
/// over the α list at κ = 0 below, on a shared slip axis (κ, α in rad).
fn picture(
    law: &TireLaw,
    fz: f64,
    speed: f64,
    (kappas, alphas): (&[f64], &[f64]),
    title: &str,
    path: &Path,
    svg: bool,
) -> Result<Vec<u8>, String> {
    let names = vec!["slip".to_string(), "fx".to_string(), "fy".to_string()];
    let mut res = SimResult::new("tire", names);
    res.units = vec![
        Some("1".to_string()),
        Some("N".to_string()),
        Some("N".to_string()),
    ];
    // Rows in order of each list; a NaN in the other column breaks its line.
    for (i, &k) in kappas.iter().enumerate() {
        res.push_row(i as f64, &[k, law.forces_at(k, 0.0, fz, speed).0, f64::NAN]);
    }
    for (i, &a) in alphas.iter().enumerate() {
        let t = (kappas.len() + i) as f64;
        res.push_row(t, &[a, f64::NAN, law.forces_at(0.0, a, fz, speed).1]);
    }
    res.end_time = (kappas.len() + alphas.len()) as f64;
    let stem = path
        .file_stem()
        .map_or_else(|| "tire".to_string(), |s| s.to_string_lossy().into_owned());
    let mut scope = drivelink_plots::quick_scope(&stem, &[], None);
    scope.panels = vec![
        vec![ScopeSignal::new("fx").with_label("Fx(κ) at α = 0 [N]")],
        vec![ScopeSignal::new("fy").with_label("Fy(α) at κ = 0 [N]")],
    ];
    scope.title = Some(title.to_string());
    scope.x = Some("slip".to_string());
    let view = drivelink_plots::View {
        xlim: None,
        x_title: Some("slip: κ (top), α [rad] (bottom)".to_string()),
    };
    let r = if svg {
        drivelink_plots::render_scope_svg_view(&res, &scope, &view).map(String::into_bytes)
    } else {
        drivelink_plots::render_scope_png_view(&res, &scope, &view)
    };
    r.map_err(|e| e.to_string())
}

/// Write `bytes` to `path` (its directory created); exit code 0, or 1 with a message.
fn write(path: &Path, bytes: &[u8]) -> u8 {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if let Err(e) = std::fs::create_dir_all(parent) {
            console::error(format_args!("cannot create {}: {e}", parent.display()));
            return 1;
        }
    }
    match std::fs::write(path, bytes) {
        Ok(()) => console::print(&format!("wrote {}\n", path.display())),
        Err(e) => {
            console::error(format_args!("cannot write {}: {e}", path.display()));
            1
        }
    }
}
