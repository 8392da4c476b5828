//! The seeded generator: turns a spec into the event stream, one event at a time.
//!
//! It remembers the live orders and keys, compactly (catalogue indices, not strings;
//! a version per key, not values), so that reads, updates and deletes always target
//! something that exists at that point of the stream, and so that every write to an
//! order carries the hash of the order's state after it. When the mix asks for an event
//! on an order (or key) while none is live, a create (or write) is generated instead.

use super::catalogue::{CITIES, COLOURS, FIRST_NAMES, LAST_NAMES, PRODUCTS, SIZES, STREETS};
use super::domain::{
    EventType, ItemChange, KeyId, LineItem, Operation, Order, OrderEvent, OrderId, OrderStatus,
    Payload, Phase, StateHash,
};
use super::live::LiveTable;
use super::live_order::{Items, LiveItem, LiveOrder};
use super::rng::StreamRng;
use super::spec::WorkloadSpec;

/// 2026-01-01T00:00:00Z; each event advances the shop's clock by one second.
const EPOCH_MS: i64 = 1_767_225_600_000;
const CLIENTS: u64 = 10_000;
/// Discounts an `update_order` may give, in percent.
const DISCOUNTS: [u8; 5] = [0, 5, 10, 15, 20];

/// The seeded event stream of a spec: the same spec gives the same events.
pub struct Generator {
    spec: WorkloadSpec,
    rng: StreamRng,
    seq: u64,
    next_order_id: OrderId,
    next_line_item_id: u64,
    /// Live orders in creation order (about 70 bytes each).
    orders: LiveTable<LiveOrder>,
    /// Live keys in creation order, with their current version (16 bytes each).
    keys: LiveTable<u32>,
    next_key: KeyId,
    cumulative_weights: [f64; EventType::ALL.len()],
    /// Ctrl-C was heard while the held events were passed over: the stream gives none.
    interrupted: bool,
}

impl Generator {
    /// A generator at the stream's first event the database does not hold: the held
    /// ones (`held_events`) are generated and passed over, so the rest are the events
    /// one long run would have sent.
    /// Passing over millions takes seconds, so it listens for Ctrl-C: heard, the
    /// stream gives no event at all, and the run ends as interrupted before sending any.
    pub fn new(spec: &WorkloadSpec) -> Self {
        let mut generator = Self::from_start(spec);
        while generator.seq < generator.spec.held_events {
            if generator.seq.is_multiple_of(65_536) && crate::interrupt::requested() {
                generator.interrupted = true;
                break;
            }
            generator.generate();
        }
        generator
    }

    /// The live orders and the state each is in, at this point of the stream: what
    /// a run that goes on from here expects to read of the orders it did not write.
    pub fn order_states(&self) -> Vec<(OrderId, StateHash)> {
        self.orders
            .iter()
            .map(|(order_id, order)| (order_id, order.state(order_id)))
            .collect()
    }

