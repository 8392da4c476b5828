//! Latency and error statistics: one HdrHistogram per event type and interval, recorded
//! on the hot path into the runtime thread's shard (no I/O, an uncontended lock) and
//! merged when the run ends.
//!
//! Depends on nothing else of ours: event types are small indices, error kinds are
//! names, and the caller supplies the labels when it asks for a summary.

pub mod fairness;
mod histogram;
mod interval;
mod op_hand_off;
pub mod settling;
mod spread;
mod summary;
pub mod threshold;

use std::borrow::Cow;
use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use histogram::LazyHistogram;
pub use histogram::new_histogram;
pub use interval::{IntervalCollector, total};
pub use op_hand_off::{OpBatchSender, TAKE_EVERY};
pub use spread::Spread;
pub use summary::{LatencyBrief, LatencySummary, Summary, SummaryOf};

/// Distinct error messages kept per kind, for reports (the op log has them all).
const KEPT_MESSAGES: usize = 3;

/// The percentile ladder shown everywhere: p50 … p99.99.
pub const PERCENTILES: [(&str, f64); 7] = [
    ("p50", 50.0),
    ("p75", 75.0),
    ("p90", 90.0),
    ("p95", 95.0),
    ("p99", 99.0),
    ("p99.9", 99.9),
    ("p99.99", 99.99),
];

/// Reads `--percentiles 50,90,99.9`: each a percent above 0 and at most 100, labelled
/// as the ladder labels them (`p99.9`), in rising order and each once, so the table's
/// columns read left to right however they were typed.
pub fn parse_percentiles(text: &str) -> Result<Vec<(String, f64)>, String> {
    let mut chosen = text
        .split(',')
        .map(str::trim)
        .map(|part| {
            let p: f64 = part.trim_start_matches('p').parse().map_err(|_| {
                format!("'{part}' is not a percentile; give percents, e.g. 50,99,99.9")
            })?;
            if !(p > 0.0 && p <= 100.0) {
                return Err(format!(
                    "{part} is not a percentile above 0 and at most 100"
                ));
            }
            // 99.99999999999999999 reads as 100: a percentile is what it says, or refused.
            let digits = part.trim_start_matches('p');
            let digits = match digits.contains('.') {
                true => digits.trim_end_matches('0').trim_end_matches('.'),
                false => digits,
            };
            if format!("{p}") != digits {
                return Err(format!(
                    "{part} is not a percentile hatshop can tell apart from its neighbours: \
                     give a plain decimal of at most 15 digits, e.g. 99.999"
                ));
            }
            Ok((format!("p{p}"), p))
        })
        .collect::<Result<Vec<_>, String>>()?;
    chosen.sort_by(|a, b| a.1.total_cmp(&b.1));
    chosen.dedup_by(|a, b| a.1 == b.1);
    Ok(chosen)
}

/// A percentile resting on fewer samples beyond it than this is flagged: p99.99 of
/// 1,000 operations is just the maximum.
pub const MIN_SAMPLES_BEYOND: f64 = 10.0;

/// Latencies (ns) of successful and of failed operations, and counts of failures by
/// kind, for one event type.
#[derive(Debug, Clone, Default)]
pub struct OpStats {
    latency_ns: LazyHistogram,
    /// Failures keep their latency apart: a 10 s timeout shows here, not in the ladder.
    failed_ns: LazyHistogram,
    /// Open loop (`--rate`) only: intended start → answer of successful operations,
    /// what a client waiting in line sees (no coordinated omission).
    response_ns: LazyHistogram,
    /// Waits for a pooled connection (stores that keep a pool), of every operation:
    /// measured apart, so pool starvation does not pass for service time.
    queue_ns: LazyHistogram,
    errors: BTreeMap<&'static str, u64>,
    /// Failures by kind and the server's code for them (`conflict`, `1213`).
    codes: BTreeMap<&'static str, BTreeMap<String, u64>>,
    first_messages: BTreeMap<&'static str, Vec<String>>,
    /// Attempts beyond the first (`--retries`); their time is inside the latencies.
    retries: u64,
    /// Calls the run itself ended while in flight (Ctrl-C, or past `--duration`'s
    /// grace): no failure of the store's, so counted apart, in no latency and no count.
    cut: u64,
}

impl OpStats {
    /// Records a success's service time.
    pub fn record_ok(&mut self, latency_ns: u64) {
        self.latency_ns.record(latency_ns);
    }

