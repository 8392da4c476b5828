//! `ops.csv`: one row per measured operation, written by its own thread so that no
//! file I/O happens on a lane. Rows arrive in batches over a bounded channel: when the
//! disk is slow the lanes wait (outside their timed windows) rather than drop a row.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::Path;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use serde::Serialize;
use tokio::sync::mpsc;

use crate::stats::OpBatch;

/// Batches in flight before lanes wait for the writer.
pub const CHANNEL_BATCHES: usize = 32;
/// Bytes the writer buffers before the file sees them.
pub const BUFFER: usize = 1 << 20;
/// Buffered bytes past which the writer hands its rows to the file even while more
/// batches wait, so that lanes waiting for room in the log go on.
const WRITE_AT: usize = 256 * 1024;

/// A row of `ops.csv`; the header comes from the field names.
#[derive(Serialize, Default)]
struct OpRow<'a> {
    run_id: &'a str,
    database: &'a str,
    event_type: &'a str,
    seq: u64,
    /// The order id, or the key index of a key-value event.
    target: u64,
    /// When the request was sent, after any wait for a pooled connection (RFC 3339,
    /// UTC, microseconds): `timestamp` + `latency_us` is when the answer came.
    timestamp: &'a str,
    /// Microseconds, to the nanosecond.
    latency_us: f64,
    success: bool,
    error_kind: &'a str,
    error: &'a str,
    /// The node that served it, in the order of the URL's hosts; empty: not known.
    node: Option<u16>,
    /// Calls made (more than 1 only with --retries; the latency spans them all).
    attempts: u32,
    /// The server's code for the failure (`1213`, `40001`, `WriteTimeout`), if it gave one.
    error_code: &'a str,
    /// Open loop (`--rate`): when it was due to be sent, ns since the Unix epoch; the
    /// response time is `timestamp` + `latency_us` − this. Empty in a closed loop.
    intended_start_ns: Option<u64>,
    /// Microseconds spent waiting for a pooled connection before the request could be
    /// sent: not in `latency_us`, which is service time. Empty for stores without a pool.
    queue_us: Option<f64>,
}

/// The sending side handed to lanes.
pub type OpLogSender = mpsc::Sender<OpBatch>;

/// The writer thread; `finish` waits for it and returns the number of rows written.
pub struct OpLogWriter {
    handle: JoinHandle<Result<u64>>,
}

impl OpLogWriter {
    /// Creates `path` and starts the thread. `epoch` is the wall time of `start_ns = 0`.
    pub fn start(
        path: &Path,
        run_id: &str,
        database: &str,
        epoch: SystemTime,
    ) -> Result<(OpLogWriter, OpLogSender)> {
        let file =
            File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
        let (tx, mut rx) = mpsc::channel::<OpBatch>(CHANNEL_BATCHES);
        let run_id = run_id.to_string();
        let database = database.to_string();
        let display_path = path.display().to_string();
        let handle = std::thread::Builder::new()
            .name("op-log".into())
            .spawn(move || -> Result<u64> {
                let mut out = BufWriter::with_capacity(BUFFER, file);
                // The header is written first, so that a run of no operations still
                // leaves a CSV that tools can read.
                out.write_all(crate::files::csv_header(&OpRow::default()).as_bytes())
                    .with_context(|| format!("cannot write {display_path}"))?;
                let mut line = Vec::with_capacity(256);
                let mut timestamps = Rfc3339Micros::default();
                let mut rows = 0u64;
                // Permits of batches whose rows are buffered, given back once written.
                let mut buffered = Vec::new();
                while let Some(batch) = rx.blocking_recv() {
                    let idle = rx.is_empty();
                    for record in &batch.records {
                        let at = epoch + Duration::from_nanos(record.start_ns);
                        let (error_kind, error) = match &record.error {
                            Some((kind, message)) => (*kind, message.as_str()),
                            None => ("", ""),
                        };
                        line.clear();
                        write_row(
                            &mut line,
                            &OpRow {
                                run_id: &run_id,
                                database: &database,
                                event_type: record.event_type,
                                seq: record.seq,
                                target: record.target,
                                timestamp: timestamps.format(at),
                                latency_us: record.latency_ns as f64 / 1_000.0,
                                success: record.error.is_none(),
                                error_kind,
                                error,
                                node: (record.node > 0).then_some(record.node),
                                attempts: record.attempts,
                                error_code: record.error_code.as_deref().unwrap_or(""),
                                intended_start_ns: record.due_ns.map(|due| unix_ns(epoch, due)),
                                queue_us: record.queued_ns.map(|ns| ns as f64 / 1_000.0),
                            },
                        );
                        out.write_all(&line)
                            .with_context(|| format!("cannot write {display_path}"))?;
                        rows += 1;
                    }
                    buffered.push(batch.unwritten);
                    // Caught up, or enough to write: the rows go to the file (where a
                    // killed process leaves them), and their lanes may send more.
                    if idle || out.buffer().len() >= WRITE_AT {
                        out.flush()
                            .with_context(|| format!("cannot write {display_path}"))?;
                        buffered.clear();
                    }
                }
                out.flush()
                    .with_context(|| format!("cannot write {display_path}"))?;
                Ok(rows)
            })
            .context("cannot start the op log thread")?;
        Ok((OpLogWriter { handle }, tx))
    }

