//! From command-line flags to the validated `RunConfig` the engine runs on: the spec
//! resolved with its overrides, the URL parsed and its settings checked against the
//! store's declarations, durations and folders decided. The config is recorded in
//! run.json, so a result folder says how to repeat it.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use sha2::{Digest, Sha256};

use crate::cli::{RunArgs, StoreArgs, StreamArgs, WarmupArg};
use crate::db::{DbUrl, STORES, Settings, StoreMeta, listed};
use crate::workload::{
    EventSource, EventsFileInfo, EventsReader, Fault, Phase, WorkloadSpec, hex, lacks_state,
};

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
    pub max_duration: Option<Duration>,
    /// How long an open loop takes to send its events, when `--duration` does not bound
    /// it (said before the run when it is long).
    pub unbounded_length: Option<Duration>,
    /// `--warmup 10s`: the warm-up lasts this long, its count decided as it runs.
    pub warmup_time: Option<Duration>,
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
    /// `--home`, for the servers faults go to.
    pub home: Option<PathBuf>,
    pub out_dir: PathBuf,
    pub run_id: String,
    pub op_log: bool,
    pub verify: bool,
    pub recreate: bool,
    /// `--percentiles`: the table's columns and summary.json's extra percentiles
    /// (empty: the standard ladder alone).
    pub percentiles: Vec<(String, f64)>,
    /// How often a plain progress line is printed off a terminal (`None`: never).
    pub progress_interval: Option<Duration>,
    /// Where `--export-json` copies summary.json (`-`: standard output).
    pub export_json: Option<PathBuf>,
    pub show_progress: bool,
    /// Print the table and paths when the run ends (a sweep prints its own line).
    pub print_details: bool,
}

/// The longest any duration flag may be: a year is long enough, and `Duration` cannot
/// overflow on the way.
const LONGEST: f64 = 366.0 * 24.0 * 3600.0;

