//! What a run leaves for people and other tools: the op log (`ops.csv`),
//! `summary.json`, `intervals.csv`, `latency.hlog`, the terminal table and the HTML
//! report. Reads and writes result folders only;
//! never talks to a database.

pub mod charts;
pub mod compare;
pub mod hlog;
pub mod html;
pub mod intervals;
pub mod load;
pub mod oplog;
pub mod significance;
pub mod svg;
pub mod sweep;
pub mod table;

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

pub use oplog::{OpLogSender, OpLogWriter};

/// Writes `value` as pretty JSON to `path`.
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).expect("result records serialise");
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes rows of a `#[derive(Serialize)]` struct as CSV with a header.
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<()> {
    let mut csv = csv::Writer::from_path(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    for row in rows {
        csv.serialize(row)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    csv.flush()
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Reads JSON written by [`write_json`].
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not valid", path.display()))
}
