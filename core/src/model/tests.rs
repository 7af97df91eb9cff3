//! Model-level tests on blocks defined here (the real blocks live in another crate): a
//! source and a first-order lag in the linear kernels, enough for the output-point
//! evaluation (`demand.rs`) and the solver's stiffness verdict as users see it; a pulsed
//! clutch between two inertias for the network's factorizations per set of modes; twin
//! blocks whose outputs run as calls or as fused operations.

use serde_json::json;

use crate::block::{
    Block, BlockDecl, Constraint, Cx, Feedthrough, Forces, FrictionDecl, FrictionLaw, Kernel,
    Linear, MechDecl, Operand, PortDecl, Row, RowKind, VarDecl, VarSource,
};
use crate::params::{BlockBuild, BlockType, ParamSpec, Params, Registry};
use crate::{compile, Diagram, Method, RunStatus};

/// `y = 1 + sin(t)/2`: a block with an output stage of its own.
struct Wave;

impl Block for Wave {
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: vec![PortDecl::output("y")],
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = 1.0 + 0.5 * cx.t.sin();
    }
}

/// Calls of [`Counted::outputs`] (one test uses the block).
static COUNTED_CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// `y = t`, counting its output calls in [`COUNTED_CALLS`].
struct Counted;

impl Block for Counted {
    fn declare(&self) -> BlockDecl {
        Wave.declare()
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        COUNTED_CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        y[0] = cx.t;
    }
}

/// `y = x`, `x' = (u − x)/tau`: evaluated by the linear kernels.
struct Lag {
    tau: f64,
}

impl Block for Lag {
    fn declare(&self) -> BlockDecl {
        let linear = Some(Linear {
            n: 1,
            m: 1,
            p: 1,
            a: vec![-1.0 / self.tau],
            b: vec![1.0 / self.tau],
            c: vec![1.0],
            d: vec![0.0],
        });
        BlockDecl {
            ports: vec![PortDecl::input("u"), PortDecl::output("y")],
            states: 1,
            linear,
            feedthrough: Feedthrough::None,
            ..BlockDecl::default()
        }
    }
}

/// Two inertias (`a`: 1 kg·m², `b`: 2 kg·m²) joined by a clutch whose normal force pulses
/// as `sin(2π t)` (engaged in every first half second); a motor of 10 N·m less
/// 2 N·m·s/rad drives `a` and a viscous drag of 1 N·m·s/rad brakes `b`. The clutch engages, locks, breaks away and is
/// released again every second.
struct PulsedClutch;

impl PulsedClutch {
    fn engagement(t: f64) -> f64 {
        (2.0 * std::f64::consts::PI * t).sin()
    }
}

impl Block for PulsedClutch {
    fn declare(&self) -> BlockDecl {
        let mut v = vec![
            VarDecl::new("w_a", VarSource::Speed(0), "rad/s"),
            VarDecl::new("w_b", VarSource::Speed(1), "rad/s"),
            VarDecl::new("a_b", VarSource::Accel(1), "rad/s2"),
        ];
        v.extend(VarDecl::friction_set(0, "", true));
        let mech = MechDecl {
            masses: vec![(0, 1.0), (1, 2.0)],
            frictions: vec![FrictionDecl::new(Row(vec![(0, 1.0), (1, -1.0)]), "")],
            has_forces: true,
            ..MechDecl::default()
        };
        BlockDecl {
            ports: vec![PortDecl::rot("a"), PortDecl::rot("b")],
            variables: v,
            mech,
            ..BlockDecl::default()
        }
    }
    fn forces(&self, cx: &Cx, f: &mut Forces) {
        f.add(0, 10.0 - 2.0 * cx.v(0));
        f.add(1, -cx.v(1));
    }
    fn friction(&self, _k: usize, cx: &Cx, _w_rel: f64) -> FrictionLaw {
        let e = Self::engagement(cx.t);
        let cap = 12.0 * e.max(0.0);
        FrictionLaw {
            kinetic: cap,
            lo: -cap,
            hi: cap,
            engagement: e,
        }
    }
}

