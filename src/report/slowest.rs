//! The report's "slowest 5 %" section: per event type, how many of its slowest 5 % of
//! successful operations (at or above its p95) were in flight during a GC pause or
//! just after a fault or during a compaction, against the same share of the other
//! 95 %. If the slow ones overlap pauses far more often than the rest, the pauses
//! explain the tail. Read from the op log, gc.csv, compactions.csv and the run's faults.

use std::collections::BTreeMap;
use std::fmt::Write;

use anyhow::{Context, Result};

use super::loaded_run::LoadedRun;
use super::svg::escape;
use crate::observe::resources::seconds_between;
use crate::op_log::OpLog;

/// How long after a fault began its effects are counted (a killed node's requests
/// time out, clients reconnect).
const FAULT_REACH_S: f64 = 1.0;

/// Time spans on the measured phase's axis (seconds), merged and sorted.
struct Spans(Vec<(f64, f64)>);

impl Spans {
    fn new(mut spans: Vec<(f64, f64)>) -> Spans {
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut merged: Vec<(f64, f64)> = Vec::with_capacity(spans.len());
        for (start, end) in spans {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        Spans(merged)
    }

    /// Whether `[start, end]` meets any span.
    fn meets(&self, start: f64, end: f64) -> bool {
        // The last span that begins before `end`.
        let i = self.0.partition_point(|s| s.0 <= end);
        i > 0 && self.0[i - 1].1 >= start
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[derive(Default)]
struct Tally {
    slow: u64,
    slow_gc: u64,
    slow_fault: u64,
    slow_compaction: u64,
    rest: u64,
    rest_gc: u64,
    rest_fault: u64,
    rest_compaction: u64,
}

/// What slow operations are set against, as spans of the measured phase's axis.
struct Causes {
    pauses: Spans,
    faults: Spans,
    /// `None`: compactions were not read (not Cassandra, or its log was unreadable).
    compactions: Option<Spans>,
}

/// The report's section on the slowest operations and what happened around them.
pub fn section(run: &LoadedRun) -> String {
    let pauses = Spans::new(
        run.gc
            .iter()
            .map(|p| (p.at_s, p.at_s + p.pause_ms / 1_000.0))
            .collect(),
    );
    let faults = Spans::new(
        run.record
            .faults
            .iter()
            .filter_map(|f| {
                let began = f.began_s?;
                Some((began, began + f.took_s.unwrap_or(0.0) + FAULT_REACH_S))
            })
            .collect(),
    );
    let compactions = run.compactions.as_ref().map(|found| {
        Spans::new(
            found
                .iter()
                .map(|c| (c.at_s, c.at_s + c.took_ms / 1_000.0))
                .collect(),
        )
    });
    let none_read = compactions.as_ref().is_none_or(Spans::is_empty);
    if pauses.is_empty() && faults.is_empty() && none_read {
        return String::new();
    }
    let causes = Causes {
        pauses,
        faults,
        compactions,
    };
    let mut out = String::from("<h2>The slowest 5 %</h2>");
    match tally(run, &causes) {
        Ok(tallies) if !tallies.is_empty() => out.push_str(&table(&tallies, &causes)),
        Ok(_) => out.push_str("<p>No successful operations in the op log.</p>"),
        Err(e) => {
            let _ = write!(out, "<p>Not available: {}</p>", escape(&format!("{e:#}")));
        }
    }
    out
}

fn tally(run: &LoadedRun, causes: &Causes) -> Result<BTreeMap<String, Tally>> {
    if !OpLog::exists(&run.dir) {
        anyhow::bail!("the run kept no op log (--no-op-log)");
    }
    let start = humantime::parse_rfc3339(
        run.record
            .measure_started_at
            .as_deref()
            .context("run.json has no measure_started_at")?,
    )
    .context("run.json: bad measure_started_at")?;
    let p95: BTreeMap<&str, f64> = run
        .summary
        .events
        .iter()
        .map(|e| (e.event_type.as_str(), e.percentile("p95")))
        .collect();
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let log = OpLog::open(&run.dir)?.of_runs(run.record.op_log_runs());
    log.for_each(|_, row| {
        if !row.success() {
            return Ok(());
        }
        let Some(&threshold) = p95.get(row.event_type) else {
            return Ok(());
        };
        let sent = seconds_between(start, row.sent_at());
        let answered = sent + row.latency_ns as f64 / 1e9;
        let gc = causes.pauses.meets(sent, answered);
        let fault = causes.faults.meets(sent, answered);
        let compaction = causes
            .compactions
            .as_ref()
            .is_some_and(|c| c.meets(sent, answered));
        let t = tallies.entry(row.event_type.to_string()).or_default();
        if row.latency_us() >= threshold {
            t.slow += 1;
            t.slow_gc += u64::from(gc);
            t.slow_fault += u64::from(fault);
            t.slow_compaction += u64::from(compaction);
        } else {
            t.rest += 1;
            t.rest_gc += u64::from(gc);
            t.rest_fault += u64::from(fault);
            t.rest_compaction += u64::from(compaction);
        }
        Ok(())
    })?;
    Ok(tallies)
}

fn share(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1} %", part as f64 * 100.0 / whole as f64)
    }
}

fn table(tallies: &BTreeMap<String, Tally>, causes: &Causes) -> String {
    let compactions = causes.compactions.is_some();
    let mut out = String::from(
        "<table id=\"slowest\"><tr><th>event</th><th>slowest 5 %</th><th>of them during a GC pause</th>\
         <th>of the rest</th><th>of them after a fault</th><th>of the rest</th>",
    );
    if compactions {
        out.push_str("<th>of them during a compaction</th><th>of the rest</th>");
    }
    out.push_str("</tr>");
    for (event, t) in tallies {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            escape(event),
            t.slow,
            share(t.slow_gc, t.slow),
            share(t.rest_gc, t.rest),
            share(t.slow_fault, t.slow),
            share(t.rest_fault, t.rest)
        );
        if compactions {
            let _ = write!(
                out,
                "<td>{}</td><td>{}</td>",
                share(t.slow_compaction, t.slow),
                share(t.rest_compaction, t.rest)
            );
        }
        out.push_str("</tr>");
    }
    let _ = write!(
        out,
        "</table><p class=\"note\">Slowest 5 %: successful operations at or above their event \
         type's p95. An operation counts as during a GC pause when it was in flight while any \
         node paused (gc.csv), after a fault when it was in flight from the fault's start \
         until {FAULT_REACH_S} s after it ended, and during a compaction when it was in flight \
         while any node compacted any table (compactions.csv, from each node's system.log; \
         Cassandra only).</p>"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_merge_and_meet() {
        let spans = Spans::new(vec![(5.0, 6.0), (1.0, 2.0), (1.5, 3.0)]);
        assert_eq!(spans.0, vec![(1.0, 3.0), (5.0, 6.0)]);
        assert!(spans.meets(2.5, 4.0));
        assert!(spans.meets(4.0, 5.0));
        assert!(!spans.meets(3.1, 4.9));
        assert!(!spans.meets(6.1, 7.0));
        assert!(!spans.meets(0.0, 0.9));
    }
}
