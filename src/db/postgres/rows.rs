//! Rows read back into hatshop's types.

use tokio_postgres::Row;

use crate::db::sql::unknown_status;
use crate::db::{DbError, OrderRow};
use crate::workload::{LineItem, OrderStatus, payload};

pub(super) fn get<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    index: usize,
) -> Result<T, DbError> {
    row.try_get(index)
        .map_err(|e| DbError::other(format!("column {index}: {e}")))
}

pub(super) fn order_row(row: &Row) -> Result<OrderRow, DbError> {
    let status: &str = get(row, 5)?;
    let order_id = get::<i64>(row, 0)? as u64;
    Ok(OrderRow {
        order_id,
        client_id: get::<i64>(row, 1)? as u64,
        customer: get(row, 2)?,
        address: get(row, 3)?,
        created_at_ms: get(row, 4)?,
        status: OrderStatus::parse(status).ok_or_else(|| unknown_status(status))?,
        subtotal_cents: get(row, 6)?,
        payload: payload::read(order_id, get::<&str>(row, 7)?.as_bytes()),
    })
}

pub(super) fn line_item(row: &Row, at: usize) -> Result<Option<LineItem>, DbError> {
    let Some(id) = get::<Option<i64>>(row, at)? else {
        return Ok(None);
    };
    Ok(Some(LineItem {
        line_item_id: id as u64,
        product: get::<String>(row, at + 1)?.into(),
        colour: get::<String>(row, at + 2)?.into(),
        size: get::<String>(row, at + 3)?.into(),
        quantity: get::<i32>(row, at + 4)? as u32,
        unit_price_cents: get(row, at + 5)?,
    }))
}