    /// Records a failure: its kind, code, time and first messages.
    pub fn record_error(
        &mut self,
        kind: &'static str,
        code: Option<&str>,
        latency_ns: u64,
        message: &str,
    ) {
        self.failed_ns.record(latency_ns);
        *self.errors.entry(kind).or_default() += 1;
        if let Some(code) = code {
            // Allocates only on a code not seen before.
            let by_code = self.codes.entry(kind).or_default();
            match by_code.get_mut(code) {
                Some(n) => *n += 1,
                None => {
                    by_code.insert(code.to_string(), 1);
                }
            }
        }
        let kept = self.first_messages.entry(kind).or_default();
        if kept.len() < KEPT_MESSAGES && !kept.iter().any(|m| m == message) {
            kept.push(message.to_string());
        }
    }

    /// Counts retries made before the outcome.
    pub fn record_retries(&mut self, retries: u64) {
        self.retries += retries;
    }

    /// Records one operation's outcome, with its queueing time where it waited for a connection.
    pub fn record(&mut self, latency_ns: u64, queued_ns: Option<u64>, outcome: Outcome<'_>) {
        if let Some(queued_ns) = queued_ns {
            self.queue_ns.record(queued_ns);
        }
        match outcome {
            Outcome::Ok {
                retries,
                response_ns,
            } => {
                self.record_ok(latency_ns);
                if let Some(response_ns) = response_ns {
                    self.response_ns.record(response_ns);
                }
                self.record_retries(retries);
            }
            Outcome::Failed {
                kind,
                code,
                message,
                retries,
            } => {
                self.record_error(kind, code, latency_ns, message);
                self.record_retries(retries);
            }
            Outcome::Cut { retries } => {
                self.cut += 1;
                self.record_retries(retries);
            }
        }
    }

    /// Adds another lane's or interval's statistics to these.
    pub fn merge(&mut self, other: &OpStats) {
        self.retries += other.retries;
        self.cut += other.cut;
        self.latency_ns.add(&other.latency_ns);
        self.failed_ns.add(&other.failed_ns);
        self.response_ns.add(&other.response_ns);
        self.queue_ns.add(&other.queue_ns);
        for (kind, n) in &other.errors {
            *self.errors.entry(kind).or_default() += n;
        }
        for (kind, codes) in &other.codes {
            let mine = self.codes.entry(kind).or_default();
            for (code, n) in codes {
                *mine.entry(code.clone()).or_default() += n;
            }
        }
        for (kind, messages) in &other.first_messages {
            let kept = self.first_messages.entry(kind).or_default();
            for message in messages {
                if kept.len() < KEPT_MESSAGES && !kept.contains(message) {
                    kept.push(message.clone());
                }
            }
        }
    }

    /// Successful operations.
    pub fn ok(&self) -> u64 {
        self.latency_ns.len()
    }

    /// Encodes its histograms: its interval is over.
    fn pack(&mut self) {
        self.latency_ns.pack();
        self.failed_ns.pack();
        self.response_ns.pack();
        self.queue_ns.pack();
    }

    /// Back to no operations, keeping the histograms' memory.
    pub fn reset(&mut self) {
        self.latency_ns.reset();
        self.failed_ns.reset();
        self.response_ns.reset();
        self.queue_ns.reset();
        self.errors.clear();
        self.codes.clear();
        self.first_messages.clear();
        self.retries = 0;
        self.cut = 0;
    }

    /// Failed operations by kind.
    pub fn errors_by_kind(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.errors.iter().map(|(kind, n)| (*kind, *n))
    }

    /// Failed operations, of every kind.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Retries made.
    pub fn retries(&self) -> u64 {
        self.retries
    }

    /// Calls cut by the run's own end while in flight.
    pub fn cut(&self) -> u64 {
        self.cut
    }

    /// Service times of the successes, ns.
    pub fn histogram(&self) -> Cow<'_, Histogram<u64>> {
        self.latency_ns.get()
    }

    /// Open loop: response times (from when each operation was due) of the successes.
    pub fn response_histogram(&self) -> Cow<'_, Histogram<u64>> {
        self.response_ns.get()
    }
}

/// Statistics of a whole run: one `OpStats` per event type index, and the same
/// operations again by the node that served them (index 0: the store did not say).
#[derive(Debug, Clone)]
pub struct RunStats {
    per_event: Vec<OpStats>,
    /// By node, once operations came from more than one node.
    per_node: Vec<OpStats>,
    /// While every operation so far came from one node (and `per_node` is empty): that
    /// node. Its statistics are all of `per_event`, so they are not kept twice: on one
    /// server, each shard would hold a second histogram for nothing.
    sole_node: Option<u16>,
}