    /// Waits until every sender is dropped and every row is on disk.
    pub fn finish(self) -> Result<u64> {
        self.handle
            .join()
            .map_err(|_| anyhow::anyhow!("the op log thread panicked"))?
    }
}

/// One row of ops.csv, byte for byte as the csv crate writes `row` (its quoting too),
/// formatted by hand: the csv serializer took about 45 % of the op log thread's CPU
/// (perf, `null://`).
fn write_row(out: &mut Vec<u8>, row: &OpRow) {
    let mut int = itoa::Buffer::new();
    let mut float = ryu::Buffer::new();
    text(out, row.run_id);
    text(out, row.database);
    text(out, row.event_type);
    text(out, int.format(row.seq));
    text(out, int.format(row.target));
    text(out, row.timestamp);
    text(out, float.format(row.latency_us));
    text(out, if row.success { "true" } else { "false" });
    text(out, row.error_kind);
    text(out, row.error);
    text(out, row.node.map_or("", |n| int.format(n)));
    text(out, int.format(row.attempts));
    text(out, row.error_code);
    text(out, row.intended_start_ns.map_or("", |ns| int.format(ns)));
    text(out, row.queue_us.map_or("", |us| float.format(us)));
    // Every field above ends with a comma; the row ends with a newline instead.
    *out.last_mut().expect("fields were written") = b'\n';
}

/// A field and its comma; quoted, with quotes doubled, where it holds a comma, a
/// quote or a line break.
fn text(out: &mut Vec<u8>, field: &str) {
    if field
        .bytes()
        .any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
    {
        out.push(b'"');
        for b in field.bytes() {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(field.as_bytes());
    }
    out.push(b',');
}

/// `offset_ns` after `epoch`, in ns since the Unix epoch.
fn unix_ns(epoch: SystemTime, offset_ns: u64) -> u64 {
    (epoch + Duration::from_nanos(offset_ns))
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// RFC 3339 with microseconds, formatting the date and time only once per second:
/// consecutive rows share their second, and the op log thread has a budget too.
#[derive(Default)]
struct Rfc3339Micros {
    second: u64,
    text: String,
}

impl Rfc3339Micros {
    fn format(&mut self, at: SystemTime) -> &str {
        let since_epoch = at
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let second = since_epoch.as_secs();
        if second != self.second || self.text.is_empty() {
            self.second = second;
            self.text.clear();
            let whole = SystemTime::UNIX_EPOCH + Duration::from_secs(second);
            // "2026-11-21T22:46:23Z" → keep "2026-11-21T22:46:23."
            let _ = write!(self.text, "{}", humantime::format_rfc3339_seconds(whole));
            self.text.pop();
            self.text.push('.');
        }
        self.text.truncate(20);
        let _ = write!(self.text, "{:06}Z", since_epoch.subsec_micros());
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_written_as_the_csv_crate_writes_them() {
        let rows = [
            OpRow::default(),
            OpRow {
                run_id: "20261122-220409-cassandra-race-cql-read",
                database: "cassandra",
                event_type: "read",
                seq: 300_094,
                target: 11_743,
                timestamp: "2026-11-22T22:04:15.272176Z",
                latency_us: 3938.838,
                success: true,
                node: Some(1),
                attempts: 1,
                ..OpRow::default()
            },
            OpRow {
                run_id: "a,b",
                database: "mysql",
                event_type: "update_order",
                seq: u64::MAX,
                latency_us: 0.001,
                error_kind: "conflict",
                error: "Deadlock found; \"try\" restarting,\r\nagain",
                node: Some(u16::MAX),
                attempts: 3,
                error_code: "1213",
                intended_start_ns: Some(1_763_000_000_000_000_000),
                queue_us: Some(1e-3),
                ..OpRow::default()
            },
            OpRow {
                latency_us: 123_456_789.5,
                queue_us: Some(0.0),
                error: "\"",
                ..OpRow::default()
            },
        ];
        for row in &rows {
            let mut csv = csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(Vec::new());
            csv.serialize(row).unwrap();
            let expected = csv.into_inner().unwrap();
            let mut ours = Vec::new();
            write_row(&mut ours, row);
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                String::from_utf8(expected).unwrap()
            );
        }
    }

    #[test]
    fn timestamps_match_humantime() {
        let mut formatter = Rfc3339Micros::default();
        for ns in [0u64, 999, 1_000_000_123, 1_000_999_999, 86_400_000_000_000] {
            let at = SystemTime::UNIX_EPOCH + Duration::from_nanos(1_763_000_000_000_000_000 + ns);
            assert_eq!(
                formatter.format(at),
                humantime::format_rfc3339_micros(at).to_string()
            );
        }
    }
}
