//! `hatshop recover DIR`: a run that never finished its folder (SIGKILL, power lost, a
//! second Ctrl-C, a disk that filled up) left its op log; this rebuilds summary.json,
//! intervals.csv, latency.hlog and the report from it, so the partial run can be
//! reported and verified for what it did. A line cut by the kill is dropped and
//! counted. What the run recorded stays as it is: what recover rebuilt goes beside it
//! (`recovered` in run.json), and a recover that fails leaves the folder as it found it.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

use crate::console::say;
use crate::files::{CsvRows, Rollback, write_json};
use crate::interrupt;
use crate::report::oplog_stats::{LoggedOp, Rebuilt};
use crate::report::{Heading, html, write_statistics};
use crate::result_dir::{self, FailedWriteRow, Recovery, RunRecord};
use crate::stamp::rfc3339;
use crate::workload::{EventType, Phase};

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
    let ops = recoverable(dir, &record)?;
    // The room a killed run kept for its last record is free for the rebuilt files.
    crate::files::Reserve::remove_left(dir);
    let rollback = Rollback::of(dir, REBUILT)?;
    let (recovered, whole_len) = rebuild(dir, record, &ops).map_err(|e| {
        anyhow::anyhow!(
            "{e:#}; recover changed nothing in {}: once the cause is mended (e.g. room freed), \
             run `hatshop recover {}` again",
            dir.display(),
            dir.display()
        )
    })?;
    rollback.keep();
    // A killed writer leaves its last line cut: everything up to the last newline stands,
    // and every reader then takes the log as it is.
    if recovered.dropped_lines > 0 {
        drop_cut_line(&ops, whole_len)?;
    }
    say!(
        "recovered {} operations from {} ({} cut line{} dropped)",
        recovered.logged_ops,
        ops.display(),
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
    Ok(())
}

/// Rebuilds every file from the op log, the report, and run.json last, with what was
/// rebuilt beside what the run recorded; the length of the log's whole lines.
fn rebuild(dir: &Path, mut record: RunRecord, ops: &Path) -> Result<(Recovery, u64)> {
    let (whole_len, dropped_lines) = whole_lines(ops)?;
    let interval = Duration::from_secs_f64(record.plan.interval_s.max(0.001));
    let start = measure_start(&record, ops, whole_len)?;
    let replayed = replay_log(dir, &record, ops, whole_len, Rebuilt::new(start, interval))?;
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
        from_status: record.status.clone(),
        at: rfc3339(SystemTime::now()),
        dropped_lines,
        logged_ops: replayed.measured,
        logged_failed_writes: replayed.failed_writes,
        logged_lane_last_seq: replayed.lane_last_seq,
        op_log_complete: record.recorded_its_end() && record.measured_ops == replayed.measured,
    };
    // A run killed before it could record its end is over now, as recovered; a run
    // that recorded it keeps its own status.
    if !record.recorded_its_end() {
        record.status = "recovered".into();
    }
    record.recovered = Some(recovery.clone());
    // The page is written from the record it will sit beside.
    let path = result_dir::file(dir, result_dir::RUN_JSON);
    write_json(&path, &record)?;
    html::write_report(dir)?;
    Ok((recovery, whole_len))
}

/// The op log of a folder that needs recovering and can be: not running, not
/// complete, and logged.
fn recoverable(dir: &Path, record: &RunRecord) -> Result<PathBuf> {
    if record.status == "running" && record.writer_alive() {
        bail!("{} is still running (pid {})", dir.display(), record.pid);
    }
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
    let ops = result_dir::file(dir, result_dir::OPS_CSV);
    if !record.plan.op_log {
        bail!(
            "{} has no op log (it ran with --no-op-log), so what it measured cannot be \
             rebuilt: run it again",
            dir.display()
        );
    }
    if !ops.exists() {
        bail!(
            "{} has lost its op log ({}), so what it measured cannot be rebuilt: run it again",
            dir.display(),
            result_dir::OPS_CSV
        );
    }
    Ok(ops)
}

/// Cuts the op log back to its last whole line, so that every reader takes it as it is
/// (the cut line's bytes were a row the kill left half-written).
fn drop_cut_line(ops: &Path, whole_len: u64) -> Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(ops)
        .and_then(|file| file.set_len(whole_len).and_then(|()| file.sync_all()))
        .with_context(|| format!("cannot drop the cut last line of {}", ops.display()))
}

