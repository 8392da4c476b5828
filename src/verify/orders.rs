//! Orders and their line items against what the stream leaves: compared by state hash,
//! judged apart where a race, an unknown outcome or a kill left them open, and the ones
//! that differ described field by field, with both values.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{Expected, VerifyReport};
use crate::db::{OrderRow, Snapshot};
use crate::workload::{LineItem, Order, OrderId, Payload, state};

/// The orders a snapshot holds, whole, by id.
fn orders_of(snapshot: &Snapshot) -> BTreeMap<OrderId, Order> {
    let mut orders: BTreeMap<OrderId, Order> = snapshot
        .orders
        .iter()
        .map(|row| (row.order_id, crate::db::order_of(row.clone(), Vec::new())))
        .collect();
    for (order_id, item) in &snapshot.items {
        if let Some(order) = orders.get_mut(order_id) {
            order.items.push(item.clone());
        }
    }
    for order in orders.values_mut() {
        order.items.sort_by_key(|i| i.line_item_id);
    }
    orders
}

/// Compares the orders: counts, and the ids that differ (for [`describe`]).
pub fn compare_orders(
    expected: &Expected,
    snapshot: &Snapshot,
    report: &mut VerifyReport,
) -> BTreeSet<OrderId> {
    let found = orders_of(snapshot);
    report.orders_found = snapshot.orders.len() as u64;
    report.items_found = snapshot.items.len() as u64;
    judge_raced(expected, &found, report);
    let (expected_set, differing) = judge_expected(expected, &found, report);
    judge_extra(expected, &expected_set, &found, snapshot, report);
    report.uncertain_orders = expected
        .uncertain_orders
        .iter()
        .filter(|id| expected_set.contains(id) || found.contains_key(id))
        .count() as u64;
    judge_past_log(expected, &found, report);
    differing
}

/// A raced order is judged as a whole: the stream's last state or a lost update.
fn judge_raced(expected: &Expected, found: &BTreeMap<OrderId, Order>, report: &mut VerifyReport) {
    report.raced_orders = expected.raced_orders.len() as u64;
    for id in &expected.raced_orders {
        if expected.uncertain_orders.contains(id) || expected.past_log(*id) {
            continue;
        }
        let want = expected.order(*id).map(|(hash, _)| hash);
        let got = found.get(id).map(state::of_order);
        match (want, got) {
            (None, Some(_)) => report.resurrected_orders += 1,
            (want, got) if want != got => report.lost_updates += 1,
            _ => {}
        }
    }
}

/// Every order the stream leaves: counted, and missing or differing where it is
/// judged plainly. Returns the expected ids and those that differ.
fn judge_expected(
    expected: &Expected,
    found: &BTreeMap<OrderId, Order>,
    report: &mut VerifyReport,
) -> (BTreeSet<OrderId>, BTreeSet<OrderId>) {
    let expected_ids = expected.order_ids();
    let mut differing = BTreeSet::new();
    for id in &expected_ids {
        let (hash, items) = expected.order(*id).expect("listed");
        report.orders_expected += 1;
        report.items_expected += u64::from(items);
        if expected.judged_apart(*id) {
            continue;
        }
        match found.get(id) {
            None => {
                report.missing_orders += 1;
                report.missing_items += u64::from(items);
                report.note(format!("order {id}: missing"));
            }
            Some(order) if state::of_order(order) != hash => {
                differing.insert(*id);
            }
            Some(_) => {}
        }
    }
    (expected_ids.into_iter().collect(), differing)
}

/// Orders the stream does not leave, and line items whose order is not there at all.
fn judge_extra(
    expected: &Expected,
    expected_set: &BTreeSet<OrderId>,
    found: &BTreeMap<OrderId, Order>,
    snapshot: &Snapshot,
    report: &mut VerifyReport,
) {
    for (id, order) in found {
        if !expected.judged_apart(*id) && !expected_set.contains(id) {
            report.extra_orders += 1;
            report.extra_items += order.items.len() as u64;
            report.note(format!(
                "order {id}: present but the stream deleted or never created it"
            ));
        }
    }
    for (order_id, item) in &snapshot.items {
        if !found.contains_key(order_id) && !expected.judged_apart(*order_id) {
            report.extra_items += 1;
            report.note(format!(
                "line item {} of order {order_id}: present but its order is not",
                item.line_item_id
            ));
        }
    }
}

