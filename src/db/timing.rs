//! The database's own time of an operation (`--trace-sample`), beside the time hatshop
//! measured: a capability a store opts into. A store that cannot give it implements
//! [`DbTiming`] with nothing in it, and `--trace-sample` is refused for it before
//! anything connects, naming the stores that can.

use std::future::Future;

use serde::{Deserialize, Serialize};

use super::DbError;

/// Where a store's own time of an operation comes from (`--trace-sample`).
#[derive(Debug, Clone, Copy)]
pub struct DbTime {
    /// The store as its users name it, for messages ("MariaDB/MySQL").
    pub product: &'static str,
    /// The source, as run.json records it.
    pub source: &'static str,
    /// How the report's client-and-server table reads, for this store.
    pub explains: &'static str,
}

/// The server's total time in one of hatshop's statements during a run (PostgreSQL's
/// pg_stat_statements), and which event type sends it: `server-statements.csv`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct StatementTime {
    /// The event type that sends it; empty for what several share (BEGIN, COMMIT).
    pub event_type: String,
    /// Sent exactly once by every operation of its type: its calls count them.
    pub once_per_op: bool,
    pub calls: u64,
    pub total_us: f64,
    pub statement: String,
}

/// How a store gives the database's own time of its operations.
pub trait DbTiming: Send + Sync {
    /// The database's own duration (µs) of each traced request (`--trace-sample`), by
    /// its trace id; `None` where the server has none. Stores that cannot trace give
    /// nothing.
    fn db_durations(
        &self,
        trace_ids: &[u128],
    ) -> impl Future<Output = Result<Vec<Option<f64>>, DbError>> + Send {
        let none = vec![None; trace_ids.len()];
        async move { Ok(none) }
    }

    /// Readies the database's own timing of traced operations (`--trace-sample`) where
    /// the server reports it per statement (MariaDB's performance_schema, PostgreSQL's
    /// pg_stat_statements); the error says why this server will not.
    fn begin_db_timing(&self) -> impl Future<Output = Result<(), DbError>> + Send {
        async { Ok(()) }
    }

    /// The server's totals per statement since `begin_db_timing`, for stores whose
    /// server keeps only totals (PostgreSQL); others give nothing.
    fn statement_times(&self) -> impl Future<Output = Result<Vec<StatementTime>, DbError>> + Send {
        async { Ok(Vec::new()) }
    }
}
