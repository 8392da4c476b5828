//! Statistics per time interval of the measured phase (1 s by default): what the
//! latency-over-time charts and `latency.hlog` are made of.
//!
//! Lanes record into shards, one per runtime thread: each holds the newest intervals its
//! thread recorded into, and hands an interval over to the run's slots once two newer
//! ones have begun. When each lane kept its own (a histogram per event type, 18,432
//! counts of 8 bytes at 100 ms latencies), 256 lanes of `race-cql-read` on Cassandra
//! peaked at 67 MB, against 31 MB with shards. A shard is locked per operation, by the
//! thread whose shard it is, so the lock is all but never contended.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::RunStats;

/// Intervals a shard keeps open: the newest and the one before it, which operations
/// that began before the turn still finish into.
const SHARD_OPEN: usize = 2;

/// Statistics per interval, filled by the lanes while the run goes.
pub struct IntervalCollector {
    interval_ns: u64,
    event_types: usize,
    /// Intervals more than this many behind the newest are packed (`stats::histogram`):
    /// about a second's worth, and two at the least.
    open: u64,
    slots: Mutex<Slots>,
    shards: Box<[Mutex<Shard>]>,
}

#[derive(Default)]
struct Slots {
    by_index: BTreeMap<u64, RunStats>,
    /// Every interval below this one is packed, but for a moment after a late share.
    packed_below: u64,
}

#[derive(Default)]
struct Shard {
    /// Oldest first, at most [`SHARD_OPEN`].
    open: VecDeque<(u64, RunStats)>,
    /// Where an operation older than every open interval is recorded before it is
    /// handed over on its own (one that ran past two interval turns).
    late: Option<RunStats>,
}

impl IntervalCollector {
    /// `shards`: the runtime's threads, as lanes on one thread share one shard.
    pub fn new(interval: Duration, event_types: usize, shards: usize) -> Self {
        let interval_ns = (interval.as_nanos() as u64).max(1);
        IntervalCollector {
            interval_ns,
            event_types,
            open: (1_000_000_000 / interval_ns).max(2),
            slots: Mutex::new(Slots::default()),
            shards: (0..shards.max(1)).map(|_| Mutex::default()).collect(),
        }
    }

    /// Packs every interval behind the newest handed over at once, for a caller that
    /// keeps its own open ones (statistics rebuilt from an op log).
    pub fn packing_at_once(self) -> Self {
        IntervalCollector { open: 0, ..self }
    }

    /// The interval an operation that started `offset_ns` into the measured phase is in.
    fn index_of(&self, offset_ns: u64) -> u64 {
        offset_ns / self.interval_ns
    }

    /// Records one operation that started `offset_ns` into the measured phase, with
    /// `record`, into the calling thread's shard.
    pub fn record(&self, offset_ns: u64, record: impl FnOnce(&mut RunStats)) {
        let index = self.index_of(offset_ns);
        let shard = &self.shards[thread_number() % self.shards.len()];
        let mut shard = shard.lock().unwrap_or_else(|p| p.into_inner());
        let Shard { open, late } = &mut *shard;
        let newest = open.back().map(|(i, _)| *i);
        if let Some(stats) = open.iter_mut().find(|(i, _)| *i == index) {
            record(&mut stats.1);
        } else if newest.is_none_or(|newest| index > newest) {
            // A new interval: the oldest open one is handed over and its memory reused.
            let stats = if open.len() == SHARD_OPEN {
                let (old, mut stats) = open.pop_front().expect("full");
                self.deposit(old, &stats);
                stats.reset();
                stats
            } else {
                RunStats::new(self.event_types)
            };
            open.push_back((index, stats));
            record(&mut open.back_mut().expect("just pushed").1);
        } else {
            let stats = late.get_or_insert_with(|| RunStats::new(self.event_types));
            record(stats);
            self.deposit(index, stats);
            stats.reset();
        }
    }

