//! Verification: replay the run's event stream into a compact expected state, read the
//! database back, and count what is missing, extra, different or uncertain.
//!
//! Orders are compared by state hash; the ones that differ are then described field by
//! field from a second, narrow replay of whole orders. Key-value records are read back
//! a page at a time, so values never pile up in memory.

mod expected;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;

use serde::{Deserialize, Serialize};

pub use expected::Expected;

use crate::db::{OrderRow, Snapshot};
use crate::workload::kv::{fill_value, header_version};
use crate::workload::{KeyText, LineItem, Order, OrderId, state};

/// Differences listed in full; the rest are only counted.
const LISTED: usize = 20;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What `verify` found: counts of what was expected, found, missing, extra or different.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct VerifyReport {
    /// The database read back (its password masked).
    #[serde(default)]
    pub database: String,
    /// When it was read.
    #[serde(default)]
    pub at: String,
    /// Why verify could not finish: the counts below mean nothing then, and the run is
    /// not verified (a verdict that replaces the previous one, so no page repeats it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub orders_expected: u64,
    pub orders_found: u64,
    pub missing_orders: u64,
    pub extra_orders: u64,
    pub differing_orders: u64,
    /// Orders a write with an unknown outcome touched: either outcome is fine.
    #[serde(default)]
    pub uncertain_orders: u64,
    /// Orders written after their lane's last logged operation (a killed run): there
    /// or not as some state from there says; content that matches none of those states
    /// (a write cut by the kill) counts as uncertain.
    #[serde(default)]
    pub past_log_orders: u64,
    /// Orders raced on (`conflicts`) whose final state is not the stream's last:
    /// an update was lost (last-write-wins, or applied out of stream order). Counted
    /// apart: racing clients make them, not the store's failure to keep data.
    #[serde(default)]
    pub lost_updates: u64,
    /// Orders raced on (`conflicts`), lost or not.
    #[serde(default)]
    pub raced_orders: u64,
    /// Raced orders the stream deleted that are there: a racing update applied after
    /// the delete wrote the order back (a store that writes an update as an upsert,
    /// like Cassandra). Counted apart, like lost updates.
    #[serde(default)]
    pub resurrected_orders: u64,
    pub items_expected: u64,
    pub items_found: u64,
    pub missing_items: u64,
    pub extra_items: u64,
    pub differing_items: u64,
    #[serde(default)]
    pub keys_expected: u64,
    #[serde(default)]
    pub keys_found: u64,
    #[serde(default)]
    pub missing_keys: u64,
    #[serde(default)]
    pub extra_keys: u64,
    /// Keys that hold an older version than the stream wrote (lost updates).
    #[serde(default)]
    pub stale_keys: u64,
    #[serde(default)]
    pub differing_keys: u64,
    #[serde(default)]
    pub uncertain_keys: u64,
    /// Keys written after their lane's last logged operation: any version from there
    /// is accepted.
    #[serde(default)]
    pub past_log_keys: u64,
    /// Orders that hold exactly what the stream's events write, but whose state after
    /// them is not the one the events (an edited events file) give: not the database's
    /// difference, and not counted as one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub inconsistent_states: u64,
    /// The first differences, in words.
    pub first_differences: Vec<String>,
}

impl VerifyReport {
    /// Orders, items and records that differ from what the stream says (uncertain ones
    /// are counted apart).
    pub fn differences(&self) -> u64 {
        self.missing_orders
            + self.extra_orders
            + self.differing_orders
            + self.missing_items
            + self.extra_items
            + self.differing_items
            + self.missing_keys
            + self.extra_keys
            + self.stale_keys
            + self.differing_keys
    }

    /// Whether the store holds exactly what the stream says.
    pub fn is_exact(&self) -> bool {
        self.error.is_none() && self.differences() == 0
    }

    /// The verdict of a verify that could not finish, reading `database`.
    pub fn failed(database: String, at: String, error: String) -> VerifyReport {
        VerifyReport {
            database,
            at,
            error: Some(error),
            ..VerifyReport::default()
        }
    }

    fn note(&mut self, text: String) {
        if self.first_differences.len() < LISTED {
            self.first_differences.push(text);
        }
    }

