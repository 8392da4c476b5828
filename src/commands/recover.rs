//! `hatshop recover DIR`: a run that never finished its folder (SIGKILL, power lost, a
//! second Ctrl-C) left its op log; this rebuilds summary.json, intervals.csv,
//! latency.hlog and the report from it, so the partial run can be reported and verified
//! for what it did. A line cut by the kill is dropped and counted; the lanes' last
//! logged events go into run.json, and `verify` calls uncertain whatever may have
//! reached the store after them.

use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

use super::open_stream;
use super::run::rfc3339;
use crate::report::oplog_stats::{LoggedOp, Rebuilt};
use crate::report::{html, write_json, write_statistics};
use crate::result_dir::{self, Recovery};
use crate::workload::Phase;
use crate::{interrupt, say};

pub fn run(dir: &Path) -> Result<()> {
    let _listening = interrupt::Listening::new();
    let mut record = result_dir::load(dir)?;
    if record.status == "running" && record.writer_alive() {
        bail!("{} is still running (pid {})", dir.display(), record.pid);
    }
    if record.complete() && result_dir::file(dir, result_dir::SUMMARY_JSON).exists() {
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
    let text =
        std::fs::read_to_string(&ops).with_context(|| format!("cannot read {}", ops.display()))?;
    // A killed writer leaves its last line cut: everything up to the last newline stands.
    let whole = text.rfind('\n').map_or("", |end| &text[..=end]);
    let dropped_lines = u64::from(whole.len() < text.len());

    let interval = Duration::from_secs_f64(record.plan.interval_s.max(0.001));
    let mut rows = Vec::new();
    let mut reader = csv::Reader::from_reader(whole.as_bytes());
    for (line, row) in reader.deserialize::<LoggedOp>().enumerate() {
        if interrupt::requested() {
            bail!("recover interrupted");
        }
        let bad = || format!("{}: line {} is not valid", ops.display(), line + 2);
        let row = row.with_context(bad)?;
        let at = row.sent_at().with_context(bad)?;
        let event = row.event().with_context(bad)?;
        rows.push((at, event, row));
    }
    let start = match &record.measure_started_at {
        Some(text) => humantime::parse_rfc3339(text).context("run.json: bad measure_started_at")?,
        None => rows
            .iter()
            .map(|(at, _, _)| *at)
            .min()
            .unwrap_or_else(SystemTime::now),
    };

    let mut rebuilt = Rebuilt::new(start, interval);
    let lanes = record.plan.concurrency.max(1);
    let mut lane_last_seq: Vec<Option<u64>> = vec![None; lanes];
    let dealing = record.dealing();
    // A shard's lanes are dealing's lanes from its first one on.
    let first_lane = record.shard.map_or(0, |shard| shard.first_lane(lanes));
    for (at, event, row) in &rows {
        rebuilt.add(*at, row, *event);
        let dealt = dealing.deal(row.seq, row.target, *event, Phase::Measure);
        let Some(lane) = lane_last_seq.get_mut(dealt.lane.wrapping_sub(first_lane)) else {
            bail!(
                "{}: line for seq {} belongs to another shard's lanes",
                ops.display(),
                row.seq
            );
        };
        *lane = (*lane).max(Some(row.seq));
    }
    // Measuring began only after every lane had applied the load and the warm-up.
    if !rows.is_empty()
        && let Some(before) = last_unmeasured_seq(&record.events)?
    {
        for lane in &mut lane_last_seq {
            *lane = (*lane).max(Some(before));
        }
    }
    let (intervals, elapsed, end) = rebuilt.finish();
    write_statistics(
        dir,
        &intervals,
        interval,
        elapsed,
        start,
        &format!(
            "hatshop {} recovered run {}",
            env!("CARGO_PKG_VERSION"),
            record.run_id
        ),
    )?;
    // The failed writes the op log shows (those of the load and warm-up are lost).
    let failed: Vec<result_dir::FailedWriteRow> = rows
        .iter()
        .filter(|(_, _, r)| !r.success && r.is_write())
        .map(|(_, _, r)| result_dir::FailedWriteRow {
            seq: r.seq,
            event_type: r.event_type.clone(),
            target: r.target,
            error_kind: r.error_kind.clone(),
        })
        .collect();
    crate::report::write_csv(
        &result_dir::file(dir, result_dir::FAILED_WRITES_CSV),
        &failed,
    )?;
    record.failed_writes = failed.len() as u64;
    let measured = rows.len() as u64;
    record.recovered = Some(Recovery {
        from_status: record.status.clone(),
        dropped_lines,
        logged_lane_last_seq: lane_last_seq.clone(),
    });
    record.status = "recovered".into();
    record.interrupted = true;
    record.lane_last_seq = lane_last_seq;
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

/// The seq of the last load or warm-up event, if the stream has any.
fn last_unmeasured_seq(source: &crate::config::EventSource) -> Result<Option<u64>> {
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