    /// Adds a share of an interval, and packs the intervals now far enough behind: a
    /// long run's memory then grows by their packed size alone. Lanes deposit through
    /// their shards; statistics rebuilt from an op log deposit directly.
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
            slot.pack(); // a late share
        }
        let seal = index.saturating_sub(self.open);
        if seal > *packed_below {
            by_index
                .range_mut(*packed_below..seal)
                .for_each(|(_, stats)| stats.pack());
            *packed_below = seal;
        }
    }

    /// The statistics of the intervals done from index `from` on (handed over, or open
    /// in a shard that has begun a newer one; a share that comes later is not in it),
    /// and the index after the newest of them: what a progress line or a metrics
    /// scrape adds of the intervals done since its last look. `None`: none done since.
    pub fn done_from(&self, from: u64) -> (Option<RunStats>, u64) {
        let mut merged: Option<RunStats> = None;
        let mut next = from;
        let mut add = |index: u64, stats: &RunStats| {
            next = next.max(index + 1);
            merged
                .get_or_insert_with(|| RunStats::new(self.event_types))
                .merge(stats);
        };
        {
            let slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            for (index, stats) in slots.by_index.range(from..) {
                add(*index, stats);
            }
        }
        for shard in &self.shards {
            let shard = shard.lock().unwrap_or_else(|p| p.into_inner());
            let newest = shard.open.back().map_or(0, |(i, _)| *i);
            for (index, stats) in &shard.open {
                if (from..newest).contains(index) {
                    add(*index, stats);
                }
            }
        }
        (merged, next)
    }

    /// Every interval that saw an operation, in time order, the shards' open ones
    /// included: called once the lanes are done.
    pub fn take(&self) -> Vec<(u64, RunStats)> {
        for shard in &self.shards {
            let mut shard = shard.lock().unwrap_or_else(|p| p.into_inner());
            for (index, stats) in std::mem::take(&mut shard.open) {
                self.deposit(index, &stats);
            }
        }
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut slots.by_index).into_iter().collect()
    }
}

/// This thread's number, given at its first operation: a runtime's threads, numbered
/// one after another, fall in different shards.
fn thread_number() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static NUMBER: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    NUMBER.with(|n| *n)
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
    fn shares_of_an_interval_add_up() {
        let collector = IntervalCollector::new(Duration::from_millis(100), 2, 1);
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
        let collector = IntervalCollector::new(Duration::from_millis(500), 1, 1);
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

    #[test]
    fn shards_hand_over_an_interval_once_two_newer_began_and_take_the_rest() {
        let collector = IntervalCollector::new(Duration::from_millis(100), 1, 1);
        let at = |ms: u64, ns: u64| collector.record(ms * 1_000_000, |s| s.event(0).record_ok(ns));
        let handed = |c: &IntervalCollector| -> Vec<u64> {
            c.slots.lock().unwrap().by_index.keys().copied().collect()
        };
        at(50, 1_000);
        at(150, 2_000);
        at(60, 3_000); // began before the turn: still open
        assert_eq!(handed(&collector), [] as [u64; 0]);
        at(250, 4_000); // a third interval: the first is handed over
        assert_eq!(handed(&collector), [0]);
        at(70, 5_000); // older than every open interval: handed over on its own
        at(260, 6_000);
        let intervals = collector.take();
        let counts: Vec<(u64, u64)> = intervals.iter().map(|(i, s)| (*i, s.total_ops())).collect();
        assert_eq!(counts, [(0, 3), (1, 1), (2, 2)]);
        let first = intervals[0].1.per_event[0].histogram();
        assert_eq!(
            (first.min(), first.max()),
            (1_000, first.highest_equivalent(5_000))
        );
        assert!(collector.take().is_empty(), "taken once");
    }

    #[test]
    fn threads_record_into_their_own_shards_and_nothing_is_lost() {
        let collector = IntervalCollector::new(Duration::from_millis(1), 1, 4);
        std::thread::scope(|scope| {
            for t in 0..8u64 {
                let collector = &collector;
                scope.spawn(move || {
                    for op in 0..1_000u64 {
                        collector.record(op * 10_000 + t, |s| s.event(0).record_ok(op + 1));
                    }
                });
            }
        });
        let intervals = collector.take();
        assert_eq!(intervals.len(), 10);
        assert!(intervals.iter().all(|(_, s)| s.total_ops() == 800));
    }
}
