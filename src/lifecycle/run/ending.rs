//! How a run ended, into its record, and the files made from what it measured: the
//! statistics, failed writes, faults, server metrics and server times; a run that
//! failed says so in its folder.

use std::sync::Arc;
use std::time::SystemTime;

use anyhow::Result;

use super::super::db_time;
use super::super::run_json::RunJson;
use super::before_measuring::failed_write_rows;
use crate::config::RunConfig;
use crate::db::AnyStore;
use crate::files::write_csv;
use crate::interrupt;
use crate::report::{Heading, html, write_statistics};
use crate::result_dir::{self, RunRecord, RunStatus};
use crate::runner::{RunClock, RunOutcome, StopReason, StopSignal};
use crate::stamp::rfc3339;
use crate::stats::{Summary, SummaryOf};
use crate::workload::EventSource;
use crate::workload::file_sha256;

/// Best effort: the folder says the run failed, and why; the error says how to rebuild
/// the folder when every operation is in its op log.
pub(super) fn record_failure(
    config: &RunConfig,
    run_json: &RunJson,
    record: &mut RunRecord,
    e: anyhow::Error,
) -> anyhow::Error {
    record.status = RunStatus::Failed;
    record.error = Some(format!("{e:#}"));
    record
        .finished_at
        .get_or_insert_with(|| rfc3339(SystemTime::now()));
    let _ = run_json.finish(record);
    let _ = html::write_report(&config.out_dir);
    interrupt::clear_last_words();
    if record.unwritten.is_none() {
        return e;
    }
    anyhow::anyhow!(
        "{e:#}; every operation is in the op log: `hatshop recover {}` rebuilds the \
         folder's files once there is room",
        config.out_dir.display()
    )
}

/// The files made from what the runner measured and observed: faults, statistics,
/// failed writes, server metrics and server times; the summary, for the run's end to
/// print and judge without reading it back.
pub(super) async fn write_files(
    config: &RunConfig,
    store: &AnyStore,
    outcome: &RunOutcome,
    clock: RunClock,
    observer: crate::observe::Observer,
    stop: &Arc<StopSignal>,
    record: &mut RunRecord,
) -> Result<Summary> {
    if !config.faults.is_empty() {
        write_csv(
            &result_dir::file(&config.out_dir, result_dir::FAULTS_CSV),
            &record.faults,
        )?;
    }
    let summary = write_outcome(config, outcome, clock)?;
    record.sealed = true;
    record.warmth = Some(warmth(config, record));
    record.thresholds = config
        .thresholds
        .iter()
        .map(|t| t.judge(&summary))
        .collect();
    record.gc_log = observer
        .finish(
            &config.out_dir,
            clock.wall,
            clock.wall + outcome.measure_offset.unwrap_or_default(),
        )
        .await?;
    db_time::write(config, store, &outcome.traced, stop).await?;
    Ok(summary)
}

/// Whether the run measured a warm server: how long the server hatshop started had
/// been up when measuring began, and whether latency fell across the intervals just
/// written.
fn warmth(config: &RunConfig, record: &RunRecord) -> crate::result_dir::warmth::Warmth {
    let up_at = |at: &Option<String>| at.as_deref().and_then(crate::stamp::parse);
    let started = record
        .database
        .server
        .as_ref()
        .and_then(|s| up_at(&s.started_at));
    let server_up_s = match (started, up_at(&record.measure_started_at)) {
        (Some(started), Some(measuring)) => measuring
            .duration_since(started)
            .ok()
            .map(|up| up.as_secs_f64()),
        _ => None,
    };
    crate::result_dir::warmth::Warmth {
        server_up_s,
        latency_fell: crate::report::intervals::read(&config.out_dir)
            .ok()
            .and_then(|rows| crate::report::warming::latency_fell(&rows)),
        settling: record.warmth.as_ref().and_then(|w| w.settling.clone()),
    }
}

