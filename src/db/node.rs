//! Which node of a cluster served a call. A store that knows (MySQL routing over
//! several hosts, Cassandra's coordinator) says so with [`served_by`] while the call
//! runs; the lane reads it back from the cell it handed to [`observe`], also when the
//! call timed out or was cancelled. A side channel rather than a return value, so the
//! trait's methods stay in domain words; 0 means the store did not say.

use std::sync::Arc;
use std::sync::atomic::{AtomicU16, Ordering};

tokio::task_local! {
    static SERVED_BY: Arc<AtomicU16>;
}

/// Runs a call with `node` as the place a store says which node (1-based) served it.
pub async fn observe<F: Future>(node: Arc<AtomicU16>, call: F) -> F::Output {
    node.store(0, Ordering::Relaxed);
    SERVED_BY.scope(node, call).await
}

/// Notes the node (1-based, in the order of the URL's hosts) serving the current call.
pub fn served_by(node: usize) {
    let _ = SERVED_BY
        .try_with(|cell| cell.store(node.min(u16::MAX as usize) as u16, Ordering::Relaxed));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_node_said_during_a_call_comes_back_even_if_the_call_is_dropped() {
        let node = Arc::new(AtomicU16::new(9));
        let out = observe(node.clone(), async {
            tokio::task::yield_now().await;
            served_by(3);
            7
        })
        .await;
        assert_eq!((out, node.load(Ordering::Relaxed)), (7, 3));
        observe(node.clone(), async {}).await;
        assert_eq!(node.load(Ordering::Relaxed), 0);
        // A call that never finishes (a timeout) still says where it went.
        let slow = observe(node.clone(), async {
            served_by(2);
            std::future::pending::<()>().await
        });
        let _ = tokio::time::timeout(std::time::Duration::from_millis(5), slow).await;
        assert_eq!(node.load(Ordering::Relaxed), 2);
        served_by(5); // outside a call: ignored
        assert_eq!(node.load(Ordering::Relaxed), 2);
    }
}
