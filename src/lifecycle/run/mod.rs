//! One run, from its folder to its last record: connect and set up (within deadlines,
//! hearing Ctrl-C), replay the stream, write the result folder, print the table. Whatever
//! ends the run (its end, `--duration`, Ctrl-C, SIGTERM, a failure of the op log or the
//! events file), the folder is completed with every operation that ran and says how it
//! ended; a second signal leaves it marked `aborted`. `run`, the series (`--repeat`,
//! `--find-max`, `sweep`) and a study's cells all run here.

mod before_measuring;
mod ending;
mod key_loaded;
mod metrics;
mod progress;
mod server_settled;
mod setup;
mod terminal;
mod tidy_loaded;

use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, bail};

use self::before_measuring::keep_unmeasured;
use self::ending::{ended, record_failure, write_files};
use self::progress::show_progress;
use self::server_settled::settle_server;
use self::setup::{RunStream, fault_timeline, phase_clock, plan_of, start_op_log, stream_of};
use self::terminal::{print_result, say_running};
use self::tidy_loaded::tidy_loaded;
use super::db_time;
use super::held_load;
use super::reach::connect_and_set_up;
use super::record::{initial_record, serving_server};
use super::run_json::RunJson;
use super::verify::verify_store;
use crate::cli::RunArgs;
use crate::config::RunConfig;
use crate::console::{note, say};
use crate::db::{AnyStore, Store};
use crate::interrupt;
use crate::numbers::{elapsed_text, thousands};
use crate::op_log::OpLogWriter;
use crate::report::html;
use crate::result_dir::folder::{claim_result_folder, missing_folders, remove_folders};
use crate::result_dir::{self, RunRecord, RunStatus};
use crate::runner::faults::{self, Timeline};
use crate::runner::{
    self, BeforeMeasuring, Progress, RunClock, RunContext, StopReason, StopSignal,
};
use crate::stats::Summary;
use crate::stats::settling::Settling;
use crate::verify::Verdict;
use crate::workload::{EventSource, WarmupCount};

/// Exit code of a run stopped by a signal, as shells expect.
pub const EXIT_INTERRUPTED: u8 = interrupt::EXIT_CODE as u8;
/// A run that ended with more failed operations than `--max-errors` allows.
pub const EXIT_TOO_MANY_ERRORS: u8 = 3;
/// A run whose numbers broke a `--threshold`.
pub const EXIT_THRESHOLD_BROKEN: u8 = 4;

/// A run whose verify found the database differing from the stream (its folder is
/// complete: a sweep goes on and says so at the end).
#[derive(Debug, thiserror::Error)]
#[error("verify found differences between the database and the event stream")]
pub struct VerifyDifferences;

/// `--export-json`: summary.json copied to `to`, or to standard output for `-`.
fn export_summary(dir: &Path, to: &Path) -> Result<()> {
    let bytes = result_dir::seal::read(dir, result_dir::SUMMARY_JSON)?;
    crate::report::export::write(to, &String::from_utf8_lossy(&bytes))
}

/// `--export-json` names one run's file: a series writes a summary.json per run, in
/// its folder.
pub fn refuse_export_in_series(args: &RunArgs) -> Result<()> {
    let given = [
        ("--export-json", &args.export_json),
        ("--export-csv", &args.export_csv),
        ("--export-markdown", &args.export_markdown),
    ];
    if let Some((flag, _)) = given.iter().find(|(_, path)| path.is_some()) {
        bail!(
            "{flag} is for one run; a series (--repeat, --find-max, sweep) \
             writes each run's summary.json in its own folder (`hatshop show DIR` prints its table)"
        );
    }
    Ok(())
}

/// Refuses `--max-errors` and `--threshold` in a series that does not apply them (a
/// sweep, `--find-max`): one line, rather than a bound passed over in silence.
pub fn refuse_bounds_in(args: &RunArgs, series: &str) -> Result<()> {
    if args.max_errors.is_some() {
        crate::cli::usage_bail!(
            "--max-errors bounds one run or its --repeat; {series} reports every run's errors \
             in its table: leave it out"
        );
    }
    if !args.threshold.is_empty() {
        crate::cli::usage_bail!(
            "--threshold bounds one run or its --repeat; {series} reports every run's numbers \
             in its table: leave it out"
        );
    }
    Ok(())
}

/// Where a run of a series stood, from its record's `went_on_from`: `, on the tables
/// FOLDER left` where it went on from what an earlier run left (`--reuse-load`),
/// nothing where it loaded its own.
pub fn load_note(went_on_from: Option<&str>) -> String {
    went_on_from.map_or_else(String::new, |folder| {
        format!(", on the tables {folder} left")
    })
}

