//! The runner: one run loop for every mode. A source thread reads the stream and
//! deals events to lanes by order id; each lane applies its events in order and
//! times every call; the coordinator waits for them and merges their statistics.

mod lane;
mod plan;
mod source;
mod stop;

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Result, anyhow};
use tokio::runtime::Handle;
use tokio::sync::mpsc;

use crate::db::Database;
use crate::stats::{IntervalCollector, OpRecord, RunStats, total};
use crate::workload::EventType;

pub use lane::{Progress, mismatch};
pub use plan::{Pace, RunPlan, lane_of};
pub use source::EventStream;
pub use stop::{StopReason, StopSignal};

/// Lane inbox depth in batches: the source may run this far ahead of a lane.
const INBOX_BATCHES: usize = 8;

/// One instant read on both clocks: the monotonic one times operations, the wall one
/// dates them.
#[derive(Debug, Clone, Copy)]
pub struct RunClock {
    pub instant: Instant,
    pub wall: SystemTime,
}

impl RunClock {
    pub fn now() -> Self {
        RunClock {
            instant: Instant::now(),
            wall: SystemTime::now(),
        }
    }
}

/// What a run produced, whether it finished or was stopped.
pub struct RunOutcome {
    /// The whole measured phase.
    pub stats: RunStats,
    /// The same, per interval (index, statistics), in time order.
    pub intervals: Vec<(u64, RunStats)>,
    pub interval: Duration,
    /// When measuring began, from the run clock's instant.
    pub measure_offset: Option<Duration>,
    /// Per lane, the seq of the last event it applied: the exact prefix that reached the store.
    pub lane_last_seq: Vec<Option<u64>>,
    /// From the first measured event handed out to the last measured answer.
    pub measured_elapsed: Duration,
    pub plan_sha256: Option<String>,
    pub stop_reason: Option<StopReason>,
    pub unmeasured_errors: u64,
}

/// Everything a run needs besides the database and the stream.
pub struct RunContext {
    pub plan: RunPlan,
    /// Length of the statistics intervals (latency over time, latency.hlog).
    pub interval: Duration,
    pub clock: RunClock,
    pub stop: Arc<StopSignal>,
    pub progress: Arc<Progress>,
    pub op_log: Option<mpsc::Sender<Vec<OpRecord>>>,
}

pub async fn run<D: Database>(
    db: Arc<D>,
    stream: EventStream,
    cx: RunContext,
) -> Result<RunOutcome> {
    let RunContext {
        plan,
        interval,
        clock,
        stop,
        progress,
        op_log,
    } = cx;
    let measure_start = Arc::new(OnceLock::new());
    let intervals = Arc::new(IntervalCollector::new(interval, EventType::ALL.len()));
    let check_reads = plan.check_reads && db.holds_data();
    let mut senders = Vec::with_capacity(plan.concurrency);
    let mut lanes = Vec::with_capacity(plan.concurrency);
    for _ in 0..plan.concurrency {
        let (tx, rx) = mpsc::channel(INBOX_BATCHES);
        senders.push(tx);
        let lane = lane::Lane::new(lane::LaneContext {
            db: db.clone(),
            stop: stop.clone(),
            progress: progress.clone(),
            op_log: op_log.clone(),
            measure_start: measure_start.clone(),
            intervals: intervals.clone(),
            max_duration: plan.max_duration,
            check_reads,
            epoch: clock.instant,
        });
        lanes.push(tokio::spawn(lane.run(rx)));
    }
    drop(op_log);

    let source = source::Source {
        stream,
        lanes: senders,
        stop: stop.clone(),
        runtime: Handle::current(),
        hash: plan.hash_stream,
        measure_start: measure_start.clone(),
    };
    let source_thread = std::thread::Builder::new()
        .name("event-source".into())
        .spawn(move || source.run())?;

    let mut lane_last_seq = Vec::with_capacity(lanes.len());
    let mut unmeasured_errors = 0;
    let mut last_end: Option<Instant> = None;
    for lane in lanes {
        let report = lane.await.map_err(|e| anyhow!("a lane failed: {e}"))?;
        lane_last_seq.push(report.last_seq);
        unmeasured_errors += report.unmeasured_errors;
        last_end = last_end.max(report.last_end);
    }
    let source_report = tokio::task::spawn_blocking(move || source_thread.join())
        .await?
        .map_err(|_| anyhow!("the event source panicked"))?;
    if let Some(error) = source_report.error {
        return Err(error.into());
    }
    let measured_elapsed = match (measure_start.get(), last_end) {
        (Some(start), Some(end)) => end.saturating_duration_since(*start),
        _ => Duration::ZERO,
    };
    let intervals = intervals.take();
    Ok(RunOutcome {
        stats: total(&intervals, EventType::ALL.len()),
        intervals,
        interval,
        measure_offset: measure_start.get().map(|s| s.duration_since(clock.instant)),
        lane_last_seq,
        measured_elapsed,
        plan_sha256: source_report.plan_sha256,
        stop_reason: stop.reason(),
        unmeasured_errors,
    })
}
