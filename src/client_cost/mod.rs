//! What the client itself spent during the measured phase: CPU (user + system, all
//! threads), peak memory, and the busiest thread's share of the wall time. On a
//! machine the database shares, every µs the client burns is taken from the server;
//! and a thread near 100 % busy means the client, not the database, set the pace.
//!
//! Read from /proc and getrusage, outside every timed window: once when measuring
//! begins and once when it ends. A thread that ends before then (the event source, a
//! lane thread) says its CPU as it ends ([`thread_ends`]), since /proc lists only the
//! living: the split by role ([`Role`]) then still adds up to the whole.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::procfs::{schedstat_cpu_s, server_cpu_s, stat_cpu_s};

mod wakeups;
pub use wakeups::Wakeups;

/// A thread busier than this share of the measured wall time is the bottleneck.
pub const BUSY_SHARE: f64 = 0.8;

/// The name of the shared runtime's threads, where lanes run unless they have threads
/// of their own.
pub const RUNTIME_THREADS: &str = "runtime";

/// What a thread of hatshop's does, for the split of the client's CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// The runtime's workers and the lanes' own threads: the calls, their timing and
    /// what a lane records of each (the runtime's other tasks, such as the watchdog and
    /// progress, run there too).
    Lanes,
    /// The op log's writer.
    OpLog,
    /// Generating, hashing and dealing the events.
    EventSource,
    /// Everything else: the main thread, signals, the pacer, start-up and ending.
    Rest,
}

impl Role {
    /// The role of a thread, by the name hatshop gave it (the kernel keeps its first
    /// 15 bytes, so names are matched by their start).
    pub fn of_thread(name: &str) -> Role {
        if name.starts_with("lanes-") || name.starts_with(RUNTIME_THREADS) {
            Role::Lanes
        } else if name.starts_with("op-log") {
            Role::OpLog
        } else if name.starts_with("event-source") {
            Role::EventSource
        } else {
            Role::Rest
        }
    }

    /// Its key in run.json.
    pub fn key(self) -> &'static str {
        match self {
            Role::Lanes => "lanes",
            Role::OpLog => "op_log",
            Role::EventSource => "event_source",
            Role::Rest => "rest",
        }
    }
}

/// A thread that ended: when, its id and name, and its CPU seconds at the end.
type Ended = (Instant, u32, String, f64);

/// The most ended threads kept.
const MAX_ENDED: usize = 4096;

/// The threads that said their CPU as they ended (a handful a run).
static ENDED: Mutex<Vec<Ended>> = Mutex::new(Vec::new());

/// Called by a thread of hatshop's as its last act, so that its CPU is still split by
/// role after /proc has forgotten it.
pub fn thread_ends() {
    let (tid, cpu_s) = own_thread_cpu();
    let name = std::thread::current().name().unwrap_or("").to_string();
    let mut ended = ENDED.lock().unwrap_or_else(|p| p.into_inner());
    // A run ends a few (its source, op log and lane threads); a sweep's later runs
    // need none of its earlier runs' entries.
    if ended.len() >= MAX_ENDED {
        ended.remove(0);
    }
    ended.push((Instant::now(), tid, name, cpu_s));
}

/// The calling thread's id and its CPU seconds, from its own clock (to the ns).
fn own_thread_cpu() -> (u32, f64) {
    // SAFETY: both calls only read the calling thread's own id and clock.
    unsafe {
        let mut t: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t);
        (
            libc::gettid() as u32,
            t.tv_sec as f64 + t.tv_nsec as f64 / 1e9,
        )
    }
}

/// CPU counters at one instant.
#[derive(Debug, Clone)]
pub struct CpuSnapshot {
    at: Instant,
    process_cpu_s: f64,
    /// Per thread id: (name, CPU seconds).
    threads: BTreeMap<u32, (String, f64)>,
    /// The server processes watched: (pid, CPU seconds).
    servers: Vec<(u32, f64)>,
}

impl CpuSnapshot {
    /// hatshop's own CPU so far, with no server processes added.
    pub fn now() -> CpuSnapshot {
        CpuSnapshot::with_servers(&[])
    }

    /// Also the CPU of these server processes (those hatshop started).
    pub fn with_servers(pids: &[u32]) -> CpuSnapshot {
        CpuSnapshot {
            at: Instant::now(),
            process_cpu_s: rusage().0,
            threads: thread_cpu(),
            servers: pids
                .iter()
                .filter_map(|&pid| Some((pid, server_cpu_s(pid)?)))
                .collect(),
        }
    }
}

