//! From command-line flags to the validated `RunConfig` the engine runs on: the spec
//! resolved with its overrides (`stream`), the URL parsed and its settings checked
//! against the store's declarations (`store`), the pace, deadlines and lanes decided
//! (`plan`). The config is recorded in run.json, so a result folder says how to
//! repeat it. Flags to config, and nothing else.

mod plan;
mod store;
mod stream;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, bail};

pub use plan::{WarmupUntil, seconds, years_or_time};
pub use store::{in_result_folder, store_settings};
pub use stream::resolve_spec;

use crate::cli::RunArgs;
use crate::db::{DbUrl, Settings};
use crate::stats::threshold::Threshold;
use crate::workload::{EventSource, Fault, WorkloadSpec};
use plan::{
    check_shardable, concurrency_of, conflicts_of, faults_of, load_batch_of, max_errors_of,
    open_loop_length, pace_of, refuse_warmup_past_duration, shard_of, warmup_until_of,
};
use store::{store_of, trace_sample_of};
use stream::{run_id, source_of, spec_concurrency};

/// The run's id and its result folder: `--out`, else a new folder under `results/`
/// named by the run; the run is then known by its folder's name, which no other run
/// in that place has.
fn run_id_and_folder(
    args: &RunArgs,
    db: &DbUrl,
    source: &EventSource,
    shard: Option<crate::runner::Shard>,
) -> Result<(String, PathBuf)> {
    let mut run_id = run_id(db.scheme(), source);
    if let Some(shard) = shard {
        run_id = format!("{run_id}-shard{}of{}", shard.index, shard.count);
    }
    let out_dir = match &args.out {
        Some(dir) => {
            crate::result_dir::folder::refuse_url_as_folder(dir, "result")?;
            dir.clone()
        }
        None => crate::result_dir::folder::unique_dir(Path::new("results"), &run_id),
    };
    if let Some(name) = out_dir.file_name() {
        run_id = name.to_string_lossy().into_owned();
    }
    Ok((run_id, out_dir))
}

/// An `--export-…` file, checked before the run so a typo does not cost the run; `-`
/// is standard output.
fn export_target(flag: &str, path: &Option<PathBuf>) -> Result<Option<PathBuf>> {
    if let Some(path) = path
        && path.as_os_str() != "-"
    {
        crate::files::check_out(flag, path)?;
    }
    Ok(path.clone())
}

/// Everything a run needs, validated.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub source: EventSource,
    pub db: DbUrl,
    /// URL settings with the command-line flags applied, checked.
    pub settings: Settings,
    pub concurrency: usize,
    /// `--lane-threads`: threads of their own the lanes run on (0: tasks of the shared
    /// runtime; `None`: the store's choice).
    pub lane_threads: Option<usize>,
    /// `--load-batch`: orders or records a lane writes at once in the initial load.
    pub load_batch: usize,
    pub max_duration: Option<Duration>,
    /// `--min-duration`: the count and time the measured phase lasts at least (the
    /// stream then has no end of its own).
    pub floor: Option<crate::runner::MeasureFloor>,
    /// How long an open loop takes to send its events, when `--duration` does not bound
    /// it (said before the run when it is long).
    pub unbounded_length: Option<Duration>,
    /// `--warmup 10s` or `--warmup settled`: a warm-up that ends on the clock, its
    /// count decided as it runs.
    pub warmup_until: Option<WarmupUntil>,
    pub interval: Duration,
    pub connect_timeout: Duration,
    pub op_timeout: Duration,
    pub retries: u32,
    /// Closed loop, or open loop at `--rate` (with `--ramp`, climbing).
    pub pace: crate::runner::Pace,
    pub conflicts: f64,
    /// This process runs one shard of the run (`--shard I/N`).
    pub shard: Option<crate::runner::Shard>,
    /// Share of measured operations traced on the server (`--trace-sample`).
    pub trace_sample: f64,
    /// Faults to inject, in time order (the server is found when the run starts).
    pub faults: Vec<Fault>,
    /// The share of failed measured operations above which a run exits 3
    /// (`--max-errors`; `None`: no bound).
    pub max_errors: Option<f64>,
    /// `--threshold`: bounds the run's numbers must keep (exit 4 otherwise).
    pub thresholds: Vec<Threshold>,
    /// `--home`, for the servers faults go to.
    pub home: Option<PathBuf>,
    pub out_dir: PathBuf,
    pub run_id: String,
    /// `--tag`: the run's name in its records, table, report and legends.
    pub tag: Option<String>,
    /// `--metrics`: where the run's metrics are served while it runs.
    pub metrics: Option<std::net::SocketAddr>,
    /// `--metrics-linger`: how long the endpoint waits for a last scrape after the run.
    pub metrics_linger: Duration,
    pub op_log: bool,
    pub verify: bool,
    pub recreate: bool,
    /// `--reuse-load`: go on from what the database holds instead of loading.
    pub reuse_load: Option<crate::cli::ReuseLoad>,
    /// `--percentiles`: the table's columns and summary.json's extra percentiles
    /// (empty: the standard ladder alone).
    pub percentiles: Vec<(String, f64)>,
    /// How often a plain progress line is printed off a terminal (`None`: never).
    pub progress_interval: Option<Duration>,
    /// Where `--export-json` copies summary.json (`-`: standard output).
    pub export_json: Option<PathBuf>,
    /// Where `--export-csv` and `--export-markdown` write the table.
    pub export_csv: Option<PathBuf>,
    pub export_markdown: Option<PathBuf>,
    pub show_progress: bool,
    /// `--wide`: the whole table, however narrow the terminal.
    pub wide: bool,
    /// Print the table and paths when the run ends (a sweep prints its own line).
    pub print_details: bool,
}

