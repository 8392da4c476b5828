//! Study 002, "Cassandra Write Performance – A quick look inside": 150,000 rows in
//! buckets of 10,000, ten times, each batch timed by hatshop and some traced on the
//! server.

use super::cells::{Cell, ServerNeed, Verb, scaled};
use super::{CASSANDRA, Study, args, fact, labels, need, row};
use crate::report::study::{
    Dim, FIGURE, Fact, FigureSpec, Metric, Ours, PartSpec, SeedValue, Shape,
};

/// The two sides of a traced batch, as the load's rows name them.
const SIDES: &[&str] = &["client (hatshop)", "server (Cassandra's trace)"];

pub(super) const STUDY: Study = Study {
    name: "bulk-insert",
    seed: "Cassandra Write Performance – A quick look inside (study 002)",
    title: "Bulk inserts into Cassandra: client against server time",
    question: "Loading 150,000 rows of three values in buckets of 10,000, ten times, \
               ten seconds apart: how much of a batch's time is the server's own, and \
               how volatile is it?",
    seed_machine: "a notebook",
    seed_cores: None,
    caveats: &[
        "The study watched Cassandra with dynaTrace; here Cassandra's own tracing \
         (system_traces) gives the server's time, for the traced fifth of the batches \
         only. Tracing itself slows a batch (253 ms on average untraced against 408 ms \
         with every batch traced, docs/bulk-loads.md): the server's times below are of \
         traced batches, and the client's beside them are of the same batches.",
        "The study's GC, hotspot and slowest-5 % views come from dynaTrace. The load's \
         own report holds what hatshop can see of them: every GC pause of the node \
         (gc.csv) and the slowest batches, one click away under the figures.",
    ],
    setup: &[
        fact(
            "machine",
            "a notebook, client and Cassandra together",
            Fact::Machine,
        ),
        row(
            "versions",
            "Cassandra 0.x/1.x with Thrift batch_mutate (2011)",
            Ours::Fact(Fact::ServerVersion),
            "Thrift was removed in Cassandra 4.0: CQL batches here",
        ),
        fact(
            "rows per pass, bucket",
            "150,000 rows of three values, buckets of 10,000",
            Fact::Events,
        ),
        fact("heap", "not given", Fact::ServerSetting("heap")),
        row(
            "server time",
            "dynaTrace, every call",
            Ours::Text("Cassandra's tracing, a fifth of the batches (--trace-sample 0.2)"),
            "tracing slows a batch: a fifth keeps most batches untraced",
        ),
    ],
    parts: &[PartSpec {
        id: "buckets",
        title: "Buckets of 10,000 rows",
        about: "hatshop load --preset study-002, every batch timed by hatshop and a \
                fifth of them traced on the server.",
        addition: false,
    }],
    figures: &[
        FigureSpec {
            part: "buckets",
            title: "Client and server time of each traced batch over the load",
            shape: Shape::BatchTimes,
            seed_says: "the upper chart shows client and server response time \
                        respectively. This indicates that we leave a considerable time \
                        either on the wire or in the client.",
            ..FIGURE
        },
        FigureSpec {
            part: "buckets",
            title: "Server time per pass: mean of the traced batches against the max",
            shape: Shape::ServerMeanMax,
            seed_says: "the lower chart compares average and maximum response time on the \
                        Cassandra server, clearly showing a high volatility … the majority \
                        of the transactions is in the 75ms range, but a lot of \
                        transactions are slower and some go all the way up to 1.5 \
                        seconds.",
            ..FIGURE
        },
        FigureSpec {
            part: "buckets",
            title: "Mean batch time, client against server (traced batches)",
            events: SIDES,
            seed: &[SeedValue {
                x: "server (Cassandra's trace)",
                series: "Cassandra",
                value: 75_000.0,
            }],
            seed_says: "we only spend about 30ms CPU in the client side batch_mutate \
                        function … the majority of the time on the server is spent \
                        waiting on the write.",
            series: Dim::Label("store"),
            ..FIGURE
        },
        FigureSpec {
            part: "buckets",
            title: "Max batch time, client against server (traced batches)",
            events: SIDES,
            metric: Metric::Max,
            seed: &[SeedValue {
                x: "server (Cassandra's trace)",
                series: "Cassandra",
                value: 1_500_000.0,
            }],
            ..FIGURE
        },
    ],
    cells: bulk_cells,
};

fn bulk_cells(scale: f64) -> Vec<Cell> {
    // The study's pass of 15 buckets at every scale, and at least 5 passes: 75 batches,
    // of which the traced fifth holds at least ten (a test in the load's plan counts them).
    let rows = 150_000;
    let repeat = scaled(10, scale, 5);
    // The study's passes start 10 s apart; scaled, at least 2 s.
    let every = format!("{}ms", ((10_000.0 * scale).round() as u64).max(2_000));
    vec![Cell {
        id: "buckets-cassandra".into(),
        part: "buckets",
        labels: labels(&[
            ("store", "Cassandra".into()),
            ("batch", "buckets of 10,000".into()),
        ]),
        // A bucket of 10,000 rows is over Cassandra's default batch limit (50 KiB).
        need: ServerNeed {
            set: &[("batch_size_fail_threshold", "4MiB")],
            ..need(CASSANDRA, 1, "")
        },
        verb: Verb::Load,
        args: args(&[
            "--preset",
            "study-002",
            "--rows",
            &rows.to_string(),
            "--repeat",
            &repeat.to_string(),
            "--every",
            &every,
            "--trace-sample",
            "0.2",
        ]),
        work: rows * repeat,
        faults: None,
    }]
}
