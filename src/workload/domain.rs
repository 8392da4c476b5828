//! The hat-shop domain: orders, their line items, and the events that change them; and
//! the key-value records of the key-value workloads.
//!
//! Money is kept in integer cents and times in integer milliseconds so that every
//! database stores exactly what the event stream says, with no float rounding.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The hash of an order's whole state (`state` computes it; events carry it). In JSON: 16 hex digits, so that tools that read
/// numbers as doubles do not round it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct StateHash(pub u64);

impl fmt::Debug for StateHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl Serialize for StateHash {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format!("{:016x}", self.0))
    }
}

impl<'de> Deserialize<'de> for StateHash {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <&str>::deserialize(deserializer)?;
        if text.len() != 16 {
            return Err(serde::de::Error::custom("state must be 16 hex digits"));
        }
        u64::from_str_radix(text, 16)
            .map(StateHash)
            .map_err(|_| serde::de::Error::custom("state must be 16 hex digits"))
    }
}

/// Identifies an order; the unit by which order events are split into lanes.
pub type OrderId = u64;

/// Identifies a key-value record (its text form is [`super::KeyText`]); the unit by
/// which key-value events are split into lanes.
pub type KeyId = u64;

/// Where an order is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OrderStatus {
    Pending,
    Processing,
    Dispatched,
    OutForDelivery,
    Delivered,
    Cancelled,
}

impl OrderStatus {
    /// Every status, in the order an order passes through them.
    pub const ALL: [OrderStatus; 6] = [
        OrderStatus::Pending,
        OrderStatus::Processing,
        OrderStatus::Dispatched,
        OrderStatus::OutForDelivery,
        OrderStatus::Delivered,
        OrderStatus::Cancelled,
    ];

    /// The name stored in databases and shown to people.
    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Pending => "pending",
            OrderStatus::Processing => "processing",
            OrderStatus::Dispatched => "dispatched",
            OrderStatus::OutForDelivery => "out_for_delivery",
            OrderStatus::Delivered => "delivered",
            OrderStatus::Cancelled => "cancelled",
        }
    }

    /// The status a stored name names.
    pub fn parse(name: &str) -> Option<OrderStatus> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// A product, colour or size: borrowed from the catalogue when the generator draws it
/// (no allocation per item on the event source's thread), owned when read from a file
/// or back from a store.
pub type CatalogueWord = Cow<'static, str>;

/// One hat on an order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineItem {
    pub line_item_id: u64,
    pub product: CatalogueWord,
    pub colour: CatalogueWord,
    pub size: CatalogueWord,
    pub quantity: u32,
    pub unit_price_cents: i64,
}

impl LineItem {
    /// Unit price times quantity.
    pub fn total_cents(&self) -> i64 {
        self.unit_price_cents * i64::from(self.quantity)
    }
}

/// An order with its line items (kept sorted by `line_item_id`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Order {
    pub order_id: OrderId,
    pub client_id: u64,
    pub customer: String,
    pub address: String,
    pub created_at_ms: i64,
    pub status: OrderStatus,
    pub subtotal_cents: i64,
    pub items: Vec<LineItem>,
    /// The workload's `order_bytes`: in the stream as its length (`payload_bytes`), left
    /// out where there is none, so a stream without payloads is what it always was.
    #[serde(
        default,
        rename = "payload_bytes",
        skip_serializing_if = "Payload::is_none"
    )]
    pub payload: Payload,
}

/// The largest payload a workload may ask for: far past what an order row holds in a
/// shop, and well inside every store's limits for one text value (MySQL's MEDIUMTEXT
/// holds 16 MiB).
pub const MAX_ORDER_BYTES: u32 = 1 << 20;

/// An order's payload: `bytes` of text made from the order's id (see
/// `super::payload`), so a stream names it by its length, as a key-value record's value
/// is named by its size. In JSON: the length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Payload {
    pub bytes: u32,
    /// Read back as other text than the order's own of that length; never in a stream.
    pub garbled: bool,
}

impl Payload {
    /// An order with no payload, as every order of a workload without `order_bytes`.
    pub fn is_none(&self) -> bool {
        *self == Payload::default()
    }

