//! `hatshop load`'s flags (study 002's bulk load).

use std::path::PathBuf;

use clap::Args;

use super::quantities::{above_zero_seconds, count, duration, positive_count, share};
use super::run::db_help;
use super::{RuntimeArgs, StoreArgs};

/// `hatshop load`'s flags: rows, batches, passes and the store they go to.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Store URL, as for `run` [default: a SQLite file in the result folder].
    #[arg(long, default_value = crate::db::DEFAULT_URL, env = "HATSHOP_DB", hide_env_values = true, long_help = db_help())]
    pub db: String,
    /// Preset sizes; flags given with it win. study-002: 10 passes of 150,000 rows of
    /// three 64-byte values, in batches of 10,000, one pass every 10 s.
    #[arg(long)]
    pub preset: Option<String>,
    /// Rows per pass [default: 150000].
    #[arg(long, value_parser = count::<u64>)]
    pub rows: Option<u64>,
    /// Value columns per row [default: 3].
    #[arg(long, value_parser = positive_count::<usize>)]
    pub columns: Option<usize>,
    /// Bytes per value [default: 64].
    #[arg(long, value_name = "BYTES", value_parser = count::<usize>)]
    pub value_size: Option<usize>,
    /// Rows per batch [default: 10000].
    #[arg(long, value_name = "ROWS", value_parser = positive_count::<u64>)]
    pub batch_size: Option<u64>,
    /// How a batch travels: unlogged (one request), logged (Cassandra's batch log;
    /// Redis MULTI/EXEC), none (Cassandra: concurrent single-row writes, timed together).
    /// (cassandra-stress: batchtype).
    #[arg(long, value_enum, default_value = "unlogged")]
    pub batch_type: crate::db::BatchKind,
    /// With --batch-type none: the rows of a batch written at once, each a single-row
    /// write (`-c` counts batches). Once `--in-flight`, still read.
    #[arg(long, alias = "in-flight", value_name = "N", default_value_t = 64, value_parser = positive_count::<usize>)]
    pub rows_in_flight: usize,
    /// Batches in flight at once.
    #[arg(short, long, value_name = "N", default_value_t = 1, value_parser = positive_count::<usize>)]
    pub concurrency: usize,
    /// Start a pass this often, e.g. 10s (study 002's "150K every 10 seconds"; a bare
    /// number is seconds); batches within a pass go back to back [default: passes back to
    /// back].
    #[arg(long, value_name = "TIME", value_parser = duration)]
    pub every: Option<std::time::Duration>,
    /// Passes of --rows new rows each [default: 1].
    #[arg(long, value_name = "N", value_parser = positive_count::<u64>)]
    pub repeat: Option<u64>,
    /// Seed of the rows' values.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Cassandra: trace this share (0-1) of the batches on the server; the report sets
    /// each one's coordinator time beside the client's (batch-traces.csv).
    #[arg(long, value_name = "SHARE", value_parser = share)]
    pub trace_sample: Option<f64>,
    /// Length of the report's time bins (batch latency mean and max per bin).
    #[arg(long, value_name = "TIME", default_value = "1s", value_parser = above_zero_seconds, allow_hyphen_values = true)]
    pub interval: f64,
    /// Longest wait for a connection, handshake and authentication included.
    #[arg(long, value_name = "TIME", default_value = "10s", value_parser = above_zero_seconds, allow_hyphen_values = true)]
    pub connect_timeout: f64,
    /// Longest one batch may take.
    #[arg(long, value_name = "TIME", default_value = "120s", value_parser = above_zero_seconds, allow_hyphen_values = true)]
    pub op_timeout: f64,
    /// Rows read back and compared after the load (0: count only).
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = count::<u64>)]
    pub verify_sample: u64,
    /// Do not read the rows back after the load.
    #[arg(long)]
    pub no_verify: bool,
    /// Where servers started by hatshop live, to watch them [default: $HATSHOP_HOME,
    /// else ~/.local/share/hatshop].
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Drop tables (or a keyspace) of hatshop's names even if hatshop did not create them.
    #[arg(long)]
    pub recreate: bool,
    /// Result folder [default: results/load-<store>-<time>].
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}
