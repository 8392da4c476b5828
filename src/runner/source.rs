//! The source: one thread that pulls events from the stream (generator or events
//! file), hashes them, and hands them to lanes in small batches.
//!
//! Between phases (load → warm-up → measure) it waits until every lane has finished
//! the previous phase, so that nothing is measured while the load is still running.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::runtime::Handle;
use tokio::sync::{Barrier, mpsc};

use super::FailedWrite;
use super::phase_clock::{LoadTook, PhaseClock, Unmeasured};
use super::plan::{Dealing, MeasureFloor, Pace};
use super::progress::Progress;
use super::races::Races;
use super::stop::{StopReason, StopSignal};
use crate::workload::{EventsFileError, OrderEvent, Phase, PlanHasher};

/// Events a lane receives at once: enough to make the hand-off cheap, few enough
/// that lanes start together.
const LANE_BATCH: usize = 256;

/// Events waiting in all lanes' batches at most, about: 64 lanes of full batches and
/// inboxes held 19 MB of them (valgrind massif).
const EVENTS_IN_HAND: usize = 2048;

/// The batch for `lanes` lanes: smaller with many lanes, so memory does not grow
/// with the lane count; 8 at least, to keep the hand-off cheap.
fn lane_batch(lanes: usize) -> usize {
    (EVENTS_IN_HAND / lanes.max(1)).clamp(8, LANE_BATCH)
}

/// Where a lane hands back a batch it has applied: the source drops its events and
/// fills the batch again. An event's order is made on the source's thread, and freed
/// there it costs the allocator no lock (freed on a lane's, the wakes of glibc's
/// arena lock were a fifth of the source's time, bench/NOTES.md).
pub type SpentBatches = std::sync::mpsc::Sender<Vec<LaneEvent>>;

/// What the source sends a lane.
pub enum LaneMsg {
    Events(Vec<LaneEvent>),
    /// Wait here until every lane and the source arrive.
    PhaseEnd(Arc<Barrier>),
}

/// An event as a lane receives it, with what the lane is to do with it.
pub struct LaneEvent {
    pub event: OrderEvent,
    pub role: Role,
    /// Its place among the operations of its phase that are sent (0, 1, 2, …): with
    /// `--rate`, it is due `slot / rate` seconds after its phase began.
    pub slot: u64,
}

// Every event is written by the source's thread and read by a lane's, a cache miss per
// line: the order is boxed so that an event stays this small, which measured cheaper
// than the order inline (bench/NOTES.md).
const _: () = assert!(std::mem::size_of::<LaneEvent>() <= 88);

/// What a lane does with an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Apply it: its target lives in this lane.
    Apply,
    /// Apply it, racing the lane its target lives in (`conflicts`).
    Race,
    /// Do not apply it: another lane races with it. Expect its state from here on.
    Expect,
}

/// Events in order, from the generator or a file, each a line that may be bad.
pub type EventStream = Box<dyn Iterator<Item = Result<OrderEvent, EventsFileError>> + Send>;

/// What the source saw of the stream.
pub struct SourceReport {
    /// sha256 of the events handed out, as JSON Lines, when hashing was asked for.
    pub plan_sha256: Option<String>,
    /// How many events that hash covers.
    pub planned_events: u64,
    /// Whether the stream was read to its end (the hash is then the whole stream's).
    pub complete: bool,
    pub error: Option<EventsFileError>,
    /// Why the measured phase did not begin: the load failed, or what it came to could
    /// not be kept on disk.
    pub not_measured: Option<String>,
}

/// The one reader of the stream: it deals events to lanes in order.
pub struct Source {
    pub stream: EventStream,
    pub lanes: Vec<mpsc::Sender<LaneMsg>>,
    /// The batches the lanes have applied ([`SpentBatches`]).
    pub spent: std::sync::mpsc::Receiver<Vec<LaneEvent>>,
    pub stop: Arc<StopSignal>,
    pub runtime: Handle,
    pub hash: bool,
    pub dealing: Dealing,
    /// With `--shard`, this process's lanes are dealing's lanes `first_lane..` (0 otherwise):
    /// events dealt to other shards' lanes are hashed and counted, not sent.
    pub first_lane: usize,
    /// Where racing orders are noted (with `conflicts`).
    pub races: Option<Arc<Races>>,
    /// Set when the first warm-up and the first measured event are about to be handed out.
    pub phases: Arc<PhaseClock>,
    /// `--min-duration`: where an endless stream's measured phase ends.
    pub floor: Option<MeasureFloor>,
    /// When each measured event is due (a closed loop: never), which ends a paced
    /// floor.
    pub pace: Pace,
    /// What the lanes counted and noted, read once they have applied the load and
    /// warm-up.
    pub progress: Arc<Progress>,
    pub failed_writes: Arc<Mutex<Vec<FailedWrite>>>,
    /// See [`super::plan::RunPlan::drain_at_deadline`].
    pub drain_at_deadline: bool,
}

