//! Bulk loads into MySQL/MariaDB: a batch is one multi-row INSERT (one statement, so
//! one transaction), sent as text with the values as hex literals. The text is built
//! before the batch is timed (`load_encode`); a prepared statement could not carry
//! more than 65,535 values.

use std::fmt::Write;

use mysql_async::prelude::*;

use super::MysqlStore;
use super::errors::classify;
use crate::db::sql::{LOAD_COUNT, create_load_table, load_value_columns};
use crate::db::{
    BatchLimit, BulkLoad, DbError, LOAD_TABLE, LoadBatch, LoadError, LoadShape, parse_size,
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// ER_NET_PACKET_TOO_LARGE: the server refused a packet over `max_allowed_packet`.
const PACKET_TOO_LARGE: u16 = 1153;

impl BulkLoad for MysqlStore {
    async fn load_setup(&self, shape: LoadShape) -> Result<(), DbError> {
        let mut conn = self.admin_conn().await?;
        conn.query_drop(format!("DROP TABLE IF EXISTS {LOAD_TABLE}"))
            .await
            .map_err(classify)?;
        conn.query_drop(format!(
            "{} ENGINE=InnoDB",
            create_load_table(shape.columns, "VARCHAR(32)", "MEDIUMBLOB")
        ))
        .await
        .map_err(classify)?;
        // Nothing prepared: each batch is sent as built.
        self.load.set(shape, String::new())
    }

    fn load_encode(&self, batch: &mut LoadBatch) {
        let Ok(columns) = self.load.shape().map(|s| s.columns) else {
            return;
        };
        let row_bytes = 8 + batch.payload_bytes() as usize * 2 / batch.len().max(1);
        let mut sql = String::with_capacity(64 + batch.len() * row_bytes);
        let _ = write!(
            sql,
            "INSERT INTO {LOAD_TABLE} (k, {}) VALUES ",
            load_value_columns(columns)
        );
        for (n, (key, values)) in batch.rows().enumerate() {
            sql.push_str(if n == 0 { "('" } else { ", ('" });
            // Keys are hatshop's own (`row0000000042`): nothing to escape.
            sql.push_str(key);
            sql.push('\'');
            for value in values {
                sql.push_str(", X'");
                for byte in value {
                    sql.push(HEX[usize::from(byte >> 4)] as char);
                    sql.push(HEX[usize::from(byte & 15)] as char);
                }
                sql.push('\'');
            }
            sql.push(')');
        }
        batch.encoded = Some(Box::new(sql));
    }

    async fn load_batch(&self, batch: &LoadBatch) -> Result<(), LoadError> {
        let sql = batch
            .encoded
            .as_ref()
            .and_then(|e| e.downcast_ref::<String>())
            .ok_or_else(|| DbError::other("the batch was not encoded"))?;
        let mut held = self.conn().await?;
        match held.driver()?.query_drop(sql.as_str()).await {
            Ok(()) => Ok(()),
            Err(error) if is_packet_too_large(&error) => {
                drop(held);
                let per_row = sql.len() as f64 / batch.len().max(1) as f64;
                Err(LoadError::TooLarge(self.packet_limit(per_row).await))
            }
            Err(error) => Err(LoadError::Db(classify(error))),
        }
    }

    async fn load_count(&self) -> Result<u64, DbError> {
        let mut conn = self.admin_conn().await?;
        let count: Option<u64> = conn.query_first(LOAD_COUNT).await.map_err(classify)?;
        Ok(count.unwrap_or(0))
    }

    async fn load_read(&self, key: &str) -> Result<Option<Vec<Vec<u8>>>, DbError> {
        let columns = self.load.shape().map(|s| s.columns)?;
        let mut conn = self.admin_conn().await?;
        let row: Option<mysql_async::Row> = conn
            .exec_first(
                format!(
                    "SELECT {} FROM {LOAD_TABLE} WHERE k = ?",
                    load_value_columns(columns)
                ),
                (key,),
            )
            .await
            .map_err(classify)?;
        row.map(|row| {
            (0..columns)
                .map(|c| {
                    row.get_opt::<Vec<u8>, _>(c)
                        .and_then(Result::ok)
                        .ok_or_else(|| DbError::other(format!("load column c{c} unreadable")))
                })
                .collect()
        })
        .transpose()
    }
}

impl MysqlStore {
    async fn packet_limit(&self, bytes_per_row: f64) -> BatchLimit {
        let value = match self.admin_conn().await {
            Ok(mut conn) => conn
                .query_first::<String, _>("SELECT @@GLOBAL.max_allowed_packet")
                .await
                .ok()
                .flatten(),
            Err(_) => None,
        };
        BatchLimit {
            setting: "the server's max_allowed_packet".into(),
            bytes: value.as_deref().and_then(parse_size),
            value: value.unwrap_or_else(|| "(not readable)".into()),
            rows: None,
            bytes_per_row: Some(bytes_per_row),
            raise: Some("SET GLOBAL max_allowed_packet = 1073741824 (then reconnect)".into()),
        }
    }
}

/// The server's refusal, or the driver's own check against the server's limit.
fn is_packet_too_large(error: &mysql_async::Error) -> bool {
    match error {
        mysql_async::Error::Server(server) => server.code == PACKET_TOO_LARGE,
        other => {
            let text = other.to_string().to_lowercase();
            text.contains("max_allowed_packet") || text.contains("packet too large")
        }
    }
}
