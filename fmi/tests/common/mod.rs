//! What the FMI 3.0 runtime tests share: a logger that keeps the runtime's messages, a
//! resources directory holding a netlist, as an importer unpacks it, and an instance of
//! either kind made from it; a netlist's FMU variables and one's value reference; a status
//! check and a Model Exchange event iteration.
#![allow(dead_code)]

use std::ffi::{c_char, c_void, CStr, CString};
use std::path::PathBuf;
use std::sync::Mutex;

use drivelink_fmi::ffi::{fmi3InstantiateCoSimulation, fmi3InstantiateModelExchange, Status};

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

/// The FMU interface an instance is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    CoSimulation,
    ModelExchange,
}

/// An FMI 3.0 instance `name` of the netlist in `resources` (with its `token`), logging
/// to [`logger`]; fails the test with the log if the runtime refuses it.
pub fn instantiate(
    kind: Kind,
    name: &str,
    resources: &std::path::Path,
    token: &str,
) -> *mut c_void {
    let inst = instantiate_or_null(kind, name, resources, token);
    assert!(!inst.is_null(), "{}", logged());
    inst
}

/// [`instantiate`], returning null where the runtime refuses the instance.
pub fn instantiate_or_null(
    kind: Kind,
    name: &str,
    resources: &std::path::Path,
    token: &str,
) -> *mut c_void {
    let name = CString::new(name).unwrap();
    let token = CString::new(token).unwrap();
    let path = CString::new(format!("{}/", resources.display())).unwrap();
    let (n, t, p) = (name.as_ptr(), token.as_ptr(), path.as_ptr());
    // SAFETY: the strings outlive the calls; the runtime copies what it keeps.
    unsafe {
        match kind {
            Kind::ModelExchange => fmi3InstantiateModelExchange(
                n,
                t,
                p,
                false,
                true,
                std::ptr::null_mut(),
                Some(logger),
            ),
            Kind::CoSimulation => fmi3InstantiateCoSimulation(
                n,
                t,
                p,
                false,
                true,
                false,
                false,
                std::ptr::null(),
                0,
                std::ptr::null_mut(),
                Some(logger),
                std::ptr::null(),
            ),
        }
    }
}

/// Assert `st` is OK, showing what the runtime logged.
pub fn ok(st: Status) {
    assert_eq!(st, drivelink_fmi::ffi::OK, "{}", logged());
}

/// The event iteration of a Model Exchange instance (until no update is needed).
pub fn settle(inst: *mut c_void) {
    for _ in 0..50 {
        let (mut need, mut term, mut nom, mut changed, mut def, mut next) =
            (false, false, false, false, false, 0.0);
        ok(unsafe {
            drivelink_fmi::ffi::fmi3UpdateDiscreteStates(
                inst,
                &mut need,
                &mut term,
                &mut nom,
                &mut changed,
                &mut def,
                &mut next,
            )
        });
        if !need {
            return;
        }
    }
    panic!("the event iteration did not settle");
}

/// The FMU variables of the netlist text `net` (as the exporter lists them with Model
/// Exchange).
pub fn variables_of(net: &str, name: &str) -> Vec<drivelink_fmi::Variable> {
    let d = drivelink_netlist::load_str(net, name, std::path::Path::new(".")).unwrap();
    let reg = drivelink_blocks::registry();
    let c = drivelink_core::Compiled::new(&d, &reg).unwrap();
    let m = c.with_params(&reg, &[]).unwrap();
    drivelink_fmi::model_variables(&d, c.plan(), &m).unwrap()
}

/// The value reference of variable `name` (a panic listing the names when there is none).
pub fn vr(vars: &[drivelink_fmi::Variable], name: &str) -> u32 {
    vars.iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| {
            panic!(
                "no variable {name} in {:?}",
                vars.iter().map(|v| &v.name).collect::<Vec<_>>()
            )
        })
        .value_reference
}
