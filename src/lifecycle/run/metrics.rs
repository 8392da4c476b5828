//! `--metrics ADDR`: the run's counters and latency served as OpenMetrics text at
//! `http://ADDR/metrics` while it runs, for a Prometheus that scrapes it (one target per
//! shard of a run on Kubernetes: deploy/prometheus.yml). Read from the interval
//! statistics the lanes record anyway, so serving adds nothing to their work. Once the
//! run is over the endpoint serves its totals until a scraper has read them, for
//! `--metrics-linger` at most: without that, Prometheus never sees the last second.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Mutex, Notify};

use crate::config::RunConfig;
use crate::db::{AnyStore, ErrorKind, Store};
use crate::result_dir::RunRecord;
use crate::runner::{PhaseClock, Progress, StopSignal};
use crate::stats::{OpStats, RunStats};
use crate::workload::EventType;

/// Latency buckets' upper bounds, in seconds: 1 µs to 10 s, so an in-memory store's
/// reads (a few µs) fall in buckets of their own rather than all in the first.
const BUCKETS: [f64; 22] = [
    0.000001, 0.0000025, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001,
    0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The longest a scraper may take to send its request, or to take the answer.
const REQUEST_DEADLINE: Duration = Duration::from_secs(5);

/// The endpoint, served until dropped.
pub(super) struct Metrics {
    task: tokio::task::JoinHandle<()>,
    /// Where it listens: the port the kernel gave, where `--metrics` asked for 0.
    pub addr: SocketAddr,
    served: Arc<Served>,
}

/// What every answer reads.
struct Served {
    progress: Arc<Progress>,
    totals: Mutex<Totals>,
    labels: Labels,
    /// When the phases began, once the run loop has them.
    phases: OnceLock<Arc<PhaseClock>>,
    /// Set once the run's totals are final.
    ended: AtomicBool,
    /// Set, and told, once a scraper has been answered with the final totals.
    final_read: AtomicBool,
    read_after_end: Notify,
}

/// The phases of a run, as `hatshop_phase` names them.
const PHASES: [&str; 4] = ["load", "warmup", "measure", "done"];

impl Metrics {
    /// Hands the endpoint the run's phase clock, so that it can say the phase.
    pub(super) fn watch_phases(&self, phases: Arc<PhaseClock>) {
        let _ = self.served.phases.set(phases);
    }

    /// The run's final statistics, served from now on in place of what the intervals
    /// had come to (the last one, cut short by the end, among them).
    pub(super) async fn ended(&self, stats: &RunStats) {
        let mut totals = self.served.totals.lock().await;
        totals.stats = Some(stats.clone());
        self.served.ended.store(true, Ordering::Release);
    }

    /// Keeps serving the final totals until a scraper has read them, `linger` at most;
    /// Ctrl-C ends the wait.
    pub(super) async fn linger(self, linger: Duration, stop: &StopSignal) {
        let read = self.served.read_after_end.notified();
        tokio::pin!(read);
        // Listening from here: a read between this check and the wait is not missed.
        read.as_mut().enable();
        if linger.is_zero()
            || !self.served.ended.load(Ordering::Acquire)
            || self.served.final_read.load(Ordering::Acquire)
        {
            return;
        }
        tokio::select! {
            _ = tokio::time::sleep(linger) => {}
            _ = read => {}
            _ = stop.interrupted() => {}
        }
    }
}

impl Drop for Metrics {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What the endpoint has added up so far: the intervals done before `from`, or the
/// run's final statistics once it has ended.
struct Totals {
    from: u64,
    stats: Option<RunStats>,
}

/// Checks before any work that `addr` can be served (bound, and let go at once): a
/// taken port is said in one line before the store is reached.
pub(super) fn check(addr: Option<SocketAddr>) -> Result<()> {
    if let Some(addr) = addr {
        std::net::TcpListener::bind(addr)
            .with_context(|| format!("--metrics {addr}: cannot serve there"))?;
    }
    Ok(())
}

/// The labels of every metric the run serves: its id, its store and its shard.
fn metric_labels(config: &RunConfig, store: &AnyStore) -> String {
    let mut labels = vec![
        label("run_id", &config.run_id),
        label("store", store.facts().name.as_str()),
    ];
    if let Some(shard) = config.shard {
        labels.push(label("shard", &format!("{}/{}", shard.index, shard.count)));
    }
    labels.join(",")
}

/// `hatshop_run_info`'s own labels: what ran, beside the labels of every metric.
fn run_info(config: &RunConfig) -> String {
    let mut labels = vec![
        label("workload", &config.workload_name()),
        label("concurrency", &config.concurrency.to_string()),
        label("pace", config.pace.name()),
        label("version", env!("CARGO_PKG_VERSION")),
    ];
    if let Some(tag) = &config.tag {
        labels.push(label("tag", tag));
    }
    labels.join(",")
}

/// Serves the metrics of the run of `config` when `--metrics` asks, until dropped.
/// Where it serves goes into `record`, and is said where the port was 0 (the kernel's
/// choice, which only this line names) or progress is shown.
pub(super) async fn serve_run(
    config: &RunConfig,
    store: &AnyStore,
    progress: Arc<Progress>,
    record: &mut RunRecord,
) -> Result<Option<Metrics>> {
    let Some(addr) = config.metrics else {
        return Ok(None);
    };
    let labels = Labels {
        every: metric_labels(config, store),
        info: run_info(config),
    };
    let served = serve(addr, labels, progress).await?;
    record.metrics = Some(served.addr.to_string());
    if config.show_progress || addr.port() == 0 {
        crate::console::note!("metrics: http://{}/metrics", served.addr);
    }
    Ok(Some(served))
}

/// The labels a run's metrics carry (`key="value"`, already escaped).
struct Labels {
    /// On every metric: the run's id, store and shard.
    every: String,
    /// On `hatshop_run_info` besides: what ran.
    info: String,
}

/// Binds `addr` and serves the run's metrics, labelled with `labels`, until the
/// returned [`Metrics`] is dropped.
async fn serve(addr: SocketAddr, labels: Labels, progress: Arc<Progress>) -> Result<Metrics> {
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("--metrics {addr}: cannot serve there"))?;
    let addr = listener
        .local_addr()
        .with_context(|| format!("--metrics {addr}: cannot serve there"))?;
    let served = Arc::new(Served {
        progress,
        totals: Mutex::new(Totals {
            from: 0,
            stats: None,
        }),
        labels,
        phases: OnceLock::new(),
        ended: AtomicBool::new(false),
        final_read: AtomicBool::new(false),
        read_after_end: Notify::new(),
    });
    let scrapers = Arc::new(tokio::sync::Semaphore::new(scrapers_at_once()));
    let task = {
        let served = served.clone();
        tokio::spawn(async move {
            let mut said = false;
            loop {
                // Past the cap, scrapers wait in the listen queue: held open and silent,
                // they would otherwise take the descriptors the run's own files need.
                let Ok(turn) = scrapers.clone().acquire_owned().await else {
                    return;
                };
                match listener.accept().await {
                    Ok((stream, _)) => {
                        let served = served.clone();
                        tokio::spawn(async move {
                            let _ = answer(stream, &served).await;
                            drop(turn);
                        });
                    }
                    // A failed accept passes (no file descriptor free under many
                    // scrapers, a connection aborted before it was taken): the endpoint
                    // waits a moment and serves on, as hyper's server does, where ending
                    // would leave the rest of the run unscraped. Said once: a storm of
                    // scrapers must not flood the terminal.
                    Err(e) => {
                        if !std::mem::replace(&mut said, true) {
                            crate::console::note!(
                                "metrics: a scraper's connection could not be taken ({e}); \
                                 serving on"
                            );
                        }
                        tokio::time::sleep(ACCEPT_AGAIN_AFTER).await
                    }
                }
            }
        })
    };
    Ok(Metrics { task, addr, served })
}

/// Scrapers answered at once at most, as node_exporter's `--web.max-requests` bounds
/// them (40 there).
const MAX_SCRAPERS: usize = 40;

/// Scrapers to answer at once: [`MAX_SCRAPERS`], or half the file descriptors the
/// process has free under its limit when that is fewer, so that a storm of them leaves
/// the run room to open its op log's next part.
fn scrapers_at_once() -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the one struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return MAX_SCRAPERS;
    }
    let open = std::fs::read_dir("/proc/self/fd").map_or(0, |fds| fds.count() as u64);
    let free = limit.rlim_cur.saturating_sub(open);
    ((free / 2) as usize).clamp(1, MAX_SCRAPERS)
}

