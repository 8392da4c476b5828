//! `hatshop merge SHARD_DIR… -o DIR`: the folders of one run's shards (`run --shard
//! I/N` on several client machines) joined into one folder that `report`, `verify` and
//! `compare` read like any other. The op logs are joined with a `shard` column and the
//! statistics are rebuilt from it, exactly (latencies are kept to the nanosecond);
//! intervals count from the earliest shard's measured start, and throughput is over
//! the common window, from that start to the last answer of any shard.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

use crate::cli::MergeArgs;
use crate::console::say;
use crate::files::{CsvRows, write_json};
use crate::interrupt;
use crate::numbers::thousands;
use crate::op_log::{OpLog, PartWriter, Rebuilt};
use crate::report::run_table;
use crate::report::{Heading, html, write_statistics};
use crate::result_dir::folder::create_empty_folder;
use crate::result_dir::{
    self, FailedWriteRow, PlanRecord, Recovery, RunRecord, RunStatus, ShardOrigin,
};
use crate::runner::Shard;
use crate::stamp::rfc3339;

struct ShardDir {
    dir: PathBuf,
    record: RunRecord,
    shard: Shard,
}

/// `hatshop merge`: one result folder from the shards of one run.
pub fn run(args: &MergeArgs) -> Result<()> {
    let _listening = interrupt::Listening::new();
    let shards = load_shards(&args.shard_dirs)?;
    start_afresh_after_a_killed_merge(&args.out)?;
    create_empty_folder(&args.out, "merged")?;
    let marker = args.out.join(result_dir::MERGING);
    crate::files::write_atomic(
        &marker,
        b"hatshop merge: unfinished until run.json is written\n",
    )?;
    let merged = write_merged(&shards, &args.out);
    if merged.is_err() {
        // A half-written folder is no result folder.
        let _ = std::fs::remove_dir_all(&args.out);
    }
    let record = merged?;
    std::fs::remove_file(&marker).with_context(|| format!("cannot remove {}", marker.display()))?;
    let summary: crate::stats::Summary =
        result_dir::seal::read_json(&args.out, result_dir::SUMMARY_JSON)?;
    say!(
        "merged {} shards (concurrency {}, {} measured operations) into {}",
        shards.len(),
        record.plan.concurrency,
        thousands(record.measured_ops),
        args.out.display()
    );
    crate::console::out(&run_table::render(
        &summary,
        &[],
        crate::console::text_width(),
    ));
    say!(
        "report: {}",
        result_dir::file(&args.out, result_dir::REPORT_HTML).display()
    );
    say!("check it: hatshop verify {}", args.out.display());
    Ok(())
}

/// Removes what a merge killed part-way left in `out`: all of it, since that merge
/// began with the folder empty, and no process holds it now.
fn start_afresh_after_a_killed_merge(out: &Path) -> Result<()> {
    if out.join(result_dir::MERGING).is_file()
        && !out.join(result_dir::RUN_JSON).exists()
        && crate::folder_lock::held(out) != Some(true)
    {
        std::fs::remove_dir_all(out)
            .with_context(|| format!("cannot clear the unfinished merge in {}", out.display()))?;
        say!(
            "{}: starting afresh the merge that did not finish there",
            out.display()
        );
    }
    Ok(())
}

/// Every folder, checked to be one shard each of the same run, in shard order.
fn load_shards(dirs: &[PathBuf]) -> Result<Vec<ShardDir>> {
    let mut shards = dirs
        .iter()
        .map(|dir| shard_dir(dir))
        .collect::<Result<Vec<_>>>()?;
    shards.sort_by_key(|s| s.shard.index);
    let first = &shards[0];
    let count = first.shard.count;
    for (want, s) in shards.iter().enumerate() {
        of_one_run(first, s)?;
        if s.shard.index != want {
            let missing = if s.shard.index > want {
                want
            } else {
                s.shard.index
            };
            bail!(
                "shard {missing}/{count} is {}: give each of the {count} shards' folders once",
                if s.shard.index > want {
                    "missing"
                } else {
                    "given twice"
                }
            );
        }
    }
    if shards.len() != count {
        bail!(
            "shard {}/{count} is missing: give each of the {count} shards' folders once",
            shards.len()
        );
    }
    Ok(shards)
}

