//! The command line: clap derive structs, help from the doc comments. Parsing only;
//! `config` turns these into a validated `RunConfig`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::cluster::ServerKind;

/// hatshop: one seeded stream of hat-shop order events, replayed against real
/// databases, every operation timed and logged, the result verified.
#[derive(Debug, Parser)]
#[command(name = "hatshop", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process
pub enum Command {
    /// Replay a workload against a database and record every operation.
    Run(RunArgs),
    /// Write a workload's event stream to a JSON Lines file.
    Generate(GenerateArgs),
    /// Check that a run's database holds exactly what its event stream says.
    Verify(VerifyArgs),
    /// Write report.html (charts, tables, errors) for a result folder.
    Report(ReportArgs),
    /// Put runs side by side: a table here and an HTML page, with significance.
    Compare(CompareArgs),
    /// Run one workload several times while one setting varies, and chart the result.
    Sweep(SweepArgs),
    /// List the preset workloads, or print one as TOML.
    Workloads(WorkloadsArgs),
    /// Start, stop and inspect local database servers (Cassandra, MariaDB, PostgreSQL).
    Server(ServerArgs),
}

#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Folder for server data and downloads (default: $HATSHOP_HOME, else ~/.local/share/hatshop).
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    #[command(subcommand)]
    pub action: ServerAction,
}

#[derive(Debug, Subcommand)]
pub enum ServerAction {
    /// Start a server (once: a second start says where it already runs) and print its URL.
    Start {
        kind: ServerKind,
        /// Cassandra version to fetch from Maven Central.
        #[arg(long)]
        version: Option<String>,
        /// Cassandra JVM heap.
        #[arg(long, default_value = "1g")]
        heap: String,
        /// Port to listen on (default: the usual one if free, else any free port).
        #[arg(long)]
        port: Option<u16>,
        /// Install missing Debian packages (mariadb-server, postgresql); needs root.
        #[arg(long)]
        install: bool,
    },
    /// Stop one server, or all of them.
    Stop {
        #[arg(required_unless_present = "all")]
        kind: Option<ServerKind>,
        #[arg(long, conflicts_with = "kind")]
        all: bool,
    },
    /// Stop a server (or all) and delete its data, to start from scratch.
    Wipe {
        #[arg(required_unless_present = "all")]
        kind: Option<ServerKind>,
        #[arg(long, conflicts_with = "kind")]
        all: bool,
    },
    /// What runs, where, its URL, version, pid and memory.
    Status,
    /// The end of a server's log.
    Logs {
        kind: ServerKind,
        /// Lines to show.
        #[arg(short = 'n', long, default_value_t = 40)]
        lines: usize,
    },
}

/// Which events: a preset or spec file, with overrides.
#[derive(Debug, Args, Clone)]
pub struct StreamArgs {
    /// Preset name (see `hatshop workloads`) or path of a TOML spec.
    #[arg(short, long, default_value = "hatshop-random")]
    pub workload: String,
    /// Seed of the event stream (default: the spec's seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Number of measured events (default: the spec's count).
    #[arg(long)]
    pub events: Option<u64>,
    /// Events applied after the initial load and before measuring, not recorded.
    #[arg(long)]
    pub warmup: Option<u64>,
}

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub stream: StreamArgs,
    /// Replay this JSON Lines events file instead of generating (see `hatshop generate`).
    #[arg(long, conflicts_with_all = ["seed", "events", "warmup"])]
    pub events_file: Option<PathBuf>,
    /// Database URL: sqlite://PATH, or null:// to measure hatshop's own cost.
    /// `sqlite://` alone puts hatshop.db in the result folder.
    #[arg(
        long,
        default_value = "sqlite://",
        env = "HATSHOP_DB",
        hide_env_values = true
    )]
    pub db: String,
    /// Lanes running at once (default: the spec's, else 1 for SQLite and null).
    #[arg(short, long)]
    pub concurrency: Option<usize>,
    /// Stop the measured phase after this many seconds (decimals allowed).
    #[arg(long, value_name = "SECS")]
    pub duration: Option<f64>,
    /// Length of the statistics intervals in seconds: latency over time and latency.hlog.
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    pub interval: f64,
    /// Result folder (default: results/<run-id>).
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Do not write ops.csv (for overall-time runs; histograms are still kept).
    #[arg(long)]
    pub no_op_log: bool,
    /// Verify the database against the event stream when the run ends.
    #[arg(long)]
    pub verify: bool,
    /// Do not show the progress bar, even on a terminal.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Store settings; each may also be given in the URL as `?key=value`.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Store settings")]
pub struct StoreArgs {
    /// Connections in the pool (mysql://, postgres://; default 4).
    #[arg(long)]
    pub pool: Option<usize>,
    /// Cassandra consistency level of reads and writes: ONE, TWO, THREE, QUORUM (default), ALL, LOCAL_QUORUM, ANY, ….
    #[arg(long)]
    pub cl: Option<String>,
    /// Cassandra consistency level of reads only.
    #[arg(long)]
    pub read_cl: Option<String>,
    /// Cassandra consistency level of writes only.
    #[arg(long)]
    pub write_cl: Option<String>,
    /// Replication factor of the Cassandra keyspace hatshop creates (SimpleStrategy; default 1).
    #[arg(long)]
    pub rf: Option<u32>,
    /// Cassandra table design: by-order (items partitioned by order; default) or by-item.
    #[arg(long)]
    pub schema: Option<String>,
    /// How Cassandra sends the statements of one event: logged (default), unlogged or none (all at once).
    #[arg(long)]
    pub batch: Option<String>,
    /// Cassandra: update_status as a lightweight transaction (IF EXISTS).
    #[arg(long)]
    pub lwt: bool,
}

impl StoreArgs {
    /// The flags that were given, as setting keys and values.
    pub fn settings(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let mut put = |key: &'static str, value: Option<String>| {
            if let Some(value) = value {
                out.push((key, value));
            }
        };
        put("pool", self.pool.map(|n| n.to_string()));
        put("cl", self.cl.clone());
        put("read_cl", self.read_cl.clone());
        put("write_cl", self.write_cl.clone());
        put("rf", self.rf.map(|n| n.to_string()));
        put("schema", self.schema.clone());
        put("batch", self.batch.clone());
        put("lwt", self.lwt.then(|| "true".to_string()));
        out
    }
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    #[command(flatten)]
    pub stream: StreamArgs,
    /// Output file, or - for standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// A result folder written by `hatshop run`.
    pub result_dir: PathBuf,
    /// Connect with this URL instead of the one in run.json (e.g. to supply a password).
    #[arg(long)]
    pub db: Option<String>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result folder written by `hatshop run`.
    pub result_dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The setting and its values: pool=1,2,4,8 · events=500,5000 · concurrency=1,4,16 ·
    /// cl=ONE,QUORUM,ALL · rf, schema, batch, warmup, seed, duration, or any URL setting.
    #[arg(long, value_name = "KEY=V1,V2,…")]
    pub vary: String,
    /// Runs per value.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Everything a run takes; --out names the sweep folder (default results/sweep-<time>-<key>).
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Result folders; the first is the baseline.
    #[arg(required = true, num_args = 2..)]
    pub result_dirs: Vec<PathBuf>,
    /// Where to write the HTML page.
    #[arg(short, long, default_value = "compare.html")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct WorkloadsArgs {
    #[command(subcommand)]
    pub action: Option<WorkloadsAction>,
}

#[derive(Debug, Subcommand)]
pub enum WorkloadsAction {
    /// Print a preset as TOML, to copy and edit.
    Show {
        /// Preset name.
        name: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}
