//! The floor under a race: what one key-value read costs the client with nothing of
//! hatshop's runner around it. Each caller calls the store's own client code
//! (`Store::kv_read`, inside the call notes a lane gives it) in a loop, so the figure
//! is the protocol round trip as hatshop speaks it, and a race's distance above it is
//! what the runner adds.
//!
//!   cargo run --release --example floor -- URL CONNS OPS LAYOUT [STEP] [RECORDS]
//!
//! The store's tables are set up (refusing what hatshop did not make), then each
//! caller writes its share of RECORDS records (10,000 unless given) of 84 bytes and
//! reads OPS ÷ CONNS keys drawn uniformly from them. `shared`: the callers are tasks
//! of one runtime with a thread per core (`shared:N`: N threads). `threaded`: each caller is a thread with an
//! event loop of its own. `spread`: the callers are spread over a thread per core,
//! each with an event loop, as a run's lane threads are. A store's own protocol
//! clients move a connection to the loop of the caller using it; a driver's
//! connection stays with the runtime it was opened on. Prints
//! `reads/s client_µs/read`: user + system CPU of the whole process over the reads, ÷
//! OPS.
//!
//! STEP adds a lane's pieces one at a time, so that the distance from the store's
//! client code to a run is priced piece by piece: `driver`, the store's read alone;
//! `notes` (the default), inside the call notes a lane's call runs in; `clock`, also
//! timed with two clock reads and recorded in an HdrHistogram, as a lane times each
//! call. Writes and setup have a deadline each (10 s, 120 s); the reads have one
//! deadline for them all (600 s), not a timer per read, as a lane's calls have the
//! watchdog's. Ctrl-C ends the process.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use hatshop::client_cost::{ClientCost, CpuSnapshot};
use hatshop::db::{
    AnyStore, CallNotes, ConnectOptions, DbUrl, Ownership, Settings, Store, close_within, observe,
};
use hatshop::runner::LaneThreads;
use hatshop::stats::new_histogram;
use hatshop::workload::KeyText;
use tokio::sync::Barrier;

/// The records read unless RECORDS is given.
const RECORDS: u64 = 10_000;
/// 84 bytes, the most pgbench's `filler` holds (`kv_table=pgbench_accounts`), for every
/// store alike (the other races' values are 100 or 120 bytes).
const VALUE: [u8; 84] = [b'v'; 84];
const DEADLINE: Duration = Duration::from_secs(10);
/// Making the tables (a Cassandra keyspace takes seconds).
const SETUP_DEADLINE: Duration = Duration::from_secs(120);
/// All of one caller's reads.
const READS_DEADLINE: Duration = Duration::from_secs(600);
const USAGE: &str = "usage: floor URL CONNS OPS shared|shared:THREADS|threaded|spread \
                     [driver|notes|clock] [RECORDS]";

/// What each read carries besides the store's client code; each step adds a piece.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    /// The store's read alone.
    Driver,
    /// Inside the call notes, as a lane's call.
    Notes,
    /// Also timed by two clock reads and recorded in an HdrHistogram.
    Clock,
}

impl Step {
    fn parse(text: &str) -> Result<Step, String> {
        match text {
            "driver" => Ok(Step::Driver),
            "notes" => Ok(Step::Notes),
            "clock" => Ok(Step::Clock),
            _ => Err(format!("not a step: {text}; {USAGE}")),
        }
    }
}

/// Where the callers run.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Layout {
    /// Tasks of one runtime, of this many threads (`None`: one per core).
    Shared(Option<usize>),
    /// A thread and an event loop per caller.
    Threaded,
    /// A thread per core, each with an event loop, caller i on thread i mod cores.
    Spread,
}

impl Layout {
    fn parse(text: &str) -> Result<Layout, String> {
        match text.split_once(':') {
            None if text == "shared" => Ok(Layout::Shared(None)),
            None if text == "threaded" => Ok(Layout::Threaded),
            None if text == "spread" => Ok(Layout::Spread),
            Some(("shared", n)) => match n.parse() {
                Ok(threads) if threads > 0 => Ok(Layout::Shared(Some(threads))),
                _ => Err(format!("not a number of threads: {n}; {USAGE}")),
            },
            _ => Err(USAGE.into()),
        }
    }
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (url, conns, ops, layout, step, records) = match &args[..] {
        [url, conns, ops, layout] => (url, conns, ops, layout, None, None),
        [url, conns, ops, layout, step] => (url, conns, ops, layout, Some(step), None),
        [url, conns, ops, layout, step, records] => {
            (url, conns, ops, layout, Some(step), Some(records))
        }
        _ => return Err(USAGE.into()),
    };
    let number = |s: &str| {
        s.parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or(format!("not a positive number: {s}; {USAGE}"))
    };
    let (conns, ops) = (number(conns)? as usize, number(ops)?);
    let layout = Layout::parse(layout)?;
    let step = step.map_or(Ok(Step::Notes), |s| Step::parse(s))?;
    let records = records.map_or(Ok(RECORDS), |r| number(r))?;
    let url = DbUrl::parse(url).map_err(|e| e.to_string())?;
    let meta = url.store();
    let options = ConnectOptions {
        concurrency: conns,
        settings: Settings::checked(meta.scheme, meta.settings, url.params())?,
        connect_timeout: DEADLINE,
        op_timeout: DEADLINE,
        existing_only: false,
        key_value_only: true,
    };
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Layout::Shared(Some(threads)) = layout {
        builder.worker_threads(threads);
    }
    let runtime = builder.enable_all().build().map_err(|e| e.to_string())?;
    let store = runtime.block_on(async {
        let store = AnyStore::connect(&url, &options)
            .await
            .map_err(|e| format!("cannot connect to {url}: {}", e.message))?;
        let owner = Ownership {
            recreate: false,
            note: "the floor bench".into(),
        };
        match tokio::time::timeout(SETUP_DEADLINE, store.setup(&owner)).await {
            Ok(done) => done.map_err(|e| format!("cannot set up {url}: {}", e.message))?,
            Err(_) => {
                return Err(format!(
                    "{url}: setup did not end within {} s",
                    SETUP_DEADLINE.as_secs()
                ));
            }
        }
        Ok::<_, String>(Arc::new(store))
    })?;
    let race = Arc::new(Race {
        store,
        conns,
        step,
        records,
        reads_per_caller: ops.div_ceil(conns as u64),
        started: Barrier::new(conns),
        start: OnceLock::new(),
    });
    let results = run_callers(&race, layout, &runtime)?;
    results.into_iter().collect::<Result<(), String>>()?;
    let reads = race.reads_per_caller * conns as u64;
    let (cpu, began) = race.start.get().expect("the reads began");
    let cost = ClientCost::since(cpu, reads);
    let wall = began.elapsed().as_secs_f64();
    println!("{:.0} {:.2}", reads as f64 / wall, cost.cpu_us_per_op);
    runtime.block_on(close_within(&*race.store));
    Ok(())
}

