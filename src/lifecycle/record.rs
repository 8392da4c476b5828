//! The run's record as it begins: run.json's first version (what will run, against
//! what, on which host), with the server hatshop started behind the URL, if any.

use std::time::SystemTime;

use crate::cluster::Home;
use crate::config::{RunConfig, WarmupUntil};
use crate::result_dir::{
    self, DatabaseRecord, Host, PlanRecord, RunRecord, RunStatus, StageRecord,
};
use crate::runner::{Pace, RunPlan};
use crate::stamp::rfc3339;
use crate::workload::EventSource;
use crate::workload::STREAM_VERSION;

/// The server hatshop started that serves the run's URL, if any.
pub fn serving_server(config: &RunConfig) -> Option<crate::cluster::ServerRecord> {
    server_serving(&config.db, config.home.as_deref())
}

/// The server hatshop started (under `home`) that serves `url`, if any: its nodes can
/// be watched, and its size and heap matter to the numbers.
pub fn server_serving(
    url: &crate::db::DbUrl,
    home: Option<&std::path::Path>,
) -> Option<crate::cluster::ServerRecord> {
    let hosts = url.address(0).ok()?.hosts;
    Home::resolve(home).ok()?.serving(url.scheme(), &hosts)
}

/// What run.json records of a server hatshop started.
pub fn server_facts(record: &crate::cluster::ServerRecord) -> result_dir::ServerFacts {
    result_dir::ServerFacts {
        name: record.kind.name.to_string(),
        nodes: record.nodes.len(),
        settings: record.settings.clone(),
        started_at: Some(record.started_at.clone()),
    }
}

/// run.json's first version: what will run, against what, on which host.
pub fn initial_record(
    config: &RunConfig,
    plan: &RunPlan,
    store: &crate::db::StoreFacts,
    started: SystemTime,
) -> RunRecord {
    let pid = std::process::id();
    RunRecord {
        hatshop_version: env!("CARGO_PKG_VERSION").into(),
        stream_version: STREAM_VERSION,
        run_id: config.run_id.clone(),
        tag: config.tag.clone(),
        status: RunStatus::Running,
        interrupted: false,
        error: None,
        unwritten: None,
        events: config.source.clone(),
        plan_sha256: match &config.source {
            EventSource::File(info) => Some(info.sha256.clone()),
            EventSource::Generated { .. } => None,
        },
        planned_events: match &config.source {
            EventSource::File(info) => info.events,
            EventSource::Generated { .. } => 0,
        },
        stream_complete: false,
        database: DatabaseRecord {
            url: config.db.to_string(),
            settings: config.settings.given().clone(),
            file: config.recorded_file(),
            store: store.clone(),
            server: serving_server(config).as_ref().map(server_facts),
        },
        plan: plan_record(config, plan),
        host: Host {
            lane_threads: plan.lane_threads,
            ..Host::probe()
        },
        pid,
        process_start: crate::procfs::process_start(pid).unwrap_or(0),
        started_at: rfc3339(started),
        measure_started_at: None,
        finished_at: None,
        unmeasured: None,
        lane_last_seq: Vec::new(),
        measured_ops: 0,
        cut_calls: 0,
        op_log_rows: None,
        unmeasured_errors: 0,
        failed_writes: 0,
        recovered: None,
        metrics: None,
        thresholds: Vec::new(),
        faults: Vec::new(),
        client: None,
        fairness: None,
        server_cpu: None,
        host_load: None,
        warmth: None,
        shard: config.shard,
        shards: Vec::new(),
        gc_log: None,
        db_time: None,
        went_on_from: None,
        sealed: false,
        drained_after_deadline: 0,
    }
}

/// run.json's `plan`: how the run is paced, bounded and checked.
fn plan_record(config: &RunConfig, plan: &RunPlan) -> PlanRecord {
    PlanRecord {
        concurrency: plan.concurrency,
        pace: plan.pace.name().into(),
        rate_ops_s: plan.pace.rate(),
        ramp_to_ops_s: match plan.pace {
            Pace::Ramp { to, .. } => Some(to),
            _ => None,
        },
        ramp_s: match plan.pace {
            Pace::Ramp { over, .. } => Some(over.as_secs_f64()),
            _ => None,
        },
        stages: match &plan.pace {
            Pace::Stages(stages) => stages
                .each()
                .map(|(length_s, to_ops_s)| StageRecord { length_s, to_ops_s })
                .collect(),
            _ => Vec::new(),
        },
        max_duration_s: plan.max_duration.map(|d| d.as_secs_f64()),
        min_duration_s: plan.floor.map(|floor| floor.duration.as_secs_f64()),
        min_events: plan.floor.map(|floor| floor.events),
        // A warm-up until latency settled is told by `warmth.settling`.
        warmup_s: match config.warmup_until {
            Some(WarmupUntil::Elapsed(time)) => Some(time.as_secs_f64()),
            _ => None,
        },
        connect_timeout_s: config.connect_timeout.as_secs_f64(),
        op_timeout_s: plan.op_timeout.as_secs_f64(),
        retries: plan.retries,
        interval_s: config.interval.as_secs_f64(),
        op_log: config.op_log,
        check_reads: plan.check_reads,
        conflicts: plan.dealing.conflicts,
    }
}
