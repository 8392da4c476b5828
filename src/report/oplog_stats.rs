//! Statistics rebuilt from `ops.csv`: what `recover` does for a killed run and `merge`
//! for the shards of one. The op log keeps each latency to the nanosecond, so the
//! histograms come out as the run recorded them.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, anyhow};

use crate::db::ErrorKind;
use crate::stats::{Outcome, RunStats};
use crate::workload::EventType;

/// One op log row, as rebuilding needs it.
#[derive(Debug, serde::Deserialize)]
pub struct LoggedOp {
    pub event_type: String,
    pub seq: u64,
    pub target: u64,
    pub timestamp: String,
    pub latency_us: f64,
    pub success: bool,
    pub error_kind: String,
    #[serde(default)]
    pub node: Option<u16>,
    #[serde(default)]
    pub attempts: Option<u32>,
    #[serde(default)]
    pub error_code: String,
    #[serde(default)]
    pub intended_start_ns: Option<u64>,
    #[serde(default)]
    pub queue_us: Option<f64>,
}

impl LoggedOp {
    pub fn event(&self) -> Result<EventType> {
        EventType::ALL
            .iter()
            .copied()
            .find(|e| e.as_str() == self.event_type)
            .ok_or_else(|| anyhow!("unknown event type '{}'", self.event_type))
    }

    /// When the request was sent.
    pub fn sent_at(&self) -> Result<SystemTime> {
        humantime::parse_rfc3339(&self.timestamp).context("bad timestamp")
    }

    pub fn is_write(&self) -> bool {
        !matches!(self.event_type.as_str(), "read" | "read_order")
    }
}

/// Interval statistics being rebuilt, from the measured phase's start.
pub struct Rebuilt {
    start: SystemTime,
    interval: Duration,
    intervals: BTreeMap<u64, RunStats>,
    /// The last answer seen.
    end: SystemTime,
}

impl Rebuilt {
    pub fn new(start: SystemTime, interval: Duration) -> Rebuilt {
        Rebuilt {
            start,
            interval,
            intervals: BTreeMap::new(),
            end: start,
        }
    }

    /// Records one row sent at `at`.
    pub fn add(&mut self, at: SystemTime, row: &LoggedOp, event: EventType) {
        let offset = at.duration_since(self.start).unwrap_or_default();
        let index = (offset.as_nanos() / self.interval.as_nanos().max(1)) as u64;
        let latency_ns = (row.latency_us * 1_000.0).round() as u64;
        let retries = u64::from(row.attempts.unwrap_or(1).saturating_sub(1));
        let outcome = if row.success {
            Outcome::Ok {
                retries,
                response_ns: row.intended_start_ns.map(|due| {
                    let sent = at
                        .duration_since(SystemTime::UNIX_EPOCH)
                        .map_or(0, |d| d.as_nanos() as u64);
                    (sent + latency_ns).saturating_sub(due)
                }),
            }
        } else {
            Outcome::Failed {
                kind: ErrorKind::parse(&row.error_kind)
                    .unwrap_or(ErrorKind::Other)
                    .as_str(),
                code: (!row.error_code.is_empty()).then_some(row.error_code.as_str()),
                message: "(rebuilt from ops.csv)",
                retries,
            }
        };
        self.intervals
            .entry(index)
            .or_insert_with(|| RunStats::new(EventType::ALL.len()))
            .record(
                event.index(),
                row.node.unwrap_or(0),
                latency_ns,
                row.queue_us.map(|us| (us * 1_000.0).round() as u64),
                outcome,
            );
        self.end = self.end.max(at + Duration::from_nanos(latency_ns));
    }

    /// The intervals in time order, and the measured phase's length (start to last answer).
    pub fn finish(self) -> (Vec<(u64, RunStats)>, Duration, SystemTime) {
        let elapsed = self.end.duration_since(self.start).unwrap_or_default();
        (self.intervals.into_iter().collect(), elapsed, self.end)
    }
}
