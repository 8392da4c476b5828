//! What the store must hold after the events a run applied, kept compactly: a state
//! hash and an item count per order, a version per key.
//!
//! Writes that failed matter. One that failed definitively (refused, rolled back) was
//! not applied: its order is then tracked whole, so that the states the stream put on
//! later writes (which assumed it) do not mislead. One whose outcome is unknown (a
//! timeout, a lost connection, a cancelled call) may or may not have been applied: its
//! target is `uncertain` until a later write settles it, and is not judged.

use std::collections::{HashMap, HashSet};

use super::Touched;
use crate::db::ErrorKind;
use crate::workload::{KeyId, Operation, OrderBook, OrderEvent, OrderId, StateHash, Target, state};

/// What the stream says the store must hold at its end.
#[derive(Default)]
pub struct Expected {
    /// Orders the stream leaves, tracked by hash: state and item count.
    pub orders: HashMap<OrderId, (StateHash, u32)>,
    /// Orders tracked whole, because a write to them failed definitively.
    pub whole: OrderBook,
    whole_ids: HashSet<OrderId>,
    pub uncertain_orders: HashSet<OrderId>,
    /// Version of every key by index (0: absent).
    pub keys: Vec<u32>,
    pub uncertain_keys: HashSet<KeyId>,
    /// Orders an update raced on (`conflicts`): a final state other than the stream's
    /// last is a lost update, counted apart from differences.
    pub raced_orders: HashSet<OrderId>,
    /// Orders written after their lane's last logged event (a killed run): each state
    /// they passed through from there (`None`: absent), any of which they may hold.
    pub past_log_orders: HashMap<OrderId, Vec<Option<StateHash>>>,
    /// Keys written after their lane's last logged event: each version they passed
    /// through from there (0: absent).
    pub past_log_keys: HashMap<KeyId, Vec<u32>>,
}

impl Expected {
    /// A model that will track these orders whole (their definite failures).
    pub fn new(whole_ids: HashSet<OrderId>) -> Expected {
        Expected {
            whole_ids,
            ..Default::default()
        }
    }

    /// Takes in one applied event; `failure` is how it failed, if it did.
    pub fn apply(&mut self, event: &OrderEvent, failure: Option<ErrorKind>) {
        let op = &event.op;
        if !op.event_type().is_write() {
            return;
        }
        let unknown = failure.is_some_and(ErrorKind::outcome_unknown);
        let definite = failure.is_some() && !unknown;
        match op.target() {
            Target::Order(id) => {
                if self.whole_ids.contains(&id) {
                    if !definite {
                        self.whole.apply(op);
                    }
                } else if !definite {
                    self.apply_hashed(op, id);
                }
                match (op, failure) {
                    (_, Some(kind)) if kind.outcome_unknown() => {
                        self.uncertain_orders.insert(id);
                    }
                    (Operation::DeleteOrder { .. }, None) => {
                        self.uncertain_orders.remove(&id);
                    }
                    _ => {}
                }
                if definite && !self.whole_ids.contains(&id) {
                    // Failed, but not named in advance: nothing better than uncertain.
                    self.uncertain_orders.insert(id);
                }
            }
            Target::Key(key) => {
                if !definite {
                    self.set_version(op, key);
                }
                if unknown {
                    self.uncertain_keys.insert(key);
                } else if failure.is_none() {
                    self.uncertain_keys.remove(&key);
                }
            }
        }
    }

    /// Notes an update that raced its order's own lane.
    pub fn raced(&mut self, event: &OrderEvent) {
        if let Target::Order(id) = event.op.target() {
            self.raced_orders.insert(id);
        }
    }

