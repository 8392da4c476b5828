//! The run plan as data: how many lanes, how they are paced, when to stop. One run
//! loop consumes it; a new mode is a new value here, not a new loop.

use std::time::Duration;

use super::stages::Stages;
use crate::workload::{EventType, Phase, splitmix64};

/// How lanes issue requests.
#[derive(Debug, Clone, PartialEq)]
pub enum Pace {
    /// Each lane sends its next request as soon as the previous one is answered:
    /// a slow answer delays the requests behind it (coordinated omission).
    ClosedLoop,
    /// Open loop: operations per second, each sent at its own time (`--rate`).
    Rate(f64),
    /// Open loop whose rate climbs (or falls) evenly from `from` to `to` over the first
    /// `over` of the measured phase, then stays at `to` (`--rate A..B --ramp T`); the
    /// warm-up runs at `from`.
    Ramp { from: f64, to: f64, over: Duration },
    /// Open loop whose rate moves in straight lines from stage to stage over the
    /// measured phase (`--stages`); the warm-up runs at its first rate above 0.
    Stages(Stages),
}

impl Pace {
    /// The rate an open loop starts at.
    pub fn rate(&self) -> Option<f64> {
        match *self {
            Pace::ClosedLoop => None,
            Pace::Rate(ops_s) | Pace::Ramp { from: ops_s, .. } => Some(ops_s),
            Pace::Stages(ref stages) => Some(stages.from()),
        }
    }

    /// As run.json and the report name it.
    pub fn name(&self) -> &'static str {
        match self {
            Pace::ClosedLoop => "closed_loop",
            Pace::Rate(_) | Pace::Ramp { .. } | Pace::Stages(_) => "open_loop",
        }
    }

    /// When the `slot`-th operation of a phase is due, in seconds after the phase
    /// began; `None` in a closed loop.
    pub fn due_s(&self, slot: u64, measured: bool) -> Option<f64> {
        let k = slot as f64;
        match *self {
            Pace::ClosedLoop => None,
            Pace::Rate(rate) => Some(k / rate),
            Pace::Stages(ref stages) if !measured => Some(k / stages.warmup_rate()),
            Pace::Stages(ref stages) => Some(stages.due_s(slot)),
            Pace::Ramp { from, .. } if !measured => Some(k / from),
            Pace::Ramp { from, to, over } => {
                let ramp_s = over.as_secs_f64();
                // Operations due during the ramp: the area under the rate line.
                let during = (from + to) / 2.0 * ramp_s;
                if k >= during || ramp_s == 0.0 {
                    return Some(ramp_s + (k - during.min(k)) / to);
                }
                // Solve from·t + a·t²/2 = k for t, with a the rate's slope.
                let a = (to - from) / ramp_s;
                if a == 0.0 {
                    return Some(k / from);
                }
                Some((-from + (from * from + 2.0 * a * k).max(0.0).sqrt()) / a)
            }
        }
    }
}

/// How a run goes: lanes, pace, limits, phases and what it records.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// Lanes running at once; events on one target always go to the same lane.
    pub concurrency: usize,
    /// Threads of their own the lanes run on (0: tasks of the calling runtime).
    pub lane_threads: usize,
    /// Orders or records a lane writes at once through the store's bulk path in the
    /// initial load (`--load-batch`).
    pub load_batch: usize,
    pub pace: Pace,
    /// Stop the measured phase (and a warm-up) after this long, even if events remain.
    pub max_duration: Option<Duration>,
    /// Measure at least this much: the stream goes on past its count until both are met.
    pub floor: Option<MeasureFloor>,
    /// The longest one operation may take before it counts as a timeout.
    pub op_timeout: Duration,
    /// Calls an operation may repeat after a failure that a retry can cure (timeouts,
    /// unavailable replicas, conflicts, lost connections).
    pub retries: u32,
    /// Compare what each read returns with what the stream says (off for stores that keep nothing).
    pub check_reads: bool,
    /// Hash the stream as it is dispatched (off when the hash is known already).
    pub hash_stream: bool,
    /// How events are dealt to lanes (over the lanes of every shard).
    pub dealing: Dealing,
    /// This process runs one shard of the run: only its own lanes (`--shard I/N`).
    pub shard: Option<Shard>,
    /// Share of measured operations traced on the server (`--trace-sample`).
    pub trace_sample: f64,
    /// End the run as failed when operations fail to reach the store and none has for
    /// this long (`None`: never, as when faults are played on purpose).
    pub give_up_unreached: Option<Duration>,
    /// At `--duration`'s deadline, the lanes apply, unmeasured, what they were dealt
    /// and the source hands out what it had gathered, within the deadline's grace: the
    /// database is left holding the stream's first events, whole, for a run that goes
    /// on from it (`--reuse-load`).
    pub drain_at_deadline: bool,
}

