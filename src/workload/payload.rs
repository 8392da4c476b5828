//! An order's payload: its size (the workload's `order_bytes`, a size or a range), and
//! its text, made again from the order's id and its length, never kept, as a key-value
//! record's value is made from its key and version. So the stream names a payload by its length alone, a live order costs
//! the generator four bytes more whatever its size, and a payload read back is judged
//! byte for byte without a copy of what was written.

use serde::{Deserialize, Serialize};

use super::domain::{OrderId, Payload};
use super::rng::{StreamRng, splitmix64};

/// The bytes of an order's payload, from `min` to `max`: `500` or `"200..2000"` in a
/// workload file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderBytes {
    pub min: u32,
    pub max: u32,
}

impl OrderBytes {
    /// `500` or `200..2000` (sizes may end in k, as `1k..4k`).
    pub fn parse(text: &str) -> Result<OrderBytes, String> {
        let size = |part: &str| {
            let part = part.trim();
            let (digits, unit) = match part.strip_suffix(['k', 'K']) {
                Some(digits) => (digits, 1024),
                None => (part, 1),
            };
            digits
                .parse::<u32>()
                .ok()
                .and_then(|n| n.checked_mul(unit))
                .ok_or_else(|| {
                    format!("order_bytes must be a size or a range such as 200..2000, got '{text}'")
                })
        };
        let (min, max) = match text.split_once("..") {
            Some((min, max)) => (size(min)?, size(max)?),
            None => (size(text)?, size(text)?),
        };
        Ok(OrderBytes { min, max })
    }
}

impl std::fmt::Display for OrderBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.min == self.max {
            write!(f, "{}", self.min)
        } else {
            write!(f, "{}..{}", self.min, self.max)
        }
    }
}

impl Serialize for OrderBytes {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.min == self.max {
            serializer.serialize_u32(self.min)
        } else {
            serializer.serialize_str(&self.to_string())
        }
    }
}

impl<'de> Deserialize<'de> for OrderBytes {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Given {
            Size(u32),
            Text(String),
        }
        match Given::deserialize(deserializer)? {
            Given::Size(n) => Ok(OrderBytes { min: n, max: n }),
            Given::Text(text) => OrderBytes::parse(&text).map_err(serde::de::Error::custom),
        }
    }
}

/// URL-safe base64's letters: printable in every store's text type and in JSON without
/// escapes. Six bits a byte, so a store that compresses gets what it gets from text.
const LETTERS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn letters_of(order_id: OrderId) -> impl Iterator<Item = u8> {
    let mut seed = order_id ^ 0x7061_796c_6f61_6421;
    let mut rng = StreamRng::from_seed(splitmix64(&mut seed));
    std::iter::repeat_with(move || rng.next_u64().to_le_bytes())
        .flatten()
        .map(|b| LETTERS[usize::from(b & 63)])
}

/// The payload text of `order_id` at `payload.bytes` long ("" for none).
pub fn text(order_id: OrderId, payload: Payload) -> String {
    let mut out = String::new();
    fill(&mut out, order_id, payload);
    out
}

/// Writes the payload text into `out` (cleared first), keeping its allocation.
pub fn fill(out: &mut String, order_id: OrderId, payload: Payload) {
    out.clear();
    out.extend(
        letters_of(order_id)
            .take(payload.bytes as usize)
            .map(char::from),
    );
}

/// What a payload read back is: its length, and whether it is other text than the
/// order's own of that length. Compared letter by letter as they are made, so a read
/// allocates nothing.
pub fn read(order_id: OrderId, got: &[u8]) -> Payload {
    let bytes = u32::try_from(got.len()).unwrap_or(u32::MAX);
    let garbled = !got.iter().copied().eq(letters_of(order_id).take(got.len()));
    Payload { bytes, garbled }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_is_made_again_from_its_order_and_length() {
        let payload = Payload::of(300);
        let text = text(7, payload);
        assert_eq!(text.len(), 300);
        assert!(text.bytes().all(|b| LETTERS.contains(&b)));
        assert_eq!(text, super::text(7, payload));
        assert_ne!(text, super::text(8, payload));
        assert_eq!(read(7, text.as_bytes()), payload);
        assert_eq!(read(7, b""), Payload::default());
    }

    #[test]
    fn other_text_is_garbled_and_keeps_its_length() {
        let mut text = text(7, Payload::of(50)).into_bytes();
        text[20] = b'!';
        let seen = read(7, &text);
        assert_eq!((seen.bytes, seen.garbled), (50, true));
        let other = super::text(8, Payload::of(50));
        assert!(read(7, other.as_bytes()).garbled);
    }

    #[test]
    fn sizes_read_as_a_size_or_a_range() {
        let range = |min, max| Ok(OrderBytes { min, max });
        assert_eq!(OrderBytes::parse("500"), range(500, 500));
        assert_eq!(OrderBytes::parse("200..2000"), range(200, 2000));
        assert_eq!(OrderBytes::parse(" 1k .. 4K "), range(1024, 4096));
        for bad in ["", "x", "1..", "..2", "-1", "5000000k"] {
            assert!(OrderBytes::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(OrderBytes::parse("2..3").unwrap().to_string(), "2..3");
        assert_eq!(OrderBytes::parse("7").unwrap().to_string(), "7");
    }
}
