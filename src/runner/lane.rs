//! A lane: applies its share of the events one after another, in stream order, and
//! times each call. Events on one order all land in the same lane, which is what
//! keeps per-order order under any concurrency.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::source::LaneMsg;
use super::stop::{StopReason, StopSignal};
use crate::db::{Applied, Database, DbError, ErrorKind};
use crate::stats::{IntervalCollector, OpRecord, RunStats};
use crate::workload::{EventType, Operation, Order, OrderBook, OrderEvent, OrderId, Phase};

/// Records gathered before they go to the op log thread.
const LOG_BATCH: usize = 512;
/// Ops between updates of the shared progress counters.
const PROGRESS_EVERY: u64 = 64;

/// Counters the progress display reads.
#[derive(Default)]
pub struct Progress {
    pub measured: AtomicU64,
    pub errors: AtomicU64,
}

/// What a lane hands back when it ends (its statistics went to the interval collector).
pub struct LaneReport {
    /// The seq of the last event this lane applied (any phase).
    pub last_seq: Option<u64>,
    /// Failures during load and warm-up (not in the stats).
    pub unmeasured_errors: u64,
    /// When its last measured operation was answered.
    pub last_end: Option<Instant>,
}

/// What a call returned, before it is judged.
enum Reply {
    Done,
    Read(Option<Order>),
    Write(Applied),
}

/// Everything a lane needs besides its channel.
pub struct LaneContext<D> {
    pub db: Arc<D>,
    pub stop: Arc<StopSignal>,
    pub progress: Arc<Progress>,
    pub op_log: Option<mpsc::Sender<Vec<OpRecord>>>,
    pub measure_start: Arc<OnceLock<Instant>>,
    pub intervals: Arc<IntervalCollector>,
    pub max_duration: Option<Duration>,
    pub check_reads: bool,
    /// `start_ns` in the op log counts from here.
    pub epoch: Instant,
}

pub struct Lane<D> {
    cx: LaneContext<D>,
    /// What this lane's orders must hold, per the stream.
    book: OrderBook,
    /// Orders whose last write failed: the store's state is unknown, reads are not judged.
    uncertain: HashSet<OrderId>,
    /// The interval this lane is recording into, and its statistics.
    interval: Option<(u64, RunStats)>,
    log_batch: Vec<OpRecord>,
    last_seq: Option<u64>,
    unmeasured_errors: u64,
    last_end: Option<Instant>,
    deadline: Option<Instant>,
    pending_measured: u64,
    pending_errors: u64,
}

impl<D: Database> Lane<D> {
    pub fn new(cx: LaneContext<D>) -> Self {
        Lane {
            cx,
            book: OrderBook::new(),
            uncertain: HashSet::new(),
            interval: None,
            log_batch: Vec::with_capacity(LOG_BATCH),
            last_seq: None,
            unmeasured_errors: 0,
            last_end: None,
            deadline: None,
            pending_measured: 0,
            pending_errors: 0,
        }
    }

