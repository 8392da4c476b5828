//! Study 001, "Keeping Ahead of the Demand": Cassandra rings and Galera clusters of 1
//! to 5 nodes. The study first ran every node on one PC, found every added node slowed
//! everything (its Fig 1 and 2: the nodes "end up competing for the same limited
//! hardware resources of the host"), and moved to a machine per node for Fig 3 to 7.
//! Here Fig 1 and 2 stay on one machine's shared cores, as the study's did; Fig 3 to 7
//! give each node a fixed CPU budget, cores it cannot exceed as on a machine of its own (or
//! run on the user's own machines, `--server-url`).

use super::cells::{Cell, ServerNeed, scaled};
use super::{CASSANDRA, GALERA, Study, fact, labels, need, row};
use crate::cluster::NodeBudget;
use crate::report::study::{Dim, FIGURE, Fact, FigureSpec, Metric, Ours, PartSpec, Premise, Shape};

/// In flight, as the study's client: the hat shop's pool of threads.
const IN_FLIGHT: &str = "4";
/// With updates dealt to any of the 4 lanes (a thread pool keeps no order on one
/// thread): two lanes may write one order at once, as the study's client did, which is
/// where its Galera deadlocks came from.
const ANY_LANE: &str = "0.75";

/// Rings the study ran, 1 to 5 nodes.
const MOST_NODES: usize = 5;

/// Each node's share of the host's CPU: what a machine of its own would be, as far as
/// the host's cores allow five of them beside the client (half a core kept for it and
/// the system), at most the one vCPU each of the study's machines had.
pub(super) fn cpu_per_node() -> f64 {
    let cores = crate::procfs::cores() as f64;
    let share = ((cores - 0.5) / MOST_NODES as f64).clamp(0.1, 1.0);
    (share * 20.0).floor() / 20.0
}

// hatshop's default consistency level, which these cells run at: the study named
// none (its driver's default was ONE), so the labels say it.
const CASSANDRA_RF2: &str = "Cassandra, 2 copies (1 on one node), CL QUORUM";
const CASSANDRA_RF_ALL: &str = "Cassandra, a copy on every node, CL QUORUM";
const GALERA_RR: &str = "Galera, round robin";

const FIG5: &[(&str, &str)] = &[(
    "store",
    "Cassandra, 2 copies (1 on one node), CL QUORUM|Galera, round robin",
)];
const FIG6: &[(&str, &str)] = &[(
    "store",
    "Cassandra, a copy on every node, CL QUORUM|Galera, round robin",
)];

/// A figure of mean latency by nodes for one event type.
const fn by_nodes(
    part: &'static str,
    title: &'static str,
    event: &'static [&'static str],
    only: &'static [(&'static str, &'static str)],
    seed_says: &'static str,
) -> FigureSpec {
    FigureSpec {
        part,
        title,
        shape: Shape::Lines,
        x: Dim::Label("nodes"),
        events: event,
        only,
        seed_says,
        premises: &[Premise::NodesAddCapacity],
        ..FIGURE
    }
}

