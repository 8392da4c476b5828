//! Open loop's clock: one thread that wakes each lane when its next operation is due.
//!
//! Tokio's timers tick in whole milliseconds, so a lane sleeping with them would send
//! up to a millisecond late, and that lag (the client's, not the database's) would
//! land in every response time. This thread waits on a condition variable with a
//! timeout instead (a futex on Linux, precise to tens of microseconds with the timer
//! slack set to 1 µs) and hands the due instant over through a oneshot channel.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

/// The longest the thread sleeps before it looks whether it should end.
const IDLE_CHECK: Duration = Duration::from_millis(100);

struct Due {
    at: Instant,
    seq: u64,
    wake: oneshot::Sender<()>,
}

impl PartialEq for Due {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Due {}
impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Due {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

#[derive(Default)]
struct Queue {
    waiting: BinaryHeap<Reverse<Due>>,
    next_seq: u64,
    closed: bool,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    changed: Condvar,
}

/// Lanes ask it to be woken at an instant; dropping the last `Pacer` ends the thread.
#[derive(Clone)]
pub struct Pacer {
    shared: Arc<Shared>,
    _owner: Arc<Owner>,
}

/// Closes the queue when the last handle goes, so the thread ends.
struct Owner(Arc<Shared>);

impl Drop for Owner {
    fn drop(&mut self) {
        lock(&self.0.queue).closed = true;
        self.0.changed.notify_one();
    }
}

fn lock(queue: &Mutex<Queue>) -> std::sync::MutexGuard<'_, Queue> {
    queue.lock().unwrap_or_else(|p| p.into_inner())
}

impl Pacer {
    /// Starts the pacer's own thread.
    pub fn start() -> std::io::Result<Pacer> {
        let shared = Arc::new(Shared::default());
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name("pacer".into())
            .spawn(move || run(&thread_shared))?;
        Ok(Pacer {
            _owner: Arc::new(Owner(shared.clone())),
            shared,
        })
    }

    /// Resolves at `at` (at once if it has passed). Cancel-safe: dropping the future
    /// leaves only a sender nobody listens to.
    pub async fn until(&self, at: Instant) {
        if at <= Instant::now() {
            return;
        }
        let (wake, woken) = oneshot::channel();
        {
            let mut queue = lock(&self.shared.queue);
            let seq = queue.next_seq;
            queue.next_seq += 1;
            let earliest = queue.waiting.peek().is_none_or(|Reverse(d)| at < d.at);
            queue.waiting.push(Reverse(Due { at, seq, wake }));
            if earliest {
                self.shared.changed.notify_one();
            }
        }
        let _ = woken.await;
    }
}

fn run(shared: &Shared) {
    set_fine_timer_slack();
    let mut queue = lock(&shared.queue);
    loop {
        let now = Instant::now();
        while let Some(Reverse(due)) = queue.waiting.peek() {
            if due.at > now {
                break;
            }
            let Some(Reverse(due)) = queue.waiting.pop() else {
                break;
            };
            let _ = due.wake.send(());
        }
        if queue.closed {
            return;
        }
        let wait = queue
            .waiting
            .peek()
            .map_or(IDLE_CHECK, |Reverse(d)| d.at.saturating_duration_since(now));
        queue = shared
            .changed
            .wait_timeout(queue, wait.min(IDLE_CHECK))
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
}

/// Linux lets a sleeping thread wake up to 50 µs late by default; 1 µs here.
fn set_fine_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and touches only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn wakes_each_waiter_not_before_its_instant() {
        let pacer = Pacer::start().unwrap();
        let base = Instant::now() + Duration::from_millis(20);
        let mut tasks = Vec::new();
        for k in [3u64, 1, 2] {
            let pacer = pacer.clone();
            let at = base + Duration::from_millis(k * 5);
            tasks.push(tokio::spawn(async move {
                pacer.until(at).await;
                (k, Instant::now() >= at)
            }));
        }
        for task in tasks {
            let (k, on_time) = task.await.unwrap();
            assert!(on_time, "woken before its instant: {k}");
        }
        // A past instant resolves at once.
        pacer.until(Instant::now() - Duration::from_millis(1)).await;
    }
}
