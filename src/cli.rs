//! The command line: clap derive structs, help from the doc comments. Parsing only;
//! `config` turns these into a validated `RunConfig`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// hatshop: one seeded stream of hat-shop order events, replayed against real
/// databases, every operation timed and logged, the result verified.
#[derive(Debug, Parser)]
#[command(name = "hatshop", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay a workload against a database and record every operation.
    Run(RunArgs),
    /// Write a workload's event stream to a JSON Lines file.
    Generate(GenerateArgs),
    /// Check that a run's database holds exactly what its event stream says.
    Verify(VerifyArgs),
    /// List the preset workloads, or print one as TOML.
    Workloads(WorkloadsArgs),
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

#[derive(Debug, Args)]
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
