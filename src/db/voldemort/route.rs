//! Client-side routing as upstream's Java client does it: a read goes to the first
//! `required-reads` replicas of the key in parallel, and to the next one for each that
//! fails; a write goes to the master first (the first replica that answers; the clock
//! is incremented with its node id), then to the other replicas in parallel, and
//! returns once `required-writes` nodes hold it. Replicas still answering then finish
//! in the background, so their connections stay usable and the caller's time is the
//! quorum's, as with the Java client; the run waits for them before it ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::sync::Notify;

use super::clock::VectorClock;
use super::conn::{NodeConns, NodeError};
use super::proto::{self, INSUFFICIENT_NODES, OBSOLETE_VERSION, Op, Reply, STORE_NOT_FOUND};
use super::ring::{Quorums, Ring};
use crate::db::{DbError, ErrorKind};

/// The nodes of one store, and how a request reaches its replicas.
pub struct Cluster {
    pub ring: Ring,
    pub quorums: Quorums,
    pub nodes: Vec<Arc<NodeConns>>,
    pub store: String,
    /// Replica requests still running after their call returned.
    pub background: Arc<Background>,
}

/// A count of background requests, and a wake-up when it drops to zero.
#[derive(Default)]
pub struct Background {
    running: AtomicUsize,
    idle: Notify,
}

impl Background {
    /// Until no background request runs.
    pub async fn settled(&self) {
        loop {
            let idle = self.idle.notified();
            if self.running.load(Ordering::Acquire) == 0 {
                return;
            }
            idle.await;
        }
    }
}

impl Cluster {
    /// The key's replicas, master first; nodes banned after a failure go last.
    fn replicas(&self, key: &[u8]) -> Vec<usize> {
        let mut replicas = self.ring.route(key);
        replicas.sort_by_key(|&n| self.nodes[n].banned());
        replicas
    }

    /// Replies from `required-reads` replicas.
    pub async fn read(&self, op: Op, key: &[u8]) -> Result<Vec<Reply>, DbError> {
        let replicas = self.replicas(key);
        let need = self.quorums.reads;
        let request = proto::request(op, &self.store, key, None);
        let call = |n: usize| self.nodes[n].call(op, key, &request);
        let mut pending: FuturesUnordered<_> =
            replicas.iter().take(need).map(|&n| call(n)).collect();
        let mut next = need;
        let mut replies = Vec::with_capacity(need);
        let mut failures = Vec::new();
        while let Some(outcome) = pending.next().await {
            match outcome {
                Ok(reply) => {
                    replies.push(reply);
                    if replies.len() == need {
                        return Ok(replies);
                    }
                }
                Err(e) => {
                    failures.push(e);
                    if let Some(&n) = replicas.get(next) {
                        pending.push(call(n));
                        next += 1;
                    }
                }
            }
        }
        Err(short_of("reads", need, replies.len(), &failures))
    }

    /// Writes `value` over every version whose clocks `base` merges: the master
    /// increments it.
    pub async fn put(&self, key: &[u8], value: &[u8], base: &VectorClock) -> Result<(), DbError> {
        let replicas = self.replicas(key);
        let need = self.quorums.writes;
        let mut failures = Vec::new();
        for (i, &master) in replicas.iter().enumerate() {
            let node = &self.nodes[master];
            let clock = base.incremented(node.id, now_ms());
            let request: Arc<[u8]> =
                proto::request(Op::Put, &self.store, key, Some((value, &clock))).into();
            match node.call(Op::Put, key, &request).await {
                Ok(_) => {
                    let others = replicas.iter().enumerate().filter(|&(j, _)| j != i);
                    let calls = others.map(|(_, &n)| self.send(n, Op::Put, key, request.clone()));
                    // The master is one of the `need`.
                    return gather(calls.collect(), need - 1, &self.background)
                        .await
                        .map(|_| ())
                        .map_err(|(written, failures)| {
                            short_of("writes", need, written + 1, &failures)
                        });
                }
                Err(NodeError::Server(e)) if e.code == OBSOLETE_VERSION => {
                    return Err(DbError::new(
                        ErrorKind::Conflict,
                        format!(
                            "obsolete version: another write to this key came first ({})",
                            e.message
                        ),
                    ));
                }
                Err(e) => failures.push(e),
            }
        }
        Err(short_of("writes", need, 0, &failures))
    }

