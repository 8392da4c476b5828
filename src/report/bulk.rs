//! The report of a bulk load (`hatshop load`): what ran, the totals, batch latency over
//! time as mean and max per bin (study 002's volatility chart), each batch's latency
//! and rows/s, the bytes per batch, and the server's resources and GC pauses on the
//! same time axis.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::loaded_run::read_rows;
use super::page::Page;
use super::resources;
use super::svg::{self, Axis, Series, escape};
use super::table::{self, Cell, Column, Table, Value};
use crate::files::read_json;
use crate::numbers::thousands;
use crate::observe::compactions::Compaction;
use crate::observe::gc_log::GcPause;
use crate::observe::resources::MetricsRow;
use crate::result_dir;
use crate::result_dir::load_record::{
    BATCH_TRACES_CSV, BATCHES_CSV, BatchRow, BatchTrace, LOAD_JSON, LoadRecord,
};

/// Whether `dir` holds a bulk load's results.
pub fn is_load(dir: &Path) -> bool {
    dir.join(LOAD_JSON).exists()
}

/// Writes report.html into a load's folder and returns its path.
pub fn write_report(dir: &Path) -> Result<PathBuf> {
    let record: LoadRecord = read_json(&dir.join(LOAD_JSON))?;
    let batches: Vec<BatchRow> = read_rows(&dir.join(BATCHES_CSV))?;
    let metrics: Vec<MetricsRow> = read_rows(&dir.join(result_dir::SERVER_METRICS_CSV))?;
    let gc: Vec<GcPause> = read_rows(&dir.join(result_dir::GC_CSV))?;
    let compactions_csv = dir.join(crate::observe::COMPACTIONS_CSV);
    let compactions: Option<Vec<Compaction>> = if compactions_csv.exists() {
        Some(read_rows(&compactions_csv)?)
    } else {
        None
    };
    let traces: Vec<BatchTrace> = read_rows(&dir.join(BATCH_TRACES_CSV))?;
    let pools = read_rows(&dir.join(crate::observe::thread_pools::THREAD_POOLS_CSV))?;
    let page = render(
        &record,
        &Folder {
            batches: &batches,
            traces: &traces,
            metrics: &metrics,
            gc: &gc,
            compactions: compactions.as_deref(),
            pools: &pools,
        },
    );
    page.write(dir, &format!("hatshop load {}", record.started_at))
}

/// What a load's folder holds beside load.json.
struct Folder<'a> {
    batches: &'a [BatchRow],
    traces: &'a [BatchTrace],
    metrics: &'a [MetricsRow],
    gc: &'a [GcPause],
    compactions: Option<&'a [Compaction]>,
    pools: &'a [crate::observe::thread_pools::PoolRow],
}

/// The load's page: what it loaded, its totals and read-back check, traced batches,
/// batch charts, and the server's resources over the load.
fn render(record: &LoadRecord, folder: &Folder) -> Page {
    let p = &record.plan;
    let mut out = Page::new(result_dir::REPORT_HTML);
    let _ = write!(
        out,
        "<h1>Bulk load: {} rows into {}</h1><p class=\"subtitle\">{} — {}</p>",
        thousands(p.total_rows()),
        escape(&record.database.store.server_version),
        escape(&record.started_at),
        record.status
    );
    if let Some(error) = &record.error {
        let _ = write!(out, "<p class=\"warning\">{}</p>", escape(error));
    }
    out.push_str(&facts(record));
    out.push_str(&totals(record));
    traced(&mut out, folder.traces);
    charts(&mut out, folder.batches, p.interval_s);
    let end_s = folder
        .batches
        .iter()
        .map(|b| b.start_s + b.latency_us / 1e6)
        .fold(0.0, f64::max);
    resources::figures(
        &mut out,
        &resources::Observed {
            metrics: folder.metrics,
            pools: folder.pools,
            gc: folder.gc,
            gc_log: record.gc_log.as_deref(),
            compactions: folder.compactions,
        },
        end_s,
        "time since the load began (s)",
    );
    out
}

