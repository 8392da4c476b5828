//! A figure's points from the cells: the values of each (x, series) pair, and the chart
//! and table drawn from them.

use std::collections::BTreeMap;

use super::cells::{CellResult, MetricRow};
use super::spec::{Dim, FigureSpec, Metric, Shape};
use crate::report::figure::Figure;
use crate::report::svg::{self, Axis, Bars, Series};
use crate::stats::threshold::{Clock, LatencyStat, Stat, Threshold};

/// The points of a figure: (x, series) → values of its cells.
pub(super) struct Points {
    pub(super) xs: Vec<String>,
    pub(super) series: Vec<String>,
    pub(super) values: BTreeMap<(usize, usize), Vec<f64>>,
    /// The cell behind each point, when exactly one stands behind it.
    pub(super) cells: BTreeMap<(usize, usize), Vec<usize>>,
    /// For a tail percentile: the fewest operations beyond it among the point's cells.
    pub(super) beyond: BTreeMap<(usize, usize), u64>,
    /// Whether its latencies are response times: its runs were paced.
    pub(super) response: bool,
}

/// Fewer operations than this beyond a tail percentile, and the value is marked.
pub(super) const THIN: u64 = 10;

impl Points {
    /// Points whose tail percentile rests on fewer than [`THIN`] operations beyond it.
    pub(super) fn thin(&self) -> Vec<((usize, usize), u64)> {
        self.beyond
            .iter()
            .filter(|(_, n)| **n < THIN)
            .map(|(k, n)| (*k, *n))
            .collect()
    }
}

pub(super) fn dim_value<'c>(
    dim: &Dim,
    cell: &'c CellResult,
    row: &'c MetricRow,
) -> Option<&'c str> {
    match dim {
        Dim::EventType => Some(&row.event_type),
        Dim::Label(key) => cell.label(key),
    }
}

pub(super) fn position(list: &mut Vec<String>, value: &str) -> usize {
    match list.iter().position(|v| v == value) {
        Some(at) => at,
        None => {
            list.push(value.to_string());
            list.len() - 1
        }
    }
}

pub(super) fn points(spec: &FigureSpec, cells: &[CellResult]) -> Points {
    let mut points = Points {
        xs: Vec::new(),
        series: Vec::new(),
        values: BTreeMap::new(),
        cells: BTreeMap::new(),
        beyond: BTreeMap::new(),
        response: false,
    };
    for (index, cell) in cells.iter().enumerate() {
        if !spec.draws(&cell.part) || !cell.counted || !cell.matches(&spec.only) {
            continue;
        }
        for row in &cell.rows {
            let wanted = if spec.events.is_empty() {
                row.event_type == "all"
            } else {
                spec.events.contains(&row.event_type)
            };
            if !wanted || row.ops == 0 {
                continue;
            }
            let (Some(x), Some(series)) = (
                dim_value(&spec.x, cell, row),
                dim_value(&spec.series, cell, row),
            ) else {
                continue;
            };
            let key = (
                position(&mut points.xs, x),
                position(&mut points.series, series),
            );
            points
                .values
                .entry(key)
                .or_default()
                .push(spec.metric.of(row));
            points.cells.entry(key).or_default().push(index);
            points.response |= row.response;
            if let Some(share) = spec.metric.beyond_share() {
                let beyond = (row.ops as f64 * share).floor() as u64;
                let fewest = points.beyond.entry(key).or_insert(beyond);
                *fewest = (*fewest).min(beyond);
            }
        }
    }
    in_numeric_order(points)
}

/// Points whose x values are all numbers, in their numeric order (cells of several
/// parts come in the order they ran).
fn in_numeric_order(points: Points) -> Points {
    let numbers: Option<Vec<f64>> = points.xs.iter().map(|x| x.parse().ok()).collect();
    let Some(numbers) = numbers else {
        return points;
    };
    let mut order: Vec<usize> = (0..points.xs.len()).collect();
    order.sort_by(|a, b| numbers[*a].total_cmp(&numbers[*b]));
    let new_of: Vec<usize> = (0..order.len())
        .map(|old| order.iter().position(|o| *o == old).expect("a place"))
        .collect();
    Points {
        xs: order.iter().map(|i| points.xs[*i].clone()).collect(),
        series: points.series,
        values: moved(points.values, &new_of),
        cells: moved(points.cells, &new_of),
        beyond: moved(points.beyond, &new_of),
        response: points.response,
    }
}

/// A map by (x, series) with each x at its new place.
fn moved<T>(map: BTreeMap<(usize, usize), T>, new_of: &[usize]) -> BTreeMap<(usize, usize), T> {
    map.into_iter()
        .map(|((x, s), v)| ((new_of[x], s), v))
        .collect()
}

pub(super) fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

pub(super) fn axis_name(dim: &Dim) -> String {
    match dim {
        Dim::EventType => "event type".into(),
        Dim::Label(key) => key.replace('_', " "),
    }
}

