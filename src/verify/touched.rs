//! What a run that went on wrote itself: the orders and records its own events named.
//! Where the tables it went on from were verified exact, these are all that can differ
//! from what that verdict saw, so verify reads back only them: a series on one load
//! then pays for its own writes at each run, not for the whole load again.

use std::collections::HashSet;

use super::Expected;
use crate::workload::{KeyId, OrderEvent, OrderId, Target};

/// Past this many targets the set is given up and everything is read back: the
/// client's memory follows the live keys, not a long run's events.
const MOST_TARGETS: usize = 1 << 20;

/// The orders and records a run's own writes named.
#[derive(Debug, Default)]
pub struct Touched {
    pub orders: HashSet<OrderId>,
    pub keys: HashSet<KeyId>,
    given_up: bool,
}

impl Touched {
    /// Takes in one event the run may have applied.
    pub fn note(&mut self, event: &OrderEvent) {
        if self.given_up || !event.op.event_type().is_write() {
            return;
        }
        match event.op.target() {
            Target::Order(id) => self.orders.insert(id),
            Target::Key(key) => self.keys.insert(key),
        };
        if self.orders.len() + self.keys.len() > MOST_TARGETS {
            self.given_up = true;
            self.orders = HashSet::new();
            self.keys = HashSet::new();
        }
    }

    /// Whether reading these one by one beats reading everything back a page at a
    /// time: a quarter of what the stream leaves at most.
    pub fn worth_reading(&self, expected: &Expected) -> bool {
        let live = expected.orders.len() + expected.keys.iter().filter(|&&v| v > 0).count();
        !self.given_up && self.orders.len() + self.keys.len() <= live / 4
    }
}
