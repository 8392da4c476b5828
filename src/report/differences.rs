//! What differs between runs being compared: the store, its version and settings, the
//! server behind it, the workload and the plan, as `key: a → b`. What names a run comes
//! first, ranked by meaning (store, workload, what a series varies, the server's size,
//! settings given); the rest (versions, descriptions, mix weights, what a store reports
//! of itself) after it. Each run is then named by its own values of what differs
//! (`sqlite · hot-reads`, `cl=ONE`), so a chart read alone still says what it compares.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::loaded_run::LoadedRun;

/// Settings that name a run's own files, not how it ran.
const RUN_OWN: [&str; 2] = ["path", "file"];

/// A run's facts, flattened: `store`, `version`, each store setting by its name, the
/// server's, the workload's (`workload.mix.read_order`) and the plan's (`plan.rate_ops_s`).
pub fn facts(run: &LoadedRun) -> BTreeMap<String, String> {
    let r = &run.record;
    let mut facts = BTreeMap::new();
    facts.insert("store".into(), r.database.store.name.clone());
    facts.insert("version".into(), r.database.store.server_version.clone());
    for (key, value) in &r.database.store.settings {
        if !RUN_OWN.contains(&key.as_str()) {
            facts.insert(key.clone(), value.clone());
        }
    }
    if let Some(server) = &r.database.server {
        facts.insert("nodes".into(), server.nodes.to_string());
        for (key, value) in &server.settings {
            facts.insert(format!("server.{key}"), value.clone());
        }
    }
    match &r.events {
        crate::workload::EventSource::Generated { workload } => {
            if let Ok(value) = serde_json::to_value(workload) {
                flatten("workload", &value, &mut facts);
            }
        }
        crate::workload::EventSource::File(info) => {
            facts.insert(
                "events_file".into(),
                info.path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            );
        }
    }
    if let Ok(value) = serde_json::to_value(&r.plan) {
        flatten("plan", &value, &mut facts);
    }
    facts
}

fn flatten(prefix: &str, value: &Value, out: &mut BTreeMap<String, String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                flatten(&format!("{prefix}.{key}"), value, out);
            }
        }
        Value::Null => {}
        Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

/// The keys whose values are not the same in every run, in name order.
fn differing_keys(all: &[BTreeMap<String, String>]) -> Vec<String> {
    let mut keys: Vec<String> = all.iter().flat_map(|f| f.keys().cloned()).collect();
    keys.sort();
    keys.dedup();
    keys.retain(|key| all.iter().any(|f| f.get(key) != all[0].get(key)));
    keys
}

/// The facts that say what a run is, most telling first; a store setting someone gave
/// ranks after them, before the seed and the deadline.
const NAMING: [&str; 15] = [
    "store",
    "workload.name",
    "events_file",
    "nodes",
    "plan.concurrency",
    "plan.rate_ops_s",
    "plan.ramp_to_ops_s",
    "workload.value_size",
    "workload.order_bytes",
    "workload.events",
    "workload.initial_records",
    "workload.initial_orders",
    "workload.warmup",
    "plan.conflicts",
    "plan.retries",
];

/// Where `key` ranks in naming a run, or `None` for a detail.
fn rank(key: &str, given: &BTreeSet<String>) -> Option<usize> {
    if let Some(place) = NAMING.iter().position(|k| *k == key) {
        return Some(place);
    }
    if given.contains(key) {
        return Some(NAMING.len());
    }
    match key {
        "workload.seed" => Some(NAMING.len() + 1),
        "plan.max_duration_s" | "plan.warmup_s" => Some(NAMING.len() + 2),
        _ => None,
    }
}

/// Store settings that someone gave (in a URL or as a flag), in any of the runs.
fn given_settings(runs: &[LoadedRun]) -> BTreeSet<String> {
    runs.iter()
        .flat_map(|run| run.record.database.settings.keys())
        .map(|key| crate::db::current_setting_name(key).to_string())
        .collect()
}

/// What differs, split: the facts that name a run (ranked), and the details.
pub struct Differences {
    /// `cl: QUORUM → ONE`, most telling first.
    pub naming: Vec<String>,
    /// Versions, descriptions, mix weights, what stores report of themselves.
    pub details: Vec<String>,
}

impl Differences {
    /// Whether the runs differ in nothing run.json records.
    pub fn is_empty(&self) -> bool {
        self.naming.is_empty() && self.details.is_empty()
    }
}

/// The naming keys that differ, most telling first, and the detail keys.
fn split_keys(runs: &[LoadedRun], all: &[BTreeMap<String, String>]) -> (Vec<String>, Vec<String>) {
    let given = given_settings(runs);
    let (mut naming, details): (Vec<String>, Vec<String>) = differing_keys(all)
        .into_iter()
        .partition(|key| rank(key, &given).is_some());
    naming.sort_by_key(|key| rank(key, &given));
    (naming, details)
}