/// What run.json records under `server_cpu`: the CPU the server processes hatshop
/// started spent over the window `client` covers. On one machine, client and server
/// CPU per operation together set the throughput: cores ÷ (client + server).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerCpu {
    /// Server processes read at both ends (a node killed meanwhile is left out).
    pub processes: usize,
    pub cpu_s: f64,
    pub cpu_us_per_op: f64,
}

impl ServerCpu {
    /// The servers' cost from `start` until now, over `ops` measured operations;
    /// `None` when no server process was watched.
    pub fn since(start: &CpuSnapshot, ops: u64) -> Option<ServerCpu> {
        let spent: Vec<f64> = start
            .servers
            .iter()
            .filter_map(|&(pid, before)| Some((server_cpu_s(pid)? - before).max(0.0)))
            .collect();
        if spent.is_empty() {
            return None;
        }
        let cpu_s: f64 = spent.iter().sum();
        Some(ServerCpu {
            processes: spent.len(),
            cpu_s,
            cpu_us_per_op: if ops > 0 {
                cpu_s * 1e6 / ops as f64
            } else {
                0.0
            },
        })
    }

    /// One line: `server: 2.10 s CPU while measuring (1 process hatshop started), …`.
    pub fn describe(&self) -> String {
        format!(
            "server: {:.2} s CPU while measuring ({} process{} hatshop started), {:.1} µs per operation",
            self.cpu_s,
            self.processes,
            if self.processes == 1 { "" } else { "es" },
            self.cpu_us_per_op
        )
    }
}

/// What run.json records under `client`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClientCost {
    /// User + system CPU of the whole process over the measured phase, seconds.
    pub cpu_s: f64,
    /// That CPU per measured operation, µs.
    pub cpu_us_per_op: f64,
    /// The process's peak resident memory over its whole life, MB.
    pub peak_rss_mb: f64,
    /// The thread that used the most CPU in the measured phase, and its share of the
    /// wall time (1.0: busy all the time).
    pub busiest_thread: Option<String>,
    pub busiest_share: f64,
    /// `cpu_us_per_op` split by what the threads do (lanes, op_log, event_source,
    /// rest), from the kernel's per-thread counters; the parts add up to the whole.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub us_per_op_by_role: BTreeMap<String, f64>,
    /// Under `--rate`: how late the lanes woke for operations they were waiting for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wakeups: Option<Wakeups>,
}

impl ClientCost {
    /// The cost from `start` until now, over `ops` measured operations.
    pub fn since(start: &CpuSnapshot, ops: u64) -> ClientCost {
        let wall_s = start.at.elapsed().as_secs_f64();
        let (process_cpu_s, peak_rss_mb) = rusage();
        let cpu_s = (process_cpu_s - start.process_cpu_s).max(0.0);
        let spent = threads_since(start);
        let busiest = spent.iter().max_by(|a, b| a.1.total_cmp(&b.1)).cloned();
        let share = |cpu: f64| if wall_s > 0.0 { cpu / wall_s } else { 0.0 };
        let per_op = |cpu: f64| if ops > 0 { cpu * 1e6 / ops as f64 } else { 0.0 };
        ClientCost {
            cpu_s,
            cpu_us_per_op: per_op(cpu_s),
            peak_rss_mb,
            busiest_share: busiest.as_ref().map_or(0.0, |(_, cpu)| share(*cpu)),
            busiest_thread: busiest.map(|(name, _)| name),
            us_per_op_by_role: by_role(&spent, cpu_s)
                .into_iter()
                .map(|(role, cpu)| (role.key().to_string(), per_op(cpu)))
                .collect(),
            wakeups: None,
        }
    }

    /// `lanes 2.1, op log 0.3, event source 0.5, rest 0.4 µs`, where split.
    fn split(&self) -> Option<String> {
        let part = |key: &str| self.us_per_op_by_role.get(key).copied();
        Some(format!(
            "lanes {:.1}, op log {:.1}, event source {:.1}, rest {:.1} µs",
            part("lanes")?,
            part("op_log")?,
            part("event_source")?,
            part("rest")?
        ))
    }

    /// One line: `client: 0.85 s CPU …, 4.2 µs per operation, peak RSS 21 MB`.
    /// `in_process`: the store whose database runs inside hatshop, so its work is in.
    fn describe(&self, in_process: Option<&str>) -> String {
        format!(
            "client: {:.2} s CPU while measuring (user + system, all threads{}), {:.1} µs per operation{}, peak RSS {:.0} MB",
            self.cpu_s,
            in_process
                .map(|store| format!("; {store} runs inside hatshop, so its work is counted here"))
                .unwrap_or_default(),
            self.cpu_us_per_op,
            self.split().map(|s| format!(" ({s})")).unwrap_or_default(),
            self.peak_rss_mb
        )
    }

