//! The run plan as data: how many lanes, how they are paced, when to stop. One run
//! loop consumes it; a new mode is a new value here, not a new loop.

use std::time::Duration;

use crate::workload::splitmix64;

/// How lanes issue requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// Each lane sends its next request as soon as the previous one is answered.
    ClosedLoop,
}

#[derive(Debug, Clone)]
pub struct RunPlan {
    /// Lanes running at once; events on one target always go to the same lane.
    pub concurrency: usize,
    pub pace: Pace,
    /// Stop the measured phase (and a warm-up) after this long, even if events remain.
    pub max_duration: Option<Duration>,
    /// The longest one operation may take before it counts as a timeout.
    pub op_timeout: Duration,
    /// Calls an operation may repeat after a failure that a retry can cure (timeouts,
    /// unavailable replicas, conflicts, lost connections).
    pub retries: u32,
    /// Compare what each read returns with what the stream says (off for stores that keep nothing).
    pub check_reads: bool,
    /// Hash the stream as it is dispatched (off when the hash is known already).
    pub hash_stream: bool,
}

/// The lane of an order or key: a fixed hash of its id, so that a run with the same
/// number of lanes splits events the same way every time (and `verify` can redo the
/// split). Part of the stream's contract: pinned by a test.
pub fn lane_of(target: u64, lanes: usize) -> usize {
    let mut state = target;
    (splitmix64(&mut state) % lanes as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_are_balanced_and_stable() {
        let mut counts = [0u32; 16];
        for id in 1..=16_000u64 {
            let lane = lane_of(id, 16);
            assert_eq!(lane, lane_of(id, 16));
            counts[lane] += 1;
        }
        assert!(counts.iter().all(|&n| n > 850 && n < 1150), "{counts:?}");
    }
}
