//! A run repeated (`hatshop run --repeat N`): its folder holds `repeat-1/ … repeat-N/`,
//! each a complete result folder, and a `summary.json` giving every figure as the
//! median over the repeats with its min and max. One run is noise; the spread of
//! several says how much.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::table::{self, Cell, Column, Table, Value};
use crate::numbers::format_us;
use crate::result_dir;
use crate::stats::Spread;
use crate::stats::{LatencySummary, Summary};

/// The folder of repeat `i` (1-based).
pub fn repeat_dir(dir: &Path, i: usize) -> PathBuf {
    dir.join(format!("repeat-{i}"))
}

/// The repeats of a repeat folder, in order; `None` when `dir` is not one.
pub fn repeat_dirs(dir: &Path) -> Option<Vec<PathBuf>> {
    if result_dir::file(dir, result_dir::RUN_JSON).exists() {
        return None;
    }
    let dirs: Vec<PathBuf> = (1..)
        .map(|i| repeat_dir(dir, i))
        .take_while(|d| result_dir::file(d, result_dir::RUN_JSON).exists())
        .collect();
    (!dirs.is_empty()).then_some(dirs)
}

/// The figures of one event type (or `all`) over the repeats; latencies in µs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RepeatRow {
    pub event_type: String,
    pub count: Spread,
    pub errors: Spread,
    pub throughput_ops_s: Spread,
    pub mean_us: Spread,
    /// p50 … p99.99 and max.
    pub latency_us: BTreeMap<String, Spread>,
    /// Open loop: response time p99 (from when each operation was due).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_p99_us: Option<Spread>,
}

/// `summary.json` of a repeat folder.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RepeatSummary {
    pub repeats: usize,
    /// The repeats' folders, relative to this one.
    pub runs: Vec<String>,
    /// Repeats cut short (interrupted, failed), left out of every figure: a partial run
    /// is not a sample of the whole one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    pub elapsed_s: Spread,
    pub events: Vec<RepeatRow>,
    pub overall: RepeatRow,
}

const FIGURES: [&str; 5] = ["p50", "p99", "p99.9", "p99.99", "max"];

fn row_of(name: &str, rows: &[&LatencySummary]) -> RepeatRow {
    let spread = |f: &dyn Fn(&LatencySummary) -> f64| {
        Spread::of(&rows.iter().map(|r| f(r)).collect::<Vec<_>>())
    };
    let latency_us = FIGURES
        .iter()
        .map(|label| {
            let value = |r: &LatencySummary| match *label {
                "max" => r.max_us,
                label => r.percentile(label),
            };
            (label.to_string(), spread(&value))
        })
        .collect();
    let responses: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.response.as_ref().map(|x| x.percentile("p99")))
        .collect();
    RepeatRow {
        event_type: name.to_string(),
        count: spread(&|r| r.count as f64),
        errors: spread(&|r| r.errors as f64),
        throughput_ops_s: spread(&|r| r.throughput_ops_s),
        mean_us: spread(&|r| r.mean_us),
        latency_us,
        response_p99_us: (!responses.is_empty()).then(|| Spread::of(&responses)),
    }
}

/// The repeats' summaries side by side: every figure's median, min and max.
pub fn summarize(summaries: &[Summary], runs: Vec<String>, left_out: Vec<String>) -> RepeatSummary {
    let mut names: Vec<&str> = Vec::new();
    for s in summaries {
        for e in &s.events {
            if !names.contains(&e.event_type.as_str()) {
                names.push(&e.event_type);
            }
        }
    }
    let events = names
        .iter()
        .map(|name| {
            let rows: Vec<&LatencySummary> = summaries
                .iter()
                .filter_map(|s| s.events.iter().find(|e| e.event_type == *name))
                .collect();
            row_of(name, &rows)
        })
        .collect();
    let overall: Vec<&LatencySummary> = summaries.iter().map(|s| &s.overall).collect();
    RepeatSummary {
        repeats: summaries.len(),
        runs,
        left_out,
        elapsed_s: Spread::of(&summaries.iter().map(|s| s.elapsed_s).collect::<Vec<_>>()),
        events,
        overall: row_of("all", &overall),
    }
}

