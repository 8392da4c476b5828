//! Reaching the database before anything is measured: connect, make the tables, each
//! within its deadline and hearing Ctrl-C. Shared by run, prepare, load and verify.

use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};

use super::held_load::{self, GoingOn};
use crate::cli::ReuseLoad;
use crate::config::RunConfig;
use crate::db::{AnyStore, ConnectOptions, DbUrl, Marker, Ownership, Store};
use crate::runner::StopSignal;
use crate::workload::EventSource;

/// How long creating the schema may take (a keyspace on a ring agrees slowly).
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(120);

/// Connects and makes the schema, within their deadlines, hearing Ctrl-C; or, with
/// `--reuse-load` on a database that holds a whole stream of this run's shape, readies
/// its tables as they are and says what the run goes on from.
pub async fn connect_and_set_up(
    config: &RunConfig,
    stop: &StopSignal,
) -> Result<(AnyStore, Option<GoingOn>)> {
    let options = ConnectOptions {
        concurrency: config.concurrency,
        settings: config.settings.clone(),
        connect_timeout: config.connect_timeout,
        op_timeout: config.op_timeout,
        // A shard creates nothing: `hatshop prepare` did.
        existing_only: config.shard.is_some(),
        // Replayed files may hold orders: only a generated workload is known not to.
        key_value_only: matches!(&config.source, EventSource::Generated { workload } if workload.key_value_only()),
    };
    let store = connect(&config.db, &options, stop).await?;
    let owner = Ownership {
        recreate: config.recreate,
        note: Marker::of_run(
            env!("CARGO_PKG_VERSION"),
            &config.run_id,
            std::process::id(),
            crate::procfs::process_start(std::process::id()).unwrap_or(0),
        ),
    };
    if let Some(shard) = config.shard {
        // Shards share the tables: dropping them here would wipe the others' orders.
        within(SETUP_TIMEOUT, "check the tables", stop, store.use_existing())
            .await
            .map_err(|e| {
                anyhow!(
                    "{e:#}: a shard ({shard}) uses the tables that `hatshop prepare --db {}` makes before the shards start",
                    config.db
                )
            })?;
        return Ok((store, None));
    }
    if let Some(when) = config.reuse_load
        && let Some(going_on) = go_on(&store, config, when, stop).await?
    {
        return Ok((store, Some(going_on)));
    }
    // A generated stream's load goes in before anything reads: its keys can follow it.
    let keys = match &config.source {
        EventSource::Generated { workload }
            if workload.initial_orders + workload.initial_records > 0 =>
        {
            Keys::AfterLoad
        }
        _ => Keys::Now,
    };
    set_up(&store, &config.db, &owner, keys, stop).await?;
    Ok((store, None))
}

/// Goes on from what the store holds, where it can: its tables readied as they are,
/// and a note that this run is going on in them, so no other run goes on from them
/// until this one's end says it sent its whole stream.
async fn go_on(
    store: &AnyStore,
    config: &RunConfig,
    when: ReuseLoad,
    stop: &StopSignal,
) -> Result<Option<GoingOn>> {
    let reading = held_load::going_on(store, config, when);
    let Some(going_on) = within(SETUP_TIMEOUT, "read what it holds", stop, reading).await? else {
        return Ok(None);
    };
    within(
        SETUP_TIMEOUT,
        "check the tables",
        stop,
        store.use_existing(),
    )
    .await?;
    if let EventSource::Generated { workload } = &config.source {
        let note = held_load::going_on_note(workload, going_on.events, config);
        within(
            SETUP_TIMEOUT,
            "note what it holds",
            stop,
            held_load::write(store, &note),
        )
        .await?;
    }
    Ok(Some(going_on))
}

/// When a setup makes the tables' keys: at once, or once the initial load is in
/// (`Store::setup_for_load`, then `Store::key_loaded`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Keys {
    Now,
    AfterLoad,
}

