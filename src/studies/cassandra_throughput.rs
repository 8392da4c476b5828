//! Study 003, "Cassandra 2.1: now over 50% faster": the study compared 2.1 with 2.0
//! and with Thrift, and found 2.1's writes bottlenecked on the commit log disk (durable
//! writes off confirmed it). Neither 2.0 nor Thrift runs here; what the study changed
//! and can still be changed runs as an A/B on the same work: durable writes on and
//! off, and 2.1's response grouping in the CQL dispatcher, which Cassandra 5.0 keeps
//! as `native_transport_flush_in_batches_legacy`.

use super::cells::{Cell, ServerNeed, scaled};
use super::{CASSANDRA, Study, fact, labels, need, row};
use crate::report::study::{
    Dim, FIGURE, Fact, FigureSpec, Metric, Ours, PartSpec, SeedValue, Shape,
};

const INSERT: &str = "race-cql-insert";
const READ: &str = "race-cql-read";

/// How the A/Bs' two sides are named in legends and cell names.
const DURABLE: &str = "durable writes on";
const NOT_DURABLE: &str = "durable writes off";
const GROUPED_WORDS: &str = "responses grouped (2.1)";
const UNGROUPED: &str = "responses as 5.0 flushes them";

/// The server setting that turns the 2.1-style grouped flushing of responses back on.
const GROUPED: &[(&str, &str)] = &[("native_transport_flush_in_batches_legacy", "true")];

pub(super) const STUDY: Study = Study {
    name: "cassandra-throughput",
    seed: "Cassandra 2.1: now over 50% faster (study 003)",
    title: "Cassandra's throughput: what the study changed, on the same work",
    question: "2.1 against 2.0 and Thrift: reads +75 % and +160 %, writes +95 % and \
               +150 % on a 32-core machine (only +50 % and +60 % on 8 cores); writes \
               dipped because they were bottlenecked on the commit log disk, which \
               durable writes off confirmed. What do the changes that can still be made \
               do to inserts and point reads here?",
    seed_machine: "a 32-core EC2 VM",
    seed_cores: Some(32),
    caveats: &[
        "2.1 against 2.0 and against Thrift cannot run here: Cassandra 2.0 and 3.x need \
         Java 8, and no registry this machine reaches serves a JDK older than 17; Thrift \
         was removed in Cassandra 4.0.",
        "What 2.1 changed is in Cassandra 5.0 by default. Its response grouping in the \
         CQL dispatcher (flushing responses in batches, like Nagle's algorithm) is \
         still a setting, native_transport_flush_in_batches_legacy, run here on and \
         off. Its SharedExecutorPool runs every stage of 5.0 and cannot be turned off, \
         so it is not compared.",
        "The study's throughput came from a 32-core VM; here Cassandra and hatshop \
         share the host's cores. The table below sets them per core beside each other; \
         the A/B ratios compare like with like.",
        "Every cell ran three times. Durable writes on and off took turns on one \
         server start, so that a server still settling weighs on both sides alike; \
         response grouping is set when Cassandra starts, so its three rounds ran on a \
         start of their own, after the others.",
    ],
    setup: &[
        fact(
            "machine",
            "a 32-core EC2 VM (and 8-core machines with 6 SATA disks); the \
                   stress tool beside Cassandra",
            Fact::Machine,
        ),
        row(
            "versions",
            "Cassandra 2.0 and 2.1, CQL and Thrift",
            Ours::Fact(Fact::ServerVersion),
            "2.0, 3.x (Java 8) and Thrift (removed in 4.0) cannot run here",
        ),
        row(
            "client",
            "cassandra-stress",
            Ours::Text("hatshop, its race workloads (as latte's)"),
            "",
        ),
        fact("in flight", "not given", Fact::Concurrency),
        fact(
            "durable writes",
            "on; off to confirm the commit log bottleneck",
            Fact::StoreSetting("durable_writes"),
        ),
        fact("heap", "not given", Fact::ServerSetting("heap")),
        fact("operations", "not given", Fact::Events),
        row(
            "warm-up",
            "not given",
            Ours::Text(
                "20 s of load on a fresh Cassandra, then 5 s before each cell, at every \
                 scale",
            ),
            "a stress tool measures a warm server",
        ),
    ],
    parts: &[
        PartSpec {
            id: "race",
            title: "Inserts and point reads, 64 in flight",
            about: "race-cql-insert and race-cql-read, the workloads of the race with \
                    latte, at consistency ONE, durable writes on: the baseline of the \
                    A/Bs below.",
            addition: false,
        },
        PartSpec {
            id: "durable",
            title: "Durable writes on against off (the study's commit log finding)",
            about: "The same inserts into a keyspace with durable_writes = false: \
                    writes skip the commit log. The study turned durable writes off to \
                    confirm that its writes waited on the commit log disk.",
            addition: false,
        },
        PartSpec {
            id: "grouping",
            title: "Responses flushed in batches (2.1's dispatcher) against 5.0's own",
            about: "The same inserts and reads on a Cassandra started with \
                    native_transport_flush_in_batches_legacy: true, the grouping of \
                    responses 2.1 added.",
            addition: false,
        },
    ],
    figures: &[
        FigureSpec {
            part: "race",
            title: "Throughput by workload",
            x: Dim::Label("workload"),
            metric: Metric::OpsPerSecond,
            seed: &[SeedValue {
                x: INSERT,
                series: DURABLE,
                value: 180_000.0,
            }],
            seed_says: "writes are mostly cruising along at over 190k ops/s, but \
                        frequently dip as low as 120, so the average only works out to \
                        about 180 (Cassandra 2.1, 32 cores).",
            series: Dim::Label("durable writes"),
            ..FIGURE
        },
        FigureSpec {
            part: "race",
            title: "Throughput over time",
            shape: Shape::OverTime,
            series: Dim::Label("workload"),
            metric: Metric::OpsPerSecond,
            seed_says: "why is write performance so inconsistent in 2.1? … it turns out \
                        that writes on this 32 core VM are actually bottlenecked on the \
                        (single) commitlog disk now.",
            ..FIGURE
        },
        FigureSpec {
            part: "durable",
            title: "Insert throughput, durable writes on and off",
            x: Dim::Label("workload"),
            series: Dim::Label("durable writes"),
            metric: Metric::OpsPerSecond,
            also: &["race"],
            only: &[("workload", INSERT)],
            seed_says: "writes on this 32 core VM are actually bottlenecked on the \
                        (single) commitlog disk now. We confirmed this by testing with \
                        durable writes disabled.",
            ..FIGURE
        },
        FigureSpec {
            part: "durable",
            title: "Insert throughput over time, durable writes off",
            shape: Shape::OverTime,
            series: Dim::Label("durable writes"),
            metric: Metric::OpsPerSecond,
            ..FIGURE
        },
        FigureSpec {
            part: "grouping",
            title: "Throughput by workload, responses grouped (2.1) and not (5.0's default)",
            x: Dim::Label("workload"),
            series: Dim::Label("responses"),
            metric: Metric::OpsPerSecond,
            also: &["race"],
            only: &[("durable writes", DURABLE)],
            seed_says: "on reads, these combine for a 75% performance boost over 2.0 \
                        CQL … on writes, 95% better than 2.0 CQL (with the \
                        SharedExecutorPool, which cannot be turned off here).",
            ..FIGURE
        },
        FigureSpec {
            part: "grouping",
            title: "p99 latency by workload, responses grouped and not",
            x: Dim::Label("workload"),
            series: Dim::Label("responses"),
            metric: Metric::P99,
            also: &["race"],
            only: &[("durable writes", DURABLE)],
            ..FIGURE
        },
    ],
    cells: throughput_cells,
};

