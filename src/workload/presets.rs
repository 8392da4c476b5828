//! Named workloads, so the studies' experiments run without writing a spec.
//! `hatshop workloads show NAME` prints any of them as TOML to copy and edit.

use std::path::Path;

use super::keys::KeyDistribution;
use super::spec::{ItemsPerOrder, Mix, SpecError, WorkloadSpec};

fn preset(
    name: &str,
    description: &str,
    initial_orders: u64,
    events: u64,
    mix: Mix,
) -> WorkloadSpec {
    WorkloadSpec {
        name: name.into(),
        description: description.into(),
        seed: 42,
        initial_orders,
        initial_records: 0,
        held_events: 0,
        warmup: 0,
        events,
        mix,
        key_distribution: KeyDistribution::Uniform,
        zipf_exponent: 0.99,
        items_per_order: ItemsPerOrder::default(),
        value_size: 1500,
        order_bytes: None,
        concurrency: None,
        conflicts: 0.0,
        faults: Vec::new(),
    }
}

/// Study 004's key-value mixes: an initial load, a warm-up, then measured operations
/// at concurrency 40 (counts sized for a 2-core machine; the study loaded 5 million).
fn key_value(name: &str, description: &str, mix: Mix) -> WorkloadSpec {
    let mut spec = preset(name, description, 0, 500_000, mix);
    spec.initial_records = 200_000;
    spec.warmup = 20_000;
    spec.concurrency = Some(40);
    spec
}

/// The work of a peer tool, for `bench/race.sh`: key-value records of `value_size`
/// bytes (keys `user` + 16 hex digits), 300,000 measured operations at `lanes`.
fn race(
    name: &str,
    description: &str,
    mix: Mix,
    initial_records: u64,
    value_size: u32,
    lanes: usize,
) -> WorkloadSpec {
    let mut spec = preset(name, description, 0, 300_000, mix);
    spec.initial_records = initial_records;
    spec.value_size = value_size;
    spec.concurrency = Some(lanes);
    spec
}

/// Every preset, in the order `hatshop workloads` lists them.
pub fn all() -> Vec<WorkloadSpec> {
    let mut all = order_presets();
    all.extend(key_value_presets());
    all.extend(race_presets());
    all
}

/// Hat-shop orders: study 000's experiments, and reads of a few hot orders.
fn order_presets() -> Vec<WorkloadSpec> {
    let equal = Mix {
        create_order: 1.0,
        read_order: 1.0,
        update_order: 1.0,
        update_items: 1.0,
        update_status: 1.0,
        delete_order: 1.0,
        ..Mix::default()
    };
    let mut hot_reads = preset(
        "hot-reads",
        "200,000 events over 5,000 orders, 80% reads, zipfian keys (a few hot orders)",
        5_000,
        200_000,
        Mix {
            create_order: 4.0,
            read_order: 80.0,
            update_order: 4.0,
            update_items: 4.0,
            update_status: 4.0,
            delete_order: 4.0,
            ..Mix::default()
        },
    );
    hot_reads.key_distribution = KeyDistribution::Zipfian;
    hot_reads.warmup = 10_000;
    vec![
        preset(
            "hatshop-random",
            "200,000 random events over 500 initial orders, equal weights of the six order event types (study 000, experiment 1)",
            500,
            200_000,
            equal,
        ),
        preset(
            "updates",
            "10,000 update_order events over 500 orders (study 000, experiment 2; set the count with --events)",
            500,
            10_000,
            Mix {
                update_order: 1.0,
                ..Mix::default()
            },
        ),
        preset(
            "creates",
            "50,000 create_order events on an empty database (study 000, experiment 3)",
            0,
            50_000,
            Mix {
                create_order: 1.0,
                ..Mix::default()
            },
        ),
        hot_reads,
    ]
}

/// Study 004's key-value mixes.
fn key_value_presets() -> Vec<WorkloadSpec> {
    vec![
        key_value(
            "kv-50w-50r",
            "key-value: 50% write, 50% read; 200,000 records, 20,000 warm-up, 500,000 ops, concurrency 40 (study 004)",
            Mix {
                write: 50.0,
                read: 50.0,
                ..Mix::default()
            },
        ),
        key_value(
            "kv-10w-40rw-50r",
            "key-value: 10% write, 40% rewrite, 50% read (study 004)",
            Mix {
                write: 10.0,
                rewrite: 40.0,
                read: 50.0,
                ..Mix::default()
            },
        ),
        key_value(
            "kv-50rw-50r",
            "key-value: 50% rewrite, 50% read (study 004)",
            Mix {
                rewrite: 50.0,
                read: 50.0,
                ..Mix::default()
            },
        ),
        key_value(
            "kv-90rw-10r",
            "key-value: 90% rewrite, 10% read (study 004; the case that decided it, at 15,000-byte values)",
            Mix {
                rewrite: 90.0,
                read: 10.0,
                ..Mix::default()
            },
        ),
    ]
}

