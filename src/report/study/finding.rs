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
    let metric = spec.metric;
    let value = |x: usize, s: usize| points.values.get(&(x, s)).map(|v| mean(v));
    if points.values.is_empty() {
        return "No cell of this figure has finished yet.".into();
    }
    let better = |a: f64, b: f64| {
        if metric.higher_is_better() {
            a > b
        } else {
            a < b
        }
    };
    let mut clauses = Vec::new();
    if points.series.len() == 2 && spec.shape == Shape::Bars {
        for (x, name) in points.xs.iter().enumerate() {
            let (Some(a), Some(b)) = (value(x, 0), value(x, 1)) else {
                continue;
            };
            if a == b || a <= 0.0 || b <= 0.0 {
                clauses.push(format!("{name}: the same on both ({})", metric.say(a)));
                continue;
            }
            let (win, ratio) = if better(a, b) {
                (0, (b / a).max(a / b))
            } else {
                (1, (a / b).max(b / a))
            };
            let word = match metric {
                Metric::OpsPerSecond => "the throughput",
                Metric::Conflicts => "fewer conflicts",
                Metric::Seconds => "faster overall",
                _ => "faster",
            };
            let p = p_value(spec, points, cells, dir, x);
            clauses.push(format!(
                "{name}: {ratio:.2}× {word} on {}{p}",
                points.series[win]
            ));
        }
        return format!("{}: {}.", capital(metric.name()), clauses.join("; "));
    }
    if spec.shape == Shape::Lines {
        for (s, name) in points.series.iter().enumerate() {
            let present: Vec<(usize, f64)> = (0..points.xs.len())
                .filter_map(|x| Some((x, value(x, s)?)))
                .collect();
            let (Some(first), Some(last)) = (present.first(), present.last()) else {
                continue;
            };
            clauses.push(format!(
                "{name} goes from {} at {axis} {} to {} at {axis} {}",
                metric.say(first.1),
                points.xs[first.0],
                metric.say(last.1),
                points.xs[last.0],
                axis = axis_name(spec.x),
            ));
        }
    } else if points.series.len() == 1 && points.xs.len() == 2 {
        // One series at two places: the two, and how far apart.
        if let (Some(a), Some(b)) = (value(0, 0), value(1, 0)) {
            clauses.push(format!(
                "{} against {}, {:.2}× apart",
                format_args!("{} {}", points.xs[0], metric.say(a)),
                format_args!("{} {}", points.xs[1], metric.say(b)),
                a.max(b) / a.min(b)
            ));
        }
        return format!(
            "{} of {}: {}.",
            capital(metric.name()),
            points.series[0],
            clauses.join("")
        );
    } else if points.series.len() == 1 {
        // One series: where along x it does best and worst.
        let present: Vec<(usize, f64)> = (0..points.xs.len())
            .filter_map(|x| Some((x, value(x, 0)?)))
            .collect();
        if let Some((best, worst)) = extremes(&present, better) {
            let axis = axis_name(spec.x);
            clauses.push(format!(
                "{} does best at {axis} {} ({}) and worst at {axis} {} ({})",
                points.series[0],
                points.xs[best.0],
                metric.say(best.1),
                points.xs[worst.0],
                metric.say(worst.1)
            ));
        }
    } else {
        for (x, name) in points.xs.iter().enumerate() {
            let present: Vec<(usize, f64)> = (0..points.series.len())
                .filter_map(|s| Some((s, value(x, s)?)))
                .collect();
            if let Some((best, worst)) = extremes(&present, better) {
                clauses.push(format!(
                    "{name}: best {} ({}), worst {} ({})",
                    points.series[best.0],
                    metric.say(best.1),
                    points.series[worst.0],
                    metric.say(worst.1)
                ));
            }
        }
    }
    format!("{}: {}.", capital(metric.name()), clauses.join("; "))
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