    /// The payload of `bytes` made as the stream makes it.
    pub fn of(bytes: u32) -> Payload {
        Payload {
            bytes,
            garbled: false,
        }
    }
}

impl Serialize for Payload {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(self.bytes)
    }
}

impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let bytes = u32::deserialize(deserializer)?;
        if bytes > MAX_ORDER_BYTES {
            return Err(serde::de::Error::custom(format!(
                "payload_bytes must be at most {}",
                MAX_ORDER_BYTES
            )));
        }
        Ok(Payload::of(bytes))
    }
}

impl Order {
    /// The subtotal as the items say it must be, before any discount.
    pub fn items_subtotal_cents(&self) -> i64 {
        self.items.iter().map(LineItem::total_cents).sum()
    }

    /// The study's update: date, status and subtotal.
    pub fn apply_update(&mut self, update: &OrderUpdate) {
        self.created_at_ms = update.created_at_ms;
        self.status = update.status;
        self.subtotal_cents = update.subtotal_cents;
    }

    /// New colour, size and quantity for the items named (others are left), and the
    /// new subtotal.
    pub fn apply_item_changes(&mut self, changes: &[ItemChange], subtotal_cents: i64) {
        for change in changes {
            if let Some(item) = self
                .items
                .iter_mut()
                .find(|i| i.line_item_id == change.line_item_id)
            {
                item.colour.clone_from(&change.colour);
                item.size.clone_from(&change.size);
                item.quantity = change.quantity;
            }
        }
        self.subtotal_cents = subtotal_cents;
    }
}

/// New attribute values for one line item of an `update_items` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemChange {
    pub line_item_id: u64,
    pub colour: CatalogueWord,
    pub size: CatalogueWord,
    pub quantity: u32,
}

/// The study's order update: one statement that sets the order row's date, status and
/// subtotal (`UPDATE orders SET date_created=?, status=?, order_subTotal=? …`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderUpdate {
    pub order_id: OrderId,
    pub created_at_ms: i64,
    pub status: OrderStatus,
    pub subtotal_cents: i64,
}

/// An order's new status, alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusUpdate {
    pub order_id: OrderId,
    pub status: OrderStatus,
}

/// The study's line-item update: new attributes for some of an order's items, and the
/// order's subtotal after them, so that no store needs a read-modify-write.
#[derive(Debug, Clone, Copy)]
pub struct ItemsUpdate<'a> {
    pub order_id: OrderId,
    pub changes: &'a [ItemChange],
    pub subtotal_cents: i64,
}

/// What one event does. The JSON form is tagged by `type`.
///
/// Writes to an order carry `state`, the hash of the order as the stream says it is
/// after the event (see [`super::state`]): that is all a lane or `verify` keeps of an
/// order. It may be left out of hand-written events; their orders' reads are then not
/// checked, and `verify` rebuilds whole orders instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Operation {
    CreateOrder {
        /// Boxed: an order is 112 bytes, the other operations 56 at most, and every
        /// event crosses from the event source's thread to a lane's by value.
        order: Box<Order>,
    },
    ReadOrder {
        order_id: OrderId,
    },
    /// The study's update of the order row (see [`OrderUpdate`]).
    UpdateOrder {
        order_id: OrderId,
        created_at_ms: i64,
        status: OrderStatus,
        subtotal_cents: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        state: Option<StateHash>,
    },
    UpdateItems {
        order_id: OrderId,
        changes: Vec<ItemChange>,
        /// The order's subtotal after the change, so no store needs a read-modify-write.
        subtotal_cents: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        state: Option<StateHash>,
    },
    UpdateStatus {
        order_id: OrderId,
        status: OrderStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        state: Option<StateHash>,
    },
    DeleteOrder {
        order_id: OrderId,
    },
    /// Put a new key (its version 1).
    Write {
        key: KeyId,
        size: u32,
    },
    /// Put an existing key with its next version.
    Rewrite {
        key: KeyId,
        version: u32,
        size: u32,
    },
    /// Get an existing key; `version` is the one the stream says it holds.
    Read {
        key: KeyId,
        version: u32,
    },
    Delete {
        key: KeyId,
    },
}