/// `--p99-under` is the bound of `--find-max`, and means nothing without it.
pub fn refuse_bound_without_search(args: &RunArgs) -> Result<()> {
    if args.p99_under.is_some() {
        return Err(crate::cli::UsageError(
            "--p99-under is the bound of --find-max: add --find-max".into(),
        )
        .into());
    }
    Ok(())
}

/// The runtime threads a run's store chooses for its concurrency
/// (`StoreDeclarations::client_threads`), read from the flags before the runtime is built.
/// `None` where the store leaves it to the runtime, or where the flags do not resolve
/// (the run itself then says what is wrong). An events file is not read for it.
pub fn chosen_client_threads(args: &RunArgs) -> Option<usize> {
    let (db, settings) = store_of(args).ok()?;
    let spec = match &args.events_file {
        Some(_) => None,
        None => resolve_spec(&args.stream).ok()?.concurrency,
    };
    let concurrency = concurrency_of(args, spec, &db, &settings).ok()?;
    (db.store().client_threads)(concurrency)
}

/// How long the measured phase may last: `--stages`' length, else `--duration`.
fn max_duration_of(args: &RunArgs, pace: &crate::runner::Pace) -> Result<Option<Duration>> {
    match pace {
        crate::runner::Pace::Stages(stages) => Ok(Some(stages.length())),
        _ => args
            .duration
            .map(|secs| seconds("--duration", secs, 0.001))
            .transpose(),
    }
}

/// `--min-duration`: the stream's count becomes the floor's, and the stream endless.
fn measure_floor_of(
    args: &RunArgs,
    mut source: EventSource,
) -> Result<(EventSource, Option<crate::runner::MeasureFloor>)> {
    let Some(secs) = args.min_duration else {
        return Ok((source, None));
    };
    let duration = seconds("--min-duration", secs, 0.001)?;
    let EventSource::Generated { workload } = &mut source else {
        crate::cli::usage_bail!(
            "--min-duration lengthens a generated stream; an events file has the length it has"
        );
    };
    let floor = crate::runner::MeasureFloor {
        events: workload.events,
        duration,
    };
    workload.events = WorkloadSpec::WITHOUT_END;
    Ok((source, Some(floor)))
}

