//! Scope specifications (what to plot) and display units.
//!
//! A scope is stored with the model (netlist `scopes`) and rendered by the `plots` crate.
//! Signals are SI inside; a scope signal may ask for a display unit (`rpm`, `km/h`, ...),
//! converted here by [`DisplayUnit`].

use drivelink_units::units::{self, Dim};
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
    /// An XY scope: the signals are plotted against this signal instead of time, with
    /// equal scaling of both axes when they share a unit (trajectories: `"car.x"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<String>,
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
            x: None,
        }
    }
    pub fn title_text(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }
    /// Every signal name the scope needs (these are always logged), the XY abscissa last.
    pub fn signal_names(&self) -> impl Iterator<Item = &str> {
        self.panels
            .iter()
            .flatten()
            .map(|s| s.signal.as_str())
            .chain(self.x.as_deref())
    }
    /// The display unit of one signal: its own, else the scope's, else SI.
    pub fn unit_of<'a>(&'a self, s: &'a ScopeSignal) -> Option<&'a str> {
        s.unit.as_deref().or(self.unit.as_deref())
    }
}

/// A display unit: `display = si * factor`, of dimension `dim`.
///
/// Factors and dimensions come from the one unit table of `drivelink-units`: any unit
/// expression it reads is a display unit (`"rpm"`, `"km/h"`, `"kN*m"`, `"bar"`). A few
/// spellings are display-only: `"g"` is standard gravity on an acceleration axis (in
/// parameter expressions `g` is the gram), `"-"`, `"1"` and `""` are dimensionless, and
/// some get a nicer label (`"N*m"` is drawn `N·m`).
#[derive(Debug, Clone, PartialEq)]
pub struct DisplayUnit {
    /// How the unit is written on an axis.
    pub label: String,
    /// Multiply an SI value by this to get the display value.
    pub factor: f64,
    /// Dimension of the quantity the unit displays.
    pub dim: Dim,
}

/// Standard gravity, m/s².
const G_N: f64 = 9.80665;

/// Display spellings with their label and the unit expression they stand for (`None`:
/// special, handled in [`DisplayUnit::parse`]). Listed first in messages.
const DISPLAY_NAMES: &[(&str, &str, Option<&str>)] = &[
    ("rpm", "rpm", Some("rpm")),
    ("rad/s", "rad/s", Some("rad/s")),
    ("km/h", "km/h", Some("km/h")),
    ("kph", "km/h", Some("kph")),
    ("mph", "mph", Some("mph")),
    ("m/s", "m/s", Some("m/s")),
    ("hp", "hp", Some("hp")),
    ("kW", "kW", Some("kW")),
    ("W", "W", Some("W")),
    ("deg", "deg", Some("deg")),
    ("rad", "rad", Some("rad")),
    ("N*m", "N·m", Some("N*m")),
    ("N.m", "N·m", Some("N*m")),
    ("Nm", "N·m", Some("N*m")),
    ("N", "N", Some("N")),
    ("kN", "kN", Some("kN")),
    ("m", "m", Some("m")),
    ("km", "km", Some("km")),
    ("s", "s", Some("s")),
    ("J", "J", Some("J")),
    ("kJ", "kJ", Some("kJ")),
    ("g", "g", None),
    ("m/s^2", "m/s²", Some("m/s^2")),
    ("%", "%", Some("%")),
    ("1", "", None),
    ("-", "", None),
];

impl DisplayUnit {
    /// Look a display unit up by name (`"rpm"`, `"km/h"`, any unit expression).
    pub fn parse(name: &str) -> Option<DisplayUnit> {
        let name = name.trim();
        let (label, expr) = match DISPLAY_NAMES.iter().find(|(n, _, _)| *n == name) {
            Some((_, label, expr)) => (label.to_string(), *expr),
            None => (name.to_string(), Some(name)),
        };
        match expr {
            Some(e) => {
                let u = units::parse_unit(e).ok()?;
                (u.factor.is_finite() && u.factor > 0.0).then(|| DisplayUnit {
                    label,
                    factor: 1.0 / u.factor,
                    dim: u.dim,
                })
            }
            None if name == "g" => Some(DisplayUnit {
                label,
                factor: 1.0 / G_N,
                dim: Dim::ACCELERATION,
            }),
            None => Some(DisplayUnit {
                label,
                factor: 1.0,
                dim: Dim::ONE,
            }),
        }
    }
    /// The usual spellings, for error messages (any unit expression is accepted too).
    pub fn names() -> Vec<&'static str> {
        DISPLAY_NAMES.iter().map(|(n, _, _)| *n).collect()
    }
    /// Whether this unit can display a quantity of SI unit `si` (`"rad/s"`, `"N*m"`).
    /// Angles are dimensionless in SI, so `rpm` fits `rad/s` and `deg` fits `rad`. An
    /// unknown SI unit fits anything.
    pub fn fits(&self, si: &str) -> bool {
        match units::parse_unit(si) {
            Ok(u) => u.dim == self.dim,
            Err(_) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_units_come_from_the_unit_table() {
        let rpm = DisplayUnit::parse("rpm").unwrap();
        assert!((rpm.factor - 60.0 / (2.0 * std::f64::consts::PI)).abs() < 1e-12);
        assert!(rpm.fits("rad/s"));
        assert!(!rpm.fits("m/s"), "rpm on a velocity is a dimension error");
        let kmh = DisplayUnit::parse("km/h").unwrap();
        assert!((kmh.factor - 3.6).abs() < 1e-12);
        assert!(kmh.fits("m/s"));
        let knm = DisplayUnit::parse("kN*m").unwrap();
        assert!((knm.factor - 1e-3).abs() < 1e-15 && knm.fits("N*m"));
        assert_eq!(DisplayUnit::parse("N*m").unwrap().label, "N·m");
        let g = DisplayUnit::parse("g").unwrap();
        assert!((g.factor * 9.80665 - 1.0).abs() < 1e-15 && g.fits("m/s^2"));
        assert!(DisplayUnit::parse("furlongs").is_none());
    }
}