/// How long the endpoint waits after an accept that failed.
const ACCEPT_AGAIN_AFTER: std::time::Duration = std::time::Duration::from_millis(50);

/// Reads one request and answers it: the metrics for `GET /metrics`, else 404.
async fn answer(mut stream: TcpStream, served: &Served) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(1024);
    let mut buffer = [0u8; 1024];
    let read = tokio::time::timeout(REQUEST_DEADLINE, async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
            let n = stream.read(&mut buffer).await?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buffer[..n]);
        }
        Ok::<_, std::io::Error>(())
    })
    .await;
    if !matches!(read, Ok(Ok(()))) {
        return Ok(());
    }
    let line = String::from_utf8_lossy(head.split(|&b| b == b'\r').next().unwrap_or(&[]));
    let path = line.split(' ').nth(1).unwrap_or("");
    let metrics = line.starts_with("GET ") && path.split('?').next() == Some("/metrics");
    // Read before the totals are: an answer begun before the end holds none of it.
    let final_totals = served.ended.load(Ordering::Acquire);
    let (status, content_type, body) = if metrics {
        let mut totals = served.totals.lock().await;
        (
            "200 OK",
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            exposition(served, &mut totals),
        )
    } else {
        (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "hatshop serves /metrics only\n".to_string(),
        )
    };
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    // A scraper that stops reading is given up on, as one that stops sending is.
    let sent = tokio::time::timeout(REQUEST_DEADLINE, stream.write_all(response.as_bytes())).await;
    let Ok(sent) = sent else {
        return Ok(());
    };
    sent?;
    // The totals are sent whole once written: a scraper that closes as soon as it has
    // read content-length bytes may make the shutdown below fail, and has read them.
    if metrics && final_totals {
        served.final_read.store(true, Ordering::Release);
        served.read_after_end.notify_waiters();
    }
    match tokio::time::timeout(REQUEST_DEADLINE, stream.shutdown()).await {
        Ok(shut) => shut,
        Err(_) => Ok(()),
    }
}

