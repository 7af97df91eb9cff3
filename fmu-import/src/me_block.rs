//! The `Fmu` block importing a Model Exchange FMU (FMI 3.0 or 2.0): drivelink's solver
//! integrates the FMU's continuous states, and the FMU's event indicators are guards that
//! the solver locates like every other block's.
//!
//! The FMU's continuous states are the block's states (`initial_states` are those of the
//! initialization made when the block is built; every run takes them anew from the FMU at
//! its initial event). At every evaluation the block gives the FMU the time, its states
//! and its inputs (each only when it changed since the last call: `fmi3SetTime`,
//! `fmi3SetContinuousStates`, `fmi3SetFloat64`) and reads what is asked: the derivatives
//! (`fmi3GetContinuousStateDerivatives`, FMI 2.0 `fmi2GetDerivatives`), the outputs
//! (`fmi3GetFloat64`) or the event indicators (`fmi3GetEventIndicators`).
//!
//! Indicators and guards: FMI signals an event when an indicator changes sides (from
//! `z > 0` to `z <= 0` or back), a drivelink guard when it goes negative. So the block
//! keeps, per indicator, the side it was on after the last event (`s = +1` above zero,
//! `−1` below; an indicator exactly at zero keeps its side) and its guard is `s·z`: the
//! solver locates the first instant past a sign change, as it does for its own guards.
//! One more guard, `fmu_error`, goes negative when a call made during an evaluation
//! failed (an evaluation cannot fail the run itself; the derivatives then read 0), so
//! that the solver locates it and the run fails with the FMU's message at the start of
//! the step in which the call failed (the message gives the instant of the call).
//!
//! Events: at a located crossing (a guard negative in `update_modes`) or at the FMU's
//! `nextEventTime` (a time event of the block), the block sets time, states and inputs,
//! calls `fmi3EnterEventMode`, then `fmi3UpdateDiscreteStates` (FMI 2.0
//! `fmi2NewDiscreteStates`) until the FMU needs no further iteration, reads the states
//! back into the block's states if `valuesOfContinuousStatesChanged`, takes the next
//! event time, returns to Continuous-Time Mode and takes each indicator's side anew.
//! `terminateSimulation` stops the run (an event says why); a call that fails (Error,
//! Discard, Fatal) fails the run with the function, the status and the FMU's last logged
//! messages.

use std::sync::{Mutex, MutexGuard};

use drivelink_core::{Block, BlockDecl, Cx, EventCx, EventTag, ParamError, Params};

use crate::block::{call_error, Io};
use crate::cosim::{CallError, Phase};
use crate::me::{EventInfo, ModelExchange};
use crate::Unpacked;

/// Calls of `fmi3UpdateDiscreteStates` at one event after which the iteration counts as
/// not settling (the run fails).
const MAX_EVENT_ITERATIONS: usize = 1000;

/// The name of the guard that reports a failed evaluation.
const ERROR_GUARD: &str = "fmu_error";

/// The run data of the instance (behind a mutex: evaluations take `&self`).
struct State {
    /// Declared first: freed before the buffers (and the block's library, see
    /// [`MeBlock`]).
    inst: Box<dyn ModelExchange>,
    /// The instance waits for the end of its initialization (the run's initial event).
    init: bool,
    /// The time, states and inputs (FMU units) last given to the FMU (NaN: none yet).
    t: f64,
    x: Vec<f64>,
    u: Vec<f64>,
    u_new: Vec<f64>,
    /// Per indicator, the side it has been on since the last event (+1 or −1).
    side: Vec<f64>,
    z: Vec<f64>,
    /// The outputs last read (SI) and a buffer (FMU units).
    y: Vec<f64>,
    y_raw: Vec<f64>,
    /// The FMU's next time event (infinite: none).
    next_event: f64,
    /// Why the run failed, and whether the run has been failed with it.
    failed: Option<(String, bool)>,
    /// The FMU asked to terminate the simulation (asked again at every mode update: the
    /// model takes a stop from the round of an instant in which nothing changes).
    terminate: bool,
}

/// The `Fmu` block of a Model Exchange FMU (see the module docs).
pub struct MeBlock {
    io: Io,
    nx: usize,
    nz: usize,
    /// The states after the initialization made at build time.
    x_start: Vec<f64>,
    /// The guards' names: the indicators' variable names (FMI 2.0: `indicatorK`), then
    /// [`ERROR_GUARD`].
    guard_names: Vec<String>,
    /// Declared before `fmu`: the instance is freed before the library is unloaded.
    st: Mutex<State>,
    fmu: Unpacked,
}