/// When the measured phase began: from run.json, or the first row the log holds.
fn measure_start(record: &RunRecord, ops: &Path, whole_len: u64) -> Result<SystemTime> {
    Ok(match &record.measure_started_at {
        Some(text) => humantime::parse_rfc3339(text).context("run.json: bad measure_started_at")?,
        // Killed before it was written: the first row sent, found in a first pass.
        None => {
            let mut first = None;
            for_each_row(ops, whole_len, |at, _, _| {
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
}

/// Reads every whole row of the op log into `rebuilt`, deals it to its lane, and adds
/// the failed writes it shows to those failed_writes.csv already holds (the load's,
/// kept before measuring, or all the run's), the new file put in place once every row
/// has been read.
fn replay_log(
    dir: &Path,
    record: &RunRecord,
    ops: &Path,
    whole_len: u64,
    mut rebuilt: Rebuilt,
) -> Result<Replayed> {
    let lanes = record.plan.concurrency.max(1);
    let mut lane_last_seq: Vec<Option<u64>> = vec![None; lanes];
    let dealing = record.dealing();
    // A shard's lanes are dealing's lanes from its first one on.
    let first_lane = record.shard.map_or(0, |shard| shard.first_lane(lanes));
    let failed_path = result_dir::file(dir, result_dir::FAILED_WRITES_CSV);
    // The rows it holds now: none where there is no such file.
    let known: Vec<FailedWriteRow> = crate::report::load::read_rows(&failed_path)?;
    let mut failed = CsvRows::create(&failed_path)?;
    let mut listed = HashSet::with_capacity(known.len());
    for row in known {
        listed.insert(row.seq);
        failed.push(&row)?;
    }
    let (mut measured, mut failed_writes) = (0u64, 0u64);
    let read = for_each_row(ops, whole_len, |at, event, row| {
        rebuilt.add(at, &row, event);
        let dealt = dealing.deal(row.seq, row.target, event, Phase::Measure);
        let Some(lane) = lane_last_seq.get_mut(dealt.lane.wrapping_sub(first_lane)) else {
            bail!(
                "{}: line for seq {} belongs to another shard's lanes",
                ops.display(),
                row.seq
            );
        };
        *lane = (*lane).max(Some(row.seq));
        if !row.success && row.is_write() {
            failed_writes += 1;
            if listed.insert(row.seq) {
                failed.push(&FailedWriteRow {
                    seq: row.seq,
                    event_type: row.event_type,
                    target: row.target,
                    error_kind: row.error_kind,
                })?;
            }
        }
        measured += 1;
        Ok(())
    });
    // On a failure the old failed_writes.csv stands: the new one is dropped unwritten.
    read?;
    failed.finish()?;
    Ok(Replayed {
        rebuilt,
        lane_last_seq,
        measured,
        failed_writes,
    })
}

/// The length of `path` up to its last newline, and whether a cut line follows it.
fn whole_lines(path: &Path) -> Result<(u64, u64)> {
    let cannot = || format!("cannot read {}", path.display());
    let mut file = File::open(path).with_context(cannot)?;
    let len = file.metadata().with_context(cannot)?.len();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut end = len;
    while end > 0 {
        // A log cut inside a line gigabytes long is read back to its start.
        if interrupt::requested() {
            bail!("recover interrupted");
        }
        let from = end.saturating_sub(chunk.len() as u64);
        let part = &mut chunk[..(end - from) as usize];
        file.seek(SeekFrom::Start(from)).with_context(cannot)?;
        file.read_exact(part).with_context(cannot)?;
        if let Some(at) = part.iter().rposition(|&b| b == b'\n') {
            let whole = from + at as u64 + 1;
            return Ok((whole, u64::from(whole < len)));
        }
        end = from;
    }
    Ok((0, u64::from(len > 0)))
}

/// Reads the first `whole_len` bytes of the op log at `path` row by row, holding one row
/// at a time: a long run's log need not fit in memory.
fn for_each_row(
    path: &Path,
    whole_len: u64,
    mut visit: impl FnMut(SystemTime, EventType, LoggedOp) -> Result<()>,
) -> Result<()> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut reader = csv::Reader::from_reader(BufReader::new(file.take(whole_len)));
    for (line, row) in reader.deserialize::<LoggedOp>().enumerate() {
        if line % 4096 == 0 && interrupt::requested() {
            bail!("recover interrupted");
        }
        let bad = || format!("{}: line {} is not valid", path.display(), line + 2);
        let row = row.with_context(bad)?;
        let at = row.sent_at().with_context(bad)?;
        let event = row.event().with_context(bad)?;
        visit(at, event, row)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_last_line_is_left_out_however_long() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("ops.csv");
        let whole = |text: &[u8]| {
            std::fs::write(&path, text).unwrap();
            whole_lines(&path).unwrap()
        };
        assert_eq!(whole(b"seq\n1\n2\n"), (8, 0));
        assert_eq!(whole(b"seq\n1\n2"), (6, 1));
        assert_eq!(whole(b"se"), (0, 1));
        assert_eq!(whole(b""), (0, 0));
        // The last newline more than one chunk back from the end.
        let mut long = b"seq\n1\n".to_vec();
        long.extend(std::iter::repeat_n(b'x', 200_000));
        assert_eq!(whole(&long), (6, 1));
    }
}
