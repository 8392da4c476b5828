//! Whether a warm-up's latency has stopped falling (`--warmup settled`): the lanes add
//! each warm-up operation's time, the source asks as it hands events out, and the
//! warm-up ends once the mean over a window no longer falls, window after window, or
//! at a limit, saying which.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The span each mean is taken over: long enough for thousands of operations at the
/// rates hatshop runs, short enough that a JVM's first minute shows as a slope.
pub const WINDOW: Duration = Duration::from_secs(5);

/// The longest a warm-up waits for latency to settle; past it the run measures and
/// says so. Cassandra started with hatshop's defaults was warm after 51 s up
/// (bench/NOTES.md), so this leaves it twice that.
pub const SETTLE_LIMIT: Duration = Duration::from_secs(120);

/// A window's mean may be this much below the one before and still count as level:
/// the spread of one window's mean between windows of a warm server.
const LEVEL_WITHIN: f64 = 0.10;

/// Level windows in a row that make a warm-up settled.
const LEVEL_IN_A_ROW: usize = 2;

/// What a warm-up's operations took, added by every lane.
#[derive(Debug, Default)]
pub struct WarmupLatency {
    sum_ns: AtomicU64,
    count: AtomicU64,
}

impl WarmupLatency {
    /// Adds one warm-up operation that succeeded.
    pub fn add(&self, service_ns: u64) {
        self.sum_ns.fetch_add(service_ns, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    fn totals(&self) -> (u64, u64) {
        (
            self.sum_ns.load(Ordering::Relaxed),
            self.count.load(Ordering::Relaxed),
        )
    }
}

/// run.json's `warmth.settling`: how a warm-up that waited for latency to settle went.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Settled {
    /// Whether latency settled before [`SETTLE_LIMIT`].
    pub settled: bool,
    /// How long the warm-up lasted, s.
    pub after_s: f64,
    /// The mean of each window in turn, µs; `None` where no operation ended in it.
    pub window_means_us: Vec<Option<f64>>,
}

/// Judges the windows of one warm-up as they close.
#[derive(Debug)]
pub struct Settling {
    latency: std::sync::Arc<WarmupLatency>,
    state: Mutex<Windows>,
}

#[derive(Debug, Default)]
struct Windows {
    /// Totals when the last window closed.
    closed_at: (u64, u64),
    means_us: Vec<Option<f64>>,
    outcome: Option<Settled>,
}

impl Settling {
    /// Judges the windows of what the lanes add to `latency`.
    pub fn new(latency: std::sync::Arc<WarmupLatency>) -> Settling {
        Settling {
            latency,
            state: Mutex::default(),
        }
    }

    /// Whether the warm-up has ended, `elapsed` into it: its latency settled, or the
    /// limit passed. Closes every window `elapsed` has passed; once true, stays true.
    pub fn ended(&self, elapsed: Duration) -> bool {
        let mut windows = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if windows.outcome.is_some() {
            return true;
        }
        let due = (elapsed.as_secs_f64() / WINDOW.as_secs_f64()) as usize;
        if windows.means_us.len() < due {
            let now = self.latency.totals();
            let (sum, count) = (now.0 - windows.closed_at.0, now.1 - windows.closed_at.1);
            // Windows passed with no event handed out between them share its mean.
            let mean = (count > 0).then(|| sum as f64 / count as f64 / 1e3);
            windows.means_us.resize(due, mean);
            windows.closed_at = now;
        }
        let settled = level(&windows.means_us);
        if settled || elapsed >= SETTLE_LIMIT {
            windows.outcome = Some(Settled {
                settled,
                after_s: elapsed.as_secs_f64(),
                window_means_us: windows.means_us.clone(),
            });
            return true;
        }
        false
    }

    /// How the warm-up went, once it ended.
    pub fn outcome(&self) -> Option<Settled> {
        let windows = self.state.lock().unwrap_or_else(|p| p.into_inner());
        windows.outcome.clone()
    }
}

/// Whether the last windows are level: each mean no more than [`LEVEL_WITHIN`] below
/// the one before, [`LEVEL_IN_A_ROW`] times in a row, every one of them measured.
fn level(means_us: &[Option<f64>]) -> bool {
    if means_us.len() <= LEVEL_IN_A_ROW {
        return false;
    }
    let last = &means_us[means_us.len() - LEVEL_IN_A_ROW - 1..];
    last.windows(2).all(|pair| match (pair[0], pair[1]) {
        (Some(before), Some(after)) => after >= before * (1.0 - LEVEL_WITHIN),
        _ => false,
    })
}

impl Settled {
    /// One line for the terminal and the page.
    pub fn said(&self) -> String {
        let means: Vec<String> = self
            .window_means_us
            .iter()
            .map(|mean| mean.map_or("–".into(), crate::numbers::format_us))
            .collect();
        let per_window = format!("mean µs per {} s: {}", WINDOW.as_secs(), means.join(", "));
        if self.settled {
            format!(
                "warmed up until latency settled: {:.0} s ({per_window})",
                self.after_s
            )
        } else {
            format!(
                "latency had not settled after {:.0} s of warm-up ({per_window}): measuring \
                 anyway, on a server that may still be warming up",
                self.after_s
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Feeds `means` (µs), one window each, and says when the warm-up ended.
    fn ended_after(means: &[f64]) -> Option<usize> {
        let latency = Arc::new(WarmupLatency::default());
        let settling = Settling::new(latency.clone());
        for (i, mean) in means.iter().enumerate() {
            for _ in 0..100 {
                latency.add((mean * 1e3) as u64);
            }
            if settling.ended(WINDOW * (i as u32 + 1)) {
                return Some(i + 1);
            }
        }
        None
    }

    #[test]
    fn a_falling_latency_warms_on_and_a_level_one_ends_the_warm_up() {
        assert_eq!(ended_after(&[900.0, 700.0, 500.0, 400.0, 300.0]), None);
        assert_eq!(ended_after(&[900.0, 500.0, 480.0, 490.0, 470.0]), Some(4));
        assert_eq!(ended_after(&[500.0, 500.0, 500.0]), Some(3));
        // A rise is no warming: the server is as warm as it gets.
        assert_eq!(ended_after(&[500.0, 800.0, 900.0]), Some(3));
    }

    #[test]
    fn a_window_without_operations_judges_nothing_and_the_limit_ends_it() {
        let latency = Arc::new(WarmupLatency::default());
        let settling = Settling::new(latency.clone());
        assert!(!settling.ended(WINDOW * 3));
        assert!(settling.ended(SETTLE_LIMIT));
        let outcome = settling.outcome().unwrap();
        assert!(!outcome.settled);
        assert!(
            outcome
                .said()
                .starts_with("latency had not settled after 120 s")
        );
        assert!(
            settling.ended(Duration::ZERO),
            "an ended warm-up stays ended"
        );
    }
}
