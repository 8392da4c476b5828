//! Study 000, "Keeping the Hat Shop in Business": Cassandra or MariaDB on one node, by
//! event type; update-only runs of 500 to 100,000 events; MariaDB's pool of 1 to 30
//! connections; Cassandra's table design. Every comparison between the stores runs
//! both at the same in-flight count, and the page shows where each saturates.

use super::cells::{Cell, scaled};
use super::{CASSANDRA, MARIADB, ORDER_EVENT_TYPES, Study, fact, labels, need, row};
use crate::report::study::{
    Dim, FIGURE, Fact, FigureSpec, Metric, Ours, PartSpec, SeedValue, Shape,
};

/// In flight for every comparison of the two stores: the study's pool of 4 for
/// MariaDB, and the same for Cassandra, so that a mean latency compares the databases
/// and not the counts (Little's law).
const IN_FLIGHT: usize = 4;

pub(super) const STUDY: Study = Study {
    name: "hat-shop",
    seed: "Keeping the ‘Hat Shop’ in Business (study 000)",
    title: "Cassandra or MariaDB on one node",
    question: "For the hat shop's order events on one node, which database answers \
               faster, by event type; how do updates behave as their number grows; how \
               many MariaDB connections does the shop need; and what does Cassandra's \
               table design change?",
    seed_machine: "a 4-core PC, Docker",
    seed_cores: Some(4),
    caveats: &[
        "Both stores run 4 operations in flight in every comparison (the study's \
         MariaDB pool of 4; its Cassandra driver ran queries asynchronously, with no \
         count given). The throughput by in-flight count below says whether either \
         server is saturated there.",
        "The study timed its totals in runs of their own with logging off; the totals \
         here are runs of their own too, with the op log off (--no-op-log).",
    ],
    setup: &[
        fact(
            "machine",
            "a 4-core PC, the databases in Docker, the Java client beside them",
            Fact::Machine,
        ),
        fact(
            "versions",
            "Cassandra 3.x and MariaDB 10.x of 2017 (not named), the DataStax \
                   Java driver and JDBC with HikariCP",
            Fact::ServerVersion,
        ),
        fact("heap", "Docker image defaults", Fact::ServerSetting("heap")),
        row(
            "in flight",
            "MariaDB: a pool of 4 connections; Cassandra: asynchronous queries",
            Ours::Fact(Fact::Concurrency),
            "both stores at 4 when they are compared; 1 and 16 to show saturation; \
                  30 for the pool sweep",
        ),
        fact(
            "MariaDB connections",
            "4 (Fig 4); 1 to 30 (Fig 2)",
            Fact::StoreSetting("connections"),
        ),
        fact(
            "events",
            "200,000 random over 500 orders; updates 500 to 100,000; 50,000 \
                   creates",
            Fact::Events,
        ),
        fact("loaded first", "500 orders", Fact::Loaded),
        row(
            "warm-up",
            "none said",
            Ours::Text(
                "20 s of the first cell's load on each fresh server (Cassandra and \
                 MariaDB alike) before its first cell, at every scale; then each cell's \
                 own warm-up events",
            ),
            "a cold server (a JVM compiling, a buffer pool filling) is measured as \
             slow as it starts, not as it runs",
        ),
        row(
            "logging",
            "off for the total times, on for the rest",
            Ours::Text("op log off for the total times, on for the rest"),
            "",
        ),
    ],
    parts: &[
        PartSpec {
            id: "random",
            title: "200,000 random events (the study's Fig 4)",
            about: "The same seeded stream of the six order event types over 500 \
                    orders, on Cassandra and on MariaDB, each 4 in flight.",
            addition: false,
        },
        PartSpec {
            id: "in-flight",
            title: "Throughput by in-flight count: is either server saturated?",
            about: "The random events at 1, 4 and 16 in flight on each store: where a \
                    store's throughput stops growing, more in flight only queues, and a \
                    mean latency there measures the queue as much as the database.",
            addition: true,
        },
        PartSpec {
            id: "totals",
            title: "Total time, logging off",
            about: "The random events again on each store, 4 in flight, in runs of \
                    their own with the op log off, as the study timed its totals.",
            addition: false,
        },
        PartSpec {
            id: "updates",
            title: "Update-only runs of 500 to 100,000 events (Fig 3)",
            about: "update_order events alone, at four run lengths, on both stores, \
                    each 4 in flight.",
            addition: false,
        },
        PartSpec {
            id: "connections",
            title: "MariaDB's connection pool, 1 to 30 (Fig 2)",
            about: "The same creates on MariaDB at each pool size (50,000 at scale 1), \
                    repeated; 30 in flight, so the pool is the limit.",
            addition: false,
        },
        PartSpec {
            id: "schema",
            title: "Cassandra's table design (Fig 1)",
            about: "Line items each in their own partition (line_items) against one \
                    partition per order (line_items_by_order).",
            addition: false,
        },
    ],
    figures: &[
        FigureSpec {
            part: "random",
            title: "Fig 4: mean latency by event type, both stores 4 in flight",
            events: ORDER_EVENT_TYPES,
            seed_says: "for create, delete and read events both databases are roughly \
                        equivalent, under a millisecond on average; reads are slightly \
                        faster in MariaDB and updates faster in Cassandra by about the \
                        same difference.",
            ..FIGURE
        },
        FigureSpec {
            part: "in-flight",
            title: "Throughput by operations in flight",
            also: &["random"],
            shape: Shape::Lines,
            x: Dim::Label("in flight"),
            metric: Metric::OpsPerSecond,
            ..FIGURE
        },
        FigureSpec {
            part: "totals",
            title: "Total time of the run, op log off",
            x: Dim::Label("workload"),
            metric: Metric::Seconds,
            seed: &[
                SeedValue {
                    x: "hatshop-random",
                    series: "Cassandra",
                    value: 270.0,
                },
                SeedValue {
                    x: "hatshop-random",
                    series: "MariaDB",
                    value: 55.7,
                },
            ],
            seed_says: "the overall execution time of MariaDB was just below 55.7 \
                        seconds compared to Cassandra's 4 minutes and 30.",
            ..FIGURE
        },
        FigureSpec {
            part: "updates",
            title: "Fig 3: mean update latency by run length",
            shape: Shape::Lines,
            x: Dim::Label("events"),
            events: &["update_order"],
            seed_says: "the average time taken for an update remained a relative \
                        constant for each database; in MariaDB it is roughly double \
                        the time taken in Cassandra, with less consistency.",
            ..FIGURE
        },
        FigureSpec {
            part: "connections",
            title: "Fig 2: total time of the creates by pool size (50,000 at scale 1)",
            x: Dim::Label("connections"),
            metric: Metric::Seconds,
            seed: &[
                SeedValue {
                    x: "1",
                    series: "MariaDB",
                    value: 115.0,
                },
                SeedValue {
                    x: "2",
                    series: "MariaDB",
                    value: 80.0,
                },
                SeedValue {
                    x: "4",
                    series: "MariaDB",
                    value: 62.0,
                },
            ],
            seed_says: "at a pool size of 1, nearly 2 minutes; at 2, just over 80 \
                        seconds; at 4 we stop seeing the benefit, just over 1 minute \
                        (the figures here are read from that text).",
            ..FIGURE
        },
        FigureSpec {
            part: "schema",
            title: "Fig 1: mean latency by event type and table design (Cassandra)",
            series: Dim::Label("schema"),
            events: ORDER_EVENT_TYPES,
            seed_says: "with the first design, Cassandra registered 10 to 16 \
                        milliseconds on average for updates; access times are \
                        noticeably improved in most instances with line_items_by_order.",
            ..FIGURE
        },
    ],
    cells: hat_shop_cells,
};

