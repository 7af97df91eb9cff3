//! The SimDriveline full car of `models/netlists/full_car.json`, written by hand as one
//! `HybridSystem`: the same equations, modes, guards and events as `drivelink run`, without
//! the block-diagram machinery.
//!
//! Mechanics. The ten mechanical nodes of the netlist (crank, turbine / input shaft, the
//! four CR-CR members S_O, X = C_I = R_O, S_I, Y = R_I = C_O, axle, road-wheel hub, vehicle,
//! road) keep their positions and speeds as states, exactly as drivelink lays them out, so
//! the integrator sees the same state vector and takes the same steps. Their speeds are
//! `v = T·q` in four independent coordinates `q = (w_crank, w_turbine, w_X, w_Y)` (the two
//! planetary rows, the final drive, the torque sensor and the two rolling wheels written
//! out), the reduced mass matrix is `Tᵀ·M·T`, and the locked friction joints are rows
//! `G·q = 0`. Per set of locked joints the response `a = A·f`, `λ = L·f` to the generalized
//! forces and the mass-metric projection `P` are formed once (Schur complement of the 4×4
//! system); an evaluation is the force laws plus two 4×4 mat-vecs.
//!
//! Friction joints (lock-up, gearbox A, B, R, brakes C, D, wheel brake) follow drivelink's
//! stuck/slip machine: the guards (slip sign with 1e-10 slack, locked torque against the
//! static capacity with 1e-9 relative slack, engagement hysteresis 1e-6 / 5e-7), the
//! candidate modes at an event, the release of the worst violator in the direction of its
//! torque, the start-sliding rule of a just-released joint, and the momentum-conserving
//! projection at every mode change.
//!
//! Signals. The shift schedule and the wheel-brake ramp are time functions whose breaks are
//! time events; the five hydraulic lags are states (a lag's state is its output). The two
//! `Relational` blocks of the stop condition keep their sign modes and guards, and the run
//! stops at the event where the axle is at rest while braking.
//!
//! Outputs. At every output point the model records what `drivelink run` writes for the
//! netlist (its log and its scopes' signals, [`COLUMNS`]): speeds, the engine's torque and
//! power, the vehicle's travel, the wheel brake's torque and power, the joints' modes and
//! slips, the CR-CR ratio, the gear stage and the driveline power through the torque
//! sensor (the hub carries no inertia, so the sensor delivers what the brake and the road
//! wheel take). A grid point is one of the guards' samples: its values come from the
//! evaluation the guards made there, as drivelink's do.
//!
//! The work integrals drivelink carries for its energy audit (engine, converter, road load,
//! one per friction joint) are integrated too, because they are part of the state vector the
//! step-size control sees; nothing reads them.

#![allow(clippy::needless_range_loop)]

use drivelink_solver::{EventAction, EventCause, EventKind, HybridSystem, OutputKind, SystemError};

/// Mechanical nodes.
const CRANK: usize = 0;
const TURBINE: usize = 1;
const S_O: usize = 2;
const X_M: usize = 3;
const S_I: usize = 4;
const Y_M: usize = 5;
const AXLE: usize = 6;
const HUB: usize = 7;
const VEHICLE: usize = 8;
const ROAD: usize = 9;
pub const N_NODES: usize = 10;
/// Independent speeds.
const NQ: usize = 4;
/// Friction joints.
pub const JOINT_NAMES: [&str; N_JOINTS] = [
    "lockup",
    "gearbox.clutch_A",
    "gearbox.clutch_B",
    "gearbox.clutch_R",
    "gearbox.brake_C",
    "gearbox.brake_D",
    "brake",
];
const N_JOINTS: usize = 7;
const J_LOCKUP: usize = 0;
const J_R: usize = 3;
const J_BRAKE: usize = 6;

/// State layout: positions, speeds, the five lags (A, B, C, D, lock-up), three work
/// integrals (engine, converter, road load), one loss integral per joint.
const X_POS: usize = 0;
const X_VEL: usize = N_NODES;
const X_HYD: usize = 2 * N_NODES;
const X_WORK: usize = X_HYD + 5;
const X_JOINT_E: usize = X_WORK + 3;
pub const N_STATES: usize = X_JOINT_E + N_JOINTS;
/// Guards: three per joint, then the two `Relational` blocks (two each).
const G_REL: usize = 3 * N_JOINTS;
const N_GUARDS: usize = G_REL + 4;