/// A block whose outputs are its kernels (`kind` 0: a meter on flange `flange` with a
/// 0.5 kg·m² `load` held to it by a row, reading speed, angle, the row's force and the
/// acceleration; 1: `u0 / u1`; 2: the flange speed over `u0` where `|u0| ≥ 1.2`), computed
/// through the kernel's reference `Kernel::eval`; it offers the kernels to the model only
/// when `fused`, so the same diagram runs its stages as calls or as fused operations.
struct Twin {
    kind: u8,
    fused: bool,
}

impl Twin {
    fn kernels(&self) -> [Kernel; 2] {
        use Operand::*;
        match self.kind {
            0 => [
                Kernel::Read(vec![Speed(0), Angle(0)]),
                Kernel::Read(vec![Speed(0), Angle(0), Lambda(0), Accel(0)]),
            ],
            1 => [Kernel::Product(vec![true, false]), Kernel::Read(vec![])],
            _ => [
                Kernel::Ratio {
                    num: Speed(0),
                    den: Input(0),
                    min: 1.2,
                },
                Kernel::Read(vec![]),
            ],
        }
    }
}

impl Block for Twin {
    fn declare(&self) -> BlockDecl {
        let (ports, mech) = match self.kind {
            0 => (
                vec![
                    PortDecl::rot("flange"),
                    PortDecl::rot("load"),
                    PortDecl::output("w"),
                    PortDecl::output("phi"),
                    PortDecl::output("tau").after_network(),
                    PortDecl::output("a").after_network(),
                ],
                MechDecl {
                    masses: vec![(1, 0.5)],
                    constraints: vec![Constraint {
                        row: Row(vec![(0, 1.0), (1, -1.0)]),
                        kind: RowKind::Velocity,
                    }],
                    ..MechDecl::default()
                },
            ),
            1 => (
                vec![
                    PortDecl::input("u0"),
                    PortDecl::input("u1"),
                    PortDecl::output("y"),
                ],
                MechDecl::default(),
            ),
            _ => (
                vec![
                    PortDecl::rot("flange"),
                    PortDecl::input("u0"),
                    PortDecl::output("y").undefined_ok(),
                ],
                MechDecl::default(),
            ),
        };
        BlockDecl {
            ports,
            mech,
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        self.kernels()[0].eval(cx, y);
    }
    fn network_outputs(&self, cx: &Cx, y: &mut [f64]) {
        self.kernels()[1].eval(cx, y);
    }
    fn kernel(&self, after_network: bool) -> Option<Kernel> {
        let [k0, k1] = self.kernels();
        self.fused.then_some(if after_network { k1 } else { k0 })
    }
}

fn registry() -> Registry {
    let mut r = Registry::new();
    r.register(BlockType {
        name: "Wave",
        category: "test",
        doc: "1 + sin(t)/2",
        params: vec![],
        build: BlockBuild::Primitive(|_: &Params| Ok(Box::new(Wave))),
        ports_doc: "y[out]",
    });
    r.register(BlockType {
        name: "Lag",
        category: "test",
        doc: "1/(tau s + 1)",
        params: vec![ParamSpec::number("tau", "s", 1.0, "time constant")],
        build: BlockBuild::Primitive(|p: &Params| Ok(Box::new(Lag { tau: p.num("tau")? }))),
        ports_doc: "u[in], y[out]",
    });
    r.register(BlockType {
        name: "Counted",
        category: "test",
        doc: "y = t, counting its calls",
        params: vec![],
        build: BlockBuild::Primitive(|_: &Params| Ok(Box::new(Counted))),
        ports_doc: "y[out]",
    });
    r.register(BlockType {
        name: "Twin",
        category: "test",
        doc: "outputs as kernels, fused or called",
        params: vec![
            ParamSpec::number("kind", "1", 0.0, "0 meter, 1 quotient, 2 ratio"),
            ParamSpec::number("fused", "1", 0.0, "offer the kernels"),
        ],
        build: BlockBuild::Primitive(|p: &Params| {
            Ok(Box::new(Twin {
                kind: p.num("kind")? as u8,
                fused: p.num("fused")? != 0.0,
            }))
        }),
        ports_doc: "see Twin",
    });
    r.register(BlockType {
        name: "PulsedClutch",
        category: "test",
        doc: "two inertias and a pulsed clutch",
        params: vec![],
        build: BlockBuild::Primitive(|_: &Params| Ok(Box::new(PulsedClutch))),
        ports_doc: "a[rot], b[rot]",
    });
    r
}

/// `src → lag0 → … → lag{n−1}` with time constants `taus`, logging `log`.
fn chain(taus: &[f64], log: &[String]) -> Diagram {
    let mut d = Diagram::new("chain");
    d.add("src", "Wave", json!({}));
    let mut prev = "src".to_string();
    for (k, tau) in taus.iter().enumerate() {
        let name = format!("lag{k}");
        d.add(&name, "Lag", json!({ "tau": tau }));
        d.connect(&[format!("{prev}.y"), format!("{name}.u")]);
        prev = name;
    }
    d.log(log);
    d.settings.stop_time = 5.0;
    d
}

#[test]
fn output_points_compute_what_the_log_reads_with_the_bits_of_a_full_evaluation() {
    let taus: Vec<f64> = (0..40).map(|k| 0.02 + 0.001 * k as f64).collect();
    let last = "lag39.y".to_string();
    let all: Vec<String> = (0..40).map(|k| format!("lag{k}.y")).collect();
    let reg = registry();
    let mut one = compile(&chain(&taus, std::slice::from_ref(&last)), &reg).expect("compiles");
    let mut every = compile(&chain(&taus, &all), &reg).expect("compiles");
    // Logging the last lag only: an output point computes its row alone and reads its
    // state alone; logging every lag, every row and every state.
    assert_eq!(one.skipped_at_outputs(), (0, 39));
    assert_eq!(every.skipped_at_outputs(), (0, 0));
    let last_state = one.plan().blocks[40].x.start;
    assert_eq!(
        drivelink_solver::HybridSystem::output_states(&one),
        Some(vec![last_state])
    );
    assert_eq!(drivelink_solver::HybridSystem::output_states(&every), None);
    let (r1, ra) = (one.run(), every.run());
    assert_eq!(r1.status, RunStatus::Completed, "{}", r1.message);
    assert_eq!(ra.status, RunStatus::Completed, "{}", ra.message);
    assert!(r1.time.len() > 2000, "the default output grid");
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&r1.time), bits(&ra.time));
    assert_eq!(bits(&r1.columns[0]), bits(&ra.columns[39]));
    // The same steps and evaluations: only what an output point computes differs.
    assert_eq!(r1.stats, ra.stats);
}

