//! The op log: one row per measured operation, in `ops/` as Parquet files that pandas,
//! polars and DuckDB open directly (about 5 bytes an operation), written by a thread of
//! its own so that no file I/O happens on a lane.
//!
//! A Parquet file is readable only once its footer is written, so rows go two ways: into
//! the open part (`_part-N.partial`, renamed `part-N.parquet` once closed) and into a
//! journal (`_journal`) that holds, in hatshop's own format, the rows no closed part
//! holds yet. A killed run leaves its closed parts and its journal; every reader here
//! takes both, and `recover` turns the journal into the last part. The leading
//! underscore keeps both out of the readers' sight (`pd.read_parquet("ops")` skips
//! them, `ops/*.parquet` does not match them).

mod columns;
mod csv;
mod journal;
mod manifest;
mod names;
mod parts;
mod reader;
mod rebuilt;
mod seal;
mod writer;

#[cfg(test)]
mod tests;

use std::time::{Duration, SystemTime};

use anyhow::{Result, anyhow};

pub use csv::export_csv;
pub use journal::JournalDamage;
pub use parts::PartWriter;
pub use reader::{LogRead, OpLog, RunOf};
pub use rebuilt::Rebuilt;
pub use seal::{DAMAGED_JOURNAL, Sealed, needs_sealing, seal};
pub use writer::{OpLogSender, OpLogWriter};

/// Every operation, one row each: the op log's folder of Parquet parts in a result
/// folder.
pub const OPS_DIR: &str = "ops";

use crate::stats::OpRecord;
use crate::workload::EventType;

/// One logged operation, with its times in ns since the Unix epoch.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedOp {
    pub event_type: &'static str,
    pub seq: u64,
    /// The order id, or the key index of a key-value event.
    pub target: u64,
    /// When the request was sent, after any wait for a pooled connection.
    pub sent_ns: u64,
    /// Service time: sent to answered, to the nanosecond.
    pub latency_ns: u64,
    /// Kind and message of a failure; `None` for success.
    pub error: Option<(&'static str, String)>,
    /// The server's code for the failure (`1213`, `40001`, `WriteTimeout`), if it gave one.
    pub error_code: Option<String>,
    /// The node that served it, 1-based in the URL's host order; 0: not known.
    pub node: u16,
    /// Calls made (more than 1 only with --retries; the latency spans them all).
    pub attempts: u32,
    /// Open loop (`--rate`): when it was due to be sent.
    pub intended_start_ns: Option<u64>,
    /// Time waiting for a pooled connection, not in `latency_ns`.
    pub queue_ns: Option<u64>,
    /// The shard it came from, in a merged folder.
    pub shard: Option<u32>,
}

impl LoggedOp {
    /// A lane's record, whose times count from `epoch_ns` after the Unix epoch.
    pub fn of_record(record: OpRecord, epoch_ns: u64) -> LoggedOp {
        LoggedOp {
            event_type: record.event_type,
            seq: record.seq,
            target: record.target,
            sent_ns: epoch_ns + record.start_ns,
            latency_ns: record.latency_ns,
            error: record.error,
            error_code: record.error_code,
            node: record.node,
            attempts: record.attempts,
            intended_start_ns: record.due_ns.map(|due| epoch_ns + due),
            queue_ns: record.queued_ns,
            shard: None,
        }
    }

    /// The event type the row names.
    pub fn event(&self) -> Result<EventType> {
        event_type(self.event_type)
    }

    /// When the request was sent.
    pub fn sent_at(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_nanos(self.sent_ns)
    }

    /// Whether it succeeded.
    pub fn success(&self) -> bool {
        self.error.is_none()
    }

    /// The failure's kind name; empty for success.
    pub fn error_kind(&self) -> &'static str {
        self.error.as_ref().map_or("", |(kind, _)| kind)
    }

    /// Whether the run itself cut the call while in flight (`cancelled`): no failure.
    pub fn was_cut(&self) -> bool {
        self.error_kind() == crate::db::ErrorKind::Cancelled.as_str()
    }

    /// The latency in microseconds, as tables and figures show it.
    pub fn latency_us(&self) -> f64 {
        self.latency_ns as f64 / 1_000.0
    }

    /// Whether the operation was a write (it may have changed the store).
    pub fn is_write(&self) -> bool {
        !matches!(self.event_type, "read" | "read_order")
    }
}

/// The event type named `name`.
fn event_type(name: &str) -> Result<EventType> {
    EventType::ALL
        .iter()
        .copied()
        .find(|e| e.as_str() == name)
        .ok_or_else(|| anyhow!("unknown event type '{name}'"))
}

/// The name of the failure kind named `name`, as the store's errors name it.
fn error_kind(name: &str) -> &'static str {
    crate::db::ErrorKind::parse(name)
        .unwrap_or(crate::db::ErrorKind::Other)
        .as_str()
}