/// Orders written after their lane's last logged event: missing where every state
/// from there has them, extra where none does; content that matches none of those
/// states is uncertain (the write in flight when the client was killed may be half
/// applied on a store without transactions).
fn judge_past_log(
    expected: &Expected,
    found: &BTreeMap<OrderId, Order>,
    report: &mut VerifyReport,
) {
    for (id, states) in &expected.past_log_orders {
        if expected.uncertain_orders.contains(id) || expected.raced_orders.contains(id) {
            continue;
        }
        report.past_log_orders += 1;
        match found.get(id) {
            None if states.contains(&None) => {}
            None => {
                report.missing_orders += 1;
                report.note(format!(
                    "order {id}: missing (it existed at its lane's last logged operation and \
                     nothing after deletes it)"
                ));
            }
            Some(_) if states.iter().all(Option::is_none) => {
                report.extra_orders += 1;
                report.note(format!(
                    "order {id}: present but the stream deleted or never created it"
                ));
            }
            Some(order) if states.contains(&Some(state::of_order(order))) => {}
            Some(_) => report.uncertain_orders += 1,
        }
    }
}

/// Counts and describes the differences of orders that differ, from their whole
/// expected state (a narrow second replay): each with its field and both values. An
/// order whose content is what the events write, though its hash is not the one the
/// events give, is the stream's inconsistency and not a difference.
pub fn describe(
    expected: &BTreeMap<OrderId, Order>,
    snapshot: &Snapshot,
    report: &mut VerifyReport,
) {
    let found = orders_of(snapshot);
    for (id, want) in expected {
        let Some(got) = found.get(id) else {
            continue;
        };
        let mut notes: Vec<String> = Vec::new();
        let mut counts = (0u64, 0u64, 0u64); // (missing, differing, extra) items
        let fields = row_differences(want, got);
        if !fields.is_empty() {
            notes.push(format!("order {id}: {}", fields.join(", ")));
        }
        let got_items: HashMap<u64, &LineItem> =
            got.items.iter().map(|i| (i.line_item_id, i)).collect();
        for item in &want.items {
            match got_items.get(&item.line_item_id) {
                None => {
                    counts.0 += 1;
                    notes.push(format!(
                        "line item {} of order {id}: missing",
                        item.line_item_id
                    ));
                }
                Some(found) if *found != item => {
                    counts.1 += 1;
                    notes.push(format!(
                        "line item {} of order {id}: {}",
                        item.line_item_id,
                        item_differences(item, found).join(", ")
                    ));
                }
                Some(_) => {}
            }
        }
        for item in &got.items {
            if !want
                .items
                .iter()
                .any(|i| i.line_item_id == item.line_item_id)
            {
                counts.2 += 1;
                notes.push(format!(
                    "line item {} of order {id}: present but not in the stream's final state",
                    item.line_item_id
                ));
            }
        }
        if notes.is_empty() {
            report.inconsistent_states += 1;
            continue;
        }
        report.differing_orders += 1;
        report.missing_items += counts.0;
        report.differing_items += counts.1;
        report.extra_items += counts.2;
        for note in notes {
            report.note(note);
        }
    }
}

/// The order's fields that differ, each with what was found and what was expected.
fn row_differences(want: &Order, got: &Order) -> Vec<String> {
    changed(&[
        (
            "status",
            got.status.as_str().into(),
            want.status.as_str().into(),
        ),
        (
            "subtotal_cents",
            got.subtotal_cents.to_string(),
            want.subtotal_cents.to_string(),
        ),
        (
            "created_at_ms",
            got.created_at_ms.to_string(),
            want.created_at_ms.to_string(),
        ),
        ("customer", got.customer.clone(), want.customer.clone()),
        ("address", got.address.clone(), want.address.clone()),
        (
            "client_id",
            got.client_id.to_string(),
            want.client_id.to_string(),
        ),
        (
            "payload",
            payload_words(got.payload),
            payload_words(want.payload),
        ),
    ])
}

/// A payload as a difference names it: its length, and whether it is the order's text.
fn payload_words(payload: Payload) -> String {
    if payload.garbled {
        format!("{} bytes, not the order's own text", payload.bytes)
    } else {
        format!("{} bytes", payload.bytes)
    }
}

/// A line item's fields that differ, each with what was found and what was expected.
fn item_differences(want: &LineItem, got: &LineItem) -> Vec<String> {
    changed(&[
        ("product", got.product.to_string(), want.product.to_string()),
        ("colour", got.colour.to_string(), want.colour.to_string()),
        ("size", got.size.to_string(), want.size.to_string()),
        (
            "quantity",
            got.quantity.to_string(),
            want.quantity.to_string(),
        ),
        (
            "unit_price_cents",
            got.unit_price_cents.to_string(),
            want.unit_price_cents.to_string(),
        ),
    ])
}

