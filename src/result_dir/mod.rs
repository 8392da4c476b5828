//! The result folder: its file names and `run.json`, the record that makes a folder
//! self-describing (what ran, against what, on which host, and how far it got), and
//! the one check every reader makes: that the folder is complete.

pub mod folder;
pub mod load_record;
pub mod seal;
mod status;
pub mod warmth;

pub use status::RunStatus;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::db::StoreFacts;
use crate::procfs::{self, process_start};
use crate::workload::EventSource;

/// What ran, against what, when, and how it ended.
pub const RUN_JSON: &str = crate::files::RUN_RECORD;
/// See [`crate::op_log::OPS_DIR`].
pub const OPS_DIR: &str = crate::op_log::OPS_DIR;
/// Latency percentiles and counts per event type.
pub const SUMMARY_JSON: &str = "summary.json";
/// What `hatshop verify` found.
pub const VERIFY_JSON: &str = "verify.json";
/// Throughput and percentiles per event type and interval.
pub const INTERVALS_CSV: &str = "intervals.csv";
/// Each interval's HdrHistograms, in HdrHistogram's own log format.
pub const LATENCY_HLOG: &str = "latency.hlog";
/// The page that answers what the run measured.
pub const REPORT_HTML: &str = "report.html";
/// Writes that failed, so `verify` knows which orders and keys are uncertain.
pub const FAILED_WRITES_CSV: &str = "failed_writes.csv";
/// The faults played, with when each took effect.
pub const FAULTS_CSV: &str = "faults.csv";
/// See [`crate::observe::SERVER_METRICS_CSV`].
pub const SERVER_METRICS_CSV: &str = crate::observe::SERVER_METRICS_CSV;
/// See [`crate::observe::GC_CSV`].
pub const GC_CSV: &str = crate::observe::GC_CSV;

/// In a folder `hatshop merge` writes, until its run.json is in place: a merge killed
/// part-way is told by it, and the next merge into the folder starts it afresh.
pub const MERGING: &str = ".merging";

/// The path of one of a result folder's files.
pub fn file(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

/// The run a run went on from (`--reuse-load`), as the database's note named it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WentOnFrom {
    pub run: String,
    /// Its result folder, as it was written there.
    pub folder: String,
    /// Whether verify had found those tables exact: this run's verify then reads back
    /// only what its own events wrote.
    #[serde(default)]
    pub verified_exact: bool,
}

