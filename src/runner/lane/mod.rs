//! A lane: applies its share of the events one after another, in stream order, and
//! times each call. Events on one order (or key) all land in the same lane, which is
//! what keeps per-target order under any concurrency.
//!
//! Every call has a deadline (`op_timeout`: a timeout, outcome unknown) and stops the
//! moment the run is interrupted, or once `--duration`'s grace is over (`cancelled`,
//! outcome unknown, counted apart from failures), both kept by the watchdog, so neither
//! a silent server nor a stuck call can hold a run past Ctrl-C or `--duration`.

mod load;
mod record;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

pub use self::load::LoadBatching;
use self::record::traced;
use super::call::{Reply, call, retry_cures, timed_out};
use super::expect::Expectations;
use super::phase_clock::PhaseClock;
use super::progress::Progress;
use super::races::{Race, Races};
use super::source::{LaneEvent, LaneMsg, Role, SpentBatches};
use super::stop::{StopReason, StopSignal};
use super::watchdog::{CallWatch, Ended};
use super::{FailedWrite, TracedOp};
use crate::client_cost::Wakeups;
use crate::db::{Applied, DbError, ErrorKind, Store};
use crate::db::{CallNotes, observe};
use crate::stats::fairness::LaneWork;
use crate::stats::{IntervalCollector, OpBatchSender, OpRecord};
use crate::workload::kv::fill_value;
use crate::workload::payload;
use crate::workload::{KeyText, Operation, OrderEvent, Phase};

/// Records gathered before they go to the op log thread.
const LOG_BATCH: usize = 512;
/// Batches a lane may have sent that are not yet in the op log's file: the lane
/// waits (outside any timed window) for the file before it runs further ahead.
pub const LOG_BATCHES_UNWRITTEN: usize = 2;
/// The most operations a killed run's lane may have applied without their rows
/// reaching the op log: its own batch, the batches not yet written, and the call in
/// flight. `verify` of a recovered folder judges what they touched against every state
/// they may have left.
pub const UNLOGGED_PER_LANE: u64 = (LOG_BATCH * (1 + LOG_BATCHES_UNWRITTEN) + 1) as u64;

/// Op-log records waiting in all lanes' batches at most, about: 64 lanes of 512 held
/// 5 MB (valgrind massif).
const RECORDS_IN_HAND: usize = 8192;

/// The op-log batch of each of `lanes` lanes: smaller with many lanes, so that memory
/// does not grow with them, and 16 at least, below which batches are handed to the
/// op-log thread far more often for little memory saved (bench/NOTES.md).
pub fn log_batch(lanes: usize) -> usize {
    (RECORDS_IN_HAND / lanes.max(1)).clamp(16, LOG_BATCH)
}

/// Ops between updates of the shared progress counters.
const PROGRESS_EVERY: u64 = 64;
/// The longest the shared counters lag a lane, so a slow lane's progress (a paced
/// run) is counted as it goes, not 64 operations at a time.
const PROGRESS_LAG: Duration = Duration::from_millis(50);

/// What a lane hands back when it ends (its statistics went to the interval collector).
pub struct LaneReport {
    /// The seq of the last event this lane applied (any phase).
    pub last_seq: Option<u64>,
    /// Failures during load and warm-up (not in the stats).
    pub unmeasured_errors: u64,
    /// When its last measured operation was answered.
    pub last_end: Option<Instant>,
    /// Under `--rate`: how late it sent the measured operations it waited for.
    pub wakeups: Wakeups,
    /// Its measured operations and the time it spent in them.
    pub work: LaneWork,
    /// Events it applied past `--duration`'s deadline, unmeasured.
    pub drained: u64,
}

/// The calls made for one operation.
struct Attempt {
    /// The last call's answer.
    result: Result<Reply, DbError>,
    /// The node that served the last call (0: not known).
    node: u16,
    attempts: u32,
    /// Time all calls waited for a pooled connection (stores that keep a pool).
    queued_ns: Option<u64>,
    /// The server's trace ids of the last call, when it was traced.
    trace_ids: Vec<u128>,
    /// What reads the server's time of the last call, when it was traced.
    follow_up: Option<crate::db::FollowUp>,
    /// The first unknown-outcome failure before the last call, if any.
    unknown_before: Option<ErrorKind>,
}