/// Runs every caller to its end, each in `layout` (the thread layouts are the runner's
/// lane threads); what each returned.
fn run_callers(
    race: &Arc<Race>,
    layout: Layout,
    runtime: &tokio::runtime::Runtime,
) -> Result<Vec<Result<(), String>>, String> {
    let threads = match layout {
        Layout::Threaded => Some(race.conns),
        Layout::Spread => Some(hatshop::procfs::cores().min(race.conns)),
        Layout::Shared(_) => None,
    };
    // The threads enter the runtime that starts them, whose timers the callers use.
    let _entered = runtime.enter();
    let threads = threads
        .map(LaneThreads::start)
        .transpose()
        .map_err(|e| format!("cannot start the callers' threads: {e}"))?;
    Ok(runtime.block_on(async {
        let callers: Vec<_> = (0..race.conns)
            .map(|lane| {
                let caller = race.clone().caller_owned(lane);
                match &threads {
                    Some(threads) => threads.spawn(lane, caller),
                    None => {
                        let (result, answered) = tokio::sync::oneshot::channel();
                        tokio::spawn(async move {
                            let _ = result.send(caller.await);
                        });
                        answered
                    }
                }
            })
            .collect();
        let mut results = Vec::new();
        for caller in callers {
            let ended = caller.await.map_err(|_| "a caller panicked".to_string());
            results.push(ended.and_then(|r| r));
        }
        results
    }))
}

/// What the callers share.
struct Race {
    store: Arc<AnyStore>,
    conns: usize,
    step: Step,
    records: u64,
    reads_per_caller: u64,
    /// Every caller has written its records: the reads begin.
    started: Barrier,
    start: OnceLock<(CpuSnapshot, Instant)>,
}

impl Race {
    async fn caller_owned(self: Arc<Self>, lane: usize) -> Result<(), String> {
        self.caller(lane).await
    }

    /// Writes this caller's share of the records, waits for the others, then reads.
    async fn caller(&self, lane: usize) -> Result<(), String> {
        let notes = Arc::new(CallNotes::of_lane(lane));
        for key in (lane as u64..self.records).step_by(self.conns) {
            let key = KeyText::of(key);
            let write = self.store.kv_write(&key, &VALUE);
            within(observe(notes.clone(), false, write)).await?;
        }
        if self.started.wait().await.is_leader() {
            let _ = self.start.set((CpuSnapshot::now(), Instant::now()));
        }
        match tokio::time::timeout(READS_DEADLINE, self.reads(lane, &notes)).await {
            Ok(read) => read,
            Err(_) => Err(format!(
                "the reads did not end in {} s",
                READS_DEADLINE.as_secs()
            )),
        }
    }

    /// This caller's reads, each carrying the pieces of `self.step`.
    async fn reads(&self, lane: usize, notes: &Arc<CallNotes>) -> Result<(), String> {
        let mut histogram = new_histogram();
        let mut x = 0x9E37_79B9_7F4A_7C15_u64 ^ lane as u64;
        for _ in 0..self.reads_per_caller {
            // xorshift: drawing a key costs next to nothing.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = KeyText::of(x % self.records);
            let read = self.store.kv_read(&key);
            let answer = match self.step {
                Step::Driver => read.await,
                Step::Notes => observe(notes.clone(), false, read).await,
                Step::Clock => {
                    let start = Instant::now();
                    let answer = observe(notes.clone(), false, read).await;
                    let ns = start.elapsed().as_nanos() as u64;
                    histogram.saturating_record(ns);
                    answer
                }
            };
            answer.map_err(|e| e.message)?;
        }
        std::hint::black_box(histogram.len());
        Ok(())
    }
}

/// A call that must answer within the deadline.
async fn within<T>(
    call: impl Future<Output = Result<T, hatshop::db::DbError>>,
) -> Result<T, String> {
    match tokio::time::timeout(DEADLINE, call).await {
        Ok(result) => result.map_err(|e| e.message),
        Err(_) => Err(format!("no answer in {} s", DEADLINE.as_secs())),
    }
}
