//! What a store notes about a call while it runs: which node of a cluster served it
//! (MySQL routing over several hosts, Cassandra's coordinator, with [`served_by`]) and
//! how long it waited for a pooled connection (with [`queued`]), which is measured apart
//! from service time so that pool starvation shows as `queue` rather than as a slow
//! server; and, when the lane asks for it, the ids of server-side traces. The lane reads them back from the notes it handed to [`observe`], also when
//! the call timed out or was cancelled. A side channel rather than a return value, so
//! the trait's methods stay in domain words.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Reads the server's own time of a traced call after it ended, outside the timed
/// window: the server's µs and the number of statements it covers (`None`: the
/// server kept none).
pub type FollowUp = Pin<Box<dyn Future<Output = Option<(f64, usize)>> + Send>>;

/// `queued_ns` of a call whose store noted no wait (it keeps no pool of its own).
const NOT_NOTED: u64 = u64::MAX;

/// One lane's notes of its calls.
pub struct CallNotes {
    /// The lane's index: a store that keeps connections gives lane i connection i.
    lane: Option<usize>,
    node: AtomicU16,
    queued_ns: AtomicU64,
    /// The lane asks the store to trace this call on the server (`--trace-sample`).
    trace: AtomicBool,
    /// The server's ids of the traces of this call's requests.
    trace_ids: Mutex<Vec<u128>>,
    follow_up: Mutex<Option<FollowUp>>,
}

impl Default for CallNotes {
    fn default() -> Self {
        CallNotes {
            lane: None,
            node: AtomicU16::new(0),
            queued_ns: AtomicU64::new(NOT_NOTED),
            trace: AtomicBool::new(false),
            trace_ids: Mutex::new(Vec::new()),
            follow_up: Mutex::new(None),
        }
    }
}

impl CallNotes {
    /// Notes for a call made on `lane`, with nothing else known yet.
    pub fn of_lane(lane: usize) -> CallNotes {
        CallNotes {
            lane: Some(lane),
            ..CallNotes::default()
        }
    }

    /// The node (1-based, in the order of the URL's hosts) that served it; 0: not said.
    pub fn node(&self) -> u16 {
        self.node.load(Ordering::Relaxed)
    }

    /// Time spent waiting for a pooled connection, when the store keeps a pool.
    pub fn queued_ns(&self) -> Option<u64> {
        Some(self.queued_ns.load(Ordering::Relaxed)).filter(|&ns| ns != NOT_NOTED)
    }

    /// The trace ids the store noted, taken.
    pub fn take_trace_ids(&self) -> Vec<u128> {
        std::mem::take(&mut *self.trace_ids.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The follow-up the store left for a traced call, taken.
    pub fn take_follow_up(&self) -> Option<FollowUp> {
        self.follow_up
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
}

tokio::task_local! {
    static NOTES: Arc<CallNotes>;
}

/// Runs a call with `notes` as the place a store notes what it saw; `trace` asks the
/// store to have the server trace it.
pub async fn observe<F: Future>(notes: Arc<CallNotes>, trace: bool, call: F) -> F::Output {
    notes.node.store(0, Ordering::Relaxed);
    notes.queued_ns.store(NOT_NOTED, Ordering::Relaxed);
    // Trace ids and follow-ups are noted only for a call asked to be traced, and the
    // lane takes them after every such call: no lock on untraced calls.
    if trace {
        drop(notes.take_follow_up());
    }
    notes.trace.store(trace, Ordering::Relaxed);
    NOTES.scope(notes, call).await
}

/// The lane the current call runs in, if it runs in one.
pub fn lane() -> Option<usize> {
    NOTES.try_with(|notes| notes.lane).ok().flatten()
}

/// Whether the current call is to be traced on the server.
pub fn tracing_wanted() -> bool {
    NOTES
        .try_with(|notes| notes.trace.load(Ordering::Relaxed))
        .unwrap_or(false)
}

/// Notes the server's id of a trace of the current call.
pub fn traced(id: u128) {
    let _ = NOTES.try_with(|notes| {
        notes
            .trace_ids
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(id)
    });
}

/// Leaves a follow-up for the current traced call (the lane runs it after its clock
/// stops, within the call's deadline).
pub fn follow_up(read: FollowUp) {
    let _ = NOTES.try_with(|notes| {
        *notes.follow_up.lock().unwrap_or_else(|p| p.into_inner()) = Some(read);
    });
}

/// Notes the node (1-based, in the order of the URL's hosts) serving the current call.
pub fn served_by(node: usize) {
    let _ = NOTES.try_with(|notes| {
        notes
            .node
            .store(node.min(u16::MAX as usize) as u16, Ordering::Relaxed)
    });
}

/// Awaits `wait` (getting a connection from a pool) and notes how long it took.
pub async fn queued<F: Future>(wait: F) -> F::Output {
    let start = Instant::now();
    let out = wait.await;
    note_queued(start);
    out
}

/// The same for a pool taken without awaiting (SQLite's connection locks).
pub fn queued_sync<T>(wait: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = wait();
    note_queued(start);
    out
}

/// Notes that the current call found its connection free at once: no wait, and no
/// clock read for it.
pub fn not_queued() {
    add_queued_ns(0);
}

fn note_queued(start: Instant) {
    add_queued_ns(start.elapsed().as_nanos().min(u128::from(NOT_NOTED - 1)) as u64);
}

fn add_queued_ns(ns: u64) {
    let _ = NOTES.try_with(|notes| {
        let before = notes.queued_ns.load(Ordering::Relaxed);
        let total = if before == NOT_NOTED {
            ns
        } else {
            before.saturating_add(ns).min(NOT_NOTED - 1)
        };
        notes.queued_ns.store(total, Ordering::Relaxed);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn notes_taken_during_a_call_come_back_even_if_the_call_is_dropped() {
        let notes = Arc::new(CallNotes::default());
        let out = observe(notes.clone(), false, async {
            tokio::task::yield_now().await;
            served_by(3);
            queued(tokio::time::sleep(std::time::Duration::from_millis(2))).await;
            7
        })
        .await;
        assert_eq!((out, notes.node()), (7, 3));
        assert!(notes.queued_ns().unwrap() >= 2_000_000);
        observe(notes.clone(), false, async {}).await;
        assert_eq!((notes.node(), notes.queued_ns()), (0, None));
        // A call that never finishes (a timeout) still says where it went.
        let slow = observe(notes.clone(), false, async {
            served_by(2);
            queued_sync(|| ());
            std::future::pending::<()>().await
        });
        let _ = tokio::time::timeout(std::time::Duration::from_millis(5), slow).await;
        assert_eq!(notes.node(), 2);
        assert!(notes.queued_ns().is_some());
        served_by(5); // outside a call: ignored
        assert_eq!(notes.node(), 2);
    }
}