/// `cl: QUORUM → ONE`, one line per differing key, each run's value in run order
/// (`-` where a run has none), naming facts first. Empty when the runs differ in
/// nothing recorded.
pub fn lines(runs: &[LoadedRun]) -> Differences {
    let all: Vec<_> = runs.iter().map(facts).collect();
    let line = |key: String| {
        let values: Vec<&str> = all
            .iter()
            .map(|f| f.get(&key).map_or("-", String::as_str))
            .collect();
        format!("{key}: {}", values.join(" → "))
    };
    let (naming, details) = split_keys(runs, &all);
    Differences {
        naming: naming.into_iter().map(line).collect(),
        details: details.into_iter().map(line).collect(),
    }
}

/// How a fact reads in a run's name: the store and the workload by their values alone,
/// counts with their unit, the rest as `key=value`.
fn name_part(key: &str, value: &str) -> String {
    match key {
        "store" | "workload.name" | "events_file" => value.to_string(),
        "nodes" => format!("{value} nodes"),
        "plan.concurrency" => format!("concurrency {value}"),
        "workload.value_size" => format!("{value}-byte values"),
        "workload.order_bytes" => format!("{value}-byte order payloads"),
        _ => {
            let short = key.rsplit('.').next().unwrap_or(key);
            let value: String = value.chars().take(LONGEST_VALUE).collect();
            format!("{short}={value}")
        }
    }
}

/// A value longer than this is cut in a name, so that a name fits in a legend.
const LONGEST_VALUE: usize = 24;

/// A name per run: its `--tag`, else what differs that names it (`#2 sqlite ·
/// hot-reads`), most telling first; a workload's name stands for its own counts; `#N` and the run's
/// folder where only details differ.
pub fn run_names(runs: &[LoadedRun]) -> Vec<String> {
    const MOST_PARTS: usize = 4;
    let all: Vec<_> = runs.iter().map(facts).collect();
    let (mut naming, _) = split_keys(runs, &all);
    // Runs of different workloads: each workload's own counts come with its name.
    if naming.iter().any(|key| key == "workload.name") {
        naming.retain(|key| key == "workload.name" || !key.starts_with("workload."));
    }
    all.iter()
        .zip(runs)
        .enumerate()
        .map(|(i, (f, run))| {
            // A run the user named is called by its name.
            if let Some(tag) = &run.record.tag {
                return format!("#{} {tag}", i + 1);
            }
            let parts: Vec<String> = naming
                .iter()
                .take(MOST_PARTS)
                .map(|key| name_part(key, f.get(key).map_or("-", String::as_str)))
                .collect();
            if parts.is_empty() {
                let folder = run
                    .dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned());
                format!("#{} {}", i + 1, folder.unwrap_or_default())
            } else {
                format!("#{} {}", i + 1, parts.join(" · "))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn only_keys_that_differ_are_named() {
        let a = map(&[("store", "cassandra"), ("read_cl", "QUORUM"), ("rf", "3")]);
        let b = map(&[("store", "cassandra"), ("read_cl", "ONE"), ("rf", "3")]);
        let c = map(&[("store", "cassandra"), ("rf", "3")]);
        assert_eq!(differing_keys(&[a.clone(), b.clone()]), ["read_cl"]);
        assert_eq!(
            differing_keys(&[a.clone(), a.clone()]),
            Vec::<String>::new()
        );
        // A key one run lacks differs too.
        assert_eq!(differing_keys(&[a, c]), ["read_cl"]);
    }

    #[test]
    fn facts_that_name_a_run_rank_first_and_details_not_at_all() {
        let given: BTreeSet<String> = ["cl".to_string()].into();
        let mut keys = vec![
            "version",
            "workload.mix.read_order",
            "cl",
            "workload.value_size",
            "store",
            "busy_timeout_ms",
            "workload.name",
        ];
        keys.retain(|key| rank(key, &given).is_some());
        keys.sort_by_key(|key| rank(key, &given));
        assert_eq!(
            keys,
            ["store", "workload.name", "workload.value_size", "cl"]
        );
        assert_eq!(name_part("store", "cassandra"), "cassandra");
        assert_eq!(
            name_part("workload.value_size", "15000"),
            "15000-byte values"
        );
        assert_eq!(name_part("cl", "ONE"), "cl=ONE");
    }

    #[test]
    fn json_is_flattened_to_dotted_keys() {
        let mut out = BTreeMap::new();
        let value = serde_json::json!({"mix": {"read_order": 1.5}, "name": "x", "none": null});
        flatten("workload", &value, &mut out);
        assert_eq!(out["workload.mix.read_order"], "1.5");
        assert_eq!(out["workload.name"], "x");
        assert!(!out.contains_key("workload.none"));
    }
}