pub(super) const STUDY: Study = Study {
    name: "clusters",
    seed: "Keeping Ahead of the Demand (study 001)",
    title: "Cassandra rings and Galera clusters of 1 to 5 nodes",
    question: "As nodes are added, how do Cassandra (at RF 2, and at RF = nodes) and \
               MariaDB Galera (round robin) answer; what do the replication factor, \
               the consistency level and IF EXISTS cost; how many conflicts does \
               Galera meet?",
    seed_machine: "AWS EC2 free-tier machines, 1 vCPU each",
    seed_cores: None,
    caveats: &[
        "Fig 1 and 2 put every node on this machine's shared cores, as the study's own \
         first try did; Fig 3 to 7 cap each node at a fixed share of the host's CPU (the \
         kernel's CPU quota), so that a node cannot borrow its neighbours' cores, as on \
         a machine of its own. Whether an added node then adds capacity is checked from \
         the cells, not assumed: a Cassandra node at a third of a core spends much of it \
         on work that does not serve operations (its JIT compiler, still compiling \
         minutes after start, and request workers that wait by spinning), so a ring of \
         them can lose capacity as it grows where the study's nodes, a vCPU each, did \
         not. The figures' premises say which held.",
        "A node at its budget is held back by the kernel once it has spent its share of \
         each 10 ms: where the throughput by nodes grows, an added node added capacity. A \
         request still crosses its coordinator and its replicas (and a logged batch the \
         batch log's nodes), each held to its own budget, so a ring's latency can rise \
         with its nodes even where its throughput does too; a ring whose throughput stays \
         flat is saturated at its budget, and its mean latency then measures the queue.",
        "Every cell runs 4 operations in flight with updates dealt to any lane, as the \
         study's client ran the hat shop's events on a pool of threads: two writes of \
         one order can meet, which is where Galera's deadlocks (Fig 7) come from.",
        "MySQL NDB Cluster (the study's Fig 8 to 10) cannot be run here: no package \
         registry serves it, and building it from source takes hours on 2 cores.",
    ],
    setup: &[
        row(
            "server machines",
            "a machine per node: AWS EC2 free tier, 1 vCPU and 1 GB each (Fig 1 \
                   and 2: Docker containers on one development PC)",
            Ours::Fact(Fact::Machines),
            "one host here: each node is capped at its share of the cores, which \
                  it cannot exceed as on a machine of its own, but a small share (Fig 1 \
                  and 2 uncapped, as the study's first try)",
        ),
        row(
            "client machine",
            "a separate VM in the same subnet",
            Ours::Fact(Fact::Machine),
            "the same host; the client runs outside the nodes' budgets",
        ),
        row(
            "CPU per node",
            "1 vCPU",
            Ours::Fact(Fact::ServerSetting("cpu_per_node")),
            "five nodes of one core would need five; the share fits five beside \
                  the client",
        ),
        fact(
            "versions",
            "Cassandra and MariaDB with Galera as of 2017 (not named)",
            Fact::ServerVersion,
        ),
        fact("nodes", "1 to 5", Fact::Nodes),
        fact(
            "replication factor",
            "SimpleStrategy; RF 2 (Fig 5), RF = nodes (Fig 6), 1 to 5 (Fig 3), \
                   3 (Fig 4)",
            Fact::StoreSetting("rf"),
        ),
        row(
            "consistency level",
            "ONE, TWO, THREE, QUORUM, ALL (ANY for writes)",
            Ours::Fact(Fact::StoreSetting("cl")),
            "ANY is not run: it is not a read's level, and every cell reads",
        ),
        fact(
            "heap per node",
            "not given (1 GB machines)",
            Fact::ServerSetting("heap"),
        ),
        fact(
            "in flight",
            "the hat shop's client, a pool of threads",
            Fact::Concurrency,
        ),
        fact("events per cell", "not given", Fact::Events),
        row(
            "warm-up",
            "not given",
            Ours::Text(
                "20 s of the first cell's load on each fresh Cassandra ring and Galera \
                 cluster before its first cell, at every scale",
            ),
            "a cold server answers slower than it will",
        ),
    ],
    parts: &[
        PartSpec {
            id: "colocated",
            title: "Nodes sharing one machine's cores (Fig 1 and 2)",
            about: "Cassandra rings of 1 to 5 nodes, every node on this machine's \
                    shared cores with no budget: the setup the study tried first and \
                    found unrealistic.",
            addition: false,
        },
        PartSpec {
            id: "nodes",
            title: "Cluster size, Cassandra against Galera (Fig 5, 6 and 7)",
            about: "The same stream on 1 to 5 nodes, each node capped at its CPU \
                    budget: Cassandra keeping two copies, Cassandra keeping a copy on \
                    every node, and Galera (every node holds everything; operations go \
                    round robin).",
            addition: false,
        },
        PartSpec {
            id: "rf",
            title: "Replication factor in a 5-node ring (Fig 3)",
            about: "RF 1 to 5 at consistency ONE, each node at its CPU budget.",
            addition: false,
        },
        PartSpec {
            id: "cl",
            title: "Consistency level in a 5-node ring at RF 3 (Fig 4)",
            about: "ONE, TWO, THREE, QUORUM and ALL for reads and writes, each node at \
                    its CPU budget.",
            addition: false,
        },
        PartSpec {
            id: "if-exists",
            title: "update_status with and without IF EXISTS (Fig 5's note)",
            about: "A 5-node ring at RF 2: update_status as a plain write and as a \
                    lightweight transaction.",
            addition: false,
        },
        PartSpec {
            id: "node-killed",
            title: "A node killed mid-run",
            about: "A 3-node ring at RF 3 and QUORUM: node 3 is killed a third of the \
                    way in and started again at two thirds; every operation is still \
                    answered, and the ring is verified after.",
            addition: true,
        },
    ],
    figures: &[
        by_nodes(
            "colocated",
            "Fig 1: mean create latency by nodes, all on one machine's cores",
            &["create_order"],
            &[],
            "Fig 1 shows a slow down in write response times as the number of nodes \
             was increased … as more nodes are added the more they end up competing \
             for the same limited hardware resources of the host.",
        ),
        by_nodes(
            "colocated",
            "Fig 2: mean read latency by nodes, all on one machine's cores",
            &["read_order"],
            &[],
            "Fig 2 shows a drastic slow down in read response times.",
        ),
        FigureSpec {
            seed_max: Some(15_000.0),
            ..by_nodes(
                "nodes",
                "Fig 5: mean create latency by nodes, each node at its CPU budget",
                &["create_order"],
                FIG5,
                "as more nodes were added the response times of Cassandra decreased \
                 whereas the MariaDB write times increased.",
            )
        },
        FigureSpec {
            seed_max: Some(15_000.0),
            ..by_nodes(
                "nodes",
                "Fig 5: mean read latency by nodes, each node at its CPU budget",
                &["read_order"],
                FIG5,
                "the MariaDB read times stayed roughly the same as they were \
                 effectively still returning the data off the node which received the \
                 request.",
            )
        },
        FigureSpec {
            seed_max: Some(15_000.0),
            ..by_nodes(
                "nodes",
                "Fig 5: mean update latency by nodes, each node at its CPU budget",
                &["update_order"],
                FIG5,
                "",
            )
        },
        FigureSpec {
            seed_max: Some(15_000.0),
            ..by_nodes(
                "nodes",
                "Fig 5: mean update_status latency by nodes, each node at its CPU budget",
                &["update_status"],
                FIG5,
                "for Cassandra the update status was noticeably slower than the similar \
                 update operation (it used IF EXISTS); even the slowest data point was \
                 less than 15ms.",
            )
        },
        by_nodes(
            "nodes",
            "Fig 6: mean create latency by nodes, Cassandra keeping a copy on every node",
            &["create_order"],
            FIG6,
            "with this configuration the performance difference was less striking, \
             though Cassandra still scaled better. Cassandra's performance remained \
             fairly constant whilst Galera response times increased with the number of \
             nodes.",
        ),
        by_nodes(
            "nodes",
            "Fig 6: mean read latency by nodes, Cassandra keeping a copy on every node",
            &["read_order"],
            FIG6,
            "",
        ),
        FigureSpec {
            part: "nodes",
            title: "Throughput by nodes, each node at its CPU budget (Fig 5 and 6's runs)",
            shape: Shape::Lines,
            x: Dim::Label("nodes"),
            metric: Metric::OpsPerSecond,
            premises: &[Premise::NodesAddCapacity],
            ..FIGURE
        },
        FigureSpec {
            part: "nodes",
            title: "Fig 7: deadlocks and certification failures by Galera nodes",
            shape: Shape::Lines,
            x: Dim::Label("nodes"),
            metric: Metric::Conflicts,
            only: &[("store", GALERA_RR)],
            seed_says: "as more nodes were added we saw greater numbers of deadlocks \
                        where two nodes tried to edit the same data at the same time.",
            ..FIGURE
        },
        // Fig 7's other side: where Galera reports a conflict, a last-write-wins ring
        // loses one write silently; verify counts them.
        FigureSpec {
            part: "nodes",
            title: "Writes lost without an error by nodes: lost updates and deleted orders \
                    written back, as verify found them (beside Fig 7)",
            shape: Shape::Lines,
            x: Dim::Label("nodes"),
            metric: Metric::LostSilently,
            ..FIGURE
        },
        FigureSpec {
            part: "rf",
            title: "Fig 3: mean latency by event type and RF (5 nodes, CL ONE)",
            series: Dim::Label("rf"),
            events: super::ORDER_EVENT_TYPES,
            seed_says: "there was a slight overhead for the higher replication factors.",
            ..FIGURE
        },
        FigureSpec {
            part: "cl",
            title: "Fig 4: mean latency by event type and consistency level (5 nodes, RF 3)",
            series: Dim::Label("cl"),
            events: super::ORDER_EVENT_TYPES,
            seed_says: "as expected, higher consistency levels lead to higher latency.",
            // At RF 3 a quorum is two replicas.
            alike: &[&["CL TWO", "CL QUORUM"]],
            ..FIGURE
        },
        FigureSpec {
            part: "if-exists",
            title: "Mean latency of update_status with and without IF EXISTS (5 nodes, RF 2, \
                    CL QUORUM)",
            series: Dim::Label("update_status"),
            events: &["update_status", "update_order"],
            seed_says: "the update status was noticeably slower than the similar update \
                        operation, because this query used the IF EXISTS condition.",
            ..FIGURE
        },
        FigureSpec {
            part: "node-killed",
            title: "Throughput over time, node 3 killed a third of the way in",
            shape: Shape::OverTime,
            metric: Metric::OpsPerSecond,
            ..FIGURE
        },
        FigureSpec {
            part: "node-killed",
            title: "Max latency by event type with a node killed",
            metric: Metric::Max,
            events: super::ORDER_EVENT_TYPES,
            ..FIGURE
        },
    ],
    cells: clusters_cells,
};