/// Build the Model Exchange block of the unpacked `fmu` (`param`: the parameter naming
/// the file, for errors).
pub fn build(p: &Params, param: &str, fmu: Unpacked) -> Result<Box<dyn Block>, ParamError> {
    let file = fmu.file.clone();
    let io = Io::new(p, param, &fmu)?;
    let call = |e: CallError| call_error(p, param, &file, e);
    let d = &fmu.description;
    let mut inst = fmu
        .library
        .instantiate_me(&p.block, &d.instantiation_token, fmu.resources.as_deref())
        .map_err(call)?;
    // FMI 3.0: the FMU's own counts (an array variable holds several states); FMI 2.0:
    // the description's.
    let described = (d.n_states, d.n_indicators);
    let (nx, nz) = inst.sizes().map_err(call)?.unwrap_or(described);
    let mut guard_names: Vec<String> = (0..nz)
        .map(|i| {
            d.indicators
                .get(i)
                .filter(|_| nz == d.indicators.len())
                .and_then(|vr| d.variables.iter().find(|v| v.value_reference == *vr))
                .map_or_else(|| format!("indicator{}", i + 1), |v| v.name.clone())
        })
        .collect();
    guard_names.push(ERROR_GUARD.to_string());
    let st = State {
        inst,
        init: true,
        t: f64::NAN,
        x: vec![f64::NAN; nx],
        u: io.input_starts(),
        u_new: io.input_starts(),
        side: vec![1.0; nz],
        z: vec![0.0; nz],
        y: vec![0.0; io.outputs.len()],
        y_raw: vec![0.0; io.outputs.len()],
        next_event: f64::INFINITY,
        failed: None,
        terminate: false,
    };
    let mut b = MeBlock {
        io,
        nx,
        nz,
        x_start: vec![0.0; nx],
        guard_names,
        st: Mutex::new(st),
        fmu,
    };
    // Initialise once at t = 0 with the start values: parameter values the FMU refuses
    // are errors of the netlist, found before any run; the states it starts from are the
    // block's initial states.
    let s = b.st.get_mut().unwrap_or_else(|e| e.into_inner());
    s.initialise(&b.io, 0.0).map_err(call)?;
    let mut x = vec![0.0; nx];
    s.end_initialization(&b.io, &mut x).map_err(call)?;
    b.x_start = x;
    Ok(Box::new(b))
}

/// Same value, NaN equal to NaN.
fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

impl State {
    /// From any state but fatal to initialization mode at `t0`, parameters and inputs
    /// set.
    fn initialise(&mut self, io: &Io, t0: f64) -> Result<(), CallError> {
        if self.inst.phase() != Phase::Instantiated {
            self.inst.reset()?;
        }
        self.inst.set(&io.params.0, &io.params.1)?;
        self.inst.enter_initialization(t0)?;
        self.inst.set(&io.in_vrs, &self.u)?;
        self.init = true;
        Ok(())
    }

    /// Leave initialization mode (inputs set), run the event iteration of the initial
    /// instant and go to Continuous-Time Mode; the initial states into `x`.
    fn end_initialization(&mut self, io: &Io, x: &mut [f64]) -> Result<EventInfo, CallError> {
        self.inst.exit_initialization()?;
        self.init = false;
        let info = self.iterate()?;
        self.inst.get_states(x)?;
        self.after_event(io, x, info)?;
        Ok(info)
    }

    /// `fmi3UpdateDiscreteStates` until the FMU needs no further call (the last call's
    /// report; states changed by any of the calls count).
    fn iterate(&mut self) -> Result<EventInfo, CallError> {
        let mut changed = false;
        for _ in 0..MAX_EVENT_ITERATIONS {
            let mut info = self.inst.update_discrete_states()?;
            changed |= info.states_changed;
            if !info.needs_update || info.terminate {
                info.states_changed = changed;
                return Ok(info);
            }
        }
        Err(CallError {
            function: "the event iteration",
            status: "not settled",
            messages: vec![format!(
                "the FMU still asked for another discrete-state update after {MAX_EVENT_ITERATIONS} calls"
            )],
        })
    }

    /// Back to Continuous-Time Mode after an event that left the states `x`: the next
    /// event time, the indicators' sides and the outputs.
    fn after_event(&mut self, io: &Io, x: &[f64], info: EventInfo) -> Result<(), CallError> {
        self.next_event = info.next_time.unwrap_or(f64::INFINITY);
        self.inst.enter_continuous_time_mode()?;
        self.x.copy_from_slice(x);
        self.inst.get_indicators(&mut self.z)?;
        for (s, &z) in self.side.iter_mut().zip(&self.z) {
            if z > 0.0 {
                *s = 1.0;
            } else if z < 0.0 {
                *s = -1.0;
            }
        }
        self.read_outputs(io)
    }

