//! What `summary.json` holds: per event type (and node) counts, throughput and the
//! latency ladder, read off the histograms of [`OpStats`].

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::{MIN_SAMPLES_BEYOND, OpStats, PERCENTILES};

/// What `summary.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Which run these numbers are of, so the file reads alone (absent in folders
    /// written before it was added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<SummaryOf>,
    /// Wall time of the measured phase, seconds.
    pub elapsed_s: f64,
    pub ops: u64,
    pub errors: u64,
    /// All operations, failed ones included, per second.
    pub throughput_ops_s: f64,
    /// Successful operations per second.
    #[serde(default)]
    pub ok_throughput_ops_s: f64,
    pub events: Vec<LatencySummary>,
    pub overall: LatencySummary,
    /// The same operations by the node that served them ("node K", K in the order of
    /// the URL's hosts; "node ?": the store could not say, e.g. a failed Cassandra
    /// request). Only when a store named nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<LatencySummary>,
}

/// The run a summary is of: what a reader of summary.json alone needs to name it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SummaryOf {
    /// As run.json's `run_id`.
    pub run_id: String,
    /// `--tag`: the name the run was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// The store's name (its URL scheme).
    pub store: String,
    /// The preset or spec's name, or the events file's path.
    pub workload: String,
    /// Lanes, the operations in flight at once.
    pub concurrency: usize,
    /// sha256 of the events handed out, as run.json's `plan_sha256`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_sha256: Option<String>,
    /// `--percentiles` of the run, in percent: its table's columns, which `show` prints
    /// again (empty: the standard ladder).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentiles: Vec<f64>,
}

impl SummaryOf {
    /// The run's own percentile columns, labelled as `--percentiles` labels them.
    pub fn table_percentiles(&self) -> Vec<(String, f64)> {
        self.percentiles
            .iter()
            .map(|p| (format!("p{p}"), *p))
            .collect()
    }
}

impl Summary {
    /// summary.json's text: rows with no successes have `null` latencies.
    pub fn to_json(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).expect("a summary serialises");
        null_empty_latencies(&mut value["overall"]);
        for list in ["events", "nodes"] {
            if let Some(rows) = value.get_mut(list).and_then(|v| v.as_array_mut()) {
                rows.iter_mut().for_each(null_empty_latencies);
            }
        }
        value
    }
}

impl LatencyBrief {
    /// Mean, p50, p99 and max of a histogram (µs); `None` when it is empty.
    pub fn of(h: &Histogram<u64>) -> Option<LatencyBrief> {
        let us = |ns: u64| ns as f64 / 1_000.0;
        (!h.is_empty()).then(|| LatencyBrief {
            mean_us: h.mean() / 1_000.0,
            p50_us: us(h.value_at_percentile(50.0)),
            p99_us: us(h.value_at_percentile(99.0)),
            max_us: us(h.max()),
        })
    }
}

/// Mean, p50, p99 and max of a row's failed operations (timeouts show here) or of its
/// waits for a pooled connection (µs).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LatencyBrief {
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// One row of the table: counts, and latency in microseconds of the successful ops.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    pub event_type: String,
    pub count: u64,
    pub ok: u64,
    pub errors: u64,
    pub errors_by_kind: BTreeMap<String, u64>,
    /// The same failures by kind and the server's code (`{"conflict": {"1213": 5}}`),
    /// where the server gave one.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_by_code: BTreeMap<String, BTreeMap<String, u64>>,
    /// Attempts beyond the first (`--retries`); the latencies include their time.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u64,
    /// Calls the run's own end cut while in flight (Ctrl-C, or past `--duration`'s
    /// grace): outcome unknown, in neither `count` nor `errors`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cut: u64,
    /// The first few messages of each error kind.
    #[serde(default)]
    pub first_errors: BTreeMap<String, Vec<String>>,
    /// All operations of the row per second, failed ones included.
    pub throughput_ops_s: f64,
    /// Successful operations per second.
    #[serde(default)]
    pub ok_throughput_ops_s: f64,
    /// Mean, min, percentiles and max of the successes: `null` in summary.json when
    /// there were none (see [`Summary::to_json`]), 0 in memory, where `ok` says so.
    #[serde(deserialize_with = "zero_if_null")]
    pub mean_us: f64,
    /// Standard deviation of the same latencies (absent in folders written before it).
    #[serde(default, deserialize_with = "zero_if_null")]
    pub stddev_us: f64,
    #[serde(deserialize_with = "zero_if_null")]
    pub min_us: f64,
    /// p50 … p99.99, keyed as in [`PERCENTILES`].
    #[serde(deserialize_with = "zeros_if_null")]
    pub percentiles_us: BTreeMap<String, f64>,
    #[serde(deserialize_with = "zero_if_null")]
    pub max_us: f64,
    /// Percentiles with fewer than 10 successful samples beyond them (read with care).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thin_percentiles: Vec<String>,
    /// Latency of the failed operations, when there were some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<LatencyBrief>,
    /// Waits for a pooled connection, of every operation of the row (stores that keep
    /// a pool): not part of the latencies above, which are service time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<LatencyBrief>,
    /// Open loop (`--rate`): the same successful operations timed from their intended
    /// start (response time, what a client waiting in line sees); the ladder above is
    /// then service time (request sent → answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Box<LatencySummary>>,
}