impl RunConfig {
    /// The flags resolved and checked: every problem one line, before anything runs.
    pub fn from_args(args: &RunArgs) -> Result<RunConfig> {
        if args.exports_to_stdout() > 1 {
            bail!(
                "standard output carries one export: give the others a file (--export-json -, --export-csv -, --export-markdown -)"
            );
        }
        let (db, settings) = store_of(args)?;
        let source = source_of(args, &db, &settings)?;
        let concurrency = concurrency_of(args, spec_concurrency(&source), &db, &settings)?;
        let pace = pace_of(args)?;
        let max_duration = max_duration_of(args, &pace)?;
        let interval = seconds("--interval", args.interval, 0.001)?;
        let connect_timeout = seconds("--connect-timeout", args.connect_timeout, 0.1)?;
        let op_timeout = seconds("--op-timeout", args.op_timeout, 0.001)?;
        if args.retries > 100 {
            bail!("--retries must be at most 100, got {}", args.retries);
        }
        let conflicts = conflicts_of(args, &source)?;
        let faults = faults_of(args, &source, max_duration)?;
        let warmup_until = warmup_until_of(args, max_duration)?;
        refuse_warmup_past_duration(&pace, &source, max_duration)?;
        let unbounded_length = match max_duration {
            Some(_) => None,
            None => open_loop_length(&pace, &source, warmup_until)?,
        };
        let (source, floor) = measure_floor_of(args, source)?;
        let shard = shard_of(args)?;
        if let Some(shard) = shard {
            check_shardable(shard, args, &db, conflicts, &faults)?;
        }
        let trace_sample = trace_sample_of(args, &db)?;
        let (run_id, out_dir) = run_id_and_folder(args, &db, &source, shard)?;
        let db = in_result_folder(db, &out_dir);
        Ok(RunConfig {
            source,
            load_batch: load_batch_of(args, &db),
            db,
            settings,
            concurrency,
            lane_threads: args.lane_threads,
            max_duration,
            floor,
            warmup_until,
            unbounded_length,
            interval,
            connect_timeout,
            op_timeout,
            retries: args.retries,
            pace,
            conflicts,
            shard,
            trace_sample,
            max_errors: max_errors_of(args.max_errors, &faults),
            thresholds: args.threshold.clone(),
            faults,
            home: args.home.clone(),
            out_dir,
            run_id,
            tag: args.tag.clone(),
            metrics: args.metrics,
            metrics_linger: args.metrics_linger,
            op_log: !args.no_op_log,
            verify: args.verify,
            recreate: args.recreate,
            reuse_load: args.reuse_load,
            export_json: export_target("--export-json", &args.export_json)?,
            export_csv: export_target("--export-csv", &args.export_csv)?,
            export_markdown: export_target("--export-markdown", &args.export_markdown)?,
            percentiles: args
                .percentiles
                .as_ref()
                .map(|list| list.0.clone())
                .unwrap_or_default(),
            progress_interval: (args.progress_interval != 0.0)
                .then(|| seconds("--progress-interval", args.progress_interval, 0.1))
                .transpose()?,
            show_progress: !args.quiet,
            wide: args.wide,
            print_details: true,
        })
    }

    /// One run of a series (sweep, repeats, find-max): no table of its own, and no
    /// error bound, since the series reports every run's errors in its table.
    pub fn in_series(mut self) -> RunConfig {
        self.print_details = false;
        self.max_errors = None;
        // The next run serves at once: no run of a series waits on a scraper.
        self.metrics_linger = Duration::ZERO;
        self
    }

    /// The percentiles summary.json holds beyond the standard ladder: `--percentiles`,
    /// and any a `--threshold` reads.
    pub fn summary_percentiles(&self) -> Vec<(String, f64)> {
        let mut all = self.percentiles.clone();
        for (label, p) in self.thresholds.iter().filter_map(Threshold::percentile) {
            let held = |l: &str| l == label;
            if !all.iter().any(|(l, _)| held(l))
                && !crate::stats::PERCENTILES.iter().any(|(l, _)| held(l))
            {
                all.push((label, p));
            }
        }
        all
    }

    /// The preset's name, or the events file's path: what the run replays.
    pub fn workload_name(&self) -> String {
        self.source.name()
    }

    /// Events in the measured phase.
    pub fn measured_events(&self) -> u64 {
        match &self.source {
            EventSource::Generated { workload } => workload.events,
            EventSource::File(info) => info.measured_events,
        }
    }

    /// This config for a run that goes on from the stream's first `held` events,
    /// which the database holds (`--reuse-load`).
    pub fn going_on(&self, held: u64) -> RunConfig {
        let mut config = self.clone();
        if let EventSource::Generated { workload } = &mut config.source {
            workload.held_events = held;
        }
        config
    }

    /// Whether the run goes on from events the database holds, and loads nothing.
    pub fn goes_on(&self) -> bool {
        matches!(&self.source, EventSource::Generated { workload } if workload.held_events > 0)
    }

    /// Whether the measured phase has no count and ends with `--duration`.
    pub fn without_end(&self) -> bool {
        matches!(&self.source, EventSource::Generated { workload } if workload.without_end())
    }

    /// Events the run sends, in all phases: initial data (none where it goes on from
    /// what the database holds), warm-up and measured.
    pub fn total_events(&self) -> u64 {
        match &self.source {
            EventSource::Generated { workload } => workload.total_events() - workload.held_events,
            EventSource::File(info) => info.events,
        }
    }