/// Where and how often an operation was sent, and how long it queued, for its record.
#[derive(Clone, Copy)]
struct Served {
    node: u16,
    attempts: u32,
    queued_ns: Option<u64>,
}

/// Everything a lane needs besides its channel.
pub struct LaneContext<D> {
    pub db: Arc<D>,
    pub stop: Arc<StopSignal>,
    pub progress: Arc<Progress>,
    pub op_log: Option<OpBatchSender>,
    /// Records a lane sends to the op log at once ([`log_batch`]).
    pub log_batch: usize,
    pub phases: Arc<PhaseClock>,
    pub intervals: Arc<IntervalCollector>,
    pub failed_writes: Arc<Mutex<Vec<FailedWrite>>>,
    /// Orders lanes race on, with `conflicts`.
    pub races: Option<Arc<Races>>,
    pub max_duration: Option<Duration>,
    /// Closed loop, or open loop: each operation of the warm-up and measured phases
    /// sent at its slot's time whatever the answers before it did.
    pub pace: super::plan::Pace,
    /// Wakes the lane when an operation is due (with `rate`).
    pub pacer: Option<super::pacer::Pacer>,
    pub op_timeout: Duration,
    pub retries: u32,
    pub check_reads: bool,
    /// `start_ns` in the op log counts from here.
    pub epoch: Instant,
    /// Share of measured operations traced on the server (`--trace-sample`).
    pub trace_sample: f64,
    /// The traced operations, with the server's ids of their traces.
    pub traced: Arc<Mutex<Vec<TracedOp>>>,
    /// Where the lane hands back each batch it has applied.
    pub spent: SpentBatches,
    /// How the lane batches its part of the initial load.
    pub load: LoadBatching,
    /// The shared runtime, where a load batch's bulk call runs.
    pub runtime: tokio::runtime::Handle,
    /// See [`super::plan::RunPlan::drain_at_deadline`].
    pub drain_at_deadline: bool,
}

/// One lane: it applies its events in order, times each call and checks each read.
pub struct Lane<D> {
    cx: LaneContext<D>,
    expect: Expectations,
    stop_rx: tokio::sync::watch::Receiver<bool>,
    /// Where the watchdog sees this lane's call in flight, to end it at its deadline.
    watch: Arc<CallWatch>,
    /// The bytes of the value being written, filled before the timed window.
    value: Vec<u8>,
    /// The text of a new order's payload, made before the timed window as a value is.
    payload: String,
    /// Where the store notes which node served the current call, and its pool wait.
    notes: Arc<CallNotes>,
    log_batch: Vec<OpRecord>,
    /// Permits for batches sent to the op log and not yet in its file.
    log_room: Arc<tokio::sync::Semaphore>,
    last_seq: Option<u64>,
    unmeasured_errors: u64,
    last_end: Option<Instant>,
    wakeups: Wakeups,
    work: LaneWork,
    pending_measured: u64,
    pending_errors: u64,
    pending_applied: u64,
    pending_answered: u64,
    /// When the lane last added its pending counts to the shared ones.
    flushed_at: Instant,
    /// Load events gathered for the store's bulk path, not yet written.
    gathered: load::Gathered,
    /// Past `--duration`'s deadline, applying what it was dealt, unmeasured.
    draining: bool,
    /// The events it so applied.
    drained: u64,
}

impl<D: Store> Lane<D> {
    /// Lane `index` (0, 1, …) of the run, expecting `expect` of the orders it reads
    /// before writing them.
    pub fn new(
        index: usize,
        cx: LaneContext<D>,
        stop_rx: tokio::sync::watch::Receiver<bool>,
        watch: Arc<CallWatch>,
        expect: Expectations,
    ) -> Self {
        let log_batch = cx.log_batch;
        Lane {
            cx,
            expect,
            stop_rx,
            watch,
            value: Vec::new(),
            payload: String::new(),
            notes: Arc::new(CallNotes::of_lane(index)),
            log_batch: Vec::with_capacity(log_batch),
            log_room: Arc::new(tokio::sync::Semaphore::new(LOG_BATCHES_UNWRITTEN)),
            last_seq: None,
            unmeasured_errors: 0,
            last_end: None,
            wakeups: Wakeups::default(),
            work: LaneWork::default(),
            pending_measured: 0,
            pending_errors: 0,
            pending_applied: 0,
            pending_answered: 0,
            flushed_at: Instant::now(),
            gathered: load::Gathered::default(),
            draining: false,
            drained: 0,
        }
    }

