//! A server at rest before a cell is measured: Cassandra's nodes with no compaction or
//! flush running or waiting (`system_views.thread_pools`), so that a cell does not pay
//! for the background work the one before it left. Read five times a second, up to a
//! deadline; a server that stays busy is said, and the cell runs on what it finds. A
//! run waits for it the same way between its load and its measured phase.

use std::time::{Duration, Instant};

use super::thread_pools::{self, Node};

/// How often the nodes are read: a flush a load leaves runs for about a second.
const POLL: Duration = Duration::from_millis(200);
/// How long one node may take to answer one read.
const READ_TIMEOUT: Duration = Duration::from_secs(2);
/// The pools whose work a cell would share the nodes with.
const BACKGROUND: [&str; 2] = ["CompactionExecutor", "MemtableFlushWriter"];

/// What the wait for a settled server found.
#[derive(Debug, Clone, PartialEq)]
pub enum Settled {
    /// Every node was at rest after this long.
    Quiet(Duration),
    /// Some node was still busy at the deadline: which, and with what.
    Busy(String),
    /// No node could be read (said why).
    Unknown(String),
}

/// Waits until no node of `nodes` has background work running or waiting, at most
/// `deadline`; Ctrl-C ends the wait as a deadline would.
pub async fn settle(nodes: Vec<Node>, deadline: Duration) -> Settled {
    let began = Instant::now();
    let mut sessions = Vec::new();
    for node in nodes {
        match thread_pools::connect(node.address).await {
            Ok(session) => sessions.push((node.node, session)),
            Err(e) => return Settled::Unknown(format!("node {}: {e}", node.node)),
        }
    }
    loop {
        let mut busy = Vec::new();
        for (node, session) in &sessions {
            let read = tokio::time::timeout(READ_TIMEOUT, thread_pools::read_pools(session));
            let Ok(Some(pools)) = read.await else {
                busy.push(format!("node {node} did not answer"));
                continue;
            };
            for pool in pools
                .iter()
                .filter(|p| BACKGROUND.contains(&p.pool.as_str()))
            {
                if pool.active + pool.pending > 0 {
                    busy.push(format!(
                        "node {node}: {} {} running, {} waiting",
                        pool.pool, pool.active, pool.pending
                    ));
                }
            }
        }
        if busy.is_empty() {
            return Settled::Quiet(began.elapsed());
        }
        if began.elapsed() >= deadline || crate::interrupt::requested() {
            return Settled::Busy(busy.join("; "));
        }
        tokio::time::sleep(POLL).await;
    }
}
