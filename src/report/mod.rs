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

use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::Result;

pub use oplog::{OpLogSender, OpLogWriter};

use crate::files::{write_csv, write_json};
use crate::result_dir;
use crate::stats::{RunStats, Summary, SummaryOf, total};
use crate::workload::EventType;

/// Writes what the statistics of a measured phase make: summary.json (saying which run
/// it is of), intervals.csv and latency.hlog. `measure_start` is the wall time the
/// measured phase began.
pub fn write_statistics(
    dir: &Path,
    of: SummaryOf,
    intervals: &[(u64, RunStats)],
    interval: Duration,
    elapsed: Duration,
    measure_start: SystemTime,
    comment: &str,
) -> Result<Summary> {
    let names = EventType::names();
    let mut summary = total(intervals, names.len()).summary(&names, elapsed.as_secs_f64());
    summary.run = Some(of);
    write_json(
        &result_dir::file(dir, result_dir::SUMMARY_JSON),
        &summary.to_json(),
    )?;
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
