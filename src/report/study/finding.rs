//! The sentence under a figure: what it shows, in plain words, computed from its
//! numbers (ratios between stores with Welch's p-value, a line's first and last points,
//! where a single series does best and worst).

use std::path::Path;

use super::cells::CellResult;
use super::points::{Points, THIN, axis_name, mean};
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
    let said = match spec.shape {
        Shape::Bars if points.series.len() == 2 => {
            format!("{metric}: {}.", figure.two_series().join("; "))
        }
        Shape::Lines => format!("{metric}: {}.", figure.lines().join("; ")),
        _ if one_series && points.xs.len() == 2 => {
            format!("{metric} of {}: {}.", points.series[0], figure.two_places())
        }
        _ if one_series => format!("{metric}: {}.", figure.one_series().join("; ")),
        _ => format!("{metric}: {}.", figure.best_and_worst_by_group().join("; ")),
    };
    said + &figure.against_seed_max() + &figure.thin()
}

/// Two values `ratio` apart in words a person would use, beside the number.
fn roughly(ratio: f64) -> &'static str {
    match ratio {
        r if (1.8..2.3).contains(&r) => " (roughly double)",
        r if (2.7..3.4).contains(&r) => " (roughly three times)",
        r if (3.6..4.5).contains(&r) => " (roughly four times)",
        _ => "",
    }
}

