//! Study 000, "Keeping the Hat Shop in Business": Cassandra or MariaDB on one node, by
//! event type; update-only runs of 500 to 100,000 events; MariaDB's pool of 1 to 30
//! connections; Cassandra's table design.

use super::super::cells::{Cell, scaled};
use super::{CASSANDRA, MARIADB, ORDER_EVENT_TYPES, Study, labels, need};
use crate::report::study::{Dim, FigureSpec, Metric, PartSpec, SeedValue, Shape};

pub(super) const STUDY: Study = Study {
    name: "hat-shop",
    seed: "Keeping the ‘Hat Shop’ in Business (study 000)",
    title: "Cassandra or MariaDB on one node",
    question: "For the hat shop's order events on one node, which database answers \
               faster, by event type; how do updates behave as their number grows; how \
               many MariaDB connections does the shop need; and what does Cassandra's \
               table design change?",
    caveats: &[
        "The study ran Java clients against Docker images on a 4-core machine; here \
         hatshop and each server share one machine's cores.",
        "MariaDB runs with a pool of 4 connections, as the study's did; Cassandra at its \
         default of 16 in flight (the study's driver ran its queries asynchronously), \
         which is what its total time stands on.",
    ],
    parts: &[
        PartSpec {
            id: "random",
            title: "200,000 random events (the study's Fig 4)",
            about: "The same seeded stream of the six order event types over 500 \
                    orders, on Cassandra and on MariaDB.",
        },
        PartSpec {
            id: "updates",
            title: "Update-only runs of 500 to 100,000 events (Fig 3)",
            about: "update_order events alone, at four run lengths, on both stores.",
        },
        PartSpec {
            id: "connections",
            title: "MariaDB's connection pool, 1 to 30 (Fig 2)",
            about: "50,000 creates on MariaDB at each pool size, repeated; 30 in \
                    flight, so the pool is the limit.",
        },
        PartSpec {
            id: "schema",
            title: "Cassandra's table design (Fig 1)",
            about: "Line items each in their own partition (line_items) against one \
                    partition per order (line_items_by_order).",
        },
    ],
    figures: &[
        FigureSpec {
            part: "random",
            title: "Mean latency by event type, Cassandra against MariaDB",
            shape: Shape::Bars,
            x: Dim::EventType,
            series: Dim::Label("store"),
            metric: Metric::Mean,
            events: ORDER_EVENT_TYPES,
            only: &[],
            seed: &[],
            seed_says: "for create, delete and read events both databases are roughly \
                        equivalent, under a millisecond on average; reads are slightly \
                        faster in MariaDB and updates faster in Cassandra by about the \
                        same difference.",
        },
        FigureSpec {
            part: "random",
            title: "Total time of the run",
            shape: Shape::Bars,
            x: Dim::Label("workload"),
            series: Dim::Label("store"),
            metric: Metric::Seconds,
            events: &[],
            only: &[],
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
        },
        FigureSpec {
            part: "updates",
            title: "Mean update latency by run length",
            shape: Shape::Lines,
            x: Dim::Label("events"),
            series: Dim::Label("store"),
            metric: Metric::Mean,
            events: &["update_order"],
            only: &[],
            seed: &[],
            seed_says: "the average time taken for an update remained a relative \
                        constant for each database; in MariaDB it is roughly double \
                        the time taken in Cassandra, with less consistency.",
        },
        FigureSpec {
            part: "connections",
            title: "Total time of 50,000 creates by pool size",
            shape: Shape::Bars,
            x: Dim::Label("connections"),
            series: Dim::Label("store"),
            metric: Metric::Seconds,
            events: &[],
            only: &[],
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
        },
        FigureSpec {
            part: "schema",
            title: "Mean latency by event type and table design (Cassandra)",
            shape: Shape::Bars,
            x: Dim::EventType,
            series: Dim::Label("schema"),
            metric: Metric::Mean,
            events: ORDER_EVENT_TYPES,
            only: &[],
            seed: &[],
            seed_says: "with the first design, Cassandra registered 10 to 16 \
                        milliseconds on average for updates; access times are \
                        noticeably improved in most instances with line_items_by_order.",
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
    let mut cells = Vec::new();
    for (server, store, query) in stores {
        let events = scaled(200_000, scale, 1_000);
        cells.push(Cell::run(
            format!("random-{server}"),
            "random",
            labels(&[
                ("store", store.into()),
                ("workload", "hatshop-random".into()),
            ]),
            need(server, 1, query),
            "hatshop-random",
            events,
            &[],
        ));
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
                &[],
            )
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
            &[],
        )
    })
    .collect()
}

/// Fig 2: 50,000 creates at each MariaDB pool size, repeated; 30 in flight, so that the
/// pool is the limit.
fn pool_sizes(scale: f64) -> Vec<Cell> {
    let events = scaled(50_000, scale, 1_000);
    let repeats = scaled(5, scale, 1);
    let mut cells = Vec::new();
    for connections in [1, 2, 4, 8, 16, 30] {
        for repeat in 1..=repeats {
            cells.push(Cell::run(
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
            ));
        }
    }
    cells
}
