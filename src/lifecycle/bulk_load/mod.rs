//! `hatshop load`: study 002's bulk load. Rows of a few values go into their own table
//! in batches of a given size; each batch is timed alone (its rows are made and
//! encoded before the clock starts), the server is watched as during a run, and the
//! rows are read back after. A batch over a server limit ends the load with one line
//! that names the limit and the largest batch that fits.

pub mod plan;
pub mod send;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use anyhow::{Context, Result, anyhow};
use hdrhistogram::Histogram;
use tokio::sync::mpsc;

use self::send::{Senders, Sent};
use super::reach::{Keys, SETUP_TIMEOUT, connect, set_up, until};
use super::record::{server_facts, server_serving};
use crate::cli::LoadArgs;
use crate::config::{in_result_folder, seconds, store_settings};
use crate::console::{note, say};
use crate::db::{
    AnyStore, BatchLimit, BulkLoad, ConnectOptions, DbTiming, DbUrl, LoadShape, Ownership, Store,
    row_key, row_values,
};
use crate::files::write_json;
use crate::interrupt;
use crate::numbers::thousands;
use crate::result_dir::folder::{
    create_empty_folder, missing_folders, remove_if_unused, unique_dir,
};
use crate::result_dir::load_record::{
    BATCH_TRACES_CSV, BATCHES_CSV, BatchLatency, BatchTrace, LOAD_JSON, LoadCheck, LoadPlan,
    LoadRecord, LoadTotals,
};
use crate::result_dir::{DatabaseRecord, Host, RunStatus};
use crate::runner::{StopReason, StopSignal};
use crate::stamp::rfc3339;

/// `hatshop load`: batches of rows into a table of their own, timed batch by batch,
/// then read back; load.json, batches.csv and a report in the result folder.
pub async fn run(args: &LoadArgs) -> Result<ExitCode> {
    let plan = LoadPlan::from_args(args)?;
    let (url, options, out) = target(args, &plan)?;
    let made = missing_folders(&out);
    create_empty_folder(&out, "result")?;
    let stop = Arc::new(StopSignal::default());
    let _listening = {
        let stop = stop.clone();
        interrupt::Listening::with(move || stop.stop(StopReason::Interrupted))
    };
    let store = match ready(args, &plan, &url, &options, &stop).await {
        Ok(store) => Arc::new(store),
        Err(e) => {
            remove_if_unused(&out, &made);
            return Err(e);
        }
    };
    let server = server_serving(&url, args.home.as_deref());
    let mut record = started(&plan, &url, &options, &store, server.as_ref());
    write_json(&out.join(LOAD_JSON), &record)?;
    note!(
        "loading {} rows × {} values of {} B into {url}, batches of {} ({}); results in {}",
        thousands(plan.total_rows()),
        plan.columns,
        plan.value_size,
        thousands(plan.batch_size),
        serde_json::to_string(&plan.batch)?.trim_matches('"'),
        out.display()
    );
    let (collected, gc_log) = load(&store, &plan, &options, &out, server, &stop).await?;
    record.gc_log = gc_log;
    let Collected {
        totals,
        limit,
        first_error,
        traced,
    } = collected?;
    record.totals = totals;
    write_batch_traces(&out, &store, traced, &stop).await?;
    record.finished_at = Some(rfc3339(SystemTime::now()));
    let failure = match (&limit, &first_error) {
        (Some(limit), _) => Some(too_large(limit, &plan, &record.totals)),
        (None, Some(error)) => Some(format!("a batch failed: {error}")),
        (None, None) => None,
    };
    record.status = match (stop.reason(), &failure) {
        (_, Some(_)) => RunStatus::Failed,
        (Some(StopReason::Interrupted), None) => RunStatus::Interrupted,
        _ => RunStatus::Finished,
    };
    record.error = failure;
    if record.status == RunStatus::Finished && !args.no_verify && store.holds_data() {
        read_back(&mut record, &store, &plan, args, options.op_timeout, &stop).await;
    }
    crate::db::close_within(&*store).await;
    record.interrupted = record.status == RunStatus::Interrupted;
    write_json(&out.join(LOAD_JSON), &record)?;
    let report = crate::report::bulk::write_report(&out)?;
    print_table(&record, &out, &report);
    if record.status == RunStatus::Failed {
        return Err(anyhow!(record.error.clone().unwrap_or_default()));
    }
    Ok(match (&record.check, record.interrupted) {
        (_, true) => ExitCode::from(130),
        (Some(check), _) if !check.ok => ExitCode::FAILURE,
        _ => ExitCode::SUCCESS,
    })
}