/// What was loaded, into what, in which batches, from which client.
fn facts(record: &LoadRecord) -> String {
    let p = &record.plan;
    let mut out = String::new();
    out.push_str("<table class=\"facts\">");
    let kind = serde_json::to_string(&p.batch).unwrap_or_default();
    for (name, value) in [
        ("database", record.database.url.clone()),
        (
            "rows",
            format!(
                "{} {} of {} rows, {} values of {} B each{}",
                p.repeat,
                if p.repeat == 1 { "pass" } else { "passes" },
                thousands(p.rows),
                p.columns,
                p.value_size,
                p.every_s
                    .map(|s| format!(", a pass every {s} s"))
                    .unwrap_or_default()
            ),
        ),
        (
            "batches",
            format!(
                "{} rows each, {}, {} in flight",
                thousands(p.batch_size),
                kind.trim_matches('"'),
                p.concurrency
            ),
        ),
        (
            "client",
            format!("{} ({} cores)", record.host.cpu, record.host.cores),
        ),
    ] {
        let _ = write!(out, "<tr><td>{name}</td><td>{}</td></tr>", escape(&value));
    }
    out.push_str("</table>");
    out
}

/// Batches, rows, time, throughput and batch latency: one row, for the terminal and
/// the page.
pub fn totals_table(record: &LoadRecord) -> Table {
    let t = &record.totals;
    let l = &t.latency_ms;
    // The unit in the title: the page and the terminal show no unit of their own.
    let ms = |title: &str, key: &str| Column::number(&format!("{title} ms"), None, key);
    let mut table = Table::new(vec![
        Column::number("batches", None, "batches"),
        Column::number("failed", None, "failed_batches"),
        Column::number("rows", None, "rows"),
        Column::number("seconds", None, "elapsed_s"),
        Column::number("rows/s", None, "rows_per_s"),
        Column::number("MB/s", None, "mb_per_s"),
        ms("mean", "mean_ms"),
        ms("p50", "p50_ms"),
        ms("p90", "p90_ms"),
        ms("p99", "p99_ms"),
        ms("max", "max_ms"),
    ]);
    let decimals = |value: f64, places: usize| {
        Cell::shown_as(format!("{value:.places$}"), Value::Number(value, places))
    };
    table.section(vec![vec![
        Cell::count(t.batches),
        Cell::count(t.failed_batches),
        Cell::count(t.rows),
        decimals(t.elapsed_s, 2),
        Cell::count(t.rows_per_s.round() as u64),
        decimals(t.mb_per_s, 1),
        decimals(l.mean, 1),
        decimals(l.p50, 1),
        decimals(l.p90, 1),
        decimals(l.p99, 1),
        decimals(l.max, 1),
    ]]);
    table
}

/// The totals' table, and what reading back found.
fn totals(record: &LoadRecord) -> String {
    let t = &record.totals;
    let mut out = String::from("<h2>Totals</h2>");
    out.push_str(&table::html(&totals_table(record), "totals"));
    let _ = write!(
        out,
        "<p>While a batch was in flight ({:.2} s): {} rows/s.</p>\
         <p class=\"note\">MB/s counts keys and values only; a batch's time runs from just \
         before it was sent to its answer (its rows were made and encoded before).</p>",
        t.busy_s,
        thousands(t.rows_per_busy_s.round() as u64)
    );
    if let Some(c) = &record.check {
        let _ = write!(
            out,
            "<p>Read back: {} of {} rows; {} sampled rows, {} differ from the seed's: \
             <span class=\"{}\">{}</span></p>",
            thousands(c.rows_found),
            thousands(c.rows_expected),
            thousands(c.sampled),
            thousands(c.mismatched),
            if c.ok { "ok" } else { "bad" },
            if c.ok { "ok" } else { "FAILED" }
        );
    }
    out
}

