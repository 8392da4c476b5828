//! Verification: replay the run's event stream into a reference `OrderBook`, read
//! the database back, and count what is missing, extra or different.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::db::{OrderRow, Snapshot};
use crate::workload::{LineItem, Order, OrderId};

/// Differences listed in full; the rest are only counted.
const LISTED: usize = 20;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct VerifyReport {
    pub orders_expected: u64,
    pub orders_found: u64,
    pub missing_orders: u64,
    pub extra_orders: u64,
    pub differing_orders: u64,
    pub items_expected: u64,
    pub items_found: u64,
    pub missing_items: u64,
    pub extra_items: u64,
    pub differing_items: u64,
    /// The first differences, in words.
    pub first_differences: Vec<String>,
}

impl VerifyReport {
    pub fn differences(&self) -> u64 {
        self.missing_orders
            + self.extra_orders
            + self.differing_orders
            + self.missing_items
            + self.extra_items
            + self.differing_items
    }

    pub fn is_exact(&self) -> bool {
        self.differences() == 0
    }

    fn note(&mut self, text: String) {
        if self.first_differences.len() < LISTED {
            self.first_differences.push(text);
        }
    }

    /// A few lines for the terminal.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "orders:     expected {}, found {}: {} missing, {} extra, {} differing",
            self.orders_expected,
            self.orders_found,
            self.missing_orders,
            self.extra_orders,
            self.differing_orders
        );
        let _ = writeln!(
            out,
            "line items: expected {}, found {}: {} missing, {} extra, {} differing",
            self.items_expected,
            self.items_found,
            self.missing_items,
            self.extra_items,
            self.differing_items
        );
        for d in &self.first_differences {
            let _ = writeln!(out, "  {d}");
        }
        if self.differences() > self.first_differences.len() as u64 {
            let _ = writeln!(
                out,
                "  … and {} more",
                self.differences() - self.first_differences.len() as u64
            );
        }
        out
    }
}

fn row_of(order: &Order) -> OrderRow {
    OrderRow {
        order_id: order.order_id,
        client_id: order.client_id,
        customer: order.customer.clone(),
        address: order.address.clone(),
        created_at_ms: order.created_at_ms,
        status: order.status,
        subtotal_cents: order.subtotal_cents,
    }
}

fn row_difference(expected: &OrderRow, found: &OrderRow) -> String {
    let mut fields = Vec::new();
    if expected.status != found.status {
        fields.push(format!(
            "status {} (expected {})",
            found.status.as_str(),
            expected.status.as_str()
        ));
    }
    if expected.subtotal_cents != found.subtotal_cents {
        fields.push(format!(
            "subtotal {} (expected {})",
            found.subtotal_cents, expected.subtotal_cents
        ));
    }
    if fields.is_empty() {
        fields.push("customer, address, client or creation time differ".into());
    }
    format!("order {}: {}", expected.order_id, fields.join(", "))
}

fn item_difference(order_id: OrderId, expected: &LineItem, found: &LineItem) -> String {
    format!(
        "line item {} of order {order_id}: {} {} ×{} (expected {} {} ×{})",
        expected.line_item_id,
        found.colour,
        found.size,
        found.quantity,
        expected.colour,
        expected.size,
        expected.quantity
    )
}

/// Compares the expected orders (sorted by id) with what the store holds.
pub fn compare(expected: &[Order], snapshot: &Snapshot) -> VerifyReport {
    let mut report = VerifyReport {
        orders_expected: expected.len() as u64,
        orders_found: snapshot.orders.len() as u64,
        items_expected: expected.iter().map(|o| o.items.len() as u64).sum(),
        items_found: snapshot.items.len() as u64,
        ..Default::default()
    };

    let found_orders: BTreeMap<OrderId, &OrderRow> =
        snapshot.orders.iter().map(|r| (r.order_id, r)).collect();
    for order in expected {
        match found_orders.get(&order.order_id) {
            None => {
                report.missing_orders += 1;
                report.note(format!("order {}: missing", order.order_id));
            }
            Some(found) => {
                let wanted = row_of(order);
                if **found != wanted {
                    report.differing_orders += 1;
                    report.note(row_difference(&wanted, found));
                }
            }
        }
    }
    let expected_ids: BTreeMap<OrderId, ()> = expected.iter().map(|o| (o.order_id, ())).collect();
    for row in &snapshot.orders {
        if !expected_ids.contains_key(&row.order_id) {
            report.extra_orders += 1;
            report.note(format!(
                "order {}: present but the stream deleted or never created it",
                row.order_id
            ));
        }
    }

    let mut found_items: BTreeMap<u64, (OrderId, &LineItem)> = snapshot
        .items
        .iter()
        .map(|(order_id, item)| (item.line_item_id, (*order_id, item)))
        .collect();
    for order in expected {
        for item in &order.items {
            match found_items.remove(&item.line_item_id) {
                None => {
                    report.missing_items += 1;
                    report.note(format!(
                        "line item {} of order {}: missing",
                        item.line_item_id, order.order_id
                    ));
                }
                Some((order_id, found)) if order_id != order.order_id || found != item => {
                    report.differing_items += 1;
                    report.note(item_difference(order.order_id, item, found));
                }
                Some(_) => {}
            }
        }
    }
    for (line_item_id, (order_id, _)) in found_items {
        report.extra_items += 1;
        report.note(format!(
            "line item {line_item_id} of order {order_id}: present but not in the stream's final state"
        ));
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Generator, OrderBook, preset};

    fn expected_and_snapshot() -> (Vec<Order>, Snapshot) {
        let mut spec = preset("hatshop-random").unwrap();
        spec.events = 2_000;
        let mut book = OrderBook::new();
        Generator::new(&spec).for_each(|e| book.apply_owned(e));
        let orders = book.into_sorted();
        let snapshot = Snapshot {
            orders: orders.iter().map(row_of).collect(),
            items: orders
                .iter()
                .flat_map(|o| o.items.iter().map(|i| (o.order_id, i.clone())))
                .collect(),
        };
        (orders, snapshot)
    }

    #[test]
    fn an_exact_copy_has_no_differences() {
        let (orders, snapshot) = expected_and_snapshot();
        let report = compare(&orders, &snapshot);
        assert!(report.is_exact(), "{}", report.render());
        assert_eq!(report.orders_found, orders.len() as u64);
    }

    #[test]
    fn each_kind_of_difference_is_counted() {
        let (orders, mut snapshot) = expected_and_snapshot();
        snapshot.orders.remove(0); // a missing order
        snapshot.orders[0].status = crate::workload::OrderStatus::Cancelled; // maybe differing
        snapshot.items[5].1.quantity += 7; // a differing item
        let extra = snapshot.items[6].1.clone();
        snapshot.items.remove(6); // a missing item
        let mut orphan = extra.clone();
        orphan.line_item_id = 9_999_999;
        snapshot.items.push((123_456, orphan)); // an extra item
        let report = compare(&orders, &snapshot);
        assert_eq!(report.missing_orders, 1);
        assert_eq!(report.missing_items, 1);
        assert_eq!(report.extra_items, 1);
        assert_eq!(report.differing_items, 1);
        assert!(report.differing_orders <= 1);
        assert!(!report.is_exact());
        assert!(report.render().contains("9999999"));
    }
}
