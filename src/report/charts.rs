//! The charts of a report, built from loaded result folders: latency per event type,
//! latency and throughput over time, and the percentile spectrum.

use std::collections::HashMap;

use super::figure::Figure;
use super::intervals::IntervalRow;
use super::loaded_run::LoadedRun;
use super::svg::{self, Axis, Bars, Mark, Scale, Series};
use crate::report::hlog;

/// Mean, p50 and p99 of each event type, as grouped bars.
pub fn latency_bars(run: &LoadedRun) -> Figure {
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
        marked: Vec::new(),
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

/// The faults of a run, as marks on its charts over time.
fn fault_marks(run: &LoadedRun) -> Vec<Mark> {
    run.record
        .faults
        .iter()
        .filter_map(|f| {
            Some(Mark {
                x: f.began_s?,
                label: format!("{} node {}", f.action, f.node),
            })
        })
        .collect()
}

/// The start of every interval from the first to the last that saw an operation,
/// silent ones included.
fn time_grid(run: &LoadedRun) -> Vec<f64> {
    let interval = run.interval_s();
    let last = run.intervals.iter().map(|r| index_of(run, r.start_s)).max();
    match last {
        Some(last) => (0..=last).map(|i| i as f64 * interval).collect(),
        None => Vec::new(),
    }
}

fn index_of(run: &LoadedRun, start_s: f64) -> u64 {
    (start_s / run.interval_s()).round() as u64
}

/// The rows of one event type (or `all`) by interval index.
fn by_interval<'a>(run: &'a LoadedRun, event_type: &str) -> HashMap<u64, &'a IntervalRow> {
    run.series(event_type)
        .into_iter()
        .map(|r| (index_of(run, r.start_s), r))
        .collect()
}

/// p50, p99 and max per interval of one event type; an interval in which none
/// succeeded leaves a gap in the lines.
pub fn latency_over_time(run: &LoadedRun, event_type: &str) -> Figure {
    let grid = time_grid(run);
    let rows = by_interval(run, event_type);
    let line = |name: &str, f: &dyn Fn(&IntervalRow) -> f64| Series {
        name: name.into(),
        points: grid
            .iter()
            .map(|at| {
                let value = rows
                    .get(&index_of(run, *at))
                    .filter(|r| r.ops > r.errors)
                    .map_or(f64::NAN, |r| f(r));
                (*at, value)
            })
            .collect(),
    };
    svg::marked_line_chart(
        &format!("Latency over time: {event_type}"),
        &Axis::linear("time since the measured phase began (s)"),
        &Axis::log("latency (µs)"),
        &{
            let mut lines = vec![
                line("p50", &|r| r.p50_us),
                line("p99", &|r| r.p99_us),
                line("max", &|r| r.max_us),
            ];
            if rows.values().any(|r| r.response_p99_us.is_some()) {
                lines.push(line("response p99", &|r| {
                    r.response_p99_us.unwrap_or(f64::NAN)
                }));
            }
            lines
        },
        &fault_marks(run),
    )
}

/// Operations (or errors) per second per event type, over the same time axis; an
/// interval in which an event type did not run counts zero.
pub fn rate_over_time(run: &LoadedRun, errors: bool) -> Figure {
    let interval = run.interval_s();
    let mut names: Vec<String> = run
        .summary
        .events
        .iter()
        .map(|e| e.event_type.clone())
        .collect();
    names.push("all".into());
    let grid = time_grid(run);
    let series: Vec<Series> = names
        .iter()
        .map(|name| {
            let rows = by_interval(run, name);
            Series {
                name: name.clone(),
                points: grid
                    .iter()
                    .map(|at| {
                        let value = rows.get(&index_of(run, *at)).map_or(0.0, |r| {
                            if errors {
                                r.errors as f64 / interval
                            } else {
                                r.throughput_ops_s
                            }
                        });
                        (*at, value)
                    })
                    .collect(),
            }
        })
        .collect();
    let (title, label) = if errors {
        ("Errors over time", "errors per second")
    } else {
        ("Throughput over time", "operations per second")
    };
    svg::marked_line_chart(
        title,
        &Axis::linear("time since the measured phase began (s)"),
        &Axis::linear(label),
        &series,
        &fault_marks(run),
    )
}

/// The x position of a percentile on the "nines" axis: 90 % → 1, 99 % → 2, …
fn nines(percentile: f64) -> f64 {
    -(1.0 - percentile / 100.0).log10()
}

/// An axis of percentiles spread by their nines, so the tail gets room.
pub fn nines_axis() -> Axis {
    let ticks = [0.0, 90.0, 99.0, 99.9, 99.99, 99.999]
        .iter()
        .map(|p| (nines(*p), format!("{p}%")))
        .collect();
    Axis {
        label: "percentile".into(),
        scale: Scale::Linear,
        ticks: Some(ticks),
        // The table says each point's percentile, not its place on the axis.
        value_at: |nines| 100.0 * (1.0 - 10f64.powf(-nines)),
        level: None,
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
pub fn spectrum_chart(run: &LoadedRun) -> Figure {
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
    spectrum_figure("Percentile spectrum", &series)
}

/// Spectra (from [`spectrum`]) on the nines axis, latency on a log scale.
pub fn spectrum_figure(title: &str, series: &[Series]) -> Figure {
    svg::line_chart(title, &nines_axis(), &Axis::log("latency (µs)"), series)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spectrum_table_gives_percentiles_not_places_on_the_nines_axis() {
        let series = [Series {
            name: "all".into(),
            points: vec![(0.0, 10.0), (2.0, 100.0), (3.0, 400.0)],
        }];
        let figure = spectrum_figure("t", &series);
        let percentiles: Vec<&str> = figure.table.rows.iter().map(|r| r[1].as_str()).collect();
        assert_eq!(percentiles, ["0", "99", "99.9"]);
    }
}
