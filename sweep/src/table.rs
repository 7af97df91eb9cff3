//! The study table: typed columns, one row per run; CSV (written and read back, for
//! `sweep-merge`) and Parquet.
//!
//! CSV: a header of column names, then one line per row; numbers in Rust's shortest
//! round-trip form (so a value read back, or given to `drivelink run --set`, is the same
//! `f64`), `NaN` for a missing number; text quoted when it holds a comma, quote or line
//! break. Parquet: one row group, every column `REQUIRED` (INT64, DOUBLE, or BYTE_ARRAY
//! with the UTF8 annotation), uncompressed, with the study file (`study.json`) in the
//! key-value metadata under `drivelink.study`, written through Arrow so that each column's
//! unit is its Arrow field metadata `unit` (what `pyarrow` and `pandas` read back).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::error::SweepError;

/// The type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColKind {
    /// 64-bit integer (the run index).
    Int,
    /// 64-bit float (parameters, times, metrics; SI units).
    Float,
    /// UTF-8 text (status, message, choice parameters).
    Text,
}

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Column {
    /// Header name.
    pub name: String,
    /// Type.
    #[serde(rename = "type")]
    pub kind: ColKind,
}

/// One cell.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Cell {
    /// An integer.
    Int(i64),
    /// A number (NaN when missing).
    Float(f64),
    /// Text.
    Text(String),
}

impl Cell {
    /// The CSV text of the cell.
    fn csv(&self) -> String {
        match self {
            Cell::Int(i) => i.to_string(),
            // As results.csv writes numbers: tiny and huge values with an exponent.
            Cell::Float(x) => drivelink_core::result::Num(*x).to_string(),
            Cell::Text(s) => csv_quote(s),
        }
    }
    /// Equal, with NaN equal to NaN (bit-identical floats otherwise).
    pub fn same(&self, other: &Cell) -> bool {
        match (self, other) {
            (Cell::Float(a), Cell::Float(b)) => {
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
            }
            (a, b) => a == b,
        }
    }
}

