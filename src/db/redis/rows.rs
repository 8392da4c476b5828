//! hatshop's keys in Redis, and hashes read back into rows.

use std::collections::BTreeMap;

use crate::db::OrderRow;
use crate::workload::{KeyText, LineItem, OrderId, OrderStatus, payload};

pub(super) fn order_key(id: OrderId) -> String {
    format!("hatshop:order:{id}")
}

pub(super) fn items_key(id: OrderId) -> String {
    format!("hatshop:order:{id}:items")
}

pub(super) fn item_key(id: u64) -> String {
    format!("hatshop:item:{id}")
}

pub(super) fn kv_key(key: &KeyText) -> String {
    format!("hatshop:kv:{}", key.as_str())
}

/// A flat HGETALL reply as field → value.
pub(super) fn fields(flat: &[String]) -> BTreeMap<&str, &str> {
    flat.chunks(2)
        .filter(|c| c.len() == 2)
        .map(|c| (c[0].as_str(), c[1].as_str()))
        .collect()
}

pub(super) fn number<T: std::str::FromStr + Default>(map: &BTreeMap<&str, &str>, field: &str) -> T {
    map.get(field)
        .and_then(|v| v.parse().ok())
        .unwrap_or_default()
}

/// Missing fields read as empty, so `verify` reports a difference instead of failing.
pub(super) fn order_row(order_id: OrderId, flat: &[String]) -> OrderRow {
    let map = fields(flat);
    OrderRow {
        order_id,
        client_id: number(&map, "client_id"),
        customer: map.get("customer").unwrap_or(&"").to_string(),
        address: map.get("address").unwrap_or(&"").to_string(),
        created_at_ms: number(&map, "created_at_ms"),
        status: map
            .get("status")
            .and_then(|s| OrderStatus::parse(s))
            .unwrap_or(OrderStatus::Pending),
        subtotal_cents: number(&map, "subtotal_cents"),
        payload: payload::read(
            order_id,
            map.get(super::PAYLOAD_FIELD).unwrap_or(&"").as_bytes(),
        ),
    }
}

/// An item hash: its order id and the item.
pub(super) fn line_item(line_item_id: u64, flat: &[String]) -> (OrderId, LineItem) {
    let map = fields(flat);
    let item = LineItem {
        line_item_id,
        product: map.get("product").unwrap_or(&"").to_string().into(),
        colour: map.get("colour").unwrap_or(&"").to_string().into(),
        size: map.get("size").unwrap_or(&"").to_string().into(),
        quantity: number(&map, "quantity"),
        unit_price_cents: number(&map, "unit_price_cents"),
    };
    (number(&map, "order_id"), item)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_read_back_into_rows() {
        let flat: Vec<String> = [
            "client_id",
            "7",
            "customer",
            "Ada Hale",
            "address",
            "1 Felt Street, Luton",
            "created_at_ms",
            "5",
            "status",
            "dispatched",
            "subtotal_cents",
            "999",
        ]
        .map(String::from)
        .to_vec();
        let row = order_row(3, &flat);
        assert_eq!(row.client_id, 7);
        assert_eq!(row.status, OrderStatus::Dispatched);
        assert_eq!(row.subtotal_cents, 999);
    }
}
