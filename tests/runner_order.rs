//! The runner against the fake store (our own code under test, not a database): strict,
//! it refuses any event that arrives out of order for its target while lanes are made
//! to interleave; it also fails every other call, serves stale reads, or never answers.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::fake_store::{Behaviour, FakeStore};
use hatshop::db::Store;
use hatshop::runner::{
    self, Dealing, Pace, PhaseClock, Progress, RunClock, RunContext, RunOutcome, RunPlan,
    StopReason, StopSignal,
};
use hatshop::workload::{EventType, Generator, WorkloadSpec, preset};

fn plan(lanes: usize, check_reads: bool) -> RunPlan {
    RunPlan {
        drain_at_deadline: false,
        concurrency: lanes,
        lane_threads: 0,
        load_batch: 1000,
        pace: Pace::ClosedLoop,
        max_duration: None,
        floor: None,
        op_timeout: Duration::from_secs(30),
        retries: 0,
        check_reads,
        hash_stream: false,
        dealing: Dealing::by_target(lanes),
        shard: None,
        trace_sample: 0.0,
        give_up_unreached: None,
    }
}

/// Runs `spec` against `store` with this plan and stop signal.
async fn run_with<D: Store>(
    store: Arc<D>,
    spec: &WorkloadSpec,
    plan: RunPlan,
    stop: Arc<StopSignal>,
) -> RunOutcome {
    runner::run(
        store,
        Box::new(Generator::new(spec).map(Ok)),
        RunContext {
            interval: Duration::from_secs(1),
            plan,
            clock: RunClock::now(),
            stop,
            progress: Arc::new(Progress::default()),
            phases: Arc::new(PhaseClock::default()),
            op_log: None,
            held_orders: Vec::new(),
        },
    )
    .await
    .unwrap()
}

