//! When the phases of a run began (warm-up, measuring), and the CPU counters at the
//! start of measuring: written once by the source, read by the lanes and the fault
//! player.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// When phases began, shared by the lanes and the source.
#[derive(Default)]
pub struct PhaseClock {
    /// Shared with a warm-up given as a time, which ends that long after it.
    pub warmup: Arc<OnceLock<Instant>>,
    pub measure: OnceLock<Instant>,
    /// The client's (and watched servers') CPU counters when measuring began.
    pub measure_cpu: OnceLock<crate::client_cost::CpuSnapshot>,
    /// Server processes whose CPU is counted over the measured phase (those hatshop
    /// started for this run's database).
    pub server_pids: Vec<u32>,
    /// Called once on the source's thread just before the first measured event is
    /// handed out: what must be on disk before anything is measured.
    pub before_measuring: Option<Box<dyn Fn() + Send + Sync>>,
}
