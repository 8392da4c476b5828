//! A comparison's table for other tools (`compare --export-csv`, `--export-markdown`),
//! as hyperfine exports its own: the rows and verdicts of the terminal table.

use std::fmt::Write;

use super::compare::{self, advice_of};
use super::loaded_run::LoadedRun;
use super::significance::ALPHA;
use super::table;

/// CSV with plain numbers (no separators; latencies in µs, to the nanosecond): a row per
/// event type and run, the run's folder and label, its ratio to run #1 and the p-value
/// (both empty for run #1, the baseline), the verdict, and the percentiles that rest
/// on too few samples.
pub fn csv(runs: &[LoadedRun]) -> String {
    table::csv(&compare::table(runs).0)
}

/// The same rows and columns as JSON: an array of objects, numbers as numbers and an
/// empty cell (the baseline's ratio and p-value) as null.
pub fn json(runs: &[LoadedRun]) -> String {
    table::json(&compare::table(runs).0)
}

/// A Markdown table as a person reads it (the terminal's numbers, `*` on a percentile
/// that rests on too few samples), the runs named above it and the advice below.
pub fn markdown(runs: &[LoadedRun]) -> String {
    let mut out = String::new();
    for (i, run) in runs.iter().enumerate() {
        let _ = writeln!(
            out,
            "- **#{}** `{}`: {}",
            i + 1,
            run.dir.display(),
            run.label()
        );
    }
    let (table, advice) = compare::table(runs);
    out.push('\n');
    out.push_str(&table::markdown(&table));
    let _ = writeln!(
        out,
        "\nratio = mean latency / run #1's; p-value of Welch's t-test (significant below {ALPHA}); \\* rests on fewer than 10 samples beyond it"
    );
    for line in advice_of(advice.into_iter()) {
        let _ = writeln!(out, "\n{line}");
    }
    out
}