/// Opens the store `url` names within `options.connect_timeout` and a second, hearing
/// Ctrl-C: each of its connections has the connect timeout, and the second lets the
/// store's own line (which step failed, at which host: a TLS handshake that a port
/// without TLS never answers) be the one the user reads.
pub async fn connect(url: &DbUrl, options: &ConnectOptions, stop: &StopSignal) -> Result<AnyStore> {
    within(
        options.connect_timeout + Duration::from_secs(1),
        "connect",
        stop,
        AnyStore::connect(url, options),
    )
    .await
    .with_context(|| format!("cannot connect to {url}"))
}

/// Makes hatshop's tables empty and ready within [`SETUP_TIMEOUT`], hearing Ctrl-C.
/// This is the one step of every command (run, sweep, repeat, load, prepare) that
/// deletes data, so a signal is checked once more just before it: a user who pressed
/// Ctrl-C on seeing the wrong database named keeps its tables.
pub async fn set_up(
    store: &AnyStore,
    url: &DbUrl,
    owner: &Ownership,
    keys: Keys,
    stop: &StopSignal,
) -> Result<()> {
    if stop.is_stopped() || crate::interrupt::requested() {
        bail!("interrupted before hatshop's tables in {url} were touched: nothing was changed");
    }
    let result = until(
        SETUP_TIMEOUT,
        "set up",
        stop,
        &format!(
            "interrupted while emptying hatshop's tables in {url}: they may be left part-emptied; \
             `hatshop prepare --db URL` sets them all up again"
        ),
        async {
            match keys {
                Keys::Now => store.setup(owner).await,
                Keys::AfterLoad => store.setup_for_load(owner).await,
            }
        },
    )
    .await;
    if stop.is_stopped() {
        return result;
    }
    result.with_context(|| format!("cannot set up the schema in {url}"))
}

/// Awaits `work` unless the deadline passes or the run is stopped first.
pub async fn within<T, E: Into<anyhow::Error>>(
    limit: Duration,
    what: &str,
    stop: &StopSignal,
    work: impl Future<Output = Result<T, E>>,
) -> Result<T> {
    until(limit, what, stop, "interrupted before the run began", work).await
}

/// [`within`], saying `interrupted` when stopped first.
pub async fn until<T, E: Into<anyhow::Error>>(
    limit: Duration,
    what: &str,
    stop: &StopSignal,
    interrupted: &str,
    work: impl Future<Output = Result<T, E>>,
) -> Result<T> {
    tokio::select! {
        result = tokio::time::timeout(limit, work) => match result {
            Ok(result) => result.map_err(Into::into),
            Err(_) => Err(anyhow!("no answer within {} s (to {what})", limit.as_secs_f64())),
        },
        _ = stop.stopped() => Err(anyhow!("{interrupted}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{Settings, store_declarations};
    use crate::runner::StopReason;

    #[tokio::test]
    async fn a_signal_before_the_tables_are_emptied_leaves_them_untouched() {
        let dir = tempfile::TempDir::new().unwrap();
        let file = dir.path().join("kept.db");
        let url = DbUrl::parse(&format!("sqlite://{}", file.display())).unwrap();
        let meta = store_declarations("sqlite").unwrap();
        let options = ConnectOptions {
            concurrency: 1,
            settings: Settings::checked("sqlite", meta.settings, Default::default()).unwrap(),
            connect_timeout: Duration::from_secs(5),
            op_timeout: Duration::from_secs(5),
            existing_only: false,
            key_value_only: false,
        };
        let owner = Ownership {
            recreate: false,
            note: "test".into(),
        };
        let stop = StopSignal::default();
        let store = connect(&url, &options, &stop).await.unwrap();
        set_up(&store, &url, &owner, Keys::Now, &stop)
            .await
            .unwrap();
        let db = rusqlite::Connection::open(&file).unwrap();
        db.execute("INSERT INTO kv (k, v) VALUES ('kept', x'00')", [])
            .unwrap();
        stop.stop(StopReason::Interrupted);
        let err = set_up(&store, &url, &owner, Keys::Now, &stop)
            .await
            .unwrap_err();
        assert!(
            format!("{err:#}").contains("nothing was changed"),
            "{err:#}"
        );
        let rows: i64 = db
            .query_row("SELECT COUNT(*) FROM kv", [], |row| row.get(0))
            .unwrap();
        assert_eq!(rows, 1);
    }
}
