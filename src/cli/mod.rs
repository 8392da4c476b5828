//! The command line: clap derive structs, help from the doc comments. Parsing only;
//! `config` turns these into a validated `RunConfig`. Store settings are not written
//! here: each store declares its own, and [`StoreArgs`] makes a flag of each, shown in
//! `--help` under the stores that take it.

pub mod config_file;
mod load;

use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Args, Parser, Subcommand};

use crate::cluster::ServerKind;
use crate::db::{RENAMED_SETTINGS as RENAMED, STORES, Setting, Value, schemes_where};
pub use load::LoadArgs;

/// hatshop: one seeded stream of hat-shop order events and key-value operations,
/// replayed against real databases, every operation timed and logged, the result verified.
#[derive(Debug, Parser)]
#[command(name = "hatshop", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// `--client-threads` before the subcommand, as it was once given: kept for old
    /// scripts, shown only in the help of the commands that run work.
    #[arg(long = "client-threads", id = "client_threads_before", hide = true, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub client_threads_before: Option<u16>,
    /// Settings used every time, a table per subcommand. A flag on the command line
    /// wins, then its environment variable, then this file [default: ./hatshop.toml,
    /// when there is one].
    #[arg(long = "config", global = true, value_name = "FILE")]
    pub settings_file: Option<std::path::PathBuf>,
}

impl Cli {
    /// Worker threads asked for the async runtime, by the commands that run work.
    pub fn client_threads(&self) -> Option<u16> {
        let of_command = match &self.command {
            Command::Run(run) => run.runtime.client_threads,
            Command::Sweep(sweep) => sweep.run.runtime.client_threads,
            Command::Load(load) => load.runtime.client_threads,
            _ => None,
        };
        of_command.or(self.client_threads_before)
    }
}

/// How hatshop's own runtime is laid out, for the commands that run work.
#[derive(Debug, Args, Clone)]
pub struct RuntimeArgs {
    /// Worker threads of hatshop's async runtime [default: one per core]. With the
    /// database on the same machine, 1 leaves it more CPU (see docs/peers.md).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub client_threads: Option<u16>,
}

/// A parse error as one line, as every other error is: clap's first line, with its tip
/// (a similar flag, how to pass a value that starts with `-`) in brackets, and where
/// to look. Its usage block is left to `--help`.
pub fn usage_error_line(rendered: &str) -> String {
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("error: bad command line");
    let body: Vec<&str> = lines.take_while(|l| !l.starts_with("Usage:")).collect();
    let tips: Vec<&str> = body
        .iter()
        .filter_map(|l| l.strip_prefix("tip: "))
        .collect();
    let mut line = first.to_string();
    // "the following required arguments were not provided:" names them below.
    if first.ends_with(':') {
        let named: Vec<&str> = body
            .iter()
            .copied()
            .filter(|l| !l.starts_with("tip: "))
            .collect();
        line = format!("{} {}", line, named.join(", "));
    }
    if !tips.is_empty() {
        line.push_str(&format!(" ({})", tips.join("; ")));
    }
    crate::secrets::redact(&(line + "; see --help")).into_owned()
}

