//! Whether a run measured a server still warming up: its mean latency fell by a quarter
//! or more from the first third of its measured batches to the last, beyond the noise.
//! The run's own warning and a study's warm-server premise both ask it.

use super::intervals::{IntervalRow, MIN_BATCHES, batch_means};
use super::significance::{ALPHA, welch};
use crate::result_dir::warmth::LatencyFell;

/// A first third this many times the last one's mean is a server warming up (a quarter
/// more), where Welch's test says the two differ.
const WARMING: f64 = 1.25;

/// How mean latency fell across the run's measured batches, where it fell beyond the
/// noise; none where it did not or the run holds too few batches to tell.
pub fn latency_fell(intervals: &[IntervalRow]) -> Option<LatencyFell> {
    let all: Vec<&IntervalRow> = intervals.iter().filter(|r| r.event_type == "all").collect();
    let means = batch_means(&all);
    if means.len() < MIN_BATCHES {
        return None;
    }
    let third = means.len() / 3;
    let (first, last) = (&means[..third], &means[means.len() - third..]);
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let (before, after) = (mean(first), mean(last));
    if before < WARMING * after {
        return None;
    }
    let test = welch(first, last)?;
    (test.p_value < ALPHA).then_some(LatencyFell {
        first_third_us: before,
        last_third_us: after,
        p_value: test.p_value,
    })
}
