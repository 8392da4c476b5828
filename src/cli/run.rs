//! `hatshop run`'s flags, also read by `sweep`, `--repeat` and `--find-max`, and
//! `prepare`'s: the store (`--db`), the pace, the deadlines, the outputs.

use std::path::PathBuf;

use clap::Args;

use super::RuntimeArgs;
use super::quantities::{
    above_zero_seconds, count, duration, latency, positive_count, seconds, share,
};
use super::store_flags::StoreArgs;
use super::stream::StreamArgs;
use super::threshold::threshold;
use super::values::{PercentileList, RateArg, StagesArg, parse_rate, parse_stages};
use crate::db::{STORES, schemes_where};

pub(super) fn db_help() -> String {
    let mut help = String::from(
        "The store's URL (also from HATSHOP_DB, which keeps a password off the command line):",
    );
    for store in STORES {
        help.push_str(&format!("\n  {:<48} {}", store.example, store.about));
    }
    help
}

/// A run's `--db` help: every store, and the one a run uses without it.
fn run_db_help() -> String {
    format!(
        "{}\n[default: {}, a SQLite file in the result folder]",
        db_help(),
        crate::db::DEFAULT_URL
    )
}

/// `hatshop run`'s flags (also read by `sweep`, `--repeat` and `--find-max`).
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub stream: StreamArgs,
    /// Replay this JSON Lines events file instead of generating (see `hatshop generate`).
    #[arg(long, conflicts_with_all = ["seed", "events", "warmup", "orders", "records", "value_size", "order_bytes"])]
    pub events_file: Option<PathBuf>,
    #[arg(
        long,
        env = "HATSHOP_DB",
        hide_env_values = true,
        action = clap::ArgAction::Append,
        long_help = run_db_help(),
        help = format!(
            "The store's URL: {} (see --help); a sweep takes several [default: {}]",
            schemes_where(|_| true),
            crate::db::DEFAULT_URL
        )
    )]
    pub db: Vec<String>,
    /// Operations in flight at once, each in a lane of its own [default: the spec's, else
    /// the store's; see --help of each store].
    #[arg(short, long, value_parser = positive_count::<usize>)]
    pub concurrency: Option<usize>,
    /// Run the measured phase this long (10s, 5m, 1h; a bare number is seconds), with
    /// events generated until then unless --events bounds them too; a warm-up ends by then.
    #[arg(long, value_name = "TIME", value_parser = above_zero_seconds, allow_hyphen_values = true)]
    pub duration: Option<f64>,
    /// Measure at least this long (10s, 1m; a bare number is seconds): events go on past
    /// --events (or the spec's count) until the measured phase has lasted TIME, so that
    /// a short run still carries its statistics intervals; the events that ran are
    /// recorded and hashed as ever.
    #[arg(long, value_name = "TIME", value_parser = above_zero_seconds, allow_hyphen_values = true,
          conflicts_with_all = ["duration", "stages", "events_file", "find_max", "shard"])]
    pub min_duration: Option<f64>,
    /// Length of the statistics intervals in seconds: latency over time and latency.hlog.
    #[arg(long, value_name = "TIME", default_value = "1s", value_parser = above_zero_seconds, allow_hyphen_values = true)]
    pub interval: f64,
    /// Longest wait for a connection, handshake and authentication included.
    #[arg(long, value_name = "TIME", default_value = "10s", value_parser = above_zero_seconds, allow_hyphen_values = true)]
    pub connect_timeout: f64,
    /// Longest one operation may take; it then counts as a timeout (outcome unknown).
    #[arg(long, value_name = "TIME", default_value = "30s", value_parser = above_zero_seconds, allow_hyphen_values = true)]
    pub op_timeout: f64,
    /// Repeat a failed call up to N times when a retry can cure it (timeout,
    /// unavailable, conflict, lost connection); retries are counted apart and the
    /// latency of the operation spans all its calls.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = count::<u32>)]
    pub retries: u32,
    /// Open loop: send OPS operations per second in all (warm-up and measured phases),
    /// each at its own time however slowly answers come; -c bounds the requests
    /// in flight. Latency is then reported twice: service (sent → answered) and
    /// response (due → answered, what a user waiting in line sees). FROM..TO with
    /// --ramp climbs from one rate to the other.
    #[arg(long, value_name = "OPS", value_parser = parse_rate)]
    pub rate: Option<RateArg>,
    /// With --rate FROM..TO: how long the measured phase takes to climb, e.g. 60s (a
    /// bare number is seconds; the warm-up runs at FROM; after the ramp, TO).
    #[arg(long, value_name = "TIME", value_parser = duration)]
    pub ramp: Option<std::time::Duration>,
    /// Open loop in stages, as k6's ramping arrival rate: TIME:RATE, comma-separated
    /// (e.g. 30s:1000,1m:5000,30s:0); the rate moves in a straight line to each
    /// stage's RATE over its TIME, from --rate (0 if not given). The stages are the
    /// measured phase's length; the warm-up runs at the first rate above 0.
    #[arg(long, value_name = "TIME:RATE,…", value_parser = parse_stages)]
    pub stages: Option<StagesArg>,
    /// Search for the highest --rate whose response time p99 stays under --p99-under:
    /// one run per rate (--duration each, 10 s if not given), doubling from --rate
    /// (1000 if not given), then halving the gap; sweep.csv and sweep.html draw the knee.
    #[arg(long)]
    pub find_max: bool,
    /// The bound for --find-max, e.g. 10ms or 500us (a bare number is milliseconds).
    #[arg(long, value_name = "TIME", value_parser = latency, allow_hyphen_values = true)]
    pub p99_under: Option<std::time::Duration>,
    /// Share (0-1) of measured order updates sent to a lane other than their order's,
    /// so two lanes race on one order [default: the spec's `conflicts`, else 0].
    #[arg(long, value_name = "SHARE", value_parser = share)]
    pub conflicts: Option<f64>,
    /// Read the server's own time of this share (0-1) of the measured operations and
    /// set it against the time hatshop measured (traces.csv, the report): Cassandra's
    /// CQL tracing, MariaDB's performance_schema (read right after each sampled
    /// operation, outside its timed window). PostgreSQL keeps only totals per
    /// statement: with any share, pg_stat_statements is read before and after the run
    /// (server-statements.csv). Untraced operations are sent as always.
    #[arg(long, value_name = "SHARE", value_parser = share)]
    pub trace_sample: Option<f64>,
    /// Run one shard of the run, I of N (from 0), with the other shards on other
    /// client machines: each reads the whole stream and runs the lanes of its share of
    /// the orders (--rate is the rate of all shards together). Needs tables made by
    /// `hatshop prepare`; `hatshop merge` joins the shards' folders. auto/N takes I from
    /// $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job).
    #[arg(
        long,
        value_name = "I/N",
        env = "HATSHOP_SHARD",
        hide_env_values = true
    )]
    pub shard: Option<String>,
    /// Exit 3 when more than this share of the measured operations failed, e.g. 5% or
    /// 0.05; 100% never. A single run only: a series reports errors in its table
    /// [default: 1%, or 100% with faults, which fail operations on purpose].
    #[arg(long, value_name = "SHARE", value_parser = share)]
    pub max_errors: Option<f64>,
    /// Exit 4 when the run's numbers break this bound, as k6's thresholds: e.g.
    /// 'p99<5ms', 'create_order:mean<2ms', 'service.p99.9<=20ms', 'max<1s', 'errors<1%',
    /// 'throughput>5000'. Repeatable. A latency is response time under --rate (service
    /// time with `service.`); a bare number is milliseconds. The folder is written
    /// whole, and run.json says what each bound measured (docs/runs.md).
    #[arg(long, value_name = "BOUND", value_parser = threshold)]
    pub threshold: Vec<crate::stats::threshold::Threshold>,
    /// Faults to inject: a TOML file of [[faults]] tables (at, action, node), in place
    /// of the spec's; they go to the server hatshop started that serves --db.
    #[arg(long, value_name = "FILE")]
    pub faults: Option<PathBuf>,
    /// Where servers started by hatshop live, for --faults [default: $HATSHOP_HOME,
    /// else ~/.local/share/hatshop].
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// A name for the run, recorded in run.json and summary.json and shown in its
    /// table, report and every comparison's legend (as latte's --tag, hyperfine's -n).
    #[arg(long, value_name = "NAME", value_parser = tag)]
    pub tag: Option<String>,
    /// Serve the run's counters (per event type and outcome, in flight) and latency as
    /// OpenMetrics text at http://ADDR/metrics while it runs, for Prometheus to scrape
    /// (e.g. 127.0.0.1:9464; 0.0.0.0:9464 for a scraper on another machine).
    #[arg(long, value_name = "ADDR", value_parser = listen_address)]
    pub metrics: Option<std::net::SocketAddr>,
    /// After the run, keep --metrics serving the final totals until a scraper has read
    /// them, this long at most (the scrape interval of Prometheus's example settings;
    /// 0: end at once).
    /// Runs of a sweep or --repeat do not wait.
    #[arg(long, value_name = "TIME", default_value = "15s", value_parser = duration, requires = "metrics")]
    pub metrics_linger: std::time::Duration,
    /// Result folder [default: results/<run-id>].
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run N times, each going on from the tables the one before left (one load), into
    /// repeat-1 … repeat-N of the result folder, whose summary.json and table give every figure as median (min–max)
    /// over the repeats; `compare` then tests across repeats. In a sweep: runs per value.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = positive_count::<usize>)]
    pub repeat: usize,
    /// Do not write the op log, ops/ (for overall-time runs; histograms are still kept).
    #[arg(long)]
    pub no_op_log: bool,
    /// Verify the database against the event stream when the run ends.
    #[arg(long)]
    pub verify: bool,
    /// Drop tables (or a keyspace) of hatshop's names even if hatshop did not create them.
    #[arg(long)]
    pub recreate: bool,
    /// Go on from the database an earlier run of the same stream left whole, instead of
    /// setting up and loading: the run sends the events that follow the ones it holds.
    /// `if-held` loads where it does not hold one (what a series asks of every run).
    #[arg(long, value_name = "WHEN", num_args = 0..=1, default_missing_value = "must", value_enum)]
    pub reuse_load: Option<ReuseLoad>,
    /// Do not show progress: neither the bar on a terminal nor the plain lines elsewhere.
    #[arg(long)]
    pub quiet: bool,
    /// Print every column of the table (stddev, the whole percentile ladder) where the
    /// terminal is narrower than the table; it is cut to 80 columns otherwise.
    #[arg(long)]
    pub wide: bool,
    /// The percentiles of the printed table, e.g. 50,90,99,99.9,99.999; summary.json
    /// gets them beside its standard ladder [default: 50,75,90,95,99,99.9,99.99].
    #[arg(long, value_name = "P,P,…")]
    pub percentiles: Option<PercentileList>,
    /// Where standard error is not a terminal (a CI log, a file), a plain progress line
    /// this often; 0: none.
    #[arg(long, value_name = "TIME", default_value = "10s", value_parser = seconds)]
    pub progress_interval: f64,
    /// Also write the run's summary (summary.json: which run, counts, throughput and
    /// latency per event type) to FILE; `-` writes it to standard output for a script,
    /// and the table to standard error.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Also write the run's table to FILE as CSV (plain numbers, latencies in µs), for a
    /// spreadsheet or a dataframe; `-`: standard output.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Also write the run's table to FILE as a Markdown table, for a pull request or a
    /// wiki; `-`: standard output.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Threads of their own for the lanes, each running an event loop of its own, lane
    /// i on thread i mod N; 0: the lanes are tasks of the shared runtime [default: the
    /// store's choice for the concurrency, see docs/workloads.md].
    #[arg(long, value_name = "N", value_parser = count::<usize>)]
    pub lane_threads: Option<usize>,
    /// Orders or records each lane writes at once in the initial load, through the
    /// store's bulk path (PostgreSQL's COPY, MariaDB's multi-row INSERT, Redis's
    /// pipeline, SQLite's one transaction, Cassandra's and Voldemort's many writes in
    /// flight); 1 writes them one at a time. Default: the store's (10,000 on
    /// PostgreSQL, 1,000 elsewhere).
    #[arg(long, value_name = "ROWS", value_parser = positive_count::<usize>)]
    pub load_batch: Option<usize>,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    /// The command line as parsed (with a settings file's flags): the flags a series
    /// (`--repeat`, a sweep) hands each of its runs as they were given.
    #[arg(skip)]
    pub argv: Vec<String>,
}

