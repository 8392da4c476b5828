//! Cassandra's own view of its load, beside latency: once a second, the thread pools of
//! every node of a Cassandra server hatshop started (`system_views.thread_pools`, no
//! nodetool or JMX): tasks active, pending (queued) and blocked, and tasks completed
//! per second, for the pools a request passes through and the background work that
//! competes with them (`CompactionExecutor`'s pending tasks are the compactions waiting
//! to run). Virtual tables are node-local, so each node is read on a session that
//! talks to it alone. Written as `thread-pools.csv`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::policies::host_filter::AllowListHostFilter;
use scylla::value::{CqlValue, Row};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::resources::{every_second, next_sample};
use crate::cluster::ServerRecord;

/// Cassandra's thread pools, one row per pool and sample.
pub const THREAD_POOLS_CSV: &str = "thread-pools.csv";

/// The pools sampled: requests in, reads, writes, flushes and compactions.
pub const POOLS: [&str; 5] = [
    "Native-Transport-Requests",
    "ReadStage",
    "MutationStage",
    "MemtableFlushWriter",
    "CompactionExecutor",
];

/// How long a node may take to accept the sampler's session, or to answer one read.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const READ_TIMEOUT: Duration = Duration::from_millis(900);

/// A row of `thread-pools.csv`: one pool of one node in one sample.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct PoolRow {
    /// Seconds from the start of the measured phase (negative: load or warm-up).
    pub at_s: f64,
    pub node: usize,
    pub pool: String,
    pub active: i64,
    pub pending: i64,
    pub blocked: i64,
    /// Tasks completed per second since the node's previous sample.
    pub completed_s: Option<f64>,
}

/// One node to read: its number and CQL address.
#[derive(Debug, Clone)]
pub struct Node {
    pub node: usize,
    pub address: SocketAddr,
}

/// The nodes of `server` whose pools can be read (Cassandra's), by CQL address.
pub fn nodes_of(server: &ServerRecord) -> Option<Vec<Node>> {
    if !server.kind.nodetool {
        return None;
    }
    let nodes = server
        .nodes
        .iter()
        .filter_map(|n| {
            let address = format!("{}:{}", n.host, n.port).parse().ok()?;
            Some(Node {
                node: n.node,
                address,
            })
        })
        .collect();
    Some(nodes)
}

/// Samples every node's pools until `over` turns true. A node that cannot be reached
/// at the start is left out (said in the returned notes); one that stops answering
/// has no rows while it is away.
pub async fn sample(
    nodes: Vec<Node>,
    mut over: watch::Receiver<bool>,
) -> (Vec<(SystemTime, PoolRow)>, Vec<String>) {
    let mut notes = Vec::new();
    let mut sessions = Vec::new();
    for node in nodes {
        match connect(node.address).await {
            Ok(session) => sessions.push((node.node, session, Vec::<(String, i64)>::new(), None)),
            Err(e) => notes.push(format!("node {}: {e}", node.node)),
        }
    }
    let mut rows = Vec::new();
    if sessions.is_empty() {
        return (rows, notes);
    }
    let mut tick = every_second();
    while next_sample(&mut tick, &mut over).await {
        for (node, session, completed_before, then) in &mut sessions {
            let read = tokio::time::timeout(READ_TIMEOUT, read_pools(session)).await;
            let now = SystemTime::now();
            let Ok(Some(pools)) = read else {
                *then = None;
                continue;
            };
            let wall = then.and_then(|t: SystemTime| now.duration_since(t).ok());
            for pool in &pools {
                let before = completed_before
                    .iter()
                    .find(|(name, _)| *name == pool.pool)
                    .map(|(_, n)| *n);
                let completed_s = match (before, wall) {
                    (Some(before), Some(wall)) if wall > Duration::ZERO => {
                        Some(pool.completed.saturating_sub(before) as f64 / wall.as_secs_f64())
                    }
                    _ => None,
                };
                rows.push((
                    now,
                    PoolRow {
                        node: *node,
                        pool: pool.pool.clone(),
                        active: pool.active,
                        pending: pool.pending,
                        blocked: pool.blocked,
                        completed_s,
                        ..PoolRow::default()
                    },
                ));
            }
            *completed_before = pools.into_iter().map(|p| (p.pool, p.completed)).collect();
            *then = Some(now);
        }
    }
    (rows, notes)
}

pub(super) async fn connect(address: SocketAddr) -> Result<Session, String> {
    let only = AllowListHostFilter::new([address]).map_err(|e| e.to_string())?;
    let builder = SessionBuilder::new()
        .known_node_addr(address)
        .host_filter(Arc::new(only))
        .connection_timeout(CONNECT_TIMEOUT);
    match tokio::time::timeout(CONNECT_TIMEOUT, builder.build()).await {
        Ok(Ok(session)) => Ok(session),
        Ok(Err(e)) => Err(format!("no session for system_views: {e}")),
        Err(_) => Err(format!(
            "no session for system_views within {} s",
            CONNECT_TIMEOUT.as_secs()
        )),
    }
}

/// One pool as read.
pub(super) struct Reading {
    pub(super) pool: String,
    pub(super) active: i64,
    pub(super) pending: i64,
    blocked: i64,
    completed: i64,
}

pub(super) async fn read_pools(session: &Session) -> Option<Vec<Reading>> {
    let result = session
        .query_unpaged(
            "SELECT name, active_tasks, pending_tasks, blocked_tasks, completed_tasks \
             FROM system_views.thread_pools",
            (),
        )
        .await
        .ok()?
        .into_rows_result()
        .ok()?;
    let mut found = Vec::new();
    for row in result.rows::<Row>().ok()? {
        let columns = row.ok()?.columns;
        let text = |i: usize| columns.get(i)?.as_ref()?.as_text().cloned();
        let number = |i: usize| match columns.get(i)?.as_ref()? {
            CqlValue::Int(n) => Some(i64::from(*n)),
            CqlValue::BigInt(n) => Some(*n),
            _ => None,
        };
        let Some(pool) = text(0).filter(|name| POOLS.contains(&name.as_str())) else {
            continue;
        };
        found.push(Reading {
            pool,
            active: number(1)?,
            pending: number(2)?,
            blocked: number(3)?,
            completed: number(4)?,
        });
    }
    Some(found)
}
