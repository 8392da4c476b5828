//! Deadlines and cancellation for the lanes' calls, without a timer per call.
//!
//! A tokio timeout and a wait on the stop channel around every call registered a timer
//! and a waiter, and took them out again, on each operation. Instead each lane notes
//! when its call began in an atomic, and one watchdog task looks at every lane each
//! tick: a call past `--op-timeout` is ended as a timeout, and a stopped run ends all
//! calls in flight. A timeout then fires up to one tick late.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::task::AtomicWaker;

use super::StopSignal;

/// No call in flight.
const IDLE: u64 = 0;
/// The watchdog ended the call in flight: it outlived `--op-timeout`.
const TIMED_OUT: u64 = u64::MAX;

/// How often the watchdog looks: a tenth of the call deadline, between 1 and 5 ms.
pub fn tick(op_timeout: Duration) -> Duration {
    (op_timeout / 10).clamp(Duration::from_millis(1), Duration::from_millis(5))
}

/// One lane's call in flight, as the watchdog sees it.
pub struct CallWatch {
    /// IDLE, TIMED_OUT, or 1 + when the call began, in µs since the run's epoch.
    state: AtomicU64,
    waker: AtomicWaker,
    epoch: Instant,
    /// The lane has applied all it will: a draining run's grace waits for this, not
    /// for a moment between two calls.
    done: AtomicBool,
}

/// How a watched call ended early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    TimedOut,
    Stopped,
}

impl CallWatch {
    /// No call in flight; deadlines count from `epoch`.
    pub fn new(epoch: Instant) -> Self {
        CallWatch {
            state: AtomicU64::new(IDLE),
            waker: AtomicWaker::new(),
            epoch,
            done: AtomicBool::new(false),
        }
    }

    /// The lane has applied all it will.
    pub fn set_done(&self) {
        self.done.store(true, Ordering::Release);
    }

    /// Whether a call is in flight.
    pub fn busy(&self) -> bool {
        self.state.load(Ordering::Relaxed) != IDLE
    }

    /// Runs `call`, begun at `start`, until it answers, outlives its deadline or the
    /// run stops. The call is polled first: an answer that is there wins.
    pub async fn watch<F: Future>(
        &self,
        start: Instant,
        stop: &StopSignal,
        call: F,
    ) -> Result<F::Output, Ended> {
        let began = start.saturating_duration_since(self.epoch).as_micros() as u64 + 1;
        self.state.store(began, Ordering::Release);
        let watched = Watched {
            watch: self,
            stop,
            call: std::pin::pin!(call),
        };
        let result = watched.await;
        self.state.store(IDLE, Ordering::Release);
        result
    }

    /// Ends the call in flight if it began `limit` or longer before `now_us`.
    fn expire(&self, now_us: u64, limit_us: u64) {
        let state = self.state.load(Ordering::Acquire);
        if state == IDLE || state == TIMED_OUT || now_us.saturating_sub(state - 1) < limit_us {
            return;
        }
        // Only the call seen here: if it answered and the next began meanwhile, the
        // state changed and this does nothing.
        if self
            .state
            .compare_exchange(state, TIMED_OUT, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.waker.wake();
        }
    }
}

struct Watched<'a, F> {
    watch: &'a CallWatch,
    stop: &'a StopSignal,
    call: Pin<&'a mut F>,
}

impl<F: Future> Future for Watched<'_, F> {
    type Output = Result<F::Output, Ended>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(output) = self.call.as_mut().poll(cx) {
            return Poll::Ready(Ok(output));
        }
        // Registered before the flags are read: a stop or timeout after the reads
        // wakes this task.
        self.watch.waker.register(cx.waker());
        if self.stop.calls_ended() {
            return Poll::Ready(Err(Ended::Stopped));
        }
        if self.watch.state.load(Ordering::Acquire) == TIMED_OUT {
            return Poll::Ready(Err(Ended::TimedOut));
        }
        Poll::Pending
    }
}

