//! A lane's part of the initial load: its new orders and records gathered into batches
//! and written through the store's bulk path ([`Store::load_initial`]), one batch in
//! flight per lane; each event's outcome is then noted as if it had been applied alone,
//! so read checks, failed writes and `verify` see the load as before. Events the bulk
//! path does not take (an events file may load anything) are applied one by one, in
//! stream order with the rest.

use std::sync::Arc;
use std::time::Instant;

use super::Lane;
use crate::db::{DbError, ErrorKind, InitialBatch, LOAD_BATCH_BYTES, Store, observe};
use crate::runner::call::timed_out;
use crate::runner::source::{LaneEvent, Role};
use crate::runner::watchdog::Ended;
use crate::workload::kv::fill_value;
use crate::workload::{KeyText, Operation, OrderEvent};

/// How a lane batches its load.
#[derive(Debug, Clone, Copy)]
pub struct LoadBatching {
    /// Orders or records per batch.
    pub rows: usize,
    /// Single writes in flight per batch, where the store loads by many at once.
    pub in_flight: usize,
}

/// The load events a lane has gathered and not yet written.
#[derive(Default)]
pub(super) struct Gathered {
    events: Vec<OrderEvent>,
    /// Bytes of the records' values among them.
    value_bytes: usize,
}

/// Whether the bulk path takes the event: a new order or a new record of the lane's own.
fn bulk(event: &OrderEvent, role: Role) -> bool {
    role == Role::Apply
        && matches!(
            event.op,
            Operation::CreateOrder { .. } | Operation::Write { .. }
        )
}

impl<D: Store> Lane<D> {
    /// Sends the batch once, on the shared runtime, within the call deadline and until
    /// the run stops.
    async fn write_batch_once(&mut self, events: &Arc<Vec<OrderEvent>>) -> Result<(), DbError> {
        let db = self.cx.db.clone();
        let in_flight = self.cx.load.in_flight;
        let notes = self.notes.clone();
        let batch_events = events.clone();
        let task = AbortOnDrop(self.cx.runtime.spawn(observe(notes, false, async move {
            write_batch(&*db, &batch_events, in_flight).await
        })));
        match self.watch.watch(Instant::now(), &self.cx.stop, task).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(DbError::other("the load batch's task panicked")),
            Err(Ended::TimedOut) => Err(timed_out(self.cx.op_timeout)),
            Err(Ended::Stopped) => Err(DbError::new(
                ErrorKind::Cancelled,
                "the run stopped while a load batch was in flight",
            )),
        }
    }

    /// Applies a message of load events: gathers those the bulk path takes, writing a
    /// batch whenever one is full, and applies the others alone once what was gathered
    /// before them is written. The events are taken out of `events`.
    pub(super) async fn load(&mut self, events: &mut Vec<LaneEvent>) {
        for LaneEvent { event, role, slot } in events.drain(..) {
            if self.cx.stop.is_stopped() {
                return;
            }
            if !bulk(&event, role) {
                self.write_gathered().await;
                match role {
                    Role::Apply => self.apply(&event, slot, false).await,
                    Role::Race => self.apply(&event, slot, true).await,
                    Role::Expect if self.cx.check_reads => self.expect.wrote(&event.op, true),
                    Role::Expect => {}
                }
                continue;
            }
            match &event.op {
                Operation::Write { size, .. } => self.gathered.value_bytes += *size as usize,
                Operation::CreateOrder { order } => {
                    self.gathered.value_bytes += order.payload.bytes as usize;
                }
                _ => {}
            }
            self.gathered.events.push(event);
            if self.gathered.events.len() >= self.cx.load.rows
                || self.gathered.value_bytes >= LOAD_BATCH_BYTES
            {
                self.write_gathered().await;
            }
        }
    }

    /// Writes what the lane has gathered as one batch, within the call deadline and
    /// until the run stops, and notes each event's outcome. The bulk call runs on the
    /// shared runtime, where the store's driver lives, whichever loop runs the lane.
    pub(super) async fn write_gathered(&mut self) {
        if self.gathered.events.is_empty() || self.cx.stop.is_stopped() {
            return;
        }
        let events = Arc::new(std::mem::take(&mut self.gathered.events));
        self.gathered.value_bytes = 0;
        let mut tries = 0;
        let result = loop {
            tries += 1;
            match self.write_batch_once(&events).await {
                Err(e) if e.kind == ErrorKind::Conflict && tries <= LOAD_CONFLICT_RETRIES => {}
                result => break result,
            }
        };
        let end = Instant::now();
        let result = result.map_err(|e| e.context(batch_name(&events)));
        for event in events.iter() {
            self.wrote(event, &result, None, false);
            self.last_seq = Some(event.seq);
            self.note_reach(&result, end);
            if let Err(e) = &result {
                self.unmeasured_errors += 1;
                self.cx.progress.unmeasured_failure(e);
            }
        }
        // The allocation is kept for the next batch when the task has let go of it.
        if let Ok(mut events) = Arc::try_unwrap(events) {
            events.clear();
            self.gathered.events = events;
        }
    }
}

/// Times a load batch is sent again after a conflict (a deadlock, a Galera
/// certification failure): the server rolled it back whole, so sending it again is
/// safe, and batches side by side on several nodes meet such conflicts where single
/// orders did not.
const LOAD_CONFLICT_RETRIES: u32 = 5;

/// Writes `events` (new orders and records only) as one batch.
async fn write_batch<D: Store>(
    db: &D,
    events: &[OrderEvent],
    in_flight: usize,
) -> Result<(), DbError> {
    let mut batch = InitialBatch::new(in_flight);
    let mut value = Vec::new();
    for event in events {
        match &event.op {
            Operation::CreateOrder { order } => batch.push_order(order),
            Operation::Write { key, size } => {
                fill_value(&mut value, *key, 1, *size);
                batch.push_record(KeyText::of(*key), &value);
            }
            _ => unreachable!("only new orders and records are gathered"),
        }
    }
    db.load_initial(&batch).await
}

/// The batch as an error names it: its size and its events' seqs.
fn batch_name(events: &[OrderEvent]) -> String {
    let first = events.first().map_or(0, |e| e.seq);
    let last = events.last().map_or(0, |e| e.seq);
    format!(
        "the load's batch of {} rows (events {first}–{last})",
        events.len()
    )
}

/// A task ended with its handle: a batch the watchdog gave up on or the run's stop
/// ended must not go on writing behind the run's back.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl<T> std::future::Future for AbortOnDrop<T> {
    type Output = Result<T, tokio::task::JoinError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}