/// `--min-duration`: the measured phase ends once it has handed out `events` events and
/// lasted `duration`, whichever comes later; the stream itself has no end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasureFloor {
    pub events: u64,
    pub duration: Duration,
}

impl MeasureFloor {
    /// Whether the measured phase, begun at `began` with `handed_out` events so far, has
    /// reached both. Under `--rate` the time is the next event's due time (`next_due_s`):
    /// the source runs ahead of paced lanes, so the clock would end the stream only
    /// long after the lanes are done with the floor. In a closed loop the clock is read
    /// only once the count is met, and then every 32 events: the source's hot path
    /// stays a count.
    pub fn reached(
        &self,
        handed_out: u64,
        began: Option<&std::time::Instant>,
        next_due_s: impl FnOnce() -> Option<f64>,
    ) -> bool {
        if handed_out < self.events {
            return false;
        }
        match next_due_s() {
            Some(due_s) => due_s >= self.duration.as_secs_f64(),
            None => {
                (handed_out == self.events || handed_out.is_multiple_of(32))
                    && began.is_some_and(|began| began.elapsed() >= self.duration)
            }
        }
    }
}

/// One client's part of a run spread over several (`--shard I/N`): every shard reads
/// the whole stream and runs lanes `I·c … I·c + c − 1` of the `N·c` lanes it is dealt
/// over, so each order's events stay in one lane of one shard, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// `I/N`, or `auto/N` with I from `$JOB_COMPLETION_INDEX` (a Kubernetes Indexed Job).
    pub fn parse(text: &str, job_index: Option<&str>) -> Result<Shard, String> {
        let bad = || format!("--shard takes I/N (e.g. 0/2) or auto/N, got '{text}'");
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let count: usize = count.trim().parse().map_err(|_| bad())?;
        let index: usize = match index.trim() {
            "auto" => {
                let from_env = job_index.ok_or_else(|| {
                    "--shard auto/N reads the shard from JOB_COMPLETION_INDEX, which is not set"
                        .to_string()
                })?;
                from_env.trim().parse().map_err(|_| {
                    format!("JOB_COMPLETION_INDEX must be a number, got '{from_env}'")
                })?
            }
            index => index.parse().map_err(|_| bad())?,
        };
        if count == 0 || index >= count {
            return Err(format!(
                "--shard {index}/{count}: the index counts from 0 and must be below the number of shards"
            ));
        }
        Ok(Shard { index, count })
    }

    /// The first of this shard's lanes among all shards' lanes, with `lanes` per shard.
    pub fn first_lane(self, lanes: usize) -> usize {
        self.index * lanes
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The lane of an order or key: a fixed hash of its id, so that a run with the same
/// number of lanes splits events the same way every time (and `verify` can redo the
/// split). Part of the stream's contract: pinned by a test.
pub fn lane_of(target: u64, lanes: usize) -> usize {
    let mut state = target;
    (splitmix64(&mut state) % lanes as u64) as usize
}

/// A draw in [0, 1) from the top 53 bits of the next splitmix64 value: a fixed share
/// of events picked by their seq (races, traced operations).
pub(super) fn unit_draw(state: &mut u64) -> f64 {
    (splitmix64(state) >> 11) as f64 / (1u64 << 53) as f64
}

/// How events are dealt to lanes: by target ([`lane_of`]), except for a share
/// (`conflicts`) of the measured order updates, which go to another lane so that two
/// lanes race on one order. A pure function of the event's seq, target and type, so
/// `verify` and `recover` deal the same way the run did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dealing {
    pub lanes: usize,
    pub conflicts: f64,
}

/// Where one event goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dealt {
    /// The lane that applies it.
    pub lane: usize,
    /// Its target's own lane, when that is another one (the event races).
    pub own: Option<usize>,
}

impl Dealing {
    /// Every target to its own lane, with no races.
    pub fn by_target(lanes: usize) -> Dealing {
        Dealing {
            lanes,
            conflicts: 0.0,
        }
    }

