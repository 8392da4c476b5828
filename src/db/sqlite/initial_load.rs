//! Orders and records written inside a transaction the caller holds: one order (its
//! create) or the initial load's whole batch, as `sqlite3`'s own imports do, so the
//! load pays one commit (and one WAL sync) per batch rather than per row.

use rusqlite::{Connection, Transaction, TransactionBehavior, params};

use super::classify;
use crate::db::sql::{ITEM_COLUMNS, ORDER_COLUMNS};
use crate::db::{DbError, InitialBatch};
use crate::workload::{Order, payload};

/// Inserts an order row and its items in `tx`.
pub(super) fn insert_order(
    tx: &Transaction<'_>,
    order: &Order,
    payload: &str,
) -> Result<(), DbError> {
    let mut insert_order = tx
        .prepare_cached(&format!(
            "INSERT INTO orders ({ORDER_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
        ))
        .map_err(classify)?;
    insert_order
        .execute(params![
            order.order_id as i64,
            order.client_id as i64,
            order.customer,
            order.address,
            order.created_at_ms,
            order.status.as_str(),
            order.subtotal_cents,
            payload
        ])
        .map_err(classify)?;
    let mut insert_item = tx
        .prepare_cached(&format!(
            "INSERT INTO line_items ({ITEM_COLUMNS}, order_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
        ))
        .map_err(classify)?;
    for item in &order.items {
        insert_item
            .execute(params![
                item.line_item_id as i64,
                item.product,
                item.colour,
                item.size,
                item.quantity,
                item.unit_price_cents,
                order.order_id as i64,
            ])
            .map_err(classify)?;
    }
    Ok(())
}

/// Writes a batch of the initial load in one transaction: all of it or none.
pub(super) fn insert_batch(conn: &mut Connection, batch: &InitialBatch<'_>) -> Result<(), DbError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(classify)?;
    let mut payload = String::new();
    for order in &batch.orders {
        payload::fill(&mut payload, order.order_id, order.payload);
        insert_order(&tx, order, &payload)?;
    }
    {
        let mut insert = tx
            .prepare_cached("INSERT INTO kv (k, v) VALUES (?1, ?2)")
            .map_err(classify)?;
        for (key, value) in batch.records() {
            insert
                .execute(params![key.as_str(), value])
                .map_err(classify)?;
        }
    }
    tx.commit().map_err(classify)
}