/// The metrics as OpenMetrics text, the intervals done since the last scrape added to
/// the totals first.
fn exposition(served: &Served, totals: &mut Totals) -> String {
    let run = &served.labels;
    if !served.ended.load(Ordering::Acquire) {
        totals.catch_up(&served.progress);
    }
    let mut out = String::new();
    gauges(&mut out, &served.progress, run);
    phase(&mut out, served);
    let events = totals.stats.as_ref().map_or(&[][..], RunStats::events);
    // Only event types that ran: one that has not is no series yet.
    let ran: Vec<(EventType, &OpStats)> = EventType::ALL
        .into_iter()
        .zip(events)
        .filter(|(_, stats)| stats.ok() + stats.error_count() > 0)
        .collect();
    operations(&mut out, &run.every, &ran);
    latencies(&mut out, &run.every, &ran);
    out.push_str("# EOF\n");
    out
}

impl Totals {
    /// Adds the intervals done since the last scrape.
    fn catch_up(&mut self, progress: &Progress) {
        let Some(intervals) = progress.intervals.get() else {
            return;
        };
        let (done, next) = intervals.done_from(self.from);
        self.from = next;
        if let Some(done) = done {
            match &mut self.stats {
                Some(stats) => stats.merge(&done),
                None => self.stats = Some(done),
            }
        }
    }
}

/// What runs, events applied and operations in flight: read live, not per interval.
fn gauges(out: &mut String, progress: &Progress, run: &Labels) {
    let labels = run.every.as_str();
    family(
        out,
        "hatshop_run_info",
        "gauge",
        "1, labelled with what runs: workload, concurrency, pace, tag and hatshop's version.",
    );
    let _ = writeln!(out, "hatshop_run_info{{{labels},{}}} 1", run.info);
    family(
        out,
        "hatshop_events_applied",
        "counter",
        "Events applied, in every phase (load and warm-up too).",
    );
    let applied = progress.applied.load(std::sync::atomic::Ordering::Relaxed);
    let _ = writeln!(out, "hatshop_events_applied_total{{{labels}}} {applied}");
    family(
        out,
        "hatshop_in_flight",
        "gauge",
        "Operations sent and not yet answered.",
    );
    let _ = writeln!(
        out,
        "hatshop_in_flight{{{labels}}} {}",
        progress.in_flight()
    );
}

/// The phase the run is in, as an OpenMetrics state set: 1 for the phase it is in, 0
/// for the others.
fn phase(out: &mut String, served: &Served) {
    let now = if served.ended.load(Ordering::Acquire) {
        "done"
    } else {
        match served.phases.get() {
            Some(phases) if phases.measure.get().is_some() => "measure",
            Some(phases) if phases.warmup.get().is_some() => "warmup",
            _ => "load",
        }
    };
    family(
        out,
        "hatshop_phase",
        "stateset",
        "The run's phase: load, warmup, measure, then done (the totals final).",
    );
    for phase in PHASES {
        let _ = writeln!(
            out,
            "hatshop_phase{{{},hatshop_phase=\"{phase}\"}} {}",
            served.labels.every,
            u8::from(phase == now)
        );
    }
}

