//! When the phases of a run began (warm-up, measuring), and the CPU counters at the
//! start of measuring: written once by the source, read by the lanes and the fault
//! player. Just before measuring begins, what the load and warm-up came to is handed
//! to whoever must keep it on disk first.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use super::FailedWrite;

/// Share of the load and warm-up operations that may fail before a run stops short of
/// its measured phase: past it, the database does not hold what the measured phase
/// and `verify` assume.
pub const UNMEASURED_FAILURES_TOLERATED: f64 = 0.01;

/// What the load and the warm-up came to, once every lane has applied them.
#[derive(Debug, Clone, Default)]
pub struct Unmeasured {
    /// The last load or warm-up event handed out (`None`: the stream has none).
    pub last_seq: Option<u64>,
    /// Operations applied, and how many of them failed.
    pub applied: u64,
    pub failed: u64,
    /// The first failure, as the store said it.
    pub first_error: Option<String>,
    /// The writes among them that failed (what `verify` must know).
    pub failed_writes: Vec<FailedWrite>,
    /// The initial load, where the stream has one: its operations and how long every
    /// lane took to apply them.
    pub load: Option<LoadTook>,
}

/// How long the initial load took, from its first event handed out until every lane
/// had applied the last.
#[derive(Debug, Clone, Copy)]
pub struct LoadTook {
    pub operations: u64,
    pub took: std::time::Duration,
}

impl Unmeasured {
    /// Why the measured phase must not begin after such a load, if it must not.
    pub fn too_many_failures(&self) -> Option<String> {
        let tolerated = (self.applied as f64 * UNMEASURED_FAILURES_TOLERATED).floor() as u64;
        (self.failed > tolerated).then(|| {
            format!(
                "{} of the {} load and warm-up operations failed (more than {} %; the first: {}): \
                 the database does not hold what the measured phase needs, so nothing was measured",
                self.failed,
                self.applied,
                UNMEASURED_FAILURES_TOLERATED * 100.0,
                self.first_error.as_deref().unwrap_or("no message")
            )
        })
    }
}

/// Called once on the source's thread just before the first measured event is handed
/// out, with what the load and warm-up came to: what must be on disk before anything
/// is measured. An error stops the run there.
pub type BeforeMeasuring = Box<dyn Fn(&Unmeasured) -> Result<(), String> + Send + Sync>;

/// Called once on the source's thread when every lane has applied the initial load
/// (or at once, where the stream has none), before any later event is handed out:
/// what must follow the load before anything reads it. An error stops the run there.
pub type AfterLoad = Box<dyn Fn() -> Result<(), String> + Send + Sync>;

/// When phases began, shared by the lanes and the source.
#[derive(Default)]
pub struct PhaseClock {
    /// When the first load event was handed out.
    pub load: OnceLock<Instant>,
    /// When every lane had applied the load, and the operations applied by then.
    pub loaded: OnceLock<(Instant, u64)>,
    /// Shared with a warm-up given as a time, which ends that long after it.
    pub warmup: Arc<OnceLock<Instant>>,
    /// What the warm-up's operations took, for a warm-up that waits for it to settle.
    pub warmup_latency: Arc<crate::stats::settling::WarmupLatency>,
    pub measure: OnceLock<Instant>,
    /// The client's (and watched servers') CPU counters when measuring began.
    pub measure_cpu: OnceLock<crate::client_cost::CpuSnapshot>,
    /// The host's CPU counters when measuring began (none where /proc cannot say).
    pub measure_host: OnceLock<Option<crate::host_load::HostTicks>>,
    /// Server processes whose CPU is counted over the measured phase (those hatshop
    /// started for this run's database).
    pub server_pids: Vec<u32>,
    pub before_measuring: Option<BeforeMeasuring>,
    pub after_load: Option<AfterLoad>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_that_mostly_failed_stops_the_run() {
        let load = |applied, failed| Unmeasured {
            applied,
            failed,
            first_error: Some("disk I/O error".into()),
            ..Unmeasured::default()
        };
        assert!(load(500, 0).too_many_failures().is_none());
        assert!(load(500, 5).too_many_failures().is_none());
        let refusal = load(500, 442).too_many_failures().unwrap();
        assert!(
            refusal.starts_with("442 of the 500 load and warm-up operations failed"),
            "{refusal}"
        );
        assert!(refusal.contains("disk I/O error"), "{refusal}");
        assert!(load(10, 1).too_many_failures().is_some());
        assert!(load(0, 0).too_many_failures().is_none());
    }
}
