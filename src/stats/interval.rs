//! Statistics per time interval of the measured phase (1 s by default): what the
//! latency-over-time charts and `latency.hlog` are made of.
//!
//! Each lane records into the interval it is in and hands that interval over when it
//! moves on to the next one, so the hot path stays lock-free: one lock per lane per
//! interval. The totals of the run are the merge of all intervals.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use super::RunStats;

pub struct IntervalCollector {
    interval_ns: u64,
    event_types: usize,
    slots: Mutex<BTreeMap<u64, RunStats>>,
}

impl IntervalCollector {
    pub fn new(interval: Duration, event_types: usize) -> Self {
        IntervalCollector {
            interval_ns: (interval.as_nanos() as u64).max(1),
            event_types,
            slots: Mutex::new(BTreeMap::new()),
        }
    }

    pub fn interval(&self) -> Duration {
        Duration::from_nanos(self.interval_ns)
    }

    pub fn event_types(&self) -> usize {
        self.event_types
    }

    /// The interval an operation that started `offset_ns` into the measured phase is in.
    pub fn index_of(&self, offset_ns: u64) -> u64 {
        offset_ns / self.interval_ns
    }

    /// Adds one lane's share of an interval.
    pub fn deposit(&self, index: u64, stats: &RunStats) {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots
            .entry(index)
            .or_insert_with(|| RunStats::new(self.event_types))
            .merge(stats);
    }

    /// Every interval that saw an operation, in time order.
    pub fn take(&self) -> Vec<(u64, RunStats)> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut *slots).into_iter().collect()
    }
}

/// The whole run: all intervals merged.
pub fn total(intervals: &[(u64, RunStats)], event_types: usize) -> RunStats {
    let mut all = RunStats::new(event_types);
    for (_, stats) in intervals {
        all.merge(stats);
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deposits_from_lanes_add_up() {
        let collector = IntervalCollector::new(Duration::from_millis(100), 2);
        assert_eq!(collector.index_of(250_000_000), 2);
        let mut a = RunStats::new(2);
        a.event(0).record_ok(1_000);
        let mut b = RunStats::new(2);
        b.event(0).record_ok(3_000);
        b.event(1).record_error("timeout", None, 5_000, "late");
        collector.deposit(2, &a);
        collector.deposit(2, &b);
        collector.deposit(0, &a);
        let intervals = collector.take();
        assert_eq!(
            intervals.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            [0, 2]
        );
        assert_eq!(intervals[1].1.total_ops(), 3);
        assert_eq!(total(&intervals, 2).total_ops(), 4);
    }
}
