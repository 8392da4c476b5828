//! The initial load through `COPY … FROM STDIN`, as `pgbench -i` loads: a batch's
//! orders, line items and records in one transaction, so that a batch is all or
//! nothing. Its commit does not wait for the WAL to reach the disk
//! (`synchronous_commit` off for that transaction alone): the keys built after the
//! load commit synchronously, which flushes every load commit before them, and a
//! million rows in batches of 1,000 loaded in 3.1 s instead of 3.9 (bench/NOTES.md).
//! At most one batch per core is written at once: sixteen COPYs side by side on two
//! cores loaded a million rows in 3.1 s, two in 2.6 s. In a run over hatshop's own
//! wire a batch goes on the lane's own connection of it (`LeanConn::copy_in`): the
//! driver's one connection would take the lanes' batches one at a time.

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
// Records go in COPY's binary form: a value is sent as its bytes, where the text form
// sends BYTEA in hex, twice the bytes for the client to write and the server to parse
// (a million 84-byte values: 114 MB and 1.1 s into a bare table by psql's `\copy`,
// against 183 MB and 1.9 s as text; bench/NOTES.md).
const COPY_KV: &str = "COPY kv (k, v) FROM STDIN (FORMAT binary)";
const COPY_PGBENCH: &str = "COPY kv (aid, bid, abalance, filler) FROM STDIN (FORMAT binary)";

/// What COPY's binary form begins with: its signature, no flags, no extension.
const BINARY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
/// What it ends with: a row of -1 fields.
const BINARY_TRAILER: [u8; 2] = (-1i16).to_be_bytes();

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
            copies.push((statement, self.records_binary(batch)?));
        }
        let _turn = self.load_turns.acquire().await;
        // A run over the own wire holds one driver connection, for setup: the lanes'
        // batches go on their own wire's connections, side by side.
        if let Some(lean) = &self.lean {
            let copies: Vec<(&str, &[u8])> = copies.iter().map(|(s, t)| (*s, &t[..])).collect();
            return lean.copy_in(&copies).await;
        }
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

    /// The records in COPY's binary form: hatshop's `k, v`, or pgbench_accounts' row
    /// (`aid`, then `bid` 1 and `abalance` 0, as pgbench's rows hold at scale 1).
    fn records_binary(&self, batch: &InitialBatch<'_>) -> Result<Vec<u8>, DbError> {
        let mut out = BINARY_HEADER.to_vec();
        for (key, value) in batch.records() {
            let value = self.value_param(value)?;
            if self.pgbench {
                let aid = pgbench::TABLE.id(key)? as i32;
                out.extend_from_slice(&4i16.to_be_bytes());
                for int in [aid, 1, 0] {
                    push_field(&mut out, &int.to_be_bytes());
                }
            } else {
                out.extend_from_slice(&2i16.to_be_bytes());
                push_field(&mut out, key.as_str().as_bytes());
            }
            push_field(&mut out, value);
        }
        out.extend_from_slice(&BINARY_TRAILER);
        Ok(out)
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

/// A field of COPY's binary form: its length, then its bytes (a text's are its UTF-8,
/// a BYTEA's its own, an INT's four in network order).
fn push_field(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_as_copy_reads_it() {
        let mut out = String::new();
        push_text(&mut out, "a\tb\\c\nd\re");
        assert_eq!(out, "a\\tb\\\\c\\nd\\re");
    }

    #[test]
    fn binary_fields_carry_their_length_and_the_header_its_signature() {
        let mut out = Vec::new();
        push_field(&mut out, &[0x00, 0xAB]);
        assert_eq!(out, [0, 0, 0, 2, 0x00, 0xAB]);
        assert_eq!(BINARY_HEADER.len(), 19);
        assert!(BINARY_HEADER.starts_with(b"PGCOPY\n\xff\r\n\0"));
    }
}
