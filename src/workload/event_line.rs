//! An event's JSON line, written field by field: the bytes serde's derive writes for
//! an [`OrderEvent`] (the tests compare the two for every kind of event), in half its
//! time. Every run hashes every event's line, so this is on the event source's path.
//! Reading events back stays with serde.

use super::domain::{ItemChange, LineItem, Operation, Order, OrderEvent, StateHash};

/// Appends `event`'s JSON (no newline) to `out`.
pub fn write_event(out: &mut Vec<u8>, event: &OrderEvent) {
    let mut line = Line(out);
    line.raw("{\"seq\":");
    line.number(event.seq);
    line.text_field("phase", event.phase.as_str());
    line.raw(",\"op\":{\"type\":");
    line.text(event.op.event_type().as_str());
    match &event.op {
        Operation::CreateOrder { order } => {
            line.raw(",\"order\":");
            line.order(order);
        }
        Operation::ReadOrder { order_id } | Operation::DeleteOrder { order_id } => {
            line.number_field("order_id", *order_id);
        }
        Operation::UpdateOrder {
            order_id,
            created_at_ms,
            status,
            subtotal_cents,
            state,
        } => {
            line.number_field("order_id", *order_id);
            line.number_field("created_at_ms", *created_at_ms);
            line.text_field("status", status.as_str());
            line.number_field("subtotal_cents", *subtotal_cents);
            line.state(*state);
        }
        Operation::UpdateItems {
            order_id,
            changes,
            subtotal_cents,
            state,
        } => {
            line.number_field("order_id", *order_id);
            line.raw(",\"changes\":");
            line.list(changes, Line::change);
            line.number_field("subtotal_cents", *subtotal_cents);
            line.state(*state);
        }
        Operation::UpdateStatus {
            order_id,
            status,
            state,
        } => {
            line.number_field("order_id", *order_id);
            line.text_field("status", status.as_str());
            line.state(*state);
        }
        Operation::Write { key, size } => {
            line.number_field("key", *key);
            line.number_field("size", *size);
        }
        Operation::Rewrite { key, version, size } => {
            line.number_field("key", *key);
            line.number_field("version", *version);
            line.number_field("size", *size);
        }
        Operation::Read { key, version } => {
            line.number_field("key", *key);
            line.number_field("version", *version);
        }
        Operation::Delete { key } => line.number_field("key", *key),
    }
    line.raw("}}");
}

struct Line<'a>(&'a mut Vec<u8>);

