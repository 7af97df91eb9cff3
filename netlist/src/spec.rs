//! The netlist format's keys as data: one table per JSON object (top level, block entry,
//! `solver`, scope, scope signal), each key with what it holds, its default and its meaning.
//!
//! The loader checks keys against these tables (unknown keys get a "did you mean") and reads
//! the `solver` section through them; [`crate::schema`] builds the JSON Schema from the same
//! tables. A key added here without a reader or a schema fragment fails the crate's tests
//! (`spec_and_loader_agree`, `schema_lists_every_key`), so the format, the loader and the
//! schema cannot drift apart.

use drivelink_core::units::Dim;
use drivelink_solver::{Method, Settings};

/// What a key holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A number in SI units or an expression over the model parameters (`"0.5 s"`, `"2*T"`)
    /// of this dimension; `positive`: must be > 0.
    Quantity {
        /// Dimension of the value.
        dim: Dim,
        /// The SI unit shown in messages.
        unit: &'static str,
        /// Must be > 0.
        positive: bool,
    },
    /// An integer in `min..=max`.
    Integer {
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// One of these names.
    Name(&'static [&'static str]),
    /// An output grid interval: a positive time, `"steps"` or `null`.
    OutputInterval,
    /// The end of the run: a time, or `"cycle"`: the end of the model's drive cycle.
    StopTime,
    /// A string; `non_empty`: not blank.
    Text {
        /// Must not be blank.
        non_empty: bool,
    },
    /// `true` or `false`.
    Bool,
    /// A display unit name (`"rpm"`, `"km/h"`, ...).
    DisplayUnit,
    /// A non-empty list of signals (`"block.var"` or signal objects).
    Signals,
    /// A non-empty list of signal lists (stacked panels).
    Panels,
    /// `[low, high]` with `low < high`.
    Range,
    /// A structured part of the netlist, described by its own table or schema definition.
    Section(Section),
}

/// The structured parts of a netlist (the schema builder has one definition per variant).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The format version number.
    FormatVersion,
    /// Named model parameters (numbers, expressions, tables, text).
    Parameters,
    /// The [`SOLVER`] table.
    Solver,
    /// The block entries ([`BLOCK`]).
    Blocks,
    /// Connection lines: arrays of port references.
    Connections,
    /// `"all"` or a list of logged variables.
    Log,
    /// The scopes ([`SCOPE`]).
    Scopes,
    /// A map from names to port references (a subsystem's `ports`, `aliases`).
    PortMap,
    /// Parameter values of a block (checked against the block type by compile).
    BlockParams,
    /// A block type name.
    BlockType,
    /// An inline subsystem diagram.
    Diagram,
    /// Named metric expressions (`drivelink-sweep`'s metric language).
    Metrics,
}

/// One key of a JSON object of the format.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Field {
    /// The key.
    pub name: &'static str,
    /// What it holds.
    pub kind: Kind,
    /// The default when absent (as written in the docs), empty when required or none.
    pub default: &'static str,
    /// What it means.
    pub doc: &'static str,
}

const fn f(name: &'static str, kind: Kind, default: &'static str, doc: &'static str) -> Field {
    Field {
        name,
        kind,
        default,
        doc,
    }
}

const fn time(positive: bool) -> Kind {
    Kind::Quantity {
        dim: Dim::TIME,
        unit: "s",
        positive,
    }
}

const RATIO: Kind = Kind::Quantity {
    dim: Dim::ONE,
    unit: "1",
    positive: true,
};

const fn count(min: u64, max: u64) -> Kind {
    Kind::Integer { min, max }
}

const TEXT: Kind = Kind::Text { non_empty: false };

/// Top-level keys of a netlist.
pub const TOP: &[Field] = &[
    f(
        "drivelink",
        Kind::Section(Section::FormatVersion),
        "",
        "format version (1)",
    ),
    f(
        "name",
        TEXT,
        "the file stem",
        "model name (the default output folder)",
    ),
    f("description", TEXT, "", "free text"),
    f(
        "parameters",
        Kind::Section(Section::Parameters),
        "{}",
        "named model parameters: numbers (SI), expressions with units, tables, text",
    ),
    f(
        "solver",
        Kind::Section(Section::Solver),
        "{}",
        "solver settings",
    ),
    f("blocks", Kind::Section(Section::Blocks), "", "the blocks"),
    f(
        "connections",
        Kind::Section(Section::Connections),
        "[]",
        "connection lines, each a list of port references",
    ),
    f(
        "log",
        Kind::Section(Section::Log),
        "all",
        "variables written to results.csv: \"all\" or a list of block.var",
    ),
    f(
        "scopes",
        Kind::Section(Section::Scopes),
        "[]",
        "plots written as PNG",
    ),
    f(
        "metrics",
        Kind::Section(Section::Metrics),
        "{}",
        "numbers computed from every run's results (summary.json's \"metrics\", a sweep's default columns): name -> expression such as \"max(abs(car.r), 2 s, 4 s)\"",
    ),
    f(
        "ports",
        Kind::Section(Section::PortMap),
        "{}",
        "a subsystem's external ports: name -> inner block.port",
    ),
    f(
        "aliases",
        Kind::Section(Section::PortMap),
        "{}",
        "a subsystem's variable aliases: name -> inner block.var",
    ),
];

