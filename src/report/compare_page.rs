//! A comparison as an HTML page: the runs, what differs between them, the table with
//! each verdict, response time under open loop, and the charts.

use std::fmt::Write;

use super::charts::{spectrum, spectrum_figure};
use super::compare::{
    self, GOING_ON, Streams, advice_of, event_types, events_each, response_rows, samples_named,
    streams, summary_of,
};
use super::compare_overall::{Overall, compare_overall, samples_named as overall_samples_named};
use super::differences;
use super::hlog;
use super::intervals::IntervalRow;
use super::loaded_run::LoadedRun;
use super::page::Page;
use super::slo::Judged;
use super::svg::{self, Axis, Bars, Series, escape};
use super::table;
use crate::stats::threshold::Threshold;

/// The comparison page, to be written as `file_name`: the runs, what differs between
/// them, the table with its verdicts, response time under open loop, and the charts.
pub fn page(runs: &[LoadedRun], file_name: &str, slo: &[Threshold]) -> Page {
    let mut body = Page::new(file_name);
    body.push_str("<h1>hatshop comparison</h1>");
    body.push_str(&runs_list(runs));
    if !slo.is_empty() {
        let bounds: Vec<&str> = slo.iter().map(|b| b.text.as_str()).collect();
        let _ = write!(
            body,
            "<h2>The verdict</h2><p>The objective: <code>{}</code>, judged on response time \
             where a run was paced (<code>--rate</code>) and on service time otherwise; a \
             repeat folder's repeats give a 95 % interval of their mean.</p>",
            escape(&bounds.join(", "))
        );
        crate::report::slo::verdict_table(&mut body, slo, &judged(runs, slo), "run");
    }
    body.push_str(&differences_list(runs));
    let run_names = differences::run_names(runs);
    match streams(runs) {
        Streams::Same => {}
        Streams::OneCut(counts) => {
            let _ = write!(
                body,
                r#"<p class="note">These runs replayed one event stream (one spec, one seed), each as far as its --duration or --min-duration took it ({}).</p>"#,
                events_each(&counts)
            );
        }
        Streams::OneGoingOn => {
            let _ = write!(
                body,
                r#"<p class="note">{}</p>"#,
                GOING_ON.trim_start_matches("note: ")
            );
        }
        Streams::Different => body.push_str(r#"<p class="warning">These runs replayed <b>different event streams</b> (their plan_sha256 differ): the comparison is of different work.</p>"#),
    }
    let names = event_types(runs);
    body.push_str(&comparison_table(runs));
    body.push_str(&overall_table(runs, &run_names, Overall::Throughput));
    body.push_str(&response_table(runs));
    body.push_str(&overall_table(runs, &run_names, Overall::ResponseP99));
    charts(&mut body, runs, &run_names, &names);
    body
}

/// Each run judged by `slo`, named as the page names it: a repeat folder's repeats
/// together.
pub fn judged(runs: &[LoadedRun], slo: &[Threshold]) -> Vec<(String, Vec<Option<Judged>>)> {
    let names = differences::run_names(runs);
    runs.iter()
        .zip(names)
        .map(|(run, name)| {
            let summaries = match run.repeats.is_empty() {
                true => std::slice::from_ref(&run.summary),
                false => run.repeats.as_slice(),
            };
            (name, crate::report::slo::judge_runs(slo, summaries))
        })
        .collect()
}

/// The comparison page's title.
pub const TITLE: &str = "hatshop comparison";

/// Each run: its label, folder, concurrency and plan hash.
fn runs_list(runs: &[LoadedRun]) -> String {
    let mut body = String::from("<ol>");
    for run in runs {
        let _ = write!(
            body,
            "<li>{} <code>{}</code> · concurrency {} · plan <code>{}</code></li>",
            escape(&run.label()),
            escape(&run.dir.display().to_string()),
            run.record.plan.concurrency,
            escape(
                run.record
                    .plan_sha256
                    .as_deref()
                    .map_or("?", |s| &s[..s.len().min(12)])
            )
        );
    }
    body.push_str("</ol>");
    body
}

/// What run.json says differs from one run to the next.
fn differences_list(runs: &[LoadedRun]) -> String {
    let mut body = String::new();
    let differs = differences::lines(runs);
    if differs.is_empty() {
        body.push_str("<p>What differs: nothing run.json records.</p>");
        return body;
    }
    body.push_str("<p>What differs (#1 → #2 …):</p><ul id=\"differences\">");
    for line in &differs.naming {
        let _ = write!(body, "<li><code>{}</code></li>", escape(line));
    }
    body.push_str("</ul>");
    if !differs.details.is_empty() {
        let _ = write!(
            body,
            "<details id=\"details\"><summary>and {} details: versions, descriptions, mix weights, what stores report of themselves</summary><ul>",
            differs.details.len()
        );
        for line in &differs.details {
            let _ = write!(body, "<li><code>{}</code></li>", escape(line));
        }
        body.push_str("</ul></details>");
    }
    body
}

/// Each event type's numbers per run, with the ratio and verdict against run #1.
fn comparison_table(runs: &[LoadedRun]) -> String {
    let (table, advice) = compare::table(runs);
    let mut body = table::html(&table, "comparison");
    let _ = write!(
        body,
        "<p class=\"note\">Latencies in µs. Ratio: mean latency over run #1's. p-value: Welch's t-test on {}.</p>",
        samples_named(runs)
    );
    for line in advice_of(advice.into_iter()) {
        let _ = write!(body, "<p class=\"note\">{}</p>", escape(&line));
    }
    body
}

/// Each run's figure of all operations (throughput, or response p99), with its ratio
/// and test against run #1; empty where the runs lack it.
fn overall_table(runs: &[LoadedRun], run_names: &[String], of: Overall) -> String {
    if !of.applies(runs) {
        return String::new();
    }
    let (id, field, heading, about) = match of {
        Overall::Throughput => (
            "throughput",
            "throughput_ops_s",
            "<h2>Throughput</h2>",
            "All operations per second over the measured phase.",
        ),
        Overall::ResponseP99 => (
            "response-p99",
            "response_p99_us",
            "<h3>Response p99 against #1</h3>",
            "All operations' response time p99, from when each was due: what an objective \
             on a paced run bounds.",
        ),
    };
    let mut body = format!(
        r#"{heading}<table id="{id}"><tr><th>run</th><th>{}</th><th style="text-align:left">against #1</th></tr>"#,
        of.name()
    );
    for c in compare_overall(runs, of) {
        let _ = write!(
            body,
            r#"<tr data-run="{}"><td style="min-width:10em">{}</td><td data-field="{field}">{}</td><td style="text-align:left" data-field="verdict">{}</td></tr>"#,
            c.run + 1,
            escape(&run_names[c.run]).replace('-', "\u{2011}"),
            escape(&of.said(c.value)),
            escape(&c.verdict())
        );
    }
    let _ = write!(
        body,
        "</table><p class=\"note\">{about} Welch's t-test on {}.</p>",
        overall_samples_named(runs, of)
    );
    body
}

/// Response time (from when each operation was due), for open-loop runs.
fn response_table(runs: &[LoadedRun]) -> String {
    let responses = response_rows(runs);
    if responses.is_empty() {
        return String::new();
    }
    let mut body = String::from("<h2>Response time</h2>");
    body.push_str(&table::html(
        &compare::response_table(responses),
        "response",
    ));
    body.push_str("<p class=\"note\">Open loop (--rate): the same successful operations timed from when each was due, what a client waiting in line sees; the table above is service time (sent → answered). Latencies in µs.</p>");
    body
}

/// Mean and p99 per event type, the percentile spectrum, p99 and throughput over time.
fn charts(body: &mut Page, runs: &[LoadedRun], run_names: &[String], names: &[String]) {
    for (title, pick) in [
        ("Mean latency per event type", "mean"),
        ("p99 latency per event type", "p99"),
    ] {
        let bars: Vec<Bars> = runs
            .iter()
            .zip(run_names)
            .map(|(run, name)| Bars {
                name: name.clone(),
                values: names
                    .iter()
                    .map(|e| {
                        summary_of(run, e).map_or(0.0, |s| {
                            if pick == "mean" {
                                s.mean_us
                            } else {
                                s.percentile("p99")
                            }
                        })
                    })
                    .collect(),
                whiskers: None,
                marked: Vec::new(),
            })
            .collect();
        body.figure(svg::bar_chart(
            title,
            "event type",
            names,
            &Axis::linear("latency (µs)"),
            &bars,
        ));
    }
    let spectra: Vec<Series> = runs
        .iter()
        .zip(run_names)
        .map(|(run, name)| Series {
            name: name.clone(),
            points: spectrum(&hlog::merged(&run.histograms, None)),
        })
        .collect();
    body.figure(spectrum_figure(
        "Percentile spectrum, all operations",
        &spectra,
    ));
    over_time_charts(body, runs, run_names);
}

/// p99 latency and throughput of all operations over time, a line per run.
fn over_time_charts(body: &mut Page, runs: &[LoadedRun], run_names: &[String]) {
    let time = Axis::linear("time since the measured phase began (s)");
    body.figure(svg::line_chart(
        "p99 latency over time, all operations",
        &time,
        &Axis::log("latency (µs)"),
        &lines(runs, run_names, " p99", |r| r.p99_us),
    ));
    body.figure(svg::line_chart(
        "Throughput over time, all operations",
        &time,
        &Axis::linear("operations per second"),
        &lines(runs, run_names, "", |r| r.throughput_ops_s),
    ));
}

/// One line per run of `pick` over its intervals of all operations, named by the run
/// and `suffix`.
fn lines(
    runs: &[LoadedRun],
    run_names: &[String],
    suffix: &str,
    pick: impl Fn(&IntervalRow) -> f64,
) -> Vec<Series> {
    runs.iter()
        .zip(run_names)
        .map(|(run, name)| Series {
            name: format!("{name}{suffix}"),
            points: run
                .series("all")
                .iter()
                .map(|r| (r.start_s, pick(r)))
                .collect(),
        })
        .collect()
}