    pub async fn run(mut self, mut inbox: mpsc::Receiver<LaneMsg>) -> LaneReport {
        'lane: while let Some(msg) = inbox.recv().await {
            match msg {
                LaneMsg::Events(events) => {
                    for event in events {
                        if self.cx.stop.is_stopped() {
                            break 'lane;
                        }
                        self.apply(event).await;
                    }
                }
                LaneMsg::PhaseEnd(barrier) => {
                    self.flush_progress();
                    tokio::select! {
                        _ = barrier.wait() => {}
                        _ = self.cx.stop.stopped() => break 'lane,
                    }
                }
            }
        }
        drop(inbox);
        self.flush_progress();
        if !self.log_batch.is_empty() {
            self.send_log_batch().await;
        }
        if let Some((index, stats)) = &self.interval {
            self.cx.intervals.deposit(*index, stats);
        }
        LaneReport {
            last_seq: self.last_seq,
            unmeasured_errors: self.unmeasured_errors,
            last_end: self.last_end,
        }
    }

    async fn apply(&mut self, event: OrderEvent) {
        let measured = event.phase == Phase::Measure;
        if measured && self.past_deadline() {
            self.cx.stop.stop(StopReason::Deadline);
            return;
        }

        // The timed window: the call and nothing else.
        let start = Instant::now();
        let result = call(&*self.cx.db, &event.op).await;
        let end = Instant::now();

        let order_id = event.op.order_id();
        let event_type = event.op.event_type();
        let outcome = self.judge(&event.op, result);
        match &outcome {
            Ok(())
                if matches!(
                    event.op,
                    Operation::CreateOrder { .. } | Operation::DeleteOrder { .. }
                ) =>
            {
                self.uncertain.remove(&order_id);
            }
            Err(_) if event_type.is_write() => {
                self.uncertain.insert(order_id);
            }
            _ => {}
        }
        self.last_seq = Some(event.seq);
        if measured {
            self.record(&event, start, end, outcome);
        } else if outcome.is_err() {
            self.unmeasured_errors += 1;
        }
        if self.cx.check_reads {
            self.book.apply_owned(event);
        }
        if measured && self.log_batch.len() >= LOG_BATCH {
            self.send_log_batch().await;
        }
    }

    fn past_deadline(&mut self) -> bool {
        let Some(limit) = self.cx.max_duration else {
            return false;
        };
        let deadline = *self.deadline.get_or_insert_with(|| {
            *self
                .cx
                .measure_start
                .get()
                .expect("set before measured events")
                + limit
        });
        Instant::now() >= deadline
    }

    /// Turns a reply into success or a classified error, checking reads against the book.
    fn judge(&self, op: &Operation, result: Result<Reply, DbError>) -> Result<(), DbError> {
        match result? {
            Reply::Done | Reply::Write(Applied::Yes | Applied::Unknown) => Ok(()),
            Reply::Write(Applied::NotFound) => Err(DbError::new(
                ErrorKind::NotFound,
                format!("order {} not found", op.order_id()),
            )),
            Reply::Read(got) => {
                let id = op.order_id();
                if !self.cx.check_reads || self.uncertain.contains(&id) {
                    return Ok(());
                }
                match mismatch(id, self.book.get(id), got.as_ref()) {
                    None => Ok(()),
                    Some(message) => Err(DbError::new(ErrorKind::WrongResult, message)),
                }
            }
        }
    }

    fn record(
        &mut self,
        event: &OrderEvent,
        start: Instant,
        end: Instant,
        outcome: Result<(), DbError>,
    ) {
        let latency_ns = end.duration_since(start).as_nanos() as u64;
        let event_type = event.op.event_type();
        let stats = self.interval_stats(start).event(event_type.index());
        let error = match outcome {
            Ok(()) => {
                stats.record_ok(latency_ns);
                None
            }
            Err(e) => {
                stats.record_error(e.kind.as_str(), &e.message);
                self.pending_errors += 1;
                Some((e.kind.as_str(), e.message))
            }
        };
        self.last_end = Some(end);
        self.pending_measured += 1;
        if self.pending_measured >= PROGRESS_EVERY {
            self.flush_progress();
        }
        if self.cx.op_log.is_some() {
            self.log_batch.push(OpRecord {
                seq: event.seq,
                event_type: event_type.as_str(),
                order_id: event.op.order_id(),
                start_ns: start.duration_since(self.cx.epoch).as_nanos() as u64,
                latency_ns,
                error,
            });
        }
    }

    /// The statistics of the interval `start` falls in; a finished interval is handed over.
    fn interval_stats(&mut self, start: Instant) -> &mut RunStats {
        let measure_start = *self
            .cx
            .measure_start
            .get()
            .expect("set before measured events");
        let offset = start.saturating_duration_since(measure_start).as_nanos() as u64;
        let index = self.cx.intervals.index_of(offset);
        if self
            .interval
            .as_ref()
            .is_some_and(|(current, _)| *current != index)
        {
            let (finished, stats) = self.interval.take().expect("checked");
            self.cx.intervals.deposit(finished, &stats);
        }
        let types = EventType::ALL.len();
        &mut self
            .interval
            .get_or_insert_with(|| (index, RunStats::new(types)))
            .1
    }

    async fn send_log_batch(&mut self) {
        let batch = std::mem::replace(&mut self.log_batch, Vec::with_capacity(LOG_BATCH));
        if let Some(log) = &self.cx.op_log
            && log.send(batch).await.is_err()
        {
            // The writer failed; its error is reported when the run ends.
            self.cx.stop.stop(StopReason::Failed);
        }
    }

    fn flush_progress(&mut self) {
        self.cx.progress.measured.fetch_add(
            std::mem::take(&mut self.pending_measured),
            Ordering::Relaxed,
        );
        self.cx
            .progress
            .errors
            .fetch_add(std::mem::take(&mut self.pending_errors), Ordering::Relaxed);
    }
}

/// The one place an event becomes a database call.
async fn call<D: Database>(db: &D, op: &Operation) -> Result<Reply, DbError> {
    match op {
        Operation::CreateOrder { order } => db.create_order(order).await.map(|()| Reply::Done),
        Operation::ReadOrder { order_id } => db.read_order(*order_id).await.map(Reply::Read),
        Operation::UpdateOrder {
            order_id,
            changes,
            subtotal_cents,
        } => db
            .update_order(*order_id, changes, *subtotal_cents)
            .await
            .map(Reply::Write),
        Operation::UpdateStatus { order_id, status } => {
            db.update_status(*order_id, *status).await.map(Reply::Write)
        }
        Operation::DeleteOrder { order_id } => db.delete_order(*order_id).await.map(Reply::Write),
    }
}

/// Says how a read differs from what the stream expects, or `None` when it matches.
pub fn mismatch(
    order_id: OrderId,
    expected: Option<&Order>,
    got: Option<&Order>,
) -> Option<String> {
    match (expected, got) {
        (None, None) => None,
        (Some(_), None) => Some(format!(
            "order {order_id}: expected it to exist, read nothing"
        )),
        (None, Some(_)) => Some(format!("order {order_id}: expected no order, read one")),
        (Some(e), Some(g)) if e == g => None,
        (Some(e), Some(g)) => {
            let what = if e.status != g.status {
                format!(
                    "status {} instead of {}",
                    g.status.as_str(),
                    e.status.as_str()
                )
            } else if e.items.len() != g.items.len() {
                format!("{} items instead of {}", g.items.len(), e.items.len())
            } else if e.subtotal_cents != g.subtotal_cents {
                format!(
                    "subtotal {} instead of {}",
                    g.subtotal_cents, e.subtotal_cents
                )
            } else if e.items != g.items {
                "line items differ".to_string()
            } else {
                "order fields differ".to_string()
            };
            Some(format!("order {order_id}: read {what}"))
        }
    }
}