/// Friction-machine constants (drivelink's `SLIP_EPS`, `TORQUE_EPS`, `ENGAGE_ON/OFF`).
const SLIP_EPS: f64 = 1e-10;
const TORQUE_EPS: f64 = 1e-9;
const ENGAGE_ON: f64 = 1e-6;
const ENGAGE_OFF: f64 = 5e-7;

/// Netlist parameters.
const THROTTLE: f64 = 0.21;
const J_ENGINE: f64 = 0.25;
const J_TURBINE: f64 = 0.05;
const J_MEMBER: f64 = 0.005;
const RISE: f64 = 0.2;
const G1: f64 = 2.3;
const G2: f64 = 2.0;
const RATIO_FD: f64 = 3.23;
const R_WHEEL: f64 = 0.3;
const MASS: f64 = 1500.0;
const J_WHEEL: f64 = 4.0;
const ROAD_A: f64 = 150.0;
const ROAD_C: f64 = 0.4;
const ROAD_V_REG: f64 = 1e-3;
const BRAKE_MAX: f64 = 10000.0;
const SHIFTS: [f64; 4] = [10.0, 20.0, 30.0, 40.0];
const BRAKE_START: f64 = 44.0;
const BRAKE_END: f64 = 50.0;
/// Clutch apply schedule per gear stage 1..5 (A, B, C, D, lock-up).
const SCHEDULE: [[f64; 5]; 5] = [
    [1.0, 0.0, 0.0, 1.0, 0.0],
    [1.0, 0.0, 1.0, 0.0, 0.0],
    [1.0, 1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 0.0, 0.0, 1.0],
];

/// SimDriveline default converter tables, with the `φ = 1` point appended (K* = 1/K² = 0,
/// TR = 1).
const SR: [f64; 11] = [0.0, 0.5, 0.6, 0.7, 0.8, 0.87, 0.92, 0.94, 0.96, 0.97, 1.0];
const TR: [f64; 11] = [
    2.232, 1.5462, 1.4058, 1.2746, 1.1528, 1.0732, 1.0192, 0.9983, 0.9983, 0.9983, 1.0,
];
const K: [f64; 10] = [
    12.2938, 12.8588, 13.1452, 13.6285, 14.6163, 16.2675, 19.3503, 22.1046, 29.9986, 50.0,
];

/// A friction joint's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Free,
    Locked,
    Forward,
    Backward,
}

impl Mode {
    fn sign(self) -> f64 {
        match self {
            Mode::Forward => 1.0,
            Mode::Backward => -1.0,
            _ => 0.0,
        }
    }
}

/// A `Relational` block's sign mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sign {
    Neg,
    Zero,
    Pos,
}

impl Sign {
    fn of(d: f64) -> Sign {
        if d > 0.0 {
            Sign::Pos
        } else if d < 0.0 {
            Sign::Neg
        } else {
            Sign::Zero
        }
    }
    fn guards(self, d: f64, g: &mut [f64]) {
        let (a, b) = match self {
            Sign::Pos => (d, 1.0),
            Sign::Neg => (-d, 1.0),
            Sign::Zero => (d, -d),
        };
        g[0] = a;
        g[1] = b;
    }
}

/// One mode change of a friction joint.
#[derive(Debug, Clone, Copy)]
pub struct ModeChange {
    pub t: f64,
    pub joint: usize,
    pub from: Mode,
    pub to: Mode,
}

/// The variables `drivelink run models/netlists/full_car.json` writes to `results.csv`
/// after `time` (the netlist's `log` and its scopes' signals), in that order: the
/// hand-written model records the same values at every output point.
pub const COLUMNS: [&str; N_COLUMNS] = [
    "engine.w",
    "engine.tau",
    "engine.power",
    "vehicle.v",
    "vehicle.s",
    "brake.tau",
    "brake.mode",
    "lockup.mode",
    "gearbox.A_mode",
    "gearbox.B_mode",
    "gearbox.C_mode",
    "gearbox.D_mode",
    "gearbox.ratio",
    "master.y",
    "gearbox.A_w_rel",
    "gearbox.B_w_rel",
    "gearbox.C_w_rel",
    "gearbox.D_w_rel",
    "lockup.w_rel",
    "drive_power.y",
    "brake.power",
];
pub const N_COLUMNS: usize = 21;

