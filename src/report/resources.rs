//! The report's "Server resources" section: CPU, RSS and loopback bytes of every node
//! and of the client, and Cassandra's thread pools, GC pauses and compactions, on the
//! latency charts' time axis (the measured phase), so a latency spike can be matched
//! with its cause by eye.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::loaded_run::LoadedRun;
use super::page::Page;
use super::svg::{self, Axis, Series, escape};
use super::table::{self, Cell, Column, Table, Value};
use crate::observe::compactions::Compaction;
use crate::observe::gc_log::GcPause;
use crate::observe::resources::{LOOPBACK, MetricsRow};
use crate::observe::thread_pools::{POOLS, PoolRow};

/// What the observers recorded, as the section draws it.
pub struct Observed<'a> {
    pub metrics: &'a [MetricsRow],
    pub pools: &'a [PoolRow],
    pub gc: &'a [GcPause],
    /// What the GC log gave, or why it could not be read.
    pub gc_log: Option<&'a str>,
    pub compactions: Option<&'a [Compaction]>,
}

/// Per source, the points of one figure within the measured phase.
fn series(
    rows: &[MetricsRow],
    end_s: f64,
    figure: impl Fn(&MetricsRow) -> Option<f64>,
) -> Vec<Series> {
    let mut by_source: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for row in rows
        .iter()
        .filter(|r| r.at_s >= 0.0 && r.at_s <= end_s + 1.0)
    {
        if let Some(value) = figure(row) {
            by_source
                .entry(&row.source)
                .or_default()
                .push((row.at_s, value));
        }
    }
    by_source
        .into_iter()
        .map(|(name, points)| Series {
            name: name.to_string(),
            points,
        })
        .collect()
}

/// The longest pause of each node in each second of the measured phase (0 without one).
fn pause_series(pauses: &[GcPause], end_s: f64) -> Vec<Series> {
    let seconds = end_s.ceil().max(1.0) as usize;
    let mut by_node: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for p in pauses
        .iter()
        .filter(|p| p.at_s >= 0.0 && p.at_s < seconds as f64)
    {
        let longest = by_node.entry(p.node).or_insert_with(|| vec![0.0; seconds]);
        let slot = &mut longest[p.at_s as usize];
        *slot = slot.max(p.pause_ms);
    }
    by_node
        .into_iter()
        .map(|(node, longest)| Series {
            name: format!("node {node}"),
            points: longest
                .into_iter()
                .enumerate()
                .map(|(s, ms)| (s as f64, ms))
                .collect(),
        })
        .collect()
}

/// The report's section on the servers' own costs during the run.
pub fn section(out: &mut Page, run: &LoadedRun) {
    // A store inside hatshop (SQLite) sends nothing over the wire: the loopback counter
    // would chart other processes' traffic as the run's.
    let metrics: Vec<MetricsRow> = run
        .metrics
        .iter()
        .filter(|row| !(row.source == LOOPBACK && super::run_text::in_process(&run.record)))
        .cloned()
        .collect();
    figures(
        out,
        &Observed {
            metrics: &metrics,
            pools: &run.pools,
            gc: &run.gc,
            gc_log: run.record.gc_log.as_deref(),
            compactions: run.compactions.as_deref(),
        },
        run.summary.elapsed_s,
        "time since the measured phase began (s)",
    )
}

/// The section, up to `end_s` on a time axis labelled `time_label`.
pub fn figures(out: &mut Page, observed: &Observed, end_s: f64, time_label: &str) {
    let Observed {
        metrics,
        pools,
        gc,
        gc_log,
        compactions,
    } = *observed;
    if metrics.is_empty() && gc.is_empty() && gc_log.is_none() {
        return;
    }
    let time = Axis::linear(time_label);
    out.push_str("<h2>Server resources</h2>");
    out.push_str(
        "<p class=\"note\">Sampled once a second from /proc: every node of the server hatshop \
         started, and the client (hatshop itself). CPU in % of one core, user + system.</p>",
    );
    let cpu = series(metrics, end_s, |r| r.cpu_pct);
    if !cpu.is_empty() {
        out.figure(svg::line_chart(
            "CPU over time",
            &time,
            &Axis::linear("CPU (% of one core)"),
            &cpu,
        ));
    }
    let rss = series(metrics, end_s, |r| r.rss_mb);
    if !rss.is_empty() {
        out.figure(svg::line_chart(
            "Resident memory over time",
            &time,
            &Axis::linear("RSS (MB)"),
            &rss,
        ));
    }
    let disk = series(metrics, end_s, |r| {
        Some((r.disk_read_bytes_s? + r.disk_write_bytes_s?) / 1e6)
    });
    if disk.iter().any(|s| s.points.iter().any(|p| p.1 > 0.0)) {
        out.figure(svg::line_chart(
            "Disk reads + writes over time",
            &time,
            &Axis::linear("MB/s"),
            &disk,
        ));
    }
    let net = series(metrics, end_s, |r| r.net_bytes_s.map(|b| b / 1e6));
    if !net.is_empty() {
        out.figure(svg::line_chart(
            "Bytes on the wire (loopback, both directions) over time",
            &time,
            &Axis::linear("MB/s"),
            &net,
        ));
    }
    pool_figures(out, pools, end_s, &time);
    if let Some(text) = gc_log {
        let _ = write!(out, "<h3>GC pauses</h3><p>{}</p>", escape(text));
    }
    if !gc.is_empty() {
        out.figure(svg::line_chart(
            "Longest GC pause in each second",
            &time,
            &Axis::linear("pause (ms)"),
            &pause_series(gc, end_s),
        ));
        out.push_str(&pause_table(gc));
    }
    if let Some(found) = compactions {
        out.push_str(&compaction_table(found));
    }
}