/// The races against each store's own benchmark tool: exactly the peer's work.
fn race_presets() -> Vec<WorkloadSpec> {
    let mut all = cql_and_sql_races();
    all.extend(pg_redis_and_voldemort_races());
    all
}

/// The races with latte and sysbench.
fn cql_and_sql_races() -> Vec<WorkloadSpec> {
    let mut sql_select = race(
        "race-sql-select",
        "race with sysbench oltp_point_select: 300,000 point selects by primary key of 120-byte values over 100,000 rows, keys drawn as sysbench's default (special), 16 connections (run it with kv_table=sbtest)",
        Mix {
            read: 1.0,
            ..Mix::default()
        },
        100_000,
        120,
        16,
    );
    sql_select.key_distribution = KeyDistribution::Special;
    vec![
        race(
            "race-cql-insert",
            "race with latte: 300,000 inserts of a text key and a 100-byte blob, 64 in flight (run it with cl=ONE)",
            Mix {
                write: 1.0,
                ..Mix::default()
            },
            0,
            100,
            64,
        ),
        race(
            "race-cql-read",
            "race with latte: 300,000 uniform point reads of 300,000 rows of a text key and a 100-byte blob, 64 in flight",
            Mix {
                read: 1.0,
                ..Mix::default()
            },
            300_000,
            100,
            64,
        ),
        sql_select,
        race(
            "race-sql-insert",
            "race with sysbench oltp_insert: 300,000 single-row inserts, 16 connections (run it with kv_table=sbtest: a 120-byte c and a 60-character pad)",
            Mix {
                write: 1.0,
                ..Mix::default()
            },
            0,
            120,
            16,
        ),
    ]
}

/// The races with pgbench, redis-benchmark and Voldemort's own performance tool.
fn pg_redis_and_voldemort_races() -> Vec<WorkloadSpec> {
    vec![
        race(
            "race-pg-select",
            "race with pgbench -S -M prepared: 300,000 prepared point reads by primary key over 100,000 rows of pgbench_accounts at scale 1, keys uniform, 16 connections (run it with kv_table=pgbench_accounts: the value is the 84-byte filler, which hatshop reads where pgbench reads abalance)",
            Mix {
                read: 1.0,
                ..Mix::default()
            },
            100_000,
            84,
            16,
        ),
        race(
            "race-redis-get",
            "race with redis-benchmark -t get -d 100 -r 100000 -P 1: 300,000 GETs of 100-byte values over 100,000 keys, keys uniform, one request per round trip, 50 in flight",
            Mix {
                read: 1.0,
                ..Mix::default()
            },
            100_000,
            100,
            50,
        ),
        race(
            "race-redis-set",
            "race with redis-benchmark -t set -d 100 -r 100000 -P 1: 300,000 SETs of 100-byte values over 100,000 keys written first, keys uniform, one request per round trip, 50 in flight",
            Mix {
                rewrite: 1.0,
                ..Mix::default()
            },
            100_000,
            100,
            50,
        ),
        race(
            "race-vold-read",
            "race with Voldemort's voldemort.performance.benchmark.Benchmark -r 100 --value-size 100 --record-count 100000: 300,000 reads of 100-byte values over 100,000 records, keys uniform, 16 in flight",
            Mix {
                read: 1.0,
                ..Mix::default()
            },
            100_000,
            100,
            16,
        ),
    ]
}

/// The preset of this name.
pub fn find(name: &str) -> Option<WorkloadSpec> {
    all().into_iter().find(|p| p.name == name)
}

// Here rather than beside the parser: a spec is named by a preset before it is read
// from a file, and the parser needs nothing of the presets.
impl WorkloadSpec {
    /// A preset name or the path of a TOML file.
    pub fn load(name_or_path: &str) -> Result<WorkloadSpec, SpecError> {
        if let Some(spec) = find(name_or_path) {
            return Ok(spec);
        }
        let path = Path::new(name_or_path);
        if !path.exists() {
            let presets = all();
            let names = presets.iter().map(|p| p.name.as_str());
            return Err(SpecError::Unknown {
                name: name_or_path.to_string(),
                suggestion: crate::suggest::did_you_mean(name_or_path, names),
            });
        }
        let text =
            crate::regular_file::read_bounded_text(path, crate::regular_file::SETTINGS_FILE_LIMIT)
                .map_err(|e| SpecError::Read {
                    path: name_or_path.to_string(),
                    message: e.to_string(),
                })?;
        Self::from_toml(&text, name_or_path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_round_trips_through_toml() {
        for spec in all() {
            let again = WorkloadSpec::from_toml(&spec.to_toml(), "test").unwrap();
            assert_eq!(again, spec);
        }
    }
}
