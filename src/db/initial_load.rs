//! The initial load's batches: the stream's load events (new orders with their items,
//! new key-value records) handed to a store at once, so that it writes them through
//! its bulk path (COPY, multi-row INSERTs, a pipeline, one transaction, many requests
//! in flight), as `pgbench -i` and `sysbench prepare` load, rather than one call each.

use std::future::Future;
use std::pin::Pin;

use futures::StreamExt;

use super::{DbError, ErrorKind, Store};
use crate::workload::{KeyText, Order, payload};

/// Rows (orders or records) of a load batch when `--load-batch` does not say and the
/// store declares no other (`initial_load_batch`): MariaDB's and Redis's bulk paths gain
/// little past it, and lanes × batch bounds what the client holds (bench/NOTES.md).
pub const DEFAULT_LOAD_BATCH: usize = 1000;

/// Bytes of values and order payloads a batch holds at most, whatever its row count: values of 15 KB at
/// the default batch would otherwise make a lane hold 15 MB, and a MariaDB INSERT of
/// them, in hex, pass its 16 MiB `max_allowed_packet`.
pub const LOAD_BATCH_BYTES: usize = 2 << 20;

/// Requests in flight over all lanes where a store loads by many single writes at once
/// (Cassandra, Voldemort), as latte's and cassandra-stress's loads keep them.
pub const LOAD_REQUESTS_IN_FLIGHT: usize = 256;

/// One batch of the load: its orders and its records, each in stream order.
pub struct InitialBatch<'a> {
    pub orders: Vec<&'a Order>,
    keys: Vec<KeyText>,
    /// Every record's value, back to back; `ends[i]` is where record `i`'s ends.
    values: Vec<u8>,
    ends: Vec<usize>,
    /// Single writes a store that loads by many at once keeps in flight for this batch.
    pub in_flight: usize,
}

impl<'a> InitialBatch<'a> {
    /// An empty batch whose single writes go `in_flight` at a time.
    pub fn new(in_flight: usize) -> Self {
        InitialBatch {
            orders: Vec::new(),
            keys: Vec::new(),
            values: Vec::new(),
            ends: Vec::new(),
            in_flight: in_flight.max(1),
        }
    }

    /// Adds a new order.
    pub fn push_order(&mut self, order: &'a Order) {
        self.orders.push(order);
    }

    /// Adds a new record.
    pub fn push_record(&mut self, key: KeyText, value: &[u8]) {
        self.keys.push(key);
        self.values.extend_from_slice(value);
        self.ends.push(self.values.len());
    }

    /// The records: each key with its value.
    pub fn records(&self) -> impl ExactSizeIterator<Item = (&KeyText, &[u8])> {
        self.keys.iter().enumerate().map(|(i, key)| {
            let start = if i == 0 { 0 } else { self.ends[i - 1] };
            (key, &self.values[start..self.ends[i]])
        })
    }

    /// Orders and records in the batch.
    pub fn rows(&self) -> usize {
        self.orders.len() + self.keys.len()
    }

    /// Line items of its orders.
    pub fn items(&self) -> usize {
        self.orders.iter().map(|o| o.items.len()).sum()
    }
}

/// What a batch written by separate calls (not one statement or transaction) failed
/// with: the rows before the failure may be written, so a refusal is no longer
/// definite for the batch as a whole.
pub fn partly_written(error: DbError) -> DbError {
    if error.kind.outcome_unknown() {
        return error;
    }
    DbError {
        kind: ErrorKind::Failure,
        ..error.context("part of the batch may be written")
    }
}

/// The bulk path of a store with none of its own: the batch's rows as single writes,
/// `batch.in_flight` at a time (stores whose writes are independent requests).
pub async fn by_single_writes<S: Store + ?Sized>(
    store: &S,
    batch: &InitialBatch<'_>,
) -> Result<(), DbError> {
    // Boxed, so that the calls of both kinds are one type, made before any is sent.
    type Call<'c> = Pin<Box<dyn Future<Output = Result<(), DbError>> + Send + 'c>>;
    let payloads: Vec<String> = batch
        .orders
        .iter()
        .map(|order| payload::text(order.order_id, order.payload))
        .collect();
    let mut writes: Vec<Call<'_>> = Vec::with_capacity(batch.rows());
    for (order, payload) in batch.orders.iter().zip(&payloads) {
        writes.push(Box::pin(store.create_order(order, payload)));
    }
    for (key, value) in batch.records() {
        writes.push(Box::pin(store.kv_write(key, value)));
    }
    let mut calls = futures::stream::iter(writes).buffer_unordered(batch.in_flight);
    let mut first_error = None;
    while let Some(result) = calls.next().await {
        // Every call is let finish, so that none is in flight once the batch's
        // outcome is known.
        if let Err(e) = result {
            first_error.get_or_insert(e);
        }
    }
    match first_error {
        None => Ok(()),
        Some(e) if batch.rows() == 1 => Err(e),
        Some(e) => Err(partly_written(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::kv::fill_value;

    #[test]
    fn records_keep_their_own_values() {
        let mut batch = InitialBatch::new(4);
        let mut value = Vec::new();
        for (key, size) in [(1u64, 20u32), (2, 100), (3, 33)] {
            fill_value(&mut value, key, 1, size);
            batch.push_record(KeyText::of(key), &value);
        }
        let got: Vec<(u64, usize)> = batch.records().map(|(k, v)| (k.index(), v.len())).collect();
        assert_eq!(got, [(1, 20), (2, 100), (3, 33)]);
        for (key, value) in batch.records() {
            assert_eq!(
                crate::workload::kv::intact_version(key.index(), value),
                Some(1)
            );
        }
        assert_eq!(batch.rows(), 3);
    }

    #[test]
    fn a_refusal_in_a_batch_of_separate_writes_is_an_unknown_outcome() {
        let refused = DbError::new(ErrorKind::Constraint, "duplicate key");
        let error = partly_written(refused);
        assert!(error.kind.outcome_unknown(), "{error:?}");
        assert!(error.message.contains("duplicate key"));
        let timeout = DbError::new(ErrorKind::Timeout, "late");
        assert_eq!(partly_written(timeout).kind, ErrorKind::Timeout);
    }
}
