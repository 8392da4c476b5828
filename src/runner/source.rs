//! The source: one thread that pulls events from the stream (generator or events
//! file), hashes them, and hands them to lanes in small batches.
//!
//! Between phases (load → warm-up → measure) it waits until every lane has finished
//! the previous phase, so that nothing is measured while the load is still running.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use tokio::runtime::Handle;
use tokio::sync::{Barrier, mpsc};

use super::plan::lane_of;
use super::stop::{StopReason, StopSignal};
use crate::workload::{EventsFileError, OrderEvent, Phase, PlanHasher};

/// Events a lane receives at once: enough to make the hand-off cheap, few enough
/// that lanes start together.
const LANE_BATCH: usize = 256;

pub enum LaneMsg {
    Events(Vec<OrderEvent>),
    /// Wait here until every lane and the source arrive.
    PhaseEnd(Arc<Barrier>),
}

pub type EventStream = Box<dyn Iterator<Item = Result<OrderEvent, EventsFileError>> + Send>;

pub struct SourceReport {
    /// sha256 of the whole stream as JSON Lines, when hashing was asked for and the
    /// stream was read to its end.
    pub plan_sha256: Option<String>,
    pub error: Option<EventsFileError>,
}

pub struct Source {
    pub stream: EventStream,
    pub lanes: Vec<mpsc::Sender<LaneMsg>>,
    pub stop: Arc<StopSignal>,
    pub runtime: Handle,
    pub hash: bool,
    /// Set when the first measured event is about to be handed out.
    pub measure_start: Arc<OnceLock<Instant>>,
}

impl Source {
    pub fn run(mut self) -> SourceReport {
        let mut hasher = self.hash.then(PlanHasher::new);
        let mut batches: Vec<Vec<OrderEvent>> = (0..self.lanes.len())
            .map(|_| Vec::with_capacity(LANE_BATCH))
            .collect();
        let mut phase = Phase::Load;
        let mut error = None;
        while let Some(item) = self.stream.next() {
            let event = match item {
                Ok(event) => event,
                Err(e) => {
                    error = Some(e);
                    self.stop.stop(StopReason::Failed);
                    break;
                }
            };
            if let Some(h) = hasher.as_mut() {
                h.add(&event);
            }
            if self.stop.is_stopped() {
                break;
            }
            if event.phase != phase {
                if !self.end_phase(&mut batches) {
                    break;
                }
                phase = event.phase;
            }
            if phase == Phase::Measure {
                self.measure_start.get_or_init(Instant::now);
            }
            let lane = lane_of(event.op.order_id(), self.lanes.len());
            batches[lane].push(event);
            if batches[lane].len() >= LANE_BATCH && !self.send(lane, &mut batches) {
                break;
            }
        }
        if !self.stop.is_stopped() {
            for lane in 0..self.lanes.len() {
                if !batches[lane].is_empty() && !self.send_now(lane, &mut batches) {
                    break;
                }
            }
        }
        // Lanes see their channels close once these senders are gone.
        self.lanes.clear();
        let plan_sha256 = hasher.and_then(|mut h| {
            // A stream stopped early is still hashed whole, so runs of one spec compare;
            // an interrupted run should exit now, so it goes without.
            if error.is_some() || self.stop.reason() == Some(StopReason::Interrupted) {
                return None;
            }
            for item in self.stream.by_ref() {
                h.add(&item.ok()?);
                if self.stop.reason() == Some(StopReason::Interrupted) {
                    return None;
                }
            }
            Some(h.finish())
        });
        SourceReport { plan_sha256, error }
    }

    /// Sends a full batch; if that lane is busy, first hands out what other lanes are
    /// waiting for, so that no lane idles while the source waits. False once stopped.
    fn send(&self, lane: usize, batches: &mut [Vec<OrderEvent>]) -> bool {
        let batch = std::mem::replace(&mut batches[lane], Vec::with_capacity(LANE_BATCH));
        match self.lanes[lane].try_send(LaneMsg::Events(batch)) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Closed(_)) => false,
            Err(mpsc::error::TrySendError::Full(LaneMsg::Events(batch))) => {
                for (other, pending) in batches.iter_mut().enumerate() {
                    if other != lane && !pending.is_empty() {
                        let taken = std::mem::take(pending);
                        if let Err(e) = self.lanes[other].try_send(LaneMsg::Events(taken))
                            && let LaneMsg::Events(back) = e.into_inner()
                        {
                            *pending = back;
                        }
                    }
                }
                self.lanes[lane]
                    .blocking_send(LaneMsg::Events(batch))
                    .is_ok()
            }
            Err(mpsc::error::TrySendError::Full(LaneMsg::PhaseEnd(_))) => unreachable!(),
        }
    }

    fn send_now(&self, lane: usize, batches: &mut [Vec<OrderEvent>]) -> bool {
        let batch = std::mem::take(&mut batches[lane]);
        self.lanes[lane]
            .blocking_send(LaneMsg::Events(batch))
            .is_ok()
    }

    /// Flushes every lane and waits until all of them have applied the phase.
    fn end_phase(&self, batches: &mut [Vec<OrderEvent>]) -> bool {
        for lane in 0..self.lanes.len() {
            if !batches[lane].is_empty() && !self.send_now(lane, batches) {
                return false;
            }
        }
        let barrier = Arc::new(Barrier::new(self.lanes.len() + 1));
        for lane in &self.lanes {
            if lane
                .blocking_send(LaneMsg::PhaseEnd(barrier.clone()))
                .is_err()
            {
                return false;
            }
        }
        let stop = self.stop.clone();
        self.runtime.block_on(async move {
            tokio::select! {
                _ = barrier.wait() => true,
                _ = stop.stopped() => false,
            }
        })
    }
}
