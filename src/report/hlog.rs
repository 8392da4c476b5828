//! `latency.hlog`: the interval histograms in HdrHistogram's own interval-log format
//! (V2, compressed): per interval, one untagged histogram of all successful operations
//! (what HistogramLogProcessor reads without `-tag`), then one per event type, tagged
//! with its name, and under `--rate` its response times, tagged `response-<name>`. Values are in nanoseconds; the max column is in milliseconds, as
//! HdrHistogram's tools expect.

use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, anyhow};
use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};

use crate::stats::{RunStats, new_histogram};

/// The tag prefix of response-time histograms (`--rate`): `response-read_order`.
pub const RESPONSE_TAG: &str = "response-";

/// A log read back: its histograms merged by tag as they are read ("" is the untagged
/// one of all operations), so that reading a long run's log does not hold each
/// interval's histogram (with 2,000 intervals of 10 ms, the run's peak fell from 647 to
/// 85 MB).
#[derive(Debug, Clone, Default)]
pub struct Logged {
    /// The length of the intervals, from the first one.
    pub interval: Option<Duration>,
    by_tag: BTreeMap<String, Histogram<u64>>,
}

impl Logged {
    /// Whether the log held no histogram.
    pub fn is_empty(&self) -> bool {
        self.by_tag.is_empty()
    }
}

/// Writes every non-empty (interval, event type) histogram; `start` is the wall time
/// the measured phase began.
pub fn write(
    path: &Path,
    intervals: &[(u64, RunStats)],
    interval: Duration,
    start: SystemTime,
    names: &[&str],
    comment: &str,
) -> Result<()> {
    let mut out = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    {
        let mut log = IntervalLogWriterBuilder::new()
            .add_comment(comment)
            .add_comment("values in nanoseconds; tags are hatshop event types")
            .with_start_time(start)
            .with_base_time(start)
            .with_max_value_divisor(1e6)
            .begin_log_with(&mut out, &mut serializer)
            .map_err(|e| anyhow!("cannot start {}: {e}", path.display()))?;
        for (index, stats) in intervals {
            let at = interval.saturating_mul(*index as u32);
            // Decoded once: an interval far behind keeps its histograms packed.
            let histograms: Vec<_> = stats.events().iter().map(|e| e.histogram()).collect();
            let mut all = new_histogram();
            for histogram in &histograms {
                all.add(&**histogram)
                    .expect("auto-resizing histograms always merge");
            }
            if !all.is_empty() {
                log.write_histogram(&all, at, interval, None)
                    .map_err(|e| anyhow!("cannot write {}: {e:?}", path.display()))?;
            }
            for ((event, histogram), name) in stats.events().iter().zip(&histograms).zip(names) {
                if histogram.is_empty() {
                    continue;
                }
                let tag = Tag::new(name).expect("event type names have no spaces or commas");
                log.write_histogram(histogram, at, interval, Some(tag))
                    .map_err(|e| anyhow!("cannot write {}: {e:?}", path.display()))?;
                // Open loop: the same successes timed from when each was due.
                let response = event.response_histogram();
                if !response.is_empty() {
                    let name = format!("{RESPONSE_TAG}{name}");
                    let tag = Tag::new(&name).expect("no spaces or commas");
                    log.write_histogram(&response, at, interval, Some(tag))
                        .map_err(|e| anyhow!("cannot write {}: {e:?}", path.display()))?;
                }
            }
        }
    }
    crate::files::write_atomic(path, &out)
}

/// Reads the folder's latency.hlog back, by event type and interval, checked against
/// its seal.
pub fn read(dir: &Path) -> Result<Logged> {
    let name = crate::result_dir::LATENCY_HLOG;
    let path = &dir.join(name);
    let bytes = crate::result_dir::seal::read(dir, name)?;
    let mut deserializer = Deserializer::new();
    let mut logged = Logged::default();
    for entry in IntervalLogIterator::new(&bytes) {
        let entry =
            entry.map_err(|e| anyhow!("{} is not a valid interval log: {e:?}", path.display()))?;
        let LogEntry::Interval(interval) = entry else {
            continue;
        };
        let encoded = base64::engine::general_purpose::STANDARD
            .decode(interval.encoded_histogram())
            .with_context(|| format!("{}: bad base64 in a histogram", path.display()))?;
        let histogram: Histogram<u64> = deserializer
            .deserialize(&mut Cursor::new(&encoded))
            .map_err(|e| anyhow!("{}: cannot decode a histogram: {e:?}", path.display()))?;
        logged.interval.get_or_insert(interval.duration());
        let tag = interval.tag().map(|t| t.as_str()).unwrap_or_default();
        logged
            .by_tag
            .entry(tag.to_string())
            .or_insert_with(new_histogram)
            .add(&histogram)
            .expect("auto-resizing histograms always merge");
    }
    Ok(logged)
}

/// All intervals of one event type merged, or of all operations (`None`: the untagged
/// histograms; a log from before they were written: every histogram).
pub fn merged(logged: &Logged, tag: Option<&str>) -> Histogram<u64> {
    let mut all = new_histogram();
    let untagged = logged.by_tag.contains_key("");
    for (_, h) in logged
        .by_tag
        .iter()
        .filter(|(t, _)| *t == tag.unwrap_or("") || (tag.is_none() && !untagged))
    {
        all.add(h).expect("auto-resizing histograms always merge");
    }
    all
}

/// The histograms of every tag that starts with `prefix` merged: all event types'
/// response times, with [`RESPONSE_TAG`].
pub fn merged_with_prefix(logged: &Logged, prefix: &str) -> Histogram<u64> {
    let mut all = new_histogram();
    for (_, h) in logged.by_tag.iter().filter(|(t, _)| t.starts_with(prefix)) {
        all.add(h).expect("auto-resizing histograms always merge");
    }
    all
}