/// Every cell, a part at a time; the study groups them by the server they need, and
/// gives each cell's nodes their budget before it runs.
fn clusters_cells(scale: f64) -> Vec<Cell> {
    let events = scaled(50_000, scale, 1_000);
    let budget = Some(cpu_per_node());
    let mut cells = cassandra_by_nodes(events, budget);
    cells.push(node_killed(scale, budget));
    cells.extend(five_node_ring(events, budget));
    cells.extend(galera_by_nodes(events, budget));
    cells
}

/// A cell of `events` random order events at 4 in flight, updates dealt to any lane.
fn random(
    events: u64,
    id: String,
    part: &'static str,
    labels: Vec<(String, String)>,
    need: ServerNeed,
    extra: &[&str],
) -> Cell {
    let mut flags = vec!["--concurrency", IN_FLIGHT, "--conflicts", ANY_LANE];
    flags.extend_from_slice(extra);
    Cell::run(id, part, labels, need, "hatshop-random", events, &flags)
}

/// `need` with each node at `budget` cores.
fn budgeted(need: ServerNeed, budget: Option<f64>) -> ServerNeed {
    ServerNeed {
        budget: NodeBudget {
            cores: budget,
            memory: None,
        },
        ..need
    }
}

/// Fig 1 and 2 (rings sharing the host's cores) and Fig 5 and 6 (each node at its
/// budget): rings of 1 to 5 nodes keeping two copies, and keeping a copy on every node.
fn cassandra_by_nodes(events: u64, budget: Option<f64>) -> Vec<Cell> {
    let mut cells = Vec::new();
    for nodes in 1..=MOST_NODES {
        let n = nodes.to_string();
        let two = format!("rf={}", nodes.min(2));
        cells.push(random(
            events,
            format!("colocated-{nodes}-cassandra"),
            "colocated",
            labels(&[("store", CASSANDRA_RF2.into()), ("nodes", n.clone())]),
            need(CASSANDRA, nodes, &two),
            &[],
        ));
        cells.push(random(
            events,
            format!("nodes-{nodes}-cassandra-rf2"),
            "nodes",
            labels(&[("store", CASSANDRA_RF2.into()), ("nodes", n.clone())]),
            budgeted(need(CASSANDRA, nodes, &two), budget),
            &[],
        ));
        cells.push(random(
            events,
            format!("nodes-{nodes}-cassandra-rf-all"),
            "nodes",
            labels(&[("store", CASSANDRA_RF_ALL.into()), ("nodes", n)]),
            budgeted(need(CASSANDRA, nodes, &format!("rf={nodes}")), budget),
            &[],
        ));
    }
    cells
}