/// Seconds from a flag, as a duration of at least `min` seconds.
pub fn seconds(flag: &str, secs: f64, min: f64) -> Result<Duration> {
    if !(secs.is_finite() && secs >= min && secs <= LONGEST) {
        bail!("{flag} must be a number of seconds from {min} to {LONGEST:.0}, got {secs}");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `--p99-under` is the bound of `--find-max`, and means nothing without it.
pub fn refuse_bound_without_search(args: &RunArgs) -> Result<()> {
    if args.p99_under.is_some() {
        bail!("--p99-under is the bound of --find-max: add --find-max");
    }
    Ok(())
}

/// The runtime threads a run's store chooses for its concurrency
/// (`StoreKind::client_threads`), read from the flags before the runtime is built.
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

impl RunConfig {
    /// The flags resolved and checked: every problem one line, before anything runs.
    pub fn from_args(args: &RunArgs) -> Result<RunConfig> {
        let (db, settings) = store_of(args)?;
        let source = source_of(args, &db, &settings)?;
        let concurrency = concurrency_of(args, spec_concurrency(&source), &db, &settings)?;
        let max_duration = args
            .duration
            .map(|secs| seconds("--duration", secs, 0.001))
            .transpose()?;
        let interval = seconds("--interval", args.interval, 0.001)?;
        let connect_timeout = seconds("--connect-timeout", args.connect_timeout, 0.1)?;
        let op_timeout = seconds("--op-timeout", args.op_timeout, 0.001)?;
        let pace = pace_of(args)?;
        if args.retries > 100 {
            bail!("--retries must be at most 100, got {}", args.retries);
        }
        let spec_conflicts = match &source {
            EventSource::Generated { workload } => workload.conflicts,
            EventSource::File(_) => 0.0,
        };
        let conflicts = args.conflicts.unwrap_or(spec_conflicts);
        if !(0.0..=1.0).contains(&conflicts) {
            bail!("--conflicts must be a share from 0 to 1, got {conflicts}");
        }
        let faults = faults_of(args, &source, max_duration)?;
        let warmup_time = warmup_time_of(args, max_duration)?;
        let unbounded_length = match max_duration {
            Some(_) => None,
            None => open_loop_length(pace, &source, warmup_time)?,
        };
        let shard = shard_of(args)?;
        if let Some(shard) = shard {
            check_shardable(shard, &db, conflicts, &faults, args.verify)?;
        }
        let trace_sample = trace_sample_of(args, &db)?;
        let mut run_id = run_id(db.scheme(), &source);
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
        // The run is known by its folder's name, which no other run in that place has.
        if let Some(name) = out_dir.file_name() {
            run_id = name.to_string_lossy().into_owned();
        }
        let db = in_result_folder(db, &out_dir);
        Ok(RunConfig {
            source,
            db,
            settings,
            concurrency,
            lane_threads: args.lane_threads,
            max_duration,
            warmup_time,
            unbounded_length,
            interval,
            connect_timeout,
            op_timeout,
            retries: args.retries,
            pace,
            conflicts,
            shard,
            trace_sample,
            faults,
            home: args.home.clone(),
            out_dir,
            run_id,
            op_log: !args.no_op_log,
            verify: args.verify,
            recreate: args.recreate,
            export_json: match &args.export_json {
                Some(path) if path.as_os_str() != "-" => {
                    crate::files::check_out("--export-json", path)?;
                    Some(path.clone())
                }
                other => other.clone(),
            },
            percentiles: match &args.percentiles {
                Some(text) => crate::stats::parse_percentiles(text).map_err(anyhow::Error::msg)?,
                None => Vec::new(),
            },
            progress_interval: (args.progress_interval != 0.0)
                .then(|| seconds("--progress-interval", args.progress_interval, 0.1))
                .transpose()?,
            show_progress: !args.quiet,
            print_details: true,
        })
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

    /// Events in all phases: initial data, warm-up and measured.
    pub fn total_events(&self) -> u64 {
        match &self.source {
            EventSource::Generated { workload } => workload.total_events(),
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

/// The one store of a run and its settings (URL parameters and flags), checked.
fn store_of(args: &RunArgs) -> Result<(DbUrl, Settings)> {
    let db = match args.db.as_slice() {
        [one] => one,
        [] => crate::db::DEFAULT_URL,
        _ => bail!("a run takes one --db (a sweep takes several)"),
    };
    let db = DbUrl::parse(db)?;
    let settings = store_settings(db.store(), &db, &args.store)?;
    Ok((db, settings))
}

/// The events: an events file, checked, or the spec with the flags over it.
fn source_of(args: &RunArgs, db: &DbUrl, settings: &Settings) -> Result<EventSource> {
    let source = match &args.events_file {
        Some(path) => EventSource::File(check_events_file(path)?),
        None => EventSource::Generated {
            workload: resolve_spec(&args.stream)?,
        },
    };
    if let EventSource::Generated { workload } = &source {
        (db.store().check_value_size)(settings, workload.value_size as usize)
            .map_err(|e| anyhow!("{}: {}", workload.name, e.message))?;
    }
    Ok(source)
}

/// What a generated workload's spec says of its concurrency.
fn spec_concurrency(source: &EventSource) -> Option<usize> {
    match source {
        EventSource::Generated { workload } => workload.concurrency,
        EventSource::File(_) => None,
    }
}

/// The concurrency: the flag, else the spec's, else the store's default.
fn concurrency_of(
    args: &RunArgs,
    spec_concurrency: Option<usize>,
    db: &DbUrl,
    settings: &Settings,
) -> Result<usize> {
    let concurrency = args
        .concurrency
        .or(spec_concurrency)
        .unwrap_or_else(|| (db.store().default_concurrency)(settings));
    if concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    if concurrency > 10_000 {
        bail!("--concurrency must be at most 10,000, got {concurrency}");
    }
    Ok(concurrency)
}

/// The fault timeline (`--faults FILE`, else the spec's), checked, all due before the
/// run's `--duration` ends.
fn faults_of(
    args: &RunArgs,
    source: &EventSource,
    max_duration: Option<Duration>,
) -> Result<Vec<Fault>> {
    let entries = match (&args.faults, source) {
        (Some(path), _) => crate::workload::faults::read_file(path)?,
        (None, EventSource::Generated { workload }) => workload.faults.clone(),
        (None, EventSource::File(_)) => Vec::new(),
    };
    let faults = crate::workload::faults::check_all(&entries).map_err(anyhow::Error::msg)?;
    crate::runner::faults::check_servers(&faults).map_err(anyhow::Error::msg)?;
    if let (Some(limit), Some(last)) = (max_duration, faults.last())
        && last.at >= limit
    {
        bail!(
            "a fault is due at {} but --duration ends the measured phase at {}",
            humantime::format_duration(last.at),
            humantime::format_duration(limit)
        );
    }
    Ok(faults)
}

/// `--shard I/N`, the index possibly from a Kubernetes Indexed Job.
fn shard_of(args: &RunArgs) -> Result<Option<crate::runner::Shard>> {
    args.shard
        .as_deref()
        .map(|text| {
            let job_index = std::env::var("JOB_COMPLETION_INDEX").ok();
            crate::runner::Shard::parse(text, job_index.as_deref())
        })
        .transpose()
        .map_err(anyhow::Error::msg)
}

/// `--trace-sample`: a share, and only for stores whose server time hatshop reads.
fn trace_sample_of(args: &RunArgs, db: &DbUrl) -> Result<f64> {
    let trace_sample = args.trace_sample.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&trace_sample) {
        bail!("--trace-sample must be a share from 0 to 1, got {trace_sample}");
    }
    if trace_sample > 0.0 && db.store().server_time.is_none() {
        let products: Vec<&str> = STORES
            .iter()
            .filter_map(|store| Some(store.server_time?.product))
            .collect();
        bail!(
            "--trace-sample reads the server's own times: {} only, not {}://",
            listed(&products),
            db.scheme()
        );
    }
    Ok(trace_sample)
}

/// An embedded store's URL that names no file (`sqlite://` alone): its file inside the
/// result folder.
pub fn in_result_folder(db: DbUrl, out_dir: &Path) -> DbUrl {
    match db.store().own_file {
        Some(name) if db.file().is_none() => db.with_file(&out_dir.join(name)),
        _ => db,
    }
}

/// URL settings, then flags over them, checked against what the store declares. A
/// flag the store does not take is refused with one line that names who takes it.
pub fn store_settings(meta: &StoreMeta, url: &DbUrl, flags: &StoreArgs) -> Result<Settings> {
    let mut given: BTreeMap<String, String> = url
        .params()
        .into_iter()
        .map(|(name, value)| (crate::db::current_setting_name(&name).to_string(), value))
        .collect();
    for (name, value) in &flags.given {
        if !meta.takes(name) {
            let takers: Vec<&str> = crate::db::STORES
                .iter()
                .filter(|s| s.takes(name))
                .map(|s| s.scheme)
                .collect();
            let own: Vec<String> = meta
                .settings
                .iter()
                .map(|s| format!("--{}", s.name.replace('_', "-")))
                .collect();
            bail!(
                "--{} is a setting of {}, not of {}:// (which takes {})",
                name.replace('_', "-"),
                takers.join(" and "),
                meta.scheme,
                if own.is_empty() {
                    "none".to_string()
                } else {
                    own.join(", ")
                }
            );
        }
        given.insert(name.clone(), value.clone());
    }
    let settings =
        Settings::checked(meta.scheme, meta.settings, given).map_err(anyhow::Error::msg)?;
    (meta.check)(&settings)?;
    Ok(settings)
}

/// How long an open loop (`--rate`) takes to send its warm-up and measured events, the
/// load aside (it is not paced); refused when longer than any run may take, so that a
/// typo in a rate cannot start a run that never ends.
fn open_loop_length(
    pace: crate::runner::Pace,
    source: &EventSource,
    warmup_time: Option<Duration>,
) -> Result<Option<Duration>> {
    let Some(rate) = pace.rate() else {
        return Ok(None);
    };
    let (warmup, measured) = match source {
        EventSource::Generated { workload } => (workload.warmup, workload.events),
        EventSource::File(info) => (0, info.measured_events),
    };
    let last = |events: u64, measured| match events {
        0 => 0.0,
        n => pace.due_s(n - 1, measured).unwrap_or(0.0),
    };
    let warmup_s = warmup_time.map_or_else(|| last(warmup, false), |t| t.as_secs_f64());
    let total_s = warmup_s + last(measured, true);
    if !total_s.is_finite() || total_s > LONGEST {
        bail!(
            "--rate {rate}: sending {} events at that rate takes {}, longer than any run may \
             (a year): raise --rate, or bound the run with --duration",
            warmup + measured,
            years_or_time(total_s)
        );
    }
    Ok(Some(Duration::from_secs_f64(total_s)))
}

/// A length in words: years past a year, else hours, minutes and seconds.
pub fn years_or_time(secs: f64) -> String {
    const YEAR: f64 = 365.25 * 24.0 * 3600.0;
    if !secs.is_finite() || secs > YEAR {
        let years = secs / YEAR;
        return if years.is_finite() && years < 1e15 {
            format!(
                "about {} years",
                crate::report::table::thousands(years as u64)
            )
        } else {
            "longer than the universe has existed".into()
        };
    }
    let rounded = Duration::from_secs(secs.round() as u64);
    format!("about {}", humantime::format_duration(rounded))
}

/// `--warmup 10s`; refused for a shard (each would cut the stream elsewhere), and when
/// `--duration`, which also bounds a warm-up, would end the run before measuring.
fn warmup_time_of(args: &RunArgs, max_duration: Option<Duration>) -> Result<Option<Duration>> {
    let Some(WarmupArg::Time(time)) = args.stream.warmup else {
        return Ok(None);
    };
    if time.as_secs_f64() > LONGEST {
        bail!(
            "--warmup must be at most a year ({LONGEST:.0} s), got {}",
            humantime::format_duration(time)
        );
    }
    if args.shard.is_some() {
        bail!(
            "--warmup {} with --shard: each shard would end its warm-up at another event; shards share one stream, so give the warm-up as a count",
            humantime::format_duration(time)
        );
    }
    if let Some(limit) = max_duration.filter(|limit| time >= *limit) {
        bail!(
            "--warmup {} is not shorter than --duration {} s, which bounds a warm-up too: nothing would be measured",
            humantime::format_duration(time),
            limit.as_secs_f64()
        );
    }
    Ok(Some(time))
}

/// The spec named by `--workload`, with `--seed`, `--events`, `--warmup`, … applied.
pub fn resolve_spec(args: &StreamArgs) -> Result<WorkloadSpec> {
    let mut spec = WorkloadSpec::load(&args.workload)?;
    if let Some(seed) = args.seed {
        spec.seed = seed;
    }
    if let Some(events) = args.events {
        spec.events = events;
    }
    match args.warmup {
        Some(WarmupArg::Events(events)) => spec.warmup = events,
        // The runner decides the count as it goes (`warmup_time`).
        Some(WarmupArg::Time(_)) => spec.warmup = 0,
        None => {}
    }
    if let Some(orders) = args.orders {
        spec.initial_orders = orders;
    }
    if let Some(records) = args.records {
        spec.initial_records = records;
    }
    if let Some(size) = args.value_size {
        spec.value_size = size;
    }
    spec.validate()?;
    Ok(spec)
}

/// Reads the whole file once: every line must be an event, and the hash is taken.
pub fn check_events_file(path: &Path) -> Result<EventsFileInfo> {
    let file =
        File::open(path).with_context(|| format!("cannot open events file {}", path.display()))?;
    let mut sha = Sha256::new();
    let reader = HashingReader {
        inner: BufReader::with_capacity(1 << 20, file),
        sha: &mut sha,
    };
    let mut events = 0;
    let mut measured_events = 0;
    let mut has_states = true;
    for event in EventsReader::new(BufReader::new(reader), &path.display().to_string()) {
        let event = event?;
        events += 1;
        if event.phase == Phase::Measure {
            measured_events += 1;
        }
        has_states &= !lacks_state(&event.op);
    }
    if events == 0 {
        bail!("events file {} holds no events", path.display());
    }
    let path = path
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", path.display()))?;
    Ok(EventsFileInfo {
        path,
        sha256: hex(&sha.finalize()),
        events,
        measured_events,
        has_states,
    })
}

/// The sha256 of a file's bytes.
pub fn file_sha256(path: &Path) -> Result<String> {
    let mut file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
    }
    Ok(hex(&sha.finalize()))
}

/// Hashes every byte read through it.
struct HashingReader<'a, R> {
    inner: R,
    sha: &'a mut Sha256,
}

impl<R: Read> Read for HashingReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.sha.update(&buf[..n]);
        Ok(n)
    }
}

/// What a shard cannot do alone: verify, use a database file inside its own folder,
/// race lanes of other shards, or inject faults once for all.
fn check_shardable(
    shard: crate::runner::Shard,
    db: &DbUrl,
    conflicts: f64,
    faults: &[Fault],
    verify: bool,
) -> Result<()> {
    if verify {
        bail!(
            "--shard {shard}: a shard cannot verify alone (the others write to the same \
             tables); verify the folder `hatshop merge` makes"
        );
    }
    if db.store().own_file.is_some() && db.file().is_none() {
        bail!(
            "--shard {shard}: every shard must reach one database; give a file \
             (sqlite:///path/to/file.db) that `hatshop prepare` made"
        );
    }
    if conflicts > 0.0 {
        bail!("--shard {shard}: conflicts race lanes of one client; run them without --shard");
    }
    if !faults.is_empty() {
        bail!("--shard {shard}: a sharded run injects no faults (each shard would inject them)");
    }
    Ok(())
}

/// `20261121-224501-sqlite-hatshop-random`: sortable, and says what ran.
fn run_id(database: &str, source: &EventSource) -> String {
    let stamp = crate::stamp::for_names();
    let workload = match source {
        EventSource::Generated { workload } => workload.name.clone(),
        EventSource::File(info) => info
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "events".into()),
    };
    let workload: String = workload
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{stamp}-{database}-{workload}")
}

