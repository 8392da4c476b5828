//! Server resources beside latency: once a second, for every node of a server hatshop
//! started (found by its recorded pid) and for the client itself, CPU (user + system),
//! RSS and disk bytes from `/proc/PID/{stat,status,io}`, and the loopback interface's
//! bytes from `/proc/net/dev` (every node and the client talk over it). Written as
//! `server-metrics.csv`, on the same time axis as the latency charts.

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

/// How often the sampler reads /proc.
pub const EVERY: Duration = Duration::from_secs(1);

/// The `source` of the rows that count the host's loopback traffic.
pub const LOOPBACK: &str = "loopback";

/// A sampler's clock: once a second, a late tick delaying the next rather than
/// bunching them.
pub fn every_second() -> tokio::time::Interval {
    let mut tick = tokio::time::interval(EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick
}

/// Waits for the next sample; false once `over` turns true.
pub async fn next_sample(
    tick: &mut tokio::time::Interval,
    over: &mut watch::Receiver<bool>,
) -> bool {
    tokio::select! {
        _ = tick.tick() => true,
        _ = over.wait_for(|&over| over) => false,
    }
}

/// One process to watch: a node (1-based) or the client (node 0).
#[derive(Debug, Clone, Copy)]
pub struct Watched {
    pub node: usize,
    pub pid: u32,
}

/// A row of `server-metrics.csv`: one source in one sample. Rates are over the time
/// since the source's previous sample.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct MetricsRow {
    /// Seconds from the start of the measured phase (negative: load or warm-up).
    pub at_s: f64,
    /// `node 1`, `node 2`, …, `client`, or `loopback` (the interface's bytes).
    pub source: String,
    pub pid: Option<u32>,
    /// CPU time used per second of wall time, in % of one core (user + system).
    pub cpu_pct: Option<f64>,
    pub rss_mb: Option<f64>,
    /// Bytes the process read from and wrote to storage, per second.
    pub disk_read_bytes_s: Option<f64>,
    pub disk_write_bytes_s: Option<f64>,
    /// Bytes through the loopback interface per second (the `loopback` row).
    pub net_bytes_s: Option<f64>,
}

/// What one read of a process gives.
#[derive(Debug, Clone, Copy, Default)]
struct ProcessReading {
    cpu_s: f64,
    memory: Memory,
    read_bytes: Option<u64>,
    write_bytes: Option<u64>,
}

/// The resident memory of a process and its children, from the three parts
/// `/proc/PID/status` splits it into. Each process's anonymous memory is its own; its
/// shared memory (PostgreSQL's shared buffers, in every backend's RSS) and its mapped
/// files (the server's binary and libraries) are mostly the same pages in every process,
/// so the largest any one of them holds is what they hold together, at least.
/// Proportional shares (`smaps_rollup`'s Pss) would be exact, but the kernel walks every
/// page of every process to give them: a second's read of 128 PostgreSQL backends cost
/// the client a quarter of a core (bench/NOTES.md).
#[derive(Debug, Clone, Copy, Default)]
struct Memory {
    anon_kb: f64,
    shared_kb: f64,
    files_kb: f64,
}

impl Memory {
    /// Adds one process's parts, read from its `status`; None when a part is missing.
    fn add(&mut self, status: &str) -> Option<()> {
        let kb = |field: &str| -> Option<f64> {
            status
                .lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        };
        let (anon, shared, files) = (kb("RssAnon:")?, kb("RssShmem:")?, kb("RssFile:")?);
        self.anon_kb += anon;
        self.shared_kb = self.shared_kb.max(shared);
        self.files_kb = self.files_kb.max(files);
        Some(())
    }

    fn mb(&self) -> f64 {
        (self.anon_kb + self.shared_kb + self.files_kb) / 1024.0
    }
}