    /// Applies events until the source closes the inbox or the run stops.
    pub async fn run(mut self, mut inbox: mpsc::Receiver<LaneMsg>) -> LaneReport {
        'lane: while let Some(msg) = inbox.recv().await {
            match msg {
                LaneMsg::Events(mut events)
                    if events.first().is_some_and(|e| e.event.phase == Phase::Load) =>
                {
                    // A message never spans two phases: the source ends each first.
                    self.load(&mut events).await;
                    let _ = self.cx.spent.send(events);
                }
                LaneMsg::Events(events) => {
                    for LaneEvent { event, role, slot } in &events {
                        if self.cx.stop.is_stopped() && !self.drains() {
                            break 'lane;
                        }
                        match role {
                            Role::Apply => self.apply(event, *slot, false).await,
                            Role::Race => self.apply(event, *slot, true).await,
                            Role::Expect => {
                                if self.cx.check_reads {
                                    self.expect.wrote(&event.op, true);
                                }
                            }
                        }
                    }
                    // Gone with the source, the batch is dropped here instead.
                    let _ = self.cx.spent.send(events);
                }
                LaneMsg::PhaseEnd(barrier) => {
                    self.write_gathered().await;
                    self.flush_progress();
                    tokio::select! {
                        _ = barrier.wait() => {}
                        _ = self.cx.stop.stopped() => break 'lane,
                    }
                }
            }
        }
        drop(inbox);
        self.watch.set_done();
        // A stream that ends in its load (no measured events) leaves a batch gathered.
        self.write_gathered().await;
        self.flush_progress();
        if !self.log_batch.is_empty() {
            self.send_log_batch().await;
        }
        LaneReport {
            last_seq: self.last_seq,
            unmeasured_errors: self.unmeasured_errors,
            last_end: self.last_end,
            wakeups: self.wakeups,
            work: self.work,
            drained: self.drained,
        }
    }

    /// Whether the lane goes on applying what it was dealt though the run stopped: at
    /// `--duration`'s deadline, where the run drains, until the grace ends the calls.
    fn drains(&mut self) -> bool {
        let drains = self.cx.drain_at_deadline
            && self.cx.stop.reason() == Some(StopReason::Deadline)
            && !self.cx.stop.calls_ended();
        self.draining = drains;
        drains
    }

    /// Applies one event; `races`: its target lives in another lane, which expects it.
    async fn apply(&mut self, event: &OrderEvent, slot: u64, races: bool) {
        let due = self.due(event.phase, slot);
        // Past the deadline, a draining lane sends at once and measures nothing.
        if !self.draining && !self.wait_for_slot(event.phase, due).await && !self.drains() {
            return;
        }
        let measured = event.phase == Phase::Measure && !self.draining;
        if self.draining {
            self.drained += 1;
        }
        let key = KeyText::of(event.op.target().id());
        if let Operation::Write { key: k, size } | Operation::Rewrite { key: k, size, .. } =
            &event.op
        {
            let version = match event.op {
                Operation::Rewrite { version, .. } => version,
                _ => 1,
            };
            fill_value(&mut self.value, *k, version, *size);
        }
        if let Operation::CreateOrder { order } = &event.op {
            payload::fill(&mut self.payload, order.order_id, order.payload);
        }

        // How a raced order's read will be judged depends on the races in flight now.
        let race = match (&event.op, &self.cx.races) {
            (Operation::ReadOrder { order_id }, Some(races)) => races.of(*order_id),
            _ => Race::None,
        };

        let trace = measured && traced(event.seq, self.cx.trace_sample);

        // The timed window: the call (and its retries) and nothing else.
        let start = Instant::now();
        let mut attempt = self.call_with_retries(&event.op, &key, trace, start).await;
        let end = Instant::now();

        self.keep_trace(event, trace, end.duration_since(start), &mut attempt)
            .await;
        let outcome = self.judge(&event.op, attempt.result, race);
        if event.op.event_type().is_write() {
            self.wrote(event, &outcome, attempt.unknown_before, races);
        }
        self.last_seq = Some(event.seq);
        self.note_reach(&outcome, end);
        if measured {
            let served = Served {
                node: attempt.node,
                attempts: attempt.attempts,
                queued_ns: attempt.queued_ns,
            };
            self.record(event, due, start, end, outcome, served);
            if self.log_batch.len() >= self.cx.log_batch {
                self.send_log_batch().await;
            }
        } else if let Err(e) = &outcome {
            self.unmeasured_errors += 1;
            self.cx.progress.unmeasured_failure(e);
        } else if event.phase == Phase::Warmup && !self.draining {
            // Service time, as the measured operations are timed.
            let took = end.duration_since(start).as_nanos() as u64;
            let queued = attempt.queued_ns.unwrap_or(0);
            self.cx
                .phases
                .warmup_latency
                .add(took.saturating_sub(queued));
        }
    }

    /// Waits for the event's slot under `--rate` (or the deadline, if that comes
    /// first); false when the run stopped or is past its deadline, and the event is
    /// not to be sent.
    async fn wait_for_slot(&mut self, phase: Phase, due: Option<Instant>) -> bool {
        if let (Some(due), Some(pacer)) = (due, &self.cx.pacer) {
            // Early: wait for the slot. Late (the lane was busy): send at once; the
            // response time counts from the slot, not from now.
            let wake = self.deadline(phase).map_or(due, |d| d.min(due));
            tokio::select! {
                _ = pacer.until(wake) => {}
                _ = self.stop_rx.wait_for(|&stopped| stopped) => return false,
            }
            // The database holds the lane until its last answer; from then, or from the
            // slot if that is later, any delay before sending is the client's own.
            if phase == Phase::Measure && !self.past_deadline(phase) {
                let free = self.last_end.map_or(due, |end| end.max(due));
                self.wakeups.sent(due, free, Instant::now());
            }
        }
        if self.past_deadline(phase) {
            self.cx.stop.stop(StopReason::Deadline);
            return false;
        }
        true
    }

    /// What a write's outcome tells: a failed write noted, a race answered or settled,
    /// and the state this lane now expects its target to read back.
    fn wrote(
        &mut self,
        event: &OrderEvent,
        outcome: &Result<(), DbError>,
        unknown_before: Option<ErrorKind>,
        races: bool,
    ) {
        if let Err(e) = outcome {
            // A retry after an unknown outcome may fail for a definite reason (e.g. the
            // row is there now): the write itself stays unknown.
            self.note_failed_write(event, unknown_before.unwrap_or(e.kind));
        }
        if races && let Some(shared) = &self.cx.races {
            shared.answered(event.op.target().id(), outcome.is_ok());
        }
        if let (Operation::DeleteOrder { order_id }, Some(shared)) = (&event.op, &self.cx.races) {
            shared.settled(*order_id);
        }
        // A racing write is expected by its target's own lane, not here.
        if self.cx.check_reads && !races {
            self.expect.wrote(&event.op, outcome.is_ok());
        }
    }

    /// Calls the store, again after a failure a retry can cure, up to `--retries`
    /// times; each call has its own deadline (the first counts from `start`) and stops
    /// when the run does.
    async fn call_with_retries(
        &mut self,
        op: &Operation,
        key: &KeyText,
        trace: bool,
        start: Instant,
    ) -> Attempt {
        let mut attempts = 0;
        let mut unknown_before = None;
        let mut queued_ns: Option<u64> = None;
        loop {
            attempts += 1;
            let began = if attempts == 1 { start } else { Instant::now() };
            let notes = self.notes.clone();
            let call = observe(
                notes,
                trace,
                call(&*self.cx.db, op, key, &self.value, &self.payload),
            );
            let result = match self.watch.watch(began, &self.cx.stop, call).await {
                Ok(result) => result,
                Err(Ended::TimedOut) => Err(timed_out(self.cx.op_timeout)),
                Err(Ended::Stopped) => Err(DbError::new(
                    ErrorKind::Cancelled,
                    "the run stopped while the call was in flight",
                )),
            };
            let node = self.notes.node();
            if let Some(ns) = self.notes.queued_ns() {
                queued_ns = Some(queued_ns.unwrap_or(0) + ns);
            }
            match &result {
                Err(e) if attempts <= self.cx.retries && retry_cures(e.kind) => {
                    if e.kind.outcome_unknown() {
                        unknown_before.get_or_insert(e.kind);
                    }
                }
                _ => {
                    let follow_up = if trace && result.is_ok() {
                        self.notes.take_follow_up()
                    } else {
                        None
                    };
                    return Attempt {
                        result,
                        node,
                        attempts,
                        queued_ns,
                        trace_ids: if trace {
                            self.notes.take_trace_ids()
                        } else {
                            Vec::new()
                        },
                        follow_up,
                        unknown_before,
                    };
                }
            }
        }
    }

    /// Runs a traced call's follow-up (after its clock stopped), within the call's
    /// deadline and until the run stops.
    async fn follow_up(&mut self, read: crate::db::FollowUp) -> Option<(f64, usize)> {
        tokio::select! {
            biased;
            server = tokio::time::timeout(self.cx.op_timeout, read) => server.ok().flatten(),
            _ = self.stop_rx.wait_for(|&stopped| stopped) => None,
        }
    }

    /// When an operation is due under `--rate` (the load phase is not paced).
    fn due(&self, phase: Phase, slot: u64) -> Option<Instant> {
        let began = match phase {
            Phase::Load => return None,
            Phase::Warmup => self.cx.phases.warmup.get()?,
            Phase::Measure => self.cx.phases.measure.get()?,
        };
        let due_s = self.cx.pace.due_s(slot, phase == Phase::Measure)?;
        Some(*began + Duration::from_secs_f64(due_s))
    }

    /// `--duration` caps the measured phase, and the warm-up too.
    fn past_deadline(&self, phase: Phase) -> bool {
        self.deadline(phase)
            .is_some_and(|deadline| Instant::now() >= deadline)
    }

    fn deadline(&self, phase: Phase) -> Option<Instant> {
        let limit = self.cx.max_duration?;
        let began = match phase {
            Phase::Load => return None,
            Phase::Warmup => self.cx.phases.warmup.get()?,
            Phase::Measure => self.cx.phases.measure.get()?,
        };
        Some(*began + limit)
    }

    /// Turns a reply into success or a classified error, checking reads.
    fn judge(
        &mut self,
        op: &Operation,
        result: Result<Reply, DbError>,
        race: Race,
    ) -> Result<(), DbError> {
        match result? {
            Reply::Done | Reply::Write(Applied::Yes | Applied::Unknown) => Ok(()),
            Reply::Write(Applied::NotFound) => Err(DbError::new(
                ErrorKind::NotFound,
                match op.target() {
                    crate::workload::Target::Order(id) => format!("order {id} not found"),
                    crate::workload::Target::Key(id) => {
                        format!("key {:?} not found", KeyText::of(id))
                    }
                },
            )),
            Reply::Order(got) if self.cx.check_reads => {
                let verdict = self.expect.judge_order(op.target().id(), got.as_ref());
                match (&verdict, race) {
                    (Ok(()), _) | (_, Race::None) => verdict,
                    // A racing update failed: the lane cannot know the state.
                    (_, Race::Failed) => Ok(()),
                    // Every racing update was answered before this read was sent:
                    // nothing where the order must be is the store's. An older state is
                    // not judged: under last-write-wins a racing update can land last
                    // and win (a lost update, which verify counts), so the read is right.
                    (Err(e), Race::Raced { settled: true }) if e.kind == ErrorKind::Missing => {
                        verdict
                    }
                    (_, Race::Raced { .. }) => Ok(()),
                }
            }
            Reply::Value(got) if self.cx.check_reads => match op {
                Operation::Read { key, version } => {
                    self.expect.judge_key(*key, *version, got.as_deref())
                }
                _ => Ok(()),
            },
            Reply::Order(_) | Reply::Value(_) => Ok(()),
        }
    }

    fn note_failed_write(&mut self, event: &OrderEvent, kind: ErrorKind) {
        self.cx
            .failed_writes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(FailedWrite {
                seq: event.seq,
                event_type: event.op.event_type().as_str(),
                target: event.op.target().id(),
                error_kind: kind,
            });
    }
}

#[cfg(test)]
mod tests;
