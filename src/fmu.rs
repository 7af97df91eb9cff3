//! `drivelink fmu`: export a netlist as an FMI 3.0 or FMI 2.0 FMU offering Model Exchange,
//! Co-Simulation or both (the default).
//!
//! The FMU is a zip archive holding `modelDescription.xml` (from `drivelink_fmi::vars`),
//! the generic runtime library (the `drivelink-fmi` cdylib built next to this executable,
//! copied as is: it exports both C interfaces) as `binaries/x86_64-linux/drivelink_fmi.so`
//! (FMI 3.0) or `binaries/linux64/drivelink_fmi.so` (FMI 2.0), and the netlist in
//! `resources/model.json` (with `--set` values applied and subsystem files inlined). The
//! zip is written here (every entry deflated through `flate2` at its fast level: five
//! times quicker than the default on the 19 MB debug library, for a 27 % larger FMU), so
//! no system library or compiler is needed. See `docs/fmi.md`.

use std::io::Write;
use std::path::{Path, PathBuf};

use drivelink_core::{Compiled, Diagram, Error};
use drivelink_fmi::{
    instantiation_token, model_description_fmi2_of, model_description_of, model_variables,
    variables, Description, Kind, MODEL_IDENTIFIER,
};

use crate::{load, report};

/// The long help of `drivelink fmu`.
pub const LONG_ABOUT: &str =
    "Export a model as an FMU (Functional Mock-up Unit) that FMI importers \
(fmpy, Simulink, Dymola, OpenModelica, ...) run without drivelink installed.\n\n\
Written now: FMUs for x86_64 Linux, FMI 3.0 (--fmi 3, the default; binary in \
binaries/x86_64-linux/) or FMI 2.0 (--fmi 2; binary in binaries/linux64/, guid = the \
instantiation token). Both carry the same runtime library and netlist. Variables: `time`, \
every numeric top-level netlist parameter as a tunable Float64 (FMI 2.0: Real) parameter \
(SI value; settable before the end of initialization, and after it between Co-Simulation \
steps or in Model Exchange Event Mode: the model goes on from its current state with the \
new value), every top-level Inport block as an \
input (start = its value), every logged variable as an output, all with their SI units.\n\n\
--kind both (the default): one FMU offering both interfaces.\n\
--kind cs: Co-Simulation: doStep advances the model with drivelink's own hybrid solver \
(events located inside the step); FMI 2.0: fmi2SetupExperiment gives the tolerance (the \
solver's rtol), the start time and a stop time no step may pass, and a block that stops the \
run ends fmi2DoStep with fmi2Discard (fmi2Terminated true).\n\
--kind me: Model Exchange: the importer integrates every continuous state of the model \
(variables named after what they are, e.g. \"speed of the shaft at 'J1.flange'\", with \
their derivatives \"der(...)\"); every guard of the model is an event indicator (FMI 3.0: \
variables \"guard(...)\"; the modes are valid while it is >= 0); each \
fmi3UpdateDiscreteStates (fmi2NewDiscreteStates) makes one event-handler call (clutch \
locks, shifts, contacts), asks for another while a guard stays negative, and announces the \
blocks' time events as nextEventTime.\n\n\
Not written yet: inputs, FMU state, directional derivatives. Needs the runtime library: \
`cargo build -p drivelink-fmi` (same profile as this drivelink).";

/// Arguments of `drivelink fmu`.
#[derive(clap::Args, Debug)]
pub struct FmuArgs {
    /// The model netlist (JSON).
    model: PathBuf,
    /// The FMU file to write (`MODEL.fmu`).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// FMI version: 3 (FMI 3.0) or 2 (FMI 2.0).
    #[arg(long, value_name = "3|2", default_value = "3")]
    fmi: String,
    /// FMU kind: cs (Co-Simulation), me (Model Exchange) or both (the default).
    #[arg(long, value_name = "cs|me|both", default_value = "both")]
    kind: String,
    /// Override a top-level parameter (as for `run`): the FMU's parameter starts there.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
}

/// The FMI version of the written FMU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FmiVersion {
    V3,
    V2,
}

impl FmiVersion {
    /// The version of `--fmi` (`3`, `3.0`, `2`, `2.0`).
    fn parse(s: &str) -> Option<FmiVersion> {
        match s.trim() {
            "3" | "3.0" => Some(FmiVersion::V3),
            "2" | "2.0" => Some(FmiVersion::V2),
            _ => None,
        }
    }

    fn label(self) -> &'static str {
        match self {
            FmiVersion::V3 => "FMI 3.0",
            FmiVersion::V2 => "FMI 2.0",
        }
    }

    /// The folder of the binary for x86_64 Linux.
    fn platform_dir(self) -> &'static str {
        match self {
            FmiVersion::V3 => "x86_64-linux",
            FmiVersion::V2 => "linux64",
        }
    }
}

/// Run `drivelink fmu`; the exit code (0 written, 2 invalid input or no runtime library).
pub fn export(args: &FmuArgs) -> u8 {
    let Some(version) = FmiVersion::parse(&args.fmi) else {
        crate::console::error(format!(
            "--fmi {}: unknown FMI version; supported versions: 3 (FMI 3.0, the default), \
             2 (FMI 2.0)",
            args.fmi
        ));
        return 2;
    };
    let kind_arg = args.kind.as_str();
    let Some(kind) = Kind::parse(kind_arg) else {
        crate::console::error(format!(
            "--kind {kind_arg}: unknown FMU kind; supported kinds: cs (Co-Simulation), \
             me (Model Exchange), both (the default)"
        ));
        return 2;
    };
    let origin = args.model.display().to_string();
    let d = match load(&args.model, &args.set) {
        Ok(d) => d,
        Err(e) => {
            report(&origin, &e);
            return 2;
        }
    };
    match write_fmu(&d, &origin, &args.out, version, kind) {
        Ok(n) => {
            println!(
                "wrote {} ({n} variables, {} {})",
                args.out.display(),
                version.label(),
                kind.label()
            );
            0
        }
        Err(e) => {
            report(&origin, &e);
            2
        }
    }
}