/// `name "found" (expected "wanted")` for each (name, found, wanted) that differs.
fn changed(fields: &[(&str, String, String)]) -> Vec<String> {
    fields
        .iter()
        .filter(|(_, got, want)| got != want)
        .map(|(name, got, want)| format!("{name} {got:?} (expected {want:?})"))
        .collect()
}

/// An order row as an order without items (for tests and describing).
pub fn row_of(order: &Order) -> OrderRow {
    OrderRow {
        order_id: order.order_id,
        client_id: order.client_id,
        customer: order.customer.clone(),
        address: order.address.clone(),
        created_at_ms: order.created_at_ms,
        status: order.status,
        subtotal_cents: order.subtotal_cents,
        payload: order.payload,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Generator, OrderBook, preset};

    fn run_stream() -> (Expected, Vec<Order>) {
        let mut spec = preset("hatshop-random").unwrap();
        spec.events = 2_000;
        let mut expected = Expected::new(Default::default());
        let mut book = OrderBook::new();
        for event in Generator::new(&spec) {
            expected.apply(&event, None);
            book.apply(&event.op);
        }
        (expected, book.into_sorted())
    }

    fn snapshot_of(orders: &[Order]) -> Snapshot {
        Snapshot {
            orders: orders.iter().map(row_of).collect(),
            items: orders
                .iter()
                .flat_map(|o| o.items.iter().map(|i| (o.order_id, i.clone())))
                .collect(),
        }
    }

    #[test]
    fn an_exact_copy_has_no_differences() {
        let (expected, orders) = run_stream();
        let mut report = VerifyReport::default();
        let differing = compare_orders(&expected, &snapshot_of(&orders), &mut report);
        assert!(differing.is_empty());
        assert!(report.is_exact(), "{}", report.render());
        assert_eq!(report.orders_found, orders.len() as u64);
        assert_eq!(report.orders_expected, orders.len() as u64);
    }

    #[test]
    fn each_kind_of_difference_is_counted() {
        let (expected, orders) = run_stream();
        let mut snapshot = snapshot_of(&orders);
        snapshot.orders.remove(0); // a missing order (its items become orphans)
        let changed = snapshot.orders[0].order_id;
        snapshot.orders[0].status = crate::workload::OrderStatus::Cancelled;
        let mut report = VerifyReport::default();
        let differing = compare_orders(&expected, &snapshot, &mut report);
        assert_eq!(report.missing_orders, 1);
        assert!(report.extra_items > 0, "orphans of the missing order");
        let whole: BTreeMap<OrderId, Order> = orders
            .iter()
            .filter(|o| differing.contains(&o.order_id))
            .map(|o| (o.order_id, o.clone()))
            .collect();
        describe(&whole, &snapshot, &mut report);
        if orders
            .iter()
            .find(|o| o.order_id == changed)
            .unwrap()
            .status
            != crate::workload::OrderStatus::Cancelled
        {
            assert_eq!(report.differing_orders, 1);
            assert!(
                report.render().contains("status \"cancelled\" (expected"),
                "{}",
                report.render()
            );
        }
        assert!(!report.is_exact());
    }

    /// What a killed run may have written past its log is judged against every state
    /// it passed through: missing and extra only where no such state allows it.
    #[test]
    fn orders_written_past_the_log_are_judged_against_every_state_they_passed() {
        let (_, orders) = run_stream();
        let hash = |i: usize| Some(state::of_order(&orders[i]));
        let mut expected = Expected::default();
        let cases = [
            (0, vec![hash(0)], true),        // held as written: right
            (1, vec![hash(1)], false),       // gone, though nothing deletes it: missing
            (2, vec![None], true),           // there, though never written: extra
            (3, vec![hash(3), None], false), // gone, as its delete may have run: right
            (4, vec![hash(5)], true),        // content of no state it passed: uncertain
        ];
        let mut found = BTreeMap::new();
        for (i, states, present) in cases {
            expected.past_log_orders.insert(orders[i].order_id, states);
            if present {
                found.insert(orders[i].order_id, orders[i].clone());
            }
        }
        let mut report = VerifyReport::default();
        judge_past_log(&expected, &found, &mut report);
        assert_eq!(report.past_log_orders, 5);
        assert_eq!(report.missing_orders, 1, "{}", report.render());
        assert_eq!(report.extra_orders, 1, "{}", report.render());
        assert_eq!(report.uncertain_orders, 1, "{}", report.render());
    }
}
