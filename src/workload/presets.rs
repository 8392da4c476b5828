//! Named workloads, so the seed experiments run without writing a spec.
//! `hatshop workloads show NAME` prints any of them as TOML to copy and edit.

use super::keys::KeyDistribution;
use super::spec::{ItemsPerOrder, Mix, WorkloadSpec};

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
        warmup: 0,
        events,
        mix,
        key_distribution: KeyDistribution::Uniform,
        zipf_exponent: 0.99,
        items_per_order: ItemsPerOrder::default(),
        concurrency: None,
    }
}

/// Every preset, in the order `hatshop workloads` lists them.
pub fn all() -> Vec<WorkloadSpec> {
    let equal = Mix {
        create_order: 1.0,
        read_order: 1.0,
        update_order: 1.0,
        update_status: 1.0,
        delete_order: 1.0,
    };
    let mut hot_reads = preset(
        "hot-reads",
        "200,000 events over 5,000 orders, 80% reads, zipfian keys (a few hot orders)",
        5_000,
        200_000,
        Mix {
            create_order: 5.0,
            read_order: 80.0,
            update_order: 5.0,
            update_status: 5.0,
            delete_order: 5.0,
        },
    );
    hot_reads.key_distribution = KeyDistribution::Zipfian;
    hot_reads.warmup = 10_000;
    vec![
        preset(
            "hatshop-random",
            "200,000 random CRUD events over 500 initial orders, equal weights of the five types (seed experiment 1)",
            500,
            200_000,
            equal,
        ),
        preset(
            "updates",
            "10,000 update_order events over 500 orders (seed experiment 2; set the count with --events)",
            500,
            10_000,
            Mix {
                update_order: 1.0,
                ..Mix::default()
            },
        ),
        preset(
            "creates",
            "50,000 create_order events on an empty database (seed experiment 3)",
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

pub fn find(name: &str) -> Option<WorkloadSpec> {
    all().into_iter().find(|p| p.name == name)
}