impl Source {
    /// Reads the stream and deals every event to its lane in batches, until the stream
    /// ends, fails, or the run stops; what it handed out, hashed.
    pub fn run(mut self) -> SourceReport {
        let mut hasher = self.hash.then(PlanHasher::new);
        let batch = lane_batch(self.lanes.len());
        let mut batches: Vec<Vec<LaneEvent>> = (0..self.lanes.len())
            .map(|_| Vec::with_capacity(batch))
            .collect();
        let mut phase = Phase::Load;
        let mut slot = 0u64;
        let mut error = None;
        let mut not_measured = None;
        let mut complete = true;
        let mut last_unmeasured = None;
        while let Some(item) = self.stream.next() {
            let event = match item {
                Ok(event) => event,
                Err(e) => {
                    error = Some(e);
                    self.stop.stop(StopReason::Failed);
                    break;
                }
            };
            if self.stop.is_stopped() {
                complete = false;
                break;
            }
            if event.phase != phase {
                slot = 0;
            }
            match self.enter(&mut phase, event.phase, last_unmeasured, &mut batches) {
                Ok(true) => {}
                Ok(false) => {
                    complete = false;
                    break;
                }
                Err(why) => {
                    not_measured = Some(why);
                    self.stop.stop(StopReason::Failed);
                    complete = false;
                    break;
                }
            }
            if phase != Phase::Measure {
                last_unmeasured = Some(event.seq);
            }
            if let Some(h) = hasher.as_mut() {
                h.add(&event);
            }
            let sent = self.hand_out(&mut batches, event, slot, batch);
            slot += 1;
            if !sent {
                complete = false;
                break;
            }
            if phase == Phase::Measure && self.floor_reached(slot) {
                // The stream has no end: the floor is where this run's part of it ends.
                complete = false;
                break;
            }
        }
        if let Err(why) = self.hand_out_last(phase == Phase::Load && error.is_none(), &mut batches)
        {
            not_measured = Some(why);
            self.stop.stop(StopReason::Failed);
        }
        // Lanes see their channels close once these senders are gone.
        self.lanes.clear();
        // A stopped run hashes what it handed out, no more: hashing the rest of a long
        // stream once kept a run going for hours past its deadline.
        let planned_events = hasher.as_ref().map_or(0, PlanHasher::events);
        SourceReport {
            plan_sha256: hasher.map(PlanHasher::finish),
            planned_events,
            complete: complete && error.is_none(),
            error,
            not_measured,
        }
    }

    /// Marks when the warm-up and the measured phase began (and the CPU counters at
    /// the start of measuring), once each. Before the first measured event, what the
    /// load and warm-up came to is handed to `before_measuring`; the error says why
    /// measuring must not begin.
    fn mark(&self, phase: Phase, last_unmeasured: Option<u64>) -> Result<(), String> {
        match phase {
            Phase::Load => {
                self.phases.load.get_or_init(Instant::now);
            }
            Phase::Warmup => {
                self.phases.warmup.get_or_init(Instant::now);
            }
            Phase::Measure => {
                if self.phases.measure.get().is_none() {
                    let unmeasured = self.unmeasured(last_unmeasured);
                    if let Some(before) = &self.phases.before_measuring {
                        before(&unmeasured)?;
                    }
                    if let Some(why) = unmeasured.too_many_failures() {
                        return Err(why);
                    }
                }
                // Read /proc before the clock starts, so it costs the run nothing.
                self.phases.measure_cpu.get_or_init(|| {
                    crate::client_cost::CpuSnapshot::with_servers(&self.phases.server_pids)
                });
                self.phases
                    .measure_host
                    .get_or_init(crate::host_load::HostTicks::now);
                self.phases.measure.get_or_init(Instant::now);
            }
        }
        Ok(())
    }

    /// Whether `--min-duration`'s floor ends the measured phase after `handed_out`
    /// events.
    fn floor_reached(&self, handed_out: u64) -> bool {
        self.floor.is_some_and(|floor| {
            floor.reached(handed_out, self.phases.measure.get(), || {
                self.pace.due_s(handed_out, true)
            })
        })
    }

    /// Moves to the phase of the next event (`next`): the one before ended on every
    /// lane, and after the load what follows it; then marks when it began. False when
    /// the run stopped meanwhile; the error says why measuring must not begin.
    fn enter(
        &mut self,
        phase: &mut Phase,
        next: Phase,
        last_unmeasured: Option<u64>,
        batches: &mut [Vec<LaneEvent>],
    ) -> Result<bool, String> {
        if next != *phase {
            if !self.end_phase(batches) {
                return Ok(false);
            }
            if *phase == Phase::Load {
                self.after_load()?;
            }
            *phase = next;
        }
        self.mark(*phase, last_unmeasured)?;
        Ok(true)
    }

