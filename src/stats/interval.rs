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
    /// Intervals more than this many behind the newest are packed (`stats::histogram`):
    /// about a second's worth, and two at the least.
    open: u64,
    slots: Mutex<Slots>,
}

#[derive(Default)]
struct Slots {
    by_index: BTreeMap<u64, RunStats>,
    /// Every interval below this one is packed, but for a moment after a late share.
    packed_below: u64,
}

impl IntervalCollector {
    pub fn new(interval: Duration, event_types: usize) -> Self {
        let interval_ns = (interval.as_nanos() as u64).max(1);
        IntervalCollector {
            interval_ns,
            event_types,
            open: (1_000_000_000 / interval_ns).max(2),
            slots: Mutex::new(Slots::default()),
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

    /// Adds one lane's share of an interval, and packs the intervals now far enough
    /// behind: a long run's memory then grows by their packed size alone.
    pub fn deposit(&self, index: u64, stats: &RunStats) {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let Slots {
            by_index,
            packed_below,
        } = &mut *slots;
        let slot = by_index
            .entry(index)
            .or_insert_with(|| RunStats::new(self.event_types));
        slot.merge(stats);
        if index < *packed_below {
            slot.pack(); // a late lane's share
        }
        let seal = index.saturating_sub(self.open);
        if seal > *packed_below {
            by_index
                .range_mut(*packed_below..seal)
                .for_each(|(_, stats)| stats.pack());
            *packed_below = seal;
        }
    }

    /// Every interval that saw an operation, in time order.
    pub fn take(&self) -> Vec<(u64, RunStats)> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut slots.by_index).into_iter().collect()
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

    #[test]
    fn intervals_far_behind_are_packed_and_still_take_late_shares() {
        use crate::stats::histogram::LazyHistogram;
        let packed = |stats: &RunStats| {
            matches!(stats.per_event[0].latency_ns, LazyHistogram::Packed { .. })
        };
        // 500 ms intervals: the newest and the two before it stay open.
        let collector = IntervalCollector::new(Duration::from_millis(500), 1);
        let share = |ns: u64| {
            let mut stats = RunStats::new(1);
            stats.event(0).record_ok(ns);
            stats
        };
        for index in 0..10 {
            collector.deposit(index, &share(1_000 + index));
        }
        {
            let slots = collector.slots.lock().unwrap();
            let states: Vec<bool> = slots.by_index.values().map(packed).collect();
            assert_eq!(
                states,
                [
                    true, true, true, true, true, true, true, false, false, false
                ]
            );
        }
        // A lane that was stuck in a long call hands in its share of interval 3.
        collector.deposit(3, &share(7_000_000));
        let intervals = collector.take();
        assert!(packed(&intervals[3].1), "packed again after the late share");
        let third = intervals[3].1.per_event[0].histogram();
        assert_eq!((third.len(), third.min()), (2, 1_003));
        assert_eq!(third.max(), third.highest_equivalent(7_000_000));
        let all = total(&intervals, 1);
        assert_eq!(all.total_ops(), 11);
        assert_eq!(all.per_event[0].histogram().min(), 1_000);
    }
}