impl RunStats {
    /// Empty statistics for this many event types.
    pub fn new(event_types: usize) -> Self {
        RunStats {
            per_event: vec![OpStats::default(); event_types],
            per_node: Vec::new(),
            sole_node: None,
        }
    }

    /// The statistics of one event type, to record into.
    pub fn event(&mut self, index: usize) -> &mut OpStats {
        &mut self.per_event[index]
    }

    /// The statistics of every event type, by index.
    pub fn events(&self) -> &[OpStats] {
        &self.per_event
    }

    /// The statistics of one node (1-based; 0: unknown), kept apart.
    fn node(&mut self, node: u16) -> &mut OpStats {
        let index = node as usize;
        if self.per_node.len() <= index {
            self.per_node.resize_with(index + 1, OpStats::default);
        }
        &mut self.per_node[index]
    }

    /// Where an operation of `node` is to be counted by node, before it is counted by
    /// event type: nowhere while it is of the sole node so far.
    fn by_node(&mut self, node: u16) -> Option<&mut OpStats> {
        if self.per_node.is_empty() {
            match self.sole_node {
                None => {
                    self.sole_node = Some(node);
                    return None;
                }
                Some(sole) if sole == node => return None,
                Some(_) => self.split(),
            }
        }
        Some(self.node(node))
    }

    /// From one node to several: the sole node's statistics are made from `per_event`.
    fn split(&mut self) {
        let all = self.all();
        // Index 0 makes `per_node` non-empty even when no operation came yet.
        self.node(0);
        if let Some(sole) = self.sole_node.take() {
            *self.node(sole) = all;
        }
    }

    /// Records one operation under its event type and its node.
    pub fn record(
        &mut self,
        event: usize,
        node: u16,
        latency_ns: u64,
        queued_ns: Option<u64>,
        outcome: Outcome<'_>,
    ) {
        if let Some(stats) = self.by_node(node) {
            stats.record(latency_ns, queued_ns, outcome);
        }
        self.event(event).record(latency_ns, queued_ns, outcome);
    }

    /// Adds another lane's statistics, event type by event type and node by node.
    pub fn merge(&mut self, other: &RunStats) {
        // By node first: a split makes the sole node's statistics from `per_event`
        // as it is before `other` joins it.
        if let Some(sole) = other.sole_node {
            if let Some(mine) = self.by_node(sole) {
                mine.merge(&other.all());
            }
        } else if !other.per_node.is_empty() {
            if self.per_node.is_empty() {
                self.split();
            }
            for (node, theirs) in other.per_node.iter().enumerate() {
                if theirs.ok() + theirs.error_count() > 0 {
                    self.node(node as u16).merge(theirs);
                }
            }
        }
        for (mine, theirs) in self.per_event.iter_mut().zip(&other.per_event) {
            mine.merge(theirs);
        }
    }

    /// Encodes its histograms: its interval is over, and only a late lane may still
    /// add to it.
    pub fn pack(&mut self) {
        self.per_event.iter_mut().for_each(OpStats::pack);
        self.per_node.iter_mut().for_each(OpStats::pack);
    }

    /// Back to no operations, keeping the histograms' memory.
    pub fn reset(&mut self) {
        self.per_event.iter_mut().for_each(OpStats::reset);
        self.per_node.iter_mut().for_each(OpStats::reset);
        self.sole_node = None;
    }

    /// Every event type's statistics merged.
    fn all(&self) -> OpStats {
        let mut all = OpStats::default();
        for stats in &self.per_event {
            all.merge(stats);
        }
        all
    }

    /// Operations of every event type, successes and failures.
    pub fn total_ops(&self) -> u64 {
        self.per_event
            .iter()
            .map(|s| s.ok() + s.error_count())
            .sum()
    }

    /// Calls cut by the run's own end, of every event type.
    pub fn total_cut(&self) -> u64 {
        self.per_event.iter().map(OpStats::cut).sum()
    }

    /// Numbers per event type (labelled by `names`) and overall, over `elapsed_s`.
    pub fn summary(&self, names: &[&str], elapsed_s: f64) -> Summary {
        self.summary_with(names, elapsed_s, &[])
    }