/// An address to listen on: HOST:PORT, the host by name or number.
fn listen_address(text: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    text.to_socket_addrs()
        .ok()
        .and_then(|mut found| found.next())
        .ok_or_else(|| {
            "an address to listen on is HOST:PORT (e.g. 127.0.0.1:9464, or 0.0.0.0:9464 \
             for a scraper elsewhere)"
                .into()
        })
}

/// A run's name: one line of at most 64 characters, so it fits a legend.
fn tag(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.is_empty() || text.chars().count() > 64 || text.chars().any(char::is_control) {
        return Err("a tag is one line of 1 to 64 characters".into());
    }
    Ok(text.to_string())
}

impl RunArgs {
    /// How many `--export-…` flags name standard output (`-`).
    pub fn exports_to_stdout(&self) -> usize {
        [&self.export_json, &self.export_csv, &self.export_markdown]
            .into_iter()
            .filter(|path| path.as_deref() == Some(std::path::Path::new("-")))
            .count()
    }
}

/// `hatshop prepare`: the database shards will share, made empty once.
#[derive(Debug, Args)]
pub struct PrepareArgs {
    /// The database the shards will use (a SQLite file must be named).
    #[arg(long, env = "HATSHOP_DB", hide_env_values = true, long_help = db_help())]
    pub db: String,
    /// Longest wait for a connection, handshake and authentication included.
    #[arg(long, value_name = "TIME", default_value = "10s", value_parser = above_zero_seconds, allow_hyphen_values = true)]
    pub connect_timeout: f64,
    /// Drop tables (or a keyspace) of hatshop's names even if hatshop did not create them.
    #[arg(long)]
    pub recreate: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// When a run goes on from what the database holds (`--reuse-load`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReuseLoad {
    /// Always: a database that holds no whole stream of this shape is refused.
    Must,
    /// Where the database holds one; else the run sets up and loads as any run does.
    IfHeld,
}
