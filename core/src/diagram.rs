//! `Diagram`: a model under construction, in Rust code or loaded from a netlist.
//!
//! A diagram is plain data: named block specs (type + raw JSON parameters), connection
//! lines of `"block.port"` references, model parameters, logged variables, scopes and solver
//! settings. Subsystems hold an inner diagram. [`crate::compile::compile`] turns a diagram
//! into a runnable [`crate::model::Model`]; a diagram is saved as a netlist unchanged, so
//! the Rust and JSON forms of a model are the same thing.

use serde_json::{Map, Value};

use drivelink_solver::Settings;

use crate::error::Error;
use crate::param_scope::Scope;
use crate::scope::ScopeSpec;

/// The word of `"stop_time": "cycle"`: the run ends at the end of the model's drive cycle
/// (see [`Diagram::stops_at_cycle`]). Until compiled, such a diagram's
/// `settings.stop_time` is infinite.
pub const STOP_AT_CYCLE: &str = "cycle";

/// Reads a `solver` section under a parameter scope; errors name the file (third
/// argument) and the `solver.*` key.
pub type SettingsReader = fn(&Map<String, Value>, &Scope, &str) -> Result<Settings, Error>;

/// The `solver` section of a netlist as written, kept by the loader when a value in it is
/// an expression (which may name the model's parameters). Compiling resolves it again
/// under the parameters of that compilation, so `"stop_time": "t_end"` follows a `t_end`
/// changed after loading (a sweep, [`crate::Compiled::with_params`], Python's `set=`).
#[derive(Clone)]
pub struct SettingsSource {
    /// The section as written.
    pub raw: Map<String, Value>,
    /// The settings it gave at loading. A diagram whose `settings` differ from these was
    /// changed in code; its settings are then used as they are.
    pub resolved: Settings,
    /// The loader's reading of `raw` under a parameter scope.
    pub resolve: SettingsReader,
}

impl std::fmt::Debug for SettingsSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettingsSource")
            .field("raw", &self.raw)
            .field("resolved", &self.resolved)
            .finish_non_exhaustive()
    }
}

/// Two sources are the same when they were written the same (the reader is the loader's).
impl PartialEq for SettingsSource {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw && self.resolved == other.resolved
    }
}

/// A typed handle to a block in a [`Diagram`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockId(pub usize);

/// A reference to a port: `block.port`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PortRef {
    pub block: String,
    pub port: String,
}

impl PortRef {
    /// Parse `"block.port"` (the block part may itself contain dots: `sub.block.port`).
    pub fn parse(s: &str) -> Option<PortRef> {
        let (b, p) = s.rsplit_once('.')?;
        if b.is_empty() || p.is_empty() {
            return None;
        }
        Some(PortRef {
            block: b.to_string(),
            port: p.to_string(),
        })
    }
    pub fn text(&self) -> String {
        format!("{}.{}", self.block, self.port)
    }
}

/// One block in a diagram.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockSpec {
    pub name: String,
    pub type_name: String,
    /// Raw parameter values: numbers (SI), expression strings with units, booleans,
    /// choices, arrays.
    pub params: Map<String, Value>,
    /// For `type_name == "Subsystem"`: the inner diagram.
    pub inner: Option<Box<Diagram>>,
    /// For subsystems loaded from a file: the file name as written (kept for saving).
    pub file: Option<String>,
}

/// A model under construction.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagram {
    pub name: String,
    pub description: String,
    /// Model parameters in order; values are numbers or expressions over earlier ones.
    pub parameters: Vec<(String, Value)>,
    pub blocks: Vec<BlockSpec>,
    /// Connection lines, each a list of `"block.port"` references.
    pub connections: Vec<Vec<String>>,
    /// Variables to record (`"block.var"`, or `"all"`).
    pub log: Vec<String>,
    pub scopes: Vec<ScopeSpec>,
    pub settings: Settings,
    /// Whether the netlist gave a `solver` section (kept for saving).
    pub settings_given: bool,
    /// The `solver` section as written when it holds expressions (see [`SettingsSource`]).
    pub settings_src: Option<SettingsSource>,
    /// Exported ports of a subsystem: (exported name, inner `"block.port"`).
    pub ports: Vec<(String, String)>,
    /// Exported variable aliases of a composite block: (alias, inner `"block.var"`).
    pub aliases: Vec<(String, String)>,
    /// The netlist's `metrics` section: (name, expression in the metric language of
    /// `drivelink-sweep`), in order; computed after every run of the top-level diagram.
    pub metrics: Vec<(String, String)>,
    /// The directory the diagram was loaded from (its netlist file's, for a subsystem
    /// file that file's): relative file paths in block parameters (`Fmu.fmu`, a
    /// `DriveCycle` CSV) are found from it. `None` for a diagram built in code: paths are
    /// then relative to the working directory.
    pub base_dir: BaseDir,
}

/// Where a diagram's relative paths start (see [`Diagram::base_dir`]). Not part of what
/// the diagram *is*: two diagrams equal in everything else are equal wherever they came
/// from, so a netlist saved and loaded elsewhere loads back equal.
#[derive(Debug, Clone, Default)]
pub struct BaseDir(pub Option<std::path::PathBuf>);

impl PartialEq for BaseDir {
    fn eq(&self, _other: &BaseDir) -> bool {
        true
    }
}

impl Diagram {
    /// The settings of a diagram (and a netlist) that gives none: the solver's defaults
    /// with an output grid of about [`Settings::NETLIST_OUTPUT_POINTS`] points plus every
    /// event instant.
    pub fn default_settings() -> Settings {
        Settings {
            output_points: Some(Settings::NETLIST_OUTPUT_POINTS),
            ..Settings::default()
        }
    }

