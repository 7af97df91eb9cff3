//! `drivelink plot TABLE.csv --x NAME --signals A,B`: any CSV table (a sweep's
//! `sweep.csv`, or a `results.csv` against a signal other than time) drawn against one of
//! its columns. Rows are sorted by the x column; `--where NAME=VALUE` keeps only the rows
//! where a column has that value (one slice of a factorial grid).

use std::path::Path;

use drivelink_core::SimResult;

use crate::console;

/// What to draw from a table.
pub struct TablePlot<'a> {
    /// The column on the x axis.
    pub x: &'a str,
    /// The columns drawn.
    pub signals: &'a [&'a str],
    /// `NAME=VALUE` row filters.
    pub filters: &'a [String],
}

/// A column lookup with the message users see for an unknown name.
fn column(header: &[String], name: &str, file: &str, what: &str) -> Result<usize, String> {
    header.iter().position(|h| h == name).ok_or_else(|| {
        format!(
            "{file}: {what}: no column '{name}'{}; columns are: {}",
            drivelink_core::suggest::hint(name, header.iter().map(String::as_str)),
            header.join(", ")
        )
    })
}

/// Whether a cell matches a `--where` value: the same text, or the same number.
fn matches(cell: &str, value: &str) -> bool {
    if cell.trim() == value.trim() {
        return true;
    }
    match (cell.trim().parse::<f64>(), value.trim().parse::<f64>()) {
        (Ok(a), Ok(b)) => a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs()),
        _ => false,
    }
}

/// Read `path` as a table and build the result to draw: the x column as the abscissa
/// (sorted), the signals as columns. Errors name the file, line and column.
pub fn load(path: &Path, spec: &TablePlot<'_>) -> Result<SimResult, Vec<String>> {
    let file = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| vec![format!("cannot read {file}: {e}")])?;
    let records = drivelink_sweep::table::parse_csv(&text)
        .map_err(|(line, m)| vec![format!("{file}: line {line}: {m}")])?;
    let mut it = records.into_iter();
    let Some((_, header)) = it.next() else {
        return Err(vec![format!("{file}: empty file; expected a header line")]);
    };
    let mut errors = Vec::new();
    let x = column(&header, spec.x, &file, "--x")
        .map_err(|e| errors.push(e))
        .ok();
    let ys: Vec<usize> = spec
        .signals
        .iter()
        .filter_map(|s| {
            column(&header, s, &file, "--signals")
                .map_err(|e| errors.push(e))
                .ok()
        })
        .collect();
    let mut filters = Vec::new();
    for f in spec.filters {
        match f.split_once('=') {
            Some((n, v)) => {
                if let Ok(c) = column(&header, n.trim(), &file, "--where") {
                    filters.push((c, v.to_string()));
                } else if let Err(e) = column(&header, n.trim(), &file, "--where") {
                    errors.push(e);
                }
            }
            None => errors.push(format!("--where {f}: expected NAME=VALUE")),
        }
    }
    let Some(x) = x.filter(|_| errors.is_empty()) else {
        return Err(errors);
    };
    let mut rows: Vec<(f64, Vec<f64>)> = Vec::new();
    for (line, rec) in it {
        if !filters
            .iter()
            .all(|(c, v)| rec.get(*c).is_some_and(|cell| matches(cell, v)))
        {
            continue;
        }
        let num = |c: usize| -> Result<f64, String> {
            let cell = rec.get(c).map(String::as_str).unwrap_or("");
            cell.trim().parse::<f64>().map_err(|_| {
                format!(
                    "{file}: line {line}: column '{}': '{cell}' is not a number; plot numeric columns",
                    header[c]
                )
            })
        };
        let xv = num(x).map_err(|e| vec![e])?;
        let yv = ys
            .iter()
            .map(|&c| num(c))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| vec![e])?;
        if xv.is_finite() {
            rows.push((xv, yv));
        }
    }
    if rows.is_empty() {
        return Err(vec![format!(
            "{file}: no rows to plot{}",
            if spec.filters.is_empty() {
                ""
            } else {
                " (no row matches --where)"
            }
        )]);
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let names = spec.signals.iter().map(|s| s.to_string()).collect();
    let mut res = SimResult::new("table", names);
    for (xv, yv) in &rows {
        res.push_row(*xv, yv);
    }
    res.end_time = rows.last().map_or(0.0, |r| r.0);
    Ok(res)
}

/// Print the errors of [`load`]; exit code 2.
pub fn fail(errors: Vec<String>) -> u8 {
    for e in errors {
        console::error(e);
    }
    2
}
