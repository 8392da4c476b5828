//! The server's own time of a traced operation (`--trace-sample`), from MariaDB's
//! performance_schema: right after the operation, on the connection that ran it and
//! outside the lane's timed window, the times of that connection's last statements
//! (`events_statements_history`, which keeps each connection's last ten by default).
//! Prepared statements show there as `statement/com/Execute` with no text, so an
//! operation is matched by position: the store counts the statements it sent.

use mysql_async::Conn;
use mysql_async::prelude::*;

use super::conns::Held;

use super::MysqlStore;
use super::classify;
use crate::db::{DbError, DbTime, DbTiming, ErrorKind};

/// Why this server cannot time statements, or nothing when it can.
pub async fn check(conn: &mut Conn) -> Result<(), DbError> {
    let unavailable = |why: &str| DbError::new(ErrorKind::Other, why.to_string());
    let on: Option<i64> = conn
        .query_first("SELECT @@performance_schema")
        .await
        .map_err(classify)?;
    if on != Some(1) {
        return Err(unavailable(
            "performance_schema is OFF on this server, and only a restart with \
             performance_schema=ON turns it on (servers hatshop starts have it)",
        ));
    }
    let off: Vec<String> = conn
        .query(
            "SELECT NAME FROM performance_schema.setup_consumers WHERE ENABLED <> 'YES' AND NAME IN \
             ('global_instrumentation', 'thread_instrumentation', 'events_statements_current', \
             'events_statements_history')",
        )
        .await
        .map_err(classify)?;
    if !off.is_empty() {
        return Err(unavailable(&format!(
            "performance_schema's consumer{} {} {} off on this server (turn on with UPDATE \
             performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME IN (…))",
            if off.len() == 1 { "" } else { "s" },
            off.join(", "),
            if off.len() == 1 { "is" } else { "are" },
        )));
    }
    Ok(())
}

/// The summed server time (µs) of the last `statements` statements this connection
/// ran, or `None` when the server kept fewer of them.
pub async fn last_statements(mut conn: Held, statements: usize) -> Option<(f64, usize)> {
    let waits = conn
        .query_numbers(&format!(
            "SELECT TIMER_WAIT FROM performance_schema.events_statements_history \
             WHERE THREAD_ID = (SELECT THREAD_ID FROM performance_schema.threads \
             WHERE PROCESSLIST_ID = CONNECTION_ID()) ORDER BY EVENT_ID DESC LIMIT {statements}"
        ))
        .await
        .ok()?;
    if waits.len() < statements {
        return None;
    }
    let picoseconds: u64 = waits.into_iter().sum::<Option<u64>>()?;
    Some((picoseconds as f64 / 1e6, statements))
}

/// Where `--trace-sample` reads the database's own time, and how the report reads it.
pub(super) const DB_TIME: DbTime = DbTime {
    product: "MariaDB/MySQL",
    source: "MariaDB performance_schema.events_statements_history (the sampled operations' statements)",
    explains: "Client: the service time hatshop measured (sent → answered). Server: the sum of \
         the operation's statements' times in MariaDB's \
         performance_schema.events_statements_history, read on its connection right \
         after it, outside its timed window. Only the sampled operations were read. \
         MariaDB stops a statement's timer after its reply has left and its cleanup is \
         done, so where client and server share busy cores an operation can show more \
         server time than client time.",
};

impl DbTiming for MysqlStore {
    async fn begin_db_timing(&self) -> Result<(), DbError> {
        check(&mut self.admin_conn().await?).await?;
        self.server_timing
            .store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
}
