//! The server's own time of hatshop's statements (`--trace-sample`), from
//! pg_stat_statements: PostgreSQL keeps totals per statement, not a time per
//! execution, so a run reads them before and after and keeps the difference, for every
//! operation rather than a sample. Needs the library loaded at server start
//! (`shared_preload_libraries`, which servers hatshop starts have) and the extension
//! in the database (made here when it is missing and the user may).

use std::collections::HashMap;

use tokio_postgres::Client;

use super::PostgresStore;
use super::classify;
use crate::db::sql::Statements;
use crate::db::{DbError, DbTime, DbTiming, ErrorKind, StatementTime};

/// Calls and total µs per statement text.
pub type Totals = HashMap<String, (u64, f64)>;

/// Makes the extension if needed and reads the totals of hatshop's statements, or says
/// why the server will not give them.
pub async fn begin(client: &Client, sql: &Statements) -> Result<Totals, DbError> {
    let loaded: Option<String> = client
        .query_opt("SHOW shared_preload_libraries", &[])
        .await
        .map_err(classify)?
        .map(|row| row.get(0));
    if !loaded.is_some_and(|l| l.split(',').any(|lib| lib.trim() == "pg_stat_statements")) {
        return Err(DbError::new(
            ErrorKind::Other,
            "pg_stat_statements is not loaded on this server, and only a restart with \
             shared_preload_libraries = 'pg_stat_statements' loads it (servers hatshop \
             starts have it)",
        ));
    }
    client
        .batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        .await
        .map_err(|e| classify(e).context("cannot make the pg_stat_statements extension"))?;
    read(client, sql).await
}

/// The totals now.
pub async fn read(client: &Client, sql: &Statements) -> Result<Totals, DbError> {
    let rows = client
        .query(
            "SELECT query, calls, total_exec_time FROM pg_stat_statements \
             WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())",
            &[],
        )
        .await
        .map_err(classify)?;
    let mut totals = Totals::new();
    for row in rows {
        let text: String = row.get(0);
        if sql.sent_by(&text).is_none() {
            continue;
        }
        let calls: i64 = row.get(1);
        let ms: f64 = row.get(2);
        let total = totals.entry(text).or_default();
        total.0 += calls.max(0) as u64;
        total.1 += ms * 1_000.0;
    }
    Ok(totals)
}

/// What ran between `before` and `after`, by statement.
pub fn difference(before: &Totals, after: Totals, sql: &Statements) -> Vec<StatementTime> {
    let mut times: Vec<StatementTime> = after
        .into_iter()
        .filter_map(|(statement, (calls, total_us))| {
            let (was_calls, was_us) = before.get(&statement).copied().unwrap_or_default();
            let calls = calls.saturating_sub(was_calls);
            let (event_type, once_per_op) = sql.sent_by(&statement)?;
            (calls > 0).then(|| StatementTime {
                event_type: event_type.to_string(),
                once_per_op,
                calls,
                total_us: (total_us - was_us).max(0.0),
                statement,
            })
        })
        .collect();
    times.sort_by(|a, b| (&a.event_type, &a.statement).cmp(&(&b.event_type, &b.statement)));
    times
}

/// Where `--trace-sample` reads the database's own time, and how the report reads it.
pub(super) const DB_TIME: DbTime = DbTime {
    product: "PostgreSQL",
    source: "pg_stat_statements (totals of every statement of the run, load and warm-up included)",
    explains: "Server: the time pg_stat_statements counted in the event type's statements over \
         the run (load and warm-up included), divided by its operations; transactions' \
         BEGIN and COMMIT are shared and listed apart below. Client: the mean service \
         time of the measured operations. PostgreSQL counts a statement's execution \
         only: the commit after it (the WAL flush to disk) is in no statement's time, so \
         for writes the difference holds it too.",
};

impl DbTiming for PostgresStore {
    async fn begin_db_timing(&self) -> Result<(), DbError> {
        let before = begin(&self.conn().await?.client, &self.sql).await?;
        *self
            .statements_before
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(before);
        Ok(())
    }

    async fn statement_times(&self) -> Result<Vec<StatementTime>, DbError> {
        let before = self
            .statements_before
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let Some(before) = before else {
            return Ok(Vec::new());
        };
        let after = read(&self.conn().await?.client, &self.sql).await?;
        Ok(difference(&before, after, &self.sql))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::sql::Placeholders;

    #[test]
    fn only_what_ran_in_between_is_kept_and_named_by_event_type() {
        let sql = Statements::new(Placeholders::Dollar);
        let before: Totals = [(sql.read_order.clone(), (10, 500.0))].into();
        let after: Totals = [
            (sql.read_order.clone(), (30, 1_700.0)),
            (sql.insert_items(3), (5, 250.0)),
            ("COMMIT".to_string(), (8, 80.0)),
            (sql.kv_select.clone(), (0, 0.0)),
        ]
        .into();
        let times = difference(&before, after, &sql);
        let brief: Vec<(&str, bool, u64, f64)> = times
            .iter()
            .map(|t| (t.event_type.as_str(), t.once_per_op, t.calls, t.total_us))
            .collect();
        assert_eq!(
            brief,
            [
                ("", false, 8, 80.0),
                ("create_order", false, 5, 250.0),
                ("read_order", true, 20, 1_200.0),
            ]
        );
    }
}
