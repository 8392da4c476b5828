//! A sweep's own outputs: `sweep.csv` (one row per run per event type, and `all`) and
//! `sweep.html` (each metric against the varied settings, one bar per database: the
//! mean over repeats, whiskers from min to max).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use serde::{Deserialize, Serialize};

use super::figure::Figure;
use super::loaded_run::LoadedRun;
use super::page::Page;
use super::svg::{self, Axis, Bars, Series, escape};
use crate::files::write_csv;
use crate::numbers::{format_us, thousands};
use crate::result_dir::RunStatus;
use crate::stats::{LatencySummary, Summary};
use crate::verify::VerifyReport;

/// One row of `sweep.csv`: one event type (or `all`) of one run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct SweepRow {
    /// The varied settings, comma-separated (`nodes` or `nodes,rf`).
    pub setting: String,
    /// Their values in this run, in the same order.
    pub value: String,
    /// Which database (when a sweep runs several).
    pub database: String,
    pub repeat: usize,
    pub run_dir: String,
    /// How the run ended (run.json's `status`): only `finished` and
    /// `stopped_at_deadline` ran their plan; a run cut short is left out of the charts.
    pub status: RunStatus,
    /// An event type, or `all`.
    pub event_type: String,
    pub ops: u64,
    pub errors: u64,
    /// Conflicts: deadlocks (1213), certification failures, lost races.
    pub conflicts: u64,
    /// Every error kind of the row: `kind=count;…`.
    pub error_kinds: String,
    /// The same by the server's code, where it gave one: `kind:code=count;…`.
    pub error_codes: String,
    /// Wall time of the run's measured phase, seconds.
    pub elapsed_s: f64,
    pub throughput_ops_s: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    /// Open loop (`rate`): response time (due → answer) of the successful operations, µs.
    pub response_p50_us: Option<f64>,
    pub response_p99_us: Option<f64>,
    /// Orders whose final state lost a racing update (verify with --conflicts).
    pub lost_updates: Option<u64>,
    /// Deleted orders a racing update wrote back (verify with --conflicts).
    pub resurrected_orders: Option<u64>,
    /// The folder of the run whose tables this run went on from (`--reuse-load`):
    /// the two stood on one load. Empty where the run loaded its own.
    #[serde(default)]
    pub went_on_from: String,
}

/// Where a run sits in the sweep.
pub struct RunPlace<'a> {
    pub setting: &'a str,
    pub value: &'a str,
    pub database: &'a str,
    pub repeat: usize,
    pub run_dir: &'a str,
    /// run.json's `status`.
    pub status: RunStatus,
    /// run.json's `went_on_from`: the folder of the run it went on from.
    pub went_on_from: Option<&'a str>,
}

/// The rows of one run: `all` first, then each event type that ran.
pub fn rows_of(place: &RunPlace, summary: &Summary, races: Option<&VerifyReport>) -> Vec<SweepRow> {
    let row = |s: &LatencySummary| SweepRow {
        setting: place.setting.into(),
        value: place.value.into(),
        database: place.database.into(),
        repeat: place.repeat,
        run_dir: place.run_dir.into(),
        status: place.status,
        event_type: s.event_type.clone(),
        ops: s.count,
        errors: s.errors,
        conflicts: s.errors_by_kind.get("conflict").copied().unwrap_or(0),
        error_kinds: s
            .errors_by_kind
            .iter()
            .map(|(kind, n)| format!("{kind}={n}"))
            .collect::<Vec<_>>()
            .join(";"),
        error_codes: s
            .errors_by_code
            .iter()
            .flat_map(|(kind, codes)| {
                codes
                    .iter()
                    .map(move |(code, n)| format!("{kind}:{code}={n}"))
            })
            .collect::<Vec<_>>()
            .join(";"),
        elapsed_s: summary.elapsed_s,
        throughput_ops_s: s.throughput_ops_s,
        mean_us: s.mean_us,
        p50_us: s.percentile("p50"),
        p99_us: s.percentile("p99"),
        p999_us: s.percentile("p99.9"),
        max_us: s.max_us,
        response_p50_us: s.response.as_ref().map(|r| r.percentile("p50")),
        response_p99_us: s.response.as_ref().map(|r| r.percentile("p99")),
        lost_updates: races.map(|v| v.lost_updates),
        resurrected_orders: races.map(|v| v.resurrected_orders),
        went_on_from: place.went_on_from.unwrap_or_default().into(),
    };
    std::iter::once(&summary.overall)
        .chain(&summary.events)
        .map(row)
        .collect()
}