/// The subcommands; each names what it does in `--help`.
#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process
pub enum Command {
    /// Replay a workload against a database and record every operation.
    // Where numbers are given, `--rate -10` is read as a bad rate (and said to be one),
    // not as a flag `-1`.
    #[command(allow_negative_numbers = true)]
    Run(RunArgs),
    /// Write a workload's event stream to a JSON Lines file.
    #[command(allow_negative_numbers = true)]
    Generate(GenerateArgs),
    /// Bulk load: rows of a few values in batches of a given size, each batch timed and
    /// the server watched (study 002: `hatshop load --preset study-002`).
    #[command(allow_negative_numbers = true)]
    Load(LoadArgs),
    /// Make hatshop's tables empty and ready, for the shards of a run (`run --shard`).
    Prepare(PrepareArgs),
    /// Join the folders of a run's shards into one folder that reports and verifies.
    Merge(MergeArgs),
    /// Check that a run's database holds exactly what its event stream says.
    Verify(VerifyArgs),
    /// Write report.html (charts, tables, errors) for a result folder.
    Report(ReportArgs),
    /// Rebuild the summary of a run that was killed, from its op log.
    Recover(ReportArgs),
    /// Put runs side by side: a table here and an HTML page, with significance.
    Compare(CompareArgs),
    /// Run one workload several times while one setting varies, and chart the result.
    #[command(allow_negative_numbers = true)]
    Sweep(SweepArgs),
    /// Reproduce a published study: start its servers, run and verify every cell, and
    /// write one study.html with its figures (`hatshop study --list` names them).
    Study(StudyArgs),
    /// List the preset workloads, or print one as TOML.
    Workloads(WorkloadsArgs),
    /// Start, stop and inspect local database servers (Cassandra, MariaDB, PostgreSQL, Redis, Voldemort).
    Server(ServerArgs),
    /// Print a shell's completion script (e.g. `hatshop completions bash > /etc/bash_completion.d/hatshop`).
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print a man page: hatshop(1), or a command's (`hatshop man run`, `hatshop man
    /// server start`); `--out DIR` writes them all (e.g. `hatshop man -o
    /// /usr/local/share/man/man1`).
    Man {
        /// The command whose page to print.
        #[arg(value_name = "COMMAND")]
        command: Vec<String>,
        /// Write every page, hatshop.1 and hatshop-<command>.1, into this folder.
        #[arg(short, long, value_name = "DIR", conflicts_with = "command")]
        out: Option<PathBuf>,
    },
}

/// `hatshop server`: the data folder, and what to do.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Folder for server data and downloads [default: $HATSHOP_HOME, else ~/.local/share/hatshop].
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    #[command(subcommand)]
    pub action: ServerAction,
}

/// What `hatshop server` does to a local server.
#[derive(Debug, Subcommand)]
pub enum ServerAction {
    /// Start a server (once: a second start says where it already runs) and print its
    /// URL; with --node, start one stopped or killed node of it again.
    Start {
        kind: ServerKind,
        /// Nodes: a Cassandra ring or a Galera cluster of 1-5.
        #[arg(long, default_value_t = 1)]
        nodes: usize,
        /// Cassandra data centres (2: GossipingPropertyFileSnitch, for NetworkTopologyStrategy).
        #[arg(long, default_value_t = 1)]
        dcs: usize,
        /// Start this node of a running server again (after kill or stop).
        #[arg(long, value_name = "K", conflicts_with_all = ["nodes", "dcs"])]
        node: Option<usize>,
        /// Cassandra version to fetch from Maven Central.
        #[arg(long)]
        version: Option<String>,
        /// JVM heap per node [default: Cassandra 1g for one node, 512m in a ring;
        /// Voldemort 256m].
        #[arg(long)]
        heap: Option<String>,
        /// Port to listen on [default: the usual one if free, else any free port].
        #[arg(long)]
        port: Option<u16>,
        /// Redis persistence: none, aof-everysec or aof-always.
        #[arg(long, default_value = "none", value_parser = ["none", "aof-everysec", "aof-always"])]
        persistence: String,
        /// Install missing Debian packages (mariadb-server, galera-4, postgresql, redis-server, openjdk-17-jdk-headless, maven); needs root.
        #[arg(long)]
        install: bool,
        /// Cassandra: a cassandra.yaml setting, e.g. batch_size_fail_threshold=4MiB;
        /// Voldemort: replication_factor, required_reads or required_writes (repeatable;
        /// kept for the life of the data, recorded in every run.json).
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_key_value)]
        config: Vec<(String, String)>,
        /// Voldemort: the source to build, a folder or .tar.gz of upstream's tree or its
        /// git URL [default: the upstream archive hatshop carries, commit 99127eab3].
        #[arg(long, value_name = "PATH|GIT-URL")]
        source: Option<String>,
        /// Give each node this share of the host's CPU, in cores (0.3: a third of one),
        /// so that it is a machine of its own in everything but the network: the
        /// kernel's CPU quota, set once the nodes are up (needs root). On a running
        /// server it changes the budget of every node at once.
        #[arg(long, value_name = "CORES")]
        cpu_per_node: Option<f64>,
    },
    /// Stop a server cleanly (every node, or one with --node), or all of them.
    Stop {
        #[arg(required_unless_present = "all")]
        kind: Option<ServerKind>,
        #[arg(long, conflicts_with = "kind")]
        all: bool,
        /// Stop only this node.
        #[arg(long, value_name = "K", conflicts_with = "all")]
        node: Option<usize>,
    },
    /// Kill a node with SIGKILL, as in a crash.
    Kill(NodeArgs),
    /// Pause a node with SIGSTOP: it stops answering and keeps its connections.
    Pause(NodeArgs),
    /// Resume a paused node (SIGCONT).
    Resume(NodeArgs),
    /// Stop a server (or all) and delete its data, to start from scratch.
    Wipe {
        #[arg(required_unless_present = "all")]
        kind: Option<ServerKind>,
        #[arg(long, conflicts_with = "kind")]
        all: bool,
    },
    /// What runs, where: every node's address, state, pid and memory, and its URL.
    Status,
    /// The end of a node's log.
    Logs {
        kind: ServerKind,
        /// Which node.
        #[arg(long, value_name = "K", default_value_t = 1)]
        node: usize,
        /// Lines to show.
        #[arg(short = 'n', long, default_value_t = 40)]
        lines: usize,
    },
}

