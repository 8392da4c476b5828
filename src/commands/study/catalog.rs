//! The five published studies hatshop reproduces, as data: each one's question, parts,
//! figures (the study's own axes, grouping and metrics, with the numbers it printed),
//! and the cells that fill them, sized by `--scale`.

use super::cells::{Cell, ServerNeed, Verb, scaled};
use crate::report::study::{Dim, FigureSpec, Metric, PartSpec, SeedValue, Shape};

/// One study.
pub struct Study {
    pub name: &'static str,
    /// The published study, as its title reads.
    pub seed: &'static str,
    pub title: &'static str,
    pub question: &'static str,
    /// How this machine differs from the study's, said plainly on the page.
    pub caveats: &'static [&'static str],
    pub parts: &'static [PartSpec],
    pub figures: &'static [FigureSpec],
    /// Its cells at a scale, servers grouped: the cells of one server stand together.
    pub cells: fn(f64) -> Vec<Cell>,
}

pub static STUDIES: &[Study] = &[HAT_SHOP, AHEAD_OF_DEMAND, LOOK_INSIDE, THROUGHPUT, KV_MIXES];

/// A study by name.
pub fn find(name: &str) -> Option<&'static Study> {
    STUDIES.iter().find(|s| s.name == name)
}

fn labels(pairs: &[(&str, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn args(flags: &[&str]) -> Vec<String> {
    flags.iter().map(|f| f.to_string()).collect()
}

fn need(server: &'static str, nodes: usize, query: &str) -> ServerNeed {
    ServerNeed {
        server,
        nodes,
        query: query.into(),
    }
}

// ---------------------------------------------------------------------------------
// Study 000: Cassandra or MariaDB on one node.

const HAT_SHOP_EVENT_TYPES: &[&str] = &[
    "create_order",
    "read_order",
    "update_order",
    "update_items",
    "update_status",
    "delete_order",
];

const HAT_SHOP: Study = Study {
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
        "MariaDB runs with a pool of 4 connections, as the study's did.",
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
            events: HAT_SHOP_EVENT_TYPES,
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
                    series: "cassandra",
                    value: 270.0,
                },
                SeedValue {
                    x: "hatshop-random",
                    series: "mariadb",
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
                    series: "mariadb",
                    value: 115.0,
                },
                SeedValue {
                    x: "2",
                    series: "mariadb",
                    value: 80.0,
                },
                SeedValue {
                    x: "4",
                    series: "mariadb",
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
            events: HAT_SHOP_EVENT_TYPES,
            only: &[],
            seed: &[],
            seed_says: "with the first design, Cassandra registered 10 to 16 \
                        milliseconds on average for updates; access times are \
                        noticeably improved in most instances with line_items_by_order.",
        },
    ],
    cells: hat_shop_cells,
};

fn hat_shop_cells(scale: f64) -> Vec<Cell> {
    let mut cells = Vec::new();
    let stores = [("cassandra", ""), ("mariadb", "connections=4")];
    for (store, query) in stores {
        let events = scaled(200_000, scale, 1_000);
        cells.push(Cell {
            id: format!("random-{store}"),
            part: "random",
            labels: labels(&[
                ("store", store.into()),
                ("workload", "hatshop-random".into()),
            ]),
            need: need(store, 1, query),
            verb: Verb::Run,
            args: args(&["-w", "hatshop-random", "--events", &events.to_string()]),
            work: events,
            faults: None,
        });
        for full in [500, 5_000, 10_000, 100_000] {
            let events = scaled(full, scale, full / 50);
            cells.push(Cell {
                id: format!("updates-{full}-{store}"),
                part: "updates",
                labels: labels(&[
                    ("store", store.into()),
                    ("workload", "updates".into()),
                    ("events", events.to_string()),
                ]),
                need: need(store, 1, query),
                verb: Verb::Run,
                args: args(&["-w", "updates", "--events", &events.to_string()]),
                work: events,
                faults: None,
            });
        }
        if store == "cassandra" {
            for (schema, table) in [("by-item", "line_items"), ("by-order", "line_items_by_order")] {
                let events = scaled(50_000, scale, 1_000);
                cells.push(Cell {
                    id: format!("schema-{schema}"),
                    part: "schema",
                    labels: labels(&[
                        ("store", store.into()),
                        ("schema", table.into()),
                    ]),
                    need: need(store, 1, &format!("schema={schema}")),
                    verb: Verb::Run,
                    args: args(&["-w", "hatshop-random", "--events", &events.to_string()]),
                    work: events,
                    faults: None,
                });
            }
        }
    }
    let repeats = scaled(5, scale, 1);
    for connections in [1, 2, 4, 8, 16, 30] {
        for repeat in 1..=repeats {
            let events = scaled(50_000, scale, 1_000);
            cells.push(Cell {
                id: format!("connections-{connections}-r{repeat}"),
                part: "connections",
                labels: labels(&[
                    ("store", "mariadb".into()),
                    ("connections", connections.to_string()),
                    ("repeat", repeat.to_string()),
                ]),
                need: need("mariadb", 1, &format!("connections={connections}")),
                verb: Verb::Run,
                args: args(&[
                    "-w",
                    "creates",
                    "--events",
                    &events.to_string(),
                    "--concurrency",
                    "30",
                ]),
                work: events,
                faults: None,
            });
        }
    }
    cells
}

// ---------------------------------------------------------------------------------
// Study 001: clusters.

const AHEAD_OF_DEMAND: Study = Study {
    name: "clusters",
    seed: "Keeping Ahead of the Demand (study 001)",
    title: "Cassandra rings and Galera clusters of 1 to 5 nodes",
    question: "As nodes are added, how do Cassandra (at RF 2, and at RF = nodes) and \
               MariaDB Galera (round robin) answer; what do the replication factor, \
               the consistency level and IF EXISTS cost; how many conflicts does \
               Galera meet; and what does a node killed mid-run do?",
    caveats: &[
        "The study ran each node on its own AWS machine; here every node of a ring \
         shares one 2-core machine, which is the setup the study's own Fig 1 and 2 \
         warn about: nodes compete for the same cores.",
        "MySQL NDB Cluster (the study's Fig 8 to 10) cannot be run here: no package \
         registry serves it.",
    ],
    parts: &[
        PartSpec {
            id: "nodes",
            title: "Cluster size, Cassandra against Galera (Fig 5 and 6)",
            about: "The same stream on 1 to 5 nodes: Cassandra keeping two copies, \
                    Cassandra keeping a copy on every node, and Galera (every node \
                    holds everything; operations go round robin).",
        },
        PartSpec {
            id: "rf",
            title: "Replication factor in a 5-node ring (Fig 3)",
            about: "RF 1 to 5 at consistency ONE.",
        },
        PartSpec {
            id: "cl",
            title: "Consistency level in a 5-node ring at RF 3 (Fig 4)",
            about: "ONE, QUORUM and ALL for reads and writes.",
        },
        PartSpec {
            id: "if-exists",
            title: "update_status with and without IF EXISTS (Fig 5's note)",
            about: "A 5-node ring at RF 2: update_status as a plain write and as a \
                    lightweight transaction.",
        },
        PartSpec {
            id: "conflicts",
            title: "Conflicts in a Galera cluster (Fig 7)",
            about: "Two lanes race on the same orders (--conflicts 0.2) on 2 to 5 \
                    Galera nodes, round robin: the deadlocks and certification \
                    failures are counted.",
        },
        PartSpec {
            id: "node-killed",
            title: "A node killed mid-run",
            about: "A 3-node ring at RF 3 and QUORUM: node 3 is killed a third of the \
                    way in and started again at two thirds; every operation is still \
                    answered, and the ring is verified after.",
        },
    ],
    figures: &[
        FigureSpec {
            part: "nodes",
            title: "Mean create latency by nodes",
            shape: Shape::Lines,
            x: Dim::Label("nodes"),
            series: Dim::Label("store"),
            metric: Metric::Mean,
            events: &["create_order"],
            only: &[],
            seed: &[],
            seed_says: "as more nodes were added the response times of Cassandra \
                        decreased whereas the MariaDB write times increased.",
        },
        FigureSpec {
            part: "nodes",
            title: "Mean read latency by nodes",
            shape: Shape::Lines,
            x: Dim::Label("nodes"),
            series: Dim::Label("store"),
            metric: Metric::Mean,
            events: &["read_order"],
            only: &[],
            seed: &[],
            seed_says: "the MariaDB read times stayed roughly the same; with RF equal \
                        to the nodes, Cassandra's performance remained fairly constant \
                        whilst Galera response times increased with the number of nodes.",
        },
        FigureSpec {
            part: "rf",
            title: "Mean latency by event type and RF (5 nodes)",
            shape: Shape::Bars,
            x: Dim::EventType,
            series: Dim::Label("rf"),
            metric: Metric::Mean,
            events: HAT_SHOP_EVENT_TYPES,
            only: &[],
            seed: &[],
            seed_says: "there was a slight overhead for the higher replication factors.",
        },
        FigureSpec {
            part: "cl",
            title: "Mean latency by event type and consistency level (5 nodes, RF 3)",
            shape: Shape::Bars,
            x: Dim::EventType,
            series: Dim::Label("cl"),
            metric: Metric::Mean,
            events: HAT_SHOP_EVENT_TYPES,
            only: &[],
            seed: &[],
            seed_says: "as expected, higher consistency levels lead to higher latency.",
        },
        FigureSpec {
            part: "if-exists",
            title: "Mean latency of update_status with and without IF EXISTS",
            shape: Shape::Bars,
            x: Dim::EventType,
            series: Dim::Label("update_status"),
            metric: Metric::Mean,
            events: &["update_status", "update_order"],
            only: &[],
            seed: &[],
            seed_says: "the update status was noticeably slower than the similar update \
                        operation, because this query used the IF EXISTS condition.",
        },
        FigureSpec {
            part: "conflicts",
            title: "Conflicts by Galera nodes",
            shape: Shape::Lines,
            x: Dim::Label("nodes"),
            series: Dim::Label("store"),
            metric: Metric::Conflicts,
            events: &[],
            only: &[],
            seed: &[],
            seed_says: "as more nodes were added we saw greater numbers of deadlocks.",
        },
        FigureSpec {
            part: "node-killed",
            title: "p99 and max latency with a node killed",
            shape: Shape::Bars,
            x: Dim::EventType,
            series: Dim::Label("store"),
            metric: Metric::Max,
            events: HAT_SHOP_EVENT_TYPES,
            only: &[],
            seed: &[],
            seed_says: "",
        },
    ],
    cells: clusters_cells,
};

fn clusters_cells(scale: f64) -> Vec<Cell> {
    let events = scaled(50_000, scale, 1_000);
    let events_text = events.to_string();
    let run = |id: String,
               part: &'static str,
               labels: Vec<(String, String)>,
               need: ServerNeed,
               extra: &[&str]| {
        let mut flags = args(&["-w", "hatshop-random", "--events", &events_text]);
        flags.extend(args(extra));
        Cell {
            id,
            part,
            labels,
            need,
            verb: Verb::Run,
            args: flags,
            work: events,
            faults: None,
        }
    };
    let mut cells = Vec::new();
    for nodes in 1..=5usize {
        let n = nodes.to_string();
        let two = nodes.min(2);
        cells.push(run(
            format!("nodes-{nodes}-cassandra-rf2"),
            "nodes",
            labels(&[("store", "cassandra RF 2".into()), ("nodes", n.clone())]),
            need("cassandra", nodes, &format!("rf={two}")),
            &[],
        ));
        if nodes > 2 {
            cells.push(run(
                format!("nodes-{nodes}-cassandra-rf-all"),
                "nodes",
                labels(&[("store", "cassandra RF = nodes".into()), ("nodes", n.clone())]),
                need("cassandra", nodes, &format!("rf={nodes}")),
                &[],
            ));
        }
        if nodes == 3 {
            let seconds = scaled(90, scale, 30);
            let mut killed = run(
                "node-killed-cassandra".into(),
                "node-killed",
                labels(&[("store", "cassandra RF 3, QUORUM".into())]),
                need("cassandra", 3, "rf=3&cl=QUORUM"),
                &["--retries", "3"],
            );
            killed.args = args(&[
                "-w",
                "hatshop-random",
                "--events",
                "100000000",
                "--duration",
                &seconds.to_string(),
                "--retries",
                "3",
            ]);
            killed.faults = Some(node_killed_faults(seconds as f64));
            cells.push(killed);
        }
        if nodes == 5 {
            for rf in 1..=5 {
                cells.push(run(
                    format!("rf-{rf}"),
                    "rf",
                    labels(&[("store", "cassandra".into()), ("rf", format!("RF {rf}"))]),
                    need("cassandra", 5, &format!("rf={rf}&cl=ONE")),
                    &[],
                ));
            }
            for cl in ["ONE", "QUORUM", "ALL"] {
                cells.push(run(
                    format!("cl-{cl}"),
                    "cl",
                    labels(&[("store", "cassandra".into()), ("cl", cl.into())]),
                    need("cassandra", 5, &format!("rf=3&cl={cl}")),
                    &[],
                ));
            }
            for (lwt, label) in [("false", "plain"), ("true", "IF EXISTS")] {
                cells.push(run(
                    format!("if-exists-{lwt}"),
                    "if-exists",
                    labels(&[("store", "cassandra".into()), ("update_status", label.into())]),
                    need("cassandra", 5, &format!("rf=2&lwt={lwt}")),
                    &[],
                ));
            }
        }
    }
    for nodes in 1..=5usize {
        let n = nodes.to_string();
        cells.push(run(
            format!("nodes-{nodes}-galera"),
            "nodes",
            labels(&[("store", "galera".into()), ("nodes", n.clone())]),
            need("galera", nodes, ""),
            &[],
        ));
        if nodes > 1 {
            cells.push(run(
                format!("conflicts-{nodes}-galera"),
                "conflicts",
                labels(&[("store", "galera".into()), ("nodes", n)]),
                need("galera", nodes, ""),
                &["--conflicts", "0.2", "--concurrency", "8"],
            ));
        }
    }
    cells
}

/// The fault timeline of the node-killed cell, a run of `seconds`: a third in, node 3
/// is killed; at two thirds it starts again.
fn node_killed_faults(seconds: f64) -> String {
    format!(
        "[[faults]]\nat = \"{:.0}s\"\naction = \"kill\"\nnode = 3\n\n\
         [[faults]]\nat = \"{:.0}s\"\naction = \"start\"\nnode = 3\n",
        seconds / 3.0,
        seconds * 2.0 / 3.0
    )
}

// ---------------------------------------------------------------------------------
// Study 002: one batch against buckets, client against server time.

const LOOK_INSIDE: Study = Study {
    name: "bulk-insert",
    seed: "Cassandra Write Performance – A quick look inside (study 002)",
    title: "Bulk inserts into Cassandra: client against server time",
    question: "Loading 150,000 rows of three values in buckets of 10,000, ten times, \
               ten seconds apart: how much of a batch's time is the server's own, and \
               how volatile is it?",
    caveats: &[
        "The study watched Cassandra with dynaTrace; here Cassandra's own tracing \
         (system_traces) gives the server's time of the traced batches.",
    ],
    parts: &[PartSpec {
        id: "buckets",
        title: "Buckets of 10,000 rows",
        about: "hatshop load --preset study-002, every batch timed by hatshop and a \
                fifth of them traced on the server.",
    }],
    figures: &[
        FigureSpec {
            part: "buckets",
            title: "Mean batch time, client against server",
            shape: Shape::Bars,
            x: Dim::EventType,
            series: Dim::Label("store"),
            metric: Metric::Mean,
            events: &["client (hatshop)", "server (Cassandra's trace)"],
            only: &[],
            seed: &[],
            seed_says: "client and server response time respectively: this indicates \
                        that we leave a considerable time either on the wire or in the \
                        client.",
        },
        FigureSpec {
            part: "buckets",
            title: "Mean against max batch time",
            shape: Shape::Bars,
            x: Dim::EventType,
            series: Dim::Label("store"),
            metric: Metric::Max,
            events: &["client (hatshop)", "server (Cassandra's trace)"],
            only: &[],
            seed: &[],
            seed_says: "the lower chart compares average and maximum response time on the \
                        Cassandra server, clearly showing a high volatility.",
        },
    ],
    cells: bulk_cells,
};

fn bulk_cells(scale: f64) -> Vec<Cell> {
    let rows = scaled(150_000, scale, 10_000);
    let repeat = scaled(10, scale, 2);
    vec![Cell {
        id: "buckets-cassandra".into(),
        part: "buckets",
        labels: labels(&[
            ("store", "cassandra".into()),
            ("batch", "buckets of 10,000".into()),
        ]),
        need: need("cassandra", 1, ""),
        verb: Verb::Load,
        args: args(&[
            "--preset",
            "study-002",
            "--rows",
            &rows.to_string(),
            "--repeat",
            &repeat.to_string(),
            "--trace-sample",
            "0.2",
        ]),
        work: rows * repeat,
        faults: None,
    }]
}

// ---------------------------------------------------------------------------------
// Study 003: Cassandra's throughput.

const THROUGHPUT: Study = Study {
    name: "cassandra-throughput",
    seed: "Cassandra 2.1: now over 50% faster (study 003)",
    title: "Cassandra's throughput for inserts and point reads",
    question: "How many inserts and point reads a second does one Cassandra node \
               answer under a stress tool's load, and how steady is it?",
    caveats: &[
        "The study ran cassandra-stress against Cassandra 2.0 and 2.1 on a 32-core \
         machine; here Cassandra 5.0 and hatshop share 2 cores, so only the shape \
         (inserts against reads, and the dips) can be set beside the study's.",
    ],
    parts: &[PartSpec {
        id: "race",
        title: "Inserts and point reads, 64 in flight",
        about: "race-cql-insert and race-cql-read, the workloads of the race with \
                latte, at consistency ONE.",
    }],
    figures: &[
        FigureSpec {
            part: "race",
            title: "Throughput by workload",
            shape: Shape::Bars,
            x: Dim::Label("workload"),
            series: Dim::Label("store"),
            metric: Metric::OpsPerSecond,
            events: &[],
            only: &[],
            seed: &[SeedValue {
                x: "race-cql-insert",
                series: "cassandra",
                value: 180_000.0,
            }],
            seed_says: "writes are mostly cruising along at over 190k ops/s, but \
                        frequently dip as low as 120, so the average only works out to \
                        about 180 (Cassandra 2.1, 32 cores).",
        },
        FigureSpec {
            part: "race",
            title: "p99 latency by workload",
            shape: Shape::Bars,
            x: Dim::Label("workload"),
            series: Dim::Label("store"),
            metric: Metric::P99,
            events: &[],
            only: &[],
            seed: &[],
            seed_says: "",
        },
    ],
    cells: throughput_cells,
};

fn throughput_cells(scale: f64) -> Vec<Cell> {
    ["race-cql-insert", "race-cql-read"]
        .into_iter()
        .map(|workload| {
            let events = scaled(300_000, scale, 6_000);
            let mut flags = args(&["-w", workload, "--events", &events.to_string()]);
            if workload == "race-cql-read" {
                flags.extend(args(&["--records", &events.to_string()]));
            }
            Cell {
                id: workload.into(),
                part: "race",
                labels: labels(&[("store", "cassandra".into()), ("workload", workload.into())]),
                need: need("cassandra", 1, "cl=ONE"),
                verb: Verb::Run,
                args: flags,
                work: events * 2,
                faults: None,
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------
// Study 004: key-value mixes × value sizes, Cassandra against Voldemort.

const MIXES: [(&str, &str); 4] = [
    ("kv-50w-50r", "50 % write / 50 % read"),
    ("kv-10w-40rw-50r", "10 % write / 40 % rewrite / 50 % read"),
    ("kv-50rw-50r", "50 % rewrite / 50 % read"),
    ("kv-90rw-10r", "90 % rewrite / 10 % read"),
];

const FIFTEEN_KB: &[(&str, &str)] = &[("value size", "15 KB")];
const ONE_AND_A_HALF_KB: &[(&str, &str)] = &[("value size", "1.5 KB")];

const fn mix_figure(
    title: &'static str,
    metric: Metric,
    events: &'static [&'static str],
    only: &'static [(&'static str, &'static str)],
) -> FigureSpec {
    FigureSpec {
        part: "mixes",
        title,
        shape: Shape::Bars,
        x: Dim::Label("mix"),
        series: Dim::Label("store"),
        metric,
        events,
        only,
        seed: &[],
        seed_says: "",
    }
}

const KV_MIXES: Study = Study {
    name: "kv-mixes",
    seed: "Choosing a key-value storage system (Cassandra vs. Voldemort) (study 004)",
    title: "Cassandra against Voldemort: key-value mixes × value sizes",
    question: "For four mixes of writes, rewrites and reads at 1.5 KB and 15 KB values, \
               which store has the lower tail latency (p99 to p99.99) and the higher \
               throughput?",
    caveats: &[
        "The study had 5 million records, 500,000 operations per test and three \
         servers; here both 3-node clusters (Cassandra at RF 3 and QUORUM, Voldemort \
         at N=3 R=2 W=2) share one 2-core machine, with 50,000 records and 100,000 \
         operations per cell at scale 1.",
    ],
    parts: &[PartSpec {
        id: "mixes",
        title: "Four mixes at two value sizes, 40 in flight",
        about: "Each mix on both stores, 20,000 warm-up operations first, as the \
                study's 40 client threads.",
    }],
    figures: &[
        mix_figure("p99 read latency by mix, 15 KB values", Metric::P99, &["read"], FIFTEEN_KB),
        mix_figure(
            "p99 write and rewrite latency by mix, 15 KB values (mean of the two where a mix has both)",
            Metric::P99,
            &["write", "rewrite"],
            FIFTEEN_KB,
        ),
        mix_figure("Throughput by mix, 15 KB values", Metric::OpsPerSecond, &[], FIFTEEN_KB),
        mix_figure("p99 read latency by mix, 1.5 KB values", Metric::P99, &["read"], ONE_AND_A_HALF_KB),
        mix_figure(
            "p99 write and rewrite latency by mix, 1.5 KB values (mean of the two where a mix has both)",
            Metric::P99,
            &["write", "rewrite"],
            ONE_AND_A_HALF_KB,
        ),
        mix_figure("Throughput by mix, 1.5 KB values", Metric::OpsPerSecond, &[], ONE_AND_A_HALF_KB),
        FigureSpec {
            part: "mixes",
            title: "p99.9 read latency, 90 % rewrite / 10 % read, 15 KB values",
            shape: Shape::Bars,
            x: Dim::Label("mix"),
            series: Dim::Label("store"),
            metric: Metric::P999,
            events: &["read"],
            only: &[("value size", "15 KB"), ("mix", "90 % rewrite / 10 % read")],
            seed: &[
                SeedValue {
                    x: "90 % rewrite / 10 % read",
                    series: "cassandra",
                    value: 5_050_000.0,
                },
                SeedValue {
                    x: "90 % rewrite / 10 % read",
                    series: "voldemort",
                    value: 748_000.0,
                },
            ],
            seed_says: "5050 ms for Cassandra and 748 ms for Voldemort at p99.9 … this \
                        huge difference was a key decision factor for us.",
        },
        FigureSpec {
            part: "mixes",
            title: "p99.99 read latency, 90 % rewrite / 10 % read, 15 KB values",
            shape: Shape::Bars,
            x: Dim::Label("mix"),
            series: Dim::Label("store"),
            metric: Metric::P9999,
            events: &["read"],
            only: &[("value size", "15 KB"), ("mix", "90 % rewrite / 10 % read")],
            seed: &[
                SeedValue {
                    x: "90 % rewrite / 10 % read",
                    series: "cassandra",
                    value: 9_176_000.0,
                },
                SeedValue {
                    x: "90 % rewrite / 10 % read",
                    series: "voldemort",
                    value: 1_129_000.0,
                },
            ],
            seed_says: "9176 ms against 1129 ms at p99.99.",
        },
    ],
    cells: kv_cells,
};

fn kv_cells(scale: f64) -> Vec<Cell> {
    let records = scaled(50_000, scale, 1_000).to_string();
    let events = scaled(100_000, scale, 2_000);
    let warmup = scaled(20_000, scale, 400).to_string();
    let mut cells = Vec::new();
    for (store, server, query) in [
        ("voldemort", "voldemort", ""),
        ("cassandra", "cassandra", "rf=3&cl=QUORUM"),
    ] {
        for (size, size_label) in [("15000", "15 KB"), ("1500", "1.5 KB")] {
            for (mix, words) in MIXES {
                cells.push(Cell {
                    id: format!("{mix}-{size}-{store}"),
                    part: "mixes",
                    labels: labels(&[
                        ("store", store.into()),
                        ("mix", words.into()),
                        ("value size", size_label.into()),
                    ]),
                    need: need(server, 3, query),
                    verb: Verb::Run,
                    args: args(&[
                        "-w",
                        mix,
                        "--value-size",
                        size,
                        "--records",
                        &records,
                        "--warmup",
                        &warmup,
                        "--events",
                        &events.to_string(),
                        "--concurrency",
                        "40",
                    ]),
                    work: events,
                    faults: None,
                });
            }
        }
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    #[test]
    fn every_cell_of_every_study_is_a_command_hatshop_takes() {
        for study in STUDIES {
            let cells = (study.cells)(0.05);
            assert!(!cells.is_empty(), "{}", study.name);
            let mut ids: Vec<&str> = cells.iter().map(|c| c.id.as_str()).collect();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), cells.len(), "{}: cell ids are unique", study.name);
            for cell in &cells {
                let argv = cell.argv("sqlite://", std::path::Path::new("x"), std::path::Path::new("h"));
                Cli::try_parse_from(&argv)
                    .unwrap_or_else(|e| panic!("{}: {}: {e}", study.name, cell.id));
                assert!(
                    study.parts.iter().any(|p| p.id == cell.part),
                    "{}: {} has no part",
                    study.name,
                    cell.id
                );
            }
            for figure in study.figures {
                assert!(study.parts.iter().any(|p| p.id == figure.part));
            }
        }
    }

    #[test]
    fn a_smaller_scale_makes_smaller_cells() {
        for study in STUDIES {
            let full: u64 = (study.cells)(1.0).iter().map(|c| c.work).sum();
            let small: u64 = (study.cells)(0.05).iter().map(|c| c.work).sum();
            assert!(small < full, "{}", study.name);
        }
    }
}