/// Batch latency mean and max per bin, each batch's latency, rows/s and bytes.
fn charts(out: &mut Page, batches: &[BatchRow], interval_s: f64) {
    let ok: Vec<&BatchRow> = batches.iter().filter(|b| b.error.is_empty()).collect();
    if ok.is_empty() {
        return;
    }
    let time = Axis::linear("time since the load began (s)");
    let bin = interval_s.max(0.01);
    let mut bins: std::collections::BTreeMap<u64, (f64, u64, f64)> = Default::default();
    for b in &ok {
        let e = bins.entry((b.start_s / bin) as u64).or_default();
        e.0 += b.latency_us / 1e3;
        e.1 += 1;
        e.2 = e.2.max(b.latency_us / 1e3);
    }
    let at = |k: &u64| *k as f64 * bin;
    out.push_str("<h2>Batch latency over time</h2>");
    out.figure(svg::line_chart(
        &format!("Batch latency, mean and max per {bin} s"),
        &time,
        &Axis::linear("ms"),
        &[
            Series {
                name: "mean".into(),
                points: bins
                    .iter()
                    .map(|(k, v)| (at(k), v.0 / v.1 as f64))
                    .collect(),
            },
            Series {
                name: "max".into(),
                points: bins.iter().map(|(k, v)| (at(k), v.2)).collect(),
            },
        ],
    ));
    out.figure(svg::line_chart(
        "Latency of each batch",
        &Axis::linear("batch"),
        &Axis::linear("ms"),
        &[Series {
            name: "latency".into(),
            points: ok
                .iter()
                .map(|b| (b.batch as f64, b.latency_us / 1e3))
                .collect(),
        }],
    ));
    out.figure(svg::line_chart(
        "Rows per second of each batch",
        &Axis::linear("batch"),
        &Axis::linear("rows/s"),
        &[Series {
            name: "rows/s".into(),
            points: ok
                .iter()
                .map(|b| {
                    (
                        b.batch as f64,
                        b.rows as f64 / (b.latency_us / 1e6).max(1e-9),
                    )
                })
                .collect(),
        }],
    ));
    bytes_per_batch(out, &ok);
}

/// Bytes of keys and values per batch, and what loopback carried while each was in
/// flight, where that was measured.
fn bytes_per_batch(out: &mut Page, ok: &[&BatchRow]) {
    let wire: Vec<(f64, f64)> = ok
        .iter()
        .filter_map(|b| Some((b.batch as f64, b.loopback_bytes? as f64 / 1e6)))
        .collect();
    let mean_payload =
        ok.iter().map(|b| b.payload_bytes).sum::<u64>() as f64 / ok.len() as f64 / 1e6;
    if !wire.is_empty() {
        let mean_wire = wire.iter().map(|w| w.1).sum::<f64>() / wire.len() as f64;
        let _ = write!(
            out,
            "<p>Bytes per batch: {mean_payload:.2} MB of keys and values, {mean_wire:.2} MB \
             sent on loopback while it was in flight (framing, replies and any other \
             loopback traffic included).</p>"
        );
        out.figure(svg::line_chart(
            "Bytes sent on loopback during each batch",
            &Axis::linear("batch"),
            &Axis::linear("MB"),
            &[Series {
                name: "loopback".into(),
                points: wire,
            }],
        ));
    } else {
        let _ = write!(
            out,
            "<p>Bytes per batch: {mean_payload:.2} MB of keys and values.</p>"
        );
    }
}

/// Client and server time of each traced batch (study 002's upper chart): the gap is
/// the wire, the client and any queueing.
fn traced(out: &mut Page, traces: &[BatchTrace]) {
    let both: Vec<(&BatchTrace, f64)> = traces
        .iter()
        .filter_map(|t| Some((t, t.server_us?)))
        .collect();
    if both.is_empty() {
        return;
    }
    let n = both.len() as f64;
    let client = both.iter().map(|(t, _)| t.client_us).sum::<f64>() / n / 1e3;
    let server = both.iter().map(|(_, s)| s).sum::<f64>() / n / 1e3;
    let dropped = traces.len() - both.len();
    let _ = write!(
        out,
        "<h2>Client and server time</h2><p>{} traced batches: client {client:.1} ms, \
         server (coordinator) {server:.1} ms, difference {:.1} ms on average (wire, client \
         and queueing).{}</p>",
        both.len(),
        client - server,
        if dropped > 0 {
            format!(" The server kept no trace of {dropped} more (a busy node drops trace writes).")
        } else {
            String::new()
        }
    );
    out.figure(svg::line_chart(
        "Client and server time of each traced batch",
        &Axis::linear("time since the load began (s)"),
        &Axis::linear("ms"),
        &[
            Series {
                name: "client".into(),
                points: both
                    .iter()
                    .map(|(t, _)| (t.start_s, t.client_us / 1e3))
                    .collect(),
            },
            Series {
                name: "server".into(),
                points: both.iter().map(|(t, s)| (t.start_s, s / 1e3)).collect(),
            },
        ],
    ));
}
