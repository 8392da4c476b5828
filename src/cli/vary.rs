//! `--vary KEY=V1,V2,…`: a name a run or a store takes, and its values, each read by
//! the grammar of the flag it stands for, so a sweep's mistake is found before its
//! first run.

use super::quantities::{count, positive_count, rate, seconds, share};
use super::store_flags::all_settings;
use super::values::parse_warmup;

/// What `--vary` takes besides store settings.
pub const RUN_KEYS: [&str; 13] = [
    "nodes",
    "events",
    "warmup",
    "seed",
    "concurrency",
    "duration",
    "rate",
    "value_size",
    "order_bytes",
    "records",
    "orders",
    "conflicts",
    "retries",
];

/// One `--vary`: the name and its values, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Vary {
    pub key: String,
    pub values: Vec<String>,
}

/// `KEY=V1,V2,…`, its name known and each value read as its flag reads it.
pub(super) fn parse_vary(text: &str) -> Result<Vary, String> {
    let shape = || "expected KEY=V1,V2,… (e.g. concurrency=1,4,16)".to_string();
    let (key, values) = text.split_once('=').ok_or_else(shape)?;
    let key = key.trim().replace('-', "_");
    let values: Vec<String> = values
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(String::from)
        .collect();
    if key.is_empty() || values.is_empty() {
        return Err(shape());
    }
    let settings = all_settings();
    let setting = crate::db::current_setting_name(&key);
    if !RUN_KEYS.contains(&key.as_str()) && !settings.iter().any(|(s, _)| s.name == setting) {
        let names = RUN_KEYS
            .iter()
            .copied()
            .chain(settings.iter().map(|(s, _)| s.name));
        return Err(format!(
            "'{key}' is not something a run takes{}; it takes {}, or a store setting (hatshop run --help)",
            crate::suggest::did_you_mean(&key, names),
            RUN_KEYS.join(", ")
        ));
    }
    for value in &values {
        check_run_value(&key, value).map_err(|e| format!("{key}: '{value}': {e}"))?;
    }
    Ok(Vary { key, values })
}

/// Reads a run key's value as its flag does; a store setting's values are the store's
/// to check, when the run's database is known.
fn check_run_value(key: &str, value: &str) -> Result<(), String> {
    match key {
        "nodes" | "concurrency" => positive_count::<usize>(value).map(drop),
        "events" | "records" | "orders" | "seed" => count::<u64>(value).map(drop),
        "value_size" | "retries" => count::<u32>(value).map(drop),
        "warmup" => parse_warmup(value).map(drop),
        "order_bytes" => crate::workload::OrderBytes::parse(value).map(drop),
        "duration" => seconds(value).map(drop),
        "rate" => rate(value).map(drop),
        "conflicts" => share(value).map(drop),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vary_names_something_a_run_takes_with_values_its_flag_reads() {
        let vary = parse_vary("concurrency=1, 4,16k").unwrap();
        assert_eq!(vary.key, "concurrency");
        assert_eq!(vary.values, ["1", "4", "16k"]);
        assert_eq!(parse_vary("value-size=1k,15k").unwrap().key, "value_size");
        assert!(parse_vary("duration=10s,1m").is_ok());
        assert!(parse_vary("cl=ONE,QUORUM").is_ok());
        for (bad, says) in [
            ("pool", "KEY=V1"),
            ("pool=", "KEY=V1"),
            ("concurrency=1,x", "concurrency: 'x'"),
            ("concurrency=0", "at least 1"),
            ("duration=1,ten", "duration: 'ten'"),
            ("concurency=1,2", "did you mean 'concurrency'"),
            ("whatever=1", "not something a run takes"),
        ] {
            let e = parse_vary(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