/// A table of typed columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    columns: Vec<Column>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    /// A table; every row must have one cell per column, of the column's type.
    pub fn new(columns: Vec<Column>, rows: Vec<Vec<Cell>>) -> Table {
        Table { columns, rows }
    }
    /// The columns.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }
    /// The rows.
    pub fn rows(&self) -> &[Vec<Cell>] {
        &self.rows
    }
    /// Take the rows.
    pub fn into_rows(self) -> Vec<Vec<Cell>> {
        self.rows
    }
    /// Index of a column.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// Write the table as CSV.
    pub fn write_csv<W: Write>(&self, w: W) -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(w);
        let header: Vec<String> = self.columns.iter().map(|c| csv_quote(&c.name)).collect();
        writeln!(w, "{}", header.join(","))?;
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(Cell::csv).collect();
            writeln!(w, "{}", cells.join(","))?;
        }
        w.flush()
    }

    /// Read a CSV written by [`Table::write_csv`] with the given columns (`path` names the
    /// file in errors).
    pub fn read_csv(text: &str, columns: Vec<Column>, path: &str) -> Result<Table, SweepError> {
        let bad = |line: usize, message: String| SweepError::Table {
            path: path.to_string(),
            message: format!("line {line}: {message}"),
        };
        let records = parse_csv(text).map_err(|(line, m)| bad(line, m))?;
        let mut it = records.into_iter();
        let Some((_, header)) = it.next() else {
            return Err(bad(1, "empty file; expected a header".into()));
        };
        let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
        if header != names {
            return Err(bad(
                1,
                format!(
                    "header is {}; study.json gives {}",
                    header.join(","),
                    names.join(",")
                ),
            ));
        }
        let mut rows = Vec::new();
        for (line, rec) in it {
            if rec.len() != columns.len() {
                return Err(bad(
                    line,
                    format!("{} cells, expected {}", rec.len(), columns.len()),
                ));
            }
            let mut row = Vec::with_capacity(rec.len());
            for (cell, col) in rec.into_iter().zip(&columns) {
                row.push(match col.kind {
                    ColKind::Text => Cell::Text(cell),
                    ColKind::Int => Cell::Int(cell.trim().parse().map_err(|_| {
                        bad(
                            line,
                            format!("column '{}': '{cell}' is not an integer", col.name),
                        )
                    })?),
                    ColKind::Float => Cell::Float(cell.trim().parse().map_err(|_| {
                        bad(
                            line,
                            format!("column '{}': '{cell}' is not a number", col.name),
                        )
                    })?),
                });
            }
            rows.push(row);
        }
        Ok(Table { columns, rows })
    }

    /// Write the table as a Parquet file with `metadata` as key-value metadata and each
    /// column's unit (`units`, by column name) as the Arrow field metadata `unit`.
    pub fn write_parquet(
        &self,
        path: &Path,
        metadata: &[(&str, String)],
        units: &HashMap<String, String>,
    ) -> Result<(), SweepError> {
        let err = |e: parquet::errors::ParquetError| SweepError::io(path.display(), e);
        let fields: Vec<Field> = self
            .columns
            .iter()
            .map(|c| {
                let ty = match c.kind {
                    ColKind::Int => DataType::Int64,
                    ColKind::Float => DataType::Float64,
                    ColKind::Text => DataType::Utf8,
                };
                let unit = units.get(&c.name).map(|u| ("unit".to_string(), u.clone()));
                Field::new(&c.name, ty, false)
                    .with_metadata(unit.into_iter().collect::<HashMap<_, _>>())
            })
            .collect();
        let arrays: Vec<ArrayRef> = (0..self.columns.len()).map(|j| self.array(j)).collect();
        // The key-value metadata goes into the Arrow schema too: readers that restore the
        // stored Arrow schema (pyarrow) show its metadata, not the file's.
        let schema_metadata: HashMap<String, String> = metadata
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let schema = Arc::new(Schema::new(fields).with_metadata(schema_metadata));
        let batch = RecordBatch::try_new(schema.clone(), arrays)
            .map_err(|e| SweepError::io(path.display(), e))?;
        let kv = metadata
            .iter()
            .map(|(k, v)| KeyValue::new(k.to_string(), v.clone()))
            .collect();
        let props = WriterProperties::builder()
            .set_key_value_metadata(Some(kv))
            .set_created_by(format!("drivelink {}", env!("CARGO_PKG_VERSION")))
            .build();
        let file = std::fs::File::create(path).map_err(|e| SweepError::io(path.display(), e))?;
        let mut writer = ArrowWriter::try_new(file, schema, Some(props)).map_err(err)?;
        writer.write(&batch).map_err(err)?;
        writer.close().map_err(err)?;
        Ok(())
    }

    /// Column `j` as an Arrow array of its kind (a cell of another kind as in the CSV).
    fn array(&self, j: usize) -> ArrayRef {
        let cells = self.rows.iter().map(|r| &r[j]);
        match self.columns[j].kind {
            ColKind::Int => Arc::new(Int64Array::from_iter_values(cells.map(|c| {
                if let Cell::Int(i) = c {
                    *i
                } else {
                    0
                }
            }))),
            ColKind::Float => Arc::new(Float64Array::from_iter_values(cells.map(|c| match c {
                Cell::Float(x) => *x,
                Cell::Int(i) => *i as f64,
                Cell::Text(_) => f64::NAN,
            }))),
            ColKind::Text => Arc::new(StringArray::from_iter_values(cells.map(|c| match c {
                Cell::Text(s) => s.clone(),
                other => other.csv(),
            }))),
        }
    }
}

/// Quote a CSV cell when it holds a comma, quote or line break.
fn csv_quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One CSV record: the 1-based line it starts on and its cells.
pub type CsvRecord = (usize, Vec<String>);

