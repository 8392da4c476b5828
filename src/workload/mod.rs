//! The workloads: hat-shop orders and key-value records, the seeded generator, specs and
//! presets, and the JSON Lines form of the event stream. Depends on nothing else of ours.

mod book;
mod catalogue;
mod domain;
mod event_line;
mod events_file;
pub mod faults;
mod generator;
mod jsonl;
mod keys;
pub mod kv;
mod live;
mod live_order;
pub mod payload;
mod presets;
mod rng;
mod source;
mod spec;
pub mod state;
mod timed_warmup;

pub use book::{FillStates, OrderBook, lacks_state};
pub use domain::{
    EventType, ItemChange, ItemsUpdate, KeyId, LineItem, Operation, Order, OrderEvent, OrderId,
    OrderStatus, OrderUpdate, Payload, Phase, StateHash, StatusUpdate, Target,
};
pub use events_file::{check_events_file, file_sha256, open_regular};
pub use faults::{Fault, FaultEntry, MAX_NODES, NodeAction};
pub use generator::Generator;
pub use jsonl::{EventsFileError, EventsReader, PlanHasher, hex, write_events};
pub use keys::KeyDistribution;
pub use kv::{KeyText, ReadVerdict};
pub use payload::OrderBytes;
pub use presets::{all as presets, find as preset};
pub use rng::splitmix64;
pub use source::{EventSource, EventsFileInfo};
pub use spec::{ItemsPerOrder, Mix, SpecError, WorkloadSpec};
pub use timed_warmup::{TimedWarmup, WarmupCount, WarmupEnds};

/// The version of the event stream: what the generator, the catalogues, the state hash,
/// key texts and value bytes make of a spec and seed. A change to any of them is a new
/// version; run.json records it and `verify` refuses a folder made by another one.
pub const STREAM_VERSION: u32 = 1;
