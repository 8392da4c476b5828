//! What a run leaves for people and other tools: the op log (`ops.csv`),
//! `summary.json`, `intervals.csv`, `latency.hlog`, the terminal table and the HTML
//! report. Reads and writes result folders only;
//! never talks to a database.

pub mod bulk;
pub mod charts;
pub mod compare;
pub mod differences;
pub mod hlog;
pub mod html;
pub mod intervals;
pub mod load;
pub mod oplog;
pub mod oplog_stats;
pub mod repeats;
pub mod resources;
pub mod significance;
pub mod slowest;
pub mod svg;
pub mod sweep;
pub mod table;
pub mod traces;

use std::fs::File;
use std::io::Write as _;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use serde::Serialize;

pub use oplog::{OpLogSender, OpLogWriter};

use crate::result_dir;
use crate::stats::{RunStats, Summary, total};
use crate::workload::EventType;

/// Writes what the statistics of a measured phase make: summary.json, intervals.csv
/// and latency.hlog. `measure_start` is the wall time the measured phase began.
pub fn write_statistics(
    dir: &Path,
    intervals: &[(u64, RunStats)],
    interval: Duration,
    elapsed: Duration,
    measure_start: SystemTime,
    comment: &str,
) -> Result<Summary> {
    let names = EventType::names();
    let summary = total(intervals, names.len()).summary(&names, elapsed.as_secs_f64());
    write_json(&result_dir::file(dir, result_dir::SUMMARY_JSON), &summary)?;
    write_csv(
        &result_dir::file(dir, result_dir::INTERVALS_CSV),
        &self::intervals::rows(
            intervals,
            interval.as_secs_f64(),
            elapsed.as_secs_f64(),
            &names,
        ),
    )?;
    hlog::write(
        &result_dir::file(dir, result_dir::LATENCY_HLOG),
        intervals,
        interval,
        measure_start,
        &names,
        comment,
    )?;
    Ok(summary)
}

/// Writes `value` as pretty JSON to `path`.
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).expect("result records serialise");
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// The header line of a CSV of `T` rows (from its field names), newline included.
pub fn csv_header<T: Serialize>(sample: &T) -> String {
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.serialize(sample).expect("rows serialise");
    let bytes = csv.into_inner().expect("in memory");
    let text = String::from_utf8(bytes).expect("CSV is text");
    text.lines().next().unwrap_or_default().to_string() + "\n"
}

/// Writes rows of a `#[derive(Serialize)]` struct as CSV with a header, also when
/// there are no rows.
pub fn write_csv<T: Serialize + Default>(path: &Path, rows: &[T]) -> Result<()> {
    let mut out = CsvRows::create(path)?;
    for row in rows {
        out.push(row)?;
    }
    out.finish()
}

/// A CSV of `T` rows written as they come, so that none need be held: its header is
/// there even when no row follows.
pub struct CsvRows<T> {
    csv: csv::Writer<File>,
    path: PathBuf,
    row: PhantomData<T>,
}

impl<T: Serialize + Default> CsvRows<T> {
    pub fn create(path: &Path) -> Result<Self> {
        let cannot = || format!("cannot write {}", path.display());
        let mut file = File::create(path).with_context(cannot)?;
        file.write_all(csv_header(&T::default()).as_bytes())
            .with_context(cannot)?;
        Ok(CsvRows {
            csv: csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(file),
            path: path.to_path_buf(),
            row: PhantomData,
        })
    }

    pub fn push(&mut self, row: &T) -> Result<()> {
        self.csv
            .serialize(row)
            .with_context(|| format!("cannot write {}", self.path.display()))
    }

    pub fn finish(mut self) -> Result<()> {
        self.csv
            .flush()
            .with_context(|| format!("cannot write {}", self.path.display()))
    }
}

/// Reads JSON written by [`write_json`].
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not valid", path.display()))
}