/// `run.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub hatshop_version: String,
    /// What the generator makes of a spec (see `workload::STREAM_VERSION`); 0 before it
    /// was recorded.
    #[serde(default)]
    pub stream_version: u32,
    pub run_id: String,
    /// `--tag`: the name the run was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    pub status: RunStatus,
    pub interrupted: bool,
    /// Why the run failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The file a finished run could not write (a full disk), its op log complete:
    /// `hatshop recover` rebuilds the folder's files from that log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unwritten: Option<String>,
    pub events: EventSource,
    /// sha256 of the events handed out, as JSON Lines (the whole stream's when
    /// `stream_complete`): runs with equal hashes replayed the same events.
    pub plan_sha256: Option<String>,
    /// How many events that hash covers.
    #[serde(default)]
    pub planned_events: u64,
    /// Whether the whole stream was handed out.
    #[serde(default)]
    pub stream_complete: bool,
    pub database: DatabaseRecord,
    pub plan: PlanRecord,
    pub host: Host,
    /// The process that writes the folder: `running` is true only while it lives.
    #[serde(default)]
    pub pid: u32,
    #[serde(default)]
    pub process_start: u64,
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_started_at: Option<String>,
    pub finished_at: Option<String>,
    /// Written and synced as the measured phase was about to begin: every lane had
    /// applied the load and warm-up through here. What `verify` of a killed run builds
    /// on; a killed run without it never reached its measured phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmeasured: Option<UnmeasuredRecord>,
    /// Per lane, the seq of the last event applied, as the run itself recorded it when
    /// it ended (empty while it runs, and for a run that was killed).
    pub lane_last_seq: Vec<Option<u64>>,
    pub measured_ops: u64,
    /// Calls still in flight when the run stopped, cut by it (Ctrl-C, or past
    /// `--duration`'s grace): in the op log as `cancelled`, not in `measured_ops`.
    #[serde(default, skip_serializing_if = "is_no_count")]
    pub cut_calls: u64,
    pub op_log_rows: Option<u64>,
    /// Failures during load and warm-up.
    pub unmeasured_errors: u64,
    /// Events the lanes applied past `--duration`'s deadline, unmeasured, so that the
    /// database holds the stream's first events whole (a run asked to go on drains).
    #[serde(default, skip_serializing_if = "no_rows")]
    pub drained_after_deadline: u64,
    /// Writes that failed, in any phase (listed in failed_writes.csv).
    #[serde(default)]
    pub failed_writes: u64,
    /// The run whose whole stream the database held when this one began, and which
    /// it went on from (`--reuse-load`): the two stand on one load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub went_on_from: Option<WentOnFrom>,
    /// Whether the folder's statistics carry their sums ([`seal`]): once they do, a
    /// folder without them is refused, not read as it is.
    #[serde(default)]
    pub sealed: bool,
    /// Set when `hatshop recover` rebuilt the folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered: Option<Recovery>,
    /// Where `--metrics` served the run's metrics (the port the kernel gave for 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<String>,
    /// `--threshold`: each bound, what it measured and whether the run kept it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<crate::stats::threshold::ThresholdVerdict>,
    /// The faults injected, as they happened (also in faults.csv).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<crate::runner::faults::FaultRecord>,
    /// What the client spent measuring: CPU, CPU per operation, peak memory, and its
    /// busiest thread (a recovered run has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<crate::client_cost::ClientCost>,
    /// How evenly the lanes shared the measured operations: each lane's count and busy
    /// seconds, their mean, spread and range (sysbench's "threads fairness").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairness: Option<crate::stats::fairness::Fairness>,
    /// What the servers hatshop started for this database spent over the same window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu: Option<crate::client_cost::ServerCpu>,
    /// How busy the host was over the same window: other processes' CPU and steal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_load: Option<crate::host_load::HostLoad>,
    /// Whether the server measured was warm: how long it had been up, and whether
    /// latency fell while measuring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmth: Option<warmth::Warmth>,
    /// This folder holds one shard of a run (`--shard I/N`); `hatshop merge` joins them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::runner::Shard>,
    /// A merged folder: the shards it was made of, in shard order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardOrigin>,
    /// Cassandra started by hatshop: what its GC logs gave (gc.csv), or why they could
    /// not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc_log: Option<String>,
    /// `--trace-sample`: where the database's own times came from, or why there are
    /// none (`server_time` in run.json, the report's "server time").
    #[serde(
        default,
        rename = "server_time",
        skip_serializing_if = "Option::is_none"
    )]
    pub db_time: Option<String>,
}

impl RunRecord {
    /// The runs the folder's op log may hold rows of: its own, or a merged folder's
    /// shards'.
    pub fn op_log_runs(&self) -> Vec<String> {
        let mut runs = vec![self.run_id.clone()];
        runs.extend(self.shards.iter().map(|s| s.run_id.clone()));
        runs
    }

    /// How the run dealt events to lanes (over every shard's lanes), for `verify` and
    /// `recover` to deal alike.
    pub fn dealing(&self) -> crate::runner::Dealing {
        crate::runner::Dealing {
            lanes: self.plan.concurrency.max(1) * self.shard.map_or(1, |shard| shard.count),
            conflicts: self.plan.conflicts,
        }
    }
}

/// One of `--stages`, as run.json keeps it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct StageRecord {
    pub length_s: f64,
    pub to_ops_s: f64,
}

/// One shard of a merged folder, as run.json lists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShardOrigin {
    pub index: usize,
    pub run_id: String,
    /// The shard's own folder, as given to `hatshop merge`.
    pub dir: String,
    pub status: RunStatus,
    pub host: Host,
    pub measure_started_at: Option<String>,
    pub finished_at: Option<String>,
    pub measured_ops: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<crate::client_cost::ClientCost>,
}