/// A server and one of its nodes.
#[derive(Debug, Args)]
pub struct NodeArgs {
    pub kind: ServerKind,
    /// Which node (1, 2, …).
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub node: usize,
}

/// Which events: a preset or spec file, with overrides.
#[derive(Debug, Args, Clone)]
pub struct StreamArgs {
    /// Preset name (see `hatshop workloads`) or path of a TOML spec.
    #[arg(short, long, default_value = "hatshop-random")]
    pub workload: String,
    /// Seed of the event stream [default: the spec's seed].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Number of measured events [default: the spec's count].
    #[arg(long)]
    pub events: Option<u64>,
    /// Warm-up after the initial load, applied and not measured: a count of events
    /// (20000) or a time (10s, 1m) [default: the spec's count].
    #[arg(long, value_name = "EVENTS|TIME", value_parser = parse_warmup)]
    pub warmup: Option<WarmupArg>,
    /// Orders created before anything is measured (the spec's initial_orders).
    #[arg(long, value_name = "N")]
    pub orders: Option<u64>,
    /// Key-value records written before anything is measured (the spec's initial_records).
    #[arg(long, value_name = "N")]
    pub records: Option<u64>,
    /// Bytes of each key-value record (the spec's value_size; the study used 1500 and 15000).
    #[arg(long, value_name = "BYTES")]
    pub value_size: Option<u32>,
}

