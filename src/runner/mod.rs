//! The runner: one run loop for every mode. A source thread reads the stream and
//! deals events to lanes by target; each lane applies its events in order and times
//! every call; the coordinator waits for them and merges their statistics.

mod call;
mod expect;
pub mod faults;
mod lane;
mod lane_threads;
mod pacer;
mod phase_clock;
mod plan;
mod progress;
mod races;
mod reach;
mod source;
mod stages;
mod stop;
mod stream;
mod watchdog;
mod watchers;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, anyhow};
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use watchers::Watchers;

use crate::client_cost::{ClientCost, ServerCpu, Wakeups};
use crate::db::{ErrorKind, Store};
use crate::host_load::HostLoad;
use crate::stats::fairness::{Fairness, LaneWork};
use crate::stats::{IntervalCollector, RunStats, total};
use crate::workload::{EventType, OrderId, StateHash};

pub use expect::Expectations;
pub use lane::{LoadBatching, UNLOGGED_PER_LANE};
pub use lane_threads::LaneThreads;
pub use phase_clock::{
    AfterLoad, BeforeMeasuring, LoadTook, PhaseClock, UNMEASURED_FAILURES_TOLERATED, Unmeasured,
};
pub use plan::{Dealing, Dealt, MeasureFloor, Pace, RunPlan, Shard, lane_of};
pub use progress::{IntervalLatency, Progress};
pub use source::EventStream;
pub use stages::{MOST_STAGES, Stages};
pub use stop::{StopReason, StopSignal};
pub use stream::{open_stream, open_whole_stream};

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
    /// Both clocks read at once: one to time, one to write down.
    pub fn now() -> Self {
        RunClock {
            instant: Instant::now(),
            wall: SystemTime::now(),
        }
    }
}

/// A write that failed, in any phase: what `verify` needs to know what may or may not
/// have been applied.
#[derive(Debug, Clone)]
pub struct FailedWrite {
    pub seq: u64,
    pub event_type: &'static str,
    /// The order id or key index.
    pub target: u64,
    pub error_kind: ErrorKind,
}

/// A measured operation traced on the server (`--trace-sample`): its service time as
/// the client measured it, and the ids of its requests' traces (read after the run)
/// or the server's time as read right after the call (µs and statements).
#[derive(Debug, Clone)]
pub struct TracedOp {
    pub seq: u64,
    pub event_type: &'static str,
    pub client_ns: u64,
    pub trace_ids: Vec<u128>,
    pub server: Option<(f64, usize)>,
}

/// What a run produced, whether it finished or was stopped.
pub struct RunOutcome {
    /// The whole measured phase.
    pub stats: RunStats,
    /// What the client spent measuring (none if measuring never began).
    pub client: Option<ClientCost>,
    /// The CPU of the server processes hatshop started, over the same window.
    pub server_cpu: Option<ServerCpu>,
    /// How busy the host was over the same window.
    pub host_load: Option<HostLoad>,
    /// The same, per interval (index, statistics), in time order.
    pub intervals: Vec<(u64, RunStats)>,
    pub interval: Duration,
    /// When measuring began, from the run clock's instant.
    pub measure_offset: Option<Duration>,
    /// Per lane, the seq of the last event it applied: the exact prefix that reached the store.
    pub lane_last_seq: Vec<Option<u64>>,
    /// How evenly the lanes shared the measured operations.
    pub fairness: Option<Fairness>,
    /// From the first measured event handed out to the last measured answer.
    pub measured_elapsed: Duration,
    /// sha256 of the events handed out (all of them when `stream_complete`).
    pub plan_sha256: Option<String>,
    pub planned_events: u64,
    pub stream_complete: bool,
    pub stop_reason: Option<StopReason>,
    /// What stopped the stream, if it failed (e.g. a bad line in an events file).
    pub stream_error: Option<String>,
    /// Why the measured phase never began: the load failed, or what it came to could
    /// not be kept on disk.
    pub not_measured: Option<String>,
    /// Why the run gave up on a store it could no longer reach, if it did.
    pub gave_up: Option<String>,
    pub unmeasured_errors: u64,
    /// Events the lanes applied past `--duration`'s deadline, unmeasured (the drain).
    pub drained: u64,
    pub failed_writes: Vec<FailedWrite>,
    pub traced: Vec<TracedOp>,
}

