//! Rows of the order tables as the domain's types.

use mysql_async::Row;
use mysql_async::prelude::{FromValue, Queryable};

use super::errors::classify;
use crate::db::sql::unknown_status;
use crate::db::{DbError, OrderRow};
use crate::workload::{LineItem, OrderStatus, payload};

pub(super) fn order_row(row: &Row) -> Result<OrderRow, DbError> {
    let status: String = cell(row, 5)?;
    let order_id = cell::<i64>(row, 0)? as u64;
    let payload: Vec<u8> = cell(row, 7)?;
    Ok(OrderRow {
        order_id,
        client_id: cell::<i64>(row, 1)? as u64,
        customer: cell(row, 2)?,
        address: cell(row, 3)?,
        created_at_ms: cell(row, 4)?,
        status: OrderStatus::parse(&status).ok_or_else(|| unknown_status(&status))?,
        subtotal_cents: cell(row, 6)?,
        payload: payload::read(order_id, &payload),
    })
}

/// Item columns starting at `at`; `None` when the item side of a LEFT JOIN is NULL.
pub(super) fn line_item(row: &Row, at: usize) -> Result<Option<LineItem>, DbError> {
    let Some(id) = cell::<Option<i64>>(row, at)? else {
        return Ok(None);
    };
    Ok(Some(LineItem {
        line_item_id: id as u64,
        product: cell(row, at + 1)?,
        colour: cell(row, at + 2)?,
        size: cell(row, at + 3)?,
        quantity: cell::<i64>(row, at + 4)? as u32,
        unit_price_cents: cell(row, at + 5)?,
    }))
}

pub(super) fn cell<T: FromValue>(row: &Row, index: usize) -> Result<T, DbError> {
    row.get_opt::<T, usize>(index)
        .and_then(Result::ok)
        .ok_or_else(|| DbError::other(format!("unexpected value in column {index}")))
}

/// Hands each row `sql` selects to `take` as the server sends it, so a read-back never
/// holds a table's rows (and their payloads) at once; the first error `take` meets is
/// the answer, once the rest of the rows are read off the connection.
pub(super) async fn each_row(
    conn: &mut mysql_async::Conn,
    sql: String,
    mut take: impl FnMut(Row) -> Result<(), DbError>,
) -> Result<(), DbError> {
    let mut result = conn.query_iter(sql).await.map_err(classify)?;
    let mut first_error = None;
    result
        .for_each(|row| {
            if first_error.is_none() {
                first_error = take(row).err();
            }
        })
        .await
        .map_err(classify)?;
    first_error.map_or(Ok(()), Err)
}
