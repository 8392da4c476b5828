//! A run's table for other tools: CSV for a spreadsheet or a dataframe, Markdown for a
//! pull request or a wiki. The rows and columns are the terminal table's.

use std::fmt::Write;
use std::path::Path;

use anyhow::Result;

use super::table::columns;
use crate::numbers::{format_us, thousands};
use crate::stats::{LatencySummary, Summary};

/// An export (`--export-csv FILE` and the like) written through whatever `to` is
/// ([`crate::files::write_out`]), or to standard output, as data a script reads, for `-`.
pub fn write(to: &Path, text: &str) -> Result<()> {
    if to.as_os_str() == "-" {
        crate::console::data(text);
        return Ok(());
    }
    crate::files::write_out(to, text.as_bytes())
}

/// The table's rows: each event type, then all of them.
fn rows(summary: &Summary) -> impl Iterator<Item = &LatencySummary> {
    summary.events.iter().chain([&summary.overall])
}

/// CSV with plain numbers (no separators; latencies in µs, to the nanosecond), a
/// column `<p>_samples_thin` marking a percentile that rests on too few samples.
pub fn csv(summary: &Summary, percentiles: &[(String, f64)]) -> String {
    let columns = columns(percentiles);
    let mut out = String::from("event_type,count,errors,ops_s,mean_us,stddev_us");
    for label in &columns {
        let _ = write!(out, ",{label}_us");
    }
    out.push_str(",max_us,thin_percentiles\n");
    for row in rows(summary) {
        let latency = |us: f64| {
            if row.ok == 0 {
                String::new()
            } else {
                format!("{us:.3}")
            }
        };
        let _ = write!(
            out,
            "{},{},{},{:.1},{},{}",
            row.event_type,
            row.count,
            row.errors,
            row.throughput_ops_s,
            latency(row.mean_us),
            latency(row.stddev_us)
        );
        for label in &columns {
            let _ = write!(out, ",{}", latency(row.percentile(label)));
        }
        let thin: Vec<&str> = columns
            .iter()
            .copied()
            .filter(|label| row.is_thin(label))
            .collect();
        let _ = writeln!(out, ",{},{}", latency(row.max_us), thin.join(" "));
    }
    out
}

/// A Markdown table as a person reads it: separators, the unit in the header, `*` on
/// a percentile that rests on too few samples.
pub fn markdown(summary: &Summary, percentiles: &[(String, f64)]) -> String {
    let columns = columns(percentiles);
    let mut out = String::from("| event | count | errors | ops/s | mean µs | stddev µs |");
    for label in &columns {
        let _ = write!(out, " {label} µs |");
    }
    out.push_str(" max µs |\n|---|");
    for _ in 0..columns.len() + 6 {
        out.push_str("---:|");
    }
    out.push('\n');
    for row in rows(summary) {
        let latency = |us: f64| {
            if row.ok == 0 {
                "-".to_string()
            } else {
                format_us(us)
            }
        };
        let _ = write!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            row.event_type,
            thousands(row.count),
            thousands(row.errors),
            thousands(row.throughput_ops_s.round() as u64),
            latency(row.mean_us),
            latency(row.stddev_us)
        );
        for label in &columns {
            let mark = if row.is_thin(label) { "*" } else { "" };
            let _ = write!(out, " {}{mark} |", latency(row.percentile(label)));
        }
        let _ = writeln!(out, " {} |", latency(row.max_us));
    }
    if rows(summary).any(|row| !row.thin_percentiles.is_empty()) {
        out.push_str("\n\\* rests on fewer than 10 samples beyond it\n");
    }
    out
}
