//! `hatshop verify RESULT_DIR`: rebuild the expected state from the run's stream (only
//! the events each lane applied, knowing which writes failed) and compare it with the
//! database, within deadlines, hearing Ctrl-C.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};

use super::open_stream;
use crate::cli::VerifyArgs;
use crate::config::{check_events_file, seconds};
use crate::console::say;
use crate::db::{AnyStore, ConnectOptions, DbError, DbUrl, ErrorKind, Settings, Store, store_meta};
use crate::files::write_json;
use crate::interrupt;
use crate::result_dir::{self, FailedWriteRow, RunRecord};
use crate::verify::{Expected, KeyCheck, VerifyReport, compare_orders, describe};
use crate::workload::EventSource;
use crate::workload::{OrderBook, OrderEvent, OrderId, STREAM_VERSION, Target};

/// `hatshop verify`: what the store holds against what the stream says; true when exact.
pub async fn run(args: &VerifyArgs) -> Result<bool> {
    let _listening = interrupt::Listening::new();
    let dir = &args.result_dir;
    let record = result_dir::load_complete(dir)?;
    if let Some(shard) = record.shard {
        bail!(
            "{} holds shard {shard} of a run, whose other shards wrote to the same tables: \
             `hatshop merge` the shards' folders and verify the merged folder",
            dir.display()
        );
    }
    let url = url_to_read(args, dir, &record)?;
    say!("verifying {} against {url}", dir.display());
    let meta = store_meta(url.scheme()).expect("parsed");
    let settings = Settings::checked(meta.scheme, meta.settings, record.database.settings.clone())
        .map_err(anyhow::Error::msg)?;
    let connect_timeout = seconds("--connect-timeout", args.connect_timeout, 0.1)?;
    let op_timeout = seconds("--op-timeout", args.op_timeout, 0.001)?;
    let options = ConnectOptions {
        concurrency: 1,
        settings,
        connect_timeout,
        op_timeout,
        existing_only: true,
        key_value_only: false,
    };
    let store = waiting(
        connect_timeout,
        "connect",
        AnyStore::connect(&url, &options),
    )
    .await
    .with_context(|| format!("cannot connect to {url}"))?;
    let report = tokio::select! {
        report = verify_store(&store, &url, dir, &record, op_timeout) => report,
        _ = interrupt::wait() => Err(anyhow!("verify interrupted")),
    };
    crate::db::close_within(&store).await;
    let report = report?;
    crate::console::out(&report.render());
    if report.is_exact() {
        say!("exact: the database holds what the stream says");
    }
    // The folder's page says whether the run was verified: say it now, not at the next
    // `hatshop report`.
    if dir.join(result_dir::REPORT_HTML).exists() {
        let page = crate::report::html::write_report(dir)?;
        say!("report: {}", page.display());
    }
    Ok(report.is_exact())
}

/// The database verify reads: `--db` if given; else the run's own, its password (if
/// run.json keeps none) taken from HATSHOP_DB. A HATSHOP_DB that names another database
/// is refused: left over in a shell, it would silently verify the wrong one.
fn url_to_read(args: &VerifyArgs, dir: &Path, record: &RunRecord) -> Result<DbUrl> {
    if let Some(url) = &args.db {
        return DbUrl::parse(url).map_err(anyhow::Error::msg);
    }
    let recorded = recorded_url(dir, record)?;
    let from_env = match std::env::var("HATSHOP_DB") {
        Ok(text) if !text.is_empty() => {
            Some(DbUrl::parse(&text).map_err(|e| anyhow!("HATSHOP_DB: {e}"))?)
        }
        _ => None,
    };
    let without_password = record.database.url.contains(":***@");
    match from_env {
        Some(env) if same_database(&env, &recorded) => Ok(env),
        Some(env) => bail!(
            "HATSHOP_DB names {env}, but the run in {} used {}: unset it, or pass --db to \
             verify another database",
            dir.display(),
            record.database.url
        ),
        None if without_password => bail!(
            "run.json holds {} without its password: pass the URL with --db or HATSHOP_DB",
            record.database.url
        ),
        None => Ok(recorded),
    }
}

