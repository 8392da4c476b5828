//! `OrderBook`: what the orders must look like after a sequence of events.
//!
//! One model serves three readers: the generator (to target orders that exist), each
//! runner lane (to check what a read returns) and `verify` (the expected final state).

use std::collections::HashMap;

use super::domain::{Operation, Order, OrderEvent, OrderId};

#[derive(Debug, Default, Clone)]
pub struct OrderBook {
    orders: HashMap<OrderId, Order>,
}

impl OrderBook {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, order_id: OrderId) -> Option<&Order> {
        self.orders.get(&order_id)
    }

    pub fn len(&self) -> usize {
        self.orders.len()
    }

    pub fn is_empty(&self) -> bool {
        self.orders.is_empty()
    }

    /// Applies one event as the stream defines it; events on missing orders change nothing.
    pub fn apply(&mut self, op: &Operation) {
        match op {
            Operation::CreateOrder { order } => {
                self.orders.insert(order.order_id, order.clone());
            }
            _ => self.apply_to_existing(op),
        }
    }

    /// Like [`apply`](Self::apply), but takes the event so a create moves its order in.
    pub fn apply_owned(&mut self, event: OrderEvent) {
        match event.op {
            Operation::CreateOrder { order } => {
                self.orders.insert(order.order_id, order);
            }
            op => self.apply_to_existing(&op),
        }
    }

    fn apply_to_existing(&mut self, op: &Operation) {
        match op {
            Operation::CreateOrder { .. } | Operation::ReadOrder { .. } => {}
            Operation::UpdateOrder {
                order_id,
                changes,
                subtotal_cents,
            } => {
                if let Some(order) = self.orders.get_mut(order_id) {
                    for change in changes {
                        if let Some(item) = order
                            .items
                            .iter_mut()
                            .find(|i| i.line_item_id == change.line_item_id)
                        {
                            item.colour.clone_from(&change.colour);
                            item.size.clone_from(&change.size);
                            item.quantity = change.quantity;
                        }
                    }
                    order.subtotal_cents = *subtotal_cents;
                }
            }
            Operation::UpdateStatus { order_id, status } => {
                if let Some(order) = self.orders.get_mut(order_id) {
                    order.status = *status;
                }
            }
            Operation::DeleteOrder { order_id } => {
                self.orders.remove(order_id);
            }
        }
    }

    /// Every order, sorted by id (the form `verify` compares).
    pub fn into_sorted(self) -> Vec<Order> {
        let mut orders: Vec<Order> = self.orders.into_values().collect();
        orders.sort_unstable_by_key(|o| o.order_id);
        orders
    }
}
