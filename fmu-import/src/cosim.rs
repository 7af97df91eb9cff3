//! What the `Fmu` block needs of a Co-Simulation instance, whatever its FMI version
//! ([`CoSim`], implemented by [`crate::fmi3::Instance`] and [`crate::fmi2::Instance`]),
//! with the pieces both versions share: the state machine's phase, the messages the FMU
//! logged and the error of a failed call.

use std::collections::VecDeque;
use std::ffi::{c_char, CStr};
use std::sync::Mutex;

/// One Co-Simulation instance, driven by the block.
pub trait CoSim: Send + Sync {
    /// Where the instance is.
    fn phase(&self) -> Phase;
    /// Into initialization mode at `start` (no tolerance, no stop time).
    fn enter_initialization(&mut self, start: f64) -> Result<(), CallError>;
    /// Out of initialization mode: the instance then steps.
    fn exit_initialization(&mut self) -> Result<(), CallError>;
    /// Back to the instantiated state, every variable at its start value (after
    /// terminating a stepping instance).
    fn reset(&mut self) -> Result<(), CallError>;
    /// Set scalar floating-point variables.
    fn set(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), CallError>;
    /// Get scalar floating-point variables into `values`.
    fn get(&mut self, vrs: &[u32], values: &mut [f64]) -> Result<(), CallError>;
    /// Advance from `t` to `t + h`; `Ok(true)` when the FMU asks to end the simulation.
    fn do_step(&mut self, t: f64, h: f64) -> Result<bool, CallError>;
}

/// Where an instance is in the FMI state machine (the part drivelink uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Instantiated,
    Initialization,
    Step,
    /// A call returned Error or Discard: only reset or free are allowed.
    Failed,
    /// A call returned Fatal: nothing may be called any more, not even free.
    Fatal,
}

/// A failed FMI call: the function, its status and what the FMU logged before returning.
#[derive(Debug, Clone, PartialEq)]
pub struct CallError {
    pub function: &'static str,
    pub status: &'static str,
    pub messages: Vec<String>,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} returned {}", self.function, self.status)?;
        if self.messages.is_empty() {
            write!(f, " (the FMU logged nothing)")
        } else {
            write!(f, "; the FMU logged: {}", self.messages.join(" | "))
        }
    }
}

/// The name of a status (the same numbers in FMI 2.0 and 3.0; 5 is FMI 2.0's Pending).
pub fn status_name(s: i32) -> &'static str {
    match s {
        0 => "OK",
        1 => "Warning",
        2 => "Discard",
        3 => "Error",
        4 => "Fatal",
        5 => "Pending",
        _ => "an unknown status",
    }
}

/// How many logged messages an instance keeps.
const KEPT_MESSAGES: usize = 8;

/// The last messages an instance logged, newest last: the environment pointer given to
/// the FMU's logger callback.
#[derive(Default)]
pub struct LogBuf(Mutex<VecDeque<String>>);

impl LogBuf {
    /// Keep `[status] message` (C strings from the FMU; null reads as empty).
    ///
    /// # Safety
    /// `message` is null or a NUL-terminated string.
    pub unsafe fn push(&self, status: i32, message: *const c_char) {
        let text = if message.is_null() {
            String::new()
        } else {
            CStr::from_ptr(message).to_string_lossy().into_owned()
        };
        let mut q = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if q.len() == KEPT_MESSAGES {
            q.pop_front();
        }
        q.push_back(format!("[{}] {text}", status_name(status)));
    }
    /// The messages kept, emptying the buffer.
    pub fn take(&self) -> Vec<String> {
        let mut q = self.0.lock().unwrap_or_else(|e| e.into_inner());
        q.drain(..).collect()
    }
}

/// `Ok` for OK and Warning; otherwise the error (with the messages logged) and the phase
/// becomes `Failed` (Error, Discard, Pending) or `Fatal`.
pub fn check(
    phase: &mut Phase,
    log: &LogBuf,
    function: &'static str,
    s: i32,
) -> Result<(), CallError> {
    if s == 0 || s == 1 {
        return Ok(());
    }
    *phase = if s == 4 { Phase::Fatal } else { Phase::Failed };
    Err(CallError {
        function,
        status: status_name(s),
        messages: log.take(),
    })
}

/// The function `name` of an FMU's loaded library, as the FMI headers declare it (`T`, the
/// caller's declaration of that signature); `Err` names what is missing.
pub(crate) fn symbol<T: Copy>(lib: &libloading::Library, name: &str) -> Result<T, String> {
    let c = format!("{name}\0");
    // SAFETY: `T` is the function type the FMI headers give `name` (the callers in
    // fmi2.rs and fmi3.rs declare each one from the standard).
    unsafe { lib.get::<T>(c.as_bytes()) }
        .map(|s| *s)
        .map_err(|_| format!("the library does not export {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_keeps_the_last_eight_messages() {
        let log = LogBuf::default();
        for i in 0..10 {
            let m = std::ffi::CString::new(format!("m{i}")).unwrap();
            // SAFETY: a valid C string.
            unsafe { log.push(3, m.as_ptr()) };
        }
        let mut phase = Phase::Step;
        let e = check(&mut phase, &log, "fmi3DoStep", 3).unwrap_err();
        assert_eq!(phase, Phase::Failed);
        assert_eq!(e.messages.len(), 8);
        assert_eq!(e.messages[0], "[Error] m2");
        assert_eq!(e.to_string().split(" | ").last(), Some("[Error] m9"), "{e}");
        assert!(log.take().is_empty());
        assert!(check(&mut phase, &log, "f", 1).is_ok());
        let e = check(&mut phase, &log, "f", 4).unwrap_err();
        assert_eq!((phase, e.status), (Phase::Fatal, "Fatal"));
        assert_eq!(e.to_string(), "f returned Fatal (the FMU logged nothing)");
    }
}