    /// After the last event read: what the lanes' batches still hold, handed out where
    /// the stream ended (see [`Self::end_stream`]) or the run drains at its deadline.
    fn hand_out_last(
        &mut self,
        in_load: bool,
        batches: &mut [Vec<LaneEvent>],
    ) -> Result<(), String> {
        if !self.stop.is_stopped() {
            return self.end_stream(in_load, batches);
        }
        if self.drain_at_deadline && self.stop.reason() == Some(StopReason::Deadline) {
            // Every event hashed is handed out: the draining lanes apply them all, so
            // the database holds the stream's first events up to the last hashed.
            self.flush(batches);
        }
        Ok(())
    }

    /// Hands out what the lanes' batches still hold; where the stream ended in its load
    /// (`in_load`), waits for the lanes and runs what follows the load all the same.
    fn end_stream(&mut self, in_load: bool, batches: &mut [Vec<LaneEvent>]) -> Result<(), String> {
        if !in_load {
            self.flush(batches);
            return Ok(());
        }
        if self.end_phase(batches) {
            self.after_load()?;
        }
        Ok(())
    }

    /// Once every lane has applied the load: what must follow it (the keys a setup
    /// for the load left out), then the load's end noted, keys included.
    fn after_load(&self) -> Result<(), String> {
        if let Some(after) = &self.phases.after_load {
            after()?;
        }
        if self.phases.load.get().is_some() {
            let applied = self
                .progress
                .applied
                .load(std::sync::atomic::Ordering::Relaxed);
            let _ = self.phases.loaded.set((Instant::now(), applied));
        }
        Ok(())
    }

    /// What the load and warm-up came to: every lane has applied them (the phase's
    /// barrier) and counted its failures.
    fn unmeasured(&self, last_seq: Option<u64>) -> Unmeasured {
        let progress = &self.progress;
        use std::sync::atomic::Ordering::Relaxed;
        Unmeasured {
            last_seq,
            applied: progress.applied.load(Relaxed),
            failed: progress.unmeasured_failed.load(Relaxed),
            first_error: progress
                .first_unmeasured_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            failed_writes: self
                .failed_writes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            load: match (self.phases.load.get(), self.phases.loaded.get()) {
                (Some(began), Some((ended, operations))) => Some(LoadTook {
                    operations: *operations,
                    took: ended.saturating_duration_since(*began),
                }),
                _ => None,
            },
        }
    }

    /// Puts one event in its lane's batch (and, when it races, in its own lane's too),
    /// sending a batch that is full; false when a lane could not take it (the run
    /// stopped). Another shard's event is left out, and keeps its slot.
    fn hand_out(
        &mut self,
        batches: &mut [Vec<LaneEvent>],
        event: OrderEvent,
        slot: u64,
        batch: usize,
    ) -> bool {
        let dealt = self.dealing.deal(
            event.seq,
            event.op.target().id(),
            event.op.event_type(),
            event.phase,
        );
        let Some(lane) = self.local(dealt.lane) else {
            // Another shard's event: it keeps its slot, so shards share one schedule.
            return true;
        };
        if let Some(own) = dealt.own {
            // Races stay within a shard (`--shard` refuses `conflicts`).
            let own = self.local(own).expect("races are dealt within one shard");
            if let Some(races) = &self.races {
                races.dealt(event.op.target().id());
            }
            batches[own].push(LaneEvent {
                event: event.clone(),
                role: Role::Expect,
                slot,
            });
            batches[lane].push(LaneEvent {
                event,
                role: Role::Race,
                slot,
            });
            if batches[own].len() >= batch && !self.send(own, batches) {
                return false;
            }
        } else {
            batches[lane].push(LaneEvent {
                event,
                role: Role::Apply,
                slot,
            });
        }
        batches[lane].len() < batch || self.send(lane, batches)
    }

    /// Sends what is left in every lane's batch.
    fn flush(&mut self, batches: &mut [Vec<LaneEvent>]) {
        for lane in 0..self.lanes.len() {
            if !batches[lane].is_empty() && !self.send_now(lane, batches) {
                break;
            }
        }
    }

    /// This process's lane for one of dealing's lanes, if it is one of its shard's.
    fn local(&self, lane: usize) -> Option<usize> {
        lane.checked_sub(self.first_lane)
            .filter(|local| *local < self.lanes.len())
    }

