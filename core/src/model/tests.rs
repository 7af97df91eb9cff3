//! Model-level tests on blocks defined here (the real blocks live in another crate): a
//! source and a first-order lag in the linear kernels, enough for the output-point
//! evaluation (`demand.rs`) and the solver's stiffness verdict as users see it.

use serde_json::json;

use crate::block::{Block, Cx, Linear, PortDecl};
use crate::params::{BlockBuild, BlockType, ParamSpec, Params, Registry};
use crate::{compile, Diagram, Method, RunStatus};

/// `y = 1 + sin(t)/2`: a block with an output stage of its own.
struct Wave;

impl Block for Wave {
    fn type_name(&self) -> &'static str {
        "Wave"
    }
    fn ports(&self) -> Vec<PortDecl> {
        vec![PortDecl::output("y")]
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        y[0] = 1.0 + 0.5 * cx.t.sin();
    }
}

/// `y = x`, `x' = (u − x)/tau`: evaluated by the linear kernels.
struct Lag {
    tau: f64,
}

impl Block for Lag {
    fn type_name(&self) -> &'static str {
        "Lag"
    }
    fn ports(&self) -> Vec<PortDecl> {
        vec![PortDecl::input("u"), PortDecl::output("y")]
    }
    fn feedthrough(&self, _input: usize) -> bool {
        false
    }
    fn n_states(&self) -> usize {
        1
    }
    fn linear(&self) -> Option<Linear> {
        Some(Linear {
            n: 1,
            m: 1,
            p: 1,
            a: vec![-1.0 / self.tau],
            b: vec![1.0 / self.tau],
            c: vec![1.0],
            d: vec![0.0],
        })
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