/// The running watchdog; it ends when the run stops or this is dropped.
pub struct Watchdog(tokio::task::JoinHandle<()>);

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Starts the watchdog over `lanes`' calls.
/// `drain`: the lanes apply what they were dealt past the deadline (see
/// `RunPlan::drain_at_deadline`), and the grace waits for them to be done.
pub fn spawn(
    lanes: Vec<Arc<CallWatch>>,
    op_timeout: Duration,
    stop: Arc<StopSignal>,
    drain: bool,
) -> Watchdog {
    Watchdog(tokio::spawn(run(lanes, op_timeout, stop, drain)))
}

/// How long calls in flight when `--duration` runs out may still take to answer (each
/// within its own `--op-timeout` too): answered, they count as any other; the rest are
/// cut, and counted apart.
pub const DEADLINE_GRACE: Duration = Duration::from_secs(2);

/// Looks at every lane's call each tick until the run stops; past the deadline, until
/// the calls in flight have answered or their grace is over; then ends and wakes them
/// all.
async fn run(lanes: Vec<Arc<CallWatch>>, op_timeout: Duration, stop: Arc<StopSignal>, drain: bool) {
    let limit_us = op_timeout.as_micros() as u64;
    let mut ticks = tokio::time::interval(tick(op_timeout));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut grace_ends: Option<Instant> = None;
    let stopped = stop.stopped();
    let mut stopped = std::pin::pin!(stopped);
    loop {
        if stop.is_stopped() {
            let ends = *grace_ends.get_or_insert_with(|| Instant::now() + DEADLINE_GRACE);
            // A draining run's lanes go on calling past the deadline: between two of
            // their calls they are not idle.
            let idle = lanes
                .iter()
                .all(|lane| lane.done.load(Ordering::Acquire) || (!drain && !lane.busy()));
            if stop.calls_ended() || idle || Instant::now() >= ends {
                break;
            }
        }
        tokio::select! {
            _ = ticks.tick() => {}
            // Heard at once, not a tick late; once heard, only the ticks go on.
            _ = &mut stopped, if grace_ends.is_none() => {}
        }
        // One clock read a tick, not one per lane (at 128 lanes those reads were 9 %
        // of the runtime thread's time, bench/NOTES.md). Every lane of a run counts
        // from the run's epoch.
        if let Some(first) = lanes.first() {
            let now_us = first.epoch.elapsed().as_micros() as u64;
            for lane in &lanes {
                lane.expire(now_us, limit_us);
            }
        }
    }
    stop.end_calls();
    for lane in &lanes {
        lane.waker.wake();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_past_its_deadline_ends_and_an_answer_wins_over_a_late_check() {
        let stop = Arc::new(StopSignal::default());
        let lane = Arc::new(CallWatch::new(Instant::now()));
        let watchdog = tokio::spawn(run(
            vec![lane.clone()],
            Duration::from_millis(50),
            stop.clone(),
            false,
        ));
        let started = Instant::now();
        let ended = lane
            .watch(Instant::now(), &stop, std::future::pending::<()>())
            .await;
        assert_eq!(ended, Err(Ended::TimedOut));
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(50), "{waited:?}");
        assert!(waited < Duration::from_millis(500), "{waited:?}");

        // The next call starts clean.
        assert_eq!(lane.watch(Instant::now(), &stop, async { 7 }).await, Ok(7));

        // A stop ends the call in flight.
        let stopper = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            stopper.stop(super::super::StopReason::Interrupted);
        });
        let ended = lane
            .watch(Instant::now(), &stop, std::future::pending::<()>())
            .await;
        assert_eq!(ended, Err(Ended::Stopped));
        watchdog.await.unwrap();
    }

    #[test]
    fn a_call_is_ended_only_once_past_its_deadline() {
        let lane = CallWatch::new(Instant::now());
        lane.expire(100_000, 50_000);
        assert_eq!(lane.state.load(Ordering::Acquire), IDLE);
        // Began at 90 ms: at 100 ms it has 40 ms left, at 140 ms none.
        lane.state.store(1 + 90_000, Ordering::Release);
        lane.expire(100_000, 50_000);
        assert_eq!(lane.state.load(Ordering::Acquire), 1 + 90_000);
        lane.expire(140_000, 50_000);
        assert_eq!(lane.state.load(Ordering::Acquire), TIMED_OUT);
    }
}
