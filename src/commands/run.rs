//! `hatshop run`: connect, set up, replay the stream, write the result folder, print
//! the table. Whatever stops the run (its end, `--duration`, Ctrl-C, SIGTERM), the
//! folder is completed with every operation that ran.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};

use super::open_stream;
use super::verify::verify_store;
use crate::cli::RunArgs;
use crate::config::{EventSource, RunConfig};
use crate::db::{ConnectOptions, Database, Store};
use crate::report::table::{self, thousands};
use crate::report::{OpLogWriter, hlog, html, intervals, write_csv, write_json};
use crate::result_dir::{self, DatabaseRecord, Host, PlanRecord, RunRecord};
use crate::runner::{self, Pace, Progress, RunClock, RunContext, RunPlan, StopReason, StopSignal};
use crate::stats::Summary;
use crate::workload::EventType;

/// Exit code of a run stopped by a signal, as shells expect.
pub const EXIT_INTERRUPTED: u8 = 130;

pub async fn run(args: &RunArgs) -> Result<std::process::ExitCode> {
    execute(&RunConfig::from_args(args)?).await
}

/// Runs one validated config into its result folder.
pub async fn execute(config: &RunConfig) -> Result<std::process::ExitCode> {
    prepare_dir(&config.out_dir)?;
    let outcome = run_in_dir(config).await;
    if outcome.is_err() {
        // A run that failed before it began leaves no empty folder behind.
        let _ = std::fs::remove_dir(&config.out_dir);
    }
    outcome
}

