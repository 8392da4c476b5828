//! The flags of the commands that run many cells: `sweep` and `study`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::run::RunArgs;
use super::values::parse_server_url;
use super::vary::{Vary, parse_vary};

/// `hatshop sweep`: the settings varied, and the run each point makes.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The setting and its values: connections=1,2,4,8 · events=500,5000 · concurrency=1,4,16 ·
    /// cl=ONE,QUORUM,ALL · nodes=1,2,3 (starts the cluster at each size: --db then names
    /// servers, e.g. --db cassandra --db galera) · rate=1000,2000,4000 (open loop: the
    /// knee shows as response time leaving service time) · value_size, warmup, seed,
    /// duration, conflicts, retries, or any store setting. Several --vary move in step.
    #[arg(long, value_name = "KEY=V1,V2,…", required = true, action = clap::ArgAction::Append, value_parser = parse_vary)]
    pub vary: Vec<Vary>,
    /// Everything a run takes (--repeat: runs per value); --out names the sweep folder [default: results/sweep-<time>-<key>].
    #[command(flatten)]
    pub run: RunArgs,
}

/// `hatshop study show NAME`.
#[derive(Debug, Subcommand)]
pub enum StudyShow {
    /// Print a built-in study's file, to copy and change (`> mine.toml`).
    Show {
        /// A built-in study's name (see --list).
        name: String,
    },
}

/// `hatshop study`: which study, how much of it, and where.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct StudyArgs {
    #[command(subcommand)]
    pub show: Option<StudyShow>,
    /// The study to run: a built-in study's name (see --list) or a study file
    /// (docs/studies.md).
    #[arg(required_unless_present = "list", value_name = "NAME|FILE")]
    pub name: Option<String>,
    /// Name every study, one a line, name first.
    #[arg(long, conflicts_with = "name")]
    pub list: bool,
    /// Print each cell's folder and command, in the order they would run, and run
    /// nothing: what a study file makes, checked before a server starts.
    #[arg(long)]
    pub dry_run: bool,
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