/// A process as the sampler reads it; a server's with its child processes (each of
/// PostgreSQL's connections is a backend of its own), so that its CPU, memory and disk
/// are the server's, as its CPU in run.json is.
fn read_process(pid: u32, with_children: bool) -> Option<ProcessReading> {
    let (cpu_s, children) = match with_children {
        true => {
            let children = crate::procfs::children_of(pid);
            (crate::procfs::server_cpu_over(pid, &children)?, children)
        }
        false => (crate::procfs::process_cpu_s(pid)?, Vec::new()),
    };
    let mut reading = ProcessReading {
        cpu_s,
        ..ProcessReading::default()
    };
    add_memory_and_disk(&mut reading, pid)?;
    for child in children {
        // A backend that ended meanwhile is left out of this second.
        let _ = add_memory_and_disk(&mut reading, child);
    }
    Some(reading)
}

/// Adds one process's memory ([`Memory`]) and disk bytes to `reading`.
fn add_memory_and_disk(reading: &mut ProcessReading, pid: u32) -> Option<()> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    reading.memory.add(&status)?;
    // /proc/PID/io needs the right to trace the process: without it, no disk figures.
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    let field = |name: &str| {
        io.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let add = |total: Option<u64>, more: Option<u64>| match (total, more) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    reading.read_bytes = add(reading.read_bytes, field("read_bytes:"));
    reading.write_bytes = add(reading.write_bytes, field("write_bytes:"));
    Some(())
}

/// The loopback interface's (received, sent) byte counters.
fn loopback_counters() -> Option<(u64, u64)> {
    let dev = std::fs::read_to_string("/proc/net/dev").ok()?;
    let line = dev.lines().find(|l| l.trim_start().starts_with("lo:"))?;
    let fields: Vec<u64> = line
        .split_once(':')?
        .1
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    Some((*fields.first()?, *fields.get(8)?))
}

/// Received plus sent bytes of the loopback interface.
fn loopback_bytes() -> Option<u64> {
    loopback_counters().map(|(received, sent)| received + sent)
}

/// Bytes sent on the loopback interface (each byte on `lo` is also received once).
pub fn loopback_sent() -> Option<u64> {
    loopback_counters().map(|(_, sent)| sent)
}

/// Samples until `over` turns true; the rows, with wall times, and the sources that
/// could not be read at some point (a killed node).
pub async fn sample(
    watched: Vec<Watched>,
    mut over: watch::Receiver<bool>,
) -> Vec<(SystemTime, MetricsRow)> {
    let mut rows = Vec::new();
    let mut last: Vec<Option<(SystemTime, ProcessReading)>> = vec![None; watched.len()];
    let mut last_net: Option<(SystemTime, u64)> = None;
    let mut tick = every_second();
    while next_sample(&mut tick, &mut over).await {
        let now = SystemTime::now();
        for (w, previous) in watched.iter().zip(last.iter_mut()) {
            // Node 0 is the client: the servers it may have started are not its own.
            let Some(reading) = read_process(w.pid, w.node > 0) else {
                // Gone (killed, stopped): its line breaks off, and resumes if it returns.
                *previous = None;
                continue;
            };
            if let Some((then, before)) = *previous {
                let wall = now.duration_since(then).unwrap_or_default().as_secs_f64();
                if wall > 0.0 {
                    let rate =
                        |a: Option<u64>, b: Option<u64>| Some(a?.saturating_sub(b?) as f64 / wall);
                    rows.push((
                        now,
                        MetricsRow {
                            source: source_name(w.node),
                            pid: Some(w.pid),
                            cpu_pct: Some((reading.cpu_s - before.cpu_s).max(0.0) / wall * 100.0),
                            rss_mb: Some(reading.memory.mb()),
                            disk_read_bytes_s: rate(reading.read_bytes, before.read_bytes),
                            disk_write_bytes_s: rate(reading.write_bytes, before.write_bytes),
                            ..MetricsRow::default()
                        },
                    ));
                }
            }
            *previous = Some((now, reading));
        }
        if let Some(bytes) = loopback_bytes() {
            if let Some((then, before)) = last_net {
                let wall = now.duration_since(then).unwrap_or_default().as_secs_f64();
                if wall > 0.0 {
                    rows.push((
                        now,
                        MetricsRow {
                            source: LOOPBACK.into(),
                            net_bytes_s: Some(bytes.saturating_sub(before) as f64 / wall),
                            ..MetricsRow::default()
                        },
                    ));
                }
            }
            last_net = Some((now, bytes));
        }
    }
    rows
}

fn source_name(node: usize) -> String {
    if node == 0 {
        "client".into()
    } else {
        format!("node {node}")
    }
}

