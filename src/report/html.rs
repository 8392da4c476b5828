//! `report.html`: one self-contained page per run, from the result folder alone:
//! what ran, the latency table, charts, errors, and summary.json embedded as data.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::charts;
use super::loaded_run::LoadedRun;
use super::page::{Page, fill};
use super::run_table;
use super::svg::escape;
use super::table::{self, Column};
use crate::numbers::thousands;
use crate::result_dir::{self, RunRecord, RunStatus};
use crate::stats::{LatencyBrief, LatencySummary};
use crate::workload::EventSource;

/// The faults injected, as they happened.
fn faults_section(run: &LoadedRun) -> String {
    let mut out = String::from(
        "<table id=\"faults\"><tr><th>due (s)</th><th>action</th><th>node</th><th>began (s)</th><th>took (s)</th><th>outcome</th></tr>",
    );
    for f in &run.record.faults {
        let _ = write!(
            out,
            r#"<tr><td>{:.1}</td><td>{}</td><td>{} {}</td><td>{}</td><td>{}</td><td style="text-align:left" class="{}">{}</td></tr>"#,
            f.at_s,
            escape(&f.action),
            escape(&f.server),
            f.node,
            f.began_s
                .map(|s| format!("{s:.2}"))
                .unwrap_or_else(|| "-".into()),
            f.took_s
                .map(|s| format!("{s:.2}"))
                .unwrap_or_else(|| "-".into()),
            if f.done { "ok" } else { "bad" },
            escape(&f.outcome)
        );
    }
    out.push_str(
        "</table><p class=\"note\">Seconds into the measured phase. The dashed lines on the \
         charts over time mark when each fault began.</p>",
    );
    out
}

/// A latency table of the page, its rows named by `first` (event types, nodes).
fn latency_table(
    id: &str,
    first: Column,
    rows: &[LatencySummary],
    total: &LatencySummary,
) -> String {
    let ladder = run_table::columns(&[]);
    let mut out = table::html(
        &run_table::latency_table(first, rows, total, &ladder, false),
        id,
    );
    out.push_str(
        "<p class=\"note\">Latencies in µs, of successful operations; ops/s counts \
         every operation, failed ones too. * rests on fewer than 10 samples beyond it \
         (p99.99 of 1,000 operations is the maximum).</p>",
    );
    out
}

/// A table of times in µs by event (mean, p50, p99, max), each row's `count` first
/// where the table has one.
fn times_table(
    id: &str,
    count: Option<&str>,
    rows: &[(&str, Option<u64>, &LatencyBrief)],
) -> String {
    let us = |title: &str, key: &str| Column::number(title, Some("µs"), key);
    let mut columns = vec![Column::text("event", "event_type")];
    columns.extend(count.map(|title| Column::number(title, None, "count")));
    columns.extend([
        us("mean", "mean_us"),
        us("p50", "p50_us"),
        us("p99", "p99_us"),
        us("max", "max_us"),
    ]);
    let mut times = table::Table::new(columns);
    times.section(
        rows.iter()
            .map(|(event, n, brief)| {
                let us = |us: f64| {
                    table::Cell::shown_as(
                        crate::numbers::format_us(us),
                        table::Value::Number(us, 3),
                    )
                };
                let mut cells = vec![table::Cell::text(*event)];
                cells.extend(n.filter(|_| count.is_some()).map(table::Cell::count));
                cells.extend([
                    us(brief.mean_us),
                    us(brief.p50_us),
                    us(brief.p99_us),
                    us(brief.max_us),
                ]);
                cells
            })
            .collect(),
    );
    table::html(&times, id)
}