/// Everything a run needs besides the database and the stream.
pub struct RunContext {
    pub plan: RunPlan,
    /// Length of the statistics intervals (latency over time, latency.hlog).
    pub interval: Duration,
    pub clock: RunClock,
    pub stop: Arc<StopSignal>,
    pub progress: Arc<Progress>,
    pub phases: Arc<PhaseClock>,
    pub op_log: Option<crate::stats::OpBatchSender>,
    /// The orders the database held when the run began (`held_events`) and the state
    /// each is in: what the lanes expect to read of orders no lane of this run wrote.
    pub held_orders: Vec<(OrderId, StateHash)>,
}

/// What the lanes of one run share, besides the store.
struct LaneShared {
    intervals: Arc<IntervalCollector>,
    failed_writes: Arc<Mutex<Vec<FailedWrite>>>,
    traced: Arc<Mutex<Vec<TracedOp>>>,
    races: Option<Arc<races::Races>>,
    pacer: Option<pacer::Pacer>,
    check_reads: bool,
}

impl LaneShared {
    /// What the lanes of a run of `cx` share: interval statistics sharded by the threads
    /// that record into them, and the pacer, races and checks the plan asks for.
    fn new(cx: &RunContext, lane_threads: Option<&LaneThreads>) -> Result<Self> {
        let plan = &cx.plan;
        Ok(LaneShared {
            intervals: Arc::new(IntervalCollector::new(
                cx.interval,
                EventType::ALL.len(),
                Handle::current().metrics().num_workers()
                    + lane_threads.map_or(0, LaneThreads::count),
            )),
            failed_writes: Arc::new(Mutex::new(Vec::new())),
            traced: Arc::new(Mutex::new(Vec::new())),
            // Shared only when updates race (`conflicts`).
            races: (plan.dealing.conflicts > 0.0).then(|| Arc::new(races::Races::default())),
            pacer: match plan.pace.rate() {
                Some(_) => Some(pacer::Pacer::start().context("cannot start the pacer thread")?),
                None => None,
            },
            check_reads: plan.check_reads,
        })
    }
}

/// The one run loop: deals the stream to lanes by order or key, runs them until the
/// stream ends or a stop, and gathers what they measured. Shutdown is `cx.stop`.
pub async fn run<D: Store>(
    db: Arc<D>,
    stream: EventStream,
    mut cx: RunContext,
) -> Result<RunOutcome> {
    // The lanes hold the op log's only senders, so that it ends when they do.
    let op_log = cx.op_log.take();
    let expected = held_expectations(&cx.plan, std::mem::take(&mut cx.held_orders));
    let plan = &cx.plan;
    let lane_threads = match plan.lane_threads {
        0 => None,
        count => Some(LaneThreads::start(count).context("cannot start the lane threads")?),
    };
    let shared = LaneShared::new(&cx, lane_threads.as_ref())?;
    let _ = cx.progress.intervals.set(shared.intervals.clone());
    let (watchers, watches) = Watchers::start(&cx);
    let (spent, spent_rx) = std::sync::mpsc::channel();
    let (senders, lanes) = spawn_lanes(
        &db,
        &cx,
        &shared,
        watches.into_iter().zip(expected).collect(),
        &spent,
        op_log,
        lane_threads.as_ref(),
    );
    let source = source::Source {
        stream,
        lanes: senders,
        spent: spent_rx,
        stop: cx.stop.clone(),
        runtime: Handle::current(),
        hash: plan.hash_stream,
        dealing: plan.dealing,
        first_lane: plan
            .shard
            .map_or(0, |shard| shard.first_lane(plan.concurrency)),
        races: shared.races.clone(),
        phases: cx.phases.clone(),
        floor: plan.floor,
        pace: plan.pace.clone(),
        progress: cx.progress.clone(),
        failed_writes: shared.failed_writes.clone(),
        drain_at_deadline: plan.drain_at_deadline,
    };
    let source_thread = std::thread::Builder::new()
        .name("event-source".into())
        .spawn(move || {
            let report = source.run();
            crate::client_cost::thread_ends();
            report
        })?;
    let lanes = lanes_ended(lanes).await?;
    drop(lane_threads);
    let source_report = tokio::task::spawn_blocking(move || source_thread.join())
        .await?
        .map_err(|_| anyhow!("the event source panicked"))?;
    Ok(RunOutcome {
        gave_up: watchers.end().await,
        ..outcome(&cx, shared, lanes, source_report)
    })
}

