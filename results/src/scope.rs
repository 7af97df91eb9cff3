//! Scope specifications (what to plot) and display units.
//!
//! A scope is stored with the model (netlist `scopes`) and rendered by the `plots` crate.
//! Signals are SI inside; a scope signal may ask for a display unit (`rpm`, `km/h`, ...),
//! converted here by [`DisplayUnit`].

use serde::{Deserialize, Serialize};

/// One plotted signal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScopeSignal {
    /// Logged variable, `block.var` (or `sub.block.var`).
    pub signal: String,
    /// Display unit; `None` means the panel unit, else SI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Legend label; `None` means the signal name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

impl ScopeSignal {
    pub fn new(signal: impl Into<String>) -> Self {
        ScopeSignal {
            signal: signal.into(),
            unit: None,
            label: None,
        }
    }
    pub fn with_unit(mut self, unit: impl Into<String>) -> Self {
        self.unit = Some(unit.into());
        self
    }
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }
    /// The label shown in the legend.
    pub fn display_label(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.signal)
    }
}

/// One scope: an image with one or more stacked panels sharing the time axis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScopeSpec {
    /// File stem of the image (`<name>.png`).
    pub name: String,
    /// Title drawn on top; `None` means `name`.
    pub title: Option<String>,
    /// Stacked panels, top to bottom; each holds one or more signals.
    pub panels: Vec<Vec<ScopeSignal>>,
    /// Default display unit for signals that give none.
    pub unit: Option<String>,
    /// Image size in pixels.
    pub width: u32,
    pub height: u32,
    /// Draw vertical markers at logged events (lock, unlock, ...).
    pub event_markers: bool,
    /// Fixed y-axis range (display units) for every panel; `None` fits the data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ylim: Option<(f64, f64)>,
}

impl ScopeSpec {
    /// A single-panel scope of the given signals.
    pub fn new(name: impl Into<String>, signals: Vec<ScopeSignal>) -> Self {
        ScopeSpec {
            name: name.into(),
            title: None,
            panels: vec![signals],
            unit: None,
            width: 1200,
            height: 800,
            event_markers: false,
            ylim: None,
        }
    }
    pub fn title_text(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }
    /// Every signal name the scope needs (these are always logged).
    pub fn signal_names(&self) -> impl Iterator<Item = &str> {
        self.panels.iter().flatten().map(|s| s.signal.as_str())
    }
    /// The display unit of one signal: its own, else the scope's, else SI.
    pub fn unit_of<'a>(&'a self, s: &'a ScopeSignal) -> Option<&'a str> {
        s.unit.as_deref().or(self.unit.as_deref())
    }
}

/// A display unit: `display = si * factor`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DisplayUnit {
    /// How the unit is written on an axis.
    pub label: &'static str,
    /// Multiply an SI value by this to get the display value.
    pub factor: f64,
}

const RPM: f64 = 60.0 / (2.0 * std::f64::consts::PI);

/// Display units a scope may ask for, with their SI conversion.
pub const DISPLAY_UNITS: &[(&str, DisplayUnit)] = &[
    (
        "rpm",
        DisplayUnit {
            label: "rpm",
            factor: RPM,
        },
    ),
    (
        "rad/s",
        DisplayUnit {
            label: "rad/s",
            factor: 1.0,
        },
    ),
    (
        "km/h",
        DisplayUnit {
            label: "km/h",
            factor: 3.6,
        },
    ),
    (
        "kph",
        DisplayUnit {
            label: "km/h",
            factor: 3.6,
        },
    ),
    (
        "mph",
        DisplayUnit {
            label: "mph",
            factor: 3600.0 / 1609.344,
        },
    ),
    (
        "m/s",
        DisplayUnit {
            label: "m/s",
            factor: 1.0,
        },
    ),
    (
        "hp",
        DisplayUnit {
            label: "hp",
            factor: 1.0 / 745.699_871_582_270_2,
        },
    ),
    (
        "kW",
        DisplayUnit {
            label: "kW",
            factor: 1e-3,
        },
    ),
    (
        "W",
        DisplayUnit {
            label: "W",
            factor: 1.0,
        },
    ),
    (
        "deg",
        DisplayUnit {
            label: "deg",
            factor: 180.0 / std::f64::consts::PI,
        },
    ),
    (
        "rad",
        DisplayUnit {
            label: "rad",
            factor: 1.0,
        },
    ),
    (
        "N*m",
        DisplayUnit {
            label: "N·m",
            factor: 1.0,
        },
    ),
    (
        "N.m",
        DisplayUnit {
            label: "N·m",
            factor: 1.0,
        },
    ),
    (
        "Nm",
        DisplayUnit {
            label: "N·m",
            factor: 1.0,
        },
    ),
    (
        "N",
        DisplayUnit {
            label: "N",
            factor: 1.0,
        },
    ),
    (
        "kN",
        DisplayUnit {
            label: "kN",
            factor: 1e-3,
        },
    ),
    (
        "m",
        DisplayUnit {
            label: "m",
            factor: 1.0,
        },
    ),
    (
        "km",
        DisplayUnit {
            label: "km",
            factor: 1e-3,
        },
    ),
    (
        "s",
        DisplayUnit {
            label: "s",
            factor: 1.0,
        },
    ),
    (
        "J",
        DisplayUnit {
            label: "J",
            factor: 1.0,
        },
    ),
    (
        "kJ",
        DisplayUnit {
            label: "kJ",
            factor: 1e-3,
        },
    ),
    (
        "g",
        DisplayUnit {
            label: "g",
            factor: 1.0 / 9.80665,
        },
    ),
    (
        "m/s^2",
        DisplayUnit {
            label: "m/s²",
            factor: 1.0,
        },
    ),
    (
        "%",
        DisplayUnit {
            label: "%",
            factor: 100.0,
        },
    ),
    (
        "1",
        DisplayUnit {
            label: "",
            factor: 1.0,
        },
    ),
    (
        "-",
        DisplayUnit {
            label: "",
            factor: 1.0,
        },
    ),
];

impl DisplayUnit {
    /// Look a display unit up by name (`"rpm"`, `"km/h"`, ...).
    pub fn parse(name: &str) -> Option<DisplayUnit> {
        let name = name.trim();
        DISPLAY_UNITS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, u)| *u)
    }
    /// All accepted spellings, for error messages.
    pub fn names() -> Vec<&'static str> {
        DISPLAY_UNITS.iter().map(|(n, _)| *n).collect()
    }
}