/// Waits for a pooled connection, per event type: measured apart from service time.
fn queue_section(run: &LoadedRun) -> String {
    let rows: Vec<(&str, Option<u64>, &LatencyBrief)> = run
        .summary
        .events
        .iter()
        .chain([&run.summary.overall])
        .filter_map(|e| Some((e.event_type.as_str(), None, e.queue.as_ref()?)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut out = times_table("queue", None, &rows);
    out.push_str(
        "<p class=\"note\">Queue (µs): time each operation waited for a pooled \
         connection before its request could be sent. It is not in the latency table, which is \
         service time; a queue that grows while service time does not is pool starvation (more \
         lanes than connections), not a slow server. With --rate, response time includes it.</p>",
    );
    out
}

fn errors_section(run: &LoadedRun) -> String {
    if run.summary.errors == 0 {
        return "<p>No errors.</p>".into();
    }
    let failed: Vec<(&str, Option<u64>, &LatencyBrief)> = run
        .summary
        .events
        .iter()
        .filter(|e| e.errors > 0)
        .filter_map(|e| Some((e.event_type.as_str(), Some(e.errors), e.failed.as_ref()?)))
        .collect();
    let mut out = times_table("failed-latency", Some("failed"), &failed);
    out.push_str(
        "<p class=\"note\">How long failed operations took (µs): a timeout shows here, \
         not in the latency table.</p>",
    );
    out.push_str(
        "<table><tr><th>event</th><th>kind</th><th>count</th><th>by server code</th><th>first messages</th></tr>",
    );
    let by_node: &[LatencySummary] = if run.summary.nodes.len() > 1 {
        &run.summary.nodes
    } else {
        &[]
    };
    for event in run
        .summary
        .events
        .iter()
        .chain(by_node)
        .filter(|e| e.errors > 0)
    {
        for (kind, count) in &event.errors_by_kind {
            let messages: Vec<String> = event
                .first_errors
                .get(kind)
                .into_iter()
                .flatten()
                .map(|m| format!("<code>{}</code>", escape(m)))
                .collect();
            let _ = write!(
                out,
                r#"<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td style="text-align:left">{}</td></tr>"#,
                escape(&event.event_type),
                escape(kind),
                thousands(*count),
                escape(
                    &event
                        .errors_by_code
                        .get(kind)
                        .map(super::run_table::code_counts)
                        .unwrap_or_default()
                ),
                messages.join("<br>")
            );
        }
    }
    out.push_str("</table>");
    out
}

/// report.html of one run: what ran, latency per event type and node, faults,
/// latency over time, server resources, the slowest operations, server time, the
/// percentile spectrum, connection waits and errors, and the summary as JSON.
pub fn render(run: &LoadedRun) -> Page {
    let mut body = Page::new(result_dir::REPORT_HTML);
    body.push_str(&heading(run));
    body.push_str("<h2>What ran</h2>");
    body.push_str(&super::what_ran::section(run));
    let no_latencies = "<p>No operation succeeded: there are no latencies to show.</p>";
    let has_latencies = run.summary.overall.ok > 0;
    body.push_str(&latency_tables(run));
    if has_latencies {
        body.figure(charts::latency_bars(run));
    }
    if !run.record.faults.is_empty() {
        body.push_str("<h2>Faults</h2>");
        body.push_str(&faults_section(run));
    }
    over_time(&mut body, run, has_latencies);
    super::resources::section(&mut body, run);
    body.push_str(&super::slowest::section(run));
    super::traces::section(&mut body, run);
    body.push_str("<h2>Percentile spectrum</h2>");
    if !has_latencies {
        body.push_str(no_latencies);
    } else if run.histograms.is_empty() {
        body.push_str("<p>No latency.hlog in this folder.</p>");
    } else {
        body.figure(charts::spectrum_chart(run));
    }
    let queue = queue_section(run);
    if !queue.is_empty() {
        body.push_str("<h2>Waiting for a connection</h2>");
        body.push_str(&queue);
    }
    body.push_str("<h2>Errors</h2>");
    body.push_str(&errors_section(run));
    let _ = write!(
        body,
        r#"<script type="application/json" id="hatshop-summary">{}</script>"#,
        script_json(&run.summary)
    );
    body
}

/// `value` as JSON that a `<script>` element holds whole: a `<` (found only inside
/// strings) as `\u003c`, so that no `</script>`, `<!--` or `<script` in a tag or an
/// error message ends the element or changes how the browser reads it.
fn script_json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value)
        .expect("a summary serialises")
        .replace('<', "\\u003c")
}

/// The page's title.
fn title(run: &LoadedRun) -> String {
    format!("hatshop: {}", run.label())
}

/// Whether the run's measured phase had no count and ended with its `--duration`.
fn ran_for_its_time(events: &EventSource) -> bool {
    matches!(events, EventSource::Generated { workload } if workload.without_end())
}

/// The title, the run's totals, and a warning when it did not finish its stream.
fn heading(run: &LoadedRun) -> String {
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>{}</h1><p class=\"subtitle\">run <code>{}</code> · {} operations · {} ops/s · {} errors</p>",
        escape(&run.label()),
        escape(&run.record.run_id),
        thousands(run.summary.ops),
        thousands(run.summary.throughput_ops_s.round() as u64),
        thousands(run.summary.errors)
    );
    let warning = match run.record.status {
        RunStatus::Finished => None,
        // A run whose --duration is its length did what it was asked.
        RunStatus::StoppedAtDeadline if ran_for_its_time(&run.record.events) => None,
        RunStatus::StoppedAtDeadline => Some("It stopped at its --duration deadline.".to_string()),
        RunStatus::Interrupted => Some("It was interrupted (Ctrl-C or SIGTERM).".to_string()),
        RunStatus::Recovered => Some(
            "It was killed before it finished; hatshop recover rebuilt it from the op log \
             (what the last moments did may be missing)."
                .to_string(),
        ),
        RunStatus::Failed => Some(format!(
            "It failed: {}.",
            run.record.error.as_deref().unwrap_or("see run.json")
        )),
        other => Some(format!("Its status is {other}.")),
    };
    let warning = match (&run.record.recovered, warning) {
        (Some(recovery), Some(warning)) if run.record.recorded_its_end() => Some(format!(
            "{warning} hatshop recover rebuilt its files from the op log, which held {} of \
             the {} operations it measured.",
            thousands(recovery.logged_ops),
            thousands(run.record.measured_ops)
        )),
        (_, warning) => warning,
    };
    if let Some(warning) = warning {
        let _ = write!(
            body,
            r#"<p class="warning">This run did not finish its stream. {} Every operation that ran is counted.</p>"#,
            escape(&warning)
        );
    }
    body
}

