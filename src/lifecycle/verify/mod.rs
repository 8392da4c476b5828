//! The verdict on a database: the run's stream replayed as far as its lanes reached
//! (from what the run recorded of its own end, or, for a killed run, from its op log
//! and what its load came to), the failed writes it recorded, and hatshop's marker,
//! against what the store holds; within deadlines, hearing Ctrl-C.

mod touched;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};

use super::held_load::{self, Holding};
use crate::db::{DbError, DbUrl, ErrorKind, Marker, Snapshot, Store};
use crate::files::write_json;
use crate::interrupt;
use crate::numbers::thousands;
use crate::result_dir::{self, FailedWriteRow, RunRecord};
use crate::runner::open_whole_stream;
use crate::verify::{Expected, KeyCheck, RestsOn, Touched, VerifyReport, compare_orders, describe};
use crate::workload::check_events_file;
use crate::workload::{EventSource, OrderBook, OrderEvent, OrderId, STREAM_VERSION, Target};

/// Awaits one database call within `limit`.
pub async fn waiting<T>(
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

/// Orders a whole read-back is given one `page_timeout` for: the read is one call,
/// and a table of millions (or of large payloads) takes minutes on a healthy server.
const ORDERS_PER_PAGE_TIMEOUT: usize = 10_000;

/// How long a whole read of the orders may take: a page deadline for every
/// [`ORDERS_PER_PAGE_TIMEOUT`] orders the stream leaves, and at least one.
fn whole_read_limit(page_timeout: Duration, expected: &Expected) -> Duration {
    let pages = expected
        .orders
        .len()
        .div_ceil(ORDERS_PER_PAGE_TIMEOUT)
        .max(1);
    page_timeout.saturating_mul(u32::try_from(pages).unwrap_or(u32::MAX))
}

/// Compares the store with the run's expected state; the verdict goes to `to`
/// (verify.json of the run's own database), if given. A run that went on from tables
/// verified exact has only what its own events wrote read back, unless `full`.
pub async fn verify_store<D: Store>(
    store: &D,
    url: &DbUrl,
    dir: &Path,
    record: &RunRecord,
    page_timeout: Duration,
    to: Option<&Path>,
    full: bool,
) -> Result<VerifyReport> {
    if crate::db::store_declarations(url.scheme()).is_some_and(|store| !store.holds_data) {
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
    let holding = waiting(page_timeout, "read what the tables hold", async {
        Ok(held_load::read(store).await)
    })
    .await?
    .ok()
    .flatten();
    check_marker(&marker, holding.as_ref(), url, record)?;
    let reach = Reach::of(dir, record)?;
    let failures = failed_writes(dir, record)?;
    let rests_on = (!full).then(|| rests_on(record)).flatten();
    let (mut expected, touched) = expected_state(record, &reach, &failures, rests_on.is_some())?;
    let mut report = VerifyReport {
        database: url.to_string(),
        at,
        damaged_log: damaged_log(record),
        ..VerifyReport::default()
    };
    match touched.filter(|touched| touched.worth_reading(&expected)) {
        Some(touched) => {
            expected.narrow_to(&touched);
            report.rests_on = rests_on;
            let snapshot = touched::read_orders(store, url, &touched, page_timeout).await?;
            compare(record, &reach, &failures, &expected, &snapshot, &mut report)?;
            drop(snapshot);
            touched::check_keys(store, url, &expected, &touched, page_timeout, &mut report).await?;
        }
        None => {
            let limit = whole_read_limit(page_timeout, &expected);
            let snapshot = waiting(limit, "read the orders back", store.snapshot())
                .await
                .with_context(|| format!("cannot read back {url}"))?;
            compare(record, &reach, &failures, &expected, &snapshot, &mut report)?;
            drop(snapshot);
            check_records(store, url, &expected, page_timeout, &mut report).await?;
        }
    }
    if let Some(to) = to {
        write_json(to, &report)?;
        if report.is_exact() {
            say_verified(store, holding, page_timeout).await;
        }
    }
    Ok(report)
}

/// What a damaged op log journal leaves unknown, where the run's recovery found one.
fn damaged_log(record: &RunRecord) -> Option<String> {
    let recovery = record.recovered.as_ref()?;
    let damage = recovery.journal_damage.as_ref()?;
    Some(format!(
        "the op log's journal was damaged ({damage}): up to {} operations after it are not \
         known, so each lane's last {} events past its last logged one are judged against \
         every state they allow (past_log), not as differences",
        thousands(recovery.lost_rows_at_most),
        thousands(crate::runner::UNLOGGED_PER_LANE + recovery.lost_rows_at_most)
    ))
}

/// Compares the orders read back, and describes those that differ.
fn compare(
    record: &RunRecord,
    reach: &Reach,
    failures: &HashMap<u64, (Target, ErrorKind)>,
    expected: &Expected,
    snapshot: &Snapshot,
    report: &mut VerifyReport,
) -> Result<()> {
    let differing = compare_orders(expected, snapshot, report);
    if !differing.is_empty() {
        describe(
            &whole_orders(record, reach, &differing, failures)?,
            snapshot,
            report,
        );
    }
    Ok(())
}

/// The verdict a read of only this run's own writes can rest on: the tables it went
/// on from were verified exact.
fn rests_on(record: &RunRecord) -> Option<RestsOn> {
    let from = record.went_on_from.as_ref()?;
    from.verified_exact.then(|| RestsOn {
        run: from.run.clone(),
        folder: from.folder.clone(),
    })
}

/// Marks the tables' note verified exact, so that a run going on from them reads back
/// only what it writes. Only this run's own note of a whole stream is marked
/// ([`check_marker`] saw that the note is this run's). A mark that cannot be written (a
/// login that may only read) is said, and the verdict stands: the next run reads all.
async fn say_verified<D: Store>(store: &D, holding: Option<Holding>, page_timeout: Duration) {
    let Some(mut holding) = holding.filter(|h| h.not_whole.is_none() && !h.verified_exact) else {
        return;
    };
    holding.verified_exact = true;
    let what = "note that the tables were verified exact";
    if let Err(e) = waiting(page_timeout, what, held_load::write(store, &holding)).await {
        crate::console::note!(
            "warning: cannot {what} ({e:#}): a run going on from them reads them all back"
        );
    }
}

/// What the store must hold: the stream replayed as far as the lanes reached, each
/// write as its fate says (orders whose writes failed for sure are rebuilt whole); and,
/// where `touched`, the orders and records the run's own events wrote.
fn expected_state(
    record: &RunRecord,
    reach: &Reach,
    failures: &HashMap<u64, (Target, ErrorKind)>,
    touched: bool,
) -> Result<(Expected, Option<Touched>)> {
    let whole_ids: HashSet<OrderId> = failures
        .iter()
        .filter(|(_, (target, kind))| !kind.outcome_unknown() && matches!(target, Target::Order(_)))
        .map(|(_, (target, _))| target.id())
        .collect();
    let mut expected = Expected::new(whole_ids);
    let mut own = touched.then(Touched::default);
    let held = held_events(record);
    replay(record, reach, PlanCheck::Hash, |event, fate, races| {
        if races && !matches!(fate, Fate::NotApplied) {
            expected.raced(event);
        }
        if let Some(own) = own.as_mut()
            && event.seq >= held
            && !matches!(fate, Fate::NotApplied)
        {
            own.note(event);
        }
        match fate {
            Fate::Applied => expected.apply(event, failures.get(&event.seq).map(|f| f.1)),
            Fate::MaybeApplied => expected.maybe_applied(event),
            Fate::NotApplied => {}
        }
    })?;
    Ok((expected, own))
}

/// Reads the key-value records back a page at a time, each page within
/// `page_timeout`, and checks them against `expected`.
async fn check_records<D: Store>(
    store: &D,
    url: &DbUrl,
    expected: &Expected,
    page_timeout: Duration,
    report: &mut VerifyReport,
) -> Result<()> {
    let mut check = KeyCheck::new(expected);
    let mut cursor = None;
    loop {
        let page = waiting(page_timeout, "read records back", store.kv_page(cursor))
            .await
            .with_context(|| format!("cannot read back {url}"))?;
        for (key, value) in &page.records {
            check.record(key, value, report);
        }
        match page.next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    check.finish(report);
    Ok(())
}

/// The tables must be the ones this run set up or went on in, with no run after it:
/// a later run (or `prepare`, or a load) that set them up again emptied what this one
/// wrote, and one that went on from them wrote over it.
fn check_marker(
    marker: &Marker,
    holding: Option<&Holding>,
    url: &DbUrl,
    record: &RunRecord,
) -> Result<()> {
    let this_run = Marker::of_run(
        &record.hatshop_version,
        &record.run_id,
        record.pid,
        record.process_start,
    );
    // A run that went on from an earlier one's tables is named by the note it wrote
    // in them, not by the marker; one that set them up, by the marker, and then by
    // the note too once it wrote one: a later run may have gone on from it.
    if record.went_on_from.is_none() {
        check_made_by(marker, &this_run, url, record)?;
    }
    match holding {
        Some(holding) if holding.by != this_run => bail!(
            "{url} holds the events of run {} ({}), which came after run {} in these tables \
             (it went on from them, or set them up again): the state this run left is not \
             there alone, so there is nothing to verify (verify the last run of a series)",
            holding.run,
            holding.folder,
            record.run_id
        ),
        None if record.went_on_from.is_some() => bail!(
            "{url} has no note of run {}, which went on in these tables: they were set up \
             again since, so there is nothing to verify",
            record.run_id
        ),
        _ => Ok(()),
    }
}

/// The marker must name the run that set the tables up.
fn check_made_by(marker: &Marker, this_run: &str, url: &DbUrl, record: &RunRecord) -> Result<()> {
    // A merged run's shards used the tables `hatshop prepare` made.
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
            // A damaged journal's lost rows may be any lane's.
            unlogged: crate::runner::UNLOGGED_PER_LANE + recovery.lost_rows_at_most,
        })
    }
}