/// The runtime library next to the running executable.
fn runtime_library() -> Result<PathBuf, Error> {
    let exe = std::env::current_exe().map_err(|e| Error::Io {
        path: "drivelink executable".into(),
        message: e.to_string(),
    })?;
    let file = format!("lib{MODEL_IDENTIFIER}.so");
    let dir = exe.parent().unwrap_or(Path::new("."));
    let lib = dir.join(&file);
    if lib.is_file() {
        return Ok(lib);
    }
    Err(Error::Io {
        path: lib.display().to_string(),
        message: format!(
            "the FMU runtime library {file} is not next to drivelink: build it with \
             `cargo build -p drivelink-fmi` (with the same --release or not as drivelink)"
        ),
    })
}

/// Inline every subsystem file, so the netlist stands alone in the FMU.
fn inline_files(d: &mut Diagram) {
    for b in d.blocks.iter_mut() {
        if let Some(inner) = b.inner.as_deref_mut() {
            b.file = None;
            inline_files(inner);
        }
    }
}

/// Write the FMU of `d` to `out` for FMI `version` with the interfaces of `kind`; the
/// number of variables.
fn write_fmu(
    d: &Diagram,
    origin: &str,
    out: &Path,
    version: FmiVersion,
    kind: Kind,
) -> Result<usize, Error> {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return Err(Error::Io {
            path: out.display().to_string(),
            message: "FMU export is written for x86_64 Linux only so far".into(),
        });
    }
    let lib = runtime_library()?;
    let mut d = d.clone();
    inline_files(&mut d);
    let registry = drivelink_blocks::registry();
    let compiled = Compiled::new(&d, &registry)
        .map_err(|e| drivelink_netlist::locate_error(&d, &registry, origin, e))?;
    let model = compiled.with_params(&registry, &[])?;
    let vars = if kind.has_me() {
        model_variables(&d, compiled.plan(), &model)?
    } else {
        variables(&d, compiled.plan())?
    };
    // Every block saves its run state but an imported `Fmu`: then the parameters are
    // fixed and the FMU's state cannot be got or set.
    let saves_state = model
        .save_state(compiled.plan().settings().start_time, model.initial_state())
        .is_ok();
    let json = serde_json::to_string_pretty(&drivelink_netlist::to_json(&d)).unwrap_or_default();
    let token = instantiation_token(json.as_bytes());
    let settings = compiled.plan().settings();
    let info = Description {
        model_name: &d.name,
        description: &d.description,
        token: &token,
        start_time: settings.start_time,
        stop_time: settings.stop_time,
        saves_state,
    };
    let xml = match version {
        FmiVersion::V3 => model_description_of(&info, &vars, kind),
        FmiVersion::V2 => model_description_fmi2_of(&info, &vars, kind),
    };
    let io = |p: &Path, e: std::io::Error| Error::Io {
        path: p.display().to_string(),
        message: e.to_string(),
    };
    let so = std::fs::read(&lib).map_err(|e| io(&lib, e))?;
    let entries: [(String, &[u8]); 3] = [
        ("modelDescription.xml".into(), xml.as_bytes()),
        (
            format!("binaries/{}/{MODEL_IDENTIFIER}.so", version.platform_dir()),
            &so,
        ),
        ("resources/model.json".into(), json.as_bytes()),
    ];
    let zip = zip_archive(&entries).map_err(|e| io(out, e))?;
    std::fs::write(out, zip).map_err(|e| io(out, e))?;
    // FMI 2.0 declares the event indicators by their number only.
    let declared = match version {
        FmiVersion::V3 => vars.len(),
        FmiVersion::V2 => vars
            .iter()
            .filter(|v| v.causality != drivelink_fmi::vars::Causality::Indicator)
            .count(),
    };
    Ok(declared)
}

/// A zip archive of `entries` (name, bytes), each deflated (fast level).
fn zip_archive(entries: &[(String, &[u8])]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in entries {
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(data)?;
        let packed = enc.finish()?;
        let crc = crc32fast::hash(data);
        let too_big =
            |n: usize| u32::try_from(n).map_err(|_| std::io::Error::other("zip entry over 4 GB"));
        let (size, csize, offset) = (
            too_big(data.len())?,
            too_big(packed.len())?,
            too_big(out.len())?,
        );
        // Version 2.0, no flags, deflate, DOS time/date of 1980-01-01 00:00.
        let common = |v: &mut Vec<u8>| {
            for x in [20u16, 0, 8, 0, 0x21] {
                v.extend_from_slice(&x.to_le_bytes());
            }
            for x in [crc, csize, size] {
                v.extend_from_slice(&x.to_le_bytes());
            }
            v.extend_from_slice(&(name.len() as u16).to_le_bytes());
            v.extend_from_slice(&0u16.to_le_bytes());
        };
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        common(&mut out);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&packed);
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&0x031eu16.to_le_bytes()); // made by: Unix, 3.0
        common(&mut central);
        // Comment length, disk, internal attributes; external attributes (rw-r--r--).
        for x in [0u16, 0, 0] {
            central.extend_from_slice(&x.to_le_bytes());
        }
        central.extend_from_slice(&(0o100644u32 << 16).to_le_bytes());
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_offset = out.len() as u32;
    let cd_size = central.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    let n = entries.len() as u16;
    for x in [0u16, 0, n, n] {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.extend_from_slice(&cd_size.to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    Ok(out)
}