/// Split CSV text into records, each with the 1-based line it starts on, honouring quoted
/// cells (a comma, quote or line break inside quotes; `""` is a quote); blank lines are
/// skipped. An unterminated quote is an error `(line, message)`.
pub fn parse_csv(text: &str) -> Result<Vec<CsvRecord>, (usize, String)> {
    let mut records = Vec::new();
    let mut line = 1;
    let mut chars = text.chars().peekable();
    while chars.peek().is_some() {
        let start = line;
        let mut rec = Vec::new();
        let mut cell = String::new();
        let mut quoted = false;
        loop {
            match chars.next() {
                None => {
                    if quoted {
                        return Err((start, "unterminated quoted cell".into()));
                    }
                    rec.push(std::mem::take(&mut cell));
                    break;
                }
                Some('"') if quoted => {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        cell.push('"');
                    } else {
                        quoted = false;
                    }
                }
                Some('"') if cell.is_empty() => quoted = true,
                Some(',') if !quoted => rec.push(std::mem::take(&mut cell)),
                Some('\r') if !quoted => {}
                Some('\n') if !quoted => {
                    line += 1;
                    rec.push(std::mem::take(&mut cell));
                    break;
                }
                Some(c) => {
                    if c == '\n' {
                        line += 1;
                    }
                    cell.push(c);
                }
            }
        }
        if !(rec.len() == 1 && rec[0].is_empty()) {
            records.push((start, rec));
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_round_trip_keeps_bits_text_and_nan() {
        let cols = vec![
            Column {
                name: "run".into(),
                kind: ColKind::Int,
            },
            Column {
                name: "x".into(),
                kind: ColKind::Float,
            },
            Column {
                name: "message".into(),
                kind: ColKind::Text,
            },
        ];
        let rows = vec![
            vec![
                Cell::Int(0),
                Cell::Float(0.1 + 0.2),
                Cell::Text("a, \"b\"\nc".into()),
            ],
            vec![
                Cell::Int(1),
                Cell::Float(f64::NAN),
                Cell::Text(String::new()),
            ],
        ];
        let t = Table::new(cols.clone(), rows);
        let mut buf = Vec::new();
        t.write_csv(&mut buf).unwrap();
        let back = Table::read_csv(std::str::from_utf8(&buf).unwrap(), cols, "t.csv").unwrap();
        for (a, b) in t.rows().iter().flatten().zip(back.rows().iter().flatten()) {
            assert!(a.same(b), "{a:?} != {b:?}");
        }
        assert_eq!(back.rows().len(), 2);
    }

    /// sweep.csv wrote a metric of 1e-300 as 301 digits (`f64::to_string`); it is now
    /// written as results.csv writes numbers, with an exponent, and still reads back to the
    /// same bits.
    #[test]
    fn tiny_and_huge_metrics_are_written_with_an_exponent_and_read_back_exactly() {
        let cols = vec![Column {
            name: "x".into(),
            kind: ColKind::Float,
        }];
        let values = [
            1e-300,
            5e-324,
            -2.5e-7,
            1.5e300,
            1.2345678901234567e17,
            1e-5,
            0.1,
        ];
        let rows = values.iter().map(|&v| vec![Cell::Float(v)]).collect();
        let t = Table::new(cols.clone(), rows);
        let mut buf = Vec::new();
        t.write_csv(&mut buf).unwrap();
        let text = std::str::from_utf8(&buf).unwrap();
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(
            lines,
            [
                "1e-300",
                "5e-324",
                "-2.5e-7",
                "1.5e300",
                "1.2345678901234566e17",
                "0.00001",
                "0.1"
            ]
        );
        let back = Table::read_csv(text, cols, "t.csv").unwrap();
        for (a, b) in t.rows().iter().flatten().zip(back.rows().iter().flatten()) {
            assert!(a.same(b), "{a:?} != {b:?}");
        }
    }
}
