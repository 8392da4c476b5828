//! The initial load as multi-row INSERTs, as `sysbench prepare` loads: a batch's
//! orders, line items and records each one statement, all in one transaction, so
//! that a batch is all or nothing. Values go as hex literals, which mean the same
//! bytes whatever the server's `sql_mode` (`NO_BACKSLASH_ESCAPES` or not).

use std::fmt::Write as _;

use super::{MysqlStore, sbtest};
use crate::db::{DbError, InitialBatch};
use crate::workload::payload;

impl MysqlStore {
    /// Writes the batch with one INSERT per table, in one transaction, on the
    /// connection the slot holds (the driver's or the own wire's).
    pub(super) async fn insert_initial(&self, batch: &InitialBatch<'_>) -> Result<(), DbError> {
        let mut statements = Vec::with_capacity(3);
        if !batch.orders.is_empty() {
            statements.push(orders_insert(batch));
        }
        if batch.items() > 0 {
            statements.push(items_insert(batch));
        }
        if batch.records().len() > 0 {
            statements.push(self.records_insert(batch)?);
        }
        let mut held = self.conn().await?;
        held.in_one_transaction(&statements).await
    }

    /// The records' INSERT: hatshop's `k, v`, or sbtest's row.
    fn records_insert(&self, batch: &InitialBatch<'_>) -> Result<String, DbError> {
        let mut sql = String::from(if self.sbtest {
            "INSERT INTO kv (id, k, c, pad) VALUES "
        } else {
            "INSERT INTO kv (k, v) VALUES "
        });
        for (n, (key, value)) in batch.records().enumerate() {
            let value = self.value_param(value)?;
            sql.push_str(if n == 0 { "(" } else { ", (" });
            if self.sbtest {
                let id = sbtest::TABLE.id(key)?;
                let _ = write!(sql, "{id}, {}, ", sbtest::k_of(id));
                push_hex(&mut sql, value);
                let _ = write!(sql, ", '{}')", sbtest::PAD);
            } else {
                push_hex(&mut sql, key.as_str().as_bytes());
                sql.push_str(", ");
                push_hex(&mut sql, value);
                sql.push(')');
            }
        }
        Ok(sql)
    }
}

/// The orders' INSERT.
fn orders_insert(batch: &InitialBatch<'_>) -> String {
    let mut sql = String::from(
        "INSERT INTO orders (order_id, client_id, customer, address, created_at_ms, status, \
         subtotal_cents, payload) VALUES ",
    );
    let mut payload = String::new();
    for (n, order) in batch.orders.iter().enumerate() {
        let _ = write!(
            sql,
            "{}({}, {}, ",
            if n == 0 { "" } else { ", " },
            order.order_id,
            order.client_id
        );
        push_hex(&mut sql, order.customer.as_bytes());
        sql.push_str(", ");
        push_hex(&mut sql, order.address.as_bytes());
        let _ = write!(sql, ", {}, ", order.created_at_ms);
        push_hex(&mut sql, order.status.as_str().as_bytes());
        // A payload's letters need no escape in any sql_mode (`workload::payload`), and
        // quoted they are half the bytes of hex.
        payload::fill(&mut payload, order.order_id, order.payload);
        let _ = write!(sql, ", {}, '{payload}')", order.subtotal_cents);
    }
    sql
}

/// The line items' INSERT.
fn items_insert(batch: &InitialBatch<'_>) -> String {
    let mut sql = String::from(
        "INSERT INTO line_items (line_item_id, order_id, product, colour, size, quantity, \
         unit_price_cents) VALUES ",
    );
    let items = batch
        .orders
        .iter()
        .flat_map(|order| order.items.iter().map(move |item| (order.order_id, item)));
    for (n, (order_id, item)) in items.enumerate() {
        let _ = write!(
            sql,
            "{}({}, {order_id}",
            if n == 0 { "" } else { ", " },
            item.line_item_id
        );
        for word in [&item.product, &item.colour, &item.size] {
            sql.push_str(", ");
            push_hex(&mut sql, word.as_bytes());
        }
        let _ = write!(sql, ", {}, {})", item.quantity, item.unit_price_cents);
    }
    sql
}

/// Bytes as a hex literal (`X'0a1b'`).
fn push_hex(sql: &mut String, bytes: &[u8]) {
    sql.push_str("X'");
    crate::db::sql::push_hex_digits(sql, bytes);
    sql.push('\'');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_hex_literals() {
        let mut sql = String::new();
        push_hex(&mut sql, b"O'Neil\\");
        assert_eq!(sql, "X'4f274e65696c5c'");
    }
}
