//! The hat-shop workload: domain types, the seeded generator, specs and presets, and
//! the JSON Lines form of the event stream. Depends on nothing else of ours.

mod book;
mod catalogue;
mod domain;
mod generator;
mod jsonl;
mod keys;
mod presets;
mod rng;
mod spec;

pub use book::OrderBook;
pub use domain::{
    EventType, ItemChange, LineItem, Operation, Order, OrderEvent, OrderId, OrderStatus, Phase,
};
pub use generator::Generator;
pub use jsonl::{EventsFileError, EventsReader, PlanHasher, hex, write_events};
pub use keys::KeyDistribution;
pub use presets::{all as presets, find as preset};
pub use rng::splitmix64;
pub use spec::{ItemsPerOrder, Mix, SpecError, WorkloadSpec};
