//! How evenly the lanes shared the measured work, as sysbench's "threads fairness"
//! gives it: each lane's operations and busy time, their mean and spread. A lane that
//! did far less than the others (its keys colder, its connection slower) shows here,
//! where the totals hide it.

use serde::{Deserialize, Serialize};

use super::Spread;

/// What one lane did in the measured phase.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LaneWork {
    /// Measured operations it sent (answered or failed).
    pub ops: u64,
    /// Time inside their timed windows, ns.
    pub busy_ns: u64,
}

impl LaneWork {
    /// One measured operation that took `window_ns` from send to answer.
    pub fn did(&mut self, window_ns: u64) {
        self.ops += 1;
        self.busy_ns += window_ns;
    }
}

/// run.json's `fairness`: the spread of the lanes' operations and busy seconds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Fairness {
    pub lanes: usize,
    pub ops: Spread,
    pub busy_s: Spread,
}

impl Fairness {
    /// The lanes' spread; `None` where no lane measured anything.
    pub fn of(lanes: &[LaneWork]) -> Option<Fairness> {
        if lanes.iter().all(|lane| lane.ops == 0) {
            return None;
        }
        let ops: Vec<f64> = lanes.iter().map(|lane| lane.ops as f64).collect();
        let busy: Vec<f64> = lanes.iter().map(|lane| lane.busy_ns as f64 / 1e9).collect();
        Some(Fairness {
            lanes: lanes.len(),
            ops: Spread::of(&ops),
            busy_s: Spread::of(&busy),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lanes_spread_is_their_operations_and_busy_time() {
        let lane = |ops, busy_ns| LaneWork { ops, busy_ns };
        let fairness = Fairness::of(&[
            lane(100, 2_000_000_000),
            lane(120, 2_000_000_000),
            lane(140, 2_000_000_000),
        ])
        .unwrap();
        assert_eq!(fairness.lanes, 3);
        assert_eq!(fairness.ops.mean, 120.0);
        assert_eq!(fairness.ops.stddev, 20.0);
        assert_eq!(fairness.busy_s.mean, 2.0);
        assert_eq!(Fairness::of(&[lane(0, 0), lane(0, 0)]), None);
        let mut counted = LaneWork::default();
        counted.did(5);
        counted.did(7);
        assert_eq!(counted, lane(2, 12));
    }
}