/// What the load and warm-up came to, recorded before anything was measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UnmeasuredRecord {
    /// Every lane had applied the stream through this seq (`None`: it had no load or
    /// warm-up).
    pub through_seq: Option<u64>,
    /// Load and warm-up operations applied, and how many failed.
    pub operations: u64,
    pub failed: u64,
    /// Writes among them that failed, each in failed_writes.csv from then on.
    pub failed_writes: u64,
    pub at: String,
    /// The server's own work left from the load when measuring began, where hatshop
    /// started the server and can read it (Cassandra).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_work: Option<ServerWork>,
    /// What the store did with what the load left in its tables, just before measuring
    /// (PostgreSQL's VACUUM (ANALYZE)), where it has such work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tidied: Option<Tidied>,
    /// The initial load, where the stream had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadRecord>,
}

/// How the initial load went: its rows (orders and records), how long every lane took
/// to write them, and the batches they went in (`--load-batch`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LoadRecord {
    pub rows: u64,
    pub took_s: f64,
    pub rows_per_s: f64,
    pub batch: usize,
}

/// The store's tidying of its loaded tables before measuring.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Tidied {
    /// How long it took, or ran until it failed.
    pub took_s: f64,
    /// Beside `took_s` in run.json: `done` or `failed`.
    #[serde(flatten)]
    pub outcome: TidyOutcome,
}

/// How the tidying ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum TidyOutcome {
    /// What it ran ("VACUUM (ANALYZE) orders, line_items, kv").
    Done(String),
    /// Why it did not finish (an error, its deadline): measuring began anyway.
    Failed(String),
}

/// The background work (Cassandra's flushes and compactions) of a server hatshop
/// started, when measuring began, after the run waited for it (at most 30 s).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerWork {
    /// How long the run waited for it.
    pub waited_s: f64,
    /// What still ran or waited when the run stopped waiting ("node 1:
    /// CompactionExecutor 1 running, 0 waiting"); none: the server had settled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<String>,
}

/// What `hatshop recover` rebuilt from the op log, beside what the run recorded (which
/// it never changes).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Recovery {
    /// The status the folder had when recover found it.
    pub from_status: RunStatus,
    /// When recover rebuilt it.
    #[serde(default)]
    pub at: String,
    /// Op log lines dropped because they were cut (the last line of a killed run).
    pub dropped_lines: u64,
    /// Whole rows the op log held: what the rebuilt summary counts.
    #[serde(default)]
    pub logged_ops: u64,
    /// Failed writes those rows show (failed_writes.csv holds them, beside what it held).
    #[serde(default)]
    pub logged_failed_writes: u64,
    /// Per lane, the last seq of the op log: for a killed run, events after it may also
    /// have reached the store, so `verify` judges them against every state they allow.
    pub logged_lane_last_seq: Vec<Option<u64>>,
    /// The op log held every operation the run recorded.
    #[serde(default)]
    pub op_log_complete: bool,
    /// Where the op log's journal failed its checks: the rows after it were not
    /// recovered (the journal is kept beside the log).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal_damage: Option<String>,
    /// The most rows the damage may have taken (from the bytes after it): `verify`
    /// judges that many events past each lane's last logged one against every state
    /// they allow, as it judges what a kill may have left unlogged.
    #[serde(default, skip_serializing_if = "no_rows")]
    pub lost_rows_at_most: u64,
}

fn no_rows(n: &u64) -> bool {
    *n == 0
}

/// The store a run used: URL (password masked), settings, file and server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DatabaseRecord {
    /// The URL with any password masked.
    pub url: String,
    /// Store settings as given (URL `?key=value` and flags), so `verify` reads the same way.
    #[serde(default)]
    pub settings: std::collections::BTreeMap<String, String>,
    /// A SQLite file: relative to the folder when inside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub store: StoreFacts,
    /// The server hatshop started that serves the URL, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerFacts>,
}

/// What a run records of a server hatshop started: its size and settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerFacts {
    pub name: String,
    pub nodes: usize,
    /// Data centres, heap, persistence, … as `hatshop server status` shows them.
    pub settings: std::collections::BTreeMap<String, String>,
    /// When it was started, as its record says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
}

impl ServerFacts {
    /// "postgres of 1 node", then its settings in parentheses when it has any.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "{} of {} node{}",
            self.name,
            self.nodes,
            if self.nodes == 1 { "" } else { "s" }
        );
        if !self.settings.is_empty() {
            let settings: Vec<String> = self
                .settings
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            text.push_str(&format!(" ({})", settings.join(" · ")));
        }
        text
    }
}

