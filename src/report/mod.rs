//! What a run leaves for people and other tools: `summary.json`, `intervals.csv`,
//! `latency.hlog`, the terminal table and the HTML report, and the pages and texts
//! made from finished folders. Reads and writes result folders only; never talks to a
//! database.

pub mod bulk;
pub mod charts;
pub mod compare;
pub mod compare_export;
pub mod compare_overall;
pub mod compare_page;
pub mod differences;
pub mod export;
pub mod figure;
pub mod hlog;
pub mod html;
pub mod intervals;
pub mod loaded_run;
pub mod page;
pub mod repeats;
pub mod repeats_page;
pub mod resources;
pub mod run_table;
pub mod run_text;
pub mod saved_percentiles;
pub mod significance;
pub mod slo;
pub mod slowest;
pub mod study;
pub mod svg;
pub mod sweep;
pub mod table;
pub mod traces;
pub mod warming;
pub mod what_ran;

use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::Result;

use crate::files::{write_csv, write_json};
use crate::result_dir;
use crate::stats::{RunStats, Summary, SummaryOf, total};
use crate::workload::EventType;

/// What names a run's statistics files: the run they are of, the percentiles asked
/// beyond the standard ladder (`--percentiles`), and latency.hlog's comment line.
pub struct Heading {
    /// summary.json's `run`.
    pub of: SummaryOf,
    /// Labelled percentiles added to every row's ladder.
    pub percentiles: Vec<(String, f64)>,
    /// latency.hlog's `#[Comment:` line.
    pub comment: String,
}

/// Writes what the statistics of a measured phase make: summary.json, intervals.csv and
/// latency.hlog, named by `heading`. `measure_start` is the wall time the measured
/// phase began.
pub fn write_statistics(
    dir: &Path,
    heading: Heading,
    intervals: &[(u64, RunStats)],
    interval: Duration,
    elapsed: Duration,
    measure_start: SystemTime,
) -> Result<Summary> {
    let names = EventType::names();
    let mut summary = total(intervals, names.len()).summary_with(
        &names,
        elapsed.as_secs_f64(),
        &heading.percentiles,
    );
    summary.run = Some(heading.of);
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
        &heading.comment,
    )?;
    result_dir::seal::write(
        dir,
        &[
            result_dir::SUMMARY_JSON,
            result_dir::INTERVALS_CSV,
            result_dir::LATENCY_HLOG,
        ],
    )?;
    Ok(summary)
}