async fn run_in_dir(config: &RunConfig) -> Result<std::process::ExitCode> {
    // From here on a signal ends the run cleanly instead of killing the process.
    let stop = Arc::new(StopSignal::default());
    let signals = tokio::spawn(stop_on_signal(stop.clone()));
    let store = Store::connect(
        &config.db,
        &ConnectOptions {
            concurrency: config.concurrency,
            settings: config.settings.clone(),
        },
    )
    .await
    .with_context(|| format!("cannot connect to {}", config.db))?;
    store
        .setup()
        .await
        .with_context(|| format!("cannot set up the schema in {}", config.db))?;
    let store = Arc::new(store);

    let plan = RunPlan {
        concurrency: config.concurrency,
        pace: Pace::ClosedLoop,
        max_duration: config.max_duration,
        check_reads: store.holds_data(),
        hash_stream: matches!(config.source, EventSource::Generated { .. }),
    };
    let clock = RunClock::now();
    let mut record = initial_record(config, &plan, &store.info(), clock.wall);
    let run_json = result_dir::file(&config.out_dir, result_dir::RUN_JSON);
    write_json(&run_json, &record)?;

    let (op_log, op_log_tx) = if config.op_log {
        let (writer, tx) = OpLogWriter::start(
            &result_dir::file(&config.out_dir, result_dir::OPS_CSV),
            &config.run_id,
            store.info().name.as_str(),
            clock.wall,
        )?;
        (Some(writer), Some(tx))
    } else {
        (None, None)
    };

    let progress = Arc::new(Progress::default());
    let bar = show_progress(config, progress.clone());

    eprintln!(
        "running {} on {} ({} lane{}); results in {}",
        config.workload_name(),
        config.db,
        config.concurrency,
        if config.concurrency == 1 { "" } else { "s" },
        config.out_dir.display()
    );
    let stream = open_stream(&config.source)?;
    let outcome = runner::run(
        store.clone(),
        stream,
        RunContext {
            plan,
            interval: config.interval,
            clock,
            stop: stop.clone(),
            progress,
            op_log: op_log_tx,
        },
    )
    .await;
    signals.abort();
    if let Some((bar, ticker)) = bar {
        ticker.abort();
        bar.finish_and_clear();
    }
    let outcome = outcome?;
    let op_log_rows = op_log.map(OpLogWriter::finish).transpose()?;

    let names: Vec<&str> = EventType::ALL.iter().map(|e| e.as_str()).collect();
    let summary = outcome
        .stats
        .summary(&names, outcome.measured_elapsed.as_secs_f64());
    write_json(
        &result_dir::file(&config.out_dir, result_dir::SUMMARY_JSON),
        &summary,
    )?;
    let interval_s = outcome.interval.as_secs_f64();
    write_csv(
        &result_dir::file(&config.out_dir, result_dir::INTERVALS_CSV),
        &intervals::rows(&outcome.intervals, interval_s, &names),
    )?;
    hlog::write(
        &result_dir::file(&config.out_dir, result_dir::LATENCY_HLOG),
        &outcome.intervals,
        outcome.interval,
        clock.wall + outcome.measure_offset.unwrap_or_default(),
        &names,
        &format!(
            "hatshop {} run {}",
            env!("CARGO_PKG_VERSION"),
            config.run_id
        ),
    )?;

    record.status = match outcome.stop_reason {
        None => "finished",
        Some(StopReason::Deadline) => "stopped_at_deadline",
        Some(StopReason::Interrupted) => "interrupted",
        Some(StopReason::Failed) => "failed",
    }
    .into();
    record.interrupted = outcome.stop_reason == Some(StopReason::Interrupted);
    record.plan_sha256 = outcome.plan_sha256.clone().or(record.plan_sha256);
    record.finished_at = Some(rfc3339(SystemTime::now()));
    record.lane_last_seq = outcome.lane_last_seq.clone();
    record.measured_ops = outcome.stats.total_ops();
    record.op_log_rows = op_log_rows;
    record.unmeasured_errors = outcome.unmeasured_errors;
    write_json(&run_json, &record)?;

    if let Some(rows) = op_log_rows
        && rows != record.measured_ops
    {
        bail!(
            "ops.csv has {rows} rows but {} operations were measured",
            record.measured_ops
        );
    }

    if config.print_details {
        print_result(config, &record, &summary);
    }
    let mut exact = true;
    if config.verify && !record.interrupted {
        let report = verify_store(&*store, &config.out_dir, &record).await?;
        if config.print_details {
            println!("verify:");
            print!("{}", report.render());
        }
        exact = report.is_exact();
    }
    let report = html::write_report(&config.out_dir)?;
    if config.print_details {
        println!("results: {}", config.out_dir.display());
        if !config.verify && store.holds_data() {
            println!("check it: hatshop verify {}", config.out_dir.display());
        }
        println!("report: {}", report.display());
    }

    if record.interrupted {
        eprintln!(
            "interrupted after {} measured operations; the result folder holds all of them",
            thousands(record.measured_ops)
        );
        return Ok(std::process::ExitCode::from(EXIT_INTERRUPTED));
    }
    if !exact {
        bail!("verify found differences between the database and the event stream");
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// The header, the table and any warning, on stdout.
fn print_result(config: &RunConfig, record: &RunRecord, summary: &Summary) {
    println!(
        "{} · {} {} · seed {} · {} lane{}",
        config.workload_name(),
        record.database.store.name,
        record.database.store.server_version,
        seed_of(&config.source),
        config.concurrency,
        if config.concurrency == 1 { "" } else { "s" }
    );
    let settings: Vec<String> = record
        .database
        .store
        .settings
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if !settings.is_empty() {
        println!("{}", settings.join(" · "));
    }
    print!("{}", table::render(summary));
    if record.unmeasured_errors > 0 {
        println!(
            "warning: {} operations failed during load and warm-up",
            thousands(record.unmeasured_errors)
        );
    }
}

/// Creates the result folder; refuses one that already holds files.
fn prepare_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create result folder {}", dir.display()))?;
    let mut entries = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read result folder {}", dir.display()))?;
    if entries.next().is_some() {
        bail!(
            "result folder {} is not empty: choose another with --out",
            dir.display()
        );
    }
    let probe = dir.join(".hatshop-write-test");
    std::fs::write(&probe, b"")
        .with_context(|| format!("cannot write in result folder {}", dir.display()))?;
    std::fs::remove_file(&probe).ok();
    Ok(())
}

fn initial_record(
    config: &RunConfig,
    plan: &RunPlan,
    store: &crate::db::StoreInfo,
    started: SystemTime,
) -> RunRecord {
    RunRecord {
        hatshop_version: env!("CARGO_PKG_VERSION").into(),
        run_id: config.run_id.clone(),
        status: "running".into(),
        interrupted: false,
        events: config.source.clone(),
        plan_sha256: match &config.source {
            EventSource::File(info) => Some(info.sha256.clone()),
            EventSource::Generated { .. } => None,
        },
        database: DatabaseRecord {
            url: config.db.to_string(),
            settings: config.settings.values().clone(),
            store: store.clone(),
        },
        plan: PlanRecord {
            concurrency: plan.concurrency,
            pace: "closed_loop".into(),
            max_duration_s: plan.max_duration.map(|d| d.as_secs_f64()),
            op_log: config.op_log,
            check_reads: plan.check_reads,
        },
        host: Host::probe(),
        started_at: rfc3339(started),
        finished_at: None,
        lane_last_seq: Vec::new(),
        measured_ops: 0,
        op_log_rows: None,
        unmeasured_errors: 0,
    }
}

fn seed_of(source: &EventSource) -> String {
    match source {
        EventSource::Generated { workload } => workload.seed.to_string(),
        EventSource::File(_) => "from file".into(),
    }
}

fn rfc3339(at: SystemTime) -> String {
    humantime::format_rfc3339_millis(at).to_string()
}

/// Ctrl-C or SIGTERM: stop taking new events, finish the ones in flight, write it all.
async fn stop_on_signal(stop: Arc<StopSignal>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            return;
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    stop.stop(StopReason::Interrupted);
}

/// A progress bar on stderr, only when stderr is a terminal.
fn show_progress(
    config: &RunConfig,
    progress: Arc<Progress>,
) -> Option<(ProgressBar, tokio::task::JoinHandle<()>)> {
    if !config.show_progress || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(config.measured_events());
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
            let done = progress.measured.load(Ordering::Relaxed);
            let errors = progress.errors.load(Ordering::Relaxed);
            shown.set_position(done);
            shown.set_message(format!(
                "{} ops/s, {} errors",
                thousands((done - last) * 4),
                thousands(errors)
            ));
            last = done;
        }
    });
    Some((bar, ticker))
}
