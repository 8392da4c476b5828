//! A run's table: one row per event type, the percentile ladder in microseconds, then
//! the totals; printed at the end of a run with the notes and errors under it, and
//! exported (`--export-csv`, `--export-markdown`).

use std::fmt::Write;

use super::table::{self, Cell, Column, Form, Section, Table, Value};
use crate::numbers::{elapsed_text, format_us, thousands};
use crate::stats::{LatencySummary, PERCENTILES, Summary};

/// A latency, or "-" when no operation of the row succeeded (there is none to show).
pub fn latency_text(s: &LatencySummary, us: f64) -> String {
    if s.ok == 0 { "-".into() } else { format_us(us) }
}

/// The percentile columns: those asked for (`--percentiles`), else the standard ladder.
pub fn columns(percentiles: &[(String, f64)]) -> Vec<&str> {
    if percentiles.is_empty() {
        PERCENTILES.iter().map(|(label, _)| *label).collect()
    } else {
        percentiles
            .iter()
            .map(|(label, _)| label.as_str())
            .collect()
    }
}

/// The default ladder's columns kept where the terminal is too narrow for them all.
const NARROW_LADDER: [&str; 3] = ["p50", "p99", "p99.9"];

/// The run's table: a row per event type, then all of them, then (in the terminal
/// alone) the same operations by node where there were several, and their response
/// times under `--rate`. Its percentile columns are `ladder`; the standard deviation
/// stands beside the mean where `stddev`.
pub fn table(summary: &Summary, ladder: &[&str], stddev: bool) -> Table {
    let mut table = latency_table(
        Column::text("event", "event_type"),
        &summary.events,
        &summary.overall,
        ladder,
        stddev,
    );
    if summary.nodes.len() > 1 {
        let row = |s: &LatencySummary| row(s, ladder, stddev);
        table
            .section(summary.nodes.iter().map(row).collect())
            .terminal_only = true;
    }
    // Open loop: the same operations again, timed from when each was due.
    if let Some(section) = response_rows(summary, ladder, stddev) {
        table.sections.push(section);
    }
    table
}

/// A latency table whose rows are named by the column `first` (event types, nodes): a
/// row per summary of `rows`, then `total`.
pub fn latency_table(
    first: Column,
    rows: &[LatencySummary],
    total: &LatencySummary,
    ladder: &[&str],
    stddev: bool,
) -> Table {
    let latency = |title: &str| Column::number(title, Some("µs"), &format!("{title}_us"));
    let mut columns = vec![
        first,
        Column::number("count", None, "count"),
        Column::number("errors", None, "errors"),
        Column::number("ops/s", None, "ops_s").only(&[Form::Markdown, Form::Csv, Form::Html]),
        latency("mean"),
    ];
    if stddev {
        columns.push(latency("stddev"));
    }
    columns.extend(ladder.iter().map(|label| latency(label)));
    columns.push(latency("max"));
    columns.push(Column::text("thin", "thin_percentiles").only(&[Form::Csv]));
    let mut table = Table::new(columns);
    let row = |s: &LatencySummary| row(s, ladder, stddev);
    table.section(rows.iter().map(row).collect());
    table.section(vec![row(total)]).total = true;
    table
}

/// Response times under `--rate`, for the terminal: the rows of every event type and
/// of all of them, timed from when each operation was due.
fn response_rows(summary: &Summary, ladder: &[&str], stddev: bool) -> Option<Section> {
    summary.overall.response.as_ref()?;
    let responses = summary.events.iter().chain([&summary.overall]);
    Some(Section {
        caption: Some(
            "response time: from when each operation was due (--rate) to its answer".into(),
        ),
        rows: responses
            .filter_map(|e| e.response.as_deref())
            .map(|s| row(s, ladder, stddev))
            .collect(),
        terminal_only: true,
        total: false,
    })
}

/// What a `*` beside a percentile means.
pub const THIN: &str = "fewer than 10 samples beyond this percentile";

/// One row: counts, throughput, and latencies marked `*` where they rest on too few
/// samples (listed as data in the last cell).
fn row(s: &LatencySummary, ladder: &[&str], stddev: bool) -> Vec<Cell> {
    let latency = |us: f64, thin: bool| {
        let value = if s.ok == 0 {
            Value::None
        } else {
            Value::Number(us, 3)
        };
        if thin {
            Cell::shown_as(latency_text(s, us) + "*", value).noted(THIN)
        } else {
            Cell::shown_as(latency_text(s, us), value)
        }
    };
    let mut cells = vec![
        Cell::text(&s.event_type),
        Cell::count(s.count),
        Cell::count(s.errors),
        Cell::shown_as(
            thousands(s.throughput_ops_s.round() as u64),
            Value::Number(s.throughput_ops_s, 1),
        ),
        latency(s.mean_us, false),
    ];
    if stddev {
        cells.push(latency(s.stddev_us, false));
    }
    for label in ladder {
        cells.push(latency(s.percentile(label), s.is_thin(label)));
    }
    cells.push(latency(s.max_us, false));
    let thin: Vec<&str> = ladder.iter().copied().filter(|l| s.is_thin(l)).collect();
    cells.push(Cell::text(thin.join(" ")));
    cells
}

