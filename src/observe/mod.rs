//! What the servers did while hatshop measured: their CPU, memory, disk and network
//! (sampled from /proc), and Cassandra's thread pools (from `system_views`), GC pauses
//! (from its GC log) and compactions (from its system.log), on the run's time axis. Only servers hatshop started can be watched this way (their pids and log
//! folders are recorded); the client is always watched.

pub mod compactions;
pub mod gc_log;
pub mod resources;
pub mod settle;
pub mod thread_pools;

use std::path::Path;
use std::time::SystemTime;

use anyhow::Result;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::cluster::ServerRecord;
use crate::files::write_csv;
use compactions::Compaction;
use gc_log::GcPause;
use resources::{MetricsRow, Watched};

/// The servers' CPU, memory and disk, one row per sample.
pub const SERVER_METRICS_CSV: &str = "server-metrics.csv";
/// The servers' garbage-collection pauses, read from their GC logs.
pub const GC_CSV: &str = "gc.csv";
/// Cassandra's compactions, read from its log.
pub const COMPACTIONS_CSV: &str = "compactions.csv";

type PoolSamples = (Vec<(SystemTime, thread_pools::PoolRow)>, Vec<String>);

/// The samplers of a run, and the server they watch.
pub struct Observer {
    server: Option<ServerRecord>,
    sampler: JoinHandle<Vec<(SystemTime, MetricsRow)>>,
    pools: Option<JoinHandle<PoolSamples>>,
}

impl Observer {
    /// Starts sampling the client and every node of `server` until `over` turns true.
    pub fn start(server: Option<ServerRecord>, over: watch::Receiver<bool>) -> Observer {
        let mut watched = vec![Watched {
            node: 0,
            pid: std::process::id(),
        }];
        if let Some(server) = &server {
            watched.extend(server.nodes.iter().map(|n| Watched {
                node: n.node,
                pid: n.pid,
            }));
        }
        let pools = server
            .as_ref()
            .and_then(thread_pools::nodes_of)
            .map(|nodes| tokio::spawn(thread_pools::sample(nodes, over.clone())));
        Observer {
            server,
            sampler: tokio::spawn(resources::sample(watched, over)),
            pools,
        }
    }

    /// Writes server-metrics.csv and, for Cassandra, gc.csv (the pauses between
    /// `run_start` and now); what the GC log gave, for run.json.
    pub async fn finish(
        self,
        dir: &Path,
        run_start: SystemTime,
        measure_start: SystemTime,
    ) -> Result<Option<String>> {
        let rows = self.sampler.await.unwrap_or_default();
        write_csv(
            &dir.join(SERVER_METRICS_CSV),
            &resources::on_axis(rows, measure_start),
        )?;
        if let Some(pools) = self.pools {
            let (rows, notes) = pools.await.unwrap_or_default();
            for note in notes {
                crate::console::note!("thread pools not sampled: {note}");
            }
            let rows: Vec<thread_pools::PoolRow> = rows
                .into_iter()
                .map(|(at, mut row)| {
                    row.at_s = resources::seconds_between(measure_start, at);
                    row
                })
                .collect();
            write_csv(&dir.join(thread_pools::THREAD_POOLS_CSV), &rows)?;
        }
        let Some(server) = self.server.filter(|s| s.kind.nodetool) else {
            return Ok(None);
        };
        let now = SystemTime::now();
        write_compactions(dir, &server, run_start, now, measure_start)?;
        let mut pauses: Vec<GcPause> = Vec::new();
        for node in &server.nodes {
            let logs = node.dir.join("logs");
            match node_pauses(&logs) {
                Ok(found) => pauses.extend(
                    found
                        .into_iter()
                        .filter(|p| p.ended >= run_start && p.began() <= now)
                        .map(|p| GcPause {
                            node: node.node,
                            began_at: humantime::format_rfc3339_millis(p.began()).to_string(),
                            at_s: resources::seconds_between(measure_start, p.began()),
                            kind: p.kind.to_string(),
                            cause: p.cause,
                            pause_ms: p.pause_ms,
                            heap_before_mb: p.heap_before_mb,
                            heap_after_mb: p.heap_after_mb,
                        }),
                ),
                Err(e) => {
                    return Ok(Some(format!(
                        "cannot read the GC log of node {}: {e}",
                        node.node
                    )));
                }
            }
        }
        pauses.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
        write_csv(&dir.join(GC_CSV), &pauses)?;
        let total_ms = pauses.iter().fold(0.0, |all, p| all + p.pause_ms);
        Ok(Some(format!(
            "{} pause{} on {} node{} during the run, {total_ms:.0} ms in all (gc.csv)",
            pauses.len(),
            if pauses.len() == 1 { "" } else { "s" },
            server.nodes.len(),
            if server.nodes.len() == 1 { "" } else { "s" }
        )))
    }
}

/// compactions.csv: the compactions of every node that overlapped the run. A log that
/// cannot be read is said, and the file left out (no file: not known).
fn write_compactions(
    dir: &Path,
    server: &ServerRecord,
    run_start: SystemTime,
    now: SystemTime,
    measure_start: SystemTime,
) -> Result<()> {
    let mut found: Vec<Compaction> = Vec::new();
    for node in &server.nodes {
        let logs = node.dir.join("logs");
        let parsed = match node_compactions(&logs) {
            Ok(parsed) => parsed,
            Err(e) => {
                crate::console::note!("compactions of node {} not read: {e}", node.node);
                return Ok(());
            }
        };
        found.extend(
            parsed
                .into_iter()
                .filter(|c| c.ended >= run_start && c.began() <= now)
                .map(|c| Compaction {
                    node: node.node,
                    began_at: humantime::format_rfc3339_millis(c.began()).to_string(),
                    at_s: resources::seconds_between(measure_start, c.began()),
                    took_ms: c.took_ms,
                    keyspace: c.keyspace,
                    table: c.table,
                    sstables: c.sstables,
                }),
        );
    }
    found.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    write_csv(&dir.join(COMPACTIONS_CSV), &found)
}

/// Every compaction in a node's `system.log` files.
fn node_compactions(logs: &Path) -> Result<Vec<compactions::ParsedCompaction>, String> {
    let entries = std::fs::read_dir(logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // system.log, and system.previous.log of the start before.
        if !(name.starts_with("system") && name.ends_with(".log")) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path())
            .map_err(|e| format!("{}: {e}", entry.path().display()))?;
        found.extend(compactions::parse(&text).map_err(|e| format!("{name}: {e}"))?);
    }
    Ok(found)
}

/// Every pause in a node's GC logs (`gc.log` and its rotations), in time order.
fn node_pauses(logs: &Path) -> Result<Vec<gc_log::ParsedPause>, String> {
    let entries = std::fs::read_dir(logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let mut pauses = Vec::new();
    let mut found = false;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("gc.log") {
            continue;
        }
        found = true;
        let text = std::fs::read_to_string(entry.path())
            .map_err(|e| format!("{}: {e}", entry.path().display()))?;
        pauses.extend(gc_log::parse(&text).map_err(|e| format!("{name}: {e}"))?);
    }
    if !found {
        return Err(format!("no gc.log in {}", logs.display()));
    }
    pauses.sort_by_key(|p| p.ended);
    Ok(pauses)
}