#[test]
fn a_signal_nothing_reads_is_evaluated_at_events_only_in_a_model_without_guards() {
    // A chain of lags beside a block whose output nothing reads or logs: the step ends
    // (the model has no guards and no time events) evaluate what the derivatives and
    // the log read, not that block; logging its output makes it live, and the chain's
    // results and statistics stay the same to the bit.
    use std::sync::atomic::Ordering;
    let reg = registry();
    let taus = [0.05, 0.08, 0.13];
    let with = |log: &[String]| {
        let mut d = chain(&taus, log);
        d.add("dead", "Counted", json!({}));
        d.settings.output_interval = None;
        d.settings.output_points = None;
        compile(&d, &reg).expect("compiles")
    };
    let last = "lag2.y".to_string();
    let mut quiet = with(std::slice::from_ref(&last));
    let mut live = with(&[last, "dead.y".to_string()]);
    COUNTED_CALLS.store(0, Ordering::Relaxed);
    let rq = quiet.run();
    let quiet_calls = COUNTED_CALLS.swap(0, Ordering::Relaxed);
    let rl = live.run();
    let live_calls = COUNTED_CALLS.load(Ordering::Relaxed);
    assert_eq!(rq.status, RunStatus::Completed, "{}", rq.message);
    assert_eq!(rl.status, RunStatus::Completed, "{}", rl.message);
    assert!(rq.stats.steps > 50, "{:?}", rq.stats);
    assert!(
        quiet_calls <= 2,
        "evaluated {quiet_calls} times, at the initial event only"
    );
    assert!(
        live_calls as u64 > rl.stats.steps,
        "logged: evaluated at every step end ({live_calls} calls, {} steps)",
        rl.stats.steps
    );
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&rq.time), bits(&rl.time));
    assert_eq!(bits(&rq.columns[0]), bits(&rl.columns[0]));
    assert_eq!(rq.stats, rl.stats);
    // The logged output is the time of every recorded row.
    assert_eq!(bits(&rl.columns[1]), bits(&rl.time));
}