    /// An event after its lane's last logged one (a recovered run): it may or may not
    /// have reached the store, and a lane applies its events in order, so its target
    /// holds one of the states it passed through from there. An order already tracked
    /// whole, or uncertain, stays uncertain.
    pub fn maybe_applied(&mut self, event: &OrderEvent) {
        let op = &event.op;
        if !op.event_type().is_write() {
            return;
        }
        match op.target() {
            Target::Order(id) => {
                if self.whole_ids.contains(&id) || self.uncertain_orders.contains(&id) {
                    self.uncertain_orders.insert(id);
                    return;
                }
                let before = self.orders.get(&id).map(|entry| entry.0);
                self.apply_hashed(op, id);
                let after = self.orders.get(&id).map(|entry| entry.0);
                self.past_log_orders
                    .entry(id)
                    .or_insert_with(|| vec![before])
                    .push(after);
            }
            Target::Key(key) => {
                if self.uncertain_keys.contains(&key) {
                    return;
                }
                let before = self.key_version(key);
                self.set_version(op, key);
                let after = self.key_version(key);
                self.past_log_keys
                    .entry(key)
                    .or_insert_with(|| vec![before])
                    .push(after);
            }
        }
    }

    /// Whether an order is judged by the states it passed through after its lane's
    /// last logged event.
    pub fn past_log(&self, id: OrderId) -> bool {
        self.past_log_orders.contains_key(&id)
    }

    /// Whether an order is judged apart from the plain comparison: its outcome is
    /// unknown, an update raced on it, or it was written past its lane's log.
    pub fn judged_apart(&self, id: OrderId) -> bool {
        self.uncertain_orders.contains(&id) || self.raced_orders.contains(&id) || self.past_log(id)
    }

    fn apply_hashed(&mut self, op: &Operation, id: OrderId) {
        match op {
            Operation::CreateOrder { order } => {
                self.orders
                    .insert(id, (state::of_order(order), order.items.len() as u32));
            }
            Operation::UpdateOrder { state, .. }
            | Operation::UpdateItems { state, .. }
            | Operation::UpdateStatus { state, .. } => {
                if let (Some(state), Some(entry)) = (state, self.orders.get_mut(&id)) {
                    entry.0 = *state;
                }
            }
            Operation::DeleteOrder { .. } => {
                self.orders.remove(&id);
            }
            _ => {}
        }
    }

    fn set_version(&mut self, op: &Operation, key: KeyId) {
        let version = match op {
            Operation::Write { .. } => 1,
            Operation::Rewrite { version, .. } => *version,
            Operation::Delete { .. } => 0,
            _ => return,
        };
        let index = key as usize;
        if index >= self.keys.len() {
            self.keys.resize(index + 1, 0);
        }
        self.keys[index] = version;
    }

    /// The state hash and item count an order must have, if it must exist.
    pub fn order(&self, id: OrderId) -> Option<(StateHash, u32)> {
        if self.whole_ids.contains(&id) {
            return self
                .whole
                .get(id)
                .map(|o| (state::of_order(o), o.items.len() as u32));
        }
        self.orders.get(&id).copied()
    }

    /// Every order that must exist.
    pub fn order_ids(&self) -> Vec<OrderId> {
        let mut ids: Vec<OrderId> = self.orders.keys().copied().collect();
        ids.extend(
            self.whole_ids
                .iter()
                .filter(|id| self.whole.get(**id).is_some()),
        );
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Keeps only what `touched` names: the rest is taken as an earlier verdict saw it,
    /// and neither counted nor judged.
    pub fn narrow_to(&mut self, touched: &Touched) {
        let orders = &touched.orders;
        self.orders.retain(|id, _| orders.contains(id));
        self.whole_ids.retain(|id| orders.contains(id));
        self.uncertain_orders.retain(|id| orders.contains(id));
        self.raced_orders.retain(|id| orders.contains(id));
        self.past_log_orders.retain(|id, _| orders.contains(id));
        let keys = &touched.keys;
        let mut narrowed = vec![0; self.keys.len()];
        for &key in keys {
            if let Some(version) = self.keys.get(key as usize) {
                narrowed[key as usize] = *version;
            }
        }
        self.keys = narrowed;
        self.uncertain_keys.retain(|key| keys.contains(key));
        self.past_log_keys.retain(|key, _| keys.contains(key));
    }

    /// The version a key must hold (0: none).
    pub fn key_version(&self, key: KeyId) -> u32 {
        self.keys.get(key as usize).copied().unwrap_or(0)
    }
}