/// Cassandra's thread pools: tasks queued (pending + blocked) and running, per node
/// and pool, for the pools that had any.
fn pool_figures(out: &mut Page, pools: &[PoolRow], end_s: f64, time: &Axis) {
    if pools.is_empty() {
        return;
    }
    out.push_str(
        "<h3>Thread pools</h3><p class=\"note\">Cassandra's system_views.thread_pools, read \
         once a second on each node (thread-pools.csv). Queued: tasks pending or blocked, \
         waiting for a thread of their pool; CompactionExecutor's are compactions waiting \
         to run.</p>",
    );
    let in_run = |r: &&PoolRow| r.at_s >= 0.0 && r.at_s <= end_s + 1.0;
    for (title, figure) in [
        (
            "Tasks queued in Cassandra's thread pools",
            (|r: &PoolRow| (r.pending + r.blocked) as f64) as fn(&PoolRow) -> f64,
        ),
        (
            "Tasks running in Cassandra's thread pools",
            |r: &PoolRow| r.active as f64,
        ),
    ] {
        let mut by: BTreeMap<(usize, usize), Vec<(f64, f64)>> = BTreeMap::new();
        for r in pools.iter().filter(in_run) {
            let order = POOLS
                .iter()
                .position(|p| *p == r.pool)
                .unwrap_or(POOLS.len());
            by.entry((r.node, order))
                .or_default()
                .push((r.at_s, figure(r)));
        }
        let series: Vec<Series> = by
            .into_iter()
            .filter(|(_, points)| points.iter().any(|p| p.1 > 0.0))
            .map(|((node, order), points)| Series {
                name: format!("node {node} {}", POOLS.get(order).unwrap_or(&"?")),
                points,
            })
            .collect();
        if series.is_empty() {
            let _ = write!(out, "<p>{title}: none during the run.</p>");
        } else {
            out.figure(svg::line_chart(
                title,
                time,
                &Axis::linear("tasks"),
                &series,
            ));
        }
    }
}

/// Compactions by node and table: how many, their total and the longest.
fn compaction_table(found: &[Compaction]) -> String {
    let mut out = format!(
        "<h3>Compactions</h3><p>{} compaction{} overlapped the run (compactions.csv, from each \
         node's system.log).</p>",
        found.len(),
        if found.len() == 1 { "" } else { "s" }
    );
    if found.is_empty() {
        return out;
    }
    let mut by: BTreeMap<(usize, String), (u64, f64, f64)> = BTreeMap::new();
    for c in found {
        let e = by
            .entry((c.node, format!("{}.{}", c.keyspace, c.table)))
            .or_default();
        e.0 += 1;
        e.1 += c.took_ms;
        e.2 = e.2.max(c.took_ms);
    }
    let rows = by
        .into_iter()
        .map(|((node, table), took)| (node, table, took))
        .collect();
    out.push_str(&took_table(
        "compactions",
        ["table", "compactions"],
        0,
        rows,
    ));
    out
}

/// What took time on each node (compactions by table, GC pauses by kind): how many,
/// their total and the longest, in ms to `decimals`.
fn took_table(
    id: &str,
    [what, how_many]: [&str; 2],
    decimals: usize,
    rows: Vec<(usize, String, (u64, f64, f64))>,
) -> String {
    let ms = |title: &str, key: &str| Column::number(title, Some("ms"), key);
    let mut took = Table::new(vec![
        Column::number("node", None, "node"),
        Column::text(what, what),
        Column::number(how_many, None, how_many),
        ms("total ms", "total_ms"),
        ms("longest ms", "longest_ms"),
    ]);
    let ms = |ms: f64| Cell::shown_as(format!("{ms:.decimals$}"), Value::Number(ms, decimals));
    took.section(
        rows.into_iter()
            .map(|(node, name, (n, total, longest))| {
                vec![
                    Cell::count(node as u64),
                    Cell::text(name),
                    Cell::count(n),
                    ms(total),
                    ms(longest),
                ]
            })
            .collect(),
    );
    table::html(&took, id)
}

/// Pauses by node and kind: how many, their total and the longest.
fn pause_table(pauses: &[GcPause]) -> String {
    let mut by: BTreeMap<(usize, &str), (u64, f64, f64)> = BTreeMap::new();
    for p in pauses {
        let e = by.entry((p.node, &p.kind)).or_default();
        e.0 += 1;
        e.1 += p.pause_ms;
        e.2 = e.2.max(p.pause_ms);
    }
    let rows = by
        .into_iter()
        .map(|((node, kind), took)| (node, kind.to_string(), took))
        .collect();
    let mut out = took_table("gc", ["kind", "pauses"], 1, rows);
    out.push_str(
        "<p class=\"note\">From each node's GC log (gc.csv): young and mixed pauses are \
         G1's minor collections, full ones stop everything; remark and cleanup end a concurrent \
         cycle.</p>",
    );
    out
}
