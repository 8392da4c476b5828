//! The result folder: its file names and `run.json`, the record that makes a folder
//! self-describing (what ran, against what, on which host, and how far it got).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::EventSource;
use crate::db::StoreInfo;

pub const RUN_JSON: &str = "run.json";
pub const OPS_CSV: &str = "ops.csv";
pub const SUMMARY_JSON: &str = "summary.json";
pub const VERIFY_JSON: &str = "verify.json";
pub const INTERVALS_CSV: &str = "intervals.csv";
pub const LATENCY_HLOG: &str = "latency.hlog";
pub const REPORT_HTML: &str = "report.html";

pub fn file(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

/// `run.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub hatshop_version: String,
    pub run_id: String,
    /// running, finished, interrupted, stopped_at_deadline or failed.
    pub status: String,
    pub interrupted: bool,
    pub events: EventSource,
    /// sha256 of the event stream as JSON Lines: runs with equal hashes replayed the
    /// same events. Absent when the run was interrupted before the stream was hashed.
    pub plan_sha256: Option<String>,
    pub database: DatabaseRecord,
    pub plan: PlanRecord,
    pub host: Host,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// Per lane, the seq of the last event applied: what `verify` replays.
    pub lane_last_seq: Vec<Option<u64>>,
    pub measured_ops: u64,
    pub op_log_rows: Option<u64>,
    /// Failures during load and warm-up.
    pub unmeasured_errors: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DatabaseRecord {
    /// The URL with any password masked.
    pub url: String,
    /// Store settings as given (URL `?key=value` and flags), so `verify` reads the same way.
    #[serde(default)]
    pub settings: std::collections::BTreeMap<String, String>,
    pub store: StoreInfo,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlanRecord {
    pub concurrency: usize,
    pub pace: String,
    pub max_duration_s: Option<f64>,
    pub op_log: bool,
    pub check_reads: bool,
}

/// The client machine, as far as a database engineer needs it to judge the numbers.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Host {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub cpu: String,
    pub cores: usize,
    pub memory_bytes: u64,
}

impl Host {
    pub fn probe() -> Host {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        let os = read("/etc/os-release")
            .lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim_matches('"').to_string())
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        let cpu = read("/proc/cpuinfo")
            .lines()
            .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let memory_bytes = read("/proc/meminfo")
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .unwrap_or(0);
        Host {
            hostname: read("/proc/sys/kernel/hostname").trim().to_string(),
            os,
            kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes,
        }
    }
}