/// Below this output-shaft speed (rad/s) the CR-CR ratio is undefined (NaN), as the
/// `SpeedRatio` sensor's default `min_speed`.
const RATIO_MIN_SPEED: f64 = 1e-3;

/// One output point: time, kind and the values of [`COLUMNS`].
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub t: f64,
    pub kind: OutputKind,
    pub values: [f64; N_COLUMNS],
}

/// The response of one set of locked joints.
#[derive(Debug, Clone)]
struct Factor {
    /// Accelerations per generalized force.
    a: [[f64; NQ]; NQ],
    /// Locked-joint torque per generalized force (row per joint, zero when not locked).
    lam: [[f64; NQ]; N_JOINTS],
    /// Mass-metric projection onto the locked rows.
    proj: [[f64; NQ]; NQ],
}

/// The hand-written full car.
pub struct FullCar {
    /// Node speed per independent speed.
    tmat: [[f64; NQ]; N_NODES],
    /// Joint rows in independent speeds (slip = row·q).
    rows: [[f64; NQ]; N_JOINTS],
    minv: [[f64; NQ]; NQ],
    pub modes: [Mode; N_JOINTS],
    released_at: [f64; N_JOINTS],
    factor: Factor,
    cache: Vec<(u32, Factor)>,
    /// Gear stage 1..5 (the `master` signal), switched at the shift time events.
    stage: usize,
    /// The brake ramp has started (the signal builder's segment).
    braking_ramp: bool,
    at_rest: Sign,
    braking: Sign,
    // Last evaluation.
    wrel: [f64; N_JOINTS],
    lam: [f64; N_JOINTS],
    kin: [f64; N_JOINTS],
    acc: [f64; NQ],
    tau_engine: f64,
    f_road: f64,
    /// The point of the last full evaluation (a step end's, or the guards' at a sample),
    /// which then serves the guards and the output there.
    kept: Option<(f64, [f64; N_STATES])>,
    pub evals: u64,
    pub results: Vec<Row>,
    pub changes: Vec<ModeChange>,
}

impl Default for FullCar {
    fn default() -> Self {
        Self::new()
    }
}

impl FullCar {
    pub fn new() -> Self {
        let mut tmat = [[0.0; NQ]; N_NODES];
        tmat[CRANK][0] = 1.0;
        tmat[TURBINE][1] = 1.0;
        tmat[X_M][2] = 1.0;
        tmat[Y_M][3] = 1.0;
        // Input planetary: (1+g1)·X = S_I + g1·Y; output: (1+g2)·Y = S_O + g2·X.
        tmat[S_I] = [0.0, 0.0, 1.0 + G1, -G1];
        tmat[S_O] = [0.0, 0.0, -G2, 1.0 + G2];
        // Final drive Y = ratio·axle; torque sensor hub = axle; rolling wheels v = r·w.
        for (node, k) in [(AXLE, 1.0), (HUB, 1.0), (VEHICLE, R_WHEEL), (ROAD, R_WHEEL)] {
            tmat[node][3] = k / RATIO_FD;
        }
        let mut mass = [0.0; N_NODES];
        mass[CRANK] = J_ENGINE;
        mass[TURBINE] = J_TURBINE + J_MEMBER;
        for m in [S_O, X_M, S_I, Y_M] {
            mass[m] = J_MEMBER;
        }
        mass[AXLE] = J_WHEEL;
        mass[VEHICLE] = MASS;
        let mut mr = [[0.0; NQ]; NQ];
        for i in 0..NQ {
            for j in 0..NQ {
                mr[i][j] = (0..N_NODES)
                    .map(|k| tmat[k][i] * mass[k] * tmat[k][j])
                    .sum();
            }
        }
        let minv = invert(&mr, NQ).expect("the reduced mass matrix is positive definite");
        // Joint slips w_b − w_a (clutches) and w (brakes), in node speeds.
        let node_rows: [[(usize, f64); 2]; N_JOINTS] = [
            [(TURBINE, 1.0), (CRANK, -1.0)],
            [(S_O, 1.0), (TURBINE, -1.0)],
            [(X_M, 1.0), (TURBINE, -1.0)],
            [(S_I, 1.0), (TURBINE, -1.0)],
            [(S_I, 1.0), (S_I, 0.0)],
            [(X_M, 1.0), (X_M, 0.0)],
            [(HUB, 1.0), (HUB, 0.0)],
        ];
        let mut rows = [[0.0; NQ]; N_JOINTS];
        for (j, r) in node_rows.iter().enumerate() {
            for &(node, c) in r {
                for i in 0..NQ {
                    rows[j][i] += c * tmat[node][i];
                }
            }
        }
        let mut car = FullCar {
            tmat,
            rows,
            minv,
            modes: [Mode::Free; N_JOINTS],
            released_at: [f64::NEG_INFINITY; N_JOINTS],
            factor: Factor {
                a: minv,
                lam: [[0.0; NQ]; N_JOINTS],
                proj: identity(),
            },
            cache: Vec::new(),
            stage: 1,
            braking_ramp: false,
            at_rest: Sign::Zero,
            braking: Sign::Zero,
            wrel: [0.0; N_JOINTS],
            lam: [0.0; N_JOINTS],
            kin: [0.0; N_JOINTS],
            acc: [0.0; NQ],
            tau_engine: 0.0,
            f_road: 0.0,
            kept: None,
            evals: 0,
            results: Vec::with_capacity(4000),
            changes: Vec::new(),
        };
        car.refactor().expect("all joints free is not singular");
        car
    }