fn db_help() -> String {
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
    #[arg(long, conflicts_with_all = ["seed", "events", "warmup", "orders", "records", "value_size"])]
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
    #[arg(short, long)]
    pub concurrency: Option<usize>,
    /// Stop the measured phase (and a warm-up) after this many seconds (decimals allowed).
    #[arg(long, value_name = "SECS")]
    pub duration: Option<f64>,
    /// Length of the statistics intervals in seconds: latency over time and latency.hlog.
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    pub interval: f64,
    /// Longest wait for a connection, handshake and authentication included.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub connect_timeout: f64,
    /// Longest one operation may take; it then counts as a timeout (outcome unknown).
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub op_timeout: f64,
    /// Repeat a failed call up to N times when a retry can cure it (timeout,
    /// unavailable, conflict, lost connection); retries are counted apart and the
    /// latency of the operation spans all its calls.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub retries: u32,
    /// Open loop: send OPS operations per second in all (warm-up and measured phases),
    /// each at its own time however slowly answers come; -c bounds the requests
    /// in flight. Latency is then reported twice: service (sent → answered) and
    /// response (due → answered, what a user waiting in line sees). FROM..TO with
    /// --ramp climbs from one rate to the other.
    #[arg(long, value_name = "OPS", value_parser = parse_rate)]
    pub rate: Option<RateArg>,
    /// With --rate FROM..TO: how long the measured phase takes to climb, e.g. 60s
    /// (the warm-up runs at FROM; after the ramp, TO).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub ramp: Option<std::time::Duration>,
    /// Search for the highest --rate whose response time p99 stays under --p99-under:
    /// one run per rate (--duration each, 10 s if not given), doubling from --rate
    /// (1000 if not given), then halving the gap; sweep.csv and sweep.html draw the knee.
    #[arg(long)]
    pub find_max: bool,
    /// The bound for --find-max, e.g. 10ms or 500us.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub p99_under: Option<std::time::Duration>,
    /// Share (0-1) of measured order updates sent to a lane other than their order's,
    /// so two lanes race on one order [default: the spec's `conflicts`, else 0].
    #[arg(long, value_name = "SHARE")]
    pub conflicts: Option<f64>,
    /// Read the server's own time of this share (0-1) of the measured operations and
    /// set it against the time hatshop measured (traces.csv, the report): Cassandra's
    /// CQL tracing, MariaDB's performance_schema (read right after each sampled
    /// operation, outside its timed window). PostgreSQL keeps only totals per
    /// statement: with any share, pg_stat_statements is read before and after the run
    /// (server-statements.csv). Untraced operations are sent as always.
    #[arg(long, value_name = "SHARE")]
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
    /// Faults to inject: a TOML file of [[faults]] tables (at, action, node), in place
    /// of the spec's; they go to the server hatshop started that serves --db.
    #[arg(long, value_name = "FILE")]
    pub faults: Option<PathBuf>,
    /// Where servers started by hatshop live, for --faults [default: $HATSHOP_HOME,
    /// else ~/.local/share/hatshop].
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Result folder [default: results/<run-id>].
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run N times, each on fresh tables, into repeat-1 … repeat-N of the result
    /// folder, whose summary.json and table give every figure as median (min–max)
    /// over the repeats; `compare` then tests across repeats. In a sweep: runs per value.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: usize,
    /// Do not write ops.csv (for overall-time runs; histograms are still kept).
    #[arg(long)]
    pub no_op_log: bool,
    /// Verify the database against the event stream when the run ends.
    #[arg(long)]
    pub verify: bool,
    /// Drop tables (or a keyspace) of hatshop's names even if hatshop did not create them.
    #[arg(long)]
    pub recreate: bool,
    /// Do not show progress: neither the bar on a terminal nor the plain lines elsewhere.
    #[arg(long)]
    pub quiet: bool,
    /// The percentiles of the printed table, e.g. 50,90,99,99.9,99.999; summary.json
    /// gets them beside its standard ladder [default: 50,75,90,95,99,99.9,99.99].
    #[arg(long, value_name = "P,P,…")]
    pub percentiles: Option<String>,
    /// Where standard error is not a terminal (a CI log, a file), a plain progress line
    /// every SECS seconds; 0: none.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub progress_interval: f64,
    /// Also write the run's summary (summary.json: which run, counts, throughput and
    /// latency per event type) to FILE; `-` writes it to standard output for a script,
    /// and the table to standard error.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Threads of their own for the lanes, each with a single-threaded runtime, lane i
    /// on thread i mod N; 0: the lanes are tasks of the shared runtime [default: the
    /// store's choice for the concurrency, see docs/workloads.md].
    #[arg(long, value_name = "N")]
    pub lane_threads: Option<usize>,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Store settings given as flags; each may also be given in the URL as `?key=value`.
#[derive(Debug, Clone, Default)]
pub struct StoreArgs {
    /// (setting name, value), in declaration order.
    pub given: Vec<(String, String)>,
}

/// Every setting any store declares, once, with the stores that take it.
pub fn all_settings() -> Vec<(&'static Setting, Vec<&'static str>)> {
    let mut out: Vec<(&'static Setting, Vec<&'static str>)> = Vec::new();
    for store in STORES {
        for setting in store.settings {
            match out.iter_mut().find(|(s, _)| s.name == setting.name) {
                Some((_, stores)) => stores.push(store.scheme),
                None => out.push((setting, vec![store.scheme])),
            }
        }
    }
    out
}

impl clap::FromArgMatches for StoreArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut given = Vec::new();
        for (setting, _) in all_settings() {
            match setting.value {
                Value::Switch => {
                    if matches.get_flag(setting.name) {
                        given.push((setting.name.to_string(), "true".to_string()));
                    }
                }
                _ => {
                    if let Some(value) = matches.get_one::<String>(setting.name) {
                        given.push((setting.name.to_string(), value.clone()));
                    }
                }
            }
        }
        Ok(StoreArgs { given })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

/// Each store's declaration of setting `name`, with the store's scheme.
fn declarations(name: &str) -> Vec<(&'static str, &'static Setting)> {
    STORES
        .iter()
        .flat_map(|store| {
            store
                .settings
                .iter()
                .filter(move |s| s.name == name)
                .map(move |s| (store.scheme, s))
        })
        .collect()
}

/// A setting's help with its default.
fn help_of(setting: &Setting) -> String {
    let mut help = setting.help.to_string();
    if !setting.default.is_empty() && setting.value != Value::Switch {
        help.push_str(&format!(" [default: {}]", setting.default));
    }
    help
}

/// A flag's help: one text where every store that takes the setting declares it
/// alike, else each store's own, named (`kv_table` is sysbench's table on mysql and
/// pgbench's on postgres).
fn flag_help(setting: &Setting) -> String {
    let declared = declarations(setting.name);
    if declared.iter().all(|(_, d)| {
        d.help == setting.help && d.value == setting.value && d.default == setting.default
    }) {
        return help_of(setting);
    }
    let each: Vec<String> = declared
        .iter()
        .map(|(scheme, d)| format!("{scheme}: {}", help_of(d)))
        .collect();
    each.join("; ")
}

/// The words a choice flag takes on any store that declares it.
fn choice_words(name: &str) -> Vec<&'static str> {
    let mut words = Vec::new();
    for (_, setting) in declarations(name) {
        if let Value::Choice(choices) = setting.value {
            for word in choices {
                if !words.contains(word) {
                    words.push(*word);
                }
            }
        }
    }
    words
}