/// A 3-node ring at QUORUM run for a time, node 3 killed a third of the way in.
fn node_killed(scale: f64, budget: Option<f64>) -> Cell {
    let seconds = scaled(90, scale, 30);
    let mut cell = random(
        // Events enough never to end before the deadline.
        100_000_000,
        "node-killed-cassandra".into(),
        "node-killed",
        labels(&[("store", "Cassandra RF 3, QUORUM".into())]),
        budgeted(need(CASSANDRA, 3, "rf=3&cl=QUORUM"), budget),
        &["--duration", &seconds.to_string(), "--retries", "3"],
    )
    .without_floor();
    // What the time-left estimate weighs: about what the other cells run in that time.
    cell.work = seconds * 300;
    cell.faults = Some(node_killed_faults(seconds as f64));
    cell
}

/// Fig 3, Fig 4 and IF EXISTS, each in a 5-node ring at its budget.
fn five_node_ring(events: u64, budget: Option<f64>) -> Vec<Cell> {
    let cassandra = |id: String, part, label: (&str, String), query: String| {
        random(
            events,
            id,
            part,
            labels(&[("store", "Cassandra".into()), label]),
            budgeted(need(CASSANDRA, MOST_NODES, &query), budget),
            &[],
        )
    };
    let mut cells = Vec::new();
    for rf in 1..=MOST_NODES {
        cells.push(cassandra(
            format!("rf-{rf}"),
            "rf",
            ("rf", format!("RF {rf}")),
            format!("rf={rf}&cl=ONE"),
        ));
    }
    for cl in ["ONE", "TWO", "THREE", "QUORUM", "ALL"] {
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

/// Galera of 1 to 5 nodes at their budget, round robin (Fig 5, 6 and 7).
fn galera_by_nodes(events: u64, budget: Option<f64>) -> Vec<Cell> {
    (1..=MOST_NODES)
        .map(|nodes| {
            random(
                events,
                format!("nodes-{nodes}-galera"),
                "nodes",
                labels(&[("store", GALERA_RR.into()), ("nodes", nodes.to_string())]),
                budgeted(need(GALERA, nodes, ""), budget),
                &[],
            )
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_budgets_fit_beside_the_client_and_the_shared_cells_have_none() {
        let share = cpu_per_node();
        assert!(share * MOST_NODES as f64 <= crate::procfs::cores() as f64);
        let cells = clusters_cells(0.05);
        for cell in &cells {
            assert_eq!(
                cell.need.budget.cores.is_none(),
                cell.part == "colocated",
                "{}",
                cell.id
            );
        }
    }
}