#[test]
fn a_stiff_lag_under_dopri5_stops_early_naming_its_block() {
    // One lag with tau = 1 µs driven by the wave over 10 s: Dopri5's step is held at
    // 3.3 µs by stability, about three million steps; the run stops after about 51,000
    // (the stiffness test every 1,000 steps, then 50,000 stiff steps), naming the lag.
    let reg = registry();
    let mut d = chain(&[1e-6], &["lag0.y".to_string()]);
    d.settings.stop_time = 10.0;
    d.settings.method = Method::Dopri5;
    let mut m = compile(&d, &reg).expect("compiles");
    let r = m.run();
    assert_eq!(r.status, RunStatus::Failed);
    assert!(
        r.stats.steps + r.stats.rejected_steps < 52_000,
        "{:?}",
        r.stats
    );
    assert!(
        r.message
            .contains("(state 1 of block 'lag0' limits the step to 3.3"),
        "{}",
        r.message
    );
    assert!(
        r.message.contains("use \"method\": \"stiff\" or \"auto\""),
        "{}",
        r.message
    );
    // Under "stiff" it runs to the end.
    d.settings.method = Method::Radau5;
    let mut m = compile(&d, &reg).expect("compiles");
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
}

#[test]
fn a_clutch_factorizes_once_per_set_of_modes_however_often_it_returns_to_one() {
    let reg = registry();
    let mut d = Diagram::new("pulsed");
    d.add("clutch", "PulsedClutch", json!({}));
    d.settings.stop_time = 5.0;
    // Every variable logged: the speeds, the joint's slip, torque and mode.
    let names: Vec<String> = compile(&d, &reg)
        .expect("compiles")
        .variable_names()
        .map(String::from)
        .collect();
    d.log(&names);
    let run = |cache_limit: usize| {
        let mut m = compile(&d, &reg).expect("compiles");
        m.net.set_factor_cache_limit(cache_limit);
        let r = m.run();
        assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
        (r, m.net.factorizations())
    };
    let (cached, n_cached) = run(64);
    let (fresh, n_fresh) = run(1);
    let count = |r: &crate::SimResult, kind: crate::result::EventTag| {
        r.events.iter().filter(|e| e.kind == kind).count()
    };
    // Five pulses: the clutch locks and is released again in each.
    let locks = count(&cached, crate::result::EventTag::Lock);
    assert!(locks >= 5, "{:?}", cached.events);
    assert!(count(&cached, crate::result::EventTag::Free) >= 4);
    // Two sets of active rows (none; the clutch's row): two factorizations, however often
    // the modes change. Without the cache, one at every change of the set.
    assert_eq!(n_cached, 2);
    assert!(
        n_fresh > 2 * locks - 1,
        "{n_fresh} factorizations for {locks} locks"
    );
    // The kept factorizations give the fresh ones' trajectory to the bit.
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&cached.time), bits(&fresh.time));
    assert!(cached.columns.len() >= 5, "{names:?}");
    for (a, b) in cached.columns.iter().zip(&fresh.columns) {
        assert_eq!(bits(a), bits(b));
    }
    assert_eq!(cached.events, fresh.events);
}

