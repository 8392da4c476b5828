//! The run's plan from its flags: durations within bounds, the pace and how long an
//! open loop takes, the warm-up, the concurrency, the fault timeline, the shard.

use std::time::Duration;

use anyhow::{Result, bail};

use crate::cli::{RunArgs, WarmupArg};
use crate::db::{DbUrl, Settings};
use crate::stats::settling::SETTLE_LIMIT;
use crate::workload::{EventSource, Fault};

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

/// Rows of an initial load's batch: the flag, else the store's default.
pub(super) fn load_batch_of(args: &RunArgs, db: &DbUrl) -> usize {
    args.load_batch.unwrap_or(db.store().initial_load_batch)
}

/// The concurrency: the flag, else the spec's, else the store's default.
pub(super) fn concurrency_of(
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
pub(super) fn faults_of(
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
/// The error bound: the flag, else 1 %, or none with faults, which fail operations on
/// purpose; 100 % bounds nothing.
pub(super) fn max_errors_of(flag: Option<f64>, faults: &[Fault]) -> Option<f64> {
    const DEFAULT: f64 = 0.01;
    match flag {
        Some(share) => (share < 1.0).then_some(share),
        None => faults.is_empty().then_some(DEFAULT),
    }
}

/// The share of order updates dealt to another lane: the flag, else the spec's.
pub(super) fn conflicts_of(args: &RunArgs, source: &EventSource) -> Result<f64> {
    let spec_conflicts = match source {
        EventSource::Generated { workload } => workload.conflicts,
        EventSource::File(_) => 0.0,
    };
    let conflicts = args.conflicts.unwrap_or(spec_conflicts);
    if !(0.0..=1.0).contains(&conflicts) {
        bail!("--conflicts must be a share from 0 to 1, got {conflicts}");
    }
    Ok(conflicts)
}

pub(super) fn shard_of(args: &RunArgs) -> Result<Option<crate::runner::Shard>> {
    args.shard
        .as_deref()
        .map(|text| {
            let job_index = std::env::var("JOB_COMPLETION_INDEX").ok();
            crate::runner::Shard::parse(text, job_index.as_deref())
        })
        .transpose()
        .map_err(anyhow::Error::msg)
}

/// How long an open loop (`--rate`) takes to send its warm-up and measured events, the
/// load aside (it is not paced); refused when longer than any run may take, so that a
/// typo in a rate cannot start a run that never ends.
pub(super) fn open_loop_length(
    pace: &crate::runner::Pace,
    source: &EventSource,
    warmup_until: Option<WarmupUntil>,
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
    let warmup_s = warmup_until.map_or_else(
        || last(warmup, false),
        |until| until.longest().as_secs_f64(),
    );
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

/// `--stages`, from `--rate` (one rate) or 0; they set the measured phase's length.
fn staged(args: &RunArgs, stages: &[(Duration, f64)]) -> Result<crate::runner::Pace> {
    let together = |flag: &str| {
        anyhow::Error::new(crate::cli::UsageError(format!(
            "--stages sets the rate over the whole measured phase and its length: leave out {flag}"
        )))
    };
    if args.ramp.is_some() || args.rate.is_some_and(|r| r.is_ramp()) {
        return Err(together(
            "--ramp and --rate FROM..TO (--rate R is the rate the stages start from)",
        ));
    }
    if args.duration.is_some() {
        return Err(together("--duration"));
    }
    let from = args.rate.map_or(0.0, |rate| rate.from);
    let stages = crate::runner::Stages::new(from, stages).map_err(|e| anyhow::anyhow!(e))?;
    Ok(crate::runner::Pace::Stages(stages))
}

/// An open loop whose warm-up (a count of events, paced like the rest) takes at least
/// `--duration`, which bounds the warm-up too: refused, as it would measure nothing.
pub(super) fn refuse_warmup_past_duration(
    pace: &crate::runner::Pace,
    source: &EventSource,
    max_duration: Option<Duration>,
) -> Result<()> {
    let (Some(rate), Some(limit)) = (pace.rate(), max_duration) else {
        return Ok(());
    };
    let EventSource::Generated { workload } = source else {
        return Ok(());
    };
    let warmup = workload.warmup;
    let Some(warmup_s) = (warmup > 0).then(|| pace.due_s(warmup, false)).flatten() else {
        return Ok(());
    };
    if warmup_s >= limit.as_secs_f64() {
        bail!(
            "--warmup of {} events at --rate {rate} takes {warmup_s:.1} s, not less than --duration {} s, which bounds a warm-up too: nothing would be measured (give --warmup as a time, e.g. --warmup {}s)",
            crate::numbers::thousands(warmup),
            limit.as_secs_f64(),
            (limit.as_secs_f64() / 4.0).max(0.1)
        );
    }
    Ok(())
}

/// A length in words: years past a year, else hours, minutes and seconds.
pub fn years_or_time(secs: f64) -> String {
    const YEAR: f64 = 365.25 * 24.0 * 3600.0;
    if !secs.is_finite() || secs > YEAR {
        let years = secs / YEAR;
        return if years.is_finite() && years < 1e15 {
            format!("about {} years", crate::numbers::thousands(years as u64))
        } else {
            "longer than the universe has existed".into()
        };
    }
    let rounded = Duration::from_secs(secs.round() as u64);
    format!("about {}", humantime::format_duration(rounded))
}

/// A warm-up that ends on the clock rather than at a count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WarmupUntil {
    /// `--warmup 10s`: this long after it began.
    Elapsed(Duration),
    /// `--warmup settled`: once its mean latency stops falling, within
    /// [`SETTLE_LIMIT`].
    Settled,
}

impl WarmupUntil {
    /// The longest it may last.
    pub fn longest(self) -> Duration {
        match self {
            WarmupUntil::Elapsed(time) => time,
            WarmupUntil::Settled => SETTLE_LIMIT,
        }
    }

    /// As the flag says it.
    fn flag(self) -> String {
        match self {
            WarmupUntil::Elapsed(time) => {
                format!("--warmup {}", humantime::format_duration(time))
            }
            WarmupUntil::Settled => "--warmup settled".into(),
        }
    }
}

/// `--warmup 10s` or `--warmup settled`; refused for a shard (each would cut the
/// stream elsewhere), and when `--duration`, which also bounds a warm-up, could end the
/// run before measuring.
pub(super) fn warmup_until_of(
    args: &RunArgs,
    max_duration: Option<Duration>,
) -> Result<Option<WarmupUntil>> {
    let until = match args.stream.warmup {
        Some(WarmupArg::Time(time)) => WarmupUntil::Elapsed(time),
        Some(WarmupArg::Settled) => WarmupUntil::Settled,
        _ => return Ok(None),
    };
    let longest = until.longest();
    if longest.as_secs_f64() > LONGEST {
        bail!(
            "--warmup must be at most a year ({LONGEST:.0} s), got {}",
            humantime::format_duration(longest)
        );
    }
    if args.shard.is_some() {
        bail!(
            "{} with --shard: each shard would end its warm-up at another event; shards share one stream, so give the warm-up as a count",
            until.flag()
        );
    }
    if let Some(limit) = max_duration.filter(|limit| longest >= *limit) {
        let may = match until {
            WarmupUntil::Elapsed(_) => String::new(),
            WarmupUntil::Settled => format!(" (it may take {} s)", longest.as_secs()),
        };
        bail!(
            "{}{may} is not shorter than --duration {} s, which bounds a warm-up too: nothing would be measured",
            until.flag(),
            limit.as_secs_f64()
        );
    }
    Ok(Some(until))
}

/// What a shard cannot do alone: verify, use a database file inside its own folder,
/// race lanes of other shards, inject faults once for all, or go on from one run's
/// whole stream.
pub(super) fn check_shardable(
    shard: crate::runner::Shard,
    args: &RunArgs,
    db: &DbUrl,
    conflicts: f64,
    faults: &[Fault],
) -> Result<()> {
    if args.reuse_load.is_some() {
        crate::cli::usage_bail!(
            "--shard {shard}: a shard sends part of a stream into tables `hatshop prepare` \
             made; --reuse-load goes on from one run's whole stream"
        );
    }
    if args.verify {
        crate::cli::usage_bail!(
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
        crate::cli::usage_bail!(
            "--shard {shard}: conflicts race lanes of one client; run them without --shard"
        );
    }
    if !faults.is_empty() {
        crate::cli::usage_bail!(
            "--shard {shard}: a sharded run injects no faults (each shard would inject them)"
        );
    }
    Ok(())
}

/// The pace `--rate` and `--ramp` (or `--stages`) ask for, checked.
pub(super) fn pace_of(args: &RunArgs) -> Result<crate::runner::Pace> {
    use crate::runner::Pace;
    if let Some(stages) = &args.stages {
        return staged(args, &stages.0);
    }
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