/// What each lane expects of the held orders dealt to it, from the start.
fn held_expectations(plan: &RunPlan, held: Vec<(OrderId, StateHash)>) -> Vec<Expectations> {
    let mut expected: Vec<Expectations> = (0..plan.concurrency)
        .map(|_| Expectations::default())
        .collect();
    let first = plan
        .shard
        .map_or(0, |shard| shard.first_lane(plan.concurrency));
    for (order_id, state) in held {
        let lane = lane_of(order_id, plan.dealing.lanes);
        if let Some(expect) = lane
            .checked_sub(first)
            .and_then(|lane| expected.get_mut(lane))
        {
            expect.held(order_id, state);
        }
    }
    expected
}

/// One lane per in-flight slot, each with its watch and what it expects of held orders,
/// on its own task, of the lane threads if any, else of the calling runtime: their
/// inboxes and handles.
fn spawn_lanes<D: Store>(
    db: &Arc<D>,
    cx: &RunContext,
    shared: &LaneShared,
    starts: Vec<(Arc<watchdog::CallWatch>, Expectations)>,
    spent: &source::SpentBatches,
    op_log: Option<crate::stats::OpBatchSender>,
    threads: Option<&LaneThreads>,
) -> (
    Vec<mpsc::Sender<source::LaneMsg>>,
    Vec<tokio::sync::oneshot::Receiver<lane::LaneReport>>,
) {
    let plan = &cx.plan;
    let mut senders = Vec::with_capacity(plan.concurrency);
    let mut lanes = Vec::with_capacity(plan.concurrency);
    for (index, (watch, expect)) in starts.into_iter().enumerate() {
        let (tx, rx) = mpsc::channel(INBOX_BATCHES);
        senders.push(tx);
        let lane = lane::Lane::new(
            index,
            lane::LaneContext {
                db: db.clone(),
                stop: cx.stop.clone(),
                progress: cx.progress.clone(),
                op_log: op_log.clone(),
                log_batch: lane::log_batch(plan.concurrency),
                phases: cx.phases.clone(),
                intervals: shared.intervals.clone(),
                failed_writes: shared.failed_writes.clone(),
                races: shared.races.clone(),
                max_duration: plan.max_duration,
                pace: plan.pace.clone(),
                pacer: shared.pacer.clone(),
                op_timeout: plan.op_timeout,
                retries: plan.retries,
                check_reads: shared.check_reads,
                epoch: cx.clock.instant,
                trace_sample: plan.trace_sample,
                traced: shared.traced.clone(),
                spent: spent.clone(),
                load: LoadBatching {
                    rows: plan.load_batch.max(1),
                    in_flight: (crate::db::LOAD_REQUESTS_IN_FLIGHT / plan.concurrency.max(1))
                        .max(1),
                },
                runtime: Handle::current(),
                drain_at_deadline: plan.drain_at_deadline,
            },
            cx.stop.subscribe(),
            watch,
            expect,
        );
        lanes.push(match threads {
            Some(threads) => threads.spawn(index, lane.run(rx)),
            None => {
                let (report, reported) = tokio::sync::oneshot::channel();
                tokio::spawn(async move {
                    let _ = report.send(lane.run(rx).await);
                });
                reported
            }
        });
    }
    (senders, lanes)
}

