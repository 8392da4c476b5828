//! An order's state as one 64-bit hash: what a lane keeps to check a read, and what
//! `verify` keeps to check the database, instead of a copy of every row.
//!
//! FNV-1a over the order's fields in a fixed order, strings closed by a 0xFF byte (never
//! in UTF-8), numbers as little-endian bytes. The generator feeds the same bytes from
//! its compact model without building strings, so both sides agree. Part of the stream:
//! changing it changes `STREAM_VERSION`.

use super::domain::StateHash;
use super::domain::{LineItem, Order, Payload};

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x100_0000_01b3;
const END_OF_TEXT: u8 = 0xFF;

/// The fields of an order row other than its texts, and how many items follow.
pub struct Head<'a> {
    pub order_id: u64,
    pub client_id: u64,
    pub created_at_ms: i64,
    pub status: &'a str,
    pub subtotal_cents: i64,
    pub items: usize,
    pub payload: Payload,
}

/// Feeds an order's fields, piece by piece, in the canonical order.
pub struct StateHasher(u64);

impl Default for StateHasher {
    fn default() -> Self {
        StateHasher(FNV_OFFSET)
    }
}

impl StateHasher {
    /// Feeds raw bytes.
    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(FNV_PRIME);
        }
        self
    }

    /// Feeds a number.
    pub fn number(&mut self, n: i64) -> &mut Self {
        self.bytes(&n.to_le_bytes())
    }

    /// Part of a text field; close the field with [`end_text`](Self::end_text).
    pub fn text(&mut self, text: &str) -> &mut Self {
        self.bytes(text.as_bytes())
    }

    /// Closes a text field, so that two fields cannot run into each other.
    pub fn end_text(&mut self) -> &mut Self {
        self.bytes(&[END_OF_TEXT])
    }

    /// The hash of what was fed.
    pub fn finish(&self) -> StateHash {
        StateHash(self.0)
    }

    /// Order fields before the items, in canonical order; `customer` and `address` are
    /// fed by the caller's closures so the generator can write them in pieces.
    pub fn order_head(
        &mut self,
        head: &Head<'_>,
        customer: impl FnOnce(&mut Self),
        address: impl FnOnce(&mut Self),
    ) -> &mut Self {
        self.number(head.order_id as i64)
            .number(head.client_id as i64);
        customer(self);
        self.end_text();
        address(self);
        self.end_text();
        self.number(head.created_at_ms)
            .text(head.status)
            .end_text()
            .number(head.subtotal_cents)
            .number(head.items as i64);
        self.payload(head.payload)
    }

    /// A payload by its length, the text being made from the order's id: fed only where
    /// there is one, so an order without stays the hash it always was; a garbled one
    /// adds a byte no length ends in, so it never matches the order's own.
    fn payload(&mut self, payload: Payload) -> &mut Self {
        if payload.is_none() {
            return self;
        }
        self.number(i64::from(payload.bytes));
        if payload.garbled {
            self.end_text();
        }
        self
    }

    /// Feeds one line item's fields, in canonical order.
    pub fn item(
        &mut self,
        line_item_id: u64,
        product: &str,
        colour: &str,
        size: &str,
        quantity: u32,
        unit_price_cents: i64,
    ) -> &mut Self {
        self.number(line_item_id as i64)
            .text(product)
            .end_text()
            .text(colour)
            .end_text()
            .text(size)
            .end_text()
            .number(i64::from(quantity))
            .number(unit_price_cents)
    }
}

/// The state hash of a whole order (items in `line_item_id` order, however given).
pub fn of_order(order: &Order) -> StateHash {
    let mut h = StateHasher::default();
    let head = Head {
        order_id: order.order_id,
        client_id: order.client_id,
        created_at_ms: order.created_at_ms,
        status: order.status.as_str(),
        subtotal_cents: order.subtotal_cents,
        items: order.items.len(),
        payload: order.payload,
    };
    h.order_head(
        &head,
        |h| {
            h.text(&order.customer);
        },
        |h| {
            h.text(&order.address);
        },
    );
    let mut feed = |i: &LineItem| {
        h.item(
            i.line_item_id,
            &i.product,
            &i.colour,
            &i.size,
            i.quantity,
            i.unit_price_cents,
        );
    };
    if order.items.is_sorted_by_key(|i| i.line_item_id) {
        order.items.iter().for_each(&mut feed);
    } else {
        let mut items: Vec<&LineItem> = order.items.iter().collect();
        items.sort_by_key(|i| i.line_item_id);
        items.into_iter().for_each(feed);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::OrderStatus;

    fn order() -> Order {
        Order {
            order_id: 7,
            client_id: 3,
            customer: "Ada Hale".into(),
            address: "1 Felt Street, Luton".into(),
            created_at_ms: 5,
            status: OrderStatus::Pending,
            subtotal_cents: 999,
            items: vec![
                LineItem {
                    line_item_id: 1,
                    product: "Fez".into(),
                    colour: "Teal".into(),
                    size: "7".into(),
                    quantity: 1,
                    unit_price_cents: 999,
                },
                LineItem {
                    line_item_id: 2,
                    product: "Fez".into(),
                    colour: "Teal".into(),
                    size: "7".into(),
                    quantity: 1,
                    unit_price_cents: 0,
                },
            ],
            payload: Payload::default(),
        }
    }

    #[test]
    fn every_field_and_only_the_order_of_items_does_not_matter() {
        let base = of_order(&order());
        let mut swapped = order();
        swapped.items.reverse();
        assert_eq!(of_order(&swapped), base);
        let mut changed = order();
        changed.items[1].colour = "Plum".into();
        assert_ne!(of_order(&changed), base);
        let mut moved = order();
        // Text boundaries count: "Ada Hale" + "1 Felt…" differs from "Ada Hal" + "e1 Felt…".
        moved.customer = "Ada Hal".into();
        moved.address = "e1 Felt Street, Luton".into();
        assert_ne!(of_order(&moved), base);
        let mut with_payload = order();
        with_payload.payload = Payload::of(200);
        let paid = of_order(&with_payload);
        assert_ne!(paid, base);
        with_payload.payload.garbled = true;
        assert_ne!(of_order(&with_payload), paid);
    }

    #[test]
    fn hashes_read_back_from_json() {
        let h = of_order(&order());
        let text = serde_json::to_string(&h).unwrap();
        assert_eq!(text.len(), 18);
        assert_eq!(serde_json::from_str::<StateHash>(&text).unwrap(), h);
        assert!(serde_json::from_str::<StateHash>("\"12\"").is_err());
    }
}
