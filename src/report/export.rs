//! A run's table for other tools: CSV for a spreadsheet or a dataframe, Markdown for a
//! pull request or a wiki. The rows and columns are the terminal table's.

use std::path::Path;

use anyhow::Result;

use super::run_table::{self, columns};
use super::table;
use crate::stats::Summary;

/// An export (`--export-csv FILE` and the like) written through whatever `to` is
/// ([`crate::files::write_out`]), or to standard output, as data a script reads, for `-`.
pub fn write(to: &Path, text: &str) -> Result<()> {
    if to.as_os_str() == "-" {
        crate::console::data(text);
        return Ok(());
    }
    crate::files::write_out(to, text.as_bytes())
}

/// CSV with plain numbers (no separators; latencies in µs, to the nanosecond), a
/// column `thin_percentiles` naming the percentiles that rest on too few samples.
pub fn csv(summary: &Summary, percentiles: &[(String, f64)]) -> String {
    table::csv(&run_table::table(summary, &columns(percentiles), true))
}

/// A Markdown table as a person reads it: separators, the unit in the header, `*` on
/// a percentile that rests on too few samples.
pub fn markdown(summary: &Summary, percentiles: &[(String, f64)]) -> String {
    let mut out = table::markdown(&run_table::table(summary, &columns(percentiles), true));
    let rows = summary.events.iter().chain([&summary.overall]);
    if rows.into_iter().any(|row| !row.thin_percentiles.is_empty()) {
        out.push_str("\n\\* rests on fewer than 10 samples beyond it\n");
    }
    out
}
