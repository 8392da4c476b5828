//! The loaded tables vacuumed and analyzed before measuring, as `pgbench -i` ends its
//! load. Left to autovacuum, that work comes within a minute of the load (its naptime),
//! when the measured operations may be running; and until a freshly inserted row is
//! vacuumed, its first reader looks up the transaction that inserted it and writes the
//! answer into the page (hint bits), so the first measured reads write pages too.

use super::PostgresStore;
use super::errors::classify;
use crate::db::DbError;

/// The statement, run on its own: VACUUM cannot run inside a transaction block.
const VACUUM_LOADED: &str = "VACUUM (ANALYZE) orders, line_items, kv";

/// The longest the server may vacuum (ms): past it the statement is cancelled and the
/// run measures anyway, saying so.
const VACUUM_LIMIT_MS: u32 = 60_000;

/// Vacuums and analyzes hatshop's tables; what it ran.
pub(super) async fn vacuum_loaded(store: &PostgresStore) -> Result<&'static str, DbError> {
    let conn = store.conn().await?;
    let client = &conn.client;
    client
        .batch_execute(&format!("SET statement_timeout = {VACUUM_LIMIT_MS}"))
        .await
        .map_err(classify)?;
    let vacuumed = client
        .batch_execute(VACUUM_LOADED)
        .await
        .map_err(|e| classify(e).context(VACUUM_LOADED));
    // The connection serves the run's calls next, under their own deadline.
    client
        .batch_execute("RESET statement_timeout")
        .await
        .map_err(classify)?;
    vacuumed.map(|()| VACUUM_LOADED)
}