    /// The settings to compile with under the resolved top-level parameters `top`: the
    /// kept `solver` section resolved again (see [`SettingsSource`]), or `settings` as
    /// they are (no section kept, or settings changed in code since loading).
    pub(crate) fn settings_under(&self, top: &Scope) -> Result<Settings, Error> {
        match &self.settings_src {
            Some(src) if src.resolved == self.settings => (src.resolve)(&src.raw, top, &self.name),
            _ => Ok(self.settings.clone()),
        }
    }

    /// Whether the run ends at the end of the model's drive cycle: the kept `solver` section
    /// says `"stop_time": "cycle"` ([`STOP_AT_CYCLE`]) and the stop time was not changed in
    /// code since loading. Compiling then replaces the stop time by the largest
    /// [`crate::BlockDecl::schedule_end`] of the built blocks.
    pub fn stops_at_cycle(&self) -> bool {
        self.settings_src.as_ref().is_some_and(|src| {
            src.raw
                .get("stop_time")
                .and_then(Value::as_str)
                .map(str::trim)
                == Some(STOP_AT_CYCLE)
                && src.resolved.stop_time == self.settings.stop_time
        })
    }

    /// Set the stop time (s), in the kept `solver` section too, so a later resolution
    /// keeps it (`--stop-time` of a sweep).
    pub fn set_stop_time(&mut self, t: f64) {
        self.settings.stop_time = t;
        if let Some(src) = &mut self.settings_src {
            src.raw.insert("stop_time".into(), t.into());
            src.resolved.stop_time = t;
        }
    }

    pub fn new(name: impl Into<String>) -> Self {
        Diagram {
            name: name.into(),
            description: String::new(),
            parameters: Vec::new(),
            blocks: Vec::new(),
            connections: Vec::new(),
            log: Vec::new(),
            scopes: Vec::new(),
            settings: Diagram::default_settings(),
            settings_given: false,
            settings_src: None,
            ports: Vec::new(),
            aliases: Vec::new(),
            metrics: Vec::new(),
            base_dir: BaseDir::default(),
        }
    }

    /// Add a block of a registered type with raw parameters (a JSON object; numbers are SI,
    /// strings are expressions such as `"4500 rpm"`).
    pub fn add(&mut self, name: &str, type_name: &str, params: Value) -> BlockId {
        let params = match params {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => {
                let mut m = Map::new();
                m.insert("value".into(), other);
                m
            }
        };
        self.blocks.push(BlockSpec {
            name: name.to_string(),
            type_name: type_name.to_string(),
            params,
            inner: None,
            file: None,
        });
        BlockId(self.blocks.len() - 1)
    }

    /// Add a subsystem: an inner diagram with exported `ports`, whose `parameters` are
    /// overridden by `params` (a masked subsystem).
    pub fn add_subsystem(&mut self, name: &str, inner: Diagram, params: Value) -> BlockId {
        let id = self.add(name, "Subsystem", params);
        self.blocks[id.0].inner = Some(Box::new(inner));
        id
    }

    /// Set a model parameter (value or expression).
    pub fn param(&mut self, name: &str, value: impl Into<Value>) -> &mut Self {
        let value = value.into();
        if let Some(p) = self.parameters.iter_mut().find(|(n, _)| n == name) {
            p.1 = value;
        } else {
            self.parameters.push((name.to_string(), value));
        }
        self
    }

    /// The name of a block.
    pub fn name_of(&self, id: BlockId) -> &str {
        &self.blocks[id.0].name
    }

    /// `"block.port"` for a handle.
    pub fn port(&self, id: BlockId, port: &str) -> String {
        format!("{}.{}", self.blocks[id.0].name, port)
    }

    /// Connect two or more ports (`"block.port"`).
    pub fn connect<S: AsRef<str>>(&mut self, ports: &[S]) -> &mut Self {
        self.connections
            .push(ports.iter().map(|s| s.as_ref().to_string()).collect());
        self
    }

    /// Record variables (`"block.var"`).
    pub fn log<S: AsRef<str>>(&mut self, vars: &[S]) -> &mut Self {
        for v in vars {
            let v = v.as_ref().to_string();
            if !self.log.contains(&v) {
                self.log.push(v);
            }
        }
        self
    }

    pub fn scope(&mut self, scope: ScopeSpec) -> &mut Self {
        self.scopes.push(scope);
        self
    }

    /// Export an inner port of this diagram under `name` (for use as a subsystem).
    pub fn export_port(&mut self, name: &str, inner: &str) -> &mut Self {
        self.ports.push((name.to_string(), inner.to_string()));
        self
    }

    /// Export an inner variable under `alias` (for composite blocks).
    pub fn alias(&mut self, alias: &str, inner: &str) -> &mut Self {
        self.aliases.push((alias.to_string(), inner.to_string()));
        self
    }

    /// Add a metric (or replace the expression of the metric of that name): one number
    /// per run, computed from its results (`"max(abs(car.r), 2 s, 4 s)"`).
    pub fn metric(&mut self, name: &str, expr: &str) -> &mut Self {
        match self.metrics.iter_mut().find(|(n, _)| n == name) {
            Some(m) => m.1 = expr.to_string(),
            None => self.metrics.push((name.to_string(), expr.to_string())),
        }
        self
    }

    /// Find a block by name.
    pub fn find(&self, name: &str) -> Option<BlockId> {
        self.blocks.iter().position(|b| b.name == name).map(BlockId)
    }

    /// Mutable raw parameters of a block (to tweak a loaded model).
    pub fn params_mut(&mut self, id: BlockId) -> &mut Map<String, Value> {
        &mut self.blocks[id.0].params
    }
}