    /// Give the FMU the time `t`, the states `x` and the inputs `u(i)` (SI), each only if it
    /// changed. In initialization mode only the inputs.
    fn sync(
        &mut self,
        io: &Io,
        t: f64,
        x: &[f64],
        u: &dyn Fn(usize) -> f64,
    ) -> Result<(), CallError> {
        if !self.init {
            if !same(t, self.t) {
                self.inst.set_time(t)?;
                self.t = t;
            }
            if x.iter().zip(&self.x).any(|(a, b)| !same(*a, *b)) {
                self.inst.set_states(x)?;
                self.x.copy_from_slice(x);
            }
        }
        let mut changed = false;
        for (i, p) in io.inputs.iter().enumerate() {
            let v = p.si_to_fmu(u(i));
            changed |= !same(v, self.u[i]);
            self.u_new[i] = v;
        }
        if changed {
            self.inst.set(&io.in_vrs, &self.u_new)?;
            self.u.copy_from_slice(&self.u_new);
        }
        Ok(())
    }

    /// Read the outputs (into `y`, SI).
    fn read_outputs(&mut self, io: &Io) -> Result<(), CallError> {
        self.inst.get(&io.out_vrs, &mut self.y_raw)?;
        for ((y, &raw), p) in self.y.iter_mut().zip(&self.y_raw).zip(&io.outputs) {
            *y = p.fmu_to_si(raw);
        }
        Ok(())
    }

    /// The run fails with `e` (at the next event instant, see [`State::report`]).
    fn fail(&mut self, file: &str, e: CallError, t: f64) {
        if self.failed.is_none() {
            self.failed = Some((format!("FMU '{file}' failed at t = {t} s: {e}"), false));
        }
    }

    /// Stop the run if the FMU asked to terminate it (logged once).
    fn ask_stop(&mut self, cx: &mut EventCx, info: EventInfo) {
        if info.terminate && !self.terminate {
            self.terminate = true;
            cx.log(EventTag::Stop, "the FMU asked to terminate the simulation");
        }
        if self.terminate {
            cx.request_stop();
        }
    }

    /// Fail the run with the stored failure (once); true if there is one.
    fn report(&mut self, cx: &mut EventCx) -> bool {
        match &mut self.failed {
            Some((msg, reported)) => {
                if !*reported {
                    *reported = true;
                    cx.fail(msg.clone());
                }
                true
            }
            None => false,
        }
    }
}

