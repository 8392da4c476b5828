//! Study 002, "Cassandra Write Performance – A quick look inside": 150,000 rows in
//! buckets of 10,000, ten times, each batch timed by hatshop and some traced on the
//! server.

use super::super::cells::{Cell, ServerNeed, Verb, scaled};
use super::{CASSANDRA, Study, args, labels, need};
use crate::report::study::{Dim, FigureSpec, Metric, PartSpec, Shape};

pub(super) const STUDY: Study = Study {
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
            title: "Max batch time, client against server",
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
            "--trace-sample",
            "0.2",
        ]),
        work: rows * repeat,
        faults: None,
    }]
}
