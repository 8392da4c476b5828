//! `hatshop recover DIR`: a run that never finished its folder (SIGKILL, power lost, a
//! second Ctrl-C, a disk that filled up) left its op log; this rebuilds summary.json,
//! intervals.csv, latency.hlog and the report from it, so the partial run can be
//! reported and verified for what it did. A row cut by the kill is dropped and
//! counted, and the rows the kill left in the op log's journal become its last part.
//! What the run recorded stays as it is: what recover rebuilt goes beside it
//! (`recovered` in run.json), and a recover that fails leaves the folder as it found it.
//! A journal damaged part-way gives the rows before the damage and is kept beside the
//! log, and recover says so and exits non-zero; a recover cut short is finished by the
//! next.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

use crate::console::say;
use crate::files::{CsvRows, Rollback, write_json};
use crate::interrupt;
use crate::op_log::{self, LoggedOp, OpLog, Rebuilt, Sealed};
use crate::report::{Heading, html, write_statistics};
use crate::result_dir::{self, FailedWriteRow, Recovery, RunRecord, RunStatus};
use crate::stamp::rfc3339;
use crate::workload::Phase;

/// The files recover writes: all put back as they were if it fails.
const REBUILT: &[&str] = &[
    result_dir::SUMMARY_JSON,
    result_dir::INTERVALS_CSV,
    result_dir::LATENCY_HLOG,
    result_dir::FAILED_WRITES_CSV,
    result_dir::REPORT_HTML,
    result_dir::RUN_JSON,
];

/// `hatshop recover DIR`: rebuilds the summary, statistics and report of a run that did
/// not finish its folder, from its op log.
pub fn run(dir: &Path) -> Result<()> {
    let _listening = interrupt::Listening::new();
    let record = result_dir::load(dir)?;
    // One recover at a time, and none while the run (or another command) writes the
    // folder: its lock says so, for a copy of a running folder too (no one holds it).
    result_dir::folder::claim_for_writing(dir)?;
    if record.recovered.is_some() && record.plan.op_log && op_log::needs_sealing(dir)? {
        // Cut short after run.json recorded the recovery: only the sealing is left.
        let sealed = op_log::seal(dir)?;
        say!("finished sealing the op log of {}", dir.display());
        return damage_kept(sealed);
    }
    if record.complete()
        && record.unwritten.is_none()
        && result_dir::file(dir, result_dir::SUMMARY_JSON).exists()
        && !result_dir::file(dir, result_dir::REPORT_HTML).exists()
    {
        // Killed while it drew its figures: all else is there.
        let path = html::write_report(dir)?;
        say!(
            "wrote the report it was killed before writing: {}",
            path.display()
        );
        return Ok(());
    }
    recoverable(dir, &record)?;
    // The room a killed run kept for its last record is free for the rebuilt files.
    crate::files::Reserve::remove_left(dir);
    let rollback = Rollback::of(dir, REBUILT)?;
    let log = OpLog::open(dir)?.of_runs(record.op_log_runs());
    let recovered = rebuild(dir, record, &log).map_err(|e| {
        anyhow::anyhow!(
            "{e:#}; recover changed nothing in {}: once the cause is mended (e.g. room freed), \
             run `hatshop recover {}` again",
            dir.display(),
            dir.display()
        )
    })?;
    rollback.keep();
    // Every reader then finds every row in the log's parts.
    let sealed = op_log::seal(dir)?;
    say!(
        "recovered {} operations from {} ({} cut row{} dropped)",
        recovered.logged_ops,
        log.dir().display(),
        recovered.dropped_lines,
        if recovered.dropped_lines == 1 {
            ""
        } else {
            "s"
        }
    );
    say!(
        "report: {}",
        result_dir::file(dir, result_dir::REPORT_HTML).display()
    );
    say!("check it: hatshop verify {}", dir.display());
    damage_kept(sealed)
}

/// A damaged journal is an error once all else is done: the rows after the damage are
/// not in the log, and the file that held them is kept for whoever can mend it.
fn damage_kept(sealed: Sealed) -> Result<()> {
    match sealed.damaged {
        Some((kept, damage)) => bail!(
            "{damage}: only the rows before it were recovered; the damaged journal is kept \
             as {}",
            kept.display()
        ),
        None => Ok(()),
    }
}

/// Rebuilds every file from the op log, the report, and run.json last, with what was
/// rebuilt beside what the run recorded.
fn rebuild(dir: &Path, mut record: RunRecord, log: &OpLog) -> Result<Recovery> {
    let interval = Duration::from_secs_f64(record.plan.interval_s.max(0.001));
    let start = measure_start(&record, log)?;
    let replayed = replay_log(dir, &record, log, Rebuilt::new(start, interval))?;
    let (intervals, elapsed, _end) = replayed.rebuilt.finish();
    let heading = Heading {
        of: result_dir::summary_of(&record),
        percentiles: Vec::new(),
        comment: format!(
            "hatshop {} recovered run {}",
            env!("CARGO_PKG_VERSION"),
            record.run_id
        ),
    };
    write_statistics(dir, heading, &intervals, interval, elapsed, start)?;
    let recovery = Recovery {
        from_status: record.status,
        at: rfc3339(SystemTime::now()),
        dropped_lines: replayed.cut,
        logged_ops: replayed.measured,
        logged_failed_writes: replayed.failed_writes,
        logged_lane_last_seq: replayed.lane_last_seq,
        op_log_complete: record.recorded_its_end()
            && record.measured_ops + record.cut_calls == replayed.measured
            && replayed.damage.is_none(),
        journal_damage: replayed.damage,
        lost_rows_at_most: replayed.lost_at_most,
    };
    // A run killed before it could record its end is over now, as recovered; a run
    // that recorded it keeps its own status.
    if !record.recorded_its_end() {
        record.status = RunStatus::Recovered;
    }
    record.cut_calls = replayed.cut_calls;
    record.sealed = true;
    record.recovered = Some(recovery.clone());
    // The page is written from the record it will sit beside.
    let path = result_dir::file(dir, result_dir::RUN_JSON);
    write_json(&path, &record)?;
    html::write_report(dir)?;
    Ok(recovery)
}

