//! A study's page, `study.html`: the figures of the published study it reproduces, drawn
//! from hatshop's own runs (the cells), each with one sentence computed from its
//! numbers and, where the study printed numbers of its own, those beside ours.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::figure::Figure;
use super::load::LoadedRun;
use super::page::Page;
use super::significance::ALPHA;
use super::svg::{self, Axis, Bars, Series, escape};
use super::table::thousands;
use crate::stats::{LatencySummary, Summary};

/// What a figure puts along its x axis or draws as its series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dim {
    /// The event type (create_order, read, …).
    EventType,
    /// One of the cells' labels (store, events, connections, …).
    Label(&'static str),
}

/// The number a figure shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    Mean,
    P99,
    P999,
    P9999,
    Max,
    OpsPerSecond,
    /// The measured phase's wall time.
    Seconds,
    Conflicts,
}

impl Metric {
    fn name(self) -> &'static str {
        match self {
            Metric::Mean => "mean latency",
            Metric::P99 => "p99 latency",
            Metric::P999 => "p99.9 latency",
            Metric::P9999 => "p99.99 latency",
            Metric::Max => "max latency",
            Metric::OpsPerSecond => "throughput",
            Metric::Seconds => "total time",
            Metric::Conflicts => "conflicts",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Metric::OpsPerSecond => "ops/s",
            Metric::Seconds => "s",
            Metric::Conflicts => "count",
            _ => "µs",
        }
    }

    fn higher_is_better(self) -> bool {
        self == Metric::OpsPerSecond
    }

    fn of(self, row: &MetricRow) -> f64 {
        match self {
            Metric::Mean => row.mean_us,
            Metric::P99 => row.p99_us,
            Metric::P999 => row.p999_us,
            Metric::P9999 => row.p9999_us,
            Metric::Max => row.max_us,
            Metric::OpsPerSecond => row.ops_s,
            Metric::Seconds => row.elapsed_s,
            Metric::Conflicts => row.conflicts as f64,
        }
    }

    /// A value as a sentence says it.
    fn say(self, value: f64) -> String {
        match self {
            Metric::OpsPerSecond => format!("{} ops/s", thousands(value.round() as u64)),
            Metric::Seconds => format!("{value:.1} s"),
            Metric::Conflicts => thousands(value.round() as u64),
            _ if value >= 1_000_000.0 => format!("{:.2} s", value / 1_000_000.0),
            _ if value >= 1000.0 => format!("{:.2} ms", value / 1000.0),
            _ => format!("{value:.0} µs"),
        }
    }
}

/// How a figure draws.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// A group per x value, a bar per series (the mean of its cells, whiskers min to max).
    Bars,
    /// A line per series over a numeric x.
    Lines,
    /// A line per cell over the seconds of its run, from its intervals.csv (`all`):
    /// how steady the metric was.
    OverTime,
}

/// A number the published study gave, in the figure's unit.
#[derive(Debug, Clone, Copy)]
pub struct SeedValue {
    pub x: &'static str,
    pub series: &'static str,
    pub value: f64,
}

/// One figure of a study, as data.
#[derive(Debug, Clone, Copy)]
pub struct FigureSpec {
    /// The part whose cells it draws.
    pub part: &'static str,
    pub title: &'static str,
    pub shape: Shape,
    pub x: Dim,
    pub series: Dim,
    pub metric: Metric,
    /// The event types it draws (none: `all`, the whole run).
    pub events: &'static [&'static str],
    /// Only cells with these labels.
    pub only: &'static [(&'static str, &'static str)],
    /// The study's own numbers for this figure, where it gave any.
    pub seed: &'static [SeedValue],
    /// What the study itself said of it.
    pub seed_says: &'static str,
}

/// A part of a study: a question and the cells that answer it.
#[derive(Debug, Clone, Copy)]
pub struct PartSpec {
    pub id: &'static str,
    pub title: &'static str,
    pub about: &'static str,
}

/// One event type (or `all`) of a finished cell.
#[derive(Debug, Clone, Default)]
pub struct MetricRow {
    pub event_type: String,
    pub ops: u64,
    pub errors: u64,
    pub conflicts: u64,
    pub elapsed_s: f64,
    pub ops_s: f64,
    pub mean_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub p9999_us: f64,
    pub max_us: f64,
}