/// Every cell, a part at a time; the study groups them by the server they need.
fn hat_shop_cells(scale: f64) -> Vec<Cell> {
    // The study's MariaDB had a pool of 4.
    let stores = [
        (CASSANDRA, "Cassandra", ""),
        (MARIADB, "MariaDB", "connections=4"),
    ];
    let events = scaled(200_000, scale, 1_000);
    let mut cells = Vec::new();
    for (server, store, query) in stores {
        let random = |id: String, part, in_flight: usize, extra: &[&str]| {
            let mut flags = vec!["--concurrency".to_string(), in_flight.to_string()];
            flags.extend(extra.iter().map(|f| f.to_string()));
            let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
            Cell::run(
                id,
                part,
                labels(&[
                    ("store", store.into()),
                    ("workload", "hatshop-random".into()),
                    ("in flight", in_flight.to_string()),
                ]),
                need(server, 1, query),
                "hatshop-random",
                events,
                &flags,
            )
        };
        cells.push(random(format!("random-{server}"), "random", IN_FLIGHT, &[]));
        for in_flight in [1, 16] {
            cells.push(random(
                format!("in-flight-{in_flight}-{server}"),
                "in-flight",
                in_flight,
                &[],
            ));
        }
        let mut total = random(
            format!("total-{server}"),
            "totals",
            IN_FLIGHT,
            &["--no-op-log"],
        )
        .without_floor();
        total.labels.push(("logging".into(), "op log off".into()));
        cells.push(total);
        cells.extend(update_runs(scale, server, store, query));
    }
    cells.extend(table_designs(scale));
    cells.extend(pool_sizes(scale));
    cells
}