    /// The same, with `extra` percentiles (label, percent) beside the standard ladder.
    pub fn summary_with(&self, names: &[&str], elapsed_s: f64, extra: &[(String, f64)]) -> Summary {
        let mut all = OpStats::default();
        let mut events = Vec::new();
        for (stats, name) in self.per_event.iter().zip(names) {
            all.merge(stats);
            if stats.ok() + stats.error_count() > 0 {
                events.push(LatencySummary::of_with(name, stats, elapsed_s, extra));
            }
        }
        let overall = LatencySummary::of_with("all", &all, elapsed_s, extra);
        let sole;
        let per_node = match self.sole_node {
            Some(node) => {
                let mut one = vec![OpStats::default(); node as usize + 1];
                one[node as usize] = all.clone();
                sole = one;
                &sole
            }
            None => &self.per_node,
        };
        // By node only when some store said which node served an operation.
        let nodes = if per_node.len() > 1 {
            per_node
                .iter()
                .enumerate()
                .filter(|(_, stats)| stats.ok() + stats.error_count() > 0)
                .map(|(node, stats)| {
                    let label = if node == 0 {
                        "node ?".to_string()
                    } else {
                        format!("node {node}")
                    };
                    LatencySummary::of_with(&label, stats, elapsed_s, extra)
                })
                .collect()
        } else {
            Vec::new()
        };
        Summary {
            run: None,
            elapsed_s,
            ops: overall.count,
            errors: overall.errors,
            throughput_ops_s: overall.throughput_ops_s,
            ok_throughput_ops_s: overall.ok_throughput_ops_s,
            events,
            overall,
            nodes,
        }
    }
}

/// How one operation ended, for [`RunStats::record`].
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    Ok {
        retries: u64,
        /// Open loop: intended start → answer (the latency is send → answer).
        response_ns: Option<u64>,
    },
    Failed {
        kind: &'static str,
        /// The server's code for the error, when it gave one.
        code: Option<&'a str>,
        message: &'a str,
        retries: u64,
    },
    /// The run ended the call while it was in flight (Ctrl-C, or past `--duration`'s
    /// grace): its outcome is unknown, and it is no failure of the store's.
    Cut { retries: u64 },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_what_they_say_or_refused() {
        let chosen = parse_percentiles("99.90, p50,99.999,100").unwrap();
        let labels: Vec<&str> = chosen.iter().map(|(label, _)| label.as_str()).collect();
        assert_eq!(labels, ["p50", "p99.9", "p99.999", "p100"]);
        for bad in ["99.9999999999999999999", "0", "101", "abc", "1e1"] {
            assert!(parse_percentiles(bad).is_err(), "{bad}");
        }
    }

    fn ok() -> Outcome<'static> {
        Outcome::Ok {
            retries: 0,
            response_ns: None,
        }
    }

    /// (label, count) of the by-node rows of a summary.
    fn by_node(stats: &RunStats) -> Vec<(String, u64)> {
        stats
            .summary(&["a", "b"], 1.0)
            .nodes
            .iter()
            .map(|n| (n.event_type.clone(), n.count))
            .collect()
    }

    #[test]
    fn a_sole_node_is_counted_once_and_split_when_a_second_appears() {
        let mut lane = RunStats::new(2);
        for i in 0..10 {
            lane.record(i % 2, 1, 1_000, None, ok());
        }
        assert!(lane.per_node.is_empty(), "one node: nothing kept twice");
        assert_eq!(by_node(&lane), [("node 1".to_string(), 10)]);
        lane.record(0, 2, 1_000, None, ok());
        assert_eq!(
            by_node(&lane),
            [("node 1".to_string(), 10), ("node 2".to_string(), 1)]
        );

        // Merging: a sole-node share into nothing, into the same node, into another.
        let mut total = RunStats::new(2);
        let mut only_3 = RunStats::new(2);
        only_3.record(1, 3, 1_000, None, ok());
        total.merge(&only_3);
        total.merge(&only_3);
        assert_eq!(by_node(&total), [("node 3".to_string(), 2)]);
        total.merge(&lane);
        assert_eq!(
            by_node(&total),
            [
                ("node 1".to_string(), 10),
                ("node 2".to_string(), 1),
                ("node 3".to_string(), 2)
            ]
        );
        let mut unsaid = RunStats::new(2);
        unsaid.record(0, 0, 1_000, None, ok());
        assert!(by_node(&unsaid).is_empty(), "no store said: no rows");
        total.merge(&unsaid);
        assert_eq!(by_node(&total).first(), Some(&("node ?".to_string(), 1)));
        assert_eq!(total.total_ops(), 14);
    }

    #[test]
    fn merged_stats_equal_stats_recorded_in_one_place() {
        let mut one = RunStats::new(2);
        let mut a = RunStats::new(2);
        let mut b = RunStats::new(2);
        for i in 0..10_000u64 {
            let ns = 1_000 + (i * 7919) % 50_000;
            one.event((i % 2) as usize).record_ok(ns);
            if i % 3 == 0 { &mut a } else { &mut b }
                .event((i % 2) as usize)
                .record_ok(ns);
        }
        a.event(1).record_error("timeout", None, 9_000, "slow");
        one.event(1).record_error("timeout", None, 9_000, "slow");
        a.merge(&b);
        let names = ["x", "y"];
        assert_eq!(a.summary(&names, 2.0), one.summary(&names, 2.0));
        assert_eq!(a.total_ops(), 10_001);
    }

    #[test]
    fn a_few_distinct_messages_are_kept_per_kind() {
        let mut stats = RunStats::new(1);
        for m in ["a", "a", "b", "c", "d"] {
            stats.event(0).record_error("timeout", None, 1_000, m);
        }
        let s = stats.summary(&["x"], 1.0);
        assert_eq!(s.events[0].first_errors["timeout"], ["a", "b", "c"]);
        assert_eq!(s.errors, 5);
        assert_eq!(s.events[0].ok, 0);
        assert_eq!(s.events[0].failed.as_ref().unwrap().max_us, 1.0);
    }

    #[test]
    fn failures_are_counted_by_the_servers_code_across_merges() {
        let mut a = RunStats::new(1);
        let mut b = RunStats::new(1);
        a.event(0)
            .record_error("conflict", Some("1213"), 1_000, "deadlock");
        b.event(0)
            .record_error("conflict", Some("1213"), 1_000, "deadlock");
        b.event(0)
            .record_error("conflict", Some("1020"), 1_000, "changed");
        b.event(0).record_error("timeout", None, 1_000, "no answer");
        a.merge(&b);
        let row = &a.summary(&["x"], 1.0).events[0];
        assert_eq!(row.errors_by_kind["conflict"], 3);
        assert_eq!(row.errors_by_code["conflict"]["1213"], 2);
        assert_eq!(row.errors_by_code["conflict"]["1020"], 1);
        assert!(!row.errors_by_code.contains_key("timeout"), "no code given");
    }

    #[test]
    fn percentiles_come_from_the_histogram() {
        let mut stats = RunStats::new(1);
        for us in 1..=1000u64 {
            stats.event(0).record_ok(us * 1_000);
        }
        let s = stats.summary(&["x"], 1.0);
        let row = &s.events[0];
        assert_eq!(row.count, 1000);
        assert!((row.percentile("p50") - 500.0).abs() <= 1.0, "{row:?}");
        assert!((row.percentile("p99") - 990.0).abs() <= 1.0, "{row:?}");
        assert!((row.max_us - 1000.0).abs() <= 1.0);
        assert!((row.mean_us - 500.5).abs() < 0.5);
        assert_eq!(s.throughput_ops_s, 1000.0);
        // 1,000 samples: 1 beyond p99.9 and 0.1 beyond p99.99, 10 beyond p99.
        assert_eq!(row.thin_percentiles, ["p99.9", "p99.99"]);
    }
}

