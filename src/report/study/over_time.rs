//! A figure over the seconds of each cell's run, from its intervals.csv: how steady a
//! metric was, and how far it dipped.

use super::cells::{CellResult, MetricRow};
use super::evidence::MIN_BATCHES;
use super::finding::{capital, nothing_drawn};
use super::points::mean;
use super::spec::{Dim, FigureSpec, Metric};
use crate::report::figure::Figure;
use crate::report::intervals::IntervalRow;
use crate::report::svg::{self, Axis, Series};

/// A line per cell of the figure over its run's seconds, and how steady each was.
pub(super) fn over_time(spec: &FigureSpec, cells: &[CellResult]) -> (Figure, String) {
    let metric = spec.metric;
    let mut series = Vec::new();
    let mut clauses = Vec::new();
    // A line per cell, of its first repeat: three lines of one name would read as one.
    for cell in cells.iter().filter(|c| {
        spec.draws(&c.part)
            && c.counted
            && c.matches(&spec.only)
            && c.label("repeat").is_none_or(|r| r == "1")
    }) {
        let row_of = |r: &IntervalRow| MetricRow {
            event_type: r.event_type.clone(),
            ops: r.ops,
            ops_s: r.throughput_ops_s,
            mean_us: r.mean_us,
            p99_us: r.p99_us,
            max_us: r.max_us,
            ..MetricRow::default()
        };
        let mut whole: Vec<&IntervalRow> = cell
            .intervals
            .iter()
            .filter(|r| r.event_type == "all")
            .collect();
        // The last interval is cut short by the run's end: its rate is not a second's.
        if metric == Metric::OpsPerSecond {
            whole.pop();
        }
        let points: Vec<(f64, f64)> = whole
            .iter()
            .filter(|r| r.ops > 0)
            .map(|r| (r.start_s, metric.of(&row_of(r))))
            .collect();
        let name = match &spec.series {
            Dim::Label(key) => cell.label(key).unwrap_or(&cell.id).to_string(),
            Dim::EventType => cell.name(),
        };
        if points.len() < MIN_BATCHES {
            clauses.push(format!(
                "{name} ran {}, too few to say how steady it was (at least {MIN_BATCHES}); \
                 not drawn",
                crate::numbers::counted(points.len() as u64, "whole interval")
            ));
            continue;
        }
        let values: Vec<f64> = points.iter().map(|p| p.1).collect();
        let mean = mean(&values);
        let low = values.iter().copied().fold(f64::INFINITY, f64::min);
        let high = values.iter().copied().fold(0.0, f64::max);
        clauses.push(format!(
            "{name} averages {} over {} intervals, from {} ({:.0} % below the mean) to {}",
            metric.say(mean),
            values.len(),
            metric.say(low),
            (1.0 - low / mean) * 100.0,
            metric.say(high)
        ));
        series.push(Series { name, points });
    }
    let x = Axis::linear("time into the run (s)");
    let y = Axis::linear(&format!("{} ({})", metric.name(), metric.unit()));
    let figure = svg::line_chart(&spec.title, &x, &y, &series);
    let said = if clauses.is_empty() {
        nothing_drawn(spec, cells)
    } else {
        format!("{}: {}.", capital(metric.name()), clauses.join("; "))
    };
    (figure, said)
}
