//! `hatshop run`: connect, set up, replay the stream, write the result folder, print
//! the table. Whatever ends the run (its end, `--duration`, Ctrl-C, SIGTERM, a failure
//! of the op log or the events file), the folder is completed with every operation
//! that ran and says how it ended; a second signal leaves it marked `aborted`.

mod connect;
mod record;
mod run_json;
mod server_time;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};

use self::connect::connect_and_set_up;
pub(crate) use self::connect::{connect, set_up, until};
use self::record::{initial_record, serving_server};
pub(crate) use self::record::{server_facts, server_serving};
use self::run_json::RunJson;
use super::open_stream;
use super::verify::verify_store;
use crate::cli::RunArgs;
use crate::cluster::{Home, ServerRecord};
use crate::config::{RunConfig, file_sha256, missing_folders, remove_folders};
use crate::console::{note, say};
use crate::db::{AnyStore, Store};
use crate::files::write_csv;
use crate::interrupt;
use crate::report::table::{self, thousands};
use crate::report::{Heading, OpLogWriter, html, write_statistics};
use crate::result_dir::{self, RunRecord, UnmeasuredRecord};
use crate::runner::faults::{self, Timeline};
use crate::runner::{
    self, BeforeMeasuring, Dealing, FailedWrite, PhaseClock, Progress, RunClock, RunContext,
    RunOutcome, RunPlan, StopReason, StopSignal, Unmeasured,
};
use crate::stamp::rfc3339;
use crate::stats::{Summary, SummaryOf};
use crate::workload::{EventSource, TimedWarmup, WarmupCount};

/// Exit code of a run stopped by a signal, as shells expect.
pub const EXIT_INTERRUPTED: u8 = interrupt::EXIT_CODE as u8;
/// How long creating the schema may take (a keyspace on a ring agrees slowly).
pub(super) const SETUP_TIMEOUT: Duration = Duration::from_secs(120);

/// One run (`--repeat` and `--find-max` are commands of their own, over this one).
pub async fn run(args: &RunArgs) -> Result<std::process::ExitCode> {
    refuse_bound_without_search(args)?;
    execute(&RunConfig::from_args(args)?).await
}

/// `--p99-under` is the bound of `--find-max`, and means nothing without it.
pub fn refuse_bound_without_search(args: &RunArgs) -> Result<()> {
    if args.p99_under.is_some() {
        bail!("--p99-under is the bound of --find-max: add --find-max");
    }
    Ok(())
}

/// A run whose verify found the database differing from the stream (its folder is
/// complete: a sweep goes on and says so at the end).
#[derive(Debug, thiserror::Error)]
#[error("verify found differences between the database and the event stream")]
pub struct VerifyDifferences;

/// `--export-json`: summary.json copied to `to`, or to standard output for `-`.
fn export_summary(dir: &Path, to: &Path) -> Result<()> {
    let from = result_dir::file(dir, result_dir::SUMMARY_JSON);
    let text = std::fs::read_to_string(&from)
        .with_context(|| format!("cannot read {}", from.display()))?;
    if to.as_os_str() == "-" {
        crate::console::data(&text);
        return Ok(());
    }
    crate::files::write_out(to, text.as_bytes())
}

/// `--export-json` names one run's file: a series writes a summary.json per run, in
/// its folder.
pub fn refuse_export_in_series(args: &RunArgs) -> Result<()> {
    if args.export_json.is_some() {
        bail!(
            "--export-json writes one run's summary; a series (--repeat, --find-max, sweep) \
             writes each run's summary.json in its own folder"
        );
    }
    Ok(())
}

/// What `--verify` found in a run of a series, for its line: `, verify exact`, the
/// number of differences, or nothing where it did not run.
pub fn verified_note(run_dir: &Path) -> String {
    let path = result_dir::file(run_dir, result_dir::VERIFY_JSON);
    match crate::files::read_json::<crate::verify::VerifyReport>(&path) {
        Ok(report) if report.is_exact() => ", verify exact".to_string(),
        Ok(report) => format!(
            ", verify: {} differences (see {})",
            thousands(report.differences()),
            path.display()
        ),
        Err(_) => String::new(),
    }
}

