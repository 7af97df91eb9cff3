//! What a Co-Simulation step of an exported drivelink FMU costs, against the native run of
//! the same netlist over the same simulated time, and how long instantiation takes.
//!
//! The FMU runtime library (`target/release/libdrivelink_fmi.so` unless `--lib` names
//! another) is opened with `libloading` as an importer opens it, and given a resources
//! directory holding the netlist (as `drivelink fmu` writes it for a netlist without
//! `--set` values or subsystem files). Timed in CPU time of the
//! thread (the best of `--repeat` runs; dlopen in wall time):
//!
//! - `dlopen`: loading the library and resolving the functions (once);
//! - instantiation: `fmi3InstantiateCoSimulation` (reads and compiles the netlist) and
//!   `fmi3EnterInitializationMode` + `fmi3ExitInitializationMode`;
//! - a Co-Simulation run to the netlist's stop time (or the time a block stops it) at
//!   each communication step given (`--steps 0.001,0.1`), reading every output after
//!   every step as an importer does;
//! - the native run (`Model::run_with`, the library directly, in this process) over the
//!   same span with the output grid at the communication step, and with the netlist's own
//!   output settings;
//! - a tunable parameter change at `t = 10 s` (`fmi3SetFloat64` of the netlist's first
//!   parameter, 1.5 times its value and back: the model rebuilt and its run state
//!   restored, the integration restarted), and `fmi3GetFMUState` / `fmi3SetFMUState`
//!   there.
//!
//! ```sh
//! cargo build --release -p drivelink-fmi
//! cargo run --release -p drivelink-fmi --example cs_cost -- models/netlists/full_car.json
//! ```

use std::ffi::{c_char, c_void, CString};
use std::path::{Path, PathBuf};
use std::time::Instant;

use drivelink_fmi::ffi::{Status, OK};
use drivelink_fmi::vars::Causality;
use drivelink_solver::HybridSystem;

type ValueReference = u32;
type Instantiate = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const c_char,
    bool,
    bool,
    bool,
    bool,
    *const ValueReference,
    usize,
    *mut c_void,
    *const c_void,
    *const c_void,
) -> *mut c_void;
type EnterInit = unsafe extern "C" fn(*mut c_void, bool, f64, f64, bool, f64) -> Status;
type OneArg = unsafe extern "C" fn(*mut c_void) -> Status;
type Free = unsafe extern "C" fn(*mut c_void);
type DoStep = unsafe extern "C" fn(
    *mut c_void,
    f64,
    f64,
    bool,
    *mut bool,
    *mut bool,
    *mut bool,
    *mut f64,
) -> Status;
type GetFloat64 =
    unsafe extern "C" fn(*mut c_void, *const ValueReference, usize, *mut f64, usize) -> Status;
type SetFloat64 =
    unsafe extern "C" fn(*mut c_void, *const ValueReference, usize, *const f64, usize) -> Status;
type GetState = unsafe extern "C" fn(*mut c_void, *mut *mut c_void) -> Status;
type SetState = unsafe extern "C" fn(*mut c_void, *mut c_void) -> Status;

/// The FMI 3.0 functions the benchmark calls, resolved in the loaded library.
struct Fmi {
    instantiate: Instantiate,
    enter_init: EnterInit,
    exit_init: OneArg,
    do_step: DoStep,
    get: GetFloat64,
    set: SetFloat64,
    get_state: GetState,
    set_state: SetState,
    free_state: GetState,
    free: Free,
    _lib: libloading::Library,
}

impl Fmi {
    fn load(path: &Path) -> Result<Fmi, String> {
        // SAFETY: the library is drivelink's FMU runtime; the types match `ffi.rs`.
        unsafe {
            let lib = libloading::Library::new(path)
                .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
            macro_rules! sym {
                ($name:literal) => {
                    *lib.get($name)
                        .map_err(|e| format!("{}: {e}", String::from_utf8_lossy($name)))?
                };
            }
            Ok(Fmi {
                instantiate: sym!(b"fmi3InstantiateCoSimulation"),
                enter_init: sym!(b"fmi3EnterInitializationMode"),
                exit_init: sym!(b"fmi3ExitInitializationMode"),
                do_step: sym!(b"fmi3DoStep"),
                get: sym!(b"fmi3GetFloat64"),
                set: sym!(b"fmi3SetFloat64"),
                get_state: sym!(b"fmi3GetFMUState"),
                set_state: sym!(b"fmi3SetFMUState"),
                free_state: sym!(b"fmi3FreeFMUState"),
                free: sym!(b"fmi3FreeInstance"),
                _lib: lib,
            })
        }
    }

