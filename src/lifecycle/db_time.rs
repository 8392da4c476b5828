//! `--trace-sample`: the server's own time of hatshop's operations, beside the
//! client's. Cassandra traces the sampled operations (read after the run); MariaDB
//! times each sampled one right after it (performance_schema, by the store);
//! PostgreSQL keeps only totals per statement, so every statement is timed and the
//! totals are read before and after (pg_stat_statements). Every read has a deadline
//! and hears Ctrl-C, and a server that will not give its times is said so, in the
//! output and in run.json, without failing the run.

use anyhow::Result;

use super::reach::{SETUP_TIMEOUT, until};
use crate::config::RunConfig;
use crate::console::note;
use crate::db::{AnyStore, DbTiming};
use crate::files::write_csv;
use crate::report::traces::{STATEMENTS_CSV, TRACES_CSV, rows};
use crate::result_dir;
use crate::runner::{StopSignal, TracedOp};

/// Readies the server's timing; what run.json says of it.
pub(super) async fn begin(
    config: &RunConfig,
    store: &AnyStore,
    stop: &StopSignal,
) -> Option<String> {
    if config.trace_sample <= 0.0 {
        return None;
    }
    let time = config.db.store().db_time?;
    let ready = until(
        SETUP_TIMEOUT,
        "ready the server's statement timing",
        stop,
        "interrupted before the run began",
        store.begin_db_timing(),
    )
    .await;
    match ready {
        Ok(()) => Some(time.source.to_string()),
        Err(e) => {
            note!("--trace-sample: the server's own times are left out: {e:#}");
            Some(format!("none: {e:#}"))
        }
    }
}

/// traces.csv (each traced operation's client and server time) and
/// server-statements.csv (the server's totals per statement), within a deadline each.
pub(super) async fn write(
    config: &RunConfig,
    store: &AnyStore,
    traced: &[TracedOp],
    stop: &StopSignal,
) -> Result<()> {
    if config.trace_sample <= 0.0 {
        return Ok(());
    }
    let times = until(
        SETUP_TIMEOUT,
        "read the server's statement times",
        stop,
        "interrupted while reading the server's statement times",
        store.statement_times(),
    )
    .await
    .unwrap_or_else(|e| {
        note!("server-statements.csv is left out: {e:#}");
        Vec::new()
    });
    if !times.is_empty() {
        write_csv(&result_dir::file(&config.out_dir, STATEMENTS_CSV), &times)?;
    }
    if traced.is_empty() {
        return Ok(());
    }
    let ids: Vec<u128> = traced
        .iter()
        .flat_map(|t| t.trace_ids.iter().copied())
        .collect();
    let durations = if ids.is_empty() {
        Vec::new()
    } else {
        note!("reading {} server traces …", ids.len());
        match until(
            SETUP_TIMEOUT,
            "read the server's traces",
            stop,
            "interrupted while reading the server's traces",
            store.db_durations(&ids),
        )
        .await
        {
            Ok(durations) => {
                let missing = durations.iter().filter(|d| d.is_none()).count();
                if missing > 0 {
                    note!(
                        "the server kept no trace of {missing} of {} requests (a busy node \
                         drops trace writes: \"_TRACE messages were dropped\" in its log); \
                         their operations have no server time in traces.csv",
                        ids.len()
                    );
                }
                durations
            }
            Err(e) => {
                note!("traces.csv has no Cassandra server times: {e:#}");
                vec![None; ids.len()]
            }
        }
    };
    write_csv(
        &result_dir::file(&config.out_dir, TRACES_CSV),
        &rows(traced, &durations),
    )
}
