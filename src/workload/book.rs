//! `OrderBook`: whole orders as a sequence of events leaves them.
//!
//! Runs and `verify` keep only state hashes; the book is for what needs whole orders:
//! describing a difference in words, tests, and filling in the state hashes that a
//! hand-written events file left out ([`FillStates`]).

use std::collections::HashMap;

use super::domain::{Operation, Order, OrderEvent, OrderId};
use super::jsonl::EventsFileError;
use super::state;

/// Orders as the stream leaves them, whole: what a read must return.
#[derive(Debug, Default, Clone)]
pub struct OrderBook {
    orders: HashMap<OrderId, Order>,
}

impl OrderBook {
    /// An empty book.
    pub fn new() -> Self {
        Self::default()
    }

    /// The order as the stream has it now.
    pub fn get(&self, order_id: OrderId) -> Option<&Order> {
        self.orders.get(&order_id)
    }

    /// Orders held.
    pub fn len(&self) -> usize {
        self.orders.len()
    }

    /// Whether the book holds no order.
    pub fn is_empty(&self) -> bool {
        self.orders.is_empty()
    }

    /// Applies one event as the stream defines it; events on missing orders change
    /// nothing, and key-value events are not the book's.
    pub fn apply(&mut self, op: &Operation) {
        match op {
            Operation::CreateOrder { order } => {
                self.orders.insert(order.order_id, (**order).clone());
            }
            Operation::UpdateOrder { order_id, .. } => {
                if let (Some(order), Some(update)) =
                    (self.orders.get_mut(order_id), op.order_update())
                {
                    order.apply_update(&update);
                }
            }
            Operation::UpdateItems {
                order_id,
                changes,
                subtotal_cents,
                ..
            } => {
                if let Some(order) = self.orders.get_mut(order_id) {
                    order.apply_item_changes(changes, *subtotal_cents);
                }
            }
            Operation::UpdateStatus {
                order_id, status, ..
            } => {
                if let Some(order) = self.orders.get_mut(order_id) {
                    order.status = *status;
                }
            }
            Operation::DeleteOrder { order_id } => {
                self.orders.remove(order_id);
            }
            Operation::ReadOrder { .. }
            | Operation::Write { .. }
            | Operation::Rewrite { .. }
            | Operation::Read { .. }
            | Operation::Delete { .. } => {}
        }
    }

    /// Every order, sorted by id.
    pub fn into_sorted(self) -> Vec<Order> {
        let mut orders: Vec<Order> = self.orders.into_values().collect();
        orders.sort_unstable_by_key(|o| o.order_id);
        orders
    }
}

/// Fills in the `state` of order writes that left it out (hand-written files), from a
/// book of whole orders. Used only for files that lack states somewhere, so the memory
/// of the book is spent only there.
pub struct FillStates<I> {
    inner: I,
    book: OrderBook,
}

impl<I> FillStates<I> {
    /// Fills in the states of `inner`'s events from a book of its own.
    pub fn new(inner: I) -> Self {
        FillStates {
            inner,
            book: OrderBook::new(),
        }
    }
}

impl<I: Iterator<Item = Result<OrderEvent, EventsFileError>>> Iterator for FillStates<I> {
    type Item = Result<OrderEvent, EventsFileError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut event = match self.inner.next()? {
            Ok(event) => event,
            Err(e) => return Some(Err(e)),
        };
        self.book.apply(&event.op);
        let id = event.op.target().id();
        if let Operation::UpdateOrder { state, .. }
        | Operation::UpdateItems { state, .. }
        | Operation::UpdateStatus { state, .. } = &mut event.op
            && state.is_none()
        {
            *state = self.book.get(id).map(state::of_order);
        }
        Some(Ok(event))
    }
}

/// Whether an order write leaves out its state.
pub fn lacks_state(op: &Operation) -> bool {
    matches!(
        op,
        Operation::UpdateOrder { state: None, .. }
            | Operation::UpdateItems { state: None, .. }
            | Operation::UpdateStatus { state: None, .. }
    )
}
