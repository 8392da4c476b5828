//! The one place an event becomes a database call, and what a failed call means for
//! a retry.

use std::time::Duration;

use crate::db::{Applied, DbError, ErrorKind, Store};
use crate::workload::{ItemsUpdate, KeyText, Operation, Order, StatusUpdate};

/// What a call returned, before it is judged.
pub(super) enum Reply {
    Done,
    Order(Option<Order>),
    Value(Option<Vec<u8>>),
    Write(Applied),
}

/// Failures a second try may not meet: a timeout, too few replicas, a conflict, a
/// lost connection, a failed replica. A refusal (constraint, not found) stays one.
pub(super) fn retry_cures(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::Timeout
            | ErrorKind::Unavailable
            | ErrorKind::Conflict
            | ErrorKind::Connection
            | ErrorKind::Failure
    )
}

pub(super) fn timed_out(limit: Duration) -> DbError {
    DbError::new(
        ErrorKind::Timeout,
        format!("no answer within {} s (--op-timeout)", limit.as_secs_f64()),
    )
}

/// The one place an event becomes a database call.
///
/// `AnyStore` boxes each call (`db/stores.rs`), so this future stays small: unboxed, the
/// futures of all calls of all stores share one state machine, 8 KB, which the timeout
/// and the select around it copied several times per operation (about 6 % of the
/// client's CPU on Cassandra inserts).
pub(super) async fn call<D: Store>(
    db: &D,
    op: &Operation,
    key: &KeyText,
    value: &[u8],
    payload: &str,
) -> Result<Reply, DbError> {
    match op {
        Operation::CreateOrder { order } => {
            db.create_order(order, payload).await.map(|()| Reply::Done)
        }
        Operation::ReadOrder { order_id } => db.read_order(*order_id).await.map(Reply::Order),
        Operation::UpdateOrder { .. } => {
            let update = op.order_update().expect("an order update");
            db.update_order(&update).await.map(Reply::Write)
        }
        Operation::UpdateItems {
            order_id,
            changes,
            subtotal_cents,
            ..
        } => {
            let update = ItemsUpdate {
                order_id: *order_id,
                changes,
                subtotal_cents: *subtotal_cents,
            };
            db.update_items(update).await.map(Reply::Write)
        }
        Operation::UpdateStatus {
            order_id, status, ..
        } => {
            let update = StatusUpdate {
                order_id: *order_id,
                status: *status,
            };
            db.update_status(update).await.map(Reply::Write)
        }
        Operation::DeleteOrder { order_id } => db.delete_order(*order_id).await.map(Reply::Write),
        Operation::Write { .. } => db.kv_write(key, value).await.map(|()| Reply::Done),
        Operation::Rewrite { .. } => db.kv_rewrite(key, value).await.map(Reply::Write),
        Operation::Read { .. } => db.kv_read(key).await.map(Reply::Value),
        Operation::Delete { .. } => db.kv_delete(key).await.map(Reply::Write),
    }
}