/// Whether two URLs name one database: the same file, or the same server URL (passwords
/// aside, as both show them masked).
fn same_database(a: &DbUrl, b: &DbUrl) -> bool {
    let file = |url: &DbUrl| {
        url.store()
            .own_file
            .and(url.file())
            .map(|f| f.canonicalize().unwrap_or(f))
    };
    match (file(a), file(b)) {
        (Some(fa), Some(fb)) => a.scheme() == b.scheme() && fa == fb,
        _ => a.to_string() == b.to_string(),
    }
}

/// The database a folder's run.json names (its password masked, if it had one); a SQLite
/// file inside the folder is found relative to it, wherever the folder is now.
fn recorded_url(dir: &Path, record: &RunRecord) -> Result<DbUrl> {
    let url = DbUrl::parse(&record.database.url).map_err(anyhow::Error::msg)?;
    Ok(match &record.database.file {
        Some(file) if Path::new(file).is_relative() => url.with_file(&dir.join(file)),
        Some(file) => url.with_file(Path::new(file)),
        None => url,
    })
}

/// Awaits one database call within `limit`.
async fn waiting<T>(
    limit: Duration,
    what: &str,
    work: impl Future<Output = Result<T, DbError>>,
) -> Result<T> {
    match tokio::time::timeout(limit, work).await {
        Ok(result) => result.map_err(anyhow::Error::from),
        Err(_) => Err(anyhow!(
            "no answer within {} s (to {what})",
            limit.as_secs_f64()
        )),
    }
}

