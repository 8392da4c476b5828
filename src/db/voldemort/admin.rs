//! The admin protocol (`ad1`, on each node's admin port), for what the client protocol
//! cannot do: empty a store (setup) and list the keys a node holds (verify).

use std::time::Duration;

use super::conn::{self, NodeConns, NodeError};
use super::proto::{self, Fetched};
use crate::db::{DbError, ErrorKind};

fn db_error(node: &NodeConns, e: NodeError) -> DbError {
    let kind = match e {
        NodeError::Timeout => ErrorKind::Timeout,
        NodeError::Server(_) => ErrorKind::Other,
        NodeError::Refused(_) | NodeError::Io(_) => ErrorKind::Connection,
    };
    DbError::new(
        kind,
        format!("admin port {} of node {}: {e}", node.admin_address, node.id),
    )
}

/// Deletes every entry of `store` on `node`.
pub async fn truncate(node: &NodeConns, store: &str, timeout: Duration) -> Result<(), DbError> {
    let work = async {
        let mut stream = conn::open(&node.admin_address, b"ad1", timeout).await?;
        let reply = conn::exchange(&mut stream, &proto::truncate_request(store)).await?;
        match proto::truncate_reply(&reply).map_err(NodeError::Io)? {
            Some(error) => Err(NodeError::Server(error)),
            None => Ok(()),
        }
    };
    // Truncating a large store takes a while: give it ten op timeouts.
    match tokio::time::timeout(timeout * 10, work).await {
        Ok(outcome) => outcome.map_err(|e| db_error(node, e)),
        Err(_) => Err(db_error(node, NodeError::Timeout)),
    }
}

/// Every key of `store` that `node` holds in `partitions` (as master or replica), or
/// only the first `limit` of them.
pub async fn keys(
    node: &NodeConns,
    store: &str,
    partitions: &[u32],
    limit: Option<usize>,
    timeout: Duration,
) -> Result<Vec<Vec<u8>>, DbError> {
    let work = async {
        let mut stream = conn::open(&node.admin_address, b"ad1", timeout).await?;
        conn::send_frame(&mut stream, &proto::fetch_request(store, partitions, false)).await?;
        let mut keys = Vec::new();
        // Each message of the stream must come within the timeout, not the whole.
        while let Some(body) = tokio::time::timeout(timeout, conn::read_frame(&mut stream))
            .await
            .map_err(|_| NodeError::Timeout)??
        {
            match proto::fetch_reply(&body).map_err(NodeError::Io)? {
                Fetched::Key(key) => keys.push(key),
                Fetched::Error(error) => return Err(NodeError::Server(error)),
            }
            if limit.is_some_and(|l| keys.len() >= l) {
                break;
            }
        }
        Ok(keys)
    };
    work.await.map_err(|e| db_error(node, e))
}
