//! What a lane records of each operation: its interval's histograms, its op log row
//! (handed to the writer thread in batches), its share of the progress counters, and a
//! traced operation's server side.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{Attempt, Lane, PROGRESS_EVERY, PROGRESS_LAG, Served};
use crate::db::{DbError, ErrorKind, Store};
use crate::runner::TracedOp;
use crate::runner::stop::StopReason;
use crate::stats::{OpBatch, OpRecord, Outcome};
use crate::workload::OrderEvent;

impl<D: Store> Lane<D> {
    /// Reads a call's follow-up (after its clock stopped); a traced operation's server
    /// side is kept beside the client's time (`service`, pool wait included).
    pub(super) async fn keep_trace(
        &mut self,
        event: &OrderEvent,
        trace: bool,
        service: Duration,
        attempt: &mut Attempt,
    ) {
        let followed_up = attempt.follow_up.is_some();
        let server = match attempt.follow_up.take() {
            Some(read) => self.follow_up(read).await,
            None => None,
        };
        if !trace || (attempt.trace_ids.is_empty() && !followed_up) {
            return;
        }
        let service = service.as_nanos() as u64;
        self.cx
            .traced
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(TracedOp {
                seq: event.seq,
                event_type: event.op.event_type().as_str(),
                client_ns: service.saturating_sub(attempt.queued_ns.unwrap_or(0)),
                trace_ids: std::mem::take(&mut attempt.trace_ids),
                server,
            });
    }

    /// Records one measured operation: its interval's histograms, and a row for the
    /// op log when it is on.
    pub(super) fn record(
        &mut self,
        event: &OrderEvent,
        due: Option<Instant>,
        start: Instant,
        end: Instant,
        outcome: Result<(), DbError>,
        served: Served,
    ) {
        let window_ns = end.duration_since(start).as_nanos() as u64;
        // Service time: the pool wait, if any, is measured apart as queue time.
        let latency_ns = window_ns.saturating_sub(served.queued_ns.unwrap_or(0));
        let event_type = event.op.event_type();
        let retries = u64::from(served.attempts.saturating_sub(1));
        let stats_outcome = match &outcome {
            Ok(()) => Outcome::Ok {
                retries,
                response_ns: due.map(|due| end.saturating_duration_since(due).as_nanos() as u64),
            },
            // Cut by the run's own end: no failure of the store's.
            Err(e) if e.kind == ErrorKind::Cancelled => Outcome::Cut { retries },
            Err(e) => Outcome::Failed {
                kind: e.kind.as_str(),
                code: e.code.as_deref(),
                message: &e.message,
                retries,
            },
        };
        let cut = matches!(stats_outcome, Outcome::Cut { .. });
        let offset_ns = self.measured_offset_ns(start);
        self.cx.intervals.record(offset_ns, |stats| {
            stats.record(
                event_type.index(),
                served.node,
                latency_ns,
                served.queued_ns,
                stats_outcome,
            )
        });
        let (error, error_code) = match outcome {
            Ok(()) => (None, None),
            Err(e) => {
                if e.kind != ErrorKind::Cancelled {
                    self.pending_errors += 1;
                }
                (Some((e.kind.as_str(), e.message)), e.code)
            }
        };
        // A cut call's end is the run's, not an answer: it does not stretch the phase.
        if !cut {
            self.last_end = Some(end);
            self.work.did(window_ns);
        }
        self.pending_measured += 1;
        if self.cx.op_log.is_some() {
            self.log_batch.push(OpRecord {
                seq: event.seq,
                event_type: event_type.as_str(),
                target: event.op.target().id(),
                // The request left once a connection was free.
                start_ns: start.duration_since(self.cx.epoch).as_nanos() as u64
                    + served.queued_ns.unwrap_or(0),
                due_ns: due
                    .map(|due| due.saturating_duration_since(self.cx.epoch).as_nanos() as u64),
                latency_ns,
                error,
                error_code,
                node: served.node,
                attempts: served.attempts,
                queued_ns: served.queued_ns,
            });
        }
    }

    /// How far into the measured phase an operation that started at `start` began.
    pub(super) fn measured_offset_ns(&self, start: Instant) -> u64 {
        let measure_start = self
            .cx
            .phases
            .measure
            .get()
            .expect("set before measured events");
        start.saturating_duration_since(*measure_start).as_nanos() as u64
    }

    pub(super) async fn send_log_batch(&mut self) {
        let records = std::mem::replace(&mut self.log_batch, Vec::with_capacity(self.cx.log_batch));
        let Some(log) = &self.cx.op_log else {
            return;
        };
        let sent = match self.log_room.clone().acquire_owned().await {
            Ok(unwritten) => log.send(OpBatch { records, unwritten }),
            Err(_) => false,
        };
        if !sent {
            // The writer failed; its error is reported when the run ends.
            self.cx.stop.stop(StopReason::Failed);
        }
    }

    /// Counts the operation as applied, and as answered by the store or not. A failure
    /// to reach the store is told at once: it is rare, and slow, when it happens.
    pub(super) fn note_reach(&mut self, outcome: &Result<(), DbError>, end: Instant) {
        self.pending_applied += 1;
        match outcome {
            Err(e) if e.reached_no_server() => {
                let p = &self.cx.progress;
                p.unreached.fetch_add(1, Ordering::Relaxed);
                *p.last_unreached.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(e.message.clone());
                self.flush_progress();
            }
            _ => self.pending_answered += 1,
        }
        if self.pending_applied >= PROGRESS_EVERY
            || end.saturating_duration_since(self.flushed_at) >= PROGRESS_LAG
        {
            self.flushed_at = end;
            self.flush_progress();
        }
    }

    pub(super) fn flush_progress(&mut self) {
        let p = &self.cx.progress;
        p.answered.fetch_add(
            std::mem::take(&mut self.pending_answered),
            Ordering::Relaxed,
        );
        p.measured.fetch_add(
            std::mem::take(&mut self.pending_measured),
            Ordering::Relaxed,
        );
        p.errors
            .fetch_add(std::mem::take(&mut self.pending_errors), Ordering::Relaxed);
        p.applied
            .fetch_add(std::mem::take(&mut self.pending_applied), Ordering::Relaxed);
    }
}

/// Whether the operation of `seq` is traced, a fixed draw per seq so a rerun traces
/// the same operations.
pub(super) fn traced(seq: u64, share: f64) -> bool {
    if share <= 0.0 {
        return false;
    }
    let mut state = seq ^ 0x7ace_5a3f_1e00_0000;
    crate::runner::plan::unit_draw(&mut state) < share
}
