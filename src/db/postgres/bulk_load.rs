//! Bulk loads into PostgreSQL: a batch is one INSERT … SELECT FROM unnest(…) with one
//! array parameter per column, prepared on every connection before the load begins.
//! One statement is one transaction, and arrays carry any number of rows (a VALUES
//! list could carry at most 65,535 parameters).

use tokio_postgres::types::ToSql;

use super::PostgresStore;
use super::errors::classify;
use super::rows::get;
use crate::db::sql::Placeholders;
use crate::db::sql::{LOAD_COUNT, create_load_table, load_select_row, load_value_columns};
use crate::db::{BulkLoad, DbError, LOAD_TABLE, LoadBatch, LoadError, LoadShape};

impl BulkLoad for PostgresStore {
    async fn load_setup(&self, shape: LoadShape) -> Result<(), DbError> {
        {
            let conn = self.conn().await?;
            conn.client
                .batch_execute(&format!(
                    "DROP TABLE IF EXISTS {LOAD_TABLE}; {}",
                    create_load_table(shape.columns, "TEXT", "BYTEA")
                ))
                .await
                .map_err(classify)?;
        }
        let insert = Self::load_insert(shape.columns);
        for connection in &self.connections {
            let mut slot = connection.lock().await;
            if slot.is_none() {
                *slot = Some(self.open().await?);
            }
            if let Some(conn) = slot.as_mut() {
                conn.statement(&insert).await?;
            }
        }
        self.load.set(shape, insert)
    }

    async fn load_batch(&self, batch: &LoadBatch) -> Result<(), LoadError> {
        let columns = self.load.shape().map(|s| s.columns)?;
        let keys: Vec<&str> = batch.keys.iter().map(String::as_str).collect();
        let mut arrays: Vec<Vec<&[u8]>> = vec![Vec::with_capacity(batch.len()); columns];
        for (_, values) in batch.rows() {
            for (array, value) in arrays.iter_mut().zip(values) {
                array.push(value.as_slice());
            }
        }
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(columns + 1);
        params.push(&keys);
        for array in &arrays {
            params.push(array);
        }
        let mut conn = self.conn().await?;
        let statement = conn.statement(self.load.insert()?).await?;
        conn.client
            .execute(&statement, &params)
            .await
            .map_err(|e| LoadError::Db(classify(e)))?;
        Ok(())
    }

    async fn load_count(&self) -> Result<u64, DbError> {
        let conn = self.conn().await?;
        let row = conn
            .client
            .query_one(LOAD_COUNT, &[])
            .await
            .map_err(classify)?;
        Ok(get::<i64>(&row, 0)? as u64)
    }

    async fn load_read(&self, key: &str) -> Result<Option<Vec<Vec<u8>>>, DbError> {
        let columns = self.load.shape().map(|s| s.columns)?;
        let conn = self.conn().await?;
        let row = conn
            .client
            .query_opt(&load_select_row(Placeholders::Dollar, columns), &[&key])
            .await
            .map_err(classify)?;
        row.map(|row| (0..columns).map(|c| get::<Vec<u8>>(&row, c)).collect())
            .transpose()
    }
}

impl PostgresStore {
    fn load_insert(columns: usize) -> String {
        let arrays: Vec<String> = (1..=columns)
            .map(|c| format!("${}::bytea[]", c + 1))
            .collect();
        format!(
            "INSERT INTO {LOAD_TABLE} (k, {}) SELECT * FROM unnest($1::text[], {})",
            load_value_columns(columns),
            arrays.join(", ")
        )
    }
}
