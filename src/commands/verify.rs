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
use crate::db::{AnyStore, ConnectOptions, DbError, DbUrl, ErrorKind, Marker, Settings, Store};
use crate::files::write_json;
use crate::interrupt;
use crate::result_dir::{self, FailedWriteRow, RunRecord};
use crate::verify::{Expected, KeyCheck, VerifyReport, compare_orders, describe};
use crate::workload::EventSource;
use crate::workload::{OrderBook, OrderEvent, OrderId, STREAM_VERSION, Target};

/// `hatshop verify`: what the store holds against what the stream says; true when exact.
/// The verdict on the run's own database goes into verify.json (a verify that fails
/// leaves one that says so); another database's is printed, never put in the folder.
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
    let (url, own) = url_to_read(args, dir, &record)?;
    if url.in_memory() {
        bail!(
            "the run in {} kept its database in memory ({url}), gone when the run ended: \
             verify such a run as it ends, with `hatshop run --verify`",
            dir.display()
        );
    }
    say!("verifying {} against {url}", dir.display());
    let began = crate::stamp::now();
    let verdict = verify_database(args, dir, &record, &url, own).await;
    let report = match verdict {
        Ok(report) => report,
        Err(e) if own => {
            // The old verdict must not outlive the database it was about.
            let failed = VerifyReport::failed(
                url.to_string(),
                began,
                crate::secrets::redact(&format!("{e:#}")).into_owned(),
            );
            let path = result_dir::file(dir, result_dir::VERIFY_JSON);
            if write_json(&path, &failed).is_err() {
                let _ = std::fs::remove_file(&path);
            }
            rewrite_page(dir);
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    crate::console::out(&report.render());
    if report.is_exact() {
        say!("exact: the database holds what the stream says");
    }
    if own {
        // The folder's page says whether the run was verified: say it now, not at the
        // next `hatshop report`.
        if let Some(page) = rewrite_page(dir) {
            say!("report: {}", page.display());
        }
    } else {
        say!(
            "(another database than the run's own: {} keeps the verdict it had)",
            result_dir::VERIFY_JSON
        );
    }
    Ok(report.is_exact())
}

/// The folder's page again, with the verdict it now holds (where it has a page).
fn rewrite_page(dir: &Path) -> Option<std::path::PathBuf> {
    if !dir.join(result_dir::REPORT_HTML).exists() {
        return None;
    }
    crate::report::html::write_report(dir).ok()
}

/// Connects to `url` and judges it, within deadlines, hearing Ctrl-C; `own`: the run's
/// own database, whose verdict goes into verify.json.
async fn verify_database(
    args: &VerifyArgs,
    dir: &Path,
    record: &RunRecord,
    url: &DbUrl,
    own: bool,
) -> Result<VerifyReport> {
    let settings = Settings::checked(
        url.scheme(),
        url.store().settings,
        record.database.settings.clone(),
    )
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
    let store = waiting(connect_timeout, "connect", AnyStore::connect(url, &options))
        .await
        .with_context(|| format!("cannot connect to {url}"))?;
    let to = own.then(|| result_dir::file(dir, result_dir::VERIFY_JSON));
    let report = tokio::select! {
        report = verify_store(&store, url, dir, record, op_timeout, to.as_deref()) => report,
        _ = interrupt::wait() => Err(anyhow!("verify interrupted")),
    };
    crate::db::close_within(&store).await;
    report
}

/// The database verify reads, and whether it is the run's own: `--db` if given; else
/// the run's own, its password (if run.json keeps none) taken from HATSHOP_DB. A
/// HATSHOP_DB that names another database is refused: left over in a shell, it would
/// silently verify the wrong one.
fn url_to_read(args: &VerifyArgs, dir: &Path, record: &RunRecord) -> Result<(DbUrl, bool)> {
    let recorded = recorded_url(dir, record)?;
    if let Some(url) = &args.db {
        let url = DbUrl::parse(url).map_err(anyhow::Error::msg)?;
        let own = same_database(&url, &recorded);
        return Ok((url, own));
    }
    let from_env = match std::env::var("HATSHOP_DB") {
        Ok(text) if !text.is_empty() => {
            Some(DbUrl::parse(&text).map_err(|e| anyhow!("HATSHOP_DB: {e}"))?)
        }
        _ => None,
    };
    let without_password = record.database.url.contains(":***@");
    match from_env {
        Some(env) if same_database(&env, &recorded) => Ok((env, true)),
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
        None => Ok((recorded, true)),
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
        Some(_) if url.in_memory() => url,
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

/// Compares the store with the run's expected state; the verdict goes to `to`
/// (verify.json of the run's own database), if given.
pub async fn verify_store<D: Store>(
    store: &D,
    url: &DbUrl,
    dir: &Path,
    record: &RunRecord,
    page_timeout: Duration,
    to: Option<&Path>,
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
    let at = crate::stamp::now();
    let marker = waiting(page_timeout, "check hatshop's marker", store.check_owned())
        .await
        .map_err(|e| anyhow!("{e:#}: nothing to verify"))?;
    check_marker(&marker, url, record)?;
    let reach = Reach::of(dir, record)?;
    let failures = failed_writes(dir, record)?;
    let whole_ids: HashSet<OrderId> = failures
        .iter()
        .filter(|(_, (target, kind))| !kind.outcome_unknown() && matches!(target, Target::Order(_)))
        .map(|(_, (target, _))| target.id())
        .collect();
    let mut expected = Expected::new(whole_ids);
    replay(record, &reach, |event, fate, races| {
        if races && !matches!(fate, Fate::NotApplied) {
            expected.raced(event);
        }
        match fate {
            Fate::Applied => expected.apply(event, failures.get(&event.seq).map(|f| f.1)),
            Fate::MaybeApplied => expected.maybe_applied(event),
            Fate::NotApplied => {}
        }
    })?;

    let mut report = VerifyReport {
        database: url.to_string(),
        at,
        ..VerifyReport::default()
    };
    let snapshot = waiting(page_timeout, "read the orders back", store.snapshot())
        .await
        .with_context(|| format!("cannot read back {url}"))?;
    let differing = compare_orders(&expected, &snapshot, &mut report);
    if !differing.is_empty() {
        describe(
            &whole_orders(record, &reach, &differing, &failures)?,
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
    if let Some(to) = to {
        write_json(to, &report)?;
    }
    Ok(report)
}

/// The tables must be the ones this run set up: a later run (or `prepare`, or a load)
/// that set them up again emptied what this one wrote.
fn check_marker(marker: &Marker, url: &DbUrl, record: &RunRecord) -> Result<()> {
    // A merged run's shards used the tables `hatshop prepare` made.
    let this_run = Marker::of_run(
        &record.hatshop_version,
        &record.run_id,
        record.pid,
        record.process_start,
    );
    let made_for_this_run = match marker.run_id() {
        Some(_) => record.shards.is_empty() && marker.made_by == this_run,
        None => !record.shards.is_empty(),
    };
    if made_for_this_run {
        return Ok(());
    }
    bail!(
        "{url} holds the tables of another run: its marker says \"{}\", not run {}; they \
         were set up again after this run, so what it wrote is gone and there is nothing \
         to verify",
        marker.made_by,
        record.run_id
    )
}

/// How far each lane got, as far as the folder knows: the last event each applied for
/// certain, and how many events after it may also have reached the store.
struct Reach {
    lane_last_seq: Vec<Option<u64>>,
    /// Events past a lane's last that may have been applied: none for a run that
    /// recorded its own end; for a killed one, what its op log may lag behind.
    unlogged: u64,
}

impl Reach {
    fn of(dir: &Path, record: &RunRecord) -> Result<Reach> {
        if record.recorded_its_end() {
            return Ok(Reach {
                lane_last_seq: record.lane_last_seq.clone(),
                unlogged: 0,
            });
        }
        let Some(unmeasured) = &record.unmeasured else {
            bail!(
                "the run in {} was killed before its measured phase began (in its load or \
                 warm-up): how far its load got is not known, so neither is what the \
                 database must hold; run it again",
                dir.display()
            );
        };
        let Some(recovery) = &record.recovered else {
            bail!(
                "{}: {}",
                dir.display(),
                result_dir::rebuild_hint(dir, record)
            );
        };
        // Every lane had applied the load and warm-up before measuring began.
        let floor = unmeasured.through_seq;
        Ok(Reach {
            lane_last_seq: recovery
                .logged_lane_last_seq
                .iter()
                .map(|logged| (*logged).max(floor))
                .collect(),
            unlogged: crate::runner::UNLOGGED_PER_LANE,
        })
    }
}

/// What became of an event of the stream, as far as the run knows.
enum Fate {
    Applied,
    /// After the last logged event of a killed run's lane: it may have reached the store.
    MaybeApplied,
    NotApplied,
}

/// Replays the run's stream as far as its lanes reached, telling each event's fate and
/// whether it raced another lane (`conflicts`).
fn replay(
    record: &RunRecord,
    reach: &Reach,
    mut visit: impl FnMut(&OrderEvent, Fate, bool),
) -> Result<()> {
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
    let lanes = reach.lane_last_seq.len().max(1);
    let dealing = crate::runner::Dealing {
        lanes,
        ..record.dealing()
    };
    let window = reach.unlogged;
    let mut past_last = vec![0u64; lanes];
    // Nothing past this seq can have been applied: the replay stops there, not at the
    // end of a planned stream that may be billions of events long.
    let last_applied = reach.lane_last_seq.iter().flatten().max().copied();
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
        let last = reach.lane_last_seq.get(lane).copied().flatten();
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
    reach: &Reach,
    ids: &BTreeSet<OrderId>,
    failures: &HashMap<u64, (Target, ErrorKind)>,
) -> Result<BTreeMap<OrderId, crate::workload::Order>> {
    let mut book = OrderBook::new();
    replay(record, reach, |event, fate, _| {
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

/// failed_writes.csv by seq: every write the run recorded as failed must be listed (a
/// killed run: those of its load and warm-up, kept before measuring), or which orders
/// and keys a failed write left alone is not known and nothing can be judged.
fn failed_writes(dir: &Path, record: &RunRecord) -> Result<HashMap<u64, (Target, ErrorKind)>> {
    let recorded = if record.recorded_its_end() {
        record.failed_writes
    } else {
        record.unmeasured.as_ref().map_or(0, |u| u.failed_writes)
    };
    let path = result_dir::file(dir, result_dir::FAILED_WRITES_CSV);
    let rows: Vec<FailedWriteRow> = crate::report::load::read_rows(&path)?;
    let mut out = HashMap::with_capacity(rows.len());
    for row in rows {
        let kind = ErrorKind::parse(&row.error_kind).unwrap_or(ErrorKind::Other);
        let key_event = matches!(row.event_type.as_str(), "write" | "rewrite" | "delete");
        let target = if key_event {
            Target::Key(row.target)
        } else {
            Target::Order(row.target)
        };
        out.insert(row.seq, (target, kind));
    }
    if (out.len() as u64) < recorded {
        bail!(
            "{} lists {} of the {recorded} writes the run recorded as failed (the disk filled \
             up before the rest were written?): what they left in the database is not known, \
             so it cannot be verified",
            path.display(),
            out.len()
        );
    }
    Ok(out)
}
