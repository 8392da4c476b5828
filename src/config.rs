//! From command-line flags to the validated `RunConfig` the engine runs on: the spec
//! resolved with its overrides, the URL parsed, durations and folders decided.
//! The config is recorded in run.json, so a result folder says how to repeat it.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::cli::{RunArgs, StreamArgs};
use crate::db::{DbUrl, Scheme, Settings};
use crate::workload::{EventsReader, Phase, WorkloadSpec, hex};

/// Where the events come from.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum EventSource {
    /// Generated from the spec (its seed included).
    Generated { workload: WorkloadSpec },
    /// Replayed from a JSON Lines file, checked before the run.
    File(EventsFileInfo),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EventsFileInfo {
    pub path: PathBuf,
    pub sha256: String,
    pub events: u64,
    pub measured_events: u64,
}

/// Everything a run needs, validated.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub source: EventSource,
    pub db: DbUrl,
    /// URL settings with the command-line flags applied.
    pub settings: Settings,
    pub concurrency: usize,
    pub max_duration: Option<Duration>,
    pub interval: Duration,
    pub out_dir: PathBuf,
    pub run_id: String,
    pub op_log: bool,
    pub verify: bool,
    pub show_progress: bool,
    /// Print the table and paths when the run ends (a sweep prints its own line).
    pub print_details: bool,
}

impl RunConfig {
    pub fn from_args(args: &RunArgs) -> Result<RunConfig> {
        let db = DbUrl::parse(&args.db).map_err(anyhow::Error::msg)?;
        let mut settings = Settings::new(db.params().map_err(anyhow::Error::msg)?);
        for (key, value) in args.store.settings() {
            settings.set(key, value);
        }
        let source = match &args.events_file {
            Some(path) => EventSource::File(check_events_file(path)?),
            None => EventSource::Generated {
                workload: resolve_spec(&args.stream)?,
            },
        };
        let spec_concurrency = match &source {
            EventSource::Generated { workload } => workload.concurrency,
            EventSource::File(_) => None,
        };
        let concurrency = args
            .concurrency
            .or(spec_concurrency)
            .unwrap_or_else(|| default_concurrency(db.scheme, &settings));
        if concurrency == 0 {
            bail!("--concurrency must be at least 1");
        }
        let max_duration = match args.duration {
            None => None,
            Some(secs) if secs.is_finite() && secs > 0.0 => Some(Duration::from_secs_f64(secs)),
            Some(secs) => bail!("--duration must be a positive number of seconds, got {secs}"),
        };
        if !(args.interval.is_finite() && args.interval >= 0.001) {
            bail!(
                "--interval must be at least 0.001 seconds, got {}",
                args.interval
            );
        }
        let interval = Duration::from_secs_f64(args.interval);
        let run_id = run_id(db.scheme_name(), &source);
        let out_dir = match &args.out {
            Some(dir) => dir.clone(),
            None => unique_dir(Path::new("results"), &run_id),
        };
        let db = db
            .resolved(&out_dir)
            .with_context(|| format!("cannot resolve the path of {}", args.db))?;
        Ok(RunConfig {
            source,
            db,
            settings,
            concurrency,
            max_duration,
            interval,
            out_dir,
            run_id,
            op_log: !args.no_op_log,
            verify: args.verify,
            show_progress: !args.quiet,
            print_details: true,
        })
    }

    pub fn workload_name(&self) -> String {
        match &self.source {
            EventSource::Generated { workload } => workload.name.clone(),
            EventSource::File(info) => info.path.display().to_string(),
        }
    }

    pub fn measured_events(&self) -> u64 {
        match &self.source {
            EventSource::Generated { workload } => workload.events,
            EventSource::File(info) => info.measured_events,
        }
    }
}

/// The spec named by `--workload`, with `--seed`, `--events` and `--warmup` applied.
pub fn resolve_spec(args: &StreamArgs) -> Result<WorkloadSpec> {
    let mut spec = WorkloadSpec::load(&args.workload)?;
    if let Some(seed) = args.seed {
        spec.seed = seed;
    }
    if let Some(events) = args.events {
        spec.events = events;
    }
    if let Some(warmup) = args.warmup {
        spec.warmup = warmup;
    }
    spec.validate()?;
    Ok(spec)
}

/// SQLite has one writer at a time: more lanes only queue on its lock. A pooled SQL
/// store gets one lane per connection; Cassandra keeps 16 requests in flight.
fn default_concurrency(scheme: Scheme, settings: &Settings) -> usize {
    match scheme {
        Scheme::Sqlite | Scheme::Null => 1,
        Scheme::Mysql | Scheme::Postgres => settings
            .get("pool")
            .and_then(|p| p.parse().ok())
            .unwrap_or(4),
        Scheme::Cassandra => 16,
    }
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
    for event in EventsReader::new(BufReader::new(reader), &path.display().to_string()) {
        let event = event?;
        events += 1;
        if event.phase == Phase::Measure {
            measured_events += 1;
        }
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
    })
}

/// Hashes every byte read through it.
struct HashingReader<'a, R> {
    inner: R,
    sha: &'a mut Sha256,
}

impl<R: std::io::Read> std::io::Read for HashingReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.sha.update(&buf[..n]);
        Ok(n)
    }
}

/// The time now as `20261121-224501` (UTC): sortable, for folder names.
pub fn stamp() -> String {
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    now.chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect::<String>()
        .replace('T', "-")
}

/// `20261121-224501-sqlite-hatshop-random`: sortable, and says what ran.
fn run_id(database: &str, source: &EventSource) -> String {
    let stamp = stamp();
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

/// `base/id`, or `base/id-2`, `-3`, … if taken.
pub fn unique_dir(base: &Path, id: &str) -> PathBuf {
    let first = base.join(id);
    if !first.exists() {
        return first;
    }
    (2..)
        .map(|n| base.join(format!("{id}-{n}")))
        .find(|p| !p.exists())
        .expect("some suffix is free")
}
