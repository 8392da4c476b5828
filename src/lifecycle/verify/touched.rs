//! Reads back only the orders and records a run's own events wrote ([`Touched`]), a
//! few calls in flight at once, each within the page deadline.

use std::time::Duration;

use anyhow::{Context, Result};
use futures::StreamExt;

use super::waiting;
use crate::db::{DbUrl, Snapshot, Store};
use crate::verify::{Expected, KeyCheck, Touched, VerifyReport, row_of};
use crate::workload::KeyText;

/// Reads in flight at once: enough to hide a round trip, few enough for a verify's
/// own connection or a server the run just loaded.
const IN_FLIGHT: usize = 16;

/// The touched orders as a snapshot (those the store holds, with their items).
pub async fn read_orders<D: Store>(
    store: &D,
    url: &DbUrl,
    touched: &Touched,
    page_timeout: Duration,
) -> Result<Snapshot> {
    let mut ids: Vec<_> = touched.orders.iter().copied().collect();
    ids.sort_unstable();
    let mut reads = futures::stream::iter(ids)
        .map(|id| waiting(page_timeout, "read an order back", store.read_order(id)))
        .buffer_unordered(IN_FLIGHT);
    let mut snapshot = Snapshot::default();
    while let Some(order) = reads.next().await {
        let Some(order) = order.with_context(|| format!("cannot read back {url}"))? else {
            continue;
        };
        snapshot.orders.push(row_of(&order));
        let id = order.order_id;
        snapshot
            .items
            .extend(order.items.into_iter().map(|item| (id, item)));
    }
    Ok(snapshot)
}

/// Reads the touched records back and checks them against `expected`.
pub async fn check_keys<D: Store>(
    store: &D,
    url: &DbUrl,
    expected: &Expected,
    touched: &Touched,
    page_timeout: Duration,
    report: &mut VerifyReport,
) -> Result<()> {
    let mut keys: Vec<_> = touched.keys.iter().copied().collect();
    keys.sort_unstable();
    let mut reads = futures::stream::iter(keys)
        .map(|key| async move {
            let text = KeyText::of(key);
            let value = waiting(page_timeout, "read a record back", store.kv_read(&text)).await;
            (text, value)
        })
        .buffer_unordered(IN_FLIGHT);
    let mut check = KeyCheck::new(expected);
    while let Some((text, value)) = reads.next().await {
        if let Some(value) = value.with_context(|| format!("cannot read back {url}"))? {
            check.record(text.as_str(), &value, report);
        }
    }
    check.finish(report);
    Ok(())
}