/// The rows placed on the run's time axis (seconds from `measure_start`).
pub fn on_axis(rows: Vec<(SystemTime, MetricsRow)>, measure_start: SystemTime) -> Vec<MetricsRow> {
    rows.into_iter()
        .map(|(at, mut row)| {
            row.at_s = seconds_between(measure_start, at);
            row
        })
        .collect()
}

/// `to − from` in seconds, negative when `to` is earlier.
pub fn seconds_between(from: SystemTime, to: SystemTime) -> f64 {
    match to.duration_since(from) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_servers_node_counts_the_work_of_its_child_processes() {
        // A parent that only waits, and a child that keeps one core busy: PostgreSQL's
        // postmaster and a backend.
        let mut server = std::process::Command::new("sh")
            .args(["-c", "sh -c 'while :; do :; done' & wait"])
            .spawn()
            .unwrap();
        let (done, over) = watch::channel(false);
        let node = Watched {
            node: 1,
            pid: server.id(),
        };
        let sampler = tokio::spawn(sample(vec![node], over));
        tokio::time::sleep(Duration::from_millis(2_300)).await;
        done.send_replace(true);
        let rows = sampler.await.unwrap();
        for child in crate::procfs::children_of(server.id()) {
            // SAFETY: a plain signal to a process this test started.
            unsafe { libc::kill(child as i32, libc::SIGKILL) };
        }
        let _ = server.kill();
        let _ = server.wait();
        let node: Vec<&MetricsRow> = rows
            .iter()
            .map(|(_, r)| r)
            .filter(|r| r.source == "node 1")
            .collect();
        assert!(!node.is_empty(), "{rows:?}");
        // A busy core, of which a machine under other load may give it half: an idle
        // parent alone reads about 0.
        assert!(node[0].cpu_pct.unwrap() > 25.0, "{node:?}");
        assert!(node[0].rss_mb.unwrap() > 0.0, "{node:?}");
    }

    #[test]
    fn shared_pages_count_once_and_each_process_its_own_memory() {
        let status = |anon: u32, shared: u32, files: u32| {
            format!(
                "Name:\tpostgres\nVmRSS:\t{} kB\nRssAnon:\t{anon} kB\nRssFile:\t{files} kB\nRssShmem:\t{shared} kB\n",
                anon + shared + files
            )
        };
        let mut memory = Memory::default();
        // The server, and two backends that touched more of the shared buffers.
        memory.add(&status(4096, 1024, 8192)).unwrap();
        memory.add(&status(1024, 65536, 6144)).unwrap();
        memory.add(&status(1024, 32768, 6144)).unwrap();
        assert_eq!(memory.mb(), (6144.0 + 65536.0 + 8192.0) / 1024.0);
        // A status without the parts (a kernel thread's) is no reading.
        assert!(memory.add("Name:\tkthreadd\n").is_none());
    }

    #[tokio::test]
    async fn a_busy_process_shows_cpu_and_memory_every_second() {
        let (done, over) = watch::channel(false);
        let me = Watched {
            node: 0,
            pid: std::process::id(),
        };
        let sampler = tokio::spawn(sample(vec![me], over));
        // Keep one core busy for ~2.2 s, off the runtime's thread.
        let busy = tokio::task::spawn_blocking(|| {
            let until = std::time::Instant::now() + Duration::from_millis(2_200);
            let mut x = 0u64;
            while std::time::Instant::now() < until {
                x = x.wrapping_mul(31).wrapping_add(1);
            }
            x
        });
        busy.await.unwrap();
        done.send_replace(true);
        let rows = sampler.await.unwrap();
        let client: Vec<&MetricsRow> = rows
            .iter()
            .map(|(_, r)| r)
            .filter(|r| r.source == "client")
            .collect();
        assert!(!client.is_empty(), "{rows:?}");
        assert!(client.iter().all(|r| r.rss_mb.unwrap() > 1.0));
        // The busy thread ran through the sampled second (on a shared machine, with
        // at least a quarter of a core).
        assert!(client[0].cpu_pct.unwrap() > 25.0, "{client:?}");
        assert!(rows.iter().any(|(_, r)| r.source == LOOPBACK));
    }
}