    /// The initial state: everything at rest but the crank at idle (800 rpm).
    pub fn initial_state(&self) -> Vec<f64> {
        let mut x = vec![0.0; N_STATES];
        x[X_VEL + CRANK] = 800.0 * std::f64::consts::PI / 30.0;
        x
    }

    /// The wheel-brake torque command (N·m), the signal builder's ramp.
    fn brake_command(&self, t: f64) -> f64 {
        if self.braking_ramp {
            (t - BRAKE_START) / (BRAKE_END - BRAKE_START) * BRAKE_MAX
        } else {
            0.0
        }
    }

    /// Normalized normal force of joint `j`.
    fn engagement(&self, j: usize, t: f64, x: &[f64]) -> f64 {
        match j {
            J_LOCKUP => x[X_HYD + 4],
            J_R => 0.0,
            J_BRAKE => self.brake_command(t) * (1.0 / BRAKE_MAX),
            // A, B (joints 1, 2), C, D (joints 4, 5).
            1 | 2 => x[X_HYD + j - 1],
            _ => x[X_HYD + j - 2],
        }
    }

    /// (kinetic torque, static capacity) of joint `j` at normal force `f`.
    fn law(j: usize, f: f64) -> (f64, f64) {
        // cgeo·fn_max·mu: lock-up 2 surfaces, gearbox 6, at 0.1 m, 10 kN, mu 0.3; the
        // wheel brake max_torque 10 kN·m; peak factor 1.1 everywhere.
        let scale = match j {
            J_LOCKUP => 2.0 * 0.1 * 10000.0 * 0.3,
            J_BRAKE => BRAKE_MAX,
            _ => 6.0 * 0.1 * 10000.0 * 0.3,
        };
        let fpos = f.max(0.0);
        (scale * fpos, 1.1 * scale * fpos)
    }

    /// Evaluate forces, slips, accelerations and locked torques at `(t, x)`; writes the
    /// state derivatives when `dx` is given.
    fn eval(&mut self, t: f64, x: &[f64], dx: Option<&mut [f64]>) {
        self.evals += 1;
        let v = &x[X_VEL..X_VEL + N_NODES];
        let q = [v[CRANK], v[TURBINE], v[X_M], v[Y_M]];
        let w_e = v[CRANK];
        let tau_e = engine_torque(w_e);
        let (ti, tt) = converter(w_e, v[TURBINE]);
        let f_road = -(ROAD_A * (v[ROAD] / ROAD_V_REG).tanh() + ROAD_C * v[ROAD] * v[ROAD].abs());
        self.tau_engine = tau_e;
        self.f_road = f_road;
        let mut f = [tau_e - ti, tt, 0.0, self.tmat[ROAD][3] * f_road];
        for j in 0..N_JOINTS {
            let row = &self.rows[j];
            let w = row[0] * q[0] + row[1] * q[1] + row[2] * q[2] + row[3] * q[3];
            self.wrel[j] = w;
            let s = self.modes[j].sign();
            let tau = if s != 0.0 {
                -s * Self::law(j, self.engagement(j, t, x)).0
            } else {
                0.0
            };
            self.kin[j] = tau;
            if tau != 0.0 {
                for i in 0..NQ {
                    f[i] += row[i] * tau;
                }
            }
        }
        self.acc = matvec(&self.factor.a, &f);
        for j in 0..N_JOINTS {
            let l = &self.factor.lam[j];
            self.lam[j] = l[0] * f[0] + l[1] * f[1] + l[2] * f[2] + l[3] * f[3];
        }
        let Some(dx) = dx else { return };
        dx[X_POS..X_POS + N_NODES].copy_from_slice(v);
        for k in 0..N_NODES {
            let tk = &self.tmat[k];
            dx[X_VEL + k] = tk[0] * self.acc[0]
                + tk[1] * self.acc[1]
                + tk[2] * self.acc[2]
                + tk[3] * self.acc[3];
        }
        let target = &SCHEDULE[self.stage - 1];
        for i in 0..5 {
            dx[X_HYD + i] = (target[i] - x[X_HYD + i]) / RISE;
        }
        dx[X_WORK] = tau_e * w_e;
        dx[X_WORK + 1] = -ti * w_e + tt * v[TURBINE];
        dx[X_WORK + 2] = f_road * v[ROAD];
        for j in 0..N_JOINTS {
            dx[X_JOINT_E + j] = self.kin[j] * self.wrel[j];
        }
    }