/// The whole table for the terminal, ending with a newline: the rows, the notes under
/// them, and the errors by kind. Its percentile columns are `percentiles`
/// (`--percentiles`), else the standard ladder; where that is wider than `width` (a
/// terminal's), the ladder is cut to what fits 80 columns and a line says how to see
/// the rest.
pub fn render(summary: &Summary, percentiles: &[(String, f64)], width: Option<usize>) -> String {
    let mut out = table::terminal(&table(summary, &columns(percentiles), true));
    let widest = out.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let narrowed = percentiles.is_empty() && width.is_some_and(|w| w < widest);
    if narrowed {
        out = table::terminal(&table(summary, &NARROW_LADDER, false));
    }
    out.push_str(&notes(summary));
    if narrowed {
        let _ = writeln!(
            out,
            "(stddev, p75, p90, p95 and p99.99 left out to fit the terminal: --wide shows them)"
        );
    }
    out.push_str(&errors(summary));
    out
}

/// Units and totals, thin percentiles, the queue for a pooled connection, retries.
fn notes(summary: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "latencies in µs (successful ops{}); {} ops in {} = {} ops/s ({} ops/s successful), {} errors",
        if summary.overall.response.is_some() {
            "; the first table: service time, sent → answered"
        } else {
            ""
        },
        thousands(summary.ops),
        elapsed_text(summary.elapsed_s),
        thousands(summary.throughput_ops_s.round() as u64),
        thousands(summary.ok_throughput_ops_s.round() as u64),
        thousands(summary.errors)
    );
    if summary
        .events
        .iter()
        .chain([&summary.overall])
        .any(|e| !e.thin_percentiles.is_empty())
    {
        let _ = writeln!(
            out,
            "* rests on fewer than 10 samples beyond it: run more operations to trust it"
        );
    }
    // Where no call ever waited (a connection per lane), there is no queue to tell of.
    if let Some(q) = summary.overall.queue.as_ref().filter(|q| q.max_us > 0.0) {
        let _ = writeln!(
            out,
            "queue (waiting for a pooled connection, not in the latencies above): mean {}, p50 {}, p99 {}, max {} µs",
            format_us(q.mean_us),
            format_us(q.p50_us),
            format_us(q.p99_us),
            format_us(q.max_us)
        );
    }
    if summary.overall.retries > 0 {
        let _ = writeln!(
            out,
            "{} retries (--retries): each latency spans every call of its operation",
            thousands(summary.overall.retries)
        );
    }
    if summary.overall.cut > 0 {
        let _ = writeln!(
            out,
            "{} still in flight when the run stopped, cut (outcome unknown): counted apart, not as ops or errors",
            crate::numbers::counted(summary.overall.cut, "call")
        );
    }
    out
}

/// The errors of each event type (and node) by kind, with the server's codes.
fn errors(summary: &Summary) -> String {
    let mut out = String::new();
    let with_errors = summary.events.iter().chain(if summary.nodes.len() > 1 {
        summary.nodes.as_slice()
    } else {
        &[]
    });
    for event in with_errors.filter(|e| e.errors > 0) {
        let kinds: Vec<String> = event
            .errors_by_kind
            .iter()
            .map(|(k, n)| match event.errors_by_code.get(k) {
                Some(codes) => format!("{k} {} ({})", thousands(*n), code_counts(codes)),
                None => format!("{k} {}", thousands(*n)),
            })
            .collect();
        let took = event
            .failed
            .as_ref()
            .map(|f| {
                format!(
                    " (they took mean {} µs, max {} µs)",
                    format_us(f.mean_us),
                    format_us(f.max_us)
                )
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "errors in {}: {}{took}",
            event.event_type,
            kinds.join(", ")
        );
    }
    out
}

/// `1213: 170, 1020: 5`: failures of one kind by the server's code for them.
pub fn code_counts(codes: &std::collections::BTreeMap<String, u64>) -> String {
    codes
        .iter()
        .map(|(code, n)| format!("{code}: {}", thousands(*n)))
        .collect::<Vec<_>>()
        .join(", ")
}
