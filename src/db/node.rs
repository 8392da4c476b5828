//! Which node of a cluster served a call. A store that knows (MySQL routing over
//! several hosts, Cassandra's coordinator) says so with [`served_by`] while the call
//! runs; the lane reads it back with [`observe`]. A side channel rather than a return
//! value, so the trait's methods stay in domain words; 0 means the store did not say.

use std::cell::Cell;

tokio::task_local! {
    static SERVED_BY: Cell<u16>;
}

/// Runs a call and returns its output and the node that served it (1-based; 0: unknown).
pub async fn observe<F: Future>(call: F) -> (F::Output, u16) {
    SERVED_BY
        .scope(Cell::new(0), async {
            let output = call.await;
            (output, SERVED_BY.with(Cell::get))
        })
        .await
}

/// Notes the node (1-based, in the order of the URL's hosts) serving the current call.
pub fn served_by(node: usize) {
    let _ = SERVED_BY.try_with(|cell| cell.set(node.min(u16::MAX as usize) as u16));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_node_said_during_a_call_comes_back() {
        let (out, node) = observe(async {
            tokio::task::yield_now().await;
            served_by(3);
            7
        })
        .await;
        assert_eq!((out, node), (7, 3));
        let ((), node) = observe(async {}).await;
        assert_eq!(node, 0);
        served_by(5); // outside a call: ignored
    }
}
