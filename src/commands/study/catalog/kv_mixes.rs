//! Study 004, "Choosing a key-value storage system (Cassandra vs. Voldemort)": four
//! mixes of writes, rewrites and reads at 1.5 KB and 15 KB values, on 3-node clusters.

use super::super::cells::{Cell, scaled};
use super::{CASSANDRA, Study, VOLDEMORT, labels, need};
use crate::report::study::{Dim, FigureSpec, Metric, PartSpec, SeedValue, Shape};

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

pub(super) const STUDY: Study = Study {
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
        mix_figure(
            "p99 read latency by mix, 15 KB values",
            Metric::P99,
            &["read"],
            FIFTEEN_KB,
        ),
        mix_figure(
            "p99 write and rewrite latency by mix, 15 KB values (mean of the two where a mix has both)",
            Metric::P99,
            &["write", "rewrite"],
            FIFTEEN_KB,
        ),
        mix_figure(
            "Throughput by mix, 15 KB values",
            Metric::OpsPerSecond,
            &[],
            FIFTEEN_KB,
        ),
        mix_figure(
            "p99 read latency by mix, 1.5 KB values",
            Metric::P99,
            &["read"],
            ONE_AND_A_HALF_KB,
        ),
        mix_figure(
            "p99 write and rewrite latency by mix, 1.5 KB values (mean of the two where a mix has both)",
            Metric::P99,
            &["write", "rewrite"],
            ONE_AND_A_HALF_KB,
        ),
        mix_figure(
            "Throughput by mix, 1.5 KB values",
            Metric::OpsPerSecond,
            &[],
            ONE_AND_A_HALF_KB,
        ),
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
                    series: "Cassandra",
                    value: 5_050_000.0,
                },
                SeedValue {
                    x: "90 % rewrite / 10 % read",
                    series: "Voldemort",
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
                    series: "Cassandra",
                    value: 9_176_000.0,
                },
                SeedValue {
                    x: "90 % rewrite / 10 % read",
                    series: "Voldemort",
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
    for (server, store, query) in [
        (VOLDEMORT, "Voldemort", ""),
        (CASSANDRA, "Cassandra", "rf=3&cl=QUORUM"),
    ] {
        for (size, size_label) in [("15000", "15 KB"), ("1500", "1.5 KB")] {
            for (mix, words) in MIXES {
                cells.push(Cell::run(
                    format!("{mix}-{size}-{server}"),
                    "mixes",
                    labels(&[
                        ("store", store.into()),
                        ("mix", words.into()),
                        ("value size", size_label.into()),
                    ]),
                    need(server, 3, query),
                    mix,
                    events,
                    &[
                        "--value-size",
                        size,
                        "--records",
                        &records,
                        "--warmup",
                        &warmup,
                        "--concurrency",
                        "40",
                    ],
                ));
            }
        }
    }
    cells
}