/// What `--verify` found in a run of a series, for its line: `, verify exact`, the
/// number of differences, or nothing where it did not run.
pub fn verified_note(run_dir: &Path) -> String {
    let path = result_dir::file(run_dir, result_dir::VERIFY_JSON);
    let read = crate::files::read_json::<crate::verify::VerifyReport>(&path);
    match read.map(|report| report.verdict()) {
        Ok(Verdict::Exact) => ", verify exact".to_string(),
        Ok(Verdict::Differs(n)) => format!(
            ", verify: {} differences (see {})",
            thousands(n),
            path.display()
        ),
        Ok(Verdict::Unfinished) => format!(", verify could not finish (see {})", path.display()),
        Err(_) => String::new(),
    }
}

/// One run of a series (sweep, repeats) into its --out folder, without the table:
/// its exit code, and whether verify found the database differing (which ends the run,
/// not the series).
pub async fn execute_in_series(args: &RunArgs) -> Result<(std::process::ExitCode, bool)> {
    refuse_export_in_series(args)?;
    let config = RunConfig::from_args(args)?.in_series();
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
    metrics::check(config.metrics)?;
    let made = missing_folders(&config.out_dir);
    claim_result_folder(&config.out_dir)?;
    // A run that never began leaves no folder behind (nor `results/` it made).
    let never_began = |e: anyhow::Error| {
        let _ = std::fs::remove_dir_all(&config.out_dir);
        remove_folders(&made);
        e
    };
    let reserve = RunJson::keep_room(&config.out_dir, config.concurrency).map_err(never_began)?;
    let (store, going_on) = connect_and_set_up(config, &stop)
        .await
        .map_err(never_began)?;
    let store = Arc::new(store);
    let config = &match &going_on {
        Some(going_on) => config.going_on(going_on.events),
        None => config.clone(),
    };
    let db_time_source = db_time::begin(config, &store, &stop).await;
    let clock = RunClock::now();
    let mut record = initial_record(config, &plan_of(config, &store), &store.facts(), clock.wall);
    record.db_time = db_time_source;
    record.went_on_from = going_on.map(|going_on| going_on.from);
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
        Ok(ran) => run_json
            .finish(&record)
            .inspect_err(|e| {
                if record.op_log_rows.is_some() {
                    record.unwritten = Some(format!("{e:#}"));
                }
            })
            .map(|()| ran),
        Err(e) => Err(e),
    };
    let (metrics, summary) = match result {
        Ok(ran) => ran,
        Err(e) => {
            let e = record_failure(config, &run_json, &mut record, e);
            crate::db::close_within(&*store).await;
            return Err(e);
        }
    };
    // Requests a store still has in flight land before verify reads (bounded, and
    // Ctrl-C skips the wait).
    tokio::select! {
        _ = tokio::time::timeout(config.op_timeout, store.settle()) => {}
        _ = stop.interrupted() => {}
    }
    note_what_it_holds(config, &store, &record).await;
    let finished = finish(config, &store, &record, &summary, &stop).await;
    if let Some(metrics) = metrics {
        linger(config, metrics, &stop).await;
    }
    interrupt::clear_last_words();
    crate::db::close_within(&*store).await;
    finished
}

/// Leaves the note of what the tables hold for a run that may go on from them
/// (`--reuse-load`): this run's whole stream, or why not. A note that cannot be written
/// leaves none, or the going-on note, which no run goes on from: it is said, and the
/// run stands.
async fn note_what_it_holds(config: &RunConfig, store: &AnyStore, record: &RunRecord) {
    if config.shard.is_some() || !store.holds_data() {
        return;
    }
    let Some(holding) = held_load::left_by(record, config) else {
        return;
    };
    // Tables this run set up hold no note, which says no whole stream already: a slow
    // server is not asked for more. One that went on replaces its going-on note.
    if holding.not_whole.is_some() && !config.goes_on() {
        return;
    }
    let writing = held_load::write(store, &holding);
    match tokio::time::timeout(config.op_timeout, writing).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => note!("cannot note what the tables hold, so no run goes on from them: {e}"),
        Err(_) => note!(
            "no answer within {} to noting what the tables hold, so no run goes on from them",
            elapsed_text(config.op_timeout.as_secs_f64())
        ),
    }
}