    /// Sends a full batch; if that lane is busy, first hands out what idle lanes are
    /// waiting for, so that no lane idles while the source waits. False once stopped.
    fn send(&self, lane: usize, batches: &mut [Vec<LaneEvent>]) -> bool {
        let empty = self.empty_batch(batches.len());
        let batch = std::mem::replace(&mut batches[lane], empty);
        match self.lanes[lane].try_send(LaneMsg::Events(batch)) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Closed(_)) => false,
            Err(mpsc::error::TrySendError::Full(LaneMsg::Events(batch))) => {
                let lanes = batches.len();
                serve_idle_lanes(&self.lanes, lane, batches, || self.empty_batch(lanes));
                self.lanes[lane]
                    .blocking_send(LaneMsg::Events(batch))
                    .is_ok()
            }
            Err(mpsc::error::TrySendError::Full(LaneMsg::PhaseEnd(_))) => unreachable!(),
        }
    }

    /// A batch to fill: one the lanes handed back, else a new one. Every batch handed
    /// back is emptied here, its events dropped on this thread, and all but the one kept
    /// are freed: batches sent with no batch taken back (a flush, a busy lane's
    /// neighbours served early) must not pile up in the channel.
    fn empty_batch(&self, lanes: usize) -> Vec<LaneEvent> {
        let mut kept = None;
        while let Ok(mut batch) = self.spent.try_recv() {
            batch.clear();
            kept.get_or_insert(batch);
        }
        kept.unwrap_or_else(|| Vec::with_capacity(lane_batch(lanes)))
    }

    fn send_now(&self, lane: usize, batches: &mut [Vec<LaneEvent>]) -> bool {
        let batch = std::mem::take(&mut batches[lane]);
        self.lanes[lane]
            .blocking_send(LaneMsg::Events(batch))
            .is_ok()
    }

    /// Flushes every lane and waits until all of them have applied the phase.
    fn end_phase(&self, batches: &mut [Vec<LaneEvent>]) -> bool {
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

/// Hands each lane but `busy` whose inbox is empty what its batch holds so far, its
/// place taken by `fresh()`. A lane with batches still queued is left to fill its own:
/// sent early, a few events made a message of their own, and the batch left behind grew
/// again from nothing (a fifth of an allocation an event at 128 lanes, bench/NOTES.md).
fn serve_idle_lanes(
    lanes: &[mpsc::Sender<LaneMsg>],
    busy: usize,
    batches: &mut [Vec<LaneEvent>],
    mut fresh: impl FnMut() -> Vec<LaneEvent>,
) {
    for (lane, pending) in batches.iter_mut().enumerate() {
        let inbox = &lanes[lane];
        if lane == busy || pending.is_empty() || inbox.capacity() < inbox.max_capacity() {
            continue;
        }
        let taken = std::mem::replace(pending, fresh());
        if let Err(e) = inbox.try_send(LaneMsg::Events(taken))
            && let LaneMsg::Events(back) = e.into_inner()
        {
            *pending = back;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Operation;

    fn reads(count: u64) -> Vec<LaneEvent> {
        (0..count)
            .map(|seq| LaneEvent {
                event: OrderEvent {
                    seq,
                    phase: Phase::Measure,
                    op: Operation::Read {
                        key: seq,
                        version: 1,
                    },
                },
                role: Role::Apply,
                slot: seq,
            })
            .collect()
    }

    #[test]
    fn only_lanes_with_an_empty_inbox_are_served_before_the_source_waits() {
        let (senders, mut inboxes): (Vec<_>, Vec<_>) = (0..3).map(|_| mpsc::channel(2)).unzip();
        // Lane 1 still has a batch to apply; lane 2 has none.
        senders[1].try_send(LaneMsg::Events(reads(4))).unwrap();
        let mut batches = vec![reads(3), reads(2), reads(1)];
        serve_idle_lanes(&senders, 0, &mut batches, || Vec::with_capacity(8));

        let lengths: Vec<usize> = batches.iter().map(Vec::len).collect();
        assert_eq!(
            lengths,
            [3, 2, 0],
            "the busy lane and lane 1 keep filling theirs"
        );
        assert_eq!(batches[2].capacity(), 8, "lane 2's place is a fresh batch");
        match inboxes[2].try_recv() {
            Ok(LaneMsg::Events(sent)) => assert_eq!(sent.len(), 1),
            _ => panic!("lane 2 was not served"),
        }
        assert!(
            inboxes[0].try_recv().is_err(),
            "the busy lane gets its batch by the wait"
        );
        match inboxes[1].try_recv() {
            Ok(LaneMsg::Events(queued)) => assert_eq!(queued.len(), 4),
            _ => panic!("lane 1's queued batch is gone"),
        }
        assert!(inboxes[1].try_recv().is_err(), "lane 1 got nothing more");
    }
}