    /// Remember `(t, x)` as the point of the last full evaluation.
    fn keep(&mut self, t: f64, x: &[f64]) {
        let mut k = [0.0; N_STATES];
        k.copy_from_slice(x);
        self.kept = Some((t, k));
    }

    /// Whether the last full evaluation was at `(t, x)`.
    fn is_kept(&self, t: f64, x: &[f64]) -> bool {
        self.kept
            .as_ref()
            .is_some_and(|(kt, kx)| *kt == t && kx.as_slice() == x)
    }

    /// The values of [`COLUMNS`] at `x`, from the evaluation there.
    fn row(&self, x: &[f64]) -> [f64; N_COLUMNS] {
        let v = &x[X_VEL..X_VEL + N_NODES];
        let code = |m: Mode| match m {
            Mode::Free => 2.0,
            Mode::Locked => 0.0,
            m => m.sign(),
        };
        // A joint transmits its constraint torque while locked, its kinetic one otherwise.
        let tau = |j: usize| {
            if self.modes[j] == Mode::Locked {
                self.lam[j]
            } else {
                self.kin[j]
            }
        };
        let tau_brake = tau(J_BRAKE);
        // The hub carries no inertia: the torque sensor delivers to it what the brake and
        // the road wheel (road load times the radius) take from it.
        let tau_sensor = -tau_brake - R_WHEEL * self.f_road;
        let ratio = if v[Y_M].abs() >= RATIO_MIN_SPEED && v[Y_M].abs() > 0.0 {
            v[TURBINE] / v[Y_M]
        } else {
            f64::NAN
        };
        [
            v[CRANK],
            self.tau_engine,
            self.tau_engine * v[CRANK],
            v[VEHICLE],
            x[X_POS + VEHICLE],
            tau_brake,
            code(self.modes[J_BRAKE]),
            code(self.modes[J_LOCKUP]),
            code(self.modes[1]),
            code(self.modes[2]),
            code(self.modes[4]),
            code(self.modes[5]),
            ratio,
            self.stage as f64,
            self.wrel[1],
            self.wrel[2],
            self.wrel[4],
            self.wrel[5],
            self.wrel[J_LOCKUP],
            tau_sensor * v[HUB],
            tau_brake * v[HUB],
        ]
    }