impl MetricRow {
    fn of(summary: &Summary, s: &LatencySummary) -> MetricRow {
        MetricRow {
            event_type: s.event_type.clone(),
            ops: s.count,
            errors: s.errors,
            conflicts: s.errors_by_kind.get("conflict").copied().unwrap_or(0),
            elapsed_s: summary.elapsed_s,
            ops_s: s.throughput_ops_s,
            mean_us: s.mean_us,
            p99_us: s.percentile("p99"),
            p999_us: s.percentile("p99.9"),
            p9999_us: s.percentile("p99.99"),
            max_us: s.max_us,
        }
    }

    /// `all` first, then each event type that ran.
    pub fn rows_of(summary: &Summary) -> Vec<MetricRow> {
        std::iter::once(&summary.overall)
            .chain(&summary.events)
            .map(|s| MetricRow::of(summary, s))
            .collect()
    }
}

/// One cell of a study as its page shows it.
#[derive(Debug, Clone)]
pub struct CellResult {
    pub id: String,
    pub part: String,
    /// What the cell is, most telling first (store, workload, the swept values).
    pub labels: Vec<(String, String)>,
    /// The command it ran, as a person would type it.
    pub command: String,
    /// Its result folder, relative to the study's.
    pub dir: PathBuf,
    /// finished and verified, verify found differences, cut short, not run, …
    pub status: String,
    /// Whether its numbers stand in the figures (it ran its plan).
    pub counted: bool,
    pub rows: Vec<MetricRow>,
}

impl CellResult {
    fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The cell's name on the page.
    pub fn name(&self) -> String {
        cell_name(&self.labels)
    }
}