/// What the load and warm-up came to, into the record once the runner is done.
fn record_unmeasured(
    record: &mut RunRecord,
    run_json: &RunJson,
    timed_warmup: Option<WarmupCount>,
    settling: Option<Arc<Settling>>,
) {
    // What was put on disk before measuring stays in every later record.
    record.unmeasured = run_json.unmeasured();
    if let Some(settled) = settling.and_then(|s| s.outcome()) {
        record.warmth.get_or_insert_default().settling = Some(settled);
    }
    // The stream is gone with the runner: a timed warm-up's count is final.
    if let (Some(count), EventSource::Generated { workload }) = (timed_warmup, &mut record.events) {
        workload.warmup = count.get();
    }
}

/// Keeps the metrics endpoint up for a last scrape of the run's totals, saying so
/// where the run's lines are printed.
async fn linger(config: &RunConfig, metrics: metrics::Metrics, stop: &StopSignal) {
    if config.print_details && !config.metrics_linger.is_zero() {
        note!(
            "metrics: serving the totals at http://{}/metrics until a scraper reads them ({} at most; Ctrl-C ends it)",
            metrics.addr,
            elapsed_text(config.metrics_linger.as_secs_f64())
        );
    }
    metrics.linger(config.metrics_linger, stop).await;
}

/// What happens on the source's thread just before the first measured event: the
/// store's loaded tables tidied, the server (one hatshop started) waited for until it
/// settles, then what the load and warm-up came to put on disk.
fn before_measuring(
    config: &RunConfig,
    store: &Arc<AnyStore>,
    run_json: &RunJson,
    timed_warmup: &Option<WarmupCount>,
    serving: &Option<crate::cluster::ServerRecord>,
    stop: &Arc<StopSignal>,
) -> BeforeMeasuring {
    // A shard's tables are the other shards' too, which may be measuring by then.
    let tidy = tidy_loaded(
        config.shard.is_none().then(|| store.clone()),
        tokio::runtime::Handle::current(),
        stop.clone(),
    );
    let settle = settle_server(
        serving.as_ref(),
        tokio::runtime::Handle::current(),
        stop.clone(),
    );
    keep_unmeasured(
        config.out_dir.clone(),
        config.load_batch,
        run_json.clone(),
        timed_warmup.clone(),
        tidy,
        settle,
    )
}

/// What happens on the source's thread once every lane has applied the load: the keys
/// the load went without are built (not in a shard, whose tables came keyed from
/// `hatshop prepare`).
fn after_load(
    config: &RunConfig,
    store: &Arc<AnyStore>,
    stop: &Arc<StopSignal>,
) -> Option<crate::runner::AfterLoad> {
    config.shard.is_none().then(|| {
        key_loaded::key_loaded(
            store.clone(),
            tokio::runtime::Handle::current(),
            stop.clone(),
        )
    })
}

/// The measured part: the runner, then every file of the folder; the metrics endpoint,
/// still serving, where `--metrics` asked for one.
async fn measure(
    config: &RunConfig,
    store: Arc<AnyStore>,
    clock: RunClock,
    stop: &Arc<StopSignal>,
    timeline: Option<Timeline>,
    record: &mut RunRecord,
    run_json: &RunJson,
) -> Result<(Option<metrics::Metrics>, Summary)> {
    let plan = plan_of(config, &store);
    let (op_log, op_log_tx) = start_op_log(config, &store, clock)?;
    let progress = Arc::new(Progress::default());
    let metrics = metrics::serve_run(config, &store, progress.clone(), record).await?;
    say_running(config);
    let serving = serving_server(config);
    let RunStream {
        events: stream,
        timed_warmup,
        settling,
        held_orders,
        warmup,
    } = stream_of(config)?;
    let before_measuring =
        before_measuring(config, &store, run_json, &timed_warmup, &serving, stop);
    let after_load = after_load(config, &store, stop);
    let phases = phase_clock(serving.as_ref(), warmup, after_load, before_measuring);
    let bar = show_progress(config, progress.clone(), phases.clone());
    if let Some(metrics) = &metrics {
        metrics.watch_phases(phases.clone());
    }
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
            held_orders,
        },
    )
    .await;
    run_over.send_replace(true);
    record_unmeasured(record, run_json, timed_warmup, settling);
    if let Some(faults) = faults {
        record.faults = faults.await.unwrap_or_default();
    }
    if let Some(bar) = bar {
        bar.end();
    }
    let outcome = outcome?;
    if let Some(metrics) = &metrics {
        metrics.ended(&outcome.stats).await;
    }
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
    written.map(|summary| (metrics, summary))
}