/// One shard's folder: a whole run made with `--shard`, with its op log.
fn shard_dir(dir: &Path) -> Result<ShardDir> {
    let record = result_dir::load_complete(dir)?;
    let Some(shard) = record.shard else {
        bail!(
            "{} is not a shard (it ran without --shard): nothing to merge",
            dir.display()
        );
    };
    if !record.plan.op_log || !OpLog::exists(dir) {
        bail!(
            "{} has no op log (--no-op-log): merging rebuilds the statistics from each shard's op log",
            dir.display()
        );
    }
    Ok(ShardDir {
        dir: dir.to_path_buf(),
        record,
        shard,
    })
}

/// Refuses `s` unless it is a shard of the same run as `first`: shard count, stream,
/// store, database and plan alike.
fn of_one_run(first: &ShardDir, s: &ShardDir) -> Result<()> {
    let same = |what: &str, ok: bool| -> Result<()> {
        if ok {
            Ok(())
        } else {
            bail!(
                "{} and {} are not shards of one run: their {what} differ",
                first.dir.display(),
                s.dir.display()
            )
        }
    };
    same("shard counts", s.shard.count == first.shard.count)?;
    same(
        "event streams",
        s.record.plan_sha256.is_some() && s.record.plan_sha256 == first.record.plan_sha256
            || serde_json::to_value(&s.record.events).ok()
                == serde_json::to_value(&first.record.events).ok(),
    )?;
    same(
        "stores",
        s.record.database.store.name == first.record.database.store.name,
    )?;
    // verify reads one database for the merged run: the shards' must be that one.
    same(
        "databases (give every shard the same --db)",
        s.record.database.url == first.record.database.url
            && s.record.database.file == first.record.database.file,
    )?;
    if let Some(field) = first_difference(&first.record.plan, &s.record.plan) {
        same(&format!("plans ({field})"), false)?;
    }
    Ok(())
}

fn parse_time(text: &str, dir: &Path) -> Result<SystemTime> {
    humantime::parse_rfc3339(text).with_context(|| format!("{}: bad time '{text}'", dir.display()))
}

/// The op log, the statistics, failed_writes.csv, run.json and the report.
fn write_merged(shards: &[ShardDir], out: &Path) -> Result<RunRecord> {
    let mut starts = Vec::new();
    for s in shards {
        let text = s
            .record
            .measure_started_at
            .as_deref()
            .unwrap_or(&s.record.started_at);
        starts.push(parse_time(text, &s.dir)?);
    }
    let start = starts.iter().min().copied().expect("at least one shard");
    let interval = Duration::from_secs_f64(shards[0].record.plan.interval_s.max(0.001));
    let mut rebuilt = Rebuilt::new(start, interval);
    let rows = concatenate_op_logs(shards, out, &mut rebuilt)?;
    let (intervals, elapsed, end) = rebuilt.finish();
    let mut of = result_dir::summary_of(&shards[0].record);
    of.run_id = merged_run_id(out);
    of.concurrency = shards.iter().map(|s| s.record.plan.concurrency).sum();
    let heading = Heading {
        of,
        percentiles: Vec::new(),
        comment: format!(
            "hatshop {} merged {} shards",
            env!("CARGO_PKG_VERSION"),
            shards.len()
        ),
    };
    write_statistics(out, heading, &intervals, interval, elapsed, start)?;
    let mut failed = CsvRows::create(&result_dir::file(out, result_dir::FAILED_WRITES_CSV))?;
    let mut failed_writes = 0u64;
    for s in shards {
        let path = result_dir::file(&s.dir, result_dir::FAILED_WRITES_CSV);
        for row in crate::report::loaded_run::read_rows::<FailedWriteRow>(&path)? {
            failed.push(&row)?;
            failed_writes += 1;
        }
    }
    failed.finish()?;
    let record = merged_record(shards, out, start, end, rows, failed_writes)?;
    write_json(&result_dir::file(out, result_dir::RUN_JSON), &record)?;
    html::write_report(out)?;
    Ok(record)
}