/// Whether a folder needs recovering and can be: not complete, and logged (that its
/// run no longer writes it, its lock has said).
fn recoverable(dir: &Path, record: &RunRecord) -> Result<()> {
    if let Some(recovery) = &record.recovered {
        bail!(
            "{} was recovered already (at {}): nothing to recover",
            dir.display(),
            recovery.at
        );
    }
    if record.complete()
        && record.unwritten.is_none()
        && result_dir::file(dir, result_dir::SUMMARY_JSON).exists()
    {
        bail!(
            "{} is complete ({}): nothing to recover",
            dir.display(),
            record.status
        );
    }
    if !record.plan.op_log {
        bail!(
            "{} has no op log (it ran with --no-op-log), so what it measured cannot be \
             rebuilt: run it again",
            dir.display()
        );
    }
    if !OpLog::exists(dir) {
        bail!(
            "{} has lost its op log ({}), so what it measured cannot be rebuilt: run it again",
            dir.display(),
            result_dir::OPS_DIR
        );
    }
    Ok(())
}

/// When the measured phase began: from run.json, or the first row the log holds.
fn measure_start(record: &RunRecord, log: &OpLog) -> Result<SystemTime> {
    Ok(match &record.measure_started_at {
        Some(text) => humantime::parse_rfc3339(text).context("run.json: bad measure_started_at")?,
        // Killed before it was written: the first row sent, found in a first pass.
        None => {
            let mut first = None;
            log.for_each_until_damage(|_, row| {
                let at = row.sent_at();
                first = Some(first.map_or(at, |first: SystemTime| first.min(at)));
                Ok(())
            })?;
            first.unwrap_or_else(SystemTime::now)
        }
    })
}

/// What the op log gave: its statistics, each lane's last logged seq, and counts.
struct Replayed {
    rebuilt: Rebuilt,
    lane_last_seq: Vec<Option<u64>>,
    measured: u64,
    failed_writes: u64,
    /// Rows of calls the run cut while in flight (`cancelled`), among `measured`.
    cut_calls: u64,
    /// Rows the kill cut as they were written.
    cut: u64,
    /// Where the journal is damaged: the rows after it are not in the rest.
    damage: Option<String>,
    /// The most rows the damage may have taken.
    lost_at_most: u64,
}

/// Reads every whole row of the op log into `rebuilt`, deals it to its lane, and adds
/// the failed writes it shows to those failed_writes.csv already holds (the load's,
/// kept before measuring, or all the run's), the new file put in place once every row
/// has been read.
fn replay_log(
    dir: &Path,
    record: &RunRecord,
    log: &OpLog,
    mut rebuilt: Rebuilt,
) -> Result<Replayed> {
    let lanes = record.plan.concurrency.max(1);
    let mut lane_last_seq: Vec<Option<u64>> = vec![None; lanes];
    let dealing = record.dealing();
    // A shard's lanes are dealing's lanes from its first one on.
    let first_lane = record.shard.map_or(0, |shard| shard.first_lane(lanes));
    let failed_path = result_dir::file(dir, result_dir::FAILED_WRITES_CSV);
    // The rows it holds now: none where there is no such file.
    let known: Vec<FailedWriteRow> = crate::report::loaded_run::read_rows(&failed_path)?;
    let mut failed = CsvRows::create(&failed_path)?;
    let mut listed = HashSet::with_capacity(known.len());
    for row in known {
        listed.insert(row.seq);
        failed.push(&row)?;
    }
    let (mut measured, mut failed_writes, mut cut_calls) = (0u64, 0u64, 0u64);
    let bad = || format!("the op log {} is not valid", log.dir().display());
    let read = log.for_each_until_damage(|_, row: LoggedOp| {
        let event = row.event().with_context(bad)?;
        rebuilt.add(&row, event);
        let dealt = dealing.deal(row.seq, row.target, event, Phase::Measure);
        let Some(lane) = lane_last_seq.get_mut(dealt.lane.wrapping_sub(first_lane)) else {
            bail!(
                "{}: the row for seq {} belongs to another shard's lanes",
                log.dir().display(),
                row.seq
            );
        };
        *lane = (*lane).max(Some(row.seq));
        if !row.success() && row.is_write() {
            failed_writes += 1;
            if listed.insert(row.seq) {
                failed.push(&FailedWriteRow {
                    seq: row.seq,
                    event_type: row.event_type.to_string(),
                    target: row.target,
                    error_kind: row.error_kind().to_string(),
                })?;
            }
        }
        if row.was_cut() {
            cut_calls += 1;
        }
        measured += 1;
        Ok(())
    });
    // On a failure the old failed_writes.csv stands: the new one is dropped unwritten.
    let read = read?;
    failed.finish()?;
    Ok(Replayed {
        rebuilt,
        lane_last_seq,
        measured,
        failed_writes,
        cut_calls,
        cut: read.cut,
        damage: read.damage,
        lost_at_most: read.lost_at_most,
    })
}
