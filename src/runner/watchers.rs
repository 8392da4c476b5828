//! What watches a run from beside its lanes: the deadline, the watchdog of the calls
//! in flight, and the reach check that gives up on a store that answers nothing.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use super::phase_clock::PhaseClock;
use super::stop::{StopReason, StopSignal};
use super::watchdog::{self, CallWatch, Watchdog};
use super::{RunContext, reach};

pub(super) struct Watchers {
    deadline: Option<JoinHandle<()>>,
    _watchdog: Watchdog,
    reach: Option<JoinHandle<Option<String>>>,
}

impl Watchers {
    /// Starts them; returns the watch of each lane's call in flight.
    pub(super) fn start(cx: &RunContext) -> (Watchers, Vec<Arc<CallWatch>>) {
        let plan = &cx.plan;
        // The deadline stops the run at its instant, calls in flight included; lanes
        // also check it before each event.
        let deadline = plan
            .max_duration
            .map(|limit| tokio::spawn(watch_deadline(cx.phases.clone(), limit, cx.stop.clone())));
        let watches: Vec<_> = (0..plan.concurrency)
            .map(|_| Arc::new(CallWatch::new(cx.clock.instant)))
            .collect();
        let _ = cx.progress.calls.set(watches.clone());
        let watchdog = watchdog::spawn(
            watches.clone(),
            plan.op_timeout,
            cx.stop.clone(),
            plan.drain_at_deadline,
        );
        let reach = plan
            .give_up_unreached
            .map(|limit| tokio::spawn(reach::watch(cx.progress.clone(), limit, cx.stop.clone())));
        let watchers = Watchers {
            deadline,
            _watchdog: watchdog,
            reach,
        };
        (watchers, watches)
    }

    /// Stops them, the run being over; the reach check's verdict, if it gave up.
    pub(super) async fn end(self) -> Option<String> {
        if let Some(deadline) = self.deadline {
            deadline.abort();
        }
        let reach = self.reach?;
        reach.abort();
        reach.await.ok().flatten()
    }
}

/// Stops the run `limit` after the measured phase began, or after the warm-up began if
/// measuring has not begun by then.
async fn watch_deadline(phases: Arc<PhaseClock>, limit: Duration, stop: Arc<StopSignal>) {
    const LOOK: Duration = Duration::from_millis(10);
    loop {
        // The measured phase's own deadline, or a warm-up over the limit.
        let began = phases.measure.get().or(phases.warmup.get()).copied();
        if began.is_some_and(|b| b.elapsed() >= limit) {
            stop.stop(StopReason::Deadline);
            return;
        }
        if stop.is_stopped() {
            return;
        }
        let wait = began.map_or(LOOK, |b| limit.saturating_sub(b.elapsed()).min(LOOK));
        tokio::time::sleep(wait).await;
    }
}