/// One run of a series (sweep, repeats) into its --out folder, without the table:
/// its exit code, and whether verify found the database differing (which ends the run,
/// not the series).
pub async fn execute_in_series(args: &RunArgs) -> Result<(std::process::ExitCode, bool)> {
    refuse_export_in_series(args)?;
    let mut config = RunConfig::from_args(args)?;
    config.print_details = false;
    match execute(&config).await {
        Ok(code) => Ok((code, false)),
        Err(e) if e.is::<VerifyDifferences>() => Ok((std::process::ExitCode::FAILURE, true)),
        Err(e) => Err(e),
    }
}

/// Runs one validated config into its result folder.
pub async fn execute(config: &RunConfig) -> Result<std::process::ExitCode> {
    let stop = Arc::new(StopSignal::default());
    let _listening = {
        let stop = stop.clone();
        interrupt::Listening::with(move || stop.stop(StopReason::Interrupted))
    };
    let timeline = fault_timeline(config)?;
    let made = missing_folders(&config.out_dir);
    prepare_dir(&config.out_dir)?;
    // A run that never began leaves no folder behind (nor `results/` it made).
    let never_began = |e: anyhow::Error| {
        let _ = std::fs::remove_dir_all(&config.out_dir);
        remove_folders(&made);
        e
    };
    let reserve = RunJson::keep_room(&config.out_dir, config.concurrency).map_err(never_began)?;
    let store = Arc::new(
        connect_and_set_up(config, &stop)
            .await
            .map_err(never_began)?,
    );
    let server_time = server_time::begin(config, &store, &stop).await;
    let clock = RunClock::now();
    let mut record = initial_record(config, &plan_of(config, &store), &store.facts(), clock.wall);
    record.server_time = server_time;
    let run_json = RunJson::create(&config.out_dir, &record, reserve)?;
    {
        let run_json = run_json.clone();
        interrupt::on_second_signal(move || run_json.abort());
    }
    let result = measure(
        config,
        store.clone(),
        clock,
        &stop,
        timeline,
        &mut record,
        &run_json,
    )
    .await;
    let result = match result {
        Ok(()) => run_json.finish(&record).inspect_err(|e| {
            if record.op_log_rows.is_some() {
                record.unwritten = Some(format!("{e:#}"));
            }
        }),
        failed => failed,
    };
    if let Err(e) = result {
        let e = record_failure(config, &run_json, &mut record, e);
        crate::db::close_within(&*store).await;
        return Err(e);
    }
    // Requests a store still has in flight land before verify reads (bounded, and
    // Ctrl-C skips the wait).
    tokio::select! {
        _ = tokio::time::timeout(config.op_timeout, store.settle()) => {}
        _ = stop.interrupted() => {}
    }
    let finished = finish(config, &store, &record, &stop).await;
    interrupt::clear_last_words();
    crate::db::close_within(&*store).await;
    finished
}

