//! What differs between runs being compared: the store, its version and settings, the
//! server behind it, the workload and the plan, as `key: a → b`. Each run is then
//! named by its own values of what differs (`cl=ONE`), so a chart read alone still says
//! what it compares.

use std::collections::BTreeMap;

use serde_json::Value;

use super::load::LoadedRun;

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

/// `cl: QUORUM → ONE`, one line per differing key, each run's value in run order
/// (`-` where a run has none). Empty when the runs differ in nothing recorded.
pub fn lines(runs: &[LoadedRun]) -> Vec<String> {
    let all: Vec<_> = runs.iter().map(facts).collect();
    differing_keys(&all)
        .into_iter()
        .map(|key| {
            let values: Vec<&str> = all
                .iter()
                .map(|f| f.get(&key).map_or("-", String::as_str))
                .collect();
            format!("{key}: {}", values.join(" → "))
        })
        .collect()
}

/// A name per run from what differs (`store=mysql cl=ONE`), `#N` where nothing does.
/// Long values and many keys are cut, so a name fits in a legend.
pub fn run_names(runs: &[LoadedRun]) -> Vec<String> {
    const MOST_KEYS: usize = 3;
    const LONGEST_VALUE: usize = 24;
    let all: Vec<_> = runs.iter().map(facts).collect();
    let keys = differing_keys(&all);
    all.iter()
        .enumerate()
        .map(|(i, f)| {
            let parts: Vec<String> = keys
                .iter()
                .take(MOST_KEYS)
                .map(|key| {
                    let short = key.rsplit('.').next().unwrap_or(key);
                    let value = f.get(key).map_or("-", String::as_str);
                    let value: String = value.chars().take(LONGEST_VALUE).collect();
                    format!("{short}={value}")
                })
                .collect();
            if parts.is_empty() {
                format!("#{}", i + 1)
            } else {
                format!("#{} {}", i + 1, parts.join(" "))
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
    fn json_is_flattened_to_dotted_keys() {
        let mut out = BTreeMap::new();
        let value = serde_json::json!({"mix": {"read_order": 1.5}, "name": "x", "none": null});
        flatten("workload", &value, &mut out);
        assert_eq!(out["workload.mix.read_order"], "1.5");
        assert_eq!(out["workload.name"], "x");
        assert!(!out.contains_key("workload.none"));
    }
}
