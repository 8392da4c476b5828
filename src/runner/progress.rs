//! The counters a run's progress line, its watchdogs and the start of its measured
//! phase read: written by the lanes in small steps, read by anyone.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::db::DbError;

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
}

impl Progress {
    /// Counts a load or warm-up operation that failed.
    pub(super) fn unmeasured_failure(&self, error: &DbError) {
        self.unmeasured_failed.fetch_add(1, Ordering::Relaxed);
        self.first_unmeasured_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(|| error.to_string());
    }
}