/// How the run was paced and how many lanes it ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlanRecord {
    pub concurrency: usize,
    /// `closed_loop`, or `open_loop` at `rate_ops_s` (`--rate`).
    pub pace: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_ops_s: Option<f64>,
    /// `--rate FROM..TO --ramp T`: the rate reached after `ramp_s` of the measured phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp_to_ops_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp_s: Option<f64>,
    /// `--stages`: each stage's length and the rate it reaches, from `rate_ops_s`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageRecord>,
    pub max_duration_s: Option<f64>,
    /// `--min-duration`: the measured phase lasted at least this long and at least
    /// `min_events` events, its stream going on past the workload's count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_duration_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_events: Option<u64>,
    /// `--warmup` as a time; the events it came to are the workload's `warmup`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_s: Option<f64>,
    #[serde(default)]
    pub connect_timeout_s: f64,
    #[serde(default)]
    pub op_timeout_s: f64,
    /// `--retries`: calls an operation may repeat (latencies then span all calls).
    #[serde(default)]
    pub retries: u32,
    /// Length of the statistics intervals.
    #[serde(default = "one_second")]
    pub interval_s: f64,
    pub op_log: bool,
    pub check_reads: bool,
    /// Share of measured order updates dealt to a lane other than their order's.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conflicts: f64,
}

fn is_zero(share: &f64) -> bool {
    *share == 0.0
}

fn is_no_count(count: &u64) -> bool {
    *count == 0
}

fn one_second() -> f64 {
    1.0
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
    /// Worker threads of hatshop's runtime (`--client-threads`, else the store's
    /// choice for the run's concurrency, else one per core; 0: not recorded).
    #[serde(default)]
    pub client_threads: usize,
    /// Threads of their own the lanes ran on, each running an event loop (0: the lanes
    /// were tasks of the runtime above).
    #[serde(default)]
    pub lane_threads: usize,
}

impl Host {
    /// The machine this runs on: host name, OS, kernel, CPUs and memory.
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
        Host {
            hostname: procfs::hostname(),
            os,
            kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
            cpu,
            cores: procfs::cores(),
            memory_bytes: procfs::memory_bytes(),
            client_threads: tokio::runtime::Handle::try_current()
                .map_or(0, |runtime| runtime.metrics().num_workers()),
            lane_threads: 0,
        }
    }
}

impl RunRecord {
    /// Whether a process still writes the folder `dir` of this record: one holds its
    /// lock (a copy of a running folder is held by none), or, where it has no lock
    /// file, the process run.json names still runs on this host.
    pub fn writer_alive(&self, dir: &Path) -> bool {
        crate::folder_lock::held(dir).unwrap_or_else(|| {
            self.host.hostname == procfs::hostname()
                && self.pid != 0
                && process_start(self.pid).is_some_and(|start| start == self.process_start)
        })
    }

    /// Whether a stopped folder's summary was written.
    pub fn complete(&self) -> bool {
        self.status.wrote_its_end()
    }

    /// How far its lanes applied the stream: one past the last event any lane applied
    /// (0: none), as the run recorded it.
    pub fn applied_to(&self) -> u64 {
        self.lane_last_seq
            .iter()
            .flatten()
            .max()
            .map_or(0, |last| last + 1)
    }

    /// Whether the run recorded its own ending (its lanes' last events, its failed
    /// writes), however it ended; false for a run killed (or aborted by a second
    /// signal) before it could, recovered or not.
    pub fn recorded_its_end(&self) -> bool {
        match &self.recovered {
            Some(recovery) => recovery.from_status.wrote_its_end(),
            None => self.status.wrote_its_end(),
        }
    }

    /// Whether the folder's files are all there: written by the run, or rebuilt by
    /// `hatshop recover` after it could not write them.
    pub fn files_written(&self) -> bool {
        self.unwritten.is_none() || self.recovered.is_some()
    }

    /// The rows the op log must hold: what recover read from it, else what the run
    /// wrote.
    pub fn expected_op_log_rows(&self) -> Option<u64> {
        match &self.recovered {
            Some(recovery) => Some(recovery.logged_ops),
            None => self.op_log_rows,
        }
    }

    /// Operations the folder's summary counts: the op log's rows but the cut calls, for
    /// a recovered run.
    pub fn summarised_ops(&self) -> u64 {
        match &self.recovered {
            Some(recovery) => recovery.logged_ops.saturating_sub(self.cut_calls),
            None => self.measured_ops,
        }
    }

