//! A sweep's own outputs: `sweep.csv` (one row per run) and `sweep.html` (each metric
//! against the varied setting: the mean over repeats, whiskers from min to max).

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::html::page;
use super::svg::{self, Axis, Bars, escape};
use super::table::format_us;

/// One row of `sweep.csv`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct SweepRow {
    pub setting: String,
    pub value: String,
    pub repeat: usize,
    pub run_dir: String,
    pub ops: u64,
    pub errors: u64,
    /// Wall time of the measured phase, seconds.
    pub elapsed_s: f64,
    pub throughput_ops_s: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

/// A chart of the sweep: title, unit, and the number it plots.
type Metric = (&'static str, &'static str, fn(&SweepRow) -> f64);

/// The values in the order they were first swept.
fn values(rows: &[SweepRow]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for row in rows {
        if !out.contains(&row.value) {
            out.push(row.value.clone());
        }
    }
    out
}

/// Mean, min and max of a metric over the repeats of each value.
fn spread(
    rows: &[SweepRow],
    values: &[String],
    metric: fn(&SweepRow) -> f64,
) -> (Vec<f64>, Vec<(f64, f64)>) {
    values
        .iter()
        .map(|value| {
            let xs: Vec<f64> = rows
                .iter()
                .filter(|r| &r.value == value)
                .map(metric)
                .collect();
            let mean = xs.iter().sum::<f64>() / xs.len().max(1) as f64;
            let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (mean, (lo, hi))
        })
        .unzip()
}

pub fn html(title: &str, setting: &str, rows: &[SweepRow]) -> String {
    let values = values(rows);
    let mut body = format!("<h1>{}</h1>", escape(title));
    let metrics: [Metric; 4] = [
        ("Total time of the measured phase", "seconds", |r| {
            r.elapsed_s
        }),
        ("Throughput", "operations per second", |r| {
            r.throughput_ops_s
        }),
        ("Mean latency", "latency (µs)", |r| r.mean_us),
        ("p99 latency", "latency (µs)", |r| r.p99_us),
    ];
    for (name, unit, metric) in metrics {
        let (means, whiskers) = spread(rows, &values, metric);
        body.push_str(&svg::bar_chart(
            &format!("{name} by {setting} (mean of repeats, whiskers min–max)"),
            setting,
            &values,
            &Axis::linear(unit),
            &[Bars {
                name: name.into(),
                values: means,
                whiskers: Some(whiskers),
            }],
        ));
    }
    body.push_str(r#"<table id="sweep"><tr><th>value</th><th>repeat</th><th>ops</th><th>errors</th><th>time (s)</th><th>ops/s</th><th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th><th>run</th></tr>"#);
    for r in rows {
        let _ = write!(
            body,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
            escape(&r.value),
            r.repeat,
            r.ops,
            r.errors,
            r.elapsed_s,
            r.throughput_ops_s,
            format_us(r.mean_us),
            format_us(r.p50_us),
            format_us(r.p99_us),
            format_us(r.p999_us),
            format_us(r.max_us),
            escape(&r.run_dir)
        );
    }
    body.push_str("</table><p class=\"note\">Latencies in µs. Each run's own report.html is in its folder.</p>");
    page(title, &body)
}
