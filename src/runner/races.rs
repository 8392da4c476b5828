//! Orders that lanes race on (`conflicts`): the source notes each order it deals a
//! racing update for, the lane that applies one notes its failure, and the order's own
//! lane forgets the order when it deletes it, so the set follows live orders. Lanes
//! look here only when a read does not match what they expect.

use std::collections::HashSet;
use std::sync::Mutex;

use crate::workload::OrderId;

#[derive(Default)]
pub struct Races {
    inner: Mutex<RaceState>,
}

#[derive(Default)]
struct RaceState {
    raced: HashSet<OrderId>,
    /// Raced orders whose racing update failed: their own lane expected it to land.
    failed: HashSet<OrderId>,
}

/// What is known about an order's races.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Race {
    None,
    Raced,
    /// A racing update failed: what the store holds is unknown to the order's lane.
    Failed,
}

impl Races {
    fn state(&self) -> std::sync::MutexGuard<'_, RaceState> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The source dealt a racing update for this order.
    pub fn dealt(&self, id: OrderId) {
        self.state().raced.insert(id);
    }

    /// A racing update of this order failed.
    pub fn failed(&self, id: OrderId) {
        self.state().failed.insert(id);
    }

    /// The order's own lane deleted it: no update of it is left in the stream.
    pub fn settled(&self, id: OrderId) {
        let mut state = self.state();
        state.raced.remove(&id);
        state.failed.remove(&id);
    }

    pub fn of(&self, id: OrderId) -> Race {
        let state = self.state();
        if state.failed.contains(&id) {
            Race::Failed
        } else if state.raced.contains(&id) {
            Race::Raced
        } else {
            Race::None
        }
    }
}
