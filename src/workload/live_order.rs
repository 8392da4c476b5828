//! The generator's memory of a live order: catalogue indices and quantities, items
//! inline when few, so that a million live orders stay small; and the order's state
//! hash, fed piece by piece without building the order.

use super::catalogue::{CITIES, COLOURS, FIRST_NAMES, LAST_NAMES, PRODUCTS, SIZES, STREETS};
use super::domain::StateHash;
use super::domain::{OrderId, OrderStatus, Payload};
use super::state::{Head, StateHasher};

/// One item of a live order: catalogue indices and its quantity.
#[derive(Clone, Copy, Default)]
pub(super) struct LiveItem {
    pub(super) product: u8,
    pub(super) colour: u8,
    pub(super) size: u8,
    pub(super) quantity: u8,
}

/// Items kept inline up to this many (the default spec has 1–5 per order), so a live
/// order needs no allocation of its own.
const INLINE_ITEMS: usize = 5;

/// The items of a live order: inline when few, else on the heap.
pub(super) enum Items {
    Inline(u8, [LiveItem; INLINE_ITEMS]),
    Heap(Box<[LiveItem]>),
}

impl Items {
    pub(super) fn new(items: &[LiveItem]) -> Items {
        if items.len() <= INLINE_ITEMS {
            let mut inline = [LiveItem::default(); INLINE_ITEMS];
            inline[..items.len()].copy_from_slice(items);
            Items::Inline(items.len() as u8, inline)
        } else {
            Items::Heap(items.into())
        }
    }
}

impl std::ops::Deref for Items {
    type Target = [LiveItem];
    fn deref(&self) -> &[LiveItem] {
        match self {
            Items::Inline(n, items) => &items[..*n as usize],
            Items::Heap(items) => items,
        }
    }
}

impl std::ops::DerefMut for Items {
    fn deref_mut(&mut self) -> &mut [LiveItem] {
        match self {
            Items::Inline(n, items) => &mut items[..*n as usize],
            Items::Heap(items) => items,
        }
    }
}

/// What the generator remembers of a live order: enough to write its updates and to
/// hash its state, about 56 bytes with up to five items inline, whatever its payload.
pub(super) struct LiveOrder {
    pub(super) created_at_ms: i64,
    pub(super) client_id: u32,
    pub(super) first_name: u8,
    pub(super) last_name: u8,
    pub(super) street_no: u8,
    pub(super) street: u8,
    pub(super) city: u8,
    pub(super) status: u8,
    pub(super) discount_pct: u8,
    pub(super) first_item_id: u64,
    /// The payload's length: its text is made again from the order's id.
    pub(super) payload_bytes: u32,
    pub(super) items: Items,
}

impl LiveOrder {
    pub(super) fn items_total(&self) -> i64 {
        self.items
            .iter()
            .map(|i| PRODUCTS[i.product as usize].1 * i64::from(i.quantity))
            .sum()
    }

    pub(super) fn subtotal_cents(&self) -> i64 {
        self.items_total() * i64::from(100 - self.discount_pct) / 100
    }

    pub(super) fn status(&self) -> OrderStatus {
        OrderStatus::ALL[self.status as usize]
    }

    /// "First Last", joined in one allocation of the exact size: `format!` costs more
    /// than the copies on the event source's thread.
    pub(super) fn customer(&self) -> String {
        [
            FIRST_NAMES[self.first_name as usize],
            " ",
            LAST_NAMES[self.last_name as usize],
        ]
        .concat()
    }

    /// "12 Street, City", in one allocation as [`Self::customer`] is.
    pub(super) fn address(&self) -> String {
        let mut number = itoa_buffer();
        [
            format_u8(&mut number, self.street_no),
            " ",
            STREETS[self.street as usize],
            ", ",
            CITIES[self.city as usize],
        ]
        .concat()
    }

    /// The state hash of the order, fed piece by piece (see `state.rs`).
    pub(super) fn state(&self, order_id: OrderId) -> StateHash {
        let mut h = StateHasher::default();
        let mut number = itoa_buffer();
        let head = Head {
            order_id,
            client_id: u64::from(self.client_id),
            created_at_ms: self.created_at_ms,
            status: self.status().as_str(),
            subtotal_cents: self.subtotal_cents(),
            items: self.items.len(),
            payload: Payload::of(self.payload_bytes),
        };
        h.order_head(
            &head,
            |h| {
                h.text(FIRST_NAMES[self.first_name as usize])
                    .text(" ")
                    .text(LAST_NAMES[self.last_name as usize]);
            },
            |h| {
                h.text(format_u8(&mut number, self.street_no))
                    .text(" ")
                    .text(STREETS[self.street as usize])
                    .text(", ")
                    .text(CITIES[self.city as usize]);
            },
        );
        for (k, item) in self.items.iter().enumerate() {
            let (product, price) = PRODUCTS[item.product as usize];
            h.item(
                self.first_item_id + k as u64,
                product,
                COLOURS[item.colour as usize],
                SIZES[item.size as usize],
                u32::from(item.quantity),
                price,
            );
        }
        h.finish()
    }
}

fn itoa_buffer() -> [u8; 3] {
    [0; 3]
}

/// A u8 in decimal, without allocating.
fn format_u8(buf: &mut [u8; 3], n: u8) -> &str {
    let mut i = 3;
    let mut n = n;
    loop {
        i -= 1;
        buf[i] = b'0' + n % 10;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).expect("digits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_numbers_format_like_format() {
        let mut buf = itoa_buffer();
        for n in [0u8, 7, 10, 99, 100, 250, 255] {
            assert_eq!(format_u8(&mut buf, n), n.to_string());
        }
    }
}