/// Fig 3: update-only runs of four lengths, never below 2 % so that they stay four.
fn update_runs(scale: f64, server: &'static str, store: &str, query: &str) -> Vec<Cell> {
    [500, 5_000, 10_000, 100_000]
        .into_iter()
        .map(|full| {
            let events = scaled(full, scale, full / 50);
            Cell::run(
                format!("updates-{full}-{server}"),
                "updates",
                labels(&[
                    ("store", store.into()),
                    ("workload", "updates".into()),
                    ("events", events.to_string()),
                ]),
                need(server, 1, query),
                "updates",
                events,
                &["--concurrency", &IN_FLIGHT.to_string()],
            )
            .without_floor()
        })
        .collect()
}

/// Fig 1: Cassandra's two table designs.
fn table_designs(scale: f64) -> Vec<Cell> {
    let events = scaled(50_000, scale, 1_000);
    [
        ("by-item", "line_items"),
        ("by-order", "line_items_by_order"),
    ]
    .into_iter()
    .map(|(schema, table)| {
        Cell::run(
            format!("schema-{schema}"),
            "schema",
            labels(&[("store", "Cassandra".into()), ("schema", table.into())]),
            need(CASSANDRA, 1, &format!("schema={schema}")),
            "hatshop-random",
            events,
            &["--concurrency", &IN_FLIGHT.to_string()],
        )
    })
    .collect()
}

/// Fig 2: 50,000 creates at each MariaDB pool size, repeated; 30 in flight, so that the
/// pool is the limit. The pool is the client's setting, so the sizes take turns, a
/// round of each at a time: a server that grows or settles weighs on every size alike.
fn pool_sizes(scale: f64) -> Vec<Cell> {
    let events = scaled(50_000, scale, 1_000);
    let repeats = scaled(5, scale, 1);
    let mut cells = Vec::new();
    for repeat in 1..=repeats {
        for connections in [1, 2, 4, 8, 16, 30] {
            cells.push(
                Cell::run(
                    format!("connections-{connections}-r{repeat}"),
                    "connections",
                    labels(&[
                        ("store", "MariaDB".into()),
                        ("connections", connections.to_string()),
                        ("repeat", repeat.to_string()),
                    ]),
                    need(MARIADB, 1, &format!("connections={connections}")),
                    "creates",
                    events,
                    &["--concurrency", "30"],
                )
                .without_floor(),
            );
        }
    }
    cells
}
