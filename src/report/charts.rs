//! The charts of a report, built from loaded result folders: latency per event type,
//! latency and throughput over time, and the percentile spectrum.

use super::load::LoadedRun;
use super::svg::{self, Axis, Bars, Scale, Series};
use crate::report::hlog;

/// Mean, p50 and p99 of each event type, as grouped bars.
pub fn latency_bars(run: &LoadedRun) -> String {
    let categories: Vec<String> = run
        .summary
        .events
        .iter()
        .map(|e| e.event_type.clone())
        .collect();
    let pick = |name: &str, f: &dyn Fn(&crate::stats::LatencySummary) -> f64| Bars {
        name: name.into(),
        values: run.summary.events.iter().map(f).collect(),
        whiskers: None,
    };
    svg::bar_chart(
        "Latency per event type",
        "event type",
        &categories,
        &Axis::linear("latency (µs)"),
        &[
            pick("mean", &|e| e.mean_us),
            pick("p50", &|e| e.percentile("p50")),
            pick("p99", &|e| e.percentile("p99")),
        ],
    )
}

/// p50, p99 and max per interval of one event type.
pub fn latency_over_time(run: &LoadedRun, event_type: &str) -> String {
    let rows = run.series(event_type);
    let line = |name: &str, f: &dyn Fn(&super::intervals::IntervalRow) -> f64| Series {
        name: name.into(),
        points: rows
            .iter()
            .filter(|r| r.ops > r.errors)
            .map(|r| (r.start_s, f(r)))
            .collect(),
    };
    svg::line_chart(
        &format!("Latency over time: {event_type}"),
        &Axis::linear("time since the measured phase began (s)"),
        &Axis::log("latency (µs, log scale)"),
        &[
            line("p50", &|r| r.p50_us),
            line("p99", &|r| r.p99_us),
            line("max", &|r| r.max_us),
        ],
    )
}

/// Operations (or errors) per second per event type, over the same time axis.
pub fn rate_over_time(run: &LoadedRun, errors: bool) -> String {
    let interval = run.interval_s();
    let mut names: Vec<String> = run
        .summary
        .events
        .iter()
        .map(|e| e.event_type.clone())
        .collect();
    names.push("all".into());
    let series: Vec<Series> = names
        .iter()
        .map(|name| Series {
            name: name.clone(),
            points: run
                .series(name)
                .iter()
                .map(|r| {
                    (
                        r.start_s,
                        if errors {
                            r.errors as f64 / interval
                        } else {
                            r.throughput_ops_s
                        },
                    )
                })
                .collect(),
        })
        .collect();
    let (title, label) = if errors {
        ("Errors over time", "errors per second")
    } else {
        ("Throughput over time", "operations per second")
    };
    svg::line_chart(
        title,
        &Axis::linear("time since the measured phase began (s)"),
        &Axis::linear(label),
        &series,
    )
}

/// The x position of a percentile on the "nines" axis: 90 % → 1, 99 % → 2, …
fn nines(percentile: f64) -> f64 {
    -(1.0 - percentile / 100.0).log10()
}

pub fn nines_axis() -> Axis {
    let ticks = [0.0, 90.0, 99.0, 99.9, 99.99, 99.999]
        .iter()
        .map(|p| (nines(*p), format!("{p}%")))
        .collect();
    Axis {
        label: "percentile".into(),
        scale: Scale::Linear,
        ticks: Some(ticks),
    }
}

/// Latency by percentile of one histogram, up to the resolution its count allows.
pub fn spectrum(histogram: &hdrhistogram::Histogram<u64>) -> Vec<(f64, f64)> {
    if histogram.is_empty() {
        return Vec::new();
    }
    let top = (histogram.len() as f64).log10().clamp(1.0, 5.0);
    let steps = (top / 0.05).ceil() as usize;
    (0..=steps)
        .map(|i| {
            let x = (i as f64 * 0.05).min(top);
            let q = 1.0 - 10f64.powf(-x);
            (x, histogram.value_at_quantile(q) as f64 / 1_000.0)
        })
        .collect()
}

/// The spectrum of every event type and of all operations.
pub fn spectrum_chart(run: &LoadedRun) -> String {
    let mut series: Vec<Series> = run
        .summary
        .events
        .iter()
        .map(|e| Series {
            name: e.event_type.clone(),
            points: spectrum(&hlog::merged(&run.histograms, Some(&e.event_type))),
        })
        .collect();
    series.push(Series {
        name: "all".into(),
        points: spectrum(&hlog::merged(&run.histograms, None)),
    });
    svg::line_chart(
        "Percentile spectrum",
        &nines_axis(),
        &Axis::log("latency (µs, log scale)"),
        &series,
    )
}