/// load.json as the load begins.
fn started(
    plan: &LoadPlan,
    url: &DbUrl,
    options: &ConnectOptions,
    store: &AnyStore,
    server: Option<&crate::cluster::ServerRecord>,
) -> LoadRecord {
    LoadRecord {
        hatshop_version: env!("CARGO_PKG_VERSION").into(),
        status: RunStatus::Running,
        interrupted: false,
        error: None,
        plan: plan.clone(),
        database: DatabaseRecord {
            url: url.to_string(),
            settings: options.settings.given().clone(),
            file: url.file().map(|f| f.display().to_string()),
            store: store.facts(),
            server: server.map(server_facts),
        },
        host: Host::probe(),
        started_at: rfc3339(SystemTime::now()),
        finished_at: None,
        totals: LoadTotals::default(),
        gc_log: None,
        check: None,
    }
}

/// The store's URL (an embedded store's file in the result folder), how to connect,
/// and the result folder, all checked before anything is made.
fn target(args: &LoadArgs, plan: &LoadPlan) -> Result<(DbUrl, ConnectOptions, PathBuf)> {
    let url = DbUrl::parse(&args.db)?;
    if plan.trace_sample.is_some() && url.store().traces_batches.is_none() {
        let tracing: Vec<&str> = crate::db::STORES
            .iter()
            .filter_map(|store| store.traces_batches)
            .collect();
        anyhow::bail!(
            "--trace-sample traces batches on the server: {} only, not {}://",
            crate::db::listed(&tracing),
            url.scheme()
        );
    }
    let settings = store_settings(url.store(), &url, &args.store)?;
    let connect_timeout = seconds("--connect-timeout", args.connect_timeout, 0.1)?;
    let op_timeout = seconds("--op-timeout", args.op_timeout, 0.1)?;
    seconds("--interval", args.interval, 0.01)?;
    let out = match &args.out {
        Some(dir) => dir.clone(),
        None => unique_dir(
            Path::new("results"),
            &format!("load-{}-{}", url.scheme(), crate::stamp::for_names()),
        ),
    };
    let options = ConnectOptions {
        concurrency: plan.concurrency,
        settings,
        connect_timeout,
        op_timeout,
        existing_only: false,
        key_value_only: false,
    };
    Ok((in_result_folder(url, &out), options, out))
}

/// The store connected, owned by hatshop, and its load table made.
async fn ready(
    args: &LoadArgs,
    plan: &LoadPlan,
    url: &DbUrl,
    options: &ConnectOptions,
    stop: &StopSignal,
) -> Result<AnyStore> {
    let store = connect(url, options, stop).await?;
    let owner = Ownership {
        recreate: args.recreate,
        note: format!("hatshop {} load", env!("CARGO_PKG_VERSION")),
    };
    set_up(&store, url, &owner, Keys::Now, stop).await?;
    let shape = LoadShape {
        columns: plan.columns,
        kind: plan.batch,
        in_flight: plan.in_flight,
    };
    until(
        SETUP_TIMEOUT,
        "make the load table",
        stop,
        "interrupted before the load began",
        store.load_setup(shape),
    )
    .await
    .with_context(|| format!("cannot make the load table in {url}"))?;
    Ok(store)
}

