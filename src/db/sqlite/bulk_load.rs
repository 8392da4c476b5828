//! Bulk loads into SQLite: a batch is one transaction of single-row inserts through
//! one cached prepared statement (SQLite's fast path: no statement to parse per batch,
//! no limit on rows per batch).

use rusqlite::{OptionalExtension, ToSql, TransactionBehavior};

use super::{SqliteStore, classify};
use crate::db::sql::{
    LOAD_COUNT, Placeholders, create_load_table, load_insert_row, load_select_row,
};
use crate::db::{BulkLoad, DbError, LOAD_TABLE, LoadBatch, LoadError, LoadShape};

impl BulkLoad for SqliteStore {
    async fn load_setup(&self, shape: LoadShape) -> Result<(), DbError> {
        self.connection()
            .execute_batch(&format!(
                "DROP TABLE IF EXISTS {LOAD_TABLE}; {}",
                create_load_table(shape.columns, "TEXT", "BLOB")
            ))
            .map_err(classify)?;
        // Prepared on every connection now, so no batch pays for it.
        let insert = load_insert_row(Placeholders::Question, shape.columns);
        for connection in &self.connections {
            let conn = connection.lock().unwrap_or_else(|p| p.into_inner());
            conn.prepare_cached(&insert).map_err(classify)?;
        }
        self.load.set(shape, insert)
    }

    async fn load_batch(&self, batch: &LoadBatch) -> Result<(), LoadError> {
        let insert = self.load.insert()?;
        let mut conn = self.connection();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(classify)?;
        {
            let mut statement = tx.prepare_cached(insert).map_err(classify)?;
            for (key, values) in batch.rows() {
                let cells = std::iter::once(&key as &dyn ToSql)
                    .chain(values.iter().map(|v| v as &dyn ToSql));
                statement
                    .execute(rusqlite::params_from_iter(cells))
                    .map_err(classify)?;
            }
        }
        tx.commit().map_err(classify)?;
        Ok(())
    }

    async fn load_count(&self) -> Result<u64, DbError> {
        let conn = self.connection();
        conn.query_row(LOAD_COUNT, [], |row| row.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(classify)
    }

    async fn load_read(&self, key: &str) -> Result<Option<Vec<Vec<u8>>>, DbError> {
        let columns = self.load.shape().map(|s| s.columns)?;
        let conn = self.connection();
        conn.prepare_cached(&load_select_row(Placeholders::Question, columns))
            .map_err(classify)?
            .query_row([key], |row| {
                (0..columns).map(|c| row.get::<_, Vec<u8>>(c)).collect()
            })
            .optional()
            .map_err(classify)
    }
}