/// Best effort: the folder says the run failed, and why; the error says how to rebuild
/// the folder when every operation is in its op log.
fn record_failure(
    config: &RunConfig,
    run_json: &RunJson,
    record: &mut RunRecord,
    e: anyhow::Error,
) -> anyhow::Error {
    record.status = "failed".into();
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

/// How the runner runs this config against this store.
fn plan_of(config: &RunConfig, store: &AnyStore) -> RunPlan {
    RunPlan {
        concurrency: config.concurrency,
        lane_threads: lane_threads_of(config, store),
        pace: config.pace,
        max_duration: config.max_duration,
        op_timeout: config.op_timeout,
        retries: config.retries,
        check_reads: store.holds_data(),
        hash_stream: matches!(config.source, EventSource::Generated { .. }),
        dealing: Dealing {
            lanes: config.concurrency * config.shard.map_or(1, |shard| shard.count),
            conflicts: config.conflicts,
        },
        shard: config.shard,
        trace_sample: config.trace_sample,
        // Three connect timeouts with no operation reaching the store: it is gone. Faults
        // make it unreachable on purpose, and the run measures that.
        give_up_unreached: config
            .faults
            .is_empty()
            .then(|| config.connect_timeout * GIVE_UP_AFTER_CONNECT_TIMEOUTS),
    }
}

/// `--lane-threads`, else one per core where the store chooses them, else none; never
/// more than lanes.
fn lane_threads_of(config: &RunConfig, store: &AnyStore) -> usize {
    let threads = match config.lane_threads {
        Some(threads) => threads,
        None if store.lane_threads(config.concurrency) => crate::procfs::cores(),
        None => 0,
    };
    threads.min(config.concurrency)
}

/// Connect timeouts in a row with no operation reaching the store, before a run ends.
const GIVE_UP_AFTER_CONNECT_TIMEOUTS: u32 = 3;

/// The faults to play and the server they go to, checked before anything starts.
fn fault_timeline(config: &RunConfig) -> Result<Option<Timeline>> {
    if config.faults.is_empty() {
        return Ok(None);
    }
    let hosts = config.db.address(0).map(|a| a.hosts).unwrap_or_default();
    let home = Home::resolve(config.home.as_deref())?;
    Timeline::resolve(config.faults.clone(), home, config.db.scheme(), &hosts).map(Some)
}

/// The measured part: the runner, then every file of the folder.
async fn measure(
    config: &RunConfig,
    store: Arc<AnyStore>,
    clock: RunClock,
    stop: &Arc<StopSignal>,
    timeline: Option<Timeline>,
    record: &mut RunRecord,
    run_json: &RunJson,
) -> Result<()> {
    let plan = plan_of(config, &store);
    let (op_log, op_log_tx) = start_op_log(config, &store, clock)?;
    let progress = Arc::new(Progress::default());
    let bar = show_progress(config, progress.clone());
    say_running(config);
    let serving = serving_server(config);
    let warmup_began = Arc::default();
    let (stream, timed_warmup) = stream_of(config, &warmup_began)?;
    let phases = phase_clock(
        serving.as_ref(),
        warmup_began,
        keep_unmeasured(
            config.out_dir.clone(),
            run_json.clone(),
            timed_warmup.clone(),
        ),
    );
    let (run_over, over) = tokio::sync::watch::channel(false);
    let observer = crate::observe::Observer::start(serving, over.clone());
    let faults = timeline
        .map(|timeline| tokio::spawn(faults::play(timeline, phases.clone(), stop.clone(), over)));
    let outcome = runner::run(
        store.clone(),
        stream,
        RunContext {
            plan,
            interval: config.interval,
            clock,
            stop: stop.clone(),
            progress,
            phases,
            op_log: op_log_tx,
        },
    )
    .await;
    run_over.send_replace(true);
    // What was put on disk before measuring stays in every later record.
    record.unmeasured = run_json.unmeasured();
    // The stream is gone with the runner: a timed warm-up's count is final.
    if let (Some(count), EventSource::Generated { workload }) = (timed_warmup, &mut record.events) {
        workload.warmup = count.get();
    }
    if let Some(faults) = faults {
        record.faults = faults.await.unwrap_or_default();
    }
    if let Some(bar) = bar {
        bar.end();
    }
    let outcome = outcome?;
    let op_log_rows = op_log.map(OpLogWriter::finish).transpose();
    // What ran goes into the record before any file is written: a file that cannot be
    // written (a full disk) must not make the folder forget what reached the store.
    ended(
        record,
        config,
        &outcome,
        op_log_rows.as_ref().ok().copied().flatten(),
        clock,
    );
    op_log_rows?;
    let written = write_files(config, &store, &outcome, clock, observer, stop, record).await;
    if let Err(e) = &written
        && record.op_log_rows.is_some()
    {
        record.unwritten = Some(format!("{e:#}"));
    }
    written
}

/// "running W on URL (concurrency C); results in DIR", and how long an open loop
/// nothing bounds will take when that is long. A series (sweep, repeats) says its own
/// line for each run, after its header.
fn say_running(config: &RunConfig) {
    if config.print_details {
        note!(
            "running {} on {} (concurrency {}); results in {}",
            config.workload_name(),
            config.db,
            config.concurrency,
            config.out_dir.display()
        );
    }
    if let Some(length) = config.unbounded_length.filter(|l| *l >= LONG_PLAN) {
        note!(
            "at this --rate the plan takes {} to send its events; --duration bounds it",
            crate::config::years_or_time(length.as_secs_f64())
        );
    }
}

/// An open loop this long is said before it starts.
const LONG_PLAN: Duration = Duration::from_secs(3600);

/// The phases' clock, which also counts the CPU of the server hatshop started for
/// this run's database; `before_measuring` runs as the measured phase is about to begin.
fn phase_clock(
    serving: Option<&ServerRecord>,
    warmup: Arc<OnceLock<Instant>>,
    before_measuring: BeforeMeasuring,
) -> Arc<PhaseClock> {
    Arc::new(PhaseClock {
        warmup,
        server_pids: serving
            .iter()
            .flat_map(|server| server.nodes.iter().map(|node| node.pid))
            .collect(),
        before_measuring: Some(before_measuring),
        ..PhaseClock::default()
    })
}

/// What the load and warm-up came to, put on disk before any measured operation:
/// their failed writes into failed_writes.csv, then into run.json the seq every lane
/// had applied and a timed warm-up's count. A run killed while measuring is verified
/// from there; a run that cannot write them does not measure.
fn keep_unmeasured(
    dir: PathBuf,
    run_json: RunJson,
    timed_warmup: Option<WarmupCount>,
) -> BeforeMeasuring {
    Box::new(move |unmeasured: &Unmeasured| {
        let cannot = |e: anyhow::Error| {
            format!("cannot keep what the load did on disk before measuring: {e:#}")
        };
        write_csv(
            &result_dir::file(&dir, result_dir::FAILED_WRITES_CSV),
            &failed_write_rows(&unmeasured.failed_writes),
        )
        .map_err(cannot)?;
        let kept = UnmeasuredRecord {
            through_seq: unmeasured.last_seq,
            operations: unmeasured.applied,
            failed: unmeasured.failed,
            failed_writes: unmeasured.failed_writes.len() as u64,
            at: rfc3339(SystemTime::now()),
        };
        let warmup = timed_warmup.as_ref().map(WarmupCount::get);
        run_json
            .update(|record| {
                record.unmeasured = Some(kept);
                if let (Some(warmup), EventSource::Generated { workload }) =
                    (warmup, &mut record.events)
                {
                    workload.warmup = warmup;
                }
            })
            .map_err(cannot)
    })
}

/// failed_writes.csv's rows.
fn failed_write_rows(failed: &[FailedWrite]) -> Vec<result_dir::FailedWriteRow> {
    failed
        .iter()
        .map(|f| result_dir::FailedWriteRow {
            seq: f.seq,
            event_type: f.event_type.to_string(),
            target: f.target,
            error_kind: f.error_kind.as_str().to_string(),
        })
        .collect()
}

/// The run's events, and with `--warmup 10s` where its warm-up count will be: the
/// warm-up ends that long after `warmup_began`, which the source sets.
fn stream_of(
    config: &RunConfig,
    warmup_began: &Arc<OnceLock<Instant>>,
) -> Result<(runner::EventStream, Option<WarmupCount>)> {
    Ok(match (&config.source, config.warmup_time) {
        (EventSource::Generated { workload }, Some(length)) => {
            let (stream, count) = TimedWarmup::new(workload, length, warmup_began.clone());
            (Box::new(stream.map(Ok)), Some(count))
        }
        _ => (open_stream(&config.source)?, None),
    })
}

/// The files made from what the runner measured and observed: faults, statistics,
/// failed writes, server metrics and server times.
async fn write_files(
    config: &RunConfig,
    store: &AnyStore,
    outcome: &RunOutcome,
    clock: RunClock,
    observer: crate::observe::Observer,
    stop: &Arc<StopSignal>,
    record: &mut RunRecord,
) -> Result<()> {
    if !config.faults.is_empty() {
        write_csv(
            &result_dir::file(&config.out_dir, result_dir::FAULTS_CSV),
            &record.faults,
        )?;
    }
    write_outcome(config, outcome, clock)?;
    record.gc_log = observer
        .finish(
            &config.out_dir,
            clock.wall,
            clock.wall + outcome.measure_offset.unwrap_or_default(),
        )
        .await?;
    server_time::write(config, store, &outcome.traced, stop).await
}

/// The op log's writer thread and the sender the lanes share, when it is on.
fn start_op_log(
    config: &RunConfig,
    store: &AnyStore,
    clock: RunClock,
) -> Result<(Option<OpLogWriter>, Option<crate::report::OpLogSender>)> {
    if !config.op_log {
        return Ok((None, None));
    }
    let (writer, tx) = OpLogWriter::start(
        &result_dir::file(&config.out_dir, result_dir::OPS_CSV),
        &config.run_id,
        store.facts().name.as_str(),
        clock.wall,
    )?;
    Ok((Some(writer), Some(tx)))
}

/// What the run came to, into run.json's record: how it ended, what it measured, and
/// a failure where the stream, the events file or the op log says the folder cannot be
/// trusted.
fn ended(
    record: &mut RunRecord,
    config: &RunConfig,
    outcome: &RunOutcome,
    op_log_rows: Option<u64>,
    clock: RunClock,
) {
    record.status = match outcome.stop_reason {
        None => "finished",
        Some(StopReason::Deadline) => "stopped_at_deadline",
        Some(StopReason::Interrupted) => "interrupted",
        Some(StopReason::Failed) => "failed",
    }
    .into();
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
    record.op_log_rows = op_log_rows;
    record.unmeasured_errors = outcome.unmeasured_errors;
    record.failed_writes = outcome.failed_writes.len() as u64;
    record.client = outcome.client.clone();
    record.server_cpu = outcome.server_cpu.clone();
    let failure = [
        &outcome.not_measured,
        &outcome.stream_error,
        &outcome.gave_up,
    ]
    .into_iter()
    .find_map(Option::as_ref);
    if let Some(error) = failure {
        record.status = "failed".into();
        record.error = Some(error.clone());
    }
    if let EventSource::File(info) = &config.source
        && file_sha256(&info.path).ok().as_ref() != Some(&info.sha256)
    {
        record.status = "failed".into();
        record.error = Some(format!(
            "events file {} changed during the run",
            info.path.display()
        ));
    }
    if let Some(rows) = op_log_rows
        && rows != record.measured_ops
    {
        record.status = "failed".into();
        record.error = Some(format!(
            "ops.csv has {rows} rows but {} operations were measured",
            record.measured_ops
        ));
    }
}

/// summary.json, intervals.csv, latency.hlog and failed_writes.csv.
fn write_outcome(config: &RunConfig, outcome: &RunOutcome, clock: RunClock) -> Result<()> {
    let of = SummaryOf {
        run_id: config.run_id.clone(),
        store: config.db.scheme().to_string(),
        workload: config.workload_name(),
        concurrency: config.concurrency,
        plan_sha256: outcome.plan_sha256.clone().or(match &config.source {
            EventSource::File(info) => Some(info.sha256.clone()),
            EventSource::Generated { .. } => None,
        }),
    };
    let heading = Heading {
        of,
        percentiles: config.percentiles.clone(),
        comment: format!(
            "hatshop {} run {}",
            env!("CARGO_PKG_VERSION"),
            config.run_id
        ),
    };
    write_statistics(
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
    )
}

/// Prints the table, verifies if asked, writes the report; the exit code.
async fn finish(
    config: &RunConfig,
    store: &AnyStore,
    record: &RunRecord,
    stop: &StopSignal,
) -> Result<std::process::ExitCode> {
    let summary: Summary =
        crate::files::read_json(&result_dir::file(&config.out_dir, result_dir::SUMMARY_JSON))?;
    if config.print_details {
        print_result(config, record, &summary);
    }
    let mut exact = true;
    if config.verify && matches!(record.status.as_str(), "finished" | "stopped_at_deadline") {
        let verdict = result_dir::file(&config.out_dir, result_dir::VERIFY_JSON);
        let report = tokio::select! {
            report = verify_store(
                store,
                &config.db,
                &config.out_dir,
                record,
                config.op_timeout,
                Some(&verdict),
            ) => Some(report?),
            _ = stop.interrupted() => None,
        };
        match report {
            Some(report) => {
                if config.print_details {
                    say!("verify:");
                    crate::console::out(&report.render());
                }
                exact = report.is_exact();
            }
            None => note!("verify interrupted"),
        }
    }
    let report = html::write_report(&config.out_dir)?;
    if config.print_details {
        say!("results: {}", config.out_dir.display());
        if !config.verify && store.holds_data() && !config.db.in_memory() {
            say!("check it: hatshop verify {}", config.out_dir.display());
        }
        say!("report: {}", report.display());
    }
    if let Some(to) = &config.export_json {
        export_summary(&config.out_dir, to)?;
    }
    if record.status == "failed" {
        bail!(
            "the run failed: {}; the result folder holds every operation that ran",
            record.error.as_deref().unwrap_or("unknown error")
        );
    }
    if record.interrupted || stop.reason() == Some(StopReason::Interrupted) {
        note!(
            "interrupted after {} measured operations; the result folder holds all of them",
            thousands(record.measured_ops)
        );
        return Ok(std::process::ExitCode::from(EXIT_INTERRUPTED));
    }
    if !exact {
        return Err(VerifyDifferences.into());
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// The header, the table and any warning, on stdout.
fn print_result(config: &RunConfig, record: &RunRecord, summary: &Summary) {
    say!(
        "{} · {} ({}) · seed {} · concurrency {}",
        config.workload_name(),
        record.database.store.name,
        record.database.store.server_version,
        seed_of(&config.source),
        config.concurrency
    );
    let settings: Vec<String> = record
        .database
        .store
        .settings
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if !settings.is_empty() {
        say!("{}", settings.join(" · "));
    }
    if let Some(server) = &record.database.server {
        let facts: Vec<String> = server
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        say!(
            "server started by hatshop: {} of {} node{} ({})",
            server.name,
            server.nodes,
            if server.nodes == 1 { "" } else { "s" },
            facts.join(" · ")
        );
    }
    crate::console::out(&table::render(summary, &config.percentiles));
    if let Some(client) = &record.client {
        let (line, warning) =
            client.report(&record.database.store.name, config.db.store().in_process);
        say!("{line}");
        if let Some(warning) = warning {
            say!("warning: {warning}");
        }
    }
    if let Some(server) = &record.server_cpu {
        say!("{}", server.describe());
    }
    if summary.ops == 0 {
        say!(
            "warning: no operation was measured, so there is no latency or throughput to \
             read (the measured phase had {} events)",
            thousands(config.measured_events())
        );
    }
    if record.unmeasured_errors > 0 {
        say!(
            "warning: {} operations failed during load and warm-up",
            thousands(record.unmeasured_errors)
        );
    }
    if record.status == "stopped_at_deadline" && record.measured_ops == 0 {
        say!("warning: --duration ran out before anything was measured (in the load or warm-up)");
    }
}

/// Creates the result folder; refuses one that already holds files.
fn prepare_dir(dir: &Path) -> Result<()> {
    crate::config::create_empty_folder(dir, "result")?;
    let probe = dir.join(".hatshop-write-test");
    std::fs::write(&probe, b"")
        .with_context(|| format!("cannot write in result folder {}", dir.display()))?;
    std::fs::remove_file(&probe).ok();
    Ok(())
}

fn seed_of(source: &EventSource) -> String {
    match source {
        EventSource::Generated { workload } => workload.seed.to_string(),
        EventSource::File(_) => "from file".into(),
    }
}

/// Progress while a run goes: a bar on a terminal, else a plain line on stderr every
/// `--progress-interval` seconds (a CI log then shows the run moving).
struct Shown {
    bar: Option<ProgressBar>,
    ticker: tokio::task::JoinHandle<()>,
}

impl Shown {
    /// Stops the ticker and clears the bar.
    fn end(self) {
        self.ticker.abort();
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Starts showing progress, unless `--quiet` (or a plain line is asked never).
fn show_progress(config: &RunConfig, progress: Arc<Progress>) -> Option<Shown> {
    if !config.show_progress {
        return None;
    }
    // A shard applies about its share of the stream.
    let shards = config.shard.map_or(1, |shard| shard.count) as u64;
    let total = config.total_events().div_ceil(shards);
    if std::io::stderr().is_terminal() {
        return Some(progress_bar(total, progress));
    }
    let every = config.progress_interval?;
    let started = std::time::Instant::now();
    let ticker = tokio::spawn(async move {
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        let mut last = 0u64;
        loop {
            tick.tick().await;
            let applied = progress.applied.load(Ordering::Relaxed);
            note!(
                "progress: {:.1} s, {}/{} events, {} ops/s, {} measured, {} errors",
                started.elapsed().as_secs_f64(),
                thousands(applied),
                thousands(total),
                thousands((applied.saturating_sub(last) as f64 / every.as_secs_f64()) as u64),
                thousands(progress.measured.load(Ordering::Relaxed)),
                thousands(progress.errors.load(Ordering::Relaxed))
            );
            last = applied;
        }
    });
    Some(Shown { bar: None, ticker })
}

/// The bar on a terminal, redrawn four times a second.
fn progress_bar(total: u64, progress: Arc<Progress>) -> Shown {
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:32}] {human_pos}/{human_len} {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let shown = bar.clone();
    let ticker = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        let mut last = 0u64;
        loop {
            tick.tick().await;
            let applied = progress.applied.load(Ordering::Relaxed);
            let measured = progress.measured.load(Ordering::Relaxed);
            let errors = progress.errors.load(Ordering::Relaxed);
            shown.set_position(applied);
            shown.set_message(format!(
                "{} ops/s, {} measured, {} errors",
                thousands(applied.saturating_sub(last) * 4),
                thousands(measured),
                thousands(errors)
            ));
            last = applied;
        }
    });
    Shown {
        bar: Some(bar),
        ticker,
    }
}