/// Copies every shard's rows into one op log with a `shard` column, feeding each to
/// the statistics; the number of rows.
fn concatenate_op_logs(shards: &[ShardDir], out: &Path, rebuilt: &mut Rebuilt) -> Result<u64> {
    let first = &shards[0].record;
    let mut parts = PartWriter::create(
        &OpLog::dir_of(out),
        0,
        true,
        &first.run_id,
        &first.database.store.name,
    )?;
    let mut rows = 0u64;
    for s in shards {
        let log = OpLog::open(&s.dir)?.of_runs(s.record.op_log_runs());
        let bad = || format!("the op log {} is not valid", log.dir().display());
        log.for_each(|run, mut row| {
            if rows.is_multiple_of(4096) && interrupt::requested() {
                bail!("merge interrupted");
            }
            parts.set_run(&run.run_id, &run.database);
            rebuilt.add(&row, row.event().with_context(bad)?);
            row.shard = Some(s.shard.index as u32);
            parts.push(&row)?;
            rows += 1;
            Ok(())
        })?;
    }
    parts.finish()?;
    Ok(rows)
}

/// A merged run is as finished as its least finished shard.
fn worst_status(shards: &[ShardDir]) -> RunStatus {
    shards
        .iter()
        .map(|s| s.record.status)
        .min_by_key(|status| status.finish_rank())
        .unwrap_or(RunStatus::Finished)
}

/// When any shard was recovered: the merged folder's recovery, over every shard's
/// lanes. Its `from_status` is that of a killed shard where there was one, so that
/// `verify` judges every lane as a killed run's (what each shard recorded where it
/// recorded its end, else its op log's last rows).
fn recovery(shards: &[ShardDir]) -> Option<Recovery> {
    let recovered: Vec<&Recovery> = shards
        .iter()
        .filter_map(|s| s.record.recovered.as_ref())
        .collect();
    if recovered.is_empty() {
        return None;
    }
    let killed = shards.iter().find(|s| !s.record.recorded_its_end());
    Some(Recovery {
        from_status: killed.map_or(RunStatus::Merged, |s| {
            s.record
                .recovered
                .as_ref()
                .map_or(s.record.status, |r| r.from_status)
        }),
        at: recovered
            .iter()
            .map(|r| r.at.clone())
            .max()
            .unwrap_or_default(),
        dropped_lines: recovered.iter().map(|r| r.dropped_lines).sum(),
        logged_ops: shards.iter().map(|s| s.record.summarised_ops()).sum(),
        logged_failed_writes: recovered.iter().map(|r| r.logged_failed_writes).sum(),
        logged_lane_last_seq: shards
            .iter()
            .flat_map(|s| match &s.record.recovered {
                Some(r) if !s.record.recorded_its_end() => r.logged_lane_last_seq.clone(),
                _ => s.record.lane_last_seq.clone(),
            })
            .collect(),
        op_log_complete: recovered.iter().all(|r| r.op_log_complete),
        journal_damage: recovered.iter().find_map(|r| r.journal_damage.clone()),
        lost_rows_at_most: recovered.iter().map(|r| r.lost_rows_at_most).sum(),
    })
}