    /// Instantiate and initialize at `t0`; the instance (or what failed).
    fn start(&self, dir: &Path, token: &str, t0: f64) -> Result<*mut c_void, String> {
        let name = CString::new("bench").unwrap();
        let token = CString::new(token).unwrap();
        let path = CString::new(format!("{}/", dir.display())).unwrap();
        // SAFETY: valid C strings; no logger (null) is allowed by the runtime.
        unsafe {
            let inst = (self.instantiate)(
                name.as_ptr(),
                token.as_ptr(),
                path.as_ptr(),
                false,
                false,
                false,
                false,
                std::ptr::null(),
                0,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            );
            if inst.is_null() {
                return Err("fmi3InstantiateCoSimulation returned null".into());
            }
            if (self.enter_init)(inst, false, 0.0, t0, false, 0.0) != OK
                || (self.exit_init)(inst) != OK
            {
                (self.free)(inst);
                return Err("initialization failed".into());
            }
            Ok(inst)
        }
    }
}

/// The CPU time this thread has used (s): on a machine shared with other jobs it counts
/// what the benchmark does, not the time it waits for a core.
fn cpu_time() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The smallest of `n` timings of `f` (thread CPU time, s), and its last result.
fn best<T>(n: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..n {
        let t = cpu_time();
        let r = f();
        best = best.min(cpu_time() - t);
        out = Some(r);
    }
    (best, out.unwrap())
}

/// A Co-Simulation run from `t0` at step `h` until `stop` or a block stops it, reading
/// `outputs` after every step: (steps, the time reached).
fn cosimulate(
    fmi: &Fmi,
    inst: *mut c_void,
    t0: f64,
    stop: f64,
    h: f64,
    outputs: &[u32],
) -> (usize, f64) {
    let mut vals = vec![0.0; outputs.len()];
    let n = ((stop - t0) / h).round() as usize;
    for k in 0..n {
        let t = t0 + k as f64 * h;
        let (mut ev, mut term, mut early, mut last) = (false, false, false, 0.0);
        // SAFETY: a live instance, valid out-pointers and arrays.
        let st =
            unsafe { (fmi.do_step)(inst, t, h, true, &mut ev, &mut term, &mut early, &mut last) };
        assert_eq!(st, OK, "fmi3DoStep at t = {t} s");
        let st = unsafe {
            (fmi.get)(
                inst,
                outputs.as_ptr(),
                outputs.len(),
                vals.as_mut_ptr(),
                vals.len(),
            )
        };
        assert_eq!(st, OK);
        if term {
            return (k + 1, last);
        }
    }
    (n, stop)
}