/// Measured operations by event type and outcome: every outcome of an event type that
/// ran, from 0, since a rate over a series that appears at its first error misses it.
fn operations(out: &mut String, labels: &str, ran: &[(EventType, &OpStats)]) {
    family(
        out,
        "hatshop_operations",
        "counter",
        "Measured operations by event type and outcome, in the intervals done (about a second behind).",
    );
    for (event, stats) in ran {
        let of = format!("{labels},event_type=\"{}\"", event.as_str());
        let _ = writeln!(
            out,
            "hatshop_operations_total{{{of},outcome=\"ok\"}} {}",
            stats.ok()
        );
        let failed: BTreeMap<&str, u64> = stats.errors_by_kind().collect();
        for kind in ErrorKind::ALL
            .iter()
            .filter(|k| **k != ErrorKind::Cancelled)
        {
            let kind = kind.as_str();
            let n = failed.get(kind).copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "hatshop_operations_total{{{of},outcome=\"error\",error_kind=\"{kind}\"}} {n}"
            );
        }
    }
}

/// Service time of the successes, and under --rate their response time (from when
/// each was due: what a user in line saw).
fn latencies(out: &mut String, labels: &str, ran: &[(EventType, &OpStats)]) {
    family(
        out,
        "hatshop_latency_seconds",
        "histogram",
        "Service time of the successful measured operations (sent to answered).",
    );
    for (event, stats) in ran.iter().filter(|(_, stats)| stats.ok() > 0) {
        let of = format!("{labels},event_type=\"{}\"", event.as_str());
        histogram(out, "hatshop_latency_seconds", &of, &stats.histogram());
    }
    let responses: Vec<_> = ran
        .iter()
        .map(|(event, stats)| (event, stats.response_histogram()))
        .filter(|(_, response)| !response.is_empty())
        .collect();
    if responses.is_empty() {
        return;
    }
    family(
        out,
        "hatshop_response_seconds",
        "histogram",
        "Response time of the successful measured operations under --rate (due to answered).",
    );
    for (event, response) in responses {
        let of = format!("{labels},event_type=\"{}\"", event.as_str());
        histogram(out, "hatshop_response_seconds", &of, &response);
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# TYPE {name} {kind}\n# HELP {name} {help}");
}

/// A histogram's cumulative buckets, count and sum, from the HdrHistogram in ns.
fn histogram(out: &mut String, name: &str, of: &str, latency_ns: &Histogram<u64>) {
    for (le, below) in BUCKETS.iter().zip(cumulative_buckets(latency_ns)) {
        let _ = writeln!(out, "{name}_bucket{{{of},le=\"{le}\"}} {below}");
    }
    let count = latency_ns.len();
    let _ = writeln!(out, "{name}_bucket{{{of},le=\"+Inf\"}} {count}");
    let _ = writeln!(out, "{name}_count{{{of}}} {count}");
    let sum = latency_ns.mean() * count as f64 / 1e9;
    let _ = writeln!(out, "{name}_sum{{{of}}} {sum}");
}

/// How many recorded latencies are at most each of `BUCKETS`, in one pass over the
/// recorded values (they come in ascending order).
fn cumulative_buckets(latency_ns: &Histogram<u64>) -> [u64; BUCKETS.len()] {
    let mut counts = [0u64; BUCKETS.len()];
    let mut bucket = 0;
    for v in latency_ns.iter_recorded() {
        let ns = v.value_iterated_to() as f64;
        while bucket < BUCKETS.len() && ns > BUCKETS[bucket] * 1e9 {
            bucket += 1;
        }
        let Some(count) = counts.get_mut(bucket) else {
            break;
        };
        *count += v.count_at_value();
    }
    for i in 1..counts.len() {
        counts[i] += counts[i - 1];
    }
    counts
}

/// `key="value"` with OpenMetrics' escapes.
fn label(key: &str, value: &str) -> String {
    let escaped = value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    format!("{key}=\"{escaped}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each bucket holds every latency at most its bound, whatever lies above the last.
    #[test]
    fn buckets_count_the_latencies_at_most_their_bound() {
        let mut latency_ns = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        let recorded = [
            (2_000, 5),
            (40_000, 3),
            (90_000, 1),
            (150_000, 2),
            (2_000_000, 1),
            (700_000_000, 4),
            (20_000_000_000, 1),
        ];
        for (ns, times) in recorded {
            latency_ns.record_n(ns, times).unwrap();
        }
        let counts = cumulative_buckets(&latency_ns);
        for (le, count) in BUCKETS.iter().zip(counts) {
            let expected: u64 = latency_ns
                .iter_recorded()
                .filter(|v| v.value_iterated_to() as f64 <= le * 1e9)
                .map(|v| v.count_at_value())
                .sum();
            assert_eq!(count, expected, "le {le}");
        }
        assert_eq!(counts[0], 0, "none at 1 µs");
        assert_eq!(counts[1], 5, "2 µs ×5");
        assert_eq!(counts[5], 8, "and 40 µs ×3");
        assert_eq!(counts[6], 9, "and 90 µs");
        assert_eq!(counts[7], 11, "and 150 µs ×2");
        assert_eq!(counts[BUCKETS.len() - 1], 16, "all but the 20 s one");
    }
}
