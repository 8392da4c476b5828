//! Client time against server time (`--trace-sample`): `traces.csv` holds, for each
//! traced operation, the service time hatshop measured and the server's own time of
//! it (Cassandra's coordinator duration from `system_traces.sessions`, MariaDB's
//! statement times from performance_schema); `server-statements.csv` holds the
//! server's totals per statement (PostgreSQL's pg_stat_statements). The rest (wire,
//! driver, queueing in the client) is the difference. The report's section sets them
//! side by side per event type, as the study's upper chart did.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

use super::loaded_run::{LoadedRun, read_rows};
use super::page::Page;
use super::svg::{self, Axis, Bars, escape};
use crate::db::StatementTime;
use crate::runner::TracedOp;

/// The traced operations, client time against server time.
pub const TRACES_CSV: &str = "traces.csv";
/// The server's totals per statement (PostgreSQL's pg_stat_statements).
pub const STATEMENTS_CSV: &str = "server-statements.csv";

/// One traced operation in traces.csv.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct TraceRow {
    pub seq: u64,
    pub event_type: String,
    /// Service time as hatshop measured it, µs.
    pub client_us: f64,
    /// The server's duration, µs: Cassandra, the longest of the operation's traced
    /// requests (an operation's requests are sent together); MariaDB, the sum of its
    /// statements' times (sent one after another). Empty when the server kept none.
    pub server_us: Option<f64>,
    /// Requests (Cassandra) or statements (MariaDB) traced for the operation.
    pub requests: usize,
}

/// The rows, given every trace id's duration in the order the operations list them.
pub fn rows(traced: &[TracedOp], durations: &[Option<f64>]) -> Vec<TraceRow> {
    let mut next = durations.iter();
    traced
        .iter()
        .map(|op| {
            let mine: Vec<Option<f64>> = next.by_ref().take(op.trace_ids.len()).copied().collect();
            let (server_us, requests) = match op.server {
                Some((us, statements)) => (Some(us), statements),
                None if mine.iter().all(Option::is_some) => {
                    (mine.iter().flatten().copied().reduce(f64::max), mine.len())
                }
                None => (None, mine.len()),
            };
            TraceRow {
                seq: op.seq,
                event_type: op.event_type.to_string(),
                client_us: op.client_ns as f64 / 1_000.0,
                server_us,
                requests,
            }
        })
        .collect()
}

/// One event type's client and server time.
#[derive(Default)]
struct Compared {
    /// Operations the server's time covers.
    ops: u64,
    client_mean: f64,
    server_mean: Option<f64>,
}

/// Per event type, from the traced operations: means of those with a server time.
fn from_traces(rows: &[TraceRow]) -> BTreeMap<String, Compared> {
    let mut sums: BTreeMap<&str, (u64, f64, u64, f64)> = BTreeMap::new();
    for r in rows {
        let e = sums.entry(&r.event_type).or_default();
        e.0 += 1;
        e.1 += r.client_us;
        if let Some(server) = r.server_us {
            e.2 += 1;
            e.3 += server;
        }
    }
    sums.into_iter()
        .map(|(event, (n, client, with_server, server))| {
            let compared = Compared {
                ops: n,
                client_mean: client / n as f64,
                server_mean: (with_server > 0).then(|| server / with_server as f64),
            };
            (event.to_string(), compared)
        })
        .collect()
}

/// Per event type, from the server's totals: its statements' time over the calls of
/// the one each operation sends once, against the run's mean service time.
fn from_statements(times: &[StatementTime], run: &LoadedRun) -> BTreeMap<String, Compared> {
    let mut by: BTreeMap<String, Compared> = BTreeMap::new();
    let mut totals: BTreeMap<&str, f64> = BTreeMap::new();
    for t in times.iter().filter(|t| !t.event_type.is_empty()) {
        *totals.entry(&t.event_type).or_default() += t.total_us;
        if t.once_per_op {
            by.entry(t.event_type.clone()).or_default().ops += t.calls;
        }
    }
    for (event, compared) in &mut by {
        compared.client_mean = run
            .summary
            .events
            .iter()
            .find(|e| &e.event_type == event)
            .map_or(f64::NAN, |e| e.mean_us);
        if compared.ops > 0 {
            compared.server_mean = Some(totals[event.as_str()] / compared.ops as f64);
        }
    }
    by
}

