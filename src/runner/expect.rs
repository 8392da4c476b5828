//! What a lane expects its reads to return: for each order, the hashes of its last few
//! states (the stream puts them on every write), and nothing for key-value records
//! (a read event names the version it must see). About 50 bytes per live order.

use std::collections::{HashMap, HashSet};

use crate::db::{DbError, ErrorKind};
use crate::workload::kv::{self, ReadVerdict};
use crate::workload::{KeyId, KeyText, Operation, Order, OrderId, StateHash, Target, state};

/// States kept per order: the current one and two before it (a stale read of one of
/// those is `stale`; anything else that differs is `wrong_result`).
const KEPT: usize = 3;

#[derive(Default)]
struct Recent {
    /// Newest first.
    states: [u64; KEPT],
    len: u8,
}

impl Recent {
    fn push(&mut self, state: StateHash) {
        self.states.copy_within(0..KEPT - 1, 1);
        self.states[0] = state.0;
        self.len = (self.len + 1).min(KEPT as u8);
    }

    fn current(&self) -> Option<u64> {
        (self.len > 0).then_some(self.states[0])
    }

    fn is_older(&self, hash: u64) -> bool {
        self.states[1..self.len as usize].contains(&hash)
    }
}

/// What each lane expects reads to return, from the writes it made.
#[derive(Default)]
pub struct Expectations {
    orders: HashMap<OrderId, Recent>,
    /// Targets whose last write failed: the store's state is unknown, reads not judged.
    uncertain: HashSet<Target>,
}

impl Expectations {
    /// Takes in a write the lane applied (or tried to: `ok` says whether it succeeded).
    pub fn wrote(&mut self, op: &Operation, ok: bool) {
        let target = op.target();
        if !ok {
            self.uncertain.insert(target);
            return;
        }
        match op {
            Operation::CreateOrder { order } => {
                self.uncertain.remove(&target);
                self.orders
                    .entry(order.order_id)
                    .or_default()
                    .push(state::of_order(order));
            }
            Operation::UpdateOrder {
                order_id, state, ..
            }
            | Operation::UpdateItems {
                order_id, state, ..
            }
            | Operation::UpdateStatus {
                order_id, state, ..
            } => {
                // Without a state, the order never was: the stream expects it absent.
                if let Some(state) = state {
                    self.orders.entry(*order_id).or_default().push(*state);
                }
            }
            Operation::DeleteOrder { order_id } => {
                self.uncertain.remove(&target);
                self.orders.remove(order_id);
            }
            Operation::Write { .. } | Operation::Rewrite { .. } | Operation::Delete { .. } => {
                self.uncertain.remove(&target);
            }
            Operation::ReadOrder { .. } | Operation::Read { .. } => {}
        }
    }

    /// Takes in an order the database held when the run began, in this state.
    pub fn held(&mut self, order_id: OrderId, state: StateHash) {
        self.orders.entry(order_id).or_default().push(state);
    }

    /// Judges an order read against the stream.
    pub fn judge_order(&self, order_id: OrderId, got: Option<&Order>) -> Result<(), DbError> {
        if self.uncertain.contains(&Target::Order(order_id)) {
            return Ok(());
        }
        let recent = self.orders.get(&order_id);
        let expected = recent.and_then(Recent::current);
        let got_hash = got.map(|o| state::of_order(o).0);
        if got_hash == expected {
            return Ok(());
        }
        let (kind, what) = match (expected, got) {
            (Some(_), None) => (ErrorKind::Missing, "read nothing".to_string()),
            (_, Some(g)) if recent.is_some_and(|r| r.is_older(got_hash.unwrap_or(0))) => (
                ErrorKind::Stale,
                format!("read an older state (status {})", g.status.as_str()),
            ),
            (None, Some(_)) => (
                ErrorKind::WrongResult,
                "read an order the stream does not have".to_string(),
            ),
            (Some(_), Some(g)) => (
                ErrorKind::WrongResult,
                format!(
                    "read status {}, subtotal {}, {} items: none of the last {KEPT} states the stream gave it (an older one, or a wrong one)",
                    g.status.as_str(),
                    g.subtotal_cents,
                    g.items.len()
                ),
            ),
            (None, None) => unreachable!("equal, handled above"),
        };
        Err(DbError::new(kind, format!("order {order_id}: {what}")))
    }

    /// Judges a key-value read that must return `version` of `key`.
    pub fn judge_key(
        &mut self,
        key: KeyId,
        version: u32,
        got: Option<&[u8]>,
    ) -> Result<(), DbError> {
        if self.uncertain.contains(&Target::Key(key)) {
            return Ok(());
        }
        let text = KeyText::of(key);
        match kv::judge_read(key, version, got) {
            ReadVerdict::Current => Ok(()),
            ReadVerdict::Stale { version: old } => Err(DbError::new(
                ErrorKind::Stale,
                format!("key {text:?}: read version {old}, the stream has written {version}"),
            )),
            ReadVerdict::Missing => Err(DbError::new(
                ErrorKind::Missing,
                format!("key {text:?}: read nothing, the stream has written version {version}"),
            )),
            ReadVerdict::Wrong(message) => Err(DbError::new(ErrorKind::WrongResult, message)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Generator, OrderBook, preset};

    #[test]
    fn reads_are_current_stale_missing_or_wrong() {
        let mut spec = preset("hatshop-random").unwrap();
        spec.initial_orders = 3;
        spec.events = 0;
        let mut book = OrderBook::new();
        let mut expect = Expectations::default();
        for event in Generator::new(&spec) {
            book.apply(&event.op);
            expect.wrote(&event.op, true);
        }
        let original = book.get(1).unwrap().clone();
        assert!(expect.judge_order(1, Some(&original)).is_ok());
        let mut changed = original.clone();
        changed.status = crate::workload::OrderStatus::Delivered;
        let update = Operation::UpdateStatus {
            order_id: 1,
            status: changed.status,
            state: Some(state::of_order(&changed)),
        };
        expect.wrote(&update, true);
        assert!(expect.judge_order(1, Some(&changed)).is_ok());
        let stale = expect.judge_order(1, Some(&original)).unwrap_err();
        assert_eq!(stale.kind, ErrorKind::Stale, "{}", stale.message);
        let missing = expect.judge_order(1, None).unwrap_err();
        assert_eq!(missing.kind, ErrorKind::Missing);
        let mut other = changed.clone();
        other.subtotal_cents += 1;
        assert_eq!(
            expect.judge_order(1, Some(&other)).unwrap_err().kind,
            ErrorKind::WrongResult
        );
        // A failed write makes the order's reads unjudged until it is recreated or deleted.
        expect.wrote(&update, false);
        assert!(expect.judge_order(1, Some(&other)).is_ok());
        assert!(expect.judge_order(99, None).is_ok());
    }

    #[test]
    fn key_reads_are_judged_by_the_version_in_the_event() {
        let mut expect = Expectations::default();
        let v1 = kv::value(4, 1, 100);
        assert!(expect.judge_key(4, 1, Some(&v1)).is_ok());
        assert_eq!(
            expect.judge_key(4, 2, Some(&v1)).unwrap_err().kind,
            ErrorKind::Stale
        );
        assert_eq!(
            expect.judge_key(4, 2, None).unwrap_err().kind,
            ErrorKind::Missing
        );
    }
}
