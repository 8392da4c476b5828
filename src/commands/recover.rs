//! `hatshop recover DIR`: a run that never finished its folder (SIGKILL, power lost, a
//! second Ctrl-C) left its op log; this rebuilds summary.json, intervals.csv,
//! latency.hlog and the report from it, so the partial run can be reported and verified
//! for what it did. A line cut by the kill is dropped and counted; the lanes' last
//! logged events go into run.json, and `verify` calls uncertain whatever may have
//! reached the store after them.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

use super::open_stream;
use super::run::rfc3339;
use crate::db::ErrorKind;
use crate::report::{html, write_json, write_statistics};
use crate::result_dir::{self, Recovery};
use crate::stats::{Outcome, RunStats};
use crate::workload::{EventType, Phase};
use crate::{interrupt, say};

/// One op log row, as recover needs it.
#[derive(serde::Deserialize)]
struct LoggedOp {
    event_type: String,
    seq: u64,
    target: u64,
    timestamp: String,
    latency_us: f64,
    success: bool,
    error_kind: String,
    #[serde(default)]
    node: Option<u16>,
    #[serde(default)]
    attempts: Option<u32>,
    #[serde(default)]
    error_code: String,
    #[serde(default)]
    intended_start_ns: Option<u64>,
}

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
        let row =
            row.with_context(|| format!("{}: line {} is not valid", ops.display(), line + 2))?;
        let at = humantime::parse_rfc3339(&row.timestamp)
            .with_context(|| format!("{}: line {}: bad timestamp", ops.display(), line + 2))?;
        rows.push((at, row));
    }
    let start = match &record.measure_started_at {
        Some(text) => humantime::parse_rfc3339(text).context("run.json: bad measure_started_at")?,
        None => rows
            .iter()
            .map(|(at, _)| *at)
            .min()
            .unwrap_or_else(SystemTime::now),
    };

    let mut intervals: BTreeMap<u64, RunStats> = BTreeMap::new();
    let mut end = start;
    let lanes = record.plan.concurrency.max(1);
    let mut lane_last_seq: Vec<Option<u64>> = vec![None; lanes];
    let dealing = record.dealing();
    for (at, row) in &rows {
        let Some(event) = EventType::ALL.iter().find(|e| e.as_str() == row.event_type) else {
            bail!("{}: unknown event type '{}'", ops.display(), row.event_type);
        };
        let offset = at.duration_since(start).unwrap_or_default();
        let index = (offset.as_nanos() / interval.as_nanos().max(1)) as u64;
        let latency_ns = (row.latency_us * 1_000.0).round() as u64;
        let retries = u64::from(row.attempts.unwrap_or(1).saturating_sub(1));
        let outcome = if row.success {
            Outcome::Ok {
                retries,
                response_ns: row.intended_start_ns.map(|due| {
                    let sent = at
                        .duration_since(SystemTime::UNIX_EPOCH)
                        .map_or(0, |d| d.as_nanos() as u64);
                    (sent + latency_ns).saturating_sub(due)
                }),
            }
        } else {
            Outcome::Failed {
                kind: ErrorKind::parse(&row.error_kind)
                    .unwrap_or(ErrorKind::Other)
                    .as_str(),
                code: (!row.error_code.is_empty()).then_some(row.error_code.as_str()),
                message: "(recovered from ops.csv)",
                retries,
            }
        };
        intervals
            .entry(index)
            .or_insert_with(|| RunStats::new(EventType::ALL.len()))
            .record(event.index(), row.node.unwrap_or(0), latency_ns, outcome);
        end = end.max(*at + Duration::from_nanos(latency_ns));
        let lane = dealing
            .deal(row.seq, row.target, *event, Phase::Measure)
            .lane;
        let lane = &mut lane_last_seq[lane];
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
    let intervals: Vec<(u64, RunStats)> = intervals.into_iter().collect();
    let elapsed = end.duration_since(start).unwrap_or_default();
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
        .filter(|(_, r)| !r.success && !matches!(r.event_type.as_str(), "read" | "read_order"))
        .map(|(_, r)| result_dir::FailedWriteRow {
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