    /// Whether the run ended as its plan says (its stream, or its `--duration`), not
    /// cut short by a signal, a kill or a failure: only such runs are comparable whole.
    pub fn ran_its_plan(&self) -> bool {
        self.status.ran_its_plan()
    }
}

/// What a summary.json written from this record is of.
pub fn summary_of(record: &RunRecord) -> crate::stats::SummaryOf {
    crate::stats::SummaryOf {
        run_id: record.run_id.clone(),
        tag: record.tag.clone(),
        store: record.database.store.name.clone(),
        workload: record.events.name(),
        concurrency: record.plan.concurrency,
        plan_sha256: record.plan_sha256.clone(),
        percentiles: Vec::new(),
    }
}

/// Reads run.json of a folder that must be complete: one clear line when the run is
/// still going, or ended without finishing its folder (killed, power lost, a second
/// Ctrl-C, a full disk), with what can be done about it.
pub fn load_complete(dir: &Path) -> Result<RunRecord> {
    let record = load(dir)?;
    match record.status {
        RunStatus::Running if record.writer_alive(dir) => bail!(
            "{} is still running (pid {}): wait for it, or stop it with Ctrl-C",
            dir.display(),
            record.pid
        ),
        RunStatus::Running | RunStatus::Aborted => bail!(
            "the run in {} did not finish ({}): {}",
            dir.display(),
            if record.status == RunStatus::Aborted {
                "stopped at once by a second signal"
            } else {
                "its process is gone: killed, or the machine stopped"
            },
            rebuild_hint(dir, &record)
        ),
        _ => {}
    }
    if !record.files_written() {
        bail!(
            "the run in {} could not write its files ({}): {}",
            dir.display(),
            record.unwritten.as_deref().unwrap_or_default(),
            rebuild_hint(dir, &record)
        );
    }
    if !file(dir, SUMMARY_JSON).exists() {
        bail!(
            "{} has no {SUMMARY_JSON}: {}",
            dir.display(),
            rebuild_hint(dir, &record)
        );
    }
    Ok(record)
}

/// What can be done with a folder whose files are not all there: `hatshop recover`
/// where it has an op log, else only running again.
pub fn rebuild_hint(dir: &Path, record: &RunRecord) -> String {
    if record.plan.op_log && file(dir, OPS_DIR).is_dir() {
        format!(
            "`hatshop recover {}` rebuilds it from its op log",
            dir.display()
        )
    } else {
        "it kept no op log (--no-op-log), so what it measured cannot be rebuilt: run it \
         again (with its op log on, a run cut short can be recovered)"
            .to_string()
    }
}

/// Reads run.json, whatever the run's state.
pub fn load(dir: &Path) -> Result<RunRecord> {
    let path = file(dir, RUN_JSON);
    if !path.exists() {
        if !dir.exists() {
            bail!("no result folder {}", dir.display());
        }
        if dir.join(MERGING).exists() {
            bail!(
                "{} holds a merge that did not finish: run the same `hatshop merge … -o {}` \
                 again",
                dir.display(),
                dir.display()
            );
        }
        if file(&dir.join("repeat-1"), RUN_JSON).exists() {
            bail!(
                "{} holds repeats (run --repeat): its summary.json has the medians; give one of its repeat-K folders, or compare it as a whole",
                dir.display()
            );
        }
        bail!(
            "{} is not a result folder: it has no {RUN_JSON}",
            dir.display()
        );
    }
    crate::files::read_json(&path).with_context(|| format!("cannot use {}", dir.display()))
}

/// A row of `failed_writes.csv`: a write that failed, in any phase.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct FailedWriteRow {
    pub seq: u64,
    pub event_type: String,
    /// The order id, or the key index of a key-value event.
    pub target: u64,
    pub error_kind: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_without_settings_is_described_without_parentheses() {
        let mut server = ServerFacts {
            name: "postgres".into(),
            nodes: 1,
            settings: Default::default(),
            started_at: None,
        };
        assert_eq!(server.describe(), "postgres of 1 node");
        server.nodes = 3;
        server.settings.insert("rf".into(), "3".into());
        assert_eq!(server.describe(), "postgres of 3 nodes (rf=3)");
    }
}
