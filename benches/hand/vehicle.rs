//! The vehicle full car's body forces, drivelink against the same forces written by hand
//! (`vehicle_forces.rs`), evaluated at the same states.
//!
//! ```text
//! cargo bench --bench vehicle_hand [-- ROUNDS]        (default 200)
//! ```
//!
//! 1. Steps `models/netlists/vd_full_car.json` through its 20 s (the library's stepped
//!    run) and takes the state at every 0.01 s: the body's 13 states and the four hub
//!    spins.
//! 2. Puts each into `benches/hand/vd_body_wheels.json` (the same body, wheel colliders,
//!    aero and steering alone, hubs free, no brakes) and evaluates its derivatives through
//!    the public `HybridSystem` API; the steer angles come from that model's logged
//!    `fl.steer` and `fr.steer`. The hand-written evaluation gets the same body state, hub
//!    spins and steer angles.
//! 3. Checks the body's state derivatives, the hubs' spin accelerations and each wheel's
//!    logged `fx`, `fy`, `fz` agree to 1e-12 of each value's largest magnitude over the
//!    samples (exit status 1 if not).
//! 4. Times both over all samples, `ROUNDS` alternating rounds, and prints the fastest
//!    round's nanoseconds per evaluation and their ratio.

mod vehicle_forces;

use std::hint::black_box;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use drivelink_core::Model;
use drivelink_solver::HybridSystem;
use vehicle_forces::Car;

const FULL: &str = "models/netlists/vd_full_car.json";
const BODY_WHEELS: &str = "benches/hand/vd_body_wheels.json";
const WHEELS: [&str; 4] = ["fl", "fr", "rl", "rr"];

/// One sample point: time, body state, hub spins.
struct Sample {
    t: f64,
    body: [f64; 13],
    w: [f64; 4],
}

fn compile(path: &str) -> Result<Model, String> {
    let reg = drivelink_blocks::registry();
    drivelink_netlist::compile_file(Path::new(path), &reg).map_err(|e| format!("{path}: {e}"))
}

/// The state indices of the rigid body's 13 states.
fn body_states(m: &Model) -> Result<Vec<usize>, String> {
    let ix: Vec<usize> = (0..m.n_states())
        .filter(|&i| m.state_owner(i).contains("of the rigid body"))
        .collect();
    if ix.len() == 13 {
        Ok(ix)
    } else {
        Err(format!("{} has {} rigid-body states", m.name(), ix.len()))
    }
}

/// The logged column of `name` (in a row of [`Model::sample`]).
fn column(m: &Model, name: &str) -> Result<usize, String> {
    m.plan()
        .empty_result()
        .names
        .iter()
        .position(|v| v == name)
        .ok_or_else(|| format!("{} does not log {name}", m.name()))
}

/// The states of the full car at every 0.01 s of its run.
fn samples() -> Result<Vec<Sample>, String> {
    let mut m = compile(FULL)?;
    let body = body_states(&m)?;
    let w_col: Vec<usize> = WHEELS
        .iter()
        .map(|w| column(&m, &format!("{w}.w")))
        .collect::<Result<_, _>>()?;
    let settings = m.settings().clone();
    m.start_stepping(&settings)?;
    let mut row = vec![0.0; m.plan().empty_result().names.len()];
    let mut out = Vec::new();
    for k in 1..=2000 {
        let t = f64::from(k) * 0.01;
        m.step_to(t)?;
        m.stepped_outputs(&mut row)?;
        let x = m.last_state();
        out.push(Sample {
            t,
            body: std::array::from_fn(|i| x[body[i]]),
            w: std::array::from_fn(|i| row[w_col[i]]),
        });
    }
    Ok(out)
}

/// The body-and-wheels model with its state layout.
struct Drivelink {
    m: Model,
    body: Vec<usize>,
    /// The hub speed states (fl, fr, rl, rr).
    hubs: Vec<usize>,
    /// One state vector per sample.
    xs: Vec<Vec<f64>>,
    steer: Vec<[f64; 2]>,
    /// Each wheel's logged `(fx, fy, fz)` per sample.
    tire: Vec<[[f64; 3]; 4]>,
}

