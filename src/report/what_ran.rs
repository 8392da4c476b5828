//! A run's report, "What ran": the events, the plan and its hash, the database and
//! its server, the client's cost, the shards, the host, how the run ended and what
//! verify found.

use std::fmt::Write;

use super::loaded_run::LoadedRun;
use super::run_text::in_process;
use super::svg::escape;
use crate::client_cost::ClientCost;
use crate::numbers::thousands;
use crate::result_dir::{Host, PlanRecord, RunRecord, RunStatus, ShardOrigin};
use crate::stats::fairness::Fairness;
use crate::stats::settling::Settled;
use crate::workload::{EventSource, WorkloadSpec};

fn fact(out: &mut String, name: &str, value: &str) {
    let _ = write!(out, "<tr><td>{}</td><td>{}</td></tr>", escape(name), value);
}

/// What the run stood on: its load, or the tables an earlier run left.
fn load(r: &RunRecord) -> Option<String> {
    match r.unmeasured.as_ref().and_then(|u| u.load.as_ref()) {
        Some(load) => Some(format!(
            "{}; before measuring, in no latency",
            super::run_text::load_facts(load)
        )),
        None => super::run_text::went_on_facts(r),
    }
}

/// The facts of a run, as a table: what ran, against what, how, where, and how it
/// ended.
pub(super) fn section(run: &LoadedRun) -> String {
    let r = &run.record;
    let mut out = String::from(r#"<table class="facts">"#);
    for (name, value) in events_facts(&r.events, &r.plan, settling(r)) {
        fact(&mut out, name, &value);
    }
    fact(&mut out, "plan sha256", &plan_hash(r));
    fact(&mut out, "database", &database(r));
    let cold: String = r
        .warmth
        .iter()
        .flat_map(|w| w.warnings())
        .map(|warning| format!(r#"<div class="warning">{}</div>"#, escape(&warning)))
        .collect();
    if !cold.is_empty() {
        fact(&mut out, "warm server", &cold);
    }
    let settings: Vec<String> = r
        .database
        .store
        .settings
        .iter()
        .map(|(k, v)| format!("{}={}", escape(k), escape(v)))
        .collect();
    fact(&mut out, "settings", &settings.join(" · "));
    if let Some(client) = &r.client {
        fact(&mut out, "client cost", &client_cost(r, client));
    }
    fact(&mut out, "plan", &plan(run));
    if let Some(load) = load(r) {
        fact(&mut out, "load", &escape(&load));
    }
    if let Some(fairness) = &r.fairness {
        fact(
            &mut out,
            "lanes",
            &escape(&lanes(fairness, run.summary.elapsed_s)),
        );
    }
    if let Some(shard) = r.shard {
        fact(
            &mut out,
            "shard",
            &format!(
                "{shard} of a run on several clients: `hatshop merge` the shards' folders for the whole run"
            ),
        );
    }
    for s in &r.shards {
        fact(
            &mut out,
            &format!("shard {}", s.index),
            &escape(&shard(r, s)),
        );
    }
    fact(&mut out, "client host", &escape(&host(&r.host)));
    fact(
        &mut out,
        "time",
        &escape(&format!(
            "{} → {} · measured phase {:.2} s",
            r.started_at,
            r.finished_at.as_deref().unwrap_or("?"),
            run.summary.elapsed_s
        )),
    );
    fact(&mut out, "status", &status(r));
    if !r.thresholds.is_empty() {
        fact(&mut out, "thresholds", &thresholds(r));
    }
    fact(&mut out, "verify", &verified(run.verify.as_ref()));
    out.push_str("</table>");
    out
}

/// What a sweep ran, for the top of its page: the swept setting and its values, each
/// database, the runs per value, and the workload, plan and host of its first run (the
/// swept setting aside, every run shares them).
pub(super) fn sweep_section(
    first: &LoadedRun,
    setting: &str,
    values: &[String],
    databases: &[String],
    repeats: usize,
    loads: Option<&str>,
) -> String {
    let r = &first.record;
    let mut out = String::from(r#"<table class="facts" id="what-ran">"#);
    fact(
        &mut out,
        "swept",
        &format!("<b>{}</b>: {}", escape(setting), escape(&values.join(", "))),
    );
    fact(&mut out, "databases", &escape(&databases.join(", ")));
    fact(
        &mut out,
        "runs",
        &format!(
            "{} per value and database ({} in all)",
            repeats,
            values.len() * databases.len().max(1) * repeats
        ),
    );
    if let Some(loads) = loads {
        fact(&mut out, "loads", &escape(loads));
    }
    for (name, value) in events_facts(&r.events, &r.plan, settling(r)) {
        fact(&mut out, name, &value);
    }
    fact(&mut out, "plan", &plan(first));
    fact(&mut out, "client host", &escape(&host(&r.host)));
    out.push_str("</table>");
    let _ = write!(
        out,
        r#"<p class="note">The workload, plan and host are run #1's (<code>{}</code>); every run shares them but for {}, as the table at the end says.</p>"#,
        escape(&first.dir.display().to_string()),
        escape(setting)
    );
    out
}

/// How a warm-up that waited for latency to settle went, where the run had one.
fn settling(r: &RunRecord) -> Option<&Settled> {
    r.warmth.as_ref()?.settling.as_ref()
}

/// The workload and seed, or the events file. The preset's description (which names its
/// own counts) only where the run kept them all.
fn events_facts(
    events: &EventSource,
    plan: &PlanRecord,
    settling: Option<&Settled>,
) -> Vec<(&'static str, String)> {
    let concurrency = plan.concurrency;
    let timed = match (plan.warmup_s, settling) {
        (Some(s), _) => format!(" (for {s} s)"),
        (None, Some(settled)) if settled.settled => {
            format!(" (until latency settled, {:.0} s)", settled.after_s)
        }
        (None, Some(unsettled)) => {
            format!(" (latency still falling after {:.0} s)", unsettled.after_s)
        }
        (None, None) => String::new(),
    };
    match events {
        EventSource::Generated { workload } => vec![
            (
                "workload",
                format!(
                    "{}{}: {}, {} warm-up{timed}, {}, {} keys",
                    escape(&workload.name),
                    if as_preset(workload, concurrency) {
                        format!(" ({})", escape(&workload.description))
                    } else {
                        String::new()
                    },
                    if workload.initial_records > 0 {
                        format!(
                            "{} initial records of {} bytes",
                            thousands(workload.initial_records),
                            thousands(u64::from(workload.value_size))
                        )
                    } else {
                        format!("{} initial orders", thousands(workload.initial_orders))
                    } + &workload.order_bytes.map_or(String::new(), payload_words),
                    thousands(workload.warmup),
                    if let (Some(events), Some(secs)) = (plan.min_events, plan.min_duration_s) {
                        format!(
                            "at least {} measured events and {secs} s of them (--min-duration: \
                             the stream went on until both were met)",
                            thousands(events)
                        )
                    } else if workload.without_end() {
                        "measured events until the run's length (--duration or --stages) ended them"
                            .to_string()
                    } else {
                        format!("{} measured events", thousands(workload.events))
                    },
                    serde_json::to_string(&workload.key_distribution)
                        .unwrap_or_default()
                        .trim_matches('"')
                ),
            ),
            ("seed", workload.seed.to_string()),
        ],
        EventSource::File(info) => vec![("events file", escape(&info.path.display().to_string()))],
    }
}

/// The stream's hash and how much of the stream it covers.
fn plan_hash(r: &RunRecord) -> String {
    let coverage = if r.stream_complete {
        "the whole stream".to_string()
    } else if r.plan.min_duration_s.is_some() && r.status == RunStatus::Finished {
        format!(
            "the first {} events, where --min-duration ended the stream",
            thousands(r.planned_events)
        )
    } else {
        // What the run handed out is hashed; its lanes may have applied fewer.
        let applied = r.applied_to();
        format!(
            "the first {} events, as far as the run handed them out before it stopped \
             ({}); its lanes had applied the stream up to event {}",
            thousands(r.planned_events),
            r.status.as_str(),
            thousands(applied)
        )
    };
    format!(
        "<code>{}</code> ({}; stream version {})",
        escape(r.plan_sha256.as_deref().unwrap_or("(not hashed)")),
        escape(&coverage),
        r.stream_version
    )
}

/// The store, its version and URL, and the server hatshop started for it.
fn database(r: &RunRecord) -> String {
    let server = r
        .database
        .server
        .as_ref()
        .map(|server| format!(" · started by hatshop: {}", escape(&server.describe())))
        .unwrap_or_default();
    format!(
        "{} {} at <code>{}</code>{server}",
        escape(&r.database.store.name),
        escape(&r.database.store.server_version),
        escape(&r.database.url)
    )
}

/// Each `--threshold` and what it measured, a broken one as a warning.
fn thresholds(r: &RunRecord) -> String {
    r.thresholds
        .iter()
        .map(|verdict| {
            let line = escape(&format!("{}: {}", verdict.threshold, verdict.said));
            if verdict.kept {
                format!("<div>kept · {line}</div>")
            } else {
                format!(r#"<div class="warning">broken · {line}</div>"#)
            }
        })
        .collect()
}

/// What the client spent, and a warning when it set the pace or starved.
fn client_cost(r: &RunRecord, client: &ClientCost) -> String {
    let (line, warnings) = super::run_text::client_said(r, client);
    let mut text = escape(&line);
    match r.host.client_threads {
        0 => {}
        1 => text.push_str(" · 1 runtime thread"),
        n => {
            let _ = write!(text, " · {n} runtime threads");
        }
    }
    match r.host.lane_threads {
        0 => {}
        1 => text.push_str(" · the lanes on 1 thread of their own"),
        n => {
            let _ = write!(text, " · the lanes on {n} threads of their own");
        }
    }
    // A block of its own: a long warning wraps inside its box.
    for warning in warnings {
        let _ = write!(text, r#"<div class="warning">{}</div>"#, escape(&warning));
    }
    text
}

/// How evenly the lanes shared the work, as sysbench's "threads fairness": `8 lanes:
/// 1,250 ± 12 measured operations each (1,230–1,270), busy 97 ± 1 % of the measured
/// phase` (a lane busy far less than the others waited on the client, or its pace).
fn lanes(fairness: &Fairness, measured_s: f64) -> String {
    let whole = |v: f64| thousands(v.round() as u64);
    let lanes = match fairness.lanes {
        1 => "1 lane".to_string(),
        n => format!("{n} lanes"),
    };
    let mut text = format!(
        "{lanes}: {} ± {} measured operations each ({}–{})",
        whole(fairness.ops.mean),
        whole(fairness.ops.stddev),
        whole(fairness.ops.min),
        whole(fairness.ops.max),
    );
    if measured_s > 0.0 {
        let share = |s: f64| s / measured_s * 100.0;
        let _ = write!(
            text,
            ", busy {:.0} ± {:.0} % of the measured phase",
            share(fairness.busy_s.mean),
            share(fairness.busy_s.stddev)
        );
    }
    text
}

/// Lanes, pace, limits and timeouts.
fn plan(run: &LoadedRun) -> String {
    let r = &run.record;
    format!(
        "concurrency {}, {}{}, intervals of {} s, operation timeout {} s, connect timeout {} s{}",
        r.plan.concurrency,
        match (r.plan.rate_ops_s, r.plan.ramp_to_ops_s, r.plan.ramp_s) {
            (Some(from), _, _) if !r.plan.stages.is_empty() => format!(
                "open loop in stages from {} ops/s: {} (each a straight line to its rate; each operation sent when due, however slowly answers came)",
                thousands(from.round() as u64),
                r.plan
                    .stages
                    .iter()
                    .map(|s| format!(
                        "to {} ops/s over {} s",
                        thousands(s.to_ops_s.round() as u64),
                        s.length_s
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (Some(from), Some(to), Some(over)) => format!(
                "open loop climbing from {} to {} ops/s over the first {over} s of the measured phase (the warm-up at {0}; each operation sent when due, however slowly answers came)",
                thousands(from.round() as u64),
                thousands(to.round() as u64)
            ),
            (Some(rate), _, _) => format!(
                "open loop at {} ops/s (each operation sent when due, however slowly answers came)",
                thousands(rate.round() as u64)
            ),
            (None, _, _) =>
                "closed loop (each lane sends when its previous answer is back: a slow \
                         answer delays the requests behind it, so its latencies are prone to \
                         coordinated omission; --rate measures from when each was due)"
                    .to_string(),
        },
        r.plan
            .max_duration_s
            .map(|d| format!(", stop after {d} s"))
            .unwrap_or_default(),
        run.interval_s(),
        r.plan.op_timeout_s,
        r.plan.connect_timeout_s,
        if r.plan.retries > 0 {
            format!(
                ", up to {} retries per operation: {} made, each latency spans every call of its operation",
                r.plan.retries,
                thousands(run.summary.overall.retries)
            )
        } else {
            String::new()
        }
    )
}

/// One shard of a merged run.
fn shard(r: &RunRecord, s: &ShardOrigin) -> String {
    let mut text = format!(
        "{} · {} · {} ops, {}",
        s.host.hostname,
        s.status,
        thousands(s.measured_ops),
        s.run_id
    );
    if let Some(client) = &s.client {
        text.push_str(&format!(
            " · {}",
            client.report(&r.database.store.name, in_process(r)).0
        ));
    }
    text
}

/// The client machine.
fn host(h: &Host) -> String {
    format!(
        "{} · {} · {} cores · {:.1} GiB · {} (kernel {})",
        h.hostname,
        h.cpu,
        h.cores,
        h.memory_bytes as f64 / (1u64 << 30) as f64,
        h.os,
        h.kernel
    )
}

/// Whether a run's spec is its preset's as shipped (the seed aside) at the preset's
/// concurrency, so that the preset's description, which names its counts, holds.
fn as_preset(workload: &WorkloadSpec, concurrency: usize) -> bool {
    let Some(preset) = crate::workload::preset(&workload.name) else {
        return false;
    };
    let counts = |spec: &WorkloadSpec| {
        let mut value = serde_json::to_value(spec).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            map.remove("seed");
        }
        value
    };
    counts(&preset) == counts(workload) && preset.concurrency.is_none_or(|c| c == concurrency)
}

/// How the run ended, and why when it failed.
fn status(r: &RunRecord) -> String {
    // A run that ended at its --duration ran its plan, as one that finished.
    match r.status {
        status if status.ran_its_plan() => format!(r#"<span class="ok">{status}</span>"#),
        other => format!(
            r#"<span class="bad">{other}</span>{}"#,
            r.error
                .as_deref()
                .map(|e| format!(": {}", escape(e)))
                .unwrap_or_default()
        ),
    }
}

/// What `hatshop verify` found, if it ran.
fn verified(verify: Option<&crate::verify::VerifyReport>) -> String {
    match verify {
        None => "not verified (run <code>hatshop verify</code>)".to_string(),
        Some(v) if v.error.is_some() => format!(
            r#"<span class="bad">not verified</span>: verify of {} could not finish ({})"#,
            escape(&v.database),
            escape(v.error.as_deref().unwrap_or_default())
        ),
        Some(v) if v.is_exact() => {
            format!(
                r#"<span class="ok">exact</span>: {} orders, {} line items, {} records as the stream says{}{}"#,
                thousands(v.orders_found),
                thousands(v.items_found),
                thousands(v.keys_found),
                v.rests_on.as_ref().map_or(String::new(), |r| format!(
                    " (read back: what this run's own events wrote; the rest as run {} left \
                     it, verified exact then)",
                    escape(&r.run)
                )),
                if v.uncertain_orders + v.uncertain_keys > 0 {
                    format!(
                        "; {} uncertain (a write with an unknown outcome)",
                        thousands(v.uncertain_orders + v.uncertain_keys)
                    )
                } else {
                    String::new()
                }
            ) + &lost_updates(v)
        }
        Some(v) => {
            format!(
                r#"<span class="bad">{} differences</span> (see verify.json)"#,
                thousands(v.differences())
            ) + &lost_updates(v)
        }
    }
}

/// Lost updates among the orders raced on, when there were races.
fn lost_updates(v: &crate::verify::VerifyReport) -> String {
    if v.raced_orders == 0 {
        return String::new();
    }
    format!(
        "; <strong>{} lost updates</strong> among {} orders raced on (--conflicts): their final state is not the stream's last{}",
        thousands(v.lost_updates),
        thousands(v.raced_orders),
        if v.resurrected_orders > 0 {
            format!(
                "; {} deleted orders written back by a racing update",
                thousands(v.resurrected_orders)
            )
        } else {
            String::new()
        }
    )
}

/// ", each with a payload of 200 to 2,000 bytes": an order's payload as the workload
/// line says it.
fn payload_words(range: crate::workload::OrderBytes) -> String {
    let (min, max) = (thousands(range.min.into()), thousands(range.max.into()));
    if range.min == range.max {
        format!(", each with a payload of {min} bytes")
    } else {
        format!(", each with a payload of {min} to {max} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_presets_description_stands_only_for_the_preset_as_shipped() {
        let shipped = crate::workload::preset("kv-50w-50r").unwrap();
        let concurrency = shipped.concurrency.unwrap();
        assert!(as_preset(&shipped, concurrency));
        let mut reseeded = shipped.clone();
        reseeded.seed += 1;
        assert!(
            as_preset(&reseeded, concurrency),
            "the seed is in no description"
        );
        assert!(
            !as_preset(&shipped, 8),
            "its description names concurrency 40"
        );
        let mut fewer = shipped.clone();
        fewer.initial_records = 20_000;
        assert!(!as_preset(&fewer, concurrency));
        let plan: PlanRecord = serde_json::from_value(serde_json::json!({
            "concurrency": 8, "pace": "closed_loop", "op_log": true, "check_reads": true,
        }))
        .unwrap();
        let facts = events_facts(&EventSource::Generated { workload: fewer }, &plan, None);
        assert!(
            facts[0]
                .1
                .starts_with("kv-50w-50r: 20,000 initial records of 1,500 bytes"),
            "{facts:?}"
        );
    }
}
