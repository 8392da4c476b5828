//! The flags that make a stream (workload, seed, counts, warm-up, sizes), and the
//! commands that only make or list streams: `generate` and `workloads`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::quantities::count;
use super::values::{WarmupArg, parse_warmup};
use crate::workload::OrderBytes;

/// Which events: a preset or spec file, with overrides.
#[derive(Debug, Args, Clone)]
pub struct StreamArgs {
    /// Preset name (see `hatshop workloads`) or path of a TOML spec.
    #[arg(short, long, default_value = "hatshop-random")]
    pub workload: String,
    /// Seed of the event stream [default: the spec's seed].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Number of measured events [default: the spec's count, or without end with
    /// --duration].
    #[arg(long, value_parser = count::<u64>)]
    pub events: Option<u64>,
    /// Warm-up after the initial load, applied and not measured: a count of events
    /// (20000, 20k), a time (10s, 1m), or `settled`: until the mean latency per 5 s
    /// stops falling, 2 minutes at most [default: the spec's count].
    #[arg(long, value_name = "EVENTS|TIME|settled", value_parser = parse_warmup)]
    pub warmup: Option<WarmupArg>,
    /// Orders created before anything is measured (the spec's initial_orders).
    #[arg(long, value_name = "N", value_parser = count::<u64>)]
    pub orders: Option<u64>,
    /// Key-value records written before anything is measured (the spec's initial_records).
    #[arg(long, value_name = "N", value_parser = count::<u64>)]
    pub records: Option<u64>,
    /// Bytes of each key-value record (the spec's value_size; the study used 1500 and 15000).
    #[arg(long, value_name = "BYTES", value_parser = count::<u32>)]
    pub value_size: Option<u32>,
    /// Bytes of each new order's payload column, fixed (500) or drawn from a range
    /// (200..2000, 1k..4k) (the spec's order_bytes) [default: none].
    #[arg(long, value_name = "BYTES|MIN..MAX", value_parser = OrderBytes::parse)]
    pub order_bytes: Option<OrderBytes>,
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
