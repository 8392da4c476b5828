//! The flags of the commands that read result folders: `verify`, `report`, `merge`,
//! `compare`, `show`, `export`.

use std::path::PathBuf;

use clap::Args;

use super::quantities::above_zero_seconds;

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
    #[arg(long, value_name = "TIME", default_value = "10s", value_parser = above_zero_seconds, allow_hyphen_values = true)]
    pub connect_timeout: f64,
    /// Longest wait for one page of data read back; the orders, read in one call, get
    /// it once for every 10,000 the stream leaves.
    #[arg(long, value_name = "TIME", default_value = "60s", value_parser = above_zero_seconds, allow_hyphen_values = true)]
    pub op_timeout: f64,
    /// Read everything back, even where the run went on from tables verified exact
    /// (by default only what its own events wrote is read back then).
    #[arg(long)]
    pub full: bool,
}

/// `hatshop report`: the result folder whose pages are written again.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result folder written by `hatshop run`.
    pub result_dir: PathBuf,
}

/// `hatshop export`: the run whose op log to write as CSV, and where.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A result folder written by `hatshop run` (with its op log on).
    #[arg(value_name = "DIR")]
    pub result_dir: PathBuf,
    /// Write the op log as CSV, one row per operation (the only format so far; pandas,
    /// polars and DuckDB read the op log's Parquet files in DIR/ops as they are).
    #[arg(long, required = true)]
    pub csv: bool,
    /// The file to write, `-` for standard output [default: DIR/ops.csv].
    #[arg(short, long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `hatshop show`: the folders whose tables to print again.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Result folders written by `hatshop run` (a `--repeat` folder shows its medians),
    /// or the folder `hatshop compare -o DIR` wrote its page into (its table).
    #[arg(required = true, value_name = "DIR")]
    pub result_dirs: Vec<PathBuf>,
    /// The percentiles of the table, e.g. 50,99,99.9 [default: 50,75,90,95,99,99.9,99.99].
    #[arg(long, value_name = "P,P,…")]
    pub percentiles: Option<super::PercentileList>,
    /// Print every column of the table where the terminal is narrower than it.
    #[arg(long)]
    pub wide: bool,
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
    /// Also write the comparison's table to FILE as CSV (plain numbers, latencies in
    /// µs, each run's ratio, p-value and verdict); `-`: standard output.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Also write the comparison's table to FILE as a Markdown table, for a pull request
    /// or a wiki; `-`: standard output.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Also write the comparison's table to FILE as JSON (the CSV's rows as objects,
    /// numbers as numbers, null where the CSV is empty); `-`: standard output.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Judge each run (a repeat folder: its repeats together) by this bound, in
    /// --threshold's words (p99<20ms, errors<0.1%): meets, misses or too close to call,
    /// from a 95 % interval over its repeats; the page and the terminal open with it.
    /// Repeat it for each bound.
    #[arg(long, value_name = "BOUND", value_parser = super::threshold::threshold)]
    pub slo: Vec<crate::stats::threshold::Threshold>,
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
