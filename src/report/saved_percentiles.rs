//! Percentiles of a saved run that its summary.json did not store (`show --percentiles
//! 99.999`), read off latency.hlog, which keeps every success's time per event type:
//! the same histograms the run read its own percentiles from. What the log cannot give
//! (a node's row) is marked as none, and prints as a dash, never as 0.

use std::path::Path;

use anyhow::Result;

use super::hlog::{self, Logged, RESPONSE_TAG};
use crate::stats::{LatencySummary, Summary};

/// Adds to each row of `summary` the percentiles of `wanted` it lacks, from the log of
/// the folder `dir` (read only when some row lacks one).
pub fn fill(summary: &mut Summary, wanted: &[(String, f64)], dir: &Path) -> Result<()> {
    let lacks = |row: &LatencySummary| {
        wanted
            .iter()
            .any(|(label, _)| !row.percentiles_us.contains_key(label))
    };
    let rows_with_response = summary.events.iter().chain([&summary.overall]);
    if !rows_with_response
        .clone()
        .chain(rows_with_response.filter_map(|r| r.response.as_deref()))
        .chain(&summary.nodes)
        .any(lacks)
    {
        return Ok(());
    }
    let logged = match dir.join(crate::result_dir::LATENCY_HLOG).exists() {
        true => Some(hlog::read(dir)?),
        false => None,
    };
    for row in summary.events.iter_mut() {
        let tag = row.event_type.clone();
        fill_row(row, wanted, logged.as_ref(), Source::Tag(&tag));
        if let Some(response) = row.response.as_deref_mut() {
            let tag = format!("{RESPONSE_TAG}{tag}");
            fill_row(response, wanted, logged.as_ref(), Source::Tag(&tag));
        }
    }
    fill_row(&mut summary.overall, wanted, logged.as_ref(), Source::All);
    if let Some(response) = summary.overall.response.as_deref_mut() {
        fill_row(response, wanted, logged.as_ref(), Source::AllResponses);
    }
    for node in summary.nodes.iter_mut() {
        fill_row(node, wanted, None, Source::All);
    }
    Ok(())
}

/// Which of the log's histograms hold a row's operations.
enum Source<'a> {
    /// One tag: an event type, or its response times.
    Tag(&'a str),
    /// The untagged histograms of all operations.
    All,
    /// Every event type's response times.
    AllResponses,
}

fn fill_row(
    row: &mut LatencySummary,
    wanted: &[(String, f64)],
    logged: Option<&Logged>,
    from: Source,
) {
    let missing: Vec<(String, f64)> = wanted
        .iter()
        .filter(|(label, _)| !row.percentiles_us.contains_key(label))
        .cloned()
        .collect();
    if missing.is_empty() {
        return;
    }
    let histogram = logged.map(|logged| match from {
        Source::Tag(tag) => hlog::merged(logged, Some(tag)),
        Source::All => hlog::merged(logged, None),
        Source::AllResponses => hlog::merged_with_prefix(logged, RESPONSE_TAG),
    });
    match histogram {
        // The log holds only successes: it stands for the row when it holds as many.
        Some(h) if h.len() == row.ok => row.add_percentiles(&h, &missing),
        _ => {
            for (label, _) in missing {
                row.percentiles_us.insert(label, f64::NAN);
            }
        }
    }
}