/// The bound of the objective `slo` that a figure draws as a line, with its words: one
/// on the whole run's figure (no `events`) and on the time the figure draws (response
/// time where the runs were paced).
pub(super) fn objective_drawn(
    spec: &FigureSpec,
    slo: &[Threshold],
    response: bool,
) -> Option<(f64, String)> {
    if !spec.events.is_empty() {
        return None;
    }
    let bound = slo.iter().find(|t| {
        t.scope == "all"
            && match (&t.stat, spec.metric) {
                (Stat::Throughput, Metric::OpsPerSecond) => true,
                (Stat::Latency(clock, stat), metric) => {
                    (*clock == Clock::Response || !response)
                        && match (stat, metric) {
                            (LatencyStat::Mean, Metric::Mean) => true,
                            (LatencyStat::Max, Metric::Max) => true,
                            (LatencyStat::Percentile(label, _), metric) => {
                                metric.percentile_label() == Some(label.as_str())
                            }
                            _ => false,
                        }
                }
                _ => false,
            }
    })?;
    Some((bound.bound, format!("objective: {}", bound.text)))
}

/// The chart of a figure and the table it was drawn from, with the objective's bound
/// drawn across it where it has one (and in its table).
pub(super) fn draw(spec: &FigureSpec, points: &Points, objective: Option<(f64, String)>) -> Figure {
    let name = match spec.metric.unit() {
        "µs" if points.response => spec.metric.name().replace("latency", "response time"),
        _ => spec.metric.name().to_string(),
    };
    let mut y = Axis::linear(&format!("{name} ({})", spec.metric.unit()));
    if let Some((value, words)) = &objective {
        y = y.with_level(*value, words);
    }
    let mut figure = chart(spec, points, &y);
    if let Some((value, words)) = objective {
        figure.table.columns.push(words);
        for row in &mut figure.table.rows {
            row.push(crate::report::figure::cell(value));
        }
    }
    figure
}

/// The figure's bars or lines over the y axis `y`.
fn chart(spec: &FigureSpec, points: &Points, y: &Axis) -> Figure {
    match spec.shape {
        Shape::Bars => {
            let bars: Vec<Bars> = points
                .series
                .iter()
                .enumerate()
                .map(|(s, name)| {
                    let at = |x: usize| points.values.get(&(x, s));
                    Bars {
                        name: name.clone(),
                        values: (0..points.xs.len())
                            .map(|x| at(x).map_or(f64::NAN, |v| mean(v)))
                            .collect(),
                        marked: (0..points.xs.len())
                            .map(|x| points.beyond.get(&(x, s)).is_some_and(|n| *n < THIN))
                            .collect(),
                        whiskers: Some(
                            (0..points.xs.len())
                                .map(|x| {
                                    at(x).map_or((f64::NAN, f64::NAN), |v| {
                                        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
                                        let hi = v.iter().copied().fold(0.0, f64::max);
                                        (lo, hi)
                                    })
                                })
                                .collect(),
                        ),
                    }
                })
                .collect();
            let mut figure = svg::bar_chart(&spec.title, &axis_name(&spec.x), &points.xs, y, &bars);
            with_samples_beyond(&mut figure, spec, points);
            figure
        }
        // Over time and over batches are drawn from the cells' own files, never from
        // points.
        Shape::Lines | Shape::OverTime | Shape::BatchTimes | Shape::ServerMeanMax => {
            let series: Vec<Series> = points
                .series
                .iter()
                .enumerate()
                .map(|(s, name)| Series {
                    name: name.clone(),
                    points: points
                        .xs
                        .iter()
                        .enumerate()
                        .filter_map(|(x, text)| {
                            let v = points.values.get(&(x, s))?;
                            Some((text.parse::<f64>().ok()?, mean(v)))
                        })
                        .collect(),
                })
                .collect();
            // A log axis where the values span two decades (500 … 100,000 events),
            // a linear one where they count (1 … 5 nodes).
            let xs: Vec<f64> = points.xs.iter().filter_map(|x| x.parse().ok()).collect();
            let low = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let high = xs.iter().copied().fold(0.0, f64::max);
            let x = if low > 0.0 && high / low >= 100.0 {
                Axis::log(&axis_name(&spec.x))
            } else {
                Axis::linear(&axis_name(&spec.x))
            };
            svg::line_chart(&spec.title, &x, y, &series)
        }
    }
}

/// For a tail percentile, a column with the operations beyond each bar's value (the
/// fewest among its cells): how much the number rests on.
fn with_samples_beyond(figure: &mut Figure, spec: &FigureSpec, points: &Points) {
    if spec.metric.beyond_share().is_none() {
        return;
    }
    figure.table.columns.push("samples beyond".into());
    for row in &mut figure.table.rows {
        let x = points.xs.iter().position(|x| Some(x) == row.get(1));
        let s = points.series.iter().position(|s| Some(s) == row.first());
        let beyond = x
            .zip(s)
            .and_then(|key| points.beyond.get(&key))
            .map_or(String::new(), |n| n.to_string());
        row.push(beyond);
    }
}
