//! `intervals.csv`: per interval and event type (and `all`), how many operations ran,
//! how many failed, and the latency of the successful ones (service time, and under
//! `--rate` response time too). The latency-over-time charts are drawn from it.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::stats::{LatencySummary, OpStats, RunStats};

/// One row of intervals.csv: one event type over one interval.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct IntervalRow {
    /// Seconds from the start of the measured phase to the start of the interval.
    pub start_s: f64,
    pub event_type: String,
    pub ops: u64,
    pub errors: u64,
    pub throughput_ops_s: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    /// Open loop (`--rate`): response time (from when each operation was due) p50,
    /// p99 and max; empty in a closed loop.
    #[serde(default)]
    pub response_p50_us: Option<f64>,
    #[serde(default)]
    pub response_p99_us: Option<f64>,
    #[serde(default)]
    pub response_max_us: Option<f64>,
}

fn row(start_s: f64, name: &str, stats: &OpStats, interval_s: f64) -> IntervalRow {
    let s = LatencySummary::of(name, stats, interval_s);
    IntervalRow {
        start_s,
        event_type: name.to_string(),
        ops: s.count,
        errors: s.errors,
        throughput_ops_s: s.throughput_ops_s,
        mean_us: s.mean_us,
        p50_us: s.percentile("p50"),
        p99_us: s.percentile("p99"),
        max_us: s.max_us,
        response_p50_us: s.response.as_ref().map(|r| r.percentile("p50")),
        response_p99_us: s.response.as_ref().map(|r| r.percentile("p99")),
        response_max_us: s.response.as_ref().map(|r| r.max_us),
    }
}

/// The rows of every interval: one per event type that ran in it, then `all`. An
/// interval in which no operation began (a stalled cluster) still gets its `all` row,
/// of zero operations, so a chart shows the stall instead of drawing across it. The
/// last interval is cut short where the measured phase ended (`elapsed_s`): its rates
/// are over its real length, so a short tail shows no dip that is not there.
pub fn rows(
    intervals: &[(u64, RunStats)],
    interval_s: f64,
    elapsed_s: f64,
    names: &[&str],
) -> Vec<IntervalRow> {
    let mut out = Vec::new();
    let mut next_index = 0;
    for (index, stats) in intervals {
        for silent in next_index..*index {
            let start_s = silent as f64 * interval_s;
            out.push(row(start_s, "all", &OpStats::default(), interval_s));
        }
        next_index = index + 1;
        let start_s = *index as f64 * interval_s;
        let length = if elapsed_s > start_s {
            (elapsed_s - start_s).min(interval_s)
        } else {
            interval_s
        };
        let mut all = OpStats::default();
        for (event, name) in stats.events().iter().zip(names) {
            if event.ok() + event.error_count() > 0 {
                out.push(row(start_s, name, event, length));
                all.merge(event);
            }
        }
        out.push(row(start_s, "all", &all, length));
    }
    out
}

/// Reads the folder's intervals.csv back by column name, checked against its seal.
pub fn read(dir: &Path) -> Result<Vec<IntervalRow>> {
    let name = crate::result_dir::INTERVALS_CSV;
    let path = dir.join(name);
    let bytes = crate::result_dir::seal::read(dir, name)?;
    let mut csv = csv::Reader::from_reader(bytes.as_slice());
    csv.deserialize()
        .collect::<Result<Vec<IntervalRow>, _>>()
        .with_context(|| format!("{} is not valid", path.display()))
}

/// Fewer batches than this and a run is too short for its own spread to be known: no
/// winner is named on them, no warming judged.
pub const MIN_BATCHES: usize = 10;
/// At most this many batches from one run: more would make each too short to be
/// independent of the next.
const MAX_BATCHES: usize = 30;

/// The mean latency of consecutive runs of intervals holding about equal numbers of
/// successful operations, as many as [`MAX_BATCHES`] (fewer where the run had fewer
/// intervals). Intervals with no success hold no latency and are passed over.
pub fn batch_means(series: &[&IntervalRow]) -> Vec<f64> {
    let timed: Vec<(f64, f64)> = series
        .iter()
        .map(|r| ((r.ops - r.errors.min(r.ops)) as f64, r.mean_us))
        .filter(|(ok, _)| *ok > 0.0)
        .collect();
    let total: f64 = timed.iter().map(|(ok, _)| ok).sum();
    let batches = timed.len().min(MAX_BATCHES);
    if batches == 0 {
        return Vec::new();
    }
    let each = total / batches as f64;
    let mut means = Vec::new();
    let (mut ops, mut sum) = (0.0, 0.0);
    for (ok, mean) in timed {
        ops += ok;
        sum += ok * mean;
        // A batch closes once it holds its share; what is left at the end joins the
        // last one rather than standing as a short batch of its own.
        if ops >= each * 0.999 && means.len() + 1 < batches {
            means.push(sum / ops);
            (ops, sum) = (0.0, 0.0);
        }
    }
    if ops > 0.0 {
        means.push(sum / ops);
    }
    means
}