/// One shard as the merged run.json lists it.
fn origin(s: &ShardDir) -> ShardOrigin {
    ShardOrigin {
        index: s.shard.index,
        run_id: s.record.run_id.clone(),
        dir: s.dir.display().to_string(),
        status: s.record.status,
        host: s.record.host.clone(),
        measure_started_at: s.record.measure_started_at.clone(),
        finished_at: s.record.finished_at.clone(),
        measured_ops: s.record.summarised_ops(),
        client: s.record.client.clone(),
    }
}

/// The merged run's id: its folder's name.
fn merged_run_id(out: &Path) -> String {
    out.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "merged".into())
}

/// run.json of the merged folder: the first shard's, with every lane of every shard,
/// the sums, the worst status, and each shard (host, status, client cost) listed.
fn merged_record(
    shards: &[ShardDir],
    out: &Path,
    start: SystemTime,
    end: SystemTime,
    rows: u64,
    failed_writes: u64,
) -> Result<RunRecord> {
    let mut record = shards[0].record.clone();
    record.run_id = merged_run_id(out);
    record.status = worst_status(shards);
    record.interrupted = shards.iter().any(|s| s.record.interrupted);
    record.error = shards.iter().find_map(|s| s.record.error.clone());
    record.stream_complete = shards.iter().all(|s| s.record.stream_complete);
    record.planned_events = shards
        .iter()
        .map(|s| s.record.planned_events)
        .max()
        .unwrap_or(0);
    record.plan.concurrency = shards.iter().map(|s| s.record.plan.concurrency).sum();
    record.pid = 0;
    record.process_start = 0;
    record.started_at = shards
        .iter()
        .map(|s| s.record.started_at.clone())
        .min()
        .unwrap_or_default();
    record.measure_started_at = Some(rfc3339(start));
    record.finished_at = Some(rfc3339(end));
    record.lane_last_seq = shards
        .iter()
        .flat_map(|s| s.record.lane_last_seq.iter().copied())
        .collect();
    record.measured_ops = shards.iter().map(|s| s.record.summarised_ops()).sum();
    record.cut_calls = shards.iter().map(|s| s.record.cut_calls).sum();
    // Every shard's load ended before its measured phase; one that never got there
    // leaves the merged run without that record.
    record.unmeasured = shards
        .iter()
        .all(|s| s.record.unmeasured.is_some())
        .then(|| shards[0].record.unmeasured.clone())
        .flatten();
    record.op_log_rows = Some(rows);
    record.sealed = true;
    record.unmeasured_errors = shards.iter().map(|s| s.record.unmeasured_errors).sum();
    record.failed_writes = failed_writes;
    record.recovered = recovery(shards);
    record.client = None;
    // Each shard's lanes are counted apart, and a shard's spread is not the whole's.
    record.fairness = None;
    record.server_cpu = None;
    record.host_load = None;
    record.shard = None;
    record.shards = shards.iter().map(origin).collect();
    if record.measured_ops + record.cut_calls != rows {
        bail!(
            "the shards' op logs hold {rows} rows but their run.json files count {} operations and {} cut calls",
            record.measured_ops,
            record.cut_calls
        );
    }
    Ok(record)
}

/// The first field in which two shards' plans differ, if any: every shard must pace,
/// time, retry and deal its lanes alike for their operations to make one run.
fn first_difference(a: &PlanRecord, b: &PlanRecord) -> Option<String> {
    let (serde_json::Value::Object(a), serde_json::Value::Object(b)) = (
        serde_json::to_value(a).expect("a plan serialises"),
        serde_json::to_value(b).expect("a plan serialises"),
    ) else {
        unreachable!("a plan is a JSON object");
    };
    let mut fields: Vec<&String> = a.keys().chain(b.keys()).collect();
    fields.sort();
    fields.dedup();
    fields
        .into_iter()
        .find(|f| a.get(*f) != b.get(*f))
        .map(|field| {
            let shown =
                |v: Option<&serde_json::Value>| v.map_or("none".to_string(), |v| v.to_string());
            format!(
                "{field}: {} against {}",
                shown(a.get(field)),
                shown(b.get(field))
            )
        })
}
