//! A figure's points from the cells: the values of each (x, series) pair, and the chart
//! and table drawn from them.

use std::collections::BTreeMap;

use super::cells::{CellResult, MetricRow};
use super::spec::{Dim, FigureSpec, Shape};
use crate::report::figure::Figure;
use crate::report::svg::{self, Axis, Bars, Series};

/// The points of a figure: (x, series) → values of its cells.
pub(super) struct Points {
    pub(super) xs: Vec<String>,
    pub(super) series: Vec<String>,
    pub(super) values: BTreeMap<(usize, usize), Vec<f64>>,
    /// The cell behind each point, when exactly one stands behind it.
    pub(super) cells: BTreeMap<(usize, usize), Vec<usize>>,
}

pub(super) fn dim_value<'c>(dim: Dim, cell: &'c CellResult, row: &'c MetricRow) -> Option<&'c str> {
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
    };
    for (index, cell) in cells.iter().enumerate() {
        if cell.part != spec.part
            || !cell.counted
            || !spec.only.iter().all(|(k, v)| cell.label(k) == Some(v))
        {
            continue;
        }
        for row in &cell.rows {
            let wanted = if spec.events.is_empty() {
                row.event_type == "all"
            } else {
                spec.events.contains(&row.event_type.as_str())
            };
            if !wanted || row.ops == 0 {
                continue;
            }
            let (Some(x), Some(series)) = (
                dim_value(spec.x, cell, row),
                dim_value(spec.series, cell, row),
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
        }
    }
    points
}

pub(super) fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

pub(super) fn axis_name(dim: Dim) -> String {
    match dim {
        Dim::EventType => "event type".into(),
        Dim::Label(key) => key.replace('_', " "),
    }
}

/// The chart of a figure and the table it was drawn from.
pub(super) fn draw(spec: &FigureSpec, points: &Points) -> Figure {
    let y = Axis::linear(&format!("{} ({})", spec.metric.name(), spec.metric.unit()));
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
            svg::bar_chart(spec.title, &axis_name(spec.x), &points.xs, &y, &bars)
        }
        // Over time is drawn from the cells' intervals (`over_time`), never from points.
        Shape::Lines | Shape::OverTime => {
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
                Axis::log(&axis_name(spec.x))
            } else {
                Axis::linear(&axis_name(spec.x))
            };
            svg::line_chart(spec.title, &x, &y, &series)
        }
    }
}