    /// A generator at event 0, the held events included (what `verify` replays).
    pub fn from_start(spec: &WorkloadSpec) -> Self {
        let total = spec.mix.total();
        let mut cumulative_weights = [0.0; EventType::ALL.len()];
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
            orders: LiveTable::default(),
            keys: LiveTable::default(),
            next_key: 0,
            cumulative_weights,
            interrupted: false,
        }
    }

    /// Events before the first warm-up event: the load, or all the database holds.
    fn first_unheld(&self) -> u64 {
        self.spec.first_unheld()
    }

    /// Keeps the warm-up going until [`Generator::end_warmup`], whatever the spec's count.
    pub fn open_warmup(&mut self) {
        self.spec.warmup = u64::MAX / 4;
    }

    /// Whether the next event is a warm-up event.
    pub fn in_warmup(&self) -> bool {
        self.phase_of(self.seq) == Phase::Warmup
    }

    /// Warm-up events given out so far.
    pub fn warmup_given(&self) -> u64 {
        self.seq
            .saturating_sub(self.first_unheld())
            .min(self.spec.warmup)
    }

    /// Ends the warm-up here: the next event is the first measured one. The stream is
    /// then the one a spec whose warm-up had this count gives, event for event, since
    /// an event's phase only labels it (loading aside). Returns that count.
    pub fn end_warmup(&mut self) -> u64 {
        self.spec.warmup = self.warmup_given();
        self.spec.warmup
    }

    /// An event's phase; a held one past the load is labelled warm-up, as no run
    /// measures it again.
    fn phase_of(&self, seq: u64) -> Phase {
        if seq < self.spec.load_events() {
            Phase::Load
        } else if seq < self.first_unheld() + self.spec.warmup {
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
        match chosen {
            EventType::ReadOrder
            | EventType::UpdateOrder
            | EventType::UpdateItems
            | EventType::UpdateStatus
            | EventType::DeleteOrder
                if self.orders.is_empty() =>
            {
                EventType::CreateOrder
            }
            EventType::Rewrite | EventType::Read | EventType::Delete if self.keys.is_empty() => {
                EventType::Write
            }
            other => other,
        }
    }

    /// The rank of a live target, by the spec's key distribution.
    fn pick(rng: &mut StreamRng, spec: &WorkloadSpec, live: usize) -> usize {
        spec.key_distribution
            .pick_index(rng, live, spec.zipf_exponent)
    }

    fn create_order(&mut self, seq: u64) -> Operation {
        let order_id = self.next_order_id;
        self.next_order_id += 1;
        let rng = &mut self.rng;
        let client_id = rng.between(1, CLIENTS) as u32;
        let first_name = rng.below(FIRST_NAMES.len() as u64) as u8;
        let last_name = rng.below(LAST_NAMES.len() as u64) as u8;
        let street_no = rng.between(1, 250) as u8;
        let street = rng.below(STREETS.len() as u64) as u8;
        let city = rng.below(CITIES.len() as u64) as u8;
        let per_order = self.spec.items_per_order;
        let count = rng.between(u64::from(per_order.min), u64::from(per_order.max));
        let items: Vec<LiveItem> = (0..count)
            .map(|_| LiveItem {
                product: rng.below(PRODUCTS.len() as u64) as u8,
                colour: rng.below(COLOURS.len() as u64) as u8,
                size: rng.below(SIZES.len() as u64) as u8,
                quantity: rng.between(1, 3) as u8,
            })
            .collect();
        // Drawn only where the workload asks for payloads, so a stream without is the
        // same draw for draw.
        let payload_bytes = self.spec.order_bytes.map_or(0, |range| {
            rng.between(range.min.into(), range.max.into()) as u32
        });
        let live = LiveOrder {
            created_at_ms: EPOCH_MS + seq as i64 * 1000,
            client_id,
            first_name,
            last_name,
            street_no,
            street,
            city,
            status: 0,
            discount_pct: 0,
            first_item_id: self.next_line_item_id,
            payload_bytes,
            items: Items::new(&items),
        };
        self.next_line_item_id += count;
        let order = Order {
            order_id,
            client_id: u64::from(client_id),
            customer: live.customer(),
            address: live.address(),
            created_at_ms: live.created_at_ms,
            status: live.status(),
            subtotal_cents: live.subtotal_cents(),
            items: live
                .items
                .iter()
                .enumerate()
                .map(|(k, i)| {
                    let (product, price) = PRODUCTS[i.product as usize];
                    LineItem {
                        line_item_id: live.first_item_id + k as u64,
                        product: product.into(),
                        colour: COLOURS[i.colour as usize].into(),
                        size: SIZES[i.size as usize].into(),
                        quantity: u32::from(i.quantity),
                        unit_price_cents: price,
                    }
                })
                .collect(),
            payload: Payload::of(payload_bytes),
        };
        self.orders.push(order_id, live);
        Operation::CreateOrder {
            order: Box::new(order),
        }
    }

    /// Moves an order to one of the five other statuses, uniformly.
    fn next_status(rng: &mut StreamRng, order: &mut LiveOrder) -> OrderStatus {
        let n = OrderStatus::ALL.len() as u64;
        order.status = ((u64::from(order.status) + 1 + rng.below(n - 1)) % n) as u8;
        order.status()
    }

    fn order_event(&mut self, seq: u64, event_type: EventType) -> Operation {
        let rank = Self::pick(&mut self.rng, &self.spec, self.orders.len());
        let rng = &mut self.rng;
        let (order_id, order) = self.orders.nth_mut(rank);
        match event_type {
            EventType::ReadOrder => Operation::ReadOrder { order_id },
            EventType::UpdateOrder => {
                let status = Self::next_status(rng, order);
                order.discount_pct = DISCOUNTS[rng.below(DISCOUNTS.len() as u64) as usize];
                order.created_at_ms = EPOCH_MS + seq as i64 * 1000;
                Operation::UpdateOrder {
                    order_id,
                    created_at_ms: order.created_at_ms,
                    status,
                    subtotal_cents: order.subtotal_cents(),
                    state: Some(order.state(order_id)),
                }
            }
            EventType::UpdateItems => {
                let n = order.items.len() as u64;
                let changed = rng.between(1, n);
                let first = rng.below(n);
                let mut changes = Vec::with_capacity(changed as usize);
                for k in 0..changed {
                    let index = ((first + k) % n) as usize;
                    let item = &mut order.items[index];
                    item.colour = rng.below(COLOURS.len() as u64) as u8;
                    item.size = rng.below(SIZES.len() as u64) as u8;
                    item.quantity = rng.between(1, 3) as u8;
                    changes.push(ItemChange {
                        line_item_id: order.first_item_id + index as u64,
                        colour: COLOURS[item.colour as usize].into(),
                        size: SIZES[item.size as usize].into(),
                        quantity: u32::from(item.quantity),
                    });
                }
                changes.sort_unstable_by_key(|c| c.line_item_id);
                Operation::UpdateItems {
                    order_id,
                    changes,
                    subtotal_cents: order.subtotal_cents(),
                    state: Some(order.state(order_id)),
                }
            }
            EventType::UpdateStatus => {
                let status = Self::next_status(rng, order);
                Operation::UpdateStatus {
                    order_id,
                    status,
                    state: Some(order.state(order_id)),
                }
            }
            EventType::DeleteOrder => {
                self.orders.remove(order_id);
                Operation::DeleteOrder { order_id }
            }
            _ => unreachable!("order events only"),
        }
    }

    fn key_event(&mut self, event_type: EventType) -> Operation {
        let size = self.spec.value_size;
        if event_type == EventType::Write {
            let key = self.next_key;
            self.next_key += 1;
            self.keys.push(key, 1);
            return Operation::Write { key, size };
        }
        let rank = Self::pick(&mut self.rng, &self.spec, self.keys.len());
        let (key, version) = self.keys.nth_mut(rank);
        match event_type {
            EventType::Rewrite => {
                *version += 1;
                Operation::Rewrite {
                    key,
                    version: *version,
                    size,
                }
            }
            EventType::Read => Operation::Read {
                key,
                version: *version,
            },
            EventType::Delete => {
                self.keys.remove(key);
                Operation::Delete { key }
            }
            _ => unreachable!("key-value events only"),
        }
    }

    fn next_operation(&mut self, seq: u64, phase: Phase) -> Operation {
        let event_type = match phase {
            Phase::Load if seq < self.spec.initial_orders => EventType::CreateOrder,
            Phase::Load => EventType::Write,
            _ => self.choose_type(),
        };
        match event_type {
            EventType::CreateOrder => self.create_order(seq),
            EventType::ReadOrder
            | EventType::UpdateOrder
            | EventType::UpdateItems
            | EventType::UpdateStatus
            | EventType::DeleteOrder => self.order_event(seq, event_type),
            EventType::Write | EventType::Rewrite | EventType::Read | EventType::Delete => {
                self.key_event(event_type)
            }
        }
    }
}

