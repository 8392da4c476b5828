//! Client time against server time (`--trace-sample`): `traces.csv` holds, for each
//! traced operation, the service time hatshop measured and the coordinator's own
//! duration of its requests (Cassandra's `system_traces.sessions`); the rest (wire,
//! driver, queueing in the client) is the difference. The report's section sets them
//! side by side per event type, as the seed's upper chart did.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::load::LoadedRun;
use super::svg::{self, Axis, Bars, escape};
use crate::runner::TracedOp;

pub const TRACES_CSV: &str = "traces.csv";

#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct TraceRow {
    pub seq: u64,
    pub event_type: String,
    /// Service time as hatshop measured it, µs.
    pub client_us: f64,
    /// The server's duration, µs: the longest of the operation's traced requests (an
    /// operation's requests are sent together); empty when the server kept none.
    pub server_us: Option<f64>,
    /// Requests traced for the operation.
    pub requests: usize,
}

/// The rows, given every trace id's duration in the order the operations list them.
pub fn rows(traced: &[TracedOp], durations: &[Option<f64>]) -> Vec<TraceRow> {
    let mut next = durations.iter();
    traced
        .iter()
        .map(|op| {
            let mine: Vec<Option<f64>> = next.by_ref().take(op.trace_ids.len()).copied().collect();
            let server_us = if mine.iter().all(Option::is_some) {
                mine.iter().flatten().copied().reduce(f64::max)
            } else {
                None
            };
            TraceRow {
                seq: op.seq,
                event_type: op.event_type.to_string(),
                client_us: op.client_ns as f64 / 1_000.0,
                server_us,
                requests: op.trace_ids.len(),
            }
        })
        .collect()
}

pub fn read(dir: &Path) -> Result<Vec<TraceRow>> {
    let path = dir.join(TRACES_CSV);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut reader =
        csv::Reader::from_path(&path).with_context(|| format!("cannot read {}", path.display()))?;
    reader
        .deserialize()
        .collect::<Result<Vec<TraceRow>, _>>()
        .with_context(|| format!("{} is not valid", path.display()))
}

pub fn section(run: &LoadedRun) -> String {
    let rows = match read(&run.dir) {
        Ok(rows) if rows.is_empty() => return String::new(),
        Ok(rows) => rows,
        Err(e) => {
            return format!(
                "<h2>Client and server time</h2><p>{}</p>",
                escape(&format!("{e:#}"))
            );
        }
    };
    // Per event type: traced ops, mean client time, mean server time (of those with one).
    let mut by: BTreeMap<&str, (u64, f64, u64, f64)> = BTreeMap::new();
    for r in &rows {
        let e = by.entry(&r.event_type).or_default();
        e.0 += 1;
        e.1 += r.client_us;
        if let Some(server) = r.server_us {
            e.2 += 1;
            e.3 += server;
        }
    }
    let mut out = String::from(
        "<h2>Client and server time</h2><table id=\"traces\"><tr><th>event</th><th>traced</th>\
         <th>client (service) mean</th><th>server mean</th><th>difference</th></tr>",
    );
    let mut client_bars = Vec::new();
    let mut server_bars = Vec::new();
    for (event, (n, client, with_server, server)) in &by {
        let client_mean = client / *n as f64;
        let server_mean = (*with_server > 0).then(|| server / *with_server as f64);
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{n}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(event),
            super::table::format_us(client_mean),
            server_mean.map_or("-".into(), super::table::format_us),
            server_mean.map_or("-".into(), |s| super::table::format_us(client_mean - s)),
        );
        client_bars.push(client_mean);
        server_bars.push(server_mean.unwrap_or(0.0));
    }
    out.push_str(
        "</table><p class=\"note\">Latencies in µs. Client: the service time hatshop measured \
         (sent → answered). Server: the coordinator's own duration from Cassandra's \
         system_traces.sessions (the longest of the operation's requests, which are sent \
         together). The difference is the wire, the driver and waiting on either side. Only \
         the sampled operations were traced; the others ran untraced.</p>",
    );
    let names: Vec<String> = by.keys().map(|k| k.to_string()).collect();
    out.push_str(&svg::bar_chart(
        "Mean time per event type: as the client measured it, and on the server",
        "event type",
        &names,
        &Axis::linear("µs"),
        &[
            Bars {
                name: "client (service)".into(),
                values: client_bars,
                whiskers: None,
            },
            Bars {
                name: "server".into(),
                values: server_bars,
                whiskers: None,
            },
        ],
    ));
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
            },
            TracedOp {
                seq: 2,
                event_type: "create_order",
                client_ns: 500_000,
                trace_ids: vec![3],
            },
        ];
        let rows = rows(&traced, &[Some(300.0), Some(450.0), None]);
        assert_eq!(rows[0].server_us, Some(450.0));
        assert_eq!(rows[0].client_us, 900.0);
        assert_eq!(rows[0].requests, 2);
        assert_eq!(rows[1].server_us, None);
    }
}
