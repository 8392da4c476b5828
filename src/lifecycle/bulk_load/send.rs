//! Sending the batches: `concurrency` senders take the next batch in turn, make its
//! rows and encode them, then time only the store's call. A pass waits for its start
//! (`--every`); a stop (Ctrl-C, a failed batch) ends every sender after its batch.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::db::{
    AnyStore, BatchLimit, BulkLoad, CallNotes, DbError, ErrorKind, LoadBatch, LoadError, observe,
};
use crate::observe::resources::loopback_sent;
use crate::result_dir::load_record::BatchRow;
use crate::result_dir::load_record::LoadPlan;
use crate::runner::{StopReason, StopSignal};

/// A batch that ended, and the limit it ran into, if that is why it failed.
pub struct Sent {
    pub row: BatchRow,
    pub limit: Option<BatchLimit>,
    /// The server's ids of its traces, when it was traced.
    pub trace_ids: Vec<u128>,
}

/// What every sender shares: the store, the plan, and the clocks and signals of the load.
pub struct Senders {
    pub store: Arc<AnyStore>,
    pub plan: LoadPlan,
    pub op_timeout: Duration,
    pub stop: Arc<StopSignal>,
    /// When the load began: passes start from it, batch times count from it.
    pub began: Instant,
}

impl Senders {
    /// Sends every batch (or until stopped); each ending batch goes to `done`.
    pub async fn run(self, done: mpsc::UnboundedSender<Sent>) {
        let next = AtomicU64::new(0);
        let senders = (0..self.plan.concurrency).map(|_| self.sender(&next, &done));
        futures::future::join_all(senders).await;
    }

    /// One of the batches in flight: takes the next batch, sends it, and hands its row
    /// on, until none is left or the load stops.
    async fn sender(&self, next: &AtomicU64, done: &mpsc::UnboundedSender<Sent>) {
        let plan = &self.plan;
        let notes = Arc::new(CallNotes::default());
        while !self.stop.is_stopped() {
            let index = next.fetch_add(1, Ordering::Relaxed);
            if index >= plan.total_batches() {
                break;
            }
            let (pass, first, rows) = plan.batch(index);
            if !self.pass_due(pass).await {
                break;
            }
            let mut batch =
                LoadBatch::generate(plan.seed, first, rows, plan.columns, plan.value_size);
            self.store.load_encode(&mut batch);
            let trace = plan.traced(index);
            let call = observe(notes.clone(), trace, self.store.load_batch(&batch));
            let wire_before = (plan.concurrency == 1).then(loopback_sent).flatten();
            let sent = Instant::now();
            let outcome = tokio::select! {
                answer = tokio::time::timeout(self.op_timeout, call) => {
                    answer.unwrap_or_else(|_| Err(LoadError::Db(DbError::new(
                        ErrorKind::Timeout,
                        format!("no answer within {} s (--op-timeout)", self.op_timeout.as_secs_f64()),
                    ))))
                }
                _ = self.stop.stopped() => Err(LoadError::Db(DbError::new(
                    ErrorKind::Cancelled,
                    "the load stopped while this batch was in flight (outcome unknown)",
                ))),
            };
            let latency = sent.elapsed();
            let wire_after = wire_before.and(loopback_sent());
            let mut row = BatchRow {
                pass,
                batch: index,
                start_s: sent.duration_since(self.began).as_secs_f64(),
                rows,
                payload_bytes: batch.payload_bytes(),
                loopback_bytes: wire_before
                    .zip(wire_after)
                    .map(|(a, b)| b.saturating_sub(a)),
                // Nanoseconds as µs with three decimals: no float noise in the CSV.
                latency_us: latency.as_nanos() as f64 / 1e3,
                error: String::new(),
            };
            drop(batch);
            let limit = self.failure(outcome, &mut row);
            let trace_ids = if trace {
                notes.take_trace_ids()
            } else {
                Vec::new()
            };
            if done
                .send(Sent {
                    row,
                    limit,
                    trace_ids,
                })
                .is_err()
            {
                break;
            }
        }
    }

    /// Waits until pass `pass` is due (`--every`); false when the load stopped first.
    async fn pass_due(&self, pass: u64) -> bool {
        let Some(every) = self.plan.every_s else {
            return true;
        };
        let due = self.began + Duration::from_secs_f64(every * pass as f64);
        tokio::select! {
            _ = tokio::time::sleep_until(due.into()) => true,
            _ = self.stop.stopped() => false,
        }
    }

    /// A failed batch's error into its row; a batch over the store's size limit, which
    /// the load reports, and any failure but a cancel stop the load.
    fn failure(&self, outcome: Result<(), LoadError>, row: &mut BatchRow) -> Option<BatchLimit> {
        match outcome {
            Ok(()) => None,
            Err(LoadError::TooLarge(found)) => {
                row.error = format!("over {} ({})", found.setting, found.value);
                self.stop.stop(StopReason::Failed);
                Some(found)
            }
            Err(LoadError::Db(error)) => {
                row.error = format!("{}: {}", error.kind.as_str(), error.message);
                if error.kind != ErrorKind::Cancelled {
                    self.stop.stop(StopReason::Failed);
                }
                None
            }
        }
    }
}