impl Reach {
    /// The last event that may have been applied, or none where no lane applied any
    /// and none may have: past it, the replay need not go.
    fn horizon(&self) -> Option<u64> {
        let lanes = self.lane_last_seq.len().max(1) as u64;
        let last_applied = self.lane_last_seq.iter().flatten().max().copied();
        match (last_applied, self.unlogged) {
            (None, 0) => None,
            (last, window) => Some(
                last.unwrap_or(0)
                    .saturating_add(window.saturating_mul(lanes)),
            ),
        }
    }
}

/// What became of an event of the stream, as far as the run knows.
enum Fate {
    Applied,
    /// After the last logged event of a killed run's lane: it may have reached the store.
    MaybeApplied,
    NotApplied,
}

/// Whether a replay checks the regenerated stream against the run's `plan_sha256`.
#[derive(Clone, Copy, PartialEq)]
enum PlanCheck {
    Hash,
    /// An earlier replay of this verify checked it.
    Done,
}

/// Replays the run's stream as far as its lanes reached, telling each event's fate and
/// whether it raced another lane (`conflicts`). With [`PlanCheck::Hash`], a generated
/// stream is proved to be the one the run hashed before anything is compared:
/// regenerated as far as the run handed it out, it must give run.json's
/// `plan_sha256`, or a changed seed or spec would be blamed on the database.
fn replay(
    record: &RunRecord,
    reach: &Reach,
    check: PlanCheck,
    mut visit: impl FnMut(&OrderEvent, Fate, bool),
) -> Result<()> {
    check_file_unchanged(&record.events)?;
    let lanes = reach.lane_last_seq.len().max(1);
    let dealing = crate::runner::Dealing {
        lanes,
        ..record.dealing()
    };
    let window = reach.unlogged;
    let mut past_last = vec![0u64; lanes];
    let horizon = reach.horizon();
    let mut hasher = (check == PlanCheck::Hash)
        .then(|| planned(record))
        .flatten()
        .map(|(events, sha256)| (events, sha256, crate::workload::PlanHasher::new()));
    let held = held_events(record);
    for event in open_whole_stream(&record.events)? {
        let event = event?;
        // Replaying is work on this thread: it listens for Ctrl-C itself.
        if event.seq % 4096 == 0 && interrupt::requested() {
            bail!("verify interrupted");
        }
        // Events the tables held when the run began: earlier runs sent them all.
        if event.seq < held {
            visit(&event, Fate::Applied, false);
            continue;
        }
        if let Some((events, _, hasher)) = hasher.as_mut()
            && hasher.events() < *events
        {
            hasher.add(&event);
        }
        if horizon.is_none_or(|horizon| event.seq > horizon) {
            // Nothing past the horizon can have been applied: the replay ends there,
            // not at the end of a planned stream that may be billions of events long,
            // once the events the run hashed are hashed again.
            match &hasher {
                Some((events, _, h)) if h.events() < *events => continue,
                _ => break,
            }
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
    if let Some((events, sha256, hasher)) = hasher {
        prove_plan(events, &sha256, hasher)?;
    }
    Ok(())
}

/// The stream's first events the tables held when the run began.
fn held_events(record: &RunRecord) -> u64 {
    match &record.events {
        EventSource::Generated { workload } => workload.held_events,
        EventSource::File(_) => 0,
    }
}

/// An events file must be the one the run replayed.
fn check_file_unchanged(events: &EventSource) -> Result<()> {
    if let EventSource::File(info) = events {
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
    Ok(())
}

/// The stream regenerated for verify, hashed as far as the run handed it out
/// (`hasher`), against what the run recorded.
fn prove_plan(events: u64, sha256: &str, hasher: crate::workload::PlanHasher) -> Result<()> {
    let got = hasher.events();
    let regenerated = hasher.finish();
    if got != events || regenerated != sha256 {
        bail!(
            "run.json does not describe the stream this run replayed: regenerated from \
             its spec and seed, the first {} events hash to {regenerated}, and the run \
             recorded plan_sha256 {sha256} for {} (run.json was changed after the run?): \
             nothing is compared",
            thousands(got),
            thousands(events)
        );
    }
    Ok(())
}

/// The events a generated stream's run hashed and their hash, where it recorded them
/// (a run killed before its end recorded none; an events file is checked by its own
/// sha256).
fn planned(record: &RunRecord) -> Option<(u64, String)> {
    match &record.events {
        EventSource::Generated { .. } if record.planned_events > 0 => {
            Some((record.planned_events, record.plan_sha256.clone()?))
        }
        _ => None,
    }
}

/// The whole expected state of a few orders: a second replay that keeps only them.
fn whole_orders(
    record: &RunRecord,
    reach: &Reach,
    ids: &BTreeSet<OrderId>,
    failures: &HashMap<u64, (Target, ErrorKind)>,
) -> Result<BTreeMap<OrderId, crate::workload::Order>> {
    let mut book = OrderBook::new();
    replay(record, reach, PlanCheck::Done, |event, fate, _| {
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
    let rows: Vec<FailedWriteRow> = crate::report::loaded_run::read_rows(&path)?;
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