/// Keys of a block entry.
pub const BLOCK: &[Field] = &[
    f(
        "name",
        Kind::Text { non_empty: true },
        "",
        "block name (an identifier)",
    ),
    f(
        "type",
        Kind::Section(Section::BlockType),
        "",
        "block type, or \"Subsystem\"",
    ),
    f(
        "params",
        Kind::Section(Section::BlockParams),
        "{}",
        "parameter values (numbers in SI, expressions with units, model parameter names)",
    ),
    f(
        "file",
        TEXT,
        "",
        "a Subsystem's netlist file, relative to this file",
    ),
    f(
        "diagram",
        Kind::Section(Section::Diagram),
        "",
        "a Subsystem's inline netlist",
    ),
];

/// Keys of the `solver` section.
pub const SOLVER: &[Field] = &[
    f("method", Kind::Name(Method::NAMES), "dopri5", "\"dopri5\" (adaptive Dormand-Prince 5(4)), \"dop853\" (adaptive 8(5,3)), \"rk4\" (fixed step, needs step), \"radau5\" or \"stiff\" (implicit Radau IIA order 5), \"auto\" (Dopri5 switching to Radau5 while the model is stiff); radau5 and auto take at most 5000 states"),
    f("start_time", time(false), "0", "start of the run"),
    f("stop_time", Kind::StopTime, "10", "end of the run; must exceed start_time; \"cycle\": the end of the model's DriveCycle trace (its last time after repeat: the duration x repeat from 0 s; not shortened by preview; the latest of several; an error without a DriveCycle)"),
    f("rtol", RATIO, "1e-6", "relative error tolerance of the adaptive methods"),
    f("atol", RATIO, "1e-8", "absolute error tolerance of the adaptive methods"),
    f("max_step", time(true), "none", "largest step"),
    f("step", time(true), "", "the fixed step of \"rk4\" (an error with the adaptive methods)"),
    f("initial_step", time(true), "automatic", "first step tried"),
    f("output_interval", Kind::OutputInterval, "automatic", "record on the grid start_time + k*output_interval plus every event instant; \"steps\": at every step; absent or null: a grid of about output_points points"),
    f("output_points", count(1, u32::MAX as u64), "2000", "without output_interval: about this many grid points (interval rounded down to 1, 2 or 5 x 10^k s)"),
    f("max_output_points", count(1, u64::MAX), "10000000", "a grid with more points is refused before running"),
    f("max_output_values", count(1, u64::MAX), "250000000", "a grid whose points times the logged variables exceed this is refused before running (the results are held in memory: 2 GB at the default)"),
    f("max_time_events", count(1, u64::MAX), "10000000", "sample hits and breakpoints allowed in a run"),
    f("guard_samples", count(0, Settings::MAX_GUARD_SAMPLES as u64), "4", "interior points of every step at which the zero-crossing guards are sampled"),
    f("timeout", time(true), "none", "wall-clock limit: the run ends as failed with its results so far"),
    f("max_steps", count(1, u64::MAX), "10000000", "accepted + rejected steps before the run fails"),
    f("min_step_rel", RATIO, "1e-14", "a step smaller than this times max(1, |t|) is a step-size underflow"),
    f("max_event_iterations", count(1, u64::MAX), "50", "mode-update rounds allowed at one event instant"),
    f("chatter_window", time(true), "1e-6", "chattering window"),
    f("chatter_max_events", count(1, u64::MAX), "100", "more state events than this within chatter_window fails the run"),
];

/// Accepted scope image sizes (pixels, each side).
pub const SIZE_RANGE: (u64, u64) = (100, 10_000);

/// Keys of a scope.
pub const SCOPE: &[Field] = &[
    f(
        "name",
        Kind::Text { non_empty: true },
        "",
        "image file stem (written as NAME.png)",
    ),
    f("title", TEXT, "the name", "plot title"),
    f(
        "signals",
        Kind::Signals,
        "",
        "the signals of a one-panel scope",
    ),
    f(
        "panels",
        Kind::Panels,
        "",
        "stacked panels, each a list of signals",
    ),
    f(
        "unit",
        Kind::DisplayUnit,
        "SI",
        "display unit of every signal (must fit their dimension)",
    ),
    f(
        "width",
        count(SIZE_RANGE.0, SIZE_RANGE.1),
        "1200",
        "image width, pixels",
    ),
    f(
        "height",
        count(SIZE_RANGE.0, SIZE_RANGE.1),
        "800",
        "image height, pixels",
    ),
    f(
        "event_markers",
        Kind::Bool,
        "false",
        "mark the events on the time axis",
    ),
    f(
        "ylim",
        Kind::Range,
        "automatic",
        "[low, high] of the y axis, display units",
    ),
    f(
        "x",
        TEXT,
        "time",
        "XY scope: plot the signals against this signal (block.var)",
    ),
];

/// Keys of a scope signal object.
pub const SIGNAL: &[Field] = &[
    f("signal", Kind::Text { non_empty: true }, "", "block.var"),
    f(
        "unit",
        Kind::DisplayUnit,
        "SI",
        "display unit of this signal",
    ),
    f("label", TEXT, "block.var", "legend label"),
];

/// The keys of a table.
pub fn names(fields: &[Field]) -> impl Iterator<Item = &'static str> + '_ {
    fields.iter().map(|f| f.name)
}

/// The field `name` of a table.
pub fn field_in<'a>(fields: &'a [Field], name: &str) -> Option<&'a Field> {
    fields.iter().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_documented() {
        for table in [TOP, BLOCK, SOLVER, SCOPE, SIGNAL] {
            for (i, a) in table.iter().enumerate() {
                assert!(!a.doc.is_empty(), "{} has no doc", a.name);
                assert!(
                    table[i + 1..].iter().all(|b| b.name != a.name),
                    "{} twice",
                    a.name
                );
            }
        }
    }
}
