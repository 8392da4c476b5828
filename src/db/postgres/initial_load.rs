//! The initial load through `COPY … FROM STDIN` in text form, as `pgbench -i` loads:
//! a batch's orders, line items and records in one transaction, so that a batch is
//! all or nothing. Its commit does not wait for the WAL to reach the disk
//! (`synchronous_commit` off for that transaction alone): the keys built after the
//! load commit synchronously, which flushes every load commit before them, and a
//! million rows in batches of 1,000 loaded in 3.1 s instead of 3.9 (bench/NOTES.md).
//! At most one batch per core is written at once: sixteen COPYs side by side on two
//! cores loaded a million rows in 3.1 s, two in 2.6 s.

use std::fmt::Write as _;

use bytes::Bytes;
use futures::SinkExt;

use super::errors::classify;
use super::{PostgresStore, pgbench};
use crate::db::{DbError, InitialBatch};
use crate::workload::payload;

const COPY_ORDERS: &str = "COPY orders (order_id, client_id, customer, address, created_at_ms, \
     status, subtotal_cents, payload) FROM STDIN";
const COPY_ITEMS: &str = "COPY line_items (line_item_id, order_id, product, colour, size, \
     quantity, unit_price_cents) FROM STDIN";
const COPY_KV: &str = "COPY kv (k, v) FROM STDIN";
const COPY_PGBENCH: &str = "COPY kv (aid, bid, abalance, filler) FROM STDIN";

impl PostgresStore {
    /// Writes the batch with one COPY per table, in one transaction.
    pub(super) async fn copy_initial(&self, batch: &InitialBatch<'_>) -> Result<(), DbError> {
        let mut copies = Vec::with_capacity(3);
        if !batch.orders.is_empty() {
            copies.push((COPY_ORDERS, orders_text(batch)));
        }
        if batch.items() > 0 {
            copies.push((COPY_ITEMS, items_text(batch)));
        }
        if batch.records().len() > 0 {
            let statement = if self.pgbench { COPY_PGBENCH } else { COPY_KV };
            copies.push((statement, self.records_text(batch)?));
        }
        let _turn = self.load_turns.acquire().await;
        let mut conn = self.conn().await?;
        let tx = conn.client.transaction().await.map_err(classify)?;
        tx.batch_execute("SET LOCAL synchronous_commit TO off")
            .await
            .map_err(classify)?;
        for (statement, text) in copies {
            let sink = tx.copy_in::<_, Bytes>(statement).await.map_err(classify)?;
            let mut sink = std::pin::pin!(sink);
            sink.send(Bytes::from(text)).await.map_err(classify)?;
            sink.as_mut().finish().await.map_err(classify)?;
        }
        tx.commit().await.map_err(classify)
    }

    /// The records as COPY's text: hatshop's `k, v`, or pgbench_accounts' row.
    fn records_text(&self, batch: &InitialBatch<'_>) -> Result<Vec<u8>, DbError> {
        let mut out = String::new();
        for (key, value) in batch.records() {
            let value = self.value_param(value)?;
            if self.pgbench {
                let _ = write!(out, "{}\t1\t0\t", pgbench::TABLE.id(key)?);
            } else {
                push_text(&mut out, key.as_str());
                out.push('\t');
            }
            push_bytea(&mut out, value);
            out.push('\n');
        }
        Ok(out.into_bytes())
    }
}

/// The orders' rows as COPY's text.
fn orders_text(batch: &InitialBatch<'_>) -> Vec<u8> {
    let mut out = String::new();
    let mut payload = String::new();
    for order in &batch.orders {
        let _ = write!(out, "{}\t{}\t", order.order_id, order.client_id);
        push_text(&mut out, &order.customer);
        out.push('\t');
        push_text(&mut out, &order.address);
        // A payload's letters need no escape in COPY's text (`workload::payload`).
        payload::fill(&mut payload, order.order_id, order.payload);
        let _ = writeln!(
            out,
            "\t{}\t{}\t{}\t{payload}",
            order.created_at_ms,
            order.status.as_str(),
            order.subtotal_cents
        );
    }
    out.into_bytes()
}

/// The line items' rows as COPY's text.
fn items_text(batch: &InitialBatch<'_>) -> Vec<u8> {
    let mut out = String::new();
    for order in &batch.orders {
        for item in &order.items {
            let _ = write!(out, "{}\t{}\t", item.line_item_id, order.order_id);
            for word in [&item.product, &item.colour, &item.size] {
                push_text(&mut out, word);
                out.push('\t');
            }
            let _ = writeln!(out, "{}\t{}", item.quantity, item.unit_price_cents);
        }
    }
    out.into_bytes()
}

/// A text value as COPY's text form reads it: backslash, tab and line ends escaped.
fn push_text(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}

/// Bytes as BYTEA's hex input (`\x0a1b…`), its backslash escaped for COPY.
fn push_bytea(out: &mut String, bytes: &[u8]) {
    out.push_str("\\\\x");
    crate::db::sql::push_hex_digits(out, bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_bytes_are_escaped_as_copy_reads_them() {
        let mut out = String::new();
        push_text(&mut out, "a\tb\\c\nd\re");
        assert_eq!(out, "a\\tb\\\\c\\nd\\re");
        let mut out = String::new();
        push_bytea(&mut out, &[0x00, 0xAB, 0x10]);
        assert_eq!(out, "\\\\x00ab10");
    }
}