/// Sends every batch and collects their rows into batches.csv while the server is
/// watched; what the batches came to, and what the GC log gave.
async fn load(
    store: &Arc<AnyStore>,
    plan: &LoadPlan,
    options: &ConnectOptions,
    out: &Path,
    server: Option<crate::cluster::ServerRecord>,
    stop: &Arc<StopSignal>,
) -> Result<(Result<Collected>, Option<String>)> {
    let (over_tx, over) = tokio::sync::watch::channel(false);
    let observer = crate::observe::Observer::start(server, over);
    let began_wall = SystemTime::now();
    let began = Instant::now();
    let (done_tx, done) = mpsc::unbounded_channel();
    let senders = tokio::spawn(
        Senders {
            store: store.clone(),
            plan: plan.clone(),
            op_timeout: options.op_timeout,
            stop: stop.clone(),
            began,
        }
        .run(done_tx),
    );
    let collected = collect(out, plan, done).await;
    let _ = senders.await;
    over_tx.send_replace(true);
    let gc_log = observer.finish(out, began_wall, began_wall).await?;
    Ok((collected, gc_log))
}

/// Reads the rows back into `record.check`; a failure to read is the load's status.
async fn read_back(
    record: &mut LoadRecord,
    store: &AnyStore,
    plan: &LoadPlan,
    args: &LoadArgs,
    op_timeout: std::time::Duration,
    stop: &StopSignal,
) {
    note!("reading the rows back");
    match check(store, plan, args.verify_sample, op_timeout, stop).await {
        Ok(found) => record.check = Some(found),
        Err(e) => {
            // Said in load.json too: the folder stays valid.
            let interrupted = stop.reason() == Some(StopReason::Interrupted);
            record.status = if interrupted {
                RunStatus::Interrupted
            } else {
                RunStatus::Failed
            };
            record.error = Some(format!("cannot read the loaded rows back: {e:#}"));
        }
    }
}

/// What the batches came to.
struct Collected {
    totals: LoadTotals,
    /// The limit a batch ran into.
    limit: Option<BatchLimit>,
    /// The first other error.
    first_error: Option<String>,
    /// Traced batches: (batch, sent at s, client µs, the server's trace ids).
    traced: Vec<(u64, f64, f64, Vec<u128>)>,
}

/// Writes batches.csv as batches end, and adds them up.
async fn collect(
    out: &Path,
    plan: &LoadPlan,
    mut done: mpsc::UnboundedReceiver<Sent>,
) -> Result<Collected> {
    let path = out.join(BATCHES_CSV);
    let mut csv = csv::Writer::from_path(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    let mut latency = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3)?;
    let mut c = Collected {
        totals: LoadTotals::default(),
        limit: None,
        first_error: None,
        traced: Vec::new(),
    };
    let totals = &mut c.totals;
    // When each batch was in flight: their union is the time spent loading.
    let mut in_flight: Vec<(f64, f64)> = Vec::new();
    let mut pass_rows = 0;
    while let Some(sent) = done.recv().await {
        let row = sent.row;
        csv.serialize(&row)
            .and_then(|()| csv.flush().map_err(csv::Error::from))
            .with_context(|| format!("cannot write {}", path.display()))?;
        if !row.error.is_empty() {
            totals.failed_batches += 1;
            if sent.limit.is_some() && c.limit.is_none() {
                c.limit = sent.limit;
            } else if c.first_error.is_none() && !row.error.starts_with("cancelled") {
                c.first_error = Some(row.error.clone());
            }
            continue;
        }
        if !sent.trace_ids.is_empty() {
            c.traced
                .push((row.batch, row.start_s, row.latency_us, sent.trace_ids));
        }
        totals.batches += 1;
        totals.rows += row.rows;
        totals.payload_bytes += row.payload_bytes;
        in_flight.push((row.start_s, row.start_s + row.latency_us / 1e6));
        latency.saturating_record((row.latency_us * 1e3) as u64);
        pass_rows += row.rows;
        if pass_rows >= plan.rows {
            pass_rows -= plan.rows;
            note!(
                "pass {} of {}: {} rows loaded",
                row.pass + 1,
                plan.repeat,
                thousands(totals.rows)
            );
        }
    }
    if totals.batches > 0 {
        let first_sent = in_flight.iter().map(|b| b.0).fold(f64::MAX, f64::min);
        let last_answered = in_flight.iter().map(|b| b.1).fold(0.0, f64::max);
        totals.elapsed_s = last_answered - first_sent;
        totals.busy_s = union_length(&mut in_flight);
        let ms = |ns: u64| ns as f64 / 1e6;
        totals.latency_ms = BatchLatency {
            mean: latency.mean() / 1e6,
            p50: ms(latency.value_at_quantile(0.5)),
            p90: ms(latency.value_at_quantile(0.9)),
            p99: ms(latency.value_at_quantile(0.99)),
            max: ms(latency.max()),
        };
        if totals.elapsed_s > 0.0 {
            totals.rows_per_s = totals.rows as f64 / totals.elapsed_s;
            totals.mb_per_s = totals.payload_bytes as f64 / 1e6 / totals.elapsed_s;
        }
        if totals.busy_s > 0.0 {
            totals.rows_per_busy_s = totals.rows as f64 / totals.busy_s;
        }
    }
    Ok(c)
}

