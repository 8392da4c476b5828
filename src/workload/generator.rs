//! The seeded generator: turns a spec into the event stream, one event at a time.
//!
//! It remembers the live orders (ids, statuses, item prices and quantities), so reads, updates and deletes always target an order
//! that exists at that point of the stream. When the mix asks for one of those while
//! no order exists, a create is generated instead.

use std::collections::HashMap;

use super::catalogue::{CITIES, COLOURS, FIRST_NAMES, LAST_NAMES, PRODUCTS, SIZES, STREETS};
use super::domain::{
    EventType, ItemChange, LineItem, Operation, Order, OrderEvent, OrderId, OrderStatus, Phase,
};
use super::rng::StreamRng;
use super::spec::WorkloadSpec;

/// What the generator remembers of a live order: just enough to write its updates.
struct LiveOrder {
    status: OrderStatus,
    /// (line_item_id, unit price, quantity), in line item order.
    items: Vec<(u64, i64, u32)>,
}

impl LiveOrder {
    fn subtotal_cents(&self) -> i64 {
        self.items
            .iter()
            .map(|&(_, price, qty)| price * i64::from(qty))
            .sum()
    }
}

/// 2026-01-01T00:00:00Z; each event advances the shop's clock by one second.
const EPOCH_MS: i64 = 1_767_225_600_000;
const CLIENTS: u64 = 10_000;

pub struct Generator {
    spec: WorkloadSpec,
    rng: StreamRng,
    seq: u64,
    next_order_id: OrderId,
    next_line_item_id: u64,
    /// Live orders in creation order (zipfian and latest rank by it).
    live: Vec<OrderId>,
    orders: HashMap<OrderId, LiveOrder>,
    cumulative_weights: [f64; 5],
}

impl Generator {
    pub fn new(spec: &WorkloadSpec) -> Self {
        let total = spec.mix.total();
        let mut cumulative_weights = [0.0; 5];
        let mut sum = 0.0;
        for (slot, event) in cumulative_weights.iter_mut().zip(EventType::ALL) {
            sum += spec.mix.weight(event) / total;
            *slot = sum;
        }
        Generator {
            spec: spec.clone(),
            rng: StreamRng::from_seed(spec.seed),
            seq: 0,
            next_order_id: 1,
            next_line_item_id: 1,
            live: Vec::new(),
            orders: HashMap::new(),
            cumulative_weights,
        }
    }

    fn phase_of(&self, seq: u64) -> Phase {
        if seq < self.spec.initial_orders {
            Phase::Load
        } else if seq < self.spec.initial_orders + self.spec.warmup {
            Phase::Warmup
        } else {
            Phase::Measure
        }
    }

    fn choose_type(&mut self) -> EventType {
        let u = self.rng.unit_f64();
        let chosen = EventType::ALL
            .into_iter()
            .zip(self.cumulative_weights)
            .find(|&(_, limit)| u < limit)
            .map(|(event, _)| event)
            // Rounding can leave the last limit a hair below 1.0.
            .unwrap_or_else(|| {
                *EventType::ALL
                    .iter()
                    .rev()
                    .find(|&&e| self.spec.mix.weight(e) > 0.0)
                    .expect("validated: some weight is positive")
            });
        if chosen != EventType::CreateOrder && self.live.is_empty() {
            EventType::CreateOrder
        } else {
            chosen
        }
    }

    fn pick_live_index(&mut self) -> usize {
        self.spec.key_distribution.pick_index(
            &mut self.rng,
            self.live.len(),
            self.spec.zipf_exponent,
        )
    }

    fn new_order(&mut self, seq: u64) -> Order {
        let order_id = self.next_order_id;
        self.next_order_id += 1;
        let client_id = self.rng.between(1, CLIENTS);
        let customer = format!(
            "{} {}",
            self.rng.pick(FIRST_NAMES),
            self.rng.pick(LAST_NAMES)
        );
        let address = format!(
            "{} {}, {}",
            self.rng.between(1, 250),
            self.rng.pick(STREETS),
            self.rng.pick(CITIES)
        );
        let per_order = self.spec.items_per_order;
        let count = self
            .rng
            .between(u64::from(per_order.min), u64::from(per_order.max));
        let items: Vec<LineItem> = (0..count)
            .map(|_| {
                let &(product, price) = self.rng.pick(PRODUCTS);
                let line_item_id = self.next_line_item_id;
                self.next_line_item_id += 1;
                LineItem {
                    line_item_id,
                    product: product.to_string(),
                    colour: self.rng.pick(COLOURS).to_string(),
                    size: self.rng.pick(SIZES).to_string(),
                    quantity: self.rng.between(1, 3) as u32,
                    unit_price_cents: price,
                }
            })
            .collect();
        let mut order = Order {
            order_id,
            client_id,
            customer,
            address,
            created_at_ms: EPOCH_MS + seq as i64 * 1000,
            status: OrderStatus::Pending,
            subtotal_cents: 0,
            items,
        };
        order.subtotal_cents = order.items_subtotal_cents();
        order
    }

    fn update_order(&mut self, order_id: OrderId) -> Operation {
        let mut order = self.orders.remove(&order_id).expect("live order is known");
        let n = order.items.len() as u64;
        let changed = self.rng.between(1, n);
        let first = self.rng.below(n);
        let mut changes = Vec::with_capacity(changed as usize);
        for k in 0..changed {
            let (line_item_id, _, quantity) = &mut order.items[((first + k) % n) as usize];
            let colour = self.rng.pick(COLOURS).to_string();
            let size = self.rng.pick(SIZES).to_string();
            *quantity = self.rng.between(1, 3) as u32;
            changes.push(ItemChange {
                line_item_id: *line_item_id,
                colour,
                size,
                quantity: *quantity,
            });
        }
        changes.sort_unstable_by_key(|c| c.line_item_id);
        let subtotal_cents = order.subtotal_cents();
        self.orders.insert(order_id, order);
        Operation::UpdateOrder {
            order_id,
            changes,
            subtotal_cents,
        }
    }