/// The cost of a tunable parameter change (`vr`, from `value` to 1.5 times it and back)
/// and of getting and setting the FMU state, at `t = 10 s` of a run stepped at 100 ms:
/// (change, get, set) in s, the best of `repeat`.
fn tuning_cost(
    fmi: &Fmi,
    inst: *mut c_void,
    t0: f64,
    vr: u32,
    value: f64,
    repeat: usize,
) -> (f64, f64, f64) {
    cosimulate(fmi, inst, t0, t0 + 10.0, 0.1, &[]);
    let mut k = 0;
    let (t_set, _) = best(repeat, || {
        k += 1;
        let v = if k % 2 == 1 { 1.5 * value } else { value };
        // SAFETY: a live instance, one value.
        let st = unsafe { (fmi.set)(inst, &vr, 1, &v, 1) };
        assert_eq!(st, OK, "fmi3SetFloat64 of the parameter");
    });
    let mut state: *mut c_void = std::ptr::null_mut();
    let (t_get, _) = best(repeat, || {
        // SAFETY: a live instance; the state is null or one it made.
        let st = unsafe { (fmi.get_state)(inst, &mut state) };
        assert_eq!(st, OK, "fmi3GetFMUState");
    });
    let (t_put, _) = best(repeat, || {
        // SAFETY: a state of this instance.
        let st = unsafe { (fmi.set_state)(inst, state) };
        assert_eq!(st, OK, "fmi3SetFMUState");
    });
    // SAFETY: the state made above.
    unsafe { (fmi.free_state)(inst, &mut state) };
    (t_set, t_get, t_put)
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let (mut netlist, mut lib) = (
        root.join("models/netlists/full_car.json"),
        root.join("target/release/libdrivelink_fmi.so"),
    );
    let (mut steps, mut repeat) = (vec![1e-3, 0.1], 5);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--lib" => lib = PathBuf::from(val()?),
            "--repeat" => repeat = val()?.parse().map_err(|e| format!("--repeat: {e}"))?,
            "--steps" => {
                steps = val()?
                    .split(',')
                    .map(|s| s.parse::<f64>().map_err(|e| format!("--steps {s}: {e}")))
                    .collect::<Result<_, _>>()?
            }
            _ => netlist = PathBuf::from(a),
        }
    }
    let text = std::fs::read(&netlist).map_err(|e| format!("{}: {e}", netlist.display()))?;
    let dir = root.join("target/fmi-bench/resources");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("model.json"), &text).map_err(|e| e.to_string())?;
    let token = drivelink_fmi::instantiation_token(&text);

    let d = drivelink_netlist::load_file(&netlist).map_err(|e| e.to_string())?;
    let registry = drivelink_blocks::registry();
    let plan = drivelink_core::Compiled::new(&d, &registry).map_err(|e| e.to_string())?;
    let vars = drivelink_fmi::variables(&d, plan.plan()).map_err(|e| e.to_string())?;
    let outputs: Vec<u32> = vars
        .iter()
        .filter(|v| v.causality == Causality::Output)
        .map(|v| v.value_reference)
        .collect();
    let mut model = drivelink_core::compile(&d, &registry).map_err(|e| e.to_string())?;
    let own = model.settings().clone();
    let (t0, stop) = (own.start_time, own.stop_time);

    let t = Instant::now();
    let fmi = Fmi::load(&lib)?;
    println!(
        "{}: {} outputs, {} states",
        netlist.display(),
        outputs.len(),
        model.n_states()
    );
    println!(
        "dlopen + symbols: {:.2} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let (t_inst, inst) = best(repeat, || {
        let i = fmi.start(&dir, &token, t0);
        if let Ok(i) = i {
            unsafe { (fmi.free)(i) };
        }
        i
    });
    inst?;
    println!(
        "instantiate + initialize: {:.2} ms (best of {repeat})",
        t_inst * 1e3
    );
    let (t_native, r) = best(repeat, || model.run_with(&own));
    println!(
        "native, own settings: {:.2} ms to t = {} s ({} steps)",
        t_native * 1e3,
        r.end_time,
        r.stats.steps
    );
    for &h in &steps {
        let mut s = own.clone();
        s.output_interval = Some(h);
        s.output_points = None;
        let (t_nat, r) = best(repeat, || model.run_with(&s));
        let end = r.end_time;
        let inst = fmi.start(&dir, &token, t0)?;
        // Each repetition needs a fresh instance: time the run alone.
        let mut t_cs = f64::INFINITY;
        let mut n = 0;
        for _ in 0..repeat {
            let inst = fmi.start(&dir, &token, t0)?;
            let t = cpu_time();
            let (k, _) = cosimulate(&fmi, inst, t0, stop, h, &outputs);
            t_cs = t_cs.min(cpu_time() - t);
            n = k;
            unsafe { (fmi.free)(inst) };
        }
        unsafe { (fmi.free)(inst) };
        println!(
            "h = {h} s: co-simulation {:.2} ms ({n} steps, {:.2} us/step) | native with a {h} s \
             output grid {:.2} ms to t = {end} s ({} solver steps) | ratio {:.2}",
            t_cs * 1e3,
            t_cs / n as f64 * 1e6,
            t_nat * 1e3,
            r.stats.steps,
            t_cs / t_nat
        );
    }
    if let Some(p) = vars.iter().find(|v| v.causality == Causality::Parameter) {
        let inst = fmi.start(&dir, &token, t0)?;
        let value = p.start.unwrap_or(1.0);
        let (set, get, put) = tuning_cost(&fmi, inst, t0, p.value_reference, value, repeat);
        unsafe { (fmi.free)(inst) };
        println!(
            "at t = {} s: parameter '{}' changed {:.3} ms | fmi3GetFMUState {:.3} ms | \
             fmi3SetFMUState {:.3} ms (best of {repeat})",
            t0 + 10.0,
            p.name,
            set * 1e3,
            get * 1e3,
            put * 1e3
        );
    }
    Ok(())
}