/// A lane's op-log records on their way to the op log thread, with one of the lane's
/// few permits to have rows not yet in the file: the thread drops it once they are
/// written, so that a killed run loses at most a bounded share of each lane's rows.
pub struct OpBatch {
    pub records: Vec<OpRecord>,
    pub unwritten: tokio::sync::OwnedSemaphorePermit,
}

/// One measured operation, as the op log stores it. Built by the runner outside the
/// timed window; written by the op log thread.
#[derive(Debug, Clone)]
pub struct OpRecord {
    pub seq: u64,
    pub event_type: &'static str,
    /// The order id, or the key index of a key-value event.
    pub target: u64,
    /// When the request was sent (after any pool wait), in ns since the run's epoch.
    pub start_ns: u64,
    /// Open loop: when it was due to be sent, in ns since the run's epoch.
    pub due_ns: Option<u64>,
    pub latency_ns: u64,
    /// Kind name and message of a failure; `None` for success.
    pub error: Option<(&'static str, String)>,
    /// The server's code for the failure, when it gave one.
    pub error_code: Option<String>,
    /// The node that served it (1-based, the URL's host order; 0: not known).
    pub node: u16,
    /// Calls made: 1, or more with `--retries` (the latency spans them all).
    pub attempts: u32,
    /// Time waiting for a pooled connection, not in `latency_ns` (stores with a pool).
    pub queued_ns: Option<u64>,
}