impl LatencySummary {
    /// The summary of one event type's statistics over `elapsed_s` seconds.
    pub fn of(name: &str, stats: &OpStats, elapsed_s: f64) -> Self {
        Self::of_with(name, stats, elapsed_s, &[])
    }

    /// The same, with `extra` percentiles (label, percent) beside the standard ladder.
    pub fn of_with(name: &str, stats: &OpStats, elapsed_s: f64, extra: &[(String, f64)]) -> Self {
        let latency = stats.latency_ns.get();
        let mut summary = Self::ladder(name, stats, &latency, elapsed_s);
        summary.add_percentiles(&latency, extra);
        if stats.response_ns.len() > 0 {
            let response_ns = stats.response_ns.get();
            let mut response = Self::ladder(name, stats, &response_ns, elapsed_s);
            response.add_percentiles(&response_ns, extra);
            response.first_errors.clear();
            response.failed = None;
            response.queue = None;
            summary.response = Some(Box::new(response));
        }
        summary
    }

    /// Adds percentiles read off `h` (and marks those resting on few samples).
    pub fn add_percentiles(&mut self, h: &Histogram<u64>, extra: &[(String, f64)]) {
        for (label, p) in extra {
            let value = if h.is_empty() {
                0.0
            } else {
                h.value_at_percentile(*p) as f64 / 1_000.0
            };
            self.percentiles_us.insert(label.clone(), value);
            let thin = !h.is_empty() && (h.len() as f64) * (1.0 - p / 100.0) < MIN_SAMPLES_BEYOND;
            if thin && !self.thin_percentiles.contains(label) {
                self.thin_percentiles.push(label.clone());
            }
        }
    }

    /// Counts from `stats`, the latency ladder from `h`.
    fn ladder(name: &str, stats: &OpStats, h: &Histogram<u64>, elapsed_s: f64) -> Self {
        let us = |ns: u64| ns as f64 / 1_000.0;
        let empty = h.is_empty();
        let count = stats.ok() + stats.error_count();
        LatencySummary {
            event_type: name.to_string(),
            count,
            ok: stats.ok(),
            errors: stats.error_count(),
            retries: stats.retries,
            cut: stats.cut,
            errors_by_kind: stats
                .errors
                .iter()
                .map(|(k, n)| (k.to_string(), *n))
                .collect(),
            errors_by_code: stats
                .codes
                .iter()
                .map(|(kind, codes)| (kind.to_string(), codes.clone()))
                .collect(),
            first_errors: stats
                .first_messages
                .iter()
                .map(|(k, m)| (k.to_string(), m.clone()))
                .collect(),
            throughput_ops_s: per_second(count, elapsed_s),
            ok_throughput_ops_s: per_second(stats.ok(), elapsed_s),
            mean_us: if empty { 0.0 } else { h.mean() / 1_000.0 },
            stddev_us: if empty { 0.0 } else { h.stdev() / 1_000.0 },
            min_us: if empty { 0.0 } else { us(h.min()) },
            percentiles_us: PERCENTILES
                .iter()
                .map(|(label, p)| {
                    (
                        label.to_string(),
                        if empty {
                            0.0
                        } else {
                            us(h.value_at_percentile(*p))
                        },
                    )
                })
                .collect(),
            max_us: if empty { 0.0 } else { us(h.max()) },
            thin_percentiles: PERCENTILES
                .iter()
                .filter(|(_, p)| {
                    !empty && (h.len() as f64) * (1.0 - p / 100.0) < MIN_SAMPLES_BEYOND
                })
                .map(|(label, _)| label.to_string())
                .collect(),
            failed: LatencyBrief::of(&stats.failed_ns.get()),
            queue: LatencyBrief::of(&stats.queue_ns.get()),
            response: None,
        }
    }

    /// A percentile by its label (`p99`), µs; 0 where there is none.
    pub fn percentile(&self, label: &str) -> f64 {
        self.percentiles_us.get(label).copied().unwrap_or(0.0)
    }

    /// Whether too few operations stand behind a percentile to trust it.
    pub fn is_thin(&self, label: &str) -> bool {
        self.thin_percentiles.iter().any(|l| l == label)
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn zero_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(0.0))
}

fn zeros_if_null<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, f64>, D::Error> {
    let values = BTreeMap::<String, Option<f64>>::deserialize(d)?;
    Ok(values
        .into_iter()
        .map(|(label, value)| (label, value.unwrap_or(0.0)))
        .collect())
}

/// Blanks the latencies of a row with no successes (and of its response ladder): an
/// empty histogram has no latency, and a reader must not take one for zero.
fn null_empty_latencies(row: &mut serde_json::Value) {
    if row["ok"].as_u64() == Some(0) {
        for field in ["mean_us", "stddev_us", "min_us", "max_us"] {
            row[field] = serde_json::Value::Null;
        }
        if let Some(percentiles) = row["percentiles_us"].as_object_mut() {
            percentiles
                .values_mut()
                .for_each(|v| *v = serde_json::Value::Null);
        }
    }
    if let Some(response) = row.get_mut("response") {
        null_empty_latencies(response);
    }
}

fn per_second(count: u64, elapsed_s: f64) -> f64 {
    if elapsed_s > 0.0 {
        count as f64 / elapsed_s
    } else {
        0.0
    }
}