/// Compares the store with the run's expected state and writes verify.json.
pub async fn verify_store<D: Store>(
    store: &D,
    url: &DbUrl,
    dir: &Path,
    record: &RunRecord,
    page_timeout: Duration,
) -> Result<VerifyReport> {
    if !store.holds_data() {
        bail!("{url} keeps no data: there is nothing to verify");
    }
    if record.stream_version != STREAM_VERSION {
        bail!(
            "{} was made by stream version {} and this hatshop makes version {}: verify it with \
             the hatshop that made it (hatshop {})",
            dir.display(),
            record.stream_version,
            STREAM_VERSION,
            record.hatshop_version
        );
    }
    waiting(page_timeout, "check hatshop's marker", store.check_owned())
        .await
        .map_err(|e| anyhow!("{e:#}: nothing to verify"))?;
    let failures = failed_writes(dir)?;
    let whole_ids: HashSet<OrderId> = failures
        .iter()
        .filter(|(_, (target, kind))| !kind.outcome_unknown() && matches!(target, Target::Order(_)))
        .map(|(_, (target, _))| target.id())
        .collect();
    let mut expected = Expected::new(whole_ids);
    replay(record, |event, fate, races| {
        if races && !matches!(fate, Fate::NotApplied) {
            expected.raced(event);
        }
        match fate {
            Fate::Applied => expected.apply(event, failures.get(&event.seq).map(|f| f.1)),
            Fate::MaybeApplied => expected.maybe_applied(event),
            Fate::NotApplied => {}
        }
    })?;

    let mut report = VerifyReport::default();
    let snapshot = waiting(page_timeout, "read the orders back", store.snapshot())
        .await
        .with_context(|| format!("cannot read back {url}"))?;
    let differing = compare_orders(&expected, &snapshot, &mut report);
    if !differing.is_empty() {
        describe(
            &whole_orders(record, &differing, &failures)?,
            &snapshot,
            &mut report,
        );
    }
    drop(snapshot);

    let mut check = KeyCheck::new(&expected);
    let mut cursor = None;
    loop {
        let page = waiting(page_timeout, "read records back", store.kv_page(cursor))
            .await
            .with_context(|| format!("cannot read back {url}"))?;
        for (key, value) in &page.records {
            check.record(key, value, &mut report);
        }
        match page.next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    check.finish(&mut report);
    write_json(&result_dir::file(dir, result_dir::VERIFY_JSON), &report)?;
    Ok(report)
}

/// What became of an event of the stream, as far as the run knows.
enum Fate {
    Applied,
    /// After the last logged event of a killed run's lane: it may have reached the store.
    MaybeApplied,
    NotApplied,
}

/// Replays the run's stream, telling each event's fate and whether it raced another
/// lane (`conflicts`).
fn replay(record: &RunRecord, mut visit: impl FnMut(&OrderEvent, Fate, bool)) -> Result<()> {
    if let EventSource::File(info) = &record.events {
        let now = check_events_file(&info.path)?;
        if now.sha256 != info.sha256 {
            bail!(
                "events file {} changed since the run (sha256 {} then, {} now)",
                info.path.display(),
                info.sha256,
                now.sha256
            );
        }
    }
    let lanes = record.lane_last_seq.len().max(1);
    let dealing = crate::runner::Dealing {
        lanes,
        ..record.dealing()
    };
    // A recovered run: a lane may have applied this many events past its last logged one.
    let window = match &record.recovered {
        Some(recovery) if !recovery.op_log_complete => crate::runner::UNLOGGED_PER_LANE,
        _ => 0,
    };
    let mut past_last = vec![0u64; lanes];
    // Nothing past this seq can have been applied: the replay stops there, not at the
    // end of a planned stream that may be billions of events long.
    let last_applied = record.lane_last_seq.iter().flatten().max().copied();
    let horizon = match (last_applied, window) {
        (None, 0) => return Ok(()),
        (last, _) => last
            .unwrap_or(0)
            .saturating_add(window.saturating_mul(lanes as u64)),
    };
    for event in open_stream(&record.events)? {
        let event = event?;
        if event.seq > horizon {
            break;
        }
        // Replaying is work on this thread: it listens for Ctrl-C itself.
        if event.seq % 4096 == 0 && interrupt::requested() {
            bail!("verify interrupted");
        }
        let dealt = dealing.deal(
            event.seq,
            event.op.target().id(),
            event.op.event_type(),
            event.phase,
        );
        let lane = dealt.lane;
        let last = record.lane_last_seq.get(lane).copied().flatten();
        let fate = if last.is_some_and(|last| event.seq <= last) {
            Fate::Applied
        } else if past_last[lane] < window {
            past_last[lane] += 1;
            Fate::MaybeApplied
        } else {
            Fate::NotApplied
        };
        visit(&event, fate, dealt.own.is_some());
    }
    Ok(())
}

/// The whole expected state of a few orders: a second replay that keeps only them.
fn whole_orders(
    record: &RunRecord,
    ids: &BTreeSet<OrderId>,
    failures: &HashMap<u64, (Target, ErrorKind)>,
) -> Result<BTreeMap<OrderId, crate::workload::Order>> {
    let mut book = OrderBook::new();
    replay(record, |event, fate, _| {
        let definite = failures
            .get(&event.seq)
            .is_some_and(|(_, kind)| !kind.outcome_unknown());
        if matches!(fate, Fate::Applied)
            && !definite
            && matches!(event.op.target(), Target::Order(id) if ids.contains(&id))
        {
            book.apply(&event.op);
        }
    })?;
    Ok(book
        .into_sorted()
        .into_iter()
        .map(|o| (o.order_id, o))
        .collect())
}

/// failed_writes.csv by seq (empty for folders made before it existed).
fn failed_writes(dir: &Path) -> Result<HashMap<u64, (Target, ErrorKind)>> {
    let path = result_dir::file(dir, result_dir::FAILED_WRITES_CSV);
    if !path.exists() {
        return Ok(HashMap::new());
    }
    let mut reader =
        csv::Reader::from_path(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out = HashMap::new();
    for row in reader.deserialize::<FailedWriteRow>() {
        let row = row.with_context(|| format!("{} is not valid", path.display()))?;
        let kind = ErrorKind::parse(&row.error_kind).unwrap_or(ErrorKind::Other);
        let key_event = matches!(row.event_type.as_str(), "write" | "rewrite" | "delete");
        let target = if key_event {
            Target::Key(row.target)
        } else {
            Target::Order(row.target)
        };
        out.insert(row.seq, (target, kind));
    }
    Ok(out)
}