/// The length of the union of intervals.
fn union_length(intervals: &mut [(f64, f64)]) -> f64 {
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut total = 0.0;
    let mut current: Option<(f64, f64)> = None;
    for &(start, end) in intervals.iter() {
        current = match current {
            Some((s, e)) if start <= e => Some((s, e.max(end))),
            Some((s, e)) => {
                total += e - s;
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    total + current.map_or(0.0, |(s, e)| e - s)
}

/// The server's time of each traced batch, into batch-traces.csv; within a deadline,
/// and a Ctrl-C leaves the server times out rather than the folder.
async fn write_batch_traces(
    out: &Path,
    store: &AnyStore,
    traced: Vec<(u64, f64, f64, Vec<u128>)>,
    stop: &StopSignal,
) -> Result<()> {
    if traced.is_empty() {
        return Ok(());
    }
    let ids: Vec<u128> = traced.iter().flat_map(|t| t.3.iter().copied()).collect();
    note!("reading {} server traces …", ids.len());
    let durations = match until(
        SETUP_TIMEOUT,
        "read the traces",
        stop,
        "interrupted while reading the traces",
        store.db_durations(&ids),
    )
    .await
    {
        Ok(durations) => durations,
        Err(e) => {
            note!("the server's traces could not be read: {e}");
            vec![None; ids.len()]
        }
    };
    let mut durations = durations.into_iter();
    let rows: Vec<BatchTrace> = traced
        .into_iter()
        .map(|(batch, start_s, client_us, ids)| BatchTrace {
            batch,
            start_s,
            client_us,
            server_us: ids
                .iter()
                .filter_map(|_| durations.next().flatten())
                .reduce(f64::max),
        })
        .collect();
    let kept = rows.iter().filter(|r| r.server_us.is_some()).count();
    if kept < rows.len() {
        note!(
            "the server kept {kept} of {} batch traces (a busy node drops trace writes)",
            rows.len()
        );
    }
    crate::files::write_csv(&out.join(BATCH_TRACES_CSV), &rows)
}

/// The one line for a batch over a limit: which limit, its value, and what fits.
fn too_large(limit: &BatchLimit, plan: &LoadPlan, totals: &LoadTotals) -> String {
    let batch_bytes = plan.batch_size.min(plan.rows) * plan.row_bytes();
    let by_bytes = limit
        .bytes
        .zip(limit.bytes_per_row)
        .map(|(bytes, per_row)| (bytes as f64 / per_row) as u64);
    let fits = limit.rows.or(by_bytes).filter(|&rows| rows > 0);
    let mut line = format!(
        "a batch of {} rows ({} of keys and values) is over {} = {}",
        thousands(plan.batch_size.min(plan.rows)),
        size_text(batch_bytes),
        limit.setting,
        limit.value
    );
    match fits {
        Some(rows) => line.push_str(&format!(
            "; a batch of about {} rows fits (--batch-size {rows})",
            thousands(rows)
        )),
        None => line.push_str("; lower --batch-size"),
    }
    if let Some(raise) = &limit.raise {
        line.push_str(&format!(", or raise it: {raise}"));
    }
    if totals.batches > 0 {
        line.push_str(&format!(
            " ({} batches had gone through)",
            thousands(totals.batches)
        ));
    }
    line
}

/// Bytes for a person: kB below a megabyte.
fn size_text(bytes: u64) -> String {
    if bytes < 1_000_000 {
        format!("{:.1} kB", bytes as f64 / 1e3)
    } else {
        format!("{:.1} MB", bytes as f64 / 1e6)
    }
}

/// Counts the rows and compares a sample of them with what the seed gives.
async fn check(
    store: &AnyStore,
    plan: &LoadPlan,
    sample: u64,
    op_timeout: std::time::Duration,
    stop: &StopSignal,
) -> Result<LoadCheck> {
    let expected = plan.total_rows();
    const STOPPED: &str = "interrupted while reading the rows back";
    let found = until(
        op_timeout * 4,
        "count the rows",
        stop,
        STOPPED,
        store.load_count(),
    )
    .await?;
    let sampled = sample.min(expected);
    let mut mismatched = 0;
    for k in 0..sampled {
        // Evenly spread over every pass and batch, first and last rows included.
        let n = if sampled == 1 {
            0
        } else {
            k * (expected - 1) / (sampled - 1)
        };
        let want = row_values(plan.seed, n, plan.columns, plan.value_size);
        let got = until(
            op_timeout,
            "read a row",
            stop,
            STOPPED,
            store.load_read(&row_key(n)),
        )
        .await?;
        if got.as_ref() != Some(&want) {
            mismatched += 1;
        }
    }
    Ok(LoadCheck {
        rows_expected: expected,
        rows_found: found,
        sampled,
        mismatched,
        ok: found == expected && mismatched == 0,
    })
}

fn print_table(record: &LoadRecord, out: &Path, report: &Path) {
    let p = &record.plan;
    let t = &record.totals;
    let mut text = format!(
        "\n{} rows × {} values of {} B into {} in batches of {} ({}): {}\n",
        thousands(p.total_rows()),
        p.columns,
        p.value_size,
        record.database.url,
        thousands(p.batch_size),
        serde_json::to_string(&p.batch)
            .unwrap_or_default()
            .trim_matches('"'),
        record.status
    );
    text.push_str(&crate::report::table::terminal(
        &crate::report::bulk::totals_table(record),
    ));
    text.push_str(&format!(
        "  MB/s counts keys and values; while a batch was in flight ({:.2} s): {} rows/s\n",
        t.busy_s,
        thousands(t.rows_per_busy_s.round() as u64)
    ));
    if let Some(c) = &record.check {
        text.push_str(&format!(
            "  check       {} of {} rows found; {} sampled rows, {} differ from the seed's: {}\n",
            thousands(c.rows_found),
            thousands(c.rows_expected),
            thousands(c.sampled),
            thousands(c.mismatched),
            if c.ok { "ok" } else { "FAILED" }
        ));
    }
    if let Some(gc) = &record.gc_log {
        text.push_str(&format!("  GC          {gc}\n"));
    }
    text.push_str(&format!(
        "  folder      {}\n  report      {}\n",
        out.display(),
        report.display()
    ));
    say!("{}", text.trim_end());
}