    /// The SQLite file as run.json records it: relative to the result folder when it
    /// is inside, so a copied or moved folder verifies its own copy.
    pub fn recorded_file(&self) -> Option<String> {
        let file = self
            .db
            .file()
            .filter(|_| self.db.store().own_file.is_some())?;
        if self.db.in_memory() {
            return Some(file.display().to_string());
        }
        let absolute = std::path::absolute(&file).unwrap_or(file);
        let folder = std::path::absolute(&self.out_dir).unwrap_or_else(|_| self.out_dir.clone());
        Some(match absolute.strip_prefix(&folder) {
            Ok(inside) => inside.display().to_string(),
            Err(_) => absolute.display().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::StoreArgs;
    use crate::db::store_declarations;

    /// What each store chooses, from the flags alone (nothing connects).
    #[test]
    fn a_run_gets_the_runtime_threads_its_store_chooses_for_its_concurrency() {
        let threads = |args: &[&str]| {
            let cli = crate::cli::Cli::from_command_line([&["hatshop", "run"][..], args].concat())
                .unwrap();
            match &cli.command {
                crate::cli::Command::Run(run) => chosen_client_threads(run),
                _ => unreachable!("a run"),
            }
        };
        let cassandra = "cassandra://127.0.0.1:9042/hatshop";
        let mariadb = "mysql://root@127.0.0.1:3306/hatshop";
        assert_eq!(threads(&["--db", cassandra]), Some(1));
        assert_eq!(threads(&["--db", cassandra, "-c", "256"]), Some(1));
        assert_eq!(
            threads(&["--db", mariadb]),
            Some(1),
            "the default pool of 4"
        );
        assert_eq!(threads(&["--db", mariadb, "-c", "16"]), None);
        assert_eq!(threads(&["--db", mariadb, "-c", "1"]), None);
        let redis = "redis://127.0.0.1:6379/0";
        assert_eq!(threads(&["--db", redis]), Some(1), "the default 8 lanes");
        assert_eq!(threads(&["--db", redis, "-c", "2"]), None);
        let postgres = "postgres://postgres@127.0.0.1:5432/hatshop";
        assert_eq!(threads(&["--db", postgres, "-c", "4"]), None);
        assert_eq!(
            threads(&["--db", &format!("{mariadb}?connections=8")]),
            None
        );
        assert_eq!(
            threads(&["--db", mariadb, "-w", "race-sql-select"]),
            None,
            "the preset's 16 connections"
        );
        assert_eq!(threads(&[]), None, "SQLite: one per core");
        assert_eq!(
            threads(&["--db", "nonsense://x"]),
            None,
            "the run says what is wrong"
        );
    }

    #[test]
    fn durations_are_bounded_not_panicking() {
        assert!(seconds("--duration", 1e20, 0.001).is_err());
        assert!(seconds("--interval", 1e30, 0.001).is_err());
        assert!(seconds("--duration", f64::NAN, 0.001).is_err());
        assert!(seconds("--duration", -1.0, 0.001).is_err());
        assert_eq!(
            seconds("--duration", 1.5, 0.001).unwrap(),
            Duration::from_millis(1500)
        );
    }

    #[test]
    fn a_store_flag_on_the_wrong_store_is_one_line_that_names_its_stores() {
        let url = DbUrl::parse("sqlite://x.db").unwrap();
        let meta = store_declarations("sqlite").unwrap();
        let flags = StoreArgs {
            given: vec![("cl".into(), "ONE".into())],
        };
        let err = store_settings(meta, &url, &flags).unwrap_err().to_string();
        assert_eq!(
            err,
            "--cl is a setting of cassandra, not of sqlite:// (which takes --synchronous)"
        );
        let flags = StoreArgs {
            given: vec![("connections".into(), "2".into())],
        };
        let err = store_settings(meta, &url, &flags).unwrap_err().to_string();
        assert!(
            err.starts_with("--connections is a setting of mysql and postgres"),
            "{err}"
        );
        let url = DbUrl::parse("mysql://h/db?pool=0").unwrap();
        let err = store_settings(
            store_declarations("mysql").unwrap(),
            &url,
            &StoreArgs::default(),
        )
        .unwrap_err()
        .to_string();
        // `pool` is the old name of `connections`.
        assert_eq!(err, "mysql setting connections=0: expected at least 1");
    }

    #[test]
    fn a_value_longer_than_the_store_holds_is_refused_before_anything_connects() {
        let args = |value_size: &str| {
            let cli = crate::cli::Cli::from_command_line([
                "hatshop",
                "run",
                "-w",
                "kv-50w-50r",
                "--db",
                "mysql://root@127.0.0.1:9/x?kv_table=sbtest",
                "--value-size",
                value_size,
            ])
            .unwrap();
            let crate::cli::Command::Run(args) = cli.command else {
                unreachable!()
            };
            args
        };
        let err = RunConfig::from_args(&args("121")).unwrap_err().to_string();
        assert!(err.contains("at most 120 bytes"), "{err}");
        assert!(RunConfig::from_args(&args("120")).is_ok());
    }
}