    /// Why the client may have set the pace.
    fn bottleneck(&self) -> String {
        format!(
            "client thread {} was {:.0} % busy: the client, not the database, may have set the pace",
            self.busiest_thread.as_deref().unwrap_or("?"),
            self.busiest_share * 100.0
        )
    }

    /// Whether the client was the bottleneck.
    pub fn client_bound(&self) -> bool {
        self.busiest_share > BUSY_SHARE
    }

    /// The line and, when the client set the pace or starved, the warnings, for a run
    /// on `store` (a database inside hatshop, `in_process`, is busy on hatshop's
    /// threads: no busy warning then).
    pub fn report(&self, store: &str, in_process: bool) -> (String, Vec<String>) {
        let busy = (self.client_bound() && !in_process).then(|| self.bottleneck());
        let starved = self.wakeups.as_ref().and_then(Wakeups::starved);
        (
            self.describe(in_process.then_some(store)),
            busy.into_iter().chain(starved).collect(),
        )
    }
}

/// Each thread's CPU seconds since `start`, by name: the living from /proc, and those
/// that ended since `start` from what they said as they ended.
fn threads_since(start: &CpuSnapshot) -> Vec<(String, f64)> {
    let mut now = thread_cpu();
    let ended = ENDED.lock().unwrap_or_else(|p| p.into_inner());
    for (at, tid, name, cpu) in ended.iter() {
        if *at >= start.at {
            now.entry(*tid).or_insert_with(|| (name.clone(), *cpu));
        }
    }
    now.into_iter()
        .map(|(tid, (name, cpu))| {
            let before = start.threads.get(&tid).map_or(0.0, |(_, c)| *c);
            (name, (cpu - before).max(0.0))
        })
        .collect()
}

/// The CPU of each role; `Rest` takes what the threads do not account for (threads
/// that ended unannounced, the kernel's rounding), so the parts add up to `total`.
fn by_role(spent: &[(String, f64)], total: f64) -> BTreeMap<Role, f64> {
    let mut roles: BTreeMap<Role, f64> = [Role::Lanes, Role::OpLog, Role::EventSource]
        .into_iter()
        .map(|role| (role, 0.0))
        .collect();
    for (name, cpu) in spent {
        let role = Role::of_thread(name);
        if role != Role::Rest {
            *roles.entry(role).or_default() += cpu;
        }
    }
    let named: f64 = roles.values().sum();
    roles.insert(Role::Rest, (total - named).max(0.0));
    roles
}

/// (user + system CPU seconds, peak RSS in MB) of this process.
fn rusage() -> (f64, f64) {
    // SAFETY: getrusage writes into the struct it is given, nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return (0.0, 0.0);
        }
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (
        seconds(usage.ru_utime) + seconds(usage.ru_stime),
        // Linux gives ru_maxrss in KiB.
        usage.ru_maxrss as f64 / 1024.0,
    )
}

