//! Statistics rebuilt from the op log: what `recover` does for a killed run and `merge`
//! for the shards of one. The op log keeps each latency to the nanosecond, so the
//! histograms come out as the run recorded them.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use super::LoggedOp;
use crate::stats::{IntervalCollector, Outcome, RunStats};
use crate::workload::EventType;

/// Interval statistics being rebuilt, from the measured phase's start.
///
/// Rows come in the lanes' batches, not in time order, so the newest intervals stay
/// whole while rows may still fall into them; older ones go to an [`IntervalCollector`],
/// which packs them as a run's own statistics are packed. A row for an interval already
/// handed on opens it again, whole, and its share is merged in when it is handed on
/// once more. Memory then follows the run's length by the packed intervals alone.
pub struct Rebuilt {
    start: SystemTime,
    interval: Duration,
    /// The intervals still taking rows, at most `whole_limit` of them.
    whole: BTreeMap<u64, RunStats>,
    whole_limit: usize,
    handed: IntervalCollector,
    /// The last answer seen.
    end: SystemTime,
}

/// Whole intervals kept: a second's worth, as a lane's batch of rows spans a fraction
/// of a second at the race presets' rates.
const WHOLE_SPAN: Duration = Duration::from_secs(1);
/// At least (1 s intervals) and at most (10 ms and shorter): each whole interval holds
/// a histogram per event type, some 100 KB.
const WHOLE_LIMITS: (usize, usize) = (4, 64);

impl Rebuilt {
    /// Empty statistics of intervals of `interval`, counted from `start`.
    pub fn new(start: SystemTime, interval: Duration) -> Rebuilt {
        let interval = interval.max(Duration::from_nanos(1));
        let whole_limit = (WHOLE_SPAN.as_nanos() / interval.as_nanos()) as usize;
        Rebuilt {
            start,
            interval,
            whole: BTreeMap::new(),
            whole_limit: whole_limit.clamp(WHOLE_LIMITS.0, WHOLE_LIMITS.1),
            handed: IntervalCollector::new(interval, EventType::ALL.len(), 1).packing_at_once(),
            end: start,
        }
    }

    /// Records one row sent at `at`.
    pub fn add(&mut self, row: &LoggedOp, event: EventType) {
        let at = row.sent_at();
        let offset = at.duration_since(self.start).unwrap_or_default();
        let index = (offset.as_nanos() / self.interval.as_nanos().max(1)) as u64;
        let latency_ns = row.latency_ns;
        let retries = u64::from(row.attempts.max(1) - 1);
        let outcome = match &row.error {
            None => Outcome::Ok {
                retries,
                response_ns: row
                    .intended_start_ns
                    .map(|due| (row.sent_ns + latency_ns).saturating_sub(due)),
            },
            // Cut by the run's own end, as the run counted it.
            Some(_) if row.was_cut() => Outcome::Cut { retries },
            Some((kind, _)) => Outcome::Failed {
                kind,
                code: row.error_code.as_deref(),
                message: "(rebuilt from the op log)",
                retries,
            },
        };
        self.whole
            .entry(index)
            .or_insert_with(|| RunStats::new(EventType::ALL.len()))
            .record(event.index(), row.node, latency_ns, row.queue_ns, outcome);
        self.end = self.end.max(at + Duration::from_nanos(latency_ns));
        if self.whole.len() > self.whole_limit {
            let (index, stats) = self.whole.pop_first().expect("over the limit");
            self.handed.deposit(index, &stats);
        }
    }

    /// The intervals in time order, and the measured phase's length (start to last answer).
    pub fn finish(self) -> (Vec<(u64, RunStats)>, Duration, SystemTime) {
        for (index, stats) in &self.whole {
            self.handed.deposit(*index, stats);
        }
        let elapsed = self.end.duration_since(self.start).unwrap_or_default();
        (self.handed.take(), elapsed, self.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(at: SystemTime, latency_us: f64) -> LoggedOp {
        LoggedOp {
            event_type: "read",
            seq: 0,
            target: 0,
            sent_ns: at
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64,
            latency_ns: (latency_us * 1_000.0) as u64,
            error: None,
            error_code: None,
            node: 0,
            attempts: 1,
            intended_start_ns: None,
            queue_ns: None,
            shard: None,
        }
    }

    #[test]
    fn rows_far_out_of_time_order_land_in_their_intervals() {
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let interval = Duration::from_millis(10);
        let mut rebuilt = Rebuilt::new(start, interval);
        let read = EventType::ALL
            .iter()
            .position(|e| e.as_str() == "read")
            .unwrap();
        // 300 intervals, each given 3 rows: two in time order, and one more in a second
        // pass, long after its interval was handed on and packed.
        let at = |i: u64| start + interval * i as u32 + Duration::from_millis(1);
        for i in 0..300 {
            rebuilt.add(&row(at(i), 100.0 + i as f64), EventType::ALL[read]);
            rebuilt.add(&row(at(i), 200.0), EventType::ALL[read]);
            assert!(rebuilt.whole.len() <= rebuilt.whole_limit);
        }
        for i in (0..300).rev() {
            rebuilt.add(&row(at(i), 5_000.0 + i as f64), EventType::ALL[read]);
        }
        let (intervals, elapsed, _) = rebuilt.finish();
        assert_eq!(intervals.len(), 300);
        for (i, (index, stats)) in intervals.iter().enumerate() {
            assert_eq!((*index, stats.total_ops()), (i as u64, 3));
            let histogram = stats.events()[read].histogram();
            let ns = |us: u64| histogram.highest_equivalent(us * 1_000);
            assert_eq!(histogram.max(), ns(5_000 + i as u64), "interval {i}");
            assert_eq!(
                histogram.lowest_equivalent(histogram.min()),
                histogram.lowest_equivalent((100_000 + i as u64 * 1_000).min(200_000))
            );
        }
        assert_eq!(elapsed, interval * 299 + Duration::from_micros(6_299));
    }
}