    /// Form (or fetch) the response of the current set of locked joints.
    fn refactor(&mut self) -> Result<(), SystemError> {
        let key = self
            .modes
            .iter()
            .enumerate()
            .filter(|(_, m)| **m == Mode::Locked)
            .fold(0u32, |k, (j, _)| k | (1 << j));
        if let Some((_, f)) = self.cache.iter().find(|(k, _)| *k == key) {
            self.factor = f.clone();
            return Ok(());
        }
        let locked: Vec<usize> = (0..N_JOINTS).filter(|j| key & (1 << j) != 0).collect();
        let m = locked.len();
        // B = M⁻¹·Gᵀ (NQ×m), W = G·M⁻¹·Gᵀ (m×m).
        let mut b = vec![[0.0; NQ]; m];
        for (r, &j) in locked.iter().enumerate() {
            b[r] = matvec(&self.minv, &self.rows[j]);
        }
        let mut w = [[0.0; N_JOINTS]; N_JOINTS];
        for r in 0..m {
            for c in 0..m {
                w[r][c] = dot(&self.rows[locked[r]], &b[c]);
            }
        }
        let winv = invert(&w, m).ok_or_else(|| SystemError {
            message: format!("redundant locked joints {locked:?}"),
        })?;
        // λ = −W⁻¹·G·M⁻¹·f = −W⁻¹·Bᵀ·f; a = M⁻¹·f + B·λ; P = I − B·W⁻¹·G.
        let mut fac = Factor {
            a: self.minv,
            lam: [[0.0; NQ]; N_JOINTS],
            proj: identity(),
        };
        for (r, &j) in locked.iter().enumerate() {
            for i in 0..NQ {
                fac.lam[j][i] = -(0..m).map(|c| winv[r][c] * b[c][i]).sum::<f64>();
            }
        }
        for i in 0..NQ {
            for k in 0..NQ {
                for (r, &j) in locked.iter().enumerate() {
                    fac.a[i][k] += b[r][i] * fac.lam[j][k];
                    let wg: f64 = (0..m).map(|c| winv[r][c] * self.rows[locked[c]][k]).sum();
                    fac.proj[i][k] -= b[r][i] * wg;
                }
            }
        }
        self.cache.push((key, fac.clone()));
        self.factor = fac;
        Ok(())
    }

    /// Project the node speeds onto the locked rows (mass metric).
    fn project(&self, x: &mut [f64]) {
        let v = &x[X_VEL..X_VEL + N_NODES];
        let q = matvec(&self.factor.proj, &[v[CRANK], v[TURBINE], v[X_M], v[Y_M]]);
        for k in 0..N_NODES {
            x[X_VEL + k] = dot(&self.tmat[k], &q);
        }
    }

    /// Static range slack of a locked joint's torque guard.
    fn slack(cap: f64) -> f64 {
        TORQUE_EPS * (2.0 * cap).max(1e-3)
    }

    /// Candidate modes from the slips and engagements (drivelink's `candidate_modes`).
    fn candidates(&self, t: f64, x: &[f64]) -> [Mode; N_JOINTS] {
        let mut cand = self.modes;
        for j in 0..N_JOINTS {
            let old = self.modes[j];
            let e = self.engagement(j, t, x);
            let engaged = if old == Mode::Free {
                e > ENGAGE_ON
            } else {
                e >= ENGAGE_OFF
            };
            let w = self.wrel[j];
            cand[j] = if !engaged {
                Mode::Free
            } else if old == Mode::Locked {
                Mode::Locked
            } else {
                let s = old.sign();
                let near = if s == 0.0 {
                    w.abs() <= SLIP_EPS
                } else {
                    s * w <= SLIP_EPS
                };
                let starting = s != 0.0
                    && self.released_at[j] <= t
                    && self.released_at[j] > f64::NEG_INFINITY
                    && s * dot(&self.rows[j], &self.acc) >= 0.0;
                if near && starting {
                    old
                } else if near {
                    Mode::Locked
                } else if w > 0.0 {
                    Mode::Forward
                } else {
                    Mode::Backward
                }
            };
        }
        cand
    }

    /// The locked joint whose torque leaves its static range the most (and whether over).
    fn worst_violator(&self, t: f64, x: &[f64], cand: &[Mode; N_JOINTS]) -> Option<(usize, bool)> {
        let mut worst: Option<(usize, f64, bool)> = None;
        for j in 0..N_JOINTS {
            if cand[j] != Mode::Locked {
                continue;
            }
            let cap = Self::law(j, self.engagement(j, t, x)).1;
            let slack = Self::slack(cap);
            let over = self.lam[j] - cap - slack;
            let under = -cap - self.lam[j] - slack;
            let (excess, high) = if over > under {
                (over, true)
            } else {
                (under, false)
            };
            if excess > 0.0 && worst.is_none_or(|w| excess > w.1) {
                worst = Some((j, excess, high));
            }
        }
        worst.map(|w| (w.0, w.2))
    }

