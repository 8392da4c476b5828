//! From CQL rows to domain types and back, and driver errors to error kinds.

use scylla::errors::{DbError as CqlError, ExecutionError, RequestAttemptError};
use scylla::value::CqlValue;

use crate::db::{DbError, ErrorKind, OrderRow};
use crate::workload::{LineItem, OrderStatus};

/// order_id, client_id, customer, address, created_at_ms, status, subtotal_cents.
pub type OrderColumns = (
    i64,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<i64>,
);

/// The by-item schema's order: the columns above plus the list of item ids.
pub type ListedOrderColumns = (
    i64,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<i64>,
    Option<Vec<i64>>,
);

/// line_item_id, product, colour, size, quantity, unit_price_cents.
pub type ItemColumns = (
    i64,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i32>,
    Option<i64>,
);

/// Missing cells (a row written only in part) read as empty, so `verify` reports a
/// difference instead of failing.
pub fn order_row(c: OrderColumns) -> OrderRow {
    OrderRow {
        order_id: c.0 as u64,
        client_id: c.1.unwrap_or(0) as u64,
        customer: c.2.unwrap_or_default(),
        address: c.3.unwrap_or_default(),
        created_at_ms: c.4.unwrap_or(0),
        status: c
            .5
            .as_deref()
            .and_then(OrderStatus::parse)
            .unwrap_or(OrderStatus::Pending),
        subtotal_cents: c.6.unwrap_or(0),
    }
}

/// The order row and its item ids.
pub fn listed_order(c: ListedOrderColumns) -> (OrderRow, Vec<i64>) {
    let row = order_row((c.0, c.1, c.2, c.3, c.4, c.5, c.6));
    (row, c.7.unwrap_or_default())
}

pub fn line_item(c: ItemColumns) -> LineItem {
    LineItem {
        line_item_id: c.0 as u64,
        product: c.1.unwrap_or_default(),
        colour: c.2.unwrap_or_default(),
        size: c.3.unwrap_or_default(),
        quantity: c.4.unwrap_or(0) as u32,
        unit_price_cents: c.5.unwrap_or(0),
    }
}

pub fn big(n: u64) -> CqlValue {
    CqlValue::BigInt(n as i64)
}

pub fn text(s: &str) -> CqlValue {
    CqlValue::Text(s.to_string())
}

pub fn other(error: impl std::fmt::Display) -> DbError {
    DbError::new(ErrorKind::Other, error.to_string())
}

pub fn classify(error: ExecutionError) -> DbError {
    let kind = match &error {
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(db, _)) => match db {
            CqlError::Unavailable { .. }
            | CqlError::Overloaded
            | CqlError::IsBootstrapping
            | CqlError::RateLimitReached { .. } => ErrorKind::Unavailable,
            // The coordinator gave up waiting: the write may still have happened.
            CqlError::ReadTimeout { .. } | CqlError::WriteTimeout { .. } => ErrorKind::Timeout,
            CqlError::AlreadyExists { .. } => ErrorKind::Constraint,
            CqlError::AuthenticationError | CqlError::Unauthorized => ErrorKind::Connection,
            _ => ErrorKind::Other,
        },
        ExecutionError::LastAttemptError(
            RequestAttemptError::BrokenConnectionError(_)
            | RequestAttemptError::UnableToAllocStreamId,
        )
        | ExecutionError::ConnectionPoolError(_) => ErrorKind::Connection,
        ExecutionError::RequestTimeout(_) => ErrorKind::Timeout,
        ExecutionError::EmptyPlan => ErrorKind::Unavailable,
        _ => ErrorKind::Other,
    };
    DbError::new(kind, error.to_string())
}
