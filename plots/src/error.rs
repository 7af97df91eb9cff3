//! Errors of scope rendering ([`PlotError`]).

use std::path::PathBuf;

/// Why a scope could not be rendered or written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// A scope names a signal the result does not contain.
    #[error("scope `{scope}`: unknown signal `{signal}` (available: {})", list(.available, *.more))]
    UnknownSignal {
        scope: String,
        signal: String,
        /// Up to ten logged names, most similar first.
        available: Vec<String>,
        /// How many further names were left out of `available`.
        more: usize,
    },
    /// A scope signal asks for a display unit [`drivelink_results::scope::DisplayUnit`] does not know.
    #[error("scope `{scope}`, signal `{signal}`: unknown display unit `{unit}` (accepted: {})", .accepted.join(", "))]
    UnknownUnit {
        scope: String,
        signal: String,
        unit: String,
        accepted: Vec<&'static str>,
    },
    /// The result holds no samples.
    #[error("scope `{scope}`: the result has no samples")]
    EmptyResult { scope: String },
    /// The scope has no signal to plot.
    #[error("scope `{scope}` has no signals")]
    NoSignals { scope: String },
    /// A panel mixes more display units than it has y axes (left and right).
    #[error("scope `{scope}`, panel {panel}: {} display units ({}); a panel has at most two y axes (left and right): put the signals of the other units in another panel", .units.len(), groups(.units))]
    TooManyUnits {
        scope: String,
        /// 1-based panel number.
        panel: usize,
        /// Each unit with the signals that use it, in order of appearance.
        units: Vec<(String, Vec<String>)>,
    },
    /// A fixed axis range (`--xlim`, `--ylim`, scope `ylim`) is not `low < high`, finite.
    #[error("scope `{scope}`: {axis} range [{low}, {high}] must be finite with low < high")]
    BadRange {
        scope: String,
        /// `"x"` or `"y"`.
        axis: &'static str,
        low: f64,
        high: f64,
    },
    /// Writing an image file failed.
    #[error("scope `{scope}`: writing `{}`: {source}", .path.display())]
    Io {
        scope: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The drawing backend or the PNG encoder failed (or the image size is unusable).
    #[error("scope `{scope}`: drawing failed: {message}")]
    Drawing { scope: String, message: String },
}

fn groups(units: &[(String, Vec<String>)]) -> String {
    units
        .iter()
        .map(|(u, names)| {
            let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            format!("{u}: {}", names.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn list(names: &[String], more: usize) -> String {
    if names.is_empty() {
        return "none".to_string();
    }
    let mut s = names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if more > 0 {
        s.push_str(&format!(", ... ({more} more)"));
    }
    s
}

/// Builds [`PlotError::UnknownSignal`], listing the most similar names first.
pub(crate) fn unknown_signal(scope: &str, signal: &str, names: &[String]) -> PlotError {
    const MAX: usize = 10;
    let score = |n: &str| -> usize {
        let prefix = n
            .chars()
            .zip(signal.chars())
            .take_while(|(a, b)| a == b)
            .count();
        let last = signal.rsplit('.').next().unwrap_or(signal);
        let contains = usize::from(!last.is_empty() && n.contains(last)) * 4;
        prefix + contains
    };
    let mut ranked: Vec<(usize, usize)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (score(n), i))
        .collect();
    // Highest score first, then column order (stable and deterministic).
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let available: Vec<String> = ranked
        .iter()
        .take(MAX)
        .map(|&(_, i)| names[i].clone())
        .collect();
    PlotError::UnknownSignal {
        scope: scope.to_string(),
        signal: signal.to_string(),
        more: names.len().saturating_sub(available.len()),
        available,
    }
}
