//! Requests to the ring: a prepared statement or a batch, traced on the server when the
//! lane asked for it (`--trace-sample`), with the node that coordinated it and its
//! trace id noted for the lane.

use std::borrow::Cow;

use futures::future::try_join_all;
use scylla::response::query_result::QueryResult;
use scylla::serialize::row::SerializeRow;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::value::CqlValue;

use super::CassandraStore;
use super::classify;
use super::options::BatchMode;
use crate::db::{DbError, served_by, traced, tracing_wanted};

impl CassandraStore {
    /// Runs a prepared statement (traced when the lane asked) and notes who served it.
    pub(super) async fn run(
        &self,
        statement: &PreparedStatement,
        values: impl SerializeRow,
    ) -> Result<QueryResult, DbError> {
        let result = self
            .session
            .execute_unpaged(&traced_if_wanted(statement), values)
            .await
            .map_err(classify)?;
        self.note_coordinator(&result);
        Ok(result)
    }

    /// Says which node coordinated a request (the driver knows only for successes),
    /// and the id of its trace when it was traced.
    fn note_coordinator(&self, result: &QueryResult) {
        let ip = result.request_coordinator().node().address.ip();
        if let Some(index) = self.nodes.iter().position(|node| *node == ip) {
            served_by(index + 1);
        }
        if let Some(id) = result.tracing_id() {
            traced(id.as_u128());
        }
    }

    /// Sends the writes of one event as one batch, or all at once on their own.
    pub(super) async fn write_all(
        &self,
        writes: Vec<(&PreparedStatement, Vec<CqlValue>)>,
    ) -> Result<(), DbError> {
        let batch_type = match self.options.batch {
            BatchMode::Logged => BatchType::Logged,
            BatchMode::Unlogged => BatchType::Unlogged,
            BatchMode::None => {
                let statements: Vec<_> = writes
                    .iter()
                    .map(|(statement, _)| traced_if_wanted(statement))
                    .collect();
                let calls = statements
                    .iter()
                    .zip(&writes)
                    .map(|(statement, (_, values))| {
                        self.session.execute_unpaged(statement, values)
                    });
                let results = try_join_all(calls).await.map_err(classify)?;
                for result in &results {
                    self.note_coordinator(result);
                }
                return Ok(());
            }
        };
        let mut batch = Batch::new(batch_type);
        batch.set_consistency(self.options.write_cl);
        batch.set_tracing(tracing_wanted());
        batch.set_execution_profile_handle(Some(self.watched.clone()));
        let mut values = Vec::with_capacity(writes.len());
        for (statement, row) in writes {
            batch.append_statement(statement.clone());
            values.push(row);
        }
        let result = self.session.batch(&batch, values).await.map_err(classify)?;
        self.note_coordinator(&result);
        Ok(())
    }
}

/// The statement, traced on the server when the lane asked for this call to be
/// (`--trace-sample`): a traced copy, so the shared statement stays untraced.
fn traced_if_wanted(statement: &PreparedStatement) -> Cow<'_, PreparedStatement> {
    if tracing_wanted() {
        let mut traced = statement.clone();
        traced.set_tracing(true);
        Cow::Owned(traced)
    } else {
        Cow::Borrowed(statement)
    }
}
