//! The sentence under a figure: what it shows, in plain words, computed from its
//! numbers (ratios between stores with Welch's p-value, a line's first and last points,
//! where a single series does best and worst).

use std::path::Path;

use super::cells::CellResult;
use super::points::{Points, axis_name, mean};
use super::spec::{Dim, FigureSpec, Metric, Shape};
use crate::report::load::LoadedRun;
use crate::report::significance::ALPHA;

/// The sentence under a figure: what it shows, from its numbers.
pub(super) fn sentence(
    spec: &FigureSpec,
    points: &Points,
    cells: &[CellResult],
    dir: &Path,
) -> String {
    if points.values.is_empty() {
        return "No cell of this figure has finished yet.".into();
    }
    let figure = Finding {
        spec,
        points,
        cells,
        dir,
    };
    let metric = capital(spec.metric.name());
    let one_series = points.series.len() == 1;
    let clauses = match spec.shape {
        Shape::Bars if points.series.len() == 2 => figure.two_series(),
        Shape::Lines => figure.lines(),
        _ if one_series && points.xs.len() == 2 => {
            return format!("{metric} of {}: {}.", points.series[0], figure.two_places());
        }
        _ if one_series => figure.one_series(),
        _ => figure.best_and_worst_by_group(),
    };
    format!("{metric}: {}.", clauses.join("; "))
}

/// A figure and what its numbers came from, to be said in words.
struct Finding<'a> {
    spec: &'a FigureSpec,
    points: &'a Points,
    cells: &'a [CellResult],
    dir: &'a Path,
}

impl Finding<'_> {
    /// The mean of the cells at (x, series).
    fn value(&self, x: usize, series: usize) -> Option<f64> {
        self.points.values.get(&(x, series)).map(|v| mean(v))
    }

    fn better(&self, a: f64, b: f64) -> bool {
        if self.spec.metric.higher_is_better() {
            a > b
        } else {
            a < b
        }
    }

    /// Two series: per group, which wins and by how much.
    fn two_series(&self) -> Vec<String> {
        let metric = self.spec.metric;
        let mut clauses = Vec::new();
        for (x, name) in self.points.xs.iter().enumerate() {
            let (Some(a), Some(b)) = (self.value(x, 0), self.value(x, 1)) else {
                continue;
            };
            if a == b || a <= 0.0 || b <= 0.0 {
                clauses.push(format!("{name}: the same on both ({})", metric.say(a)));
                continue;
            }
            let win = if self.better(a, b) { 0 } else { 1 };
            let ratio = a.max(b) / a.min(b);
            let word = match metric {
                Metric::OpsPerSecond => "the throughput",
                Metric::Conflicts => "fewer conflicts",
                Metric::Seconds => "faster overall",
                _ => "faster",
            };
            let p = p_value(self.spec, self.points, self.cells, self.dir, x);
            clauses.push(format!(
                "{name}: {ratio:.2}× {word} on {}{p}",
                self.points.series[win]
            ));
        }
        clauses
    }

    /// Lines: each from its first point to its last.
    fn lines(&self) -> Vec<String> {
        let metric = self.spec.metric;
        let mut clauses = Vec::new();
        for (s, name) in self.points.series.iter().enumerate() {
            let present: Vec<Place> = (0..self.points.xs.len())
                .filter_map(|x| Some((x, self.value(x, s)?)))
                .collect();
            let (Some(first), Some(last)) = (present.first(), present.last()) else {
                continue;
            };
            clauses.push(format!(
                "{name} goes from {} at {axis} {} to {} at {axis} {}",
                metric.say(first.1),
                self.points.xs[first.0],
                metric.say(last.1),
                self.points.xs[last.0],
                axis = axis_name(self.spec.x),
            ));
        }
        clauses
    }

    /// One series at two places: the two, and how far apart.
    fn two_places(&self) -> String {
        let metric = self.spec.metric;
        let xs = &self.points.xs;
        match (self.value(0, 0), self.value(1, 0)) {
            (Some(a), Some(b)) => format!(
                "{} {} against {} {}, {:.2}× apart",
                xs[0],
                metric.say(a),
                xs[1],
                metric.say(b),
                a.max(b) / a.min(b)
            ),
            _ => String::new(),
        }
    }

    /// One series: where along x it does best and worst.
    fn one_series(&self) -> Vec<String> {
        let metric = self.spec.metric;
        let present: Vec<Place> = (0..self.points.xs.len())
            .filter_map(|x| Some((x, self.value(x, 0)?)))
            .collect();
        let Some((best, worst)) = extremes(&present, |a, b| self.better(a, b)) else {
            return Vec::new();
        };
        let axis = axis_name(self.spec.x);
        vec![format!(
            "{} does best at {axis} {} ({}) and worst at {axis} {} ({})",
            self.points.series[0],
            self.points.xs[best.0],
            metric.say(best.1),
            self.points.xs[worst.0],
            metric.say(worst.1)
        )]
    }

    /// Several series: per group, the best and the worst.
    fn best_and_worst_by_group(&self) -> Vec<String> {
        let metric = self.spec.metric;
        let series = &self.points.series;
        let mut clauses = Vec::new();
        for (x, name) in self.points.xs.iter().enumerate() {
            let present: Vec<Place> = (0..series.len())
                .filter_map(|s| Some((s, self.value(x, s)?)))
                .collect();
            if let Some((best, worst)) = extremes(&present, |a, b| self.better(a, b)) {
                clauses.push(format!(
                    "{name}: best {} ({}), worst {} ({})",
                    series[best.0],
                    metric.say(best.1),
                    series[worst.0],
                    metric.say(worst.1)
                ));
            }
        }
        clauses
    }
}

/// A place on a figure's axis and its value there.
type Place = (usize, f64);

/// The best and the worst of `present`, by `better`.
fn extremes(present: &[Place], better: impl Fn(f64, f64) -> bool) -> Option<(Place, Place)> {
    let best = present
        .iter()
        .copied()
        .reduce(|a, b| if better(b.1, a.1) { b } else { a })?;
    let worst = present
        .iter()
        .copied()
        .reduce(|a, b| if better(b.1, a.1) { a } else { b })?;
    Some((best, worst))
}

pub(super) fn capital(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// " (p = 0.0001)" for a mean by event type with one run on each side: Welch's test on
/// the runs' interval means, as `hatshop compare` does.
pub(super) fn p_value(
    spec: &FigureSpec,
    points: &Points,
    cells: &[CellResult],
    dir: &Path,
    x: usize,
) -> String {
    if spec.metric != Metric::Mean || spec.x != Dim::EventType {
        return String::new();
    }
    let (Some([a]), Some([b])) = (
        points.cells.get(&(x, 0)).map(Vec::as_slice),
        points.cells.get(&(x, 1)).map(Vec::as_slice),
    ) else {
        return String::new();
    };
    let load = |i: usize| LoadedRun::load(&dir.join(&cells[i].dir)).ok();
    let (Some(a), Some(b)) = (load(*a), load(*b)) else {
        return String::new();
    };
    let runs = [a, b];
    let compared = crate::report::compare::compare(&runs, &points.xs[x]);
    match compared.get(1).and_then(|c| c.test) {
        Some(test) if test.p_value < 0.0001 => " (p < 0.0001)".into(),
        Some(test) if test.p_value < ALPHA => format!(" (p = {:.4})", test.p_value),
        Some(test) => format!(" (p = {:.2}: within the noise)", test.p_value),
        None => String::new(),
    }
}