/// Improvements smaller than this are not "helping".
const HELPS: f64 = 0.10;

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
            // No winner the numbers cannot carry: a tail resting on too few operations,
            // a test that finds no difference, or repeats whose ranges overlap.
            let thin = |s: usize| self.points.beyond.get(&(x, s)).is_some_and(|n| *n < THIN);
            if thin(0) || thin(1) {
                clauses.push(format!(
                    "{name}: {ratio:.2}× apart, on too few operations beyond the percentile \
                     to name the faster"
                ));
                continue;
            }
            if p.contains("within the noise") || self.repeats_overlap(x) {
                clauses.push(format!(
                    "{name}: {ratio:.2}× apart, within the noise{}",
                    if p.is_empty() {
                        " (the repeats' ranges overlap)".to_string()
                    } else {
                        p.replace(": within the noise", "")
                    }
                ));
                continue;
            }
            if ratio < 1.1 {
                clauses.push(format!("{name}: about the same ({ratio:.2}× apart){p}"));
                continue;
            }
            clauses.push(format!(
                "{name}: {ratio:.2}× {word}{} on {}{p}",
                roughly(ratio),
                self.points.series[win]
            ));
        }
        clauses
    }

    /// Whether the points of both series at `x` stand on repeats (cells of their own,
    /// one value each) whose ranges overlap.
    fn repeats_overlap(&self, x: usize) -> bool {
        let range = |s: usize| {
            let values = self.points.values.get(&(x, s))?;
            let cells = self.points.cells.get(&(x, s))?;
            let mut distinct = cells.clone();
            distinct.sort_unstable();
            distinct.dedup();
            (distinct.len() > 1 && distinct.len() == values.len()).then(|| {
                let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (lo, hi)
            })
        };
        match (range(0), range(1)) {
            (Some((lo_a, hi_a)), Some((lo_b, hi_b))) => lo_a <= hi_b && lo_b <= hi_a,
            _ => false,
        }
    }

    /// A series' points in x order, where x is a number.
    fn numeric(&self, s: usize) -> Vec<(f64, String, f64)> {
        let mut present: Vec<(f64, String, f64)> = (0..self.points.xs.len())
            .filter_map(|x| {
                let at: f64 = self.points.xs[x].parse().ok()?;
                Some((at, self.points.xs[x].clone(), self.value(x, s)?))
            })
            .collect();
        present.sort_by(|a, b| a.0.total_cmp(&b.0));
        present
    }

    /// Where a series stops helping: the first x from which no later point is more
    /// than [`HELPS`] better. `None` where x is not a number or there are too few.
    fn knee(&self, s: usize) -> Option<String> {
        let present = self.numeric(s);
        if present.len() < 3 {
            return None;
        }
        let gain = |from: f64, to: f64| {
            if self.spec.metric.higher_is_better() {
                to / from - 1.0
            } else {
                from / to - 1.0
            }
        };
        let at = (0..present.len()).find(|&i| {
            present[i + 1..]
                .iter()
                .all(|later| gain(present[i].2, later.2) < HELPS)
        })?;
        let axis = axis_name(self.spec.x);
        // More in flight that adds no throughput only queues: the server is saturated.
        let (gaining, stops) = match (self.spec.metric, self.spec.x) {
            (Metric::OpsPerSecond, Dim::Label("in flight")) => ("still growing", "is saturated"),
            (Metric::OpsPerSecond, _) => ("still growing", "grows no further"),
            _ => ("still helping", "stops helping"),
        };
        Some(if at + 1 == present.len() {
            format!("{gaining} at {axis} {}", present[at].1)
        } else {
            format!(
                "{stops} from {axis} {} on ({}; no later point more than {:.0} % better)",
                present[at].1,
                self.spec.metric.say(present[at].2),
                HELPS * 100.0
            )
        })
    }

    /// Lines: each from its first point to its last, where it stops gaining, and how
    /// steady it is across x.
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
            let values: Vec<f64> = present.iter().map(|p| p.1).collect();
            let mean = mean(&values);
            let spread = values
                .iter()
                .map(|v| (v / mean - 1.0).abs())
                .fold(0.0, f64::max);
            // How consistent it is across x, so two lines can be set side by side.
            let steadiness = match present.len() {
                0..=2 => String::new(),
                _ if spread < HELPS => format!(
                    ", steady (every point within {:.0} % of its mean)",
                    spread * 100.0
                ),
                _ => format!(", up to {:.0} % from its mean", spread * 100.0),
            };
            let knee = match metric {
                Metric::OpsPerSecond | Metric::Seconds => self
                    .knee(s)
                    .map_or(String::new(), |knee| format!(", {knee}")),
                _ => String::new(),
            };
            clauses.push(format!(
                "{name} goes from {} at {axis} {} to {} at {axis} {}{steadiness}{knee}",
                metric.say(first.1),
                self.points.xs[first.0],
                metric.say(last.1),
                self.points.xs[last.0],
                axis = axis_name(self.spec.x),
            ));
        }
        clauses.extend(self.two_lines_apart());
        clauses
    }

    /// Two lines over the same x: how far apart they are on average, in words.
    fn two_lines_apart(&self) -> Option<String> {
        if self.points.series.len() != 2 {
            return None;
        }
        let ratios: Vec<f64> = (0..self.points.xs.len())
            .filter_map(|x| Some(self.value(x, 0)? / self.value(x, 1)?))
            .filter(|r| r.is_finite() && *r > 0.0)
            .collect();
        if ratios.len() < 2 {
            return None;
        }
        let ratio = mean(&ratios);
        let (high, low) = if ratio >= 1.0 { (0, 1) } else { (1, 0) };
        let ratio = ratio.max(1.0 / ratio);
        Some(format!(
            "at the {} points both ran, {} is {ratio:.2}× {}{} on average",
            ratios.len(),
            self.points.series[high],
            self.points.series[low],
            roughly(ratio)
        ))
    }

    /// Beside a bound the study gave for every point: the highest point here.
    fn against_seed_max(&self) -> String {
        let Some(bound) = self.spec.seed_max else {
            return String::new();
        };
        let highest = self
            .points
            .values
            .values()
            .map(|v| mean(v))
            .fold(0.0, f64::max);
        format!(
            " The slowest point here is {}; the study's slowest was under {}.",
            self.spec.metric.say(highest),
            self.spec.metric.say(bound)
        )
    }

    /// The points whose tail percentile rests on too few operations, said.
    fn thin(&self) -> String {
        let thin = self.points.thin();
        let Some(fewest) = thin.iter().map(|(_, n)| *n).min() else {
            return String::new();
        };
        format!(
            " Marked *: {} of these values rest{} on fewer than {THIN} operations beyond \
             {} (the fewest: {fewest}); run more operations to trust {}.",
            thin.len(),
            if thin.len() == 1 { "s" } else { "" },
            if thin.len() == 1 { "it" } else { "them" },
            if thin.len() == 1 { "it" } else { "them" }
        )
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
        let mut clauses = vec![format!(
            "{} does best at {axis} {} ({}) and worst at {axis} {} ({})",
            self.points.series[0],
            self.points.xs[best.0],
            metric.say(best.1),
            self.points.xs[worst.0],
            metric.say(worst.1)
        )];
        clauses.extend(self.knee(0).map(|knee| format!("it {knee}")));
        clauses
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