impl clap::Args for StoreArgs {
    fn augment_args(mut cmd: clap::Command) -> clap::Command {
        for (setting, stores) in all_settings() {
            let mut arg = Arg::new(setting.name)
                .long(setting.name.replace('_', "-"))
                .help(flag_help(setting))
                .help_heading(format!("Settings of {}", stores.join(", ")));
            arg = match setting.value {
                Value::Switch => arg.action(ArgAction::SetTrue),
                Value::Count { .. } => arg.value_name("N"),
                Value::Choice(_) => arg.value_name(choice_words(setting.name).join("|")),
                Value::Text(placeholder) => arg.value_name(placeholder),
            };
            for (old, _) in RENAMED.iter().filter(|(_, new)| *new == setting.name) {
                arg = arg.alias(old.replace('_', "-"));
            }
            cmd = cmd.arg(arg);
        }
        cmd
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// `hatshop generate`: the stream, and the file it goes to.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    #[command(flatten)]
    pub stream: StreamArgs,
    /// The events file to write (JSON Lines, for `run --events-file`), or - for standard
    /// output.
    #[arg(value_name = "FILE", required_unless_present = "output")]
    pub file: Option<PathBuf>,
    /// The file, as it was once given (`-o FILE`); `-o` is a folder everywhere else.
    #[arg(short, long, value_name = "FILE", hide = true, conflicts_with = "file")]
    pub output: Option<PathBuf>,
}

impl GenerateArgs {
    /// The file to write, however it was given.
    pub fn target(&self) -> &std::path::Path {
        self.file
            .as_deref()
            .or(self.output.as_deref())
            .expect("clap requires one")
    }
}

/// `hatshop verify`: the result folder, and how to reach its database again.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// A result folder written by `hatshop run`.
    pub result_dir: PathBuf,
    /// Read this database instead of the one in run.json. HATSHOP_DB is taken too, but
    /// only when it names the run's own database (e.g. to supply its password).
    #[arg(long)]
    pub db: Option<String>,
    /// Longest wait for a connection, handshake and authentication included.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub connect_timeout: f64,
    /// Longest wait for one page of data read back.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub op_timeout: f64,
}

/// `hatshop prepare`: the database shards will share, made empty once.
#[derive(Debug, Args)]
pub struct PrepareArgs {
    /// The database the shards will use (a SQLite file must be named).
    #[arg(long, env = "HATSHOP_DB", hide_env_values = true, long_help = db_help())]
    pub db: String,
    /// Longest wait for a connection, handshake and authentication included.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub connect_timeout: f64,
    /// Drop tables (or a keyspace) of hatshop's names even if hatshop did not create them.
    #[arg(long)]
    pub recreate: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `hatshop merge`: the shards' folders and the folder that joins them.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' result folders (`run --shard I/N`), one per shard, any order.
    #[arg(required = true)]
    pub shard_dirs: Vec<PathBuf>,
    /// The merged folder to write (must not exist or be empty).
    #[arg(short, long, value_name = "DIR")]
    pub out: PathBuf,
}

/// `hatshop report`: the result folder whose pages are written again.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result folder written by `hatshop run`.
    pub result_dir: PathBuf,
}

