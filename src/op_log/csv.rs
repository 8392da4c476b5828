//! `hatshop export DIR --csv`: the op log as the plain CSV a spreadsheet opens, one row
//! per operation, times as RFC 3339 (UTC, microseconds) and latencies in microseconds.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use serde::Serialize;

use super::OpLog;

/// A row of the CSV; the header comes from the field names.
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
    /// The shard it came from, in a merged folder's log.
    #[serde(skip_serializing_if = "Option::is_none")]
    shard: Option<u32>,
}

/// Writes the op log of `run_dir` to `out` (named `target` in errors) as CSV; the rows
/// written, each of one of `runs` (the folder's run.json's).
pub fn export_csv(
    run_dir: &Path,
    runs: Vec<String>,
    out: &mut dyn Write,
    target: &str,
) -> Result<u64> {
    let cannot = || format!("cannot write {target}");
    let log = OpLog::open(run_dir)?.of_runs(runs);
    let shards = log.has_shards()?;
    let header = crate::files::csv_header(&OpRow {
        shard: shards.then_some(0),
        ..OpRow::default()
    });
    out.write_all(header.as_bytes()).with_context(cannot)?;
    let mut line = Vec::with_capacity(256);
    let mut timestamps = Rfc3339Micros::default();
    let read = log.for_each(|run, op| {
        line.clear();
        let at = op.sent_at();
        write_row(
            &mut line,
            &OpRow {
                run_id: &run.run_id,
                database: &run.database,
                event_type: op.event_type,
                seq: op.seq,
                target: op.target,
                timestamp: timestamps.format(at),
                latency_us: op.latency_us(),
                success: op.success(),
                error_kind: op.error_kind(),
                error: op
                    .error
                    .as_ref()
                    .map_or("", |(_, message)| message.as_str()),
                node: (op.node > 0).then_some(op.node),
                attempts: op.attempts,
                error_code: op.error_code.as_deref().unwrap_or(""),
                intended_start_ns: op.intended_start_ns,
                queue_us: op.queue_ns.map(|ns| ns as f64 / 1_000.0),
                shard: op.shard,
            },
        );
        out.write_all(&line).with_context(cannot)?;
        Ok(())
    })?;
    out.flush().with_context(cannot)?;
    Ok(read.rows)
}

/// One row, byte for byte as the csv crate writes `row` (its quoting too),
/// formatted by hand: the csv serializer took about 45 % of the time (perf).
fn write_row(out: &mut Vec<u8>, row: &OpRow) {
    let mut int = itoa::Buffer::new();
    let mut float = ryu::Buffer::new();
    words(out, row.run_id);
    words(out, row.database);
    text(out, row.event_type);
    text(out, int.format(row.seq));
    text(out, int.format(row.target));
    text(out, row.timestamp);
    text(out, float.format(row.latency_us));
    text(out, if row.success { "true" } else { "false" });
    words(out, row.error_kind);
    words(out, row.error);
    text(out, row.node.map_or("", |n| int.format(n)));
    text(out, int.format(row.attempts));
    words(out, row.error_code);
    text(out, row.intended_start_ns.map_or("", |ns| int.format(ns)));
    text(out, row.queue_us.map_or("", |us| float.format(us)));
    if let Some(shard) = row.shard {
        text(out, int.format(shard));
    }
    // Every field above ends with a comma; the row ends with a newline instead.
    *out.last_mut().expect("fields were written") = b'\n';
}

/// A text field a server or a user wrote (an error message, a folder's name): one
/// that a spreadsheet would take for a formula (`=`, `+`, `-`, `@`, a tab or a
/// carriage return first) is kept as text by a `'` in front, as OWASP advises.
fn words(out: &mut Vec<u8>, field: &str) {
    if field.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        text(out, &format!("'{field}"));
    } else {
        text(out, field);
    }
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

/// RFC 3339 with microseconds, formatting the date and time only once per second:
/// consecutive rows share their second.
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
                shard: Some(3),
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
    fn text_a_spreadsheet_would_run_is_kept_as_text() {
        let row = OpRow {
            run_id: "=1+2",
            database: "@SUM(A1)",
            error: "-ERR wrong",
            error_code: "+1",
            ..OpRow::default()
        };
        let mut ours = Vec::new();
        write_row(&mut ours, &row);
        let line = String::from_utf8(ours).unwrap();
        assert!(
            line.starts_with("'=1+2,'@SUM(A1),") && line.contains(",'-ERR wrong,"),
            "{line}"
        );
        assert!(line.contains(",'+1,"), "{line}");
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