fn summary(outcome: &RunOutcome) -> hatshop::stats::Summary {
    outcome.stats.summary(&EventType::names(), 1.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_lanes_never_reorder_the_events_of_one_order() {
    let mut spec = preset("hatshop-random").unwrap();
    spec.events = 30_000;
    spec.initial_orders = 50; // few orders, so lanes share little and race a lot
    let store = Arc::new(FakeStore::new(Behaviour::Strict));
    // Reads are not judged: this store keeps no items.
    let outcome = run_with(store, &spec, plan(16, false), Arc::default()).await;
    assert_eq!(outcome.stats.total_ops(), 30_000);
    let summary = summary(&outcome);
    assert_eq!(summary.errors, 0, "{:?}", summary.overall.errors_by_kind);
    assert_eq!(outcome.lane_last_seq.len(), 16);
    assert!(outcome.lane_last_seq.iter().all(Option::is_some));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_lanes_keep_key_value_events_in_order_and_reads_current() {
    let mut spec = preset("kv-10w-40rw-50r").unwrap();
    spec.initial_records = 200;
    spec.warmup = 1_000;
    spec.events = 20_000;
    spec.value_size = 64;
    spec.mix.delete = 5.0;
    let store = Arc::new(FakeStore::new(Behaviour::Strict));
    let outcome = run_with(store, &spec, plan(16, true), Arc::default()).await;
    let summary = summary(&outcome);
    assert_eq!(summary.ops, 20_000);
    assert_eq!(summary.errors, 0, "{:?}", summary.overall.errors_by_kind);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lanes_on_threads_of_their_own_keep_order_and_reads_current() {
    let mut spec = preset("kv-10w-40rw-50r").unwrap();
    spec.initial_records = 200;
    spec.events = 20_000;
    let store = Arc::new(FakeStore::new(Behaviour::Strict));
    let on_threads = RunPlan {
        lane_threads: 3,
        ..plan(8, true)
    };
    let outcome = run_with(store, &spec, on_threads, Arc::default()).await;
    let summary = summary(&outcome);
    assert_eq!(summary.ops, 20_000);
    // A stale read would count as an error.
    assert_eq!(summary.errors, 0, "{:?}", summary.overall.errors_by_kind);
    assert!(outcome.lane_last_seq.iter().all(Option::is_some));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn with_conflicts_updates_race_their_order_in_other_lanes() {
    let mut spec = preset("hatshop-random").unwrap();
    spec.events = 30_000;
    spec.initial_orders = 50;
    let mut racing = plan(16, false);
    racing.dealing.conflicts = 0.5;
    let outcome = run_with(
        Arc::new(FakeStore::new(Behaviour::Strict)),
        &spec,
        racing,
        Arc::default(),
    )
    .await;
    let summary = summary(&outcome);
    assert_eq!(summary.ops, 30_000);
    // An update dealt to another lane can overtake its order's create, or trail its
    // delete: the strict store refuses it. Without conflicts (above) none are.
    let not_found: u64 = ["update_order", "update_items", "update_status"]
        .iter()
        .map(|event| errors_of(&summary, event, "not_found").0)
        .sum();
    assert!(not_found > 0, "{:?}", summary.overall.errors_by_kind);
    assert_eq!(errors_of(&summary, "create_order", "not_found").0, 0);
}

#[tokio::test]
async fn retries_cure_conflicts_and_are_counted_apart() {
    let mut spec = preset("hatshop-random").unwrap();
    spec.initial_orders = 0;
    spec.events = 2_000;
    // One lane: calls alternate fail, succeed, fail, …
    let without = run_with(
        Arc::new(FakeStore::new(Behaviour::EveryOtherConflicts)),
        &spec,
        plan(1, false),
        Arc::default(),
    )
    .await;
    let without = summary(&without);
    assert_eq!(
        without.errors, 1_000,
        "{:?}",
        without.overall.errors_by_kind
    );
    assert_eq!(without.overall.retries, 0);

    let mut retrying = plan(1, false);
    retrying.retries = 1;
    let with = run_with(
        Arc::new(FakeStore::new(Behaviour::EveryOtherConflicts)),
        &spec,
        retrying,
        Arc::default(),
    )
    .await;
    let with = summary(&with);
    // Every operation fails once and succeeds on its retry.
    assert_eq!(with.ops, 2_000);
    assert_eq!(with.errors, 0, "{:?}", with.overall.errors_by_kind);
    assert_eq!(with.overall.retries, 2_000);
}

fn errors_of(summary: &hatshop::stats::Summary, event: &str, kind: &str) -> (u64, u64) {
    let row = summary
        .events
        .iter()
        .find(|e| e.event_type == event)
        .unwrap_or_else(|| panic!("no {event} in {summary:?}"));
    (
        row.errors_by_kind.get(kind).copied().unwrap_or(0),
        row.count,
    )
}

#[tokio::test]
async fn a_stale_read_is_counted_as_stale_not_as_a_success() {
    let mut spec = preset("hatshop-random").unwrap();
    spec.events = 5_000;
    let outcome = run_with(
        Arc::new(FakeStore::new(Behaviour::DropsUpdates)),
        &spec,
        plan(4, true),
        Arc::default(),
    )
    .await;
    let orders = summary(&outcome);
    let (stale, reads) = errors_of(&orders, "read_order", "stale");
    let (wrong, _) = errors_of(&orders, "read_order", "wrong_result");
    // Most orders have had an update before they are read: those reads are stale
    // (at most three states back) or match no recent state.
    assert!(stale + wrong > reads / 2, "{orders:?}");
    assert!(stale > 0, "{orders:?}");
    assert_eq!(orders.errors, stale + wrong);

    let mut spec = preset("kv-50rw-50r").unwrap();
    spec.initial_records = 100;
    spec.warmup = 0;
    spec.events = 5_000;
    spec.value_size = 32;
    let outcome = run_with(
        Arc::new(FakeStore::new(Behaviour::DropsUpdates)),
        &spec,
        plan(4, true),
        Arc::default(),
    )
    .await;
    let records = summary(&outcome);
    let (stale, reads) = errors_of(&records, "read", "stale");
    assert!(stale > reads / 2, "{records:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_store_gives_timeouts_and_a_stop_cancels_what_is_in_flight() {
    let mut spec = preset("hatshop-random").unwrap();
    spec.initial_orders = 0;
    spec.events = 1_000_000;
    let mut silent_plan = plan(4, true);
    silent_plan.op_timeout = Duration::from_millis(200);
    silent_plan.max_duration = Some(Duration::from_millis(700));
    // A store that takes calls and never answers is measured, not given up on.
    silent_plan.give_up_unreached = Some(Duration::from_millis(100));
    let started = Instant::now();
    let outcome = run_with(
        Arc::new(FakeStore::new(Behaviour::Silent)),
        &spec,
        silent_plan,
        Arc::default(),
    )
    .await;
    // Four lanes, each timing out every 200 ms, stopped at 0.7 s: the calls in flight
    // then are let run within the deadline's grace, and time out in it.
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(outcome.stop_reason, Some(StopReason::Deadline));
    let totals = summary(&outcome);
    let kinds = &totals.overall.errors_by_kind;
    assert!(kinds.get("timeout").copied().unwrap_or(0) >= 8, "{kinds:?}");
    assert_eq!(kinds.get("cancelled"), None, "{kinds:?}");
    assert_eq!(totals.overall.cut, 0);
    assert_eq!(totals.errors, totals.ops);
    // Failed calls keep their latency: the timeouts took at least 200 ms.
    assert!(totals.overall.failed.as_ref().unwrap().max_us >= 200_000.0);
    assert_eq!(outcome.failed_writes.len() as u64, totals.errors);

    // A stop from outside (Ctrl-C) ends a run whose calls never return, at once.
    let stop = Arc::new(StopSignal::default());
    let stopper = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.stop(StopReason::Interrupted);
    });
    let started = Instant::now();
    let outcome = run_with(
        Arc::new(FakeStore::new(Behaviour::Silent)),
        &spec,
        plan(4, true),
        stop,
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(outcome.stop_reason, Some(StopReason::Interrupted));
    // The calls cut in flight are no failures of the store's: counted apart.
    assert_eq!(summary_kinds(&outcome), Vec::new());
    assert_eq!(summary(&outcome).overall.cut, 4);
}

fn summary_kinds(outcome: &RunOutcome) -> Vec<(String, u64)> {
    summary(outcome)
        .overall
        .errors_by_kind
        .into_iter()
        .collect()
}

/// A store that no call reaches any more ends the run as failed, once none has reached
/// it for the limit, with the reason and the client's last error; the calls that failed
/// to connect are counted, and the rest of a long stream is not tried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_no_call_reaches_any_more_ends_the_run_as_failed() {
    let mut spec = preset("kv-50w-50r").unwrap();
    spec.initial_records = 0;
    spec.warmup = 0;
    spec.events = 10_000_000;
    let mut gone_plan = plan(4, false);
    gone_plan.give_up_unreached = Some(Duration::from_millis(300));
    let started = Instant::now();
    let outcome = run_with(
        Arc::new(FakeStore::new(Behaviour::GoneAfter(1_000))),
        &spec,
        gone_plan,
        Arc::default(),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(outcome.stop_reason, Some(StopReason::Failed));
    let why = outcome.gave_up.as_deref().unwrap_or_default();
    assert!(
        why.starts_with("no operation reached the store for 0.3 s")
            && why.ends_with("(the last: Connection refused)"),
        "{why}"
    );
    let totals = summary(&outcome);
    assert!(totals.ops >= 1_000 && totals.ops < 10_000, "{}", totals.ops);
    let unreached = totals.overall.errors_by_kind.get("connection").copied();
    assert!(unreached.unwrap_or(0) >= 4, "{unreached:?}");
}