/// `hatshop sweep`: the settings varied, and the run each point makes.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The setting and its values: connections=1,2,4,8 · events=500,5000 · concurrency=1,4,16 ·
    /// cl=ONE,QUORUM,ALL · nodes=1,2,3 (starts the cluster at each size: --db then names
    /// servers, e.g. --db cassandra --db galera) · rate=1000,2000,4000 (open loop: the
    /// knee shows as response time leaving service time) · value_size, warmup, seed,
    /// duration, conflicts, retries, or any store setting. Several --vary move in step.
    #[arg(long, value_name = "KEY=V1,V2,…", required = true, action = clap::ArgAction::Append)]
    pub vary: Vec<String>,
    /// Everything a run takes (--repeat: runs per value); --out names the sweep folder [default: results/sweep-<time>-<key>].
    #[command(flatten)]
    pub run: RunArgs,
}

/// `10ms`, `1s`, `500us`: a length of time (`--p99-under`, `--ramp`).
fn parse_key_value(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, got '{text}'"))?;
    let key = key.trim();
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!(
            "'{key}' is not a setting name (letters, digits, _)"
        ));
    }
    if value.contains(['\n', '\r']) || value.trim().is_empty() {
        return Err(format!("{key}: the value must be one non-empty line"));
    }
    Ok((key.to_string(), value.trim().to_string()))
}

fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(text.trim())
        .map_err(|e| format!("'{text}' is not a duration like 10ms or 1s: {e}"))
}

/// `--warmup`: a count of events, or how long to warm up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WarmupArg {
    /// This many events (`--warmup 20000`).
    Events(u64),
    /// Events until this long after the warm-up began (`--warmup 10s`).
    Time(std::time::Duration),
}

impl std::str::FromStr for WarmupArg {
    type Err = String;

    fn from_str(text: &str) -> Result<WarmupArg, String> {
        parse_warmup(text)
    }
}

fn parse_warmup(text: &str) -> Result<WarmupArg, String> {
    let text = text.trim();
    if let Ok(events) = text.replace('_', "").parse::<u64>() {
        return Ok(WarmupArg::Events(events));
    }
    match humantime::parse_duration(text) {
        Ok(time) if !time.is_zero() => Ok(WarmupArg::Time(time)),
        _ => Err(format!(
            "'{text}' is neither a count of events (20000) nor a time (10s, 1m)"
        )),
    }
}

/// `--rate`: one rate, or FROM..TO for a ramp.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateArg {
    pub from: f64,
    pub to: f64,
}

impl RateArg {
    /// One rate from start to end (`--rate 2000`).
    pub fn fixed(ops_s: f64) -> RateArg {
        RateArg {
            from: ops_s,
            to: ops_s,
        }
    }

    /// Whether the rate climbs during the run (`--rate 1000..8000`).
    pub fn is_ramp(self) -> bool {
        self.from != self.to
    }
}

fn parse_rate(text: &str) -> Result<RateArg, String> {
    let number = |part: &str| {
        part.trim().replace('_', "").parse::<f64>().map_err(|_| {
            format!("'{text}' is not a rate: give operations per second, e.g. 5000 or 1000..20000")
        })
    };
    match text.split_once("..") {
        Some((from, to)) => Ok(RateArg {
            from: number(from)?,
            to: number(to)?,
        }),
        None => number(text).map(RateArg::fixed),
    }
}

/// `hatshop compare`: the runs, the first as baseline, and the page written.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Result folders; the first is the baseline.
    #[arg(required = true, num_args = 2..)]
    pub result_dirs: Vec<PathBuf>,
    /// The folder compare.html goes into [default: the current folder]. (A name ending
    /// in .html is still read as the page's own file, as `--output` was.)
    #[arg(short, long, alias = "output", value_name = "DIR")]
    pub out: Option<PathBuf>,
}

impl CompareArgs {
    /// The page to write: compare.html in `--out`, or the file an older `-o x.html` names.
    pub fn page(&self) -> PathBuf {
        match &self.out {
            None => PathBuf::from("compare.html"),
            Some(file) if file.extension().is_some_and(|e| e == "html") => file.clone(),
            // A device, a pipe or a file already there is the page's own file.
            Some(file) if file.exists() && !file.is_dir() => file.clone(),
            Some(dir) => dir.join("compare.html"),
        }
    }
}