impl Line<'_> {
    fn raw(&mut self, text: &str) {
        self.0.extend_from_slice(text.as_bytes());
    }

    fn number(&mut self, n: impl itoa::Integer) {
        self.raw(itoa::Buffer::new().format(n));
    }

    /// A string: as it is where nothing in it needs escaping (every generated one),
    /// else escaped by serde_json itself.
    fn text(&mut self, text: &str) {
        if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
            self.0.push(b'"');
            self.raw(text);
            self.0.push(b'"');
        } else {
            serde_json::to_writer(&mut *self.0, text).expect("a string always serialises");
        }
    }

    /// `,"name":`: every field but an object's first.
    fn name(&mut self, name: &str) {
        self.raw(",\"");
        self.raw(name);
        self.raw("\":");
    }

    fn number_field(&mut self, name: &str, n: impl itoa::Integer) {
        self.name(name);
        self.number(n);
    }

    fn text_field(&mut self, name: &str, text: &str) {
        self.name(name);
        self.text(text);
    }

    /// `state`, left out where the event has none (as serde skips it).
    fn state(&mut self, state: Option<StateHash>) {
        let Some(StateHash(hash)) = state else {
            return;
        };
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.name("state");
        self.0.push(b'"');
        self.0
            .extend((0..16).rev().map(|i| HEX[(hash >> (i * 4)) as usize & 0xf]));
        self.0.push(b'"');
    }

    fn list<T>(&mut self, values: &[T], write: fn(&mut Self, &T)) {
        self.0.push(b'[');
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                self.0.push(b',');
            }
            write(self, value);
        }
        self.0.push(b']');
    }

    fn order(&mut self, order: &Order) {
        self.raw("{\"order_id\":");
        self.number(order.order_id);
        self.number_field("client_id", order.client_id);
        self.text_field("customer", &order.customer);
        self.text_field("address", &order.address);
        self.number_field("created_at_ms", order.created_at_ms);
        self.text_field("status", order.status.as_str());
        self.number_field("subtotal_cents", order.subtotal_cents);
        self.raw(",\"items\":");
        self.list(&order.items, Line::item);
        if !order.payload.is_none() {
            self.number_field("payload_bytes", order.payload.bytes);
        }
        self.0.push(b'}');
    }

    fn item(&mut self, item: &LineItem) {
        self.raw("{\"line_item_id\":");
        self.number(item.line_item_id);
        self.text_field("product", &item.product);
        self.changeable(&item.colour, &item.size, item.quantity);
        self.number_field("unit_price_cents", item.unit_price_cents);
        self.0.push(b'}');
    }

    fn change(&mut self, change: &ItemChange) {
        self.raw("{\"line_item_id\":");
        self.number(change.line_item_id);
        self.changeable(&change.colour, &change.size, change.quantity);
        self.0.push(b'}');
    }

    /// What an `update_items` event may change of an item, in the order an item and
    /// a change both name it.
    fn changeable(&mut self, colour: &str, size: &str, quantity: u32) {
        self.text_field("colour", colour);
        self.text_field("size", size);
        self.number_field("quantity", quantity);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Generator, OrderStatus, Payload, Phase, WorkloadSpec};

    fn serde_line(event: &OrderEvent) -> Vec<u8> {
        serde_json::to_vec(event).unwrap()
    }

    fn hand_line(event: &OrderEvent) -> Vec<u8> {
        let mut out = Vec::new();
        write_event(&mut out, event);
        out
    }

    /// Every operation, each optional field with and without a value, and strings
    /// that need escaping.
    fn every_kind_of_operation() -> Vec<Operation> {
        let order = Order {
            order_id: u64::MAX,
            client_id: 0,
            customer: "Zoë \"Q\" Hale\\\n\u{1}\u{7f}".into(),
            address: "1 Felt Street, Luton".into(),
            created_at_ms: i64::MIN,
            status: OrderStatus::OutForDelivery,
            subtotal_cents: -5,
            items: vec![LineItem {
                line_item_id: 1,
                product: "Fez".into(),
                colour: "Teal\t".into(),
                size: "7 3/8".into(),
                quantity: u32::MAX,
                unit_price_cents: 999,
            }],
            payload: Payload::default(),
        };
        let change = ItemChange {
            line_item_id: 2,
            colour: "Plum".into(),
            size: "7".into(),
            quantity: 3,
        };
        let states = [
            None,
            Some(StateHash(0)),
            Some(StateHash(0xfedc_ba98_7654_3210)),
        ];
        let mut ops = vec![
            Operation::CreateOrder {
                order: Box::new(order.clone()),
            },
            Operation::CreateOrder {
                order: Box::new(Order {
                    payload: Payload::of(1 << 20),
                    ..order.clone()
                }),
            },
            Operation::CreateOrder {
                order: Box::new(Order {
                    items: Vec::new(),
                    ..order
                }),
            },
            Operation::ReadOrder { order_id: 7 },
            Operation::DeleteOrder { order_id: 0 },
            Operation::Write { key: 1, size: 1500 },
            Operation::Rewrite {
                key: 2,
                version: 3,
                size: 0,
            },
            Operation::Read { key: 4, version: 1 },
            Operation::Delete { key: u64::MAX },
        ];
        for state in states {
            ops.push(Operation::UpdateOrder {
                order_id: 9,
                created_at_ms: 1,
                status: OrderStatus::Cancelled,
                subtotal_cents: 0,
                state,
            });
            for changes in [Vec::new(), vec![change.clone(), change.clone()]] {
                ops.push(Operation::UpdateItems {
                    order_id: 9,
                    changes,
                    subtotal_cents: 12,
                    state,
                });
            }
            ops.push(Operation::UpdateStatus {
                order_id: 9,
                status: OrderStatus::Pending,
                state,
            });
        }
        ops
    }

    #[test]
    fn every_kind_of_event_is_written_as_serde_writes_it() {
        for (seq, op) in every_kind_of_operation().into_iter().enumerate() {
            for phase in [Phase::Load, Phase::Warmup, Phase::Measure] {
                let event = OrderEvent {
                    seq: seq as u64,
                    phase,
                    op: op.clone(),
                };
                assert_eq!(
                    String::from_utf8(hand_line(&event)).unwrap(),
                    String::from_utf8(serde_line(&event)).unwrap()
                );
            }
        }
    }

    #[test]
    fn generated_streams_are_written_as_serde_writes_them() {
        for preset in ["hatshop-random", "kv-50w-50r"] {
            let spec = WorkloadSpec::load(preset).unwrap();
            for event in Generator::new(&spec).take(20_000) {
                assert_eq!(hand_line(&event), serde_line(&event), "{preset}: {event:?}");
            }
        }
    }
}
