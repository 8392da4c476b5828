//! Study 003, "Cassandra 2.1: now over 50% faster": inserts and point reads a second
//! on one Cassandra node under a stress tool's load.

use super::super::cells::{Cell, scaled};
use super::{CASSANDRA, Study, labels, need};
use crate::report::study::{Dim, FigureSpec, Metric, PartSpec, SeedValue, Shape};

pub(super) const STUDY: Study = Study {
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
                series: "Cassandra",
                value: 180_000.0,
            }],
            seed_says: "writes are mostly cruising along at over 190k ops/s, but \
                        frequently dip as low as 120, so the average only works out to \
                        about 180 (Cassandra 2.1, 32 cores).",
        },
        FigureSpec {
            part: "race",
            title: "Throughput over time",
            shape: Shape::OverTime,
            x: Dim::EventType,
            series: Dim::Label("workload"),
            metric: Metric::OpsPerSecond,
            events: &[],
            only: &[],
            seed: &[],
            seed_says: "why is write performance so inconsistent in 2.1? … it turns out \
                        that writes on this 32 core VM are actually bottlenecked on the \
                        (single) commitlog disk now.",
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
    let events = scaled(300_000, scale, 6_000);
    let records = events.to_string();
    [
        ("race-cql-insert", &[][..]),
        ("race-cql-read", &["--records", &records][..]),
    ]
    .into_iter()
    .map(|(workload, records)| {
        // A stress tool measures a server that is already warm: five seconds of the
        // same load first, so the JIT's warm-up is not read as a dip. Quarter-second
        // intervals, so that a short run still shows its dips.
        let mut extra = vec!["--warmup", "5s", "--interval", "0.25"];
        extra.extend_from_slice(records);
        let mut cell = Cell::run(
            workload.into(),
            "race",
            labels(&[("store", "Cassandra".into()), ("workload", workload.into())]),
            need(CASSANDRA, 1, "cl=ONE"),
            workload,
            events,
            &extra,
        );
        // The warm-up too.
        cell.work = events * 2;
        cell
    })
    .collect()
}
