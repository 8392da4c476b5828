//! `latency.hlog`: the interval histograms in HdrHistogram's own interval-log format
//! (V2, compressed), one histogram per interval and event type, tagged with the event
//! type. HdrHistogram's tools (e.g. HistogramLogProcessor) read it; values are in
//! nanoseconds, and the max column is written in milliseconds, as they expect.

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

use crate::stats::RunStats;

/// One histogram read back from a log.
#[derive(Debug, Clone)]
pub struct LoggedHistogram {
    pub start: Duration,
    pub duration: Duration,
    pub tag: String,
    pub histogram: Histogram<u64>,
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
            let at = interval * (*index as u32);
            for (event, name) in stats.events().iter().zip(names) {
                let histogram = event.histogram();
                if histogram.is_empty() {
                    continue;
                }
                let tag = Tag::new(name).expect("event type names have no spaces or commas");
                log.write_histogram(histogram, at, interval, Some(tag))
                    .map_err(|e| anyhow!("cannot write {}: {e:?}", path.display()))?;
            }
        }
    }
    std::fs::write(path, out).with_context(|| format!("cannot write {}", path.display()))
}

pub fn read(path: &Path) -> Result<Vec<LoggedHistogram>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut deserializer = Deserializer::new();
    let mut out = Vec::new();
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
        out.push(LoggedHistogram {
            start: interval.start_timestamp(),
            duration: interval.duration(),
            tag: interval
                .tag()
                .map(|t| t.as_str().to_string())
                .unwrap_or_default(),
            histogram,
        });
    }
    Ok(out)
}

/// All intervals of one tag merged (the run's histogram of that event type).
pub fn merged(logged: &[LoggedHistogram], tag: Option<&str>) -> Histogram<u64> {
    let mut all = Histogram::new(3).expect("3 digits is valid");
    for h in logged.iter().filter(|h| tag.is_none_or(|t| h.tag == t)) {
        all.add(&h.histogram)
            .expect("auto-resizing histograms always merge");
    }
    all
}