/// The client's and the server's time of the same operations (`--trace-sample`), from
/// traces.csv or the server's statement totals.
pub fn section(out: &mut Page, run: &LoadedRun) {
    let loaded = read_rows::<TraceRow>(&run.dir.join(TRACES_CSV)).and_then(|t| {
        let statements = read_rows::<StatementTime>(&run.dir.join(STATEMENTS_CSV))?;
        Ok((t, statements))
    });
    let (traces, statements) = match loaded {
        Ok((t, s)) if t.is_empty() && s.is_empty() => return,
        Ok(both) => both,
        Err(e) => {
            let _ = write!(
                out,
                "<h2>Client and server time</h2><p>{}</p>",
                escape(&format!("{e:#}"))
            );
            return;
        }
    };
    let explains = crate::db::store_declarations(&run.record.database.store.name)
        .and_then(|meta| meta.db_time)
        .map_or("", |time| time.explains);
    let by = if traces.is_empty() {
        from_statements(&statements, run)
    } else {
        from_traces(&traces)
    };
    out.push_str(&compared_table(&by, &traces, explains));
    out.push_str(&statements_table(&statements));
    let names: Vec<String> = by.keys().cloned().collect();
    let client_bars = by.values().map(|c| c.client_mean).collect();
    let server_bars = by.values().map(|c| c.server_mean.unwrap_or(0.0)).collect();
    out.figure(svg::bar_chart(
        "Mean time per event type: as the client measured it, and on the server",
        "event type",
        &names,
        &Axis::linear("µs"),
        &[
            Bars {
                name: "client (service)".into(),
                values: client_bars,
                whiskers: None,
                marked: Vec::new(),
            },
            Bars {
                name: "server".into(),
                values: server_bars,
                whiskers: None,
                marked: Vec::new(),
            },
        ],
    ));
}

/// Client against server mean per event type, with how to read it for this store.
fn compared_table(by: &BTreeMap<String, Compared>, traces: &[TraceRow], explains: &str) -> String {
    let mut out = String::from(
        "<h2>Client and server time</h2><table id=\"traces\"><tr><th>event</th><th>ops</th>\
         <th>client (service) mean</th><th>server mean</th><th>difference</th></tr>",
    );
    for (event, c) in by {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(event),
            c.ops,
            crate::numbers::format_us(c.client_mean),
            c.server_mean.map_or("-".into(), crate::numbers::format_us),
            c.server_mean
                .map_or("-".into(), |s| crate::numbers::format_us(c.client_mean - s)),
        );
    }
    let over = traces
        .iter()
        .filter(|t| t.server_us.is_some_and(|server| server > t.client_us))
        .count();
    let over = if over > 0 {
        format!(
            " {over} of {} sampled operations took the server longer than the client.",
            traces.len()
        )
    } else {
        String::new()
    };
    let _ = write!(
        out,
        "</table><p class=\"note\">Latencies in µs. {} The difference is the wire, the \
         driver and waiting on either side.{over}</p>",
        escape(explains)
    );
    out
}

/// The server's totals, statement by statement.
fn statements_table(times: &[StatementTime]) -> String {
    if times.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<table id=\"statements\"><tr><th>event</th><th>statement</th><th>calls</th>\
         <th>server mean</th><th>server total (ms)</th></tr>",
    );
    for t in times {
        let _ = write!(
            out,
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{:.1}</td></tr>",
            if t.event_type.is_empty() {
                "(transactions)"
            } else {
                &t.event_type
            },
            escape(&t.statement),
            t.calls,
            crate::numbers::format_us(t.total_us / t.calls.max(1) as f64),
            t.total_us / 1_000.0,
        );
    }
    out.push_str("</table>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_takes_the_longest_of_its_requests() {
        let traced = vec![
            TracedOp {
                seq: 1,
                event_type: "read_order",
                client_ns: 900_000,
                trace_ids: vec![1, 2],
                server: None,
            },
            TracedOp {
                seq: 2,
                event_type: "create_order",
                client_ns: 500_000,
                trace_ids: vec![3],
                server: None,
            },
            TracedOp {
                seq: 3,
                event_type: "update_items",
                client_ns: 700_000,
                trace_ids: vec![],
                server: Some((420.0, 5)),
            },
        ];
        let rows = rows(&traced, &[Some(300.0), Some(450.0), None]);
        assert_eq!(rows[0].server_us, Some(450.0));
        assert_eq!(rows[0].client_us, 900.0);
        assert_eq!(rows[0].requests, 2);
        assert_eq!(rows[1].server_us, None);
        assert_eq!((rows[2].server_us, rows[2].requests), (Some(420.0), 5));
    }
}
