//! Helpers shared by the CLI tests (each `tests/*.rs` file is its own crate; those that
//! need these declare `mod common;`).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Start `cmd` (a run of minutes), send it SIGINT, as Ctrl-C does, once it has installed
/// its Ctrl-C handler and then run for `after`, and return its output, checking that it
/// ended within 60 s of the signal (a hang check, far above the few milliseconds it
/// takes). Waiting for the handler makes the test independent of how long the process
/// takes to start on a busy machine: a signal before it would kill the process instead.
#[allow(dead_code)]
pub fn interrupted(cmd: &mut Command, after: Duration) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_sigint_handler(child.id());
    std::thread::sleep(after);
    let sent = Instant::now();
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(60),
        "ended {:?} after the signal",
        sent.elapsed()
    );
    o
}

/// Wait until process `pid` catches SIGINT (bit 1 of `SigCgt` in `/proc/PID/status`), for
/// at most 120 s.
#[allow(dead_code)]
pub fn wait_for_sigint_handler(pid: u32) {
    let start = Instant::now();
    loop {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .is_some_and(|m| m & 0b10 != 0);
        if caught {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "process {pid} never installed its Ctrl-C handler"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The `drivelink` binary of this build, as a command.
#[allow(dead_code)]
pub fn drivelink() -> Command {
    Command::new(env!("CARGO_BIN_EXE_drivelink"))
}

/// A fresh, empty directory under the system's temporary directory (`tag` names it:
/// `drivelink_TAG_XXXXXX`), removed with everything in it when the returned value is
/// dropped, whether the test passed or panicked. Bind it to a variable for as long as the
/// test uses the directory (a temporary such as `temp_dir("x").join("f")` is removed at once).
#[allow(dead_code)]
pub fn temp_dir(tag: &str) -> TempDir {
    let dir = tempfile::Builder::new()
        .prefix(&format!("drivelink_{tag}_"))
        .tempdir()
        .expect("a temporary directory");
    TempDir(dir)
}

/// A temporary directory from [`temp_dir`] that reads as its path (`dir.join(..)`,
/// `&dir` as a `&Path`, `.arg(&dir)`); removed when dropped.
#[allow(dead_code)]
pub struct TempDir(tempfile::TempDir);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<std::ffi::OsStr> for TempDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.path().as_os_str()
    }
}