impl SweepRow {
    /// Whether its run ran its plan, so that its figures are a point of the sweep.
    pub fn ran_its_plan(&self) -> bool {
        self.status.ran_its_plan()
    }

    /// Whether its figures are a point of the charts: its run ran its plan and it
    /// measured something (a row of no operations has no latency to draw, not 0 µs).
    pub fn is_point(&self) -> bool {
        self.ran_its_plan() && self.ops > 0
    }
}

/// A chart of the sweep: title, unit, and the number it plots.
type Metric<'a> = (&'a str, &'a str, fn(&SweepRow) -> f64);

/// Distinct values of a column, in the order they first appear.
fn distinct(rows: &[SweepRow], column: fn(&SweepRow) -> &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for row in rows {
        let value = column(row);
        if !out.iter().any(|v| v == value) {
            out.push(value.to_string());
        }
    }
    out
}

/// One bar series per database: the mean over repeats of each value, with whiskers.
fn bars(rows: &[SweepRow], values: &[String], metric: fn(&SweepRow) -> f64) -> Vec<Bars> {
    distinct(rows, |r| &r.database)
        .into_iter()
        .map(|database| {
            let (means, whiskers) = values
                .iter()
                .map(|value| {
                    let xs: Vec<f64> = rows
                        .iter()
                        .filter(|r| &r.value == value && r.database == database)
                        .map(metric)
                        .collect();
                    let mean = xs.iter().sum::<f64>() / xs.len().max(1) as f64;
                    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    (mean, (lo, hi))
                })
                .unzip();
            Bars {
                name: database,
                values: means,
                whiskers: Some(whiskers),
                marked: Vec::new(),
            }
        })
        .collect()
}

fn chart(
    rows: &[SweepRow],
    values: &[String],
    setting: &str,
    (name, unit, metric): Metric,
) -> Figure {
    svg::bar_chart(
        &format!("{name} by {setting} (mean of repeats, whiskers min–max)"),
        setting,
        values,
        &Axis::linear(unit),
        &bars(rows, values, metric),
    )
}
/// The runs left out of the charts because they were cut short or measured nothing, in
/// a sentence (empty when there are none).
fn cut_short_note(every_row: &[SweepRow], setting: &str) -> String {
    let cut_short: Vec<String> = every_row
        .iter()
        .filter(|r| r.event_type == "all" && !r.is_point())
        .map(|r| {
            let why = if r.ran_its_plan() {
                "measured nothing".to_string()
            } else {
                format!("{} after {} operations", r.status, thousands(r.ops))
            };
            format!(
                "{setting}={} on {} #{} ({why})",
                r.value, r.database, r.repeat
            )
        })
        .collect();
    if cut_short.is_empty() {
        return String::new();
    }
    format!(
        "<p class=\"note\">Left out of the charts: {}.</p>",
        escape(&cut_short.join("; "))
    )
}

/// Where a search that reached its answer keeps it (a search cut short leaves none).
pub const SEARCH_JSON: &str = "search.json";

/// What a `--find-max` search found, said first on its page and kept in
/// [`SEARCH_JSON`].
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct SearchAnswer {
    /// The highest rate tried whose response p99 stayed under the bound.
    pub highest_under: Option<f64>,
    /// The lowest rate tried above it that missed.
    pub lowest_over: Option<f64>,
    /// A rate that kept the bound above one that broke it (kept, broke): the curve
    /// is not monotonic, and the answer is the highest rate tried, not a knee.
    pub not_monotonic: Option<(f64, f64)>,
    pub bound_us: f64,
}

impl SearchAnswer {
    /// Where the curve bends, in words: `3,500 ops/s kept the bound above 3,125 ops/s,
    /// which broke it`.
    pub fn bend(&self) -> Option<String> {
        self.not_monotonic.map(|(kept, broke)| {
            format!(
                "{} ops/s kept the bound above {} ops/s, which broke it",
                thousands(kept as u64),
                thousands(broke as u64)
            )
        })
    }
}