/// A cell named by its labels, most telling first: a number says what it counts
/// ("cassandra · updates · events 500").
pub fn cell_name(labels: &[(String, String)]) -> String {
    labels
        .iter()
        .map(|(key, value)| {
            if value.parse::<f64>().is_ok() {
                format!("{} {value}", key.replace('_', " "))
            } else {
                value.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// Everything a study page shows.
pub struct StudyView<'a> {
    pub name: &'a str,
    pub title: &'a str,
    pub question: &'a str,
    /// The published study it reproduces.
    pub seed: &'a str,
    pub scale: f64,
    /// What differs from the study's own setting (hardware, sizes), said plainly.
    pub caveats: &'a [&'a str],
    pub parts: &'a [PartSpec],
    pub figures: &'a [FigureSpec],
    pub cells: &'a [CellResult],
    /// The study folder, to load runs for significance tests.
    pub dir: &'a Path,
}

/// The points of a figure: (x, series) → values of its cells.
struct Points {
    xs: Vec<String>,
    series: Vec<String>,
    values: BTreeMap<(usize, usize), Vec<f64>>,
    /// The cell behind each point, when exactly one stands behind it.
    cells: BTreeMap<(usize, usize), Vec<usize>>,
}

fn dim_value<'c>(dim: Dim, cell: &'c CellResult, row: &'c MetricRow) -> Option<&'c str> {
    match dim {
        Dim::EventType => Some(&row.event_type),
        Dim::Label(key) => cell.label(key),
    }
}

fn position(list: &mut Vec<String>, value: &str) -> usize {
    match list.iter().position(|v| v == value) {
        Some(at) => at,
        None => {
            list.push(value.to_string());
            list.len() - 1
        }
    }
}

fn points(spec: &FigureSpec, cells: &[CellResult]) -> Points {
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

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

fn axis_name(dim: Dim) -> String {
    match dim {
        Dim::EventType => "event type".into(),
        Dim::Label(key) => key.replace('_', " "),
    }
}

/// The chart of a figure and the table it was drawn from.
fn draw(spec: &FigureSpec, points: &Points) -> Figure {
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
            let x = Axis::log(&axis_name(spec.x));
            svg::line_chart(spec.title, &x, &y, &series)
        }
    }
}

/// The sentence under a figure: what it shows, from its numbers.
fn sentence(spec: &FigureSpec, points: &Points, cells: &[CellResult], dir: &Path) -> String {
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
                "{name} goes from {} at {} {} to {} at {}",
                metric.say(first.1),
                points.xs[first.0],
                axis_name(spec.x),
                metric.say(last.1),
                points.xs[last.0]
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
        let best = present
            .iter()
            .copied()
            .reduce(|a, b| if better(b.1, a.1) { b } else { a });
        let worst = present
            .iter()
            .copied()
            .reduce(|a, b| if better(b.1, a.1) { a } else { b });
        if let (Some(best), Some(worst)) = (best, worst) {
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
            let best = present
                .iter()
                .copied()
                .reduce(|a, b| if better(b.1, a.1) { b } else { a });
            let worst = present
                .iter()
                .copied()
                .reduce(|a, b| if better(b.1, a.1) { a } else { b });
            if let (Some(best), Some(worst)) = (best, worst) {
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

fn capital(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// " (p = 0.0001)" for a mean by event type with one run on each side: Welch's test on
/// the runs' interval means, as `hatshop compare` does.
fn p_value(
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
    let compared = super::compare::compare(&runs, &points.xs[x]);
    match compared.get(1).and_then(|c| c.test) {
        Some(test) if test.p_value < 0.0001 => " (p < 0.0001)".into(),
        Some(test) if test.p_value < ALPHA => format!(" (p = {:.4})", test.p_value),
        Some(test) => format!(" (p = {:.2}: within the noise)", test.p_value),
        None => String::new(),
    }
}

/// The study's numbers beside ours, as an HTML table.
fn seed_table(spec: &FigureSpec, points: &Points, scale: f64) -> String {
    if spec.seed.is_empty() {
        return String::new();
    }
    let ratio = |ours: f64, theirs: f64| match ours / theirs {
        r if r >= 0.01 => format!("{r:.2}×"),
        _ => "below 0.01×".into(),
    };
    let unit = spec.metric.unit();
    let mut html = format!(
        "<table class=\"seed\"><tr><th>{}</th><th>series</th><th>the study's ({unit})</th>\
         <th>ours ({unit})</th><th>ours ÷ the study's</th></tr>",
        escape(&axis_name(spec.x))
    );
    for seed in spec.seed {
        let ours = points
            .xs
            .iter()
            .position(|x| x == seed.x)
            .zip(points.series.iter().position(|s| s == seed.series))
            .and_then(|key| points.values.get(&key))
            .map(|v| mean(v));
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(seed.x),
            escape(seed.series),
            svg::short(seed.value),
            ours.map_or("not run".into(), svg::short),
            ours.map_or(String::new(), |o| ratio(o, seed.value))
        );
    }
    html.push_str("</table>");
    if spec.metric == Metric::Seconds && scale < 1.0 {
        let _ = write!(
            html,
            "<p class=\"note\">At --scale {scale} a run does {} of the study's work, so \
             its total time is not the study's to compare.</p>",
            percent(scale)
        );
    }
    html
}

/// The page, and the CSVs of its figures.
pub fn page(view: &StudyView) -> Page {
    let mut page = Page::new("study.html");
    let _ = write!(
        page,
        "<h1>{}</h1><p class=\"question\">{}</p><p>Reproduces <em>{}</em>. \
         Every cell ran on this machine with <code>hatshop study {}</code>; each was \
         verified against its event stream.</p>",
        escape(view.title),
        escape(view.question),
        escape(view.seed),
        escape(view.name)
    );
    if view.scale < 1.0 {
        let _ = write!(
            page,
            "<p class=\"warn\">Scaled to {} of the study's work (events, records, \
             repeats) with <code>--scale {}</code>: a quick look, not the study's numbers.</p>",
            percent(view.scale),
            view.scale
        );
    }
    let unfinished = view.cells.iter().filter(|c| !c.counted).count();
    if unfinished > 0 {
        let _ = write!(
            page,
            "<p class=\"warn\">{unfinished} of {} cells have no numbers yet (see the \
             cells below): run the same command again to resume.</p>",
            view.cells.len()
        );
    }
    if !view.caveats.is_empty() {
        page.push_str("<ul class=\"caveats\">");
        for caveat in view.caveats {
            let _ = write!(page, "<li>{}</li>", escape(caveat));
        }
        page.push_str("</ul>");
    }
    for part in view.parts {
        let _ = write!(
            page,
            "<h2>{}</h2><p>{}</p>",
            escape(part.title),
            escape(part.about)
        );
        for spec in view.figures.iter().filter(|f| f.part == part.id) {
            if spec.shape == Shape::OverTime {
                let (figure, said) = over_time(spec, view.cells, view.dir);
                page.figure(figure);
                let _ = write!(page, "<p class=\"finding\">{}</p>", escape(&said));
                seed_words(&mut page, spec);
                continue;
            }
            let points = points(spec, view.cells);
            let said = sentence(spec, &points, view.cells, view.dir);
            page.figure(draw(spec, &points));
            let _ = write!(page, "<p class=\"finding\">{}</p>", escape(&said));
            seed_words(&mut page, spec);
            page.push_str(&seed_table(spec, &points, view.scale));
        }
    }
    cells_table(&mut page, view.cells);
    page
}

/// What the study itself said of a figure, quoted.
fn seed_words(page: &mut Page, spec: &FigureSpec) {
    if !spec.seed_says.is_empty() {
        let _ = write!(
            page,
            "<p class=\"seed-says\">The study: “{}”</p>",
            escape(spec.seed_says)
        );
    }
}

/// A line per cell of the figure over its run's seconds, and how steady each was.
fn over_time(spec: &FigureSpec, cells: &[CellResult], dir: &Path) -> (Figure, String) {
    let metric = spec.metric;
    let mut series = Vec::new();
    let mut clauses = Vec::new();
    for cell in cells.iter().filter(|c| {
        c.part == spec.part && c.counted && spec.only.iter().all(|(k, v)| c.label(k) == Some(v))
    }) {
        let path = crate::result_dir::file(&dir.join(&cell.dir), crate::result_dir::INTERVALS_CSV);
        let rows: Vec<super::intervals::IntervalRow> =
            super::load::read_rows(&path).unwrap_or_default();
        let row_of = |r: &super::intervals::IntervalRow| MetricRow {
            event_type: r.event_type.clone(),
            ops: r.ops,
            ops_s: r.throughput_ops_s,
            mean_us: r.mean_us,
            p99_us: r.p99_us,
            max_us: r.max_us,
            ..MetricRow::default()
        };
        let points: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.event_type == "all" && r.ops > 0)
            .map(|r| (r.start_s, metric.of(&row_of(r))))
            .collect();
        let name = match spec.series {
            Dim::Label(key) => cell.label(key).unwrap_or(&cell.id).to_string(),
            Dim::EventType => cell.name(),
        };
        if points.len() >= 2 {
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
        } else {
            clauses.push(format!("{name} ran too short for more than one interval"));
        }
        series.push(Series { name, points });
    }
    let x = Axis::linear("time into the run (s)");
    let y = Axis::linear(&format!("{} ({})", metric.name(), metric.unit()));
    let figure = svg::line_chart(spec.title, &x, &y, &series);
    let said = if clauses.is_empty() {
        "No cell of this figure has finished yet.".to_string()
    } else {
        format!("{}: {}.", capital(metric.name()), clauses.join("; "))
    };
    (figure, said)
}

fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p >= 1.0 {
        format!("{p:.0} %")
    } else {
        format!("{p:.2} %")
    }
}

fn cells_table(page: &mut Page, cells: &[CellResult]) {
    page.push_str(
        "<h2>Cells</h2><table><tr><th>#</th><th>cell</th><th>status</th><th>ops</th>\
         <th>errors</th><th>report</th></tr>",
    );
    for (i, cell) in cells.iter().enumerate() {
        let all = cell.rows.iter().find(|r| r.event_type == "all");
        let report = cell.dir.join("report.html");
        let _ = write!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            escape(&cell.name()),
            escape(&cell.status),
            all.map_or(String::new(), |r| thousands(r.ops)),
            all.map_or(String::new(), |r| thousands(r.errors)),
            if cell.counted {
                format!(
                    "<a href=\"{}\">{}</a>",
                    escape(&report.display().to_string()),
                    escape(&cell.dir.display().to_string())
                )
            } else {
                String::new()
            }
        );
    }
    page.push_str("</table><details><summary>The command of each cell</summary><pre>");
    for (i, cell) in cells.iter().enumerate() {
        let _ = writeln!(page, "{:>3}  {}", i + 1, escape(&cell.command));
    }
    page.push_str("</pre></details>");
}

/// Writes `study.html` and its figures' CSVs into the study folder.
pub fn write(view: &StudyView) -> Result<PathBuf> {
    let title = format!("hatshop study {}: {}", view.name, view.title);
    page(view).write(view.dir, &title)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(store: &str, events: &str, mean_read: f64, ops_s: f64) -> CellResult {
        CellResult {
            id: format!("{store}-{events}"),
            part: "p".into(),
            labels: vec![
                ("store".into(), store.into()),
                ("events".into(), events.into()),
            ],
            command: format!("hatshop run --events {events}"),
            dir: PathBuf::from(format!("{store}-{events}")),
            status: "verified".into(),
            counted: true,
            rows: vec![
                MetricRow {
                    event_type: "all".into(),
                    ops: 10,
                    ops_s,
                    mean_us: mean_read,
                    ..MetricRow::default()
                },
                MetricRow {
                    event_type: "read_order".into(),
                    ops: 10,
                    mean_us: mean_read,
                    ..MetricRow::default()
                },
            ],
        }
    }

    const BARS: FigureSpec = FigureSpec {
        part: "p",
        title: "mean by event type",
        shape: Shape::Bars,
        x: Dim::EventType,
        series: Dim::Label("store"),
        metric: Metric::Mean,
        events: &["read_order"],
        only: &[("events", "100")],
        seed: &[SeedValue {
            x: "read_order",
            series: "mariadb",
            value: 500.0,
        }],
        seed_says: "",
    };

    #[test]
    fn two_stores_are_said_as_a_ratio_from_the_numbers() {
        let cells = [
            cell("cassandra", "100", 2200.0, 1.0),
            cell("mariadb", "100", 1000.0, 1.0),
        ];
        let points = points(&BARS, &cells);
        let said = sentence(&BARS, &points, &cells, Path::new("/nonexistent"));
        assert_eq!(said, "Mean latency: read_order: 2.20× faster on mariadb.");
        let table = seed_table(&BARS, &points, 1.0);
        assert!(
            table.contains("<td>500</td><td>1k</td><td>2.00×</td>"),
            "{table}"
        );
    }

    #[test]
    fn a_line_is_said_from_its_first_to_its_last_point() {
        let spec = FigureSpec {
            shape: Shape::Lines,
            x: Dim::Label("events"),
            metric: Metric::OpsPerSecond,
            events: &[],
            only: &[],
            ..BARS
        };
        let cells = [
            cell("cassandra", "100", 1.0, 900.0),
            cell("cassandra", "1000", 1.0, 1800.0),
            cell("mariadb", "1000", 1.0, 50.0),
        ];
        let points = points(&spec, &cells);
        let said = sentence(&spec, &points, &cells, Path::new("/nonexistent"));
        assert_eq!(
            said,
            "Throughput: cassandra goes from 900 ops/s at 100 events to 1,800 ops/s at 1000; \
             mariadb goes from 50 ops/s at 1000 events to 50 ops/s at 1000."
        );
        let figure = draw(&spec, &points);
        assert_eq!(figure.legend, ["cassandra", "mariadb"]);
        assert_eq!(figure.table.rows.len(), 3);
    }

    #[test]
    fn one_series_is_said_where_it_does_best_and_worst() {
        let spec = FigureSpec {
            x: Dim::Label("events"),
            metric: Metric::OpsPerSecond,
            events: &[],
            only: &[],
            ..BARS
        };
        let cells = [
            cell("mariadb", "1", 1.0, 900.0),
            cell("mariadb", "2", 1.0, 1800.0),
            cell("mariadb", "4", 1.0, 1700.0),
        ];
        let said = sentence(
            &spec,
            &points(&spec, &cells),
            &cells,
            Path::new("/nonexistent"),
        );
        assert_eq!(
            said,
            "Throughput: mariadb does best at events 2 (1,800 ops/s) and worst at events 1 \
             (900 ops/s)."
        );
    }

    #[test]
    fn a_cell_cut_short_stays_out_of_the_figures() {
        let mut short = cell("cassandra", "100", 1.0, 1.0);
        short.counted = false;
        let points = points(&BARS, &[short]);
        assert!(points.values.is_empty());
    }
}