    /// The lane an event goes to, and whether it races another lane for its target.
    pub fn deal(&self, seq: u64, target: u64, event_type: EventType, phase: Phase) -> Dealt {
        let own = lane_of(target, self.lanes);
        let races = self.conflicts > 0.0
            && self.lanes > 1
            && phase == Phase::Measure
            && matches!(
                event_type,
                EventType::UpdateOrder | EventType::UpdateItems | EventType::UpdateStatus
            );
        if !races {
            return Dealt {
                lane: own,
                own: None,
            };
        }
        let mut state = seq ^ 0x5eed_c0f1_1c75_0000;
        if unit_draw(&mut state) >= self.conflicts {
            return Dealt {
                lane: own,
                own: None,
            };
        }
        let step = 1 + (splitmix64(&mut state) % (self.lanes as u64 - 1)) as usize;
        Dealt {
            lane: (own + step) % self.lanes,
            own: Some(own),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paced_floor_ends_at_the_event_due_at_its_time() {
        let floor = MeasureFloor {
            events: 10,
            duration: Duration::from_secs(1),
        };
        let pace = Pace::Rate(50.0);
        let began = std::time::Instant::now();
        let reached = |n: u64| floor.reached(n, Some(&began), || pace.due_s(n, true));
        assert!(!reached(9), "the count first");
        assert!(!reached(49), "the 50th event is due at 0.98 s");
        assert!(reached(50), "the next would be due at 1 s");
        // A closed loop reads the clock: not yet a second.
        assert!(!floor.reached(50, Some(&began), || None));
    }

    #[test]
    fn a_ramp_sends_the_operations_its_rate_line_holds() {
        let ramp = Pace::Ramp {
            from: 1000.0,
            to: 3000.0,
            over: Duration::from_secs(10),
        };
        let due = |slot| ramp.due_s(slot, true).unwrap();
        assert_eq!(due(0), 0.0);
        // 1,000 → 3,000 ops/s over 10 s holds 20,000 operations; after it, 3,000 a second.
        assert!((due(20_000) - 10.0).abs() < 1e-9);
        assert!((due(23_000) - 11.0).abs() < 1e-9);
        // Halfway in time (5 s) the line holds 5 × (1,000 + 2,000) / 2 = 7,500.
        assert!((due(7_500) - 5.0).abs() < 1e-9);
        // Due times only grow, and the warm-up runs at the first rate.
        assert!((1..30_000).all(|k| due(k) > due(k - 1)));
        assert_eq!(ramp.due_s(500, false), Some(0.5));
        // A ramp down works the same way.
        let down = Pace::Ramp {
            from: 3000.0,
            to: 1000.0,
            over: Duration::from_secs(10),
        };
        assert!((down.due_s(20_000, true).unwrap() - 10.0).abs() < 1e-9);
        assert!((down.due_s(12_500, true).unwrap() - 5.0).abs() < 1e-9);
        assert_eq!(Pace::Rate(100.0).due_s(50, true), Some(0.5));
        assert_eq!(Pace::ClosedLoop.due_s(50, true), None);
    }

    #[test]
    fn a_share_of_measured_updates_goes_to_another_lane() {
        let dealing = Dealing {
            lanes: 4,
            conflicts: 0.2,
        };
        let mut raced = 0;
        for seq in 0..10_000u64 {
            let target = seq % 97;
            let dealt = dealing.deal(seq, target, EventType::UpdateStatus, Phase::Measure);
            assert_eq!(
                dealt,
                dealing.deal(seq, target, EventType::UpdateStatus, Phase::Measure)
            );
            if let Some(own) = dealt.own {
                raced += 1;
                assert_eq!(own, lane_of(target, 4));
                assert_ne!(dealt.lane, own);
            } else {
                assert_eq!(dealt.lane, lane_of(target, 4));
            }
            // Creates, reads, deletes and unmeasured updates stay home.
            for (event_type, phase) in [
                (EventType::ReadOrder, Phase::Measure),
                (EventType::DeleteOrder, Phase::Measure),
                (EventType::UpdateStatus, Phase::Warmup),
            ] {
                assert_eq!(dealing.deal(seq, target, event_type, phase).own, None);
            }
        }
        assert!((1_800..2_200).contains(&raced), "{raced}");
        let one_lane = Dealing {
            lanes: 1,
            conflicts: 1.0,
        };
        assert_eq!(
            one_lane
                .deal(5, 5, EventType::UpdateOrder, Phase::Measure)
                .own,
            None
        );
    }

    #[test]
    fn shards_are_read_from_the_flag_or_the_job_index() {
        assert_eq!(Shard::parse("1/3", None), Ok(Shard { index: 1, count: 3 }));
        assert_eq!(
            Shard::parse("auto/4", Some("2")),
            Ok(Shard { index: 2, count: 4 })
        );
        assert_eq!(Shard::parse("1/3", None).unwrap().first_lane(8), 8);
        for bad in ["3/3", "1", "a/2", "0/0", "auto/2"] {
            let err = Shard::parse(bad, None).unwrap_err();
            assert!(!err.contains('\n'), "{err}");
        }
        assert!(
            Shard::parse("auto/2", Some("x"))
                .unwrap_err()
                .contains("JOB_COMPLETION_INDEX")
        );
    }

    #[test]
    fn lanes_are_balanced_and_stable() {
        let mut counts = [0u32; 16];
        for id in 1..=16_000u64 {
            let lane = lane_of(id, 16);
            assert_eq!(lane, lane_of(id, 16));
            counts[lane] += 1;
        }
        assert!(counts.iter().all(|&n| n > 850 && n < 1150), "{counts:?}");
    }
}