    /// Deletes the versions `clock` covers on every replica; whether any held one.
    pub async fn delete(&self, key: &[u8], clock: &VectorClock) -> Result<bool, DbError> {
        let request: Arc<[u8]> =
            proto::request(Op::Delete, &self.store, key, Some((&[], clock))).into();
        let calls = self
            .replicas(key)
            .into_iter()
            .map(|n| self.send(n, Op::Delete, key, request.clone()))
            .collect();
        gather(calls, self.quorums.writes, &self.background)
            .await
            .map_err(|(written, failures)| {
                short_of("writes", self.quorums.writes, written, &failures)
            })
    }

    /// One request to node `n`, owning what it needs, so it may outlive the caller.
    fn send(
        &self,
        n: usize,
        op: Op,
        key: &[u8],
        request: Arc<[u8]>,
    ) -> impl Future<Output = Result<Reply, NodeError>> + Send + 'static {
        let node = self.nodes[n].clone();
        let key = key.to_vec();
        async move { node.call(op, &key, &request).await }
    }
}

/// Waits for `need` of `calls` to succeed, then leaves the rest to finish in the
/// background; whether a successful one deleted something. On failure: how many
/// succeeded, and why the others did not.
async fn gather<F>(
    mut calls: FuturesUnordered<F>,
    need: usize,
    background: &Arc<Background>,
) -> Result<bool, (usize, Vec<NodeError>)>
where
    F: Future<Output = Result<Reply, NodeError>> + Send + 'static,
{
    let (mut done, mut deleted) = (0, false);
    let mut failures = Vec::new();
    while done < need {
        match calls.next().await {
            Some(Ok(reply)) => {
                deleted |= reply.deleted;
                done += 1;
            }
            // A replica that already holds a later version (a later write reached it
            // first) supersedes this one, as if written and then overwritten:
            // upstream's client counts it as done too.
            Some(Err(NodeError::Server(e))) if e.code == OBSOLETE_VERSION => done += 1,
            Some(Err(e)) => failures.push(e),
            None => return Err((done, failures)),
        }
    }
    if !calls.is_empty() {
        background.running.fetch_add(1, Ordering::AcqRel);
        let background = background.clone();
        tokio::spawn(async move {
            while calls.next().await.is_some() {}
            if background.running.fetch_sub(1, Ordering::AcqRel) == 1 {
                background.idle.notify_waiters();
            }
        });
    }
    Ok(deleted)
}

/// The error of a quorum not reached: `got` of `need` succeeded. A write that may
/// have landed somewhere (a node took it, or broke or went quiet mid-request) has an
/// unknown outcome; one that reached no node was refused.
fn short_of(what: &str, need: usize, got: usize, failures: &[NodeError]) -> DbError {
    let causes: Vec<String> = failures.iter().map(ToString::to_string).collect();
    let message = format!(
        "{need} {what} required, but only {got} succeeded: {}",
        if causes.is_empty() {
            "too few replicas".to_string()
        } else {
            causes.join("; ")
        }
    );
    let server_kind = failures.iter().find_map(|f| match f {
        NodeError::Server(e) if e.code == STORE_NOT_FOUND => Some(ErrorKind::Other),
        NodeError::Server(e) if e.code == INSUFFICIENT_NODES => Some(ErrorKind::Unavailable),
        _ => None,
    });
    let timed_out = failures.iter().any(|f| matches!(f, NodeError::Timeout));
    let reached = got > 0 || failures.iter().any(|f| !matches!(f, NodeError::Refused(_)));
    let kind = match server_kind {
        Some(kind) => kind,
        None if timed_out && (what == "reads" || reached) => ErrorKind::Timeout,
        None if what == "writes" && reached => ErrorKind::Failure,
        None => ErrorKind::Unavailable,
    };
    DbError::new(kind, message)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