/// Each side of an A/B runs this many times: the fewest a winner may rest on.
const ROUNDS: u64 = 3;

/// One side of an A/B, one round of it.
#[derive(Clone, Copy)]
struct Side {
    workload: &'static str,
    durable: bool,
    grouped: bool,
}

/// A cell of `side` on one Cassandra node at consistency ONE, 64 in flight: round
/// `round` of it.
fn cell(id: &str, part: &'static str, side: Side, round: u64, events: u64) -> Cell {
    let Side {
        workload,
        durable,
        grouped,
    } = side;
    let records = events.to_string();
    // A stress tool measures a server that is already warm: five seconds of the same
    // load first. Quarter-second intervals, so that a short run still shows its dips.
    let mut extra = vec!["--warmup", "5s", "--interval", "0.25"];
    if workload == READ {
        extra.extend(["--records", &records]);
    }
    let mut cell = Cell::run(
        format!("{id}-r{round}"),
        part,
        labels(&[
            ("store", "Cassandra".into()),
            ("workload", workload.into()),
            (
                "durable writes",
                if durable { DURABLE } else { NOT_DURABLE }.into(),
            ),
            (
                "responses",
                if grouped { GROUPED_WORDS } else { UNGROUPED }.into(),
            ),
            ("repeat", round.to_string()),
        ]),
        ServerNeed {
            set: if grouped { GROUPED } else { &[] },
            ..need(
                CASSANDRA,
                1,
                if durable {
                    "cl=ONE"
                } else {
                    "cl=ONE&durable_writes=false"
                },
            )
        },
        workload,
        events,
        &extra,
    );
    // The warm-up too.
    cell.work = events * 2;
    cell
}

/// Every side three times, the sides of an A/B in turn: durable writes on and off
/// alternate on one server start (a keyspace setting), so that a server still
/// settling (its commit log, compactions, the JIT) weighs on both alike. Response
/// grouping is set when the server starts: its side runs its rounds on a start of
/// its own, after the others.
fn throughput_cells(scale: f64) -> Vec<Cell> {
    let events = scaled(300_000, scale, 6_000);
    let side = |workload, durable, grouped| Side {
        workload,
        durable,
        grouped,
    };
    let mut cells = Vec::new();
    for round in 1..=ROUNDS {
        cells.extend([
            cell(INSERT, "race", side(INSERT, true, false), round, events),
            cell(
                "insert-not-durable",
                "durable",
                side(INSERT, false, false),
                round,
                events,
            ),
            cell(READ, "race", side(READ, true, false), round, events),
        ]);
    }
    for round in 1..=ROUNDS {
        cells.extend([
            cell(
                "insert-grouped",
                "grouping",
                side(INSERT, true, true),
                round,
                events,
            ),
            cell(
                "read-grouped",
                "grouping",
                side(READ, true, true),
                round,
                events,
            ),
        ]);
    }
    cells
}
