//! `hatshop recover DIR`: a run that never finished its folder (SIGKILL, power lost, a
//! second Ctrl-C) left its op log; this rebuilds summary.json, intervals.csv,
//! latency.hlog and the report from it, so the partial run can be reported and verified
//! for what it did. A line cut by the kill is dropped and counted; the lanes' last
//! logged events go into run.json, and `verify` calls uncertain whatever may have
//! reached the store after them.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

use super::open_stream;
use super::run::rfc3339;
use crate::console::say;
use crate::files::{CsvRows, write_json};
use crate::interrupt;
use crate::report::oplog_stats::{LoggedOp, Rebuilt};
use crate::report::{Heading, html, write_statistics};
use crate::result_dir::{self, Recovery, RunRecord};
use crate::workload::{EventType, Phase};

/// `hatshop recover DIR`: rebuilds the summary, statistics and report of a run that did
/// not finish its folder, from its op log.
pub fn run(dir: &Path) -> Result<()> {
    let _listening = interrupt::Listening::new();
    let mut record = result_dir::load(dir)?;
    let ops = recoverable(dir, &record)?;
    // The room a killed run kept for its last record is free for the rebuilt files.
    crate::files::Reserve::remove_left(dir);
    // A killed writer leaves its last line cut: everything up to the last newline stands.
    let (whole_len, dropped_lines) = whole_lines(&ops)?;
    let interval = Duration::from_secs_f64(record.plan.interval_s.max(0.001));
    let start = measure_start(&record, &ops, whole_len)?;
    let replayed = replay_log(dir, &record, &ops, whole_len, Rebuilt::new(start, interval))?;
    let Replayed {
        rebuilt,
        mut lane_last_seq,
        measured,
        failed_writes,
    } = replayed;
    // Measuring began only after every lane had applied the load and the warm-up.
    if measured > 0
        && let Some(before) = last_unmeasured_seq(&record.events)?
    {
        for lane in &mut lane_last_seq {
            *lane = (*lane).max(Some(before));
        }
    }
    if dropped_lines > 0 {
        drop_cut_line(&ops, whole_len)?;
    }
    let (intervals, elapsed, end) = rebuilt.finish();
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
    record.failed_writes = failed_writes;
    // A run that only failed to write its files logged every operation it applied:
    // its own record of each lane's last event stands, and nothing is in doubt.
    let op_log_complete = record.unwritten.is_some() && record.op_log_rows == Some(measured);
    record.recovered = Some(Recovery {
        from_status: record.status.clone(),
        dropped_lines,
        logged_lane_last_seq: lane_last_seq.clone(),
        op_log_complete,
    });
    record.status = "recovered".into();
    if op_log_complete {
        record.unwritten = None;
        record.error = None;
    } else {
        record.interrupted = true;
        record.lane_last_seq = lane_last_seq;
    }
    record.measured_ops = measured;
    record.op_log_rows = Some(measured);
    record.finished_at.get_or_insert_with(|| rfc3339(end));
    write_json(&result_dir::file(dir, result_dir::RUN_JSON), &record)?;
    html::write_report(dir)?;
    say!(
        "recovered {} operations from {} ({} cut line{} dropped)",
        measured,
        ops.display(),
        dropped_lines,
        if dropped_lines == 1 { "" } else { "s" }
    );
    say!(
        "report: {}",
        result_dir::file(dir, result_dir::REPORT_HTML).display()
    );
    say!(
        "check it: hatshop verify {} (what may have reached the store after the last logged \
         operation of each lane is called uncertain)",
        dir.display()
    );
    Ok(())
}

/// The op log of a folder that needs recovering and can be: not running, not
/// complete, and logged.
fn recoverable(dir: &Path, record: &RunRecord) -> Result<PathBuf> {
    if record.status == "running" && record.writer_alive() {
        bail!("{} is still running (pid {})", dir.display(), record.pid);
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
    if !record.plan.op_log || !ops.exists() {
        bail!(
            "{} has no op log (it ran with --no-op-log): its summary cannot be rebuilt",
            dir.display()
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

/// Reads every whole row of the op log into `rebuilt`, deals it to its lane, and
/// writes the failed writes it shows to failed_writes.csv (those of the load and
/// warm-up are lost), put in place once every row has been read.
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
    let mut failed = CsvRows::create(&result_dir::file(dir, result_dir::FAILED_WRITES_CSV))?;
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
            failed.push(&result_dir::FailedWriteRow {
                seq: row.seq,
                event_type: row.event_type,
                target: row.target,
                error_kind: row.error_kind,
            })?;
            failed_writes += 1;
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

/// The seq of the last load or warm-up event, if the stream has any.
fn last_unmeasured_seq(source: &crate::workload::EventSource) -> Result<Option<u64>> {
    let mut last = None;
    for event in open_stream(source)? {
        let event = event?;
        if event.phase == Phase::Measure {
            break;
        }
        last = Some(event.seq);
    }
    Ok(last)
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