/// The pace `--rate` and `--ramp` ask for, checked.
fn pace_of(args: &RunArgs) -> Result<crate::runner::Pace> {
    use crate::runner::Pace;
    let Some(rate) = args.rate else {
        if args.ramp.is_some() {
            bail!("--ramp needs --rate FROM..TO, the rates it climbs between");
        }
        return Ok(Pace::ClosedLoop);
    };
    for ops_s in [rate.from, rate.to] {
        if !(ops_s.is_finite() && ops_s > 0.0 && ops_s <= 10_000_000.0) {
            bail!(
                "--rate must be operations per second above 0 and at most 10,000,000, got {ops_s}"
            );
        }
    }
    match (rate.is_ramp(), args.ramp) {
        (false, None) => Ok(Pace::Rate(rate.from)),
        (false, Some(_)) => bail!("--ramp needs --rate FROM..TO, the rates it climbs between"),
        (true, None) => bail!(
            "--rate {}..{} needs --ramp, how long to climb (e.g. 60s)",
            rate.from,
            rate.to
        ),
        (true, Some(over)) => Ok(Pace::Ramp {
            from: rate.from,
            to: rate.to,
            over,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::store_meta;

    /// What each store chooses, from the flags alone (nothing connects).
    #[test]
    fn a_run_gets_the_runtime_threads_its_store_chooses_for_its_concurrency() {
        use clap::Parser;
        let threads = |args: &[&str]| {
            let cli =
                crate::cli::Cli::try_parse_from([&["hatshop", "run"][..], args].concat()).unwrap();
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
        let meta = store_meta("sqlite").unwrap();
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
        let err = store_settings(store_meta("mysql").unwrap(), &url, &StoreArgs::default())
            .unwrap_err()
            .to_string();
        // `pool` is the old name of `connections`.
        assert_eq!(err, "mysql setting connections=0: expected at least 1");
    }

    #[test]
    fn a_value_longer_than_the_store_holds_is_refused_before_anything_connects() {
        use clap::Parser;
        let args = |value_size: &str| {
            let cli = crate::cli::Cli::try_parse_from([
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