impl MeBlock {
    fn state(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Handle an event of the FMU at `cx.t` (its states in `cx.x`): see the module docs.
    fn event(&mut self, cx: &mut EventCx) {
        let file = self.fmu.file.clone();
        let s = self.st.get_mut().unwrap_or_else(|e| e.into_inner());
        let u = |i: usize| cx.u(i);
        let r = s
            .sync(&self.io, cx.t, cx.x, &u)
            .and_then(|()| s.inst.enter_event_mode())
            .and_then(|()| s.iterate());
        let r = r.and_then(|info| {
            if info.states_changed {
                s.inst.get_states(cx.x)?;
            }
            s.after_event(&self.io, cx.x, info)?;
            Ok(info)
        });
        match r {
            Ok(info) => s.ask_stop(cx, info),
            Err(e) => {
                s.fail(&file, e, cx.t);
                s.report(cx);
            }
        }
    }

    /// The initial event of a run: initialization ends with the inputs of the start
    /// instant, and the FMU's initial states become the block's.
    fn initial_event(&mut self, cx: &mut EventCx) {
        let file = self.fmu.file.clone();
        let s = self.st.get_mut().unwrap_or_else(|e| e.into_inner());
        let u = |i: usize| cx.u(i);
        let r = s
            .sync(&self.io, cx.t, cx.x, &u)
            .and_then(|()| s.end_initialization(&self.io, cx.x));
        match r {
            Ok(info) => {
                s.t = cx.t;
                s.ask_stop(cx, info);
            }
            Err(e) => {
                s.fail(&file, e, cx.t);
                s.report(cx);
            }
        }
    }
}

impl Block for MeBlock {
    /// The imported FMU keeps run data of its own (its instance) that drivelink does not
    /// save: a model with an `Fmu` block has no saved state.
    fn save_run_state(&self) -> Result<Option<drivelink_core::RunState>, String> {
        Err(crate::block::UNSAVED_STATE.into())
    }
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: self.io.decls(),
            states: self.nx,
            ..BlockDecl::default()
        }
        .guards_named(self.nz + 1, |i| {
            self.guard_names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("guard{i}"))
        })
        .feedthrough_by(|input| self.io.feed.get(input).copied().unwrap_or(true))
    }
    fn initial_states(&self, x: &mut [f64]) {
        x.copy_from_slice(&self.x_start);
    }
    fn reset(&mut self, t0: f64) {
        let file = self.fmu.file.clone();
        let s = self.st.get_mut().unwrap_or_else(|e| e.into_inner());
        s.failed = None;
        s.terminate = false;
        s.t = f64::NAN;
        s.x.fill(f64::NAN);
        s.u = self.io.input_starts();
        s.side.fill(1.0);
        s.y.fill(0.0);
        s.next_event = f64::INFINITY;
        s.init = true;
        if s.inst.phase() == Phase::Fatal {
            let e = CallError {
                function: "(an earlier call)",
                status: "Fatal",
                messages: vec!["the FMU cannot be used any more".into()],
            };
            s.fail(&file, e, t0);
            return;
        }
        if let Err(e) = s.initialise(&self.io, t0) {
            s.fail(&file, e, t0);
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let mut g = self.state();
        let s = &mut *g;
        // Before the initial event the outputs are those of the last run (or zero): the
        // initial event's evaluation replaces them.
        if s.failed.is_none() && !s.init {
            let u = |i: usize| cx.u(i);
            let r = s
                .sync(&self.io, cx.t, cx.x, &u)
                .and_then(|()| s.read_outputs(&self.io));
            if let Err(e) = r {
                s.fail(&self.fmu.file, e, cx.t);
            }
        }
        y[..s.y.len()].copy_from_slice(&s.y);
    }
    fn derivatives(&self, cx: &Cx, dx: &mut [f64]) {
        let mut g = self.state();
        let s = &mut *g;
        if s.failed.is_some() || s.init {
            dx.fill(0.0);
            return;
        }
        let u = |i: usize| cx.u(i);
        let r = s
            .sync(&self.io, cx.t, cx.x, &u)
            .and_then(|()| s.inst.get_derivatives(dx));
        if let Err(e) = r {
            s.fail(&self.fmu.file, e, cx.t);
            dx.fill(0.0);
        }
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        let mut guard = self.state();
        let s = &mut *guard;
        let nz = self.nz;
        g[..nz].fill(1.0);
        if s.failed.is_none() && !s.init {
            let u = |i: usize| cx.u(i);
            let r = s
                .sync(&self.io, cx.t, cx.x, &u)
                .and_then(|()| s.inst.get_indicators(&mut s.z));
            match r {
                Ok(()) => {
                    for ((g, &z), &side) in g.iter_mut().zip(&s.z).zip(&s.side) {
                        *g = side * z;
                    }
                }
                Err(e) => s.fail(&self.fmu.file, e, cx.t),
            }
        }
        g[nz] = if s.failed.is_some() { -1.0 } else { 1.0 };
    }
    fn next_time_event(&self, t: f64) -> f64 {
        let next = self.state().next_event;
        if next > t {
            next
        } else {
            f64::INFINITY
        }
    }
    fn time_event(&mut self, cx: &mut EventCx) {
        let s = self.st.get_mut().unwrap_or_else(|e| e.into_inner());
        if s.init || s.report(cx) {
            return;
        }
        cx.log(
            EventTag::TimeEvent,
            format!("FMU time event at t = {} s", cx.t),
        );
        self.event(cx);
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let s = self.st.get_mut().unwrap_or_else(|e| e.into_inner());
        if s.report(cx) {
            return false;
        }
        if s.terminate {
            cx.request_stop();
            return false;
        }
        if s.init {
            self.initial_event(cx);
            return true;
        }
        // A guard negative here: an indicator changed sides (located by the solver, or at
        // another block's event instant).
        let u = |i: usize| cx.u(i);
        let r = s
            .sync(&self.io, cx.t, cx.x, &u)
            .and_then(|()| s.inst.get_indicators(&mut s.z));
        if let Err(e) = r {
            s.fail(&self.fmu.file, e, cx.t);
            s.report(cx);
            return false;
        }
        let crossed: Vec<usize> = (0..self.nz).filter(|&i| s.side[i] * s.z[i] < 0.0).collect();
        if crossed.is_empty() {
            return false;
        }
        for i in crossed {
            let detail = format!(
                "event indicator '{}' crossed zero: {:e}, was {} 0",
                self.guard_names[i],
                s.z[i],
                if s.side[i] > 0.0 { ">" } else { "<" }
            );
            cx.log(EventTag::ZeroCrossing, detail);
        }
        self.event(cx);
        true
    }
}