/// What the lanes say when they have all ended.
struct LanesEnded {
    last_seq: Vec<Option<u64>>,
    unmeasured_errors: u64,
    drained: u64,
    last_end: Option<Instant>,
    wakeups: Wakeups,
    work: Vec<LaneWork>,
}

async fn lanes_ended(
    lanes: Vec<tokio::sync::oneshot::Receiver<lane::LaneReport>>,
) -> Result<LanesEnded> {
    let mut ended = LanesEnded {
        last_seq: Vec::with_capacity(lanes.len()),
        unmeasured_errors: 0,
        drained: 0,
        last_end: None,
        wakeups: Wakeups::default(),
        work: Vec::with_capacity(lanes.len()),
    };
    for lane in lanes {
        // A lane that panicked dropped its sender unanswered.
        let report = lane.await.map_err(|_| anyhow!("a lane ended without its report (it panicked, or its lane thread's event loop failed)"))?;
        ended.last_seq.push(report.last_seq);
        ended.unmeasured_errors += report.unmeasured_errors;
        ended.drained += report.drained;
        ended.last_end = ended.last_end.max(report.last_end);
        ended.wakeups.add(&report.wakeups);
        ended.work.push(report.work);
    }
    Ok(ended)
}

/// What the lanes gathered in `shared`, taken out whatever a lane's panic left.
fn taken<T>(shared: &Mutex<Vec<T>>) -> Vec<T> {
    std::mem::take(&mut *shared.lock().unwrap_or_else(|p| p.into_inner()))
}

/// The run's statistics and costs, from what the lanes and the source left.
fn outcome(
    cx: &RunContext,
    shared: LaneShared,
    lanes: LanesEnded,
    source_report: source::SourceReport,
) -> RunOutcome {
    let phases = &cx.phases;
    let mut measured_elapsed = match (phases.measure.get(), lanes.last_end) {
        (Some(start), Some(end)) => end.saturating_duration_since(*start),
        _ => Duration::ZERO,
    };
    // Stopped by --duration, the measured phase lasted that long, whether or not an
    // operation ended in its last moments (lanes starved of the CPU end none): rates
    // are per second of it, as pgbench -T gives them.
    if let (Some(limit), Some(StopReason::Deadline), Some(_)) =
        (cx.plan.max_duration, cx.stop.reason(), phases.measure.get())
    {
        measured_elapsed = measured_elapsed.max(limit);
    }
    let intervals = shared.intervals.take();
    let stats = total(&intervals, EventType::ALL.len());
    let paced = cx.plan.pace.rate().is_some();
    let client = phases.measure_cpu.get().map(|start| ClientCost {
        wakeups: paced.then_some(lanes.wakeups),
        ..ClientCost::since(start, stats.total_ops())
    });
    let server_cpu = phases
        .measure_cpu
        .get()
        .and_then(|start| ServerCpu::since(start, stats.total_ops()));
    let host_load = match (phases.measure_host.get(), &client) {
        (Some(Some(start)), Some(client)) => {
            HostLoad::since(start, client.cpu_s, server_cpu.as_ref().map(|s| s.cpu_s))
        }
        _ => None,
    };
    RunOutcome {
        stats,
        client,
        server_cpu,
        host_load,
        intervals,
        interval: cx.interval,
        measure_offset: phases
            .measure
            .get()
            .map(|s| s.duration_since(cx.clock.instant)),
        lane_last_seq: lanes.last_seq,
        fairness: Fairness::of(&lanes.work),
        measured_elapsed,
        plan_sha256: source_report.plan_sha256,
        planned_events: source_report.planned_events,
        stream_complete: source_report.complete,
        stop_reason: cx.stop.reason(),
        stream_error: source_report.error.map(|e| e.to_string()),
        not_measured: source_report.not_measured,
        gave_up: None,
        unmeasured_errors: lanes.unmeasured_errors,
        drained: lanes.drained,
        failed_writes: taken(&shared.failed_writes),
        traced: taken(&shared.traced),
    }
}
