//! A lane alone, on the embedded default store in memory (a real SQLite): what it
//! counts of the events it is handed, what it records, and what it hands back.

use std::sync::atomic::Ordering;

use super::*;
use crate::db::{AnyStore, ConnectOptions, DbUrl, Ownership, Settings};
use crate::runner::plan::Pace;
use crate::stats::RunStats;
use crate::workload::EventType;

/// The embedded default store, in memory, set up.
async fn store() -> AnyStore {
    let default = DbUrl::parse(crate::db::DEFAULT_URL).unwrap();
    let memory = default
        .store()
        .in_memory
        .expect("the default store keeps a database in memory");
    let url = DbUrl::parse(&format!("{}{memory}", crate::db::DEFAULT_URL)).unwrap();
    let options = ConnectOptions {
        concurrency: 1,
        settings: Settings::checked(url.store().scheme, url.store().settings, url.params())
            .unwrap(),
        connect_timeout: Duration::from_secs(5),
        op_timeout: Duration::from_secs(5),
        existing_only: false,
        key_value_only: true,
    };
    let store = AnyStore::connect(&url, &options).await.unwrap();
    let owner = Ownership {
        recreate: false,
        note: "a lane's unit test".into(),
    };
    store.setup(&owner).await.unwrap();
    store
}

/// A lane of a closed-loop run whose measured phase began now; its batches come back
/// on the returned receiver.
async fn lane(
    stop: Arc<StopSignal>,
) -> (
    Lane<AnyStore>,
    Arc<IntervalCollector>,
    std::sync::mpsc::Receiver<Vec<LaneEvent>>,
) {
    let epoch = Instant::now();
    let phases = Arc::new(PhaseClock::default());
    let _ = phases.measure.set(epoch);
    let intervals = Arc::new(IntervalCollector::new(
        Duration::from_secs(1),
        EventType::ALL.len(),
        1,
    ));
    let (spent, spent_rx) = std::sync::mpsc::channel();
    let cx = LaneContext {
        db: Arc::new(store().await),
        stop: stop.clone(),
        progress: Arc::new(Progress::default()),
        op_log: None,
        log_batch: log_batch(1),
        phases,
        intervals: intervals.clone(),
        failed_writes: Arc::default(),
        races: None,
        max_duration: None,
        pace: Pace::ClosedLoop,
        pacer: None,
        op_timeout: Duration::from_secs(5),
        retries: 0,
        check_reads: false,
        epoch,
        trace_sample: 0.0,
        traced: Arc::default(),
        spent,
        load: super::LoadBatching {
            rows: 100,
            in_flight: 4,
        },
        runtime: tokio::runtime::Handle::current(),
        drain_at_deadline: false,
    };
    let watch = Arc::new(CallWatch::new(epoch));
    (
        Lane::new(0, cx, stop.subscribe(), watch, Default::default()),
        intervals,
        spent_rx,
    )
}

/// `count` writes of new keys, from seq (and key) `first`, in `phase`.
fn writes(first: u64, count: u64, phase: Phase) -> Vec<LaneEvent> {
    (0..count)
        .map(|i| LaneEvent {
            event: OrderEvent {
                seq: first + i,
                phase,
                op: Operation::Write {
                    key: first + i,
                    size: 32,
                },
            },
            role: Role::Apply,
            slot: i,
        })
        .collect()
}

#[tokio::test]
async fn a_lane_records_its_measured_events_and_hands_each_batch_back() {
    let stop = Arc::new(StopSignal::default());
    let (lane, intervals, spent) = lane(stop).await;
    let progress = lane.cx.progress.clone();
    let (inbox, rx) = mpsc::channel(4);
    inbox
        .send(LaneMsg::Events(writes(0, 3, Phase::Warmup)))
        .await
        .unwrap();
    inbox
        .send(LaneMsg::Events(writes(3, 5, Phase::Measure)))
        .await
        .unwrap();
    drop(inbox);
    let report = lane.run(rx).await;

    assert_eq!(report.last_seq, Some(7));
    assert_eq!(report.unmeasured_errors, 0);
    assert!(report.last_end.is_some());
    // The warm-up's three are applied but neither counted nor recorded.
    assert_eq!(progress.measured.load(Ordering::Relaxed), 5);
    assert_eq!(progress.applied.load(Ordering::Relaxed), 8);
    assert_eq!(progress.errors.load(Ordering::Relaxed), 0);
    let recorded: Vec<(u64, RunStats)> = intervals.take();
    let total = crate::stats::total(&recorded, EventType::ALL.len());
    assert_eq!(total.total_ops(), 5);
    // Both batches come back to the source, to be filled again.
    let returned: Vec<usize> = spent.try_iter().map(|batch| batch.len()).collect();
    assert_eq!(returned, [3, 5]);
}

#[tokio::test]
async fn a_stopped_run_stops_its_lane_before_the_next_event() {
    let stop = Arc::new(StopSignal::default());
    let (lane, intervals, _spent) = lane(stop.clone()).await;
    let (inbox, rx) = mpsc::channel(4);
    stop.stop(StopReason::Interrupted);
    inbox
        .send(LaneMsg::Events(writes(0, 4, Phase::Measure)))
        .await
        .unwrap();
    drop(inbox);
    let report = lane.run(rx).await;
    assert_eq!(report.last_seq, None);
    assert!(intervals.take().is_empty());
}