/// What decides which lane runs an event: events on one target stay in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    Order(OrderId),
    Key(KeyId),
}

impl Target {
    /// The number lanes are dealt by.
    pub fn id(self) -> u64 {
        match self {
            Target::Order(id) | Target::Key(id) => id,
        }
    }
}

impl Operation {
    /// The study's order update this event makes, if it is one.
    pub fn order_update(&self) -> Option<OrderUpdate> {
        match *self {
            Operation::UpdateOrder {
                order_id,
                created_at_ms,
                status,
                subtotal_cents,
                ..
            } => Some(OrderUpdate {
                order_id,
                created_at_ms,
                status,
                subtotal_cents,
            }),
            _ => None,
        }
    }

    /// The order or key the operation touches; lanes are dealt by it.
    pub fn target(&self) -> Target {
        match self {
            Operation::CreateOrder { order } => Target::Order(order.order_id),
            Operation::ReadOrder { order_id }
            | Operation::UpdateOrder { order_id, .. }
            | Operation::UpdateItems { order_id, .. }
            | Operation::UpdateStatus { order_id, .. }
            | Operation::DeleteOrder { order_id } => Target::Order(*order_id),
            Operation::Write { key, .. }
            | Operation::Rewrite { key, .. }
            | Operation::Read { key, .. }
            | Operation::Delete { key } => Target::Key(*key),
        }
    }

    /// The event type the operation counts under.
    pub fn event_type(&self) -> EventType {
        match self {
            Operation::CreateOrder { .. } => EventType::CreateOrder,
            Operation::ReadOrder { .. } => EventType::ReadOrder,
            Operation::UpdateOrder { .. } => EventType::UpdateOrder,
            Operation::UpdateItems { .. } => EventType::UpdateItems,
            Operation::UpdateStatus { .. } => EventType::UpdateStatus,
            Operation::DeleteOrder { .. } => EventType::DeleteOrder,
            Operation::Write { .. } => EventType::Write,
            Operation::Rewrite { .. } => EventType::Rewrite,
            Operation::Read { .. } => EventType::Read,
            Operation::Delete { .. } => EventType::Delete,
        }
    }
}

/// The kinds of event, as a small copyable key for tables and histograms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventType {
    CreateOrder,
    ReadOrder,
    UpdateOrder,
    UpdateItems,
    UpdateStatus,
    DeleteOrder,
    Write,
    Rewrite,
    Read,
    Delete,
}

impl EventType {
    /// Every event type; its place is its index in statistics.
    pub const ALL: [EventType; 10] = [
        EventType::CreateOrder,
        EventType::ReadOrder,
        EventType::UpdateOrder,
        EventType::UpdateItems,
        EventType::UpdateStatus,
        EventType::DeleteOrder,
        EventType::Write,
        EventType::Rewrite,
        EventType::Read,
        EventType::Delete,
    ];

    /// The name in specs, the op log and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::CreateOrder => "create_order",
            EventType::ReadOrder => "read_order",
            EventType::UpdateOrder => "update_order",
            EventType::UpdateItems => "update_items",
            EventType::UpdateStatus => "update_status",
            EventType::DeleteOrder => "delete_order",
            EventType::Write => "write",
            EventType::Rewrite => "rewrite",
            EventType::Read => "read",
            EventType::Delete => "delete",
        }
    }

    /// The names of all types, in index order (the labels of a summary).
    pub fn names() -> [&'static str; 10] {
        Self::ALL.map(EventType::as_str)
    }

    /// Its place in [`EventType::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether the event changes the store.
    pub fn is_write(self) -> bool {
        !matches!(self, EventType::ReadOrder | EventType::Read)
    }
}

/// Which part of a run an event belongs to. Only `measure` events are timed into results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Initial orders and records loaded before anything is measured.
    Load,
    /// Applied to warm caches and connections, not recorded.
    Warmup,
    /// Timed and recorded.
    Measure,
}

impl Phase {
    /// Its name in the stream, as serde spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Load => "load",
            Phase::Warmup => "warmup",
            Phase::Measure => "measure",
        }
    }
}

/// One line of the event stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderEvent {
    pub seq: u64,
    pub phase: Phase,
    pub op: Operation,
}