    /// A few lines for the terminal.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let orders = self.orders_expected + self.orders_found > 0;
        let keys = self.keys_expected + self.keys_found > 0;
        if orders || !keys {
            let _ = writeln!(
                out,
                "orders:     expected {}, found {}: {} missing, {} extra, {} differing{}{}",
                self.orders_expected,
                self.orders_found,
                self.missing_orders,
                self.extra_orders,
                self.differing_orders,
                uncertain(self.uncertain_orders),
                past_log(self.past_log_orders)
            );
            if self.raced_orders > 0 {
                let _ = writeln!(
                    out,
                    "lost updates: {} of the {} orders raced on (--conflicts) do not hold the stream's last state{}",
                    self.lost_updates,
                    self.raced_orders,
                    if self.resurrected_orders > 0 {
                        format!(
                            "; {} deleted orders were written back by a racing update",
                            self.resurrected_orders
                        )
                    } else {
                        String::new()
                    }
                );
            }
            let _ = writeln!(
                out,
                "line items: expected {}, found {}: {} missing, {} extra, {} differing",
                self.items_expected,
                self.items_found,
                self.missing_items,
                self.extra_items,
                self.differing_items
            );
        }
        if keys {
            let _ = writeln!(
                out,
                "records:    expected {}, found {}: {} missing, {} extra, {} stale, {} differing{}{}",
                self.keys_expected,
                self.keys_found,
                self.missing_keys,
                self.extra_keys,
                self.stale_keys,
                self.differing_keys,
                uncertain(self.uncertain_keys),
                past_log(self.past_log_keys)
            );
        }
        for d in &self.first_differences {
            let _ = writeln!(out, "  {d}");
        }
        if self.inconsistent_states > 0 {
            let _ = writeln!(
                out,
                "note: {} orders hold what the stream's events write, but not the state hash \
                 its events give after them (an edited events file?); not counted as differences",
                self.inconsistent_states
            );
        }
        let listed = self.first_differences.len() as u64;
        if self.differences() > listed {
            let _ = writeln!(out, "  … and {} more", self.differences() - listed);
        }
        out
    }
}

/// The note on targets written after their lane's last logged operation (a killed
/// run), judged against every state they passed through from there.
fn past_log(n: u64) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(
            "; {n} written after their lane's last logged operation, each judged against every state from there"
        )
    }
}

fn uncertain(n: u64) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(", {n} uncertain (a write with an unknown outcome; not judged)")
    }
}

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
    ])
}

