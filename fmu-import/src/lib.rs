//! drivelink-fmu-import: FMUs (FMI 3.0 and 2.0, Model Exchange and Co-Simulation) as
//! drivelink blocks.
//!
//! The `Fmu` block unpacks an FMU into a temporary directory of its own (removed when the
//! block is dropped), reads its `modelDescription.xml`, loads
//! `binaries/<platform>/<modelIdentifier>.so` and drives one FMU instance with the FMI C
//! functions (declared by hand in [`fmi3`] and [`fmi2`], no bindings generator, no system
//! library) through the version-independent [`cosim::CoSim`] and [`me::ModelExchange`].
//! The FMU's `Float64` inputs and outputs become the block's signal ports. A Model
//! Exchange FMU's continuous states are the block's states, integrated by drivelink's
//! solver, and its event indicators the block's guards ([`me_block`]); a Co-Simulation FMU
//! is stepped as a sampled block: every `step` seconds a time event advances it and reads
//! its outputs, which are held until the next one ([`block`]). See `docs/fmi.md`.

pub mod archive;
pub mod block;
pub mod cosim;
pub mod description;
pub mod error;
pub mod fmi2;
pub mod fmi3;
pub mod me;
pub mod me_block;
pub mod printf;

use std::path::Path;
use std::sync::Arc;

use drivelink_core::{BlockBuild, BlockType, ParamKind, ParamSpec, Registry};

pub use block::FmuBlock;
pub use description::Description;
pub use error::FmuError;
pub use me::Kind;

/// The platform directory of FMI 3.0 binaries for this build (`x86_64-linux`,
/// `aarch64-darwin`, ...).
pub fn platform() -> String {
    // FMI 3.0 names macOS `darwin`.
    let os = if cfg!(target_os = "macos") {
        "darwin"
    } else {
        std::env::consts::OS
    };
    format!("{}-{os}", std::env::consts::ARCH)
}

/// The platform directory of FMI 2.0 binaries for this build (`linux64`, `darwin64`,
/// `win64`, or `linux32` on a 32-bit build).
pub fn platform2() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win",
        os => os,
    };
    format!("{os}{}", usize::BITS)
}

/// The shared-library suffix of this platform.
const LIB_SUFFIX: &str = std::env::consts::DLL_SUFFIX;

/// Register the `Fmu` block type.
pub fn register(r: &mut Registry) {
    r.register(BlockType {
        name: "Fmu",
        category: "fmi",
        doc: "An FMI 3.0 or 2.0 FMU run as a block (see docs/fmi.md), as Model Exchange or Co-Simulation (`kind`; default Model Exchange when the FMU offers it): its Float64 inputs are signal inputs and its Float64 outputs signal outputs, named after the FMU variables with every character other than a letter, digit or '_' replaced by '_' (output `clutch.w_rel` is port `clutch_w_rel`). Model Exchange: the FMU's continuous states are the block's states, integrated by drivelink's solver with the FMU's derivatives; its event indicators are the block's guards, located like every other guard; at a crossing or at the FMU's next event time the FMU's event iteration runs (fmi3UpdateDiscreteStates until it settles) and the states it changes are taken back; the outputs are read at every evaluation. Co-Simulation: every `step` seconds from the start time a time event advances the FMU to that instant (fmi3DoStep with the inputs held since the last one), sets the inputs sampled there and reads the outputs, which are held until the next step. An input with a start value may stay unconnected (it reads that value). The archive is unpacked into a temporary directory of the block's own, removed when the model is dropped. Linux x86_64 binaries.",
        params: vec![
            ParamSpec::optional(
                "fmu",
                ParamKind::Text,
                "path of the .fmu file (relative to the netlist's folder); required unless `path` is given",
            ),
            ParamSpec::optional(
                "path",
                ParamKind::Text,
                "the same as `fmu` (give one of the two)",
            ),
            ParamSpec::optional(
                "step",
                ParamKind::Number { unit: "s" },
                "Co-Simulation: communication step (> 0); default the FMU's DefaultExperiment stepSize (not used by Model Exchange)",
            ),
            ParamSpec::optional(
                "parameters",
                ParamKind::Json,
                "start values of FMU parameters: {\"NAME\": VALUE}; a number is given to the FMU as is, a string with a unit (\"2 kg*m^2\") is converted to the variable's unit",
            ),
            ParamSpec::optional(
                "kind",
                ParamKind::Choice(&["me", "cs"]),
                "me: Model Exchange (integrated by drivelink's solver), cs: Co-Simulation (stepped every `step`); default me when the FMU offers Model Exchange, else cs",
            ),
        ],
        build: BlockBuild::Primitive(block::build),
        ports_doc: "one in port per Float64 input of the FMU, one out port per Float64 output (named after the variables, see the doc)",
    });
}

/// The loaded library of an FMU, by FMI version.
pub enum Library {
    Fmi3(Arc<fmi3::Api>),
    Fmi2(Arc<fmi2::Api>),
}

impl Library {
    /// A new Model Exchange instance named `name` (of a library loaded for it).
    pub fn instantiate_me(
        &self,
        name: &str,
        token: &str,
        resources: Option<&Path>,
    ) -> Result<Box<dyn me::ModelExchange>, cosim::CallError> {
        Ok(match self {
            Library::Fmi3(api) => {
                Box::new(fmi3::Instance::new_me(api.clone(), name, token, resources)?)
            }
            Library::Fmi2(api) => {
                Box::new(fmi2::Instance::new(api.clone(), name, token, resources)?)
            }
        })
    }

