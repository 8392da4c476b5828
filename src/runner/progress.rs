//! The counters a run's progress line, its watchdogs and the start of its measured
//! phase read: written by the lanes in small steps, read by anyone.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::watchdog::CallWatch;
use crate::db::DbError;
use crate::stats::IntervalCollector;

/// Counters the progress display reads.
#[derive(Default)]
pub struct Progress {
    pub measured: AtomicU64,
    pub errors: AtomicU64,
    /// Events applied in any phase (load and warm-up too).
    pub applied: AtomicU64,
    /// Operations the store answered, with a result or an error of its own (any phase).
    pub answered: AtomicU64,
    /// Operations no server answered ([`DbError::reached_no_server`]), any phase.
    pub unreached: AtomicU64,
    /// The last of those, as the store's client said it.
    pub last_unreached: std::sync::Mutex<Option<String>>,
    /// Load and warm-up operations that failed, counted at once (they are rare), and
    /// the first of them as the store said it.
    pub unmeasured_failed: AtomicU64,
    pub first_unmeasured_error: std::sync::Mutex<Option<String>>,
    /// The measured intervals, once the run loop has begun: their latencies.
    pub intervals: OnceLock<Arc<IntervalCollector>>,
    /// Each lane's call in flight, once the run loop has begun.
    pub(super) calls: OnceLock<Vec<Arc<CallWatch>>>,
}

/// Latency percentiles of the intervals a progress line covers, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntervalLatency {
    pub p50_us: f64,
    pub p99_us: f64,
}

impl Progress {
    /// Operations sent and not yet answered, as the lanes' watchdog sees them.
    pub fn in_flight(&self) -> usize {
        self.calls
            .get()
            .map_or(0, |calls| calls.iter().filter(|c| c.busy()).count())
    }

    /// The p50 and p99 of the successes in the intervals completed from index `*from`
    /// on, which moves past them: `None` before the measured phase or where none
    /// succeeded. Read from the intervals the lanes record anyway, so nothing is added
    /// to their work.
    pub fn latency_since(&self, from: &mut u64) -> Option<IntervalLatency> {
        let (done, next) = self.intervals.get()?.done_from(*from);
        *from = next;
        let done = done?;
        let mut events = done.events().iter().map(|e| e.histogram().into_owned());
        let mut histogram = events.next()?;
        for other in events {
            // Both have hatshop's bounds, so adding cannot fail.
            let _ = histogram.add(&other);
        }
        if histogram.is_empty() {
            return None;
        }
        let us = |q: f64| histogram.value_at_quantile(q) as f64 / 1_000.0;
        Some(IntervalLatency {
            p50_us: us(0.50),
            p99_us: us(0.99),
        })
    }

    /// Counts a load or warm-up operation that failed.
    pub(super) fn unmeasured_failure(&self, error: &DbError) {
        self.unmeasured_failed.fetch_add(1, Ordering::Relaxed);
        self.first_unmeasured_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(|| error.to_string());
    }
}