/// Latency (service time under --rate) per event type, response time under --rate,
/// and latency per node when there were several.
fn latency_tables(run: &LoadedRun) -> String {
    let mut body = String::new();
    let open_loop = run.summary.overall.response.is_some();
    body.push_str(if open_loop {
        "<h2>Service time per event type (request sent → answer)</h2>"
    } else {
        "<h2>Latency per event type</h2>"
    });
    let event = || Column::text("event", "event_type");
    body.push_str(&latency_table(
        "latency",
        event(),
        &run.summary.events,
        &run.summary.overall,
    ));
    if let Some(overall) = &run.summary.overall.response {
        body.push_str(
            "<h2>Response time per event type (due → answer)</h2><p class=\"note\">The same \
             operations timed from when each was due under --rate: what a client waiting in \
             line sees, queueing behind slow answers included.</p>",
        );
        let rows: Vec<LatencySummary> = run
            .summary
            .events
            .iter()
            .filter_map(|e| e.response.as_deref().cloned())
            .collect();
        body.push_str(&latency_table("response", event(), &rows, overall));
    }
    if run.summary.nodes.len() > 1 {
        body.push_str("<h2>Latency per node</h2>");
        body.push_str(&latency_table(
            "latency-by-node",
            Column::text("node", "node"),
            &run.summary.nodes,
            &run.summary.overall,
        ));
        body.push_str(
            "<p class=\"note\">Node K is the K-th host of the URL (a ring's other nodes \
             follow by address). <em>node ?</em>: the store could not say, e.g. the \
             Cassandra driver names the coordinator of successful requests only.</p>",
        );
    }
    body
}

/// Latency, throughput and errors over time, all operations then each event type.
fn over_time(body: &mut Page, run: &LoadedRun, has_latencies: bool) {
    body.push_str("<h2>Latency over time</h2>");
    if run.intervals.is_empty() {
        body.push_str("<p>No intervals.csv in this folder.</p>");
    } else {
        if has_latencies {
            body.figure(charts::latency_over_time(run, "all"));
        }
        body.figure(charts::rate_over_time(run, false));
        if run.summary.errors > 0 {
            body.figure(charts::rate_over_time(run, true));
        }
        let succeeded = run.summary.events.iter().filter(|e| e.ok > 0);
        for event in succeeded {
            body.figure(charts::latency_over_time(run, &event.event_type));
        }
    }
}

/// Writes `report.html` into a result folder and returns its path.
pub fn write_report(dir: &Path) -> Result<PathBuf> {
    let run = LoadedRun::load(dir)?;
    render(&run).write(dir, &title(&run))
}

/// Writes the page of a run stopped at once by a second signal, before its folder was
/// complete: what it was and the command that rebuilds it from its op log.
pub fn write_unfinished(dir: &Path, record: &RunRecord) -> Result<PathBuf> {
    let path = result_dir::file(dir, result_dir::REPORT_HTML);
    let body = format!(
        "<h1>{workload} on {store}: not finished</h1>\n<p>Run <code>{id}</code>, started \
         {started}, was stopped at once by a second signal (status <code>{status}</code>), \
         before it had written its summary: {hint}.</p>\n",
        workload = escape(&record.events.name()),
        store = escape(&record.database.store.name),
        id = escape(&record.run_id),
        started = escape(&record.started_at),
        status = record.status,
        hint = escape(&result_dir::rebuild_hint(dir, record)),
    );
    let title = format!(
        "{} on {}: not finished",
        record.events.name(),
        record.database.store.name
    );
    crate::files::write_atomic(&path, fill(&title, &body).as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_in_a_script_element_holds_no_markup_and_reads_back_the_same() {
        let text = "</script><!--<script>alert(1)</script>-->";
        let json = super::script_json(&serde_json::json!({ "tag": text }));
        assert!(!json.contains('<'), "{json}");
        let back: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back["tag"], text);
    }
}