    /// A new Co-Simulation instance named `name` (of a library loaded for it).
    pub fn instantiate(
        &self,
        name: &str,
        token: &str,
        resources: Option<&Path>,
    ) -> Result<Box<dyn cosim::CoSim>, cosim::CallError> {
        Ok(match self {
            Library::Fmi3(api) => {
                Box::new(fmi3::Instance::new(api.clone(), name, token, resources)?)
            }
            Library::Fmi2(api) => {
                Box::new(fmi2::Instance::new(api.clone(), name, token, resources)?)
            }
        })
    }
}

/// An FMU unpacked into its own temporary directory, with its description read and its
/// library loaded.
pub struct Unpacked {
    /// The file as the netlist names it (for messages).
    pub file: String,
    pub description: Description,
    /// The interface imported.
    pub kind: Kind,
    /// The loaded library (shared by the instances of this unpacking).
    pub library: Library,
    /// `resources/` of the unpacked FMU, if it has one.
    pub resources: Option<std::path::PathBuf>,
    /// Removed when dropped: keep it as long as the library and the instances live.
    pub dir: archive::TempDir,
}

/// The interface to import an FMU as: `wanted` if the FMU offers it, else (`None`) Model
/// Exchange when offered, else Co-Simulation.
fn choose_kind(d: &Description, file: &str, wanted: Option<Kind>) -> Result<Kind, FmuError> {
    let (me, cs) = (d.me_identifier.is_some(), d.cs_identifier.is_some());
    let offered = if d.interfaces.is_empty() {
        "no interface".to_string()
    } else {
        d.interfaces.join(", ")
    };
    let file = file.to_string();
    match wanted {
        Some(Kind::ModelExchange) if !me => Err(FmuError::NoModelExchange { file, offered }),
        Some(Kind::CoSimulation) if !cs => Err(FmuError::NoCoSimulation { file, offered }),
        Some(k) => Ok(k),
        None if me => Ok(Kind::ModelExchange),
        None if cs => Ok(Kind::CoSimulation),
        None => Err(FmuError::NoInterface { file, offered }),
    }
}

/// Read, check and unpack the FMU at `path` (`file`: its name in messages), and load its
/// library for the interface `kind` (`None`: Model Exchange if the FMU offers it, else
/// Co-Simulation). `tag` names the temporary directory (the block's name).
pub fn open(path: &Path, file: &str, tag: &str, kind: Option<Kind>) -> Result<Unpacked, FmuError> {
    let f = || file.to_string();
    let bytes = std::fs::read(path).map_err(|e| FmuError::Read {
        file: f(),
        reason: e.to_string(),
    })?;
    let zip =
        archive::Archive::parse(bytes).map_err(|reason| FmuError::NotZip { file: f(), reason })?;
    let md = zip
        .entry("modelDescription.xml")
        .ok_or_else(|| FmuError::NoDescription { file: f() })?;
    let xml = zip
        .read(md)
        .map_err(|reason| FmuError::Corrupt { file: f(), reason })?;
    let bad = |reason: String| FmuError::BadDescription { file: f(), reason };
    let xml = String::from_utf8(xml).map_err(|_| bad("is not UTF-8 text".into()))?;
    let version = description::fmi_version(&xml).map_err(bad)?;
    let v2 = version == "2.0";
    if !v2 && !version.starts_with("3.") {
        return Err(FmuError::Version { file: f(), version });
    }
    let description = description::parse(&xml).map_err(bad)?;
    let kind = choose_kind(&description, file, kind)?;
    let id = match kind {
        Kind::CoSimulation => description.cs_identifier.clone(),
        Kind::ModelExchange => description.me_identifier.clone(),
    }
    .unwrap_or_default();
    let dir_name = if v2 { platform2() } else { platform() };
    let binary = format!("binaries/{dir_name}/{id}{LIB_SUFFIX}");
    if zip.entry(&binary).is_none() {
        let mut found: Vec<&str> = zip
            .entries
            .iter()
            .filter(|e| e.name.starts_with("binaries/") && !e.name.ends_with('/'))
            .map(|e| e.name.as_str())
            .collect();
        found.sort_unstable();
        let found = if found.is_empty() {
            "none".to_string()
        } else {
            found.join(", ")
        };
        return Err(FmuError::NoBinary {
            file: f(),
            expected: binary,
            found,
        });
    }
    let dir = archive::TempDir::new(tag).map_err(|e| FmuError::Read {
        file: f(),
        reason: format!("cannot create a temporary directory to unpack it: {e}"),
    })?;
    zip.extract_to(dir.path())
        .map_err(|reason| FmuError::Corrupt { file: f(), reason })?;
    let lib_path = dir.path().join(&binary);
    let load_error = |reason| FmuError::Load {
        file: f(),
        binary: binary.clone(),
        reason,
    };
    let library = if v2 {
        Library::Fmi2(Arc::new(
            fmi2::Api::load(&lib_path, kind).map_err(load_error)?,
        ))
    } else {
        Library::Fmi3(Arc::new(
            fmi3::Api::load(&lib_path, kind).map_err(load_error)?,
        ))
    };
    let resources = Some(dir.path().join("resources")).filter(|p| p.is_dir());
    Ok(Unpacked {
        file: f(),
        description,
        kind,
        library,
        resources,
        dir,
    })
}
