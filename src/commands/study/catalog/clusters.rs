//! Study 001, "Keeping Ahead of the Demand": Cassandra rings and Galera clusters of 1
//! to 5 nodes; RF, CL and IF EXISTS in a 5-node ring; Galera's conflicts; a node killed
//! mid-run.

use super::super::cells::{Cell, ServerNeed, scaled};
use super::{CASSANDRA, GALERA, ORDER_EVENT_TYPES, Study, labels, need};
use crate::report::study::{Dim, FigureSpec, Metric, PartSpec, Shape};

pub(super) const STUDY: Study = Study {
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
            events: ORDER_EVENT_TYPES,
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
            events: ORDER_EVENT_TYPES,
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
            title: "Throughput over time, node 3 killed a third of the way in",
            shape: Shape::OverTime,
            x: Dim::EventType,
            series: Dim::Label("store"),
            metric: Metric::OpsPerSecond,
            events: &[],
            only: &[],
            seed: &[],
            seed_says: "",
        },
        FigureSpec {
            part: "node-killed",
            title: "Max latency by event type with a node killed",
            shape: Shape::Bars,
            x: Dim::EventType,
            series: Dim::Label("store"),
            metric: Metric::Max,
            events: ORDER_EVENT_TYPES,
            only: &[],
            seed: &[],
            seed_says: "",
        },
    ],
    cells: clusters_cells,
};

/// Every cell, a part at a time; the study groups them by the server they need.
fn clusters_cells(scale: f64) -> Vec<Cell> {
    let events = scaled(50_000, scale, 1_000);
    let mut cells = cassandra_by_nodes(events);
    cells.push(node_killed(scale));
    cells.extend(five_node_ring(events));
    cells.extend(galera_by_nodes(events));
    cells
}

/// A cell of `events` random order events, with `extra` flags.
fn random(
    events: u64,
    id: String,
    part: &'static str,
    labels: Vec<(String, String)>,
    need: ServerNeed,
    extra: &[&str],
) -> Cell {
    Cell::run(id, part, labels, need, "hatshop-random", events, extra)
}

/// Fig 5 and 6: rings of 1 to 5 nodes keeping two copies, and from 3 nodes up a copy
/// on every node.
fn cassandra_by_nodes(events: u64) -> Vec<Cell> {
    let mut cells = Vec::new();
    for nodes in 1..=5usize {
        let n = nodes.to_string();
        cells.push(random(
            events,
            format!("nodes-{nodes}-cassandra-rf2"),
            "nodes",
            labels(&[("store", "Cassandra RF 2".into()), ("nodes", n.clone())]),
            need(CASSANDRA, nodes, &format!("rf={}", nodes.min(2))),
            &[],
        ));
        if nodes > 2 {
            cells.push(random(
                events,
                format!("nodes-{nodes}-cassandra-rf-all"),
                "nodes",
                labels(&[("store", "Cassandra RF = nodes".into()), ("nodes", n)]),
                need(CASSANDRA, nodes, &format!("rf={nodes}")),
                &[],
            ));
        }
    }
    cells
}

/// A 3-node ring at QUORUM run for a time, node 3 killed a third of the way in.
fn node_killed(scale: f64) -> Cell {
    let seconds = scaled(90, scale, 30);
    let mut cell = random(
        // Events enough never to end before the deadline.
        100_000_000,
        "node-killed-cassandra".into(),
        "node-killed",
        labels(&[("store", "Cassandra RF 3, QUORUM".into())]),
        need(CASSANDRA, 3, "rf=3&cl=QUORUM"),
        &["--duration", &seconds.to_string(), "--retries", "3"],
    );
    // What the time-left estimate weighs: about what the other cells run in that time.
    cell.work = seconds * 1_000;
    cell.faults = Some(node_killed_faults(seconds as f64));
    cell
}

/// Fig 3, Fig 4 and IF EXISTS, each in a 5-node ring.
fn five_node_ring(events: u64) -> Vec<Cell> {
    let cassandra = |id: String, part, label: (&str, String), query: String| {
        random(
            events,
            id,
            part,
            labels(&[("store", "Cassandra".into()), label]),
            need(CASSANDRA, 5, &query),
            &[],
        )
    };
    let mut cells = Vec::new();
    for rf in 1..=5 {
        cells.push(cassandra(
            format!("rf-{rf}"),
            "rf",
            ("rf", format!("RF {rf}")),
            format!("rf={rf}&cl=ONE"),
        ));
    }
    for cl in ["ONE", "QUORUM", "ALL"] {
        cells.push(cassandra(
            format!("cl-{cl}"),
            "cl",
            ("cl", format!("CL {cl}")),
            format!("rf=3&cl={cl}"),
        ));
    }
    for (lwt, label) in [("false", "plain update"), ("true", "IF EXISTS")] {
        cells.push(cassandra(
            format!("if-exists-{lwt}"),
            "if-exists",
            ("update_status", label.into()),
            format!("rf=2&lwt={lwt}"),
        ));
    }
    cells
}

/// Galera of 1 to 5 nodes (Fig 5 and 6), and from 2 nodes up with lanes racing on the
/// same orders (Fig 7).
fn galera_by_nodes(events: u64) -> Vec<Cell> {
    let mut cells = Vec::new();
    for nodes in 1..=5usize {
        let n = nodes.to_string();
        cells.push(random(
            events,
            format!("nodes-{nodes}-galera"),
            "nodes",
            labels(&[("store", "Galera".into()), ("nodes", n.clone())]),
            need(GALERA, nodes, ""),
            &[],
        ));
        if nodes > 1 {
            cells.push(random(
                events,
                format!("conflicts-{nodes}-galera"),
                "conflicts",
                labels(&[("store", "Galera".into()), ("nodes", n)]),
                need(GALERA, nodes, ""),
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