impl Generator {
    fn generate(&mut self) -> Option<OrderEvent> {
        if self.interrupted || self.seq >= self.spec.total_events() {
            return None;
        }
        let seq = self.seq;
        self.seq += 1;
        let phase = self.phase_of(seq);
        let op = self.next_operation(seq, phase);
        Some(OrderEvent { seq, phase, op })
    }
}

impl Iterator for Generator {
    type Item = OrderEvent;

    fn next(&mut self) -> Option<OrderEvent> {
        self.generate()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.spec.total_events() - self.seq) as usize;
        (left, Some(left))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::workload::{OrderBook, presets, state};

    fn spec_with_events(name: &str, events: u64) -> WorkloadSpec {
        let mut spec = presets::find(name).unwrap();
        spec.events = events;
        spec
    }

    #[test]
    fn mix_proportions_follow_the_weights() {
        let mut spec = spec_with_events("hatshop-random", 100_000);
        spec.mix.read_order = 2.0; // 2/7 reads, 1/7 of each other type
        let mut counts = [0u64; EventType::ALL.len()];
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
    fn targets_exist_and_states_match_the_full_model() {
        for dist in ["uniform", "zipfian", "latest", "special"] {
            let mut spec = spec_with_events("hatshop-random", 30_000);
            spec.key_distribution = serde_json::from_str(&format!("\"{dist}\"")).unwrap();
            let mut book = OrderBook::new();
            for event in Generator::new(&spec) {
                let target = event.op.target().id();
                match &event.op {
                    Operation::CreateOrder { order } => {
                        assert!(book.get(order.order_id).is_none(), "order id reused");
                        assert_eq!(order.subtotal_cents, order.items_subtotal_cents());
                    }
                    _ => assert!(
                        book.get(target).is_some(),
                        "{dist}: event {} targets missing order {target}",
                        event.seq
                    ),
                }
                book.apply(&event.op);
                let claimed = match &event.op {
                    Operation::UpdateOrder { state, .. }
                    | Operation::UpdateItems { state, .. }
                    | Operation::UpdateStatus { state, .. } => *state,
                    _ => None,
                };
                if let Some(claimed) = claimed {
                    let order = book.get(target).unwrap();
                    assert_eq!(claimed, state::of_order(order), "event {}", event.seq);
                }
            }
        }
    }

    #[test]
    fn key_versions_count_the_writes_to_each_key() {
        let mut spec = spec_with_events("kv-10w-40rw-50r", 20_000);
        spec.initial_records = 500;
        spec.warmup = 100;
        spec.mix.delete = 5.0;
        let mut versions: HashMap<KeyId, u32> = HashMap::new();
        for event in Generator::new(&spec) {
            match event.op {
                Operation::Write { key, size } => {
                    assert_eq!(size, spec.value_size);
                    assert!(versions.insert(key, 1).is_none(), "key {key} written twice");
                }
                Operation::Rewrite { key, version, .. } => {
                    let v = versions.get_mut(&key).expect("rewrite of a live key");
                    assert_eq!(version, *v + 1);
                    *v = version;
                }
                Operation::Read { key, version } => assert_eq!(versions[&key], version),
                Operation::Delete { key } => assert!(versions.remove(&key).is_some()),
                _ => panic!("order event in a key-value mix"),
            }
        }
        assert!(versions.len() > 500, "writes added keys");
    }

    #[test]
    fn phases_come_in_order_with_the_spec_counts() {
        let mut spec = spec_with_events("hatshop-random", 1_000);
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
    fn subtotals_are_the_discounted_items() {
        let mut spec = spec_with_events("hatshop-random", 5_000);
        spec.mix = crate::workload::spec::Mix {
            update_order: 1.0,
            update_items: 1.0,
            ..Default::default()
        };
        let mut book = OrderBook::new();
        for event in Generator::new(&spec) {
            book.apply(&event.op);
            let order = book.get(event.op.target().id()).unwrap();
            let full = order.items_subtotal_cents();
            assert!(
                DISCOUNTS
                    .iter()
                    .any(|d| order.subtotal_cents == full * i64::from(100 - d) / 100),
                "{order:?}"
            );
        }
    }

    /// A run on a database that holds the first runs' events goes on with the events
    /// one long run would have sent: the same seq, operation and state for each.
    #[test]
    fn a_held_stream_goes_on_where_the_whole_one_is() {
        let mut whole = spec_with_events("hatshop-random", 700);
        whole.initial_orders = 100;
        whole.warmup = 200;
        let mut held = whole.clone();
        held.held_events = 100 + 200 + 300;
        held.warmup = 50;
        held.events = 350;
        let tail: Vec<OrderEvent> = Generator::new(&whole).skip(600).collect();
        let went_on: Vec<OrderEvent> = Generator::new(&held).collect();
        assert_eq!(went_on.len(), 400);
        for (a, b) in tail.iter().zip(&went_on) {
            assert_eq!((a.seq, &a.op), (b.seq, &b.op));
        }
        assert!(went_on[..50].iter().all(|e| e.phase == Phase::Warmup));
        assert!(went_on[50..].iter().all(|e| e.phase == Phase::Measure));
        let from_start: Vec<OrderEvent> = Generator::from_start(&held).collect();
        assert_eq!(from_start.len(), 1000);
        assert_eq!(from_start[0].phase, Phase::Load);
    }

    #[test]
    fn a_database_holds_the_whole_load_or_none_of_it() {
        let mut spec = spec_with_events("hatshop-random", 10);
        spec.initial_orders = 100;
        spec.held_events = 99;
        let error = spec.validate().unwrap_err().to_string();
        assert!(
            error.contains("held_events = 99 is less than the load's 100"),
            "{error}"
        );
    }
}
