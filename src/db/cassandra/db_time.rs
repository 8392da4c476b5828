//! The database's own time of a traced request (`--trace-sample`): the coordinator's
//! duration in `system_traces.sessions`.

use scylla::errors::TracingError;

use super::CassandraStore;
use crate::db::{DbError, DbTime, DbTiming};

/// Where `--trace-sample` reads the database's own time, and how the report reads it.
pub(super) const DB_TIME: DbTime = DbTime {
    product: "Cassandra",
    source: "Cassandra system_traces.sessions (coordinator duration of each sampled request)",
    explains: "cassandra",
};

impl DbTiming for CassandraStore {
    async fn db_durations(&self, trace_ids: &[u128]) -> Result<Vec<Option<f64>>, DbError> {
        // A node writes a trace's session row, and later its duration, after the
        // request, asynchronously: a trace not there yet, or not finished, is read
        // again, for up to PATIENCE from the first read in all. A busy node also drops
        // trace writes ("_TRACE messages were dropped" in its log): such a trace stays
        // `None`.
        const PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);
        const INTERVAL: std::time::Duration = std::time::Duration::from_millis(20);
        let patient_until = std::time::Instant::now() + PATIENCE;
        let mut durations = Vec::with_capacity(trace_ids.len());
        for id in trace_ids {
            let duration = loop {
                let found = match self
                    .session
                    .get_tracing_info(&uuid::Uuid::from_u128(*id))
                    .await
                {
                    Ok(info) => info.duration.map(f64::from),
                    Err(TracingError::EmptyResults) => None,
                    Err(e) => {
                        return Err(DbError::other(format!("cannot read trace {id:032x}: {e}")));
                    }
                };
                if found.is_some() || std::time::Instant::now() >= patient_until {
                    break found;
                }
                tokio::time::sleep(INTERVAL).await;
            };
            durations.push(duration);
        }
        Ok(durations)
    }
}