/// A summary whose figures are the medians over the repeats: what `compare` shows for
/// a repeat folder. Counts and error breakdowns stay those of the repeat nearest the
/// median mean latency.
pub fn median_summary(summaries: &[Summary]) -> Summary {
    let spread = summarize(summaries, Vec::new(), Vec::new());
    let nearest = summaries
        .iter()
        .min_by(|a, b| {
            let d = |s: &Summary| (s.overall.mean_us - spread.overall.mean_us.median).abs();
            d(a).total_cmp(&d(b))
        })
        .expect("at least one repeat");
    let mut median = nearest.clone();
    let apply = |row: &mut LatencySummary, figures: &RepeatRow| {
        row.throughput_ops_s = figures.throughput_ops_s.median;
        row.mean_us = figures.mean_us.median;
        for (label, s) in &figures.latency_us {
            match label.as_str() {
                "max" => row.max_us = s.median,
                label => {
                    row.percentiles_us.insert(label.to_string(), s.median);
                }
            }
        }
    };
    for row in &mut median.events {
        if let Some(figures) = spread
            .events
            .iter()
            .find(|f| f.event_type == row.event_type)
        {
            apply(row, figures);
        }
    }
    apply(&mut median.overall, &spread.overall);
    median.throughput_ops_s = spread.overall.throughput_ops_s.median;
    median.elapsed_s = spread.elapsed_s.median;
    median
}

/// A figure as median (min–max), the median as data.
fn cell(s: &Spread, us: bool) -> Cell {
    let f = |v: f64| {
        if us {
            format_us(v)
        } else {
            crate::numbers::thousands(v.round() as u64)
        }
    };
    let value = Value::Number(s.median, if us { 3 } else { 1 });
    if s.min == s.max {
        Cell::shown_as(f(s.median), value)
    } else {
        let range = format!("{} ({}–{})", f(s.median), f(s.min), f(s.max));
        Cell::shown_as(range, value)
    }
}

/// The repeats' table: each event type's row, then all operations', every figure as
/// median (min–max).
pub(super) fn table(summary: &RepeatSummary) -> Table {
    let latency = |title: &str| Column::number(title, None, &format!("{title}_us"));
    let mut columns = vec![
        Column::text("event", "event_type"),
        Column::number("ops/s", None, "ops_s"),
        Column::number("errors", None, "errors"),
        latency("mean"),
    ];
    let ladder = ["p50", "p99", "p99.9"];
    columns.extend(ladder.map(latency));
    columns.push(latency("max"));
    let row = |r: &RepeatRow| {
        let mut cells = vec![
            Cell::text(&r.event_type),
            cell(&r.throughput_ops_s, false),
            cell(&r.errors, false),
            cell(&r.mean_us, true),
        ];
        for label in ladder.iter().chain(&["max"]) {
            cells.push(cell(&r.latency_us[*label], true));
        }
        cells
    };
    let mut table = Table::new(columns);
    table.section(summary.events.iter().map(row).collect());
    table.section(vec![row(&summary.overall)]).total = true;
    table
}

/// The terminal table: each figure as median (min–max).
pub fn render(summary: &RepeatSummary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "median (min–max) over {}; latencies in µs (successful ops)",
        crate::numbers::counted(summary.repeats as u64, "repeat")
    );
    if !summary.left_out.is_empty() {
        let _ = writeln!(out, "left out, cut short: {}", summary.left_out.join(", "));
    }
    out.push_str(&table::terminal(&table(summary)));
    out.push_str(&mean_line(&summary.overall));
    out
}

/// `mean ± σ of all: 43,107 ± 2,310 ops/s, mean 22.2 ± 1.10 µs, …`: the repeats'
/// mean and sample standard deviation, as hyperfine and pgbench users read a spread.
pub(super) fn mean_line(all: &RepeatRow) -> String {
    let plus_minus = |s: &Spread, us: bool| {
        if us {
            format!("{} ± {}", format_us(s.mean), format_us(s.stddev))
        } else {
            let whole = |v: f64| crate::numbers::thousands(v.round() as u64);
            format!("{} ± {}", whole(s.mean), whole(s.stddev))
        }
    };
    let latencies: Vec<String> = ["p50", "p99", "max"]
        .iter()
        .map(|label| format!("{label} {}", plus_minus(&all.latency_us[*label], true)))
        .collect();
    format!(
        "mean ± σ of {}: {} ops/s, mean {}, {} µs\n",
        all.event_type,
        plus_minus(&all.throughput_ops_s, false),
        plus_minus(&all.mean_us, true),
        latencies.join(", ")
    )
}