/// Several searches' answers in a phrase: `3,000 ops/s, median of 3 searches (2,750 to
/// 3,250)`.
pub fn answers_said(answers: &[Option<f64>]) -> String {
    let mut kept: Vec<f64> = answers.iter().flatten().copied().collect();
    kept.sort_by(f64::total_cmp);
    let missed = answers.len() - kept.len();
    let said = match kept.as_slice() {
        [] => return "no rate tried kept the bound".to_string(),
        [one] => format!("{} ops/s (one search)", thousands(*one as u64)),
        many => format!(
            "{} ops/s, median of {} searches ({} to {})",
            thousands(median(many) as u64),
            many.len(),
            thousands(many[0] as u64),
            thousands(many[many.len() - 1] as u64)
        ),
    };
    match missed {
        0 => said,
        n => format!("{said}; in {n} more no rate tried kept it"),
    }
}

/// The middle of sorted `values` (the mean of the two middle ones for an even count).
fn median(values: &[f64]) -> f64 {
    let mid = values.len() / 2;
    match values.len() % 2 {
        1 => values[mid],
        _ => (values[mid - 1] + values[mid]) / 2.0,
    }
}

/// Writes `sweep.csv` and `sweep.html` of `rows` into `dir`; their paths. A search's
/// page opens with its answer and its curve.
pub fn write(
    dir: &Path,
    title: &str,
    rows: &[SweepRow],
    answer: Option<&SearchAnswer>,
) -> Result<(PathBuf, PathBuf)> {
    let csv = dir.join("sweep.csv");
    write_csv(&csv, rows)?;
    let page = html(title, rows, answer).write(dir, title)?;
    Ok((csv, page))
}

/// The answer in a sentence, and response p99 against the rate with the bound drawn:
/// where the curve crosses the line is what the search looked for.
fn search_lead(body: &mut Page, all: &[SweepRow], answer: &SearchAnswer) {
    let bound = format_us(answer.bound_us);
    let sentence = match (answer.highest_under, answer.lowest_over) {
        (Some(under), Some(over)) => format!(
            "The highest rate tried with response p99 under {bound} µs: {} ops/s ({} ops/s was over).",
            thousands(under as u64),
            thousands(over as u64)
        ),
        (Some(under), None) => format!(
            "The highest rate tried with response p99 under {bound} µs: {} ops/s; no rate tried was over.",
            thousands(under as u64)
        ),
        (None, _) => format!("No rate tried kept response p99 under {bound} µs."),
    };
    let sentence = match answer.not_monotonic {
        Some((kept, broke)) => format!(
            "{sentence} The curve is not monotonic: {} ops/s kept the bound above {} ops/s, \
             which broke it; a rate between them may break it too.",
            thousands(kept as u64),
            thousands(broke as u64)
        ),
        None => sentence,
    };
    let _ = write!(
        body,
        "<p class=\"answer\"><strong>{}</strong></p>",
        escape(&sentence)
    );
    let mut points: Vec<(f64, f64)> = all
        .iter()
        .filter_map(|r| Some((r.value.parse::<f64>().ok()?, r.response_p99_us?)))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return;
    };
    let line = vec![(first.0, answer.bound_us), (last.0, answer.bound_us)];
    body.figure(svg::line_chart(
        "p99 response time by rate, and the bound",
        &Axis::linear("rate asked (ops/s)"),
        &Axis::linear("latency (µs)"),
        &[
            Series {
                name: "response p99".into(),
                points,
            },
            Series {
                name: format!("bound ({bound} µs)"),
                points: line,
            },
        ],
    ));
}