    /// The friction mode iteration at an event instant (drivelink's `settle_frictions`).
    fn settle(&mut self, t: f64, x: &mut [f64]) -> Result<bool, SystemError> {
        self.kept = None;
        let old = self.modes;
        self.eval(t, x, None);
        for j in 0..N_JOINTS {
            if old[j].sign() * self.wrel[j] > SLIP_EPS {
                self.released_at[j] = f64::NEG_INFINITY;
            }
        }
        let mut cand = self.candidates(t, x);
        for _ in 0..(2 * N_JOINTS + 2) {
            if cand != self.modes {
                self.modes = cand;
                self.refactor()?;
                self.project(x);
            }
            self.eval(t, x, None);
            match self.worst_violator(t, x, &cand) {
                None => break,
                Some((j, high)) => cand[j] = if high { Mode::Backward } else { Mode::Forward },
            }
        }
        if cand != self.modes {
            self.modes = cand;
            self.refactor()?;
            self.eval(t, x, None);
        }
        for j in 0..N_JOINTS {
            if old[j] != self.modes[j] {
                if old[j] == Mode::Locked && self.modes[j].sign() != 0.0 {
                    self.released_at[j] = t;
                }
                self.changes.push(ModeChange {
                    t,
                    joint: j,
                    from: old[j],
                    to: self.modes[j],
                });
            }
        }
        Ok(old != self.modes)
    }

    /// Update the two `Relational` blocks; true if an output changed.
    fn update_relationals(&mut self, t: f64, x: &[f64]) -> bool {
        let d_rest = x[X_VEL + HUB];
        let d_brake = self.brake_command(t);
        let (r0, b0) = (self.at_rest != Sign::Pos, self.braking == Sign::Pos);
        self.at_rest = Sign::of(d_rest);
        self.braking = Sign::of(d_brake);
        r0 != (self.at_rest != Sign::Pos) || b0 != (self.braking == Sign::Pos)
    }
}

impl HybridSystem for FullCar {
    fn n_states(&self) -> usize {
        N_STATES
    }
    fn n_guards(&self) -> usize {
        N_GUARDS
    }
    fn derivatives(&mut self, t: f64, x: &[f64], dx: &mut [f64]) {
        self.kept = None;
        self.eval(t, x, Some(dx));
    }
    fn derivatives_step_end(&mut self, t: f64, x: &[f64], dx: &mut [f64]) {
        self.eval(t, x, Some(dx));
        self.keep(t, x);
    }
    fn guards(&mut self, t: f64, x: &[f64], g: &mut [f64]) {
        if !self.is_kept(t, x) {
            self.eval(t, x, None);
            self.keep(t, x);
        }
        for j in 0..N_JOINTS {
            let e = self.engagement(j, t, x);
            let gj = &mut g[3 * j..3 * j + 3];
            match self.modes[j] {
                Mode::Locked => {
                    let cap = Self::law(j, e).1;
                    let slack = Self::slack(cap);
                    gj[0] = self.lam[j] + cap + slack;
                    gj[1] = cap - self.lam[j] + slack;
                    gj[2] = e - ENGAGE_OFF;
                }
                Mode::Free => {
                    gj[0] = 1.0;
                    gj[1] = 1.0;
                    gj[2] = ENGAGE_ON - e;
                }
                m => {
                    gj[0] = m.sign() * self.wrel[j] + SLIP_EPS;
                    gj[1] = 1.0;
                    gj[2] = e - ENGAGE_OFF;
                }
            }
        }
        self.at_rest
            .guards(x[X_VEL + HUB], &mut g[G_REL..G_REL + 2]);
        self.braking
            .guards(self.brake_command(t), &mut g[G_REL + 2..G_REL + 4]);
    }
    fn next_time_event(&self, t: f64) -> f64 {
        SHIFTS
            .iter()
            .chain(&[BRAKE_START, BRAKE_END])
            .copied()
            .find(|&te| te > t)
            .unwrap_or(f64::INFINITY)
    }
    fn handle_event(
        &mut self,
        t: f64,
        x: &mut [f64],
        cause: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        if cause.kind == EventKind::Time {
            let tol = 1e-13 * t.abs().max(1.0);
            self.stage = 1 + SHIFTS.iter().filter(|&&s| s <= t + tol).count();
            self.braking_ramp = t + tol >= BRAKE_START;
        }
        for _round in 0..100 {
            let rel = self.update_relationals(t, x);
            let fric = self.settle(t, x)?;
            if !(rel || fric) {
                break;
            }
        }
        let at_rest = self.at_rest != Sign::Pos;
        let braking = self.braking == Sign::Pos;
        Ok(if at_rest && braking {
            EventAction::Stop
        } else {
            EventAction::Continue
        })
    }
    fn guard_name(&self, i: usize) -> String {
        if i < G_REL {
            format!("{}.{}", JOINT_NAMES[i / 3], ["lo", "hi", "engage"][i % 3])
        } else {
            ["at_rest", "at_rest.leave", "braking", "braking.leave"][i - G_REL].into()
        }
    }
    fn output(&mut self, t: f64, x: &[f64], kind: OutputKind) {
        if !self.is_kept(t, x) {
            self.eval(t, x, None);
            self.keep(t, x);
        }
        let values = self.row(x);
        self.results.push(Row { t, kind, values });
    }
}

