//! hatshop's tables in PostgreSQL, and their keys apart: a run whose initial load
//! goes in first makes the tables bare and adds the keys once the load is in, as
//! `pgbench -i` builds its key after its COPY (a million rows in random key order
//! took 3.6 s into a keyed table, 1.2 s into a bare one and 0.6 s for its key after:
//! bench/NOTES.md). Either way the tables end the same, constraint names included.

use std::sync::atomic::Ordering;

use super::errors::classify;
use super::{PostgresStore, pgbench};
use crate::db::DbError;
use crate::db::ownership::Ownership;
use crate::db::sql::setup_statements;

const TABLES: &[&str] = &[
    "CREATE TABLE orders (
        order_id BIGINT NOT NULL,
        client_id BIGINT NOT NULL,
        customer TEXT NOT NULL,
        address TEXT NOT NULL,
        created_at_ms BIGINT NOT NULL,
        status TEXT NOT NULL,
        subtotal_cents BIGINT NOT NULL,
        payload TEXT NOT NULL
    )",
    "CREATE TABLE line_items (
        line_item_id BIGINT NOT NULL,
        order_id BIGINT NOT NULL,
        product TEXT NOT NULL,
        colour TEXT NOT NULL,
        size TEXT NOT NULL,
        quantity INT NOT NULL,
        unit_price_cents BIGINT NOT NULL
    )",
];

/// The orders' and items' keys, in the order they can be made.
const KEYS: &[&str] = &[
    "ALTER TABLE orders ADD PRIMARY KEY (order_id)",
    "ALTER TABLE line_items ADD PRIMARY KEY (line_item_id)",
    "ALTER TABLE line_items ADD FOREIGN KEY (order_id) REFERENCES orders (order_id)",
    "CREATE INDEX line_items_by_order ON line_items (order_id)",
];

/// hatshop's own key-value table (`kv_table=kv`); `pgbench::CREATE` is the other shape.
/// Keys are opaque, so they are compared byte by byte ("C") rather than by the
/// database's collation: a point read then cost the server about 1.3 µs less of its 35
/// at 64 in flight (bench/NOTES.md).
const CREATE_KV: &str = "CREATE TABLE kv (k TEXT COLLATE \"C\" NOT NULL, v BYTEA NOT NULL)";
const KV_KEY: &str = "ALTER TABLE kv ADD PRIMARY KEY (k)";

/// When a setup makes the keys.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Keys {
    Now,
    /// Once the initial load is in (`add_keys`).
    AfterLoad,
}

impl PostgresStore {
    /// Drops hatshop's tables (as `owner` allows) and makes them again, with their keys
    /// now or after the load; then prepares every connection's statements.
    pub(super) async fn make_tables(&self, owner: &Ownership, keys: Keys) -> Result<(), DbError> {
        {
            let conn = self.conn().await?;
            let existing = self.existing_tables(&conn).await?;
            let mut create: Vec<&str> = TABLES.to_vec();
            create.push(if self.pgbench {
                pgbench::CREATE
            } else {
                CREATE_KV
            });
            if keys == Keys::Now {
                create.extend(self.keys());
            }
            let statements = setup_statements(&self.target, owner, &existing, &create, "TEXT")?;
            conn.client
                .batch_execute(&statements.join(";\n"))
                .await
                .map_err(classify)?;
        }
        self.keys_deferred
            .store(keys == Keys::AfterLoad, Ordering::Relaxed);
        // Statements prepared against the old tables are stale now; prepare them again
        // on every connection before anything is measured.
        self.prepare_everywhere().await
    }

    /// Adds the keys a setup for a load left out, in one transaction; `None` where
    /// none were left out.
    pub(super) async fn add_keys(&self) -> Result<Option<&'static str>, DbError> {
        if !self.keys_deferred.swap(false, Ordering::Relaxed) {
            return Ok(None);
        }
        let conn = self.conn().await?;
        let statements: Vec<&str> = self.keys().collect();
        conn.client
            .batch_execute(&format!("BEGIN; {}; COMMIT", statements.join("; ")))
            .await
            .map_err(classify)?;
        Ok(Some("the loaded tables' keys, built after the load"))
    }

    fn keys(&self) -> impl Iterator<Item = &'static str> {
        let kv = if self.pgbench { pgbench::KEY } else { KV_KEY };
        KEYS.iter().copied().chain([kv])
    }
}