/// sweep.html: each metric of all operations against the varied setting (the
/// failures, conflicts and lost updates only where there were any), the mean latency
/// of each event type, and the table of every row.
pub fn html(title: &str, every_row: &[SweepRow], answer: Option<&SearchAnswer>) -> Page {
    // A run cut short, or a row of no operations, is no point of the sweep: the charts
    // leave it out, the table says so.
    let rows: Vec<SweepRow> = every_row.iter().filter(|r| r.is_point()).cloned().collect();
    let rows = rows.as_slice();
    let values = distinct(rows, |r| &r.value);
    let setting = every_row.first().map_or("value", |r| r.setting.as_str());
    let all: Vec<SweepRow> = rows
        .iter()
        .filter(|r| r.event_type == "all")
        .cloned()
        .collect();
    let mut body = Page::new("sweep.html");
    let _ = write!(body, "<h1>{}</h1>", escape(title));
    body.push_str(&what_ran(every_row, setting));
    body.push_str(&cut_short_note(every_row, setting));
    if let Some(answer) = answer {
        search_lead(&mut body, &all, answer);
    }
    if all.is_empty() {
        body.push_str("<p>No run of the sweep ran its plan: there is nothing to chart.</p>");
        body.push_str(&table(every_row));
        return body;
    }
    body.push_str("<h2>All operations</h2>");
    for metric in ALWAYS {
        // Runs that --duration bounded all took as long: a chart of that says nothing.
        if metric.0 == TOTAL_TIME && same_for_all(&all, metric.2) {
            continue;
        }
        body.figure(chart(&all, &values, setting, metric));
    }
    for (shown, metric) in WHERE_ANY {
        if all.iter().any(shown) {
            body.figure(chart(&all, &values, setting, metric));
        }
    }
    body.push_str("<h2>Per event type</h2>");
    for event_type in distinct(rows, |r| &r.event_type)
        .iter()
        .filter(|e| *e != "all")
    {
        let of_type: Vec<SweepRow> = rows
            .iter()
            .filter(|r| &r.event_type == event_type)
            .cloned()
            .collect();
        body.figure(chart(
            &of_type,
            &values,
            setting,
            (
                &format!("Mean latency of {event_type}"),
                "latency (µs)",
                |r| r.mean_us,
            ),
        ));
    }
    body.push_str(&table(every_row));
    body
}

/// What the sweep ran, from its first run's folder; nothing where that cannot be read.
fn what_ran(rows: &[SweepRow], setting: &str) -> String {
    let Some(first) = rows.first() else {
        return String::new();
    };
    let Ok(run) = LoadedRun::load(Path::new(&first.run_dir)) else {
        return String::new();
    };
    let repeats = rows.iter().map(|r| r.repeat).max().unwrap_or(1).max(1);
    super::what_ran::sweep_section(
        &run,
        setting,
        &distinct(rows, |r| &r.value),
        &distinct(rows, |r| &r.database),
        repeats,
        loads(rows).as_deref(),
    )
}

/// Which runs stood on the tables another run left (`--reuse-load`), by their
/// folders' names: `2 loaded their own; rate=2000-r1 went on from rate=1000-r1, …`;
/// nothing where every run loaded its own.
fn loads(rows: &[SweepRow]) -> Option<String> {
    let runs: Vec<&SweepRow> = rows.iter().filter(|r| r.event_type == "all").collect();
    let name = |path: &str| {
        Path::new(path)
            .file_name()
            .map_or(path.to_string(), |n| n.to_string_lossy().into_owned())
    };
    let went_on: Vec<String> = runs
        .iter()
        .filter(|r| !r.went_on_from.is_empty())
        .map(|r| format!("{} on {}'s", name(&r.run_dir), name(&r.went_on_from)))
        .collect();
    if went_on.is_empty() {
        return None;
    }
    Some(format!(
        "{} of {} runs loaded their own tables; the others went on from the tables a \
         run before them left (--reuse-load): {}",
        runs.len() - went_on.len(),
        runs.len(),
        went_on.join(", ")
    ))
}

const TOTAL_TIME: &str = "Total time of the measured phase";

/// Whether `metric` is within 2 % across the runs.
fn same_for_all(rows: &[SweepRow], metric: fn(&SweepRow) -> f64) -> bool {
    let values: Vec<f64> = rows.iter().map(metric).collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    hi <= lo * 1.02
}

/// The charts of all operations every sweep has (the total time where it varies).
const ALWAYS: [Metric<'static>; 4] = [
    (TOTAL_TIME, "seconds", |r| r.elapsed_s),
    ("Throughput", "operations per second", |r| {
        r.throughput_ops_s
    }),
    ("Mean latency", "latency (µs)", |r| r.mean_us),
    ("p99 latency", "latency (µs)", |r| r.p99_us),
];

