//! What the FMI 3.0 runtime tests share: a logger that keeps the runtime's messages and a
//! resources directory holding a netlist, as an importer unpacks it.

use std::ffi::{c_char, c_void, CStr};
use std::path::PathBuf;
use std::sync::Mutex;

use drivelink_fmi::ffi::Status;

static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The `logMessage` callback: every message, with its status.
pub unsafe extern "C" fn logger(
    _env: *mut c_void,
    status: Status,
    _cat: *const c_char,
    msg: *const c_char,
) {
    let m = CStr::from_ptr(msg).to_string_lossy().into_owned();
    LOG.lock().unwrap().push(format!("{status}: {m}"));
}

/// Everything logged so far, one message per line.
pub fn logged() -> String {
    LOG.lock().unwrap().join("\n")
}

/// A resources directory `target/AREA/TAG/resources` holding the netlist `text` as
/// `model.json`, and the netlist's instantiation token.
pub fn resources(area: &str, tag: &str, text: &[u8]) -> (PathBuf, String) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = root.join("target").join(area).join(tag).join("resources");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("model.json"), text).unwrap();
    (dir, drivelink_fmi::instantiation_token(text))
}