/// SimDriveline gasoline engine (150 kW at 4500 rpm, governor band 1 % of 6000 rpm).
fn engine_torque(w: f64) -> f64 {
    let w0 = 4500.0 * std::f64::consts::PI / 30.0;
    let w_max = 6000.0 * std::f64::consts::PI / 30.0;
    if w <= 0.0 {
        return 0.0;
    }
    let r = w / w0;
    let envelope = 150e3 / w0 * (1.0 + r - r * r);
    let xi = ((w_max - w) / (0.01 * w_max)).clamp(0.0, 1.0);
    THROTTLE * envelope * (xi * xi * (3.0 - 2.0 * xi))
}

/// Linear interpolation on the converter's speed-ratio axis (ends held).
fn interp(y: impl Fn(usize) -> f64, u: f64) -> f64 {
    if u <= SR[0] {
        return y(0);
    }
    if u >= SR[SR.len() - 1] {
        return y(SR.len() - 1);
    }
    let k = SR.iter().filter(|&&s| s <= u).count() - 1;
    y(k) + (u - SR[k]) / (SR[k + 1] - SR[k]) * (y(k + 1) - y(k))
}

/// K* = 1/K² at breakpoint `k` (0 at φ = 1).
fn kstar(k: usize) -> f64 {
    if k < K.len() {
        1.0 / (K[k] * K[k])
    } else {
        0.0
    }
}

/// Torque converter (impeller load, turbine torque) at impeller `wi`, turbine `wt`.
fn converter(wi: f64, wt: f64) -> (f64, f64) {
    if wi <= 0.0 {
        return (0.0, 0.0);
    }
    let phi = wt / wi;
    if phi <= 1.0 {
        let u = phi.max(0.0);
        let ti = interp(kstar, u) * wi * wi;
        (ti, interp(|k| TR[k], u) * ti)
    } else {
        let ti = -interp(kstar, 1.0 / phi) * wt * wt;
        (ti, ti)
    }
}

fn identity() -> [[f64; NQ]; NQ] {
    let mut m = [[0.0; NQ]; NQ];
    for (i, r) in m.iter_mut().enumerate() {
        r[i] = 1.0;
    }
    m
}

fn dot(a: &[f64; NQ], b: &[f64; NQ]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
}

fn matvec(m: &[[f64; NQ]; NQ], v: &[f64; NQ]) -> [f64; NQ] {
    [dot(&m[0], v), dot(&m[1], v), dot(&m[2], v), dot(&m[3], v)]
}

/// Inverse of the leading `n`×`n` block of `a` (Gauss–Jordan with partial pivoting), or
/// `None` when it is singular.
fn invert<const D: usize>(a: &[[f64; D]; D], n: usize) -> Option<[[f64; D]; D]> {
    let mut m = *a;
    let mut inv = [[0.0; D]; D];
    for (i, r) in inv.iter_mut().enumerate().take(n) {
        r[i] = 1.0;
    }
    let scale = (0..n)
        .map(|i| m[i][i].abs())
        .fold(0.0, f64::max)
        .max(1e-300);
    for c in 0..n {
        let p = (c..n).max_by(|&i, &k| m[i][c].abs().total_cmp(&m[k][c].abs()))?;
        if m[p][c].abs() <= 1e-12 * scale {
            return None;
        }
        m.swap(c, p);
        inv.swap(c, p);
        let d = m[c][c];
        for k in 0..n {
            m[c][k] /= d;
            inv[c][k] /= d;
        }
        for i in 0..n {
            if i != c {
                let f = m[i][c];
                if f != 0.0 {
                    for k in 0..n {
                        m[i][k] -= f * m[c][k];
                        inv[i][k] -= f * inv[c][k];
                    }
                }
            }
        }
    }
    Some(inv)
}
