//! The hat-shop domain: orders, their line items, and the events that change them.
//!
//! Money is kept in integer cents and times in integer milliseconds so that every
//! database stores exactly what the event stream says, with no float rounding.

use serde::{Deserialize, Serialize};

/// Identifies an order; the unit by which events are split into lanes.
pub type OrderId = u64;

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

    pub fn parse(name: &str) -> Option<OrderStatus> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// One hat on an order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineItem {
    pub line_item_id: u64,
    pub product: String,
    pub colour: String,
    pub size: String,
    pub quantity: u32,
    pub unit_price_cents: i64,
}

impl LineItem {
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
}

impl Order {
    /// The subtotal as the items say it must be.
    pub fn items_subtotal_cents(&self) -> i64 {
        self.items.iter().map(LineItem::total_cents).sum()
    }
}

/// New attribute values for one line item of an `update_order` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemChange {
    pub line_item_id: u64,
    pub colour: String,
    pub size: String,
    pub quantity: u32,
}

/// What one event does. The JSON form is tagged by `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Operation {
    CreateOrder {
        order: Order,
    },
    ReadOrder {
        order_id: OrderId,
    },
    UpdateOrder {
        order_id: OrderId,
        changes: Vec<ItemChange>,
        /// The order's subtotal after the change, so no store needs a read-modify-write.
        subtotal_cents: i64,
    },
    UpdateStatus {
        order_id: OrderId,
        status: OrderStatus,
    },
    DeleteOrder {
        order_id: OrderId,
    },
}

impl Operation {
    pub fn order_id(&self) -> OrderId {
        match self {
            Operation::CreateOrder { order } => order.order_id,
            Operation::ReadOrder { order_id }
            | Operation::UpdateOrder { order_id, .. }
            | Operation::UpdateStatus { order_id, .. }
            | Operation::DeleteOrder { order_id } => *order_id,
        }
    }

    pub fn event_type(&self) -> EventType {
        match self {
            Operation::CreateOrder { .. } => EventType::CreateOrder,
            Operation::ReadOrder { .. } => EventType::ReadOrder,
            Operation::UpdateOrder { .. } => EventType::UpdateOrder,
            Operation::UpdateStatus { .. } => EventType::UpdateStatus,
            Operation::DeleteOrder { .. } => EventType::DeleteOrder,
        }
    }
}

/// The five kinds of event, as a small copyable key for tables and histograms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventType {
    CreateOrder,
    ReadOrder,
    UpdateOrder,
    UpdateStatus,
    DeleteOrder,
}

impl EventType {
    pub const ALL: [EventType; 5] = [
        EventType::CreateOrder,
        EventType::ReadOrder,
        EventType::UpdateOrder,
        EventType::UpdateStatus,
        EventType::DeleteOrder,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::CreateOrder => "create_order",
            EventType::ReadOrder => "read_order",
            EventType::UpdateOrder => "update_order",
            EventType::UpdateStatus => "update_status",
            EventType::DeleteOrder => "delete_order",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn is_write(self) -> bool {
        self != EventType::ReadOrder
    }
}

/// Which part of a run an event belongs to. Only `measure` events are timed into results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Initial orders loaded before anything is measured.
    Load,
    /// Applied to warm caches and connections, not recorded.
    Warmup,
    /// Timed and recorded.
    Measure,
}

/// One line of the event stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderEvent {
    pub seq: u64,
    pub phase: Phase,
    pub op: Operation,
}
