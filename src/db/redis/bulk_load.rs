//! Bulk loads into Redis: a row is a hash, `hatshop:load_rows:KEY` with fields `c0`,
//! `c1`, …; a batch is one pipeline of HSETs (`--batch-type logged`: wrapped in
//! MULTI/EXEC, so atomic), built before the batch is timed (`load_encode`).

use super::RedisStore;
use super::errors::classify;
use crate::db::{BatchKind, BulkLoad, DbError, LOAD_TABLE, LoadBatch, LoadError, LoadShape};

fn load_key(key: &str) -> String {
    format!("hatshop:{LOAD_TABLE}:{key}")
}

impl BulkLoad for RedisStore {
    async fn load_setup(&self, shape: LoadShape) -> Result<(), DbError> {
        // `setup` removed every key under hatshop:, the load's too.
        // Nothing prepared: each batch is sent as built.
        self.load.set(shape, String::new())
    }

    fn load_encode(&self, batch: &mut LoadBatch) {
        let Ok(shape) = self.load.shape() else {
            return;
        };
        let mut pipe = redis::pipe();
        if shape.kind == BatchKind::Logged {
            pipe.atomic();
        }
        for (key, values) in batch.rows() {
            let command = pipe.cmd("HSET").arg(load_key(key));
            for (c, value) in values.iter().enumerate() {
                command.arg(format!("c{c}")).arg(value.as_slice());
            }
            command.ignore();
        }
        batch.encoded = Some(Box::new(pipe));
    }

    async fn load_batch(&self, batch: &LoadBatch) -> Result<(), LoadError> {
        let pipe = batch
            .encoded
            .as_ref()
            .and_then(|e| e.downcast_ref::<redis::Pipeline>())
            .ok_or_else(|| DbError::other("the batch was not encoded"))?;
        let mut held = self.conn().await?;
        pipe.query_async::<()>(&mut held.conn)
            .await
            .map_err(|e| LoadError::Db(classify(e)))
    }

    async fn load_count(&self) -> Result<u64, DbError> {
        Ok(self.scan(&load_key("*")).await?.len() as u64)
    }

    async fn load_read(&self, key: &str) -> Result<Option<Vec<Vec<u8>>>, DbError> {
        let columns = self.load.shape()?.columns;
        let mut held = self.conn().await?;
        let mut command = redis::cmd("HMGET");
        command.arg(load_key(key));
        for c in 0..columns {
            command.arg(format!("c{c}"));
        }
        let values: Vec<Option<Vec<u8>>> = command
            .query_async(&mut held.conn)
            .await
            .map_err(classify)?;
        if values.iter().all(Option::is_none) {
            return Ok(None);
        }
        values
            .into_iter()
            .enumerate()
            .map(|(c, v)| v.ok_or_else(|| DbError::other(format!("{key}: no field c{c}"))))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}
