//! How the runner is set up for a run's config and store: the plan (lanes, pace,
//! deadlines, dealing), the fault timeline, the phases' clock, the stream and the op log.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use anyhow::Result;

use crate::cluster::{Home, ServerRecord};
use crate::config::{RunConfig, WarmupUntil};
use crate::console::note;
use crate::db::{AnyStore, Store};
use crate::op_log::OpLogWriter;
use crate::result_dir;
use crate::runner::faults::Timeline;
use crate::runner::{
    self, AfterLoad, BeforeMeasuring, Dealing, PhaseClock, RunClock, RunPlan, open_stream,
};
use crate::stats::settling::{Settling, WarmupLatency};
use crate::workload::{EventSource, Generator, OrderId, StateHash, TimedWarmup, WarmupCount};

/// How the runner runs this config against this store.
pub(super) fn plan_of(config: &RunConfig, store: &AnyStore) -> RunPlan {
    RunPlan {
        concurrency: config.concurrency,
        lane_threads: lane_threads_of(config, store),
        load_batch: config.load_batch,
        pace: config.pace.clone(),
        max_duration: config.max_duration,
        floor: config.floor,
        op_timeout: config.op_timeout,
        retries: config.retries,
        check_reads: store.holds_data(),
        hash_stream: matches!(config.source, EventSource::Generated { .. }),
        dealing: Dealing {
            lanes: config.concurrency * config.shard.map_or(1, |shard| shard.count),
            conflicts: config.conflicts,
        },
        shard: config.shard,
        trace_sample: config.trace_sample,
        // Three connect timeouts with no operation reaching the store: it is gone. Faults
        // make it unreachable on purpose, and the run measures that.
        give_up_unreached: config
            .faults
            .is_empty()
            .then(|| config.connect_timeout * GIVE_UP_AFTER_CONNECT_TIMEOUTS),
        // A series' runs ask to go on: each leaves a whole stream for the next.
        drain_at_deadline: config.reuse_load.is_some() && config.shard.is_none(),
    }
}

/// `--lane-threads`, else one per core where the store chooses them, else none; never
/// more than lanes.
pub(super) fn lane_threads_of(config: &RunConfig, store: &AnyStore) -> usize {
    let threads = match config.lane_threads {
        Some(threads) => threads,
        None if store.lane_threads(config.concurrency) => crate::procfs::cores(),
        None => 0,
    };
    threads.min(config.concurrency)
}

/// Connect timeouts in a row with no operation reaching the store, before a run ends.
const GIVE_UP_AFTER_CONNECT_TIMEOUTS: u32 = 3;

/// The faults to play and the server they go to, checked before anything starts.
pub(super) fn fault_timeline(config: &RunConfig) -> Result<Option<Timeline>> {
    if config.faults.is_empty() {
        return Ok(None);
    }
    let hosts = config.db.address(0).map(|a| a.hosts).unwrap_or_default();
    let home = Home::resolve(config.home.as_deref())?;
    Timeline::resolve(config.faults.clone(), home, config.db.scheme(), &hosts).map(Some)
}

/// The phases' clock, which also counts the CPU of the server hatshop started for
/// this run's database; `before_measuring` runs as the measured phase is about to begin.
pub(super) fn phase_clock(
    serving: Option<&ServerRecord>,
    warmup: WarmupShared,
    after_load: Option<AfterLoad>,
    before_measuring: BeforeMeasuring,
) -> Arc<PhaseClock> {
    Arc::new(PhaseClock {
        warmup: warmup.began,
        warmup_latency: warmup.latency,
        server_pids: serving
            .iter()
            .flat_map(|server| server.nodes.iter().map(|node| node.pid))
            .collect(),
        before_measuring: Some(before_measuring),
        after_load,
        ..PhaseClock::default()
    })
}

/// The events a run sends, as the runner takes them.
pub(super) struct RunStream {
    pub events: runner::EventStream,
    /// With `--warmup 10s` or `--warmup settled`, where its warm-up count will be:
    /// the warm-up ends that long after `warmup_began` (which the source sets), or once
    /// its latency settles.
    pub timed_warmup: Option<WarmupCount>,
    /// With `--warmup settled`, how its warm-up went.
    pub settling: Option<Arc<Settling>>,
    /// What the stream's warm-up shares with the source and the lanes.
    pub warmup: WarmupShared,
    /// The orders the database holds where the run goes on from earlier runs' events,
    /// with their states.
    pub held_orders: Vec<(OrderId, StateHash)>,
}

/// What a warm-up shares: when the source handed out its first event (a warm-up on
/// the clock counts from then), and what its operations took as the lanes add them
/// (a warm-up until latency settles reads them).
#[derive(Default)]
pub(super) struct WarmupShared {
    pub began: Arc<OnceLock<Instant>>,
    pub latency: Arc<WarmupLatency>,
}

/// The run's events from the first the database does not hold.
pub(super) fn stream_of(config: &RunConfig) -> Result<RunStream> {
    let warmup = WarmupShared::default();
    let EventSource::Generated { workload } = &config.source else {
        return Ok(RunStream {
            events: open_stream(&config.source)?,
            timed_warmup: None,
            settling: None,
            warmup,
            held_orders: Vec::new(),
        });
    };
    let held_orders = |generator: &Generator| match workload.held_events {
        0 => Vec::new(),
        _ => generator.order_states(),
    };
    let settling = (config.warmup_until == Some(WarmupUntil::Settled))
        .then(|| Arc::new(Settling::new(warmup.latency.clone())));
    let timed = match (config.warmup_until, &settling) {
        (Some(WarmupUntil::Elapsed(length)), _) => {
            Some(TimedWarmup::lasting(workload, length, warmup.began.clone()))
        }
        (Some(WarmupUntil::Settled), Some(settling)) => {
            let settling = settling.clone();
            let ends = Box::new(move |elapsed| {
                let ended = settling.ended(elapsed);
                if let Some(settled) = settling.outcome().filter(|_| ended) {
                    note!("{}", settled.said());
                }
                ended
            });
            Some(TimedWarmup::until(workload, ends, warmup.began.clone()))
        }
        _ => None,
    };
    Ok(match timed {
        Some((stream, count)) => RunStream {
            held_orders: held_orders(stream.generator()),
            events: Box::new(stream.map(Ok)),
            timed_warmup: Some(count),
            settling,
            warmup,
        },
        None => {
            let generator = Generator::new(workload);
            RunStream {
                held_orders: held_orders(&generator),
                events: Box::new(generator.map(Ok)),
                timed_warmup: None,
                settling: None,
                warmup,
            }
        }
    })
}

/// The op log's writer thread and the sender the lanes share, when it is on.
pub(super) fn start_op_log(
    config: &RunConfig,
    store: &AnyStore,
    clock: RunClock,
) -> Result<(Option<OpLogWriter>, Option<crate::op_log::OpLogSender>)> {
    if !config.op_log {
        return Ok((None, None));
    }
    let (writer, tx) = OpLogWriter::start(
        &result_dir::file(&config.out_dir, result_dir::OPS_DIR),
        &config.run_id,
        store.facts().name.as_str(),
        clock.wall,
    )?;
    Ok((Some(writer), Some(tx)))
}
