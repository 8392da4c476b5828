//! The terminal table printed at the end of a run: one row per event type, the
//! percentile ladder in microseconds, then the totals.

use std::fmt::Write;

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

/// Which columns the table shows, and how wide the first three are.
struct Layout<'a> {
    percentiles: Vec<&'a str>,
    stddev: bool,
    /// Widths of the event, count and errors columns.
    widths: [usize; 3],
}

/// Latency columns' width, without the space before each.
const LATENCY_WIDTH: usize = 9;
/// The default ladder's columns kept where the terminal is too narrow for them all.
const NARROW_LADDER: [&str; 3] = ["p50", "p99", "p99.9"];

impl<'a> Layout<'a> {
    /// Every column: those asked for (`--percentiles`), else the standard ladder, and
    /// the standard deviation beside the mean.
    fn full(percentiles: &'a [(String, f64)]) -> Self {
        Layout {
            percentiles: columns(percentiles),
            stddev: true,
            widths: [14, 9, 7],
        }
    }

    /// What fits 80 columns: the mean, p50, p99, p99.9 and max.
    fn narrow() -> Self {
        Layout {
            percentiles: NARROW_LADDER.to_vec(),
            stddev: false,
            widths: [13, 9, 6],
        }
    }

    /// Characters in one line of the table.
    fn width(&self) -> usize {
        let latencies = self.percentiles.len() + 2 + usize::from(self.stddev);
        self.widths[0] + self.widths[1] + self.widths[2] + 2 + latencies * (LATENCY_WIDTH + 1)
    }

    /// The table's first columns and its latency columns, from `cells`.
    fn line(&self, out: &mut String, first: [&str; 3], latencies: &[String]) {
        let [event, count, errors] = self.widths;
        let _ = write!(
            out,
            "{:<event$} {:>count$} {:>errors$}",
            first[0], first[1], first[2]
        );
        for text in latencies {
            let _ = write!(out, " {text:>LATENCY_WIDTH$}");
        }
        out.push('\n');
    }

    fn header(&self, out: &mut String) {
        let mut names = vec!["mean".to_string()];
        if self.stddev {
            names.push("stddev".into());
        }
        names.extend(self.percentiles.iter().map(|l| l.to_string()));
        names.push("max".into());
        self.line(out, ["event", "count", "errors"], &names);
    }

    fn row(&self, out: &mut String, s: &LatencySummary) {
        let mut cells = vec![latency_text(s, s.mean_us)];
        if self.stddev {
            cells.push(latency_text(s, s.stddev_us));
        }
        for &label in &self.percentiles {
            let mut text = latency_text(s, s.percentile(label));
            if s.is_thin(label) {
                text.push('*');
            }
            cells.push(text);
        }
        cells.push(latency_text(s, s.max_us));
        let (count, errors) = (thousands(s.count), thousands(s.errors));
        self.line(out, [&s.event_type, &count, &errors], &cells);
    }
}

/// The whole table, ending with a newline: the rows, the notes under them, and the
/// errors by kind. Its percentile columns are `percentiles` (`--percentiles`), else
/// the standard ladder; where that is wider than `width` (a terminal's), the ladder is
/// cut to what fits 80 columns and a line says how to see the rest.
pub fn render(summary: &Summary, percentiles: &[(String, f64)], width: Option<usize>) -> String {
    let full = Layout::full(percentiles);
    let narrowed = percentiles.is_empty() && width.is_some_and(|w| w < full.width());
    let layout = if narrowed { Layout::narrow() } else { full };
    let mut out = rows(summary, &layout);
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

/// The header and a row per event type, the total, per node when there were several,
/// and response time under --rate.
fn rows(summary: &Summary, layout: &Layout) -> String {
    let mut out = String::new();
    layout.header(&mut out);
    let width = out.trim_end().len();
    let _ = writeln!(out, "{:-<width$}", "");
    for event in &summary.events {
        layout.row(&mut out, event);
    }
    let _ = writeln!(out, "{:-<width$}", "");
    layout.row(&mut out, &summary.overall);
    // The same operations by the node that served them, when there were several.
    if summary.nodes.len() > 1 {
        let _ = writeln!(out, "{:-<width$}", "");
        for node in &summary.nodes {
            layout.row(&mut out, node);
        }
    }
    // Open loop: the same operations again, timed from when each was due.
    if summary.overall.response.is_some() {
        let _ = writeln!(
            out,
            "{:-<width$}\nresponse time: from when each operation was due (--rate) to its answer",
            ""
        );
        for event in summary.events.iter().chain([&summary.overall]) {
            if let Some(response) = &event.response {
                layout.row(&mut out, response);
            }
        }
    }
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
            count_of(summary.overall.cut, "call")
        );
    }
    out
}

/// `1 call`, `2 calls`.
fn count_of(n: u64, what: &str) -> String {
    format!("{} {what}{}", thousands(n), if n == 1 { "" } else { "s" })
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