#[test]
fn derivatives_at_a_point_whose_guards_were_just_evaluated_reuse_that_evaluation() {
    // An implicit method asks for f(t1, y1) right after the guards of its step end: the
    // full evaluation the guards made serves the derivatives, with the same bits as a
    // derivative evaluation of its own.
    use drivelink_solver::HybridSystem;
    let reg = registry();
    let mut d = Diagram::new("pulsed");
    d.add("clutch", "PulsedClutch", json!({}));
    d.settings.stop_time = 1.3;
    let mut m = compile(&d, &reg).expect("compiles");
    let r = m.run();
    assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
    let x: Vec<f64> = m.initial_state().iter().map(|v| v + 0.25).collect();
    let (t, n) = (1.3, x.len());
    let (mut fresh, mut served) = (vec![0.0; n], vec![0.0; n]);
    let mut g = vec![0.0; m.n_guards()];
    m.derivatives(t, &x, &mut fresh);
    let evals = m.run.model_evals;
    m.guards(t, &x, &mut g);
    m.derivatives(t, &x, &mut served);
    assert_eq!(m.run.model_evals, evals + 1, "one evaluation for both");
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&fresh), bits(&served));
    // Another point is evaluated anew.
    let y: Vec<f64> = x.iter().map(|v| v * 1.5).collect();
    m.derivatives(t, &y, &mut served);
    assert_eq!(m.run.model_evals, evals + 2);
}

#[test]
fn fused_output_operations_give_the_bits_of_the_block_calls_they_replace() {
    // The same diagram twice: the sensor-like blocks' stages run as calls of their
    // methods, then as the fused operations their kernels compile to. Every logged value,
    // the steps and the events are the same to the bit.
    let reg = registry();
    let diagram = |fused: f64| {
        let mut d = Diagram::new("twins");
        d.add("clutch", "PulsedClutch", json!({}));
        d.add("wave", "Wave", json!({}));
        d.add("meter", "Twin", json!({ "kind": 0, "fused": fused }));
        d.add("quotient", "Twin", json!({ "kind": 1, "fused": fused }));
        d.add("ratio", "Twin", json!({ "kind": 2, "fused": fused }));
        d.connect(&["clutch.b", "meter.flange"]);
        d.connect(&["clutch.a", "ratio.flange"]);
        d.connect(&["wave.y", "quotient.u1", "ratio.u0"]);
        d.connect(&["meter.w", "quotient.u0"]);
        d.settings.stop_time = 3.0;
        d.log(&[
            "meter.w",
            "meter.phi",
            "meter.tau",
            "meter.a",
            "quotient.y",
            "ratio.y",
        ]);
        d
    };
    let run = |fused: f64| {
        let mut m = compile(&diagram(fused), &reg).expect("compiles");
        let r = m.run();
        assert_eq!(r.status, RunStatus::Completed, "{}", r.message);
        r
    };
    let (called, fused) = (run(0.0), run(1.0));
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(called.columns.len(), 6);
    for (a, b) in called.columns.iter().zip(&fused.columns) {
        assert_eq!(bits(a), bits(b));
    }
    assert_eq!(bits(&called.time), bits(&fused.time));
    assert_eq!(called.stats, fused.stats);
    assert_eq!(called.events, fused.events);
    // The values move: a locking and slipping clutch, a ratio undefined while the wave
    // is below 1.2 and defined above it, a row force that is not zero.
    let col = |name: &str| {
        let k = [
            "meter.w",
            "meter.phi",
            "meter.tau",
            "meter.a",
            "quotient.y",
            "ratio.y",
        ]
        .iter()
        .position(|n| *n == name)
        .unwrap();
        &fused.columns[k]
    };
    assert!(col("ratio.y").iter().any(|v| v.is_nan()));
    assert!(col("ratio.y").iter().any(|v| v.is_finite() && *v != 0.0));
    assert!(col("meter.tau").iter().any(|v| v.abs() > 1e-3));
    assert!(col("meter.a").iter().any(|v| v.abs() > 1e-3));
}
