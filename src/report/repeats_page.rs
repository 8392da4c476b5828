//! A repeat folder's page (`run --repeat N`): what ran, every figure as median
//! (min–max) over the repeats with the mean ± σ of all operations, and each repeat's
//! throughput and p99 side by side, linked to its own report.

use std::fmt::Write;

use super::loaded_run::LoadedRun;
use super::page::Page;
use super::repeats::{self, RepeatSummary, mean_line};
use super::svg::{self, Axis, Bars, escape};
use super::table;
use super::what_ran;
use crate::stats::Summary;

/// The page's title.
pub const TITLE: &str = "hatshop repeats";

/// `hatshop report DIR` of a repeat folder: its page again, from its summary.json and
/// the summaries of the repeats it counted. The page's path.
pub fn write_report(dir: &std::path::Path) -> anyhow::Result<std::path::PathBuf> {
    use crate::result_dir::SUMMARY_JSON;
    use crate::result_dir::seal::read_json;
    let spread: RepeatSummary = read_json(dir, SUMMARY_JSON)?;
    let summaries = spread
        .runs
        .iter()
        .map(|run| read_json::<Summary>(&dir.join(run), SUMMARY_JSON))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let first = spread
        .runs
        .first()
        .and_then(|run| LoadedRun::load(&dir.join(run)).ok());
    let tables = tables_said(dir, &spread);
    page(&spread, &summaries, first.as_ref(), &tables).write(dir, TITLE)
}

/// What tables the repeats ran on: fresh ones each, or those the repeat before left
/// (`--reuse-load`), from each repeat's run.json.
pub fn tables_said(dir: &std::path::Path, spread: &RepeatSummary) -> String {
    let went_on: Vec<&str> = spread
        .runs
        .iter()
        .filter(|run| {
            crate::result_dir::load_complete(&dir.join(run))
                .is_ok_and(|record| record.went_on_from.is_some())
        })
        .map(String::as_str)
        .collect();
    match went_on.as_slice() {
        [] => "on fresh tables".to_string(),
        some => format!(
            "on one load: {} went on from the tables the run before left (--reuse-load), \
             the same mix, not the same events",
            some.join(", ")
        ),
    }
}

/// The page of a repeat folder: `summaries` are the repeats counted (`spread.runs`
/// names their folders), `first` the first of them, loaded, for what ran, and `tables`
/// what they ran on ([`tables_said`]).
pub fn page(
    spread: &RepeatSummary,
    summaries: &[Summary],
    first: Option<&LoadedRun>,
    tables: &str,
) -> Page {
    let mut body = Page::new("report.html");
    let label = first.map_or_else(String::new, LoadedRun::label);
    let _ = write!(
        body,
        "<h1>{TITLE}: {} × {}</h1>",
        escape(&label),
        spread.repeats
    );
    if let Some(first) = first {
        body.push_str(&what_ran::section(first));
        let _ = write!(
            body,
            r#"<p class="note">What ran is {}'s; every repeat ran the same plan, {}.</p>"#,
            escape(&spread.runs[0]),
            escape(tables)
        );
    }
    if !spread.left_out.is_empty() {
        let _ = write!(
            body,
            r#"<p class="warning">Left out, cut short: {}.</p>"#,
            escape(&spread.left_out.join(", "))
        );
    }
    body.push_str(&table(spread));
    let names: Vec<String> = spread.runs.clone();
    for (title, axis, pick) in [
        (
            "Throughput of each repeat, all operations",
            "operations per second",
            (|s: &Summary| s.overall.throughput_ops_s) as fn(&Summary) -> f64,
        ),
        (
            "p99 latency of each repeat, all operations",
            "latency (µs)",
            |s: &Summary| s.overall.percentile("p99"),
        ),
    ] {
        body.figure(svg::bar_chart(
            title,
            "repeat",
            &names,
            &Axis::linear(axis),
            &[Bars {
                name: "all operations".into(),
                values: summaries.iter().map(pick).collect(),
                whiskers: None,
                marked: Vec::new(),
            }],
        ));
    }
    body.push_str(&repeat_links(spread));
    body
}

/// Every figure as median (min–max) over the repeats, then mean ± σ of all operations.
fn table(spread: &RepeatSummary) -> String {
    let mut out = table::html(&repeats::table(spread), "repeats");
    let _ = write!(
        out,
        r#"<p class="note">Median (min–max) over {} repeats; latencies in µs, of successful operations. {}</p>"#,
        spread.repeats,
        escape(mean_line(&spread.overall).trim_end())
    );
    out
}

/// Each repeat's own report.
fn repeat_links(spread: &RepeatSummary) -> String {
    let links: Vec<String> = spread
        .runs
        .iter()
        .map(|run| format!(r#"<a href="{0}/report.html">{0}</a>"#, escape(run)))
        .collect();
    format!("<p>Each repeat's own report: {}.</p>", links.join(" · "))
}