/// What the run came to, into run.json's record: how it ended, what it measured, and
/// a failure where the stream, the events file or the op log says the folder cannot be
/// trusted.
pub(super) fn ended(
    record: &mut RunRecord,
    config: &RunConfig,
    outcome: &RunOutcome,
    op_log_rows: Option<u64>,
    clock: RunClock,
) {
    record.status = match outcome.stop_reason {
        None => RunStatus::Finished,
        Some(StopReason::Deadline) => RunStatus::StoppedAtDeadline,
        Some(StopReason::Interrupted) => RunStatus::Interrupted,
        Some(StopReason::Failed) => RunStatus::Failed,
    };
    record.interrupted = outcome.stop_reason == Some(StopReason::Interrupted);
    if let Some(hash) = &outcome.plan_sha256 {
        record.plan_sha256 = Some(hash.clone());
        record.planned_events = outcome.planned_events;
    }
    record.stream_complete = outcome.stream_complete;
    record.measure_started_at = outcome
        .measure_offset
        .map(|offset| rfc3339(clock.wall + offset));
    record.finished_at = Some(rfc3339(SystemTime::now()));
    record.lane_last_seq = outcome.lane_last_seq.clone();
    record.measured_ops = outcome.stats.total_ops();
    record.cut_calls = outcome.stats.total_cut();
    record.op_log_rows = op_log_rows;
    record.unmeasured_errors = outcome.unmeasured_errors;
    record.drained_after_deadline = outcome.drained;
    record.failed_writes = outcome.failed_writes.len() as u64;
    record.client = outcome.client.clone();
    record.fairness = outcome.fairness.clone();
    record.server_cpu = outcome.server_cpu.clone();
    record.host_load = outcome.host_load.clone();
    let failure = [
        &outcome.not_measured,
        &outcome.stream_error,
        &outcome.gave_up,
    ]
    .into_iter()
    .find_map(Option::as_ref);
    if let Some(error) = failure {
        record.status = RunStatus::Failed;
        record.error = Some(error.clone());
    }
    if let EventSource::File(info) = &config.source
        && file_sha256(&info.path).ok().as_ref() != Some(&info.sha256)
    {
        record.status = RunStatus::Failed;
        record.error = Some(format!(
            "events file {} changed during the run",
            info.path.display()
        ));
    }
    if let Some(rows) = op_log_rows
        && rows != record.measured_ops + record.cut_calls
    {
        record.status = RunStatus::Failed;
        record.error = Some(format!(
            "the op log has {rows} rows but {} operations were measured and {} calls cut",
            record.measured_ops, record.cut_calls
        ));
    }
}

/// summary.json, intervals.csv, latency.hlog and failed_writes.csv; the summary.
pub(super) fn write_outcome(
    config: &RunConfig,
    outcome: &RunOutcome,
    clock: RunClock,
) -> Result<Summary> {
    let of = SummaryOf {
        run_id: config.run_id.clone(),
        tag: config.tag.clone(),
        store: config.db.scheme().to_string(),
        workload: config.workload_name(),
        concurrency: config.concurrency,
        plan_sha256: outcome.plan_sha256.clone().or(match &config.source {
            EventSource::File(info) => Some(info.sha256.clone()),
            EventSource::Generated { .. } => None,
        }),
        percentiles: config.percentiles.iter().map(|(_, p)| *p).collect(),
    };
    let heading = Heading {
        of,
        percentiles: config.summary_percentiles(),
        comment: format!(
            "hatshop {} run {}",
            env!("CARGO_PKG_VERSION"),
            config.run_id
        ),
    };
    let summary = write_statistics(
        &config.out_dir,
        heading,
        &outcome.intervals,
        outcome.interval,
        outcome.measured_elapsed,
        clock.wall + outcome.measure_offset.unwrap_or_default(),
    )?;
    write_csv(
        &result_dir::file(&config.out_dir, result_dir::FAILED_WRITES_CSV),
        &failed_write_rows(&outcome.failed_writes),
    )?;
    Ok(summary)
}
