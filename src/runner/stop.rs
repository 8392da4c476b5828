//! The stop signal shared by the source, the lanes and the coordinator: a flag that
//! the hot path reads for free, plus a watch channel for those waiting asynchronously.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::watch;

/// Why a run ended before its stream did, by precedence: a later, weightier reason
/// replaces an earlier one (a Ctrl-C after the deadline makes the run interrupted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum StopReason {
    /// `--duration` ran out.
    Deadline,
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// Something failed that makes going on pointless (the op log cannot be written,
    /// the events file changed).
    Failed,
}

/// Tells every stage of a run to stop, and why; the gravest reason given stays. Calls in
/// flight end with it, except at the deadline: they are let finish within a grace
/// (`end_calls`), as pgbench -T and k6's graceful stop let them.
pub struct StopSignal {
    flag: AtomicBool,
    /// Calls in flight are to end now.
    calls_end: AtomicBool,
    reason: Mutex<Option<StopReason>>,
    watch: watch::Sender<bool>,
}

impl Default for StopSignal {
    fn default() -> Self {
        StopSignal {
            flag: AtomicBool::new(false),
            calls_end: AtomicBool::new(false),
            reason: Mutex::new(None),
            watch: watch::channel(false).0,
        }
    }
}

impl StopSignal {
    /// Stops the run; the weightiest reason given wins.
    pub fn stop(&self, reason: StopReason) {
        let mut current = self.reason.lock().unwrap_or_else(|p| p.into_inner());
        if current.is_none_or(|c| reason > c) {
            *current = Some(reason);
        }
        if reason != StopReason::Deadline {
            self.calls_end.store(true, Ordering::Release);
        }
        self.flag.store(true, Ordering::Release);
        self.watch.send_replace(true);
    }

    /// Ends the calls still in flight after a stop at the deadline, their grace over.
    pub fn end_calls(&self) {
        self.calls_end.store(true, Ordering::Release);
    }

    /// Whether calls in flight are to end now.
    pub fn calls_ended(&self) -> bool {
        self.calls_end.load(Ordering::Acquire)
    }

    /// Whether a stop was asked for.
    pub fn is_stopped(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// Why the run stopped, if it has.
    pub fn reason(&self) -> Option<StopReason> {
        *self.reason.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A receiver that turns true when the run stops (a lane keeps one, for its
    /// waits on a paced slot and a traced call's follow-up; calls are the watchdog's).
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.watch.subscribe()
    }

    /// Resolves once `stop` has been called.
    pub async fn stopped(&self) {
        let mut rx = self.watch.subscribe();
        let _ = rx.wait_for(|&stopped| stopped).await;
    }

    /// `work`'s output, or `None` once `stop` has been called first (the work is then
    /// dropped where it stands).
    pub async fn unless_stopped<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        tokio::select! {
            done = work => Some(done),
            _ = self.stopped() => None,
        }
    }

    /// Resolves once the run is stopped by Ctrl-C, SIGTERM or a failure (never by
    /// its deadline alone): for work that should finish after a normal end.
    pub async fn interrupted(&self) {
        let mut rx = self.watch.subscribe();
        loop {
            if matches!(
                self.reason(),
                Some(StopReason::Interrupted | StopReason::Failed)
            ) {
                return;
            }
            if rx.changed().await.is_err() {
                return std::future::pending().await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupt_after_the_deadline_wins() {
        let stop = StopSignal::default();
        stop.stop(StopReason::Deadline);
        stop.stop(StopReason::Interrupted);
        assert_eq!(stop.reason(), Some(StopReason::Interrupted));
        stop.stop(StopReason::Deadline);
        assert_eq!(stop.reason(), Some(StopReason::Interrupted));
        stop.stop(StopReason::Failed);
        assert_eq!(stop.reason(), Some(StopReason::Failed));
    }

    #[test]
    fn calls_in_flight_outlive_the_deadline_until_their_grace_is_over() {
        let stop = StopSignal::default();
        stop.stop(StopReason::Deadline);
        assert!(stop.is_stopped());
        assert!(!stop.calls_ended());
        stop.end_calls();
        assert!(stop.calls_ended());
        let interrupted = StopSignal::default();
        interrupted.stop(StopReason::Interrupted);
        assert!(interrupted.calls_ended());
    }
}