/// `hatshop study`: which study, how much of it, and where.
#[derive(Debug, Args)]
pub struct StudyArgs {
    /// The study to run (see --list).
    #[arg(required_unless_present = "list")]
    pub name: Option<String>,
    /// Name every study, one a line, name first.
    #[arg(long, conflicts_with = "name")]
    pub list: bool,
    /// A fraction of the study's work (events, records, repeats) for a quick look, e.g.
    /// 0.05; the page says so. The swept values (nodes, connections, sizes) stay.
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub scale: f64,
    /// The study's folder [default: results/study-<name>]. Run again with the same
    /// folder to resume: finished cells are kept, the rest are run.
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Folder for server data and downloads [default: $HATSHOP_HOME, else ~/.local/share/hatshop].
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Install the Debian packages a server the study starts is missing (needs root),
    /// as `hatshop server start --install` does.
    #[arg(long)]
    pub install: bool,
    /// Run the cells that need SERVER with NODES nodes against your own cluster at URL
    /// (machines of their own, e.g. run by a Kubernetes operator) instead of starting
    /// one here: `--server-url cassandra:3=cassandra://10.0.0.1,10.0.0.2,10.0.0.3/hatshop`.
    /// Repeat it for each size; the page names those machines.
    #[arg(long, value_name = "SERVER:NODES=URL", value_parser = parse_server_url)]
    pub server_url: Vec<(String, usize, String)>,
}

/// `cassandra:3=URL` as `--server-url` takes it.
fn parse_server_url(text: &str) -> Result<(String, usize, String), String> {
    let bad = || {
        format!(
            "'{}' is not SERVER:NODES=URL (e.g. cassandra:3=cassandra://10.0.0.1,10.0.0.2,10.0.0.3/hatshop)",
            crate::secrets::redact(text)
        )
    };
    let (place, url) = text.split_once('=').ok_or_else(bad)?;
    let (server, nodes) = place.split_once(':').ok_or_else(bad)?;
    let nodes: usize = nodes.parse().map_err(|_| bad())?;
    if nodes == 0 || !url.contains("://") {
        return Err(bad());
    }
    Ok((server.to_string(), nodes, url.to_string()))
}

/// `hatshop workloads`: list the presets, or show one.
#[derive(Debug, Args)]
pub struct WorkloadsArgs {
    #[command(subcommand)]
    pub action: Option<WorkloadsAction>,
}

/// What `hatshop workloads` prints beyond the list.
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

    /// A global flag's id must not be a subcommand field's too: clap would then read one
    /// as the other's type and panic (`--config` beside `server start --set`).
    #[test]
    fn global_flags_do_not_clash_with_a_subcommands_fields() {
        let cli = Cli::try_parse_from([
            "hatshop",
            "server",
            "start",
            "cassandra",
            "--set",
            "a=b",
            "--config",
            "h.toml",
        ])
        .unwrap();
        assert_eq!(cli.settings_file, Some("h.toml".into()));
        let Command::Server(ServerArgs {
            action: ServerAction::Start { config, .. },
            ..
        }) = cli.command
        else {
            panic!("a server start")
        };
        assert_eq!(config, [("a".to_string(), "b".to_string())]);
    }

    #[test]
    fn store_flags_come_from_the_stores() {
        let cli = Cli::try_parse_from([
            "hatshop", "run", "--cl", "ONE", "--pool", "3", "--lwt", "--db", "null://",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("a run")
        };
        let given: Vec<(&str, &str)> = args
            .store
            .given
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert!(given.contains(&("cl", "ONE")));
        // `--pool` is the old name of `--connections`.
        assert!(given.contains(&("connections", "3")));
        assert!(given.contains(&("lwt", "true")));
        let help = Cli::command()
            .find_subcommand_mut("run")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(help.contains("Settings of cassandra"), "{help}");
        assert!(help.contains("Settings of mysql, postgres"), "{help}");
        // A setting two stores declare differently reads as each store's own.
        assert!(
            help.contains("--kv-table <kv|sbtest|pgbench_accounts>"),
            "{help}"
        );
        assert!(
            help.contains("mysql: key-value records in hatshop's table"),
            "{help}"
        );
        assert!(
            help.contains("postgres: key-value records in hatshop's table"),
            "{help}"
        );
        for store in STORES {
            assert!(help.contains(store.example), "{}", store.example);
        }
    }
}