/// Whether a run has something for a chart to show.
type Shown = fn(&SweepRow) -> bool;

/// The charts of all operations shown where any run has something to show.
const WHERE_ANY: [(Shown, Metric<'static>); 5] = [
    // Open loop: where response time leaves service time behind is the knee.
    (
        |r| r.response_p99_us.is_some(),
        (
            "p99 response time (from when each operation was due)",
            "latency (µs)",
            |r| r.response_p99_us.unwrap_or(0.0),
        ),
    ),
    (
        |r| r.errors > 0,
        ("Failed operations", "errors", |r| r.errors as f64),
    ),
    (
        |r| r.conflicts > 0,
        (
            "Conflicts (deadlocks, certification failures)",
            "errors",
            |r| r.conflicts as f64,
        ),
    ),
    (
        |r| r.lost_updates.is_some_and(|n| n > 0),
        ("Lost updates (verify)", "orders", |r| {
            r.lost_updates.unwrap_or(0) as f64
        }),
    ),
    (
        |r| r.resurrected_orders.is_some_and(|n| n > 0),
        (
            "Deleted orders written back by a racing update (verify)",
            "orders",
            |r| r.resurrected_orders.unwrap_or(0) as f64,
        ),
    ),
];

/// Every row, grouped by run, with the error kinds spelled out.
fn table(rows: &[SweepRow]) -> String {
    let mut out = String::from(
        r#"<table id="sweep"><tr><th>value</th><th>database</th><th>repeat</th><th>event</th><th>ops</th><th>errors</th><th>ops/s</th><th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th><th>error kinds</th><th>status</th></tr>"#,
    );
    for r in rows {
        // The page sits in the sweep's folder, beside each run's own.
        let folder = Path::new(&r.run_dir)
            .file_name()
            .map_or(r.run_dir.clone(), |n| n.to_string_lossy().into_owned());
        let _ = write!(
            out,
            r#"<tr{}><td><a href="{}/report.html">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            if r.event_type == "all" {
                r#" class="total""#
            } else {
                ""
            },
            escape(&folder),
            escape(&r.value),
            escape(&r.database),
            r.repeat,
            escape(&r.event_type),
            r.ops,
            r.errors,
            r.throughput_ops_s,
            format_us(r.mean_us),
            format_us(r.p50_us),
            format_us(r.p99_us),
            format_us(r.p999_us),
            format_us(r.max_us),
            escape(&r.error_kinds),
            r.status.as_str()
        );
    }
    out.push_str(
        "</table><p class=\"note\">Latencies in µs, of successful operations. Each value links \
         to its run's own report.html, in its folder.</p>",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn searches_are_said_by_their_median_and_spread() {
        assert_eq!(answers_said(&[Some(3000.0)]), "3,000 ops/s (one search)");
        assert_eq!(
            answers_said(&[Some(1.0), Some(9.0), Some(2.0), Some(4.0)]),
            "3 ops/s, median of 4 searches (1 to 9)"
        );
        assert_eq!(
            answers_said(&[Some(2000.0), None]),
            "2,000 ops/s (one search); in 1 more no rate tried kept it"
        );
        assert_eq!(answers_said(&[None]), "no rate tried kept the bound");
    }

    fn run_of(value: &str, elapsed_s: f64) -> SweepRow {
        SweepRow {
            setting: "rate".into(),
            value: value.into(),
            database: "null".into(),
            repeat: 1,
            event_type: "all".into(),
            ops: 100,
            elapsed_s,
            status: RunStatus::Finished,
            ..SweepRow::default()
        }
    }

    /// Runs --duration bounded all take as long: their total time is no chart.
    #[test]
    fn a_total_time_the_same_for_every_run_is_not_charted() {
        let dir = tempfile::TempDir::new().unwrap();
        let page = |times: [f64; 2]| {
            let rows = [run_of("1000", times[0]), run_of("2000", times[1])];
            let path = html("t", &rows, None).write(dir.path(), "t").unwrap();
            std::fs::read_to_string(path).unwrap()
        };
        assert!(!page([10.0, 10.05]).contains(TOTAL_TIME));
        assert!(page([10.0, 20.0]).contains(TOTAL_TIME));
    }
}
