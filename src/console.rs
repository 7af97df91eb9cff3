//! Console output that never panics.
//!
//! `println!` panics when standard output is a pipe whose reader has gone
//! (`drivelink blocks | head -1`: "failed printing to stdout: Broken pipe", exit 101), and
//! `eprintln!` likewise for standard error. Every line the CLI prints goes through here: a
//! closed pipe on stdout ends the output quietly (the reader has what it wanted), another
//! stdout failure (a full disk) is reported on stderr, and stderr failures are ignored (there
//! is nowhere left to report them).

use std::fmt::Display;
use std::io::{self, Write};

/// Write `text` to standard output. A reader that has gone away is not an error.
pub fn out(text: &str) -> io::Result<()> {
    let mut o = io::stdout().lock();
    match o.write_all(text.as_bytes()).and_then(|()| o.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

/// Write `text` to standard output; the exit code: 0, or 1 (with a message on stderr) when
/// standard output cannot be written.
pub fn print(text: &str) -> u8 {
    match out(text) {
        Ok(()) => 0,
        Err(e) => {
            error(format_args!("cannot write to standard output: {e}"));
            1
        }
    }
}

/// One line on standard error; write failures are ignored.
fn err_line(prefix: &str, msg: impl Display) {
    let _ = writeln!(io::stderr().lock(), "{prefix}{msg}");
}

/// `error: <msg>` on standard error.
pub fn error(msg: impl Display) {
    err_line("error: ", msg);
}

/// `warning: <msg>` on standard error.
pub fn warning(msg: impl Display) {
    err_line("warning: ", msg);
}

/// `note: <msg>` on standard error.
pub fn note(msg: impl Display) {
    err_line("note: ", msg);
}