    fn next_operation(&mut self, seq: u64, phase: Phase) -> Operation {
        let event_type = if phase == Phase::Load {
            EventType::CreateOrder
        } else {
            self.choose_type()
        };
        if event_type == EventType::CreateOrder {
            let order = self.new_order(seq);
            self.live.push(order.order_id);
            let items = order
                .items
                .iter()
                .map(|i| (i.line_item_id, i.unit_price_cents, i.quantity))
                .collect();
            let live = LiveOrder {
                status: order.status,
                items,
            };
            self.orders.insert(order.order_id, live);
            return Operation::CreateOrder { order };
        }
        let index = self.pick_live_index();
        let order_id = self.live[index];
        match event_type {
            EventType::ReadOrder => Operation::ReadOrder { order_id },
            EventType::UpdateOrder => self.update_order(order_id),
            EventType::UpdateStatus => {
                let order = self.orders.get_mut(&order_id).expect("live order is known");
                // One of the five other statuses, uniformly.
                let step = 1 + self.rng.below(OrderStatus::ALL.len() as u64 - 1) as usize;
                let current = OrderStatus::ALL.iter().position(|&s| s == order.status);
                let status =
                    OrderStatus::ALL[(current.unwrap_or(0) + step) % OrderStatus::ALL.len()];
                order.status = status;
                Operation::UpdateStatus { order_id, status }
            }
            EventType::DeleteOrder => {
                self.live.remove(index);
                self.orders.remove(&order_id);
                Operation::DeleteOrder { order_id }
            }
            EventType::CreateOrder => unreachable!("handled above"),
        }
    }
}

impl Iterator for Generator {
    type Item = OrderEvent;

    fn next(&mut self) -> Option<OrderEvent> {
        if self.seq >= self.spec.total_events() {
            return None;
        }
        let seq = self.seq;
        self.seq += 1;
        let phase = self.phase_of(seq);
        let op = self.next_operation(seq, phase);
        Some(OrderEvent { seq, phase, op })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.spec.total_events() - self.seq) as usize;
        (left, Some(left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{OrderBook, presets};

    fn spec_with_events(events: u64) -> WorkloadSpec {
        let mut spec = presets::find("hatshop-random").unwrap();
        spec.events = events;
        spec
    }

    #[test]
    fn mix_proportions_follow_the_weights() {
        let mut spec = spec_with_events(100_000);
        spec.mix.read_order = 2.0; // 2/6 reads, 1/6 of each other type
        let mut counts = [0u64; 5];
        for event in Generator::new(&spec).filter(|e| e.phase == Phase::Measure) {
            counts[event.op.event_type().index()] += 1;
        }
        let total: u64 = counts.iter().sum();
        assert_eq!(total, 100_000);
        for event in EventType::ALL {
            let expected = spec.mix.weight(event) / spec.mix.total();
            let got = counts[event.index()] as f64 / total as f64;
            assert!(
                (got - expected).abs() < 0.02,
                "{}: {got} vs {expected}",
                event.as_str()
            );
        }
    }

    #[test]
    fn targets_always_exist_at_that_point_of_the_stream() {
        for dist in ["uniform", "zipfian", "latest"] {
            let mut spec = spec_with_events(50_000);
            spec.key_distribution = serde_json::from_str(&format!("\"{dist}\"")).unwrap();
            let mut book = OrderBook::new();
            for event in Generator::new(&spec) {
                match &event.op {
                    Operation::CreateOrder { order } => {
                        assert!(book.get(order.order_id).is_none(), "order id reused");
                        assert_eq!(order.subtotal_cents, order.items_subtotal_cents());
                    }
                    op => assert!(
                        book.get(op.order_id()).is_some(),
                        "{dist}: event {} targets missing order {}",
                        event.seq,
                        op.order_id()
                    ),
                }
                book.apply(&event.op);
            }
        }
    }

    #[test]
    fn phases_come_in_order_with_the_spec_counts() {
        let mut spec = spec_with_events(1_000);
        spec.warmup = 100;
        let events: Vec<OrderEvent> = Generator::new(&spec).collect();
        assert_eq!(events.len(), 500 + 100 + 1_000);
        assert!(
            events[..500]
                .iter()
                .all(|e| e.phase == Phase::Load && e.op.event_type() == EventType::CreateOrder)
        );
        assert!(events[500..600].iter().all(|e| e.phase == Phase::Warmup));
        assert!(events[600..].iter().all(|e| e.phase == Phase::Measure));
        assert!(events.iter().enumerate().all(|(i, e)| e.seq == i as u64));
    }

    #[test]
    fn updates_keep_the_subtotal_equal_to_the_items() {
        let mut spec = spec_with_events(5_000);
        spec.mix = crate::workload::spec::Mix {
            update_order: 1.0,
            ..Default::default()
        };
        let mut book = OrderBook::new();
        for event in Generator::new(&spec) {
            book.apply(&event.op);
            let order = book.get(event.op.order_id()).unwrap();
            assert_eq!(order.subtotal_cents, order.items_subtotal_cents());
        }
    }
}
