//! A run's text as the terminal shows it when the run ends (what ran, the table, what
//! the client and the server spent), made from the folder's records alone, so that
//! `hatshop show` prints the same text again from the folder.

use std::fmt::Write;

use crate::client_cost::ClientCost;
use crate::numbers::thousands;
use crate::result_dir::RunRecord;
use crate::stats::Summary;
use crate::workload::EventSource;

/// What ran: the run's `--tag`, the workload, store, seed and concurrency, the store's settings, and the
/// server hatshop started, one line each.
pub fn heading(record: &RunRecord) -> String {
    let mut out = String::new();
    let store = &record.database.store;
    if let Some(tag) = &record.tag {
        let _ = write!(out, "{tag} · ");
    }
    let _ = writeln!(
        out,
        "{} · {} ({}) · seed {} · concurrency {}",
        record.events.name(),
        store.name,
        store.server_version,
        seed_of(&record.events),
        record.plan.concurrency
    );
    let settings: Vec<String> = store
        .settings
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if !settings.is_empty() {
        let _ = writeln!(out, "{}", settings.join(" · "));
    }
    if let Some(server) = &record.database.server {
        let _ = writeln!(out, "server started by hatshop: {}", server.describe());
    }
    out
}

/// The heading, the table (its columns `percentiles`, else the standard ladder, cut to
/// fit `width`) and what the client and server spent.
pub fn render(
    record: &RunRecord,
    summary: &Summary,
    percentiles: &[(String, f64)],
    width: Option<usize>,
) -> String {
    let mut out = heading(record);
    // A cold server is said before any number it bent.
    for warning in record.warmth.iter().flat_map(|w| w.warnings()) {
        let _ = writeln!(out, "warning: {warning}");
    }
    out.push_str(&super::run_table::render(summary, percentiles, width));
    for verdict in &record.thresholds {
        let held = if verdict.kept { "kept" } else { "broken" };
        let _ = writeln!(
            out,
            "threshold {} {held}: {}",
            verdict.threshold, verdict.said
        );
    }
    if let Some(load) = record.unmeasured.as_ref().and_then(|u| u.load.as_ref()) {
        let _ = writeln!(
            out,
            "load (before measuring, not in the latencies above): {}",
            load_facts(load)
        );
    }
    if let Some(went_on) = went_on_facts(record) {
        let _ = writeln!(out, "load: {went_on}");
    }
    if let Some(client) = &record.client {
        let (line, warnings) = client_said(record, client);
        let _ = writeln!(out, "{line}");
        for warning in warnings {
            let _ = writeln!(out, "warning: {warning}");
        }
    }
    if let Some(server) = &record.server_cpu {
        let _ = writeln!(out, "{}", server.describe());
    }
    out
}

/// What a run that went on from an earlier run's tables stood on, in place of a load
/// (`--reuse-load`).
pub fn went_on_facts(record: &RunRecord) -> Option<String> {
    let from = record.went_on_from.as_ref()?;
    let EventSource::Generated { workload } = &record.events else {
        return None;
    };
    Some(format!(
        "none: the database held the first {} events of this stream (a load of {}), \
         which run {} ({}) left whole, and this run went on from there (--reuse-load)",
        thousands(workload.held_events),
        thousands(workload.load_events()),
        from.run,
        from.folder
    ))
}

/// The initial load: its rows, time and rate, and its batches.
pub fn load_facts(load: &crate::result_dir::LoadRecord) -> String {
    format!(
        "{} rows in {} = {} rows/s, in batches of {} rows per lane",
        thousands(load.rows),
        crate::numbers::elapsed_text(load.took_s),
        thousands(load.rows_per_s.round() as u64),
        thousands(load.batch as u64)
    )
}

/// The seed of a generated stream, or where a replayed one came from.
pub fn seed_of(source: &EventSource) -> String {
    match source {
        EventSource::Generated { workload } => workload.seed.to_string(),
        EventSource::File(_) => "from file".into(),
    }
}

/// The client's line, and the warnings that the client set the pace or starved, or that
/// the host was busy.
pub fn client_said(record: &RunRecord, client: &ClientCost) -> (String, Vec<String>) {
    let inside = in_process(record);
    let (line, mut warnings) = client.report(&record.database.store.name, inside);
    warnings.extend(record.host_load.as_ref().and_then(|h| h.busy(inside)));
    (line, warnings)
}

/// Whether the run's store ran inside hatshop, so that its CPU was the client's.
pub fn in_process(record: &RunRecord) -> bool {
    crate::db::store_declarations(&record.database.store.name).is_some_and(|meta| meta.in_process)
}
