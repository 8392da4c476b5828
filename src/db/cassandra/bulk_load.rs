//! Bulk loads into Cassandra: a batch is one unlogged (or logged) CQL batch of one
//! prepared insert per row, or (`--batch-type none`) the rows as concurrent single-row
//! inserts. Rows are serialised from borrowed keys and values: nothing is copied
//! between the generator and the driver's buffer.

use futures::stream::FuturesUnordered;
use futures::{StreamExt, TryStreamExt};
use scylla::errors::{ExecutionError, RequestAttemptError};
use scylla::serialize::SerializationError;
use scylla::serialize::row::{RowSerializationContext, SerializeRow};
use scylla::serialize::value::SerializeValue;
use scylla::serialize::writers::RowWriter;
use scylla::statement::Statement;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;

use super::CassandraStore;
use super::errors::{classify, classify_pager, other};
use crate::db::sql::load_value_columns;
use crate::db::{
    BatchKind, BatchLimit, BulkLoad, DbError, LOAD_TABLE, LoadBatch, LoadError, LoadShape,
    parse_size, traced, tracing_wanted,
};

/// The native protocol counts a batch's statements in 16 bits.
const MOST_STATEMENTS: usize = u16::MAX as usize;

/// What Cassandra 5.0 counts against `batch_size_fail_threshold` per row beyond its
/// key and values: measured here from the sizes its log states for refused batches
/// (1 column: 57 B, 3 columns: 97 B).
fn counted_row_overhead(columns: usize) -> f64 {
    37.0 + 20.0 * columns as f64
}

/// What a row adds to a batch frame beyond its key and values: the statement's kind,
/// prepared id and value count, and a length before each value.
fn framed_row_overhead(columns: usize) -> f64 {
    21.0 + 4.0 * (columns + 1) as f64
}

/// The load's insert, prepared once, and the shape of its batches.
pub(super) struct LoadInsert {
    shape: LoadShape,
    insert: PreparedStatement,
}

/// One row, serialised straight from the batch's key and values.
struct LoadRow<'a>(&'a str, &'a [Vec<u8>]);

impl SerializeRow for LoadRow<'_> {
    fn serialize(
        &self,
        ctx: &RowSerializationContext<'_>,
        writer: &mut RowWriter,
    ) -> Result<(), SerializationError> {
        let mut columns = ctx.columns().iter();
        if let Some(key) = columns.next() {
            SerializeValue::serialize(&self.0, key.typ(), writer.make_cell_writer())?;
        }
        for (column, value) in columns.zip(self.1) {
            SerializeValue::serialize(&value.as_slice(), column.typ(), writer.make_cell_writer())?;
        }
        Ok(())
    }

    fn is_empty(&self) -> bool {
        false
    }
}

impl BulkLoad for CassandraStore {
    async fn load_setup(&self, shape: LoadShape) -> Result<(), DbError> {
        let ks = &self.keyspace;
        let values: String = (0..shape.columns).map(|c| format!(", c{c} blob")).collect();
        self.ddl(&format!("DROP TABLE IF EXISTS {ks}.{LOAD_TABLE}"))
            .await?;
        self.ddl(&format!(
            "CREATE TABLE {ks}.{LOAD_TABLE} (k text PRIMARY KEY{values})"
        ))
        .await?;
        let marks = vec!["?"; shape.columns + 1].join(", ");
        let mut insert = self
            .session
            .prepare(format!(
                "INSERT INTO {ks}.{LOAD_TABLE} (k, {}) VALUES ({marks})",
                load_value_columns(shape.columns)
            ))
            .await
            .map_err(|e| other(e).context("cannot prepare the load's insert"))?;
        insert.set_consistency(self.options.write_cl);
        self.load
            .set(LoadInsert { shape, insert })
            .map_err(|_| DbError::other("one bulk load per connection"))
    }

    /// A CQL batch of `rows` inserts (before the batch is timed: `load_encode`).
    fn load_encode(&self, batch: &mut LoadBatch) {
        let Ok(load) = self.load_insert() else {
            return;
        };
        let kind = match load.shape.kind {
            BatchKind::None => return,
            BatchKind::Logged => BatchType::Logged,
            BatchKind::Unlogged => BatchType::Unlogged,
        };
        if batch.len() <= MOST_STATEMENTS {
            batch.encoded = Some(Box::new(self.cql_batch(load, kind, batch.len())));
        }
    }

