//! A load's result folder: load.json (what ran, how it ended, totals, the check),
//! batches.csv (one row per batch, written as each ends) and batch-traces.csv, as
//! `hatshop load` writes them and its report reads them.

use serde::{Deserialize, Serialize};

use super::{DatabaseRecord, Host};
use crate::db::BatchKind;

/// What `hatshop load` did, as `run.json` is for a run.
pub const LOAD_JSON: &str = "load.json";
/// Every batch, one row each.
pub const BATCHES_CSV: &str = "batches.csv";
/// Batches traced on the server (`--trace-sample`).
pub const BATCH_TRACES_CSV: &str = "batch-traces.csv";

/// A batch traced on the server (`--trace-sample`), as batch-traces.csv holds it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BatchTrace {
    pub batch: u64,
    pub start_s: f64,
    /// Sent → answered, as hatshop measured it.
    pub client_us: f64,
    /// The coordinator's duration from system_traces (empty: not found in time).
    pub server_us: Option<f64>,
}

/// One batch, as batches.csv holds it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BatchRow {
    pub pass: u64,
    /// Batch number from 0, over all passes.
    pub batch: u64,
    /// When it was sent, in seconds since the load began.
    pub start_s: f64,
    pub rows: u64,
    /// Bytes of keys and values it carried (no protocol framing).
    pub payload_bytes: u64,
    /// Bytes sent on the loopback interface while it was in flight (all traffic on
    /// `lo`, framing included); empty with batches in flight at once.
    pub loopback_bytes: Option<u64>,
    /// Sent → answered, in microseconds.
    pub latency_us: f64,
    /// Empty when it succeeded.
    pub error: String,
}

/// The load's totals over the batches that succeeded.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LoadTotals {
    pub batches: u64,
    pub failed_batches: u64,
    pub rows: u64,
    pub payload_bytes: u64,
    /// From the first batch sent to the last one answered.
    pub elapsed_s: f64,
    pub rows_per_s: f64,
    pub mb_per_s: f64,
    /// Time with a batch in flight (the union of the batches' times).
    #[serde(default)]
    pub busy_s: f64,
    /// Rows per second of `busy_s`: the rate while loading, pauses of --every left out.
    #[serde(default)]
    pub rows_per_busy_s: f64,
    /// Batch latency in ms (HdrHistogram).
    pub latency_ms: BatchLatency,
}

/// Batch latency percentiles, ms.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BatchLatency {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// What reading the rows back found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadCheck {
    pub rows_expected: u64,
    pub rows_found: u64,
    pub sampled: u64,
    /// Sampled rows missing or with other values than the seed gives.
    pub mismatched: u64,
    pub ok: bool,
}

/// Every size of a load, as load.json records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadPlan {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// Rows per pass.
    pub rows: u64,
    pub columns: usize,
    pub value_size: usize,
    pub batch_size: u64,
    pub batch: BatchKind,
    /// With `batch = none`: single-row writes in flight.
    pub in_flight: usize,
    /// Batches in flight.
    pub concurrency: usize,
    /// A pass starts every this many seconds (none: back to back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_s: Option<f64>,
    pub repeat: u64,
    pub seed: u64,
    /// The report's time bins, in seconds.
    pub interval_s: f64,
    /// Share of the batches traced on the server (Cassandra).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_sample: Option<f64>,
}

/// load.json.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadRecord {
    pub hatshop_version: String,
    /// Running, finished, interrupted or failed.
    pub status: super::RunStatus,
    pub interrupted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub plan: LoadPlan,
    pub database: DatabaseRecord,
    pub host: Host,
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    #[serde(default)]
    pub totals: LoadTotals,
    /// What the GC log gave (Cassandra started by hatshop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc_log: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<LoadCheck>,
}
