//! CQL rows read as hatshop's rows, column by column in the order the SELECT names
//! them (`ORDER_COLUMNS`, `ITEM_COLUMNS`), and values written as CQL's.
//!
//! A cell a row lacks (a row written only in part) reads as empty, so `verify` reports
//! a difference instead of failing.

use std::io;

use scylla::deserialize::row::{ColumnIterator, DeserializeRow};
use scylla::deserialize::value::DeserializeValue;
use scylla::deserialize::{DeserializationError, TypeCheckError};
use scylla::frame::response::result::ColumnSpec;
use scylla::value::CqlValue;

use crate::db::OrderRow;
use crate::workload::{LineItem, OrderStatus, payload};

/// Columns of `ORDER_COLUMNS` and `ITEM_COLUMNS`.
const ORDER_WIDTH: usize = 8;
const ITEM_WIDTH: usize = 6;

/// The by-item schema's order: its row and the ids of its items (`line_item_ids`).
pub struct ListedOrder {
    pub row: OrderRow,
    pub item_ids: Vec<i64>,
}

/// A line item and the order it belongs to (`ITEM_COLUMNS, order_id`).
pub struct OrderItem {
    pub order_id: u64,
    pub item: LineItem,
}

/// A row's columns, taken one at a time.
struct Columns<'frame, 'metadata>(ColumnIterator<'frame, 'metadata>);

impl<'frame, 'metadata> Columns<'frame, 'metadata> {
    /// The next column as `T`, its type checked first.
    fn next<T: DeserializeValue<'frame, 'metadata>>(&mut self) -> Result<T, DeserializationError> {
        let column = self
            .0
            .next()
            .ok_or_else(|| DeserializationError::new(io::Error::other("a column is missing")))??;
        T::type_check(column.spec.typ()).map_err(DeserializationError::new)?;
        T::deserialize(column.spec.typ(), column.slice)
    }

    fn order(&mut self) -> Result<OrderRow, DeserializationError> {
        let order_id = self.next::<i64>()? as u64;
        Ok(OrderRow {
            order_id,
            client_id: self.next::<Option<i64>>()?.unwrap_or(0) as u64,
            customer: self.next::<Option<String>>()?.unwrap_or_default(),
            address: self.next::<Option<String>>()?.unwrap_or_default(),
            created_at_ms: self.next::<Option<i64>>()?.unwrap_or(0),
            status: self
                .next::<Option<&str>>()?
                .and_then(OrderStatus::parse)
                .unwrap_or(OrderStatus::Pending),
            subtotal_cents: self.next::<Option<i64>>()?.unwrap_or(0),
            payload: payload::read(
                order_id,
                self.next::<Option<&str>>()?.unwrap_or_default().as_bytes(),
            ),
        })
    }

    fn item(&mut self) -> Result<LineItem, DeserializationError> {
        Ok(LineItem {
            line_item_id: self.next::<i64>()? as u64,
            product: self.next::<Option<String>>()?.unwrap_or_default().into(),
            colour: self.next::<Option<String>>()?.unwrap_or_default().into(),
            size: self.next::<Option<String>>()?.unwrap_or_default().into(),
            quantity: self.next::<Option<i32>>()?.unwrap_or(0) as u32,
            unit_price_cents: self.next::<Option<i64>>()?.unwrap_or(0),
        })
    }
}

/// The row has `width` columns (their types are checked as each is read).
fn width(specs: &[ColumnSpec], width: usize) -> Result<(), TypeCheckError> {
    if specs.len() == width {
        return Ok(());
    }
    let said = format!("{} columns where {width} were expected", specs.len());
    Err(TypeCheckError::new(io::Error::other(said)))
}

impl<'frame, 'metadata> DeserializeRow<'frame, 'metadata> for OrderRow {
    fn type_check(specs: &[ColumnSpec]) -> Result<(), TypeCheckError> {
        width(specs, ORDER_WIDTH)
    }

    fn deserialize(row: ColumnIterator<'frame, 'metadata>) -> Result<Self, DeserializationError> {
        Columns(row).order()
    }
}

impl<'frame, 'metadata> DeserializeRow<'frame, 'metadata> for ListedOrder {
    fn type_check(specs: &[ColumnSpec]) -> Result<(), TypeCheckError> {
        width(specs, ORDER_WIDTH + 1)
    }

    fn deserialize(row: ColumnIterator<'frame, 'metadata>) -> Result<Self, DeserializationError> {
        let mut columns = Columns(row);
        Ok(ListedOrder {
            row: columns.order()?,
            item_ids: columns.next::<Option<Vec<i64>>>()?.unwrap_or_default(),
        })
    }
}

impl<'frame, 'metadata> DeserializeRow<'frame, 'metadata> for LineItem {
    fn type_check(specs: &[ColumnSpec]) -> Result<(), TypeCheckError> {
        width(specs, ITEM_WIDTH)
    }

    fn deserialize(row: ColumnIterator<'frame, 'metadata>) -> Result<Self, DeserializationError> {
        Columns(row).item()
    }
}

impl<'frame, 'metadata> DeserializeRow<'frame, 'metadata> for OrderItem {
    fn type_check(specs: &[ColumnSpec]) -> Result<(), TypeCheckError> {
        width(specs, ITEM_WIDTH + 1)
    }

    fn deserialize(row: ColumnIterator<'frame, 'metadata>) -> Result<Self, DeserializationError> {
        let mut columns = Columns(row);
        let item = columns.item()?;
        let order_id = columns.next::<Option<i64>>()?.unwrap_or(0) as u64;
        Ok(OrderItem { order_id, item })
    }
}

/// A CQL bigint.
pub fn big(n: u64) -> CqlValue {
    CqlValue::BigInt(n as i64)
}

/// A CQL text.
pub fn text(s: &str) -> CqlValue {
    CqlValue::Text(s.to_string())
}