    async fn load_batch(&self, batch: &LoadBatch) -> Result<(), LoadError> {
        let load = self.load_insert()?;
        // Plain loops: closures over borrowed rows would make this future not `Send`.
        let mut rows = Vec::with_capacity(batch.len());
        for (key, values) in batch.rows() {
            rows.push(LoadRow(key, values));
        }
        if load.shape.kind == BatchKind::None {
            return self
                .write_singles(&load.insert, rows, load.shape.in_flight)
                .await;
        }
        if batch.len() > MOST_STATEMENTS {
            return Err(LoadError::TooLarge(BatchLimit {
                setting: "the CQL native protocol's statements per batch".into(),
                value: MOST_STATEMENTS.to_string(),
                bytes: None,
                rows: Some(MOST_STATEMENTS as u64),
                bytes_per_row: None,
                raise: None,
            }));
        }
        let cql = batch
            .encoded
            .as_ref()
            .and_then(|e| e.downcast_ref::<Batch>())
            .ok_or_else(|| DbError::other("the batch was not encoded"))?;
        // A traced batch is a traced copy: the batch was made before tracing was asked.
        let traced_copy;
        let cql = if tracing_wanted() {
            let mut copy = cql.clone();
            copy.set_tracing(true);
            traced_copy = copy;
            &traced_copy
        } else {
            cql
        };
        let answer = self.session.batch(cql, rows).await;
        if let Ok(Some(id)) = answer.as_ref().map(|r| r.tracing_id()) {
            traced(id.as_u128());
        }
        let per_row = batch.payload_bytes() as f64 / batch.len().max(1) as f64;
        match answer {
            Ok(_) => Ok(()),
            Err(error) if is_batch_too_large(&error) => {
                let counted = per_row + counted_row_overhead(load.shape.columns);
                let needed_mib = (counted * batch.len() as f64 / (1 << 20) as f64).ceil() + 1.0;
                let raise = format!(
                    "hatshop server start cassandra --set batch_size_fail_threshold={needed_mib}MiB \
                     (or that in cassandra.yaml)"
                );
                Err(LoadError::TooLarge(
                    self.setting_limit("batch_size_fail_threshold", counted, &raise)
                        .await,
                ))
            }
            Err(error) if is_frame_too_large(&error) => Err(LoadError::TooLarge(
                self.setting_limit(
                    "native_transport_max_frame_size",
                    per_row + framed_row_overhead(load.shape.columns),
                    "native_transport_max_frame_size in cassandra.yaml (hatshop server start \
                     cassandra --set native_transport_max_frame_size=64MiB)",
                )
                .await,
            )),
            Err(error) => Err(LoadError::Db(classify(error))),
        }
    }

    async fn load_count(&self) -> Result<u64, DbError> {
        let mut read = Statement::new(format!("SELECT k FROM {}.{LOAD_TABLE}", self.keyspace));
        read.set_consistency(self.options.read_cl);
        read.set_page_size(5000);
        let mut keys = self
            .session
            .query_iter(read, ())
            .await
            .map_err(classify_pager)?
            .rows_stream::<(String,)>()
            .map_err(other)?;
        let mut count = 0;
        while keys.try_next().await.map_err(other)?.is_some() {
            count += 1;
        }
        Ok(count)
    }

    async fn load_read(&self, key: &str) -> Result<Option<Vec<Vec<u8>>>, DbError> {
        let columns = self.load_insert()?.shape.columns;
        let mut read = Statement::new(format!(
            "SELECT {} FROM {}.{LOAD_TABLE} WHERE k = ?",
            load_value_columns(columns),
            self.keyspace
        ));
        read.set_consistency(self.options.read_cl);
        let result = self
            .session
            .query_unpaged(read, (key,))
            .await
            .map_err(classify)?
            .into_rows_result()
            .map_err(other)?;
        let Some(row) = result
            .maybe_first_row::<scylla::value::Row>()
            .map_err(other)?
        else {
            return Ok(None);
        };
        row.columns
            .into_iter()
            .map(|cell| match cell {
                Some(scylla::value::CqlValue::Blob(bytes)) => Ok(bytes),
                found => Err(DbError::other(format!("a load value is {found:?}"))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

impl CassandraStore {
    fn load_insert(&self) -> Result<&LoadInsert, DbError> {
        self.load
            .get()
            .ok_or_else(|| DbError::other("the load table is not set up"))
    }

    fn cql_batch(&self, load: &LoadInsert, kind: BatchType, rows: usize) -> Batch {
        let mut cql = Batch::new(kind);
        for _ in 0..rows {
            cql.append_statement(load.insert.clone());
        }
        cql.set_consistency(self.options.write_cl);
        cql
    }

    /// The rows as single-row inserts, `in_flight` at a time.
    async fn write_singles(
        &self,
        insert: &PreparedStatement,
        rows: Vec<LoadRow<'_>>,
        in_flight: usize,
    ) -> Result<(), LoadError> {
        let mut pending = FuturesUnordered::new();
        for row in rows {
            if pending.len() >= in_flight.max(1)
                && let Some(Err(e)) = pending.next().await
            {
                return Err(LoadError::Db(classify(e)));
            }
            pending.push(self.session.execute_unpaged(insert, row));
        }
        while let Some(done) = pending.next().await {
            done.map_err(|e| LoadError::Db(classify(e)))?;
        }
        Ok(())
    }

    /// A setting's value as the node states it in `system_views.settings`.
    async fn setting_limit(&self, name: &str, bytes_per_row: f64, raise: &str) -> BatchLimit {
        let value = self
            .session
            .query_unpaged(
                "SELECT value FROM system_views.settings WHERE name = ?",
                (name,),
            )
            .await
            .ok()
            .and_then(|r| r.into_rows_result().ok())
            .and_then(|r| r.maybe_first_row::<(Option<String>,)>().ok().flatten())
            .and_then(|(v,)| v);
        BatchLimit {
            setting: format!("Cassandra's {name}"),
            bytes: value.as_deref().and_then(parse_size),
            value: value.unwrap_or_else(|| "(not readable from system_views.settings)".into()),
            rows: None,
            bytes_per_row: Some(bytes_per_row),
            raise: Some(raise.into()),
        }
    }
}

/// The server's message when it refused a request, with its error.
fn refusal(error: &ExecutionError) -> Option<&str> {
    match error {
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(_, message)) => Some(message),
        _ => None,
    }
}

/// Cassandra refuses a batch over `batch_size_fail_threshold` with exactly this.
fn is_batch_too_large(error: &ExecutionError) -> bool {
    refusal(error).is_some_and(|m| m.contains("Batch too large"))
}

/// A request over the frame limit: the node answers with a protocol error.
fn is_frame_too_large(error: &ExecutionError) -> bool {
    let text = error.to_string();
    text.contains("too big") || text.contains("exceeds maximum allowed length")
}