/// CPU seconds of each thread of this process, from /proc/self/task (empty where
/// there is no /proc).
fn thread_cpu() -> BTreeMap<u32, (String, f64)> {
    let mut threads = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return threads;
    };
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        // schedstat counts to the ns, as the clock a thread reads as it ends does;
        // stat's 10 ms ticks would round a short run's split away.
        let precise = std::fs::read_to_string(task.path().join("schedstat")).ok();
        let Some(cpu_s) = precise
            .and_then(|text| schedstat_cpu_s(&text))
            .or_else(|| stat_cpu_s(&stat))
        else {
            continue;
        };
        // The name sits in parentheses and may hold spaces.
        let name = stat
            .rsplit_once(')')
            .and_then(|(head, _)| head.split_once('('))
            .map_or("", |(_, n)| n)
            .to_string();
        threads.insert(tid, (name, cpu_s));
    }
    threads
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests that keep a core busy take turns: each reads this process's threads,
    /// where another's spinning would be the busiest.
    static SPINNING: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn spin_alone() -> std::sync::MutexGuard<'static, ()> {
        SPINNING
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    #[test]
    fn a_busy_thread_is_seen_busy_and_cpu_is_counted() {
        let _alone = spin_alone();
        let start = CpuSnapshot::now();
        let spin = std::thread::Builder::new()
            .name("spinner".into())
            .spawn(|| {
                let until = Instant::now() + std::time::Duration::from_millis(300);
                let mut x = 0u64;
                while Instant::now() < until {
                    x = x.wrapping_add(1);
                    std::hint::black_box(x);
                }
            })
            .unwrap();
        // Measure while the spinner still lives, so its /proc entry is there.
        std::thread::sleep(std::time::Duration::from_millis(250));
        let cost = ClientCost::since(&start, 1_000);
        spin.join().unwrap();
        assert!(cost.cpu_s > 0.1, "{cost:?}");
        assert!((cost.cpu_us_per_op - cost.cpu_s * 1_000.0).abs() < 1e-6);
        assert!(cost.peak_rss_mb > 1.0, "{cost:?}");
        // Other tests share the two cores: the spinner gets a good share, not all.
        assert_eq!(cost.busiest_thread.as_deref(), Some("spinner"), "{cost:?}");
        assert!(cost.busiest_share > 0.3, "{cost:?}");
    }

    #[test]
    fn a_watched_server_process_has_its_cpu_counted() {
        // This test's own process stands in for the server: it is busy, then read.
        let _alone = spin_alone();
        let start = CpuSnapshot::with_servers(&[std::process::id(), u32::MAX]);
        let until = Instant::now() + std::time::Duration::from_millis(200);
        let mut x = 0u64;
        while Instant::now() < until {
            x = x.wrapping_add(1);
            std::hint::black_box(x);
        }
        let cost = ServerCpu::since(&start, 1_000).expect("one process was read");
        assert_eq!(cost.processes, 1, "a pid that is no process is left out");
        assert!(cost.cpu_s > 0.05, "{cost:?}");
        assert!((cost.cpu_us_per_op - cost.cpu_s * 1_000.0).abs() < 1e-6);
        assert!(ServerCpu::since(&CpuSnapshot::now(), 10).is_none());
    }

    #[test]
    fn a_living_threads_cpu_is_read_finer_than_a_clock_tick() {
        let _alone = spin_alone();
        // Spin until 8–10 ms past a whole 10 ms: stat's clock ticks (100 a second)
        // would then lose 8 ms or more. About 30 ms of CPU; the deadline is for a
        // machine that gives this thread almost none.
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        let (tid, mine) = loop {
            assert!(Instant::now() < deadline, "the thread got no CPU for 30 s");
            let (tid, cpu) = own_thread_cpu();
            if cpu > 0.02 && (cpu * 1_000.0) as u64 % 10 >= 8 {
                break (tid, cpu);
            }
        };
        let read = thread_cpu()[&tid].1;
        // Only the reading of /proc lies between the two.
        assert!(
            (0.0..0.005).contains(&(read - mine)),
            "the thread's clock said {mine} s, /proc {read} s"
        );
    }

    #[test]
    fn over_80_percent_busy_is_client_bound() {
        let cost = |share| ClientCost {
            cpu_s: 1.0,
            cpu_us_per_op: 1.0,
            peak_rss_mb: 10.0,
            busiest_thread: Some(RUNTIME_THREADS.into()),
            busiest_share: share,
            us_per_op_by_role: BTreeMap::new(),
            wakeups: None,
        };
        assert!(cost(0.85).client_bound());
        assert!(!cost(0.5).client_bound());
    }

    fn spin(name: &str, ms: u64, announce: bool) -> std::thread::JoinHandle<()> {
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let until = Instant::now() + std::time::Duration::from_millis(ms);
                let mut x = 0u64;
                while Instant::now() < until {
                    x = x.wrapping_add(1);
                    std::hint::black_box(x);
                }
                if announce {
                    thread_ends();
                }
            })
            .unwrap()
    }

    #[test]
    fn the_cpu_is_split_by_role_and_an_ended_thread_still_counts() {
        let _alone = spin_alone();
        let start = CpuSnapshot::now();
        // The source ends before the cost is read, as a run's does; the op log lives.
        spin("event-source", 150, true).join().unwrap();
        let op_log = spin("op-log", 300, false);
        std::thread::sleep(std::time::Duration::from_millis(200));
        let cost = ClientCost::since(&start, 1_000);
        op_log.join().unwrap();
        let part = |key: &str| cost.us_per_op_by_role[key];
        // Other tests share the two cores: each spinner gets a good share, not all.
        assert!(part("event_source") > 50.0, "{cost:?}");
        assert!(part("op_log") > 50.0, "{cost:?}");
        // The parts add up to the whole, but for /proc's count of a living thread in
        // ticks of 10 ms (10 µs an operation here).
        let sum: f64 = cost.us_per_op_by_role.values().sum();
        assert!((sum - cost.cpu_us_per_op).abs() < 30.0, "{cost:?}");
        assert_eq!(Role::of_thread(RUNTIME_THREADS), Role::Lanes);
        assert_eq!(Role::of_thread("lanes-3"), Role::Lanes);
        assert_eq!(Role::of_thread("signals"), Role::Rest);
    }
}
