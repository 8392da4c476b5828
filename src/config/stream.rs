//! The events of a run: an events file (checked whole) or a spec with the flags over it,
//! and the run's id from what it replays.

use anyhow::{Result, anyhow};

use crate::cli::{RunArgs, StreamArgs, WarmupArg};
use crate::db::{DbUrl, Settings};
use crate::workload::{EventSource, WorkloadSpec, check_events_file};

/// The events: an events file, checked, or the spec with the flags over it.
pub(super) fn source_of(args: &RunArgs, db: &DbUrl, settings: &Settings) -> Result<EventSource> {
    let source = match &args.events_file {
        Some(path) => EventSource::File(check_events_file(path)?),
        None => {
            let mut workload = resolve_spec(&args.stream)?;
            // `--duration` is how long the run lasts, as the peers' own tools read it: the
            // spec's count no longer ends it, only `--events` given beside it.
            // So do `--stages`, which set it.
            if (args.duration.is_some() || args.stages.is_some()) && args.stream.events.is_none() {
                workload.events = WorkloadSpec::WITHOUT_END;
            }
            EventSource::Generated { workload }
        }
    };
    if let EventSource::Generated { workload } = &source {
        (db.store().check_value_size)(settings, workload.value_size as usize)
            .map_err(|e| anyhow!("{}: {}", workload.name, e.message))?;
    }
    Ok(source)
}

/// What a generated workload's spec says of its concurrency.
pub(super) fn spec_concurrency(source: &EventSource) -> Option<usize> {
    match source {
        EventSource::Generated { workload } => workload.concurrency,
        EventSource::File(_) => None,
    }
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
        // The runner decides the count as it goes (`warmup_until`).
        Some(WarmupArg::Time(_) | WarmupArg::Settled) => spec.warmup = 0,
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
    if let Some(range) = args.order_bytes {
        spec.order_bytes = Some(range);
    }
    spec.validate()?;
    Ok(spec)
}

/// `20261121-224501-sqlite-hatshop-random`: sortable, and says what ran.
pub(super) fn run_id(database: &str, source: &EventSource) -> String {
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