fn drivelink_side(samples: &[Sample]) -> Result<Drivelink, String> {
    let mut m = compile(BODY_WHEELS)?;
    let body = body_states(&m)?;
    let hubs: Vec<usize> = WHEELS
        .iter()
        .map(|w| {
            let owner = format!("speed of the shaft at '{w}.hub'");
            (0..m.n_states())
                .find(|&i| m.state_owner(i) == owner)
                .ok_or_else(|| format!("no state is the {owner}"))
        })
        .collect::<Result<_, _>>()?;
    let cols = [column(&m, "fl.steer")?, column(&m, "fr.steer")?];
    let mut tire_cols = [[0; 3]; 4];
    for (w, c) in WHEELS.iter().zip(tire_cols.iter_mut()) {
        for (v, ci) in ["fx", "fy", "fz"].iter().zip(c.iter_mut()) {
            *ci = column(&m, &format!("{w}.{v}"))?;
        }
    }
    let x0 = m.begin_external(0.0);
    let mut row = vec![0.0; m.plan().empty_result().names.len()];
    let mut xs = Vec::with_capacity(samples.len());
    let mut steer = Vec::with_capacity(samples.len());
    let mut tire = Vec::with_capacity(samples.len());
    for s in samples {
        let mut x = x0.clone();
        for (i, &j) in body.iter().enumerate() {
            x[j] = s.body[i];
        }
        for (i, &j) in hubs.iter().enumerate() {
            x[j] = s.w[i];
        }
        m.sample(s.t, &x, &mut row)?;
        steer.push([row[cols[0]], row[cols[1]]]);
        tire.push(tire_cols.map(|c| c.map(|j| row[j])));
        xs.push(x);
    }
    Ok(Drivelink {
        m,
        body,
        hubs,
        xs,
        steer,
        tire,
    })
}

/// Compared values: 13 body derivatives, 4 hub accelerations, 4 wheels' `(fx, fy, fz)`.
const COMPARED: usize = 29;

/// The largest difference of each compared value relative to that value's largest
/// magnitude over the samples.
fn compare(samples: &[Sample], dl: &mut Drivelink) -> [f64; COMPARED] {
    let n = dl.m.n_states();
    let mut dx = vec![0.0; n];
    let mut diff = [0.0f64; COMPARED];
    let mut scale = [0.0f64; COMPARED];
    for (k, s) in samples.iter().enumerate() {
        dl.m.derivatives(s.t, &dl.xs[k], &mut dx);
        let h = Car::eval(&s.body, &s.w, dl.steer[k]);
        let ours = (dl.body.iter().chain(&dl.hubs).map(|&j| dx[j]))
            .chain(dl.tire[k].iter().flatten().copied());
        let hand = (h.dx.iter().chain(&h.hub_acc).copied()).chain(h.tire.iter().flatten().copied());
        for (i, (a, b)) in ours.zip(hand).enumerate() {
            diff[i] = diff[i].max((a - b).abs());
            scale[i] = scale[i].max(a.abs()).max(b.abs());
        }
    }
    std::array::from_fn(|i| {
        if scale[i] > 0.0 {
            diff[i] / scale[i]
        } else {
            0.0
        }
    })
}

/// Nanoseconds per evaluation of the fastest of `rounds` alternating rounds over all
/// samples: (hand, drivelink).
fn time(samples: &[Sample], dl: &mut Drivelink, rounds: usize) -> (f64, f64) {
    let n = dl.m.n_states();
    let mut dx = vec![0.0; n];
    let (mut hand, mut ours) = (f64::INFINITY, f64::INFINITY);
    let per = 1e9 / samples.len() as f64;
    for _ in 0..rounds {
        let t0 = Instant::now();
        for (k, s) in samples.iter().enumerate() {
            black_box(Car::eval(
                black_box(&s.body),
                black_box(&s.w),
                black_box(dl.steer[k]),
            ));
        }
        hand = hand.min(t0.elapsed().as_secs_f64() * per);
        let t0 = Instant::now();
        for (k, s) in samples.iter().enumerate() {
            dl.m.derivatives(s.t, black_box(&dl.xs[k]), &mut dx);
            black_box(&dx);
        }
        ours = ours.min(t0.elapsed().as_secs_f64() * per);
    }
    (hand, ours)
}

fn main() -> ExitCode {
    let rounds = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or(200)
        .max(1);
    let run = || -> Result<bool, String> {
        let samples = samples()?;
        let mut dl = drivelink_side(&samples)?;
        let rel = compare(&samples, &mut dl);
        let worst = rel.iter().copied().fold(0.0, f64::max);
        println!(
            "{} sample states of {FULL}: largest difference, hand against drivelink, {worst:.2e} of the value's range (body derivatives {:?}, hub accelerations {:?}, wheel fx, fy, fz {:?})",
            samples.len(),
            &rel[..13].iter().map(|r| format!("{r:.1e}")).collect::<Vec<_>>(),
            &rel[13..17].iter().map(|r| format!("{r:.1e}")).collect::<Vec<_>>(),
            &rel[17..].iter().map(|r| format!("{r:.1e}")).collect::<Vec<_>>(),
        );
        let (hand, ours) = time(&samples, &mut dl, rounds);
        println!(
            "per evaluation, fastest of {rounds} rounds: hand {hand:.1} ns, drivelink ({BODY_WHEELS} derivatives) {ours:.1} ns, ratio {:.2}",
            ours / hand
        );
        Ok(worst <= 1e-12)
    };
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!(
                "vehicle_hand: the hand-written forces differ from drivelink's by more than 1e-12"
            );
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("vehicle_hand: {e}");
            ExitCode::FAILURE
        }
    }
}