/// Prints the table, verifies if asked, writes the report; the exit code.
async fn finish(
    config: &RunConfig,
    store: &AnyStore,
    record: &RunRecord,
    summary: &Summary,
    stop: &StopSignal,
) -> Result<std::process::ExitCode> {
    if config.print_details {
        print_result(config, record, summary);
    }
    let exact = verify_if_asked(config, store, record, stop).await?;
    let report = html::write_report(&config.out_dir)?;
    if config.print_details {
        say!("results: {}", config.out_dir.display());
        if !config.verify && store.holds_data() && !config.db.in_memory() {
            say!("check it: hatshop verify {}", config.out_dir.display());
        }
        say!("report: {}", report.display());
    }
    export_results(config, summary)?;
    if record.status == RunStatus::Failed {
        bail!(
            "the run failed: {}; the result folder holds every operation that ran",
            record.error.as_deref().unwrap_or("unknown error")
        );
    }
    if record.interrupted || stop.reason() == Some(StopReason::Interrupted) {
        match (
            &record.unmeasured,
            record.lane_last_seq.iter().flatten().max(),
        ) {
            (None, Some(last)) => note!(
                "interrupted in the load or warm-up, before measuring: the lanes had applied \
                 the stream as far as event {} (run.json's lane_last_seq), which verify checks",
                thousands(*last)
            ),
            _ => note!(
                "interrupted after {} measured operations; the result folder holds all of them",
                thousands(record.measured_ops)
            ),
        }
        return Ok(std::process::ExitCode::from(EXIT_INTERRUPTED));
    }
    if !exact {
        return Err(VerifyDifferences.into());
    }
    if let Some(over) = errors_over_bound(config.max_errors, summary) {
        crate::console::err(&format!("error: {over}\n"));
        return Ok(std::process::ExitCode::from(EXIT_TOO_MANY_ERRORS));
    }
    if let Some(broken) = thresholds_broken(record) {
        crate::console::err(&broken);
        return Ok(std::process::ExitCode::from(EXIT_THRESHOLD_BROKEN));
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// An error line for each `--threshold` the run broke, or `None` when it kept them all.
pub fn thresholds_broken(record: &RunRecord) -> Option<String> {
    let lines: String = record
        .thresholds
        .iter()
        .filter(|verdict| !verdict.kept)
        .map(|verdict| {
            format!(
                "error: the run broke --threshold {}: {}\n",
                verdict.threshold, verdict.said
            )
        })
        .collect();
    (!lines.is_empty()).then_some(lines)
}

/// With `--verify`, after a run that ended as planned: the verdict, printed, and
/// whether the store holds exactly what the stream says (true when not asked or
/// interrupted: the interruption is said on its own).
async fn verify_if_asked(
    config: &RunConfig,
    store: &AnyStore,
    record: &RunRecord,
    stop: &StopSignal,
) -> Result<bool> {
    if !config.verify || !record.ran_its_plan() {
        return Ok(true);
    }
    let verdict = result_dir::file(&config.out_dir, result_dir::VERIFY_JSON);
    let report = tokio::select! {
        report = verify_store(
            store,
            &config.db,
            &config.out_dir,
            record,
            config.op_timeout,
            Some(&verdict),
            false,
        ) => report?,
        _ = stop.interrupted() => {
            note!("verify interrupted");
            return Ok(true);
        }
    };
    if config.print_details {
        say!("verify:");
        crate::console::out(&report.render());
    }
    Ok(report.is_exact())
}

/// The summary where `--export-json`, `--export-csv` and `--export-markdown` ask.
fn export_results(config: &RunConfig, summary: &Summary) -> Result<()> {
    if let Some(to) = &config.export_json {
        export_summary(&config.out_dir, to)?;
    }
    if let Some(to) = &config.export_csv {
        crate::report::export::write(
            to,
            &crate::report::export::csv(summary, &config.percentiles),
        )?;
    }
    if let Some(to) = &config.export_markdown {
        crate::report::export::write(
            to,
            &crate::report::export::markdown(summary, &config.percentiles),
        )?;
    }
    Ok(())
}

/// What to say when the measured operations failed more often than `bound` allows.
pub fn errors_over_bound(bound: Option<f64>, summary: &Summary) -> Option<String> {
    let bound = bound?;
    let overall = &summary.overall;
    let share = overall.errors as f64 / overall.count.max(1) as f64;
    (share > bound).then(|| {
        format!(
            "{} of {} measured operations failed ({:.1} %), more than --max-errors {} %; \
             the result folder holds them all",
            thousands(overall.errors),
            thousands(overall.count),
            share * 100.0,
            bound * 100.0
        )
    })
}
