//! An order's commands, and the initial load as one pipeline per batch, as
//! `redis-cli --pipe` mass insertion sends them: every record's `SET … NX` and every
//! order's hashes and item list, on one connection, answered together. A pipeline
//! is not a transaction, so a failed batch may be written in part.

use super::errors::classify;
use super::rows::{item_key, items_key, kv_key, order_key};
use super::wire::{LeanConn, Reply};
use super::{ORDER_FIELDS, PAYLOAD_FIELD, RedisStore};
use crate::db::wire::LaneSlots;
use crate::db::{DbError, ErrorKind, InitialBatch, partly_written};
use crate::workload::{Order, payload};

/// The commands that write a new order: its hash, its item list and each item's hash.
/// The payload is a field of the hash where there is one; a missing field reads as none.
pub(super) fn order_commands(pipe: &mut redis::Pipeline, order: &Order, payload: &str) {
    let mut fields = vec![
        (ORDER_FIELDS[0], order.client_id.to_string()),
        (ORDER_FIELDS[1], order.customer.clone()),
        (ORDER_FIELDS[2], order.address.clone()),
        (ORDER_FIELDS[3], order.created_at_ms.to_string()),
        (ORDER_FIELDS[4], order.status.as_str().to_string()),
        (ORDER_FIELDS[5], order.subtotal_cents.to_string()),
    ];
    if !payload.is_empty() {
        fields.push((PAYLOAD_FIELD, payload.to_string()));
    }
    pipe.hset_multiple(order_key(order.order_id), &fields);
    let items = items_key(order.order_id);
    pipe.del(&items);
    for item in &order.items {
        pipe.rpush(&items, item.line_item_id);
        pipe.hset_multiple(
            item_key(item.line_item_id),
            &[
                ("order_id", order.order_id.to_string()),
                ("product", item.product.to_string()),
                ("colour", item.colour.to_string()),
                ("size", item.size.to_string()),
                ("quantity", item.quantity.to_string()),
                ("unit_price_cents", item.unit_price_cents.to_string()),
            ],
        );
    }
}

impl RedisStore {
    /// Writes the batch as one pipeline; a record whose key was there already is
    /// refused, as `kv_write` refuses it.
    pub(super) async fn pipeline_initial(&self, batch: &InitialBatch<'_>) -> Result<(), DbError> {
        if let Some(slots) = &self.lean
            && batch.orders.is_empty()
        {
            return self.pipeline_on_lane(slots, batch).await;
        }
        let mut pipe = redis::pipe();
        for (key, value) in batch.records() {
            pipe.cmd("SET").arg(kv_key(key)).arg(value).arg("NX");
        }
        let mut payload = String::new();
        for order in &batch.orders {
            payload::fill(&mut payload, order.order_id, order.payload);
            order_commands(&mut pipe, order, &payload);
        }
        let mut held = self.conn().await?;
        let replies: Vec<redis::Value> = pipe
            .query_async(&mut held.conn)
            .await
            .map_err(|e| partly_written(classify(e)))?;
        // The records' replies come first: nil where NX found the key.
        let refused = replies
            .iter()
            .zip(batch.records())
            .find(|(reply, _)| matches!(reply, redis::Value::Nil));
        match refused {
            None => Ok(()),
            Some((_, (key, _))) => Err(partly_written(DbError::new(
                ErrorKind::Constraint,
                format!("key {} exists already", key.as_str()),
            ))),
        }
    }

    /// A run of key-value events alone writes its records' batch on a lane's own
    /// connection, as one pipeline of `SET … NX`: each lane loads on its own
    /// connection, where the redis crate's one shared connection took every lane's
    /// batch in turn.
    async fn pipeline_on_lane(
        &self,
        slots: &LaneSlots<LeanConn>,
        batch: &InitialBatch<'_>,
    ) -> Result<(), DbError> {
        let keys: Vec<String> = batch.records().map(|(key, _)| kv_key(key)).collect();
        let commands: Vec<[&[u8]; 4]> = keys
            .iter()
            .zip(batch.records())
            .map(|(key, (_, value))| [b"SET".as_slice(), key.as_bytes(), value, b"NX"])
            .collect();
        let commands: Vec<&[&[u8]]> = commands.iter().map(|c| c.as_slice()).collect();
        let mut held = slots.take(|| LeanConn::open(&self.login)).await?;
        let conn = held.as_mut().expect("opened by take");
        let replies = conn.pipeline(&commands).await.map_err(partly_written)?;
        for (reply, (key, _)) in replies.into_iter().zip(batch.records()) {
            match reply.map_err(partly_written)? {
                Reply::Nil => {
                    return Err(partly_written(DbError::new(
                        ErrorKind::Constraint,
                        format!("key {} exists already", key.as_str()),
                    )));
                }
                _ => continue,
            }
        }
        Ok(())
    }
}
