//! Helpers shared by the CLI tests (each `tests/*.rs` file is its own crate; those that
//! need these declare `mod common;`).

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Start `cmd` (a run of minutes), send it SIGINT, as Ctrl-C does, after `after`, and
/// return its output, checking that it ended within 10 s of the signal.
pub fn interrupted(cmd: &mut Command, after: Duration) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let sent = Instant::now();
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(10),
        "ended {:?} after the signal",
        sent.elapsed()
    );
    o
}