/// A line item's fields that differ, each with what was found and what was expected.
fn item_differences(want: &LineItem, got: &LineItem) -> Vec<String> {
    changed(&[
        ("product", got.product.clone(), want.product.clone()),
        ("colour", got.colour.clone(), want.colour.clone()),
        ("size", got.size.clone(), want.size.clone()),
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

/// Checks records read back, a page at a time; `seen` marks keys met so far (a scan
/// may return a key twice).
pub struct KeyCheck<'a> {
    expected: &'a Expected,
    seen: Vec<u64>,
    scratch: Vec<u8>,
}

impl<'a> KeyCheck<'a> {
    /// A check of the records read back against `expected`.
    pub fn new(expected: &'a Expected) -> Self {
        KeyCheck {
            expected,
            seen: vec![0; expected.keys.len().div_ceil(64)],
            scratch: Vec::new(),
        }
    }

    fn first_sight(&mut self, key: u64) -> bool {
        let index = key as usize;
        if index / 64 >= self.seen.len() {
            self.seen.resize(index / 64 + 1, 0);
        }
        let bit = 1u64 << (index % 64);
        let new = self.seen[index / 64] & bit == 0;
        self.seen[index / 64] |= bit;
        new
    }

    /// Checks one record the store holds.
    pub fn record(&mut self, text: &str, value: &[u8], report: &mut VerifyReport) {
        let Some(key) = KeyText::parse(text).filter(|k| *k < (1 << 40)) else {
            report.keys_found += 1;
            report.extra_keys += 1;
            report.note(format!("record {text}: not a key hatshop writes"));
            return;
        };
        if !self.first_sight(key) {
            return;
        }
        report.keys_found += 1;
        if self.expected.uncertain_keys.contains(&key) {
            return;
        }
        if let Some(versions) = self.expected.past_log_keys.get(&key) {
            self.record_past_log(text, key, value, versions, report);
            return;
        }
        let want = self.expected.key_version(key);
        if want == 0 {
            report.extra_keys += 1;
            report.note(format!(
                "record {text}: present but the stream deleted or never wrote it"
            ));
            return;
        }
        match self.intact_version(key, value) {
            Some(v) if v == want => {}
            Some(v) if v < want => {
                report.stale_keys += 1;
                report.note(format!(
                    "record {text}: version {v}, the stream last wrote version {want} (a lost update)"
                ));
            }
            _ => {
                report.differing_keys += 1;
                report.note(format!(
                    "record {text}: {} bytes that are not version {want} of it",
                    value.len()
                ));
            }
        }
    }

    /// The version a record's header names, if every byte is what that version writes.
    fn intact_version(&mut self, key: u64, value: &[u8]) -> Option<u32> {
        header_version(key, value).filter(|&v| {
            fill_value(&mut self.scratch, key, v, value.len() as u32);
            self.scratch == value
        })
    }

    /// A record written after its lane's last logged event: any version it passed
    /// through from there is right.
    fn record_past_log(
        &mut self,
        text: &str,
        key: u64,
        value: &[u8],
        versions: &[u32],
        report: &mut VerifyReport,
    ) {
        match self.intact_version(key, value) {
            Some(v) if versions.contains(&v) => {}
            _ if versions.iter().all(|&v| v == 0) => {
                report.extra_keys += 1;
                report.note(format!(
                    "record {text}: present but the stream deleted or never wrote it"
                ));
            }
            _ => {
                report.differing_keys += 1;
                report.note(format!(
                    "record {text}: {} bytes that are none of the versions written after its \
                     lane's last logged operation",
                    value.len()
                ));
            }
        }
    }

    /// After the last page: keys that must exist and were not met.
    pub fn finish(mut self, report: &mut VerifyReport) {
        for key in 0..self.expected.keys.len() as u64 {
            let want = self.expected.key_version(key);
            let uncertain = self.expected.uncertain_keys.contains(&key);
            if want > 0 {
                report.keys_expected += 1;
            }
            if uncertain {
                report.uncertain_keys += 1;
                continue;
            }
            if let Some(versions) = self.expected.past_log_keys.get(&key) {
                report.past_log_keys += 1;
                if !versions.contains(&0) && self.first_sight(key) {
                    report.missing_keys += 1;
                    report.note(format!(
                        "record {:?}: missing (it existed at its lane's last logged operation \
                         and nothing after deletes it)",
                        KeyText::of(key)
                    ));
                }
                continue;
            }
            if want > 0 && self.first_sight(key) {
                report.missing_keys += 1;
                report.note(format!("record {:?}: missing", KeyText::of(key)));
            }
        }
    }
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

    #[test]
    fn records_are_judged_by_version() {
        let mut expected = Expected::new(Default::default());
        let event = |seq, op| crate::workload::OrderEvent {
            seq,
            phase: crate::workload::Phase::Load,
            op,
        };
        use crate::workload::Operation::{Rewrite, Write};
        for key in 0..4 {
            expected.apply(&event(key, Write { key, size: 64 }), None);
        }
        expected.apply(
            &event(
                9,
                Rewrite {
                    key: 1,
                    version: 2,
                    size: 64,
                },
            ),
            None,
        );
        let mut report = VerifyReport::default();
        let mut check = KeyCheck::new(&expected);
        let v = crate::workload::kv::value;
        check.record(KeyText::of(0).as_str(), &v(0, 1, 64), &mut report);
        check.record(KeyText::of(1).as_str(), &v(1, 1, 64), &mut report); // lost update
        check.record(KeyText::of(1).as_str(), &v(1, 1, 64), &mut report); // seen twice
        let mut corrupt = v(2, 1, 64);
        corrupt[40] ^= 0xFF;
        check.record(KeyText::of(2).as_str(), &corrupt, &mut report);
        check.record("somebody-else", b"x", &mut report);
        check.finish(&mut report);
        assert_eq!(report.keys_expected, 4);
        assert_eq!(report.keys_found, 4);
        assert_eq!(report.stale_keys, 1);
        assert_eq!(report.differing_keys, 1);
        assert_eq!(report.missing_keys, 1);
        assert_eq!(report.extra_keys, 1);
    }
}
