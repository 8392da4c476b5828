//! Orders that lanes race on (`conflicts`): the source notes each racing update it
//! deals, the lane that applies one notes when it is answered (and whether it
//! failed), and the order's own lane forgets the order when it deletes it, so what is
//! kept follows live orders. A lane reads this before it sends a read of a raced order
//! and judges the read with it.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crate::workload::OrderId;

/// The orders lanes race for (`conflicts`), and how each race came out.
#[derive(Default)]
pub struct Races {
    inner: Mutex<RaceState>,
}

#[derive(Default)]
struct RaceState {
    /// Racing updates dealt and not yet answered, per raced order.
    pending: HashMap<OrderId, u32>,
    /// Raced orders whose racing update failed: their own lane expected it to land.
    failed: HashSet<OrderId>,
}

/// What is known about an order's races when a read of it is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Race {
    None,
    /// Raced; every racing update dealt so far was answered before the read was sent
    /// (`settled`), or some were still in flight.
    Raced {
        settled: bool,
    },
    /// A racing update failed: what the store holds is unknown to the order's lane.
    Failed,
}

impl Races {
    fn state(&self) -> std::sync::MutexGuard<'_, RaceState> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The source dealt a racing update for this order.
    pub fn dealt(&self, id: OrderId) {
        *self.state().pending.entry(id).or_default() += 1;
    }

    /// A racing update of this order was answered (or failed).
    pub fn answered(&self, id: OrderId, ok: bool) {
        let mut state = self.state();
        if let Some(pending) = state.pending.get_mut(&id) {
            *pending = pending.saturating_sub(1);
        }
        if !ok {
            state.failed.insert(id);
        }
    }

    /// The order's own lane deleted it: no update of it is left in the stream.
    pub fn settled(&self, id: OrderId) {
        let mut state = self.state();
        state.pending.remove(&id);
        state.failed.remove(&id);
    }

    /// How the race for order `id` stands.
    pub fn of(&self, id: OrderId) -> Race {
        let state = self.state();
        if state.failed.contains(&id) {
            return Race::Failed;
        }
        match state.pending.get(&id) {
            None => Race::None,
            Some(pending) => Race::Raced {
                settled: *pending == 0,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_race_is_settled_once_its_updates_are_answered() {
        let races = Races::default();
        assert_eq!(races.of(7), Race::None);
        races.dealt(7);
        races.dealt(7);
        assert_eq!(races.of(7), Race::Raced { settled: false });
        races.answered(7, true);
        races.answered(7, true);
        assert_eq!(races.of(7), Race::Raced { settled: true });
        races.dealt(7);
        races.answered(7, false);
        assert_eq!(races.of(7), Race::Failed);
        races.settled(7);
        assert_eq!(races.of(7), Race::None);
    }
}
